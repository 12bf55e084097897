//! How sure a found base is, and what the scene says of it: the doubts a judge is told,
//! the centre and heading sigmas, and the confidence. The search (`super`) finds and fits
//! the bases; this turns what each fit rests on (its outline support, rim, hashmarks,
//! arc lines, facing evidence) into figures a judge can weigh, each rule with what it was
//! measured on.

use super::{FoundBase, HEADING_SPREAD_DOUBT_DEG};
use crate::scene::{Doubt, Quality, ShipSpec};
use crate::vision::detect::base_fit::RIM_PRIOR_MM;
use crate::vision::detect::token_lines::LineTurn;
use nalgebra::{Matrix2, Vector2};

/// Outline support below which a fit is as likely on the wrong edges as on the base, and
/// what is then said of its position; the fit-sigma scales (see `to_ships`).
const WEAK_QUALITY: f64 = 0.36;
const WEAK_SIGMA_MM: f64 = 6.5;
const WEAK_ACROSS: f64 = 0.1;
const WEAK_SIGMA_DEG: f64 = 8.0;
const SIGMA_SCALE_MM: f64 = 1.8;
/// What is said of a weak fit whose doubt is its only one (see `FoundBase::doubts`): one
/// side hidden, little outline, a miniature's outline or a rim off (not no hashmark,
/// below), with no second heading and its facing sure. On the fixed and second rendered 1080p sets
/// (scripts/detect-report.sh) 17 of the 76 weak fits were so: 16 within 1 mm, the worst
/// 1.43 mm (seed 45's s4, 3.5 deg off), 0.46 mm RMS; headings 1.35 deg RMS, worst 4.15
/// (seed 6's s3); size and facing all right. Of the 59 with more doubts 20 were over 2 mm
/// off (up to 14 mm). Such a fit is still flagged for the judge (its confidence halved).
/// On 12 of the third set's tables, left out of choosing it, its 4 such fits lay
/// 0.04-0.35 mm off. No hashmark alone is left out: on all 30 of the third set's tables
/// seed 117's s1 was doubted for it alone and lay 8.5 mm off, a square on the miniature's
/// outline and the token's print, while saying 1 mm; over the four sets 5 other fits so
/// doubted lay within 0.42 mm, and the 26 doubted for one of the other reasons within 1.43
/// mm. A fit with no hashmark in view has nothing to say it is on the token at all.
/// Two doubts, the hashmark in view, said 6.5 mm too until the thirty-seventh session: on
/// the fixed, third, epic and 4K sets 20 weak fits were so (14 little outline with one side
/// hidden), 19 within 1 mm (the worst 1.62 mm, a large base at 4K; centre p68 0.65 mm),
/// headings within 1.7 deg but one with a second heading (4.5 deg, about its own sigma),
/// facing right but one doubted for it; held out, the second set's 5 lay 0.45-1.43 mm and
/// 0.05-3.5 deg off, all within 1.5 sigmas. The 17 with little outline and no hashmark lay
/// within 1.23 mm, but say 6.5 mm still, for the reason above.
const FEW_DOUBTS: usize = 2;
const FEW_DOUBTS_SIGMA_MM: f64 = 1.0;
const FEW_DOUBTS_SIGMA_DEG: f64 = 2.5;
/// What is said of a weak fit doubted for this many reasons or more (see
/// `FoundBase::doubts`): it rests on a corner, or on a miniature's outline, with no
/// hashmark and often its facing hidden, and it says where a ship stands, hardly how. On
/// the four rendered sets of scripts/detect-report.sh (the eighteenth session's code) 11
/// weak fits had five doubts or more: 0.3 to 14.0 mm off, median 9.5 mm, headings 0.3 to
/// 32 deg off (median 10.8); with `WEAK_SIGMA_MM` and `WEAK_SIGMA_DEG` 4 of them lay
/// within one sigma on either, where the weak fits with two to four doubts lay within
/// theirs 8 in 10 times (p68 of their errors 0.7-4.3 mm by set and count). Fixed and
/// second sets alone: p68 10.2 mm (5 fits); third and 4K: 12.4 mm (6).
const MANY_DOUBTS: usize = 5;
const MANY_DOUBTS_SIGMA_MM: f64 = 10.0;
const MANY_DOUBTS_SIGMA_DEG: f64 = 15.0;
const _: () =
    assert!(MANY_DOUBTS_SIGMA_MM > WEAK_SIGMA_MM && MANY_DOUBTS_SIGMA_DEG > WEAK_SIGMA_DEG);
/// Centre sigma per mm the fitted rim strays from its prior (see `to_ships`).
const SIGMA_PER_RIM_MM: f64 = 0.7;
/// An axis whose weaker side shows less than this (see `FoundBase::edge_kind_unsure_axes`)
/// rests on its stronger side alone...
const ONE_SIDE_SUPPORT: f64 = 0.25;
/// ...and when at least this share of that side's kept edge points are token edges, which
/// of the base's two edges they are is not measured: ...
const TOKEN_ONLY_SHARE: f64 = 0.9;
/// ...and the centre along that axis gets this much more sigma (mm, in quadrature). On the
/// fixed and second rendered sets (scripts/detect-report.sh) the 26 such axes of bases
/// not flagged for the judge were 0.39 mm off RMS (max 1.22), the 162 whose weaker side
/// showed a third or more or whose stronger side showed silhouette edges too 0.24 mm,
/// with about the same fit sigma: about one in ten took the silhouette against a mat darker
/// than the base for the token's edge, a rim's width (1.6-2.0 mm) out. The third set,
/// left out of choosing it, had 20 such axes, 0.48 mm RMS (max 1.27).
const EDGE_KIND_SIGMA_MM: f64 = 0.4;
/// ...and its heading this much more (deg, in quadrature): where the mat beside that side
/// is darker than the base along part of it only, part of its points lie a rim's width
/// out and the side turns. On the fixed and second sets the 22 bases not flagged with one
/// such axis were 0.74 deg off RMS (55 % within their heading sigma, mean 0.48 deg), the 80
/// with none 0.40 deg (75 %); the third set, left out of choosing it: 18 bases, 0.61 deg
/// (50 %), against 66, 0.44 deg (76 %).
const EDGE_KIND_SIGMA_DEG: f64 = 0.55;
const SIGMA_SCALE_DEG: f64 = 2.0;
/// See `resolution_sigma_deg`.
const RESOLUTION_SIGMA_DEG: f64 = 0.6;
const RESOLUTION_SIDE_PX: f64 = 28.0;
/// A polished fit whose rim strays this far from its prior (mm; three of the polish's
/// prior sigmas) took edges of the wrong kind for the base's: a miniature's bright hull
/// over the black rim shows the token edge's polarity, and so does a glossy rim. On the
/// three rendered sets of scripts/detect-report.sh this doubts 9 fits that were not
/// doubted: 5.1 and 1.7 mm (5.4 deg) off at 1080p, 1.1 and 0.8 mm at 4K, 0.7-1.2 mm on
/// the second set; it doubts none of the fits within 0.6 mm.
const RIM_DOUBT_MM: f64 = 0.9;
/// Mean share of a side's samples (see [`super::BaseFit::paired_support`]) at which both
/// edges of the rim show, the silhouette and the token's edge a rim's width apart, from
/// which the fit is on a base's rim however little of the outline it has or whether a
/// hashmark shows: a thin dark line between two brighter surfaces, which texture and
/// miniatures rarely imitate. At 1080p the 1.6-2 mm rim is two pixels and its edges seldom
/// come apart; at 4K they do. On the three rendered sets of scripts/detect-report.sh the 7
/// fits this undoubts (five of the 4K set's 12 doubted) were 0.07-0.39 mm off; the doubted
/// fits that show a rim less clearly (0.09) include one 2.7 mm off, and no invented base
/// shows more than 0.05. Their confidence still says how little of the outline showed. An
/// axis seen from one side only is forgiven only where the rim shows on that axis's own
/// sides (see `FoundBase::rim_seen_across`; on the fixed and 4K sets that changed nothing).
const RIM_SEEN: f64 = 0.15;
/// A confidence factor below this names its doubt (see `FoundBase::doubts`).
const DOUBT_FACTOR: f64 = 0.85;
/// The most a base whose facing is doubted (`Doubt::FacingUnsure`: the facing's posterior
/// under 0.7) is given, under the judge's 0.65 (`judge::UNSURE_CONFIDENCE`): a barrel roll's
/// left and right turn with the facing, and no sigma carries a facing a quarter or half a
/// turn off, so the flag is the only place a judge hears of it. Through the facing's
/// share of the confidence alone (see `facing_factor`) a base with its whole outline kept
/// 0.75 at a posterior of 0.5 and was not flagged, nor was one whose front strip denied
/// being the front (`facing::DENIED_CONFIDENCE`) or whose facing rested on an engine glow
/// alone (3/7), though both were meant to be.
const FACING_DOUBT_CONFIDENCE: f64 = 0.6;

impl FoundBase {
    /// Whether the fit is as likely on the wrong edges as on the base (see `to_ships`):
    /// too little outline, no hashmark, or an axis seen from one side only that no
    /// hashmark pins (each unless the rim itself shows, see `rim_seen`: a neighbour's rim
    /// shows its pair of edges the other way round), only one corner, a miniature's
    /// outline, or a rim the edges pulled far from its prior.
    ///
    /// Along an axis seen from one side only the centre is that edge plus the size's half
    /// width, and another base's edge beside it passes for its own: a medium base touching
    /// a small one's guides took that base's front edge for its side and was reported
    /// 2.5 mm off with confidence 0.72 (test `ships_in_contact_are_found_or_doubted`). A
    /// hashmark on one of the axis's other two sides says where the base lies along it. On
    /// the three rendered sets this doubts 6 more fits, all 0.18-0.96 mm off (4 of them
    /// were not flagged: of 121, now 117).
    pub fn is_weak(&self) -> bool {
        !self.weak_doubts().is_empty()
    }

    /// The reasons that make the fit weak (see `is_weak`), each as its `Doubt`.
    pub(super) fn weak_doubts(&self) -> Vec<Doubt> {
        let sup = self.fit.side_support;
        let seen_across = [
            sup[0].min(sup[2]) >= WEAK_ACROSS,
            sup[1].min(sup[3]) >= WEAK_ACROSS,
        ];
        let rim = self.rim_seen();
        // An axis seen from one side is forgiven by the rim only where the rim shows on
        // that axis's own sides: the other axis's rim says nothing of where the base lies
        // along it (see `rim_seen_across`).
        let unpinned = (0..2).any(|a| {
            let held = seen_across[a] || self.hashmark_pins[a] || (rim && self.rim_seen_across(a));
            !held
        });
        [
            (self.quality < WEAK_QUALITY && !rim, Doubt::LittleOutline),
            (self.no_hashmark && !rim, Doubt::NoHashmark),
            (unpinned, Doubt::OneSided),
            (!seen_across[0] && !seen_across[1], Doubt::CornerOnly),
            (self.on_miniature, Doubt::MiniatureOutline),
            (
                self.rim_strayed_mm() > RIM_DOUBT_MM || self.rim_refitted,
                Doubt::RimStrayed,
            ),
        ]
        .into_iter()
        .filter_map(|(weak, d)| weak.then_some(d))
        .collect()
    }

    /// Every reason detection doubts this base for (see `Doubt`): those that make it weak
    /// (see `is_weak`), a second heading (see `heading_spread`), and the two factors of its
    /// confidence (see `to_ships`) where either takes more than `DOUBT_FACTOR` off it.
    /// Every base reported under `judge::UNSURE_CONFIDENCE` has one: without them its
    /// confidence is at least `DOUBT_FACTOR` squared (0.72).
    pub fn doubts(&self) -> Vec<Doubt> {
        let mut out = self.weak_doubts();
        if outline_factor(self.quality) < DOUBT_FACTOR && !out.contains(&Doubt::LittleOutline) {
            out.insert(0, Doubt::LittleOutline);
        }
        if self.heading_spread_deg > HEADING_SPREAD_DOUBT_DEG {
            out.push(Doubt::SecondHeading);
        }
        if self.no_colour {
            out.push(Doubt::NoColour);
        } else if facing_factor(self.facing_confidence) < DOUBT_FACTOR {
            out.push(Doubt::FacingUnsure);
        }
        if self.rival_mm > 0.0 {
            out.push(Doubt::RivalFit);
        }
        out
    }

    /// Whether both of the rim's edges show along enough of the outline (see `RIM_SEEN`).
    fn rim_seen(&self) -> bool {
        self.fit.paired_support.iter().sum::<f64>() / 4.0 >= RIM_SEEN
    }

    /// Whether both of the rim's edges show along the sides of axis `a` (sides a and a + 2;
    /// see `RIM_SEEN`). A bare base slid 9.7 mm along one axis onto a line of its token's
    /// print (seed 19's s5 with the miniatures lifted off) showed its rim along the other
    /// axis's sides only (paired shares 0, 0.12, 0, 0.59), none on the far side of the
    /// slid axis, no hashmark, and was reported with sigma 0.24 mm and confidence 0.85.
    fn rim_seen_across(&self, a: usize) -> bool {
        let p = self.fit.paired_support;
        (p[a] + p[a + 2]) / 2.0 >= RIM_SEEN
    }

    /// How many of the two axes rest on one side seen through token edges only (see
    /// `EDGE_KIND_SIGMA_MM`).
    fn edge_kind_unsure_axes(&self) -> usize {
        let (sup, tok) = (self.fit.side_support, self.fit.token_share);
        [(0, 2), (1, 3)]
            .into_iter()
            .filter(|&(i, j)| {
                let strong = if sup[i] >= sup[j] { i } else { j };
                sup[i].min(sup[j]) < ONE_SIDE_SUPPORT && tok[strong] >= TOKEN_ONLY_SHARE
            })
            .count()
    }

    /// How far the fitted rim lies from its prior (mm): a doubt above `RIM_DOUBT_MM`, and
    /// a share of the centre's sigma below it (see `to_ships`).
    fn rim_strayed_mm(&self) -> f64 {
        (self.fit.rim - RIM_PRIOR_MM).abs()
    }
}

/// The least heading sigma (deg) of a base whose sides span `side_px` pixels. Where a side
/// spans few pixels its rim (1.6-2 mm) is about one pixel wide, the token's edge and the
/// silhouette blur into one line, and print or a miniature next to it moves that line by a
/// good part of a pixel; the fit's covariance sees a smooth line and says little. Measured
/// on the four rendered sets of scripts/detect-report.sh (the third 1080p set, seeds
/// 101-130, was rendered after the rules were made), bases with sigma < 3 mm, heading RMS
/// by pixels per side: under 30 px 1.5 deg (median sigma then 0.7), 30-35 px 0.6, 35-60
/// px 0.4, over 60 px 0.1; of the confident ones, 11 of 57 under 30 px were more than 1.2
/// deg off, 1 of 146 over. The floor, 0.6 deg at 28 px and falling with the square of the
/// pixels, halved the headings beyond 3 sigma (8 to 4 over the four sets) and left 67-75 %
/// of them within 1 sigma (60-74 % before); it is the larger term only under about 40 px
/// per side (0.3 deg there).
fn resolution_sigma_deg(side_px: f64) -> f64 {
    if side_px <= 0.0 {
        return WEAK_SIGMA_DEG;
    }
    RESOLUTION_SIGMA_DEG * (RESOLUTION_SIDE_PX / side_px).powi(2)
}

/// The heading's sigma (deg) from the outline alone (see `to_ships`).
pub(super) fn edge_sigma_deg(b: &FoundBase) -> f64 {
    (b.fit.sigma_angle.to_degrees() * SIGMA_SCALE_DEG)
        .max(b.heading_spread_deg)
        .max(resolution_sigma_deg(b.side_px))
        .max(0.05)
}

/// The arc lines' heading sigma (deg): their fit's, scaled and floored (see
/// `LINE_SIGMA_SCALE`).
fn line_sigma_deg(l: &LineTurn) -> f64 {
    (l.sigma.to_degrees() * LINE_SIGMA_SCALE).max(LINE_SIGMA_FLOOR_DEG)
}

/// How much the arc lines turn the outline's heading (deg) and the sigma of the two
/// together: each weighed by its inverse variance.
pub(super) fn fuse(edge_sigma_deg: f64, l: &LineTurn) -> (f64, f64) {
    let (we, wl) = (edge_sigma_deg.powi(-2), line_sigma_deg(l).powi(-2));
    (
        l.turn.to_degrees() * wl / (we + wl),
        (we + wl).powi(-1).sqrt(),
    )
}

/// Whether the outline and the arc lines agree within `LINE_AGREE_SIGMAS` of their
/// sigmas together: where they do not, one of them is on something else (a miniature's
/// edge along a line, print beside the outline) and nothing says which, so the lines are
/// not used.
pub(super) fn lines_agree(edge_sigma_deg: f64, l: &LineTurn) -> bool {
    l.turn.to_degrees().abs() <= LINE_AGREE_SIGMAS * edge_sigma_deg.hypot(line_sigma_deg(l))
}

/// The arc lines' fit sigma times this is their heading's honest sigma, and no less than
/// the floor. Their points share blur and print, so the fit's own sigma is too small: on
/// tables with nothing hiding the bases (test `the_fit_alone_on_bases_without_miniatures`)
/// 75 % of small bases' line headings at 1080p lay within two fit sigmas, half at 4K; on
/// the fixed 4K set a small base whose lines were half hidden was 0.23 deg off with a fit
/// sigma of 0.01. With the miniatures in place (fixed 1080p and 4K sets of
/// scripts/detect-report.sh, every base whose lines showed, against the truth) 68 % of
/// the lines' heading errors lay within 2.2 fit sigmas for small bases at 1080p (12
/// bases) but 6.5 at 4K (6; three of them 0.4-0.9 deg off where the outline was within
/// 0.13), medium 1.75 and 0.95. A scale of 2 (or 1.5) moved the fixed set's not-flagged
/// headings 0.58 to 0.57 deg RMS and the 4K set's 0.14 to 0.16 (0.14): not kept.
const LINE_SIGMA_SCALE: f64 = 3.0;
const LINE_SIGMA_FLOOR_DEG: f64 = 0.1;
const LINE_AGREE_SIGMAS: f64 = 3.0;

/// The arc lines' crossing sigma (from their points' scatter) times this weighs it against
/// the outline's fit (see `centre_with_lines`): their points share blur and print, as for
/// the lines' angle (see `LINE_SIGMA_SCALE`). On the fixed 1080p set and the first 15
/// tables of the second (scripts/detect-report.sh), without the floor below, 1.0 and 2.0
/// moved the bases not flagged alike (RMS 0.39 to 0.40-0.39 mm and 0.37 to 0.30), but at
/// 1.0 a fit carrying its rim's or edge kind's doubt leant on the crossing too much (the
/// fixed set's median 0.27 to 0.29 mm rather than 0.23); 3.0 moved them as 2.0.
const CROSSING_SIGMA_SCALE: f64 = 2.0;
/// ...and no less than this (mm, each line's offset). Without it, the 4K set's seed 31 s6,
/// a small base, was 0.52 mm off with sigma 0.16; with it 0.45 and 0.19, still beyond two
/// sigmas, as is the same table's other small base (0.48, 0.21; its outline alone put it
/// 0.59 off): both the outline and the crossing put them there. At 1080p, on the fixed
/// set's and 3 of the second set's tables, 22 of 27 crossings lie within their sigma with
/// the floor, 17 without.
const CROSSING_FLOOR_MM: f64 = 0.1;

/// The base's centre and its sigma (mm, both axes together) from the outline's fit and,
/// where the arc lines show, their crossing, each weighed by its inverse covariance. The
/// fit's variance is its covariance scaled by `SIGMA_SCALE_MM` plus `extra_mm` squared
/// (what its covariance does not know: the rim's and the edge kind's doubts), split evenly
/// between the axes. The crossing is the token's centre read from two thin lines across
/// it, where the outline rests on four sides a miniature hangs over and a dark mat blurs:
/// on the fixed 1080p set and the first 15 tables of the second the 52 bases whose lines
/// showed went from 0.40 to 0.28 mm RMS, 42 of them nearer the truth (small 0.41 to 0.34,
/// medium 0.38 to 0.25, large 0.41 to 0.22); on the 4K set 11 bases, 0.51 to 0.22. The
/// crossing is looked for only within 1.5 mm of the fit's centre (see
/// `token_lines::line_turn`), so it refines a fit, never moves one onto another base.
fn centre_with_lines(b: &FoundBase, extra_mm: f64) -> ([f64; 2], f64) {
    let f = &b.fit;
    let fit_var = [0, 1].map(|a| (f.sigma_xy[a] * SIGMA_SCALE_MM).powi(2) + extra_mm.powi(2) / 2.0);
    let alone = (f.centre, (fit_var[0] + fit_var[1]).sqrt());
    let Some(l) = b
        .lines
        .as_ref()
        .filter(|_| fit_var.iter().all(|v| *v > 0.0))
    else {
        return alone;
    };
    let wf = Matrix2::new(1.0 / fit_var[0], 0.0, 0.0, 1.0 / fit_var[1]);
    let Some((wc, cov)) = l
        .crossing_cov(CROSSING_SIGMA_SCALE, CROSSING_FLOOR_MM)
        .and_then(|cc| cc.try_inverse())
        .and_then(|wc| Some((wc, (wf + wc).try_inverse()?)))
    else {
        return alone;
    };
    let fc = Vector2::new(f.centre[0], f.centre[1]);
    let xc = Vector2::new(l.crossing[0], l.crossing[1]);
    let m = cov * (wf * fc + wc * xc);
    ([m[0], m[1]], cov.trace().max(0.0).sqrt())
}

/// The scene's ship entries, with the measured uncertainty.
pub fn to_ships(bases: &[FoundBase], calibration_sigma_mm: f64) -> Vec<ShipSpec> {
    bases
        .iter()
        .enumerate()
        .map(|(i, b)| {
            // The fit's own covariance knows the pixel noise, not what the miniature hides
            // nor how neighbouring edge samples share their blur, nor edges taken for the
            // wrong kind: a glossy rim brighter than the mat shows its outline with the
            // token edge's polarity, and the fitted rim then strays from its prior (on the
            // 40 rendered tables of scripts/detect-report.sh, the 19 of 133 fits not
            // doubted with a rim under 1.2 mm were 0.8-1.0 mm off on average, the others
            // 0.2-0.4). So the rim's deviation adds SIGMA_PER_RIM_MM per mm, and two thirds
            // of centre errors then lie within 1.8 fit sigmas (beside the calibration's own
            // and the rim's); the third of fits with the largest sigmas average 0.49 mm of
            // error, the smallest 0.20 (without the rim's term: 0.39 and 0.30). Of heading
            // errors two thirds lie within 2.0 fit sigmas. Weak fits (below
            // WEAK_QUALITY, on a miniature, no hashmark) are a third of the time on the
            // wrong edges altogether (errors of 4-18 mm), so the ship is reported where it
            // was found but with a sigma that says so, and verdicts near it become
            // "too close to call" rather than wrong.
            // A fit resting on two adjacent sides only measures a corner: where the base
            // extends from it is the size class's assumption, not a measurement.
            let weak = b.is_weak();
            let doubts = b.doubts();
            let facing_doubted = doubts.contains(&Doubt::FacingUnsure);
            let rim_sigma = SIGMA_PER_RIM_MM * b.rim_strayed_mm();
            // Each unsure axis adds its term in quadrature: two give sqrt(2) times one.
            let unsure = (b.edge_kind_unsure_axes() as f64).sqrt();
            let edge_kind_sigma = EDGE_KIND_SIGMA_MM * unsure;
            let (centre, centre_sigma) = centre_with_lines(b, rim_sigma.hypot(edge_kind_sigma));
            // A rival square says the ship may stand that far away (see `keep_apart`).
            let mut sigma_mm = centre_sigma.hypot(calibration_sigma_mm).max(b.rival_mm);
            let edge_sigma = edge_sigma_deg(b);
            let mut sigma_deg = b
                .lines
                .as_ref()
                .map_or(edge_sigma, |l| fuse(edge_sigma, l).1)
                .hypot(EDGE_KIND_SIGMA_DEG * unsure);
            if weak {
                // A weak fit doubted for one or two reasons, its hashmark in view, is rarely
                // on the wrong edges (see `FEW_DOUBTS_SIGMA_MM`), one doubted for five or
                // more mostly is (see `MANY_DOUBTS_SIGMA_MM`).
                let (floor_mm, floor_deg) = weak_sigmas(&doubts);
                sigma_mm = sigma_mm.max(floor_mm);
                sigma_deg = sigma_deg.max(floor_deg);
            }
            // A facing in doubt flags the base (see `FACING_DOUBT_CONFIDENCE`).
            let mut confidence = outline_factor(b.quality)
                * facing_factor(b.facing_confidence)
                * if weak { 0.5 } else { 1.0 }
                // Two headings a few degrees apart fit about as well: a judge
                // should look (see `heading_spread`).
                * if b.heading_spread_deg > HEADING_SPREAD_DOUBT_DEG {
                    0.5
                } else {
                    1.0
                }
                // Another square fits about as well: a judge should look (see
                // `keep_apart`).
                * if b.rival_mm > 0.0 { 0.5 } else { 1.0 };
            if facing_doubted {
                confidence = confidence.min(FACING_DOUBT_CONFIDENCE);
            }
            ShipSpec {
                id: format!("s{}", i + 1),
                size: b.size,
                x: round2(centre[0]),
                y: round2(centre[1]),
                heading_deg: round2(b.heading_deg) % 360.0,
                quality: Quality {
                    sigma_mm: Some(round3(sigma_mm)),
                    sigma_deg: Some(round3(sigma_deg)),
                    confidence: Some(round3(confidence)),
                    occluded: false,
                    doubts,
                },
            }
        })
        .collect()
}

/// The least sigmas (mm, deg) of a weak fit doubted for `doubts`: by how many there are
/// (see `FEW_DOUBTS_SIGMA_MM`, `WEAK_SIGMA_MM`, `MANY_DOUBTS_SIGMA_MM`).
fn weak_sigmas(doubts: &[Doubt]) -> (f64, f64) {
    let hashmark_seen = !doubts.contains(&Doubt::NoHashmark);
    match doubts.len() {
        n if (1..=FEW_DOUBTS).contains(&n) && hashmark_seen => {
            (FEW_DOUBTS_SIGMA_MM, FEW_DOUBTS_SIGMA_DEG)
        }
        n if n >= MANY_DOUBTS => (MANY_DOUBTS_SIGMA_MM, MANY_DOUBTS_SIGMA_DEG),
        _ => (WEAK_SIGMA_MM, WEAK_SIGMA_DEG),
    }
}

/// The share of a base's confidence its outline support leaves it (see `to_ships`).
fn outline_factor(quality: f64) -> f64 {
    (quality / 0.6).min(1.0)
}

/// The share of a base's confidence its facing evidence leaves it: a good outline with
/// no facing evidence at all keeps half.
fn facing_factor(facing_confidence: f64) -> f64 {
    0.5 + 0.5 * facing_confidence
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    fn lines(turn_deg: f64, sigma_deg: f64) -> LineTurn {
        LineTurn {
            turn: turn_deg.to_radians(),
            sigma: sigma_deg.to_radians(),
            half_arc: 45f64.to_radians(),
            points: [40, 40],
            crossing: [0.0, 0.0],
            normals: [[0.0, 1.0], [1.0, 0.0]],
            offset_sigma: [0.01, 0.01],
        }
    }

    /// A base fitted at the origin with 0.1 mm fit sigmas (0.18 scaled) on each axis.
    fn fitted(lines: Option<LineTurn>) -> FoundBase {
        FoundBase {
            blob: [0.0, 0.0],
            size: BaseSize::Small,
            fit: BaseFit {
                centre: [0.0, 0.0],
                angle: 0.0,
                half: 20.0,
                rim: RIM_PRIOR_MM,
                inliers: 100,
                samples: 120,
                side_support: [0.8; 4],
                rms_mm: 0.1,
                sigma_xy: [0.1, 0.1],
                sigma_angle: 0.002,
                points: Vec::new(),
                paired_support: [0.5; 4],
                token_share: [0.5; 4],
            },
            heading_deg: 0.0,
            facing_confidence: 1.0,
            quality: 0.8,
            on_miniature: false,
            no_hashmark: false,
            hashmark_pins: [true, true],
            heading_spread_deg: 0.0,
            side_px: 30.0,
            lines,
            rim_refitted: false,
            rival_mm: 0.0,
            about_token: false,
            no_colour: false,
        }
    }

    /// A base whose facing is doubted is flagged for the judge however well its outline
    /// fits; one whose facing is sure is not.
    #[test]
    fn a_doubted_facing_flags_a_base_with_its_whole_outline() {
        let unsure = crate::judge::UNSURE_CONFIDENCE;
        let sure = fitted(None);
        let ship = &to_ships(std::slice::from_ref(&sure), 0.1)[0];
        assert!(ship.quality.doubts.is_empty());
        assert!(ship.quality.confidence.is_some_and(|c| c >= unsure));
        for facing in [0.2, 0.5, 0.69] {
            let mut b = sure.clone();
            b.facing_confidence = facing;
            let ship = &to_ships(&[b], 0.1)[0];
            assert_eq!(ship.quality.doubts, vec![Doubt::FacingUnsure], "{facing}");
            let c = ship.quality.confidence.unwrap_or(1.0);
            assert!(c < unsure, "facing {facing}: confidence {c}");
        }
        let mut b = sure;
        b.facing_confidence = 0.71;
        let ship = &to_ships(&[b], 0.1)[0];
        assert!(ship.quality.confidence.is_some_and(|c| c >= unsure));
    }

    /// The arc lines' crossing pulls the centre by the two covariances: equal ones meet
    /// half way, and the sigma of the two together is below the fit's alone; a crossing
    /// known well along x only (a line seen towards one corner) moves x, hardly y; a fit
    /// with its rim's doubt leans on the crossing more.
    #[test]
    fn the_arc_lines_crossing_weighs_against_the_outline_by_its_covariance() {
        let fit_var = (0.1 * SIGMA_SCALE_MM).powi(2);
        // Lines along y and x: the crossing's covariance in x and y is that of the two
        // offsets, given here as their honest sigmas (after the scale and the floor).
        let crossing = |o: [f64; 2]| LineTurn {
            crossing: [0.4, 0.4],
            normals: [[1.0, 0.0], [0.0, 1.0]],
            offset_sigma: o
                .map(|v| (v * v - CROSSING_FLOOR_MM.powi(2)).sqrt() / CROSSING_SIGMA_SCALE),
            ..lines(0.0, 0.1)
        };
        let (alone, sigma_alone) = centre_with_lines(&fitted(None), 0.0);
        assert_eq!(alone, [0.0, 0.0]);
        assert!((sigma_alone - (2.0 * fit_var).sqrt()).abs() < 1e-9);
        let equal = [fit_var.sqrt(); 2];
        let (c, sigma) = centre_with_lines(&fitted(Some(crossing(equal))), 0.0);
        assert!(
            (c[0] - 0.2).abs() < 1e-9 && (c[1] - 0.2).abs() < 1e-9,
            "{c:?}"
        );
        assert!((sigma - sigma_alone / 2f64.sqrt()).abs() < 1e-9, "{sigma}");
        let along_x = [fit_var.sqrt() / 1.5, fit_var.sqrt() * 10.0];
        let (c, _) = centre_with_lines(&fitted(Some(crossing(along_x))), 0.0);
        assert!(c[0] > 0.27 && c[1] < 0.01, "{c:?}");
        let (c, _) = centre_with_lines(&fitted(Some(crossing(equal))), 0.5);
        assert!(c[0] > 0.3 && c[1] > 0.3, "{c:?}");
    }

    /// The lines' fit sigma is scaled and floored before it weighs against the outline's:
    /// a sharp pair of lines moves a small base's heading most of the way, never all of it,
    /// and the sigma of the two together is below either.
    #[test]
    fn the_arc_lines_weigh_by_their_sigma_against_the_outline() {
        let (turn, sigma) = fuse(0.6, &lines(-0.5, 0.01));
        // Line sigma: max(0.03, 0.1) = 0.1 deg against 0.6: weight 36/37.
        assert!((turn + 0.5 * 36.0 / 37.0).abs() < 1e-9, "{turn}");
        assert!(sigma < 0.1 && sigma > 0.09, "{sigma}");
        // Loose lines move it little.
        let (turn, sigma) = fuse(0.2, &lines(-0.5, 0.5));
        assert!(turn.abs() < 0.01 && sigma < 0.2, "{turn} {sigma}");
    }

    /// Lines that disagree with the outline by more than three sigmas together are on
    /// something else, and not used.
    #[test]
    fn arc_lines_far_from_the_outline_are_not_used() {
        assert!(lines_agree(0.6, &lines(1.5, 0.05)));
        assert!(!lines_agree(0.3, &lines(1.5, 0.05)));
        assert!(!lines_agree(0.1, &lines(-0.5, 0.01)));
    }

    /// Of overlapping squares the better supported is kept; one nearly as well supported
    /// makes it a rival's (its sigma reaches the other, its confidence halves, the doubt is
    /// named), one far less supported or the same square found again does not.
    #[test]
    fn a_square_nearly_as_good_beside_the_kept_one_is_its_rival() {
        let at = |x: f64, y: f64, quality: f64| {
            let mut b = fitted(None);
            b.fit.centre = [x, y];
            b.quality = quality;
            b
        };
        let kept = keep_apart(vec![
            at(0.5, 0.0, 0.59),
            at(0.0, 10.0, 0.3),
            at(0.0, 0.0, 0.6),
            at(200.0, 0.0, 0.2),
            at(20.0, 0.0, 0.5),
        ]);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].fit.centre, [0.0, 0.0]);
        assert!(
            (kept[0].rival_mm - 20.0).abs() < 1e-9,
            "{}",
            kept[0].rival_mm
        );
        assert_eq!(kept[1].rival_mm, 0.0);
        let ships = to_ships(&kept, 0.1);
        let (rival, alone) = (&ships[0].quality, &ships[1].quality);
        assert!(rival.sigma_mm.is_some_and(|s| s >= 20.0), "{rival:?}");
        assert!(alone.sigma_mm.is_some_and(|s| s < 1.0), "{alone:?}");
        assert!(rival.doubts.contains(&Doubt::RivalFit));
        assert!(!alone.doubts.contains(&Doubt::RivalFit));
        let mut without = kept[0].clone();
        without.rival_mm = 0.0;
        let c_without = to_ships(&[without], 0.1)[0].quality.confidence;
        let c_rival = rival.confidence.unwrap_or(1.0);
        assert!(
            c_without.is_some_and(|c| (c_rival - 0.5 * c).abs() < 0.01),
            "{c_rival} {c_without:?}"
        );
        // A rival no better than three quarters of the kept one's support is none.
        let kept = keep_apart(vec![at(0.0, 0.0, 0.6), at(20.0, 0.0, 0.44)]);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].rival_mm, 0.0);
    }

    /// A weak fit says less the more reasons doubt it: one or two with the hashmark in
    /// view a millimetre, two to four otherwise the weak sigma, five or more (a corner on a
    /// miniature's outline with no hashmark) the many-doubts one; the ship reports it.
    #[test]
    fn a_weak_fit_is_as_sure_as_its_doubts_allow() {
        use Doubt::*;
        let few = (FEW_DOUBTS_SIGMA_MM, FEW_DOUBTS_SIGMA_DEG);
        assert_eq!(weak_sigmas(&[OneSided]), few);
        assert_eq!(weak_sigmas(&[LittleOutline, OneSided]), few);
        assert_eq!(weak_sigmas(&[LittleOutline, FacingUnsure]), few);
        assert_eq!(weak_sigmas(&[NoHashmark]), (WEAK_SIGMA_MM, WEAK_SIGMA_DEG));
        let without_hashmark = [LittleOutline, NoHashmark];
        assert_eq!(
            weak_sigmas(&without_hashmark),
            (WEAK_SIGMA_MM, WEAK_SIGMA_DEG)
        );
        let three = [LittleOutline, OneSided, SecondHeading];
        assert_eq!(weak_sigmas(&three), (WEAK_SIGMA_MM, WEAK_SIGMA_DEG));
        let four = [LittleOutline, NoHashmark, OneSided, MiniatureOutline];
        assert_eq!(weak_sigmas(&four), (WEAK_SIGMA_MM, WEAK_SIGMA_DEG));
        let five = [
            LittleOutline,
            NoHashmark,
            OneSided,
            CornerOnly,
            MiniatureOutline,
        ];
        assert_eq!(
            weak_sigmas(&five),
            (MANY_DOUBTS_SIGMA_MM, MANY_DOUBTS_SIGMA_DEG)
        );

        // A corner of a base on a miniature's outline, no hashmark, little outline.
        let mut b = fitted(None);
        b.quality = 0.2;
        b.no_hashmark = true;
        b.on_miniature = true;
        b.hashmark_pins = [false, false];
        b.fit.side_support = [0.6, 0.6, 0.0, 0.0];
        b.fit.paired_support = [0.0; 4];
        assert_eq!(b.doubts().len(), 5, "{:?}", b.doubts());
        let ship = &to_ships(&[b], 0.1)[0];
        assert_eq!(ship.quality.sigma_mm, Some(MANY_DOUBTS_SIGMA_MM));
        assert_eq!(ship.quality.sigma_deg, Some(MANY_DOUBTS_SIGMA_DEG));
    }
}

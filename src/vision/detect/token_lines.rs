//! A base's heading from the two firing-arc lines printed across its token.
//!
//! The outline fit turns a small base by whatever the print and the mat beside its 30-odd
//! pixel sides push its edges by: 0.48 deg RMS at 1080p with nothing hiding the base
//! (test `the_fit_alone_on_bases_without_miniatures`). The token carries a second,
//! independent cue: its arc lines, two thin white lines crossing at the centre, one each
//! side of the heading at the same angle. Where they show (the miniature hides the middle,
//! rarely the ends towards the corners), each is a ridge some 50 mm long, and the bisector
//! of the two is the heading modulo 90 deg whatever the arc's width, so the printed
//! angle, which differs from one token to another, is measured rather than assumed. A ridge is
//! found at its peak whichever side of it is brighter (the front arc is shaded), where a
//! step edge moves with the print beside it.

use super::base_fit::BaseFit;
use super::base_search::MiniMask;
use crate::vision::Camera;
use crate::vision::camera::PointProjector;
use crate::vision::edges::Grey;
use nalgebra::{Matrix2, Vector2};

/// Where the lines are looked for: this far (deg) either side of the fit's axis, beyond
/// the bullseye's lines (parallel to the heading) and the hashmarks (across it).
const OFFSET_MIN_DEG: f64 = 25.0;
const OFFSET_MAX_DEG: f64 = 65.0;
const SCAN_STEP_DEG: f64 = 0.5;
/// Along a line: from the peg's surroundings out to this far (mm) inside the token's
/// darkened die-cut edge.
const START_MM: f64 = 4.0;
const EDGE_CLEAR_MM: f64 = 1.5;
const ALONG_STEP_MM: f64 = 0.5;
/// Across a line: the profile's reach and step (mm), and how far either side of a point the
/// ridge measure compares it with.
const ACROSS_REACH_MM: f64 = 1.4;
const ACROSS_STEP_MM: f64 = 0.1;
const RIDGE_SIDE_MM: f64 = 1.1;
/// A ridge point counts when it stands this far (linear grey, 0-255) above its sides.
const MIN_RIDGE: f64 = 6.0;
/// Each line needs this many ridge points, spread this far along it (mm, RMS about their
/// mean), for its angle to mean anything. A miniature over the middle often leaves one
/// line a single stretch towards a corner (10-14 mm of it: an RMS spread of 3-4 mm); its
/// slope's sigma grows as the spread shrinks and the fusion weighs it by that, so such a
/// stretch is used. (It was 5 mm: on the fixed 1080p set, 3 mm changed 8 headings, 7 of
/// them nearer the truth, seed 21's s7 from 3.99 to 0.54 deg off and seed 10's s3 from
/// 1.62 to 0.32; one 0.38 to 0.42. On the fixed 4K set, where the outline alone is
/// within 0.2 deg, it turned 3 small bases 0.04-0.16 deg the other way, to 0.05-0.19 deg
/// off.) Of the small bases not flagged on the three 1080p sets of
/// scripts/detect-report.sh, 30 of 89 had no lines for want of points or spread: where a
/// miniature hides all but both ends of a line, by the corners, 8-11 points remain (spread
/// 13-19 mm, their slope well held): with 8 points rather than 12, 17 bases of the five
/// sets had lines or other lines, 15 of them ended nearer their true heading (the third
/// set's seed 106 s1 1.04 to 0.11 deg off, seed 118 s1 0.54 to 0.02), one further (seed
/// 11 s6 of the fixed set, doubted, 0.08 to 0.42); 6 or 10 did no better.
const MIN_POINTS: usize = 8;
/// The scan for a line's direction averages its ridge over at least this many stations
/// (half the 12 points a line once needed: with half of 8, seed 31's s2 of the 4K set, a
/// doubted medium base, went from 0.02 to 2.49 deg off).
const SCAN_MIN_POINTS: usize = 6;
const MIN_SPREAD_MM: f64 = 3.0;
/// The lines' crossing must lie this near (mm) the outline's centre, and the turn they say
/// this near (deg) the outline's angle: further, they are not the token's lines.
const MAX_CROSSING_MM: f64 = 1.5;
const MAX_TURN_DEG: f64 = 5.0;

/// What the arc lines say of a base's angle.
#[derive(Clone, Debug, PartialEq)]
pub struct LineTurn {
    /// Add to the fit's angle (rad).
    pub turn: f64,
    /// 1-sigma of that (rad), from the two lines' residuals.
    pub sigma: f64,
    /// Half the angle between the lines (the arc's half width, rad).
    pub half_arc: f64,
    /// Ridge points kept on each line.
    pub points: [usize; 2],
    /// Where the lines cross (table mm): the token's centre, measured apart from the
    /// outline (see `crossing_cov`).
    pub crossing: [f64; 2],
    /// Each line's normal (table frame) and the sigma of its offset at the outline's
    /// centre (mm), from its points' scatter: what the crossing's covariance is made of.
    pub normals: [[f64; 2]; 2],
    pub offset_sigma: [f64; 2],
}

impl LineTurn {
    /// The crossing's covariance (mm^2, table x and y) with each line's offset sigma
    /// scaled by `scale` and no less than `floor_mm`: the crossing d solves n_i . d = t_i,
    /// so with the offsets independent its covariance is N^-1 diag(o1^2, o2^2) N^-T, N's
    /// rows the normals. A line kept only towards one corner fixes the crossing across
    /// itself less well than one seen both ways from the centre. None for parallel lines.
    pub fn crossing_cov(&self, scale: f64, floor_mm: f64) -> Option<Matrix2<f64>> {
        let [n1, n2] = self.normals;
        let inv = Matrix2::new(n1[0], n1[1], n2[0], n2[1]).try_inverse()?;
        let var = self
            .offset_sigma
            .map(|o| (o * scale).hypot(floor_mm).powi(2));
        Some(inv * Matrix2::from_diagonal(&Vector2::from(var)) * inv.transpose())
    }
}

/// Samples the image along a table-plane line at height `z`.
struct Sampler<'a> {
    grey: &'a Grey,
    proj: PointProjector<'a>,
    z: f64,
    minis: Option<&'a MiniMask>,
}

impl Sampler<'_> {
    fn at(&self, p: [f64; 2]) -> Option<f64> {
        let q = self.proj.project([p[0], p[1], self.z])?;
        self.grey.sample(q[0], q[1])
    }

    fn hidden(&self, p: [f64; 2]) -> bool {
        self.minis.is_some_and(|m| m.covers(p))
    }

    /// The ridge measure at `p` across direction `n`.
    fn ridge(&self, p: [f64; 2], n: [f64; 2]) -> Option<f64> {
        let s = RIDGE_SIDE_MM;
        let v = self.at(p)?;
        let a = self.at([p[0] - s * n[0], p[1] - s * n[1]])?;
        let b = self.at([p[0] + s * n[0], p[1] + s * n[1]])?;
        Some(v - 0.5 * (a + b))
    }
}

/// The distances along a line (both ways from the centre) where it is looked at, up to
/// where a line at `phi` leaves the token's square (half width `inner`, sides at
/// `angle` + k * 90 deg) less the die-cut edge.
fn stations(angle: f64, phi: f64, inner: f64) -> Vec<f64> {
    let rel = phi - angle;
    let reach = (inner - EDGE_CLEAR_MM) / rel.cos().abs().max(rel.sin().abs());
    let mut out = Vec::new();
    let mut r = START_MM;
    while r <= reach {
        out.push(r);
        out.push(-r);
        r += ALONG_STEP_MM;
    }
    out
}

/// One line's points: (distance along, offset across) in mm, for the line through
/// `centre` at `phi`.
fn ridge_points(
    s: &Sampler,
    model: &ProfileModel,
    centre: [f64; 2],
    phi: f64,
    rs: &[f64],
) -> Vec<(f64, f64)> {
    let (u, n) = ([phi.cos(), phi.sin()], [-phi.sin(), phi.cos()]);
    let steps = (ACROSS_REACH_MM / ACROSS_STEP_MM).round() as i32;
    let mut out = Vec::new();
    let mut prof = Vec::with_capacity(2 * steps as usize + 1);
    for &r in rs {
        let p = [centre[0] + r * u[0], centre[1] + r * u[1]];
        if s.hidden(p) {
            continue;
        }
        prof.clear();
        for k in -steps..=steps {
            let t = f64::from(k) * ACROSS_STEP_MM;
            match s.ridge([p[0] + t * n[0], p[1] + t * n[1]], n) {
                Some(v) => prof.push(v),
                None => break,
            }
        }
        if prof.len() != 2 * steps as usize + 1 {
            continue;
        }
        let Some((i, &best)) = prof.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)) else {
            continue;
        };
        // A peak at the profile's end is a brighter thing beside the line, not the line.
        if best < MIN_RIDGE || i == 0 || i + 1 == prof.len() {
            continue;
        }
        let peak = (i as f64 - f64::from(steps)) * ACROSS_STEP_MM;
        let Some(t) = line_centre(s, model, p, n, peak) else {
            continue;
        };
        out.push((r, t));
    }
    out
}

/// Φ(x), near enough (the logistic fit to the normal distribution).
fn step(x: f64) -> f64 {
    1.0 / (1.0 + (-1.702 * x).exp())
}

const HALF_SPAN: i32 = 20;
const PROFILE_LEN: usize = 2 * HALF_SPAN as usize + 1;
const PROFILE_STEP_MM: f64 = 0.1;
const CENTRES: i32 = 10;
const CENTRE_STEP_MM: f64 = 0.04;
const BLURS_MM: [f64; 4] = [0.35, 0.5, 0.7, 0.9];

/// One blur and centre of the profile model: the basis rows (level, step, line) at the
/// profile's samples, and the inverse of their normal matrix.
type ProfileFit = ([[f64; 3]; PROFILE_LEN], nalgebra::Matrix3<f64>);

/// The profile model of `line_centre` for each blur and centre tried, relative to the
/// ridge's peak: the same at every station, so its basis and normal equations are made
/// once.
struct ProfileModel {
    /// Per blur, per centre (where its normal matrix inverts).
    fits: Vec<Vec<Option<ProfileFit>>>,
}

impl ProfileModel {
    fn new() -> ProfileModel {
        let fits = BLURS_MM
            .iter()
            .map(|blur| {
                (-CENTRES..=CENTRES)
                    .map(|c| {
                        let t0 = f64::from(c) * CENTRE_STEP_MM;
                        let mut rows = [[0.0; 3]; PROFILE_LEN];
                        let mut ata = nalgebra::Matrix3::<f64>::zeros();
                        for (k, row) in (-HALF_SPAN..=HALF_SPAN).zip(rows.iter_mut()) {
                            let x = (f64::from(k) * PROFILE_STEP_MM - t0) / blur;
                            *row = [1.0, step(x), (-0.5 * x * x).exp()];
                            let v = nalgebra::Vector3::from(*row);
                            ata += v * v.transpose();
                        }
                        ata.try_inverse().map(|inv| (rows, inv))
                    })
                    .collect()
            })
            .collect();
        ProfileModel { fits }
    }
}

/// Where the line crosses the profile through `p` across `n`, near `peak` (mm across):
/// the profile is modelled as level + step + line, the step and the line blurred alike and
/// centred at the same place, since the shaded front arc ends at the line. A ridge measure
/// alone (the peak of v - (v_left + v_right) / 2) answers a step with an odd slope, and the
/// shading moved the found centre by a tenth of a millimetre towards it on one half of the
/// line only, turning it by about a degree. Each centre and blur tried is a linear least
/// squares fit in the three amplitudes; the least squared residual wins, refined by a
/// parabola through its neighbours.
fn line_centre(
    s: &Sampler,
    model: &ProfileModel,
    p: [f64; 2],
    n: [f64; 2],
    peak: f64,
) -> Option<f64> {
    let mut vals = [0.0; PROFILE_LEN];
    for (k, v) in (-HALF_SPAN..=HALF_SPAN).zip(vals.iter_mut()) {
        let t = peak + f64::from(k) * PROFILE_STEP_MM;
        *v = s.at([p[0] + t * n[0], p[1] + t * n[1]])?;
    }
    let vv: f64 = vals.iter().map(|v| v * v).sum();
    let mut best: Option<(f64, usize, usize)> = None;
    let mut rss_of = [[f64::INFINITY; 2 * CENTRES as usize + 1]; BLURS_MM.len()];
    for (bi, per_blur) in model.fits.iter().enumerate() {
        for (ci, fit) in per_blur.iter().enumerate() {
            let Some((rows, inv)) = fit else {
                continue;
            };
            let mut atb = nalgebra::Vector3::<f64>::zeros();
            for (row, v) in rows.iter().zip(&vals) {
                atb += nalgebra::Vector3::from(*row) * *v;
            }
            let amp = inv * atb;
            // The line must be brighter than what lies either side of it.
            if amp[2] <= 0.0 {
                continue;
            }
            let rss = vv - amp.dot(&atb);
            rss_of[bi][ci] = rss;
            if best.is_none_or(|(b, _, _)| rss < b) {
                best = Some((rss, bi, ci));
            }
        }
    }
    let (_, bi, ci) = best?;
    // A best centre at the end of the range is not a minimum.
    if ci == 0 || ci == 2 * CENTRES as usize {
        return None;
    }
    let row = &rss_of[bi];
    let (a, m, b) = (row[ci - 1], row[ci], row[ci + 1]);
    let den = a - 2.0 * m + b;
    let frac = if den > 0.0 && a.is_finite() && b.is_finite() {
        0.5 * (a - b) / den
    } else {
        0.0
    };
    Some(peak + (ci as f64 - f64::from(CENTRES) + frac) * CENTRE_STEP_MM)
}

/// A robust straight line t = t0 + r * slope through the points: least squares, then again
/// without the points beyond 2.5 robust sigmas (the bullseye's lines and print crossing
/// it): (t0, slope, sigma of slope, points kept, sigma of t0).
fn fit_line(pts: &[(f64, f64)]) -> Option<(f64, f64, f64, usize, f64)> {
    let mut keep: Vec<(f64, f64)> = pts.to_vec();
    let mut result = None;
    for _ in 0..3 {
        if keep.len() < MIN_POINTS {
            return None;
        }
        let n = keep.len() as f64;
        let (mr, mt) = (
            keep.iter().map(|p| p.0).sum::<f64>() / n,
            keep.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let srr: f64 = keep.iter().map(|p| (p.0 - mr).powi(2)).sum();
        if (srr / n).sqrt() < MIN_SPREAD_MM {
            return None;
        }
        let srt: f64 = keep.iter().map(|p| (p.0 - mr) * (p.1 - mt)).sum();
        let slope = srt / srr;
        let t0 = mt - slope * mr;
        let res: Vec<f64> = keep.iter().map(|p| p.1 - t0 - slope * p.0).collect();
        let mut abs: Vec<f64> = res.iter().map(|v| v.abs()).collect();
        abs.sort_by(f64::total_cmp);
        let robust = (1.4826 * abs[abs.len() / 2]).max(0.02);
        let rms = (res.iter().map(|v| v * v).sum::<f64>() / (n - 2.0).max(1.0)).sqrt();
        result = Some((
            t0,
            slope,
            rms / srr.sqrt(),
            keep.len(),
            rms * (1.0 / n + mr * mr / srr).sqrt(),
        ));
        let before = keep.len();
        keep = keep
            .into_iter()
            .zip(&res)
            .filter(|(_, r)| r.abs() <= 2.5 * robust)
            .map(|(p, _)| p)
            .collect();
        if keep.len() == before {
            break;
        }
    }
    result
}

/// The arc line's direction in one window: the offset from `angle` (rad, `sign` picks the
/// side) whose line through the centre shows the strongest ridge on average.
fn scan(s: &Sampler, fit: &BaseFit, inner: f64, sign: f64) -> Option<f64> {
    let mut best: Option<(f64, f64)> = None;
    let steps = ((OFFSET_MAX_DEG - OFFSET_MIN_DEG) / SCAN_STEP_DEG).round() as i32;
    for k in 0..=steps {
        let off = (OFFSET_MIN_DEG + f64::from(k) * SCAN_STEP_DEG).to_radians() * sign;
        let phi = fit.angle + off;
        let (u, n) = ([phi.cos(), phi.sin()], [-phi.sin(), phi.cos()]);
        let (mut sum, mut count) = (0.0, 0usize);
        // Every other pair of stations (+r and -r), so both halves of the line count.
        let rs = stations(fit.angle, phi, inner);
        for r in rs
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 4 < 2)
            .map(|(_, r)| *r)
        {
            let p = [fit.centre[0] + r * u[0], fit.centre[1] + r * u[1]];
            if s.hidden(p) {
                continue;
            }
            if let Some(v) = s.ridge(p, n) {
                sum += v;
                count += 1;
            }
        }
        if count >= SCAN_MIN_POINTS {
            let score = sum / count as f64;
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, off));
            }
        }
    }
    best.filter(|(score, _)| *score >= MIN_RIDGE / 2.0)
        .map(|(_, off)| off)
}

/// What the token's arc lines say of the fitted base's angle, or `None` where they do not
/// show well enough (hidden, too few pixels, or not crossing where the outline's centre
/// is). `z` is the token's height above the mat (mm).
pub fn line_turn(
    grey: &Grey,
    camera: &Camera,
    fit: &BaseFit,
    z: f64,
    minis: Option<&MiniMask>,
) -> Option<LineTurn> {
    let s = Sampler {
        grey,
        proj: camera.point_projector(),
        z,
        minis,
    };
    let inner = fit.half - fit.rim;
    // The same for every base and every frame: made once.
    static MODEL: std::sync::OnceLock<ProfileModel> = std::sync::OnceLock::new();
    let model = MODEL.get_or_init(ProfileModel::new);
    let mut lines = Vec::new();
    for sign in [1.0, -1.0] {
        let off = scan(&s, fit, inner, sign)?;
        let phi = fit.angle + off;
        let pts = ridge_points(&s, model, fit.centre, phi, &stations(fit.angle, phi, inner));
        let (t0, slope, sigma, kept, t0_sigma) = fit_line(&pts)?;
        lines.push((phi + slope.atan(), t0, sigma, kept, t0_sigma));
    }
    let (p1, t1, s1, k1, o1) = lines[0];
    let (p2, t2, s2, k2, o2) = lines[1];
    // Each line: the points x with n(phi) . (x - centre) = t (its offset in the frame
    // of its first guess, turned by the fit's small slope: near enough for a check).
    let (n1, n2) = ([-p1.sin(), p1.cos()], [-p2.sin(), p2.cos()]);
    let det = n1[0] * n2[1] - n1[1] * n2[0];
    if det.abs() < 0.5 {
        return None;
    }
    let dx = (t1 * n2[1] - t2 * n1[1]) / det;
    let dy = (n1[0] * t2 - n2[0] * t1) / det;
    if dx.hypot(dy) > MAX_CROSSING_MM {
        return None;
    }
    let turn = 0.5 * (p1 + p2) - fit.angle;
    if turn.abs() > MAX_TURN_DEG.to_radians() {
        return None;
    }
    Some(LineTurn {
        turn,
        sigma: 0.5 * s1.hypot(s2),
        half_arc: 0.5 * (p1 - p2),
        points: [k1, k2],
        crossing: [fit.centre[0] + dx, fit.centre[1] + dy],
        normals: [n1, n2],
        offset_sigma: [o1, o2],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_through_noisy_points_and_a_stray_crossing() {
        // t = 0.1 + 0.01 r, with a crossing line's points far off at r 10-12.
        let mut pts: Vec<(f64, f64)> = (-40..=40)
            .filter(|k| *k != 0)
            .map(|k| {
                let r = f64::from(k) * 0.5;
                let wobble = if k % 2 == 0 { 0.03 } else { -0.03 };
                (r, 0.1 + 0.01 * r + wobble)
            })
            .collect();
        pts.extend((0..5).map(|k| (10.0 + 0.5 * f64::from(k), 1.0)));
        let (t0, slope, sigma, kept, _) = fit_line(&pts).expect("a line");
        assert!(
            (t0 - 0.1).abs() < 0.01 && (slope - 0.01).abs() < 0.001,
            "{t0} {slope}"
        );
        assert_eq!(kept, 80);
        assert!(sigma > 0.0 && sigma < 0.002, "{sigma}");
        // One stretch of a line towards a corner, the rest under a miniature: 12 mm of it
        // (an RMS spread of 3.5 mm) is used.
        let stretch: Vec<(f64, f64)> = (0..25)
            .map(|k| {
                let r = 10.0 + 0.5 * f64::from(k);
                (r, 0.1 + 0.01 * r + if k % 2 == 0 { 0.03 } else { -0.03 })
            })
            .collect();
        let (_, slope, _, kept, _) = fit_line(&stretch).expect("a stretch of a line");
        assert!((slope - 0.01).abs() < 0.002 && kept == 25, "{slope} {kept}");
        // Four points at each end of a line, by the corners, all a miniature leaves of it,
        // are used.
        let few: Vec<(f64, f64)> = (0..8)
            .map(|k| {
                let r = if k < 4 { -22.0 } else { 20.5 } + 0.5 * f64::from(k % 4);
                (r, 0.1 + 0.01 * r + if k % 2 == 0 { 0.02 } else { -0.02 })
            })
            .collect();
        let (_, slope, _, kept, _) = fit_line(&few).expect("both ends of a line");
        assert!((slope - 0.01).abs() < 0.002 && kept == 8, "{slope} {kept}");
        // Points bunched near the centre say little of a direction: refused.
        let near: Vec<(f64, f64)> = (0..20).map(|k| (4.0 + 0.1 * f64::from(k), 0.0)).collect();
        assert!(fit_line(&near).is_none());
    }

    #[test]
    fn stations_reach_the_square_less_its_edge() {
        let rs = stations(0.0, 45f64.to_radians(), 18.4);
        let far = rs.iter().copied().fold(0.0, f64::max);
        let reach = (18.4 - EDGE_CLEAR_MM) * std::f64::consts::SQRT_2;
        assert!(far <= reach && far > reach - ALONG_STEP_MM, "{far} {reach}");
        assert!(rs.iter().all(|r| r.abs() >= START_MM));
    }
}

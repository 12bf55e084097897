//! A ship base's pose from the edges of its outline, fitted in the camera frame itself.
//!
//! A black 3 mm base on a dark mat shows two kinds of edge, and either may be missing
//! along any stretch of a side: the base's silhouette against the mat (brighter outside),
//! and the printed token's edge against the base's black rim (brighter inside). The model
//! predicts both as lines of the base pose (centre, angle) and the rim's width, so every
//! edge point found, of either kind, on any side, pulls on the same four numbers; stretches
//! hidden by the miniature or too dark to show an edge simply contribute nothing (a robust
//! fit drops what the miniature's own edges offer).
//!
//! The silhouette follows the camera: a side facing the camera shows its wall, so its
//! outline in the image is the wall's foot on the mat (z = 0); a side facing away shows its
//! top edge (z = base height). Edges are searched along the image normal of each predicted
//! point, and their offsets in mm (by the local scale) are the residuals, so there is no
//! orthophoto resampling between the pixels and the fit.

use super::facing::PRINT_MAX_VALUE;
use crate::vision::Camera;
use crate::vision::calibrate::scale::px_per_mm;
use crate::vision::camera::PointProjector;
use crate::vision::edges::{Grey, linear_level};
use nalgebra::{Matrix4, Vector4};

/// Where the fit starts: centre (table mm), the angle of one side's outward normal
/// (radians, any of the four), and the base's half width (mm).
#[derive(Clone, Copy, Debug)]
pub struct BaseGuess {
    pub centre: [f64; 2],
    pub angle: f64,
    pub half: f64,
}

/// The fitted pose with what it rests on.
#[derive(Clone, Debug)]
pub struct BaseFit {
    pub centre: [f64; 2],
    /// Outward normal angle of side 0 (radians); the heading is this plus k * 90 deg.
    pub angle: f64,
    pub half: f64,
    /// Width of the black rim between the base's edge and the token (mm).
    pub rim: f64,
    /// Edge points used / searched.
    pub inliers: usize,
    pub samples: usize,
    /// Fraction of each side's stretch with an edge point of either kind.
    pub side_support: [f64; 4],
    /// RMS of the inliers' residuals (mm).
    pub rms_mm: f64,
    /// 1-sigma of centre x, y (mm) and angle (rad) from the fit's covariance.
    pub sigma_xy: [f64; 2],
    pub sigma_angle: f64,
    /// The edge points of the last pass (table mm, in their own plane), whether each is a
    /// token edge, and whether the fit used it: for drawing and for checks.
    pub points: Vec<([f64; 2], bool, bool)>,
    /// Fraction of each side's samples where both the silhouette and the token edge were
    /// found and kept.
    pub paired_support: [f64; 4],
    /// Share of each side's kept edge points that are token edges (0 where none is kept).
    /// A side seen through token edges alone may be seen through its silhouette instead:
    /// against a mat darker than the base the silhouette has the token edge's polarity,
    /// a rim's width further out (see `bases::to_ships`).
    pub token_share: [f64; 4],
}

/// Fit settings that depend on the base model, not on the image.
#[derive(Clone, Copy, Debug)]
pub struct BaseShape {
    pub height_mm: f64,
    /// Where the guides sit along the front and rear sides (mm from the middle); the fit
    /// skips them on every side, since which sides are front and rear is not known yet.
    pub guide_offset_mm: f64,
    pub guide_half_width_mm: f64,
    /// The rim width expected before the fit (mm) and how strongly to hold to it.
    pub rim_prior_mm: f64,
    /// How far the rim may stray from that (1 sigma, mm).
    pub rim_prior_sigma_mm: f64,
    /// Where an edge point lies away from the rim (token edges inwards, the silhouette
    /// outwards), its weight falls as 1 / (1 + (d / (scale * s))^2), s the fit's robust
    /// residual scale; 0 keeps every point's weight. Dark print next to a token's edge
    /// shifts the step a blurred image shows inwards, dark mat next to the base shifts the
    /// silhouette outwards; nothing shifts either towards the rim, whose black is the
    /// darkest thing there. Fitting symmetric residuals let such stretches pull a side and
    /// widen the rim (fitted 2.6-3.0 mm where it was 1.6-2.0).
    pub art_bias_scale: f64,
    /// Where the silhouette's gradient peak lies outside the true outline (mm): the thin
    /// dark rim between the mat and the token blurs into one line whose two edges push
    /// each other apart. Measured at the true poses of 57 rendered bases at 1080p (median
    /// +0.3 to +0.67 mm by size; token edges sit where the rim says), where a camera sees
    /// a standard table at 0.5-1.1 px per mm. The push is a share of the blur, which is the
    /// camera's, in pixels: where a millimetre spans more than a pixel the bias is
    /// `silhouette_bias_px` instead, the smaller. As a constant 0.45 mm it put the
    /// silhouette at 4K (1.0-1.9 px per mm) about twice as far out as it shows: the small
    /// bases not flagged lay 0.16 mm on average further from the camera than they stand
    /// (the side facing it, seen by its silhouette, pulled in; 0.29 mm RMS), and seed 34's
    /// s3 fitted 7 mm off (doubted); now 0.23 mm RMS, and s3 0.25 mm off.
    pub silhouette_bias_mm: f64,
    /// See `silhouette_bias_mm` (camera px).
    pub silhouette_bias_px: f64,
    /// A token edge whose inside is brighter than this (linear grey, 0-255; see
    /// `miniature_inside`) is taken for a miniature's outline: brighter than any printed
    /// colour under the table's light (sRGB 160, as the facing reader's
    /// `PRINT_MAX_VALUE`). A pale miniature over the rim shows a step of the token edge's
    /// polarity there, and fits followed it (seed 11's s5 of the fixed set, 3.6 deg off
    /// with confidence 0.95; seed 45's s4 of the second, 3.7 deg, 0.70). Such points
    /// neither pull the pose nor count as the side's support. Infinite in the search (see
    /// [`BaseShape::for_search`]).
    pub print_max_level: f64,
}

impl BaseFit {
    /// Where a fit from this pose starts.
    pub fn guess(&self) -> BaseGuess {
        BaseGuess {
            centre: self.centre,
            angle: self.angle,
            half: self.half,
        }
    }
}

impl BaseShape {
    /// The base model's numbers and the edge model's defaults.
    pub fn from_models(models: &crate::models::Models) -> BaseShape {
        BaseShape {
            height_mm: models.bases.base_top_height_mm,
            guide_offset_mm: models.bases.guides.offset_x_mm,
            guide_half_width_mm: models.bases.guides.width_mm / 2.0,
            rim_prior_mm: RIM_PRIOR_MM,
            rim_prior_sigma_mm: RIM_PRIOR_SIGMA_MM,
            art_bias_scale: ART_BIAS_SCALE,
            silhouette_bias_mm: SILHOUETTE_BIAS_MM,
            silhouette_bias_px: SILHOUETTE_BIAS_PX,
            print_max_level: f64::from(linear_level(PRINT_MAX_VALUE)),
        }
    }

    /// The same model for the search: the rim left loose (1 mm) and every edge point's
    /// weight kept, and token edges under a miniature kept too, so that a fit started a
    /// rim's width off still slides onto the outline; the found fit is then polished with
    /// the final settings. (Leaving those token edges out in the search as well lost 7 of
    /// the second rendered set's 123 bases.)
    pub fn for_search(self) -> BaseShape {
        BaseShape {
            rim_prior_sigma_mm: SEARCH_RIM_SIGMA_MM,
            art_bias_scale: 0.0,
            print_max_level: f64::INFINITY,
            ..self
        }
    }
}

/// The rim between a base's edge and its token, expected before measuring (mm).
pub const RIM_PRIOR_MM: f64 = 1.8;
/// See [`BaseShape::silhouette_bias_mm`]: 0.45 mm up to 1 px per mm, 0.45 px beyond.
pub const SILHOUETTE_BIAS_MM: f64 = 0.45;
pub const SILHOUETTE_BIAS_PX: f64 = 0.45;
/// How far a token's rim may differ from [`RIM_PRIOR_MM`] (1 sigma, mm): the simulator's
/// tokens leave 1.6 mm (small) and 2.0 mm (medium, large); a real token's has not been
/// measured yet.
pub const RIM_PRIOR_SIGMA_MM: f64 = 0.3;
/// The search's rim prior (1 sigma, mm); see [`BaseShape::for_search`].
pub const SEARCH_RIM_SIGMA_MM: f64 = 1.0;
/// See [`BaseShape::art_bias_scale`]. On the three rendered sets of
/// scripts/detect-report.sh, 0.7-1.3 all did about as well (1 chosen).
pub const ART_BIAS_SCALE: f64 = 1.0;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Base silhouette: brighter outward.
    Outer,
    /// Token edge: darker outward.
    Token,
}

struct Point {
    /// In-plane table point where the edge was found (mm).
    q: [f64; 2],
    side: usize,
    /// Which sample along the side (both kinds of edge share it).
    sample: usize,
    kind: Kind,
    weight: f64,
    /// Where the model puts this edge beyond the base's outline (mm, in its plane): the
    /// silhouette's bias at this point's scale (see `BaseShape::silhouette_bias_mm`), 0 for
    /// a token edge.
    bias: f64,
}

/// The gradient extremum of the wanted polarity within `reach` px of `p` along `m`:
/// offset in px (parabolic sub-sample) and strength.
fn find_edge(img: &Grey, p: [f64; 2], m: [f64; 2], reach: f64, rising: bool) -> Option<(f64, f64)> {
    const STEP: f64 = 0.25;
    // The profile lives on the stack when it fits (this runs for every edge sample of every
    // fit, and allocating it cost more than a tenth of the fit's time).
    const ON_STACK: usize = 128;
    const MAX_PROFILE_PX: i64 = 8192;
    let n = ((reach / STEP).ceil() as i64).saturating_add(2);
    // A profile longer than any image's diagonal (from a degenerate projection) has
    // samples outside the image, so no edge: say so before allocating for it.
    if !(0..=MAX_PROFILE_PX).contains(&(n / 4)) {
        return None;
    }
    let len = (2 * n + 1) as usize;
    let mut stack = [0.0f64; ON_STACK];
    let mut heap = Vec::new();
    let vals: &mut [f64] = if len <= ON_STACK {
        &mut stack[..len]
    } else {
        heap.resize(len, 0.0);
        &mut heap
    };
    for (v, k) in vals.iter_mut().zip(-n..=n) {
        let t = k as f64 * STEP;
        *v = img.sample(p[0] + t * m[0], p[1] + t * m[1])?;
    }
    let vals = &*vals;
    // Derivative over one pixel (t +- 0.5 px): g[i] at the profile's sample i + 2.
    let sign = if rising { 1.0 } else { -1.0 };
    let g_len = len - 4;
    let g = |i: usize| sign * (vals[i + 4] - vals[i]);
    let (mut best, mut bi) = (0.0, usize::MAX);
    for i in 0..g_len {
        let v = g(i);
        if v > best {
            best = v;
            bi = i;
        }
    }
    if bi == usize::MAX || bi == 0 || bi + 1 >= g_len {
        return None;
    }
    let (a, b, c) = (g(bi - 1), g(bi), g(bi + 1));
    let den = a - 2.0 * b + c;
    let frac = if den.abs() > 1e-12 {
        (0.5 * (a - c) / den).clamp(-0.5, 0.5)
    } else {
        0.0
    };
    let t = ((bi as f64 + 2.0) - n as f64 + frac) * STEP;
    if t.abs() > reach {
        return None;
    }
    Some((t, b))
}

/// The black plastic must be on the dark side of the edge: a miniature's bright edge, or
/// a star's, has the right polarity but the wrong side.
fn dark_side_is_base(
    img: &Grey,
    p: [f64; 2],
    m: [f64; 2],
    off: f64,
    rising: bool,
    dark_max: f64,
) -> bool {
    let s = if rising { -1.0 } else { 1.0 };
    let at = |d: f64| img.sample(p[0] + (off + s * d) * m[0], p[1] + (off + s * d) * m[1]);
    let bright = |d: f64| img.sample(p[0] + (off - s * d) * m[0], p[1] + (off - s * d) * m[1]);
    match (at(1.2), bright(1.2)) {
        (Some(dk), Some(br)) => dk <= dark_max && br >= 1.4 * dk,
        _ => false,
    }
}

/// Whether what lies inside a token edge found at `off` px along `m` is brighter than any
/// print at 1.5 mm and at 4 mm (see [`BaseShape::print_max_level`]): then the step is a
/// miniature's outline over the rim, not the token's edge. (At one depth only, the white
/// hashmarks, 3.5 mm long, dropped a large 4K base's points on one side and it settled
/// 1.6 mm off with confidence 0.79.) `k` is the image's px per table mm across the edge.
fn miniature_inside(
    img: &Grey,
    p: [f64; 2],
    m: [f64; 2],
    off: f64,
    k: f64,
    shape: &BaseShape,
) -> bool {
    if !shape.print_max_level.is_finite() {
        return false;
    }
    MINIATURE_PROBE_MM.iter().all(|d| {
        let t = off - d * k;
        img.sample(p[0] + t * m[0], p[1] + t * m[1])
            .is_some_and(|v| v > shape.print_max_level)
    })
}

/// Where inside a token edge [`miniature_inside`] looks (mm): past the edge's blur, and
/// past the hashmarks' length.
const MINIATURE_PROBE_MM: [f64; 2] = [1.5, 4.0];

/// The base's black level: a low quantile along the rim's middle, where the miniature
/// (bright) can only raise values.
fn rim_level(
    img: &Grey,
    camera: &PointProjector,
    shape: &BaseShape,
    c: [f64; 2],
    angle: f64,
    half: f64,
    rim: f64,
) -> Option<f64> {
    let mut vals = Vec::new();
    let d = half - rim / 2.0;
    for side in 0..4 {
        let a = angle + side as f64 * std::f64::consts::FRAC_PI_2;
        let (n, t) = ([a.cos(), a.sin()], [-a.sin(), a.cos()]);
        let mut u = -half + 2.0;
        while u <= half - 2.0 {
            let p = [c[0] + d * n[0] + u * t[0], c[1] + d * n[1] + u * t[1]];
            if let Some(ip) = camera.project([p[0], p[1], shape.height_mm])
                && let Some(v) = img.sample(ip[0], ip[1])
            {
                vals.push(v);
            }
            u += 1.0;
        }
    }
    if vals.len() < 8 {
        return None;
    }
    vals.sort_by(f64::total_cmp);
    Some(vals[vals.len() / 4])
}

/// Edge points of both kinds along the four sides for the pose `(c, angle, half, rim)`.
fn gather(
    img: &Grey,
    camera: &Camera,
    shape: &BaseShape,
    pose: (&[f64; 2], f64, f64, f64),
    reach_mm: f64,
    min_contrast: f64,
) -> (Vec<Point>, usize, [usize; 4], [usize; 4]) {
    let (c, angle, half, rim) = pose;
    let cam = camera.centre();
    let projector = camera.point_projector();
    let dark_max = rim_level(img, &projector, shape, *c, angle, half, rim)
        .map_or(f64::INFINITY, |l| 2.5 * l + 1.0);
    let scale = px_per_mm(camera, *c, shape.height_mm)
        .unwrap_or(1.0)
        .max(1e-3);
    // About two samples per camera pixel along each side.
    let step = (0.5 / scale).clamp(0.1, 2.0);
    let mut pts = Vec::new();
    let mut searched = 0;
    let mut counts = [0usize; 4];
    let mut totals = [0usize; 4];
    for side in 0..4 {
        let a = angle + side as f64 * std::f64::consts::FRAC_PI_2;
        let n = [a.cos(), a.sin()];
        let t = [-n[1], n[0]];
        let mid = [c[0] + half * n[0], c[1] + half * n[1]];
        let faces_camera = (cam.x - mid[0]) * n[0] + (cam.y - mid[1]) * n[1] > 0.0;
        let mut u = -half + 2.5;
        let mut seen = 0;
        let mut total = 0;
        while u <= half - 2.5 {
            let on_guide =
                ((u.abs() - shape.guide_offset_mm).abs()) < shape.guide_half_width_mm + 1.0;
            if !on_guide {
                total += 1;
                let mut found = false;
                for kind in [Kind::Outer, Kind::Token] {
                    let (d, z) = match kind {
                        Kind::Outer if faces_camera => (half, 0.0),
                        Kind::Outer => (half, shape.height_mm),
                        Kind::Token => (half - rim, shape.height_mm),
                    };
                    let p0 = [c[0] + d * n[0] + u * t[0], c[1] + d * n[1] + u * t[1]];
                    let (Some(ip0), Some(ip2)) = (
                        projector.project([p0[0], p0[1], z]),
                        projector.project([p0[0] + n[0], p0[1] + n[1], z]),
                    ) else {
                        continue;
                    };
                    let k = (ip2[0] - ip0[0]).hypot(ip2[1] - ip0[1]);
                    if k < 1e-6 {
                        continue;
                    }
                    let m = [(ip2[0] - ip0[0]) / k, (ip2[1] - ip0[1]) / k];
                    // The silhouette is looked for its bias beyond the outline, at this
                    // point's scale.
                    let bias = if kind == Kind::Outer {
                        (shape.silhouette_bias_px / k).min(shape.silhouette_bias_mm)
                    } else {
                        0.0
                    };
                    let p = [p0[0] + bias * n[0], p0[1] + bias * n[1]];
                    let ip = [ip0[0] + bias * k * m[0], ip0[1] + bias * k * m[1]];
                    searched += 1;
                    let reach = (reach_mm * k).max(1.0);
                    let rising = kind == Kind::Outer;
                    if let Some((off, strength)) = find_edge(img, ip, m, reach, rising)
                        && strength >= min_contrast
                        && dark_side_is_base(img, ip, m, off, rising, dark_max)
                        && !(kind == Kind::Token && miniature_inside(img, ip, m, off, k, shape))
                    {
                        let o = off / k;
                        pts.push(Point {
                            q: [p[0] + o * n[0], p[1] + o * n[1]],
                            side,
                            sample: total,
                            kind,
                            weight: strength.sqrt(),
                            bias,
                        });
                        found = true;
                    }
                }
                if found {
                    seen += 1;
                }
            }
            u += step;
        }
        counts[side] = seen * 1000 / total.max(1);
        totals[side] = total;
    }
    (pts, searched, counts, totals)
}

/// Fits the base pose from `guess`, or `None` when too little of the outline shows.
pub fn fit_base(
    img: &Grey,
    camera: &Camera,
    shape: &BaseShape,
    guess: BaseGuess,
    min_contrast: f64,
) -> Option<BaseFit> {
    let mut c = guess.centre;
    let mut angle = guess.angle;
    let half = guess.half;
    let mut rim = shape.rim_prior_mm;
    let mut counts = [0usize; 4];
    let mut totals: [usize; 4];
    let mut result = None;
    let ak = shape.art_bias_scale;
    for (iter, reach) in [3.0, 2.0, 1.2, 0.8, 0.8].into_iter().enumerate() {
        let (pts, searched, c4, t4) = gather(
            img,
            camera,
            shape,
            (&c, angle, half, rim),
            reach,
            min_contrast,
        );
        (counts, totals) = (c4, t4);
        if pts.len() < 12 {
            return None;
        }
        let resid = |p: &Point, c: [f64; 2], angle: f64, rim: f64| {
            let a = angle + p.side as f64 * std::f64::consts::FRAC_PI_2;
            let n = [a.cos(), a.sin()];
            let d = match p.kind {
                Kind::Outer => half + p.bias,
                Kind::Token => half - rim,
            };
            n[0] * (p.q[0] - c[0]) + n[1] * (p.q[1] - c[1]) - d
        };
        // Robust scale from the median absolute residual; points beyond 2.5 scales drop.
        let mut abs: Vec<f64> = pts.iter().map(|p| resid(p, c, angle, rim).abs()).collect();
        abs.sort_by(f64::total_cmp);
        let s = (1.4826 * abs[abs.len() / 2]).max(0.08);
        let limit = if iter == 0 { 3.0 * s } else { 2.5 * s };
        let mut jtj = Matrix4::<f64>::zeros();
        let mut jtr = Vector4::<f64>::zeros();
        let mut used = 0usize;
        let mut wused = 0.0;
        let mut ss = 0.0;
        let mut drawn = Vec::with_capacity(pts.len());
        // Samples where both edges of the rim were found and kept: a thin dark line
        // between two brighter surfaces, which random texture rarely imitates.
        let mut pairs = std::collections::HashMap::<(usize, usize), u8>::new();
        let (mut kept, mut kept_token) = ([0usize; 4], [0usize; 4]);
        for p in &pts {
            let r = resid(p, c, angle, rim);
            drawn.push((p.q, p.kind == Kind::Token, r.abs() <= limit));
            if r.abs() <= limit {
                *pairs.entry((p.side, p.sample)).or_default() += 1;
                kept[p.side] += 1;
                kept_token[p.side] += usize::from(p.kind == Kind::Token);
            }
            if r.abs() > limit {
                continue;
            }
            let a = angle + p.side as f64 * std::f64::consts::FRAC_PI_2;
            let (n, t) = ([a.cos(), a.sin()], [-a.sin(), a.cos()]);
            let j = Vector4::new(
                -n[0],
                -n[1],
                t[0] * (p.q[0] - c[0]) + t[1] * (p.q[1] - c[1]),
                if p.kind == Kind::Token { 1.0 } else { 0.0 },
            );
            // Art can only move an edge away from the rim: dark print next to the token's
            // edge pushes its step inwards, dark mat next to the base outwards.
            let away = match p.kind {
                Kind::Token => -r,
                Kind::Outer => r,
            };
            let w = if away > 0.0 && ak > 0.0 {
                p.weight / (1.0 + (away / (ak * s)).powi(2))
            } else {
                p.weight
            };
            jtj += w * j * j.transpose();
            jtr += w * j * r;
            wused += w;
            used += 1;
            ss += r * r;
        }
        if used < 10 {
            return None;
        }
        // The rim's prior, as information in the same units as the points': one point of
        // mean weight carries 1 / s^2, the prior 1 / sigma_rim^2. Where only token edges show,
        // on two adjacent sides, the rim and the centre along the diagonal trade off freely,
        // and only the prior (not a few stray points on the hidden sides) should decide.
        let w_point = wused / used.max(1) as f64;
        let sigma_rim = shape.rim_prior_sigma_mm;
        let prior = (w_point * s * s / (sigma_rim * sigma_rim)).max(1e-9);
        jtj[(3, 3)] += prior;
        jtr[3] += prior * (rim - shape.rim_prior_mm);
        let delta = jtj.lu().solve(&(-jtr))?;
        c = [c[0] + delta[0], c[1] + delta[1]];
        angle += delta[2];
        rim = (rim + delta[3]).clamp(0.3, 4.0);
        let rms = (ss / used as f64).sqrt();
        // Covariance of (x, y, angle): sigma^2 (J^T W J)^-1, with the weights normalised.
        let wmean = pts.iter().map(|p| p.weight).sum::<f64>() / pts.len() as f64;
        let cov = (jtj / wmean.max(1e-12))
            .try_inverse()
            .unwrap_or(Matrix4::zeros())
            * rms
            * rms;
        result = Some(BaseFit {
            centre: c,
            angle,
            half,
            rim,
            inliers: used,
            samples: searched,
            side_support: [0.0; 4],
            rms_mm: rms,
            sigma_xy: [cov[(0, 0)].max(0.0).sqrt(), cov[(1, 1)].max(0.0).sqrt()],
            sigma_angle: cov[(2, 2)].max(0.0).sqrt(),
            points: drawn,
            paired_support: {
                let mut ps = [0.0; 4];
                for ((side, _), n) in &pairs {
                    if *n >= 2 {
                        ps[*side] += 1.0;
                    }
                }
                for (k, v) in ps.iter_mut().enumerate() {
                    *v /= totals[k].max(1) as f64;
                }
                ps
            },
            token_share: std::array::from_fn(|k| kept_token[k] as f64 / kept[k].max(1) as f64),
        });
    }
    result.map(|mut f| {
        for (k, s) in f.side_support.iter_mut().enumerate() {
            *s = counts[k] as f64 / 1000.0;
        }
        f
    })
}

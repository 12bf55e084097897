//! Where the bases might be, and roughly how they lie, from the rectified view of the base
//! tops (z = base height, 1 mm per pixel).
//!
//! Every ship carries a miniature on a peg over its base's centre, and the miniature is by
//! far the most visible part of it, so candidates start from bright compact blobs; the
//! base is then looked for under the blob (the camera sees a raised blob displaced away
//! from the point below it). A first attempt voted for base centres from every edge pixel
//! (a Hough transform for squares); on a starry mat the true bases ranked below dozens of
//! texture peaks. Around each candidate a coarse search scores square outlines against
//! the gradients; the edge fit in the camera frame (`base_fit`) then decides.

use super::ortho::OrthoView;
use crate::geometry::polygon::{ring_hull, ring_roundness};
use crate::vision::components::Components;
use crate::vision::cv::disc_kernel;
use crate::vision::{Camera, VisionError};
use opencv::core::{CV_32F, Mat};
use opencv::imgproc;
use opencv::prelude::*;

/// The orthophoto's grey levels and gradients (per mm).
pub struct Gradients {
    pub view: OrthoView,
    /// Per pixel, row by row: (d/dx, d/dy) side by side, as the outline scores read them.
    g: Vec<[f32; 2]>,
}

impl Gradients {
    /// From an orthophoto (BGR or grey). (Gating the gradients by an empty-table frame was
    /// tried: on the rendered set it found 2 fewer of 67 ships and no better poses.)
    pub fn new(ortho: &Mat, view: OrthoView) -> Result<Gradients, VisionError> {
        let grey = to_grey(ortho)?;
        // Both 3 x 3 Sobel derivatives in one pass, as exact 16-bit sums, read straight
        // from their rows: this runs on every search of a stream (18 to 7 ms at 1080p).
        let (mut gx, mut gy) = (Mat::default(), Mat::default());
        imgproc::spatial_gradient_def(&grey, &mut gx, &mut gy)?;
        // Sobel sums 8 pixel differences over 2 px; per mm of table.
        let k = 1.0 / (8.0 * view.mm_per_px) as f32;
        // Image rows grow downwards, table y upwards.
        let mut g = Vec::with_capacity((view.width * view.height) as usize);
        for r in 0..view.height {
            let (x, y) = (gx.at_row::<i16>(r)?, gy.at_row::<i16>(r)?);
            g.extend(
                x.iter()
                    .zip(y)
                    .map(|(x, y)| [f32::from(*x) * k, -f32::from(*y) * k]),
            );
        }
        Ok(Gradients { view, g })
    }
}

fn to_grey(img: &Mat) -> Result<Mat, VisionError> {
    let mut grey = Mat::default();
    if img.channels() == 3 {
        imgproc::cvt_color_def(img, &mut grey, imgproc::COLOR_BGR2GRAY)?;
    } else {
        grey = img.try_clone()?;
    }
    Ok(grey)
}

impl Gradients {
    /// The gradient (per mm, table axes) at a table point, nearest pixel; zero outside.
    fn at(&self, x: f64, y: f64) -> [f32; 2] {
        let [c, r] = self.view.to_pixel(x, y);
        // The nearest pixel: above -0.5, truncating c + 0.5 rounds as `f64::round` does
        // (but within a rounding error of a half; `round` is a library call on the
        // baseline x86-64 target, and this is the fine search's innermost loop).
        if !(c > -0.5 && r > -0.5) {
            return [0.0, 0.0];
        }
        let (c, r) = ((c + 0.5) as usize, (r + 0.5) as usize);
        if c >= self.view.width as usize || r >= self.view.height as usize {
            return [0.0, 0.0];
        }
        self.g[r * self.view.width as usize + c]
    }

    /// How well a base outline at (centre, angle) explains the edges: along each side,
    /// the gradient across it, rising outwards at the silhouette and falling outwards at
    /// the token's edge, each clipped so a single bright edge cannot carry a side.
    pub fn outline_score(&self, centre: [f64; 2], angle: f64, half: f64, rim: f64) -> f64 {
        let points: Vec<_> = outline_points(angle, half, rim).collect();
        self.score_points(&points, centre, half)
    }

    /// [`Gradients::outline_score`] from an outline's points laid out once (the fine search
    /// scores 25 positions per angle).
    fn score_points(
        &self,
        points: &[([f64; 2], [f64; 2], f64)],
        centre: [f64; 2],
        half: f64,
    ) -> f64 {
        let s: f64 = points
            .iter()
            .map(|&(off, n, sign)| {
                let g = self.at(centre[0] + off[0], centre[1] + off[1]);
                let across = sign * (f64::from(g[0]) * n[0] + f64::from(g[1]) * n[1]);
                across.clamp(0.0, 6.0)
            })
            .sum();
        s / (4.0 * half)
    }

    /// The best outline within `reach` mm of a candidate (see [`Gradients::coarse_poses`]).
    pub fn coarse_pose(
        &self,
        centre: [f64; 2],
        half: f64,
        rim: f64,
        reach: f64,
    ) -> ([f64; 2], f64, f64) {
        self.coarse_poses(centre, half, rim, reach, 1, |_| true)
            .into_iter()
            .next()
            .unwrap_or((centre, 0.0, f64::MIN))
    }

    /// The `k` best distinct outlines within `reach` mm of a candidate: every 5 deg of
    /// angle and every 2 mm, then 1 deg and 0.7 mm around each. A miniature's own edges can
    /// outscore a half-hidden base, so more than one start is worth a fit. The samples of
    /// each angle's outline are laid out once as pixel offsets, so a position costs one
    /// look-up per sample. Only centres `allowed` takes count (where the caller knows the
    /// base cannot be, a start there would only take the place of one that could).
    pub fn coarse_poses(
        &self,
        centre: [f64; 2],
        half: f64,
        rim: f64,
        reach: f64,
        k: usize,
        allowed: impl Fn([f64; 2]) -> bool,
    ) -> Vec<([f64; 2], f64, f64)> {
        let v = &self.view;
        let (w, h) = (v.width as i64, v.height as i64);
        let steps = (reach / 2.0).round() as i64;
        // An outline's samples reach this far (px) from its centre; positions whose samples
        // would leave the view are skipped one by one (a large base at the play area's edge
        // has most of its search window inside).
        let margin = ((half * std::f64::consts::SQRT_2 + 3.0) / v.mm_per_px).ceil() as i64;
        let [pc, pr] = v.to_pixel(centre[0], centre[1]);
        if !(pc.is_finite() && pr.is_finite()) {
            return Vec::new();
        }
        let inside =
            |c: i64, r: i64| c - margin >= 0 && r - margin >= 0 && c + margin < w && r + margin < h;
        let step_px = 2.0 / v.mm_per_px;
        // The positions are the same at every angle: which of them count is asked once.
        let mut positions = Vec::new();
        for dy in -steps..=steps {
            for dx in -steps..=steps {
                let (c, r) = (pc + dx as f64 * step_px, pr + dy as f64 * step_px);
                let (ci, ri) = (c.round() as i64, r.round() as i64);
                if !inside(ci, ri) {
                    continue;
                }
                let t = v.to_table(c, r);
                if allowed(t) {
                    positions.push((ci, ri, t));
                }
            }
        }
        let mut grid = Vec::with_capacity(18 * positions.len());
        for ai in 0..18 {
            let a = (ai as f64 * 5.0).to_radians();
            let samples = self.outline_samples(a, half, rim);
            for &(ci, ri, t) in &positions {
                let s = self.score_at(&samples, ci, ri, half);
                grid.push((s, t, a));
            }
        }
        grid.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut starts: Vec<([f64; 2], f64)> = Vec::new();
        for (_, c, a) in grid {
            if starts.len() >= k {
                break;
            }
            let distinct = starts.iter().all(|(c2, a2)| {
                let da = ((a - a2).to_degrees().rem_euclid(90.0))
                    .min((a2 - a).to_degrees().rem_euclid(90.0));
                (c[0] - c2[0]).hypot(c[1] - c2[1]) > 4.0 || da > 10.0
            });
            if distinct {
                starts.push((c, a));
            }
        }
        starts
            .into_iter()
            .map(|(c0, a0)| {
                // 1 deg and 0.7 mm around the start (exact positions).
                let mut best = (c0, a0, self.outline_score(c0, a0, half, rim));
                for da in -3..=3 {
                    let a = a0 + f64::from(da).to_radians();
                    let laid = self.laid_out(a, half, rim);
                    for dy in -2..=2 {
                        for dx in -2..=2 {
                            let c = [c0[0] + 0.7 * f64::from(dx), c0[1] + 0.7 * f64::from(dy)];
                            let s = self.score_laid(&laid, c, half);
                            if s > best.2 {
                                best = (c, a, s);
                            }
                        }
                    }
                }
                best
            })
            .collect()
    }

    /// An outline's samples at angle `a` as offsets in (fractional) view pixels and the
    /// outward normal times the sign, for [`Gradients::score_laid`].
    fn laid_out(&self, a: f64, half: f64, rim: f64) -> Vec<([f64; 2], [f64; 2])> {
        let v = &self.view;
        outline_points(a, half, rim)
            .map(|(off, n, sign)| {
                (
                    [off[0] / v.mm_per_px, -off[1] / v.mm_per_px],
                    [sign * n[0], sign * n[1]],
                )
            })
            .collect()
    }

    /// [`Gradients::score_points`] at table point `centre` from samples laid out in view
    /// pixels: the centre goes to the view once, each sample is an addition away (the
    /// table-to-pixel division per sample was most of the fine search's time). The same
    /// nearest pixels as `score_points` but where a sample falls within a rounding error
    /// of a pixel's edge.
    fn score_laid(&self, laid: &[([f64; 2], [f64; 2])], centre: [f64; 2], half: f64) -> f64 {
        let [pc, pr] = self.view.to_pixel(centre[0], centre[1]);
        let (w, h) = (self.view.width as usize, self.view.height as usize);
        let s: f64 = laid
            .iter()
            .map(|&(d, n)| {
                let (c, r) = (pc + d[0], pr + d[1]);
                if !(c > -0.5 && r > -0.5) {
                    return 0.0;
                }
                let (c, r) = ((c + 0.5) as usize, (r + 0.5) as usize);
                if c >= w || r >= h {
                    return 0.0;
                }
                let g = self.g[r * w + c];
                (f64::from(g[0]) * n[0] + f64::from(g[1]) * n[1]).clamp(0.0, 6.0)
            })
            .sum();
        s / (4.0 * half)
    }

    /// An outline's samples at angle `a` as (pixel offset, outward normal in table axes
    /// times the sign: + for the silhouette, - for the token edge).
    fn outline_samples(&self, a: f64, half: f64, rim: f64) -> Vec<(i64, f32, f32)> {
        let v = &self.view;
        let w = v.width as i64;
        outline_points(a, half, rim)
            .map(|(off, n, sign)| {
                // Table y up, rows down.
                let (dc, dr) = (
                    (off[0] / v.mm_per_px).round() as i64,
                    (-off[1] / v.mm_per_px).round() as i64,
                );
                // (The sign is +-1: multiplying the normal by it is exact.)
                (dr * w + dc, (sign * n[0]) as f32, (sign * n[1]) as f32)
            })
            .collect()
    }

    /// [`Gradients::outline_score`] from laid-out samples at pixel (c, r).
    fn score_at(&self, samples: &[(i64, f32, f32)], c: i64, r: i64, half: f64) -> f64 {
        let base = r * self.view.width as i64 + c;
        let term = |&(off, nx, ny): &(i64, f32, f32)| {
            let [gx, gy] = self.g[(base + off) as usize];
            (gx * nx + gy * ny).clamp(0.0, 6.0)
        };
        // Four running sums: one would wait on each addition before the next (this loop
        // is most of the outline search's time).
        let mut acc = [0.0f32; 4];
        let chunks = samples.chunks_exact(4);
        let rest: f32 = chunks.remainder().iter().map(term).sum();
        for q in chunks {
            for (a, t) in acc.iter_mut().zip(q) {
                *a += term(t);
            }
        }
        f64::from((acc[0] + acc[1]) + (acc[2] + acc[3]) + rest) / (4.0 * half)
    }
}

/// Where an outline at angle `angle` is scored, relative to its centre: every 2 mm along
/// each side (2 mm clear of the corners), on the silhouette (sign +1: brighter outwards)
/// and on the token's edge `rim` inside it (sign -1), with the side's outward normal.
fn outline_points(
    angle: f64,
    half: f64,
    rim: f64,
) -> impl Iterator<Item = ([f64; 2], [f64; 2], f64)> {
    let steps = ((2.0 * half - 4.0) / 2.0).floor() as usize + 1;
    (0..4).flat_map(move |side| {
        let b = angle + side as f64 * std::f64::consts::FRAC_PI_2;
        let (n, t) = ([b.cos(), b.sin()], [-b.sin(), b.cos()]);
        (0..steps).flat_map(move |k| {
            let u = -half + 2.0 + 2.0 * k as f64;
            [(half, 1.0), (half - rim, -1.0)]
                .map(|(d, sign)| ([d * n[0] + u * t[0], d * n[1] + u * t[1]], n, sign))
        })
    })
}

/// A bright blob or a grey body where a miniature may stand (see [`miniatures`]).
#[derive(Clone, Debug)]
pub struct Blob {
    /// Centre (table mm of the orthophoto's plane; a raised object appears displaced
    /// there, see [`under_blob`]).
    pub centre: [f64; 2],
    pub area_mm2: f64,
    /// The convex hull of its parts (table mm, same plane); empty for a grey body of the
    /// miniature mask, which [`MiniMask::body_near`] outlines.
    pub hull: Vec<[f64; 2]>,
}

/// Bright compact blobs in the orthophoto: the miniatures, which stand on pegs over their
/// bases' centres and are the most visible thing about a ship.
pub fn bright_blobs(greys: &Greys, view: &OrthoView) -> Result<Vec<Blob>, VisionError> {
    let mut blobs = blobs_by_size(greys, view, MINI_SURROUND_MM)?.0;
    // A miniature's painted stripe or a dark panel can split it in two; parts closer than
    // any two miniatures on touching small bases can be are one miniature.
    blobs.sort_by(|a, b| b.area_mm2.total_cmp(&a.area_mm2));
    let mut merged: Vec<Blob> = Vec::new();
    for b in blobs {
        match merged
            .iter_mut()
            .find(|m| (m.centre[0] - b.centre[0]).hypot(m.centre[1] - b.centre[1]) < MERGE_MM)
        {
            Some(m) => {
                let t = m.area_mm2 + b.area_mm2;
                m.centre = [
                    (m.centre[0] * m.area_mm2 + b.centre[0] * b.area_mm2) / t,
                    (m.centre[1] * m.area_mm2 + b.centre[1] * b.area_mm2) / t,
                ];
                m.area_mm2 = t;
                m.hull.extend(b.hull);
                m.hull = ring_hull(&m.hull);
            }
            None => merged.push(b),
        }
    }
    Ok(merged)
}

/// Where the miniatures are: the bright blobs, and the grey-white bodies of the
/// miniature mask that no bright blob is near and that stand on bright colour (see
/// `GROUND_COLOURED`). A grey miniature on bright art (a small ship on a yellow planet,
/// seed 118's s1 of the third rendered set, its base in plain view) is no brighter than
/// its surroundings and made no blob; its grey sets it apart from the art's colour. On the
/// four rendered sets these bodies add about one start in five tables and found that
/// base, within 0.3 mm, and nothing else.
pub fn miniatures(
    ortho: &Mat,
    greys: &Greys,
    view: &OrthoView,
    minis: &MiniMask,
) -> Result<Vec<Blob>, VisionError> {
    let mut out = bright_blobs(greys, view)?;
    for (c, area, ground) in minis.bodies(ortho, MIN_BLOB_AREA_MM2)? {
        // (A bigger grey body is no miniature: a pale hand, a sheet of paper.)
        if area <= MAX_BLOB_AREA_MM2
            && ground.coloured >= GROUND_COLOURED
            && !out
                .iter()
                .any(|b| (b.centre[0] - c[0]).hypot(b.centre[1] - c[1]) < MERGE_MM)
        {
            out.push(Blob {
                centre: c,
                area_mm2: area,
                hull: Vec::new(),
            });
        }
    }
    Ok(out)
}

/// The areas (mm2) of a bright blob that may be a miniature.
const MIN_BLOB_AREA_MM2: f64 = 250.0;
const MAX_BLOB_AREA_MM2: f64 = 9000.0;

/// A small bright disc is no miniature (none is round from above at this size): it is a
/// star's glow on the mat's art or a round cardboard token beside a ship (about 350 mm2).
/// Such blobs, whose hull is rounder than this and smaller than this (a disc 24 mm across),
/// are not searched. On the fixed and third rendered 1080p sets (42 tables) they were 187
/// blobs, none within 30 mm of a ship; large glowing stars among them made doubted bases
/// where no ship was (seeds 11 and 21), or a rival square beside a base (21 mm from seed
/// 114's s1, halving its confidence). Without them invented ships went from 3, 3 and 2 to
/// 1, 1 and 0 on the fixed, second and third sets, and no base was lost or moved. At 0.93
/// the sets gave the same, but two bare bases of the dark-miniature test's tables were
/// lost: their token's brightest part was such a disc.
const ROUND_BLOB_MAX_AREA_MM2: f64 = 450.0;
const ROUND_BLOB_MIN_ROUNDNESS: f64 = 0.96;

/// Surround widths (Gaussian sigma, mm) against which a miniature and a hand stand out.
const MINI_SURROUND_MM: f64 = 20.0;
const HAND_SURROUND_MM: f64 = 120.0;

/// Blob parts closer than this (mm) are one miniature.
const MERGE_MM: f64 = 22.0;

/// Bright blobs of a miniature's size, and the table-mm boxes of larger ones.
fn blobs_by_size(
    greys: &Greys,
    view: &OrthoView,
    surround_mm: f64,
) -> Result<(Vec<Blob>, Vec<[f64; 4]>), VisionError> {
    // The surroundings' level: a Gaussian of `surround_mm`, computed at a quarter size.
    let Greys { f, small } = greys;
    let (mut small_bg, mut bg) = (Mat::default(), Mat::default());
    imgproc::gaussian_blur_def(
        &small,
        &mut small_bg,
        opencv::core::Size::new(0, 0),
        surround_mm * QUARTER / view.mm_per_px,
    )?;
    imgproc::resize(
        &small_bg,
        &mut bg,
        f.size()?,
        0.0,
        0.0,
        imgproc::INTER_LINEAR,
    )?;
    let comps = bright_components(f, &bg, view)?;
    let px_area = view.mm_per_px * view.mm_per_px;
    let mut out = Vec::new();
    let mut large = Vec::new();
    for i in 1..comps.count() {
        let area = f64::from(comps.area(i)?) * px_area;
        if area > 12000.0 {
            let [l, t, w, h] = comps.bounds(i)?;
            let a = view.to_table(f64::from(l), f64::from(t + h));
            let b = view.to_table(f64::from(l + w), f64::from(t));
            large.push([a[0], a[1], b[0], b[1]]);
            continue;
        }
        if !(MIN_BLOB_AREA_MM2..=MAX_BLOB_AREA_MM2).contains(&area) {
            continue;
        }
        let hull = component_hull(&comps, i, view)?;
        if area < ROUND_BLOB_MAX_AREA_MM2 && ring_roundness(&hull) > ROUND_BLOB_MIN_ROUNDNESS {
            continue;
        }
        let [cx, cy] = comps.centroid(i)?;
        out.push(Blob {
            centre: view.to_table(cx, cy),
            area_mm2: area,
            hull,
        });
    }
    Ok((out, large))
}

/// Whole miniatures where the bright blobs are only their rims: a grey miniature (lit, a
/// little brighter than a dark mat) as wide as its 20 mm surround is brighter than that
/// surround only along its lit edge and its engine glow, so its blobs are a crescent off
/// to one side and a speck, neither a miniature's size (the dark-miniature tables of
/// tests/detect_ships.rs: a large ship's, 6100 mm2 seen whole, made blobs of 590 and 370
/// mm2, the nearer 56 mm from its base, and it was missed without a word). Measured
/// against the mat with the miniatures taken out (a grey opening wider than any of them,
/// then smoothed), such a miniature stands out whole. Returns each such region at least
/// twice the area of the blobs (`blobs`, by index) inside it, with those blobs; a region
/// with none is a miniature no blob saw.
pub fn filled_blobs(
    greys: &Greys,
    view: &OrthoView,
    blobs: &[Blob],
) -> Result<Vec<(Blob, Vec<usize>)>, VisionError> {
    // The mat's level, computed at a quarter size as in `blobs_by_size`.
    let Greys { f, small } = greys;
    let (mut opened, mut smooth, mut bg) = (Mat::default(), Mat::default(), Mat::default());
    let px = |mm: f64| mm * QUARTER / view.mm_per_px;
    let d = (px(2.0 * MAT_OPENING_RADIUS_MM).round() as i32) | 1;
    imgproc::morphology_ex_def(small, &mut opened, imgproc::MORPH_OPEN, &disc_kernel(d)?)?;
    imgproc::gaussian_blur_def(
        &opened,
        &mut smooth,
        opencv::core::Size::new(0, 0),
        px(MAT_SMOOTH_MM),
    )?;
    imgproc::resize(&smooth, &mut bg, f.size()?, 0.0, 0.0, imgproc::INTER_LINEAR)?;
    let comps = bright_components(f, &bg, view)?;
    let (w, h) = (view.width, view.height);
    let label_at = |p: [f64; 2]| -> i32 {
        let [c, r] = view.to_pixel(p[0], p[1]);
        let (c, r) = (c.round(), r.round());
        if !(c >= 0.0 && r >= 0.0 && c < f64::from(w) && r < f64::from(h)) {
            return 0;
        }
        comps.at(c as i32, r as i32)
    };
    // The region each blob lies in: its centre's, or, where its centre falls outside
    // it (a crescent's), its hull's first point that is in one.
    let owner: Vec<i32> = blobs
        .iter()
        .map(|b| {
            std::iter::once(b.centre)
                .chain(b.hull.iter().copied())
                .map(label_at)
                .find(|l| *l > 0)
                .unwrap_or(0)
        })
        .collect();
    let px_area = view.mm_per_px * view.mm_per_px;
    let mut out = Vec::new();
    for i in 1..comps.count() {
        let area = f64::from(comps.area(i)?) * px_area;
        if !(MIN_BLOB_AREA_MM2..=MAX_BLOB_AREA_MM2).contains(&area) {
            continue;
        }
        let parts: Vec<usize> = (0..blobs.len()).filter(|k| owner[*k] == i).collect();
        let seen: f64 = parts.iter().map(|k| blobs[*k].area_mm2).sum();
        if area < FILLED_MIN_GROWTH * seen {
            continue;
        }
        let [cx, cy] = comps.centroid(i)?;
        out.push((
            Blob {
                centre: view.to_table(cx, cy),
                area_mm2: area,
                hull: component_hull(&comps, i, view)?,
            },
            parts,
        ));
    }
    Ok(out)
}

/// The grey opening that takes the miniatures out of the mat (see `filled_blobs`) has
/// this radius (mm): a large ship's miniature is up to about 90 mm across.
const MAT_OPENING_RADIUS_MM: f64 = 50.0;
/// And its result is smoothed by a Gaussian of this sigma (mm).
const MAT_SMOOTH_MM: f64 = 10.0;
/// A whole miniature counts where it is at least this many times its blobs' area.
const FILLED_MIN_GROWTH: f64 = 2.0;

/// The scale at which the blob searches take the mat's level (it varies over tens of mm).
const QUARTER: f64 = 0.25;

/// An orthophoto's grey levels (32-bit float) and the same at [`QUARTER`] size, made once
/// per frame for the blob searches (`bright_blobs`, `filled_blobs`).
pub struct Greys {
    f: Mat,
    small: Mat,
}

impl Greys {
    pub fn of(ortho: &Mat) -> Result<Greys, VisionError> {
        let grey = to_grey(ortho)?;
        let (mut f, mut small) = (Mat::default(), Mat::default());
        grey.convert_to_def(&mut f, CV_32F)?;
        imgproc::resize(
            &f,
            &mut small,
            opencv::core::Size::new(0, 0),
            QUARTER,
            QUARTER,
            imgproc::INTER_AREA,
        )?;
        Ok(Greys { f, small })
    }
}

/// The bright regions of `f` against a background `bg` (as `blobs_by_size` marks them),
/// labelled.
fn bright_components(f: &Mat, bg: &Mat, view: &OrthoView) -> Result<Components, VisionError> {
    let (w, h) = (view.width, view.height);
    let mut mask =
        Mat::new_rows_cols_with_default(h, w, opencv::core::CV_8U, opencv::core::Scalar::all(0.0))?;
    for r in 0..h {
        let (fr, br) = (f.at_row::<f32>(r)?, bg.at_row::<f32>(r)?);
        let mr = mask.at_row_mut::<u8>(r)?;
        for ((m, v), b) in mr.iter_mut().zip(fr).zip(br) {
            if *v > BLOB_MIN_VALUE as f32 && v - b > 30.0 {
                *m = 255;
            }
        }
    }
    let mut opened = Mat::default();
    let kernel = disc_kernel(5)?;
    imgproc::morphology_ex_def(&mask, &mut opened, imgproc::MORPH_OPEN, &kernel)?;
    Components::of(&opened, &kernel)
}

/// The convex hull (table mm) of connected component `i`: of each row's first and last
/// pixel of it, which is all a convex hull needs.
fn component_hull(
    comps: &Components,
    i: i32,
    view: &OrthoView,
) -> Result<Vec<[f64; 2]>, VisionError> {
    let [l, t, w, h] = comps.bounds(i)?;
    let mut ends = Vec::new();
    for r in t..t + h {
        let row = comps.row(r)?;
        let mut span = (l.max(0)..(l + w).max(0)).filter(|c| row.get(*c as usize) == Some(i));
        let first = span.next();
        let last = span.next_back().or(first);
        for c in first.into_iter().chain(last) {
            ends.push(view.to_table(f64::from(c), f64::from(r)));
        }
    }
    Ok(ring_hull(&ends))
}

/// Where on the plane z = `base_z` lies the point under something seen at table point `p`
/// of that plane's orthophoto, if it really stands `height` mm above the base: the camera
/// sees it displaced away from the point below the camera.
pub fn under_blob(camera: &Camera, p: [f64; 2], base_z: f64, height: f64) -> [f64; 2] {
    let c = camera.centre();
    let (dz, up) = (c.z - base_z, height - base_z);
    if dz <= up + 1.0 {
        return p;
    }
    // p = q + up * (q - C) / (dz - up)  =>  q = C + (p - C) * (dz - up) / dz
    let k = (dz - up) / dz;
    [c.x + (p[0] - c.x) * k, c.y + (p[1] - c.y) * k]
}

/// Large bright regions (a hand or an arm over the table) as table-mm boxes grown by
/// 30 mm: what they cover is held by the tracker, not trusted.
pub fn occluders(
    ortho: &Mat,
    view: &OrthoView,
) -> Result<Vec<Vec<crate::geometry::Point>>, VisionError> {
    // Only the play area counts: the view's margin shows the table's bright surround, one
    // ring round the whole view whose box is the view itself; it would hide every ship
    // from the tracker, and a hand reaching in from the edge would merge with it.
    let mut inside = ortho.try_clone()?;
    let m = ((-view.x0) / view.mm_per_px).round().max(0.0) as i32;
    let (w, h) = (view.width, view.height);
    let strips = if m > 0 && 2 * m < w.min(h) {
        vec![
            opencv::core::Rect::new(0, 0, w, m),
            opencv::core::Rect::new(0, h - m, w, m),
            opencv::core::Rect::new(0, 0, m, h),
            opencv::core::Rect::new(w - m, 0, m, h),
        ]
    } else {
        Vec::new()
    };
    for r in strips {
        imgproc::rectangle(
            &mut inside,
            r,
            opencv::core::Scalar::all(0.0),
            imgproc::FILLED,
            imgproc::LINE_8,
            0,
        )?;
    }
    // A hand is far bigger than a miniature: against a 20 mm surround only its rim stands
    // out, so it is looked for against a wide one.
    let (_, large) = blobs_by_size(&Greys::of(&inside)?, view, HAND_SURROUND_MM)?;
    Ok(large
        .into_iter()
        .map(|[x0, y0, x1, y1]| {
            let m = 30.0;
            vec![
                crate::geometry::Point::new(x0 - m, y0 - m),
                crate::geometry::Point::new(x1 + m, y0 - m),
                crate::geometry::Point::new(x1 + m, y1 + m),
                crate::geometry::Point::new(x0 - m, y1 + m),
            ]
        })
        .collect())
}

/// A miniature's body in the orthophoto: brighter than this (sRGB max channel), less
/// saturated than this (chroma over max), and the margin grown around it (px = mm).
/// (Tried on 219 rendered bases: a value limit of 90-130 hid the token's own light parts.)
const MINI_MIN_VALUE: f64 = 150.0;
const MINI_MAX_SATURATION: f64 = 0.3;
const MINI_MARGIN_PX: i32 = 3;

/// The mean chroma (over max) of the pixels of `ortho` (in `view`) inside `ring` (table
/// mm) brighter than `min_value` (sRGB max channel) and no more saturated than a
/// miniature's body (`MINI_MAX_SATURATION`); 1 where none is.
pub fn mean_chroma(
    ortho: &Mat,
    view: &OrthoView,
    ring: &[[f64; 2]],
    min_value: f64,
) -> Result<f64, VisionError> {
    let px: Vec<[f64; 2]> = ring.iter().map(|p| view.to_pixel(p[0], p[1])).collect();
    let [x0, y0, x1, y1] = crate::geometry::polygon::ring_bounds(&px);
    let (mut n, mut sum) = (0usize, 0.0);
    for r in (y0.floor().max(0.0) as i32)..=(y1.ceil() as i32).min(view.height - 1) {
        let row = ortho.at_row::<opencv::core::Vec3b>(r)?;
        for c in (x0.floor().max(0.0) as i32)..=(x1.ceil() as i32).min(view.width - 1) {
            let Some(p) = row.get(c as usize) else {
                continue;
            };
            let mx = f64::from(p.0[0].max(p.0[1]).max(p.0[2]));
            let mn = f64::from(p.0[0].min(p.0[1]).min(p.0[2]));
            if mx > min_value
                && mx - mn < MINI_MAX_SATURATION * mx
                && crate::geometry::polygon::ring_contains(&px, [f64::from(c), f64::from(r)])
            {
                n += 1;
                sum += (mx - mn) / mx;
            }
        }
    }
    Ok(if n == 0 { 1.0 } else { sum / n as f64 })
}

/// How bright a bright blob's pixels are: grey level above this and 30 above their
/// surroundings (see `blobs_by_size`). [`mean_chroma`] of a blob counts the pixels whose
/// brightest channel is above it, which for a grey pixel is nearly its grey level.
pub const BLOB_MIN_VALUE: f64 = 70.0;

/// What lies around a miniature mask's body (see [`MiniMask::bodies`]).
#[derive(Clone, Copy, Debug)]
pub struct Ground {
    /// The share of it that is bright and coloured (brighter than `GROUND_MIN_VALUE`, with
    /// a chroma the mask's bodies do not have).
    pub coloured: f64,
}

/// How far around a body's box its ground is read (mm), and how bright a coloured ground
/// pixel is (sRGB max channel).
const GROUND_MM: f64 = 8.0;
const GROUND_MIN_VALUE: f64 = 90.0;
/// The least coloured share of a body's ground for it to start a search: a grey body on
/// bright colour is what the bright blobs miss. Seed 118's miniature on its yellow planet
/// stands on 0.46 and 0.74 (its two parts); on the ten real photos of checkerboards and
/// tags (`tests/detect_realdata.rs`) 80 of the 88 grey-white bodies no bright blob is near
/// (white paper between black squares) stand on none at all: searched, they added 13
/// squares, one of them confident; with this limit 7 are searched, adding one square, not
/// confident.
const GROUND_COLOURED: f64 = 0.25;

/// A miniature's body as [`MiniMask::body_near`] finds it.
pub struct Body {
    /// The convex hull of its parts (table mm, in the mask's plane).
    pub hull: Vec<[f64; 2]>,
    pub area_mm2: f64,
}

/// Where the base tops are hidden by a miniature: bright and grey (printed colour is
/// saturated, the mat and the ship art dark), opened so that the token's thin white lines
/// do not count, grown by a margin for the miniature's soft edge and small painted details.
pub struct MiniMask {
    mask: Mat,
    view: OrthoView,
    /// The kernel the mask was grown by (see `Components::of`).
    kernel: Mat,
}

impl MiniMask {
    pub fn new(ortho: &Mat, view: &OrthoView) -> Result<MiniMask, VisionError> {
        let (w, h) = (view.width, view.height);
        let (value, satmax, grow) = (MINI_MIN_VALUE, MINI_MAX_SATURATION, MINI_MARGIN_PX);
        let mut mask = Mat::new_rows_cols_with_default(
            h,
            w,
            opencv::core::CV_8U,
            opencv::core::Scalar::all(0.0),
        )?;
        for r in 0..h {
            let src = ortho.at_row::<opencv::core::Vec3b>(r)?;
            let dst = mask.at_row_mut::<u8>(r)?;
            for (d, p) in dst.iter_mut().zip(src) {
                let mx = f64::from(p.0[0].max(p.0[1]).max(p.0[2]));
                let mn = f64::from(p.0[0].min(p.0[1]).min(p.0[2]));
                if mx > value && mx - mn < satmax * mx {
                    *d = 255;
                }
            }
        }
        let mut opened = Mat::default();
        imgproc::morphology_ex_def(&mask, &mut opened, imgproc::MORPH_OPEN, &disc_kernel(3)?)?;
        let mut grown = Mat::default();
        let kernel = disc_kernel(2 * grow + 1)?;
        imgproc::dilate_def(&opened, &mut grown, &kernel)?;
        Ok(MiniMask {
            mask: grown,
            view: *view,
            kernel,
        })
    }

    /// `grads` with what the miniatures cover taken out: a miniature's own outline
    /// outscores the little a half-hidden base shows of its own.
    pub fn off_minis(&self, grads: &Gradients) -> Result<Gradients, VisionError> {
        let mut out = Gradients {
            view: grads.view,
            g: grads.g.clone(),
        };
        let w = grads.view.width.max(0) as usize;
        for r in 0..grads.view.height {
            for (c, v) in self.mask.at_row::<u8>(r)?.iter().enumerate() {
                if *v > 0 {
                    let i = r as usize * w + c;
                    out.g[i] = [0.0, 0.0];
                }
            }
        }
        Ok(out)
    }

    /// The miniature's body about a bright blob: the parts of the mask whose centres lie
    /// within `reach_mm` of `blob`, as the convex hull of them all (table mm, in the mask's
    /// plane, where the raised body appears) and their area; None where no part is.
    pub fn body_near(&self, blob: [f64; 2], reach_mm: f64) -> Result<Option<Body>, VisionError> {
        use opencv::core::{Point, Rect, Vector};
        let v = &self.view;
        let c = v.to_pixel(blob[0], blob[1]);
        let reach = reach_mm / v.mm_per_px;
        // A window wide enough for a miniature whose centre is in reach.
        let half = (2.0 * reach + 40.0 / v.mm_per_px).ceil();
        let (x0, y0) = (
            ((c[0] - half).floor() as i32).clamp(0, v.width),
            ((c[1] - half).floor() as i32).clamp(0, v.height),
        );
        let (x1, y1) = (
            ((c[0] + half).ceil() as i32).clamp(0, v.width),
            ((c[1] + half).ceil() as i32).clamp(0, v.height),
        );
        if x1 - x0 < 3 || y1 - y0 < 3 {
            return Ok(None);
        }
        let window = Mat::roi(&self.mask, Rect::new(x0, y0, x1 - x0, y1 - y0))?.try_clone()?;
        let mut contours: Vector<Vector<Point>> = Vector::new();
        imgproc::find_contours(
            &window,
            &mut contours,
            imgproc::RETR_EXTERNAL,
            imgproc::CHAIN_APPROX_SIMPLE,
            Point::new(x0, y0),
        )?;
        let (mut points, mut area): (Vector<Point>, f64) = (Vector::new(), 0.0);
        for contour in &contours {
            let m = imgproc::moments(&contour, false)?;
            if m.m00 <= 0.0 {
                continue;
            }
            let centre = [m.m10 / m.m00, m.m01 / m.m00];
            if (centre[0] - c[0]).hypot(centre[1] - c[1]) > reach {
                continue;
            }
            area += m.m00;
            for p in &contour {
                points.push(p);
            }
        }
        if points.len() < 3 {
            return Ok(None);
        }
        let mut hull: Vector<Point> = Vector::new();
        imgproc::convex_hull(&points, &mut hull, false, true)?;
        let ring = hull
            .iter()
            .map(|p| v.to_table(f64::from(p.x), f64::from(p.y)))
            .collect();
        Ok(Some(Body {
            hull: ring,
            area_mm2: area * v.mm_per_px * v.mm_per_px,
        }))
    }

    /// The mask's parts of at least `min_area_mm2` (centre in table mm of the mask's plane,
    /// area in mm2): grey-white bodies, whatever lies around them.
    pub fn bodies(
        &self,
        ortho: &Mat,
        min_area_mm2: f64,
    ) -> Result<Vec<([f64; 2], f64, Ground)>, VisionError> {
        let comps = Components::of(&self.mask, &self.kernel)?;
        let px_area = self.view.mm_per_px * self.view.mm_per_px;
        let reach = (GROUND_MM / self.view.mm_per_px).ceil() as i32;
        let mut out = Vec::new();
        for i in 1..comps.count() {
            let area = f64::from(comps.area(i)?) * px_area;
            if area < min_area_mm2 {
                continue;
            }
            let [l, t, w, h] = comps.bounds(i)?;
            // The ground: what lies within reach of the body's box and is no body.
            let (mut n_all, mut n_coloured) = (0usize, 0usize);
            for r in (t - reach).max(0)..(t + h + reach).min(self.view.height) {
                let lab = comps.row(r)?;
                let row = ortho.at_row::<opencv::core::Vec3b>(r)?;
                for c in (l - reach).max(0)..(l + w + reach).min(self.view.width) {
                    let (Some(lb), Some(p)) = (lab.get(c as usize), row.get(c as usize)) else {
                        continue;
                    };
                    if lb != 0 {
                        continue;
                    }
                    n_all += 1;
                    let mx = f64::from(p.0[0].max(p.0[1]).max(p.0[2]));
                    let mn = f64::from(p.0[0].min(p.0[1]).min(p.0[2]));
                    if mx > GROUND_MIN_VALUE && mx - mn >= MINI_MAX_SATURATION * mx {
                        n_coloured += 1;
                    }
                }
            }
            let [cx, cy] = comps.centroid(i)?;
            out.push((
                self.view.to_table(cx, cy),
                area,
                Ground {
                    coloured: n_coloured as f64 / n_all.max(1) as f64,
                },
            ));
        }
        Ok(out)
    }

    /// The mean chroma (over max) of the miniature-like pixels of `ortho` (this mask's
    /// view) inside `ring` (table mm): a painted grey miniature's, however bright its
    /// stripes, against the tint of a pale patch of printed art (see `HiddenMini`).
    pub fn mean_chroma(&self, ortho: &Mat, ring: &[[f64; 2]]) -> Result<f64, VisionError> {
        mean_chroma(ortho, &self.view, ring, MINI_MIN_VALUE)
    }

    /// The orthophoto's view this mask covers.
    pub fn view(&self) -> &OrthoView {
        &self.view
    }

    /// Whether the base-top point `p` (table mm) is seen through a miniature.
    pub fn covers(&self, p: [f64; 2]) -> bool {
        let q = self.view.to_pixel(p[0], p[1]);
        let (c, r) = (q[0].round() as i32, q[1].round() as i32);
        self.mask.at_2d::<u8>(r, c).is_ok_and(|v| *v > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Point, Scalar};

    /// A 200 x 200 mm view at 1 mm per pixel, dark, with a grey disc (a miniature's body)
    /// and a pale blue-grey one (a planet's pale patch) of radius 20 mm.
    fn view_with_bodies() -> (Mat, OrthoView) {
        let view = OrthoView::new(0.0, 0.0, 200.0, 200.0, 3.0, 1.0);
        let mut img = Mat::new_rows_cols_with_default(
            view.height,
            view.width,
            opencv::core::CV_8UC3,
            Scalar::new(20.0, 15.0, 15.0, 0.0),
        )
        .expect("image");
        for (centre, bgr) in [
            (Point::new(50, 50), Scalar::new(190.0, 190.0, 195.0, 0.0)),
            (Point::new(150, 150), Scalar::new(200.0, 170.0, 150.0, 0.0)),
        ] {
            imgproc::circle(
                &mut img,
                centre,
                20,
                bgr,
                imgproc::FILLED,
                imgproc::LINE_8,
                0,
            )
            .expect("disc");
        }
        (img, view)
    }

    #[test]
    fn a_grey_body_is_gathered_and_a_tinted_one_told_by_its_chroma() {
        let (img, view) = view_with_bodies();
        let minis = MiniMask::new(&img, &view).expect("mask");
        // Both discs pass the mask (bright, chroma under 0.3): two bodies, each a disc of
        // radius 20 grown by the mask's margin.
        let bodies = minis.bodies(&img, 250.0).expect("bodies");
        assert_eq!(bodies.len(), 2, "{bodies:?}");
        let grey_at = view.to_table(50.0, 50.0);
        let body = minis
            .body_near(grey_at, 15.0)
            .expect("body")
            .expect("a body near the grey disc");
        let grown = std::f64::consts::PI * 23.0f64.powi(2);
        assert!(
            (body.area_mm2 - grown).abs() < 0.1 * grown,
            "{} mm2 against {grown:.0}",
            body.area_mm2
        );
        // The hull holds the disc's centre and not the other disc's.
        let pale_at = view.to_table(150.0, 150.0);
        assert!(crate::geometry::polygon::ring_contains(&body.hull, grey_at));
        assert!(!crate::geometry::polygon::ring_contains(
            &body.hull, pale_at
        ));
        // Nothing in reach of an empty spot.
        assert!(
            minis
                .body_near(view.to_table(150.0, 40.0), 15.0)
                .expect("body")
                .is_none()
        );
        let grey = minis.mean_chroma(&img, &body.hull).expect("chroma");
        let pale_body = minis
            .body_near(pale_at, 15.0)
            .expect("body")
            .expect("a body near the pale disc");
        let pale = minis.mean_chroma(&img, &pale_body.hull).expect("chroma");
        // Grey: (195 - 190) / 195; pale blue-grey: (200 - 150) / 200.
        assert!((grey - 5.0 / 195.0).abs() < 0.01, "{grey}");
        assert!((pale - 0.25).abs() < 0.01, "{pale}");
    }
}

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
//!
//! The blobs themselves are `blobs`' to find, the miniature mask (where a body hides the
//! base tops) `minis`'; this module scores square outlines against the gradients.

mod blobs;
mod minis;

pub use blobs::{Blob, Greys, bright_blobs, filled_blobs, miniatures, occluders, under_blob};
pub use minis::{BLOB_MIN_VALUE, Body, Ground, MiniMask, mean_chroma};

use super::ortho::OrthoView;
use crate::vision::VisionError;
use opencv::core::Mat;
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

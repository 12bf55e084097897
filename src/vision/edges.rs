//! Sub-pixel quadrilateral corners from edge lines, the way AprilTag refines its tags: a
//! corner found by a corner detector is only as good as a few pixels around it, while each
//! side of a marker offers dozens of edge pixels. Along each side, the dark-to-light
//! transition is located to a fraction of a pixel at many points (where the profile crosses
//! halfway between the dark and the light level, which a symmetric blur does not move), a
//! line is fitted through them, and neighbouring lines meet at the corners.

use super::VisionError;
use opencv::core::Mat;
use opencv::prelude::*;

/// A grey image as linear light, for bilinear sampling. Cameras store a gamma-encoded
/// signal; a blurred edge is symmetric in linear light only, so its halfway point is found
/// there (in the encoded values it sits about half a pixel towards the dark side, which
/// shrinks a black marker by 2 % at 50 px: measured on rendered frames before this decode).
pub struct Grey {
    width: usize,
    height: usize,
    data: Vec<f32>,
}

/// An 8-bit sRGB value as [`Grey`] stores it: linear light scaled to 0-255.
pub fn linear_level(v: u8) -> f32 {
    let c = f64::from(v) / 255.0;
    let l = if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    };
    (l * 255.0) as f32
}

impl Grey {
    /// From an 8-bit grey or BGR Mat.
    pub fn from_mat(image: &Mat) -> Result<Grey, VisionError> {
        let grey = if image.channels() == 1 {
            image.try_clone()?
        } else {
            super::cv::grey(image)?
        };
        let size = grey.size()?;
        let (width, height) = (size.width as usize, size.height as usize);
        let linear: Vec<f32> = (0..=255u8).map(linear_level).collect();
        let mut data = Vec::with_capacity(width * height);
        for r in 0..height {
            let row = grey.at_row::<u8>(r as i32)?;
            data.extend(row.iter().map(|&v| linear[usize::from(v)]));
        }
        Ok(Grey {
            width,
            height,
            data,
        })
    }

    /// Bilinear sample at pixel-centre coordinates; `None` outside the image.
    pub fn sample(&self, x: f64, y: f64) -> Option<f64> {
        if !(x >= 0.0 && y >= 0.0 && x <= (self.width - 1) as f64 && y <= (self.height - 1) as f64)
        {
            return None;
        }
        // Both are >= 0 here, where truncation is the floor (`f64::floor` is a library
        // call on the baseline x86-64 target, and this runs a million times per frame).
        let (x0, y0) = (x as usize, y as usize);
        let (x1, y1) = ((x0 + 1).min(self.width - 1), (y0 + 1).min(self.height - 1));
        let (fx, fy) = (x - x0 as f64, y - y0 as f64);
        let at = |xx: usize, yy: usize| f64::from(self.data[yy * self.width + xx]);
        Some(
            at(x0, y0) * (1.0 - fx) * (1.0 - fy)
                + at(x1, y0) * fx * (1.0 - fy)
                + at(x0, y1) * (1.0 - fx) * fy
                + at(x1, y1) * fx * fy,
        )
    }
}

/// The edge point across the side at `p`, searching along the outward normal `n` within
/// `reach` px: where the profile crosses halfway from the dark inside to the light outside.
fn edge_point(img: &Grey, p: [f64; 2], n: [f64; 2], reach: f64) -> Option<[f64; 2]> {
    const STEP: f64 = 0.25;
    let steps = (reach / STEP).round() as i64;
    let profile: Vec<(f64, f64)> = (-steps..=steps)
        .map(|k| {
            let t = k as f64 * STEP;
            img.sample(p[0] + t * n[0], p[1] + t * n[1]).map(|v| (t, v))
        })
        .collect::<Option<_>>()?;
    let q = profile.len() / 4;
    let dark = profile[..q].iter().map(|x| x.1).sum::<f64>() / q as f64;
    let light = profile[profile.len() - q..]
        .iter()
        .map(|x| x.1)
        .sum::<f64>()
        / q as f64;
    if light - dark < 8.0 {
        return None;
    }
    let half = (dark + light) / 2.0;
    // The crossing nearest the middle of the profile.
    let mid = profile.len() / 2;
    let mut best: Option<(f64, f64)> = None;
    for w in profile.windows(2) {
        let ((t0, v0), (t1, v1)) = (w[0], w[1]);
        if (v0 - half) * (v1 - half) <= 0.0 && v0 != v1 {
            let t = t0 + (half - v0) / (v1 - v0) * (t1 - t0);
            let d = (t - profile[mid].0).abs();
            if best.is_none_or(|b| d < b.1) {
                best = Some((t, d));
            }
        }
    }
    let (t, _) = best?;
    Some([p[0] + t * n[0], p[1] + t * n[1]])
}

/// Total-least-squares line through points: (a point on it, its unit direction).
fn fit_line(pts: &[[f64; 2]]) -> Option<([f64; 2], [f64; 2])> {
    if pts.len() < 3 {
        return None;
    }
    let (mean, [sxx, syy, sxy]) = scatter(pts);
    let angle = 0.5 * (2.0 * sxy).atan2(sxx - syy);
    Some((mean, [angle.cos(), angle.sin()]))
}

/// The mean of points and their scatter (sums of squared deviations: xx, yy, xy).
pub fn scatter(pts: &[[f64; 2]]) -> ([f64; 2], [f64; 3]) {
    let n = pts.len().max(1) as f64;
    let (mx, my) = (
        pts.iter().map(|p| p[0]).sum::<f64>() / n,
        pts.iter().map(|p| p[1]).sum::<f64>() / n,
    );
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for p in pts {
        let (dx, dy) = (p[0] - mx, p[1] - my);
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    ([mx, my], [sxx, syy, sxy])
}

/// A line fit that ignores stray edge points (a miniature's shadow, a speck on the card):
/// fit, drop points further than three median deviations, fit again.
fn fit_robust(pts: &[[f64; 2]]) -> Option<([f64; 2], [f64; 2])> {
    let (p, d) = fit_line(pts)?;
    let dist = |q: &[f64; 2]| ((q[0] - p[0]) * d[1] - (q[1] - p[1]) * d[0]).abs();
    let mut devs: Vec<f64> = pts.iter().map(dist).collect();
    devs.sort_by(f64::total_cmp);
    let limit = (3.0 * devs[devs.len() / 2]).max(0.05);
    let kept: Vec<[f64; 2]> = pts.iter().filter(|q| dist(q) <= limit).copied().collect();
    if kept.len() * 2 < pts.len() {
        Some((p, d))
    } else {
        fit_line(&kept)
    }
}

fn intersect(a: ([f64; 2], [f64; 2]), b: ([f64; 2], [f64; 2])) -> Option<[f64; 2]> {
    let (p, r) = a;
    let (q, s) = b;
    let denom = r[0] * s[1] - r[1] * s[0];
    if denom.abs() < 1e-9 {
        return None;
    }
    let t = ((q[0] - p[0]) * s[1] - (q[1] - p[1]) * s[0]) / denom;
    Some([p[0] + t * r[0], p[1] + t * r[1]])
}

/// Refines the corners of a dark quadrilateral on a light surround (a marker's black
/// border on white paper). `to_ideal` maps image px to the space the lines are fitted in
/// (undistorted px when the lens is known; identity otherwise), so that sides are straight
/// there; the corners come back in that space. `None` when a side cannot be measured.
pub fn refine_quad(
    img: &Grey,
    corners: &[[f64; 2]; 4],
    cells: usize,
    to_ideal: &dyn Fn([f64; 2]) -> [f64; 2],
) -> Option<[[f64; 2]; 4]> {
    // A detector's corners can be a pixel or more off on a small, steep marker, which puts
    // part of the edge outside the search window; a second pass from the first pass's
    // corners (mapped back to the image) centres the window on the edge.
    // (Over one marker side the lens's curvature is negligible, so the first pass fits in
    // image pixels.)
    // A marker's corners can also be further off than the window reaches (3.4 px on a
    // 30 px marker seen steeply: no edges found at all); then the first pass looks once more
    // with a wider window, which the second pass narrows again.
    let start = refine_once(img, corners, cells, &|p| p, 1.0)
        .or_else(|| refine_once(img, corners, cells, &|p| p, 1.6))
        .unwrap_or(*corners);
    refine_once(img, &start, cells, to_ideal, 1.0)
        .or_else(|| refine_once(img, corners, cells, to_ideal, 1.0))
}

fn refine_once(
    img: &Grey,
    corners: &[[f64; 2]; 4],
    cells: usize,
    to_ideal: &dyn Fn([f64; 2]) -> [f64; 2],
    widen: f64,
) -> Option<[[f64; 2]; 4]> {
    let centre = [
        corners.iter().map(|c| c[0]).sum::<f64>() / 4.0,
        corners.iter().map(|c| c[1]).sum::<f64>() / 4.0,
    ];
    let mut lines = Vec::with_capacity(4);
    for k in 0..4 {
        let (a, b) = (corners[k], corners[(k + 1) % 4]);
        let len = (b[0] - a[0]).hypot(b[1] - a[1]);
        let d = [(b[0] - a[0]) / len, (b[1] - a[1]) / len];
        let mut n = [d[1], -d[0]];
        let mid = [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
        if (mid[0] - centre[0]) * n[0] + (mid[1] - centre[1]) * n[1] < 0.0 {
            n = [-n[0], -n[1]];
        }
        // Stay inside the one-cell black border on the inner side: measure the marker's
        // extent across this side (to the opposite side), not along it, which differs
        // under a steep view.
        let (c, e) = (corners[(k + 2) % 4], corners[(k + 3) % 4]);
        let across =
            ((c[0] + e[0]) / 2.0 - mid[0]) * -n[0] + ((c[1] + e[1]) / 2.0 - mid[1]) * -n[1];
        let reach = (widen * 0.7 * across / cells as f64).clamp(1.0, 12.0);
        let samples = (len as usize).clamp(8, 200);
        let pts: Vec<[f64; 2]> = (0..samples)
            .filter_map(|i| {
                let u = 0.15 + 0.7 * i as f64 / (samples - 1) as f64;
                edge_point(
                    img,
                    [a[0] + u * (b[0] - a[0]), a[1] + u * (b[1] - a[1])],
                    n,
                    reach,
                )
            })
            .map(to_ideal)
            .collect();
        if pts.len() * 3 < samples {
            return None;
        }
        lines.push(fit_robust(&pts)?);
    }
    // Corner k is where side k-1 (ending at it) meets side k (starting from it).
    let mut out = [[0.0; 2]; 4];
    for (k, slot) in out.iter_mut().enumerate() {
        *slot = intersect(lines[(k + 3) % 4], lines[k])?;
    }
    Some(out)
}

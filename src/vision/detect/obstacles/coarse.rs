//! Which standard outline a region is, and roughly how it lies: every model of a plausible
//! area is turned through the full circle about the region's centroid and scored by chamfer
//! distance (the mean truncated squared distance of the model's outline to the region's
//! boundary, and of the boundary to the outline), then the best few poses are polished by a
//! pattern search. Works in table mm; the region's boundary comes from the coarse view, so
//! this is good to a pixel or two of it, which is what the edge fit needs to start from.

use super::shape::Shape;
use crate::vision::VisionError;
use opencv::core::{self, Mat, Point, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// A pose of a model: `centre` is where the model's area centroid lands, `theta` its
/// rotation (radians).
#[derive(Clone, Copy, Debug)]
pub struct Pose {
    pub centre: [f64; 2],
    pub theta: f64,
}

/// Distance-to-boundary lookup in table mm over a region's neighbourhood.
pub struct Chamfer {
    dt: Vec<f32>,
    w: usize,
    h: usize,
    /// Table coordinates of grid cell (0, 0) and the grid step (mm); rows go up in y.
    x0: f64,
    y0: f64,
    step: f64,
    /// Boundary points (table mm) that are real edges (not cut by a ship or the view).
    pub boundary: Vec<[f64; 2]>,
    /// Grid cells hidden (a ship) where the model outline cannot be judged.
    hidden: Vec<bool>,
}

/// Squared distances are truncated here (mm).
const CAP: f64 = 5.0;

impl Chamfer {
    /// From a boundary (table mm), the points of it that are real, and a predicate for
    /// hidden table points.
    pub fn new(
        boundary: &[[f64; 2]],
        real: &[bool],
        hidden: &dyn Fn([f64; 2]) -> bool,
        step: f64,
    ) -> Result<Option<Chamfer>, VisionError> {
        let pts: Vec<[f64; 2]> = boundary
            .iter()
            .zip(real)
            .filter(|(_, r)| **r)
            .map(|(p, _)| *p)
            .collect();
        if pts.len() < 8 {
            return Ok(None);
        }
        let margin = 25.0;
        let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for p in boundary {
            x0 = x0.min(p[0]);
            y0 = y0.min(p[1]);
            x1 = x1.max(p[0]);
            y1 = y1.max(p[1]);
        }
        let (x0, y0) = (x0 - margin, y0 - margin);
        let w = ((x1 + margin - x0) / step).ceil() as usize + 1;
        let h = ((y1 + margin - y0) / step).ceil() as usize + 1;
        if w > 2000 || h > 2000 {
            return Ok(None);
        }
        let mut img =
            Mat::new_rows_cols_with_default(h as i32, w as i32, core::CV_8UC1, Scalar::all(255.0))?;
        for p in &pts {
            let (c, r) = (
                ((p[0] - x0) / step).round() as i32,
                ((p[1] - y0) / step).round() as i32,
            );
            if c >= 0 && r >= 0 && (c as usize) < w && (r as usize) < h {
                *img.at_2d_mut::<u8>(r, c)? = 0;
            }
        }
        let mut dist = Mat::default();
        imgproc::distance_transform(
            &img,
            &mut dist,
            imgproc::DIST_L2,
            imgproc::DIST_MASK_PRECISE,
            core::CV_32F,
        )?;
        let mut dt = Vec::with_capacity(w * h);
        for r in 0..h {
            dt.extend(
                dist.at_row::<f32>(r as i32)?
                    .iter()
                    .map(|v| v * step as f32),
            );
        }
        let mut hide = vec![false; w * h];
        for r in 0..h {
            for c in 0..w {
                hide[r * w + c] = hidden([x0 + c as f64 * step, y0 + r as f64 * step]);
            }
        }
        let _ = (Point::new(0, 0), Vector::<i32>::new());
        Ok(Some(Chamfer {
            dt,
            w,
            h,
            x0,
            y0,
            step,
            boundary: pts,
            hidden: hide,
        }))
    }

    /// Distance (mm) from a table point to the boundary; `None` where hidden or off the grid.
    fn distance(&self, p: [f64; 2]) -> Option<f64> {
        let (fc, fr) = ((p[0] - self.x0) / self.step, (p[1] - self.y0) / self.step);
        if !(fc >= 0.0 && fr >= 0.0) {
            return Some(CAP);
        }
        // Both >= 0 here: truncation is the floor, without a library call.
        let (c, r) = (fc as usize, fr as usize);
        if c + 1 >= self.w || r + 1 >= self.h {
            return Some(CAP);
        }
        if self.hidden[r * self.w + c] {
            return None;
        }
        let (ax, ay) = (fc - c as f64, fr - r as f64);
        let at = |cc: usize, rr: usize| f64::from(self.dt[rr * self.w + cc]);
        Some(
            (at(c, r) * (1.0 - ax) + at(c + 1, r) * ax) * (1.0 - ay)
                + (at(c, r + 1) * (1.0 - ax) + at(c + 1, r + 1) * ax) * ay,
        )
    }

    /// Model-to-boundary score of a pose: mean truncated squared distance over the visible
    /// outline samples, and the fraction of them that were visible.
    pub fn forward(&self, shape: &Shape, pose: &Pose, stride: usize) -> (f64, f64) {
        let (s, c) = pose.theta.sin_cos();
        let (mut sum, mut n) = (0.0, 0usize);
        let mut total = 0usize;
        for q in shape.samples.iter().step_by(stride.max(1)) {
            total += 1;
            let p = [
                pose.centre[0] + c * q.p[0] - s * q.p[1],
                pose.centre[1] + s * q.p[0] + c * q.p[1],
            ];
            if let Some(d) = self.distance(p) {
                sum += d.min(CAP).powi(2);
                n += 1;
            }
        }
        let visible = n as f64 / total.max(1) as f64;
        if n == 0 {
            (CAP * CAP, 0.0)
        } else {
            (sum / n as f64, visible)
        }
    }

    /// Boundary-to-model score: mean truncated squared distance of (a subsample of) the real
    /// boundary points to the placed outline.
    pub fn backward(&self, shape: &Shape, pose: &Pose) -> f64 {
        let ring = shape.placed_ring(pose);
        let stride = (self.boundary.len() / 80).max(1);
        let (mut sum, mut n) = (0.0, 0usize);
        for p in self.boundary.iter().step_by(stride) {
            sum += crate::geometry::polygon::ring_distance(*p, &ring)
                .min(CAP)
                .powi(2);
            n += 1;
        }
        sum / n.max(1) as f64
    }

    /// Both ways, the forward part penalised when little of the outline is visible.
    pub fn score(&self, shape: &Shape, pose: &Pose) -> f64 {
        let (f, vis) = self.forward(shape, pose, 1);
        if vis < 0.3 {
            return CAP * CAP;
        }
        0.5 * (f + self.backward(shape, pose))
    }
}

/// The best poses over several shapes: each turned through the full circle about `centre`
/// in 6 degree steps and scored on the distance to the boundary (every other sample); the
/// best `keep` (shape, turn) pairs are polished and judged both ways. Best first:
/// (index into `shapes`, pose, score).
pub fn search(
    ch: &Chamfer,
    shapes: &[&Shape],
    centre: [f64; 2],
    keep: usize,
) -> Vec<(usize, Pose, f64)> {
    let mut sweep: Vec<(usize, Pose, f64)> = Vec::new();
    for (i, shape) in shapes.iter().enumerate() {
        let mut turns: Vec<(Pose, f64)> = (0..60)
            .map(|k| {
                let pose = Pose {
                    centre,
                    theta: f64::from(k) * 6f64.to_radians(),
                };
                (pose, forward_score(ch, shape, &pose, 2))
            })
            .collect();
        turns.sort_by(|a, b| a.1.total_cmp(&b.1));
        // Two distinct turns per shape at most.
        let mut taken: Vec<Pose> = Vec::new();
        for (p, s) in turns {
            let distinct = taken.iter().all(|t| {
                let d = (p.theta - t.theta).rem_euclid(std::f64::consts::TAU);
                d.min(std::f64::consts::TAU - d) > 20f64.to_radians()
            });
            if distinct {
                taken.push(p);
                sweep.push((i, p, s));
            }
            if taken.len() >= 2 {
                break;
            }
        }
    }
    sweep.sort_by(|a, b| a.2.total_cmp(&b.2));
    sweep.truncate(keep);
    let mut out: Vec<(usize, Pose, f64)> = sweep
        .into_iter()
        .map(|(i, p, _)| {
            let pose = polish(ch, shapes[i], p);
            (i, pose, ch.score(shapes[i], &pose))
        })
        .collect();
    out.sort_by(|a, b| a.2.total_cmp(&b.2));
    out
}

fn forward_score(ch: &Chamfer, shape: &Shape, pose: &Pose, stride: usize) -> f64 {
    let (f, vis) = ch.forward(shape, pose, stride);
    if vis < 0.3 { CAP * CAP } else { f }
}

/// Pattern search on the distance of the outline to the boundary.
fn polish(ch: &Chamfer, shape: &Shape, start: Pose) -> Pose {
    let mut best = start;
    let mut score = forward_score(ch, shape, &best, 1);
    let (mut dt, mut da) = (2.0, 3f64.to_radians());
    let mut evals = 0;
    while dt > 0.2 && evals < 120 {
        let mut improved = false;
        for (ddx, ddy, dth) in [
            (dt, 0.0, 0.0),
            (-dt, 0.0, 0.0),
            (0.0, dt, 0.0),
            (0.0, -dt, 0.0),
            (0.0, 0.0, da),
            (0.0, 0.0, -da),
        ] {
            let p = Pose {
                centre: [best.centre[0] + ddx, best.centre[1] + ddy],
                theta: best.theta + dth,
            };
            let s = forward_score(ch, shape, &p, 1);
            evals += 1;
            if s < score {
                score = s;
                best = p;
                improved = true;
            }
        }
        if !improved {
            dt /= 2.0;
            da /= 2.0;
        }
    }
    best
}

//! A standard outline prepared for fitting: centred on its area centroid, with samples
//! every millimetre along it and their outward normals.

use super::coarse::Pose;
use crate::models::ObstacleModel;

#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Point relative to the area centroid (token frame, mm).
    pub p: [f64; 2],
    /// Outward unit normal.
    pub n: [f64; 2],
}

pub struct Shape {
    pub xws: String,
    /// The model's area centroid in its token frame.
    pub centroid: [f64; 2],
    pub area: f64,
    pub perimeter: f64,
    /// The outline relative to the centroid, counter-clockwise.
    pub ring: Vec<[f64; 2]>,
    pub samples: Vec<Sample>,
}

/// Sample spacing along the outline (mm).
const SPACING: f64 = 1.0;

impl Shape {
    pub fn new(model: &ObstacleModel) -> Option<Shape> {
        let ring = &model.outline;
        let n = ring.len();
        if n < 3 {
            return None;
        }
        let (mut a2, mut cx, mut cy) = (0.0f64, 0.0f64, 0.0f64);
        for i in 0..n {
            let (p, q) = (ring[i], ring[(i + 1) % n]);
            let cross = p[0] * q[1] - q[0] * p[1];
            a2 += cross;
            cx += (p[0] + q[0]) * cross;
            cy += (p[1] + q[1]) * cross;
        }
        if a2.abs() < 1e-9 {
            return None;
        }
        let centroid = [cx / (3.0 * a2), cy / (3.0 * a2)];
        // Counter-clockwise: the outward normal of an edge going along d is (d.y, -d.x).
        let sign = a2.signum();
        let rel: Vec<[f64; 2]> = ring
            .iter()
            .map(|p| [p[0] - centroid[0], p[1] - centroid[1]])
            .collect();
        let mut samples = Vec::new();
        for i in 0..n {
            let (a, b) = (rel[i], rel[(i + 1) % n]);
            let len = (b[0] - a[0]).hypot(b[1] - a[1]);
            if len < 1e-9 {
                continue;
            }
            let d = [(b[0] - a[0]) / len, (b[1] - a[1]) / len];
            let normal = [sign * d[1], -sign * d[0]];
            let k = (len / SPACING).round().max(1.0) as usize;
            for j in 0..k {
                let t = (j as f64 + 0.5) / k as f64;
                samples.push(Sample {
                    p: [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])],
                    n: normal,
                });
            }
        }
        Some(Shape {
            xws: model.xws.clone(),
            centroid,
            area: a2.abs() / 2.0,
            perimeter: (0..n)
                .map(|i| {
                    let (p, q) = (ring[i], ring[(i + 1) % n]);
                    (q[0] - p[0]).hypot(q[1] - p[1])
                })
                .sum(),
            ring: rel,
            samples,
        })
    }

    /// The outline placed at a pose (table mm).
    pub fn placed_ring(&self, pose: &Pose) -> Vec<[f64; 2]> {
        let (s, c) = pose.theta.sin_cos();
        self.ring
            .iter()
            .map(|q| {
                [
                    pose.centre[0] + c * q[0] - s * q[1],
                    pose.centre[1] + s * q[0] + c * q[1],
                ]
            })
            .collect()
    }

    /// The centroid pose of a model pose (x, y, rotation in degrees): the inverse of
    /// [`Shape::model_pose`].
    pub fn centroid_pose(&self, x: f64, y: f64, rotation_deg: f64) -> Pose {
        let theta = rotation_deg.to_radians();
        let (s, c) = theta.sin_cos();
        let [mx, my] = self.centroid;
        Pose {
            centre: [x + c * mx - s * my, y + s * mx + c * my],
            theta,
        }
    }

    /// The model pose (x, y, rotation in degrees) of a centroid pose.
    pub fn model_pose(&self, pose: &Pose) -> (f64, f64, f64) {
        let (s, c) = pose.theta.sin_cos();
        let [mx, my] = self.centroid;
        (
            pose.centre[0] - (c * mx - s * my),
            pose.centre[1] - (s * mx + c * my),
            pose.theta.to_degrees().rem_euclid(360.0),
        )
    }
}

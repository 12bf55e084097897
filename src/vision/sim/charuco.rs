//! Calibration views: the spec's ChArUco board held in front of the same camera at varied
//! distances, positions and tilts, as a person calibrating would hold it. The board pose is
//! drawn in the camera frame (so it always fills a useful part of the image) and recorded
//! as board -> camera rvec/tvec.

use super::world::Board;
use crate::vision::aruco::CharucoGeometry;
use crate::vision::camera::Camera;
use crate::vision::rng::Rng;
use nalgebra::{Rotation3, Unit, Vector3};
use serde::{Deserialize, Serialize};

/// A board pose, board frame -> camera frame (OpenCV convention, mm).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoardPose {
    pub rvec: [f64; 3],
    pub tvec: [f64; 3],
}

/// `n` board poses for `camera`, each with the whole board inside the image.
pub fn board_poses(
    seed: u64,
    camera: &Camera,
    geometry: &CharucoGeometry,
    n: usize,
) -> Vec<BoardPose> {
    let mut rng = Rng::stream(seed, "charuco");
    let (w, h) = (f64::from(camera.width()), f64::from(camera.height()));
    let (bw, bh) = (
        geometry.squares_x as f64 * geometry.square_mm,
        geometry.squares_y as f64 * geometry.square_mm,
    );
    let cam_only = Camera {
        rvec: [0.0; 3],
        tvec: [0.0; 3],
        ..camera.clone()
    };
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < n && tries < 10_000 {
        tries += 1;
        // Board width as a fraction of the image width.
        let frac = rng.range(0.35, 0.6);
        let depth = camera.fx() * bw / (frac * w);
        let (u, v) = (rng.range(0.2, 0.8) * w, rng.range(0.2, 0.8) * h);
        let ray = cam_only.ray(u, v);
        let centre = ray.dir * (depth / ray.dir.z);
        let spin = rng.range(-std::f64::consts::PI, std::f64::consts::PI);
        let tilt = rng.range(10.0, 40.0).to_radians();
        let tilt_axis = rng.range(0.0, std::f64::consts::TAU);
        let r = Rotation3::from_axis_angle(
            &Unit::new_normalize(Vector3::new(tilt_axis.cos(), tilt_axis.sin(), 0.0)),
            tilt,
        ) * Rotation3::from_axis_angle(&Vector3::z_axis(), spin);
        let t = centre - r * Vector3::new(bw / 2.0, bh / 2.0, 0.0);
        let fits = [[0.0, 0.0], [bw, 0.0], [bw, bh], [0.0, bh]]
            .iter()
            .all(|c| {
                let p = r * Vector3::new(c[0], c[1], 0.0) + t;
                match cam_only.project([p.x, p.y, p.z]) {
                    Some([pu, pv]) => {
                        pu > 0.03 * w && pu < 0.97 * w && pv > 0.03 * h && pv < 0.97 * h
                    }
                    None => false,
                }
            });
        if fits {
            let rv = r.scaled_axis();
            out.push(BoardPose {
                rvec: [rv.x, rv.y, rv.z],
                tvec: [t.x, t.y, t.z],
            });
        }
    }
    out
}

/// The board placed in the table frame for rendering.
pub fn board_in_world(camera: &Camera, pose: &BoardPose, geometry: CharucoGeometry) -> Board {
    let rc = camera.rotation();
    let tc = Vector3::from(camera.tvec);
    let rb = Rotation3::from_scaled_axis(Vector3::from(pose.rvec));
    let tb = Vector3::from(pose.tvec);
    // camera -> table: X = Rc^T (Xc - tc)
    let origin = rc.transpose() * (tb - tc);
    let ex = rc.transpose() * (rb * Vector3::x());
    let ey = rc.transpose() * (rb * Vector3::y());
    Board {
        geometry,
        origin,
        ex,
        ey,
        normal: ex.cross(&ey),
        margin: 12.0,
    }
}

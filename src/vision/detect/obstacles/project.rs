//! Table points (z = 0 or any height) to frame pixels with the rotation computed once: the
//! same model as [`Camera::project`], which recomputes it on every call.

use crate::vision::Camera;
use nalgebra::{Matrix3, Vector3};

pub struct Projector<'a> {
    camera: &'a Camera,
    r: Matrix3<f64>,
    t: Vector3<f64>,
}

impl<'a> Projector<'a> {
    pub fn new(camera: &'a Camera) -> Projector<'a> {
        Projector {
            camera,
            r: camera.rotation(),
            t: Vector3::from(camera.tvec),
        }
    }

    pub fn project(&self, p: [f64; 3]) -> Option<[f64; 2]> {
        let c = self.r * Vector3::from(p) + self.t;
        if c.z <= 1e-9 {
            return None;
        }
        let cam = self.camera;
        let (xd, yd) = cam.distort(c.x / c.z, c.y / c.z);
        let out = [cam.fx() * xd + cam.cx(), cam.fy() * yd + cam.cy()];
        (out[0].is_finite() && out[1].is_finite()).then_some(out)
    }
}

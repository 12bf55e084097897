//! The camera model every vision part shares: OpenCV's pinhole with the five-term
//! distortion (k1, k2, p1, p2, k3) and a pose from the table frame to the camera frame
//! (spec sections 1 and 6). The simulator needs both directions: `project` for the truth
//! (where a table point lands in the image) and `ray` for rendering (which table points a
//! pixel sees), so the inverse of the distortion is computed here exactly (Newton), not
//! approximated.

use super::rng::Rng;
use nalgebra::{Matrix3, Rotation3, Vector3};
use serde::{Deserialize, Serialize};

/// A calibrated camera looking at the table. `rvec`/`tvec` map table mm to camera mm:
/// X_cam = R(rvec) * X_table + tvec (OpenCV convention).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Camera {
    pub image_size: [u32; 2],
    pub camera_matrix: [[f64; 3]; 3],
    pub distortion: [f64; 5],
    pub rvec: [f64; 3],
    pub tvec: [f64; 3],
}

/// A viewing ray in the table frame: `origin + t * dir`, t > 0, `dir` of unit length.
#[derive(Clone, Copy, Debug)]
pub struct Ray {
    pub origin: Vector3<f64>,
    pub dir: Vector3<f64>,
}

/// The image resolutions the simulator offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    Hd1080,
    Uhd4k,
    /// Any size; tests use small frames to stay quick in debug builds.
    Custom(u32, u32),
}

impl Resolution {
    pub fn size(self) -> [u32; 2] {
        match self {
            Resolution::Hd1080 => [1920, 1080],
            Resolution::Uhd4k => [3840, 2160],
            Resolution::Custom(w, h) => [w, h],
        }
    }
}

impl Camera {
    pub fn fx(&self) -> f64 {
        self.camera_matrix[0][0]
    }
    pub fn fy(&self) -> f64 {
        self.camera_matrix[1][1]
    }
    pub fn cx(&self) -> f64 {
        self.camera_matrix[0][2]
    }
    pub fn cy(&self) -> f64 {
        self.camera_matrix[1][2]
    }
    pub fn width(&self) -> u32 {
        self.image_size[0]
    }
    pub fn height(&self) -> u32 {
        self.image_size[1]
    }

    /// The rotation table -> camera.
    pub fn rotation(&self) -> Matrix3<f64> {
        let v = Vector3::from(self.rvec);
        Rotation3::from_scaled_axis(v).into_inner()
    }

    /// The camera centre in the table frame.
    pub fn centre(&self) -> Vector3<f64> {
        -(self.rotation().transpose() * Vector3::from(self.tvec))
    }

    /// Table point to camera frame.
    pub fn to_camera(&self, p: Vector3<f64>) -> Vector3<f64> {
        self.rotation() * p + Vector3::from(self.tvec)
    }

    /// Applies the distortion to normalised image coordinates (OpenCV's model).
    pub fn distort(&self, x: f64, y: f64) -> (f64, f64) {
        let [k1, k2, p1, p2, k3] = self.distortion;
        let r2 = x * x + y * y;
        let radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3));
        (
            x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x),
            y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y,
        )
    }

    /// Inverts [`Camera::distort`] by Newton's method with the analytic Jacobian; converges
    /// to 1e-12 in a few steps for any distortion a real lens has inside its image.
    pub fn undistort(&self, xd: f64, yd: f64) -> (f64, f64) {
        let [k1, k2, p1, p2, k3] = self.distortion;
        let (mut x, mut y) = (xd, yd);
        for _ in 0..20 {
            let r2 = x * x + y * y;
            let radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3));
            let dradial = k1 + r2 * (2.0 * k2 + 3.0 * k3 * r2); // d radial / d r2
            let fx = x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x) - xd;
            let fy = y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y - yd;
            let a = radial + x * dradial * 2.0 * x + 2.0 * p1 * y + 6.0 * p2 * x;
            let b = x * dradial * 2.0 * y + 2.0 * p1 * x + 2.0 * p2 * y;
            let c = y * dradial * 2.0 * x + 2.0 * p1 * x + 2.0 * p2 * y;
            let d = radial + y * dradial * 2.0 * y + 6.0 * p1 * y + 2.0 * p2 * x;
            let det = a * d - b * c;
            if det.abs() < 1e-12 {
                break;
            }
            let dx = (d * fx - b * fy) / det;
            let dy = (a * fy - c * fx) / det;
            x -= dx;
            y -= dy;
            if dx.abs() + dy.abs() < 1e-14 {
                break;
            }
        }
        (x, y)
    }

    /// Where a table point (mm) lands in the image (pixels, OpenCV convention); `None`
    /// behind the camera.
    pub fn project(&self, p: [f64; 3]) -> Option<[f64; 2]> {
        self.image_point(self.to_camera(Vector3::from(p)))
    }

    /// A point in the camera frame to pixels (through the lens); `None` behind the camera.
    fn image_point(&self, c: Vector3<f64>) -> Option<[f64; 2]> {
        if c.z <= 1e-9 {
            return None;
        }
        let (xd, yd) = self.distort(c.x / c.z, c.y / c.z);
        Some([self.fx() * xd + self.cx(), self.fy() * yd + self.cy()])
    }

    /// Projects many points with the rotation computed once ([`Camera::project`] computes
    /// it, with a sine and a cosine, on every call; the base fit projects thousands of
    /// points per frame).
    pub fn point_projector(&self) -> PointProjector<'_> {
        PointProjector {
            camera: self,
            r: self.rotation(),
            t: Vector3::from(self.tvec),
        }
    }

    /// The viewing ray through image point (u, v) in the table frame.
    pub fn ray(&self, u: f64, v: f64) -> Ray {
        let (x, y) = self.undistort((u - self.cx()) / self.fx(), (v - self.cy()) / self.fy());
        let rt = self.rotation().transpose();
        Ray {
            origin: self.centre(),
            dir: (rt * Vector3::new(x, y, 1.0)).normalize(),
        }
    }

    /// Precomputes what rendering needs per sample.
    pub fn ray_caster(&self) -> RayCaster {
        RayCaster {
            camera: self.clone(),
            rt: self.rotation().transpose(),
            origin: self.centre(),
        }
    }

    /// A random but plausible camera over the table for `seed`: 0.9-1.4 m above the mat,
    /// tilted up to 25 degrees, any yaw, aimed near the mat's centre, with the focal length
    /// chosen so that everything in `must_see` (table mm, z = 0) is inside the image with a
    /// margin. A 3 ft mat plus its marker cards is 1.1 m wide, so from 0.9-1.4 m this needs a
    /// wide lens (fx about 0.45-0.75 x width), as real table cameras use.
    pub fn random(seed: u64, resolution: Resolution, must_see: &[[f64; 2]]) -> Camera {
        let [w, h] = resolution.size();
        let (wf, hf) = (f64::from(w), f64::from(h));
        let mut rng = Rng::stream(seed, "camera");
        let (mut cx_t, mut cy_t) = (0.0, 0.0);
        for p in must_see {
            cx_t += p[0] / must_see.len() as f64;
            cy_t += p[1] / must_see.len() as f64;
        }
        loop {
            let height = rng.range(900.0, 1400.0);
            let tilt = rng.range(0.0, 25.0).to_radians();
            let tilt_dir = rng.range(0.0, std::f64::consts::TAU);
            let yaw = rng.range(0.0, std::f64::consts::TAU);
            let target = Vector3::new(
                cx_t + rng.range(-50.0, 50.0),
                cy_t + rng.range(-50.0, 50.0),
                0.0,
            );
            // Axis of a nadir camera with image x along the yaw direction, then tilted
            // about a horizontal axis in the direction tilt_dir.
            let z0 = Vector3::new(0.0, 0.0, -1.0);
            let x0 = Vector3::new(yaw.cos(), yaw.sin(), 0.0);
            let axis = Vector3::new(tilt_dir.cos(), tilt_dir.sin(), 0.0);
            let tilt_rot = Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), tilt);
            let zc = tilt_rot * z0;
            let xc = tilt_rot * x0;
            let yc = zc.cross(&xc);
            let dist = height / zc.z.abs();
            let centre = target - zc * dist;
            let r_cw = Matrix3::from_columns(&[xc, yc, zc]);
            let r_wc = r_cw.transpose();
            let tvec = -(r_wc * centre);
            let rvec = Rotation3::from_matrix_unchecked(r_wc).scaled_axis();
            let cx = wf / 2.0 + rng.range(-0.02, 0.02) * wf;
            let cy = hf / 2.0 + rng.range(-0.02, 0.02) * hf;
            let aspect = 1.0 + rng.range(-0.003, 0.003);
            let k1 = rng.range(-0.12, 0.06);
            let k2 = rng.range(-0.04, 0.06);
            let p1 = rng.range(-0.0015, 0.0015);
            let p2 = rng.range(-0.0015, 0.0015);
            let k3 = rng.range(-0.01, 0.01);
            let mut cam = Camera {
                image_size: [w, h],
                camera_matrix: [[1.0, 0.0, cx], [0.0, aspect, cy], [0.0, 0.0, 1.0]],
                distortion: [k1, k2, p1, p2, k3],
                rvec: [rvec.x, rvec.y, rvec.z],
                tvec: [tvec.x, tvec.y, tvec.z],
            };
            // Largest focal length that keeps everything inside with a 3 % margin, found by
            // shrinking until all points fit (distortion makes this non-linear).
            let mut f = 1.3 * wf;
            let fits = |cam: &Camera| {
                must_see
                    .iter()
                    .all(|p| match cam.project([p[0], p[1], 0.0]) {
                        Some([u, v]) => {
                            u > 0.03 * wf && u < 0.97 * wf && v > 0.03 * hf && v < 0.97 * hf
                        }
                        None => false,
                    })
            };
            while f > 0.4 * wf {
                cam.camera_matrix[0][0] = f;
                cam.camera_matrix[1][1] = f * aspect;
                if fits(&cam) {
                    break;
                }
                f *= 0.98;
            }
            if f > 0.45 * wf && fits(&cam) && cam.distortion_is_monotonic() {
                return cam;
            }
        }
    }

    /// True when the distortion maps the image's radius range one-to-one, so every pixel has
    /// exactly one ray (strong k1/k2 combinations fold over at the corners).
    pub fn distortion_is_monotonic(&self) -> bool {
        let rmax = {
            let corners = [
                (0.0, 0.0),
                (f64::from(self.width()), 0.0),
                (0.0, f64::from(self.height())),
                (f64::from(self.width()), f64::from(self.height())),
            ];
            corners
                .iter()
                .map(|(u, v)| {
                    let x = (u - self.cx()) / self.fx();
                    let y = (v - self.cy()) / self.fy();
                    (x * x + y * y).sqrt()
                })
                .fold(0.0, f64::max)
                * 1.3
        };
        let [k1, k2, _, _, k3] = self.distortion;
        let mut prev = 0.0;
        for i in 1..=200 {
            let r = rmax * f64::from(i) / 200.0;
            let r2 = r * r;
            let rd = r * (1.0 + r2 * (k1 + r2 * (k2 + r2 * k3)));
            if rd <= prev {
                return false;
            }
            prev = rd;
        }
        true
    }
}

/// A camera with its per-ray constants precomputed, for the render loop.
#[derive(Clone, Debug)]
pub struct RayCaster {
    camera: Camera,
    rt: Matrix3<f64>,
    origin: Vector3<f64>,
}

impl RayCaster {
    pub fn ray(&self, u: f64, v: f64) -> Ray {
        let c = &self.camera;
        let (x, y) = c.undistort((u - c.cx()) / c.fx(), (v - c.cy()) / c.fy());
        Ray {
            origin: self.origin,
            dir: (self.rt * Vector3::new(x, y, 1.0)).normalize(),
        }
    }
}

/// [`Camera::project`] with the camera's rotation computed once (see
/// [`Camera::point_projector`]).
pub struct PointProjector<'a> {
    camera: &'a Camera,
    r: Matrix3<f64>,
    t: Vector3<f64>,
}

impl PointProjector<'_> {
    /// The same model and numbers as [`Camera::project`]; `None` also where the result is
    /// not finite.
    pub fn project(&self, p: [f64; 3]) -> Option<[f64; 2]> {
        self.camera
            .image_point(self.r * Vector3::from(p) + self.t)
            .filter(|out| out[0].is_finite() && out[1].is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mat_region() -> Vec<[f64; 2]> {
        vec![
            [-90.0, -90.0],
            [1004.4, -90.0],
            [1004.4, 1004.4],
            [-90.0, 1004.4],
        ]
    }

    #[test]
    fn ray_and_project_are_inverse() {
        for seed in 0..20 {
            let cam = Camera::random(seed, Resolution::Hd1080, &mat_region());
            let rc = cam.ray_caster();
            for &(u, v) in &[(0.0, 0.0), (960.0, 540.0), (1919.0, 1079.0), (100.0, 900.0)] {
                let r = rc.ray(u, v);
                let t = -r.origin.z / r.dir.z;
                let p = r.origin + r.dir * t;
                let back = cam.project([p.x, p.y, p.z]).expect("in front");
                assert!(
                    (back[0] - u).abs() < 1e-6 && (back[1] - v).abs() < 1e-6,
                    "seed {seed}: {u},{v} -> {back:?}"
                );
            }
        }
    }

    /// The detector's fits project through the precomputed rotation and the obstacle
    /// search through `project`'s: the two must give the same pixels, to the bit.
    #[test]
    fn point_projector_projects_as_the_camera_does() {
        for seed in 0..10 {
            let cam = Camera::random(seed, Resolution::Hd1080, &mat_region());
            let proj = cam.point_projector();
            for i in 0..50 {
                let p = [
                    f64::from(i) * 19.3 - 40.0,
                    f64::from(i * 7 % 50) * 18.1,
                    f64::from(i % 4),
                ];
                assert_eq!(proj.project(p), cam.project(p), "seed {seed}: {p:?}");
            }
            // Behind the camera: neither projects.
            let c = cam.centre();
            let behind = [c.x, c.y, c.z + 100.0];
            assert_eq!(proj.project(behind), None);
            assert_eq!(cam.project(behind), None);
        }
    }

    #[test]
    fn random_cameras_are_plausible() {
        for seed in 0..30 {
            let cam = Camera::random(seed, Resolution::Uhd4k, &mat_region());
            let c = cam.centre();
            assert!(c.z > 850.0 && c.z < 1600.0, "seed {seed}: height {}", c.z);
            let f = cam.fx() / 3840.0;
            assert!((0.45..1.3).contains(&f), "seed {seed}: fx/w {f}");
            let zc = cam.rotation().transpose() * Vector3::new(0.0, 0.0, 1.0);
            let tilt = (-zc.z).acos().to_degrees();
            assert!(tilt <= 25.0 + 1e-9, "seed {seed}: tilt {tilt}");
        }
    }
}

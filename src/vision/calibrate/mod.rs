//! Calibration solving (issue 4): camera intrinsics from ChArUco views, the table pose from
//! the four mat markers, and the plots that show a user where the calibration is weak. The
//! files these produce are `crate::calibration`'s plain types.

pub mod camera;
pub mod check;
pub mod plots;
pub mod projector;
pub mod scale;
pub mod table;

use super::Camera;
use crate::calibration::{CameraFile, TableFile};

/// The full camera model from the two calibration files, when the table was solved with
/// intrinsics.
pub fn camera_model(camera: &CameraFile, table: &TableFile) -> Option<Camera> {
    Some(Camera {
        image_size: camera.image_size,
        camera_matrix: camera.camera_matrix,
        distortion: camera.distortion,
        rvec: table.rvec?,
        tvec: table.tvec?,
    })
}

/// Where an image point meets the plane z = `z_mm` of the table frame.
pub fn image_to_table(camera: &Camera, px: [f64; 2], z_mm: f64) -> Option<[f64; 2]> {
    let ray = camera.ray(px[0], px[1]);
    if ray.dir.z.abs() < 1e-12 {
        return None;
    }
    let t = (z_mm - ray.origin.z) / ray.dir.z;
    if t <= 0.0 {
        return None;
    }
    let p = ray.origin + ray.dir * t;
    Some([p.x, p.y])
}

/// Time stamps for the `created` field of calibration files (they live in `clock` so that
/// the judge report has them without the vision feature).
pub use crate::clock::{rfc3339, timestamp};

/// How far calibrated table points land from the truth: table points on a grid over the
/// play area are imaged by the `truth` camera, then mapped back to the table through the
/// calibration. Returns (RMS, max) in mm.
pub fn table_error_mm(
    truth: &Camera,
    camera: Option<&CameraFile>,
    table: &TableFile,
    play: [f64; 2],
) -> Option<(f64, f64)> {
    let model = camera.and_then(|c| camera_model(c, table));
    let inverse = table.homography.map(|h| {
        let m = nalgebra::Matrix3::from_row_slice(&h.concat());
        m.try_inverse().unwrap_or(nalgebra::Matrix3::zeros())
    });
    let (mut sq, mut max, mut n) = (0.0, 0.0f64, 0usize);
    const STEPS: usize = 10;
    for i in 0..=STEPS {
        for j in 0..=STEPS {
            let p = [
                play[0] * i as f64 / STEPS as f64,
                play[1] * j as f64 / STEPS as f64,
            ];
            let px = truth.project([p[0], p[1], 0.0])?;
            let back = match (&model, &inverse) {
                (Some(m), _) => image_to_table(m, px, 0.0)?,
                (None, Some(inv)) => {
                    let v = inv * nalgebra::Vector3::new(px[0], px[1], 1.0);
                    [v.x / v.z, v.y / v.z]
                }
                (None, None) => return None,
            };
            let e = (back[0] - p[0]).hypot(back[1] - p[1]);
            sq += e * e;
            max = max.max(e);
            n += 1;
        }
    }
    Some(((sq / n as f64).sqrt(), max))
}

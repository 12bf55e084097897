//! Calibration solving (issue 4): camera intrinsics from ChArUco views, the table pose from
//! the four mat markers, and the plots that show a user where the calibration is weak. The
//! files these produce are `crate::calibration`'s plain types.

pub mod camera;
pub mod plots;
pub mod projector;
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

/// Now as RFC 3339 UTC, for the `created` field of calibration files.
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    rfc3339(secs)
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (Hinnant's civil-from-days).
pub fn rfc3339(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_798_545_600), "2026-12-29T12:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}

//! How finely a calibrated camera sees the play area: pixels per table mm across it. Ship
//! headings depend on it more than on anything else a user controls (a small base whose
//! side spans under about 30 px has its heading to about a degree only; see
//! `vision::detect::bases`), so `calibrate table` says where the camera sees coarsest.

use crate::geometry::PlayArea;
use crate::vision::Camera;

/// Camera px per table mm at table point `p` on the plane z = `z` (mm), the mean of the
/// two table axes' scales (the camera's tilt makes them differ).
pub fn px_per_mm(camera: &Camera, p: [f64; 2], z: f64) -> Option<f64> {
    let a = camera.project([p[0], p[1], z])?;
    let b = camera.project([p[0] + 1.0, p[1], z])?;
    let d = camera.project([p[0], p[1] + 1.0, z])?;
    Some(((b[0] - a[0]).hypot(b[1] - a[1]) + (d[0] - a[0]).hypot(d[1] - a[1])) / 2.0)
}

/// The coarsest and finest scale over the play area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayAreaScale {
    pub min_px_per_mm: f64,
    /// Where on the play area (table mm) the camera sees coarsest.
    pub coarsest_at: [f64; 2],
    pub max_px_per_mm: f64,
}

/// [`px_per_mm`] over an 11 x 11 grid spanning the play area (edges included) on the plane
/// z = `z` (the base tops); `None` when part of it is behind the camera.
pub fn play_area_scale(camera: &Camera, play: &PlayArea, z: f64) -> Option<PlayAreaScale> {
    const N: usize = 10;
    let mut out: Option<PlayAreaScale> = None;
    for i in 0..=N {
        for j in 0..=N {
            let p = [
                play.width_mm * i as f64 / N as f64,
                play.height_mm * j as f64 / N as f64,
            ];
            let k = px_per_mm(camera, p, z)?;
            let s = out.get_or_insert(PlayAreaScale {
                min_px_per_mm: k,
                coarsest_at: p,
                max_px_per_mm: k,
            });
            if k < s.min_px_per_mm {
                s.min_px_per_mm = k;
                s.coarsest_at = p;
            }
            s.max_px_per_mm = s.max_px_per_mm.max(k);
        }
    }
    out
}

/// Under this many pixels along a small base's side, headings are known to about a degree
/// only (on the four rendered sets of scripts/detect-report.sh, bases with a sigma under
/// 3 mm: 1.5 deg RMS under 30 px per side, 0.1-0.6 deg above; see
/// `vision::detect::bases::quality::resolution_sigma_deg`).
pub const COARSE_SIDE_PX: f64 = 30.0;

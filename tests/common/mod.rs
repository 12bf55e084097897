//! Helpers shared by the integration tests: scenes built in code, rolled through the library.
#![allow(dead_code)]

use hashmark::rules::{RollOptions, RollTemplate, RollVerdict, Side, barrel_roll};
use hashmark::scene::{ObstacleSpec, Quality, ShipSpec};
use hashmark::{BaseSize, Models, Scene, Table};

pub fn scene() -> Scene {
    Scene::from_json(r#"{"format":"hashmark-scene/1"}"#, Models::builtin()).unwrap()
}

pub fn ship(id: &str, size: BaseSize, x: f64, y: f64, heading_deg: f64) -> ShipSpec {
    ShipSpec {
        id: id.into(),
        size,
        x,
        y,
        heading_deg,
        quality: Quality::default(),
    }
}

pub fn polygon_obstacle(id: &str, ring: &[[f64; 2]]) -> ObstacleSpec {
    ObstacleSpec {
        id: id.into(),
        model: None,
        x: None,
        y: None,
        rotation_deg: None,
        polygon: Some(ring.to_vec()),
        quality: Quality::default(),
    }
}

/// An axis-aligned box obstacle [x0, x1] x [y0, y1].
pub fn box_obstacle(id: &str, x0: f64, y0: f64, x1: f64, y1: f64) -> ObstacleSpec {
    polygon_obstacle(id, &[[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
}

pub fn roll_with(scene: &Scene, ship: &str, opts: RollOptions) -> RollVerdict {
    let table = Table::from_scene(scene, Models::builtin()).unwrap();
    barrel_roll(
        &table,
        Models::builtin(),
        ship,
        &[Side::Left, Side::Right],
        &opts,
    )
    .unwrap()
}

pub fn roll(scene: &Scene, ship: &str) -> RollVerdict {
    roll_with(scene, ship, RollOptions::default())
}

pub fn roll_template(scene: &Scene, ship: &str, template: RollTemplate) -> RollVerdict {
    roll_with(
        scene,
        ship,
        RollOptions {
            template,
            ..RollOptions::default()
        },
    )
}

/// The spec's ship-to-table transform, written out independently of the library:
/// c + x * r + y * f with f = (cos h, sin h), r = (sin h, -cos h).
pub fn spec_to_table(cx: f64, cy: f64, heading_deg: f64, x: f64, y: f64) -> (f64, f64) {
    let h = heading_deg.to_radians();
    let (f, r) = ((h.cos(), h.sin()), (h.sin(), -h.cos()));
    (cx + x * r.0 + y * f.0, cy + x * r.1 + y * f.1)
}

pub fn spec_to_ship(cx: f64, cy: f64, heading_deg: f64, px: f64, py: f64) -> (f64, f64) {
    let h = heading_deg.to_radians();
    let (f, r) = ((h.cos(), h.sin()), (h.sin(), -h.cos()));
    let (dx, dy) = (px - cx, py - cy);
    (dx * r.0 + dy * r.1, dx * f.0 + dy * f.1)
}

pub fn wrap180(a: f64) -> f64 {
    let d = a.rem_euclid(360.0);
    if d > 180.0 { d - 360.0 } else { d }
}

/// The demo scene as detection might have written it, in a file: ship `i` gets sigmas
/// and the given confidence (below 0.6 detection doubts it). Keep the directory alive.
pub fn demo_scene_detected(
    confidences: &[(usize, f64)],
) -> (tempfile::TempDir, std::path::PathBuf) {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/scene.json"),
    )
    .expect("demo scene");
    let mut scene: serde_json::Value = serde_json::from_str(&text).expect("json");
    for &(i, confidence) in confidences {
        let ship = &mut scene["ships"][i];
        ship["sigma_mm"] = serde_json::json!(0.5);
        ship["sigma_deg"] = serde_json::json!(0.4);
        ship["confidence"] = serde_json::json!(confidence);
    }
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("scene.json");
    std::fs::write(&path, scene.to_string()).expect("write");
    (dir, path)
}

/// Writes camera.json and table.json for a camera (as `hashmark calibrate` would).
#[cfg(feature = "vision")]
pub fn write_calibration(dir: &std::path::Path, camera: &hashmark::vision::Camera) {
    use hashmark::calibration::files::CalibrationFile;
    use hashmark::calibration::{CameraFile, TableFile};
    let cam = CameraFile {
        format: "hashmark-camera/1".into(),
        image_size: camera.image_size,
        camera_matrix: camera.camera_matrix,
        distortion: camera.distortion,
        rms_px: 0.2,
        views: 12,
        std_dev: None,
        table_uncertainty_mm: Some(0.1),
        created: None,
        board: None,
    };
    let table = TableFile {
        format: "hashmark-table/1".into(),
        image_size: camera.image_size,
        rvec: Some(camera.rvec),
        tvec: Some(camera.tvec),
        homography: None,
        marker_residuals_mm: Default::default(),
        play_area: None,
        mat_markers: None,
        created: None,
    };
    cam.save(&dir.join("camera.json")).expect("camera.json");
    table.save(&dir.join("table.json")).expect("table.json");
}

/// Runs the built `hashmark` binary: (exit code, stdout, stderr).
pub fn hashmark(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hashmark"))
        .args(args)
        .output()
        .expect("run hashmark");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

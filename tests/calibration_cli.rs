//! The calibration commands as a user runs them, on rendered images and a video made from
//! them: files written, plots beside them, and clear one-line refusals.
#![cfg(feature = "vision")]

use hashmark::vision::Resolution;
use hashmark::vision::cv;
use hashmark::vision::sim::{SimOptions, simulate};
use opencv::prelude::*;
use opencv::videoio;
use std::path::Path;
use std::process::{Command, Output};

fn hashmark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hashmark"))
        .args(args)
        .output()
        .unwrap()
}

fn refused(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err:?} lacks {needle:?}");
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn camera_from_a_video_then_table_then_score() {
    let dir = tempfile::tempdir().unwrap();
    let sim = dir.path().join("sim");
    let truth = simulate(
        &SimOptions {
            seed: 3,
            resolution: Resolution::Custom(960, 540),
            frames: None,
            charuco_views: 10,
            supersample: 1,
        },
        &sim,
    )
    .unwrap();
    // A clip of the board being moved: each rendered view held for three frames.
    let video = dir.path().join("board.avi");
    let fourcc = videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').unwrap();
    let mut writer = videoio::VideoWriter::new(
        s(&video),
        fourcc,
        10.0,
        opencv::core::Size::new(960, 540),
        true,
    )
    .unwrap();
    assert!(writer.is_opened().unwrap());
    for v in &truth.charuco.views {
        let img = cv::decode(&std::fs::read(sim.join(&v.file)).unwrap()).unwrap();
        for _ in 0..3 {
            writer.write(&img).unwrap();
        }
    }
    writer.release().unwrap();

    let cal = dir.path().join("cal");
    std::fs::create_dir_all(&cal).unwrap();
    let camera = cal.join("camera.json");
    let out = hashmark(&[
        "calibrate",
        "camera",
        "--video",
        s(&video),
        "--out",
        s(&camera),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("views") && text.contains("RMS"), "{text}");
    // Repeated frames of a held board are near-duplicates.
    assert!(text.contains("nearly the same view as"), "{text}");
    assert!(cal.join("camera-coverage.png").exists() && cal.join("camera-residuals.png").exists());
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&camera).unwrap()).unwrap();
    assert_eq!(file["format"], "hashmark-camera/1");
    assert_eq!(file["board"]["dictionary"], "DICT_5X5_100");
    assert_eq!(file["board"]["squares_x"], 7);
    let fx = file["camera_matrix"][0][0].as_f64().unwrap();
    assert!(
        (fx / truth.camera.camera_matrix[0][0] - 1.0).abs() < 0.01,
        "fx {fx}"
    );

    let table = cal.join("table.json");
    let frame = sim.join(&truth.frames[0].file);
    let out = hashmark(&[
        "calibrate",
        "table",
        "--camera-calibration",
        s(&camera),
        "--image",
        s(&frame),
        "--out",
        s(&table),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("residual").count(), 4, "{text}");
    // How finely the calibrated camera sees the play area, against the true camera's; at
    // 960 x 540 a small base's side spans about 13 px, so the heading warning is given.
    let models = hashmark::Models::builtin();
    let want = hashmark::vision::calibrate::scale::play_area_scale(
        &truth.camera,
        &models.play_areas.standard(),
        models.bases.base_top_height_mm,
    )
    .expect("the play area is in front of the camera");
    let seen: Vec<f64> = text
        .split("play area seen at ")
        .nth(1)
        .and_then(|t| t.split(" px per mm").next())
        .map(|t| t.split('-').filter_map(|v| v.parse().ok()).collect())
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(seen.len(), 2, "{text}");
    for (got, want) in seen.iter().zip([want.min_px_per_mm, want.max_px_per_mm]) {
        // (Printed to 0.01 px per mm.)
        assert!(
            (got - want).abs() < 0.02 * want + 0.005,
            "{got} px per mm, truth {want:.3}: {text}"
        );
    }
    assert!(
        text.contains("ship headings are known to about 1 deg only"),
        "{text}"
    );

    let out = hashmark(&[
        "calibrate",
        "score",
        "--truth",
        s(&sim.join("truth.json")),
        "--camera-calibration",
        s(&camera),
        "--table",
        s(&table),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let rms: f64 = text
        .split("grid over the play area): ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    // 960 x 540 sees about 2 mm per pixel; 1080p meets 0.3 mm (tests/calibration_sim.rs).
    assert!(rms < 0.8, "{text}");

    // Wrong inputs, one line each.
    std::fs::write(
        cal.join("broken.json"),
        "{\"format\": \"hashmark-camera/1\", \"image_size\": [960",
    )
    .unwrap();
    refused(
        &hashmark(&[
            "calibrate",
            "table",
            "--camera-calibration",
            s(&cal.join("broken.json")),
            "--image",
            s(&frame),
            "--out",
            s(&table),
        ]),
        "not valid JSON",
    );
    let other = dir.path().join("other.png");
    let img = cv::decode(&std::fs::read(&frame).unwrap()).unwrap();
    std::fs::write(
        &other,
        cv::encode_png(&cv::downscale(&img, 640).unwrap()).unwrap(),
    )
    .unwrap();
    refused(
        &hashmark(&[
            "calibrate",
            "table",
            "--camera-calibration",
            s(&camera),
            "--image",
            s(&other),
            "--out",
            s(&table),
        ]),
        "calibrate the camera at this resolution",
    );
    std::fs::write(dir.path().join("junk.jpg"), b"not an image").unwrap();
    refused(
        &hashmark(&[
            "calibrate",
            "table",
            "--image",
            s(&dir.path().join("junk.jpg")),
            "--out",
            s(&table),
        ]),
        "is not an image OpenCV can read",
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    refused(
        &hashmark(&[
            "calibrate",
            "camera",
            "--images",
            s(&empty),
            "--out",
            s(&camera),
        ]),
        "no .jpg, .jpeg or .png images",
    );
    refused(
        &hashmark(&["calibrate", "camera", "--camera", "7", "--out", s(&camera)]),
        "cannot open camera 7",
    );
}

/// `calibrate camera --layout` reads the board from the layout file `markers --layout`
/// printed it from, and camera.json records it: the rendered board described at another
/// scale is found and recorded so, another dictionary finds nothing (so the file, not the
/// flags' defaults, was used), and the flags are refused beside it.
#[test]
fn the_camera_takes_its_board_from_a_layout_file() {
    let dir = tempfile::tempdir().unwrap();
    let sim = dir.path().join("sim");
    let truth = simulate(
        &SimOptions {
            seed: 5,
            resolution: Resolution::Custom(960, 540),
            frames: None,
            charuco_views: 5,
            supersample: 1,
        },
        &sim,
    )
    .unwrap();
    let views = dir.path().join("views");
    std::fs::create_dir_all(&views).unwrap();
    for v in &truth.charuco.views {
        let name = Path::new(&v.file).file_name().unwrap();
        std::fs::copy(sim.join(&v.file), views.join(name)).unwrap();
    }
    // The rendered board printed 10 % larger: the same pattern, so the views show it, and
    // intrinsics do not depend on the board's scale.
    let mut layout = hashmark::calibration::Layout::builtin();
    layout.board.square_mm = 33.0;
    layout.board.marker_mm = 24.2;
    let spec = dir.path().join("spec-layout.json");
    std::fs::write(&spec, serde_json::to_string(&layout).unwrap()).unwrap();
    let mut other_layout = layout.clone();
    other_layout.board.dictionary = "DICT_6X6_250".into();
    let other = dir.path().join("other-layout.json");
    std::fs::write(&other, serde_json::to_string(&other_layout).unwrap()).unwrap();
    let camera = dir.path().join("camera.json");
    let run = |layout: &Path, extra: &[&str]| {
        let mut args = vec![
            "calibrate",
            "camera",
            "--images",
            s(&views),
            "--layout",
            s(layout),
            "--out",
            s(&camera),
        ];
        args.extend_from_slice(extra);
        hashmark(&args)
    };

    let out = run(&spec, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The file says which board it was calibrated against.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&camera).unwrap()).unwrap();
    let board: hashmark::calibration::layout::Board =
        serde_json::from_value(file["board"].clone()).expect("a board in camera.json");
    assert_eq!(board, layout.board);
    std::fs::remove_file(&camera).unwrap();

    refused(&run(&other, &[]), "usable board views");
    assert!(!camera.exists());

    let out = run(&spec, &["--squares", "7x5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot be used with"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

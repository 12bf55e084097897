//! The frame check (vision::calibrate::check): a frame must show the mat markers where the
//! calibration puts them. A camera turned by a fraction of a degree after `calibrate table`
//! moves every detected position by millimetres with every sigma still small, so `detect
//! --image` and `judge --image` refuse such a frame; a frame with no mat marker at all (a
//! black frame, a photo of something else) is said to be unchecked.
#![cfg(feature = "vision")]

mod common;

use common::{hashmark, write_calibration};
use hashmark::calibration::Layout;
use hashmark::vision::calibrate::check::{MOVED_PX, TableCheck, check_table};
use hashmark::vision::sim::{SimOptions, Truth, simulate};
use hashmark::vision::{Camera, Resolution, cv};
use nalgebra::{Rotation3, Vector3};
use opencv::core::{CV_8UC3, Mat, Scalar};

fn render(seed: u64) -> (tempfile::TempDir, Truth, Mat, Mat) {
    let dir = tempfile::tempdir().expect("temp dir");
    let truth = simulate(
        &SimOptions {
            seed,
            resolution: Resolution::Hd1080,
            frames: None,
            charuco_views: 0,
            supersample: 1,
        },
        dir.path(),
    )
    .expect("render");
    let read = |name: &str| {
        cv::decode(&std::fs::read(dir.path().join(name)).expect(name)).expect("decode")
    };
    let (frame, background) = (read("frame.jpg"), read("background.jpg"));
    (dir, truth, frame, background)
}

/// The camera turned about its own centre by `deg` about its image's vertical axis (as a
/// camera nudged on its mount).
fn turned(camera: &Camera, deg: f64) -> Camera {
    let r = Rotation3::from_scaled_axis(Vector3::from(camera.rvec));
    let turn = Rotation3::from_axis_angle(&Vector3::y_axis(), deg.to_radians());
    let rvec = (turn * r).scaled_axis();
    let tvec = turn * Vector3::from(camera.tvec);
    Camera {
        rvec: [rvec.x, rvec.y, rvec.z],
        tvec: [tvec.x, tvec.y, tvec.z],
        ..camera.clone()
    }
}

fn offsets(check: &TableCheck) -> Vec<f64> {
    match check {
        TableCheck::Holds { markers } | TableCheck::Moved { markers } => {
            markers.iter().map(|m| m.offset_px).collect()
        }
        TableCheck::Unseen => Vec::new(),
    }
}

#[test]
fn a_moved_camera_is_caught_and_a_still_one_holds() {
    let layout = Layout::builtin();
    let (_dir, truth, frame, background) = render(3);
    // The calibrated camera: all four markers where it puts them, in the frame and in the
    // empty table's frame (another light).
    for (what, img) in [("frame", &frame), ("background", &background)] {
        let check = check_table(img, &truth.camera, &layout).expect("check");
        eprintln!("{what}: {}", check.describe());
        assert!(
            matches!(check, TableCheck::Holds { .. }),
            "{what}: {check:?}"
        );
        let o = offsets(&check);
        assert_eq!(o.len(), 4, "{what}: {check:?}");
        assert!(o.iter().all(|v| *v < 0.3), "{what}: {o:.2?}");
    }
    // Turned by 0.1 deg (about 2 px): every marker moved, and the words say what to do.
    let moved = check_table(&frame, &turned(&truth.camera, 0.1), &layout).expect("check");
    let text = moved.describe();
    eprintln!("turned 0.1 deg: {text}");
    assert!(moved.is_moved(), "{moved:?}");
    assert!(offsets(&moved).iter().all(|v| *v > MOVED_PX));
    assert!(
        text.contains("moved since calibration")
            && text.contains("calibrate table")
            && !text.contains('\n'),
        "{text}"
    );
    // Turned by 3 deg (some 60 px, beyond the window about its calibrated place each
    // marker is first looked for in): the whole frame is searched, and the camera has
    // still moved.
    let far = check_table(&frame, &turned(&truth.camera, 3.0), &layout).expect("check");
    eprintln!("turned 3 deg: {}", far.describe());
    assert!(far.is_moved(), "{far:?}");
    assert!(offsets(&far).iter().all(|v| *v > 20.0), "{far:?}");
    // Turned by 0.01 deg (a fifth of a pixel): within what the corners are found to.
    let still = check_table(&frame, &turned(&truth.camera, 0.01), &layout).expect("check");
    eprintln!("turned 0.01 deg: {}", still.describe());
    assert!(matches!(still, TableCheck::Holds { .. }), "{still:?}");
    // A black frame shows no marker: unchecked, said so.
    let black =
        Mat::new_rows_cols_with_default(1080, 1920, CV_8UC3, Scalar::all(0.0)).expect("mat");
    let none = check_table(&black, &truth.camera, &layout).expect("check");
    assert_eq!(none, TableCheck::Unseen);
    assert!(
        none.describe().contains("no mat marker"),
        "{}",
        none.describe()
    );
}

#[test]
fn detect_and_judge_refuse_a_frame_the_camera_moved_for() {
    let (dir, truth, _, _) = render(4);
    let d = dir.path();
    let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let frame = s(&d.join("frame.jpg"));
    let (good, stale) = (d.join("good"), d.join("stale"));
    for (cal, camera) in [
        (&good, truth.camera.clone()),
        (&stale, turned(&truth.camera, 0.1)),
    ] {
        std::fs::create_dir_all(cal).expect("dir");
        write_calibration(cal, &camera);
    }
    // Good: the table, and the check's line under it.
    let (code, out, err) = hashmark(&["detect", "--calibration", &s(&good), "--image", &frame]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.starts_with("mat markers where the calibration puts them")),
        "{out}"
    );
    // Stale: one line, exit 2, nothing on stdout.
    let (code, out, err) = hashmark(&["detect", "--calibration", &s(&stale), "--image", &frame]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.is_empty()
            && err.trim().lines().count() == 1
            && err.contains("moved since calibration")
            && err.contains("--skip-table-check"),
        "{err}"
    );
    // Asked to go on: the scene, and a warning on stderr.
    let (code, out, err) = hashmark(&[
        "detect",
        "--calibration",
        &s(&stale),
        "--image",
        &frame,
        "--json",
        "--skip-table-check",
    ]);
    assert_eq!(code, 0, "{err}");
    let scene: serde_json::Value = serde_json::from_str(&out).expect("a scene");
    assert_eq!(scene["format"], "hashmark-scene/1");
    assert!(
        err.contains("warning: the camera or the mat has moved"),
        "{err}"
    );
    // The judge refuses too, and writes nothing.
    let report = d.join("report");
    let (code, _, err) = hashmark(&[
        "judge",
        "--image",
        &frame,
        "--calibration",
        &s(&stale),
        "--ship",
        "s1",
        "--out",
        &s(&report),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("moved since calibration"), "{err}");
    assert!(!report.exists());
    // With the good calibration the report records the check.
    let (code, out, err) = hashmark(&[
        "judge",
        "--image",
        &frame,
        "--calibration",
        &s(&good),
        "--ship",
        "s1",
        "--out",
        &s(&report),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("mat markers where the calibration puts them"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).expect("report"))
            .expect("json");
    assert!(
        json["calibration"]["frame_check"]
            .as_str()
            .is_some_and(|t| t.starts_with("mat markers where")),
        "{json}"
    );
}

/// Streams check each full search's frame: a stale calibration is `Moved` from the first
/// frame on and stays so over the re-fits; `detect --video` writes the check into the JSON
/// line of every full search.
#[test]
fn streams_say_when_the_camera_moved() {
    use hashmark::models::Models;
    use hashmark::vision::detect::stream::Stream;
    use hashmark::vision::detect::{Calibrated, Detector};
    let (dir, truth, frame, _) = render(5);
    let models = Models::builtin();
    let stream_of = |camera: Camera| {
        let cal = Calibrated {
            camera,
            play_area: truth.scene.play_area,
            layout: hashmark::calibration::Layout::builtin(),
            sigma_mm: 0.05,
        };
        Stream::new(Detector::new(cal, models).expect("detector"), 3)
    };
    for (camera, moved) in [
        (truth.camera.clone(), false),
        (turned(&truth.camera, 0.1), true),
    ] {
        let mut stream = stream_of(camera);
        for k in 0..4 {
            let out = stream.push(&frame).expect("frame");
            assert_eq!(out.full, k % 3 == 0);
            let check = out
                .table_check
                .expect("a check from the first full search on");
            assert_eq!(check.is_moved(), moved, "frame {k}: {check:?}");
            if !moved {
                assert!(matches!(check, TableCheck::Holds { .. }), "{check:?}");
            }
        }
    }
    // The command: three frames of the table as MJPG, read with a stale calibration.
    let d = dir.path();
    let avi = d.join("table.avi").to_string_lossy().into_owned();
    let fourcc = opencv::videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').expect("fourcc");
    let mut writer =
        opencv::videoio::VideoWriter::new(&avi, fourcc, 10.0, (1920, 1080).into(), true)
            .expect("writer");
    for _ in 0..3 {
        opencv::prelude::VideoWriterTrait::write(&mut writer, &frame).expect("frame");
    }
    opencv::prelude::VideoWriterTrait::release(&mut writer).expect("release");
    let stale = d.join("stale");
    std::fs::create_dir_all(&stale).expect("dir");
    write_calibration(&stale, &turned(&truth.camera, 0.1));
    let (code, out, err) = hashmark(&[
        "detect",
        "--calibration",
        &stale.to_string_lossy(),
        "--video",
        &avi,
        "--full-every",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 3);
    for l in &lines {
        let full = l["full_search"].as_bool().expect("full_search");
        assert_eq!(l.get("table_check").is_some(), full, "{l}");
        if full {
            assert_eq!(l["table_check"]["state"], "moved", "{l}");
        }
    }
}

//! Ship detection on a rendered 1080p table (seed 2: five small and medium ships, five
//! obstacles, a busy mat), scored against the truth with the library's own scoring; the
//! stream keeps ids and poses over repeated frames; bad frames give an empty scene or one
//! clear error, never a panic. Thresholds are what the detector measurably does today
//! (see the issue note), not the issue's targets.
#![cfg(feature = "vision")]

mod common;

use hashmark::BaseSize;
use hashmark::judge::agreement::{Call, agreement};
use hashmark::models::Models;
use hashmark::rules::{RollOptions, Side, Table, barrel_roll};
use hashmark::vision::detect::bases::refit_bases;
use hashmark::vision::detect::score::{ShipMatch, score};
use hashmark::vision::detect::stream::Stream;
use hashmark::vision::detect::{Calibrated, Detector};
use hashmark::vision::sim::camera_change::CameraChange;
use hashmark::vision::sim::{SimOptions, Truth, simulate};
use hashmark::vision::{Resolution, cv};
use opencv::core::{CV_8UC3, Mat, Scalar};

fn render(seed: u64) -> (tempfile::TempDir, Truth, Mat) {
    render_at(seed, Resolution::Hd1080)
}

fn render_at(seed: u64, resolution: Resolution) -> (tempfile::TempDir, Truth, Mat) {
    let dir = tempfile::tempdir().expect("temp dir");
    let truth = simulate(
        &SimOptions {
            seed,
            resolution,
            frames: None,
            charuco_views: 0,
            supersample: 3,
        },
        dir.path(),
    )
    .expect("render");
    let bytes = std::fs::read(dir.path().join("frame.jpg")).expect("frame");
    let frame = cv::decode(&bytes).expect("decode");
    (dir, truth, frame)
}

/// A rendered table and what detection finds in it, with the true camera.
fn detected(seed: u64) -> (Truth, hashmark::scene::Scene) {
    detected_at(seed, Resolution::Hd1080)
}

fn detected_at(seed: u64, resolution: Resolution) -> (Truth, hashmark::scene::Scene) {
    let (_dir, truth, frame) = render_at(seed, resolution);
    let det = Detector::new(calibrated(&truth), Models::builtin()).expect("detector");
    let scene = det.detect(&frame).expect("detect");
    (truth, scene)
}

/// A rendered 1080p table and what detection finds in it through the camera as calibrated
/// from its own rendered views and mat markers (a fixture in tests/fixtures, made by
/// scripts/detect-report.sh), where the true camera does not show what a test is about.
fn detected_through(seed: u64, fixture: &str) -> (Truth, hashmark::scene::Scene) {
    let models = Models::builtin();
    let (_dir, truth, frame) = render(seed);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixture);
    let cal = Calibrated::load(&dir).expect("fixture calibration");
    let det = Detector::new(cal, models).expect("detector");
    let scene = det.detect(&frame).expect("detect");
    (truth, scene)
}

/// How detection did on the true ship `id` (printed, to read a failure by); panics where
/// it was missed.
fn found_ship(truth: &Truth, scene: &hashmark::scene::Scene, id: &str) -> ShipMatch {
    let m = score(&truth.scene, scene, Models::builtin())
        .ships
        .into_iter()
        .find(|m| m.id == id);
    eprintln!("{m:?}");
    m.unwrap_or_else(|| panic!("{id} not found"))
}

/// The ship of `scene` nearest (x, y) (table mm).
fn nearest_ship(
    scene: &hashmark::scene::Scene,
    x: f64,
    y: f64,
) -> Option<&hashmark::scene::ShipSpec> {
    let d = |s: &&hashmark::scene::ShipSpec| (s.x - x).hypot(s.y - y);
    scene.ships.iter().min_by(|a, b| d(a).total_cmp(&d(b)))
}

/// The true ship `id` of a rendered table.
fn truth_ship<'a>(truth: &'a Truth, id: &str) -> &'a hashmark::scene::ShipSpec {
    truth
        .scene
        .ships
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("the rendered scene has no {id}: it changed"))
}

/// A scene built in code, rendered at 1080p from seed's camera and detected with that
/// camera (no calibration from images).
fn built_and_detected(scene: &hashmark::scene::Scene, seed: u64) -> hashmark::scene::Scene {
    use hashmark::vision::sim::{camera_for, photograph, world::World};
    let models = Models::builtin();
    let camera = camera_for(seed, Resolution::Hd1080, [914.4, 914.4]);
    let world = World::build(scene, seed, seed, models).expect("world");
    let jpg = photograph(&world, &camera, seed, 1).expect("render");
    let frame = cv::decode(&jpg).expect("decode");
    let calibrated = Calibrated {
        camera,
        play_area: scene.play_area,
        layout: hashmark::calibration::Layout::builtin(),
        sigma_mm: 0.05,
    };
    Detector::new(calibrated, models)
        .expect("detector")
        .detect(&frame)
        .expect("detect")
}

fn calibrated(truth: &Truth) -> Calibrated {
    Calibrated {
        camera: truth.camera.clone(),
        play_area: truth.scene.play_area,
        layout: hashmark::calibration::Layout::builtin(),
        sigma_mm: 0.05,
    }
}

#[test]
fn ships_on_a_rendered_table() {
    let models = Models::builtin();
    let (_dir, truth, frame) = render(2);
    let det = Detector::new(calibrated(&truth), models).expect("detector");
    let scene = det.detect(&frame).expect("detect");
    let s = score(&truth.scene, &scene, models);
    let mut errors: Vec<f64> = s.ships.iter().map(|m| m.centre_error_mm).collect();
    errors.sort_by(f64::total_cmp);
    eprintln!(
        "found {} of {}, false {}, centre errors {errors:.2?}\ntruth {:?}\nfound {:?}",
        s.ships.len(),
        truth.scene.ships.len(),
        s.false_ships,
        truth
            .scene
            .ships
            .iter()
            .map(|s| (s.x, s.y, s.size))
            .collect::<Vec<_>>(),
        scene
            .ships
            .iter()
            .map(|s| (s.x, s.y, s.size))
            .collect::<Vec<_>>()
    );
    assert!(s.ships.len() >= 4, "found {} of 5 ships", s.ships.len());
    // Today one base is placed 20 mm off (so it counts as missed and as invented) and one
    // blob of another ship's miniature yields a second base: measured 2. The issue's
    // target is 0; this bound keeps it from getting worse.
    assert!(s.false_ships <= 2, "{} invented ships", s.false_ships);
    assert!(
        s.ships.iter().all(|m| m.size == m.found_size),
        "size classes"
    );
    // Most bases land within a millimetre or so; an occasional one is off by several (the
    // issue note says why), which its sigma does not yet cover.
    // Measured: 0.30, 0.33, 0.66, 1.23 mm (before token edges under a miniature were left
    // out of the final fit: 0.19, 0.33, 0.52, 1.41; an earlier fit, without the final
    // polish: 0.47, 0.52, 1.28, 4.85).
    let within = |mm: f64| errors.iter().filter(|e| **e <= mm).count();
    assert!(within(0.7) >= 3, "{} ships within 0.7 mm", within(0.7));
    assert!(within(1.5) >= 3, "{} ships within 1.5 mm", within(1.5));
    assert!(s.ships.iter().all(|m| m.sigma_mm.is_some_and(|v| v > 0.0)));
    // Every ship a judge is told to check says why, and one whose sigma says it may be on
    // the wrong edges (6.5 mm) names a doubt about where it lies, not only its facing.
    for ship in &scene.ships {
        let q = &ship.quality;
        eprintln!(
            "{}: confidence {:?}, sigma {:?} mm, doubts {:?}",
            ship.id, q.confidence, q.sigma_mm, q.doubts
        );
        if hashmark::judge::DetectionNote::is_unsure(ship) {
            assert!(
                !q.doubts.is_empty(),
                "{} is unsure but says not why",
                ship.id
            );
        }
        if q.sigma_mm.is_some_and(|v| v >= 6.5) {
            assert!(
                q.doubts.iter().any(|d| d.is_about_position()),
                "{}: {:?}",
                ship.id,
                q.doubts
            );
        }
    }
    assert!(
        scene.ships.iter().any(|s| !s.quality.doubts.is_empty()),
        "this table has doubted ships (seed 2's s1, s3 and s5)"
    );
    // Facing from the token's edge strips. In the pipeline it is right for 176 of the 199
    // bases of the rendered sets (the wedge cue before it: 158), but this scene is a hard
    // one: the medium ship's orange front arc has a twin at its rear (the miniature's orange
    // engines hang over the rear edge, the disc is hidden), and one small token is all but
    // covered. Measured at the true poses: 3 of 5 right, the other 2 wrong and confident.
    let facings: Vec<(f64, bool)> = s
        .ships
        .iter()
        .map(|m| (m.centre_error_mm, m.facing_right))
        .collect();
    eprintln!("facings {facings:?}");
    let (n, right, confident_wrong) = facing_in_scene(&truth, &frame);
    eprintln!(
        "facing at the true poses: {right} of {n} right, {confident_wrong} confidently wrong"
    );
    assert!(right >= 3, "facing at the true poses: {right} of {n}");
    assert_eq!(s.obstacles.len(), truth.scene.obstacles.len(), "obstacles");
    // The scene is usable by the rules as it stands.
    let table = Table::from_scene(&scene, models).expect("a valid scene");
    for ship in &scene.ships {
        barrel_roll(
            &table,
            models,
            &ship.id,
            &[Side::Left, Side::Right],
            &RollOptions::default(),
        )
        .expect("roll");
    }
    // What a judge would be told, position by position, against the truth's verdicts:
    // never wrong where it says it is sure (measured: of 30 positions 3 said sure and
    // right, 27 left to the judge, 1 of them wrong; a table with several doubted ships).
    let pairs = s.pairs();
    let calls = agreement(
        &truth.scene,
        &scene,
        &pairs,
        models,
        &RollOptions::default(),
    )
    .expect("rolls");
    eprintln!("{}", calls.summary());
    assert_eq!(calls.calls.len(), 6 * s.ships.len());
    assert_eq!(
        calls.count(Call::SureWrong),
        0,
        "{:#?}",
        calls
            .calls
            .iter()
            .filter(|c| c.call == Call::SureWrong)
            .map(|c| c.describe())
            .collect::<Vec<_>>()
    );

    // A stream over the same frame: the full search, then re-fits, keep ids and poses.
    let mut stream = Stream::new(
        Detector::new(calibrated(&truth), models).expect("detector"),
        3,
    );
    let mut scenes = Vec::new();
    for _ in 0..4 {
        scenes.push(stream.push(&frame).expect("frame").scene);
    }
    // The tracker confirms a ship on its second sighting.
    let (a, b) = (&scenes[1], &scenes[3]);
    assert_eq!(a.ships.len(), b.ships.len());
    assert!(a.ships.len() >= 4);
    for s in &a.ships {
        let t = b.ships.iter().find(|t| t.id == s.id).expect("same ids");
        let moved = (s.x - t.x).hypot(s.y - t.y);
        assert!(moved < 0.5, "{} drifted {moved:.2} mm between frames", s.id);
        // A re-fit (frame 1) keeps the doubts the search read (frame 3 searched again):
        // a miniature's outline, a second heading (the others depend on the re-fit's own
        // outline too).
        use hashmark::scene::Doubt;
        for d in [Doubt::MiniatureOutline, Doubt::SecondHeading] {
            assert_eq!(
                s.quality.doubts.contains(&d),
                t.quality.doubts.contains(&d),
                "{}: {d:?}",
                s.id
            );
        }
    }
    assert_eq!(
        b.ships
            .iter()
            .filter(|s| !s.quality.doubts.is_empty())
            .count(),
        scene
            .ships
            .iter()
            .filter(|s| !s.quality.doubts.is_empty())
            .count(),
        "the stream's ships say what the search's doubted"
    );
    // A re-fit keeps what the full search read from the token: the facing and its
    // confidence (it once took the ship's whole confidence for its facing's, so over a run
    // of re-fits a ship's confidence sank frame by frame: on a rendered table two sure
    // ships became doubted).
    let full = det.detect_full(&frame).expect("detect");
    let grey = hashmark::vision::edges::Grey::from_mat(&frame).expect("grey");
    let again = refit_bases(&grey, &truth.camera, models, &full.bases);
    assert!(
        again.len() + 1 >= full.bases.len(),
        "{} of {}",
        again.len(),
        full.bases.len()
    );
    for b in &again {
        let was = full
            .bases
            .iter()
            .find(|f| f.fit.centre == b.blob)
            .expect("a re-fit starts where its base was");
        assert_eq!(b.facing_confidence, was.facing_confidence);
        let turned = (b.heading_deg - was.heading_deg + 180.0).rem_euclid(360.0) - 180.0;
        assert!(turned.abs() < 2.0, "turned {turned:.2} deg");
    }
}

#[test]
fn bad_frames() {
    let models = Models::builtin();
    // A small synthetic camera: no rendering needed.
    let camera = hashmark::vision::sim::camera_for(5, Resolution::Hd1080, [914.4, 914.4]);
    let cal = Calibrated {
        camera,
        play_area: models.play_areas.standard(),
        layout: hashmark::calibration::Layout::builtin(),
        sigma_mm: 0.1,
    };
    let det = Detector::new(cal, models).expect("detector");
    let black =
        Mat::new_rows_cols_with_default(1080, 1920, CV_8UC3, Scalar::all(0.0)).expect("mat");
    let scene = det.detect(&black).expect("a black frame is not an error");
    assert!(scene.ships.is_empty() && scene.obstacles.is_empty());
    let mut noise =
        Mat::new_rows_cols_with_default(1080, 1920, CV_8UC3, Scalar::all(0.0)).expect("mat");
    opencv::core::randu(&mut noise, &Scalar::all(0.0), &Scalar::all(255.0)).expect("noise");
    let scene = det.detect(&noise).expect("noise is not an error");
    assert!(
        scene.ships.len() <= 2,
        "noise gave {} ships",
        scene.ships.len()
    );
    let small = Mat::new_rows_cols_with_default(480, 640, CV_8UC3, Scalar::all(0.0)).expect("mat");
    let err = det.detect(&small).expect_err("another resolution");
    let msg = err.to_string();
    assert!(
        msg.contains("640x480") && msg.contains("1920x1080") && !msg.contains('\n'),
        "{msg}"
    );
}

#[test]
fn detect_command_refuses_bad_input_in_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let cal = d.join("cal");
    std::fs::create_dir_all(&cal).expect("dir");
    let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
    // No calibration at all.
    let img = d.join("black.png");
    let black =
        Mat::new_rows_cols_with_default(1080, 1920, CV_8UC3, Scalar::all(0.0)).expect("mat");
    std::fs::write(&img, cv::encode_png(&black).expect("png")).expect("write");
    let (code, out, err) =
        common::hashmark(&["detect", "--calibration", &s(&cal), "--image", &s(&img)]);
    assert_eq!(code, 2);
    assert!(
        out.is_empty() && err.trim().lines().count() == 1 && err.contains("camera.json"),
        "{err}"
    );
    // With a calibration: a black frame shows no mat marker, so nothing says it is the
    // table: refused in one line that names the way on.
    let camera = hashmark::vision::sim::camera_for(5, Resolution::Hd1080, [914.4, 914.4]);
    common::write_calibration(&cal, &camera);
    let on_black = |extra: &[&str]| {
        let (cal, img) = (s(&cal), s(&img));
        let mut args = vec!["detect", "--calibration", &cal, "--image", &img];
        args.extend_from_slice(extra);
        common::hashmark(&args)
    };
    let (code, out, err) = on_black(&[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.is_empty()
            && err.trim().lines().count() == 1
            && err.contains("no mat marker in view")
            && err.contains("--skip-table-check"),
        "{err}"
    );
    // Asked to go on: an empty scene, not an error.
    let (code, out, err) = on_black(&["--skip-table-check"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.trim().lines().collect();
    assert_eq!(lines[0], "0 ships (0 to check by eye), 0 obstacles");
    // Without an empty-table frame the table says what it cannot show; with one it does not.
    // The last line says nothing checks the camera.
    assert!(
        lines.len() == 3
            && lines[1].starts_with("no --background")
            && lines[2].starts_with("no mat marker in view"),
        "{out}"
    );
    let (code, out, err) = on_black(&["--skip-table-check", "--background", &s(&img)]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.trim().lines().collect();
    assert_eq!(lines[0], "0 ships (0 to check by eye), 0 obstacles");
    assert!(
        lines.len() == 2 && lines[1].starts_with("no mat marker in view"),
        "{out}"
    );
    let (code, out, err) = on_black(&["--skip-table-check", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.starts_with("warning: no mat marker in view"), "{err}");
    let scene: serde_json::Value = serde_json::from_str(&out).expect("a scene");
    assert_eq!(scene["format"], "hashmark-scene/1");
    assert_eq!(scene["ships"].as_array().map(Vec::len), Some(0));
    // A truncated file.
    let jpg = cv::encode_jpeg(&black, 90).expect("jpeg");
    let cut = d.join("cut.jpg");
    std::fs::write(&cut, &jpg[..jpg.len() / 3]).expect("write");
    let (code, _, err) =
        common::hashmark(&["detect", "--calibration", &s(&cal), "--image", &s(&cut)]);
    assert_eq!(code, 2);
    assert!(
        err.trim().lines().count() == 1 && err.contains("cut.jpg"),
        "{err}"
    );
    // An image of another size than the calibration's.
    let small = d.join("small.png");
    let m = Mat::new_rows_cols_with_default(480, 640, CV_8UC3, Scalar::all(40.0)).expect("mat");
    std::fs::write(&small, cv::encode_png(&m).expect("png")).expect("write");
    let (code, _, err) =
        common::hashmark(&["detect", "--calibration", &s(&cal), "--image", &s(&small)]);
    assert_eq!(code, 2);
    assert!(
        err.trim().lines().count() == 1 && err.contains("640x480"),
        "{err}"
    );
    // A video of black frames: a scene per frame as JSON lines, with either schedule of the
    // full search (beside it, the first frame is searched where it is and the next go on
    // without waiting); both schedules at once are refused.
    let avi = d.join("black.avi");
    write_clip(&avi, &black, 4);
    for schedule in [&["--full-every", "2"][..], &["--search-beside"][..]] {
        let mut args = vec!["detect", "--calibration"];
        let (cal, avi) = (s(&cal), s(&avi));
        args.extend([cal.as_str(), "--video", avi.as_str()]);
        args.extend_from_slice(schedule);
        let (code, out, err) = common::hashmark(&args);
        assert_eq!(code, 0, "{schedule:?}: {err}");
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.len(), 4, "{schedule:?}: {out}");
        assert_eq!(lines[0]["full_search"], true);
        assert!(
            lines
                .iter()
                .all(|l| l["scene"]["ships"].as_array().map(Vec::len) == Some(0))
        );
    }
    let (code, _, err) = common::hashmark(&[
        "detect",
        "--calibration",
        &s(&cal),
        "--video",
        &s(&avi),
        "--search-beside",
        "--full-every",
        "3",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--full-every"), "{err}");
    // A video that does not exist.
    let (code, _, err) = common::hashmark(&[
        "detect",
        "--calibration",
        &s(&cal),
        "--video",
        &s(&d.join("none.avi")),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.trim().lines().count() == 1 && err.contains("none.avi"),
        "{err}"
    );
}

/// A 1080p MJPG clip of `frames` copies of `frame`.
fn write_clip(path: &std::path::Path, frame: &Mat, frames: usize) {
    let fourcc = opencv::videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').expect("fourcc");
    let mut writer =
        opencv::videoio::VideoWriter::new(path, fourcc, 10.0, (1920, 1080).into(), true)
            .expect("writer");
    for _ in 0..frames {
        opencv::prelude::VideoWriterTrait::write(&mut writer, frame).expect("frame");
    }
    opencv::prelude::VideoWriterTrait::release(&mut writer).expect("release");
}

/// A stream cut off (Ctrl-C on a live camera; here the process is killed once its file
/// shows a line) leaves whole JSON lines in its `--out` file, one per frame done: a
/// buffered file lost its last frames and cut the last line in two.
#[test]
fn a_stream_cut_off_leaves_whole_lines_in_its_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let cal = d.join("cal");
    std::fs::create_dir_all(&cal).expect("dir");
    let camera = hashmark::vision::sim::camera_for(5, Resolution::Hd1080, [914.4, 914.4]);
    common::write_calibration(&cal, &camera);
    let black =
        Mat::new_rows_cols_with_default(1080, 1920, CV_8UC3, Scalar::all(0.0)).expect("mat");
    let avi = d.join("long.avi");
    write_clip(&avi, &black, 400);
    let out = d.join("scenes.jsonl");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hashmark"))
        .args(["detect", "--calibration", &s(&cal), "--video", &s(&avi)])
        .args(["--out", &s(&out)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run hashmark");
    let start = std::time::Instant::now();
    while std::fs::metadata(&out).map_or(0, |m| m.len()) == 0
        && start.elapsed() < std::time::Duration::from_secs(120)
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let running = child.try_wait().expect("child").is_none();
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(
        running,
        "the stream ended before it was cut off: make the clip longer"
    );
    let text = std::fs::read_to_string(&out).expect("the file");
    assert!(
        text.ends_with('\n'),
        "the last line is cut: {:?}",
        &text[text.len().saturating_sub(80)..]
    );
    let frames: Vec<u64> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a whole JSON line");
            v["frame"].as_u64().expect("its frame")
        })
        .collect();
    assert!(!frames.is_empty());
    assert!(
        frames.iter().enumerate().all(|(i, f)| *f == i as u64),
        "{frames:?}"
    );
}

/// Facing read at the true poses (each ship's side angle given a quarter turn off, so the
/// direction must be found), over more rendered scenes: how many right, and how many
/// wrong with a confidence of 0.3 or more.
fn facing_at_true_poses(seeds: &[u64]) -> (usize, usize, usize) {
    let (mut n, mut right, mut confident_wrong) = (0, 0, 0);
    for &seed in seeds {
        let (_dir, truth, frame) = render(seed);
        let (a, b, c) = facing_in_scene(&truth, &frame);
        (n, right, confident_wrong) = (n + a, right + b, confident_wrong + c);
    }
    (n, right, confident_wrong)
}

fn facing_in_scene(truth: &Truth, frame: &Mat) -> (usize, usize, usize) {
    let read = facings_at_true_poses(truth, frame);
    let right = read.iter().filter(|(_, right, _)| *right).count();
    let confident_wrong = read
        .iter()
        .filter(|(_, right, confidence)| !right && *confidence >= 0.3)
        .count();
    (read.len(), right, confident_wrong)
}

/// Per true ship, read at its true pose with its heading turned by a quarter turn per
/// place in the list (the direction must be found): (id, facing right, confidence).
fn facings_at_true_poses(truth: &Truth, frame: &Mat) -> Vec<(String, bool, f64)> {
    facings_at_moved_poses(truth, frame, (0.0, 0.0, 0.0))
}

/// As [`facings_at_true_poses`], each pose moved by (x mm, y mm, turn deg).
fn facings_at_moved_poses(
    truth: &Truth,
    frame: &Mat,
    (dx, dy, turn): (f64, f64, f64),
) -> Vec<(String, bool, f64)> {
    use hashmark::vision::detect::base_search::MiniMask;
    use hashmark::vision::detect::facing::facing;
    use hashmark::vision::detect::ortho::OrthoView;
    let models = Models::builtin();
    let play = truth.scene.play_area;
    let view = OrthoView::new(
        -10.0,
        -10.0,
        play.width_mm + 10.0,
        play.height_mm + 10.0,
        models.bases.base_top_height_mm,
        1.0,
    );
    let ortho = view.render(frame, &truth.camera).expect("ortho");
    let minis = MiniMask::new(&ortho, &view).expect("mask");
    let mut out = Vec::new();
    for (i, s) in truth.scene.ships.iter().enumerate() {
        let half = models.bases.get(s.size).width_mm / 2.0;
        let rim = if half < 25.0 { 1.6 } else { 2.0 };
        let k = i % 4;
        let angle = (s.heading_deg - 90.0 * k as f64 + turn).to_radians();
        let f = facing(
            frame,
            &truth.camera,
            [s.x + dx, s.y + dy],
            angle,
            half - rim,
            models.bases.base_top_height_mm,
            Some(&minis),
        );
        out.push((s.id.clone(), f.k == k, f.confidence));
    }
    out
}

/// The facing read at one true ship's pose (see [`facings_at_true_poses`]).
fn facing_at_true_pose(seed: u64, id: &str) -> (bool, f64) {
    let (_dir, truth, frame) = render(seed);
    let read = facings_at_true_poses(&truth, &frame);
    let (_, right, confidence) = read
        .into_iter()
        .find(|(s, _, _)| s == id)
        .unwrap_or_else(|| panic!("the rendered scene has no {id}: it changed"));
    eprintln!("seed {seed} {id}: right {right}, confidence {confidence:.2}");
    (right, confidence)
}

// Seed 4's s1, a medium base whose grey miniature covers the whole token: the hull's
// shaded edge over the rear left corner is masked, but its hue (warmed by the engine glow
// beside it) is not the hull's median, so it counted as the token's print, and 21 samples
// without orange where the true direction's initiative disc would be turned the facing
// half a turn (the glow said otherwise). Under the mask only orange now speaks for a disc.
// Measured at the true pose: right, confidence 0.55 (before: wrong, 0.46).
#[test]
fn a_hull_seen_over_the_disc_place_does_not_deny_the_disc() {
    let (right, _) = facing_at_true_pose(4, "s1");
    assert!(right, "seed 4 s1 faces the wrong way");
}

// Seed 115's s8 (third rendered set), a medium base under a dark miniature the mask does
// not take: every strip in view, none shaded like a front arc (the chosen one 8 of 48
// coloured), the disc nowhere, and the facing was given a quarter turn off with
// confidence 0.84 and no doubt named. A chosen front strip in view that denies being one
// now leaves the facing unsure. Seed 51's s2 (second set) read at its true pose likewise.
// Measured: 0.35 and 0.22, both still the wrong way (before: 0.84 and 0.71; 0.50 and 0.51
// before the vote was averaged over poses about the one given).
#[test]
fn a_front_strip_in_view_without_its_shade_leaves_the_facing_unsure() {
    for (seed, id) in [(115, "s8"), (51, "s2")] {
        let (right, confidence) = facing_at_true_pose(seed, id);
        assert!(
            right || confidence < 0.7,
            "seed {seed} {id} faces the wrong way with confidence {confidence:.2}"
        );
    }
}

// A monochrome camera, or a colour one fallen back to grey, shows no colour, and every cue
// the facing is read by is one (the front arc's shade, the initiative disc's orange, an
// engine's glow). The vote still ran on such a frame: a front strip in view without its
// shade counts against being the front, so it chose whichever side the miniature hid
// most. Seed 1 in grey had s3, a large base in plain view, half a turn off with
// confidence 0.75 and no doubt named (s1 half a turn off with 0.79). Now the facing is
// not read, every ship is doubted for it, and where the bases lie is found as in colour.
#[test]
fn a_grey_frame_leaves_every_facing_unsure() {
    use hashmark::scene::Doubt;
    use opencv::imgproc;
    let (_dir, truth, frame) = render(1);
    let mut grey = Mat::default();
    imgproc::cvt_color_def(&frame, &mut grey, imgproc::COLOR_BGR2GRAY).expect("grey");
    let mut grey_bgr = Mat::default();
    imgproc::cvt_color_def(&grey, &mut grey_bgr, imgproc::COLOR_GRAY2BGR).expect("bgr");
    let detector = Detector::new(calibrated(&truth), Models::builtin()).expect("detector");
    let in_colour = detector.detect(&frame).expect("detect in colour");
    let in_grey = detector.detect(&grey_bgr).expect("detect in grey");
    assert!(
        in_colour
            .ships
            .iter()
            .all(|s| !s.quality.doubts.contains(&Doubt::NoColour)),
        "a colour frame said it had no colour"
    );
    assert_eq!(in_grey.ships.len(), in_colour.ships.len());
    for s in &in_grey.ships {
        let q = &s.quality;
        assert!(
            q.doubts.contains(&Doubt::NoColour),
            "{}: {:?}",
            s.id,
            q.doubts
        );
        assert!(
            q.confidence
                .is_some_and(|c| c < hashmark::judge::UNSURE_CONFIDENCE),
            "{} reported with confidence {:?} in a grey frame",
            s.id,
            q.confidence
        );
        let twin = nearest_ship(&in_colour, s.x, s.y).expect("a ship in colour");
        assert!(
            (twin.x - s.x).hypot(twin.y - s.y) < 0.5 && twin.size == s.size,
            "{} at {:.2}, {:.2} in grey, {:.2}, {:.2} in colour",
            s.id,
            s.x,
            s.y,
            twin.x,
            twin.y
        );
    }
}

// A camera whose white balance is off (a fixed setting under a warm lamp: red 15 % up,
// blue 20 % down) or whose exposure is short (0.6 as long) changes the sRGB levels the
// facing reads (the front arc's shade, the disc's orange, an engine's glow) and the
// search's contrasts. On the fixed rendered set so changed (`hashmark bench detect
// --camera warm|dark`), 3 (warm) and 1 (dark) bases faced the wrong way unflagged, and the
// dark frames lost 11 of 65 bases (now none and none, 2 lost). The
// mat markers' white cells say what the camera makes of white paper, and the frame is put
// right from them (vision::detect::white). Measured with the frame left as it is: seed 3
// warm had its medium s2 facing the wrong way with confidence 1.00, seed 6 dark its s4
// at 0.86. Exposed 1.35 times as long the paper clips, and is taken for just clipped:
// seed 2 so lost a base (found 4 of 5) before.
#[test]
fn a_colour_cast_or_an_exposure_off_turns_no_facing() {
    for (seed, change) in [
        (3, CameraChange::Warm),
        (6, CameraChange::Dark),
        (2, CameraChange::Bright),
    ] {
        let (_dir, truth, frame) = render(seed);
        let off = change.apply(&frame, seed).expect("changed");
        let detector = Detector::new(calibrated(&truth), Models::builtin()).expect("detector");
        let as_shot = score(
            &truth.scene,
            &detector.detect(&frame).expect("detect"),
            Models::builtin(),
        );
        let cast = score(
            &truth.scene,
            &detector.detect(&off).expect("detect"),
            Models::builtin(),
        );
        let wrong: Vec<_> = cast
            .ships
            .iter()
            .filter(|s| {
                !s.facing_right
                    && s.confidence
                        .is_some_and(|c| c >= hashmark::judge::UNSURE_CONFIDENCE)
            })
            .map(|s| (s.id.clone(), s.confidence))
            .collect();
        assert!(
            wrong.is_empty(),
            "seed {seed} {change:?}: facing wrong and not flagged: {wrong:?}"
        );
        assert!(
            cast.ships.len() >= as_shot.ships.len(),
            "seed {seed} {change:?}: {} bases found, {} as shot",
            cast.ships.len(),
            as_shot.ships.len()
        );
        // A stream over the changed frame keeps its ships between searches where the
        // search found them (its re-fits read the frame through the search's balance; on
        // these two tables they hold without it too).
        let mut stream = Stream::new(
            Detector::new(calibrated(&truth), Models::builtin()).expect("detector"),
            3,
        );
        let scenes: Vec<_> = (0..4)
            .map(|_| stream.push(&off).expect("frame").scene)
            .collect();
        // The tracker confirms a ship on its second sighting (a re-fit), the fourth
        // frame is searched again.
        let (refit, searched) = (&scenes[2], &scenes[3]);
        assert_eq!(refit.ships.len(), searched.ships.len(), "seed {seed}");
        for s in &refit.ships {
            let t = searched
                .ships
                .iter()
                .find(|t| t.id == s.id)
                .expect("same ids");
            let moved = (s.x - t.x).hypot(s.y - t.y);
            assert!(
                moved < 0.5,
                "seed {seed}: {} re-fitted {moved:.2} mm off",
                s.id
            );
        }
    }
}

// The white is read where the calibration puts the marker cards; a card taken off the
// table (or a hand over it) leaves something else there, whose colour is not the
// light's. A marker counts only where its black cells show darker than half its white:
// with two of the four cards painted over in a wood brown, the frame is read as it is
// (as shot it needs no change), and a warm frame's gains are those read with all four
// cards. Counting every card, the brown ones made the median white a strong cast.
#[test]
fn a_card_taken_off_the_table_says_nothing_of_the_white() {
    use opencv::core::{Point, Scalar, Vector};
    use opencv::imgproc;
    use opencv::prelude::*;
    let (_dir, truth, frame) = render(1);
    let detector = Detector::new(calibrated(&truth), Models::builtin()).expect("detector");
    let layout = hashmark::calibration::Layout::builtin();
    let cover = |img: &Mat| {
        let mut out = img.try_clone().expect("clone");
        for id in [0, 2] {
            let m = layout
                .mat_markers
                .markers
                .iter()
                .find(|m| m.id == id)
                .expect("marker");
            let h = 42.0;
            let pts: Vector<Point> = [(-h, -h), (h, -h), (h, h), (-h, h)]
                .iter()
                .map(|(dx, dy)| {
                    let p = truth
                        .camera
                        .project([m.centre[0] + dx, m.centre[1] + dy, 0.0])
                        .expect("in view");
                    Point::new(p[0].round() as i32, p[1].round() as i32)
                })
                .collect();
            imgproc::fill_convex_poly(
                &mut out,
                &pts,
                Scalar::new(60.0, 120.0, 200.0, 0.0),
                imgproc::LINE_8,
                0,
            )
            .expect("paint");
        }
        out
    };
    let none = hashmark::vision::detect::white::Balance::NONE;
    assert_eq!(detector.balance(&frame).expect("balance"), none);
    assert_eq!(detector.balance(&cover(&frame)).expect("balance"), none);
    let warm = CameraChange::Warm.apply(&frame, 1).expect("cast");
    let all = detector.balance(&warm).expect("balance").gains;
    let two = detector.balance(&cover(&warm)).expect("balance").gains;
    assert!(all != [1.0; 3], "the cast was not seen: {all:?}");
    assert!(
        all.iter().zip(two).all(|(a, b)| (a - b).abs() < 0.03),
        "all four cards {all:?}, two {two:?}"
    );
}

// `detect` says how it read the frame's colours where that is not as shot: a grey frame's
// facings were not read, a warm one was read through gains; a frame as shot says nothing.
#[test]
fn detect_command_says_how_it_read_the_colours() {
    use opencv::imgproc;
    let (_dir, truth, frame) = render(1);
    let dir = tempfile::tempdir().expect("temp dir");
    let cal = dir.path().join("cal");
    std::fs::create_dir_all(&cal).expect("dir");
    common::write_calibration(&cal, &truth.camera);
    let mut grey = Mat::default();
    imgproc::cvt_color_def(&frame, &mut grey, imgproc::COLOR_BGR2GRAY).expect("grey");
    let warm = CameraChange::Warm.apply(&frame, 1).expect("cast");
    let said = |name: &str, img: &Mat| {
        let path = dir.path().join(name);
        std::fs::write(&path, cv::encode_png(img).expect("png")).expect("write");
        let (code, out, err) = common::hashmark(&[
            "detect",
            "--calibration",
            &cal.to_string_lossy(),
            "--image",
            &path.to_string_lossy(),
        ]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let out = said("grey.png", &grey);
    assert!(
        out.contains("the image has no colour") && out.contains("no colour"),
        "{out}"
    );
    let out = said("warm.png", &warm);
    assert!(
        out.contains("is read through gains") && !out.contains("the image has no colour"),
        "{out}"
    );
    let out = said("as-shot.png", &frame);
    assert!(
        !out.contains("paper shows") && !out.contains("no colour"),
        "{out}"
    );
}

// Seed 66's s7 (second rendered set), a small base at 1080p, whose token's edge strips
// are a pixel or two wide: read at one pose, its facing swung with the fit (in the full
// pipeline, right with 0.79 at the fitted pose and half a turn off with 0.68 at 0.4 mm
// from it; a fit 0.3 deg different was reported facing the wrong way with confidence
// 0.88). The vote is averaged over poses half a pixel about the one given. Read at the
// true pose and at six poses 0.4 mm or 0.5 deg from it, each read's confidence signed by
// whether it is right: from -0.34 to +0.26 (spread 0.60); read at one pose, from -0.28 to
// +0.93 (spread 1.21): a sure read half a millimetre from an opposite one.
#[test]
fn a_facing_does_not_swing_with_a_sub_pixel_change_of_pose() {
    let (_dir, truth, frame) = render(66);
    let moves = [
        (0.0, 0.0, 0.0),
        (0.4, 0.0, 0.0),
        (-0.4, 0.0, 0.0),
        (0.0, 0.4, 0.0),
        (0.0, -0.4, 0.0),
        (0.0, 0.0, 0.5),
        (0.0, 0.0, -0.5),
    ];
    let signed: Vec<f64> = moves
        .iter()
        .map(|m| {
            let read = facings_at_moved_poses(&truth, &frame, *m);
            let (_, right, confidence) = read
                .into_iter()
                .find(|(s, _, _)| s == "s7")
                .expect("the rendered scene has no s7: it changed");
            eprintln!("moved {m:?}: right {right}, confidence {confidence:.2}");
            if right { confidence } else { -confidence }
        })
        .collect();
    let spread = signed.iter().copied().fold(f64::MIN, f64::max)
        - signed.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        spread < 0.8,
        "the facing swings by {spread:.2}: {signed:.2?}"
    );
}

// Heavier: the twelve rendered 1080p scenes of the accuracy report, with the true camera
// (`cargo test --release --test detect_ships -- --ignored`, about 80 s). Measured: 65 of
// 67 right, 1 wrong with a confidence of 0.3 or more (64 and 2 before only orange spoke
// for a disc under the miniature's mask; 63 and 3 before a masked pixel of
// another hue than the hull's counted; 59 and 7 before the colour threshold followed the
// token's light and bright engine paint stopped counting); the misses are tokens the
// miniature all but covers, and a grey hull's painted stripe over a side.
#[test]
#[ignore]
fn facing_on_more_scenes() {
    let (n, right, confident_wrong) =
        facing_at_true_poses(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 21]);
    eprintln!("facing at true poses: {right} of {n} right, {confident_wrong} confidently wrong");
    assert!(right * 100 >= n * 90, "{right} of {n}");
    assert!(confident_wrong * 100 <= n * 6, "{confident_wrong} of {n}");
}

// A large base near the play area's edge (as in a rendered table of the second set, where
// it was found as a medium 15 mm off): the outline search once refused any start whose
// whole search window did not fit in the view, which for a large base meant any centre
// within about 65 mm of the edge. Measured: found within 0.2 mm, facing right.
#[test]
fn a_large_base_at_the_edge_of_the_play_area() {
    let mut scene = common::scene();
    scene.ships = vec![
        common::ship("s1", BaseSize::Large, 866.0, 300.0, 282.5),
        common::ship("s2", BaseSize::Medium, 600.0, 880.0, 10.0),
    ];
    let found = built_and_detected(&scene, 42);
    eprintln!("{:?}", found.ships);
    for want in &scene.ships {
        let got = found
            .ships
            .iter()
            .find(|s| (s.x - want.x).hypot(s.y - want.y) < 10.0)
            .unwrap_or_else(|| panic!("{} not found: {:?}", want.id, found.ships));
        assert_eq!(got.size, want.size, "{}", want.id);
        let err = (got.x - want.x).hypot(got.y - want.y);
        assert!(err < 1.0, "{}: {err:.2} mm", want.id);
    }
}

// A small square fits inside a bigger base's corner on two real sides, its other two on
// the token's print (rendered table 11 of the fixed set, calibrated from images: a medium
// base found as a small one 14 mm off with full confidence). From such a corner fit the
// bigger base is found; from a true small base's own fit nothing grows. Measured (seed 11,
// true camera): the one corner a small fit holds (quality 0.61) grows to the medium 0.45 mm
// off; none of the six small bases grows (at half the growth ratio, one would).
#[test]
fn a_small_fit_in_a_bigger_base_corner_grows_into_it() {
    use hashmark::vision::detect::base_fit::{BaseGuess, BaseShape, fit_base};
    use hashmark::vision::detect::bases::{fit_quality, grow_from_corner};
    use hashmark::vision::edges::Grey;
    let models = Models::builtin();
    let (_dir, truth, frame) = render(11);
    let grey = Grey::from_mat(&frame).expect("grey");
    let shape = BaseShape::from_models(models).for_search();
    let halves: Vec<(BaseSize, f64)> = [BaseSize::Small, BaseSize::Medium, BaseSize::Large]
        .iter()
        .map(|s| (*s, models.bases.get(*s).width_mm / 2.0))
        .collect();
    let small = models.bases.get(BaseSize::Small).width_mm / 2.0;
    let camera = &truth.camera;
    let medium = truth_ship(&truth, "s1");
    assert_eq!(medium.size, BaseSize::Medium, "the scene changed");
    let half = models.bases.get(medium.size).width_mm / 2.0;
    let a = medium.heading_deg.to_radians();
    let mut grew = 0;
    for k in 0..4 {
        let (a1, a2) = (
            a + k as f64 * std::f64::consts::FRAC_PI_2,
            a + (k + 1) as f64 * std::f64::consts::FRAC_PI_2,
        );
        let d = half - small;
        let guess = BaseGuess {
            centre: [
                medium.x + d * (a1.cos() + a2.cos()),
                medium.y + d * (a1.sin() + a2.sin()),
            ],
            angle: a,
            half: small,
        };
        let Some(fit) = fit_base(&grey, camera, &shape, guess, 0.5) else {
            continue;
        };
        let q = fit_quality(&fit);
        let moved = (fit.centre[0] - guess.centre[0]).hypot(fit.centre[1] - guess.centre[1]);
        let anchored = fit.side_support[k].min(fit.side_support[(k + 1) % 4]) >= 0.5;
        eprintln!(
            "corner {k}: small fit q {q:.2} moved {moved:.1} support {:.2?}",
            fit.side_support
        );
        if !anchored || moved > 2.0 || q < 0.25 {
            continue;
        }
        let (size, g, _) =
            grow_from_corner(&grey, camera, &shape, &halves, (BaseSize::Small, fit, q));
        let err = (g.centre[0] - medium.x).hypot(g.centre[1] - medium.y);
        eprintln!("  grown to {size:?} {err:.2} mm off");
        assert_eq!(size, BaseSize::Medium, "corner {k}");
        assert!(err < 2.0, "corner {k}: {err:.2} mm");
        grew += 1;
    }
    assert!(grew >= 1, "no corner of the medium base held a small fit");
    let mut smalls = 0;
    for s in truth
        .scene
        .ships
        .iter()
        .filter(|s| s.size == BaseSize::Small)
    {
        let guess = BaseGuess {
            centre: [s.x, s.y],
            angle: s.heading_deg.to_radians(),
            half: small,
        };
        let Some(fit) = fit_base(&grey, camera, &shape, guess, 0.5) else {
            continue;
        };
        let q = fit_quality(&fit);
        let (size, _, _) =
            grow_from_corner(&grey, camera, &shape, &halves, (BaseSize::Small, fit, q));
        assert_eq!(size, BaseSize::Small, "{} grew", s.id);
        smalls += 1;
    }
    assert!(smalls >= 5, "only {smalls} small bases fitted");
}

// A hull seen from above is a bright rounded square of a base's size: a square fitted to
// its outline looks like a base (three such fits in the second rendered set were 9-14 mm
// off with confidence 0.81-0.89). Such fits are only a fallback, and doubted when nothing
// else fits; a fit where none of the token's side hashmarks shows is doubted too. On these
// tables (true camera), no ship more than 4 mm off may be confident: before, seed 44's s4
// and 61's s5 were 14 mm off with confidence 0.87 and 46's s3 11.8 mm off with 0.70, and
// 72's s1 (a grey hull in shade, darker than the miniature mask's threshold) 8.8 mm off
// with 0.77; measured now: 61's s5 0.2 mm off, 44's s4 0.4 mm (doubted, 0.20), 46's s3
// 12.5 mm but doubted (0.34, no hashmark), 72's s1 8.6 mm but doubted (0.16).
#[test]
fn squares_on_miniatures_are_not_confident() {
    let mut report = Vec::new();
    for seed in [44, 46, 61, 72] {
        let (truth, scene) = detected(seed);
        for got in &scene.ships {
            let Some(want) = truth.scene.ships.iter().min_by(|a, b| {
                let d = |s: &hashmark::scene::ShipSpec| (s.x - got.x).hypot(s.y - got.y);
                d(a).total_cmp(&d(b))
            }) else {
                continue;
            };
            let err = (want.x - got.x).hypot(want.y - got.y);
            let conf = got.quality.confidence.unwrap_or(0.0);
            report.push((seed, want.id.clone(), err, conf));
        }
    }
    eprintln!("{report:.2?}");
    let confident_wrong: Vec<_> = report
        .iter()
        .filter(|(_, _, err, conf)| *err > 4.0 && *conf >= 0.6)
        .collect();
    assert!(confident_wrong.is_empty(), "{confident_wrong:.2?}");
}

// The final fit discounts edge points lying away from the rim (dark print next to a token's
// edge moves the step the blurred image shows inwards, dark mat next to the base moves the
// silhouette outwards, nothing moves either towards the rim) and holds the rim to its
// prior; with the search's settings such stretches widen the rim and push the base off
// centre. On seed 11's eight bases (true camera, each fit started 0.7 mm and 1 deg off its
// truth), measured: centre RMS 0.81 -> 0.28 mm, rim off by 0.65 -> 0.16 mm on average;
// heading RMS 0.80 -> 1.07 deg, not better here (one small base all but covered, 2.7 deg;
// on the report's three sets the final settings took the heading RMS of the bases not
// flagged from 1.3 to 0.45 deg at 1080p, 0.26 to 0.11 at 4K).
#[test]
fn the_final_fit_discounts_the_arts_one_sided_pull() {
    use hashmark::vision::detect::base_fit::{BaseGuess, BaseShape, fit_base};
    use hashmark::vision::edges::Grey;
    let models = Models::builtin();
    let (_dir, truth, frame) = render(11);
    let grey = Grey::from_mat(&frame).expect("grey");
    let last = BaseShape::from_models(models);
    let rms = |v: &[f64]| (v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64).sqrt();
    let mut results = Vec::new();
    for shape in [last.for_search(), last] {
        let (mut centre, mut heading, mut rim) = (Vec::new(), Vec::new(), Vec::new());
        for s in &truth.scene.ships {
            let half = models.bases.get(s.size).width_mm / 2.0;
            let guess = BaseGuess {
                centre: [s.x + 0.5, s.y - 0.5],
                angle: (s.heading_deg + 1.0).to_radians(),
                half,
            };
            let f = fit_base(&grey, &truth.camera, &shape, guess, 0.5).expect("a fit");
            centre.push((f.centre[0] - s.x).hypot(f.centre[1] - s.y));
            heading.push((f.angle.to_degrees() - s.heading_deg + 45.0).rem_euclid(90.0) - 45.0);
            // The simulator's tokens leave a 1.6 mm rim on small bases, 2.0 mm on the others.
            let true_rim = if s.size == BaseSize::Small { 1.6 } else { 2.0 };
            rim.push((f.rim - true_rim).abs());
        }
        let r = (
            rms(&centre),
            rms(&heading),
            rim.iter().sum::<f64>() / rim.len() as f64,
        );
        eprintln!(
            "centre RMS {:.2} mm, heading RMS {:.2} deg, rim off {:.2} mm",
            r.0, r.1, r.2
        );
        results.push(r);
    }
    let (search, last) = (results[0], results[1]);
    assert!(last.0 <= 0.35, "centre RMS {:.2} mm", last.0);
    assert!(
        last.0 < 0.5 * search.0,
        "centre RMS {:.2} -> {:.2} mm",
        search.0,
        last.0
    );
    assert!(
        last.2 < 0.5 * search.2,
        "rim {:.2} -> {:.2} mm",
        search.2,
        last.2
    );
    assert!(last.1 <= 1.3, "heading RMS {:.2} deg", last.1);
}

// A big miniature can show as two bright blobs; under the second, the search finds a
// base-sized square beside the real base, one side on the real base's edge. Such a fit is
// doubted (little outline, no hashmark) and now dropped when most of its edge points lie
// on a better base's outline. On these tables (true camera) the second rendered set had
// one such invented ship each, 39-40 mm from a real one; measured now: none.
#[test]
fn a_second_blob_invents_no_base_beside_a_real_one() {
    let mut beside = Vec::new();
    for seed in [49, 50] {
        let (truth, scene) = detected(seed);
        for got in &scene.ships {
            let nearest = truth
                .scene
                .ships
                .iter()
                .map(|s| (s.x - got.x).hypot(s.y - got.y))
                .fold(f64::INFINITY, f64::min);
            eprintln!(
                "seed {seed} {} at {:.1},{:.1}: {nearest:.1} mm from a ship",
                got.id, got.x, got.y
            );
            if nearest > 15.0 && nearest < 60.0 {
                beside.push((seed, got.id.clone(), nearest));
            }
        }
    }
    assert!(beside.is_empty(), "{beside:.1?}");
}

// A big miniature's own outline outscores what a half-hidden base shows of its own, so the
// outline search settles on the miniature and the fit is doubted. Searching that blob
// again with the miniatures taken out of the gradients finds the base: on these tables
// (true camera), before: 41's s4 12.4 mm off, 61's s3 12.3 mm and s7 3.0 mm, all doubted;
// measured now: 0.20, 0.27 and 0.39 mm, confidence 0.75-0.89.
#[test]
fn a_base_under_a_big_miniature_is_found_with_the_miniature_taken_out() {
    let mut errors = Vec::new();
    for (seed, ids) in [(41, &["s4"][..]), (61, &["s3", "s7"][..])] {
        let (truth, scene) = detected(seed);
        for id in ids {
            let want = truth_ship(&truth, id);
            let err = scene
                .ships
                .iter()
                .map(|s| (s.x - want.x).hypot(s.y - want.y))
                .fold(f64::INFINITY, f64::min);
            errors.push((seed, *id, err));
        }
    }
    eprintln!("{errors:.2?}");
    assert!(errors.iter().all(|e| e.2 < 1.0), "{errors:.2?}");
}

// Under a miniature two starts of one size often fit: one on the base, one taking the
// miniature's limb for a side, as well supported but looser. The first to fit was kept and
// later starts of its size were never fitted: with the true camera, seed 121's s2 was
// found 11.2 mm off and seed 126's s1 9.6 mm off (both doubted). Now every start of the
// kept size is fitted and the one that explains its edges better is kept
// (`edge_agreement`): 0.34 and 0.21 mm.
#[test]
fn of_two_fits_under_a_miniature_the_one_that_explains_its_edges_is_kept() {
    let found = found_ships(&[(121, "s2"), (126, "s1")]);
    assert!(found.iter().all(|m| m.centre_error_mm < 1.0), "{found:?}");
}

/// How detection did on each (seed, true ship id), each seed detected with the true camera.
fn found_ships(cases: &[(u64, &str)]) -> Vec<ShipMatch> {
    cases
        .iter()
        .map(|&(seed, id)| {
            let (truth, scene) = detected(seed);
            found_ship(&truth, &scene, id)
        })
        .collect()
}

// The search again with the miniatures taken out (see `Search::chosen_under`) kept its
// doubted fit only where it was not doubted or showed a clear hashmark. With the true
// camera, seed 108's s5 (a small base whose miniature leaves one corner in view) stayed
// 10.1 mm off and seed 123's s1 2.8 mm off, though the second search's fits lay within
// 0.5 mm and explained their edges better; now that decides too: 0.46 and 0.49 mm (both
// still doubted).
#[test]
fn a_second_search_whose_fit_explains_its_edges_better_wins() {
    let found = found_ships(&[(108, "s5"), (123, "s1")]);
    assert!(
        found
            .iter()
            .all(|m| m.centre_error_mm < 1.0 && m.confidence.is_some_and(|c| c < 0.65)),
        "{found:?}"
    );
}

// A fit with less outline than a base needs to count (see `bases::min_quality`) was
// dropped even where a side hashmark showed clearly where it put one. Seed 5's s3 (a small
// base under its miniature) was reported 6.2 mm off on the miniature's outline, and seed
// 6's s1 (a medium base its miniature nearly hides) was missed, while fits within 0.3 mm
// with clear hashmarks were dropped. Now such a fit counts, as a fallback (still doubted).
#[test]
fn a_fit_with_little_outline_counts_where_its_hashmark_shows() {
    let models = Models::builtin();
    for (seed, id) in [(5, "s3"), (6, "s1")] {
        let (_dir, truth, frame) = render(seed);
        let det = Detector::new(calibrated(&truth), models).expect("detector");
        let full = det.detect_full(&frame).expect("detect");
        let m = found_ship(&truth, &full.scene, id);
        assert!(
            m.centre_error_mm < 1.0 && m.confidence.is_some_and(|c| c < 0.65),
            "{m:?}"
        );
        // A stream's re-fits between searches hold it as the search found it.
        let want = truth_ship(&truth, id);
        let grey = hashmark::vision::edges::Grey::from_mat(&frame).expect("grey");
        let again = refit_bases(&grey, &truth.camera, models, &full.bases);
        let nearest = again
            .iter()
            .map(|b| (b.fit.centre[0] - want.x).hypot(b.fit.centre[1] - want.y))
            .fold(f64::INFINITY, f64::min);
        assert!(nearest < 1.0, "{id} re-fitted {nearest:.2} mm off");
    }
}

// The miniature mask takes bright, unsaturated pixels for the hull (it must, to keep a beige
// hull), so it also hid a pale front arc, and the facing was left to what else showed: on
// seed 41 (true camera) s4, found 0.2 mm off, was reported facing half a turn off with
// confidence 0.89. A masked pixel whose hue differs from the hull's now counts as print;
// measured now: facing right, confidence 0.97.
#[test]
fn a_pale_front_arc_under_the_miniature_mask_still_counts() {
    let (truth, scene) = detected(41);
    let want = truth_ship(&truth, "s4");
    let got = scene
        .ships
        .iter()
        .min_by(|a, b| {
            let d = |s: &hashmark::scene::ShipSpec| (s.x - want.x).hypot(s.y - want.y);
            d(a).total_cmp(&d(b))
        })
        .expect("a ship");
    let turned = (got.heading_deg - want.heading_deg + 180.0).rem_euclid(360.0) - 180.0;
    eprintln!(
        "s4 {:.2} mm off, facing {turned:.1} deg off, confidence {:?}",
        (got.x - want.x).hypot(got.y - want.y),
        got.quality.confidence
    );
    assert!(turned.abs() < 45.0, "s4 faces {turned:.1} deg off");
}

// A fit whose rim the edges pulled far from its prior took edges of the wrong kind for the
// base's: on seed 6 a miniature's bright hull over the black rim (token-edge polarity) held
// s7's square 5 mm forward with a rim of 0.5 mm (prior 1.8) and confidence 0.68; on seed
// 10, s2's square sat on the hull's rounded outline, 1.7 mm and 5.4 deg off with a rim of
// 0.8 mm and confidence 0.65. Such fits are now doubted (true camera, measured: 0.34 and
// 0.33). No confident ship of these two tables may be more than 1.5 mm or 2 deg off.
#[test]
fn a_rim_pulled_far_from_its_prior_is_doubted() {
    let mut report = Vec::new();
    for seed in [6, 10] {
        let (truth, scene) = detected(seed);
        let s = score(&truth.scene, &scene, Models::builtin());
        for m in &s.ships {
            report.push((
                seed,
                m.id.clone(),
                m.centre_error_mm,
                m.heading_error_deg,
                m.confidence.unwrap_or(0.0),
            ));
        }
    }
    eprintln!("{report:.2?}");
    assert!(report.len() >= 10, "only {} ships found", report.len());
    let confident_wrong: Vec<_> = report
        .iter()
        .filter(|(_, _, err, h, conf)| {
            (*err > 1.5 || h.abs() > 2.0) && *conf >= hashmark::judge::UNSURE_CONFIDENCE
        })
        .collect();
    assert!(confident_wrong.is_empty(), "{confident_wrong:.2?}");
}

// Seed 6's s6, a medium base whose token its miniature hides, was missed: the search's
// loose rim took the miniature's outline for the token's edge and strayed to 4.0 mm, past
// what a base has, so the fit was thrown away though it lay 0.2 mm from the truth. Fitted
// again from there with the rim held, it settles (measured through the calibration from
// images: 0.22 mm, 0.03 deg; on the fixed set no other base changed but one invented one,
// flagged, moved). Such a second fit is doubted (rim off): trusted, it made confident squares
// of the real photos' checkerboards (tests/detect_realdata.rs). Its neighbour s1, almost
// wholly under its miniature, stays missed.
#[test]
fn a_search_fit_whose_rim_strays_is_fitted_again_with_it_held() {
    let (truth, scene) = detected(6);
    let s6 = found_ship(&truth, &scene, "s6");
    assert!(
        s6.centre_error_mm < 0.5 && s6.heading_error_deg.abs() < 0.5,
        "{s6:?}"
    );
    assert!(
        s6.doubts.contains(&hashmark::scene::Doubt::RimStrayed),
        "{s6:?}"
    );
    // On the same table s4 (small) shows neither its front arc nor its initiative disc;
    // its miniature's engines glow at the rear, which tips it the right way
    // (`vision::detect::facing`: it faced 90 deg wrong without), and it stays flagged.
    let s4 = found_ship(&truth, &scene, "s4");
    assert!(s4.facing_right, "{s4:?}");
    assert!(
        s4.confidence
            .is_some_and(|c| c < hashmark::judge::UNSURE_CONFIDENCE),
        "{s4:?}"
    );
}

// At 4K the rim's two edges (the silhouette and the token's edge, 1.6-2 mm apart) come apart
// in the image, and a fit that finds both along a stretch of its outline is on a base's rim
// however little of the outline shows: seed 33's s2 and s6 (a third of their outline each,
// measured with the true camera: 0.33 and 0.39 mm off) were doubted with 6.5 mm sigmas for
// the little outline alone; s3 stays doubted, its outline resting on one corner. Every
// ship reported with a sigma under 1 mm must be within 0.5 mm and three sigmas.
#[test]
fn a_rim_seen_whole_at_4k_is_not_doubted_for_little_outline() {
    let (truth, scene) = detected_at(33, Resolution::Uhd4k);
    let s = score(&truth.scene, &scene, Models::builtin());
    let report: Vec<_> = s
        .ships
        .iter()
        .map(|m| {
            (
                m.id.clone(),
                m.centre_error_mm,
                m.sigma_mm.unwrap_or(f64::INFINITY),
            )
        })
        .collect();
    eprintln!("{report:.2?}");
    assert_eq!(s.ships.len(), 6, "missed {:?}", s.missed_ships);
    let sure: Vec<_> = report.iter().filter(|r| r.2 < 1.0).collect();
    assert!(
        sure.len() >= 5,
        "only {} of 6 with a sigma under 1 mm",
        sure.len()
    );
    for (id, err, sigma) in sure {
        assert!(
            *err <= 0.5 && *err <= 3.0 * sigma,
            "{id}: {err:.2} mm off, sigma {sigma:.2}"
        );
    }
}

// The silhouette's gradient peak lies outside the base's outline by a share of the
// camera's blur: 0.45 mm where a millimetre spans a pixel or less (1080p), 0.45 px beyond
// (`BaseShape::silhouette_bias_mm`). Held at 0.45 mm at 4K (1.4-1.9 px per mm on seed 31)
// it put the silhouette twice as far out as it shows, and the small bases, whose side
// facing the camera rests on its silhouette, lay further from the camera than they stand:
// seed 31's four found with the true camera 0.42 mm RMS off (s1 0.57), now 0.32.
#[test]
fn the_silhouettes_bias_is_a_share_of_a_pixel_at_4k() {
    let (truth, scene) = detected_at(31, Resolution::Uhd4k);
    let s = score(&truth.scene, &scene, Models::builtin());
    let small: Vec<f64> = s
        .ships
        .iter()
        .filter(|m| m.size == BaseSize::Small && m.centre_error_mm < 1.0)
        .map(|m| m.centre_error_mm)
        .collect();
    eprintln!("small bases' centre errors: {small:.2?}");
    assert!(small.len() >= 4, "{small:?}");
    let rms = (small.iter().map(|e| e * e).sum::<f64>() / small.len() as f64).sqrt();
    assert!(rms <= 0.37, "small bases {rms:.2} mm RMS off");
}

/// A fit with a second minimum says so. Through the camera as calibrated from its own
/// rendered ChArUco views and mat markers (the fixture, made by scripts/detect-report.sh;
/// 0.05 mm from the truth at this ship), seed 21's s7 settles 3.9 deg off while its
/// covariance says 0.8 deg; started again 2 deg turned it settles 0.4 deg from the truth.
/// The edges do not say which is right, so its heading sigma covers both and the judge is
/// told to look. (With the true camera the fit lands right, hence the fixture.)
#[test]
fn a_heading_with_a_second_minimum_is_doubted() {
    let (truth, scene) = detected_through(21, "seed21-1080p-calibrated");
    let s = score(&truth.scene, &scene, Models::builtin());
    let m = s
        .ships
        .iter()
        .find(|m| m.id == "s7")
        .unwrap_or_else(|| panic!("s7 not found: missed {:?}", s.missed_ships));
    let (sigma_deg, confidence) = (
        m.sigma_deg.expect("sigma_deg"),
        m.confidence.expect("confidence"),
    );
    eprintln!(
        "s7: {:.2} mm, {:+.2} deg off; sigma {:.2} deg, confidence {confidence:.2}",
        m.centre_error_mm, m.heading_error_deg, sigma_deg
    );
    assert_eq!(m.size, m.found_size);
    assert!(
        m.centre_error_mm < 1.5,
        "s7 {:.2} mm off",
        m.centre_error_mm
    );
    assert!(
        m.heading_error_deg.abs() <= sigma_deg,
        "s7 {:+.2} deg off with a heading sigma of {sigma_deg:.2}",
        m.heading_error_deg
    );
    if m.heading_error_deg.abs() > 1.5 {
        assert!(
            confidence < hashmark::judge::UNSURE_CONFIDENCE,
            "s7 {:+.2} deg off and not flagged (confidence {confidence:.2})",
            m.heading_error_deg
        );
    }
    // The others keep their headings' sigmas honest too (none more than 3 sigma off).
    for o in s
        .ships
        .iter()
        .filter(|o| o.sigma_mm.is_some_and(|v| v < 3.0))
    {
        let sd = o.sigma_deg.unwrap_or(0.0);
        assert!(
            o.heading_error_deg.abs() <= 3.0 * sd,
            "{}: {:+.2} deg off, sigma {sd:.2}",
            o.id,
            o.heading_error_deg
        );
    }
}

/// Four pairs of ships in contact, as after a bump or in formation (the rendered sets keep
/// every two items 8 mm or more apart, so they have none): two small bases side by side,
/// a small base's front guides on a medium base's side, a small base's corner on a large
/// base's side, two medium bases side by side a quarter of a side offset.
fn ships_in_contact() -> Vec<hashmark::scene::ShipSpec> {
    let h = 30f64.to_radians();
    let right = [h.sin(), -h.cos()];
    let (cx, cy) = (300.0, 640.0);
    // The small base's diagonal along the large one's right side's normal, corner 0.1 mm off.
    let d = 40.0 + 20.0 * std::f64::consts::SQRT_2 + 0.1;
    vec![
        common::ship("a1", BaseSize::Small, 300.0, 300.0, 90.0),
        common::ship("a2", BaseSize::Small, 340.1, 300.0, 90.0),
        common::ship("b1", BaseSize::Small, 600.0, 300.0, 0.0),
        common::ship("b2", BaseSize::Medium, 651.7, 300.0, 90.0),
        common::ship("c1", BaseSize::Large, cx, cy, 30.0),
        common::ship(
            "c2",
            BaseSize::Small,
            cx + d * right[0],
            cy + d * right[1],
            75.0,
        ),
        common::ship("d1", BaseSize::Medium, 600.0, 620.0, 0.0),
        common::ship("d2", BaseSize::Medium, 612.0, 680.1, 0.0),
    ]
}

// Ships in contact are a known weakness: where two bases touch, the side between them
// shows no silhouette (black on black), two aligned small bases look like one 80 x 40 mm
// outline along which a square slides, and the two miniatures' blobs crowd one another.
// Measured on these four tables (true camera, seeds 42-45): of 32 ships 17 found within
// 2 mm, 9 found 2.5-14.7 mm off (all doubted), 6 with no base within 15 mm (seed 42's two
// side by side got one doubted base between them; seed 43 lost one of each pair, two of
// them wholly under their miniatures). Of the 6 missed, one (seed 43's c2, under its
// miniature) is outlined for the judge as a miniature with no base (see
// `vision::detect::hidden`); seed 43's d2 would be too, but its miniature's body takes in
// part of d1's, and an outline over a found base is not reported. What a judge relies on holds: no base reported without doubt is more than 2 mm
// off or of the wrong size. (Seed 42's medium beside a small base's guides took that base's
// front edge for its own side and was reported 2.49 mm off with confidence 0.72, until a
// fit whose axis shows one side only and no hashmark was doubted, see
// `FoundBase::is_weak`; before token edges under a miniature were left out of the final
// fit, the same medium lost the overlap test to a doubted small square inside it, and 18
// were within 2 mm.) Rejecting a doubted base that overlaps another by more than 2-4 mm
// (instead of by centre distance) removed three invented bases on the rendered sets but
// lost three of these, so it was not kept.
#[test]
fn ships_in_contact_are_found_or_doubted() {
    use hashmark::judge::UNSURE_CONFIDENCE;
    let (mut close, mut total, mut missed, mut missed_outlined) = (0, 0, 0, 0);
    let mut confident_wrong = Vec::new();
    for seed in [42u64, 43, 44, 45] {
        let mut scene = common::scene();
        scene.ships = ships_in_contact();
        let found = built_and_detected(&scene, seed);
        for want in &scene.ships {
            total += 1;
            let near = found
                .ships
                .iter()
                .map(|g| (g.x - want.x).hypot(g.y - want.y))
                .fold(f64::INFINITY, f64::min);
            let outlined = found.obstacles.iter().any(|o| {
                o.quality
                    .doubts
                    .contains(&hashmark::scene::Doubt::HiddenBase)
                    && o.polygon.as_ref().is_some_and(|p| {
                        hashmark::geometry::polygon::ring_contains(p, [want.x, want.y])
                    })
            });
            eprintln!(
                "seed {seed} {}: nearest found {near:.2} mm, outlined {outlined}",
                want.id
            );
            if near <= 2.0 {
                close += 1;
            }
            if near > 15.0 {
                missed += 1;
                if outlined {
                    missed_outlined += 1;
                }
            }
        }
        for got in &found.ships {
            let (err, want) = scene
                .ships
                .iter()
                .map(|w| ((got.x - w.x).hypot(got.y - w.y), w))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .expect("ships");
            let confidence = got.quality.confidence.unwrap_or(0.0);
            if confidence >= UNSURE_CONFIDENCE && (err > 2.0 || got.size != want.size) {
                confident_wrong.push((seed, got.id.clone(), err, confidence));
            }
        }
    }
    eprintln!(
        "{close} of {total} found within 2 mm; {missed} missed, {missed_outlined} of them outlined; confident and wrong: {confident_wrong:.2?}"
    );
    assert!(confident_wrong.is_empty(), "{confident_wrong:.2?}");
    assert!(close >= 17, "{close} of {total} within 2 mm (17 measured)");
    assert!(
        missed_outlined >= 1,
        "{missed_outlined} of {missed} missed outlined (1 measured)"
    );
}

// A pale miniature over a base's rim shows a step of the token edge's polarity, and fits
// followed it: on the fixed set (calibrated from images) seed 11's s5 was 3.55 deg off
// with confidence 0.95, on the second set seed 45's s4 3.72 deg off with 0.70. Token
// edges with something brighter than any print inside them are now left out of the final
// fit (`BaseShape::print_max_level`). Measured with the true camera, before: s5 2.25 deg
// off (doubted), s4 3.74 deg off with sigma 0.40 deg and confidence 0.68; now s5 0.44 deg
// off, s4 3.40 deg off and doubted (confidence 0.29, sigma 8 deg).
#[test]
fn a_miniature_over_the_rim_is_not_taken_for_the_token_edge() {
    let models = Models::builtin();
    let found = |seed: u64, id: &str| {
        let (truth, scene) = detected(seed);
        let s = score(&truth.scene, &scene, models);
        let m = s
            .ships
            .iter()
            .find(|m| m.id == id)
            .unwrap_or_else(|| panic!("seed {seed}: {id} not found"))
            .clone();
        eprintln!(
            "seed {seed} {id}: {:.2} mm, {:+.2} deg off; sigma {:?} deg, confidence {:?}",
            m.centre_error_mm, m.heading_error_deg, m.sigma_deg, m.confidence
        );
        m
    };
    let s5 = found(11, "s5");
    assert!(
        s5.heading_error_deg.abs() < 1.0,
        "seed 11 s5 {:+.2} deg",
        s5.heading_error_deg
    );
    let s4 = found(45, "s4");
    let confidence = s4.confidence.unwrap_or(0.0);
    assert!(
        s4.heading_error_deg.abs() < 1.0 || confidence < hashmark::judge::UNSURE_CONFIDENCE,
        "seed 45 s4 {:+.2} deg off with confidence {confidence:.2}",
        s4.heading_error_deg
    );
}

// Where a small base's side spans few pixels (seed 130's far corner: 22-24 px at 1080p) its
// rim is about one pixel wide and the fit's covariance says little of the heading: before
// the heading sigma had a floor by pixels per side (`resolution_sigma_deg`), seed 130's s1
// was 2.25 deg off with sigma 0.27 deg and confidence 0.80 (8 sigma). Every base this
// table gives a sigma under 3 mm must now have its heading error within 3 sigma.
#[test]
fn a_base_few_pixels_wide_says_its_heading_is_uncertain() {
    let models = Models::builtin();
    let (truth, scene) = detected(130);
    let s = score(&truth.scene, &scene, models);
    let mut checked = 0;
    for m in &s.ships {
        let (Some(sigma_mm), Some(sigma_deg)) = (m.sigma_mm, m.sigma_deg) else {
            continue;
        };
        eprintln!(
            "{}: {:.2} mm, {:+.2} deg off; sigma {sigma_mm:.2} mm, {sigma_deg:.2} deg",
            m.id, m.centre_error_mm, m.heading_error_deg
        );
        if sigma_mm < 3.0 {
            checked += 1;
            assert!(
                m.heading_error_deg.abs() <= 3.0 * sigma_deg,
                "{}: {:+.2} deg off with sigma {sigma_deg:.2} deg",
                m.id,
                m.heading_error_deg
            );
        }
    }
    let s1 = s.ships.iter().find(|m| m.id == "s1").expect("s1 found");
    assert!(
        s1.sigma_mm.is_some_and(|v| v < 3.0),
        "s1 is no longer measured: {s1:?}"
    );
    assert!(checked >= 2, "{checked} bases measured");
}

// Seed 67's s2 (second rendered set), a medium base in plain view but for its front's
// middle: its outline fit settled 1.94 deg off (its rim pulled to 1.1 mm against 2.0) with
// sigma 0.26 deg and confidence 1.00 (camera calibrated from its images), while its arc
// lines, all four stretches in view, said 1.88 deg the other way; lines that disagree with
// the outline were dropped without a word. They then marked the heading as doubted
// (`SecondHeading`) with a sigma as wide as they differ; on the fixed, second and 4K sets
// this was the only base they disagreed on. Since the thirty-fourth session the outline's
// heading sigma covers how far its fit turns on the token edges beside dark print alone
// (`bases::dark_print_turn`), against which the lines agree, and the two are fused: 0.10
// deg off, sigma 0.10 deg, confidence 1.00 (the centre, fused with the lines' crossing,
// 0.01 mm off). Either way the heading must lie within its sigma, and a heading more than
// a degree off must be doubted.
#[test]
fn arc_lines_that_disagree_with_the_outline_doubt_its_heading() {
    use hashmark::scene::Doubt;
    let models = Models::builtin();
    let (truth, scene) = detected(67);
    let s = score(&truth.scene, &scene, models);
    let m = s
        .ships
        .iter()
        .find(|m| m.id == "s2")
        .expect("seed 67's s2 found");
    let sigma = m.sigma_deg.unwrap_or(0.0);
    let confidence = m.confidence.unwrap_or(1.0);
    eprintln!(
        "seed 67 s2: {:+.2} deg off, sigma {sigma:.2} deg, confidence {confidence:.2}, {:?}",
        m.heading_error_deg, m.doubts
    );
    assert!(
        m.heading_error_deg.abs() <= 1.5 * sigma.max(0.0),
        "{:+.2} deg off with sigma {sigma:.2}",
        m.heading_error_deg
    );
    if m.heading_error_deg.abs() > 1.0 {
        assert!(
            confidence < hashmark::judge::UNSURE_CONFIDENCE
                && m.doubts.contains(&Doubt::SecondHeading),
            "{:+.2} deg off: confidence {confidence:.2}, doubts {:?}",
            m.heading_error_deg,
            m.doubts
        );
    }
}

// Seed 120's s2 (the third rendered set) is a small base at the play area's edge under a
// pale miniature: with the token edges under the miniature left out, its fit kept a line
// 1-4 mm inside the token along one side and was reported 2.5 mm and 6.9 deg off with
// confidence 0.73 (true camera). Fitted again with those edges taken in it turns 2.6 deg,
// and a heading that two plausible readings put that far apart is doubted
// (`unmasked_turn`).
#[test]
fn a_fit_that_turns_when_the_miniatures_edges_are_taken_in_is_doubted() {
    let models = Models::builtin();
    let (truth, scene) = detected(120);
    let s = score(&truth.scene, &scene, models);
    let m = s.ships.iter().find(|m| m.id == "s2").expect("s2 found");
    let confidence = m.confidence.unwrap_or(0.0);
    eprintln!(
        "seed 120 s2: {:.2} mm, {:+.2} deg off; sigma {:?} deg, confidence {confidence:.2}",
        m.centre_error_mm, m.heading_error_deg, m.sigma_deg
    );
    assert!(
        (m.centre_error_mm < 1.0 && m.heading_error_deg.abs() < 1.5)
            || confidence < hashmark::judge::UNSURE_CONFIDENCE,
        "seed 120 s2: {:.2} mm, {:+.2} deg off with confidence {confidence:.2}",
        m.centre_error_mm,
        m.heading_error_deg
    );
}

/// A stream whose full search runs beside the re-fits (as for a live camera): frames do
/// not wait for the search, a ship that rolled is found at its new place once a search of
/// a frame after the roll has joined, and ships a hand has just covered are not dropped
/// before a search has seen the hand (with the tracker's fixed 15 frames, two of seed 4's
/// seven went at the 16th frame: frames come many times faster than searches). Rendered:
/// seed 4's two-frame sequence at 1280 x 720 (the rolling ship before and after its roll;
/// a hand 450 mm to one side of it, then to the other).
#[test]
fn a_search_beside_the_refits_finds_a_rolled_ship_without_holding_up_frames() {
    let models = Models::builtin();
    let dir = tempfile::tempdir().expect("temp dir");
    let truth = simulate(
        &SimOptions {
            seed: 4,
            resolution: Resolution::Custom(1280, 720),
            frames: Some(2),
            charuco_views: 0,
            supersample: 1,
        },
        dir.path(),
    )
    .expect("render");
    let frames: Vec<Mat> = truth
        .frames
        .iter()
        .map(|f| {
            cv::decode(&std::fs::read(dir.path().join(&f.file)).expect("frame")).expect("decode")
        })
        .collect();
    let (before, after) = (&truth.frames[0].scene, &truth.frames[1].scene);
    let rolled = after
        .ships
        .iter()
        .find(|s| {
            before
                .ships
                .iter()
                .any(|b| b.id == s.id && (b.x - s.x).hypot(b.y - s.y) > 5.0)
        })
        .expect("the sequence rolls a ship");
    let nearest = |scene: &hashmark::scene::Scene, x: f64, y: f64| {
        scene
            .ships
            .iter()
            .filter(|s| s.size == rolled.size)
            .map(|s| ((s.x - x).hypot(s.y - y), [s.x, s.y]))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    };
    let near = |scene: &hashmark::scene::Scene, p: [f64; 2]| {
        nearest(scene, p[0], p[1]).map_or(f64::INFINITY, |n| n.0)
    };
    let old = before
        .ships
        .iter()
        .find(|s| s.id == rolled.id)
        .expect("before");
    // Where a stream that searches every frame itself puts the rolling ship before and
    // after: the reference (detection's accuracy is not what this checks).
    let settled = |frame: &Mat| {
        let mut s = Stream::new(
            Detector::new(calibrated(&truth), models).expect("detector"),
            1,
        );
        s.push(frame).expect("frame");
        s.push(frame).expect("frame").scene
    };
    let (was, now) = (settled(&frames[0]), settled(&frames[1]));
    let (d0, was) = nearest(&was, old.x, old.y).expect("the rolling ship before its roll");
    let (d1, now) = nearest(&now, rolled.x, rolled.y).expect("the rolling ship after its roll");
    eprintln!("searched every frame: {d0:.2} mm from the truth before the roll, {d1:.2} after");
    assert!(
        (was[0] - now[0]).hypot(was[1] - now[1]) > 10.0,
        "the roll moves the ship"
    );

    let mut stream = Stream::beside(Detector::new(calibrated(&truth), models).expect("detector"))
        .expect("stream");
    // The first frame is searched where it is (a stream starts with what is on the table).
    assert!(stream.push(&frames[0]).expect("frame").full);
    let seen = stream.push(&frames[0]).expect("frame");
    assert!(
        !seen.full,
        "the second frame is re-fitted, its search runs beside"
    );
    assert!(
        near(&seen.scene, was) < 0.5,
        "the rolling ship before its roll: {:.2} mm from the reference",
        near(&seen.scene, was)
    );
    let confirmed = seen.scene.ships.len();
    // The roll. Frames come every 10 ms; a search takes far longer, so frames are re-fitted
    // while it runs, and it joins some frame later. The search in hand at the roll was
    // given a frame before it: the second one to join has seen the ship's new place.
    let (mut joined, mut refitted, mut pushed) = (0, 0, 0);
    let mut last = seen.scene;
    while joined < 2 {
        let f = stream.push(&frames[1]).expect("frame");
        pushed += 1;
        if f.full {
            joined += 1;
        } else {
            refitted += 1;
        }
        // No flicker: the ships that stayed stay in every frame.
        assert!(
            f.scene.ships.len() + 1 >= confirmed,
            "frame {pushed}: {} ships of {confirmed}",
            f.scene.ships.len()
        );
        last = f.scene;
        assert!(pushed < 20_000, "no search joined in {pushed} frames");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(
        refitted >= 1,
        "{refitted} frames re-fitted while the search ran"
    );
    // The tracker believes a ship on its second sighting.
    for _ in 0..2 {
        last = stream.push(&frames[1]).expect("frame").scene;
    }
    let d = near(&last, now);
    eprintln!(
        "{pushed} frames to two joins ({refitted} re-fitted); the rolled ship {d:.2} mm from the reference"
    );
    assert!(d < 0.5, "the rolled ship is {d:.2} mm from the reference");
}

/// Seed `seed`'s random table (as `simulate` makes it) photographed at `resolution` after
/// `edit` has changed its world: the scene, the true camera and the decoded frame. For
/// what the simulator does not vary on its own (bare bases, dark miniatures).
fn photographed_with(
    seed: u64,
    resolution: Resolution,
    edit: impl FnOnce(&mut hashmark::vision::sim::world::World),
) -> (
    hashmark::scene::Scene,
    hashmark::vision::camera::Camera,
    Mat,
) {
    use hashmark::vision::sim::scene_gen::random_scene;
    use hashmark::vision::sim::{camera_for, photograph, world::World};
    let models = Models::builtin();
    let scene = random_scene(seed, models);
    let camera = camera_for(seed, resolution, [914.4, 914.4]);
    let mut world = World::build(&scene, seed, seed, models).expect("world");
    edit(&mut world);
    let jpg = photograph(&world, &camera, seed, 3).expect("render");
    (scene, camera, cv::decode(&jpg).expect("decode"))
}

/// Seed `seed`'s 1080p table photographed after `edit` (see `photographed_with`), and what
/// detection finds in it with the true camera.
fn detected_with(
    seed: u64,
    edit: impl FnOnce(&mut hashmark::vision::sim::world::World),
) -> (hashmark::scene::Scene, hashmark::scene::Scene) {
    let (scene, camera, frame) = photographed_with(seed, Resolution::Hd1080, edit);
    let calibrated = Calibrated {
        camera,
        play_area: scene.play_area,
        layout: hashmark::calibration::Layout::builtin(),
        sigma_mm: 0.05,
    };
    let found = Detector::new(calibrated, Models::builtin())
        .expect("detector")
        .detect(&frame)
        .expect("detect");
    (scene, found)
}

/// A change made to a table's world before it is photographed (see `detected_with`).
type WorldEdit = fn(&mut hashmark::vision::sim::world::World);

/// Every miniature painted near black (sRGB 35, 35, 40): under the table's light it shows
/// mid-grey, darker than the miniature mask takes out.
fn darken_miniatures(world: &mut hashmark::vision::sim::world::World) {
    for s in &mut world.ships {
        s.mini.colour = hashmark::vision::sim::texture::srgb(35, 35, 40);
    }
}

/// Every miniature, its peg and the clutter taken off the table: bare bases.
fn lift_miniatures(world: &mut hashmark::vision::sim::world::World) {
    for s in &mut world.ships {
        s.mini.centre = nalgebra::Vector3::new(-1e6, -1e6, -1e3);
        s.mini.radius = 1.0;
        s.peg_radius = 0.0;
    }
    world.clutter.clear();
}

/// Dark miniatures (sRGB 35, 35, 40; lit, they show mid-grey, below the brightness the
/// miniature mask takes out) leave the base search free to settle on a miniature's outline.
/// On seed 10 two such fits, 6.1 and 6.2 mm off, were reported with confidences of 0.93
/// and 0.77: noise on the dark print under them passed for hashmarks, less than two units
/// (linear light) brighter than their flanks, while the least contrast counted was zero.
/// They are still 6 mm off (the search has no start but the miniature's blob); every ship
/// found more than 1.5 mm off must be flagged for the judge.
#[test]
fn a_fit_on_a_dark_miniatures_outline_is_not_confident() {
    let (scene, found) = detected_with(10, darken_miniatures);
    let matches = score(&scene, &found, Models::builtin()).ships;
    for m in &matches {
        eprintln!(
            "{} {:?}: {:.2} mm off, confidence {:?}",
            m.id, m.found_size, m.centre_error_mm, m.confidence
        );
    }
    let wrong: Vec<_> = matches
        .iter()
        .filter(|m| {
            m.centre_error_mm > 1.5
                && m.confidence
                    .is_some_and(|c| c >= hashmark::judge::UNSURE_CONFIDENCE)
        })
        .map(|m| &m.id)
        .collect();
    assert!(
        matches.len() * 2 >= scene.ships.len(),
        "the dark table is hardly found: {} of {}",
        matches.len(),
        scene.ships.len()
    );
    assert!(wrong.is_empty(), "confident and wrong: {wrong:?}");
}

/// Detection on what the simulator does not vary on its own, with the true camera: the
/// random 1080p tables of seeds 1-30 with every miniature painted near black
/// (`darken_miniatures`), and with the miniatures lifted off (`lift_miniatures`). Prints,
/// per table kind, ships found, missed and invented (and of the invented how many are not
/// flagged for the judge), the bases not flagged and their centre and heading RMS, and
/// those not flagged but more than 1.5 mm or 1.5 deg off or facing wrong. Measured in the
/// twenty-eighth session: dark miniatures 133 found, 28 missed, 23 invented (one not
/// flagged); 75 not flagged at 0.32 mm and 0.52 deg RMS, one of them wrong (seed 2's s4,
/// 1.56 mm, 2.0 deg). Bare bases 142 found, 19 missed, 12 invented (one not flagged); 128
/// not flagged at 0.87 mm and 0.22 deg RMS, one wrong (seed 19's s5, 9.7 mm, confidence
/// 0.85). The blob the search starts from is then the token's print, and the base lies
/// outside the window searched under a miniature's height. Searching about the blob too
/// (twenty-ninth session; a fit there counts only where it is sure, see `Search::search`,
/// so seed 119's hidden miniature stays outlined, and reads its facing without the
/// miniature mask): dark miniatures 142 found, 19 missed, 18 invented (one not flagged);
/// 86 not flagged at 0.34 mm and 0.51 deg RMS, the same one wrong. Bare bases 157 found,
/// 4 missed, 6 invented (one not flagged); 151 not flagged at 0.80 mm and 0.25 deg RMS,
/// the same one wrong. Since a rim seen along one axis no longer vouches for the other
/// (test `a_rim_seen_along_one_axis_does_not_vouch_for_the_other`): dark miniatures 17
/// invented, the rest as before; bare bases 151 not flagged at 0.17 mm RMS, none wrong.
/// Since whole grey miniatures are searched where their blobs are only their lit rims
/// (test `a_grey_miniature_wider_than_its_surround_is_searched_whole`, thirtieth
/// session): dark miniatures 147 found, 14 missed, 15 invented (one not flagged); 95 not
/// flagged at 0.34 mm and 0.50 deg RMS, the same one wrong; no base that was found within
/// 1 mm, facing right and not flagged was lost (compared table by table, both kinds). Bare bases 157 found, 152 not
/// flagged at 0.17 mm and 0.25 deg RMS, none wrong.
/// `cargo test --test detect_ships -- --ignored --nocapture dark_miniatures_and_bare`
#[test]
#[ignore]
fn dark_miniatures_and_bare_bases() {
    let unsure = hashmark::judge::UNSURE_CONFIDENCE;
    let edits: [(&str, WorldEdit); 2] = [
        ("dark miniatures", darken_miniatures),
        ("bare bases", lift_miniatures),
    ];
    let mut measured = Vec::new();
    for (kind, edit) in edits {
        let (mut found, mut missed, mut invented, mut invented_sure) = (0, 0, 0, 0);
        let (mut centre, mut heading) = (Vec::new(), Vec::new());
        let mut wrong = Vec::new();
        for seed in 1..=30 {
            let (truth, scene) = detected_with(seed, edit);
            let s = score(&truth, &scene, Models::builtin());
            found += s.ships.len();
            missed += s.missed_ships.len();
            invented += s.false_ships;
            invented_sure += s
                .false_ship_confidences
                .iter()
                .filter(|c| c.is_some_and(|c| c >= unsure))
                .count();
            for m in s
                .ships
                .iter()
                .filter(|m| m.confidence.is_some_and(|c| c >= unsure))
            {
                centre.push(m.centre_error_mm);
                heading.push(m.heading_error_deg);
                if m.centre_error_mm > 1.5 || m.heading_error_deg.abs() > 1.5 || !m.facing_right {
                    wrong.push(format!(
                        "seed {seed} {}: {:.2} mm, {:.2} deg, facing {}, confidence {:?}",
                        m.id, m.centre_error_mm, m.heading_error_deg, m.facing_right, m.confidence
                    ));
                }
            }
        }
        eprintln!(
            "{kind}: {found} found, {missed} missed, {invented} invented ({invented_sure} not flagged); \
             not flagged {}: centre RMS {:.2} mm, heading RMS {:.2} deg; not flagged and wrong {}:",
            centre.len(),
            rms(&centre),
            rms(&heading),
            wrong.len()
        );
        for w in &wrong {
            eprintln!("  {w}");
        }
        measured.push((kind, found, wrong.len(), invented_sure));
    }
    // No worse than measured (see above): of 161 ships, 150 and 158 found; no base not
    // flagged but wrong (one dark-miniature base, 1.56 mm off, until the thirty-fourth
    // session's facing vote and dark-print turn; not flagged then 92 of them, 0.27 mm and
    // 0.43 deg RMS, from 96, 0.34 and 0.50), one invented ship not flagged at most.
    for ((kind, found, wrong, invented), (least, most)) in measured.iter().zip([(150, 0), (158, 0)])
    {
        assert!(
            *found >= least && *wrong <= most && *invented <= 1,
            "{kind}: {found} found, {wrong} not flagged but wrong, {invented} invented not flagged"
        );
    }
}

/// Renders seed `seed`'s random table with every miniature shrunk to a speck, fits each
/// true base from two starts 0.4 mm and 0.8 deg off either way with the final settings,
/// and reads its arc lines: per fit (size, outline heading error, arc-line heading error
/// where the lines show), in degrees modulo 90.
fn unhidden_fits(seed: u64, resolution: Resolution) -> Vec<(BaseSize, f64, Option<f64>)> {
    use hashmark::vision::detect::base_fit::{BaseGuess, BaseShape, fit_base};
    use hashmark::vision::detect::token_lines::line_turn;
    let models = Models::builtin();
    let shape = BaseShape::from_models(models);
    let (scene, camera, frame) = photographed_with(seed, resolution, |world| {
        for s in &mut world.ships {
            (s.mini.a, s.mini.b, s.mini.hz, s.mini.radius) = (0.3, 0.3, 0.3, 0.5);
        }
    });
    let grey = hashmark::vision::edges::Grey::from_mat(&frame).expect("grey");
    let off90 = |deg: f64| {
        let e = deg.rem_euclid(90.0);
        if e > 45.0 { e - 90.0 } else { e }
    };
    let mut out = Vec::new();
    for t in &scene.ships {
        let half = models.bases.get(t.size).width_mm / 2.0;
        for (d, turn) in [(0.4, 0.8), (-0.4, -0.8)] {
            let guess = BaseGuess {
                centre: [t.x + d, t.y - d],
                angle: (t.heading_deg + turn).to_radians(),
                half,
            };
            let fit = fit_base(&grey, &camera, &shape, guess, 0.5).expect("a fit");
            let edge = off90(fit.angle.to_degrees() - t.heading_deg);
            let lines = line_turn(&grey, &camera, &fit, shape.height_mm, None)
                .map(|l| off90(fit.angle.to_degrees() + l.turn.to_degrees() - t.heading_deg));
            out.push((t.size, edge, lines));
        }
    }
    out
}

fn rms(v: &[f64]) -> f64 {
    (v.iter().map(|x| x * x).sum::<f64>() / v.len().max(1) as f64).sqrt()
}

/// How well a base's heading is found when nothing hides it, by its outline alone and by
/// its token's arc lines (vision::detect::token_lines): the random tables of seeds 1-6
/// (1080p) and 1-2 (4K), see `unhidden_fits`. Both starts of the outline fit settle on the
/// same heading (within 0.1 deg but for two, 0.18 and 0.26), so what remains is the edge
/// model's own error on the token's print and the mat beside the base, not the optimiser.
/// Measured, outline: small bases 0.48 deg RMS at 1080p (27-37 px per side; single bases
/// up to 1.1 deg), medium 0.12, large 0.15; small 0.20 at 4K. So at 1080p the issue's 0.3
/// deg is out of the outline's reach for small bases even unhidden. The arc lines, on the
/// same fits, show on every one: small 0.26 deg RMS at 1080p, medium 0.07, large 0.03;
/// small 0.09 at 4K. (Weighing edge
/// points away from the rim less, `art_bias_scale`, is near its best: 0.42-0.48 for
/// 0.5-1.5, 0.86 without it.)
/// `cargo test --release --test detect_ships -- --ignored --nocapture the_fit_alone`
#[test]
#[ignore]
fn the_fit_alone_on_bases_without_miniatures() {
    let by_size = |resolution: Resolution, seeds: std::ops::Range<u64>| {
        let fits: Vec<_> = seeds.flat_map(|s| unhidden_fits(s, resolution)).collect();
        [BaseSize::Small, BaseSize::Medium, BaseSize::Large].map(|size| {
            let of: Vec<_> = fits.iter().filter(|f| f.0 == size).collect();
            let edge: Vec<f64> = of.iter().map(|f| f.1).collect();
            let lines: Vec<f64> = of.iter().filter_map(|f| f.2).collect();
            let edge_lined: Vec<f64> = of.iter().filter(|f| f.2.is_some()).map(|f| f.1).collect();
            eprintln!(
                "{resolution:?} {size:?}: {} fits, outline heading RMS {:.2} deg; arc lines on {}: {:.2} deg (outline on those {:.2})",
                of.len(),
                rms(&edge),
                lines.len(),
                rms(&lines),
                rms(&edge_lined)
            );
            (of.len(), rms(&edge), lines.len(), rms(&lines))
        })
    };
    let hd = by_size(Resolution::Hd1080, 1..7);
    assert!(hd.iter().all(|(n, ..)| *n > 0), "every size fitted: {hd:?}");
    // Regression bounds a little over what is measured (see above).
    assert!(hd[0].1 <= 0.6, "small at 1080p: {:.2} deg", hd[0].1);
    assert!(hd[1].1 <= 0.3 && hd[2].1 <= 0.3, "medium, large: {hd:?}");
    assert!(
        hd.iter().all(|(n, _, lined, _)| *lined * 10 >= *n * 8),
        "lines shown: {hd:?}"
    );
    assert!(
        hd[0].3 <= 0.33,
        "small at 1080p by its lines: {:.2} deg",
        hd[0].3
    );
    assert!(
        hd[1].3 <= 0.12 && hd[2].3 <= 0.12,
        "medium, large by their lines: {hd:?}"
    );
    let uhd = by_size(Resolution::Uhd4k, 1..3);
    assert!(uhd[0].1 <= 0.3, "small at 4K: {:.2} deg", uhd[0].1);
    assert!(
        uhd[0].3 <= 0.15,
        "small at 4K by its lines: {:.2} deg",
        uhd[0].3
    );
}

/// The token's arc lines on one table with nothing hiding them (seed 3 at 1080p, see
/// `unhidden_fits`): they show on most bases and give a heading nearer the truth than the
/// outline's. The ignored test above measures this over six tables and 4K.
#[test]
fn the_arc_lines_turn_an_unhidden_base_nearer_its_heading() {
    let fits = unhidden_fits(3, Resolution::Hd1080);
    let lined: Vec<_> = fits.iter().filter(|f| f.2.is_some()).collect();
    let edge: Vec<f64> = lined.iter().map(|f| f.1).collect();
    let lines: Vec<f64> = lined.iter().filter_map(|f| f.2).collect();
    eprintln!(
        "{} of {} fits show their lines; heading RMS by the outline {:.2} deg, by the lines {:.2}",
        lined.len(),
        fits.len(),
        rms(&edge),
        rms(&lines)
    );
    assert!(
        lined.len() * 10 >= fits.len() * 8,
        "{} of {}",
        lined.len(),
        fits.len()
    );
    assert!(
        rms(&lines) <= 0.3 && rms(&lines) < rms(&edge),
        "{lines:?} against {edge:?}"
    );
}

// A miniature that hides its whole base leaves no base to fit; before, such a ship was
// missed without a word (11 of the 18 missed on the four rendered sets). Its miniature is
// now reported as an outline with the doubt `hidden_base`, which the rules treat as an
// obstacle and a judge is told to check by eye. Seed 8's s2 (large), 65's s4 and 119's s6
// (small) are such ships; seed 125's pale blue-grey planet passed for one until the
// body's tint was weighed (mean chroma 0.29 against at most 0.19 on the miniatures; the
// test fails without it). Seed 6's s1 (medium) and 109's s1 (medium) stand under
// miniatures painted a darker grey (sRGB 120-140) than the miniature mask takes; their
// bright blobs are outlined instead (`HIDDEN_BLOB_MAX_CHROMA`; fails without). Since the
// twenty-third session seed 6's s1 is found instead, 0.1 mm off, by a fit its hashmark
// lets count (`a_fit_with_little_outline_counts_where_its_hashmark_shows`): found within
// 1 mm counts as well as outlined. An outline
// says where the miniature stands to 10 mm (its sigma), and 109's lies 6 mm beside the
// base's centre: "over" a ship means its centre lies inside or that near, as the
// accuracy report counts it.
#[test]
fn a_miniature_hiding_its_whole_base_is_outlined_for_the_judge() {
    use hashmark::geometry::polygon::{ring_contains, ring_distance};
    use hashmark::scene::Doubt;
    let mut outlined = Vec::new();
    for (seed, hidden) in [
        (6, Some("s1")),
        (8, Some("s2")),
        (65, Some("s4")),
        (109, Some("s1")),
        (119, Some("s6")),
        (125, None),
    ] {
        let (truth, scene) = detected(seed);
        let outlines: Vec<(&str, &Vec<[f64; 2]>)> = scene
            .obstacles
            .iter()
            .filter(|o| o.quality.doubts.contains(&Doubt::HiddenBase))
            .filter_map(|o| Some((o.id.as_str(), o.polygon.as_ref()?)))
            .collect();
        // Every such outline stands over a true ship that no found ship stands for.
        for (id, ring) in &outlines {
            let under: Vec<&str> = truth
                .scene
                .ships
                .iter()
                .filter(|t| {
                    ring_contains(ring, [t.x, t.y]) || ring_distance([t.x, t.y], ring) <= 10.0
                })
                .filter(|t| {
                    !scene
                        .ships
                        .iter()
                        .any(|s| (s.x - t.x).hypot(s.y - t.y) < 15.0)
                })
                .map(|t| t.id.as_str())
                .collect();
            eprintln!("seed {seed}: {id} over missed ships {under:?}");
            assert!(
                !under.is_empty(),
                "seed {seed}: {id} outlines no missed ship"
            );
            outlined.extend(under.iter().map(|u| (seed, u.to_string())));
        }
        if let Some(want) = hidden {
            let t = truth_ship(&truth, want);
            let found = scene
                .ships
                .iter()
                .any(|s| (s.x - t.x).hypot(s.y - t.y) < 1.0);
            assert!(
                found || outlined.contains(&(seed, want.to_string())),
                "seed {seed}: {want} is neither found nor outlined"
            );
        }
    }
}

// The base search starts from bright blobs; a grey miniature on bright art (seed 118's s1,
// a small ship on a yellow planet, its base in plain view) is no brighter than what lies
// around it and made none, so the base was never looked for. Grey-white bodies of the
// miniature mask that no bright blob is near now start a search too: s1 is found.
#[test]
fn a_grey_miniature_on_bright_art_is_searched_under() {
    let (truth, scene) = detected(118);
    let want = truth_ship(&truth, "s1");
    let got = nearest_ship(&scene, want.x, want.y).expect("ships");
    let err = (got.x - want.x).hypot(got.y - want.y);
    eprintln!(
        "seed 118 s1: nearest found {} {:?} {err:.2} mm off, confidence {:?}",
        got.id, got.size, got.quality.confidence
    );
    assert!(
        err < 1.0 && got.size == want.size,
        "{err:.2} mm, {:?}",
        got.size
    );
}

/// A grey miniature (painted near black, lit mid-grey) as wide as the blob search's 20 mm
/// surround stands out from it only along its lit edge: on seed 20's dark table s3, s5 and
/// s6 made no blob a miniature's size and were missed without a word, and seed 8's large
/// s2 made a crescent 56 mm from its base, found nothing and was not outlined either. Seen
/// whole against the mat with the miniatures taken out (`base_search::filled_blobs`), the
/// three are found and s2, its base hidden but for a corner, is outlined for the judge.
#[test]
fn a_grey_miniature_wider_than_its_surround_is_searched_whole() {
    let (truth, found) = detected_with(20, darken_miniatures);
    let s = score(&truth, &found, Models::builtin());
    for id in ["s3", "s5", "s6"] {
        let m = s.ships.iter().find(|m| m.id == id);
        eprintln!(
            "seed 20 {id}: {:?}",
            m.map(|m| (m.centre_error_mm, m.facing_right, m.confidence))
        );
        assert!(
            m.is_some_and(|m| m.centre_error_mm < 0.5 && m.facing_right),
            "seed 20 {id} not found within 0.5 mm"
        );
    }
    let (truth, found) = detected_with(8, darken_miniatures);
    let s = score(&truth, &found, Models::builtin());
    eprintln!(
        "seed 8: missed {:?}, outlined {:?}",
        s.missed_ships, s.missed_ships_outlined
    );
    assert!(
        s.ships.iter().any(|m| m.id == "s2") || s.missed_ships_outlined.iter().any(|id| id == "s2"),
        "seed 8's s2 is neither found nor outlined"
    );
}

/// A whole miniature searched in the second pass may settle on its own outline beside the
/// sure base another blob found for it: on seed 10's dark table such a square, 12.9 mm from
/// s7's base, stood as its rival fit and took s7's confidence from 0.84 to 0.42. A sure
/// base there now explains the whole miniature, and s7 stays not flagged.
#[test]
fn a_whole_miniature_beside_a_sure_base_makes_it_no_rival() {
    let (truth, found) = detected_with(10, darken_miniatures);
    let s = score(&truth, &found, Models::builtin());
    let m = s
        .ships
        .iter()
        .find(|m| m.id == "s7")
        .expect("seed 10's s7 found");
    eprintln!(
        "seed 10 s7: {:.2} mm off, confidence {:?}",
        m.centre_error_mm, m.confidence
    );
    assert!(m.centre_error_mm < 1.0);
    assert!(
        m.confidence
            .is_some_and(|c| c >= hashmark::judge::UNSURE_CONFIDENCE),
        "seed 10's s7 flagged: {:?}",
        m.confidence
    );
}

/// The same over a stream searching every frame, where each search knows what the last
/// found per blob: a whole miniature's base is taken again from the last search, its
/// parts passed over as empty, and the three ships stay found, frame after frame.
#[test]
fn a_grey_miniature_searched_whole_stays_found_over_a_stream() {
    let (scene, camera, frame) = photographed_with(20, Resolution::Hd1080, darken_miniatures);
    let calibrated = Calibrated {
        camera,
        play_area: scene.play_area,
        layout: hashmark::calibration::Layout::builtin(),
        sigma_mm: 0.05,
    };
    let mut stream = Stream::new(
        Detector::new(calibrated, Models::builtin()).expect("detector"),
        1,
    );
    for k in 0..4 {
        let pushed = stream.push(&frame).expect("frame");
        assert!(pushed.full);
        // The tracker confirms a ship on its second sighting.
        if k == 0 {
            continue;
        }
        let s = score(&scene, &pushed.scene, Models::builtin());
        for id in ["s3", "s5", "s6"] {
            let m = s.ships.iter().find(|m| m.id == id);
            assert!(
                m.is_some_and(|m| m.centre_error_mm < 0.5),
                "frame {k}: seed 20 {id} not found within 0.5 mm"
            );
        }
    }
}

// Seed 2's s4, a small base on deep black mat art, shows one of its lateral sides only
// through falling edges (bright inside, dark outside) and the other hardly at all: against
// a mat darker than the base the silhouette has the token edge's polarity, and the fit took
// it for the token's edge, a rim's width out, so the centre lies 1.2 mm off along that axis
// while the edges' scatter said 0.37 mm (with the true camera; 0.40 and confidence 0.79
// through the calibration from images). Which edge such a side shows is
// not measured, and the sigma now says so (`EDGE_KIND_SIGMA_MM`). Every ship of the table
// must lie within 2.5 of its sigmas (radial: for honest sigmas, 1 in 500 lies beyond).
#[test]
fn a_side_seen_through_token_edges_alone_widens_the_sigma() {
    let (truth, scene) = detected(2);
    let s = score(&truth.scene, &scene, Models::builtin());
    let report: Vec<_> = s
        .ships
        .iter()
        .map(|m| (m.id.clone(), m.centre_error_mm, m.sigma_mm.unwrap_or(0.0)))
        .collect();
    eprintln!("{report:.2?}");
    let s4 = report
        .iter()
        .find(|r| r.0 == "s4")
        .expect("seed 2's s4 found");
    assert!(s4.1 > 0.8, "s4 now fits within {:.2} mm: see why", s4.1);
    let beyond: Vec<_> = report.iter().filter(|r| r.1 > 2.5 * r.2).collect();
    assert!(beyond.is_empty(), "{beyond:.2?}");
}

// Seed 1's s1, a small base half under its miniature, was fitted within 0.7 mm as a small
// square and then grown from its corner into a medium one (see `grow_from_corner`): the
// miniature and the mat beside the base offered edges for the bigger square's other two
// sides, which held 0.83 of the small square's outline support, and it was reported 14.3 mm
// off as a medium base. A growth that fits worse now stands only where the bigger square's
// hashmarks show more clearly than the smaller one's (here 7.4 before, -8.0 after).
#[test]
fn a_small_base_is_not_grown_into_a_medium_one_its_hashmarks_deny() {
    let (truth, scene) = detected(1);
    let s1 = found_ship(&truth, &scene, "s1");
    assert_eq!(s1.found_size, BaseSize::Small, "{s1:?}");
    assert!(s1.centre_error_mm < 1.5, "{s1:?}");
}

// The same doubt turns a side: seed 41's s4 (small, one side showing less than a quarter,
// the opposite one through token-polarity edges only) was 1.62 deg off with a heading
// sigma of 0.59 deg (2.7 sigmas) and confidence 0.82. Where part of such a side lies a
// rim's width out, the side turns, and the heading's sigma now says so as well
// (`EDGE_KIND_SIGMA_DEG`: 0.81 deg).
#[test]
fn a_side_seen_through_token_edges_alone_widens_the_heading_sigma() {
    let (truth, scene) = detected(41);
    let s4 = found_ship(&truth, &scene, "s4");
    assert!(
        s4.heading_error_deg.abs() > 1.0,
        "s4 now within 1 deg: see why"
    );
    let sigma = s4.sigma_deg.unwrap_or(0.0);
    assert!(
        s4.heading_error_deg.abs() <= 2.5 * sigma,
        "{:.2} deg off, sigma {sigma:.2}",
        s4.heading_error_deg
    );
}

// Seed 46's s6, a large base in plain view with confidence 1.00, was fitted 0.71 mm off
// with sigma 0.61 (with the true camera; 0.68 and 0.63 through the calibration from
// images): its outline rests on four sides the mat's art and the miniature pull on. Its
// token's arc lines cross at its centre, read from two thin lines rather than from the
// sides, and the centre now weighs the crossing against the outline by their covariances
// (`bases::quality::centre_with_lines`): 0.14 mm off, sigma 0.19 (0.07 through the calibration).
#[test]
fn a_base_whose_arc_lines_show_is_centred_by_their_crossing() {
    let (truth, scene) = detected(46);
    let s6 = found_ship(&truth, &scene, "s6");
    assert!(s6.centre_error_mm < 0.3, "{s6:?}");
    let sigma = s6.sigma_mm.unwrap_or(0.0);
    assert!(s6.centre_error_mm <= 2.0 * sigma, "{s6:?}");
}

// A weak fit (see `bases::FoundBase::is_weak`) was reported with a 6.5 mm, 8 deg sigma
// whatever made it weak, since a third of weak fits lie on the wrong edges altogether.
// Those doubted for one reason alone hardly ever do (on the fixed and second rendered sets
// 16 of 17 within 1 mm, the worst 1.43), and now say 1 mm and 2.5 deg at least
// (`FEW_DOUBTS_SIGMA_MM`), still flagged for the judge. Seed 11 has three such bases: s2
// (one side hidden, 0.57 mm off), s6 (no hashmark shows, 0.07 mm; 6.5 mm again since the
// seventeenth session) and s7 (a miniature's outline, 0.17 mm); each said 6.5 mm before.
#[test]
fn a_weak_fit_with_one_doubt_says_a_millimetre_not_six() {
    // (No hashmark alone is not among them since: see the test below.)
    let one = weak_fits_with_hashmark(11, 1);
    assert!(one.len() >= 2, "{} weak fits with one doubt", one.len());
    says_a_millimetre(&one);
}

// Two doubts, the hashmark in view, said 6.5 mm until the thirty-seventh session; on the
// fixed, third, epic and 4K rendered sets 20 weak fits were so (14 of them little outline
// with one side hidden): 19 within 1 mm (the worst 1.62 mm, a large base at 4K), headings
// within 1.7 deg but one with a second heading (4.5 deg, about what its own sigma says),
// facing right but one doubted for it; now 1 mm and 2.5 deg at least, like one doubt. Seed
// 9's s1 is one (with the true camera): a medium base with little outline and one side of
// an axis hidden, 0.16 mm and 0.35 deg off, which said 6.5 mm and 8 deg.
#[test]
fn a_weak_fit_with_two_doubts_and_its_hashmark_says_a_millimetre_too() {
    let two = weak_fits_with_hashmark(9, 2);
    assert!(!two.is_empty(), "no weak fit with two doubts");
    says_a_millimetre(&two);
}

/// The ships of seed `seed` flagged for the judge whose doubts are `count` reasons of a
/// weak fit (the hashmark in view) and at most the facing or heading doubts beside them.
fn weak_fits_with_hashmark(seed: u64, count: usize) -> Vec<ShipMatch> {
    use hashmark::scene::Doubt;
    let (truth, scene) = detected(seed);
    let s = score(&truth.scene, &scene, Models::builtin());
    let weak_kind = |d: &Doubt| {
        matches!(
            d,
            Doubt::LittleOutline
                | Doubt::OneSided
                | Doubt::CornerOnly
                | Doubt::MiniatureOutline
                | Doubt::RimStrayed
        )
    };
    let found: Vec<ShipMatch> = s
        .ships
        .into_iter()
        .filter(|m| m.doubts.len() == count && m.doubts.iter().any(weak_kind))
        .filter(|m| !m.doubts.contains(&Doubt::NoHashmark))
        .filter(|m| m.confidence.is_some_and(|c| c < 0.65))
        .collect();
    eprintln!("seed {seed}: {found:#?}");
    found
}

/// Each ship says about a millimetre and a few degrees, and lies within two of its sigmas.
fn says_a_millimetre(ships: &[ShipMatch]) {
    for m in ships {
        let (mm, deg) = (m.sigma_mm.unwrap_or(0.0), m.sigma_deg.unwrap_or(0.0));
        assert!(mm < 3.0 && deg < 5.0, "{m:?}");
        assert!(
            m.centre_error_mm <= 2.0 * mm && m.heading_error_deg.abs() <= 2.0 * deg,
            "{m:?}"
        );
    }
}

// A large base turned 45 deg under a miniature that hides the middle of all four sides
// (seed 112's s2, third rendered set): its fit rests on the four corners, a quarter of each
// side (quality 0.24, under the 0.25 a fit needs), and was refused; the medium square on
// the miniature's outline was reported instead, 14.5 mm off and 41 deg turned. A fit whose
// four sides each show 15 mm of edge now counts from 0.2 (`bases::min_quality`), as a
// fallback: found 0.24 mm off with the true camera (0.26 through the calibration from
// images).
#[test]
fn a_large_base_seen_by_its_four_corners_is_found() {
    let (truth, scene) = detected(112);
    let s2 = found_ship(&truth, &scene, "s2");
    assert_eq!(s2.found_size, BaseSize::Large, "{s2:?}");
    assert!(s2.centre_error_mm < 1.0, "{s2:?}");
    // Doubted still: a quarter of each side is little outline.
    assert!(s2.confidence.is_some_and(|c| c < 0.65), "{s2:?}");
}

// The mat's edge against the brighter table is a long straight step with a base's
// polarity: on the fixed rendered set seed 4's s3, a small base beside the edge with its
// miniature over most of it, was reported as a medium base 12.7 mm off whose one fully
// seen side was the mat's edge (through the camera as calibrated from its own rendered
// views, the fixture made by scripts/detect-report.sh; with the true camera a small fit
// wins anyway). A fit with a side on the edge is now a fallback only
// (`Search::on_border`): the small base is found, doubted.
#[test]
fn the_mats_edge_is_not_a_bases_side() {
    let (truth, scene) = detected_through(4, "seed4-1080p-calibrated");
    let s3 = found_ship(&truth, &scene, "s3");
    assert_eq!(s3.found_size, BaseSize::Small, "{s3:?}");
    assert!(s3.confidence.is_some_and(|c| c < 0.65), "{s3:?}");
}

// A weak fit doubted for no hashmark alone kept the 1 mm sigma of one doubt until seed
// 117's s1 of the third rendered set lay 8.5 mm off so (a small base under a miniature whose
// lower outline the square took for the base's back edge, the token's print for its
// front): with no hashmark in view nothing says the square is on the token at all, and it
// says 6.5 mm again (`bases::ONE_DOUBT_SIGMA_MM`). No base of the table is more than three
// sigmas off.
#[test]
fn a_fit_with_no_hashmark_says_it_may_be_anywhere() {
    let (truth, scene) = detected(117);
    let s = score(&truth.scene, &scene, Models::builtin());
    let s1 = s.ships.iter().find(|m| m.id == "s1");
    eprintln!("{s1:?}");
    for m in &s.ships {
        let sigma = m.sigma_mm.unwrap_or(0.0);
        assert!(m.centre_error_mm <= 3.0 * sigma, "{m:?}");
    }
}

// A bigger base grown from a smaller square's corner stands, where its outline holds up
// less well, only if its hashmark shows (`Search::growth_holds`). Seed 124's s1 of the third
// rendered set, a small base with three sides in plain view and its hashmarks under the
// miniature, grew into a medium base 11 mm off whose best hashmark read -0.14 (nothing
// there), against the small square's none in view (through the camera calibrated from
// images; with the true camera the growth did not hold anyway). Now 1.6 mm off, doubted.
#[test]
fn a_bigger_base_grows_only_where_its_hashmark_shows() {
    let (truth, scene) = detected_through(124, "seed124-1080p-calibrated");
    let s1 = found_ship(&truth, &scene, "s1");
    assert_eq!(s1.found_size, BaseSize::Small, "{s1:?}");
    assert!(s1.centre_error_mm < 2.0, "{s1:?}");
}

// Seed 114's s1 of the third rendered set (through the camera calibrated from its images;
// the true camera's fit differs), a small base whose miniature hides its hashmarks, was
// fitted 0.3 mm off with quality 0.38 and no hashmark, and lost to a square
// on the miniature's own outline 22 mm away with quality 0.46, which was reported with a
// 0.48 mm sigma (confidence 0.38, doubted for little outline and a second heading only).
// Two overlapping squares nearly as well supported leave it open which is the base
// (`bases::keep_apart`): the one kept says how far the other lies, and names the doubt.
#[test]
fn a_base_kept_over_a_square_nearly_as_good_says_it_may_stand_there() {
    let (truth, scene) = detected_through(114, "seed114-1080p-calibrated");
    let t = truth_ship(&truth, "s1");
    let near: Vec<_> = scene
        .ships
        .iter()
        .filter(|s| (s.x - t.x).hypot(s.y - t.y) < 30.0)
        .collect();
    eprintln!("{near:?}");
    assert!(!near.is_empty(), "nothing found near s1");
    for s in near {
        let off = (s.x - t.x).hypot(s.y - t.y);
        let sigma = s.quality.sigma_mm.unwrap_or(0.0);
        assert!(
            off <= 1.5 * sigma.max(1.0),
            "{:.2} mm off, sigma {sigma}",
            off
        );
        if off > 5.0 {
            assert!(
                s.quality.doubts.contains(&hashmark::scene::Doubt::RivalFit),
                "{s:?}"
            );
        }
    }
}

/// A base whose miniature is painted near black, or lifted off, shows its token's light
/// print as the blob the search starts from, and the base lies about the blob rather than
/// under a miniature's height: searched only there, seed 4's s2 and seed 11's s7 (dark
/// miniatures) were missed. A base found about its token reads its facing without the
/// miniature mask, which there covers the token's print: seed 16's bare s6 was found
/// 0.4 mm off facing a quarter turn wrong with confidence 0.77 (its strips masked), and
/// now faces right with 0.995. Fails without either.
#[test]
fn a_base_whose_blob_is_its_own_token_is_found_about_it() {
    let unsure = hashmark::judge::UNSURE_CONFIDENCE;
    let cases: [(u64, WorldEdit, &str); 3] = [
        (4, darken_miniatures, "s2"),
        (11, darken_miniatures, "s7"),
        (16, lift_miniatures, "s6"),
    ];
    for (seed, edit, want) in cases {
        let (truth, scene) = detected_with(seed, edit);
        let s = score(&truth, &scene, Models::builtin());
        for m in &s.ships {
            eprintln!(
                "seed {seed} {}: {:.2} mm, {:.2} deg, facing {}, confidence {:?}",
                m.id, m.centre_error_mm, m.heading_error_deg, m.facing_right, m.confidence
            );
        }
        assert!(
            s.missed_ships.is_empty(),
            "seed {seed}: missed {:?}",
            s.missed_ships
        );
        let m = s
            .ships
            .iter()
            .find(|m| m.id == want)
            .unwrap_or_else(|| panic!("seed {seed}: {want} not matched"));
        assert!(
            m.centre_error_mm < 1.0 && m.facing_right && m.confidence.is_some_and(|c| c >= unsure),
            "seed {seed} {want}: {:.2} mm, facing {}, confidence {:?}",
            m.centre_error_mm,
            m.facing_right,
            m.confidence
        );
    }
}

/// Where the search under a dark miniature finds nothing at all, a square about its token
/// doubted for one reason alone is reported, flagged, rather than nothing: seed 3's s3 (a
/// small base on black space, the square on its miniature's outline) and seed 8's s5 (its
/// hashmarks unseen) were fitted there 0.2 and 0.15 mm off and dropped as doubted, and
/// their blobs, too small for a miniature's outline, left them missed without a word.
/// Fails without it.
#[test]
fn a_square_about_the_token_with_one_doubt_stands_where_nothing_else_was_found() {
    let unsure = hashmark::judge::UNSURE_CONFIDENCE;
    for (seed, want) in [(3u64, "s3"), (8, "s5")] {
        let (truth, scene) = detected_with(seed, darken_miniatures);
        let s = score(&truth, &scene, Models::builtin());
        let m = s
            .ships
            .iter()
            .find(|m| m.id == want)
            .unwrap_or_else(|| panic!("seed {seed}: {want} missed"));
        eprintln!(
            "seed {seed} {want}: {:.2} mm, {:.2} deg, facing {}, confidence {:?}",
            m.centre_error_mm, m.heading_error_deg, m.facing_right, m.confidence
        );
        // Found where it stands, and flagged for the judge: one doubt says 1 mm and halves
        // the confidence.
        assert!(
            m.centre_error_mm < 1.0 && m.confidence.is_some_and(|c| c < unsure),
            "seed {seed} {want}: {:.2} mm, confidence {:?}",
            m.centre_error_mm,
            m.confidence
        );
    }
}

/// A bare base (seed 19's s5, its miniature lifted off, near the mat's edge) was fitted
/// slid 9.7 mm along one axis onto a line of its token's print: that axis seen from one
/// side, no hashmark, and the rim's two edges showing along the other axis's sides only,
/// which forgave it all; it was reported with sigma 0.24 mm and confidence 0.85. The rim
/// forgives a one-sided axis now only where it shows on that axis's own sides. Every base
/// not flagged for the judge must be right (fails without).
#[test]
fn a_rim_seen_along_one_axis_does_not_vouch_for_the_other() {
    let unsure = hashmark::judge::UNSURE_CONFIDENCE;
    let (truth, scene) = detected_with(19, lift_miniatures);
    let s = score(&truth, &scene, Models::builtin());
    let mut sure = 0;
    for m in &s.ships {
        eprintln!(
            "{}: {:.2} mm, {:.2} deg, facing {}, confidence {:?}",
            m.id, m.centre_error_mm, m.heading_error_deg, m.facing_right, m.confidence
        );
        if m.confidence.is_some_and(|c| c >= unsure) {
            sure += 1;
            assert!(
                m.centre_error_mm <= 1.0 && m.facing_right,
                "{} not flagged but {:.2} mm off, facing right {}",
                m.id,
                m.centre_error_mm,
                m.facing_right
            );
        }
    }
    assert!(sure >= 4, "only {sure} of {} not flagged", s.ships.len());
}

/// A star's glow on the mat is a small bright disc, as is a round cardboard token beside a
/// ship; neither is a miniature. On seeds 11 and 21 (1080p) a large glowing star, 38 and
/// 45 mm from the nearest ship, started a base search that settled on a doubted square
/// where no ship stood (invented ships of the fixed rendered set). Small round blobs are
/// not searched now; every ship reported must be a ship, and every ship still found.
/// Fails without it.
#[test]
fn a_stars_glow_starts_no_ship() {
    for seed in [11u64, 21] {
        let (truth, found) = detected_with(seed, |_| {});
        let s = score(&truth, &found, Models::builtin());
        eprintln!(
            "seed {seed}: {} found, {} missed, {} invented",
            s.ships.len(),
            s.missed_ships.len(),
            s.false_ships
        );
        assert_eq!(s.false_ships, 0, "seed {seed}: {:?}", found.ships);
        assert!(
            s.missed_ships.is_empty(),
            "seed {seed}: missed {:?}",
            s.missed_ships
        );
    }
}

/// A heading that rests on token edges beside light print turns without them, and says so.
/// Seed 130 (third rendered set) at 1080p with a wide lens, its small bases 22-25 px a
/// side: with the true camera s1 and s3 were fitted 2.25 and 1.59 deg off with sigmas of
/// 0.95 and 0.86 deg and confidences of 0.80 and 0.92 (through the camera calibrated from
/// its images, 2.2 and 1.6 deg, 0.79 and 0.92). Fitted on the token edges beside dark print
/// alone they turn 1.5 deg or more (see `bases::dark_print_turn`): measured, s1 sigma
/// 2.14 deg, confidence 0.40; s3 1.15 deg off (its arc lines now weigh more), sigma 1.00,
/// confidence 0.46.
#[test]
fn a_heading_resting_on_steps_beside_light_print_is_doubted() {
    let (truth, scene) = detected(130);
    let s = score(&truth.scene, &scene, Models::builtin());
    for id in ["s1", "s3"] {
        let m = s
            .ships
            .iter()
            .find(|m| m.id == id)
            .unwrap_or_else(|| panic!("{id} not found: missed {:?}", s.missed_ships));
        let (sigma_deg, confidence) = (
            m.sigma_deg.expect("sigma_deg"),
            m.confidence.expect("confidence"),
        );
        eprintln!(
            "{id}: {:.2} mm, {:+.2} deg off; sigma {sigma_deg:.2} deg, confidence {confidence:.2}",
            m.centre_error_mm, m.heading_error_deg
        );
        if m.heading_error_deg.abs() > 1.0 {
            assert!(
                confidence < hashmark::judge::UNSURE_CONFIDENCE
                    && m.heading_error_deg.abs() <= 1.5 * sigma_deg,
                "{id} {:+.2} deg off with sigma {sigma_deg:.2} and confidence {confidence:.2}",
                m.heading_error_deg
            );
        }
    }
}

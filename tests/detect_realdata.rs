//! Detection on real photographs of something else than a game table (../shared/realdata:
//! OpenCV's ChArUco and ArUco tutorial photos, NASA's AprilTag photos), taken as if a
//! calibrated camera at their resolution looked down at the play area. The issue asks that
//! an image of something else give a clear message or an empty scene, never a panic; a
//! real photo has what no rendered table has (real texture, real blur, real JPEG), so this
//! is where detection shows what it invents when nothing of the game is there.
#![cfg(feature = "vision")]

mod common;

use hashmark::judge::UNSURE_CONFIDENCE;
use hashmark::models::Models;
use hashmark::vision::calibrate::check::TableCheck;
use hashmark::vision::detect::{Calibrated, Detector};
use hashmark::vision::{Resolution, cv};
use std::path::PathBuf;

fn realdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/realdata")
        .join(rel)
}

const PHOTOS: [&str; 10] = [
    "opencv_contrib_aruco/singlemarkersoriginal.jpg",
    "opencv_contrib_aruco/gboriginal.jpg",
    "opencv_contrib_aruco/choriginal.jpg",
    "opencv_contrib_aruco/chocclusion_original.jpg",
    "opencv_contrib_aruco/img_00.jpg",
    "opencv_contrib_aruco/img_02.jpg",
    "opencv_contrib_aruco/img_03.jpg",
    "apriltag/33369213973_9d9bb4cc96_c.jpg",
    "apriltag/34085369442_304b6bafd9_c.jpg",
    "apriltag/34139872896_defdb2f8d9_c.jpg",
];

/// What detection makes of one real photo: (ships, of them confident, standard obstacles,
/// measured outlines). The frame check must find no mat marker in it: the photos hold
/// markers of other dictionaries (DICT_6X6_250, a custom 6x6 one, AprilTag 36h11), none
/// of which may pass for the table's DICT_4X4_50 cards.
fn detect_photo(rel: &str, seed: u64) -> (usize, usize, usize, usize) {
    let models = Models::builtin();
    let bytes = std::fs::read(realdata(rel)).expect("the real photo");
    let frame = cv::decode(&bytes).expect("decode");
    let size = opencv::prelude::MatTraitConst::size(&frame).expect("size");
    let camera = hashmark::vision::sim::camera_for(
        seed,
        Resolution::Custom(size.width as u32, size.height as u32),
        [914.4, 914.4],
    );
    let cal = Calibrated {
        camera,
        play_area: models.play_areas.standard(),
        layout: hashmark::calibration::Layout::builtin(),
        sigma_mm: 0.1,
    };
    let det = Detector::new(cal, models).expect("detector");
    let check = det.check_table(&frame).expect("check");
    assert_eq!(check, TableCheck::Unseen, "{rel}");
    let scene = det
        .detect(&frame)
        .unwrap_or_else(|e| panic!("{rel}: a photo of something else is not an error: {e}"));
    let confident = scene
        .ships
        .iter()
        .filter(|s| s.quality.confidence.is_some_and(|c| c >= UNSURE_CONFIDENCE))
        .count();
    let standard = scene.obstacles.iter().filter(|o| o.model.is_some()).count();
    (
        scene.ships.len(),
        confident,
        standard,
        scene.obstacles.len() - standard,
    )
}

/// Measured: 239 ships on the ten photos, 9 of them with a confidence of 0.65 or more
/// (238 before grey bodies on coloured ground started searches too; with no limit on their
/// ground, 251 and 10), and 8 outlines of "miniatures with no base" (white paper; now
/// 242 ships, and 9 outlines since a grey bright blob with no mask body is outlined too)
/// (the target is none; checkerboards and marker grids are full of dark squares
/// with bright insides). 234 and 8 before the search fitted a square whose rim strayed
/// again with the rim held: those squares are doubted (trusted, they made 16), and which
/// start of which blob the ninth confident one now comes from is not traced yet (a fit
/// that once left the search empty-handed now stays its best, and the starts after it
/// are weighed against it). What tells a user that this
/// is not the table is the frame check: `detect --image` and `judge --image` refuse each
/// photo (next test). Since the nineteenth session 4 confident: of two overlapping squares
/// nearly as well supported the one kept names the other as its rival and halves its
/// confidence (`bases::keep_apart`), and a grid of dark squares offers many such pairs.
/// This bound keeps the confident ones from growing.
#[test]
fn real_photos_of_something_else_are_unchecked_and_never_panic() {
    let mut totals = [0usize; 4];
    for (i, rel) in PHOTOS.iter().enumerate() {
        let (ships, confident, standard, measured) = detect_photo(rel, 500 + i as u64);
        println!(
            "{rel}: {ships} ships ({confident} confident), {standard} standard obstacles, {measured} measured outlines"
        );
        for (t, v) in totals
            .iter_mut()
            .zip([ships, confident, standard, measured])
        {
            *t += v;
        }
    }
    println!(
        "all {} photos: {} ships ({} confident), {} standard obstacles, {} measured outlines",
        PHOTOS.len(),
        totals[0],
        totals[1],
        totals[2],
        totals[3]
    );
    assert!(
        totals[1] <= 4,
        "{} confident ships on photos of something else",
        totals[1]
    );
    // Outlines of miniatures with no base, on white paper: 15 since the thirty-first
    // session's limit on a miniature's body (`bases::HIDDEN_MAX_AREA_MM2`; 23 without it).
    assert!(
        totals[3] <= 15,
        "{} measured outlines on photos of something else",
        totals[3]
    );
}

/// Through the commands, a photo of something else is refused in one line before any
/// detection: no mat marker is in view, so nothing says it is the table (the issue's
/// "clear message"), and `--skip-table-check` is named as the way on for a table whose
/// cards were taken away. The judge refuses it too and writes no report.
#[test]
fn detect_and_judge_refuse_real_photos_of_something_else() {
    let dir = tempfile::tempdir().expect("temp dir");
    let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
    for (i, rel) in PHOTOS.iter().enumerate() {
        let path = realdata(rel);
        let bytes = std::fs::read(&path).expect("the real photo");
        let frame = cv::decode(&bytes).expect("decode");
        let size = opencv::prelude::MatTraitConst::size(&frame).expect("size");
        let cal = dir.path().join(format!("cal{i}"));
        std::fs::create_dir_all(&cal).expect("dir");
        let camera = hashmark::vision::sim::camera_for(
            500 + i as u64,
            Resolution::Custom(size.width as u32, size.height as u32),
            [914.4, 914.4],
        );
        common::write_calibration(&cal, &camera);
        let (code, out, err) =
            common::hashmark(&["detect", "--calibration", &s(&cal), "--image", &s(&path)]);
        assert_eq!(code, 2, "{rel}: {out}");
        assert!(
            out.is_empty()
                && err.trim().lines().count() == 1
                && err.contains("no mat marker in view")
                && err.contains("--skip-table-check"),
            "{rel}: {err}"
        );
        if i == 0 {
            let report = dir.path().join("report");
            let (code, _, err) = common::hashmark(&[
                "judge",
                "--image",
                &s(&path),
                "--calibration",
                &s(&cal),
                "--ship",
                "s1",
                "--out",
                &s(&report),
            ]);
            assert_eq!(code, 2, "{err}");
            assert!(err.contains("no mat marker in view"), "{err}");
            assert!(!report.exists());
        }
    }
}

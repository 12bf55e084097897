//! Real photos (../shared/realdata): OpenCV's tutorial images with their reference ids and
//! corners, the four ChArUco calibration views with OpenCV's reference calibration, and
//! AprilTag photos with the AprilTag library's reference corners.
#![cfg(feature = "vision")]

use hashmark::vision::aruco::{self, CharucoGeometry, Dict, Refine};
use hashmark::vision::calibrate::camera::{self, View};
use hashmark::vision::cv;
use serde_json::Value;
use std::path::PathBuf;

fn realdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/realdata")
        .join(rel)
}

fn image(rel: &str) -> opencv::core::Mat {
    cv::decode(&std::fs::read(realdata(rel)).unwrap()).unwrap()
}

fn gold() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(realdata("opencv_contrib_aruco/gold_corners.json")).unwrap(),
    )
    .unwrap()
}

/// Every gold marker is found with its id, each corner within the stated tolerance. The
/// gold values are OpenCV's own default (unrefined) corners, so that is what is compared:
/// they check detection and ids, not sub-pixel accuracy (which the simulator measures).
fn check_gold(case: &str, file: &str, refine: Refine, extra_px: f64) -> f64 {
    let g = gold();
    let tol = g[case]["tolerance_px"].as_f64().unwrap() + extra_px;
    let found =
        aruco::detect_with(&image(file), Dict::parse("DICT_6X6_250").unwrap(), refine).unwrap();
    let mut worst: f64 = 0.0;
    for m in g[case]["markers"].as_array().unwrap() {
        let id = m["id"].as_i64().unwrap() as i32;
        let d = found
            .iter()
            .find(|d| d.id == id)
            .unwrap_or_else(|| panic!("{case}: marker {id} not found"));
        for (k, c) in m["corners_xy"].as_array().unwrap().iter().enumerate() {
            let (x, y) = (c[0].as_f64().unwrap(), c[1].as_f64().unwrap());
            let e = (d.corners[k][0] - x).abs().max((d.corners[k][1] - y).abs());
            worst = worst.max(e);
            assert!(e <= tol, "{case}: marker {id} corner {k} off by {e:.2} px");
        }
    }
    worst
}

#[test]
fn tutorial_markers_match_the_gold_corners() {
    let cases = [
        (
            "can_find_singlemarkersoriginal",
            "opencv_contrib_aruco/singlemarkersoriginal.jpg",
        ),
        ("can_find_choriginal", "opencv_contrib_aruco/choriginal.jpg"),
        (
            "can_find_chocclusion",
            "opencv_contrib_aruco/chocclusion_original.jpg",
        ),
    ];
    for (case, file) in cases {
        let worst = check_gold(case, file, Refine::None, 0.0);
        eprintln!("{case}: worst corner {worst:.2} px");
    }
}

fn tutorial_board() -> CharucoGeometry {
    CharucoGeometry::with_dictionary(5, 7, 40.0, 20.0, Dict::parse("DICT_6X6_250").unwrap())
        .unwrap()
}

#[test]
fn charuco_views_calibrate_near_opencvs_reference() {
    let board = tutorial_board();
    let files = [
        "opencv_contrib_aruco/img_00.jpg",
        "opencv_contrib_aruco/choriginal.jpg",
        "opencv_contrib_aruco/img_02.jpg",
        "opencv_contrib_aruco/img_03.jpg",
    ];
    let candidates: Vec<(String, Result<View, camera::Rejection>)> = files
        .iter()
        .map(|f| {
            (
                f.to_string(),
                camera::find_view(&image(f), &board, f).unwrap(),
            )
        })
        .collect();
    for (name, c) in &candidates {
        assert!(c.is_ok(), "{name}: {:?}", c.as_ref().err());
    }
    let report = camera::calibrate(candidates, &board, [640, 480]).unwrap();
    let k = report.file.camera_matrix;
    // tutorial_camera_charuco.yml: fx 452.51, fy 456.77, RMS 0.182 px.
    let (fx, fy) = (k[0][0], k[1][1]);
    eprintln!(
        "fx {fx:.2} fy {fy:.2} cx {:.2} cy {:.2} rms {:.3} px, views {}",
        k[0][2], k[1][2], report.file.rms_px, report.file.views
    );
    assert!((fx / 452.51 - 1.0).abs() < 0.03, "fx {fx}");
    assert!((fy / 456.77 - 1.0).abs() < 0.03, "fy {fy}");
    assert!(report.file.rms_px < 0.5, "rms {}", report.file.rms_px);
    assert_eq!(report.file.views, 4);
    assert!(
        report
            .file
            .std_dev
            .unwrap()
            .iter()
            .all(|s| s.is_finite() && *s > 0.0)
    );
}

#[test]
fn near_duplicate_and_empty_views_are_rejected() {
    let board = tutorial_board();
    let f = "opencv_contrib_aruco/img_00.jpg";
    let v = camera::find_view(&image(f), &board, f).unwrap();
    let blank = opencv::core::Mat::new_rows_cols_with_default(
        480,
        640,
        opencv::core::CV_8UC3,
        opencv::core::Scalar::all(128.0),
    )
    .unwrap();
    let none = camera::find_view(&blank, &board, "blank").unwrap();
    assert_eq!(
        none.as_ref().err(),
        Some(&camera::Rejection::TooFewCorners(0))
    );
    let mut candidates = vec![
        ("a".to_string(), v.clone()),
        ("b".to_string(), v),
        ("blank".to_string(), none),
    ];
    for f in [
        "opencv_contrib_aruco/img_02.jpg",
        "opencv_contrib_aruco/img_03.jpg",
    ] {
        candidates.push((
            f.to_string(),
            camera::find_view(&image(f), &board, f).unwrap(),
        ));
    }
    let report = camera::calibrate(candidates, &board, [640, 480]).unwrap();
    assert_eq!(report.file.views, 3);
    let why: Vec<String> = report
        .rejected
        .iter()
        .map(|(n, r)| format!("{n}: {r}"))
        .collect();
    assert!(
        why.iter()
            .any(|w| w.starts_with("b: nearly the same view as")),
        "{why:?}"
    );
    assert!(
        why.iter()
            .any(|w| w.starts_with("blank: only 0 board corners")),
        "{why:?}"
    );
}

/// The AprilTag library's reference corners, matched to OpenCV's detections up to the
/// starting corner and the winding (the two libraries list corners differently). These
/// tags are small (about 28 px) and OpenCV 4.6's ArUco module does much worse on them than
/// the AprilTag library (which finds all 47): measured here, it finds 22, of which 19 lie
/// within 3 px of the reference (median 1.2 px). The thresholds below hold that measurement,
/// so a regression shows; the mat markers hashmark relies on are ten times larger.
#[test]
fn apriltag_photos_match_the_reference_corners() {
    let mut errors: Vec<f64> = Vec::new();
    let mut unmatched: Vec<String> = Vec::new();
    for name in [
        "33369213973_9d9bb4cc96_c",
        "34085369442_304b6bafd9_c",
        "34139872896_defdb2f8d9_c",
    ] {
        let text = std::fs::read_to_string(realdata(&format!("apriltag/{name}.txt"))).unwrap();
        let reference: Vec<[[f64; 2]; 4]> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let nums: Vec<f64> = l
                    .split(|c: char| c == ',' || c == '(' || c == ')' || c.is_whitespace())
                    .filter(|t| !t.is_empty())
                    .skip(1)
                    .map(|t| t.parse().unwrap())
                    .collect();
                [
                    [nums[0], nums[1]],
                    [nums[2], nums[3]],
                    [nums[4], nums[5]],
                    [nums[6], nums[7]],
                ]
            })
            .collect();
        let found = aruco::detect(
            &image(&format!("apriltag/{name}.jpg")),
            Dict::parse("DICT_APRILTAG_36h11").unwrap(),
        )
        .unwrap();
        for d in &found {
            assert_eq!(d.id, 0, "{name}: only tag 0 is in these photos");
            // Mean corner distance to the best-matching reference tag, any start, any winding.
            let best = reference
                .iter()
                .flat_map(|r| {
                    (0..8).map(move |order| {
                        let (shift, reverse) = (order % 4, order >= 4);
                        (0..4)
                            .map(|k| {
                                let i = if reverse {
                                    (shift + 4 - k) % 4
                                } else {
                                    (k + shift) % 4
                                };
                                (d.corners[i][0] - r[k][0]).hypot(d.corners[i][1] - r[k][1])
                            })
                            .sum::<f64>()
                            / 4.0
                    })
                })
                .fold(f64::INFINITY, f64::min);
            if best < 3.0 {
                errors.push(best);
            } else {
                unmatched.push(format!(
                    "{name} at ({:.0}, {:.0})",
                    d.corners[0][0], d.corners[0][1]
                ));
            }
        }
    }
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len() / 2];
    let worst = errors[errors.len() - 1];
    eprintln!(
        "apriltag: OpenCV found {} of 47 reference tags; mean corner error median {median:.2} px, worst {worst:.2} px; not in the reference: {unmatched:?}",
        errors.len()
    );
    assert!(errors.len() >= 19, "only {} of 47 tags found", errors.len());
    assert!(unmatched.len() <= 3, "{unmatched:?}");
    assert!(median < 1.3, "median {median}");
}

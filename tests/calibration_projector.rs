//! Projector calibration on simulated scenes: a keystoned projector throws the marker
//! pattern onto a rendered empty table; the calibrated camera sees it; the fitted
//! table-to-projector mapping must agree with the true one to under a projector pixel.
#![cfg(feature = "vision")]

use hashmark::vision::Resolution;
use hashmark::vision::calibrate::projector::{Pattern, calibrate_projector, simulate_projection};
use hashmark::vision::cv;
use hashmark::vision::sim::{SimOptions, simulate};

/// The homography through four point pairs (DLT with h33 = 1).
fn homography(from: [[f64; 2]; 4], to: [[f64; 2]; 4]) -> [[f64; 3]; 3] {
    let mut a = nalgebra::SMatrix::<f64, 8, 8>::zeros();
    let mut b = nalgebra::SVector::<f64, 8>::zeros();
    for k in 0..4 {
        let ([x, y], [u, v]) = (from[k], to[k]);
        a.set_row(
            2 * k,
            &nalgebra::RowSVector::<f64, 8>::from_row_slice(&[
                x,
                y,
                1.0,
                0.0,
                0.0,
                0.0,
                -u * x,
                -u * y,
            ]),
        );
        a.set_row(
            2 * k + 1,
            &nalgebra::RowSVector::<f64, 8>::from_row_slice(&[
                0.0,
                0.0,
                0.0,
                x,
                y,
                1.0,
                -v * x,
                -v * y,
            ]),
        );
        b[2 * k] = u;
        b[2 * k + 1] = v;
    }
    let h = a.lu().solve(&b).unwrap();
    [[h[0], h[1], h[2]], [h[3], h[4], h[5]], [h[6], h[7], 1.0]]
}

fn map(h: &[[f64; 3]; 3], p: [f64; 2]) -> [f64; 2] {
    hashmark::calibration::files::apply_homography(h, p[0], p[1]).unwrap()
}

#[test]
fn projector_mapping_within_a_projector_pixel() {
    for (seed, keystone) in [
        (
            4u64,
            [[70.0, 690.0], [1215.0, 700.0], [1180.0, 22.0], [96.0, 35.0]],
        ),
        (
            9,
            [[40.0, 650.0], [1240.0, 640.0], [1210.0, 60.0], [60.0, 30.0]],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
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
        .unwrap();
        let play = [
            truth.scene.play_area.width_mm,
            truth.scene.play_area.height_mm,
        ];
        let corners = [
            [0.0, 0.0],
            [play[0], 0.0],
            [play[0], play[1]],
            [0.0, play[1]],
        ];
        let h_true = homography(corners, keystone);
        let pattern = Pattern::for_size([1280, 720]).unwrap();
        let empty =
            cv::decode(&std::fs::read(dir.path().join(&truth.background)).unwrap()).unwrap();
        let photo = simulate_projection(&empty, &truth.camera, &pattern, &h_true, 3.0).unwrap();
        let file = calibrate_projector(&photo, &pattern, &truth.camera, play).unwrap();
        // Compare the fitted and the true mapping over the play area.
        let mut worst: f64 = 0.0;
        for i in 0..=10 {
            for j in 0..=10 {
                let p = [play[0] * i as f64 / 10.0, play[1] * j as f64 / 10.0];
                let (a, b) = (map(&file.homography, p), map(&h_true, p));
                worst = worst.max((a[0] - b[0]).hypot(a[1] - b[1]));
            }
        }
        eprintln!(
            "seed {seed}: fit residual {:.3} px / {:.3} mm; vs truth over the play area: worst {worst:.3} projector px",
            file.residual_px, file.residual_mm
        );
        assert!(worst < 1.0, "seed {seed}: {worst} px");
        assert!(file.residual_px < 1.0);
        assert_eq!(file.size, [1280, 720]);
    }
}

#[test]
fn a_dark_projector_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let truth = simulate(
        &SimOptions {
            seed: 4,
            resolution: Resolution::Custom(960, 540),
            frames: None,
            charuco_views: 0,
            supersample: 1,
        },
        dir.path(),
    )
    .unwrap();
    let empty = cv::decode(&std::fs::read(dir.path().join(&truth.background)).unwrap()).unwrap();
    let pattern = Pattern::for_size([1280, 720]).unwrap();
    let e = calibrate_projector(&empty, &pattern, &truth.camera, [914.4, 914.4])
        .unwrap_err()
        .to_string();
    assert!(e.contains("is the projector on"), "{e}");
}

//! The simulator's camera model agrees with OpenCV's own projection, and its rays invert it.
#![cfg(feature = "vision")]

use hashmark::vision::camera::{Camera, Resolution};
use hashmark::vision::cv;
use hashmark::vision::rng::Rng;
use hashmark::vision::sim::must_see;

#[test]
fn projection_matches_opencv_project_points() {
    let play = [914.4, 914.4];
    for seed in 0..10 {
        for res in [Resolution::Hd1080, Resolution::Uhd4k] {
            let cam = Camera::random(seed, res, &must_see(play));
            let mut rng = Rng::new(seed + 100);
            let pts: Vec<[f64; 3]> = (0..50)
                .map(|_| {
                    [
                        rng.range(-90.0, 1004.0),
                        rng.range(-90.0, 1004.0),
                        rng.range(0.0, 60.0),
                    ]
                })
                .collect();
            let cvp = cv::project_points(&cam, &pts).expect("opencv projection");
            for (p, c) in pts.iter().zip(&cvp) {
                let ours = cam.project(*p).expect("in front of the camera");
                let d = ((ours[0] - c[0]).powi(2) + (ours[1] - c[1]).powi(2)).sqrt();
                assert!(d < 1e-6, "seed {seed}: {p:?} ours {ours:?} opencv {c:?}");
            }
        }
    }
}

#[test]
fn rays_land_where_opencv_projects_them() {
    let play = [914.4, 914.4];
    for seed in 0..10 {
        let cam = Camera::random(seed, Resolution::Hd1080, &must_see(play));
        let rc = cam.ray_caster();
        let mut pix = Vec::new();
        let mut pts = Vec::new();
        for &(u, v) in &[
            (0.0, 0.0),
            (1919.0, 0.0),
            (0.0, 1079.0),
            (1919.0, 1079.0),
            (960.3, 540.7),
            (37.5, 801.25),
        ] {
            let r = rc.ray(u, v);
            let t = (10.0 - r.origin.z) / r.dir.z;
            let p = r.origin + r.dir * t;
            pix.push([u, v]);
            pts.push([p.x, p.y, p.z]);
        }
        let back = cv::project_points(&cam, &pts).expect("opencv projection");
        for (a, b) in pix.iter().zip(&back) {
            assert!(
                (a[0] - b[0]).abs() < 1e-6 && (a[1] - b[1]).abs() < 1e-6,
                "seed {seed}: {a:?} -> {b:?}"
            );
        }
    }
}

#[test]
fn cameras_see_the_whole_mat_and_markers_and_differ_by_seed() {
    let play = [914.4, 914.4];
    let a = Camera::random(1, Resolution::Hd1080, &must_see(play));
    let b = Camera::random(2, Resolution::Hd1080, &must_see(play));
    assert_ne!(a, b);
    for seed in 0..20 {
        let cam = Camera::random(seed, Resolution::Hd1080, &must_see(play));
        for p in must_see(play) {
            let [u, v] = cam.project([p[0], p[1], 0.0]).expect("in front");
            assert!(
                (0.0..1920.0).contains(&u) && (0.0..1080.0).contains(&v),
                "seed {seed}: {p:?} at {u},{v}"
            );
        }
        let h = cam.centre().z;
        assert!(
            h > 900.0 * 0.99 && h < 1400.0 / 25f64.to_radians().cos() + 1.0,
            "seed {seed}: height {h}"
        );
    }
}

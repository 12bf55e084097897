//! The real overlay window under Xvfb: `hashmark demo` draws some frames, saves its own
//! screenshot and exits 0; the picture must show the selected ship's landings in their
//! colours where the verdict puts them, and nothing of the side that was not asked for.
//!
//! Needs `xvfb-run` (Debian: xvfb xauth libgl1-mesa-dri). Without it the test prints why it
//! skipped; with HASHMARK_REQUIRE_XVFB=1 (CI) a missing Xvfb fails instead.
#![cfg(feature = "overlay")]

use hashmark::Models;
use hashmark::overlay::{ILLEGAL_RGB, LEGAL_RGB, Source};
use hashmark::rules::{Landing, RollOptions, Side, barrel_roll};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn have_xvfb() -> bool {
    let found = Command::new("/bin/sh")
        .args(["-c", "command -v xvfb-run"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        let why = "SKIPPED overlay_window: xvfb-run is not installed (apt-get install xvfb xauth libgl1-mesa-dri)";
        if std::env::var_os("HASHMARK_REQUIRE_XVFB").is_some_and(|v| v == "1") {
            panic!("{why}, and HASHMARK_REQUIRE_XVFB=1");
        }
        eprintln!("{why}");
    }
    found
}

/// Runs the demo under Xvfb with a screenshot; returns the PNG path.
fn shoot(dir: &Path, direction: &str) -> PathBuf {
    let png = dir.join(format!("demo-{direction}.png"));
    let mut child = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1600x1000x24"])
        .arg(env!("CARGO_BIN_EXE_hashmark"))
        .args(["demo", "--select", "s1", "--direction", direction])
        .args(["--exit-after-frames", "10", "--screenshot"])
        .arg(&png)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run xvfb-run");
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("hashmark demo under Xvfb did not exit within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(status.success(), "exit {status}: {stderr}");
    eprintln!("{}", stderr.trim());
    png
}

struct Shot {
    img: image::RgbImage,
    /// Table mm to image pixels.
    origin: [f64; 2],
    scale: f64,
    view: [f64; 4],
    verdict: serde_json::Value,
}

fn load(png: &Path) -> Shot {
    let img = image::open(png).expect("png").to_rgb8();
    let mut side = png.as_os_str().to_owned();
    side.push(".json");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&side).expect("sidecar")).expect("json");
    let f = |v: &serde_json::Value| v.as_f64().expect("number");
    let ppp = f(&meta["pixels_per_point"]);
    let t = &meta["transform_points"];
    let v = &meta["view_rect_points"];
    assert_eq!(
        [img.width() as u64, img.height() as u64],
        [
            meta["image_size"][0].as_u64().expect("w"),
            meta["image_size"][1].as_u64().expect("h")
        ]
    );
    Shot {
        origin: [f(&t["origin"][0]) * ppp, f(&t["origin"][1]) * ppp],
        scale: f(&t["scale"]) * ppp,
        view: [0, 1, 2, 3].map(|i| f(&v[i]) * ppp),
        verdict: meta["verdict"].clone(),
        img,
    }
}

fn near(c: &image::Rgb<u8>, rgb: [u8; 3]) -> bool {
    c.0.iter().zip(rgb).all(|(a, b)| a.abs_diff(b) <= 12)
}

impl Shot {
    fn px(&self, p: [f64; 2]) -> (f64, f64) {
        (
            self.origin[0] + self.scale * p[0],
            self.origin[1] - self.scale * p[1],
        )
    }

    /// Whether a pixel of this colour lies within `r` pixels of (x, y).
    fn colour_near(&self, x: f64, y: f64, r: i64, rgb: [u8; 3]) -> bool {
        let (cx, cy) = (x.round() as i64, y.round() as i64);
        (-r..=r).any(|dy| {
            (-r..=r).any(|dx| {
                let (u, v) = (cx + dx, cy + dy);
                u >= 0
                    && v >= 0
                    && (u as u32) < self.img.width()
                    && (v as u32) < self.img.height()
                    && near(self.img.get_pixel(u as u32, v as u32), rgb)
            })
        })
    }

    /// The share of points along a landing's outline (one per pixel) that have this colour
    /// within 2 pixels.
    fn outline_share(&self, l: &Landing, rgb: [u8; 3]) -> f64 {
        let ring = &l.base_polygon;
        let (mut hits, mut total) = (0usize, 0usize);
        for i in 0..ring.len() {
            let (a, b) = (self.px(ring[i]), self.px(ring[(i + 1) % ring.len()]));
            let n = ((b.0 - a.0).hypot(b.1 - a.1)).ceil().max(1.0) as usize;
            for k in 0..n {
                let s = k as f64 / n as f64;
                let (x, y) = (a.0 + s * (b.0 - a.0), a.1 + s * (b.1 - a.1));
                total += 1;
                hits += usize::from(self.colour_near(x, y, 2, rgb));
            }
        }
        hits as f64 / total.max(1) as f64
    }

    /// Pixels of this colour inside the table view.
    fn count_in_view(&self, rgb: [u8; 3]) -> usize {
        let [x0, y0, x1, y1] = self.view;
        self.img
            .enumerate_pixels()
            .filter(|(x, y, c)| {
                let (x, y) = (f64::from(*x), f64::from(*y));
                x >= x0 && x < x1 && y >= y0 && y < y1 && near(c, rgb)
            })
            .count()
    }
}

fn demo_verdict(side: Side) -> hashmark::RollVerdict {
    let (_, table) = Source::Demo.load(Models::builtin()).expect("demo");
    barrel_roll(
        &table,
        Models::builtin(),
        "s1",
        &[side],
        &RollOptions::default(),
    )
    .expect("roll")
}

#[test]
fn demo_window_screenshot_shows_the_landings_in_their_colours() {
    if !have_xvfb() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");

    // Right: front illegal (ship s2), middle and back legal.
    let shot = load(&shoot(dir.path(), "right"));
    let right = demo_verdict(Side::Right);
    assert_eq!(
        shot.verdict,
        serde_json::to_value(&right).expect("verdict json"),
        "the window judged what barrel_roll judges"
    );
    let [front, middle, back] = [0, 1, 2].map(|i| &right.directions[0].positions[i]);
    assert!(!front.legal && middle.legal && back.legal);
    let s = shot.outline_share(front, ILLEGAL_RGB);
    eprintln!(
        "right: front red {s:.2}, middle green {:.2}, back green {:.2}",
        shot.outline_share(middle, LEGAL_RGB),
        shot.outline_share(back, LEGAL_RGB)
    );
    assert!(
        s > 0.25,
        "illegal colour along the right front landing: {s:.2}"
    );
    for l in [middle, back] {
        let s = shot.outline_share(l, LEGAL_RGB);
        assert!(
            s > 0.4,
            "legal colour along the right {:?} landing: {s:.2}",
            l.slot
        );
    }
    // Nothing is drawn where the left landings would be.
    let left = demo_verdict(Side::Left);
    for l in &left.directions[0].positions {
        let s = shot
            .outline_share(l, ILLEGAL_RGB)
            .max(shot.outline_share(l, LEGAL_RGB));
        assert!(
            s < 0.05,
            "left {:?} drawn although only right was asked: {s:.2}",
            l.slot
        );
    }
    let (green, red) = (
        shot.count_in_view(LEGAL_RGB),
        shot.count_in_view(ILLEGAL_RGB),
    );
    assert!(green > 100 && red > 50, "green {green} red {red} pixels");

    // Left: the roll fails, all three illegal; no green anywhere in the table view.
    let shot = load(&shoot(dir.path(), "left"));
    for l in &left.directions[0].positions {
        let s = shot.outline_share(l, ILLEGAL_RGB);
        assert!(
            s > 0.1,
            "illegal colour along the left {:?} landing: {s:.2}",
            l.slot
        );
    }
    assert_eq!(shot.count_in_view(LEGAL_RGB), 0, "green in a failed roll");

    // Keep a copy for people to look at when asked to.
    if let Some(keep) = std::env::var_os("HASHMARK_KEEP_SHOTS") {
        let keep = PathBuf::from(keep);
        let _ = std::fs::create_dir_all(&keep);
        for d in ["right", "left"] {
            let _ = std::fs::copy(
                dir.path().join(format!("demo-{d}.png")),
                keep.join(format!("demo-{d}.png")),
            );
        }
    }
}

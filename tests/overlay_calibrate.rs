//! Calibration from the app, headless: rendered frames go into the frame slot the worker
//! fills, the panel is opened with K and driven through the actions its buttons run, and
//! the UI passes pick up the worker threads' results. The files it writes must be the
//! library's on the same frames.
#![cfg(all(feature = "vision", feature = "overlay"))]

use hashmark::calibration::files::CalibrationFile;
use hashmark::calibration::{CameraFile, Layout, TableFile};
use hashmark::overlay::calibrate::{Action, CalibratePanel, Step};
use hashmark::overlay::egui::{self, Event, Key, Modifiers, Pos2, RawInput, Rect, vec2};
use hashmark::overlay::feed::{FeedSender, feed};
use hashmark::overlay::frame_slot::FrameSlot;
use hashmark::overlay::live::LiveView;
use hashmark::overlay::{OverlayApp, Sides};
use hashmark::rules::RollTemplate;
use hashmark::vision::Resolution;
use hashmark::vision::calibrate::table::calibrate_table;
use hashmark::vision::cv;
use hashmark::vision::sim::{SimOptions, Truth, simulate};
use opencv::core::{CV_8UC3, Mat, Scalar};
use opencv::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

struct Harness {
    ctx: egui::Context,
    app: OverlayApp,
    slot: FrameSlot,
    _tx: FeedSender,
}

impl Harness {
    fn new(dir: &Path) -> Harness {
        let (tx, rx) = feed();
        let mut app = OverlayApp::live(
            "test feed".into(),
            LiveView::new(rx, None),
            None,
            Sides::Both,
            RollTemplate::Straight1,
            false,
        );
        let slot = FrameSlot::new();
        app.calibrate = Some(CalibratePanel::new(
            dir.to_path_buf(),
            dir.join("projector.json"),
            slot.clone(),
        ));
        let mut h = Harness {
            ctx: egui::Context::default(),
            app,
            slot,
            _tx: tx,
        };
        h.frame(vec![]);
        let ev = |pressed| Event::Key {
            key: Key::K,
            physical_key: None,
            pressed,
            repeat: false,
            modifiers: Modifiers::NONE,
        };
        h.frame(vec![ev(true), ev(false)]);
        assert!(h.panel().open, "K opens the panel");
        assert!(h.slot.wanted(), "an open panel asks the worker for frames");
        h
    }

    fn frame(&mut self, events: Vec<Event>) {
        let mut raw = RawInput {
            screen_rect: Some(Rect::from_min_size(Pos2::ZERO, vec2(1280.0, 800.0))),
            events,
            ..Default::default()
        };
        self.app.filter_raw_input(&mut raw);
        let mut out = self.ctx.run_ui(raw, |ui| self.app.ui(ui));
        out.textures_delta.clear();
    }

    fn panel(&self) -> &CalibratePanel {
        self.app.calibrate.as_ref().expect("panel")
    }

    /// Runs an action on `frame` as its button would, and UI passes until it is done.
    fn act(&mut self, action: Action, frame: Option<&Mat>) -> serde_json::Value {
        if let Some(f) = frame {
            self.slot.put(f.try_clone().expect("copy"));
        }
        let app = &mut self.app;
        app.calibrate
            .as_mut()
            .expect("panel")
            .act(action, app.projector.as_mut());
        let start = Instant::now();
        while self.panel().busy().is_some() {
            assert!(
                start.elapsed() < Duration::from_secs(300),
                "{action:?} hangs"
            );
            std::thread::sleep(Duration::from_millis(5));
            self.frame(vec![]);
        }
        // One more pass draws the result.
        self.frame(vec![]);
        self.panel().to_json()
    }
}

/// The true intrinsics as camera.json in `dir` (as `calibrate camera` would write them).
fn true_camera_json(cam: &hashmark::vision::Camera, dir: &Path) {
    CameraFile {
        format: "hashmark-camera/1".into(),
        image_size: cam.image_size,
        camera_matrix: cam.camera_matrix,
        distortion: cam.distortion,
        rms_px: 0.1,
        views: 12,
        std_dev: None,
        table_uncertainty_mm: None,
        created: None,
        board: None,
    }
    .save(&dir.join("camera.json"))
    .expect("camera.json");
}

fn read(dir: &Path, file: &str) -> Mat {
    cv::decode(&std::fs::read(dir.join(file)).expect("image")).expect("decodes")
}

fn rendered(dir: &Path) -> Truth {
    simulate(
        &SimOptions {
            seed: 3,
            resolution: Resolution::Custom(960, 540),
            frames: None,
            charuco_views: 10,
            supersample: 1,
        },
        dir,
    )
    .expect("simulate")
}

#[test]
fn camera_then_table_from_the_panel() {
    let sim = tempfile::tempdir().expect("tmp");
    let truth = rendered(sim.path());
    let cal = tempfile::tempdir().expect("tmp");
    let mut h = Harness::new(cal.path());

    // The camera step, over the ChArUco views.
    h.app.calibrate.as_mut().expect("panel").step = Step::Camera;
    let refused = h.act(Action::Solve, None);
    assert!(
        refused["refusal"]
            .as_str()
            .is_some_and(|r| r.contains("at least 8")),
        "{refused}"
    );
    for (i, v) in truth.charuco.views.iter().enumerate() {
        let shown = h.act(Action::AddView, Some(&read(sim.path(), &v.file)));
        let last = &shown["views"][i];
        assert!(
            last["corners"].as_u64().is_some() || last["rejected"].is_string(),
            "{shown}"
        );
    }
    let shown = h.panel().to_json();
    eprintln!(
        "views: {}, still needed: {}",
        shown["views"], shown["still_needed"]
    );
    assert!(h.panel().usable_views().count() >= 8, "{shown}");
    let solved = h.act(Action::Solve, None);
    let camera = &solved["camera"];
    assert!(
        camera["rms_px"].as_f64().is_some_and(|r| r < 0.5),
        "{solved}"
    );
    assert!(
        camera["table_uncertainty_mm"].as_f64().is_some(),
        "{solved}"
    );
    assert!(camera["std_dev"].is_array(), "{solved}");
    h.act(Action::SaveCamera, None);
    let file = CameraFile::load(&cal.path().join("camera.json")).expect("camera.json written");
    let (k, t) = (file.camera_matrix, truth.camera.camera_matrix);
    eprintln!(
        "panel camera: fx {:.2} (truth {:.2}), fy {:.2} ({:.2}), RMS {:.3} px",
        k[0][0], t[0][0], k[1][1], t[1][1], file.rms_px
    );
    for (a, b) in [(k[0][0], t[0][0]), (k[1][1], t[1][1])] {
        assert!((a / b - 1.0).abs() < 0.01, "{a} vs truth {b}");
    }

    // The table step on a table frame, with the camera.json just written.
    let frame = read(sim.path(), &truth.frames[0].file);
    h.app.calibrate.as_mut().expect("panel").step = Step::Table;
    let shown = h.act(Action::Table, Some(&frame));
    let written = TableFile::load(&cal.path().join("table.json")).expect("table.json written");
    let library = calibrate_table(
        &frame,
        &Layout::builtin(),
        hashmark::Models::builtin().play_areas.standard(),
        Some(&file),
    )
    .expect("library");
    let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-9);
    let (rw, rl) = (
        written.rvec.expect("rvec"),
        library.file.rvec.expect("rvec"),
    );
    let (tw, tl) = (
        written.tvec.expect("tvec"),
        library.file.tvec.expect("tvec"),
    );
    assert!(
        close(&rw, &rl) && close(&tw, &tl),
        "{rw:?} {tw:?} vs {rl:?} {tl:?}"
    );
    assert_eq!(
        written.marker_residuals_mm.len(),
        library.file.marker_residuals_mm.len()
    );
    for (id, r) in &library.file.marker_residuals_mm {
        let w = written.marker_residuals_mm[id];
        let s = shown["table"]["residuals_mm"][id].as_f64().expect("shown");
        assert!(
            (w - r).abs() <= 1e-9 && (s - r).abs() <= 1e-9,
            "marker {id}"
        );
        eprintln!("marker {id}: {r:.3} mm");
    }
    assert_eq!(
        shown["table_note"].as_str(),
        Some("restart the overlay to detect with the new table"),
        "{shown}"
    );

    // With a restart hook (what `hashmark overlay` installs), a new table.json restarts
    // detection: a new live view replaces the old one.
    let restarts = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = restarts.clone();
    h.app.restart_live = Some(Box::new(move || {
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (_tx, rx) = feed();
        Ok(LiveView::new(rx, None))
    }));
    let shown = h.act(Action::Table, Some(&frame));
    assert_eq!(restarts.load(std::sync::atomic::Ordering::Relaxed), 1);
    assert_eq!(
        shown["table_note"].as_str(),
        Some("detection restarted with the new table"),
        "{shown}"
    );
}

#[test]
fn a_frame_without_markers_writes_nothing() {
    let sim = tempfile::tempdir().expect("tmp");
    let truth = simulate(
        &SimOptions {
            seed: 5,
            resolution: Resolution::Custom(960, 540),
            frames: None,
            charuco_views: 0,
            supersample: 1,
        },
        sim.path(),
    )
    .expect("simulate");
    let cal = tempfile::tempdir().expect("tmp");
    // The truth's own intrinsics stand for a calibrated camera.
    let camera = CameraFile {
        format: hashmark::calibration::files::CAMERA_FORMAT.to_string(),
        image_size: truth.camera.image_size,
        camera_matrix: truth.camera.camera_matrix,
        distortion: truth.camera.distortion,
        rms_px: 0.1,
        views: 10,
        std_dev: None,
        table_uncertainty_mm: None,
        created: None,
        board: None,
    };
    camera.save(&cal.path().join("camera.json")).expect("save");
    let mut h = Harness::new(cal.path());

    let none = h.act(Action::Table, None);
    assert!(
        none["refusal"]
            .as_str()
            .is_some_and(|r| r.contains("no camera frame")),
        "{none}"
    );
    let blank = Mat::new_rows_cols_with_default(540, 960, CV_8UC3, Scalar::all(128.0))
        .expect("blank frame");
    let shown = h.act(Action::Table, Some(&blank));
    let error = shown["table"]["error"].as_str().expect("an error");
    assert!(
        error.starts_with("mat markers 0, 1, 2, 3 not found (found: none)"),
        "{error}"
    );
    assert!(!error.contains('\n'));
    assert!(!cal.path().join("table.json").exists());
    assert!(shown["table_note"].is_null());
}

/// The projector step: the pattern thrown by a keystoned projector model onto a rendered
/// empty table (1080p, the true camera written as camera.json + table.json), photographed
/// through the panel: the saved projector.json maps the play area within a projector pixel
/// of the true mapping, and the projector output uses it at once.
#[test]
fn projector_from_the_panel() {
    use hashmark::calibration::files::CalibrationFile;
    use hashmark::calibration::{ProjectorFile, TableFile};
    use hashmark::overlay::projector::Projection;
    use hashmark::overlay::projector_output::ProjectorOutput;
    use hashmark::vision::calibrate::projector::{Pattern, simulate_projection};
    let dir = tempfile::tempdir().expect("dir");
    let sim = tempfile::tempdir().expect("dir");
    let truth = simulate(
        &SimOptions {
            seed: 5,
            resolution: Resolution::Hd1080,
            frames: None,
            charuco_views: 0,
            supersample: 1,
        },
        sim.path(),
    )
    .expect("simulate");
    let cam = &truth.camera;
    true_camera_json(cam, dir.path());
    TableFile {
        format: "hashmark-table/1".into(),
        image_size: cam.image_size,
        rvec: Some(cam.rvec),
        tvec: Some(cam.tvec),
        homography: None,
        marker_residuals_mm: Default::default(),
        play_area: None,
        mat_markers: None,
        created: None,
    }
    .save(&dir.path().join("table.json"))
    .expect("table.json");
    // A projector 1280 x 720 with keystone: table mm -> projector px (y up -> y down).
    let h_true = [[1.2, 0.06, 80.0], [0.03, -0.7, 680.0], [0.0, 0.00012, 1.0]];
    let pattern = Pattern::for_size([1280, 720]).expect("pattern");
    let empty = read(sim.path(), &truth.background);
    let photo = simulate_projection(&empty, cam, &pattern, &h_true, 3.0).expect("projection");

    let mut h = Harness::new(dir.path());
    // First time: no projector.json yet, a placeholder mapping of the right size.
    h.app.projector = Some(ProjectorOutput::new(Projection::placeholder(
        [1280, 720],
        truth.scene.play_area,
    )));
    h.act(Action::TakePhoto, Some(&photo));
    let shown = h.act(Action::SaveProjector, None);
    let file = ProjectorFile::load(&dir.path().join("projector.json")).expect("projector.json");
    let map = |m: &[[f64; 3]; 3], p: [f64; 2]| {
        let w = m[2][0] * p[0] + m[2][1] * p[1] + m[2][2];
        [
            (m[0][0] * p[0] + m[0][1] * p[1] + m[0][2]) / w,
            (m[1][0] * p[0] + m[1][1] * p[1] + m[1][2]) / w,
        ]
    };
    let mut worst: f64 = 0.0;
    for i in 0..=4 {
        for j in 0..=4 {
            let p = [914.4 * f64::from(i) / 4.0, 914.4 * f64::from(j) / 4.0];
            let (a, b) = (map(&file.homography, p), map(&h_true, p));
            worst = worst.max((a[0] - b[0]).hypot(a[1] - b[1]));
        }
    }
    eprintln!(
        "projector from the panel: worst {worst:.3} px, residual {:.3} px; panel {shown}",
        file.residual_px
    );
    assert!(worst < 1.0, "{worst} projector px");
    assert_eq!(file.size, [1280, 720]);
    // The projector output maps through the new file at once.
    h.frame(vec![]);
    let now = &h.app.projector.as_ref().expect("projector").projection;
    assert_eq!(now.homography, file.homography);
}

/// An epic table from the panel: its cards lie at the epic play area's corners, so the
/// table step run for the standard area refuses the frame and says why; chosen "epic", it
/// writes a table.json for that area, and a panel opened later on that directory starts
/// from it.
#[test]
fn an_epic_table_from_the_panel() {
    let sim = tempfile::tempdir().expect("dir");
    let cal = tempfile::tempdir().expect("dir");
    let epic = hashmark::Models::builtin()
        .play_areas
        .get("epic")
        .map(|a| hashmark::geometry::PlayArea {
            width_mm: a.width_mm,
            height_mm: a.height_mm,
        })
        .expect("epic");
    let truth = hashmark::vision::sim::simulate_on(
        &SimOptions {
            seed: 204,
            resolution: Resolution::Hd1080,
            frames: None,
            charuco_views: 0,
            supersample: 1,
        },
        epic,
        sim.path(),
    )
    .expect("simulate");
    true_camera_json(&truth.camera, cal.path());
    let frame = read(sim.path(), &truth.frames[0].file);
    let mut h = Harness::new(cal.path());
    assert_eq!(h.panel().play_area, "standard");

    let shown = h.act(Action::Table, Some(&frame));
    let error = shown["table"]["error"].as_str().expect("an error");
    assert!(error.contains("not where the layout puts them"), "{error}");
    assert!(!cal.path().join("table.json").exists());

    h.app.calibrate.as_mut().expect("panel").play_area = "epic".into();
    let shown = h.act(Action::Table, Some(&frame));
    assert!(shown["table"]["residuals_mm"].is_object(), "{shown}");
    let written = TableFile::load(&cal.path().join("table.json")).expect("table.json");
    assert_eq!(written.play_area(), epic);
    let again = CalibratePanel::new(
        cal.path().to_path_buf(),
        cal.path().join("projector.json"),
        FrameSlot::new(),
    );
    assert_eq!(again.play_area, "epic");
}

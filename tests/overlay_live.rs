//! The overlay on a live feed, headless: scenes go through the same feed the detection
//! worker posts to, and the same `OverlayApp::ui` the window runs takes them. The choice
//! must follow the ship id across scenes, the verdict must follow the ship, the camera view
//! must draw the frame and the projected scene, and a lost camera must show its banner.
#![cfg(feature = "overlay")]

use hashmark::Models;
use hashmark::overlay::egui::{
    self, Color32, ColorImage, Event, Key, Modifiers, Pos2, RawInput, Rect, vec2,
};
use hashmark::overlay::feed::{
    Detected, FeedSender, LiveFrame, LiveImage, Projector, SourceStatus, TableCheckNote, feed,
};
use hashmark::overlay::live::{LiveView, ViewMode};
use hashmark::overlay::{DEMO_SCENE_JSON, OverlayApp, Sides};
use hashmark::rules::{RollTemplate, Side};
use hashmark::scene::Scene;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Harness {
    ctx: egui::Context,
    app: OverlayApp,
    tx: FeedSender,
    /// Every text painted in the last frame.
    texts: Vec<String>,
}

/// A pretend camera straight above the table: 1 px per 10 mm, image y down.
const CAMERA_SIZE: [u32; 2] = [92, 92];

fn projector() -> Projector {
    Arc::new(|p: [f64; 3]| Some([p[0] / 10.0, 91.44 - p[1] / 10.0]))
}

fn demo_scene() -> Scene {
    Scene::from_json(DEMO_SCENE_JSON, Models::builtin()).expect("demo scene")
}

impl Harness {
    fn new(select: Option<&str>) -> Harness {
        let (tx, rx) = feed();
        let app = OverlayApp::live(
            "test feed".into(),
            LiveView::new(rx, Some(projector())),
            select,
            Sides::Right,
            RollTemplate::Straight1,
            false,
        );
        let mut h = Harness {
            ctx: egui::Context::default(),
            app,
            tx,
            texts: Vec::new(),
        };
        h.frame(vec![]);
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
        fn texts(s: &egui::Shape, out: &mut Vec<String>) {
            match s {
                egui::Shape::Vec(v) => v.iter().for_each(|s| texts(s, out)),
                egui::Shape::Text(t) => out.push(t.galley.text().to_string()),
                _ => {}
            }
        }
        self.texts.clear();
        for c in &out.shapes {
            texts(&c.shape, &mut self.texts);
        }
    }

    fn shows(&self, needle: &str) -> bool {
        self.texts.iter().any(|t| t.contains(needle))
    }

    fn key(&mut self, key: Key, modifiers: Modifiers) {
        let ev = |pressed| Event::Key {
            key,
            physical_key: None,
            pressed,
            repeat: false,
            modifiers,
        };
        self.frame(vec![ev(true), ev(false)]);
        self.frame(vec![]);
    }

    /// Posts a scene (with a small grey picture) as the worker would, then draws a frame.
    fn post(&mut self, index: u64, scene: Scene) {
        self.post_checked(index, scene, None);
    }

    /// The same, with the frame check of a full search.
    fn post_checked(&mut self, index: u64, scene: Scene, table_check: Option<TableCheckNote>) {
        let grabbed = Instant::now();
        self.tx.send(LiveFrame {
            index,
            grabbed,
            detected: grabbed,
            posted: grabbed,
            detection: Ok(Detected {
                scene,
                full_search: true,
                table_check,
            }),
            image: Some(LiveImage {
                image: Arc::new(ColorImage::new(
                    [46, 46],
                    vec![Color32::from_gray(90); 46 * 46],
                )),
                camera_size: CAMERA_SIZE,
            }),
        });
        self.frame(vec![]);
    }

    fn verdict(&self) -> hashmark::RollVerdict {
        self.app
            .last_judged()
            .and_then(|j| j.verdict.as_ref().ok())
            .cloned()
            .expect("a verdict")
    }
}

#[test]
fn the_choice_follows_the_ship_id_and_the_verdict_follows_the_ship() {
    let mut h = Harness::new(None);
    assert!(h.app.state.table.ships.is_empty(), "nothing before a scene");
    assert!(h.app.last_judged().is_some_and(|j| j.verdict.is_err()));

    h.post(0, demo_scene());
    assert_eq!(h.app.state.selected_id(), "s1", "the first ship seen");
    // Tab to s2 (medium, at x 428.7 y 352 in the demo).
    h.key(Key::Tab, Modifiers::NONE);
    assert_eq!(h.app.state.selected_id(), "s2");
    let before = h.verdict();
    assert_eq!(before.ship, "s2");
    assert_eq!(before.directions[0].direction, Side::Right);

    // The next scene lists the ships in another order: the choice stays on s2.
    let mut reordered = demo_scene();
    reordered.ships.reverse();
    h.post(1, reordered.clone());
    assert_eq!(h.app.state.selected_id(), "s2");
    assert_eq!(h.verdict(), before, "same table, same verdict");

    // s2 moves to the open middle of the table: the verdict changes with it.
    let mut moved = reordered;
    let s2 = moved
        .ships
        .iter_mut()
        .find(|s| s.id == "s2")
        .expect("s2 in the scene");
    (s2.x, s2.y) = (760.0, 560.0);
    h.post(2, moved.clone());
    assert_eq!(h.app.state.selected_id(), "s2");
    let after = h.verdict();
    assert_eq!((after.start.x, after.start.y), (760.0, 560.0));
    assert_ne!(after, before);

    // s2 vanishes for a frame (detection lost it): no verdict for another ship, and it is
    // selected again when it comes back.
    let mut without = moved.clone();
    without.ships.retain(|s| s.id != "s2");
    h.post(3, without);
    assert_eq!(h.app.state.selected(), None);
    assert_eq!(h.app.state.selected_id(), "s2");
    h.post(4, moved);
    assert_eq!(h.verdict().ship, "s2");

    // Every scene was painted, and its latency measured.
    let live = h.app.live.as_ref().expect("live");
    assert_eq!(live.frames_shown, 5);
    assert_eq!(live.latency.count, 5);
    assert!(live.latency.median().is_some_and(|ms| ms < 1000.0));
    assert_eq!(live.last_frame, Some((4, true)));
}

#[test]
fn the_camera_view_draws_the_frame_and_the_projected_scene() {
    let mut h = Harness::new(Some("s3"));
    assert_eq!(h.app.live.as_ref().map(|l| l.mode), Some(ViewMode::Split));
    assert_eq!(h.app.camera_drawn().image_rect, None, "no frame yet");
    h.post(0, demo_scene());
    assert_eq!(
        h.app.state.selected_id(),
        "s3",
        "--select waits for its ship"
    );
    let drawn = h.app.camera_drawn().clone();
    let image = drawn.image_rect.expect("the frame is drawn");
    assert_eq!(drawn.ships.len(), 8);
    assert_eq!(drawn.obstacles, 6);
    assert_eq!(drawn.landings, 3, "the right side's three landings");
    // The projected outlines lie on the frame.
    for ring in &drawn.ships {
        assert!(!ring.is_empty());
        assert!(ring.iter().all(|p| image.expand(1.0).contains(*p)));
    }
    // V: camera only, then table only (no camera drawing), then both again.
    h.key(Key::V, Modifiers::NONE);
    assert_eq!(h.app.live.as_ref().map(|l| l.mode), Some(ViewMode::Camera));
    let wide = h.app.camera_drawn().image_rect.expect("frame");
    assert!(
        wide.width() > image.width(),
        "the camera view has the whole area"
    );
    h.key(Key::V, Modifiers::NONE);
    assert_eq!(h.app.live.as_ref().map(|l| l.mode), Some(ViewMode::Table));
    h.key(Key::V, Modifiers::NONE);
    assert_eq!(h.app.live.as_ref().map(|l| l.mode), Some(ViewMode::Split));
    assert_eq!(h.app.camera_drawn().unsure, 0);
    // Detection doubts two ships (a hidden outline, a hidden facing): both views mark them.
    let mut doubted = demo_scene();
    for (i, confidence) in [(0, 0.25), (4, 0.5), (5, 0.95)] {
        doubted.ships[i].quality.sigma_mm = Some(0.6);
        doubted.ships[i].quality.sigma_deg = Some(0.5);
        doubted.ships[i].quality.confidence = Some(confidence);
    }
    h.post(1, doubted);
    assert_eq!(h.app.camera_drawn().unsure, 2);
    assert_eq!(h.app.drawn().unsure, 2);
}

/// A camera bumped during a game: the full search's frame check says the markers moved;
/// the panel says so in red and keeps saying it over the re-fits after, and judge mode
/// frozen then says not to rule from these positions.
#[test]
fn a_moved_camera_is_shown_in_the_panel_and_in_judge_mode() {
    let mut h = Harness::new(None);
    let holds = TableCheckNote {
        moved: false,
        text: "mat markers where the calibration puts them: 0 0.1 px (0.1 mm)".into(),
    };
    h.post_checked(0, demo_scene(), Some(holds.clone()));
    assert_eq!(
        h.app.live.as_ref().and_then(|l| l.table_check.clone()),
        Some(holds)
    );
    assert!(h.shows("mat markers where the calibration puts them") && !h.shows("CAMERA MOVED"));
    let moved = TableCheckNote {
        moved: true,
        text: "the camera or the mat has moved since calibration: mat markers 0 2.2 px (3.2 mm), \
               1 2.3 px (3.2 mm) from where table.json puts them"
            .into(),
    };
    h.post_checked(1, demo_scene(), Some(moved.clone()));
    assert!(h.shows("CAMERA MOVED"), "{:?}", h.texts);
    // A re-fit frame (no check of its own) keeps the warning.
    h.post(2, demo_scene());
    assert!(h.shows("CAMERA MOVED"));
    h.key(Key::J, Modifiers::NONE);
    let judge = h.app.judge.as_ref().expect("judge mode");
    assert_eq!(judge.table_check.as_ref(), Some(&moved));
    assert!(h.shows("do not rule from these positions"), "{:?}", h.texts);
}

#[test]
fn a_lost_camera_and_a_bad_frame_are_shown_not_fatal() {
    let mut h = Harness::new(None);
    h.post(0, demo_scene());
    h.tx.set_status(SourceStatus::Lost("camera 0 lost, reconnecting…".into()));
    h.frame(vec![]);
    let live = h.app.live.as_ref().expect("live");
    assert_eq!(
        live.status.banner(),
        Some(("camera 0 lost, reconnecting…", true))
    );
    // The last table stays while the camera is away.
    assert_eq!(h.app.state.table.ships.len(), 8);

    // A frame detection failed on: the error is shown, the table stays.
    let now = Instant::now();
    h.tx.send(LiveFrame {
        index: 7,
        grabbed: now,
        detected: now + Duration::from_millis(1),
        posted: now + Duration::from_millis(2),
        detection: Err("OpenCV: something broke".into()),
        image: None,
    });
    h.tx.set_status(SourceStatus::Running);
    h.frame(vec![]);
    let live = h.app.live.as_ref().expect("live");
    assert_eq!(live.status.banner(), None);
    assert_eq!(
        live.frame_error.as_deref(),
        Some("frame 7: OpenCV: something broke")
    );
    assert_eq!(h.app.state.table.ships.len(), 8);
    assert_eq!(h.app.state.selected_id(), "s1");
}

/// While the worker grabs for a full search it asks for a dark projector: the projector
/// view paints nothing else and counts the dark frame; afterwards it draws again.
#[test]
fn the_projector_view_goes_dark_when_the_worker_asks() {
    use hashmark::overlay::projector::Projection;
    use hashmark::overlay::projector_output::ProjectorOutput;
    let mut h = Harness::new(Some("s1"));
    h.tx.send(LiveFrame {
        index: 0,
        grabbed: Instant::now(),
        detected: Instant::now(),
        posted: Instant::now(),
        detection: Ok(Detected {
            scene: demo_scene(),
            full_search: true,
            table_check: None,
        }),
        image: None,
    });
    let mut p = ProjectorOutput::new(Projection {
        size: [1000, 1000],
        homography: [[1.0, 0.0, 40.0], [0.0, -1.0, 960.0], [0.0, 0.0, 1.0]],
    });
    p.in_main = true;
    h.app.projector = Some(p);
    h.frame(vec![]);
    assert_eq!(h.tx.dark_frames(), 0, "lit while nobody asks");
    h.tx.set_blank(true);
    h.frame(vec![]);
    h.frame(vec![]);
    assert_eq!(h.tx.dark_frames(), 2, "two frames painted dark");
    h.tx.set_blank(false);
    h.frame(vec![]);
    assert_eq!(h.tx.dark_frames(), 2, "lit again");
}

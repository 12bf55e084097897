//! The overlay's interactions driven headless through egui's own `Context::run_ui`: the
//! same `OverlayApp::ui` the window runs, with synthetic keys and clicks, checked on the
//! app's state, on what it reports it drew, and on the painted shapes' colours.
#![cfg(feature = "overlay")]

mod common;

use hashmark::overlay::egui::{
    self, Color32, Event, Key, Modifiers, PointerButton, Pos2, RawInput, Rect, Shape, vec2,
};
use hashmark::overlay::paint::{ILLEGAL, LEGAL};
use hashmark::overlay::{OverlayApp, Sides, Source};
use hashmark::rules::{RollTemplate, Side, Slot};

struct Harness {
    ctx: egui::Context,
    app: OverlayApp,
    shapes: Vec<Shape>,
}

impl Harness {
    fn demo() -> Harness {
        let app = OverlayApp::from_source(
            &Source::Demo,
            None,
            Sides::Both,
            RollTemplate::Straight1,
            false,
        )
        .expect("demo app");
        let mut h = Harness {
            ctx: egui::Context::default(),
            app,
            shapes: Vec::new(),
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
        // No renderer here: the font atlas uploads are dropped on purpose.
        out.textures_delta.clear();
        self.shapes = out.shapes.into_iter().map(|c| c.shape).collect();
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
        // One more frame so the drawing reflects the change everywhere.
        self.frame(vec![]);
    }

    fn click(&mut self, at: Pos2) {
        self.frame(vec![Event::PointerMoved(at)]);
        let button = |pressed| Event::PointerButton {
            pos: at,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        };
        self.frame(vec![button(true)]);
        self.frame(vec![button(false)]);
        self.frame(vec![]);
    }

    fn sides_drawn(&self) -> Vec<Side> {
        let mut s: Vec<Side> = self.app.drawn().landings.iter().map(|l| l.side).collect();
        s.dedup();
        s
    }

    /// Shapes (recursively) stroked in this colour.
    fn stroked_in(&self, colour: Color32) -> usize {
        fn count(s: &Shape, c: Color32) -> usize {
            match s {
                Shape::Vec(v) => v.iter().map(|s| count(s, c)).sum(),
                Shape::Path(p) => usize::from(p.stroke.color == egui::epaint::ColorMode::Solid(c)),
                Shape::LineSegment { stroke, .. } => usize::from(stroke.color == c),
                _ => 0,
            }
        }
        self.shapes.iter().map(|s| count(s, colour)).sum()
    }
}

#[test]
fn starts_on_the_first_ship_with_both_sides() {
    let h = Harness::demo();
    assert_eq!(h.app.state.selected_id(), "s1");
    assert_eq!(h.sides_drawn(), [Side::Left, Side::Right]);
    assert_eq!(h.app.drawn().landings.len(), 6);
    assert_eq!(h.app.drawn().ships, 8);
    assert_eq!(h.app.drawn().obstacles, 6);
    // s1's left fails and its right front is illegal: both colours are painted.
    assert!(h.stroked_in(LEGAL) > 0 && h.stroked_in(ILLEGAL) > 0);
}

#[test]
fn tab_selects_the_next_ship_and_shift_tab_the_previous() {
    let mut h = Harness::demo();
    h.key(Key::Tab, Modifiers::NONE);
    assert_eq!(h.app.state.selected_id(), "s2");
    let v = h
        .app
        .last_judged()
        .and_then(|j| j.verdict.as_ref().ok())
        .expect("verdict");
    assert_eq!(v.ship, "s2");
    h.key(Key::Tab, Modifiers::SHIFT);
    h.key(Key::Tab, Modifiers::SHIFT);
    assert_eq!(h.app.state.selected_id(), "s8");
}

#[test]
fn r_shows_only_the_right_side_and_l_only_the_left() {
    let mut h = Harness::demo();
    h.key(Key::R, Modifiers::NONE);
    assert_eq!(h.app.state.sides, Sides::Right);
    assert_eq!(h.sides_drawn(), [Side::Right]);
    assert_eq!(h.app.drawn().templates.len(), 1);
    let legal: Vec<(Slot, bool)> = h
        .app
        .drawn()
        .landings
        .iter()
        .map(|l| (l.slot, l.legal))
        .collect();
    assert_eq!(
        legal,
        [
            (Slot::Front, false),
            (Slot::Middle, true),
            (Slot::Back, true)
        ]
    );
    // The right side lies right of s1 (x 300 mm) on screen.
    let (t, _) = h.app.last_view().expect("view");
    let centre = t.to_screen(300.0, 300.0);
    assert!(
        h.app
            .drawn()
            .landings
            .iter()
            .all(|l| l.rect.min.x > centre.x)
    );

    h.key(Key::L, Modifiers::NONE);
    assert_eq!(h.sides_drawn(), [Side::Left]);
    assert!(h.app.drawn().landings.iter().all(|l| !l.legal));
    // Left fails outright: nothing green is stroked any more.
    assert_eq!(h.stroked_in(LEGAL), 0);
    assert!(h.stroked_in(ILLEGAL) > 0);

    h.key(Key::B, Modifiers::NONE);
    assert_eq!(h.app.drawn().landings.len(), 6);
}

#[test]
fn template_keys_change_the_verdict() {
    let mut h = Harness::demo();
    h.key(Key::R, Modifiers::NONE);
    let before = h.app.drawn().clone();
    h.key(Key::Num2, Modifiers::NONE);
    assert_eq!(h.app.state.template, RollTemplate::Straight2);
    let v = h
        .app
        .last_judged()
        .and_then(|j| j.verdict.as_ref().ok())
        .expect("verdict");
    assert_eq!(v.template, RollTemplate::Straight2);
    // A 2-straight roll lands 40 mm further out: the landings moved right on screen.
    let after = h.app.drawn();
    assert!(after.landings[1].rect.center().x > before.landings[1].rect.center().x + 10.0);
    h.key(Key::Num3, Modifiers::NONE);
    assert_eq!(h.app.state.template, RollTemplate::Bank1Forward);
    h.key(Key::Num1, Modifiers::NONE);
    assert_eq!(h.app.drawn(), &before);
}

#[test]
fn a_template_a_ship_cannot_use_shows_the_error_and_draws_no_roll() {
    let mut h = Harness::demo();
    h.app.state.select_id("s3").expect("s3");
    h.key(Key::Num3, Modifiers::NONE);
    assert!(h.app.last_judged().is_some_and(|j| j.verdict.is_err()));
    assert!(h.app.drawn().landings.is_empty());
    assert_eq!(h.app.drawn().ships, 8);
}

#[test]
fn ignore_obstacles_key_toggles_and_changes_the_left_roll() {
    let mut h = Harness::demo();
    h.key(Key::L, Modifiers::NONE);
    assert!(h.app.drawn().landings.iter().all(|l| !l.legal));
    h.key(Key::O, Modifiers::NONE);
    assert!(h.app.state.ignore_obstacles);
    // s1's left is blocked only by obstacle o1.
    assert!(h.app.drawn().landings.iter().any(|l| l.legal));
}

#[test]
fn clicking_a_ship_selects_it() {
    let mut h = Harness::demo();
    let (t, _) = h.app.last_view().expect("view");
    h.click(t.to_screen(650.0, 600.0));
    assert_eq!(h.app.state.selected_id(), "s3");
    // A click on empty mat keeps the selection.
    h.click(t.to_screen(880.0, 40.0));
    assert_eq!(h.app.state.selected_id(), "s3");
}

#[test]
fn the_mouse_wheel_zooms_about_the_pointer() {
    let mut h = Harness::demo();
    let (t0, _) = h.app.last_view().expect("view");
    let at = t0.to_screen(300.0, 300.0);
    h.frame(vec![Event::PointerMoved(at)]);
    for _ in 0..20 {
        h.frame(vec![Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: vec2(0.0, 60.0),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
            modifiers: Modifiers::NONE,
        }]);
    }
    h.frame(vec![]);
    let (t1, _) = h.app.last_view().expect("view");
    assert!(t1.scale > t0.scale * 1.5, "{} -> {}", t0.scale, t1.scale);
    let p = t1.to_table(at);
    assert!(
        (p[0] - 300.0).abs() < 1.0 && (p[1] - 300.0).abs() < 1.0,
        "{p:?}"
    );
}

#[test]
fn ships_detection_doubts_are_drawn_amber_with_a_question_mark() {
    use hashmark::overlay::paint::CLOSE;
    // The demo scene as detection might have written it: s2 confidently found, s3 not.
    let (_dir, path) = common::demo_scene_detected(&[(1, 0.9), (2, 0.3)]);
    let build = |p: &std::path::Path| {
        OverlayApp::from_source(
            &Source::Scene(p.to_path_buf()),
            None,
            Sides::Both,
            RollTemplate::Straight1,
            false,
        )
        .expect("app")
    };
    let mut h = Harness::demo();
    let amber_before = h.stroked_in(CLOSE);
    assert_eq!(h.app.drawn().unsure, 0);
    h.app = build(&path);
    h.frame(vec![]);
    h.frame(vec![]);
    assert_eq!(h.app.drawn().ships, 8);
    assert_eq!(h.app.drawn().unsure, 1, "only s3 is doubted");
    assert!(h.stroked_in(CLOSE) > amber_before, "its outline is amber");
}

#[test]
fn outlines_detection_could_not_name_are_drawn_amber_with_a_question_mark() {
    use hashmark::overlay::paint::CLOSE;
    // The demo scene with three measured outlines added: one detection could not name (low
    // confidence), one typed by hand (no confidence), one a miniature with no base.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/scene.json"),
    )
    .expect("demo scene");
    let mut scene: serde_json::Value = serde_json::from_str(&text).expect("json");
    let square = |x: f64, y: f64| {
        serde_json::json!([
            [x - 20.0, y - 20.0],
            [x + 20.0, y - 20.0],
            [x + 20.0, y + 20.0],
            [x - 20.0, y + 20.0]
        ])
    };
    let obstacles = scene["obstacles"].as_array_mut().expect("obstacles");
    obstacles.push(serde_json::json!({"id": "o7", "polygon": square(300.0, 380.0), "sigma_mm": 2.0, "confidence": 0.3}));
    obstacles.push(serde_json::json!({"id": "o8", "polygon": square(220.0, 380.0)}));
    // A miniature with no base seen under it: unnamed too, and said to be a ship.
    obstacles.push(serde_json::json!({"id": "o9", "polygon": square(700.0, 700.0), "sigma_mm": 10.0, "confidence": 0.1, "doubts": ["hidden_base"]}));
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("scene.json");
    std::fs::write(&path, scene.to_string()).expect("write");
    let mut h = Harness::demo();
    let amber_before = h.stroked_in(CLOSE);
    assert_eq!(h.app.drawn().unnamed, 0);
    h.app = OverlayApp::from_source(
        &Source::Scene(path),
        None,
        Sides::Both,
        RollTemplate::Straight1,
        false,
    )
    .expect("app");
    h.frame(vec![]);
    h.frame(vec![]);
    assert_eq!(h.app.drawn().obstacles, 9);
    assert_eq!(h.app.drawn().unnamed, 2, "only o7 and o9 are unnamed");
    assert_eq!(h.app.drawn().hidden_bases, 1, "o9 is drawn as a ship?");
    assert_eq!(h.app.drawn().unsure, 0);
    assert!(h.stroked_in(CLOSE) > amber_before, "its outline is amber");
}

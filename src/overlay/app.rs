//! One frame of the overlay: keys, the side panel, and the table view with its mouse
//! handling. It takes a plain `egui::Ui`, so the eframe window (`window`) and headless
//! tests run exactly the same code.

use super::OverlayError;
use super::camera_view::{CameraDrawn, CameraScene, paint_camera};
use super::hit::ship_at;
use super::judge::{JudgeAction, JudgeMode};
use super::live::{LiveView, ViewMode};
use super::paint::{Drawn, paint_table};
use super::panel::{Timings, panel_ui};
use super::projector::ProjectorScene;
use super::projector_output::{ProjectorOutput, viewport_id};
use super::state::{Judged, OverlayState, Sides, TEMPLATES};
use super::transform::{Transform, ViewState};
use eframe::egui::{self, Event, Key, Modifiers, RawInput, Sense, Ui};
use std::time::{Duration, Instant};

/// Running frame statistics: exponential means for the panel, totals for the final report.
#[derive(Clone, Debug, Default)]
pub struct FrameStats {
    pub frames: u64,
    pub ui_total: Duration,
    pub ui_max: Duration,
    pub verdict_total: Duration,
    pub interval_total: Duration,
    pub intervals: u64,
    shown: Timings,
    last_start: Option<Instant>,
}

impl FrameStats {
    fn record(&mut self, start: Instant, ui: Duration, verdict: Duration) {
        const A: f64 = 0.1;
        let ema = |old: f64, new: f64, first: bool| if first { new } else { old + A * (new - old) };
        let first = self.frames == 0;
        self.frames += 1;
        self.ui_total += ui;
        self.ui_max = self.ui_max.max(ui);
        self.verdict_total += verdict;
        self.shown.ui_ms = ema(self.shown.ui_ms, ui.as_secs_f64() * 1e3, first);
        self.shown.verdict_us = ema(self.shown.verdict_us, verdict.as_secs_f64() * 1e6, first);
        if let Some(prev) = self.last_start {
            let gap = start.saturating_duration_since(prev);
            // Gaps of a second or more are the app idling, not its frame rate.
            if gap < Duration::from_secs(1) {
                self.interval_total += gap;
                self.intervals += 1;
                let ms = gap.as_secs_f64() * 1e3;
                self.shown.interval_ms = Some(match self.shown.interval_ms {
                    Some(old) => old + A * (ms - old),
                    None => ms,
                });
            }
        }
        self.last_start = Some(start);
    }

    pub fn shown(&self) -> Timings {
        self.shown
    }

    /// Mean frames per second over the run (back-to-back frames only).
    pub fn fps(&self) -> Option<f64> {
        (self.intervals > 0 && !self.interval_total.is_zero())
            .then(|| self.intervals as f64 / self.interval_total.as_secs_f64())
    }

    /// Mean time to build one UI frame, ms.
    pub fn ui_mean_ms(&self) -> f64 {
        self.ui_total.as_secs_f64() * 1e3 / self.frames.max(1) as f64
    }

    /// One line for stderr: the numbers issue 6 asks to measure.
    pub fn summary(&self) -> String {
        let per = |d: Duration, n: u64| d.as_secs_f64() / n.max(1) as f64;
        format!(
            "frames {}, ui mean {:.2} ms (max {:.2} ms), verdict mean {:.1} µs, frame interval mean {:.1} ms",
            self.frames,
            per(self.ui_total, self.frames) * 1e3,
            self.ui_max.as_secs_f64() * 1e3,
            per(self.verdict_total, self.frames) * 1e6,
            per(self.interval_total, self.intervals) * 1e3,
        )
    }
}

pub struct OverlayApp {
    pub state: OverlayState,
    pub view: ViewState,
    pub stats: FrameStats,
    /// Tab presses taken out of the raw input before egui could use them to move keyboard
    /// focus between widgets: positive = next ship, negative = previous.
    pending_tabs: i32,
    drawn: Drawn,
    /// The transform and view area of the last frame, for the screenshot's sidecar.
    last_view: Option<(Transform, egui::Rect)>,
    last_judged: Option<Judged>,
    /// Judge mode (J): the frozen table, its clearances and the report export.
    pub judge: Option<JudgeMode>,
    /// A live source (image, video, camera): its feed, the camera view's picture and the
    /// latency. `None` for a scene.
    pub live: Option<LiveView>,
    /// On a live source, the calibration directory detection reads (for judge mode's
    /// report).
    pub calibration_dir: Option<std::path::PathBuf>,
    camera_drawn: CameraDrawn,
    /// The projector output (`--projector`, `--view projector`): `None` without its
    /// calibration.
    pub projector: Option<ProjectorOutput>,
    /// The calibration panel (key K): on live sources only, where there are frames.
    #[cfg(feature = "vision")]
    pub calibrate: Option<super::calibrate::CalibratePanel>,
    /// Starts detection again from the calibration files (after the panel rewrote
    /// table.json): a new worker replaces the live view. `None`: a restart by hand.
    #[cfg(feature = "vision")]
    pub restart_live: Option<RestartLive>,
}

/// See [`OverlayApp::restart_live`].
#[cfg(feature = "vision")]
pub type RestartLive = Box<dyn FnMut() -> Result<LiveView, OverlayError>>;

impl OverlayApp {
    pub fn new(state: OverlayState) -> OverlayApp {
        OverlayApp {
            state,
            view: ViewState::default(),
            stats: FrameStats::default(),
            pending_tabs: 0,
            drawn: Drawn::default(),
            last_view: None,
            last_judged: None,
            judge: None,
            live: None,
            calibration_dir: None,
            camera_drawn: CameraDrawn::default(),
            projector: None,
            #[cfg(feature = "vision")]
            calibrate: None,
            #[cfg(feature = "vision")]
            restart_live: None,
        }
    }

    /// An app on a live source: the table starts empty (standard play area) and fills as
    /// the worker posts scenes; `select` is kept until that ship shows up.
    pub fn live(
        label: String,
        live: LiveView,
        select: Option<&str>,
        sides: Sides,
        template: crate::rules::RollTemplate,
        ignore_obstacles: bool,
    ) -> OverlayApp {
        let models = crate::Models::builtin();
        let scene = crate::Scene::new(models.play_areas.standard());
        let table = crate::rules::Table {
            play_area: scene.play_area,
            ships: Vec::new(),
            obstacles: Vec::new(),
        };
        let mut state = OverlayState::live(label, scene, table);
        if let Some(id) = select {
            state.choose(id);
        }
        state.sides = sides;
        state.template = template;
        state.ignore_obstacles = ignore_obstacles;
        let mut app = OverlayApp::new(state);
        app.live = Some(live);
        app
    }

    /// Loads a source and applies the start-up choices of the command line.
    pub fn from_source(
        source: &super::Source,
        select: Option<&str>,
        sides: Sides,
        template: crate::rules::RollTemplate,
        ignore_obstacles: bool,
    ) -> Result<OverlayApp, OverlayError> {
        let (scene, table) = source.load(crate::Models::builtin())?;
        let mut state = OverlayState::new(source.label(), scene, table)?;
        if let Some(id) = select {
            state.select_id(id)?;
        }
        state.sides = sides;
        state.template = template;
        state.ignore_obstacles = ignore_obstacles;
        Ok(OverlayApp::new(state))
    }

    /// What the last frame drew (templates, landings with their screen boxes).
    pub fn drawn(&self) -> &Drawn {
        &self.drawn
    }

    pub fn last_view(&self) -> Option<(Transform, egui::Rect)> {
        self.last_view
    }

    pub fn last_judged(&self) -> Option<&Judged> {
        self.last_judged.as_ref()
    }

    /// Takes Tab and Shift+Tab out of the input before egui runs: egui would move keyboard
    /// focus with them, while here Tab means "next ship". eframe calls this through
    /// `App::raw_input_hook`; headless tests call it before `Context::run_ui`.
    pub fn filter_raw_input(&mut self, raw: &mut RawInput) {
        raw.events.retain(|e| match e {
            Event::Key {
                key: Key::Tab,
                pressed,
                modifiers,
                ..
            } => {
                if *pressed {
                    self.pending_tabs += if modifiers.shift { -1 } else { 1 };
                }
                false
            }
            _ => true,
        });
    }

    fn handle_keys(&mut self, ui: &Ui) {
        while self.pending_tabs > 0 {
            self.state.next_ship();
            self.pending_tabs -= 1;
        }
        while self.pending_tabs < 0 {
            self.state.previous_ship();
            self.pending_tabs += 1;
        }
        if ui.ctx().egui_wants_keyboard_input() {
            return;
        }
        ui.input_mut(|i| {
            let mut key = |k| i.consume_key(Modifiers::NONE, k);
            if key(Key::L) {
                self.state.sides = Sides::Left;
            }
            if key(Key::R) {
                self.state.sides = Sides::Right;
            }
            if key(Key::B) {
                self.state.sides = Sides::Both;
            }
            for (k, t) in [Key::Num1, Key::Num2, Key::Num3, Key::Num4]
                .into_iter()
                .zip(TEMPLATES)
            {
                if key(k) {
                    self.state.template = t;
                }
            }
            if key(Key::O) {
                self.state.ignore_obstacles = !self.state.ignore_obstacles;
            }
            if key(Key::F) {
                self.view = ViewState::default();
            }
        });
    }

    /// Enters judge mode (freezing the current choice) or leaves it (restoring the view).
    pub fn toggle_judge(&mut self) {
        match self.judge.take() {
            Some(j) => self.view = j.view_before,
            None => {
                let mut j = JudgeMode::freeze(&self.state, self.view);
                j.table_check = self.live.as_ref().and_then(|l| l.table_check.clone());
                j.calibration_dir = self.calibration_dir.clone();
                self.judge = Some(j);
            }
        }
    }

    /// What the camera view drew in the last frame (for tests and clicks).
    pub fn camera_drawn(&self) -> &CameraDrawn {
        &self.camera_drawn
    }

    /// One frame of the whole overlay inside `ui`.
    pub fn ui(&mut self, ui: &mut Ui) {
        let start = Instant::now();
        // The newest scene first, so that this very frame judges and paints it.
        if let Some(live) = &mut self.live {
            live.poll(ui.ctx(), &mut self.state);
        }
        let (j_key, esc) = if ui.ctx().egui_wants_keyboard_input() {
            (false, false)
        } else {
            ui.input_mut(|i| {
                (
                    i.consume_key(Modifiers::NONE, Key::J),
                    i.consume_key(Modifiers::NONE, Key::Escape),
                )
            })
        };
        if j_key || (esc && self.judge.is_some()) {
            self.toggle_judge();
        }
        // Frozen: the choice keys, Tab and clicks change nothing.
        if self.judge.is_some() {
            self.pending_tabs = 0;
        } else {
            self.handle_keys(ui);
        }
        let centre_on_ship = ui.input_mut(|i| i.consume_key(Modifiers::NONE, Key::C));
        if ui.input_mut(|i| i.consume_key(Modifiers::NONE, Key::V)) {
            self.next_view();
        }
        if ui.input_mut(|i| i.consume_key(Modifiers::NONE, Key::P))
            && let Some(p) = &mut self.projector
        {
            p.show_pattern = !p.show_pattern;
        }
        #[cfg(feature = "vision")]
        if !ui.ctx().egui_wants_keyboard_input()
            && ui.input_mut(|i| i.consume_key(Modifiers::NONE, Key::K))
        {
            self.toggle_calibrate();
        }
        #[cfg(feature = "vision")]
        self.calibration_effects();

        // The panel changes the choice, so judge after it; it shows the previous frame's
        // verdict for the one frame in which a widget changed something.
        let judged_before = self.state.judge();
        let timings = self.stats.shown();
        let mut toggle = false;
        egui::Panel::left("overlay-panel")
            .default_size(370.0)
            .resizable(true)
            .show(ui, |ui| match &mut self.judge {
                Some(j) => toggle = j.panel_ui(ui) == JudgeAction::Leave,
                None => {
                    toggle = panel_ui(
                        ui,
                        &mut self.state,
                        &judged_before,
                        &timings,
                        self.live.as_ref(),
                    )
                }
            });
        if toggle {
            self.toggle_judge();
        }

        let judged = match &self.judge {
            Some(j) => Judged {
                verdict: j.verdict.clone(),
                took: Duration::ZERO,
            },
            None => self.state.judge(),
        };
        let verdict_took = judged.took;
        egui::CentralPanel::default()
            .frame(egui::Frame::NONE)
            .show(ui, |ui| {
                let can_calibrate = self.can_calibrate();
                let mut calibrate = false;
                let mode = self.live.as_mut().map(|live| {
                    calibrate = live_bar(ui, live, can_calibrate);
                    live.mode
                });
                if calibrate {
                    self.toggle_calibrate();
                }
                if self.projector.as_ref().is_some_and(|p| p.in_main) {
                    self.projector_view(ui, &judged);
                    self.last_judged = Some(judged);
                    return;
                }
                match mode {
                    None | Some(ViewMode::Table) => self.table_view(ui, judged, centre_on_ship),
                    Some(ViewMode::Camera) => {
                        let judged = self.camera_view(ui, judged);
                        self.last_judged = Some(judged);
                    }
                    Some(ViewMode::Split) => {
                        ui.columns(2, |cols| {
                            let judged = self.camera_view(&mut cols[0], judged);
                            self.table_view(&mut cols[1], judged, centre_on_ship);
                        });
                    }
                }
            });
        #[cfg(feature = "vision")]
        if let Some(c) = &mut self.calibrate {
            c.show(ui.ctx(), self.projector.as_mut());
        }
        if let Some(live) = &mut self.live {
            live.pass_done();
        }
        self.stats.record(start, start.elapsed(), verdict_took);
    }

    /// Whether there is a calibration panel to open.
    fn can_calibrate(&self) -> bool {
        #[cfg(feature = "vision")]
        return self.calibrate.is_some();
        #[cfg(not(feature = "vision"))]
        false
    }

    /// Key K, or "Calibrate…": opens or closes the calibration panel.
    pub fn toggle_calibrate(&mut self) {
        #[cfg(feature = "vision")]
        if let Some(c) = &mut self.calibrate {
            c.toggle();
        }
    }

    /// What the panel's finished actions mean for the app: a new table.json restarts
    /// detection on it (the worker's detector is built from the files once, at its start,
    /// so a restart is the one way in); a new projector.json is mapped through at once.
    #[cfg(feature = "vision")]
    fn calibration_effects(&mut self) {
        use super::calibrate::Effect;
        let Some(c) = &mut self.calibrate else {
            return;
        };
        for e in c.poll() {
            match e {
                Effect::TableSaved => {
                    let note = match &mut self.restart_live {
                        None => "restart the overlay to detect with the new table".to_string(),
                        Some(restart) => match restart() {
                            Ok(mut view) => {
                                if let Some(old) = &self.live {
                                    view.mode = old.mode;
                                }
                                // Dropping the old view stops its worker.
                                self.live = Some(view);
                                "detection restarted with the new table".to_string()
                            }
                            Err(e) => format!("detection not restarted: {e}"),
                        },
                    };
                    c.table_note = Some(note);
                }
                Effect::ProjectorSaved(file) => {
                    if let Some(p) = &mut self.projector {
                        p.projection = super::projector::Projection::from(&file);
                        p.show_pattern = false;
                    }
                }
            }
        }
    }

    /// Key V: the live views in turn (camera + table, camera, table), then the projector
    /// view when there is a projector; on a scene source, table and projector.
    fn next_view(&mut self) {
        let projector = self.projector.as_mut();
        match (projector, &mut self.live) {
            (Some(p), _) if p.in_main => {
                p.in_main = false;
                if let Some(live) = &mut self.live {
                    live.mode = ViewMode::Split;
                }
            }
            (Some(p), None) => p.in_main = true,
            (Some(p), Some(live)) if live.mode == ViewMode::Table => p.in_main = true,
            (_, Some(live)) => live.mode = live.mode.next(),
            (None, None) => {}
        }
    }

    /// The projector image in `ui` (the main window's view, or the projector's viewport).
    fn projector_view(&mut self, ui: &mut Ui, judged: &Judged) {
        let Some(p) = &mut self.projector else {
            return;
        };
        let (response, painter) = ui.allocate_painter(ui.available_size(), Sense::hover());
        // While the camera grabs for a full search, the projector goes dark.
        if let Some(live) = self.live.as_ref().filter(|l| l.projector_blank()) {
            painter.rect_filled(response.rect, 0.0, egui::Color32::BLACK);
            live.painted_dark();
            ui.ctx().request_repaint();
            return;
        }
        let shown = self.judge.as_ref().map_or(&self.state, |j| &j.frozen);
        let projection = p.projection.clone();
        let unsure = unsure_ids(&shown.scene);
        let scene = ProjectorScene {
            projection: &projection,
            table: &shown.table,
            selected: shown.selected(),
            verdict: judged.verdict.as_ref().ok(),
            show_bases: p.show_bases,
            unsure: &unsure,
        };
        p.paint(ui.ctx(), &painter, response.rect, &scene);
    }

    /// The projector's own full-screen viewport, drawn with the verdict of the main
    /// window's frame that just ran (call after [`OverlayApp::ui`]). P toggles the pattern
    /// there too; closing it (Alt+F4) closes only it.
    pub fn projector_viewport(&mut self, ctx: &egui::Context) {
        let Some(builder) = self
            .projector
            .as_ref()
            .filter(|p| p.viewport)
            .map(|p| p.builder())
        else {
            return;
        };
        let Some(judged) = self.last_judged.clone() else {
            return;
        };
        ctx.show_viewport_immediate(viewport_id(), builder, |ui, _class| {
            if ui.input(|i| i.viewport().close_requested())
                && let Some(p) = &mut self.projector
            {
                p.viewport = false;
            }
            if ui.input_mut(|i| i.consume_key(Modifiers::NONE, Key::P))
                && let Some(p) = &mut self.projector
            {
                p.show_pattern = !p.show_pattern;
            }
            egui::CentralPanel::default()
                .frame(egui::Frame::NONE)
                .show(ui, |ui| self.projector_view(ui, &judged));
        });
    }

    /// The frame with the scene over it; a click on a ship selects it. Returns the verdict
    /// to show (judged again when the click changed the ship).
    fn camera_view(&mut self, ui: &mut Ui, judged: Judged) -> Judged {
        let (response, painter) = ui.allocate_painter(ui.available_size(), Sense::click());
        let frozen = self.judge.is_some();
        let Some(live) = &self.live else {
            return judged;
        };
        let shown = self.judge.as_ref().map_or(&self.state, |j| &j.frozen);
        self.camera_drawn = paint_camera(
            &painter,
            response.rect,
            &CameraScene {
                frame: live.texture().map(|(t, size)| (t.id(), size)),
                project: live.project.as_ref(),
                base_top_mm: live.base_top_mm,
                table: &shown.table,
                selected: shown.selected(),
                verdict: judged.verdict.as_ref().ok(),
                unsure: &unsure_ids(&shown.scene),
            },
        );
        if response.clicked()
            && !frozen
            && let Some(p) = response.interact_pointer_pos()
            && let Some(i) = super::camera_view::ship_at(&self.camera_drawn, p)
        {
            self.state.select(i);
            return self.state.judge();
        }
        judged
    }

    /// The top-down table with zoom, pan and click-to-select.
    fn table_view(&mut self, ui: &mut Ui, judged: Judged, centre_on_ship: bool) {
        let frozen = self.judge.is_some();
        let size = ui.available_size();
        let (response, painter) = ui.allocate_painter(size, Sense::click_and_drag());
        let rect = response.rect;
        let area = self
            .judge
            .as_ref()
            .map_or(&self.state, |j| &j.frozen)
            .table
            .play_area;
        let (w, h) = (area.width_mm, area.height_mm);
        if response.hovered() {
            let (scroll, zoom, pointer) = ui.input(|i| {
                (
                    i.smooth_scroll_delta().y,
                    i.zoom_delta(),
                    i.pointer.hover_pos(),
                )
            });
            let factor = (scroll * 0.0025).exp() * zoom;
            if let Some(p) = pointer
                && (factor - 1.0).abs() > 1e-4
            {
                self.view.zoom_about(rect, p, factor);
            }
        }
        if response.dragged() {
            self.view.pan_by(response.drag_delta());
        }
        if let Some(j) = &mut self.judge {
            j.apply_zoom(&mut self.view, rect);
        }
        if centre_on_ship
            && let Some(s) = self
                .state
                .selected()
                .and_then(|i| self.state.table.ships.get(i))
        {
            self.view.centre_on(w, h, rect, [s.pose.x, s.pose.y]);
        }
        let t = self.view.transform(w, h, rect);
        let clicked = response.clicked() && !frozen;
        if clicked
            && let Some(p) = response.interact_pointer_pos()
            && let Some(i) = ship_at(&self.state.table, t.to_table(p))
        {
            self.state.select(i);
        }
        // A click may have changed the ship: draw what is now chosen.
        let judged = if clicked { self.state.judge() } else { judged };
        let shown = self.judge.as_ref().map_or(&self.state, |j| &j.frozen);
        let unsure = unsure_ids(&shown.scene);
        self.drawn = paint_table(
            &painter,
            rect,
            &t,
            &shown.table,
            shown.selected(),
            judged.verdict.as_ref().ok(),
            &unsure,
            &hidden_base_ids(&shown.scene),
        );
        self.last_view = Some((t, rect));
        self.last_judged = Some(judged);
    }

    /// The frame statistics line, with the live latency when there is a live source.
    pub fn summary(&self) -> String {
        let mut line = self.stats.summary();
        if let Some(l) = &self.live {
            let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0} ms"));
            line.push_str(&format!(
                "; live: {} scenes shown, latency grab->screen median {} (last {}), detect median {}, worker (detect + picture) median {}",
                l.frames_shown,
                ms(l.latency.median()),
                ms(l.latency.last),
                ms(l.detect.median()),
                ms(l.worker.median()),
            ));
        }
        line
    }
}

/// Above a live source's views: the status banner (red while a camera is lost or the
/// source failed), the view tabs and, where it can be used, "Calibrate…" (whether it was
/// clicked).
fn live_bar(ui: &mut Ui, live: &mut LiveView, can_calibrate: bool) -> bool {
    if let Some((text, alarm)) = live.status.banner() {
        let (fill, ink) = if alarm {
            (super::paint::ILLEGAL, egui::Color32::WHITE)
        } else {
            (egui::Color32::from_gray(60), egui::Color32::WHITE)
        };
        egui::Frame::new()
            .fill(fill)
            .inner_margin(6.0)
            .show(ui, |ui| {
                ui.set_min_width(ui.available_width());
                ui.label(egui::RichText::new(text).color(ink).strong());
            });
    }
    ui.horizontal(|ui| {
        for m in [ViewMode::Split, ViewMode::Camera, ViewMode::Table] {
            ui.selectable_value(&mut live.mode, m, m.name());
        }
        ui.label(egui::RichText::new("(V)").small());
        can_calibrate && ui.button("Calibrate… (K)").clicked()
    })
    .inner
}

/// The outlines of `scene` that are miniatures with no base seen under them (see
/// [`crate::judge::OutlineNote::is_hidden_base`]): most likely ships.
fn hidden_base_ids(scene: &crate::scene::Scene) -> Vec<String> {
    scene
        .obstacles
        .iter()
        .filter(|o| crate::judge::OutlineNote::is_hidden_base(o))
        .map(|o| o.id.clone())
        .collect()
}

/// The ships of `scene` detection doubts (see [`crate::judge::UNSURE_CONFIDENCE`]) and
/// the outlines it could not name (see [`crate::judge::OutlineNote`]).
fn unsure_ids(scene: &crate::scene::Scene) -> Vec<String> {
    let ships = scene
        .ships
        .iter()
        .filter(|s| crate::judge::DetectionNote::is_unsure(s))
        .map(|s| s.id.clone());
    let outlines = scene
        .obstacles
        .iter()
        .filter(|o| crate::judge::OutlineNote::is_unidentified(o))
        .map(|o| o.id.clone());
    ships.chain(outlines).collect()
}

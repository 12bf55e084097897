//! Calibration from the app (key K, or "Calibrate…" above the live views): the camera,
//! table and projector steps of `hashmark calibrate`, run on the live source's current
//! frame with their figures shown, so a table can be set up without leaving the overlay.
//!
//! The solving is the library's (`vision::calibrate`), exactly as the CLI calls it; this
//! file only collects frames, runs each action on a worker thread (the ChArUco search and
//! `calibrateCamera` take from a tenth of a second to several seconds, and the UI must keep
//! painting meanwhile), and shows what came back. One action runs at a time; its result is
//! picked up by the first UI pass after it finished.
//!
//! The frame is the full-resolution BGR frame from the worker's `FrameSlot`, not the
//! downscaled picture the camera view shows: calibrations are in the camera's own pixels.

use super::frame_slot::FrameSlot;
use super::projector_output::ProjectorOutput;
use crate::calibration::files::CalibrationFile;
use crate::calibration::{CameraFile, Layout, ProjectorFile, TableFile};
use crate::vision::calibrate::camera::{self, BoardSpec, CameraReport, Rejection, View};
use crate::vision::calibrate::projector::{Pattern, calibrate_projector};
use crate::vision::calibrate::table::{TableReport, calibrate_table};
use crate::vision::calibrate::{camera_model, plots};
use eframe::egui::{self, Color32, RichText, Ui};
use opencv::core::Mat;
use opencv::prelude::*;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

/// Views needed before "Solve": fewer rarely pin down the distortion.
pub const MIN_VIEWS: usize = 8;
/// Camera-to-table distance for the uncertainty estimate, mm (the CLI's default).
pub const TABLE_DISTANCE_MM: f64 = 1100.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Table,
    Camera,
    Projector,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Table => "Table",
            Step::Camera => "Camera",
            Step::Projector => "Projector",
        }
    }
}

/// What a button asks for. Tests drive the panel with these, through the same path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Solve the table pose from this frame and write table.json.
    Table,
    /// Look for the ChArUco board in this frame and keep the view.
    AddView,
    ClearViews,
    /// Calibrate the camera from the views kept.
    Solve,
    SaveCamera,
    /// Show the projector pattern (as key P does), or the drawing again.
    TogglePattern,
    /// Solve the projector mapping from this frame of the projected pattern.
    TakePhoto,
    SaveProjector,
}

/// What the app must do after a pass of the panel.
#[derive(Clone, Debug)]
pub enum Effect {
    /// table.json was rewritten: detection must use it.
    TableSaved,
    /// projector.json was rewritten: the projector output maps through it from now on.
    ProjectorSaved(ProjectorFile),
}

/// A finished action.
enum Outcome {
    Table(Result<TableReport, String>),
    View {
        name: String,
        size: [u32; 2],
        found: Result<Result<View, Rejection>, String>,
    },
    Solved(Result<CameraReport, String>),
    Projector(Result<ProjectorFile, String>),
}

pub struct CalibratePanel {
    pub open: bool,
    pub step: Step,
    /// The play area the table step calibrates for, by name (models/play_areas.json): the
    /// table.json found in the directory's, else the standard one.
    pub play_area: String,
    /// The `--calibration` directory: camera.json and table.json are read and written here.
    dir: PathBuf,
    /// Where projector.json is written (`--projector-calibration`).
    projector_path: PathBuf,
    frames: FrameSlot,
    job: Option<(JoinHandle<Outcome>, &'static str)>,
    ctx: Option<egui::Context>,
    /// Why the last action could not start (no frame yet, too few views, busy).
    pub refusal: Option<String>,
    /// The table step's result (written to table.json when Ok).
    pub table: Option<Result<TableReport, String>>,
    /// What happened to detection after table.json changed.
    pub table_note: Option<String>,
    /// Every frame offered to the camera step, with the board found or why not.
    pub views: Vec<(String, Result<View, Rejection>)>,
    /// The camera step's image size (that of its first view).
    pub view_size: Option<[u32; 2]>,
    pub camera: Option<Result<CameraReport, String>>,
    pub camera_saved: Option<Result<PathBuf, String>>,
    pub projector: Option<Result<ProjectorFile, String>>,
    pub projector_saved: Option<Result<PathBuf, String>>,
    effects: Vec<Effect>,
}

impl CalibratePanel {
    pub fn new(dir: PathBuf, projector_path: PathBuf, frames: FrameSlot) -> CalibratePanel {
        let play_area = TableFile::load(&dir.join("table.json"))
            .ok()
            .and_then(|t| area_name(t.play_area()))
            .unwrap_or_else(|| "standard".into());
        CalibratePanel {
            open: false,
            step: Step::Table,
            play_area,
            dir,
            projector_path,
            frames,
            job: None,
            ctx: None,
            refusal: None,
            table: None,
            table_note: None,
            views: Vec::new(),
            view_size: None,
            camera: None,
            camera_saved: None,
            projector: None,
            projector_saved: None,
            effects: Vec::new(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The action running, if any ("solving the camera…").
    pub fn busy(&self) -> Option<&'static str> {
        self.job.as_ref().map(|(_, what)| *what)
    }

    pub fn toggle(&mut self) {
        self.open = !self.open;
        self.frames.want(self.open);
    }

    /// The views in which the board was found.
    pub fn usable_views(&self) -> impl Iterator<Item = &View> {
        self.views.iter().filter_map(|(_, v)| v.as_ref().ok())
    }

    /// Where the board has not been seen yet, as the CLI's live mode says it; `None` until
    /// a view is kept.
    pub fn still_needed(&self) -> Option<String> {
        let size = self.view_size?;
        let pts: Vec<[f64; 2]> = self
            .usable_views()
            .flat_map(|v| v.corners.iter().map(|c| c.1))
            .collect();
        if pts.is_empty() {
            return None;
        }
        Some(plots::region_names(&plots::empty_cells(&pts, size)))
    }

    fn refuse(&mut self, why: impl Into<String>) {
        self.refusal = Some(why.into());
    }

    fn frame(&mut self) -> Option<Mat> {
        let f = self.frames.latest();
        if f.is_none() {
            self.refuse("no camera frame yet: wait for the source to deliver one");
        }
        f
    }

    fn spawn(&mut self, what: &'static str, work: impl FnOnce() -> Outcome + Send + 'static) {
        let ctx = self.ctx.clone();
        let handle = std::thread::Builder::new()
            .name("hashmark-calibrate".into())
            .spawn(move || {
                let out = work();
                if let Some(c) = ctx {
                    c.request_repaint();
                }
                out
            });
        match handle {
            Ok(h) => self.job = Some((h, what)),
            Err(e) => self.refuse(format!("cannot start {what}: {e}")),
        }
    }

    /// Runs an action (what its button does).
    pub fn act(&mut self, action: Action, projector: Option<&mut ProjectorOutput>) {
        self.refusal = None;
        if let Some(what) = self.busy()
            && !matches!(action, Action::TogglePattern)
        {
            return self.refuse(format!("wait: {what}"));
        }
        match action {
            Action::Table => {
                let Some(frame) = self.frame() else { return };
                let dir = self.dir.clone();
                let area = self.play_area.clone();
                self.table_note = None;
                self.spawn("solving the table…", move || {
                    Outcome::Table(table_job(&frame, &dir, &area))
                });
            }
            Action::AddView => {
                let Some(frame) = self.frame() else { return };
                let name = format!("view {}", self.views.len() + 1);
                self.spawn("looking for the board…", move || {
                    let size = frame
                        .size()
                        .map(|s| [s.width.max(0) as u32, s.height.max(0) as u32])
                        .unwrap_or([0, 0]);
                    let found = board()
                        .and_then(|b| camera::find_view(&frame, &b, &name))
                        .map_err(|e| e.to_string());
                    Outcome::View { name, size, found }
                });
            }
            Action::ClearViews => {
                self.views.clear();
                self.view_size = None;
                self.camera = None;
                self.camera_saved = None;
            }
            Action::Solve => {
                let n = self.usable_views().count();
                let Some(size) = self.view_size.filter(|_| n >= MIN_VIEWS) else {
                    return self.refuse(format!(
                        "{n} views with the board; add at least {MIN_VIEWS} before solving"
                    ));
                };
                let candidates = self.views.clone();
                self.camera_saved = None;
                self.spawn("solving the camera…", move || {
                    Outcome::Solved(solve_camera(candidates, size))
                });
            }
            Action::SaveCamera => {
                let Some(Ok(report)) = &self.camera else {
                    return self.refuse("nothing to save: solve first");
                };
                let path = self.dir.join("camera.json");
                self.camera_saved = Some(
                    report
                        .file
                        .save(&path)
                        .map(|()| path)
                        .map_err(|e| e.to_string()),
                );
            }
            Action::TogglePattern => match projector {
                Some(p) => p.show_pattern = !p.show_pattern,
                None => self.refuse("no projector: start the overlay with --projector"),
            },
            Action::TakePhoto => {
                let Some(size) = projector.map(|p| p.projection.size) else {
                    return self.refuse("no projector: start the overlay with --projector");
                };
                let Some(frame) = self.frame() else { return };
                let dir = self.dir.clone();
                self.projector_saved = None;
                self.spawn("solving the projector…", move || {
                    Outcome::Projector(projector_job(&frame, &dir, size))
                });
            }
            Action::SaveProjector => {
                let Some(Ok(file)) = &self.projector else {
                    return self.refuse("nothing to save: take a photo of the pattern first");
                };
                let saved = file.save(&self.projector_path).map_err(|e| e.to_string());
                if saved.is_ok() {
                    self.effects.push(Effect::ProjectorSaved(file.clone()));
                }
                self.projector_saved = Some(saved.map(|()| self.projector_path.clone()));
            }
        }
    }

    /// Takes a finished action's result; call once per UI pass. Returns what the app must
    /// do about it.
    pub fn poll(&mut self) -> Vec<Effect> {
        if self.job.as_ref().is_some_and(|(h, _)| h.is_finished())
            && let Some((handle, what)) = self.job.take()
        {
            match handle.join() {
                Ok(out) => self.finish(out),
                Err(_) => self.refuse(format!("{what} failed (the thread panicked)")),
            }
        }
        std::mem::take(&mut self.effects)
    }

    fn finish(&mut self, out: Outcome) {
        match out {
            Outcome::Table(r) => {
                if r.is_ok() {
                    self.effects.push(Effect::TableSaved);
                }
                self.table = Some(r);
            }
            Outcome::View { name, size, found } => {
                let found = match found {
                    Ok(f) => f,
                    Err(e) => return self.refuse(e),
                };
                let found = match self.view_size {
                    Some(s) if s != size => Err(Rejection::WrongSize(size)),
                    _ => found,
                };
                if found.is_ok() && self.view_size.is_none() {
                    self.view_size = Some(size);
                }
                self.views.push((name, found));
            }
            Outcome::Solved(r) => self.camera = Some(r),
            Outcome::Projector(r) => self.projector = Some(r),
        }
    }

    /// The panel's window, when open; `projector` is the app's projector output.
    pub fn show(&mut self, ctx: &egui::Context, projector: Option<&mut ProjectorOutput>) {
        self.ctx = Some(ctx.clone());
        if !self.open {
            return;
        }
        let mut open = true;
        let mut clicked: Option<Action> = None;
        egui::Window::new("Calibrate")
            .open(&mut open)
            .default_width(420.0)
            .vscroll(true)
            .show(ctx, |ui| {
                clicked = self.contents(ui, projector.as_deref());
            });
        if !open {
            self.toggle();
        }
        if let Some(a) = clicked {
            self.act(a, projector);
        }
    }

    fn contents(&mut self, ui: &mut Ui, projector: Option<&ProjectorOutput>) -> Option<Action> {
        ui.horizontal(|ui| {
            for s in [Step::Table, Step::Camera, Step::Projector] {
                ui.selectable_value(&mut self.step, s, s.name());
            }
        });
        ui.label(
            RichText::new(format!("files in {}", self.dir.display()))
                .small()
                .weak(),
        );
        ui.separator();
        let idle = self.busy().is_none();
        let mut clicked = None;
        let mut button = |ui: &mut Ui, text: &str, action: Action, enabled: bool| {
            if ui.add_enabled(enabled, egui::Button::new(text)).clicked() {
                clicked = Some(action);
            }
        };
        match self.step {
            Step::Table => {
                ui.horizontal(|ui| {
                    ui.label("Play area:");
                    for a in &crate::Models::builtin().play_areas.areas {
                        ui.selectable_value(&mut self.play_area, a.name.clone(), &a.name)
                            .on_hover_text(format!(
                                "{} x {} mm; the cards lie at its corners",
                                a.width_mm, a.height_mm
                            ));
                    }
                });
                ui.label("Put the four mat marker cards on the table, clear the view, then:");
                button(ui, "Calibrate table from this frame", Action::Table, idle);
                table_ui(ui, self.table.as_ref(), self.table_note.as_deref());
            }
            Step::Camera => {
                ui.label(
                    "Hold the ChArUco board in view, move and tilt it between frames; \
                     cover the whole image.",
                );
                ui.horizontal(|ui| {
                    button(ui, "Add this frame", Action::AddView, idle);
                    let n = self.usable_views().count();
                    button(ui, "Solve", Action::Solve, idle && n >= MIN_VIEWS);
                    button(ui, "Clear", Action::ClearViews, idle);
                });
                self.views_ui(ui);
                if let Some(r) = &self.camera {
                    camera_ui(ui, r);
                    if r.is_ok() {
                        button(ui, "Save camera.json", Action::SaveCamera, idle);
                    }
                }
                saved_ui(
                    ui,
                    self.camera_saved.as_ref(),
                    "then calibrate the table again",
                );
            }
            Step::Projector => match projector {
                None => {
                    ui.label("Start the overlay with --projector to calibrate a projector.");
                }
                Some(p) => {
                    ui.label(format!(
                        "Clear the table. The pattern ({} x {}) shows on the projector; \
                         when the camera sees it, take the photo.",
                        p.projection.size[0], p.projection.size[1]
                    ));
                    ui.horizontal(|ui| {
                        let show = if p.show_pattern {
                            "Hide pattern (P)"
                        } else {
                            "Show pattern (P)"
                        };
                        button(ui, show, Action::TogglePattern, true);
                        button(ui, "Take photo", Action::TakePhoto, idle);
                    });
                    if let Some(r) = &self.projector {
                        projector_ui(ui, r);
                        if r.is_ok() {
                            button(ui, "Save projector.json", Action::SaveProjector, idle);
                        }
                    }
                    saved_ui(
                        ui,
                        self.projector_saved.as_ref(),
                        "the projector uses it now",
                    );
                }
            },
        }
        ui.separator();
        if let Some(what) = self.busy() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(what);
            });
        }
        if let Some(r) = &self.refusal {
            ui.colored_label(super::paint::ILLEGAL, r);
        }
        clicked
    }

    fn views_ui(&self, ui: &mut Ui) {
        let n = self.usable_views().count();
        ui.label(format!(
            "{n} views with the board ({MIN_VIEWS} needed), {} rejected",
            self.views.len() - n
        ));
        if let Some((name, last)) = self.views.last() {
            match last {
                Ok(v) => ui.label(format!("{name}: {} corners", v.corners.len())),
                Err(why) => ui.colored_label(super::paint::ILLEGAL, format!("{name}: {why}")),
            };
        }
        match self.still_needed() {
            Some(r) if r.is_empty() => ui.label("the whole image is covered"),
            Some(r) => ui.label(format!("still needed: {r}")),
            None => ui.label("no board seen yet"),
        };
    }

    /// The panel's figures for tests and the screenshot sidecar.
    pub fn to_json(&self) -> serde_json::Value {
        let err = |r: Option<&String>| r.cloned();
        serde_json::json!({
            "open": self.open,
            "step": self.step.name(),
            "play_area": self.play_area,
            "busy": self.busy(),
            "refusal": self.refusal,
            "table": self.table.as_ref().map(|r| match r {
                Ok(t) => serde_json::json!({
                    "residuals_mm": t.file.marker_residuals_mm,
                    "marker_side_mm": t.marker_side_mm,
                }),
                Err(e) => serde_json::json!({ "error": e }),
            }),
            "table_note": self.table_note,
            "views": self.views.iter().map(|(n, v)| match v {
                Ok(v) => serde_json::json!({ "name": n, "corners": v.corners.len() }),
                Err(why) => serde_json::json!({ "name": n, "rejected": why.to_string() }),
            }).collect::<Vec<_>>(),
            "still_needed": self.still_needed(),
            "camera": self.camera.as_ref().map(|r| match r {
                Ok(c) => serde_json::json!({
                    "rms_px": c.file.rms_px,
                    "camera_matrix": c.file.camera_matrix,
                    "std_dev": c.file.std_dev,
                    "table_uncertainty_mm": c.file.table_uncertainty_mm,
                    "per_view_rms": c.per_view_rms,
                }),
                Err(e) => serde_json::json!({ "error": e }),
            }),
            "camera_saved": self.camera_saved.as_ref().map(|r| r.as_ref().map(|p| p.display().to_string()).map_err(Clone::clone).err()),
            "projector": self.projector.as_ref().map(|r| match r {
                Ok(p) => serde_json::json!({ "residual_px": p.residual_px, "residual_mm": p.residual_mm }),
                Err(e) => serde_json::json!({ "error": e }),
            }),
            "projector_saved_error": err(self.projector_saved.as_ref().and_then(|r| r.as_ref().err())),
        })
    }
}

/// The board the CLI calibrates with by default: the layout's.
fn board() -> Result<crate::vision::aruco::CharucoGeometry, crate::vision::VisionError> {
    BoardSpec::from_layout(&Layout::builtin().board).geometry()
}

/// The name of the known play area of this size, if any.
fn area_name(play: crate::geometry::PlayArea) -> Option<String> {
    crate::Models::builtin()
        .play_areas
        .areas
        .iter()
        .find(|a| a.width_mm == play.width_mm && a.height_mm == play.height_mm)
        .map(|a| a.name.clone())
}

/// The table step for the play area named `area`: the pose with the saved intrinsics,
/// written atomically on success. The mat markers are those of a table.json made before for
/// that play area (`hashmark calibrate table --layout` keeps holding), else the built-in
/// layout at its corners.
fn table_job(frame: &Mat, dir: &Path, area: &str) -> Result<TableReport, String> {
    let camera = CameraFile::load(&dir.join("camera.json")).map_err(|e| e.to_string())?;
    let path = dir.join("table.json");
    let play = crate::Models::builtin()
        .play_areas
        .get(area)
        .map(|a| a.area())
        .ok_or_else(|| format!("no play area named {area:?}"))?;
    let layout = match TableFile::load(&path) {
        Ok(before) if before.play_area() == play => before.layout(),
        _ => Layout::around(play),
    };
    let report = calibrate_table(frame, &layout, play, Some(&camera)).map_err(|e| e.to_string())?;
    report.file.save(&path).map_err(|e| e.to_string())?;
    Ok(report)
}

/// The camera step's solve, with the table uncertainty the CLI adds.
fn solve_camera(
    candidates: Vec<(String, Result<View, Rejection>)>,
    size: [u32; 2],
) -> Result<CameraReport, String> {
    let board = board().map_err(|e| e.to_string())?;
    let mut report = camera::calibrate(candidates, &board, size).map_err(|e| e.to_string())?;
    let play = crate::Models::builtin().play_areas.standard();
    report.file.table_uncertainty_mm = camera::table_uncertainty_mm(
        &report.file,
        &Layout::builtin(),
        [play.width_mm, play.height_mm],
        TABLE_DISTANCE_MM,
    );
    Ok(report)
}

/// The projector step: the projected pattern seen through the calibrated camera.
fn projector_job(photo: &Mat, dir: &Path, size: [u32; 2]) -> Result<ProjectorFile, String> {
    let camera = CameraFile::load(&dir.join("camera.json")).map_err(|e| e.to_string())?;
    let table = TableFile::load(&dir.join("table.json")).map_err(|e| e.to_string())?;
    let model = camera_model(&camera, &table).ok_or(
        "the table calibration has no camera pose: calibrate the table with the camera first",
    )?;
    let pattern = Pattern::for_size(size).map_err(|e| e.to_string())?;
    let play = table.play_area();
    calibrate_projector(photo, &pattern, &model, [play.width_mm, play.height_mm])
        .map_err(|e| e.to_string())
}

fn error_ui(ui: &mut Ui, e: &str) {
    ui.colored_label(super::paint::ILLEGAL, e);
}

fn saved_ui(ui: &mut Ui, saved: Option<&Result<PathBuf, String>>, next: &str) {
    match saved {
        Some(Ok(p)) => {
            ui.label(format!("wrote {}; {next}", p.display()));
        }
        Some(Err(e)) => error_ui(ui, e),
        None => {}
    }
}

fn table_ui(ui: &mut Ui, r: Option<&Result<TableReport, String>>, note: Option<&str>) {
    let Some(r) = r else { return };
    let t = match r {
        Ok(t) => t,
        Err(e) => return error_ui(ui, e),
    };
    let expected = t.file.layout().mat_markers.marker_mm;
    egui::Grid::new("table-residuals")
        .striped(true)
        .show(ui, |ui| {
            ui.label("marker");
            ui.label("residual");
            ui.label("measures");
            ui.end_row();
            for (id, res) in &t.file.marker_residuals_mm {
                let side = id
                    .parse::<u32>()
                    .ok()
                    .and_then(|i| t.marker_side_mm.get(&i).copied());
                ui.label(id.as_str());
                ui.label(format!("{res:.2} mm"));
                match side {
                    Some(s) => {
                        let off = (s / expected - 1.0) * 100.0;
                        ui.label(format!("{s:.2} mm ({off:+.1} %)"))
                    }
                    None => ui.label("-"),
                };
                ui.end_row();
            }
        });
    ui.label(RichText::new("wrote table.json").color(Color32::from_rgb(0x2e, 0xcc, 0x40)));
    if let Some(n) = note {
        ui.label(n);
    }
}

fn camera_ui(ui: &mut Ui, r: &Result<CameraReport, String>) {
    let r = match r {
        Ok(r) => r,
        Err(e) => return error_ui(ui, e),
    };
    let f = &r.file;
    let k = f.camera_matrix;
    let sd = f.std_dev.unwrap_or([f64::NAN; 4]);
    ui.label(format!(
        "{} x {} from {} views ({} rejected): RMS {:.3} px",
        f.image_size[0],
        f.image_size[1],
        f.views,
        r.rejected.len(),
        f.rms_px
    ));
    egui::Grid::new("camera-intrinsics").show(ui, |ui| {
        for (name, v, s) in [
            ("fx", k[0][0], sd[0]),
            ("fy", k[1][1], sd[1]),
            ("cx", k[0][2], sd[2]),
            ("cy", k[1][2], sd[3]),
        ] {
            ui.label(name);
            ui.label(format!("{v:.2} ± {s:.2} px"));
            ui.end_row();
        }
    });
    if let Some(u) = f.table_uncertainty_mm {
        ui.label(format!(
            "expected error on the table at {TABLE_DISTANCE_MM:.0} mm: {u:.2} mm (1 sigma)"
        ));
    }
    egui::CollapsingHeader::new("per view")
        .default_open(false)
        .show(ui, |ui| {
            for (name, rms) in &r.per_view_rms {
                ui.label(format!("{name}: {rms:.3} px"));
            }
            for (name, why) in &r.rejected {
                ui.label(format!("rejected {name}: {why}"));
            }
        });
}

fn projector_ui(ui: &mut Ui, r: &Result<ProjectorFile, String>) {
    match r {
        Ok(p) => {
            ui.label(format!(
                "residual {:.2} projector px, {:.2} mm on the table",
                p.residual_px, p.residual_mm
            ));
        }
        Err(e) => error_ui(ui, e),
    }
}

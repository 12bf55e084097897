//! Judge mode (J): freeze the table as it is, zoom on the selected ship, list every
//! clearance the verdict measured with its sigma, and export the judge report. Frozen, so
//! that a hand over the table or a nudged ship cannot change what is being judged while a
//! judge reads it; the export is `judge::write_report`, the same files as `hashmark judge`.

use super::paint::{CLOSE, ILLEGAL, LEGAL};
use super::state::OverlayState;
use super::transform::{MARGIN_MM, Transform, ViewState, ZOOM_RANGE};
use crate::judge::{self, Clearance, ClearanceRole, JudgeReport, ReportSource, RollRequest};
use crate::rules::{RollError, RollVerdict};
use eframe::egui::{self, Color32, Rect, RichText, Ui, Vec2};
use std::path::{Path, PathBuf};

/// What the judge panel asks the app to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JudgeAction {
    Stay,
    Leave,
}

#[derive(Clone, Debug)]
pub struct JudgeMode {
    /// The overlay's state when frozen: scene, table, selected ship and options.
    pub frozen: OverlayState,
    /// Its verdict, made once at the freeze.
    pub verdict: Result<RollVerdict, RollError>,
    /// When frozen, RFC 3339.
    pub frozen_at: String,
    /// The view before judge mode, restored on leaving.
    pub view_before: ViewState,
    /// Exports go into a new `judge-<timestamp>` directory in here.
    pub out_base: PathBuf,
    /// The last export: the directory written, or why not.
    pub exported: Option<Result<PathBuf, String>>,
    /// Where the Export button was drawn in the last frame (scripts and tests click it).
    pub export_button: Option<Rect>,
    /// Zoom on the ship in the next frame: the view's size is only known there.
    zoom_pending: bool,
    /// On a live source, the frame check of the latest full search when frozen: a camera
    /// moved since calibration is said here in red, since every position is off.
    pub table_check: Option<super::feed::TableCheckNote>,
    /// On a live source, the calibration directory detection reads: the export states its
    /// files' residuals and dates, and the frame check, as `judge --image` does.
    pub calibration_dir: Option<PathBuf>,
}

impl JudgeMode {
    pub fn freeze(state: &OverlayState, view: ViewState) -> JudgeMode {
        JudgeMode {
            frozen: state.clone(),
            verdict: state.judge().verdict,
            frozen_at: crate::clock::timestamp(),
            view_before: view,
            out_base: PathBuf::from("."),
            exported: None,
            export_button: None,
            zoom_pending: true,
            table_check: None,
            calibration_dir: None,
        }
    }

    pub fn request(&self) -> RollRequest {
        RollRequest::new(
            self.frozen.selected_id(),
            self.frozen.sides.sides(),
            &self.frozen.options(),
        )
    }

    /// The report of the frozen verdict, stamped now.
    pub fn report(&self) -> Result<JudgeReport, String> {
        let verdict = self.verdict.clone().map_err(|e| e.to_string())?;
        Ok(JudgeReport::from_verdict(
            &self.frozen.scene,
            &self.request(),
            verdict,
            ReportSource::Overlay {
                source: self.frozen.source.clone(),
            },
            self.calibration_summary(),
        ))
    }

    /// The calibration the frozen scene was detected through, read when the report is
    /// made (the panel may have rewritten it since the freeze: then what was used is gone,
    /// and the files as they are now are stated); none when the files cannot be read.
    fn calibration_summary(&self) -> Option<judge::CalibrationSummary> {
        let dir = self.calibration_dir.as_ref()?;
        let mut summary = judge::CalibrationSummary::load(dir).ok()?;
        summary.frame_check = self.table_check.as_ref().map(|c| c.text.clone());
        Some(summary)
    }

    /// Writes the report into a fresh directory under `out_base` and remembers the outcome
    /// for the panel; never panics.
    pub fn export(&mut self) -> Result<PathBuf, String> {
        let result = self.report().and_then(|report| {
            let dir = fresh_dir(&self.out_base, crate::clock::now_secs());
            judge::write_report(&dir, &report)
                .map(|_| dir)
                .map_err(|e| e.to_string())
        });
        self.exported = Some(result.clone());
        result
    }

    /// On the first frame after the freeze: show the same square around the ship as the
    /// report's picture, centred on it.
    pub fn apply_zoom(&mut self, view: &mut ViewState, rect: Rect) {
        if !std::mem::take(&mut self.zoom_pending) {
            return;
        }
        let area = self.frozen.table.play_area;
        let fit = Transform::fit(area.width_mm, area.height_mm, MARGIN_MM, rect);
        let want = rect.width().min(rect.height()) / judge::VIEW_MM as f32;
        view.zoom = (want / fit.scale).clamp(ZOOM_RANGE.0, ZOOM_RANGE.1);
        view.pan = Vec2::ZERO;
        if let Some(s) = self
            .frozen
            .selected()
            .and_then(|i| self.frozen.table.ships.get(i))
        {
            view.centre_on(area.width_mm, area.height_mm, rect, [s.pose.x, s.pose.y]);
        }
    }

    /// The side panel in judge mode.
    pub fn panel_ui(&mut self, ui: &mut Ui) -> JudgeAction {
        let mut action = JudgeAction::Stay;
        ui.heading("judge mode");
        ui.label(format!("frozen {}", self.frozen_at));
        ui.label(format!("source: {}", self.frozen.source));
        ui.horizontal(|ui| {
            let export = ui.button("Export report");
            self.export_button = Some(export.rect);
            if export.clicked() {
                let _ = self.export();
            }
            if ui.button("Leave (J, Esc)").clicked() {
                action = JudgeAction::Leave;
            }
        });
        match &self.exported {
            Some(Ok(dir)) => {
                ui.label(RichText::new(format!("wrote {}", dir.display())).color(LEGAL));
            }
            Some(Err(e)) => {
                ui.label(RichText::new(format!("export failed: {e}")).color(ILLEGAL));
            }
            None => {}
        }
        ui.separator();
        if let Some(c) = self.table_check.as_ref().filter(|c| c.moved) {
            ui.label(
                RichText::new(format!(
                    "CAMERA MOVED since calibration, do not rule from these positions; \
                     recalibrate the table: {}",
                    c.text
                ))
                .color(ILLEGAL)
                .strong(),
            );
        }
        if let Some(note) = self
            .frozen
            .scene
            .ships
            .iter()
            .find(|s| s.id == self.frozen.selected_id())
            .and_then(judge::DetectionNote::of)
        {
            ui.label(RichText::new(&note.text).color(if note.unsure { CLOSE } else { LEGAL }));
        }
        if let Ok(v) = &self.verdict {
            for note in judge::outlines_near(&self.frozen.scene, &judge::Picture::around(v)) {
                ui.label(RichText::new(&note.text).color(CLOSE));
            }
            for note in judge::doubted_blockers(v, &self.frozen.scene) {
                ui.label(RichText::new(&note.text).color(CLOSE));
            }
        }
        match &self.verdict {
            Ok(v) => verdict_ui(ui, v),
            Err(e) => {
                ui.label(RichText::new(format!("cannot roll: {e}")).color(ILLEGAL));
            }
        }
        action
    }
}

/// `base/judge-<timestamp>`, with `-2`, `-3`... when that already exists (two exports in
/// one second must not overwrite each other).
fn fresh_dir(base: &Path, secs: i64) -> PathBuf {
    let name = judge::default_dir_name(secs);
    let mut dir = base.join(&name);
    let mut n = 2;
    while dir.exists() {
        dir = base.join(format!("{name}-{n}"));
        n += 1;
    }
    dir
}

fn colour(c: &Clearance) -> Color32 {
    if c.too_close_to_call {
        CLOSE
    } else if c.clearance_mm < 0.0 {
        ILLEGAL
    } else {
        LEGAL
    }
}

/// The heading and every clearance, one row each: side, slot, what, mm, sigma, call.
fn verdict_ui(ui: &mut Ui, v: &RollVerdict) {
    ui.label(RichText::new(v.headline()).strong());
    for d in &v.directions {
        let text = if d.fails {
            format!("{}: FAILS", d.direction.name())
        } else {
            format!(
                "{}: can roll ({} of 3 legal)",
                d.direction.name(),
                d.legal_count()
            )
        };
        ui.label(RichText::new(text).color(if d.fails { ILLEGAL } else { LEGAL }));
    }
    ui.add_space(4.0);
    egui::ScrollArea::vertical().show(ui, |ui| {
        egui::Grid::new("judge-clearances")
            .striped(true)
            .show(ui, |ui| {
                for h in ["side", "slot", "against", "mm", "sigma", "call"] {
                    ui.label(RichText::new(h).strong());
                }
                ui.end_row();
                for c in judge::clearances(v) {
                    let mono = |s: String| RichText::new(s).monospace().color(colour(&c));
                    ui.label(mono(c.direction.name().to_string()));
                    ui.label(mono(match (c.slot, c.role) {
                        (Some(s), _) => s.name().to_string(),
                        (None, ClearanceRole::Template) => "template".to_string(),
                        (None, _) => String::new(),
                    }));
                    let against = match &c.id {
                        Some(id) => format!("{} {id}", c.kind.name()),
                        None => c.kind.name().to_string(),
                    };
                    ui.label(mono(against));
                    ui.label(mono(format!("{:+.2}", c.clearance_mm)));
                    ui.label(mono(
                        c.sigma_mm.map_or("-".to_string(), |s| format!("{s:.2}")),
                    ));
                    ui.label(mono(
                        if c.too_close_to_call {
                            "too close"
                        } else if c.clearance_mm < 0.0 {
                            "overlaps"
                        } else {
                            "clear"
                        }
                        .to_string(),
                    ));
                    ui.end_row();
                }
            });
    });
}

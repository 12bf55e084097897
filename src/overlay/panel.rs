//! The side panel: the pickers (ship, sides, template, obstacles) and each position's state
//! with its reasons and margins in mm, worded like `hashmark roll`.

use super::live::LiveView;
use super::paint::{ILLEGAL, LEGAL};
use super::state::{Judged, OverlayState, Sides, TEMPLATES};
use crate::rules::{Landing, RollVerdict};
use eframe::egui::{self, Color32, RichText, Ui};

/// Frame timings shown at the bottom of the panel (and printed on a scripted exit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// Mean time to build one frame of UI (our code: verdict, panel, drawing), ms.
    pub ui_ms: f64,
    /// Mean time of `barrel_roll` for the selected ship, µs.
    pub verdict_us: f64,
    /// Mean time between frames (ms), when frames are drawn back to back.
    pub interval_ms: Option<f64>,
}

fn landing_line(p: &Landing) -> (String, Color32) {
    if p.too_close_to_call {
        let two_sigma = 2.0 * p.nearest.sigma_mm.unwrap_or(0.0);
        (
            format!(
                "{:<6} {} {:+7.2} mm: too close to call by camera (2 sigma {:.2} mm)",
                p.slot.name(),
                if p.legal { "legal?  " } else { "ILLEGAL?" },
                p.clearance_mm,
                two_sigma
            ),
            super::paint::CLOSE,
        )
    } else if p.legal {
        (
            format!("{:<6} legal   {:+7.2} mm", p.slot.name(), p.clearance_mm),
            LEGAL,
        )
    } else {
        (
            format!("{:<6} ILLEGAL {:+7.2} mm", p.slot.name(), p.clearance_mm),
            ILLEGAL,
        )
    }
}

/// The verdict as panel text: one block per side.
fn verdict_ui(ui: &mut Ui, v: &RollVerdict) {
    if let Some(note) = &v.interpretation {
        ui.label(RichText::new(format!("note: {note}")).italics().small());
    }
    for d in &v.directions {
        ui.add_space(6.0);
        let state = if d.fails {
            RichText::new(format!("{}: FAILS", d.direction.name())).color(ILLEGAL)
        } else {
            RichText::new(format!(
                "{}: can roll ({} of 3 legal)",
                d.direction.name(),
                d.legal_count()
            ))
            .color(LEGAL)
        };
        ui.label(state.strong());
        if !d.moves_through.is_empty() {
            let clearance = d
                .template_clearance_mm
                .map(|c| format!(" ({c:+.2} mm)"))
                .unwrap_or_default();
            ui.label(format!(
                "template over {}{clearance}{}",
                d.moves_through.join(", "),
                if v.ignore_obstacles { ", ignored" } else { "" }
            ));
        }
        for p in &d.positions {
            let (text, colour) = landing_line(p);
            ui.label(RichText::new(text).monospace().color(colour));
            if p.legal {
                ui.label(
                    RichText::new(format!(
                        "    nearest {} {:+.2} mm",
                        p.nearest.label(),
                        p.nearest.clearance_mm
                    ))
                    .monospace(),
                );
            }
            for r in &p.reasons {
                ui.label(
                    RichText::new(format!("    {} {:+.2} mm", r.label(), r.clearance_mm))
                        .monospace(),
                );
            }
        }
    }
}

/// Shows the panel's widgets; changes go straight into `state`. True when the judge-mode
/// button was clicked.
pub fn panel_ui(
    ui: &mut Ui,
    state: &mut OverlayState,
    judged: &Judged,
    timings: &Timings,
    live: Option<&LiveView>,
) -> bool {
    ui.heading("hashmark");
    ui.label(format!("source: {}", state.source));
    if let Some(live) = live {
        live.panel_ui(ui);
    }
    ui.separator();

    let before = state.selected();
    let mut selected = before;
    egui::ComboBox::from_label("ship (click, Tab)")
        .selected_text(state.selected_id().to_string())
        .show_ui(ui, |ui| {
            for (i, s) in state.table.ships.iter().enumerate() {
                ui.selectable_value(&mut selected, Some(i), format!("{} ({})", s.id, s.size));
            }
        });
    // Only a real pick counts: re-selecting every frame would turn a live table's missing
    // ship into "no choice".
    if selected != before
        && let Some(i) = selected
    {
        state.select(i);
    }

    ui.horizontal(|ui| {
        ui.label("side (L R B):");
        ui.selectable_value(&mut state.sides, Sides::Left, "L");
        ui.selectable_value(&mut state.sides, Sides::Right, "R");
        ui.selectable_value(&mut state.sides, Sides::Both, "both");
    });

    egui::ComboBox::from_label("template (1-4)")
        .selected_text(state.template.name())
        .show_ui(ui, |ui| {
            for t in TEMPLATES {
                ui.selectable_value(&mut state.template, t, t.name());
            }
        });
    ui.checkbox(&mut state.ignore_obstacles, "ignore obstacles (O)");
    let judge = ui.button("Judge mode (J)").clicked();
    ui.separator();

    match &judged.verdict {
        Ok(v) => {
            ui.label(
                RichText::new(format!(
                    "{} ({}) at x {:.1} y {:.1}, heading {:.1}",
                    v.ship, v.size, v.start.x, v.start.y, v.start.heading_deg
                ))
                .strong(),
            );
            egui::ScrollArea::vertical()
                .max_height(ui.available_height() - 70.0)
                .show(ui, |ui| verdict_ui(ui, v));
        }
        Err(_) if state.table.ships.is_empty() => {
            ui.label("no ships on the table (yet)");
        }
        Err(_) if !state.has_selection() && !state.selected_id().is_empty() => {
            ui.label(
                RichText::new(format!(
                    "{} is not in the latest scene (hidden or moved?); it is selected again when seen",
                    state.selected_id()
                ))
                .color(super::paint::CLOSE),
            );
        }
        Err(e) => {
            ui.label(RichText::new(format!("cannot roll: {e}")).color(ILLEGAL));
        }
    }

    ui.separator();
    ui.label(
        RichText::new(format!(
            "frame {:.2} ms, verdict {:.0} µs{}",
            timings.ui_ms,
            timings.verdict_us,
            timings
                .interval_ms
                .map(|i| format!(", {:.0} fps", 1000.0 / i.max(1e-3)))
                .unwrap_or_default()
        ))
        .small(),
    );
    ui.label(RichText::new("wheel: zoom, drag: pan, F: fit, C: centre on ship").small());
    if live.is_some() {
        ui.label(RichText::new("V: camera / table view").small());
    }
    judge
}

use super::{RollChoice, load_scene};
use crate::Models;
use crate::rules::{RollVerdict, barrel_roll};
use std::fmt::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RollArgs {
    /// Scene file (hashmark-scene/1).
    #[arg(long)]
    scene: PathBuf,
    /// Id of the ship that rolls.
    #[arg(long)]
    ship: String,
    #[command(flatten)]
    choice: RollChoice,
    /// Print the verdict as JSON (hashmark-roll/1) instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &RollArgs) -> anyhow::Result<()> {
    let (_, table) = load_scene(&args.scene)?;
    let verdict = barrel_roll(
        &table,
        Models::builtin(),
        &args.ship,
        &args.choice.sides(),
        &args.choice.options(),
    )?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&verdict)?);
    } else {
        out!("{}", text_report(&verdict));
    }
    Ok(())
}

/// The verdict as a table a person reads at the game table.
pub fn text_report(v: &RollVerdict) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", v.headline());
    if let Some(note) = &v.interpretation {
        let _ = writeln!(out, "note: {note}");
    }
    if v.directions
        .iter()
        .flat_map(|d| &d.positions)
        .any(|p| p.too_close_to_call)
    {
        let _ = writeln!(
            out,
            "?: within two sigma of the measurement: too close to call by camera, measure by hand"
        );
    }
    for d in &v.directions {
        let state = if d.fails {
            "FAILS".to_string()
        } else {
            format!("can roll ({} of 3 positions legal)", d.legal_count())
        };
        let through = if d.moves_through.is_empty() {
            String::new()
        } else {
            format!("; template over {}", d.moves_through.join(", "))
        };
        let _ = writeln!(out, "\n{}: {state}{through}", d.direction.name());
        let _ = writeln!(
            out,
            "  {:<7} {:>8} {:>8} {:>8}  {:<8} {:>10}  why",
            "slot", "x mm", "y mm", "heading", "verdict", "clear mm"
        );
        for p in &d.positions {
            let why = if p.legal {
                format!("nearest: {}", p.nearest.label())
            } else {
                p.reasons
                    .iter()
                    .map(|r| format!("{} ({:+.2})", r.label(), r.clearance_mm))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(
                out,
                "  {:<7} {:>8.2} {:>8.2} {:>8.2}  {:<8} {:>+10.2}  {}",
                p.slot.name(),
                p.x,
                p.y,
                p.heading_deg,
                match (p.legal, p.too_close_to_call) {
                    (true, false) => "legal",
                    (false, false) => "ILLEGAL",
                    (true, true) => "legal?",
                    (false, true) => "ILLEGAL?",
                },
                p.clearance_mm,
                why
            );
        }
    }
    out
}

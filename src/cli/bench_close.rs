//! `hashmark bench close-calls`: the judge's calls on tables made of close calls (see
//! [`crate::judge::close_calls`]), each rendered by the simulator, detected through the
//! camera it was rendered with, and judged against its own truth.

use crate::Models;
use crate::judge::agreement::{Agreement, Call, agreement};
use crate::judge::close_calls::close_call_table;
use crate::rules::{RollOptions, Slot};
use crate::vision::Resolution;
use crate::vision::detect::score::{Rendered, rendered_and_detected, score};

#[derive(clap::Args, Debug)]
pub struct BenchCloseArgs {
    /// How many tables (each of up to nine pairs of ships).
    #[arg(long, default_value_t = 10)]
    tables: u64,
    /// The first table's seed (its table, camera and light); the others follow it.
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Image size.
    #[arg(long, value_enum, default_value = "1080p")]
    resolution: super::simulate::Res,
    /// Also print every designed close call: both verdicts of its three positions.
    #[arg(long)]
    calls: bool,
    /// Read each frame as another camera, or the same one set differently, would have
    /// taken it (as `bench detect --camera`).
    #[arg(long, value_enum)]
    camera: Option<crate::vision::sim::camera_change::CameraChange>,
    /// Keep each table here to look at: seed<N>/sim/frame.jpg (as rendered, before any
    /// --camera change), sim/truth.json (the camera and the scene) and found.json (what
    /// detection made of it).
    #[arg(long)]
    keep: Option<std::path::PathBuf>,
}

pub fn run(a: &BenchCloseArgs) -> anyhow::Result<()> {
    let models = Models::builtin();
    let area = models.play_areas.standard();
    let resolution = match a.resolution {
        super::simulate::Res::Hd => Resolution::Hd1080,
        super::simulate::Res::Uhd => Resolution::Uhd4k,
    };
    let mut all = Agreement::default();
    // The designed positions (the rolling ship's three toward its neighbour) alone.
    let mut designed = Agreement::default();
    outln!(
        "{:<6} {:>5} {:>5} {:>9} {:>6} {:>6} {:>6}",
        "seed",
        "ships",
        "found",
        "positions",
        "sure",
        "left",
        "wrong"
    );
    for seed in a.first_seed..a.first_seed + a.tables {
        let (scene, calls) = close_call_table(seed, area, models);
        let Rendered { camera, jpg, found } =
            rendered_and_detected(&scene, seed, resolution, a.camera, models)?;
        let s = score(&scene, &found, models);
        if let Some(dir) = &a.keep {
            let d = dir.join(format!("seed{seed}"));
            std::fs::create_dir_all(d.join("sim"))?;
            crate::files::write_atomic(&d.join("sim/frame.jpg"), &jpg)?;
            let truth = serde_json::json!({"camera": &camera, "scene": &scene});
            crate::files::write_atomic(
                &d.join("sim/truth.json"),
                serde_json::to_string_pretty(&truth)?.as_bytes(),
            )?;
            crate::files::write_atomic(&d.join("found.json"), found.to_json_pretty().as_bytes())?;
        }
        let pairs = s.pairs();
        let judged = agreement(&scene, &found, &pairs, models, &RollOptions::default())?;
        let sure = judged.count(Call::SureRight);
        let left = judged.count(Call::LeftRight) + judged.count(Call::LeftWrong);
        outln!(
            "{seed:<6} {:>5} {:>5} {:>9} {sure:>6} {left:>6} {:>6}",
            scene.ships.len(),
            s.ships.len(),
            judged.calls.len(),
            judged.count(Call::SureWrong)
        );
        for c in judged.calls.iter().filter(|c| c.call == Call::SureWrong) {
            outln!("  wrong and sure: {}", c.describe());
        }
        for id in &s.missed_ships {
            if let Some(t) = scene.ships.iter().find(|t| t.id == *id) {
                outln!(
                    "  missed: {id} ({}) at {:.1}, {:.1}{}",
                    t.size.name(),
                    t.x,
                    t.y,
                    if s.missed_ships_outlined.contains(id) {
                        ", under an outline to check by eye"
                    } else {
                        ""
                    }
                );
            }
        }
        let mut mine = Agreement::default();
        for call in &calls {
            let toward = judged
                .calls
                .iter()
                .filter(|c| c.ship == call.ship && c.side == call.side);
            for c in toward {
                if a.calls {
                    outln!(
                        "  {} to {}, gap {:+.2} mm, turn {:+.1} deg{}: {}",
                        call.ship,
                        call.neighbour,
                        call.gap_mm,
                        call.turn_deg,
                        if c.slot == Slot::Middle {
                            ""
                        } else {
                            " (beside)"
                        },
                        c.describe()
                    );
                }
                mine.calls.push(c.clone());
            }
        }
        // A rolling ship missed: its designed positions have no verdict.
        mine.missed_positions = calls
            .iter()
            .filter(|c| !pairs.iter().any(|(t, _)| *t == c.ship))
            .count()
            * 3;
        designed.extend(mine);
        all.extend(judged);
    }
    outln!("every position: {}", all.summary());
    outln!(
        "the designed close calls (each rolling ship's three positions toward its neighbour): {}",
        designed.summary()
    );
    Ok(())
}

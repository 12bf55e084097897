use super::{RollChoice, load_scene};
use crate::rules::barrel_roll;
use crate::{Models, diagram};
use anyhow::Context;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct SvgArgs {
    /// Scene file (hashmark-scene/1).
    #[arg(long)]
    scene: PathBuf,
    /// Draw this ship's barrel roll (template and the six landings).
    #[arg(long)]
    ship: Option<String>,
    #[command(flatten)]
    choice: RollChoice,
    /// Show only a square of this many mm around the rolling ship (still true scale).
    #[arg(long, requires = "ship")]
    crop_mm: Option<f64>,
    /// Output SVG file (written atomically).
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: &SvgArgs) -> anyhow::Result<()> {
    let (scene, table) = load_scene(&args.scene)?;
    let verdict = match &args.ship {
        Some(id) => Some(barrel_roll(
            &table,
            Models::builtin(),
            id,
            &args.choice.sides(),
            &args.choice.options(),
        )?),
        None => None,
    };
    let view = match args.crop_mm {
        Some(side) if side.is_finite() && side > 0.0 => diagram::View::AroundShip(side),
        Some(side) => anyhow::bail!("--crop-mm must be a positive number of mm, not {side}"),
        None => diagram::View::Table,
    };
    let svg = diagram::scene_svg(&scene, &table, verdict.as_ref(), view);
    crate::files::write_atomic(&args.out, svg.as_bytes()).context("scene-svg")?;
    eprintln!("wrote {}", args.out.display());
    Ok(())
}

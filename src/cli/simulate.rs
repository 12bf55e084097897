//! `hashmark simulate`: synthetic camera images of a random game table with their truth.

use anyhow::Context;
use std::path::PathBuf;

use crate::vision::Resolution;
use crate::vision::sim::{SimOptions, simulate_on};

#[derive(clap::Args, Debug)]
pub struct SimulateArgs {
    /// Seed: the same seed gives the same scene, camera and images.
    #[arg(long)]
    pub seed: u64,
    /// Output folder (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Image size.
    #[arg(long, value_enum, default_value = "1080p")]
    pub resolution: Res,
    /// Write a sequence of K frames (a barrel roll and a passing hand) instead of one.
    #[arg(long)]
    pub frames: Option<usize>,
    /// Number of ChArUco calibration views.
    #[arg(long, default_value_t = 12)]
    pub charuco_views: usize,
    /// Samples per pixel along each axis (n x n jittered samples): the sensor's pixel area.
    #[arg(long, default_value_t = 3)]
    pub supersample: u32,
    /// Also write `preview.jpg`: the first frame downscaled to this width (for docs).
    #[arg(long)]
    pub preview_width: Option<u32>,
    /// The play area, by name from models/play_areas.json (standard or epic); its marker
    /// cards lie 45 mm out from its corners, as `calibrate table --play-area` expects.
    #[arg(long, default_value = "standard")]
    pub play_area: String,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum Res {
    #[value(name = "1080p")]
    Hd,
    #[value(name = "4k")]
    Uhd,
}

pub fn run(args: &SimulateArgs) -> anyhow::Result<()> {
    if args.frames == Some(0) {
        anyhow::bail!("--frames must be at least 1");
    }
    if !(1..=8).contains(&args.supersample) {
        anyhow::bail!("--supersample must be between 1 and 8");
    }
    let opts = SimOptions {
        seed: args.seed,
        resolution: match args.resolution {
            Res::Hd => Resolution::Hd1080,
            Res::Uhd => Resolution::Uhd4k,
        },
        frames: args.frames,
        charuco_views: args.charuco_views,
        supersample: args.supersample,
    };
    let (area, _) = super::calibrate::play_area_and_layout(&args.play_area, None)?;
    let truth = simulate_on(&opts, area, &args.out)
        .with_context(|| format!("simulate into {}", args.out.display()))?;
    if let Some(w) = args.preview_width {
        let first = truth.frames.first().context("no frame written")?;
        crate::vision::sim::write_preview(
            &args.out.join(&first.file),
            &args.out.join("preview.jpg"),
            w,
        )?;
    }
    outln!(
        "wrote {} frame(s), background, {} ChArUco view(s) and truth.json to {}",
        truth.frames.len(),
        truth.charuco.views.len(),
        args.out.display()
    );
    Ok(())
}

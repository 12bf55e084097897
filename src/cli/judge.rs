//! `hashmark judge`: the judge report for one ship's barrel roll, from a scene file or from
//! one camera image through detection. The verdict is `hashmark roll`'s own (same options,
//! same `barrel_roll` call); the library writes the report directory.

use super::{RollChoice, load_scene};
use crate::judge::{JudgeReport, ReportSource, RollRequest, write_report};
use anyhow::Context;
use std::path::PathBuf;

/// Exactly one of a scene file or a camera image.
#[derive(clap::Args, Debug)]
#[group(required = true, multiple = false)]
pub struct Input {
    /// Scene file (hashmark-scene/1).
    #[arg(long)]
    scene: Option<PathBuf>,
    /// A camera image of the table: detection makes the scene (needs --calibration;
    /// feature `vision`).
    #[cfg(feature = "vision")]
    #[arg(long, requires = "calibration")]
    image: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct JudgeArgs {
    #[command(flatten)]
    input: Input,
    /// The empty table from the same camera, to help detection (with --image).
    #[cfg(feature = "vision")]
    #[arg(long, requires = "image")]
    background: Option<PathBuf>,
    /// Directory with camera.json and table.json from `hashmark calibrate` (with --image).
    #[cfg(feature = "vision")]
    #[arg(long, requires = "image")]
    calibration: Option<PathBuf>,
    /// With --image: judge even when the mat markers say the camera or the mat has moved
    /// since `calibrate table`, or when no mat marker is in view; the report records it.
    #[cfg(feature = "vision")]
    #[arg(long, requires = "image")]
    skip_table_check: bool,
    /// Id of the ship that rolls.
    #[arg(long)]
    ship: String,
    #[command(flatten)]
    choice: RollChoice,
    /// Report directory (created if missing): report.json, table.svg, table.png.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: &JudgeArgs) -> anyhow::Result<()> {
    let request = RollRequest::new(&args.ship, &args.choice.sides(), &args.choice.options());
    let report = match &args.input.scene {
        Some(path) => {
            let (scene, table) = load_scene(path)?;
            let source = ReportSource::Scene {
                path: path.display().to_string(),
            };
            JudgeReport::new(&scene, &table, &request, source, None)?
        }
        None => from_image(args, &request)?,
    };
    let written = write_report(&args.out, &report).context("judge report")?;
    out!("{}", super::roll::text_report(&report.verdict));
    if let Some(note) = &report.detection {
        outln!("{}", note.text);
    }
    for note in &report.unidentified {
        outln!("{}", note.text);
    }
    for note in &report.doubted_blockers {
        outln!("{}", note.text);
    }
    if let Some(check) = report
        .calibration
        .as_ref()
        .and_then(|c| c.frame_check.as_ref())
    {
        outln!("{check}");
    }
    for p in written {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

#[cfg(feature = "vision")]
fn from_image(args: &JudgeArgs, request: &RollRequest) -> anyhow::Result<JudgeReport> {
    use crate::judge::CalibrationSummary;
    use crate::vision::detect::{Calibrated, detect};
    let (Some(image), Some(cal_dir)) = (&args.input.image, &args.calibration) else {
        anyhow::bail!("give --scene FILE, or --image FILE with --calibration DIR");
    };
    let models = crate::Models::builtin();
    let calibrated = Calibrated::load(cal_dir).context("--calibration")?;
    let mut summary = CalibrationSummary::load(cal_dir).context("--calibration")?;
    let frame = super::calibrate::read_image(image)?;
    // A camera moved since `calibrate table` puts every position off while every sigma
    // stays small: refused, not judged.
    let check = calibrated
        .check_table(&frame)
        .with_context(|| format!("{}", image.display()))?;
    if check.refuses() && !args.skip_table_check {
        anyhow::bail!(
            "{}: {} (or --skip-table-check)",
            image.display(),
            check.describe()
        );
    }
    summary.frame_check = Some(check.describe());
    let background = args
        .background
        .as_ref()
        .map(|p| super::calibrate::read_image(p))
        .transpose()?;
    let scene = detect(&frame, background.as_ref(), &calibrated, models)
        .with_context(|| format!("detection in {}", image.display()))?;
    let table = crate::Table::from_scene(&scene, models).context("detected scene")?;
    let source = ReportSource::Image {
        image: image.display().to_string(),
        background: args.background.as_ref().map(|p| p.display().to_string()),
        calibration: cal_dir.display().to_string(),
    };
    Ok(JudgeReport::new(
        &scene,
        &table,
        request,
        source,
        Some(summary),
    )?)
}

#[cfg(not(feature = "vision"))]
fn from_image(_: &JudgeArgs, _: &RollRequest) -> anyhow::Result<JudgeReport> {
    anyhow::bail!("give --scene FILE (judging from an image needs feature `vision`)")
}

//! The `hashmark` command line: parse, call the library, print or write. Every failure is
//! one line on stderr and exit code 2.

/// `print!` for the commands: a failed write to stdout is an error the command returns
/// (see [`stdout_error`]), not the panic `print!` makes of it.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*).map_err(crate::cli::stdout_error)?
    }};
}

/// `println!` for the commands; see [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*).map_err(crate::cli::stdout_error)?
    }};
}

#[cfg(feature = "vision")]
mod bench;
#[cfg(feature = "vision")]
mod bench_close;
#[cfg(feature = "vision")]
mod calibrate;
#[cfg(feature = "vision")]
mod detect;
#[cfg(feature = "judge")]
mod judge;
#[cfg(feature = "vision")]
mod markers;
#[cfg(feature = "overlay")]
mod overlay;
mod roll;
mod scene_svg;
#[cfg(feature = "vision")]
mod simulate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "hashmark",
    version,
    about = "Barrel-roll judge for X-Wing Miniatures tables"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Where can a ship barrel roll? Judges all three positions on each side.
    Roll(roll::RollArgs),
    /// The judge report for a close call: the verdict with every clearance and its sigma,
    /// the calibration and the table around the ship as SVG and PNG (feature `judge`).
    #[cfg(feature = "judge")]
    Judge(judge::JudgeArgs),
    /// A true-scale top-down SVG of a scene, with a ship's barrel roll drawn in.
    SceneSvg(scene_svg::SvgArgs),
    /// Calibrate the camera (intrinsics) or the table pose (feature `vision`).
    #[cfg(feature = "vision")]
    #[command(subcommand)]
    Calibrate(calibrate::CalibrateCommand),
    /// Find the ships and obstacles in a calibrated camera image, video or live camera:
    /// scenes in table mm (feature `vision`).
    #[cfg(feature = "vision")]
    Detect(detect::DetectArgs),
    /// Accuracy and speed measurements (feature `vision`).
    #[cfg(feature = "vision")]
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Printable mat marker cards and the ChArUco board (SVG, PDF, PNG) at true scale.
    #[cfg(feature = "vision")]
    Markers(markers::MarkersArgs),
    /// Synthetic camera images of a random table with their exact truth (feature `vision`).
    #[cfg(feature = "vision")]
    Simulate(simulate::SimulateArgs),
    /// The overlay window on the built-in demo scene (feature `overlay`).
    #[cfg(feature = "overlay")]
    Demo(overlay::DemoArgs),
    /// The overlay window: the table top-down and the selected ship's barrel roll (feature
    /// `overlay`).
    #[cfg(feature = "overlay")]
    Overlay(overlay::OverlayArgs),
}

/// Runs the command line and maps every error to one line and exit code 2.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    // OpenCV logs its own warnings to stderr (a missing camera, a GStreamer pipeline); the
    // commands say what went wrong in one line of their own.
    #[cfg(feature = "vision")]
    let _ = opencv::core::set_log_level(opencv::core::LogLevel::LOG_LEVEL_SILENT);
    let result = match cli.command {
        Command::Roll(args) => roll::run(&args),
        Command::SceneSvg(args) => scene_svg::run(&args),
        #[cfg(feature = "judge")]
        Command::Judge(args) => judge::run(&args),
        #[cfg(feature = "vision")]
        Command::Calibrate(cmd) => calibrate::run(&cmd),
        #[cfg(feature = "vision")]
        Command::Detect(args) => detect::run(&args),
        #[cfg(feature = "vision")]
        Command::Bench(cmd) => bench::run(&cmd),
        #[cfg(feature = "vision")]
        Command::Markers(args) => markers::run(&args),
        #[cfg(feature = "vision")]
        Command::Simulate(args) => simulate::run(&args),
        #[cfg(feature = "overlay")]
        Command::Demo(args) => overlay::run_demo(&args),
        #[cfg(feature = "overlay")]
        Command::Overlay(args) => overlay::run_overlay(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`| head`, a consumer that quit): it chose to stop
        // reading, and there is no one left to tell.
        Err(e) if e.chain().any(|c| c.is::<StdoutClosed>()) => ExitCode::SUCCESS,
        Err(e) => {
            let line = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {line}");
            ExitCode::from(2)
        }
    }
}

/// Stdout's reader is gone: a command piped into `head` stops there, quietly.
#[derive(Debug, thiserror::Error)]
#[error("stdout was closed")]
pub struct StdoutClosed;

/// What a failed write to stdout means: [`StdoutClosed`] for a broken pipe (the reader
/// closed its end), else an error worth its line (a full disk behind a redirect).
pub fn stdout_error(e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        StdoutClosed.into()
    } else {
        anyhow::Error::new(e).context("cannot write to stdout")
    }
}

/// Options shared by the commands that roll a ship.
#[derive(clap::Args, Debug, Clone)]
pub struct RollChoice {
    /// Which side(s) to roll to.
    #[arg(long, value_enum, default_value = "both")]
    pub direction: Direction,
    /// The template the roll uses.
    #[arg(long, value_enum, default_value = "straight1")]
    pub template: crate::rules::RollTemplate,
    /// Obstacles do not count (Q7 Astromech, Collision Detector, Backwards Tailslide).
    #[arg(long, conflicts_with = "tractor")]
    pub ignore_obstacles: bool,
    /// The opponent rolls this ship with a tractor beam (obstacles always count).
    #[arg(long)]
    pub tractor: bool,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Left,
    Right,
    Both,
}

impl RollChoice {
    pub fn sides(&self) -> Vec<crate::rules::Side> {
        use crate::rules::Side;
        match self.direction {
            Direction::Left => vec![Side::Left],
            Direction::Right => vec![Side::Right],
            Direction::Both => vec![Side::Left, Side::Right],
        }
    }

    pub fn options(&self) -> crate::rules::RollOptions {
        crate::rules::RollOptions {
            template: self.template,
            ignore_obstacles: self.ignore_obstacles,
            tractor: self.tractor,
        }
    }
}

/// Loads and checks a scene file against the built-in models.
pub fn load_scene(path: &std::path::Path) -> anyhow::Result<(crate::Scene, crate::Table)> {
    use anyhow::Context;
    let models = crate::Models::builtin();
    let text = crate::files::read_text(path)?;
    let scene = crate::Scene::from_json(&text, models)
        .with_context(|| format!("scene {}", path.display()))?;
    let table = crate::Table::from_scene(&scene, models)
        .with_context(|| format!("scene {}", path.display()))?;
    Ok((scene, table))
}

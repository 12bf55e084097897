//! `hashmark demo` and `hashmark overlay`: open the overlay window on a source.

use super::Direction;
use crate::calibration::ProjectorFile;
use crate::calibration::files::CalibrationFile;
use crate::overlay::projector::Projection;
use crate::overlay::projector_output::ProjectorOutput;
use crate::overlay::{OverlayApp, Sides, Source, WindowOptions, run_window};
use crate::rules::RollTemplate;
use anyhow::Context;
use std::path::PathBuf;

/// Start-up choices and the scripted mode, shared by `demo` and `overlay`.
#[derive(clap::Args, Debug, Clone)]
pub struct ViewArgs {
    /// Start with this ship selected (default: the first in the scene).
    #[arg(long)]
    select: Option<String>,
    /// Which side(s) to show at start (keys L, R, B later).
    #[arg(long, value_enum, default_value = "both")]
    direction: Direction,
    /// The template at start (keys 1-4 later).
    #[arg(long, value_enum, default_value = "straight1")]
    template: RollTemplate,
    /// Start with obstacles ignored (key O later).
    #[arg(long)]
    ignore_obstacles: bool,
    /// Save the window's own screenshot here (PNG, plus a `.json` sidecar) and exit 0.
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Draw this many frames, then exit (with --screenshot: take it after these frames;
    /// default 5 then).
    #[arg(long)]
    exit_after_frames: Option<u32>,
    /// Window width, points.
    #[arg(long, default_value_t = 1280.0)]
    width: f32,
    /// Window height, points.
    #[arg(long, default_value_t = 800.0)]
    height: f32,
}

#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    #[command(flatten)]
    view: ViewArgs,
}

#[derive(clap::Args, Debug)]
pub struct OverlayArgs {
    /// Where the table comes from: `demo`, `scene:FILE`, or detected from a calibrated
    /// camera: `image:FILE` (detected once), `video:FILE` (played at its frame rate, stops
    /// at the end), `camera:N` (OpenCV camera index; reconnects when lost).
    #[arg(long, default_value = "demo")]
    source: String,
    /// Live sources: the directory holding camera.json and table.json (from `hashmark
    /// calibrate`).
    #[arg(long, default_value = "calibration")]
    calibration: PathBuf,
    /// Live sources: a frame of the empty table from the same camera.
    #[arg(long)]
    background: Option<PathBuf>,
    /// Live sources: a full search every this many frames, cheap re-fits between.
    #[arg(long, default_value_t = 5)]
    full_every: u64,
    /// Live sources on a screen: run the full search on a thread of its own beside the
    /// re-fits, so that no frame waits for it. Not with --projector: the projector goes
    /// dark for every full search's frame, and beside they follow each other closely.
    #[arg(long, conflicts_with_all = ["full_every", "projector"])]
    search_beside: bool,
    /// Open the projector output full screen in a second window (on monitor MONITOR, an
    /// index in the system's monitor order; without it, where the system puts it). Key P
    /// shows the projector calibration pattern there instead.
    #[arg(long, value_name = "MONITOR", num_args = 0..=1)]
    projector: Option<Option<usize>>,
    /// The projector calibration (`hashmark calibrate projector`); read only with
    /// --projector or --view projector.
    #[arg(long, default_value = "calibration/projector.json")]
    projector_calibration: PathBuf,
    /// The projector's output size, used before it is calibrated (no projector.json yet):
    /// the window then starts on the calibration pattern (K -> Projector to solve).
    #[arg(long, default_value = "1920x1080")]
    projector_size: String,
    /// What the main window shows at start: the table (or live views), or the projector
    /// image (key V switches; what --screenshot captures).
    #[arg(long = "view", value_enum, default_value = "table")]
    start_view: StartView,
    #[command(flatten)]
    view: ViewArgs,
}

/// The main window's first view.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartView {
    Table,
    Projector,
}

/// The projector output, when asked for: its calibration is read here, before any window
/// opens, so a missing or bad file is one line and exit 2.
fn projector_output(a: &OverlayArgs) -> anyhow::Result<Option<ProjectorOutput>> {
    if a.projector.is_none() && a.start_view != StartView::Projector {
        return Ok(None);
    }
    // First-time set-up: with --projector and no file yet, the projector shows the
    // calibration pattern over a placeholder mapping until the panel's projector step
    // (K) solves and saves the real one. Any other problem with the file is refused.
    let first_time = a.projector.is_some() && !a.projector_calibration.exists();
    let projection = if first_time {
        let (w, h) = a
            .projector_size
            .split_once('x')
            .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)))
            .filter(|(w, h)| *w >= 16 && *h >= 16)
            .with_context(|| {
                format!(
                    "--projector-size must look like 1920x1080, not \"{}\"",
                    a.projector_size
                )
            })?;
        eprintln!(
            "{} does not exist yet: the projector shows the calibration pattern; press K, then Projector, to calibrate it",
            a.projector_calibration.display()
        );
        Projection::placeholder([w, h], crate::Models::builtin().play_areas.standard())
    } else {
        Projection::from(&ProjectorFile::load(&a.projector_calibration)?)
    };
    let mut p = ProjectorOutput::new(projection);
    p.show_pattern = first_time;
    p.viewport = a.projector.is_some();
    p.monitor = a.projector.flatten();
    p.in_main = a.start_view == StartView::Projector;
    Ok(Some(p))
}

pub fn run_demo(args: &DemoArgs) -> anyhow::Result<()> {
    let app = scene_app(&Source::Demo, &args.view)?;
    open(app, &Source::Demo, &args.view)
}

pub fn run_overlay(args: &OverlayArgs) -> anyhow::Result<()> {
    let source: Source = args.source.parse().context("--source")?;
    let projector = projector_output(args)?;
    let mut app = if source.is_live() {
        live_app(&source, args)?
    } else {
        scene_app(&source, &args.view)?
    };
    app.projector = projector;
    open(app, &source, &args.view)
}

fn sides(v: &ViewArgs) -> Sides {
    match v.direction {
        Direction::Left => Sides::Left,
        Direction::Right => Sides::Right,
        Direction::Both => Sides::Both,
    }
}

fn scene_app(source: &Source, v: &ViewArgs) -> anyhow::Result<OverlayApp> {
    Ok(OverlayApp::from_source(
        source,
        v.select.as_deref(),
        sides(v),
        v.template,
        v.ignore_obstacles,
    )?)
}

/// A live source: everything that can be checked before the window opens is (the
/// calibration, the background, that the file exists), so a wrong path is one line and
/// exit 2; what goes wrong later (a camera unplugged, a frame detection cannot use) shows
/// in the window.
#[cfg(feature = "vision")]
fn live_app(source: &Source, a: &OverlayArgs) -> anyhow::Result<OverlayApp> {
    use crate::overlay::calibrate::CalibratePanel;
    use crate::overlay::frame_slot::FrameSlot;
    use crate::overlay::source::{self, LiveConfig, LiveSource, WorkerOptions};
    use opencv::prelude::*;
    let live = match source {
        Source::Image(p) => LiveSource::Image(p.clone()),
        Source::Video(p) => LiveSource::Video(p.clone()),
        Source::Camera(n) => LiveSource::Camera(*n),
        Source::Demo | Source::Scene(_) => anyhow::bail!("{} is not a live source", source.label()),
    };
    if let LiveSource::Image(p) | LiveSource::Video(p) = &live {
        anyhow::ensure!(p.is_file(), "{}: no such file", p.display());
    }
    let calibration = source::load_calibration(&a.calibration)?;
    let background = match &a.background {
        Some(p) => {
            let bg = source::read_image(p)
                .and_then(|bg| calibration.check_frame(&bg).map(|()| bg))
                .map_err(|e| crate::overlay::OverlayError::Background {
                    path: p.clone(),
                    message: e.to_string(),
                })?;
            Some(bg)
        }
        None => None,
    };
    let frames = FrameSlot::new();
    // With a projector lighting the table, it goes dark while a full search grabs.
    let blank = a.projector.is_some();
    let (view, _worker) = source::start(LiveConfig {
        source: live.clone(),
        calibration,
        background: match &background {
            Some(bg) => Some(bg.try_clone()?),
            None => None,
        },
        full_every: a.full_every,
        search_beside: a.search_beside,
        options: WorkerOptions {
            blank_projector: blank,
            ..WorkerOptions::default()
        },
        frames: frames.clone(),
    })?;
    // The worker stops by itself when the window closes (the feed's receiver is dropped);
    // it is not joined, so a camera stuck in a read cannot hold up the exit.
    let v = &a.view;
    let mut app = OverlayApp::live(
        source.label(),
        view,
        v.select.as_deref(),
        sides(v),
        v.template,
        v.ignore_obstacles,
    );
    app.calibrate = Some(CalibratePanel::new(
        a.calibration.clone(),
        a.projector_calibration.clone(),
        frames.clone(),
    ));
    app.calibration_dir = Some(a.calibration.clone());
    // After the panel rewrote table.json: the same source, detected with the new files.
    let (dir, full_every, search_beside) = (a.calibration.clone(), a.full_every, a.search_beside);
    app.restart_live = Some(Box::new(move || {
        let background =
            match &background {
                Some(bg) => Some(bg.try_clone().map_err(|e| {
                    crate::overlay::OverlayError::Worker(format!("background: {e}"))
                })?),
                None => None,
            };
        let (view, _worker) = source::start(LiveConfig {
            source: live.clone(),
            calibration: source::load_calibration(&dir)?,
            background,
            full_every,
            search_beside,
            options: WorkerOptions {
                blank_projector: blank,
                ..WorkerOptions::default()
            },
            frames: frames.clone(),
        })?;
        Ok(view)
    }));
    Ok(app)
}

#[cfg(not(feature = "vision"))]
fn live_app(source: &Source, _a: &OverlayArgs) -> anyhow::Result<OverlayApp> {
    Err(crate::overlay::OverlayError::UnsupportedSource(source.label()).into())
}

fn open(app: OverlayApp, source: &Source, v: &ViewArgs) -> anyhow::Result<()> {
    for (name, x) in [("--width", v.width), ("--height", v.height)] {
        anyhow::ensure!(
            x.is_finite() && (100.0..=10_000.0).contains(&x),
            "{name} must be between 100 and 10000 points, not {x}"
        );
    }
    let exit_after_frames = match (&v.screenshot, v.exit_after_frames) {
        (Some(_), None) => Some(5),
        (_, n) => n,
    };
    let stats = run_window(
        app,
        WindowOptions {
            title: format!("hashmark overlay - {}", source.label()),
            size: [v.width, v.height],
            screenshot: v.screenshot.clone(),
            exit_after_frames,
        },
    )?;
    if exit_after_frames.is_some() {
        if !stats.is_empty() {
            eprintln!("{stats}");
        }
        if let Some(p) = &v.screenshot {
            eprintln!("wrote {}", p.display());
        }
    }
    Ok(())
}

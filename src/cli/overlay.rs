//! `hashmark demo` and `hashmark overlay`: open the overlay window on a source.

use super::Direction;
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
    /// Where the table comes from: `demo` or `scene:FILE` (camera, video and image sources
    /// are not there yet).
    #[arg(long, default_value = "demo")]
    source: String,
    #[command(flatten)]
    view: ViewArgs,
}

pub fn run_demo(args: &DemoArgs) -> anyhow::Result<()> {
    open(&Source::Demo, &args.view)
}

pub fn run_overlay(args: &OverlayArgs) -> anyhow::Result<()> {
    let source: Source = args.source.parse().context("--source")?;
    open(&source, &args.view)
}

fn open(source: &Source, v: &ViewArgs) -> anyhow::Result<()> {
    let sides = match v.direction {
        Direction::Left => Sides::Left,
        Direction::Right => Sides::Right,
        Direction::Both => Sides::Both,
    };
    for (name, x) in [("--width", v.width), ("--height", v.height)] {
        anyhow::ensure!(
            x.is_finite() && (100.0..=10_000.0).contains(&x),
            "{name} must be between 100 and 10000 points, not {x}"
        );
    }
    let app = OverlayApp::from_source(
        source,
        v.select.as_deref(),
        sides,
        v.template,
        v.ignore_obstacles,
    )?;
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

//! `hashmark detect`: a calibrated camera frame (or a stream of them) to scenes.

use super::calibrate::read_image;
use crate::Models;
use crate::vision::detect::stream::Stream;
use crate::vision::detect::{Calibrated, Detector};
use anyhow::{Context, bail};
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct DetectArgs {
    /// Directory holding camera.json and table.json (from `hashmark calibrate`).
    #[arg(long, default_value = "calibration")]
    calibration: PathBuf,
    /// One image: writes one scene (hashmark-scene/1).
    #[arg(long, group = "source")]
    image: Option<PathBuf>,
    /// A video file: one scene per frame, as JSON lines.
    #[arg(long, group = "source")]
    video: Option<PathBuf>,
    /// A live camera by index: one scene per frame, as JSON lines, until interrupted.
    #[arg(long, group = "source")]
    camera: Option<i32>,
    /// A frame of the empty table from the same camera (helps tell the mat's art from
    /// what stands on it).
    #[arg(long)]
    background: Option<PathBuf>,
    /// Write the scene (image) or the JSON lines (stream) here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Streams: a full search every this many frames, a re-fit of the known ships between.
    #[arg(long, default_value_t = 5)]
    full_every: u64,
    /// Streams: stop after this many frames.
    #[arg(long)]
    max_frames: Option<u64>,
}

pub fn run(a: &DetectArgs) -> anyhow::Result<()> {
    let models = Models::builtin();
    let cal = Calibrated::load(&a.calibration, models)?;
    let mut detector = Detector::new(cal, models)?;
    if let Some(bg) = &a.background {
        detector
            .set_background(&read_image(bg)?)
            .with_context(|| format!("background {}", bg.display()))?;
    }
    if let Some(image) = &a.image {
        let frame = read_image(image)?;
        let scene = detector
            .detect(&frame)
            .with_context(|| format!("{}", image.display()))?;
        let text = scene.to_json_pretty() + "\n";
        match &a.out {
            Some(out) => crate::files::write_atomic(out, text.as_bytes())?,
            None => print!("{text}"),
        }
        return Ok(());
    }
    let (mut cap, what) = if let Some(video) = &a.video {
        let cap = videoio::VideoCapture::from_file(&*video.to_string_lossy(), videoio::CAP_ANY)?;
        (cap, format!("video {}", video.display()))
    } else if let Some(n) = a.camera {
        (
            videoio::VideoCapture::new(n, videoio::CAP_ANY)?,
            format!("camera {n}"),
        )
    } else {
        bail!("give a source: --image F, --video F or --camera N");
    };
    if !cap.is_opened()? {
        bail!("cannot open {what}");
    }
    let mut sink: Box<dyn Write> = match &a.out {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        )),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut stream = Stream::new(detector, a.full_every);
    let mut frame = Mat::default();
    let mut n = 0u64;
    let start = std::time::Instant::now();
    while a.max_frames.is_none_or(|m| n < m) {
        if !cap.read(&mut frame)? || frame.empty() {
            if n == 0 {
                bail!("{what} gave no frame OpenCV can decode");
            }
            if a.camera.is_some() {
                bail!("{what} stopped giving frames after {n} (unplugged?)");
            }
            break;
        }
        let t = std::time::Instant::now();
        let out = stream
            .push(&frame)
            .with_context(|| format!("{what}, frame {n}"))?;
        let line = serde_json::json!({
            "frame": n,
            "time_ms": (start.elapsed().as_secs_f64() * 1000.0).round(),
            "detect_ms": (t.elapsed().as_secs_f64() * 10000.0).round() / 10.0,
            "full_search": out.full,
            "scene": out.scene,
        });
        writeln!(sink, "{line}")?;
        n += 1;
    }
    sink.flush()?;
    Ok(())
}

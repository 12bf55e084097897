//! `hashmark detect`: a calibrated camera frame (or a stream of them) to scenes.

use super::calibrate::read_image;
use crate::Models;
use crate::scene::Doubt;
use crate::vision::calibrate::check::TableCheck;
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
    /// One image: print the scene as JSON (hashmark-scene/1) instead of a table. Streams
    /// always write JSON lines.
    #[arg(long)]
    json: bool,
    /// One image: write the scene (hashmark-scene/1) to this file as well. Streams: write the
    /// JSON lines here instead of stdout, each as soon as its frame is done (a stream
    /// stopped with Ctrl-C leaves every frame's line whole).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Streams: a full search every this many frames, a re-fit of the known ships between.
    #[arg(long, default_value_t = 5)]
    full_every: u64,
    /// Streams: run the full search on a thread of its own beside the re-fits, so that no
    /// frame waits for it (a live camera: each frame is re-fitted at once, and what a search
    /// finds joins the frame after it ends); the frames a search joins depend on the
    /// machine's speed, so two runs over one video may differ.
    #[arg(long, conflicts_with = "full_every")]
    search_beside: bool,
    /// Streams: stop after this many frames.
    #[arg(long)]
    max_frames: Option<u64>,
    /// One image: detect even when the mat markers say the camera or the mat has moved
    /// since `calibrate table` (positions will be off by about as much as they moved), or
    /// when no mat marker is in view (nothing then says that this is the table).
    #[arg(long)]
    skip_table_check: bool,
}

/// What a table read without an empty-table frame shows less of: on the four rendered
/// sets 11 of the 18 missed ships were outlined without one (their grey miniatures with no
/// base under them), 14 with one.
const NO_BACKGROUND: &str = "no --background: a ship whose base is hidden under its \
    miniature is outlined to check only where the miniature stands out grey or white; with a \
    frame of the empty table more are";

pub fn run(a: &DetectArgs) -> anyhow::Result<()> {
    let models = Models::builtin();
    let cal = Calibrated::load(&a.calibration)?;
    let mut detector = Detector::new(cal, models)?;
    if let Some(bg) = &a.background {
        detector
            .set_background(&read_image(bg)?)
            .with_context(|| format!("background {}", bg.display()))?;
    }
    if let Some(image) = &a.image {
        let frame = read_image(image)?;
        let check = detector
            .check_table(&frame)
            .with_context(|| format!("{}", image.display()))?;
        if check.refuses() && !a.skip_table_check {
            bail!(
                "{}: {} (or --skip-table-check)",
                image.display(),
                check.describe()
            );
        }
        let scene = detector
            .detect(&frame)
            .with_context(|| format!("{}", image.display()))?;
        let json = scene.to_json_pretty() + "\n";
        if let Some(out) = &a.out {
            crate::files::write_atomic(out, json.as_bytes())?;
        }
        let colour = detector.colour_note(&frame)?;
        if a.json {
            out!("{json}");
            if !matches!(check, TableCheck::Holds { .. }) {
                eprintln!("warning: {}", check.describe());
            }
            if let Some(note) = &colour {
                eprintln!("note: {note}");
            }
        } else {
            out!("{}", text_report(&scene));
            if a.background.is_none() {
                outln!("{NO_BACKGROUND}");
            }
            if let Some(note) = &colour {
                outln!("{note}");
            }
            outln!("{}", check.describe());
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
    // Line by line: a live camera runs until it is interrupted, and a buffer would then lose
    // its last frames and cut a line in two (a BufWriter wrote 8 KB at a time, about 40
    // empty frames).
    let mut sink: Box<dyn Write> = match &a.out {
        Some(p) => Box::new(std::io::LineWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        )),
        None => Box::new(std::io::stdout().lock()),
    };
    let failed = |e: std::io::Error| match &a.out {
        None => super::stdout_error(e),
        Some(p) => anyhow::Error::new(e).context(format!("cannot write {}", p.display())),
    };
    let mut stream = if a.search_beside {
        Stream::beside(detector)?
    } else {
        Stream::new(detector, a.full_every)
    };
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
        let mut line = serde_json::json!({
            "frame": n,
            "time_ms": (start.elapsed().as_secs_f64() * 1000.0).round(),
            "detect_ms": (t.elapsed().as_secs_f64() * 10000.0).round() / 10.0,
            "full_search": out.full,
            "scene": out.scene,
        });
        // With each full search: whether the camera still sees the table as calibrated.
        if let Some(check) = out.table_check.as_ref().filter(|_| out.full) {
            line["table_check"] = serde_json::json!({
                "state": check.state(),
                "text": check.describe(),
            });
        }
        writeln!(sink, "{line}").map_err(failed)?;
        n += 1;
    }
    sink.flush().map_err(failed)?;
    Ok(())
}

/// The scene as a table a person reads: every ship with its pose, uncertainty and whether a
/// judge should check it by eye (see [`crate::judge::UNSURE_CONFIDENCE`]), every obstacle
/// with its model and pose.
pub fn text_report(scene: &crate::scene::Scene) -> String {
    use std::fmt::Write as _;
    let unsure = scene
        .ships
        .iter()
        .filter(|s| crate::judge::DetectionNote::is_unsure(s))
        .count();
    let mut out = String::new();
    let unnamed = scene
        .obstacles
        .iter()
        .filter(|o| crate::judge::OutlineNote::is_unidentified(o))
        .count();
    let _ = writeln!(
        out,
        "{} ships ({unsure} to check by eye), {} obstacles{}",
        scene.ships.len(),
        scene.obstacles.len(),
        if unnamed > 0 {
            format!(" ({unnamed} to check by eye)")
        } else {
            String::new()
        }
    );
    let opt =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    if !scene.ships.is_empty() {
        let _ = writeln!(
            out,
            "{:<5} {:<6} {:>7} {:>7} {:>8} {:>6} {:>6} {:>5}",
            "ship", "size", "x mm", "y mm", "heading", "+-mm", "+-deg", "conf"
        );
    }
    for s in &scene.ships {
        let q = &s.quality;
        let _ = writeln!(
            out,
            "{:<5} {:<6} {:>7.2} {:>7.2} {:>8.2} {:>6} {:>6} {:>5}{}",
            s.id,
            s.size.name(),
            s.x,
            s.y,
            s.heading_deg,
            opt(q.sigma_mm, 2),
            opt(q.sigma_deg, 2),
            opt(q.confidence, 2),
            if crate::judge::DetectionNote::is_unsure(s) {
                if q.doubts.is_empty() {
                    "  check by eye".to_string()
                } else {
                    format!("  check by eye: {}", Doubt::shorts(&q.doubts))
                }
            } else {
                String::new()
            }
        );
    }
    if !scene.obstacles.is_empty() {
        let _ = writeln!(
            out,
            "{:<8} {:<14} {:>7} {:>7} {:>8} {:>6}",
            "obstacle", "model", "x mm", "y mm", "rotation", "+-mm"
        );
    }
    for o in &scene.obstacles {
        match (&o.model, o.x, o.y, o.rotation_deg) {
            (Some(m), Some(x), Some(y), Some(r)) => {
                let _ = writeln!(
                    out,
                    "{:<8} {:<14} {:>7.2} {:>7.2} {:>8.2} {:>6}",
                    o.id,
                    m,
                    x,
                    y,
                    r,
                    opt(o.quality.sigma_mm, 2)
                );
            }
            _ => {
                let n = o.polygon.as_ref().map_or(0, Vec::len);
                let _ = writeln!(
                    out,
                    "{:<8} {:<14} measured outline, {n} points (no standard model fits){}",
                    o.id,
                    "-",
                    if crate::judge::OutlineNote::is_hidden_base(o) {
                        ": a miniature with no base seen under it, most likely a ship: check by eye"
                    } else if crate::judge::OutlineNote::is_unidentified(o) {
                        ": not on the empty table, often a ship whose base is hidden: check by eye"
                    } else {
                        ""
                    }
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::text_report;
    use crate::scene::Scene;

    /// A scene as detection writes it, in words: a sure ship, one to check by eye, a
    /// matched obstacle and a measured outline.
    #[test]
    fn the_text_report_says_which_ships_to_check() {
        let scene = Scene::from_json(
            r#"{"format": "hashmark-scene/1",
              "ships": [
                {"id": "s1", "size": "small", "x": 100.0, "y": 200.0, "heading_deg": 90.0,
                 "sigma_mm": 0.31, "sigma_deg": 0.5, "confidence": 0.97},
                {"id": "s2", "size": "large", "x": 500.5, "y": 300.25, "heading_deg": 271.5,
                 "sigma_mm": 6.5, "sigma_deg": 8.0, "confidence": 0.3},
                {"id": "s3", "size": "small", "x": 700.0, "y": 300.0, "heading_deg": 0.0,
                 "sigma_mm": 6.5, "sigma_deg": 8.0, "confidence": 0.2,
                 "doubts": ["no_hashmark", "facing_unsure"]}],
              "obstacles": [
                {"id": "o1", "model": "coreasteroid1", "x": 400.0, "y": 450.0,
                 "rotation_deg": 12.5, "sigma_mm": 0.2},
                {"id": "o2", "polygon": [[10, 10], [60, 10], [60, 50]]},
                {"id": "o3", "polygon": [[200, 10], [250, 10], [250, 60], [200, 60]],
                 "sigma_mm": 10.0, "confidence": 0.1, "doubts": ["hidden_base"]}]}"#,
            crate::Models::builtin(),
        )
        .expect("scene");
        let text = text_report(&scene);
        eprintln!("{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "3 ships (2 to check by eye), 3 obstacles (1 to check by eye)"
        );
        let s1 = lines.iter().find(|l| l.starts_with("s1 ")).expect("s1");
        let s2 = lines.iter().find(|l| l.starts_with("s2 ")).expect("s2");
        assert!(s1.contains("100.00") && s1.contains("0.97") && !s1.contains("check"));
        assert!(s2.contains("large") && s2.contains("271.50") && s2.ends_with("check by eye"));
        // Why, where detection said.
        let s3 = lines.iter().find(|l| l.starts_with("s3 ")).expect("s3");
        assert!(
            s3.ends_with("check by eye: no hashmark, facing hidden"),
            "{s3}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("o1 ") && l.contains("coreasteroid1"))
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("o2 ") && l.contains("measured outline, 3 points"))
        );
        // A miniature with no base found under it is said to be one.
        let o3 = lines.iter().find(|l| l.starts_with("o3 ")).expect("o3");
        assert!(
            o3.contains("a miniature with no base seen under it") && o3.ends_with("check by eye"),
            "{o3}"
        );
    }
}

//! `hashmark bench detect`: accuracy against the truth and speed, over rendered scenes that
//! went through `hashmark calibrate` (see scripts/detect-report.sh), as a table.

use super::calibrate::read_image;
use crate::Models;
use crate::judge::agreement::{Agreement, Call, agreement};
use crate::models::BaseSize;
use crate::rules::{RollOptions, RollTemplate, Side, Table, barrel_roll};
use crate::vision::detect::bases::refit_bases;
use crate::vision::detect::score::{SceneScore, score};
use crate::vision::detect::stream::Stream;
use crate::vision::detect::{Calibrated, Detector};
use crate::vision::sim::Truth;
use crate::vision::sim::camera_change::CameraChange;
use crate::vision::sim::visibility::{RimView, rim_view};
use crate::vision::sim::world::World;
use anyhow::Context;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Subcommand, Debug)]
pub enum BenchCommand {
    /// Detection accuracy and speed on rendered scenes: each DIR holds sim/ (frame.jpg,
    /// background.jpg, truth.json from `hashmark simulate`) and cal/ (camera.json and
    /// table.json from `hashmark calibrate`, made from the images only).
    Detect(BenchDetectArgs),
    /// The judge's calls on tables made of close calls: every rolling ship has a neighbour
    /// a few millimetres from where its roll lands (rendered, detected through the camera
    /// they were rendered with, and judged against the truth).
    CloseCalls(super::bench_close::BenchCloseArgs),
}

#[derive(clap::Args, Debug)]
pub struct BenchDetectArgs {
    dirs: Vec<PathBuf>,
    /// Use each scene's background.jpg (the empty table).
    #[arg(long)]
    background: bool,
    /// Timed repetitions per scene (the median is reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Also print every true ship: what it was found as, how far off, and what detection
    /// said of it (to find the worst cases behind a summary).
    #[arg(long)]
    ships: bool,
    /// Full searches per scene to run the stream whose search runs beside the re-fits for
    /// (as a live camera runs it; frames go in as fast as it takes them); 0 skips it.
    #[arg(long, default_value_t = 3)]
    beside_searches: usize,
    /// Read each frame (and background) as another camera, or the same one set
    /// differently, would have taken it: white balance off, under- or overexposed, out of
    /// focus, noisier, or compressed harder.
    #[arg(long, value_enum)]
    camera: Option<CameraChange>,
    /// The template every found ship's roll is judged with, on the detected table against
    /// the true one (the further the template carries a ship, the more its heading's error
    /// moves the landing).
    #[arg(long, value_enum, default_value = "straight1")]
    template: RollTemplate,
}

pub fn run(cmd: &BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Detect(a) => run_detect(a),
        BenchCommand::CloseCalls(a) => super::bench_close::run(a),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn run_detect(a: &BenchDetectArgs) -> anyhow::Result<()> {
    let models = Models::builtin();
    let mut all = SceneScore::default();
    let (mut full_ms, mut refit_ms, mut roll_ms) = (Vec::new(), Vec::new(), Vec::new());
    let (mut stream_ms, mut stream_same) = (Vec::new(), 0usize);
    let mut stream_differs: Vec<String> = Vec::new();
    let mut reused = [0usize; 3];
    let mut check_ms = Vec::new();
    let mut checks = Vec::new();
    let mut beside: Vec<Beside> = Vec::new();
    // Bases found, and those whose heading the token's arc lines turned (see
    // `vision::detect::token_lines`), per size class.
    let mut lined = [[0usize; 2]; 3];
    // The rim in view of each missed ship (see `rims_in_view`).
    let mut missed_rims: Vec<RimView> = Vec::new();
    let mut verdicts = Agreement::default();
    outln!(
        "{:<14} {:>9} {:>5} {:>5} {:>6} {:>7} {:>7} {:>7} {:>6} {:>6} {:>7} {:>8} {:>8} {:>7}",
        "scene",
        "size",
        "ships",
        "found",
        "false",
        "c.rms",
        "c.max",
        "h.rms",
        "size%",
        "face%",
        "obst",
        "haus.max",
        "full ms",
        "refit"
    );
    for dir in &a.dirs {
        let truth: Truth = serde_json::from_str(
            &std::fs::read_to_string(dir.join("sim/truth.json"))
                .with_context(|| format!("{}: no sim/truth.json", dir.display()))?,
        )
        .with_context(|| format!("{}: sim/truth.json", dir.display()))?;
        let changed = |m: opencv::core::Mat| -> anyhow::Result<opencv::core::Mat> {
            Ok(match a.camera {
                Some(c) => c.apply(&m, truth.seed)?,
                None => m,
            })
        };
        let frame = changed(read_image(&dir.join("sim/frame.jpg"))?)?;
        let cal = Calibrated::load(&dir.join("cal"))?;
        let mut det = Detector::new(cal, models)?;
        if a.background {
            det.set_background(&changed(read_image(&dir.join("sim/background.jpg"))?)?)?;
        }
        let mut times = Vec::new();
        let mut found = None;
        for _ in 0..a.runs.max(1) {
            let t = Instant::now();
            let d = det.detect_full(&frame)?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            found = Some(d);
        }
        let found = found.context("no run")?;
        for b in &found.bases {
            if let Some(i) = BaseSize::ALL.iter().position(|s| *s == b.size) {
                lined[i][0] += 1;
                lined[i][1] += usize::from(b.lines.is_some());
            }
        }
        let full = median(times);
        // A stream's full search knows what the search before it found (here: on this
        // frame): it fits the obstacles again from there and passes over the regions and
        // blobs that held nothing.
        let mut times = Vec::new();
        let mut again = None;
        for _ in 0..a.runs.max(1) {
            let t = Instant::now();
            let d = det.detect_full_known(&frame, &found.memory)?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            again = Some(d);
        }
        stream_ms.push(median(times));
        let again = again.context("no run")?;
        let r = again.memory.reused;
        reused = [
            reused[0] + r.empty_regions,
            reused[1] + r.empty_blobs,
            reused[2] + r.bases,
        ];
        if same_obstacles(&found.scene.obstacles, &again.scene.obstacles)
            && found.scene.ships == again.scene.ships
        {
            stream_same += 1;
        } else {
            stream_differs.push(
                dir.file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().to_string()),
            );
        }
        // The stream's cheap frame: re-fit the ships found (through the search's balance,
        // see `vision::detect::white`).
        let mut times = Vec::new();
        for _ in 0..a.runs.max(1) {
            let t = Instant::now();
            let grey = found.balance.grey(&frame)?;
            let _ = refit_bases(&grey, &det.cal.camera, models, &found.bases);
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let refit = median(times);
        // The frame check a stream runs with every full search (the mat markers against
        // table.json).
        let mut times = Vec::new();
        let mut check = None;
        for _ in 0..a.runs.max(1) {
            let t = Instant::now();
            check = Some(det.check_table(&frame)?);
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        check_ms.push(median(times));
        checks.push(check.context("no run")?);
        // Roll every ship both ways on the detected scene.
        let t = Instant::now();
        roll_every_ship(&found.scene, models);
        roll_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        // Last: the stream takes the detector (calibration and background as set up above).
        if a.beside_searches > 0 {
            beside.push(stream_beside(det, &frame, a.beside_searches, models)?);
        }
        full_ms.push(full);
        refit_ms.push(refit);
        let mut s = score(&truth.scene, &found.scene, models);
        let rims = rims_in_view(&truth, models)?;
        for m in &mut s.ships {
            m.rim_view = rims.get(&m.id).copied();
        }
        missed_rims.extend(s.missed_ships.iter().filter_map(|id| rims.get(id)));
        // Every ship's roll both ways, judged on the detected scene against the truth.
        let pairs = s.pairs();
        let calls = agreement(
            &truth.scene,
            &found.scene,
            &pairs,
            models,
            &RollOptions {
                template: a.template,
                ..RollOptions::default()
            },
        )?;
        print_row(
            &dir.file_name()
                .map_or(String::new(), |n| n.to_string_lossy().to_string()),
            &format!(
                "{}x{}",
                truth.camera.image_size[0], truth.camera.image_size[1]
            ),
            truth.scene.ships.len(),
            &s,
            full,
            refit,
        )?;
        if a.ships {
            print_ships(&s, &rims)?;
            for c in calls.calls.iter().filter(|c| c.call == Call::SureWrong) {
                outln!("  wrong and sure: {}", c.describe());
            }
            // What the ships' flags catch beyond their sigmas.
            for c in calls
                .calls
                .iter()
                .filter(|c| c.call == Call::LeftWrong && !c.position_unsettled)
            {
                outln!("  wrong, left for the ship's flag: {}", c.describe());
            }
        }
        verdicts.extend(calls);
        all.ships.extend(s.ships);
        all.missed_ships.extend(s.missed_ships);
        all.false_ships += s.false_ships;
        all.false_ship_confidences.extend(s.false_ship_confidences);
        all.obstacles.extend(s.obstacles);
        all.missed_obstacles.extend(s.missed_obstacles);
        all.false_obstacles += s.false_obstacles;
        all.missed_ships_outlined.extend(s.missed_ships_outlined);
        all.outlines_on_missed_ships += s.outlines_on_missed_ships;
    }
    let n = all.ships.len() + all.missed_ships.len();
    print_row(
        "all",
        "",
        n,
        &all,
        median(full_ms.clone()),
        median(refit_ms.clone()),
    )?;
    let within = |f: &dyn Fn(&crate::vision::detect::score::ShipMatch) -> bool| {
        all.ships.iter().filter(|m| f(m)).count() as f64 / all.ships.len().max(1) as f64 * 100.0
    };
    outln!(
        "within 1 sigma: centre {:.0} %, heading {:.0} % (about 68 % means the sigmas are honest)",
        within(&|m| m.sigma_mm.is_some_and(|s| m.centre_error_mm <= s)),
        within(&|m| m.sigma_deg.is_some_and(|s| m.heading_error_deg.abs() <= s)),
    );
    print_sigma_rms(&all)?;
    outln!("{}", misleading(&all));
    outln!(
        "missed ships: {}, of them {} under an outline to check by eye (a measured one, or a miniature's with no base seen under it); extra obstacles: {}, of them {} such outlines",
        all.missed_ships.len(),
        all.missed_ships_outlined.len(),
        all.false_obstacles,
        all.outlines_on_missed_ships,
    );
    outln!("{} ({})", verdicts.summary(), a.template.name());
    print_doubts(&all)?;
    print_rims(&all, &missed_rims)?;
    let per_size: Vec<String> = BaseSize::ALL
        .iter()
        .zip(&lined)
        .map(|(size, [n, l])| format!("{} {l} of {n}", size.name()))
        .collect();
    outln!(
        "arc lines turned the heading of: {} bases found",
        per_size.join(", ")
    );
    print_checks(&checks)?;
    // What a judge can lean on: bases found with a small sigma, apart from those the
    // detector itself flags as uncertain; and those judge mode does not ask to check.
    let unsure = crate::judge::UNSURE_CONFIDENCE;
    let groups: [(String, Selector); 4] = [
        ("any sigma (all found)".into(), Box::new(|_| true)),
        ("sigma < 3 mm".into(), Box::new(under_3_mm)),
        (
            "sigma >= 3 mm (flagged)".into(),
            Box::new(|m| m.sigma_mm.is_some_and(|s| s >= 3.0)),
        ),
        (
            format!("confidence >= {unsure} (not flagged for the judge)"),
            Box::new(not_flagged),
        ),
    ];
    for (label, keep) in &groups {
        let sel: Vec<_> = all.ships.iter().filter(|m| keep(m)).collect();
        let (c, cmax) = rms(sel.iter().map(|m| m.centre_error_mm));
        let (h, hmax) = rms(sel.iter().map(|m| m.heading_error_deg));
        let facing = sel.iter().filter(|m| m.facing_right).count();
        let centre_median = median(sel.iter().map(|m| m.centre_error_mm).collect());
        let heading_median = median(sel.iter().map(|m| m.heading_error_deg.abs()).collect());
        outln!(
            "bases with {label}: {} of {}; centre median {centre_median:.2} mm, RMS {c:.2} mm (max {cmax:.2}); heading median {heading_median:.2} deg, RMS {h:.2} deg (max {hmax:.2}); facing right {facing}",
            sel.len(),
            all.ships.len()
        );
    }
    // The targets hold per size or not at all: a 40 mm base's sides span half the pixels
    // of an 80 mm one's, and the summary above mixes them in whatever share the tables had.
    let by_size: Vec<String> = BaseSize::ALL
        .iter()
        .map(|&size| {
            let sel: Vec<_> = all
                .ships
                .iter()
                .filter(|m| m.size == size && not_flagged(m))
                .collect();
            if sel.is_empty() {
                return format!("{} none", size.name());
            }
            let (c, _) = rms(sel.iter().map(|m| m.centre_error_mm));
            let (h, _) = rms(sel.iter().map(|m| m.heading_error_deg));
            format!(
                "{} {}: centre RMS {c:.2} mm, heading RMS {h:.2} deg",
                size.name(),
                sel.len()
            )
        })
        .collect();
    outln!("not flagged, by size: {}", by_size.join("; "));
    let (full, refit, roll) = (median(full_ms), median(refit_ms), median(roll_ms));
    let (check, search) = (median(check_ms), median(stream_ms));
    outln!(
        "speed (median): full detection {full:.0} ms ({:.1} fps); re-fit of known ships {refit:.1} ms; roll of every ship both ways {roll:.2} ms; frame check {check:.1} ms",
        1000.0 / full
    );
    outln!(
        "a stream's full search (knowing what the search before found): {search:.0} ms; its ships and obstacles those of the single frame on {stream_same} of {} scenes; taken from the search before: {} empty regions, {} empty blobs, {} bases",
        a.dirs.len(),
        reused[0],
        reused[1],
        reused[2]
    );
    if !stream_differs.is_empty() {
        outln!(
            "a stream's search differs from the single frame's on: {}",
            stream_differs.join(" ")
        );
    }
    for every in [1u64, 5, 10] {
        // A stream's full search frame checks the mat markers too.
        let per = (search + check + (every - 1) as f64 * refit) / every as f64 + roll;
        outln!(
            "stream, full search every {every:>2} frames: {per:.1} ms per frame with rolls = {:.1} fps",
            1000.0 / per
        );
    }
    if !beside.is_empty() {
        let fps: Vec<f64> = beside.iter().map(|b| b.frames as f64 / b.seconds).collect();
        let lo = fps.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = fps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let every: Vec<f64> = beside
            .iter()
            .map(|b| b.seconds * 1000.0 / a.beside_searches as f64)
            .collect();
        outln!(
            "stream, full search beside the re-fits (frames as fast as it takes them, over {} searches a scene): {:.1} fps with rolls (median; scenes {lo:.1}-{hi:.1}); a full search joined every {:.0} ms (median)",
            a.beside_searches,
            median(fps),
            median(every)
        );
    }
    Ok(())
}

/// The same obstacles: the same models, each within 0.2 mm and 0.3 deg of its place (a
/// fit started from a known pose settles within a small part of its sigma, 0.25-0.3 mm
/// and 0.2-0.3 deg, of where it settles from the chamfer's start).
fn same_obstacles(a: &[crate::scene::ObstacleSpec], b: &[crate::scene::ObstacleSpec]) -> bool {
    let close = |p: &crate::scene::ObstacleSpec, q: &crate::scene::ObstacleSpec| {
        let d = |u: Option<f64>, v: Option<f64>| match (u, v) {
            (Some(u), Some(v)) => (u - v).abs(),
            (None, None) => 0.0,
            _ => f64::INFINITY,
        };
        let turn = match (p.rotation_deg, q.rotation_deg) {
            (Some(u), Some(v)) => ((u - v + 180.0).rem_euclid(360.0) - 180.0).abs(),
            (None, None) => 0.0,
            _ => f64::INFINITY,
        };
        p.model == q.model
            && p.polygon == q.polygon
            && d(p.x, q.x).hypot(d(p.y, q.y)) <= 0.2
            && turn <= 0.3
    };
    a.len() == b.len() && a.iter().all(|p| b.iter().any(|q| close(p, q)))
}

/// A stream run as a live camera runs it, over one scene's frame again and again.
struct Beside {
    frames: usize,
    seconds: f64,
}

/// Pushes copies of `frame` through a stream whose search runs beside the re-fits until
/// `searches` full searches have joined, rolling every ship of each frame's scene; timed
/// from the first search sent off (the first frame, searched where it is as a stream
/// starts, is not timed).
fn stream_beside(
    det: Detector<'static>,
    frame: &opencv::core::Mat,
    searches: usize,
    models: &Models,
) -> anyhow::Result<Beside> {
    let mut stream = Stream::beside(det)?;
    stream.push(frame)?;
    let t = Instant::now();
    let (mut joined, mut frames) = (0, 0);
    while joined < searches {
        let f = stream.push(frame)?;
        joined += usize::from(f.full);
        frames += 1;
        roll_every_ship(&f.scene, models);
    }
    Ok(Beside {
        frames,
        seconds: t.elapsed().as_secs_f64(),
    })
}

/// Every ship of the scene rolled both ways (what the overlay shows).
fn roll_every_ship(scene: &crate::scene::Scene, models: &Models) {
    if let Ok(table) = Table::from_scene(scene, models) {
        for s in &scene.ships {
            let _ = barrel_roll(
                &table,
                models,
                &s.id,
                &[Side::Left, Side::Right],
                &RollOptions::default(),
            );
        }
    }
}

/// Which matched ships a summary line covers.
type Selector = Box<dyn Fn(&crate::vision::detect::score::ShipMatch) -> bool>;

/// Whether judge mode takes the base as found, without asking to check it by eye.
fn not_flagged(m: &crate::vision::detect::score::ShipMatch) -> bool {
    m.confidence
        .is_some_and(|c| c >= crate::judge::UNSURE_CONFIDENCE)
}

/// Whether detection reports the base within 3 mm (1 sigma).
fn under_3_mm(m: &crate::vision::detect::score::ShipMatch) -> bool {
    m.sigma_mm.is_some_and(|s| s < 3.0)
}

fn rms(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = v.collect();
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let r = (v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64).sqrt();
    (r, v.iter().fold(0.0f64, |a, b| a.max(b.abs())))
}

/// A sigma is the expected RMS of its error (spec: `sigma_mm`), so over many bases the
/// errors' RMS should match the sigmas' RMS. This holds where the share within one sigma
/// misleads: errors with a heavy tail (a few bases near a miniature's edge 1 mm off among
/// many 0.2 mm off) put more than two thirds within one honest sigma. Shown for the bases
/// a judge is not asked to check (a flagged base's sigma says it may be on the wrong
/// edges altogether, not how far its fit scatters), and for those under 3 mm.
fn print_sigma_rms(all: &SceneScore) -> anyhow::Result<()> {
    let groups: [(&str, Selector); 2] = [
        ("not flagged", Box::new(not_flagged)),
        ("sigma < 3 mm", Box::new(under_3_mm)),
    ];
    let parts: Vec<String> = groups
        .iter()
        .filter_map(|(label, keep)| {
            let r = sigma_rms(all, keep)?;
            Some(format!(
                "{label} ({}): centre {:.2} against {:.2} mm, heading {:.2} against {:.2} deg",
                r.bases, r.centre[0], r.centre[1], r.heading[0], r.heading[1]
            ))
        })
        .collect();
    outln!(
        "errors' RMS against sigmas' RMS (near each other means the sigmas are honest): {}",
        parts.join("; ")
    );
    Ok(())
}

/// How many bases a judge would be misled by: not flagged, yet facing the wrong way or
/// further off than `MISLEADING_SIGMAS` of their own sigmas (a judge settles a 1 mm call on
/// a sure base's figures; a sigma honest on average can still hide a few such).
fn misleading(all: &SceneScore) -> String {
    let beyond = |e: f64, s: Option<f64>| s.is_some_and(|s| e > MISLEADING_SIGMAS * s);
    // Per sure base: facing wrong, centre beyond, heading beyond.
    let flags: Vec<[bool; 3]> = all
        .ships
        .iter()
        .filter(|m| not_flagged(m))
        .map(|m| {
            [
                !m.facing_right,
                beyond(m.centre_error_mm, m.sigma_mm),
                beyond(m.heading_error_deg.abs(), m.sigma_deg),
            ]
        })
        .collect();
    let count = |i: usize| flags.iter().filter(|f| f[i]).count();
    format!(
        "not flagged, yet misleading: {} of {}: facing wrong {}, centre beyond {MISLEADING_SIGMAS} sigmas {}, heading beyond {MISLEADING_SIGMAS} sigmas {}",
        flags.iter().filter(|f| f.contains(&true)).count(),
        flags.len(),
        count(0),
        count(1),
        count(2)
    )
}
/// Errors that follow their sigmas (Gaussian) lie further out rarely: a heading 1 in 80
/// times, a centre (its sigma the RMS of a 2-D error) 1 in 500.
const MISLEADING_SIGMAS: f64 = 2.5;

/// The errors' RMS and the sigmas' RMS of the bases `keep` takes (see `print_sigma_rms`).
struct SigmaRms {
    bases: usize,
    /// [errors' RMS, sigmas' RMS] (mm).
    centre: [f64; 2],
    /// [errors' RMS, sigmas' RMS] (deg).
    heading: [f64; 2],
}

/// Bases with no sigma (none that detection reports) are left out.
fn sigma_rms(all: &SceneScore, keep: &Selector) -> Option<SigmaRms> {
    let sel: Vec<(&crate::vision::detect::score::ShipMatch, f64, f64)> = all
        .ships
        .iter()
        .filter(|m| keep(m))
        .filter_map(|m| Some((m, m.sigma_mm?, m.sigma_deg?)))
        .collect();
    if sel.is_empty() {
        return None;
    }
    Some(SigmaRms {
        bases: sel.len(),
        centre: [
            rms(sel.iter().map(|s| s.0.centre_error_mm)).0,
            rms(sel.iter().map(|s| s.1)).0,
        ],
        heading: [
            rms(sel.iter().map(|s| s.0.heading_error_deg)).0,
            rms(sel.iter().map(|s| s.2)).0,
        ],
    })
}

/// What each doubt detection names (see [`crate::scene::Doubt`]) says of the bases that
/// carry it: how many are right (within 1 mm and facing right) and how many wrong (over
/// 2 mm off, or facing wrong); and how many invented ships a judge is not asked to check.
fn print_doubts(all: &SceneScore) -> anyhow::Result<()> {
    use crate::scene::Doubt;
    use crate::vision::detect::score::ShipMatch;
    let right = |m: &&&ShipMatch| m.centre_error_mm <= 1.0 && m.facing_right;
    let wrong = |m: &&&ShipMatch| m.centre_error_mm > 2.0 || !m.facing_right;
    let row = |name: &str, sel: Vec<&ShipMatch>| -> anyhow::Result<()> {
        outln!(
            "  {name:<20} {:>5} {:>7} {:>7}",
            sel.len(),
            sel.iter().filter(right).count(),
            sel.iter().filter(wrong).count()
        );
        Ok(())
    };
    outln!(
        "doubts named (bases found; right: within 1 mm and facing right; wrong: over 2 mm off or facing wrong):"
    );
    outln!(
        "  {:<20} {:>5} {:>7} {:>7}",
        "doubt",
        "bases",
        "right",
        "wrong"
    );
    for d in [
        Doubt::LittleOutline,
        Doubt::NoHashmark,
        Doubt::OneSided,
        Doubt::CornerOnly,
        Doubt::MiniatureOutline,
        Doubt::RimStrayed,
        Doubt::SecondHeading,
        Doubt::FacingUnsure,
        Doubt::NoColour,
        Doubt::RivalFit,
    ] {
        row(
            d.short(),
            all.ships.iter().filter(|m| m.doubts.contains(&d)).collect(),
        )?;
    }
    row(
        "(none)",
        all.ships.iter().filter(|m| m.doubts.is_empty()).collect(),
    )?;
    let unsure = crate::judge::UNSURE_CONFIDENCE;
    outln!(
        "invented ships: {}, of them {} not flagged for the judge (confidence >= {unsure})",
        all.false_ships,
        all.false_ship_confidences
            .iter()
            .filter(|c| c.is_some_and(|c| c >= unsure))
            .count()
    );
    Ok(())
}

/// The frame check over the scenes (each frame against its own calibration): how far the
/// markers lay from where the calibration puts them, and how many scenes it would refuse.
fn print_checks(checks: &[crate::vision::calibrate::check::TableCheck]) -> anyhow::Result<()> {
    use crate::vision::calibrate::check::TableCheck;
    let offsets: Vec<f64> = checks
        .iter()
        .flat_map(|c| match c {
            TableCheck::Holds { markers } | TableCheck::Moved { markers } => {
                markers.iter().map(|m| m.offset_px).collect()
            }
            TableCheck::Unseen => Vec::new(),
        })
        .collect();
    outln!(
        "frame check: {} markers found on {} scenes, within {:.2} px (median {:.2}); {} scenes refused as moved, {} with no marker",
        offsets.len(),
        checks.len(),
        offsets.iter().copied().fold(0.0, f64::max),
        median(offsets.clone()),
        checks.iter().filter(|c| c.is_moved()).count(),
        checks
            .iter()
            .filter(|c| matches!(c, TableCheck::Unseen))
            .count()
    );
    Ok(())
}

/// The share of each true ship's rim the camera saw (by ship id), from the world the
/// scene was rendered from (see [`crate::vision::sim::visibility`]); empty where the truth
/// is a sequence (a hand over the table, ships moved between frames).
fn rims_in_view(truth: &Truth, models: &Models) -> anyhow::Result<HashMap<String, RimView>> {
    let single =
        matches!(truth.frames.as_slice(), [f] if f.hand.is_none() && f.scene == truth.scene);
    if !single {
        return Ok(HashMap::new());
    }
    let world = World::build(&truth.scene, truth.seed, truth.seed, models)?;
    let shares = rim_view(&world, &truth.camera);
    Ok(truth
        .scene
        .ships
        .iter()
        .map(|s| s.id.clone())
        .zip(shares)
        .collect())
}

/// Accuracy by how much of each base's rim the camera saw with an edge beside it (see
/// [`RimView::showing`]): what the miniature and a dark mat leave of the outline, against
/// the errors of the bases found and the bases missed.
fn print_rims(all: &SceneScore, missed: &[RimView]) -> anyhow::Result<()> {
    let known: Vec<_> = all.ships.iter().filter(|m| m.rim_view.is_some()).collect();
    if known.is_empty() {
        return Ok(());
    }
    outln!("by the share of the rim in view with an edge beside it (from the rendered world):");
    for (label, lo, hi) in [
        ("under a quarter", 0.0, RIM_QUARTER),
        ("a quarter to half", RIM_QUARTER, RIM_HALF),
        ("half or more", RIM_HALF, f64::INFINITY),
    ] {
        let band = |r: &RimView| r.showing >= lo && r.showing < hi;
        let sel: Vec<_> = known
            .iter()
            .filter(|m| m.rim_view.as_ref().is_some_and(band))
            .collect();
        let missed = missed.iter().filter(|r| band(r)).count();
        if sel.is_empty() {
            outln!("  {label:<18} 0 found, {missed} missed");
            continue;
        }
        let (c, cmax) = rms(sel.iter().map(|m| m.centre_error_mm));
        let (h, hmax) = rms(sel.iter().map(|m| m.heading_error_deg));
        let off = sel.iter().filter(|m| m.centre_error_mm > 2.0).count();
        let facing = sel.iter().filter(|m| m.facing_right).count();
        let flagged = sel
            .iter()
            .filter(|m| m.sigma_mm.is_some_and(|s| s >= 3.0))
            .count();
        outln!(
            "  {label:<18} {} found ({flagged} flagged), {missed} missed; centre RMS {c:.2} mm (max {cmax:.2}), {off} over 2 mm off; heading RMS {h:.2} deg (max {hmax:.2}); facing right {facing}",
            sel.len()
        );
    }
    Ok(())
}

/// The bands of `print_rims` (share of the rim in view).
const RIM_QUARTER: f64 = 0.25;
const RIM_HALF: f64 = 0.5;

/// One line per true ship of a scene, indented under its row; missed ones say so.
fn print_ships(s: &SceneScore, rims: &HashMap<String, RimView>) -> anyhow::Result<()> {
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    let rim = |id: &str| {
        rims.get(id).map_or(String::new(), |r| {
            format!(
                "  rim in view {:.0} %, with an edge {:.0} %",
                r.in_view * 100.0,
                r.showing * 100.0
            )
        })
    };
    for m in &s.ships {
        outln!(
            "  {:<5} {:<6} as {:<6} centre {:>6.2} mm  heading {:>+7.2} deg  facing {:<5}  sigma {:>5} mm {:>5} deg  confidence {}{}{}",
            m.id,
            m.size.name(),
            m.found_size.name(),
            m.centre_error_mm,
            m.heading_error_deg,
            if m.facing_right { "right" } else { "WRONG" },
            opt(m.sigma_mm),
            opt(m.sigma_deg),
            opt(m.confidence),
            rim(&m.id),
            if m.doubts.is_empty() {
                String::new()
            } else {
                format!("  ({})", crate::scene::Doubt::shorts(&m.doubts))
            }
        );
    }
    for id in &s.missed_ships {
        if s.missed_ships_outlined.contains(id) {
            outln!("  {id:<5} missed (a measured outline covers it){}", rim(id));
        } else {
            outln!("  {id:<5} missed{}", rim(id));
        }
    }
    Ok(())
}

fn print_row(
    name: &str,
    size: &str,
    ships: usize,
    s: &SceneScore,
    full: f64,
    refit: f64,
) -> anyhow::Result<()> {
    let (crms, cmax) = rms(s.ships.iter().map(|m| m.centre_error_mm));
    let (hrms, _) = rms(s.ships.iter().map(|m| m.heading_error_deg));
    let found = s.ships.len();
    let pct = |k: usize| {
        if found == 0 {
            f64::NAN
        } else {
            k as f64 / found as f64 * 100.0
        }
    };
    let size_ok = s.ships.iter().filter(|m| m.size == m.found_size).count();
    let face_ok = s.ships.iter().filter(|m| m.facing_right).count();
    let haus = s
        .obstacles
        .iter()
        .map(|o| o.hausdorff_mm)
        .fold(0.0f64, f64::max);
    let wrong_model = s.obstacles.iter().filter(|o| !o.model_right).count();
    outln!(
        "{:<14} {:>9} {:>5} {:>5} {:>6} {:>7.2} {:>7.2} {:>7.2} {:>6.0} {:>6.0} {:>7} {:>8.2} {:>8.0} {:>7.1}",
        name,
        size,
        ships,
        found,
        s.false_ships,
        crms,
        cmax,
        hrms,
        pct(size_ok),
        pct(face_ok),
        format!(
            "{}/{}{}",
            s.obstacles.len(),
            s.obstacles.len() + s.missed_obstacles.len(),
            if s.false_obstacles + wrong_model > 0 {
                format!("+{}", s.false_obstacles + wrong_model)
            } else {
                String::new()
            }
        ),
        haus,
        full,
        refit
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vision::detect::score::ShipMatch;

    fn found(error_mm: f64, sigma_mm: Option<f64>) -> ShipMatch {
        ShipMatch {
            id: "s1".into(),
            found_id: "s1".into(),
            size: BaseSize::Small,
            found_size: BaseSize::Small,
            centre_error_mm: error_mm,
            heading_error_deg: -error_mm,
            facing_right: true,
            sigma_mm,
            sigma_deg: sigma_mm,
            confidence: Some(1.0),
            doubts: Vec::new(),
            rim_view: None,
        }
    }

    #[test]
    fn a_sure_base_far_off_or_facing_wrong_is_misleading() {
        let mut all = SceneScore {
            ships: vec![found(0.3, Some(0.5)), found(1.3, Some(0.5))],
            ..Default::default()
        };
        // Facing wrong but flagged: not misleading; facing wrong and sure: misleading.
        let mut turned = found(0.2, Some(0.5));
        turned.facing_right = false;
        turned.confidence = Some(0.5);
        all.ships.push(turned.clone());
        turned.confidence = Some(0.9);
        all.ships.push(turned);
        // No sigma: nothing to be beyond.
        all.ships.push(found(3.0, None));
        assert_eq!(
            misleading(&all),
            "not flagged, yet misleading: 2 of 4: facing wrong 1, centre beyond 2.5 sigmas 1, \
             heading beyond 2.5 sigmas 1"
        );
    }

    #[test]
    fn heavy_tailed_errors_match_their_sigmas_in_rms() {
        // Nine bases 0.3 mm off and one 1.3 mm off, each with sigma 0.5 mm: nine in ten
        // within one sigma, yet the errors' RMS (0.5) is the sigmas'.
        let mut all = SceneScore {
            ships: (0..9).map(|_| found(0.3, Some(0.5))).collect(),
            ..Default::default()
        };
        all.ships.push(found(1.3, Some(0.5)));
        let every: Selector = Box::new(|_| true);
        let r = sigma_rms(&all, &every).expect("bases with sigmas");
        assert_eq!(r.bases, 10);
        assert!((r.centre[0] - 0.5).abs() < 1e-9, "{:?}", r.centre);
        assert!((r.centre[1] - 0.5).abs() < 1e-9 && (r.heading[0] - 0.5).abs() < 1e-9);
        // A base with no sigma is left out; no base at all gives nothing.
        all.ships.push(found(3.0, None));
        assert_eq!(sigma_rms(&all, &every).map(|r| r.bases), Some(10));
        let none: Selector = Box::new(|_| false);
        assert!(sigma_rms(&all, &none).is_none());
    }
}

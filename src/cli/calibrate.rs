use crate::calibration::files::CalibrationFile;
use crate::calibration::{CameraFile, Layout};
use crate::vision::calibrate::camera::{self, BoardSpec, Rejection, View};
use crate::vision::calibrate::{plots, table};
use crate::vision::cv;
use anyhow::{Context, bail};
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio;
use std::path::{Path, PathBuf};

#[derive(clap::Subcommand, Debug)]
pub enum CalibrateCommand {
    /// Camera intrinsics from views of the ChArUco board.
    Camera(CameraArgs),
    /// The table pose (or a homography without intrinsics) from the four mat markers.
    Table(TableArgs),
    /// The table-to-projector mapping from a photo of the projected marker pattern.
    Projector(ProjectorArgs),
    /// Score calibration files against a simulator's truth.json: how far table points land.
    Score(ScoreArgs),
}

#[derive(clap::Args, Debug)]
pub struct ProjectorArgs {
    /// The projector's output size, e.g. 1920x1080.
    #[arg(long, default_value = "1920x1080")]
    size: String,
    /// Write the pattern to show full screen on the projector, and stop.
    #[arg(long)]
    pattern_out: Option<PathBuf>,
    /// A camera photo of the table with the pattern projected on it (table cleared).
    #[arg(long, conflicts_with = "camera")]
    photo: Option<PathBuf>,
    /// Grab the photo from a live camera.
    #[arg(long)]
    camera: Option<i32>,
    #[arg(long, default_value = "calibration/camera.json")]
    camera_calibration: PathBuf,
    #[arg(long, default_value = "calibration/table.json")]
    table: PathBuf,
    #[arg(long, default_value = "calibration/projector.json")]
    out: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct ScoreArgs {
    /// truth.json written by `hashmark simulate`.
    #[arg(long)]
    truth: PathBuf,
    #[arg(long)]
    camera_calibration: Option<PathBuf>,
    #[arg(long, default_value = "calibration/table.json")]
    table: PathBuf,
}

#[derive(clap::Args, Debug)]
#[group(id = "source", required = true, multiple = false)]
pub struct CameraSource {
    /// A directory of still images of the board (jpg, jpeg, png).
    #[arg(long, group = "source")]
    images: Option<PathBuf>,
    /// A video of the board being moved around.
    #[arg(long, group = "source")]
    video: Option<PathBuf>,
    /// A live camera; the command tells you where the board is still needed.
    #[arg(long, group = "source")]
    camera: Option<i32>,
}

#[derive(clap::Args, Debug)]
pub struct CameraArgs {
    #[command(flatten)]
    source: CameraSource,
    /// Board squares, across x down, e.g. 7x5.
    #[arg(long, default_value = "7x5")]
    squares: String,
    #[arg(long, default_value_t = 30.0)]
    square_mm: f64,
    #[arg(long, default_value_t = 22.0)]
    marker_mm: f64,
    #[arg(long, default_value = "DICT_5X5_100")]
    dictionary: String,
    /// Take the board from a layout file (`hashmark-layout/1`, its `board`), the one
    /// `markers --layout` printed it from, instead of the four flags above.
    #[arg(long, conflicts_with_all = ["squares", "square_mm", "marker_mm", "dictionary"])]
    layout: Option<PathBuf>,
    /// Camera-to-table distance used for the uncertainty estimate, mm.
    #[arg(long, default_value_t = 1100.0)]
    table_distance_mm: f64,
    /// With --camera: how many distinct views to collect.
    #[arg(long, default_value_t = 15)]
    views: usize,
    #[arg(long, default_value = "calibration/camera.json")]
    out: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct TableArgs {
    /// Intrinsics from `calibrate camera`; without them a plain homography is solved.
    #[arg(long)]
    camera_calibration: Option<PathBuf>,
    /// A photo of the table with the four mat marker cards.
    #[arg(long, conflicts_with = "camera")]
    image: Option<PathBuf>,
    /// Grab one frame from a live camera.
    #[arg(long)]
    camera: Option<i32>,
    /// The play area on the mat, by name from models/play_areas.json (standard: 3 ft x 3
    /// ft; epic: 6 ft x 3 ft). Detection then covers it.
    #[arg(long, default_value = "standard")]
    play_area: String,
    /// Where the mat marker cards lie, when not at the spec's places (a `hashmark-layout/1`
    /// file like calibration/layout.json). Without it the spec's four cards, 45 mm out from
    /// each corner of the play area.
    #[arg(long)]
    layout: Option<PathBuf>,
    #[arg(long, default_value = "calibration/table.json")]
    out: PathBuf,
}

pub fn run(cmd: &CalibrateCommand) -> anyhow::Result<()> {
    match cmd {
        CalibrateCommand::Camera(a) => run_camera(a),
        CalibrateCommand::Table(a) => run_table(a),
        CalibrateCommand::Projector(a) => run_projector(a),
        CalibrateCommand::Score(a) => run_score(a),
    }
}

fn parse_squares(s: &str) -> anyhow::Result<(usize, usize)> {
    let (x, y) = s
        .split_once(['x', 'X'])
        .with_context(|| format!("--squares must look like 7x5, not \"{s}\""))?;
    Ok((
        x.trim()
            .parse()
            .with_context(|| format!("--squares: \"{x}\" is not a number"))?,
        y.trim()
            .parse()
            .with_context(|| format!("--squares: \"{y}\" is not a number"))?,
    ))
}

/// Reads an image file as BGR, with the file named in any error.
pub fn read_image(path: &Path) -> anyhow::Result<Mat> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read image {}", path.display()))?;
    cv::decode(&bytes)
        .with_context(|| format!("{} is not an image OpenCV can read", path.display()))
}

fn image_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read directory {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| ["jpg", "jpeg", "png"].contains(&e.to_ascii_lowercase().as_str()))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no .jpg, .jpeg or .png images in {}", dir.display());
    }
    Ok(files)
}

fn progress(len: u64, what: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message(what.to_string());
    bar
}

fn run_camera(a: &CameraArgs) -> anyhow::Result<()> {
    let spec = match &a.layout {
        Some(path) => BoardSpec::from_layout(&Layout::load(path)?.board),
        None => {
            let (sx, sy) = parse_squares(&a.squares)?;
            BoardSpec {
                squares_x: sx,
                squares_y: sy,
                square_mm: a.square_mm,
                marker_mm: a.marker_mm,
                dictionary: a.dictionary.clone(),
            }
        }
    };
    let board = spec.geometry()?;
    let mut size: Option<[u32; 2]> = None;
    let mut candidates: Vec<(String, Result<View, Rejection>)> = Vec::new();
    let mut take = |name: String, img: &Mat| -> anyhow::Result<()> {
        let s = img.size()?;
        let this = [s.width as u32, s.height as u32];
        match size {
            None => size = Some(this),
            Some(first) if first != this => {
                candidates.push((name, Err(Rejection::WrongSize(this))));
                return Ok(());
            }
            _ => {}
        }
        let found = camera::find_view(img, &board, &name)?;
        candidates.push((name, found));
        Ok(())
    };
    if let Some(dir) = &a.source.images {
        let files = image_files(dir)?;
        let bar = progress(files.len() as u64, "finding the board");
        for f in &files {
            let img = read_image(f)?;
            let name = f.file_name().map_or_else(
                || f.display().to_string(),
                |n| n.to_string_lossy().to_string(),
            );
            take(name, &img)?;
            bar.inc(1);
        }
        bar.finish_and_clear();
    } else if let Some(video) = &a.source.video {
        let mut cap =
            videoio::VideoCapture::from_file(&*video.to_string_lossy(), videoio::CAP_ANY)?;
        if !cap.is_opened()? {
            bail!("cannot open video {}", video.display());
        }
        let count = cap.get(videoio::CAP_PROP_FRAME_COUNT)?.max(1.0) as u64;
        // Enough frames to cover the motion; near-duplicates are dropped anyway.
        let step = (count / 60).max(1);
        let bar = progress(count, "reading the video");
        let mut frame = Mat::default();
        let mut k = 0u64;
        while cap.read(&mut frame)? && !frame.empty() {
            if k.is_multiple_of(step) {
                take(format!("frame {k}"), &frame)?;
            }
            k += 1;
            bar.inc(1);
        }
        bar.finish_and_clear();
        if k == 0 {
            bail!("video {} has no frames OpenCV can decode", video.display());
        }
    } else if let Some(n) = a.source.camera {
        live_views(n, a.views, &board, &mut take)?;
    }
    let size = size.context("no images")?;
    let mut report = camera::calibrate(candidates, &board, size)?;
    let play = crate::Models::builtin().play_areas.standard();
    let play = [play.width_mm, play.height_mm];
    report.file.table_uncertainty_mm =
        camera::table_uncertainty_mm(&report.file, &Layout::builtin(), play, a.table_distance_mm);
    report.file.save(&a.out)?;
    let dir = a.out.parent().unwrap_or(Path::new("."));
    let stem = a
        .out
        .file_stem()
        .map_or("camera".into(), |s| s.to_string_lossy().to_string());
    let coverage = dir.join(format!("{stem}-coverage.png"));
    let residuals = dir.join(format!("{stem}-residuals.png"));
    crate::files::write_atomic(&coverage, &plots::coverage_png(&report, 960)?)?;
    crate::files::write_atomic(
        &residuals,
        &plots::residuals_png(&report.residuals, report.file.rms_px, 600)?,
    )?;
    print_camera_report(&report, a.table_distance_mm)?;
    outln!(
        "wrote {}, {} and {}",
        a.out.display(),
        coverage.display(),
        residuals.display()
    );
    Ok(())
}

fn print_camera_report(r: &camera::CameraReport, distance: f64) -> anyhow::Result<()> {
    let f = &r.file;
    let k = f.camera_matrix;
    let sd = f.std_dev.unwrap_or([f64::NAN; 4]);
    outln!(
        "camera {} x {} from {} views ({} rejected), RMS {:.3} px",
        f.image_size[0],
        f.image_size[1],
        f.views,
        r.rejected.len(),
        f.rms_px
    );
    outln!(
        "  fx {:.2} +- {:.2}  fy {:.2} +- {:.2}  cx {:.2} +- {:.2}  cy {:.2} +- {:.2} px",
        k[0][0],
        sd[0],
        k[1][1],
        sd[1],
        k[0][2],
        sd[2],
        k[1][2],
        sd[3]
    );
    let d = f.distortion;
    outln!(
        "  distortion k1 {:.4} k2 {:.4} p1 {:.5} p2 {:.5} k3 {:.4}",
        d[0],
        d[1],
        d[2],
        d[3],
        d[4]
    );
    for (name, rms) in &r.per_view_rms {
        outln!("  view {name}: {rms:.3} px");
    }
    for (name, why) in &r.rejected {
        outln!("  rejected {name}: {why}");
    }
    for w in r.worst(5) {
        outln!(
            "  worst: {} corner {} at ({:.0}, {:.0}) off by {:.2} px",
            w.view,
            w.corner,
            w.at_px[0],
            w.at_px[1],
            w.norm()
        );
    }
    if let Some(u) = f.table_uncertainty_mm {
        outln!(
            "  expected error on the table at {distance:.0} mm, 650 mm off-axis: {u:.2} mm (1 sigma)"
        );
    }
    let points: Vec<[f64; 2]> = r.residuals.iter().map(|x| x.at_px).collect();
    let empty = plots::empty_cells(&points, f.image_size);
    if !empty.is_empty() {
        outln!(
            "  the board was never seen in {}: add views there",
            plots::region_names(&empty)
        );
    }
    Ok(())
}

fn live_views(
    n: i32,
    want: usize,
    board: &crate::vision::aruco::CharucoGeometry,
    take: &mut dyn FnMut(String, &Mat) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut cap = videoio::VideoCapture::new(n, videoio::CAP_ANY)?;
    if !cap.is_opened()? {
        bail!("cannot open camera {n}: is it plugged in and free?");
    }
    outln!("show the board to camera {n}; move and tilt it between views ({want} views wanted)");
    let mut frame = Mat::default();
    let mut kept: Vec<View> = Vec::new();
    let mut misses = 0;
    while kept.len() < want {
        if !cap.read(&mut frame)? || frame.empty() {
            misses += 1;
            if misses > 100 {
                bail!(
                    "camera {n} stopped delivering frames after {} views",
                    kept.len()
                );
            }
            continue;
        }
        misses = 0;
        let s = frame.size()?;
        let diagonal = f64::from(s.width).hypot(f64::from(s.height));
        let name = format!("live {}", kept.len() + 1);
        if let Ok(v) = camera::find_view(&frame, board, &name)? {
            let fresh = kept.iter().all(|k| {
                let moved = v
                    .corners
                    .iter()
                    .filter_map(|(id, p)| {
                        k.corners
                            .iter()
                            .find(|(i, _)| i == id)
                            .map(|(_, q)| (p[0] - q[0]).hypot(p[1] - q[1]))
                    })
                    .fold(f64::INFINITY, f64::min);
                moved > 0.03 * diagonal
            });
            if fresh {
                take(name, &frame)?;
                kept.push(v);
                let pts: Vec<[f64; 2]> = kept
                    .iter()
                    .flat_map(|k| k.corners.iter().map(|c| c.1))
                    .collect();
                let empty = plots::empty_cells(&pts, [s.width as u32, s.height as u32]);
                outln!(
                    "view {}/{want}: {} corners; {}",
                    kept.len(),
                    kept.last().map_or(0, |k| k.corners.len()),
                    if empty.is_empty() {
                        "the whole image is covered".to_string()
                    } else {
                        format!("still needed: {}", plots::region_names(&empty))
                    }
                );
            }
        }
    }
    Ok(())
}

fn run_table(a: &TableArgs) -> anyhow::Result<()> {
    let camera = match &a.camera_calibration {
        Some(p) => Some(CameraFile::load(p)?),
        None => None,
    };
    let image = match (&a.image, a.camera) {
        (Some(p), _) => read_image(p)?,
        (None, Some(n)) => grab(n)?,
        (None, None) => bail!("give --image F or --camera N"),
    };
    let (play, layout) = play_area_and_layout(&a.play_area, a.layout.as_deref())?;
    let report = table::calibrate_table(&image, &layout, play, camera.as_ref())?;
    report.file.save(&a.out)?;
    let f = &report.file;
    outln!(
        "play area {} ({} x {} mm), mat markers {}",
        a.play_area,
        play.width_mm,
        play.height_mm,
        layout
            .mat_markers
            .markers
            .iter()
            .map(|m| format!("{} at ({}, {})", m.id, m.centre[0], m.centre[1]))
            .collect::<Vec<_>>()
            .join(", ")
    );
    outln!(
        "table pose solved {} ({} x {})",
        if f.homography.is_some() {
            "as a homography (no intrinsics)"
        } else {
            "with intrinsics"
        },
        f.image_size[0],
        f.image_size[1]
    );
    for (id, r) in &f.marker_residuals_mm {
        let side = id
            .parse::<u32>()
            .ok()
            .and_then(|i| report.marker_side_mm.get(&i).copied())
            .unwrap_or(f64::NAN);
        outln!("  marker {id}: residual {r:.2} mm, measures {side:.2} mm");
    }
    if let Some(cam) = camera
        .as_ref()
        .and_then(|c| crate::vision::calibrate::camera_model(c, f))
    {
        print_play_area_scale(&cam, &play)?;
    }
    outln!("wrote {}", a.out.display());
    Ok(())
}

/// The play area named `name` and the mat markers around it: `layout`'s file when given,
/// else the built-in layout moved to that play area's corners.
pub fn play_area_and_layout(
    name: &str,
    layout: Option<&std::path::Path>,
) -> anyhow::Result<(crate::geometry::PlayArea, Layout)> {
    let areas = &crate::Models::builtin().play_areas;
    let Some(play) = areas.get(name) else {
        bail!(
            "--play-area: no play area named {name:?}; known: {}",
            areas
                .areas
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let play = play.area();
    let layout = match layout {
        Some(p) => Layout::load(p)?,
        None => Layout::around(play),
    };
    Ok((play, layout))
}

/// How finely the camera sees the play area, and whether ship headings suffer for it.
fn print_play_area_scale(
    camera: &crate::vision::Camera,
    play: &crate::geometry::PlayArea,
) -> anyhow::Result<()> {
    use crate::vision::calibrate::scale::{COARSE_SIDE_PX, play_area_scale};
    let models = crate::models::Models::builtin();
    let Some(s) = play_area_scale(camera, play, models.bases.base_top_height_mm) else {
        return Ok(());
    };
    let small = models.bases.get(crate::BaseSize::Small).width_mm;
    outln!(
        "play area seen at {:.2}-{:.2} px per mm (coarsest at {:.0}, {:.0} mm): a small base's side spans {:.0}-{:.0} px",
        s.min_px_per_mm,
        s.max_px_per_mm,
        s.coarsest_at[0],
        s.coarsest_at[1],
        s.min_px_per_mm * small,
        s.max_px_per_mm * small
    );
    if s.min_px_per_mm * small < COARSE_SIDE_PX {
        outln!(
            "  where that is under {COARSE_SIDE_PX:.0} px, ship headings are known to about 1 deg only: a camera nearer the table, or at 4K, sees them better"
        );
    }
    Ok(())
}

fn run_score(a: &ScoreArgs) -> anyhow::Result<()> {
    let truth: crate::vision::sim::Truth =
        serde_json::from_str(&crate::files::read_text(&a.truth)?)
            .with_context(|| format!("{} is not a simulator truth file", a.truth.display()))?;
    let camera = match &a.camera_calibration {
        Some(p) => Some(CameraFile::load(p)?),
        None => None,
    };
    let table = crate::calibration::TableFile::load(&a.table)?;
    if table.image_size != truth.camera.image_size {
        bail!(
            "the calibration is for {:?} images, the truth for {:?}",
            table.image_size,
            truth.camera.image_size
        );
    }
    let play = [
        truth.scene.play_area.width_mm,
        truth.scene.play_area.height_mm,
    ];
    let (rms, max) = crate::vision::calibrate::table_error_mm(&truth.camera, camera.as_ref(), &table, play)
        .context("the calibration cannot map the truth's points (no intrinsics for a pose, or a point behind the camera)")?;
    if let Some(c) = &camera {
        let (k, t) = (c.camera_matrix, truth.camera.camera_matrix);
        outln!(
            "intrinsics vs truth: fx {:+.2} %, fy {:+.2} %, cx {:+.2} %, cy {:+.2} %",
            (k[0][0] / t[0][0] - 1.0) * 100.0,
            (k[1][1] / t[1][1] - 1.0) * 100.0,
            (k[0][2] / t[0][2] - 1.0) * 100.0,
            (k[1][2] / t[1][2] - 1.0) * 100.0
        );
    }
    outln!("table points (11 x 11 grid over the play area): {rms:.3} mm RMS, {max:.3} mm max");
    Ok(())
}

fn grab(n: i32) -> anyhow::Result<Mat> {
    let mut cap = videoio::VideoCapture::new(n, videoio::CAP_ANY)?;
    if !cap.is_opened()? {
        bail!("cannot open camera {n}: is it plugged in and free?");
    }
    let mut frame = Mat::default();
    if !cap.read(&mut frame)? || frame.empty() {
        bail!("camera {n} gave no frame");
    }
    Ok(frame)
}

fn run_projector(a: &ProjectorArgs) -> anyhow::Result<()> {
    use crate::vision::calibrate::projector::{Pattern, calibrate_projector};
    let (w, h) = parse_squares(&a.size)
        .map_err(|_| anyhow::anyhow!("--size must look like 1920x1080, not \"{}\"", a.size))?;
    let pattern = Pattern::for_size([w as u32, h as u32])?;
    if let Some(p) = &a.pattern_out {
        crate::files::write_atomic(p, &cv::encode_png(&pattern.image()?)?)?;
        outln!(
            "wrote {}: show it full screen on the projector, clear the table, then photograph it and run with --photo",
            p.display()
        );
        return Ok(());
    }
    let photo = match (&a.photo, a.camera) {
        (Some(p), _) => read_image(p)?,
        (None, Some(n)) => grab(n)?,
        (None, None) => {
            bail!("give --pattern-out F to get the pattern, then --photo F (or --camera N)")
        }
    };
    let camera = CameraFile::load(&a.camera_calibration)?;
    let table = crate::calibration::TableFile::load(&a.table)?;
    let model = crate::vision::calibrate::camera_model(&camera, &table)
        .context("the table calibration has no camera pose: run `hashmark calibrate table` with --camera-calibration")?;
    let s = photo.size()?;
    if [s.width as u32, s.height as u32] != camera.image_size {
        bail!(
            "the photo is {} x {} but the camera calibration is for {} x {}",
            s.width,
            s.height,
            camera.image_size[0],
            camera.image_size[1]
        );
    }
    let play = table.play_area();
    let play = [play.width_mm, play.height_mm];
    let file = calibrate_projector(&photo, &pattern, &model, play)?;
    file.save(&a.out)?;
    outln!(
        "projector {} x {}: residual {:.2} projector px, {:.2} mm on the table",
        file.size[0],
        file.size[1],
        file.residual_px,
        file.residual_mm
    );
    outln!("wrote {}", a.out.display());
    Ok(())
}

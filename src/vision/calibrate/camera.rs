//! Camera intrinsics from ChArUco views: find the board's corners in each view (sub-pixel,
//! by OpenCV's ChArUco interpolation), drop views that cannot help (too few corners, all in
//! a line, near-duplicates of a view already kept, outliers after a first solve), then
//! `calibrateCameraExtended` on our own point lists, with per-view RMS, the worst residuals
//! and the standard deviations of the intrinsics.

use crate::calibration::CameraFile;
use crate::calibration::files::CAMERA_FORMAT;
use crate::vision::VisionError;
use crate::vision::aruco::{self, CharucoGeometry, Dict};
use opencv::calib3d;
use opencv::core::{Mat, Point2f, Point3f, Size, TermCriteria, Vector};
use opencv::prelude::*;

/// The board as the user describes it on the command line.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardSpec {
    pub squares_x: usize,
    pub squares_y: usize,
    pub square_mm: f64,
    pub marker_mm: f64,
    pub dictionary: String,
}

impl BoardSpec {
    pub fn from_layout(b: &crate::calibration::layout::Board) -> BoardSpec {
        BoardSpec {
            squares_x: b.squares_x as usize,
            squares_y: b.squares_y as usize,
            square_mm: b.square_mm,
            marker_mm: b.marker_mm,
            dictionary: b.dictionary.clone(),
        }
    }

    pub fn geometry(&self) -> Result<CharucoGeometry, VisionError> {
        CharucoGeometry::with_dictionary(
            self.squares_x,
            self.squares_y,
            self.square_mm,
            self.marker_mm,
            Dict::parse(&self.dictionary)?,
        )
    }
}

/// The board corners found in one image.
#[derive(Clone, Debug)]
pub struct View {
    pub name: String,
    /// (ChArUco corner id, image point px).
    pub corners: Vec<(i32, [f64; 2])>,
}

/// Why a view was not used.
#[derive(Clone, Debug, PartialEq)]
pub enum Rejection {
    TooFewCorners(usize),
    InALine,
    DuplicateOf(String),
    Outlier { rms_px: f64 },
    WrongSize([u32; 2]),
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejection::TooFewCorners(n) => {
                write!(f, "only {n} board corners found (need {MIN_CORNERS})")
            }
            Rejection::InALine => write!(f, "the corners found lie in a line"),
            Rejection::DuplicateOf(v) => write!(f, "nearly the same view as {v}"),
            Rejection::Outlier { rms_px } => write!(f, "fits badly ({rms_px:.2} px RMS)"),
            Rejection::WrongSize(s) => write!(f, "image is {} x {}, unlike the others", s[0], s[1]),
        }
    }
}

pub const MIN_CORNERS: usize = 6;

/// Finds the board in an image; `Err(Rejection)` when the view cannot be used.
pub fn find_view(
    image: &Mat,
    board: &CharucoGeometry,
    name: &str,
) -> Result<Result<View, Rejection>, VisionError> {
    let corners = aruco::charuco_corners(image, board)?;
    if corners.len() < MIN_CORNERS {
        return Ok(Err(Rejection::TooFewCorners(corners.len())));
    }
    if in_a_line(&corners.iter().map(|c| c.1).collect::<Vec<_>>()) {
        return Ok(Err(Rejection::InALine));
    }
    Ok(Ok(View {
        name: name.to_string(),
        corners,
    }))
}

/// True when the points' spread across their main direction is negligible.
fn in_a_line(pts: &[[f64; 2]]) -> bool {
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p[0]).sum::<f64>() / n,
        pts.iter().map(|p| p[1]).sum::<f64>() / n,
    );
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for p in pts {
        let (dx, dy) = (p[0] - mx, p[1] - my);
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    let tr = sxx + syy;
    let det = sxx * syy - sxy * sxy;
    let disc = (tr * tr / 4.0 - det).max(0.0).sqrt();
    let (big, small) = (tr / 2.0 + disc, tr / 2.0 - disc);
    small <= 1e-4 * big
}

/// Whether `v` adds nothing to `kept`: most of its corners are the same corners, within
/// `tol_px` of where `kept` saw them.
fn duplicate_of(v: &View, kept: &View, tol_px: f64) -> bool {
    let mut shared = 0usize;
    let mut dist = 0.0;
    for (id, p) in &v.corners {
        if let Some((_, q)) = kept.corners.iter().find(|(k, _)| k == id) {
            shared += 1;
            dist += ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt();
        }
    }
    shared * 5 >= v.corners.len().min(kept.corners.len()) * 4
        && dist / (shared.max(1) as f64) < tol_px
}

/// One corner's reprojection error after the fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Residual {
    pub view: String,
    pub corner: i32,
    pub at_px: [f64; 2],
    pub error_px: [f64; 2],
}

impl Residual {
    pub fn norm(&self) -> f64 {
        self.error_px[0].hypot(self.error_px[1])
    }
}

/// Everything a user needs to judge an intrinsic calibration.
#[derive(Clone, Debug)]
pub struct CameraReport {
    pub file: CameraFile,
    /// (view, RMS px) of the views used.
    pub per_view_rms: Vec<(String, f64)>,
    pub rejected: Vec<(String, Rejection)>,
    /// Every used corner's residual, worst first.
    pub residuals: Vec<Residual>,
}

impl CameraReport {
    pub fn worst(&self, n: usize) -> &[Residual] {
        &self.residuals[..n.min(self.residuals.len())]
    }
}

/// Drops unusable and near-duplicate views, calibrates, drops outlier views, calibrates again.
pub fn calibrate(
    candidates: Vec<(String, Result<View, Rejection>)>,
    board: &CharucoGeometry,
    image_size: [u32; 2],
) -> Result<CameraReport, VisionError> {
    let diagonal = f64::from(image_size[0]).hypot(f64::from(image_size[1]));
    let mut kept: Vec<View> = Vec::new();
    let mut rejected: Vec<(String, Rejection)> = Vec::new();
    for (name, c) in candidates {
        match c {
            Err(r) => rejected.push((name, r)),
            Ok(v) => match kept.iter().find(|k| duplicate_of(&v, k, 0.01 * diagonal)) {
                Some(k) => rejected.push((name, Rejection::DuplicateOf(k.name.clone()))),
                None => kept.push(v),
            },
        }
    }
    if kept.len() < 3 {
        return Err(VisionError::Invalid(format!(
            "only {} usable board views (need at least 3): {}",
            kept.len(),
            rejected
                .iter()
                .map(|(n, r)| format!("{n}: {r}"))
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    let mut solved = solve(&kept, board, image_size)?;
    // A view far worse than the rest (a blurred frame, a bent board) drags every parameter;
    // drop it and solve again, as long as enough views remain.
    let mut rms: Vec<f64> = solved.per_view.clone();
    rms.sort_by(f64::total_cmp);
    let median = rms[rms.len() / 2];
    let limit = (3.0 * median).max(1.0);
    if solved.per_view.iter().any(|&e| e > limit)
        && solved.per_view.iter().filter(|&&e| e <= limit).count() >= 3
    {
        let mut again = Vec::new();
        for (v, &e) in kept.iter().zip(&solved.per_view) {
            if e > limit {
                rejected.push((v.name.clone(), Rejection::Outlier { rms_px: e }));
            } else {
                again.push(v.clone());
            }
        }
        kept = again;
        solved = solve(&kept, board, image_size)?;
    }
    let file = CameraFile {
        format: CAMERA_FORMAT.to_string(),
        image_size,
        camera_matrix: solved.camera_matrix,
        distortion: solved.distortion,
        rms_px: solved.rms,
        views: kept.len(),
        std_dev: Some(solved.std_dev),
        table_uncertainty_mm: None,
        created: Some(super::timestamp()),
    };
    let mut residuals = solved.residuals;
    residuals.sort_by(|a, b| b.norm().total_cmp(&a.norm()));
    Ok(CameraReport {
        file,
        per_view_rms: kept
            .iter()
            .map(|v| v.name.clone())
            .zip(solved.per_view)
            .collect(),
        rejected,
        residuals,
    })
}

struct Solved {
    camera_matrix: [[f64; 3]; 3],
    distortion: [f64; 5],
    rms: f64,
    std_dev: [f64; 4],
    per_view: Vec<f64>,
    residuals: Vec<Residual>,
}

fn solve(
    views: &[View],
    board: &CharucoGeometry,
    image_size: [u32; 2],
) -> Result<Solved, VisionError> {
    let mut obj: Vector<Vector<Point3f>> = Vector::new();
    let mut img: Vector<Vector<Point2f>> = Vector::new();
    for v in views {
        let mut o = Vector::<Point3f>::new();
        let mut i = Vector::<Point2f>::new();
        for (id, p) in &v.corners {
            let Some(c) = board.corners.get(*id as usize) else {
                return Err(VisionError::Invalid(format!(
                    "{}: corner id {id} is not on the board",
                    v.name
                )));
            };
            o.push(Point3f::new(c[0] as f32, c[1] as f32, 0.0));
            i.push(Point2f::new(p[0] as f32, p[1] as f32));
        }
        obj.push(o);
        img.push(i);
    }
    let mut k = Mat::default();
    let mut d = Mat::default();
    let mut rvecs: Vector<Mat> = Vector::new();
    let mut tvecs: Vector<Mat> = Vector::new();
    let mut std_in = Mat::default();
    let mut std_ex = Mat::default();
    let mut per_view = Mat::default();
    let rms = calib3d::calibrate_camera_extended(
        &obj,
        &img,
        Size::new(image_size[0] as i32, image_size[1] as i32),
        &mut k,
        &mut d,
        &mut rvecs,
        &mut tvecs,
        &mut std_in,
        &mut std_ex,
        &mut per_view,
        0,
        TermCriteria::default()?,
    )?;
    let mut camera_matrix = [[0.0; 3]; 3];
    for (r, row) in camera_matrix.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = *k.at_2d::<f64>(r as i32, c as i32)?;
        }
    }
    let mut distortion = [0.0; 5];
    for (i, v) in distortion.iter_mut().enumerate() {
        *v = *d.at::<f64>(i as i32)?;
    }
    let mut std_dev = [0.0; 4];
    for (i, v) in std_dev.iter_mut().enumerate() {
        *v = *std_in.at::<f64>(i as i32)?;
    }
    let mut errors = Vec::with_capacity(views.len());
    for i in 0..views.len() {
        errors.push(*per_view.at::<f64>(i as i32)?);
    }
    let mut residuals = Vec::new();
    for (i, v) in views.iter().enumerate() {
        let mut projected: Vector<Point2f> = Vector::new();
        calib3d::project_points_def(
            &obj.get(i)?,
            &rvecs.get(i)?,
            &tvecs.get(i)?,
            &k,
            &d,
            &mut projected,
        )?;
        for ((id, p), q) in v.corners.iter().zip(projected.iter()) {
            residuals.push(Residual {
                view: v.name.clone(),
                corner: *id,
                at_px: *p,
                error_px: [p[0] - f64::from(q.x), p[1] - f64::from(q.y)],
            });
        }
    }
    Ok(Solved {
        camera_matrix,
        distortion,
        rms,
        std_dev,
        per_view: errors,
        residuals,
    })
}

/// One-sigma uncertainty (mm) of a table point `offset_mm` from the optical axis, seen from
/// `distance_mm`: from the standard deviations of f and c (a shifted principal point moves
/// everything, a wrong focal length scales it) and the fit's own RMS as corner noise.
pub fn table_uncertainty_mm(file: &CameraFile, distance_mm: f64, offset_mm: f64) -> Option<f64> {
    let [sfx, sfy, scx, scy] = file.std_dev?;
    let f = (file.camera_matrix[0][0] + file.camera_matrix[1][1]) / 2.0;
    let sf = sfx.hypot(sfy) / std::f64::consts::SQRT_2;
    let sc = scx.hypot(scy) / std::f64::consts::SQRT_2;
    let from_c = distance_mm / f * sc;
    let from_f = offset_mm / f * sf;
    let from_noise = distance_mm / f * file.rms_px;
    Some((from_c * from_c + from_f * from_f + from_noise * from_noise).sqrt())
}

//! Camera intrinsics from ChArUco views: find the board's corners in each view (sub-pixel,
//! by OpenCV's ChArUco interpolation), drop views that cannot help (too few corners, all in
//! a line, near-duplicates of a view already kept, outliers after a first solve), then
//! `calibrateCameraExtended` on our own point lists, with per-view RMS, the worst residuals
//! and the standard deviations of the intrinsics.

use crate::calibration::CameraFile;
use crate::calibration::files::CAMERA_FORMAT;
use crate::vision::VisionError;
use crate::vision::aruco::{self, CharucoGeometry, Dict};
use crate::vision::{Camera, cv};
use opencv::calib3d;
use opencv::core::{Mat, Vector};
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
    let (_, [sxx, syy, sxy]) = crate::vision::edges::scatter(pts);
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
        board: Some(board.description()),
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
    let mut lists: Vec<cv::View> = Vec::with_capacity(views.len());
    for v in views {
        let mut obj = Vec::with_capacity(v.corners.len());
        for (id, _) in &v.corners {
            let Some(c) = board.corners.get(*id as usize) else {
                return Err(VisionError::Invalid(format!(
                    "{}: corner id {id} is not on the board",
                    v.name
                )));
            };
            obj.push([c[0], c[1], 0.0]);
        }
        lists.push((obj, v.corners.iter().map(|c| c.1).collect()));
    }
    let fit = cv::calibrate(&lists, image_size)?;
    let mut residuals = Vec::new();
    for ((v, (obj, _)), (rvec, tvec)) in views.iter().zip(&lists).zip(&fit.poses) {
        let posed = Camera {
            image_size,
            camera_matrix: fit.camera_matrix,
            distortion: fit.distortion,
            rvec: *rvec,
            tvec: *tvec,
        };
        for ((id, p), o) in v.corners.iter().zip(obj) {
            if let Some(q) = posed.project(*o) {
                residuals.push(Residual {
                    view: v.name.clone(),
                    corner: *id,
                    at_px: *p,
                    error_px: [p[0] - q[0], p[1] - q[1]],
                });
            }
        }
    }
    Ok(Solved {
        camera_matrix: fit.camera_matrix,
        distortion: fit.distortion,
        rms: fit.rms_px,
        std_dev: fit.std_dev,
        per_view: fit.per_view_rms,
        residuals,
    })
}

/// Expected RMS error (mm) of table points once this camera has also been posed over the
/// table by `calibrate table`, seen from `distance_mm` straight above the play area's
/// centre. A doubt in the intrinsics is mostly absorbed by the pose (a shifted principal
/// point is solved as a slight tilt), so it is propagated through the whole chain by Monte
/// Carlo: perturb fx, fy, cx, cy by their standard deviations and the marker corners by the
/// fit's RMS, solve the pose from the perturbed corners, and measure where a grid of table
/// points lands.
pub fn table_uncertainty_mm(
    file: &CameraFile,
    layout: &crate::calibration::Layout,
    play: [f64; 2],
    distance_mm: f64,
) -> Option<f64> {
    use crate::vision::Camera;
    let sd = file.std_dev?;
    // Looking straight down: camera x along table x, camera y along table -y, z down.
    let nominal = Camera {
        image_size: file.image_size,
        camera_matrix: file.camera_matrix,
        distortion: file.distortion,
        rvec: [std::f64::consts::PI, 0.0, 0.0],
        tvec: [-play[0] / 2.0, play[1] / 2.0, distance_mm],
    };
    let corners: Vec<[f64; 2]> = layout
        .mat_markers
        .markers
        .iter()
        .filter_map(|m| layout.marker_corners_mm(m.id))
        .flatten()
        .collect();
    let pixels: Vec<[f64; 2]> = corners
        .iter()
        .map(|c| nominal.project([c[0], c[1], 0.0]))
        .collect::<Option<_>>()?;
    let grid: Vec<[f64; 2]> = (0..=4)
        .flat_map(|i| (0..=4).map(move |j| [play[0] * i as f64 / 4.0, play[1] * j as f64 / 4.0]))
        .collect();
    let mut rng = 0x5EED_u64;
    let mut gauss = move || {
        let mut u = || {
            rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        let (a, b) = (u().max(1e-300), u());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    };
    let (mut sq, mut n) = (0.0, 0usize);
    for _ in 0..40 {
        let mut k = file.camera_matrix;
        k[0][0] += sd[0] * gauss();
        k[1][1] += sd[1] * gauss();
        k[0][2] += sd[2] * gauss();
        k[1][2] += sd[3] * gauss();
        let seen: Vec<[f64; 2]> = pixels
            .iter()
            .map(|p| [p[0] + file.rms_px * gauss(), p[1] + file.rms_px * gauss()])
            .collect();
        let guess = Camera {
            camera_matrix: k,
            ..nominal.clone()
        };
        let (rvec, tvec) = solve_planar_pose(&guess, &corners, &seen).ok()?;
        let solved = Camera {
            rvec,
            tvec,
            ..guess
        };
        for g in &grid {
            let px = nominal.project([g[0], g[1], 0.0])?;
            let back = super::image_to_table(&solved, px, 0.0)?;
            sq += (back[0] - g[0]).powi(2) + (back[1] - g[1]).powi(2);
            n += 1;
        }
    }
    Some((sq / n.max(1) as f64).sqrt())
}

/// Pose of a camera over the table plane from table points (z = 0) and their pixels.
pub fn solve_planar_pose(
    model: &crate::vision::Camera,
    table: &[[f64; 2]],
    image: &[[f64; 2]],
) -> Result<([f64; 3], [f64; 3]), VisionError> {
    use opencv::core::{Point2d, Point3d};
    let obj: Vector<Point3d> = table
        .iter()
        .map(|p| Point3d::new(p[0], p[1], 0.0))
        .collect();
    let img: Vector<Point2d> = image.iter().map(|p| Point2d::new(p[0], p[1])).collect();
    let k = crate::vision::cv::camera_matrix(model)?;
    let d = crate::vision::cv::distortion(model)?;
    let mut rvec = Mat::default();
    let mut tvec = Mat::default();
    calib3d::solve_pnp(
        &obj,
        &img,
        &k,
        &d,
        &mut rvec,
        &mut tvec,
        false,
        calib3d::SOLVEPNP_IPPE,
    )?;
    calib3d::solve_pnp(
        &obj,
        &img,
        &k,
        &d,
        &mut rvec,
        &mut tvec,
        true,
        calib3d::SOLVEPNP_ITERATIVE,
    )?;
    let get = |m: &Mat| -> Result<[f64; 3], opencv::Error> {
        Ok([*m.at::<f64>(0)?, *m.at::<f64>(1)?, *m.at::<f64>(2)?])
    };
    Ok((get(&rvec)?, get(&tvec)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(std_dev: [f64; 4], rms: f64) -> CameraFile {
        CameraFile {
            format: CAMERA_FORMAT.into(),
            image_size: [1920, 1080],
            camera_matrix: [[1000.0, 0.0, 960.0], [0.0, 1000.0, 540.0], [0.0, 0.0, 1.0]],
            distortion: [0.0; 5],
            rms_px: rms,
            views: 10,
            std_dev: Some(std_dev),
            table_uncertainty_mm: None,
            created: None,
            board: None,
        }
    }

    #[test]
    fn uncertainty_grows_with_the_doubt_in_the_intrinsics() {
        let layout = crate::calibration::Layout::builtin();
        let play = [914.4, 914.4];
        let sure = table_uncertainty_mm(&file([0.0; 4], 0.0), &layout, play, 1100.0).unwrap();
        assert!(sure < 1e-6, "{sure}");
        let noisy = table_uncertainty_mm(&file([0.0; 4], 0.2), &layout, play, 1100.0).unwrap();
        let doubtful =
            table_uncertainty_mm(&file([3.0, 3.0, 3.0, 3.0], 0.2), &layout, play, 1100.0).unwrap();
        // 0.2 px of corner noise at 1.1 mm per px, averaged over 16 corners: about 0.1 mm.
        assert!(noisy > 0.02 && noisy < 0.3, "{noisy}");
        assert!(doubtful > noisy, "{doubtful} vs {noisy}");
        assert!(
            table_uncertainty_mm(
                &CameraFile {
                    std_dev: None,
                    ..file([0.0; 4], 0.0)
                },
                &layout,
                play,
                1.0
            )
            .is_none()
        );
    }

    #[test]
    fn collinear_points_are_spotted() {
        assert!(in_a_line(&[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]));
        assert!(!in_a_line(&[
            [0.0, 0.0],
            [1.0, 0.0],
            [0.0, 1.0],
            [1.0, 1.0]
        ]));
    }
}

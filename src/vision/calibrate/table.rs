//! The table pose from one image of the four mat markers: with intrinsics a full camera pose
//! (solvePnP on the 16 marker corners), without them a plain homography (a phone photo).
//! Each marker's residual in mm says how well the cards agree with the layout; a missing,
//! doubled or wrongly printed marker is refused with the reason.

use super::image_to_table;
use crate::calibration::files::{TABLE_FORMAT, apply_homography};
use crate::calibration::{CameraFile, Layout, TableFile};
use crate::geometry::PlayArea;
use crate::vision::aruco::{self, Detection, Dict};
use crate::vision::edges::{Grey, refine_quad};
use crate::vision::{Camera, VisionError};
use opencv::calib3d;
use opencv::core::{Mat, Point2d, Vector};
use opencv::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error(
        "mat marker{} {} not found (found: {}); check that every card is on the table, in view and unobstructed",
        if .missing.len() > 1 { "s" } else { "" },
        list(.missing),
        if .found.is_empty() { "none".to_string() } else { list(.found) }
    )]
    Missing { missing: Vec<u32>, found: Vec<u32> },
    #[error("mat marker {0} is seen twice; only one card of each id may be on the table")]
    Duplicated(u32),
    #[error(
        "mat marker {id} measures {measured_mm:.1} mm, not {expected_mm} mm ({:+.1} %): reprint it at 100 % and check its scale bar",
        (measured_mm / expected_mm - 1.0) * 100.0
    )]
    Implausible {
        id: u32,
        measured_mm: f64,
        expected_mm: f64,
    },
    #[error(
        "the mat markers are not where the layout puts them (they measure {} against {expected_mm} mm): give the play area they lie around (--play-area standard or epic) or, for cards laid elsewhere, their layout (--layout)",
        .sides.iter().map(|(id, s)| format!("{s:.1} mm (marker {id})")).collect::<Vec<_>>().join(", ")
    )]
    Misplaced {
        sides: Vec<(u32, f64)>,
        expected_mm: f64,
    },
    #[error("the image is {} x {} but the camera calibration is for {} x {}; calibrate the camera at this resolution", .image[0], .image[1], .camera[0], .camera[1])]
    Resolution { image: [u32; 2], camera: [u32; 2] },
    #[error(transparent)]
    Vision(#[from] VisionError),
    #[error(transparent)]
    OpenCv(#[from] opencv::Error),
}

fn list(ids: &[u32]) -> String {
    ids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Largest relative error of a marker's measured side before it is refused, for a marker
/// seen large; a small one is allowed one more pixel across its side, since its corners are
/// only found to about a pixel (measured on rendered images: up to 1.2 px at 21 px wide).
pub const SCALE_TOLERANCE: f64 = 0.02;

#[derive(Clone, Debug)]
pub struct TableReport {
    pub file: TableFile,
    /// Each marker's side as measured through the fit, mm.
    pub marker_side_mm: BTreeMap<u32, f64>,
}

/// The table pose from the mat markers of `layout` seen in `image`, recorded with the play
/// area and the markers it was made for (detection then covers that play area and checks
/// later frames against those markers).
pub fn calibrate_table(
    image: &Mat,
    layout: &Layout,
    play: PlayArea,
    camera: Option<&CameraFile>,
) -> Result<TableReport, TableError> {
    let size = image.size().map_err(VisionError::from)?;
    let image_size = [size.width as u32, size.height as u32];
    if let Some(c) = camera
        && c.image_size != image_size
    {
        return Err(TableError::Resolution {
            image: image_size,
            camera: c.image_size,
        });
    }
    let dict = Dict::parse(&layout.mat_markers.dictionary)?;
    let found = detect_small_too(image, dict, layout)?;
    let markers = pick_layout_markers(&found, layout)?;

    // From here on, corners are in "ideal" pixels: undistorted through the intrinsics when
    // they are known (so that the table plane maps by a homography and marker sides are
    // straight), the image's own pixels otherwise. Each corner is refined from the marker's
    // edge lines.
    let lens = camera.map(|c| Camera {
        image_size,
        camera_matrix: c.camera_matrix,
        distortion: c.distortion,
        rvec: [0.0; 3],
        tvec: [0.0; 3],
    });
    let to_ideal = |p: [f64; 2]| -> [f64; 2] {
        match &lens {
            Some(m) => {
                let (x, y) = m.undistort((p[0] - m.cx()) / m.fx(), (p[1] - m.cy()) / m.fy());
                [x * m.fx() + m.cx(), y * m.fy() + m.cy()]
            }
            None => p,
        }
    };
    let grey = Grey::from_mat(image)?;
    let mut corners_ideal: Vec<(u32, [[f64; 2]; 4])> = Vec::new();
    for (id, d) in &markers {
        let cells = aruco::marker_bits(dict, *id as i32)?.cells;
        let refined = refine_quad(&grey, &d.corners, cells, &to_ideal)
            .unwrap_or_else(|| d.corners.map(&to_ideal));
        corners_ideal.push((*id, refined));
    }

    // Scale check, independent of any marker's size: a homography through the four marker
    // centres (where each marker's diagonals cross), then each marker's sides through it.
    let centres_img: Vec<[f64; 2]> = corners_ideal
        .iter()
        .map(|(_, c)| diagonal_crossing(c))
        .collect();
    let centres_tab: Vec<[f64; 2]> = corners_ideal
        .iter()
        .map(|(id, _)| {
            let c = layout
                .marker_corners_mm(*id)
                .expect("picked from the layout");
            [(c[0][0] + c[2][0]) / 2.0, (c[0][1] + c[2][1]) / 2.0]
        })
        .collect();
    let to_table = homography(&centres_img, &centres_tab)?;
    let mut marker_side_mm = BTreeMap::new();
    let mean_side = |q: &[[f64; 2]]| {
        (0..4)
            .map(|k| (q[k][0] - q[(k + 1) % 4][0]).hypot(q[k][1] - q[(k + 1) % 4][1]))
            .sum::<f64>()
            / 4.0
    };
    let expected = layout.mat_markers.marker_mm;
    // Off by more than the tolerance, or not measured at all.
    let beyond = |off: f64, tol: f64| off.is_nan() || off.abs() > tol;
    // Each marker's side, how square it comes out, and how far either may be off.
    let mut measured = Vec::new();
    for (id, px) in &corners_ideal {
        let t: Vec<[f64; 2]> = px
            .iter()
            .filter_map(|p| apply_homography(&to_table, p[0], p[1]))
            .collect();
        let (side, squareness) = if t.len() == 4 {
            let len = |k: usize| (t[k][0] - t[(k + 1) % 4][0]).hypot(t[k][1] - t[(k + 1) % 4][1]);
            (mean_side(&t), (len(0) + len(2)) / (len(1) + len(3)))
        } else {
            (f64::NAN, f64::NAN)
        };
        let tolerance = SCALE_TOLERANCE + 1.0 / mean_side(px).max(1.0);
        measured.push((*id, side, squareness, tolerance));
        marker_side_mm.insert(*id, side);
    }
    let off = measured
        .iter()
        .find(|(_, side, _, tol)| beyond(side / expected - 1.0, *tol));
    if let Some((id, side, _, _)) = off {
        // A card printed at the wrong scale is still square; cards laid elsewhere than the
        // layout says (around another play area, or moved) stretch the view unevenly, and
        // the markers come out as rectangles.
        if measured
            .iter()
            .any(|(_, _, sq, tol)| beyond(sq - 1.0, *tol))
        {
            return Err(TableError::Misplaced {
                sides: measured.iter().map(|m| (m.0, m.1)).collect(),
                expected_mm: expected,
            });
        }
        return Err(TableError::Implausible {
            id: *id,
            measured_mm: *side,
            expected_mm: expected,
        });
    }

    let image_pts: Vec<[f64; 2]> = corners_ideal.iter().flat_map(|(_, c)| *c).collect();
    let table_pts: Vec<[f64; 2]> = corners_ideal
        .iter()
        .flat_map(|(id, _)| {
            layout
                .marker_corners_mm(*id)
                .expect("picked from the layout")
        })
        .collect();
    let mut residuals = BTreeMap::new();
    let file = match (camera, &lens) {
        (Some(c), Some(lens)) => {
            let ideal = Camera {
                distortion: [0.0; 5],
                ..lens.clone()
            };
            let (rvec, tvec) = solve_pose(&ideal, &table_pts, &image_pts)?;
            let model = Camera {
                rvec,
                tvec,
                ..ideal
            };
            for (k, (id, c)) in corners_ideal.iter().enumerate() {
                let mut sq = 0.0;
                for (j, p) in c.iter().enumerate() {
                    let want = table_pts[4 * k + j];
                    let got = image_to_table(&model, *p, 0.0).unwrap_or([f64::INFINITY; 2]);
                    sq += (got[0] - want[0]).powi(2) + (got[1] - want[1]).powi(2);
                }
                residuals.insert(id.to_string(), (sq / 4.0).sqrt());
            }
            let _ = c;
            TableFile {
                format: TABLE_FORMAT.to_string(),
                image_size,
                rvec: Some(rvec),
                tvec: Some(tvec),
                homography: None,
                marker_residuals_mm: residuals,
                play_area: Some(play),
                mat_markers: Some(layout.mat_markers.clone()),
                created: Some(super::timestamp()),
            }
        }
        _ => {
            let h = homography(&table_pts, &image_pts)?;
            let inv = invert(&h);
            for (k, (id, c)) in corners_ideal.iter().enumerate() {
                let mut sq = 0.0;
                for (j, p) in c.iter().enumerate() {
                    let want = table_pts[4 * k + j];
                    let got = apply_homography(&inv, p[0], p[1]).unwrap_or([f64::INFINITY; 2]);
                    sq += (got[0] - want[0]).powi(2) + (got[1] - want[1]).powi(2);
                }
                residuals.insert(id.to_string(), (sq / 4.0).sqrt());
            }
            TableFile {
                format: TABLE_FORMAT.to_string(),
                image_size,
                rvec: None,
                tvec: None,
                homography: Some(h),
                marker_residuals_mm: residuals,
                play_area: Some(play),
                mat_markers: Some(layout.mat_markers.clone()),
                created: Some(super::timestamp()),
            }
        }
    };
    Ok(TableReport {
        file,
        marker_side_mm,
    })
}

/// Detects the markers, and when a layout marker is missing looks again at twice the size
/// (a card seen steeply at the far edge of a wide view can be 30 px across, with cells too
/// small for the decoder; measured: one such marker found only this way), then reads the
/// candidates' bits at finer cells (see `aruco::detect_fine`; rendered seed 117's far
/// card was found only that way). The corners are refined on the original image
/// afterwards either way.
fn detect_small_too(
    image: &Mat,
    dict: Dict,
    layout: &Layout,
) -> Result<Vec<Detection>, TableError> {
    let mut found = aruco::detect(image, dict)?;
    let missing: Vec<i32> = layout
        .mat_markers
        .markers
        .iter()
        .map(|m| m.id as i32)
        .filter(|id| !found.iter().any(|d| d.id == *id))
        .collect();
    if missing.is_empty() {
        return Ok(found);
    }
    let mut big = Mat::default();
    opencv::imgproc::resize(
        image,
        &mut big,
        opencv::core::Size::new(0, 0),
        2.0,
        2.0,
        opencv::imgproc::INTER_CUBIC,
    )?;
    for d in aruco::detect(&big, dict)? {
        if missing.contains(&d.id) {
            // Pixel centres: x_big = 2 x + 0.5.
            found.push(Detection {
                id: d.id,
                corners: d.corners.map(|p| [(p[0] - 0.5) / 2.0, (p[1] - 0.5) / 2.0]),
            });
        }
    }
    // A marker found as a square whose bits were misread: read them again, finer.
    let still: Vec<i32> = missing
        .into_iter()
        .filter(|id| !found.iter().any(|d| d.id == *id))
        .collect();
    if !still.is_empty() {
        found.extend(
            aruco::detect_fine(image, dict)?
                .into_iter()
                .filter(|d| still.contains(&d.id)),
        );
    }
    Ok(found)
}

/// The layout's markers among the detections, each exactly once, in layout order.
fn pick_layout_markers(
    found: &[Detection],
    layout: &Layout,
) -> Result<Vec<(u32, Detection)>, TableError> {
    let wanted: Vec<u32> = layout.mat_markers.markers.iter().map(|m| m.id).collect();
    let mut picked = Vec::new();
    let mut missing = Vec::new();
    for id in &wanted {
        let same: Vec<&Detection> = found.iter().filter(|d| d.id == *id as i32).collect();
        match same.len() {
            0 => missing.push(*id),
            1 => picked.push((*id, same[0].clone())),
            _ => return Err(TableError::Duplicated(*id)),
        }
    }
    if !missing.is_empty() {
        let mut seen: Vec<u32> = found
            .iter()
            .filter(|d| d.id >= 0)
            .map(|d| d.id as u32)
            .filter(|i| wanted.contains(i))
            .collect();
        seen.dedup();
        return Err(TableError::Missing {
            missing,
            found: seen,
        });
    }
    Ok(picked)
}

/// Where the diagonals of a quadrilateral cross: the image of a square's centre under any
/// perspective, unlike the corners' average.
pub(crate) fn diagonal_crossing(c: &[[f64; 2]; 4]) -> [f64; 2] {
    let (p, r) = (c[0], [c[2][0] - c[0][0], c[2][1] - c[0][1]]);
    let (q, s) = (c[1], [c[3][0] - c[1][0], c[3][1] - c[1][1]]);
    let denom = r[0] * s[1] - r[1] * s[0];
    if denom.abs() < 1e-12 {
        return [(c[0][0] + c[2][0]) / 2.0, (c[0][1] + c[2][1]) / 2.0];
    }
    let t = ((q[0] - p[0]) * s[1] - (q[1] - p[1]) * s[0]) / denom;
    [p[0] + t * r[0], p[1] + t * r[1]]
}

/// Least-squares homography from `from` to `to` (at least 4 points).
fn homography(from: &[[f64; 2]], to: &[[f64; 2]]) -> Result<[[f64; 3]; 3], TableError> {
    let a: Vector<Point2d> = from.iter().map(|p| Point2d::new(p[0], p[1])).collect();
    let b: Vector<Point2d> = to.iter().map(|p| Point2d::new(p[0], p[1])).collect();
    let mut mask = Mat::default();
    let h = calib3d::find_homography(&a, &b, &mut mask, 0, 3.0)?;
    if h.empty() {
        return Err(VisionError::Invalid(
            "the marker corners do not determine a plane (are they in a line?)".into(),
        )
        .into());
    }
    let mut out = [[0.0; 3]; 3];
    for (r, row) in out.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = *h.at_2d::<f64>(r as i32, c as i32)?;
        }
    }
    Ok(out)
}

fn invert(h: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let m = nalgebra::Matrix3::from_row_slice(&h.concat());
    let inv = m.try_inverse().unwrap_or(nalgebra::Matrix3::zeros());
    let mut out = [[0.0; 3]; 3];
    for (r, row) in out.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = inv[(r, c)];
        }
    }
    out
}

/// Camera pose from the marker corners (see `camera::solve_planar_pose`).
fn solve_pose(
    model: &Camera,
    table: &[[f64; 2]],
    image: &[[f64; 2]],
) -> Result<([f64; 3], [f64; 3]), TableError> {
    Ok(super::camera::solve_planar_pose(model, table, image)?)
}

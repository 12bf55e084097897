//! The table-to-projector mapping. The projector shows a pattern of ArUco markers at known
//! projector pixels; the calibrated camera sees them on the table, which turns each marker
//! corner into table millimetres; a homography from table mm to projector px is fitted
//! through all corners, with its residual in projector px and in mm. (A projector is a
//! pinhole onto the table plane, so a homography is its exact model, lens distortion
//! aside.) `simulate_projection` is the projector model used to test it: the pattern's
//! light added, in linear light, to a rendered photo of the empty table.

use super::image_to_table;
use crate::calibration::ProjectorFile;
use crate::calibration::files::{PROJECTOR_FORMAT, apply_homography};
use crate::vision::aruco::{self, Dict, MarkerBits};
use crate::vision::edges::{Grey, refine_quad};
use crate::vision::light::{linear_to_srgb, srgb_to_linear};
use crate::vision::{Camera, VisionError};
use opencv::calib3d;
use opencv::core::{CV_8UC1, Mat, Point2d, Scalar, Vector};
use opencv::prelude::*;

/// The dictionary of the projected markers: not the mat's, so the two never mix.
pub const PATTERN_DICTIONARY: &str = "DICT_6X6_250";

/// A grid of markers in projector pixels: dark marker cells on a lit field.
#[derive(Clone, Debug)]
pub struct Pattern {
    pub size: [u32; 2],
    /// (marker id, corners top-left first, projector px).
    pub markers: Vec<(i32, [[f64; 2]; 4])>,
    bits: Vec<MarkerBits>,
}

impl Pattern {
    /// As many markers as fit with a quiet zone around each, for a projector of `size`.
    pub fn for_size(size: [u32; 2]) -> Result<Pattern, VisionError> {
        let (w, h) = (f64::from(size[0]), f64::from(size[1]));
        if w < 200.0 || h < 150.0 {
            return Err(VisionError::Invalid(format!(
                "a {w} x {h} projector is too small for the pattern"
            )));
        }
        let side = (h / 6.0).floor();
        let pitch = side * 1.6;
        let (cols, rows) = (
            ((w - side * 0.6) / pitch).floor() as usize,
            ((h - side * 0.6) / pitch).floor() as usize,
        );
        let (x0, y0) = (
            (w - (cols as f64 * pitch - (pitch - side))) / 2.0,
            (h - (rows as f64 * pitch - (pitch - side))) / 2.0,
        );
        let dict = Dict::parse(PATTERN_DICTIONARY)?;
        let mut markers = Vec::new();
        let mut bits = Vec::new();
        for r in 0..rows {
            for c in 0..cols {
                let id = (r * cols + c) as i32;
                // Corners at pixel edges: a marker covering pixels [x, x + side) has its
                // top-left corner at x - 0.5 in pixel-centre coordinates.
                let (x, y) = (x0 + c as f64 * pitch - 0.5, y0 + r as f64 * pitch - 0.5);
                markers.push((
                    id,
                    [[x, y], [x + side, y], [x + side, y + side], [x, y + side]],
                ));
                bits.push(aruco::marker_bits(dict, id)?);
            }
        }
        Ok(Pattern {
            size,
            markers,
            bits,
        })
    }

    /// Brightness 0..1 at projector point (u, v) (pixel-centre coordinates).
    pub fn value(&self, u: f64, v: f64) -> f64 {
        for ((_, c), bits) in self.markers.iter().zip(&self.bits) {
            let (x, y) = (u - c[0][0], v - c[0][1]);
            let side = c[1][0] - c[0][0];
            if x >= 0.0 && y >= 0.0 && x < side && y < side {
                let cell = side / bits.cells as f64;
                let (col, row) = ((x / cell) as i64, (y / cell) as i64);
                return if bits.is_black(row, col) { 0.0 } else { 1.0 };
            }
        }
        1.0
    }

    /// The pattern as an 8-bit image for the projector.
    pub fn image(&self) -> Result<Mat, VisionError> {
        let (w, h) = (self.size[0] as i32, self.size[1] as i32);
        let mut img = Mat::new_rows_cols_with_default(h, w, CV_8UC1, Scalar::all(255.0))?;
        for v in 0..h {
            let row = img.at_row_mut::<u8>(v)?;
            for (u, px) in row.iter_mut().enumerate() {
                *px = (self.value(u as f64, f64::from(v)) * 255.0) as u8;
            }
        }
        Ok(img)
    }
}

/// Solves the table-to-projector homography from a camera photo of the projected pattern.
/// Only corners that land on the play area (`play` = width, height in mm) are used: the mat
/// is the flat surface the mapping is for, while around it cards, dice and trays stand
/// above the plane and would pull the fit.
pub fn calibrate_projector(
    photo: &Mat,
    pattern: &Pattern,
    camera: &Camera,
    play: [f64; 2],
) -> Result<ProjectorFile, VisionError> {
    let dict = Dict::parse(PATTERN_DICTIONARY)?;
    let found = aruco::detect(photo, dict)?;
    let grey = Grey::from_mat(photo)?;
    let cells = pattern.bits.first().map_or(8, |b| b.cells);
    let mut table_pts = Vec::new();
    let mut proj_pts = Vec::new();
    for d in &found {
        let Some((_, corners)) = pattern.markers.iter().find(|(id, _)| *id == d.id) else {
            continue;
        };
        // Edge-line corners in image px (the lines are short; the lens is handled below).
        let refined = refine_quad(&grey, &d.corners, cells, &|p| p).unwrap_or(d.corners);
        for (px, pp) in refined.iter().zip(corners) {
            if let Some(t) = image_to_table(camera, *px, 0.0)
                && (0.0..=play[0]).contains(&t[0])
                && (0.0..=play[1]).contains(&t[1])
            {
                table_pts.push(t);
                proj_pts.push(*pp);
            }
        }
    }
    if table_pts.len() < 8 {
        return Err(VisionError::Invalid(format!(
            "the camera saw {} of the {} projected markers; is the projector on, focused and aimed at the table?",
            table_pts.len() / 4,
            pattern.markers.len()
        )));
    }
    let a: Vector<Point2d> = table_pts.iter().map(|p| Point2d::new(p[0], p[1])).collect();
    let b: Vector<Point2d> = proj_pts.iter().map(|p| Point2d::new(p[0], p[1])).collect();
    let mut mask = Mat::default();
    let h = calib3d::find_homography(&a, &b, &mut mask, calib3d::RANSAC, 1.5)?;
    if h.empty() {
        return Err(VisionError::Invalid(
            "no consistent mapping from the projected markers".into(),
        ));
    }
    let mut hm = [[0.0; 3]; 3];
    for (r, row) in hm.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = *h.at_2d::<f64>(r as i32, c as i32)?;
        }
    }
    let inverse = {
        let m = nalgebra::Matrix3::from_row_slice(&hm.concat());
        m.try_inverse()
            .ok_or_else(|| VisionError::Invalid("the projector mapping is singular".into()))?
    };
    // RANSAC keeps the corners that agree; a corner on a fold of the mat or a misread edge
    // does not count, but too many of them mean the pattern was not seen properly.
    let inlier: Vec<bool> = (0..table_pts.len())
        .map(|i| mask.at::<u8>(i as i32).map(|m| *m != 0).unwrap_or(false))
        .collect();
    let kept = inlier.iter().filter(|k| **k).count();
    if kept * 4 < table_pts.len() * 3 {
        return Err(VisionError::Invalid(format!(
            "only {kept} of {} projected corners agree on one mapping; is something on the table or the projector moving?",
            table_pts.len()
        )));
    }
    let (mut sq_px, mut sq_mm) = (0.0, 0.0);
    for ((t, p), _) in table_pts
        .iter()
        .zip(&proj_pts)
        .zip(&inlier)
        .filter(|(_, k)| **k)
    {
        let q = apply_homography(&hm, t[0], t[1]).unwrap_or([f64::INFINITY; 2]);
        sq_px += (q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2);
        let v = inverse * nalgebra::Vector3::new(p[0], p[1], 1.0);
        sq_mm += (v.x / v.z - t[0]).powi(2) + (v.y / v.z - t[1]).powi(2);
    }
    let n = kept as f64;
    Ok(ProjectorFile {
        format: PROJECTOR_FORMAT.to_string(),
        size: pattern.size,
        homography: hm,
        residual_px: (sq_px / n).sqrt(),
        residual_mm: (sq_mm / n).sqrt(),
        created: Some(super::timestamp()),
    })
}

/// The projector model for tests: the pattern's light, through `table_to_projector`, added
/// to a photo of the empty table as the camera would see it (linear light: what is lit
/// becomes `1 + gain` times brighter, plus a little spill), with the projector's slight
/// defocus.
pub fn simulate_projection(
    photo: &Mat,
    camera: &Camera,
    pattern: &Pattern,
    table_to_projector: &[[f64; 3]; 3],
    gain: f64,
) -> Result<Mat, VisionError> {
    let size = photo.size()?;
    let mut out = photo.try_clone()?;
    let lin = |v: u8| srgb_to_linear(f64::from(v) / 255.0);
    let enc = |l: f64| (linear_to_srgb(l) * 255.0).round() as u8;
    let channels = photo.channels() as usize;
    let width = size.width as usize;
    if !out.is_continuous() || out.depth() != opencv::core::CV_8U {
        return Err(VisionError::Invalid(
            "the photo must be an 8-bit image".into(),
        ));
    }
    let bytes = out.data_bytes_mut()?;
    for v in 0..size.height {
        let row = &mut bytes[v as usize * width * channels..(v as usize + 1) * width * channels];
        for u in 0..width {
            let Some(t) = image_to_table(camera, [u as f64, f64::from(v)], 0.0) else {
                continue;
            };
            let Some(p) = apply_homography(table_to_projector, t[0], t[1]) else {
                continue;
            };
            if p[0] < -0.5
                || p[1] < -0.5
                || p[0] > f64::from(pattern.size[0]) - 0.5
                || p[1] > f64::from(pattern.size[1]) - 0.5
            {
                continue;
            }
            // Defocus: average a few taps around the point (about 0.6 projector px).
            let mut light = 0.0;
            for (du, dv) in [(-0.3, -0.3), (0.3, -0.3), (-0.3, 0.3), (0.3, 0.3)] {
                light += pattern.value(p[0] + du, p[1] + dv) / 4.0;
            }
            for ch in 0..channels {
                let i = u * channels + ch;
                let l = lin(row[i]);
                row[i] = enc(l * (1.0 + gain * light) + 0.02 * gain * light);
            }
        }
    }
    Ok(out)
}

//! What differs from the bare mat, in the coarse top-down view: with a photograph of the
//! empty table, the difference from it after matching the light (a smooth gain per colour
//! channel, estimated robustly cell by cell so that the tokens themselves do not bend it);
//! without one, the difference from a wide median of the view itself (the mat's art is
//! smooth at the scale of a token, apart from stars, which the opening removes).

use crate::vision::VisionError;
use opencv::core::{self, BORDER_DEFAULT, Mat, Point, Scalar, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// Cells (view pixels) of the light match.
const CELL: i32 = 8;

/// Per-pixel difference from the expected bare mat (0..255, the largest over the channels).
pub fn difference(ortho: &Mat, background: Option<&Mat>) -> Result<Mat, VisionError> {
    let size = ortho.size()?;
    if let Some(bg) = background {
        return relit_difference(ortho, bg);
    }
    let mut small = Mat::default();
    let s = Size::new((size.width / 4).max(1), (size.height / 4).max(1));
    imgproc::resize(ortho, &mut small, s, 0.0, 0.0, imgproc::INTER_AREA)?;
    let mut med = Mat::default();
    imgproc::median_blur(&small, &mut med, 13)?;
    let mut expected = Mat::default();
    imgproc::resize(&med, &mut expected, size, 0.0, 0.0, imgproc::INTER_LINEAR)?;
    let mut out =
        Mat::new_rows_cols_with_default(size.height, size.width, core::CV_8UC1, Scalar::all(0.0))?;
    for r in 0..size.height {
        let (f, e) = (
            ortho.at_row::<core::Vec3b>(r)?,
            expected.at_row::<core::Vec3b>(r)?,
        );
        let o = out.at_row_mut::<u8>(r)?;
        for (c, slot) in o.iter_mut().enumerate() {
            // The middle of the three channel differences: the tokens' faces are far less
            // saturated than the mat's art, so they differ from it in every channel, where a
            // nebula's edge or a planet's limb differs mostly in one or two.
            let mut d = [0, 1, 2].map(|k| f[c][k].abs_diff(e[c][k]));
            d.sort_unstable();
            *slot = d[1];
        }
    }
    Ok(out)
}

/// The difference from the background brought to the frame's light: bg * gain, the gain
/// per channel a median of cell ratios over 7 x 7 cells, interpolated between cells.
fn relit_difference(ortho: &Mat, bg: &Mat) -> Result<Mat, VisionError> {
    let size = ortho.size()?;
    let s = Size::new((size.width / CELL).max(1), (size.height / CELL).max(1));
    let (mut fs, mut bs) = (Mat::default(), Mat::default());
    imgproc::resize(ortho, &mut fs, s, 0.0, 0.0, imgproc::INTER_AREA)?;
    imgproc::resize(bg, &mut bs, s, 0.0, 0.0, imgproc::INTER_AREA)?;
    let (w, h) = (s.width as usize, s.height as usize);
    let mut ratio = vec![[1.0f32; 3]; w * h];
    for r in 0..h {
        let (fr, br) = (
            fs.at_row::<core::Vec3b>(r as i32)?,
            bs.at_row::<core::Vec3b>(r as i32)?,
        );
        for c in 0..w {
            for k in 0..3 {
                // Unseen cells (black in both) keep a gain of one.
                ratio[r * w + c][k] = (f32::from(fr[c][k]) + 6.0) / (f32::from(br[c][k]) + 6.0);
            }
        }
    }
    const R: usize = 3;
    let mut gain = vec![[1.0f32; 3]; w * h];
    let mut window: Vec<f32> = Vec::with_capacity((2 * R + 1) * (2 * R + 1));
    for r in 0..h {
        for c in 0..w {
            for k in 0..3 {
                window.clear();
                for rr in r.saturating_sub(R)..(r + R + 1).min(h) {
                    for cc in c.saturating_sub(R)..(c + R + 1).min(w) {
                        window.push(ratio[rr * w + cc][k]);
                    }
                }
                let mid = window.len() / 2;
                window.select_nth_unstable_by(mid, f32::total_cmp);
                gain[r * w + c][k] = window[mid];
            }
        }
    }
    let mut out =
        Mat::new_rows_cols_with_default(size.height, size.width, core::CV_8UC1, Scalar::all(0.0))?;
    let cell = CELL as f32;
    for r in 0..size.height {
        let (f, b) = (
            ortho.at_row::<core::Vec3b>(r)?,
            bg.at_row::<core::Vec3b>(r)?,
        );
        let o = out.at_row_mut::<u8>(r)?;
        // Cell centres sit at (i + 0.5) * CELL - 0.5 view pixels.
        let gy = ((r as f32 + 0.5) / cell - 0.5).clamp(0.0, (h - 1) as f32);
        let (j0, fy) = (gy as usize, gy.fract());
        let j1 = (j0 + 1).min(h - 1);
        for (c, slot) in o.iter_mut().enumerate() {
            let gx = ((c as f32 + 0.5) / cell - 0.5).clamp(0.0, (w - 1) as f32);
            let (i0, fx) = (gx as usize, gx.fract());
            let i1 = (i0 + 1).min(w - 1);
            let mut worst = 0f32;
            for k in 0..3 {
                let g = (gain[j0 * w + i0][k] * (1.0 - fx) + gain[j0 * w + i1][k] * fx)
                    * (1.0 - fy)
                    + (gain[j1 * w + i0][k] * (1.0 - fx) + gain[j1 * w + i1][k] * fx) * fy;
                let d = (f32::from(f[c][k]) - g * f32::from(b[c][k])).abs();
                worst = worst.max(d);
            }
            *slot = worst.min(255.0) as u8;
        }
    }
    Ok(out)
}

/// A connected region of the foreground: its outer contour (view pixels) and area (px).
pub struct Region {
    pub contour: Vec<[f64; 2]>,
    pub area_px: f64,
    pub centroid: [f64; 2],
    /// Mean difference inside (0..255).
    pub contrast: f64,
}

/// Thresholds the difference, removes specks (stars) and ship areas, fills holes, and
/// returns the outer regions of `min_px..max_px` pixels.
pub fn regions(
    diff: &Mat,
    threshold: f64,
    excluded: &Mat,
    min_px: f64,
    max_px: f64,
) -> Result<Vec<Region>, VisionError> {
    let mut bin = Mat::default();
    imgproc::threshold(diff, &mut bin, threshold, 255.0, imgproc::THRESH_BINARY)?;
    let mut keep = Mat::default();
    core::bitwise_not(excluded, &mut keep, &core::no_array())?;
    let mut masked = Mat::default();
    core::bitwise_and(&bin, &keep, &mut masked, &core::no_array())?;
    let k3 = imgproc::get_structuring_element(
        imgproc::MORPH_ELLIPSE,
        Size::new(3, 3),
        Point::new(-1, -1),
    )?;
    let mut closed = Mat::default();
    imgproc::morphology_ex(
        &masked,
        &mut closed,
        imgproc::MORPH_CLOSE,
        &k3,
        Point::new(-1, -1),
        2,
        core::BORDER_CONSTANT,
        Scalar::all(0.0),
    )?;
    let mut opened = Mat::default();
    imgproc::morphology_ex(
        &closed,
        &mut opened,
        imgproc::MORPH_OPEN,
        &k3,
        Point::new(-1, -1),
        1,
        core::BORDER_CONSTANT,
        Scalar::all(0.0),
    )?;
    let mut contours: Vector<Vector<Point>> = Vector::new();
    imgproc::find_contours(
        &opened,
        &mut contours,
        imgproc::RETR_EXTERNAL,
        imgproc::CHAIN_APPROX_NONE,
        Point::new(0, 0),
    )?;
    let mut out = Vec::new();
    for c in contours.iter() {
        let area = imgproc::contour_area(&c, false)?;
        if area < min_px || area > max_px {
            continue;
        }
        let m = imgproc::moments(&c, false)?;
        if m.m00 <= 0.0 {
            continue;
        }
        let rect = imgproc::bounding_rect(&c)?;
        let roi = Mat::roi(diff, rect)?;
        let mut fill = Mat::zeros(rect.height, rect.width, core::CV_8UC1)?.to_mat()?;
        let mut shifted: Vector<Vector<Point>> = Vector::new();
        shifted.push(
            c.iter()
                .map(|p| Point::new(p.x - rect.x, p.y - rect.y))
                .collect(),
        );
        imgproc::draw_contours(
            &mut fill,
            &shifted,
            -1,
            Scalar::all(255.0),
            -1,
            imgproc::LINE_8,
            &core::no_array(),
            i32::MAX,
            Point::new(0, 0),
        )?;
        let contrast = core::mean(&roi, &fill)?[0];
        out.push(Region {
            contour: c.iter().map(|p| [f64::from(p.x), f64::from(p.y)]).collect(),
            area_px: area,
            centroid: [m.m10 / m.m00, m.m01 / m.m00],
            contrast,
        });
    }
    let _ = BORDER_DEFAULT;
    Ok(out)
}

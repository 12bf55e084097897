//! What differs from the bare mat, in the coarse top-down view: with a photograph of the
//! empty table, the difference from it after matching the light (a smooth gain per colour
//! channel, estimated robustly cell by cell so that the tokens themselves do not bend it);
//! without one, the difference from a wide median of the view itself (the mat's art is
//! smooth at the scale of a token, apart from stars, which the opening removes).

use crate::vision::VisionError;
use crate::vision::cv::disc_kernel;
use opencv::core::{self, Mat, Point, Scalar, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// Cells (view pixels) of the light match.
const CELL: i32 = 8;
/// Brightness (sRGB max channel) above which a loss of chroma against the mat counts.
const GREY_MIN_VALUE: u8 = 60;

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
            // A grey token on a coloured nebula differs from it in one channel only, but
            // it is far less colourful than the art it lies on: the loss of chroma counts
            // too (where the pixel is not dark, as the bare space between nebulae is).
            let (fmax, fmin) = (f[c].0.iter().max(), f[c].0.iter().min());
            let (emax, emin) = (e[c].0.iter().max(), e[c].0.iter().min());
            if let (Some(&fx), Some(&fn_), Some(&ex), Some(&en)) = (fmax, fmin, emax, emin)
                && fx >= GREY_MIN_VALUE
            {
                let lost = (ex - en).saturating_sub(fx - fn_);
                *slot = (*slot).max(lost);
            }
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

/// Thresholds the difference (grown from `threshold` down to `low` where it is lower),
/// removes specks (stars) and ship areas, fills holes, and
/// returns the outer regions of `min_px..max_px` pixels.
pub fn regions(
    diff: &Mat,
    threshold: f64,
    low: f64,
    excluded: &Mat,
    min_px: f64,
    max_px: f64,
) -> Result<Vec<Region>, VisionError> {
    let mut bin = Mat::default();
    imgproc::threshold(diff, &mut bin, threshold, 255.0, imgproc::THRESH_BINARY)?;
    if low < threshold {
        bin = hysteresis(diff, &bin, low)?;
    }
    let mut keep = Mat::default();
    core::bitwise_not(excluded, &mut keep, &core::no_array())?;
    let mut masked = Mat::default();
    core::bitwise_and(&bin, &keep, &mut masked, &core::no_array())?;
    let k3 = disc_kernel(3)?;
    let closed = morph(&masked, imgproc::MORPH_CLOSE, &k3, 2)?;
    let opened = morph(&closed, imgproc::MORPH_OPEN, &k3, 1)?;
    let mut out = Vec::new();
    for Blob {
        contour: c,
        area_px,
        centroid,
    } in outer_contours(&opened, min_px, max_px)?
    {
        let rect = imgproc::bounding_rect(&c)?;
        let roi = Mat::roi(diff, rect)?;
        let mut fill = Mat::zeros(rect.height, rect.width, core::CV_8UC1)?.to_mat()?;
        let shifted: Vector<Point> = c
            .iter()
            .map(|p| Point::new(p.x - rect.x, p.y - rect.y))
            .collect();
        draw(&mut fill, shifted, -1)?;
        let contrast = core::mean(&roi, &fill)?[0];
        out.push(Region {
            contour: c.iter().map(|p| [f64::from(p.x), f64::from(p.y)]).collect(),
            area_px,
            centroid,
            contrast,
        });
    }
    Ok(out)
}

/// An outer contour of a mask, with its area and centroid (pixels).
struct Blob {
    contour: Vector<Point>,
    area_px: f64,
    centroid: [f64; 2],
}

/// The outer contours of a binary mask whose area is `min_px..=max_px`.
fn outer_contours(mask: &Mat, min_px: f64, max_px: f64) -> Result<Vec<Blob>, VisionError> {
    let mut contours: Vector<Vector<Point>> = Vector::new();
    imgproc::find_contours(
        mask,
        &mut contours,
        imgproc::RETR_EXTERNAL,
        imgproc::CHAIN_APPROX_NONE,
        Point::new(0, 0),
    )?;
    let mut out = Vec::new();
    for c in contours {
        let area = imgproc::contour_area(&c, false)?;
        if area < min_px || area > max_px {
            continue;
        }
        let m = imgproc::moments(&c, false)?;
        if m.m00 <= 0.0 {
            continue;
        }
        out.push(Blob {
            contour: c,
            area_px: area,
            centroid: [m.m10 / m.m00, m.m01 / m.m00],
        });
    }
    Ok(out)
}

/// Draws one contour in white, filled (`thickness` -1) or as a line.
fn draw(mask: &mut Mat, contour: Vector<Point>, thickness: i32) -> Result<(), VisionError> {
    let mut one: Vector<Vector<Point>> = Vector::new();
    one.push(contour);
    imgproc::draw_contours(
        mask,
        &one,
        -1,
        Scalar::all(255.0),
        thickness,
        imgproc::LINE_8,
        &core::no_array(),
        i32::MAX,
        Point::new(0, 0),
    )?;
    Ok(())
}

/// The pixels above `low` connected to a pixel of `strong`: a faint token's whole face
/// grows from its clearer parts, where a low threshold alone would take in the art too.
fn hysteresis(diff: &Mat, strong: &Mat, low: f64) -> Result<Mat, VisionError> {
    let mut weak = Mat::default();
    imgproc::threshold(diff, &mut weak, low, 255.0, imgproc::THRESH_BINARY)?;
    let mut labels = Mat::default();
    let n = imgproc::connected_components(&weak, &mut labels, 8, core::CV_32S)?;
    let mut keep = vec![false; n.max(1) as usize];
    let size = diff.size()?;
    for r in 0..size.height {
        let (l, s) = (labels.at_row::<i32>(r)?, strong.at_row::<u8>(r)?);
        for (lab, st) in l.iter().zip(s) {
            if *st > 0 && *lab > 0 {
                keep[*lab as usize] = true;
            }
        }
    }
    let mut out =
        Mat::new_rows_cols_with_default(size.height, size.width, core::CV_8UC1, Scalar::all(0.0))?;
    for r in 0..size.height {
        let l = labels.at_row::<i32>(r)?.to_vec();
        let o = out.at_row_mut::<u8>(r)?;
        for (slot, lab) in o.iter_mut().zip(l) {
            if lab > 0 && keep[lab as usize] {
                *slot = 255;
            }
        }
    }
    Ok(out)
}

/// The parts a region falls into when opened by a disc of `radius` pixels: a token that
/// touches a nebula's or a planet's edge is one region with it, joined by a neck narrower
/// than either. Each part keeps `real` flags: whether each of its boundary points lies on
/// the region's own boundary (within 1.5 pixels) rather than on a cut the opening made.
pub fn split(
    region: &Region,
    radius: i32,
    min_px: f64,
    max_px: f64,
) -> Result<Vec<(Region, Vec<bool>)>, VisionError> {
    let contour: Vector<Point> = region
        .contour
        .iter()
        .map(|p| Point::new(p[0] as i32, p[1] as i32))
        .collect();
    let pad = radius + 2;
    let rect = imgproc::bounding_rect(&contour)?;
    let (w, h) = (rect.width + 2 * pad, rect.height + 2 * pad);
    let shift = Point::new(pad - rect.x, pad - rect.y);
    let local: Vector<Point> = contour.iter().map(|p| p + shift).collect();
    let mut fill = Mat::zeros(h, w, core::CV_8UC1)?.to_mat()?;
    draw(&mut fill, local.clone(), -1)?;
    let mut edge = Mat::zeros(h, w, core::CV_8UC1)?.to_mat()?;
    draw(&mut edge, local, 3)?;
    let opened = morph(&fill, imgproc::MORPH_OPEN, &disc_kernel(2 * radius + 1)?, 1)?;
    let mut out = Vec::new();
    for Blob {
        contour: c,
        area_px,
        centroid,
    } in outer_contours(&opened, min_px, max_px)?
    {
        let real = c
            .iter()
            .map(|p| edge.at_2d::<u8>(p.y, p.x).is_ok_and(|v| *v > 0))
            .collect();
        let back = |x: f64, y: f64| [x - f64::from(shift.x), y - f64::from(shift.y)];
        out.push((
            Region {
                contour: c
                    .iter()
                    .map(|p| back(f64::from(p.x), f64::from(p.y)))
                    .collect(),
                area_px,
                centroid: back(centroid[0], centroid[1]),
                contrast: region.contrast,
            },
            real,
        ));
    }
    Ok(out)
}

/// A morphological operation `iterations` times, with nothing beyond the image's border
/// (a region touching the view's edge is eroded there, not extended).
fn morph(src: &Mat, op: i32, kernel: &Mat, iterations: i32) -> Result<Mat, VisionError> {
    let mut out = Mat::default();
    imgproc::morphology_ex(
        src,
        &mut out,
        op,
        kernel,
        Point::new(-1, -1),
        iterations,
        core::BORDER_CONSTANT,
        Scalar::all(0.0),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The outline (view pixels) of two 40 x 40 squares joined by a 10-pixel neck.
    fn dumbbell() -> Region {
        let mut m = Mat::zeros(100, 140, core::CV_8UC1)
            .unwrap()
            .to_mat()
            .unwrap();
        for (x, y, w, h) in [(10, 20, 40, 40), (90, 20, 40, 40), (50, 35, 40, 10)] {
            imgproc::rectangle(
                &mut m,
                core::Rect::new(x, y, w, h),
                Scalar::all(255.0),
                -1,
                imgproc::LINE_8,
                0,
            )
            .unwrap();
        }
        let mut contours: Vector<Vector<Point>> = Vector::new();
        imgproc::find_contours(
            &m,
            &mut contours,
            imgproc::RETR_EXTERNAL,
            imgproc::CHAIN_APPROX_NONE,
            Point::new(0, 0),
        )
        .unwrap();
        assert_eq!(contours.len(), 1);
        let c = contours.get(0).unwrap();
        Region {
            contour: c.iter().map(|p| [f64::from(p.x), f64::from(p.y)]).collect(),
            area_px: imgproc::contour_area(&c, false).unwrap(),
            centroid: [70.0, 40.0],
            contrast: 50.0,
        }
    }

    #[test]
    fn a_neck_splits_a_region_in_two() {
        let parts = split(&dumbbell(), 6, 400.0, 4000.0).unwrap();
        assert_eq!(
            parts.len(),
            2,
            "{:?}",
            parts.iter().map(|p| p.0.area_px).collect::<Vec<_>>()
        );
        for (part, own) in &parts {
            // Each square keeps about its own area and centre.
            assert!((part.area_px - 1521.0).abs() < 80.0, "{}", part.area_px);
            assert!((part.centroid[1] - 39.5).abs() < 1.5, "{:?}", part.centroid);
            assert!(
                [29.5, 109.5]
                    .iter()
                    .any(|x| (part.centroid[0] - x).abs() < 2.0)
            );
            // Most of its boundary is the region's own; where the neck was cut it is not.
            let real = own.iter().filter(|r| **r).count() as f64 / own.len() as f64;
            assert!((0.85..0.99).contains(&real), "{real}");
        }
    }

    #[test]
    fn a_region_without_a_neck_stays_whole() {
        let whole = dumbbell();
        // Opened by a disc wider than a square, nothing is left; by one narrower than the
        // neck, the region stays one part, all of its boundary its own.
        assert!(split(&whole, 21, 400.0, 4000.0).unwrap().is_empty());
        let parts = split(&whole, 3, 400.0, 8000.0).unwrap();
        assert_eq!(parts.len(), 1);
        assert!(parts[0].1.iter().all(|r| *r));
    }
}

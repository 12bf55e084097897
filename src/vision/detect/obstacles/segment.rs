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
            let mut expected = [0f32; 3];
            for (k, e) in expected.iter_mut().enumerate() {
                let g = (gain[j0 * w + i0][k] * (1.0 - fx) + gain[j0 * w + i1][k] * fx)
                    * (1.0 - fy)
                    + (gain[j1 * w + i0][k] * (1.0 - fx) + gain[j1 * w + i1][k] * fx) * fy;
                *e = g * f32::from(b[c][k]);
                let d = (f32::from(f[c][k]) - *e).abs();
                worst = worst.max(d);
            }
            if is_shadow(f[c].0, expected) {
                worst = 0.0;
            }
            *slot = worst.min(255.0) as u8;
        }
    }
    Ok(out)
}

/// Whether a pixel is the mat in a miniature's shadow: darker than the relit background
/// by about the same ratio in every channel (a shadow dims the light, not the colour),
/// where the mat is bright enough for its colour to say so. A shadow on a pink planet was
/// fitted as a standard asteroid with the empty-table frame (seed 113, test
/// `a_miniatures_shadow_is_not_an_obstacle`); a token differs from the mat in colour, or
/// lies on it brighter. On the four rendered sets this changed nothing else (outlines by
/// 0.01 mm on three tables).
fn is_shadow(f: [u8; 3], expected: [f32; 3]) -> bool {
    let emax = expected.iter().copied().fold(0.0, f32::max);
    if emax < SHADOW_MIN_VALUE {
        return false;
    }
    let r = [0, 1, 2].map(|k| (f32::from(f[k]) + 6.0) / (expected[k] + 6.0));
    let (lo, hi) = (
        r.iter().copied().fold(f32::INFINITY, f32::min),
        r.iter().copied().fold(0.0, f32::max),
    );
    hi < SHADOW_MAX_RATIO && hi - lo < SHADOW_SPREAD
}

/// The mat's brightest channel (sRGB, 0-255) below which its colour says too little.
const SHADOW_MIN_VALUE: f32 = 40.0;
/// A shadow leaves at most this share of the light in every channel...
const SHADOW_MAX_RATIO: f32 = 0.92;
/// ...and the channels' shares differ by less than this.
const SHADOW_SPREAD: f32 = 0.1;

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
        let contrast = mean_inside(diff, &c)?[0];
        out.push(Region {
            contour: c.iter().map(|p| [f64::from(p.x), f64::from(p.y)]).collect(),
            area_px,
            centroid,
            contrast,
        });
    }
    Ok(out)
}

/// The mean colour (B, G, R) of the view inside a region.
pub fn mean_colour(ortho: &Mat, region: &Region) -> Result<[f64; 3], VisionError> {
    let c: Vector<Point> = region
        .contour
        .iter()
        .map(|p| Point::new(p[0].round() as i32, p[1].round() as i32))
        .collect();
    let m = mean_inside(ortho, &c)?;
    Ok([m[0], m[1], m[2]])
}

/// The mean of `image` over the inside of the contour `c` (its pixels).
fn mean_inside(image: &Mat, c: &Vector<Point>) -> Result<Scalar, VisionError> {
    let rect = imgproc::bounding_rect(c)?;
    let roi = Mat::roi(image, rect)?;
    let mut fill = Mat::zeros(rect.height, rect.width, core::CV_8UC1)?.to_mat()?;
    let shifted: Vector<Point> = c
        .iter()
        .map(|p| Point::new(p.x - rect.x, p.y - rect.y))
        .collect();
    draw(&mut fill, shifted, -1)?;
    Ok(core::mean(&roi, &fill)?)
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
    let local = Local::of(region, radius + 2)?;
    let mut edge = Mat::zeros(local.fill.rows(), local.fill.cols(), core::CV_8UC1)?.to_mat()?;
    draw(&mut edge, local.contour.clone(), 3)?;
    let opened = morph(
        &local.fill,
        imgproc::MORPH_OPEN,
        &disc_kernel(2 * radius + 1)?,
        1,
    )?;
    Ok(outer_contours(&opened, min_px, max_px)?
        .into_iter()
        .map(|blob| {
            let real = blob
                .contour
                .iter()
                .map(|p| edge.at_2d::<u8>(p.y, p.x).is_ok_and(|v| *v > 0))
                .collect();
            local.part(&blob, region, real)
        })
        .collect())
}

/// A region drawn filled in a mask of its own, `pad` pixels around its box (so that
/// morphology there neither runs into the box's edge nor reaches past the mask).
struct Local {
    fill: Mat,
    contour: Vector<Point>,
    /// From the view's pixels to the mask's.
    shift: Point,
}

impl Local {
    fn of(region: &Region, pad: i32) -> Result<Local, VisionError> {
        let contour: Vector<Point> = region
            .contour
            .iter()
            .map(|p| Point::new(p[0] as i32, p[1] as i32))
            .collect();
        let rect = imgproc::bounding_rect(&contour)?;
        let (w, h) = (rect.width + 2 * pad, rect.height + 2 * pad);
        let shift = Point::new(pad - rect.x, pad - rect.y);
        let contour: Vector<Point> = contour.iter().map(|p| p + shift).collect();
        let mut fill = Mat::zeros(h, w, core::CV_8UC1)?.to_mat()?;
        draw(&mut fill, contour.clone(), -1)?;
        Ok(Local {
            fill,
            contour,
            shift,
        })
    }

    /// A part of the region found in the mask, back in the view's pixels.
    fn part(&self, blob: &Blob, region: &Region, real: Vec<bool>) -> (Region, Vec<bool>) {
        let back = |x: f64, y: f64| [x - f64::from(self.shift.x), y - f64::from(self.shift.y)];
        (
            Region {
                contour: blob
                    .contour
                    .iter()
                    .map(|p| back(f64::from(p.x), f64::from(p.y)))
                    .collect(),
                area_px: blob.area_px,
                centroid: back(blob.centroid[0], blob.centroid[1]),
                contrast: region.contrast,
            },
            real,
        )
    }
}

/// The parts of a region that are much less colourful than the rest of it: a grey token
/// that lies across a planet's limb or a nebula's edge is one region with the art, joined
/// along a whole side rather than by a neck that an opening could cut (seed 9's asteroid on
/// a planet's rim: a region of 4000 mm2 where the token is 1100). The region's lit pixels
/// are divided in two by their saturation (Otsu's threshold), and only when the two
/// classes differ clearly (a token is grey where the art is coloured) are the grey ones
/// its parts. The line between grey and colour is an edge of the token, so every boundary
/// point of a part counts as real.
pub fn grey_parts(
    region: &Region,
    ortho: &Mat,
    min_px: f64,
    max_px: f64,
) -> Result<Vec<(Region, Vec<bool>)>, VisionError> {
    // A margin around the region, so that the morphology below does not erode a part
    // where it touches the region's bounding box.
    let local = Local::of(region, 3)?;
    let (fill, shift) = (&local.fill, local.shift);
    let (w, h) = (fill.cols(), fill.rows());
    let size = ortho.size()?;
    // Saturation (max - min) / max of every lit pixel of the region (dark pixels, the bare
    // space between the art, have no colour to tell).
    let mut sat = vec![-1f32; (w * h) as usize];
    let mut hist = [0u32; SAT_BINS];
    for r in 0..h {
        let vr = r - shift.y;
        if vr < 0 || vr >= size.height {
            continue;
        }
        let (row, inside) = (ortho.at_row::<core::Vec3b>(vr)?, fill.at_row::<u8>(r)?);
        for c in 0..w {
            let vc = c - shift.x;
            if vc < 0 || vc >= size.width || inside[c as usize] == 0 {
                continue;
            }
            let p = row[vc as usize];
            if let (Some(&mx), Some(&mn)) = (p.0.iter().max(), p.0.iter().min())
                && mx >= GREY_MIN_VALUE
            {
                let s = f32::from(mx - mn) / f32::from(mx);
                sat[(r * w + c) as usize] = s;
                hist[((s * SAT_BINS as f32) as usize).min(SAT_BINS - 1)] += 1;
            }
        }
    }
    let Some((t, low_mean, high_mean)) = otsu(&hist) else {
        return Ok(Vec::new());
    };
    if high_mean - low_mean < GREY_SEPARATION {
        return Ok(Vec::new());
    }
    let mut grey = Mat::zeros(h, w, core::CV_8UC1)?.to_mat()?;
    for r in 0..h {
        let g = grey.at_row_mut::<u8>(r)?;
        for (c, slot) in g.iter_mut().enumerate() {
            let s = sat[r as usize * w as usize + c];
            if s >= 0.0 && s < t {
                *slot = 255;
            }
        }
    }
    // Stars and the art's grey specks go; a token's face stays whole.
    let k3 = disc_kernel(3)?;
    let cleaned = morph(
        &morph(&grey, imgproc::MORPH_CLOSE, &k3, 1)?,
        imgproc::MORPH_OPEN,
        &k3,
        1,
    )?;
    Ok(outer_contours(&cleaned, min_px, max_px)?
        .into_iter()
        .map(|blob| {
            let real = vec![true; blob.contour.len()];
            local.part(&blob, region, real)
        })
        .collect())
}

/// Saturation histogram bins.
const SAT_BINS: usize = 64;
/// How far apart (in saturation, 0..1) the grey and the coloured class's means must be for
/// the region to be a grey token against coloured art: the rendered planet's face is about
/// 0.3 and its rocks under 0.1.
const GREY_SEPARATION: f64 = 0.15;

/// Otsu's threshold of a histogram over 0..1: the threshold (a bin's lower edge) and the
/// two classes' means; `None` when one class would be empty.
fn otsu(hist: &[u32]) -> Option<(f32, f64, f64)> {
    let n = hist.len();
    let centre = |i: usize| (i as f64 + 0.5) / n as f64;
    let total: f64 = hist.iter().map(|h| f64::from(*h)).sum();
    let sum: f64 = hist
        .iter()
        .enumerate()
        .map(|(i, h)| f64::from(*h) * centre(i))
        .sum();
    let (mut w0, mut s0) = (0.0, 0.0);
    let mut best: Option<(f64, usize, f64, f64)> = None;
    for (i, h) in hist.iter().enumerate().take(n - 1) {
        w0 += f64::from(*h);
        s0 += f64::from(*h) * centre(i);
        let w1 = total - w0;
        if w0 == 0.0 || w1 == 0.0 {
            continue;
        }
        let (m0, m1) = (s0 / w0, (sum - s0) / w1);
        let between = w0 * w1 * (m0 - m1).powi(2);
        if best.is_none_or(|b| between > b.0) {
            best = Some((between, i + 1, m0, m1));
        }
    }
    best.map(|(_, i, m0, m1)| (i as f32 / n as f32, m0, m1))
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

/// Where the view's colour changes sharply (255), the largest gradient over the three
/// channels above `min_gradient` (grey levels per view pixel, after a light blur).
pub fn edges(ortho: &Mat, min_gradient: f64) -> Result<Mat, VisionError> {
    let mut blurred = Mat::default();
    imgproc::gaussian_blur_def(ortho, &mut blurred, Size::new(3, 3), 0.8)?;
    let mut channels: Vector<Mat> = Vector::new();
    core::split(&blurred, &mut channels)?;
    let size = ortho.size()?;
    let mut best =
        Mat::new_rows_cols_with_default(size.height, size.width, core::CV_32FC1, Scalar::all(0.0))?;
    for ch in channels {
        let (mut gx, mut gy) = (Mat::default(), Mat::default());
        imgproc::sobel_def(&ch, &mut gx, core::CV_32F, 1, 0)?;
        imgproc::sobel_def(&ch, &mut gy, core::CV_32F, 0, 1)?;
        let mut mag = Mat::default();
        core::magnitude(&gx, &gy, &mut mag)?;
        let mut m = Mat::default();
        core::max(&best, &mag, &mut m)?;
        best = m;
    }
    // Sobel's kernel answers a step of h grey levels with 4 h (1-2-1 across it).
    let mut out = Mat::default();
    imgproc::threshold(
        &best,
        &mut out,
        4.0 * min_gradient,
        255.0,
        imgproc::THRESH_BINARY,
    )?;
    let mut out8 = Mat::default();
    out.convert_to(&mut out8, core::CV_8U, 1.0, 0.0)?;
    Ok(out8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shadow_dims_every_channel_alike() {
        // A pink mat at half its light (the same share in every channel): a shadow.
        assert!(is_shadow([100, 50, 80], [200.0, 100.0, 160.0]));
        // A grey token on the pink mat is darker too, but not alike in every channel.
        assert!(!is_shadow([90, 90, 90], [200.0, 100.0, 160.0]));
        // Brighter than the mat, or on a mat too dark to show its colour: not a shadow.
        assert!(!is_shadow([230, 115, 184], [200.0, 100.0, 160.0]));
        assert!(!is_shadow([10, 10, 12], [30.0, 28.0, 33.0]));
    }

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

    /// The region (view pixels) of everything brighter than the mat in a BGR view.
    fn lit_region(view: &Mat) -> Region {
        let mut grey = Mat::default();
        imgproc::cvt_color_def(view, &mut grey, imgproc::COLOR_BGR2GRAY).unwrap();
        let mut bin = Mat::default();
        imgproc::threshold(&grey, &mut bin, 40.0, 255.0, imgproc::THRESH_BINARY).unwrap();
        let blobs = outer_contours(&bin, 100.0, 1e6).unwrap();
        assert_eq!(blobs.len(), 1);
        let b = &blobs[0];
        Region {
            contour: b
                .contour
                .iter()
                .map(|p| [f64::from(p.x), f64::from(p.y)])
                .collect(),
            area_px: b.area_px,
            centroid: b.centroid,
            contrast: 60.0,
        }
    }

    /// A 120 x 100 px view of dark space.
    fn space() -> Mat {
        Mat::new_rows_cols_with_default(100, 120, core::CV_8UC3, Scalar::new(21.0, 22.0, 28.0, 0.0))
            .unwrap()
    }

    fn fill_rect(m: &mut Mat, x: i32, y: i32, w: i32, h: i32, bgr: [f64; 3]) {
        imgproc::rectangle(
            m,
            core::Rect::new(x, y, w, h),
            Scalar::new(bgr[0], bgr[1], bgr[2], 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
    }

    #[test]
    fn a_grey_token_across_coloured_art_is_its_own_part() {
        // Dark space, a planet's face in the rendered teal (#73A3A8) and a grey token
        // (#676868) lying across its lower edge: one region, joined along a whole side.
        let mut view = space();
        fill_rect(&mut view, 10, 10, 80, 40, [168.0, 163.0, 115.0]);
        fill_rect(&mut view, 55, 35, 35, 35, [104.0, 104.0, 103.0]);
        let region = lit_region(&view);
        let parts = grey_parts(&region, &view, 200.0, 5000.0).unwrap();
        assert_eq!(
            parts.len(),
            1,
            "{:?}",
            parts.iter().map(|p| p.0.area_px).collect::<Vec<_>>()
        );
        let (part, real) = &parts[0];
        // The token's 35 x 35 px (its contour runs through its outer pixels' centres).
        assert!(
            (part.area_px - 34.0 * 34.0).abs() < 60.0,
            "{}",
            part.area_px
        );
        assert!((part.centroid[0] - 72.0).abs() < 1.0, "{:?}", part.centroid);
        assert!((part.centroid[1] - 52.0).abs() < 1.0, "{:?}", part.centroid);
        assert!(real.iter().all(|r| *r));
    }

    #[test]
    fn a_region_of_one_colour_has_no_grey_part() {
        // The same shapes in two shades of one colour (a nebula's brighter core): nothing
        // to split by saturation.
        let mut view = space();
        fill_rect(&mut view, 10, 10, 80, 40, [168.0, 163.0, 115.0]);
        fill_rect(&mut view, 55, 35, 35, 35, [140.0, 136.0, 96.0]);
        let region = lit_region(&view);
        assert!(
            grey_parts(&region, &view, 200.0, 5000.0)
                .unwrap()
                .is_empty()
        );
        // And a grey token alone is all grey: no colour to split it from.
        let mut alone = space();
        fill_rect(&mut alone, 55, 35, 35, 35, [104.0, 104.0, 103.0]);
        let region = lit_region(&alone);
        assert!(
            grey_parts(&region, &alone, 200.0, 5000.0)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn otsu_splits_two_clusters_between_them() {
        let mut hist = [0u32; SAT_BINS];
        hist[3] = 50;
        hist[4] = 40;
        hist[20] = 60;
        hist[21] = 30;
        let (t, m0, m1) = otsu(&hist).unwrap();
        assert!(
            t > 4.5 / SAT_BINS as f32 && t <= 20.0 / SAT_BINS as f32,
            "{t}"
        );
        assert!(m0 < 5.0 / SAT_BINS as f64 && m1 > 20.0 / SAT_BINS as f64);
        assert!(otsu(&[0u32; SAT_BINS]).is_none());
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

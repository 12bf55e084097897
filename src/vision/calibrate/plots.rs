//! Two pictures that tell a user more than the numbers: where in the image the board has
//! been seen (corners near the edges pin down the distortion), and how the residuals
//! scatter (a round blob is noise; a streak or a cluster is a bad view or a bent board).

use super::camera::{CameraReport, Residual};
use crate::vision::{VisionError, cv};
use opencv::core::{CV_8UC3, Mat, Point, Rect, Scalar};
use opencv::imgproc;

const GRID: (usize, usize) = (8, 6);

/// Which cells of an 8 x 6 grid over the image hold no corner: the parts of the image that
/// still need the board.
pub fn empty_cells(points: &[[f64; 2]], image_size: [u32; 2]) -> Vec<(usize, usize)> {
    let counts = cell_counts(points, image_size);
    let mut out = Vec::new();
    for j in 0..GRID.1 {
        for i in 0..GRID.0 {
            if counts[j * GRID.0 + i] == 0 {
                out.push((i, j));
            }
        }
    }
    out
}

/// Names the parts of the image that the cells (of `empty_cells`) fall in, e.g. "top
/// left, centre": what the CLI's live mode and the overlay's calibration panel tell the
/// user to cover next.
pub fn region_names(cells: &[(usize, usize)]) -> String {
    let mut names: Vec<&str> = cells
        .iter()
        .map(|&(i, j)| match (j * 3 / 6, i * 3 / 8) {
            (0, 0) => "top left",
            (0, 1) => "top",
            (0, _) => "top right",
            (1, 0) => "left",
            (1, 1) => "centre",
            (1, _) => "right",
            (_, 0) => "bottom left",
            (_, 1) => "bottom",
            _ => "bottom right",
        })
        .collect();
    names.sort();
    names.dedup();
    names.join(", ")
}

fn cell_counts(points: &[[f64; 2]], image_size: [u32; 2]) -> Vec<usize> {
    let mut counts = vec![0usize; GRID.0 * GRID.1];
    for p in points {
        let i = (p[0] / f64::from(image_size[0]) * GRID.0 as f64).floor();
        let j = (p[1] / f64::from(image_size[1]) * GRID.1 as f64).floor();
        if (0.0..GRID.0 as f64).contains(&i) && (0.0..GRID.1 as f64).contains(&j) {
            counts[j as usize * GRID.0 + i as usize] += 1;
        }
    }
    counts
}

/// Coverage map: the image area at `width` px wide, cells shaded by how many corners fell in
/// them (red where none did), every corner a dot.
pub fn coverage_png(report: &CameraReport, width: i32) -> Result<Vec<u8>, VisionError> {
    let size = report.file.image_size;
    let scale = f64::from(width) / f64::from(size[0]);
    let height = (f64::from(size[1]) * scale).round() as i32;
    let mut img = Mat::new_rows_cols_with_default(height, width, CV_8UC3, Scalar::all(30.0))?;
    let points: Vec<[f64; 2]> = report.residuals.iter().map(|r| r.at_px).collect();
    let counts = cell_counts(&points, size);
    let max = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let (cw, ch) = (
        f64::from(width) / GRID.0 as f64,
        f64::from(height) / GRID.1 as f64,
    );
    for j in 0..GRID.1 {
        for i in 0..GRID.0 {
            let n = counts[j * GRID.0 + i];
            let colour = if n == 0 {
                Scalar::new(40.0, 40.0, 160.0, 0.0)
            } else {
                let g = 60.0 + 140.0 * (n as f64 / max);
                Scalar::new(60.0, g, 60.0, 0.0)
            };
            let r = Rect::new(
                (i as f64 * cw) as i32,
                (j as f64 * ch) as i32,
                cw.ceil() as i32,
                ch.ceil() as i32,
            );
            imgproc::rectangle(&mut img, r, colour, -1, imgproc::LINE_8, 0)?;
            imgproc::rectangle(&mut img, r, Scalar::all(90.0), 1, imgproc::LINE_8, 0)?;
        }
    }
    for p in &points {
        let c = Point::new((p[0] * scale).round() as i32, (p[1] * scale).round() as i32);
        imgproc::circle(&mut img, c, 2, Scalar::all(235.0), -1, imgproc::LINE_AA, 0)?;
    }
    let caption = format!(
        "{} corners in {} views; red cells: no corner yet",
        points.len(),
        report.per_view_rms.len()
    );
    imgproc::put_text(
        &mut img,
        &caption,
        Point::new(8, height - 10),
        imgproc::FONT_HERSHEY_SIMPLEX,
        0.5,
        Scalar::all(255.0),
        1,
        imgproc::LINE_AA,
        false,
    )?;
    cv::encode_png(&img)
}

/// Residual plot: each corner's reprojection error as a dot around the origin (px), with a
/// circle at the RMS.
pub fn residuals_png(
    residuals: &[Residual],
    rms_px: f64,
    side: i32,
) -> Result<Vec<u8>, VisionError> {
    let mut img = Mat::new_rows_cols_with_default(side, side, CV_8UC3, Scalar::all(255.0))?;
    let extent = residuals
        .iter()
        .map(Residual::norm)
        .fold(rms_px * 3.0, f64::max)
        .max(0.05);
    let half = f64::from(side) / 2.0;
    let scale = (half - 30.0) / extent;
    let o = Point::new(side / 2, side / 2);
    imgproc::line(
        &mut img,
        Point::new(20, o.y),
        Point::new(side - 20, o.y),
        Scalar::all(180.0),
        1,
        imgproc::LINE_8,
        0,
    )?;
    imgproc::line(
        &mut img,
        Point::new(o.x, 20),
        Point::new(o.x, side - 20),
        Scalar::all(180.0),
        1,
        imgproc::LINE_8,
        0,
    )?;
    imgproc::circle(
        &mut img,
        o,
        (rms_px * scale).round() as i32,
        Scalar::new(0.0, 140.0, 0.0, 0.0),
        1,
        imgproc::LINE_AA,
        0,
    )?;
    for r in residuals {
        let c = Point::new(
            (half + r.error_px[0] * scale).round() as i32,
            (half + r.error_px[1] * scale).round() as i32,
        );
        imgproc::circle(
            &mut img,
            c,
            2,
            Scalar::new(160.0, 60.0, 0.0, 0.0),
            -1,
            imgproc::LINE_AA,
            0,
        )?;
    }
    let caption =
        format!("reprojection errors, axes +-{extent:.2} px; green circle: RMS {rms_px:.3} px");
    imgproc::put_text(
        &mut img,
        &caption,
        Point::new(10, side - 8),
        imgproc::FONT_HERSHEY_SIMPLEX,
        0.4,
        Scalar::all(0.0),
        1,
        imgproc::LINE_AA,
        false,
    )?;
    cv::encode_png(&img)
}

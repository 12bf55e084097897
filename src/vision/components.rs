//! Connected components of a binary mask, labelled as narrowly as the mask allows.
//!
//! A stream's base search labels four masks of the play area's orthophoto a frame (bright
//! blobs against a miniature's and a hand's surroundings, whole miniatures, the miniature
//! mask's bodies), and OpenCV 4.6 took about 5.4 ms for one at 935 x 935 px with 32-bit
//! labels and 1.9 ms with 16-bit ones (one core; 3.0 against 2.0 with both): a third of
//! the search. 16-bit labels hold 65535 components, and OpenCV does not check: given more,
//! 4.6 writes past its tables and the process dies (test `a_mask_too_fine_for_16_bits_gets_32`
//! without the bound below).
//!
//! The bound: after an opening or a dilation by a kernel every component holds the kernel
//! whole, or touches the mask's edge where the kernel reached past it. Two components are
//! never 8-adjacent, so each grown by one pixel right and down covers pixels no other
//! does, at least the kernel so grown where it held the kernel: a mask holds no more
//! components than its pixels (one row and column more) over that area, plus one per two
//! edge pixels. Where that fits, labels are 16-bit (an epic table's 1850 x 935 px view
//! opened by a 5 px disc: at most 64 700), else 32-bit.

use super::VisionError;
use opencv::core::{CV_16U, CV_32S, Mat};
use opencv::imgproc;
use opencv::prelude::*;

/// The 8-way connected components of a mask: labels (0 the background), each one's box,
/// area and centroid.
pub struct Components {
    labels: Mat,
    narrow: bool,
    stats: Mat,
    centroids: Mat,
    count: i32,
}

/// One row of labels, as wide as they were made.
pub enum LabelRow<'a> {
    Narrow(&'a [u16]),
    Wide(&'a [i32]),
}

impl LabelRow<'_> {
    /// The label at column `c`, `None` past the row's end.
    pub fn get(&self, c: usize) -> Option<i32> {
        match self {
            LabelRow::Narrow(r) => r.get(c).map(|v| i32::from(*v)),
            LabelRow::Wide(r) => r.get(c).copied(),
        }
    }
}

impl Components {
    /// Labels `mask` (8-bit, non-zero the foreground), opened or dilated by `kernel`.
    pub fn of(mask: &Mat, kernel: &Mat) -> Result<Components, VisionError> {
        let (rows, cols) = (i64::from(mask.rows()), i64::from(mask.cols()));
        let spaced = grown_area(kernel)?.max(1);
        let most = (rows + 1) * (cols + 1) / spaced + rows + cols + 1;
        let narrow = most <= i64::from(u16::MAX);
        let (mut labels, mut stats, mut centroids) =
            (Mat::default(), Mat::default(), Mat::default());
        let count = imgproc::connected_components_with_stats_with_algorithm(
            mask,
            &mut labels,
            &mut stats,
            &mut centroids,
            8,
            if narrow { CV_16U } else { CV_32S },
            imgproc::CCL_DEFAULT,
        )?;
        Ok(Components {
            labels,
            narrow,
            stats,
            centroids,
            count,
        })
    }

    /// How many labels, the background's among them (components are 1..count).
    pub fn count(&self) -> i32 {
        self.count
    }

    /// Component `i`'s area (px).
    pub fn area(&self, i: i32) -> Result<i32, VisionError> {
        self.stat(i, imgproc::CC_STAT_AREA)
    }

    /// Component `i`'s box: left, top, width, height (px).
    pub fn bounds(&self, i: i32) -> Result<[i32; 4], VisionError> {
        Ok([
            self.stat(i, imgproc::CC_STAT_LEFT)?,
            self.stat(i, imgproc::CC_STAT_TOP)?,
            self.stat(i, imgproc::CC_STAT_WIDTH)?,
            self.stat(i, imgproc::CC_STAT_HEIGHT)?,
        ])
    }

    /// Component `i`'s centroid (column, row; px).
    pub fn centroid(&self, i: i32) -> Result<[f64; 2], VisionError> {
        Ok([
            *self.centroids.at_2d::<f64>(i, 0)?,
            *self.centroids.at_2d::<f64>(i, 1)?,
        ])
    }

    /// Row `r`'s labels.
    pub fn row(&self, r: i32) -> Result<LabelRow<'_>, VisionError> {
        Ok(if self.narrow {
            LabelRow::Narrow(self.labels.at_row::<u16>(r)?)
        } else {
            LabelRow::Wide(self.labels.at_row::<i32>(r)?)
        })
    }

    /// The label at column `c`, row `r`; 0 (the background's) outside the mask.
    pub fn at(&self, c: i32, r: i32) -> i32 {
        if r < 0 || c < 0 || r >= self.labels.rows() {
            return 0;
        }
        self.row(r)
            .ok()
            .and_then(|row| row.get(c as usize))
            .unwrap_or(0)
    }

    fn stat(&self, i: i32, k: i32) -> Result<i32, VisionError> {
        Ok(*self.stats.at_2d::<i32>(i, k)?)
    }
}

/// The area (px) of `kernel` grown by one pixel right and down: what a component holding
/// it covers, at least, apart from every other (see the module's doc).
fn grown_area(kernel: &Mat) -> Result<i64, VisionError> {
    let mut cells = std::collections::HashSet::new();
    for r in 0..kernel.rows() {
        for (c, v) in kernel.at_row::<u8>(r)?.iter().enumerate() {
            if *v != 0 {
                for (dr, dc) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    cells.insert((r + dr, c + dc));
                }
            }
        }
    }
    Ok(cells.len() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Rect, Scalar};

    fn mask(w: i32, h: i32, rects: &[Rect]) -> Mat {
        let mut m = Mat::new_rows_cols_with_default(h, w, opencv::core::CV_8U, Scalar::all(0.0))
            .expect("mask");
        for r in rects {
            imgproc::rectangle(&mut m, *r, Scalar::all(255.0), -1, imgproc::LINE_8, 0)
                .expect("rectangle");
        }
        m
    }

    /// A kernel of one pixel: grown right and down, 4 px.
    fn dot() -> Mat {
        Mat::new_rows_cols_with_default(1, 1, opencv::core::CV_8U, Scalar::all(1.0)).expect("dot")
    }

    #[test]
    fn narrow_and_wide_labels_say_the_same() {
        let m = mask(
            600,
            500,
            &[
                Rect::new(5, 5, 10, 20),
                Rect::new(40, 30, 30, 10),
                Rect::new(100, 60, 5, 5),
            ],
        );
        // 300 000 px opened by a 5 px disc fit 16 bits; by one pixel they do not.
        let disc = crate::vision::cv::disc_kernel(5).expect("disc");
        assert_eq!(grown_area(&dot()).expect("dot"), 4);
        assert!(grown_area(&disc).expect("disc") > 25);
        let (narrow, wide) = (
            Components::of(&m, &disc).expect("narrow"),
            Components::of(&m, &dot()).expect("wide"),
        );
        assert!(narrow.narrow && !wide.narrow);
        assert_eq!(narrow.count(), 4);
        for c in [&narrow, &wide] {
            assert_eq!(c.count(), 4);
            let l = c.at(45, 35);
            assert!(l > 0);
            assert_eq!(c.area(l).expect("area"), 300);
            assert_eq!(c.bounds(l).expect("box"), [40, 30, 30, 10]);
            let [x, y] = c.centroid(l).expect("centroid");
            assert!((x - 54.5).abs() < 1e-9 && (y - 34.5).abs() < 1e-9);
            assert_eq!(c.at(0, 0), 0);
            assert_eq!(c.at(-1, 3), 0);
            assert_eq!(c.at(500, 3), 0);
        }
        for r in 0..500 {
            for col in 0..600 {
                assert_eq!(narrow.at(col, r), wide.at(col, r), "({col}, {r})");
            }
        }
    }

    #[test]
    fn a_mask_too_fine_for_16_bits_gets_32() {
        // Single pixels two apart: 75 000 components in 300 000 px, as many as the bound
        // allows within 2 %. Opened by a single pixel, the labels are 32-bit, and every
        // component keeps its own.
        let mut m =
            Mat::new_rows_cols_with_default(500, 600, opencv::core::CV_8U, Scalar::all(0.0))
                .expect("mask");
        for r in (0..500).step_by(2) {
            let row = m.at_row_mut::<u8>(r).expect("row");
            for v in row.iter_mut().step_by(2) {
                *v = 255;
            }
        }
        let c = Components::of(&m, &dot()).expect("wide");
        assert!(!c.narrow);
        assert_eq!(c.count(), 250 * 300 + 1);
        let mut seen = std::collections::HashSet::new();
        for r in (0..500).step_by(2) {
            for col in (0..600).step_by(2) {
                seen.insert(c.at(col, r));
            }
        }
        assert_eq!(seen.len(), 75_000);
        assert!(!seen.contains(&0) && seen.iter().all(|l| *l < c.count()));
    }
}

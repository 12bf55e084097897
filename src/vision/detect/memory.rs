//! What a stream's full search remembers for the next one. Most of a search's time goes to
//! what holds nothing: the mat's art and stars, searched for obstacle outlines and for base
//! squares under every bright blob, in vain, frame after frame; the rest to the same ships
//! and obstacles found again where they were. A still camera sees them again as they were,
//! so the next search passes over a region or a blob it searched in vain, and takes a
//! blob's base as it found it, while the view there stays as it was, down to the colour of
//! every small cell (anything laid on it, moved or taken away, a token, a ship, a hand,
//! changes some cell by far more than the sensor's noise does).

use super::bases::FoundBase;
use super::obstacles::Known;
use super::ortho::OrthoView;
use crate::vision::VisionError;
use opencv::core::{Mat, Vec3b};
use opencv::prelude::*;

/// What a full search found that the next one can use.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    /// The obstacles and the regions searched in vain (see
    /// [`super::obstacles::find_obstacles_known`]).
    pub obstacles: Known,
    /// The blobs under which no base was found.
    pub empty_blobs: Vec<BlobKey>,
    /// The blobs under which a base was found, with that base.
    pub found_blobs: Vec<FoundBlob>,
    /// How much of this search came from the one before.
    pub reused: Reused,
}

/// What a search took from the memory of the one before: regions and blobs passed over,
/// bases taken as they were.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reused {
    pub empty_regions: usize,
    pub empty_blobs: usize,
    pub bases: usize,
}

/// A blob with a base under it: the blob, the view over the base, and the base as its
/// blob's search found it (before bases that overlap are settled between blobs).
#[derive(Clone, Debug)]
pub struct FoundBlob {
    pub key: BlobKey,
    over: Cells,
    pub base: FoundBase,
}

impl FoundBlob {
    /// `view`: the base-top view the search reads (see [`super::base_search`]).
    pub fn of(
        key: BlobKey,
        base: FoundBase,
        view: &Mat,
        grid: &OrthoView,
    ) -> Result<FoundBlob, VisionError> {
        let over = Cells::of(view, base_box(&base, grid), BLOB_CELL_PX)?;
        Ok(FoundBlob { key, over, base })
    }

    /// The base again, when its blob is the same and nothing over the base changed: a
    /// search there would read what it read before.
    pub fn again(
        &self,
        key: &BlobKey,
        view: &Mat,
        grid: &OrthoView,
    ) -> Result<Option<FoundBase>, VisionError> {
        if !self.key.same(key) {
            return Ok(None);
        }
        let now = Cells::of(view, base_box(&self.base, grid), BLOB_CELL_PX)?;
        Ok(self.over.agree(&now).then(|| self.base.clone()))
    }
}

/// The view's pixels over a base and a margin around it (its guides, the edges its fit
/// searches beyond the outline).
fn base_box(base: &FoundBase, grid: &OrthoView) -> [i32; 4] {
    let [c, r] = grid.to_pixel(base.fit.centre[0], base.fit.centre[1]);
    let reach = (base.fit.half * std::f64::consts::SQRT_2 + BASE_MARGIN_MM) / grid.mm_per_px;
    [
        (c - reach).floor() as i32,
        (r - reach).floor() as i32,
        (c + reach).ceil() as i32,
        (r + reach).ceil() as i32,
    ]
}
const BASE_MARGIN_MM: f64 = 10.0;

/// The mean colour of every `cell` x `cell` pixel square of a view that a box touches, on a
/// grid fixed to the view (so that the same place gives the same cells in every frame).
#[derive(Clone, Debug, PartialEq)]
pub struct Cells {
    cells: Vec<([i32; 2], [u8; 3])>,
}

impl Cells {
    /// The cells of `view` (8-bit BGR) under the box [x0, y0, x1, y1] (pixels, inclusive;
    /// clipped to the view).
    pub fn of(view: &Mat, rect: [i32; 4], cell: i32) -> Result<Cells, VisionError> {
        let size = view.size()?;
        let cell = cell.max(1);
        let (x0, y0) = (
            rect[0].clamp(0, size.width - 1),
            rect[1].clamp(0, size.height - 1),
        );
        let (x1, y1) = (
            rect[2].clamp(0, size.width - 1),
            rect[3].clamp(0, size.height - 1),
        );
        let mut cells = Vec::new();
        for row in y0 / cell..=y1 / cell {
            for col in x0 / cell..=x1 / cell {
                let (mut sum, mut n) = ([0u32; 3], 0u32);
                for y in row * cell..((row + 1) * cell).min(size.height) {
                    let line = view.at_row::<Vec3b>(y)?;
                    for x in col * cell..((col + 1) * cell).min(size.width) {
                        let p = line[x as usize];
                        for (s, v) in sum.iter_mut().zip(p.0) {
                            *s += u32::from(v);
                        }
                        n += 1;
                    }
                }
                cells.push(([col, row], sum.map(|v| (v / n.max(1)).min(255) as u8)));
            }
        }
        Ok(Cells { cells })
    }

    /// No cell both have changed colour by more than the noise does.
    pub fn agree(&self, other: &Cells) -> bool {
        self.cells.iter().all(|(at, colour)| {
            other
                .cells
                .iter()
                .find(|(o, _)| o == at)
                .is_none_or(|(_, c)| {
                    colour
                        .iter()
                        .zip(c)
                        .all(|(a, b)| a.abs_diff(*b) <= SAME_CELL_LEVELS)
                })
        })
    }
}

/// How far (grey levels, per channel) a cell's mean colour may move between frames of a
/// still camera: the noise moves a mean of 16 pixels by a level or two, JPEG a little more;
/// what makes a region or a blob differs from the mat by 28 levels or more.
const SAME_CELL_LEVELS: u8 = 10;

/// A blob of the base search (see [`super::base_search::bright_blobs`]): where it is and
/// the colours of the view around it.
#[derive(Clone, Debug, PartialEq)]
pub struct BlobKey {
    /// Table mm, in the plane of the base tops.
    pub centre: [f64; 2],
    cells: Cells,
}

impl BlobKey {
    /// `pixel`: the blob's centre in `view`'s pixels.
    pub fn of(centre: [f64; 2], pixel: [f64; 2], view: &Mat) -> Result<BlobKey, VisionError> {
        let (c, r) = (pixel[0].round() as i32, pixel[1].round() as i32);
        let rect = [
            c - BLOB_REACH_PX,
            r - BLOB_REACH_PX,
            c + BLOB_REACH_PX,
            r + BLOB_REACH_PX,
        ];
        Ok(BlobKey {
            centre,
            cells: Cells::of(view, rect, BLOB_CELL_PX)?,
        })
    }

    /// The same blob in another frame: within a millimetre, nothing around it changed.
    pub fn same(&self, other: &BlobKey) -> bool {
        (self.centre[0] - other.centre[0]).hypot(self.centre[1] - other.centre[1]) <= SAME_BLOB_MM
            && self.cells.agree(&other.cells)
    }
}

/// The view around a blob that its search reads (pixels of the 1 mm view): a large base
/// and a tall miniature's lean.
const BLOB_REACH_PX: i32 = 48;
const BLOB_CELL_PX: i32 = 8;
const SAME_BLOB_MM: f64 = 1.0;

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Scalar};

    fn view() -> Mat {
        Mat::new_rows_cols_with_default(200, 200, CV_8UC3, Scalar::new(30.0, 20.0, 25.0, 0.0))
            .unwrap()
    }

    fn paint(m: &mut Mat, x0: usize, y0: usize, w: usize, bgr: [u8; 3]) {
        for r in y0..y0 + w {
            for p in m.at_row_mut::<Vec3b>(r as i32).unwrap()[x0..x0 + w].iter_mut() {
                *p = Vec3b::from(bgr);
            }
        }
    }

    #[test]
    fn a_blob_is_known_again_until_something_changes_around_it() {
        // A star (a bright blob of the mat's art), then the same with noise, then with a
        // ship's miniature set down beside it.
        let mut art = view();
        paint(&mut art, 98, 98, 4, [240, 240, 240]);
        let key = BlobKey::of([100.0, 100.0], [100.0, 100.0], &art).unwrap();
        let mut noisy = art.clone();
        for r in 0..200 {
            for (c, p) in noisy.at_row_mut::<Vec3b>(r).unwrap().iter_mut().enumerate() {
                let n = ((r as usize * 5 + c * 11) % 5) as u8;
                *p = Vec3b::from([p[0].saturating_sub(n), p[1].saturating_add(n), p[2]]);
            }
        }
        assert!(key.same(&BlobKey::of([100.3, 99.8], [100.3, 100.2], &noisy).unwrap()));
        assert!(!key.same(&BlobKey::of([102.0, 100.0], [102.0, 100.0], &noisy).unwrap()));
        let mut ship = noisy.clone();
        paint(&mut ship, 120, 110, 20, [180, 180, 175]);
        assert!(!key.same(&BlobKey::of([100.0, 100.0], [100.0, 100.0], &ship).unwrap()));
    }
}

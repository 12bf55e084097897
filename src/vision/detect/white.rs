//! The frame's white balance and exposure, read off the mat markers' paper.
//!
//! Which way a base faces is read from colours (the front arc's faction shade, the
//! initiative disc's orange, an engine's glow; see [`super::facing`]), measured as sRGB
//! differences between channels, and the search's limits are sRGB levels too. A camera
//! whose white balance is off (a fixed setting under a warm lamp, an automatic one misled
//! by a blue mat) adds that difference to every pixel: with red 15 % up and blue 20 % down
//! (`hashmark bench detect --camera warm`) the fixed rendered set's grey token art passed
//! for a front arc, 73 % of its bases faced the right way (95 % as shot) and 3 the wrong
//! way unflagged, one with confidence 1.00. The marker cards beside the play area are
//! white paper under the same light, and where the calibration puts them is known, so
//! their white cells say what the camera makes of white: gains that turn it grey again,
//! and bring an underexposed frame up, undo it.

use super::facing::pixel_at;
use crate::calibration::Layout;
use crate::vision::aruco::{self, Dict};
use crate::vision::edges::Grey;
use crate::vision::{Camera, VisionError, cv};
use opencv::core::{Mat, Vec3b};

/// Per-channel gains (B, G, R) that make the paper's white grey.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Balance {
    pub gains: [f64; 3],
}

impl Balance {
    /// No change: the camera's white is grey already, or nothing says otherwise.
    pub const NONE: Balance = Balance {
        gains: [1.0, 1.0, 1.0],
    };

    /// The gains that turn `white` (B, G, R) grey, and bring its level up to `REF_WHITE`
    /// where it lies under `MIN_WHITE`: the detection's limits in sRGB levels (the
    /// brightest print, the disc's orange, an engine's glow, the edges' least contrast)
    /// were chosen on tables whose paper shows 190-240, and a frame exposed 0.6 as long as
    /// those (`--camera dark`) lost 11 of the fixed rendered set's 65 bases and had one
    /// facing the wrong way with confidence 0.85. A frame whose paper clips all over (see
    /// [`paper_white`]) is brought down as though the paper were just at 255: at least
    /// that much too bright, so never brought down too far. Exposed 1.35 times as long
    /// (`--camera bright`) the fixed set had 9 bases not flagged, 64 found and 80 % facing
    /// right; so brought down, 23, 66 and 82 %, none facing wrong unflagged either way. A
    /// frame a little brighter than the tables', paper unclipped, is left as it is.
    /// Within `CAST_TOLERANCE` of grey (JPEG's percent or two on a white cell, and the
    /// rendered cards' paper, 2.6 % short of blue) and not under `MIN_WHITE` it is `NONE`:
    /// such a frame is read exactly as before.
    pub fn of_white(white: [f64; 3]) -> Balance {
        let mean = white.iter().sum::<f64>() / 3.0;
        if white.iter().any(|c| *c <= 0.0) {
            return Balance::NONE;
        }
        let exposure = if !(MIN_WHITE..CLIPPED_WHITE).contains(&mean) {
            REF_WHITE / mean
        } else {
            1.0
        };
        let cast = white.map(|c| mean / c);
        let cast = if cast.iter().all(|g| (g - 1.0).abs() <= CAST_TOLERANCE) {
            [1.0; 3]
        } else {
            cast
        };
        let gains = cast.map(|g| g * exposure);
        if gains == [1.0; 3] {
            Balance::NONE
        } else {
            Balance { gains }
        }
    }

    /// The frame as it would show under a grey white at `REF_WHITE` (each channel times its
    /// gain, rounded and saturating), or `None` for `NONE`.
    pub fn apply_frame(&self, frame: &Mat) -> Result<Option<Mat>, VisionError> {
        if *self == Balance::NONE {
            return Ok(None);
        }
        let [b, g, r] = self.gains;
        cv::weigh_channels(frame, &[[b, 0.0, 0.0], [0.0, g, 0.0], [0.0, 0.0, r]]).map(Some)
    }

    /// The balanced frame's grey (OpenCV's BGR to grey weights, each times its channel's
    /// gain) in one pass, for what reads the grey alone (a stream's re-fits), or `None`
    /// for `NONE`.
    pub fn apply_grey(&self, frame: &Mat) -> Result<Option<Mat>, VisionError> {
        if *self == Balance::NONE {
            return Ok(None);
        }
        let [b, g, r] = self.gains;
        cv::weigh_channels(frame, &[[0.114 * b, 0.587 * g, 0.299 * r]]).map(Some)
    }

    /// The frame's linear grey as it would show balanced (see `apply_grey`).
    pub fn grey(&self, frame: &Mat) -> Result<Grey, VisionError> {
        let balanced = self.apply_grey(frame)?;
        Grey::from_mat(balanced.as_ref().unwrap_or(frame))
    }
}

/// A channel this far from the white's mean (as a share) is a cast: on the five rendered
/// sets of scripts/detect-report.sh the paper shows casts of up to 4 %, against the 15-20
/// % that turned facings.
const CAST_TOLERANCE: f64 = 0.06;
/// The paper's level (mean sRGB) a frame is brought up to, and the level under which it
/// is: the rendered tables' paper shows 190-240.
const REF_WHITE: f64 = 200.0;
const MIN_WHITE: f64 = REF_WHITE / 1.15;

/// The frame's white (B, G, R: per marker the mean over the middles of its white cells,
/// then the median marker's), or `None` where no marker shows `MIN_SAMPLES` of them
/// unclipped. Each cell is sampled on a 3 x 3 grid over its middle half (clear of its
/// neighbours' blur); a white sample with a channel at `CLIPPED` or over is left out
/// (overexposed paper says nothing of the ratio between the channels), and a marker whose
/// white is clipped all over, in every channel, counts as `CLIPPED_WHITE`, grey (paper
/// clipped in one channel only is a cast whose other channels still show: a warm frame's
/// red). A marker counts only
/// where its black cells show darker than `MAX_BLACK_SHARE` of its white, and that at least
/// `MIN_PAPER`: a card taken off the table, or hidden, leaves the mat or a hand where the
/// calibration puts it, and their colour is not the light's.
pub fn paper_white(
    frame: &Mat,
    camera: &Camera,
    layout: &Layout,
) -> Result<Option<[f64; 3]>, VisionError> {
    let dict = Dict::parse(&layout.mat_markers.dictionary)?;
    let projector = camera.point_projector();
    let mut per_marker: Vec<[f64; 3]> = Vec::new();
    for m in &layout.mat_markers.markers {
        let Some(corners) = layout.marker_corners_mm(m.id) else {
            continue;
        };
        let bits = aruco::marker_bits(dict, m.id as i32)?;
        let (mut white, mut whites) = ([0.0; 3], 0usize);
        let (mut black, mut blacks) = (0.0, 0usize);
        let mut clipped = 0usize;
        for row in 0..bits.cells {
            for col in 0..bits.cells {
                let is_black = bits.is_black(row as i64, col as i64);
                for (du, dv) in GRID {
                    let u = (col as f64 + 0.5 + du) / bits.cells as f64;
                    let v = (row as f64 + 0.5 + dv) / bits.cells as f64;
                    let Some(px) = pixel_at(frame, &projector, on_marker(&corners, u, v)) else {
                        continue;
                    };
                    if is_black {
                        black += level(px);
                        blacks += 1;
                    } else if px.0.iter().all(|c| *c < CLIPPED) {
                        for (s, c) in white.iter_mut().zip(px.0) {
                            *s += f64::from(c);
                        }
                        whites += 1;
                    } else if px.0.iter().all(|c| *c >= CLIPPED) {
                        clipped += 1;
                    }
                }
            }
        }
        if blacks < MIN_SAMPLES {
            continue;
        }
        // Paper clipped all over: at least as bright as white can show, so taken for just
        // that (see `Balance::of_white`).
        if whites < MIN_SAMPLES
            && clipped >= MIN_SAMPLES
            && black / (blacks as f64) < MAX_BLACK_SHARE * CLIPPED_WHITE
        {
            per_marker.push([CLIPPED_WHITE; 3]);
            continue;
        }
        if whites < MIN_SAMPLES {
            continue;
        }
        let white_level = white.iter().sum::<f64>() / (3 * whites) as f64;
        if white_level < MIN_PAPER || black / blacks as f64 >= MAX_BLACK_SHARE * white_level {
            continue;
        }
        per_marker.push(white.map(|w| w / whites as f64));
    }
    // The median marker's, channel by channel: a hand or a glare over one card moves it
    // less than a mean.
    Ok((!per_marker.is_empty()).then(|| {
        std::array::from_fn(|c| {
            let mut v: Vec<f64> = per_marker.iter().map(|w| w[c]).collect();
            v.sort_by(f64::total_cmp);
            let mid = v.len() / 2;
            if v.len().is_multiple_of(2) {
                0.5 * (v[mid - 1] + v[mid])
            } else {
                v[mid]
            }
        })
    }))
}

/// A pixel's mean over its channels.
fn level(p: Vec3b) -> f64 {
    p.0.iter().map(|c| f64::from(*c)).sum::<f64>() / 3.0
}

/// The middle half of a cell: a quarter cell either way of its centre.
const GRID: [(f64, f64); 9] = [
    (-0.25, -0.25),
    (0.0, -0.25),
    (0.25, -0.25),
    (-0.25, 0.0),
    (0.0, 0.0),
    (0.25, 0.0),
    (-0.25, 0.25),
    (0.0, 0.25),
    (0.25, 0.25),
];
const CLIPPED: u8 = 250;
/// What paper clipped all over is taken for: the most a frame shows.
const CLIPPED_WHITE: f64 = 255.0;
/// Two cells' worth.
const MIN_SAMPLES: usize = 18;
/// Paper darker than this (mean sRGB) is not paper in light: a black frame, a card in
/// shadow.
const MIN_PAPER: f64 = 40.0;
/// A marker's black cells show less than this share of its white's level.
const MAX_BLACK_SHARE: f64 = 0.5;

/// The table point at (u, v) across a marker (0..1 from its top-left corner along its top
/// and left sides; corners top-left, top-right, bottom-right, bottom-left).
fn on_marker(c: &[[f64; 2]; 4], u: f64, v: f64) -> [f64; 3] {
    let top = [
        c[0][0] + u * (c[1][0] - c[0][0]),
        c[0][1] + u * (c[1][1] - c[0][1]),
    ];
    let bottom = [
        c[3][0] + u * (c[2][0] - c[3][0]),
        c[3][1] + u * (c[2][1] - c[3][1]),
    ];
    [
        top[0] + v * (bottom[0] - top[0]),
        top[1] + v * (bottom[1] - top[1]),
        0.0,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Scalar};
    use opencv::prelude::*;

    #[test]
    fn clipped_paper_is_brought_down_to_the_reference() {
        let b = Balance::of_white([CLIPPED_WHITE; 3]);
        assert!(
            b.gains
                .iter()
                .all(|g| (g - REF_WHITE / CLIPPED_WHITE).abs() < 1e-12),
            "{b:?}"
        );
    }

    #[test]
    fn a_grey_white_in_the_band_is_left_as_it_is() {
        assert_eq!(Balance::of_white([200.0, 200.0, 200.0]), Balance::NONE);
        // JPEG's percent or two on a white cell, and a paper a little warm.
        assert_eq!(Balance::of_white([195.0, 201.0, 199.0]), Balance::NONE);
        assert_eq!(Balance::of_white([180.0, 181.0, 179.0]), Balance::NONE);
        assert_eq!(Balance::of_white([0.0, 200.0, 200.0]), Balance::NONE);
    }

    #[test]
    fn a_cast_and_a_short_exposure_are_undone() {
        let px = |frame: &Mat| *frame.at_2d::<Vec3b>(0, 0).expect("px");
        // Red 15 % up, blue 20 % down: the paper grey again at its own level.
        let warm = Balance::of_white([160.0, 200.0, 230.0]);
        assert_ne!(warm, Balance::NONE);
        let paper =
            Mat::new_rows_cols_with_default(2, 2, CV_8UC3, Scalar::new(160.0, 200.0, 230.0, 0.0))
                .expect("mat");
        let fixed = warm.apply_frame(&paper).expect("apply").expect("a change");
        let level = (160.0 + 200.0 + 230.0) / 3.0;
        assert!(
            px(&fixed)
                .0
                .iter()
                .all(|c| (f64::from(*c) - level).abs() <= 1.0),
            "{:?}",
            px(&fixed)
        );
        // Exposed 0.6 as long: brought to the reference level, and its grey with it.
        let dark = Balance::of_white([120.0, 120.0, 120.0]);
        let paper =
            Mat::new_rows_cols_with_default(2, 2, CV_8UC3, Scalar::all(120.0)).expect("mat");
        let fixed = dark.apply_frame(&paper).expect("apply").expect("a change");
        assert_eq!(px(&fixed).0, [200, 200, 200]);
        let grey = dark.apply_grey(&paper).expect("grey").expect("a change");
        assert_eq!(*grey.at_2d::<u8>(0, 0).expect("px"), 200);
        assert!(Balance::NONE.apply_frame(&paper).expect("apply").is_none());
    }
}

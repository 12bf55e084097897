//! Whether a frame still shows the table where the calibration puts it. A camera nudged
//! by a pixel after `calibrate table` moves every detected position by a millimetre or
//! more, with every sigma still small: the one error a judge cannot see in the figures.
//! The mat marker cards lie outside the play area and may stay there during play, so each
//! frame can be checked against table.json: where its markers are found, their centres
//! must be where the calibrated camera projects the layout's.

use super::scale::px_per_mm;
use super::table::diagonal_crossing;
use crate::calibration::Layout;
use crate::vision::aruco::{self, Dict};
use crate::vision::edges::{Grey, refine_quad};
use crate::vision::{Camera, VisionError};
use opencv::core::{Mat, Rect, Size};
use opencv::prelude::*;

/// A marker whose centre lies further than this (px) from where the calibration projects
/// it has moved. On the fixed rendered sets of scripts/detect-report.sh (12 tables at
/// 1080p, 2 at 4K; the frame the table was calibrated on and the empty table's, in
/// another light) every marker found lay within 0.2 px (0.2 mm); a camera turned by half
/// a pixel shifts table points by about 0.7 mm at 1080p over a 3 ft table.
pub const MOVED_PX: f64 = 0.5;

/// One mat marker found in the frame.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkerOffset {
    pub id: u32,
    /// Distance of its centre from where the calibration projects it (px).
    pub offset_px: f64,
    /// The same on the table at the marker (mm).
    pub offset_mm: f64,
}

/// What the frame says of the calibration.
#[derive(Clone, Debug, PartialEq)]
pub enum TableCheck {
    /// The markers found lie where table.json puts them (one card of several may have
    /// been nudged: it is listed, and the others vouch for the camera).
    Holds { markers: Vec<MarkerOffset> },
    /// Two or more markers (or the only one found) lie elsewhere: the camera or the mat
    /// moved since calibration, and every position would be off.
    Moved { markers: Vec<MarkerOffset> },
    /// No mat marker in view: nothing says the camera has not moved, nor that the frame
    /// shows the table at all.
    Unseen,
}

impl TableCheck {
    /// The check in one line a person can act on.
    pub fn describe(&self) -> String {
        let list = |m: &[MarkerOffset]| {
            m.iter()
                .map(|m| format!("{} {:.1} px ({:.1} mm)", m.id, m.offset_px, m.offset_mm))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            TableCheck::Holds { markers } => {
                let nudged: Vec<MarkerOffset> = markers
                    .iter()
                    .filter(|m| m.offset_px > MOVED_PX)
                    .cloned()
                    .collect();
                let mut s = format!(
                    "mat markers where the calibration puts them: {}",
                    list(markers)
                );
                if !nudged.is_empty() {
                    s.push_str(&format!(
                        "; card {} moved, the others hold",
                        nudged
                            .iter()
                            .map(|m| m.id.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                s
            }
            TableCheck::Moved { markers } => format!(
                "the camera or the mat has moved since calibration: mat markers {} from where \
                 table.json puts them (more than {MOVED_PX} px); run `hashmark calibrate table` again",
                list(markers)
            ),
            TableCheck::Unseen => "no mat marker in view where the calibration puts them: \
                nothing checks that the camera has not moved, nor that this is the table \
                (its marker cards stay beside the play area)"
                .into(),
        }
    }

    /// The check in a word, for machine-read output: holds, moved or unseen.
    pub fn state(&self) -> &'static str {
        match self {
            TableCheck::Holds { .. } => "holds",
            TableCheck::Moved { .. } => "moved",
            TableCheck::Unseen => "unseen",
        }
    }

    /// Whether the frame is to be refused: every position read through the calibration
    /// would be off.
    pub fn is_moved(&self) -> bool {
        matches!(self, TableCheck::Moved { .. })
    }

    /// Whether one image is to be refused unless the user says otherwise: moved (every
    /// position would be off), or no marker at all (a photo of something else, a black
    /// frame, the cards taken away: detection would invent ships on a checkerboard's
    /// squares or report positions nothing vouches for). A stream is not refused on one
    /// frame: a hand or a passing player may hide every card for a moment.
    pub fn refuses(&self) -> bool {
        !matches!(self, TableCheck::Holds { .. })
    }
}

/// Finds the layout's mat markers in `frame` (each once) and compares their centres, from
/// the refined corners, with the calibrated camera's projection of the layout.
pub fn check_table(
    frame: &Mat,
    camera: &Camera,
    layout: &Layout,
) -> Result<TableCheck, VisionError> {
    let dict = Dict::parse(&layout.mat_markers.dictionary)?;
    let found = find_markers(frame, camera, layout, dict)?;
    let size = frame.size()?;
    let mut markers = Vec::new();
    for m in &layout.mat_markers.markers {
        // A marker seen twice is no evidence either way.
        let mut same = found.iter().filter(|d| d.id == m.id as i32);
        let (Some(d), None) = (same.next(), same.next()) else {
            continue;
        };
        let Some(want_px) = projected(camera, layout, m.id) else {
            continue;
        };
        let cells = aruco::marker_bits(dict, m.id as i32)?.cells;
        let got = refine_in_window(frame, size, &d.corners, cells)?.unwrap_or(d.corners);
        // The centres (where the diagonals cross) are compared, not the corners: a small
        // marker's refinement can fail, and a detector's own corners sit up to a pixel
        // inwards (the camera's gamma), the same way on all four, which leaves the centre.
        let (g, w) = (diagonal_crossing(&got), diagonal_crossing(&want_px));
        let offset_px = (g[0] - w[0]).hypot(g[1] - w[1]);
        let scale = px_per_mm(camera, m.centre, 0.0).unwrap_or(1.0).max(1e-6);
        markers.push(MarkerOffset {
            id: m.id,
            offset_px,
            offset_mm: offset_px / scale,
        });
    }
    let moved = markers.iter().filter(|m| m.offset_px > MOVED_PX).count();
    Ok(if markers.is_empty() {
        TableCheck::Unseen
    } else if moved >= 2 || (moved == 1 && markers.len() == 1) {
        TableCheck::Moved { markers }
    } else {
        TableCheck::Holds { markers }
    })
}

/// Where the calibrated camera projects mat marker `id`'s corners (px).
fn projected(camera: &Camera, layout: &Layout, id: u32) -> Option<[[f64; 2]; 4]> {
    layout
        .marker_corners_mm(id)?
        .iter()
        .map(|p| camera.project([p[0], p[1], 0.0]))
        .collect::<Option<Vec<[f64; 2]>>>()
        .and_then(|v| <[[f64; 2]; 4]>::try_from(v).ok())
}

/// How far each marker's window reaches beyond the marker where the calibration puts it:
/// this share of its size, and this many pixels more, either way.
const WINDOW_GROW: f64 = 0.5;
const WINDOW_PAD_PX: f64 = 16.0;

/// The layout's markers in `frame`: each looked for first in a window about where the
/// calibration puts it (a stream checks every full search's frame, and the whole frame
/// cost 19 ms at 1080p), each window keeping only its own marker; where no window holds
/// its marker (the camera moved far, the cards were taken away, a photo of something
/// else), the whole frame is searched, so a camera moved by more than a window still says
/// so.
fn find_markers(
    frame: &Mat,
    camera: &Camera,
    layout: &Layout,
    dict: Dict,
) -> Result<Vec<aruco::Detection>, VisionError> {
    let size = frame.size()?;
    let mut found = Vec::new();
    for m in &layout.mat_markers.markers {
        let Some(rect) = projected(camera, layout, m.id).and_then(|q| window(&q, size)) else {
            continue;
        };
        let crop = Mat::roi(frame, rect)?.try_clone()?;
        for mut d in aruco::detect(&crop, dict)? {
            if d.id != m.id as i32 {
                continue;
            }
            for c in &mut d.corners {
                c[0] += f64::from(rect.x);
                c[1] += f64::from(rect.y);
            }
            found.push(d);
        }
    }
    if found.is_empty() {
        return aruco::detect(frame, dict);
    }
    Ok(found)
}

/// A marker's corners refined (see [`refine_quad`]) on its window of the frame alone: in
/// a stream this check runs with every full search, and the whole frame in linear light,
/// for four cards, cost it a third of its time (`bench detect --runs 3`, two runs each:
/// fixed 1080p set 4.2-4.4 ms, 2.5-2.9 so; 4K, `--runs 5`, 13.8-13.9, 8.0). The window's
/// margin (half the marker and 16 px each way) is wider than the refinement's reach: on
/// the rendered tables of scripts/detect-report.sh (the fixed, third, 4K and epic sets and
/// a third of the second), frames and empty tables, the 465 markers found came out within
/// 2e-12 px of the whole frame's refinement.
fn refine_in_window(
    frame: &Mat,
    size: Size,
    corners: &[[f64; 2]; 4],
    cells: usize,
) -> Result<Option<[[f64; 2]; 4]>, VisionError> {
    let Some(rect) = window(corners, size) else {
        return Ok(None);
    };
    let grey = Grey::from_mat(&Mat::roi(frame, rect)?.try_clone()?)?;
    let (dx, dy) = (f64::from(rect.x), f64::from(rect.y));
    let local = corners.map(|c| [c[0] - dx, c[1] - dy]);
    Ok(refine_quad(&grey, &local, cells, &|p| p).map(|q| q.map(|c| [c[0] + dx, c[1] + dy])))
}

/// The window (px, within the frame) about a marker's projected corners; `None` where
/// it lies wholly outside the frame.
fn window(q: &[[f64; 2]; 4], size: Size) -> Option<Rect> {
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for p in q {
        (x0, y0, x1, y1) = (x0.min(p[0]), y0.min(p[1]), x1.max(p[0]), y1.max(p[1]));
    }
    let grow = WINDOW_GROW * (x1 - x0).max(y1 - y0) + WINDOW_PAD_PX;
    let (w, h) = (f64::from(size.width), f64::from(size.height));
    let (x0, y0) = ((x0 - grow).max(0.0).floor(), (y0 - grow).max(0.0).floor());
    let (x1, y1) = ((x1 + grow).min(w).ceil(), (y1 + grow).min(h).ceil());
    (x1 - x0 >= 8.0 && y1 - y0 >= 8.0)
        .then(|| Rect::new(x0 as i32, y0 as i32, (x1 - x0) as i32, (y1 - y0) as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_markers_window_grows_about_it_and_stays_in_the_frame() {
        let size = Size::new(1920, 1080);
        // A 40 px marker: grown by 20 + 16 px each way.
        let q = [
            [100.0, 200.0],
            [140.0, 200.0],
            [140.0, 240.0],
            [100.0, 240.0],
        ];
        assert_eq!(window(&q, size), Some(Rect::new(64, 164, 112, 112)));
        // Half off the frame's left edge: cut at it.
        let q = [[-20.0, 500.0], [20.0, 500.0], [20.0, 540.0], [-20.0, 540.0]];
        assert_eq!(window(&q, size), Some(Rect::new(0, 464, 56, 112)));
        // Wholly beyond the frame (a camera turned far from where it was calibrated):
        // no window, the whole frame is searched instead.
        let q = [
            [2000.0, 500.0],
            [2040.0, 500.0],
            [2040.0, 540.0],
            [2000.0, 540.0],
        ];
        assert_eq!(window(&q, size), None);
    }
}

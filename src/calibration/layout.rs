//! The calibration marker layout (`calibration/layout.json`, `hashmark-layout/1`, spec
//! section 5): where the four mat markers lie in the table frame, and the intrinsics board.
//! Plain data, no OpenCV: the simulator draws it, calibration measures against it.

use crate::geometry::PlayArea;
use crate::models::ModelError;
use serde::{Deserialize, Serialize};

pub const LAYOUT_FORMAT: &str = "hashmark-layout/1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub format: String,
    pub mat_markers: MatMarkers,
    pub board: Board,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatMarkers {
    /// OpenCV predefined dictionary name, e.g. DICT_4X4_50.
    pub dictionary: String,
    /// Side of the black marker square.
    pub marker_mm: f64,
    pub markers: Vec<MatMarker>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatMarker {
    pub id: u32,
    /// Centre in the table frame, mm.
    pub centre: [f64; 2],
}

/// The ChArUco board used for camera intrinsics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Board {
    pub dictionary: String,
    pub squares_x: u32,
    pub squares_y: u32,
    pub square_mm: f64,
    pub marker_mm: f64,
}

impl MatMarkers {
    /// What is wrong with these markers, as (field, message): a table file carries them
    /// too (see `TableFile::mat_markers`).
    pub fn check(&self) -> Result<(), (String, String)> {
        if !(self.marker_mm.is_finite() && self.marker_mm > 0.0) {
            return Err((
                "mat_markers.marker_mm".into(),
                "must be a positive number".into(),
            ));
        }
        if self.markers.len() < 4 {
            return Err((
                "mat_markers.markers".into(),
                format!("needs at least 4 markers, found {}", self.markers.len()),
            ));
        }
        for (i, k) in self.markers.iter().enumerate() {
            if self.markers[..i].iter().any(|o| o.id == k.id) {
                return Err((
                    format!("mat_markers.markers[{i}].id"),
                    format!("duplicate id {}", k.id),
                ));
            }
            if !k.centre.iter().all(|v| v.is_finite()) {
                return Err((
                    format!("mat_markers.markers[{i}].centre"),
                    "not finite".into(),
                ));
            }
        }
        Ok(())
    }
}

impl Layout {
    /// The layout shipped in `calibration/layout.json`.
    pub fn builtin() -> Layout {
        Layout::from_json(
            "calibration/layout.json",
            include_str!("../../calibration/layout.json"),
        )
        .expect("the shipped calibration/layout.json is valid")
    }

    /// A layout file of the user's own (`hashmark-layout/1`): marker cards placed where the
    /// table has room for them, or printed at another size.
    pub fn load(path: &std::path::Path) -> Result<Layout, ModelError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
        Layout::from_json(&file, &text)
    }

    /// The built-in layout around `play`: the spec's cards at its corners (see
    /// [`Layout::for_play_area`]).
    pub fn around(play: PlayArea) -> Layout {
        Layout::builtin().for_play_area(crate::Models::builtin().play_areas.standard(), play)
    }

    /// This layout for another play area than the one it was drawn for (`from`): each mat
    /// marker keeps its place relative to the nearest corner of the play area, so the
    /// spec's cards outside a 3 ft x 3 ft mat's corners lie outside an epic mat's corners.
    /// The board is unchanged.
    pub fn for_play_area(&self, from: PlayArea, to: PlayArea) -> Layout {
        let mut out = self.clone();
        for m in &mut out.mat_markers.markers {
            if m.centre[0] > from.width_mm / 2.0 {
                m.centre[0] += to.width_mm - from.width_mm;
            }
            if m.centre[1] > from.height_mm / 2.0 {
                m.centre[1] += to.height_mm - from.height_mm;
            }
        }
        out
    }

    pub fn from_json(file: &str, text: &str) -> Result<Layout, ModelError> {
        let layout: Layout = crate::models::from_json(file, text)?;
        let bad = |field: &str, message: String| ModelError::Invalid {
            file: file.to_string(),
            field: field.to_string(),
            message,
        };
        if layout.format != LAYOUT_FORMAT {
            return Err(bad(
                "format",
                format!("expected \"{LAYOUT_FORMAT}\", found \"{}\"", layout.format),
            ));
        }
        layout
            .mat_markers
            .check()
            .map_err(|(field, message)| bad(&field, message))?;
        let b = &layout.board;
        if b.squares_x < 2 || b.squares_y < 2 || !(b.marker_mm > 0.0 && b.marker_mm < b.square_mm) {
            return Err(bad(
                "board",
                "needs at least 2 x 2 squares and 0 < marker_mm < square_mm".into(),
            ));
        }
        Ok(layout)
    }

    /// A mat marker's corners in the table frame, in OpenCV's order (top-left, top-right,
    /// bottom-right, bottom-left), printed upright: top is +y.
    pub fn marker_corners_mm(&self, id: u32) -> Option<[[f64; 2]; 4]> {
        let m = self.mat_markers.markers.iter().find(|m| m.id == id)?;
        let (cx, cy) = (m.centre[0], m.centre[1]);
        let h = self.mat_markers.marker_mm / 2.0;
        Some([
            [cx - h, cy + h],
            [cx + h, cy + h],
            [cx + h, cy - h],
            [cx - h, cy - h],
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_layout_is_the_spec() {
        let l = Layout::builtin();
        assert_eq!(l.mat_markers.dictionary, "DICT_4X4_50");
        assert_eq!(
            l.marker_corners_mm(1).unwrap(),
            [
                [929.4, -15.0],
                [989.4, -15.0],
                [989.4, -75.0],
                [929.4, -75.0]
            ]
        );
        assert_eq!(
            (
                l.board.squares_x,
                l.board.squares_y,
                l.board.square_mm,
                l.board.marker_mm
            ),
            (7, 5, 30.0, 22.0)
        );
        assert!(l.marker_corners_mm(9).is_none());
    }

    /// The spec's four cards sit 45 mm out from each corner of the 914.4 mm mat; on an epic
    /// mat (1828.8 x 914.4) the two on the right move with its right edge.
    #[test]
    fn a_layout_follows_the_play_areas_corners() {
        let standard = PlayArea {
            width_mm: 914.4,
            height_mm: 914.4,
        };
        let epic = PlayArea {
            width_mm: 1828.8,
            height_mm: 914.4,
        };
        let l = Layout::builtin();
        let e = l.for_play_area(standard, epic);
        let centres: Vec<[f64; 2]> = e.mat_markers.markers.iter().map(|m| m.centre).collect();
        let want = [
            [-45.0, -45.0],
            [1873.8, -45.0],
            [1873.8, 959.4],
            [-45.0, 959.4],
        ];
        for (got, want) in centres.iter().zip(want) {
            assert!(
                (got[0] - want[0]).abs() < 1e-9 && (got[1] - want[1]).abs() < 1e-9,
                "{centres:?}"
            );
        }
        assert_eq!(e.board, l.board);
        assert_eq!(l.for_play_area(standard, standard), l);
    }

    #[test]
    fn wrong_layouts_are_refused() {
        let text = include_str!("../../calibration/layout.json");
        let e =
            Layout::from_json("layout.json", &text.replace("\"id\": 2", "\"id\": 1")).unwrap_err();
        assert!(
            e.to_string()
                .contains("mat_markers.markers[2].id: duplicate id 1"),
            "{e}"
        );
        let e =
            Layout::from_json("layout.json", &text.replace("hashmark-layout/1", "x")).unwrap_err();
        assert!(
            e.to_string().starts_with("layout.json: format: expected"),
            "{e}"
        );
    }
}

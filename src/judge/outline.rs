//! Measured outlines near the roll that detection could not name. With an empty-table
//! frame, whatever differs from it and is neither a found ship nor a standard obstacle is
//! reported as its measured polygon, and the rules treat it as an obstacle (a landing on it
//! is blocked, which is also right when it is a ship). What it is, detection cannot say: on
//! the four rendered sets (scripts/detect-report.sh, with the frame) 14 of the 16 such
//! outlines lay over a ship whose base was hidden under its miniature, one was a standard
//! debris field fitted too loosely to be named, one a change of light. Without the frame,
//! a miniature with no base found under it is reported so too (see
//! `crate::vision::detect::hidden`). So the judge is told to look.

use super::{Picture, UNSURE_CONFIDENCE};
use crate::scene::{ObstacleSpec, Scene};
use serde::{Deserialize, Serialize};

/// One such outline, in words a judge can act on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutlineNote {
    pub id: String,
    pub text: String,
}

impl OutlineNote {
    /// Whether `o` is a detected outline no standard model fits (a polygon typed into a
    /// scene by hand carries no confidence and is taken as given).
    pub fn is_unidentified(o: &ObstacleSpec) -> bool {
        o.model.is_none()
            && o.polygon.is_some()
            && o.quality.confidence.is_some_and(|c| c < UNSURE_CONFIDENCE)
    }

    pub fn of(o: &ObstacleSpec) -> Option<OutlineNote> {
        Self::is_unidentified(o).then(|| OutlineNote {
            id: o.id.clone(),
            text: if Self::is_hidden_base(o) {
                format!(
                    "{} is the outline of a miniature with no base seen under it (most \
                     likely a ship whose whole base it hides); it counts as an obstacle \
                     here: check it by eye",
                    o.id
                )
            } else {
                format!(
                    "{} is a measured outline no standard obstacle fits: something not on \
                     the empty table (often a ship whose base detection could not see under \
                     its miniature); it counts as an obstacle here: check it by eye",
                    o.id
                )
            },
        })
    }

    /// Whether `o` is a miniature's outline with no base found under it (see
    /// `crate::vision::detect::hidden`), not a region that differs from the empty table.
    pub fn is_hidden_base(o: &ObstacleSpec) -> bool {
        o.quality.doubts.contains(&crate::scene::Doubt::HiddenBase)
    }
}

/// The notes for every unidentified outline that reaches into the picture's square (the
/// landings and what is beside them).
pub fn outlines_near(scene: &Scene, picture: &Picture) -> Vec<OutlineNote> {
    let [left, top] = picture.top_left_mm;
    let (right, bottom) = (left + picture.view_mm, top - picture.view_mm);
    scene
        .obstacles
        .iter()
        .filter(|o| {
            o.polygon.as_ref().is_some_and(|ring| {
                let [x0, y0, x1, y1] = crate::geometry::polygon::ring_bounds(ring);
                x1 >= left && x0 <= right && y1 >= bottom && y0 <= top
            })
        })
        .filter_map(OutlineNote::of)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::OutlineNote;
    use crate::scene::{Doubt, ObstacleSpec, Quality};

    fn outline(doubts: Vec<Doubt>) -> ObstacleSpec {
        ObstacleSpec {
            id: "o4".into(),
            model: None,
            x: None,
            y: None,
            rotation_deg: None,
            polygon: Some(vec![[0.0, 0.0], [40.0, 0.0], [40.0, 40.0], [0.0, 40.0]]),
            quality: Quality {
                confidence: Some(0.1),
                doubts,
                ..Quality::default()
            },
        }
    }

    /// A miniature's outline is named as one; a region that differs from the empty table
    /// as that. Both are to be checked by eye.
    #[test]
    fn a_hidden_bases_outline_says_what_it_is() {
        let hidden = OutlineNote::of(&outline(vec![Doubt::HiddenBase])).expect("note");
        assert!(
            hidden
                .text
                .contains("a miniature with no base seen under it")
        );
        let measured = OutlineNote::of(&outline(Vec::new())).expect("note");
        assert!(measured.text.contains("not on the empty table"));
        for n in [&hidden, &measured] {
            assert!(n.text.starts_with("o4 ") && n.text.ends_with("check it by eye"));
        }
    }
}

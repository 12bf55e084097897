//! Miniatures with no base seen under them, as outlines for the judge to look at.
//!
//! A ship whose miniature hides its whole base has no base to fit: a miss, silent, and a
//! roll beside it would be ruled as if the table were empty there. Its miniature still
//! shows (see [`super::bases::HiddenMini`]). It goes into the scene as a measured outline
//! with the doubt [`Doubt::HiddenBase`], as an empty-table frame's unnamed regions do (see
//! `crate::judge::OutlineNote`): the rules treat it as an obstacle, which blocks a landing
//! on it as the ship would, and a judge is told to check it by eye.

use super::base_search::under_blob;
use super::bases::{FoundBase, HiddenMini};
use crate::geometry::polygon::{ring_contains, ring_distance, ring_mean};
use crate::models::Models;
use crate::scene::{Doubt, ObstacleSpec, Quality, ShipSpec};
use crate::vision::Camera;

/// A blob whose point on the mat lies this near an obstacle's outline (mm) is that
/// obstacle's: a rock's pale face, or a part of it its outline's fit left out.
const OBSTACLE_NEAR_MM: f64 = 10.0;
/// A body whose centre lies within a found base's half width and this much (mm) is that
/// ship's own miniature (a second blob of it, its stripe splitting it): the outlines over
/// missed ships on the four rendered sets had their centres 1-10 mm from the true base
/// centre, and a neighbour in contact stands a base's width away.
const BASE_NEAR_MM: f64 = 5.0;
/// What is said of where such an outline lies: it is the miniature's hull moved down by
/// a typical miniature's height, not a base's outline (mm, 1 sigma).
const HIDDEN_SIGMA_MM: f64 = 10.0;
/// Its confidence: it is something, probably a ship, and nothing more is known.
const HIDDEN_CONFIDENCE: f64 = 0.1;

/// The outlines of the miniatures in `hidden` that are neither an obstacle in `obstacles`
/// nor a found base's own, numbered on from the obstacles' ids.
pub fn hidden_outlines(
    hidden: &[HiddenMini],
    obstacles: &[ObstacleSpec],
    bases: &[FoundBase],
    camera: &Camera,
    models: &Models,
) -> Vec<ObstacleSpec> {
    let z = models.bases.base_top_height_mm;
    let outlines: Vec<Vec<[f64; 2]>> = obstacles
        .iter()
        .filter_map(|o| o.outline(models).ok())
        .collect();
    let mut out: Vec<ObstacleSpec> = Vec::new();
    for h in hidden {
        let Some(centre) = ring_mean(&h.outline) else {
            continue;
        };
        let on_mat = under_blob(camera, h.blob, z, 0.0);
        let obstacle = outlines.iter().any(|o| {
            ring_contains(o, on_mat)
                || ring_distance(on_mat, o) <= OBSTACLE_NEAR_MM
                || ring_contains(o, centre)
        });
        // A found ship's own miniature (a second blob of it), or a body that takes in
        // part of one (two miniatures of ships in contact crowd into one blob): an outline
        // over a found base would block that ship's landings beside it.
        let own = bases.iter().any(|b| {
            let d = (b.fit.centre[0] - centre[0]).hypot(b.fit.centre[1] - centre[1]);
            d < b.fit.half + BASE_NEAR_MM || ring_contains(&h.outline, b.fit.centre)
        });
        // Two blobs of one miniature give one outline.
        let again = out
            .iter()
            .any(|o| o.polygon.as_ref().is_some_and(|p| ring_contains(p, centre)));
        if obstacle || own || again {
            continue;
        }
        out.push(ObstacleSpec {
            id: String::new(),
            model: None,
            x: None,
            y: None,
            rotation_deg: None,
            polygon: Some(h.outline.clone()),
            quality: Quality {
                sigma_mm: Some(HIDDEN_SIGMA_MM),
                sigma_deg: None,
                confidence: Some(HIDDEN_CONFIDENCE),
                doubts: vec![Doubt::HiddenBase],
                ..Quality::default()
            },
        });
    }
    for (n, o) in out.iter_mut().enumerate() {
        o.id = format!("o{}", obstacles.len() + n + 1);
    }
    out
}

/// `obstacles` without the miniatures' outlines that stand over one of `ships`: a stream
/// holds a ship its search did not find this time (see `super::stream`), and the
/// miniature over it, no longer any found base's, is outlined; its own outline would then
/// block that ship's landings beside it.
pub fn without_outlines_over(obstacles: &mut Vec<ObstacleSpec>, ships: &[ShipSpec]) {
    obstacles.retain(|o| {
        !(o.quality.doubts.contains(&Doubt::HiddenBase)
            && o.polygon
                .as_ref()
                .is_some_and(|p| ships.iter().any(|s| ring_contains(p, [s.x, s.y]))))
    });
}

#[cfg(test)]
mod tests {
    use super::without_outlines_over;
    use crate::models::BaseSize;
    use crate::scene::{Doubt, ObstacleSpec, Quality, ShipSpec};

    fn square(id: &str, x: f64, doubts: Vec<Doubt>) -> ObstacleSpec {
        ObstacleSpec {
            id: id.into(),
            model: None,
            x: None,
            y: None,
            rotation_deg: None,
            polygon: Some(vec![[x, 0.0], [x + 50.0, 0.0], [x + 50.0, 50.0], [x, 50.0]]),
            quality: Quality {
                confidence: Some(0.1),
                doubts,
                ..Quality::default()
            },
        }
    }

    /// Of two miniatures' outlines, the one over a (held) ship goes; a measured outline
    /// over it, from the empty-table frame, stays (it is something else laid there).
    #[test]
    fn a_miniatures_outline_over_a_held_ship_is_dropped() {
        let mut obstacles = vec![
            square("o1", 0.0, vec![Doubt::HiddenBase]),
            square("o2", 100.0, vec![Doubt::HiddenBase]),
            square("o3", 0.0, Vec::new()),
        ];
        let ship = ShipSpec {
            id: "s1".into(),
            size: BaseSize::Small,
            x: 25.0,
            y: 25.0,
            heading_deg: 0.0,
            quality: Quality::default(),
        };
        without_outlines_over(&mut obstacles, &[ship]);
        let ids: Vec<&str> = obstacles.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["o2", "o3"]);
    }
}

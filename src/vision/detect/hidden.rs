//! Miniatures with no base seen under them, as outlines for the judge to look at.
//!
//! A ship whose miniature hides its whole base has no base to fit: a miss, silent, and a
//! roll beside it would be ruled as if the table were empty there. Its miniature still
//! shows (see [`HiddenMini`]). It goes into the scene as a measured outline
//! with the doubt [`Doubt::HiddenBase`], as an empty-table frame's unnamed regions do (see
//! `crate::judge::OutlineNote`): the rules treat it as an obstacle, which blocks a landing
//! on it as the ship would, and a judge is told to check it by eye.

use super::base_search::{BLOB_MIN_VALUE, Blob, MiniMask, mean_chroma, under_blob};
use super::bases::{FoundBase, MINI_HEIGHT_MM};
use crate::geometry::PlayArea;
use crate::geometry::polygon::{ring_contains, ring_distance, ring_mean};
use crate::models::Models;
use crate::scene::{Doubt, ObstacleSpec, Quality, ShipSpec};
use crate::vision::{Camera, VisionError};
use opencv::core::Mat;

/// A miniature under which no base was found: a ship whose base it hides (on the four
/// rendered sets of scripts/detect-report.sh, 13 of the 18 missed ships were such a blob,
/// their bases out of sight but for a corner or two). Reported for the judge to look at
/// (see [`super::hidden`]), never as a ship: nothing says its size, where its base lies
/// under it, or which way it faces.
#[derive(Clone, Debug)]
pub struct HiddenMini {
    /// The blob (table mm, seen in the base-top plane).
    pub blob: [f64; 2],
    /// The body's convex hull over the point under it (table mm): where the miniature
    /// stands, moved from where the camera sees it raised.
    pub outline: Vec<[f64; 2]>,
    /// The body's area (mm2, as seen).
    pub area_mm2: f64,
}

/// A body this big (mm2, half a small base's top) may be a miniature's: on the four
/// rendered sets the grey-white [`MiniMask`] parts about the blobs with no base were
/// 1200-9050 mm2 under the missed ships; the mask leaves out most of a rock's or a
/// planet's blob (coloured, or darker), and of those bigger than this that were no ship,
/// one was a rock's pale face (860 mm2, which its outline then claims, see
/// `super::hidden`) and four pale patches of planets (1200-2350 mm2, told by their tint,
/// see `HIDDEN_MAX_CHROMA`).
const HIDDEN_MIN_AREA_MM2: f64 = 800.0;
/// The most a miniature's body is tinted (mean chroma over max of its pixels, see
/// [`MiniMask::mean_chroma`]): grey paint with a coloured stripe and engine glow. The
/// miniatures over the missed bases of the four rendered sets showed 0.04-0.19; the pale
/// patches of planets that passed for one, 0.23-0.29 (the limit was set on these same
/// tables: a tinted miniature, painted red or blue, would not be outlined).
const HIDDEN_MAX_CHROMA: f64 = 0.21;
/// The most a miniature's body shows (mm2): the bodies over the missed ships of the four
/// rendered sets were 1200-9050 mm2 (see `HIDDEN_MIN_AREA_MM2`), over the dark-miniature
/// tables of seeds 1-30 at most 6100. A whole miniature's region (see `filled_blobs`)
/// gathers the mask's parts over its own reach, and on the real photos of something else
/// (tests/detect_realdata.rs) white paper so gathered made bodies of 10500-39000 mm2 and
/// 13 more outlines of "miniatures with no base" (23 where there had been 10); with this
/// limit 15, and the rendered sets and dark tables keep every outline.
const HIDDEN_MAX_AREA_MM2: f64 = 10000.0;
/// How far from the blob (in its radii) the body's parts are gathered.
const HIDDEN_REACH: f64 = 1.2;

/// Where the mask shows no body of a miniature's size about a blob with no base, the
/// bright blob itself may be one: a miniature painted a darker grey than the mask takes
/// (sRGB 120-140 under the table's light; the fixed set's seed 6 s1 and the third's seed
/// 109 s1, medium bases wholly under them, were missed without a word). Such a blob is
/// outlined where it is grey (mean chroma of its pixels brighter than the blob's level,
/// [`BLOB_MIN_VALUE`]: 0.04-0.05 over those two; three in four of the blobs over found
/// bases are as grey as this limit) and lies wholly on the mat: on the four rendered sets
/// (scripts/detect-report.sh) the blobs this found otherwise were the grey table beside
/// the mat's corners (chroma 0.10-0.16, reaching 20 mm and more past the edge) and a pale
/// planet at a corner (0.19). Blobs beside an obstacle are its own, as for any outline
/// (see `super::hidden`).
const HIDDEN_BLOB_MAX_CHROMA: f64 = 0.15;
/// How far (mm) such a blob may reach past the play area's edge (a miniature hangs over
/// its base, and the camera sees it raised).
const HIDDEN_OFF_MAT_MM: f64 = 5.0;

impl HiddenMini {
    /// The miniature about a blob with no base under it, if its body is a miniature's size.
    pub(super) fn under(
        minis: &MiniMask,
        ortho: &Mat,
        camera: &Camera,
        z: f64,
        play: &PlayArea,
        blob: &Blob,
    ) -> Result<Option<HiddenMini>, VisionError> {
        let reach = HIDDEN_REACH * (blob.area_mm2 / std::f64::consts::PI).sqrt();
        let body = minis.body_near(blob.centre, reach)?;
        let (hull, area) = match body {
            Some(b) if b.area_mm2 >= HIDDEN_MIN_AREA_MM2 => {
                if b.area_mm2 > HIDDEN_MAX_AREA_MM2 {
                    return Ok(None);
                }
                if minis.mean_chroma(ortho, &b.hull)? > HIDDEN_MAX_CHROMA {
                    return Ok(None);
                }
                (b.hull, b.area_mm2)
            }
            // A miniature painted a darker grey than the mask takes: its bright blob is
            // all there is of it (see `HIDDEN_BLOB_MAX_CHROMA`).
            _ if blob.area_mm2 >= HIDDEN_MIN_AREA_MM2
                && blob.hull.len() >= 3
                && blob.hull.iter().all(|p| play.holds(*p, HIDDEN_OFF_MAT_MM)) =>
            {
                let c = mean_chroma(ortho, minis.view(), &blob.hull, BLOB_MIN_VALUE)?;
                if c > HIDDEN_BLOB_MAX_CHROMA {
                    return Ok(None);
                }
                (blob.hull.clone(), blob.area_mm2)
            }
            _ => return Ok(None),
        };
        Ok(Some(HiddenMini {
            blob: blob.centre,
            outline: hull
                .into_iter()
                .map(|p| under_blob(camera, p, z, MINI_HEIGHT_MM))
                .collect(),
            area_mm2: area,
        }))
    }
}

/// A blob whose point on the mat lies this near an obstacle's outline (mm) is that
/// obstacle's: a rock's pale face, or a part of it its outline's fit left out.
const OBSTACLE_NEAR_MM: f64 = 10.0;
/// A body whose centre lies within a found base's half width and this much (mm) is that
/// ship's own miniature (a second blob of it, its stripe splitting it): the outlines over
/// missed ships on the four rendered sets had their centres 1-10 mm from the true base
/// centre, and a neighbour in contact stands a base's width away.
const BASE_NEAR_MM: f64 = 5.0;
/// What is said of where such an outline lies: it is the miniature's hull moved down by
/// a typical miniature's height, not a base's outline, and the base under it may reach
/// well past it (mm, 1 sigma; a landing within two of it is too close to call). At 10 mm,
/// on the close-call tables of `hashmark bench close-calls` (seeds 1-30) a large base
/// reached 27 mm past its miniature's outline, and three positions of a roll that overlapped
/// it by 3 mm were called legal and sure (test `close_calls`); at 20 mm none was, and 5 of
/// their 1380 positions said sure and right were left to the judge (3 of 1221 on the five
/// rendered sets).
const HIDDEN_SIGMA_MM: f64 = 20.0;
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

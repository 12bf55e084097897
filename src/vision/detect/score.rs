//! Detection against the truth (rendered scenes): which ships and obstacles were found,
//! how far off, and what was missed or invented. Used by `hashmark bench detect` and the
//! tests, so both report the same numbers.

use crate::geometry::polygon::{ring_contains, ring_distance};
use crate::models::{BaseSize, Models};
use crate::scene::Scene;
use serde::Serialize;

/// A true ship and what detection made of it.
#[derive(Clone, Debug, Serialize)]
pub struct ShipMatch {
    pub id: String,
    /// The detected ship's id.
    pub found_id: String,
    pub size: BaseSize,
    pub found_size: BaseSize,
    pub centre_error_mm: f64,
    /// Heading error modulo 90 deg (the outline's own error), and whether the facing (which
    /// of the four) was right.
    pub heading_error_deg: f64,
    pub facing_right: bool,
    pub sigma_mm: Option<f64>,
    pub sigma_deg: Option<f64>,
    pub confidence: Option<f64>,
    /// What detection said it doubts of the ship found (see [`crate::scene::Doubt`]).
    pub doubts: Vec<crate::scene::Doubt>,
    /// How much of the base's rim the camera saw, where the truth's world is known (see
    /// [`crate::vision::sim::visibility`]; `hashmark bench detect` fills it in).
    pub rim_view: Option<crate::vision::sim::visibility::RimView>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ObstacleMatch {
    pub id: String,
    pub model: Option<String>,
    pub model_right: bool,
    pub hausdorff_mm: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct SceneScore {
    pub ships: Vec<ShipMatch>,
    pub missed_ships: Vec<String>,
    pub false_ships: usize,
    /// The confidence of each invented ship (a judge is asked to check those below
    /// `judge::UNSURE_CONFIDENCE`).
    pub false_ship_confidences: Vec<Option<f64>>,
    pub obstacles: Vec<ObstacleMatch>,
    pub missed_obstacles: Vec<String>,
    /// Detected obstacles no true one matches (measured outlines among them).
    pub false_obstacles: usize,
    /// Missed ships a measured outline (no standard model) covers: with an empty-table
    /// frame, what differs from it around a base detection could not see, and with or
    /// without it, a miniature with no base seen under it (judge mode asks to check such an
    /// outline by eye).
    pub missed_ships_outlined: Vec<String>,
    /// Of `false_obstacles`, the measured outlines that cover a missed ship.
    pub outlines_on_missed_ships: usize,
}

/// A detected ship counts as a true one within this distance of its centre (mm).
const SHIP_GATE_MM: f64 = 15.0;
/// A detected obstacle counts as a true one within this outline distance (mm).
const OBSTACLE_GATE_MM: f64 = 20.0;
/// A measured outline covers a missed ship whose centre lies inside it or this near (mm).
const OUTLINE_GATE_MM: f64 = 10.0;

impl SceneScore {
    /// Each found ship's true id and detected id (the pairs `judge::agreement` rolls).
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.ships
            .iter()
            .map(|m| (m.id.clone(), m.found_id.clone()))
            .collect()
    }
}

pub fn score(truth: &Scene, found: &Scene, models: &Models) -> SceneScore {
    let mut out = SceneScore::default();
    let mut used = vec![false; found.ships.len()];
    for t in &truth.ships {
        let best = found
            .ships
            .iter()
            .enumerate()
            .filter(|(i, _)| !used[*i])
            .map(|(i, f)| (i, f, (f.x - t.x).hypot(f.y - t.y)))
            .min_by(|a, b| a.2.total_cmp(&b.2));
        match best {
            Some((i, f, d)) if d <= SHIP_GATE_MM => {
                used[i] = true;
                let dh = signed_deg(f.heading_deg - t.heading_deg);
                let mod90 = signed_deg90(dh);
                out.ships.push(ShipMatch {
                    id: t.id.clone(),
                    found_id: f.id.clone(),
                    size: t.size,
                    found_size: f.size,
                    centre_error_mm: d,
                    heading_error_deg: mod90,
                    facing_right: dh.abs() < 45.0,
                    sigma_mm: f.quality.sigma_mm,
                    sigma_deg: f.quality.sigma_deg,
                    confidence: f.quality.confidence,
                    doubts: f.quality.doubts.clone(),
                    rim_view: None,
                });
            }
            _ => out.missed_ships.push(t.id.clone()),
        }
    }
    out.false_ships = used.iter().filter(|u| !**u).count();
    out.false_ship_confidences = found
        .ships
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(f, _)| f.quality.confidence)
        .collect();
    let mut used = vec![false; found.obstacles.len()];
    let found_rings: Vec<Option<Vec<[f64; 2]>>> = found
        .obstacles
        .iter()
        .map(|o| o.outline(models).ok())
        .collect();
    for t in &truth.obstacles {
        let Ok(ring) = t.outline(models) else {
            continue;
        };
        let best = found_rings
            .iter()
            .enumerate()
            .filter(|(i, r)| !used[*i] && r.is_some())
            .filter_map(|(i, r)| r.as_ref().map(|r| (i, hausdorff(&ring, r))))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match best {
            Some((i, h)) if h <= OBSTACLE_GATE_MM => {
                used[i] = true;
                let f = &found.obstacles[i];
                out.obstacles.push(ObstacleMatch {
                    id: t.id.clone(),
                    model: f.model.clone(),
                    model_right: f.model == t.model,
                    hausdorff_mm: h,
                });
            }
            _ => out.missed_obstacles.push(t.id.clone()),
        }
    }
    out.false_obstacles = used.iter().filter(|u| !**u).count();
    let outlines: Vec<&Vec<[f64; 2]>> = found
        .obstacles
        .iter()
        .zip(&found_rings)
        .zip(&used)
        .filter(|((o, _), u)| o.model.is_none() && !**u)
        .filter_map(|((_, r), _)| r.as_ref())
        .collect();
    let covers = |ring: &[[f64; 2]], p: [f64; 2]| {
        ring_contains(ring, p) || ring_distance(p, ring) <= OUTLINE_GATE_MM
    };
    let missed: Vec<(&str, [f64; 2])> = truth
        .ships
        .iter()
        .filter(|t| out.missed_ships.contains(&t.id))
        .map(|t| (t.id.as_str(), [t.x, t.y]))
        .collect();
    out.missed_ships_outlined = missed
        .iter()
        .filter(|(_, p)| outlines.iter().any(|r| covers(r, *p)))
        .map(|(id, _)| id.to_string())
        .collect();
    out.outlines_on_missed_ships = outlines
        .iter()
        .filter(|r| missed.iter().any(|(_, p)| covers(r, *p)))
        .count();
    out
}

fn signed_deg(d: f64) -> f64 {
    let d = d.rem_euclid(360.0);
    if d > 180.0 { d - 360.0 } else { d }
}

fn signed_deg90(d: f64) -> f64 {
    let d = d.rem_euclid(90.0);
    if d > 45.0 { d - 90.0 } else { d }
}

/// Hausdorff distance between two outlines (vertices to the other's edges, both ways; the
/// outlines are dense enough that vertices stand for the whole boundary).
pub fn hausdorff(a: &[[f64; 2]], b: &[[f64; 2]]) -> f64 {
    let ab = a.iter().map(|p| ring_distance(*p, b)).fold(0.0, f64::max);
    let ba = b.iter().map(|p| ring_distance(*p, a)).fold(0.0, f64::max);
    ab.max(ba)
}

/// A scene rendered by the simulator from `seed`'s camera and light, and what detection
/// finds in it through that very camera (no calibration from images): what the close-call
/// tables and their tests measure.
pub struct Rendered {
    pub camera: crate::vision::Camera,
    /// The photograph as rendered (JPEG), before any camera change.
    pub jpg: Vec<u8>,
    pub found: Scene,
}

/// What the camera's calibration is taken to add when detecting through the true camera
/// (mm, 1 sigma): only detection's own error is tested (the rendered sets' calibrations
/// from their images say 0.07-0.30 mm, median 0.18, in camera.json's
/// `table_uncertainty_mm`).
pub const TRUE_CAMERA_SIGMA_MM: f64 = 0.05;

/// Renders `scene` at `resolution` (`seed` picks camera, light and noise), reads the frame
/// through `change` if given, and detects it through the camera it was rendered with.
pub fn rendered_and_detected(
    scene: &Scene,
    seed: u64,
    resolution: crate::vision::Resolution,
    change: Option<crate::vision::sim::camera_change::CameraChange>,
    models: &Models,
) -> Result<Rendered, crate::vision::VisionError> {
    use crate::vision::cv;
    use crate::vision::sim::{camera_for, photograph, world::World};
    let area = scene.play_area;
    let camera = camera_for(seed, resolution, [area.width_mm, area.height_mm]);
    let world = World::build(scene, seed, seed, models)?;
    let jpg = photograph(&world, &camera, seed, 3)?;
    let frame = match change {
        Some(c) => c.apply(&cv::decode(&jpg)?, seed)?,
        None => cv::decode(&jpg)?,
    };
    let cal = super::Calibrated {
        camera: camera.clone(),
        play_area: area,
        layout: crate::calibration::Layout::builtin(),
        sigma_mm: TRUE_CAMERA_SIGMA_MM,
    };
    let found = super::Detector::new(cal, models)?.detect(&frame)?;
    Ok(Rendered { camera, jpg, found })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measured_outline_over_a_missed_ship_is_counted_as_such() {
        let models = Models::builtin();
        let scene = |ships: &str, obstacles: &str| {
            let text = format!(
                r#"{{"format": "hashmark-scene/1", "play_area": {{"width_mm": 914.4, "height_mm": 914.4}},
                "ships": [{ships}], "obstacles": [{obstacles}]}}"#
            );
            Scene::from_json(&text, models).unwrap()
        };
        let truth = scene(
            r#"{"id": "s1", "size": "small", "x": 100, "y": 100, "heading_deg": 0},
               {"id": "s2", "size": "small", "x": 500, "y": 500, "heading_deg": 0}"#,
            "",
        );
        // s1 lies under a measured outline, s2 12 mm beyond one's edge; a third outline
        // covers no ship.
        let found = scene(
            "",
            r#"{"id": "o1", "polygon": [[80, 80], [120, 80], [120, 120], [80, 120]], "confidence": 0.3},
               {"id": "o2", "polygon": [[400, 400], [488, 400], [488, 488], [400, 488]], "confidence": 0.3},
               {"id": "o3", "polygon": [[700, 700], [740, 700], [740, 740], [700, 740]], "confidence": 0.3}"#,
        );
        let s = score(&truth, &found, models);
        assert_eq!(s.missed_ships, ["s1", "s2"]);
        assert_eq!(s.missed_ships_outlined, ["s1"]);
        assert_eq!((s.false_obstacles, s.outlines_on_missed_ships), (3, 1));
    }

    #[test]
    fn hausdorff_of_shifted_square() {
        let a = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]];
        let b = a.map(|p| [p[0] + 0.5, p[1]]);
        assert!((hausdorff(&a, &b) - 0.5).abs() < 1e-9);
        assert_eq!(signed_deg90(89.0), -1.0);
        assert_eq!(signed_deg(350.0), -10.0);
    }
}

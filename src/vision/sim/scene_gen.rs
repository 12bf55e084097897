//! Random but legal game states: ships and standard obstacles inside the play area, nothing
//! overlapping, written as the spec's `hashmark-scene/1` so detection output can be compared
//! with it field by field.

use crate::geometry::PlayArea;
use crate::models::{BaseSize, Models};
use crate::scene::{ObstacleSpec, Quality, Scene, ShipSpec};
use crate::vision::rng::Rng;

/// A circle that contains an item, for conservative non-overlap tests.
struct Disc {
    x: f64,
    y: f64,
    r: f64,
}

fn clear(discs: &[Disc], d: &Disc, gap: f64) -> bool {
    discs
        .iter()
        .all(|o| ((o.x - d.x).powi(2) + (o.y - d.y).powi(2)).sqrt() >= o.r + d.r + gap)
}

/// A scene for `seed`: 3-8 ships of mixed sizes and 2-6 obstacles on the standard play area.
pub fn random_scene(seed: u64, models: &Models) -> Scene {
    random_scene_on(seed, models, models.play_areas.standard())
}

/// [`random_scene`] on another play area (an epic one): as many ships and obstacles, spread
/// over it.
pub fn random_scene_on(seed: u64, models: &Models, area: PlayArea) -> Scene {
    let mut rng = Rng::stream(seed, "scene");
    let mut scene = Scene::new(area);
    let mut discs: Vec<Disc> = Vec::new();
    let n_obstacles = rng.int(2, 6) as usize;
    let library: Vec<_> = models.obstacles.iter().collect();
    let mut tries = 0;
    while scene.obstacles.len() < n_obstacles && tries < 1000 {
        tries += 1;
        let m = *rng.pick(&library);
        let r = m
            .outline
            .iter()
            .map(|p| (p[0] * p[0] + p[1] * p[1]).sqrt())
            .fold(0.0, f64::max);
        let d = Disc {
            x: rng.range(r + 20.0, area.width_mm - r - 20.0),
            y: rng.range(r + 20.0, area.height_mm - r - 20.0),
            r,
        };
        if clear(&discs, &d, 10.0)
            && !scene
                .obstacles
                .iter()
                .any(|o| o.model.as_deref() == Some(m.xws.as_str()))
        {
            let id = format!("o{}", scene.obstacles.len() + 1);
            let rot = (rng.range(0.0, 360.0) * 10.0).round() / 10.0;
            scene
                .obstacles
                .push(ObstacleSpec::placed(&id, &m.xws, d.x, d.y, rot));
            discs.push(d);
        }
    }
    let n_ships = rng.int(3, 8) as usize;
    let mut tries = 0;
    while scene.ships.len() < n_ships && tries < 2000 {
        tries += 1;
        let u = rng.f64();
        let size = if u < 0.55 {
            BaseSize::Small
        } else if u < 0.8 {
            BaseSize::Medium
        } else {
            BaseSize::Large
        };
        let half = models.bases.get(size).width_mm / 2.0 + models.bases.guides.protrusion_mm;
        let r = half * std::f64::consts::SQRT_2;
        let d = Disc {
            x: rng.range(r + 5.0, area.width_mm - r - 5.0),
            y: rng.range(r + 5.0, area.height_mm - r - 5.0),
            r,
        };
        if clear(&discs, &d, 8.0) {
            scene.ships.push(ShipSpec {
                id: format!("s{}", scene.ships.len() + 1),
                size,
                x: (d.x * 100.0).round() / 100.0,
                y: (d.y * 100.0).round() / 100.0,
                heading_deg: (rng.range(0.0, 360.0) * 100.0).round() / 100.0,
                quality: Quality::default(),
            });
            discs.push(d);
        }
    }
    scene
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{Point, Pose, Shape, footprint};

    #[test]
    fn scenes_are_valid_and_sized() {
        let models = Models::builtin();
        for seed in 0..40 {
            let s = random_scene(seed, models);
            s.check(models).expect("valid scene");
            assert!((3..=8).contains(&s.ships.len()), "seed {seed}");
            assert!((2..=6).contains(&s.obstacles.len()), "seed {seed}");
            crate::Table::from_scene(&s, models).expect("table");
            // Nothing overlaps and every base is inside the play area, by the rules'
            // own geometry.
            let mut shapes = Vec::new();
            for ship in &s.ships {
                let base =
                    footprint::base(models.bases.get(ship.size).width_mm, &models.bases.guides);
                let pose = Pose::new(ship.x, ship.y, ship.heading_deg);
                let shape = base.transformed(&pose.isometry());
                for p in shape.outline() {
                    assert!(
                        p.x > 0.0 && p.y > 0.0 && p.x < 914.4 && p.y < 914.4,
                        "seed {seed}"
                    );
                }
                shapes.push(shape);
            }
            for o in &s.obstacles {
                let ring: Vec<Point> = o
                    .outline(models)
                    .expect("outline")
                    .iter()
                    .map(|p| Point::new(p[0], p[1]))
                    .collect();
                shapes.push(Shape::from_polygon(&ring).expect("obstacle shape"));
            }
            for i in 0..shapes.len() {
                for j in i + 1..shapes.len() {
                    assert!(
                        !shapes[i].overlaps(&shapes[j]),
                        "seed {seed}: items {i} and {j} overlap"
                    );
                }
            }
        }
    }
}

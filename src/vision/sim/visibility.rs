//! How much of each ship base's outline a rendered camera sees: the truth behind a
//! detection error. A base whose miniature, seen from the camera, covers its whole rim
//! shows no edge to fit, and no detector can place it to a millimetre; nor can one whose
//! rim, black, lies against black space and dark ship art. One in view with print or mat
//! brighter than its rim beside it can be. `hashmark bench detect` reports the share beside each base's error, so the
//! accuracy figures say which kind of base they come from.

use super::render::{base_top_colour, first_hit, ground_colour};
use super::texture::Rgb;
use super::world::World;
use crate::vision::camera::{Camera, Ray};
use nalgebra::Vector3;

/// Where the rim is sampled along each side (mm): every this far, this far clear of the
/// corners (a corner's rim belongs to two sides).
const STEP_MM: f64 = 1.0;
const CORNER_CLEAR_MM: f64 = 2.0;
/// A sample is in view when the first surface its ray meets lies this near it (mm): the
/// rim's own top, not something in front of it.
const SEEN_MM: f64 = 0.05;
/// Where the two sides of each edge are read, away from it (mm): the token just inside
/// its edge, the ground just outside the base.
const TOKEN_IN_MM: f64 = 0.4;
const GROUND_OUT_MM: f64 = 0.6;
/// An edge shows where its bright side outshines the black rim by this much under the
/// table's light there (linear light, 0-255, before the camera's noise and JPEG): twice
/// the rim's own level (sRGB 22 is 2 levels), the step from the rim to print or mat of
/// sRGB 40 or so under an even light. Darker steps drown in a dark frame's noise. Set by
/// looking at the bands of `hashmark bench detect` on the rendered sets: at 1 or 2 nearly
/// every base in view counted as showing; at 4 most bases more than 2 mm off fell into
/// the lower bands.
const EDGE_LEVEL: f64 = 4.0;

/// How much of a base's outline the camera could use.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct RimView {
    /// Share (0-1) of the rim, the black band between the base's edge and the printed
    /// token whose two edges the detector fits, that the camera sees.
    pub in_view: f64,
    /// Share of the rim in view with an edge that shows beside it: the token's print or
    /// the ground outside, in view too and brighter than the rim by `EDGE_LEVEL`. A black
    /// base on a black stretch of space, under dark ship art, offers no edge there.
    pub showing: f64,
}

/// Relative luminance (linear light).
fn luminance(c: Rgb) -> f64 {
    0.2126 * f64::from(c[0]) + 0.7152 * f64::from(c[1]) + 0.0722 * f64::from(c[2])
}

/// For each ship of the world (in its order), how much of its rim the camera sees, and
/// how much of that with an edge beside it: sampled along the band's middle on all four
/// sides, on the base's top.
pub fn rim_view(world: &World, camera: &Camera) -> Vec<RimView> {
    let origin = camera.centre();
    let table_centre = world.centre();
    let seen = |p: Vector3<f64>| {
        let to = p - origin;
        let dist = to.norm();
        let ray = Ray {
            origin,
            dir: to / dist,
        };
        first_hit(world, &ray) >= dist - SEEN_MM
    };
    world
        .ships
        .iter()
        .map(|s| {
            let half = s.width / 2.0;
            let (sin, cos) = s.heading.sin_cos();
            // Ship frame to table: right = (sin h, -cos h), forward = (cos h, sin h).
            let to_table = |x: f64, y: f64, z: f64| {
                Vector3::new(
                    s.centre[0] + x * sin + y * cos,
                    s.centre[1] - x * cos + y * sin,
                    z,
                )
            };
            let rim = luminance(base_top_colour(s, half - s.rim / 2.0, 0.0));
            let (mut in_view, mut showing, mut total) = (0usize, 0usize, 0usize);
            let mut u = -half + CORNER_CLEAR_MM;
            while u <= half - CORNER_CLEAR_MM {
                // Each side as its outward direction in the ship frame.
                for (nx, ny) in [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)] {
                    let at = |d: f64| (d * nx - u * ny, d * ny + u * nx);
                    total += 1;
                    let (x, y) = at(half - s.rim / 2.0);
                    let p = to_table(x, y, s.height);
                    if !seen(p) {
                        continue;
                    }
                    in_view += 1;
                    let (tx, ty) = at(half - s.rim - TOKEN_IN_MM);
                    let light = world.light.at(p.x, p.y, table_centre) * 255.0;
                    let token = seen(to_table(tx, ty, s.height))
                        && (luminance(base_top_colour(s, tx, ty)) - rim) * light >= EDGE_LEVEL;
                    let (gx, gy) = at(half + GROUND_OUT_MM);
                    let g = to_table(gx, gy, 0.0);
                    let ground = seen(g)
                        && (luminance(ground_colour(world, g.x, g.y)) - rim) * light >= EDGE_LEVEL;
                    if token || ground {
                        showing += 1;
                    }
                }
                u += STEP_MM;
            }
            let share = |k: usize| k as f64 / total.max(1) as f64;
            RimView {
                in_view: share(in_view),
                showing: share(showing),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::Models;
    use crate::vision::camera::Resolution;
    use crate::vision::sim::{camera_for, scene_gen};

    fn world(seed: u64) -> (World, Camera) {
        let models = Models::builtin();
        let area = models.play_areas.standard();
        let scene = scene_gen::random_scene_on(seed, models, area);
        let play = [scene.play_area.width_mm, scene.play_area.height_mm];
        let camera = camera_for(seed, Resolution::Hd1080, play);
        let world = World::build(&scene, seed, seed, models).expect("a world");
        (world, camera)
    }

    #[test]
    fn a_base_is_in_view_but_where_a_miniature_covers_its_rim() {
        let (mut w, camera) = world(3);
        assert!(w.ships.len() >= 2);
        // Every miniature far off the table: every rim in plain view.
        for s in &mut w.ships {
            s.mini.centre.x += 5000.0;
        }
        let clear = rim_view(&w, &camera);
        assert!(clear.iter().all(|v| v.in_view > 0.99), "{clear:?}");
        assert!(clear.iter().all(|v| v.showing <= v.in_view), "{clear:?}");
        // The first ship's miniature back, made wide and low over its own base: its rim
        // is hidden, the others' not.
        let c = w.ships[0].centre;
        let m = &mut w.ships[0].mini;
        m.centre = Vector3::new(c[0], c[1], 20.0);
        (m.a, m.b, m.hz, m.radius) = (80.0, 80.0, 10.0, 200.0);
        w.ships[0].bound = 200.0;
        let covered = rim_view(&w, &camera);
        assert!(
            covered[0].in_view < 0.05 && covered[0].showing < 0.05,
            "{covered:?}"
        );
        assert!(covered[1..].iter().all(|v| v.in_view > 0.99), "{covered:?}");
        // The ship art and the mat beside the rims show some edges under the table's light,
        // none in the dark, though the rims stay in view.
        assert!(covered[1..].iter().all(|v| v.showing > 0.2), "{covered:?}");
        w.light.level = 0.0;
        let dark = rim_view(&w, &camera);
        assert!(
            dark[1..]
                .iter()
                .all(|v| v.in_view > 0.99 && v.showing == 0.0),
            "{dark:?}"
        );
    }
}

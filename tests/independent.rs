//! Legality checked against an independent implementation of the spec on random scenes
//! full of near misses. The reference builds every outline straight from the spec's
//! numbers and the pose table, and decides overlap with geo's DE-9IM relate (interiors
//! intersect), sharing no geometry code with the engine. Wherever the engine's clearance is
//! larger than 0.01 mm in size, both must agree.

mod common;
use common::*;
use geo::{Relate, coord};
use hashmark::BaseSize::{self, *};
use hashmark::rules::{BlockerKind, RollOptions, RollTemplate, Side};
use hashmark::scene::ObstacleSpec;
use hashmark::{Models, Table};

/// splitmix64: a tiny seeded generator, so the scenes are the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn f(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

fn width(size: BaseSize) -> f64 {
    match size {
        Small => 40.0,
        Medium => 60.0,
        Large => 80.0,
    }
}

fn poly(points: Vec<(f64, f64)>) -> geo::Polygon<f64> {
    let ring: Vec<geo::Coord<f64>> = points.iter().map(|&(x, y)| coord! {x: x, y: y}).collect();
    geo::Polygon::new(geo::LineString::from(ring), vec![])
}

/// The base with guides (spec section 2) in the table frame.
fn base_outline(size: BaseSize, cx: f64, cy: f64, heading: f64) -> geo::Polygon<f64> {
    let h = width(size) / 2.0;
    // The square with the four guides, 1.8 mm wide at x = +-11.38, 1.6 mm beyond the
    // front and rear edges, walked counter-clockwise.
    let (g0, g1, pr) = (11.38 - 0.9, 11.38 + 0.9, 1.6);
    let local = vec![
        (-h, -h),
        (-g1, -h),
        (-g1, -h - pr),
        (-g0, -h - pr),
        (-g0, -h),
        (g0, -h),
        (g0, -h - pr),
        (g1, -h - pr),
        (g1, -h),
        (h, -h),
        (h, h),
        (g1, h),
        (g1, h + pr),
        (g0, h + pr),
        (g0, h),
        (-g0, h),
        (-g0, h + pr),
        (-g1, h + pr),
        (-g1, h),
        (-h, h),
    ];
    poly(
        local
            .into_iter()
            .map(|(x, y)| spec_to_table(cx, cy, heading, x, y))
            .collect(),
    )
}

/// The pose table of spec section 3 for a right roll: template outline (ship frame) and
/// landing centres with the heading change.
/// Template outline, landing centres (front, middle, back) and heading change.
type RightRoll = (Vec<(f64, f64)>, [(f64, f64); 3], f64);

fn right_roll(size: BaseSize, template: RollTemplate) -> RightRoll {
    let rect = |x0: f64, x1: f64, y0: f64, y1: f64| vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1)];
    match (size, template) {
        (Small, RollTemplate::Straight1) => (
            rect(20.0, 60.0, -10.0, 10.0),
            [(80.0, 10.0), (80.0, 0.0), (80.0, -10.0)],
            0.0,
        ),
        (Small, RollTemplate::Straight2) => (
            rect(20.0, 100.0, -10.0, 10.0),
            [(120.0, 10.0), (120.0, 0.0), (120.0, -10.0)],
            0.0,
        ),
        (Medium, RollTemplate::Straight1) => (
            rect(30.0, 50.0, -20.0, 20.0),
            [(80.0, 20.0), (80.0, 0.0), (80.0, -20.0)],
            0.0,
        ),
        (Large, RollTemplate::Straight1) => (
            rect(40.0, 60.0, -20.0, 20.0),
            [(100.0, 20.0), (100.0, 0.0), (100.0, -20.0)],
            0.0,
        ),
        (Medium, RollTemplate::Straight2) => (
            rect(30.0, 50.0, -40.0, 40.0),
            [(80.0, 40.0), (80.0, 0.0), (80.0, -40.0)],
            0.0,
        ),
        (Large, RollTemplate::Straight2) => (
            rect(40.0, 60.0, -40.0, 40.0),
            [(100.0, 40.0), (100.0, 0.0), (100.0, -40.0)],
            0.0,
        ),
        (Small, RollTemplate::Bank1Forward) | (Small, RollTemplate::Bank1Backward) => {
            let s = if template == RollTemplate::Bank1Forward {
                1.0
            } else {
                -1.0
            };
            // 45 deg arc band about (20, 80 s), radii 70 and 90, finely cut.
            let n = 720;
            let at = |r: f64, k: usize| {
                let a = (k as f64 / n as f64) * std::f64::consts::FRAC_PI_4;
                (20.0 + r * a.sin(), s * (80.0 - r * a.cos()))
            };
            let mut ring: Vec<(f64, f64)> = (0..=n).map(|k| at(90.0, k)).collect();
            ring.extend((0..=n).rev().map(|k| at(70.0, k)));
            let c = 0.5f64.sqrt() * 10.0;
            let (mx, my) = (90.711, s * 37.574);
            (
                ring,
                [(mx - s * c, my + c), (mx, my), (mx + s * c, my - c)],
                45.0 * s,
            )
        }
        _ => unreachable!("no such roll"),
    }
}

/// The smallest distance along the ray at which the item no longer overlaps the target.
fn touching(item: impl Fn(f64) -> geo::Polygon<f64>, target: &geo::Polygon<f64>) -> f64 {
    let (mut lo, mut hi) = (0.0, 150.0);
    for _ in 0..26 {
        let mid = (lo + hi) / 2.0;
        if interiors_meet(&item(mid), target) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

fn interiors_meet(a: &geo::Polygon<f64>, b: &geo::Polygon<f64>) -> bool {
    a.relate(b).matches("T********").unwrap()
}

fn inside(a: &geo::Polygon<f64>, w: f64, h: f64) -> bool {
    a.exterior()
        .coords()
        .all(|c| c.x >= 0.0 && c.x <= w && c.y >= 0.0 && c.y <= h)
}

/// A random scene around ship "a": other ships and obstacles scattered just around its six
/// landings and its templates, so that many clearances are a few millimetres either way.
fn random_scene(rng: &mut Rng) -> (hashmark::Scene, RollTemplate) {
    let models = Models::builtin();
    let size = rng.pick(&[Small, Medium, Large]);
    let template = match size {
        Small => rng.pick(&[
            RollTemplate::Straight1,
            RollTemplate::Straight2,
            RollTemplate::Bank1Forward,
            RollTemplate::Bank1Backward,
        ]),
        _ => rng.pick(&[RollTemplate::Straight1, RollTemplate::Straight2]),
    };
    // Sometimes near an edge, so that the play area decides.
    let (ax, ay) = if rng.f(0.0, 1.0) < 0.3 {
        (rng.f(40.0, 200.0), rng.f(40.0, 874.0))
    } else {
        (rng.f(250.0, 664.0), rng.f(250.0, 664.0))
    };
    let heading = rng.f(0.0, 360.0);
    let mut s = scene();
    s.ships.push(ship("a", size, ax, ay, heading));
    let (_, centres, _) = right_roll(size, template);
    let obstacle_ids: Vec<String> = models.obstacles.iter().map(|m| m.xws.clone()).collect();
    let n_items = 1 + (rng.next() % 4) as usize;
    for k in 0..n_items {
        let mirror = rng.pick(&[-1.0, 1.0]);
        let c = rng.pick(&centres);
        let (lx, ly) = spec_to_table(ax, ay, heading, mirror * c.0, c.1);
        let target = base_outline(size, lx, ly, heading);
        let ang = rng.f(0.0, std::f64::consts::TAU);
        let (ux, uy) = (ang.cos(), ang.sin());
        // Slide the item in along a random direction to where it just touches the chosen
        // landing (found by bisection on the reference predicate), then move it a few
        // millimetres either way.
        let offset = if rng.f(0.0, 1.0) < 0.1 {
            rng.f(-0.05, 0.05)
        } else {
            rng.f(-3.0, 3.0)
        };
        if rng.f(0.0, 1.0) < 0.5 {
            let other = rng.pick(&[Small, Medium, Large]);
            let h = if rng.f(0.0, 1.0) < 0.5 {
                heading + rng.pick(&[0.0, 90.0, 180.0])
            } else {
                rng.f(0.0, 360.0)
            };
            let r = touching(
                |r| base_outline(other, lx + r * ux, ly + r * uy, h),
                &target,
            ) + offset;
            s.ships
                .push(ship(&format!("b{k}"), other, lx + r * ux, ly + r * uy, h));
        } else {
            let model = obstacle_ids[(rng.next() % obstacle_ids.len() as u64) as usize].clone();
            let rot = rng.f(0.0, 360.0);
            let place = |r: f64| {
                ObstacleSpec::placed(&format!("o{k}"), &model, lx + r * ux, ly + r * uy, rot)
            };
            let r = touching(
                |r| {
                    poly(
                        place(r)
                            .outline(models)
                            .unwrap()
                            .iter()
                            .map(|p| (p[0], p[1]))
                            .collect(),
                    )
                },
                &target,
            ) + offset;
            s.obstacles.push(place(r));
        }
    }
    (s, template)
}

#[test]
fn engine_agrees_with_an_independent_implementation_on_near_misses() {
    let models = Models::builtin();
    let mut rng = Rng(0x5EED_0001);
    let (mut compared, mut near, mut very_near, mut skipped, mut illegal) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    for case in 0..400 {
        let (scene, template) = random_scene(&mut rng);
        let table = Table::from_scene(&scene, models).unwrap();
        let opts = RollOptions {
            template,
            ..Default::default()
        };
        let v =
            hashmark::barrel_roll(&table, models, "a", &[Side::Left, Side::Right], &opts).unwrap();
        let a = &scene.ships[0];
        let (tpl, centres, turn) = right_roll(a.size, template);
        let others: Vec<(String, geo::Polygon<f64>)> = scene.ships[1..]
            .iter()
            .map(|s| (s.id.clone(), base_outline(s.size, s.x, s.y, s.heading_deg)))
            .collect();
        let obstacles: Vec<(String, geo::Polygon<f64>)> = scene
            .obstacles
            .iter()
            .map(|o| {
                let ring = o.outline(models).unwrap();
                (
                    o.id.clone(),
                    poly(ring.iter().map(|p| (p[0], p[1])).collect()),
                )
            })
            .collect();
        for d in &v.directions {
            let m = if d.direction == Side::Left { -1.0 } else { 1.0 };
            let template_poly = poly(
                tpl.iter()
                    .map(|&(x, y)| spec_to_table(a.x, a.y, a.heading_deg, m * x, y))
                    .collect(),
            );
            let through: Vec<&String> = obstacles
                .iter()
                .filter(|(_, o)| interiors_meet(&template_poly, o))
                .map(|(id, _)| id)
                .collect();
            for (p, c) in d.positions.iter().zip(centres) {
                let (x, y) = spec_to_table(a.x, a.y, a.heading_deg, m * c.0, c.1);
                let landed = base_outline(a.size, x, y, a.heading_deg + m * turn);
                let mut blockers: Vec<(BlockerKind, Option<String>)> = Vec::new();
                for (id, o) in &others {
                    if interiors_meet(&landed, o) {
                        blockers.push((BlockerKind::Ship, Some(id.clone())));
                    }
                }
                for (id, o) in &obstacles {
                    if interiors_meet(&landed, o) {
                        blockers.push((BlockerKind::Obstacle, Some(id.clone())));
                    }
                }
                for id in &through {
                    blockers.push((BlockerKind::TemplateObstacle, Some((*id).clone())));
                }
                if !inside(&landed, 914.4, 914.4) {
                    blockers.push((BlockerKind::PlayArea, None));
                }
                if p.clearance_mm.abs() <= 0.01 {
                    skipped += 1;
                    continue;
                }
                compared += 1;
                near += usize::from(p.clearance_mm.abs() < 3.0);
                very_near += usize::from(p.clearance_mm.abs() < 0.2);
                illegal += usize::from(!p.legal);
                let reference_legal = blockers.is_empty();
                assert_eq!(
                    p.legal,
                    reference_legal,
                    "case {case} {:?} {:?}: engine {p:?}\nreference {blockers:?}\nscene {}",
                    d.direction,
                    p.slot,
                    scene.to_json_pretty()
                );
                // Every reason the engine gives with a clear overlap, the reference sees too.
                for r in p.reasons.iter().filter(|r| r.clearance_mm < -0.01) {
                    assert!(
                        blockers.contains(&(r.kind, r.id.clone())),
                        "case {case}: engine reason {r:?} not in reference {blockers:?}"
                    );
                }
            }
        }
    }
    eprintln!(
        "compared {compared} positions ({near} within 3 mm, {very_near} within 0.2 mm, {illegal} illegal), skipped {skipped} within 0.01 mm"
    );
    assert!(compared > 2000, "{compared}");
    assert!(
        near * 5 > compared,
        "too few near misses: {near} of {compared}"
    );
    assert!(very_near > 20, "too few very near misses: {very_near}");
    assert!(
        illegal * 5 > compared && (compared - illegal) * 5 > compared,
        "unbalanced: {illegal} of {compared}"
    );
}

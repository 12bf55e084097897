//! Random scenes (proptest): the engine never panics, and its verdicts are consistent:
//! a legal position has clearance >= 0 and no reason, an illegal one has at least one
//! reason and a negative clearance, a direction fails exactly when no position is legal.

mod common;
use common::*;
use hashmark::BaseSize;
use hashmark::rules::{RollOptions, RollTemplate, Side, barrel_roll};
use hashmark::scene::ObstacleSpec;
use hashmark::{Models, Table};
use proptest::prelude::*;

fn size() -> impl Strategy<Value = BaseSize> {
    prop_oneof![
        Just(BaseSize::Small),
        Just(BaseSize::Medium),
        Just(BaseSize::Large)
    ]
}

fn template() -> impl Strategy<Value = RollTemplate> {
    prop_oneof![
        Just(RollTemplate::Straight1),
        Just(RollTemplate::Straight2),
        Just(RollTemplate::Bank1Forward),
        Just(RollTemplate::Bank1Backward),
    ]
}

/// A star-shaped (hence simple) polygon around (cx, cy), often concave.
fn star(cx: f64, cy: f64, radii: &[f64]) -> Vec<[f64; 2]> {
    let n = radii.len();
    radii
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let a = k as f64 / n as f64 * std::f64::consts::TAU;
            [cx + r * a.cos(), cy + r * a.sin()]
        })
        .collect()
}

fn obstacle(k: usize) -> impl Strategy<Value = ObstacleSpec> {
    let n = Models::builtin().obstacles.len();
    prop_oneof![
        (0..n, -50.0..965.0f64, -50.0..965.0f64, -720.0..720.0f64).prop_map(move |(m, x, y, r)| {
            let model = Models::builtin()
                .obstacles
                .iter()
                .nth(m)
                .unwrap()
                .xws
                .clone();
            ObstacleSpec::placed(&format!("o{k}"), &model, x, y, r)
        }),
        (
            -50.0..965.0f64,
            -50.0..965.0f64,
            prop::collection::vec(3.0..40.0f64, 3..12)
        )
            .prop_map(move |(x, y, radii)| polygon_obstacle(&format!("o{k}"), &star(x, y, &radii))),
    ]
}

fn scene_strategy() -> impl Strategy<Value = hashmark::Scene> {
    let ships = prop::collection::vec(
        (size(), -30.0..945.0f64, -30.0..945.0f64, -400.0..400.0f64),
        1..9,
    );
    let obstacles = (0usize..7).prop_flat_map(|n| (0..n).map(obstacle).collect::<Vec<_>>());
    (ships, obstacles).prop_map(|(ships, obstacles)| {
        let mut s = scene();
        for (k, (size, x, y, h)) in ships.into_iter().enumerate() {
            s.ships.push(ship(&format!("s{k}"), size, x, y, h));
        }
        s.obstacles = obstacles;
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn verdicts_are_consistent(
        scene in scene_strategy(),
        pick in 0usize..8,
        template in template(),
        ignore_obstacles in any::<bool>(),
        tractor in any::<bool>(),
    ) {
        let models = Models::builtin();
        let table = Table::from_scene(&scene, models).unwrap();
        let ship = &scene.ships[pick % scene.ships.len()];
        let opts = RollOptions { template, ignore_obstacles, tractor };
        let result = barrel_roll(&table, models, &ship.id, &[Side::Left, Side::Right], &opts);
        let is_bank = matches!(template, RollTemplate::Bank1Forward | RollTemplate::Bank1Backward);
        if is_bank && ship.size != BaseSize::Small {
            prop_assert!(result.is_err());
            return Ok(());
        }
        let v = result.unwrap();
        prop_assert_eq!(v.directions.len(), 2);
        for d in &v.directions {
            prop_assert_eq!(d.positions.len(), 3);
            prop_assert_eq!(d.fails, d.positions.iter().all(|p| !p.legal));
            for p in &d.positions {
                prop_assert!(p.clearance_mm.is_finite());
                prop_assert_eq!(p.clearance_mm, p.nearest.clearance_mm);
                if p.legal {
                    prop_assert!(p.clearance_mm >= 0.0, "{:?}", p);
                    prop_assert!(p.reasons.is_empty());
                } else {
                    prop_assert!(!p.reasons.is_empty());
                    prop_assert!(p.clearance_mm < 0.0);
                    prop_assert!(p.reasons.iter().all(|r| r.clearance_mm < 0.0));
                }
                if !opts.obstacles_count() {
                    prop_assert!(p.reasons.iter().all(|r| r.id.as_deref().is_none_or(|id| !id.starts_with('o'))));
                }
            }
        }
        let json = serde_json::to_string(&v).unwrap();
        let back: hashmark::RollVerdict = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, v);
    }
}

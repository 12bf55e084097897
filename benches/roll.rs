//! A full both-direction barrel roll on the demo scene (8 ships, 6 obstacles).
//! Run: cargo bench --no-default-features --bench roll

use criterion::{Criterion, criterion_group, criterion_main};
use hashmark::rules::{RollOptions, Side, barrel_roll};
use hashmark::{Models, Scene, Table};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let models = Models::builtin();
    let text = include_str!("../demo/scene.json");
    let scene = Scene::from_json(text, models).expect("demo scene");
    let table = Table::from_scene(&scene, models).expect("demo table");
    assert_eq!((table.ships.len(), table.obstacles.len()), (8, 6));
    let opts = RollOptions::default();
    c.bench_function("roll s1 both directions (8 ships, 6 obstacles)", |b| {
        b.iter(|| {
            barrel_roll(
                black_box(&table),
                models,
                "s1",
                &[Side::Left, Side::Right],
                &opts,
            )
            .unwrap()
        })
    });
    c.bench_function("roll every ship both directions", |b| {
        b.iter(|| {
            for s in &table.ships {
                black_box(
                    barrel_roll(&table, models, &s.id, &[Side::Left, Side::Right], &opts).unwrap(),
                );
            }
        })
    });
    c.bench_function("load demo scene into a table", |b| {
        b.iter(|| {
            let scene = Scene::from_json(black_box(text), models).unwrap();
            Table::from_scene(&scene, models).unwrap()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

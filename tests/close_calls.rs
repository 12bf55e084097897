//! The judge's calls on a table made of close calls (`judge::close_calls`), rendered,
//! detected through the camera it was rendered with, and judged against its truth: where a
//! millimetre decides, the camera must be right or say it cannot tell.
#![cfg(feature = "vision")]

use hashmark::judge::agreement::{Agreement, Call, agreement};
use hashmark::judge::close_calls::close_call_table;
use hashmark::models::Models;
use hashmark::rules::{RollOptions, Side, Slot, Table, barrel_roll};
use hashmark::scene::Scene;
use hashmark::vision::Resolution;
use hashmark::vision::detect::score::{rendered_and_detected, score};

/// Seed's close-call table, rendered at 1080p and detected through the camera it was
/// rendered with, and every found ship's rolls judged against the truth's.
fn judged(seed: u64) -> (Scene, Scene, Agreement) {
    let models = Models::builtin();
    let (scene, _) = close_call_table(seed, models.play_areas.standard(), models);
    let found = rendered_and_detected(&scene, seed, Resolution::Hd1080, None, models)
        .expect("render and detect")
        .found;
    let pairs = score(&scene, &found, models).pairs();
    let calls = agreement(&scene, &found, &pairs, models, &RollOptions::default()).expect("rolls");
    eprintln!("{}", calls.summary());
    (scene, found, calls)
}

#[test]
fn a_doubted_square_that_blocks_a_roll_is_named_to_the_judge() {
    // Seed 60's table: the large s9's base is found only as a small square on one of its
    // corners, 28 mm from its centre (doubted: one corner, its sigma 6.5 mm). That square
    // overlaps where s10's roll to the right lands by 26 mm, where the true s9 leaves it
    // 2.4 mm clear: judged by the sigmas alone the landing was blocked, surely. A doubted
    // square deciding a landing leaves it to the judge, who is told to check that ship.
    let (_, found, calls) = judged(60);
    let c = calls
        .calls
        .iter()
        .find(|c| c.ship == "s10" && c.side == Side::Right && c.slot == Slot::Front)
        .expect("s10 found and rolled");
    assert!(c.truth_legal && !c.found_legal, "{}", c.describe());
    assert_eq!(c.call, Call::LeftWrong, "{}", c.describe());
    let table = Table::from_scene(&found, Models::builtin()).expect("scene");
    let v = barrel_roll(
        &table,
        Models::builtin(),
        &c.found_ship,
        &[Side::Right],
        &RollOptions::default(),
    )
    .expect("roll");
    let named = hashmark::judge::doubted_blockers(&v, &found);
    assert!(
        named.iter().any(|n| n.text.contains("check its base")),
        "{named:?}"
    );
    // Measured: 96 positions, 15 said sure and right, none said sure and wrong.
    assert_eq!(calls.count(Call::SureWrong), 0);
}

#[test]
fn a_ship_hidden_under_its_miniature_leaves_the_rolls_beside_it_to_the_judge() {
    // Seed 12's table: the large s6 stands 3 mm into where s5's roll to the left lands,
    // and its base is wholly under its miniature: detection reports the miniature's outline
    // (a hidden base, for the judge to check), not the ship. The base reaches 27 mm past
    // that outline; with the outline's sigma at 10 mm s5's landing was called legal, sure,
    // 24 mm clear of it (three positions said sure and wrong).
    let models = Models::builtin();
    let (_, designed) = close_call_table(12, models.play_areas.standard(), models);
    let close = designed
        .iter()
        .find(|c| c.ship == "s5")
        .expect("s5 is a rolling ship");
    assert_eq!((close.neighbour.as_str(), close.side), ("s6", Side::Left));
    let (scene, found, calls) = judged(12);
    let s = score(&scene, &found, models);
    assert!(
        s.missed_ships_outlined.iter().any(|id| id == "s6"),
        "s6 hidden, under an outline: missed {:?}, outlined {:?}",
        s.missed_ships,
        s.missed_ships_outlined
    );
    let toward: Vec<_> = calls
        .calls
        .iter()
        .filter(|c| c.ship == "s5" && c.side == Side::Left)
        .collect();
    assert_eq!(toward.len(), 3);
    for c in &toward {
        assert!(!c.truth_legal, "{}", c.describe());
        assert_ne!(c.call, Call::SureWrong, "{}", c.describe());
    }
    // Measured: 96 positions, 36 said sure and right, none said sure and wrong.
    assert_eq!(calls.count(Call::SureWrong), 0);
}

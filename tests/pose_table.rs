//! Every row of the spec's barrel-roll pose table (section 3), both directions, many headings.

mod common;
use common::*;
use hashmark::BaseSize::{self, *};
use hashmark::rules::{RollTemplate, RollTemplate::*, Side};

/// (size, template, template footprint [x0, x1, y0, y1] for a right roll or None for the
/// bank, centres front/middle/back and heading change for a right roll), literally from the
/// spec's table.
type Row = (
    BaseSize,
    RollTemplate,
    Option<[f64; 4]>,
    [(f64, f64); 3],
    f64,
);

fn rows() -> Vec<Row> {
    vec![
        (
            Small,
            Straight1,
            Some([20.0, 60.0, -10.0, 10.0]),
            [(80.0, 10.0), (80.0, 0.0), (80.0, -10.0)],
            0.0,
        ),
        (
            Small,
            Straight2,
            Some([20.0, 100.0, -10.0, 10.0]),
            [(120.0, 10.0), (120.0, 0.0), (120.0, -10.0)],
            0.0,
        ),
        (
            Medium,
            Straight1,
            Some([30.0, 50.0, -20.0, 20.0]),
            [(80.0, 20.0), (80.0, 0.0), (80.0, -20.0)],
            0.0,
        ),
        (
            Large,
            Straight1,
            Some([40.0, 60.0, -20.0, 20.0]),
            [(100.0, 20.0), (100.0, 0.0), (100.0, -20.0)],
            0.0,
        ),
        (
            Medium,
            Straight2,
            Some([30.0, 50.0, -40.0, 40.0]),
            [(80.0, 40.0), (80.0, 0.0), (80.0, -40.0)],
            0.0,
        ),
        (
            Large,
            Straight2,
            Some([40.0, 60.0, -40.0, 40.0]),
            [(100.0, 40.0), (100.0, 0.0), (100.0, -40.0)],
            0.0,
        ),
        // Middle (90.711, +-37.574); front/back +-10 mm along the far end edge, which runs
        // along the landed ship's forward axis (turned by the bank angle).
        (
            Small,
            Bank1Forward,
            None,
            [
                (90.711 - 7.0711, 37.574 + 7.0711),
                (90.711, 37.574),
                (90.711 + 7.0711, 37.574 - 7.0711),
            ],
            45.0,
        ),
        (
            Small,
            Bank1Backward,
            None,
            [
                (90.711 + 7.0711, -37.574 + 7.0711),
                (90.711, -37.574),
                (90.711 - 7.0711, -37.574 - 7.0711),
            ],
            -45.0,
        ),
    ]
}

const HEADINGS: [f64; 9] = [0.0, 17.5, 45.0, 90.0, 133.3, 180.0, 222.2, 270.0, 359.9];

#[test]
fn every_row_at_every_heading_and_side() {
    for (size, template, footprint, centres, turn) in rows() {
        for heading in HEADINGS {
            let (cx, cy) = (457.2, 457.2);
            let mut s = scene();
            s.ships.push(ship("a", size, cx, cy, heading));
            let v = roll_template(&s, "a", template);
            assert_eq!(
                v.interpretation.is_some(),
                template == Straight2 && size != Small
            );
            for d in &v.directions {
                let mirror = if d.direction == Side::Left { -1.0 } else { 1.0 };
                for (p, want) in d.positions.iter().zip(centres) {
                    let (wx, wy) = spec_to_table(cx, cy, heading, mirror * want.0, want.1);
                    assert!(
                        (p.x - wx).abs() < 0.01 && (p.y - wy).abs() < 0.01,
                        "{size} {template:?} h{heading} {:?} {:?}: ({}, {}) vs ({wx}, {wy})",
                        d.direction,
                        p.slot,
                        p.x,
                        p.y
                    );
                    let dh = wrap180(p.heading_deg - heading - mirror * turn);
                    assert!(dh.abs() < 0.01, "{size} {template:?} heading off by {dh}");
                    assert!((0.0..360.0).contains(&p.heading_deg));
                    // The landed base is the ship's base with guides: 20 corners.
                    assert_eq!(p.base_polygon.len(), 20);
                }
                let local: Vec<(f64, f64)> = d
                    .template_polygon
                    .iter()
                    .map(|q| spec_to_ship(cx, cy, heading, q[0], q[1]))
                    .map(|(x, y)| (mirror * x, y))
                    .collect();
                match footprint {
                    Some([x0, x1, y0, y1]) => {
                        let bx0 = local.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
                        let bx1 = local.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
                        let by0 = local.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
                        let by1 = local.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
                        for (got, want) in [(bx0, x0), (bx1, x1), (by0, y0), (by1, y1)] {
                            assert!(
                                (got - want).abs() < 0.01,
                                "{size} {template:?} footprint {got} vs {want}"
                            );
                        }
                        assert_eq!(local.len(), 4);
                    }
                    None => {
                        // Arc band: centre-line radius 80 about (20, +-80), 20 mm wide, 45 deg.
                        let cy_arc = if turn > 0.0 { 80.0 } else { -80.0 };
                        for (x, y) in &local {
                            let r = ((x - 20.0).powi(2) + (y - cy_arc).powi(2)).sqrt();
                            assert!((70.0 - 0.01..=90.0 + 0.01).contains(&r), "radius {r}");
                            let ang = ((x - 20.0).atan2((cy_arc - y).abs() * 1.0)).to_degrees();
                            assert!((-0.01..=45.01).contains(&ang), "angle {ang}");
                        }
                        // The band starts across the side hashmark: (20, -10) .. (20, 10).
                        for end in [(20.0, -10.0), (20.0, 10.0)] {
                            assert!(
                                local
                                    .iter()
                                    .any(|p| (p.0 - end.0).abs() < 1e-6
                                        && (p.1 - end.1).abs() < 1e-6)
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn bank_is_for_small_ships_only() {
    let mut s = scene();
    s.ships.push(ship("m", Medium, 400.0, 400.0, 0.0));
    let table = hashmark::Table::from_scene(&s, hashmark::Models::builtin()).unwrap();
    let opts = hashmark::RollOptions {
        template: Bank1Forward,
        ..Default::default()
    };
    let e = hashmark::barrel_roll(
        &table,
        hashmark::Models::builtin(),
        "m",
        &[Side::Left],
        &opts,
    )
    .unwrap_err();
    assert!(e.to_string().contains("small ships only"), "{e}");
}

#[test]
fn cli_json_reproduces_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.json");
    let text = r#"{"format":"hashmark-scene/1","ships":[{"id":"s1","size":"large","x":400,"y":500,"heading_deg":123.4}]}"#;
    std::fs::write(&path, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hashmark"))
        .args([
            "roll",
            "--scene",
            path.to_str().unwrap(),
            "--ship",
            "s1",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "hashmark-roll/1");
    assert_eq!(v["ship"], "s1");
    assert_eq!(v["template"], "straight1");
    let dirs = v["directions"].as_array().unwrap();
    assert_eq!(dirs.len(), 2);
    for d in dirs {
        let mirror = if d["direction"] == "left" { -1.0 } else { 1.0 };
        let slots: Vec<&str> = d["positions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["slot"].as_str().unwrap())
            .collect();
        assert_eq!(slots, ["front", "middle", "back"]);
        for (p, y) in d["positions"]
            .as_array()
            .unwrap()
            .iter()
            .zip([20.0, 0.0, -20.0])
        {
            let (wx, wy) = spec_to_table(400.0, 500.0, 123.4, mirror * 100.0, y);
            assert!((p["x"].as_f64().unwrap() - wx).abs() < 0.01);
            assert!((p["y"].as_f64().unwrap() - wy).abs() < 0.01);
            assert!((p["heading_deg"].as_f64().unwrap() - 123.4).abs() < 0.01);
            assert_eq!(p["legal"], true);
            assert!(p["reasons"].as_array().unwrap().is_empty());
            assert!(p["clearance_mm"].as_f64().unwrap() > 0.0);
        }
        assert_eq!(d["fails"], false);
        assert!(d["moves_through"].as_array().unwrap().is_empty());
        assert_eq!(d["template_polygon"].as_array().unwrap().len(), 4);
    }
}

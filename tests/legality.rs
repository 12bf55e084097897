//! Legality of barrel-roll positions (spec section 4): each rule on a scene built to test it.
//! The rolling ship "a" is small, at (300, 300), heading 90: its right is +x, so the right
//! roll lands at x = 380 (front y 310, middle 300, back 290) and the template covers
//! [320, 360] x [290, 310]; the left roll mirrors that about x = 300.

mod common;
use common::*;
use hashmark::BaseSize::*;
use hashmark::rules::{BlockerKind, RollOptions, RollTemplate, Side, Slot};

fn base_scene() -> hashmark::Scene {
    let mut s = scene();
    s.ships.push(ship("a", Small, 300.0, 300.0, 90.0));
    s
}

fn slot(v: &hashmark::RollVerdict, side: Side, slot: Slot) -> hashmark::rules::Landing {
    v.direction(side)
        .unwrap()
        .positions
        .iter()
        .find(|p| p.slot == slot)
        .unwrap()
        .clone()
}

#[test]
fn open_table_all_six_legal() {
    let v = roll(&base_scene(), "a");
    for d in &v.directions {
        assert!(!d.fails);
        for p in &d.positions {
            assert!(p.legal && p.reasons.is_empty());
            assert_eq!(p.nearest.kind, BlockerKind::PlayArea);
        }
    }
    // Nearest edge to the right landings: the bottom edge, 290 - 20 - 1.6 (guides) = 268.4.
    assert!((slot(&v, Side::Right, Slot::Back).clearance_mm - 268.4).abs() < 1e-9);
}

#[test]
fn touching_is_not_overlapping_but_a_hundredth_is() {
    for (x, legal) in [(420.0, true), (419.99, false)] {
        let mut s = base_scene();
        s.ships.push(ship("b", Small, x, 300.0, 90.0));
        let v = roll(&s, "a");
        let m = slot(&v, Side::Right, Slot::Middle);
        assert_eq!(m.legal, legal, "b at {x}: {m:?}");
        if legal {
            assert_eq!(m.clearance_mm, 0.0);
            assert_eq!(m.nearest.id.as_deref(), Some("b"));
        } else {
            assert!((m.clearance_mm + 0.01).abs() < 1e-6, "{}", m.clearance_mm);
            assert_eq!(m.reasons[0].kind, BlockerKind::Ship);
        }
    }
    // An obstacle edge exactly on the landing's side, at an awkward heading.
    let mut s = scene();
    s.ships.push(ship("a", Small, 300.0, 300.0, 90.0));
    s.obstacles
        .push(box_obstacle("o", 400.0, 250.0, 430.0, 350.0));
    let v = roll(&s, "a");
    assert!(!v.direction(Side::Right).unwrap().fails);
    assert!(
        v.direction(Side::Right)
            .unwrap()
            .positions
            .iter()
            .all(|p| p.legal && p.clearance_mm == 0.0)
    );
}

#[test]
fn a_concave_obstacle_lets_a_ship_land_in_its_notch() {
    // A "C" opening towards the rolling ship: the template enters through the opening and
    // the three landings sit in the notch, 1 mm from its back wall. Its convex hull would
    // cover all of them.
    let c = [
        [355.0, 262.0],
        [410.0, 262.0],
        [410.0, 338.0],
        [355.0, 338.0],
        [355.0, 334.0],
        [401.0, 334.0],
        [401.0, 266.0],
        [355.0, 266.0],
    ];
    let mut s = base_scene();
    s.obstacles.push(polygon_obstacle("c", &c));
    let v = roll(&s, "a");
    let right = v.direction(Side::Right).unwrap();
    assert!(right.moves_through.is_empty());
    for p in &right.positions {
        assert!(p.legal, "{p:?}");
        assert!((p.clearance_mm - 1.0).abs() < 1e-9, "{}", p.clearance_mm);
    }
    // Push the back wall 1 mm into the landings: each is blocked by exactly 1 mm.
    let mut deeper = c;
    deeper[5][0] = 399.0;
    deeper[6][0] = 399.0;
    let mut s = base_scene();
    s.obstacles.push(polygon_obstacle("c", &deeper));
    let v = roll(&s, "a");
    let right = v.direction(Side::Right).unwrap();
    assert!(right.fails);
    for p in &right.positions {
        assert_eq!(p.reasons.len(), 1);
        assert_eq!(p.reasons[0].kind, BlockerKind::Obstacle);
        assert!((p.clearance_mm + 1.0).abs() < 1e-9, "{}", p.clearance_mm);
    }
}

#[test]
fn guides_decide_cases_by_less_than_two_mm() {
    // The middle landing's front guides: x in [367.72, 369.52] and [390.48, 392.28],
    // y in [320, 321.6]. A box over the right guide but 1 mm clear of the base edge:
    let mut s = base_scene();
    s.obstacles
        .push(box_obstacle("o", 385.0, 321.0, 395.0, 326.0));
    let v = roll(&s, "a");
    let m = slot(&v, Side::Right, Slot::Middle);
    assert!(!m.legal);
    assert!((m.clearance_mm + 0.6).abs() < 1e-9, "{}", m.clearance_mm);
    // A box between the two guides: 0.98 mm from the guide sides, 1 mm above the base.
    let mut s = base_scene();
    s.obstacles
        .push(box_obstacle("o", 370.5, 321.0, 389.5, 326.0));
    let v = roll(&s, "a");
    let m = slot(&v, Side::Right, Slot::Middle);
    assert!(m.legal);
    assert!((m.clearance_mm - 0.98).abs() < 1e-9, "{}", m.clearance_mm);
    // Guide against guide: two bases nose to tail 2 mm apart, guides aligned, overlap by
    // 1.2 mm; offset sideways by 2 mm the 1.8 mm wide guides pass 0.2 mm from each other.
    for (dx, legal, want) in [(0.0, false, -1.2), (2.0, true, 0.2)] {
        let mut s = base_scene();
        s.ships
            .push(ship("b", Small, 380.0 + dx, 300.0 + 42.0, 90.0));
        let v = roll(&s, "a");
        let m = slot(&v, Side::Right, Slot::Middle);
        assert_eq!(m.legal, legal, "dx {dx}");
        assert!(
            (m.clearance_mm - want).abs() < 1e-9,
            "dx {dx}: {}",
            m.clearance_mm
        );
    }
}

#[test]
fn play_area_edges() {
    // Left landing centre at x = 20: its left side lies on the edge (touching: legal).
    let mut s = scene();
    s.ships.push(ship("a", Small, 100.0, 300.0, 90.0));
    let v = roll(&s, "a");
    let m = slot(&v, Side::Left, Slot::Middle);
    assert!(m.legal && m.clearance_mm == 0.0);
    // Half a millimetre further: the ship would flee.
    let mut s = scene();
    s.ships.push(ship("a", Small, 99.5, 300.0, 90.0));
    let v = roll(&s, "a");
    let left = v.direction(Side::Left).unwrap();
    assert!(left.fails);
    for p in &left.positions {
        assert_eq!(p.reasons.len(), 1);
        assert_eq!(p.reasons[0].kind, BlockerKind::PlayArea);
        assert!(p.reasons[0].id.is_none());
        assert!((p.clearance_mm + 0.5).abs() < 1e-9);
    }
    // Only the front guides leave the top edge, by 0.5 mm: front illegal, middle legal.
    let mut s = scene();
    s.ships.push(ship("a", Small, 300.0, 883.3, 90.0));
    let v = roll(&s, "a");
    let f = slot(&v, Side::Right, Slot::Front);
    assert!(
        !f.legal && (f.clearance_mm + 0.5).abs() < 1e-9,
        "{}",
        f.clearance_mm
    );
    assert!(slot(&v, Side::Right, Slot::Middle).legal);
}

#[test]
fn a_direction_fails_only_when_all_three_positions_do() {
    // Landings at y = ay + 10, ay, ay - 10. The back one's guides end 0.3 mm below the
    // table edge; a ship overlaps the front one only; an obstacle overlaps front and middle.
    let ay = 31.3;
    let mut s = scene();
    s.ships.push(ship("a", Small, 300.0, ay, 90.0));
    s.ships
        .push(ship("b", Small, 380.0, ay + 30.0 + 20.0 - 1.0, 90.0));
    s.obstacles
        .push(box_obstacle("o", 399.0, ay + 15.0, 420.0, ay + 19.0));
    let v = roll(&s, "a");
    let right = v.direction(Side::Right).unwrap();
    let kinds = |p: &hashmark::rules::Landing| p.reasons.iter().map(|r| r.kind).collect::<Vec<_>>();
    let f = &right.positions[0];
    let m = &right.positions[1];
    let b = &right.positions[2];
    assert_eq!(
        kinds(f),
        [BlockerKind::Ship, BlockerKind::Obstacle],
        "{f:?}"
    );
    assert_eq!(kinds(m), [BlockerKind::Obstacle], "{m:?}");
    assert_eq!(kinds(b), [BlockerKind::PlayArea], "{b:?}");
    assert!((b.clearance_mm + 0.3).abs() < 1e-9);
    assert!((m.clearance_mm + 1.0).abs() < 1e-9);
    assert!(right.fails);
    // Take the obstacle away: the middle is free again and the roll is possible.
    s.obstacles.clear();
    let v = roll(&s, "a");
    let right = v.direction(Side::Right).unwrap();
    assert!(!right.fails);
    assert_eq!(right.legal_count(), 1);
    assert!(right.positions[1].legal);
}

#[test]
fn an_obstacle_under_the_template_kills_the_whole_direction() {
    let mut s = base_scene();
    s.obstacles
        .push(box_obstacle("rock", 335.0, 297.0, 345.0, 303.0));
    let v = roll(&s, "a");
    let right = v.direction(Side::Right).unwrap();
    assert!(right.fails);
    assert_eq!(right.moves_through, vec!["rock".to_string()]);
    assert!(right.template_clearance_mm.unwrap() < 0.0);
    for p in &right.positions {
        assert_eq!(p.reasons.len(), 1);
        assert_eq!(p.reasons[0].kind, BlockerKind::TemplateObstacle);
        assert_eq!(p.reasons[0].id.as_deref(), Some("rock"));
    }
    let left = v.direction(Side::Left).unwrap();
    assert!(!left.fails && left.moves_through.is_empty());

    // Q7 Astromech: move through it.
    let ignore = RollOptions {
        ignore_obstacles: true,
        ..Default::default()
    };
    let v = roll_with(&s, "a", ignore);
    let right = v.direction(Side::Right).unwrap();
    assert!(!right.fails && right.legal_count() == 3);
    assert_eq!(right.moves_through, vec!["rock".to_string()]);

    // A tractor beam never ignores obstacles.
    let tractor = RollOptions {
        ignore_obstacles: true,
        tractor: true,
        ..Default::default()
    };
    let v = roll_with(&s, "a", tractor);
    assert!(v.direction(Side::Right).unwrap().fails);
    assert!(v.tractor && !v.ignore_obstacles);
}

#[test]
fn a_template_touching_an_obstacle_does_not_move_through_it() {
    let mut s = base_scene();
    s.obstacles
        .push(box_obstacle("rock", 335.0, 310.0, 345.0, 318.0));
    let v = roll(&s, "a");
    let right = v.direction(Side::Right).unwrap();
    assert!(!right.fails && right.moves_through.is_empty());
    assert_eq!(right.template_clearance_mm, Some(0.0));
    // The template's clearance is each position's margin: 0 mm to the rock.
    assert!(
        right
            .positions
            .iter()
            .all(|p| p.legal && p.clearance_mm == 0.0)
    );
}

#[test]
fn ships_under_the_template_do_not_matter() {
    let mut s = base_scene();
    // straight2: template [320, 400] x [290, 310]; landings at x = 420 span [400, 440].
    s.ships.push(ship("c", Small, 360.0, 300.0, 0.0));
    let v = roll_template(&s, "a", RollTemplate::Straight2);
    let right = v.direction(Side::Right).unwrap();
    assert!(!right.fails);
    assert!(right.positions.iter().all(|p| p.legal));
}

#[test]
fn ignoring_obstacles_lets_a_ship_land_on_one() {
    let mut s = base_scene();
    s.obstacles
        .push(box_obstacle("o", 370.0, 280.0, 390.0, 320.0));
    assert!(roll(&s, "a").direction(Side::Right).unwrap().fails);
    let v = roll_with(
        &s,
        "a",
        RollOptions {
            ignore_obstacles: true,
            ..Default::default()
        },
    );
    let right = v.direction(Side::Right).unwrap();
    assert!(
        right
            .positions
            .iter()
            .all(|p| p.legal && p.nearest.kind != BlockerKind::Obstacle)
    );
}

#[test]
fn large_ship_side_on_template() {
    // Large at (400, 400) heading 0: right is -y. Template [40, 60] x [-20, 20] in the ship
    // frame: table x in [380, 420], y in [340, 360]. A rock there fails the right roll.
    let mut s = scene();
    s.ships.push(ship("L", Large, 400.0, 400.0, 0.0));
    s.obstacles
        .push(box_obstacle("rock", 410.0, 345.0, 415.0, 350.0));
    let v = roll(&s, "L");
    assert!(v.direction(Side::Right).unwrap().fails);
    assert!(!v.direction(Side::Left).unwrap().fails);
}

#[test]
fn mirror_symmetry() {
    // Mirror the whole table about x = W/2: left and right swap, nothing else changes.
    let w = 914.4;
    let mut s = scene();
    s.ships.push(ship("a", Medium, 330.0, 420.0, 63.0));
    s.ships.push(ship("b", Small, 425.0, 380.0, 10.0));
    s.ships.push(ship("c", Large, 230.0, 470.0, 200.0));
    s.obstacles.push(polygon_obstacle(
        "o",
        &[
            [280.0, 330.0],
            [300.0, 310.0],
            [312.0, 340.0],
            [296.0, 332.0],
        ],
    ));
    s.obstacles.push(hashmark::scene::ObstacleSpec::placed(
        "p",
        "gascloud3",
        380.0,
        520.0,
        33.0,
    ));
    let mut m = s.clone();
    for sh in &mut m.ships {
        sh.x = w - sh.x;
        sh.heading_deg = 180.0 - sh.heading_deg;
    }
    let models = hashmark::Models::builtin();
    for o in &mut m.obstacles {
        let ring = o.outline(models).unwrap();
        *o = polygon_obstacle(
            &o.id,
            &ring.iter().map(|p| [w - p[0], p[1]]).collect::<Vec<_>>(),
        );
    }
    for template in [RollTemplate::Straight1, RollTemplate::Straight2] {
        let v = roll_template(&s, "a", template);
        let vm = roll_template(&m, "a", template);
        for (side, other) in [(Side::Left, Side::Right), (Side::Right, Side::Left)] {
            let (d, dm) = (v.direction(side).unwrap(), vm.direction(other).unwrap());
            assert_eq!(d.fails, dm.fails);
            assert_eq!(d.moves_through, dm.moves_through);
            for (p, q) in d.positions.iter().zip(&dm.positions) {
                assert_eq!(p.slot, q.slot);
                assert_eq!(p.legal, q.legal);
                assert!(
                    (p.clearance_mm - q.clearance_mm).abs() < 1e-9,
                    "{template:?} {side:?}"
                );
                assert!((p.x - (w - q.x)).abs() < 1e-9 && (p.y - q.y).abs() < 1e-9);
                let r: Vec<_> = p.reasons.iter().map(|r| (r.kind, r.id.clone())).collect();
                let rm: Vec<_> = q.reasons.iter().map(|r| (r.kind, r.id.clone())).collect();
                assert_eq!(r, rm);
            }
        }
    }
    // The scene must exercise something: at least one illegal position somewhere.
    let v = roll(&s, "a");
    assert!(
        v.directions
            .iter()
            .flat_map(|d| &d.positions)
            .any(|p| !p.legal)
    );
}

#[test]
fn within_two_sigma_of_zero_is_too_close_to_call() {
    let measured = |mut s: hashmark::scene::ShipSpec| {
        s.quality.sigma_mm = Some(0.5);
        s.quality.sigma_deg = Some(0.2);
        s
    };
    // b's left edge 0.6 mm from the middle landing's right edge: legal, but within 2 sigma
    // (about 1.6 mm here); 5 mm away it is certain; placed by hand it is never in doubt.
    for (x, close) in [(420.6, true), (425.0, false)] {
        let mut s = scene();
        s.ships.push(measured(ship("a", Small, 300.0, 300.0, 90.0)));
        s.ships.push(measured(ship("b", Small, x, 300.0, 90.0)));
        let m = slot(&roll(&s, "a"), Side::Right, Slot::Middle);
        assert!(m.legal);
        assert_eq!(m.too_close_to_call, close, "b at {x}: {m:?}");
        let sigma = m.nearest.sigma_mm.unwrap();
        assert!((0.6..1.2).contains(&sigma), "{sigma}");
    }
    // Overlapping by 0.3 mm: illegal, but the camera cannot be sure; by 5 mm it can.
    for (x, close) in [(419.7, true), (415.0, false)] {
        let mut s = scene();
        s.ships.push(measured(ship("a", Small, 300.0, 300.0, 90.0)));
        s.ships.push(measured(ship("b", Small, x, 300.0, 90.0)));
        let m = slot(&roll(&s, "a"), Side::Right, Slot::Middle);
        assert!(!m.legal);
        assert_eq!(m.too_close_to_call, close, "b at {x}: {m:?}");
    }
    let mut s = base_scene();
    s.ships.push(ship("b", Small, 420.1, 300.0, 90.0));
    let m = slot(&roll(&s, "a"), Side::Right, Slot::Middle);
    assert!(m.legal && !m.too_close_to_call && m.nearest.sigma_mm.is_none());
}

//! The camera's roll verdicts against the truth's: what a judge would be told, position by
//! position, on a detected scene, set beside the verdict on the true table. Detection's
//! centre and heading errors say how far off a base is; this says what that costs where it
//! matters, in rulings: how many the camera gets right while saying it is sure, how many
//! it leaves to the judge (a flagged ship, a clearance within two sigma, a landing decided
//! by a doubted ship or an unnamed outline), and how many it gets wrong while saying it is
//! sure, the one kind of error a judge cannot catch.

use super::DetectionNote;
use crate::models::Models;
use crate::rules::{Landing, RollError, RollOptions, Side, Table, barrel_roll};
use crate::scene::Scene;
use serde::Serialize;

/// A true clearance this near zero (mm) makes a close call: a millimetre's error turns it.
pub const CLOSE_MM: f64 = 5.0;

/// How one position's verdict on the detected scene stands against the truth's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Call {
    /// Said sure, and right.
    SureRight,
    /// Left to the judge (see [`left_to_judge`]), and right all the same.
    LeftRight,
    /// Left to the judge, and wrong: the judge, told to look, would catch it.
    LeftWrong,
    /// Said sure, and wrong.
    SureWrong,
}

/// One position of one roll, with both verdicts.
#[derive(Clone, Debug, Serialize)]
pub struct PositionCall {
    /// The true ship's id and the detected one's.
    pub ship: String,
    pub found_ship: String,
    pub side: Side,
    pub slot: crate::rules::Slot,
    pub call: Call,
    /// Why it was left to the judge: the rolling ship is doubted (its confidence), and
    /// the position itself cannot be settled (see [`left_to_judge`]).
    pub ship_doubted: bool,
    pub position_unsettled: bool,
    pub truth_legal: bool,
    pub found_legal: bool,
    /// The true landing's clearance and the detected one's (mm, see [`Landing`]).
    pub truth_clearance_mm: f64,
    pub found_clearance_mm: f64,
    /// The detected landing's deciding blocker and its sigma.
    pub found_nearest: String,
    pub found_sigma_mm: Option<f64>,
}

/// Every position of every roll both ways of the ships detection found, and how many
/// positions have no verdict: those of the ships it missed (a judge asking about one is
/// told there is no such ship) or found as a size the template is not defined for.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Agreement {
    pub calls: Vec<PositionCall>,
    pub missed_positions: usize,
}

impl Agreement {
    pub fn count(&self, call: Call) -> usize {
        self.calls.iter().filter(|c| c.call == call).count()
    }

    pub fn extend(&mut self, other: Agreement) {
        self.calls.extend(other.calls);
        self.missed_positions += other.missed_positions;
    }

    /// One line: how the positions were called, and of those left to the judge, how many
    /// for the rolling ship's doubt alone (its position settled by the sigmas) and how
    /// many of those were wrong: what the ships' flags add beyond their sigmas.
    pub fn summary(&self) -> String {
        let n = self.calls.len();
        let pct = |k: usize| 100.0 * k as f64 / n.max(1) as f64;
        let (sure_right, left_right, left_wrong, sure_wrong) = (
            self.count(Call::SureRight),
            self.count(Call::LeftRight),
            self.count(Call::LeftWrong),
            self.count(Call::SureWrong),
        );
        let flag_only: Vec<&PositionCall> = self
            .calls
            .iter()
            .filter(|c| c.ship_doubted && !c.position_unsettled)
            .collect();
        let flag_only_wrong = flag_only
            .iter()
            .filter(|c| c.call == Call::LeftWrong)
            .count();
        // A table of random ships has few close calls, and only they test the sigmas.
        let close: Vec<&PositionCall> = self
            .calls
            .iter()
            .filter(|c| c.truth_clearance_mm.abs() < CLOSE_MM)
            .collect();
        let close_count = |call: Call| close.iter().filter(|c| c.call == call).count();
        format!(
            "roll verdicts (every found ship, both ways, three positions each) against the truth's: \
             {n} positions; said sure and right {sure_right} ({:.1} %), left to the judge {} ({:.1} %; \
             of them {left_wrong} wrong; {} for the ship's flag alone, {flag_only_wrong} of them wrong), \
             said sure and wrong {sure_wrong} ({:.1} %); ships missed: {} positions; \
             within {CLOSE_MM} mm of the line: {}, said sure and right {}, left {}, said sure and wrong {}",
            pct(sure_right),
            left_right + left_wrong,
            pct(left_right + left_wrong),
            flag_only.len(),
            pct(sure_wrong),
            self.missed_positions,
            close.len(),
            close_count(Call::SureRight),
            close_count(Call::LeftRight) + close_count(Call::LeftWrong),
            close_count(Call::SureWrong),
        )
    }
}

impl PositionCall {
    /// One line: which position, both verdicts and what decided the detected one.
    pub fn describe(&self) -> String {
        let verdict = |legal: bool| if legal { "legal" } else { "blocked" };
        format!(
            "{} (found as {}) roll {} {}: truth {} at {:+.2} mm, found {} at {:+.2} mm by {} (sigma {})",
            self.ship,
            self.found_ship,
            self.side.name(),
            self.slot.name(),
            verdict(self.truth_legal),
            self.truth_clearance_mm,
            verdict(self.found_legal),
            self.found_clearance_mm,
            self.found_nearest,
            self.found_sigma_mm
                .map_or("none".to_string(), |s| format!("{s:.2} mm"))
        )
    }
}

/// The rolls (both ways, `options`) of each true ship paired with a detected one in
/// `pairs` (true id, detected id), judged on `truth` and on `found`; the true ships with no
/// pair count as missed.
pub fn agreement(
    truth: &Scene,
    found: &Scene,
    pairs: &[(String, String)],
    models: &Models,
    options: &RollOptions,
) -> Result<Agreement, super::JudgeError> {
    let (true_table, found_table) = (
        Table::from_scene(truth, models)?,
        Table::from_scene(found, models)?,
    );
    let sides = [Side::Left, Side::Right];
    let mut out = Agreement::default();
    for t in &truth.ships {
        let Some((_, f)) = pairs.iter().find(|(id, _)| *id == t.id) else {
            out.missed_positions += 2 * 3;
            continue;
        };
        let Some(ship) = found.ships.iter().find(|s| s.id == *f) else {
            out.missed_positions += 2 * 3;
            continue;
        };
        let ship_unsure = DetectionNote::is_unsure(ship);
        // A template some sizes may not use (a 1-bank is for small ships) judges only the
        // ships it is defined for; one found as a size it is not defined for has no
        // verdict, as a missed ship.
        let want = match barrel_roll(&true_table, models, &t.id, &sides, options) {
            Err(RollError::Geometry(_)) => continue,
            w => w?,
        };
        let got = match barrel_roll(&found_table, models, f, &sides, options) {
            Err(RollError::Geometry(_)) => {
                out.missed_positions += 2 * 3;
                continue;
            }
            g => g?,
        };
        for side in sides {
            let (Some(w), Some(g)) = (want.direction(side), got.direction(side)) else {
                continue;
            };
            for (tl, fl) in w.positions.iter().zip(&g.positions) {
                let right = tl.legal == fl.legal;
                let unsettled = left_to_judge(fl, found);
                let left = ship_unsure || unsettled;
                out.calls.push(PositionCall {
                    ship: t.id.clone(),
                    found_ship: f.clone(),
                    side,
                    slot: fl.slot,
                    call: match (left, right) {
                        (false, true) => Call::SureRight,
                        (true, true) => Call::LeftRight,
                        (true, false) => Call::LeftWrong,
                        (false, false) => Call::SureWrong,
                    },
                    ship_doubted: ship_unsure,
                    position_unsettled: unsettled,
                    truth_legal: tl.legal,
                    found_legal: fl.legal,
                    truth_clearance_mm: tl.clearance_mm,
                    found_clearance_mm: fl.clearance_mm,
                    found_nearest: fl.nearest.label(),
                    found_sigma_mm: fl.nearest.sigma_mm,
                });
            }
        }
    }
    Ok(out)
}

/// Whether a judge would be told to settle this position by hand, the rolling ship's own
/// doubt apart: its clearance is within two sigma ([`Landing::too_close_to_call`]; a
/// doubted ship's sigma is wide, an unnamed outline's 20 mm), or what decides it is
/// something detection doubts, named to the judge (see [`super::decided_by_doubt`]).
pub fn left_to_judge(l: &Landing, scene: &Scene) -> bool {
    l.too_close_to_call || super::decided_by_doubt(l, scene)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene(ships: &str, obstacles: &str) -> Scene {
        let text = format!(
            r#"{{"format": "hashmark-scene/1", "play_area": {{"width_mm": 914.4, "height_mm": 914.4}},
            "ships": [{ships}], "obstacles": [{obstacles}]}}"#
        );
        Scene::from_json(&text, Models::builtin()).unwrap()
    }

    fn pairs(ids: &[(&str, &str)]) -> Vec<(String, String)> {
        ids.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    /// The agreement of the 1-straight rolls of the paired ships.
    fn rolls(truth: &Scene, found: &Scene, ids: &[(&str, &str)]) -> Agreement {
        agreement(
            truth,
            found,
            &pairs(ids),
            Models::builtin(),
            &RollOptions::default(),
        )
        .unwrap()
    }

    // Two small ships side by side, 60 mm apart centre to centre, both facing +y: s1's
    // roll right lands its base (40 mm) 40 mm to the right (spec section 3), right on s2,
    // so all three positions are blocked; its roll left is open.
    const TRUE_SHIPS: &str = r#"{"id": "s1", "size": "small", "x": 400, "y": 400, "heading_deg": 90},
        {"id": "s2", "size": "small", "x": 460, "y": 400, "heading_deg": 90}"#;

    #[test]
    fn a_sure_detection_where_the_truth_is_gets_every_call_right() {
        let truth = scene(TRUE_SHIPS, "");
        let found = scene(
            r#"{"id": "a", "size": "small", "x": 400.2, "y": 400.1, "heading_deg": 90.1, "sigma_mm": 0.2, "sigma_deg": 0.2, "confidence": 0.9},
               {"id": "b", "size": "small", "x": 460.1, "y": 399.8, "heading_deg": 89.9, "sigma_mm": 0.2, "sigma_deg": 0.2, "confidence": 0.9}"#,
            "",
        );
        let a = rolls(&truth, &found, &[("s1", "a"), ("s2", "b")]);
        assert_eq!(a.calls.len(), 12);
        assert_eq!(a.count(Call::SureRight), 12);
        // s1's right roll is blocked by s2 in both.
        let blocked = a
            .calls
            .iter()
            .filter(|c| c.ship == "s1" && c.side == Side::Right)
            .all(|c| !c.truth_legal && !c.found_legal);
        assert!(blocked);
    }

    #[test]
    fn a_ship_found_facing_the_wrong_way_is_wrong_unless_flagged() {
        let truth = scene(TRUE_SHIPS, "");
        // s1 found facing -y: its left and right swap, so both rolls are called wrong.
        let found = |confidence: f64| {
            scene(
                &format!(
                    r#"{{"id": "a", "size": "small", "x": 400, "y": 400, "heading_deg": 270, "sigma_mm": 0.2, "sigma_deg": 0.2, "confidence": {confidence}}},
                       {{"id": "b", "size": "small", "x": 460, "y": 400, "heading_deg": 90, "sigma_mm": 0.2, "sigma_deg": 0.2, "confidence": 0.9}}"#
                ),
                "",
            )
        };
        let run = |c: f64| rolls(&truth, &found(c), &[("s1", "a")]);
        let sure = run(0.9);
        assert_eq!((sure.count(Call::SureWrong), sure.missed_positions), (6, 6));
        let flagged = run(0.3);
        assert_eq!(flagged.count(Call::LeftWrong), 6);
        assert_eq!(flagged.count(Call::SureWrong), 0);
    }

    #[test]
    fn a_clearance_within_two_sigma_is_left_to_the_judge() {
        // s2 stands 0.5 mm clear of where s1's right roll lands (s1 moves 80 mm: its base,
        // 40, and the 1-straight template, 40); found there, with 0.7 mm sigmas, the
        // camera cannot tell that gap from an overlap. The left roll is open by a hundred mm and more.
        let ships = |quality: &str| {
            format!(
                r#"{{"id": "s1", "size": "small", "x": 400, "y": 400, "heading_deg": 90{quality}}},
                   {{"id": "s2", "size": "small", "x": 520.5, "y": 400, "heading_deg": 90{quality}}}"#
            )
        };
        let truth = scene(&ships(""), "");
        let found = scene(
            &ships(r#", "sigma_mm": 0.7, "sigma_deg": 0.1, "confidence": 0.9"#),
            "",
        );
        let a = rolls(&truth, &found, &[("s1", "s1")]);
        for c in &a.calls {
            assert!(c.truth_legal && c.found_legal, "{c:?}");
            let want = if c.side == Side::Right {
                Call::LeftRight
            } else {
                Call::SureRight
            };
            assert_eq!(c.call, want, "{c:?}");
        }
        assert!(
            a.calls
                .iter()
                .any(|c| (c.truth_clearance_mm - 0.5).abs() < 1e-6)
        );
    }

    #[test]
    fn a_landing_blocked_only_by_an_unnamed_outline_is_left_to_the_judge() {
        // s2's base was not seen under its miniature: the camera reports the miniature's
        // outline instead, which blocks s1's roll right as s2 does. Right, but the judge
        // is told to look; named as a standard obstacle it would be a sure call.
        let truth = scene(TRUE_SHIPS, "");
        let found = |confidence: &str| {
            scene(
                r#"{"id": "a", "size": "small", "x": 400, "y": 400, "heading_deg": 90, "sigma_mm": 0.2, "sigma_deg": 0.2, "confidence": 0.9}"#,
                &format!(
                    r#"{{"id": "o1", "polygon": [[445, 385], [475, 385], [475, 415], [445, 415]]{confidence}}}"#
                ),
            )
        };
        let run = |confidence: &str| rolls(&truth, &found(confidence), &[("s1", "a")]);
        let unnamed = run(r#", "confidence": 0.1"#);
        let right: Vec<&PositionCall> = unnamed
            .calls
            .iter()
            .filter(|c| c.side == Side::Right)
            .collect();
        assert!(
            right
                .iter()
                .all(|c| !c.found_legal && c.call == Call::LeftRight),
            "{right:?}"
        );
        assert_eq!(unnamed.missed_positions, 6);
        let given = run("");
        assert_eq!(given.count(Call::SureRight), 6);
    }

    #[test]
    fn a_template_judges_only_the_sizes_it_is_defined_for() {
        // A 1-bank roll is for small ships: the true medium ship is not judged, and a small
        // one found as a medium has no verdict, as though missed.
        let truth = scene(
            r#"{"id": "s1", "size": "small", "x": 300, "y": 300, "heading_deg": 90},
               {"id": "s2", "size": "medium", "x": 600, "y": 600, "heading_deg": 90},
               {"id": "s3", "size": "small", "x": 300, "y": 600, "heading_deg": 90}"#,
            "",
        );
        let found = scene(
            r#"{"id": "a", "size": "small", "x": 300, "y": 300, "heading_deg": 90, "sigma_mm": 0.2, "sigma_deg": 0.2, "confidence": 0.9},
               {"id": "b", "size": "medium", "x": 600, "y": 600, "heading_deg": 90, "sigma_mm": 0.2, "sigma_deg": 0.2, "confidence": 0.9},
               {"id": "c", "size": "medium", "x": 300, "y": 600, "heading_deg": 90, "sigma_mm": 0.2, "sigma_deg": 0.2, "confidence": 0.9}"#,
            "",
        );
        let a = agreement(
            &truth,
            &found,
            &pairs(&[("s1", "a"), ("s2", "b"), ("s3", "c")]),
            Models::builtin(),
            &RollOptions {
                template: crate::rules::RollTemplate::Bank1Forward,
                ..RollOptions::default()
            },
        )
        .unwrap();
        assert_eq!(a.calls.len(), 6);
        assert!(a.calls.iter().all(|c| c.ship == "s1"));
        assert_eq!(a.missed_positions, 6);
    }

    #[test]
    fn a_landing_decided_by_a_doubted_ship_is_left_to_the_judge_who_is_told_of_it() {
        // s2 stands where s1's roll right lands; found, it is a doubted square (only a
        // corner seen). A square that may be another's proves nothing either way, so the
        // judge is named it; s3, doubted too but 100 mm and more from every landing, is not.
        let truth = scene(
            &format!(
                r#"{TRUE_SHIPS}, {{"id": "s3", "size": "small", "x": 400, "y": 600, "heading_deg": 90}}"#
            ),
            "",
        );
        let found = |confidence: f64| {
            scene(
                &format!(
                    r#"{{"id": "a", "size": "small", "x": 400, "y": 400, "heading_deg": 90, "sigma_mm": 0.2, "sigma_deg": 0.2, "confidence": 0.9}},
                       {{"id": "b", "size": "small", "x": 460, "y": 400, "heading_deg": 90, "sigma_mm": 6.5, "sigma_deg": 8, "confidence": {confidence}, "doubts": ["corner_only"]}},
                       {{"id": "c", "size": "small", "x": 400, "y": 600, "heading_deg": 90, "sigma_mm": 6.5, "sigma_deg": 8, "confidence": 0.3, "doubts": ["corner_only"]}}"#
                ),
                "",
            )
        };
        let run = |c: f64| rolls(&truth, &found(c), &[("s1", "a")]);
        let right = |a: &Agreement| -> Vec<Call> {
            a.calls
                .iter()
                .filter(|c| c.side == Side::Right)
                .map(|c| c.call)
                .collect()
        };
        assert_eq!(right(&run(0.3)), [Call::LeftRight; 3]);
        assert_eq!(right(&run(0.9)), [Call::SureRight; 3]);
        // Judge mode names b beside s1's roll, and not c.
        let f = found(0.3);
        let table = Table::from_scene(&f, Models::builtin()).unwrap();
        let v = barrel_roll(
            &table,
            Models::builtin(),
            "a",
            &[Side::Left, Side::Right],
            &RollOptions::default(),
        )
        .unwrap();
        let named: Vec<String> = super::super::doubted_blockers(&v, &f)
            .iter()
            .map(|n| n.text.clone())
            .collect();
        assert_eq!(named.len(), 1, "{named:?}");
        assert!(named[0].starts_with("beside the roll, b "), "{named:?}");
    }
}

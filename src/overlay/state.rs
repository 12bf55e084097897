//! What the user has chosen (ship, sides, template, obstacles) and the verdict for it.
//! No egui here: the keys and widgets in `app` and `panel` only call these methods, so the
//! behaviour is tested without a frame.

use crate::Models;
use crate::rules::{RollError, RollOptions, RollTemplate, RollVerdict, Side, Table, barrel_roll};
use crate::scene::Scene;
use std::time::{Duration, Instant};

use super::OverlayError;

/// Which side(s) of the selected ship to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sides {
    Left,
    Right,
    Both,
}

impl Sides {
    pub fn sides(self) -> &'static [Side] {
        match self {
            Sides::Left => &[Side::Left],
            Sides::Right => &[Side::Right],
            Sides::Both => &[Side::Left, Side::Right],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Sides::Left => "left",
            Sides::Right => "right",
            Sides::Both => "both",
        }
    }
}

/// The templates in the order of the picker and of keys 1 to 4.
pub const TEMPLATES: [RollTemplate; 4] = [
    RollTemplate::Straight1,
    RollTemplate::Straight2,
    RollTemplate::Bank1Forward,
    RollTemplate::Bank1Backward,
];

/// Everything the overlay shows, without the view (zoom, pan).
#[derive(Clone, Debug)]
pub struct OverlayState {
    /// Where the table came from, for the title and the panel.
    pub source: String,
    pub scene: Scene,
    pub table: Table,
    /// Index into `table.ships`; the table always has a ship (checked in `new`).
    selected: usize,
    pub sides: Sides,
    pub template: RollTemplate,
    pub ignore_obstacles: bool,
}

/// The verdict for the current choice and what it cost.
#[derive(Clone, Debug)]
pub struct Judged {
    pub verdict: Result<RollVerdict, RollError>,
    pub took: Duration,
}

impl OverlayState {
    pub fn new(source: String, scene: Scene, table: Table) -> Result<OverlayState, OverlayError> {
        if table.ships.is_empty() {
            return Err(OverlayError::NoShips);
        }
        Ok(OverlayState {
            source,
            scene,
            table,
            selected: 0,
            sides: Sides::Both,
            template: RollTemplate::Straight1,
            ignore_obstacles: false,
        })
    }

    pub fn selected(&self) -> usize {
        self.selected
    }

    pub fn selected_id(&self) -> &str {
        // `selected` is always in range: `new` refuses an empty table and every setter
        // checks; the fallback only keeps this total.
        self.table
            .ships
            .get(self.selected)
            .map_or("", |s| s.id.as_str())
    }

    /// Selects a ship by index; out of range is ignored.
    pub fn select(&mut self, index: usize) {
        if index < self.table.ships.len() {
            self.selected = index;
        }
    }

    /// Selects a ship by id.
    pub fn select_id(&mut self, id: &str) -> Result<(), OverlayError> {
        match self.table.ships.iter().position(|s| s.id == id) {
            Some(i) => {
                self.selected = i;
                Ok(())
            }
            None => Err(OverlayError::UnknownShip {
                id: id.to_string(),
                known: self
                    .table
                    .ships
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// Tab: the next ship in scene order, wrapping round.
    pub fn next_ship(&mut self) {
        self.selected = (self.selected + 1) % self.table.ships.len().max(1);
    }

    /// Shift+Tab.
    pub fn previous_ship(&mut self) {
        let n = self.table.ships.len().max(1);
        self.selected = (self.selected + n - 1) % n;
    }

    pub fn options(&self) -> RollOptions {
        RollOptions {
            template: self.template,
            ignore_obstacles: self.ignore_obstacles,
            tractor: false,
        }
    }

    /// Judges the current choice. Cheap (tens of microseconds), so the overlay calls it
    /// every frame instead of caching, and a moved ship is never shown with a stale verdict.
    pub fn judge(&self) -> Judged {
        let start = Instant::now();
        let verdict = barrel_roll(
            &self.table,
            Models::builtin(),
            self.selected_id(),
            self.sides.sides(),
            &self.options(),
        );
        Judged {
            verdict,
            took: start.elapsed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlay::Source;

    fn demo() -> OverlayState {
        let (scene, table) = Source::Demo.load(Models::builtin()).expect("demo");
        OverlayState::new("demo".into(), scene, table).expect("state")
    }

    #[test]
    fn tab_cycles_through_every_ship_and_wraps() {
        let mut s = demo();
        let n = s.table.ships.len();
        let mut seen = vec![s.selected_id().to_string()];
        for _ in 1..n {
            s.next_ship();
            seen.push(s.selected_id().to_string());
        }
        assert_eq!(seen, ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"]);
        s.next_ship();
        assert_eq!(s.selected_id(), "s1");
        s.previous_ship();
        assert_eq!(s.selected_id(), "s8");
    }

    #[test]
    fn select_by_id_checks_the_id() {
        let mut s = demo();
        s.select_id("s3").expect("s3");
        assert_eq!(s.selected(), 2);
        let e = s.select_id("zz").expect_err("unknown");
        assert!(e.to_string().contains("s1, s2"), "{e}");
        s.select(99);
        assert_eq!(s.selected_id(), "s3");
    }

    #[test]
    fn verdict_follows_the_choice_and_matches_barrel_roll() {
        let mut s = demo();
        s.sides = Sides::Right;
        let v = s.judge().verdict.expect("verdict");
        assert_eq!(v.directions.len(), 1);
        assert_eq!(v.directions[0].direction, Side::Right);
        let direct = barrel_roll(
            &s.table,
            Models::builtin(),
            "s1",
            &[Side::Right],
            &RollOptions::default(),
        )
        .expect("direct");
        assert_eq!(v, direct);
        // The demo's documented outcome: right front illegal, middle and back legal.
        let legal: Vec<bool> = v.directions[0].positions.iter().map(|p| p.legal).collect();
        assert_eq!(legal, [false, true, true]);
    }

    #[test]
    fn small_only_template_on_a_large_ship_is_an_error_not_a_panic() {
        let mut s = demo();
        s.select_id("s3").expect("s3");
        s.template = RollTemplate::Bank1Forward;
        assert!(s.judge().verdict.is_err());
    }

    #[test]
    fn a_table_without_ships_is_refused() {
        let (scene, mut table) = Source::Demo.load(Models::builtin()).expect("demo");
        table.ships.clear();
        assert!(matches!(
            OverlayState::new("x".into(), scene, table),
            Err(OverlayError::NoShips)
        ));
    }
}

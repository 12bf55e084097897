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
    /// Index into `table.ships` of the chosen ship; `None` while it is not on the table (a
    /// live table before the first ship is seen, or a chosen ship that detection lost).
    selected: Option<usize>,
    /// The id the user chose. Live scenes replace the table many times a second and may
    /// reorder or briefly lose ships; the choice follows the id (tracker ids are stable),
    /// never the index.
    chosen: Option<String>,
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
        let mut state = OverlayState::live(source, scene, table);
        state.select(0);
        Ok(state)
    }

    /// A state for a live source: the table may be empty (nothing detected yet), and the
    /// first ship seen is selected unless `choose` picks one first.
    pub fn live(source: String, scene: Scene, table: Table) -> OverlayState {
        let mut state = OverlayState {
            source,
            scene,
            table,
            selected: None,
            chosen: None,
            sides: Sides::Both,
            template: RollTemplate::Straight1,
            ignore_obstacles: false,
        };
        state.follow_choice();
        state
    }

    /// The selected ship's index, `None` while the chosen ship is not on the table.
    pub fn selected(&self) -> Option<usize> {
        self.selected.filter(|&i| i < self.table.ships.len())
    }

    /// The chosen ship's id (also while it is off the table); "" when none was chosen.
    pub fn selected_id(&self) -> &str {
        match self.selected() {
            Some(i) => self.table.ships[i].id.as_str(),
            None => self.chosen.as_deref().unwrap_or(""),
        }
    }

    /// Whether the chosen ship is on the table now.
    pub fn has_selection(&self) -> bool {
        self.selected().is_some()
    }

    /// Selects a ship by index; out of range is ignored.
    pub fn select(&mut self, index: usize) {
        if let Some(s) = self.table.ships.get(index) {
            self.selected = Some(index);
            self.chosen = Some(s.id.clone());
        }
    }

    /// Chooses a ship by id without checking that it is there (a live table may not show
    /// it yet): it is selected whenever a scene has it.
    pub fn choose(&mut self, id: &str) {
        self.chosen = Some(id.to_string());
        self.follow_choice();
    }

    /// Replaces the table with a newer one (a live source's next scene), keeping the chosen
    /// ship by id and every option.
    pub fn replace_table(&mut self, scene: Scene, table: Table) {
        self.scene = scene;
        self.table = table;
        self.follow_choice();
    }

    /// Points `selected` at the chosen id; with nothing chosen yet, the first ship.
    fn follow_choice(&mut self) {
        match &self.chosen {
            Some(id) => self.selected = self.table.ships.iter().position(|s| &s.id == id),
            None => self.select(0),
        }
    }

    /// Selects a ship by id.
    pub fn select_id(&mut self, id: &str) -> Result<(), OverlayError> {
        match self.table.ships.iter().position(|s| s.id == id) {
            Some(i) => {
                self.select(i);
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
        let n = self.table.ships.len().max(1);
        self.select(self.selected.map_or(0, |i| (i + 1) % n));
    }

    /// Shift+Tab.
    pub fn previous_ship(&mut self) {
        let n = self.table.ships.len().max(1);
        self.select(self.selected.map_or(0, |i| (i + n - 1) % n));
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
        assert_eq!(s.selected(), Some(2));
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
    fn a_new_table_keeps_the_choice_by_id_and_waits_for_a_lost_ship() {
        let mut s = demo();
        s.select_id("s3").expect("s3");
        let (scene, mut table) = Source::Demo.load(Models::builtin()).expect("demo");
        table.ships.reverse();
        s.replace_table(scene.clone(), table.clone());
        assert_eq!(s.selected_id(), "s3");
        assert_eq!(s.selected(), Some(5));
        table.ships.retain(|x| x.id != "s3");
        s.replace_table(scene.clone(), table.clone());
        assert_eq!((s.selected(), s.selected_id()), (None, "s3"));
        assert!(s.judge().verdict.is_err());
        let (_, full) = Source::Demo.load(Models::builtin()).expect("demo");
        s.replace_table(scene, full);
        assert_eq!((s.selected(), s.selected_id()), (Some(2), "s3"));
    }

    #[test]
    fn a_live_state_starts_empty_and_selects_the_first_ship_seen() {
        let (scene, mut table) = Source::Demo.load(Models::builtin()).expect("demo");
        let full = table.clone();
        table.ships.clear();
        let mut s = OverlayState::live("live".into(), scene.clone(), table);
        assert_eq!((s.selected(), s.selected_id()), (None, ""));
        s.next_ship();
        assert!(s.judge().verdict.is_err());
        s.replace_table(scene, full);
        assert_eq!(s.selected_id(), "s1");
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

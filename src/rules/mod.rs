//! The rules engine: from a table in millimetres to verdicts with reasons and clearances.
//! Barrel roll for now (spec sections 3 and 4); other moves later.

pub mod barrel_roll;
pub mod maneuver;
pub mod table;
pub mod verdict;

pub use barrel_roll::{RollError, RollOptions, barrel_roll};
pub use maneuver::{RollTemplate, Side, Slot};
pub use table::{Table, TableObstacle, TableShip};
pub use verdict::{Blocker, BlockerKind, DirectionVerdict, Landing, ROLL_FORMAT, RollVerdict};

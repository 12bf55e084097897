//! hashmark: where can this X-Wing ship barrel roll, and why not?
//!
//! `geometry` and `rules` are pure (no I/O, no OpenCV, no UI); `scene` is the file format
//! they read; `diagram` draws a scene and its verdicts; `cli` composes them. With
//! `--no-default-features` all of it builds and tests in seconds.

pub mod calibration;
pub mod cli;
pub mod clock;
pub mod diagram;
pub mod files;
pub mod geometry;
#[cfg(feature = "judge")]
pub mod judge;
pub mod models;
#[cfg(feature = "overlay")]
pub mod overlay;
pub mod rules;
pub mod scene;
pub mod track;
#[cfg(feature = "vision")]
pub mod vision;

pub use models::{BaseSize, Models};
pub use rules::{RollOptions, RollTemplate, RollVerdict, Side, Table, barrel_roll};
pub use scene::Scene;

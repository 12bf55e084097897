//! Obstacles by their outlines (issue 5, item 3). Being written; returns nothing yet.

use crate::geometry::PlayArea;
use crate::models::Models;
use crate::scene::{ObstacleSpec, ShipSpec};
use crate::vision::{Camera, VisionError};
use opencv::core::Mat;

/// Every obstacle token on the play area: a standard model with its pose where one fits,
/// else the measured polygon. `ships` are the bases already found, so that a base or its
/// miniature is not taken for an obstacle.
pub fn find_obstacles(
    _frame: &Mat,
    _background: Option<&Mat>,
    _camera: &Camera,
    _play_area: &PlayArea,
    _models: &Models,
    _ships: &[ShipSpec],
) -> Result<Vec<ObstacleSpec>, VisionError> {
    Ok(Vec::new())
}

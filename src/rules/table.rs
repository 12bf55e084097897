//! A scene resolved into geometry once, so that every roll only transforms and compares.

use crate::geometry::polygon::to_points;
use crate::geometry::{PlayArea, Pose, Shape, footprint};
use crate::models::{BaseSize, Models};
use crate::scene::{Scene, SceneError};

#[derive(Clone, Debug)]
pub struct TableShip {
    pub id: String,
    pub size: BaseSize,
    pub pose: Pose,
    /// Base with guides, table frame.
    pub shape: Shape,
    /// Measurement uncertainty from detection (RMS centre error mm, heading deg); 0 for a
    /// scene placed by hand.
    pub sigma_mm: f64,
    pub sigma_deg: f64,
}

#[derive(Clone, Debug)]
pub struct TableObstacle {
    pub id: String,
    pub model: Option<String>,
    /// RMS position error of the outline from detection, mm; 0 when placed by hand.
    pub sigma_mm: f64,
    /// Table frame.
    pub shape: Shape,
}

#[derive(Clone, Debug)]
pub struct Table {
    pub play_area: PlayArea,
    pub ships: Vec<TableShip>,
    pub obstacles: Vec<TableObstacle>,
}

impl Table {
    pub fn from_scene(scene: &Scene, models: &Models) -> Result<Table, SceneError> {
        scene.check(models)?;
        let ships = scene
            .ships
            .iter()
            .map(|s| {
                let pose = Pose::new(s.x, s.y, s.heading_deg);
                let base = footprint::base(models.bases.get(s.size).width_mm, &models.bases.guides);
                TableShip {
                    id: s.id.clone(),
                    size: s.size,
                    pose,
                    shape: base.transformed(&pose.isometry()),
                    sigma_mm: s.quality.sigma_mm.unwrap_or(0.0),
                    sigma_deg: s.quality.sigma_deg.unwrap_or(0.0),
                }
            })
            .collect();
        let obstacles = scene
            .obstacles
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let item = || format!("obstacles[{i}] ({})", o.id);
                let ring = o.outline(models).map_err(|message| SceneError::Item {
                    item: item(),
                    message,
                })?;
                let shape =
                    Shape::from_polygon(&to_points(&ring)).map_err(|e| SceneError::Item {
                        item: item(),
                        message: e.to_string(),
                    })?;
                Ok(TableObstacle {
                    id: o.id.clone(),
                    model: o.model.clone(),
                    sigma_mm: o.quality.sigma_mm.unwrap_or(0.0),
                    shape,
                })
            })
            .collect::<Result<_, SceneError>>()?;
        Ok(Table {
            play_area: scene.play_area,
            ships,
            obstacles,
        })
    }

    pub fn ship(&self, id: &str) -> Option<&TableShip> {
        self.ships.iter().find(|s| s.id == id)
    }
}

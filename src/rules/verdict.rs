//! The verdict of a barrel roll: plain serde types that every front end (CLI, SVG, overlay,
//! judge report) reads the same way.

use super::maneuver::{RollTemplate, Side, Slot};
use crate::geometry::Pose;
use crate::models::BaseSize;
use serde::{Deserialize, Serialize};

pub const ROLL_FORMAT: &str = "hashmark-roll/1";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockerKind {
    /// Another ship's base (with guides) under the landing base.
    Ship,
    /// An obstacle under the landing base.
    Obstacle,
    /// An obstacle under the template: the ship moves through it and the direction fails.
    TemplateObstacle,
    /// Part of the landing base outside the play area: the ship would flee.
    PlayArea,
}

impl BlockerKind {
    pub fn name(self) -> &'static str {
        match self {
            BlockerKind::Ship => "ship",
            BlockerKind::Obstacle => "obstacle",
            BlockerKind::TemplateObstacle => "template_obstacle",
            BlockerKind::PlayArea => "play_area",
        }
    }
}

/// Something that blocks a landing or comes closest to it, with the signed clearance:
/// the gap in mm when apart, minus the penetration depth when overlapping.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Blocker {
    pub kind: BlockerKind,
    /// The ship or obstacle id; absent for the play-area edge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub clearance_mm: f64,
    /// One-sigma uncertainty of this clearance (mm) from the measured poses of the two
    /// things it is between; absent when neither was measured (a scene placed by hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma_mm: Option<f64>,
}

impl Blocker {
    /// True when the measurement cannot tell the sign of this clearance: within two sigma
    /// of zero.
    pub fn too_close_to_call(&self) -> bool {
        self.sigma_mm
            .is_some_and(|s| s > 0.0 && self.clearance_mm.abs() < 2.0 * s)
    }
}

impl Blocker {
    pub fn label(&self) -> String {
        match &self.id {
            Some(id) => format!("{} {id}", self.kind.name()),
            None => self.kind.name().to_string(),
        }
    }
}

/// One of the three positions on one side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Landing {
    pub slot: Slot,
    pub x: f64,
    pub y: f64,
    pub heading_deg: f64,
    pub legal: bool,
    /// Legal: the gap to the nearest blocker (template clearance included). Illegal: minus
    /// the deepest penetration among the reasons.
    pub clearance_mm: f64,
    /// The blocker that sets `clearance_mm`.
    pub nearest: Blocker,
    /// Every reason the position is illegal, ships first, then obstacles, the template's
    /// obstacles and the play-area edge, each group by id; empty when legal.
    pub reasons: Vec<Blocker>,
    /// The landed base with guides, table mm, counter-clockwise.
    pub base_polygon: Vec<[f64; 2]>,
    /// The camera cannot settle it: legal but its nearest blocker is within two sigma, or
    /// illegal but no reason is beyond two sigma. A judge should measure by hand.
    #[serde(default)]
    pub too_close_to_call: bool,
}

impl Landing {
    pub fn pose(&self) -> Pose {
        Pose::new(self.x, self.y, self.heading_deg)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DirectionVerdict {
    pub direction: Side,
    /// True iff no position is legal: the roll to this side fails.
    pub fails: bool,
    /// Obstacles under the template (also listed when obstacles are ignored).
    pub moves_through: Vec<String>,
    /// Signed clearance of the template to the nearest obstacle; absent without obstacles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_clearance_mm: Option<f64>,
    /// The template in place, table mm, counter-clockwise.
    pub template_polygon: Vec<[f64; 2]>,
    pub positions: Vec<Landing>,
}

impl DirectionVerdict {
    pub fn legal_count(&self) -> usize {
        self.positions.iter().filter(|p| p.legal).count()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RollVerdict {
    pub format: String,
    pub ship: String,
    pub size: BaseSize,
    pub start: Pose,
    pub template: RollTemplate,
    pub ignore_obstacles: bool,
    pub tractor: bool,
    /// Set when the geometry used is our reading rather than an agreed rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpretation: Option<String>,
    pub directions: Vec<DirectionVerdict>,
}

impl RollVerdict {
    /// The one line that says what was judged, for every front end: ship, size, where it
    /// stands, the template and the options.
    pub fn headline(&self) -> String {
        format!(
            "{} ({}) at x {:.1} y {:.1} mm, heading {:.1} deg: barrel roll, {}{}{}",
            self.ship,
            self.size,
            self.start.x,
            self.start.y,
            self.start.heading_deg,
            self.template.name(),
            if self.ignore_obstacles {
                ", ignoring obstacles"
            } else {
                ""
            },
            if self.tractor { ", tractor beam" } else { "" },
        )
    }

    pub fn direction(&self, side: Side) -> Option<&DirectionVerdict> {
        self.directions.iter().find(|d| d.direction == side)
    }
}

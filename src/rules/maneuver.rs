//! Where the template goes and where the ship lands, in the rolling ship's own frame
//! (spec section 3), derived from the component data rather than copied from the table.

use crate::geometry::{Point, Shape, footprint};
use crate::models::{BaseSize, Models, RollPlacement};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Left,
    Right,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Slot {
    Front,
    Middle,
    Back,
}

impl Slot {
    pub fn name(self) -> &'static str {
        match self {
            Slot::Front => "front",
            Slot::Middle => "middle",
            Slot::Back => "back",
        }
    }
}

/// The templates a barrel roll can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RollTemplate {
    /// The standard roll.
    Straight1,
    /// Decloak, Fuel Injection Override, Overdrive Thruster.
    Straight2,
    /// Microthrusters, Lt. Lorrir: a 1-bank curving forward (small ships).
    #[value(name = "bank1-forward")]
    Bank1Forward,
    /// A 1-bank curving backward (small ships).
    #[value(name = "bank1-backward")]
    Bank1Backward,
}

impl RollTemplate {
    pub fn name(self) -> &'static str {
        match self {
            RollTemplate::Straight1 => "straight1",
            RollTemplate::Straight2 => "straight2",
            RollTemplate::Bank1Forward => "bank1-forward",
            RollTemplate::Bank1Backward => "bank1-backward",
        }
    }
}

/// One landing in the ship frame: the new centre and the turn of the heading.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalLanding {
    pub slot: Slot,
    pub centre: Point,
    pub turn_deg: f64,
}

/// A barrel roll to one side, in the rolling ship's frame.
#[derive(Clone, Debug)]
pub struct RollGeometry {
    pub template: Shape,
    pub landings: [LocalLanding; 3],
}

impl RollGeometry {
    /// The same roll to the other side: mirror x.
    pub fn mirrored(&self) -> RollGeometry {
        RollGeometry {
            template: self.template.mirrored_x(),
            landings: self.landings.map(|l| LocalLanding {
                slot: l.slot,
                centre: Point::new(-l.centre.x, l.centre.y),
                turn_deg: -l.turn_deg,
            }),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GeometryError {
    #[error("a {template} barrel roll is defined for small ships only, not {size}")]
    SmallOnly {
        template: &'static str,
        size: BaseSize,
    },
    #[error("the models have no {0} template")]
    MissingTemplate(&'static str),
}

/// Notes for rows of the pose table that are a reading of ours, not a rule peers agree on.
pub fn interpretation(
    size: BaseSize,
    template: RollTemplate,
    models: &Models,
) -> Option<&'static str> {
    let side_on = models.bases.get(size).roll_placement == RollPlacement::SideOn;
    (side_on && template == RollTemplate::Straight2).then_some(
        "medium/large 2-straight barrel roll: the template's 80 mm edge along the side, centres at +-40 mm; a geometric reading no peer implementation agrees on",
    )
}

/// The right-hand roll for a base size and template.
pub fn right_roll(
    models: &Models,
    size: BaseSize,
    template: RollTemplate,
) -> Result<RollGeometry, GeometryError> {
    let base = models.bases.get(size);
    let w = base.width_mm;
    let tw = models.templates.width_mm;
    let slots = [Slot::Front, Slot::Middle, Slot::Back];
    match template {
        RollTemplate::Straight1 | RollTemplate::Straight2 => {
            let speed = if template == RollTemplate::Straight1 {
                1
            } else {
                2
            };
            let len = models
                .templates
                .straight(speed)
                .ok_or(GeometryError::MissingTemplate(template.name()))?
                .length_mm;
            let (template_shape, centre_x, slide) = match base.roll_placement {
                // Narrow end on the side hashmark; the ship lands against the far end.
                RollPlacement::EndOn => (
                    footprint::rectangle(w / 2.0, -tw / 2.0, w / 2.0 + len, tw / 2.0),
                    w + len,
                    tw / 2.0,
                ),
                // Long edge along the side, its midpoint on the hashmark.
                RollPlacement::SideOn => (
                    footprint::rectangle(w / 2.0, -len / 2.0, w / 2.0 + tw, len / 2.0),
                    w + tw,
                    len / 2.0,
                ),
            };
            let landings = [slide, 0.0, -slide].map(|dy| (dy, 0.0));
            Ok(RollGeometry {
                template: template_shape,
                landings: std::array::from_fn(|i| LocalLanding {
                    slot: slots[i],
                    centre: Point::new(centre_x, landings[i].0),
                    turn_deg: 0.0,
                }),
            })
        }
        RollTemplate::Bank1Forward | RollTemplate::Bank1Backward => {
            if base.roll_placement != RollPlacement::EndOn {
                return Err(GeometryError::SmallOnly {
                    template: template.name(),
                    size,
                });
            }
            let bank = models
                .templates
                .bank(1)
                .ok_or(GeometryError::MissingTemplate("bank1"))?;
            let (r, a) = (bank.radius_mm, bank.angle_deg.to_radians());
            // Forward (s = 1): the centre-line leaves (w/2, 0) along +x and curves about
            // (w/2, r) towards +y; backward (s = -1) is its mirror image in y. The landed
            // ship's side hashmark meets the far end, its heading turned by s * angle.
            let s = if template == RollTemplate::Bank1Forward {
                1.0
            } else {
                -1.0
            };
            let template_shape = footprint::arc_band(
                Point::new(w / 2.0, s * r),
                r,
                tw,
                -90.0 * s,
                s * bank.angle_deg,
            );
            let end = Point::new(w / 2.0 + r * a.sin(), s * (r - r * a.cos()));
            let along = nalgebra::Vector2::new(a.cos(), s * a.sin());
            let middle = end + along * (w / 2.0);
            // Front and back slide along the far end edge, which is the landed ship's
            // forward axis.
            let forward = nalgebra::Vector2::new(-s * a.sin(), a.cos());
            let centres = [
                middle + forward * (tw / 2.0),
                middle,
                middle - forward * (tw / 2.0),
            ];
            Ok(RollGeometry {
                template: template_shape,
                landings: std::array::from_fn(|i| LocalLanding {
                    slot: slots[i],
                    centre: centres[i],
                    turn_deg: s * bank.angle_deg,
                }),
            })
        }
    }
}

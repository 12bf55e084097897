//! Barrel roll legality (spec section 4).

use super::maneuver::{self, GeometryError, RollGeometry, RollTemplate, Side};
use super::table::Table;
use super::verdict::{Blocker, BlockerKind, DirectionVerdict, Landing, ROLL_FORMAT, RollVerdict};
use crate::geometry::polygon::to_pairs;
use crate::geometry::shape::clearance;
use crate::geometry::{Shape, footprint};
use crate::models::Models;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RollOptions {
    pub template: RollTemplate,
    /// Q7 Astromech, Collision Detector, Backwards Tailslide: move through and land on
    /// obstacles.
    pub ignore_obstacles: bool,
    /// The opponent rolls this ship with a tractor beam; obstacles always count.
    pub tractor: bool,
}

impl Default for RollOptions {
    fn default() -> Self {
        RollOptions {
            template: RollTemplate::Straight1,
            ignore_obstacles: false,
            tractor: false,
        }
    }
}

impl RollOptions {
    pub fn obstacles_count(&self) -> bool {
        self.tractor || !self.ignore_obstacles
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RollError {
    #[error("no ship \"{id}\" in the scene (ships: {known})")]
    UnknownShip { id: String, known: String },
    #[error(transparent)]
    Geometry(#[from] GeometryError),
}

/// Rolls ship `ship_id` to each of `sides` and judges all three positions on each.
pub fn barrel_roll(
    table: &Table,
    models: &Models,
    ship_id: &str,
    sides: &[Side],
    opts: &RollOptions,
) -> Result<RollVerdict, RollError> {
    let Some(ship) = table.ship(ship_id) else {
        let known: Vec<&str> = table.ships.iter().map(|s| s.id.as_str()).collect();
        return Err(RollError::UnknownShip {
            id: ship_id.to_string(),
            known: if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            },
        });
    };
    let right = maneuver::right_roll(models, ship.size, opts.template)?;
    let base = footprint::base(models.bases.get(ship.size).width_mm, &models.bases.guides);
    let directions = sides
        .iter()
        .map(|&side| {
            let geometry = match side {
                Side::Right => right.clone(),
                Side::Left => right.mirrored(),
            };
            judge_direction(table, ship_id, &ship.pose, &base, side, &geometry, opts)
        })
        .collect();
    Ok(RollVerdict {
        format: ROLL_FORMAT.to_string(),
        ship: ship.id.clone(),
        size: ship.size,
        start: ship.pose,
        template: opts.template,
        ignore_obstacles: opts.ignore_obstacles && !opts.tractor,
        tractor: opts.tractor,
        interpretation: maneuver::interpretation(ship.size, opts.template, models)
            .map(str::to_string),
        directions,
    })
}

fn judge_direction(
    table: &Table,
    ship_id: &str,
    start: &crate::geometry::Pose,
    base: &Shape,
    side: Side,
    geometry: &RollGeometry,
    opts: &RollOptions,
) -> DirectionVerdict {
    let iso = start.isometry();
    let template = geometry.template.transformed(&iso);
    // How far a measurement error of the rolling ship moves the template's far end and a
    // landing's far corner: its centre error, plus its heading error over the lever.
    let me = table.ship(ship_id);
    let (own_mm, own_rad) = me.map_or((0.0, 0.0), |s| (s.sigma_mm, s.sigma_deg.to_radians()));
    let reach = |p: crate::geometry::Point| own_mm.hypot(own_rad * p.coords.norm());
    let template_sigma = reach(crate::geometry::Point::new(0.0, 0.0)).max(
        geometry
            .template
            .outline()
            .iter()
            .map(|p| reach(*p))
            .fold(0.0, f64::max),
    );

    // The template is placed once for all three positions.
    let mut moves_through = Vec::new();
    let mut template_nearest: Option<Blocker> = None;
    let mut template_reasons = Vec::new();
    for o in &table.obstacles {
        let lower = template.circle_gap(&o.shape);
        if lower > 0.0
            && template_nearest
                .as_ref()
                .is_some_and(|b| lower >= b.clearance_mm)
        {
            continue;
        }
        let c = clearance(&template, &o.shape);
        let blocker = Blocker {
            kind: BlockerKind::TemplateObstacle,
            id: Some(o.id.clone()),
            clearance_mm: c,
            sigma_mm: combine(template_sigma, o.sigma_mm),
        };
        if c < 0.0 {
            moves_through.push(o.id.clone());
            if opts.obstacles_count() {
                template_reasons.push(blocker.clone());
            }
        }
        if template_nearest.as_ref().is_none_or(|b| c < b.clearance_mm) {
            template_nearest = Some(blocker);
        }
    }
    let template_clearance_mm = template_nearest.as_ref().map(|b| b.clearance_mm);

    let positions: Vec<Landing> = geometry
        .landings
        .iter()
        .map(|l| {
            let pose = start.then(l.centre, l.turn_deg);
            let shape = base.transformed(&pose.isometry());
            let landing_sigma = base
                .outline()
                .iter()
                .map(|p| reach(l.centre + p.coords))
                .fold(0.0, f64::max);
            let mut reasons = template_reasons.clone();
            let mut nearest = Blocker {
                kind: BlockerKind::PlayArea,
                id: None,
                clearance_mm: table.play_area.clearance(shape.outline()),
                sigma_mm: combine(landing_sigma, 0.0),
            };
            if nearest.clearance_mm < 0.0 {
                reasons.push(nearest.clone());
            }
            if opts.obstacles_count()
                && let Some(t) = &template_nearest
                && t.clearance_mm < nearest.clearance_mm
            {
                nearest = t.clone();
            }
            // A ship's corners move by its centre error and its heading error over half
            // its diagonal.
            let ships = table.ships.iter().filter(|s| s.id != ship_id).map(|s| {
                let half_diag = s
                    .shape
                    .outline()
                    .iter()
                    .map(|p| (p - s.pose.centre()).norm())
                    .fold(0.0, f64::max);
                (
                    BlockerKind::Ship,
                    &s.id,
                    &s.shape,
                    s.sigma_mm.hypot(s.sigma_deg.to_radians() * half_diag),
                )
            });
            let obstacles = table
                .obstacles
                .iter()
                .filter(|_| opts.obstacles_count())
                .map(|o| (BlockerKind::Obstacle, &o.id, &o.shape, o.sigma_mm));
            // Cheapest bound first; skip exact work that cannot overlap nor come nearer.
            let mut candidates: Vec<(f64, BlockerKind, &String, &Shape, f64)> = ships
                .chain(obstacles)
                .map(|(k, id, s, sigma)| (shape.circle_gap(s), k, id, s, sigma))
                .collect();
            candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (lower, kind, id, other, sigma) in candidates {
                if lower > 0.0 && lower >= nearest.clearance_mm {
                    break;
                }
                let c = clearance(&shape, other);
                let blocker = Blocker {
                    kind,
                    id: Some(id.clone()),
                    clearance_mm: c,
                    sigma_mm: combine(landing_sigma, sigma),
                };
                if c < 0.0 {
                    reasons.push(blocker.clone());
                }
                if c < nearest.clearance_mm {
                    nearest = blocker;
                }
            }
            reasons.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
            let legal = reasons.is_empty();
            if !legal {
                // The deepest reason sets the (negative) clearance.
                if let Some(deepest) = reasons
                    .iter()
                    .min_by(|a, b| a.clearance_mm.total_cmp(&b.clearance_mm))
                {
                    nearest = deepest.clone();
                }
            }
            let too_close_to_call = if legal {
                nearest.too_close_to_call()
            } else {
                reasons.iter().all(Blocker::too_close_to_call)
            };
            Landing {
                too_close_to_call,
                slot: l.slot,
                x: pose.x,
                y: pose.y,
                heading_deg: pose.heading_deg,
                legal,
                clearance_mm: nearest.clearance_mm,
                nearest,
                reasons,
                base_polygon: to_pairs(shape.outline()),
            }
        })
        .collect();
    DirectionVerdict {
        direction: side,
        fails: positions.iter().all(|p| !p.legal),
        moves_through,
        template_clearance_mm,
        template_polygon: to_pairs(template.outline()),
        positions,
    }
}

/// The uncertainty of a clearance between two measured things; `None` when neither was
/// measured.
fn combine(a: f64, b: f64) -> Option<f64> {
    let s = a.hypot(b);
    (s > 0.0).then_some(s)
}

//! The verdict's clearances as one flat list: what a judge reads down to find the close
//! calls, without walking directions, landings and reasons.

use crate::rules::{Blocker, BlockerKind, RollVerdict, Side, Slot};
use serde::{Deserialize, Serialize};

/// Why a clearance is listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClearanceRole {
    /// The template's gap to the nearest obstacle (placed once per direction).
    Template,
    /// A legal landing's gap to its nearest blocker.
    Nearest,
    /// One reason an illegal landing is illegal (minus its penetration depth).
    Reason,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Clearance {
    pub direction: Side,
    /// The landing; absent for the template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<Slot>,
    pub role: ClearanceRole,
    pub kind: BlockerKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Signed: the gap when apart, minus the penetration depth when overlapping.
    pub clearance_mm: f64,
    /// One sigma of the clearance from the measured poses; absent for a hand-made scene.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma_mm: Option<f64>,
    /// Within two sigma of zero: the camera cannot tell the sign.
    pub too_close_to_call: bool,
    /// The landing's own verdict (absent for the template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legal: Option<bool>,
}

fn row(direction: Side, slot: Option<Slot>, role: ClearanceRole, b: &Blocker) -> Clearance {
    Clearance {
        direction,
        slot,
        role,
        kind: b.kind,
        id: b.id.clone(),
        clearance_mm: b.clearance_mm,
        sigma_mm: b.sigma_mm,
        too_close_to_call: b.too_close_to_call(),
        legal: None,
    }
}

/// Per direction: the template's clearance, then per landing its nearest blocker (legal)
/// or every reason (illegal), in the verdict's order.
pub fn clearances(v: &RollVerdict) -> Vec<Clearance> {
    let mut out = Vec::new();
    for d in &v.directions {
        if let Some(c) = d.template_clearance_mm {
            // The verdict keeps the template's blocker only where a landing cites it; take
            // its id and sigma from there, else list the bare number.
            let cited = d
                .positions
                .iter()
                .flat_map(|p| std::iter::once(&p.nearest).chain(&p.reasons))
                .find(|b| b.kind == BlockerKind::TemplateObstacle && b.clearance_mm == c);
            // Over exactly one obstacle, that one sets the (negative) clearance.
            let only = match d.moves_through.as_slice() {
                [one] if c < 0.0 => Some(one.clone()),
                _ => None,
            };
            let blocker = cited.cloned().unwrap_or(Blocker {
                kind: BlockerKind::TemplateObstacle,
                id: only,
                clearance_mm: c,
                sigma_mm: None,
            });
            out.push(row(d.direction, None, ClearanceRole::Template, &blocker));
        }
        for p in &d.positions {
            let blockers: Vec<(ClearanceRole, &Blocker)> = if p.legal {
                vec![(ClearanceRole::Nearest, &p.nearest)]
            } else {
                p.reasons
                    .iter()
                    .map(|r| (ClearanceRole::Reason, r))
                    .collect()
            };
            for (role, b) in blockers {
                out.push(Clearance {
                    legal: Some(p.legal),
                    ..row(d.direction, Some(p.slot), role, b)
                });
            }
        }
    }
    out
}

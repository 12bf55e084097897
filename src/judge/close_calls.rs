//! Tables of close calls, to test the judge's calls where they matter. A random table
//! (the simulator's) has few: of 2406 roll positions on the five rendered sets, 119 lay
//! within 5 mm of the line. Here every rolling ship has a neighbour set beside where its
//! roll to one side lands, a chosen gap away (negative: overlapping), so that each table
//! holds a few positions a millimetre's error could turn.

use crate::geometry::{PlayArea, Pose, footprint};
use crate::models::{BaseSize, Models};
use crate::rules::{RollOptions, Side, Slot, Table, barrel_roll};
use crate::scene::{Quality, Scene, ShipSpec};

/// One designed close call: `ship` rolls to `side`, and `neighbour` stands beside its
/// landing's middle position, its side `gap_mm` from the landed base's (parallel to it, but
/// for `turn_deg`).
#[derive(Clone, Debug, PartialEq)]
pub struct CloseCall {
    pub ship: String,
    pub side: Side,
    pub neighbour: String,
    pub gap_mm: f64,
    pub turn_deg: f64,
}

/// The gaps drawn (mm): a judge's close calls, from a base's overlap to a clear fingertip.
const GAP_RANGE_MM: [f64; 2] = [-3.0, 3.0];
/// How far the neighbour is turned from the landed base (deg): parallel sides are the
/// hardest case, a whole side at the gap; a little turn is what a table shows.
const TURN_RANGE_DEG: f64 = 3.0;
/// The grid of cells a table is cut into, one pair per cell.
const CELLS: usize = 3;
/// How far a pair stays inside its cell (mm).
const CELL_MARGIN_MM: f64 = 6.0;

/// A table of `CELLS` x `CELLS` pairs on `area` (fewer where a pair did not fit its cell),
/// drawn from `seed`, and the close calls it was made for.
pub fn close_call_table(seed: u64, area: PlayArea, models: &Models) -> (Scene, Vec<CloseCall>) {
    let mut rng = SplitMix(seed ^ 0xC105E);
    let mut scene = Scene::new(area);
    let mut calls = Vec::new();
    let (cw, ch) = (area.width_mm / CELLS as f64, area.height_mm / CELLS as f64);
    for cell in 0..CELLS * CELLS {
        let (x0, y0) = ((cell % CELLS) as f64 * cw, (cell / CELLS) as f64 * ch);
        for _ in 0..20 {
            let pair = draw_pair(&mut rng, models, [x0 + cw / 2.0, y0 + ch / 2.0]);
            let Some((a, b, call)) = pair else { continue };
            let inside = |s: &ShipSpec| {
                footprint_corners(s, models).iter().all(|p| {
                    p[0] >= x0 + CELL_MARGIN_MM
                        && p[0] <= x0 + cw - CELL_MARGIN_MM
                        && p[1] >= y0 + CELL_MARGIN_MM
                        && p[1] <= y0 + ch - CELL_MARGIN_MM
                })
            };
            if inside(&a) && inside(&b) {
                let n = scene.ships.len();
                let (ida, idb) = (format!("s{}", n + 1), format!("s{}", n + 2));
                calls.push(CloseCall {
                    ship: ida.clone(),
                    neighbour: idb.clone(),
                    ..call
                });
                scene.ships.push(ShipSpec { id: ida, ..a });
                scene.ships.push(ShipSpec { id: idb, ..b });
                break;
            }
        }
    }
    (scene, calls)
}

/// A rolling ship about `centre` and its neighbour beside its landing: the pair is centred
/// on `centre` along the roll.
fn draw_pair(
    rng: &mut SplitMix,
    models: &Models,
    centre: [f64; 2],
) -> Option<(ShipSpec, ShipSpec, CloseCall)> {
    let sizes = [BaseSize::Small, BaseSize::Medium, BaseSize::Large];
    let (size_a, size_b) = (sizes[rng.below(3)], sizes[rng.below(3)]);
    let side = if rng.below(2) == 0 {
        Side::Left
    } else {
        Side::Right
    };
    let heading = round2(rng.range(0.0, 360.0));
    let (gap, turn) = (
        round2(rng.range(GAP_RANGE_MM[0], GAP_RANGE_MM[1])),
        round2(rng.range(-TURN_RANGE_DEG, TURN_RANGE_DEG)),
    );
    let ship = |id: &str, size, x: f64, y: f64, heading_deg: f64| ShipSpec {
        id: id.into(),
        size,
        x: round2(x),
        y: round2(y),
        heading_deg: round2(heading_deg.rem_euclid(360.0)),
        quality: Quality::default(),
    };
    // Where the roll lands from the origin; the pair is then moved to `centre`.
    let mut alone = Scene::new(PlayArea {
        width_mm: 10_000.0,
        height_mm: 10_000.0,
    });
    alone.ships.push(ship("a", size_a, 5000.0, 5000.0, heading));
    let table = Table::from_scene(&alone, models).ok()?;
    let roll = barrel_roll(&table, models, "a", &[side], &RollOptions::default()).ok()?;
    let landing = roll
        .direction(side)?
        .positions
        .iter()
        .find(|p| p.slot == Slot::Middle)?
        .clone();
    let out = [landing.x - 5000.0, landing.y - 5000.0];
    let len = out[0].hypot(out[1]);
    let u = [out[0] / len, out[1] / len];
    let half = |s: BaseSize| models.bases.get(s).width_mm / 2.0;
    let reach = len + half(size_a) + half(size_b) + gap;
    // The pair's middle is halfway from the rolling ship to its neighbour.
    let a = [
        centre[0] - u[0] * reach / 2.0,
        centre[1] - u[1] * reach / 2.0,
    ];
    let b = [a[0] + u[0] * reach, a[1] + u[1] * reach];
    Some((
        ship("a", size_a, a[0], a[1], heading),
        ship("b", size_b, b[0], b[1], landing.heading_deg + turn),
        CloseCall {
            ship: String::new(),
            side,
            neighbour: String::new(),
            gap_mm: gap,
            turn_deg: turn,
        },
    ))
}

/// The corners of a ship's base with its guides (table mm).
fn footprint_corners(s: &ShipSpec, models: &Models) -> Vec<[f64; 2]> {
    let pose = Pose::new(s.x, s.y, s.heading_deg);
    footprint::base(models.bases.get(s.size).width_mm, &models.bases.guides)
        .transformed(&pose.isometry())
        .outline()
        .iter()
        .map(|p| [p.x, p.y])
        .collect()
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// A small seeded generator (splitmix64): the tables are the same for a seed everywhere.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pair_is_the_close_call_it_was_drawn_for() {
        let models = Models::builtin();
        let area = models.play_areas.standard();
        let (scene, calls) = close_call_table(7, area, models);
        assert!(calls.len() >= 7, "{} pairs", calls.len());
        let table = Table::from_scene(&scene, models).unwrap();
        for c in &calls {
            let roll =
                barrel_roll(&table, models, &c.ship, &[c.side], &RollOptions::default()).unwrap();
            let middle = roll
                .direction(c.side)
                .unwrap()
                .positions
                .iter()
                .find(|p| p.slot == Slot::Middle)
                .unwrap();
            // The neighbour decides the middle landing: legal by the gap where it is clear,
            // blocked where it overlaps (a turn of up to 3 deg brings a corner up to about 1
            // mm nearer, and a base's guides stand out of its front and rear).
            let id = middle.nearest.id.as_deref();
            assert_eq!(id, Some(c.neighbour.as_str()), "{c:?}: {middle:?}");
            assert!(
                middle.clearance_mm <= c.gap_mm + 0.01 && middle.clearance_mm >= c.gap_mm - 2.5,
                "{c:?}: clearance {}",
                middle.clearance_mm
            );
        }
        // Nothing else is in the way: every ship is on the table, no two pairs touch.
        for s in &scene.ships {
            assert!(
                footprint_corners(s, models)
                    .iter()
                    .all(|p| area.holds(*p, 0.0))
            );
        }
        let (again, _) = close_call_table(7, area, models);
        assert_eq!(scene, again, "a seed gives the same table");
    }
}

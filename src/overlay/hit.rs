//! Which ship a click picks. Pure geometry on table millimetres, so that it is tested
//! without a window.

use crate::geometry::Point;
use crate::rules::Table;

/// How far outside a base (mm) a click still picks it: a finger or a shaky mouse on a
/// projector misses a 40 mm base easily.
pub const PICK_SLOP_MM: f64 = 6.0;

/// Even-odd test: true when `p` is inside the closed ring (either orientation).
pub fn point_in_polygon(p: [f64; 2], ring: &[Point]) -> bool {
    let n = ring.len();
    if n < 3 {
        return false;
    }
    let mut inside = false;
    let mut j = n - 1;
    for i in 0..n {
        let (a, b) = (ring[i], ring[j]);
        if (a.y > p[1]) != (b.y > p[1]) {
            let x = a.x + (p[1] - a.y) * (b.x - a.x) / (b.y - a.y);
            if p[0] < x {
                inside = !inside;
            }
        }
        j = i;
    }
    inside
}

/// Distance from `p` to the ring's boundary.
fn distance_to_ring(p: [f64; 2], ring: &[Point]) -> f64 {
    let q = Point::new(p[0], p[1]);
    let n = ring.len();
    (0..n)
        .map(|i| crate::geometry::convex::point_segment_distance(q, ring[i], ring[(i + 1) % n]))
        .fold(f64::INFINITY, f64::min)
}

/// The index of the ship under the table point `p` (mm): the one whose base contains it,
/// else the nearest within [`PICK_SLOP_MM`] of its base; `None` on empty table.
pub fn ship_at(table: &Table, p: [f64; 2]) -> Option<usize> {
    if let Some(i) = table
        .ships
        .iter()
        .position(|s| point_in_polygon(p, s.shape.outline()))
    {
        return Some(i);
    }
    table
        .ships
        .iter()
        .enumerate()
        .map(|(i, s)| (i, distance_to_ring(p, s.shape.outline())))
        .filter(|(_, d)| *d <= PICK_SLOP_MM)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Models;
    use crate::overlay::Source;

    fn demo() -> Table {
        Source::Demo.load(Models::builtin()).expect("demo").1
    }

    #[test]
    fn square_contains_its_inside_only() {
        let sq: Vec<Point> = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]]
            .iter()
            .map(|p| Point::new(p[0], p[1]))
            .collect();
        assert!(point_in_polygon([5.0, 5.0], &sq));
        assert!(!point_in_polygon([15.0, 5.0], &sq));
        assert!(!point_in_polygon([5.0, -0.1], &sq));
        let cw: Vec<Point> = sq.iter().rev().copied().collect();
        assert!(point_in_polygon([5.0, 5.0], &cw));
        assert!(!point_in_polygon([5.0, 5.0], &sq[..2]));
    }

    #[test]
    fn a_click_on_a_ship_picks_it() {
        let t = demo();
        for (i, s) in t.ships.iter().enumerate() {
            assert_eq!(ship_at(&t, [s.pose.x, s.pose.y]), Some(i), "{}", s.id);
        }
    }

    #[test]
    fn a_click_just_outside_picks_the_nearest_and_far_away_nothing() {
        let t = demo();
        // s8 is a small ship (40 mm) at (100, 120) heading 10: 23 mm to the right of its
        // centre is about 3 mm outside the base.
        let s8 = t.ships.iter().position(|s| s.id == "s8").expect("s8");
        let p = t.ships[s8].pose.to_table(Point::new(23.0, 0.0));
        assert_eq!(ship_at(&t, [p.x, p.y]), Some(s8));
        assert_eq!(ship_at(&t, [880.0, 40.0]), None);
    }

    #[test]
    fn empty_table_picks_nothing() {
        let mut t = demo();
        t.ships.clear();
        assert_eq!(ship_at(&t, [300.0, 300.0]), None);
    }
}

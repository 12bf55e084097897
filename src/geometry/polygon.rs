//! Simple polygons given as rings of points: checks and orientation.

use super::Point;
use geo::{Validation, coord};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolygonError {
    #[error("a polygon needs at least 3 points, found {0}")]
    TooFewPoints(usize),
    #[error("point {0} is not a finite number")]
    NotFinite(usize),
    #[error("the polygon has no area")]
    NoArea,
    #[error("the polygon is not simple: {0}")]
    NotSimple(String),
}

/// Twice the signed area (positive when counter-clockwise).
pub fn signed_area2(ring: &[Point]) -> f64 {
    let n = ring.len();
    (0..n)
        .map(|i| {
            let (a, b) = (ring[i], ring[(i + 1) % n]);
            a.x * b.y - b.x * a.y
        })
        .sum()
}

/// Checks a ring (open or closed) and returns it open and counter-clockwise.
///
/// Consecutive duplicate points are dropped; self-intersection is checked with `geo`'s
/// validation so that the convex decomposition downstream always gets a simple polygon.
pub fn normalise_ring(raw: &[[f64; 2]]) -> Result<Vec<[f64; 2]>, PolygonError> {
    if let Some(i) = raw
        .iter()
        .position(|p| !(p[0].is_finite() && p[1].is_finite()))
    {
        return Err(PolygonError::NotFinite(i));
    }
    let mut pts: Vec<[f64; 2]> = Vec::with_capacity(raw.len());
    for p in raw {
        if pts.last() != Some(p) {
            pts.push(*p);
        }
    }
    if pts.len() > 1 && pts.first() == pts.last() {
        pts.pop();
    }
    if pts.len() < 3 {
        return Err(PolygonError::TooFewPoints(pts.len()));
    }
    let as_points: Vec<Point> = pts.iter().map(|p| Point::new(p[0], p[1])).collect();
    let area2 = signed_area2(&as_points);
    if area2.abs() < 1e-9 {
        return Err(PolygonError::NoArea);
    }
    let ring: Vec<geo::Coord<f64>> = pts.iter().map(|p| coord! {x: p[0], y: p[1]}).collect();
    let poly = geo::Polygon::new(geo::LineString::from(ring), vec![]);
    if let Err(e) = poly.check_validation() {
        return Err(PolygonError::NotSimple(e.to_string()));
    }
    if area2 < 0.0 {
        pts.reverse();
    }
    Ok(pts)
}

pub fn to_points(ring: &[[f64; 2]]) -> Vec<Point> {
    ring.iter().map(|p| Point::new(p[0], p[1])).collect()
}

pub fn to_pairs(ring: &[Point]) -> Vec<[f64; 2]> {
    ring.iter().map(|p| [p.x, p.y]).collect()
}

/// Distance from `p` to the segment a-b (plain pairs: the measuring code works on them).
pub fn segment_distance(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p[0] - a[0] - t * dx).hypot(p[1] - a[1] - t * dy)
}

/// Distance from `p` to a closed ring's boundary.
pub fn ring_distance(p: [f64; 2], ring: &[[f64; 2]]) -> f64 {
    (0..ring.len())
        .map(|i| segment_distance(p, ring[i], ring[(i + 1) % ring.len()]))
        .fold(f64::INFINITY, f64::min)
}

/// The box around a ring: [x0, y0, x1, y1] (min x, min y, max x, max y); an empty ring
/// gives an inverted box, which nothing is inside.
pub fn ring_bounds(ring: &[[f64; 2]]) -> [f64; 4] {
    ring.iter().fold(
        [f64::MAX, f64::MAX, f64::MIN, f64::MIN],
        |[x0, y0, x1, y1], p| [x0.min(p[0]), y0.min(p[1]), x1.max(p[0]), y1.max(p[1])],
    )
}

/// The mean of a ring's vertices (None for an empty ring): a label's or a sort key's
/// place, not the area centroid.
pub fn ring_mean(ring: &[[f64; 2]]) -> Option<[f64; 2]> {
    if ring.is_empty() {
        return None;
    }
    let n = ring.len() as f64;
    Some([
        ring.iter().map(|p| p[0]).sum::<f64>() / n,
        ring.iter().map(|p| p[1]).sum::<f64>() / n,
    ])
}

/// The convex hull of points, as an open counter-clockwise ring (empty for none).
pub fn ring_hull(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    use geo::ConvexHull;
    let mp = geo::MultiPoint::from(points.iter().map(|p| (p[0], p[1])).collect::<Vec<_>>());
    let mut out: Vec<[f64; 2]> = mp
        .convex_hull()
        .exterior()
        .points()
        .map(|p| [p.x(), p.y()])
        .collect();
    // geo closes its rings; these are open.
    if out.len() > 1 && out.first() == out.last() {
        out.pop();
    }
    out
}

/// How near a ring is to a circle: 4 pi area / perimeter^2, 1 for a circle, pi / 4 for a
/// square, less the longer or more ragged it is (0 for fewer than three vertices).
pub fn ring_roundness(ring: &[[f64; 2]]) -> f64 {
    if ring.len() < 3 {
        return 0.0;
    }
    let area = signed_area2(&to_points(ring)).abs() / 2.0;
    let perimeter: f64 = ring
        .iter()
        .zip(ring.iter().cycle().skip(1))
        .map(|(a, b)| (b[0] - a[0]).hypot(b[1] - a[1]))
        .sum();
    if perimeter > 0.0 {
        4.0 * std::f64::consts::PI * area / (perimeter * perimeter)
    } else {
        0.0
    }
}

/// Whether `p` lies inside a closed ring (even-odd rule; the boundary is either side).
pub fn ring_contains(ring: &[[f64; 2]], p: [f64; 2]) -> bool {
    let mut inside = false;
    let n = ring.len();
    for i in 0..n {
        let (a, b) = (ring[i], ring[(i + 1) % n]);
        if (a[1] > p[1]) != (b[1] > p[1]) {
            let x = a[0] + (p[1] - a[1]) / (b[1] - a[1]) * (b[0] - a[0]);
            if p[0] < x {
                inside = !inside;
            }
        }
    }
    inside
}

#[cfg(test)]
mod tests {
    /// A hull keeps the outermost points once each, open, counter-clockwise.
    #[test]
    fn a_hull_is_open_and_counter_clockwise() {
        let pts = [
            [0.0, 0.0],
            [10.0, 0.0],
            [5.0, 5.0],
            [10.0, 10.0],
            [0.0, 10.0],
            [2.0, 8.0],
        ];
        let hull = super::ring_hull(&pts);
        assert_eq!(hull.len(), 4, "{hull:?}");
        for corner in [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]] {
            assert!(hull.contains(&corner), "{corner:?} not in {hull:?}");
        }
        let area2 = super::signed_area2(&super::to_points(&hull));
        assert!(area2 > 0.0, "clockwise: {area2}");
        assert!(super::ring_hull(&[]).is_empty());
    }

    #[test]
    fn roundness_is_one_for_a_circle_and_less_for_a_square_or_a_sliver() {
        let circle: Vec<[f64; 2]> = (0..64)
            .map(|k| {
                let a = f64::from(k) * std::f64::consts::TAU / 64.0;
                [5.0 + 12.0 * a.cos(), -3.0 + 12.0 * a.sin()]
            })
            .collect();
        assert!((super::ring_roundness(&circle) - 1.0).abs() < 0.01);
        let square = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]];
        assert!((super::ring_roundness(&square) - std::f64::consts::FRAC_PI_4).abs() < 1e-9);
        let sliver = [[0.0, 0.0], [40.0, 0.0], [40.0, 2.0], [0.0, 2.0]];
        assert!(super::ring_roundness(&sliver) < 0.2);
        assert_eq!(super::ring_roundness(&square[..2]), 0.0);
    }

    #[test]
    fn distances_and_containment() {
        let sq = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]];
        assert_eq!(
            super::segment_distance([5.0, 3.0], [0.0, 0.0], [10.0, 0.0]),
            3.0
        );
        assert_eq!(
            super::segment_distance([-3.0, 4.0], [0.0, 0.0], [10.0, 0.0]),
            5.0
        );
        assert_eq!(super::ring_distance([5.0, 8.0], &sq), 2.0);
        assert!(super::ring_contains(&sq, [5.0, 5.0]) && !super::ring_contains(&sq, [11.0, 5.0]));
    }
    use super::*;

    #[test]
    fn rings_are_checked_and_turned_counter_clockwise() {
        let cw = [[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]];
        let r = normalise_ring(&cw).unwrap();
        assert_eq!(r.len(), 4);
        assert!(signed_area2(&to_points(&r)) > 0.0);
        assert_eq!(
            normalise_ring(&[[0.0, 0.0], [1.0, 1.0]]),
            Err(PolygonError::TooFewPoints(2))
        );
        assert_eq!(
            normalise_ring(&[[0.0, 0.0], [1.0, f64::NAN], [2.0, 0.0]]),
            Err(PolygonError::NotFinite(1))
        );
        assert_eq!(
            normalise_ring(&[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]),
            Err(PolygonError::NoArea)
        );
        let bowtie = [[0.0, 0.0], [2.0, 2.0], [2.0, 0.0], [0.0, 2.0]];
        assert!(matches!(
            normalise_ring(&bowtie),
            Err(PolygonError::NotSimple(_)) | Err(PolygonError::NoArea)
        ));
    }
}

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

#[cfg(test)]
mod tests {
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

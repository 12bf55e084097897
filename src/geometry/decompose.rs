//! Splits a simple polygon into few convex pieces: ear-cut triangulation (geo) followed by
//! Hertel-Mehlhorn merging, which removes every diagonal whose removal keeps a piece convex.
//! Few pieces keep the clearance computation fast; the result is exact (no approximation).

use super::polygon::{PolygonError, signed_area2};
use super::{Convex, Point};
use geo::TriangulateEarcut;

/// Convex pieces whose union is the simple polygon `ring` (counter-clockwise or not).
pub fn convex_pieces(ring: &[Point]) -> Result<Vec<Convex>, PolygonError> {
    if ring.len() < 3 {
        return Err(PolygonError::TooFewPoints(ring.len()));
    }
    if let Some(piece) = Convex::new(ring.to_vec()) {
        return Ok(vec![piece]);
    }
    let coords: Vec<geo::Coord<f64>> = ring.iter().map(|p| geo::coord! {x: p.x, y: p.y}).collect();
    let poly = geo::Polygon::new(geo::LineString::from(coords), vec![]);
    let raw = poly.earcut_triangles_raw();
    let n = raw.vertices.len();
    let pts: Vec<Point> = raw
        .vertices
        .iter()
        .map(|v| Point::new(v[0], v[1]))
        .collect();
    let mut pieces: Vec<Vec<usize>> = raw
        .triangle_indices
        .chunks_exact(3)
        .map(|t| {
            let mut tri = vec![t[0] % n, t[1] % n, t[2] % n];
            if signed_area2(&[pts[tri[0]], pts[tri[1]], pts[tri[2]]]) < 0.0 {
                tri.reverse();
            }
            tri
        })
        .filter(|tri| signed_area2(&[pts[tri[0]], pts[tri[1]], pts[tri[2]]]) > 1e-12)
        .collect();
    if pieces.is_empty() {
        return Err(PolygonError::NoArea);
    }

    // Hertel-Mehlhorn: merge neighbours across a shared diagonal while the union is convex.
    'merging: loop {
        for i in 0..pieces.len() {
            for j in (i + 1)..pieces.len() {
                if let Some(merged) = merge_if_convex(&pieces[i], &pieces[j], &pts) {
                    pieces[i] = merged;
                    pieces.swap_remove(j);
                    continue 'merging;
                }
            }
        }
        break;
    }

    pieces
        .iter()
        .map(|idx| Convex::new(idx.iter().map(|&k| pts[k]).collect()).ok_or(PolygonError::NoArea))
        .collect()
}

/// Joins two counter-clockwise index rings that share an edge, if the result is convex.
fn merge_if_convex(p: &[usize], q: &[usize], pts: &[Point]) -> Option<Vec<usize>> {
    let (np, nq) = (p.len(), q.len());
    for a in 0..np {
        let (u, v) = (p[a], p[(a + 1) % np]);
        // In q the shared edge runs the other way: v -> u.
        let Some(b) = (0..nq).find(|&b| q[b] == v && q[(b + 1) % nq] == u) else {
            continue;
        };
        // p from v round to u, then q from u round to v without its ends.
        let mut merged: Vec<usize> = (0..np).map(|k| p[(a + 1 + k) % np]).collect();
        merged.extend((1..nq - 1).map(|k| q[(b + 1 + k) % nq]));
        let m = merged.len();
        let convex = (0..m).all(|k| {
            let (x, y, z) = (
                pts[merged[k]],
                pts[merged[(k + 1) % m]],
                pts[merged[(k + 2) % m]],
            );
            (y - x).perp(&(z - y)) >= -1e-9
        });
        return convex.then_some(merged);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::Models;

    fn area(pieces: &[Convex]) -> f64 {
        pieces.iter().map(|c| signed_area2(c.points()) / 2.0).sum()
    }

    #[test]
    fn every_standard_obstacle_splits_into_pieces_of_the_same_area() {
        for m in Models::builtin().obstacles.iter() {
            let ring = crate::geometry::polygon::to_points(&m.outline);
            let pieces = convex_pieces(&ring).unwrap();
            let want = signed_area2(&ring) / 2.0;
            assert!(
                (area(&pieces) - want).abs() < 1e-6 * want,
                "{}: {} vs {}",
                m.xws,
                area(&pieces),
                want
            );
            assert!(pieces.len() < ring.len() - 2, "{} was not merged", m.xws);
        }
    }

    #[test]
    fn an_l_shape_becomes_two_pieces() {
        let l = [
            (0.0, 0.0),
            (2.0, 0.0),
            (2.0, 1.0),
            (1.0, 1.0),
            (1.0, 2.0),
            (0.0, 2.0),
        ]
        .map(|(x, y)| Point::new(x, y));
        let pieces = convex_pieces(&l).unwrap();
        assert_eq!(pieces.len(), 2);
        assert!((area(&pieces) - 3.0).abs() < 1e-12);
    }
}

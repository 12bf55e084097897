//! Shapes as unions of convex pieces, and the signed clearance between two shapes.
//!
//! The clearance of shapes A and B is the signed distance of the origin to their Minkowski
//! difference M = A - B, which is the union of the convex differences Ai - Bj of their
//! pieces. Outside M, it is the smallest gap between any two pieces. Inside M, it is minus
//! the distance to M's boundary: the shortest translation that pulls the shapes apart (the
//! penetration depth), exact for concave shapes too, where the deepest pair of pieces alone
//! would understate it.

use super::convex::{self, Convex, minkowski_difference};
use super::polygon::PolygonError;
use super::{Point, TOUCH_TOLERANCE_MM, Vec2, decompose};
use nalgebra::Isometry2;

#[derive(Clone, Debug)]
pub struct Shape {
    pieces: Vec<Convex>,
    /// The boundary, counter-clockwise: what is drawn and reported.
    outline: Vec<Point>,
    centre: Point,
    radius: f64,
}

impl Shape {
    /// A shape from its convex pieces and its outline (the pieces' union).
    pub fn new(pieces: Vec<Convex>, outline: Vec<Point>) -> Shape {
        let centre = if outline.is_empty() {
            Point::origin()
        } else {
            Point::from(outline.iter().map(|p| p.coords).sum::<Vec2>() / outline.len() as f64)
        };
        let radius = pieces
            .iter()
            .flat_map(|c| c.points())
            .map(|p| (p - centre).norm())
            .fold(0.0, f64::max);
        Shape {
            pieces,
            outline,
            centre,
            radius,
        }
    }

    /// A shape from a simple polygon, convex or not.
    pub fn from_polygon(ring: &[Point]) -> Result<Shape, PolygonError> {
        let pieces = decompose::convex_pieces(ring)?;
        let mut outline = ring.to_vec();
        if super::polygon::signed_area2(&outline) < 0.0 {
            outline.reverse();
        }
        Ok(Shape::new(pieces, outline))
    }

    pub fn pieces(&self) -> &[Convex] {
        &self.pieces
    }

    pub fn outline(&self) -> &[Point] {
        &self.outline
    }

    pub fn transformed(&self, iso: &Isometry2<f64>) -> Shape {
        Shape {
            pieces: self.pieces.iter().map(|c| c.transformed(iso)).collect(),
            outline: self.outline.iter().map(|p| iso * p).collect(),
            centre: iso * self.centre,
            radius: self.radius,
        }
    }

    /// Mirror image in the y axis (x -> -x).
    pub fn mirrored_x(&self) -> Shape {
        let mut outline: Vec<Point> = self.outline.iter().map(|p| Point::new(-p.x, p.y)).collect();
        outline.reverse();
        Shape {
            pieces: self.pieces.iter().map(Convex::mirrored_x).collect(),
            outline,
            centre: Point::new(-self.centre.x, self.centre.y),
            radius: self.radius,
        }
    }

    /// Mirror image in the x axis (y -> -y).
    pub fn mirrored_y(&self) -> Shape {
        let mut outline: Vec<Point> = self.outline.iter().map(|p| Point::new(p.x, -p.y)).collect();
        outline.reverse();
        Shape {
            pieces: self.pieces.iter().map(Convex::mirrored_y).collect(),
            outline,
            centre: Point::new(self.centre.x, -self.centre.y),
            radius: self.radius,
        }
    }

    /// A cheap lower bound of the clearance, from bounding circles.
    pub fn circle_gap(&self, other: &Shape) -> f64 {
        (self.centre - other.centre).norm() - self.radius - other.radius
    }

    /// True when the interiors overlap (touching is not overlapping).
    pub fn overlaps(&self, other: &Shape) -> bool {
        clearance(self, other) < 0.0
    }
}

/// Signed clearance in mm: the gap when apart, 0 when touching, minus the penetration depth
/// when overlapping.
pub fn clearance(a: &Shape, b: &Shape) -> f64 {
    let mut best = f64::INFINITY;
    for p in &a.pieces {
        for q in &b.pieces {
            if p.circle_gap(q) >= best {
                continue;
            }
            best = best.min(convex::signed_distance(p, q));
        }
    }
    if best > -TOUCH_TOLERANCE_MM {
        return best.max(0.0);
    }
    -union_depth(a, b)
}

/// Depth of the origin inside the union of the pieces' Minkowski differences.
fn union_depth(a: &Shape, b: &Shape) -> f64 {
    // Translating A by d along u separates the two shapes once A's extent along u clears
    // B's; the smallest such d over a few directions bounds the depth from above, so pieces
    // further than that from the origin cannot matter.
    let bound = separating_bound(a, b);
    let mut near: Vec<Convex> = Vec::new();
    for p in &a.pieces {
        for q in &b.pieces {
            if p.circle_gap(q) < bound {
                let m = minkowski_difference(p, q);
                if m.signed_distance_to_point(Point::origin()) < bound {
                    near.push(m);
                }
            }
        }
    }
    let origin = Point::origin();
    let mut best = bound;
    let mut covered: Vec<(f64, f64)> = Vec::new();
    for (k, m) in near.iter().enumerate() {
        for (s, e) in m.edges() {
            if convex::point_segment_distance(origin, s, e) >= best {
                continue;
            }
            covered.clear();
            for (l, other) in near.iter().enumerate() {
                if l != k
                    && let Some(iv) = other.interior_interval(s, e, 1e-9)
                {
                    covered.push(iv);
                }
            }
            covered.sort_by(|x, y| x.0.total_cmp(&y.0));
            // Walk the uncovered parts of the edge: they are on the union's boundary.
            let mut t = 0.0;
            for &(c0, c1) in covered.iter().chain(std::iter::once(&(1.0, 1.0))) {
                if c0 > t + 1e-12 {
                    let (ps, pe) = (s + (e - s) * t, s + (e - s) * c0.min(1.0));
                    best = best.min(convex::point_segment_distance(origin, ps, pe));
                }
                t = t.max(c1);
                if t >= 1.0 {
                    break;
                }
            }
        }
    }
    best
}

fn separating_bound(a: &Shape, b: &Shape) -> f64 {
    const DIRECTIONS: usize = 16;
    let mut best = f64::INFINITY;
    for k in 0..DIRECTIONS {
        let ang = k as f64 * std::f64::consts::TAU / DIRECTIONS as f64;
        let u = Vec2::new(ang.cos(), ang.sin());
        let a_min = extent(a, &u, f64::min);
        let b_max = extent(b, &(-u), f64::min);
        // Move A along u until min(A.u) >= max(B.u).
        best = best.min((-b_max) - a_min);
    }
    best.max(0.0) + 1e-9
}

fn extent(s: &Shape, u: &Vec2, pick: fn(f64, f64) -> f64) -> f64 {
    s.pieces
        .iter()
        .flat_map(|c| c.points())
        .map(|p| p.coords.dot(u))
        .fold(f64::INFINITY, pick)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x0: f64, y0: f64, x1: f64, y1: f64) -> Vec<Point> {
        vec![
            Point::new(x0, y0),
            Point::new(x1, y0),
            Point::new(x1, y1),
            Point::new(x0, y1),
        ]
    }

    #[test]
    fn touching_is_not_overlapping() {
        let a = Shape::from_polygon(&rect(0.0, 0.0, 10.0, 10.0)).unwrap();
        let b = Shape::from_polygon(&rect(10.0, 3.0, 20.0, 5.0)).unwrap();
        assert_eq!(clearance(&a, &b), 0.0);
        assert!(!a.overlaps(&b));
    }

    #[test]
    fn depth_in_a_concave_shape_is_the_union_depth() {
        // A U-shape made of thin pieces, and a bar pushed 3 mm into its floor across the
        // whole width: each piece alone could be escaped sideways, the union cannot.
        let u = [
            (0.0, 0.0),
            (30.0, 0.0),
            (30.0, 20.0),
            (25.0, 20.0),
            (25.0, 5.0),
            (5.0, 5.0),
            (5.0, 20.0),
            (0.0, 20.0),
        ]
        .map(|(x, y)| Point::new(x, y));
        let cup = Shape::from_polygon(&u).unwrap();
        let bar = Shape::from_polygon(&rect(-10.0, -8.0, 40.0, 3.0)).unwrap();
        let c = clearance(&bar, &cup);
        assert!((c + 3.0).abs() < 1e-9, "{c}");
        // A bar lying in the cup's slot, touching nothing.
        let inside = Shape::from_polygon(&rect(7.0, 6.0, 23.0, 30.0)).unwrap();
        assert!((clearance(&inside, &cup) - 1.0).abs() < 1e-9);
        // The same bar pushed 0.5 mm into the cup's right wall: the bar can step back 0.5.
        let wall = Shape::from_polygon(&rect(7.0, 6.0, 25.5, 30.0)).unwrap();
        assert!((clearance(&wall, &cup) + 0.5).abs() < 1e-9);
    }

    #[test]
    fn clearance_is_symmetric() {
        let a = Shape::from_polygon(&rect(0.0, 0.0, 10.0, 10.0)).unwrap();
        let b = Shape::from_polygon(&rect(7.0, 8.0, 20.0, 30.0)).unwrap();
        assert!((clearance(&a, &b) - clearance(&b, &a)).abs() < 1e-12);
        assert!((clearance(&a, &b) + 2.0).abs() < 1e-12);
    }
}

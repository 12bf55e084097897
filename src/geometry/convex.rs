//! Convex polygons: the pieces every shape is made of, because for convex pieces the
//! separating-axis test gives the exact gap and the exact penetration depth.

use super::{Point, Vec2};
use nalgebra::Isometry2;

/// A convex polygon, counter-clockwise, with its outward unit edge normals and a bounding
/// circle for cheap rejection.
#[derive(Clone, Debug)]
pub struct Convex {
    pts: Vec<Point>,
    normals: Vec<Vec2>,
    centre: Point,
    radius: f64,
}

impl Convex {
    /// Builds a convex piece from its corners in either orientation. Returns `None` when the
    /// points are fewer than 3, degenerate or not convex.
    pub fn new(mut pts: Vec<Point>) -> Option<Convex> {
        pts.dedup_by(|a, b| (*a - *b).norm() < 1e-12);
        while pts.len() > 1 && (pts[0] - pts[pts.len() - 1]).norm() < 1e-12 {
            pts.pop();
        }
        if pts.len() < 3 {
            return None;
        }
        if super::polygon::signed_area2(&pts) < 0.0 {
            pts.reverse();
        }
        let n = pts.len();
        for i in 0..n {
            let (a, b, c) = (pts[i], pts[(i + 1) % n], pts[(i + 2) % n]);
            if (b - a).perp(&(c - b)) < -1e-9 {
                return None;
            }
        }
        if super::polygon::signed_area2(&pts) < 1e-12 {
            return None;
        }
        Some(Convex::from_ccw(pts))
    }

    fn from_ccw(pts: Vec<Point>) -> Convex {
        let n = pts.len();
        let normals = (0..n)
            .map(|i| {
                let e = pts[(i + 1) % n] - pts[i];
                Vec2::new(e.y, -e.x).normalize()
            })
            .collect();
        let centre = Point::from(pts.iter().map(|p| p.coords).sum::<Vec2>() / n as f64);
        let radius = pts.iter().map(|p| (p - centre).norm()).fold(0.0, f64::max);
        Convex {
            pts,
            normals,
            centre,
            radius,
        }
    }

    pub fn points(&self) -> &[Point] {
        &self.pts
    }

    pub fn centre(&self) -> Point {
        self.centre
    }

    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// A rigid motion keeps convexity and orientation.
    pub fn transformed(&self, iso: &Isometry2<f64>) -> Convex {
        Convex {
            pts: self.pts.iter().map(|p| iso * p).collect(),
            normals: self.normals.iter().map(|n| iso.rotation * n).collect(),
            centre: iso * self.centre,
            radius: self.radius,
        }
    }

    /// The mirror image in the y axis (x -> -x): a right barrel roll into a left one.
    pub fn mirrored_x(&self) -> Convex {
        let mut pts: Vec<Point> = self.pts.iter().map(|p| Point::new(-p.x, p.y)).collect();
        pts.reverse();
        Convex::from_ccw(pts)
    }

    /// The mirror image in the x axis (y -> -y): a forward bank into a backward one.
    pub fn mirrored_y(&self) -> Convex {
        let mut pts: Vec<Point> = self.pts.iter().map(|p| Point::new(p.x, -p.y)).collect();
        pts.reverse();
        Convex::from_ccw(pts)
    }

    /// Lower bound of the distance between two pieces from their bounding circles.
    pub fn circle_gap(&self, other: &Convex) -> f64 {
        (self.centre - other.centre).norm() - self.radius - other.radius
    }

    /// Signed distance from a point: distance when outside, minus the distance to the
    /// boundary when inside.
    pub fn signed_distance_to_point(&self, p: Point) -> f64 {
        let s = self.max_face_distance(p);
        if s <= 0.0 {
            return s;
        }
        self.edges()
            .map(|(a, b)| point_segment_distance(p, a, b))
            .fold(f64::INFINITY, f64::min)
    }

    fn max_face_distance(&self, p: Point) -> f64 {
        self.pts
            .iter()
            .zip(&self.normals)
            .map(|(a, n)| n.dot(&(p - a)))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    pub fn edges(&self) -> impl Iterator<Item = (Point, Point)> + '_ {
        let n = self.pts.len();
        (0..n).map(move |i| (self.pts[i], self.pts[(i + 1) % n]))
    }

    /// The parameter interval of segment p + t (q - p), t in [0, 1], that lies deeper than
    /// `tol` inside this polygon; `None` when no part does.
    pub fn interior_interval(&self, p: Point, q: Point, tol: f64) -> Option<(f64, f64)> {
        let d = q - p;
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (a, n) in self.pts.iter().zip(&self.normals) {
            let f0 = n.dot(&(p - a)) + tol;
            let fd = n.dot(&d);
            if fd.abs() < 1e-15 {
                if f0 >= 0.0 {
                    return None;
                }
                continue;
            }
            let t = -f0 / fd;
            if fd > 0.0 {
                t1 = t1.min(t);
            } else {
                t0 = t0.max(t);
            }
            if t0 >= t1 {
                return None;
            }
        }
        Some((t0, t1))
    }
}

/// Largest separation of `b` from the faces of `a` (negative when no face of `a` separates).
fn max_separation(a: &Convex, b: &Convex) -> f64 {
    let mut best = f64::NEG_INFINITY;
    for (p, n) in a.pts.iter().zip(&a.normals) {
        let s = b
            .pts
            .iter()
            .map(|v| n.dot(&(v - p)))
            .fold(f64::INFINITY, f64::min);
        if s > best {
            best = s;
        }
    }
    best
}

/// Signed distance between two convex pieces: the gap when apart, minus the penetration
/// depth when overlapping, zero when they touch. This is the signed distance of the origin
/// to the Minkowski difference a - b, whose faces are the faces of a and of -b, which is why
/// the separating-axis maximum is exact here.
pub fn signed_distance(a: &Convex, b: &Convex) -> f64 {
    let s = max_separation(a, b).max(max_separation(b, a));
    if s <= 0.0 {
        return s;
    }
    let mut d = f64::INFINITY;
    for v in &a.pts {
        for (p, q) in b.edges() {
            d = d.min(point_segment_distance(*v, p, q));
        }
    }
    for v in &b.pts {
        for (p, q) in a.edges() {
            d = d.min(point_segment_distance(*v, p, q));
        }
    }
    d
}

/// The Minkowski difference a - b = { x - y : x in a, y in b } (convex).
pub fn minkowski_difference(a: &Convex, b: &Convex) -> Convex {
    let mut pts = Vec::with_capacity(a.pts.len() * b.pts.len());
    for p in &a.pts {
        for q in &b.pts {
            pts.push(Point::from(p - q));
        }
    }
    Convex::from_ccw(convex_hull(pts))
}

/// Andrew's monotone chain; counter-clockwise, collinear points dropped.
fn convex_hull(mut pts: Vec<Point>) -> Vec<Point> {
    pts.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    pts.dedup_by(|a, b| (*a - *b).norm() < 1e-12);
    if pts.len() < 3 {
        return pts;
    }
    let cross = |o: Point, a: Point, b: Point| (a - o).perp(&(b - o));
    let mut hull: Vec<Point> = Vec::with_capacity(pts.len() + 1);
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &Point>> = if pass == 0 {
            Box::new(pts.iter())
        } else {
            Box::new(pts.iter().rev())
        };
        for &p in iter {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    hull
}

pub fn point_segment_distance(p: Point, a: Point, b: Point) -> f64 {
    let ab = b - a;
    let len2 = ab.norm_squared();
    if len2 == 0.0 {
        return (p - a).norm();
    }
    let t = ((p - a).dot(&ab) / len2).clamp(0.0, 1.0);
    (p - (a + ab * t)).norm()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x0: f64, y0: f64, x1: f64, y1: f64) -> Convex {
        Convex::new(vec![
            Point::new(x0, y0),
            Point::new(x1, y0),
            Point::new(x1, y1),
            Point::new(x0, y1),
        ])
        .unwrap()
    }

    #[test]
    fn gap_touch_and_depth() {
        let a = rect(0.0, 0.0, 10.0, 10.0);
        assert!((signed_distance(&a, &rect(13.0, 0.0, 20.0, 10.0)) - 3.0).abs() < 1e-12);
        assert_eq!(signed_distance(&a, &rect(10.0, 0.0, 20.0, 10.0)), 0.0);
        assert!((signed_distance(&a, &rect(8.0, 2.0, 20.0, 3.0)) + 2.0).abs() < 1e-12);
        // Corner to corner: the gap is the diagonal, not the axis separation.
        let d = signed_distance(&a, &rect(13.0, 14.0, 20.0, 20.0));
        assert!((d - 5.0).abs() < 1e-12, "{d}");
    }

    #[test]
    fn minkowski_difference_matches_pairwise_distance() {
        let a = rect(0.0, 0.0, 10.0, 10.0);
        let b = Convex::new(vec![
            Point::new(12.0, 1.0),
            Point::new(15.0, 4.0),
            Point::new(11.0, 6.0),
        ])
        .unwrap();
        let m = minkowski_difference(&a, &b);
        let via_m = m.signed_distance_to_point(Point::origin());
        assert!((via_m - signed_distance(&a, &b)).abs() < 1e-12);
    }

    #[test]
    fn rejects_non_convex() {
        assert!(
            Convex::new(vec![
                Point::new(0.0, 0.0),
                Point::new(2.0, 0.0),
                Point::new(1.0, 0.5),
                Point::new(2.0, 2.0),
                Point::new(0.0, 2.0)
            ])
            .is_none()
        );
    }
}

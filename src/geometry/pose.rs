use super::{Point, Vec2};
use nalgebra::{Isometry2, Vector2};
use serde::{Deserialize, Serialize};

/// A placement on the table: the centre in table mm and the heading in degrees,
/// counter-clockwise from +x (spec section 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pose {
    pub x: f64,
    pub y: f64,
    pub heading_deg: f64,
}

impl Pose {
    pub fn new(x: f64, y: f64, heading_deg: f64) -> Pose {
        Pose {
            x,
            y,
            heading_deg: normalise_deg(heading_deg),
        }
    }

    pub fn centre(&self) -> Point {
        Point::new(self.x, self.y)
    }

    /// The ship's forward direction, (cos h, sin h).
    pub fn forward(&self) -> Vec2 {
        let h = self.heading_deg.to_radians();
        Vec2::new(h.cos(), h.sin())
    }

    /// The ship's right, (sin h, -cos h).
    pub fn right(&self) -> Vec2 {
        let h = self.heading_deg.to_radians();
        Vec2::new(h.sin(), -h.cos())
    }

    /// Ship frame to table frame. The ship frame has +x right and +y forward, so it is the
    /// table frame turned by (heading - 90 deg).
    pub fn isometry(&self) -> Isometry2<f64> {
        Isometry2::new(
            Vector2::new(self.x, self.y),
            (self.heading_deg - 90.0).to_radians(),
        )
    }

    /// A ship-frame point in the table frame: c + x*r + y*f.
    pub fn to_table(&self, p: Point) -> Point {
        self.centre() + self.right() * p.x + self.forward() * p.y
    }

    /// A table-frame point in this pose's ship frame.
    pub fn to_ship(&self, p: Point) -> Point {
        let d = p - self.centre();
        Point::new(d.dot(&self.right()), d.dot(&self.forward()))
    }

    /// Applies a move given in this pose's ship frame: the new centre is `offset` (ship frame)
    /// and the heading turns by `turn_deg`.
    pub fn then(&self, offset: Point, turn_deg: f64) -> Pose {
        let c = self.to_table(offset);
        Pose::new(c.x, c.y, self.heading_deg + turn_deg)
    }
}

/// An angle in [0, 360).
pub fn normalise_deg(a: f64) -> f64 {
    let r = a.rem_euclid(360.0);
    // rem_euclid can return 360.0 for tiny negative inputs.
    if r >= 360.0 { 0.0 } else { r }
}

/// The signed difference a - b wrapped to (-180, 180].
pub fn angle_diff_deg(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(360.0);
    if d > 180.0 { d - 360.0 } else { d }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_follow_the_spec() {
        let p = Pose::new(100.0, 200.0, 90.0);
        // Facing away from player 1: forward is +y, right is +x.
        let f = p.to_table(Point::new(0.0, 10.0));
        assert!((f.x - 100.0).abs() < 1e-12 && (f.y - 210.0).abs() < 1e-12);
        let r = p.to_table(Point::new(10.0, 0.0));
        assert!((r.x - 110.0).abs() < 1e-12 && (r.y - 200.0).abs() < 1e-12);
        let iso = p.isometry() * Point::new(3.0, 7.0);
        let direct = p.to_table(Point::new(3.0, 7.0));
        assert!((iso - direct).norm() < 1e-12);
        let back = p.to_ship(direct);
        assert!((back - Point::new(3.0, 7.0)).norm() < 1e-12);
    }

    #[test]
    fn heading_normalises() {
        assert_eq!(normalise_deg(-90.0), 270.0);
        assert_eq!(normalise_deg(720.0), 0.0);
        assert_eq!(normalise_deg(-1e-18), 0.0);
        assert!((angle_diff_deg(359.0, 1.0) + 2.0).abs() < 1e-12);
    }
}

use super::Point;
use serde::{Deserialize, Serialize};

/// The rectangular play area [0, width] x [0, height] in the table frame.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayArea {
    pub width_mm: f64,
    pub height_mm: f64,
}

impl PlayArea {
    /// Whether the point `p` (mm) lies on the play area or within `margin` of it (edges
    /// included).
    pub fn holds(&self, p: [f64; 2], margin: f64) -> bool {
        (-margin..=self.width_mm + margin).contains(&p[0])
            && (-margin..=self.height_mm + margin).contains(&p[1])
    }

    /// How far a shape stays inside: the smallest margin of its outline to any edge when it
    /// is wholly inside (0 when touching an edge), else minus the length of the shortest
    /// translation that brings it back in. The play area is convex, so checking the
    /// outline's corners is exact.
    pub fn clearance(&self, outline: &[Point]) -> f64 {
        let (mut x0, mut x1, mut y0, mut y1) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for p in outline {
            x0 = x0.min(p.x);
            x1 = x1.max(p.x);
            y0 = y0.min(p.y);
            y1 = y1.max(p.y);
        }
        let margin = x0.min(self.width_mm - x1).min(y0).min(self.height_mm - y1);
        if margin > -super::TOUCH_TOLERANCE_MM {
            return margin.max(0.0);
        }
        let over_x = (-x0).max(x1 - self.width_mm).max(0.0);
        let over_y = (-y0).max(y1 - self.height_mm).max(0.0);
        -over_x.hypot(over_y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_is_held_with_its_edges_and_margin() {
        let a = PlayArea {
            width_mm: 100.0,
            height_mm: 50.0,
        };
        assert!(a.holds([0.0, 50.0], 0.0));
        assert!(!a.holds([100.1, 10.0], 0.0));
        assert!(a.holds([104.0, -4.0], 5.0));
        assert!(!a.holds([10.0, 56.0], 5.0));
    }

    #[test]
    fn inside_edge_and_outside() {
        let a = PlayArea {
            width_mm: 100.0,
            height_mm: 100.0,
        };
        let sq = |x: f64, y: f64| {
            vec![
                Point::new(x, y),
                Point::new(x + 10.0, y),
                Point::new(x + 10.0, y + 10.0),
                Point::new(x, y + 10.0),
            ]
        };
        assert_eq!(a.clearance(&sq(5.0, 50.0)), 5.0);
        assert_eq!(a.clearance(&sq(0.0, 50.0)), 0.0);
        assert_eq!(a.clearance(&sq(-2.0, 50.0)), -2.0);
        assert!((a.clearance(&sq(93.0, -4.0)) + 5.0).abs() < 1e-12);
    }
}

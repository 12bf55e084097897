//! The outlines of the physical pieces: bases with their guides and the movement templates,
//! in their own frames (mm).

use super::{Convex, Point, Shape};
use crate::models::Guides;

/// A base of side `width` centred on the origin, with the four guides sticking out of the
/// front (+y) and rear edges. The guides count for overlap (spec section 2).
pub fn base(width: f64, guides: &Guides) -> Shape {
    let h = width / 2.0;
    let (g, gw, pr) = (
        guides.offset_x_mm,
        guides.width_mm / 2.0,
        guides.protrusion_mm,
    );
    let rect = |x0: f64, y0: f64, x1: f64, y1: f64| {
        Convex::new(vec![
            Point::new(x0, y0),
            Point::new(x1, y0),
            Point::new(x1, y1),
            Point::new(x0, y1),
        ])
    };
    let pieces: Vec<Convex> = [
        rect(-h, -h, h, h),
        rect(-g - gw, h, -g + gw, h + pr),
        rect(g - gw, h, g + gw, h + pr),
        rect(-g - gw, -h - pr, -g + gw, -h),
        rect(g - gw, -h - pr, g + gw, -h),
    ]
    .into_iter()
    .flatten()
    .collect();
    let outline = [
        (-h, -h),
        (-g - gw, -h),
        (-g - gw, -h - pr),
        (-g + gw, -h - pr),
        (-g + gw, -h),
        (g - gw, -h),
        (g - gw, -h - pr),
        (g + gw, -h - pr),
        (g + gw, -h),
        (h, -h),
        (h, h),
        (g + gw, h),
        (g + gw, h + pr),
        (g - gw, h + pr),
        (g - gw, h),
        (-g + gw, h),
        (-g + gw, h + pr),
        (-g - gw, h + pr),
        (-g - gw, h),
        (-h, h),
    ]
    .map(|(x, y)| Point::new(x, y))
    .to_vec();
    Shape::new(pieces, outline)
}

/// An axis-aligned rectangle [x0, x1] x [y0, y1]: a straight template lying in place.
pub fn rectangle(x0: f64, y0: f64, x1: f64, y1: f64) -> Shape {
    let outline = vec![
        Point::new(x0, y0),
        Point::new(x1, y0),
        Point::new(x1, y1),
        Point::new(x0, y1),
    ];
    let pieces = Convex::new(outline.clone()).into_iter().collect();
    Shape::new(pieces, outline)
}

/// Largest gap (mm) between a polygonised arc and the true circle. The arc is cut into
/// enough chords that the error stays far below the 0.01 mm the rules are checked to.
pub const ARC_TOLERANCE_MM: f64 = 0.002;

/// A band of width `width` around an arc of the circle about `centre` with centre-line
/// radius `radius`, from angle `start_deg` sweeping `sweep_deg` (counter-clockwise when
/// positive): a bank or turn template lying in place.
pub fn arc_band(centre: Point, radius: f64, width: f64, start_deg: f64, sweep_deg: f64) -> Shape {
    let (r_in, r_out) = (radius - width / 2.0, radius + width / 2.0);
    let max_step = 2.0 * (1.0 - ARC_TOLERANCE_MM / r_out).acos();
    let sweep = sweep_deg.to_radians();
    let n = ((sweep.abs() / max_step).ceil() as usize).max(1);
    let at = |r: f64, k: usize| {
        let a = start_deg.to_radians() + sweep * k as f64 / n as f64;
        Point::new(centre.x + r * a.cos(), centre.y + r * a.sin())
    };
    let pieces = (0..n)
        .filter_map(|k| {
            Convex::new(vec![
                at(r_in, k),
                at(r_out, k),
                at(r_out, k + 1),
                at(r_in, k + 1),
            ])
        })
        .collect();
    let mut outline: Vec<Point> = (0..=n).map(|k| at(r_out, k)).collect();
    outline.extend((0..=n).rev().map(|k| at(r_in, k)));
    if super::polygon::signed_area2(&outline) < 0.0 {
        outline.reverse();
    }
    Shape::new(pieces, outline)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::polygon::signed_area2;
    use crate::models::Models;

    #[test]
    fn base_outline_and_pieces_agree() {
        let m = Models::builtin();
        let s = base(40.0, &m.bases.guides);
        let outline_area = signed_area2(s.outline()) / 2.0;
        let pieces_area: f64 = s
            .pieces()
            .iter()
            .map(|c| signed_area2(c.points()) / 2.0)
            .sum();
        let want = 1600.0 + 4.0 * 1.8 * 1.6;
        assert!((outline_area - want).abs() < 1e-9);
        assert!((pieces_area - want).abs() < 1e-9);
    }

    #[test]
    fn arc_band_area_is_close_to_the_true_annulus_sector() {
        let s = arc_band(Point::new(20.0, 80.0), 80.0, 20.0, -90.0, 45.0);
        let area = signed_area2(s.outline()) / 2.0;
        let want = std::f64::consts::PI / 8.0 * (90.0f64.powi(2) - 70.0f64.powi(2));
        assert!((area - want).abs() / want < 1e-4, "{area} vs {want}");
        // Ends of the centre-line: (20, 0) and (20 + 80 sin 45, 80 - 80 cos 45).
        let first = s
            .outline()
            .iter()
            .any(|p| (p - Point::new(20.0, -10.0)).norm() < 1e-9);
        assert!(first);
    }
}

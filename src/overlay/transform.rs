//! Table millimetres (y up) to screen points (y down) and back, and the zoom and pan the
//! user adds on top of "fit the play area into the view".
//!
//! Kept free of painting so that the arithmetic every click and every shape goes through
//! is tested on its own.

use eframe::egui::{Pos2, Rect, Vec2, pos2, vec2};

/// A similarity without rotation: `screen = origin + scale * (x, -y)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Screen position of the table point (0, 0) mm.
    pub origin: Pos2,
    /// Screen points per millimetre.
    pub scale: f32,
}

impl Transform {
    /// The transform that shows `width_mm` x `height_mm` (plus `margin_mm` all round) as
    /// large as fits in `view`, centred.
    pub fn fit(width_mm: f64, height_mm: f64, margin_mm: f64, view: Rect) -> Transform {
        let (w, h) = (
            (width_mm + 2.0 * margin_mm) as f32,
            (height_mm + 2.0 * margin_mm) as f32,
        );
        let scale = if w > 0.0 && h > 0.0 && view.width() > 0.0 && view.height() > 0.0 {
            (view.width() / w).min(view.height() / h)
        } else {
            1.0
        };
        let c = view.center();
        // The table centre goes to the view centre.
        let origin = pos2(
            c.x - scale * (width_mm as f32) / 2.0,
            c.y + scale * (height_mm as f32) / 2.0,
        );
        Transform { origin, scale }
    }

    pub fn to_screen(&self, x_mm: f64, y_mm: f64) -> Pos2 {
        pos2(
            self.origin.x + self.scale * x_mm as f32,
            self.origin.y - self.scale * y_mm as f32,
        )
    }

    pub fn point(&self, p: [f64; 2]) -> Pos2 {
        self.to_screen(p[0], p[1])
    }

    /// The table point (mm) under a screen point.
    pub fn to_table(&self, p: Pos2) -> [f64; 2] {
        [
            f64::from((p.x - self.origin.x) / self.scale),
            f64::from((self.origin.y - p.y) / self.scale),
        ]
    }

    /// A length in mm on screen.
    pub fn len(&self, mm: f64) -> f32 {
        self.scale * mm as f32
    }

    /// The same view zoomed by `factor` about the screen point `about`, which stays over
    /// the same table point.
    pub fn zoomed_about(&self, about: Pos2, factor: f32) -> Transform {
        Transform {
            origin: about + (self.origin - about) * factor,
            scale: self.scale * factor,
        }
    }
}

/// What the user did to the view: zoom and pan relative to the fitted view, so that the
/// table stays fitted when the window is resized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewState {
    pub zoom: f32,
    /// Screen points added to the fitted origin after zooming about the view centre.
    pub pan: Vec2,
}

impl Default for ViewState {
    fn default() -> ViewState {
        ViewState {
            zoom: 1.0,
            pan: Vec2::ZERO,
        }
    }
}

/// Zoom stays within these factors of the fitted view: far enough in to read a 1 mm gap,
/// never so far out that the table is a dot.
pub const ZOOM_RANGE: (f32, f32) = (0.25, 40.0);

/// Margin around the play area in the fitted view, as in the SVG diagram.
pub const MARGIN_MM: f64 = 40.0;

impl ViewState {
    /// The transform for this view state in `view` for a play area of this size.
    pub fn transform(&self, width_mm: f64, height_mm: f64, view: Rect) -> Transform {
        let fit = Transform::fit(width_mm, height_mm, MARGIN_MM, view);
        let c = view.center();
        Transform {
            origin: c + (fit.origin - c) * self.zoom + self.pan,
            scale: fit.scale * self.zoom,
        }
    }

    /// Zooms by `factor` about the screen point `about` (the mouse), clamped to
    /// [`ZOOM_RANGE`]; the table point under `about` stays put.
    pub fn zoom_about(&mut self, view: Rect, about: Pos2, factor: f32) {
        if !factor.is_finite() || factor <= 0.0 {
            return;
        }
        let zoom = (self.zoom * factor).clamp(ZOOM_RANGE.0, ZOOM_RANGE.1);
        let f = zoom / self.zoom;
        let c = view.center();
        // origin = c + (o0 - c) * zoom + pan must become about + (origin - about) * f.
        self.pan = (about - c) * (1.0 - f) + self.pan * f;
        self.zoom = zoom;
    }

    pub fn pan_by(&mut self, delta: Vec2) {
        if delta.x.is_finite() && delta.y.is_finite() {
            self.pan += delta;
        }
    }

    /// Centres the view on a table point at the current zoom.
    pub fn centre_on(&mut self, width_mm: f64, height_mm: f64, view: Rect, p_mm: [f64; 2]) {
        let t = self.transform(width_mm, height_mm, view);
        let at = t.point(p_mm);
        self.pan += view.center() - at;
    }
}

/// The length of the ruler: 100 mm is range 1 in X-Wing, the unit players think in.
pub const RULER_MM: f64 = 100.0;

/// The ruler's ends on screen: bottom left of the view, `RULER_MM` long at this scale.
pub fn ruler(t: &Transform, view: Rect) -> [Pos2; 2] {
    let a = view.left_bottom() + vec2(16.0, -20.0);
    [a, a + vec2(t.len(RULER_MM), 0.0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> Rect {
        Rect::from_min_size(pos2(200.0, 0.0), vec2(800.0, 600.0))
    }

    fn close(a: Pos2, b: Pos2) -> bool {
        (a - b).length() < 1e-3
    }

    #[test]
    fn fit_centres_the_table_and_flips_y() {
        let t = Transform::fit(900.0, 900.0, 50.0, view());
        // 1000 mm into 600 points.
        assert!((t.scale - 0.6).abs() < 1e-6);
        assert!(close(t.to_screen(450.0, 450.0), view().center()));
        // y up on the table is up on screen (smaller y).
        assert!(t.to_screen(0.0, 100.0).y < t.to_screen(0.0, 0.0).y);
        // The bottom-left corner sits 50 mm (30 points) inside the bottom of the view.
        assert!(close(t.to_screen(0.0, 0.0), pos2(600.0 - 270.0, 570.0)));
    }

    #[test]
    fn screen_and_table_round_trip() {
        let t = Transform::fit(914.4, 914.4, 40.0, view());
        for p in [[0.0, 0.0], [300.0, 300.0], [914.4, 12.5], [-20.0, 950.0]] {
            let q = t.to_table(t.point(p));
            assert!(
                (q[0] - p[0]).abs() < 1e-3 && (q[1] - p[1]).abs() < 1e-3,
                "{p:?} {q:?}"
            );
        }
    }

    #[test]
    fn degenerate_view_does_not_divide_by_zero() {
        let t = Transform::fit(914.4, 914.4, 40.0, Rect::NOTHING);
        assert!(t.scale.is_finite() && t.scale > 0.0);
    }

    #[test]
    fn zoom_keeps_the_point_under_the_mouse() {
        let mut v = ViewState::default();
        let mouse = pos2(420.0, 250.0);
        let before = v.transform(914.4, 914.4, view()).to_table(mouse);
        v.zoom_about(view(), mouse, 2.5);
        let t = v.transform(914.4, 914.4, view());
        let after = t.to_table(mouse);
        assert!((before[0] - after[0]).abs() < 1e-3 && (before[1] - after[1]).abs() < 1e-3);
        assert!((v.zoom - 2.5).abs() < 1e-6);
        // Zooming back out returns to the fitted view.
        v.zoom_about(view(), mouse, 1.0 / 2.5);
        assert!((v.zoom - 1.0).abs() < 1e-5 && v.pan.length() < 1e-3);
    }

    #[test]
    fn zoom_is_clamped_and_ignores_nonsense() {
        let mut v = ViewState::default();
        v.zoom_about(view(), view().center(), 1e6);
        assert_eq!(v.zoom, ZOOM_RANGE.1);
        v.zoom_about(view(), view().center(), f32::NAN);
        v.zoom_about(view(), view().center(), -2.0);
        assert_eq!(v.zoom, ZOOM_RANGE.1);
    }

    #[test]
    fn centre_on_puts_the_point_in_the_middle() {
        let mut v = ViewState::default();
        v.zoom_about(view(), view().center(), 3.0);
        v.centre_on(914.4, 914.4, view(), [300.0, 300.0]);
        let t = v.transform(914.4, 914.4, view());
        assert!(close(t.to_screen(300.0, 300.0), view().center()));
    }

    #[test]
    fn ruler_is_100_mm_at_the_current_scale() {
        let t = Transform::fit(914.4, 914.4, 40.0, view());
        let [a, b] = ruler(&t, view());
        assert!(((b.x - a.x) - t.scale * 100.0).abs() < 1e-4);
        assert!(view().contains(a));
    }
}

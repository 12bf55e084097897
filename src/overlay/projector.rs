//! The projector output: what goes onto the table through a projector, at true scale. The
//! table is lit from above, so the picture is black except thin bright outlines: the
//! selected ship's template(s), its legal landings (green), landings the camera cannot
//! settle (amber), illegal ones dim red, and optionally every base dim grey so a player can
//! see at once whether the projector is still aligned with the table.
//!
//! Mapping: table mm -> projector px through the calibrated homography
//! (`calibration/projector.json`), then projector px -> screen points, the view standing
//! for the whole projector image (full screen on the projector, 1 px per px; scaled to fit
//! when shown in the main window). A homography maps straight lines to straight lines, so
//! polygons map vertex by vertex with no densifying (unlike the camera view's lens).

use super::ILLEGAL_RGB;
use super::paint::{CLOSE, LEGAL};
use crate::calibration::files::ProjectorFile;
use crate::rules::{Landing, RollVerdict, Table};
use eframe::egui::{Color32, Painter, Pos2, Rect, Shape, Stroke, vec2};

/// Unlit: black projects no light.
pub const BACKGROUND: Color32 = Color32::BLACK;
/// Templates: near white, the brightest thing after the legal landings.
pub const TEMPLATE: Color32 = Color32::from_rgb(0xd8, 0xd8, 0xd8);
/// Every base, dim, for checking the alignment without drawing the eye.
pub const BASE: Color32 = Color32::from_rgb(0x40, 0x40, 0x40);
/// The selected ship's base: dim yellow, as the selection elsewhere.
pub const SELECTED: Color32 = Color32::from_rgb(0x70, 0x60, 0x00);
/// Illegal landings: dim red, there but not competing with the legal ones.
pub const ILLEGAL_DIM: Color32 =
    Color32::from_rgb(ILLEGAL_RGB[0] / 3, ILLEGAL_RGB[1] / 3, ILLEGAL_RGB[2] / 3);

/// Outline widths, screen points (one projector px each when full screen at 1 point per
/// px): thin lines, so the light does not wash over the bases' own edges.
pub const LANDING_WIDTH: f32 = 2.0;
pub const TEMPLATE_WIDTH: f32 = 1.5;
pub const BASE_WIDTH: f32 = 1.0;

/// The calibrated projector: its image size and table mm -> projector px.
#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    pub size: [u32; 2],
    pub homography: [[f64; 3]; 3],
}

impl Projection {
    /// A stand-in before calibration: the play area centred in the projector image with a
    /// margin, y up. Nothing drawn through it lines up with the table; it only lets the
    /// window open so that the calibration pattern can be shown and photographed.
    pub fn placeholder(size: [u32; 2], play: crate::geometry::PlayArea) -> Projection {
        let (w, h) = (f64::from(size[0]), f64::from(size[1]));
        let k = 0.9 * (w / play.width_mm).min(h / play.height_mm);
        let (ox, oy) = (
            (w - k * play.width_mm) / 2.0,
            (h + k * play.height_mm) / 2.0,
        );
        Projection {
            size,
            homography: [[k, 0.0, ox], [0.0, -k, oy], [0.0, 0.0, 1.0]],
        }
    }
}

impl From<&ProjectorFile> for Projection {
    fn from(f: &ProjectorFile) -> Projection {
        Projection {
            size: f.size,
            homography: f.homography,
        }
    }
}

/// Table mm -> projector px -> screen points for a projector image shown in `image_rect`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProjectorMap {
    pub homography: [[f64; 3]; 3],
    /// Where the whole projector image is on screen.
    pub image_rect: Rect,
    /// Screen points per projector px.
    pub scale: f32,
}

impl ProjectorMap {
    /// The projector image fitted into `view`, centred, aspect kept (full screen on the
    /// projector itself the two have the same aspect and it fills the view).
    pub fn fit(view: Rect, p: &Projection) -> ProjectorMap {
        let (w, h) = (p.size[0].max(1) as f32, p.size[1].max(1) as f32);
        let scale = (view.width() / w).min(view.height() / h).max(0.0);
        ProjectorMap {
            homography: p.homography,
            image_rect: Rect::from_center_size(view.center(), vec2(w * scale, h * scale)),
            scale,
        }
    }

    /// A projector pixel (origin at the top-left pixel's centre) on screen.
    pub fn px_to_screen(&self, px: [f64; 2]) -> Pos2 {
        self.image_rect.min
            + vec2(
                (px[0] as f32 + 0.5) * self.scale,
                (px[1] as f32 + 0.5) * self.scale,
            )
    }

    /// The homogeneous weight of a table point: where it changes sign the point is on the
    /// projector's horizon, and a polygon straddling it has no straight image.
    fn weight(&self, p: [f64; 2]) -> f64 {
        let h = &self.homography;
        h[2][0] * p[0] + h[2][1] * p[1] + h[2][2]
    }

    /// A table point (mm) in projector px; `None` on the horizon.
    pub fn to_px(&self, p: [f64; 2]) -> Option<[f64; 2]> {
        crate::calibration::files::apply_homography(&self.homography, p[0], p[1])
    }

    /// A table point (mm) on screen.
    pub fn to_screen(&self, p: [f64; 2]) -> Option<Pos2> {
        self.to_px(p).map(|px| self.px_to_screen(px))
    }

    /// A closed table-mm polygon on screen; `None` if it reaches the projector's horizon
    /// (all weights must share a sign, else its edges would wrap through infinity).
    pub fn ring(&self, ring: &[[f64; 2]]) -> Option<Vec<Pos2>> {
        let first = self.weight(*ring.first()?);
        if ring
            .iter()
            .any(|&p| self.weight(p) * first <= 0.0 || self.weight(p).abs() < 1e-12)
        {
            return None;
        }
        ring.iter().map(|&p| self.to_screen(p)).collect()
    }
}

/// What the projector view draws: the choices of the overlay state.
pub struct ProjectorScene<'a> {
    pub projection: &'a Projection,
    pub table: &'a Table,
    pub selected: Option<usize>,
    pub verdict: Option<&'a RollVerdict>,
    /// Every base dim grey (the selected one dim yellow).
    pub show_bases: bool,
    /// Ids of the ships detection doubts: their bases are outlined amber whether or not
    /// the bases are shown, so the players see which ship to check.
    pub unsure: &'a [String],
}

/// What the projector view drew, for tests and the screenshot sidecar.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProjectorDrawn {
    pub image_rect: Option<Rect>,
    pub templates: usize,
    pub bases: usize,
    /// Bases outlined as doubted.
    pub unsure: usize,
    /// (legal, too close to call, screen polygon) of each landing drawn.
    pub landings: Vec<(bool, bool, Vec<Pos2>)>,
}

/// A landing's projector colour: green, amber, or dim red.
pub fn landing_colour(p: &Landing) -> Color32 {
    if p.too_close_to_call {
        CLOSE
    } else if p.legal {
        LEGAL
    } else {
        ILLEGAL_DIM
    }
}

/// Drawing order, so the outline that matters is the one on top where landings overlap
/// (the three positions of a side are 10-20 mm apart): illegal, then amber, then legal.
fn rank(p: &Landing) -> u8 {
    if p.too_close_to_call {
        1
    } else if p.legal {
        2
    } else {
        0
    }
}

/// Paints the projector image into `view`: black everywhere (the whole view, so the
/// letterbox bars project nothing either), the outlines on top.
pub fn paint_projector(painter: &Painter, view: Rect, s: &ProjectorScene) -> ProjectorDrawn {
    let painter = painter.with_clip_rect(view);
    painter.rect_filled(view, 0.0, BACKGROUND);
    let map = ProjectorMap::fit(view, s.projection);
    let mut drawn = ProjectorDrawn {
        image_rect: Some(map.image_rect),
        ..Default::default()
    };
    let painter = painter.with_clip_rect(map.image_rect.intersect(view));
    let outline = |ring: &[[f64; 2]], width: f32, colour: Color32| {
        let ps = map.ring(ring)?;
        painter.add(Shape::closed_line(ps.clone(), Stroke::new(width, colour)));
        Some(ps)
    };

    for (i, ship) in s.table.ships.iter().enumerate() {
        let doubted = s.unsure.contains(&ship.id);
        if !(s.show_bases || doubted) {
            continue;
        }
        let ring: Vec<[f64; 2]> = ship.shape.outline().iter().map(|p| [p.x, p.y]).collect();
        let colour = match (s.selected == Some(i), doubted) {
            (_, true) => CLOSE,
            (true, false) => SELECTED,
            (false, false) => BASE,
        };
        if outline(&ring, BASE_WIDTH, colour).is_some() {
            drawn.bases += 1;
            if doubted {
                drawn.unsure += 1;
            }
        }
    }
    let Some(v) = s.verdict else {
        return drawn;
    };
    for d in &v.directions {
        if outline(&d.template_polygon, TEMPLATE_WIDTH, TEMPLATE).is_some() {
            drawn.templates += 1;
        }
    }
    let mut landings: Vec<&Landing> = v.directions.iter().flat_map(|d| &d.positions).collect();
    landings.sort_by_key(|p| rank(p));
    for p in landings {
        if let Some(ps) = outline(&p.base_polygon, LANDING_WIDTH, landing_colour(p)) {
            drawn.landings.push((p.legal, p.too_close_to_call, ps));
        }
    }
    drawn
}

#[cfg(test)]
mod placeholder_tests {
    use super::*;

    #[test]
    fn placeholder_centres_the_play_area() {
        let play = crate::geometry::PlayArea {
            width_mm: 914.4,
            height_mm: 914.4,
        };
        let p = Projection::placeholder([1920, 1080], play);
        let at = |x, y| {
            crate::calibration::files::apply_homography(&p.homography, x, y).expect("finite")
        };
        let (c, lo, hi) = (at(457.2, 457.2), at(0.0, 0.0), at(914.4, 914.4));
        assert!((c[0] - 960.0).abs() < 1e-9 && (c[1] - 540.0).abs() < 1e-9);
        assert!(
            (lo[1] - 1026.0).abs() < 1e-9 && (hi[1] - 54.0).abs() < 1e-9,
            "{lo:?} {hi:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eframe::egui::pos2;

    fn close(a: Pos2, b: Pos2) -> bool {
        (a - b).length() < 1e-3
    }

    /// 2 px per mm, table y up -> projector y down, table origin at px (100, 1000).
    fn scale_offset() -> Projection {
        Projection {
            size: [1920, 1080],
            homography: [[2.0, 0.0, 100.0], [0.0, -2.0, 1000.0], [0.0, 0.0, 1.0]],
        }
    }

    #[test]
    fn a_scale_and_offset_homography_puts_a_landing_corner_where_expected() {
        // A view the size of the projector: 1 point per px.
        let view = Rect::from_min_size(pos2(0.0, 0.0), vec2(1920.0, 1080.0));
        let m = ProjectorMap::fit(view, &scale_offset());
        assert_eq!(m.scale, 1.0);
        // A landing corner at (300, 250) mm: px (700, 500), screen at that pixel's centre.
        assert!(close(
            m.to_screen([300.0, 250.0]).expect("maps"),
            pos2(700.5, 500.5)
        ));
        // Half size, offset: the same corner follows the view.
        let half = Rect::from_min_size(pos2(50.0, 20.0), vec2(960.0, 540.0));
        let m = ProjectorMap::fit(half, &scale_offset());
        assert_eq!(m.scale, 0.5);
        assert!(close(
            m.to_screen([300.0, 250.0]).expect("maps"),
            pos2(50.0 + 700.5 * 0.5, 20.0 + 500.5 * 0.5)
        ));
    }

    #[test]
    fn a_wider_view_letterboxes_the_projector_image() {
        let view = Rect::from_min_size(pos2(0.0, 0.0), vec2(1000.0, 270.0));
        let m = ProjectorMap::fit(view, &scale_offset());
        assert_eq!(m.scale, 0.25);
        assert_eq!(
            m.image_rect,
            Rect::from_min_size(pos2(260.0, 0.0), vec2(480.0, 270.0))
        );
    }

    /// A keystone: the far edge of the table is narrower on the projector.
    fn keystone() -> [[f64; 3]; 3] {
        [[1.0, 0.2, 50.0], [0.05, -0.9, 900.0], [0.0, 0.0004, 1.0]]
    }

    #[test]
    fn a_keystone_homography_keeps_straight_lines_straight() {
        let p = Projection {
            size: [1280, 800],
            homography: keystone(),
        };
        let view = Rect::from_min_size(pos2(10.0, 10.0), vec2(1280.0, 800.0));
        let m = ProjectorMap::fit(view, &p);
        let (a, b) = ([100.0, 50.0], [800.0, 700.0]);
        let (sa, sb) = (m.to_screen(a).expect("a"), m.to_screen(b).expect("b"));
        for k in 1..10 {
            let s = f64::from(k) / 10.0;
            let q = [a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1])];
            let sq = m.to_screen(q).expect("q");
            // Distance of the mapped point from the mapped line, points.
            let (d, e) = (sb - sa, sq - sa);
            let off = (d.x * e.y - d.y * e.x).abs() / d.length();
            assert!(off < 1e-3, "{k}: {off}");
        }
        // And it really is a keystone: equal table lengths are unequal on the projector.
        let near = m.to_screen([900.0, 0.0]).expect("n").x - m.to_screen([0.0, 0.0]).expect("n").x;
        let far =
            m.to_screen([900.0, 900.0]).expect("f").x - m.to_screen([0.0, 900.0]).expect("f").x;
        assert!(far < 0.8 * near, "{near} {far}");
    }

    #[test]
    fn a_polygon_across_the_horizon_is_not_drawn() {
        let m = ProjectorMap {
            homography: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.01, -1.0]],
            image_rect: Rect::from_min_size(pos2(0.0, 0.0), vec2(100.0, 100.0)),
            scale: 1.0,
        };
        // w = 0.01 y - 1: negative below y = 100, positive above.
        assert!(m.ring(&[[0.0, 0.0], [10.0, 0.0], [10.0, 50.0]]).is_some());
        assert!(m.ring(&[[0.0, 0.0], [10.0, 0.0], [10.0, 150.0]]).is_none());
        assert!(m.ring(&[]).is_none());
    }
}

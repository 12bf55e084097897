//! The camera view: the live frame with the detected scene drawn over it through the
//! calibrated camera, so a player can see at a glance whether detection put each base and
//! obstacle where it really is. Bases (and the selected ship's landings) are projected at
//! the base-top height, where the camera sees their edges; obstacles lie on the mat (z = 0).

use super::feed::Projector;
use super::paint::landing_colour;
use crate::geometry::Point;
use crate::rules::{RollVerdict, Table};
use eframe::egui::{
    Align2, Color32, FontId, Painter, Pos2, Rect, Shape, Stroke, TextureId, pos2, vec2,
};

const BACKDROP: Color32 = Color32::from_rgb(0x20, 0x20, 0x20);
const SHIP_EDGE: Color32 = Color32::from_rgb(0x4d, 0xd0, 0xff);
const SELECTED: Color32 = Color32::from_rgb(0xff, 0xdc, 0x00);
const OBSTACLE_EDGE: Color32 = Color32::from_rgb(0xff, 0x8c, 0x2a);
const TEMPLATE_EDGE: Color32 = Color32::from_rgb(0xe8, 0xee, 0xf8);

/// Outlines are cut into steps of at most this many mm before projecting: the lens bends
/// straight table edges, and a long edge drawn as one screen segment would miss the frame's
/// edge by pixels near the image corners.
const STEP_MM: f64 = 5.0;

/// What the camera view drew, for clicks and tests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CameraDrawn {
    /// Where the frame is on screen (`None` before the first frame).
    pub image_rect: Option<Rect>,
    /// Each ship's projected outline on screen, in `table.ships` order (empty when it
    /// could not be projected).
    pub ships: Vec<Vec<Pos2>>,
    pub obstacles: usize,
    pub landings: usize,
    /// Ships drawn as doubted.
    pub unsure: usize,
}

/// Camera pixels to screen points for a frame shown in `image_rect`.
#[derive(Clone, Copy, Debug)]
pub struct FrameMap {
    pub image_rect: Rect,
    /// Screen points per camera pixel.
    pub scale: f32,
}

impl FrameMap {
    /// The frame fitted into `view`, centred, aspect kept.
    pub fn fit(view: Rect, camera_size: [u32; 2]) -> FrameMap {
        let (w, h) = (camera_size[0].max(1) as f32, camera_size[1].max(1) as f32);
        let scale = (view.width() / w).min(view.height() / h);
        let image_rect = Rect::from_center_size(view.center(), vec2(w * scale, h * scale));
        FrameMap { image_rect, scale }
    }

    /// A camera pixel (origin at the top-left pixel's centre) on screen.
    pub fn to_screen(&self, px: [f64; 2]) -> Pos2 {
        self.image_rect.min
            + vec2(
                (px[0] as f32 + 0.5) * self.scale,
                (px[1] as f32 + 0.5) * self.scale,
            )
    }
}

/// A closed table-mm ring at height `z`, densified and projected; `None` if any point is
/// behind the camera.
fn project_ring(
    project: &Projector,
    map: &FrameMap,
    ring: &[[f64; 2]],
    z: f64,
) -> Option<Vec<Pos2>> {
    let mut out = Vec::new();
    for (i, a) in ring.iter().enumerate() {
        let b = ring[(i + 1) % ring.len()];
        let len = (b[0] - a[0]).hypot(b[1] - a[1]);
        let n = (len / STEP_MM).ceil().max(1.0) as usize;
        for k in 0..n {
            let s = k as f64 / n as f64;
            let p = [a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1]), z];
            out.push(map.to_screen(project(p)?));
        }
    }
    Some(out)
}

fn points(ring: &[Point]) -> Vec<[f64; 2]> {
    ring.iter().map(|p| [p.x, p.y]).collect()
}

/// What the camera view needs to draw.
pub struct CameraScene<'a> {
    /// The frame's texture and the camera frame size it stands for.
    pub frame: Option<(TextureId, [u32; 2])>,
    pub project: Option<&'a Projector>,
    pub base_top_mm: f64,
    pub table: &'a Table,
    pub selected: Option<usize>,
    pub verdict: Option<&'a RollVerdict>,
    /// Ids of the ships detection doubts: drawn amber with a "?".
    pub unsure: &'a [String],
}

/// Draws the frame fitted into `view` and the scene over it.
pub fn paint_camera(painter: &Painter, view: Rect, c: &CameraScene) -> CameraDrawn {
    let painter = painter.with_clip_rect(view);
    painter.rect_filled(view, 0.0, BACKDROP);
    let mut drawn = CameraDrawn::default();
    let Some((texture, size)) = c.frame else {
        painter.text(
            view.center(),
            Align2::CENTER_CENTER,
            "waiting for the first camera frame…",
            FontId::proportional(16.0),
            Color32::LIGHT_GRAY,
        );
        return drawn;
    };
    let map = FrameMap::fit(view, size);
    painter.image(
        texture,
        map.image_rect,
        Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
        Color32::WHITE,
    );
    drawn.image_rect = Some(map.image_rect);
    let Some(project) = c.project else {
        return drawn;
    };
    let font = FontId::proportional(12.0);

    for o in &c.table.obstacles {
        if let Some(ps) = project_ring(project, &map, &points(o.shape.outline()), 0.0) {
            painter.add(Shape::closed_line(ps, Stroke::new(1.5, OBSTACLE_EDGE)));
            drawn.obstacles += 1;
        }
    }
    if let Some(v) = c.verdict {
        for d in &v.directions {
            if let Some(ps) = project_ring(project, &map, &d.template_polygon, 0.0) {
                painter.add(Shape::closed_line(ps, Stroke::new(1.0, TEMPLATE_EDGE)));
            }
        }
    }
    for (i, s) in c.table.ships.iter().enumerate() {
        let ring = points(s.shape.outline());
        let ps = project_ring(project, &map, &ring, c.base_top_mm).unwrap_or_default();
        if !ps.is_empty() {
            let doubted = c.unsure.contains(&s.id);
            let stroke = match (c.selected == Some(i), doubted) {
                (true, _) => Stroke::new(2.5, SELECTED),
                (false, true) => Stroke::new(1.5, super::paint::CLOSE),
                (false, false) => Stroke::new(1.5, SHIP_EDGE),
            };
            painter.add(Shape::closed_line(ps.clone(), stroke));
            if let Some(at) = project([s.pose.x, s.pose.y, c.base_top_mm]) {
                let (label, colour) = if doubted {
                    (format!("{} ?", s.id), super::paint::CLOSE)
                } else {
                    (s.id.clone(), Color32::WHITE)
                };
                painter.text(
                    map.to_screen(at),
                    Align2::CENTER_CENTER,
                    label,
                    font.clone(),
                    colour,
                );
            }
            if doubted {
                drawn.unsure += 1;
            }
        }
        drawn.ships.push(ps);
    }
    if let Some(v) = c.verdict {
        for d in &v.directions {
            for p in &d.positions {
                if let Some(ps) = project_ring(project, &map, &p.base_polygon, c.base_top_mm) {
                    painter.add(Shape::closed_line(
                        ps,
                        Stroke::new(super::paint::LANDING_STROKE, landing_colour(p)),
                    ));
                    drawn.landings += 1;
                }
            }
        }
    }
    drawn
}

/// The ship whose projected outline contains `p` (the last drawn wins, as on screen).
pub fn ship_at(drawn: &CameraDrawn, p: Pos2) -> Option<usize> {
    drawn
        .ships
        .iter()
        .enumerate()
        .rev()
        .find(|(_, ring)| inside(ring, p))
        .map(|(i, _)| i)
}

fn inside(ring: &[Pos2], p: Pos2) -> bool {
    let mut inside = false;
    let n = ring.len();
    for i in 0..n {
        let (a, b) = (ring[i], ring[(i + 1) % n]);
        if (a.y > p.y) != (b.y > p.y) {
            let x = a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x);
            if p.x < x {
                inside = !inside;
            }
        }
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_fits_the_view_and_pixel_centres_map_inside_it() {
        let view = Rect::from_min_size(pos2(10.0, 20.0), vec2(400.0, 400.0));
        let m = FrameMap::fit(view, [800, 400]);
        assert_eq!(m.scale, 0.5);
        assert_eq!(
            m.image_rect,
            Rect::from_min_size(pos2(10.0, 120.0), vec2(400.0, 200.0))
        );
        assert_eq!(m.to_screen([0.0, 0.0]), pos2(10.25, 120.25));
        assert_eq!(m.to_screen([799.0, 399.0]), pos2(409.75, 319.75));
    }

    #[test]
    fn clicks_hit_projected_outlines() {
        let square = vec![
            pos2(0.0, 0.0),
            pos2(10.0, 0.0),
            pos2(10.0, 10.0),
            pos2(0.0, 10.0),
        ];
        let drawn = CameraDrawn {
            ships: vec![Vec::new(), square],
            ..Default::default()
        };
        assert_eq!(ship_at(&drawn, pos2(5.0, 5.0)), Some(1));
        assert_eq!(ship_at(&drawn, pos2(15.0, 5.0)), None);
    }
}

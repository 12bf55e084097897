//! The top-down table drawing on an egui painter: play area, 100 mm grid, obstacles,
//! ships with their facing, and for the selected ship its templates and the six landings in
//! green or red with their clearance. The content and colours follow `diagram` (the SVG),
//! so a print and the screen read the same; widths and text sizes are in screen points so
//! they stay readable at any zoom.

use super::transform::{Transform, ruler};
use super::triangulate::triangulate;
use super::{CLOSE_RGB, ILLEGAL_RGB, LEGAL_RGB};
use crate::geometry::Point;
use crate::rules::{RollVerdict, Side, Slot, Table};
use eframe::egui::{Align2, Color32, FontId, Mesh, Painter, Pos2, Rect, Shape, Stroke, pos2, vec2};

pub const LEGAL: Color32 = Color32::from_rgb(LEGAL_RGB[0], LEGAL_RGB[1], LEGAL_RGB[2]);
pub const ILLEGAL: Color32 = Color32::from_rgb(ILLEGAL_RGB[0], ILLEGAL_RGB[1], ILLEGAL_RGB[2]);
pub const CLOSE: Color32 = Color32::from_rgb(CLOSE_RGB[0], CLOSE_RGB[1], CLOSE_RGB[2]);

/// A landing's colour: green or red, amber when the camera cannot settle it.
pub fn landing_colour(p: &crate::rules::Landing) -> Color32 {
    if p.too_close_to_call {
        CLOSE
    } else if p.legal {
        LEGAL
    } else {
        ILLEGAL
    }
}
const SURROUND: Color32 = Color32::from_rgb(0xd8, 0xd2, 0xc4);
const MAT: Color32 = Color32::from_rgb(0x10, 0x16, 0x2a);
const GRID: Color32 = Color32::from_rgb(0x34, 0x40, 0x6a);
const OBSTACLE_FILL: Color32 = Color32::from_rgb(0x7a, 0x5c, 0x3e);
const OBSTACLE_EDGE: Color32 = Color32::from_rgb(0xc9, 0xa2, 0x7a);
const OBSTACLE_TEXT: Color32 = Color32::from_rgb(0xf4, 0xe3, 0xcf);
const SHIP_FILL: Color32 = Color32::from_rgb(0x1b, 0x1b, 0x1b);
const SHIP_EDGE: Color32 = Color32::from_rgb(0xd0, 0xd0, 0xd0);
const SELECTED: Color32 = Color32::from_rgb(0xff, 0xdc, 0x00);
const TEMPLATE_EDGE: Color32 = Color32::from_rgb(0xe8, 0xee, 0xf8);
const INK: Color32 = Color32::from_rgb(0x11, 0x11, 0x11);

fn template_fill() -> Color32 {
    Color32::from_rgba_unmultiplied(0xb8, 0xc4, 0xd6, 140)
}

/// Landing outlines are this wide (points): wide enough that their colour shows solid
/// through antialiasing, which the screenshot test relies on.
pub const LANDING_STROKE: f32 = 2.5;

/// Where a landing ended up on screen, for hit tests, the screenshot check and UI tests.
#[derive(Clone, Debug, PartialEq)]
pub struct DrawnLanding {
    pub side: Side,
    pub slot: Slot,
    pub legal: bool,
    pub clearance_mm: f64,
    /// Screen bounding box of the landed base.
    pub rect: Rect,
}

/// A summary of what the last frame drew.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Drawn {
    pub templates: Vec<(Side, Rect)>,
    pub landings: Vec<DrawnLanding>,
    pub ships: usize,
    /// Ships drawn as ones detection is unsure of (amber, "?").
    pub unsure: usize,
    pub obstacles: usize,
    /// Obstacles drawn as measured outlines detection could not name (amber, "?").
    pub unnamed: usize,
    /// Of those, miniatures with no base seen under them (amber, "ship?").
    pub hidden_bases: usize,
}

fn to_screen(t: &Transform, ring: impl IntoIterator<Item = [f64; 2]>) -> Vec<Pos2> {
    ring.into_iter().map(|p| t.point(p)).collect()
}

fn points(ring: &[Point]) -> Vec<[f64; 2]> {
    ring.iter().map(|p| [p.x, p.y]).collect()
}

/// A filled outline (concave allowed) as one mesh; triangulated in mm, where the ring is
/// counter-clockwise, then mapped.
fn fill(t: &Transform, ring: &[[f64; 2]], colour: Color32) -> Shape {
    let mut mesh = Mesh::default();
    for p in ring {
        mesh.colored_vertex(t.point(*p), colour);
    }
    for [a, b, c] in triangulate(ring) {
        // Ring lengths are a few dozen points; u32 cannot overflow.
        mesh.add_triangle(a as u32, b as u32, c as u32);
    }
    Shape::mesh(mesh)
}

fn bounds(ps: &[Pos2]) -> Rect {
    Rect::from_points(ps)
}

/// Side of a base from its outline, as `diagram` does: the guides stick out only along the
/// ship's axis, so the smaller extent is the width.
fn width_mm(ring: &[[f64; 2]]) -> f64 {
    let span = |k: usize| {
        let (lo, hi) = ring
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p[k]), hi.max(p[k]))
            });
        hi - lo
    };
    span(0).min(span(1)).min(80.0)
}

fn base_side(shape: &crate::geometry::Shape) -> f64 {
    shape
        .pieces()
        .first()
        .map(|c| {
            let p = c.points();
            if p.len() > 1 {
                (p[1] - p[0]).norm()
            } else {
                40.0
            }
        })
        .unwrap_or(40.0)
}

/// Draws the table and, with a verdict, the selected ship's roll. `view` is the area the
/// drawing owns (everything is clipped to it). Ships whose ids are in `unsure` are ones
/// detection doubts (outline or facing hidden): drawn amber with a "?", so nobody takes
/// their landings for a measurement; obstacles whose ids are there are outlines detection
/// could not name (often a ship whose base is hidden), drawn the same way, and those also
/// in `hidden_bases` (a miniature with no base seen under it) say "ship?".
#[allow(clippy::too_many_arguments)]
pub fn paint_table(
    painter: &Painter,
    view: Rect,
    t: &Transform,
    table: &Table,
    selected: Option<usize>,
    verdict: Option<&RollVerdict>,
    unsure: &[String],
    hidden_bases: &[String],
) -> Drawn {
    let painter = painter.with_clip_rect(view);
    let mut drawn = Drawn::default();
    let (w, h) = (table.play_area.width_mm, table.play_area.height_mm);

    painter.rect_filled(view, 0.0, SURROUND);
    let mat = Rect::from_two_pos(t.to_screen(0.0, 0.0), t.to_screen(w, h));
    painter.rect_filled(mat, 0.0, MAT);

    // Range-1 grid, as on the SVG, to read distances at a glance.
    let grid = Stroke::new(1.0, GRID);
    let mut x = 100.0;
    while x < w {
        painter.line_segment([t.to_screen(x, 0.0), t.to_screen(x, h)], grid);
        x += 100.0;
    }
    let mut y = 100.0;
    while y < h {
        painter.line_segment([t.to_screen(0.0, y), t.to_screen(w, y)], grid);
        y += 100.0;
    }

    let small = FontId::proportional(11.0);
    for o in &table.obstacles {
        let ring = points(o.shape.outline());
        let unnamed = unsure.contains(&o.id);
        painter.add(fill(t, &ring, OBSTACLE_FILL));
        painter.add(Shape::closed_line(
            to_screen(t, ring.iter().copied()),
            if unnamed {
                Stroke::new(1.5, CLOSE)
            } else {
                Stroke::new(1.0, OBSTACLE_EDGE)
            },
        ));
        let c = crate::geometry::polygon::ring_mean(&ring).unwrap_or([0.0, 0.0]);
        if unnamed {
            painter.text(
                t.point(c),
                Align2::CENTER_CENTER,
                if hidden_bases.contains(&o.id) {
                    drawn.hidden_bases += 1;
                    format!("{} ship?", o.id)
                } else {
                    format!("{} ?", o.id)
                },
                small.clone(),
                CLOSE,
            );
            drawn.unnamed += 1;
        } else {
            painter.text(
                t.point(c),
                Align2::CENTER_CENTER,
                &o.id,
                small.clone(),
                OBSTACLE_TEXT,
            );
        }
        drawn.obstacles += 1;
    }

    if let Some(v) = verdict {
        for d in &v.directions {
            let blocked = !d.moves_through.is_empty() && !v.ignore_obstacles;
            painter.add(fill(t, &d.template_polygon, template_fill()));
            let ps = to_screen(t, d.template_polygon.iter().copied());
            drawn.templates.push((d.direction, bounds(&ps)));
            painter.add(Shape::closed_line(
                ps,
                Stroke::new(1.5, if blocked { ILLEGAL } else { TEMPLATE_EDGE }),
            ));
        }
    }

    for (i, s) in table.ships.iter().enumerate() {
        let ring = points(s.shape.outline());
        let is_selected = selected == Some(i);
        let doubted = unsure.contains(&s.id);
        painter.add(fill(t, &ring, SHIP_FILL));
        painter.add(Shape::closed_line(
            to_screen(t, ring.iter().copied()),
            match (is_selected, doubted) {
                (true, _) => Stroke::new(2.5, SELECTED),
                (false, true) => Stroke::new(1.5, CLOSE),
                (false, false) => Stroke::new(1.0, SHIP_EDGE),
            },
        ));
        let side = base_side(&s.shape);
        let nose = s.pose.to_table(Point::new(0.0, 0.45 * side));
        painter.line_segment(
            [t.to_screen(s.pose.x, s.pose.y), t.to_screen(nose.x, nose.y)],
            Stroke::new(2.0, SELECTED),
        );
        let label = s.pose.to_table(Point::new(0.0, -0.22 * side));
        if doubted {
            painter.text(
                t.to_screen(label.x, label.y),
                Align2::CENTER_CENTER,
                format!("{} ?", s.id),
                small.clone(),
                CLOSE,
            );
            drawn.unsure += 1;
        } else {
            painter.text(
                t.to_screen(label.x, label.y),
                Align2::CENTER_CENTER,
                &s.id,
                small.clone(),
                Color32::WHITE,
            );
        }
        drawn.ships += 1;
    }

    if let Some(v) = verdict {
        for d in &v.directions {
            for p in &d.positions {
                let colour = landing_colour(p);
                painter.add(fill(t, &p.base_polygon, colour.gamma_multiply(0.14)));
                let mut ps = to_screen(t, p.base_polygon.iter().copied());
                let rect = bounds(&ps);
                let stroke = Stroke::new(LANDING_STROKE, colour);
                if p.legal {
                    painter.add(Shape::closed_line(ps, stroke));
                } else {
                    // Dashed, as on the SVG, so red and green differ without colour vision.
                    if let Some(first) = ps.first().copied() {
                        ps.push(first);
                    }
                    painter.extend(Shape::dashed_line(&ps, stroke, 7.0, 4.0));
                }
                drawn.landings.push(DrawnLanding {
                    side: d.direction,
                    slot: p.slot,
                    legal: p.legal,
                    clearance_mm: p.clearance_mm,
                    rect,
                });
            }
            paint_labels(&painter, t, v, d);
        }
    }

    // 100 mm ruler (range 1) with its label.
    let [a, b] = ruler(t, view);
    let ruler_stroke = Stroke::new(2.0, INK);
    painter.line_segment([a, b], ruler_stroke);
    for e in [a, b] {
        painter.line_segment([e - vec2(0.0, 5.0), e + vec2(0.0, 5.0)], ruler_stroke);
    }
    painter.text(
        pos2((a.x + b.x) / 2.0, a.y - 4.0),
        Align2::CENTER_BOTTOM,
        "100 mm",
        small,
        INK,
    );
    drawn
}

/// The clearance labels of one side, stacked in a column beyond the landings: the three
/// landings overlap, and at table scale their own positions are a few points apart.
fn paint_labels(
    painter: &Painter,
    t: &Transform,
    v: &RollVerdict,
    d: &crate::rules::DirectionVerdict,
) {
    let Some(mid) = d
        .positions
        .iter()
        .find(|p| p.slot == Slot::Middle)
        .or(d.positions.first())
    else {
        return;
    };
    let out = nalgebra::Vector2::new(mid.x - v.start.x, mid.y - v.start.y);
    let out = if out.norm() > 0.0 {
        out.normalize()
    } else {
        out
    };
    let reach_mm = 0.5 * width_mm(&mid.base_polygon) + 6.0;
    let anchor_mm = Point::new(mid.x, mid.y) + out * reach_mm;
    // Screen direction of "outward" (y flips).
    let (ox, oy) = (out.x as f32, -(out.y as f32));
    let anchor = t.to_screen(anchor_mm.x, anchor_mm.y) + vec2(ox, oy) * 8.0;
    let align = if ox.abs() >= oy.abs() {
        if ox >= 0.0 {
            Align2::LEFT_CENTER
        } else {
            Align2::RIGHT_CENTER
        }
    } else if oy >= 0.0 {
        Align2::CENTER_TOP
    } else {
        Align2::CENTER_BOTTOM
    };
    // Screen order top to bottom, so the column reads like the landings lie.
    let mut rows: Vec<_> = d
        .positions
        .iter()
        .map(|p| (t.to_screen(p.x, p.y).y, p))
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let font = FontId::monospace(12.0);
    let line = 14.0;
    let top = -(rows.len() as f32 - 1.0) / 2.0 * line;
    for (k, (_, p)) in rows.iter().enumerate() {
        let text = format!(
            "{}{:+.1}",
            &p.slot.name()[..1].to_uppercase(),
            p.clearance_mm
        );
        let at = anchor + vec2(0.0, top + k as f32 * line);
        let colour = landing_colour(p);
        // A dark backing keeps the label readable over the mat, ships and the surround.
        let galley = painter.layout_no_wrap(text, font.clone(), colour);
        let rect = align.anchor_size(at, galley.size());
        painter.rect_filled(rect.expand(1.0), 2.0, Color32::from_black_alpha(200));
        painter.galley(rect.min, galley, colour);
    }
}

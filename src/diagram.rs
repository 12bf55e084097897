//! A true-scale top-down SVG of a scene and, optionally, one ship's barrel roll: the play
//! area, ships with their facing, obstacles, the template and the six landings coloured
//! legal or illegal with their clearance. Units are millimetres, so it prints at 1:1.

use crate::geometry::Point;
use crate::rules::{RollVerdict, Table};
use crate::scene::Scene;
use svg::Document;
use svg::node::element::{Group, Line, Polygon, Rectangle, Text, Title};

const MARGIN_MM: f64 = 80.0;
const LEGAL: &str = "#2ecc40";
const ILLEGAL: &str = "#ff4136";
/// Too close to call by camera (within two sigma of zero).
const CLOSE: &str = "#ffb000";

/// Table frame (y up) to SVG (y down).
struct Flip {
    height: f64,
}

impl Flip {
    fn pt(&self, x: f64, y: f64) -> (f64, f64) {
        (x, self.height - y)
    }
    fn points(&self, ring: impl IntoIterator<Item = (f64, f64)>) -> String {
        ring.into_iter()
            .map(|(x, y)| {
                let (u, v) = self.pt(x, y);
                format!("{u:.3},{v:.3}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn label(flip: &Flip, x: f64, y: f64, size: f64, fill: &str, text: &str) -> Text {
    let (u, v) = flip.pt(x, y);
    Text::new(text)
        .set("x", u)
        .set("y", v)
        .set("font-size", size)
        .set("font-family", "sans-serif")
        .set("text-anchor", "middle")
        .set("dominant-baseline", "middle")
        .set("fill", fill)
}

/// What part of the table to show.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum View {
    /// The whole play area with a margin.
    Table,
    /// A square of this side (mm) centred on the rolling ship, still at true scale.
    AroundShip(f64),
}

pub fn scene_svg(
    scene: &Scene,
    table: &Table,
    verdict: Option<&RollVerdict>,
    view: View,
) -> String {
    let (w, h) = (table.play_area.width_mm, table.play_area.height_mm);
    let flip = Flip { height: h };
    let (vx, vy, vw, vh) = match (view, verdict) {
        (View::AroundShip(side), Some(v)) => {
            let (u, t) = flip.pt(v.start.x, v.start.y);
            (u - side / 2.0, t - side / 2.0, side, side)
        }
        _ => (
            -MARGIN_MM,
            -MARGIN_MM,
            w + 2.0 * MARGIN_MM,
            h + 2.0 * MARGIN_MM,
        ),
    };
    let mut doc = Document::new()
        .set("viewBox", (vx, vy, vw, vh))
        .set("width", format!("{vw}mm"))
        .set("height", format!("{vh}mm"))
        .add(Title::new("hashmark scene"))
        .add(
            Rectangle::new()
                .set("x", -MARGIN_MM)
                .set("y", -MARGIN_MM)
                .set("width", w + 2.0 * MARGIN_MM)
                .set("height", h + 2.0 * MARGIN_MM)
                .set("fill", "#d8d2c4"),
        )
        .add(
            Rectangle::new()
                .set("x", 0)
                .set("y", 0)
                .set("width", w)
                .set("height", h)
                .set("fill", "#10162a")
                .set("stroke", "#000")
                .set("stroke-width", 1),
        );

    // Range-1 grid ticks along the edges help read distances off a print.
    let mut grid = Group::new()
        .set("stroke", "#34406a")
        .set("stroke-width", 0.5);
    let mut t = 100.0;
    while t < w {
        grid = grid.add(
            Line::new()
                .set("x1", t)
                .set("y1", 0)
                .set("x2", t)
                .set("y2", h),
        );
        t += 100.0;
    }
    let mut t = 100.0;
    while t < h {
        let (_, v) = flip.pt(0.0, t);
        grid = grid.add(
            Line::new()
                .set("x1", 0)
                .set("y1", v)
                .set("x2", w)
                .set("y2", v),
        );
        t += 100.0;
    }
    doc = doc.add(grid);

    for o in &table.obstacles {
        let ring = o.shape.outline().iter().map(|p| (p.x, p.y));
        let c = centroid(o.shape.outline());
        let title = match &o.model {
            Some(m) => format!("{} ({m})", o.id),
            None => o.id.clone(),
        };
        doc = doc.add(
            Group::new()
                .add(Title::new(title))
                .add(
                    Polygon::new()
                        .set("points", flip.points(ring))
                        .set("fill", "#7a5c3e")
                        .set("stroke", "#c9a27a")
                        .set("stroke-width", 0.6),
                )
                .add(label(&flip, c.x, c.y, 7.0, "#f4e3cf", &o.id)),
        );
    }

    if let Some(v) = verdict {
        for d in &v.directions {
            let blocked = !d.moves_through.is_empty() && !v.ignore_obstacles;
            doc = doc.add(
                Polygon::new()
                    .set(
                        "points",
                        flip.points(d.template_polygon.iter().map(|p| (p[0], p[1]))),
                    )
                    .set("fill", "#b8c4d6")
                    .set("fill-opacity", 0.55)
                    .set("stroke", if blocked { ILLEGAL } else { "#e8eef8" })
                    .set("stroke-width", 0.6),
            );
        }
    }

    for s in &table.ships {
        let ring = s.shape.outline().iter().map(|p| (p.x, p.y));
        let nose = s.pose.to_table(Point::new(0.0, 0.0))
            + s.pose.forward() * (0.45 * base_width(&s.shape));
        let (cu, cv) = flip.pt(s.pose.x, s.pose.y);
        let (nu, nv) = flip.pt(nose.x, nose.y);
        let selected = verdict.is_some_and(|v| v.ship == s.id);
        doc = doc.add(
            Group::new()
                .add(Title::new(format!(
                    "{} ({}) x {:.1} y {:.1} heading {:.1}",
                    s.id, s.size, s.pose.x, s.pose.y, s.pose.heading_deg
                )))
                .add(
                    Polygon::new()
                        .set("points", flip.points(ring))
                        .set("fill", "#1b1b1b")
                        .set("stroke", if selected { "#ffdc00" } else { "#d0d0d0" })
                        .set("stroke-width", if selected { 1.2 } else { 0.6 }),
                )
                .add(
                    Line::new()
                        .set("x1", cu)
                        .set("y1", cv)
                        .set("x2", nu)
                        .set("y2", nv)
                        .set("stroke", "#ffdc00")
                        .set("stroke-width", 1.5),
                )
                .add(label(
                    &flip,
                    s.pose.x,
                    s.pose.y - 0.2 * base_width(&s.shape),
                    6.0,
                    "#ffffff",
                    &s.id,
                )),
        );
    }

    if let Some(v) = verdict {
        for d in &v.directions {
            for p in &d.positions {
                let colour = if p.too_close_to_call {
                    CLOSE
                } else if p.legal {
                    LEGAL
                } else {
                    ILLEGAL
                };
                let mut poly = Polygon::new()
                    .set(
                        "points",
                        flip.points(p.base_polygon.iter().map(|q| (q[0], q[1]))),
                    )
                    .set("fill", colour)
                    .set("fill-opacity", 0.12)
                    .set("stroke", colour)
                    .set("stroke-width", 0.7);
                if !p.legal {
                    poly = poly.set("stroke-dasharray", "3 2");
                }
                let why = if p.legal {
                    format!(
                        "{} legal, {:.1} mm to {}",
                        p.slot.name(),
                        p.clearance_mm,
                        p.nearest.label()
                    )
                } else {
                    let r: Vec<String> = p
                        .reasons
                        .iter()
                        .map(|r| format!("{} {:.1} mm", r.label(), r.clearance_mm))
                        .collect();
                    format!("{} illegal: {}", p.slot.name(), r.join(", "))
                };
                let text = format!(
                    "{}{:+.1}",
                    &p.slot.name()[..1].to_uppercase(),
                    p.clearance_mm
                );
                // The three landings overlap: write each label in a column beyond them, at
                // its own landing's height along the slide.
                let out = nalgebra::Vector2::new(p.x - v.start.x, p.y - v.start.y);
                let out = if out.norm() > 0.0 {
                    out.normalize()
                } else {
                    out
                };
                let at = Point::new(p.x, p.y) + out * (0.5 * p_width(p) + 14.0);
                doc = doc.add(
                    Group::new()
                        .add(Title::new(format!("{} {why}", d.direction.name())))
                        .add(poly)
                        .add(label(&flip, at.x, at.y, 5.0, colour, &text)),
                );
            }
        }
        let heading = format!(
            "{} ({}) barrel roll, {}{}: {}",
            v.ship,
            v.size,
            v.template.name(),
            if v.ignore_obstacles {
                ", ignoring obstacles"
            } else {
                ""
            },
            v.directions
                .iter()
                .map(|d| format!(
                    "{} {}",
                    d.direction.name(),
                    if d.fails {
                        "fails".to_string()
                    } else {
                        format!("{}/3 legal", d.legal_count())
                    }
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let (hx, hy, size, colour) = match view {
            View::AroundShip(side) => (v.start.x, v.start.y + side * 0.44, side / 40.0, "#ffffff"),
            View::Table => (w / 2.0, h + MARGIN_MM / 2.0, 12.0, "#111"),
        };
        doc = doc.add(label(&flip, hx, hy, size, colour, &heading));
    }
    let legend = format!(
        "hashmark {} - {} ships, {} obstacles - play area {} x {} mm - grid 100 mm - green legal, red dashed illegal, F/M/B clearance mm",
        scene.format,
        table.ships.len(),
        table.obstacles.len(),
        w,
        h
    );
    if view == View::Table || verdict.is_none() {
        doc = doc.add(label(
            &flip,
            w / 2.0,
            -MARGIN_MM / 2.0,
            9.0,
            "#333",
            &legend,
        ));
    }
    doc.to_string()
}

/// Side of a landed base, from its outline's extent across the slide.
fn p_width(p: &crate::rules::Landing) -> f64 {
    let xs = p.base_polygon.iter().map(|q| q[0]);
    let ys = p.base_polygon.iter().map(|q| q[1]);
    let span = |it: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = it.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        hi - lo
    };
    // The guides add 3.2 mm along the ship's axis; the smaller extent is the width or more.
    span(&mut xs.into_iter())
        .min(span(&mut ys.into_iter()))
        .min(80.0)
}

fn centroid(ring: &[Point]) -> Point {
    let n = ring.len().max(1) as f64;
    Point::new(
        ring.iter().map(|p| p.x).sum::<f64>() / n,
        ring.iter().map(|p| p.y).sum::<f64>() / n,
    )
}

fn base_width(shape: &crate::geometry::Shape) -> f64 {
    // The square piece is the first and largest.
    shape
        .pieces()
        .first()
        .map(|c| {
            let p = c.points();
            (p[1] - p[0]).norm()
        })
        .unwrap_or(40.0)
}

//! What else lies on a real table: playing cards and dice around the mat, condition and
//! action tokens beside the ships. None of it is in the scene; all of it is what detection
//! has to ignore, so a simulator without it would flatter every detector.

use super::texture::{Rgb, hsv, mix, scale, srgb};
use crate::scene::Scene;
use crate::vision::rng::{Rng, hash2, unit};

/// A flat item lying on the table or the mat (z = 0).
#[derive(Clone, Debug)]
pub enum Item {
    /// A rectangle (card or die face) with a border colour and a face colour.
    Rect {
        centre: [f64; 2],
        half: [f64; 2],
        angle: f64,
        border: Rgb,
        face: Rgb,
        border_mm: f64,
        seed: u64,
        die: bool,
    },
    /// A round cardboard token.
    Disc {
        centre: [f64; 2],
        radius: f64,
        colour: Rgb,
    },
}

impl Item {
    fn bound(&self) -> ([f64; 2], f64) {
        match self {
            Item::Rect { centre, half, .. } => {
                (*centre, (half[0].powi(2) + half[1].powi(2)).sqrt())
            }
            Item::Disc { centre, radius, .. } => (*centre, *radius),
        }
    }

    /// The item's colour at a table point, `None` off the item.
    pub fn colour(&self, x: f64, y: f64) -> Option<Rgb> {
        let (c, r) = self.bound();
        if (x - c[0]).abs() > r || (y - c[1]).abs() > r {
            return None;
        }
        match self {
            Item::Rect {
                centre,
                half,
                angle,
                border,
                face,
                border_mm,
                seed,
                die,
            } => {
                let (s, co) = angle.sin_cos();
                let (dx, dy) = (x - centre[0], y - centre[1]);
                let (u, v) = (co * dx + s * dy, -s * dx + co * dy);
                if u.abs() > half[0] || v.abs() > half[1] {
                    return None;
                }
                let edge = (half[0] - u.abs()).min(half[1] - v.abs());
                if *die {
                    // Pips on a 3 x 3 grid, rounded corners darkened.
                    let (gx, gy) = (
                        (u / half[0] * 1.5 + 1.5).floor(),
                        (v / half[1] * 1.5 + 1.5).floor(),
                    );
                    let (fx, fy) = (
                        (u / half[0] * 1.5 + 1.5).fract() - 0.5,
                        (v / half[1] * 1.5 + 1.5).fract() - 0.5,
                    );
                    let pip = unit(hash2(*seed, gx as i64, gy as i64)) < 0.45;
                    if pip && fx * fx + fy * fy < 0.08 {
                        return Some(*border);
                    }
                    return Some(scale(*face, if edge < 1.0 { 0.6 } else { 1.0 }));
                }
                if edge < *border_mm {
                    return Some(*border);
                }
                // Card art: blocks of colour and lines of text.
                let n = super::texture::fbm(*seed, u, v, 12.0, 3, 0.5);
                let text = v < -half[1] * 0.3
                    && (v * 0.8).sin() > 0.4
                    && unit(hash2(*seed, (u / 2.0) as i64, (v / 2.5) as i64)) < 0.6;
                Some(if text {
                    srgb(40, 40, 40)
                } else {
                    mix(*face, scale(*face, 0.4), n)
                })
            }
            Item::Disc {
                centre,
                radius,
                colour,
            } => {
                let d = ((x - centre[0]).powi(2) + (y - centre[1]).powi(2)).sqrt();
                if d > *radius {
                    return None;
                }
                Some(if d > radius - 1.0 || d < radius * 0.35 {
                    srgb(230, 230, 225)
                } else {
                    *colour
                })
            }
        }
    }
}

/// Clutter for a scene: 2-5 cards and 2-8 dice around the mat (clear of the marker cards),
/// and 0-2 tokens beside each ship (clear of every base, obstacle and the mat's edge).
pub fn random_clutter(
    seed: u64,
    scene: &Scene,
    marker_centres: &[[f64; 2]],
    obstacle_bounds: &[([f64; 2], f64)],
) -> Vec<Item> {
    let mut rng = Rng::stream(seed, "clutter");
    let (w, h) = (scene.play_area.width_mm, scene.play_area.height_mm);
    let mut items: Vec<Item> = Vec::new();
    let clear_of_markers = |c: [f64; 2], r: f64| {
        marker_centres
            .iter()
            .all(|m| ((m[0] - c[0]).powi(2) + (m[1] - c[1]).powi(2)).sqrt() > r + 70.0)
    };
    let clear_of_items = |items: &[Item], c: [f64; 2], r: f64| {
        items.iter().all(|i| {
            let (ic, ir) = i.bound();
            ((ic[0] - c[0]).powi(2) + (ic[1] - c[1]).powi(2)).sqrt() > ir + r + 2.0
        })
    };
    // Around the mat: a point 40-260 mm outside a random edge.
    let outside = |rng: &mut Rng, r: f64| -> [f64; 2] {
        let d = rng.range(40.0, 260.0) + r;
        let t = rng.f64();
        match rng.int(0, 3) {
            0 => [t * w, -d],
            1 => [w + d, t * h],
            2 => [t * w, h + d],
            _ => [-d, t * h],
        }
    };
    let n_cards = rng.int(2, 5);
    let mut tries = 0;
    while items.len() < n_cards as usize && tries < 200 {
        tries += 1;
        let half: [f64; 2] = [31.5, 44.0];
        let r = (half[0] * half[0] + half[1] * half[1]).sqrt();
        let c = outside(&mut rng, r);
        if clear_of_markers(c, r) && clear_of_items(&items, c, r) {
            items.push(Item::Rect {
                centre: c,
                half,
                angle: rng.range(0.0, std::f64::consts::TAU),
                border: srgb(20, 20, 22),
                face: hsv(rng.f64(), 0.5, 0.6),
                border_mm: 3.0,
                seed: rng.next_u64(),
                die: false,
            });
        }
    }
    let n_dice = rng.int(2, 8) as usize + items.len();
    let mut tries = 0;
    while items.len() < n_dice && tries < 400 {
        tries += 1;
        let half = [8.0, 8.0];
        let r = 11.5;
        let c = outside(&mut rng, r);
        if clear_of_markers(c, r) && clear_of_items(&items, c, r) {
            let red = rng.chance(0.5);
            items.push(Item::Rect {
                centre: c,
                half,
                angle: rng.range(0.0, std::f64::consts::TAU),
                border: srgb(240, 240, 235),
                face: if red {
                    srgb(170, 25, 25)
                } else {
                    srgb(30, 130, 50)
                },
                border_mm: 0.0,
                seed: rng.next_u64(),
                die: true,
            });
        }
    }
    // Tokens beside the ships.
    let ship_r = |size: crate::models::BaseSize| match size {
        crate::models::BaseSize::Small => 30.0,
        crate::models::BaseSize::Medium => 44.0,
        crate::models::BaseSize::Large => 58.0,
    };
    for s in &scene.ships {
        for _ in 0..rng.int(0, 2) {
            let radius = 9.5;
            let a = rng.range(0.0, std::f64::consts::TAU);
            let d = ship_r(s.size) + radius + rng.range(2.0, 10.0);
            let c = [s.x + d * a.cos(), s.y + d * a.sin()];
            let inside = c[0] > radius && c[1] > radius && c[0] < w - radius && c[1] < h - radius;
            let clear_ships = scene.ships.iter().all(|o| {
                ((o.x - c[0]).powi(2) + (o.y - c[1]).powi(2)).sqrt() > ship_r(o.size) + radius
            });
            let clear_obstacles = obstacle_bounds.iter().all(|(oc, or)| {
                ((oc[0] - c[0]).powi(2) + (oc[1] - c[1]).powi(2)).sqrt() > or + radius + 2.0
            });
            if inside && clear_ships && clear_obstacles && clear_of_items(&items, c, radius) {
                let colour = *rng.pick(&[
                    srgb(40, 150, 60),
                    srgb(200, 40, 40),
                    srgb(40, 90, 200),
                    srgb(230, 180, 30),
                ]);
                items.push(Item::Disc {
                    centre: c,
                    radius,
                    colour,
                });
            }
        }
    }
    items
}

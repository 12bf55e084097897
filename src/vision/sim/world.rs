//! The 3-D table the simulator photographs, built from a scene and a seed: the space mat and
//! the table around it, the marker cards, the obstacle tokens, the ship bases with their
//! tokens and miniatures, and optionally a ChArUco board held in the air. Geometry here is
//! exact (it is the ground truth); the looks are procedural.

use super::texture::{self, Rgb, fbm, hsv, mix, rgb, scale, smoothstep, srgb};
use crate::models::{BaseSize, Models};
use crate::scene::Scene;
use crate::vision::VisionError;
use crate::vision::aruco::{self, CharucoGeometry, Dict, MarkerBits};
use crate::vision::rng::{Rng, hash2, unit};
use nalgebra::Vector3;

/// Marker card centres, ids 0..3 (spec section 5).
pub fn marker_centres(play_w: f64, play_h: f64) -> [[f64; 2]; 4] {
    [
        [-45.0, -45.0],
        [play_w + 45.0, -45.0],
        [play_w + 45.0, play_h + 45.0],
        [-45.0, play_h + 45.0],
    ]
}

/// Side of the black marker square (mm).
pub const MARKER_MM: f64 = 60.0;
/// Half side of the white card a marker is printed on (mm).
pub const CARD_HALF_MM: f64 = 42.0;

/// The four corners of mat marker `id` in the table frame (z = 0), top-left first, as the
/// spec prints them.
pub fn marker_corners(centre: [f64; 2]) -> [[f64; 3]; 4] {
    let h = MARKER_MM / 2.0;
    let [cx, cy] = centre;
    [
        [cx - h, cy + h, 0.0],
        [cx + h, cy + h, 0.0],
        [cx + h, cy - h, 0.0],
        [cx - h, cy - h, 0.0],
    ]
}

pub struct Card {
    pub centre: [f64; 2],
    pub bits: MarkerBits,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ObstacleKind {
    Rock,
    Debris,
    Gas,
}

pub struct Obstacle {
    pub outline: Vec<[f64; 2]>,
    pub bbox: [f64; 4],
    pub kind: ObstacleKind,
    pub seed: u64,
    pub tint: Rgb,
}

/// The miniature: an irregular lumpy lens shape on a peg; implicit surface
/// (q / r(theta))^2 + ((z - zc) / hz)^2 = 1 in the mini's own frame.
pub struct Mini {
    pub centre: Vector3<f64>,
    pub heading: f64,
    pub a: f64,
    pub b: f64,
    pub hz: f64,
    pub harmonics: [(f64, f64); 4],
    pub colour: Rgb,
    pub seed: u64,
    pub radius: f64,
}

impl Mini {
    fn local(&self, p: Vector3<f64>) -> (f64, f64, f64) {
        let (s, c) = self.heading.sin_cos();
        let (dx, dy) = (p.x - self.centre.x, p.y - self.centre.y);
        (c * dx + s * dy, -s * dx + c * dy, p.z - self.centre.z)
    }

    fn profile(&self, lx: f64, ly: f64) -> f64 {
        let (u, v) = (lx / self.a, ly / self.b);
        let q = (u * u + v * v).sqrt();
        let th = v.atan2(u);
        let r: f64 = 1.0
            + self
                .harmonics
                .iter()
                .enumerate()
                .map(|(k, (amp, ph))| amp * ((k as f64 + 2.0) * th + ph).cos())
                .sum::<f64>();
        q / r
    }

    /// <= 1 inside.
    pub fn field(&self, p: Vector3<f64>) -> f64 {
        let (lx, ly, lz) = self.local(p);
        let q = self.profile(lx, ly);
        q * q + (lz / self.hz).powi(2)
    }

    /// Horizontal footprint (for shadows): < 1 under the mini.
    pub fn footprint(&self, x: f64, y: f64) -> f64 {
        let (lx, ly, _) = self.local(Vector3::new(x, y, 0.0));
        self.profile(lx, ly)
    }
}

pub struct Ship {
    pub centre: [f64; 2],
    pub heading: f64,
    pub width: f64,
    /// Guide rectangles and the square, ship frame: [x0, y0, x1, y1].
    pub rects: Vec<[f64; 4]>,
    pub height: f64,
    pub rim: f64,
    pub arc_half: f64,
    pub faction: Rgb,
    pub seed: u64,
    pub peg_radius: f64,
    pub mini: Mini,
    pub bound: f64,
}

impl Ship {
    /// Table point to ship frame (+x right, +y forward).
    pub fn to_ship(&self, x: f64, y: f64) -> (f64, f64) {
        let (s, c) = self.heading.sin_cos();
        let (dx, dy) = (x - self.centre[0], y - self.centre[1]);
        // right = (sin h, -cos h), forward = (cos h, sin h)
        (dx * s - dy * c, dx * c + dy * s)
    }

    /// A ship-frame direction to the table frame.
    pub fn dir_to_table(&self, x: f64, y: f64) -> (f64, f64) {
        let (s, c) = self.heading.sin_cos();
        (x * s + y * c, -x * c + y * s)
    }
}

/// A ChArUco board as a flat card in space.
pub struct Board {
    pub geometry: CharucoGeometry,
    pub origin: Vector3<f64>,
    pub ex: Vector3<f64>,
    pub ey: Vector3<f64>,
    pub normal: Vector3<f64>,
    pub margin: f64,
}

pub struct MatStyle {
    pub seed: u64,
    pub deep: Rgb,
    pub glow: Rgb,
    pub glow_dir: f64,
    pub nebula: Rgb,
    pub nebula2: Rgb,
    pub nebula_scale: f64,
    pub nebula_amount: f64,
    pub star_density: f64,
    pub planet: Option<Planet>,
}

pub struct Planet {
    pub centre: [f64; 2],
    pub radius: f64,
    pub colour: Rgb,
    pub colour2: Rgb,
    pub light: [f64; 2],
    pub band_dir: f64,
}

pub struct TableStyle {
    pub wood: bool,
    pub colour: Rgb,
    pub colour2: Rgb,
    pub grain_dir: f64,
    pub seed: u64,
}

/// Scene light: a soft overall gradient and a broad spot, plus a key direction for shading
/// and soft shadows.
pub struct Light {
    pub level: f64,
    pub gradient: [f64; 2],
    pub spot: [f64; 2],
    pub spot_sigma: f64,
    pub spot_gain: f64,
    pub key: Vector3<f64>,
    pub shadow: f64,
    /// The ceiling lamp (table mm) whose highlight glossy surfaces show.
    pub lamp: Vector3<f64>,
}

impl Light {
    pub fn random(rng: &mut Rng, centre: [f64; 2]) -> Light {
        let g = rng.range(0.0, 0.35) / 600.0;
        let gd = rng.range(0.0, std::f64::consts::TAU);
        let key_az = rng.range(0.0, std::f64::consts::TAU);
        let key_el = rng.range(55.0, 80.0).to_radians();
        Light {
            level: rng.range(0.75, 1.05),
            gradient: [g * gd.cos(), g * gd.sin()],
            spot: [
                centre[0] + rng.range(-400.0, 400.0),
                centre[1] + rng.range(-400.0, 400.0),
            ],
            spot_sigma: rng.range(250.0, 600.0),
            spot_gain: rng.range(0.0, 0.35),
            key: Vector3::new(
                key_el.cos() * key_az.cos(),
                key_el.cos() * key_az.sin(),
                key_el.sin(),
            ),
            shadow: rng.range(0.35, 0.6),
            lamp: Vector3::new(
                centre[0] + rng.range(-600.0, 600.0),
                centre[1] + rng.range(-600.0, 600.0),
                rng.range(1500.0, 2300.0),
            ),
        }
    }

    /// The illuminance at a table point, relative (about 0.5..1.4).
    pub fn at(&self, x: f64, y: f64, centre: [f64; 2]) -> f64 {
        let lin = 1.0 + self.gradient[0] * (x - centre[0]) + self.gradient[1] * (y - centre[1]);
        let d2 = (x - self.spot[0]).powi(2) + (y - self.spot[1]).powi(2);
        let spot = 1.0 + self.spot_gain * (-d2 / (2.0 * self.spot_sigma.powi(2))).exp();
        self.level * lin.max(0.4) * spot
    }
}

pub struct World {
    pub play: [f64; 2],
    pub mat: MatStyle,
    pub table: TableStyle,
    pub cards: Vec<Card>,
    pub obstacles: Vec<Obstacle>,
    pub ships: Vec<Ship>,
    pub board: Option<Board>,
    /// A hand passing over the table (same shape model as a miniature).
    pub hand: Option<Mini>,
    /// Cards, dice and tokens that are not part of the scene.
    pub clutter: Vec<super::clutter::Item>,
    pub light: Light,
}

fn faction_colour(rng: &mut Rng) -> Rgb {
    *rng.pick(&[
        srgb(200, 40, 35),  // rebel red
        srgb(60, 110, 200), // imperial blue-grey
        srgb(40, 160, 70),  // scum green
        srgb(230, 140, 30), // orange
        srgb(150, 60, 190), // purple
        srgb(40, 170, 190), // cyan
    ])
}

impl World {
    /// Builds the world for `scene`: looks from `look_seed` (mat, table, tokens, minis) and
    /// the light from `light_seed` (so the background image can share the looks but not the
    /// light).
    pub fn build(
        scene: &Scene,
        look_seed: u64,
        light_seed: u64,
        models: &Models,
    ) -> Result<World, VisionError> {
        let play = [scene.play_area.width_mm, scene.play_area.height_mm];
        let centre = [play[0] / 2.0, play[1] / 2.0];
        let mut rng = Rng::stream(look_seed, "world");
        let mat = MatStyle::random(&mut rng, play);
        let table = TableStyle::random(&mut rng);
        let mut cards = Vec::new();
        for (id, c) in marker_centres(play[0], play[1]).iter().enumerate() {
            cards.push(Card {
                centre: *c,
                bits: aruco::marker_bits(Dict::Mat4x4_50, id as i32)?,
            });
        }
        let mut obstacles = Vec::new();
        for o in &scene.obstacles {
            let outline = o
                .outline(models)
                .map_err(|e| VisionError::Invalid(format!("obstacle {}: {e}", o.id)))?;
            let mut bbox = [
                f64::INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NEG_INFINITY,
            ];
            for p in &outline {
                bbox = [
                    bbox[0].min(p[0]),
                    bbox[1].min(p[1]),
                    bbox[2].max(p[0]),
                    bbox[3].max(p[1]),
                ];
            }
            let name = o.model.clone().unwrap_or_default();
            let kind = if name.contains("gas") {
                ObstacleKind::Gas
            } else if name.contains("debris") {
                ObstacleKind::Debris
            } else {
                ObstacleKind::Rock
            };
            let tint = match kind {
                ObstacleKind::Gas => hsv(rng.range(0.0, 1.0), 0.35, 0.6),
                ObstacleKind::Debris => srgb(120, 120, 125),
                ObstacleKind::Rock => mix(srgb(110, 95, 80), srgb(120, 120, 120), rng.f64()),
            };
            obstacles.push(Obstacle {
                outline,
                bbox,
                kind,
                seed: rng.next_u64(),
                tint,
            });
        }
        let bases = &models.bases;
        let mut ships = Vec::new();
        for s in &scene.ships {
            let w = bases.get(s.size).width_mm;
            let g = &bases.guides;
            let h = w / 2.0;
            let (gx, gw, pr) = (g.offset_x_mm, g.width_mm / 2.0, g.protrusion_mm);
            let rects = vec![
                [-h, -h, h, h],
                [-gx - gw, h, -gx + gw, h + pr],
                [gx - gw, h, gx + gw, h + pr],
                [-gx - gw, -h - pr, -gx + gw, -h],
                [gx - gw, -h - pr, gx + gw, -h],
            ];
            let height = bases.base_top_height_mm;
            let heading = s.heading_deg.to_radians();
            let arc_half = match s.size {
                BaseSize::Small => 40.5f64,
                BaseSize::Medium => 42.0,
                BaseSize::Large => 43.0,
            }
            .to_radians();
            // The miniature: longer than wide, along the ship's forward axis, sometimes
            // longer than the base.
            let span = rng.range(0.45, 1.15) * w / 2.0 + rng.range(3.0, 10.0);
            let (a, b) = if rng.chance(0.5) {
                (span, span * rng.range(0.45, 0.8))
            } else {
                (span * rng.range(0.6, 0.9), span)
            };
            let mini_heading = heading + rng.range(-0.2, 0.2);
            let mut harmonics = [(0.0, 0.0); 4];
            for (k, hm) in harmonics.iter_mut().enumerate() {
                *hm = (rng.range(0.0, 0.22) / (k as f64 + 1.0), rng.range(0.0, 6.3));
            }
            let radius = b.max(a) * 1.6;
            let (ox, oy) = (rng.range(-4.0, 4.0), rng.range(-4.0, 4.0));
            let mini = Mini {
                centre: Vector3::new(s.x + ox, s.y + oy, height + rng.range(25.0, 45.0)),
                heading: mini_heading,
                a,
                b,
                hz: rng.range(5.0, 11.0),
                harmonics,
                colour: *rng.pick(&[
                    srgb(190, 190, 185),
                    srgb(150, 150, 155),
                    srgb(200, 185, 160),
                    srgb(90, 90, 95),
                    srgb(215, 215, 210),
                ]),
                seed: rng.next_u64(),
                radius,
            };
            let bound = (w / 2.0 + pr) * std::f64::consts::SQRT_2 + 1.0;
            ships.push(Ship {
                centre: [s.x, s.y],
                heading,
                width: w,
                rects,
                height,
                rim: if w < 50.0 { 1.6 } else { 2.0 },
                arc_half,
                faction: faction_colour(&mut rng),
                seed: rng.next_u64(),
                peg_radius: 1.8,
                bound: bound.max(radius + 6.0),
                mini,
            });
        }
        let light = Light::random(&mut Rng::stream(light_seed, "light"), centre);
        let obstacle_bounds: Vec<([f64; 2], f64)> = obstacles
            .iter()
            .map(|o| {
                let c = [(o.bbox[0] + o.bbox[2]) / 2.0, (o.bbox[1] + o.bbox[3]) / 2.0];
                (
                    c,
                    ((o.bbox[2] - o.bbox[0]).powi(2) + (o.bbox[3] - o.bbox[1]).powi(2)).sqrt()
                        / 2.0,
                )
            })
            .collect();
        let clutter = super::clutter::random_clutter(
            look_seed,
            scene,
            &marker_centres(play[0], play[1]),
            &obstacle_bounds,
        );
        Ok(World {
            play,
            mat,
            table,
            cards,
            obstacles,
            ships,
            board: None,
            hand: None,
            clutter,
            light,
        })
    }

    pub fn centre(&self) -> [f64; 2] {
        [self.play[0] / 2.0, self.play[1] / 2.0]
    }
}

impl MatStyle {
    fn random(rng: &mut Rng, play: [f64; 2]) -> MatStyle {
        let hue = rng.f64();
        let planet = if rng.chance(0.8) {
            let radius = rng.range(50.0, 200.0);
            let la = rng.range(0.0, std::f64::consts::TAU);
            Some(Planet {
                centre: [
                    rng.range(-0.1, 1.1) * play[0],
                    rng.range(-0.1, 1.1) * play[1],
                ],
                radius,
                colour: hsv(rng.f64(), rng.range(0.3, 0.7), rng.range(0.5, 0.8)),
                colour2: hsv(rng.f64(), rng.range(0.2, 0.6), rng.range(0.3, 0.6)),
                light: [la.cos(), la.sin()],
                band_dir: rng.range(0.0, std::f64::consts::PI),
            })
        } else {
            None
        };
        MatStyle {
            seed: rng.next_u64(),
            deep: hsv(hue, 0.6, rng.range(0.03, 0.1)),
            glow: hsv(hue + rng.range(-0.1, 0.1), 0.7, rng.range(0.12, 0.3)),
            glow_dir: rng.range(0.0, std::f64::consts::TAU),
            nebula: hsv(rng.f64(), rng.range(0.5, 0.9), rng.range(0.4, 0.75)),
            nebula2: hsv(rng.f64(), rng.range(0.4, 0.9), rng.range(0.3, 0.6)),
            nebula_scale: rng.range(120.0, 300.0),
            nebula_amount: rng.range(0.2, 0.8),
            star_density: rng.range(0.05, 0.16),
            planet,
        }
    }

    /// The printed mat at a table point (mm).
    pub fn colour(&self, x: f64, y: f64, play: [f64; 2]) -> Rgb {
        let (gx, gy) = (self.glow_dir.cos(), self.glow_dir.sin());
        let t = ((x - play[0] / 2.0) * gx + (y - play[1] / 2.0) * gy) / play[0] + 0.5;
        let mut c = mix(self.deep, self.glow, smoothstep(0.1, 1.2, t));
        let n = fbm(self.seed, x, y, self.nebula_scale, 5, 0.55);
        let n2 = fbm(self.seed ^ 77, x, y, self.nebula_scale * 0.5, 4, 0.6);
        let neb = smoothstep(0.45, 0.75, n) * self.nebula_amount;
        c = mix(
            c,
            mix(self.nebula, self.nebula2, n2),
            neb * (0.4 + 0.6 * n2),
        );
        if let Some(p) = &self.planet {
            let (dx, dy) = ((x - p.centre[0]) / p.radius, (y - p.centre[1]) / p.radius);
            let r2 = dx * dx + dy * dy;
            if r2 < 1.0 {
                let z = (1.0 - r2).sqrt();
                let lit = (dx * p.light[0] + dy * p.light[1] + 0.6 * z).clamp(0.0, 1.0);
                let band = (dx * p.band_dir.cos() + dy * p.band_dir.sin()) * 6.0
                    + 2.0 * fbm(self.seed ^ 5, x, y, p.radius * 0.3, 3, 0.5);
                let surf = mix(p.colour, p.colour2, 0.5 + 0.5 * band.sin());
                let edge = smoothstep(1.0, 0.985, r2.sqrt());
                c = mix(c, scale(surf, 0.05 + 0.95 * lit), edge);
                return c;
            }
            // Atmosphere glow.
            let d = r2.sqrt() - 1.0;
            if d < 0.15 {
                c = mix(c, scale(p.colour, 0.6), (1.0 - d / 0.15) * 0.25);
            }
        }
        // Stars: at most one per 5 mm cell, a gaussian dot with a power-law brightness.
        let cell = 5.0;
        let (ci, cj) = ((x / cell).floor() as i64, (y / cell).floor() as i64);
        for di in -1..=1 {
            for dj in -1..=1 {
                let h = hash2(self.seed ^ 0x5747, ci + di, cj + dj);
                if unit(h) > self.star_density {
                    continue;
                }
                let sx = (ci + di) as f64 * cell + cell * unit(h >> 7 ^ h << 13);
                let sy = (cj + dj) as f64 * cell + cell * unit(h.rotate_left(29));
                let b = unit(h.rotate_left(41)).powf(6.0);
                let size = 0.2 + 0.7 * b;
                let d2 = ((x - sx).powi(2) + (y - sy).powi(2)) / (size * size);
                if d2 < 9.0 {
                    let v = (0.08 + 2.5 * b) * (-d2).exp();
                    c = texture::add(c, rgb(v, v, v * 1.05));
                }
            }
        }
        c
    }
}

impl TableStyle {
    fn random(rng: &mut Rng) -> TableStyle {
        let wood = rng.chance(0.6);
        let (colour, colour2) = if wood {
            let base = *rng.pick(&[srgb(140, 95, 60), srgb(170, 125, 80), srgb(100, 65, 40)]);
            (base, scale(base, 0.6))
        } else {
            let g = rng.range(90.0, 160.0) as u8;
            (
                srgb(g, g, g.saturating_add(4)),
                srgb(g / 2 + 20, g / 2 + 20, g / 2 + 22),
            )
        };
        TableStyle {
            wood,
            colour,
            colour2,
            grain_dir: rng.range(0.0, std::f64::consts::PI),
            seed: rng.next_u64(),
        }
    }

    pub fn colour(&self, x: f64, y: f64) -> Rgb {
        if self.wood {
            let (s, c) = self.grain_dir.sin_cos();
            let (u, v) = (c * x + s * y, -s * x + c * y);
            let warp = fbm(self.seed, u * 0.05, v, 40.0, 4, 0.5) * 12.0;
            let grain = (0.5 + 0.5 * ((v + warp) * 0.9).sin()).powf(3.0);
            let plank = fbm(
                self.seed ^ 3,
                (v / 120.0).floor() * 1000.0 + u * 0.02,
                0.0,
                10.0,
                2,
                0.5,
            );
            mix(self.colour, self.colour2, 0.5 * grain + 0.4 * plank)
        } else {
            let n = fbm(self.seed, x, y, 3.0, 3, 0.6);
            mix(self.colour, self.colour2, 0.3 * n)
        }
    }
}

/// The printed face of an obstacle token at a table point inside its outline.
pub fn obstacle_colour(o: &Obstacle, x: f64, y: f64) -> Rgb {
    let edge = texture::edge_distance(&o.outline, x, y);
    let n = fbm(o.seed, x, y, 14.0, 5, 0.55);
    let base = match o.kind {
        ObstacleKind::Rock => {
            let crater = fbm(o.seed ^ 9, x, y, 6.0, 3, 0.5);
            let c = scale(o.tint, 0.35 + 0.9 * n);
            scale(c, 0.7 + 0.6 * smoothstep(0.35, 0.65, crater))
        }
        ObstacleKind::Debris => {
            let plate = fbm(
                o.seed ^ 4,
                (x / 6.0).floor(),
                (y / 9.0).floor(),
                1.0,
                1,
                0.5,
            );
            let c = scale(o.tint, 0.3 + 0.8 * plate);
            let seam = ((x * 0.7).sin() * (y * 0.45).cos()).abs() < 0.05;
            if seam {
                scale(c, 0.3)
            } else {
                mix(c, srgb(200, 120, 40), smoothstep(0.7, 0.8, n) * 0.5)
            }
        }
        ObstacleKind::Gas => {
            let swirl = fbm(o.seed ^ 2, x + 10.0 * n, y, 10.0, 5, 0.6);
            mix(srgb(15, 12, 25), o.tint, 0.3 + 0.8 * swirl)
        }
    };
    // Darkened die-cut edge, as printed tokens have.
    mix(srgb(20, 20, 22), base, smoothstep(0.2, 1.2, edge))
}

/// The printed ship token at a ship-frame point (mm) on the base top.
pub fn token_colour(s: &Ship, x: f64, y: f64) -> Rgb {
    let half = s.width / 2.0 - s.rim;
    let white = srgb(225, 225, 220);
    // Ship art: dark, mottled, with the faction colour faintly mixed in.
    let n = fbm(s.seed, x, y, 6.0, 4, 0.55);
    let mut c = mix(srgb(18, 19, 22), srgb(70, 72, 78), n);
    // Front arc shaded in the faction colour.
    let ang = x.atan2(y).abs();
    if ang < s.arc_half {
        c = mix(c, s.faction, 0.55 + 0.2 * n);
    }
    // Bullseye strip: 14.8 mm wide straight ahead.
    if y > 0.0 && x.abs() < 7.4 {
        c = mix(c, scale(white, 0.8), 0.35);
    }
    if y > 0.0 && (x.abs() - 7.4).abs() < 0.25 {
        c = white;
    }
    // Crossed arc lines through the centre.
    for sign in [-1.0, 1.0] {
        let a = sign * s.arc_half;
        if (x * a.cos() - y * a.sin()).abs() < 0.35 {
            c = scale(white, 0.85);
        }
    }
    // Hashmarks: sides and front/rear.
    if (y.abs() < 0.45 && x.abs() > half - 3.5) || (x.abs() < 0.45 && y.abs() > half - 3.5) {
        c = white;
    }
    // Clutter: pilot text on a band at the rear, an initiative disc.
    if y < -half + 7.5 && y > -half + 2.5 && x.abs() < half * 0.55 {
        c = srgb(30, 30, 35);
        let (ci, cj) = ((x / 1.3).floor() as i64, ((y + half) / 1.6).floor() as i64);
        let h = hash2(s.seed, ci, cj);
        let (fx, fy) = (x / 1.3 - ci as f64, (y + half) / 1.6 - cj as f64);
        if unit(h) < 0.55 && fx > 0.15 && fx < 0.8 && fy > 0.2 && fy < 0.85 {
            c = scale(white, 0.9);
        }
    }
    let (dx, dy) = (x + half - 4.5, y + half - 4.5);
    if dx * dx + dy * dy < 9.0 {
        c = srgb(235, 130, 30);
    }
    c
}

impl Board {
    /// The board's printed colour at board-frame point (mm); `None` off the card.
    pub fn colour(&self, u: f64, v: f64) -> Option<Rgb> {
        let g = &self.geometry;
        let (w, h) = (
            g.squares_x as f64 * g.square_mm,
            g.squares_y as f64 * g.square_mm,
        );
        if u < -self.margin || v < -self.margin || u > w + self.margin || v > h + self.margin {
            return None;
        }
        let white = srgb(235, 235, 230);
        let black = srgb(12, 12, 14);
        if g.square_is_black(u, v) {
            return Some(black);
        }
        for (_, c, bits) in &g.markers {
            let (ox, oy) = (c[0][0], c[0][1]);
            let (ex, ey) = (c[1][0] - ox, c[1][1] - oy);
            let (fx, fy) = (c[3][0] - ox, c[3][1] - oy);
            let l2 = ex * ex + ey * ey;
            let s = ((u - ox) * ex + (v - oy) * ey) / l2;
            let t = ((u - ox) * fx + (v - oy) * fy) / (fx * fx + fy * fy);
            if (0.0..1.0).contains(&s) && (0.0..1.0).contains(&t) {
                let n = bits.cells as f64;
                let col = (s * n).floor() as i64;
                let row = (t * n).floor() as i64;
                return Some(if bits.is_black(row, col) {
                    black
                } else {
                    white
                });
            }
        }
        Some(white)
    }
}

impl Card {
    /// The card's colour at a table point, `None` off the card.
    pub fn colour(&self, x: f64, y: f64) -> Option<Rgb> {
        let (dx, dy) = (x - self.centre[0], y - self.centre[1]);
        if dx.abs() > CARD_HALF_MM || dy.abs() > CARD_HALF_MM {
            return None;
        }
        let half = MARKER_MM / 2.0;
        let cell = MARKER_MM / self.bits.cells as f64;
        let col = ((dx + half) / cell).floor() as i64;
        let row = ((half - dy) / cell).floor() as i64;
        let inside = dx.abs() < half && dy.abs() < half;
        Some(if inside && self.bits.is_black(row, col) {
            srgb(14, 14, 16)
        } else {
            srgb(232, 232, 226)
        })
    }
}

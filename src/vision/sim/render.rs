//! The ray caster: for each pixel, jittered sub-pixel samples are cast through the camera
//! model into the world, the nearest surface along the ray wins (so a miniature hides its
//! base, a base hides the mat, a held board hides the table), and the surface is shaded.
//! Output is linear light, before any camera fault.

use super::texture::{Rgb, add, inside, mix, scale, smoothstep, srgb};
use super::world::{Mini, Ship, World, obstacle_colour, token_colour};
use crate::geometry::polygon::segment_distance;
use crate::vision::camera::{Camera, Ray};
use crate::vision::rng::{hash3, unit};
use nalgebra::Vector3;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A linear-light RGB image, row-major, 3 floats per pixel.
pub struct LinearImage {
    pub width: u32,
    pub height: u32,
    pub data: Vec<f32>,
}

/// What a ray hit first.
enum Hit {
    Ground,
    BaseTop(usize),
    BaseWall(Vector3<f64>),
    Peg,
    Mini(usize),
    Hand,
    Board,
}

/// Renders the world as `camera` sees it with `ss` x `ss` jittered samples per pixel.
pub fn render(world: &World, camera: &Camera, ss: u32, seed: u64) -> LinearImage {
    let (w, h) = (camera.width() as usize, camera.height() as usize);
    let caster = camera.ray_caster();
    const BLOCK: usize = 8;
    let blocks = h.div_ceil(BLOCK);
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut parts: Vec<(usize, Vec<f32>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let b = next.fetch_add(1, Ordering::Relaxed);
                        if b >= blocks {
                            break;
                        }
                        let rows = (b * BLOCK)..((b + 1) * BLOCK).min(h);
                        let mut buf = Vec::with_capacity(rows.len() * w * 3);
                        for y in rows {
                            for x in 0..w {
                                let c = pixel(world, &caster, x, y, ss, seed);
                                buf.extend_from_slice(&c);
                            }
                        }
                        done.push((b, buf));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|t| t.join().unwrap_or_default())
            .collect()
    });
    parts.sort_by_key(|p| p.0);
    let data: Vec<f32> = parts.into_iter().flat_map(|p| p.1).collect();
    LinearImage {
        width: w as u32,
        height: h as u32,
        data,
    }
}

fn pixel(
    world: &World,
    caster: &crate::vision::camera::RayCaster,
    x: usize,
    y: usize,
    ss: u32,
    seed: u64,
) -> Rgb {
    let mut acc = [0.0f32; 3];
    let n = f64::from(ss);
    for sy in 0..ss {
        for sx in 0..ss {
            let hsh = hash3(seed, x as i64, y as i64, i64::from(sy * ss + sx));
            let jx = unit(hsh);
            let jy = unit(hsh.rotate_left(32));
            let u = x as f64 - 0.5 + (f64::from(sx) + jx) / n;
            let v = y as f64 - 0.5 + (f64::from(sy) + jy) / n;
            let c = trace(world, &caster.ray(u, v));
            for k in 0..3 {
                acc[k] += c[k];
            }
        }
    }
    let inv = 1.0 / (n * n) as f32;
    [acc[0] * inv, acc[1] * inv, acc[2] * inv]
}

fn at(r: &Ray, t: f64) -> Vector3<f64> {
    r.origin + r.dir * t
}

/// Nearest t in (0, limit) where the ray enters the mini's implicit surface.
fn hit_mini(m: &Mini, r: &Ray, limit: f64) -> Option<f64> {
    if r.dir.z.abs() < 1e-9 {
        return None;
    }
    let t_a = (m.centre.z + m.hz - r.origin.z) / r.dir.z;
    let t_b = (m.centre.z - m.hz - r.origin.z) / r.dir.z;
    let (t0, t1) = (t_a.min(t_b).max(0.0), t_a.max(t_b).min(limit));
    if t0 >= t1 {
        return None;
    }
    let (p0, p1) = (at(r, t0), at(r, t1));
    if segment_distance([m.centre.x, m.centre.y], [p0.x, p0.y], [p1.x, p1.y]) > m.radius {
        return None;
    }
    let steps = 40;
    let dt = (t1 - t0) / f64::from(steps);
    let mut prev = t0;
    for i in 0..=steps {
        let t = t0 + dt * f64::from(i);
        if m.field(at(r, t)) <= 1.0 {
            if i == 0 {
                return Some(t);
            }
            let (mut lo, mut hi) = (prev, t);
            for _ in 0..12 {
                let mid = 0.5 * (lo + hi);
                if m.field(at(r, mid)) <= 1.0 {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            return Some(hi);
        }
        prev = t;
    }
    None
}

/// Entry of the ray into the base prism (square plus guides, 0 <= z <= height): (t, wall
/// normal in the ship frame, or None for the top face).
fn hit_base(s: &Ship, r: &Ray, limit: f64) -> Option<(f64, Option<[f64; 2]>)> {
    if r.dir.z >= 0.0 {
        return None;
    }
    let t_top = (s.height - r.origin.z) / r.dir.z;
    let t_bot = (-r.origin.z / r.dir.z).min(limit);
    if t_top >= t_bot {
        return None;
    }
    let a = at(r, t_top);
    let b = at(r, t_bot);
    let (ax, ay) = s.to_ship(a.x, a.y);
    let (bx, by) = s.to_ship(b.x, b.y);
    let (dx, dy) = (bx - ax, by - ay);
    let mut best: Option<(f64, Option<[f64; 2]>)> = None;
    for rect in &s.rects {
        // Slab clipping of the segment s in [0, 1] against the rectangle.
        let (mut s0, mut s1) = (0.0f64, 1.0f64);
        let mut normal: Option<[f64; 2]> = None;
        let mut ok = true;
        for (p, d, lo, hi, nlo, nhi) in [
            (ax, dx, rect[0], rect[2], [-1.0, 0.0], [1.0, 0.0]),
            (ay, dy, rect[1], rect[3], [0.0, -1.0], [0.0, 1.0]),
        ] {
            if d.abs() < 1e-12 {
                if p < lo || p > hi {
                    ok = false;
                    break;
                }
                continue;
            }
            let (mut e, mut x) = ((lo - p) / d, (hi - p) / d);
            let mut n = nlo;
            if e > x {
                std::mem::swap(&mut e, &mut x);
                n = nhi;
            }
            if e > s0 {
                s0 = e;
                normal = Some(n);
            }
            s1 = s1.min(x);
        }
        if !ok || s0 > s1 {
            continue;
        }
        let t = t_top + s0 * (t_bot - t_top);
        if best.is_none_or(|(bt, _)| t < bt) {
            best = Some((t, normal));
        }
    }
    best
}

/// Ray against the vertical peg cylinder from the base top to the mini's centre.
fn hit_peg(s: &Ship, r: &Ray, limit: f64) -> Option<f64> {
    let (ox, oy) = (r.origin.x - s.centre[0], r.origin.y - s.centre[1]);
    let (dx, dy) = (r.dir.x, r.dir.y);
    let a = dx * dx + dy * dy;
    if a < 1e-12 {
        return None;
    }
    let b = 2.0 * (ox * dx + oy * dy);
    let c = ox * ox + oy * oy - s.peg_radius * s.peg_radius;
    let disc = b * b - 4.0 * a * c;
    if disc < 0.0 {
        return None;
    }
    let t = (-b - disc.sqrt()) / (2.0 * a);
    if t <= 0.0 || t >= limit {
        return None;
    }
    let z = r.origin.z + t * r.dir.z;
    (z >= s.height && z <= s.mini.centre.z).then_some(t)
}

fn mini_normal(m: &Mini, p: Vector3<f64>) -> Vector3<f64> {
    let e = 0.05;
    let g = Vector3::new(
        m.field(p + Vector3::new(e, 0.0, 0.0)) - m.field(p - Vector3::new(e, 0.0, 0.0)),
        m.field(p + Vector3::new(0.0, e, 0.0)) - m.field(p - Vector3::new(0.0, e, 0.0)),
        m.field(p + Vector3::new(0.0, 0.0, e)) - m.field(p - Vector3::new(0.0, 0.0, e)),
    );
    let n = g.norm();
    if n > 0.0 { g / n } else { Vector3::z() }
}

/// How much direct light reaches a point: soft shadows of the miniatures (and the hand)
/// cast along the key light.
fn shadow(world: &World, p: Vector3<f64>) -> f64 {
    let key = world.light.key;
    let mut lit = 1.0;
    let mut occluder = |m: &Mini| {
        if m.centre.z <= p.z {
            return;
        }
        let k = (m.centre.z - p.z) / key.z;
        let (qx, qy) = (p.x + key.x * k, p.y + key.y * k);
        if (qx - m.centre.x).abs() > m.radius * 1.3 || (qy - m.centre.y).abs() > m.radius * 1.3 {
            return;
        }
        let f = m.footprint(qx, qy);
        // Penumbra grows with height above the receiver.
        let soft = 0.08 + 0.004 * (m.centre.z - p.z);
        lit *= 1.0 - world.light.shadow * smoothstep(1.0 + soft, 1.0 - soft, f);
    };
    for s in &world.ships {
        occluder(&s.mini);
    }
    if let Some(h) = &world.hand {
        occluder(h);
    }
    lit
}

/// How shiny a surface is: strength and exponent of its lamp highlight.
#[derive(Clone, Copy)]
struct Gloss(f64, f64);

const MATTE_PAPER: Gloss = Gloss(0.015, 8.0);
const CARDBOARD: Gloss = Gloss(0.06, 60.0);
const NEOPRENE: Gloss = Gloss(0.015, 40.0);
const VARNISH: Gloss = Gloss(0.04, 40.0);

/// A base's top at a ship-frame point (mm): the black rim, or the token inside it.
pub fn base_top_colour(s: &Ship, x: f64, y: f64) -> Rgb {
    let half = s.width / 2.0 - s.rim;
    if x.abs() > half || y.abs() > half {
        srgb(22, 22, 24)
    } else {
        token_colour(s, x, y)
    }
}

/// The ground's colour at a table point (mat, obstacle token, marker card, table), before
/// light and gloss.
pub fn ground_colour(world: &World, x: f64, y: f64) -> Rgb {
    ground_albedo(world, x, y).0
}

fn ground_albedo(world: &World, x: f64, y: f64) -> (Rgb, Gloss) {
    for c in &world.cards {
        if let Some(col) = c.colour(x, y) {
            return (col, MATTE_PAPER);
        }
    }
    for item in &world.clutter {
        if let Some(col) = item.colour(x, y) {
            return (col, CARDBOARD);
        }
    }
    let in_play = x >= 0.0 && y >= 0.0 && x <= world.play[0] && y <= world.play[1];
    if in_play {
        for o in &world.obstacles {
            if x >= o.bbox[0]
                && x <= o.bbox[2]
                && y >= o.bbox[1]
                && y <= o.bbox[3]
                && inside(&o.outline, x, y)
            {
                return (obstacle_colour(o, x, y), CARDBOARD);
            }
        }
        (world.mat.colour(x, y, world.play), NEOPRENE)
    } else {
        (world.table.colour(x, y), VARNISH)
    }
}

/// The lamp's highlight on a horizontal surface at `p` seen along `r` (Blinn-Phong).
fn glare(world: &World, r: &Ray, p: Vector3<f64>, g: Gloss) -> Rgb {
    let l = (world.light.lamp - p).normalize();
    let h = (l - r.dir).normalize();
    let v = g.0 * h.z.max(0.0).powf(g.1) * world.light.level;
    [v as f32; 3]
}

/// The nearest surface along a ray: its distance (infinite when the ray sees nothing) and
/// what it is.
fn nearest(world: &World, r: &Ray) -> (f64, Hit) {
    let mut best_t = if r.dir.z < 0.0 {
        -r.origin.z / r.dir.z
    } else {
        f64::INFINITY
    };
    let mut hit = Hit::Ground;
    if let Some(b) = &world.board {
        let denom = r.dir.dot(&b.normal);
        if denom.abs() > 1e-9 {
            let t = (b.origin - r.origin).dot(&b.normal) / denom;
            if t > 0.0 && t < best_t {
                let p = at(r, t) - b.origin;
                if b.colour(p.dot(&b.ex), p.dot(&b.ey)).is_some() {
                    best_t = t;
                    hit = Hit::Board;
                }
            }
        }
    }
    if let Some(t) = world.hand.as_ref().and_then(|h| hit_mini(h, r, best_t)) {
        best_t = t;
        hit = Hit::Hand;
    }
    if r.dir.z < 0.0 {
        let top = world
            .ships
            .iter()
            .map(|s| s.mini.centre.z + s.mini.hz)
            .fold(0.0, f64::max);
        let t_top = ((top - r.origin.z) / r.dir.z).max(0.0);
        let a = at(r, t_top);
        let b = at(r, best_t.min(-r.origin.z / r.dir.z));
        for (i, s) in world.ships.iter().enumerate() {
            if segment_distance(s.centre, [a.x, a.y], [b.x, b.y]) > s.bound {
                continue;
            }
            if let Some(t) = hit_mini(&s.mini, r, best_t) {
                best_t = t;
                hit = Hit::Mini(i);
            }
            if let Some(t) = hit_peg(s, r, best_t) {
                best_t = t;
                hit = Hit::Peg;
            }
            if let Some((t, n)) = hit_base(s, r, best_t).filter(|(t, _)| *t < best_t) {
                best_t = t;
                hit = match n {
                    None => Hit::BaseTop(i),
                    Some(n) => {
                        let (x, y) = s.dir_to_table(n[0], n[1]);
                        Hit::BaseWall(Vector3::new(x, y, 0.0))
                    }
                };
            }
        }
    }
    (best_t, hit)
}

/// The distance along a ray to the first surface it meets (for visibility checks).
pub fn first_hit(world: &World, r: &Ray) -> f64 {
    nearest(world, r).0
}

/// The colour seen along one ray.
pub fn trace(world: &World, r: &Ray) -> Rgb {
    let (best_t, hit) = nearest(world, r);
    if !best_t.is_finite() {
        return [0.0; 3];
    }
    let p = at(r, best_t);
    let centre = world.centre();
    let light = world.light.at(p.x, p.y, centre);
    let key = world.light.key;
    match hit {
        Hit::Ground => {
            let (col, gloss) = ground_albedo(world, p.x, p.y);
            let sh = shadow(world, p);
            add(scale(col, light * sh), scale(glare(world, r, p, gloss), sh))
        }
        Hit::BaseTop(i) => {
            let s = &world.ships[i];
            let (x, y) = s.to_ship(p.x, p.y);
            let col = base_top_colour(s, x, y);
            let sh = shadow(world, p);
            add(
                scale(col, light * sh),
                scale(glare(world, r, p, CARDBOARD), sh),
            )
        }
        Hit::BaseWall(n) => {
            let lambert = n.dot(&key).max(0.0);
            scale(srgb(18, 18, 20), light * (0.35 + 0.9 * lambert))
        }
        Hit::Peg => scale(srgb(150, 150, 150), light * 0.6),
        Hit::Mini(i) => {
            let m = &world.ships[i].mini;
            shade_blob(m, p, light, key, 1.5)
        }
        Hit::Hand => match &world.hand {
            Some(m) => shade_blob(m, p, light, key, 25.0),
            None => [0.0; 3],
        },
        Hit::Board => match &world.board {
            Some(b) => {
                let q = p - b.origin;
                let col = b.colour(q.dot(&b.ex), q.dot(&b.ey)).unwrap_or([0.0; 3]);
                scale(col, light * (0.55 + 0.45 * b.normal.dot(&key).abs()))
            }
            None => [0.0; 3],
        },
    }
}

/// Shades a blob (miniature or hand): Lambert plus a little specular, with painted panel
/// detail for miniatures (`detail_mm` small) and smooth skin for the hand.
fn shade_blob(m: &Mini, p: Vector3<f64>, light: f64, key: Vector3<f64>, detail_mm: f64) -> Rgb {
    let n = mini_normal(m, p);
    let lambert = n.dot(&key).max(0.0);
    let (s, c) = m.heading.sin_cos();
    let (dx, dy) = (p.x - m.centre.x, p.y - m.centre.y);
    let (lx, ly) = (c * dx + s * dy, -s * dx + c * dy);
    let panel = super::texture::fbm(m.seed, lx, ly, detail_mm, 3, 0.5);
    let mut col = scale(m.colour, 0.75 + 0.45 * panel);
    if detail_mm < 5.0 {
        // Panel lines on a grid in the model's frame, a painted stripe, engines at the rear.
        let (gx, gy) = ((lx / 4.0).fract().abs(), (ly / 5.5).fract().abs());
        if gx < 0.06 || gy < 0.05 {
            col = scale(col, 0.6);
        }
        if panel > 0.7 {
            col = mix(col, srgb(55, 55, 60), 0.8);
        }
        if (ly / m.b).abs() < 0.12 && lx > 0.0 {
            col = mix(col, srgb(150, 40, 30), 0.6);
        }
        if lx < -0.8 * m.a && (ly / m.b).abs() < 0.35 {
            col = srgb(255, 190, 120);
            return scale(col, light * 0.9);
        }
    }
    // Rim darkening and a soft highlight sell the volume.
    let view_up = n.z.max(0.0);
    let h = (n + key).normalize().z.max(0.0).powf(24.0);
    let mut out = scale(col, light * (0.2 + 0.8 * lambert) * (0.6 + 0.4 * view_up));
    out = super::texture::add(out, scale([1.0, 1.0, 1.0], 0.25 * h * light));
    out
}

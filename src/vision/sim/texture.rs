//! Procedural textures in table millimetres: value noise, fractal noise and the colour
//! helpers the surfaces are painted with. Everything is a pure function of (seed, point),
//! so any pixel can be rendered on any thread in any order.

use crate::vision::rng::{hash2, unit};

/// Linear RGB, 0..1 per channel.
pub type Rgb = [f32; 3];

pub fn rgb(r: f64, g: f64, b: f64) -> Rgb {
    [r as f32, g as f32, b as f32]
}

/// An sRGB colour given as 0..255 bytes, converted to linear light.
pub fn srgb(r: u8, g: u8, b: u8) -> Rgb {
    let f = |c: u8| {
        let c = f32::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    [f(r), f(g), f(b)]
}

pub fn mix(a: Rgb, b: Rgb, t: f64) -> Rgb {
    let t = t.clamp(0.0, 1.0) as f32;
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

pub fn scale(a: Rgb, s: f64) -> Rgb {
    let s = s as f32;
    [a[0] * s, a[1] * s, a[2] * s]
}

pub fn add(a: Rgb, b: Rgb) -> Rgb {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn smooth(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

/// Value noise in [0, 1) with unit cell size.
pub fn value_noise(seed: u64, x: f64, y: f64) -> f64 {
    let (xf, yf) = (x.floor(), y.floor());
    let (xi, yi) = (xf as i64, yf as i64);
    let (tx, ty) = (smooth(x - xf), smooth(y - yf));
    let v00 = unit(hash2(seed, xi, yi));
    let v10 = unit(hash2(seed, xi + 1, yi));
    let v01 = unit(hash2(seed, xi, yi + 1));
    let v11 = unit(hash2(seed, xi + 1, yi + 1));
    let a = v00 + (v10 - v00) * tx;
    let b = v01 + (v11 - v01) * tx;
    a + (b - a) * ty
}

/// Fractal (fBm) value noise in about [0, 1): `octaves` layers, the first with cells of
/// `scale` mm, each next one half the size and `gain` the weight.
pub fn fbm(seed: u64, x: f64, y: f64, scale: f64, octaves: u32, gain: f64) -> f64 {
    let (mut sum, mut norm, mut amp, mut freq) = (0.0, 0.0, 1.0, 1.0 / scale);
    for o in 0..octaves {
        // Rotate each octave a little so the grid does not show.
        let (s, c) = (0.5 * f64::from(o)).sin_cos();
        let (rx, ry) = (c * x - s * y, s * x + c * y);
        sum += amp * value_noise(seed.wrapping_add(u64::from(o) * 7919), rx * freq, ry * freq);
        norm += amp;
        amp *= gain;
        freq *= 2.03;
    }
    sum / norm
}

/// A smooth step from 0 at `e0` to 1 at `e1`.
pub fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    smooth(((x - e0) / (e1 - e0)).clamp(0.0, 1.0))
}

/// Converts hue (0..1), saturation and value to linear RGB.
pub fn hsv(h: f64, s: f64, v: f64) -> Rgb {
    let h = h.rem_euclid(1.0) * 6.0;
    let i = h.floor();
    let f = h - i;
    let (p, q, t) = (v * (1.0 - s), v * (1.0 - s * f), v * (1.0 - s * (1.0 - f)));
    let (r, g, b) = match i as i32 {
        0 => (v, t, p),
        1 => (q, v, p),
        2 => (p, v, t),
        3 => (p, q, v),
        4 => (t, p, v),
        _ => (v, p, q),
    };
    let lin = |c: f64| c.powf(2.2);
    rgb(lin(r), lin(g), lin(b))
}

/// Point in polygon (even-odd), for outlines in mm.
pub fn inside(poly: &[[f64; 2]], x: f64, y: f64) -> bool {
    let mut inside = false;
    let n = poly.len();
    let mut j = n - 1;
    for i in 0..n {
        let (a, b) = (poly[i], poly[j]);
        if (a[1] > y) != (b[1] > y) && x < (b[0] - a[0]) * (y - a[1]) / (b[1] - a[1]) + a[0] {
            inside = !inside;
        }
        j = i;
    }
    inside
}

/// Distance from a point to a closed polygon's boundary (mm).
pub fn edge_distance(poly: &[[f64; 2]], x: f64, y: f64) -> f64 {
    let mut best = f64::INFINITY;
    let n = poly.len();
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + 1) % n]);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len2 = dx * dx + dy * dy;
        let t = if len2 > 0.0 {
            (((x - a[0]) * dx + (y - a[1]) * dy) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (px, py) = (a[0] + t * dx - x, a[1] + t * dy - y);
        best = best.min(px * px + py * py);
    }
    best.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_bounded_and_continuous() {
        for i in 0..1000 {
            let x = f64::from(i) * 0.37;
            let v = fbm(3, x, 2.0 * x, 10.0, 5, 0.5);
            assert!((0.0..1.0).contains(&v));
            let w = fbm(3, x + 1e-4, 2.0 * x, 10.0, 5, 0.5);
            assert!((v - w).abs() < 1e-3);
        }
    }

    #[test]
    fn polygon_helpers() {
        let sq = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]];
        assert!(inside(&sq, 5.0, 5.0));
        assert!(!inside(&sq, 11.0, 5.0));
        assert!((edge_distance(&sq, 5.0, 2.0) - 2.0).abs() < 1e-12);
    }
}

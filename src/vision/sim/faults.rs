//! A real camera's faults applied to the ideal render: vignetting, optical blur, white
//! balance, sensor noise and 8-bit sRGB quantisation (JPEG comes at encoding). Without
//! these, every detector measured on the simulator would look better than it is.

use super::render::LinearImage;
use crate::vision::camera::Camera;
use crate::vision::rng::{Rng, hash3, normal_from};

/// Fault strengths drawn per image.
#[derive(Clone, Debug)]
pub struct Faults {
    pub vignetting: f64,
    pub blur_sigma_px: f64,
    pub gains: [f64; 3],
    pub read_noise: f64,
    pub shot_noise: f64,
    pub jpeg_quality: i32,
    pub seed: u64,
}

impl Faults {
    pub fn random(seed: u64, camera: &Camera) -> Faults {
        let mut rng = Rng::stream(seed, "faults");
        // Blur in pixels grows with resolution, but less than linearly: cameras with more
        // pixels also come with sharper lenses.
        let res_scale = (f64::from(camera.width()) / 1920.0).sqrt();
        Faults {
            vignetting: rng.range(0.15, 0.4),
            blur_sigma_px: rng.range(0.45, 0.85) * res_scale.max(0.6),
            gains: [rng.range(0.93, 1.07), 1.0, rng.range(0.93, 1.07)],
            read_noise: rng.range(0.8, 2.0),
            shot_noise: rng.range(0.03, 0.08),
            jpeg_quality: rng.int(85, 95) as i32,
            seed: rng.next_u64(),
        }
    }
}

fn gaussian_kernel(sigma: f64) -> Vec<f32> {
    let r = (3.0 * sigma).ceil().max(1.0) as i64;
    let k: Vec<f64> = (-r..=r)
        .map(|i| (-(i * i) as f64 / (2.0 * sigma * sigma)).exp())
        .collect();
    let s: f64 = k.iter().sum();
    k.iter().map(|v| (v / s) as f32).collect()
}

/// Separable Gaussian blur with clamped edges.
fn blur(img: &mut LinearImage, sigma: f64) {
    if sigma <= 0.05 {
        return;
    }
    let k = gaussian_kernel(sigma);
    let r = (k.len() / 2) as i64;
    let (w, h) = (img.width as i64, img.height as i64);
    let mut tmp = vec![0.0f32; img.data.len()];
    for y in 0..h {
        for x in 0..w {
            let mut acc = [0.0f32; 3];
            for (i, kv) in k.iter().enumerate() {
                let xx = (x + i as i64 - r).clamp(0, w - 1);
                let o = ((y * w + xx) * 3) as usize;
                for (c, a) in acc.iter_mut().enumerate() {
                    *a += kv * img.data[o + c];
                }
            }
            let o = ((y * w + x) * 3) as usize;
            tmp[o..o + 3].copy_from_slice(&acc);
        }
    }
    for y in 0..h {
        for x in 0..w {
            let mut acc = [0.0f32; 3];
            for (i, kv) in k.iter().enumerate() {
                let yy = (y + i as i64 - r).clamp(0, h - 1);
                let o = ((yy * w + x) * 3) as usize;
                for (c, a) in acc.iter_mut().enumerate() {
                    *a += kv * tmp[o + c];
                }
            }
            let o = ((y * w + x) * 3) as usize;
            img.data[o..o + 3].copy_from_slice(&acc);
        }
    }
}

fn to_srgb(v: f64) -> f64 {
    let v = v.clamp(0.0, 1.0);
    if v <= 0.003_130_8 {
        12.92 * v
    } else {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    }
}

/// Applies the faults and returns interleaved 8-bit RGB.
pub fn apply(mut img: LinearImage, camera: &Camera, f: &Faults) -> Vec<u8> {
    blur(&mut img, f.blur_sigma_px);
    let (w, h) = (img.width as usize, img.height as usize);
    let (cx, cy) = (camera.cx(), camera.cy());
    let rmax2 = (cx.max(w as f64 - cx)).powi(2) + (cy.max(h as f64 - cy)).powi(2);
    let mut out = vec![0u8; w * h * 3];
    for y in 0..h {
        for x in 0..w {
            let r2 = ((x as f64 - cx).powi(2) + (y as f64 - cy).powi(2)) / rmax2;
            let vig = 1.0 - f.vignetting * r2 * (1.0 - 0.3 * r2);
            for c in 0..3 {
                let o = (y * w + x) * 3 + c;
                let lin = f64::from(img.data[o]) * vig * f.gains[c];
                let v8 = to_srgb(lin) * 255.0;
                let sigma = (f.read_noise * f.read_noise
                    + f.shot_noise * 255.0 * lin.max(0.0) * 4.0)
                    .sqrt();
                let n = normal_from(hash3(f.seed, x as i64, y as i64, c as i64)) * sigma;
                out[o] = (v8 + n).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    out
}

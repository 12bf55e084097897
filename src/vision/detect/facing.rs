//! Which way a base faces. The black base is the same front and back; the token printed in
//! it is not: its front arc is shaded in the faction's colour (the rest of the token is
//! dark ship art and white lines). Of the four directions the fitted outline allows, the
//! one whose front wedge holds the most coloured token pixels wins; the margin over the
//! runner-up is the confidence.

use crate::vision::Camera;
use opencv::core::{Mat, Vec3b};
use opencv::prelude::*;

/// The chosen direction (index k: heading = angle + k * 90 deg) and how clearly it won
/// (0..1: 0 a tie, 1 only one wedge coloured).
#[derive(Clone, Copy, Debug)]
pub struct Facing {
    pub k: usize,
    pub confidence: f64,
    pub scores: [f64; 4],
}

/// Colourfulness of a pixel (sRGB max - min), 0..255.
fn chroma(p: Vec3b) -> f64 {
    let (mx, mn) = (
        p.0.iter().max().copied().unwrap_or(0),
        p.0.iter().min().copied().unwrap_or(0),
    );
    f64::from(mx - mn)
}

/// Scores the four directions of a base at `centre` with side-normal `angle` (radians),
/// token half width `half_token` (mm) on the plane `z`.
pub fn facing(
    frame: &Mat,
    camera: &Camera,
    centre: [f64; 2],
    angle: f64,
    half_token: f64,
    z: f64,
) -> Facing {
    let mut scores = [0.0f64; 4];
    let (rows, cols) = (frame.rows(), frame.cols());
    for (k, score) in scores.iter_mut().enumerate() {
        let fwd = angle + k as f64 * std::f64::consts::FRAC_PI_2;
        let (mut coloured, mut total) = (0.0, 0.0);
        // A polar grid over the wedge, clear of the arc lines at its edges and of the
        // corners (where a printed initiative disc may sit).
        for ri in 0..8 {
            let r = half_token * (0.3 + 0.65 * (ri as f64 + 0.5) / 8.0);
            for ai in 0..9 {
                let a = fwd + (-32.0 + 64.0 * ai as f64 / 8.0).to_radians();
                let p = [centre[0] + r * a.cos(), centre[1] + r * a.sin(), z];
                let Some(ip) = camera.project(p) else {
                    continue;
                };
                let (x, y) = (ip[0].round() as i32, ip[1].round() as i32);
                if x < 0 || y < 0 || x >= cols || y >= rows {
                    continue;
                }
                let Ok(px) = frame.at_2d::<Vec3b>(y, x) else {
                    continue;
                };
                total += 1.0;
                if chroma(*px) > 30.0 {
                    coloured += 1.0;
                }
            }
        }
        *score = if total > 0.0 { coloured / total } else { 0.0 };
    }
    let mut order = [0usize, 1, 2, 3];
    order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]));
    let (best, second) = (scores[order[0]], scores[order[1]]);
    Facing {
        k: order[0],
        confidence: if best > 0.0 {
            (best - second) / best
        } else {
            0.0
        },
        scores,
    }
}

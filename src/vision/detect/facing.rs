//! Which way a base faces. The black base is the same front and back; the token printed in
//! it is not. Two cues, the first that speaks clearly wins:
//! - the pilot's initiative, printed in an orange disc at the rear left corner of the
//!   token (2.0 ship tokens), compact and strongly saturated where visible;
//! - the front arc, shaded in the faction's colour (the rest of the token is dark ship art
//!   and white lines): the front wedge holding the most coloured pixels.
//!
//! The miniature often covers one or both; the margin between the best direction and the
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

/// The frame's pixel (nearest) where a table point appears; `None` off the frame.
fn pixel_at(frame: &Mat, camera: &Camera, p: [f64; 3]) -> Option<Vec3b> {
    let ip = camera.project(p)?;
    let (x, y) = (ip[0].round() as i32, ip[1].round() as i32);
    if x < 0 || y < 0 || x >= frame.cols() || y >= frame.rows() {
        return None;
    }
    frame.at_2d::<Vec3b>(y, x).ok().copied()
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
                let Some(px) = pixel_at(frame, camera, p) else {
                    continue;
                };
                total += 1.0;
                if chroma(px) > 30.0 {
                    coloured += 1.0;
                }
            }
        }
        *score = if total > 0.0 { coloured / total } else { 0.0 };
    }
    let disc = disc_scores(frame, camera, centre, angle, half_token, z);
    let mut dorder = [0usize, 1, 2, 3];
    dorder.sort_by(|a, b| disc[*b].total_cmp(&disc[*a]));
    if disc[dorder[0]] >= 0.35 && disc[dorder[1]] <= 0.4 * disc[dorder[0]] {
        return Facing {
            k: dorder[0],
            confidence: (disc[dorder[0]] - disc[dorder[1]]).min(1.0),
            scores,
        };
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

/// Orange of a printed initiative disc: hue 15-45 deg, strongly saturated, not dark.
fn is_disc_orange(p: Vec3b) -> bool {
    let [b, g, r] = p.0.map(f64::from);
    let (mx, mn) = (r.max(g).max(b), r.min(g).min(b));
    if mx < 110.0 || mx - mn < 0.6 * mx || r < g || g < b {
        return false;
    }
    // Hue between red and yellow: (g - b) / (r - b) from 0 (red) to 1 (yellow).
    let t = (g - b) / (r - b).max(1.0);
    (0.25..=0.75).contains(&t)
}

/// For each direction k, the share of orange pixels in the disc where the initiative is
/// printed if the base faces that way (rear left corner, 4.5 mm in from both edges).
fn disc_scores(
    frame: &Mat,
    camera: &Camera,
    centre: [f64; 2],
    angle: f64,
    half_token: f64,
    z: f64,
) -> [f64; 4] {
    let mut out = [0.0; 4];
    for (k, o) in out.iter_mut().enumerate() {
        let h = angle + k as f64 * std::f64::consts::FRAC_PI_2;
        let (f, r) = ([h.cos(), h.sin()], [h.sin(), -h.cos()]);
        let (x, y) = (-(half_token - 4.5), -(half_token - 4.5));
        let c = [
            centre[0] + x * r[0] + y * f[0],
            centre[1] + x * r[1] + y * f[1],
        ];
        let (mut hit, mut total) = (0.0, 0.0);
        for i in -2..=2 {
            for j in -2..=2 {
                let (dx, dy) = (f64::from(i) * 0.9, f64::from(j) * 0.9);
                if dx.hypot(dy) > 2.2 {
                    continue;
                }
                let Some(p) = pixel_at(frame, camera, [c[0] + dx, c[1] + dy, z]) else {
                    continue;
                };
                total += 1.0;
                if is_disc_orange(p) {
                    hit += 1.0;
                }
            }
        }
        *o = if total > 0.0 { hit / total } else { 0.0 };
    }
    out
}

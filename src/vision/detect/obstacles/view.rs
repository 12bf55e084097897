//! The mat seen from above at a coarse scale, quickly: the remap is built from exact
//! projections on a sparse grid and interpolated in between (the lens and the perspective are
//! smooth over a few centimetres), and the ships' footprint on that view (bases and the
//! miniatures above them, which a tilted camera shows displaced).

use crate::models::Models;
use crate::scene::ShipSpec;
use crate::vision::calibrate::image_to_table;
use crate::vision::detect::ortho::OrthoView;
use crate::vision::{Camera, VisionError};
use opencv::core::{BORDER_CONSTANT, CV_8UC1, CV_32FC1, Mat, Point, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use std::sync::Mutex;

/// Grid step (view pixels) of the exact projections.
const STEP: i32 = 8;

/// The last maps made, for the next frame of the same camera.
static CACHE: Mutex<Option<(OrthoView, Camera, Mat, Mat)>> = Mutex::new(None);

/// The camera-frame remap of a view: `(map_x, map_y)`, -1 where the camera does not see.
/// Kept for the next call with the same view and camera.
pub fn maps(view: &OrthoView, camera: &Camera) -> Result<(Mat, Mat), VisionError> {
    if let Ok(cache) = CACHE.lock()
        && let Some((v, c, mx, my)) = cache.as_ref()
        && v == view
        && c == camera
    {
        return Ok((mx.try_clone()?, my.try_clone()?));
    }
    let (mx, my) = make_maps(view, camera)?;
    if let Ok(mut cache) = CACHE.lock() {
        *cache = Some((*view, camera.clone(), mx.try_clone()?, my.try_clone()?));
    }
    Ok((mx, my))
}

fn make_maps(view: &OrthoView, camera: &Camera) -> Result<(Mat, Mat), VisionError> {
    let (w, h) = (view.width, view.height);
    let (gw, gh) = (w / STEP + 2, h / STEP + 2);
    let camera = camera.point_projector();
    let grid: Vec<Option<[f64; 2]>> = (0..gh)
        .flat_map(|j| (0..gw).map(move |i| (i, j)))
        .map(|(i, j)| {
            let t = view.to_table(f64::from(i * STEP), f64::from(j * STEP));
            camera.project([t[0], t[1], view.z_mm])
        })
        .collect();
    let mut map_x = Mat::new_rows_cols_with_default(h, w, CV_32FC1, Scalar::all(-1.0))?;
    let mut map_y = Mat::new_rows_cols_with_default(h, w, CV_32FC1, Scalar::all(-1.0))?;
    for r in 0..h {
        let (j, fy) = (r / STEP, f64::from(r % STEP) / f64::from(STEP));
        let rx = map_x.at_row_mut::<f32>(r)?;
        let mut ry_vals = vec![-1.0f32; w as usize];
        for c in 0..w {
            let (i, fx) = (c / STEP, f64::from(c % STEP) / f64::from(STEP));
            let at = |ii: i32, jj: i32| grid[(jj * gw + ii) as usize];
            let p = match (at(i, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)) {
                (Some(a), Some(b), Some(cc), Some(d)) => Some([0, 1].map(|k| {
                    (a[k] * (1.0 - fx) + b[k] * fx) * (1.0 - fy)
                        + (cc[k] * (1.0 - fx) + d[k] * fx) * fy
                })),
                _ => {
                    let t = view.to_table(f64::from(c), f64::from(r));
                    camera.project([t[0], t[1], view.z_mm])
                }
            };
            if let Some(p) = p
                && p[0].is_finite()
                && p[1].is_finite()
            {
                rx[c as usize] = p[0] as f32;
                ry_vals[c as usize] = p[1] as f32;
            }
        }
        map_y.at_row_mut::<f32>(r)?.copy_from_slice(&ry_vals);
    }
    Ok((map_x, map_y))
}

/// `frame` remapped through `maps` (black where unseen).
pub fn render(frame: &Mat, maps: &(Mat, Mat)) -> Result<Mat, VisionError> {
    let mut out = Mat::default();
    imgproc::remap(
        frame,
        &mut out,
        &maps.0,
        &maps.1,
        imgproc::INTER_LINEAR,
        BORDER_CONSTANT,
        Scalar::all(0.0),
    )?;
    Ok(out)
}

/// 255 where a ship's base or miniature may be seen (generously), else 0.
pub fn ship_mask(
    view: &OrthoView,
    camera: &Camera,
    ships: &[ShipSpec],
    models: &Models,
) -> Result<Mat, VisionError> {
    let mut mask =
        Mat::new_rows_cols_with_default(view.height, view.width, CV_8UC1, Scalar::all(0.0))?;
    for s in ships {
        let half = models.bases.get(s.size).width_mm / 2.0;
        if !(half.is_finite() && s.x.is_finite() && s.y.is_finite()) {
            continue;
        }
        let radius = 1.2 * half * std::f64::consts::SQRT_2;
        let mut pts: Vec<[f64; 2]> = Vec::new();
        for k in 0..24 {
            let a = f64::from(k) * std::f64::consts::TAU / 24.0;
            let (dx, dy) = (radius * a.cos(), radius * a.sin());
            for z in [0.0, 50.0] {
                let seen = camera
                    .project([s.x + dx, s.y + dy, z])
                    .and_then(|px| image_to_table(camera, px, 0.0));
                if let Some(t) = seen {
                    pts.push(t);
                }
            }
        }
        let hull: Vector<Point> = pts
            .iter()
            .map(|t| {
                let p = view.to_pixel(t[0], t[1]);
                Point::new(p[0].round() as i32, p[1].round() as i32)
            })
            .collect();
        if hull.len() < 3 {
            continue;
        }
        let mut convex: Vector<Point> = Vector::new();
        imgproc::convex_hull(&hull, &mut convex, false, true)?;
        imgproc::fill_convex_poly(&mut mask, &convex, Scalar::all(255.0), imgproc::LINE_8, 0)?;
    }
    Ok(mask)
}

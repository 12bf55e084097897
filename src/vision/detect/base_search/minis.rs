//! Where miniatures hide the base tops: the grey-white mask of their bodies, the bodies
//! gathered from it, what they stand on, and how tinted a region is.

use super::Gradients;
use crate::vision::VisionError;
use crate::vision::components::Components;
use crate::vision::cv::disc_kernel;
use crate::vision::detect::ortho::OrthoView;
use opencv::core::Mat;
use opencv::imgproc;
use opencv::prelude::*;

/// A miniature's body in the orthophoto: brighter than this (sRGB max channel), less
/// saturated than this (chroma over max), and the margin grown around it (px = mm).
/// (Tried on 219 rendered bases: a value limit of 90-130 hid the token's own light parts.)
const MINI_MIN_VALUE: f64 = 150.0;
const MINI_MAX_SATURATION: f64 = 0.3;
const MINI_MARGIN_PX: i32 = 3;

/// The mean chroma (over max) of the pixels of `ortho` (in `view`) inside `ring` (table
/// mm) brighter than `min_value` (sRGB max channel) and no more saturated than a
/// miniature's body (`MINI_MAX_SATURATION`); 1 where none is.
pub fn mean_chroma(
    ortho: &Mat,
    view: &OrthoView,
    ring: &[[f64; 2]],
    min_value: f64,
) -> Result<f64, VisionError> {
    let px: Vec<[f64; 2]> = ring.iter().map(|p| view.to_pixel(p[0], p[1])).collect();
    let [x0, y0, x1, y1] = crate::geometry::polygon::ring_bounds(&px);
    let (mut n, mut sum) = (0usize, 0.0);
    for r in (y0.floor().max(0.0) as i32)..=(y1.ceil() as i32).min(view.height - 1) {
        let row = ortho.at_row::<opencv::core::Vec3b>(r)?;
        for c in (x0.floor().max(0.0) as i32)..=(x1.ceil() as i32).min(view.width - 1) {
            let Some(p) = row.get(c as usize) else {
                continue;
            };
            let mx = f64::from(p.0[0].max(p.0[1]).max(p.0[2]));
            let mn = f64::from(p.0[0].min(p.0[1]).min(p.0[2]));
            if mx > min_value
                && mx - mn < MINI_MAX_SATURATION * mx
                && crate::geometry::polygon::ring_contains(&px, [f64::from(c), f64::from(r)])
            {
                n += 1;
                sum += (mx - mn) / mx;
            }
        }
    }
    Ok(if n == 0 { 1.0 } else { sum / n as f64 })
}

/// How bright a bright blob's pixels are: grey level above this and 30 above their
/// surroundings (see `blobs_by_size`). [`mean_chroma`] of a blob counts the pixels whose
/// brightest channel is above it, which for a grey pixel is nearly its grey level.
pub const BLOB_MIN_VALUE: f64 = 70.0;

/// What lies around a miniature mask's body (see [`MiniMask::bodies`]).
#[derive(Clone, Copy, Debug)]
pub struct Ground {
    /// The share of it that is bright and coloured (brighter than `GROUND_MIN_VALUE`, with
    /// a chroma the mask's bodies do not have).
    pub coloured: f64,
}

/// How far around a body's box its ground is read (mm), and how bright a coloured ground
/// pixel is (sRGB max channel).
const GROUND_MM: f64 = 8.0;
const GROUND_MIN_VALUE: f64 = 90.0;
/// The least coloured share of a body's ground for it to start a search: a grey body on
/// bright colour is what the bright blobs miss. Seed 118's miniature on its yellow planet
/// stands on 0.46 and 0.74 (its two parts); on the ten real photos of checkerboards and
/// tags (`tests/detect_realdata.rs`) 80 of the 88 grey-white bodies no bright blob is near
/// (white paper between black squares) stand on none at all: searched, they added 13
/// squares, one of them confident; with this limit 7 are searched, adding one square, not
/// confident.
pub(super) const GROUND_COLOURED: f64 = 0.25;

/// A miniature's body as [`MiniMask::body_near`] finds it.
pub struct Body {
    /// The convex hull of its parts (table mm, in the mask's plane).
    pub hull: Vec<[f64; 2]>,
    pub area_mm2: f64,
}

/// Where the base tops are hidden by a miniature: bright and grey (printed colour is
/// saturated, the mat and the ship art dark), opened so that the token's thin white lines
/// do not count, grown by a margin for the miniature's soft edge and small painted details.
pub struct MiniMask {
    mask: Mat,
    view: OrthoView,
    /// The kernel the mask was grown by (see `Components::of`).
    kernel: Mat,
}

impl MiniMask {
    pub fn new(ortho: &Mat, view: &OrthoView) -> Result<MiniMask, VisionError> {
        let (w, h) = (view.width, view.height);
        let (value, satmax, grow) = (MINI_MIN_VALUE, MINI_MAX_SATURATION, MINI_MARGIN_PX);
        let mut mask = Mat::new_rows_cols_with_default(
            h,
            w,
            opencv::core::CV_8U,
            opencv::core::Scalar::all(0.0),
        )?;
        for r in 0..h {
            let src = ortho.at_row::<opencv::core::Vec3b>(r)?;
            let dst = mask.at_row_mut::<u8>(r)?;
            for (d, p) in dst.iter_mut().zip(src) {
                let mx = f64::from(p.0[0].max(p.0[1]).max(p.0[2]));
                let mn = f64::from(p.0[0].min(p.0[1]).min(p.0[2]));
                if mx > value && mx - mn < satmax * mx {
                    *d = 255;
                }
            }
        }
        let mut opened = Mat::default();
        imgproc::morphology_ex_def(&mask, &mut opened, imgproc::MORPH_OPEN, &disc_kernel(3)?)?;
        let mut grown = Mat::default();
        let kernel = disc_kernel(2 * grow + 1)?;
        imgproc::dilate_def(&opened, &mut grown, &kernel)?;
        Ok(MiniMask {
            mask: grown,
            view: *view,
            kernel,
        })
    }

    /// `grads` with what the miniatures cover taken out: a miniature's own outline
    /// outscores the little a half-hidden base shows of its own.
    pub fn off_minis(&self, grads: &Gradients) -> Result<Gradients, VisionError> {
        let mut out = Gradients {
            view: grads.view,
            g: grads.g.clone(),
        };
        let w = grads.view.width.max(0) as usize;
        for r in 0..grads.view.height {
            for (c, v) in self.mask.at_row::<u8>(r)?.iter().enumerate() {
                if *v > 0 {
                    let i = r as usize * w + c;
                    out.g[i] = [0.0, 0.0];
                }
            }
        }
        Ok(out)
    }

    /// The miniature's body about a bright blob: the parts of the mask whose centres lie
    /// within `reach_mm` of `blob`, as the convex hull of them all (table mm, in the mask's
    /// plane, where the raised body appears) and their area; None where no part is.
    pub fn body_near(&self, blob: [f64; 2], reach_mm: f64) -> Result<Option<Body>, VisionError> {
        use opencv::core::{Point, Rect, Vector};
        let v = &self.view;
        let c = v.to_pixel(blob[0], blob[1]);
        let reach = reach_mm / v.mm_per_px;
        // A window wide enough for a miniature whose centre is in reach.
        let half = (2.0 * reach + 40.0 / v.mm_per_px).ceil();
        let (x0, y0) = (
            ((c[0] - half).floor() as i32).clamp(0, v.width),
            ((c[1] - half).floor() as i32).clamp(0, v.height),
        );
        let (x1, y1) = (
            ((c[0] + half).ceil() as i32).clamp(0, v.width),
            ((c[1] + half).ceil() as i32).clamp(0, v.height),
        );
        if x1 - x0 < 3 || y1 - y0 < 3 {
            return Ok(None);
        }
        let window = Mat::roi(&self.mask, Rect::new(x0, y0, x1 - x0, y1 - y0))?.try_clone()?;
        let mut contours: Vector<Vector<Point>> = Vector::new();
        imgproc::find_contours(
            &window,
            &mut contours,
            imgproc::RETR_EXTERNAL,
            imgproc::CHAIN_APPROX_SIMPLE,
            Point::new(x0, y0),
        )?;
        let (mut points, mut area): (Vector<Point>, f64) = (Vector::new(), 0.0);
        for contour in &contours {
            let m = imgproc::moments(&contour, false)?;
            if m.m00 <= 0.0 {
                continue;
            }
            let centre = [m.m10 / m.m00, m.m01 / m.m00];
            if (centre[0] - c[0]).hypot(centre[1] - c[1]) > reach {
                continue;
            }
            area += m.m00;
            for p in &contour {
                points.push(p);
            }
        }
        if points.len() < 3 {
            return Ok(None);
        }
        let mut hull: Vector<Point> = Vector::new();
        imgproc::convex_hull(&points, &mut hull, false, true)?;
        let ring = hull
            .iter()
            .map(|p| v.to_table(f64::from(p.x), f64::from(p.y)))
            .collect();
        Ok(Some(Body {
            hull: ring,
            area_mm2: area * v.mm_per_px * v.mm_per_px,
        }))
    }

    /// The mask's parts of at least `min_area_mm2` (centre in table mm of the mask's plane,
    /// area in mm2): grey-white bodies, whatever lies around them.
    pub fn bodies(
        &self,
        ortho: &Mat,
        min_area_mm2: f64,
    ) -> Result<Vec<([f64; 2], f64, Ground)>, VisionError> {
        let comps = Components::of(&self.mask, &self.kernel)?;
        let px_area = self.view.mm_per_px * self.view.mm_per_px;
        let reach = (GROUND_MM / self.view.mm_per_px).ceil() as i32;
        let mut out = Vec::new();
        for i in 1..comps.count() {
            let area = f64::from(comps.area(i)?) * px_area;
            if area < min_area_mm2 {
                continue;
            }
            let [l, t, w, h] = comps.bounds(i)?;
            // The ground: what lies within reach of the body's box and is no body.
            let (mut n_all, mut n_coloured) = (0usize, 0usize);
            for r in (t - reach).max(0)..(t + h + reach).min(self.view.height) {
                let lab = comps.row(r)?;
                let row = ortho.at_row::<opencv::core::Vec3b>(r)?;
                for c in (l - reach).max(0)..(l + w + reach).min(self.view.width) {
                    let (Some(lb), Some(p)) = (lab.get(c as usize), row.get(c as usize)) else {
                        continue;
                    };
                    if lb != 0 {
                        continue;
                    }
                    n_all += 1;
                    let mx = f64::from(p.0[0].max(p.0[1]).max(p.0[2]));
                    let mn = f64::from(p.0[0].min(p.0[1]).min(p.0[2]));
                    if mx > GROUND_MIN_VALUE && mx - mn >= MINI_MAX_SATURATION * mx {
                        n_coloured += 1;
                    }
                }
            }
            let [cx, cy] = comps.centroid(i)?;
            out.push((
                self.view.to_table(cx, cy),
                area,
                Ground {
                    coloured: n_coloured as f64 / n_all.max(1) as f64,
                },
            ));
        }
        Ok(out)
    }

    /// The mean chroma (over max) of the miniature-like pixels of `ortho` (this mask's
    /// view) inside `ring` (table mm): a painted grey miniature's, however bright its
    /// stripes, against the tint of a pale patch of printed art (see `HiddenMini`).
    pub fn mean_chroma(&self, ortho: &Mat, ring: &[[f64; 2]]) -> Result<f64, VisionError> {
        mean_chroma(ortho, &self.view, ring, MINI_MIN_VALUE)
    }

    /// The orthophoto's view this mask covers.
    pub fn view(&self) -> &OrthoView {
        &self.view
    }

    /// Whether the base-top point `p` (table mm) is seen through a miniature.
    pub fn covers(&self, p: [f64; 2]) -> bool {
        let q = self.view.to_pixel(p[0], p[1]);
        let (c, r) = (q[0].round() as i32, q[1].round() as i32);
        self.mask.at_2d::<u8>(r, c).is_ok_and(|v| *v > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Point, Scalar};

    /// A 200 x 200 mm view at 1 mm per pixel, dark, with a grey disc (a miniature's body)
    /// and a pale blue-grey one (a planet's pale patch) of radius 20 mm.
    fn view_with_bodies() -> (Mat, OrthoView) {
        let view = OrthoView::new(0.0, 0.0, 200.0, 200.0, 3.0, 1.0);
        let mut img = Mat::new_rows_cols_with_default(
            view.height,
            view.width,
            opencv::core::CV_8UC3,
            Scalar::new(20.0, 15.0, 15.0, 0.0),
        )
        .expect("image");
        for (centre, bgr) in [
            (Point::new(50, 50), Scalar::new(190.0, 190.0, 195.0, 0.0)),
            (Point::new(150, 150), Scalar::new(200.0, 170.0, 150.0, 0.0)),
        ] {
            imgproc::circle(
                &mut img,
                centre,
                20,
                bgr,
                imgproc::FILLED,
                imgproc::LINE_8,
                0,
            )
            .expect("disc");
        }
        (img, view)
    }

    #[test]
    fn a_grey_body_is_gathered_and_a_tinted_one_told_by_its_chroma() {
        let (img, view) = view_with_bodies();
        let minis = MiniMask::new(&img, &view).expect("mask");
        // Both discs pass the mask (bright, chroma under 0.3): two bodies, each a disc of
        // radius 20 grown by the mask's margin.
        let bodies = minis.bodies(&img, 250.0).expect("bodies");
        assert_eq!(bodies.len(), 2, "{bodies:?}");
        let grey_at = view.to_table(50.0, 50.0);
        let body = minis
            .body_near(grey_at, 15.0)
            .expect("body")
            .expect("a body near the grey disc");
        let grown = std::f64::consts::PI * 23.0f64.powi(2);
        assert!(
            (body.area_mm2 - grown).abs() < 0.1 * grown,
            "{} mm2 against {grown:.0}",
            body.area_mm2
        );
        // The hull holds the disc's centre and not the other disc's.
        let pale_at = view.to_table(150.0, 150.0);
        assert!(crate::geometry::polygon::ring_contains(&body.hull, grey_at));
        assert!(!crate::geometry::polygon::ring_contains(
            &body.hull, pale_at
        ));
        // Nothing in reach of an empty spot.
        assert!(
            minis
                .body_near(view.to_table(150.0, 40.0), 15.0)
                .expect("body")
                .is_none()
        );
        let grey = minis.mean_chroma(&img, &body.hull).expect("chroma");
        let pale_body = minis
            .body_near(pale_at, 15.0)
            .expect("body")
            .expect("a body near the pale disc");
        let pale = minis.mean_chroma(&img, &pale_body.hull).expect("chroma");
        // Grey: (195 - 190) / 195; pale blue-grey: (200 - 150) / 200.
        assert!((grey - 5.0 / 195.0).abs() < 0.01, "{grey}");
        assert!((pale - 0.25).abs() < 0.01, "{pale}");
    }
}

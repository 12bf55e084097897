//! The blobs where miniatures may stand: bright compact regions of the rectified view, the
//! whole miniatures they are parts of, and the large ones that may be a hand.

use super::minis::{BLOB_MIN_VALUE, GROUND_COLOURED, MiniMask};
use super::to_grey;
use crate::geometry::polygon::{ring_hull, ring_roundness};
use crate::vision::components::Components;
use crate::vision::cv::disc_kernel;
use crate::vision::detect::ortho::OrthoView;
use crate::vision::{Camera, VisionError};
use opencv::core::{CV_32F, Mat};
use opencv::imgproc;
use opencv::prelude::*;

/// A bright blob or a grey body where a miniature may stand (see [`miniatures`]).
#[derive(Clone, Debug)]
pub struct Blob {
    /// Centre (table mm of the orthophoto's plane; a raised object appears displaced
    /// there, see [`under_blob`]).
    pub centre: [f64; 2],
    pub area_mm2: f64,
    /// The convex hull of its parts (table mm, same plane); empty for a grey body of the
    /// miniature mask, which [`MiniMask::body_near`] outlines.
    pub hull: Vec<[f64; 2]>,
}

/// Bright compact blobs in the orthophoto: the miniatures, which stand on pegs over their
/// bases' centres and are the most visible thing about a ship.
pub fn bright_blobs(greys: &Greys, view: &OrthoView) -> Result<Vec<Blob>, VisionError> {
    let mut blobs = blobs_by_size(greys, view, MINI_SURROUND_MM)?.0;
    // A miniature's painted stripe or a dark panel can split it in two; parts closer than
    // any two miniatures on touching small bases can be are one miniature.
    blobs.sort_by(|a, b| b.area_mm2.total_cmp(&a.area_mm2));
    let mut merged: Vec<Blob> = Vec::new();
    for b in blobs {
        match merged
            .iter_mut()
            .find(|m| (m.centre[0] - b.centre[0]).hypot(m.centre[1] - b.centre[1]) < MERGE_MM)
        {
            Some(m) => {
                let t = m.area_mm2 + b.area_mm2;
                m.centre = [
                    (m.centre[0] * m.area_mm2 + b.centre[0] * b.area_mm2) / t,
                    (m.centre[1] * m.area_mm2 + b.centre[1] * b.area_mm2) / t,
                ];
                m.area_mm2 = t;
                m.hull.extend(b.hull);
                m.hull = ring_hull(&m.hull);
            }
            None => merged.push(b),
        }
    }
    Ok(merged)
}

/// Where the miniatures are: the bright blobs, and the grey-white bodies of the
/// miniature mask that no bright blob is near and that stand on bright colour (see
/// `GROUND_COLOURED`). A grey miniature on bright art (a small ship on a yellow planet,
/// seed 118's s1 of the third rendered set, its base in plain view) is no brighter than
/// its surroundings and made no blob; its grey sets it apart from the art's colour. On the
/// four rendered sets these bodies add about one start in five tables and found that
/// base, within 0.3 mm, and nothing else.
pub fn miniatures(
    ortho: &Mat,
    greys: &Greys,
    view: &OrthoView,
    minis: &MiniMask,
) -> Result<Vec<Blob>, VisionError> {
    let mut out = bright_blobs(greys, view)?;
    for (c, area, ground) in minis.bodies(ortho, MIN_BLOB_AREA_MM2)? {
        // (A bigger grey body is no miniature: a pale hand, a sheet of paper.)
        if area <= MAX_BLOB_AREA_MM2
            && ground.coloured >= GROUND_COLOURED
            && !out
                .iter()
                .any(|b| (b.centre[0] - c[0]).hypot(b.centre[1] - c[1]) < MERGE_MM)
        {
            out.push(Blob {
                centre: c,
                area_mm2: area,
                hull: Vec::new(),
            });
        }
    }
    Ok(out)
}

/// The areas (mm2) of a bright blob that may be a miniature.
const MIN_BLOB_AREA_MM2: f64 = 250.0;
const MAX_BLOB_AREA_MM2: f64 = 9000.0;

/// A small bright disc is no miniature (none is round from above at this size): it is a
/// star's glow on the mat's art or a round cardboard token beside a ship (about 350 mm2).
/// Such blobs, whose hull is rounder than this and smaller than this (a disc 24 mm across),
/// are not searched. On the fixed and third rendered 1080p sets (42 tables) they were 187
/// blobs, none within 30 mm of a ship; large glowing stars among them made doubted bases
/// where no ship was (seeds 11 and 21), or a rival square beside a base (21 mm from seed
/// 114's s1, halving its confidence). Without them invented ships went from 3, 3 and 2 to
/// 1, 1 and 0 on the fixed, second and third sets, and no base was lost or moved. At 0.93
/// the sets gave the same, but two bare bases of the dark-miniature test's tables were
/// lost: their token's brightest part was such a disc.
const ROUND_BLOB_MAX_AREA_MM2: f64 = 450.0;
const ROUND_BLOB_MIN_ROUNDNESS: f64 = 0.96;

/// Surround widths (Gaussian sigma, mm) against which a miniature and a hand stand out.
const MINI_SURROUND_MM: f64 = 20.0;
const HAND_SURROUND_MM: f64 = 120.0;

/// Blob parts closer than this (mm) are one miniature.
const MERGE_MM: f64 = 22.0;

/// Bright blobs of a miniature's size, and the table-mm boxes of larger ones.
fn blobs_by_size(
    greys: &Greys,
    view: &OrthoView,
    surround_mm: f64,
) -> Result<(Vec<Blob>, Vec<[f64; 4]>), VisionError> {
    // The surroundings' level: a Gaussian of `surround_mm`, computed at a quarter size.
    let Greys { f, small } = greys;
    let (mut small_bg, mut bg) = (Mat::default(), Mat::default());
    imgproc::gaussian_blur_def(
        &small,
        &mut small_bg,
        opencv::core::Size::new(0, 0),
        surround_mm * QUARTER / view.mm_per_px,
    )?;
    imgproc::resize(
        &small_bg,
        &mut bg,
        f.size()?,
        0.0,
        0.0,
        imgproc::INTER_LINEAR,
    )?;
    let comps = bright_components(f, &bg, view)?;
    let px_area = view.mm_per_px * view.mm_per_px;
    let mut out = Vec::new();
    let mut large = Vec::new();
    for i in 1..comps.count() {
        let area = f64::from(comps.area(i)?) * px_area;
        if area > 12000.0 {
            let [l, t, w, h] = comps.bounds(i)?;
            let a = view.to_table(f64::from(l), f64::from(t + h));
            let b = view.to_table(f64::from(l + w), f64::from(t));
            large.push([a[0], a[1], b[0], b[1]]);
            continue;
        }
        if !(MIN_BLOB_AREA_MM2..=MAX_BLOB_AREA_MM2).contains(&area) {
            continue;
        }
        let hull = component_hull(&comps, i, view)?;
        if area < ROUND_BLOB_MAX_AREA_MM2 && ring_roundness(&hull) > ROUND_BLOB_MIN_ROUNDNESS {
            continue;
        }
        let [cx, cy] = comps.centroid(i)?;
        out.push(Blob {
            centre: view.to_table(cx, cy),
            area_mm2: area,
            hull,
        });
    }
    Ok((out, large))
}

/// Whole miniatures where the bright blobs are only their rims: a grey miniature (lit, a
/// little brighter than a dark mat) as wide as its 20 mm surround is brighter than that
/// surround only along its lit edge and its engine glow, so its blobs are a crescent off
/// to one side and a speck, neither a miniature's size (the dark-miniature tables of
/// tests/detect_ships.rs: a large ship's, 6100 mm2 seen whole, made blobs of 590 and 370
/// mm2, the nearer 56 mm from its base, and it was missed without a word). Measured
/// against the mat with the miniatures taken out (a grey opening wider than any of them,
/// then smoothed), such a miniature stands out whole. Returns each such region at least
/// twice the area of the blobs (`blobs`, by index) inside it, with those blobs; a region
/// with none is a miniature no blob saw.
pub fn filled_blobs(
    greys: &Greys,
    view: &OrthoView,
    blobs: &[Blob],
) -> Result<Vec<(Blob, Vec<usize>)>, VisionError> {
    // The mat's level, computed at a quarter size as in `blobs_by_size`.
    let Greys { f, small } = greys;
    let (mut opened, mut smooth, mut bg) = (Mat::default(), Mat::default(), Mat::default());
    let px = |mm: f64| mm * QUARTER / view.mm_per_px;
    let d = (px(2.0 * MAT_OPENING_RADIUS_MM).round() as i32) | 1;
    imgproc::morphology_ex_def(small, &mut opened, imgproc::MORPH_OPEN, &disc_kernel(d)?)?;
    imgproc::gaussian_blur_def(
        &opened,
        &mut smooth,
        opencv::core::Size::new(0, 0),
        px(MAT_SMOOTH_MM),
    )?;
    imgproc::resize(&smooth, &mut bg, f.size()?, 0.0, 0.0, imgproc::INTER_LINEAR)?;
    let comps = bright_components(f, &bg, view)?;
    let (w, h) = (view.width, view.height);
    let label_at = |p: [f64; 2]| -> i32 {
        let [c, r] = view.to_pixel(p[0], p[1]);
        let (c, r) = (c.round(), r.round());
        if !(c >= 0.0 && r >= 0.0 && c < f64::from(w) && r < f64::from(h)) {
            return 0;
        }
        comps.at(c as i32, r as i32)
    };
    // The region each blob lies in: its centre's, or, where its centre falls outside
    // it (a crescent's), its hull's first point that is in one.
    let owner: Vec<i32> = blobs
        .iter()
        .map(|b| {
            std::iter::once(b.centre)
                .chain(b.hull.iter().copied())
                .map(label_at)
                .find(|l| *l > 0)
                .unwrap_or(0)
        })
        .collect();
    let px_area = view.mm_per_px * view.mm_per_px;
    let mut out = Vec::new();
    for i in 1..comps.count() {
        let area = f64::from(comps.area(i)?) * px_area;
        if !(MIN_BLOB_AREA_MM2..=MAX_BLOB_AREA_MM2).contains(&area) {
            continue;
        }
        let parts: Vec<usize> = (0..blobs.len()).filter(|k| owner[*k] == i).collect();
        let seen: f64 = parts.iter().map(|k| blobs[*k].area_mm2).sum();
        if area < FILLED_MIN_GROWTH * seen {
            continue;
        }
        let [cx, cy] = comps.centroid(i)?;
        out.push((
            Blob {
                centre: view.to_table(cx, cy),
                area_mm2: area,
                hull: component_hull(&comps, i, view)?,
            },
            parts,
        ));
    }
    Ok(out)
}

/// The grey opening that takes the miniatures out of the mat (see `filled_blobs`) has
/// this radius (mm): a large ship's miniature is up to about 90 mm across.
const MAT_OPENING_RADIUS_MM: f64 = 50.0;
/// And its result is smoothed by a Gaussian of this sigma (mm).
const MAT_SMOOTH_MM: f64 = 10.0;
/// A whole miniature counts where it is at least this many times its blobs' area.
const FILLED_MIN_GROWTH: f64 = 2.0;

/// The scale at which the blob searches take the mat's level (it varies over tens of mm).
const QUARTER: f64 = 0.25;

/// An orthophoto's grey levels (32-bit float) and the same at [`QUARTER`] size, made once
/// per frame for the blob searches (`bright_blobs`, `filled_blobs`).
pub struct Greys {
    f: Mat,
    small: Mat,
}

impl Greys {
    pub fn of(ortho: &Mat) -> Result<Greys, VisionError> {
        let grey = to_grey(ortho)?;
        let (mut f, mut small) = (Mat::default(), Mat::default());
        grey.convert_to_def(&mut f, CV_32F)?;
        imgproc::resize(
            &f,
            &mut small,
            opencv::core::Size::new(0, 0),
            QUARTER,
            QUARTER,
            imgproc::INTER_AREA,
        )?;
        Ok(Greys { f, small })
    }
}

/// The bright regions of `f` against a background `bg` (as `blobs_by_size` marks them),
/// labelled.
fn bright_components(f: &Mat, bg: &Mat, view: &OrthoView) -> Result<Components, VisionError> {
    let (w, h) = (view.width, view.height);
    let mut mask =
        Mat::new_rows_cols_with_default(h, w, opencv::core::CV_8U, opencv::core::Scalar::all(0.0))?;
    for r in 0..h {
        let (fr, br) = (f.at_row::<f32>(r)?, bg.at_row::<f32>(r)?);
        let mr = mask.at_row_mut::<u8>(r)?;
        for ((m, v), b) in mr.iter_mut().zip(fr).zip(br) {
            if *v > BLOB_MIN_VALUE as f32 && v - b > 30.0 {
                *m = 255;
            }
        }
    }
    let mut opened = Mat::default();
    let kernel = disc_kernel(5)?;
    imgproc::morphology_ex_def(&mask, &mut opened, imgproc::MORPH_OPEN, &kernel)?;
    Components::of(&opened, &kernel)
}

/// The convex hull (table mm) of connected component `i`: of each row's first and last
/// pixel of it, which is all a convex hull needs.
fn component_hull(
    comps: &Components,
    i: i32,
    view: &OrthoView,
) -> Result<Vec<[f64; 2]>, VisionError> {
    let [l, t, w, h] = comps.bounds(i)?;
    let mut ends = Vec::new();
    for r in t..t + h {
        let row = comps.row(r)?;
        let mut span = (l.max(0)..(l + w).max(0)).filter(|c| row.get(*c as usize) == Some(i));
        let first = span.next();
        let last = span.next_back().or(first);
        for c in first.into_iter().chain(last) {
            ends.push(view.to_table(f64::from(c), f64::from(r)));
        }
    }
    Ok(ring_hull(&ends))
}

/// Where on the plane z = `base_z` lies the point under something seen at table point `p`
/// of that plane's orthophoto, if it really stands `height` mm above the base: the camera
/// sees it displaced away from the point below the camera.
pub fn under_blob(camera: &Camera, p: [f64; 2], base_z: f64, height: f64) -> [f64; 2] {
    let c = camera.centre();
    let (dz, up) = (c.z - base_z, height - base_z);
    if dz <= up + 1.0 {
        return p;
    }
    // p = q + up * (q - C) / (dz - up)  =>  q = C + (p - C) * (dz - up) / dz
    let k = (dz - up) / dz;
    [c.x + (p[0] - c.x) * k, c.y + (p[1] - c.y) * k]
}

/// Large bright regions (a hand or an arm over the table) as table-mm boxes grown by
/// 30 mm: what they cover is held by the tracker, not trusted.
pub fn occluders(
    ortho: &Mat,
    view: &OrthoView,
) -> Result<Vec<Vec<crate::geometry::Point>>, VisionError> {
    // Only the play area counts: the view's margin shows the table's bright surround, one
    // ring round the whole view whose box is the view itself; it would hide every ship
    // from the tracker, and a hand reaching in from the edge would merge with it.
    let mut inside = ortho.try_clone()?;
    let m = ((-view.x0) / view.mm_per_px).round().max(0.0) as i32;
    let (w, h) = (view.width, view.height);
    let strips = if m > 0 && 2 * m < w.min(h) {
        vec![
            opencv::core::Rect::new(0, 0, w, m),
            opencv::core::Rect::new(0, h - m, w, m),
            opencv::core::Rect::new(0, 0, m, h),
            opencv::core::Rect::new(w - m, 0, m, h),
        ]
    } else {
        Vec::new()
    };
    for r in strips {
        imgproc::rectangle(
            &mut inside,
            r,
            opencv::core::Scalar::all(0.0),
            imgproc::FILLED,
            imgproc::LINE_8,
            0,
        )?;
    }
    // A hand is far bigger than a miniature: against a 20 mm surround only its rim stands
    // out, so it is looked for against a wide one.
    let (_, large) = blobs_by_size(&Greys::of(&inside)?, view, HAND_SURROUND_MM)?;
    Ok(large
        .into_iter()
        .map(|[x0, y0, x1, y1]| {
            let m = 30.0;
            vec![
                crate::geometry::Point::new(x0 - m, y0 - m),
                crate::geometry::Point::new(x1 + m, y0 - m),
                crate::geometry::Point::new(x1 + m, y1 + m),
                crate::geometry::Point::new(x0 - m, y1 + m),
            ]
        })
        .collect())
}

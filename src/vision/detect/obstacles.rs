//! Obstacles by their outlines (issue 5, item 3). In a coarse top-down view of the play
//! area, whatever differs from the bare mat (from a photograph of the empty table when there
//! is one, else from a wide median of the view) and is not a ship forms regions of
//! plausible size (`segment`); each region is matched against the standard outlines by
//! chamfer distance over a full turn (`coarse`), and the best few are fitted to the edges
//! of the camera frame itself to a fraction of a pixel (`refine`). Without a background a
//! token may be one region with the art it touches: such a region is split where it
//! narrows, or else into its grey and coloured parts (`segment`). A region no standard
//! outline fits is reported as its measured polygon when a background frame vouches for it.

mod coarse;
mod refine;
mod segment;
mod shape;
mod view;

use super::memory::Cells;
use crate::geometry::PlayArea;
use crate::geometry::polygon::{ring_bounds, ring_contains, ring_mean};
use crate::models::Models;
use crate::scene::{ObstacleSpec, Quality, ShipSpec};
use crate::vision::detect::ortho::OrthoView;
use crate::vision::{Camera, VisionError};
use coarse::Chamfer;
use opencv::core::{self, Mat, Point, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use refine::{Colour, Fit};
use shape::Shape;

/// Coarse view scale (mm per pixel): about a camera pixel at 1080p.
const VIEW_MM: f64 = 2.0;

/// How far (grey levels) the view must differ from the bare mat to count, with an
/// empty-table frame and without one (tuned on the 8 rendered 1080p scenes).
const THRESHOLD_BG: f64 = 28.0;
const THRESHOLD_NOBG: f64 = 32.0;

/// Openings (view pixels) that split a region no standard outline fits, and how large
/// (in the largest token's areas) a region may be to be split.
const SPLIT_RADII_PX: [i32; 2] = [3, 5];
const SPLIT_MAX_AREAS: f64 = 6.0;
/// Least area of a measured polygon, in the smallest standard token's areas.
const MIN_POLYGON_AREAS: f64 = 0.8;
/// Where a faint region's growth stops, as fractions of the threshold: first at 0.75
/// (0.6-0.7 there found one more faint token of 117 and one false one), then, for what
/// that leaves unmatched, at 0.4. A grey rock on a pale planet or a purple nebula differs
/// from it by 15-35 grey levels, in patches above the threshold and whole only lower down:
/// on the four rendered sets (scripts/detect-report.sh) the second level found five such
/// tokens without the empty-table frame (second set 97 -> 98 of 98, third 107 -> 109 of
/// 111, within 0.42 mm) and one with it (third 110 -> 111), and nothing false; at 0.5 the
/// same but that last one.
const GROW_FRACTIONS: [f64; 2] = [0.75, 0.4];
/// Edge support enough for a standard outline seen whole and fitted closely (0.7 let a
/// false one through on the rendered sets).
const RELAXED_SUPPORT: f64 = 0.75;
/// How many turns the chamfer polishes, and how many of the best of those the edge fit
/// judges. A region whose boundary the mat's art makes ragged can rank a token's own turn
/// low before polishing: the second rendered set's seed 70 rock ranked 7th or lower of
/// the sweep, and, with six polished, was missed without a background; with twelve it
/// polishes to third and fits within 0.3 mm (no other obstacle found or lost on the four
/// sets, detection's time unchanged within its spread).
const POLISHED_CANDIDATES: usize = 12;
const FIRST_CANDIDATES: usize = 3;
/// When candidates larger than the region are judged too: the first ones' best support
/// at least this; outlines this much larger than the region (a soft-edged token's region
/// was 0.63 to 0.83 of its outline's area on the rendered sets), fitted this closely (mm).
const FALLBACK_SUPPORT: f64 = 0.4;
const ERODED_AREA: f64 = 1.1;
const ERODED_RMS: f64 = 0.3;
/// How closely a grey part's outline must be followed (the fit's confidence): a
/// miniature over coloured art has grey parts too (seed 119's large ship's made a small
/// asteroid with 0.65; seed 9's asteroid across a planet's rim has 0.79, seed 6's debris
/// on a nebula 0.82).
const GREY_PART_CONFIDENCE: f64 = 0.75;
/// The least colour step (grey levels per 2 mm view pixel, in any channel) that draws a
/// token's outline as a loop (see `segment::edges`): seed 124's grey rock on a planet is
/// found by its loop from 6 to 10 (below, its loop runs into the planet's bands; above,
/// it breaks), and 8 found no other token, and nothing false, on the fixed and third
/// rendered sets.
const EDGE_MIN_STEP: f64 = 8.0;
/// The areas of such a loop's inside, in the smallest and the largest standard token's
/// areas: a loop drawn about a token encloses its edge's blur too (seed 124's rock, 2338
/// mm2, made loops of 2140-2604 mm2 from the least step 6 to 10), and the many smaller
/// loops (stars, specks of art, 260-400 mm2) cost a single frame a tenth of its time.
const LOOP_AREAS: [f64; 2] = [0.8, 1.5];
/// A loop is matched where its inside is grey (the mean's channels within this many sRGB
/// levels; the simulator's rock and debris tints 0-30 apart, its gas clouds' about 50, the
/// blue nebulae's loops on seed 124 20-80) and not dark (its brightest channel at least
/// this: the star fields' loops are 37-57, seed 124's rock 99). On seed 124 that leaves the
/// rock's loop alone of 36 (a single frame's obstacle search took a seventh longer
/// matching them all). The colour is read first: the loops it passes over cost nothing
/// more, not even their keys for a stream's next search.
const LOOP_MAX_CHROMA: f64 = 25.0;
const LOOP_MIN_VALUE: f64 = 60.0;
/// Mean difference (grey levels) below which a region is faint enough to be grown.
const FAINT_CONTRAST: f64 = 50.0;

/// Every obstacle token on the play area: a standard model with its pose where one fits,
/// else the measured polygon. `ships` are the bases already found, so that a base or its
/// miniature is not taken for an obstacle.
pub fn find_obstacles(
    frame: &Mat,
    background: Option<&Mat>,
    camera: &Camera,
    play_area: &PlayArea,
    models: &Models,
    ships: &[ShipSpec],
) -> Result<Vec<ObstacleSpec>, VisionError> {
    let searched = find_obstacles_known(
        frame,
        background,
        camera,
        play_area,
        models,
        ships,
        &Known::default(),
    )?;
    Ok(searched.obstacles)
}

/// What an obstacle search found, kept by a stream for its next search (see
/// [`find_obstacles_known`]).
#[derive(Clone, Debug, Default)]
pub struct Known {
    /// The obstacles (standard models are fitted again from their poses).
    pub obstacles: Vec<ObstacleSpec>,
    /// The regions searched in vain: the mat's art, the miniatures, a hand.
    pub empty: Vec<RegionKey>,
    /// How many of them were passed over, known from the search before.
    pub passed_over: usize,
}

/// A region as the coarse view shows it, to know it again in a later frame: its box, its
/// area, and the mean colour of every 4 x 4 pixel cell (8 mm) its box touches.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionKey {
    /// Its centroid (table mm).
    pub centre_mm: [f64; 2],
    rect: [i32; 4],
    area_px: f64,
    cells: Cells,
}

impl RegionKey {
    fn of(
        region: &segment::Region,
        ortho: &Mat,
        view: &OrthoView,
    ) -> Result<RegionKey, VisionError> {
        let [x0, y0, x1, y1] = ring_bounds(&region.contour);
        let rect = [
            x0.floor() as i32,
            y0.floor() as i32,
            x1.ceil() as i32,
            y1.ceil() as i32,
        ];
        Ok(RegionKey {
            centre_mm: view.to_table(region.centroid[0], region.centroid[1]),
            rect,
            area_px: region.area_px,
            cells: Cells::of(ortho, rect, CELL_PX)?,
        })
    }

    /// The same region in another frame of a still camera: its box within a pixel of the
    /// view (2 mm), its area within a few percent (the threshold's edge moves with the
    /// noise), and no cell of it changed colour by more than the noise does. A token laid
    /// on the art changes the cells under it by about the difference that makes a region
    /// (28-32 grey levels), even where it leaves the region's box and area as they were
    /// (a rock on a planet's face).
    fn same(&self, other: &RegionKey) -> bool {
        let near = self
            .rect
            .iter()
            .zip(&other.rect)
            .all(|(a, b)| (a - b).abs() <= 1)
            && (self.area_px - other.area_px).abs() <= SAME_REGION_AREA * self.area_px;
        near && self.cells.agree(&other.cells)
    }
}
const CELL_PX: i32 = 4;
const SAME_REGION_AREA: f64 = 0.03;

/// [`find_obstacles`] for a frame of a stream, given what its last search found.
/// Obstacles are seldom moved during a game, and the mat's art not at all, yet most of a
/// search's time goes to the regions that hold no obstacle (the art, the miniatures: every
/// outline turned through the circle over them, the best fitted, the region split and
/// tried again). So a region searched in vain last time is passed over while it stays as
/// it was, and a region that holds a known obstacle is first fitted from its known pose:
/// when that outline is followed as closely as a new one must be (and the region is that
/// token's size), the region is that obstacle again. A token moved a few millimetres is
/// followed by the fit; one moved further, or a new one, changes or makes a region, which
/// is searched for as in a single frame.
pub fn find_obstacles_known(
    frame: &Mat,
    background: Option<&Mat>,
    camera: &Camera,
    play_area: &PlayArea,
    models: &Models,
    ships: &[ShipSpec],
    known: &Known,
) -> Result<Known, VisionError> {
    check_image(frame, camera, "frame")?;
    if let Some(bg) = background {
        check_image(bg, camera, "background")?;
    }
    let (pw, ph) = (play_area.width_mm, play_area.height_mm);
    if !(pw.is_finite() && ph.is_finite() && pw > 10.0 && ph > 10.0 && pw * ph < 1e8) {
        return Err(VisionError::Invalid(format!(
            "play area {pw} x {ph} mm is not usable"
        )));
    }
    let frame = continuous(frame)?;
    let Some(colour) = Colour::new(&frame) else {
        return Err(VisionError::Invalid(
            "the frame is not an 8-bit colour image".into(),
        ));
    };
    let view = OrthoView::new(0.0, 0.0, pw, ph, 0.0, VIEW_MM);
    let maps = view::maps(&view, camera)?;
    let ortho = view::render(&frame, &maps)?;
    let bg_ortho = match background {
        Some(bg) => Some(view::render(bg, &maps)?),
        None => None,
    };
    // Excluded: the ships, and what the camera does not see.
    let mut excluded = view::ship_mask(&view, camera, ships, models)?;
    let mut unseen = Mat::default();
    core::compare(&maps.0, &core::Scalar::all(0.0), &mut unseen, core::CMP_LT)?;
    let mut ex = Mat::default();
    core::bitwise_or(&excluded, &unseen, &mut ex, &core::no_array())?;
    excluded = ex;
    let diff = segment::difference(&ortho, bg_ortho.as_ref())?;
    let threshold = if background.is_some() {
        THRESHOLD_BG
    } else {
        THRESHOLD_NOBG
    };
    let projector = camera.point_projector();
    let shapes: Vec<Shape> = models.obstacles.iter().filter_map(Shape::new).collect();
    if shapes.is_empty() {
        return Ok(Known::default());
    }
    let px_area = VIEW_MM * VIEW_MM;
    let min_area = shapes.iter().map(|s| s.area).fold(f64::MAX, f64::min);
    let max_area = shapes.iter().map(|s| s.area).fold(0.0, f64::max);
    // Regions up to several tokens' size: one may be a token joined to the mat's art.
    let regions = segment::regions(
        &diff,
        threshold,
        threshold,
        &excluded,
        0.3 * min_area / px_area,
        SPLIT_MAX_AREAS * max_area / px_area,
    )?;
    // Near-excluded pixels: a region's boundary there is a cut, not an edge.
    let mut near = Mat::default();
    let k =
        imgproc::get_structuring_element(imgproc::MORPH_RECT, Size::new(5, 5), Point::new(-1, -1))?;
    imgproc::dilate(
        &excluded,
        &mut near,
        &k,
        Point::new(-1, -1),
        1,
        core::BORDER_CONSTANT,
        core::Scalar::all(255.0),
    )?;
    let at = |m: &Mat, t: [f64; 2]| -> bool {
        let p = view.to_pixel(t[0], t[1]);
        let (c, r) = (p[0].round() as i32, p[1].round() as i32);
        if c < 0 || r < 0 || c >= view.width || r >= view.height {
            return true;
        }
        m.at_2d::<u8>(r, c).map(|v| *v > 0).unwrap_or(true)
    };
    let usable = |t: [f64; 2]| -> bool {
        t[0] > 1.0 && t[1] > 1.0 && t[0] < pw - 1.0 && t[1] < ph - 1.0 && !at(&excluded, t)
    };
    // A standard outline is accepted when edges follow nearly all of it. Without a
    // background a region cut by a ship (or split from the art it touched) could be
    // the mat's art around it: more of the outline must be seen. `cut`: the share of the
    // region's boundary that is a cut, not its own edge.
    let accepted = |fit: &Fit, cut: f64| -> bool {
        let min_visible = if background.is_none() && cut > 0.05 {
            0.8
        } else {
            0.5
        };
        // Edges along nearly all of it, or, for a token seen whole, along most of it and
        // close: one on a bright nebula loses some of its outline's contrast, not its shape.
        // Without the empty table's frame the region must not touch a ship's mask (it may
        // be art beside it); with the frame the art is not in the region, and a mask passing
        // within a few mm of a token seen whole does not make it doubtful (an epic table's
        // far asteroid, 80 mm from a steeply seen miniature, was lost so: 84 % support).
        // On the four standard rendered sets this changed nothing.
        let followed = fit.support >= 0.85
            || (fit.support >= RELAXED_SUPPORT
                && fit.rms <= 0.3
                && (cut <= 0.05 || background.is_some())
                && fit.visible >= 0.95);
        followed && fit.rms <= 0.45 && fit.visible >= min_visible
    };
    // The seen region loses a rim (the token's dark edge, the threshold) of up to about a
    // millimetre and a half along the outline.
    let plausible_for = |shape: &Shape, area: f64, cut: f64| -> bool {
        let (a, p) = (shape.area, shape.perimeter);
        if cut > 0.05 {
            a > 0.8 * area
        } else {
            area > 0.8 * a - 1.5 * p && area < 1.35 * a + 0.5 * p
        }
    };
    // The standard outline that fits a region (its boundary in view pixels, which points
    // of it are the region's own edge rather than a cut, its area and centroid), if any.
    let standard = |contour: &[[f64; 2]],
                    own: Option<&[bool]>,
                    area_px: f64,
                    centroid: [f64; 2]|
     -> Result<Option<ObstacleSpec>, VisionError> {
        let boundary: Vec<[f64; 2]> = contour.iter().map(|p| view.to_table(p[0], p[1])).collect();
        let real: Vec<bool> = boundary
            .iter()
            .enumerate()
            .map(|(k, t)| !at(&near, *t) && own.is_none_or(|o| o.get(k).copied().unwrap_or(false)))
            .collect();
        let cut = real.iter().filter(|r| !**r).count() as f64 / real.len().max(1) as f64;
        let Some(ch) = Chamfer::new(&boundary, &real, &|t| at(&excluded, t), 1.0)? else {
            return Ok(None);
        };
        let area = area_px * px_area;
        let centre = view.to_table(centroid[0], centroid[1]);
        let plausible: Vec<usize> = (0..shapes.len())
            .filter(|&i| plausible_for(&shapes[i], area, cut))
            .collect();
        // The chamfer's best poses of the plausible outlines among `pick`, best first.
        let ranked = |pick: &dyn Fn(usize) -> bool, keep: usize| {
            let idx: Vec<usize> = plausible.iter().copied().filter(|&i| pick(i)).collect();
            let refs: Vec<&Shape> = idx.iter().map(|&i| &shapes[i]).collect();
            let mut cands: Vec<(usize, coarse::Pose, f64)> =
                coarse::search(&ch, &refs, centre, keep)
                    .into_iter()
                    .map(|(k, p, s)| (idx[k], p, s))
                    .collect();
            cands.sort_by(|a, b| a.2.total_cmp(&b.2));
            cands
        };
        let accepted = |fit: &Fit| accepted(fit, cut);
        let best_of = |picks: &mut dyn Iterator<Item = &(usize, coarse::Pose, f64)>| {
            let mut best: Option<(usize, Fit)> = None;
            for (i, pose, _) in picks {
                if let Some(fit) = refine::refine(&colour, &projector, &shapes[*i], *pose, &usable)
                    && best.as_ref().is_none_or(|(_, b)| merit(&fit) > merit(b))
                {
                    best = Some((*i, fit));
                }
            }
            best
        };
        let first = best_of(
            &mut ranked(&|_| true, POLISHED_CANDIDATES)
                .iter()
                .take(FIRST_CANDIDATES),
        );
        let chosen = match first {
            Some((i, fit)) if accepted(&fit) => Some((i, fit)),
            // A token with a soft edge (blurred, or on a bright nebula) crosses the
            // threshold inside its outline, and the chamfer then ranks outlines of the
            // region's own size above its own: when the first few found some of their
            // outlines, the chamfer's best among the outlines larger than the region are
            // judged too, and must fit closely (a pale miniature's blob once passed for a
            // smaller asteroid).
            Some((_, fit)) if fit.support >= FALLBACK_SUPPORT => {
                let larger = ranked(&|i| shapes[i].area > ERODED_AREA * area, FIRST_CANDIDATES);
                best_of(&mut larger.iter().take(FIRST_CANDIDATES))
                    .filter(|(_, f)| accepted(f) && f.rms <= ERODED_RMS)
            }
            _ => None,
        };
        Ok(chosen.map(|(i, fit)| placed(&shapes[i], &fit)))
    };
    // The share of a region's boundary that is a cut (next to a ship or the unseen), not
    // its own edge.
    let cut_of = |region: &segment::Region| {
        region
            .contour
            .iter()
            .filter(|p| at(&near, view.to_table(p[0], p[1])))
            .count() as f64
            / region.contour.len().max(1) as f64
    };
    // The known obstacle a region is again: the only one whose centre lies in it, its
    // outline fitted from where it was and accepted, the region its size.
    let again = |region: &segment::Region| -> Option<ObstacleSpec> {
        let mut inside = known.obstacles.iter().filter_map(|o| {
            let (model, x, y, rot) = (o.model.as_ref()?, o.x?, o.y?, o.rotation_deg?);
            let shape = shapes.iter().find(|s| &s.xws == model)?;
            let pose = shape.centroid_pose(x, y, rot);
            let p = view.to_pixel(pose.centre[0], pose.centre[1]);
            ring_contains(&region.contour, p).then_some((shape, pose))
        });
        let (shape, pose) = inside.next()?;
        if inside.next().is_some() {
            return None;
        }
        let cut = cut_of(region);
        if !plausible_for(shape, region.area_px * px_area, cut) {
            return None;
        }
        let fit = refine::refine(&colour, &projector, shape, pose, &usable)?;
        accepted(&fit, cut).then(|| placed(shape, &fit))
    };
    let (min_px, max_px) = (0.3 * min_area / px_area, 2.0 * max_area / px_area);
    // The standard outlines a region holds: itself, or, when none fits it, the parts it
    // falls into when opened (a token joined to a nebula's or planet's edge by a neck), or
    // else its grey parts (a token joined to coloured art along a whole side).
    // With an empty-table frame the art is not in the difference, and no split is tried (a
    // part split from a ship's region there once matched a small asteroid).
    let in_region = |region: &segment::Region| -> Result<Vec<ObstacleSpec>, VisionError> {
        if region.area_px <= max_px
            && let Some(o) = standard(&region.contour, None, region.area_px, region.centroid)?
        {
            return Ok(vec![o]);
        }
        let radii: &[i32] = if background.is_none() {
            &SPLIT_RADII_PX
        } else {
            &[]
        };
        for &radius in radii {
            let mut parts = Vec::new();
            for (part, own) in segment::split(region, radius, min_px, max_px)? {
                if let Some(o) = standard(&part.contour, Some(&own), part.area_px, part.centroid)? {
                    parts.push(o);
                }
            }
            if !parts.is_empty() {
                return Ok(parts);
            }
        }
        // Joined along a side, not by a neck: a grey token across coloured art.
        if background.is_none() {
            let mut parts = Vec::new();
            for (part, own) in segment::grey_parts(region, &ortho, min_px, max_px)? {
                if let Some(o) = standard(&part.contour, Some(&own), part.area_px, part.centroid)?
                    && o.quality.confidence.unwrap_or(0.0) >= GREY_PART_CONFIDENCE
                {
                    parts.push(o);
                }
            }
            return Ok(parts);
        }
        Ok(Vec::new())
    };
    let was_empty = |key: &RegionKey| known.empty.iter().any(|k| k.same(key));
    // The outlines of the tokens found so far (a region inside one is that token).
    let outlines_of = |found: &[ObstacleSpec]| -> Vec<Vec<[f64; 2]>> {
        found
            .iter()
            .filter_map(|o| o.outline(models).ok())
            .collect()
    };
    let mut found: Vec<ObstacleSpec> = Vec::new();
    let mut empty: Vec<RegionKey> = Vec::new();
    let mut passed_over = 0;
    for region in &regions {
        let key = RegionKey::of(region, &ortho, &view)?;
        if was_empty(&key) {
            empty.push(key);
            passed_over += 1;
            continue;
        }
        if let Some(o) = again(region) {
            found.push(o);
            continue;
        }
        let standards = in_region(region)?;
        if !standards.is_empty() {
            found.extend(standards);
            continue;
        }
        let cut = cut_of(region);
        // A measured polygon must be a token's size: the round cardboard tokens players
        // leave beside their ships (about 350 mm2) are smaller than any obstacle (513).
        if background.is_some()
            && region.area_px <= max_px
            && region.area_px * px_area >= MIN_POLYGON_AREAS * min_area
            && cut < 0.05
            && region.contrast >= 40.0
            && let Some(poly) = polygon(&region.contour, &view)?
        {
            found.push(ObstacleSpec {
                id: String::new(),
                model: None,
                x: None,
                y: None,
                rotation_deg: None,
                polygon: Some(poly),
                quality: Quality {
                    sigma_mm: Some(VIEW_MM),
                    sigma_deg: None,
                    confidence: Some(0.3),
                    ..Quality::default()
                },
            });
        } else {
            empty.push(key);
        }
    }
    // A faint token (a grey one on a dim nebula) crosses the threshold only in patches:
    // grown from them down to a lower level, its whole face may show the outline. Only
    // regions grown from a faint one are tried again (a clear one is already whole), so
    // without a faint region there is nothing to grow; what the first level leaves
    // unmatched is grown once more, lower.
    let faint: Vec<[f64; 2]> = regions
        .iter()
        .filter(|r| r.contrast < FAINT_CONTRAST)
        .map(|r| r.centroid)
        .collect();
    for fraction in GROW_FRACTIONS.iter().filter(|_| !faint.is_empty()) {
        let grown = segment::regions(
            &diff,
            threshold,
            fraction * threshold,
            &excluded,
            min_px,
            SPLIT_MAX_AREAS * max_area / px_area,
        )?;
        let outlines = outlines_of(&found);
        for region in &grown {
            let c = view.to_table(region.centroid[0], region.centroid[1]);
            let matched = outlines.iter().any(|o| ring_contains(o, c));
            let from_faint = faint.iter().any(|f| ring_contains(&region.contour, *f));
            if from_faint && !matched {
                let key = RegionKey::of(region, &ortho, &view)?;
                if was_empty(&key) {
                    empty.push(key);
                    passed_over += 1;
                    continue;
                }
                let placed = match again(region) {
                    Some(o) => vec![o],
                    None => {
                        let parts = in_region(region)?;
                        if parts.is_empty() {
                            empty.push(key);
                        }
                        parts
                    }
                };
                // A token found already (at the first level, or as a grey part of the
                // region) is not found twice.
                for o in placed {
                    if !found.iter().any(|f| same_placement(f, &o)) {
                        found.push(o);
                    }
                }
            }
        }
    }
    // A token the wide median hides (a grey rock on a planet whose bands the median mixes
    // into the rock's own grey) still has its outline: a closed loop of sharp colour
    // change, where the art's changes are gradual. Such loops of a token's size, where
    // no region was and nothing was found, are matched as the regions are (standard
    // outlines only: a loop vouches for no measured polygon). With an empty-table frame
    // the difference shows such a token whole.
    if background.is_none() {
        let edge = segment::edges(&ortho, EDGE_MIN_STEP)?;
        let loops = segment::regions(
            &edge,
            128.0,
            128.0,
            &excluded,
            LOOP_AREAS[0] * min_area / px_area,
            LOOP_AREAS[1] * max_area / px_area,
        )?;
        let outlines = outlines_of(&found);
        for region in &loops {
            let c = view.to_table(region.centroid[0], region.centroid[1]);
            if outlines.iter().any(|o| ring_contains(o, c))
                || regions
                    .iter()
                    .any(|r| ring_contains(&r.contour, region.centroid))
            {
                continue;
            }
            // Only a grey face: what the median mixes a coloured mat into (a coloured
            // token differs from it), and not black space's stars.
            let [b, g, r] = segment::mean_colour(&ortho, region)?;
            let (hi, lo) = (b.max(g).max(r), b.min(g).min(r));
            if hi < LOOP_MIN_VALUE || hi - lo > LOOP_MAX_CHROMA {
                continue;
            }
            let key = RegionKey::of(region, &ortho, &view)?;
            if was_empty(&key) {
                empty.push(key);
                passed_over += 1;
                continue;
            }
            let placed = match again(region) {
                Some(o) => Some(o),
                None => standard(&region.contour, None, region.area_px, region.centroid)?,
            };
            match placed {
                Some(o) if !found.iter().any(|f| same_placement(f, &o)) => found.push(o),
                Some(_) => {}
                None => empty.push(key),
            }
        }
    }
    let key = |o: &ObstacleSpec| -> [f64; 2] {
        match (o.x, o.y, &o.polygon) {
            (Some(x), Some(y), _) => [x, y],
            (_, _, Some(p)) => ring_mean(p).unwrap_or([0.0, 0.0]),
            _ => [0.0, 0.0],
        }
    };
    found.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka[0].total_cmp(&kb[0]).then(ka[1].total_cmp(&kb[1]))
    });
    for (n, o) in found.iter_mut().enumerate() {
        o.id = format!("o{}", n + 1);
    }
    Ok(Known {
        obstacles: found,
        empty,
        passed_over,
    })
}

/// A standard outline placed by its fit, with the fit's sigmas and confidence.
fn placed(shape: &Shape, fit: &Fit) -> ObstacleSpec {
    let (x, y, rot) = shape.model_pose(&fit.pose);
    let mut o = ObstacleSpec::placed("", &shape.xws, x, y, rot);
    o.quality = Quality {
        sigma_mm: Some((fit.sd[0].powi(2) + fit.sd[1].powi(2) + 0.25f64.powi(2)).sqrt()),
        sigma_deg: Some(fit.sd[2].to_degrees().hypot(0.2)),
        confidence: Some((fit.support * (1.0 - fit.rms / 1.6)).clamp(0.0, 1.0)),
        ..Quality::default()
    };
    o
}

/// Two placements of one standard model within a few millimetres: one token found twice.
fn same_placement(a: &ObstacleSpec, b: &ObstacleSpec) -> bool {
    match (a.model.as_ref(), b.model.as_ref(), a.x, a.y, b.x, b.y) {
        (Some(ma), Some(mb), Some(xa), Some(ya), Some(xb), Some(yb)) => {
            ma == mb && (xa - xb).hypot(ya - yb) < SAME_PLACEMENT_MM
        }
        _ => false,
    }
}
const SAME_PLACEMENT_MM: f64 = 5.0;

/// How well a fit explains the edges: support first, residual second.
fn merit(f: &Fit) -> f64 {
    f.support - 0.3 * f.rms
}

fn check_image(image: &Mat, camera: &Camera, what: &str) -> Result<(), VisionError> {
    let size = image.size()?;
    if image.empty() || size.width < 2 || size.height < 2 {
        return Err(VisionError::Invalid(format!("the {what} is empty")));
    }
    if image.typ() != core::CV_8UC3 {
        return Err(VisionError::Invalid(format!(
            "the {what} must be an 8-bit BGR image"
        )));
    }
    let [w, h] = camera.image_size;
    if size.width != w as i32 || size.height != h as i32 {
        return Err(VisionError::Invalid(format!(
            "the {what} is {}x{} but the camera is calibrated for {w}x{h}",
            size.width, size.height
        )));
    }
    Ok(())
}

fn continuous(m: &Mat) -> Result<Mat, VisionError> {
    if m.is_continuous() {
        Ok(m.try_clone()?)
    } else {
        let mut out = Mat::default();
        m.copy_to(&mut out)?;
        Ok(out)
    }
}

/// A region's outline as a simplified, simple, counter-clockwise polygon in table mm.
/// Simplifying a ragged contour can cross it over itself, which no scene may hold; a
/// coarser simplification is tried, and at last the convex hull (it contains the region,
/// so it errs towards calling a roll blocked).
fn polygon(contour: &[[f64; 2]], view: &OrthoView) -> Result<Option<Vec<[f64; 2]>>, VisionError> {
    let pts: Vector<Point> = contour
        .iter()
        .map(|p| Point::new(p[0] as i32, p[1] as i32))
        .collect();
    let to_table = |v: &Vector<Point>| -> Vec<[f64; 2]> {
        v.iter()
            .map(|p| view.to_table(f64::from(p.x), f64::from(p.y)))
            .collect()
    };
    for eps in [0.75, 1.5, 3.0] {
        let mut approx: Vector<Point> = Vector::new();
        imgproc::approx_poly_dp(&pts, &mut approx, eps, true)?;
        if let Ok(ring) = crate::geometry::polygon::normalise_ring(&to_table(&approx)) {
            return Ok(Some(ring));
        }
    }
    let mut hull: Vector<Point> = Vector::new();
    imgproc::convex_hull(&pts, &mut hull, false, true)?;
    Ok(crate::geometry::polygon::normalise_ring(&to_table(&hull)).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crossed_contour_becomes_a_simple_polygon() {
        let view = OrthoView::new(0.0, 0.0, 100.0, 100.0, 0.0, VIEW_MM);
        // A bow tie: the contour crosses itself at (10, 10).
        let contour = [[0.0, 0.0], [20.0, 20.0], [20.0, 0.0], [0.0, 20.0]];
        let poly = polygon(&contour, &view).unwrap().unwrap();
        assert!(crate::geometry::polygon::normalise_ring(&poly).is_ok());
        // The convex hull: the square around the tie, 40 x 40 mm at 2 mm per pixel.
        assert_eq!(poly.len(), 4);
        let xs: Vec<f64> = poly.iter().map(|p| p[0]).collect();
        let span = xs.iter().cloned().fold(f64::MIN, f64::max)
            - xs.iter().cloned().fold(f64::MAX, f64::min);
        assert!((span - 40.0).abs() < 1e-9, "{poly:?}");
        // A simple contour is only simplified.
        let square = [[0.0, 0.0], [20.0, 0.0], [20.0, 20.0], [0.0, 20.0]];
        assert_eq!(polygon(&square, &view).unwrap().unwrap().len(), 4);
    }

    /// A square region of the coarse view, `d` pixels right of (20, 20), 60 px wide.
    fn square_region(d: f64) -> segment::Region {
        let (a, b) = (20.0 + d, 80.0 + d);
        segment::Region {
            contour: vec![[a, 20.0], [b, 20.0], [b, 80.0], [a, 80.0]],
            area_px: 3600.0,
            centroid: [50.0 + d, 50.0],
            contrast: 60.0,
        }
    }

    #[test]
    fn a_region_is_known_again_unless_something_was_laid_on_it() {
        let view = OrthoView::new(0.0, 0.0, 200.0, 200.0, 0.0, VIEW_MM);
        // A planet's face, with a star on it.
        let mut ortho = Mat::new_rows_cols_with_default(
            100,
            100,
            core::CV_8UC3,
            core::Scalar::new(150.0, 110.0, 60.0, 0.0),
        )
        .unwrap();
        *ortho.at_2d_mut::<core::Vec3b>(40, 41).unwrap() = core::Vec3b::from([250, 250, 250]);
        let region = square_region(0.0);
        let key = RegionKey::of(&region, &ortho, &view).unwrap();
        assert!((key.centre_mm[0] - 101.0).abs() < 1e-9 && (key.centre_mm[1] - 99.0).abs() < 1e-9);
        // The next frame: the sensor's noise, a few grey levels on every pixel.
        let mut noisy = ortho.clone();
        for r in 0..100 {
            for (c, p) in noisy
                .at_row_mut::<core::Vec3b>(r)
                .unwrap()
                .iter_mut()
                .enumerate()
            {
                let n = ((r as usize * 7 + c * 13) % 7) as u8;
                *p = core::Vec3b::from([p[0] - 3 + n, p[1] + n / 2, p[2] - n / 2]);
            }
        }
        assert!(key.same(&RegionKey::of(&region, &noisy, &view).unwrap()));
        // The region's edge a pixel off is the same region; 3 px off, not.
        assert!(key.same(&RegionKey::of(&square_region(1.0), &noisy, &view).unwrap()));
        assert!(!key.same(&RegionKey::of(&square_region(3.0), &noisy, &view).unwrap()));
        // A grey rock (24 mm) laid on the face, inside the region's outline: the box and
        // the area stay as they were, the cells under the rock do not.
        let mut rock = noisy.clone();
        for r in 50..62 {
            for p in rock.at_row_mut::<core::Vec3b>(r).unwrap()[40..52].iter_mut() {
                *p = core::Vec3b::from([105, 105, 105]);
            }
        }
        assert!(!key.same(&RegionKey::of(&region, &rock, &view).unwrap()));
    }
}

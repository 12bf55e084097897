//! The table picture of a report: the SVG diagram around the rolling ship (true scale, mm)
//! rendered to PNG with resvg at a fixed, stated scale, so that a judge can measure on the
//! picture: pixel (u, v) is table point (left + u / px_per_mm, top - v / px_per_mm).

use super::JudgeError;
use crate::rules::RollVerdict;
use serde::{Deserialize, Serialize};

/// Side of the square shown around the ship, mm. The farthest landing edge of any roll is
/// about 140 mm from the ship's centre (a large base on a 2-straight, a small one on a
/// 2-straight), so 320 mm shows every landing with 20 mm to spare and the ships beside it.
pub const VIEW_MM: f64 = 320.0;
/// Pixels per millimetre: a 0.7 mm landing outline is over 5 px wide and a 0.5 mm gap is
/// 4 px, visible without zooming; 320 mm is 2560 px.
pub const PX_PER_MM: f64 = 8.0;

/// The picture's files and geometry, as written into `report.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Picture {
    pub png: String,
    pub svg: String,
    /// Side of the square shown, mm (the SVG's own unit).
    pub view_mm: f64,
    pub px_per_mm: f64,
    pub width_px: u32,
    pub height_px: u32,
    /// Table point (mm) at the PNG's top-left corner; image y runs down, table y up.
    pub top_left_mm: [f64; 2],
}

impl Picture {
    /// The square of [`VIEW_MM`] centred on the rolling ship's start.
    pub fn around(v: &RollVerdict) -> Picture {
        let px = (VIEW_MM * PX_PER_MM).round() as u32;
        Picture {
            png: super::PNG_FILE.to_string(),
            svg: super::SVG_FILE.to_string(),
            view_mm: VIEW_MM,
            px_per_mm: PX_PER_MM,
            width_px: px,
            height_px: px,
            top_left_mm: [v.start.x - VIEW_MM / 2.0, v.start.y + VIEW_MM / 2.0],
        }
    }
}

/// Renders `svg` to a PNG of exactly `width_px` x `height_px` pixels.
pub fn render_png(svg: &str, width_px: u32, height_px: u32) -> Result<Vec<u8>, JudgeError> {
    let mut opt = resvg::usvg::Options::default();
    load_fonts(opt.fontdb_mut());
    let tree = resvg::usvg::Tree::from_str(svg, &opt)
        .map_err(|e| JudgeError::Picture(format!("SVG: {e}")))?;
    let size = tree.size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(width_px, height_px).ok_or_else(|| {
        JudgeError::Picture(format!("cannot make a {width_px} x {height_px} image"))
    })?;
    // usvg turned the SVG's millimetres into px at its DPI; scale that to the stated size.
    let (sx, sy) = (
        width_px as f32 / size.width(),
        height_px as f32 / size.height(),
    );
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(sx, sy),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| JudgeError::Picture(format!("PNG: {e}")))
}

/// System fonts, with "sans-serif" (what the diagram asks for) mapped to a family that is
/// installed: fontdb maps it to Arial, and on a machine without Arial the ship ids and
/// clearance labels would silently vanish from the picture.
fn load_fonts(db: &mut resvg::usvg::fontdb::Database) {
    db.load_system_fonts();
    const PREFERRED: [&str; 5] = [
        "Arial",
        "DejaVu Sans",
        "Liberation Sans",
        "Noto Sans",
        "FreeSans",
    ];
    let installed: Vec<&str> = db
        .faces()
        .flat_map(|f| f.families.iter().map(|(name, _)| name.as_str()))
        .collect();
    let pick = PREFERRED
        .iter()
        .find(|p| installed.contains(p))
        .copied()
        .or_else(|| installed.first().copied())
        .map(str::to_string);
    if let Some(family) = pick {
        db.set_sans_serif_family(family);
    }
}

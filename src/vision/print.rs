//! Printable calibration targets at true scale: the four mat marker cards and the ChArUco
//! intrinsics board (spec section 5), as SVG in millimetres, then PDF (svg2pdf) and PNG at a
//! stated DPI (resvg) from that one drawing. Every page carries a 100 mm scale bar, because
//! a printer that "fits to page" silently breaks every millimetre downstream.

use super::VisionError;
use super::aruco::{CharucoGeometry, Dict, MarkerBits, marker_bits};
use crate::calibration::Layout;
use std::fmt::Write;

/// Page sizes, mm.
const A4: (f64, f64) = (210.0, 297.0);
/// The SVG's user unit is the millimetre; usvg reads "210mm" at this DPI.
const SVG_DPI: f32 = 96.0;
/// Smallest card side: the spec's marker plus a quiet zone, sized so that a card centred
/// where the layout puts its marker sits flush against the play area's corner.
const CARD_MM: f64 = 90.0;

fn header(w: f64, h: f64) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}mm" height="{h}mm" viewBox="0 0 {w} {h}"><rect width="{w}" height="{h}" fill="white"/>"#
    )
}

fn text(out: &mut String, x: f64, y: f64, size: f64, anchor: &str, s: &str) {
    let s = s
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let _ = write!(
        out,
        r#"<text x="{x:.3}" y="{y:.3}" font-size="{size}" font-family="DejaVu Sans, sans-serif" text-anchor="{anchor}" fill="black">{s}</text>"#
    );
}

/// One path for all black cells, so the rasteriser sees their union (no seams between
/// neighbouring cells). `origin` is the marker's top-left corner, `ux`/`uy` one cell along
/// its top edge and down its left edge.
fn marker_path(out: &mut String, bits: &MarkerBits, origin: [f64; 2], ux: [f64; 2], uy: [f64; 2]) {
    let mut d = String::new();
    let at = |r: f64, c: f64| {
        [
            origin[0] + c * ux[0] + r * uy[0],
            origin[1] + c * ux[1] + r * uy[1],
        ]
    };
    for r in 0..bits.cells {
        for c in 0..bits.cells {
            if bits.is_black(r as i64, c as i64) {
                let (r, c) = (r as f64, c as f64);
                let p = [
                    at(r, c),
                    at(r, c + 1.0),
                    at(r + 1.0, c + 1.0),
                    at(r + 1.0, c),
                ];
                let _ = write!(
                    d,
                    "M{:.4} {:.4}L{:.4} {:.4}L{:.4} {:.4}L{:.4} {:.4}Z",
                    p[0][0], p[0][1], p[1][0], p[1][1], p[2][0], p[2][1], p[3][0], p[3][1]
                );
            }
        }
    }
    let _ = write!(out, r#"<path d="{d}" fill="black"/>"#);
}

/// A 100 mm bar with centimetre ticks and the instruction to check it.
fn scale_bar(out: &mut String, x: f64, y: f64) {
    let _ = write!(
        out,
        r#"<rect x="{x}" y="{y}" width="100" height="3" fill="black"/>"#
    );
    for k in 0..=10 {
        let tx = x + 10.0 * k as f64;
        let len = if k % 5 == 0 { 6.0 } else { 4.5 };
        let _ = write!(
            out,
            r#"<rect x="{:.3}" y="{y}" width="0.3" height="{len}" fill="black"/>"#,
            tx - 0.15
        );
    }
    text(out, x + 50.0, y + 11.0, 3.5, "middle", "100 mm");
    text(
        out,
        x + 50.0,
        y + 17.0,
        3.2,
        "middle",
        "Print at 100 % (actual size, no fit to page), then check this bar with a ruler: it must measure 100 mm.",
    );
}

/// Where a marker card goes, in words, from its centre relative to the play area: its
/// centre, then a corner when it lies beyond two edges, else the edge it lies beyond (a
/// layout of one's own may put cards along the edges or on the mat). Two lines, to fit the
/// card.
fn placement(centre: [f64; 2], play: (f64, f64)) -> [String; 2] {
    let [x, y] = centre;
    let across = if x < 0.0 {
        Some("left")
    } else if x > play.0 {
        Some("right")
    } else {
        None
    };
    let along = if y < 0.0 {
        Some("player 1's")
    } else if y > play.1 {
        Some("the far")
    } else {
        None
    };
    let at = match (along, across) {
        (Some(a), Some(b)) => format!("{a} {b} corner"),
        (Some(a), None) => format!("beyond {a} edge, {x:.0} mm from the left"),
        (None, Some(b)) => format!("beyond the {b} edge, {y:.0} mm from player 1's"),
        (None, None) => "on the mat".to_string(),
    };
    [format!("centre ({x:.1}, {y:.1}) mm:"), at]
}

/// How mat marker cards of one size share an A4 page.
struct CardSheet {
    /// Card side, mm: the marker with a quarter of its side of white on each side (the
    /// spec's 60 mm marker on a 90 mm card, which sits flush against the play area's
    /// corner); never smaller than that card.
    card: f64,
    columns: usize,
    rows: usize,
}

/// Left and top margins of the card grid, the gap between rows (for the placement line's
/// cut) and the page height the grid may fill above the scale bar, mm.
const SHEET_LEFT: f64 = 15.0;
const SHEET_TOP: f64 = 35.0;
const SHEET_ROW_GAP: f64 = 10.0;
const SHEET_BOTTOM: f64 = 235.0;

impl CardSheet {
    fn for_marker(marker_mm: f64) -> Result<CardSheet, VisionError> {
        let card = (marker_mm * 1.5).max(CARD_MM);
        let columns = ((A4.0 - 2.0 * SHEET_LEFT) / card).floor() as usize;
        let rows =
            ((SHEET_BOTTOM - SHEET_TOP + SHEET_ROW_GAP) / (card + SHEET_ROW_GAP)).floor() as usize;
        if columns == 0 || rows == 0 {
            return Err(VisionError::Invalid(format!(
                "mat markers of {marker_mm} mm do not fit on an A4 card (at most {:.0} mm)",
                (A4.0 - 2.0 * SHEET_LEFT) / 1.5
            )));
        }
        Ok(CardSheet {
            card,
            columns,
            rows,
        })
    }

    /// Top-left corner of the `k`th card on its page.
    fn origin(&self, k: usize) -> (f64, f64) {
        let (r, c) = (k / self.columns, k % self.columns);
        (
            SHEET_LEFT + c as f64 * self.card,
            SHEET_TOP + r as f64 * (self.card + SHEET_ROW_GAP),
        )
    }
}

/// The layout's mat marker cards on as many A4 pages as they need (four of the spec's 60 mm
/// cards to a page), in the layout's order.
pub fn mat_marker_pages(
    layout: &Layout,
    play_area: (f64, f64),
) -> Result<Vec<String>, VisionError> {
    // Any dictionary `calibrate table` reads (the spec's is DICT_4X4_50).
    let dict = Dict::parse(&layout.mat_markers.dictionary)?;
    let s = layout.mat_markers.marker_mm;
    let sheet = CardSheet::for_marker(s)?;
    let per_page = sheet.columns * sheet.rows;
    let chunks: Vec<_> = layout.mat_markers.markers.chunks(per_page).collect();
    let mut pages = Vec::with_capacity(chunks.len());
    for (p, cards) in chunks.iter().enumerate() {
        let (w, h) = A4;
        let mut out = header(w, h);
        let title = if chunks.len() > 1 {
            format!("hashmark mat markers, page {} of {}", p + 1, chunks.len())
        } else {
            "hashmark mat markers".to_string()
        };
        text(&mut out, w / 2.0, 16.0, 6.0, "middle", &title);
        text(
            &mut out,
            w / 2.0,
            23.0,
            3.5,
            "middle",
            &format!(
                "{}, {} mm. Cut along the grey lines; lay each card flat, this side up, text reading from player 1's edge.",
                layout.mat_markers.dictionary, s
            ),
        );
        let card = sheet.card;
        for (k, m) in cards.iter().enumerate() {
            let (x0, y0) = sheet.origin(k);
            let _ = write!(
                out,
                r##"<rect x="{x0}" y="{y0}" width="{card}" height="{card}" fill="none" stroke="#9a9a9a" stroke-width="0.25" stroke-dasharray="2 1.5"/>"##
            );
            let bits = marker_bits(dict, m.id as i32)?;
            let (mx, my) = (x0 + (card - s) / 2.0, y0 + (card - s) / 2.0);
            let cell = s / bits.cells as f64;
            marker_path(&mut out, &bits, [mx, my], [cell, 0.0], [0.0, cell]);
            text(
                &mut out,
                x0 + card / 2.0,
                y0 + 8.0,
                3.2,
                "middle",
                &format!("id {}  ^ top: away from player 1", m.id),
            );
            for (line, dy) in placement(m.centre, play_area).iter().zip([8.0, 4.0]) {
                text(
                    &mut out,
                    x0 + card / 2.0,
                    y0 + card - dy,
                    2.6,
                    "middle",
                    line,
                );
            }
        }
        scale_bar(&mut out, (w - 100.0) / 2.0, SHEET_BOTTOM + 5.0);
        out.push_str("</svg>");
        pages.push(out);
    }
    Ok(pages)
}

/// The ChArUco board on A4 landscape, drawn from OpenCV's own board definition.
pub fn charuco_board_svg(board: &CharucoGeometry, dictionary: &str) -> String {
    let (w, h) = (A4.1, A4.0);
    let (bw, bh) = (
        board.squares_x as f64 * board.square_mm,
        board.squares_y as f64 * board.square_mm,
    );
    let (x0, y0) = ((w - bw) / 2.0, 14.0);
    let mut out = header(w, h);
    let mut d = String::new();
    for j in 0..board.squares_y {
        for i in 0..board.squares_x {
            let (cx, cy) = (
                (i as f64 + 0.5) * board.square_mm,
                (j as f64 + 0.5) * board.square_mm,
            );
            if board.square_is_black(cx, cy) {
                let (x, y) = (
                    x0 + i as f64 * board.square_mm,
                    y0 + j as f64 * board.square_mm,
                );
                let sq = board.square_mm;
                let _ = write!(d, "M{x:.4} {y:.4}h{sq}v{sq}h-{sq}Z");
            }
        }
    }
    let _ = write!(out, r#"<path d="{d}" fill="black"/>"#);
    for (_, c, bits) in &board.markers {
        let n = bits.cells as f64;
        let ux = [(c[1][0] - c[0][0]) / n, (c[1][1] - c[0][1]) / n];
        let uy = [(c[3][0] - c[0][0]) / n, (c[3][1] - c[0][1]) / n];
        marker_path(&mut out, bits, [x0 + c[0][0], y0 + c[0][1]], ux, uy);
    }
    text(
        &mut out,
        w / 2.0,
        y0 + bh + 9.0,
        3.5,
        "middle",
        &format!(
            "hashmark ChArUco board: {} x {} squares of {} mm, {} mm markers, {}. Glue it flat on something rigid.",
            board.squares_x, board.squares_y, board.square_mm, board.marker_mm, dictionary
        ),
    );
    scale_bar(&mut out, (w - 100.0) / 2.0, y0 + bh + 14.0);
    out.push_str("</svg>");
    out
}

fn tree(svg: &str) -> Result<resvg::usvg::Tree, VisionError> {
    let mut opt = resvg::usvg::Options {
        dpi: SVG_DPI,
        ..Default::default()
    };
    opt.fontdb_mut().load_system_fonts();
    resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| VisionError::Invalid(format!("SVG: {e}")))
}

/// The page as PDF at true size.
pub fn to_pdf(svg: &str) -> Result<Vec<u8>, VisionError> {
    let tree = tree(svg)?;
    // usvg turned millimetres into px at SVG_DPI; tell svg2pdf the same DPI so that one
    // millimetre on the page stays one millimetre.
    let page = svg2pdf::PageOptions { dpi: SVG_DPI };
    svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), page)
        .map_err(|e| VisionError::Invalid(format!("PDF: {e}")))
}

/// The page as PNG at `dpi` dots per inch.
pub fn to_png(svg: &str, dpi: f32) -> Result<Vec<u8>, VisionError> {
    let tree = tree(svg)?;
    let scale = dpi / SVG_DPI;
    let size = tree.size();
    let (pw, ph) = (
        (size.width() * scale).round() as u32,
        (size.height() * scale).round() as u32,
    );
    let mut pixmap = resvg::tiny_skia::Pixmap::new(pw, ph)
        .ok_or_else(|| VisionError::Invalid(format!("cannot make a {pw} x {ph} image")))?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| VisionError::Invalid(format!("PNG: {e}")))
}

//! The app side of the projector output: the calibration it maps through, where it shows
//! (a full-screen second viewport on the projector, and/or the main window's central area,
//! which is what `--screenshot` captures), and whether it shows the drawing or the
//! projector calibration pattern (key P), so `calibrate projector --photo` needs no other
//! program to put the pattern on the table.

use super::projector::{
    BACKGROUND, Projection, ProjectorDrawn, ProjectorMap, ProjectorScene, paint_projector,
};
use eframe::egui::{self, Align2, Color32, FontId, Painter, Rect, TextureHandle, pos2};

/// The egui id of the projector's viewport.
pub fn viewport_id() -> egui::ViewportId {
    egui::ViewportId::from_hash_of("hashmark-projector")
}

pub struct ProjectorOutput {
    pub projection: Projection,
    /// Open a full-screen second viewport (`--projector`); on this monitor when given
    /// (winit's `available_monitors()` order).
    pub viewport: bool,
    pub monitor: Option<usize>,
    /// The main window shows the projector view instead of the table (`--view projector`,
    /// key V).
    pub in_main: bool,
    /// Show the calibration pattern instead of the drawing (key P).
    pub show_pattern: bool,
    /// Every base dim (the alignment check).
    pub show_bases: bool,
    /// The pattern, uploaded the first time it is shown; or why it cannot be.
    pattern: Option<Result<TextureHandle, String>>,
    drawn: ProjectorDrawn,
}

impl ProjectorOutput {
    pub fn new(projection: Projection) -> ProjectorOutput {
        ProjectorOutput {
            projection,
            viewport: false,
            monitor: None,
            in_main: false,
            show_pattern: false,
            show_bases: true,
            pattern: None,
            drawn: ProjectorDrawn::default(),
        }
    }

    /// What the last projector frame drew (whichever viewport drew last).
    pub fn drawn(&self) -> &ProjectorDrawn {
        &self.drawn
    }

    /// Paints the projector image (drawing or pattern) into `view`.
    pub fn paint(
        &mut self,
        ctx: &egui::Context,
        painter: &Painter,
        view: Rect,
        s: &ProjectorScene,
    ) {
        if !self.show_pattern {
            self.drawn = paint_projector(painter, view, s);
            return;
        }
        let painter = painter.with_clip_rect(view);
        painter.rect_filled(view, 0.0, BACKGROUND);
        let map = ProjectorMap::fit(view, &self.projection);
        let size = self.projection.size;
        let pattern = self
            .pattern
            .get_or_insert_with(|| pattern_texture(ctx, size));
        match pattern {
            Ok(t) => {
                painter.image(
                    t.id(),
                    map.image_rect,
                    Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
                    Color32::WHITE,
                );
            }
            Err(why) => {
                painter.text(
                    view.center(),
                    Align2::CENTER_CENTER,
                    why.as_str(),
                    FontId::proportional(18.0),
                    Color32::GRAY,
                );
            }
        }
        self.drawn = ProjectorDrawn {
            image_rect: Some(map.image_rect),
            ..Default::default()
        };
    }

    /// The second viewport's builder: borderless full screen, on the chosen monitor.
    pub fn builder(&self) -> egui::ViewportBuilder {
        let b = egui::ViewportBuilder::default()
            .with_title("hashmark projector")
            .with_decorations(false)
            .with_fullscreen(true);
        match self.monitor {
            Some(m) => b.with_monitor(m),
            None => b,
        }
    }
}

/// The calibration pattern of `calibrate projector` as a texture, one texel per projector
/// px and sampled nearest so the marker cells stay sharp.
#[cfg(feature = "vision")]
fn pattern_texture(ctx: &egui::Context, size: [u32; 2]) -> Result<TextureHandle, String> {
    use crate::vision::calibrate::projector::Pattern;
    let pattern = Pattern::for_size(size).map_err(|e| format!("calibration pattern: {e}"))?;
    let (w, h) = (size[0] as usize, size[1] as usize);
    let mut grey = Vec::with_capacity(w * h);
    for v in 0..h {
        for u in 0..w {
            grey.push((pattern.value(u as f64, v as f64) * 255.0) as u8);
        }
    }
    let image = egui::ColorImage::from_gray([w, h], &grey);
    Ok(ctx.load_texture(
        "hashmark-projector-pattern",
        image,
        egui::TextureOptions::NEAREST,
    ))
}

#[cfg(not(feature = "vision"))]
fn pattern_texture(_ctx: &egui::Context, _size: [u32; 2]) -> Result<TextureHandle, String> {
    Err("the calibration pattern needs the camera side (build with feature `vision`)".into())
}

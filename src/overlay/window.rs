//! The real window (eframe, OpenGL through glow) and its scripted mode: draw N frames,
//! take the window's own screenshot, save it as PNG with a JSON sidecar, exit. The sidecar
//! carries the transform used, so a test can find where each landing is in the picture.

use super::OverlayError;
use super::app::OverlayApp;
use eframe::egui::{self, ColorImage, ViewportCommand};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug)]
pub struct WindowOptions {
    pub title: String,
    /// Inner size of the window, points.
    pub size: [f32; 2],
    /// Save a screenshot here (PNG) after `exit_after_frames` frames, then exit.
    pub screenshot: Option<PathBuf>,
    /// Draw this many frames, then exit (after the screenshot, if any).
    pub exit_after_frames: Option<u32>,
}

/// Frames to wait for a requested screenshot before giving up: the integration delivers it
/// with the next frame it renders, so more than a handful means it never will.
const SCREENSHOT_PATIENCE: u32 = 240;

type Slot<T> = Arc<Mutex<Option<T>>>;

struct WindowApp {
    app: OverlayApp,
    opts: WindowOptions,
    frames: u32,
    requested_at: Option<u32>,
    /// The script has ended (outcome stored, close sent); frames until the window is gone
    /// change nothing.
    done: bool,
    shot: Slot<Arc<ColorImage>>,
    outcome: Slot<Result<(), OverlayError>>,
    /// Receives the frame statistics when eframe drops the app, however the window closed.
    stats_out: Slot<String>,
}

impl Drop for WindowApp {
    fn drop(&mut self) {
        if let Ok(mut s) = self.stats_out.lock() {
            *s = Some(self.app.summary());
        }
    }
}

impl WindowApp {
    fn finish(&mut self, ctx: &egui::Context, result: Result<(), OverlayError>) {
        self.done = true;
        if let Ok(mut o) = self.outcome.lock() {
            *o = Some(result);
        }
        ctx.send_viewport_cmd(ViewportCommand::Close);
    }

    fn scripted(&mut self, ctx: &egui::Context) {
        let Some(n) = self.opts.exit_after_frames else {
            return;
        };
        if self.done {
            return;
        }
        // Keep frames coming without input until the script is done.
        ctx.request_repaint();
        if self.frames < n.max(1) {
            return;
        }
        let Some(path) = self.opts.screenshot.clone() else {
            self.finish(ctx, Ok(()));
            return;
        };
        match self.requested_at {
            None => {
                let slot = self.shot.clone();
                let waker = ctx.clone();
                ctx.request_screenshot(move |image| {
                    if let Ok(mut s) = slot.lock() {
                        *s = Some(image);
                    }
                    waker.request_repaint();
                });
                self.requested_at = Some(self.frames);
            }
            Some(at) => {
                let image = self.shot.lock().ok().and_then(|mut s| s.take());
                if let Some(image) = image {
                    let ppp = ctx.pixels_per_point();
                    let result = save_screenshot(&path, &image, ppp, &self.app, self.frames);
                    self.finish(ctx, result);
                } else if self.frames - at > SCREENSHOT_PATIENCE {
                    self.finish(
                        ctx,
                        Err(OverlayError::Screenshot {
                            path,
                            message: format!(
                                "no screenshot arrived within {SCREENSHOT_PATIENCE} frames"
                            ),
                        }),
                    );
                }
            }
        }
    }
}

impl eframe::App for WindowApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.app.ui(ui);
        self.app.projector_viewport(ui.ctx());
        self.frames = self.frames.saturating_add(1);
        let ctx = ui.ctx().clone();
        self.scripted(&ctx);
    }

    fn raw_input_hook(&mut self, _ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        self.app.filter_raw_input(raw_input);
    }

    fn clear_color(&self, _visuals: &egui::Visuals) -> [f32; 4] {
        // Opaque: the screenshot is compared by colour.
        [0.0, 0.0, 0.0, 1.0]
    }
}

/// Writes the screenshot as RGB PNG and, beside it (`<path>.json`), what a checker needs to
/// find things in it: pixels per point, the table transform and view, and the verdict.
fn save_screenshot(
    path: &Path,
    image: &ColorImage,
    pixels_per_point: f32,
    app: &OverlayApp,
    frames: u32,
) -> Result<(), OverlayError> {
    let err = |message: String| OverlayError::Screenshot {
        path: path.to_path_buf(),
        message,
    };
    let [w, h] = image.size;
    let rgb: Vec<u8> = image
        .pixels
        .iter()
        .flat_map(|c| {
            let [r, g, b, _] = c.to_srgba_unmultiplied();
            [r, g, b]
        })
        .collect();
    let (wu, hu) = (
        u32::try_from(w).map_err(|e| err(e.to_string()))?,
        u32::try_from(h).map_err(|e| err(e.to_string()))?,
    );
    let img = image::RgbImage::from_raw(wu, hu, rgb)
        .ok_or_else(|| err(format!("{w}x{h} image with a wrong pixel count")))?;
    let mut png = std::io::Cursor::new(Vec::new());
    img.write_to(&mut png, image::ImageFormat::Png)
        .map_err(|e| err(e.to_string()))?;
    crate::files::write_atomic(path, png.get_ref())?;

    let (transform, view) = app
        .last_view()
        .map(|(t, r)| {
            (
                serde_json::json!({ "origin": [t.origin.x, t.origin.y], "scale": t.scale }),
                serde_json::json!([r.min.x, r.min.y, r.max.x, r.max.y]),
            )
        })
        .unwrap_or_default();
    let verdict = app
        .last_judged()
        .and_then(|j| j.verdict.as_ref().ok())
        .map(serde_json::to_value)
        .transpose()
        .map_err(|e| err(e.to_string()))?;
    let sidecar = serde_json::json!({
        "format": "hashmark-overlay-shot/1",
        "image_size": [w, h],
        "pixels_per_point": pixels_per_point,
        "transform_points": transform,
        "view_rect_points": view,
        "ship": app.state.selected_id(),
        "sides": app.state.sides.name(),
        "template": app.state.template.name(),
        "frames": frames,
        "stats": app.summary(),
        "ui": {
            "fps": app.stats.fps(),
            "frame_ms_mean": app.stats.ui_mean_ms(),
            "frame_ms_max": app.stats.ui_max.as_secs_f64() * 1e3,
        },
        "live": app.live.as_ref().map(|l| l.to_json()),
        "projector": app.projector.as_ref().map(|p| {
            let d = p.drawn();
            serde_json::json!({
                "size": p.projection.size,
                "homography": p.projection.homography,
                "in_main": p.in_main,
                "pattern": p.show_pattern,
                "image_rect_points": d.image_rect.map(|r| [r.min.x, r.min.y, r.max.x, r.max.y]),
                "landings": d.landings.len(),
                "templates": d.templates,
            })
        }),
        "verdict": verdict,
    });
    let mut side = path.as_os_str().to_owned();
    side.push(".json");
    let text = serde_json::to_string_pretty(&sidecar).map_err(|e| err(e.to_string()))?;
    crate::files::write_atomic(Path::new(&side), text.as_bytes())?;
    Ok(())
}

/// Opens the window and runs until it is closed (or the script ends). Returns the frame
/// statistics line for the caller to print.
pub fn run_window(app: OverlayApp, opts: WindowOptions) -> Result<String, OverlayError> {
    let outcome: Slot<Result<(), OverlayError>> = Arc::new(Mutex::new(None));
    let stats: Slot<String> = Arc::new(Mutex::new(None));
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title(opts.title.clone())
            .with_inner_size(opts.size),
        ..Default::default()
    };
    let window = WindowApp {
        app,
        opts: opts.clone(),
        frames: 0,
        requested_at: None,
        done: false,
        shot: Arc::new(Mutex::new(None)),
        outcome: outcome.clone(),
        stats_out: stats.clone(),
    };
    eframe::run_native(
        &opts.title,
        native,
        Box::new(move |_cc| Ok(Box::new(window))),
    )
    .map_err(|e| OverlayError::Window(e.to_string()))?;
    let result = outcome.lock().ok().and_then(|mut o| o.take());
    result.unwrap_or(Ok(()))?;
    Ok(stats
        .lock()
        .ok()
        .and_then(|mut s| s.take())
        .unwrap_or_default())
}

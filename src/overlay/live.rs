//! The UI side of a live source: takes the newest frame from the feed at the start of a UI
//! pass, swaps its scene into the overlay state (the choice follows the ship id), uploads
//! the picture for the camera view, and measures the latency from the frame's grab to the
//! end of the UI pass that first paints its verdict.

use super::feed::{FeedCounts, FeedReceiver, LiveFrame, Projector, SourceStatus};
use super::state::OverlayState;
use crate::Models;
use crate::rules::Table;
use eframe::egui::{self, RichText, TextureHandle, TextureOptions, Ui};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Which picture the central area shows (key V cycles, or the tabs above it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewMode {
    /// The camera frame beside the top-down table.
    Split,
    Camera,
    Table,
}

impl ViewMode {
    pub fn next(self) -> ViewMode {
        match self {
            ViewMode::Split => ViewMode::Camera,
            ViewMode::Camera => ViewMode::Table,
            ViewMode::Table => ViewMode::Split,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ViewMode::Split => "camera + table",
            ViewMode::Camera => "camera",
            ViewMode::Table => "table",
        }
    }
}

/// The last value and a median over a sliding window (milliseconds).
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub last: Option<f64>,
    window: VecDeque<f64>,
    pub count: u64,
}

impl Samples {
    /// Enough for a minute or two of a camera: the median reflects now, not the start.
    const WINDOW: usize = 600;

    pub fn push(&mut self, d: Duration) {
        let ms = d.as_secs_f64() * 1e3;
        self.last = Some(ms);
        self.count += 1;
        if self.window.len() == Self::WINDOW {
            self.window.pop_front();
        }
        self.window.push_back(ms);
    }

    pub fn median(&self) -> Option<f64> {
        if self.window.is_empty() {
            return None;
        }
        let mut v: Vec<f64> = self.window.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        Some(if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        })
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "last_ms": self.last,
            "median_ms": self.median(),
            "samples": self.count,
        })
    }
}

/// The live source as the UI holds it.
pub struct LiveView {
    rx: FeedReceiver,
    /// The calibrated camera, for drawing the scene over the frame.
    pub project: Option<Projector>,
    /// Height of a base's top above the mat (mm): where ship outlines are projected.
    pub base_top_mm: f64,
    texture: Option<TextureHandle>,
    camera_size: Option<[u32; 2]>,
    pub mode: ViewMode,
    pub status: SourceStatus,
    /// Why the latest frame gave no scene (a detection error, a scene the rules refuse).
    pub frame_error: Option<String>,
    /// The latest frame shown: its number, whether it was a full search.
    pub last_frame: Option<(u64, bool)>,
    /// The latest full search's frame check: whether the camera still sees the table as
    /// calibrated.
    pub table_check: Option<super::feed::TableCheckNote>,
    /// Grab to verdict on screen.
    pub latency: Samples,
    /// Grab to the end of detection.
    pub detect: Samples,
    /// Grab to posted: detection plus making the camera view's picture (the worker's whole
    /// share; the rest of the latency is waiting for the UI's next frame and painting).
    pub worker: Samples,
    pub frames_shown: u64,
    /// The grab time of the scene taken in this pass, until the pass ends.
    pending: Option<Instant>,
}

impl LiveView {
    /// The worker wants the projector dark (it is grabbing for a full search).
    pub fn projector_blank(&self) -> bool {
        self.rx.blank_requested()
    }

    /// Tells the worker one more frame went out with the projector dark.
    pub fn painted_dark(&self) {
        self.rx.painted_dark();
    }

    pub fn new(rx: FeedReceiver, project: Option<Projector>) -> LiveView {
        LiveView {
            rx,
            project,
            base_top_mm: Models::builtin().bases.base_top_height_mm,
            texture: None,
            camera_size: None,
            mode: ViewMode::Split,
            status: SourceStatus::Starting("starting…".into()),
            frame_error: None,
            last_frame: None,
            table_check: None,
            latency: Samples::default(),
            detect: Samples::default(),
            worker: Samples::default(),
            frames_shown: 0,
            pending: None,
        }
    }

    /// The frame's texture and the camera frame size its pixels stand for.
    pub fn texture(&self) -> Option<(&TextureHandle, [u32; 2])> {
        Some((self.texture.as_ref()?, self.camera_size?))
    }

    pub fn counts(&self) -> FeedCounts {
        self.rx.counts()
    }

    /// Start of a UI pass: the status, and the newest frame if one came. Returns whether
    /// the table changed.
    pub fn poll(&mut self, ctx: &egui::Context, state: &mut OverlayState) -> bool {
        self.rx.set_waker(ctx);
        self.status = self.rx.status();
        match self.rx.take() {
            Some(frame) => self.accept(ctx, frame, state),
            None => false,
        }
    }

    fn accept(&mut self, ctx: &egui::Context, frame: LiveFrame, state: &mut OverlayState) -> bool {
        if let Some(img) = frame.image {
            match &mut self.texture {
                Some(t) => t.set(img.image, TextureOptions::LINEAR),
                None => {
                    self.texture =
                        Some(ctx.load_texture("camera-frame", img.image, TextureOptions::LINEAR))
                }
            }
            self.camera_size = Some(img.camera_size);
        }
        let detected = match frame.detection {
            Ok(d) => d,
            Err(e) => {
                self.frame_error = Some(format!("frame {}: {e}", frame.index));
                return false;
            }
        };
        match Table::from_scene(&detected.scene, Models::builtin()) {
            Ok(table) => {
                state.replace_table(detected.scene, table);
                self.frame_error = None;
                self.last_frame = Some((frame.index, detected.full_search));
                if detected.table_check.is_some() {
                    self.table_check = detected.table_check;
                }
                self.detect
                    .push(frame.detected.saturating_duration_since(frame.grabbed));
                self.worker
                    .push(frame.posted.saturating_duration_since(frame.grabbed));
                self.pending = Some(frame.grabbed);
                true
            }
            Err(e) => {
                self.frame_error = Some(format!("frame {}: scene refused: {e}", frame.index));
                false
            }
        }
    }

    /// End of the UI pass that painted the new scene: its latency is complete.
    pub fn pass_done(&mut self) {
        if let Some(grabbed) = self.pending.take() {
            self.latency.push(grabbed.elapsed());
            self.frames_shown += 1;
        }
    }

    /// The live lines of the side panel.
    pub fn panel_ui(&self, ui: &mut Ui) {
        let status = match self.status.banner() {
            None => RichText::new("live: running"),
            Some((text, true)) => {
                RichText::new(format!("live: {text}")).color(super::paint::ILLEGAL)
            }
            Some((text, false)) => RichText::new(format!("live: {text}")),
        };
        ui.label(status);
        // A camera moved since calibration puts every position off: said in red, at the
        // top, with what to do; otherwise the markers' figures, small.
        match &self.table_check {
            Some(c) if c.moved => {
                ui.label(
                    RichText::new(format!(
                        "CAMERA MOVED, every position is off; recalibrate the table (K): {}",
                        c.text
                    ))
                    .color(super::paint::ILLEGAL)
                    .strong(),
                );
            }
            Some(c) => {
                ui.label(RichText::new(&c.text).small());
            }
            None => {}
        }
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
        if let Some((index, full)) = self.last_frame {
            ui.label(
                RichText::new(format!(
                    "frame {index} ({}), detect {} ms",
                    if full { "full search" } else { "re-fit" },
                    ms(self.detect.last)
                ))
                .small(),
            );
        }
        ui.label(
            RichText::new(format!(
                "latency grab->screen {} ms (median {} ms; worker {} ms)",
                ms(self.latency.last),
                ms(self.latency.median()),
                ms(self.worker.median())
            ))
            .small(),
        );
        if let Some(e) = &self.frame_error {
            ui.label(RichText::new(e).color(super::paint::ILLEGAL).small());
        }
    }

    /// What the screenshot sidecar records about the live source.
    pub fn to_json(&self) -> serde_json::Value {
        let counts = self.counts();
        serde_json::json!({
            "status": self.status.name(),
            "banner": self.status.banner().map(|(t, _)| t),
            "frame_error": self.frame_error,
            "last_frame": self.last_frame.map(|(i, _)| i),
            "frames_sent": counts.sent,
            "frames_overwritten": counts.overwritten,
            "frames_shown": self.frames_shown,
            "latency": self.latency.to_json(),
            "detect": self.detect.to_json(),
            "worker": self.worker.to_json(),
            "view": self.mode.name(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_a_window() {
        let mut s = Samples::default();
        assert_eq!(s.median(), None);
        for ms in [5, 1, 3, 100] {
            s.push(Duration::from_millis(ms));
        }
        assert_eq!(s.median(), Some(4.0));
        assert_eq!(s.last, Some(100.0));
        s.push(Duration::from_millis(2));
        assert_eq!(s.median(), Some(3.0));
    }

    #[test]
    fn view_modes_cycle() {
        let mut m = ViewMode::Split;
        for _ in 0..3 {
            m = m.next();
        }
        assert_eq!(m, ViewMode::Split);
    }
}

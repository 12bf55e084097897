//! The live feed between the detection worker (`source`) and the UI: a one-slot mailbox
//! that keeps only the newest frame, and the source's status (running, lost, ended).
//!
//! Not an `mpsc` queue: a queue keeps every frame, so a UI that stops repainting (a hidden
//! window) would pile up megabytes of camera images, and a slow UI would show the table as
//! it was seconds ago. Here the worker overwrites the slot, the UI takes what is there when
//! it paints, and neither ever waits on the other for longer than a pointer swap. The
//! worker wakes the UI through the egui context, so an idle window repaints only when a
//! frame arrives.
//!
//! No OpenCV here: the UI side builds and tests without the vision feature; the camera
//! model reaches the camera view as a plain projection function.

use crate::scene::Scene;
use eframe::egui::{self, ColorImage};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Table mm (x, y, z) to camera pixels, `None` behind the camera: `Camera::project` on the
/// vision side, kept as a function so the UI does not depend on OpenCV.
pub type Projector = Arc<dyn Fn([f64; 3]) -> Option<[f64; 2]> + Send + Sync>;

/// The frame as the camera view shows it.
#[derive(Clone)]
pub struct LiveImage {
    /// RGB, possibly downscaled from the camera frame (see `camera_size`).
    pub image: Arc<ColorImage>,
    /// The camera frame's size, px: projected points are in these pixels.
    pub camera_size: [u32; 2],
}

/// What detection made of one frame.
#[derive(Clone, Debug)]
pub struct Detected {
    pub scene: Scene,
    /// Whether this frame ran the full search (else the cheap re-fit of known ships).
    pub full_search: bool,
    /// With a full search: whether the frame showed the mat markers where the calibration
    /// puts them (`vision::calibrate::check`, in words).
    pub table_check: Option<TableCheckNote>,
}

/// The frame check as the UI shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct TableCheckNote {
    /// The camera or the mat moved since calibration: every position is off.
    pub moved: bool,
    pub text: String,
}

/// One frame from the worker.
#[derive(Clone)]
pub struct LiveFrame {
    /// The frame's number in the source (skipped frames count).
    pub index: u64,
    /// When the frame was read from the source: latency is measured from here.
    pub grabbed: Instant,
    /// When detection finished.
    pub detected: Instant,
    /// When the frame was posted (after the picture for the camera view was made).
    pub posted: Instant,
    /// The scene, or why detection failed on this frame (shown, not fatal).
    pub detection: Result<Detected, String>,
    pub image: Option<LiveImage>,
}

impl LiveFrame {
    pub fn detect_time(&self) -> Duration {
        self.detected.saturating_duration_since(self.grabbed)
    }
}

/// Where the source stands. The UI shows anything but `Running` as a banner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceStatus {
    /// Opening the source and setting up detection (the rectification maps take a moment).
    Starting(String),
    Running,
    /// A camera that gives no frames: the worker retries every second. The text is the
    /// banner, e.g. "camera 0 lost, reconnecting…".
    Lost(String),
    /// The source is done (the end of a video, an image detected once); the last scene
    /// stays on screen.
    Ended(String),
    /// The source cannot be used (an unreadable file, a calibration that does not fit);
    /// the worker has stopped.
    Failed(String),
}

impl SourceStatus {
    /// The banner's text and whether it is an error (red) or a note.
    pub fn banner(&self) -> Option<(&str, bool)> {
        match self {
            SourceStatus::Running => None,
            SourceStatus::Starting(s) | SourceStatus::Ended(s) => Some((s, false)),
            SourceStatus::Lost(s) | SourceStatus::Failed(s) => Some((s, true)),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            SourceStatus::Starting(_) => "starting",
            SourceStatus::Running => "running",
            SourceStatus::Lost(_) => "lost",
            SourceStatus::Ended(_) => "ended",
            SourceStatus::Failed(_) => "failed",
        }
    }
}

struct Slot {
    frame: Option<LiveFrame>,
    status: SourceStatus,
    /// Frames sent, and frames overwritten before the UI took them.
    sent: u64,
    overwritten: u64,
    waker: Option<egui::Context>,
}

struct Shared {
    slot: Mutex<Slot>,
    /// Set when the UI side is dropped: the worker stops at its next frame.
    closed: AtomicBool,
    /// The worker asks for a dark projector while it grabs a frame for a full search (the
    /// projected outlines would otherwise be in the picture: on rendered tables they lost
    /// 1-4 ships of 5-8 and moved others by up to 4 mm); the UI counts the frames it has
    /// painted dark since.
    blank: AtomicBool,
    dark: AtomicU64,
}

impl Shared {
    /// A poisoned lock only means the other side panicked mid-swap; the slot is still whole.
    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The worker's end of the feed.
#[derive(Clone)]
pub struct FeedSender {
    shared: Arc<Shared>,
}

/// The UI's end of the feed. Dropping it tells the worker to stop.
pub struct FeedReceiver {
    shared: Arc<Shared>,
}

/// A new feed, in the `Starting` state.
pub fn feed() -> (FeedSender, FeedReceiver) {
    let shared = Arc::new(Shared {
        slot: Mutex::new(Slot {
            frame: None,
            status: SourceStatus::Starting("starting…".into()),
            sent: 0,
            overwritten: 0,
            waker: None,
        }),
        closed: AtomicBool::new(false),
        blank: AtomicBool::new(false),
        dark: AtomicU64::new(0),
    });
    (
        FeedSender {
            shared: shared.clone(),
        },
        FeedReceiver { shared },
    )
}

impl FeedSender {
    /// Puts a frame in the slot, replacing one the UI has not taken, and wakes the UI.
    pub fn send(&self, frame: LiveFrame) {
        let waker = {
            let mut s = self.shared.lock();
            if s.frame.replace(frame).is_some() {
                s.overwritten += 1;
            }
            s.sent += 1;
            s.waker.clone()
        };
        if let Some(w) = waker {
            w.request_repaint();
        }
    }

    pub fn set_status(&self, status: SourceStatus) {
        let waker = {
            let mut s = self.shared.lock();
            if s.status == status {
                return;
            }
            s.status = status;
            s.waker.clone()
        };
        if let Some(w) = waker {
            w.request_repaint();
        }
    }

    /// Asks the UI to darken the projector (or lets it light again).
    pub fn set_blank(&self, on: bool) {
        self.shared.blank.store(on, Ordering::SeqCst);
        if let Some(w) = &self.shared.lock().waker {
            w.request_repaint();
        }
    }

    /// How many UI frames went out with the projector dark so far.
    pub fn dark_frames(&self) -> u64 {
        self.shared.dark.load(Ordering::SeqCst)
    }

    /// Waits until the UI has painted the projector dark on `frames` frames since now, or
    /// `timeout` passed (no projector window, a UI that stopped painting); true if it did.
    pub fn wait_dark(&self, frames: u64, timeout: Duration) -> bool {
        let start = self.shared.dark.load(Ordering::SeqCst);
        let end = Instant::now() + timeout;
        while Instant::now() < end && !self.is_closed() {
            if self.shared.dark.load(Ordering::SeqCst) >= start + frames {
                return true;
            }
            if let Some(w) = &self.shared.lock().waker {
                w.request_repaint();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    }

    /// The UI is gone: stop.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Relaxed)
    }

    /// Sleeps up to `d`, in short steps so that a closed UI is noticed; false if closed.
    pub fn sleep(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        loop {
            if self.is_closed() {
                return false;
            }
            let now = Instant::now();
            if now >= end {
                return true;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(20)));
        }
    }
}

/// Counters of the feed, for the panel and the screenshot sidecar.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeedCounts {
    pub sent: u64,
    /// Frames replaced in the slot before the UI took them (the UI was slower).
    pub overwritten: u64,
}

impl FeedReceiver {
    /// The newest frame, if one came since the last call. Never waits for the worker.
    pub fn take(&self) -> Option<LiveFrame> {
        self.shared.lock().frame.take()
    }

    pub fn status(&self) -> SourceStatus {
        self.shared.lock().status.clone()
    }

    pub fn counts(&self) -> FeedCounts {
        let s = self.shared.lock();
        FeedCounts {
            sent: s.sent,
            overwritten: s.overwritten,
        }
    }

    /// Whether the worker wants the projector dark now.
    pub fn blank_requested(&self) -> bool {
        self.shared.blank.load(Ordering::SeqCst)
    }

    /// One more UI frame painted with the projector dark.
    pub fn painted_dark(&self) {
        self.shared.dark.fetch_add(1, Ordering::SeqCst);
    }

    /// Lets the worker wake this context when something arrives.
    pub fn set_waker(&self, ctx: &egui::Context) {
        let mut s = self.shared.lock();
        if s.waker.is_none() {
            s.waker = Some(ctx.clone());
        }
    }
}

impl Drop for FeedReceiver {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::PlayArea;

    fn frame(index: u64) -> LiveFrame {
        let now = Instant::now();
        LiveFrame {
            index,
            grabbed: now,
            detected: now,
            posted: now,
            detection: Ok(Detected {
                scene: Scene::new(PlayArea {
                    width_mm: 914.4,
                    height_mm: 914.4,
                }),
                full_search: true,
                table_check: None,
            }),
            image: None,
        }
    }

    #[test]
    fn keeps_only_the_newest_frame() {
        let (tx, rx) = feed();
        assert!(rx.take().is_none());
        for i in 0..3 {
            tx.send(frame(i));
        }
        assert_eq!(rx.take().map(|f| f.index), Some(2));
        assert!(rx.take().is_none());
        assert_eq!(
            rx.counts(),
            FeedCounts {
                sent: 3,
                overwritten: 2
            }
        );
    }

    #[test]
    fn dropping_the_receiver_stops_the_sender() {
        let (tx, rx) = feed();
        assert!(!tx.is_closed());
        tx.set_status(SourceStatus::Lost("camera 0 lost, reconnecting…".into()));
        assert_eq!(rx.status().name(), "lost");
        drop(rx);
        assert!(tx.is_closed());
        assert!(!tx.sleep(Duration::from_secs(5)));
    }
}

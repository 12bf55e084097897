//! The detection worker: a thread that owns the source (an image, a video file, a camera)
//! and the detection `Stream`, and posts each frame's scene and picture to the feed. The UI
//! never waits on it: a full search costs a few hundred milliseconds at 1080p, far longer
//! than a UI frame.
//!
//! The worker is a small state machine over two traits, so that its behaviour (pacing, the
//! end of a video, a camera that stops and comes back) is tested with fake sources and a
//! fake detector instead of a real camera:
//!
//! - starting: set up detection (the rectification maps), open the source. A file that
//!   cannot be opened fails (red banner); a camera that cannot be opened is `Lost`.
//! - running: read, detect, post. A video plays at its own frame rate: when detection is
//!   slower, the frames it had no time for are skipped (grabbed, not decoded), so the table
//!   on screen is the table now, not a growing backlog. An image is detected once.
//! - lost (cameras only): a read gave nothing (unplugged). The banner says "camera N lost,
//!   reconnecting…" and the worker tries to open it again every second.
//! - ended: the video's last frame was read; the worker stops and its last scene stays on
//!   screen (videos do not loop).
//!
//! The worker also stops when the UI drops its end of the feed.

use super::OverlayError;
use super::feed::{
    Detected, FeedReceiver, FeedSender, LiveFrame, LiveImage, Projector, SourceStatus, feed,
};
use super::frame_slot::{FrameSlot, Tee};
use super::live::LiveView;
use crate::Models;
use crate::vision::VisionError;
use crate::vision::detect::stream::Stream;
use crate::vision::detect::{Calibrated, Detector};
use eframe::egui::ColorImage;
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::{imgproc, videoio};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A source with frames to detect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveSource {
    Image(PathBuf),
    Video(PathBuf),
    Camera(i32),
}

impl LiveSource {
    pub fn label(&self) -> String {
        match self {
            LiveSource::Image(p) => format!("image {}", p.display()),
            LiveSource::Video(p) => format!("video {}", p.display()),
            LiveSource::Camera(n) => format!("camera {n}"),
        }
    }
}

/// How a source delivers its frames.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// One picture.
    Still,
    /// A file, at this many frames per second.
    File { fps: f64 },
    /// A live device: it sets the pace; a failed read means it was lost.
    Camera,
}

/// Where frames come from. `open` may be called again after `read` gave nothing (a
/// camera reconnecting).
pub trait FrameSource: Send {
    fn label(&self) -> String;
    fn kind(&self) -> Kind;
    fn open(&mut self) -> Result<(), String>;
    /// The next frame; `Ok(None)` at the end of a file or when a camera gives nothing.
    fn read(&mut self) -> Result<Option<Mat>, String>;
    /// Passes over one frame without decoding it; false at the end.
    fn skip(&mut self) -> bool;
    fn close(&mut self);
}

/// Detection over a stream of frames; `Stream` is the real one.
pub trait FrameDetector {
    fn push(&mut self, frame: &Mat) -> Result<Detected, String>;
    /// Whether the next frame gets the full search (and so must be grabbed without the
    /// projector's light); re-fits near known bases tolerate it less badly.
    fn next_is_full(&self) -> bool {
        false
    }
}

impl FrameDetector for Stream<'_> {
    fn push(&mut self, frame: &Mat) -> Result<Detected, String> {
        Stream::push(self, frame)
            .map(|f| Detected {
                scene: f.scene,
                full_search: f.full,
                table_check: f.table_check.map(|c| super::feed::TableCheckNote {
                    moved: c.is_moved(),
                    text: c.describe(),
                }),
            })
            .map_err(|e| e.to_string())
    }
    fn next_is_full(&self) -> bool {
        Stream::next_is_full(self)
    }
}

/// How the worker runs.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Videos play at their frame rate (true), or every frame as fast as detection goes.
    pub realtime: bool,
    /// How often to try a lost camera again.
    pub retry_every: Duration,
    /// Frames wider than this are scaled down for the camera view (the texture upload and
    /// the RGB conversion cost a few ms per frame at full 1080p).
    pub display_width: u32,
    /// A projector lights the table: darken it while grabbing a camera frame for a full
    /// search (two dark UI frames, then one camera frame dropped as possibly exposed
    /// before the dark).
    pub blank_projector: bool,
}

impl Default for WorkerOptions {
    fn default() -> WorkerOptions {
        WorkerOptions {
            realtime: true,
            retry_every: Duration::from_secs(1),
            display_width: 1280,
            blank_projector: false,
        }
    }
}

/// Why the worker stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerEnd {
    /// The source ran out (a video's end, an image): this many frames were read.
    Ended { frames: u64 },
    /// The UI went away.
    Closed,
    /// The source or the detection setup could not be used.
    Failed(String),
}

/// The camera frame as the camera view's picture: RGB, at most `max_width` wide.
pub fn display_image(frame: &Mat, max_width: u32) -> Result<LiveImage, VisionError> {
    let size = frame.size()?;
    let camera_size = [size.width.max(0) as u32, size.height.max(0) as u32];
    let small;
    let shown = if size.width > max_width as i32 && max_width > 0 {
        small = crate::vision::cv::downscale(frame, max_width as i32)?;
        &small
    } else {
        frame
    };
    let code = match shown.channels() {
        1 => imgproc::COLOR_GRAY2RGB,
        4 => imgproc::COLOR_BGRA2RGB,
        _ => imgproc::COLOR_BGR2RGB,
    };
    let mut rgb = Mat::default();
    imgproc::cvt_color_def(shown, &mut rgb, code)?;
    let s = rgb.size()?;
    let (w, h) = (s.width.max(0) as usize, s.height.max(0) as usize);
    let bytes = rgb.data_bytes()?;
    if bytes.len() != w * h * 3 {
        return Err(VisionError::Invalid(format!(
            "{w}x{h} frame with {} bytes",
            bytes.len()
        )));
    }
    Ok(LiveImage {
        image: Arc::new(ColorImage::from_rgb([w, h], bytes)),
        camera_size,
    })
}

/// Runs the worker until the source ends, fails, or the UI goes away.
pub fn run_worker<S: FrameSource, D: FrameDetector>(
    source: &mut S,
    make_detector: impl FnOnce() -> Result<D, String>,
    tx: &FeedSender,
    opts: &WorkerOptions,
) -> WorkerEnd {
    let label = source.label();
    // Whether a failed open is retried; the frame rate is only known once a file is open.
    let is_camera = source.kind() == Kind::Camera;
    let fail = |message: String| {
        tx.set_status(SourceStatus::Failed(message.clone()));
        WorkerEnd::Failed(message)
    };
    tx.set_status(SourceStatus::Starting(format!(
        "{label}: setting up detection…"
    )));
    let mut detector = match make_detector() {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    tx.set_status(SourceStatus::Starting(format!("opening {label}…")));
    if let Err(e) = source.open() {
        if !is_camera {
            return fail(format!("cannot open {label}: {e}"));
        }
        let banner = format!("{label} not available, retrying every second…");
        if !reconnect(source, tx, opts, banner) {
            return WorkerEnd::Closed;
        }
    }
    let kind = source.kind();
    let mut index: u64 = 0;
    let mut started: Option<Instant> = None;
    loop {
        if tx.is_closed() {
            source.close();
            return WorkerEnd::Closed;
        }
        let blank = opts.blank_projector && kind == Kind::Camera && detector.next_is_full();
        if blank {
            tx.set_blank(true);
            tx.wait_dark(2, Duration::from_millis(300));
            source.skip();
        }
        let read = source.read();
        if blank {
            tx.set_blank(false);
        }
        let frame = match read {
            Ok(Some(f)) => f,
            Ok(None) | Err(_) if kind == Kind::Camera => {
                source.close();
                let banner = format!("{label} lost, reconnecting…");
                if !reconnect(source, tx, opts, banner) {
                    return WorkerEnd::Closed;
                }
                continue;
            }
            Err(e) => return fail(format!("{label}: {e}")),
            Ok(None) if index == 0 => {
                return fail(format!("{label} gave no frame OpenCV can decode"));
            }
            Ok(None) => {
                source.close();
                tx.set_status(SourceStatus::Ended(format!(
                    "end of {label} after {index} frames (stopped; the last scene stays)"
                )));
                return WorkerEnd::Ended { frames: index };
            }
        };
        let grabbed = Instant::now();
        tx.set_status(SourceStatus::Running);
        // A still image is a table that does not change: shown to the stream twice (the
        // second time a cheap re-fit), so the tracker confirms what it holds.
        let detection = if kind == Kind::Still {
            detector.push(&frame).and_then(|_| detector.push(&frame))
        } else {
            detector.push(&frame)
        };
        let detected = Instant::now();
        let image = display_image(&frame, opts.display_width).ok();
        tx.send(LiveFrame {
            index,
            grabbed,
            detected,
            posted: Instant::now(),
            detection,
            image,
        });
        index += 1;
        match kind {
            Kind::Still => {
                source.close();
                tx.set_status(SourceStatus::Ended(format!("{label}: detected once")));
                return WorkerEnd::Ended { frames: 1 };
            }
            Kind::File { fps } if opts.realtime => {
                let t0 = *started.get_or_insert(grabbed);
                let due = |i: u64| t0 + Duration::from_secs_f64(i as f64 / fps);
                let now = Instant::now();
                if now < due(index) {
                    if !tx.sleep(due(index) - now) {
                        source.close();
                        return WorkerEnd::Closed;
                    }
                } else {
                    // Behind: skip to the frame that is due now.
                    let behind = ((now - t0).as_secs_f64() * fps).floor() as u64;
                    while index < behind && source.skip() {
                        index += 1;
                    }
                }
            }
            Kind::File { .. } | Kind::Camera => {}
        }
    }
}

/// Shows the banner and tries to open the source every `retry_every` until it opens;
/// false when the UI went away meanwhile.
fn reconnect<S: FrameSource>(
    source: &mut S,
    tx: &FeedSender,
    opts: &WorkerOptions,
    banner: String,
) -> bool {
    tx.set_status(SourceStatus::Lost(banner));
    loop {
        if !tx.sleep(opts.retry_every) {
            return false;
        }
        if source.open().is_ok() {
            return true;
        }
    }
}

/// A video file or a camera through OpenCV.
pub struct Capture {
    source: LiveSource,
    cap: Option<videoio::VideoCapture>,
}

impl Capture {
    pub fn new(source: LiveSource) -> Capture {
        Capture { source, cap: None }
    }
}

/// When a file does not say its frame rate (an image sequence), it plays at this one.
const DEFAULT_FPS: f64 = 25.0;

impl FrameSource for Capture {
    fn label(&self) -> String {
        self.source.label()
    }

    fn kind(&self) -> Kind {
        match &self.source {
            LiveSource::Image(_) => Kind::Still,
            LiveSource::Camera(_) => Kind::Camera,
            LiveSource::Video(_) => {
                let fps = self
                    .cap
                    .as_ref()
                    .and_then(|c| c.get(videoio::CAP_PROP_FPS).ok())
                    .filter(|f| f.is_finite() && *f > 0.5 && *f < 1000.0)
                    .unwrap_or(DEFAULT_FPS);
                Kind::File { fps }
            }
        }
    }

    fn open(&mut self) -> Result<(), String> {
        self.close();
        let mut cap = match &self.source {
            LiveSource::Video(p) => videoio::VideoCapture::from_file(p, videoio::CAP_ANY),
            LiveSource::Camera(n) => videoio::VideoCapture::new(*n, videoio::CAP_ANY),
            LiveSource::Image(_) => return Ok(()),
        }
        .map_err(|e| e.to_string())?;
        if !cap.is_opened().map_err(|e| e.to_string())? {
            return Err("OpenCV cannot open it".into());
        }
        if matches!(self.source, LiveSource::Camera(_)) {
            // A camera's driver queues frames while a full search runs; with a queue the
            // next read would be a frame from before the search. Not every backend honours
            // this, hence no error when it is refused.
            let _ = cap.set(videoio::CAP_PROP_BUFFERSIZE, 1.0);
        }
        self.cap = Some(cap);
        Ok(())
    }

    fn read(&mut self) -> Result<Option<Mat>, String> {
        if let LiveSource::Image(p) = &self.source {
            return read_image(p).map(Some).map_err(|e| e.to_string());
        }
        let Some(cap) = &mut self.cap else {
            return Ok(None);
        };
        let mut frame = Mat::default();
        match cap.read(&mut frame) {
            Ok(true) if !frame.empty() => Ok(Some(frame)),
            Ok(_) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    fn skip(&mut self) -> bool {
        self.cap.as_mut().is_some_and(|c| c.grab().unwrap_or(false))
    }

    fn close(&mut self) {
        if let Some(mut c) = self.cap.take() {
            let _ = c.release();
        }
    }
}

/// Reads an image file as BGR.
pub fn read_image(path: &Path) -> Result<Mat, VisionError> {
    let bytes = std::fs::read(path)
        .map_err(|e| VisionError::Invalid(format!("cannot read {}: {e}", path.display())))?;
    crate::vision::cv::decode(&bytes).map_err(|e| {
        VisionError::Invalid(format!(
            "{} is not an image OpenCV can read ({e})",
            path.display()
        ))
    })
}

/// The calibrated camera as the camera view's projection.
pub fn projector(cal: &Calibrated) -> Projector {
    let camera = cal.camera.clone();
    Arc::new(move |p| camera.project(p))
}

/// Everything a live overlay needs to start.
pub struct LiveConfig {
    pub source: LiveSource,
    pub calibration: Calibrated,
    /// A frame of the empty table from the same camera.
    pub background: Option<Mat>,
    /// A full search every this many frames, re-fits between.
    pub full_every: u64,
    /// The full search on a thread of its own beside the re-fits instead (see
    /// [`Stream::beside`]; `full_every` is then unused).
    pub search_beside: bool,
    pub options: WorkerOptions,
    /// Where the full frames go for the calibration panel (see `frame_slot`).
    pub frames: FrameSlot,
}

/// Loads the calibration directory with a message that names it.
pub fn load_calibration(dir: &Path) -> Result<Calibrated, OverlayError> {
    Calibrated::load(dir).map_err(|e| OverlayError::Calibration {
        dir: dir.to_path_buf(),
        message: e.to_string(),
    })
}

/// Starts the worker thread on an OpenCV source; the `LiveView` is the UI's end.
pub fn start(config: LiveConfig) -> Result<(LiveView, JoinHandle<WorkerEnd>), OverlayError> {
    let project = projector(&config.calibration);
    let (rx, handle) = spawn(config)?;
    Ok((LiveView::new(rx, Some(project)), handle))
}

/// Starts the worker thread and returns the feed's receiving end (what `start` wraps for
/// the UI; tests read it directly).
pub fn spawn(config: LiveConfig) -> Result<(FeedReceiver, JoinHandle<WorkerEnd>), OverlayError> {
    let (tx, rx) = feed();
    let LiveConfig {
        source,
        calibration,
        background,
        full_every,
        search_beside,
        options,
        frames,
    } = config;
    let handle = std::thread::Builder::new()
        .name("hashmark-detect".into())
        .spawn(move || {
            let mut capture = Tee {
                inner: Capture::new(source),
                slot: frames,
            };
            let make = move || {
                let mut d = Detector::new(calibration, Models::builtin())
                    .map_err(|e| format!("detection setup: {e}"))?;
                if let Some(bg) = &background {
                    d.set_background(bg)
                        .map_err(|e| format!("background: {e}"))?;
                }
                if search_beside {
                    Stream::beside(d).map_err(|e| format!("detection setup: {e}"))
                } else {
                    Ok(Stream::new(d, full_every))
                }
            };
            run_worker(&mut capture, make, &tx, &options)
        })
        .map_err(|e| OverlayError::Worker(e.to_string()))?;
    Ok((rx, handle))
}

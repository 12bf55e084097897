//! The full camera frame for the calibration panel. The feed carries only an RGB picture,
//! downscaled for display; calibration needs the BGR frame at the camera's own resolution
//! (the intrinsics and the table pose are in those pixels). The worker's source is wrapped
//! in a `Tee` that copies each frame it reads into a `FrameSlot`, but only while the panel
//! asks for frames: a 1080p copy costs about a millisecond, which normal play should not pay.
//! A still image is always kept, since it is read once, before anyone could ask.

use super::source::{FrameSource, Kind};
use opencv::core::Mat;
use opencv::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The newest full camera frame, shared by the worker and the calibration panel.
#[derive(Clone, Default)]
pub struct FrameSlot(Arc<Inner>);

#[derive(Default)]
struct Inner {
    frame: Mutex<Option<Mat>>,
    wanted: AtomicBool,
}

impl FrameSlot {
    pub fn new() -> FrameSlot {
        FrameSlot::default()
    }

    /// Whether the worker should copy frames here (the calibration panel is open).
    pub fn want(&self, on: bool) {
        self.0.wanted.store(on, Ordering::Relaxed);
    }

    pub fn wanted(&self) -> bool {
        self.0.wanted.load(Ordering::Relaxed)
    }

    /// Keeps this frame as the newest (tests feed rendered frames through here too).
    pub fn put(&self, frame: Mat) {
        *self.0.frame.lock().unwrap_or_else(|e| e.into_inner()) = Some(frame);
    }

    /// A copy of the newest frame: the caller may hand it to another thread while the
    /// worker keeps writing.
    pub fn latest(&self) -> Option<Mat> {
        let guard = self.0.frame.lock().unwrap_or_else(|e| e.into_inner());
        guard.as_ref().and_then(|m| m.try_clone().ok())
    }
}

/// A source whose frames are also copied into a `FrameSlot`.
pub struct Tee<S> {
    pub inner: S,
    pub slot: FrameSlot,
}

impl<S: FrameSource> FrameSource for Tee<S> {
    fn label(&self) -> String {
        self.inner.label()
    }

    fn kind(&self) -> Kind {
        self.inner.kind()
    }

    fn open(&mut self) -> Result<(), String> {
        self.inner.open()
    }

    fn read(&mut self) -> Result<Option<Mat>, String> {
        let frame = self.inner.read()?;
        if let Some(f) = &frame
            && (self.slot.wanted() || self.inner.kind() == Kind::Still)
            && let Ok(copy) = f.try_clone()
        {
            self.slot.put(copy);
        }
        Ok(frame)
    }

    fn skip(&mut self) -> bool {
        self.inner.skip()
    }

    fn close(&mut self) {
        self.inner.close()
    }
}

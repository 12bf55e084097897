//! The overlay app: an eframe window that shows a table top-down and, for the ship you
//! pick, where its barrel roll can land and why not (issue 6).
//!
//! The window is a thin shell. What it draws and how it reacts live in small parts that
//! run without a window so that tests can check them: `transform` (table mm to screen
//! points and back, zoom), `hit` (which ship a click lands on), `state` (selection and
//! options, and the verdict from `barrel_roll`), `triangulate` (filling concave outlines),
//! `paint` (the table drawing on an egui painter), `panel` (the side panel) and `app`
//! (one frame of UI, which headless egui tests drive); `judge` is judge mode (J: freeze,
//! zoom, every clearance, export the judge report). `window` owns eframe itself and the
//! self-screenshot used by the Xvfb test.
//!
//! Live sources (an image, a video, a camera; feature `vision`): `source` is the detection
//! worker thread, `feed` the one-slot mailbox it posts each frame's scene and picture to,
//! `live` the UI's side of it (the newest scene into the state, the latency), and
//! `camera_view` the frame with the scene projected over it.
//!
//! The projector output (`--projector`): `projector` maps table mm through the projector
//! calibration and paints the outlines onto black; `projector_output` is where it shows (a
//! full-screen second viewport, or the main window with V) and the calibration pattern (P).

pub mod app;
#[cfg(feature = "vision")]
pub mod calibrate;
pub mod camera_view;
pub mod feed;
#[cfg(feature = "vision")]
pub mod frame_slot;
pub mod hit;
pub mod judge;
pub mod live;
pub mod paint;
pub mod panel;
pub mod projector;
pub mod projector_output;
#[cfg(feature = "vision")]
pub mod source;
pub mod state;
pub mod transform;
pub mod triangulate;
pub mod window;

/// The egui this overlay is built with, so tests and callers need no egui of their own.
pub use eframe::egui;

pub use app::OverlayApp;
pub use state::{OverlayState, Sides};
pub use window::{WindowOptions, run_window};

use crate::models::Models;
use crate::rules::Table;
use crate::scene::{Scene, SceneError};
use std::path::PathBuf;

/// The scene `hashmark demo` shows: shipped inside the binary so that the demo needs no
/// files, no camera and no calibration.
pub const DEMO_SCENE_JSON: &str = include_str!("../../demo/scene.json");

/// Legal landings, as in `diagram` (SVG) so that prints and screens agree.
pub const LEGAL_RGB: [u8; 3] = [0x2e, 0xcc, 0x40];
/// Illegal landings, as in `diagram`.
pub const ILLEGAL_RGB: [u8; 3] = [0xff, 0x41, 0x36];
/// Landings the camera cannot settle (clearance within two sigma of zero), as in `diagram`.
pub const CLOSE_RGB: [u8; 3] = [0xff, 0xb0, 0x00];

#[derive(Debug, thiserror::Error)]
pub enum OverlayError {
    #[error("scene {origin}: {source}")]
    Scene {
        origin: String,
        #[source]
        source: SceneError,
    },
    #[error(transparent)]
    Read(#[from] crate::files::FileError),
    #[error("no ship \"{id}\" in the scene (ships: {known})")]
    UnknownShip { id: String, known: String },
    #[error("the scene has no ships to roll")]
    NoShips,
    #[error("source \"{0}\" needs the camera side (build with feature `vision`)")]
    UnsupportedSource(String),
    #[error("unknown source \"{0}\" (use demo, scene:FILE, image:FILE, video:FILE or camera:N)")]
    BadSource(String),
    #[error("source \"{0}\" is a live source: start it with its calibration")]
    LiveSource(String),
    #[error("calibration {dir}: {message}")]
    Calibration { dir: PathBuf, message: String },
    #[error("background {path}: {message}")]
    Background { path: PathBuf, message: String },
    #[error("cannot start the detection worker: {0}")]
    Worker(String),
    #[error("window: {0}")]
    Window(String),
    #[error("screenshot {path}: {message}")]
    Screenshot { path: PathBuf, message: String },
}

/// Where the overlay's table comes from: a fixed scene, or a calibrated camera's frames
/// (an image detected once, a video file, a live camera) detected on a worker thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The built-in demo scene.
    Demo,
    /// A scene file (hashmark-scene/1).
    Scene(PathBuf),
    Image(PathBuf),
    Video(PathBuf),
    /// A camera by OpenCV index.
    Camera(i32),
}

impl std::str::FromStr for Source {
    type Err = OverlayError;

    fn from_str(s: &str) -> Result<Source, OverlayError> {
        if s == "demo" {
            return Ok(Source::Demo);
        }
        if let Some(path) = s.strip_prefix("scene:") {
            if path.is_empty() {
                return Err(OverlayError::BadSource(s.to_string()));
            }
            return Ok(Source::Scene(PathBuf::from(path)));
        }
        let bad = || OverlayError::BadSource(s.to_string());
        let path = |p: &str| {
            if p.is_empty() {
                Err(bad())
            } else {
                Ok(PathBuf::from(p))
            }
        };
        if let Some(p) = s.strip_prefix("image:") {
            return Ok(Source::Image(path(p)?));
        }
        if let Some(p) = s.strip_prefix("video:") {
            return Ok(Source::Video(path(p)?));
        }
        if let Some(n) = s.strip_prefix("camera:") {
            return n.parse().map(Source::Camera).map_err(|_| bad());
        }
        Err(bad())
    }
}

impl Source {
    /// A short name for the window title and the panel.
    pub fn label(&self) -> String {
        match self {
            Source::Demo => "demo".to_string(),
            Source::Scene(p) => p.display().to_string(),
            Source::Image(p) => format!("image {}", p.display()),
            Source::Video(p) => format!("video {}", p.display()),
            Source::Camera(n) => format!("camera {n}"),
        }
    }

    /// Whether the table comes from detection (a worker thread) rather than a scene file.
    pub fn is_live(&self) -> bool {
        matches!(
            self,
            Source::Image(_) | Source::Video(_) | Source::Camera(_)
        )
    }

    /// Reads and checks the scene and resolves it into table geometry.
    pub fn load(&self, models: &Models) -> Result<(Scene, Table), OverlayError> {
        let text = match self {
            Source::Demo => DEMO_SCENE_JSON.to_string(),
            Source::Scene(path) => crate::files::read_text(path)?,
            Source::Image(_) | Source::Video(_) | Source::Camera(_) => {
                return Err(OverlayError::LiveSource(self.label()));
            }
        };
        let scene_err = |source| OverlayError::Scene {
            origin: self.label(),
            source,
        };
        let scene = Scene::from_json(&text, models).map_err(scene_err)?;
        let table = Table::from_scene(&scene, models).map_err(scene_err)?;
        Ok((scene, table))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse() {
        assert_eq!("demo".parse::<Source>().ok(), Some(Source::Demo));
        assert_eq!(
            "scene:a/b.json".parse::<Source>().ok(),
            Some(Source::Scene(PathBuf::from("a/b.json")))
        );
        assert_eq!("camera:0".parse::<Source>().ok(), Some(Source::Camera(0)));
        assert_eq!(
            "video:a.avi".parse::<Source>().ok(),
            Some(Source::Video(PathBuf::from("a.avi")))
        );
        assert_eq!(
            "image:f.jpg".parse::<Source>().ok(),
            Some(Source::Image(PathBuf::from("f.jpg")))
        );
        for bad in ["camera:x", "camera:", "video:", "image:"] {
            assert!(
                matches!(bad.parse::<Source>(), Err(OverlayError::BadSource(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            "scene:".parse::<Source>(),
            Err(OverlayError::BadSource(_))
        ));
        assert!(matches!(
            "nonsense".parse::<Source>(),
            Err(OverlayError::BadSource(_))
        ));
    }

    #[test]
    fn demo_scene_loads() {
        let (_, table) = Source::Demo.load(Models::builtin()).expect("demo scene");
        assert_eq!(table.ships.len(), 8);
        assert_eq!(table.obstacles.len(), 6);
    }
}

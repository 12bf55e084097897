//! The camera side (feature `vision`): the camera model, the OpenCV glue, and the synthetic
//! camera that every vision part is tested against (issue 3).

pub mod aruco;
pub mod calibrate;
pub mod camera;
pub mod components;
pub mod cv;
pub mod detect;
pub mod edges;
pub mod light;
pub mod print;
pub mod rng;
pub mod sim;

pub use camera::{Camera, Resolution};

/// Why a vision step failed. One line each.
#[derive(Debug, thiserror::Error)]
pub enum VisionError {
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
    #[error(transparent)]
    File(#[from] crate::files::FileError),
    #[error("{0}")]
    Invalid(String),
}

//! Calibration data as files (spec section 6): the marker layout, the camera intrinsics, the
//! table pose and the projector mapping. Plain serde types with their checks, loaded with one
//! clear error per problem and written atomically; no OpenCV here, so that every front end
//! (overlay, judge report) can read them. The solving lives in `vision::calibrate`.

pub mod files;
pub mod layout;

pub use files::{CalibrationError, CameraFile, ProjectorFile, TableFile};
pub use layout::Layout;

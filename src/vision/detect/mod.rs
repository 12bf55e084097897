//! Detection (issue 5): from a calibrated camera frame to a scene in table millimetres.
//! Ships come from their bases (`bases`), obstacles from their outlines (`obstacles`); both
//! work in rectified top-down views (`ortho`) and refine in the camera frame itself.

pub mod ortho;
pub mod obstacles;

use crate::calibration::files::CalibrationFile;
use crate::calibration::{CameraFile, TableFile};
use crate::geometry::PlayArea;
use crate::models::Models;
use crate::scene::Scene;
use crate::vision::{Camera, VisionError};
use opencv::core::Mat;
use opencv::prelude::*;
use std::path::Path;

/// What detection needs to know about the camera: the full model (intrinsics and table
/// pose) and the play area it looks at.
#[derive(Clone, Debug)]
pub struct Calibrated {
    pub camera: Camera,
    pub play_area: PlayArea,
}

impl Calibrated {
    /// From a directory holding `camera.json` and `table.json` (as `hashmark calibrate`
    /// writes them).
    pub fn load(dir: &Path, models: &Models) -> Result<Calibrated, VisionError> {
        let camera = CameraFile::load(&dir.join("camera.json"))
            .map_err(|e| VisionError::Invalid(e.to_string()))?;
        let table = TableFile::load(&dir.join("table.json"))
            .map_err(|e| VisionError::Invalid(e.to_string()))?;
        if camera.image_size != table.image_size {
            return Err(VisionError::Invalid(format!(
                "{}: made for {}x{} images but camera.json is for {}x{}; re-run `hashmark calibrate table`",
                dir.join("table.json").display(),
                table.image_size[0],
                table.image_size[1],
                camera.image_size[0],
                camera.image_size[1]
            )));
        }
        let camera = super::calibrate::camera_model(&camera, &table).ok_or_else(|| {
            VisionError::Invalid(format!(
                "{}: has no camera pose (it was made without intrinsics); re-run `hashmark calibrate table --camera-calibration camera.json`",
                dir.join("table.json").display()
            ))
        })?;
        Ok(Calibrated {
            camera,
            play_area: models.play_areas.standard(),
        })
    }

    /// Refuses a frame of another size than the calibration's.
    pub fn check_frame(&self, frame: &Mat) -> Result<(), VisionError> {
        let size = frame.size()?;
        let [w, h] = self.camera.image_size;
        if size.width != w as i32 || size.height != h as i32 {
            return Err(VisionError::Invalid(format!(
                "the image is {}x{} but the calibration is for {w}x{h} images; calibrate this camera at this resolution",
                size.width, size.height
            )));
        }
        Ok(())
    }
}

/// One frame to a scene: ships, then obstacles (which must not take a base or a miniature
/// for an obstacle).
pub fn detect(
    frame: &Mat,
    background: Option<&Mat>,
    cal: &Calibrated,
    models: &Models,
) -> Result<Scene, VisionError> {
    cal.check_frame(frame)?;
    if let Some(bg) = background {
        cal.check_frame(bg)?;
    }
    let mut scene = Scene::new(cal.play_area);
    scene.obstacles =
        obstacles::find_obstacles(frame, background, &cal.camera, &cal.play_area, models, &scene.ships)?;
    Ok(scene)
}

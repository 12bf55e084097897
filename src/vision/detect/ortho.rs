//! A rectified top-down view of a plane of the table: every pixel is a fixed square of
//! table millimetres, so a 40 mm base is the same size and shape wherever it stands and
//! however the camera looks. Built by remapping the camera frame through the calibrated
//! camera (distortion included) at a chosen height: the mat (z = 0) for obstacles, the base
//! tops (z = 3 mm) for ships, whose top edges are not on the mat under a tilted camera.

use crate::vision::{Camera, VisionError};
use opencv::core::{BORDER_CONSTANT, CV_32FC1, Mat, Scalar};
use opencv::imgproc;
use opencv::prelude::*;

/// The part of the table plane an orthophoto covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrthoView {
    /// Table x of the left edge and y of the top edge (mm); y grows upwards on the table and
    /// downwards in the image.
    pub x0: f64,
    pub y_top: f64,
    pub mm_per_px: f64,
    pub width: i32,
    pub height: i32,
    /// Height of the plane above the mat (mm).
    pub z_mm: f64,
}

impl OrthoView {
    /// A view of [x0, x1] x [y0, y1] on the plane z at `mm_per_px`.
    pub fn new(x0: f64, y0: f64, x1: f64, y1: f64, z_mm: f64, mm_per_px: f64) -> OrthoView {
        OrthoView {
            x0,
            y_top: y1,
            mm_per_px,
            width: ((x1 - x0) / mm_per_px).ceil() as i32,
            height: ((y1 - y0) / mm_per_px).ceil() as i32,
            z_mm,
        }
    }

    /// Table point (mm) of the centre of ortho pixel (col, row).
    pub fn to_table(&self, col: f64, row: f64) -> [f64; 2] {
        [
            self.x0 + (col + 0.5) * self.mm_per_px,
            self.y_top - (row + 0.5) * self.mm_per_px,
        ]
    }

    /// Ortho pixel coordinates of a table point.
    pub fn to_pixel(&self, x: f64, y: f64) -> [f64; 2] {
        [
            (x - self.x0) / self.mm_per_px - 0.5,
            (self.y_top - y) / self.mm_per_px - 0.5,
        ]
    }

    /// The orthophoto of `frame` seen by `camera` (pixels the camera does not see are black).
    pub fn render(&self, frame: &Mat, camera: &Camera) -> Result<Mat, VisionError> {
        self.maps(camera)?.apply(frame)
    }

    /// The remapping tables, to build once per calibration and apply to every frame (the
    /// camera model per pixel costs far more than the remap).
    pub fn maps(&self, camera: &Camera) -> Result<OrthoMaps, VisionError> {
        let mut map_x =
            Mat::new_rows_cols_with_default(self.height, self.width, CV_32FC1, Scalar::all(-1.0))?;
        let mut map_y =
            Mat::new_rows_cols_with_default(self.height, self.width, CV_32FC1, Scalar::all(-1.0))?;
        for r in 0..self.height {
            let (rx, ry) = (map_x.at_row_mut::<f32>(r)?, map_y.at_row_mut::<f32>(r)?);
            for c in 0..self.width as usize {
                let t = self.to_table(c as f64, f64::from(r));
                if let Some(p) = camera.project([t[0], t[1], self.z_mm]) {
                    rx[c] = p[0] as f32;
                    ry[c] = p[1] as f32;
                }
            }
        }
        Ok(OrthoMaps { map_x, map_y })
    }
}

/// An orthophoto's per-pixel source coordinates in the camera frame.
pub struct OrthoMaps {
    map_x: Mat,
    map_y: Mat,
}

impl OrthoMaps {
    pub fn apply(&self, frame: &Mat) -> Result<Mat, VisionError> {
        let mut out = Mat::default();
        imgproc::remap(
            frame,
            &mut out,
            &self.map_x,
            &self.map_y,
            imgproc::INTER_LINEAR,
            BORDER_CONSTANT,
            Scalar::all(0.0),
        )?;
        Ok(out)
    }
}

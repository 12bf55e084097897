//! The calibration a camera verdict rests on, in brief: how well each file fitted and when
//! it was made, so that a judge can see a stale or poor calibration at a glance.

use crate::calibration::files::CalibrationFile;
use crate::calibration::{CalibrationError, CameraFile, TableFile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CameraSummary {
    pub image_size: [u32; 2],
    /// Reprojection RMS over all views, px.
    pub rms_px: f64,
    pub views: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableSummary {
    /// True with a full camera pose (rvec, tvec), false with a bare homography.
    pub has_pose: bool,
    /// Each mat marker's corner residual after the fit, mm, by marker id.
    pub marker_residuals_mm: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationSummary {
    pub dir: String,
    pub camera: CameraSummary,
    pub table: TableSummary,
    /// Whether the judged frame shows the mat markers where table.json puts them (see
    /// `vision::calibrate::check`), in words; absent when not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_check: Option<String>,
}

impl CalibrationSummary {
    pub fn from_files(dir: &Path, camera: &CameraFile, table: &TableFile) -> CalibrationSummary {
        CalibrationSummary {
            dir: dir.display().to_string(),
            camera: CameraSummary {
                image_size: camera.image_size,
                rms_px: camera.rms_px,
                views: camera.views,
                created: camera.created.clone(),
            },
            table: TableSummary {
                has_pose: table.rvec.is_some() && table.tvec.is_some(),
                marker_residuals_mm: table.marker_residuals_mm.clone(),
                created: table.created.clone(),
            },
            frame_check: None,
        }
    }

    /// Reads `camera.json` and `table.json` in `dir` (as `hashmark calibrate` writes them).
    pub fn load(dir: &Path) -> Result<CalibrationSummary, CalibrationError> {
        let camera = CameraFile::load(&dir.join("camera.json"))?;
        let table = TableFile::load(&dir.join("table.json"))?;
        Ok(CalibrationSummary::from_files(dir, &camera, &table))
    }
}

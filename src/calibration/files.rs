//! `hashmark-camera/1`, `hashmark-table/1` and `hashmark-projector/1`.

use super::layout::{Layout, MatMarkers};
use crate::geometry::PlayArea;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const CAMERA_FORMAT: &str = "hashmark-camera/1";
pub const TABLE_FORMAT: &str = "hashmark-table/1";
pub const PROJECTOR_FORMAT: &str = "hashmark-projector/1";

/// A calibration file that cannot be used: which file, what is wrong, and what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error("{file}: {message}")]
    Io { file: String, message: String },
    #[error("{file}: not valid JSON ({message}); the file is damaged: {fix}")]
    Corrupt {
        file: String,
        message: String,
        fix: &'static str,
    },
    #[error("{file}: format is {found}, expected \"{expected}\"; {fix}")]
    Format {
        file: String,
        found: String,
        expected: &'static str,
        fix: &'static str,
    },
    #[error("{file}: {field}: {message}; {fix}")]
    Field {
        file: String,
        field: String,
        message: String,
        fix: &'static str,
    },
}

/// Camera intrinsics from `hashmark calibrate camera`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CameraFile {
    pub format: String,
    /// [width, height] in pixels of the images the intrinsics belong to.
    pub image_size: [u32; 2],
    /// [[fx, 0, cx], [0, fy, cy], [0, 0, 1]].
    pub camera_matrix: [[f64; 3]; 3],
    /// [k1, k2, p1, p2, k3], OpenCV order.
    pub distortion: [f64; 5],
    /// Reprojection RMS over all views, px.
    pub rms_px: f64,
    /// Number of views used.
    pub views: usize,
    /// Standard deviations of fx, fy, cx, cy (px), when the solver gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub std_dev: Option<[f64; 4]>,
    /// Expected projection uncertainty on the table (mm, 1 sigma), when estimated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_uncertainty_mm: Option<f64>,
    /// When it was made (RFC 3339), for the judge report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// The ChArUco board its views showed (the spec's, or one a layout file or the flags
    /// described), so a file says what it was calibrated against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<crate::calibration::layout::Board>,
}

/// The table pose from `hashmark calibrate table`: a full camera pose when intrinsics were
/// given, else a plain homography (a phone photo).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableFile {
    pub format: String,
    pub image_size: [u32; 2],
    /// Table frame to camera frame, OpenCV convention (Rodrigues vector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rvec: Option<[f64; 3]>,
    /// Table frame to camera frame, mm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tvec: Option<[f64; 3]>,
    /// Table mm to image px, 3x3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homography: Option<[[f64; 3]; 3]>,
    /// Each mat marker's corner residual after the fit, mm, by marker id.
    pub marker_residuals_mm: std::collections::BTreeMap<String, f64>,
    /// The play area the table was calibrated for; files from before it was recorded are
    /// for the standard 3 ft x 3 ft one (see [`TableFile::play_area`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub play_area: Option<PlayArea>,
    /// The mat markers the pose was solved against, so that a later frame is checked
    /// against the same cards; files from before they were recorded used the built-in
    /// layout (see [`TableFile::layout`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mat_markers: Option<MatMarkers>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
}

/// The table-to-projector mapping from `hashmark calibrate projector`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProjectorFile {
    pub format: String,
    /// [width, height] of the projector's output, px.
    pub size: [u32; 2],
    /// Table mm to projector px, 3x3.
    pub homography: [[f64; 3]; 3],
    pub residual_px: f64,
    pub residual_mm: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
}

const CAMERA_FIX: &str = "re-run `hashmark calibrate camera`";
const TABLE_FIX: &str = "re-run `hashmark calibrate table`";
const PROJECTOR_FIX: &str = "re-run `hashmark calibrate projector`";

/// A kind of calibration file: its format key, the command that remakes it, its checks.
pub trait CalibrationFile: Serialize + DeserializeOwned {
    const FORMAT: &'static str;
    const FIX: &'static str;
    fn format(&self) -> &str;
    /// Checks beyond the types: finite numbers, plausible values.
    fn check(&self) -> Result<(), (String, String)>;

    fn from_json(file: &str, text: &str) -> Result<Self, CalibrationError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| CalibrationError::Corrupt {
                file: file.to_string(),
                message: e.to_string(),
                fix: Self::FIX,
            })?;
        match value.get("format") {
            Some(serde_json::Value::String(s)) if s == Self::FORMAT => {}
            other => {
                return Err(CalibrationError::Format {
                    file: file.to_string(),
                    found: other.map_or("missing".to_string(), |v| v.to_string()),
                    expected: Self::FORMAT,
                    fix: Self::FIX,
                });
            }
        }
        let parsed: Self =
            serde_path_to_error::deserialize(value).map_err(|e| CalibrationError::Field {
                file: file.to_string(),
                field: e.path().to_string(),
                message: e.into_inner().to_string(),
                fix: Self::FIX,
            })?;
        parsed
            .check()
            .map_err(|(field, message)| CalibrationError::Field {
                file: file.to_string(),
                field,
                message,
                fix: Self::FIX,
            })?;
        Ok(parsed)
    }

    fn load(path: &Path) -> Result<Self, CalibrationError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| CalibrationError::Io {
            file: file.clone(),
            message: format!("{e}; {}", Self::FIX),
        })?;
        Self::from_json(&file, &text)
    }

    /// Checks, then writes atomically: a failed write leaves the old file as it was.
    fn save(&self, path: &Path) -> Result<(), CalibrationError> {
        let file = path.display().to_string();
        self.check()
            .map_err(|(field, message)| CalibrationError::Field {
                file: file.clone(),
                field,
                message,
                fix: Self::FIX,
            })?;
        let text = serde_json::to_string_pretty(self).expect("calibration files always serialise");
        crate::files::write_atomic(path, text.as_bytes()).map_err(|e| CalibrationError::Io {
            file,
            message: e.to_string(),
        })
    }
}

fn all_finite<'a>(
    field: &str,
    values: impl IntoIterator<Item = &'a f64>,
) -> Result<(), (String, String)> {
    if values.into_iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err((
            field.to_string(),
            "contains a number that is not finite".to_string(),
        ))
    }
}

fn size_ok(field: &str, s: [u32; 2]) -> Result<(), (String, String)> {
    if s[0] > 0 && s[1] > 0 {
        Ok(())
    } else {
        Err((
            field.to_string(),
            format!("{} x {} is not an image size", s[0], s[1]),
        ))
    }
}

fn homography_ok(field: &str, h: &[[f64; 3]; 3]) -> Result<(), (String, String)> {
    all_finite(field, h.iter().flatten())?;
    let m = nalgebra::Matrix3::from_row_slice(&h.concat());
    let scale = m.abs().max();
    if scale == 0.0 || (m.determinant() / scale.powi(3)).abs() < 1e-12 {
        return Err((field.to_string(), "is singular".to_string()));
    }
    Ok(())
}

impl CalibrationFile for CameraFile {
    const FORMAT: &'static str = CAMERA_FORMAT;
    const FIX: &'static str = CAMERA_FIX;
    fn format(&self) -> &str {
        &self.format
    }
    fn check(&self) -> Result<(), (String, String)> {
        size_ok("image_size", self.image_size)?;
        all_finite("camera_matrix", self.camera_matrix.iter().flatten())?;
        all_finite("distortion", self.distortion.iter())?;
        let k = &self.camera_matrix;
        if !(k[0][0] > 0.0 && k[1][1] > 0.0) {
            return Err(("camera_matrix".into(), "fx and fy must be positive".into()));
        }
        if k[1][0] != 0.0 || k[2] != [0.0, 0.0, 1.0] {
            return Err((
                "camera_matrix".into(),
                "must be [[fx, s, cx], [0, fy, cy], [0, 0, 1]]".into(),
            ));
        }
        if !(self.rms_px.is_finite() && self.rms_px >= 0.0) {
            return Err(("rms_px".into(), "must be a non-negative number".into()));
        }
        Ok(())
    }
}

impl CalibrationFile for TableFile {
    const FORMAT: &'static str = TABLE_FORMAT;
    const FIX: &'static str = TABLE_FIX;
    fn format(&self) -> &str {
        &self.format
    }
    fn check(&self) -> Result<(), (String, String)> {
        size_ok("image_size", self.image_size)?;
        match (&self.rvec, &self.tvec, &self.homography) {
            (Some(r), Some(t), _) => {
                all_finite("rvec", r.iter())?;
                all_finite("tvec", t.iter())?;
            }
            (None, None, Some(_)) => {}
            _ => {
                return Err((
                    "rvec".into(),
                    "needs rvec and tvec (with intrinsics) or a homography (without)".into(),
                ));
            }
        }
        if let Some(h) = &self.homography {
            homography_ok("homography", h)?;
        }
        all_finite("marker_residuals_mm", self.marker_residuals_mm.values())?;
        if let Some(p) = &self.play_area
            && !([p.width_mm, p.height_mm]
                .iter()
                .all(|v| v.is_finite() && *v > 0.0))
        {
            return Err((
                "play_area".into(),
                "width_mm and height_mm must be positive numbers".into(),
            ));
        }
        if let Some(m) = &self.mat_markers {
            m.check()?;
        }
        Ok(())
    }
}

impl TableFile {
    /// The play area this table was calibrated for.
    pub fn play_area(&self) -> PlayArea {
        self.play_area
            .unwrap_or_else(|| crate::Models::builtin().play_areas.standard())
    }

    /// The marker layout this table was calibrated against (its board is the built-in
    /// one's: the table pose does not use it).
    pub fn layout(&self) -> Layout {
        let mut layout = Layout::builtin();
        if let Some(m) = &self.mat_markers {
            layout.mat_markers = m.clone();
        }
        layout
    }
}

impl CalibrationFile for ProjectorFile {
    const FORMAT: &'static str = PROJECTOR_FORMAT;
    const FIX: &'static str = PROJECTOR_FIX;
    fn format(&self) -> &str {
        &self.format
    }
    fn check(&self) -> Result<(), (String, String)> {
        size_ok("size", self.size)?;
        homography_ok("homography", &self.homography)?;
        all_finite("residual_px", [self.residual_px, self.residual_mm].iter())
    }
}

/// Maps a point through a 3x3 homography.
pub fn apply_homography(h: &[[f64; 3]; 3], x: f64, y: f64) -> Option<[f64; 2]> {
    let w = h[2][0] * x + h[2][1] * y + h[2][2];
    if w.abs() < 1e-12 {
        return None;
    }
    Some([
        (h[0][0] * x + h[0][1] * y + h[0][2]) / w,
        (h[1][0] * x + h[1][1] * y + h[1][2]) / w,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camera() -> CameraFile {
        CameraFile {
            format: CAMERA_FORMAT.into(),
            image_size: [1920, 1080],
            camera_matrix: [[1500.0, 0.0, 960.0], [0.0, 1500.0, 540.0], [0.0, 0.0, 1.0]],
            distortion: [0.1, -0.2, 0.0, 0.0, 0.05],
            rms_px: 0.21,
            views: 12,
            std_dev: Some([0.8, 0.8, 0.5, 0.5]),
            table_uncertainty_mm: None,
            created: None,
            board: None,
        }
    }

    #[test]
    fn round_trip_through_an_atomic_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("camera.json");
        camera().save(&p).unwrap();
        assert_eq!(CameraFile::load(&p).unwrap(), camera());
        let t = TableFile {
            format: TABLE_FORMAT.into(),
            image_size: [1920, 1080],
            rvec: None,
            tvec: None,
            homography: Some([[1.0, 0.1, 5.0], [0.0, 1.1, 7.0], [0.0, 0.0001, 1.0]]),
            marker_residuals_mm: [("0".to_string(), 0.1)].into(),
            play_area: None,
            mat_markers: None,
            created: None,
        };
        let p = dir.path().join("table.json");
        t.save(&p).unwrap();
        assert_eq!(TableFile::load(&p).unwrap(), t);
    }

    #[test]
    fn wrong_old_and_corrupt_files_say_what_to_do() {
        let text = serde_json::to_string(&camera()).unwrap();
        let e = CameraFile::from_json("camera.json", &text[..text.len() / 2])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("camera.json: not valid JSON") && e.contains("calibrate camera"),
            "{e}"
        );
        let old = text.replace("hashmark-camera/1", "hashmark-camera/0");
        let e = CameraFile::from_json("camera.json", &old)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("format is \"hashmark-camera/0\", expected \"hashmark-camera/1\""),
            "{e}"
        );
        let e = TableFile::from_json("table.json", &text)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("expected \"hashmark-table/1\"") && e.contains("calibrate table"),
            "{e}"
        );
        let neg = text.replace("[1500.0,0.0,960.0]", "[-1500.0,0.0,960.0]");
        let e = CameraFile::from_json("camera.json", &neg)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("camera_matrix: fx and fy must be positive"),
            "{e}"
        );
        let short = text.replace("[0.1,-0.2,0.0,0.0,0.05]", "[0.1,-0.2]");
        let e = CameraFile::from_json("camera.json", &short)
            .unwrap_err()
            .to_string();
        assert!(e.contains("distortion"), "{e}");
        let e = CameraFile::load(Path::new("/no/such/camera.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/no/such/camera.json") && e.contains("calibrate camera"),
            "{e}"
        );
        let bad_h = r#"{"format":"hashmark-projector/1","size":[1280,720],"homography":[[1,2,3],[2,4,6],[0,0,0]],"residual_px":0.1,"residual_mm":0.1}"#;
        let e = ProjectorFile::from_json("projector.json", bad_h)
            .unwrap_err()
            .to_string();
        assert!(e.contains("homography: is singular"), "{e}");
    }

    /// A table file records the play area and the markers it was made for; one from
    /// before they were recorded is for the standard area and the built-in layout; a bad
    /// play area is refused by name.
    #[test]
    fn a_table_file_says_which_play_area_and_markers_it_was_made_for() {
        let old = r#"{"format":"hashmark-table/1","image_size":[1920,1080],"rvec":[3.1,0.0,0.0],"tvec":[-450.0,450.0,1200.0],"marker_residuals_mm":{"0":0.1}}"#;
        let t = TableFile::from_json("table.json", old).unwrap();
        assert_eq!(t.play_area().width_mm, 914.4);
        assert_eq!(t.layout(), Layout::builtin());

        let epic = PlayArea {
            width_mm: 1828.8,
            height_mm: 914.4,
        };
        let mut layout = Layout::builtin().for_play_area(t.play_area(), epic);
        layout.mat_markers.markers[1].centre = [1700.0, -60.0];
        let t = TableFile {
            play_area: Some(epic),
            mat_markers: Some(layout.mat_markers.clone()),
            ..t
        };
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("table.json");
        t.save(&p).unwrap();
        let back = TableFile::load(&p).unwrap();
        assert_eq!(back.play_area(), epic);
        assert_eq!(back.layout(), layout);

        let bad = serde_json::to_string(&t)
            .unwrap()
            .replace("\"width_mm\":1828.8", "\"width_mm\":-1.0");
        let e = TableFile::from_json("table.json", &bad)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("play_area: width_mm and height_mm must be positive"),
            "{e}"
        );
        let bad = serde_json::to_string(&t)
            .unwrap()
            .replace("\"id\":2", "\"id\":1");
        let e = TableFile::from_json("table.json", &bad)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("mat_markers.markers[2].id: duplicate id 1"),
            "{e}"
        );
    }

    #[test]
    fn homography_maps_points() {
        let h = [[2.0, 0.0, 10.0], [0.0, 2.0, 20.0], [0.0, 0.0, 1.0]];
        assert_eq!(apply_homography(&h, 1.0, 2.0), Some([12.0, 24.0]));
    }
}

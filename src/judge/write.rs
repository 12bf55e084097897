//! Writing a report directory. Each file is written atomically, and `report.json` last:
//! a directory with a `report.json` holds a whole report, and a crash mid-way never leaves
//! a half-written file.

use super::{JudgeError, JudgeReport};
use crate::models::Models;
use crate::rules::Table;
use std::path::{Path, PathBuf};

pub const REPORT_FILE: &str = "report.json";
pub const SVG_FILE: &str = "table.svg";
pub const PNG_FILE: &str = "table.png";

/// `judge-YYYYMMDDTHHMMSSZ`: the overlay's default directory name for a report made now.
pub fn default_dir_name(secs: i64) -> String {
    format!("judge-{}", crate::clock::compact(secs))
}

/// Writes `table.svg`, `table.png` and `report.json` into `dir` (created if missing) and
/// returns the paths written, in that order.
pub fn write_report(dir: &Path, report: &JudgeReport) -> Result<Vec<PathBuf>, JudgeError> {
    // The picture draws from the report's own scene, so the files cannot disagree.
    let table = Table::from_scene(&report.scene, Models::builtin())?;
    let svg = report.svg(&table);
    let png = super::render_png(&svg, report.picture.width_px, report.picture.height_px)?;
    std::fs::create_dir_all(dir).map_err(|e| JudgeError::Dir {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    let files = [
        (dir.join(&report.picture.svg), svg.into_bytes()),
        (dir.join(&report.picture.png), png),
        (dir.join(REPORT_FILE), report.to_json_pretty().into_bytes()),
    ];
    let mut written = Vec::new();
    for (path, bytes) in files {
        crate::files::write_atomic(&path, &bytes)?;
        written.push(path);
    }
    Ok(written)
}

use super::error::{ModelError, from_json};
use crate::geometry::polygon::{self, PolygonError};
use serde::Deserialize;

/// One standard obstacle outline in its token frame (mm, origin at the outline's centre).
#[derive(Clone, Debug)]
pub struct ObstacleModel {
    pub xws: String,
    pub vassal: Option<String>,
    /// Counter-clockwise, open ring (first point not repeated).
    pub outline: Vec<[f64; 2]>,
}

#[derive(Deserialize)]
struct Line {
    xws: String,
    #[serde(default)]
    vassal: Option<String>,
    mm: Vec<[f64; 2]>,
}

/// The standard obstacles by their xws ids.
#[derive(Clone, Debug, Default)]
pub struct ObstacleLibrary {
    models: Vec<ObstacleModel>,
}

impl ObstacleLibrary {
    pub fn parse_jsonl(file: &str, text: &str) -> Result<ObstacleLibrary, ModelError> {
        let mut models: Vec<ObstacleModel> = Vec::new();
        for (n, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let label = format!("{file} line {}", n + 1);
            let line: Line = from_json(&label, raw)?;
            let bad = |field: &str, message: String| ModelError::Invalid {
                file: label.clone(),
                field: field.to_string(),
                message,
            };
            if models.iter().any(|m| m.xws == line.xws) {
                return Err(bad("xws", format!("duplicate id \"{}\"", line.xws)));
            }
            let outline = polygon::normalise_ring(&line.mm)
                .map_err(|e: PolygonError| bad("mm", e.to_string()))?;
            models.push(ObstacleModel {
                xws: line.xws,
                vassal: line.vassal,
                outline,
            });
        }
        if models.is_empty() {
            return Err(ModelError::Invalid {
                file: file.to_string(),
                field: "(document)".into(),
                message: "no obstacles".into(),
            });
        }
        Ok(ObstacleLibrary { models })
    }

    pub fn get(&self, xws: &str) -> Option<&ObstacleModel> {
        self.models.iter().find(|m| m.xws == xws)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ObstacleModel> {
        self.models.iter()
    }

    pub fn len(&self) -> usize {
        self.models.len()
    }

    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }
}

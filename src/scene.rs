//! The scene file (`hashmark-scene/1`, spec section 6): what detection writes, what the
//! rules read, what every front end shows. Plain serde types; [`Scene::check`] makes sure
//! a scene can be resolved into geometry before anything uses it.

use crate::geometry::PlayArea;
use crate::geometry::polygon::{PolygonError, normalise_ring};
use crate::models::{BaseSize, Models};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

pub const SCENE_FORMAT: &str = "hashmark-scene/1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scene {
    pub format: String,
    #[serde(default = "standard_play_area")]
    pub play_area: PlayArea,
    #[serde(default)]
    pub ships: Vec<ShipSpec>,
    #[serde(default)]
    pub obstacles: Vec<ObstacleSpec>,
}

fn standard_play_area() -> PlayArea {
    Models::builtin().play_areas.standard()
}

/// Measurement quality that detection attaches to every item; absent in hand-made scenes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma_mm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma_deg: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Held from earlier frames while something (a hand) hides it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub occluded: bool,
    /// Why detection doubts a ship, when it does (lowers `confidence`; the first six
    /// widen `sigma_mm` to say the fit may be on the wrong edges, and a rival fit to reach
    /// the other square): a judge who is told to check a ship by eye is told what to look
    /// at.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<Doubt>,
}

/// One reason detection doubts an item it found (all but the last are of ships).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Doubt {
    /// Little of the base's outline shows (a miniature or the mat's art hides it).
    LittleOutline,
    /// None of the token's four side hashmarks shows where the fit puts them.
    NoHashmark,
    /// Along one axis only one side shows and no hashmark across it pins where the base
    /// lies: another edge beside it passes for the hidden side.
    OneSided,
    /// Only one corner shows: the rest is the size class's assumption.
    CornerOnly,
    /// The square found follows the miniature's own outline more than a base's.
    MiniatureOutline,
    /// The fitted rim strays from a base's: edges of another kind were taken for it.
    RimStrayed,
    /// A second heading a few degrees off fits the edges about as well, or the token's arc
    /// lines read one.
    SecondHeading,
    /// The token's front arc and initiative disc mostly do not show (hidden, or the side
    /// chosen as the front is in view and not shaded like one): the facing is a guess.
    FacingUnsure,
    /// The frame has no colour (a monochrome camera, or one that has fallen back to grey):
    /// the token's front arc is told from the rest by its faction's shade and the
    /// initiative disc by its orange, so which way the ship faces was not read.
    NoColour,
    /// Another base-sized square overlapping this one fits nearly as well: the ship may
    /// stand there instead (its `sigma_mm` reaches it).
    RivalFit,
    /// Of a measured outline: a miniature with no base seen under it, most likely a ship
    /// whose base it hides; the outline is the miniature's, where it stands.
    HiddenBase,
}

impl Doubt {
    /// The reason in words a judge can act on.
    pub fn text(self) -> &'static str {
        match self {
            Doubt::LittleOutline => "little of its base's outline shows",
            Doubt::NoHashmark => "none of its side hashmarks shows",
            Doubt::OneSided => "one of its base's sides is hidden and no hashmark pins it",
            Doubt::CornerOnly => "only one corner of its base shows",
            Doubt::MiniatureOutline => "the square found may be the miniature's outline",
            Doubt::RimStrayed => "its base's rim does not fit a base's",
            Doubt::SecondHeading => "a heading a few degrees off fits about as well",
            Doubt::FacingUnsure => "its front arc and initiative disc do not show",
            Doubt::NoColour => {
                "the image has no colour, so its front arc cannot be told from the rest of its token"
            }
            Doubt::RivalFit => "another square beside it fits its base nearly as well",
            Doubt::HiddenBase => "a miniature with no base seen under it",
        }
    }

    /// The reason in a word or two, for a table.
    pub fn short(self) -> &'static str {
        match self {
            Doubt::LittleOutline => "little outline",
            Doubt::NoHashmark => "no hashmark",
            Doubt::OneSided => "one side hidden",
            Doubt::CornerOnly => "one corner",
            Doubt::MiniatureOutline => "miniature's outline",
            Doubt::RimStrayed => "rim off",
            Doubt::SecondHeading => "second heading",
            Doubt::FacingUnsure => "facing hidden",
            Doubt::NoColour => "no colour",
            Doubt::RivalFit => "rival fit",
            Doubt::HiddenBase => "base hidden",
        }
    }

    /// Several reasons for a table, comma-separated.
    pub fn shorts(doubts: &[Doubt]) -> String {
        doubts
            .iter()
            .map(|d| d.short())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the doubt is about where the base lies (else only which way it faces).
    pub fn is_about_position(self) -> bool {
        !matches!(self, Doubt::FacingUnsure | Doubt::NoColour)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShipSpec {
    pub id: String,
    pub size: BaseSize,
    pub x: f64,
    pub y: f64,
    pub heading_deg: f64,
    #[serde(flatten)]
    pub quality: Quality,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObstacleSpec {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation_deg: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polygon: Option<Vec<[f64; 2]>>,
    #[serde(flatten)]
    pub quality: Quality,
}

/// Why a scene cannot be used. Every message is one line and names the item at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SceneError {
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("format: expected \"{SCENE_FORMAT}\", found {0}")]
    Format(String),
    #[error("{path}: {message}")]
    Field { path: String, message: String },
    #[error("{item}: {message}")]
    Item { item: String, message: String },
}

impl Scene {
    pub fn new(play_area: PlayArea) -> Scene {
        Scene {
            format: SCENE_FORMAT.to_string(),
            play_area,
            ships: Vec::new(),
            obstacles: Vec::new(),
        }
    }

    /// Parses a scene and checks it against the models.
    pub fn from_json(text: &str, models: &Models) -> Result<Scene, SceneError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| SceneError::Json(e.to_string()))?;
        match value.get("format") {
            Some(serde_json::Value::String(s)) if s == SCENE_FORMAT => {}
            Some(other) => return Err(SceneError::Format(other.to_string())),
            None => return Err(SceneError::Format("no format key".into())),
        }
        let scene: Scene =
            serde_path_to_error::deserialize(value).map_err(|e| SceneError::Field {
                path: e.path().to_string(),
                message: e.into_inner().to_string(),
            })?;
        scene.check(models)?;
        Ok(scene)
    }

    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("a scene always serialises")
    }

    /// Checks everything the rules rely on: finite numbers, unique ids, known obstacle
    /// models, usable polygons.
    pub fn check(&self, models: &Models) -> Result<(), SceneError> {
        if self.format != SCENE_FORMAT {
            return Err(SceneError::Format(format!("\"{}\"", self.format)));
        }
        let pa = &self.play_area;
        for (name, v) in [("width_mm", pa.width_mm), ("height_mm", pa.height_mm)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(SceneError::Field {
                    path: format!("play_area.{name}"),
                    message: format!("must be a positive number, found {v}"),
                });
            }
        }
        let mut ids = HashSet::new();
        for (i, s) in self.ships.iter().enumerate() {
            let item = format!("ships[{i}] ({})", s.id);
            let err = |message: String| SceneError::Item {
                item: item.clone(),
                message,
            };
            if s.id.is_empty() {
                return Err(err("empty id".into()));
            }
            if !ids.insert(s.id.as_str()) {
                return Err(err(format!("duplicate id \"{}\"", s.id)));
            }
            for (name, v) in [("x", s.x), ("y", s.y), ("heading_deg", s.heading_deg)] {
                finite(v, name).map_err(err)?;
            }
            check_quality(&s.quality).map_err(err)?;
        }
        for (i, o) in self.obstacles.iter().enumerate() {
            let item = format!("obstacles[{i}] ({})", o.id);
            let err = |message: String| SceneError::Item {
                item: item.clone(),
                message,
            };
            if o.id.is_empty() {
                return Err(err("empty id".into()));
            }
            if !ids.insert(o.id.as_str()) {
                return Err(err(format!("duplicate id \"{}\"", o.id)));
            }
            check_quality(&o.quality).map_err(err)?;
            o.outline(models).map_err(err)?;
        }
        Ok(())
    }
}

fn finite(v: f64, name: &str) -> Result<(), String> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(format!("{name} is not a finite number ({v})"))
    }
}

fn check_quality(q: &Quality) -> Result<(), String> {
    for (name, v) in [("sigma_mm", q.sigma_mm), ("sigma_deg", q.sigma_deg)] {
        if let Some(v) = v
            && !(v.is_finite() && v >= 0.0)
        {
            return Err(format!("{name} must be a non-negative number, found {v}"));
        }
    }
    if let Some(c) = q.confidence
        && !(0.0..=1.0).contains(&c)
    {
        return Err(format!("confidence must be between 0 and 1, found {c}"));
    }
    Ok(())
}

impl ObstacleSpec {
    /// A standard model placed by pose.
    pub fn placed(id: &str, model: &str, x: f64, y: f64, rotation_deg: f64) -> ObstacleSpec {
        ObstacleSpec {
            id: id.to_string(),
            model: Some(model.to_string()),
            x: Some(x),
            y: Some(y),
            rotation_deg: Some(rotation_deg),
            polygon: None,
            quality: Quality::default(),
        }
    }

    /// The outline in table mm, counter-clockwise: the polygon when given (it is what
    /// counts), else the model placed by its pose.
    pub fn outline(&self, models: &Models) -> Result<Vec<[f64; 2]>, String> {
        if let Some(poly) = &self.polygon {
            if let Some(m) = &self.model
                && models.obstacles.get(m).is_none()
            {
                return Err(format!("unknown obstacle model \"{m}\""));
            }
            return normalise_ring(poly).map_err(|e: PolygonError| format!("polygon: {e}"));
        }
        let Some(model) = &self.model else {
            return Err("needs a model with x and y, or a polygon".into());
        };
        let Some(m) = models.obstacles.get(model) else {
            return Err(format!("unknown obstacle model \"{model}\""));
        };
        let (Some(x), Some(y)) = (self.x, self.y) else {
            return Err(format!("model \"{model}\" needs x and y"));
        };
        let rot = self.rotation_deg.unwrap_or(0.0);
        for (name, v) in [("x", x), ("y", y), ("rotation_deg", rot)] {
            finite(v, name)?;
        }
        let (s, c) = rot.to_radians().sin_cos();
        Ok(m.outline
            .iter()
            .map(|p| [x + c * p[0] - s * p[1], y + s * p[0] + c * p[1]])
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Scene, SceneError> {
        Scene::from_json(text, Models::builtin())
    }

    #[test]
    fn bad_scenes_name_the_problem() {
        let e = parse("{not json").unwrap_err().to_string();
        assert!(e.starts_with("not valid JSON"), "{e}");
        let e = parse(r#"{"format":"hashmark-scene/2"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("format") && e.contains("hashmark-scene/2"),
            "{e}"
        );
        let e = parse(r#"{"format":"hashmark-scene/1","ships":[{"id":"a","size":"huge","x":1,"y":1,"heading_deg":0}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("ships[0].size"), "{e}");
        let e = parse(
            r#"{"format":"hashmark-scene/1","obstacles":[{"id":"o1","model":"nope","x":1,"y":1}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("obstacles[0] (o1)") && e.contains("unknown obstacle model"),
            "{e}"
        );
        let e = parse(
            r#"{"format":"hashmark-scene/1","obstacles":[{"id":"o1","polygon":[[0,0],[1,1]]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("at least 3 points"), "{e}");
        let e = parse(r#"{"format":"hashmark-scene/1","ships":[{"id":"a","size":"small","x":1e400,"y":1,"heading_deg":0}]}"#)
            .unwrap_err()
            .to_string();
        assert!(!e.is_empty() && !e.contains('\n'));
        let e = parse(r#"{"format":"hashmark-scene/1","ships":[{"id":"a","size":"small","x":1,"y":1,"heading_deg":0},{"id":"a","size":"small","x":100,"y":1,"heading_deg":0}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("duplicate id"), "{e}");
    }

    #[test]
    fn nan_is_refused_in_scenes_built_in_code() {
        let mut s = Scene::new(standard_play_area());
        s.ships.push(ShipSpec {
            id: "a".into(),
            size: BaseSize::Small,
            x: f64::NAN,
            y: 0.0,
            heading_deg: 0.0,
            quality: Quality::default(),
        });
        let e = s.check(Models::builtin()).unwrap_err().to_string();
        assert!(e.contains("x is not a finite number"), "{e}");
    }

    #[test]
    fn round_trips_with_unknown_fields_ignored() {
        let s = parse(r#"{"format":"hashmark-scene/1","extra":1,"play_area":{"width_mm":914.4,"height_mm":914.4},
            "ships":[{"id":"s1","size":"large","x":100,"y":200,"heading_deg":45,"sigma_mm":0.3,"note":"x"}],
            "obstacles":[{"id":"o1","model":"coreasteroid0","x":300,"y":300,"rotation_deg":10}]}"#)
            .unwrap();
        assert_eq!(s.ships[0].quality.sigma_mm, Some(0.3));
        let again = parse(&s.to_json_pretty()).unwrap();
        assert_eq!(s, again);
    }

    /// Detection's doubts ride on the ship, by name; none is no field at all (scenes from
    /// before them read the same), and a name it does not know is refused where it stands.
    #[test]
    fn doubts_round_trip_by_name() {
        let s = parse(
            r#"{"format":"hashmark-scene/1",
            "ships":[{"id":"s1","size":"small","x":100,"y":200,"heading_deg":45,
                      "confidence":0.3,"doubts":["no_hashmark","facing_unsure"]},
                     {"id":"s2","size":"small","x":300,"y":200,"heading_deg":0}]}"#,
        )
        .unwrap();
        assert_eq!(
            s.ships[0].quality.doubts,
            vec![Doubt::NoHashmark, Doubt::FacingUnsure]
        );
        let text = s.to_json_pretty();
        assert_eq!(text.matches("doubts").count(), 1, "{text}");
        assert_eq!(parse(&text).unwrap(), s);
        let e = parse(r#"{"format":"hashmark-scene/1","ships":[{"id":"s1","size":"small","x":1,"y":1,"heading_deg":0,"doubts":["bad_luck"]}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("ships[0]") && e.contains("bad_luck"), "{e}");
    }
}

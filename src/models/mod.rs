//! The game's physical components, loaded from the data files in `models/`.
//!
//! Every dimension lives in exactly one JSON file; the binary embeds the shipped copies so
//! that it runs from anywhere, and [`Models::load_dir`] reads an edited set for experiments.
//! A wrong file is refused with one message that names the file and the field.

mod error;
pub(crate) use error::from_json;
mod obstacles;

pub use error::ModelError;
pub use obstacles::{ObstacleLibrary, ObstacleModel};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// The three ship base classes of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BaseSize {
    Small,
    Medium,
    Large,
}

impl BaseSize {
    pub const ALL: [BaseSize; 3] = [BaseSize::Small, BaseSize::Medium, BaseSize::Large];

    pub fn name(self) -> &'static str {
        match self {
            BaseSize::Small => "small",
            BaseSize::Medium => "medium",
            BaseSize::Large => "large",
        }
    }
}

impl std::fmt::Display for BaseSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a barrel-roll template is laid against the side of a base (spec section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RollPlacement {
    /// Narrow end of the template on the side hashmark (small ships).
    EndOn,
    /// Long edge of the template along the side, its midpoint on the hashmark (medium, large).
    SideOn,
}

/// The plastic pegs at the front and rear of every base; they count for overlap.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guides {
    pub offset_x_mm: f64,
    pub width_mm: f64,
    pub protrusion_mm: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaseModel {
    pub width_mm: f64,
    pub roll_placement: RollPlacement,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Bases {
    pub format: String,
    pub base_top_height_mm: f64,
    pub guides: Guides,
    pub sizes: BTreeMap<BaseSize, BaseModel>,
}

impl Bases {
    pub fn get(&self, size: BaseSize) -> &BaseModel {
        // validate() guarantees all three sizes are present.
        &self.sizes[&size]
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StraightTemplate {
    pub speed: u8,
    pub length_mm: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArcTemplate {
    pub speed: u8,
    /// Radius of the template's centre line.
    pub radius_mm: f64,
    pub angle_deg: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Templates {
    pub format: String,
    pub width_mm: f64,
    pub straight: Vec<StraightTemplate>,
    pub bank: Vec<ArcTemplate>,
    pub turn: Vec<ArcTemplate>,
}

impl Templates {
    pub fn straight(&self, speed: u8) -> Option<&StraightTemplate> {
        self.straight.iter().find(|t| t.speed == speed)
    }
    pub fn bank(&self, speed: u8) -> Option<&ArcTemplate> {
        self.bank.iter().find(|t| t.speed == speed)
    }
    pub fn turn(&self, speed: u8) -> Option<&ArcTemplate> {
        self.turn.iter().find(|t| t.speed == speed)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayAreaModel {
    pub name: String,
    pub width_mm: f64,
    pub height_mm: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlayAreas {
    pub format: String,
    pub areas: Vec<PlayAreaModel>,
}

impl PlayAreaModel {
    /// Its rectangle, as the geometry and the scene take it.
    pub fn area(&self) -> crate::geometry::PlayArea {
        crate::geometry::PlayArea {
            width_mm: self.width_mm,
            height_mm: self.height_mm,
        }
    }
}

impl PlayAreas {
    pub fn get(&self, name: &str) -> Option<&PlayAreaModel> {
        self.areas.iter().find(|a| a.name == name)
    }

    /// The standard 3 ft x 3 ft area; validation guarantees it is there.
    pub fn standard(&self) -> crate::geometry::PlayArea {
        self.get("standard")
            .expect("validated: the standard play area exists")
            .area()
    }
}

/// All component data in one place.
#[derive(Clone, Debug)]
pub struct Models {
    pub bases: Bases,
    pub templates: Templates,
    pub play_areas: PlayAreas,
    pub obstacles: ObstacleLibrary,
}

const BASES_FILE: &str = "bases.json";
const TEMPLATES_FILE: &str = "templates.json";
const PLAY_AREAS_FILE: &str = "play_areas.json";
const OBSTACLES_FILE: &str = "obstacles.jsonl";

impl Models {
    /// The models shipped in the repository, embedded at build time.
    pub fn builtin() -> &'static Models {
        static BUILTIN: OnceLock<Models> = OnceLock::new();
        BUILTIN.get_or_init(|| {
            Models::parse(
                include_str!("../../models/bases.json"),
                include_str!("../../models/templates.json"),
                include_str!("../../models/play_areas.json"),
                include_str!("../../models/obstacles.jsonl"),
            )
            // The embedded files are checked by the test suite; a failure here is a build defect.
            .expect("the embedded models/ files are valid")
        })
    }

    /// Loads `bases.json`, `templates.json`, `play_areas.json` and `obstacles.jsonl` from `dir`.
    pub fn load_dir(dir: &Path) -> Result<Models, ModelError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|e| ModelError::Io {
                file: path.display().to_string(),
                message: e.to_string(),
            })
        };
        Models::parse(
            &read(BASES_FILE)?,
            &read(TEMPLATES_FILE)?,
            &read(PLAY_AREAS_FILE)?,
            &read(OBSTACLES_FILE)?,
        )
    }

    /// Parses and validates the four model texts.
    pub fn parse(
        bases: &str,
        templates: &str,
        play_areas: &str,
        obstacles: &str,
    ) -> Result<Models, ModelError> {
        let bases: Bases = error::from_json(BASES_FILE, bases)?;
        validate_bases(&bases)?;
        let templates: Templates = error::from_json(TEMPLATES_FILE, templates)?;
        validate_templates(&templates)?;
        let play_areas: PlayAreas = error::from_json(PLAY_AREAS_FILE, play_areas)?;
        validate_play_areas(&play_areas)?;
        let obstacles = ObstacleLibrary::parse_jsonl(OBSTACLES_FILE, obstacles)?;
        Ok(Models {
            bases,
            templates,
            play_areas,
            obstacles,
        })
    }
}

fn invalid(file: &str, field: impl Into<String>, message: impl Into<String>) -> ModelError {
    ModelError::Invalid {
        file: file.to_string(),
        field: field.into(),
        message: message.into(),
    }
}

fn check_format(file: &str, found: &str, expected: &str) -> Result<(), ModelError> {
    if found == expected {
        Ok(())
    } else {
        Err(invalid(
            file,
            "format",
            format!("expected \"{expected}\", found \"{found}\""),
        ))
    }
}

fn positive(file: &str, field: &str, v: f64) -> Result<(), ModelError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(invalid(
            file,
            field,
            format!("must be a positive number, found {v}"),
        ))
    }
}

fn validate_bases(b: &Bases) -> Result<(), ModelError> {
    let f = BASES_FILE;
    check_format(f, &b.format, "hashmark-bases/1")?;
    positive(f, "base_top_height_mm", b.base_top_height_mm)?;
    positive(f, "guides.offset_x_mm", b.guides.offset_x_mm)?;
    positive(f, "guides.width_mm", b.guides.width_mm)?;
    positive(f, "guides.protrusion_mm", b.guides.protrusion_mm)?;
    for size in BaseSize::ALL {
        let Some(m) = b.sizes.get(&size) else {
            return Err(invalid(f, format!("sizes.{size}"), "missing"));
        };
        positive(f, &format!("sizes.{size}.width_mm"), m.width_mm)?;
        if b.guides.offset_x_mm + b.guides.width_mm / 2.0 >= m.width_mm / 2.0 {
            return Err(invalid(
                f,
                "guides.offset_x_mm",
                format!("guides stick out of the side of the {size} base"),
            ));
        }
    }
    Ok(())
}

fn validate_templates(t: &Templates) -> Result<(), ModelError> {
    let f = TEMPLATES_FILE;
    check_format(f, &t.format, "hashmark-templates/1")?;
    positive(f, "width_mm", t.width_mm)?;
    for (i, s) in t.straight.iter().enumerate() {
        positive(f, &format!("straight[{i}].length_mm"), s.length_mm)?;
    }
    for (kind, list) in [("bank", &t.bank), ("turn", &t.turn)] {
        for (i, a) in list.iter().enumerate() {
            positive(f, &format!("{kind}[{i}].radius_mm"), a.radius_mm)?;
            positive(f, &format!("{kind}[{i}].angle_deg"), a.angle_deg)?;
            if a.radius_mm <= t.width_mm / 2.0 {
                return Err(invalid(
                    f,
                    format!("{kind}[{i}].radius_mm"),
                    "must exceed half the template width",
                ));
            }
            if a.angle_deg >= 180.0 {
                return Err(invalid(
                    f,
                    format!("{kind}[{i}].angle_deg"),
                    "must be below 180",
                ));
            }
        }
    }
    if t.straight(1).is_none() || t.bank(1).is_none() {
        return Err(invalid(
            f,
            "straight/bank",
            "speed 1 templates are required",
        ));
    }
    Ok(())
}

fn validate_play_areas(p: &PlayAreas) -> Result<(), ModelError> {
    let f = PLAY_AREAS_FILE;
    check_format(f, &p.format, "hashmark-play-areas/1")?;
    for (i, a) in p.areas.iter().enumerate() {
        positive(f, &format!("areas[{i}].width_mm"), a.width_mm)?;
        positive(f, &format!("areas[{i}].height_mm"), a.height_mm)?;
    }
    if p.get("standard").is_none() {
        return Err(invalid(
            f,
            "areas",
            "the \"standard\" play area is required",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_models_match_the_spec() {
        let m = Models::builtin();
        let w: Vec<f64> = BaseSize::ALL
            .iter()
            .map(|s| m.bases.get(*s).width_mm)
            .collect();
        assert_eq!(w, [40.0, 60.0, 80.0]);
        assert_eq!(m.obstacles.len(), 30);
        assert_eq!(m.templates.straight(3).unwrap().length_mm, 120.0);
        assert_eq!(m.templates.bank(2).unwrap().radius_mm, 130.0);
        assert_eq!(m.templates.turn(2).unwrap().radius_mm, 62.5);
        assert_eq!(m.play_areas.get("epic").unwrap().width_mm, 1828.8);
        assert!(m.obstacles.get("core2asteroid5").is_some());
    }

    fn copy_models() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
        for f in [BASES_FILE, TEMPLATES_FILE, PLAY_AREAS_FILE, OBSTACLES_FILE] {
            std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
        }
        dir
    }

    fn edit(dir: &Path, file: &str, from: &str, to: &str) {
        let p = dir.join(file);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains(from));
        std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
    }

    #[test]
    fn a_wrong_model_file_is_named_with_its_field() {
        let dir = copy_models();
        assert!(Models::load_dir(dir.path()).is_ok());

        edit(
            dir.path(),
            BASES_FILE,
            "\"width_mm\": 60.0",
            "\"width_mm\": -60.0",
        );
        let e = Models::load_dir(dir.path()).unwrap_err().to_string();
        assert_eq!(
            e,
            "bases.json: sizes.medium.width_mm: must be a positive number, found -60"
        );

        let dir = copy_models();
        edit(
            dir.path(),
            TEMPLATES_FILE,
            "\"radius_mm\": 80.0",
            "\"radius_mm\": \"eighty\"",
        );
        let e = Models::load_dir(dir.path()).unwrap_err().to_string();
        assert!(
            e.starts_with("templates.json: bank[0].radius_mm: invalid type"),
            "{e}"
        );

        let dir = copy_models();
        let good = r#"{"xws":"a","mm":[[0,0],[1,0],[0,1]]}"#;
        let bad = r#"{"xws":"b","mm":[[0,0],[1,1]]}"#;
        std::fs::write(dir.path().join(OBSTACLES_FILE), format!("{good}\n{bad}\n")).unwrap();
        let e = Models::load_dir(dir.path()).unwrap_err().to_string();
        assert!(
            e.starts_with("obstacles.jsonl line 2: mm: a polygon needs at least 3 points"),
            "{e}"
        );

        let dir = copy_models();
        edit(
            dir.path(),
            PLAY_AREAS_FILE,
            "hashmark-play-areas/1",
            "hashmark-play-areas/0",
        );
        let e = Models::load_dir(dir.path()).unwrap_err().to_string();
        assert!(e.contains("play_areas.json: format: expected"), "{e}");

        std::fs::remove_file(dir.path().join(BASES_FILE)).unwrap();
        let e = Models::load_dir(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("bases.json") && e.contains("No such file"),
            "{e}"
        );
    }
}

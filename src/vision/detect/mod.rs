//! Detection (issue 5): from a calibrated camera frame to a scene in table millimetres.
//! Ships come from their bases (`bases`), obstacles from their outlines (`obstacles`); both
//! work in rectified top-down views (`ortho`) and refine in the camera frame itself.

pub mod base_fit;
pub mod base_search;
pub mod bases;
pub mod facing;
pub mod hidden;
pub mod memory;
pub mod obstacles;
pub mod ortho;
pub mod score;
pub mod stream;
pub mod token_lines;
pub mod white;

use crate::calibration::files::CalibrationFile;
use crate::calibration::{CameraFile, TableFile};
use crate::geometry::PlayArea;
use crate::models::Models;
use crate::scene::Scene;
use crate::vision::{Camera, VisionError};
use opencv::core::Mat;
use opencv::prelude::*;
use ortho::{OrthoMaps, OrthoView};
use std::path::Path;

/// What detection needs to know about the camera: the full model (intrinsics and table
/// pose) and the play area it looks at.
#[derive(Clone, Debug)]
pub struct Calibrated {
    pub camera: Camera,
    pub play_area: PlayArea,
    /// The mat markers the table was calibrated against: a frame's check looks for them
    /// there.
    pub layout: crate::calibration::Layout,
    /// What the calibration alone contributes to a position's error on the table (mm, 1
    /// sigma): camera.json's estimate when it has one.
    pub sigma_mm: f64,
}

impl Calibrated {
    /// From a directory holding `camera.json` and `table.json` (as `hashmark calibrate`
    /// writes them); the play area and the mat markers are the table file's.
    pub fn load(dir: &Path) -> Result<Calibrated, VisionError> {
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
        let sigma_mm = camera.table_uncertainty_mm.unwrap_or(0.1);
        let camera = super::calibrate::camera_model(&camera, &table).ok_or_else(|| {
            VisionError::Invalid(format!(
                "{}: has no camera pose (it was made without intrinsics); re-run `hashmark calibrate table --camera-calibration camera.json`",
                dir.join("table.json").display()
            ))
        })?;
        Ok(Calibrated {
            camera,
            play_area: table.play_area(),
            layout: table.layout(),
            sigma_mm,
        })
    }

    /// Whether `frame` (of the calibration's size) shows the mat markers where the
    /// calibration puts them (see [`crate::vision::calibrate::check`]).
    pub fn check_table(
        &self,
        frame: &Mat,
    ) -> Result<crate::vision::calibrate::check::TableCheck, VisionError> {
        self.check_frame(frame)?;
        crate::vision::calibrate::check::check_table(frame, &self.camera, &self.layout)
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

/// One frame's findings: the scene, the bases with their fits, and the table-mm boxes of
/// large bright regions that may be a hand over the table. One frame cannot tell a hand
/// from a planet printed on the mat; a stream can (see `stream`), so the boxes are only
/// candidates here.
pub struct Detection {
    pub scene: Scene,
    pub bases: Vec<bases::FoundBase>,
    pub occluders: Vec<Vec<crate::geometry::Point>>,
    /// What the next search of a stream can use (see [`memory`]).
    pub memory: memory::Memory,
    /// What the frame was read through (see [`white`]): a stream's re-fits read theirs
    /// through it too, the light being the same between searches.
    pub balance: white::Balance,
}

/// Detection set up for one calibration: the rectified view's remapping tables are built
/// once here (the camera model per pixel is the expensive part); an empty-table frame, when
/// given, is kept for the obstacle search.
pub struct Detector<'a> {
    pub cal: Calibrated,
    pub models: &'a Models,
    view: OrthoView,
    maps: OrthoMaps,
    background: Option<Mat>,
}

impl<'a> Detector<'a> {
    pub fn new(cal: Calibrated, models: &'a Models) -> Result<Detector<'a>, VisionError> {
        let margin = 10.0;
        let play = cal.play_area;
        let view = OrthoView::new(
            -margin,
            -margin,
            play.width_mm + margin,
            play.height_mm + margin,
            models.bases.base_top_height_mm,
            1.0,
        );
        let maps = view.maps(&cal.camera)?;
        Ok(Detector {
            cal,
            models,
            view,
            maps,
            background: None,
        })
    }

    /// Uses a frame of the empty table (same camera, any light) to tell the table's art
    /// from what stands on it.
    pub fn set_background(&mut self, background: &Mat) -> Result<(), VisionError> {
        self.cal.check_frame(background)?;
        self.background = Some(match self.balance(background)?.apply_frame(background)? {
            Some(b) => b,
            None => background.try_clone()?,
        });
        Ok(())
    }

    /// What a person should know of how `frame`'s colours were read, where anything and
    /// where the mat markers' paper shows: a frame with no colour (its facings are not
    /// read), or paper whose white is off (the frame is read through gains; the camera set
    /// right reads best).
    pub fn colour_note(&self, frame: &Mat) -> Result<Option<String>, VisionError> {
        // Said only where the markers' paper shows: a blank frame has other troubles.
        let Some(w) = white::paper_white(frame, &self.cal.camera, &self.cal.layout)? else {
            return Ok(None);
        };
        if !facing::shows_colour(frame) {
            return Ok(Some(
                "the image has no colour (a monochrome camera?): which way each ship faces is \
                 not read; check every facing by eye"
                    .into(),
            ));
        }
        let b = white::Balance::of_white(w);
        Ok((b != white::Balance::NONE).then(|| {
            format!(
                "the mat markers' paper shows blue {:.0}, green {:.0}, red {:.0}, not grey at \
                 174-250: the frame is read through gains {:.2}, {:.2}, {:.2} (the camera's white \
                 balance and exposure set right read it best)",
                w[0], w[1], w[2], b.gains[0], b.gains[1], b.gains[2]
            )
        }))
    }

    /// What puts `frame`'s white balance and exposure right (see [`white`]): every step of
    /// the search reads the frame through it, as though its mat markers' paper showed grey
    /// at the level the detection's limits were chosen at.
    pub fn balance(&self, frame: &Mat) -> Result<white::Balance, VisionError> {
        let white = white::paper_white(frame, &self.cal.camera, &self.cal.layout)?;
        Ok(white.map_or(white::Balance::NONE, white::Balance::of_white))
    }

    /// Whether `frame` shows the mat markers where the calibration puts them (see
    /// [`crate::vision::calibrate::check`]): a camera moved since `calibrate table` puts
    /// every position off, with every sigma still small.
    pub fn check_table(
        &self,
        frame: &Mat,
    ) -> Result<crate::vision::calibrate::check::TableCheck, VisionError> {
        self.cal.check_table(frame)
    }

    /// One frame to a scene: obstacles, then ships (see [`Detector::detect_full`]).
    pub fn detect(&self, frame: &Mat) -> Result<Scene, VisionError> {
        Ok(self.detect_full(frame)?.scene)
    }

    /// One frame to a scene, with the bases as fitted and what hides the table (a hand).
    pub fn detect_full(&self, frame: &Mat) -> Result<Detection, VisionError> {
        self.detect_full_known(frame, &memory::Memory::default())
    }

    /// [`Detector::detect_full`] for a frame of a stream, given what the search of an
    /// earlier frame found (see [`memory`]).
    pub fn detect_full_known(
        &self,
        frame: &Mat,
        known: &memory::Memory,
    ) -> Result<Detection, VisionError> {
        self.cal.check_frame(frame)?;
        let balance = self.balance(frame)?;
        let balanced = balance.apply_frame(frame)?;
        let frame = balanced.as_ref().unwrap_or(frame);
        let mut scene = Scene::new(self.cal.play_area);
        // Obstacles (matched against the 30 known outlines, which no miniature imitates)
        // and the bases are searched side by side, one core each; a base found under a
        // blob that lies on a matched obstacle is that obstacle, not a ship.
        let background = self.background.as_ref();
        let (obstacles, found) = std::thread::scope(|s| {
            let obstacles = s.spawn(|| {
                obstacles::find_obstacles_known(
                    frame,
                    background,
                    &self.cal.camera,
                    &self.cal.play_area,
                    self.models,
                    &[],
                    &known.obstacles,
                )
            });
            let found = self.find_bases(frame, known);
            (obstacles.join(), found)
        });
        let mut searched =
            obstacles.map_err(|_| VisionError::Invalid("obstacle search failed".into()))??;
        scene.obstacles = searched.obstacles.clone();
        let (search, occluders) = found?;
        let bases::BaseSearch {
            found: mut bases,
            empty: empty_blobs,
            per_blob: found_blobs,
            reused,
            hidden,
        } = search;
        // Only outlines that matched a standard model rule a blob out: a measured polygon
        // (reported when an empty-table frame vouches for a region) may be a miniature.
        let outlines: Vec<Vec<[f64; 2]>> = scene
            .obstacles
            .iter()
            .filter(|o| o.model.is_some())
            .filter_map(|o| o.outline(self.models).ok())
            .collect();
        bases.retain(|b| {
            !outlines
                .iter()
                .any(|o| crate::geometry::polygon::ring_contains(o, b.blob))
        });

        scene.ships = bases::to_ships(&bases, self.cal.sigma_mm);
        // With the ships known, their miniatures are masked out of the obstacle search.
        if !scene.ships.is_empty() && scene.obstacles.iter().any(|o| o.model.is_none()) {
            searched = obstacles::find_obstacles_known(
                frame,
                self.background.as_ref(),
                &self.cal.camera,
                &self.cal.play_area,
                self.models,
                &scene.ships,
                &known.obstacles,
            )?;
            scene.obstacles = searched.obstacles.clone();
        }
        let hidden = hidden::hidden_outlines(
            &hidden,
            &scene.obstacles,
            &bases,
            &self.cal.camera,
            self.models,
        );
        scene.obstacles.extend(hidden);
        Ok(Detection {
            scene,
            bases,
            occluders,
            memory: memory::Memory {
                reused: memory::Reused {
                    empty_regions: searched.passed_over,
                    ..reused
                },
                obstacles: searched,
                empty_blobs,
                found_blobs,
            },
            balance,
        })
    }
}

impl Detector<'_> {
    /// The bases and the occluders of one frame, and what was found per blob (a stream's
    /// next search uses it, as this one uses `before`).
    fn find_bases(
        &self,
        frame: &Mat,
        before: &memory::Memory,
    ) -> Result<(bases::BaseSearch, Vec<Vec<crate::geometry::Point>>), VisionError> {
        let grey = crate::vision::edges::Grey::from_mat(frame)?;
        let ortho = self.maps.apply(frame)?;
        let grads = base_search::Gradients::new(&ortho, self.view)?;
        let views = bases::Views {
            frame,
            colour: facing::shows_colour(frame),
            grey: &grey,
            ortho: &ortho,
            grads: &grads,
        };
        // What may be a hand is looked for beside the search, on a core the search's
        // serial steps leave idle.
        let (search, occluders) = std::thread::scope(|s| {
            let occluders = s.spawn(|| base_search::occluders(&ortho, &grads.view));
            let search = bases::find_bases_known(
                &views,
                &self.cal.camera,
                &self.cal.play_area,
                self.models,
                &[],
                before,
            );
            (search, occluders.join())
        });
        let occluders =
            occluders.map_err(|_| VisionError::Invalid("the search for hands failed".into()))??;
        Ok((search?, occluders))
    }
}

/// One frame to a scene (sets up a [`Detector`] for this call; streams keep one).
pub fn detect(
    frame: &Mat,
    background: Option<&Mat>,
    cal: &Calibrated,
    models: &Models,
) -> Result<Scene, VisionError> {
    let mut d = Detector::new(cal.clone(), models)?;
    if let Some(bg) = background {
        d.set_background(bg)?;
    }
    d.detect(frame)
}

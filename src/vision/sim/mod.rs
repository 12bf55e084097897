//! The synthetic camera (issue 3): photographs of a game table with their exact truth.
//! `simulate` writes a frame (or a short sequence), the empty-table background and ChArUco
//! calibration views of one random camera, with `truth.json` beside them.

pub mod camera_change;
pub mod charuco;
pub mod clutter;
pub mod faults;
pub mod render;
pub mod scene_gen;
pub mod texture;
pub mod visibility;
pub mod world;

use crate::files::write_atomic;
use crate::geometry::PlayArea;
use crate::models::{BaseSize, Models};
use crate::scene::Scene;
use crate::vision::aruco::CharucoGeometry;
use crate::vision::camera::{Camera, Resolution};
use crate::vision::rng::Rng;
use crate::vision::{VisionError, cv};
use charuco::BoardPose;
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};
use std::path::Path;
use world::{Mini, World, marker_centres, marker_corners};

pub const TRUTH_FORMAT: &str = "hashmark-sim-truth/1";

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SimOptions {
    pub seed: u64,
    pub resolution: Resolution,
    /// `None`: one `frame.jpg`; `Some(k)`: `frame_000.jpg`.. with a barrel roll and a hand.
    pub frames: Option<usize>,
    pub charuco_views: usize,
    /// Samples per pixel along each axis.
    pub supersample: u32,
}

/// One mat marker in the truth: its corners in the table and in the image.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MarkerTruth {
    pub id: i32,
    pub corners_mm: [[f64; 3]; 4],
    pub corners_px: [[f64; 2]; 4],
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FrameTruth {
    pub file: String,
    pub scene: Scene,
    /// Centre of the hand blob (table mm) when a hand is over the table.
    pub hand: Option<[f64; 3]>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CharucoViewTruth {
    pub file: String,
    #[serde(flatten)]
    pub pose: BoardPose,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CharucoTruth {
    pub dictionary: String,
    pub squares_x: usize,
    pub squares_y: usize,
    pub square_mm: f64,
    pub marker_mm: f64,
    pub views: Vec<CharucoViewTruth>,
}

/// `truth.json`: everything needed to score a vision result on these images.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Truth {
    pub format: String,
    pub seed: u64,
    pub camera: Camera,
    pub scene: Scene,
    pub markers: Vec<MarkerTruth>,
    pub frames: Vec<FrameTruth>,
    pub background: String,
    pub charuco: CharucoTruth,
}

/// The table region every camera must see: the play area and the four marker cards.
pub fn must_see(play: [f64; 2]) -> Vec<[f64; 2]> {
    let m = world::CARD_HALF_MM + 45.0;
    let mut pts = Vec::new();
    for i in 0..=8 {
        let f = f64::from(i) / 8.0;
        let (x, y) = (-m + f * (play[0] + 2.0 * m), -m + f * (play[1] + 2.0 * m));
        pts.extend([[x, -m], [x, play[1] + m], [-m, y], [play[0] + m, y]]);
    }
    pts
}

/// The random camera of a seed.
pub fn camera_for(seed: u64, resolution: Resolution, play: [f64; 2]) -> Camera {
    Camera::random(seed, resolution, &must_see(play))
}

/// The projected truth of the four mat markers.
pub fn marker_truth(camera: &Camera, play: [f64; 2]) -> Vec<MarkerTruth> {
    marker_centres(play[0], play[1])
        .iter()
        .enumerate()
        .map(|(id, c)| {
            let corners_mm = marker_corners(*c);
            let corners_px = corners_mm.map(|p| camera.project(p).unwrap_or([f64::NAN; 2]));
            MarkerTruth {
                id: id as i32,
                corners_mm,
                corners_px,
            }
        })
        .collect()
}

/// Renders one photograph: ray casting, camera faults, JPEG. `seed` picks the noise and
/// faults, so two photographs of one world differ like two exposures.
pub fn photograph(
    world: &World,
    camera: &Camera,
    seed: u64,
    supersample: u32,
) -> Result<Vec<u8>, VisionError> {
    let lin = render::render(world, camera, supersample.max(1), seed);
    let f = faults::Faults::random(seed, camera);
    let rgb = faults::apply(lin, camera, &f);
    let mat = cv::bgr_from_rgb(camera.width(), camera.height(), &rgb)?;
    cv::encode_jpeg(&mat, f.jpeg_quality)
}

/// Final centre of a right (side = 1) or left (side = -1) barrel roll, middle position,
/// 1-straight template (spec section 3).
fn roll_target(size: BaseSize, x: f64, y: f64, heading_deg: f64, side: f64) -> [f64; 2] {
    let d = match size {
        BaseSize::Small | BaseSize::Medium => 80.0,
        BaseSize::Large => 100.0,
    };
    let h = heading_deg.to_radians();
    // right = (sin h, -cos h)
    [x + side * d * h.sin(), y - side * d * h.cos()]
}

/// The scene after one ship's barrel roll, if some ship can roll without leaving the play
/// area or touching anything (checked with enclosing circles, conservatively).
fn rolled_scene(scene: &Scene, models: &Models) -> Option<(Scene, usize)> {
    let radius = |size: BaseSize| {
        (models.bases.get(size).width_mm / 2.0 + models.bases.guides.protrusion_mm)
            * std::f64::consts::SQRT_2
    };
    for (i, s) in scene.ships.iter().enumerate() {
        for side in [1.0, -1.0] {
            let [x, y] = roll_target(s.size, s.x, s.y, s.heading_deg, side);
            let r = radius(s.size);
            let pa = &scene.play_area;
            if x - r < 0.0 || y - r < 0.0 || x + r > pa.width_mm || y + r > pa.height_mm {
                continue;
            }
            let ships_clear = scene.ships.iter().enumerate().all(|(j, o)| {
                j == i || ((o.x - x).powi(2) + (o.y - y).powi(2)).sqrt() > r + radius(o.size) + 2.0
            });
            let obstacles_clear = scene.obstacles.iter().all(|o| match o.outline(models) {
                Ok(poly) => poly
                    .iter()
                    .all(|p| ((p[0] - x).powi(2) + (p[1] - y).powi(2)).sqrt() > r + 2.0),
                Err(_) => false,
            });
            if ships_clear && obstacles_clear {
                let mut out = scene.clone();
                out.ships[i].x = (x * 100.0).round() / 100.0;
                out.ships[i].y = (y * 100.0).round() / 100.0;
                return Some((out, i));
            }
        }
    }
    None
}

/// A skin-coloured hand blob 100-300 mm above the table.
fn hand_at(centre: [f64; 3], heading: f64, seed: u64) -> Mini {
    Mini {
        centre: Vector3::from(centre),
        heading,
        a: 50.0,
        b: 150.0,
        hz: 25.0,
        harmonics: [(0.12, 0.3), (0.06, 1.1), (0.04, 2.0), (0.03, 0.5)],
        colour: texture::srgb(224, 172, 140),
        seed,
        radius: 150.0 * 1.5,
    }
}

/// Writes the frame(s), background, calibration views and `truth.json` into `out`.
pub fn simulate(opts: &SimOptions, out: &Path) -> Result<Truth, VisionError> {
    simulate_on(opts, Models::builtin().play_areas.standard(), out)
}

/// [`simulate`] on another play area (an epic one): the mat, its marker cards at the play
/// area's corners and the camera's view follow it.
pub fn simulate_on(opts: &SimOptions, area: PlayArea, out: &Path) -> Result<Truth, VisionError> {
    let models = Models::builtin();
    std::fs::create_dir_all(out)
        .map_err(|e| VisionError::Invalid(format!("cannot create {}: {e}", out.display())))?;
    let scene = scene_gen::random_scene_on(opts.seed, models, area);
    let play = [scene.play_area.width_mm, scene.play_area.height_mm];
    let camera = camera_for(opts.seed, opts.resolution, play);
    let look = opts.seed;
    let mut frames = Vec::new();
    match opts.frames {
        None => {
            let world = World::build(&scene, look, opts.seed, models)?;
            let jpg = photograph(&world, &camera, opts.seed, opts.supersample)?;
            write_atomic(&out.join("frame.jpg"), &jpg)?;
            frames.push(FrameTruth {
                file: "frame.jpg".into(),
                scene: scene.clone(),
                hand: None,
            });
        }
        Some(k) => {
            let rolled = rolled_scene(&scene, models);
            let mut rng = Rng::stream(opts.seed, "hand");
            let (target, _) = match &rolled {
                Some((_, i)) => ([scene.ships[*i].x, scene.ships[*i].y], *i),
                None => ([play[0] / 2.0, play[1] / 2.0], 0),
            };
            let dir = rng.range(0.0, std::f64::consts::TAU);
            let reach = 450.0;
            let height = rng.range(100.0, 300.0);
            let hand_seed = rng.next_u64();
            for f in 0..k {
                let s = if k > 1 {
                    f as f64 / (k - 1) as f64
                } else {
                    0.5
                };
                let frame_scene = match &rolled {
                    Some((after, _)) if 2 * f >= k => after.clone(),
                    _ => scene.clone(),
                };
                // The hand comes in from one side, passes over the rolling ship, leaves.
                let along = (s - 0.5) * 2.0 * reach;
                let hand_c = [
                    target[0] + along * dir.cos(),
                    target[1] + along * dir.sin(),
                    height,
                ];
                let mut world = World::build(&frame_scene, look, opts.seed, models)?;
                world.hand = Some(hand_at(
                    hand_c,
                    dir + std::f64::consts::FRAC_PI_2,
                    hand_seed,
                ));
                let frame_seed = opts.seed.wrapping_mul(1000).wrapping_add(f as u64);
                let jpg = photograph(&world, &camera, frame_seed, opts.supersample)?;
                let file = format!("frame_{f:03}.jpg");
                write_atomic(&out.join(&file), &jpg)?;
                frames.push(FrameTruth {
                    file,
                    scene: frame_scene,
                    hand: Some(hand_c),
                });
            }
        }
    }
    // The empty table: same camera and looks, different light and noise.
    let empty = Scene::new(scene.play_area);
    let bg_world = World::build(&empty, look, opts.seed ^ 0xB6, models)?;
    let bg = photograph(&bg_world, &camera, opts.seed ^ 0xB6, opts.supersample)?;
    write_atomic(&out.join("background.jpg"), &bg)?;
    // Calibration views of the same camera.
    let geometry = CharucoGeometry::spec_board()?;
    let poses = charuco::board_poses(opts.seed, &camera, &geometry, opts.charuco_views);
    let mut views = Vec::new();
    for (i, pose) in poses.iter().enumerate() {
        let mut w = World::build(&scene, look, opts.seed.wrapping_add(i as u64 + 1), models)?;
        w.board = Some(charuco::board_in_world(&camera, pose, geometry.clone()));
        let jpg = photograph(
            &w,
            &camera,
            opts.seed.wrapping_add(7919 * (i as u64 + 1)),
            opts.supersample,
        )?;
        let file = format!("charuco_{i:02}.jpg");
        write_atomic(&out.join(&file), &jpg)?;
        views.push(CharucoViewTruth {
            file,
            pose: pose.clone(),
        });
    }
    let truth = Truth {
        format: TRUTH_FORMAT.into(),
        seed: opts.seed,
        camera: camera.clone(),
        scene,
        markers: marker_truth(&camera, play),
        frames,
        background: "background.jpg".into(),
        charuco: CharucoTruth {
            dictionary: "DICT_5X5_100".into(),
            squares_x: geometry.squares_x,
            squares_y: geometry.squares_y,
            square_mm: geometry.square_mm,
            marker_mm: geometry.marker_mm,
            views,
        },
    };
    let json = serde_json::to_string_pretty(&truth)
        .map_err(|e| VisionError::Invalid(format!("truth: {e}")))?;
    write_atomic(&out.join("truth.json"), json.as_bytes())?;
    Ok(truth)
}

/// Writes a downscaled copy of an image file (for documentation and quick looks): PNG when
/// `preview` ends in `.png`, else JPEG.
pub fn write_preview(image: &Path, preview: &Path, width: u32) -> Result<(), VisionError> {
    let bytes = std::fs::read(image)
        .map_err(|e| VisionError::Invalid(format!("cannot read {}: {e}", image.display())))?;
    let img = cv::decode(&bytes)?;
    let small = cv::downscale(&img, width.clamp(16, 8192) as i32)?;
    let png = preview
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    let bytes = if png {
        cv::encode_png(&small)?
    } else {
        cv::encode_jpeg(&small, 90)?
    };
    write_atomic(preview, &bytes)?;
    Ok(())
}

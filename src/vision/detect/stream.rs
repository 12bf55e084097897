//! Detection over a stream of frames (a video file, a live camera): full detection now and
//! then, a cheap re-fit of the known ships in between, and the tracker on top for stable
//! ids, no flicker and nothing lost under a hand.
//!
//! A full detection costs a few frames' time at 1080p (searching the whole table); the
//! re-fit costs about 1-2 ms per ship. A ship that moved no longer fits where it was and
//! is found again by the next full detection, `full_every` frames later at most.

use super::Detector;
use super::bases::{FoundBase, refit_bases, to_ships};
use crate::geometry::polygon::{ring_contains, to_pairs};
use crate::geometry::{Point, Pose};
use crate::scene::{ObstacleSpec, Scene};
use crate::track::{ShipObservation, Tracker, TrackerOptions};
use crate::vision::VisionError;
use crate::vision::edges::Grey;
use opencv::core::Mat;

pub struct Stream<'a> {
    detector: Detector<'a>,
    tracker: Tracker,
    obstacles: Vec<ObstacleSpec>,
    /// Where the bases were last measured (by the full search or the re-fit since): the
    /// re-fit starts there, not at the tracker's smoothed poses, so that a ship the full
    /// search found in a new place (or for the first time) is seen there again on the next
    /// frame and the tracker believes it at once.
    measured: Vec<FoundBase>,
    occluders: Vec<Vec<Point>>,
    /// Large bright regions of the first full search: the mat's own art (a planet, a
    /// nebula), assuming the stream starts without a hand over the table. Later ones that
    /// match none of these are a hand.
    table_art: Option<Vec<Vec<Point>>>,
    frame: u64,
    /// A full detection every this many frames (1: every frame).
    pub full_every: u64,
}

/// What one frame gave.
pub struct StreamFrame {
    pub scene: Scene,
    /// Whether this frame ran the full search (else a re-fit of the known ships).
    pub full: bool,
}

impl<'a> Stream<'a> {
    pub fn new(detector: Detector<'a>, full_every: u64) -> Stream<'a> {
        Stream {
            detector,
            tracker: Tracker::new(TrackerOptions::default()),
            obstacles: Vec::new(),
            measured: Vec::new(),
            occluders: Vec::new(),
            table_art: None,
            frame: 0,
            full_every: full_every.max(1),
        }
    }

    pub fn detector(&self) -> &Detector<'a> {
        &self.detector
    }

    /// Whether the next frame gets the full search.
    pub fn next_is_full(&self) -> bool {
        self.frame.is_multiple_of(self.full_every) || self.measured.is_empty()
    }

    /// Takes the next frame; returns the tracked scene.
    pub fn push(&mut self, frame: &Mat) -> Result<StreamFrame, VisionError> {
        let full = self.next_is_full();
        self.frame += 1;
        let (observed, occluders) = if full {
            let d = self.detector.detect_full(frame)?;
            // Obstacles under a hand are held: a missing one that an occluder covers stays.
            let mut obstacles = d.scene.obstacles.clone();
            for old in &self.obstacles {
                let hidden = old
                    .outline(self.detector.models)
                    .ok()
                    .and_then(|o| o.first().copied())
                    .is_some_and(|p| d.occluders.iter().any(|h| ring_contains(&to_pairs(h), p)));
                let found = obstacles
                    .iter()
                    .any(|o| o.model == old.model && o.model.is_some());
                if hidden && !found {
                    let mut held = old.clone();
                    held.quality.occluded = true;
                    obstacles.push(held);
                }
            }
            self.obstacles = obstacles;
            let art = self.table_art.get_or_insert_with(|| d.occluders.clone());
            let hands: Vec<Vec<Point>> = d
                .occluders
                .iter()
                .filter(|o| !art.iter().any(|a| overlap(a, o) > 0.5))
                .cloned()
                .collect();
            self.occluders = hands.clone();
            (d.bases, hands)
        } else {
            self.detector.cal.check_frame(frame)?;
            let grey = Grey::from_mat(frame)?;
            let bases = refit_bases(
                &grey,
                &self.detector.cal.camera,
                self.detector.models,
                &self.measured,
            );
            // The hand is looked for by the full search only; until the next one, what
            // it covered stays covered.
            (bases, self.occluders.clone())
        };
        let obs: Vec<ShipObservation> = observation(&observed, self.detector.cal.sigma_mm);
        self.measured = observed;
        let ships = self.tracker.update(&obs, &occluders);
        let mut scene = Scene::new(self.detector.cal.play_area);
        scene.ships = ships;
        scene.obstacles = self.obstacles.clone();
        Ok(StreamFrame { scene, full })
    }
}

fn observation(bases: &[FoundBase], calibration_sigma_mm: f64) -> Vec<ShipObservation> {
    to_ships(bases, calibration_sigma_mm)
        .into_iter()
        .map(|s| ShipObservation {
            size: s.size,
            pose: Pose::new(s.x, s.y, s.heading_deg),
            sigma_mm: s.quality.sigma_mm.unwrap_or(1.0),
            sigma_deg: s.quality.sigma_deg.unwrap_or(1.0),
            confidence: s.quality.confidence.unwrap_or(0.5),
        })
        .collect()
}

/// Intersection over union of two axis-aligned boxes given as corner rings.
fn overlap(a: &[Point], b: &[Point]) -> f64 {
    let bounds = |r: &[Point]| {
        r.iter().fold(
            [
                f64::INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NEG_INFINITY,
            ],
            |m, p| [m[0].min(p.x), m[1].min(p.y), m[2].max(p.x), m[3].max(p.y)],
        )
    };
    let (a, b) = (bounds(a), bounds(b));
    let iw = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
    let ih = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
    let inter = iw * ih;
    let area = |m: [f64; 4]| (m[2] - m[0]).max(0.0) * (m[3] - m[1]).max(0.0);
    let union = area(a) + area(b) - inter;
    if union > 0.0 { inter / union } else { 0.0 }
}

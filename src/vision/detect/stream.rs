//! Detection over a stream of frames (a video file, a live camera): full detection now and
//! then, a cheap re-fit of the known ships in between, and the tracker on top for stable
//! ids, no flicker and nothing lost under a hand.
//!
//! A full detection costs a few frames' time at 1080p (searching the whole table); the
//! re-fit costs about 1-2 ms per ship. A ship that moved no longer fits where it was and
//! is found again by the next full detection. Each full detection is given what the last
//! one found ([`super::memory`]): what stayed as it was is not searched again, which on a
//! still table makes it several times cheaper than a single frame's. Where that runs is
//! the stream's choice: on the frame itself every `full_every` frames (the same result on
//! every run: files and tests), or on a thread of its own beside the re-fits
//! ([`Stream::beside`]: a live camera, where a frame that waits for a full search is a
//! stutter in the overlay).
use super::bases::{FoundBase, refit_bases, to_ships};
use super::memory::Memory;
use super::white::Balance;
use super::{Detection, Detector};
use crate::geometry::polygon::{ring_contains, to_pairs};
use crate::geometry::{Point, Pose};
use crate::scene::{ObstacleSpec, Scene};
use crate::track::{ShipObservation, Tracker, TrackerOptions};
use crate::vision::VisionError;
use crate::vision::calibrate::check::TableCheck;
use opencv::core::Mat;
use opencv::prelude::*;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};

pub struct Stream<'a> {
    detector: Arc<Detector<'a>>,
    tracker: Tracker,
    obstacles: Vec<ObstacleSpec>,
    /// What the last full search found that the next one can use (see [`super::memory`]).
    known: Memory,
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
    /// A full detection every this many frames (1: every frame); unused beside.
    pub full_every: u64,
    beside: Option<Beside>,
    /// The latest full search's frame check.
    table_check: Option<TableCheck>,
    /// What the latest full search read its frame through (see [`super::white`]).
    balance: Balance,
}

/// The full search on its own thread: one frame at a time goes to it, its detection comes
/// back when it is done, and the frames in between are re-fitted without waiting.
struct Beside {
    /// A frame, and what the obstacle search knew when it was sent.
    jobs: Sender<(Mat, Memory)>,
    done: Receiver<Result<(Detection, TableCheck), VisionError>>,
    /// A frame is with the search now.
    busy: bool,
    /// Frames pushed since the frame in hand went to the search, and between the last two
    /// joins: how many frames a search takes at this machine's pace.
    since_sent: u32,
    per_search: u32,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Beside {
    /// Waits for the search thread to end (at most the search in hand): a stream that is
    /// gone leaves no work running behind it.
    fn drop(&mut self) {
        drop(std::mem::replace(&mut self.jobs, channel().0));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Beside {
    fn start(detector: Arc<Detector<'static>>) -> Result<Beside, VisionError> {
        let (jobs, inbox) = channel::<(Mat, Memory)>();
        let (outbox, done) = channel();
        let thread = std::thread::Builder::new()
            .name("hashmark-search".into())
            .spawn(move || {
                // Ends when the stream (the jobs' sender) is gone.
                while let Ok((frame, known)) = inbox.recv() {
                    if outbox.send(searched(&detector, &frame, &known)).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| VisionError::Invalid(format!("cannot start the search thread: {e}")))?;
        Ok(Beside {
            jobs,
            done,
            busy: false,
            since_sent: 0,
            per_search: 0,
            thread: Some(thread),
        })
    }
}
/// What one frame gave.
pub struct StreamFrame {
    pub scene: Scene,
    /// Whether this frame ran the full search (else a re-fit of the known ships).
    pub full: bool,
    /// Whether the latest full search's frame showed the mat markers where the
    /// calibration puts them (see [`crate::vision::calibrate::check`]; fresh when `full`):
    /// a camera bumped during a game moves every position while every sigma stays small,
    /// and the stream says so.
    pub table_check: Option<TableCheck>,
}

/// The full search of one frame, given what the last one's obstacle search found, and the
/// frame check that goes with it.
fn searched(
    detector: &Detector,
    frame: &Mat,
    known: &Memory,
) -> Result<(Detection, TableCheck), VisionError> {
    let d = detector.detect_full_known(frame, known)?;
    Ok((d, detector.check_table(frame)?))
}

impl<'a> Stream<'a> {
    /// A stream that runs the full search on every `full_every`th frame itself.
    pub fn new(detector: Detector<'a>, full_every: u64) -> Stream<'a> {
        Stream {
            detector: Arc::new(detector),
            tracker: Tracker::new(TrackerOptions::default()),
            obstacles: Vec::new(),
            known: Memory::default(),
            measured: Vec::new(),
            occluders: Vec::new(),
            table_art: None,
            frame: 0,
            full_every: full_every.max(1),
            beside: None,
            table_check: None,
            balance: Balance::NONE,
        }
    }

    pub fn detector(&self) -> &Detector<'a> {
        &self.detector
    }

    /// Whether the next frame gets the full search (beside: goes to it).
    pub fn next_is_full(&self) -> bool {
        match &self.beside {
            Some(b) => self.frame == 0 || !b.busy,
            None => self.frame.is_multiple_of(self.full_every) || self.measured.is_empty(),
        }
    }

    /// Takes the next frame; returns the tracked scene.
    pub fn push(&mut self, frame: &Mat) -> Result<StreamFrame, VisionError> {
        let (table_check, (observed, occluders)) = if self.beside.is_some() {
            self.push_beside(frame)?
        } else if self.next_is_full() {
            let (d, check) = searched(&self.detector, frame, &self.known)?;
            (Some(check), self.take_full(d))
        } else {
            (None, self.refit(frame)?)
        };
        let full = table_check.is_some();
        if table_check.is_some() {
            self.table_check = table_check;
        }
        self.frame += 1;
        let obs: Vec<ShipObservation> = observation(&observed, self.detector.cal.sigma_mm);
        self.measured = observed;
        let ships = self.tracker.update(&obs, &occluders);
        let mut scene = Scene::new(self.detector.cal.play_area);
        scene.obstacles = self.obstacles.clone();
        super::hidden::without_outlines_over(&mut scene.obstacles, &ships);
        scene.ships = ships;
        Ok(StreamFrame {
            scene,
            full,
            table_check: self.table_check.clone(),
        })
    }

    /// A frame of a stream whose search runs beside: the first frame is searched here (a
    /// stream starts with what is on the table); later ones are re-fitted, and a search
    /// that has finished since the last frame joins in, its bases re-fitted on this frame
    /// (they were found on an older one). A frame goes to the search whenever it is free.
    #[allow(clippy::type_complexity)]
    fn push_beside(
        &mut self,
        frame: &Mat,
    ) -> Result<(Option<TableCheck>, (Vec<FoundBase>, Vec<Vec<Point>>)), VisionError> {
        let first = self.frame == 0;
        let finished = match self.beside.as_mut() {
            Some(b) if b.busy => match b.done.try_recv() {
                Ok(d) => {
                    b.busy = false;
                    b.per_search = b.since_sent;
                    Some(d?)
                }
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => {
                    return Err(VisionError::Invalid("the search thread stopped".into()));
                }
            },
            _ => None,
        };
        let found = if first {
            let (d, check) = searched(&self.detector, frame, &self.known)?;
            Some((check, self.take_full(d)))
        } else if let Some((d, check)) = finished {
            let (bases, hands) = self.take_full(d);
            self.measured = bases;
            Some((check, (self.refit(frame)?.0, hands)))
        } else {
            None
        };
        let (check, found) = match found {
            Some((check, f)) => (Some(check), f),
            None => (None, self.refit(frame)?),
        };
        if let Some(b) = self.beside.as_mut() {
            b.since_sent += 1;
            if !b.busy && !first {
                b.jobs
                    .send((frame.try_clone()?, self.known.clone()))
                    .map_err(|_| VisionError::Invalid("the search thread stopped".into()))?;
                b.busy = true;
                b.since_sent = 0;
            }
            // A ship a hand has just covered stops re-fitting, and only a search tells the
            // hand from the ship's going: what the tracker drops unseen after a fixed count
            // of frames (3 searches every 5 frames) it drops here after 3 searches' worth.
            let pace = b.per_search.max(b.since_sent);
            let keep = TrackerOptions::default()
                .drop_frames
                .max(3 * pace.saturating_add(1));
            self.tracker.options_mut().drop_frames = keep;
        }
        Ok((check, found))
    }

    /// What a full search found, with the stream's memory applied: obstacles a hand hides
    /// are held, the mat's own bright art is told from a hand.
    fn take_full(&mut self, d: Detection) -> (Vec<FoundBase>, Vec<Vec<Point>>) {
        self.balance = d.balance;
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
        // Held obstacles are known too: fitted from where they were, they are found
        // again when the hand has gone.
        self.known = Memory {
            obstacles: super::obstacles::Known {
                obstacles: obstacles.clone(),
                ..d.memory.obstacles
            },
            ..d.memory
        };
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
    }

    /// The known bases re-fitted on this frame, read through the last full search's white
    /// balance (the light stays between searches, and the markers' paper is not read again
    /// on every frame). The hand is looked for by the full search only; until the next one,
    /// what it covered stays covered.
    #[allow(clippy::type_complexity)]
    fn refit(&self, frame: &Mat) -> Result<(Vec<FoundBase>, Vec<Vec<Point>>), VisionError> {
        self.detector.cal.check_frame(frame)?;
        let grey = self.balance.grey(frame)?;
        let bases = refit_bases(
            &grey,
            &self.detector.cal.camera,
            self.detector.models,
            &self.measured,
        );
        Ok((bases, self.occluders.clone()))
    }
}

impl Stream<'static> {
    /// A stream whose full search runs on a thread of its own, beside the re-fits: every
    /// frame costs a re-fit, and what the search finds joins the frame after it finishes
    /// (on this 2-core machine at 1080p, about every 0.4 s while frames come at full
    /// speed; see README).
    pub fn beside(detector: Detector<'static>) -> Result<Stream<'static>, VisionError> {
        let mut s = Stream::new(detector, 1);
        s.beside = Some(Beside::start(Arc::clone(&s.detector))?);
        Ok(s)
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
            doubts: s.quality.doubts,
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

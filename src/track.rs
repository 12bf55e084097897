//! Tracking over a stream of detections: stable ids, no flicker, nothing moved or deleted
//! under a hand, and a ship that really moved updated within a few frames. Pure logic over
//! table-mm observations, so it is tested on exact sequences without a camera.
//!
//! Per frame, observations are matched to tracks of the same size class, nearest first,
//! within a gate; then to a track of another size class centred within a few mm (one
//! frame's detection may take a small base's corner for a medium one: the size a track
//! shows is the one seen most often, so a flip neither makes a second ship nor loses one). A matched track is smoothed while it stays within its noise, and jumps
//! once a new place is confirmed on consecutive frames (a barrel roll, a maneuver). An
//! unmatched observation becomes a track after it is seen on `confirm_frames` frames. A
//! track under an occluder (a hand, in table mm) is held as it was and marked occluded;
//! one that is simply not seen any more is dropped after `drop_frames` frames.

use crate::geometry::pose::angle_diff_deg;
use crate::geometry::{Point, Pose};
use crate::models::BaseSize;
use crate::scene::{Doubt, Quality, Scene, ShipSpec};

/// One detected ship base in one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct ShipObservation {
    pub size: BaseSize,
    pub pose: Pose,
    /// Expected RMS of the centre error, mm.
    pub sigma_mm: f64,
    pub sigma_deg: f64,
    pub confidence: f64,
    /// Why detection doubts it (see [`crate::scene::Doubt`]).
    pub doubts: Vec<Doubt>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrackerOptions {
    /// Movement within this many sigmas is noise: smoothed, not followed.
    pub noise_sigmas: f64,
    /// Largest distance (mm) at which an observation can still be the same ship: a ship
    /// moves by at most a 5-speed maneuver plus its base between two looks.
    pub gate_mm: f64,
    /// Consecutive frames a new place (or a new ship) must be seen before it counts.
    pub confirm_frames: u32,
    /// Frames a visible track may go unseen before it is dropped.
    pub drop_frames: u32,
    /// Weight of a new observation in the smoothed pose.
    pub smoothing: f64,
    /// Largest centre distance (mm) at which an observation of another size class is
    /// still this ship: a smaller square in a bigger base's corner sits 10-28 mm off its
    /// centre, and two real bases are never closer than 40 mm.
    pub size_flip_mm: f64,
}

impl Default for TrackerOptions {
    fn default() -> Self {
        TrackerOptions {
            noise_sigmas: 4.0,
            gate_mm: 300.0,
            confirm_frames: 2,
            drop_frames: 15,
            smoothing: 0.3,
            size_flip_mm: 30.0,
        }
    }
}

#[derive(Clone, Debug)]
struct Track {
    id: String,
    size: BaseSize,
    pose: Pose,
    sigma_mm: f64,
    sigma_deg: f64,
    confidence: f64,
    doubts: Vec<Doubt>,
    /// Frames seen in a row (for confirmation of a new track).
    seen: u32,
    confirmed: bool,
    missed: u32,
    occluded: bool,
    /// A new place seen on consecutive frames, not yet believed.
    pending: Option<(Pose, u32)>,
    /// Observations matched per size class (small, medium, large).
    votes: [u32; 3],
}

fn size_index(size: BaseSize) -> usize {
    match size {
        BaseSize::Small => 0,
        BaseSize::Medium => 1,
        BaseSize::Large => 2,
    }
}

/// Follows ships across frames.
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    options: TrackerOptions,
    tracks: Vec<Track>,
    next_id: u32,
}

impl Tracker {
    /// The options in force (a stream may change `drop_frames` as it goes, see
    /// [`Tracker::options_mut`]).
    pub fn options(&self) -> &TrackerOptions {
        &self.options
    }

    /// For a stream whose frames come faster than its searches: a track unseen is dropped
    /// after as many frames as a few searches take, not a fixed count.
    pub fn options_mut(&mut self) -> &mut TrackerOptions {
        &mut self.options
    }

    pub fn new(options: TrackerOptions) -> Tracker {
        Tracker {
            options,
            tracks: Vec::new(),
            next_id: 1,
        }
    }

    /// Takes one frame's observations and the table-mm polygons of anything hiding the
    /// table (a hand). Returns the confirmed ships.
    pub fn update(
        &mut self,
        observed: &[ShipObservation],
        occluders: &[Vec<Point>],
    ) -> Vec<ShipSpec> {
        let opts = self.options.clone();
        let hidden = |p: &Pose| {
            occluders
                .iter()
                .any(|poly| contains(poly, Point::new(p.x, p.y)))
        };
        // Observations under a hand are partial views of whatever is there: not trusted.
        let obs: Vec<&ShipObservation> = observed.iter().filter(|o| !hidden(&o.pose)).collect();

        // Match nearest pairs first, same size class within the gate; then, after every
        // same-size pair, another size class close to a track's centre.
        let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
        for (ti, t) in self.tracks.iter().enumerate() {
            for (oi, o) in obs.iter().enumerate() {
                let d = (t.pose.centre() - o.pose.centre()).norm();
                if t.size == o.size && d <= opts.gate_mm {
                    pairs.push((d, ti, oi));
                } else if t.size != o.size && d <= opts.size_flip_mm {
                    pairs.push((opts.gate_mm + d, ti, oi));
                }
            }
        }
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut track_used = vec![false; self.tracks.len()];
        let mut obs_used = vec![false; obs.len()];
        for (_, ti, oi) in pairs {
            if track_used[ti] || obs_used[oi] {
                continue;
            }
            track_used[ti] = true;
            obs_used[oi] = true;
            follow(&mut self.tracks[ti], obs[oi], &opts);
        }
        for (ti, t) in self.tracks.iter_mut().enumerate() {
            if track_used[ti] {
                continue;
            }
            if hidden(&t.pose) {
                t.occluded = true;
            } else {
                t.occluded = false;
                t.missed += 1;
                t.seen = 0;
            }
        }
        let (drop, confirm) = (opts.drop_frames, opts.confirm_frames);
        self.tracks.retain(|t| {
            if t.confirmed {
                t.missed <= drop
            } else {
                t.missed == 0
            }
        });
        for (oi, o) in obs.iter().enumerate() {
            if !obs_used[oi] {
                self.tracks.push(Track {
                    id: String::new(),
                    size: o.size,
                    pose: o.pose,
                    sigma_mm: o.sigma_mm,
                    sigma_deg: o.sigma_deg,
                    confidence: o.confidence,
                    doubts: o.doubts.clone(),
                    seen: 1,
                    confirmed: false,
                    missed: 0,
                    occluded: false,
                    pending: None,
                    votes: {
                        let mut v = [0; 3];
                        v[size_index(o.size)] = 1;
                        v
                    },
                });
            }
        }
        for t in &mut self.tracks {
            if !t.confirmed && t.seen >= confirm {
                t.confirmed = true;
                t.id = format!("s{}", self.next_id);
                self.next_id += 1;
            }
        }
        self.ships()
    }

    /// The confirmed ships as scene items.
    pub fn ships(&self) -> Vec<ShipSpec> {
        self.tracks
            .iter()
            .filter(|t| t.confirmed)
            .map(|t| ShipSpec {
                id: t.id.clone(),
                size: t.size,
                x: t.pose.x,
                y: t.pose.y,
                heading_deg: t.pose.heading_deg,
                quality: Quality {
                    sigma_mm: Some(t.sigma_mm),
                    sigma_deg: Some(t.sigma_deg),
                    confidence: Some(t.confidence),
                    occluded: t.occluded,
                    doubts: t.doubts.clone(),
                },
            })
            .collect()
    }

    /// The ships into a scene that already holds the play area and obstacles.
    pub fn scene(&self, mut base: Scene) -> Scene {
        base.ships = self.ships();
        base
    }
}

/// A matched observation: smooth it in when it is noise, follow it once a real move is
/// confirmed.
fn follow(t: &mut Track, o: &ShipObservation, opts: &TrackerOptions) {
    t.missed = 0;
    t.occluded = false;
    t.seen += 1;
    t.votes[size_index(o.size)] += 1;
    if o.size != t.size {
        // Another size class seen where this ship is: it is still seen; its size changes
        // once the other class has been seen more often, and then its pose is that fit's
        // (a different square's centre is not a move to smooth).
        if t.votes[size_index(o.size)] > t.votes[size_index(t.size)] {
            t.size = o.size;
            t.pose = o.pose;
            t.pending = None;
            t.sigma_mm = o.sigma_mm;
            t.sigma_deg = o.sigma_deg;
            t.confidence = o.confidence;
            t.doubts.clone_from(&o.doubts);
        }
        return;
    }
    t.sigma_mm = o.sigma_mm;
    t.sigma_deg = o.sigma_deg;
    t.confidence = o.confidence;
    t.doubts.clone_from(&o.doubts);
    let moved = (t.pose.centre() - o.pose.centre()).norm();
    let turned = angle_diff_deg(o.pose.heading_deg, t.pose.heading_deg);
    let noise_mm = opts.noise_sigmas * o.sigma_mm.max(0.05);
    let noise_deg = opts.noise_sigmas * o.sigma_deg.max(0.05);
    if moved <= noise_mm && turned.abs() <= noise_deg {
        t.pending = None;
        let a = opts.smoothing;
        t.pose = Pose::new(
            t.pose.x + a * (o.pose.x - t.pose.x),
            t.pose.y + a * (o.pose.y - t.pose.y),
            t.pose.heading_deg + a * turned,
        );
        return;
    }
    // Somewhere new: believe it when it is seen there again.
    let count = match &t.pending {
        Some((p, n))
            if (p.centre() - o.pose.centre()).norm() <= noise_mm
                && angle_diff_deg(o.pose.heading_deg, p.heading_deg).abs() <= noise_deg =>
        {
            n + 1
        }
        _ => 1,
    };
    if count >= opts.confirm_frames || !t.confirmed {
        t.pose = o.pose;
        t.pending = None;
    } else {
        t.pending = Some((o.pose, count));
    }
}

/// Point in polygon (even-odd), for occluders.
fn contains(poly: &[Point], p: Point) -> bool {
    let n = poly.len();
    let mut inside = false;
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + 1) % n]);
        if (a.y > p.y) != (b.y > p.y) && p.x < a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x) {
            inside = !inside;
        }
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(size: BaseSize, x: f64, y: f64, h: f64) -> ShipObservation {
        ShipObservation {
            size,
            pose: Pose::new(x, y, h),
            sigma_mm: 0.3,
            sigma_deg: 0.2,
            confidence: 0.9,
            doubts: Vec::new(),
        }
    }

    /// Deterministic noise in [-a, a].
    fn jitter(k: u32, a: f64) -> f64 {
        let v = (k.wrapping_mul(2_654_435_761) >> 8) as f64 / (1u32 << 24) as f64;
        (v * 2.0 - 1.0) * a
    }

    fn square(cx: f64, cy: f64, half: f64) -> Vec<Point> {
        vec![
            Point::new(cx - half, cy - half),
            Point::new(cx + half, cy - half),
            Point::new(cx + half, cy + half),
            Point::new(cx - half, cy + half),
        ]
    }

    #[test]
    fn ids_are_stable_and_noise_does_not_flicker() {
        let mut t = Tracker::new(TrackerOptions::default());
        let mut last = Vec::new();
        for k in 0..30 {
            let frame = [
                obs(
                    BaseSize::Small,
                    100.0 + jitter(k, 0.4),
                    200.0 + jitter(k + 7, 0.4),
                    90.0 + jitter(k + 3, 0.3),
                ),
                obs(
                    BaseSize::Large,
                    500.0 + jitter(k + 11, 0.4),
                    600.0 + jitter(k + 5, 0.4),
                    10.0,
                ),
            ];
            last = t.update(&frame, &[]);
            if k >= 1 {
                assert_eq!(last.len(), 2, "frame {k}");
            }
        }
        let small = last.iter().find(|s| s.size == BaseSize::Small).unwrap();
        let large = last.iter().find(|s| s.size == BaseSize::Large).unwrap();
        assert_eq!((small.id.as_str(), large.id.as_str()), ("s1", "s2"));
        // Smoothing keeps the reported pose well inside the jitter.
        assert!(
            (small.x - 100.0).abs() < 0.3 && (small.y - 200.0).abs() < 0.3,
            "{small:?}"
        );
    }

    #[test]
    fn a_size_flip_is_the_same_ship_and_the_size_seen_most_wins() {
        let mut t = Tracker::new(TrackerOptions::default());
        // A small base at (200, 300); on two frames its corner is taken for a medium base
        // (centre 14 mm off), once before it is confirmed.
        let small = |k: u32| obs(BaseSize::Small, 200.0 + jitter(k, 0.2), 300.0, 45.0);
        let medium = obs(BaseSize::Medium, 210.0, 310.0, 45.0);
        let frames = [
            vec![medium.clone()],
            vec![small(1)],
            vec![small(2)],
            vec![medium.clone()],
            vec![small(4)],
        ];
        let mut shown = Vec::new();
        for f in &frames {
            shown.push(t.update(f, &[]));
        }
        // Confirmed on the second frame, one ship throughout, its id kept.
        for (k, s) in shown.iter().enumerate().skip(1) {
            assert_eq!(s.len(), 1, "frame {k}: {s:?}");
            assert_eq!(s[0].id, "s1", "frame {k}");
        }
        // Small from the third frame on (seen small twice, medium once), the medium frame
        // not moving it.
        for s in &shown[2..] {
            assert_eq!(s[0].size, BaseSize::Small, "{s:?}");
            assert!(
                (s[0].x - 200.0).abs() < 1.0 && (s[0].y - 300.0).abs() < 1.0,
                "{s:?}"
            );
        }
        // Two real ships are never this close: a small and a medium 50 mm apart stay two.
        let mut t = Tracker::new(TrackerOptions::default());
        let mut last = Vec::new();
        for _ in 0..3 {
            last = t.update(
                &[
                    obs(BaseSize::Small, 100.0, 100.0, 0.0),
                    obs(BaseSize::Medium, 150.0, 100.0, 0.0),
                ],
                &[],
            );
        }
        assert_eq!(last.len(), 2);
    }

    #[test]
    fn a_one_frame_glitch_is_not_a_ship_and_a_dropout_is_not_a_loss() {
        let mut t = Tracker::new(TrackerOptions::default());
        for k in 0..10 {
            let mut frame = vec![obs(BaseSize::Medium, 300.0, 300.0, 0.0)];
            if k == 4 {
                frame.push(obs(BaseSize::Small, 700.0, 100.0, 0.0)); // a reflection, once
            }
            if k == 6 {
                frame.clear(); // the detector missed it once
            }
            let ships = t.update(&frame, &[]);
            if k >= 1 {
                assert_eq!(ships.len(), 1, "frame {k}: {ships:?}");
                assert_eq!(ships[0].id, "s1");
            }
        }
    }

    #[test]
    fn a_hand_holds_what_it_hides() {
        let mut t = Tracker::new(TrackerOptions::default());
        for _ in 0..3 {
            t.update(
                &[
                    obs(BaseSize::Small, 400.0, 400.0, 45.0),
                    obs(BaseSize::Small, 100.0, 100.0, 0.0),
                ],
                &[],
            );
        }
        let hand = square(400.0, 400.0, 60.0);
        // Under the hand the detector sees nothing, then a fragment in the wrong place.
        for k in 0..40 {
            let frame = if k % 2 == 0 {
                vec![obs(BaseSize::Small, 100.0, 100.0, 0.0)]
            } else {
                vec![
                    obs(BaseSize::Small, 100.0, 100.0, 0.0),
                    obs(BaseSize::Small, 420.0, 390.0, 80.0),
                ]
            };
            let ships = t.update(&frame, std::slice::from_ref(&hand));
            let held = ships
                .iter()
                .find(|s| s.id == "s1")
                .expect("held under the hand");
            assert!(held.quality.occluded);
            assert_eq!((held.x, held.y, held.heading_deg), (400.0, 400.0, 45.0));
            assert_eq!(ships.len(), 2);
        }
        let ships = t.update(
            &[
                obs(BaseSize::Small, 400.0, 400.0, 45.0),
                obs(BaseSize::Small, 100.0, 100.0, 0.0),
            ],
            &[],
        );
        assert!(!ships.iter().any(|s| s.quality.occluded));
    }

    #[test]
    fn a_barrel_roll_is_followed_within_two_frames_and_keeps_its_id() {
        let mut t = Tracker::new(TrackerOptions::default());
        for _ in 0..5 {
            t.update(&[obs(BaseSize::Small, 300.0, 300.0, 90.0)], &[]);
        }
        let first = t.update(&[obs(BaseSize::Small, 380.0, 310.0, 90.0)], &[]);
        assert_eq!(first[0].x, 300.0, "one frame is not yet a move");
        let second = t.update(&[obs(BaseSize::Small, 380.0, 310.0, 90.0)], &[]);
        assert_eq!(
            (second[0].id.as_str(), second[0].x, second[0].y),
            ("s1", 380.0, 310.0)
        );
    }

    #[test]
    fn a_ship_taken_away_is_dropped() {
        let mut t = Tracker::new(TrackerOptions::default());
        for _ in 0..3 {
            t.update(&[obs(BaseSize::Large, 300.0, 300.0, 0.0)], &[]);
        }
        let mut frames = 0;
        while !t.update(&[], &[]).is_empty() {
            frames += 1;
            assert!(frames < 100);
        }
        assert_eq!(frames, TrackerOptions::default().drop_frames as usize);
    }
}

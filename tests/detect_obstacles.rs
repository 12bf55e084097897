//! Obstacle detection on rendered frames: every standard obstacle found, matched to its
//! model, its outline within a millimetre of the truth, with and without the empty-table
//! frame, and nothing reported on a black frame or on noise.
#![cfg(feature = "vision")]

use hashmark::geometry::polygon::segment_distance;
use hashmark::models::Models;
use hashmark::scene::ObstacleSpec;
use hashmark::vision::detect::obstacles::find_obstacles;
use hashmark::vision::sim::{SimOptions, Truth, simulate};
use hashmark::vision::{Resolution, cv};
use opencv::core::{CV_8UC3, Mat, Scalar};
use opencv::prelude::*;

/// Largest distance from a point of ring `a` (sampled every 0.2 mm) to ring `b`.
fn directed(a: &[[f64; 2]], b: &[[f64; 2]]) -> f64 {
    let mut worst: f64 = 0.0;
    for i in 0..a.len() {
        let (p, q) = (a[i], a[(i + 1) % a.len()]);
        let n = ((q[0] - p[0]).hypot(q[1] - p[1]) / 0.2).ceil().max(1.0) as usize;
        for k in 0..n {
            let t = k as f64 / n as f64;
            let s = [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])];
            let d = (0..b.len())
                .map(|j| segment_distance(s, b[j], b[(j + 1) % b.len()]))
                .fold(f64::MAX, f64::min);
            worst = worst.max(d);
        }
    }
    worst
}

fn hausdorff(a: &[[f64; 2]], b: &[[f64; 2]]) -> f64 {
    directed(a, b).max(directed(b, a))
}

/// Per truth obstacle: the Hausdorff distance (mm) to its nearest detection and whether
/// the model is right; then the number of detections matched to nothing.
fn score(truth: &[ObstacleSpec], got: &[ObstacleSpec]) -> (Vec<(String, f64, bool)>, usize) {
    let models = Models::builtin();
    let mut used = vec![false; got.len()];
    let mut rows = Vec::new();
    for o in truth {
        let want = o.outline(models).unwrap();
        let best = got
            .iter()
            .enumerate()
            .filter(|(i, _)| !used[*i])
            .map(|(i, g)| (i, hausdorff(&want, &g.outline(models).unwrap())))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let name = o.model.clone().unwrap_or_default();
        match best {
            // Further than 20 mm is another object, not this one found badly.
            Some((i, h)) if h < 20.0 => {
                used[i] = true;
                rows.push((name, h, got[i].model == o.model));
            }
            _ => rows.push((name, f64::INFINITY, false)),
        }
    }
    (rows, used.iter().filter(|u| !**u).count())
}

fn render(
    seed: u64,
    resolution: Resolution,
    supersample: u32,
) -> (tempfile::TempDir, Truth, Mat, Mat) {
    let dir = tempfile::tempdir().unwrap();
    let truth = simulate(
        &SimOptions {
            seed,
            resolution,
            frames: None,
            charuco_views: 0,
            supersample,
        },
        dir.path(),
    )
    .unwrap();
    let frame =
        cv::decode(&std::fs::read(dir.path().join(&truth.frames[0].file)).unwrap()).unwrap();
    let bg = cv::decode(&std::fs::read(dir.path().join(&truth.background)).unwrap()).unwrap();
    (dir, truth, frame, bg)
}

/// Runs detection with and without the background; returns the worst Hausdorff distance
/// and asserts every obstacle found with its model and nothing else reported.
fn check_scene(seed: u64, resolution: Resolution, supersample: u32, limit_mm: f64) -> f64 {
    let models = Models::builtin();
    let (_dir, truth, frame, bg) = render(seed, resolution, supersample);
    let scene = &truth.scene;
    assert!(!scene.obstacles.is_empty());
    let mut worst: f64 = 0.0;
    for background in [Some(&bg), None] {
        let got = find_obstacles(
            &frame,
            background,
            &truth.camera,
            &scene.play_area,
            models,
            &scene.ships,
        )
        .unwrap();
        let (rows, falses) = score(&scene.obstacles, &got);
        eprintln!(
            "seed {seed} background {}: {rows:?}, {falses} false",
            background.is_some()
        );
        for (name, h, right) in &rows {
            assert!(h.is_finite(), "seed {seed}: {name} missed");
            assert!(*right, "seed {seed}: {name} found as another model");
            assert!(*h <= limit_mm, "seed {seed}: {name} outline {h:.2} mm off");
            worst = worst.max(*h);
        }
        assert_eq!(falses, 0, "seed {seed}: false obstacles {got:?}");
        for o in &got {
            let q = &o.quality;
            assert!(q.sigma_mm.is_some_and(|s| s > 0.0 && s < 2.0), "{q:?}");
            assert!(
                q.confidence.is_some_and(|c| (0.5..=1.0).contains(&c)),
                "{q:?}"
            );
        }
        let ids: Vec<&str> = got.iter().map(|o| o.id.as_str()).collect();
        let want: Vec<String> = (1..=got.len()).map(|k| format!("o{k}")).collect();
        assert_eq!(ids, want);
    }
    worst
}

// Seed 2 at 1080p: five obstacles (two debris fields, a gas cloud, two rocks) and five
// ships, on a mat with a nebula. Measured: outlines within 0.26 mm of the truth with and
// without the background; the limit leaves room for renderer changes, and is still
// tighter than the 1.5 mm.
#[test]
fn finds_every_obstacle_at_1080p_with_and_without_background() {
    let worst = check_scene(2, Resolution::Hd1080, 1, 0.8);
    eprintln!("worst outline error {worst:.2} mm");
}

// Heavier: more seeds, 1080p, rendered as `hashmark simulate` does (3 x 3 samples per
// pixel, a sensor's area; single-sample frames are aliased and seed 3 then fails). Run with
// `cargo test --release --test detect_obstacles -- --ignored`.
// Measured (1080p, true camera): worst 0.28 mm over these seeds.
#[test]
#[ignore]
fn finds_every_obstacle_on_more_scenes() {
    let mut worst: f64 = 0.0;
    for seed in [1, 3, 4, 5, 21] {
        worst = worst.max(check_scene(seed, Resolution::Hd1080, 3, 1.0));
    }
    eprintln!("worst outline error {worst:.2} mm");
}

#[test]
fn ships_are_not_obstacles() {
    // A scene's ships given as found, and the obstacles removed from the truth: the bases
    // and miniatures are all that differs from the background, and none may be reported.
    // (The renderer puts obstacles in every scene, so this checks the false-positive side
    // on real ships by requiring that no detection is further than 20 mm from a true
    // obstacle: `score` counts those as false.)
    let models = Models::builtin();
    let (_dir, truth, frame, bg) = render(6, Resolution::Hd1080, 1);
    let scene = &truth.scene;
    assert!(scene.ships.len() >= 5);
    let got = find_obstacles(
        &frame,
        Some(&bg),
        &truth.camera,
        &scene.play_area,
        models,
        &scene.ships,
    )
    .unwrap();
    let (_, falses) = score(&scene.obstacles, &got);
    assert_eq!(falses, 0, "{got:?}");
}

#[test]
fn bad_frames_give_no_obstacles_and_no_panic() {
    let models = Models::builtin();
    let camera = hashmark::vision::sim::camera_for(5, Resolution::Hd1080, [914.4, 914.4]);
    let area = models.play_areas.standard();
    let (w, h) = (camera.image_size[0] as i32, camera.image_size[1] as i32);
    let black = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(0.0)).unwrap();
    let mut noise = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(0.0)).unwrap();
    opencv::core::randu(&mut noise, &Scalar::all(0.0), &Scalar::all(255.0)).unwrap();
    let white = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(255.0)).unwrap();
    for (name, f) in [("black", &black), ("noise", &noise), ("white", &white)] {
        for bg in [None, Some(&black), Some(&noise)] {
            let got = find_obstacles(f, bg, &camera, &area, models, &[]).unwrap();
            assert!(got.is_empty(), "{name}: {got:?}");
        }
    }
    // Wrong sizes and kinds are refused with a message, not a panic.
    let small = Mat::new_rows_cols_with_default(10, 10, CV_8UC3, Scalar::all(0.0)).unwrap();
    assert!(find_obstacles(&small, None, &camera, &area, models, &[]).is_err());
    assert!(find_obstacles(&black, Some(&small), &camera, &area, models, &[]).is_err());
    let grey =
        Mat::new_rows_cols_with_default(h, w, opencv::core::CV_8UC1, Scalar::all(0.0)).unwrap();
    assert!(find_obstacles(&grey, None, &camera, &area, models, &[]).is_err());
    assert!(find_obstacles(&Mat::default(), None, &camera, &area, models, &[]).is_err());
}

// Seed 51 at 1080p: two grey tokens on a dim brown and teal nebula, whose difference from
// the mat crosses the threshold only in patches (both were missed without the background
// before regions were grown from their clearer parts down to a lower level).
#[test]
fn finds_faint_tokens_on_a_dim_nebula() {
    let worst = check_scene(51, Resolution::Hd1080, 1, 1.0);
    eprintln!("worst outline error {worst:.2} mm");
}

// Seed 129 at 1080p: a green gas cloud and a tan rock on a purple nebula, 30-44 px across
// and soft-edged, cross the threshold inside their outlines; without the background the
// chamfer then ranked outlines of their regions' size first, and both were missed. The
// outlines larger than the region are now judged too.
#[test]
fn finds_soft_edged_tokens_by_outlines_larger_than_their_regions() {
    let worst = check_scene(129, Resolution::Hd1080, 1, 1.0);
    eprintln!("worst outline error {worst:.2} mm");
}

// Seed 9 at 1080p: a grey asteroid lying across the rim of a teal planet is one region
// with the rim (4000 mm2 where the token is 1100), joined along a whole side, so no
// opening splits it, and without the background it was the fixed set's one missed
// obstacle. The region's grey part (split from the coloured art by saturation) is now
// matched too.
#[test]
fn finds_a_grey_token_across_a_planets_rim() {
    let worst = check_scene(9, Resolution::Hd1080, 3, 1.0);
    eprintln!("worst outline error {worst:.2} mm");
}

// Grey rocks on pale planets and a purple nebula differ from them by 15-35 grey levels,
// above the threshold only in patches; grown from them to 0.75 of it, the regions were
// still fractions of the rocks, and seeds 66's and 110's rocks were missed without the
// background, seed 124's (on a pink and green planet) with it. What the first growth
// leaves unmatched is now grown again down to 0.4 of the threshold.
#[test]
fn finds_grey_rocks_on_pale_art_by_growing_lower() {
    for (seed, with_background) in [(66u64, false), (110, false), (124, true)] {
        finds_each_obstacle(seed, with_background);
    }
}

// Seed 124 at 1080p: a grey rock on a pink and green planet. The wide median the frame is
// compared with mixes the planet's bands into a grey of about the rock's own colour, so
// the difference stays at 10-33 levels (the threshold is 32) and no region forms to grow
// from: without the background the rock was missed (the third set's one such token
// besides a gas cloud). Its outline is a closed loop of sharp colour change, which the
// planet's shading and the nebulae do not make: such loops are now matched too.
#[test]
fn finds_a_grey_rock_on_a_planet_by_its_edges() {
    finds_each_obstacle(124, false);
}

/// Detection on seed `seed` (1080p, rendered as `hashmark simulate` does) with the
/// background or without it: every obstacle found as its model within 1 mm, and nothing
/// else. (Where `check_scene`, which asks this both ways, asks too much of a table.)
fn finds_each_obstacle(seed: u64, with_background: bool) {
    let (_dir, truth, frame, bg) = render(seed, Resolution::Hd1080, 3);
    let scene = &truth.scene;
    let got = find_obstacles(
        &frame,
        with_background.then_some(&bg),
        &truth.camera,
        &scene.play_area,
        Models::builtin(),
        &scene.ships,
    )
    .expect("obstacles");
    let (rows, falses) = score(&scene.obstacles, &got);
    eprintln!("seed {seed} background {with_background}: {rows:?}, {falses} false");
    for (name, h, right) in &rows {
        assert!(
            *h <= 1.0 && *right,
            "seed {seed}: {name} {h:.2} mm, model right {right}"
        );
    }
    assert_eq!(falses, 0, "seed {seed}: {got:?}");
}

// Seed 70 at 1080p: a grey rock on a mottled nebula, whose region's boundary is ragged
// with the art. Without the background the chamfer's sweep ranked the rock's own turn
// below the best six it polished, and the rock was missed (the second set's seed 70);
// twelve are polished now, and the edge fit finds the rock within 0.3 mm. (With the
// background this table has a measured outline where the light changed, which
// `check_scene` would count as false; the frame is not what this is about.)
#[test]
fn finds_a_token_whose_region_the_art_makes_ragged() {
    finds_each_obstacle(70, false);
}

// A stream's search knows the obstacles the search before found and fits them again from
// their poses. On seed 61 (second set) a debris field is found at the threshold, and the
// region grown about a faint patch beside it holds it too: the stream's search fitted it
// again from there as well, and reported it twice, where the single frame's search
// (which drops a second placement of a found token) reported it once.
#[test]
fn a_known_token_in_a_grown_region_is_not_found_twice() {
    use hashmark::vision::detect::obstacles::{Known, find_obstacles_known};
    let (_dir, truth, frame, _bg) = render(61, Resolution::Hd1080, 3);
    let scene = &truth.scene;
    let search = |known: &Known| {
        find_obstacles_known(
            &frame,
            None,
            &truth.camera,
            &scene.play_area,
            Models::builtin(),
            &scene.ships,
            known,
        )
        .expect("obstacles")
    };
    let first = search(&Known::default());
    let again = search(&first);
    let models = |k: &Known| -> Vec<Option<String>> {
        k.obstacles.iter().map(|o| o.model.clone()).collect()
    };
    eprintln!("first {:?}, again {:?}", models(&first), models(&again));
    assert_eq!(models(&first), models(&again));
    let (rows, falses) = score(&scene.obstacles, &again.obstacles);
    assert_eq!(falses, 0, "{rows:?}");
}

/// A frame with noise of up to `amp` grey levels on every channel of every pixel
/// (deterministic).
fn with_noise(frame: &Mat, amp: i32) -> Mat {
    let mut out = frame.clone();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for r in 0..out.rows() {
        for p in out
            .at_row_mut::<opencv::core::Vec3b>(r)
            .expect("row")
            .iter_mut()
        {
            for v in p.0.iter_mut() {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let n = ((state >> 33) % (2 * amp as u64 + 1)) as i32 - amp;
                *v = (i32::from(*v) + n).clamp(0, 255) as u8;
            }
        }
    }
    out
}

/// The obstacles of two searches are the same: the same models, each within 0.1 mm.
fn same_obstacles(a: &[ObstacleSpec], b: &[ObstacleSpec]) -> bool {
    let close = |p: &ObstacleSpec, q: &ObstacleSpec| match (p.x, p.y, q.x, q.y) {
        (Some(px), Some(py), Some(qx), Some(qy)) => {
            p.model == q.model && (px - qx).hypot(py - qy) <= 0.1
        }
        _ => p.polygon == q.polygon,
    };
    a.len() == b.len() && a.iter().all(|p| b.iter().any(|q| close(p, q)))
}

// A stream's full search passes over the regions and blobs its last search found empty
// (the mat's art, the miniatures, the stars: most of a search's time) and fits the
// obstacles it knows from where they were. It must find what a single frame finds: on the
// same table, and after a rock has been laid on one of those empty regions, an obstacle
// moved 40 mm and a ship set down on one of those blobs.
#[test]
fn a_stream_search_passes_over_what_it_knows_and_sees_what_changed() {
    use hashmark::vision::detect::{Calibrated, Detector};
    use hashmark::vision::sim::{photograph, world::World};
    let models = Models::builtin();
    let seed = 2;
    let (_dir, truth, _, _) = render(seed, Resolution::Hd1080, 1);
    let shoot = |scene: &hashmark::scene::Scene| -> Mat {
        let world = World::build(scene, seed, seed, models).expect("world");
        cv::decode(&photograph(&world, &truth.camera, seed, 1).expect("render")).expect("decode")
    };
    let cal = Calibrated {
        camera: truth.camera.clone(),
        play_area: truth.scene.play_area,
        layout: hashmark::calibration::Layout::builtin(),
        sigma_mm: 0.05,
    };
    let det = Detector::new(cal, models).expect("detector");
    let table = shoot(&truth.scene);
    let first = det.detect_full(&table).expect("detect");
    let memory = &first.memory;
    let again = det.detect_full_known(&table, memory).expect("detect");
    eprintln!(
        "{} obstacles, {} empty regions; again {} obstacles",
        first.scene.obstacles.len(),
        memory.obstacles.empty.len(),
        again.scene.obstacles.len()
    );
    assert!(
        memory.obstacles.empty.len() >= 3,
        "{} empty regions",
        memory.obstacles.empty.len()
    );
    assert_eq!(
        again.memory.obstacles.empty.len(),
        memory.obstacles.empty.len()
    );
    assert!(same_obstacles(
        &first.scene.obstacles,
        &again.scene.obstacles
    ));
    assert!(!memory.empty_blobs.is_empty(), "no blob without a base");
    assert_eq!(first.scene.ships, again.scene.ships);

    // The next frame of a still camera: the same table under the sensor's noise. The
    // memory is used (most regions and blobs passed over, the bases taken as they were),
    // and the scene is the one a single frame gives, to the noise.
    let noisy = with_noise(&table, 4);
    let single = det.detect_full(&noisy).expect("detect");
    let streamed = det.detect_full_known(&noisy, memory).expect("detect");
    let reused = streamed.memory.reused;
    eprintln!(
        "noisy frame: reused {reused:?} of {} regions, {} empty blobs, {} bases",
        memory.obstacles.empty.len(),
        memory.empty_blobs.len(),
        memory.found_blobs.len()
    );
    assert!(reused.empty_regions * 10 >= memory.obstacles.empty.len() * 8);
    assert!(reused.empty_blobs * 10 >= memory.empty_blobs.len() * 8);
    assert!(reused.bases * 10 >= memory.found_blobs.len() * 8);
    // (A doubted base is as likely a little elsewhere on another frame: seed 2's s3, its
    // miniature over most of it, moves 23 mm with the noise, sigma 6.5 mm either way.)
    assert_eq!(single.scene.ships.len(), streamed.scene.ships.len());
    for a in single
        .scene
        .ships
        .iter()
        .filter(|a| a.quality.sigma_mm.is_some_and(|s| s < 3.0))
    {
        let near = streamed.scene.ships.iter().any(|b| {
            let turn = (a.heading_deg - b.heading_deg + 180.0).rem_euclid(360.0) - 180.0;
            a.size == b.size && (a.x - b.x).hypot(a.y - b.y) < 0.3 && turn.abs() < 0.5
        });
        assert!(near, "{a:?} not in the stream's {:?}", streamed.scene.ships);
    }
    assert_eq!(single.scene.obstacles.len(), streamed.scene.obstacles.len());

    // An empty region clear of every ship and obstacle (by 70 mm): the mat's art.
    // Room for an item at p: `r` mm from every item of the table, on the play area.
    let room = |p: [f64; 2], r: f64| {
        let far = |x: f64, y: f64| (x - p[0]).hypot(y - p[1]) > r;
        truth.scene.ships.iter().all(|s| far(s.x, s.y))
            && truth
                .scene
                .obstacles
                .iter()
                .all(|o| o.x.zip(o.y).is_none_or(|(x, y)| far(x, y)))
            && (50.0..865.0).contains(&p[0])
            && (50.0..865.0).contains(&p[1])
    };
    // A blob of the art under which no base was found: a ship is set down there.
    let star = memory
        .empty_blobs
        .iter()
        .map(|k| k.centre)
        .find(|p| room(*p, 65.0))
        .expect("an empty blob clear of the items");
    // A rock is laid on an empty region of the art, away from that ship.
    let art = memory
        .obstacles
        .empty
        .iter()
        .map(|k| k.centre_mm)
        .find(|p| room(*p, 60.0) && (p[0] - star[0]).hypot(p[1] - star[1]) > 90.0)
        .expect("an empty region clear of the items");
    let mut changed = truth.scene.clone();
    changed.obstacles.push(ObstacleSpec::placed(
        "new",
        "coreasteroid2",
        art[0],
        art[1],
        30.0,
    ));
    let moved = changed
        .obstacles
        .iter_mut()
        .find(|o| o.model.is_some())
        .expect("a standard obstacle");
    moved.x = moved.x.map(|x| if x < 450.0 { x + 40.0 } else { x - 40.0 });
    // And a ship moved 12 mm: its base is searched again, not taken as it was.
    let ship = changed.ships.first_mut().expect("a ship");
    ship.y += if ship.y < 450.0 { 12.0 } else { -12.0 };
    let (moved_ship, moved_to) = (ship.id.clone(), [ship.x, ship.y]);
    changed.ships.push(hashmark::scene::ShipSpec {
        id: "new".into(),
        size: hashmark::BaseSize::Medium,
        x: star[0],
        y: star[1],
        heading_deg: 20.0,
        quality: Default::default(),
    });
    let frame = shoot(&changed);
    let single = det.detect_full(&frame).expect("detect");
    let streamed = det.detect_full_known(&frame, memory).expect("detect");
    // How far the stream's nearest ship lies from `p` (mm).
    let nearest = |p: [f64; 2]| {
        streamed
            .scene
            .ships
            .iter()
            .map(|s| (s.x - p[0]).hypot(s.y - p[1]))
            .fold(f64::INFINITY, f64::min)
    };
    let new_ship = nearest(star);
    eprintln!("ship set down at {star:.0?}: the stream's nearest {new_ship:.2} mm off");
    assert!(new_ship < 1.0);
    let off = nearest(moved_to);
    eprintln!("{moved_ship} moved 12 mm: the stream's nearest {off:.2} mm off");
    assert!(off < 1.0);
    assert_eq!(single.scene.ships, streamed.scene.ships);
    let (rows, falses) = score(&changed.obstacles, &streamed.scene.obstacles);
    eprintln!("rock laid at {art:.0?}; streamed: {rows:?}, {falses} false");
    assert!(same_obstacles(
        &single.scene.obstacles,
        &streamed.scene.obstacles
    ));
    for (name, h, right) in &rows {
        assert!(
            *right && *h <= 1.0,
            "{name}: {h:.2} mm, model right {right}"
        );
    }
    assert_eq!(falses, 0);
}

// Seed 119 at 1080p: a large ship's pale miniature over coloured art splits, by saturation,
// into grey parts, one of which an asteroid's outline followed with confidence 0.65: a
// false obstacle, under which the ship's own blob was then taken for that obstacle's and
// its base dropped. Grey parts must be fitted with confidence 0.75.
#[test]
fn a_miniature_over_coloured_art_is_no_grey_token() {
    use hashmark::vision::detect::{Calibrated, Detector};
    let models = Models::builtin();
    let (_dir, truth, frame, _) = render(119, Resolution::Hd1080, 3);
    let cal = Calibrated {
        camera: truth.camera.clone(),
        play_area: truth.scene.play_area,
        layout: hashmark::calibration::Layout::builtin(),
        sigma_mm: 0.05,
    };
    let scene = Detector::new(cal, models)
        .expect("detector")
        .detect(&frame)
        .expect("detect");
    // The outline of a miniature with no base found under it (seed 119's s6, a small ship
    // its miniature hides) is no token: it is checked by `detect_ships`'s
    // `a_miniature_hiding_its_whole_base_is_outlined_for_the_judge`.
    let tokens: Vec<_> = scene
        .obstacles
        .iter()
        .filter(|o| {
            !o.quality
                .doubts
                .contains(&hashmark::scene::Doubt::HiddenBase)
        })
        .cloned()
        .collect();
    let (rows, falses) = score(&truth.scene.obstacles, &tokens);
    eprintln!("{rows:?}, {falses} false; {} ships", scene.ships.len());
    assert_eq!(falses, 0, "{tokens:?}");
    let large = truth
        .scene
        .ships
        .iter()
        .find(|s| s.id == "s4")
        .expect("the rendered scene has no s4: it changed");
    let near = scene
        .ships
        .iter()
        .map(|s| (s.x - large.x).hypot(s.y - large.y))
        .fold(f64::INFINITY, f64::min);
    assert!(near < 2.0, "s4: nearest base {near:.2} mm off");
}

// Seed 113 at 1080p (third rendered set): a small ship's miniature on a pink planet casts
// its shadow beside it, and with the empty-table frame the shadow differed from it enough
// to be fitted as a standard asteroid (coreasteroid0, sigma 0.29 mm, no doubt), a false
// obstacle a roll would be blocked by. A pixel darker than the relit background by about
// the same ratio in every channel, where the mat is bright enough to show its colour, is
// now taken for a shadow, not for something laid on the table.
#[test]
fn a_miniatures_shadow_is_not_an_obstacle() {
    use hashmark::vision::detect::{Calibrated, Detector};
    let models = Models::builtin();
    let (_dir, truth, frame, bg) = render(113, Resolution::Hd1080, 3);
    let scene = &truth.scene;
    let mut det = Detector::new(
        Calibrated {
            camera: truth.camera.clone(),
            play_area: scene.play_area,
            layout: hashmark::calibration::Layout::builtin(),
            sigma_mm: 0.05,
        },
        models,
    )
    .unwrap();
    det.set_background(&bg).unwrap();
    let got = det.detect(&frame).unwrap().obstacles;
    // The miniatures themselves are outlined too (without the ships, as the detector's
    // obstacle search runs beside its base search); a standard model is a claim.
    let invented: Vec<_> = got
        .iter()
        .filter(|o| o.model.is_some() && !scene.obstacles.iter().any(|t| t.model == o.model))
        .collect();
    let (rows, _) = score(&scene.obstacles, &got);
    eprintln!("seed 113 with the background: {rows:?}; invented models {invented:?}");
    assert!(
        rows.iter().all(|(_, h, right)| h.is_finite() && *right),
        "{rows:?}"
    );
    assert!(invented.is_empty(), "{invented:?}");
}

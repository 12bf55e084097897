//! The projector view headless: the demo scene drawn through a known homography in the
//! main window (`--view projector`), tessellated by egui and rasterised here in software,
//! then checked by pixel: the selected ship's legal landings are bright green where the
//! homography puts their edges, illegal ones are dim, and the rest is black.
#![cfg(feature = "overlay")]

mod common;

use hashmark::geometry::polygon::segment_distance;
use hashmark::overlay::egui::{
    self, Event, Key, Modifiers, Pos2, RawInput, Rect, epaint::Primitive, pos2, vec2,
};
use hashmark::overlay::projector::{Projection, ProjectorDrawn};
use hashmark::overlay::projector_output::ProjectorOutput;
use hashmark::overlay::{OverlayApp, Sides, Source};
use hashmark::rules::{Landing, RollTemplate};

const SCREEN: [usize; 2] = [1280, 800];

/// 1 projector px per mm, table y up -> projector y down: table (x, y) is px
/// (x + 40, 960 - y) on a 1000 x 1000 projector.
fn projection() -> Projection {
    Projection {
        size: [1000, 1000],
        homography: [[1.0, 0.0, 40.0], [0.0, -1.0, 960.0], [0.0, 0.0, 1.0]],
    }
}

/// A software framebuffer of straight-alpha-free sRGB (premultiplied blending, as the GPU).
struct Frame {
    px: Vec<[f32; 3]>,
}

impl Frame {
    fn rasterise(prims: &[egui::ClippedPrimitive]) -> Frame {
        let [w, h] = SCREEN;
        let mut px = vec![[0.0f32; 3]; w * h];
        for prim in prims {
            let Primitive::Mesh(mesh) = &prim.primitive else {
                continue;
            };
            let clip = prim.clip_rect;
            for tri in mesh.indices.chunks_exact(3) {
                let v = [0, 1, 2].map(|k| mesh.vertices[tri[k] as usize]);
                let (a, b, c) = (v[0].pos, v[1].pos, v[2].pos);
                let area = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
                if area.abs() < 1e-9 {
                    continue;
                }
                let lo = a.min(b).min(c).max(clip.min).max(Pos2::ZERO);
                let hi = a.max(b).max(c).min(clip.max).min(pos2(w as f32, h as f32));
                for y in (lo.y.floor() as usize)..(hi.y.ceil() as usize).min(h) {
                    for x in (lo.x.floor() as usize)..(hi.x.ceil() as usize).min(w) {
                        let p = pos2(x as f32 + 0.5, y as f32 + 0.5);
                        if !clip.contains(p) {
                            continue;
                        }
                        let e = |p0: Pos2, p1: Pos2| {
                            ((p1.x - p0.x) * (p.y - p0.y) - (p1.y - p0.y) * (p.x - p0.x)) / area
                        };
                        let (wa, wb, wc) = (e(b, c), e(c, a), e(a, b));
                        if wa < 0.0 || wb < 0.0 || wc < 0.0 {
                            continue;
                        }
                        let col = |i: usize| {
                            let q = [v[0].color, v[1].color, v[2].color]
                                .map(|c| f32::from(c.to_array()[i]) / 255.0);
                            wa * q[0] + wb * q[1] + wc * q[2]
                        };
                        let alpha = col(3);
                        let dst = &mut px[y * w + x];
                        for (i, d) in dst.iter_mut().enumerate() {
                            *d = col(i) + *d * (1.0 - alpha);
                        }
                    }
                }
            }
        }
        Frame { px }
    }

    fn at(&self, p: Pos2) -> [u8; 3] {
        let (x, y) = (p.x.floor() as usize, p.y.floor() as usize);
        self.px[y * SCREEN[0] + x].map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8)
    }

    /// The greenest pixel within one pixel of `p` (a 2-point line's centre may fall on a
    /// pixel edge).
    fn greenest(&self, p: Pos2) -> [u8; 3] {
        let mut best = [0, 0, 0];
        for dy in -1..=1 {
            for dx in -1..=1 {
                let c = self.at(p + vec2(dx as f32, dy as f32));
                if i32::from(c[1]) - i32::from(c[0]) > i32::from(best[1]) - i32::from(best[0]) {
                    best = c;
                }
            }
        }
        best
    }
}

struct Run {
    ctx: egui::Context,
    app: OverlayApp,
}

impl Run {
    fn demo() -> Run {
        Run::new(&Source::Demo)
    }

    /// `source` with s1 selected, the projector view in the main window.
    fn new(source: &Source) -> Run {
        let mut app = OverlayApp::from_source(
            source,
            Some("s1"),
            Sides::Both,
            RollTemplate::Straight1,
            false,
        )
        .expect("demo app");
        let mut p = ProjectorOutput::new(projection());
        p.in_main = true;
        app.projector = Some(p);
        Run {
            ctx: egui::Context::default(),
            app,
        }
    }

    fn frame(&mut self, events: Vec<Event>) -> Vec<egui::ClippedPrimitive> {
        let raw = RawInput {
            screen_rect: Some(Rect::from_min_size(
                Pos2::ZERO,
                vec2(SCREEN[0] as f32, SCREEN[1] as f32),
            )),
            events,
            ..Default::default()
        };
        let mut out = self.ctx.run_ui(raw, |ui| self.app.ui(ui));
        out.textures_delta.clear();
        self.ctx.tessellate(out.shapes, 1.0)
    }

    fn key(&mut self, key: Key) {
        let ev = |pressed| Event::Key {
            key,
            physical_key: None,
            pressed,
            repeat: false,
            modifiers: Modifiers::NONE,
        };
        self.frame(vec![ev(true), ev(false)]);
        self.frame(vec![]);
    }

    fn projector_drawn(&self) -> ProjectorDrawn {
        self.app
            .projector
            .as_ref()
            .expect("projector")
            .drawn()
            .clone()
    }

    fn image_rect(&self) -> Rect {
        self.app
            .projector
            .as_ref()
            .and_then(|p| p.drawn().image_rect)
            .expect("projector view drawn")
    }

    fn landings(&self) -> Vec<Landing> {
        let v = self
            .app
            .last_judged()
            .and_then(|j| j.verdict.as_ref().ok())
            .expect("verdict");
        v.directions
            .iter()
            .flat_map(|d| d.positions.clone())
            .collect()
    }
}

/// Where a table point must be on screen, worked out here from the test's homography (not
/// through the code under test): px = (x + 40, 960 - y), then the projector image fitted
/// into `image`.
fn expected(image: Rect, p: [f64; 2]) -> Pos2 {
    let s = image.width() / 1000.0;
    let px = [p[0] as f32 + 40.0, 960.0 - p[1] as f32];
    image.min + vec2((px[0] + 0.5) * s, (px[1] + 0.5) * s)
}

/// Midpoints of the two longest edges of a landed base (its sides, clear of the guides).
fn side_midpoints(ring: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut edges: Vec<(f64, [f64; 2])> = (0..ring.len())
        .map(|i| {
            let (a, b) = (ring[i], ring[(i + 1) % ring.len()]);
            (
                (b[0] - a[0]).hypot(b[1] - a[1]),
                [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0],
            )
        })
        .collect();
    edges.sort_by(|a, b| b.0.total_cmp(&a.0));
    edges.iter().take(2).map(|e| e.1).collect()
}

/// A point within 15 mm of the landing's centre at least 5 mm from every outline drawn
/// (landings, templates, bases).
fn clear_point(run: &Run, l: &Landing) -> Option<[f64; 2]> {
    let v = run.app.last_judged()?.verdict.as_ref().ok()?;
    let mut rings: Vec<Vec<[f64; 2]>> = Vec::new();
    for d in &v.directions {
        rings.push(d.template_polygon.clone());
        rings.extend(d.positions.iter().map(|p| p.base_polygon.clone()));
    }
    for s in &run.app.state.table.ships {
        rings.push(s.shape.outline().iter().map(|p| [p.x, p.y]).collect());
    }
    let clear = |p: [f64; 2]| {
        rings
            .iter()
            .all(|r| (0..r.len()).all(|i| segment_distance(p, r[i], r[(i + 1) % r.len()]) > 5.0))
    };
    (-6..=6)
        .flat_map(|i| (-6..=6).map(move |j| [l.x + 2.5 * f64::from(i), l.y + 2.5 * f64::from(j)]))
        .find(|&p| clear(p))
}

#[test]
fn legal_landings_are_bright_where_the_homography_puts_them_and_the_rest_is_black() {
    let mut run = Run::demo();
    run.frame(vec![]);
    let frame = Frame::rasterise(&run.frame(vec![]));
    let image = run.image_rect();
    // The central area is 1280 minus the panel wide and 800 high: the square projector
    // image is fitted by height.
    assert!((image.height() - 800.0).abs() < 1.0, "{image:?}");
    assert!((image.width() - image.height()).abs() < 1e-3);

    let landings = run.landings();
    let legal: Vec<&Landing> = landings
        .iter()
        .filter(|l| l.legal && !l.too_close_to_call)
        .collect();
    let illegal: Vec<&Landing> = landings
        .iter()
        .filter(|l| !l.legal && !l.too_close_to_call)
        .collect();
    assert!(
        !legal.is_empty() && !illegal.is_empty(),
        "s1 has both kinds"
    );

    let mut checked = 0;
    for l in &legal {
        for m in side_midpoints(&l.base_polygon) {
            let at = expected(image, m);
            let [r, g, b] = frame.greenest(at);
            eprintln!("legal {:?} edge at {m:?} -> {at:?}: {r} {g} {b}", l.slot);
            assert!(
                g > 150 && g > r + 100 && g > b + 80,
                "{m:?} at {at:?}: {r} {g} {b}"
            );
            checked += 1;
        }
        // Inside the base, away from every outline (the three positions overlap): unlit.
        let inside = clear_point(&run, l).expect("a point inside clear of outlines");
        let at = expected(image, inside);
        assert_eq!(
            frame.at(at),
            [0, 0, 0],
            "{inside:?} in {:?} at {at:?}",
            l.slot
        );
    }
    assert!(checked >= 4);

    // Illegal landings are dim: nothing on their edges brighter than a third of full red,
    // unless a legal outline crosses there.
    for l in &illegal {
        for m in side_midpoints(&l.base_polygon) {
            let [r, g, b] = frame.at(expected(image, m));
            assert!(r <= 0x60 && g.max(b) <= 0x60 || g > r, "{m:?}: {r} {g} {b}");
        }
    }

    // Black elsewhere: a grid over the projector image away from the outlines is mostly
    // exactly black, and the letterbox beside it is black too.
    let (mut black, mut total) = (0, 0);
    for i in 0..20 {
        for j in 0..20 {
            let p = image.min
                + vec2(
                    (i as f32 + 0.5) * image.width() / 20.0,
                    (j as f32 + 0.5) * image.height() / 20.0,
                );
            total += 1;
            if frame.at(p) == [0, 0, 0] {
                black += 1;
            }
        }
    }
    eprintln!("black grid samples {black}/{total}");
    assert!(black * 100 >= total * 95, "{black}/{total}");
    let beside = pos2(image.max.x + 20.0, image.center().y);
    if beside.x < SCREEN[0] as f32 {
        assert_eq!(frame.at(beside), [0, 0, 0]);
    }
    // Far from the play area: the table corner (-30, -30) mm is off the mat: black.
    assert_eq!(frame.at(expected(image, [-30.0, -30.0])), [0, 0, 0]);
}

#[test]
fn v_switches_between_table_and_projector_and_p_shows_the_pattern() {
    let mut run = Run::demo();
    run.frame(vec![]);
    let drawn = |r: &Run| r.app.projector.as_ref().map(|p| p.drawn().landings.len());
    assert_eq!(drawn(&run), Some(6));
    run.key(Key::V);
    assert!(run.app.projector.as_ref().is_some_and(|p| !p.in_main));
    assert_eq!(run.app.drawn().landings.len(), 6, "table view drawn");
    run.key(Key::V);
    assert!(run.app.projector.as_ref().is_some_and(|p| p.in_main));
    run.key(Key::P);
    let p = run.app.projector.as_ref().expect("projector");
    assert!(p.show_pattern);
    assert!(
        p.drawn().landings.is_empty(),
        "the pattern replaces the drawing"
    );
    assert!(p.drawn().image_rect.is_some());
}

#[test]
fn doubted_ships_are_outlined_amber_even_with_the_bases_hidden() {
    use hashmark::overlay::paint::CLOSE;
    // The demo scene as detection might have written it: s2 doubted, s3 confidently found.
    let (_dir, path) = common::demo_scene_detected(&[(1, 0.3), (2, 0.9)]);
    let mut run = Run::new(&Source::Scene(path));
    run.frame(vec![]);
    let prims = run.frame(vec![]);
    let drawn = run.projector_drawn();
    assert_eq!(drawn.bases, 8);
    assert_eq!(drawn.unsure, 1);
    // Amber where s2's base edges are projected (the midpoints of its two longest sides).
    let frame = Frame::rasterise(&prims);
    let image = run.image_rect();
    let s2 = run.app.state.table.ships[1].shape.outline().to_vec();
    let ring: Vec<[f64; 2]> = s2.iter().map(|q| [q.x, q.y]).collect();
    let amber = side_midpoints(&ring)
        .iter()
        .filter(|m| {
            // A pixel within one of the edge's projected midpoint of amber's hue (a 1 px
            // line lands at about 70 % of its brightness).
            let at = expected(image, **m);
            let ratio = f32::from(CLOSE.g()) / f32::from(CLOSE.r());
            (-1..=1).any(|dy| {
                (-1..=1).any(|dx| {
                    let [r, g, b] = frame.at(at + vec2(dx as f32, dy as f32)).map(f32::from);
                    r >= 100.0 && b <= 30.0 && (g / r - ratio).abs() < 0.1
                })
            })
        })
        .count();
    assert_eq!(amber, 2, "the midpoints of its two long sides are amber");
    // With the bases hidden (B), the doubted one is still outlined.
    run.app.projector.as_mut().expect("projector").show_bases = false;
    run.frame(vec![]);
    let drawn = run.projector_drawn();
    assert_eq!((drawn.bases, drawn.unsure), (1, 1));
}

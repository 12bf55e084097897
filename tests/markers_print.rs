//! The printable targets are what OpenCV detects, at true scale: render the page to PNG at
//! 300 DPI and find the markers and the ChArUco corners where the millimetres say.
#![cfg(feature = "vision")]

use hashmark::calibration::Layout;
use hashmark::vision::aruco::{self, Dict};
use hashmark::vision::calibrate::camera::BoardSpec;
use hashmark::vision::print;
use opencv::core::Vector;
use opencv::imgcodecs;

const DPI: f64 = 300.0;
const PX_PER_MM: f64 = DPI / 25.4;

fn decode(png: &[u8]) -> opencv::core::Mat {
    let buf: Vector<u8> = Vector::from_slice(png);
    imgcodecs::imdecode(&buf, imgcodecs::IMREAD_GRAYSCALE).unwrap()
}

#[test]
fn mat_marker_cards_detect_at_true_scale() {
    let layout = Layout::builtin();
    let pages = print::mat_marker_pages(&layout, (914.4, 914.4)).unwrap();
    assert_eq!(pages.len(), 1);
    let img = decode(&print::to_png(&pages[0], DPI as f32).unwrap());
    let found = aruco::detect(&img, Dict::Mat4x4_50).unwrap();
    let ids: Vec<i32> = found.iter().map(|d| d.id).collect();
    assert_eq!(ids, [0, 1, 2, 3]);
    // Cards at (15, 35), (105, 35), (15, 135), (105, 135) mm; markers 15 mm inside them.
    let origins = [(30.0, 50.0), (120.0, 50.0), (30.0, 150.0), (120.0, 150.0)];
    for (d, (x, y)) in found.iter().zip(origins) {
        let tl = d.corners[0];
        // Pixel centres sit half a pixel inside the edge they sample.
        assert!(
            (tl[0] - (x * PX_PER_MM - 0.5)).abs() < 1.5,
            "{} tl x {}",
            d.id,
            tl[0]
        );
        assert!(
            (tl[1] - (y * PX_PER_MM - 0.5)).abs() < 1.5,
            "{} tl y {}",
            d.id,
            tl[1]
        );
        let side = ((d.corners[1][0] - tl[0]).powi(2) + (d.corners[1][1] - tl[1]).powi(2)).sqrt();
        assert!(
            (side - 60.0 * PX_PER_MM).abs() < 1.5,
            "{} side {side}",
            d.id
        );
    }
}

/// Each page's markers as (id, side in mm), in the order found.
fn cards_on(page: &str) -> Vec<(i32, f64)> {
    let img = decode(&print::to_png(page, DPI as f32).unwrap());
    aruco::detect(&img, Dict::Mat4x4_50)
        .unwrap()
        .iter()
        .map(|d| {
            let [a, b] = [d.corners[0], d.corners[1]];
            let side = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt() / PX_PER_MM;
            (d.id, side)
        })
        .collect()
}

/// A layout of one's own with cards along the edges as well as at the corners: every card
/// is printed, four to a page, and says which edge it goes beyond.
#[test]
fn a_layout_with_more_cards_than_a_page_holds_prints_them_all() {
    let mut layout = Layout::builtin();
    for (id, centre) in [(4, [457.2, -45.0]), (5, [457.2, 959.4])] {
        layout
            .mat_markers
            .markers
            .push(hashmark::calibration::layout::MatMarker { id, centre });
    }
    let pages = print::mat_marker_pages(&layout, (914.4, 914.4)).unwrap();
    assert_eq!(pages.len(), 2);
    let ids = |p: &str| -> Vec<i32> {
        let cards = cards_on(p);
        for (id, side) in &cards {
            assert!((side - 60.0).abs() < 0.3, "card {id}: {side} mm");
        }
        cards.iter().map(|c| c.0).collect()
    };
    assert_eq!(ids(&pages[0]), [0, 1, 2, 3]);
    assert_eq!(ids(&pages[1]), [4, 5]);
    assert!(pages[1].contains("page 2 of 2"));
    for line in [
        "centre (457.2, -45.0) mm:",
        "beyond player 1's edge, 457 mm from the left",
        "centre (457.2, 959.4) mm:",
        "beyond the far edge, 457 mm from the left",
    ] {
        assert!(pages[1].contains(line), "{line}: {}", pages[1]);
    }
    assert!(pages[0].contains("player 1's left corner"), "{}", pages[0]);
}

/// Markers larger than the spec's get cards with as wide a quiet zone, one to a page when
/// two do not fit; a marker no A4 card can hold is refused in words.
#[test]
fn large_markers_get_cards_of_their_own() {
    let mut layout = Layout::builtin();
    layout.mat_markers.marker_mm = 100.0;
    let pages = print::mat_marker_pages(&layout, (914.4, 914.4)).unwrap();
    assert_eq!(pages.len(), 4);
    for (k, page) in pages.iter().enumerate() {
        let cards = cards_on(page);
        assert_eq!(cards.len(), 1, "page {k}");
        assert_eq!(cards[0].0, k as i32);
        assert!((cards[0].1 - 100.0).abs() < 0.3, "{cards:?}");
    }
    layout.mat_markers.marker_mm = 150.0;
    let err = print::mat_marker_pages(&layout, (914.4, 914.4))
        .unwrap_err()
        .to_string();
    assert!(err.contains("do not fit on an A4 card"), "{err}");
}

/// Cards in another dictionary than the spec's (one `calibrate table` reads as well) are
/// printed in it; an id the dictionary does not have is refused in words.
#[test]
fn cards_print_in_the_layouts_own_dictionary() {
    let mut layout = Layout::builtin();
    layout.mat_markers.dictionary = "DICT_6X6_250".into();
    for (m, id) in layout.mat_markers.markers.iter_mut().zip([40, 98, 62, 23]) {
        m.id = id;
    }
    let pages = print::mat_marker_pages(&layout, (914.4, 914.4)).unwrap();
    let img = decode(&print::to_png(&pages[0], DPI as f32).unwrap());
    let dict = Dict::parse("DICT_6X6_250").unwrap();
    let ids: Vec<i32> = aruco::detect(&img, dict)
        .unwrap()
        .iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(ids, [23, 40, 62, 98]);
    assert!(pages[0].contains("DICT_6X6_250, 60 mm"));

    layout.mat_markers = Layout::builtin().mat_markers;
    layout.mat_markers.markers[2].id = 60;
    let err = print::mat_marker_pages(&layout, (914.4, 914.4))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("marker id 60 is not in its dictionary (ids 0 to 49)"),
        "{err}"
    );
}

#[test]
fn pdf_pages_are_a4_at_true_size() {
    let layout = Layout::builtin();
    let pages = print::mat_marker_pages(&layout, (914.4, 914.4)).unwrap();
    let pdf = print::to_pdf(&pages[0]).unwrap();
    let text = String::from_utf8_lossy(&pdf);
    let i = text.find("/MediaBox [").expect("a MediaBox");
    let nums: Vec<f64> = text[i + 11..]
        .split(']')
        .next()
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    // A4 is 210 x 297 mm = 595.28 x 841.89 pt.
    assert!((nums[2] - nums[0] - 595.28).abs() < 0.1, "{nums:?}");
    assert!((nums[3] - nums[1] - 841.89).abs() < 0.1, "{nums:?}");
}

#[test]
fn charuco_board_gives_all_corners_at_the_square_size() {
    let layout = Layout::builtin();
    let b = &layout.board;
    let board = BoardSpec::from_layout(b).geometry().unwrap();
    let img = decode(
        &print::to_png(&print::charuco_board_svg(&board, &b.dictionary), DPI as f32).unwrap(),
    );
    let found = aruco::detect(&img, Dict::Board5x5_100).unwrap();
    assert_eq!(found.len(), board.markers.len());
    let corners = aruco::charuco_corners(&img, &board).unwrap();
    assert_eq!(
        corners.len(),
        (b.squares_x as usize - 1) * (b.squares_y as usize - 1)
    );
    // Corner k and k + 1 on a row are one square apart.
    let by_id: std::collections::HashMap<i32, [f64; 2]> = corners.into_iter().collect();
    let step =
        ((by_id[&1][0] - by_id[&0][0]).powi(2) + (by_id[&1][1] - by_id[&0][1]).powi(2)).sqrt();
    assert!((step - b.square_mm * PX_PER_MM).abs() < 1.0, "step {step}");
}

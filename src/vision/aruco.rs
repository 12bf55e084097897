//! Every call into OpenCV's ArUco/ChArUco API lives here. On OpenCV 4.6 these are the
//! contrib `aruco` module's free functions; 4.7 moved them into `objdetect` classes
//! (ArucoDetector, CharucoDetector), so a port touches only this file.

use super::VisionError;
use opencv::aruco::{
    self, CharucoBoard, DetectorParameters, Dictionary, PREDEFINED_DICTIONARY_NAME,
};
use opencv::core::{Mat, Point2f, Ptr, Vector};
use opencv::prelude::*;

/// An ArUco dictionary: the two the project's layout uses (spec section 5), or any other
/// predefined one by name (the real test photos use DICT_6X6_250).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dict {
    /// The mat markers: DICT_4X4_50.
    Mat4x4_50,
    /// The intrinsics board: DICT_5X5_100.
    Board5x5_100,
    /// Any predefined dictionary.
    Predefined(PREDEFINED_DICTIONARY_NAME),
}

/// OpenCV's predefined dictionaries by the names users and files give them.
const NAMES: [(&str, PREDEFINED_DICTIONARY_NAME); 20] = {
    use PREDEFINED_DICTIONARY_NAME::*;
    [
        ("DICT_4X4_50", DICT_4X4_50),
        ("DICT_4X4_100", DICT_4X4_100),
        ("DICT_4X4_250", DICT_4X4_250),
        ("DICT_4X4_1000", DICT_4X4_1000),
        ("DICT_5X5_50", DICT_5X5_50),
        ("DICT_5X5_100", DICT_5X5_100),
        ("DICT_5X5_250", DICT_5X5_250),
        ("DICT_5X5_1000", DICT_5X5_1000),
        ("DICT_6X6_50", DICT_6X6_50),
        ("DICT_6X6_100", DICT_6X6_100),
        ("DICT_6X6_250", DICT_6X6_250),
        ("DICT_6X6_1000", DICT_6X6_1000),
        ("DICT_7X7_50", DICT_7X7_50),
        ("DICT_7X7_100", DICT_7X7_100),
        ("DICT_7X7_250", DICT_7X7_250),
        ("DICT_7X7_1000", DICT_7X7_1000),
        ("DICT_ARUCO_ORIGINAL", DICT_ARUCO_ORIGINAL),
        ("DICT_APRILTAG_16h5", DICT_APRILTAG_16h5),
        ("DICT_APRILTAG_25h9", DICT_APRILTAG_25h9),
        ("DICT_APRILTAG_36h11", DICT_APRILTAG_36h11),
    ]
};

impl Dict {
    /// OpenCV's name for it, as files and flags give it.
    pub fn name(self) -> &'static str {
        let want = self.predefined();
        NAMES
            .iter()
            .find(|(_, d)| *d == want)
            .map_or("unknown", |(n, _)| n)
    }

    /// OpenCV's predefined dictionary it is.
    fn predefined(self) -> PREDEFINED_DICTIONARY_NAME {
        match self {
            Dict::Mat4x4_50 => PREDEFINED_DICTIONARY_NAME::DICT_4X4_50,
            Dict::Board5x5_100 => PREDEFINED_DICTIONARY_NAME::DICT_5X5_100,
            Dict::Predefined(n) => n,
        }
    }

    /// A dictionary by its OpenCV name, e.g. "DICT_5X5_100".
    pub fn parse(name: &str) -> Result<Dict, VisionError> {
        match NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            Some((_, PREDEFINED_DICTIONARY_NAME::DICT_4X4_50)) => Ok(Dict::Mat4x4_50),
            Some((_, PREDEFINED_DICTIONARY_NAME::DICT_5X5_100)) => Ok(Dict::Board5x5_100),
            Some((_, d)) => Ok(Dict::Predefined(*d)),
            None => Err(VisionError::Invalid(format!(
                "unknown ArUco dictionary \"{name}\" (try DICT_4X4_50, DICT_5X5_100, DICT_6X6_250)"
            ))),
        }
    }
}

fn dictionary(d: Dict) -> Result<Ptr<Dictionary>, VisionError> {
    Ok(aruco::get_predefined_dictionary(d.predefined())?)
}

/// A marker's printed pattern, one-bit border included: `cells` x `cells`, row-major from
/// the marker's top-left corner, `true` where the print is black.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkerBits {
    pub cells: usize,
    pub black: Vec<bool>,
}

impl MarkerBits {
    /// Whether cell (row, col) is black; outside the pattern is white paper.
    pub fn is_black(&self, row: i64, col: i64) -> bool {
        let n = self.cells as i64;
        if row < 0 || col < 0 || row >= n || col >= n {
            return false;
        }
        self.black[(row * n + col) as usize]
    }
}

/// The bit pattern of marker `id`, read from OpenCV's own drawing so the simulator prints
/// exactly what the detector looks for.
pub fn marker_bits(d: Dict, id: i32) -> Result<MarkerBits, VisionError> {
    let dict = dictionary(d)?;
    let count = dict.bytes_list().rows();
    if !(0..count).contains(&id) {
        return Err(VisionError::Invalid(format!(
            "marker id {id} is not in its dictionary (ids 0 to {})",
            count - 1
        )));
    }
    let cells = dict.marker_size() as usize + 2;
    let mut img = Mat::default();
    aruco::draw_marker(&dict, id, cells as i32, &mut img, 1)?;
    let mut black = Vec::with_capacity(cells * cells);
    for r in 0..cells {
        for c in 0..cells {
            black.push(*img.at_2d::<u8>(r as i32, c as i32)? < 128);
        }
    }
    Ok(MarkerBits { cells, black })
}

/// A ChArUco board in its own frame (mm, z = 0 on the board), as OpenCV defines it.
#[derive(Clone, Debug)]
pub struct CharucoGeometry {
    /// The dictionary of the board's markers.
    pub dict: Dict,
    pub squares_x: usize,
    pub squares_y: usize,
    pub square_mm: f64,
    pub marker_mm: f64,
    /// (id, corners top-left, top-right, bottom-right, bottom-left in the board frame, bits).
    pub markers: Vec<(i32, [[f64; 2]; 4], MarkerBits)>,
    /// The inner chessboard corners, indexed by ChArUco corner id.
    pub corners: Vec<[f64; 2]>,
}

fn board(
    squares_x: usize,
    squares_y: usize,
    square_mm: f64,
    marker_mm: f64,
    d: Dict,
) -> Result<Ptr<CharucoBoard>, VisionError> {
    let dict = dictionary(d)?;
    Ok(CharucoBoard::create(
        squares_x as i32,
        squares_y as i32,
        square_mm as f32,
        marker_mm as f32,
        &dict,
    )?)
}

impl CharucoGeometry {
    /// The board as a layout file and camera.json describe it.
    pub fn description(&self) -> crate::calibration::layout::Board {
        crate::calibration::layout::Board {
            dictionary: self.dict.name().to_string(),
            squares_x: self.squares_x as u32,
            squares_y: self.squares_y as u32,
            square_mm: self.square_mm,
            marker_mm: self.marker_mm,
        }
    }

    /// The spec's intrinsics board: 7 x 5 squares of 30 mm, 22 mm markers, DICT_5X5_100.
    pub fn spec_board() -> Result<CharucoGeometry, VisionError> {
        CharucoGeometry::new(7, 5, 30.0, 22.0)
    }

    pub fn new(
        squares_x: usize,
        squares_y: usize,
        square_mm: f64,
        marker_mm: f64,
    ) -> Result<CharucoGeometry, VisionError> {
        CharucoGeometry::with_dictionary(
            squares_x,
            squares_y,
            square_mm,
            marker_mm,
            Dict::Board5x5_100,
        )
    }

    /// Any board: the real test photos use 5 x 7 squares of 40 mm with DICT_6X6_250.
    pub fn with_dictionary(
        squares_x: usize,
        squares_y: usize,
        square_mm: f64,
        marker_mm: f64,
        dict: Dict,
    ) -> Result<CharucoGeometry, VisionError> {
        if squares_x < 2 || squares_y < 2 || !(marker_mm > 0.0 && marker_mm < square_mm) {
            return Err(VisionError::Invalid(format!(
                "a ChArUco board needs at least 2 x 2 squares and 0 < marker < square, not {squares_x} x {squares_y}, {square_mm} / {marker_mm} mm"
            )));
        }
        let b = board(squares_x, squares_y, square_mm, marker_mm, dict)?;
        let obj = b.obj_points();
        let ids = b.ids();
        let mut markers = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let pts = obj.get(i)?;
            let mut c = [[0.0; 2]; 4];
            for (k, slot) in c.iter_mut().enumerate() {
                let p = pts.get(k)?;
                *slot = [f64::from(p.x), f64::from(p.y)];
            }
            markers.push((id, c, marker_bits(dict, id)?));
        }
        let corners = b
            .chessboard_corners()
            .iter()
            .map(|p| [f64::from(p.x), f64::from(p.y)])
            .collect();
        Ok(CharucoGeometry {
            dict,
            squares_x,
            squares_y,
            square_mm,
            marker_mm,
            markers,
            corners,
        })
    }

    /// Whether the board square containing (x, y) (board mm) is black. Markers sit in the
    /// white squares, so a square is black exactly when it holds no marker.
    pub fn square_is_black(&self, x: f64, y: f64) -> bool {
        let (i, j) = ((x / self.square_mm).floor(), (y / self.square_mm).floor());
        if i < 0.0 || j < 0.0 || i >= self.squares_x as f64 || j >= self.squares_y as f64 {
            return false;
        }
        let (cx, cy) = ((i + 0.5) * self.square_mm, (j + 0.5) * self.square_mm);
        !self.markers.iter().any(|(_, c, _)| {
            let mx = (c[0][0] + c[2][0]) / 2.0;
            let my = (c[0][1] + c[2][1]) / 2.0;
            (mx - cx).abs() < 1e-3 && (my - cy).abs() < 1e-3
        })
    }
}

/// One detected marker: its id and its four corners in the image (px), top-left first.
#[derive(Clone, Debug, PartialEq)]
pub struct Detection {
    pub id: i32,
    pub corners: [[f64; 2]; 4],
}

/// How detected marker corners are refined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refine {
    /// The corners of the fitted quadrilateral (OpenCV's default; what its regression
    /// values were made with).
    None,
    /// cornerSubPix on the image: what hashmark uses.
    Subpix,
    /// AprilTag's edge-line refinement.
    AprilTag,
}

/// Detects markers of `d` in an 8-bit grey or BGR image, with sub-pixel corner refinement.
pub fn detect(image: &Mat, d: Dict) -> Result<Vec<Detection>, VisionError> {
    detect_with(image, d, Refine::Subpix)
}

/// Detects markers of `d` reading each candidate's bits from a finer resampling (8 px per
/// cell instead of OpenCV's 4), with sub-pixel corners. A small marker seen obliquely (a
/// mat card at the table's far corner, 35 px wide at 1080p) is found as a candidate
/// square but its bits misread at 4 px per cell, and it is rejected; the finer sampling
/// reads it (rendered seed 117: marker 0 rejected at 4 px per cell, at twice the image's
/// size too, found at 8). The error correction is unchanged, so a misread is as unlikely.
pub fn detect_fine(image: &Mat, d: Dict) -> Result<Vec<Detection>, VisionError> {
    let dict = dictionary(d)?;
    let mut params = DetectorParameters::create()?;
    params.set_corner_refinement_method(aruco::CORNER_REFINE_SUBPIX);
    params.set_perspective_remove_pixel_per_cell(FINE_PIXELS_PER_CELL);
    run_detector(image, &dict, &params)
}

/// See [`detect_fine`].
const FINE_PIXELS_PER_CELL: i32 = 8;

/// Detects markers of `d` with the given corner refinement.
pub fn detect_with(image: &Mat, d: Dict, refine: Refine) -> Result<Vec<Detection>, VisionError> {
    let dict = dictionary(d)?;
    let mut params = DetectorParameters::create()?;
    params.set_corner_refinement_method(match refine {
        Refine::None => aruco::CORNER_REFINE_NONE,
        Refine::Subpix => aruco::CORNER_REFINE_SUBPIX,
        Refine::AprilTag => aruco::CORNER_REFINE_APRILTAG,
    });
    run_detector(image, &dict, &params)
}

/// The ChArUco chessboard corners visible in an image: (corner id, image point px).
pub fn charuco_corners(
    image: &Mat,
    geometry: &CharucoGeometry,
) -> Result<Vec<(i32, [f64; 2])>, VisionError> {
    let dict = dictionary(geometry.dict)?;
    let b = board(
        geometry.squares_x,
        geometry.squares_y,
        geometry.square_mm,
        geometry.marker_mm,
        geometry.dict,
    )?;
    let mut params = DetectorParameters::create()?;
    params.set_corner_refinement_method(aruco::CORNER_REFINE_NONE);
    let mut corners: Vector<Vector<Point2f>> = Vector::new();
    let mut ids: Vector<i32> = Vector::new();
    let mut rejected: Vector<Vector<Point2f>> = Vector::new();
    aruco::detect_markers(image, &dict, &mut corners, &mut ids, &params, &mut rejected)?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut ch_corners: Vector<Point2f> = Vector::new();
    let mut ch_ids: Vector<i32> = Vector::new();
    aruco::interpolate_corners_charuco_def(
        &corners,
        &ids,
        image,
        &b,
        &mut ch_corners,
        &mut ch_ids,
    )?;
    Ok(ch_ids
        .iter()
        .zip(ch_corners.iter())
        .map(|(id, p)| (id, [f64::from(p.x), f64::from(p.y)]))
        .collect())
}

/// Detects markers with cornerSubPix in a window of `half_window` pixels around each
/// corner. OpenCV's default (5) reaches into the marker's inner bits when a cell is under
/// about 11 px, which pulls the corners by a pixel or more; the window should stay inside
/// the one-cell border. Bits are read at `pixels_per_cell` (OpenCV's default is 4): OpenCV
/// samples the unwarped marker with nearest-neighbour, and at 4 px per cell a blurred,
/// foreshortened marker of a 4K view (cells of 8 px and more) loses isolated bits, while
/// 8 px per cell loses bits of markers whose cells are only 3-4 px.
pub fn detect_subpix_window(
    image: &Mat,
    d: Dict,
    half_window: i32,
    pixels_per_cell: i32,
) -> Result<Vec<Detection>, VisionError> {
    let dict = dictionary(d)?;
    let mut params = DetectorParameters::create()?;
    params.set_corner_refinement_method(aruco::CORNER_REFINE_SUBPIX);
    params.set_corner_refinement_win_size(half_window.max(1));
    params.set_corner_refinement_max_iterations(100);
    params.set_corner_refinement_min_accuracy(0.01);
    params.set_perspective_remove_pixel_per_cell(pixels_per_cell.clamp(2, 16));
    run_detector(image, &dict, &params)
}

/// One detectMarkers call, its output as plain detections sorted by id.
fn run_detector(
    image: &Mat,
    dict: &Ptr<Dictionary>,
    params: &Ptr<DetectorParameters>,
) -> Result<Vec<Detection>, VisionError> {
    let mut corners: Vector<Vector<Point2f>> = Vector::new();
    let mut ids: Vector<i32> = Vector::new();
    let mut rejected: Vector<Vector<Point2f>> = Vector::new();
    aruco::detect_markers(image, dict, &mut corners, &mut ids, params, &mut rejected)?;
    let mut out = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let c = corners.get(i)?;
        let mut cs = [[0.0; 2]; 4];
        for (k, slot) in cs.iter_mut().enumerate() {
            let p = c.get(k)?;
            *slot = [f64::from(p.x), f64::from(p.y)];
        }
        out.push(Detection { id, corners: cs });
    }
    out.sort_by_key(|d| d.id);
    Ok(out)
}

//! Thin glue between the project's plain types and OpenCV's (Mat, point vectors), plus the
//! few non-ArUco OpenCV calls: projection, calibration, image coding. Keeping conversions in
//! one place keeps the rest of the crate free of OpenCV types.

use super::{Camera, VisionError};
use opencv::core::{Mat, Point2f, Point3f, Size, TermCriteria, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgcodecs, imgproc};

/// The camera matrix as a 3x3 f64 Mat.
pub fn camera_matrix(c: &Camera) -> Result<Mat, VisionError> {
    Ok(Mat::from_slice_2d(&c.camera_matrix)?)
}

/// The distortion as a 1x5 f64 Mat.
pub fn distortion(c: &Camera) -> Result<Mat, VisionError> {
    Ok(Mat::from_slice(&c.distortion)?.try_clone()?)
}

/// Projects table points with OpenCV's own `projectPoints`: the reference the simulator's
/// camera model is checked against.
pub fn project_points(c: &Camera, pts: &[[f64; 3]]) -> Result<Vec<[f64; 2]>, VisionError> {
    let obj: Vector<opencv::core::Point3d> = pts
        .iter()
        .map(|p| opencv::core::Point3d::new(p[0], p[1], p[2]))
        .collect();
    let rvec = Mat::from_slice(&c.rvec)?.try_clone()?;
    let tvec = Mat::from_slice(&c.tvec)?.try_clone()?;
    let mut out: Vector<opencv::core::Point2d> = Vector::new();
    calib3d::project_points_def(
        &obj,
        &rvec,
        &tvec,
        &camera_matrix(c)?,
        &distortion(c)?,
        &mut out,
    )?;
    Ok(out.iter().map(|p| [p.x, p.y]).collect())
}

/// The result of an intrinsic calibration.
#[derive(Clone, Debug)]
pub struct Intrinsics {
    pub camera_matrix: [[f64; 3]; 3],
    pub distortion: [f64; 5],
    pub rms_px: f64,
    /// Standard deviations of fx, fy, cx, cy (px).
    pub std_dev: [f64; 4],
    /// RMS reprojection error of each view (px).
    pub per_view_rms: Vec<f64>,
    /// Each view's board pose (board to camera, OpenCV convention).
    pub poses: Vec<([f64; 3], [f64; 3])>,
}

/// One calibration view: planar target points (mm, z = 0) and where they were seen (px).
pub type View = (Vec<[f64; 3]>, Vec<[f64; 2]>);

/// Calibrates a camera from per-view correspondences (planar target points in mm, z = 0,
/// and their image points) with `calibrateCameraExtended` and the five-term distortion.
pub fn calibrate(views: &[View], image_size: [u32; 2]) -> Result<Intrinsics, VisionError> {
    let mut obj: Vector<Vector<Point3f>> = Vector::new();
    let mut img: Vector<Vector<Point2f>> = Vector::new();
    for (o, i) in views {
        obj.push(
            o.iter()
                .map(|p| Point3f::new(p[0] as f32, p[1] as f32, p[2] as f32))
                .collect(),
        );
        img.push(
            i.iter()
                .map(|p| Point2f::new(p[0] as f32, p[1] as f32))
                .collect(),
        );
    }
    let mut k = Mat::default();
    let mut d = Mat::default();
    let mut rvecs: Vector<Mat> = Vector::new();
    let mut tvecs: Vector<Mat> = Vector::new();
    let (mut std_in, mut std_ex, mut per_view) = (Mat::default(), Mat::default(), Mat::default());
    let rms = calib3d::calibrate_camera_extended(
        &obj,
        &img,
        Size::new(image_size[0] as i32, image_size[1] as i32),
        &mut k,
        &mut d,
        &mut rvecs,
        &mut tvecs,
        &mut std_in,
        &mut std_ex,
        &mut per_view,
        0,
        TermCriteria::default()?,
    )?;
    let mut camera_matrix = [[0.0; 3]; 3];
    for (r, row) in camera_matrix.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = *k.at_2d::<f64>(r as i32, c as i32)?;
        }
    }
    let at = |m: &Mat, i: usize| -> Result<f64, opencv::Error> { Ok(*m.at::<f64>(i as i32)?) };
    let mut distortion = [0.0; 5];
    for (i, v) in distortion.iter_mut().enumerate() {
        *v = at(&d, i)?;
    }
    let mut std_dev = [0.0; 4];
    for (i, v) in std_dev.iter_mut().enumerate() {
        *v = at(&std_in, i)?;
    }
    let per_view_rms = (0..views.len())
        .map(|i| at(&per_view, i))
        .collect::<Result<_, _>>()?;
    let vec3 =
        |m: &Mat| -> Result<[f64; 3], opencv::Error> { Ok([at(m, 0)?, at(m, 1)?, at(m, 2)?]) };
    let poses = rvecs
        .iter()
        .zip(tvecs.iter())
        .map(|(r, t)| Ok((vec3(&r)?, vec3(&t)?)))
        .collect::<Result<_, opencv::Error>>()?;
    Ok(Intrinsics {
        camera_matrix,
        distortion,
        rms_px: rms,
        std_dev,
        per_view_rms,
        poses,
    })
}

/// An 8-bit BGR Mat from interleaved RGB bytes (OpenCV wants BGR).
pub fn bgr_from_rgb(width: u32, height: u32, rgb: &[u8]) -> Result<Mat, VisionError> {
    let expected = width as usize * height as usize * 3;
    if rgb.len() != expected {
        return Err(VisionError::Invalid(format!(
            "image buffer has {} bytes, expected {expected}",
            rgb.len()
        )));
    }
    let bgr: Vec<u8> = rgb
        .chunks_exact(3)
        .flat_map(|p| [p[2], p[1], p[0]])
        .collect();
    let flat = Mat::from_slice(&bgr)?;
    Ok(flat.reshape(3, height as i32)?.try_clone()?)
}

/// Encodes a BGR Mat as JPEG with the given quality (0-100).
pub fn encode_jpeg(img: &Mat, quality: i32) -> Result<Vec<u8>, VisionError> {
    let mut buf: Vector<u8> = Vector::new();
    let params: Vector<i32> = Vector::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, quality]);
    if !imgcodecs::imencode(".jpg", img, &mut buf, &params)? {
        return Err(VisionError::Invalid("JPEG encoding failed".into()));
    }
    Ok(buf.to_vec())
}

/// Encodes a BGR Mat as PNG.
pub fn encode_png(img: &Mat) -> Result<Vec<u8>, VisionError> {
    let mut buf: Vector<u8> = Vector::new();
    if !imgcodecs::imencode_def(".png", img, &mut buf)? {
        return Err(VisionError::Invalid("PNG encoding failed".into()));
    }
    Ok(buf.to_vec())
}

/// Decodes an encoded image (JPEG, PNG) to BGR, as a camera pipeline would read it.
pub fn decode(bytes: &[u8]) -> Result<Mat, VisionError> {
    truncated(bytes)?;
    let buf: Vector<u8> = Vector::from_slice(bytes);
    let m = imgcodecs::imdecode(&buf, imgcodecs::IMREAD_COLOR)?;
    if m.empty() {
        return Err(VisionError::Invalid("image could not be decoded".into()));
    }
    Ok(m)
}

/// OpenCV decodes a cut-off JPEG or PNG without complaint, filling the rest grey; a
/// detector would then see half a table. Refuse files whose end marker is missing.
fn truncated(bytes: &[u8]) -> Result<(), VisionError> {
    let end = bytes.len() - bytes.iter().rev().take_while(|b| **b == 0).count();
    let body = &bytes[..end];
    if body.starts_with(&[0xFF, 0xD8]) && !body.ends_with(&[0xFF, 0xD9]) {
        return Err(VisionError::Invalid(
            "the JPEG is truncated (no end-of-image marker)".into(),
        ));
    }
    if body.starts_with(b"\x89PNG") && !body.windows(4).rev().take(64).any(|w| w == b"IEND") {
        return Err(VisionError::Invalid(
            "the PNG is truncated (no IEND chunk)".into(),
        ));
    }
    Ok(())
}

/// A round structuring element `diameter` px across, anchored at its centre.
pub fn disc_kernel(diameter: i32) -> Result<Mat, VisionError> {
    Ok(imgproc::get_structuring_element_def(
        imgproc::MORPH_ELLIPSE,
        Size::new(diameter, diameter),
    )?)
}

/// Each output channel a weighted sum of the image's B, G, R (one row of weights per output
/// channel), rounded and saturating: channel gains as a diagonal, a grey as one row.
pub fn weigh_channels(img: &Mat, rows: &[[f64; 3]]) -> Result<Mat, VisionError> {
    let m = Mat::from_slice_2d(rows)?;
    let mut out = Mat::default();
    opencv::core::transform(img, &mut out, &m)?;
    Ok(out)
}

/// Grey version of a BGR image.
pub fn grey(img: &Mat) -> Result<Mat, VisionError> {
    let mut g = Mat::default();
    imgproc::cvt_color_def(img, &mut g, imgproc::COLOR_BGR2GRAY)?;
    Ok(g)
}

/// Downscales an image to the given width with area averaging (for previews).
pub fn downscale(img: &Mat, width: i32) -> Result<Mat, VisionError> {
    let s = img.size()?;
    let height = (f64::from(s.height) * f64::from(width) / f64::from(s.width)).round() as i32;
    let mut out = Mat::default();
    imgproc::resize(
        img,
        &mut out,
        Size::new(width, height),
        0.0,
        0.0,
        imgproc::INTER_AREA,
    )?;
    Ok(out)
}

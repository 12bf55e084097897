//! A rendered frame as a different camera, or the same one set differently, would have
//! taken it: beyond the faults the simulator draws for every image (see
//! [`super::faults`]: white balance within 7 %, blur 0.45-0.85 px, JPEG 85-95), the
//! changes a judge's own camera brings. `hashmark bench detect --camera` measures
//! detection on them.

use crate::vision::{VisionError, cv};
use opencv::core::{self, Mat, Scalar, Size};
use opencv::imgproc;
use opencv::prelude::*;

/// One change, applied to the decoded frame (sRGB levels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CameraChange {
    /// White balance off, as a fixed setting under a warm lamp: red 15 % up, blue 20 %
    /// down.
    Warm,
    /// Exposed 0.6 as long.
    Dark,
    /// Exposed 1.35 times as long (the paper and the brightest print clip).
    Bright,
    /// Out of focus: a Gaussian blur of 0.8 px more.
    Blur,
    /// Sensor noise: Gaussian, 4 sRGB levels.
    Noise,
    /// Compressed harder: JPEG at quality 40 (a webcam's MJPG stream).
    Jpeg40,
}

impl CameraChange {
    /// `frame` (8-bit BGR) as changed; the noise is the same for a given `seed`.
    pub fn apply(self, frame: &Mat, seed: u64) -> Result<Mat, VisionError> {
        let gains = |b: f64, g: f64, r: f64| {
            cv::weigh_channels(frame, &[[b, 0.0, 0.0], [0.0, g, 0.0], [0.0, 0.0, r]])
        };
        match self {
            CameraChange::Warm => gains(0.8, 1.0, 1.15),
            CameraChange::Dark => gains(0.6, 0.6, 0.6),
            CameraChange::Bright => gains(1.35, 1.35, 1.35),
            CameraChange::Blur => {
                let mut out = Mat::default();
                imgproc::gaussian_blur_def(frame, &mut out, Size::new(0, 0), 0.8)?;
                Ok(out)
            }
            CameraChange::Noise => {
                core::set_rng_seed(seed as i32)?;
                let mut noise =
                    Mat::new_size_with_default(frame.size()?, core::CV_16SC3, Scalar::all(0.0))?;
                core::randn(&mut noise, &Scalar::all(0.0), &Scalar::all(4.0))?;
                let mut out = Mat::default();
                core::add(frame, &noise, &mut out, &core::no_array(), core::CV_8UC3)?;
                Ok(out)
            }
            CameraChange::Jpeg40 => cv::decode(&cv::encode_jpeg(frame, 40)?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Vec3b};

    #[test]
    fn each_change_does_what_it_says() {
        let grey =
            Mat::new_rows_cols_with_default(16, 16, CV_8UC3, Scalar::all(100.0)).expect("mat");
        let at = |m: &Mat| *m.at_2d::<Vec3b>(8, 8).expect("px");
        assert_eq!(
            at(&CameraChange::Warm.apply(&grey, 1).expect("warm")).0,
            [80, 100, 115]
        );
        assert_eq!(
            at(&CameraChange::Dark.apply(&grey, 1).expect("dark")).0,
            [60; 3]
        );
        assert_eq!(
            at(&CameraChange::Bright.apply(&grey, 1).expect("bright")).0,
            [135; 3]
        );
        assert_eq!(
            at(&CameraChange::Blur.apply(&grey, 1).expect("blur")).0,
            [100; 3]
        );
        let a = CameraChange::Noise.apply(&grey, 7).expect("noise");
        let b = CameraChange::Noise.apply(&grey, 7).expect("noise");
        let diff = core::norm2_def(&a, &b).expect("norm");
        let off = core::norm2_def(&a, &grey).expect("norm");
        assert!(diff == 0.0 && off > 0.0, "{diff} {off}");
        let jpeg = CameraChange::Jpeg40.apply(&grey, 1).expect("jpeg");
        assert_eq!(jpeg.size().expect("size"), grey.size().expect("size"));
    }
}

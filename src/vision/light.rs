//! The sRGB transfer curve. Cameras store gamma-encoded values; geometry from intensities
//! (an edge's halfway point, light added by a projector) is right only in linear light.

/// Encoded 0..1 to linear 0..1.
pub fn srgb_to_linear(c: f64) -> f64 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear 0..1 to encoded 0..1 (clamped).
pub fn linear_to_srgb(l: f64) -> f64 {
    let c = if l <= 0.003_130_8 {
        12.92 * l
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    c.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for k in 0..=255 {
            let c = f64::from(k) / 255.0;
            assert!((linear_to_srgb(srgb_to_linear(c)) - c).abs() < 1e-9);
        }
        assert!((srgb_to_linear(0.5) - 0.214).abs() < 1e-3);
    }
}

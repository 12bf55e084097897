//! Detection (issue 5): from a calibrated camera frame to a scene in table millimetres.
//! So far: the rectified top-down view every detector works in.

pub mod ortho;

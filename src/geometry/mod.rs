//! Poses, polygons, overlap and signed clearance in table millimetres. No I/O, no OpenCV.

pub mod convex;
pub mod decompose;
pub mod footprint;
pub mod play_area;
pub mod polygon;
pub mod pose;
pub mod shape;

pub use convex::Convex;
pub use play_area::PlayArea;
pub use pose::Pose;
pub use shape::Shape;

/// A point in the table or ship frame, mm.
pub type Point = nalgebra::Point2<f64>;
/// A displacement, mm.
pub type Vec2 = nalgebra::Vector2<f64>;

/// Shapes that penetrate each other by less than this (mm) only touch.
///
/// Touching is not overlapping (spec section 4). Exact touching configurations, such as two
/// bases side by side at a heading of 90 degrees, carry rounding errors of about 1e-13 mm from
/// the trigonometry; a nanometre is far below anything a camera or a judge can see and far
/// above that rounding.
pub const TOUCH_TOLERANCE_MM: f64 = 1e-6;

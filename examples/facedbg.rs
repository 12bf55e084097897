use hashmark::models::Models;
use hashmark::vision::detect::base_search::MiniMask;
use hashmark::vision::detect::facing::facing;
use hashmark::vision::detect::ortho::OrthoView;
use hashmark::vision::{cv, sim::Truth};
fn main() {
    let models = Models::builtin();
    let a: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&a[1]);
    let truth: Truth =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sim/truth.json")).unwrap())
            .unwrap();
    let frame = cv::decode(&std::fs::read(dir.join("sim/frame.jpg")).unwrap()).unwrap();
    let view = OrthoView::new(-10.0, -10.0, 924.4, 924.4, 3.0, 1.0);
    let ortho = view.render(&frame, &truth.camera).unwrap();
    let mask = MiniMask::new(&ortho, &view).unwrap();
    let s = truth.scene.ships.iter().find(|s| s.id == a[2]).unwrap();
    let half = models.bases.get(s.size).width_mm / 2.0;
    let rim = if half < 25.0 { 1.6 } else { 2.0 };
    let (px, py, ph, rim) = match std::env::var("POSE") {
        Ok(v) => { let p: Vec<f64> = v.split(',').map(|x| x.parse().unwrap()).collect(); (p[0], p[1], p[2], p[3]) }
        Err(_) => (s.x, s.y, s.heading_deg, rim),
    };
    let f = facing(
        &frame,
        &truth.camera,
        [px, py],
        ph.to_radians(),
        half - rim,
        3.0,
        Some(&mask),
    );
    println!(
        "mask: k {} conf {:.2} scores {:.2?}",
        f.k, f.confidence, f.scores
    );
    let f = facing(
        &frame,
        &truth.camera,
        [s.x, s.y],
        s.heading_deg.to_radians(),
        half - rim,
        3.0,
        None,
    );
    println!(
        "no mask: k {} conf {:.2} scores {:.2?}",
        f.k, f.confidence, f.scores
    );
}

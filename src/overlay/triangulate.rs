//! Ear clipping for filling outlines that are not convex (bases with their guides, bank
//! templates, debris). egui fills only convex polygons itself; a concave one filled that way
//! spills over its notches.

/// Triangles (indices into `ring`) covering a simple polygon given in either orientation.
/// Collinear and repeated points are skipped. A ring that is not simple still gets triangles
/// (a fan of what is left) rather than an endless loop.
pub fn triangulate(ring: &[[f64; 2]]) -> Vec<[usize; 3]> {
    let n = ring.len();
    if n < 3 {
        return Vec::new();
    }
    let area2: f64 = (0..n)
        .map(|i| {
            let (a, b) = (ring[i], ring[(i + 1) % n]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum();
    let mut idx: Vec<usize> = if area2 >= 0.0 {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    };
    let scale = ring
        .iter()
        .flat_map(|p| [p[0].abs(), p[1].abs()])
        .fold(1.0, f64::max);
    let eps = 1e-12 * scale * scale;
    let cross = |a: [f64; 2], b: [f64; 2], c: [f64; 2]| {
        (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    };
    let mut out = Vec::with_capacity(n - 2);
    let mut misses = 0;
    let mut i = 0;
    while idx.len() > 3 {
        let m = idx.len();
        let (ia, ib, ic) = (idx[(i + m - 1) % m], idx[i % m], idx[(i + 1) % m]);
        let (a, b, c) = (ring[ia], ring[ib], ring[ic]);
        let turn = cross(a, b, c);
        if turn.abs() <= eps {
            // A point on a straight edge (or a repeat) adds no area.
            idx.remove(i % m);
            misses = 0;
            continue;
        }
        let is_ear = turn > 0.0
            && idx.iter().all(|&k| {
                if k == ia || k == ib || k == ic {
                    return true;
                }
                let p = ring[k];
                // Strictly inside (or on an edge) of abc means abc is not an ear.
                !(cross(a, b, p) >= 0.0 && cross(b, c, p) >= 0.0 && cross(c, a, p) >= 0.0)
            });
        if is_ear {
            out.push([ia, ib, ic]);
            idx.remove(i % m);
            misses = 0;
        } else {
            misses += 1;
            i += 1;
            if misses > m {
                // Not simple: fan the rest so something is drawn.
                for k in 1..m - 1 {
                    out.push([idx[0], idx[k], idx[k + 1]]);
                }
                return out;
            }
        }
        i %= idx.len().max(1);
    }
    if idx.len() == 3 && cross(ring[idx[0]], ring[idx[1]], ring[idx[2]]).abs() > eps {
        out.push([idx[0], idx[1], idx[2]]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(ring: &[[f64; 2]], tris: &[[usize; 3]]) -> f64 {
        tris.iter()
            .map(|t| {
                let (a, b, c) = (ring[t[0]], ring[t[1]], ring[t[2]]);
                ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])).abs() / 2.0
            })
            .sum()
    }

    fn shoelace(ring: &[[f64; 2]]) -> f64 {
        let n = ring.len();
        (0..n)
            .map(|i| {
                let (a, b) = (ring[i], ring[(i + 1) % n]);
                a[0] * b[1] - b[0] * a[1]
            })
            .sum::<f64>()
            .abs()
            / 2.0
    }

    #[test]
    fn concave_l_shape_is_covered_exactly() {
        let l = [
            [0.0, 0.0],
            [20.0, 0.0],
            [20.0, 10.0],
            [10.0, 10.0],
            [10.0, 20.0],
            [0.0, 20.0],
        ];
        let t = triangulate(&l);
        assert_eq!(t.len(), 4);
        assert!((area(&l, &t) - 300.0).abs() < 1e-9);
        let cw: Vec<[f64; 2]> = l.iter().rev().copied().collect();
        assert!((area(&cw, &triangulate(&cw)) - 300.0).abs() < 1e-9);
    }

    #[test]
    fn base_with_guides_collinear_points_and_all() {
        let t = crate::geometry::footprint::base(40.0, &crate::Models::builtin().bases.guides);
        let ring: Vec<[f64; 2]> = t.outline().iter().map(|p| [p.x, p.y]).collect();
        let tris = triangulate(&ring);
        assert!((area(&ring, &tris) - shoelace(&ring)).abs() < 1e-6);
    }

    #[test]
    fn too_few_points_give_nothing() {
        assert!(triangulate(&[[0.0, 0.0], [1.0, 1.0]]).is_empty());
        assert!(triangulate(&[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]).is_empty());
    }

    #[test]
    fn self_intersecting_ring_terminates() {
        let bow = [
            [0.0, 0.0],
            [10.0, 10.0],
            [10.0, 0.0],
            [0.0, 10.0],
            [5.0, 20.0],
        ];
        let _ = triangulate(&bow);
    }
}

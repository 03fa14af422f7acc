//! The separating-axis test (`contact::obb`) against brute force: overlap decided by vertices
//! inside the other box and edges crossing its faces; the depth against a dense sampling of
//! directions and against pushing the boxes apart; symmetry and invariance under a common rigid
//! motion.

use hydraulink::contact::obb::{box_box, box_plane, Feature, Obb};
use nalgebra::{Matrix3, Rotation3, Vector3};
use proptest::prelude::*;

type V = Vector3<f64>;

fn obb(c: [f64; 3], h: [f64; 3], angles: [f64; 3]) -> Obb<f64> {
    Obb {
        center: V::from(c),
        axes: *Rotation3::from_euler_angles(angles[0], angles[1], angles[2]).matrix(),
        half: V::from(h),
    }
}

/// Box coordinates of a global point.
fn local(b: &Obb<f64>, p: &V) -> V {
    b.axes.transpose() * (p - b.center)
}

fn inside(b: &Obb<f64>, p: &V) -> bool {
    let l = local(b, p);
    (0..3).all(|i| l[i].abs() < b.half[i])
}

/// The 12 edges of a box as segments.
fn edges(b: &Obb<f64>) -> Vec<(V, V)> {
    let mut out = Vec::new();
    for k in 0..8usize {
        for i in 0..3 {
            if k >> i & 1 == 0 {
                out.push((b.vertex(k), b.vertex(k | 1 << i)));
            }
        }
    }
    out
}

/// Segment p→q crosses a face of box b (a face rectangle hit strictly inside).
fn segment_hits_box_face(b: &Obb<f64>, p: &V, q: &V) -> bool {
    let (lp, lq) = (local(b, p), local(b, q));
    for i in 0..3 {
        for s in [-1.0, 1.0] {
            let plane = s * b.half[i];
            let (a, c) = (lp[i] - plane, lq[i] - plane);
            if a * c >= 0.0 {
                continue;
            }
            let t = a / (a - c);
            let x = lp + (lq - lp) * t;
            let (j, k) = ((i + 1) % 3, (i + 2) % 3);
            if x[j].abs() < b.half[j] && x[k].abs() < b.half[k] {
                return true;
            }
        }
    }
    false
}

/// Brute force: two boxes overlap iff a vertex of one is inside the other or an edge of one
/// crosses a face of the other.
fn brute_overlap(a: &Obb<f64>, b: &Obb<f64>) -> bool {
    (0..8).any(|k| inside(b, &a.vertex(k)) || inside(a, &b.vertex(k)))
        || edges(a).iter().any(|(p, q)| segment_hits_box_face(b, p, q))
        || edges(b).iter().any(|(p, q)| segment_hits_box_face(a, p, q))
}

/// Overlap of the projections on the unit direction l [m].
fn overlap_along(a: &Obb<f64>, b: &Obb<f64>, l: &V) -> f64 {
    a.radius(l) + b.radius(l) - (b.center - a.center).dot(l).abs()
}

/// `n` directions spread over the sphere (Fibonacci lattice).
fn directions(n: usize) -> Vec<V> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n)
        .map(|i| {
            let y = 1.0 - 2.0 * (i as f64 + 0.5) / n as f64;
            let r = (1.0 - y * y).sqrt();
            let th = golden * i as f64;
            V::new(r * th.cos(), y, r * th.sin())
        })
        .collect()
}

fn moved(b: &Obb<f64>, by: &V) -> Obb<f64> {
    Obb {
        center: b.center + by,
        ..*b
    }
}

fn arb_box() -> impl Strategy<Value = Obb<f64>> {
    (
        prop::array::uniform3(-0.8f64..0.8),
        prop::array::uniform3(0.05f64..0.8),
        prop::array::uniform3(-3.2f64..3.2),
    )
        .prop_map(|(c, h, a)| obb(c, h, a))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn overlap_matches_brute_force(a in arb_box(), b in arb_box()) {
        let sat = box_box(&a, &b);
        // exactly touching boxes are measure-zero; leave round-off-thin contacts out
        if let Some(k) = &sat {
            prop_assume!(k.depth > 1e-9);
        }
        prop_assert_eq!(sat.is_some(), brute_overlap(&a, &b));
    }

    #[test]
    fn depth_and_normal_are_the_least_separating_translation(a in arb_box(), b in arb_box()) {
        let Some(k) = box_box(&a, &b) else { return Ok(()) };
        prop_assume!(k.depth > 1e-6);
        prop_assert!((k.normal.norm() - 1.0).abs() < 1e-12);
        prop_assert!(k.normal.dot(&(b.center - a.center)) >= 0.0);
        // no sampled direction separates with less than d (the true depth is the least overlap
        // over all directions, reached on one of the 15 axes)
        for l in directions(2000) {
            prop_assert!(k.depth <= overlap_along(&a, &b, &l) + 1e-12);
        }
        // pushing B by d n (plus a hair) separates it; by a hair less than d it still overlaps
        let push = |t: f64| moved(&b, &(k.normal * t));
        prop_assert!(!brute_overlap(&a, &push(k.depth * (1.0 + 1e-6) + 1e-9)));
        prop_assert!(brute_overlap(&a, &push(k.depth * (1.0 - 1e-6))));
        // the contact point lies in both boxes grown by d
        for bx in [&a, &b] {
            let l = local(bx, &k.point);
            for i in 0..3 {
                prop_assert!(l[i].abs() <= bx.half[i] + k.depth + 1e-9, "{:?} {:?}", k, l);
            }
        }
    }

    #[test]
    fn swapping_the_boxes_flips_the_normal(a in arb_box(), b in arb_box()) {
        let (ab, ba) = (box_box(&a, &b), box_box(&b, &a));
        prop_assert_eq!(ab.is_some(), ba.is_some());
        if let (Some(x), Some(y)) = (ab, ba) {
            prop_assert!((x.depth - y.depth).abs() <= 1e-12 * (1.0 + x.depth));
            prop_assert!((x.normal + y.normal).norm() < 1e-9);
            prop_assert!((x.point - y.point).norm() < 1e-9, "{:?} {:?}", x, y);
        }
    }

    #[test]
    fn a_common_rigid_motion_moves_the_contact_with_it(
        a in arb_box(), b in arb_box(),
        angles in prop::array::uniform3(-3.2f64..3.2),
        shift in prop::array::uniform3(-5.0f64..5.0),
    ) {
        let r: Matrix3<f64> = *Rotation3::from_euler_angles(angles[0], angles[1], angles[2]).matrix();
        let t = V::from(shift);
        let mv = |x: &Obb<f64>| Obb { center: r * x.center + t, axes: r * x.axes, half: x.half };
        let (k0, k1) = (box_box(&a, &b), box_box(&mv(&a), &mv(&b)));
        if let Some(k) = &k0 {
            prop_assume!(k.depth > 1e-9);
        }
        prop_assert_eq!(k0.is_some(), k1.is_some());
        if let (Some(x), Some(y)) = (k0, k1) {
            prop_assert!((x.depth - y.depth).abs() <= 1e-12 * (1.0 + x.depth));
            prop_assert!((r * x.normal - y.normal).norm() < 1e-9);
            prop_assert!((r * x.point + t - y.point).norm() < 1e-9);
        }
    }

    #[test]
    fn plane_depth_is_the_deepest_vertex(b in arb_box(), n in prop::array::uniform3(-1.0f64..1.0), h in -0.5f64..0.5) {
        let n = V::from(n);
        prop_assume!(n.norm() > 0.1);
        let n = n / n.norm();
        let p0 = n * h;
        let deepest = (0..8).map(|k| n.dot(&(p0 - b.vertex(k)))).fold(f64::MIN, f64::max);
        match box_plane(&b, &p0, &n) {
            None => prop_assert!(deepest <= 1e-12),
            Some(k) => {
                prop_assert!((k.depth - deepest).abs() < 1e-12);
                prop_assert_eq!(k.normal, n);
                // the point sits half the depth above the deepest vertex
                prop_assert!((n.dot(&(p0 - k.point)) - 0.5 * k.depth).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn parallel_boxes_skip_the_edge_axes_and_stay_finite() {
    // same orientation: all nine a_i × b_j are zero or face normals
    let a = obb([0.0; 3], [1.0, 0.5, 0.5], [0.2, 0.3, 0.1]);
    let b = Obb {
        center: a.center + a.axes * V::new(0.0, 0.9, 0.1),
        ..a
    };
    let k = box_box(&a, &b).expect("they overlap by 0.1 along a_2");
    assert!(matches!(k.feature, Feature::FaceA(1)), "{k:?}");
    assert!((k.depth - 0.1).abs() < 1e-12, "{k:?}");
    assert!((k.normal - a.axes.column(1)).norm() < 1e-12);
    assert!(k.point.iter().all(|x| x.is_finite()));
}

#[test]
fn crossed_edges_give_an_edge_contact_at_their_closest_points() {
    // two long bars crossed at right angles, edge on edge: A's top edge along x, B's bottom
    // edge along z, both turned 45° about their long axes
    let q = std::f64::consts::FRAC_PI_4;
    let a = obb([0.0, 0.0, 0.0], [2.0, 0.1, 0.1], [q, 0.0, 0.0]);
    let b = obb([0.0, 0.28, 0.0], [0.1, 0.1, 2.0], [0.0, 0.0, q]);
    let k = box_box(&a, &b).expect("the edges interpenetrate");
    assert!(matches!(k.feature, Feature::Edges(0, 2)), "{k:?}");
    let reach = 0.1 * 2f64.sqrt();
    assert!((k.depth - (2.0 * reach - 0.28)).abs() < 1e-12, "{k:?}");
    assert!((k.normal - V::y()).norm() < 1e-12);
    assert!((k.point - V::new(0.0, 0.14, 0.0)).norm() < 1e-12, "{k:?}");
}

//! Oriented bounding boxes and the separating-axis test (003 Publications IV–V: the bucket, the
//! boom and the obstacles are OBBs, collided by the separating-axis theorem with 15 axes, and a
//! contact pushes them apart by a penalty force).
//!
//! ```text
//!        A (obstacle)                 B (body)          T = c_B − c_A
//!     ┌───────────┐               ╱╲                     L: a candidate axis (unit)
//!     │     c_A ──┼── T ──▶  c_B ╱  ╲                    r_A(L) = Σ_i h_Ai |a_i·L|
//!     │           │  ◀─ d ─▶    ╲  ╱                     r_B(L) = Σ_j h_Bj |b_j·L|
//!     └───────────┘              ╲╱                      o(L) = r_A(L) + r_B(L) − |T·L|
//! ```
//! Two boxes are disjoint iff some axis L separates their projections, o(L) ≤ 0. For two boxes
//! it suffices to try 15 axes: the 3 face normals a_i of A, the 3 face normals b_j of B and the
//! 9 edge directions a_i × b_j (normalized). An edge axis with |a_i × b_j| < [`PARALLEL_SIN`]
//! (parallel edges) is skipped: its separating plane is then also one of the face axes. When no
//! axis separates, the penetration depth is d = min_L o(L) over the 15 axes, the normal n is
//! the minimizing axis oriented from A to B (n·T ≥ 0: the direction that pushes B out of A),
//! and the contact point is
//!
//! * a face of A: the deepest vertex of B (its support point along −n), moved by d/2 along n;
//! * a face of B: the deepest vertex of A (its support point along +n), moved by d/2 along −n;
//! * an edge pair: the midpoint of the closest points of the two support edges (as lines).
//!
//! A vertex tied in depth within [`TIE`] of the box size (a face or edge lying flat) is replaced
//! by the centre of the tied face or edge. With these points the force K d n is the gradient of
//! the penalty energy ½ K d² (docs/theory/12_contact.md §12.2): its line of action passes
//! through the point whose depth defines d, so the contact conserves energy up to the damping.
//!
//! Everything is scalar-generic (`f64`, or `Dual64` for the exact tangent); every branch (the
//! axis, a sign, a tie) is decided on real parts, so the residual and its tangent agree.

use nalgebra::{Matrix3, Vector3};

use crate::solver::real::{c, re, Real};

/// |a_i × b_j| below which two edges count as parallel and their axis is skipped [-].
pub const PARALLEL_SIN: f64 = 1e-6;

/// Relative tolerance, times the boxes' size, within which two vertices tie in depth and an
/// edge axis must beat a face axis [-].
pub const TIE: f64 = 1e-9;

/// An oriented box: centre, unit axes (the columns of a rotation) and half extents.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Obb<S: Real> {
    /// Centre c, global [m].
    pub center: Vector3<S>,
    /// Unit axes a_1, a_2, a_3 as columns, global [-] (a rotation matrix).
    pub axes: Matrix3<S>,
    /// Half extents h_1, h_2, h_3 along the axes [m], > 0.
    pub half: Vector3<f64>,
}

/// Which axis gave the contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Face normal a_i of the first box.
    FaceA(usize),
    /// Face normal b_j of the second box.
    FaceB(usize),
    /// Edge pair a_i × b_j.
    Edges(usize, usize),
    /// The plane of [`box_plane`].
    Plane,
}

/// A contact between two shapes (the first is A, the second B).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact<S: Real> {
    /// Penetration depth d > 0 [m].
    pub depth: S,
    /// Unit normal n, from A to B: moving B by d n ends the overlap [-].
    pub normal: Vector3<S>,
    /// Contact point, global [m] (where the force acts).
    pub point: Vector3<S>,
    /// The axis that gave it.
    pub feature: Feature,
}

/// |x|, with the sign decided on the real part.
#[inline]
fn abs<S: Real>(x: S) -> S {
    if re(x) < 0.0 {
        -x
    } else {
        x
    }
}

/// Sign of x ∈ {−1, 0, 1}, decided on the real part; 0 within `tol`.
#[inline]
fn sign(x: f64, tol: f64) -> f64 {
    if x > tol {
        1.0
    } else if x < -tol {
        -1.0
    } else {
        0.0
    }
}

impl<S: Real> Obb<S> {
    /// Axis i (a column of `axes`).
    #[inline]
    pub fn axis(&self, i: usize) -> Vector3<S> {
        self.axes.column(i).into_owned()
    }

    /// Projection radius r(L) = Σ_i h_i |a_i·L| on an axis L [m].
    #[inline]
    pub fn radius(&self, l: &Vector3<S>) -> S {
        (0..3).fold(S::zero(), |r, i| {
            r + abs(self.axis(i).dot(l)) * c::<S>(self.half[i])
        })
    }

    /// Vertex k ∈ 0..8: c + Σ_i ±h_i a_i, with bit i of k choosing + [m].
    pub fn vertex(&self, k: usize) -> Vector3<S> {
        let mut v = self.center;
        for i in 0..3 {
            let s = if k >> i & 1 == 1 { 1.0 } else { -1.0 };
            v += self.axis(i) * c::<S>(s * self.half[i]);
        }
        v
    }

    /// The support point along `dir` (the point of the box farthest along it); where an axis is
    /// perpendicular to `dir` within the tie tolerance, the centre of the tied face or edge.
    /// The axis `skip`, if any, is left at the centre (an edge's own direction).
    pub fn support(&self, dir: &Vector3<S>, skip: Option<usize>) -> Vector3<S> {
        let tol = TIE * self.size();
        let mut v = self.center;
        for i in 0..3 {
            if skip == Some(i) {
                continue;
            }
            let s = sign(re(self.axis(i).dot(dir)) * self.half[i], tol);
            v += self.axis(i) * c::<S>(s * self.half[i]);
        }
        v
    }

    /// A size of the box, h_1 + h_2 + h_3 [m] (scales the tolerances).
    #[inline]
    pub fn size(&self) -> f64 {
        self.half.x + self.half.y + self.half.z
    }
}

/// The separating-axis test of boxes `a` and `b` (15 axes): `None` when some axis separates
/// them (touching counts as separated), else the contact of least depth (module doc).
pub fn box_box<S: Real>(a: &Obb<S>, b: &Obb<S>) -> Option<Contact<S>> {
    let t = b.center - a.center;
    let tol = TIE * (a.size() + b.size());
    // the axis of least overlap: (overlap, unit axis, feature)
    let mut best: Option<(S, Vector3<S>, Feature)> = None;
    // face axes: strictly smaller wins (A's first)
    for (box_i, bx) in [a, b].into_iter().enumerate() {
        for i in 0..3 {
            let l = bx.axis(i);
            let o = a.radius(&l) + b.radius(&l) - abs(t.dot(&l));
            if re(o) <= 0.0 {
                return None;
            }
            if best.is_none_or(|(ob, _, _)| re(o) < re(ob)) {
                let f = if box_i == 0 {
                    Feature::FaceA(i)
                } else {
                    Feature::FaceB(i)
                };
                best = Some((o, l, f));
            }
        }
    }
    // edge axes: a_i × b_j, skipped when the edges are parallel; they must beat the faces by
    // the tie tolerance, so a face contact stays a face contact where the two agree
    for i in 0..3 {
        for j in 0..3 {
            let l = a.axis(i).cross(&b.axis(j));
            let n2 = l.dot(&l);
            if re(n2) < PARALLEL_SIN * PARALLEL_SIN {
                continue;
            }
            let l = l / n2.sqrt();
            let o = a.radius(&l) + b.radius(&l) - abs(t.dot(&l));
            if re(o) <= 0.0 {
                return None;
            }
            if best.is_none_or(|(ob, _, _)| re(o) < re(ob) - tol) {
                best = Some((o, l, Feature::Edges(i, j)));
            }
        }
    }
    let (d, l, feature) = best.expect("the six face axes always give a candidate");
    // orient from A to B
    let n = if re(t.dot(&l)) < 0.0 { -l } else { l };
    let half = d * c::<S>(0.5);
    let point = match feature {
        Feature::FaceA(_) => b.support(&(-n), None) + n * half,
        Feature::FaceB(_) => a.support(&n, None) - n * half,
        Feature::Edges(i, j) => {
            // the support edges: A's along +n, B's along −n, as lines p + s e
            let (pa, ea) = (a.support(&n, Some(i)), a.axis(i));
            let (pb, eb) = (b.support(&(-n), Some(j)), b.axis(j));
            let w = pa - pb;
            let (k, da, db) = (ea.dot(&eb), ea.dot(&w), eb.dot(&w));
            // 1 − k² ≥ PARALLEL_SIN² > 0: the axis was not skipped
            let den = S::one() - k * k;
            let s = (k * db - da) / den;
            let u = (db - k * da) / den;
            (pa + ea * s + pb + eb * u) * c::<S>(0.5)
        }
        Feature::Plane => unreachable!("box_box gives no plane feature"),
    };
    Some(Contact {
        depth: d,
        normal: n,
        point,
        feature,
    })
}

/// Box `b` against the half-space {x : n·(x − p₀) ≤ 0} below the plane through `p0` [m] with
/// unit outward normal `normal`: d = n·(p₀ − c_B) + r_B(n) (the depth of the deepest vertex),
/// the contact point at that vertex moved by d/2 along n (a tied face or edge: its centre).
/// `None` when d ≤ 0.
pub fn box_plane<S: Real>(
    b: &Obb<S>,
    p0: &Vector3<f64>,
    normal: &Vector3<f64>,
) -> Option<Contact<S>> {
    let n = crate::solver::real::v3::<S>(normal);
    let d = n.dot(&(crate::solver::real::v3::<S>(p0) - b.center)) + b.radius(&n);
    if re(d) <= 0.0 {
        return None;
    }
    Some(Contact {
        depth: d,
        normal: n,
        point: b.support(&(-n), None) + n * (d * c::<S>(0.5)),
        feature: Feature::Plane,
    })
}

/// Largest number of points of a [`Manifold`]: a quadrilateral clipped by four planes.
pub const MAX_MANIFOLD: usize = 8;

/// The contact points of two overlapping boxes ([`manifold`]), each with its own depth along
/// the common normal of the [`Contact`] it was built from.
#[derive(Debug, Clone, Copy)]
pub struct Manifold<S: Real> {
    /// Number of points in use.
    pub n: usize,
    /// The points, global [m] (the first `n`).
    pub points: [Vector3<S>; MAX_MANIFOLD],
    /// Depth d_i > 0 of each point below the reference face, along the normal [m].
    pub depths: [S; MAX_MANIFOLD],
}

/// The contact points of the overlapping boxes `a` and `b` whose separating-axis contact is `k`
/// (from [`box_box`]), in the manner of a reference-face clip (Gottschalk's OBB tree test gives
/// the normal; the points follow the face clipping of Bullet's and ODE's box–box routines):
///
/// * a face axis (of A, or of B): the face of that box along the normal is the reference face;
///   the other box's face most opposed to it (the incident face) is clipped against the four
///   side planes of the reference face (Sutherland–Hodgman, at most 8 points), and every
///   clipped point below the reference face is a point, with its depth
///   d_i = h_r − n_r·(x_i − c_r) (h_r the reference box's half extent along its outward face
///   normal n_r);
/// * an edge pair: the single point and depth of `k` (two crossing edges touch at one point).
///
/// The deepest point's depth is `k.depth` where the incident face holds the deepest vertex. The
/// branches (incident face, clip sides) are decided on real parts.
pub fn manifold<S: Real>(a: &Obb<S>, b: &Obb<S>, k: &Contact<S>) -> Manifold<S> {
    let mut out = Manifold {
        n: 0,
        points: [Vector3::zeros(); MAX_MANIFOLD],
        depths: [S::zero(); MAX_MANIFOLD],
    };
    // the reference box, its face axis and outward normal n_r; the incident box
    let (rf, i, inc, nr) = match k.feature {
        Feature::FaceA(i) => (a, i, b, k.normal),
        Feature::FaceB(j) => (b, j, a, -k.normal),
        Feature::Edges(..) | Feature::Plane => {
            out.n = 1;
            out.points[0] = k.point;
            out.depths[0] = k.depth;
            return out;
        }
    };
    // the incident face: the face of `inc` whose outward normal is most opposed to n_r
    let mut f = 0;
    let mut best = -1.0;
    for m in 0..3 {
        let x = re(inc.axis(m).dot(&nr)).abs();
        if x > best {
            best = x;
            f = m;
        }
    }
    let s = if re(inc.axis(f).dot(&nr)) > 0.0 {
        -1.0
    } else {
        1.0
    };
    let (u, v) = ((f + 1) % 3, (f + 2) % 3);
    let fc = inc.center + inc.axis(f) * c::<S>(s * inc.half[f]);
    let (eu, ev) = (
        inc.axis(u) * c::<S>(inc.half[u]),
        inc.axis(v) * c::<S>(inc.half[v]),
    );
    let mut poly = [Vector3::<S>::zeros(); MAX_MANIFOLD];
    let mut tmp = [Vector3::<S>::zeros(); MAX_MANIFOLD];
    poly[0] = fc + eu + ev;
    poly[1] = fc - eu + ev;
    poly[2] = fc - eu - ev;
    poly[3] = fc + eu - ev;
    let mut n = 4;
    // clip against the reference face's side planes ±a_m·(x − c_r) ≤ h_m, m ≠ i
    for m in [(i + 1) % 3, (i + 2) % 3] {
        for sign in [1.0, -1.0] {
            let l = rf.axis(m) * c::<S>(sign);
            let h = rf.half[m];
            // signed distance outside the side plane (> 0 outside)
            let dist = |x: &Vector3<S>| l.dot(&(x - rf.center)) - c::<S>(h);
            let mut kept = 0;
            for j in 0..n {
                let (p, q) = (poly[j], poly[(j + 1) % n]);
                let (dp, dq) = (dist(&p), dist(&q));
                let (inp, inq) = (re(dp) <= 0.0, re(dq) <= 0.0);
                if inp {
                    tmp[kept] = p;
                    kept += 1;
                }
                if inp != inq && kept < MAX_MANIFOLD {
                    // the crossing of the edge p → q with the plane
                    let t = dp / (dp - dq);
                    tmp[kept] = p + (q - p) * t;
                    kept += 1;
                }
            }
            n = kept;
            poly[..n].copy_from_slice(&tmp[..n]);
            if n == 0 {
                return out;
            }
        }
    }
    // the clipped points below the reference face
    let h = c::<S>(rf.half[i]);
    for x in &poly[..n] {
        let d = h - nr.dot(&(x - rf.center));
        if re(d) > 0.0 {
            out.points[out.n] = *x;
            out.depths[out.n] = d;
            out.n += 1;
        }
    }
    out
}

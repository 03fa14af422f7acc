//! Conversion of the joint tree into natural coordinates (points and unit vectors) with rigid-body
//! and joint constraints (004 §2, reference note 000_004 004-A.2).
//!
//! # Coordinates
//! Every elementary joint axis k of the model (every `Frame::Link(k)`) becomes one natural
//! frame. Two layouts ([`Layout`]):
//!
//! * **Spatial** (any mechanism): the classic fully Cartesian set of García de Jalón, a basic
//!   point and three unit vectors, 12 coordinates,
//!   ```text
//!   q_k = [ r_k ; u_k ; v_k ; w_k ],   r_k = x_k + A_k c̄_k,   [u_k v_k w_k] = A_k
//!   ```
//!   where (A_k, x_k) is the link pose of `Kinematics` and c̄_k is the axis point in the
//!   reference configuration.
//! * **Planar** (every revolute axis parallel to one normal n, every prismatic axis normal to
//!   it; chosen automatically, `solver.natural_frames = "auto"`): the frames move in the plane
//!   ⊥ n, and each one needs only its basic point and one unit vector in that plane, 4
//!   coordinates in the in-plane basis (e₁, e₂ = n × e₁),
//!   ```text
//!   q_k = [ r_k·e₁ ; r_k·e₂ ; u_k·e₁ ; u_k·e₂ ],   u_k = A_k e₁
//!   ```
//!   The second in-plane unit vector is u_k rotated by 90° about n, linear in q_k, and the n
//!   components of all points and directions are constants. This is the planar natural
//!   coordinates of 004 §2 (its rod example uses points only); with 4 instead of 12 coordinates
//!   per frame the systems of the 000 cases shrink from 39–65 to 15–23 unknowns.
//!
//! In both layouts a point with reference coordinates p̄ on frame k and a direction d̄ are
//! constant linear (affine) maps of q_k,
//!
//! ```text
//! p = C(a) q_k + (p̄·n) n,   a = p̄ − c̄_k          d = (C(d̄) − C(0)) q_k + (d̄·n) n
//! ```
//! with C(a) = [I₃, a_x I₃, a_y I₃, a_z I₃] (spatial, no n term) or, planar,
//! C(a) = [e₁, e₂, a₁e₁ + a₂e₂, a₁e₂ − a₂e₁] (a_i = a·e_i). [`Lin`] stores the nonzero
//! columns of that map. Frames of multi-axis joints that carry no body are massless; their
//! coordinates are fixed by the joint constraints through the penalty term (004 §2: a singular
//! M is handled by Φ_qᵀ α Φ_q). The ground is not a frame: its points are constants.
//!
//! # Mass matrix (constant)
//! C(a) is affine in a: C(a) = C(0) + Σ_i a_i C_i. For a body with mass m, COM offset
//! d = ḡ − c̄ and central inertia J̄,
//!
//! ```text
//! M_k = Σ_bodies ∫ρ C(a)ᵀ C(a) dV = Σ_bodies [ m C(d)ᵀ C(d) + Σ_ij S_ij C_iᵀ C_j ],
//! S = ½ tr(J̄) I − J̄
//! ```
//! (S the central second moment of mass). In the spatial layout this is M4_k ⊗ I₃ with
//! M4 = [[m, m dᵀ], [m d, m d dᵀ + S]]; in the planar one the rotational entry is
//! S₁₁ + S₂₂ = J̄_nn. Gravity gives the constant generalized force Q_g = m C(d)ᵀ g.
//!
//! # Constraints
//! Every scalar equation has the form Φ = A·B − k with A, B differences of [`Lin`] expressions
//! (so Φ is at most quadratic in q, Φ_q is linear and the Hessian constant):
//!
//! | source | equations |
//! |---|---|
//! | rigid body, per frame | spatial: u·u − 1, v·v − 1, w·w − 1, u·v, v·w, w·u; planar: u·u − 1 |
//! | revolute axis (c̄, ū) | p_K(c̄) − p_P(c̄) = 0 (3), d_K(ū)·d_P(ē_i) = 0 (2) |
//! | prismatic axis ū | d_K(ū)·d_P(ē_i) = 0 (2), d_K(ē₁)·d_P(ē₂) = 0 (1), d_P(ē_i)·(p_K(c̄) − p_P(c̄)) = 0 (2) |
//! | cut joint `PointDot` | e·(r₁ − r₂) |
//! | cut joint `DirDot` | e₁·e₂ |
//!
//! (ē₁, ē₂ ⊥ ū in the reference configuration.) In the planar layout the equations that the
//! parametrization satisfies identically (the n component of a point coincidence, the
//! parallelism of revolute axes, a cut-joint row along n: zero Hessian and zero gradient) are
//! dropped, which leaves 2 equations per revolute and 2 per prismatic axis. The tree-joint and
//! rigid-body equations are independent: redundant ones are harmless for the penalty term
//! itself (004 §2), but the iterated multipliers would drift in the null space of Φ_qᵀ, where
//! they still act through the constraint Hessian, and spoil Newton's convergence. (Cut joints
//! are taken as the model gives them.) With Φ = A·B − k:
//! Φ_q = Bᵀ A_q + Aᵀ B_q, Φ̇_q q̇ = 2 Ȧ·Ḃ and the constant Hessian H = A_qᵀ B_q + B_qᵀ A_q
//! ([`NatEq::hessian`], assembled once).

use std::collections::BTreeMap;

use nalgebra::{Matrix3, Vector3};

use crate::mechanics::kinematics::Kinematics;
use crate::model::spec::NaturalFrames;
use crate::model::{AxisKind, ConstraintEq, Frame, FrameDir, FramePoint, Model, V3};
use crate::real::{v3, Real};

/// Coordinates per natural frame in the spatial layout (the most a frame can have).
pub const NQ_FRAME: usize = 12;

/// Coordinates per natural frame in the planar layout.
pub const NQ_FRAME_PLANAR: usize = 4;

/// The natural-coordinate layout of a model's frames.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Layout {
    /// r, u, v, w: 12 coordinates per frame.
    #[default]
    Spatial,
    /// Plane motion ⊥ `n`: r and u in the in-plane basis (`e1`, `e2` = n × e₁), 4 coordinates
    /// per frame.
    Planar {
        /// Unit normal of the plane of motion (the common revolute axis).
        n: V3,
        /// First in-plane basis vector.
        e1: V3,
        /// Second in-plane basis vector, n × e₁.
        e2: V3,
    },
}

impl Layout {
    /// The planar layout if every revolute axis of `model` is parallel to one normal n and
    /// every prismatic axis is normal to it (at least one revolute axis), else spatial.
    pub fn detect(model: &Model) -> Self {
        let Some(n) = model
            .axes
            .iter()
            .find(|a| a.kind == AxisKind::Revolute)
            .map(|a| a.dir_ref.normalize())
        else {
            return Layout::Spatial;
        };
        const TOL: f64 = 1e-12;
        let planar = model.axes.iter().all(|a| {
            let d = a.dir_ref.normalize();
            match a.kind {
                AxisKind::Revolute => d.cross(&n).norm() <= TOL,
                AxisKind::Prismatic => d.dot(&n).abs() <= TOL,
            }
        });
        if !planar {
            return Layout::Spatial;
        }
        // e₁: the world axis most normal to n (x for a plane ⊥ z), made exactly normal
        let t = [V3::x(), V3::y(), V3::z()]
            .into_iter()
            .min_by(|a, b| a.dot(&n).abs().total_cmp(&b.dot(&n).abs()))
            .expect("three candidates");
        let e1 = (t - n * t.dot(&n)).normalize();
        let e2 = n.cross(&e1);
        Layout::Planar { n, e1, e2 }
    }

    /// Coordinates per frame.
    pub fn nq_frame(&self) -> usize {
        match self {
            Layout::Spatial => NQ_FRAME,
            Layout::Planar { .. } => NQ_FRAME_PLANAR,
        }
    }

    /// Columns of the map C(a) of a point at offset `a` = p̄ − c̄ from the frame's reference
    /// point (`with_origin`), or of the direction map C(a) − C(0) (not `with_origin`), into
    /// `out[..nq_frame]`.
    fn columns(&self, a: &V3, with_origin: bool, out: &mut [V3; NQ_FRAME]) {
        let o = if with_origin { 1.0 } else { 0.0 };
        match self {
            Layout::Spatial => {
                for i in 0..3 {
                    out[i] = V3::ith(i, o);
                    for j in 0..3 {
                        out[3 * (j + 1) + i] = V3::ith(i, a[j]);
                    }
                }
            }
            Layout::Planar { e1, e2, .. } => {
                let (a1, a2) = (a.dot(e1), a.dot(e2));
                out[0] = e1 * o;
                out[1] = e2 * o;
                out[2] = e1 * a1 + e2 * a2;
                out[3] = e2 * a1 - e1 * a2;
            }
        }
    }

    /// Constant part of a point or direction with reference vector `v`: its n component in
    /// the planar layout, zero in the spatial one.
    fn konst(&self, v: &V3) -> V3 {
        match self {
            Layout::Spatial => V3::zeros(),
            Layout::Planar { n, .. } => n * v.dot(n),
        }
    }

    /// A short name of a basis vector for labels: `x`, `-y`, … or `fallback`.
    fn name_of(v: &V3, fallback: &'static str) -> String {
        for (i, c) in ["x", "y", "z"].iter().enumerate() {
            if (v - V3::ith(i, 1.0)).norm() < 1e-12 {
                return (*c).to_string();
            }
            if (v + V3::ith(i, 1.0)).norm() < 1e-12 {
                return format!("-{c}");
            }
        }
        fallback.to_string()
    }
}

/// A vector that is a constant linear combination of one frame's coordinates plus a constant:
/// `konst + Σ_j cols[j] q[idx[j]]` (the nonzero columns only).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lin {
    /// The natural frame, `None` for the ground (then only `konst` counts).
    pub frame: Option<usize>,
    /// Number of nonzero columns.
    pub n: usize,
    /// Coordinate index of every column.
    pub idx: [usize; NQ_FRAME],
    /// Columns ∂value/∂q_idx [-, m].
    pub cols: [V3; NQ_FRAME],
    /// Constant part [m or -].
    pub konst: V3,
}

impl Lin {
    /// A constant vector.
    pub fn constant(k: V3) -> Self {
        Lin {
            frame: None,
            n: 0,
            idx: [0; NQ_FRAME],
            cols: [V3::zeros(); NQ_FRAME],
            konst: k,
        }
    }

    /// `konst + Σ cols[j] q[offset + j]` over the nonzero entries of `cols[..ncols]`.
    fn of_columns(frame: usize, offset: usize, cols: &[V3], konst: V3) -> Self {
        let mut l = Lin::constant(konst);
        l.frame = Some(frame);
        for (j, c) in cols.iter().enumerate() {
            if c.norm_squared() != 0.0 {
                l.idx[l.n] = offset + j;
                l.cols[l.n] = *c;
                l.n += 1;
            }
        }
        l
    }

    /// Value at q.
    #[inline]
    pub fn eval<S: Real>(&self, q: &[S]) -> Vector3<S> {
        let mut out = v3::<S>(&self.konst);
        for (&i, c) in self.idx[..self.n].iter().zip(self.cols[..self.n].iter()) {
            let x = q[i];
            out += Vector3::new(x * c.x, x * c.y, x * c.z);
        }
        out
    }

    /// Rate (or second rate) at q̇ (or q̈): the constant drops out.
    #[inline]
    pub fn rate<S: Real>(&self, qd: &[S]) -> Vector3<S> {
        let mut out = Vector3::zeros();
        for (&i, c) in self.idx[..self.n].iter().zip(self.cols[..self.n].iter()) {
            let x = qd[i];
            out += Vector3::new(x * c.x, x * c.y, x * c.z);
        }
        out
    }

    /// `out += sign · (∂self/∂q)ᵀ g`.
    #[inline]
    pub fn add_grad<S: Real>(&self, sign: f64, g: &Vector3<S>, out: &mut [S]) {
        for (&i, c) in self.idx[..self.n].iter().zip(self.cols[..self.n].iter()) {
            out[i] += (g.x * c.x + g.y * c.y + g.z * c.z) * sign;
        }
    }

    /// The nonzero columns (coordinate index, ∂value/∂q_index).
    pub fn columns(&self) -> impl Iterator<Item = (usize, &V3)> {
        self.idx[..self.n]
            .iter()
            .copied()
            .zip(self.cols[..self.n].iter())
    }
}

/// A − B of two [`Lin`] (B optional).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Diff {
    /// Minuend.
    pub a: Lin,
    /// Subtrahend.
    pub b: Option<Lin>,
}

impl Diff {
    fn one(a: Lin) -> Self {
        Diff { a, b: None }
    }
    fn two(a: Lin, b: Lin) -> Self {
        Diff { a, b: Some(b) }
    }
    /// Value at q.
    #[inline]
    pub fn eval<S: Real>(&self, q: &[S]) -> Vector3<S> {
        match &self.b {
            Some(b) => self.a.eval(q) - b.eval(q),
            None => self.a.eval(q),
        }
    }
    /// Rate at q̇.
    #[inline]
    pub fn rate<S: Real>(&self, qd: &[S]) -> Vector3<S> {
        match &self.b {
            Some(b) => self.a.rate(qd) - b.rate(qd),
            None => self.a.rate(qd),
        }
    }
    /// `out += (∂self/∂q)ᵀ g`.
    #[inline]
    pub fn add_grad<S: Real>(&self, g: &Vector3<S>, out: &mut [S]) {
        self.a.add_grad(1.0, g, out);
        if let Some(b) = &self.b {
            b.add_grad(-1.0, g, out);
        }
    }
    /// The columns of ∂self/∂q with their signs (an index may repeat).
    fn signed_columns(&self) -> impl Iterator<Item = (usize, V3)> + '_ {
        let a = self.a.columns().map(|(i, c)| (i, *c));
        let b = self
            .b
            .iter()
            .flat_map(|b| b.columns().map(|(i, c)| (i, -*c)));
        a.chain(b)
    }
}

/// One scalar constraint Φ = A·B − k.
#[derive(Debug, Clone)]
pub struct NatEq {
    /// Label, e.g. `z1.rigid.uu`, `z2.point.x`, `E.x`.
    pub name: String,
    /// A.
    pub a: Diff,
    /// B.
    pub b: Diff,
    /// k.
    pub k: f64,
    /// The coordinates Φ_q can be nonzero in (sorted, unique).
    pub pattern: Vec<usize>,
    /// The constant Hessian H = A_qᵀ B_q + B_qᵀ A_q as (row, column, value), both triangles,
    /// exact zeros left out.
    pub hessian: Vec<(usize, usize, f64)>,
}

impl NatEq {
    fn new(name: String, a: Diff, b: Diff, k: f64) -> Self {
        let mut pattern: Vec<usize> = a
            .signed_columns()
            .chain(b.signed_columns())
            .map(|(i, _)| i)
            .collect();
        pattern.sort_unstable();
        pattern.dedup();
        let mut h: BTreeMap<(usize, usize), f64> = BTreeMap::new();
        for (i, ca) in a.signed_columns() {
            for (j, cb) in b.signed_columns() {
                let v = ca.dot(&cb);
                *h.entry((i, j)).or_insert(0.0) += v;
                *h.entry((j, i)).or_insert(0.0) += v;
            }
        }
        let hessian = h
            .into_iter()
            .filter(|(_, v)| *v != 0.0)
            .map(|((i, j), v)| (i, j, v))
            .collect();
        NatEq {
            name,
            a,
            b,
            k,
            pattern,
            hessian,
        }
    }

    /// Φ at q.
    #[inline]
    pub fn phi<S: Real>(&self, q: &[S]) -> S {
        self.a.eval(q).dot(&self.b.eval(q)) - S::from(self.k)
    }

    /// Φ̇_q q̇ = 2 Ȧ·Ḃ (the velocity-product term of Φ̈).
    #[inline]
    pub fn acc0<S: Real>(&self, qd: &[S]) -> S {
        self.a.rate(qd).dot(&self.b.rate(qd)) * 2.0
    }

    /// `out += (Φ_q)ᵀ g` for a scalar g = ∂(·)/∂Φ.
    #[inline]
    pub fn add_grad<S: Real>(&self, q: &[S], g: S, out: &mut [S]) {
        let (av, bv) = (self.a.eval(q), self.b.eval(q));
        self.a.add_grad(&(bv * g), out);
        self.b.add_grad(&(av * g), out);
    }
}

/// A cylinder's pins as linear expressions.
#[derive(Debug, Clone, Copy)]
pub struct NatCylinder {
    /// Barrel pin.
    pub base: Lin,
    /// Rod pin.
    pub rod: Lin,
}

/// The natural-coordinate model derived from a [`Model`] (immutable after construction).
#[derive(Debug, Clone, Default)]
pub struct NaturalModel {
    /// The layout (spatial or planar).
    pub layout: Layout,
    /// Coordinates per frame: 12 (spatial) or 4 (planar).
    pub nq_frame: usize,
    /// Number of natural frames (= number of axes).
    pub n_frames: usize,
    /// Number of natural coordinates, `nq_frame` per frame.
    pub nq: usize,
    /// Reference point c̄_k of every frame [m].
    pub origin_ref: Vec<V3>,
    /// M_k per frame, row-major `nq_frame × nq_frame` [kg, kg m, kg m²].
    pub mass: Vec<Vec<f64>>,
    /// Constant gravity generalized force Q_g (nq) [N, N m].
    pub gravity_force: Vec<f64>,
    /// Constraints: rigid-body, tree joints, then cut joints.
    pub eqs: Vec<NatEq>,
    /// Cylinder pins.
    pub cylinders: Vec<NatCylinder>,
    /// Body COMs (for the potential energy).
    pub com: Vec<Lin>,
    /// Labels of the coordinates, `<axis>.r.x`, `<axis>.u.y`, ….
    pub labels: Vec<String>,
}

/// Two unit vectors perpendicular to `u` and to each other.
fn perpendiculars(u: &V3) -> [V3; 2] {
    let t = if u.x.abs() < 0.9 { V3::x() } else { V3::y() };
    let e1 = u.cross(&t).normalize();
    let e2 = u.cross(&e1);
    [e1, e2]
}

impl NaturalModel {
    /// Builds the natural-coordinate model of `model` in the layout that
    /// `model.solver.natural_frames` selects (allocates; not in the step).
    pub fn new(model: &Model) -> Self {
        let layout = match model.solver.natural_frames {
            NaturalFrames::Auto => Layout::detect(model),
            NaturalFrames::Spatial => Layout::Spatial,
        };
        Self::with_layout(model, layout)
    }

    /// Builds the natural-coordinate model of `model` in `layout` (a planar layout must fit
    /// the model, see [`Layout::detect`]).
    pub fn with_layout(model: &Model, layout: Layout) -> Self {
        let nf = model.axes.len();
        let nqf = layout.nq_frame();
        let nq = nqf * nf;
        let origin_ref: Vec<V3> = model.axes.iter().map(|a| a.point_ref).collect();
        let mut cols = [V3::zeros(); NQ_FRAME];
        let mut point = |p: &FramePoint| -> Lin {
            match p.frame {
                Frame::Ground => Lin::constant(p.point_ref),
                Frame::Link(k) => {
                    layout.columns(&(p.point_ref - origin_ref[k.0]), true, &mut cols);
                    Lin::of_columns(k.0, nqf * k.0, &cols[..nqf], layout.konst(&p.point_ref))
                }
            }
        };
        let mut cols = [V3::zeros(); NQ_FRAME];
        let mut dir = |d: &FrameDir| -> Lin {
            match d.frame {
                Frame::Ground => Lin::constant(d.dir_ref),
                Frame::Link(k) => {
                    layout.columns(&d.dir_ref, false, &mut cols);
                    Lin::of_columns(k.0, nqf * k.0, &cols[..nqf], layout.konst(&d.dir_ref))
                }
            }
        };

        // mass and gravity: M_k = Σ m C(d)ᵀC(d) + Σ_ij S_ij C_iᵀC_j, Q_g = m C(d)ᵀ g
        let mut mass = vec![vec![0.0; nqf * nqf]; nf];
        let mut gravity_force = vec![0.0; nq];
        let mut com = Vec::with_capacity(model.bodies.len());
        let mut cd = [V3::zeros(); NQ_FRAME];
        let mut ci = [[V3::zeros(); NQ_FRAME]; 3];
        for b in &model.bodies {
            com.push(point(&FramePoint {
                frame: b.frame,
                point_ref: b.com_ref,
            }));
            let Frame::Link(k) = b.frame else { continue };
            let k = k.0;
            let m = b.mass_kg;
            layout.columns(&(b.com_ref - origin_ref[k]), true, &mut cd);
            for (i, c) in ci.iter_mut().enumerate() {
                layout.columns(&V3::ith(i, 1.0), false, c);
            }
            let s: Matrix3<f64> =
                Matrix3::identity() * (0.5 * b.inertia_ref.trace()) - b.inertia_ref;
            let mk = &mut mass[k];
            for r in 0..nqf {
                for c in 0..nqf {
                    let mut v = m * cd[r].dot(&cd[c]);
                    for i in 0..3 {
                        for j in 0..3 {
                            v += s[(i, j)] * ci[i][r].dot(&ci[j][c]);
                        }
                    }
                    mk[r * nqf + c] += v;
                }
                gravity_force[nqf * k + r] += m * cd[r].dot(&model.gravity);
            }
        }

        // reference natural coordinates (every frame at its reference pose): the test of the
        // equations the layout satisfies identically
        let mut q_ref = vec![0.0; nq];
        for (k, c) in origin_ref.iter().enumerate() {
            let o = nqf * k;
            match layout {
                Layout::Spatial => {
                    for i in 0..3 {
                        q_ref[o + i] = c[i];
                        q_ref[o + 3 * (i + 1) + i] = 1.0;
                    }
                }
                Layout::Planar { e1, e2, .. } => {
                    q_ref[o] = c.dot(&e1);
                    q_ref[o + 1] = c.dot(&e2);
                    q_ref[o + 2] = 1.0;
                }
            }
        }
        let mut eqs = Vec::new();
        let mut grad = vec![0.0; nq];
        let mut push = |eq: NatEq| {
            // identically satisfied in this layout: constant (zero Hessian and gradient) and
            // zero; a constant nonzero equation is kept, so that its violation shows
            if eq.hessian.is_empty() {
                grad.iter_mut().for_each(|g| *g = 0.0);
                eq.add_grad(&q_ref, 1.0, &mut grad);
                if grad.iter().all(|g| *g == 0.0) && eq.phi(&q_ref).abs() <= 1e-12 {
                    return;
                }
            }
            eqs.push(eq);
        };
        let xyz = ["x", "y", "z"];
        for (k, ax) in model.axes.iter().enumerate() {
            let unit = |slot: usize| -> Lin {
                let mut c = [V3::zeros(); NQ_FRAME];
                match layout {
                    Layout::Spatial => {
                        for i in 0..3 {
                            c[3 * slot + i] = V3::ith(i, 1.0);
                        }
                    }
                    Layout::Planar { e1, e2, .. } => {
                        c[2] = e1;
                        c[3] = e2;
                    }
                }
                Lin::of_columns(k, nqf * k, &c[..nqf], V3::zeros())
            };
            let rigid: &[(&str, usize, usize, f64)] = match layout {
                Layout::Spatial => &[
                    ("uu", 1, 1, 1.0),
                    ("vv", 2, 2, 1.0),
                    ("ww", 3, 3, 1.0),
                    ("uv", 1, 2, 0.0),
                    ("vw", 2, 3, 0.0),
                    ("wu", 3, 1, 0.0),
                ],
                Layout::Planar { .. } => &[("uu", 1, 1, 1.0)],
            };
            for &(lbl, a, b, kk) in rigid {
                push(NatEq::new(
                    format!("{}.rigid.{lbl}", ax.name),
                    Diff::one(unit(a)),
                    Diff::one(unit(b)),
                    kk,
                ));
            }
        }
        for (k, ax) in model.axes.iter().enumerate() {
            let child = Frame::Link(crate::model::AxisId(k));
            let pk = point(&FramePoint {
                frame: child,
                point_ref: ax.point_ref,
            });
            let pp = point(&FramePoint {
                frame: ax.parent,
                point_ref: ax.point_ref,
            });
            let perp = perpendiculars(&ax.dir_ref);
            let dk = |d: V3, dir: &mut dyn FnMut(&FrameDir) -> Lin| {
                dir(&FrameDir {
                    frame: child,
                    dir_ref: d,
                })
            };
            let dp = |d: V3, dir: &mut dyn FnMut(&FrameDir) -> Lin| {
                dir(&FrameDir {
                    frame: ax.parent,
                    dir_ref: d,
                })
            };
            match ax.kind {
                AxisKind::Revolute => {
                    for (i, c) in xyz.iter().enumerate() {
                        push(NatEq::new(
                            format!("{}.point.{c}", ax.name),
                            Diff::two(pk, pp),
                            Diff::one(Lin::constant(V3::ith(i, 1.0))),
                            0.0,
                        ));
                    }
                    // axis parallel: d_K(ū) ⊥ d_P(ē₁), d_P(ē₂) (non-redundant, so that no
                    // multiplier can drift in a null space of Φ_qᵀ)
                    for (i, e) in perp.iter().enumerate() {
                        push(NatEq::new(
                            format!("{}.axis.{i}", ax.name),
                            Diff::one(dk(ax.dir_ref, &mut dir)),
                            Diff::one(dp(*e, &mut dir)),
                            0.0,
                        ));
                    }
                }
                AxisKind::Prismatic => {
                    // same orientation, non-redundantly: d_K(ū) ⊥ d_P(ē₁), d_P(ē₂) and
                    // d_K(ē₁) ⊥ d_P(ē₂)
                    for (lbl, a, b) in [
                        ("axis.0", ax.dir_ref, perp[0]),
                        ("axis.1", ax.dir_ref, perp[1]),
                        ("twist", perp[0], perp[1]),
                    ] {
                        push(NatEq::new(
                            format!("{}.{lbl}", ax.name),
                            Diff::one(dk(a, &mut dir)),
                            Diff::one(dp(b, &mut dir)),
                            0.0,
                        ));
                    }
                    for (i, e) in perp.iter().enumerate() {
                        push(NatEq::new(
                            format!("{}.line.{i}", ax.name),
                            Diff::one(dp(*e, &mut dir)),
                            Diff::two(pk, pp),
                            0.0,
                        ));
                    }
                }
            }
        }
        for c in &model.constraints {
            let (a, b) = match &c.eq {
                ConstraintEq::PointDot { e, p1, p2 } => {
                    (Diff::one(dir(e)), Diff::two(point(p1), point(p2)))
                }
                ConstraintEq::DirDot { e1, e2 } => (Diff::one(dir(e1)), Diff::one(dir(e2))),
            };
            push(NatEq::new(c.name.clone(), a, b, 0.0));
        }
        let cylinders = model
            .hydraulics
            .cylinders
            .iter()
            .map(|c| NatCylinder {
                base: point(&c.base),
                rod: point(&c.rod),
            })
            .collect();
        let mut labels = Vec::with_capacity(nq);
        for ax in &model.axes {
            match layout {
                Layout::Spatial => {
                    for v in ["r", "u", "v", "w"] {
                        for c in xyz {
                            labels.push(format!("{}.{v}.{c}", ax.name));
                        }
                    }
                }
                Layout::Planar { e1, e2, .. } => {
                    let (n1, n2) = (Layout::name_of(&e1, "e1"), Layout::name_of(&e2, "e2"));
                    for v in ["r", "u"] {
                        labels.push(format!("{}.{v}.{n1}", ax.name));
                        labels.push(format!("{}.{v}.{n2}", ax.name));
                    }
                }
            }
        }
        NaturalModel {
            layout,
            nq_frame: nqf,
            n_frames: nf,
            nq,
            origin_ref,
            mass,
            gravity_force,
            eqs,
            cylinders,
            com,
            labels,
        }
    }

    /// Number of constraint equations.
    pub fn n_eqs(&self) -> usize {
        self.eqs.len()
    }

    /// `out = M a` (M = blockdiag(M_k)).
    #[inline]
    pub fn mass_times<S: Real>(&self, a: &[S], out: &mut [S]) {
        let nqf = self.nq_frame;
        for (k, mk) in self.mass.iter().enumerate() {
            let o = nqf * k;
            for r in 0..nqf {
                let mut acc = S::zero();
                for (c, m) in mk[r * nqf..(r + 1) * nqf].iter().enumerate() {
                    if *m != 0.0 {
                        acc += a[o + c] * *m;
                    }
                }
                out[o + r] = acc;
            }
        }
    }

    /// Entry M_ij of the (constant) mass matrix.
    #[inline]
    pub fn mass_entry(&self, i: usize, j: usize) -> f64 {
        let nqf = self.nq_frame;
        let (fi, fj) = (i / nqf, j / nqf);
        if fi != fj {
            return 0.0;
        }
        self.mass[fi][(i % nqf) * nqf + j % nqf]
    }

    /// Rotation A of a frame from q (identity for the ground): [u v w] (spatial) or the
    /// rotation about n by the angle of u (planar: A = n nᵀ + u₁(e₁e₁ᵀ + e₂e₂ᵀ) + u₂(e₂e₁ᵀ −
    /// e₁e₂ᵀ)).
    pub fn rotation(&self, q: &[f64], f: Frame) -> Matrix3<f64> {
        match f {
            Frame::Ground => Matrix3::identity(),
            Frame::Link(k) => {
                let b = &q[self.nq_frame * k.0..];
                match self.layout {
                    Layout::Spatial => {
                        Matrix3::new(b[3], b[6], b[9], b[4], b[7], b[10], b[5], b[8], b[11])
                    }
                    Layout::Planar { n, e1, e2 } => {
                        n * n.transpose()
                            + (e1 * e1.transpose() + e2 * e2.transpose()) * b[2]
                            + (e2 * e1.transpose() - e1 * e2.transpose()) * b[3]
                    }
                }
            }
        }
    }

    /// Angular velocity ω = ½ Σ e × ė over e ∈ {u, v, w} (spatial) or n (u₁u̇₂ − u₂u̇₁)
    /// (planar); with q̈ for `qd`: ω̇.
    pub fn angular(&self, q: &[f64], qd: &[f64], f: Frame) -> V3 {
        match f {
            Frame::Ground => V3::zeros(),
            Frame::Link(k) => {
                let o = self.nq_frame * k.0;
                match self.layout {
                    Layout::Spatial => {
                        let mut w = V3::zeros();
                        for j in 1..4 {
                            let e = V3::new(q[o + 3 * j], q[o + 3 * j + 1], q[o + 3 * j + 2]);
                            let ed = V3::new(qd[o + 3 * j], qd[o + 3 * j + 1], qd[o + 3 * j + 2]);
                            w += e.cross(&ed);
                        }
                        w * 0.5
                    }
                    Layout::Planar { n, .. } => n * (q[o + 2] * qd[o + 3] - q[o + 3] * qd[o + 2]),
                }
            }
        }
    }

    /// Natural coordinates q, q̇, q̈ from the relative z, ż, z̈ of `st` (recursive kinematics of
    /// the tree: r = x + A c̄, ṙ = ṡ + ω × r, r̈ = s̈ + ω̇ × r + ω × ṙ, ė = ω × e,
    /// ë = ω̇ × e + ω × ė, with Ż_k = Ż⁰_k + Σ_path b_i z̈_i; in the planar layout r and
    /// u = A e₁ projected on e₁, e₂).
    #[allow(clippy::too_many_arguments)]
    pub fn from_relative(
        &self,
        model: &Model,
        kin: &mut Kinematics<f64>,
        z: &[f64],
        zd: &[f64],
        zdd: &[f64],
        q: &mut [f64],
        qd: &mut [f64],
        qdd: &mut [f64],
    ) {
        kin.positions(model, z);
        kin.velocities(model, zd);
        let nqf = self.nq_frame;
        for k in 0..self.n_frames {
            let (mut av, mut aw) = (kin.acc0_v[k], kin.acc0_w[k]);
            crate::mechanics::kinematics::for_each_on_path(
                model,
                Frame::Link(crate::model::AxisId(k)),
                |i| {
                    av += kin.bv[i] * zdd[i];
                    aw += kin.bw[i] * zdd[i];
                },
            );
            let (sv, w) = (kin.vel_v[k], kin.vel_w[k]);
            let a = kin.rot[k];
            let o = nqf * k;
            let r = kin.pos[k] + a * self.origin_ref[k];
            let rd = sv + w.cross(&r);
            let rdd = av + aw.cross(&r) + w.cross(&rd);
            let unit = |e: V3| {
                let ed = w.cross(&e);
                (e, ed, aw.cross(&e) + w.cross(&ed))
            };
            let mut put = |slot: usize, (x, xd, xdd): (V3, V3, V3)| match self.layout {
                Layout::Spatial => {
                    for i in 0..3 {
                        q[o + 3 * slot + i] = x[i];
                        qd[o + 3 * slot + i] = xd[i];
                        qdd[o + 3 * slot + i] = xdd[i];
                    }
                }
                Layout::Planar { e1, e2, .. } => {
                    for (i, e) in [e1, e2].iter().enumerate() {
                        q[o + 2 * slot + i] = x.dot(e);
                        qd[o + 2 * slot + i] = xd.dot(e);
                        qdd[o + 2 * slot + i] = xdd.dot(e);
                    }
                }
            };
            put(0, (r, rd, rdd));
            match self.layout {
                Layout::Spatial => {
                    for j in 0..3 {
                        put(j + 1, unit(a.column(j).into()));
                    }
                }
                Layout::Planar { e1, .. } => put(1, unit(a * e1)),
            }
        }
    }

    /// Relative coordinates z, ż, z̈ from q, q̇, q̈ (the inverse of [`NaturalModel::from_relative`]
    /// on the constraint manifold). Revolute: R = A_Pᵀ A_K = Rot(ū, θ), sin θ = ½ ū·vee(R − Rᵀ),
    /// cos θ = (tr R − 1)/2, θ unwrapped to the previous `z`; ż = n·(ω_K − ω_P) and
    /// z̈ = n·(ω̇_K − ω̇_P) + (ω_P × n)·(ω_K − ω_P), n = A_P ū. Prismatic: z = n·Δ,
    /// Δ = p_K(c̄) − p_P(c̄), n = d_P(ū), and its first and second time derivatives. Multi-axis
    /// joints decompose axis by axis (Cardan angles of the intermediate frames).
    #[allow(clippy::too_many_arguments)]
    pub fn to_relative(
        &self,
        model: &Model,
        q: &[f64],
        qd: &[f64],
        qdd: &[f64],
        z: &mut [f64],
        zd: &mut [f64],
        zdd: &mut [f64],
    ) {
        for (k, ax) in model.axes.iter().enumerate() {
            let child = Frame::Link(crate::model::AxisId(k));
            let ap = self.rotation(q, ax.parent);
            match ax.kind {
                AxisKind::Revolute => {
                    let ak = self.rotation(q, child);
                    let r = ap.transpose() * ak;
                    let u = ax.dir_ref;
                    let vee = V3::new(
                        r[(2, 1)] - r[(1, 2)],
                        r[(0, 2)] - r[(2, 0)],
                        r[(1, 0)] - r[(0, 1)],
                    );
                    let s = 0.5 * u.dot(&vee);
                    // cos θ from the part of R orthogonal to ū: tr R − ūᵀRū = 2 cos θ
                    let c = 0.5 * (r.trace() - (u.transpose() * r * u)[0]);
                    let mut th = s.atan2(c);
                    let tau = std::f64::consts::TAU;
                    th += ((z[k] - th) / tau).round() * tau;
                    z[k] = th;
                    let n = ap * u;
                    let (wp, wk) = (self.angular(q, qd, ax.parent), self.angular(q, qd, child));
                    let (ap_, ak_) = (self.angular(q, qdd, ax.parent), self.angular(q, qdd, child));
                    zd[k] = n.dot(&(wk - wp));
                    zdd[k] = n.dot(&(ak_ - ap_)) + wp.cross(&n).dot(&(wk - wp));
                }
                AxisKind::Prismatic => {
                    let pk = self.point_lin(child, &ax.point_ref);
                    let pp = self.point_lin(ax.parent, &ax.point_ref);
                    let nd = self.dir_lin(ax.parent, &ax.dir_ref);
                    let d = pk.eval(q) - pp.eval(q);
                    let dd = pk.rate(qd) - pp.rate(qd);
                    let ddd = pk.rate(qdd) - pp.rate(qdd);
                    let (n, nr, nrr) = (nd.eval(q), nd.rate(qd), nd.rate(qdd));
                    z[k] = n.dot(&d);
                    zd[k] = nr.dot(&d) + n.dot(&dd);
                    zdd[k] = nrr.dot(&d) + 2.0 * nr.dot(&dd) + n.dot(&ddd);
                }
            }
        }
    }

    /// The [`Lin`] of a point with reference coordinates `p` on frame `f`.
    pub fn point_lin(&self, f: Frame, p: &V3) -> Lin {
        match f {
            Frame::Ground => Lin::constant(*p),
            Frame::Link(k) => {
                let mut cols = [V3::zeros(); NQ_FRAME];
                self.layout
                    .columns(&(p - self.origin_ref[k.0]), true, &mut cols);
                Lin::of_columns(
                    k.0,
                    self.nq_frame * k.0,
                    &cols[..self.nq_frame],
                    self.layout.konst(p),
                )
            }
        }
    }

    /// The [`Lin`] of a direction with reference components `d` on frame `f`.
    pub fn dir_lin(&self, f: Frame, d: &V3) -> Lin {
        match f {
            Frame::Ground => Lin::constant(*d),
            Frame::Link(k) => {
                let mut cols = [V3::zeros(); NQ_FRAME];
                self.layout.columns(d, false, &mut cols);
                Lin::of_columns(
                    k.0,
                    self.nq_frame * k.0,
                    &cols[..self.nq_frame],
                    self.layout.konst(d),
                )
            }
        }
    }

    /// Kinetic energy ½ q̇ᵀ M q̇ [J].
    pub fn kinetic_energy(&self, qd: &[f64]) -> f64 {
        let nqf = self.nq_frame;
        let mut ke = 0.0;
        for (k, mk) in self.mass.iter().enumerate() {
            let v = &qd[nqf * k..nqf * (k + 1)];
            for r in 0..nqf {
                for c in 0..nqf {
                    ke += 0.5 * mk[r * nqf + c] * v[r] * v[c];
                }
            }
        }
        ke
    }

    /// Potential energy −Σ m gravity·g_j [J].
    pub fn potential_energy(&self, model: &Model, q: &[f64]) -> f64 {
        model
            .bodies
            .iter()
            .zip(self.com.iter())
            .map(|(b, c)| -b.mass_kg * model.gravity.dot(&c.eval(q)))
            .sum()
    }
}

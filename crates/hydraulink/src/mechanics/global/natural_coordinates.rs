//! Conversion of the joint tree into natural coordinates (points and unit vectors) with rigid-body
//! and joint constraints (004 §2, reference note 000_004 004-A.2).
//!
//! # Coordinates
//! Every elementary joint axis k of the model (every `Frame::Link(k)`) becomes one natural
//! frame: a basic point r_k (the axis point c̄_k of the reference configuration) and unit
//! vectors. Two layouts ([`Layout`]):
//!
//! * **Spatial** (any mechanism): the classic fully Cartesian set of García de Jalón, the point
//!   and three unit vectors, 12 coordinates per frame,
//!   ```text
//!   q_k = [ r_k ; u_k ; v_k ; w_k ],   r_k = x_k + A_k c̄_k,   [u_k v_k w_k] = A_k
//!   ```
//!   where (A_k, x_k) is the link pose of `Kinematics`; every joint is a set of equations.
//! * **Planar** (every revolute axis parallel to one normal n, every prismatic axis normal to
//!   it; chosen automatically, `solver.natural_frames = "auto"`): the frames move in the plane
//!   ⊥ n, with the in-plane basis (e₁, e₂ = n × e₁). A frame is its point and one unit vector
//!   u_k = A_k e₁ (the second one, u_k turned by 90° about n, is linear in u_k). As in the
//!   natural coordinates of García de Jalón, **bodies share the points of their joints**: the
//!   point of a revolute frame is the joint point of its parent (a linear combination of the
//!   parent's point and unit vector, so no coordinates and no coincidence equations), or a
//!   constant on the ground; a prismatic frame owns its point (2 coordinates, one line
//!   equation) and shares its parent's unit vector. A revolute frame owns 2 coordinates
//!   (u_k·e₁, u_k·e₂) and one equation (u_k·u_k = 1). The four-bar of 000 has 6 coordinates
//!   and 5 equations (36 and 35 spatial), the quick-return 10 and 9 (60 and 59).
//!
//! In both layouts a point with reference coordinates p̄ on frame k and a direction d̄ are
//! constant affine maps of q ([`Lin`]: the nonzero columns and a constant):
//!
//! ```text
//! p = r_k + A_k (p̄ − c̄_k) (+ (p̄·n) n, planar)          d = A_k d̄ (+ (d̄·n) n, planar)
//! ```
//! with A_k a = a_x u_k + a_y v_k + a_z w_k (spatial) or, planar,
//! A_k a = a₁ u_k + a₂ u_k^⊥, u_k^⊥ = (−u_k·e₂) e₁ + (u_k·e₁) e₂, a_i = a·e_i. Frames of
//! multi-axis joints that carry no body are massless; their coordinates are fixed by the joint
//! constraints through the penalty term (004 §2: a singular M is handled by Φ_qᵀ α Φ_q). The
//! ground is not a frame: its points are constants.
//!
//! # Mass matrix (constant)
//! A body point is p = C(a) q + const with C(a) affine in the body offset a: C(a) = C(0) +
//! Σ_i a_i C_i, C_i the columns of the direction ê_i. For a body with mass m, COM offset d and
//! central inertia J̄,
//!
//! ```text
//! M = Σ_bodies ∫ρ C(a)ᵀ C(a) dV = Σ_bodies [ m C(d)ᵀ C(d) + Σ_ij S_ij C_iᵀ C_j ],
//! S = ½ tr(J̄) I − J̄
//! ```
//! (S the central second moment of mass). Spatial: per frame M4_k ⊗ I₃ with
//! M4 = [[m, m dᵀ], [m d, m d dᵀ + S]]. Planar: the rotational entry is S₁₁ + S₂₂ = J̄_nn, and
//! a body whose point is shared couples its unit vector with those up the chain (M is constant
//! but not block diagonal; stored as its nonzero entries). Gravity gives the constant
//! generalized force Q_g = Σ m C(d)ᵀ g.
//!
//! # Constraints
//! Every scalar equation has the form Φ = A·B − k with A, B differences of [`Lin`] expressions
//! (so Φ is at most quadratic in q, Φ_q is linear and the Hessian constant):
//!
//! | source | equations |
//! |---|---|
//! | rigid body, per owned orientation | spatial: u·u − 1, v·v − 1, w·w − 1, u·v, v·w, w·u; planar: u·u − 1 |
//! | revolute axis (c̄, ū) | p_K(c̄) − p_P(c̄) = 0 (3), d_K(ū)·d_P(ē_i) = 0 (2) |
//! | prismatic axis ū | d_K(ū)·d_P(ē_i) = 0 (2), d_K(ē₁)·d_P(ē₂) = 0 (1), d_P(ē_i)·(p_K(c̄) − p_P(c̄)) = 0 (2) |
//! | cut joint `PointDot` | e·(r₁ − r₂) |
//! | cut joint `DirDot` | e₁·e₂ |
//!
//! (ē₁, ē₂ ⊥ ū in the reference configuration.) The equations a layout satisfies identically
//! (a shared joint point, the n component of a planar point, parallel planar axes, a shared
//! unit vector, a cut-joint row along n: zero Hessian, gradient and value) are dropped when
//! the model is built. The remaining tree-joint and rigid-body equations are independent:
//! redundant ones are harmless for the penalty term itself (004 §2), but the iterated
//! multipliers would drift in the null space of Φ_qᵀ, where they still act through the
//! constraint Hessian, and spoil Newton's convergence. (Cut joints are taken as the model
//! gives them.) With Φ = A·B − k: Φ_q = Bᵀ A_q + Aᵀ B_q, Φ̇_q q̇ = 2 Ȧ·Ḃ and the constant
//! Hessian H = A_qᵀ B_q + B_qᵀ A_q ([`NatEq::hessian`], assembled once).

use std::collections::BTreeMap;

use nalgebra::{Matrix3, Vector3};

use crate::mechanics::kinematics::Kinematics;
pub use crate::model::natural_model::{
    Diff, FrameMap, Layout, Lin, NatCylinder, NatEq, NaturalModel, NQ_FRAME,
};
use crate::model::spec::NaturalFrames;
use crate::model::{AxisKind, ConstraintEq, Frame, Model, V3};
use crate::solver::real::{v3, Real};

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

    /// Adds `v q[i]` (merged with an existing column of `i`; zero columns are skipped).
    fn add_column(&mut self, i: usize, v: V3) {
        if v.norm_squared() == 0.0 {
            return;
        }
        if let Some(j) = self.idx[..self.n].iter().position(|&k| k == i) {
            self.cols[j] += v;
            return;
        }
        assert!(
            self.n < NQ_FRAME,
            "a natural-coordinate map has at most 12 columns"
        );
        self.idx[self.n] = i;
        self.cols[self.n] = v;
        self.n += 1;
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

/// Two unit vectors perpendicular to `u` and to each other.
fn perpendiculars(u: &V3) -> [V3; 2] {
    let t = if u.x.abs() < 0.9 { V3::x() } else { V3::y() };
    let e1 = u.cross(&t).normalize();
    let e2 = u.cross(&e1);
    [e1, e2]
}

/// Adds the rotation part of a vector with reference components `a` on a frame with
/// orientation coordinates from `rot` (or the reference orientation) to `l`.
fn add_rotated(layout: &Layout, rot: Option<usize>, a: &V3, l: &mut Lin) {
    match (layout, rot) {
        (Layout::Spatial, Some(o)) => {
            for j in 0..3 {
                for i in 0..3 {
                    l.add_column(o + 3 * j + i, V3::ith(i, a[j]));
                }
            }
        }
        (Layout::Spatial, None) => l.konst += a,
        (Layout::Planar { e1, e2, .. }, rot) => {
            let (a1, a2) = (a.dot(e1), a.dot(e2));
            match rot {
                Some(o) => {
                    l.add_column(o, e1 * a1 + e2 * a2);
                    l.add_column(o + 1, e2 * a1 - e1 * a2);
                }
                None => l.konst += e1 * a1 + e2 * a2,
            }
        }
    }
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

    /// The in-plane (planar) or full (spatial) [`Lin`] of a point with reference coordinates
    /// `p` on frame `f`, from the frame maps built so far.
    fn point_inplane(&self, f: Frame, p: &V3) -> Lin {
        match f {
            Frame::Ground => Lin::constant(match self.layout {
                Layout::Spatial => *p,
                Layout::Planar { n, .. } => p - n * p.dot(&n),
            }),
            Frame::Link(k) => {
                let fm = &self.frames[k.0];
                let mut l = fm.r;
                l.frame = Some(k.0);
                add_rotated(&self.layout, fm.rot, &(p - self.origin_ref[k.0]), &mut l);
                l
            }
        }
    }

    /// Builds the natural-coordinate model of `model` in `layout` (a planar layout must fit
    /// the model, see [`Layout::detect`]).
    ///
    /// Frames are numbered like the axes (parents first). A spatial frame owns r and [u v w]
    /// (12 coordinates). A planar frame owns its unit vector u (2 coordinates) when its axis is
    /// revolute and shares its parent's when it is prismatic (same orientation); its point
    /// r_k is, for a revolute axis, the joint point c̄_k of the parent frame (natural
    /// coordinates share the points of the joints: no coordinates and no coincidence
    /// equations), and owned (2 coordinates, with the line equation) for a prismatic one. A
    /// point on a deep chain depends on every unit vector up the chain; a frame whose shared
    /// point would need more than 10 columns owns its r (with the coincidence equations).
    pub fn with_layout(model: &Model, layout: Layout) -> Self {
        let nf = model.axes.len();
        let origin_ref: Vec<V3> = model.axes.iter().map(|a| a.point_ref).collect();
        let mut nm = NaturalModel {
            layout,
            n_frames: nf,
            origin_ref,
            ..Default::default()
        };
        let xyz = ["x", "y", "z"];
        // ---- coordinates of every frame
        let mut labels = Vec::new();
        let mut nq = 0usize;
        let (n1, n2) = match layout {
            Layout::Planar { e1, e2, .. } => {
                (Layout::name_of(&e1, "e1"), Layout::name_of(&e2, "e2"))
            }
            Layout::Spatial => (String::new(), String::new()),
        };
        for (k, ax) in model.axes.iter().enumerate() {
            let c = nm.origin_ref[k];
            let fm = match layout {
                Layout::Spatial => {
                    let mut r = Lin::constant(V3::zeros());
                    for i in 0..3 {
                        r.add_column(nq + i, V3::ith(i, 1.0));
                    }
                    for v in ["r", "u", "v", "w"] {
                        for c in xyz {
                            labels.push(format!("{}.{v}.{c}", ax.name));
                        }
                    }
                    let fm = FrameMap {
                        r,
                        rot: Some(nq + 3),
                        own_r: Some(nq),
                        own_rot: true,
                    };
                    nq += NQ_FRAME;
                    fm
                }
                Layout::Planar { e1, e2, .. } => {
                    // a revolute frame owns its unit vector, a prismatic one shares its parent's
                    let own_rot = ax.kind == AxisKind::Revolute;
                    let shared = match ax.kind {
                        AxisKind::Revolute => {
                            let l = nm.point_inplane(ax.parent, &c);
                            (l.n <= NQ_FRAME - 2).then_some(l)
                        }
                        AxisKind::Prismatic => None,
                    };
                    let (r, own_r) = match shared {
                        Some(l) => (l, None),
                        None => {
                            let mut r = Lin::constant(V3::zeros());
                            r.add_column(nq, e1);
                            r.add_column(nq + 1, e2);
                            labels.push(format!("{}.r.{n1}", ax.name));
                            labels.push(format!("{}.r.{n2}", ax.name));
                            nq += 2;
                            (r, Some(nq - 2))
                        }
                    };
                    let rot = if own_rot {
                        labels.push(format!("{}.u.{n1}", ax.name));
                        labels.push(format!("{}.u.{n2}", ax.name));
                        nq += 2;
                        Some(nq - 2)
                    } else {
                        match ax.parent {
                            Frame::Ground => None,
                            Frame::Link(p) => nm.frames[p.0].rot,
                        }
                    };
                    FrameMap {
                        r,
                        rot,
                        own_r,
                        own_rot,
                    }
                }
            };
            nm.frames.push(fm);
        }
        nm.nq = nq;
        nm.labels = labels;

        // ---- mass and gravity: M = Σ m C(d)ᵀC(d) + Σ_ij S_ij C_iᵀC_j, Q_g = m C(d)ᵀ g
        let mut mass = vec![0.0; nq * nq];
        let mut gravity_force = vec![0.0; nq];
        let mut com = Vec::with_capacity(model.bodies.len());
        for b in &model.bodies {
            let cd = nm.point(b.frame, &b.com_ref);
            com.push(cd);
            let Frame::Link(_) = b.frame else { continue };
            let m = b.mass_kg;
            let ci: Vec<Lin> = (0..3).map(|i| nm.dir(b.frame, &V3::ith(i, 1.0))).collect();
            let s: Matrix3<f64> =
                Matrix3::identity() * (0.5 * b.inertia_ref.trace()) - b.inertia_ref;
            for (ia, ca) in cd.columns() {
                for (ib, cb) in cd.columns() {
                    mass[ia * nq + ib] += m * ca.dot(cb);
                }
                gravity_force[ia] += m * ca.dot(&model.gravity);
            }
            for i in 0..3 {
                for j in 0..3 {
                    if s[(i, j)] == 0.0 {
                        continue;
                    }
                    for (ia, ca) in ci[i].columns() {
                        for (ib, cb) in ci[j].columns() {
                            mass[ia * nq + ib] += s[(i, j)] * ca.dot(cb);
                        }
                    }
                }
            }
        }
        nm.mass = (0..nq * nq)
            .filter(|&k| mass[k] != 0.0)
            .map(|k| (k / nq, k % nq, mass[k]))
            .collect();
        nm.gravity_force = gravity_force;
        nm.com = com;

        // ---- reference natural coordinates (every frame at its reference pose): the test of
        // the equations the layout satisfies identically
        let mut q_ref = vec![0.0; nq];
        for (k, fm) in nm.frames.iter().enumerate() {
            let c = nm.origin_ref[k];
            if let Some(o) = fm.own_r {
                match layout {
                    Layout::Spatial => q_ref[o..o + 3].copy_from_slice(c.as_slice()),
                    Layout::Planar { e1, e2, .. } => {
                        q_ref[o] = c.dot(&e1);
                        q_ref[o + 1] = c.dot(&e2);
                    }
                }
            }
            if let (true, Some(o)) = (fm.own_rot, fm.rot) {
                match layout {
                    Layout::Spatial => {
                        for i in 0..3 {
                            q_ref[o + 3 * i + i] = 1.0;
                        }
                    }
                    Layout::Planar { .. } => q_ref[o] = 1.0,
                }
            }
        }
        let mut eqs = Vec::new();
        let mut grad = vec![0.0; nq];
        let mut push = |eq: NatEq| {
            // identically satisfied in this layout (a shared joint point, the n component of
            // a planar point, parallel planar axes): zero Hessian, zero gradient and zero
            // value at the reference pose. A constant nonzero equation is kept, so that its
            // violation shows.
            const ZERO: f64 = 1e-12;
            if eq.hessian.iter().all(|(_, _, h)| h.abs() <= ZERO) {
                grad.iter_mut().for_each(|g| *g = 0.0);
                eq.add_grad(&q_ref, 1.0, &mut grad);
                if grad.iter().all(|g| g.abs() <= ZERO) && eq.phi(&q_ref).abs() <= ZERO {
                    return;
                }
            }
            eqs.push(eq);
        };
        // rigid-body equations of the orientation coordinates each frame owns
        for (k, ax) in model.axes.iter().enumerate() {
            let fm = nm.frames[k];
            let (true, Some(o)) = (fm.own_rot, fm.rot) else {
                continue;
            };
            let unit = |slot: usize| -> Lin {
                let mut l = Lin::constant(V3::zeros());
                l.frame = Some(k);
                match layout {
                    Layout::Spatial => {
                        for i in 0..3 {
                            l.add_column(o + 3 * slot + i, V3::ith(i, 1.0));
                        }
                    }
                    Layout::Planar { e1, e2, .. } => {
                        l.add_column(o, e1);
                        l.add_column(o + 1, e2);
                    }
                }
                l
            };
            let rigid: &[(&str, usize, usize, f64)] = match layout {
                Layout::Spatial => &[
                    ("uu", 0, 0, 1.0),
                    ("vv", 1, 1, 1.0),
                    ("ww", 2, 2, 1.0),
                    ("uv", 0, 1, 0.0),
                    ("vw", 1, 2, 0.0),
                    ("wu", 2, 0, 0.0),
                ],
                Layout::Planar { .. } => &[("uu", 0, 0, 1.0)],
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
            let pk = nm.point(child, &ax.point_ref);
            let pp = nm.point(ax.parent, &ax.point_ref);
            let perp = perpendiculars(&ax.dir_ref);
            let dk = |d: V3| nm.dir(child, &d);
            let dp = |d: V3| nm.dir(ax.parent, &d);
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
                            Diff::one(dk(ax.dir_ref)),
                            Diff::one(dp(*e)),
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
                            Diff::one(dk(a)),
                            Diff::one(dp(b)),
                            0.0,
                        ));
                    }
                    for (i, e) in perp.iter().enumerate() {
                        push(NatEq::new(
                            format!("{}.line.{i}", ax.name),
                            Diff::one(dp(*e)),
                            Diff::two(pk, pp),
                            0.0,
                        ));
                    }
                }
            }
        }
        for c in &model.constraints {
            let (a, b) = match &c.eq {
                ConstraintEq::PointDot { e, p1, p2 } => (
                    Diff::one(nm.dir(e.frame, &e.dir_ref)),
                    Diff::two(
                        nm.point(p1.frame, &p1.point_ref),
                        nm.point(p2.frame, &p2.point_ref),
                    ),
                ),
                ConstraintEq::DirDot { e1, e2 } => (
                    Diff::one(nm.dir(e1.frame, &e1.dir_ref)),
                    Diff::one(nm.dir(e2.frame, &e2.dir_ref)),
                ),
            };
            push(NatEq::new(c.name.clone(), a, b, 0.0));
        }
        nm.eqs = eqs;
        nm.cylinders = model
            .cylinders()
            .map(|c| NatCylinder {
                base: nm.point(c.base.frame, &c.base.point_ref),
                rod: nm.point(c.rod.frame, &c.rod.point_ref),
            })
            .collect();
        nm.element_points = model
            .elements()
            .iter()
            .map(|e| match e.ports().mech {
                crate::elements::element::MechPort::Line { base, rod } => Some(NatCylinder {
                    base: nm.point(base.frame, &base.point_ref),
                    rod: nm.point(rod.frame, &rod.point_ref),
                }),
                crate::elements::element::MechPort::Point {
                    at,
                    body_axes: false,
                } => Some(NatCylinder {
                    base: nm.point(at.frame, &at.point_ref),
                    rod: nm.point(at.frame, &at.point_ref),
                }),
                _ => None,
            })
            .collect();
        nm
    }

    /// Number of constraint equations.
    pub fn n_eqs(&self) -> usize {
        self.eqs.len()
    }

    /// `out = M a`.
    #[inline]
    pub fn mass_times<S: Real>(&self, a: &[S], out: &mut [S]) {
        out.iter_mut().for_each(|o| *o = S::zero());
        for &(i, j, m) in &self.mass {
            out[i] += a[j] * m;
        }
    }

    /// Rotation A of a frame from q (identity for the ground): [u v w] (spatial) or the
    /// rotation about n by the angle of u (planar: A = n nᵀ + u₁(e₁e₁ᵀ + e₂e₂ᵀ) + u₂(e₂e₁ᵀ −
    /// e₁e₂ᵀ)).
    pub fn rotation(&self, q: &[f64], f: Frame) -> Matrix3<f64> {
        let Frame::Link(k) = f else {
            return Matrix3::identity();
        };
        let Some(o) = self.frames[k.0].rot else {
            return Matrix3::identity();
        };
        let b = &q[o..];
        match self.layout {
            Layout::Spatial => Matrix3::new(b[0], b[3], b[6], b[1], b[4], b[7], b[2], b[5], b[8]),
            Layout::Planar { n, e1, e2 } => {
                n * n.transpose()
                    + (e1 * e1.transpose() + e2 * e2.transpose()) * b[0]
                    + (e2 * e1.transpose() - e1 * e2.transpose()) * b[1]
            }
        }
    }

    /// Angular velocity ω = ½ Σ e × ė over e ∈ {u, v, w} (spatial) or n (u₁u̇₂ − u₂u̇₁)
    /// (planar); with q̈ for `qd`: ω̇.
    pub fn angular(&self, q: &[f64], qd: &[f64], f: Frame) -> V3 {
        let Frame::Link(k) = f else {
            return V3::zeros();
        };
        let Some(o) = self.frames[k.0].rot else {
            return V3::zeros();
        };
        match self.layout {
            Layout::Spatial => {
                let mut w = V3::zeros();
                for j in 0..3 {
                    let e = V3::new(q[o + 3 * j], q[o + 3 * j + 1], q[o + 3 * j + 2]);
                    let ed = V3::new(qd[o + 3 * j], qd[o + 3 * j + 1], qd[o + 3 * j + 2]);
                    w += e.cross(&ed);
                }
                w * 0.5
            }
            Layout::Planar { n, .. } => n * (q[o] * qd[o + 1] - q[o + 1] * qd[o]),
        }
    }

    /// Natural coordinates q, q̇, q̈ from the relative z, ż, z̈ of `st` (recursive kinematics of
    /// the tree: r = x + A c̄, ṙ = ṡ + ω × r, r̈ = s̈ + ω̇ × r + ω × ṙ, ė = ω × e,
    /// ë = ω̇ × e + ω × ė, with Ż_k = Ż⁰_k + Σ_path b_i z̈_i; in the planar layout r and
    /// u = A e₁ projected on e₁, e₂). Only the coordinates a frame owns are written.
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
        for (k, fm) in self.frames.iter().enumerate() {
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
            let r = kin.pos[k] + a * self.origin_ref[k];
            let rd = sv + w.cross(&r);
            let rdd = av + aw.cross(&r) + w.cross(&rd);
            let unit = |e: V3| {
                let ed = w.cross(&e);
                (e, ed, aw.cross(&e) + w.cross(&ed))
            };
            let mut put = |o: usize, (x, xd, xdd): (V3, V3, V3)| match self.layout {
                Layout::Spatial => {
                    for i in 0..3 {
                        q[o + i] = x[i];
                        qd[o + i] = xd[i];
                        qdd[o + i] = xdd[i];
                    }
                }
                Layout::Planar { e1, e2, .. } => {
                    for (i, e) in [e1, e2].iter().enumerate() {
                        q[o + i] = x.dot(e);
                        qd[o + i] = xd.dot(e);
                        qdd[o + i] = xdd.dot(e);
                    }
                }
            };
            if let Some(o) = fm.own_r {
                put(o, (r, rd, rdd));
            }
            if let (true, Some(o)) = (fm.own_rot, fm.rot) {
                match self.layout {
                    Layout::Spatial => {
                        for j in 0..3 {
                            put(o + 3 * j, unit(a.column(j).into()));
                        }
                    }
                    Layout::Planar { e1, .. } => put(o, unit(a * e1)),
                }
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
                    let pk = self.point(child, &ax.point_ref);
                    let pp = self.point(ax.parent, &ax.point_ref);
                    let nd = self.dir(ax.parent, &ax.dir_ref);
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
    pub fn point(&self, f: Frame, p: &V3) -> Lin {
        let mut l = self.point_inplane(f, p);
        if let (Layout::Planar { n, .. }, Frame::Link(_)) = (self.layout, f) {
            l.konst += n * p.dot(&n);
        }
        l
    }

    /// The [`Lin`] of a direction with reference components `d` on frame `f`.
    pub fn dir(&self, f: Frame, d: &V3) -> Lin {
        match f {
            Frame::Ground => Lin::constant(*d),
            Frame::Link(k) => {
                let mut l = Lin::constant(match self.layout {
                    Layout::Spatial => V3::zeros(),
                    Layout::Planar { n, .. } => n * d.dot(&n),
                });
                l.frame = Some(k.0);
                add_rotated(&self.layout, self.frames[k.0].rot, d, &mut l);
                l
            }
        }
    }

    /// Kinetic energy ½ q̇ᵀ M q̇ [J].
    pub fn kinetic_energy(&self, qd: &[f64]) -> f64 {
        self.mass
            .iter()
            .map(|&(i, j, m)| 0.5 * m * qd[i] * qd[j])
            .sum()
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

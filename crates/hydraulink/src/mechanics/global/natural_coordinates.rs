//! Conversion of the joint tree into natural coordinates (points and unit vectors) with rigid-body
//! and joint constraints (004 §2, reference note 000_004 004-A.2).
//!
//! # Coordinates
//! Every elementary joint axis k of the model (every `Frame::Link(k)`) becomes one natural
//! frame with the classic fully Cartesian set of García de Jalón: a basic point and three unit
//! vectors, 12 coordinates
//!
//! ```text
//! q_k = [ r_k ; u_k ; v_k ; w_k ],   r_k = x_k + A_k c̄_k,   [u_k v_k w_k] = A_k
//! ```
//! where (A_k, x_k) is the link pose of `Kinematics` and c̄_k is the axis point in the reference
//! configuration. A point with reference coordinates p̄ of frame k and a direction d̄ are then
//! constant linear combinations of q_k:
//!
//! ```text
//! p = r_k + a_x u_k + a_y v_k + a_z w_k,  a = p̄ − c̄_k        d = d̄_x u_k + d̄_y v_k + d̄_z w_k
//! ```
//! ([`Lin`]). Frames of multi-axis joints that carry no body are massless; their coordinates
//! are fixed by the joint constraints through the penalty term (004 §2: a singular M is handled
//! by Φ_qᵀ α Φ_q). The ground is not a frame: its points are constants.
//!
//! # Mass matrix (constant)
//! M_k = Σ_bodies ∫ρ CᵀC dV with C = [I₃, a_x I₃, a_y I₃, a_z I₃] gives M_k = M4_k ⊗ I₃ with
//!
//! ```text
//! M4 = [[ m , m dᵀ ], [ m d , m d dᵀ + S ]],   d = ḡ − c̄,   S = ½ tr(J̄) I − J̄
//! ```
//! (ḡ the COM, J̄ the central inertia, S the central second moment of mass). Gravity gives the
//! constant generalized force Q_g = ∫ρ Cᵀ g dV = [m g ; m d_x g ; m d_y g ; m d_z g].
//!
//! # Constraints
//! Every scalar equation has the form Φ = A·B − k with A, B differences of [`Lin`] expressions
//! (so Φ is at most quadratic in q, Φ_q is linear and the Hessian constant):
//!
//! | source | equations |
//! |---|---|
//! | rigid body, per frame | u·u − 1, v·v − 1, w·w − 1, u·v, v·w, w·u |
//! | revolute axis (c̄, ū) | p_K(c̄) − p_P(c̄) = 0 (3), d_K(ū)·d_P(ē_i) = 0 (2) |
//! | prismatic axis ū | d_K(ū)·d_P(ē_i) = 0 (2), d_K(ē₁)·d_P(ē₂) = 0 (1), d_P(ē_i)·(p_K(c̄) − p_P(c̄)) = 0 (2) |
//! | cut joint `PointDot` | e·(r₁ − r₂) |
//! | cut joint `DirDot` | e₁·e₂ |
//!
//! (ē₁, ē₂ ⊥ ū in the reference configuration.) The tree-joint and rigid-body equations are
//! independent: redundant ones are harmless for the penalty term itself (004 §2), but the
//! iterated multipliers would drift in the null space of Φ_qᵀ, where they still act through the
//! constraint Hessian, and spoil Newton's convergence. (Cut joints are taken as the model
//! gives them.) With Φ = A·B − k:
//! Φ_q = Bᵀ A_q + Aᵀ B_q and Φ̇_q q̇ = 2 Ȧ·Ḃ.

use nalgebra::{Matrix3, Vector3};

use crate::mechanics::kinematics::Kinematics;
use crate::model::{AxisKind, ConstraintEq, Frame, FrameDir, FramePoint, Model, V3};
use crate::real::{v3, Real};

/// Coordinates per natural frame.
pub const NQ_FRAME: usize = 12;

/// A vector that is a constant linear combination of one frame's coordinates:
/// `coef[0] r + coef[1] u + coef[2] v + coef[3] w + konst`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lin {
    /// The natural frame, `None` for the ground (then only `konst` counts).
    pub frame: Option<usize>,
    /// Coefficients of r, u, v, w.
    pub coef: [f64; 4],
    /// Constant part [m or -].
    pub konst: V3,
}

impl Lin {
    /// A constant vector.
    pub fn constant(k: V3) -> Self {
        Lin {
            frame: None,
            coef: [0.0; 4],
            konst: k,
        }
    }

    /// Value at q.
    #[inline]
    pub fn eval<S: Real>(&self, q: &[S]) -> Vector3<S> {
        let mut out = v3::<S>(&self.konst);
        if let Some(f) = self.frame {
            let b = &q[NQ_FRAME * f..NQ_FRAME * (f + 1)];
            for (j, c) in self.coef.iter().enumerate() {
                if *c != 0.0 {
                    out += Vector3::new(b[3 * j] * *c, b[3 * j + 1] * *c, b[3 * j + 2] * *c);
                }
            }
        }
        out
    }

    /// Rate (or second rate) at q̇ (or q̈): the constant drops out.
    #[inline]
    pub fn rate<S: Real>(&self, qd: &[S]) -> Vector3<S> {
        let mut out = Vector3::zeros();
        if let Some(f) = self.frame {
            let b = &qd[NQ_FRAME * f..NQ_FRAME * (f + 1)];
            for (j, c) in self.coef.iter().enumerate() {
                if *c != 0.0 {
                    out += Vector3::new(b[3 * j] * *c, b[3 * j + 1] * *c, b[3 * j + 2] * *c);
                }
            }
        }
        out
    }

    /// `out += sign · (∂self/∂q)ᵀ g`.
    #[inline]
    pub fn add_grad<S: Real>(&self, sign: f64, g: &Vector3<S>, out: &mut [S]) {
        if let Some(f) = self.frame {
            let b = &mut out[NQ_FRAME * f..NQ_FRAME * (f + 1)];
            for (j, c) in self.coef.iter().enumerate() {
                let s = c * sign;
                if s != 0.0 {
                    for i in 0..3 {
                        b[3 * j + i] += g[i] * s;
                    }
                }
            }
        }
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
    fn frames(&self) -> [Option<usize>; 2] {
        [self.a.frame, self.b.and_then(|b| b.frame)]
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
}

impl NatEq {
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

    /// The natural frames this equation involves (at most four, possibly repeated).
    pub fn frames(&self) -> [Option<usize>; 4] {
        let [a, b] = self.a.frames();
        let [c, d] = self.b.frames();
        [a, b, c, d]
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
    /// Number of natural frames (= number of axes).
    pub n_frames: usize,
    /// Number of natural coordinates, 12 per frame.
    pub nq: usize,
    /// Reference point c̄_k of every frame [m].
    pub origin_ref: Vec<V3>,
    /// M4_k per frame (M_k = M4_k ⊗ I₃) [kg, kg m, kg m²].
    pub mass4: Vec<[[f64; 4]; 4]>,
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
    /// Reference directions ē₁, ē₂ ⊥ ū of prismatic axes (unused entries zero).
    pub perp_ref: Vec<[V3; 2]>,
}

/// Two unit vectors perpendicular to `u` and to each other.
fn perpendiculars(u: &V3) -> [V3; 2] {
    let t = if u.x.abs() < 0.9 { V3::x() } else { V3::y() };
    let e1 = u.cross(&t).normalize();
    let e2 = u.cross(&e1);
    [e1, e2]
}

impl NaturalModel {
    /// Builds the natural-coordinate model of `model` (allocates; not in the step).
    pub fn new(model: &Model) -> Self {
        let nf = model.axes.len();
        let nq = NQ_FRAME * nf;
        let origin_ref: Vec<V3> = model.axes.iter().map(|a| a.point_ref).collect();
        let point = |p: &FramePoint| -> Lin {
            match p.frame {
                Frame::Ground => Lin::constant(p.point_ref),
                Frame::Link(k) => {
                    let a = p.point_ref - origin_ref[k.0];
                    Lin {
                        frame: Some(k.0),
                        coef: [1.0, a.x, a.y, a.z],
                        konst: V3::zeros(),
                    }
                }
            }
        };
        let dir = |d: &FrameDir| -> Lin {
            match d.frame {
                Frame::Ground => Lin::constant(d.dir_ref),
                Frame::Link(k) => Lin {
                    frame: Some(k.0),
                    coef: [0.0, d.dir_ref.x, d.dir_ref.y, d.dir_ref.z],
                    konst: V3::zeros(),
                },
            }
        };
        let vec_of = |f: usize, j: usize| Lin {
            frame: Some(f),
            coef: {
                let mut c = [0.0; 4];
                c[j] = 1.0;
                c
            },
            konst: V3::zeros(),
        };

        // mass and gravity
        let mut mass4 = vec![[[0.0; 4]; 4]; nf];
        let mut gravity_force = vec![0.0; nq];
        let mut com = Vec::with_capacity(model.bodies.len());
        for b in &model.bodies {
            com.push(point(&FramePoint {
                frame: b.frame,
                point_ref: b.com_ref,
            }));
            let Frame::Link(k) = b.frame else { continue };
            let k = k.0;
            let m = b.mass_kg;
            let d = b.com_ref - origin_ref[k];
            let s: Matrix3<f64> =
                Matrix3::identity() * (0.5 * b.inertia_ref.trace()) - b.inertia_ref;
            let m4 = &mut mass4[k];
            m4[0][0] += m;
            for i in 0..3 {
                m4[0][i + 1] += m * d[i];
                m4[i + 1][0] += m * d[i];
                for j in 0..3 {
                    m4[i + 1][j + 1] += m * d[i] * d[j] + s[(i, j)];
                }
            }
            for i in 0..3 {
                gravity_force[NQ_FRAME * k + i] += m * model.gravity[i];
                for j in 0..3 {
                    gravity_force[NQ_FRAME * k + 3 * (j + 1) + i] += m * d[j] * model.gravity[i];
                }
            }
        }

        // constraints
        let mut eqs = Vec::new();
        let xyz = ["x", "y", "z"];
        let mut perp_ref = vec![[V3::zeros(); 2]; nf];
        for (k, ax) in model.axes.iter().enumerate() {
            let (u, v, w) = (vec_of(k, 1), vec_of(k, 2), vec_of(k, 3));
            for (lbl, a, b, kk) in [
                ("uu", u, u, 1.0),
                ("vv", v, v, 1.0),
                ("ww", w, w, 1.0),
                ("uv", u, v, 0.0),
                ("vw", v, w, 0.0),
                ("wu", w, u, 0.0),
            ] {
                eqs.push(NatEq {
                    name: format!("{}.rigid.{lbl}", ax.name),
                    a: Diff::one(a),
                    b: Diff::one(b),
                    k: kk,
                });
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
            match ax.kind {
                AxisKind::Revolute => {
                    let dk = dir(&FrameDir {
                        frame: child,
                        dir_ref: ax.dir_ref,
                    });
                    for (i, c) in xyz.iter().enumerate() {
                        eqs.push(NatEq {
                            name: format!("{}.point.{c}", ax.name),
                            a: Diff::two(pk, pp),
                            b: Diff::one(Lin::constant(V3::ith(i, 1.0))),
                            k: 0.0,
                        });
                    }
                    // axis parallel: d_K(ū) ⊥ d_P(ē₁), d_P(ē₂) (non-redundant, so that no
                    // multiplier can drift in a null space of Φ_qᵀ)
                    let perp = perpendiculars(&ax.dir_ref);
                    perp_ref[k] = perp;
                    for (i, e) in perp.iter().enumerate() {
                        eqs.push(NatEq {
                            name: format!("{}.axis.{i}", ax.name),
                            a: Diff::one(dk),
                            b: Diff::one(dir(&FrameDir {
                                frame: ax.parent,
                                dir_ref: *e,
                            })),
                            k: 0.0,
                        });
                    }
                }
                AxisKind::Prismatic => {
                    // same orientation, non-redundantly: d_K(ū) ⊥ d_P(ē₁), d_P(ē₂) and
                    // d_K(ē₁) ⊥ d_P(ē₂)
                    let perp = perpendiculars(&ax.dir_ref);
                    let dk = |d: V3| {
                        dir(&FrameDir {
                            frame: child,
                            dir_ref: d,
                        })
                    };
                    let dp = |d: V3| {
                        dir(&FrameDir {
                            frame: ax.parent,
                            dir_ref: d,
                        })
                    };
                    for (lbl, a, b) in [
                        ("axis.0", ax.dir_ref, perp[0]),
                        ("axis.1", ax.dir_ref, perp[1]),
                        ("twist", perp[0], perp[1]),
                    ] {
                        eqs.push(NatEq {
                            name: format!("{}.{lbl}", ax.name),
                            a: Diff::one(dk(a)),
                            b: Diff::one(dp(b)),
                            k: 0.0,
                        });
                    }
                    perp_ref[k] = perp;
                    for (i, e) in perp.iter().enumerate() {
                        eqs.push(NatEq {
                            name: format!("{}.line.{i}", ax.name),
                            a: Diff::one(dir(&FrameDir {
                                frame: ax.parent,
                                dir_ref: *e,
                            })),
                            b: Diff::two(pk, pp),
                            k: 0.0,
                        });
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
            eqs.push(NatEq {
                name: c.name.clone(),
                a,
                b,
                k: 0.0,
            });
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
            for v in ["r", "u", "v", "w"] {
                for c in xyz {
                    labels.push(format!("{}.{v}.{c}", ax.name));
                }
            }
        }
        NaturalModel {
            n_frames: nf,
            nq,
            origin_ref,
            mass4,
            gravity_force,
            eqs,
            cylinders,
            com,
            labels,
            perp_ref,
        }
    }

    /// Number of constraint equations.
    pub fn n_eqs(&self) -> usize {
        self.eqs.len()
    }

    /// `out = M a` (M = blockdiag(M4_k ⊗ I₃)).
    #[inline]
    pub fn mass_times<S: Real>(&self, a: &[S], out: &mut [S]) {
        for (k, m4) in self.mass4.iter().enumerate() {
            let o = NQ_FRAME * k;
            for r in 0..4 {
                for i in 0..3 {
                    let mut acc = S::zero();
                    for (c, mrc) in m4[r].iter().enumerate() {
                        if *mrc != 0.0 {
                            acc += a[o + 3 * c + i] * *mrc;
                        }
                    }
                    out[o + 3 * r + i] = acc;
                }
            }
        }
    }

    /// Entry M_ij of the (constant) mass matrix.
    #[inline]
    pub fn mass_entry(&self, i: usize, j: usize) -> f64 {
        let (fi, fj) = (i / NQ_FRAME, j / NQ_FRAME);
        if fi != fj || i % 3 != j % 3 {
            return 0.0;
        }
        self.mass4[fi][(i % NQ_FRAME) / 3][(j % NQ_FRAME) / 3]
    }

    /// Rotation A = [u v w] of a frame from q (identity for the ground).
    pub fn rotation(&self, q: &[f64], f: Frame) -> Matrix3<f64> {
        match f {
            Frame::Ground => Matrix3::identity(),
            Frame::Link(k) => {
                let b = &q[NQ_FRAME * k.0..];
                Matrix3::new(b[3], b[6], b[9], b[4], b[7], b[10], b[5], b[8], b[11])
            }
        }
    }

    /// Angular velocity ω = ½ Σ e × ė over e ∈ {u, v, w} (with q̈ for `qd`: ω̇ = ½ Σ e × ë).
    pub fn angular(&self, q: &[f64], qd: &[f64], f: Frame) -> V3 {
        match f {
            Frame::Ground => V3::zeros(),
            Frame::Link(k) => {
                let o = NQ_FRAME * k.0;
                let mut w = V3::zeros();
                for j in 1..4 {
                    let e = V3::new(q[o + 3 * j], q[o + 3 * j + 1], q[o + 3 * j + 2]);
                    let ed = V3::new(qd[o + 3 * j], qd[o + 3 * j + 1], qd[o + 3 * j + 2]);
                    w += e.cross(&ed);
                }
                w * 0.5
            }
        }
    }

    /// Natural coordinates q, q̇, q̈ from the relative z, ż, z̈ of `st` (recursive kinematics of
    /// the tree: r = x + A c̄, ṙ = ṡ + ω × r, r̈ = s̈ + ω̇ × r + ω × ṙ, ė = ω × e,
    /// ë = ω̇ × e + ω × ė, with Ż_k = Ż⁰_k + Σ_path b_i z̈_i).
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
            let o = NQ_FRAME * k;
            let r = kin.pos[k] + a * self.origin_ref[k];
            let rd = sv + w.cross(&r);
            let rdd = av + aw.cross(&r) + w.cross(&rd);
            for i in 0..3 {
                q[o + i] = r[i];
                qd[o + i] = rd[i];
                qdd[o + i] = rdd[i];
            }
            for j in 0..3 {
                let e: V3 = a.column(j).into();
                let ed = w.cross(&e);
                let edd = aw.cross(&e) + w.cross(&ed);
                for i in 0..3 {
                    q[o + 3 * (j + 1) + i] = e[i];
                    qd[o + 3 * (j + 1) + i] = ed[i];
                    qdd[o + 3 * (j + 1) + i] = edd[i];
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
                let a = p - self.origin_ref[k.0];
                Lin {
                    frame: Some(k.0),
                    coef: [1.0, a.x, a.y, a.z],
                    konst: V3::zeros(),
                }
            }
        }
    }

    /// The [`Lin`] of a direction with reference components `d` on frame `f`.
    pub fn dir_lin(&self, f: Frame, d: &V3) -> Lin {
        match f {
            Frame::Ground => Lin::constant(*d),
            Frame::Link(k) => Lin {
                frame: Some(k.0),
                coef: [0.0, d.x, d.y, d.z],
                konst: V3::zeros(),
            },
        }
    }

    /// Kinetic energy ½ q̇ᵀ M q̇ [J].
    pub fn kinetic_energy(&self, qd: &[f64]) -> f64 {
        let mut ke = 0.0;
        for (k, m4) in self.mass4.iter().enumerate() {
            let o = NQ_FRAME * k;
            for r in 0..4 {
                for c in 0..4 {
                    if m4[r][c] != 0.0 {
                        for i in 0..3 {
                            ke += 0.5 * m4[r][c] * qd[o + 3 * r + i] * qd[o + 3 * c + i];
                        }
                    }
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

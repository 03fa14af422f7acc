//! The semi-recursive open-loop equations of motion (000 §2.1, eqs. 6–12).
//!
//! For body j (COM g_j, mass m_j, inertia J_j = A J̄ Aᵀ, frame velocity Z_j = [ṡ; ω]):
//!
//! ```text
//! M̄_j = [[m I, −m g̃], [m g̃, J − m g̃ g̃]]                                    (000 eq. 9)
//! Q̄_j = [f − m ω̃ ġ ; τ − ω̃ J ω + g̃ (f − m ω̃ ġ)],  ġ = ṡ + ω × g           (000 eq. 10,
//!        corrected centripetal term, reference note 000-A.1 / 003a F.1)
//! a point force F at r adds [F ; r × F] to Q̄
//! M̄Σ_k = Σ_{bodies on k} M̄_j + Σ_{children c} M̄Σ_c                         (leaves → root)
//! QΣ_k = Σ_{bodies on k} (Q̄_j − M̄_j Ż⁰_j) + Σ_{children c} QΣ_c
//! M′_ik = b_iᵀ M̄Σ_k b_k  (i an ancestor of k or k itself),  Q′_i = b_iᵀ QΣ_i   (000 eqs. 11–12)
//! ```

pub mod penalty;
pub mod recursive_mass;
pub mod schur;

use nalgebra::{Matrix3, Vector3};

use crate::mechanics::kinematics::Kinematics;
use crate::model::{AxisId, Frame, Model};
use crate::solver::real::{m3, v3, Real};

/// A Z-form (origin-referred) inertia M̄ = [[m I, −h̃], [h̃, J_O]] with h = m g (first moment)
/// and J_O = J + m(|g|² I − g gᵀ) (000 eq. 9 with J − m g̃ g̃ expanded). Sums of body inertias
/// keep this form, so the accumulation M̄Σ needs 13 numbers instead of a 6 × 6 matrix.
#[derive(Debug, Clone, Copy)]
pub struct SpatialInertia<S: Real> {
    /// Σ m [kg].
    pub m: S,
    /// Σ m g [kg m].
    pub h: Vector3<S>,
    /// Σ J_O [kg m²].
    pub jo: Matrix3<S>,
}

impl<S: Real> SpatialInertia<S> {
    /// Zero inertia.
    pub fn zero() -> Self {
        SpatialInertia {
            m: S::zero(),
            h: Vector3::zeros(),
            jo: Matrix3::zeros(),
        }
    }

    /// M̄ of one body: mass `m`, COM `g`, central inertia `j` (global axes).
    #[inline]
    pub fn body(m: S, g: &Vector3<S>, j: &Matrix3<S>) -> Self {
        let gg = g.dot(g);
        let jo = j + (Matrix3::identity() * gg - g * g.transpose()) * m;
        SpatialInertia { m, h: g * m, jo }
    }

    /// M̄ [v; ω] = [m v − h × ω ; h × v + J_O ω].
    #[inline]
    pub fn mul(&self, v: &Vector3<S>, w: &Vector3<S>) -> (Vector3<S>, Vector3<S>) {
        (v * self.m - self.h.cross(w), self.h.cross(v) + self.jo * w)
    }

    /// In-place sum.
    #[inline]
    pub fn add(&mut self, o: &Self) {
        self.m += o.m;
        self.h += o.h;
        self.jo += o.jo;
    }
}

/// Accumulated inertias and forces, and the open-loop M′ and Q′.
#[derive(Debug, Clone)]
pub struct Dynamics<S: Real> {
    /// M̄Σ_k per axis.
    pub msum: Vec<SpatialInertia<S>>,
    /// QΣ_k per axis, force part [N].
    pub qsum_f: Vec<Vector3<S>>,
    /// QΣ_k per axis, moment part (about the origin) [N m].
    pub qsum_t: Vec<Vector3<S>>,
    /// M′, row-major n × n [kg m² / kg m / kg].
    pub mass: Vec<S>,
    /// Q′ (n) [N m or N].
    pub force: Vec<S>,
    /// M̄_j of the bodies alone, per axis, before cylinder forces and accumulation (a copy kept
    /// by `Evaluator::evaluate` for the pressure columns of the tangent).
    pub body_msum: Vec<SpatialInertia<S>>,
    /// Body force terms per axis (force part) before cylinder forces and accumulation.
    pub body_qf: Vec<Vector3<S>>,
    /// Body force terms per axis (moment part) before cylinder forces and accumulation.
    pub body_qt: Vec<Vector3<S>>,
    /// Body COM positions g_j [m] of the last `bodies*` call.
    pub com: Vec<Vector3<S>>,
    /// Body inertias J_j in global axes [kg m²] of the last `bodies*` call.
    pub inertia: Vec<Matrix3<S>>,
    /// Whether `accumulate` forms the dense M′ (`mass`); when false only Q′ is projected and
    /// M′ v is taken by the tree passes of `mass_times` (recursive_mass.rs). Default true.
    pub form_mass: bool,
    /// M′ v of the last `mass_times`.
    pub mass_v: Vec<S>,
    /// Whether `mass_v` holds M′ z̈ of the current point, set by the caller who computed or
    /// lifted it; the penalty residual then uses it instead of recomputing, and clears it.
    pub mass_v_valid: bool,
    /// Scratch of `mass_times`: Ẑ of the parent, per axis (velocity and angular parts).
    pub rec_pv: Vec<Vector3<S>>,
    /// Scratch of `mass_times`.
    pub rec_pw: Vec<Vector3<S>>,
    /// Scratch of `mass_times`: Ẑ per axis.
    pub rec_zv: Vec<Vector3<S>>,
    /// Scratch of `mass_times`.
    pub rec_zw: Vec<Vector3<S>>,
    /// Scratch of `mass_times`: G per axis (force and moment parts).
    pub rec_gf: Vec<Vector3<S>>,
    /// Scratch of `mass_times`.
    pub rec_gt: Vec<Vector3<S>>,
}

/// The COM position g_j and the inertia J_j of a body in global axes.
#[inline]
pub fn body_com_inertia<S: Real>(
    model: &Model,
    kin: &Kinematics<S>,
    j: usize,
) -> (Vector3<S>, Matrix3<S>) {
    let b = &model.bodies[j];
    let a = kin.frame_rot(b.frame);
    let g = kin.frame_pos(b.frame) + a * v3::<S>(&b.com_ref);
    let jj = a * m3::<S>(&b.inertia_ref) * a.transpose();
    (g, jj)
}

impl<S: Real> Dynamics<S> {
    /// Buffers for `n` axes.
    pub fn new(n: usize, n_bodies: usize) -> Self {
        Dynamics {
            body_msum: vec![SpatialInertia::zero(); n],
            body_qf: vec![Vector3::zeros(); n],
            body_qt: vec![Vector3::zeros(); n],
            com: vec![Vector3::zeros(); n_bodies],
            inertia: vec![Matrix3::zeros(); n_bodies],
            msum: vec![SpatialInertia::zero(); n],
            qsum_f: vec![Vector3::zeros(); n],
            qsum_t: vec![Vector3::zeros(); n],
            mass: vec![S::zero(); n * n],
            force: vec![S::zero(); n],
            form_mass: true,
            mass_v: vec![S::zero(); n],
            mass_v_valid: false,
            rec_pv: vec![Vector3::zeros(); n],
            rec_pw: vec![Vector3::zeros(); n],
            rec_zv: vec![Vector3::zeros(); n],
            rec_zw: vec![Vector3::zeros(); n],
            rec_gf: vec![Vector3::zeros(); n],
            rec_gt: vec![Vector3::zeros(); n],
        }
    }

    /// Body inertia and gravity/inertial force terms into the per-axis slots (needs positions and
    /// velocities). Clears the slots first.
    pub fn bodies(&mut self, model: &Model, kin: &Kinematics<S>) {
        for m in self.msum.iter_mut() {
            *m = SpatialInertia::zero();
        }
        for (f, t) in self.qsum_f.iter_mut().zip(self.qsum_t.iter_mut()) {
            *f = Vector3::zeros();
            *t = Vector3::zeros();
        }
        let grav = v3::<S>(&model.gravity);
        for ((b, com), inertia) in model
            .bodies
            .iter()
            .zip(self.com.iter_mut())
            .zip(self.inertia.iter_mut())
        {
            let Frame::Link(k) = b.frame else {
                *com = v3(&b.com_ref);
                *inertia = m3(&b.inertia_ref);
                continue;
            };
            let k = k.0;
            let a = kin.rot[k];
            let g = kin.pos[k] + a * v3::<S>(&b.com_ref);
            let jj = a * m3::<S>(&b.inertia_ref) * a.transpose();
            *com = g;
            *inertia = jj;
            let m = S::from(b.mass_kg);
            let mb = SpatialInertia::body(m, &g, &jj);
            self.msum[k].add(&mb);
            let (sd, w) = (kin.vel_v[k], kin.vel_w[k]);
            let gd = sd + w.cross(&g);
            let f = grav * m - w.cross(&gd) * m; // f − m ω̃ ġ
            let tau = -w.cross(&(jj * w)) + g.cross(&f); // τ − ω̃Jω + g̃(f − m ω̃ ġ), τ = 0
            let (af, at) = mb.mul(&kin.acc0_v[k], &kin.acc0_w[k]); // M̄_j Ż⁰_j
            self.qsum_f[k] += f - af;
            self.qsum_t[k] += tau - at;
        }
    }

    /// Keeps a copy of the per-axis body terms (see `body_msum`).
    pub fn save_body_terms(&mut self) {
        self.body_msum.copy_from_slice(&self.msum);
        self.body_qf.copy_from_slice(&self.qsum_f);
        self.body_qt.copy_from_slice(&self.qsum_t);
    }

    /// Sets the per-axis slots to the saved body terms of an f64 evaluation at the same point.
    pub fn lift_body_terms(&mut self, base: &Dynamics<f64>) {
        for (d, s) in self.msum.iter_mut().zip(base.body_msum.iter()) {
            *d = SpatialInertia {
                m: S::from(s.m),
                h: v3(&s.h),
                jo: m3(&s.jo),
            };
        }
        self.lift_body_forces(base);
    }

    /// The force half of [`Dynamics::lift_body_terms`]: the saved body forces and torques alone
    /// (for [`Dynamics::accumulate_forces`]).
    pub fn lift_body_forces(&mut self, base: &Dynamics<f64>) {
        for (d, s) in self.qsum_f.iter_mut().zip(base.body_qf.iter()) {
            *d = v3(s);
        }
        for (d, s) in self.qsum_t.iter_mut().zip(base.body_qt.iter()) {
            *d = v3(s);
        }
    }

    /// Adds a point force `f` [N] at global point `r` on frame `frame`: [F ; r × F] in Z form.
    #[inline]
    pub fn add_point_force(&mut self, frame: Frame, r: &Vector3<S>, f: &Vector3<S>) {
        if let Frame::Link(k) = frame {
            self.qsum_f[k.0] += f;
            self.qsum_t[k.0] += r.cross(f);
        }
    }

    /// Adds a torque `t` [N m] (global axes) on frame `frame`: [0 ; T] in Z form.
    #[inline]
    pub fn add_torque(&mut self, frame: Frame, t: &Vector3<S>) {
        if let Frame::Link(k) = frame {
            self.qsum_t[k.0] += t;
        }
    }

    /// Leaves-to-root accumulation and the projection onto the joint vectors (000 eqs. 11–12).
    pub fn accumulate(&mut self, model: &Model, kin: &Kinematics<S>) {
        self.accumulate_inertia(model, kin);
        self.accumulate_forces(model, kin);
    }

    /// The inertia half of [`Dynamics::accumulate`]: the leaves-to-root composite inertias (also
    /// read by the tree passes of `recursive_mass.rs`) and, when formed, M′ (000 eq. 12).
    #[inline(always)]
    pub fn accumulate_inertia(&mut self, model: &Model, kin: &Kinematics<S>) {
        let n = model.n_coords();
        for k in (0..n).rev() {
            if let Frame::Link(p) = model.axes[k].parent {
                let ms = self.msum[k];
                self.msum[p.0].add(&ms);
            }
        }
        if !self.form_mass {
            return;
        }
        for k in 0..n {
            let (bv, bw) = (kin.bv[k], kin.bw[k]);
            let (mv, mw) = self.msum[k].mul(&bv, &bw);
            let mut cur = Frame::Link(AxisId(k));
            while let Frame::Link(i) = cur {
                let i = i.0;
                let v = kin.bv[i].dot(&mv) + kin.bw[i].dot(&mw);
                self.mass[i * n + k] = v;
                self.mass[k * n + i] = v;
                cur = model.axes[i].parent;
            }
        }
    }

    /// The force half of [`Dynamics::accumulate`]: the leaves-to-root sums of the body forces
    /// and their projection Q′ onto the joint vectors (000 eqs. 11–12), without M′. The pressure
    /// columns of the tangent use it alone: M′ does not depend on the pressures.
    #[inline(always)]
    pub fn accumulate_forces(&mut self, model: &Model, kin: &Kinematics<S>) {
        let n = model.n_coords();
        for k in (0..n).rev() {
            if let Frame::Link(p) = model.axes[k].parent {
                let (qf, qt) = (self.qsum_f[k], self.qsum_t[k]);
                self.qsum_f[p.0] += qf;
                self.qsum_t[p.0] += qt;
            }
        }
        for k in 0..n {
            self.force[k] = kin.bv[k].dot(&self.qsum_f[k]) + kin.bw[k].dot(&self.qsum_t[k]);
        }
    }
}

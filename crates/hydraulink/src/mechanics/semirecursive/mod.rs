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

use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};

use crate::mechanics::kinematics::Kinematics;
use crate::model::{Frame, Model};
use crate::real::{m3, v3, Real};

/// Accumulated inertias and forces, and the open-loop M′ and Q′.
#[derive(Debug, Clone)]
pub struct Dynamics<S: Real> {
    /// M̄Σ_k per axis.
    pub msum: Vec<Matrix6<S>>,
    /// QΣ_k per axis.
    pub qsum: Vec<Vector6<S>>,
    /// M′, row-major n × n [kg m² / kg m / kg].
    pub mass: Vec<S>,
    /// Q′ (n) [N m or N].
    pub force: Vec<S>,
}

/// Z-form inertia of a body (000 eq. 9).
#[inline]
pub fn body_mass_matrix<S: Real>(m: S, g: &Vector3<S>, j: &Matrix3<S>) -> Matrix6<S> {
    let gt = Matrix3::new(S::zero(), -g.z, g.y, g.z, S::zero(), -g.x, -g.y, g.x, S::zero());
    let mut mb = Matrix6::zeros();
    mb.fixed_view_mut::<3, 3>(0, 0).copy_from(&(Matrix3::identity() * m));
    mb.fixed_view_mut::<3, 3>(0, 3).copy_from(&(gt * (-m)));
    mb.fixed_view_mut::<3, 3>(3, 0).copy_from(&(gt * m));
    mb.fixed_view_mut::<3, 3>(3, 3).copy_from(&(j - gt * gt * m));
    mb
}

/// The COM position g_j and the inertia J_j of a body in global axes.
#[inline]
pub fn body_com_inertia<S: Real>(model: &Model, kin: &Kinematics<S>, j: usize) -> (Vector3<S>, Matrix3<S>) {
    let b = &model.bodies[j];
    let a = kin.frame_rot(b.frame);
    let g = kin.frame_pos(b.frame) + a * v3::<S>(&b.com_ref);
    let jj = a * m3::<S>(&b.inertia_ref) * a.transpose();
    (g, jj)
}

/// Z-form generalized force of a point force `f` at global point `r`: [F ; r × F].
#[inline]
pub fn point_force<S: Real>(r: &Vector3<S>, f: &Vector3<S>) -> Vector6<S> {
    let t = r.cross(f);
    Vector6::new(f.x, f.y, f.z, t.x, t.y, t.z)
}

impl<S: Real> Dynamics<S> {
    /// Buffers for `n` axes.
    pub fn new(n: usize) -> Self {
        Dynamics {
            msum: vec![Matrix6::zeros(); n],
            qsum: vec![Vector6::zeros(); n],
            mass: vec![S::zero(); n * n],
            force: vec![S::zero(); n],
        }
    }

    /// Body inertia and gravity/inertial force terms into the per-axis slots (needs positions and
    /// velocities). Clears the slots first.
    pub fn bodies(&mut self, model: &Model, kin: &Kinematics<S>) {
        for k in 0..self.msum.len() {
            self.msum[k] = Matrix6::zeros();
            self.qsum[k] = Vector6::zeros();
        }
        let grav = v3::<S>(&model.gravity);
        for (j, b) in model.bodies.iter().enumerate() {
            let Frame::Link(k) = b.frame else { continue };
            let m = S::from(b.mass_kg);
            let (g, jj) = body_com_inertia(model, kin, j);
            let mb = body_mass_matrix(m, &g, &jj);
            let (sd, w) = (kin.vel_v[k.0], kin.vel_w[k.0]);
            let gd = sd + w.cross(&g);
            let f = grav * m - w.cross(&gd) * m; // f − m ω̃ ġ
            let tau = -w.cross(&(jj * w)) + g.cross(&f); // τ − ω̃Jω + g̃(f − m ω̃ ġ), τ = 0
            let acc0 = Vector6::new(
                kin.acc0_v[k.0].x,
                kin.acc0_v[k.0].y,
                kin.acc0_v[k.0].z,
                kin.acc0_w[k.0].x,
                kin.acc0_w[k.0].y,
                kin.acc0_w[k.0].z,
            );
            let qb = Vector6::new(f.x, f.y, f.z, tau.x, tau.y, tau.z) - mb * acc0;
            self.msum[k.0] += mb;
            self.qsum[k.0] += qb;
        }
    }

    /// Adds a point force `f` [N] at global point `r` on frame `frame`.
    #[inline]
    pub fn add_point_force(&mut self, frame: Frame, r: &Vector3<S>, f: &Vector3<S>) {
        if let Frame::Link(k) = frame {
            self.qsum[k.0] += point_force(r, f);
        }
    }

    /// Leaves-to-root accumulation and the projection onto the joint vectors (000 eqs. 11–12).
    pub fn accumulate(&mut self, model: &Model, kin: &Kinematics<S>) {
        let n = model.n_coords();
        for k in (0..n).rev() {
            if let Frame::Link(p) = model.axes[k].parent {
                let (ms, qs) = (self.msum[k], self.qsum[k]);
                self.msum[p.0] += ms;
                self.qsum[p.0] += qs;
            }
        }
        for x in self.mass.iter_mut() {
            *x = S::zero();
        }
        for k in 0..n {
            let bk = Vector6::new(kin.bv[k].x, kin.bv[k].y, kin.bv[k].z, kin.bw[k].x, kin.bw[k].y, kin.bw[k].z);
            let mb = self.msum[k] * bk;
            self.force[k] = bk.dot(&self.qsum[k]);
            let mut cur = Frame::Link(crate::model::AxisId(k));
            while let Frame::Link(i) = cur {
                let i = i.0;
                let bi = Vector6::new(kin.bv[i].x, kin.bv[i].y, kin.bv[i].z, kin.bw[i].x, kin.bw[i].y, kin.bw[i].z);
                let v = bi.dot(&mb);
                self.mass[i * n + k] = v;
                self.mass[k * n + i] = v;
                cur = model.axes[i].parent;
            }
        }
    }
}

//! Products with the semi-recursive mass matrix without forming it: M′ v in O(n) by one
//! root-to-leaves and one leaves-to-root pass over the tree (docs/theory chapter 3, section
//! "Tree-structured residual and Schur-reduced tangent"), and the kinetic energy body by body.
//!
//! With M′ = Rᵀ M̄ R (000 eq. 11) and the accumulated inertias M̄Σ_k of `Dynamics::accumulate`:
//!
//! ```text
//! Ẑ_k = Ẑ_parent(k) + b_k v_k                                  (root → leaves, Ẑ_ground = 0)
//! G_k = M̄Σ_k b_k v_k + Σ_{children c} G_c                       (leaves → root)
//! (M′ v)_k = b_kᵀ (M̄Σ_k Ẑ_parent(k) + G_k)
//! ```
//!
//! Forming M′ costs one 6-vector product per (axis, ancestor) pair, O(n²) for a chain, and
//! M′ v another n²; the passes above cost two spatial-inertia products per axis. Used by the
//! penalty residual when the model is a tree (no projection needs M′ itself).

use nalgebra::Vector3;

/// Smallest number of joint coordinates for which the penalty step uses the tree passes: below
/// it forming the small dense M′ is cheaper (callgrind on the chain benchmark: the passes cost
/// 5 % more instructions per run at n = 2 and 3 % more at n = 4, and 4 % less at n = 8).
pub const MIN_COORDS: usize = 6;

use crate::mechanics::kinematics::Kinematics;
use crate::mechanics::semirecursive::Dynamics;
use crate::model::{Frame, Model};
use crate::solver::real::Real;

impl<S: Real> Dynamics<S> {
    /// M′ v into `self.mass_v` (n), from the accumulated M̄Σ and the joint vectors b_k of `kin`
    /// (after [`Dynamics::accumulate`]). O(n); allocation-free.
    pub fn mass_times(&mut self, model: &Model, kin: &Kinematics<S>, v: &[S]) {
        let n = model.n_coords();
        // root → leaves: Ẑ_k of the parent (rec_pv, rec_pw) and of the axis itself (rec_zv, rec_zw)
        for k in 0..n {
            let (pv, pw) = match model.axes[k].parent {
                Frame::Link(p) => (self.rec_zv[p.0], self.rec_zw[p.0]),
                Frame::Ground => (Vector3::zeros(), Vector3::zeros()),
            };
            let (bv, bw) = (kin.bv[k] * v[k], kin.bw[k] * v[k]);
            self.rec_pv[k] = pv;
            self.rec_pw[k] = pw;
            self.rec_zv[k] = pv + bv;
            self.rec_zw[k] = pw + bw;
            // G_k starts as M̄Σ_k b_k v_k
            let (gf, gt) = self.msum[k].mul(&bv, &bw);
            self.rec_gf[k] = gf;
            self.rec_gt[k] = gt;
        }
        // leaves → root: G_k += Σ_children G_c (axes are ordered parents first)
        for k in (0..n).rev() {
            if let Frame::Link(p) = model.axes[k].parent {
                let (gf, gt) = (self.rec_gf[k], self.rec_gt[k]);
                self.rec_gf[p.0] += gf;
                self.rec_gt[p.0] += gt;
            }
        }
        for k in 0..n {
            let (f, t) = self.msum[k].mul(&self.rec_pv[k], &self.rec_pw[k]);
            self.mass_v[k] =
                kin.bv[k].dot(&(f + self.rec_gf[k])) + kin.bw[k].dot(&(t + self.rec_gt[k]));
        }
    }
}

/// KE = ½ Σ_k Z_kᵀ M̄_k Z_k, with M̄_k the bodies on axis k (`Dynamics::body_msum`) and Z_k the
/// frame velocities of `kin`: equal to ½ żᵀ M′ ż at the rates ż of the last
/// `Kinematics::velocities` (000 eq. 11), in O(n).
pub fn kinetic_energy(model: &Model, kin: &Kinematics<f64>, dynamics: &Dynamics<f64>) -> f64 {
    let mut ke = 0.0;
    for k in 0..model.n_coords() {
        let (zv, zw) = (kin.vel_v[k], kin.vel_w[k]);
        let (f, t) = dynamics.body_msum[k].mul(&zv, &zw);
        ke += 0.5 * (zv.dot(&f) + zw.dot(&t));
    }
    ke
}

#[cfg(test)]
mod tests {
    use crate::mechanics::assembly::Evaluator;
    use crate::ModelSpec;

    /// M′ v by the tree passes equals the formed M′ times v, on a branched tree with a prismatic
    /// axis (the quick-return's tree, loop rows ignored) at a non-trivial configuration.
    #[test]
    fn mass_times_matches_formed_mass_matrix() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/quickreturn.toml");
        let spec: ModelSpec = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let m = crate::pipeline::compile(&spec).unwrap();
        let n = m.n_coords();
        let mut ev = Evaluator::<f64>::new(&m);
        let z: Vec<f64> = (0..n).map(|i| 0.3 + 0.17 * i as f64).collect();
        let zd: Vec<f64> = (0..n).map(|i| 0.5 - 0.21 * i as f64).collect();
        let p = vec![2.0e6; m.n_volumes()];
        let spools = vec![0.0; m.n_valve_positions()];
        ev.evaluate(&m, &z, &zd, &p, &spools, false);
        let v: Vec<f64> = (0..n).map(|i| 1.0 - 0.37 * i as f64).collect();
        ev.dynamics.mass_times(&m, &ev.kin, &v);
        let mut ke_dense = 0.0;
        for i in 0..n {
            let dense: f64 = (0..n).map(|j| ev.dynamics.mass[i * n + j] * v[j]).sum();
            let scale = (0..n)
                .map(|j| ev.dynamics.mass[i * n + j].abs())
                .sum::<f64>();
            assert!(
                (ev.dynamics.mass_v[i] - dense).abs() <= 1e-13 * scale.max(1.0),
                "row {i}: {} vs {dense}",
                ev.dynamics.mass_v[i]
            );
            let row: f64 = (0..n).map(|j| ev.dynamics.mass[i * n + j] * zd[j]).sum();
            ke_dense += 0.5 * zd[i] * row;
        }
        let ke = super::kinetic_energy(&m, &ev.kin, &ev.dynamics);
        assert!(
            (ke - ke_dense).abs() <= 1e-12 * ke_dense.abs().max(1.0),
            "{ke} vs {ke_dense}"
        );
    }
}

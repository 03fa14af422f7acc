//! `Buffers`: the scratch every formulation shares (evaluators, history terms, Newton x and Δx,
//! the tangent and projection LUs, labels, counters), allocated once in [`Buffers::new`]. The
//! formulation's own buffers are beside them in `crate::pipeline::workspace::Workspace`. The step loop
//! allocates nothing (checked by `tests/no_alloc.rs`).

use num_dual::Dual64;

use crate::mechanics::assembly::Evaluator;
use crate::model::Model;
use crate::solver::linalg::DenseLu;

/// Trapezoidal history terms of the step (000 eqs. 33–34).
#[derive(Debug, Clone)]
pub struct History {
    /// ẑ̇_k = −(2/Δt z_k + ż_k).
    pub zd_hat: Vec<f64>,
    /// ẑ̈_k = −(4/Δt² z_k + 4/Δt ż_k + z̈_k).
    pub zdd_hat: Vec<f64>,
    /// p̂̇_k = −(2/Δt p_k + ṗ_k).
    pub pd_hat: Vec<f64>,
    /// ŵ̇_k = −(2/Δt w_k + ẇ_k) of the friction states (003 Pub II Appendix A).
    pub wd_hat: Vec<f64>,
    /// ê̇_k = −(2/Δt e_k + ė_k) of the elements' internal states.
    pub ed_hat: Vec<f64>,
}

pub use crate::solver::newton::Counters;

/// Scratch memory of the step shared by every formulation.
#[derive(Debug)]
pub struct Buffers {
    /// f64 evaluation buffers.
    pub ev: Evaluator<f64>,
    /// Dual evaluation buffers (tangent columns).
    pub evd: Evaluator<Dual64>,
    /// History terms.
    pub hist: History,
    /// Newton tangent and its LU.
    pub tangent: DenseLu,
    /// Projection matrix M′ + (Δt²/4) α Φ_zᵀ Φ_z and its LU.
    pub projection: DenseLu,
    /// The projection matrix's Cholesky factors, kept for large penalty systems (`Buffers::new`;
    /// the LU above is the fallback).
    pub projection_chol: Option<crate::solver::linalg::DenseCholesky>,
    /// Newton unknowns x = [z; p; w; e] of the step being solved (w: friction states, e: the
    /// elements' internal states).
    pub x: Vec<f64>,
    /// Newton increment.
    pub dx: Vec<f64>,
    /// Multipliers λ of the step being solved.
    pub lambda: Vec<f64>,
    /// Spool positions at the end of the step being solved.
    pub spool_new: Vec<f64>,
    /// Diagonal of the last tangent (for the weighted residual in error messages).
    pub diag: Vec<f64>,
    /// Scratch n-vector.
    pub tmp: Vec<f64>,
    /// Scratch n-vector.
    pub tmp2: Vec<f64>,
    /// Work counters since the start.
    pub counters: Counters,
    /// Whether `tangent` holds valid factors that may be reused (Jacobian-reuse policy).
    pub tangent_valid: bool,
    /// Identity of the tangent the workspace's factors belong to: equal to
    /// `State::tangent.id` when they are the state's, else restored from the state at the next
    /// step (`state::TangentCache`).
    pub tangent_id: u64,
    /// The tangent refreshed during the step being solved, committed to the state with it.
    pub tangent_pending: crate::state::TangentCache,
    /// Direction (sign) of each friction element's velocity where the tangent was last
    /// evaluated (cylinders, then joints); a reversal since makes the next step refresh it.
    pub friction_tangent_sign: Vec<f64>,
    /// Kinematics of the stage `elements` (the committed state); empty without elements.
    pub element_kin: crate::mechanics::kinematics::Kinematics<f64>,
    /// Port states and efforts of the elements at the committed state (outputs).
    pub element_values: crate::elements::component::ElementValues,
    /// Scratch of the stage `world` (`None` without a terrain).
    pub world: Option<crate::terrain::data::WorldScratch>,
}

impl Buffers {
    /// Factors the freshly assembled tangent of `tangent` and records it as reusable; false
    /// (and no reusable tangent) when it is singular. (Counted by `integrator::newton::solve`.)
    pub(crate) fn factor_tangent(&mut self) -> bool {
        self.tangent_valid = false;
        if self.tangent.factor().is_err() {
            return false;
        }
        self.tangent_valid = true;
        true
    }

    /// Allocates everything for `model`.
    pub fn new(model: &Model) -> Self {
        let (n, nv) = (model.n_coords(), model.n_volumes());
        let nw = model.n_friction_states();
        let nx = n + nv + nw + model.layout.internal.len();
        // The penalty formulation on a tree (no loop-closure or nonholonomic rows, so no
        // projection needs M′): M′ z̈ by the tree passes instead of the dense M′
        // (`recursive_mass.rs`). (With enough unknowns its tangent is Schur-reduced: `schur.rs`.)
        let penalty = model.solver.formulation == crate::model::spec::Formulation::Penalty;
        let tree = model.n_constraints() + model.n_nonholonomic() == 0;
        let mut ev = Evaluator::new(model);
        let mut evd = Evaluator::new(model);
        if penalty && tree && n >= crate::mechanics::semirecursive::recursive_mass::MIN_COORDS {
            ev.dynamics.form_mass = false;
            evd.dynamics.form_mass = false;
        }
        // The modified-Newton tangent of a large penalty system is solved with many times per
        // factorization (the excavator: 64 000 solves, 500 factorizations in 20 s), so it keeps
        // its inverse (`DenseLu::keep_inverse`); the small validated models keep the
        // substitutions, and their iterates exactly.
        // The same systems factor their projection matrix by Cholesky.
        let large = penalty && crate::solver::newton::large_system(n + nv);
        let mut tangent = DenseLu::new(nx);
        if large {
            tangent.keep_inverse();
        }
        Buffers {
            ev,
            evd,
            hist: History {
                zd_hat: vec![0.0; n],
                zdd_hat: vec![0.0; n],
                pd_hat: vec![0.0; nv],
                wd_hat: vec![0.0; nw],
                ed_hat: vec![0.0; model.layout.internal.len()],
            },
            tangent,
            projection: DenseLu::new(n),
            projection_chol: large.then(|| crate::solver::linalg::DenseCholesky::new(n)),
            x: vec![0.0; nx],
            dx: vec![0.0; nx],
            lambda: vec![0.0; model.n_constraints() + model.n_nonholonomic()],
            spool_new: vec![0.0; model.n_valve_positions()],
            diag: vec![0.0; nx],
            tmp: vec![0.0; n.max(1)],
            tmp2: vec![0.0; n.max(1)],
            counters: Counters::default(),
            tangent_valid: false,
            tangent_id: 0,
            tangent_pending: Default::default(),
            friction_tangent_sign: vec![0.0; model.n_cylinders() + model.joint_friction.len()],
            // sized for every model: the elements' ports and the pose writer both use it
            element_kin: crate::mechanics::kinematics::Kinematics::new(n),
            element_values: crate::elements::component::ElementValues::new(model.elements().len()),
            world: crate::terrain::data::WorldScratch::new(model.terrain.as_ref()),
        }
    }
}

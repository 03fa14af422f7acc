//! The penalty step with the joint coordinates z as the only Newton unknowns (000 §2.3, 004 §4),
//! shared by kinematic guidance (`formulations::z_only::kinematic_guidance`), multi-rate co-integration
//! (`formulations::z_only::multirate`) and the mechanical subsystem (`pipeline::subsystem::mechanical`,
//! the cylinder forces as inputs). What differs between them, the cylinder forces and any
//! rheonomic rows, comes in through the [`ZOnly`] trait, so this module imports none of them.
//!
//! With the trapezoidal relations (000 eqs. 33–34) the residual is
//! ```text
//! f(z) = (Δt²/4) [ M′ z̈ + Φ_zᵀ (α Φ + λ) − Q′(z, ż) ]                           (000 eq. 39)
//! ```
//! with the cylinder forces of Q′ given by the formulation (guidance: the rheonomic constraint
//! forces; multi-rate: the pressures p_k+1(z) of the sub-integrated hydraulics); the pressure
//! rows are 0 and the pressure block of the tangent is the identity. The projections (000 eqs.
//! 20–21) take the rheonomic rows Φ_g of the formulation with their Φ_t, Φ̇_t (004 eqs. 14–15):
//! ```text
//! P = M′ + (Δt²/4) α (Φ_zᵀ Φ_z + Φ_g,zᵀ Φ_g,z)
//! P ż = M′ ż* − (Δt²/4) α Φ_g,zᵀ Φ_t
//! P z̈ = M′ z̈* − (Δt²/4) α [Φ_zᵀ Φ̇_z ż + Φ_g,zᵀ (Φ̇_g,z ż + Φ̇_t)]
//! ```

pub mod kinematic_guidance;
pub mod multirate;

use num_dual::Dual64;

use crate::formulations::Stepper;
use crate::mechanics::advance;
use crate::mechanics::assembly::Evaluator;
use crate::mechanics::buffers::{Buffers, Counters, History};
use crate::mechanics::constraints;
use crate::mechanics::semirecursive::penalty;
use crate::model::Model;
use crate::solver::newton::{self, NewtonProblem, TangentPolicy, Tolerances};
use crate::solver::real::Real;
use crate::state::State;
use crate::StepError;
use crate::StepReport;

/// What a z-only formulation adds to the shared step: the cylinder forces of its residual, its
/// rheonomic rows, and its part of the commit. The provided methods are the "none" answers.
pub trait ZOnly: Sized {
    /// Allocates the formulation's buffers for `model`.
    fn new(model: &Model) -> Self;

    /// Stage `initialize` (see `Stepper::initialize`): nothing unless the formulation keeps a
    /// state of its own.
    fn initialize(&mut self, _model: &Model, _st: &mut State, _ws: &mut Buffers) {}

    /// Stage `predict`, after `penalty::prepare`: the step's data that do not depend on z_k+1.
    fn prepare(&mut self, model: &Model, st: &State, ws: &mut Buffers);

    /// Before an evaluation that follows an increment, with `ws.ev` holding x = `x`: updates
    /// the formulation's own multipliers (000 eq. 19) with penalty factor `alpha`.
    fn update_multipliers(
        &mut self,
        _model: &Model,
        _ev: &mut Evaluator<f64>,
        _x: &[f64],
        _alpha: f64,
    ) {
    }

    /// Evaluation at (z, ż) = (`ev.x[..n]`, `ev.zd`) in f64: every force, M′, Q′, Φ, Φ_z.
    fn evaluate(&mut self, model: &Model, ev: &mut Evaluator<f64>);

    /// The same in dual numbers (a tangent column).
    fn evaluate_dual(&mut self, model: &Model, ev: &mut Evaluator<Dual64>);

    /// After the dual pass of tangent column `j` of `n`: side data of the tangent.
    fn tangent_column(&mut self, _j: usize, _n: usize) {}

    /// The reason to stop when the last evaluation failed inside the formulation.
    fn failed(&self) -> Option<&'static str> {
        None
    }

    /// Side data of the tangent, cached with it in `State::tangent`.
    fn tangent_side(&self) -> &[f64] {
        &[]
    }

    /// The same, to restore.
    fn tangent_side_mut(&mut self) -> &mut [f64] {
        &mut []
    }

    /// A weighted norm the increment `dx` implies beyond z (joins the convergence test).
    fn implied_norm(&self, _model: &Model, _dx: &[f64]) -> f64 {
        0.0
    }

    /// Number of rheonomic rows Φ_g.
    fn n_rows(&self) -> usize {
        0
    }

    /// Φ_g,z, row-major `n_rows` × n.
    fn rows_jacobian(&self) -> &[f64] {
        &[]
    }

    /// Φ_g, Φ_g,z and Φ̇_g,z ż at the evaluated point of `ev` with velocities `zd`.
    fn rheonomic_terms(&mut self, _model: &Model, _ev: &Evaluator<f64>, _zd: &[f64]) {}

    /// The last multiplier update of the rheonomic rows, Φ_g carried to the accepted z by the
    /// last increment `dx`: λ_g ← λ_g + α (Φ_g + Φ_g,z Δz).
    fn last_multiplier_update(&mut self, _alpha: f64, _dx: &[f64], _n: usize) {}

    /// −Φ_t of row `k` (ṡ_ref) [m/s].
    fn velocity_rhs(&self, _k: usize) -> f64 {
        0.0
    }

    /// Φ̇_g,z ż + Φ̇_t of row `k` [m/s²].
    fn acceleration_rhs(&self, _k: usize) -> f64 {
        0.0
    }

    /// Cylinder ports (motion, forces) at the projected velocities `zd` into `ws.ev`.
    fn ports(&mut self, model: &Model, ws: &mut Buffers, zd: &[f64]);

    /// The formulation's part of the commit (pressures or its own state) into `st`.
    fn commit(&self, model: &Model, st: &mut State, report: &mut StepReport);
}

/// Evaluation at (z, ż) = (`ev.x[..n]`, `ev.zd`) with the cylinders' line forces given by the
/// formulation: kinematics, body terms and the body-port elements, then `line_forces` (which
/// applies each cylinder's force F n at its pins, `Line::apply`, and sets `ev.motion` and
/// `ev.cylinder_force`), then M′, Q′, the joint-port elements without node ports (no pressures
/// here), then `joint_efforts` (which adds the shaft ports' torques to Q′ of their joints,
/// `circuit::Shaft`), Φ, Φ_z. Kinematic guidance (the rheonomic constraint forces) and the
/// mechanical subsystem (forces and torques as inputs, `pipeline::subsystem::mechanical`)
/// evaluate so.
pub fn evaluate_with_line_forces<S: Real>(
    model: &Model,
    ev: &mut Evaluator<S>,
    line_forces: impl FnOnce(&Model, &mut Evaluator<S>),
    joint_efforts: impl FnOnce(&Model, &mut Evaluator<S>),
) {
    let n = model.n_coords();
    ev.kin.positions(model, &ev.x[..n]);
    ev.kin.velocities(model, &ev.zd);
    ev.dynamics.bodies(model, &ev.kin);
    if model.has_mechanical_elements {
        crate::mechanics::ports::body_forces(
            model.elements(),
            &ev.mechanical_elements,
            &ev.mechanical_ports,
            &ev.element_u,
            &ev.element_frozen,
            &ev.kin,
            &mut ev.dynamics,
            &mut ev.element_at,
            &mut ev.element_effort,
        );
    }
    ev.dynamics.save_body_terms();
    line_forces(model, ev);
    ev.dynamics.accumulate(model, &ev.kin);
    if model.has_mechanical_elements {
        let zd = std::mem::take(&mut ev.zd);
        // no pressures: an element coupling nodes to a joint (a shaft port) is skipped, its
        // torque is `joint_efforts`' (`pipeline::compile` rejects it for the guidance)
        crate::mechanics::ports::joint_forces(
            model,
            &ev.mechanical_elements,
            &ev.mechanical_ports,
            &ev.element_u,
            &zd,
            &ev.x[..n],
            &[],
            &mut ev.dynamics.force,
            &mut ev.element_at,
            &mut ev.element_effort,
        );
        ev.zd = zd;
    }
    joint_efforts(model, ev);
    constraints::evaluate(model, &ev.kin, &mut ev.constraints);
}

/// ż, z̈ of `ev.x[..n]` by the trapezoidal relations (000 eqs. 33–34).
fn trapezoidal_rates<S: Real>(model: &Model, ev: &mut Evaluator<S>, hist: &History) {
    let dt = model.solver.step_s;
    let (c1, c2) = (2.0 / dt, 4.0 / (dt * dt));
    for i in 0..model.n_coords() {
        ev.zd[i] = ev.x[i] * c1 + hist.zd_hat[i];
        ev.zdd[i] = ev.x[i] * c2 + hist.zdd_hat[i];
    }
}

/// f64 evaluation and residual at `ws.x` into `ws.ev.f` (pressure rows 0). With `update`, the
/// multipliers are first updated with Φ at this point, λ ← λ + αΦ (000 eq. 19), as the penalty
/// formulation does after each solve.
pub(crate) fn residual_f64<F: ZOnly>(model: &Model, ws: &mut Buffers, f: &mut F, update: bool) {
    let n = model.n_coords();
    let alpha = model.solver.step_penalty();
    ws.ev.x.copy_from_slice(&ws.x);
    trapezoidal_rates(model, &mut ws.ev, &ws.hist);
    if update {
        f.update_multipliers(model, &mut ws.ev, &ws.x, alpha);
    }
    f.evaluate(model, &mut ws.ev);
    if update {
        for (l, phi) in ws.lambda.iter_mut().zip(ws.ev.constraints.phi.iter()) {
            *l += alpha * phi;
        }
    }
    penalty::form_residual(model, &mut ws.ev, &ws.lambda);
    for f in ws.ev.f[n..].iter_mut() {
        *f = 0.0;
    }
}

/// Exact tangent ∂f/∂z by one dual pass per coordinate; the pressure block is the identity (the
/// pressures are not Newton unknowns here: their increments are zero).
pub(crate) fn tangent<F: ZOnly>(model: &Model, ws: &mut Buffers, f: &mut F) {
    let n = model.n_coords();
    let nx = ws.x.len();
    for j in 0..n {
        for k in 0..nx {
            ws.evd.x[k] = Dual64::new(ws.x[k], if k == j { 1.0 } else { 0.0 });
        }
        trapezoidal_rates(model, &mut ws.evd, &ws.hist);
        f.evaluate_dual(model, &mut ws.evd);
        penalty::form_residual(model, &mut ws.evd, &ws.lambda);
        f.tangent_column(j, n);
        let mut a = ws.tangent.matrix_mut();
        for i in 0..n {
            a[(i, j)] = ws.evd.f[i].eps;
        }
        for i in n..nx {
            a[(i, j)] = 0.0;
        }
        ws.diag[j] = ws.evd.f[j].eps;
    }
    let mut a = ws.tangent.matrix_mut();
    for j in n..nx {
        for i in 0..nx {
            a[(i, j)] = if i == j { 1.0 } else { 0.0 };
        }
        ws.diag[j] = 1.0;
    }
}

fn failure(model: &Model, st: &State, ws: &Buffers, iterations: u32, reason: &str) -> StepError {
    let n = model.n_coords();
    crate::solver::newton::failure(
        st.t_s,
        st.step,
        iterations,
        &ws.ev.f[..n],
        &ws.diag,
        |i| model.layout.atol(i),
        &model.layout.names,
        reason,
    )
}

/// The Newton problem of guidance and multi-rate: x = z in `ws.x[..n]` (the pressures are not
/// unknowns), f in `ws.ev.f`, the tangent in `ws.tangent`.
pub struct ZOnlyNewton<'a, F: ZOnly> {
    model: &'a Model,
    st: &'a State,
    ws: &'a mut Buffers,
    f: &'a mut F,
    /// Evaluations so far: every one after the first follows an increment.
    evaluations: u32,
}

impl<F: ZOnly> NewtonProblem for ZOnlyNewton<'_, F> {
    type Error = StepError;

    /// The evaluation with the multiplier updates of `residual_f64` after an increment: the
    /// guidance multipliers λ_g change the cylinder forces, so they are updated before the
    /// evaluation, and λ with the Φ of it.
    fn evaluate(&mut self) -> Result<(), StepError> {
        let update = self.evaluations > 0;
        self.evaluations += 1;
        residual_f64(self.model, self.ws, self.f, update);
        Ok(())
    }

    fn form_residual(&mut self) -> Result<(), StepError> {
        let ws = &*self.ws;
        newton::check_finite(
            self.st.t_s,
            self.st.step,
            &ws.ev.f,
            &self.model.layout.names,
        )?;
        if let Some(reason) = self.f.failed() {
            let iterations = self.evaluations - 1;
            return Err(self.failure(iterations, reason));
        }
        Ok(())
    }

    fn tangent_reusable(&self) -> bool {
        self.ws.tangent_valid
    }

    fn refresh_tangent(&mut self) -> Result<bool, StepError> {
        let ws = &mut *self.ws;
        tangent(self.model, ws, self.f);
        ws.tangent_id = ws.tangent_pending.record(
            self.st.tangent.id,
            ws.tangent.values(),
            self.f.tangent_side(),
        );
        Ok(ws.factor_tangent())
    }

    fn solve_increment(&mut self) {
        let ws = &mut *self.ws;
        for (d, f) in ws.dx.iter_mut().zip(ws.ev.f.iter()) {
            *d = -f;
        }
        ws.tangent.solve_in_place(&mut ws.dx);
    }

    fn iterate(&mut self) -> (&mut [f64], &[f64]) {
        let n = self.model.n_coords();
        (&mut self.ws.x[..n], &self.ws.dx[..n])
    }

    fn tolerances(&self) -> Tolerances {
        self.model.layout.coordinate_tolerances()
    }

    fn implied_norm(&self) -> f64 {
        self.f.implied_norm(self.model, &self.ws.dx)
    }

    fn counters(&mut self) -> &mut Counters {
        &mut self.ws.counters
    }

    fn failure(&mut self, iterations: u32, reason: &str) -> StepError {
        failure(self.model, self.st, self.ws, iterations, reason)
    }
}

/// Stage `predict` of the z-only step: the penalty step's (spools, history, predictors, λ⁰),
/// the pressures held in x, then the formulation's.
#[cfg(test)]
pub(crate) fn prepare<F: ZOnly>(model: &Model, st: &State, ws: &mut Buffers, f: &mut F) {
    crate::circuit::advance_positions(model, st, model.solver.step_s, &mut ws.spool_new);
    predict(model, st, ws, f);
}

/// Stage `predict` after the valves: the penalty step's history, predictors and λ⁰, the
/// pressures held in x, then the formulation's.
fn predict<F: ZOnly>(model: &Model, st: &State, ws: &mut Buffers, f: &mut F) {
    let n = model.n_coords();
    penalty::predict(model, st, ws);
    ws.x[n..].copy_from_slice(&st.p);
    f.prepare(model, st, ws);
}

/// An ALI3-P formulation whose Newton unknowns are z only, parametrized by what differs
/// ([`ZOnly`]: the cylinder forces, the rheonomic rows, its part of the commit): kinematic
/// guidance and multi-rate co-integration are this formulation with their `ZOnly`. Newton
/// (modified, with the penalty formulation's tangent-reuse policy), then the projections
/// (000 eqs. 20–21, with the rheonomic terms of 004 eqs. 14–15), then commit.
pub struct ZOnlyStep<F>(std::marker::PhantomData<F>);

impl<F: ZOnly> Stepper for ZOnlyStep<F> {
    type Workspace = F;
    type Failure = StepError;
    type Problem<'a>
        = ZOnlyNewton<'a, F>
    where
        Self: 'a;

    fn workspace(model: &Model) -> F {
        F::new(model)
    }

    fn initialize(model: &Model, st: &mut State, ws: &mut Buffers, f: &mut F) {
        f.initialize(model, st, ws);
    }

    /// The tangent ∂f/∂z and the formulation's side data.
    fn load_tangent(ws: &mut Buffers, f: &mut F, matrix: &[f64], side: &[f64]) -> Option<bool> {
        if matrix.len() != ws.tangent.values().len() || side.len() != f.tangent_side().len() {
            return None;
        }
        ws.tangent.values_mut().copy_from_slice(matrix);
        f.tangent_side_mut().copy_from_slice(side);
        Some(ws.factor_tangent())
    }

    fn predict(model: &Model, st: &State, ws: &mut Buffers, f: &mut F) {
        predict(model, st, ws, f);
    }

    /// Jacobian reuse as in the penalty formulation: a tangent of an earlier step is refreshed
    /// when it contracts by less than ×5, at most once per step: the multiplier updates converge
    /// linearly whatever the tangent, so a second fresh tangent would not speed them up
    /// (measured: no fewer iterations). (With ×2 instead of ×5: 2.16 instead of 1.88 iterations
    /// per step on the multi-rate quick-return.) One attempt.
    fn policy(_: &Model, attempt: u32) -> Option<TangentPolicy> {
        (attempt == 0).then_some(TangentPolicy {
            keep_fresh: true,
            ..TangentPolicy::MODIFIED
        })
    }

    fn problem<'a>(
        model: &'a Model,
        st: &'a State,
        ws: &'a mut Buffers,
        f: &'a mut F,
    ) -> ZOnlyNewton<'a, F> {
        ZOnlyNewton {
            model,
            st,
            ws,
            f,
            evaluations: 0,
        }
    }

    /// The last multiplier update and the projections of ż (into `ws.tmp`) and z̈ (into
    /// `ws.tmp2`), the cylinder ports at them.
    fn project(
        model: &Model,
        st: &State,
        ws: &mut Buffers,
        f: &mut F,
        iterations: u32,
    ) -> Result<(), StepError> {
        let n = model.n_coords();
        let dt = model.solver.step_s;
        let c = dt * dt / 4.0;
        let alpha = model.solver.step_penalty();
        let (c1, c2) = (2.0 / dt, 4.0 / (dt * dt));
        // ---- the last Newton evaluation, at x_h = x − Δx_h, serves the projections, as in the
        // penalty formulation: the accepted iterate differs from it by one converged increment.
        // Φ and Φ_g are carried to the accepted z to first order, Φ(z) = Φ(z_h) + Φ_z Δz_h, for the
        // last multiplier update λ ← λ + αΦ (000 eq. 19); the multi-rate pressures are p_k+1(z_h),
        // within the pressure tolerance of p_k+1(z) (convergence test above).
        for i in 0..n {
            ws.ev.zd[i] = c1 * ws.x[i] + ws.hist.zd_hat[i];
            ws.ev.zdd[i] = c2 * ws.x[i] + ws.hist.zdd_hat[i];
        }
        let m0 = model.n_constraints();
        for r in 0..m0 {
            let mut v = ws.ev.constraints.phi[r];
            for j in 0..n {
                v += ws.ev.constraints.jac[r * n + j] * ws.dx[j];
            }
            ws.ev.constraints.phi[r] = v;
        }
        for (l, phi) in ws.lambda.iter_mut().zip(ws.ev.constraints.phi.iter()) {
            *l += alpha * phi;
        }

        // ---- projections (000 eqs. 20–21; 004 eqs. 14–15 for the rheonomic rows)
        let zd_star = std::mem::take(&mut ws.ev.zd);
        let ng = f.n_rows();
        if ng > 0 {
            f.rheonomic_terms(model, &ws.ev, &zd_star);
            f.last_multiplier_update(alpha, &ws.dx, n);
        }
        penalty::projection_matrix(
            ws.projection.values_mut(),
            &ws.ev.dynamics.mass,
            ws.ev
                .constraints
                .jac
                .chunks_exact(n)
                .chain(f.rows_jacobian()[..ng * n].chunks_exact(n)),
            c * alpha,
        );
        ws.counters.factorizations += 1;
        if ws.projection.factor().is_err() {
            ws.ev.zd = zd_star;
            return Err(failure(
                model,
                st,
                ws,
                iterations,
                "singular projection matrix",
            ));
        }
        penalty::mat_vec(&mut ws.tmp, &ws.ev.dynamics.mass, &zd_star);
        // − cα Φ_g,zᵀ Φ_t = + cα Φ_g,zᵀ ṡ_ref
        for k in 0..ng {
            let s = c * alpha * f.velocity_rhs(k);
            for (t, ji) in ws
                .tmp
                .iter_mut()
                .zip(f.rows_jacobian()[k * n..(k + 1) * n].iter())
            {
                *t += s * ji;
            }
        }
        ws.projection.solve_in_place(&mut ws.tmp[..n]);
        ws.ev.zd = zd_star;
        let zd_proj = std::mem::take(&mut ws.tmp);
        // velocity-product terms at the projected velocities
        ws.ev.kin.velocities(model, &zd_proj[..n]);
        constraints::evaluate_acc0(model, &ws.ev.kin, &mut ws.ev.constraints);
        if ng > 0 {
            f.rheonomic_terms(model, &ws.ev, &zd_proj[..n]);
        }
        penalty::mat_vec(&mut ws.tmp2, &ws.ev.dynamics.mass, &ws.ev.zdd);
        for (jr, a0) in ws
            .ev
            .constraints
            .jac
            .chunks_exact(n)
            .zip(ws.ev.constraints.acc0.iter())
        {
            let s = c * alpha * a0;
            for (t, ji) in ws.tmp2.iter_mut().zip(jr.iter()) {
                *t -= s * ji;
            }
        }
        for k in 0..ng {
            let s = c * alpha * f.acceleration_rhs(k);
            for (t, ji) in ws
                .tmp2
                .iter_mut()
                .zip(f.rows_jacobian()[k * n..(k + 1) * n].iter())
            {
                *t -= s * ji;
            }
        }
        ws.projection.solve_in_place(&mut ws.tmp2[..n]);

        // cylinder ports at the projected velocities
        f.ports(model, ws, &zd_proj[..n]);
        ws.tmp = zd_proj;
        Ok(())
    }

    fn error(_: &Model, _: &State, failure: StepError) -> StepError {
        failure
    }

    /// The formulation's part, then z, ż, z̈ (the projected rates) and λ.
    fn commit(model: &Model, st: &mut State, ws: &mut Buffers, f: &mut F, report: &mut StepReport) {
        let n = model.n_coords();
        f.commit(model, st, report);
        for i in 0..n {
            st.z[i] = ws.x[i];
            st.zd[i] = ws.tmp[i];
            st.zdd[i] = ws.tmp2[i];
        }
        st.lambda.copy_from_slice(&ws.lambda);
    }

    fn energies(model: &Model, st: &State, ws: &Buffers, _: &F, report: &mut StepReport) {
        advance::energies_and_violation(model, &ws.ev, &st.zd, report);
    }
}

/// Test support: the dual tangent ∂f/∂z of the z-only residual against central differences of
/// the f64 residual, at the predictor of the next step of `st` moved off by 1e-6 (i + 1) per
/// coordinate; panics on a mismatch beyond 1e-5 of the column's largest entry.
#[cfg(test)]
pub(crate) fn check_tangent<F: ZOnly>(model: &Model, st: &State, ws: &mut Buffers, f: &mut F) {
    let n = model.n_coords();
    prepare(model, st, ws, f);
    for i in 0..n {
        ws.x[i] += 1e-6 * (i as f64 + 1.0);
    }
    tangent(model, ws, f);
    let x0 = ws.x.clone();
    for j in 0..n {
        let h = 1e-7;
        ws.x.copy_from_slice(&x0);
        ws.x[j] += h;
        residual_f64(model, ws, f, false);
        let fp = ws.ev.f.clone();
        ws.x[j] -= 2.0 * h;
        residual_f64(model, ws, f, false);
        let fm = ws.ev.f.clone();
        let a = ws.tangent.matrix();
        let scale = (0..n).map(|i| a[(i, j)].abs()).fold(0.0, f64::max);
        for i in 0..n {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            assert!(
                (a[(i, j)] - fd).abs() <= 1e-5 * scale,
                "∂f{i}/∂z{j}: dual {} vs central difference {fd}",
                a[(i, j)]
            );
        }
    }
}

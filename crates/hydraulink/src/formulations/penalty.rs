//! Penalty-based semi-recursive formulation: index-3 augmented Lagrangian with mass-damping-
//! stiffness-orthogonal projections (ALI3-P, 000 §2.3), coupled monolithically with the
//! hydraulics and integrated with the trapezoidal rule (000 §4).
//!
//! Unknowns x = [z ; p ; w ; e] at t_{k+1} (w: friction states, 003 Pub II Appendix A; e: the
//! elements' internal states, `Element::n_internal`). With the trapezoidal relations (000 eqs.
//! 33–34)
//!
//! ```text
//! ż = (2/Δt) z + ẑ̇_k,   z̈ = (4/Δt²) z + ẑ̈_k,   ṗ = (2/Δt) p + p̂̇_k
//! ẇ = (2/Δt) w + ŵ̇_k,   ė = (2/Δt) e + ê̇_k
//! ```
//! the residual is (000 eq. 39, with the state rows of 003 Pub II Appendix A)
//! ```text
//! f = (Δt²/4) [ M′ z̈ + Φ_zᵀ (α Φ + λ) − Q′(z, ż, p) ;  ṗ − h(p, z, ż, e) ;
//!               ẇ − u(ṡ, w) ;  ė − g(e, p) ]
//! ```
//! solved by Newton–Raphson with the exact tangent ∂f/∂x (λ held), obtained by forward-mode dual
//! numbers through the same code that evaluates f. After each solve λ ← λ + α Φ (000 eq. 19).
//! After convergence ż and z̈ are projected (000 eqs. 20–21, W = M′, reference note 000-A.3):
//! ```text
//! [M′ + (Δt²/4) α Φ_zᵀ Φ_z] ż = M′ ż*
//! [M′ + (Δt²/4) α Φ_zᵀ Φ_z] z̈ = M′ z̈* − (Δt²/4) α Φ_zᵀ (Φ̇_z ż)
//! ```

use num_dual::Dual64;

use crate::circuit::reduced;
use crate::formulations::Stepper;
use crate::mechanics::advance;
use crate::mechanics::assembly::Evaluator;
use crate::mechanics::buffers::{Buffers, Counters, History};
pub use crate::mechanics::semirecursive::penalty::{
    form_residual, form_state_rows, mat_vec, prepare, projection_matrix,
};
pub(crate) use crate::mechanics::semirecursive::penalty::{newton_failure, predict};
use crate::mechanics::semirecursive::schur::{self, SchurTangent};
use crate::model::Model;
use crate::solver::newton::{self, NewtonProblem, TangentPolicy, Tolerances};
use crate::solver::real::Real;
use crate::state::State;
use crate::{StepError, StepReport};

/// Speed below which a friction element's reversal does not trigger a tangent refresh [m/s or
/// rad/s]: the sticking seal's velocity dithers about 0.
const REVERSAL_SPEED: f64 = 1e-4;

/// The residual f(x) into `ev.f`, with x in `ev.x` (000 eq. 39): [`evaluate_at`] then
/// [`form_residual`].
pub fn residual<S: Real>(
    model: &Model,
    ev: &mut Evaluator<S>,
    hist: &History,
    lambda: &[f64],
    spools: &[f64],
) {
    evaluate_at(model, ev, hist, spools);
    form_residual(model, ev, lambda);
}

/// Stage `evaluate`: ż, z̈, ṗ from x by the trapezoidal relations, then every element at
/// (z, ż, p): M′, Q′, Φ, Φ_z, h.
pub fn evaluate_at<S: Real>(model: &Model, ev: &mut Evaluator<S>, hist: &History, spools: &[f64]) {
    let n = model.n_coords();
    let nv = model.n_volumes();
    trapezoidal_rates(model, ev, hist);
    let x = std::mem::take(&mut ev.x);
    let zd = std::mem::take(&mut ev.zd);
    ev.evaluate(model, &x[..n], &zd, &x[n..n + nv], spools, false);
    ev.x = x;
    ev.zd = zd;
}

/// ż, z̈, ṗ of x = `ev.x` by the trapezoidal relations (000 eqs. 33–34).
fn trapezoidal_rates<S: Real>(model: &Model, ev: &mut Evaluator<S>, hist: &History) {
    let n = model.n_coords();
    let nv = model.n_volumes();
    let dt = model.solver.step_s;
    let (c1, c2) = (2.0 / dt, 4.0 / (dt * dt));
    for i in 0..n {
        ev.zd[i] = ev.x[i] * c1 + hist.zd_hat[i];
        ev.zdd[i] = ev.x[i] * c2 + hist.zdd_hat[i];
    }
    for v in 0..nv {
        ev.pd[v] = ev.x[n + v] * c1 + hist.pd_hat[v];
    }
    // friction states w and ẇ = (2/Δt) w + ŵ̇ (003 Pub II Appendix A)
    for (j, wh) in hist.wd_hat.iter().enumerate() {
        let w = ev.x[n + nv + j];
        ev.fstate[j] = w;
        ev.fstate_trap[j] = w * c1 + *wh;
    }
    // internal states e and ė = (2/Δt) e + ê̇ (the same rule, `Layout::internal`)
    let e0 = model.layout.internal.start;
    for (j, eh) in hist.ed_hat.iter().enumerate() {
        let e = ev.x[e0 + j];
        ev.internal[j] = e;
        ev.internal_trap[j] = e * c1 + *eh;
    }
}

/// Exact tangent ∂f/∂x into `ws.tangent`: one forward-mode dual pass of the residual per
/// unknown (λ held). Pressure columns reuse the p-independent part (kinematics, body terms,
/// constraints) of an f64 evaluation at the same point.
pub fn tangent(model: &Model, ws: &mut Buffers) {
    // the f64 evaluation at x the pressure columns build on (f is left untouched)
    ws.ev.x.copy_from_slice(&ws.x);
    evaluate_at(model, &mut ws.ev, &ws.hist, &ws.spool_new);
    tangent_at_evaluated(model, ws);
}

/// [`tangent`] when `ws.ev` already holds the f64 evaluation at `ws.x` (with `ws.hist` and
/// `ws.spool_new`): the Newton solve refreshes its tangent right after evaluating the iterate
/// (`PenaltyNewton::evaluate`), so that evaluation is not repeated. Bit-identical to [`tangent`]:
/// the evaluation is deterministic and `form_residual` changes none of its outputs the columns
/// read (M′ z̈ is formed again below).
fn tangent_at_evaluated(model: &Model, ws: &mut Buffers) {
    let n = model.n_coords();
    let nx = ws.x.len();
    debug_assert!(ws.ev.x == ws.x, "the evaluation is at x");
    if !ws.ev.dynamics.form_mass {
        // M′ z̈ at x for the pressure columns (`Evaluator::evaluate_pressures`)
        ws.ev.dynamics.mass_times(model, &ws.ev.kin, &ws.ev.zdd);
        ws.ev.dynamics.mass_v_valid = true;
    }
    let nv = model.n_volumes();
    let c = model.solver.step_s * model.solver.step_s / 4.0;
    for j in 0..nx {
        for k in 0..nx {
            ws.evd.x[k] = Dual64::new(ws.x[k], if k == j { 1.0 } else { 0.0 });
        }
        if j < n {
            residual(model, &mut ws.evd, &ws.hist, &ws.lambda, &ws.spool_new);
        } else {
            if j == n {
                // kinematics, Φ, Φ_z, B, Ψ do not depend on p, w, e: lifted once for the
                // remaining columns
                ws.evd.lift_pressure_base(&ws.ev);
            }
            trapezoidal_rates(model, &mut ws.evd, &ws.hist);
            let p = std::mem::take(&mut ws.evd.x);
            // a friction or internal state may act on the mechanism (seal friction)
            let mechanism = j >= n + nv || ws.evd.pressure_moves_mechanism[j - n];
            ws.evd
                .evaluate_pressure_column(model, &ws.ev, &p[n..n + nv], &ws.spool_new, mechanism);
            ws.evd.x = p;
            // ∂f_z/∂p = −(Δt²/4) ∂Q′/∂p: M′, z̈, Φ, Φ_z, B, Ψ do not depend on p, w, e (the
            // derivative of `form_mechanism_rows`), and ∂Q′/∂p = 0 where p moves nothing
            for i in 0..n {
                ws.evd.f[i] = if mechanism {
                    -ws.evd.dynamics.force[i] * c
                } else {
                    Dual64::from(0.0)
                };
            }
            form_state_rows(model, &mut ws.evd);
        }
        let mut a = ws.tangent.matrix_mut();
        for i in 0..nx {
            a[(i, j)] = ws.evd.f[i].eps;
        }
        ws.diag[j] = ws.evd.f[j].eps;
    }
    // the friction elements' directions at this linearization point (see `step`)
    let nc = model.n_cylinders();
    for (c, m) in ws.ev.motion.iter().enumerate() {
        ws.friction_tangent_sign[c] = m.sd.signum();
    }
    for (j, v) in ws.ev.joint_velocity.iter().enumerate() {
        ws.friction_tangent_sign[nc + j] = v.signum();
    }
}

/// P of the evaluation `ev` into `a` ([`projection_matrix`] with M′ and the rows Φ_z and B of
/// `ev`), n × n; `ca` = (Δt²/4) α.
fn fill_projection(
    a: &mut [f64],
    ev: &crate::mechanics::assembly::Evaluator<f64>,
    n: usize,
    ca: f64,
) {
    projection_matrix(
        a,
        &ev.dynamics.mass,
        ev.constraints
            .jac
            .chunks_exact(n.max(1))
            .chain(ev.nonholonomic.b.chunks_exact(n.max(1))),
        ca,
    );
}

/// Which right-hand side of the projections: `Buffers::tmp` (ż) or `Buffers::tmp2` (z̈).
enum Rhs {
    Velocity,
    Acceleration,
}

/// P x = b in place in the right-hand side's buffer, with the Cholesky factors (`cholesky`) or the
/// LU of P.
fn solve_projection(ws: &mut Buffers, cholesky: bool, rhs: Rhs) {
    let n = ws.projection.n();
    let b = match rhs {
        Rhs::Velocity => &mut ws.tmp[..n],
        Rhs::Acceleration => &mut ws.tmp2[..n],
    };
    match ws.projection_chol.as_ref() {
        Some(ch) if cholesky => ch.solve_in_place(b),
        _ => ws.projection.solve_in_place(b),
    }
}

/// The penalty step's Newton problem: x = [z; p; w; e] in `ws.x`, f in `ws.ev.f`, the tangent in
/// `ws.tangent` (or its Schur reduction).
pub struct PenaltyNewton<'a> {
    model: &'a Model,
    st: &'a State,
    ws: &'a mut Buffers,
    schur: &'a mut SchurTangent,
}

impl NewtonProblem for PenaltyNewton<'_> {
    type Error = StepError;

    fn evaluate(&mut self) -> Result<(), StepError> {
        let (model, ws) = (self.model, &mut *self.ws);
        let n = model.n_coords();
        ws.ev.x.copy_from_slice(&ws.x);
        evaluate_at(model, &mut ws.ev, &ws.hist, &ws.spool_new);
        // algebraic volumes (002 Pub II): their pressures eliminated at this (z, ż, p), then
        // the point re-evaluated (`reduced::solve_algebraic`)
        if reduced::solve_algebraic(
            model,
            &mut ws.x[n..],
            &ws.ev.motion,
            &ws.spool_new,
            &mut ws.ev.inflow,
        ) {
            ws.ev.x.copy_from_slice(&ws.x);
            evaluate_at(model, &mut ws.ev, &ws.hist, &ws.spool_new);
        }
        Ok(())
    }

    fn after_increment(&mut self) {
        let (model, ws) = (self.model, &mut *self.ws);
        let alpha = model.solver.step_penalty();
        let dt = model.solver.step_s;
        // λ ← λ + α Φ(z) after each solve (000 eq. 19), with Φ of this evaluation
        for (l, phi) in ws.lambda.iter_mut().zip(ws.ev.constraints.phi.iter()) {
            *l += alpha * phi;
        }
        // σ ← σ + α_v Ψ (nonholonomic rows, docs/theory 9.8)
        let m = model.n_constraints();
        for (sg, psi) in ws.lambda[m..].iter_mut().zip(ws.ev.nonholonomic.psi.iter()) {
            *sg += alpha * dt / 2.0 * psi;
        }
    }

    fn form_residual(&mut self) -> Result<(), StepError> {
        let ws = &mut *self.ws;
        form_residual(self.model, &mut ws.ev, &ws.lambda);
        newton::check_finite(
            self.st.t_s,
            self.st.step,
            &ws.ev.f,
            &self.model.layout.names,
        )
    }

    fn tangent_reusable(&self) -> bool {
        let ws = &*self.ws;
        // A friction element whose velocity reversed since the tangent was evaluated sits on the
        // other side of the |v| kink of its law (LuGre: ∂q̇/∂v = 1 ∓ σ0 q/g): refresh first.
        let reversed = self.model.n_friction_states() > 0
            && ws
                .friction_tangent_sign
                .iter()
                .zip(self.st.friction_velocity_m_s.iter())
                .any(|(s, v)| v.abs() > REVERSAL_SPEED && v.signum() != *s);
        ws.tangent_valid && !reversed
    }

    fn refresh_tangent(&mut self) -> Result<bool, StepError> {
        let ws = &mut *self.ws;
        // `evaluate` left the evaluation at this x_h in `ws.ev` (`newton::solve` always evaluates
        // before it refreshes)
        tangent_at_evaluated(self.model, ws);
        ws.tangent_id = ws.tangent_pending.record(
            self.st.tangent.id,
            ws.tangent.values(),
            &ws.friction_tangent_sign,
        );
        Ok(schur::factor_tangent(ws, self.schur))
    }

    fn solve_increment(&mut self) {
        let ws = &mut *self.ws;
        for (d, f) in ws.dx.iter_mut().zip(ws.ev.f.iter()) {
            *d = -f;
        }
        schur::solve_in_place(ws, self.schur);
    }

    fn iterate(&mut self) -> (&mut [f64], &[f64]) {
        (&mut self.ws.x, &self.ws.dx)
    }

    fn tolerances(&self) -> Tolerances {
        // x = [z; p; w; e] (`model::layout`)
        self.model.layout.tolerances
    }

    fn counters(&mut self) -> &mut Counters {
        &mut self.ws.counters
    }

    fn failure(&mut self, iterations: u32, reason: &str) -> StepError {
        newton_failure(self.model, self.st, self.ws, iterations, reason)
    }
}

/// The penalty formulation's own buffers.
#[derive(Debug)]
pub struct PenaltyWorkspace {
    /// The tangent reduced to the joint coordinates (Schur complement of its pressure and
    /// friction-state block; `mechanics/semirecursive/schur.rs`), when there are enough unknowns.
    pub schur: SchurTangent,
}

/// The monolithic penalty formulation (ALI3-P, 000 §2.3): the reference [`Stepper`].
pub struct Penalty;

impl Stepper for Penalty {
    type Workspace = PenaltyWorkspace;
    type Failure = StepError;
    type Problem<'a> = PenaltyNewton<'a>;

    fn workspace(model: &Model) -> PenaltyWorkspace {
        let (n, nv, nw, ne) = (
            model.n_coords(),
            model.n_volumes(),
            model.n_friction_states(),
            model.layout.internal.len(),
        );
        PenaltyWorkspace {
            schur: SchurTangent::new(n, nv + nw + ne, n + nv + nw + ne >= schur::MIN_UNKNOWNS),
        }
    }

    /// Nothing: the penalty formulation works on the relative state alone.
    fn initialize(_: &Model, _: &mut State, _: &mut Buffers, _: &mut PenaltyWorkspace) {}

    /// The nx × nx tangent, its diagonal, and the friction elements' directions at its point.
    fn load_tangent(
        ws: &mut Buffers,
        own: &mut PenaltyWorkspace,
        matrix: &[f64],
        side: &[f64],
    ) -> Option<bool> {
        let nx = ws.x.len();
        if matrix.len() != nx * nx || side.len() != ws.friction_tangent_sign.len() {
            return None;
        }
        ws.tangent.values_mut().copy_from_slice(matrix);
        for (j, d) in ws.diag.iter_mut().enumerate() {
            *d = matrix[j * nx + j];
        }
        ws.friction_tangent_sign.copy_from_slice(side);
        Some(schur::factor_tangent(ws, &mut own.schur))
    }

    fn predict(model: &Model, st: &State, ws: &mut Buffers, _: &mut PenaltyWorkspace) {
        predict(model, st, ws);
    }

    /// Jacobian-reuse policy (modified Newton): the factored exact tangent of an earlier
    /// iteration or step is reused while it contracts well; it is recomputed when no valid
    /// factors exist, or when it contracts by less than ×5 per iteration (so a tangent of this
    /// step is also refreshed when it contracts poorly: full Newton where the problem changes
    /// fast, e.g. at valve switching with large steps) unless its own contraction predicts
    /// convergence within `newton::REFRESH_HORIZON` iterations and the tangent has enough
    /// columns for a refresh to cost far more than those evaluations
    /// (`newton::refresh_horizon`). On such large systems a stalled increment is also damped
    /// (`newton::large_system`). One attempt.
    fn policy(model: &Model, attempt: u32) -> Option<TangentPolicy> {
        let (n, nv) = (model.n_coords(), model.n_volumes());
        (attempt == 0).then_some(TangentPolicy {
            refresh_horizon: newton::refresh_horizon(n + nv),
            damp_stalls: newton::large_system(n + nv),
            ..TangentPolicy::MODIFIED
        })
    }

    fn problem<'a>(
        model: &'a Model,
        st: &'a State,
        ws: &'a mut Buffers,
        own: &'a mut PenaltyWorkspace,
    ) -> PenaltyNewton<'a> {
        PenaltyNewton {
            model,
            st,
            ws,
            schur: &mut own.schur,
        }
    }

    /// The last multiplier update and the projections of ż and z̈ (000 eqs. 19–21); ż
    /// projected into `ws.tmp`, z̈ into `ws.tmp2`, the cylinder ports at them in `ws.ev`.
    fn project(
        model: &Model,
        st: &State,
        ws: &mut Buffers,
        _: &mut PenaltyWorkspace,
        iterations: u32,
    ) -> Result<(), StepError> {
        let n = model.n_coords();
        let nv = model.n_volumes();
        let dt = model.solver.step_s;
        let (c1, c2, c) = (2.0 / dt, 4.0 / (dt * dt), dt * dt / 4.0);
        let alpha = model.solver.step_penalty();
        // ---- projections (000 eqs. 20–21)
        let z = &ws.x[..n];
        for i in 0..n {
            ws.ev.zd[i] = c1 * z[i] + ws.hist.zd_hat[i];
            ws.ev.zdd[i] = c2 * z[i] + ws.hist.zdd_hat[i];
        }
        let zd_star = std::mem::take(&mut ws.ev.zd);
        // The projections use M′ and Φ_z of the last Newton evaluation, at x_h = x − Δx_h: the
        // accepted iterate differs from it by one converged increment (below the Newton
        // tolerances), so re-evaluating the model there would change the projected rates by
        // O(tolerance) only. Φ is carried to the accepted z to first order, Φ(z) = Φ(z_h) + Φ_z Δz_h
        // (exact to O(Δz_h²) ≈ 1e-14), for the last multiplier update λ ← λ + α Φ (000 eq. 19)
        // and the reported violation. Energies and cylinder rates below use the same positions.
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
        for (sg, psi) in ws.lambda[m0..]
            .iter_mut()
            .zip(ws.ev.nonholonomic.psi.iter())
        {
            *sg += alpha * dt / 2.0 * psi;
        }
        // without constraints P = M′ and the projections are the identity: skipped (a tree). The
        // nonholonomic rows B join the loop-closure rows Φ_z in both projections (B ż = 0,
        // B z̈ + Ḃ ż = 0), so a tree with nonholonomic rows is projected.
        let project = m0 + model.n_nonholonomic() > 0;
        // P is symmetric positive definite (M′ > 0, the penalty term ≥ 0): factored by Cholesky where
        // the buffers keep one (large systems, `Buffers::new`), by LU otherwise or when round-off
        // makes a Cholesky pivot non-positive
        let mut cholesky = false;
        if project {
            ws.counters.factorizations += 1;
            if let Some(ch) = ws.projection_chol.as_mut() {
                fill_projection(ch.values_mut(), &ws.ev, n, c * alpha);
                cholesky = ch.factor().is_ok();
            }
            if !cholesky {
                fill_projection(ws.projection.values_mut(), &ws.ev, n, c * alpha);
            }
        }
        if project && !cholesky && ws.projection.factor().is_err() {
            ws.ev.zd = zd_star;
            return Err(newton_failure(
                model,
                st,
                ws,
                iterations,
                "singular projection matrix",
            ));
        }
        if project {
            mat_vec(&mut ws.tmp, &ws.ev.dynamics.mass, &zd_star);
            solve_projection(ws, cholesky, Rhs::Velocity);
        } else {
            ws.tmp[..n].copy_from_slice(&zd_star[..n]);
        }
        ws.ev.zd = zd_star;
        // ż projected in tmp; velocity terms (Φ̇_z ż, cylinder rates) with it, at the same positions
        let zd_proj = std::mem::take(&mut ws.tmp);
        // friction states of the accepted iterate for the cylinder forces at the projected ż
        ws.ev.fstate.copy_from_slice(&ws.x[model.layout.w.clone()]);
        ws.ev.velocity_terms(model, &zd_proj[..n], &ws.x[n..n + nv]);
        if !project {
            ws.tmp2[..n].copy_from_slice(&ws.ev.zdd[..n]);
        } else {
            mat_vec(&mut ws.tmp2, &ws.ev.dynamics.mass, &ws.ev.zdd);
        }
        for (jr, a0) in ws
            .ev
            .constraints
            .jac
            .chunks_exact(n.max(1))
            .zip(ws.ev.constraints.acc0.iter())
            .chain(
                ws.ev
                    .nonholonomic
                    .b
                    .chunks_exact(n.max(1))
                    .zip(ws.ev.nonholonomic.acc0.iter()),
            )
        {
            let s = c * alpha * a0;
            for (t, ji) in ws.tmp2.iter_mut().zip(jr.iter()) {
                *t -= s * ji;
            }
        }
        if project {
            solve_projection(ws, cholesky, Rhs::Acceleration);
        }
        ws.tmp = zd_proj;
        Ok(())
    }

    fn error(_: &Model, _: &State, failure: StepError) -> StepError {
        failure
    }

    /// z, ż, z̈ (the projected rates), p and ṗ, λ, the friction and internal states, the
    /// friction velocities and friction work.
    fn commit(
        model: &Model,
        st: &mut State,
        ws: &mut Buffers,
        _: &mut PenaltyWorkspace,
        report: &mut StepReport,
    ) {
        let n = model.n_coords();
        let nv = model.n_volumes();
        let dt = model.solver.step_s;
        let c1 = 2.0 / dt;
        report.cavitation_onsets = advance::commit_pressures(model, st, dt, |v| {
            let p_new = ws.x[n + v];
            (p_new, c1 * p_new + ws.hist.pd_hat[v])
        });
        for i in 0..n {
            st.z[i] = ws.x[i];
            st.zd[i] = ws.tmp[i];
            st.zdd[i] = ws.tmp2[i];
        }
        st.lambda.copy_from_slice(&ws.lambda);
        for j in 0..st.friction.len() {
            let w = ws.x[n + nv + j];
            let wd = c1 * w + ws.hist.wd_hat[j];
            st.friction[j] = w;
            st.friction_rate[j] = wd;
        }
        let e0 = model.layout.internal.start;
        for (j, (e, ed)) in st
            .internal
            .iter_mut()
            .zip(st.internal_rate.iter_mut())
            .enumerate()
        {
            *e = ws.x[e0 + j];
            *ed = c1 * *e + ws.hist.ed_hat[j];
        }
        for (v, m) in st.friction_velocity_m_s.iter_mut().zip(ws.ev.motion.iter()) {
            *v = m.sd;
        }
        advance::friction_work(st, &ws.ev.friction_force, &ws.ev.motion, dt);
        advance::joint_friction_work(st, model, &ws.ev.joint_friction_force, dt);
    }

    fn energies(
        model: &Model,
        st: &State,
        ws: &Buffers,
        _: &PenaltyWorkspace,
        report: &mut StepReport,
    ) {
        advance::energies_and_violation(model, &ws.ev, &st.zd, report);
    }
}

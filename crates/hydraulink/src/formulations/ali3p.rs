//! Global ALI3-P in natural coordinates with the unified hydraulic tangent (Naya et al. 2011,
//! 004 §2–3, reference note 000_004 004-A.2/A.3).
//!
//! # Discrete equations
//! Equations of motion with penalty and augmented-Lagrangian multipliers, and the pressure
//! rates (004 eqs. 5, 17):
//!
//! ```text
//! M q̈ + Φ_qᵀ α Φ + Φ_qᵀ λ* = Q(q, q̇, p),     ṗ = h(p, q, q̇)
//! ```
//! M is the constant natural-coordinate mass matrix and Q holds gravity and the cylinder forces
//! Cᵀ F n ([`crate::mechanics::global::natural_coordinates`]); natural coordinates have no velocity-product inertia
//! forces. The trapezoidal rule (Newmark β = ¼, γ = ½; 004 eqs. 7–8, 18–19)
//!
//! ```text
//! q̇ = (2/Δt) q + q̂̇_n,   q̂̇_n = −((2/Δt) q_n + q̇_n)
//! q̈ = (4/Δt²) q + q̂̈_n,  q̂̈_n = −((4/Δt²) q_n + (4/Δt) q̇_n + q̈_n)
//! ṗ = (2/Δt) p + p̂̇_n,   p̂̇_n = −((2/Δt) p_n + ṗ_n)
//! ```
//! turns equilibrium at t_{n+1} (004 eqs. 20–21), scaled by Δt²/4 (eqs. 22–23), into the
//! residual in the unknowns x = [q; p] (004 eq. 25)
//!
//! ```text
//! f(x) = (Δt²/4) [ M q̈ + Φ_qᵀ (α Φ + λ*) − Q ;  ṗ − h ]
//! ```
//! solved by Newton–Raphson, [∂f/∂x] Δx = −f (004 eq. 24), with the multiplier update after every
//! solve, λ*_{i+1} = λ*_i + α Φ_{i+1} (004 eq. 6; λ*_0 = λ_n). The tangent is the exact,
//! non-symmetric ∂f/∂x of 004 eq. 26,
//!
//! ```text
//! | M + (Δt/2)C + (Δt²/4)(Φ_qᵀαΦ_q + Σ(αΦ_r+λ_r)Φ_r,qq + K)   −(Δt²/4) ∂Q/∂p              |
//! | −(Δt/2)((Δt/2) ∂h/∂q + ∂h/∂q̇)                            (Δt/2)(I − (Δt/2) ∂h/∂p)   |
//! ```
//! (C = −∂Q/∂q̇, K = −∂Q/∂q), computed column by column with forward-mode dual numbers through the
//! same generic code that evaluates f (λ held), so it includes the constraint Hessian term that
//! eq. 26 drops. After convergence the velocities and accelerations are projected with W = M
//! (004 eqs. 14–15; pressures are not projected):
//!
//! ```text
//! [M + (Δt²/4) Φ_qᵀ α Φ_q] q̇ = M q̇*
//! [M + (Δt²/4) Φ_qᵀ α Φ_q] q̈ = M q̈* − (Δt²/4) Φ_qᵀ α (Φ̇_q q̇)
//! ```
//! A singular M (massless frames of multi-axis joints) is regularized by the penalty term.
//!
//! # Stages of [`step`]
//! natural state (first step: from z, ż, z̈) → spools, history, predictor → Newton (evaluate,
//! λ update, residual, exact tangent, solve) → λ update at the accepted point →
//! projections → stroke check → commit (q, q̇, q̈, λ into `State::formulation`; z, ż, z̈ recovered;
//! p, ṗ; actuator work; energies).

use crate::formulations::Stepper;
use crate::mechanics::advance::commit_natural;
use crate::mechanics::buffers::Buffers;
use crate::mechanics::global::natural_coordinates::NaturalModel;
use crate::mechanics::global::natural_step::{
    add_hessian, add_jtj, add_mass, ensure_natural_state, initialize_natural, natural_available,
    newton_failure, predict, restart_natural, tolerances,
};
use crate::mechanics::global::{
    add_port_columns, constraint_values, cylinders, dense_columns, dual_columns, evaluate,
    form_residual, jacobian_at, natural, trapezoidal_rates, GlobalWorkspace,
};
use crate::model::Model;
use crate::solver::linalg::{DenseCholesky, DenseLu, SingularMatrix};
use crate::solver::newton::{self, NewtonProblem, TangentPolicy, Tolerances};
use crate::state::State;
use crate::{StepError, StepReport};

/// Stages `advance valves` (every element's valve position at t_n+1, by its own law) and
/// `predict` ([`predict`]).
pub(super) fn prepare(model: &Model, st: &State, g: &mut GlobalWorkspace, spool_new: &mut [f64]) {
    crate::circuit::advance_positions(model, st, model.solver.step_s, spool_new);
    predict(model, st, g);
}

/// Exact tangent ∂f/∂x (004 eq. 26, with the constraint-Hessian term it drops) into `lu`, by
/// blocks. Mechanical part, analytic (Φ is quadratic, so its Hessian H_r is constant):
///
/// ```text
/// ∂f_q/∂q ⊇ M + (Δt²/4)[α Φ_qᵀ Φ_q + Σ_r (α Φ_r + λ_r) H_r]
/// ```
/// Hydraulic ports (cylinder forces in Q, and h), by forward-mode dual numbers through the
/// same generic port code, only in the columns of the coordinates of frames holding a cylinder
/// pin and of the pressures (`port_cols`): −(Δt²/4)(∂Q/∂q + (2/Δt) ∂Q/∂q̇), −(Δt²/4) ∂Q/∂p,
/// −(Δt/2)((Δt/2) ∂h/∂q + ∂h/∂q̇) and (Δt/2)(I − (Δt/2) ∂h/∂p).
fn tangent(model: &Model, g: &mut GlobalWorkspace, spools: &[f64]) {
    let nm = natural(model);
    let GlobalWorkspace {
        x,
        lambda,
        port_cols,
        ev,
        evd,
        jac,
        tangent,
        diag,
        ..
    } = g;
    let lu = tangent.as_mut().expect("global workspace is active");
    let nq = nm.nq;
    let nx = x.len();
    let dt = model.solver.step_s;
    let c = dt * dt / 4.0;
    let c1 = 2.0 / dt;
    let alpha = model.solver.step_penalty();
    jacobian_at(nm, ev, jac);
    {
        let a = lu.values_mut();
        a.iter_mut().for_each(|v| *v = 0.0);
        // M (c · 4/Δt² = 1)
        add_mass(nm, 1.0, nx, a);
        // (Δt²/4) α Φ_qᵀ Φ_q
        add_jtj(nm, jac, c * alpha, nx, a);
        // (Δt²/4) Σ_r g_r H_r, Φ_r = A·B − k: H = A_qᵀ B_q + B_qᵀ A_q
        for ((eq, l), phi) in nm.eqs.iter().zip(lambda.iter()).zip(ev.phi.iter()) {
            add_hessian(eq, c * (alpha * phi + l), nx, a);
        }
    }
    // hydraulic ports, dual columns (x = q: ∂q̇/∂q = 2/Δt)
    let (q, p) = x.split_at(nq);
    add_port_columns(
        model,
        nm,
        (q, &ev.qd, p, &ev.pd),
        (1.0, c1),
        port_cols,
        spools,
        evd,
        nx,
        lu.values_mut(),
    );
    let a = lu.values_mut();
    for (j, d) in diag.iter_mut().enumerate() {
        *d = a[j * nx + j];
    }
}

/// The global ALI3-P Newton problem: x = [q; p] in `g.x`, f in `g.ev.f`, the tangent in
/// `g.tangent`.
pub struct Ali3pNewton<'a> {
    model: &'a Model,
    st: &'a State,
    g: &'a mut GlobalWorkspace,
    spools: &'a [f64],
    counters: &'a mut crate::mechanics::buffers::Counters,
}

impl NewtonProblem for Ali3pNewton<'_> {
    type Error = StepError;

    fn evaluate(&mut self) -> Result<(), StepError> {
        let g = &mut *self.g;
        g.ev.x.copy_from_slice(&g.x);
        evaluate(
            self.model,
            natural(self.model),
            &mut g.ev,
            &g.hist,
            self.spools,
        );
        Ok(())
    }

    fn after_increment(&mut self) {
        // λ ← λ + αΦ (004 eq. 6)
        let alpha = self.model.solver.step_penalty();
        for (l, phi) in self.g.lambda.iter_mut().zip(self.g.ev.phi.iter()) {
            *l += alpha * phi;
        }
    }

    fn form_residual(&mut self) -> Result<(), StepError> {
        let g = &mut *self.g;
        form_residual(self.model, natural(self.model), &mut g.ev, &g.lambda);
        newton::check_finite(self.st.t_s, self.st.step, &g.ev.f, &g.labels)
    }

    fn tangent_reusable(&self) -> bool {
        false
    }

    fn refresh_tangent(&mut self) -> Result<bool, StepError> {
        tangent(self.model, self.g, self.spools);
        Ok(self.g.tangent.as_mut().is_none_or(|lu| lu.factor().is_ok()))
    }

    fn solve_increment(&mut self) {
        let g = &mut *self.g;
        for (d, f) in g.dx.iter_mut().zip(g.ev.f.iter()) {
            *d = -f;
        }
        g.tangent
            .as_mut()
            .expect("global workspace is active")
            .solve_in_place(&mut g.dx);
    }

    fn iterate(&mut self) -> (&mut [f64], &[f64]) {
        (&mut self.g.x, &self.g.dx)
    }

    fn tolerances(&self) -> Tolerances {
        tolerances(self.model, natural(self.model).nq)
    }

    fn counters(&mut self) -> &mut crate::mechanics::buffers::Counters {
        self.counters
    }

    fn failure(&mut self, iterations: u32, reason: &str) -> StepError {
        newton_failure(self.model, self.st, self.g, iterations, reason)
    }
}

/// P = M + (Δt²/4) α Φ_qᵀ Φ_q into `a` (column-major nq × nq; symmetric), using the sparsity
/// of the Φ_q rows (at most four frames each).
fn projection_matrix(model: &Model, nm: &NaturalModel, jac: &[f64], a: &mut [f64]) {
    let nq = nm.nq;
    let dt = model.solver.step_s;
    let ca = dt * dt / 4.0 * model.solver.step_penalty();
    a.iter_mut().for_each(|x| *x = 0.0);
    add_mass(nm, 1.0, nq, a);
    add_jtj(nm, jac, ca, nq, a);
}

/// Factors the projection matrix P of the Φ_q in `g.jac`: by Cholesky (P is symmetric positive
/// definite: M ≥ 0, and the penalty term makes it definite on the coordinates of massless
/// frames), or by LU with partial pivoting when round-off makes a Cholesky pivot non-positive
/// (a nearly singular P, e.g. near a Cardan singularity). Returns whether the LU is in use.
fn factor_projection(
    model: &Model,
    g: &mut GlobalWorkspace,
    counters: &mut crate::mechanics::buffers::Counters,
) -> Result<bool, SingularMatrix> {
    counters.factorizations += 1;
    projection_matrix(
        model,
        natural(model),
        &g.jac,
        g.projection_chol.values_mut(),
    );
    if g.projection_chol.factor().is_ok() {
        return Ok(false);
    }
    let lu = g.projection.as_mut().expect("global workspace is active");
    projection_matrix(model, natural(model), &g.jac, lu.values_mut());
    lu.factor().map(|_| true)
}

/// The global ALI3-P formulation with unified hydraulics (004 §2–3) as a [`Stepper`]. Stages:
/// natural state (first step: from z, ż, z̈) → history, predictor → Newton (evaluate, λ update,
/// residual, exact tangent, solve) → λ update at the accepted point → projections → commit
/// (q, q̇, q̈, λ into `State::formulation`; z, ż, z̈ recovered; p, ṗ).
pub struct Ali3p;

impl Stepper for Ali3p {
    type Workspace = GlobalWorkspace;
    type Failure = StepError;
    type Problem<'a> = Ali3pNewton<'a>;

    fn workspace(model: &Model) -> GlobalWorkspace {
        GlobalWorkspace::new(model)
    }

    fn initialize(model: &Model, st: &mut State, _: &mut Buffers, own: &mut GlobalWorkspace) {
        initialize_natural(model, st, own);
    }

    fn available(model: &Model, own: &GlobalWorkspace) -> Result<(), StepError> {
        natural_available(model, own)
    }

    /// None: no tangent is kept across steps (see [`Stepper::policy`] below).
    fn load_tangent(
        _: &mut Buffers,
        _: &mut GlobalWorkspace,
        _: &[f64],
        _: &[f64],
    ) -> Option<bool> {
        None
    }

    /// `predict`, and the predictor kept for a second attempt.
    fn predict(model: &Model, st: &State, _: &mut Buffers, g: &mut GlobalWorkspace) {
        predict(model, st, g);
        g.x_predictor.copy_from_slice(&g.x);
        g.lambda_predictor.copy_from_slice(&g.lambda);
    }

    /// Newton–Raphson on f(x) = 0 with the multiplier update (004 eqs. 6, 24–25), in up to two
    /// attempts from the same predictor and multipliers: a tangent at the first iteration,
    /// refreshed when the increments do not shrink; when this simplified iteration fails, full
    /// Newton (a tangent at every iteration).
    ///
    /// After a multiplier update λ ← λ + αΦ the next increment carries the position correction
    /// for the new λ (of the order of Φ(x_h)/tolerance, ≈ the previous increment near the
    /// solution), whatever the tangent: the ×5 contraction test of the other formulations would
    /// refresh a good tangent at every second iteration (measured: 1.38 tangents per step on the
    /// four-bar, against 1.02 with refreshes only when the increments do not shrink, with the
    /// same iterations and results).
    ///
    /// No tangent is reused across steps. The (Δt²/4) α Φ_qᵀ Φ_q block turns with the bodies, and
    /// every iterate feeds a multiplier update λ ← λ + αΦ: the poor iterates of a stale tangent
    /// leave λ, hence the constraint satisfaction and the energy balance, measurably worse even
    /// when the increments converge (tried: a slider pendulum at 0.5 ms drifted 4× more, and lost
    /// its second-order energy error, with the tangent of the previous step kept while it
    /// contracted by ×5 and Hairer and Wanner's θ/(1 − θ) stopping rule). Reused within a step it
    /// let a spherical pendulum near its Cardan singularity diverge: the full-Newton retry covers
    /// that case.
    fn policy(_: &Model, attempt: u32) -> Option<TangentPolicy> {
        match attempt {
            0 => Some(TangentPolicy {
                reuse_across_steps: false,
                refresh_ratio: 1.0,
                every_iteration: false,
                keep_fresh: false,
                refresh_horizon: 0,
                damp_stalls: false,
            }),
            1 => Some(TangentPolicy::FULL),
            _ => None,
        }
    }

    fn restart(_: &mut Buffers, g: &mut GlobalWorkspace) {
        restart_natural(g);
    }

    fn problem<'a>(
        model: &'a Model,
        st: &'a State,
        ws: &'a mut Buffers,
        g: &'a mut GlobalWorkspace,
    ) -> Ali3pNewton<'a> {
        let Buffers {
            spool_new,
            counters,
            ..
        } = ws;
        Ali3pNewton {
            model,
            st,
            g,
            spools: spool_new,
            counters,
        }
    }

    /// The accepted point (Φ, q̇*, q̈*, the last multiplier update, 004 eq. 6), the projections
    /// (004 eqs. 14–15, W = M) into `g.tmp` (q̇) and `g.tmp2` (q̈), the cylinder ports.
    fn project(
        model: &Model,
        st: &State,
        ws: &mut Buffers,
        g: &mut GlobalWorkspace,
        iterations: u32,
    ) -> Result<(), StepError> {
        let dt = model.solver.step_s;
        let c = dt * dt / 4.0;
        let alpha = model.solver.step_penalty();
        let nm = natural(model);
        let nq = nm.nq;
        // (only the rates and Φ: the forces of this point are not needed)
        g.ev.x.copy_from_slice(&g.x);
        trapezoidal_rates(model, nm, &mut g.ev, &g.hist);
        constraint_values(nm, &mut g.ev);
        for (l, phi) in g.lambda.iter_mut().zip(g.ev.phi.iter()) {
            *l += alpha * phi;
        }

        // ---- projections (004 eqs. 14–15, W = M)
        jacobian_at(nm, &g.ev, &mut g.jac);
        let Ok(use_lu) = factor_projection(model, g, &mut ws.counters) else {
            return Err(newton_failure(
                model,
                st,
                g,
                iterations,
                "singular projection matrix",
            ));
        };
        let nm = natural(model);
        let q = &g.x[..nq];
        let solve = |g_chol: &DenseCholesky, g_lu: &mut Option<DenseLu>, v: &mut [f64]| {
            if use_lu {
                g_lu.as_mut()
                    .expect("global workspace is active")
                    .solve_in_place(v);
            } else {
                g_chol.solve_in_place(v);
            }
        };
        nm.mass_times(&g.ev.qd, &mut g.tmp);
        solve(&g.projection_chol, &mut g.projection, &mut g.tmp);
        for (a0, eq) in g.tmp_m.iter_mut().zip(nm.eqs.iter()) {
            *a0 = eq.acc0(&g.tmp);
        }
        nm.mass_times(&g.ev.qdd, &mut g.tmp2);
        for (row, a0) in g.jac.chunks_exact(nq).zip(g.tmp_m.iter()) {
            let s = c * alpha * a0;
            if s != 0.0 {
                for (t, j) in g.tmp2.iter_mut().zip(row.iter()) {
                    *t -= s * j;
                }
            }
        }
        solve(&g.projection_chol, &mut g.projection, &mut g.tmp2);

        // ---- cylinder ports with the projected q̇ (outputs, actuator power)
        cylinders(
            model,
            nm,
            q,
            &g.tmp,
            &g.x[nq..],
            &mut ws.ev.motion,
            &mut ws.ev.cylinder_force,
            &mut g.ev.force,
        );
        Ok(())
    }

    fn error(_: &Model, _: &State, failure: StepError) -> StepError {
        failure
    }

    fn commit(
        model: &Model,
        st: &mut State,
        _: &mut Buffers,
        g: &mut GlobalWorkspace,
        report: &mut StepReport,
    ) {
        let nq = natural(model).nq;
        let c1 = 2.0 / model.solver.step_s;
        commit_natural(
            model,
            st,
            report,
            (&g.x[..nq], &g.tmp, &g.tmp2),
            &g.lambda,
            |v| {
                let p_new = g.x[nq + v];
                (p_new, c1 * p_new + g.hist.pd_hat[v])
            },
        );
    }

    /// At the committed q and q̇; ‖Φ‖ at the accepted point (before the projections).
    fn energies(
        model: &Model,
        _: &State,
        _: &Buffers,
        g: &GlobalWorkspace,
        report: &mut StepReport,
    ) {
        let nm = natural(model);
        report.kinetic_j = nm.kinetic_energy(&g.tmp);
        report.potential_j = nm.potential_energy(model, &g.x[..nm.nq]);
        report.constraint_violation = g.ev.phi.iter().map(|p| p * p).sum::<f64>().sqrt();
    }
}

/// Diagnostics for tests: the production (structured) tangent, the full dual-number tangent
/// and the central-difference approximation with relative step `h` of ∂f/∂x, all at the
/// predictor of the next step of `st` (column-major nx × nx). Allocates.
pub fn tangent_and_central_differences(
    model: &Model,
    st: &State,
    ws: &mut Buffers,
    g: &mut GlobalWorkspace,
    h: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut st = st.clone();
    ensure_natural_state(model, &mut st, g);
    prepare(model, &st, g, &mut ws.spool_new);
    ws.tangent_valid = false;
    let nx = g.x.len();
    g.ev.x.copy_from_slice(&g.x);
    evaluate(model, natural(model), &mut g.ev, &g.hist, &ws.spool_new);
    tangent(model, g, &ws.spool_new);
    let lu = g.tangent.as_mut().expect("global workspace is active");
    let structured = dense_columns(lu);
    let (nm, hist, lambda, spools) = (natural(model), &g.hist, &g.lambda, &ws.spool_new);
    let dual = dual_columns(&g.x, &mut g.evd, |evd| {
        evaluate(model, nm, evd, hist, spools);
        form_residual(model, nm, evd, lambda);
    });
    let mut fd = vec![0.0; nx * nx];
    let x0 = g.x.clone();
    let mut fp = vec![0.0; nx];
    for j in 0..nx {
        let step = h * x0[j].abs().max(1.0);
        for sgn in [1.0, -1.0] {
            g.ev.x.copy_from_slice(&x0);
            g.ev.x[j] += sgn * step;
            evaluate(model, natural(model), &mut g.ev, &g.hist, &ws.spool_new);
            form_residual(model, natural(model), &mut g.ev, &g.lambda);
            for i in 0..nx {
                if sgn > 0.0 {
                    fp[i] = g.ev.f[i];
                } else {
                    fd[j * nx + i] = (fp[i] - g.ev.f[i]) / (2.0 * step);
                }
            }
        }
    }
    (structured, dual, fd)
}

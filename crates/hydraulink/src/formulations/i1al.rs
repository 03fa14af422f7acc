//! Global index-1 augmented Lagrangian (I1AL) in natural coordinates (002 §2.1, reference note
//! 002a A.1.2, eqs. 2.6–2.9), monolithic with the hydraulics and integrated by the trapezoidal
//! rule (Pub III).
//!
//! # Discrete equations
//! Accelerations are the primary variables. With the stabilized constraint combination
//! (Baumgarte-like, 002a eq. 2.6)
//!
//! ```text
//! Ψ = Φ̈ + 2 ω ξ Φ̇ + ω² Φ,   Φ̇ = Φ_q q̇,   Φ̈ = Φ_q q̈ + Φ̇_q q̇
//! M q̈ + Φ_qᵀ α′ Ψ + Φ_qᵀ λ* = Q(q, q̇, p)                 (002a eq. 2.7)
//! λ*_{i+1} = λ*_i + α′ Ψ_{i+1}                             (002a eq. 2.8)
//! ```
//! and the trapezoidal rule (Newmark β = ¼, γ = ½) written in the accelerations,
//!
//! ```text
//! q_{n+1} = q_n + Δt q̇_n + (Δt²/4)(q̈_n + q̈_{n+1}),   q̇_{n+1} = q̇_n + (Δt/2)(q̈_n + q̈_{n+1})
//! ṗ_{n+1} = (2/Δt)(p_{n+1} − p_n) − ṗ_n
//! ```
//! the unknowns x = [q̈; p] at t_{n+1} solve, by Newton–Raphson with the exact tangent (λ* held;
//! analytic mechanical blocks and dual-number port columns, see `tangent`; computed at the first
//! iteration of a step and refreshed when the increments contract by less than ×5) and the
//! multiplier update after each solve,
//!
//! ```text
//! f(x) = (Δt²/4) [ M q̈ + Φ_qᵀ (α′ Ψ + λ*) − Q ;  ṗ − h ]     (pressure rows as in ALI3-P)
//! ```
//! This is the fixed point of 002a eq. 2.9 (whose matrix M + α′ Φ_qᵀ Φ_q is the leading block of
//! the tangent), solved together with the positions and pressures. No projections: Ψ = 0 keeps
//! Φ and Φ̇ decaying.
//!
//! # Parameters
//! The model's α is the position-level penalty of ALI3-P; the acceleration-level penalty here is
//! α′ = α Δt²/4, so that M + α′ Φ_qᵀ Φ_q is the leading matrix of ALI3-P (002 gives no numbers
//! for a monolithic I1AL). ω = 10 rad/s and ξ = 1 ([`OMEGA`], [`XI`]; 002a A.1.2: "similar to
//! Baumgarte", values not given).
//!
//! `State::formulation` holds the natural state of the module [`super`]; its λ is λ*.

use crate::circuit;
use crate::circuit::reduced;
use crate::formulations::Stepper;
use crate::mechanics::buffers::Buffers;
use crate::mechanics::global::natural_coordinates::NaturalModel;
use crate::mechanics::global::natural_step::{
    self, add_hessian, add_mass, ensure_natural_state, natural_state, newton_failure,
};
use crate::mechanics::global::{
    add_port_columns, cylinders, dense_columns, dual_columns, natural, GlobalWorkspace, NatEval,
};
use crate::model::Model;
use crate::solver::newton::{self, NewtonProblem, TangentPolicy, Tolerances};
use crate::solver::real::Real;
use crate::state::State;
use crate::{StepError, StepReport};

/// Baumgarte-like frequency ω of the constraint combination Ψ [rad/s].
pub const OMEGA: f64 = 10.0;
/// Damping ratio ξ of Ψ [-].
pub const XI: f64 = 1.0;

/// The previous step's q_n, q̇_n, q̈_n, p_n, ṗ_n.
struct Prev<'a> {
    q: &'a [f64],
    qd: &'a [f64],
    qdd: &'a [f64],
    p: &'a [f64],
    pd: &'a [f64],
}

impl<'a> Prev<'a> {
    /// The step's start values, from the committed state (`State::formulation`: q, q̇, q̈).
    fn of(st: &'a State) -> Self {
        let ns = natural_state(st);
        Prev {
            q: &ns.q,
            qd: &ns.qd,
            qdd: &ns.qdd,
            p: &st.p,
            pd: &st.pd,
        }
    }
}

/// Stage `predict`: pressure predictor and λ*, and x = [q̈⁰; p⁰] with q̈⁰ = q̈_n; the
/// predictor kept for a second attempt.
fn predict(model: &Model, st: &State, g: &mut GlobalWorkspace) {
    natural_step::predict(model, st, g);
    let nq = natural(model).nq;
    g.x[..nq].copy_from_slice(&natural_state(st).qdd);
    g.x_predictor.copy_from_slice(&g.x);
    g.lambda_predictor.copy_from_slice(&g.lambda);
}

/// Evaluates at x = `ev.x` = [q̈; p]: q, q̇ (Newmark), ṗ, Ψ (into `ev.phi`), Q, h, and the
/// residual f (λ* = `lambda`).
fn residual<S: Real>(
    model: &Model,
    nm: &NaturalModel,
    ev: &mut NatEval<S>,
    prev: &Prev<'_>,
    lambda: &[f64],
    spools: &[f64],
) {
    let nq = nm.nq;
    let dt = model.solver.step_s;
    let c = dt * dt / 4.0;
    let alpha = model.solver.penalty * c;
    let (x_qdd, x_p) = ev.x.split_at(nq);
    for i in 0..nq {
        ev.qdd[i] = x_qdd[i];
        ev.q[i] = (x_qdd[i] + prev.qdd[i]) * c + prev.q[i] + dt * prev.qd[i];
        ev.qd[i] = (x_qdd[i] + prev.qdd[i]) * (0.5 * dt) + prev.qd[i];
    }
    for (v, pd) in ev.pd.iter_mut().enumerate() {
        *pd = (x_p[v] - prev.p[v]) * (2.0 / dt) - prev.pd[v];
    }
    for ((((psi, av), bv), rates), eq) in ev
        .phi
        .iter_mut()
        .zip(ev.a_val.iter_mut())
        .zip(ev.b_val.iter_mut())
        .zip(ev.ab_rates.iter_mut())
        .zip(nm.eqs.iter())
    {
        let (a, b) = (eq.a.eval(&ev.q), eq.b.eval(&ev.q));
        let (ad, bd) = (eq.a.rate(&ev.qd), eq.b.rate(&ev.qd));
        let (add, bdd) = (eq.a.rate(&ev.qdd), eq.b.rate(&ev.qdd));
        let phi = a.dot(&b) - S::from(eq.k);
        let phid = ad.dot(&b) + a.dot(&bd);
        let phidd = add.dot(&b) + ad.dot(&bd) * 2.0 + a.dot(&bdd);
        *psi = phidd + phid * (2.0 * OMEGA * XI) + phi * (OMEGA * OMEGA);
        (*av, *bv) = (a, b);
        *rates = [ad, bd, add, bdd];
    }
    for (f, g) in ev.force.iter_mut().zip(nm.gravity_force.iter()) {
        *f = S::from(*g);
    }
    cylinders(
        model,
        nm,
        &ev.q,
        &ev.qd,
        x_p,
        &mut ev.motion,
        &mut ev.cylinder_force,
        &mut ev.force,
    );
    crate::mechanics::global::element_forces(
        model,
        nm,
        &ev.q,
        &ev.qd,
        &ev.element_u,
        &mut ev.force,
    );
    circuit::pressure_rates(model, x_p, &ev.motion, spools, &mut ev.inflow, &mut ev.h);
    nm.mass_times(&ev.qdd, &mut ev.mq);
    crate::mechanics::global::mechanical_residual(nm, ev, lambda, alpha);
    for fi in ev.f[..nq].iter_mut() {
        *fi *= c;
    }
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        ev.f[nq + v] = reduced::pressure_row(vol, ev.pd[v], ev.h[v]) * c;
    }
}

/// Exact tangent ∂f/∂x, x = [q̈; p], by blocks (`g.ev` evaluated at x = `g.x`; λ* = `g.lambda` held), into `g.tangent`. With
/// c = Δt²/4, β = Δt/2, α′ = α c, ∂q/∂q̈ = c I and ∂q̇/∂q̈ = β I:
///
/// ```text
/// ∂f_q/∂q̈ = c [ M + α′ Σ_r ∇Φ_r w_rᵀ + c Σ_r (α′Ψ_r + λ_r) H_r − (c ∂Q/∂q + β ∂Q/∂q̇) ]
/// w_r = ∂Ψ_r/∂q̈ = (1 + 2ωξβ + ω²c) ∇Φ_r + (2β + 2ωξc)(A_qᵀḂ + B_qᵀȦ) + c (A_qᵀB̈ + B_qᵀÄ)
/// ```
/// (Φ = A·B − k, Φ̇ = Ȧ·B + A·Ḃ, Φ̈ = Ä·B + 2Ȧ·Ḃ + A·B̈, H_r the constant Hessian), and the
/// cylinder and pressure columns (∂Q/∂q, ∂Q/∂q̇, ∂Q/∂p, ∂h/∂·) by dual numbers through the port
/// code ([`crate::mechanics::global::add_port_columns`]), in the columns the cylinder pins depend on and of the
/// pressures.
fn tangent(model: &Model, g: &mut GlobalWorkspace, spools: &[f64]) {
    let nm = natural(model);
    let GlobalWorkspace {
        x,
        ev,
        evd,
        lambda,
        port_cols,
        tmp: grad,
        tmp2: w,
        tangent,
        diag,
        ..
    } = g;
    let lu = tangent.as_mut().expect("global workspace is active");
    let nq = nm.nq;
    let nx = x.len();
    let dt = model.solver.step_s;
    let c = dt * dt / 4.0;
    let beta = 0.5 * dt;
    let alpha = model.solver.penalty * c;
    let k1 = 1.0 + 2.0 * OMEGA * XI * beta + OMEGA * OMEGA * c;
    let k2 = 2.0 * beta + 2.0 * OMEGA * XI * c;
    let a = lu.values_mut();
    a.iter_mut().for_each(|v| *v = 0.0);
    add_mass(nm, c, nx, a);
    grad.iter_mut().for_each(|v| *v = 0.0);
    w.iter_mut().for_each(|v| *v = 0.0);
    for (((((eq, psi), l), av), bv), rates) in nm
        .eqs
        .iter()
        .zip(ev.phi.iter())
        .zip(lambda.iter())
        .zip(ev.a_val.iter())
        .zip(ev.b_val.iter())
        .zip(ev.ab_rates.iter())
    {
        // ∇Φ_r and w_r (A, B and their rates as evaluated by `residual`)
        let [ad, bd, add, bdd] = *rates;
        // grad and w are zero outside the pattern (cleared after each row)
        eq.a.add_grad(bv, grad);
        eq.b.add_grad(av, grad);
        eq.a.add_grad(&(bd * k2 + bdd * c), w);
        eq.b.add_grad(&(ad * k2 + add * c), w);
        for &i in &eq.pattern {
            w[i] += k1 * grad[i];
        }
        let s = c * alpha;
        for &j in &eq.pattern {
            let sj = s * w[j];
            if sj != 0.0 {
                for &i in &eq.pattern {
                    a[j * nx + i] += sj * grad[i];
                }
            }
        }
        for &i in &eq.pattern {
            grad[i] = 0.0;
            w[i] = 0.0;
        }
        add_hessian(eq, c * c * (alpha * psi + l), nx, a);
    }
    // hydraulic ports, dual columns (x = q̈: ∂q/∂q̈ = Δt²/4, ∂q̇/∂q̈ = Δt/2)
    add_port_columns(
        model,
        nm,
        (&ev.q, &ev.qd, &x[nq..], &ev.pd),
        (c, beta),
        port_cols,
        spools,
        evd,
        nx,
        a,
    );
    for (j, d) in diag.iter_mut().enumerate() {
        *d = a[j * nx + j];
    }
}

/// Diagnostics for tests: the production (structured) tangent and the full dual-number tangent
/// of the I1AL residual at the start of the next step of `st` (x = [q̈_n; p predictor]),
/// column-major nx × nx. Allocates.
pub fn tangent_and_dual(
    model: &Model,
    st: &State,
    ws: &mut Buffers,
    g: &mut GlobalWorkspace,
) -> (Vec<f64>, Vec<f64>) {
    let mut st = st.clone();
    ensure_natural_state(model, &mut st, g);
    circuit::advance_positions(model, &st, model.solver.step_s, &mut ws.spool_new);
    predict(model, &st, g);
    let prev = Prev::of(&st);
    g.ev.x.copy_from_slice(&g.x);
    residual(
        model,
        natural(model),
        &mut g.ev,
        &prev,
        &g.lambda,
        &ws.spool_new,
    );
    tangent(model, g, &ws.spool_new);
    let lu = g.tangent.as_mut().expect("global workspace is active");
    let structured = dense_columns(lu);
    let (nm, lambda, spools) = (natural(model), &g.lambda, &ws.spool_new);
    let dual = dual_columns(&g.x, &mut g.evd, |evd| {
        residual(model, nm, evd, &prev, lambda, spools)
    });
    (structured, dual)
}

/// Tolerances of x = [q̈; p]: q̈ to tol_position/(Δt²/4) (a position change of tol_position),
/// pressures to tol_pressure_pa.
fn tolerances(model: &Model, nq: usize) -> Tolerances {
    let s = &model.solver;
    let dt = s.step_s;
    model
        .layout
        .tolerances_with(nq, s.tol_position / (dt * dt / 4.0), s.tol_relative)
}

/// The I1AL Newton problem: x = [q̈; p] in `g.x`, f in `g.ev.f`, the tangent in `g.tangent`
/// (reused across steps while `tangent_valid`).
pub struct I1alNewton<'a> {
    model: &'a Model,
    st: &'a State,
    prev: Prev<'a>,
    g: &'a mut GlobalWorkspace,
    spools: &'a [f64],
    counters: &'a mut crate::mechanics::buffers::Counters,
    tangent_valid: &'a mut bool,
    tangent_id: &'a mut u64,
    tangent_pending: &'a mut crate::state::TangentCache,
}

impl NewtonProblem for I1alNewton<'_> {
    type Error = StepError;

    fn evaluate(&mut self) -> Result<(), StepError> {
        let g = &mut *self.g;
        g.ev.x.copy_from_slice(&g.x);
        residual(
            self.model,
            natural(self.model),
            &mut g.ev,
            &self.prev,
            &g.lambda,
            self.spools,
        );
        Ok(())
    }

    fn after_increment(&mut self) {
        // λ* ← λ* + α′ Ψ (002a eq. 2.8), and the residual with it: only its multiplier term
        // changes, by (Δt²/4) Σ_r α′ Ψ_r ∇Φ_r
        let dt = self.model.solver.step_s;
        let c = dt * dt / 4.0;
        let alpha = self.model.solver.penalty * c;
        let g = &mut *self.g;
        let nq = natural(self.model).nq;
        for ((l, psi), eq) in g
            .lambda
            .iter_mut()
            .zip(g.ev.phi.iter())
            .zip(natural(self.model).eqs.iter())
        {
            *l += alpha * psi;
            eq.add_grad(&g.ev.q, c * alpha * psi, &mut g.ev.f[..nq]);
        }
    }

    fn form_residual(&mut self) -> Result<(), StepError> {
        newton::check_finite(self.st.t_s, self.st.step, &self.g.ev.f, &self.g.labels)
    }

    fn tangent_reusable(&self) -> bool {
        *self.tangent_valid
    }

    fn refresh_tangent(&mut self) -> Result<bool, StepError> {
        tangent(self.model, self.g, self.spools);
        *self.tangent_valid = false;
        if let Some(lu) = self.g.tangent.as_ref() {
            *self.tangent_id = self
                .tangent_pending
                .record(self.st.tangent.id, lu.values(), &[]);
        }
        if self
            .g
            .tangent
            .as_mut()
            .is_some_and(|lu| lu.factor().is_err())
        {
            return Ok(false);
        }
        *self.tangent_valid = true;
        Ok(true)
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
        // the weighted residual of ALI3-P's failure (its tolerances name the same unknowns)
        newton_failure(self.model, self.st, self.g, iterations, reason)
    }
}

/// The global index-1 augmented Lagrangian formulation (002) as a [`Stepper`].
pub struct I1al;

impl Stepper for I1al {
    type Workspace = GlobalWorkspace;
    type Failure = StepError;
    type Problem<'a> = I1alNewton<'a>;

    fn workspace(model: &Model) -> GlobalWorkspace {
        GlobalWorkspace::new(model)
    }

    fn initialize(model: &Model, st: &mut State, _: &mut Buffers, own: &mut GlobalWorkspace) {
        natural_step::initialize_natural(model, st, own);
    }

    fn available(model: &Model, own: &GlobalWorkspace) -> Result<(), StepError> {
        natural_step::natural_available(model, own)
    }

    /// The LU tangent of x = [q̈; p], when the workspace has one of the matrix's size.
    fn load_tangent(
        _: &mut Buffers,
        g: &mut GlobalWorkspace,
        matrix: &[f64],
        _: &[f64],
    ) -> Option<bool> {
        let lu = g.tangent.as_mut()?;
        if matrix.len() != lu.values().len() {
            return None;
        }
        lu.values_mut().copy_from_slice(matrix);
        Some(lu.factor().is_ok())
    }

    fn predict(model: &Model, st: &State, _: &mut Buffers, g: &mut GlobalWorkspace) {
        predict(model, st, g);
    }

    /// Newton–Raphson with the multiplier update: the tangent is reused across steps while it
    /// contracts the increments by ×5; if that fails, the step is solved again from its
    /// predictor with a tangent at every iteration (a reused tangent let the spatial double
    /// pendulum diverge).
    fn policy(_: &Model, attempt: u32) -> Option<TangentPolicy> {
        match attempt {
            0 => Some(TangentPolicy::MODIFIED),
            1 => Some(TangentPolicy::FULL),
            _ => None,
        }
    }

    fn restart(_: &mut Buffers, g: &mut GlobalWorkspace) {
        natural_step::restart_natural(g);
    }

    fn problem<'a>(
        model: &'a Model,
        st: &'a State,
        ws: &'a mut Buffers,
        g: &'a mut GlobalWorkspace,
    ) -> I1alNewton<'a> {
        let Buffers {
            spool_new,
            counters,
            tangent_valid,
            tangent_id,
            tangent_pending,
            ..
        } = ws;
        I1alNewton {
            model,
            st,
            prev: Prev::of(st),
            g,
            spools: spool_new,
            counters,
            tangent_valid,
            tangent_id,
            tangent_pending,
        }
    }

    /// The accepted point: q, q̇, Ψ, the last multiplier update, the cylinder ports (no
    /// projection: the index-1 combination Ψ holds the velocities and accelerations).
    fn project(
        model: &Model,
        st: &State,
        ws: &mut Buffers,
        g: &mut GlobalWorkspace,
        _: u32,
    ) -> Result<(), StepError> {
        let dt = model.solver.step_s;
        let alpha = model.solver.penalty * dt * dt / 4.0;
        let prev = Prev::of(st);
        // ---- the accepted point: q, q̇, Ψ, the last multiplier update, the cylinder ports
        g.ev.x.copy_from_slice(&g.x);
        residual(
            model,
            natural(model),
            &mut g.ev,
            &prev,
            &g.lambda,
            &ws.spool_new,
        );
        for (l, psi) in g.lambda.iter_mut().zip(g.ev.phi.iter()) {
            *l += alpha * psi;
        }
        ws.ev.motion.copy_from_slice(&g.ev.motion);
        ws.ev.cylinder_force.copy_from_slice(&g.ev.cylinder_force);
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
        crate::mechanics::advance::commit_natural(
            model,
            st,
            report,
            (&g.ev.q, &g.ev.qd, &g.ev.qdd),
            &g.lambda,
            |v| (g.x[nq + v], g.ev.pd[v]),
        );
    }

    /// At the committed q and q̇; ‖Φ(q)‖ of the natural constraints.
    fn energies(
        model: &Model,
        _: &State,
        _: &Buffers,
        g: &GlobalWorkspace,
        report: &mut StepReport,
    ) {
        let nm = natural(model);
        report.kinetic_j = nm.kinetic_energy(&g.ev.qd);
        report.potential_j = nm.potential_energy(model, &g.ev.q);
        report.constraint_violation = nm
            .eqs
            .iter()
            .map(|eq| eq.phi(&g.ev.q).powi(2))
            .sum::<f64>()
            .sqrt();
    }
}

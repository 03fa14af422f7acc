//! The Newton–Raphson solver of every monolithic formulation (STYLE convention 7): one loop,
//! generic over a [`NewtonProblem`], with
//!
//! - a weighted increment test with per-unknown absolute tolerances ([`Tolerances`]), a relative
//!   one and a round-off floor ([`weight`]);
//! - a hook after each increment ([`NewtonProblem::after_increment`]: the multiplier update
//!   λ ← λ + αΦ of the augmented Lagrangian);
//! - an explicit tangent-reuse policy ([`TangentPolicy`]) and a contraction-rate divergence test
//!   ([`NewtonControl::judge`]);
//! - a damped increment where a fresh tangent stalls ([`STALL_RATIO`], [`DAMPING`]), which breaks
//!   the two-cycles of Newton's method on square-root orifice laws;
//! - a rescue where a large system's increments grow ([`TangentPolicy::damp_stalls`]): instead of
//!   failing, the solve goes on as damped full Newton (a fresh tangent and the fraction
//!   [`DAMPING`] of each increment) up to the iteration cap. A solve that converges without it
//!   takes exactly the iterates it took before; only a solve that used to fail changes;
//! - counted statistics ([`crate::mechanics::buffers::Counters`]: residuals, tangents, factorizations,
//!   iterations, damped increments);
//! - a line search ([`NewtonProblem::step_fraction`]: x_{h+1} = x_h + α Δx) and a projection of
//!   the iterate onto its admissible set ([`NewtonProblem::project_iterate`]), both doing
//!   nothing by default;
//! - any scalar [`Real`]: the unknowns of a [`NewtonProblem<S>`] may be dual numbers (the
//!   double-step position problem runs in `Dual64` for its tangent columns); every norm and
//!   test is on the real parts, so an `f64` problem computes exactly what it did before.
//!
//! Scale awareness (issue 10, docs/theory 3.12). The augmented-Lagrangian formulations update
//! the multipliers once per Newton iteration; the update contracts the constraint violation by
//! about 1/(1 + αΔt²/(4 m)) per iteration (m: the mass the constraint moves), so with a fixed α
//! it stops contracting as Δt falls (0.98 per iteration for the four-bar at 10 µs, 0.9984 at
//! 1 µs), and a pressure tied to the positions by the hydraulic stiffness (≈ 1e9 Pa/m) keeps
//! moving by more than its 1e-2 Pa tolerance long after the positions have converged; at 1 µs
//! the per-iteration update even winds the multipliers up from step to step. `SolverOptions::step_penalty`
//! therefore keeps the penalty's weight in the iteration matrix, αΔt²/4, at least what it is at
//! the reference step [`PENALTY_REFERENCE_STEP_S`], so a smaller step converges at least as fast
//! as a larger one. The round-off floor of [`weight`] keeps an unknown's tolerance above the
//! resolution of its own value.

use crate::solver::real::Real;

/// The step Δt_α [s] at which the model's penalty factor α is taken as given (000 §2.3: α = 1e11
/// with Δt = 1 ms). Below it, `SolverOptions::step_penalty` scales α by (Δt_α/Δt)².
pub const PENALTY_REFERENCE_STEP_S: f64 = 1e-3;

/// α_Δt of `SolverOptions::step_penalty` (the model's options) for penalty factor `alpha` and step `dt` [s].
pub fn penalty_at(alpha: f64, dt: f64) -> f64 {
    if dt < PENALTY_REFERENCE_STEP_S {
        let r = PENALTY_REFERENCE_STEP_S / dt;
        alpha * r * r
    } else {
        alpha
    }
}

pub use super::tolerances::{weight, Tolerances, ROUNDOFF_ULPS};

/// Counters of the numerical work (reported, never used for control except the reuse policy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Residual evaluations.
    pub residuals: u64,
    /// Tangent evaluations.
    pub tangents: u64,
    /// LU factorizations.
    pub factorizations: u64,
    /// Newton iterations.
    pub iterations: u64,
    /// Newton increments damped because a fresh tangent stalled ([`DAMPING`]).
    pub damped: u64,
    /// Solves that diverged and were continued as damped full Newton
    /// ([`solve`], the rescue of a large system).
    pub rescues: u64,
}

/// When the tangent is (re)computed: the explicit, counted Jacobian-reuse policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TangentPolicy {
    /// Factors left by an earlier step may serve the first iteration (modified Newton across
    /// steps) when the problem reports them usable ([`NewtonProblem::tangent_reusable`]).
    pub reuse_across_steps: bool,
    /// A tangent whose increments shrink by less than 1/`refresh_ratio` per iteration
    /// (ν_h > ratio ν_{h−1}) is recomputed.
    pub refresh_ratio: f64,
    /// A fresh tangent at every iteration (full Newton).
    pub every_iteration: bool,
    /// Once a tangent of this solve exists, the contraction test no longer refreshes it (the
    /// multiplier updates converge linearly whatever the tangent).
    pub keep_fresh: bool,
    /// Refresh horizon m (0: off). A slowly contracting tangent (ν_h > ratio ν_{h−1}) is kept
    /// when its own contraction r = ν_h/ν_{h−1} ≤ [`HORIZON_MAX_RATIO`] predicts convergence
    /// within m further iterations, ν_h r^m ≤ 1: m evaluations cost less than one tangent. The
    /// prediction is a promise: the solve refreshes once it is not converged m iterations after
    /// the first kept tangent, or as soon as the prediction fails.
    pub refresh_horizon: u32,
    /// Damped increments where Newton stalls: an increment with the tangent at its own iterate
    /// that is not smaller than [`STALL_RATIO`] times the one before; only the fraction
    /// [`DAMPING`] of it is taken.
    pub damp_stalls: bool,
}

impl TangentPolicy {
    /// Modified Newton: factors reused across steps, refreshed when ν contracts by less than ×5.
    pub const MODIFIED: TangentPolicy = TangentPolicy {
        reuse_across_steps: true,
        refresh_ratio: REFRESH_RATIO,
        every_iteration: false,
        keep_fresh: false,
        refresh_horizon: 0,
        damp_stalls: false,
    };
    /// Full Newton: a tangent at every iteration.
    pub const FULL: TangentPolicy = TangentPolicy {
        reuse_across_steps: false,
        refresh_ratio: REFRESH_RATIO,
        every_iteration: true,
        keep_fresh: false,
        refresh_horizon: 0,
        damp_stalls: false,
    };
}

/// A nonlinear system f(x) = 0 of one step, solved by [`solve`]. The problem owns x, Δx, f and
/// the factored tangent; the solver drives it. The unknowns are of scalar type `S` (`f64` unless
/// said otherwise; a dual number carries a derivative through the solve).
///
/// One iteration h: [`evaluate`](NewtonProblem::evaluate) at x_h →
/// [`after_increment`](NewtonProblem::after_increment) (h > 0) →
/// [`form_residual`](NewtonProblem::form_residual) →
/// [`residual_converged`](NewtonProblem::residual_converged) → iteration cap →
/// [`refresh_tangent`](NewtonProblem::refresh_tangent) (when the policy asks) →
/// [`solve_increment`](NewtonProblem::solve_increment) →
/// [`step_fraction`](NewtonProblem::step_fraction) α → x_{h+1} = x_h + α Δx →
/// [`project_iterate`](NewtonProblem::project_iterate) → the weighted test (unless the problem
/// [`converges_on_residual`](NewtonProblem::converges_on_residual)).
pub trait NewtonProblem<S: Real = f64> {
    /// The error a failed solve returns.
    type Error;
    /// Evaluates every element at x_h (what the residual and the hook need).
    fn evaluate(&mut self) -> Result<(), Self::Error>;
    /// Hook after each increment, with the evaluation at x_h: the multiplier update.
    fn after_increment(&mut self) {}
    /// Forms f(x_h) from the evaluation; an error names a non-finite entry.
    fn form_residual(&mut self) -> Result<(), Self::Error>;
    /// Whether factors left by an earlier step exist and may be reused.
    fn tangent_reusable(&self) -> bool;
    /// Assembles and factors the tangent at x_h; Ok(false) when it is singular.
    fn refresh_tangent(&mut self) -> Result<bool, Self::Error>;
    /// Δx = −J⁻¹ f with the current factors.
    fn solve_increment(&mut self);
    /// The unknowns x and the increment Δx the weighted test measures.
    fn iterate(&mut self) -> (&mut [S], &[S]);
    /// The line search: the fraction α of the increment Δx to take, x_{h+1} = x_h + α Δx.
    /// Called after [`solve_increment`](NewtonProblem::solve_increment), with x still at x_h, so
    /// the problem may evaluate its merit at trial points. 1 (the full step, x_h + Δx exactly,
    /// and no further evaluation) by default. The weighted test measures the full Δx.
    fn step_fraction(&mut self) -> f64 {
        1.0
    }
    /// Hook right after x_{h+1} is formed: projects it onto the unknowns' admissible set (a
    /// valve opening onto [0, 1]); nothing by default.
    fn project_iterate(&mut self) {}
    /// Per-unknown tolerances of [`iterate`](NewtonProblem::iterate)'s unknowns, fixed for the
    /// solve: [`solve`] asks once, before its first iteration.
    fn tolerances(&self) -> Tolerances;
    /// A further weighted norm the increment implies for quantities that are not unknowns
    /// (multi-rate: the pressures p_k+1(z)); 0 by default.
    fn implied_norm(&self) -> f64 {
        0.0
    }
    /// Whether the solve converges on the problem's own test ([`residual_converged`], on the
    /// residual or on an increment of its own) rather than on the weighted increment: the
    /// increment is then added to x without the weighted test (a minimum-norm Gauss–Newton
    /// iteration on an underdetermined system, such as loop closure over free coordinates, whose
    /// increments need not vanish at a solution). False by default.
    ///
    /// [`residual_converged`]: NewtonProblem::residual_converged
    fn converges_on_residual(&self) -> bool {
        false
    }
    /// Whether the residual formed at x_h meets the problem's own test; checked right after
    /// [`form_residual`](NewtonProblem::form_residual), before the iteration cap. False by
    /// default (convergence on the increment).
    fn residual_converged(&self) -> bool {
        false
    }
    /// Whether increments growing over three iterations end the solve ([`DIVERGING`]). True by
    /// default; a solve that must run to its cap whatever the increments do (the static
    /// equilibrium of `linearize`, judged by its residual afterwards) says false.
    fn fails_on_growth(&self) -> bool {
        true
    }
    /// The work counters to add to.
    fn counters(&mut self) -> &mut Counters;
    /// The error of a failed solve after `iterations` iterations, for `reason`.
    fn failure(&mut self, iterations: u32, reason: &str) -> Self::Error;
}

/// Solves `problem` from its current x by Newton–Raphson under `policy`, at most `max_iter`
/// linear solves. Returns the iterations (linear solves) of the converged solve; x holds the
/// accepted iterate and the problem's evaluation is that of the last iterate before it.
pub fn solve<S: Real, P: NewtonProblem<S>>(
    problem: &mut P,
    policy: TangentPolicy,
    max_iter: u32,
) -> Result<u32, P::Error> {
    solve_inlined(problem, policy, max_iter)
}

/// [`solve`], inlined into its caller: for a small problem solved in a hot loop, whose policy is
/// a constant at the call site, so that the branches it does not use (the rescue, stall damping,
/// the refresh horizon) fold away. The same iterates as [`solve`]. The hydraulic substeps' chord
/// iteration (`circuit::substeps`) runs about nine such solves per residual evaluation of a
/// multi-rate step; through the out-of-line [`solve`] they cost about 4 % of the instructions of
/// a multi-rate run (BENCHMARKS.md, issue 25). The large formulations keep the out-of-line
/// [`solve`]: inlined into them, it changed nothing in their instructions and slowed one of them
/// (global I1AL on rod_naya) by 3.5 % in time.
#[inline(always)]
pub fn solve_inlined<S: Real, P: NewtonProblem<S>>(
    problem: &mut P,
    policy: TangentPolicy,
    max_iter: u32,
) -> Result<u32, P::Error> {
    let mut iterations = 0u32;
    let mut control = NewtonControl::with_refresh_ratio(policy.refresh_ratio);
    control.refresh_horizon = policy.refresh_horizon;
    let mut need_tangent = !policy.reuse_across_steps || !problem.tangent_reusable();
    let mut fresh = false;
    let mut last_norm = f64::INFINITY;
    // damped full Newton after a diverging verdict (large systems only), with the fraction ω of
    // the increment it takes
    let mut rescue = false;
    let mut omega = DAMPING;
    let tol = problem.tolerances();
    loop {
        problem.evaluate()?;
        if iterations > 0 {
            problem.after_increment();
        }
        problem.form_residual()?;
        problem.counters().residuals += 1;
        if problem.residual_converged() {
            break;
        }
        if iterations >= max_iter {
            return Err(problem.failure(
                iterations,
                if rescue {
                    "diverging (increments growing), then damped Newton reached the iteration cap"
                } else {
                    "iteration cap reached"
                },
            ));
        }
        let refreshed_now = need_tangent || rescue || (policy.every_iteration && iterations > 0);
        if refreshed_now {
            problem.counters().tangents += 1;
            if !problem.refresh_tangent()? {
                return Err(problem.failure(iterations, "singular tangent matrix"));
            }
            problem.counters().factorizations += 1;
            control.deadline = 0;
            need_tangent = false;
            fresh = true;
        }
        problem.solve_increment();
        iterations += 1;
        // the line search's fraction; the full step adds Δx itself (no product by 1)
        let alpha = Some(problem.step_fraction()).filter(|&a| a != 1.0);
        if problem.converges_on_residual() {
            let (x, dx) = problem.iterate();
            for (xi, di) in x.iter_mut().zip(dx.iter()) {
                match alpha {
                    None => *xi += *di,
                    Some(a) => *xi += *di * a,
                }
            }
            problem.project_iterate();
            continue;
        }
        let (x, dx) = problem.iterate();
        let norm = tol.add_fraction_and_measure(x, dx, alpha);
        // a non-finite implied norm never converges, but only the unknowns' norm is "non-finite"
        let norm = if norm.is_finite() {
            norm.max(problem.implied_norm().min(f64::MAX))
        } else {
            norm
        };
        // a tangent evaluated at x_h that does not shrink the increment (ν_h ≥ 0.9 ν_h−1): Newton
        // is cycling (on Q ∝ √|Δp| the map Δp → −Δp) or overshooting, so only part of the
        // increment is taken, x_h+1 = x_h + ω Δx_h. The norm stays that of the full increment, so
        // a damped iterate is never accepted on it. (This also damps the first step of a fresh
        // tangent that is larger than the under-stepping one of a stale, too stiff tangent: a
        // slower solve there, never a wrong one.)
        let stalled = policy.damp_stalls
            && refreshed_now
            && iterations >= 2
            && norm >= STALL_RATIO * last_norm;
        if rescue && norm > 1.0 {
            // ω doubles (up to the full step) while the increments shrink and halves (down to
            // 1/64) when they do not: full steps again once Newton contracts
            omega = if norm < last_norm {
                (2.0 * omega).min(1.0)
            } else {
                (0.5 * omega).max(1.0 / 64.0)
            };
            let (x, dx) = problem.iterate();
            for (xi, di) in x.iter_mut().zip(dx.iter()) {
                *xi -= *di * (1.0 - omega);
            }
            problem.counters().damped += 1;
        } else if norm > 1.0 && stalled {
            let (x, dx) = problem.iterate();
            for (xi, di) in x.iter_mut().zip(dx.iter()) {
                *xi -= *di * (1.0 - DAMPING);
            }
            problem.counters().damped += 1;
        }
        problem.project_iterate();
        last_norm = norm;
        if rescue {
            // damped full Newton: converged on the full increment, else on to the cap
            if !norm.is_finite() {
                return Err(problem.failure(iterations, "non-finite Newton increment"));
            }
            if norm <= 1.0 {
                break;
            }
            continue;
        }
        match control.judge(norm, iterations) {
            Verdict::Converged => break,
            Verdict::Continue { refresh_tangent } => {
                need_tangent |= refresh_tangent && !(policy.keep_fresh && fresh)
            }
            // a large system whose increments grow (a check valve or orifice switching inside
            // the step): go on as damped full Newton, which contracts where the full steps
            // cycle or overshoot; the cap ends it if it does not
            Verdict::Fail(reason) if policy.damp_stalls && reason == DIVERGING => {
                rescue = true;
                problem.counters().rescues += 1;
            }
            Verdict::Fail(reason) if reason == DIVERGING && !problem.fails_on_growth() => {}
            Verdict::Fail(reason) => return Err(problem.failure(iterations, reason)),
        }
    }
    problem.counters().iterations += iterations as u64;
    Ok(iterations)
}

/// What to do after a Newton increment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The weighted increment is within the tolerances.
    Converged,
    /// Iterate again; `refresh_tangent` when the tangent contracted poorly.
    Continue {
        /// The last increment shrank by less than the refresh ratio: recompute the tangent.
        refresh_tangent: bool,
    },
    /// Stop: the reason, for `StepError::NewtonFailed`.
    Fail(&'static str),
}

/// The state of one Newton loop.
#[derive(Debug, Clone, Copy)]
pub struct NewtonControl {
    prev_norm: f64,
    growth: u32,
    refresh_ratio: f64,
    refresh_horizon: u32,
    /// Iteration by which a kept slow tangent promised convergence (0: no promise).
    deadline: u32,
}

/// A tangent evaluated at x_h whose increment is at least this fraction of the previous one has
/// stalled: its increment is damped by [`DAMPING`].
pub const STALL_RATIO: f64 = 0.9;

/// The reason [`NewtonControl::judge`] gives when the increments grew three times.
pub const DIVERGING: &str = "diverging (increments growing)";

/// The fraction ω of a stalled increment that is taken (see [`STALL_RATIO`]).
pub const DAMPING: f64 = 0.5;

/// A tangent whose increments shrink by less than ×5 per iteration is refreshed.
pub const REFRESH_RATIO: f64 = 0.2;

/// The refresh horizon of the penalty formulation's policy (m of
/// [`TangentPolicy::refresh_horizon`]): a tangent (19 dual columns and an LU for the excavator)
/// costs about 25 evaluations, so keeping a tangent predicted to converge within 3 iterations
/// pays even when the prediction is pessimistic by a factor of several.
pub const REFRESH_HORIZON: u32 = 3;

/// The fewest tangent columns for which [`refresh_horizon`] keeps slow tangents: 4 ×
/// [`REFRESH_HORIZON`], so the m evaluations a kept tangent may add cost at most a quarter of the
/// refresh (one dual evaluation per column and an LU) they save.
pub const HORIZON_MIN_COLUMNS: usize = 4 * REFRESH_HORIZON as usize;

/// The refresh horizon for a tangent with `columns` unknowns: [`REFRESH_HORIZON`] from
/// [`HORIZON_MIN_COLUMNS`] on, else 0 (off: a small tangent is cheap, and the Newton iteration
/// counts of the small validated models stay those of the plain contraction test).
pub fn refresh_horizon(columns: usize) -> u32 {
    if columns >= HORIZON_MIN_COLUMNS {
        REFRESH_HORIZON
    } else {
        0
    }
}

/// Whether a penalty system with `columns` = n + n_v Newton unknowns is large: from
/// [`HORIZON_MIN_COLUMNS`] on, the machines with many orifices and check valves, whose
/// evaluations and solves are dear. A large system's Newton policy damps stalls
/// ([`TangentPolicy::damp_stalls`]), its tangent keeps its inverse
/// (`linalg::DenseLu::keep_inverse`), and its projection matrix is factored by Cholesky
/// (`Buffers::projection_chol`). Below it the small validated models of the papers keep their
/// iterates exactly (the lumped model of Rahikainen et al. 2018 still fails at Δt = 8 ms, as
/// published; damped, it would not).
pub fn large_system(columns: usize) -> bool {
    columns >= HORIZON_MIN_COLUMNS
}

/// The slowest contraction r = ν_h/ν_{h−1} for which [`TangentPolicy::refresh_horizon`] may keep
/// a tangent: beyond it the contraction is no longer trusted to stay linear.
pub const HORIZON_MAX_RATIO: f64 = 0.5;

impl Default for NewtonControl {
    fn default() -> Self {
        NewtonControl {
            prev_norm: f64::INFINITY,
            growth: 0,
            refresh_ratio: REFRESH_RATIO,
            refresh_horizon: 0,
            deadline: 0,
        }
    }
}

impl NewtonControl {
    /// A control that refreshes the tangent when ν_h > `ratio` ν_{h−1} instead of
    /// [`REFRESH_RATIO`].
    pub fn with_refresh_ratio(ratio: f64) -> Self {
        NewtonControl {
            refresh_ratio: ratio,
            ..Default::default()
        }
    }

    /// Judges the weighted increment norm ν_h = max_i |Δx_i| / (atol_i + rtol |x_i|) of
    /// iteration `iterations` (1-based): converged when ν_h ≤ 1; the tangent is refreshed when
    /// ν_h > 0.2 ν_{h−1}; the loop fails on a non-finite ν or when, from the third iteration on,
    /// ν grew three times.
    pub fn judge(&mut self, norm: f64, iterations: u32) -> Verdict {
        if !norm.is_finite() {
            return Verdict::Fail("non-finite Newton increment");
        }
        if norm <= 1.0 {
            return Verdict::Converged;
        }
        let refresh_tangent =
            norm > self.refresh_ratio * self.prev_norm && !self.keeps(norm, iterations);
        if iterations >= 3 && norm > self.prev_norm {
            self.growth += 1;
            if self.growth >= 3 {
                return Verdict::Fail(DIVERGING);
            }
        }
        self.prev_norm = norm;
        Verdict::Continue { refresh_tangent }
    }
}

impl NewtonControl {
    /// Whether the refresh horizon keeps a tangent that contracts slowly at ν_h = `norm` of
    /// iteration `iterations`: r = ν_h/ν_{h−1} ≤ [`HORIZON_MAX_RATIO`] and ν_h r^k ≤ 1 for the k
    /// iterations left of the horizon (m from the first kept iteration on).
    fn keeps(&mut self, norm: f64, iterations: u32) -> bool {
        if self.refresh_horizon == 0 {
            return false;
        }
        let r = norm / self.prev_norm;
        if r > HORIZON_MAX_RATIO {
            return false;
        }
        let left = if self.deadline == 0 {
            self.refresh_horizon
        } else {
            self.deadline.saturating_sub(iterations)
        };
        if left == 0 || norm * r.powi(left as i32) > 1.0 {
            return false;
        }
        if self.deadline == 0 {
            self.deadline = iterations + self.refresh_horizon;
        }
        true
    }
}

/// `StepError::NonFinite` naming the first non-finite residual entry of `f`, if any.
pub fn check_finite(
    time_s: f64,
    step: u64,
    f: &[f64],
    labels: &[String],
) -> Result<(), crate::StepError> {
    match f.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(crate::StepError::NonFinite {
            time_s,
            step,
            equation: labels.get(i).cloned().unwrap_or_default(),
        }),
        None => Ok(()),
    }
}

/// `StepError::NewtonFailed` naming the equation with the largest weighted residual
/// |f_i / J_ii| / tol_i: the residual turned into an increment by the tangent's diagonal (a zero
/// or non-finite diagonal falls back to the raw residual), over the unknown's tolerance; NaN
/// counts as infinite. `labels[i]` names equation i.
#[allow(clippy::too_many_arguments)]
pub fn failure(
    time_s: f64,
    step: u64,
    iterations: u32,
    f: &[f64],
    diag: &[f64],
    tolerance: impl Fn(usize) -> f64,
    labels: &[String],
    reason: &str,
) -> crate::StepError {
    let mut worst = (0usize, -1.0f64);
    for (i, fi) in f.iter().enumerate() {
        let d = match diag.get(i) {
            Some(d) if *d != 0.0 && d.is_finite() => d.abs(),
            _ => 1.0,
        };
        let w = (fi / d).abs() / tolerance(i);
        let w = if w.is_nan() { f64::INFINITY } else { w };
        if w > worst.1 {
            worst = (i, w);
        }
    }
    crate::StepError::NewtonFailed {
        time_s,
        step,
        iterations,
        equation: labels.get(worst.0).cloned().unwrap_or_default(),
        value: worst.1,
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f(x) = x² − 2 (root √2), with an optional multiplier-like shift after each increment.
    struct Sqrt2 {
        x: [f64; 1],
        dx: [f64; 1],
        f: f64,
        slope: f64,
        counters: Counters,
        hooks: u32,
    }

    impl NewtonProblem for Sqrt2 {
        type Error = String;
        fn evaluate(&mut self) -> Result<(), String> {
            Ok(())
        }
        fn after_increment(&mut self) {
            self.hooks += 1;
        }
        fn form_residual(&mut self) -> Result<(), String> {
            self.f = self.x[0] * self.x[0] - 2.0;
            Ok(())
        }
        fn tangent_reusable(&self) -> bool {
            self.slope != 0.0
        }
        fn refresh_tangent(&mut self) -> Result<bool, String> {
            self.slope = 2.0 * self.x[0];
            Ok(self.slope != 0.0)
        }
        fn solve_increment(&mut self) {
            self.dx[0] = -self.f / self.slope;
        }
        fn iterate(&mut self) -> (&mut [f64], &[f64]) {
            (&mut self.x, &self.dx)
        }
        fn tolerances(&self) -> Tolerances {
            Tolerances::new(&[(1, 1e-12)], 0.0)
        }
        fn counters(&mut self) -> &mut Counters {
            &mut self.counters
        }
        fn failure(&mut self, iterations: u32, reason: &str) -> String {
            format!("{iterations}: {reason}")
        }
    }

    fn sqrt2(x0: f64, slope: f64) -> Sqrt2 {
        Sqrt2 {
            x: [x0],
            dx: [0.0],
            f: 0.0,
            slope,
            counters: Counters::default(),
            hooks: 0,
        }
    }

    #[test]
    fn solves_with_counted_work_and_the_hook_after_each_increment() {
        let mut p = sqrt2(1.0, 0.0);
        let it = solve(&mut p, TangentPolicy::FULL, 25).unwrap();
        assert!((p.x[0] - 2f64.sqrt()).abs() < 1e-15);
        assert_eq!(p.counters.iterations, it as u64);
        assert_eq!(p.counters.residuals, it as u64);
        assert_eq!(p.counters.tangents, it as u64);
        assert_eq!(p.counters.factorizations, it as u64);
        assert_eq!(p.hooks, it - 1);
        // modified Newton from a reusable stale slope: fewer tangents than iterations
        let mut q = sqrt2(1.4, 2.0);
        let it = solve(&mut q, TangentPolicy::MODIFIED, 25).unwrap();
        assert!((q.x[0] - 2f64.sqrt()).abs() < 1e-12);
        assert!(q.counters.tangents < it as u64, "{:?}", q.counters);
        // the cap
        let mut r = sqrt2(1.0, 0.0);
        assert_eq!(
            solve(&mut r, TangentPolicy::FULL, 2).unwrap_err(),
            "2: iteration cap reached"
        );
        // a singular tangent
        let mut z = sqrt2(0.0, 0.0);
        assert_eq!(
            solve(&mut z, TangentPolicy::FULL, 25).unwrap_err(),
            "0: singular tangent matrix"
        );
    }

    /// x² = c in a dual scalar with ċ = 1, converged on the real part of the weighted increment;
    /// optionally halving every step (a line search) and clamping x to [0, `cap`].
    struct DualRoot {
        x: [num_dual::Dual64; 1],
        dx: [num_dual::Dual64; 1],
        f: num_dual::Dual64,
        c: num_dual::Dual64,
        half_steps: bool,
        cap: f64,
        projections: u32,
        counters: Counters,
    }

    impl NewtonProblem<num_dual::Dual64> for DualRoot {
        type Error = String;
        fn evaluate(&mut self) -> Result<(), String> {
            Ok(())
        }
        fn form_residual(&mut self) -> Result<(), String> {
            self.f = self.x[0] * self.x[0] - self.c;
            Ok(())
        }
        fn tangent_reusable(&self) -> bool {
            false
        }
        fn refresh_tangent(&mut self) -> Result<bool, String> {
            Ok(true)
        }
        fn solve_increment(&mut self) {
            self.dx[0] = -self.f / (self.x[0] * 2.0);
        }
        fn iterate(&mut self) -> (&mut [num_dual::Dual64], &[num_dual::Dual64]) {
            (&mut self.x, &self.dx)
        }
        fn step_fraction(&mut self) -> f64 {
            if self.half_steps {
                0.5
            } else {
                1.0
            }
        }
        fn project_iterate(&mut self) {
            self.projections += 1;
            if self.x[0].re > self.cap {
                self.x[0] = num_dual::Dual64::from(self.cap);
            }
        }
        fn tolerances(&self) -> Tolerances {
            Tolerances::new(&[(1, 1e-13)], 0.0)
        }
        fn counters(&mut self) -> &mut Counters {
            &mut self.counters
        }
        fn failure(&mut self, iterations: u32, reason: &str) -> String {
            format!("{iterations}: {reason}")
        }
    }

    #[test]
    fn a_dual_scalar_carries_the_derivative_and_the_hooks_damp_and_project() {
        let root = |x0: f64, half_steps: bool, cap: f64| DualRoot {
            x: [num_dual::Dual64::from(x0)],
            dx: [num_dual::Dual64::from(0.0)],
            f: num_dual::Dual64::from(0.0),
            c: num_dual::Dual64::new(2.0, 1.0),
            half_steps,
            cap,
            projections: 0,
            counters: Counters::default(),
        };
        // full steps: √2 and d√c/dc = 1/(2√2), the derivative carried through the iterates
        let mut p = root(1.0, false, f64::INFINITY);
        let full = solve(&mut p, TangentPolicy::FULL, 25).unwrap();
        assert!((p.x[0].re - 2f64.sqrt()).abs() < 1e-14);
        assert!(
            (p.x[0].eps - 0.5 / 2f64.sqrt()).abs() < 1e-12,
            "{}",
            p.x[0].eps
        );
        assert_eq!(p.projections, full);
        // half steps converge linearly, so more slowly, to the same root
        let mut q = root(1.0, true, f64::INFINITY);
        let half = solve(&mut q, TangentPolicy::FULL, 100).unwrap();
        assert!(half > full, "{half} ≤ {full}");
        assert!((q.x[0].re - 2f64.sqrt()).abs() < 1e-12);
        // the projection holds x at its bound 1.2 < √2: never converged, the cap ends it
        let mut r = root(1.0, false, 1.2);
        assert_eq!(
            solve(&mut r, TangentPolicy::FULL, 10).unwrap_err(),
            "10: iteration cap reached"
        );
        assert_eq!(r.x[0].re, 1.2);
    }

    #[test]
    fn the_refresh_horizon_keeps_a_tangent_predicted_to_converge_and_keeps_its_promise() {
        let refresh = |v: Verdict| match v {
            Verdict::Continue { refresh_tangent } => refresh_tangent,
            other => panic!("{other:?}"),
        };
        // without a horizon: r = 0.25 > 0.2 refreshes
        let mut c = NewtonControl::default();
        assert!(!refresh(c.judge(64.0, 1)));
        assert!(refresh(c.judge(16.0, 2)));
        // horizon 3: 25 · 0.25³ ≤ 1 keeps it; not converged by the promised iteration 5, it
        // refreshes although r = 0.48
        let mut c = NewtonControl {
            refresh_horizon: 3,
            ..Default::default()
        };
        assert!(!refresh(c.judge(100.0, 1)));
        assert!(!refresh(c.judge(25.0, 2)));
        assert!(!refresh(c.judge(6.25, 3)));
        assert!(!refresh(c.judge(2.5, 4)));
        assert!(refresh(c.judge(1.2, 5)));
        // a prediction that fails (far from converged) or a slow contraction (r > 0.5) refreshes
        let mut c = NewtonControl {
            refresh_horizon: 3,
            ..Default::default()
        };
        assert!(!refresh(c.judge(1e4, 1)));
        assert!(refresh(c.judge(3e3, 2)));
        let mut c = NewtonControl {
            refresh_horizon: 3,
            ..Default::default()
        };
        assert!(!refresh(c.judge(4.0, 1)));
        assert!(refresh(c.judge(2.4, 2)));
    }

    #[test]
    fn weights_have_a_roundoff_floor_and_tolerances_ranges() {
        // below the floor's reach the weight is atol + rtol |x| exactly
        assert_eq!(weight(1e-2, 0.0, 7.6e6), 1e-2);
        assert_eq!(weight(1e-7, 1e-3, 2.0), 1e-7 + 2e-3);
        // a tolerance below 16 ulps of x is raised to them
        assert_eq!(weight(1e-2, 0.0, 1e15), 16.0 * f64::EPSILON * 1e15);
        let t = Tolerances::new(&[(2, 1e-7), (3, 1e-2), (1, 1e-9)], 0.0);
        let atol: Vec<f64> = (0..7).map(|i| t.atol(i)).collect();
        assert_eq!(atol, [1e-7, 1e-7, 1e-2, 1e-2, 1e-2, 1e-9, 1e-9]);
        let mut x = [1.0, 1.0];
        let n = Tolerances::new(&[(2, 1e-7)], 0.0).add_and_measure(&mut x, &[1e-7, f64::NAN]);
        assert!(n.is_nan(), "a NaN increment must not vanish in the max");
    }

    #[test]
    fn the_penalty_keeps_its_one_millisecond_weight_below_one_millisecond() {
        for dt in [1e-2, 1e-3] {
            assert_eq!(penalty_at(1e11, dt), 1e11);
        }
        for dt in [1e-4, 1e-5, 1e-6] {
            let w = penalty_at(1e11, dt) * dt * dt / 4.0;
            assert!((w / (1e11 * 1e-6 / 4.0) - 1.0).abs() < 1e-12, "{dt}: {w}");
        }
    }

    #[test]
    fn converges_refreshes_and_detects_divergence() {
        let mut c = NewtonControl::default();
        assert_eq!(
            c.judge(100.0, 1),
            Verdict::Continue {
                refresh_tangent: false
            }
        );
        assert_eq!(
            c.judge(50.0, 2),
            Verdict::Continue {
                refresh_tangent: true
            }
        );
        assert_eq!(c.judge(1.0, 3), Verdict::Converged);
        let mut d = NewtonControl::default();
        let verdicts: Vec<_> = [10.0, 20.0, 40.0, 80.0, 160.0]
            .iter()
            .enumerate()
            .map(|(i, n)| d.judge(*n, i as u32 + 1))
            .collect();
        assert_eq!(verdicts[4], Verdict::Fail("diverging (increments growing)"));
        assert_eq!(
            NewtonControl::default().judge(f64::NAN, 1),
            Verdict::Fail("non-finite Newton increment")
        );
    }
}

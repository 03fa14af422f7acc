//! Adaptive step-size control of the trapezoidal rule (`solver.step_control = "adaptive"`):
//! a local error estimate of each step, accept or reject, the next step from the estimate, and
//! the dense output that puts the output rows at the output interval whatever the steps.
//!
//! The controller sits above the formulation's step (`crate::pipeline::step::step`): it sets the step
//! Δt (h, then h/2) in the model's solver options (`SolverOptions::step_s`, read by every stage of the step
//! at every call: the trapezoidal coefficients 2/Δt and 4/Δt², the scaled penalty factor
//! `newton::step_penalty` and the projections), drops the reusable Newton tangent whenever h
//! changes (the tangent holds 2/Δt and 4/Δt² and the penalty α_Δt; a stale one would be a wrong
//! iteration matrix), takes the step, and on rejection restores the [`State`] clone of the step's
//! start (a `State` clone continues bit for bit).
//!
//! ## The error estimate: step doubling (Richardson)
//!
//! Every state component y with a derivative y' the state keeps is integrated by the
//! trapezoidal rule y_n+1 = y_n + h/2 (y'_n + y'_n+1): the coordinates z (y' = ż), their rates ż
//! (y' = z̈), the pressures p (ṗ), the friction states w (ẇ) and the element states e (ė). Its
//! local error is C h³ + O(h⁴) (C = −y‴/12). An attempt of step h takes, from the same state,
//! one step h (y_h, in its own state, workspace and tangent) and two steps h/2 (y_h/2, in the
//! caller's), each through the one step (`crate::pipeline::step::step`). Then
//! y_h − y(t+h) = C h³ and y_h/2 − y(t+h) = 2 C (h/2)³ = C h³/4 to O(h⁴), so
//!
//! ```text
//!   LE = (y_h/2 − y_h)/3                     (the error of y_h/2, O(h⁴) accurate),
//!   y_n+1 = y_h/2 + (y_h/2 − y_h)/3          (local extrapolation: local error O(h⁴))
//! ```
//!
//! (Hairer, Nørsett & Wanner, *Solving Ordinary Differential Equations I*, 2nd ed.,
//! Springer 1993, §II.4, Richardson extrapolation, and §II.9 on extrapolating the trapezoidal
//! rule). The extrapolation keeps the phase of an undamped mode: on y' = iωy, a 29.5 Hz mode
//! over 8 s drifts 1.4e-2 rad at h = 1 ms and 9.1e-4 rad at 0.5 ms (with the filter below),
//! where the trapezoid at h/2 drifts 1.06 and 0.27 rad (issue 25's crane). The extrapolated components are z, ż, p, w, e,
//! their rates z̈, ṗ, ẇ, ė (so the next step and the Hermite output start from consistent values)
//! and the trapezoidal work and dissipation accounts; the valve positions (advanced by their
//! own law), the multipliers λ, the estimate p̈, the element energy accounts, the reported values
//! and the tangent are the half steps'. No projection follows: both ends satisfy the
//! constraints to the Newton tolerance, and their combination is off by the curvature times
//! (the correction)², far below it.
//!
//! ## The filter of the first-order block
//!
//! On a stiff component (y' = λy, z = hλ → −∞) the trapezoid's factor R(z) = (1 + z/2)/(1 − z/2)
//! tends to −1: the full step flips a residue e of the component, the two half steps keep it
//! (R(z/2)² → +1). The raw estimate is then (R(z/2)² − R(z)) e/3 → 2e/3 and the extrapolated
//! factor R(z/2)² + (R(z/2)² − R(z))/3 → 5/3: the extrapolation is not A-stable, and the raw
//! estimate holds h where the stiffest component is resolved. On issue 25's crane that is V3.p,
//! the 0.785 cm³ hose between valve and throttle (a quasi-algebraic pressure): it was the
//! largest estimate in 142 562 of 142 869 attempts, and held h at 0.05–0.1 ms (115 399 accepted,
//! 27 470 rejected steps over 8 s; 6× the wall time of the fixed step of the same accuracy).
//!
//! The remedy for the trapezoid and the implicit methods is to filter the estimate through the
//! iteration matrix, LE_f = (I − (h/2) J)⁻¹ LE (Shampine, "Implementation of implicit formulas
//! for the solution of ODEs", SIAM J. Sci. Stat. Comput. 1 (1980) 103–118; Hairer & Wanner,
//! *Solving Ordinary Differential Equations II*, 2nd ed., Springer 1996, §IV.8, the error
//! estimate of RADAU5): on y' = λy
//!
//! ```text
//!   LE_f = (R(z/2)² − R(z)) e / (3 (1 − z/2)),
//! ```
//!
//! which is LE (1 + O(z)) for |z| ≪ 1 (the filter changes the correction C h³ by O(h⁴), so the
//! extrapolated value keeps its local error O(h⁴)) and → 0 as 4e/(3|z|) for z → −∞. The
//! accepted end is y_h/2 + LE_f, of factor G(z) = R(z/2)² + (R(z/2)² − R(z))/(3 (1 − z/2)):
//! |G| ≤ 1 on the whole left half-plane (A-stable; G(−∞) = 1, so not L-stable: a stiff residue
//! decays as 1 − 44/(3|z|) per step), and |G(iθ)| < 1 (a slight damping, O(θ⁴) per step: the
//! 29.5 Hz mode at h = 0.5 ms keeps 98.8 % of its amplitude over 8 s, phase error 9e-4 rad),
//! checked by the unit test below.
//!
//! J is available factored: the residual's rows of a first-order component q (the pressures p,
//! the friction states w, the element states e; `formulations::penalty`, 000 eq. 39) are
//! f_q = (h²/4)(ẏ_q − g_q) with ẏ_q = (2/h) y_q + ŷ_q, so with the mechanism's y = (z, ż) and
//! ż = (2/h) z + ẑ̇ eliminated, the tangent T = ∂f/∂x (x = [z; p; w; e]) of the full step h
//! satisfies: (I − (h/2) J) X = [0; 0; c] ⇔ T [X_z; X_q] = [0; (h/2) c] (with X_ż = (2/h) X_z;
//! J the Jacobian of the first-order system in (z, ż, q)). So one back-substitution with the full
//! step's factors,
//!
//! ```text
//!   T x = [0 ; (h/2) LE_q],   LE_f,q = x_q,
//! ```
//!
//! filters the first-order block, with the mechanism's response to it inside the solve. The
//! coordinates z and ż keep their raw estimate: their rows are second order, with the "mass"
//! M′ (4/h²) − C (2/h) that T does not separate, and they are not what holds the step. An
//! algebraic volume's row (002 Pub II) has no ẏ: its right-hand side is 0, and its pressure
//! follows the others. The rates ṗ, ẇ, ė are corrected by the same filter of their own
//! differences (it commutes with J, so the rate of the accepted end stays J times its state as
//! at the trapezoid's ends); z̈ by its raw difference. The factors are those the full step's
//! Newton last refreshed at this h (the modified Newton reuses them over steps: a J of an
//! earlier point, which only shifts the filter by O(h) of the correction). With no factors
//! held (a full step whose solve failed), the estimate is the raw one.
//!
//! The step is accepted when the weighted RMS norm (op. cit., §II.4, eqs. 4.10–4.11)
//!
//! ```text
//!   err = sqrt( 1/N Σ_i ( LE_i / (atol_i + rtol · max(|y_n,i|, |y_n+1,i|)) )² )
//! ```
//!
//! is at most 1, with atol_i = `atol` × the Newton tolerance of unknown i (`Layout::atol`; ż
//! takes its coordinate's per second). The next step is (same §II.4, eq. 4.13, for an estimate
//! of order q + 1 = 3)
//!
//! ```text
//!   h_new = h · min(FAC_MAX, max(FAC_MIN, SAFETY · err^(−1/3))),
//! ```
//!
//! not above FAC = 1 right after a rejection, and after an accepted step h is kept when the
//! factor lies in [KEEP_MIN, KEEP_MAX] = [0.95, 1.5] (RADAU5 keeps h, and its LU, for a factor
//! in [1, 1.2]: Hairer & Wanner II, §IV.8). A new h costs fresh tangents (one for h, one for
//! h/2, each kept in its own workspace, so alternating h and h/2 refactors nothing): nx dual
//! passes of the residual and a factorization each. On the crane, [1, 1.2] changed h every other
//! attempt (12 414 changes in 24 550 attempts, a quarter of the run's time in tangents); [0.95,
//! 1.5] about 3 100 changes, for 161 rejections instead of 477. A step whose Newton solve fails is
//! rejected and retried at h/4; below `min_step_s` the Newton error (or
//! [`StepError::StepTooSmall`]) is returned. The first step is checked as every other.
//!
//! ## Dense output
//!
//! The trapezoidal rule's own dense output, from the extrapolated ends: on an accepted step [t_n, t_n+1] each component is
//! the cubic Hermite interpolant of y and y' at both ends (Hairer, Nørsett & Wanner, op. cit.,
//! §II.6, Hermite interpolation), so an output row at any t comes from the state at t and not
//! from the steps taken. The work accounts W (W' = the actuator power) and the friction
//! dissipation (D' = its power) are Hermite too; the element energy accounts, the valve
//! positions and z̈ are linear in t; counters (contact hits, Newton iterations) are those of
//! the step's end. What is computed from the state (cylinder forces, energies, element outputs,
//! marker positions) is evaluated at the interpolated state.

use crate::mechanics::semirecursive::schur;
use crate::model::spec::{Formulation, ModelSpec, StepControl};
use crate::model::{AdaptiveOptions, Model};
use crate::pipeline::workspace::{FormulationWorkspace, Workspace};
use crate::state::{ElementEnergy, Reported, State, TangentCache};
use crate::{ModelError, StepError, StepReport};

/// Safety factor of the step proposal [-] (Hairer, Nørsett & Wanner §II.4: 0.8–0.9).
pub const SAFETY: f64 = 0.9;
/// Largest growth of the step per accepted step [-].
pub const FAC_MAX: f64 = 2.0;
/// Largest shrink of the step per step [-].
pub const FAC_MIN: f64 = 0.2;
/// A proposed factor h_new/h in [KEEP_MIN, KEEP_MAX] after an accepted step keeps h (and its
/// tangents) [-].
pub const KEEP_MIN: f64 = 0.95;
/// See [`KEEP_MIN`] [-].
pub const KEEP_MAX: f64 = 1.5;
/// A step that would end within this fraction of itself before an input's switch is stretched
/// to end on it [-].
pub const BREAKPOINT_STRETCH: f64 = 0.01;
/// The step after a failed Newton solve, as a fraction of the failed one [-].
pub const NEWTON_SHRINK: f64 = 0.25;

/// Checks the adaptive settings of `spec.solver` (after `check_solver`): rtol > 0, atol > 0,
/// 0 < min_step_s ≤ step_s ≤ max_step_s, and a formulation and model the controller can step.
pub fn check_spec(spec: &ModelSpec) -> Result<(), ModelError> {
    let s = &spec.solver;
    let at = crate::elements::field_check::At::new("solver", "solver");
    if s.step_control == StepControl::Fixed {
        return Ok(());
    }
    let rtol = at.positive("rtol", s.rtol)?;
    if rtol >= 1.0 {
        return Err(at.error(
            "rtol",
            format!("must be below 1 (a relative error of 100 %), got {rtol:?}"),
        ));
    }
    at.positive("atol", s.atol)?;
    if let Some(min) = s.min_step_s {
        let min = at.positive("min_step_s", min)?;
        if min > s.step_s {
            return Err(at.error(
                "min_step_s",
                format!(
                    "{min:?} s is longer than the first step step_s = {:?} s",
                    s.step_s
                ),
            ));
        }
    }
    if let Some(max) = s.max_step_s {
        let max = at.positive("max_step_s", max)?;
        if max < s.step_s {
            return Err(at.error(
                "max_step_s",
                format!(
                    "{max:?} s is shorter than the first step step_s = {:?} s",
                    s.step_s
                ),
            ));
        }
        if max > s.duration_s {
            return Err(at.error(
                "max_step_s",
                format!("{max:?} s is longer than the duration {:?} s", s.duration_s),
            ));
        }
    }
    if s.formulation != Formulation::Penalty {
        return Err(at.error(
            "step_control",
            format!(
                "adaptive steps work with the penalty formulation only; '{}' steps at a fixed \
                 step (step_control = \"fixed\")",
                s.formulation.name()
            ),
        ));
    }
    if spec.terrain.is_some() {
        return Err(at.error(
            "step_control",
            "adaptive steps do not work with a [terrain] (the digging laws are compiled for \
             one step): use step_control = \"fixed\"",
        ));
    }
    Ok(())
}

/// Counts of the adaptive steps, for `summary.json`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepStatistics {
    /// Accepted steps.
    pub accepted: u64,
    /// Rejected steps (error estimate above the tolerance, or a failed Newton solve).
    pub rejected: u64,
    /// Smallest accepted step [s] (0 before the first).
    pub min_step_s: f64,
    /// Largest accepted step [s].
    pub max_step_s: f64,
}

/// The cubic Hermite interpolant at t = t_n + s h (0 ≤ s ≤ 1) of y with values `y0`, `y1` and
/// derivatives `d0`, `d1` at t_n and t_n + h: (y(t), y'(t)) (Hairer, Nørsett & Wanner §II.6).
#[inline]
pub fn hermite(s: f64, h: f64, y0: f64, d0: f64, y1: f64, d1: f64) -> (f64, f64) {
    let (s2, s3) = (s * s, s * s * s);
    let y = (2.0 * s3 - 3.0 * s2 + 1.0) * y0
        + (s3 - 2.0 * s2 + s) * h * d0
        + (-2.0 * s3 + 3.0 * s2) * y1
        + (s3 - s2) * h * d1;
    let yd = (6.0 * s2 - 6.0 * s) / h * (y0 - y1)
        + (3.0 * s2 - 4.0 * s + 1.0) * d0
        + (3.0 * s2 - 2.0 * s) * d1;
    (y, yd)
}

/// Number of trapezoidal components: 2 n_z + n_p + n_w + n_e.
fn n_components(model: &Model) -> usize {
    let l = &model.layout;
    2 * l.z.len() + l.p.len() + l.w.len() + l.internal.len()
}

/// The label of component `k` (an unknown's layout name; ż as `<z>.qd`).
fn component_name(model: &Model, k: usize) -> String {
    let l = &model.layout;
    let nz = l.z.len();
    if k < nz {
        l.names[k].clone()
    } else if k < 2 * nz {
        format!("{}.qd", l.names[k - nz])
    } else {
        l.names[k - nz].clone()
    }
}

/// The trapezoidal components of `s` in the controller's order: z, ż, p, w, e.
fn blocks(s: &State) -> [&[f64]; 5] {
    [&s.z, &s.zd, &s.p, &s.friction, &s.internal]
}

/// Local extrapolation of one vector: y ← y + (y − y_full)/3, with `y` the end of the two
/// half steps and `full` the end of the full step (module doc).
#[inline]
fn extrapolate(y: &mut [f64], full: &[f64]) {
    for (y, f) in y.iter_mut().zip(full) {
        *y += (*y - f) / 3.0;
    }
}

/// The controller's state: the step to try, the full step's own state, workspace and tangent,
/// the start of the last accepted step (for the dense output) and the counts.
#[derive(Debug)]
pub struct Controller {
    opts: AdaptiveOptions,
    /// atol_i of every component [its unit].
    atol: Vec<f64>,
    /// The next step to try [s].
    h: f64,
    /// The step h of the tangents held [s] (NaN: none yet).
    tangent_h: f64,
    /// No growth at the next acceptance (the last attempt was rejected).
    no_growth: bool,
    /// The state at the start of the attempted (then: last accepted) step.
    start: State,
    /// The end of the full step h of the attempt.
    full: State,
    /// The workspace of the full steps (the caller's steps the half steps), so each step size
    /// keeps its own factored tangent.
    full_ws: Workspace,
    /// The tangent the full steps carry from one attempt to the next (`State::tangent` of
    /// `full`; the stepped state carries the half steps').
    full_tangent: TangentCache,
    /// Inputs' end values of the step just taken (the clock fix in [`Controller::step`]).
    u_used: Vec<f64>,
    /// The local-extrapolation corrections of the attempt, per component (z, ż, p, w, e):
    /// (y_h/2 − y_h)/3, filtered in the first-order block (module doc).
    le: Vec<f64>,
    /// The corrections of the rates ṗ, ẇ, ė, filtered like their states'.
    rate_le: Vec<f64>,
    /// Right-hand side and solution of the filter's solve with the full step's tangent
    /// (x = [z; p; w; e]).
    rhs: Vec<f64>,
    stats: StepStatistics,
}

impl Controller {
    /// The controller of `model` (with adaptive options) starting at `st`, first step
    /// `model.solver.step_s`.
    pub fn new(model: &Model, opts: AdaptiveOptions, st: &State) -> Self {
        let n = n_components(model);
        let l = &model.layout;
        let mut atol = Vec::with_capacity(n);
        for i in l.z.clone() {
            atol.push(opts.atol_scale * l.atol(i));
        }
        for i in l.z.clone() {
            // ż: its coordinate's tolerance per second
            atol.push(opts.atol_scale * l.atol(i));
        }
        for i in l.p.start..l.internal.end {
            atol.push(opts.atol_scale * l.atol(i));
        }
        Controller {
            opts,
            atol,
            h: model.solver.step_s,
            tangent_h: f64::NAN,
            no_growth: false,
            start: st.clone(),
            full: st.clone(),
            full_ws: Workspace::new(model),
            full_tangent: TangentCache::default(),
            u_used: st.inputs.u_used.clone(),
            le: vec![0.0; n],
            rate_le: vec![0.0; n - 2 * l.z.len()],
            rhs: vec![0.0; n - l.z.len()],
            stats: StepStatistics::default(),
        }
    }

    /// Starts afresh from `st` (a state set from outside), at the current step size.
    pub fn restart(&mut self, st: &State) {
        copy_state(&mut self.start, st);
        self.tangent_h = f64::NAN;
    }

    /// The counts so far.
    pub fn statistics(&self) -> StepStatistics {
        self.stats
    }

    /// The next step to try [s].
    pub fn next_step_s(&self) -> f64 {
        self.h
    }

    /// The state at the start of the last accepted step.
    pub fn start(&self) -> &State {
        &self.start
    }

    /// Drops every tangent held (the full step's and the half steps'): they hold 2/Δt,
    /// 4/Δt² and α_Δt of another step.
    fn drop_tangents(&mut self, st: &mut State, ws: &mut Workspace) {
        st.tangent.id = 0;
        self.full_tangent.id = 0;
        for w in [&mut *ws, &mut self.full_ws] {
            w.tangent_id = u64::MAX;
            w.tangent_valid = false;
        }
    }

    /// One accepted step from `st`: attempts at the controlled h until one is accepted.
    /// `model.solver.step_s` is set to each stepping call's Δt (h, then h/2). On error `st` is
    /// the state before.
    pub fn step(
        &mut self,
        model: &mut Model,
        st: &mut State,
        ws: &mut Workspace,
    ) -> Result<StepReport, StepError> {
        loop {
            let t0 = st.t_s;
            let mut h = self.h.min(self.opts.max_step_s);
            // a step ends on the next switch of a piecewise-constant or step input, or corner
            // of a table, at the switch's own time: the interval form of the step's input values
            // (`Signal::step_values`) holds u(t_n) over the whole step, so a step across a
            // switch would move it to its end
            let mut t1 = t0 + h;
            let proposed = h;
            if let Some(ts) = next_breakpoint(model, st, t0) {
                // within 1 % past the end, the step is stretched to it: no sliver of a step
                // (a step of round-off size makes 2/Δt amplify the round-off of y_n+1 − y_n)
                if ts <= t0 + (1.0 + BREAKPOINT_STRETCH) * h {
                    (h, t1) = (ts - t0, ts);
                }
            }
            if h != self.tangent_h {
                self.drop_tangents(st, ws);
                self.tangent_h = h;
            }
            copy_state(&mut self.start, st);
            let attempt = self.attempt(model, st, ws, h, t0, t1);
            let report = match attempt {
                Ok(r) => r,
                Err(e) => {
                    self.reject(st, ws);
                    if h <= self.opts.min_step_s {
                        return Err(e);
                    }
                    self.h = (h * NEWTON_SHRINK).max(self.opts.min_step_s);
                    continue;
                }
            };
            self.corrections(model, st, h);
            let (err, worst) = self.error_norm(st);
            if err <= 1.0 {
                self.accept(h, err);
                if h < proposed && self.h > h {
                    // a step cut short to land on a switch: the next is the step proposed
                    // before the cut (not one grown from the short step)
                    self.h = proposed;
                }
                self.extrapolate(st);
                return Ok(report);
            }
            self.reject(st, ws);
            if h <= self.opts.min_step_s {
                return Err(StepError::StepTooSmall {
                    time_s: st.t_s,
                    step: st.step,
                    step_s: h,
                    equation: component_name(model, worst),
                    value: err,
                });
            }
            let fac = (SAFETY * err.powf(-1.0 / 3.0)).clamp(FAC_MIN, 1.0);
            self.h = (h * fac).max(self.opts.min_step_s);
        }
    }

    /// The attempt of step h from t0 to t1 = t0 + h: the full step into `self.full` (with
    /// `self.full_ws` and the full step's tangent), then two half steps of `st` (with `ws`).
    /// Each through the one step (`crate::pipeline::step::step`), its clock fixed after it.
    /// Returns the second half step's report with the cavitation onsets of both.
    fn attempt(
        &mut self,
        model: &mut Model,
        st: &mut State,
        ws: &mut Workspace,
        h: f64,
        t0: f64,
        t1: f64,
    ) -> Result<StepReport, StepError> {
        copy_state(&mut self.full, st);
        std::mem::swap(&mut self.full.tangent, &mut self.full_tangent);
        model.solver.step_s = h;
        let full = crate::pipeline::step::step(model, &mut self.full, &mut self.full_ws);
        std::mem::swap(&mut self.full.tangent, &mut self.full_tangent);
        if let Err(e) = full {
            self.full_ws.tangent_id = u64::MAX;
            self.full_ws.tangent_valid = false;
            return Err(e);
        }
        fix_clock(model, &mut self.full, t1, &mut self.u_used);
        model.solver.step_s = 0.5 * h;
        let first = crate::pipeline::step::step(model, st, ws)?;
        fix_clock(model, st, t0 + 0.5 * h, &mut self.u_used);
        let mut report = crate::pipeline::step::step(model, st, ws)?;
        fix_clock(model, st, t1, &mut self.u_used);
        report.cavitation_onsets |= first.cavitation_onsets;
        Ok(report)
    }

    /// Back to the step's start after a rejected attempt.
    fn reject(&mut self, st: &mut State, ws: &mut Workspace) {
        copy_state(st, &self.start);
        // the workspace's tangent may be the rejected attempt's: rebuilt from the state's
        ws.tangent_id = u64::MAX;
        ws.tangent_valid = false;
        self.stats.rejected += 1;
        self.no_growth = true;
    }

    /// Counts the accepted step h with error norm `err` and proposes the next.
    fn accept(&mut self, h: f64, err: f64) {
        let s = &mut self.stats;
        if s.accepted == 0 {
            (s.min_step_s, s.max_step_s) = (h, h);
        } else {
            s.min_step_s = s.min_step_s.min(h);
            s.max_step_s = s.max_step_s.max(h);
        }
        s.accepted += 1;
        let mut fac = if err > 0.0 {
            (SAFETY * err.powf(-1.0 / 3.0)).clamp(FAC_MIN, FAC_MAX)
        } else {
            FAC_MAX
        };
        if self.no_growth {
            fac = fac.min(1.0);
        }
        if !(KEEP_MIN..=KEEP_MAX).contains(&fac) {
            self.h = (h * fac).clamp(self.opts.min_step_s, self.opts.max_step_s);
        } else {
            self.h = h;
        }
        self.no_growth = false;
    }

    /// The corrections of the attempt of step h into `self.le` and `self.rate_le` (`st` at the
    /// end of the half steps, `self.full` at the end of the full step): (y_h/2 − y_h)/3 of every
    /// component, then the first-order block (p, w, e and their rates) filtered through the
    /// full step's factored tangent, when it holds one (module doc, "The filter of the
    /// first-order block").
    fn corrections(&mut self, model: &Model, st: &State, h: f64) {
        let (half, full) = (blocks(st), blocks(&self.full));
        let mut k = 0;
        for b in 0..half.len() {
            for (y, y_full) in half[b].iter().zip(full[b]) {
                self.le[k] = (y - y_full) / 3.0;
                k += 1;
            }
        }
        let mut k = 0;
        for (half, full) in [
            (&st.pd, &self.full.pd),
            (&st.friction_rate, &self.full.friction_rate),
            (&st.internal_rate, &self.full.internal_rate),
        ] {
            for (y, y_full) in half.iter().zip(full) {
                self.rate_le[k] = (y - y_full) / 3.0;
                k += 1;
            }
        }
        let nz = model.layout.z.len();
        let d = 0.5 * h;
        // states: r = [0; (h/2) LE_q] (an algebraic volume's row has no ṗ: no mass, r = 0)
        let (rz, rq) = self.rhs.split_at_mut(nz);
        rz.fill(0.0);
        for (j, (r, le)) in rq.iter_mut().zip(&self.le[2 * nz..]).enumerate() {
            *r = if first_order_row(model, j) {
                d * le
            } else {
                0.0
            };
        }
        if !solve_tangent(&mut self.full_ws, &mut self.rhs) {
            return;
        }
        self.le[2 * nz..].copy_from_slice(&self.rhs[nz..]);
        // rates: the same filter (it commutes with J, so ẏ − J y of the extrapolated end is
        // that of the half steps' end)
        let (rz, rq) = self.rhs.split_at_mut(nz);
        rz.fill(0.0);
        for (j, (r, le)) in rq.iter_mut().zip(&self.rate_le).enumerate() {
            *r = if first_order_row(model, j) {
                d * le
            } else {
                0.0
            };
        }
        if solve_tangent(&mut self.full_ws, &mut self.rhs) {
            self.rate_le.copy_from_slice(&self.rhs[nz..]);
        }
    }

    /// The weighted RMS norm of the (filtered) error estimates `self.le` of the attempt (`st`
    /// at the end of the half steps), and the component with the largest weighted estimate.
    fn error_norm(&self, st: &State) -> (f64, usize) {
        let (half, start) = (blocks(st), blocks(&self.start));
        let (mut sum, mut worst, mut worst_k, mut k) = (0.0, -1.0, 0, 0);
        for b in 0..half.len() {
            for i in 0..half[b].len() {
                let (y, y0, le) = (half[b][i], start[b][i], self.le[k]);
                let sc = self.atol[k] + self.opts.rtol * y0.abs().max(y.abs());
                let r2 = (le / sc) * (le / sc);
                // a NaN estimate rejects (and names its component)
                if r2.is_nan() || r2 > worst {
                    worst = if r2.is_nan() { f64::INFINITY } else { r2 };
                    worst_k = k;
                }
                sum += r2;
                k += 1;
            }
        }
        let err = if k == 0 { 0.0 } else { (sum / k as f64).sqrt() };
        (if err.is_nan() { f64::INFINITY } else { err }, worst_k)
    }

    /// The accepted end: local extrapolation y ← y_h/2 + LE of every component the
    /// trapezoidal rule integrates (LE filtered in the first-order block), of its rate, and of
    /// the trapezoidal work and dissipation accounts; the rest is the half steps' (module
    /// doc). The step count advances by one (one accepted step).
    fn extrapolate(&self, st: &mut State) {
        let f = &self.full;
        let mut k = 0;
        for y in [
            &mut st.z,
            &mut st.zd,
            &mut st.p,
            &mut st.friction,
            &mut st.internal,
        ] {
            for y in y.iter_mut() {
                *y += self.le[k];
                k += 1;
            }
        }
        let mut k = 0;
        for y in [&mut st.pd, &mut st.friction_rate, &mut st.internal_rate] {
            for y in y.iter_mut() {
                *y += self.rate_le[k];
                k += 1;
            }
        }
        extrapolate(&mut st.zdd, &f.zdd);
        extrapolate(&mut st.actuator_work_j, &f.actuator_work_j);
        extrapolate(&mut st.friction_dissipated_j, &f.friction_dissipated_j);
        st.step = self.start.step + 1;
    }

    /// Writes into `out` the state at time `t_s` in [t_n, t_n+1] of the last accepted step from
    /// `self.start` to `end`, by the dense output of the module doc. `out` is overwritten (a
    /// clone of `end` with the interpolated entries).
    pub fn interpolate(&self, model: &Model, end: &State, t_s: f64, out: &mut State) {
        copy_state(out, end);
        let a = &self.start;
        let h = end.t_s - a.t_s;
        if h <= 0.0 {
            return;
        }
        let s = ((t_s - a.t_s) / h).clamp(0.0, 1.0);
        let lin = |x0: f64, x1: f64| x0 + s * (x1 - x0);
        out.t_s = t_s;
        for i in 0..end.z.len() {
            out.z[i] = hermite(s, h, a.z[i], a.zd[i], end.z[i], end.zd[i]).0;
            out.zd[i] = hermite(s, h, a.zd[i], a.zdd[i], end.zd[i], end.zdd[i]).0;
            out.zdd[i] = lin(a.zdd[i], end.zdd[i]);
        }
        for v in 0..end.p.len() {
            (out.p[v], out.pd[v]) = hermite(s, h, a.p[v], a.pd[v], end.p[v], end.pd[v]);
        }
        for (o, (x, r)) in out
            .friction
            .iter_mut()
            .zip(&mut out.friction_rate)
            .enumerate()
        {
            (*x, *r) = hermite(
                s,
                h,
                a.friction[o],
                a.friction_rate[o],
                end.friction[o],
                end.friction_rate[o],
            );
        }
        for (o, (x, r)) in out
            .internal
            .iter_mut()
            .zip(&mut out.internal_rate)
            .enumerate()
        {
            (*x, *r) = hermite(
                s,
                h,
                a.internal[o],
                a.internal_rate[o],
                end.internal[o],
                end.internal_rate[o],
            );
        }
        for (k, x) in out.spool.iter_mut().enumerate() {
            *x = lin(a.spool[k], end.spool[k]);
        }
        for (c, w) in out.actuator_work_j.iter_mut().enumerate() {
            *w = hermite(
                s,
                h,
                a.actuator_work_j[c],
                a.actuator_power_w[c],
                end.actuator_work_j[c],
                end.actuator_power_w[c],
            )
            .0;
            out.actuator_power_w[c] = lin(a.actuator_power_w[c], end.actuator_power_w[c]);
        }
        for (c, d) in out.friction_dissipated_j.iter_mut().enumerate() {
            *d = hermite(
                s,
                h,
                a.friction_dissipated_j[c],
                a.friction_power_w[c],
                end.friction_dissipated_j[c],
                end.friction_power_w[c],
            )
            .0;
            out.friction_power_w[c] = lin(a.friction_power_w[c], end.friction_power_w[c]);
        }
        let (ea, eo) = (&a.elements, &mut out.elements);
        for (x, (x0, x1)) in eo
            .stored_j
            .iter_mut()
            .zip(ea.stored_j.iter().zip(&end.elements.stored_j))
        {
            *x = lin(*x0, *x1);
        }
        for (x, (x0, x1)) in eo
            .dissipated_j
            .iter_mut()
            .zip(ea.dissipated_j.iter().zip(&end.elements.dissipated_j))
        {
            *x = lin(*x0, *x1);
        }
        for (x, (x0, x1)) in eo
            .supplied_j
            .iter_mut()
            .zip(ea.supplied_j.iter().zip(&end.elements.supplied_j))
        {
            *x = lin(*x0, *x1);
        }
        for (i, u) in out.inputs.u_used.iter_mut().enumerate() {
            *u = end.inputs.value_at(&model.inputs, i, t_s);
        }
    }
}

/// Whether row `j` of the first-order block (p, w, e: unknown `n_z + j`) is an ODE row
/// (h²/4)(ẏ − g): every one but an algebraic volume's (002 Pub II), which has no ẏ.
fn first_order_row(model: &Model, j: usize) -> bool {
    model.hydraulics.volumes.get(j).is_none_or(|v| !v.algebraic)
}

/// r ← T⁻¹ r with the factored tangent T = ∂f/∂x the workspace holds from its last step
/// (x = [z; p; w; e], `formulations::penalty`); false (r untouched) when it holds none.
fn solve_tangent(ws: &mut Workspace, r: &mut [f64]) -> bool {
    if !ws.buffers.tangent_valid {
        return false;
    }
    let Workspace {
        buffers,
        formulation,
    } = ws;
    let FormulationWorkspace::Penalty(own) = formulation else {
        return false;
    };
    buffers.dx.copy_from_slice(r);
    schur::solve_in_place(buffers, &mut own.schur);
    r.copy_from_slice(&buffers.dx);
    true
}

/// `dst` ← `src` in `dst`'s own buffers: a clone, bit for bit, without the allocations of the
/// derived `State::clone_from` (a `clone`). Every field is named, so a field added to [`State`]
/// does not compile here until it is copied.
fn copy_state(dst: &mut State, src: &State) {
    let State {
        t_s,
        step,
        z,
        zd,
        zdd,
        p,
        pd,
        pdd,
        spool,
        inputs,
        trim,
        lambda,
        actuator_work_j,
        actuator_power_w,
        energy0_j,
        potential0_j,
        formulation,
        friction,
        friction_rate,
        friction_velocity_m_s,
        friction_power_w,
        friction_dissipated_j,
        internal,
        internal_rate,
        elements,
        tangent,
        reported,
        world,
    } = src;
    (dst.t_s, dst.step, dst.energy0_j, dst.potential0_j) = (*t_s, *step, *energy0_j, *potential0_j);
    for (d, s) in [
        (&mut dst.z, z),
        (&mut dst.zd, zd),
        (&mut dst.zdd, zdd),
        (&mut dst.p, p),
        (&mut dst.pd, pd),
        (&mut dst.pdd, pdd),
        (&mut dst.spool, spool),
        (&mut dst.trim, trim),
        (&mut dst.lambda, lambda),
        (&mut dst.actuator_work_j, actuator_work_j),
        (&mut dst.actuator_power_w, actuator_power_w),
        (&mut dst.friction, friction),
        (&mut dst.friction_rate, friction_rate),
        (&mut dst.friction_velocity_m_s, friction_velocity_m_s),
        (&mut dst.friction_power_w, friction_power_w),
        (&mut dst.friction_dissipated_j, friction_dissipated_j),
        (&mut dst.internal, internal),
        (&mut dst.internal_rate, internal_rate),
    ] {
        d.clone_from(s);
    }
    dst.inputs.clone_from(inputs);
    dst.formulation.clone_from(formulation);
    let ElementEnergy {
        stored_j,
        stored0_j,
        dissipated_j,
        supplied_j,
        dissipated_w,
        supplied_w,
        hits,
    } = elements;
    let e = &mut dst.elements;
    for (d, s) in [
        (&mut e.stored_j, stored_j),
        (&mut e.stored0_j, stored0_j),
        (&mut e.dissipated_j, dissipated_j),
        (&mut e.supplied_j, supplied_j),
        (&mut e.dissipated_w, dissipated_w),
        (&mut e.supplied_w, supplied_w),
    ] {
        d.clone_from(s);
    }
    e.hits.clone_from(hits);
    let TangentCache { id, matrix, side } = tangent;
    dst.tangent.id = *id;
    dst.tangent.matrix.clone_from(matrix);
    dst.tangent.side.clone_from(side);
    let Reported {
        iterations,
        kinetic_j,
        potential_j,
        constraint_violation,
        cylinder,
        cylinder_friction_n,
        joint_friction,
    } = reported;
    let r = &mut dst.reported;
    (
        r.iterations,
        r.kinetic_j,
        r.potential_j,
        r.constraint_violation,
    ) = (*iterations, *kinetic_j, *potential_j, *constraint_violation);
    r.cylinder.clone_from(cylinder);
    r.cylinder_friction_n.clone_from(cylinder_friction_n);
    r.joint_friction.clone_from(joint_friction);
    dst.world.clone_from(world);
}

/// The first time after `t0` [s] at which an input the signal drives (no value set from
/// outside) switches (piecewise-constant, step) or has a corner (table), if any.
fn next_breakpoint(model: &Model, st: &State, t0: f64) -> Option<f64> {
    use crate::elements::inputs::Signal;
    let mut next: Option<f64> = None;
    for (i, signal) in model.inputs.iter().enumerate() {
        if st.inputs.overrides[i].is_some() {
            continue;
        }
        let t = match signal {
            Signal::PiecewiseConstant { times, .. } | Signal::Table { times, .. } => {
                times.iter().copied().find(|&t| t > t0)
            }
            Signal::Step { time_s, .. } => (*time_s > t0).then_some(*time_s),
            Signal::Constant(_) | Signal::Sine { .. } => None,
        };
        if let Some(t) = t {
            next = Some(next.map_or(t, |n: f64| n.min(t)));
        }
    }
    next
}

/// The clock after a step of h from t_0: t = `t_s` (the formulation's commit writes
/// t = (k + 1) Δt from the step count, which holds at fixed steps only), and the next step's
/// input pair sampled at it. The inputs' values the step used at its end (`u_used`) are kept.
fn fix_clock(model: &Model, st: &mut State, t_s: f64, u_used: &mut Vec<f64>) {
    u_used.clone_from(&st.inputs.u_used);
    st.t_s = t_s;
    crate::pipeline::step::sample_inputs(model, st);
    st.inputs.u_used.clone_from(u_used);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One trapezoidal step of the oscillator ẋ = v, v̇ = −ω² x from (x0, v0): the linear
    /// solve (I − hA/2) y1 = (I + hA/2) y0.
    fn trapezoid(w: f64, h: f64, x0: f64, v0: f64) -> (f64, f64) {
        let a = h / 2.0;
        // [1, −a; aω², 1] y1 = [x0 + a v0; v0 − a ω² x0]
        let (r0, r1) = (x0 + a * v0, v0 - a * w * w * x0);
        let det = 1.0 + a * a * w * w;
        ((r0 + a * r1) / det, (r1 - a * w * w * r0) / det)
    }

    /// Step doubling on x = cos ωt (29.5 Hz, the crane's mode), one step from the exact x, v at
    /// t_n: the estimate (y_h/2 − y_h)/3 matches the true error of y_h/2 to within 2 ωh
    /// (relative; it is O(h⁴) against an error O(h³)), and the extrapolated value's error falls
    /// by at least 12 when h halves (local order ≥ 4: a ratio of 16 or more; 12 leaves room for
    /// the next term at ωh = 0.04).
    #[test]
    fn step_doubling_estimates_the_error_and_extrapolation_raises_the_order() {
        let w = 2.0 * std::f64::consts::PI * 29.5;
        let exact = |t: f64| ((w * t).cos(), -w * (w * t).sin());
        let t_n = 0.0123;
        let mut last: Option<f64> = None;
        for wh in [0.04, 0.02, 0.01] {
            let h = wh / w;
            let (x0, v0) = exact(t_n);
            let full = trapezoid(w, h, x0, v0);
            let (xm, vm) = trapezoid(w, 0.5 * h, x0, v0);
            let half = trapezoid(w, 0.5 * h, xm, vm);
            let (xe, ve) = exact(t_n + h);
            let mut worst_extrapolated: f64 = 0.0;
            for (yh, yf, ye) in [(half.0, full.0, xe), (half.1, full.1, ve)] {
                let (est, truth) = ((yh - yf) / 3.0, ye - yh);
                let gap = (est / truth - 1.0).abs();
                assert!(gap < 2.0 * wh, "ωh {wh}: {est:e} vs {truth:e}");
                let scale = if ye == xe { 1.0 } else { w };
                worst_extrapolated =
                    worst_extrapolated.max((ye - (yh + (yh - yf) / 3.0)).abs() / scale);
            }
            if let Some(prev) = last {
                assert!(
                    prev / worst_extrapolated > 12.0,
                    "ωh {wh}: {prev:e} → {worst_extrapolated:e}"
                );
            }
            last = Some(worst_extrapolated);
        }
    }

    /// The filter of the module doc on the scalar y' = λy, taken as the controller takes it:
    /// a full trapezoidal step h and two of h/2 (each the solve of its residual
    /// (h²/4)(ẏ − λy) = 0 with ẏ = (2/h)(y − y_n) − ẏ_n), then x = T⁻¹ (h/2) LE with the full
    /// step's tangent T = ∂f/∂y = (h/2)(1 − hλ/2). Non-stiff (|hλ| ≪ 1): x = LE to O(hλ);
    /// stiff (|hλ| ≫ 1): the raw LE → 2e/3 of a residue e = 1, x → 0 as 4e/(3|hλ|); and the
    /// accepted end y_h/2 + x never grows: |G| ≤ 1 on the negative real axis, on the
    /// imaginary axis (oscillator, as complex λ) and on the left half-plane between.
    #[test]
    fn filtered_estimate_vanishes_on_stiff_components_and_keeps_the_step_stable() {
        type C = (f64, f64);
        let mul = |a: C, b: C| (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0);
        let div = |a: C, b: C| {
            let d = b.0 * b.0 + b.1 * b.1;
            ((a.0 * b.0 + a.1 * b.1) / d, (a.1 * b.0 - a.0 * b.1) / d)
        };
        // one trapezoidal step of y' = λy from (y, ẏ = λy): y_n+1 = (y + h/2 ẏ)/(1 − hλ/2)
        let step = |lambda: C, h: f64, y: C| {
            let rhs = (
                y.0 + 0.5 * h * mul(lambda, y).0,
                y.1 + 0.5 * h * mul(lambda, y).1,
            );
            div(rhs, (1.0 - 0.5 * h * lambda.0, -0.5 * h * lambda.1))
        };
        // (raw estimate, filtered estimate, accepted end) of one attempt from y = 1
        let attempt = |lambda: C, h: f64| {
            let full = step(lambda, h, (1.0, 0.0));
            let half = step(lambda, 0.5 * h, step(lambda, 0.5 * h, (1.0, 0.0)));
            let le = ((half.0 - full.0) / 3.0, (half.1 - full.1) / 3.0);
            let tangent = (
                0.5 * h * (1.0 - 0.5 * h * lambda.0),
                -0.25 * h * h * lambda.1,
            );
            let x = div((0.5 * h * le.0, 0.5 * h * le.1), tangent);
            (le, x, (half.0 + x.0, half.1 + x.1))
        };
        let abs = |a: C| a.0.hypot(a.1);
        let h = 1e-3;
        for hl in [1e-4, 1e-3, 1e-2] {
            let (le, x, _) = attempt((-hl / h, 0.0), h);
            assert!(
                (x.0 / le.0 - 1.0).abs() <= hl,
                "hλ = −{hl}: {x:?} vs {le:?}"
            );
        }
        for hl in [1e3, 1e4, 1e6] {
            let (le, x, _) = attempt((-hl / h, 0.0), h);
            assert!(abs(le) > 0.6, "hλ = −{hl}: raw estimate {le:?}");
            assert!(abs(x) <= 1.5 / hl, "hλ = −{hl}: filtered {x:?}");
        }
        for k in 0..=60 {
            let r = 10f64.powf(-3.0 + 0.15 * k as f64);
            for j in 0..=16 {
                let phi = std::f64::consts::FRAC_PI_2 * j as f64 / 16.0;
                let lambda = (-r * phi.cos() / h, r * phi.sin() / h);
                let g = abs(attempt(lambda, h).2);
                assert!(g <= 1.0 + 1e-12, "hλ = {lambda:?}·h: |G| = {g}");
            }
        }
    }

    /// The Hermite interpolant reproduces a cubic exactly, and its derivative too.
    #[test]
    fn hermite_is_exact_on_cubics() {
        let f = |t: f64| 2.0 - 3.0 * t + 0.5 * t * t - 4.0 * t * t * t;
        let df = |t: f64| -3.0 + t - 12.0 * t * t;
        let (t0, h) = (0.3, 0.7);
        for s in [0.0, 0.1, 0.5, 0.77, 1.0] {
            let (y, yd) = hermite(s, h, f(t0), df(t0), f(t0 + h), df(t0 + h));
            assert!((y - f(t0 + s * h)).abs() < 1e-12, "s {s}");
            assert!((yd - df(t0 + s * h)).abs() < 1e-11, "s {s}");
        }
    }
}

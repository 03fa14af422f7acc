//! The hydraulic subsystem: pressures and valve positions stepped alone, with the cylinders'
//! motion as its input through their line ports (s over the step) and their forces as its
//! output. Its own integrator (forward Euler or trapezoidal, `HydraulicIntegrator`) and its own
//! step: N = `HydraulicConfig::substeps` substeps h = Δt/N over each step Δt (004 §4, reference
//! note 004-A.5).
//!
//! Within the step each cylinder moves linearly with constant rate (004 eq. 40):
//! ```text
//! ṡ = (s_k+1 − s_k)/Δt,     s(t_k + j h) = s_k + (j/N)(s_k+1 − s_k)
//! ```
//! and so does the joint of each shaft port (a hydraulic motor, `circuit::Shaft`), from q_k to
//! q_k+1 at q̇ = (q_k+1 − q_k)/Δt: the motor's flow D i q̇/2π + C_L Δp reads that rate.
//! and the pressures go from p_k by (000 eq. 22 per volume, h_v = (B_e/V)(ΣQ_in − V̇)):
//! ```text
//! forward Euler:  p_j+1 = p_j + h h(p_j, s_j, ṡ, U_j)
//! trapezoidal:    2(p_j+1 − p_j)/h − ṗ_j − h(p_j+1, s_j+1, ṡ, U_j+1) = 0,   ṗ_j+1 = h(p_j+1, …)
//! ```
//! with ṗ_0 = h(p_k, s_k, ṡ, U_k) evaluated with this step's ṡ (ṡ is piecewise constant, so the
//! previous step's end rate is not the start rate of this one).
//! (algebraic volumes, 002 Pub II, use their flow-balance row −h(p_j+1, …) = 0 under either
//! rule; the implicit rows are solved by a local Newton with the exact ∂h/∂p). The spools follow
//! their inputs substep by substep (000 eq. 27, closed-form trapezoidal).
//!
//! The sub-integration [`integrate`] is written in a scalar type `S`: with s_k+1 a dual number
//! (the multi-rate formulation's tangent columns, `formulations::z_only::multirate`) the pressures
//! p_k+1(s_k+1) come out with their derivatives (in the local Newton the dual parts converge
//! with the real parts, the Jacobian being exact at each iterate). The local Newton of a
//! trapezoidal substep is a chord iteration with a second-order predictor; when it does not
//! converge (the no-reverse-flow gates of an open-centre valve, 004 eq. 29, switching) the
//! substep is solved again by a damped Newton with a line search, through the one Newton
//! (`solver::newton::solve` on a `NewtonProblem<S>`).
//!
//! `pipeline::subsystem::hydraulic::HydraulicSubsystem` steps it alone (`Subsystem`): inputs one
//! `Segment` of s per cylinder and one of q per shaft port, outputs the cylinder forces
//! F = p_A A_A − p_B A_B − F_μ(ṡ) and the shaft torques τ(p_A, p_B, q̇) at t_k+1, ṡ and q̇ the
//! segments' rates.

use num_dual::Dual64;

use crate::circuit;
use crate::circuit::Shaft;
use crate::circuit::{reduced, volume};
use crate::elements::element::{Element, PortState};
use crate::elements::hydraulics::{fluid, CylinderMotion};
use crate::model::spec::HydraulicIntegrator;
use crate::model::Model;
use crate::model::VolumeId;
use crate::solver::newton::{self, Counters, NewtonProblem, TangentPolicy, Tolerances};
use crate::solver::real::Real;
use crate::state::State;
use crate::ModelError;

/// The hydraulic subsystem's own integrator and step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HydraulicConfig {
    /// The step Δt over which the cylinder motion is one segment [s].
    pub step_s: f64,
    /// Substeps N per step (h = Δt/N).
    pub substeps: u32,
    /// The rule of each substep.
    pub integrator: HydraulicIntegrator,
}

impl HydraulicConfig {
    /// The model's multi-rate settings: Δt = `solver.step_s`, N = `solver.hydraulic_substeps`,
    /// `solver.hydraulic_integrator`.
    pub fn of_model(model: &Model) -> Self {
        HydraulicConfig {
            step_s: model.solver.step_s,
            substeps: model.solver.hydraulic_substeps,
            integrator: model.solver.hydraulic_integrator,
        }
    }
}

/// Buffers of one hydraulic sub-integration in scalar type `S`.
#[derive(Debug, Clone)]
pub struct HydraulicBuffers<S: Real> {
    /// Pressures [Pa]: p_k at the start, p_k+1 at the end.
    pub p: Vec<S>,
    /// ṗ [Pa/s] at the current substep.
    pub pd: Vec<S>,
    /// Trial p_j+1 [Pa].
    pub p_new: Vec<S>,
    /// Pressure rates h [Pa/s].
    pub h: Vec<S>,
    /// Forward-Euler rates at the start of the substep [Pa/s].
    pub h_start: Vec<S>,
    /// Component flows (scratch) [m³/s].
    pub q: Vec<S>,
    /// Local residual / increment.
    pub r: Vec<S>,
    /// Cylinder motion at the substep.
    pub motion: Vec<CylinderMotion<S>>,
    /// s_k+1 per cylinder, the end of the input segment [m].
    pub s1: Vec<S>,
    /// q_k+1 per shaft port (`circuit::shafts`), the end of its joint's input segment [rad].
    pub q1: Vec<S>,
    /// The joints of the shaft ports at the current substep, per element (`Model::elements()`
    /// order; only the shafts' entries are read, `circuit::component_flows_coupled`); empty
    /// without shafts, so that a model without one takes the flow sum of the joints at rest.
    pub shaft: Vec<PortState<S>>,
    /// The same with real parts only, for the local Jacobian.
    pub shaft_dual: Vec<PortState<Dual64>>,
    /// The local Newton of some substep did not converge.
    pub failed: bool,
    /// B_e/V per volume at the current substep's motion [Pa/m³].
    pub coef: Vec<S>,
    /// V̇ per volume at the current substep's motion [m³/s].
    pub vdot: Vec<S>,
    /// Local Jacobian, row-major n_volumes² (f64); LU factors once `jac_valid`.
    pub jac: Vec<f64>,
    /// Row pivots of the LU factors in `jac`.
    pub piv: Vec<usize>,
    /// `jac` holds the LU factors of a local Jacobian of this sub-integration.
    pub jac_valid: bool,
    /// Full local Newton (a fresh Jacobian at every iterate) instead of the chord iteration: the
    /// buffers of dual passes, so that the derivative parts converge with the real parts.
    pub full_newton: bool,
    /// Base point of the damped Newton's line search [Pa].
    pub p_base: Vec<S>,
    /// Newton direction of the damped Newton [Pa].
    pub dp: Vec<S>,
    /// ṗ at the start of the previous substep [Pa/s] (second-order predictor).
    pub pd_prev: Vec<S>,
    /// Dual scratch for ∂h/∂p.
    pub p_dual: Vec<Dual64>,
    /// Dual scratch.
    pub q_dual: Vec<Dual64>,
    /// Dual scratch.
    pub h_dual: Vec<Dual64>,
    /// Dual scratch.
    pub motion_dual: Vec<CylinderMotion<Dual64>>,
    /// Work of the damped Newton's solves (scratch: not reported).
    pub counters: Counters,
}

impl<S: Real> HydraulicBuffers<S> {
    /// Buffers for `model`; `full_newton` for the dual passes of a tangent.
    pub fn new(model: &Model, full_newton: bool) -> Self {
        let (nv, nc) = (model.n_volumes(), model.n_cylinders());
        let ns = circuit::shafts(model).len();
        let ne = if ns > 0 { model.elements().len() } else { 0 };
        let zm = CylinderMotion {
            s: S::zero(),
            sd: S::zero(),
        };
        let zd = CylinderMotion {
            s: Dual64::from(0.0),
            sd: Dual64::from(0.0),
        };
        HydraulicBuffers {
            p: vec![S::zero(); nv],
            pd: vec![S::zero(); nv],
            p_new: vec![S::zero(); nv],
            h: vec![S::zero(); nv],
            h_start: vec![S::zero(); nv],
            q: vec![S::zero(); nv],
            r: vec![S::zero(); nv],
            motion: vec![zm; nc],
            s1: vec![S::zero(); nc],
            q1: vec![S::zero(); ns],
            shaft: vec![PortState::zero(); ne],
            shaft_dual: vec![PortState::zero(); ne],
            failed: false,
            coef: vec![S::zero(); nv],
            vdot: vec![S::zero(); nv],
            jac: vec![0.0; nv * nv],
            piv: vec![0; nv],
            jac_valid: false,
            full_newton,
            pd_prev: vec![S::zero(); nv],
            p_base: vec![S::zero(); nv],
            dp: vec![S::zero(); nv],
            p_dual: vec![Dual64::from(0.0); nv],
            q_dual: vec![Dual64::from(0.0); nv],
            h_dual: vec![Dual64::from(0.0); nv],
            motion_dual: vec![zd; nc],
            counters: Counters::default(),
        }
    }
}

/// The data of one step that do not depend on the end of the motion segment s_k+1.
#[derive(Debug, Clone)]
pub struct HydraulicPlan {
    /// Its integrator and step.
    pub config: HydraulicConfig,
    /// s_k per cylinder, the start of the input segment [m].
    pub s0: Vec<f64>,
    /// The shaft ports (`circuit::shafts`): a joint angle in, a torque out.
    pub shafts: Vec<Shaft>,
    /// q_k per shaft port, the start of its joint's input segment [rad].
    pub q0: Vec<f64>,
    /// p_k [Pa].
    pub p0: Vec<f64>,
    /// Valve positions at the substep times, (N+1) × n_valve_positions.
    pub spools: Vec<f64>,
}

impl HydraulicPlan {
    /// Buffers for `model` under `config`.
    pub fn new(model: &Model, config: HydraulicConfig) -> Self {
        let shafts = circuit::shafts(model);
        HydraulicPlan {
            config,
            s0: vec![0.0; model.n_cylinders()],
            q0: vec![0.0; shafts.len()],
            shafts,
            p0: vec![0.0; model.n_volumes()],
            spools: vec![0.0; (config.substeps as usize + 1) * model.n_valve_positions()],
        }
    }

    /// The valve positions at t_k+1, the last row of the spool table.
    pub fn end_spools(&self, model: &Model) -> &[f64] {
        let nvp = model.n_valve_positions();
        let nsub = self.config.substeps as usize;
        &self.spools[nsub * nvp..(nsub + 1) * nvp]
    }
}

/// Stage `predict` of a hydraulic step from `st` (after `circuit::advance_positions` over
/// the step into `spool_new`): p_k, and the valve positions at every substep time. The
/// positions without a rate law are held over the step (as `advance_positions` set them); those
/// with a rate law (`Element::position_has_rate`) go substep by substep by the element's own
/// step (000 eq. 27, closed-form trapezoidal), and their end values replace those of
/// `spool_new`. The start of the motion segment, `plan.s0`, is the caller's.
pub fn plan_step(model: &Model, st: &State, spool_new: &mut [f64], plan: &mut HydraulicPlan) {
    plan.p0.copy_from_slice(&st.p);
    let nvp = model.n_valve_positions();
    let nsub = plan.config.substeps as usize;
    let h = plan.config.step_s / nsub as f64;
    for j in 0..=nsub {
        plan.spools[j * nvp..(j + 1) * nvp].copy_from_slice(spool_new);
    }
    for (i, e) in model.position_elements() {
        if !e.position_has_rate() {
            continue;
        }
        let mut u = st.spool[i];
        plan.spools[i] = u;
        for j in 0..nsub {
            let t0 = st.t_s + j as f64 * h;
            let (u0, u1) = match e.ports().input {
                Some(k) => st.inputs.step_values_at(&model.inputs, k, t0, t0 + h),
                None => (1.0, 1.0),
            };
            u = e.advance_position(u, st.trim[i], u0, u1, h);
            plan.spools[(j + 1) * nvp + i] = u;
        }
        spool_new[i] = u;
    }
}

/// Cylinder motion at substep fraction `a` ∈ [0, 1] of the step (004 eq. 40): the segment
/// from s_k = `plan.s0` to s_k+1 = `sub.s1` at the constant rate (s_k+1 − s_k)/Δt; and each
/// shaft's joint the same way, from q_k = `plan.q0` to q_k+1 = `sub.q1`.
fn motion_at<S: Real>(sub: &mut HydraulicBuffers<S>, plan: &HydraulicPlan, a: f64) {
    let dt = plan.config.step_s;
    for (c, m) in sub.motion.iter_mut().enumerate() {
        let ds = sub.s1[c] - plan.s0[c];
        *m = CylinderMotion {
            s: ds * a + plan.s0[c],
            sd: ds / dt,
        };
    }
    for (j, shaft) in plan.shafts.iter().enumerate() {
        let dq = sub.q1[j] - plan.q0[j];
        let at = &mut sub.shaft[shaft.element];
        at.s = dq * a + plan.q0[j];
        at.sd = dq / dt;
        let real = &mut sub.shaft_dual[shaft.element];
        real.s = Dual64::from(at.s.re());
        real.sd = Dual64::from(at.sd.re());
    }
}

/// The pressure-independent part of h at the motion in `sub.motion` (000 eqs. 22–23):
/// `sub.coef` = B_e/V and `sub.vdot` = V̇, so that h_v = coef_v (Q_in,v − V̇_v).
fn substep_geometry<S: Real>(model: &Model, sub: &mut HydraulicBuffers<S>) {
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        let (vv, vd, wall) = volume::geometry(model, vol, VolumeId(v), &sub.motion);
        let be = fluid::effective_bulk_modulus(model.hydraulics.oil_bulk_pa, vv, wall);
        sub.coef[v] = be / vv;
        sub.vdot[v] = vd;
    }
}

/// h(p) = coef (Q_in(p) − V̇) into `out` with the geometry of [`substep_geometry`]
/// (the same values as `circuit::pressure_rates`, without recomputing the volumes).
#[allow(clippy::too_many_arguments)]
fn rates<S: Real>(
    model: &Model,
    coef: &[S],
    vdot: &[S],
    p: &[S],
    spools: &[f64],
    shaft: &[PortState<S>],
    q: &mut [S],
    out: &mut [S],
) {
    if shaft.is_empty() {
        // no shaft port: the flow sum with the joints at rest (the literal empty slices let
        // the element loop drop its joint check)
        circuit::component_flows(model, p, spools, q);
    } else {
        circuit::component_flows_coupled(model, p, spools, &[], shaft, &mut [], q);
    }
    for v in 0..out.len() {
        out[v] = if model.has_node_compliance {
            // accumulators: ṗ = (Q_in − V̇) / (V/B_e + C(p)) (`volume::pressure_rate`)
            (q[v] - vdot[v]) / (coef[v].recip() + circuit::element_compliance(model, p, v))
        } else {
            coef[v] * (q[v] - vdot[v])
        };
    }
}

/// The hydraulic sub-integration from p_k over N substeps (module doc).
///
/// The implicit rows of each substep are solved by the one Newton (`solver::newton::solve_inlined`
/// on `SubstepChord`, then `solve` on `SubstepNewton` when it fails) as a chord (simplified) iteration: the
/// local Jacobian J = ∂r/∂p_j+1 (exact, by dual numbers) is evaluated and factored at the first
/// iteration of the sub-integration and kept over the following iterations and substeps while
/// it contracts the increments by at least 5× per iteration; otherwise it is re-evaluated at
/// the current iterate. (Kept across sub-integrations as well, it converges more slowly than it
/// saves: 2.2 instead of 1.6 local iterations per substep on the four-bar.) The predictor is second order,
/// p⁽⁰⁾_j+1 = p_j + h ṗ_j + ½ h (ṗ_j − ṗ_j−1). In the dual passes (tangent columns of the
/// mechanical Newton) the full Newton is kept, so that the derivative parts converge with the
/// real parts and the tangent stays exact.
pub fn integrate<S: Real>(model: &Model, sub: &mut HydraulicBuffers<S>, plan: &HydraulicPlan) {
    let nv = model.n_volumes();
    let nvp = model.n_valve_positions();
    let nsub = plan.config.substeps as usize;
    let h = plan.config.step_s / nsub as f64;
    let euler = plan.config.integrator == HydraulicIntegrator::ForwardEuler;
    let any_algebraic = model.hydraulics.volumes.iter().any(|v| v.algebraic);
    // the weighted increment test of both local Newtons: |Δp| ≤ tol_pressure_pa + 1e-12 |p|
    let tol = Tolerances::new(&[(nv, model.solver.tol_pressure_pa)], 1e-12);
    let full_newton = sub.full_newton;
    sub.failed = false;
    sub.jac_valid = false;
    for v in 0..nv {
        sub.p[v] = S::from(plan.p0[v]);
    }
    // ṗ at t_k with this step's ṡ: within the step the hydraulics sees ṡ = (s_k+1 − s_k)/Δt
    // throughout, so ṗ_k of the previous step (another ṡ) is not the trapezoidal start value
    motion_at(sub, plan, 0.0);
    substep_geometry(model, sub);
    rates(
        model,
        &sub.coef,
        &sub.vdot,
        &sub.p,
        &plan.spools[..nvp],
        &sub.shaft,
        &mut sub.q,
        &mut sub.pd,
    );
    sub.pd_prev.copy_from_slice(&sub.pd);
    for j in 0..nsub {
        let (a0, a1) = (j as f64 / nsub as f64, (j + 1) as f64 / nsub as f64);
        let sp0 = &plan.spools[j * nvp..(j + 1) * nvp];
        let sp1 = &plan.spools[(j + 1) * nvp..(j + 2) * nvp];
        if euler {
            if j > 0 {
                motion_at(sub, plan, a0);
                substep_geometry(model, sub);
            }
            rates(
                model,
                &sub.coef,
                &sub.vdot,
                &sub.p,
                sp0,
                &sub.shaft,
                &mut sub.q,
                &mut sub.h_start,
            );
            if !any_algebraic {
                for v in 0..nv {
                    sub.p[v] += sub.h_start[v] * h;
                    sub.pd[v] = sub.h_start[v];
                }
                continue;
            }
        }
        // implicit substep: local Newton on the rows of the module doc
        motion_at(sub, plan, a1);
        substep_geometry(model, sub);
        for v in 0..nv {
            let extrapolation = if j > 0 && !euler {
                (sub.pd[v] - sub.pd_prev[v]) * 0.5
            } else {
                S::zero()
            };
            sub.p_new[v] = sub.p[v] + (sub.pd[v] + extrapolation) * h;
        }
        let policy = TangentPolicy {
            // the chord iteration: the factors kept across iterations and substeps while
            // they contract by ×5 (full Newton in the dual passes)
            reuse_across_steps: !full_newton,
            refresh_ratio: 0.2,
            every_iteration: full_newton,
            ..TangentPolicy::MODIFIED
        };
        let chord = &mut SubstepChord {
            model,
            sub,
            sp1,
            euler,
            h,
            tol,
        };
        let mut converged = newton::solve_inlined(chord, policy, 30).is_ok();
        if !converged {
            // the no-reverse-flow gates of a valve (004 eq. 29) can make the plain iteration
            // cycle between branches when an opening switches: restart from the predictor with
            // the damped Newton
            sub.jac_valid = false;
            for v in 0..nv {
                sub.p_new[v] = sub.p[v] + sub.pd[v] * h;
            }
            converged = damped_newton(model, sub, sp1, euler, h, tol);
        }
        if !converged {
            sub.failed = true;
        }
        for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
            let pd = if vol.algebraic || euler {
                (sub.p_new[v] - sub.p[v]) / h
            } else {
                (sub.p_new[v] - sub.p[v]) * (2.0 / h) - sub.pd[v]
            };
            sub.pd_prev[v] = sub.pd[v];
            sub.pd[v] = if euler && !vol.algebraic {
                sub.h_start[v]
            } else {
                pd
            };
            sub.p[v] = sub.p_new[v];
        }
    }
}

/// The local residual r = −(row of the module doc) at `sub.p_new` into `sub.r` (with `sub.h`);
/// returns ‖r‖∞ over the real parts [Pa/s].
fn substep_residual<S: Real>(
    model: &Model,
    sub: &mut HydraulicBuffers<S>,
    sp1: &[f64],
    euler: bool,
    h: f64,
) -> f64 {
    rates(
        model, &sub.coef, &sub.vdot, &sub.p_new, sp1, &sub.shaft, &mut sub.q, &mut sub.h,
    );
    let mut norm: f64 = 0.0;
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        let pd = if euler {
            (sub.p_new[v] - sub.p[v]) / h
        } else {
            (sub.p_new[v] - sub.p[v]) * (2.0 / h) - sub.pd[v]
        };
        let rate = if euler && !vol.algebraic {
            sub.h_start[v]
        } else {
            sub.h[v]
        };
        sub.r[v] = -reduced::pressure_row(vol, pd, rate);
        norm = norm.max(sub.r[v].re().abs());
    }
    norm
}

/// The local Newton of an implicit substep as a problem of the one Newton
/// (`solver::newton::solve_inlined`, the same loop inlined here): unknowns p_j+1 in `sub.p_new`,
/// residual r = −(row of the module doc) in `sub.r`, the exact local Jacobian
/// (`local_jacobian`) kept while `sub.jac_valid`. Converged when the increment meets the
/// tolerances `tol` (`tol_pressure_pa`, relative 1e-12).
struct SubstepChord<'a, S: Real> {
    model: &'a Model,
    sub: &'a mut HydraulicBuffers<S>,
    sp1: &'a [f64],
    euler: bool,
    h: f64,
    /// |Δp| ≤ tol_pressure_pa + 1e-12 |p| (built once per sub-integration, `integrate`).
    tol: Tolerances,
}

impl<S: Real> NewtonProblem<S> for SubstepChord<'_, S> {
    type Error = ();

    fn evaluate(&mut self) -> Result<(), ()> {
        Ok(())
    }

    fn form_residual(&mut self) -> Result<(), ()> {
        substep_residual(self.model, self.sub, self.sp1, self.euler, self.h);
        Ok(())
    }

    /// The factors of an earlier substep of this sub-integration.
    fn tangent_reusable(&self) -> bool {
        self.sub.jac_valid
    }

    fn refresh_tangent(&mut self) -> Result<bool, ()> {
        let nv = self.model.n_volumes();
        local_jacobian(self.model, self.sub, self.sp1, self.euler, self.h);
        self.sub.jac_valid = factor_small(&mut self.sub.jac, &mut self.sub.piv, nv);
        Ok(self.sub.jac_valid)
    }

    fn solve_increment(&mut self) {
        let nv = self.model.n_volumes();
        solve_factored(&self.sub.jac, &self.sub.piv, &mut self.sub.r, nv);
    }

    fn iterate(&mut self) -> (&mut [S], &[S]) {
        (&mut self.sub.p_new, &self.sub.r)
    }

    fn tolerances(&self) -> Tolerances {
        self.tol
    }

    /// Runs to its cap: the damped Newton takes over after it.
    fn fails_on_growth(&self) -> bool {
        false
    }

    fn counters(&mut self) -> &mut Counters {
        &mut self.sub.counters
    }

    fn failure(&mut self, _iterations: u32, _reason: &str) {}
}

/// The damped Newton of a substep as a problem of the one Newton (`solver::newton::solve`, full
/// Newton: the exact local Jacobian at every iterate) with a backtracking line search on ‖r‖∞:
/// the Newton direction d = J⁻¹ r is halved up to 30 times until the residual decreases,
/// ‖r(p + θ d)‖∞ < (1 − 10⁻⁴ θ) ‖r(p)‖∞. The line search runs inside
/// [`NewtonProblem::solve_increment`], whose increment is the searched θ d, so that the weighted
/// test measures the step taken (with `NewtonProblem::step_fraction` the test would measure the
/// full d: a stricter test, and other iterates than the validated ones). Converged when the
/// increment meets the tolerances `tol` (`tol_pressure_pa`, relative 1e-12) or the residual is
/// exactly zero.
struct SubstepNewton<'a, S: Real> {
    model: &'a Model,
    sub: &'a mut HydraulicBuffers<S>,
    sp1: &'a [f64],
    euler: bool,
    h: f64,
    tol: Tolerances,
    /// ‖r‖∞ at the current iterate [Pa/s].
    r0: f64,
}

impl<S: Real> NewtonProblem<S> for SubstepNewton<'_, S> {
    type Error = ();

    fn evaluate(&mut self) -> Result<(), ()> {
        Ok(())
    }

    fn form_residual(&mut self) -> Result<(), ()> {
        self.r0 = substep_residual(self.model, self.sub, self.sp1, self.euler, self.h);
        Ok(())
    }

    fn residual_converged(&self) -> bool {
        self.r0 == 0.0
    }

    fn tangent_reusable(&self) -> bool {
        false
    }

    fn refresh_tangent(&mut self) -> Result<bool, ()> {
        let nv = self.model.n_volumes();
        local_jacobian(self.model, self.sub, self.sp1, self.euler, self.h);
        Ok(factor_small(&mut self.sub.jac, &mut self.sub.piv, nv))
    }

    /// d = J⁻¹ r, the line search along it from p (left at p), and the increment θ d into
    /// `sub.r` (θ: the last trial, the point the search ended on).
    fn solve_increment(&mut self) {
        let (model, sub) = (self.model, &mut *self.sub);
        let nv = model.n_volumes();
        solve_factored(&sub.jac, &sub.piv, &mut sub.r, nv);
        sub.p_base.copy_from_slice(&sub.p_new);
        sub.dp.copy_from_slice(&sub.r);
        let mut theta = 1.0;
        let mut trial = theta;
        for _ in 0..30 {
            trial = theta;
            for v in 0..nv {
                sub.p_new[v] = sub.p_base[v] + sub.dp[v] * theta;
            }
            let r1 = substep_residual(model, sub, self.sp1, self.euler, self.h);
            if r1 < (1.0 - 1e-4 * theta) * self.r0 {
                break;
            }
            theta *= 0.5;
        }
        sub.p_new.copy_from_slice(&sub.p_base);
        for v in 0..nv {
            sub.r[v] = sub.dp[v] * trial;
        }
    }

    fn iterate(&mut self) -> (&mut [S], &[S]) {
        (&mut self.sub.p_new, &self.sub.r)
    }

    fn tolerances(&self) -> Tolerances {
        self.tol
    }

    /// Runs to its cap whatever the increments do (a valve gate switching inside the substep).
    fn fails_on_growth(&self) -> bool {
        false
    }

    fn counters(&mut self) -> &mut Counters {
        &mut self.sub.counters
    }

    fn failure(&mut self, _iterations: u32, _reason: &str) {}
}

/// The damped Newton of a substep ([`SubstepNewton`]) from `sub.p_new`, at most 100
/// iterations. True when it converged.
fn damped_newton<S: Real>(
    model: &Model,
    sub: &mut HydraulicBuffers<S>,
    sp1: &[f64],
    euler: bool,
    h: f64,
    tol: Tolerances,
) -> bool {
    let problem = &mut SubstepNewton {
        model,
        sub,
        sp1,
        euler,
        h,
        tol,
        r0: 0.0,
    };
    newton::solve(problem, TangentPolicy::FULL, 100).is_ok()
}

/// The local Jacobian ∂r/∂p_j+1 of an implicit substep at the real part of `sub.p_new`, exact by
/// dual numbers, into `sub.jac` (row-major).
fn local_jacobian<S: Real>(
    model: &Model,
    sub: &mut HydraulicBuffers<S>,
    sp1: &[f64],
    euler: bool,
    h: f64,
) {
    let nv = model.n_volumes();
    // ∂h_v/∂p_u = (B_e/V)_v ∂Q_in,v/∂p_u: V and V̇ do not depend on the pressures
    for u in 0..nv {
        for v in 0..nv {
            sub.p_dual[v] = Dual64::new(sub.p_new[v].re(), if u == v { 1.0 } else { 0.0 });
        }
        if sub.shaft_dual.is_empty() {
            circuit::component_flows(model, &sub.p_dual, sp1, &mut sub.q_dual);
        } else {
            circuit::component_flows_coupled(
                model,
                &sub.p_dual,
                sp1,
                &[],
                &sub.shaft_dual,
                &mut [],
                &mut sub.q_dual,
            );
        }
        for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
            let diag = if u != v || vol.algebraic {
                0.0
            } else if euler {
                1.0 / h
            } else {
                2.0 / h
            };
            let dh = if euler && !vol.algebraic {
                0.0
            } else {
                sub.coef[v].re() * sub.q_dual[v].eps
            };
            sub.jac[v * nv + u] = diag - dh;
        }
    }
}

/// LU factors with partial pivoting of a small dense row-major `n × n` matrix, in place
/// ([`crate::solver::linalg::lu_factor_row_major_in_place`]: column-major factors after), row pivots into `piv`.
/// False if singular or not finite.
fn factor_small(a: &mut [f64], piv: &mut [usize], n: usize) -> bool {
    crate::solver::linalg::lu_factor_row_major_in_place(a, n, piv).is_ok()
}

/// Solves with the factors of [`factor_small`]: b ← A⁻¹ b, for a right-hand side in `S`.
fn solve_factored<S: Real>(a: &[f64], piv: &[usize], b: &mut [S], n: usize) {
    crate::solver::linalg::lu_solve_in_place(a, n, piv, b)
}

/// Stage `commit` of a hydraulic step: p_k+1, ṗ_k+1 of the sub-integration `sub` and
/// p̈ = (ṗ_k+1 − ṗ_k)/Δt into `st`; bit v of `cavitation_onsets` set where volume v dropped
/// below 0 Pa.
pub fn commit(
    model: &Model,
    plan: &HydraulicPlan,
    sub: &HydraulicBuffers<f64>,
    st: &mut State,
    cavitation_onsets: &mut u64,
) {
    let dt = plan.config.step_s;
    for v in 0..model.n_volumes() {
        let p_new = sub.p[v];
        if p_new < 0.0 && st.p[v] >= 0.0 && v < 64 {
            *cavitation_onsets |= 1 << v;
        }
        let pd_new = sub.pd[v];
        st.pdd[v] = (pd_new - st.pd[v]) / dt;
        st.pd[v] = pd_new;
        st.p[v] = p_new;
    }
}

/// What the hydraulic subsystem cannot carry in `model`: an element with an internal state, a
/// cylinder friction law with states. (A hydraulic motor is a shaft port, `circuit::Shaft`.)
pub fn check_supported(model: &Model) -> Result<(), ModelError> {
    for (i, e) in model.elements().iter().enumerate() {
        let (path, element) = (
            format!("elements[{i}].type"),
            format!("element '{}'", e.name()),
        );
        if e.n_internal() > 0 {
            return Err(ModelError::new(
                path,
                element,
                "has an internal state, which the hydraulic subsystem does not integrate",
            ));
        }
    }
    for (c, cyl) in model.cylinders().enumerate() {
        if crate::elements::friction::n_states(&cyl.friction) > 0 {
            return Err(ModelError::new(
                format!("hydraulics.cylinders[{c}].friction.type"),
                format!("cylinder '{}'", cyl.name),
                "a friction law with internal states is not carried by the hydraulic subsystem \
                 (use a static law: bengisu_akay, brown_mcphee, viscous, efficiency)",
            ));
        }
    }
    Ok(())
}

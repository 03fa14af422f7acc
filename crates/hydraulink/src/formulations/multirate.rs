//! Multi-rate co-integration (004 §4, reference note 004-A.5): the mechanics leads with the
//! penalty formulation's ALI3-P and the trapezoidal rule over Δt, with the joint coordinates z as
//! the only Newton unknowns; the hydraulics is integrated separately over N = `hydraulic_substeps`
//! substeps h = Δt/N inside *every* residual evaluation, i.e. at every Newton iteration.
//!
//! Within the step each cylinder moves linearly with constant rate (004 eq. 40):
//! ```text
//! ṡ = (s(z_k+1) − s_k)/Δt,     s(t_k + j h) = s_k + (j/N)(s(z_k+1) − s_k)
//! ```
//! and the pressures go from p_k by (000 eq. 22 per volume, h_v = (B_e/V)(ΣQ_in − V̇)):
//! ```text
//! forward Euler:  p_j+1 = p_j + h h(p_j, s_j, ṡ, U_j)
//! trapezoidal:    2(p_j+1 − p_j)/h − ṗ_j − h(p_j+1, s_j+1, ṡ, U_j+1) = 0,   ṗ_j+1 = h(p_j+1, …)
//! ```
//! with ṗ_0 = h(p_k, s_k, ṡ, U_k) evaluated with this step's ṡ (ṡ is piecewise constant, so the
//! previous step's end rate is not the start rate of this one).
//! (algebraic volumes, 002 Pub II, use their flow-balance row −h(p_j+1, …) = 0 under either
//! rule; the implicit rows are solved by a local Newton with the exact ∂h/∂p). The resulting
//! p_k+1(z_k+1) gives the cylinder forces of the mechanical residual (000 eq. 39 without the
//! pressure rows):
//! ```text
//! f(z) = (Δt²/4) [ M′ z̈ + Φ_zᵀ (α Φ + λ) − Q′(z, ż, p_k+1(z)) ]
//! ```
//! Tangent: exact. The sub-integration is a function of z_k+1 written in the scalar type of the
//! residual, so the dual pass of each tangent column differentiates through it (in the local
//! Newton the dual parts converge with the real parts, the Jacobian being exact at each iterate).
//! The spools follow their inputs substep by substep (000 eq. 27, closed-form trapezoidal).
//! Convergence: the weighted z increment Δz and the pressure change it implies,
//! Δp = (∂p_k+1/∂z) Δz (∂p_k+1/∂z from the dual passes of the last tangent; weighted by the
//! pressure tolerance), must both be ≤ 1: p_k+1(z) is hypersensitive to z, so an increment
//! short on the position tolerance can still move the pressures by far more than theirs.
//! The local Newton of a trapezoidal substep is a chord iteration with a second-order predictor
//! (`integrate`); when it does not converge (the no-reverse-flow gates of an open-centre valve,
//! 004 eq. 29, switching) the substep is solved again by a damped Newton with a line search.
//! With N = 1 trapezoidal substep the scheme reproduces the monolithic trapezoidal run (test
//! `multirate_one_trapezoidal_substep_is_the_monolithic_scheme`).
//! The Newton loop and projections are shared with kinematic guidance
//! (`mechanics::semirecursive::z_only`); this module supplies the cylinder forces of the
//! sub-integrated hydraulics through `z_only::ZOnly`.

use num_dual::Dual64;

use crate::elements::element::Element;
use crate::elements::hydraulics::{self, fluid, reduced, volume, CylinderMotion};
use crate::formulations::z_only::{self, ZOnly};
use crate::mechanics::ports::Line;
use crate::model::spec::HydraulicIntegrator;
use crate::model::Model;
use crate::model::VolumeId;
use crate::pipeline::assembly::Evaluator;
use crate::pipeline::buffers::Buffers;
use crate::solver::newton;
use crate::solver::real::Real;
use crate::state::State;
use crate::StepReport;

/// Buffers of one hydraulic sub-integration in scalar type `S`.
#[derive(Debug, Clone)]
pub struct SubBuffers<S: Real> {
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
    /// s(z_k+1) [m].
    pub s1: Vec<S>,
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
    /// buffers of the tangent's dual passes, so that the derivative parts converge with the
    /// real parts.
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
}

impl<S: Real> SubBuffers<S> {
    fn new(model: &Model, full_newton: bool) -> Self {
        let (nv, nc) = (model.n_volumes(), model.hydraulics.cylinders.len());
        let zm = CylinderMotion {
            s: S::zero(),
            sd: S::zero(),
        };
        let zd = CylinderMotion {
            s: Dual64::from(0.0),
            sd: Dual64::from(0.0),
        };
        SubBuffers {
            p: vec![S::zero(); nv],
            pd: vec![S::zero(); nv],
            p_new: vec![S::zero(); nv],
            h: vec![S::zero(); nv],
            h_start: vec![S::zero(); nv],
            q: vec![S::zero(); nv],
            r: vec![S::zero(); nv],
            motion: vec![zm; nc],
            s1: vec![S::zero(); nc],
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
        }
    }
}

/// Data of the step that do not depend on z_k+1.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// s_k per cylinder [m].
    pub s0: Vec<f64>,
    /// p_k [Pa].
    pub p0: Vec<f64>,
    /// Valve positions at the substep times, (N+1) × n_valve_positions.
    pub spools: Vec<f64>,
    /// ∂p_k+1/∂z_k+1 of the last tangent, row-major n_volumes × n_coords [Pa/m or Pa/rad]
    /// (convergence test: the pressure change an increment of z implies).
    pub dpdz: Vec<f64>,
}

/// Buffers of the multi-rate integrator.
#[derive(Debug, Clone)]
pub struct MultirateWorkspace {
    /// f64 sub-integration (residual).
    pub sub: SubBuffers<f64>,
    /// Dual sub-integration (tangent columns).
    pub sub_dual: SubBuffers<Dual64>,
    /// Per-step data.
    pub plan: Plan,
}

impl MultirateWorkspace {
    /// Buffers for `model` (the spool table only when the formulation is selected).
    pub fn new(model: &Model) -> Self {
        let ns = if model.solver.formulation == crate::model::spec::Formulation::Multirate {
            model.solver.hydraulic_substeps as usize + 1
        } else {
            0
        };
        MultirateWorkspace {
            sub: SubBuffers::new(model, false),
            sub_dual: SubBuffers::new(model, true),
            plan: Plan {
                s0: vec![0.0; model.hydraulics.cylinders.len()],
                p0: vec![0.0; model.n_volumes()],
                spools: vec![0.0; ns * model.n_valve_positions()],
                dpdz: vec![0.0; model.n_volumes() * model.n_coords()],
            },
        }
    }
}

/// Stage `predict` of the multi-rate step (after `penalty::prepare`): s_k, p_k and the
/// valve positions at every substep time.
fn prepare(model: &Model, st: &State, ws: &mut Buffers, plan: &mut Plan) {
    plan.p0.copy_from_slice(&st.p);
    ws.ev.kin.positions(model, &st.z);
    for (c, cyl) in model.hydraulics.cylinders.iter().enumerate() {
        plan.s0[c] = Line::at(&ws.ev.kin, &cyl.base, &cyl.rod).s;
    }
    let nvp = model.n_valve_positions();
    let nsub = model.solver.hydraulic_substeps as usize;
    let h = model.solver.step_s / nsub as f64;
    // positions without a rate law (held over the step) as `penalty::prepare` set them
    for j in 0..=nsub {
        plan.spools[j * nvp..(j + 1) * nvp].copy_from_slice(&ws.spool_new);
    }
    // positions with a rate law (`Element::position_has_rate`) substep by substep, by the
    // element's own step (000 eq. 27, closed-form trapezoidal)
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
        ws.spool_new[i] = u;
    }
}

/// Evaluation at (z, ż) = (`ev.x[..n]`, `ev.zd`): s(z_k+1), the hydraulic sub-integration
/// (into `sub.p`, `sub.pd`), then every element at (z, ż, p_k+1).
pub(crate) fn evaluate<S: Real>(
    model: &Model,
    ev: &mut Evaluator<S>,
    sub: &mut SubBuffers<S>,
    plan: &Plan,
) {
    let n = model.n_coords();
    ev.kin.positions(model, &ev.x[..n]);
    for (c, cyl) in model.hydraulics.cylinders.iter().enumerate() {
        sub.s1[c] = Line::at(&ev.kin, &cyl.base, &cyl.rod).s;
    }
    integrate(model, sub, plan);
    let nvp = model.n_valve_positions();
    let nsub = model.solver.hydraulic_substeps as usize;
    let x = std::mem::take(&mut ev.x);
    let zd = std::mem::take(&mut ev.zd);
    ev.evaluate(
        model,
        &x[..n],
        &zd,
        &sub.p,
        &plan.spools[nsub * nvp..(nsub + 1) * nvp],
        false,
    );
    ev.x = x;
    ev.zd = zd;
}

/// Cylinder motion at substep fraction `a` ∈ [0, 1] of the step (004 eq. 40).
fn motion_at<S: Real>(model: &Model, sub: &mut SubBuffers<S>, plan: &Plan, a: f64) {
    let dt = model.solver.step_s;
    for (c, m) in sub.motion.iter_mut().enumerate() {
        let ds = sub.s1[c] - plan.s0[c];
        *m = CylinderMotion {
            s: ds * a + plan.s0[c],
            sd: ds / dt,
        };
    }
}

/// The pressure-independent part of h at the motion in `sub.motion` (000 eqs. 22–23):
/// `sub.coef` = B_e/V and `sub.vdot` = V̇, so that h_v = coef_v (Q_in,v − V̇_v).
fn substep_geometry<S: Real>(model: &Model, sub: &mut SubBuffers<S>) {
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        let (vv, vd, wall) = volume::geometry(model, vol, VolumeId(v), &sub.motion);
        let be = fluid::effective_bulk_modulus(model.hydraulics.oil_bulk_pa, vv, wall);
        sub.coef[v] = be / vv;
        sub.vdot[v] = vd;
    }
}

/// h(p) = coef (Q_in(p) − V̇) into `out` with the geometry of [`substep_geometry`]
/// (the same values as `hydraulics::pressure_rates`, without recomputing the volumes).
fn rates<S: Real>(
    model: &Model,
    coef: &[S],
    vdot: &[S],
    p: &[S],
    spools: &[f64],
    q: &mut [S],
    out: &mut [S],
) {
    hydraulics::component_flows(model, p, spools, q);
    for v in 0..out.len() {
        out[v] = if model.has_node_compliance {
            // accumulators: ṗ = (Q_in − V̇) / (V/B_e + C(p)) (`volume::pressure_rate`)
            (q[v] - vdot[v]) / (coef[v].recip() + hydraulics::element_compliance(model, p, v))
        } else {
            coef[v] * (q[v] - vdot[v])
        };
    }
}

/// The hydraulic sub-integration from p_k over N substeps (module doc).
///
/// The implicit rows of each substep are solved by a chord (simplified) Newton iteration: the
/// local Jacobian J = ∂r/∂p_j+1 (exact, by dual numbers) is evaluated and factored at the first
/// iteration of the sub-integration and kept over the following iterations and substeps while
/// it contracts the increments by at least 5× per iteration; otherwise it is re-evaluated at
/// the current iterate. (Kept across sub-integrations as well, it converges more slowly than it
/// saves: 2.2 instead of 1.6 local iterations per substep on the four-bar.) The predictor is second order,
/// p⁽⁰⁾_j+1 = p_j + h ṗ_j + ½ h (ṗ_j − ṗ_j−1). In the dual passes (tangent columns of the
/// mechanical Newton) the full Newton is kept, so that the derivative parts converge with the
/// real parts and the tangent stays exact.
fn integrate<S: Real>(model: &Model, sub: &mut SubBuffers<S>, plan: &Plan) {
    let nv = model.n_volumes();
    let nvp = model.n_valve_positions();
    let nsub = model.solver.hydraulic_substeps as usize;
    let h = model.solver.step_s / nsub as f64;
    let euler = model.solver.hydraulic_integrator == HydraulicIntegrator::ForwardEuler;
    let any_algebraic = model.hydraulics.volumes.iter().any(|v| v.algebraic);
    let tol = model.solver.tol_pressure_pa;
    let full_newton = sub.full_newton;
    sub.failed = false;
    sub.jac_valid = false;
    for v in 0..nv {
        sub.p[v] = S::from(plan.p0[v]);
    }
    // ṗ at t_k with this step's ṡ: within the step the hydraulics sees ṡ = (s_k+1 − s_k)/Δt
    // throughout, so ṗ_k of the previous step (another ṡ) is not the trapezoidal start value
    motion_at(model, sub, plan, 0.0);
    substep_geometry(model, sub);
    rates(
        model,
        &sub.coef,
        &sub.vdot,
        &sub.p,
        &plan.spools[..nvp],
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
                motion_at(model, sub, plan, a0);
                substep_geometry(model, sub);
            }
            rates(
                model,
                &sub.coef,
                &sub.vdot,
                &sub.p,
                sp0,
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
        motion_at(model, sub, plan, a1);
        substep_geometry(model, sub);
        for v in 0..nv {
            let extrapolation = if j > 0 && !euler {
                (sub.pd[v] - sub.pd_prev[v]) * 0.5
            } else {
                S::zero()
            };
            sub.p_new[v] = sub.p[v] + (sub.pd[v] + extrapolation) * h;
        }
        let mut converged = false;
        let mut prev_norm = f64::INFINITY;
        for _ in 0..30 {
            substep_residual(model, sub, sp1, euler, h);
            if full_newton || !sub.jac_valid {
                local_jacobian(model, sub, sp1, euler, h);
                if !factor_small(&mut sub.jac, &mut sub.piv, nv) {
                    sub.jac_valid = false;
                    break;
                }
                sub.jac_valid = true;
            }
            solve_factored(&sub.jac, &sub.piv, &mut sub.r, nv);
            let mut norm: f64 = 0.0;
            for v in 0..nv {
                sub.p_new[v] += sub.r[v];
                let w = tol + 1e-12 * sub.p_new[v].re().abs();
                norm = norm.max(sub.r[v].re().abs() / w);
            }
            if norm <= 1.0 {
                converged = true;
                break;
            }
            // a chord Jacobian that contracts by less than 5× is re-evaluated at the iterate
            if norm > 0.2 * prev_norm {
                sub.jac_valid = false;
            }
            prev_norm = norm;
        }
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
    sub: &mut SubBuffers<S>,
    sp1: &[f64],
    euler: bool,
    h: f64,
) -> f64 {
    rates(
        model, &sub.coef, &sub.vdot, &sub.p_new, sp1, &mut sub.q, &mut sub.h,
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

/// Newton with the exact local Jacobian at every iterate and a backtracking line search on
/// ‖r‖∞ (step halved up to 30 times until the residual decreases), from `sub.p_new`. True when
/// the increment meets the tolerance `tol` [Pa].
fn damped_newton<S: Real>(
    model: &Model,
    sub: &mut SubBuffers<S>,
    sp1: &[f64],
    euler: bool,
    h: f64,
    tol: f64,
) -> bool {
    let nv = model.n_volumes();
    let mut r0 = substep_residual(model, sub, sp1, euler, h);
    for _ in 0..100 {
        local_jacobian(model, sub, sp1, euler, h);
        if !factor_small(&mut sub.jac, &mut sub.piv, nv) {
            return false;
        }
        solve_factored(&sub.jac, &sub.piv, &mut sub.r, nv);
        sub.p_base.copy_from_slice(&sub.p_new);
        sub.dp.copy_from_slice(&sub.r);
        let mut theta = 1.0;
        let mut r1 = f64::INFINITY;
        for _ in 0..30 {
            for v in 0..nv {
                sub.p_new[v] = sub.p_base[v] + sub.dp[v] * theta;
            }
            r1 = substep_residual(model, sub, sp1, euler, h);
            if r1 < (1.0 - 1e-4 * theta) * r0 {
                break;
            }
            theta *= 0.5;
        }
        let mut norm: f64 = 0.0;
        for v in 0..nv {
            let w = tol + 1e-12 * sub.p_new[v].re().abs();
            norm = norm.max((sub.dp[v].re() * theta).abs() / w);
        }
        if norm <= 1.0 || r1 == 0.0 {
            return true;
        }
        r0 = r1;
    }
    false
}

/// The local Jacobian ∂r/∂p_j+1 of an implicit substep at the real part of `sub.p_new`, exact by
/// dual numbers, into `sub.jac` (row-major).
fn local_jacobian<S: Real>(
    model: &Model,
    sub: &mut SubBuffers<S>,
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
        hydraulics::component_flows(model, &sub.p_dual, sp1, &mut sub.q_dual);
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

/// Multi-rate's part of the z-only step (`mechanics::semirecursive::z_only`): the cylinder forces
/// of p_k+1(z) from the hydraulic sub-integration.
impl ZOnly for MultirateWorkspace {
    fn new(model: &Model) -> Self {
        MultirateWorkspace::new(model)
    }

    fn prepare(&mut self, model: &Model, st: &State, ws: &mut Buffers) {
        prepare(model, st, ws, &mut self.plan);
    }

    fn evaluate(&mut self, model: &Model, ev: &mut Evaluator<f64>) {
        evaluate(model, ev, &mut self.sub, &self.plan);
    }

    fn evaluate_dual(&mut self, model: &Model, ev: &mut Evaluator<Dual64>) {
        evaluate(model, ev, &mut self.sub_dual, &self.plan);
    }

    /// ∂p_k+1/∂z_j from the dual pass of column j.
    fn tangent_column(&mut self, j: usize, n: usize) {
        for (v, p) in self.sub_dual.p.iter().enumerate() {
            self.plan.dpdz[v * n + j] = p.eps;
        }
    }

    fn failed(&self) -> Option<&'static str> {
        self.sub
            .failed
            .then_some("hydraulic substep did not converge")
    }

    fn tangent_side(&self) -> &[f64] {
        &self.plan.dpdz
    }

    fn tangent_side_mut(&mut self) -> &mut [f64] {
        &mut self.plan.dpdz
    }

    /// The pressures are not Newton unknowns, but p_k+1(z) is hypersensitive to z: the change
    /// Δp = (∂p_k+1/∂z) Δz that the increment implies (∂p_k+1/∂z from the dual passes of the
    /// last tangent), weighted by the pressure tolerance, joins the test.
    fn implied_norm(&self, model: &Model, dx: &[f64]) -> f64 {
        let n = model.n_coords();
        let mut p_norm: f64 = 0.0;
        for (v, p) in self.sub.p.iter().enumerate() {
            let row = &self.plan.dpdz[v * n..(v + 1) * n];
            let dp: f64 = row.iter().zip(dx.iter()).map(|(a, b)| a * b).sum();
            let w = newton::weight(model.solver.tol_pressure_pa, model.solver.tol_relative, *p);
            p_norm = p_norm.max(dp.abs() / w);
        }
        p_norm
    }

    /// Cylinder rates and forces F(p_k+1, ṡ) at the projected velocities.
    fn ports(&mut self, model: &Model, ws: &mut Buffers, zd: &[f64]) {
        let n = model.n_coords();
        ws.x[n..].copy_from_slice(&self.sub.p);
        let p = std::mem::take(&mut ws.x);
        ws.ev.velocity_terms(model, zd, &p[n..]);
        ws.x = p;
    }

    /// p_k+1, ṗ_k+1 of the sub-integration, p̈ = (ṗ_k+1 − ṗ_k)/Δt, cavitation onsets.
    fn commit(&self, model: &Model, st: &mut State, report: &mut StepReport) {
        let dt = model.solver.step_s;
        for v in 0..model.n_volumes() {
            let p_new = self.sub.p[v];
            if p_new < 0.0 && st.p[v] >= 0.0 && v < 64 {
                report.cavitation_onsets |= 1 << v;
            }
            let pd_new = self.sub.pd[v];
            st.pdd[v] = (pd_new - st.pd[v]) / dt;
            st.pd[v] = pd_new;
            st.p[v] = p_new;
        }
    }
}

/// Multi-rate co-integration (004 §4): the z-only formulation (`z_only::ZOnlyStep`) with the
/// hydraulics sub-integrated inside every residual.
pub type Multirate = z_only::ZOnlyStep<MultirateWorkspace>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spec::{Formulation, ModelSpec};

    /// The dual tangent ∂f/∂z through the hydraulic sub-integration against central differences
    /// of the f64 residual, at a point of the valve opening (t ≈ 1.02 s) moved off the
    /// predictor, under both substep rules.
    #[test]
    fn multirate_tangent_matches_central_differences() {
        for integrator in [
            HydraulicIntegrator::Trapezoidal,
            HydraulicIntegrator::ForwardEuler,
        ] {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/fourbar.toml");
            let mut spec: ModelSpec =
                toml::from_str(&std::fs::read_to_string(path).expect("model exists")).unwrap();
            spec.solver.formulation = Formulation::Multirate;
            spec.solver.hydraulic_integrator = integrator;
            spec.solver.hydraulic_substeps = 5;
            let model = crate::model::compile(&spec).unwrap();
            let mut st = crate::pipeline::initialization::initialize(&model).unwrap();
            let mut ws = crate::pipeline::workspace::Workspace::new(&model);
            for _ in 0..1020 {
                crate::pipeline::step::step(&model, &mut st, &mut ws).unwrap();
            }
            let crate::pipeline::workspace::Workspace {
                buffers,
                formulation: crate::pipeline::workspace::FormulationWorkspace::Multirate(mw),
            } = &mut ws
            else {
                panic!("a multi-rate workspace");
            };
            z_only::check_tangent(&model, &st, buffers, mw);
        }
    }
}

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
//! Convergence: the weighted z increment and the change of p_k+1(z) between successive
//! evaluations (weighted by the pressure tolerance) must both be ≤ 1 — with a reused tangent the
//! z increment alone can be short while the pressures, hypersensitive to z, are still far off.
//! With N = 1 trapezoidal substep the scheme reproduces the monolithic trapezoidal run (test
//! `multirate_one_trapezoidal_substep_is_the_monolithic_scheme`).
//! The Newton loop and projections are shared with kinematic guidance
//! (`mechanics::kinematic_guidance::step_z_only`).

use num_dual::Dual64;

use crate::assembly::Evaluator;
use crate::hydraulics::{self, reduced, valve_4_3, CylinderMotion};
use crate::mechanics::kinematic_guidance::{step_z_only, ZOnly};
use crate::model::spec::HydraulicIntegrator;
use crate::model::Model;
use crate::real::Real;
use crate::state::State;
use crate::workspace::Workspace;
use crate::{StepError, StepReport};

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
    /// Local Jacobian, row-major n_volumes² (f64).
    pub jac: Vec<f64>,
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
    fn new(model: &Model) -> Self {
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
            jac: vec![0.0; nv * nv],
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
    /// p_k+1 of the previous Newton evaluation [Pa] (convergence test).
    pub p_last: Vec<f64>,
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
            sub: SubBuffers::new(model),
            sub_dual: SubBuffers::new(model),
            plan: Plan {
                s0: vec![0.0; model.hydraulics.cylinders.len()],
                p0: vec![0.0; model.n_volumes()],
                spools: vec![0.0; ns * model.n_valve_positions()],
                p_last: vec![0.0; model.n_volumes()],
            },
        }
    }
}

/// Stage `predict` of the multi-rate step (after `penalty::prepare`): s_k, p_k and the
/// valve positions at every substep time.
pub(crate) fn prepare(model: &Model, st: &State, ws: &mut Workspace) {
    let plan = &mut ws.multirate.plan;
    plan.p0.copy_from_slice(&st.p);
    ws.ev.kin.positions(model, &st.z);
    for (c, cyl) in model.hydraulics.cylinders.iter().enumerate() {
        let d = ws.ev.kin.point(&cyl.rod) - ws.ev.kin.point(&cyl.base);
        plan.s0[c] = d.norm();
    }
    let nvp = model.n_valve_positions();
    let nsub = model.solver.hydraulic_substeps as usize;
    let h = model.solver.step_s / nsub as f64;
    // positions other than the 4/3 spools (held over the step) as `penalty::prepare` set them
    for j in 0..=nsub {
        plan.spools[j * nvp..(j + 1) * nvp].copy_from_slice(&ws.spool_new);
    }
    for (i, v) in model.hydraulics.valves.iter().enumerate() {
        let mut u = st.spool[i];
        plan.spools[i] = u;
        for j in 0..nsub {
            let t0 = st.t_s + j as f64 * h;
            let (u0, u1) = model.inputs[v.input].step_values(t0, t0 + h);
            u = valve_4_3::spool_step(u, u0, u1, v.time_constant_s, h);
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
        let d = ev.kin.point(&cyl.rod) - ev.kin.point(&cyl.base);
        sub.s1[c] = d.dot(&d).sqrt();
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

/// The hydraulic sub-integration from p_k over N substeps (module doc).
fn integrate<S: Real>(model: &Model, sub: &mut SubBuffers<S>, plan: &Plan) {
    let nv = model.n_volumes();
    let nvp = model.n_valve_positions();
    let nsub = model.solver.hydraulic_substeps as usize;
    let h = model.solver.step_s / nsub as f64;
    let euler = model.solver.hydraulic_integrator == HydraulicIntegrator::ForwardEuler;
    let any_algebraic = model.hydraulics.volumes.iter().any(|v| v.algebraic);
    let tol = 1e-3 * model.solver.tol_pressure_pa;
    sub.failed = false;
    for v in 0..nv {
        sub.p[v] = S::from(plan.p0[v]);
    }
    // ṗ at t_k with this step's ṡ: within the step the hydraulics sees ṡ = (s_k+1 − s_k)/Δt
    // throughout, so ṗ_k of the previous step (another ṡ) is not the trapezoidal start value
    motion_at(model, sub, plan, 0.0);
    hydraulics::pressure_rates(
        model,
        &sub.p,
        &sub.motion,
        &plan.spools[..nvp],
        &mut sub.q,
        &mut sub.pd,
    );
    for j in 0..nsub {
        let (a0, a1) = (j as f64 / nsub as f64, (j + 1) as f64 / nsub as f64);
        let sp0 = &plan.spools[j * nvp..(j + 1) * nvp];
        let sp1 = &plan.spools[(j + 1) * nvp..(j + 2) * nvp];
        if euler {
            motion_at(model, sub, plan, a0);
            hydraulics::pressure_rates(
                model,
                &sub.p,
                &sub.motion,
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
        for v in 0..nv {
            sub.p_new[v] = sub.p[v] + sub.pd[v] * h;
        }
        let mut converged = false;
        for _ in 0..30 {
            hydraulics::pressure_rates(model, &sub.p_new, &sub.motion, sp1, &mut sub.q, &mut sub.h);
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
            }
            // exact ∂h/∂p at the real point, by dual numbers
            for (m, md) in sub.motion.iter().zip(sub.motion_dual.iter_mut()) {
                *md = CylinderMotion {
                    s: Dual64::from(m.s.re()),
                    sd: Dual64::from(m.sd.re()),
                };
            }
            for u in 0..nv {
                for v in 0..nv {
                    sub.p_dual[v] = Dual64::new(sub.p_new[v].re(), if u == v { 1.0 } else { 0.0 });
                }
                hydraulics::pressure_rates(
                    model,
                    &sub.p_dual,
                    &sub.motion_dual,
                    sp1,
                    &mut sub.q_dual,
                    &mut sub.h_dual,
                );
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
                        sub.h_dual[v].eps
                    };
                    sub.jac[v * nv + u] = diag - dh;
                }
            }
            if !solve_small(&mut sub.jac, &mut sub.r, nv) {
                break;
            }
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
            sub.pd[v] = if euler && !vol.algebraic {
                sub.h_start[v]
            } else {
                pd
            };
            sub.p[v] = sub.p_new[v];
        }
    }
}

/// Solves a x = b in place (b ← x) for a small dense row-major `n × n` f64 matrix and a
/// right-hand side in `S`, by Gaussian elimination with partial pivoting. False if singular.
fn solve_small<S: Real>(a: &mut [f64], b: &mut [S], n: usize) -> bool {
    for k in 0..n {
        let mut piv = k;
        for i in k + 1..n {
            if a[i * n + k].abs() > a[piv * n + k].abs() {
                piv = i;
            }
        }
        if a[piv * n + k] == 0.0 || !a[piv * n + k].is_finite() {
            return false;
        }
        if piv != k {
            for j in 0..n {
                a.swap(k * n + j, piv * n + j);
            }
            b.swap(k, piv);
        }
        for i in k + 1..n {
            let f = a[i * n + k] / a[k * n + k];
            if f != 0.0 {
                for j in k..n {
                    a[i * n + j] -= f * a[k * n + j];
                }
                let bk = b[k];
                b[i] -= bk * f;
            }
        }
    }
    for k in (0..n).rev() {
        let mut acc = b[k];
        for j in k + 1..n {
            acc -= b[j] * a[k * n + j];
        }
        b[k] = acc / a[k * n + k];
    }
    true
}

/// One multi-rate step.
pub fn step(model: &Model, st: &mut State, ws: &mut Workspace) -> Result<StepReport, StepError> {
    step_z_only(model, st, ws, ZOnly::Multirate)
}

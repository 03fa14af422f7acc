//! Multi-rate co-integration (004 §4, reference note 004-A.5): two subsystems at their own
//! rates (`pipeline::subsystem`). The mechanics leads with the z-only ALI3-P step and the
//! trapezoidal rule over Δt (`formulations::z_only`, the step of
//! `subsystem::mechanical::MechanicalSubsystem`), with the joint coordinates z as the only Newton
//! unknowns; the hydraulics (`subsystem::hydraulic`) is integrated over N =
//! `hydraulic_substeps` substeps h = Δt/N inside *every* residual evaluation, i.e. at every
//! Newton iteration, driven by the cylinders' line ports: each cylinder moves from s_k to
//! s(z_k+1) at constant rate over the step (004 eq. 40, a `subsystem::Segment`). The resulting
//! p_k+1(z_k+1) gives the cylinder forces of the mechanical residual (000 eq. 39 without the
//! pressure rows):
//! ```text
//! f(z) = (Δt²/4) [ M′ z̈ + Φ_zᵀ (α Φ + λ) − Q′(z, ż, p_k+1(z)) ]
//! ```
//! Tangent: exact. The sub-integration (`substeps::integrate`) is written in the scalar type of
//! the residual, so the dual pass of each tangent column differentiates through it.
//! Convergence: the weighted z increment Δz and the pressure change it implies,
//! Δp = (∂p_k+1/∂z) Δz (∂p_k+1/∂z from the dual passes of the last tangent; weighted by the
//! pressure tolerance), must both be ≤ 1: p_k+1(z) is hypersensitive to z, so an increment
//! short on the position tolerance can still move the pressures by far more than theirs.
//! With N = 1 trapezoidal substep the scheme reproduces the monolithic trapezoidal run (test
//! `multirate_one_trapezoidal_substep_is_the_monolithic_scheme`).
//! This module holds no hydraulics of its own: it couples the two subsystems through `z_only::ZOnly`.

use num_dual::Dual64;

use crate::circuit::substeps::{self, HydraulicBuffers, HydraulicConfig, HydraulicPlan};
use crate::formulations::z_only::{self, ZOnly};
use crate::mechanics::assembly::Evaluator;
use crate::mechanics::buffers::Buffers;
use crate::mechanics::ports::Line;
use crate::model::Model;
use crate::solver::newton;
use crate::solver::real::Real;
use crate::state::State;
use crate::StepReport;

/// Buffers of the multi-rate integrator.
#[derive(Debug, Clone)]
pub struct MultirateWorkspace {
    /// f64 hydraulic sub-integration (residual).
    pub sub: HydraulicBuffers<f64>,
    /// Dual hydraulic sub-integration (tangent columns).
    pub sub_dual: HydraulicBuffers<Dual64>,
    /// The hydraulic step's data that do not depend on z_k+1 (s_k, p_k, the spool table).
    pub plan: HydraulicPlan,
    /// ∂p_k+1/∂z_k+1 of the last tangent, row-major n_volumes × n_coords [Pa/m or Pa/rad]
    /// (convergence test: the pressure change an increment of z implies).
    pub dpdz: Vec<f64>,
}

impl MultirateWorkspace {
    /// Buffers for `model` under its multi-rate settings (built only when the formulation is
    /// selected, `pipeline::workspace::Workspace::new`).
    pub fn new(model: &Model) -> Self {
        let plan = HydraulicPlan::new(model, HydraulicConfig::of_model(model));
        MultirateWorkspace {
            sub: HydraulicBuffers::new(model, false),
            sub_dual: HydraulicBuffers::new(model, true),
            plan,
            dpdz: vec![0.0; model.n_volumes() * model.n_coords()],
        }
    }
}

/// Stage `predict` of the multi-rate step (after `penalty::prepare`): s_k of every cylinder
/// (the mechanics' line ports at z_k) and q_k of every shaft port's joint, then the hydraulic
/// step's plan (p_k, the valve positions at every substep time, `substeps::plan_step`).
fn prepare(model: &Model, st: &State, ws: &mut Buffers, plan: &mut HydraulicPlan) {
    ws.ev.kin.positions(model, &st.z);
    for (c, cyl) in model.cylinders().enumerate() {
        plan.s0[c] = Line::at(&ws.ev.kin, &cyl.base, &cyl.rod).s;
    }
    for (j, shaft) in plan.shafts.iter().enumerate() {
        plan.q0[j] = st.z[shaft.axis.0];
    }
    substeps::plan_step(model, st, &mut ws.spool_new, plan);
}

/// Evaluation at (z, ż) = (`ev.x[..n]`, `ev.zd`): s(z_k+1) (the end of each cylinder's motion
/// segment) and q_k+1 of each shaft port's joint, the hydraulic sub-integration (into `sub.p`,
/// `sub.pd`), then every element at (z, ż, p_k+1) (a motor's torque at p_k+1).
pub(crate) fn evaluate<S: Real>(
    model: &Model,
    ev: &mut Evaluator<S>,
    sub: &mut HydraulicBuffers<S>,
    plan: &HydraulicPlan,
) {
    let n = model.n_coords();
    ev.kin.positions(model, &ev.x[..n]);
    for (c, cyl) in model.cylinders().enumerate() {
        sub.s1[c] = Line::at(&ev.kin, &cyl.base, &cyl.rod).s;
    }
    for (j, shaft) in plan.shafts.iter().enumerate() {
        sub.q1[j] = ev.x[shaft.axis.0];
    }
    substeps::integrate(model, sub, plan);
    let x = std::mem::take(&mut ev.x);
    let zd = std::mem::take(&mut ev.zd);
    // the kinematics are at z already (the line ports above)
    ev.evaluate_at_positions(model, &x[..n], &zd, &sub.p, plan.end_spools(model), false);
    ev.x = x;
    ev.zd = zd;
}

/// Multi-rate's part of the z-only step (`formulations::z_only`): the cylinder forces
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
            self.dpdz[v * n + j] = p.eps;
        }
    }

    fn failed(&self) -> Option<&'static str> {
        self.sub
            .failed
            .then_some("hydraulic substep did not converge")
    }

    fn tangent_side(&self) -> &[f64] {
        &self.dpdz
    }

    fn tangent_side_mut(&mut self) -> &mut [f64] {
        &mut self.dpdz
    }

    /// The pressures are not Newton unknowns, but p_k+1(z) is hypersensitive to z: the change
    /// Δp = (∂p_k+1/∂z) Δz that the increment implies (∂p_k+1/∂z from the dual passes of the
    /// last tangent), weighted by the pressure tolerance, joins the test.
    fn implied_norm(&self, model: &Model, dx: &[f64]) -> f64 {
        let n = model.n_coords();
        let mut p_norm: f64 = 0.0;
        for (v, p) in self.sub.p.iter().enumerate() {
            let row = &self.dpdz[v * n..(v + 1) * n];
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

    /// p_k+1, ṗ_k+1 of the sub-integration, p̈ = (ṗ_k+1 − ṗ_k)/Δt, cavitation onsets
    /// (`substeps::commit`).
    fn commit(&self, model: &Model, st: &mut State, report: &mut StepReport) {
        substeps::commit(
            model,
            &self.plan,
            &self.sub,
            st,
            &mut report.cavitation_onsets,
        );
    }
}

/// Multi-rate co-integration (004 §4): the z-only formulation (`z_only::ZOnlyStep`) with the
/// hydraulics sub-integrated inside every residual.
pub type Multirate = z_only::ZOnlyStep<MultirateWorkspace>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spec::{Formulation, HydraulicIntegrator, ModelSpec};

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
            let model = crate::pipeline::compile(&spec).unwrap();
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

    /// The same through a shaft port: the excavator at 6 s, its house swinging (the swing valve
    /// open from 5.6 s): the swing motor's flow reads its joint's segment in the sub-integration,
    /// so ∂f/∂z of the swing column goes through the motor's law.
    #[test]
    fn multirate_tangent_through_the_swing_motor_matches_central_differences() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/excavator.toml");
        let mut spec: ModelSpec =
            toml::from_str(&std::fs::read_to_string(path).expect("model exists")).unwrap();
        spec.solver.formulation = Formulation::Multirate;
        spec.solver.hydraulic_substeps = 5;
        let model = crate::pipeline::compile(&spec).unwrap();
        assert_eq!(crate::circuit::shafts(&model).len(), 1, "the swing motor");
        let mut st = crate::pipeline::initialization::initialize(&model).unwrap();
        let mut ws = crate::pipeline::workspace::Workspace::new(&model);
        for _ in 0..6000 {
            crate::pipeline::step::step(&model, &mut st, &mut ws).unwrap();
        }
        let swing = crate::circuit::shafts(&model)[0].axis.0;
        assert!(
            st.zd[swing].abs() > 0.05,
            "the house turns: {} rad/s",
            st.zd[swing]
        );
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

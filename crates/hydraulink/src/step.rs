//! THE step: one Δt of the selected formulation. Stages of the penalty formulation, in order
//! (see `mechanics::semirecursive::penalty`): `check_state` → spool update → history and
//! predictor → Newton (residual: kinematics, cylinder ports, flows, forces, M′/Q′, constraints;
//! exact tangent; solve; λ update) → projections → advance and diagnostics.

use crate::integrator::multirate;
use crate::mechanics::global;
use crate::mechanics::kinematic_guidance;
use crate::mechanics::semirecursive::{double_step, penalty};
use crate::model::spec::Formulation;
use crate::model::Model;
use crate::state::State;
use crate::workspace::Workspace;
use crate::{StepError, StepReport};

/// Rejects NaN/Inf in the state before a step (an error, never a reset).
pub fn check_state(model: &Model, st: &State) -> Result<(), StepError> {
    let bad = |label: String| StepError::NonFinite {
        time_s: st.t_s,
        step: st.step,
        equation: label,
    };
    for (i, a) in model.axes.iter().enumerate() {
        if !st.z[i].is_finite() || !st.zd[i].is_finite() || !st.zdd[i].is_finite() {
            return Err(bad(a.name.clone()));
        }
    }
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        if !st.p[v].is_finite() || !st.pd[v].is_finite() || !st.pdd[v].is_finite() {
            return Err(bad(format!("{}.p", vol.name)));
        }
    }
    for (i, valve) in model.hydraulics.valves.iter().enumerate() {
        if !st.spool[i].is_finite() {
            return Err(bad(format!("{}.spool", valve.name)));
        }
    }
    let mut o = 0;
    for c in &model.hydraulics.cylinders {
        for name in crate::friction::state_names(&c.friction) {
            if !st.friction[o].is_finite() || !st.friction_rate[o].is_finite() {
                return Err(bad(format!("{}.{name}", c.name)));
            }
            o += 1;
        }
    }
    for j in &model.joint_friction {
        for name in crate::friction::state_names(&j.friction) {
            if !st.friction[o].is_finite() || !st.friction_rate[o].is_finite() {
                return Err(bad(format!("{}.{name}", j.joint)));
            }
            o += 1;
        }
    }
    for (r, c) in model.constraints.iter().enumerate() {
        if !st.lambda[r].is_finite() {
            return Err(bad(format!("{}.lambda", c.name)));
        }
    }
    Ok(())
}

/// Stage `sample element inputs`: the value of every element's driving input for the step
/// [t_k, t_k+1] into the evaluators of the formulation (`element::input_value`).
pub fn sample_element_inputs(model: &Model, st: &State, ws: &mut Workspace) {
    if model.elements.is_empty() {
        return;
    }
    let (t0, t1) = (st.t_s, st.t_s + model.solver.step_s);
    ws.ev.set_element_inputs(model, t0, t1);
    ws.evd.set_element_inputs(model, t0, t1);
    for ev_u in [&mut ws.global.ev.element_u, &mut ws.global.evd.element_u] {
        for (u, e) in ev_u.iter_mut().zip(model.elements.iter()) {
            *u = crate::element::input_value(model, e, t0, t1);
        }
    }
}

/// Advances `st` by one step. On error `st` is left at the last converged step.
pub fn step(model: &Model, st: &mut State, ws: &mut Workspace) -> Result<StepReport, StepError> {
    check_state(model, st)?;
    sample_element_inputs(model, st, ws);
    let report = match model.solver.formulation {
        Formulation::Penalty => penalty::step(model, st, ws),
        Formulation::DoubleStep => double_step::step(model, st, ws),
        Formulation::GlobalAli3p => global::ali3p::step(model, st, ws),
        Formulation::GlobalI1al => global::i1al::step(model, st, ws),
        Formulation::KinematicGuidance => kinematic_guidance::step(model, st, ws),
        Formulation::Multirate => multirate::step(model, st, ws),
    }?;
    // stage `elements`: element outputs and energy accounts at the committed state
    crate::element::commit(model, st, &mut ws.element_kin, &mut ws.element_values, true);
    Ok(report)
}

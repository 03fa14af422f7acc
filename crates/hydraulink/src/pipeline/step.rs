//! THE step: one Δt of the selected formulation, top-down:
//!
//! 1. `check_state`: NaN/Inf in the state is an error, never a reset;
//! 2. `sample_inputs`: (u(t_k), u(t_k+1)) of every input into the state (a value set from
//!    outside, or the signal), then `sample_element_inputs` into the evaluators;
//! 3. the formulation (`formulation::Stepper`, dispatched through the closed enum
//!    `workspace::FormulationWorkspace`): its stage `initialize` (its own state from the
//!    relative one, at the first step), then its step (see `mechanics::semirecursive::penalty`
//!    for the reference one): advance valves (every element's valve position at t_k+1 by its
//!    own `Element::advance_position`, `hydraulics::advance_positions`) → history and
//!    predictor → the one Newton solver
//!    (`integrator::newton`: residual of every element through its ports, exact tangent,
//!    solve, λ update) → projections → end stops and commit;
//! 4. stage `elements` (`element::commit`): element outputs and energy accounts at the
//!    committed state;
//! 5. stage `world` (`terrain::world::advance`, with a `[terrain]` only): the terrain and
//!    the buckets' payloads at the step boundary, and the records the buckets read frozen over
//!    the next step;
//! 6. `sample_inputs` again, so a state read between steps holds its next step's inputs.

use crate::formulations::kinematic_guidance::KinematicGuidance;
use crate::formulations::multirate::Multirate;
use crate::formulations::Stepper;
use crate::formulations::{ali3p::Ali3p, i1al::I1al};
use crate::formulations::{double_step::DoubleStep, penalty::Penalty};
use crate::model::inputs;
use crate::model::Model;
use crate::pipeline::buffers::Buffers;
use crate::pipeline::workspace::{FormulationWorkspace, Workspace};
use crate::state::State;
use crate::{StepError, StepReport};

/// Rejects NaN/Inf in the state before a step (an error, never a reset), naming the entry by
/// its layout name (`model::layout`).
pub fn check_state(model: &Model, st: &State) -> Result<(), StepError> {
    let bad = |label: &str| StepError::NonFinite {
        time_s: st.t_s,
        step: st.step,
        equation: label.to_string(),
    };
    let (l, finite) = (&model.layout, |v: &[f64]| v.iter().all(|x| x.is_finite()));
    let names = |r: &std::ops::Range<usize>| &l.names[r.clone()];
    for (i, name) in names(&l.z).iter().enumerate() {
        if !finite(&[st.z[i], st.zd[i], st.zdd[i]]) {
            return Err(bad(name));
        }
    }
    for (v, name) in names(&l.p).iter().enumerate() {
        if !finite(&[st.p[v], st.pd[v], st.pdd[v]]) {
            return Err(bad(name));
        }
    }
    for (s, name) in st.spool.iter().zip(&l.spools) {
        if !s.is_finite() {
            return Err(bad(name));
        }
    }
    for (o, name) in names(&l.w).iter().enumerate() {
        if !finite(&[st.friction[o], st.friction_rate[o]]) {
            return Err(bad(name));
        }
    }
    for (o, name) in names(&l.internal).iter().enumerate() {
        if !finite(&[st.internal[o], st.internal_rate[o]]) {
            return Err(bad(name));
        }
    }
    for (lambda, name) in st.lambda.iter().zip(&l.multipliers) {
        if !lambda.is_finite() {
            return Err(bad(name));
        }
    }
    // `Simulation::set_input` rejects these; a state built by hand may still carry one
    for (i, name) in model.input_names.iter().enumerate() {
        if st.inputs.overrides[i].is_some_and(|v| !v.is_finite()) {
            return Err(bad(name));
        }
    }
    Ok(())
}

/// Stage `sample inputs`: writes (u(t_k), u(t_k+1)) of every input into `st.inputs` for the
/// step from t_k = `st.t_s` (an override held on the whole step, piecewise-constant signals in
/// their interval form). The formulations read this pair. Allocates nothing.
pub fn sample_inputs(model: &Model, st: &mut State) {
    let t0 = st.t_s;
    inputs::sample(&model.inputs, t0, t0 + model.solver.step_s, &mut st.inputs);
}

/// Stage `sample element inputs`: the value of every element's driving input at t_k+1 (the
/// end point of the trapezoidal residual, `inputs::element_inputs`) into the evaluators of the
/// formulation.
pub fn sample_element_inputs(model: &Model, st: &State, ws: &mut Workspace) {
    if model.elements.is_empty() {
        return;
    }
    ws.ev.set_element_inputs(model, &st.inputs);
    ws.evd.set_element_inputs(model, &st.inputs);
    if let Some(w) = &st.world {
        ws.ev.set_element_frozen(w);
        ws.evd.set_element_frozen(w);
    }
    if let Some(g) = ws.global_mut() {
        for ev_u in [&mut g.ev.element_u, &mut g.evd.element_u] {
            crate::model::inputs::element_inputs(&model.element_input, &st.inputs, ev_u);
        }
    }
}

/// Stage `formulation`: the formulation's `initialize` (its own state, at the first step), then
/// its step.
fn formulation_step<F: Stepper>(
    model: &Model,
    st: &mut State,
    ws: &mut Buffers,
    own: &mut F::Workspace,
) -> Result<StepReport, StepError> {
    F::initialize(model, st, ws, own);
    F::step(model, st, ws, own)
}

/// Advances `st` by one step. On error `st` is left at the last converged step.
pub fn step(model: &Model, st: &mut State, ws: &mut Workspace) -> Result<StepReport, StepError> {
    check_state(model, st)?;
    sample_inputs(model, st);
    sample_element_inputs(model, st, ws);
    let Workspace {
        buffers,
        formulation,
    } = ws;
    let report = match formulation {
        FormulationWorkspace::Penalty(w) => formulation_step::<Penalty>(model, st, buffers, w),
        FormulationWorkspace::DoubleStep(w) => {
            formulation_step::<DoubleStep>(model, st, buffers, w)
        }
        FormulationWorkspace::GlobalAli3p(w) => formulation_step::<Ali3p>(model, st, buffers, w),
        FormulationWorkspace::GlobalI1al(w) => formulation_step::<I1al>(model, st, buffers, w),
        FormulationWorkspace::KinematicGuidance(w) => {
            formulation_step::<KinematicGuidance>(model, st, buffers, w)
        }
        FormulationWorkspace::Multirate(w) => formulation_step::<Multirate>(model, st, buffers, w),
    }?;
    // stage `elements`: element outputs and energy accounts at the committed state, with the
    // input values of the step just taken
    let b = &mut ws.buffers;
    crate::pipeline::element_energy::commit(
        model,
        st,
        &mut b.element_kin,
        &mut b.element_values,
        &b.ev.mechanical_elements,
        true,
    );
    // stage `world`: the terrain at the step boundary (cut, dump, avalanche, freeze), at the
    // kinematics the stage `elements` just computed
    if let Some(scratch) = b.world.as_mut() {
        crate::terrain::world::advance(model, st, &b.element_kin, scratch);
    }
    // the committed state carries the pair of its own next step, so that a state read between
    // steps (a formulation's `prepare` called by a test, a clone) is complete
    sample_inputs(model, st);
    Ok(report)
}

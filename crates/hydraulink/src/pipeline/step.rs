//! THE step: one Δt of the selected formulation, top-down:
//!
//! 1. `check_state`: NaN/Inf in the state is an error, never a reset;
//! 2. `sample_inputs`: (u(t_k), u(t_k+1)) of every input into the state (a value set from
//!    outside, or the signal), then `sample_element_inputs` into the evaluators;
//! 3. [`formulation_step`], the same for every formulation (`formulations::Stepper`,
//!    dispatched through the closed enum `workspace::FormulationWorkspace`, statically): its
//!    stage `initialize` (its own state from the relative one, at the first step) →
//!    [`restore_tangent`] → advance valves (every element's valve position at t_k+1 by its own
//!    `Element::advance_position`, `circuit::advance_positions`) → predict (history,
//!    predictor, λ⁰) → the one Newton solver (`solver::newton::solve` on the formulation's
//!    `NewtonProblem`: residual of every element through its ports, exact tangent, solve, λ
//!    update; in the formulation's attempts from the same predictor) → project → end stops
//!    → commit (its unknowns, then spools, actuator work and clock, energies, tangent);
//! 4. stage `elements` (`element::commit`): element outputs and energy accounts at the
//!    committed state;
//! 5. stage `world` (`pipeline::world::advance`, with a `[terrain]` only): the terrain and
//!    the buckets' payloads at the step boundary, and the records the buckets read frozen over
//!    the next step;
//! 6. `sample_inputs` again, so a state read between steps holds its next step's inputs.

use crate::circuit;
use crate::elements::inputs;
use crate::formulations::z_only::kinematic_guidance::KinematicGuidance;
use crate::formulations::z_only::multirate::Multirate;
use crate::formulations::Stepper;
use crate::formulations::{ali3p::Ali3p, i1al::I1al};
use crate::formulations::{double_step::DoubleStep, penalty::Penalty};
use crate::mechanics::advance;
use crate::mechanics::buffers::Buffers;
use crate::model::Model;
use crate::pipeline::workspace::{FormulationWorkspace, Workspace};
use crate::solver::newton;
use crate::state::State;
use crate::StepError;

pub use crate::state::StepReport;

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
    if model.elements().is_empty() {
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
            crate::elements::inputs::element_inputs(&model.element_input, &st.inputs, ev_u);
        }
    }
}

/// Stage `restore`: when the workspace does not hold the state's tangent (a fresh simulation
/// given a cloned state, or a step that failed after refreshing), the formulation's factors are
/// rebuilt from `State::tangent` (or dropped when the state carries none, or one of other
/// sizes), so the iterates depend on the state alone. The one tangent-restore policy of every
/// formulation; the formulation only loads and factors (`Stepper::load_tangent`).
pub fn restore_tangent<F: Stepper>(st: &State, ws: &mut Buffers, own: &mut F::Workspace) {
    let cache = &st.tangent;
    if !cache.needs_restore(ws.tangent_id) {
        return;
    }
    ws.tangent_id = cache.id;
    ws.tangent_valid = false;
    if cache.id == 0 {
        return;
    }
    if let Some(factored) = F::load_tangent(ws, own, &cache.matrix, &cache.side) {
        ws.counters.factorizations += 1;
        ws.tangent_valid = factored;
    }
}

/// Stage `formulation`: one step Δt of formulation `F`, top-down. On error `st` is left at the
/// last converged step (except for the one-time filling of the formulation's own state).
pub fn formulation_step<F: Stepper>(
    model: &Model,
    st: &mut State,
    ws: &mut Buffers,
    own: &mut F::Workspace,
) -> Result<StepReport, StepError> {
    let dt = model.solver.step_s;
    // its own state from the relative one (the first step)
    F::initialize(model, st, ws, own);
    F::available(model, own)?;
    // restore → advance valves → predict
    restore_tangent::<F>(st, ws, own);
    circuit::advance_positions(model, st, dt, &mut ws.spool_new);
    F::predict(model, st, ws, own);
    // Newton → project; predicted anew and solved again when the formulation asks
    let iterations = loop {
        match newton_and_project::<F>(model, st, ws, own) {
            Ok(iterations) => break iterations,
            Err(failure) if F::retry(model, st, ws, own, &failure) => {}
            Err(failure) => return Err(F::error(model, st, failure)),
        }
    };
    // end stops
    advance::check_stroke(model, st, &ws.ev.motion)?;
    // commit: the formulation's unknowns, the spools, the actuator work and the clock, the
    // energies, the tangent
    let mut report = StepReport {
        iterations,
        ..Default::default()
    };
    F::commit(model, st, ws, own, &mut report);
    st.spool.copy_from_slice(&ws.spool_new);
    advance::work_and_clock(st, &ws.ev.cylinder_force, &ws.ev.motion, dt);
    F::energies(model, st, ws, own, &mut report);
    st.tangent.commit(ws.tangent_id, &ws.tangent_pending);
    Ok(report)
}

/// The one Newton (`solver::newton::solve`) on the formulation's problem, in its attempts from
/// the same predictor (`Stepper::policy`), then its projection. Returns the iterations of the
/// accepted solve.
fn newton_and_project<F: Stepper>(
    model: &Model,
    st: &State,
    ws: &mut Buffers,
    own: &mut F::Workspace,
) -> Result<u32, F::Failure> {
    let mut attempt = 0;
    let iterations = loop {
        let policy = F::policy(model, attempt).expect("a formulation has a first attempt");
        if attempt > 0 {
            F::restart(ws, own);
        }
        let problem = &mut F::problem(model, st, ws, own);
        match newton::solve(problem, policy, model.solver.max_iterations) {
            Ok(iterations) => break iterations,
            Err(e) if F::policy(model, attempt + 1).is_none() => return Err(e),
            Err(_) => attempt += 1,
        }
    };
    F::project(model, st, ws, own, iterations)?;
    Ok(iterations)
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
        crate::pipeline::world::advance(model, st, &b.element_kin, scratch);
    }
    // the committed state carries the pair of its own next step, so that a state read between
    // steps (a formulation's `prepare` called by a test, a clone) is complete
    sample_inputs(model, st);
    Ok(report)
}

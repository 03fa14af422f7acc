//! Stage `elements` (after the commit): every element evaluated at the committed state, its
//! port state and efforts kept for the outputs ([`ElementValues`]) and its energy account in the
//! state ([`crate::state::ElementEnergy`]).

use crate::circuit::node_port_state;
use crate::elements::component::Component;
use crate::elements::component::ElementValues;
use crate::elements::element::{Element, EnergyDomain, MechPort, PortEffort, PortState, Power};
use crate::mechanics::kinematics::Kinematics;
use crate::mechanics::ports::{load_rate, Line};
use crate::model::Model;
use crate::state::{ElementEnergy, State};

/// Stage `elements` (after the commit): every element evaluated at the committed state
/// (z, ż, p) of `st` with the relative-coordinate kinematics `kin` (positions and velocities
/// are computed here), its port state and efforts into `values` (for the outputs) and its
/// energy account into `st.elements`: the stored energy, and the dissipated and supplied
/// energies by the trapezoidal rule over [t − Δt, t] when `integrate` (else only the powers at
/// t: the initial state). `mechanical`: the indices of the elements with a mechanical port, in
/// model order (the evaluator's list, `Evaluator::mechanical_elements`), which are the
/// elements visited at every step unless `solver.hydraulic_element_energy` asks for all
/// (`Model::element_every_step`).
pub fn commit(
    model: &Model,
    st: &mut State,
    kin: &mut Kinematics<f64>,
    values: &mut ElementValues,
    mechanical: &[usize],
    integrate: bool,
) {
    if !kinematics(model, st, kin) {
        return;
    }
    let dt = model.solver.step_s;
    let mut visit = |i: usize| {
        // after a step: u(t_k+1) of the step just taken; the initial state: u(t_0)
        let u = |k: usize| {
            let (u0, u1) = st.inputs.step_values(k);
            if integrate {
                u1
            } else {
                u0
            }
        };
        let (at, effort, p) = evaluate(model, st, kin, i, u, false);
        let t_s = st.t_s;
        let acc = &mut st.elements;
        if integrate {
            acc.dissipated_j[i] += 0.5 * dt * (acc.dissipated_w[i] + p.dissipated_w);
            acc.supplied_j[i] += 0.5 * dt * (acc.supplied_w[i] + p.supplied_w);
        } else {
            acc.stored0_j[i] = p.stored_j;
        }
        acc.stored_j[i] = p.stored_j;
        // a contact's hit counter, from its total normal force (`contact::hits`)
        if let Some(gap) = model.elements()[i].hit_gap_s() {
            if integrate {
                acc.hits[i].advance(t_s, effort.force, gap);
            } else {
                acc.hits[i] = crate::contact::hits::HitCounter::start(effort.force);
            }
        }
        acc.dissipated_w[i] = p.dissipated_w;
        acc.supplied_w[i] = p.supplied_w;
        values.at[i] = at;
        values.effort[i] = effort;
    };
    if model.solver.hydraulic_element_energy {
        (0..model.elements().len()).for_each(&mut visit);
    } else {
        // the elements evaluated at every step are the mechanical ones: the precomputed list,
        // so that the hydraulic elements (the many valves and pumps) cost nothing here
        debug_assert!((0..model.elements().len())
            .all(|i| model.element_every_step[i] == mechanical.contains(&i)));
        mechanical.iter().copied().for_each(&mut visit);
    }
}

/// The element outputs of the stage `elements` at the state `st` without touching its energy
/// accounts: the marker positions in `kin` and every per-step element's port state and efforts
/// in `values`, each element with the input value the state's last step used at its end
/// (`InputValues::u_used`, the value [`commit`] used). What `Simulation::set_state` calls, so
/// that the output row of a restored state is the one it had when it was current, bit for bit.
/// `mechanical`: as for [`commit`].
pub fn refresh(
    model: &Model,
    st: &State,
    kin: &mut Kinematics<f64>,
    values: &mut ElementValues,
    mechanical: &[usize],
) {
    if !kinematics(model, st, kin) {
        return;
    }
    let mut visit = |i: usize| {
        let (at, effort, _) = evaluate(model, st, kin, i, |k| st.inputs.u_used[k], true);
        values.at[i] = at;
        values.effort[i] = effort;
    };
    if model.solver.hydraulic_element_energy {
        (0..model.elements().len()).for_each(&mut visit);
    } else {
        mechanical.iter().copied().for_each(&mut visit);
    }
}

/// The kinematics the stage `elements` needs at the state `st` into `kin`: positions for the
/// mechanical elements and the output markers (`Model::output_markers`), velocities for the
/// mechanical elements. False when nothing is evaluated at every step
/// (`Model::element_every_step`, no markers): the stage has nothing to do.
fn kinematics(model: &Model, st: &State, kin: &mut Kinematics<f64>) -> bool {
    // the positions of the output markers (`Model::output_markers`) read `kin`
    let markers = !model.output_markers.is_empty();
    if !(model.has_mechanical_elements
        || markers
        || (model.solver.hydraulic_element_energy && !model.elements().is_empty()))
    {
        return false;
    }
    if model.has_mechanical_elements || markers {
        kin.positions(model, &st.z);
    }
    if model.has_mechanical_elements {
        kin.velocities(model, &st.zd);
    }
    true
}

/// Element `i` evaluated at the state `st` (kinematics in `kin`): its port state, efforts and
/// powers. `u(k)`: the value of input k it is driven with; `used`: a body-port element reads the
/// world values of the step that produced `st` (else those of its next step,
/// `crate::pipeline::world::frozen_of`; the stage `elements` runs before the stage `world`
/// rewrites them, so at a commit both are the step's).
fn evaluate(
    model: &Model,
    st: &State,
    kin: &Kinematics<f64>,
    i: usize,
    u: impl Fn(usize) -> f64,
    used: bool,
) -> (PortState<f64>, PortEffort<f64>, Power) {
    let e = &model.elements()[i];
    let ports = e.ports();
    let mut at = node_port_state(model, &st.p, &ports.nodes);
    at.u = ports.input.map_or(1.0, u);
    // the valve position it reads (`Layout::element_reads`)
    if let Some(slot) = model.layout.element_reads[i] {
        at.position = st.spool[slot];
    }
    // the element's internal states e (`Layout::element_states`)
    let r = &model.layout.element_states[i];
    let e0 = model.layout.internal.start;
    at.internal[..r.len()].copy_from_slice(&st.internal[r.start - e0..r.end - e0]);
    match ports.mech {
        MechPort::None => {}
        MechPort::Joint(a) => {
            at.s = st.z[a.0];
            at.sd = st.zd[a.0];
        }
        MechPort::Line { base, rod } => {
            let line = Line::at(kin, &base, &rod);
            at.s = line.s;
            at.sd = line.rate(kin, &base, &rod);
        }
        MechPort::Point { .. } | MechPort::Torque { .. } => {}
        MechPort::Body(frame) => {
            // a contact: its depth, rate and force come with its pose, and it brings its own
            // account (`BodyEffort::power`)
            let none = [0.0; crate::elements::element::MAX_FROZEN];
            let frozen = crate::pipeline::world::frozen_of(st, i, used).unwrap_or(&none);
            let pose = crate::mechanics::ports::body_pose(kin, frame);
            let b = e.evaluate_body_in(&pose, at.u, frozen);
            // its whole port state: a body port has no node ports, so a digging bucket's
            // pressure slots carry its world values (`elements::bucket_dig`)
            let u = at.u;
            at = b.at;
            at.u = u;
            return (at, b.effort, b.power);
        }
    }
    let effort = e.evaluate(&at);
    if matches!(ports.mech, MechPort::Point { .. } | MechPort::Torque { .. }) {
        at.sd = load_rate(kin, e, &effort);
    }
    let p = e.power(&at, &effort);
    (at, effort, p)
}

/// The port state of element `i`, a hydraulic element (no mechanical port), at the state `st`:
/// its node pressures, valve position and internal states, and its input at the state's time
/// (the first value of the pair `st.inputs` holds between steps). What an output row evaluates
/// for the elements that `commit` does not visit at every step (`Model::element_every_step`).
pub fn hydraulic_port_state(
    model: &Model,
    st: &State,
    i: usize,
) -> crate::elements::element::PortState<f64> {
    let e = &model.elements()[i];
    let ports = e.ports();
    debug_assert!(matches!(ports.mech, MechPort::None));
    let mut at = node_port_state(model, &st.p, &ports.nodes);
    if let Some(k) = ports.input {
        at.u = st.inputs.step_values(k).0;
    }
    if let Some(slot) = model.layout.element_reads[i] {
        at.position = st.spool[slot];
    }
    let r = &model.layout.element_states[i];
    let e0 = model.layout.internal.start;
    at.internal[..r.len()].copy_from_slice(&st.internal[r.start - e0..r.end - e0]);
    at
}

/// The elements' share of the mechanical energy drift [J]:
/// Σ (E_stored − E_stored(0) − W_supplied + D) over the mechanical elements.
pub fn mechanical_drift_j(acc: &ElementEnergy, elements: &[Component]) -> f64 {
    let mut d = 0.0;
    for (i, e) in elements.iter().enumerate() {
        if e.domain() == EnergyDomain::Mechanical {
            d += acc.stored_j[i] - acc.stored0_j[i] - acc.supplied_j[i] + acc.dissipated_j[i];
        }
    }
    d
}

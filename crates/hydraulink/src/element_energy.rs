//! Stage `elements` (after the commit): every element evaluated at the committed state, its
//! port state and efforts kept for the outputs ([`ElementValues`]) and its energy account in the
//! state ([`crate::component::ElementEnergy`]).

use crate::component::ElementValues;
use crate::element::{Element, MechPort};
use crate::hydraulics::node_port_state;
use crate::mechanics::kinematics::Kinematics;
use crate::mechanics::ports::{load_rate, Line};
use crate::model::Model;
use crate::state::State;

/// Stage `elements` (after the commit): every element evaluated at the committed state
/// (z, ż, p) of `st` with the relative-coordinate kinematics `kin` (positions and velocities
/// are computed here), its port state and efforts into `values` (for the outputs) and its
/// energy account into `st.elements`: the stored energy, and the dissipated and supplied
/// energies by the trapezoidal rule over [t − Δt, t] when `integrate` (else only the powers at
/// t: the initial state).
pub fn commit(
    model: &Model,
    st: &mut State,
    kin: &mut Kinematics<f64>,
    values: &mut ElementValues,
    integrate: bool,
) {
    // the positions of the output markers (`Model::output_markers`) read `kin`
    let markers = !model.output_markers.is_empty();
    // nothing to evaluate at every step (`Model::element_every_step`)
    if !(model.has_mechanical_elements
        || markers
        || (model.solver.hydraulic_element_energy && !model.elements.is_empty()))
    {
        return;
    }
    let dt = model.solver.step_s;
    if model.has_mechanical_elements || markers {
        kin.positions(model, &st.z);
    }
    if model.has_mechanical_elements {
        kin.velocities(model, &st.zd);
    }
    for (i, e) in model.elements.iter().enumerate() {
        if !model.element_every_step[i] {
            // a hydraulic element without per-step accounts: evaluated by the output rows
            // (`hydraulic_port_state`)
            continue;
        }
        let ports = e.ports();
        // after a step: u(t_k+1) of the step just taken; the initial state: u(t_0)
        let u = match ports.input {
            Some(k) if !integrate => st.inputs.step_values(k).0,
            Some(k) => st.inputs.step_values(k).1,
            None => 1.0,
        };
        let mut at = node_port_state(model, &st.p, &ports.nodes);
        at.u = u;
        // its valve position (`Layout::element_position`)
        if let Some(slot) = model.layout.element_position[i] {
            at.position = st.spool[slot];
        }
        // the element's internal states e (`Layout::element_states`)
        let r = &model.layout.element_states[i];
        let e0 = model.layout.internal.start;
        at.internal[..r.len()].copy_from_slice(&st.internal[r.start - e0..r.end - e0]);
        let mut body_effort = None;
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
                // a contact: its depth, rate and force come with its pose
                let b = e.evaluate_body(&crate::mechanics::ports::body_pose(kin, frame), u);
                at.s = b.at.s;
                at.sd = b.at.sd;
                body_effort = Some((b.effort, b.power));
            }
        }
        // a body port brings its own account (`BodyEffort::power`)
        let (effort, p) = match body_effort {
            Some(x) => x,
            None => {
                let effort = e.evaluate(&at);
                (effort, e.power(&at, &effort))
            }
        };
        let p = if matches!(ports.mech, MechPort::Point { .. } | MechPort::Torque { .. }) {
            at.sd = load_rate(kin, e, &effort);
            e.power(&at, &effort)
        } else {
            p
        };
        let acc = &mut st.elements;
        if integrate {
            acc.dissipated_j[i] += 0.5 * dt * (acc.dissipated_w[i] + p.dissipated_w);
            acc.supplied_j[i] += 0.5 * dt * (acc.supplied_w[i] + p.supplied_w);
        } else {
            acc.stored0_j[i] = p.stored_j;
        }
        acc.stored_j[i] = p.stored_j;
        acc.dissipated_w[i] = p.dissipated_w;
        acc.supplied_w[i] = p.supplied_w;
        values.at[i] = at;
        values.effort[i] = effort;
    }
}

/// The port state of element `i`, a hydraulic element (no mechanical port), at the state `st`:
/// its node pressures, valve position and internal states, and its input at the state's time
/// (the first value of the pair `st.inputs` holds between steps). What an output row evaluates
/// for the elements that `commit` does not visit at every step (`Model::element_every_step`).
pub fn hydraulic_port_state(model: &Model, st: &State, i: usize) -> crate::element::PortState<f64> {
    let e = &model.elements[i];
    let ports = e.ports();
    debug_assert!(matches!(ports.mech, MechPort::None));
    let mut at = node_port_state(model, &st.p, &ports.nodes);
    if let Some(k) = ports.input {
        at.u = st.inputs.step_values(k).0;
    }
    if let Some(slot) = model.layout.element_position[i] {
        at.position = st.spool[slot];
    }
    let r = &model.layout.element_states[i];
    let e0 = model.layout.internal.start;
    at.internal[..r.len()].copy_from_slice(&st.internal[r.start - e0..r.end - e0]);
    at
}

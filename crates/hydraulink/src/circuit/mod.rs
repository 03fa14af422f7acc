//! The hydraulic circuit: a graph whose nodes are lumped volumes (pressure states) or
//! constant-pressure sources, and whose edges are components (lumped fluid theory, 000 §3).
//!
//! ```text
//! ṗ_k = (B_e,k / V_k) (Σ Q_in − V̇_k)          (000 eqs. 22, 44)
//! ```
//! Chamber volumes, and so V_k, V̇_k and B_e,k, follow from the cylinder strokes.
//!
//! The circuit over the compiled [`crate::Model`]: node pressures, every hydraulic element's
//! flows through [`add_flows`], the volumes' pressure rates ([`volume`]) and the algebraic
//! volumes ([`reduced`]), and the hydraulic integrator of the multi-rate formulation and the
//! hydraulic subsystem ([`substeps`]). The hydraulic element laws are
//! `crate::elements::hydraulics`, below the model; this module reads the model that holds them,
//! beside the mechanics (`crate::mechanics`).

pub mod reduced;
pub mod substeps;
pub mod volume;

use crate::elements::element::{Element, MechPort, PortState, MAX_NODES};
use crate::elements::ids::AxisId;
use crate::model::{Model, Node, VolumeId};
use crate::solver::real::Real;

use crate::elements::hydraulics::CylinderMotion;

/// Pressure at a node [Pa].
#[inline]
pub fn node_pressure<S: Real>(model: &Model, p: &[S], n: Node) -> S {
    match n {
        Node::Volume(v) => p[v.0],
        Node::Source(i) => S::from(model.hydraulics.sources[i].pressure_pa),
    }
}

/// A shaft port: an element with node ports and a joint port (a hydraulic motor). Its flow
/// reads the joint's coordinate and rate, and its effort (a torque) acts on the joint. It is the
/// rotary counterpart of a cylinder's line port where the hydraulics and the mechanics are
/// stepped apart (`pipeline::subsystem`, `formulations::z_only::multirate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shaft {
    /// Index in `Model::elements()`.
    pub element: usize,
    /// The joint coordinate it drives (an index of z).
    pub axis: AxisId,
}

/// The shaft ports of `model`, in element order.
pub fn shafts(model: &Model) -> Vec<Shaft> {
    model
        .elements()
        .iter()
        .enumerate()
        .filter_map(|(element, e)| match e.ports().mech {
            MechPort::Joint(axis) if e.ports().nodes[0].is_some() => Some(Shaft { element, axis }),
            _ => None,
        })
        .collect()
}

/// A drive port: an element driven through a shaft (a pump, `Element::is_driven`) whose speed
/// ω, its valve position, an engine gives where the hydraulics is stepped alone
/// (`pipeline::subsystem::hydraulic`), and which takes back the torque `Element::drive_torque`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drive {
    /// Index in `Model::elements()`.
    pub element: usize,
    /// Its position's slot in `State::spool` (`Layout::element_position`): the speed ω [rad/s].
    pub slot: usize,
}

/// The drive ports of `model`, in element order.
pub fn drives(model: &Model) -> Vec<Drive> {
    model
        .elements()
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_driven())
        .filter_map(|(element, _)| {
            model.layout.element_position[element].map(|slot| Drive { element, slot })
        })
        .collect()
}

/// Net component flow into every volume [m³/s]: the sum of the node-port flows of every
/// element of `model.elements()` with node ports (valves, throttles, relief and check valves,
/// accumulators), in element order, in one loop shape ([`add_flows`]). `spools` holds the valve
/// positions (`State::spool`, element by element: `Layout::element_position`).
pub fn component_flows<S: Real>(model: &Model, p: &[S], spools: &[f64], q: &mut [S]) {
    component_flows_with(model, p, spools, &[], &mut [], q);
}

/// [`component_flows`] with the internal states e of the elements (`Layout::internal`, in its
/// order; `internal` empty: each element at its steady internal state,
/// `Element::steady_internal`) and their rates ė = g(e, ports) into `rates` (when not empty).
/// An element with a joint port too (a hydraulic motor) sees its joint at rest here; the
/// evaluator passes the joint's state through [`component_flows_coupled`].
pub fn component_flows_with<S: Real>(
    model: &Model,
    p: &[S],
    spools: &[f64],
    internal: &[S],
    rates: &mut [S],
    q: &mut [S],
) {
    component_flows_coupled(model, p, spools, internal, &[], rates, q);
}

/// [`component_flows_with`] where `mech` (element order; empty: joints at rest) holds the port
/// states of the mechanical elements at the same evaluation (`Evaluator::element_at`): an
/// element with node ports and a joint port (a hydraulic motor) reads its joint coordinate and
/// rate from it, so its flow is dual in the coordinate columns of the tangent.
pub fn component_flows_coupled<S: Real>(
    model: &Model,
    p: &[S],
    spools: &[f64],
    internal: &[S],
    mech: &[PortState<S>],
    rates: &mut [S],
    q: &mut [S],
) {
    for x in q.iter_mut() {
        *x = S::zero();
    }
    let layout = &model.layout;
    if layout.element_states.len() == model.elements().len() {
        // the layout's list of the elements with node ports (`Layout::node_ports`)
        // one match per element, the body monomorphized per kind (`element_flows`)
        for np in &layout.node_ports {
            crate::elements::component::dispatch!(&model.elements()[np.element], e => {
                element_flows(model, p, spools, internal, mech, rates, q, e, np)
            });
        }
        return;
    }
    // the layout not built yet (a model being compiled): the same list, made here, without
    // internal states (their slots come with the layout)
    // (the slot of element j's position: the positions before it)
    let slot_of = |j: usize| {
        (model.elements()[j].n_position() > 0).then(|| {
            model.elements()[..j]
                .iter()
                .filter(|e| e.n_position() > 0)
                .count()
        })
    };
    for (i, e) in model.elements().iter().enumerate() {
        let nodes = e.ports().nodes;
        if nodes[0].is_none() {
            continue;
        }
        let position = slot_of(i);
        let np = crate::model::layout::NodePorts {
            element: i,
            nodes,
            position,
            reads: e.reads_position_of().map_or(position, slot_of),
            internal: 0..0,
        };
        crate::elements::component::dispatch!(e, x => {
            element_flows(model, p, spools, internal, mech, rates, q, x, &np)
        });
    }
}

/// Stage `advance valves`: every valve position (`State::spool`) at t_k+1 into `out`, by each
/// element's own law (`Element::advance_position`) from the state `st` at t_k, its trim
/// (`State::trim`) and its input pair (u(t_k), u(t_k+1)) sampled for the step over `dt` [s].
pub fn advance_positions(model: &Model, st: &crate::State, dt: f64, out: &mut [f64]) {
    // the elements with a position are those of `Layout::node_ports` with a slot (a valve has
    // node ports); one match per element, the law monomorphized per kind
    for np in &model.layout.node_ports {
        let Some(slot) = np.position else { continue };
        let (u0, u1) = match model.element_input[np.element] {
            Some(k) => st.inputs.step_values(k),
            None => (1.0, 1.0),
        };
        crate::elements::component::dispatch!(&model.elements()[np.element], e => {
            out[slot] = e.advance_position(st.spool[slot], st.trim[slot], u0, u1, dt);
        });
    }
}

/// The flows of one element with node ports into `q`, and the rates of its internal states
/// into `rates` (see [`component_flows_with`]); generic over the element type so that its law
/// inlines here.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn element_flows<S: Real, E: Element>(
    model: &Model,
    p: &[S],
    spools: &[f64],
    internal: &[S],
    mech: &[PortState<S>],
    rates: &mut [S],
    q: &mut [S],
    e: &E,
    np: &crate::model::layout::NodePorts,
) {
    let mut at = node_port_state(model, p, &np.nodes);
    if let Some(slot) = np.reads {
        at.position = spools[slot];
    }
    // a joint port too (a hydraulic motor): its coordinate and rate at this evaluation
    if !mech.is_empty() && matches!(e.ports().mech, MechPort::Joint(_)) {
        at.s = mech[np.element].s;
        at.sd = mech[np.element].sd;
    }
    let k = np.internal.len();
    if k > 0 {
        // an element with internal states: e in, ė out (`Element::n_internal`)
        if internal.is_empty() {
            let mut steady = at.internal;
            e.steady_internal(&at, &mut steady);
            at.internal = steady;
        } else {
            at.internal[..k].copy_from_slice(&internal[np.internal.clone()]);
        }
    }
    let effort = e.evaluate(&at);
    if k > 0 && !rates.is_empty() {
        rates[np.internal.clone()].copy_from_slice(&effort.internal_rate[..k]);
    }
    for (n, f) in np.nodes.iter().zip(effort.flow.iter()) {
        if let Some(Node::Volume(v)) = n {
            q[v.0] += *f;
        }
    }
}

/// Steady internal states (`Element::steady_internal`) of every element with internal states at
/// the pressures `p` into `out` (`Layout::internal` order): the initial e at t = 0, and the
/// internal states of a static equilibrium (`linearize::equilibrium`, dual in p).
pub fn steady_internal_states<S: Real>(model: &Model, p: &[S], positions: &[f64], out: &mut [S]) {
    let e0 = model.layout.internal.start;
    for ((e, r), slot) in model
        .elements()
        .iter()
        .zip(model.layout.element_states.iter())
        .zip(model.layout.element_reads.iter())
    {
        if r.is_empty() {
            continue;
        }
        let mut at = node_port_state(model, p, &e.ports().nodes);
        // the element's valve position (a pump's shaft speed), 0 without one
        at.position = slot.map_or(0.0, |k| positions[k]);
        let mut steady = at.internal;
        e.steady_internal(&at, &mut steady);
        out[r.start - e0..r.end - e0].copy_from_slice(&steady[..r.len()]);
    }
}

/// Adds the flows of element `e` at valve position `position` into the volumes of its node
/// ports, `q` [m³/s] (flows into sources are dropped: their pressure is fixed).
#[inline]
pub fn add_flows<S: Real, E: Element>(model: &Model, p: &[S], e: &E, position: f64, q: &mut [S]) {
    let ports = e.ports();
    let mut at = node_port_state(model, p, &ports.nodes);
    at.position = position;
    let effort = e.evaluate(&at);
    for (n, f) in ports.nodes.iter().zip(effort.flow.iter()) {
        if let Some(Node::Volume(v)) = n {
            q[v.0] += *f;
        }
    }
}

/// The port state of an element's node ports: their pressures [Pa] (0 in unused slots).
#[inline]
pub fn node_port_state<S: Real>(
    model: &Model,
    p: &[S],
    nodes: &[Option<Node>; MAX_NODES],
) -> PortState<S> {
    let mut at = PortState::zero();
    for (pi, n) in at.p.iter_mut().zip(nodes.iter()) {
        if let Some(n) = n {
            *pi = node_pressure(model, p, *n);
        }
    }
    at
}

/// Extra compliance ∂V/∂p of the elements on volume `v` (accumulators) [m³/Pa].
#[inline]
pub fn element_compliance<S: Real>(model: &Model, p: &[S], v: usize) -> S {
    let mut c = S::zero();
    for e in model.elements() {
        let ports = e.ports();
        if !ports.nodes.contains(&Some(Node::Volume(VolumeId(v)))) {
            continue;
        }
        let effort = e.evaluate(&node_port_state(model, p, &ports.nodes));
        for (n, ci) in ports.nodes.iter().zip(effort.compliance.iter()) {
            if *n == Some(Node::Volume(VolumeId(v))) {
                c += *ci;
            }
        }
    }
    c
}

/// Pressure rates h(p, s, ṡ) = ṗ [Pa/s] of every volume. `q` is scratch of length n_volumes.
pub fn pressure_rates<S: Real>(
    model: &Model,
    p: &[S],
    motion: &[CylinderMotion<S>],
    spools: &[f64],
    q: &mut [S],
    pd: &mut [S],
) {
    pressure_rates_with(model, p, motion, spools, &[], &[], &mut [], q, pd);
}

/// [`pressure_rates`] with the elements' internal states e and their rates ė into `rates`, and
/// the port states `mech` of the mechanical elements ([`component_flows_coupled`]).
#[allow(clippy::too_many_arguments)]
pub fn pressure_rates_with<S: Real>(
    model: &Model,
    p: &[S],
    motion: &[CylinderMotion<S>],
    spools: &[f64],
    internal: &[S],
    mech: &[PortState<S>],
    rates: &mut [S],
    q: &mut [S],
    pd: &mut [S],
) {
    component_flows_coupled(model, p, spools, internal, mech, rates, q);
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        let extra = model
            .has_node_compliance
            .then(|| element_compliance(model, p, v));
        pd[v] = volume::pressure_rate(model, vol, VolumeId(v), motion, q[v], extra);
    }
}

//! The hydraulic circuit: a graph whose nodes are lumped volumes (pressure states) or
//! constant-pressure sources, and whose edges are components (lumped fluid theory, 000 §3).
//!
//! ```text
//! ṗ_k = (B_e,k / V_k) (Σ Q_in − V̇_k)          (000 eqs. 22, 44)
//! ```
//! Chamber volumes, and so V_k, V̇_k and B_e,k, follow from the cylinder strokes.

pub mod accumulator;
pub mod bridge_valve;
pub mod check_valve;
pub mod cylinder;
pub mod fluid;
pub mod orifice;
pub mod reduced;
pub mod relief_valve;
pub mod throttle;
pub mod valve_4_3;
pub mod volume;

use crate::model::{Model, Node, VolumeId};
use crate::real::Real;

pub use cylinder::CylinderMotion;

/// Pressure at a node [Pa].
#[inline]
pub fn node_pressure<S: Real>(model: &Model, p: &[S], n: Node) -> S {
    match n {
        Node::Volume(v) => p[v.0],
        Node::Source(i) => S::from(model.hydraulics.sources[i].pressure_pa),
    }
}

#[inline]
fn add_flow<S: Real>(q: &mut [S], n: Node, flow: S) {
    if let Node::Volume(v) = n {
        q[v.0] += flow;
    }
}

/// Net component flow into every volume [m³/s] (valves and throttles). `spools` holds the 4/3
/// valves' spool positions, then the bridge valves' openings κ.
pub fn component_flows<S: Real>(model: &Model, p: &[S], spools: &[f64], q: &mut [S]) {
    for x in q.iter_mut() {
        *x = S::zero();
    }
    let h = &model.hydraulics;
    for (i, v) in h.valves.iter().enumerate() {
        let f = valve_4_3::flows(
            v,
            spools[i],
            node_pressure(model, p, v.p),
            node_pressure(model, p, v.t),
            node_pressure(model, p, v.a),
            node_pressure(model, p, v.b),
        );
        add_flow(q, v.a, f.into_a);
        add_flow(q, v.b, f.into_b);
        add_flow(q, v.p, -f.out_of_p);
        add_flow(q, v.t, f.into_t);
    }
    let n43 = h.valves.len();
    for (i, v) in h.bridge_valves.iter().enumerate() {
        let [qa, qb, qp, qt] = bridge_valve::flows(
            v,
            spools[n43 + i],
            node_pressure(model, p, v.p),
            node_pressure(model, p, v.t),
            node_pressure(model, p, v.a),
            node_pressure(model, p, v.b),
        );
        add_flow(q, v.a, qa);
        add_flow(q, v.b, qb);
        add_flow(q, v.p, -qp);
        add_flow(q, v.t, qt);
    }
    for t in &h.throttles {
        let f = throttle::flow(
            t,
            node_pressure(model, p, t.from),
            node_pressure(model, p, t.to),
        );
        add_flow(q, t.from, -f);
        add_flow(q, t.to, f);
    }
    // elements with node ports (`crate::element`): relief and check valves, accumulators
    for e in &model.elements {
        let ports = e.ports();
        if ports.nodes[0].is_none() {
            continue;
        }
        let effort = e.evaluate(&node_port_state(model, p, &ports.nodes));
        for (n, f) in ports.nodes.iter().zip(effort.flow.iter()) {
            if let Some(n) = n {
                add_flow(q, *n, *f);
            }
        }
    }
}

/// The port state of an element's node ports: their pressures [Pa] (0 in unused slots).
#[inline]
pub fn node_port_state<S: Real>(
    model: &Model,
    p: &[S],
    nodes: &[Option<Node>; crate::element::MAX_NODES],
) -> crate::element::PortState<S> {
    let mut at = crate::element::PortState::zero();
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
    for e in &model.elements {
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
    component_flows(model, p, spools, q);
    for (v, vol) in model.hydraulics.volumes.iter().enumerate() {
        let extra = model
            .has_node_compliance
            .then(|| element_compliance(model, p, v));
        pd[v] = volume::pressure_rate(model, vol, VolumeId(v), motion, q[v], extra);
    }
}

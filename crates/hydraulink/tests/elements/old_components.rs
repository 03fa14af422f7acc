//! The throttle, the 4/3 valve and the bridge valve as elements (`Element` over node ports
//! P, T, A, B, the valve position in `PortState::position`): the element path gives the flows of
//! the laws it wraps, conserves mass, dissipates, names its state, and its dual-number slopes
//! agree with central differences.

use hydraulink::elements::element::{Element, PortState, MAX_NODES};
use hydraulink::elements::hydraulics::{bridge_valve, throttle, valve_4_3};
use hydraulink::model::{BridgeValve, Node, Throttle, VolumeId};
use num_dual::Dual64;

use super::{close, valve};

fn bridge() -> BridgeValve {
    BridgeValve {
        name: "BV".into(),
        p: Node::Source(0),
        t: Node::Source(1),
        a: Node::Volume(VolumeId(0)),
        b: Node::Volume(VolumeId(1)),
        flow_constant: 0.67 * 0.0005 * (2.0f64 / 850.0).sqrt(),
        laminar_dp_pa: 1e4,
        input: 0,
        input_range: bridge_valve::DEFAULT_BRIDGE_INPUT_RANGE,
        trim: None,
    }
}

fn thr() -> Throttle {
    Throttle {
        name: "T1".into(),
        from: Node::Volume(VolumeId(0)),
        to: Node::Volume(VolumeId(1)),
        flow_constant: 2e-8,
        laminar_dp_pa: 2e5,
    }
}

fn at<S: Copy>(p: [S; MAX_NODES], position: f64, zero: S) -> PortState<S> {
    PortState {
        p,
        s: zero,
        sd: zero,
        u: 1.0,
        position,
        internal: [zero; hydraulink::elements::element::MAX_INTERNAL],
    }
}

/// Pressure sets (P, T, A, B) [Pa] on every side of the valves' branches, every Δp off the kinks
/// (0, and the laminar transitions 1e4 and 2e5).
const PRESSURES: [[f64; 4]; 5] = [
    [7.6e6, 1e5, 3e6, 5e6],
    [7.6e6, 1e5, 8e6, 5e6],
    [7.6e6, 1e5, 3.3e6, 4.4e6],
    [2.2e5, 1e5, 1.5e5, 1.85e5],
    [7.6e6, 1e5, 1.2e5, 7.5e6],
];

/// Every port's flow slope ∂Q_i/∂p_j by duals and by central differences, off the kinks.
fn check_slopes<E: Element>(e: &E, p: [f64; 4], position: f64) {
    for j in 0..4 {
        let mut pd = p.map(Dual64::from);
        pd[j] = Dual64::new(p[j], 1.0);
        let dual = e.evaluate(&at(pd, position, Dual64::from(0.0))).flow;
        let h = 1.0;
        let (mut pp, mut pm) = (p, p);
        pp[j] += h;
        pm[j] -= h;
        let fp = e.evaluate(&at(pp, position, 0.0)).flow;
        let fm = e.evaluate(&at(pm, position, 0.0)).flow;
        for i in 0..4 {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            assert!(
                close(dual[i].eps, fd, 1e-12_f64.max(fd.abs())),
                "{} at {p:?}, U {position}: ∂Q{i}/∂p{j} {} vs {fd}",
                e.name(),
                dual[i].eps
            );
        }
    }
}

#[test]
fn valve_4_3_element_is_its_law() {
    let v = valve();
    for p in PRESSURES {
        for u in [-7.0, -0.3, 0.0, 0.4, 10.0] {
            let e = v.evaluate(&at(p, u, 0.0));
            let f = valve_4_3::flows(&v, u, p[0], p[1], p[2], p[3]);
            assert_eq!(e.flow, [-f.out_of_p, f.into_t, f.into_a, f.into_b]);
            assert!(e.flow.iter().sum::<f64>().abs() <= 1e-15 * f.out_of_p.abs().max(1e-9));
            assert!(v.power(&at(p, u, 0.0), &e).dissipated_w >= 0.0);
            check_slopes(&v, p, u);
        }
    }
}

#[test]
fn bridge_valve_element_is_its_law() {
    let v = bridge();
    for p in PRESSURES {
        for kappa in [0.0, 0.3, 0.4646082, 1.0] {
            let e = v.evaluate(&at(p, kappa, 0.0));
            let [qa, qb, qp, qt] = bridge_valve::flows(&v, kappa, p[0], p[1], p[2], p[3]);
            assert_eq!(e.flow, [-qp, qt, qa, qb]);
            assert!(e.flow.iter().sum::<f64>().abs() <= 1e-15 * qp.abs().max(1e-9));
            assert!(v.power(&at(p, kappa, 0.0), &e).dissipated_w >= 0.0);
            check_slopes(&v, p, kappa);
        }
    }
}

#[test]
fn throttle_element_is_its_law() {
    let t = thr();
    for (p0, p1) in [(3e6, 1e6), (1e6, 3e6), (1.1e6, 1e6), (1e6, 1.05e6)] {
        let e = t.evaluate(&at([p0, p1, 0.0, 0.0], 0.0, 0.0));
        let q = throttle::flow(&t, p0, p1);
        assert_eq!(&e.flow[..2], &[-q, q]);
        assert!(t.power(&at([p0, p1, 0.0, 0.0], 0.0, 0.0), &e).dissipated_w >= 0.0);
        check_slopes(&t, [p0, p1, 0.0, 0.0], 0.0);
    }
}

#[test]
fn valves_name_their_position_and_flows() {
    // the position comes from `describe_position`, the flows from `describe`
    let mut vars = Vec::new();
    valve().describe_position(&mut vars);
    valve().describe(&mut vars);
    bridge().describe_position(&mut vars);
    bridge().describe(&mut vars);
    thr().describe_position(&mut vars);
    thr().describe(&mut vars);
    let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "DCV.spool",
            "DCV.flow_a",
            "DCV.flow_b",
            "DCV.power_w",
            "BV.opening",
            "BV.flow_a",
            "BV.flow_b",
            "BV.power_w",
            "T1.flow",
            "T1.power_w"
        ]
    );
    let v = valve();
    let p = PRESSURES[0];
    let e = v.evaluate(&at(p, 0.7, 0.0));
    let mut out = [0.0; hydraulink::elements::element::MAX_OUTPUTS];
    assert_eq!(v.outputs(&at(p, 0.7, 0.0), &e, &mut out), 3);
    assert_eq!(out[..2], [e.flow[2], e.flow[3]]);
    // its hydraulic power: what it throttles, −Σ p_i Q_i ≥ 0
    let absorbed: f64 = -(0..4).map(|i| p[i] * e.flow[i]).sum::<f64>();
    assert_eq!(out[2], absorbed);
    assert!(out[2] >= 0.0, "{}", out[2]);
    assert_eq!(
        (v.n_position(), bridge().n_position(), thr().n_position()),
        (1, 1, 0)
    );
    assert_eq!(
        v.ports().nodes,
        [Some(v.p), Some(v.t), Some(v.a), Some(v.b)]
    );
    assert_eq!(v.ports().input, Some(v.input));
}

#[test]
fn a_throttle_in_elements_is_the_same_throttle() {
    // the four-bar's throttle moved from [[hydraulics.throttles]] to [[elements]]: the flows are
    // summed in the same order (throttles, then elements), so under every formulation every
    // shared column is bit-identical; the element adds its flow and energy columns
    use hydraulink::elements::component::ComponentSpec;
    use hydraulink::model::spec::Formulation;
    for f in [
        Formulation::Penalty,
        Formulation::DoubleStep,
        Formulation::GlobalAli3p,
        Formulation::GlobalI1al,
        Formulation::Multirate,
    ] {
        let mut spec = crate::common::spec_of("fourbar");
        spec.solver.formulation = f;
        spec.solver.duration_s = 1.5; // the valve opens at 1 s
        spec.solver.hydraulic_element_energy = true; // the throttle's account is read below
        let old = crate::common::run(hydraulink::compile(&spec).unwrap());
        let t = spec.hydraulics.throttles.remove(0);
        spec.elements.push(ComponentSpec::Throttle(t.clone()));
        let model = hydraulink::compile(&spec).unwrap();
        assert!(matches!(
            model.elements().last(),
            Some(hydraulink::elements::component::Component::Throttle(_))
        ));
        let new = crate::common::run(model);
        for label in &old.labels {
            assert_eq!(old.col(label), new.col(label), "{f:?}: {label}");
        }
        let q = new.col(&format!("{}.flow", t.name));
        assert!(
            q.iter().any(|q| q.abs() > 1e-6),
            "{f:?}: the throttle carries flow"
        );
        let d = new.col(&format!("{}.energy_dissipated", t.name));
        assert!(d.windows(2).all(|w| w[1] >= w[0]) && *d.last().unwrap() > 0.0);
    }
}

#[test]
fn a_throttle_in_elements_names_its_bad_fields() {
    let mut spec = crate::common::spec_of("fourbar");
    let mut t = spec.hydraulics.throttles.remove(0);
    t.area_m2 = -1.0;
    spec.elements
        .push(hydraulink::elements::component::ComponentSpec::Throttle(
            t.clone(),
        ));
    let e = hydraulink::compile(&spec).unwrap_err();
    assert_eq!(e.path, "elements[0].area_m2", "{e}");
    assert_eq!(e.element, format!("throttle '{}'", t.name));
    t.area_m2 = 1e-5;
    t.to = t.from.clone();
    spec.elements[0] = hydraulink::elements::component::ComponentSpec::Throttle(t);
    let e = hydraulink::compile(&spec).unwrap_err();
    assert_eq!(e.path, "elements[0].to", "{e}");
}

#[test]
fn hydraulic_outputs_are_the_same_with_and_without_per_step_accounts() {
    // `solver.hydraulic_element_energy` only decides whether the hydraulic elements are
    // evaluated at every step (for their energy accounts) or at the output rows: their output
    // columns and every other column must not change, bit for bit; the accounts appear only
    // when asked for.
    for model in ["fourbar", "boom"] {
        let mut spec = crate::common::spec_of(model);
        spec.solver.duration_s = 2.0;
        let lazy = crate::common::run(hydraulink::compile(&spec).unwrap());
        spec.solver.hydraulic_element_energy = true;
        let every = crate::common::run(hydraulink::compile(&spec).unwrap());
        for label in &lazy.labels {
            assert_eq!(lazy.col(label), every.col(label), "{model}: {label}");
        }
        let extra: Vec<&String> = every
            .labels
            .iter()
            .filter(|l| !lazy.labels.contains(l))
            .collect();
        assert!(!extra.is_empty(), "{model}: the accounts add columns");
        assert!(
            extra.iter().all(|l| l.contains(".energy_")),
            "{model}: only energy accounts are added: {extra:?}"
        );
    }
}

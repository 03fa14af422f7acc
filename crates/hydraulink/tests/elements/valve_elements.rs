//! The 4/3 valve and the bridge valve as `[[elements]]` entries (`type = "valve_4_3"`,
//! `type = "bridge_valve"`): the same elements as their `[[hydraulics.valves]]` and
//! `[[hydraulics.bridge_valves]]` forms, so the same results; their errors name the element and
//! the field; and the valve position's rate law (`Element::position_rate`, used by linearize) is
//! the law its step (`Element::advance_position`) integrates.

use hydraulink::elements::component::Component;
use hydraulink::elements::element::Element;
use hydraulink::model::spec::{Formulation, Valve43Spec};

use super::valve;

/// `text` with every `[[hydraulics.<section>]]` header replaced by `[[elements]]` with `type`.
fn as_elements(text: &str, section: &str, kind: &str) -> String {
    text.replace(
        &format!("[[hydraulics.{section}]]"),
        &format!("[[elements]]\ntype = \"{kind}\""),
    )
}

fn shipped(name: &str) -> String {
    let path = format!("{}/../../models/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("shipped model exists")
}

/// Runs `a` and `b` and asserts every output column equal, bit for bit, in the same order.
fn same_results(a: hydraulink::ModelSpec, b: hydraulink::ModelSpec, what: &str) {
    let ma = hydraulink::compile(&a).unwrap();
    let mb = hydraulink::compile(&b).unwrap();
    assert_eq!(ma.elements(), mb.elements(), "{what}: the same elements");
    let (ra, rb) = (crate::common::run(ma), crate::common::run(mb));
    assert_eq!(ra.labels, rb.labels, "{what}: the same columns");
    for (k, (x, y)) in ra.rows.iter().zip(&rb.rows).enumerate() {
        for (l, (u, v)) in ra.labels.iter().zip(x.iter().zip(y)) {
            assert_eq!(u.to_bits(), v.to_bits(), "{what}: {l} at row {k}");
        }
    }
}

#[test]
fn a_valve_4_3_element_gives_the_results_of_hydraulics_valves() {
    // the valve and the throttle as `[[elements]]`, in the file order of their sections: the
    // same elements in the same order, so the same flow sums
    let text = shipped("fourbar");
    let moved = as_elements(
        &as_elements(&text, "valves", "valve_4_3"),
        "throttles",
        "throttle",
    );
    assert!(moved.contains("type = \"valve_4_3\"") && !moved.contains("[[hydraulics.valves]]"));
    for f in [
        Formulation::Penalty,
        Formulation::GlobalAli3p,
        Formulation::Multirate,
    ] {
        let mut a = crate::common::spec_from(&text);
        let mut b = crate::common::spec_from(&moved);
        assert!(b.hydraulics.valves.is_empty() && b.elements.len() == 2);
        for s in [&mut a, &mut b] {
            s.solver.formulation = f;
            s.solver.duration_s = 1.5; // the valve opens at 1 s
        }
        same_results(a, b, &format!("{f:?}"));
    }
}

#[test]
fn a_bridge_valve_element_gives_the_results_of_hydraulics_bridge_valves() {
    // the rod of 004 under its own formulation, the trim solved by the initialization
    let text = shipped("rod_naya");
    let moved = as_elements(&text, "bridge_valves", "bridge_valve");
    let (mut a, mut b) = (
        crate::common::spec_from(&text),
        crate::common::spec_from(&moved),
    );
    assert!(b.hydraulics.bridge_valves.is_empty());
    assert!(matches!(
        hydraulink::compile(&b).unwrap().elements()[..],
        [Component::BridgeValve(_), ..]
    ));
    a.solver.duration_s = 0.3;
    b.solver.duration_s = 0.3;
    same_results(a, b, "rod_naya");
}

#[test]
fn valve_elements_name_their_bad_fields() {
    let text = as_elements(&shipped("fourbar"), "valves", "valve_4_3");
    let base = crate::common::spec_from(&text);
    let i = base
        .elements
        .iter()
        .position(|e| e.name() == "DCV")
        .expect("the valve is an element");
    let error = |edit: &dyn Fn(&mut Valve43Spec)| {
        let mut s = base.clone();
        match &mut s.elements[i] {
            hydraulink::elements::component::ComponentSpec::Valve43(v) => edit(v),
            _ => unreachable!(),
        }
        hydraulink::compile(&s).unwrap_err()
    };
    type Edit = Box<dyn Fn(&mut Valve43Spec)>;
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|v| v.port_b = "V9".into()), "port_b"),
        (Box::new(|v| v.port_a = "P".into()), "port_a"),
        (Box::new(|v| v.port_b = v.port_a.clone()), "port_b"),
        (Box::new(|v| v.flow_constant = -1.0), "flow_constant"),
        (
            Box::new(|v| v.time_constant_s = f64::NAN),
            "time_constant_s",
        ),
        (Box::new(|v| v.input = "nope".into()), "input"),
        (Box::new(|v| v.spool0 = f64::INFINITY), "spool0"),
    ];
    for (edit, field) in cases {
        let e = error(&*edit);
        assert_eq!(e.path, format!("elements[{i}].{field}"), "{e}");
        assert_eq!(e.element, "valve 'DCV'", "{e}");
    }
}

#[test]
fn the_position_rate_is_the_law_the_step_integrates() {
    // 000 eq. 27 with the trapezoidal rule: U₊ − U = Δt/2 (f(U, U_ref,k) + f(U₊, U_ref,k+1)),
    // f = `position_rate`; `advance_position` solves it in closed form (f is affine in U)
    let v = Component::Valve43(valve());
    assert!(v.position_has_rate());
    for (u, r0, r1, dt) in [
        (1.3, 10.0, 10.0, 1e-3),
        (1.3, 2.0, 7.5, 1e-3),
        (-4.0, 0.0, -10.0, 1e-4),
    ] {
        let up = v.advance_position(u, 0.0, r0, r1, dt);
        let rhs = 0.5 * dt * (v.position_rate(u, r0) + v.position_rate(up, r1));
        assert!(
            (up - u - rhs).abs() <= 1e-14 * u.abs().max(1.0),
            "{u} {r0} {r1}"
        );
    }
    // and the exact solution of U̇ = (U_ref − U)/τ with U_ref held over a step of τ/100, to the
    // trapezoidal rule's O((Δt/τ)³) local error
    let tau = valve().time_constant_s;
    let (u, r, dt) = (0.5, 8.0, tau / 100.0);
    let exact = r + (u - r) * (-dt / tau).exp();
    assert!((v.advance_position(u, 0.0, r, r, dt) - exact).abs() < 1e-6 * (r - u).abs());
}

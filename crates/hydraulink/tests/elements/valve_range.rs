//! The 4/3 valve's input range, saturation and open centre (issue 11 item 1): a 1000 V command
//! is rejected with a named error or clipped, never passed through; a value set from code is
//! clipped and counted; the open-centre P → T law matches central differences on both sides of
//! its switches; a closed-centre valve is unchanged.

use hydraulink::elements::component::ComponentSpec;
use hydraulink::elements::hydraulics::valve_4_3::{self, OpenCentre, Valve43};
use hydraulink::Simulation;
use num_dual::Dual64;

use super::{close, fd};
use crate::common::{run, spec_of};

/// The boom for 2 s with the peak of its valve command at `peak` [V], its valve saturating or
/// not.
fn boom(peak: f64, saturate: bool) -> hydraulink::ModelSpec {
    let mut spec = spec_of("boom");
    spec.inputs[0] = toml::from_str(&format!(
        r#"
name = "U"
signal = {{ type = "piecewise_constant", times = [0.0, 0.5, 4.0, 4.5, 5.0], values = [0.0, {peak}, 0.0, -10.0, 0.0] }}
"#
    ))
    .unwrap();
    spec.hydraulics.valves[0].saturate = saturate;
    spec.solver.duration_s = 2.0;
    spec
}

#[test]
fn a_model_signal_outside_the_input_range_is_rejected_naming_input_and_field() {
    let err = hydraulink::compile(&boom(1000.0, false)).unwrap_err();
    let text = err.to_string();
    eprintln!("{text}");
    assert_eq!(err.path, "hydraulics.valves[0].input");
    assert!(text.contains("valve 'DCV'"), "{text}");
    assert!(
        text.contains("input 'U' reaches 1000 at t = 0.5 s"),
        "{text}"
    );
    assert!(text.contains("input_range_v [-10, 10]"), "{text}");
    assert!(text.contains("saturate = true"), "{text}");
    // a sine that only leaves the range at its first maximum, before the end of the run
    let mut spec = boom(10.0, false);
    spec.inputs[0].signal = toml::from_str(
        "type = \"sine\"\namplitude = 10.5\nfrequency_hz = 0.25\nphase_rad = 0.0\noffset = 0.0",
    )
    .unwrap();
    let text = hydraulink::compile(&spec).unwrap_err().to_string();
    assert!(text.contains("reaches 10.5 at t = 1 s"), "{text}");
    // … and is accepted when the run ends before it (10.5 sin(π/4) = 7.4 at 0.5 s)
    spec.solver.duration_s = 0.5;
    hydraulink::compile(&spec).unwrap();
    // the same valve as an `[[elements]]` entry names its own path
    let mut spec = boom(1000.0, false);
    let v = spec.hydraulics.valves.remove(0);
    spec.elements.push(ComponentSpec::Valve43(v));
    let err = hydraulink::compile(&spec).unwrap_err();
    assert_eq!(
        err.path,
        format!("elements[{}].input", spec.elements.len() - 1)
    );
}

#[test]
fn a_saturating_valve_clips_a_1000_v_command_to_its_range() {
    // saturate = true: the 1000 V command drives the spool exactly as a 10 V one
    let clipped = run(hydraulink::compile(&boom(1000.0, true)).unwrap());
    let at_bound = run(hydraulink::compile(&boom(10.0, false)).unwrap());
    let spool = clipped.col("DCV.spool");
    assert!(spool.iter().all(|u| u.abs() <= 10.0));
    assert!(spool.iter().any(|u| *u > 9.9));
    for label in ["DCV.spool", "VA.p", "VB.p", "cylinder.length"] {
        assert_eq!(clipped.col(label), at_bound.col(label), "{label}");
    }
    // the input column shows the signal as given
    assert!(clipped.col("U.value").contains(&1000.0));
}

#[test]
fn a_value_set_from_code_is_clipped_and_counted() {
    let model = hydraulink::compile(&boom(10.0, false)).unwrap();
    let mut a = Simulation::new(model.clone()).unwrap();
    let mut b = Simulation::new(model).unwrap();
    a.set_input("U", 1000.0).unwrap();
    b.set_input("U", 10.0).unwrap();
    a.set_input("U", 1000.0).unwrap();
    b.set_input("U", -3.0).unwrap();
    b.set_input("U", 10.0).unwrap();
    assert_eq!(a.clipped_inputs(), 2);
    assert_eq!(b.clipped_inputs(), 0);
    for _ in 0..300 {
        a.step().unwrap();
        b.step().unwrap();
    }
    assert_eq!(a.state().spool, b.state().spool);
    assert_eq!(a.state().p, b.state().p);
    assert!(a.state().spool[0] <= 10.0 && a.state().spool[0] > 9.0);
}

fn open_valve() -> Valve43 {
    Valve43 {
        name: "DCV".into(),
        p: hydraulink::model::Node::Source(0),
        t: hydraulink::model::Node::Source(1),
        a: hydraulink::model::Node::Volume(hydraulink::model::VolumeId(0)),
        b: hydraulink::model::Node::Volume(hydraulink::model::VolumeId(1)),
        flow_constant: 2.138e-8,
        time_constant_s: 4.5e-3,
        laminar_dp_pa: 2e5,
        input: 0,
        spool0: 0.0,
        input_range: [-10.0, 10.0],
        open_centre: Some(OpenCentre {
            flow_constant: 3e-7,
            closing: 1.0,
        }),
    }
}

#[test]
fn open_centre_flow_law_matches_central_differences_on_both_sides_of_its_switches() {
    let v = open_valve();
    let oc = v.open_centre.unwrap();
    // |U| on both sides of U_c = 1 and of 0; Δp on both sides of the laminar transition (2e5)
    for u in [-1.2, -0.999, -0.3, 0.0, 0.3, 0.999, 1.001, 4.0] {
        for dp in [-5e6, -2.1e5, -1.9e5, -1e3, 1e3, 1.9e5, 2.1e5, 8e6] {
            let exact = valve_4_3::open_centre_flow(&v, &oc, u, Dual64::new(dp, 1.0)).eps;
            let c = fd(|x| valve_4_3::open_centre_flow(&v, &oc, u, x), dp, 1.0);
            assert!(
                close(exact, c, exact.abs().max(c.abs()).max(1e-18)),
                "U {u}, Δp {dp}: {exact:e} vs {c:e}"
            );
            // the whole valve: P → T adds to both ends, flows sum to zero, derivative by port
            let (pt, pa, pb) = (1e5, 4e6, 3e6);
            let pp = pt + dp;
            let f = valve_4_3::flows(&v, u, pp, pt, pa, pb);
            assert!((f.out_of_p - f.into_a - f.into_b - f.into_t).abs() <= 1e-18);
            let fd_p = fd(|x| valve_4_3::flows(&v, u, x, pt, pa, pb).out_of_p, pp, 1.0);
            let ex_p = valve_4_3::flows(
                &v,
                u,
                Dual64::new(pp, 1.0),
                Dual64::from(pt),
                Dual64::from(pa),
                Dual64::from(pb),
            )
            .out_of_p
            .eps;
            assert!(
                close(ex_p, fd_p, ex_p.abs().max(fd_p.abs()).max(1e-18)),
                "U {u}, p_P {pp}: {ex_p:e} vs {fd_p:e}"
            );
        }
    }
    // the P → T opening: full at the centre, closed beyond U_c, linear between
    let q = |u: f64| -> f64 { valve_4_3::open_centre_flow(&v, &oc, u, 4e6) };
    assert_eq!(q(1.0), 0.0);
    assert_eq!(q(-2.0), 0.0);
    assert!((q(0.5) - 0.5 * q(0.0)).abs() <= 1e-15);
    assert!((q(0.0) - 3e-7 * 2000.0).abs() <= 1e-15);
}

#[test]
fn open_centre_circulates_the_pump_flow_with_the_valve_centred() {
    // the boom's valve as an open-centre one: centred, it passes pump flow P → T; with the
    // command held in the end stop the P → T path is closed and the boom moves as before
    let mut spec = boom(10.0, false);
    let v = &mut spec.hydraulics.valves[0];
    v.centre = valve_4_3::Centre::Open;
    v.open_centre_flow_constant = Some(1e-6);
    let model = hydraulink::compile(&spec).unwrap();
    let r = run(model.clone());
    let closed = run(hydraulink::compile(&boom(10.0, false)).unwrap());
    // t < 0.5 s: centred; the relief-protected line Vp bleeds to tank through the centre
    let vp_open = r.at("Vp.p", 0.4);
    let vp_closed = closed.at("Vp.p", 0.4);
    eprintln!("Vp at 0.4 s: open centre {vp_open:.4e} Pa, closed centre {vp_closed:.4e} Pa");
    assert!(vp_open < vp_closed - 1e6);
    // the boom still lifts
    assert!(r.at("cylinder.length", 2.0) > r.at("cylinder.length", 0.4) + 0.05);
    // closed centre: the spec written out carries none of the new fields
    let text = toml::to_string(&spec_of("boom").hydraulics.valves[0]).unwrap();
    assert!(
        !text.contains("centre") && !text.contains("saturate") && !text.contains("input_range_v"),
        "{text}"
    );
}

/// Naya's rod (`models/rod_naya.toml`, a bridge valve with κ = κ₀ + u, κ₀ solved) for 4 s with
/// its opening offset stepping to `late` at 2 s, the valve saturating or not.
fn rod(late: f64, saturate: bool) -> hydraulink::ModelSpec {
    let mut spec = spec_of("rod_naya");
    spec.inputs[0] = toml::from_str(&format!(
        r#"
name = "kappa"
signal = {{ type = "piecewise_constant", times = [0.0, 2.0], values = [0.0, {late}] }}
"#
    ))
    .unwrap();
    spec.hydraulics.bridge_valves[0].saturate = saturate;
    spec.solver.duration_s = 4.0;
    spec
}

#[test]
fn a_bridge_valve_signal_outside_its_input_range_is_rejected_naming_input_and_field() {
    let err = hydraulink::compile(&rod(2.0, false)).unwrap_err();
    let text = err.to_string();
    eprintln!("{text}");
    assert_eq!(err.path, "hydraulics.bridge_valves[0].input");
    assert!(text.contains("valve 'valve'"), "{text}");
    assert!(
        text.contains("input 'kappa' reaches 2 at t = 2 s"),
        "{text}"
    );
    assert!(text.contains("input_range [-1, 1]"), "{text}");
    assert!(text.contains("saturate = true"), "{text}");
    // a narrower range of its own, and the same valve as an `[[elements]]` entry
    let mut spec = rod(0.3, false);
    spec.hydraulics.bridge_valves[0].input_range = Some([-0.2, 0.2]);
    let v = spec.hydraulics.bridge_valves.remove(0);
    spec.elements.push(ComponentSpec::BridgeValve(v));
    let err = hydraulink::compile(&spec).unwrap_err();
    assert_eq!(
        err.path,
        format!("elements[{}].input", spec.elements.len() - 1)
    );
    assert!(err.to_string().contains("input_range [-0.2, 0.2]"), "{err}");
    // an empty range is an error of its own field
    let mut spec = rod(0.0, false);
    spec.hydraulics.bridge_valves[0].input_range = Some([0.5, -0.5]);
    let err = hydraulink::compile(&spec).unwrap_err();
    assert_eq!(err.path, "hydraulics.bridge_valves[0].input_range");
}

#[test]
fn a_saturating_bridge_valve_clips_its_input_to_the_range() {
    // input_range [−0.02, 0.02], saturate = true: an offset of 0.5 opens the valve exactly as
    // the bound 0.02 does
    let with_range = |late: f64, saturate: bool| {
        let mut spec = rod(late, saturate);
        spec.hydraulics.bridge_valves[0].input_range = Some([-0.02, 0.02]);
        run(hydraulink::compile(&spec).unwrap())
    };
    let clipped = with_range(0.5, true);
    let at_bound = with_range(0.02, false);
    let opening = clipped.col("valve.opening");
    let kappa0 = opening[0];
    assert!(opening.iter().all(|k| *k <= kappa0 + 0.02));
    assert_eq!(*opening.last().unwrap(), kappa0 + 0.02);
    for label in ["valve.opening", "V1.p", "V2.p", "cylinder.length"] {
        assert_eq!(clipped.col(label), at_bound.col(label), "{label}");
    }
    // the input column shows the signal as given
    assert!(clipped.col("kappa.value").contains(&0.5));
    // the shipped model written out carries none of the new fields
    let shipped = spec_of("rod_naya");
    let text = toml::to_string(&shipped.hydraulics.bridge_valves[0]).unwrap();
    assert!(
        !text.contains("saturate") && !text.contains("input_range"),
        "{text}"
    );
}

#[test]
fn a_value_set_from_code_on_a_bridge_valve_is_clipped_and_counted() {
    // a narrow range, so that the clipped opening stays a gentle one
    let mut spec = rod(0.0, false);
    spec.hydraulics.bridge_valves[0].input_range = Some([-0.02, 0.02]);
    let model = hydraulink::compile(&spec).unwrap();
    let mut a = Simulation::new(model.clone()).unwrap();
    let mut b = Simulation::new(model).unwrap();
    a.set_input("kappa", 50.0).unwrap();
    b.set_input("kappa", 0.02).unwrap();
    b.set_input("kappa", -0.01).unwrap();
    b.set_input("kappa", 0.02).unwrap();
    assert_eq!(a.clipped_inputs(), 1);
    assert_eq!(b.clipped_inputs(), 0);
    for _ in 0..50 {
        a.step().unwrap();
        b.step().unwrap();
    }
    assert_eq!(a.state().spool, b.state().spool);
    assert_eq!(a.state().p, b.state().p);
}

//! The port relief (issue 24, item 3): the overload relief of a work port with its make-up
//! check. Its law is the relief and check valves' own (the same numbers), its tangent agrees
//! with central differences on both sides of every switch, it only dissipates, and in
//! `models/boom.toml` with the valve closed and a load pushing the boom down it holds the
//! piston-side chamber at about its setting while the make-up keeps the rod side, which the
//! load pulls open, above the tank pressure less a bar (a plain relief lets it fall below zero
//! absolute).

use hydraulink::elements::component::{Component, ComponentSpec};
use hydraulink::elements::element::PortState;
use hydraulink::elements::hydraulics::port_relief::PortRelief;
use hydraulink::elements::hydraulics::{check_valve, relief_valve};
use hydraulink::model::Node;
use hydraulink::ModelSpec;
use num_dual::Dual64;

use super::{close, fd};
use crate::common::*;

/// A 16 MPa port relief (2 MPa override at 1 L/s) with the default make-up check, compiled
/// through the boom model (ρ = 870 kg/m³).
fn element() -> PortRelief {
    let mut spec = spec_of("boom");
    spec.elements.push(relief_spec("VA", "port_relief"));
    let model = hydraulink::compile(&spec).expect("compiles");
    model
        .elements()
        .iter()
        .find_map(|e| match e {
            Component::PortRelief(p) => Some(p.clone()),
            _ => None,
        })
        .expect("the port relief")
}

fn relief_spec(port: &str, kind: &str) -> ComponentSpec {
    toml::from_str(&format!(
        r#"
type = "{kind}"
name = "{port}_relief"
{} = "{port}"
{} = "T"
cracking_pressure_pa = 1.6e7
pressure_override_pa = 2.0e6
rated_flow_m3_s = 1.0e-3
"#,
        if kind == "port_relief" {
            "port"
        } else {
            "inlet"
        },
        if kind == "port_relief" {
            "tank"
        } else {
            "outlet"
        },
    ))
    .expect("element parses")
}

fn at<S: Copy + From<f64>>(p0: S, p1: S) -> PortState<S> {
    PortState {
        p: [p0, p1, p0, p0],
        s: S::from(0.0),
        sd: S::from(0.0),
        u: 1.0,
        position: 0.0,
        internal: [S::from(0.0); hydraulink::elements::element::MAX_INTERNAL],
    }
}

#[test]
fn port_relief_is_the_relief_and_check_laws() {
    let v = element();
    assert_eq!(v.port(), v.relief.inlet);
    assert!(matches!(v.port(), Node::Volume(_)));
    // defaults of the make-up: 2e4 cracking, 3e4 range, C_d A √(2/ρ) passing 1 L/s at 1 bar
    assert_eq!(v.makeup.cracking_pressure_pa, 2e4);
    assert_eq!(v.makeup.opening_range_pa, 3e4);
    let q_1bar: f64 = check_valve::flow(&v.makeup, 1e5);
    assert!((q_1bar - 1e-3).abs() < 1e-12, "{q_1bar}");
    let e = Component::PortRelief(v.clone());
    let p_t = 1e5;
    for p in [-5e5, 0.0, 5e4, 9e4, 1e6, 1.5e7, 1.7e7, 2e7] {
        let ef = e.evaluate(&at(p, p_t));
        let q_r = relief_valve::flow(&v.relief, p - p_t);
        let q_m = check_valve::flow(&v.makeup, p_t - p);
        assert_eq!(ef.flow[1], q_r - q_m, "p {p}");
        assert_eq!(ef.flow[0], -ef.flow[1]);
        let mut out = [0.0; hydraulink::elements::element::MAX_OUTPUTS];
        assert_eq!(e.outputs(&at(p, p_t), &ef, &mut out), 3);
        assert_eq!((out[0], out[1]), (q_r, q_m));
        // never both at once
        assert!(q_r == 0.0 || q_m == 0.0);
    }
    let mut names = Vec::new();
    e.describe(&mut names);
    let names: Vec<_> = names.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "VA_relief.relief_flow",
            "VA_relief.makeup_flow",
            "VA_relief.power_w"
        ]
    );
}

#[test]
fn port_relief_tangent_on_each_side_of_every_switch_and_it_only_dissipates() {
    let v = element();
    let e = Component::PortRelief(v.clone());
    let p_t = 1e5;
    // make-up: cracking (p_t − 2e4), fully open (p_t − 5e4), laminar edge (p_t − 1e4); relief:
    // cracking (p_t + 1.6e7), end of onset (+ 1.6e5)
    let switches = [
        p_t - 1e4,
        p_t - 2e4,
        p_t - 5e4,
        p_t + 1.6e7,
        p_t + 1.6e7 + 1.6e5,
    ];
    let mut points = vec![-2e5, 3e4, 5e6, 1.8e7];
    for s in switches {
        points.extend([s - 50.0, s + 50.0]);
    }
    for p in points {
        for (k, p1) in [(0usize, p_t), (1, p_t)] {
            // ∂(flow into the tank)/∂p_port and ∂/∂p_tank
            let d = if k == 0 {
                e.evaluate(&at(Dual64::new(p, 1.0), Dual64::from(p1))).flow[1].eps
            } else {
                e.evaluate(&at(Dual64::from(p), Dual64::new(p1, 1.0))).flow[1].eps
            };
            let f = |x: f64| {
                let (a, b) = if k == 0 { (x, p1) } else { (p, x) };
                e.evaluate(&at(a, b)).flow[1]
            };
            let h = 1.0;
            let x0 = if k == 0 { p } else { p1 };
            let num = fd(f, x0, h);
            assert!(close(d, num, 1e-9), "p {p} ∂{k}: {d} vs {num}");
        }
        let a = at(p, p_t);
        let ef = e.evaluate(&a);
        let pw = e.power(&a, &ef);
        assert!(pw.dissipated_w >= 0.0, "p {p}: {}", pw.dissipated_w);
        assert_eq!(pw.stored_j, 0.0);
    }
}

/// `models/boom.toml` with its valve held closed (U = 0), a downward load at the boom's tip
/// ramped in over 0.5 s and held, and `kind` ("port_relief" or "relief_valve") on both
/// chambers VA and VB: the load needs about 17 MPa in VA, over the 16 MPa setting, and pulls
/// VB open.
fn pushed_boom(kind: &str) -> ModelSpec {
    let mut s = spec_of("boom");
    s.bodies[0].markers.insert("tip".into(), [4.0, 0.0, 0.0]);
    for input in s.inputs.iter_mut() {
        input.signal = hydraulink::elements::inputs::SignalSpec::Constant { value: 0.0 };
    }
    s.inputs.push(
        toml::from_str(
            r#"
name = "load"
signal = { type = "table", times = [0.0, 0.5], values = [0.0, 1.0] }
"#,
        )
        .expect("input parses"),
    );
    s.elements.push(
        toml::from_str(
            r#"
type = "point_force"
name = "load"
body = "boom"
marker = "tip"
force_n = [0.0, -2.0e4, 0.0]
input = "load"
"#,
        )
        .expect("load parses"),
    );
    // one on each work port, as a control valve carries them
    s.elements.push(relief_spec("VA", kind));
    s.elements.push(relief_spec("VB", kind));
    s.solver.duration_s = 1.5;
    s
}

#[test]
fn a_pushed_chamber_is_held_at_its_relief_and_a_pulled_one_made_up() {
    let r = run(hydraulink::compile(&pushed_boom("port_relief")).expect("compiles"));
    let (p_t, p_cr, over) = (1e5, 1.6e7, 2e6);
    let pa = r.col("VA.p");
    let pb = r.col("VB.p");
    let q_r = r.col("VA_relief.relief_flow");
    let q_m = r.col("VB_relief.makeup_flow");
    let pa_max = pa.iter().fold(f64::MIN, |m, x| m.max(*x));
    let pb_min = pb.iter().fold(f64::MAX, |m, x| m.min(*x));
    eprintln!(
        "VA max {:.3} MPa (setting {:.1} + override {:.1}); VB min {:.4} MPa; relief flow max \
         {:.3} L/s; make-up flow max {:.3} L/s",
        pa_max / 1e6,
        p_cr / 1e6,
        over / 1e6,
        pb_min / 1e6,
        max_abs(&q_r) * 1e3,
        max_abs(&q_m) * 1e3
    );
    // the relief opened and held VA within its override (the boom sinks at less than the rated
    // flow)
    assert!(pa_max > p_t + p_cr, "{pa_max}");
    assert!(pa_max < p_t + p_cr + over, "{pa_max}");
    assert!(max_abs(&q_r) > 0.0);
    // VB's make-up fed it, and it stayed within a bar below the tank
    assert!(max_abs(&q_m) > 0.0);
    assert!(pb_min > p_t - 1e5, "{pb_min}");
    // the boom sank: the cylinder retracted
    let s = r.col("cylinder.length");
    assert!(
        s[s.len() - 1] < s[0] - 0.01,
        "{} → {}",
        s[0],
        s[s.len() - 1]
    );
    // plain relief valves hold VA alike, but nothing refills VB
    let plain = run(hydraulink::compile(&pushed_boom("relief_valve")).expect("compiles"));
    let pb_plain = plain.col("VB.p").iter().fold(f64::MAX, |m, x| m.min(*x));
    eprintln!("plain relief: VB min {:.3} MPa", pb_plain / 1e6);
    assert!(pb_plain < 0.0, "{pb_plain}");
}

#[test]
fn port_relief_rejects_a_port_that_is_not_a_volume() {
    let mut spec = spec_of("boom");
    spec.elements.push(relief_spec("T", "port_relief"));
    let e = hydraulink::compile(&spec).expect_err("rejected");
    assert!(e.to_string().contains("must be a volume"), "{e}");
}

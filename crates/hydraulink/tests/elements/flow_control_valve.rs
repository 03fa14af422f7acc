//! The two-way pressure-compensated flow control valve (issue 25: the element added through
//! the registry alone): its law against central differences on both sides of every switch,
//! C¹ continuity at the switches, the set flow held above the compensator setting, and a pump
//! line bled through it to tank at two relief settings passing the same flow.

use hydraulink::elements::component::ComponentSpec;
use hydraulink::elements::hydraulics::flow_control_valve::{flow, metering_dp, FlowControlValve};
use hydraulink::model::{Node, VolumeId};
use num_dual::Dual64;

use super::{close, fd};
use crate::common::{run, spec_of};

/// Q_set = 1e-4 m³/s, Δp_c = 6 bar, δ = 0.6 bar, Δp_tr = 1.2 bar.
fn fcv() -> FlowControlValve {
    FlowControlValve {
        name: "fcv".into(),
        inlet: Node::Volume(VolumeId(0)),
        outlet: Node::Volume(VolumeId(1)),
        compensator_pressure_pa: 6e5,
        regulation_band_pa: 6e4,
        flow_constant: 1e-4 / 6e5f64.sqrt(),
        laminar_dp_pa: 1.2e5,
        input: None,
    }
}

#[test]
fn flow_control_law_matches_central_differences_on_both_sides_of_every_switch() {
    let v = fcv();
    // laminar / turbulent (±1.2 bar), orifice / blend (5.4 bar), blend / regulated (6.6 bar),
    // each approached from both sides, and points inside every branch
    let eps = 2e2;
    let mut points = vec![-5e6, -1e5, 0.0, 5e4, 3e5, 6e5, 1e6, 2e7];
    for x in [-1.2e5, 1.2e5, 5.4e5, 6.6e5] {
        points.push(x - eps);
        points.push(x + eps);
    }
    for u in [1.0, 0.4] {
        for &dp in &points {
            let exact = flow(&v, Dual64::new(dp, 1.0), u).eps;
            let numeric = fd(|x| flow(&v, x, u), dp, 10.0);
            assert!(
                close(exact, numeric, 1e-4 / 6e5),
                "Δp {dp} u {u}: dual {exact} vs central {numeric}"
            );
        }
    }
}

#[test]
fn flow_control_law_is_continuous_with_its_slope_at_the_switches() {
    let v = fcv();
    for x in [5.4e5, 6.6e5, 1.2e5, -1.2e5] {
        let (below, above) = (x * (1.0 - 1e-12), x * (1.0 + 1e-12));
        let q = |p: f64| flow(&v, p, 1.0);
        assert!((q(below) - q(above)).abs() < 1e-15, "value jumps at {x}");
        let slope = |p: f64| flow(&v, Dual64::new(p, 1.0), 1.0).eps;
        // the metering pressure's blend is C¹; the orifice law itself has a kink at its laminar
        // transition (000 eqs. 24–26: linear below, √ above, equal values), so only the blend
        // switches are checked for the slope
        if x > 2e5 {
            assert!(
                // relative to the orifice's slope Q_set/(2 Δp_c) at the setting
                (slope(below) - slope(above)).abs() <= 1e-9 * 1e-4 / (2.0 * 6e5),
                "slope jumps at {x}: {} vs {}",
                slope(below),
                slope(above)
            );
        }
    }
    // the metering pressure never exceeds the setting and follows Δp below the band
    for dp in [-1e6, 0.0, 5.3e5, 5.9e5, 6.5e5, 1e7] {
        let m: f64 = metering_dp(&v, dp);
        assert!(m <= 6e5 + 1e-9 && m <= dp + 1e-9, "Δp_m {m} at Δp {dp}");
    }
}

#[test]
fn flow_control_holds_its_set_flow_above_the_setting_and_scales_with_its_input() {
    let v = fcv();
    for dp in [6.6e5, 1e6, 5e6, 3e7f64] {
        // C_m √Δp_c = (Q_set/√Δp_c) √Δp_c: Q_set to the last bits of the rounding
        assert!((flow(&v, dp, 1.0) - 1e-4).abs() <= 1e-19, "Δp {dp}");
        assert!((flow(&v, dp, 0.25) - 2.5e-5).abs() < 1e-18);
    }
    // input clamped to [0, 1]
    assert_eq!(flow(&v, 1e6, 1.5), flow(&v, 1e6, 1.0));
    assert_eq!(flow(&v, 1e6, -0.5), 0.0);
    // below the band it is the metering orifice: Q = C √Δp (turbulent)
    let c = 1e-4 / 6e5f64.sqrt();
    assert!((flow(&v, 4e5, 1.0) - c * 4e5f64.sqrt()).abs() < 1e-18);
    // reverse flow goes back through the metering orifice unregulated
    assert!((flow(&v, -4e6, 1.0) + c * 4e6f64.sqrt()).abs() < 1e-15);
}

/// `models/pump_relief.toml` with the pump line bled to tank through a flow control valve at
/// half opening (set flow 0.2 L/s, so 0.1 L/s) from t = 0.5 s, once the pump runs, the relief
/// cracking at `cracking_pa`.
fn pump_line_bled_through_fcv(cracking_pa: f64) -> hydraulink::ModelSpec {
    let mut spec = spec_of("pump_relief");
    let fcv: ComponentSpec = toml::from_str(
        r#"
type = "flow_control_valve"
name = "fcv"
inlet = "Vp"
outlet = "T"
set_flow_m3_s = 2.0e-4
compensator_pressure_pa = 6.0e5
input = "opening"
"#,
    )
    .unwrap();
    spec.elements.push(fcv);
    spec.inputs.push(
        toml::from_str(
            r#"
name = "opening"
signal = { type = "piecewise_constant", times = [0.0, 0.5], values = [0.0, 0.5] }
"#,
        )
        .unwrap(),
    );
    for e in spec.elements.iter_mut() {
        if let ComponentSpec::ReliefValve(r) = e {
            r.cracking_pressure_pa = cracking_pa;
        }
    }
    spec
}

#[test]
fn pump_line_bled_through_a_flow_control_valve_passes_the_set_flow_at_any_pressure() {
    let mut last = Vec::new();
    for cracking in [1.4e7, 8e6] {
        let model = hydraulink::compile(&pump_line_bled_through_fcv(cracking)).unwrap();
        let r = run(model);
        let q = r.col("fcv.flow");
        let p = r.col("Vp.p");
        let pw = r.col("fcv.power_w");
        let pt = 1e5; // tank pressure of pump_relief.toml
        let mut regulated = 0;
        for i in 0..q.len() {
            // the dissipated power is Δp Q
            assert!(
                (pw[i] - (p[i] - pt) * q[i]).abs() <= 1e-9 * pw[i].abs().max(1.0),
                "row {i}: power {} vs Δp Q {}",
                pw[i],
                (p[i] - pt) * q[i]
            );
            if i > 500 && p[i] - pt >= 6.6e5 {
                // at or above the top of the band the compensator holds u Q_set exactly
                assert!(
                    (q[i] - 1e-4).abs() <= 1e-18,
                    "row {i}: Δp {} flow {}",
                    p[i] - pt,
                    q[i]
                );
                regulated += 1;
            }
        }
        let end = q.len() - 1;
        eprintln!(
            "flow control valve, relief at {:.0} bar: p = {:.2} MPa at the end, flow {:.6e} m³/s, \
             {regulated} of {} rows regulated",
            cracking * 1e-5,
            p[end] * 1e-6,
            q[end],
            q.len()
        );
        assert!(regulated > q.len() / 3, "only {regulated} rows regulated");
        last.push((p[end], q[end]));
    }
    // two different line pressures, the same flow
    assert!((last[0].0 - last[1].0).abs() > 4e6, "{last:?}");
    assert_eq!(last[0].1, last[1].1);
}

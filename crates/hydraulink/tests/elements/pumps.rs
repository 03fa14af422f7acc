//! Pumps and hoses (issue 11 item 1): the fixed-displacement pump, the pressure-compensated pump
//! and the hose. Their laws against central differences in every regime and on both sides of
//! every switch, the leakage derived from the volumetric efficiency, the power balance of the
//! pumps (shaft = hydraulic + leakage + hydromechanical loss), the hose's inverse law, and short
//! simulations: a fixed pump into a relief-protected volume (flow continuity and the relief
//! pressure at steady state), a pressure-compensated pump at deadhead, and the shipped
//! `models/pump_relief.toml` (the relief caps the pressure; the hose carries the pump flow).

use std::f64::consts::TAU;

use hydraulink::elements::element::{Element, PortState};
use hydraulink::elements::hydraulics::fixed_pump::{FixedPump, PumpShaft};
use hydraulink::elements::hydraulics::hose::{self, Hose};
use hydraulink::elements::hydraulics::pc_pump::{self, PcPump};
use hydraulink::model::spec::Formulation;
use hydraulink::model::{Node, VolumeId};
use num_dual::Dual64;
use proptest::prelude::*;

use crate::common::*;

/// 28 cm³/rev, C_L for η_v = 0.95 at 20 MPa and 157.08 rad/s, η_hm = 0.9.
fn shaft() -> PumpShaft {
    let d = 2.8e-5;
    PumpShaft {
        displacement_m3_per_rev: d,
        leakage_m3_s_pa: 0.05 * d * 157.08 / (TAU * 2.0e7),
        mechanical_efficiency: 0.9,
    }
}

fn fixed() -> FixedPump {
    FixedPump {
        name: "pump".into(),
        inlet: Node::Source(0),
        outlet: Node::Volume(VolumeId(0)),
        input: 0,
        shaft: shaft(),
    }
}

fn pc(tau: Option<f64>) -> PcPump {
    PcPump {
        name: "pc".into(),
        inlet: Node::Source(0),
        outlet: Node::Volume(VolumeId(0)),
        input: 0,
        shaft: shaft(),
        compensator_pressure_pa: 1.2e7,
        regulation_range_pa: 5e5,
        time_constant_s: tau,
        regulators: Default::default(),
    }
}

/// 3 m of 10 mm bore, μ = 0.032 Pa s, ρ = 870 kg/m³.
fn line() -> Hose {
    let (d, l, mu, rho) = (0.010, 3.0, 0.032, 870.0);
    Hose {
        name: "line".into(),
        from: Node::Volume(VolumeId(0)),
        to: Node::Volume(VolumeId(1)),
        loss_scale_pa: mu * mu * l / (2.0 * rho * d * d * d),
        flow_per_reynolds_m3_s: std::f64::consts::PI * d * mu / (4.0 * rho),
    }
}

/// Port state with p_in, p_out, speed ω and internal state e.
fn state(p_in: f64, p_out: f64, w: f64, e: f64) -> PortState<f64> {
    let mut at = PortState::zero();
    at.p = [p_in, p_out, 0.0, 0.0];
    at.position = w;
    at.internal[0] = e;
    at
}

/// The same state in dual numbers, seeded in p_out (`k` = 1), p_in (0) or the internal state (2).
fn dual_state(p_in: f64, p_out: f64, w: f64, e: f64, k: usize) -> PortState<Dual64> {
    let mut at = PortState::zero();
    let seed = |i: usize, x: f64| Dual64::new(x, if i == k { 1.0 } else { 0.0 });
    at.p = [seed(0, p_in), seed(1, p_out), 0.0.into(), 0.0.into()];
    at.position = w;
    at.internal[0] = seed(2, e);
    at
}

/// Checks the dual derivative of output `out` of `evaluate` (flow into the outlet, 0; the
/// internal rate, 1) by p_in, p_out and the internal state against central differences.
fn check_element<E: Element>(el: &E, p_in: f64, p_out: f64, w: f64, e: f64, what: &str) {
    let value = |at: &PortState<f64>, out: usize| {
        let f = el.evaluate(at);
        [f.flow[1], f.internal_rate[0]][out]
    };
    for out in 0..2 {
        for k in 0..3 {
            let exact = {
                let f = el.evaluate(&dual_state(p_in, p_out, w, e, k));
                [f.flow[1], f.internal_rate[0]][out].eps
            };
            let h = if k == 2 { 1e-6 } else { 1.0 };
            let shift = |s: f64| {
                let mut x = [p_in, p_out, e];
                x[k] += s;
                state(x[0], x[1], w, x[2])
            };
            let fd = (value(&shift(h), out) - value(&shift(-h), out)) / (2.0 * h);
            assert!(
                (exact - fd).abs() <= 1e-6 * exact.abs().max(fd.abs()) + 1e-20,
                "{what}: output {out} by {k}: exact {exact:e}, central {fd:e}"
            );
        }
    }
}

#[test]
fn fixed_pump_law_matches_central_differences_and_the_rated_efficiency() {
    let p = fixed();
    // pumping, motored backwards (p_in > p_out), stopped, reversed
    for (p_in, p_out, w) in [
        (1e5, 1.5e7, 157.08),
        (2e6, 1e5, 100.0),
        (1e5, 1e7, 0.0),
        (1e5, 5e6, -50.0),
    ] {
        check_element(&p, p_in, p_out, w, 0.0, "fixed pump");
    }
    // at the rated point the delivered flow is η_v times the ideal one
    let at = state(1e5, 1e5 + 2e7, 157.08, 0.0);
    let q = p.evaluate(&at).flow[1];
    let ideal = 2.8e-5 * 157.08 / TAU;
    assert!(
        (q / ideal - 0.95).abs() < 1e-14,
        "η_v at rated = {}",
        q / ideal
    );
    // flow leaves the inlet and enters the outlet
    assert_eq!(p.evaluate(&at).flow[0], -q);
}

/// P_shaft − losses = Q Δp (the hydraulic power into the nodes), losses ≥ leakage ≥ 0.
fn check_balance<E: Element>(el: &E, at: &PortState<f64>) {
    let e = el.evaluate(at);
    let pw = el.power(at, &e);
    let dp = at.p[1] - at.p[0];
    let leak = shaft().leakage_m3_s_pa * dp * dp;
    let hydraulic = e.flow[1] * dp;
    let (supplied, dissipated) = (pw.supplied_w, pw.dissipated_w);
    assert!(
        (supplied - dissipated - hydraulic).abs() <= 1e-12 * supplied.abs().max(1.0),
        "Δp {dp}, ω {}: shaft {supplied} − losses {dissipated} ≠ hydraulic {hydraulic}",
        at.position
    );
    assert!(
        dissipated >= leak - 1e-12 * leak,
        "loss {dissipated} < leakage {leak}"
    );
    assert_eq!(pw.stored_j, 0.0);
}

#[test]
fn pumps_balance_shaft_hydraulic_and_loss_powers() {
    // P_shaft = Q Δp + C_L Δp² + (T − T_i) ω, losses ≥ 0, for pumping, motoring, reversed
    // rotation and every displacement
    let p = fixed();
    let lagged = pc(Some(0.02));
    for (p_in, p_out) in [(1e5, 1.5e7), (1e5, 1.22e7), (3e6, 1e5), (1e5, 1e5)] {
        for w in [157.08, 30.0, 0.0, -80.0] {
            check_balance(&p, &state(p_in, p_out, w, 0.0));
            for eps in [0.0, 0.3, 1.0] {
                check_balance(&lagged, &state(p_in, p_out, w, eps));
            }
        }
    }
    // the torque output: T_i/η_hm when pumping
    let at = state(1e5, 1.5e7 + 1e5, 157.08, 0.0);
    let mut out = [0.0; hydraulink::elements::element::MAX_OUTPUTS];
    let e = p.evaluate(&at);
    assert_eq!(p.outputs(&at, &e, &mut out), 5);
    let ti = 2.8e-5 * 1.5e7 / TAU;
    assert!((out[2] - ti / 0.9).abs() < 1e-10 * ti, "torque {}", out[2]);
    assert!(
        (out[3] - out[2] * 157.08).abs() < 1e-9 * out[3],
        "shaft power {}",
        out[3]
    );
    assert_eq!(out[0], e.flow[1]);
    // the hydraulic power column: −Σ p_i Q_i, minus the delivered power (p_out − p_in) Q
    let delivered = (at.p[1] - at.p[0]) * e.flow[1];
    assert!(
        (out[4] + delivered).abs() < 1e-12 * delivered.abs(),
        "power_w {} vs −{delivered}",
        out[4]
    );
}

#[test]
fn pc_pump_law_matches_central_differences_in_every_regime() {
    // below p_c (full stroke), in the regulation range (both halves), above p_c + Δp_reg
    for p_out in [1.0e7, 1.2e7 + 1e5 + 1e5, 1.2e7 + 1e5 + 4e5, 1.3e7] {
        check_element(&pc(None), 1e5, p_out, 157.08, 0.0, "static compensator");
        for eps in [0.0, 0.4, 1.0] {
            check_element(&pc(Some(0.02)), 1e5, p_out, 157.08, eps, "swash-plate lag");
        }
    }
}

#[test]
fn pc_pump_displacement_is_c1_and_monotone_across_the_regulation_range() {
    let p = pc(None);
    let eps = |dp: f64| pc_pump::static_displacement(&p, dp);
    let slope = |dp: f64| pc_pump::static_displacement(&p, Dual64::new(dp, 1.0)).eps;
    let (pc0, pc1) = (1.2e7, 1.2e7 + 5e5);
    for x in [pc0, pc1] {
        let (below, above) = (x * (1.0 - 1e-12), x * (1.0 + 1e-12));
        assert!((eps(below) - eps(above)).abs() < 1e-9, "ε jumps at {x}");
        // slopes match (both 0 at the ends of the smoothstep) to O(δ) of the largest slope
        assert!(
            (slope(below) - slope(above)).abs() < 1e-6 * 1.5 / 5e5,
            "ε′ jumps at {x}: {} vs {}",
            slope(below),
            slope(above)
        );
    }
    assert_eq!(eps(pc0 - 1.0), 1.0);
    assert_eq!(eps(pc1 + 1.0), 0.0);
    assert!((eps(pc0 + 2.5e5) - 0.5).abs() < 1e-15, "ε at mid-range");
    let mut last = 1.0;
    for i in 0..=100 {
        let e = eps(pc0 - 1e5 + 7e5 * i as f64 / 100.0);
        assert!(
            e <= last && (0.0..=1.0).contains(&e),
            "ε not monotone in [0, 1]"
        );
        last = e;
    }
    // steady internal state = the static compensator; the lag rate vanishes there
    let lag = pc(Some(0.02));
    for p_out in [1e7, 1.22e7, 1.3e7] {
        let mut at = state(1e5, p_out, 157.08, 0.0);
        let mut e0 = at.internal;
        lag.steady_internal(&at, &mut e0);
        at.internal = e0;
        let e = lag.evaluate(&at);
        assert_eq!(e.internal_rate[0], 0.0);
        assert_eq!(e.flow[1], p.evaluate(&at).flow[1]);
    }
}

#[test]
fn hose_loss_is_hagen_poiseuille_and_blasius_and_c1_across_the_transition() {
    let h = line();
    let (d, l, mu, rho) = (0.010, 3.0, 0.032, 870.0);
    let area = std::f64::consts::PI * d * d / 4.0;
    let q_at = |re: f64| re * std::f64::consts::PI * d * mu / (4.0 * rho);
    // laminar: 128 μ L Q / (π d⁴)
    let q = q_at(1000.0);
    let hp = 128.0 * mu * l * q / (std::f64::consts::PI * d.powi(4));
    assert!((hose::pressure_loss(&h, q) - hp).abs() < 1e-12 * hp);
    // turbulent: Darcy–Weisbach with f = 0.316 Re^(−1/4)
    let q = q_at(6000.0);
    let v = q / area;
    let dw = 0.316 * 6000f64.powf(-0.25) * l / d * rho * v * v / 2.0;
    assert!((hose::pressure_loss(&h, q) - dw).abs() < 1e-12 * dw);
    // odd
    assert_eq!(hose::pressure_loss(&h, -q), -hose::pressure_loss(&h, q));
    // C¹ at Re = 2000 and 4000: value and slope from both sides
    for re in [2000.0, 4000.0] {
        let (a, b) = (q_at(re) * (1.0 - 1e-12), q_at(re) * (1.0 + 1e-12));
        let (la, lb) = (hose::pressure_loss(&h, a), hose::pressure_loss(&h, b));
        assert!((la - lb).abs() < 1e-9 * la, "Δp jumps at Re {re}");
        let sa = hose::pressure_loss(&h, Dual64::new(a, 1.0)).eps;
        let sb = hose::pressure_loss(&h, Dual64::new(b, 1.0)).eps;
        assert!(
            (sa - sb).abs() < 1e-9 * sa,
            "slope jumps at Re {re}: {sa} vs {sb}"
        );
    }
}

#[test]
fn hose_flow_inverts_the_loss_and_its_derivative_matches_central_differences() {
    let h = line();
    let q_at = |re: f64| re * h.flow_per_reynolds_m3_s;
    // laminar, just below and above both switches, in the blend, turbulent; both signs
    for re in [
        10.0, 1500.0, 1999.0, 2001.0, 2500.0, 3000.0, 3999.0, 4001.0, 8000.0, 5e4,
    ] {
        for sign in [1.0, -1.0] {
            let q = sign * q_at(re);
            let dp = hose::pressure_loss(&h, q);
            let back = hose::flow(&h, dp);
            assert!(
                (back - q).abs() <= 1e-12 * q.abs(),
                "Re {re}: Q {q} → Δp {dp} → Q {back}"
            );
            // dQ/dΔp from the dual part against central differences of the f64 inverse
            let exact = hose::flow(&h, Dual64::new(dp, 1.0)).eps;
            let step = 1e-5 * dp.abs();
            let fd = (hose::flow(&h, dp + step) - hose::flow(&h, dp - step)) / (2.0 * step);
            assert!(
                (exact - fd).abs() <= 1e-6 * exact.abs(),
                "Re {re}: dQ/dΔp {exact:e} vs central {fd:e}"
            );
            // and the element: flow from `from` to `to`, through its two ports
            check_element(
                &h,
                dp.max(0.0) + 1e5,
                (-dp).max(0.0) + 1e5,
                0.0,
                0.0,
                "hose",
            );
        }
    }
    assert_eq!(hose::flow(&h, 0.0), 0.0);
    // the hose dissipates Δp Q ≥ 0
    let at = state(5e6, 1e5, 0.0, 0.0);
    let e = h.evaluate(&at);
    let pw = h.power(&at, &e);
    assert!(pw.dissipated_w > 0.0);
    assert_eq!(pw.dissipated_w, (5e6 - 1e5) * e.flow[1]);
}

/// A fixed pump from the tank into a volume Vp that a relief valve protects, at shaft speed
/// `speed` [rad/s], without bodies; the pump's compiled spec `pump` (TOML lines).
fn pump_bench(pump: &str, duration: f64) -> hydraulink::ModelSpec {
    spec_from(&format!(
        r#"
name = "pump_bench"
[[hydraulics.volumes]]
name = "Vp"
hose_volume_m3 = 1.0e-4
hose_bulk_modulus_pa = 5.5e8
p0_pa = 1.0e6
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[[hydraulics.throttles]]
name = "bleed"
from = "Vp"
to = "T"
discharge_coefficient = 0.7
area_m2 = 2.0e-7
[[elements]]
name = "pump"
inlet = "T"
outlet = "Vp"
speed_input = "shaft"
displacement_m3_per_rev = 2.8e-5
volumetric_efficiency = 0.95
rated_pressure_pa = 2.0e7
rated_speed_rad_s = 157.08
mechanical_efficiency = 0.9
{pump}
[[elements]]
type = "relief_valve"
name = "relief"
inlet = "Vp"
outlet = "T"
cracking_pressure_pa = 1.4e7
pressure_override_pa = 1.0e6
rated_flow_m3_s = 1.0e-3
[[inputs]]
name = "shaft"
signal = {{ type = "constant", value = 157.08 }}
[solver]
step_s = 1.0e-3
duration_s = {duration:e}
tolerance_pressure_pa = 1.0e-2
hydraulic_element_energy = true
"#
    ))
}

#[test]
fn fixed_pump_into_a_relief_valve_settles_at_the_relief_pressure_with_continuous_flow() {
    let r = run(hydraulink::compile(&pump_bench("type = \"fixed_pump\"", 0.5)).unwrap());
    // the shaft speed starts at the input's value at t = 0 (initialization), not at 0
    assert_eq!(r.col("pump.speed")[0], 157.08);
    let last = r.rows.len() - 1;
    let col = |l: &str| r.col(l)[last];
    let (p, q_pump, q_leak, q_relief, q_bleed) = (
        col("Vp.p"),
        col("pump.flow"),
        col("pump.leakage"),
        col("relief.flow"),
        col("bleed.flow"),
    );
    // continuity: ideal pump flow D ω/(2π) = relief + bleed + leakage. At steady state ṗ = 0,
    // so the net flow into Vp is only the Newton residual: |ΔQ| ≤ G · tolerance_pressure_pa
    // (1e-9 m³/(s Pa) · 1e-2 Pa = 1e-11 m³/s) is the solver's bound, 1e-10 allows 10× that
    let ideal = 2.8e-5 * 157.08 / TAU;
    assert!(
        (ideal - (q_relief + q_bleed + q_leak)).abs() < 1e-10,
        "D ω/2π {ideal:e} ≠ relief {q_relief:e} + bleed {q_bleed:e} + leakage {q_leak:e}"
    );
    assert!((q_pump - (q_relief + q_bleed)).abs() < 1e-10);
    // the leakage is C_L Δp
    assert!((q_leak - shaft().leakage_m3_s_pa * (p - 1e5)).abs() < 1e-18);
    // the relief valve holds Vp at p_T + p_cr + w/2 + Q_relief/G (its catalogue line), between
    // the setting and the setting plus its override (Q_relief < Q_rated)
    let expect = 1e5 + 1.4e7 + 0.5 * 1.4e5 + q_relief / (1e-3 / 1e6);
    assert!((p - expect).abs() < 1e-6 * expect, "Vp {p} vs {expect}");
    assert!(p > 1e5 + 1.4e7 && p < 1e5 + 1.4e7 + 1e6 + 0.7e5, "Vp {p}");
    // energy at steady state: shaft power − pump losses = what the relief and the bleed dissipate
    let st = r.sim.state();
    let names: Vec<&str> = r.sim.model().elements().iter().map(|e| e.name()).collect();
    let i = |n: &str| names.iter().position(|x| *x == n).unwrap();
    let acc = &st.elements;
    let pump_net = acc.supplied_w[i("pump")] - acc.dissipated_w[i("pump")];
    let sinks = acc.dissipated_w[i("relief")] + acc.dissipated_w[i("bleed")];
    assert!(
        (pump_net - sinks).abs() < 1e-6 * sinks,
        "pump delivers {pump_net} W, relief + bleed dissipate {sinks} W"
    );
    assert!((acc.supplied_w[i("pump")] - col("pump.shaft_power")).abs() < 1e-9 * sinks);
}

#[test]
fn pc_pump_holds_the_compensator_pressure_at_deadhead() {
    // the relief is set above the compensator: at steady state the pump destrokes until its
    // delivery matches the bleed and its own leakage, in the regulation range, relief closed
    for lag in ["", "swash_plate_time_constant_s = 0.02"] {
        let pump = format!(
            "type = \"pc_pump\"\ncompensator_pressure_pa = 1.2e7\nregulation_range_pa = 5.0e5\n{lag}"
        );
        let r = run(hydraulink::compile(&pump_bench(&pump, 1.0)).unwrap());
        let last = r.rows.len() - 1;
        let col = |l: &str| r.col(l)[last];
        let (p, eps) = (col("Vp.p"), col("pump.displacement_fraction"));
        assert_eq!(col("relief.flow"), 0.0, "{lag}: relief open");
        assert!(p > 1e5 + 1.2e7 && p < 1e5 + 1.25e7, "{lag}: Vp {p}");
        assert!(eps > 0.0 && eps < 1.0, "{lag}: ε {eps}");
        // continuity: ε D ω/(2π) = bleed + C_L Δp
        let ideal = eps * 2.8e-5 * 157.08 / TAU;
        let out = col("bleed.flow") + shaft().leakage_m3_s_pa * (p - 1e5);
        assert!((ideal - out).abs() < 1e-10, "{lag}: {ideal:e} vs {out:e}");
        if !lag.is_empty() {
            // the lag has settled on the static compensator
            let pcp = pc(None);
            let static_eps = pc_pump::static_displacement(&pcp, p - 1e5);
            assert!(
                (eps - static_eps).abs() < 1e-8,
                "{lag}: ε {eps} vs ε_s {static_eps}"
            );
            let m = r.sim.model();
            assert_eq!(m.layout.names[m.layout.internal.start], "pump.displacement");
        }
    }
}

#[test]
fn pc_pump_lag_is_rejected_by_the_other_formulations_by_name() {
    let mut s = pump_bench(
        "type = \"pc_pump\"\ncompensator_pressure_pa = 1.2e7\nregulation_range_pa = 5.0e5\n\
         swash_plate_time_constant_s = 0.02",
        0.1,
    );
    s.solver.formulation = Formulation::Multirate;
    let err = hydraulink::compile(&s).unwrap_err().to_string();
    assert!(err.contains("swash_plate_time_constant_s"), "{err}");
}

#[test]
fn pump_relief_model_caps_the_pressure_and_the_hose_carries_the_pump_flow() {
    let r = run(model_of("pump_relief"));
    let t = r.col("time");
    let vp = r.col("Vp.p");
    // the relief caps the pump line at its setting plus its override (above the tank)
    let cap = 1e5 + 1.4e7 + 1e6 + 0.5 * 1.4e5;
    let top = vp.iter().fold(0.0f64, |m, x| m.max(*x));
    assert!(top <= cap, "Vp peaks at {top} > {cap}");
    assert!(top > 1e5 + 1.4e7, "the relief never opened: {top}");
    // the shaft speed follows its input: 0 at t = 0, 1500 rpm from 0.2 s
    assert_eq!(r.col("pump.speed")[0], 0.0);
    assert!((r.at("pump.speed", 0.3) - 157.08).abs() < 1e-12);
    // while lifting (1–3 s, relief closed, Vs at rest in a slow lift): the hose carries the
    // pump flow, and its pressure drop is its loss law at that flow
    for k in (1000..3000).step_by(250) {
        assert_eq!(r.col("relief.flow")[k], 0.0, "relief open at {}", t[k]);
        let q = r.col("line.flow")[k];
        let dp = vp[k] - r.col("Vs.p")[k];
        let h = match &r.sim.model().elements()[r
            .sim
            .model()
            .elements()
            .iter()
            .position(|e| e.name() == "line")
            .unwrap()]
        {
            hydraulink::elements::component::Component::Hose(h) => h.clone(),
            _ => unreachable!(),
        };
        assert!(
            (hose::pressure_loss(&h, q) - dp).abs() < 1e-9 * dp,
            "t {}: Δp {dp} vs loss {}",
            t[k],
            hose::pressure_loss(&h, q)
        );
        // the hose flow is the pump flow to within what Vp's compressibility absorbs
        let q_pump = r.col("pump.flow")[k];
        assert!(
            (q - q_pump).abs() < 1e-3 * q_pump,
            "t {}: {q} vs {q_pump}",
            t[k]
        );
    }
    // the lift runs in the hose's laminar–turbulent blend (Re 2000–4000)
    let re = r.at("line.reynolds", 2.0);
    assert!(re > 2000.0 && re < 4000.0, "Re {re}");
    // held in the end stop (3.9–3.99 s, after the boom's oscillation in its stop has decayed to
    // below 1e-8 m/s): the whole pump flow goes over the relief valve; the rest, 4e-8 relative
    // at 3.9 s, is the oil the still-settling chambers take
    for k in (3900..4000).step_by(10) {
        let (q_r, q_p) = (r.col("relief.flow")[k], r.col("pump.flow")[k]);
        assert!(
            (q_r - q_p).abs() < 1e-7 * q_p,
            "t {}: relief {q_r} vs pump {q_p}",
            t[k]
        );
    }
    // linearize takes the pump: its shaft speed is a held input (issue 24), checked below
    pump_relief_linearizes_with_the_shaft_speed_as_an_input(&r.sim);
}

/// The exact linearization of `pump_relief` about its state at 3.95 s (held in the end stop,
/// the pump flow over the relief valve): A against the central-difference linearization of the
/// full index-1 right-hand side, and the B column of the shaft speed ω against central
/// differences of that right-hand side in ω; ∂ṗ_Vp/∂ω is the pump's D/(2π) times Vp's stiffness.
fn pump_relief_linearizes_with_the_shaft_speed_as_an_input(sim: &hydraulink::Simulation) {
    use hydraulink::linearize::exact::{linearize, ExactOptions};
    use hydraulink::linearize::{finite_difference, InputSel, OperatingPoint};
    let model = sim.model();
    let mut s2 = hydraulink::Simulation::new(model.clone()).unwrap();
    while s2.time_s() < 3.95 - 1e-9 {
        s2.step().unwrap();
    }
    let pt = OperatingPoint::from_state(s2.state());
    assert_eq!(
        hydraulink::linearize::input_name(model, InputSel::PumpSpeed(0)),
        "pump.speed"
    );
    let inputs = vec![InputSel::PumpSpeed(0)];
    let exact = linearize(
        model,
        &pt,
        &ExactOptions {
            independent: vec![0],
            inputs: inputs.clone(),
            ..ExactOptions::default()
        },
    )
    .unwrap();
    let fd = finite_difference::linearize(
        model,
        &pt,
        1e-6,
        finite_difference::StepKind::Relative,
        &inputs,
        &[],
    )
    .unwrap();
    // one coordinate, no loop: the exact states are the full ones, in the same order
    assert_eq!(exact.ss.states, fd.states);
    let (a, b) = (&exact.ss.a, &fd.a);
    for i in 0..a.nrows() {
        let row = a.row(i).amax().max(b.row(i).amax());
        for j in 0..a.ncols() {
            assert!(
                (a[(i, j)] - b[(i, j)]).abs() <= 1e-5 * row,
                "A[{}, {}]: exact {:e}, central {:e}",
                exact.ss.states[i],
                exact.ss.states[j],
                a[(i, j)],
                b[(i, j)]
            );
        }
    }
    let vp = exact.ss.states.iter().position(|s| s == "Vp.p").unwrap();
    let (be, bf) = (exact.ss.b[(vp, 0)], fd.b[(vp, 0)]);
    assert!(
        be > 0.0 && (be - bf).abs() <= 1e-6 * be,
        "∂ṗ_Vp/∂ω: exact {be:e}, central {bf:e}"
    );
    for i in 0..exact.ss.b.nrows() {
        assert!(
            (exact.ss.b[(i, 0)] - fd.b[(i, 0)]).abs() <= 1e-6 * be,
            "B[{}]: {:e} vs {:e}",
            exact.ss.states[i],
            exact.ss.b[(i, 0)],
            fd.b[(i, 0)]
        );
    }
    eprintln!("pump_relief at 3.95 s: ∂ṗ_Vp/∂ω = {be:.6e} Pa/rad (central {bf:.6e})");
}

proptest! {
    #[test]
    fn hose_inverse_and_its_derivative_hold_at_any_flow(
        log_re in 0.0f64..5.0,
        negative in proptest::bool::ANY,
    ) {
        let h = line();
        let re = 10f64.powf(log_re);
        // off the switches themselves, where the one-sided second derivatives differ
        prop_assume!((re - 2000.0).abs() > 1.0 && (re - 4000.0).abs() > 1.0);
        let q = if negative { -1.0 } else { 1.0 } * re * h.flow_per_reynolds_m3_s;
        let dp = hose::pressure_loss(&h, q);
        let back = hose::flow(&h, dp);
        prop_assert!((back - q).abs() <= 1e-12 * q.abs(), "Re {re}: {back} vs {q}");
        let exact = hose::flow(&h, Dual64::new(dp, 1.0)).eps;
        let step = 1e-5 * dp.abs();
        let fd = (hose::flow(&h, dp + step) - hose::flow(&h, dp - step)) / (2.0 * step);
        prop_assert!((exact - fd).abs() <= 1e-6 * exact.abs(), "Re {re}: {exact:e} vs {fd:e}");
    }
}

/// `models/boom.toml` with an algebraic volume VY fed only by a fixed pump from the tank,
/// turning at 10 rad/s; `leak` goes into the pump's entry.
fn boom_with_pumped_algebraic_volume(leak: &str) -> hydraulink::ModelSpec {
    let text = include_str!("../../../../models/boom.toml")
        .replace(
            "[[hydraulics.pumps]]",
            "[[hydraulics.volumes]]\nname = \"VY\"\nhose_volume_m3 = 1.0e-4\nalgebraic = true\n\n\
             [[hydraulics.pumps]]",
        )
        .replacen(
            "[[inputs]]",
            &format!(
                "[[elements]]\ntype = \"fixed_pump\"\nname = \"feed\"\ninlet = \"T\"\n\
                 outlet = \"VY\"\nspeed_input = \"w\"\ndisplacement_m3_per_rev = 1.0e-6\n{leak}\n\n\
                 [[inputs]]\nname = \"w\"\nsignal = {{ type = \"constant\", value = 10.0 }}\n\n\
                 [[inputs]]"
            ),
            1,
        );
    spec_from(&text)
}

#[test]
fn an_algebraic_volume_fed_only_by_a_leak_free_pump_is_rejected_at_compile_time() {
    // η_v = 1: the delivery D ω/2π does not depend on p_VY, so the flow balance that gives an
    // algebraic volume its pressure has a zero row in the tangent (the initialization stopped
    // with "not determined by statics; give p0_pa", which an algebraic volume ignores)
    let err = hydraulink::compile(&boom_with_pumped_algebraic_volume("")).unwrap_err();
    let text = err.to_string();
    eprintln!("{text}");
    assert_eq!(err.path, "hydraulics.volumes[3].algebraic");
    assert!(
        text.contains("volume 'VY'") && text.contains("'feed'"),
        "{text}"
    );
    assert!(text.contains("volumetric_efficiency below 1"), "{text}");
    assert!(text.contains("relief valve, throttle or valve"), "{text}");
}

#[test]
fn an_algebraic_volume_fed_by_a_leaking_pump_holds_the_leakage_balance() {
    // η_v = 0.95 at Δp_r = 10 MPa and ω_r = 10 rad/s: the leakage C_L Δp takes the whole
    // delivery D ω/2π at Δp = D ω/(2π C_L) = Δp_r ω/(ω_r (1 − η_v)) = 200 MPa over the tank
    let spec = boom_with_pumped_algebraic_volume(
        "volumetric_efficiency = 0.95\nrated_pressure_pa = 1.0e7\nrated_speed_rad_s = 10.0",
    );
    let mut spec = spec;
    spec.solver.duration_s = 0.2;
    let model = hydraulink::compile(&spec).unwrap();
    let r = run(model);
    let p = r.col("VY.p");
    let hand = 1.0e5 + 1.0e7 * 10.0 / (10.0 * 0.05);
    let worst = p
        .iter()
        .map(|x| (x - hand).abs() / hand)
        .fold(0.0, f64::max);
    eprintln!(
        "pumped algebraic volume: p_VY(0) = {:.9e} Pa, hand {hand:.9e} Pa, worst relative \
         error over 0.2 s {worst:.1e}",
        p[0]
    );
    // flow continuity (delivery = leakage) to the pressure tolerance of the solve
    assert!(worst <= 1e-9, "p_VY off the leakage balance by {worst:e}");
}

//! The pressure-compensated pump's opt-in regulators (issue 24 item 3): the absorbed-power
//! limiter, load sensing and the pressure cut-off, and the load-sensing shuttle of a 4/3 valve.
//! Their laws against central differences in every regime and on both sides of every switch;
//! the power limit over a sweep of Δp at full speed; the smooth minimum's C¹ joins; the energy
//! balance of a power-limited pump against a relief valve; and a load-sensing circuit at rest
//! (margin over tank, almost no shaft power) and with its spool open against a load (load plus
//! margin).

use std::f64::consts::TAU;

use hydraulink::elements::element::{Element, PortState, MAX_OUTPUTS};
use hydraulink::elements::hydraulics::fixed_pump::PumpShaft;
use hydraulink::elements::hydraulics::ls_shuttle::{self, LsShuttle};
use hydraulink::elements::hydraulics::pc_pump::{self, PcPump, Regulators, POWER_BLEND};
use hydraulink::model::{Node, Valve43, VolumeId};
use num_dual::Dual64;

use crate::common::*;

/// 110 cm³/rev at 2000 rpm (209.44 rad/s), η_v = 0.95 at 35 MPa, η_hm = 0.9: an excavator pump.
const D: f64 = 1.1e-4;
const W: f64 = 209.44;
const P_MAX: f64 = 1.1e5;

fn shaft() -> PumpShaft {
    PumpShaft {
        displacement_m3_per_rev: D,
        leakage_m3_s_pa: 0.05 * D * W / (TAU * 3.5e7),
        mechanical_efficiency: 0.9,
    }
}

/// The pump with compensator p_c [Pa] over Δp_reg = 1 MPa and the regulators given; P_max in
/// W (the compiled constant 2π η_hm P_max/D as `PcPumpSpec::compile` forms it).
fn pump(p_c: f64, ls: bool, cutoff: Option<f64>, p_max: Option<f64>, tau: Option<f64>) -> PcPump {
    PcPump {
        name: "pump".into(),
        inlet: Node::Source(0),
        outlet: Node::Volume(VolumeId(0)),
        input: 0,
        shaft: shaft(),
        compensator_pressure_pa: p_c,
        regulation_range_pa: 1.0e6,
        time_constant_s: tau,
        regulators: Regulators {
            load_sense: ls.then_some(Node::Volume(VolumeId(1))),
            pressure_cutoff_pa: cutoff,
            power_constant: p_max.map(|w| TAU * 0.9 * w / D),
        },
    }
}

/// Port state (p_in, p_out, p_LS), speed ω, internal ε.
fn state(p: [f64; 3], w: f64, e: f64) -> PortState<f64> {
    let mut at = PortState::zero();
    at.p = [p[0], p[1], p[2], 0.0];
    at.position = w;
    at.internal[0] = e;
    at
}

/// Checks ∂(flow into the outlet, internal rate)/∂(p_in, p_out, p_LS, ε) of `evaluate` by dual
/// numbers against central differences.
fn check_tangent(el: &PcPump, p: [f64; 3], w: f64, e: f64, what: &str) {
    let value = |at: &PortState<f64>| {
        let f = el.evaluate(at);
        [f.flow[1], f.internal_rate[0]]
    };
    for k in 0..4 {
        let mut at = PortState::<Dual64>::zero();
        for (i, &pi) in p.iter().enumerate() {
            at.p[i] = Dual64::new(pi, if i == k { 1.0 } else { 0.0 });
        }
        at.position = w;
        at.internal[0] = Dual64::new(e, if k == 3 { 1.0 } else { 0.0 });
        let f = el.evaluate(&at);
        let exact = [f.flow[1].eps, f.internal_rate[0].eps];
        let h = if k == 3 { 1e-7 } else { 1.0 };
        let shift = |s: f64| {
            let (mut q, mut ee) = (p, e);
            if k == 3 {
                ee += s;
            } else {
                q[k] += s;
            }
            state(q, w, ee)
        };
        let (fp, fm) = (value(&shift(h)), value(&shift(-h)));
        for out in 0..2 {
            let fd = (fp[out] - fm[out]) / (2.0 * h);
            assert!(
                (exact[out] - fd).abs() <= 1e-6 * exact[out].abs().max(fd.abs()) + 1e-20,
                "{what}: p {p:?}, output {out} by {k}: exact {:e}, central {fd:e}",
                exact[out]
            );
        }
    }
}

/// ε_P = 1 at Δp_P = 2π η_hm P_max/(D ω) [Pa] (27.0 MPa here).
fn power_knee() -> f64 {
    TAU * 0.9 * P_MAX / (D * W)
}

#[test]
fn regulated_pump_law_matches_central_differences_in_every_regime() {
    let knee = power_knee();
    // full stroke; the blend on both sides of y = 1; power-limited; cut-off regulating under the
    // power limit; past the cut-off; the compensator regulating
    let dps = [
        1.0e7,
        knee / (1.0 - 0.5 * POWER_BLEND),
        knee / (1.0 + 0.5 * POWER_BLEND),
        3.2e7,
        3.3e7 + 2.5e5,
        3.3e7 + 7.5e5,
        3.5e7,
    ];
    for dp in dps {
        let p = [1e5, 1e5 + dp, 0.0];
        for tau in [None, Some(0.02)] {
            let what = format!("power + cut-off, lag {tau:?}");
            check_tangent(
                &pump(3.4e7, false, Some(3.3e7), Some(P_MAX), tau),
                p,
                W,
                0.6,
                &what,
            );
        }
        check_tangent(
            &pump(3.2e7, false, None, Some(P_MAX), None),
            p,
            W,
            0.0,
            "power",
        );
    }
    // load sensing: margin 2 MPa over LS; below, inside and above the regulation range, with the
    // power limiter and the cut-off present
    for (p_out, p_ls) in [
        (1.5e7, 1.4e7),
        (1.5e7, 1.25e7),
        (1.5e7, 1.27e7),
        (1.5e7, 1.0e7),
        (3.0e7, 2.75e7),
    ] {
        for tau in [None, Some(0.02)] {
            check_tangent(
                &pump(2.0e6, true, Some(3.3e7), Some(P_MAX), tau),
                [1e5, p_out, p_ls],
                W,
                0.4,
                "load sensing",
            );
        }
    }
}

#[test]
fn shaft_power_never_exceeds_the_limit_and_meets_the_hyperbola() {
    let p = pump(3.4e7, false, Some(3.3e7), Some(P_MAX), None);
    let knee = power_knee();
    let mut out = [0.0; MAX_OUTPUTS];
    let mut last_eps = 1.0;
    for i in 0..=4000 {
        let dp = 4.0e7 * i as f64 / 4000.0;
        let at = state([1e5, 1e5 + dp, 0.0], W, 0.0);
        let e = p.evaluate(&at);
        p.outputs(&at, &e, &mut out);
        let (eps, power) = (out[1], out[3]);
        // the limit holds in the model's own torque, to rounding
        assert!(
            power <= P_MAX * (1.0 + 1e-12),
            "Δp {dp}: shaft power {power} W"
        );
        assert!(
            (0.0..=1.0).contains(&eps) && eps <= last_eps,
            "Δp {dp}: ε {eps} after {last_eps}"
        );
        last_eps = eps;
        // past the blend and below the cut-off the pump sits on the hyperbola ω T = P_max
        if dp > knee / (1.0 - POWER_BLEND) * (1.0 + 1e-9) && dp < 3.3e7 {
            assert!(
                (power - P_MAX).abs() < 1e-9 * P_MAX,
                "Δp {dp}: {power} W off the hyperbola"
            );
        }
        // below the blend: full stroke
        if dp < knee / (1.0 + POWER_BLEND) {
            assert_eq!(eps, 1.0, "Δp {dp}");
        }
        // the blend gives up at most k/4 of the stroke
        let lower = 1.0_f64.min(knee / dp.max(1.0));
        if dp < 3.3e7 {
            assert!(
                eps >= lower - 0.25 * POWER_BLEND - 1e-15 && eps <= lower + 1e-15,
                "Δp {dp}: ε {eps}"
            );
        }
    }
    // a stopped or reversed pump (ω Δp ≤ 0) is not limited
    let at = state([1e5, 3.0e7, 0.0], 0.0, 0.0);
    assert_eq!(pc_pump::target_displacement(&p, &at.p, 0.0), 1.0);
}

#[test]
fn smooth_min_is_c1_below_the_minimum_and_monotone() {
    let k = POWER_BLEND;
    let m = |y: f64| pc_pump::smooth_min_one(y);
    let dm = |y: f64| pc_pump::smooth_min_one(Dual64::new(y, 1.0)).eps;
    for y in [1.0 - k, 1.0, 1.0 + k] {
        let (a, b) = (y * (1.0 - 1e-12), y * (1.0 + 1e-12));
        assert!((m(a) - m(b)).abs() < 1e-11, "m jumps at {y}");
        assert!(
            (dm(a) - dm(b)).abs() < 1e-10,
            "m' jumps at {y}: {} vs {}",
            dm(a),
            dm(b)
        );
    }
    let mut last = 0.0;
    for i in 0..=1000 {
        let y = 2.0 * i as f64 / 1000.0;
        let v = m(y);
        assert!(
            v <= y.min(1.0) + 1e-15 && v >= y.min(1.0) - 0.25 * k - 1e-15,
            "m({y}) = {v}"
        );
        assert!(v >= last, "m not monotone at {y}");
        // ∂ε/∂ε_comp = m − y m' ≥ 0: ε = ε_comp m(ε_P/ε_comp) does not fall as ε_comp rises
        assert!(v - y * dm(y) >= -1e-15, "m − y m' < 0 at {y}");
        last = v;
    }
}

fn shuttle() -> LsShuttle {
    LsShuttle {
        name: "ls".into(),
        a: Node::Volume(VolumeId(0)),
        b: Node::Volume(VolumeId(1)),
        ls: Node::Volume(VolumeId(2)),
        flow_constant: 2.0e-9,
        opening_range_pa: 1.0e5,
        valve: Valve43 {
            name: "DCV".into(),
            p: Node::Source(0),
            t: Node::Source(1),
            a: Node::Volume(VolumeId(0)),
            b: Node::Volume(VolumeId(1)),
            flow_constant: 2.0e-8,
            time_constant_s: 0.01,
            laminar_dp_pa: 2e5,
            input: 0,
            spool0: 0.0,
            input_range: [-10.0, 10.0],
            open_centre: None,
        },
        valve_element: 7,
    }
}

#[test]
fn shuttle_is_one_way_from_the_active_port_and_its_tangent_is_exact() {
    let s = shuttle();
    let q = |u: f64, p: [f64; 3]| {
        let mut at = PortState::<f64>::zero();
        at.p = [p[0], p[1], p[2], 0.0];
        at.position = u;
        s.evaluate(&at)
    };
    // centred: closed; against the one-way direction: closed
    assert_eq!(q(0.0, [2e7, 1e7, 1e5]).flow[2], 0.0);
    assert_eq!(q(5.0, [1e7, 2e7, 1.5e7]).flow[2], 0.0);
    // U > 0 reads A, U < 0 reads B; flow leaves the work port and enters LS
    let e = q(5.0, [1e7, 2e7, 1e5]);
    assert!(e.flow[2] > 0.0 && e.flow[0] == -e.flow[2] && e.flow[1] == 0.0);
    let e = q(-5.0, [1e7, 2e7, 1e5]);
    assert!(e.flow[2] > 0.0 && e.flow[1] == -e.flow[2] && e.flow[0] == 0.0);
    // above the opening range and the laminar transition: C_s |U| √Δp
    let full = 2.0e-9 * 5.0 * (1e7 - 1e5_f64).sqrt();
    assert!((q(5.0, [1e7, 2e7, 1e5]).flow[2] - full).abs() < 1e-15 * full / 1e-6);
    // tangents by p_A, p_B, p_LS in every branch: closed side, opening smoothstep (laminar),
    // laminar open, turbulent open, for both spool signs
    for u in [5.0, -5.0] {
        for dp in [-1e5, 3e4, 8e4, 1.5e5, 5e5, 5e6] {
            let (pw, pls) = (1e7 + dp, 1e7);
            let p = if u > 0.0 {
                [pw, 2e6, pls]
            } else {
                [2e6, pw, pls]
            };
            for k in 0..3 {
                let mut at = PortState::<Dual64>::zero();
                for (i, &pi) in p.iter().enumerate() {
                    at.p[i] = Dual64::new(pi, if i == k { 1.0 } else { 0.0 });
                }
                at.position = u;
                let exact = s.evaluate(&at).flow[2].eps;
                let h = 1.0;
                let mut pp = p;
                pp[k] += h;
                let mut pm = p;
                pm[k] -= h;
                let fd = (q(u, pp).flow[2] - q(u, pm).flow[2]) / (2.0 * h);
                assert!(
                    (exact - fd).abs() <= 1e-6 * exact.abs().max(fd.abs()) + 1e-22,
                    "U {u}, Δp {dp}, by {k}: exact {exact:e}, central {fd:e}"
                );
            }
        }
    }
    // C¹ at Δp = 0 and at the end of the opening range
    for x in [0.0, 1e5] {
        let f = |dp: f64| ls_shuttle::shuttle_flow(&s, 5.0, dp);
        let df = |dp: f64| ls_shuttle::shuttle_flow(&s, 5.0, Dual64::new(dp, 1.0)).eps;
        let (a, b) = (x - 1e-3, x + 1e-3);
        // no step: the change over 2e-3 Pa is what the slope gives
        let slope = df(a).abs().max(df(b).abs());
        assert!(
            (f(a) - f(b)).abs() <= 2e-3 * slope * 1.01 + 1e-30,
            "Q jumps at {x}"
        );
        assert!(
            (df(a) - df(b)).abs() < 1e-6 * df(1e5).abs(),
            "Q' jumps at {x}"
        );
    }
    // no spool of its own: it reads its valve's (element 7 here)
    assert_eq!(s.n_position(), 0);
    assert_eq!(s.reads_position_of(), Some(7));
}

/// A pressure-compensated pump from the tank into Vp (volume 1e-4 m³), with `pump` (TOML lines)
/// added to its entry, a relief valve at 36 MPa and the other lines `rest`.
fn regulated_bench(pump: &str, rest: &str, duration: f64) -> hydraulink::ModelSpec {
    spec_from(&format!(
        r#"
name = "regulated_pump"
[[hydraulics.volumes]]
name = "Vp"
hose_volume_m3 = 1.0e-4
hose_bulk_modulus_pa = 5.5e8
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[[elements]]
type = "pc_pump"
name = "pump"
inlet = "T"
outlet = "Vp"
speed_input = "shaft"
displacement_m3_per_rev = 1.1e-4
volumetric_efficiency = 0.95
rated_pressure_pa = 3.5e7
rated_speed_rad_s = 209.44
mechanical_efficiency = 0.9
regulation_range_pa = 1.0e6
{pump}
[[elements]]
type = "relief_valve"
name = "relief"
inlet = "Vp"
outlet = "T"
cracking_pressure_pa = 3.6e7
pressure_override_pa = 2.0e6
rated_flow_m3_s = 4.0e-3
{rest}
[[inputs]]
name = "shaft"
signal = {{ type = "constant", value = 209.44 }}
[solver]
step_s = 1.0e-3
duration_s = {duration:e}
tolerance_pressure_pa = 1.0e-2
hydraulic_element_energy = true
"#
    ))
}

#[test]
fn power_limited_pump_against_a_load_orifice_balances_its_energy_and_holds_the_limit() {
    // a load orifice that takes the pump to ~30 MPa: on the hyperbola, not at the compensator
    let spec = regulated_bench(
        "compensator_pressure_pa = 3.4e7\nmax_power_w = 1.1e5",
        "[[elements]]\ntype = \"throttle\"\nname = \"load\"\nfrom = \"Vp\"\nto = \"T\"\n\
         discharge_coefficient = 0.7\narea_m2 = 1.5e-5",
        0.5,
    );
    let r = run(hydraulink::compile(&spec).unwrap());
    let last = r.rows.len() - 1;
    let col = |l: &str| r.col(l)[last];
    let (p, eps, power) = (
        col("Vp.p"),
        col("pump.displacement_fraction"),
        col("pump.shaft_power"),
    );
    eprintln!("power-limited pump: Vp {p:.6e} Pa, ε {eps:.6}, shaft {power:.6e} W");
    assert_eq!(col("relief.flow"), 0.0, "relief open at {p} Pa");
    assert!(
        p - 1e5 < 3.4e7 && p - 1e5 > power_knee() / (1.0 - POWER_BLEND),
        "Vp {p}"
    );
    assert!(
        (power - P_MAX).abs() < 1e-9 * P_MAX,
        "shaft power {power} W"
    );
    // every row: the shaft power stays under the limit
    let top = r
        .col("pump.shaft_power")
        .iter()
        .fold(0.0f64, |m, x| m.max(*x));
    assert!(top <= P_MAX * (1.0 + 1e-12), "peak shaft power {top} W");
    // energy at steady state: shaft power − pump losses = what the load orifice dissipates
    let st = r.sim.state();
    let names: Vec<&str> = r.sim.model().elements().iter().map(|e| e.name()).collect();
    let i = |n: &str| names.iter().position(|x| *x == n).unwrap();
    let acc = &st.elements;
    let pump_net = acc.supplied_w[i("pump")] - acc.dissipated_w[i("pump")];
    let sink = acc.dissipated_w[i("load")];
    assert!(
        (pump_net - sink).abs() < 1e-6 * sink,
        "pump delivers {pump_net} W, the load dissipates {sink} W"
    );
}

/// The load-sensing bench: pump (margin 2 MPa, cut-off 30 MPa, 110 kW) into Vp; a 4/3 valve from
/// Vp to a load volume VA that a 10 MPa relief drains ("the load"), its B side VB drained by a
/// throttle; a shuttle reports the active port to LS (2e-5 m³), which a bleed drains to tank; the spool command ramps.
fn ls_bench(spool: &str) -> hydraulink::ModelSpec {
    let rest = format!(
        r#"
[[hydraulics.volumes]]
name = "VA"
hose_volume_m3 = 1.0e-4
hose_bulk_modulus_pa = 5.5e8
p0_pa = 1.0e6
[[hydraulics.volumes]]
name = "VB"
hose_volume_m3 = 1.0e-4
hose_bulk_modulus_pa = 5.5e8
[[hydraulics.volumes]]
name = "LS"
hose_volume_m3 = 2.0e-5
hose_bulk_modulus_pa = 5.5e8
[[hydraulics.valves]]
name = "DCV"
port_p = "Vp"
port_t = "T"
port_a = "VA"
port_b = "VB"
flow_constant = 4.0e-8
time_constant_s = 0.01
input = "U"
[[elements]]
type = "relief_valve"
name = "load"
inlet = "VA"
outlet = "T"
cracking_pressure_pa = 1.0e7
pressure_override_pa = 1.0e6
rated_flow_m3_s = 4.0e-3
[[elements]]
type = "throttle"
name = "vb_drain"
from = "VB"
to = "T"
discharge_coefficient = 0.7
area_m2 = 1.0e-6
[[elements]]
type = "ls_shuttle"
name = "shuttle"
valve = "DCV"
ls = "LS"
flow_constant = 4.0e-9
[[elements]]
type = "throttle"
name = "ls_bleed"
from = "LS"
to = "T"
discharge_coefficient = 0.7
area_m2 = 1.0e-8
[[inputs]]
name = "U"
signal = {spool}
"#
    );
    regulated_bench(
        "compensator_pressure_pa = 2.0e6\nload_sense = \"LS\"\npressure_cutoff_pa = 3.0e7\n\
         max_power_w = 1.1e5",
        &rest,
        1.0,
    )
}

#[test]
fn load_sensing_pump_holds_the_margin_at_rest_and_load_plus_margin_when_working() {
    // at rest: the spool centred, LS drained: the pump holds the margin over the tank and
    // absorbs only its leakage's worth of power
    let r = run(hydraulink::compile(&ls_bench("{ type = \"constant\", value = 0.0 }")).unwrap());
    let last = r.rows.len() - 1;
    let col = |l: &str| r.col(l)[last];
    let (p, ls, power) = (col("Vp.p"), col("LS.p"), col("pump.shaft_power"));
    eprintln!("LS at rest: Vp {p:.6e} Pa, LS {ls:.6e} Pa, shaft {power:.3e} W");
    assert!((ls - 1e5).abs() < 1.0, "LS {ls}");
    assert!(p - ls > 2.0e6 && p - ls < 3.0e6, "Vp − LS = {}", p - ls);
    // ε D ω/2π = C_L Δp: the shaft power is the leakage's, C_L Δp²/(η_hm ...) ~ 0.1 % of P_max
    assert!(power < 1e-2 * P_MAX, "shaft power at rest {power} W");
    // working: the spool open against the 10 MPa load: LS reads the load, the pump holds the
    // margin above it
    let r = run(hydraulink::compile(&ls_bench(
        "{ type = \"table\", times = [0.0, 0.2, 0.6], values = [0.0, 0.0, 10.0] }",
    ))
    .unwrap());
    let last = r.rows.len() - 1;
    let col = |l: &str| r.col(l)[last];
    let (p, ls, pa, power) = (
        col("Vp.p"),
        col("LS.p"),
        col("VA.p"),
        col("pump.shaft_power"),
    );
    eprintln!("LS working: Vp {p:.6e} Pa, LS {ls:.6e} Pa, VA {pa:.6e} Pa, shaft {power:.3e} W");
    assert!(col("load.flow") > 0.0, "the load relief is closed");
    assert!(pa > 1.01e7 && pa < 1.11e7, "VA {pa}");
    // LS sits just below the load (the bleed's flow drops over the open shuttle)
    assert!(ls < pa && pa - ls < 2e5, "LS {ls} vs VA {pa}");
    assert!(p - ls > 2.0e6 && p - ls < 3.0e6, "Vp − LS = {}", p - ls);
    assert!(power <= P_MAX * (1.0 + 1e-12), "shaft power {power}");
    // the shuttle reads the valve's spool: no second copy of it
    assert!(r.labels.iter().all(|c| c != "shuttle.spool"));
}

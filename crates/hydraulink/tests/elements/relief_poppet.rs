//! The relief valve's first-order poppet lag: the element with an internal state (issue 10,
//! items 1 and 8). Its law against central differences on both sides of the cracking pressure,
//! the step response of the lag, the static limit, the energy account (the valve only
//! dissipates), the layout and NaN-check names, its rejection by name by every other
//! formulation, and its state in `linearize` (the linear model itself is checked in
//! `tests/linearize.rs`, `relief_poppet_lag_is_linearized`).

use hydraulink::elements::element::{Element, PortState};
use hydraulink::elements::hydraulics::relief_valve::{self, PoppetLag, ReliefValve};
use hydraulink::model::spec::Formulation;
use hydraulink::model::{Node, VolumeId};
use hydraulink::{ModelSpec, Simulation, StepError};
use num_dual::Dual64;

use crate::common::*;

/// The boom's relief valve (14 MPa, 1 MPa override at 1 L/s) with a poppet lag τ [s].
fn lagged(tau: f64) -> ReliefValve {
    let (p_cr, over, q, w) = (1.4e7, 1e6, 1e-3, 1.4e5);
    ReliefValve {
        name: "relief".into(),
        inlet: Node::Volume(VolumeId(0)),
        outlet: Node::Volume(VolumeId(1)),
        cracking_pressure_pa: p_cr,
        gradient_m3_s_pa: q / over,
        smoothing_pa: w,
        poppet: Some(PoppetLag {
            time_constant_s: tau,
            rated_conductance_m3_s_pa: q / (p_cr + over + 0.5 * w),
        }),
    }
}

/// `models/boom.toml` with the relief valve's poppet lag τ [s] (None: the static valve) at
/// step Δt [s].
fn boom(tau: Option<f64>, dt: f64, duration: f64) -> ModelSpec {
    let mut s = spec_of("boom");
    // the relief valve's energy account is read below
    s.solver.hydraulic_element_energy = true;
    s.solver.step_s = dt;
    s.solver.duration_s = duration;
    for e in s.elements.iter_mut() {
        if let hydraulink::elements::component::ComponentSpec::ReliefValve(r) = e {
            r.poppet_time_constant_s = tau;
        }
    }
    s
}

/// A relief valve from a 16 MPa pump to the tank (both fixed pressures, so Δp is constant),
/// beside one closed volume, with poppet lag τ [s] at step Δt [s].
fn bench(tau: f64, dt: f64, formulation: &str) -> ModelSpec {
    spec_from(&format!(
        r#"
name = "relief_bench"
[[hydraulics.volumes]]
name = "V"
hose_volume_m3 = 1.0e-4
hose_bulk_modulus_pa = 5.5e8
p0_pa = 1.0e6
[[hydraulics.pumps]]
name = "P"
pressure_pa = 1.6e7
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[[hydraulics.throttles]]
name = "bleed"
from = "V"
to = "T"
discharge_coefficient = 0.7
area_m2 = 1.0e-6
[[elements]]
type = "relief_valve"
name = "relief"
inlet = "P"
outlet = "T"
cracking_pressure_pa = 1.4e7
pressure_override_pa = 1.0e6
rated_flow_m3_s = 1.0e-3
poppet_time_constant_s = {tau:e}
[solver]
formulation = "{formulation}"
step_s = {dt:e}
duration_s = {dur:e}
"#,
        dur = tau
    ))
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

#[test]
fn relief_poppet_law_matches_central_differences_on_both_sides_of_cracking() {
    let v = lagged(5e-3);
    // Δp below p_cr, in the onset (p_cr … p_cr + w), and above it; opening x mid-range
    for (p0, x) in [(1.3e7, 0.2), (1.405e7, 0.3), (1.5e7, 0.9)] {
        let p1 = 1e5;
        let eval = |dp0: f64, dx: f64, k: usize| -> f64 {
            let mut at = PortState::<f64>::zero();
            at.p = [p0 + dp0, p1, 0.0, 0.0];
            at.internal[0] = x + dx;
            let e = v.evaluate(&at);
            [e.flow[1], e.internal_rate[0]][k]
        };
        for k in 0..2 {
            // ∂/∂p_in
            let mut at = PortState::<Dual64>::zero();
            at.p = [
                Dual64::new(p0, 1.0),
                Dual64::from(p1),
                Dual64::from(0.0),
                Dual64::from(0.0),
            ];
            at.internal[0] = Dual64::from(x);
            let e = v.evaluate(&at);
            let exact = [e.flow[1], e.internal_rate[0]][k].eps;
            let h = 1.0;
            let fd = (eval(h, 0.0, k) - eval(-h, 0.0, k)) / (2.0 * h);
            assert!(
                (exact - fd).abs() <= 1e-6 * exact.abs().max(1e-12 * fd.abs()).max(1e-300)
                    || (exact - fd).abs() < 1e-18,
                "p_in {p0}, output {k}: exact {exact:e}, fd {fd:e}"
            );
            // ∂/∂x
            let mut at = PortState::<Dual64>::zero();
            at.p = [
                Dual64::from(p0),
                Dual64::from(p1),
                Dual64::from(0.0),
                Dual64::from(0.0),
            ];
            at.internal[0] = Dual64::new(x, 1.0);
            let e = v.evaluate(&at);
            let exact = [e.flow[1], e.internal_rate[0]][k].eps;
            let h = 1e-6;
            let fd = (eval(0.0, h, k) - eval(0.0, -h, k)) / (2.0 * h);
            assert!(
                (exact - fd).abs() <= 1e-6 * exact.abs().max(1e-300),
                "p_in {p0}, output {k} by x: exact {exact:e}, fd {fd:e}"
            );
        }
    }
}

#[test]
fn relief_poppet_steady_state_is_the_static_valve() {
    let v = lagged(5e-3);
    let mut stat = v.clone();
    stat.poppet = None;
    for p0 in [1.0e7, 1.4e7 + 5e4, 1.5e7, 1.7e7] {
        let mut at = PortState::<f64>::zero();
        at.p = [p0, 1e5, 0.0, 0.0];
        let mut x = at.internal;
        v.steady_internal(&at, &mut x);
        at.internal = x;
        let e = v.evaluate(&at);
        let q_static = stat.evaluate(&at).flow[1];
        assert!(
            (e.flow[1] - q_static).abs() <= 1e-15 * q_static.abs().max(1e-300),
            "{p0}: {} vs {q_static}",
            e.flow[1]
        );
        assert_eq!(e.internal_rate[0], 0.0, "ẋ = 0 at steady state");
    }
    // x_s = 1 at the rated point p_cr + Δp_override + w/2
    let lag = v.poppet.unwrap();
    let xr: f64 = relief_valve::static_opening(&v, &lag, 1.4e7 + 1e6 + 0.7e5);
    assert!((xr - 1.0).abs() < 1e-12, "x_s at the rated point: {xr}");
}

#[test]
fn relief_poppet_dissipates_at_every_opening_and_pressure() {
    let v = lagged(5e-3);
    for p0 in [-1e6, 0.0, 1e6, 1.4e7, 1.6e7] {
        for x in [0.0, 0.1, 1.0, 1.5] {
            let mut at = PortState::<f64>::zero();
            at.p = [p0, 1e5, 0.0, 0.0];
            at.internal[0] = x;
            let e = v.evaluate(&at);
            let pw = v.power(&at, &e);
            assert!(pw.dissipated_w >= 0.0, "p {p0}, x {x}: {}", pw.dissipated_w);
            assert_eq!(pw.stored_j, 0.0);
        }
    }
}

#[test]
fn relief_poppet_step_response_reaches_63_percent_at_tau() {
    // Δp fixed by the pump and the tank; the poppet starts seated (x = 0) and opens towards
    // x_s with ẋ = (x_s − x)/τ: x(τ) = x_s (1 − e⁻¹) ≈ 0.632 x_s. Δt = τ/20.
    let tau = 0.02;
    let model = hydraulink::compile(&bench(tau, tau / 20.0, "penalty")).unwrap();
    let i = model.layout.internal.start;
    assert_eq!(model.layout.names[i], "relief.poppet");
    assert_eq!(model.layout.units[i], "-");
    let mut sim = Simulation::new(model).unwrap();
    let xs = sim.state().internal[0];
    // x_s from the law, independently: G ψ(Δp − p_cr) / (a_r Δp), ψ linear past the onset
    let (dp, p_cr, w) = (1.6e7 - 1e5, 1.4e7, 1.4e5);
    let expect = (1e-3 / 1e6) * (dp - p_cr - 0.5 * w) / (1e-3 / (p_cr + 1e6 + 0.5 * w) * dp);
    assert!((xs - expect).abs() < 1e-12, "initial x {xs} = x_s {expect}");
    let mut st = sim.state().clone();
    st.internal[0] = 0.0;
    st.internal_rate[0] = xs / tau;
    sim.set_state(st);
    for _ in 0..20 {
        sim.step().unwrap();
    }
    let frac = sim.state().internal[0] / xs;
    let exact = 1.0 - (-1.0f64).exp();
    // the trapezoidal rule's error after one τ at Δt = τ/20: its amplification
    // (1 − h/2)/(1 + h/2) = e^(−h (1 + h²/12 + …)), h = 1/20, so x(τ)/x_s is off by about
    // e⁻¹ · 20 h³/12 ≈ 7.7e-5; 2e-4 bounds it
    assert!(
        (frac - exact).abs() < 2e-4,
        "x(τ)/x_s = {frac}, 1 − e⁻¹ = {exact}"
    );
    // and exactly the trapezoidal recursion (to round-off)
    let r: f64 = (1.0 - 0.025) / (1.0 + 0.025);
    assert!((frac - (1.0 - r.powi(20))).abs() < 1e-12, "{frac}");
    // the flow passes the opening it has: Q = a_r x Δp, in the element's output
    let labels = sim.output_labels();
    let mut row = vec![0.0; labels.len()];
    sim.output_row(&mut row);
    let col = |l: &str| row[labels.iter().position(|x| x == l).unwrap()];
    assert_eq!(col("relief.poppet"), sim.state().internal[0]);
    let a_r = 1e-3 / (p_cr + 1e6 + 0.5 * w);
    assert!((col("relief.flow") - a_r * col("relief.poppet") * dp).abs() < 1e-15);
}

#[test]
fn boom_with_poppet_lag_tends_to_the_static_valve_as_tau_shrinks() {
    // the supply pressure Vp and the relief flow of the lagged valve approach the static
    // valve's as τ → Δt/2 (the smallest τ allowed); the deviation shrinks with τ
    let stat = run(hydraulink::compile(&boom(None, 1e-3, 3.5)).unwrap());
    let dev = |tau: f64| {
        let lag = run(hydraulink::compile(&boom(Some(tau), 1e-3, 3.5)).unwrap());
        let (a, b) = (lag.col("Vp.p"), stat.col("Vp.p"));
        let dp = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        let (a, b) = (lag.col("relief.flow"), stat.col("relief.flow"));
        let dq = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        (dp, dq)
    };
    let (p_small, q_small) = dev(5e-4);
    let (p_big, _) = dev(2e-2);
    // fastest change of the static valve's flow, max |ΔQ_s|/Δt [m³/s²]
    let q = stat.col("relief.flow");
    let rate = q
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(0.0, f64::max)
        / 1e-3;
    eprintln!(
        "Vp deviation: τ = 0.5 ms {p_small:.3e} Pa, τ = 20 ms {p_big:.3e} Pa; flow {q_small:.3e} \
         m³/s, τ max|Q̇_s| {:.3e} m³/s",
        5e-4 * rate
    );
    // Vp: measured 6.7e3 Pa at τ = 0.5 ms, 4.4e-4 of the 15.3 MPa relief pressure; 1e-3 bounds it
    assert!(
        p_small < 1e-3 * 1.53e7,
        "Vp off by {p_small} Pa at τ = 0.5 ms"
    );
    // flow: a first-order lag trails a ramp by τ × its slope, so the deviation is bounded by
    // τ max|Q̇_s| (measured: 2.33e-5 against 2.46e-5 m³/s, 2 % of the 1.1 L/s peak)
    assert!(
        q_small < 5e-4 * rate,
        "relief flow off by {q_small} m³/s at τ = 0.5 ms"
    );
    // deviation ∝ τ: 40× the lag, measured 36× the Vp deviation
    assert!(
        p_big > 10.0 * p_small,
        "a slower poppet lags more: {p_big} vs {p_small}"
    );
}

#[test]
fn boom_with_poppet_lag_energy_balance_and_dissipation() {
    // models/boom.toml with τ = 5 ms: the mechanical drift stays second order in Δt (as the
    // static boom's, `invariants::boom`), and the valve only dissipates
    let a = run(hydraulink::compile(&boom(Some(5e-3), 1e-3, 6.0)).unwrap());
    let b = run(hydraulink::compile(&boom(Some(5e-3), 5e-4, 6.0)).unwrap());
    let (da, db) = (
        max_abs(&a.col("energy.drift")),
        max_abs(&b.col("energy.drift")),
    );
    let work = max_abs(&a.col("energy.actuator_work"));
    assert!(da < 1e-4 * work, "drift {da} J against {work} J of work");
    assert!(da / db > 3.5, "drift ratio {} (second order: 4)", da / db);
    // Q Δp ≥ 0 at every row (the tank at 1 bar), and the dissipated energy never decreases
    let (vp, q, x) = (a.col("Vp.p"), a.col("relief.flow"), a.col("relief.poppet"));
    assert!(max_abs(&q) > 1e-4, "the relief valve opens");
    assert!(x.iter().all(|x| *x >= 0.0), "the opening stays ≥ 0");
    for (k, (p, q)) in vp.iter().zip(&q).enumerate() {
        assert!(
            (p - 1e5) * q >= 0.0,
            "row {k}: Δp {} Pa, Q {q} m³/s",
            p - 1e5
        );
    }
    let d = a.col("relief.energy_dissipated");
    assert!(d.windows(2).all(|w| w[1] >= w[0]), "dissipation decreases");
    assert!(d.last().unwrap() > &1e3, "the relief valve dissipates");
}

#[test]
fn poppet_lag_is_rejected_by_every_other_formulation_by_name() {
    for f in [
        Formulation::DoubleStep,
        Formulation::GlobalAli3p,
        Formulation::GlobalI1al,
        Formulation::KinematicGuidance,
        Formulation::Multirate,
    ] {
        let mut spec = boom(Some(5e-3), 1e-3, 1.0);
        spec.solver.formulation = f;
        let e = hydraulink::compile(&spec).expect_err("rejected");
        assert_eq!(
            e.path,
            "elements[2].poppet_time_constant_s",
            "{}: {e}",
            f.name()
        );
        assert_eq!(e.element, "relief valve 'relief'");
        assert!(
            e.message
                .contains(&format!("not supported by formulation '{}'", f.name())),
            "{e}"
        );
    }
    // τ < Δt/2: the trapezoidal rule would overshoot below a closed poppet
    let e = hydraulink::compile(&boom(Some(4e-4), 1e-3, 1.0)).expect_err("rejected");
    assert_eq!(e.path, "elements[2].poppet_time_constant_s", "{e}");
    let e = hydraulink::compile(&boom(Some(-1.0), 1e-3, 1.0)).expect_err("rejected");
    assert_eq!(e.path, "elements[2].poppet_time_constant_s", "{e}");
}

#[test]
fn poppet_lag_is_a_state_of_linearize() {
    use hydraulink::linearize::exact::{linearize, ExactOptions};
    use hydraulink::linearize::finite_difference::{self, StepKind};
    use hydraulink::linearize::OperatingPoint;
    let model = hydraulink::compile(&boom(Some(5e-3), 1e-3, 1.0)).unwrap();
    let sim = Simulation::new(model.clone()).unwrap();
    let pt = OperatingPoint::from_state(sim.state());
    assert_eq!(pt.internal, sim.state().internal);
    let lin = linearize(&model, &pt, &ExactOptions::default()).expect("linearized");
    assert_eq!(
        lin.ss.states.last().map(String::as_str),
        Some("relief.poppet")
    );
    let fd = finite_difference::linearize(&model, &pt, 1e-7, StepKind::Relative, &[], &[])
        .expect("linearized");
    assert_eq!(fd.states, lin.ss.states);
}

#[test]
fn non_finite_poppet_state_is_named_by_the_state_check() {
    let model = hydraulink::compile(&boom(Some(5e-3), 1e-3, 1.0)).unwrap();
    let mut sim = Simulation::new(model).unwrap();
    let mut st = sim.state().clone();
    st.internal[0] = f64::NAN;
    sim.set_state(st);
    match sim.step() {
        Err(StepError::NonFinite { equation, .. }) => assert_eq!(equation, "relief.poppet"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn relief_valve_without_lag_has_no_internal_state() {
    let model = model_of("boom");
    assert!(model.layout.internal.is_empty());
    assert!(model.elements().iter().all(|e| e.n_internal() == 0));
    let sim = Simulation::new(model).unwrap();
    assert!(!sim.output_labels().iter().any(|l| l.contains("poppet")));
}

#[test]
fn boom_with_poppet_lag_restarts_bit_identically_from_a_cloned_state() {
    // A steps 2500 times (into the stop, relief open); B, never stepped, takes A's state; both
    // step 500 more: the poppet state and its rate travel with the state
    let model = hydraulink::compile(&boom(Some(5e-3), 1e-3, 6.0)).unwrap();
    let mut a = Simulation::new(model.clone()).unwrap();
    for _ in 0..2500 {
        a.step().unwrap();
    }
    let mut b = Simulation::new(model).unwrap();
    b.set_state(a.state().clone());
    for _ in 0..500 {
        a.step().unwrap();
        b.step().unwrap();
    }
    assert!(a.state().internal[0] > 0.0, "the poppet is open");
    assert_eq!(a.state(), b.state());
}

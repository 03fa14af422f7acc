//! The boom of `models/boom.toml`: the elements of the element model in a run. The cylinder is
//! driven into its extended end stop and held there; the relief valve limits the supply; the
//! energy balance, with the stop's stored and dissipated energies, converges at second order.

use crate::common::*;
use hydraulink::model::spec::Formulation;
use hydraulink::{Simulation, StepError};

fn boom(dt: f64, duration: f64) -> hydraulink::ModelSpec {
    let mut s = spec_of("boom");
    s.solver.step_s = dt;
    s.solver.duration_s = duration;
    s
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

#[test]
fn boom_is_held_in_its_end_stop_and_the_drift_is_second_order() {
    let a = run(hydraulink::compile(&boom(1e-3, 6.0)).unwrap());
    let b = run(hydraulink::compile(&boom(5e-4, 6.0)).unwrap());
    // held in the extended stop from t ≈ 2.3 s until the valve reverses at 4.5 s
    for t in [2.6, 3.5, 4.4] {
        let pen = a.at("cylinder_stops.penetration", t);
        let f = a.at("cylinder_stops.force", t);
        assert!(
            // the default largest penetration: 5 w = 5 · stroke/500 = 6 mm
            pen > 0.0 && pen < 6e-3,
            "t {t}: penetration {pen}"
        );
        assert!(f < -1e4, "t {t}: the stop pulls the rod back: {f} N");
        assert!(a.at("z1.qd", t).abs() < 1e-6, "t {t}: boom at rest");
    }
    // the stop carries the piston force: F_stop + p_A A_A − p_B A_B − F_μ = 0 at rest
    let (pa, pb) = (a.at("VA.p", 3.5), a.at("VB.p", 3.5));
    let aa = std::f64::consts::PI * 0.08f64.powi(2) / 4.0;
    let ab = aa - std::f64::consts::PI * 0.045f64.powi(2) / 4.0;
    let f_hyd = pa * aa - pb * ab;
    let f_stop = a.at("cylinder_stops.force", 3.5);
    // the boom's weight on the cylinder is a few kN against ~75 kN from the oil
    assert!(
        (f_hyd + f_stop).abs() < 0.15 * f_hyd,
        "{f_hyd} N hydraulic vs {f_stop} N stop"
    );
    // the relief valve caps the supply: p_cr + Δp_override (Q/Q_rated) + w/2 at the largest flow
    let vp = max_abs(&a.col("Vp.p"));
    let q = max_abs(&a.col("relief.flow"));
    assert!(q > 1e-4, "the relief valve opens ({q} m³/s)");
    // (relative to the tank at 1 bar)
    assert!(
        vp < 1e5 + 1.4e7 + 1e6 * q / 1e-3 + 0.5 * 1.4e5 + 1e3,
        "Vp peaks at {vp} Pa"
    );
    // check valve: no reverse flow
    assert!(a.col("check.flow").iter().all(|q| *q >= 0.0));
    // energy: KE + PE − W + D_μ + E_stop − E_stop(0) + D_stop stays at the integration error,
    // which is second order in Δt (measured: 0.50 J at 1 ms, 0.127 J at 0.5 ms, against 5.6 kJ
    // of hydraulic work and 72 J stored in the stop at impact)
    let (da, db) = (
        max_abs(&a.col("energy.drift")),
        max_abs(&b.col("energy.drift")),
    );
    let work = max_abs(&a.col("energy.actuator_work"));
    assert!(da < 1e-4 * work, "drift {da} J against {work} J of work");
    assert!(da / db > 3.5, "drift ratio {} (second order: 4)", da / db);
    assert!(max_abs(&a.col("cylinder_stops.energy_stored")) > 10.0);
    assert!(max_abs(&a.col("cylinder_stops.energy_dissipated")) > 10.0);
}

#[test]
fn boom_without_its_end_stop_stops_with_out_of_stroke() {
    let mut s = boom(1e-3, 3.0);
    s.elements.retain(|e| e.name() != "cylinder_stops");
    let mut sim = Simulation::new(hydraulink::compile(&s).unwrap()).unwrap();
    let err = loop {
        match sim.step() {
            Ok(_) => assert!(sim.time_s() < 3.0, "the cylinder should leave its stroke"),
            Err(e) => break e,
        }
    };
    assert!(matches!(err, StepError::OutOfStroke { .. }), "{err}");
}

#[test]
fn a_stop_too_soft_for_the_load_stops_with_its_diagnosis() {
    let mut s = boom(1e-3, 3.0);
    let text = "type = \"end_stop\"\nname = \"cylinder_stops\"\ncylinder = \"cylinder\"\nstiffness_n_m = 1.0e6\nmax_penetration_m = 0.01\n";
    let soft: hydraulink::elements::component::ComponentSpec = toml::from_str(text).unwrap();
    for e in s.elements.iter_mut() {
        if e.name() == "cylinder_stops" {
            *e = soft.clone();
        }
    }
    let mut sim = Simulation::new(hydraulink::compile(&s).unwrap()).unwrap();
    let err = loop {
        match sim.step() {
            Ok(_) => assert!(sim.time_s() < 3.0, "the soft stop should be overrun"),
            Err(e) => break e,
        }
    };
    let msg = err.to_string();
    assert!(
        matches!(err, StepError::EndStopOverrun { .. }) && msg.contains("cylinder_stops"),
        "{msg}"
    );
}

#[test]
fn boom_runs_under_every_formulation_that_carries_its_elements() {
    // 2.5 s: the lift and the impact on the stop. Deviations from the penalty run are bounded by
    // the formulations' own tolerances and orders; the impact makes them larger than on the
    // smooth 000 cases, so the bounds are those of a held position and a settled pressure.
    let reference = run(hydraulink::compile(&boom(1e-3, 2.5)).unwrap());
    for f in [
        Formulation::DoubleStep,
        Formulation::GlobalAli3p,
        Formulation::GlobalI1al,
        Formulation::Multirate,
    ] {
        let mut s = boom(1e-3, 2.5);
        s.solver.formulation = f;
        let r = run(hydraulink::compile(&s).unwrap());
        let dz = (r.at("z1.q", 2.5) - reference.at("z1.q", 2.5)).abs();
        let dp = (r.at("Vp.p", 2.5) - reference.at("Vp.p", 2.5)).abs();
        assert!(dz < 1e-4, "{}: Δz1 = {dz} rad", f.name());
        assert!(dp < 2e4, "{}: ΔVp = {dp} Pa", f.name());
        assert!(
            r.at("cylinder_stops.penetration", 2.5) > 0.0,
            "{}",
            f.name()
        );
    }
}

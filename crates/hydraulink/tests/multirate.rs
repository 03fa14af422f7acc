//! Multi-rate co-integration (004 §4) on the 000 four-bar against the monolithic penalty run.
//! Own binary: it also checks the step loop allocates nothing (thread-local counting allocator).

#[path = "common.rs"]
#[allow(dead_code)]
mod common;

use std::time::Instant;

use common::*;
use hydraulink::model::spec::{Formulation, HydraulicIntegrator};
use hydraulink::Simulation;

#[path = "support/alloc_counter.rs"]
mod alloc_counter;

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b.iter())
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

fn multirate_spec(integrator: HydraulicIntegrator, substeps: u32) -> hydraulink::ModelSpec {
    let mut spec = spec_of("fourbar");
    spec.solver.formulation = Formulation::Multirate;
    spec.solver.hydraulic_integrator = integrator;
    spec.solver.hydraulic_substeps = substeps;
    spec
}

/// Compares a multi-rate run with the penalty run: (max |Δz| [rad], max |Δp| [Pa]).
fn compare(unified: &Run, integrator: HydraulicIntegrator, substeps: u32) -> (f64, f64) {
    let t0 = Instant::now();
    let mr = run(hydraulink::compile(&multirate_spec(integrator, substeps)).unwrap());
    let wall = t0.elapsed().as_secs_f64();
    let mut dz: f64 = 0.0;
    for z in ["z1", "z2", "z3"] {
        let label = format!("{z}.q");
        dz = dz.max(max_diff(&unified.col(&label), &mr.col(&label)));
    }
    let mut dp: f64 = 0.0;
    for v in ["V1", "V2", "V3"] {
        let label = format!("{v}.p");
        dp = dp.max(max_diff(&unified.col(&label), &mr.col(&label)));
    }
    let c = mr.sim.workspace().counters;
    eprintln!(
        "multirate {integrator:?} × {substeps}: max |Δz| = {dz:.3e} rad, max |Δp| = {dp:.3e} Pa; \
         wall {wall:.3} s; iterations {}, tangents {}",
        c.iterations, c.tangents
    );
    (dz, dp)
}

#[test]
fn multirate_fourbar_matches_the_unified_run() {
    // 004 §4 / Fig. 4–6: multi-rate and unified solutions overlap. Bounds of issue 3: joints
    // 1e-4 rad, pressures 0.1 % of the pump pressure (7.6 MPa, 000 Table 1).
    let spec = spec_of("fourbar");
    let t0 = Instant::now();
    let unified = run(hydraulink::compile(&spec).unwrap());
    eprintln!(
        "unified: wall {:.3} s; iterations {}",
        t0.elapsed().as_secs_f64(),
        unified.sim.workspace().counters.iterations
    );
    let p_pump = 7.6e6;
    for (integrator, substeps) in [
        (HydraulicIntegrator::Trapezoidal, 10),
        (HydraulicIntegrator::ForwardEuler, 100),
    ] {
        let (dz, dp) = compare(&unified, integrator, substeps);
        assert!(dz < 1e-4, "{integrator:?}: joints differ by {dz} rad");
        assert!(
            dp < 1e-3 * p_pump,
            "{integrator:?}: pressures differ by {dp} Pa"
        );
    }
}

#[test]
fn multirate_one_trapezoidal_substep_is_the_monolithic_scheme() {
    // With N = 1 the hydraulic trapezoidal step over Δt with ṡ = (s_k+1 − s_k)/Δt is the
    // monolithic trapezoidal step up to the difference between the mean of the end rates and the
    // chord of s: the runs agree to the Newton tolerances (measured 9e-8 rad, 35 Pa).
    let unified = run(hydraulink::compile(&spec_of("fourbar")).unwrap());
    let (dz, dp) = compare(&unified, HydraulicIntegrator::Trapezoidal, 1);
    assert!(dz < 1e-6, "joints differ by {dz} rad");
    assert!(dp < 1e3, "pressures differ by {dp} Pa");
}

#[test]
fn multirate_step_loop_allocates_nothing() {
    for integrator in [
        HydraulicIntegrator::Trapezoidal,
        HydraulicIntegrator::ForwardEuler,
    ] {
        let mut spec = multirate_spec(integrator, 20);
        spec.solver.duration_s = 3.0;
        let mut sim = Simulation::new(hydraulink::compile(&spec).unwrap()).unwrap();
        let mut row = vec![0.0; sim.n_outputs()];
        sim.step().unwrap();
        let before = alloc_counter::allocations();
        for _ in 0..2900 {
            sim.step().unwrap();
            sim.output_row(&mut row);
        }
        let after = alloc_counter::allocations();
        assert_eq!(
            after - before,
            0,
            "{integrator:?}: {} allocations",
            after - before
        );
    }
}

/// Max |Δ| of the columns `labels` between two runs of the same model.
fn max_col_diff(a: &Run, b: &Run, labels: &[&str]) -> f64 {
    labels
        .iter()
        .fold(0.0f64, |m, l| m.max(max_diff(&a.col(l), &b.col(l))))
}

/// The excavator (issue 11's swing motor: nodes VS1, VS2, joint `swing`) under multi-rate: the
/// motor's flow is sub-integrated from its joint's segment (a shaft port, `circuit::Shaft`) and
/// its torque acts at p_k+1. Through the whole shipped cycle (boom, arm, bucket and swing moves,
/// 18 s) it stays near the monolithic penalty run: with one trapezoidal substep it is the
/// monolithic scheme to the Newton tolerances, as on the four-bar; with ten, within issue 3's
/// bounds. Its step loop allocates nothing.
#[test]
fn multirate_excavator_with_its_swing_motor_follows_the_penalty_run() {
    let spec = spec_of("excavator");
    let unified = run(hydraulink::compile(&spec).unwrap());
    let joints = ["swing.q", "z_boom.q", "z_arm.q"];
    let swing = ["VS1.p", "VS2.p"];
    let cylinders = ["V1.p", "V2.p", "V3.p", "V4.p", "V5.p", "V6.p"];
    // 0.1 % of the swing relief valves' 26.8 MPa (issue 3's pressure bound, per circuit)
    let p_bound = 1e-3 * 2.68e7;
    // (substeps, joint bound [rad], pressure bound [Pa]); measured 8.5e-8 rad, 8 Pa (swing),
    // 43 Pa (cylinders) at N = 1; 2.7e-6 rad, 1.2e4 Pa, 5.9e3 Pa at N = 10
    for (substeps, q_bound, p_bound) in [(1, 1e-6, 1e3), (10, 1e-4, p_bound)] {
        let mut mr_spec = spec.clone();
        mr_spec.solver.formulation = Formulation::Multirate;
        mr_spec.solver.hydraulic_substeps = substeps;
        let mr = run(hydraulink::compile(&mr_spec).unwrap());
        let dq = max_col_diff(&unified, &mr, &joints);
        let dps = max_col_diff(&unified, &mr, &swing);
        let dpc = max_col_diff(&unified, &mr, &cylinders);
        let turned = max_abs(&unified.col("swing.q"));
        eprintln!(
            "excavator multirate × {substeps}: max |Δq| {dq:.3e} rad (the house turns {turned:.3} \
             rad), swing motor volumes max |Δp| {dps:.3e} Pa, cylinder volumes {dpc:.3e} Pa"
        );
        assert!(turned > 1.0, "the cycle swings the house: {turned} rad");
        assert!(dq < q_bound, "× {substeps}: joints differ by {dq} rad");
        assert!(
            dps < p_bound && dpc < p_bound,
            "× {substeps}: pressures differ by {dps} Pa (swing), {dpc} Pa (cylinders)"
        );
        // (the pump line VP differs by up to 5e4 Pa in the first 20 ms, the same at N = 1 and
        // N = 10: the load-sensing pump's start-up, which the motor takes no part in)
    }
    // the step loop with the shaft port allocates nothing
    let mut mr_spec = spec;
    mr_spec.solver.formulation = Formulation::Multirate;
    mr_spec.solver.hydraulic_substeps = 10;
    let mut sim = Simulation::new(hydraulink::compile(&mr_spec).unwrap()).unwrap();
    let mut row = vec![0.0; sim.n_outputs()];
    sim.step().unwrap();
    let before = alloc_counter::allocations();
    for _ in 0..500 {
        sim.step().unwrap();
        sim.output_row(&mut row);
    }
    assert_eq!(alloc_counter::allocations() - before, 0, "allocations");
}

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

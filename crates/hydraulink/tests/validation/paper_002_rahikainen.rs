//! 002 Pub I: Rahikainen's parallelogram four-bar (Fig. 4–5, Tables 1–3) with the penalty
//! formulation.

use crate::common::*;

fn with_step(dt: f64) -> Run {
    let mut spec = spec_of("fourbar_rahikainen");
    spec.solver.step_s = dt;
    run(hydraulink::compile(&spec).unwrap())
}

#[test]
fn paper_002_rahikainen_statics() {
    // 002 eqs. 53–54: F_s0 = (√3/2) g (m1 + 2 m2 + (L3/L1) m3) = 6584.2 N,
    // p1 = (F_s0 + A2 p2)/A1 = 4.1400 MPa with p2 = 3.5 MPa; p3 = p1 (no throttle flow).
    let mut spec = spec_of("fourbar_rahikainen");
    spec.solver.duration_s = 0.1;
    let r = run(hydraulink::compile(&spec).unwrap());
    let f0 = r.col("cylinder.force")[0];
    let expected = 3f64.sqrt() / 2.0 * 9.81 * (50.0 + 2.0 * 50.0 + 2.5 * 250.0);
    assert!(
        (f0 - expected).abs() < 1e-6 * expected,
        "F_s0 = {f0} vs {expected}"
    );
    let p1 = r.col("V1.p")[0];
    assert!((p1 - 4.140e6).abs() < 1e3, "p1 = {p1}");
    assert_eq!(r.col("V3.p")[0], p1);
}

#[test]
fn paper_002_rahikainen_converges_to_8ms_with_iterations_growing() {
    // 002 Pub I: converges up to Δt = 8 ms; average iterations grow with the step (Table 3:
    // 1.63 at 0.5 ms … 2.37 at 5 ms); peak energy drift 9.6 J at 8 ms (Fig. 8).
    let mut prev = 0.0;
    for dt in [0.5e-3, 1e-3, 2e-3, 4e-3, 8e-3] {
        let r = with_step(dt);
        let it = r.col("newton.iterations");
        let avg = it[1..].iter().sum::<f64>() / (it.len() - 1) as f64;
        let drift = max_abs(&r.col("energy.drift"));
        eprintln!(
            "Δt = {:.1} ms: avg iterations {avg:.2}, peak drift {drift:.3} J",
            dt * 1e3
        );
        assert!(
            avg >= prev - 0.02,
            "iterations should grow with the step: {prev} → {avg}"
        );
        prev = avg;
        if dt == 8e-3 {
            assert!(drift <= 10.0, "peak drift {drift} J at 8 ms");
        }
    }
}

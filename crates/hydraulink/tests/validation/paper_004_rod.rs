//! 004 §5: Naya's rod with an open-centre valve (Fig. 2, eqs. 27–38), Δt = 10 ms.

use crate::common::*;

#[test]
fn paper_004_rod_starts_in_the_papers_static_equilibrium() {
    // 004 eq. 32 (closed form in reference note 004-B): κ0 = 0.4646082, p1 = 3.321769 MPa,
    // p2 = 4.378231 MPa; the static force (2M + m) g = 6867 N.
    let mut spec = spec_of("rod_naya");
    spec.solver.duration_s = 2.0;
    let r = run(hydraulink::model::compile(&spec).unwrap());
    let st0 = &r.rows[0];
    let col = |l: &str| r.labels.iter().position(|x| x == l).unwrap();
    assert!(
        (st0[col("valve.opening")] - 0.4646082).abs() < 1e-6,
        "κ0 = {}",
        st0[col("valve.opening")]
    );
    assert!(
        (st0[col("V1.p")] - 3.321769e6).abs() < 5.0,
        "p1 = {}",
        st0[col("V1.p")]
    );
    assert!(
        (st0[col("V2.p")] - 4.378231e6).abs() < 5.0,
        "p2 = {}",
        st0[col("V2.p")]
    );
    assert!((st0[col("cylinder.force")] - 6867.0).abs() < 1e-3 * 6867.0);
    // and it stays there until κ moves at 2 s
    let z = r.col("z1.q");
    let dev = z.iter().map(|x| (x - z[0]).abs()).fold(0.0, f64::max);
    assert!(dev < 1e-9, "moved by {dev} rad in equilibrium");
}

#[test]
fn paper_004_rod_motion_and_energy_at_10ms() {
    // 004 §5: the total energy varies by ≈ 1 J while PE and actuator work change by ≈ 1000 J
    // (Fig. 8); Newton needs 2–3 iterations at the switching instants and 1 elsewhere.
    let r = run(model_of("rod_naya"));
    let drift = max_abs(&r.col("energy.drift"));
    let work = r
        .col("energy.actuator_work")
        .iter()
        .fold(f64::MIN, |m, &x| m.max(x));
    eprintln!("rod: drift {drift:.3} J, peak work {work:.1} J");
    assert!(drift < 1.0, "energy drift {drift} J");
    // κ0 − 0.01 extends the actuator until 6 s, κ0 + 0.01 retracts it (reference note 004-B/C:
    // s ≈ 0.588 m at 6 s, ≈ 0.571 m at 10 s with β = 1 GPa).
    let s = r.col("cylinder.length");
    let (s6, s10) = (r.at("cylinder.length", 6.0), r.at("cylinder.length", 10.0));
    assert!((s[0] - 0.5).abs() < 1e-12);
    assert!(s6 > 0.58 && s6 < 0.60, "s(6) = {s6}");
    assert!(s10 < s6 && s10 > 0.56, "s(10) = {s10}");
}

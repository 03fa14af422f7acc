//! 000 §5–6, four-bar (Fig. 4, Table 1), Δt = 1 ms, 10 s.

use crate::common::*;
use std::sync::OnceLock;

fn fourbar() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| run(model_of("fourbar")))
}

#[test]
fn paper_000_fourbar_initial_pressures_follow_the_papers_statics() {
    // 000 §5: F_s0 = √2 g (3 m1 + 2 m2 + m3), p1 = p2 = (F_s0 + p3 A3)/A2 with p3 = 3.5 MPa.
    let g = 9.81;
    let fs0 = 2f64.sqrt() * g * (3.0 * 225.0 + 2.0 * 35.0 + 50.0);
    let a2 = std::f64::consts::PI * 0.08f64.powi(2) / 4.0;
    let a3 = a2 - std::f64::consts::PI * 0.035f64.powi(2) / 4.0;
    let p_expected = (fs0 + 3.5e6 * a3) / a2; // 5.0243 MPa
    let r = fourbar();
    for v in ["V1.p", "V2.p"] {
        let p0 = r.col(v)[0];
        assert!((p0 - p_expected).abs() < 1e-3, "{v}: {p0} vs {p_expected}");
    }
    assert!((r.col("cylinder.force")[0] - fs0).abs() < 1e-6 * fs0);
}

#[test]
fn paper_000_fourbar_starts_in_equilibrium() {
    // Issue 2: while the valve is closed (0–1 s) the joint coordinates change by < 1e-6 rad.
    let r = fourbar();
    for j in ["z1.q", "z2.q", "z3.q"] {
        let c = r.col(j);
        let k1 = (1.0 / 1e-3) as usize;
        let dev = c[..=k1]
            .iter()
            .map(|x| (x - c[0]).abs())
            .fold(0.0, f64::max);
        assert!(dev < 1e-6, "{j} moved by {dev} rad before the valve opened");
    }
}

#[test]
fn paper_000_fourbar_energy_drift_below_0_1_percent_of_peak_work() {
    // 000 §6.2: 0.84 J of 982.95 J (0.09 %); acceptance: ≤ 0.1 %.
    let r = fourbar();
    let drift = max_abs(&r.col("energy.drift"));
    let work = r
        .col("energy.actuator_work")
        .iter()
        .fold(f64::MIN, |m, &x| m.max(x));
    eprintln!("four-bar: peak |drift| {drift:.4} J, peak actuator work {work:.2} J (paper 0.84 J, 982.95 J)");
    assert!(
        drift <= 1e-3 * work,
        "drift {drift} J vs peak work {work} J"
    );
}

#[test]
fn paper_000_fourbar_peak_work_within_the_notes_band() {
    // Paper 982.95 J. τ and the friction law are not given in 000; reference note 000-C asks for
    // ±35 % until they are pinned down (its 1-DOF re-simulation without friction gives 1300 J).
    // README "Validation" explains our 1274 J. The paper's work is ∫ F ṡ dt with F including
    // the friction (note 003b E.11): the net work, not the hydraulic `energy.actuator_work`.
    let r = fourbar();
    let work = net_work(r).iter().fold(f64::MIN, |m, &x| m.max(x));
    assert!((work - 982.95).abs() <= 0.35 * 982.95, "peak work {work} J");
}

#[test]
fn paper_000_fourbar_constraints_and_iterations() {
    // Issue 2: ‖Φ‖ < 1e-6 m; average Newton iterations ≤ 2 (000 §6.4: 1.56).
    let r = fourbar();
    let viol = max_abs(&r.col("constraint.violation"));
    assert!(viol < 1e-6, "constraint violation {viol}");
    let it = r.col("newton.iterations");
    let avg = it[1..].iter().sum::<f64>() / (it.len() - 1) as f64;
    eprintln!("four-bar: avg Newton iterations {avg:.3}, peak ‖Φ‖ {viol:.3e} m");
    assert!(avg <= 2.0, "average iterations {avg}");
}

#[test]
fn paper_000_fourbar_work_cycle_lifts_then_lowers() {
    // 000 §6.1: lifted between 1 and 2.5 s, lowered between 5 and 8 s.
    let r = fourbar();
    let s = |t| r.at("cylinder.length", t);
    let pe = |t| r.at("energy.potential", t);
    assert!(s(2.5) > s(1.0) + 0.05, "cylinder extends while lifting");
    assert!(
        pe(2.5) > pe(1.0) + 100.0,
        "structure gains potential energy while lifting"
    );
    assert!((s(5.0) - s(3.0)).abs() < 1e-3, "holds between 2.5 and 5 s");
    assert!(s(8.0) < s(5.0) - 0.1, "cylinder retracts while lowering");
    assert!(
        pe(8.0) < pe(5.0) - 100.0,
        "structure loses potential energy while lowering"
    );
    assert!((s(10.0) - s(9.0)).abs() < 1e-3, "holds after 8 s");
    // the lift is monotone
    let v = r.col("cylinder.velocity");
    let (k1, k2) = (1100, 2500);
    assert!(v[k1..k2].iter().all(|&x| x > 0.0));
}

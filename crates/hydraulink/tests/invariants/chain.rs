//! The n-link hydraulically actuated chain of the scaling benchmark (`support/chain.rs`): it
//! initializes, runs, and keeps its energy balance and its statics for every size benchmarked.

use crate::common::*;

#[path = "../support/chain.rs"]
mod generator;

#[test]
fn chain_models_run_with_a_closed_energy_balance() {
    for n in [2, 8, 32] {
        let spec = spec_from(&generator::chain_toml(n, 2.0));
        let r = run(hydraulink::model::compile(&spec).expect("chain model compiles"));
        let work = max_abs(&r.col("energy.actuator_work"));
        let drift = max_abs(&r.col("energy.drift"));
        let moved = (1..=n)
            .map(|i| {
                let z = r.col(&format!("z{i}.q"));
                z.iter().fold(0.0f64, |m, v| m.max(v.abs()))
            })
            .fold(f64::INFINITY, f64::min);
        eprintln!(
            "chain n = {n}: peak actuator work {work:.3} J, peak drift {drift:.2e} J, \
             smallest joint excursion {moved:.3} rad"
        );
        // every joint is driven, and the work goes into kinetic energy and seal friction only:
        // the balance KE + PE − W closes to the integrator's error (≤ 0.1 % of the work)
        assert!(moved > 1e-3, "n = {n}: a joint did not move ({moved} rad)");
        assert!(work > 0.0, "n = {n}: no actuator work");
        assert!(
            drift < 1e-3 * work,
            "n = {n}: drift {drift} J, work {work} J"
        );
    }
}

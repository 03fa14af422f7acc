//! The n-link hydraulically actuated chain of the scaling benchmark (`support/chain.rs`): it
//! initializes, runs, and keeps its energy balance and its statics for every size benchmarked.

use crate::common::*;

#[path = "../support/chain.rs"]
mod generator;

#[test]
fn chain_models_run_with_a_closed_energy_balance() {
    for n in [2, 8, 32] {
        let spec = spec_from(&generator::chain_toml(n, 2.0));
        let r = run(hydraulink::compile(&spec).expect("chain model compiles"));
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

/// Runs `model` for `steps` steps twice from the same initial state: with the workspace as
/// built (tree passes for M′ z̈ and the Schur-reduced tangent where they apply, or forced on by
/// `force_schur`), and on the plain dense path (formed M′, dense LU of the whole tangent).
/// Returns the largest |Δz| [rad], |Δp| [Pa], |ΔKE| [J], and whether the Schur path was used.
fn fast_vs_dense(
    model: &hydraulink::Model,
    steps: usize,
    force_schur: bool,
) -> (f64, f64, f64, bool) {
    use hydraulink::pipeline::{initialization, step};
    use hydraulink::Workspace;
    let st0 = initialization::initialize(model).expect("initializes");
    let (mut fast, mut dense) = (st0.clone(), st0);
    let mut wf = Workspace::new(model);
    if force_schur {
        wf.penalty_mut().expect("a penalty workspace").schur.enabled = true;
    }
    let mut wd = Workspace::new(model);
    wd.ev.dynamics.form_mass = true;
    wd.evd.dynamics.form_mass = true;
    wd.penalty_mut().expect("a penalty workspace").schur.enabled = false;
    let (mut dz, mut dp, mut dke, mut used) = (0.0f64, 0.0f64, 0.0f64, false);
    for _ in 0..steps {
        let rf = step::step(model, &mut fast, &mut wf).expect("fast path steps");
        used |= wf.penalty().expect("a penalty workspace").schur.is_active();
        let rd = step::step(model, &mut dense, &mut wd).expect("dense path steps");
        for (a, b) in fast.z.iter().zip(dense.z.iter()) {
            dz = dz.max((a - b).abs());
        }
        for (a, b) in fast.p.iter().zip(dense.p.iter()) {
            dp = dp.max((a - b).abs());
        }
        dke = dke.max((rf.kinetic_j - rd.kinetic_j).abs());
    }
    (dz, dp, dke, used)
}

/// From states along a dense-path run of `model` (every `every` steps, `samples` times): one step
/// from the same state with fresh workspaces (so both compute their tangent there) on the fast
/// path (Schur reduction forced on) and on the dense path. Returns the largest |Δz| [rad] and
/// |Δp| [Pa] of the two Newton solutions, and whether the Schur path was used.
fn one_step_fast_vs_dense(
    model: &hydraulink::Model,
    every: usize,
    samples: usize,
) -> (f64, f64, bool) {
    use hydraulink::pipeline::{initialization, step};
    use hydraulink::Workspace;
    let dense_ws = || {
        let mut w = Workspace::new(model);
        w.ev.dynamics.form_mass = true;
        w.evd.dynamics.form_mass = true;
        w.penalty_mut().expect("a penalty workspace").schur.enabled = false;
        w
    };
    let mut st = initialization::initialize(model).expect("initializes");
    let mut wrun = dense_ws();
    let (mut dz, mut dp, mut used) = (0.0f64, 0.0f64, false);
    for _ in 0..samples {
        for _ in 0..every {
            step::step(model, &mut st, &mut wrun).expect("dense path steps");
        }
        let (mut a, mut b) = (st.clone(), st.clone());
        let mut wf = Workspace::new(model);
        wf.penalty_mut().expect("a penalty workspace").schur.enabled = true;
        step::step(model, &mut a, &mut wf).expect("fast path steps");
        used |= wf.penalty().expect("a penalty workspace").schur.is_active();
        step::step(model, &mut b, &mut dense_ws()).expect("dense path steps");
        for (x, y) in a.z.iter().zip(b.z.iter()) {
            dz = dz.max((x - y).abs());
        }
        for (x, y) in a.p.iter().zip(b.p.iter()) {
            dp = dp.max((x - y).abs());
        }
    }
    (dz, dp, used)
}

/// The O(n) tree passes for M′ z̈ and the Schur-reduced tangent (docs/theory chapter 3) give the
/// trajectory of the plain dense path to within the Newton tolerances on the 16-link chain (both
/// in use), and the same Newton solution of a step on the quick-return (a loop model: dense M′
/// for the projections, the Schur reduction forced on, with D not diagonal: a throttle couples
/// two volumes). Over a whole run the quick-return's two trajectories part by more than one
/// step's tolerance (the converged iterates differ by O(tolerance) each step and its oil
/// columns carry the difference on), so there the comparison is step by step.
#[test]
fn tree_passes_and_schur_tangent_match_the_dense_path() {
    let spec = spec_from(&generator::chain_toml(16, 0.3));
    let m = hydraulink::compile(&spec).expect("chain model compiles");
    let (dz, dp, dke, used) = fast_vs_dense(&m, 300, false);
    eprintln!("chain16: max |dz| {dz:.2e} rad, |dp| {dp:.2e} Pa, |dKE| {dke:.2e} J");
    assert!(used, "the chain's tangent was not Schur-reduced");
    assert!(dz <= m.solver.tol_position, "chain: |dz| = {dz}");
    assert!(dp <= m.solver.tol_pressure_pa, "chain: |dp| = {dp}");
    assert!(dke <= 1e-9, "chain: |dKE| = {dke}");
    let m = model_of("quickreturn");
    let (dz, dp, used) = one_step_fast_vs_dense(&m, 200, 10);
    eprintln!("quickreturn, one step: max |dz| {dz:.2e} rad, |dp| {dp:.2e} Pa");
    assert!(used, "the quick-return's tangent was not Schur-reduced");
    assert!(dz <= m.solver.tol_position, "quick-return: |dz| = {dz}");
    assert!(dp <= m.solver.tol_pressure_pa, "quick-return: |dp| = {dp}");
    // LuGre seal: a friction state joins the pressures in the eliminated block
    let m = model_of("fourbar_friction");
    let (dz, dp, used) = one_step_fast_vs_dense(&m, 200, 10);
    eprintln!("fourbar_friction, one step: max |dz| {dz:.2e} rad, |dp| {dp:.2e} Pa");
    assert!(
        used,
        "the friction four-bar's tangent was not Schur-reduced"
    );
    assert!(
        dz <= m.solver.tol_position,
        "friction four-bar: |dz| = {dz}"
    );
    assert!(
        dp <= m.solver.tol_pressure_pa,
        "friction four-bar: |dp| = {dp}"
    );
}

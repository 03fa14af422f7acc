//! Double-step semi-recursive formulation with coordinate partitioning (000 §2.2, issue 3):
//! agreement with the penalty formulation on both shipped models, the paper's partition,
//! constraint satisfaction, energy, re-selection through a singular configuration, redundant
//! 3-D cut joints, the exact tangent, and determinism of a cloned state.

#[path = "common.rs"]
#[allow(dead_code)] // shared helpers, not all used here
mod common;

use common::*;
use hydraulink::formulations::double_step;
use hydraulink::model::spec::{CutJointKind, Formulation};
use hydraulink::pipeline::initialization::initialize;
use hydraulink::pipeline::workspace::FormulationWorkspace;
use hydraulink::{ModelSpec, Simulation, Workspace};

fn double_step_spec(mut s: ModelSpec) -> ModelSpec {
    s.solver.formulation = Formulation::DoubleStep;
    s
}

fn run_spec(s: &ModelSpec) -> Run {
    run(hydraulink::compile(s).expect("model compiles"))
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Compares a double-step run of a shipped model with the penalty run over 10 s at 1 ms.
fn compare_with_penalty(name: &str, independent: f64, paper_iterations: f64) {
    let penalty = run(model_of(name));
    let ds = run_spec(&double_step_spec(spec_of(name)));
    let m = ds.sim.model();
    let n_steps = ds.rows.len() - 1;
    let mut worst_q: f64 = 0.0;
    for a in &m.axes {
        let c = format!("{}.q", a.name);
        worst_q = worst_q.max(max_diff(&ds.col(&c), &penalty.col(&c)));
    }
    let mut worst_p: f64 = 0.0;
    for v in &m.hydraulics.volumes {
        let c = format!("{}.p", v.name);
        worst_p = worst_p.max(max_diff(&ds.col(&c), &penalty.col(&c)));
    }
    let viol = max_abs(&ds.col("constraint.violation")[1..]);
    let drift = max_abs(&ds.col("energy.drift"));
    let work = max_abs(&ds.col("energy.actuator_work"));
    let drift_penalty = max_abs(&penalty.col("energy.drift"));
    let part = ds.col("partition.independent");
    let iters = ds.col("newton.iterations");
    let avg = iters[1..].iter().sum::<f64>() / n_steps as f64;
    let max_it = iters.iter().fold(0.0f64, |a, &b| a.max(b));
    let avg_penalty = penalty.col("newton.iterations")[1..].iter().sum::<f64>() / n_steps as f64;
    let max_penalty = max_abs(&penalty.col("newton.iterations"));
    let st = ds.sim.state();
    let c = ds
        .sim
        .workspace()
        .double_step()
        .expect("a double-step workspace")
        .counters;
    eprintln!(
        "{name}: max |Δz| {worst_q:.2e} rad, max |Δp| {worst_p:.3e} Pa, max ‖Φ‖ {viol:.2e}, \
         drift {drift:.3} J of peak work {work:.1} J ({:.4} %; penalty {drift_penalty:.3} J), \
         Newton {avg:.3} avg / {max_it} max (penalty {avg_penalty:.3} / {max_penalty}; 000: {paper_iterations}), \
         inner {:.2} per position solve, selections {}",
        100.0 * drift / work,
        c.inner_iterations as f64 / c.position_solves as f64,
        double_step::selections(st),
    );
    assert!(
        worst_q <= 1e-4,
        "{name}: joint coordinates differ by {worst_q} rad"
    );
    assert!(worst_p <= 7.6e3, "{name}: pressures differ by {worst_p} Pa");
    assert!(viol <= 1e-10, "{name}: ‖Φ‖ = {viol}");
    assert!(drift <= 1e-3 * work, "{name}: energy drift {drift} J");
    assert!(
        part.iter().all(|&i| i == independent),
        "{name}: independent coordinate changes: {:?}",
        part.iter().find(|&&i| i != independent)
    );
    assert_eq!(double_step::selections(st), 1, "{name}: re-selected");
}

#[test]
fn fourbar_agrees_with_penalty_and_keeps_z3_independent() {
    // z3 is index 2 of z (000 §6.1: z_i = z3 throughout)
    compare_with_penalty("fourbar", 2.0, 1.39);
}

#[test]
fn quickreturn_agrees_with_penalty_and_keeps_z4_independent() {
    // z4 is index 3 of z (000 §6.1: z_i = z4 throughout)
    compare_with_penalty("quickreturn", 3.0, 1.49);
}

/// Slider-crank in the plane, no gravity, no hydraulics: crank AB (a = 2 m) on z1 at A = origin,
/// rod BC (b = 5 m) on z2 at B, slider on the prismatic z3 along x; a planar revolute cut joint
/// pins the rod end C to the slider. Released at a crank angle of 60° turning towards 0°.
///
/// Φ_z = [ẑ×(C−A), ẑ×(C−B), −e_x] (planar rows x, y). At 60° the full-pivot elimination takes
/// z1 (|C_x| ≈ 5.7) and then z2 (|B_y| ≈ 1.7 > 1): z_i = z3, the slider, whose dependent block
/// [z1, z2] is singular at the dead centre (A, B, C collinear, crank at 0°). Approaching it, the
/// smallest pivot (≈ |B_y|) falls below 1/10 of its value at the selection and the selection is
/// redone: z1 and then z3 (|−1| > |B_y|) are dependent, z_i = z2, whose block [z1, z3] has
/// determinant C_x ≥ 3 m and stays regular over the whole turn.
const SLIDER_CRANK: &str = r#"
name = "slider_crank"
gravity = [0.0, 0.0, 0.0]
[[bodies]]
name = "crank"
mass_kg = 2.0
com = [1.0, 0.0, 0.0]
inertia = [0.01, 0.7, 0.7, 0.0, 0.0, 0.0]
[[bodies]]
name = "rod"
mass_kg = 3.0
com = [4.5, 0.0, 0.0]
inertia = [0.01, 6.25, 6.25, 0.0, 0.0, 0.0]
markers = { C = [7.0, 0.0, 0.0] }
[[bodies]]
name = "slider"
mass_kg = 1.5
com = [7.0, 0.0, 0.0]
inertia = [0.01, 0.01, 0.01, 0.0, 0.0, 0.0]
markers = { S = [7.0, 0.0, 0.0] }
[[joints]]
name = "z1"
type = "revolute"
parent = "ground"
child = "crank"
location = [0.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
q0 = 1.0471975511965976
qd0 = -6.0
[[joints]]
name = "z2"
type = "revolute"
parent = "crank"
child = "rod"
location = [2.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
q0 = -1.40097
[[joints]]
name = "z3"
type = "prismatic"
parent = "ground"
child = "slider"
axis = [1.0, 0.0, 0.0]
q0 = -1.30958
[[cut_joints]]
name = "C"
type = "planar_revolute"
body1 = "rod"
marker1 = "C"
body2 = "slider"
marker2 = "S"
normal = [0.0, 0.0, 1.0]
[solver]
formulation = "double-step"
step_s = 1e-3
duration_s = 2.0
tolerance_position = 1e-10
"#;

#[test]
fn singular_dependent_block_triggers_a_new_partition() {
    let r = run_spec(&spec_from(SLIDER_CRANK));
    let part = r.col("partition.independent");
    let crank = r.col("z1.q");
    let viol = max_abs(&r.col("constraint.violation")[1..]);
    let ke = r.col("energy.kinetic");
    let energy_err = max_diff(&ke, &vec![ke[0]; ke.len()]);
    let switch = part
        .iter()
        .position(|&i| i != part[0])
        .expect("the partition changes");
    let selections = double_step::selections(r.sim.state());
    eprintln!(
        "slider-crank: z_i index {} → {} at t = {:.3} s (crank {:.2}°), selections {selections}, \
         crank turned to {:.1}°, max ‖Φ‖ {viol:.2e}, |ΔKE| {energy_err:.2e} J of {:.2} J",
        part[0],
        part[switch],
        r.col("time")[switch],
        crank[switch].to_degrees(),
        crank.last().unwrap().to_degrees(),
        ke[0]
    );
    assert_eq!(part[0], 2.0, "slider z3 independent at the start");
    assert_eq!(
        part[switch], 1.0,
        "rod angle z2 independent after the switch"
    );
    assert!(part[switch..].iter().all(|&i| i == 1.0), "no switch back");
    assert_eq!(selections, 2);
    // the switch happens before the dead centre (crank at 0°), and the crank passes it
    assert!(
        crank[switch] > 0.0 && crank[switch] < 0.2,
        "switch at {}",
        crank[switch]
    );
    assert!(
        *crank.last().unwrap() < -0.3,
        "the crank must pass the dead centre"
    );
    assert!(viol <= 1e-10, "‖Φ‖ = {viol}");
    // no gravity, no forces: kinetic energy is conserved to integration accuracy
    assert!(energy_err < 1e-4 * ke[0], "|ΔKE| = {energy_err} J");
    // the same motion as the penalty formulation, which needs no partition
    let mut s = spec_from(SLIDER_CRANK);
    s.solver.formulation = Formulation::Penalty;
    let p = run_spec(&s);
    let kep = p.col("energy.kinetic");
    eprintln!(
        "slider-crank, penalty: |ΔKE| {:.2e} J",
        max_diff(&kep, &vec![kep[0]; kep.len()])
    );
    for c in ["z1.q", "z2.q", "z3.q"] {
        let d = max_diff(&r.col(c), &p.col(c));
        eprintln!("slider-crank: {c} differs from the penalty run by {d:.2e}");
        // both are O(Δt²) discretizations, of different coordinate sets (z_i here, all of z in
        // the penalty step): 1e-5 rad at 1 ms after 2 s; the double-step run itself moves by
        // 4e-5 rad when Δt is halved
        assert!(d < 1e-4, "{c} differs from the penalty run by {d}");
    }
}

#[test]
fn redundant_3d_cut_joints_give_the_planar_motion() {
    // 3-D revolute/spherical (four-bar) and prismatic (quick-return) cut joints add rows that
    // vanish identically in plane motion: the full-pivot elimination drops them (rank 2 and 4).
    let cases: [(&str, CutJointKind, usize); 3] = [
        ("fourbar", CutJointKind::Revolute, 5),
        ("fourbar", CutJointKind::Spherical, 3),
        ("quickreturn", CutJointKind::Prismatic, 10),
    ];
    for (name, kind, rows) in cases {
        let mut planar = double_step_spec(spec_of(name));
        planar.solver.duration_s = 3.0;
        let mut s = planar.clone();
        for cj in s.cut_joints.iter_mut() {
            cj.kind = kind;
            cj.axis = if name == "fourbar" {
                [0.0, 0.0, 1.0]
            } else {
                cj.axis
            };
        }
        let a = run_spec(&planar);
        let b = run_spec(&s);
        assert_eq!(b.sim.model().n_constraints(), rows);
        let st = b.sim.state();
        let n = b.sim.model().n_coords();
        let rank = st.formulation.partition().expect("a partition").n_dep;
        assert_eq!(rank, n - 1, "{name} {kind:?}: rank of Φ_z");
        for ax in &b.sim.model().axes {
            let c = format!("{}.q", ax.name);
            let d = max_diff(&a.col(&c), &b.col(&c));
            // Newton-tolerance level (1e-7): the runs differ in round-off only
            assert!(d < 1e-6, "{name} {kind:?}: {c} differs by {d}");
        }
        let viol = max_abs(&b.col("constraint.violation")[1..]);
        assert!(viol < 1e-10, "{name} {kind:?}: ‖Φ‖ = {viol}");
        assert_eq!(
            a.col("partition.independent"),
            b.col("partition.independent")
        );
    }
}

/// The exact tangent agrees with central differences of the same residual, mid-motion, with the
/// unknowns perturbed off the solution (so that z_d moves in the position problem).
fn tangent_check(name: &str, t_check: f64) {
    let model = hydraulink::compile(&double_step_spec(spec_of(name))).unwrap();
    let mut st = initialize(&model).unwrap();
    let mut ws = Workspace::new(&model);
    let n_steps = (t_check / model.step_s()).round() as u64;
    for _ in 0..n_steps {
        hydraulink::pipeline::step::step(&model, &mut st, &mut ws).unwrap();
    }
    let Workspace {
        buffers: ws,
        formulation: FormulationWorkspace::DoubleStep(ds),
    } = &mut ws
    else {
        panic!("a double-step workspace");
    };
    double_step::prepare(&model, &st, ws, ds);
    let fi = ds.part.independent().len();
    for (j, x) in ds.unknowns_mut().iter_mut().enumerate() {
        *x += if j < fi { 1e-4 } else { 2e3 };
    }
    double_step::tangent(&model, &st, ws, ds).unwrap();
    let nx = ds.n_unknowns();
    let x0 = ds.unknowns().to_vec();
    let exact: Vec<f64> = (0..nx * nx)
        .map(|k| ds.tangent_entry(k / nx, k % nx))
        .collect();
    let mut worst: f64 = 0.0;
    for j in 0..nx {
        let h = if j < fi { 1e-6 } else { 1.0 };
        let mut f = [vec![0.0; nx], vec![0.0; nx]];
        for (sign, out) in [1.0, -1.0].into_iter().zip(f.iter_mut()) {
            ds.unknowns_mut().copy_from_slice(&x0);
            ds.unknowns_mut()[j] += sign * h;
            double_step::residual(&model, &st, ws, ds).unwrap();
            out.copy_from_slice(ds.residual_values());
        }
        for i in 0..nx {
            let fd = (f[0][i] - f[1][i]) / (2.0 * h);
            let row_scale = (0..nx).map(|k| exact[i * nx + k].abs()).fold(0.0, f64::max);
            let err = (fd - exact[i * nx + j]).abs() / (row_scale + 1e-300);
            worst = worst.max(err);
            assert!(
                err < 1e-6,
                "{name}: ∂f[{i}]/∂x[{j}]: exact {:e}, central difference {fd:e}",
                exact[i * nx + j]
            );
        }
    }
    eprintln!("{name}: worst relative tangent error {worst:.2e} ({nx} unknowns)");
}

#[test]
fn tangent_matches_central_differences_fourbar_lifting() {
    tangent_check("fourbar", 1.5);
}

#[test]
fn tangent_matches_central_differences_quickreturn_pulling() {
    tangent_check("quickreturn", 2.0);
}

#[test]
fn a_cloned_state_restarts_identically() {
    let mut spec = double_step_spec(spec_of("quickreturn"));
    spec.solver.duration_s = 2.0;
    let model = hydraulink::compile(&spec).unwrap();
    let mut sim = Simulation::new(model).unwrap();
    for _ in 0..1200 {
        sim.step().unwrap();
    }
    let saved = sim.state().clone();
    assert!(
        saved.formulation.partition().is_some(),
        "the partition is part of the state"
    );
    let mut sim2 = Simulation::new(sim.model().clone()).unwrap();
    sim2.set_state(saved.clone());
    sim.set_state(saved);
    for _ in 0..300 {
        sim.step().unwrap();
        sim2.step().unwrap();
    }
    assert_eq!(sim.state(), sim2.state());
}

#[test]
fn a_failed_position_problem_triggers_a_new_partition() {
    // The pivot test disabled (reference pivot 0 in the state): the slider z_i is kept until the
    // position problem has no solution past the dead centre (the slider cannot go beyond
    // a + b); the failed inner Newton then makes the step select anew and retry.
    let model = hydraulink::compile(&spec_from(SLIDER_CRANK)).unwrap();
    let mut sim = Simulation::new(model).unwrap();
    sim.step().unwrap();
    let mut st = sim.state().clone();
    match &mut st.formulation {
        hydraulink::state::FormulationState::DoubleStep(p) => p.pivot_ref = 0.0,
        other => panic!("double-step state expected, got {other:?}"),
    }
    sim.set_state(st);
    let mut switched = None;
    for _ in 0..1999 {
        sim.step().unwrap();
        if switched.is_none() && double_step::selections(sim.state()) > 1 {
            switched = Some((sim.time_s(), sim.state().z[0]));
        }
    }
    let (t, crank) = switched.expect("the partition changes");
    let mut row = vec![0.0; sim.n_outputs()];
    sim.output_row(&mut row);
    eprintln!(
        "slider-crank without the pivot test: re-selected at t = {t:.3} s, crank {:.3}°, final crank {:.1}°, z_i index {}",
        crank.to_degrees(),
        sim.state().z[0].to_degrees(),
        row[row.len() - 1]
    );
    assert_eq!(row[row.len() - 1], 1.0);
    assert!(
        sim.state().z[0] < -0.3,
        "the crank must pass the dead centre"
    );
}

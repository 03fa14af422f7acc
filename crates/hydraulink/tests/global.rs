//! Issue 3 acceptance: the global ALI3-P formulation in natural coordinates (004 §2–3) against
//! the validated semi-recursive penalty formulation (000 §2.3) on the same, unchanged models;
//! its exact tangent against central differences; energy conservation of a free body and a
//! pendulum.

#[path = "common.rs"]
#[allow(dead_code)] // shared helpers, not all used by this binary
mod common;

use common::*;
use hydraulink::formulations::ali3p;
use hydraulink::model::spec::Formulation;
use hydraulink::{Model, Simulation};

fn global(mut model: Model) -> Model {
    model.solver.formulation = Formulation::GlobalAli3p;
    with_natural_model(model)
}

/// A compiled model switched to a global formulation after its compile: its natural-coordinate
/// model (`Model::natural`, which the compile builds for a global formulation) built here.
fn with_natural_model(mut model: Model) -> Model {
    model.natural =
        Some(hydraulink::mechanics::global::natural_coordinates::NaturalModel::new(&model));
    model
}

/// A shipped model, unchanged except for `solver.formulation = "global-ali3p"`.
fn global_model_of(name: &str) -> Model {
    let mut spec = spec_of(name);
    spec.solver.formulation = Formulation::GlobalAli3p;
    hydraulink::compile(&spec).expect("the global formulation is available")
}

/// Runs `name` with the penalty and the global ALI3-P formulation and compares them.
fn compare(name: &str) {
    compare_with(name, global_model_of(name));
}

/// Runs `name` with the penalty formulation and `glo_model` (the same model under a global
/// formulation) and compares them.
fn compare_with(name: &str, glo_model: Model) {
    let t0 = std::time::Instant::now();
    let pen = run(model_of(name));
    let t_pen = t0.elapsed().as_secs_f64();
    let t0 = std::time::Instant::now();
    let glo = run(glo_model);
    let t_glo = t0.elapsed().as_secs_f64();
    let model = glo.sim.model();
    let mut worst_z: f64 = 0.0;
    for a in &model.axes {
        let (zp, zg) = (
            pen.col(&format!("{}.q", a.name)),
            glo.col(&format!("{}.q", a.name)),
        );
        let d = zp
            .iter()
            .zip(zg.iter())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        worst_z = worst_z.max(d);
    }
    let mut worst_p: f64 = 0.0;
    for v in &model.hydraulics.volumes {
        let (pp, pg) = (
            pen.col(&format!("{}.p", v.name)),
            glo.col(&format!("{}.p", v.name)),
        );
        let d = pp
            .iter()
            .zip(pg.iter())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        worst_p = worst_p.max(d);
    }
    let viol = max_abs(&glo.col("constraint.violation")[1..]);
    let drift = max_abs(&glo.col("energy.drift"));
    let drift_pen = max_abs(&pen.col("energy.drift"));
    let work = max_abs(&glo.col("energy.actuator_work"));
    let it = glo.col("newton.iterations");
    let avg_it = it[1..].iter().sum::<f64>() / (it.len() - 1) as f64;
    let max_it = max_abs(&it);
    let itp = pen.col("newton.iterations");
    let avg_itp = itp[1..].iter().sum::<f64>() / (itp.len() - 1) as f64;
    eprintln!(
        "{name} ({}): max |Δz| = {worst_z:.3e} rad, max |Δp| = {worst_p:.3e} Pa, max ‖Φ‖ = {viol:.3e}, \
         drift = {drift:.3e} J (penalty {drift_pen:.3e} J) of peak work {work:.3e} J, \
         iterations avg {avg_it:.3} max {max_it} (penalty avg {avg_itp:.3}), \
         wall {t_glo:.3} s vs penalty {t_pen:.3} s (ratio {:.2}), counters {:?}",
        model.solver.formulation.name(),
        t_glo / t_pen,
        glo.sim.workspace().counters
    );
    // Acceptance (issue 3): joint coordinates within 1e-4 rad of the penalty formulation,
    // pressures within 0.1 % of the pump pressure (7.6 kPa), drift ≤ 0.1 % of the peak work.
    assert!(
        worst_z < 1e-4,
        "{name}: joint coordinates differ by {worst_z} rad"
    );
    assert!(worst_p < 7.6e3, "{name}: pressures differ by {worst_p} Pa");
    assert!(
        drift <= 1e-3 * work,
        "{name}: energy drift {drift} J, peak work {work} J"
    );
    assert!(viol < 1e-6, "{name}: ‖Φ‖ = {viol}");
}

#[test]
fn global_ali3p_fourbar_matches_penalty() {
    compare("fourbar");
}

#[test]
fn global_ali3p_quickreturn_matches_penalty() {
    compare("quickreturn");
}

/// The shared buffers and the global formulations' own of a workspace built for a global model.
fn global_parts(
    ws: &mut hydraulink::Workspace,
) -> (
    &mut hydraulink::mechanics::buffers::Buffers,
    &mut hydraulink::mechanics::global::GlobalWorkspace,
) {
    use hydraulink::pipeline::workspace::FormulationWorkspace;
    match ws {
        hydraulink::Workspace {
            buffers,
            formulation: FormulationWorkspace::GlobalAli3p(g) | FormulationWorkspace::GlobalI1al(g),
        } => (buffers, g),
        _ => panic!("a global formulation's workspace"),
    }
}

/// Max over columns of ‖exact_j − fd_j‖∞ / ‖exact_j‖∞ (column-major nx × nx).
/// (vs central differences, vs the full dual-number tangent).
fn tangent_error(model: Model, steps: usize) -> (f64, f64) {
    let (model, st) = state_after(model, steps);
    let mut ws = hydraulink::Workspace::new(&model);
    let (b, g) = global_parts(&mut ws);
    let (exact, dual, fd) = ali3p::tangent_and_central_differences(&model, &st, b, g, 1e-6);
    (
        worst_column_error(&exact, &fd),
        worst_column_error(&exact, &dual),
    )
}

/// The model and the state after `steps` steps.
fn state_after(model: Model, steps: usize) -> (Model, hydraulink::State) {
    let mut sim = Simulation::new(model).unwrap();
    for _ in 0..steps {
        sim.step().unwrap();
    }
    (sim.model().clone(), sim.state().clone())
}

/// Max over columns j of ‖a_j − b_j‖∞ / ‖a_j‖∞ (column-major square matrices).
fn worst_column_error(a: &[f64], b: &[f64]) -> f64 {
    let nx = (a.len() as f64).sqrt().round() as usize;
    (0..nx)
        .map(|j| {
            let scale = max_abs(&a[j * nx..(j + 1) * nx]).max(1e-300);
            (0..nx)
                .map(|i| (a[j * nx + i] - b[j * nx + i]).abs())
                .fold(0.0, f64::max)
                / scale
        })
        .fold(0.0, f64::max)
}

#[test]
fn global_ali3p_tangent_matches_central_differences() {
    // Fourbar at t = 1.5 s (valve open, moving) and quick-return at t = 2 s: the production
    // tangent (004 eq. 26, exact: analytic mechanical blocks + dual-number port columns) against
    // the full dual-number tangent and central differences of the same residual. The
    // differences are O(h²) ≈ 1e-12 relative plus round-off ≈ 1e-16 |f| / h; 1e-6 leaves margin.
    for (name, steps) in [("fourbar", 1500), ("quickreturn", 2000)] {
        let mut model = global(model_of(name));
        model.solver.duration_s = steps as f64 * model.solver.step_s;
        let (e, ed) = tangent_error(model, steps);
        eprintln!(
            "{name}: structured tangent vs central differences {e:.2e}, vs full dual {ed:.2e} \
             (worst column relative error)"
        );
        assert!(e < 1e-6, "{name}: tangent error {e}");
        // both exact: they differ by round-off only
        assert!(ed < 1e-12, "{name}: structured vs dual tangent {ed}");
    }
}

#[test]
fn global_ali3p_is_deterministic() {
    let mut model = global(model_of("fourbar"));
    model.solver.duration_s = 1.5;
    let a = run(model.clone());
    let b = run(model);
    assert_eq!(a.rows, b.rows, "two runs differ");
}

#[test]
fn global_ali3p_free_body_conserves_energy() {
    // A tumbling brick (no gravity) on a free joint: six axes, six natural frames (five massless).
    let text = FREE_BODY;
    let r = run(global(hydraulink::compile(&spec_from(text)).unwrap()));
    let ke = r.col("energy.kinetic");
    let rel = ke.iter().map(|k| (k - ke[0]).abs()).fold(0.0, f64::max) / ke[0];
    let viol = max_abs(&r.col("constraint.violation")[1..]);
    eprintln!("global free body: relative KE variation {rel:.2e}, max ‖Φ‖ {viol:.2e}");
    // Same bound as the semi-recursive test (invariants/basic_mechanics.rs): O(Δt²) error of the
    // trapezoidal rule on the rotation, far below 1e-4 at Δt = 1 ms.
    assert!(rel < 1e-4, "relative KE variation {rel}");
    for c in ["free.0.qd", "free.1.qd", "free.2.qd"] {
        let v = r.col(c);
        let dev = v.iter().map(|x| (x - v[0]).abs()).fold(0.0, f64::max);
        // penalty-enforced massless chain: the translational rates follow to ‖Φ‖-level accuracy
        assert!(dev < 1e-6, "{c} changed by {dev}");
    }
}

#[test]
fn global_ali3p_spherical_pendulum_conserves_energy() {
    let text = SPHERICAL_PENDULUM;
    let drift_at = |dt: f64| {
        let mut sp = spec_from(text);
        sp.solver.step_s = dt;
        let r = run(global(hydraulink::compile(&sp).unwrap()));
        let ke = r.col("energy.kinetic");
        let pe = r.col("energy.potential");
        let drift = ke
            .iter()
            .zip(&pe)
            .map(|(k, p)| (k + p - ke[0] - pe[0]).abs())
            .fold(0.0, f64::max);
        let scale = ke.iter().fold(0.0f64, |m, &x| m.max(x));
        (drift, scale, max_abs(&r.col("ball.1.q")))
    };
    // Three Cardan axes, two massless intermediate frames; the middle angle reaches 1.28 rad.
    let ((d1, scale, swing), (d2, _, _)) = (drift_at(1e-3), drift_at(5e-4));
    eprintln!(
        "global pendulum: drift {d1:.2e} J at 1 ms, {d2:.2e} J at 0.5 ms, of {scale:.2} J kinetic"
    );
    // same bounds as the semi-recursive test (invariants/basic_mechanics.rs)
    assert!(d1 < 1e-4 * scale, "drift {d1} J");
    assert!(
        d1 / d2 > 3.0,
        "energy error is not second order: {d1} → {d2}"
    );
    assert!(swing > 0.1);
}

/// Energy drift of a model with the global formulation at step `dt` [J], the kinetic-energy
/// scale [J] and the largest |z| of the first coordinate [rad].
fn drift_of(text: &str, dt: f64) -> (f64, f64, f64) {
    drift_with(text, dt, Formulation::GlobalAli3p)
}

/// The global ALI3-P energy error of `text` at 1 ms is below 1e-4 of the kinetic-energy scale and
/// falls at least 3× at 0.5 ms (second order); the first coordinate swings more than `swing_min`.
fn energy_error_is_small_and_second_order(name: &str, text: &str, swing_min: f64) {
    let ((d1, scale, swing), (d2, _, _)) = (drift_of(text, 1e-3), drift_of(text, 5e-4));
    eprintln!(
        "global {name}: drift {d1:.2e} J at 1 ms, {d2:.2e} J at 0.5 ms, of {scale:.2} J kinetic"
    );
    assert!(d1 < 1e-4 * scale, "drift {d1} J");
    assert!(
        d1 / d2 > 3.0,
        "energy error is not second order: {d1} → {d2}"
    );
    assert!(swing > swing_min);
}

/// [`drift_of`] under formulation `f`.
fn drift_with(text: &str, dt: f64, f: Formulation) -> (f64, f64, f64) {
    let mut sp = spec_from(text);
    sp.solver.step_s = dt;
    let mut model = hydraulink::compile(&sp).unwrap();
    model.solver.formulation = f;
    if matches!(f, Formulation::GlobalAli3p | Formulation::GlobalI1al) {
        model = with_natural_model(model);
    }
    let r = run(model);
    let ke = r.col("energy.kinetic");
    let pe = r.col("energy.potential");
    let drift = ke
        .iter()
        .zip(&pe)
        .map(|(k, p)| (k + p - ke[0] - pe[0]).abs())
        .fold(0.0, f64::max);
    let scale = ke.iter().fold(0.0f64, |m, &x| m.max(x));
    let swing = max_abs(&r.col(&format!("{}.q", r.sim.model().axes[0].name)));
    (drift, scale, swing)
}

#[test]
fn global_ali3p_spatial_double_pendulum_conserves_energy() {
    // Two links on revolute joints with non-parallel axes (3-D motion), every frame with mass:
    // the rigid-body, revolute point and axis constraints of natural coordinates.
    let text = DOUBLE_PENDULUM_3D;
    // same bounds as the semi-recursive pendulum test (invariants/basic_mechanics.rs)
    energy_error_is_small_and_second_order("3-D double pendulum", text, 0.1);
}

#[test]
fn global_ali3p_prismatic_slider_crank_conserves_energy() {
    // A pendulum hanging from a slider on a horizontal prismatic guide: the prismatic
    // constraints (equal orientation, point on the line) and the relative-coordinate recovery
    // of a translation.
    let text = r#"
name = "slider_pendulum"
gravity = [0.0, -9.81, 0.0]
[[bodies]]
name = "cart"
mass_kg = 3.0
com = [0.0, 0.0, 0.0]
inertia = [0.01, 0.01, 0.01, 0.0, 0.0, 0.0]
[[bodies]]
name = "bob"
mass_kg = 1.0
com = [0.0, -1.0, 0.0]
inertia = [0.02, 0.01, 0.02, 0.0, 0.0, 0.0]
[[joints]]
name = "x"
type = "prismatic"
parent = "ground"
child = "cart"
location = [0.0, 0.0, 0.0]
axis = [1.0, 0.0, 0.0]
qd0 = 0.2
[[joints]]
name = "th"
type = "revolute"
parent = "cart"
child = "bob"
location = [0.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
q0 = 0.5
[solver]
step_s = 1e-3
duration_s = 3.0
tolerance_position = 1e-11
"#;
    energy_error_is_small_and_second_order("slider pendulum", text, 0.05);
}

/// A shipped model under the global I1AL formulation.
fn i1al_model_of(name: &str) -> Model {
    let mut model = model_of(name);
    model.solver.formulation = Formulation::GlobalI1al;
    with_natural_model(model)
}

#[test]
fn global_i1al_fourbar_matches_penalty() {
    compare_with("fourbar", i1al_model_of("fourbar"));
}

#[test]
fn global_i1al_quickreturn_matches_penalty() {
    compare_with("quickreturn", i1al_model_of("quickreturn"));
}

/// Two links on revolute joints with non-parallel axes (3-D motion).
const DOUBLE_PENDULUM_3D: &str = r#"
name = "double_pendulum_3d"
gravity = [0.0, -9.81, 0.0]
[[bodies]]
name = "a"
mass_kg = 2.0
com = [0.5, 0.0, 0.0]
inertia = [0.01, 0.17, 0.17, 0.0, 0.0, 0.0]
[[bodies]]
name = "b"
mass_kg = 1.0
com = [1.0, -0.4, 0.1]
inertia = [0.05, 0.01, 0.05, 0.0, 0.0, 0.0]
[[joints]]
name = "z1"
type = "revolute"
parent = "ground"
child = "a"
location = [0.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
q0 = -0.3
qd0 = 0.5
[[joints]]
name = "z2"
type = "revolute"
parent = "a"
child = "b"
location = [1.0, 0.0, 0.0]
axis = [0.6, 0.0, 0.8]
q0 = 0.7
qd0 = -1.0
[solver]
step_s = 1e-3
duration_s = 3.0
tolerance_position = 1e-11
"#;

#[test]
fn global_i1al_spatial_double_pendulum_conserves_energy() {
    let f = Formulation::GlobalI1al;
    let (d1, scale, swing) = drift_with(DOUBLE_PENDULUM_3D, 1e-3, f);
    let (d2, _, _) = drift_with(DOUBLE_PENDULUM_3D, 5e-4, f);
    eprintln!(
        "global I1AL 3-D double pendulum: drift {d1:.2e} J at 1 ms, {d2:.2e} J at 0.5 ms, of {scale:.2} J kinetic"
    );
    // same bounds as the ALI3-P and semi-recursive pendulum tests
    assert!(d1 < 1e-4 * scale, "drift {d1} J");
    assert!(
        d1 / d2 > 3.0,
        "energy error is not second order: {d1} → {d2}"
    );
    assert!(swing > 0.1);
}

#[test]
fn global_i1al_structured_tangent_matches_the_dual_tangent() {
    // The production I1AL tangent (analytic mechanical blocks, with ∂Ψ/∂q̈ through q, q̇ and q̈,
    // and dual-number port columns) against one dual pass of the whole residual per unknown, on
    // the moving four-bar and quick-return: both exact, so they differ by round-off only.
    for (name, steps) in [("fourbar", 1500), ("quickreturn", 2000)] {
        let mut model = i1al_model_of(name);
        model.solver.duration_s = steps as f64 * model.solver.step_s;
        let (model, st) = state_after(model, steps);
        let mut ws = hydraulink::Workspace::new(&model);
        let (b, g) = global_parts(&mut ws);
        let (structured, dual) =
            hydraulink::formulations::i1al::tangent_and_dual(&model, &st, b, g);
        let worst = worst_column_error(&dual, &structured);
        eprintln!("{name}: I1AL structured vs dual tangent {worst:.2e} (worst column)");
        assert!(worst < 1e-12, "{name}: structured vs dual tangent {worst}");
    }
}

/// Largest |a − b| over the joint coordinates and over the pressures of two runs of one model.
fn largest_differences(a: &Run, b: &Run) -> (f64, f64) {
    let model = a.sim.model();
    let diff = |label: String| {
        a.col(&label)
            .iter()
            .zip(b.col(&label).iter())
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    let dz = model
        .axes
        .iter()
        .map(|ax| diff(format!("{}.q", ax.name)))
        .fold(0.0, f64::max);
    let dp = model
        .hydraulics
        .volumes
        .iter()
        .map(|v| diff(format!("{}.p", v.name)))
        .fold(0.0, f64::max);
    (dz, dp)
}

#[test]
fn planar_natural_coordinates_agree_with_spatial_ones() {
    use hydraulink::mechanics::global::natural_coordinates::{Layout, NaturalModel};
    use hydraulink::model::spec::NaturalFrames;
    // The planar layout (a unit vector per revolute frame, joint points shared) and the full
    // spatial one (a point and three unit vectors per frame, joints as equations) are two
    // discretizations of the same mechanism: the same trajectory to the Newton tolerance
    // (positions 1e-7 m, pressures 1e-2 Pa, amplified along 3 s of motion).
    // (fourbar3d: the 3-D four-bar of 001, whose axes are all parallel to x: a plane x = const;
    // its valve stays closed and the 001 torque (eq. 92, a couple of global point forces)
    // moves it by about 2e-3°, so it checks the detection of that plane and a small motion)
    for name in ["fourbar", "quickreturn", "fourbar3d"] {
        for formulation in [Formulation::GlobalAli3p, Formulation::GlobalI1al] {
            let mut spec = spec_of(name);
            spec.solver.formulation = formulation;
            spec.solver.duration_s = 3.0;
            let planar_model = hydraulink::compile(&spec).unwrap();
            let nm = NaturalModel::new(&planar_model);
            assert!(matches!(nm.layout, Layout::Planar { .. }), "{name}: planar");
            let planar = run(planar_model);
            spec.solver.natural_frames = NaturalFrames::Spatial;
            let spatial_model = hydraulink::compile(&spec).unwrap();
            let nms = NaturalModel::new(&spatial_model);
            assert_eq!(nms.layout, Layout::Spatial);
            eprintln!(
                "{name} ({}): {} planar coordinates and {} equations, {} spatial and {}",
                formulation.name(),
                nm.nq,
                nm.n_eqs(),
                nms.nq,
                nms.n_eqs()
            );
            let spatial = run(spatial_model);
            let (dz, dp) = largest_differences(&planar, &spatial);
            eprintln!("  planar vs spatial: max |Δz| = {dz:.2e} rad, max |Δp| = {dp:.2e} Pa");
            // ALI3-P meets the constraints to round-off, so the two agree to the Newton
            // tolerance; I1AL only keeps Φ decaying (‖Φ‖ ≈ 1e-7, Baumgarte-like), and that
            // residual violation depends on the coordinates: 10× the bounds
            let (z_bound, p_bound) = match formulation {
                Formulation::GlobalAli3p => (1e-6, 100.0),
                _ => (1e-5, 1e3),
            };
            assert!(dz < z_bound, "{name}: joint coordinates differ by {dz} rad");
            assert!(dp < p_bound, "{name}: pressures differ by {dp} Pa");
        }
    }
    // a spatial mechanism keeps the spatial layout
    let nm = NaturalModel::new(&global(
        hydraulink::compile(&spec_from(SPHERICAL_PENDULUM)).unwrap(),
    ));
    assert_eq!(nm.layout, Layout::Spatial);
}

//! `pose = "assembled"`: positions typed as a CAD program exports them (global coordinates of
//! the machine at t = 0) compile to the same model as the reference configuration, and run the
//! same trajectory under every formulation.
//!
//! The assembled specs are made here by forward kinematics of the compiled reference model
//! (`mechanics::kinematics`, the simulation's own pose code), independent of
//! `pipeline::pose`, which maps them back.

use hydraulink::elements::component::ComponentSpec;
use hydraulink::elements::external_load::LoadAxes;
use hydraulink::mechanics::kinematics::Kinematics;
use hydraulink::model::spec::{Formulation, Pose, VisualSpec};
use hydraulink::model::{ConstraintEq, Frame, FrameDir, FramePoint, Model, V3};
use hydraulink::ModelSpec;

use crate::common::{run, spec_from, spec_of};

/// The model compared to 1e-12 [m, rad, kg m²]: positions are rotated and translated there and
/// back, so they differ from the reference by rounding only.
const MODEL_TOL: f64 = 1e-12;
/// The trajectories over 1 s compared to 1e-9 of each column's largest magnitude, or of
/// `NOISE_FLOOR` for a column that stays below it (a quantity at rest, at rounding level).
const TRAJECTORY_TOL: f64 = 1e-9;
/// Columns that never exceed 1e-6 of their SI unit (1 µm, 1 µrad, 1 µPa) over the run are
/// rounding noise of a quantity at rest (the swing rate before the swing valve opens).
const NOISE_FLOOR: f64 = 1e-6;

/// Replaces each named input by a ramp from 0 at 0.2 s to `value` at 0.3 s, so that the
/// first second moves the machine.
fn drive(spec: &mut ModelSpec, inputs: &[(&str, f64)]) {
    for (name, value) in inputs {
        let input = spec
            .inputs
            .iter_mut()
            .find(|i| i.name == *name)
            .expect("input");
        input.signal = hydraulink::elements::inputs::SignalSpec::Table {
            times: vec![0.0, 0.2, 0.3],
            values: vec![0.0, 0.0, *value],
        };
    }
}

/// `reference` rewritten in the assembled pose at its own q0 (kept): every body point, inertia,
/// joint point and axis, and cut-joint axis as it stands in the initial pose.
fn assembled_from(reference: &ModelSpec) -> ModelSpec {
    let m = hydraulink::compile(reference).expect("the reference compiles");
    let mut kin = Kinematics::<f64>::new(m.axes.len());
    let q0: Vec<f64> = m.axes.iter().map(|a| a.q0).collect();
    kin.positions(&m, &q0);
    let point = |f: Frame, p: &[f64; 3]| -> [f64; 3] {
        (kin.frame_rot(f) * V3::from(*p) + kin.frame_pos(f)).into()
    };
    let dir = |f: Frame, d: &V3| -> [f64; 3] { (kin.frame_rot(f) * d).into() };
    let frame_of = |body: &str| -> Frame {
        m.bodies
            .iter()
            .find(|b| b.name == body)
            .map_or(Frame::Ground, |b| b.frame)
    };
    let mut s = reference.clone();
    s.pose = Pose::Assembled;
    // the HUD's sensors are body points and axes too
    for sensor in &mut s.hud.sensors {
        use hydraulink::model::hud::SensorSpec;
        match sensor {
            SensorSpec::PointHeight { body, point: p, .. } => *p = point(frame_of(body), p),
            SensorSpec::AxisAngle { body, axis, .. } => {
                *axis = dir(frame_of(body), &V3::from(*axis))
            }
        }
    }
    for b in &mut s.bodies {
        let f = frame_of(&b.name);
        b.com = point(f, &b.com);
        for p in b.markers.values_mut() {
            *p = point(f, p);
        }
        // the drawn shapes are body points and directions too
        for v in &mut b.visual {
            match v {
                VisualSpec::Box { from, to, side, .. } => {
                    *from = point(f, from);
                    *to = point(f, to);
                    *side = dir(f, &V3::from(*side));
                }
                VisualSpec::Cylinder { from, to, .. } | VisualSpec::Capsule { from, to, .. } => {
                    *from = point(f, from);
                    *to = point(f, to);
                }
                VisualSpec::Mesh {
                    origin,
                    x_axis,
                    y_axis,
                    ..
                } => {
                    *origin = point(f, origin);
                    *x_axis = dir(f, &V3::from(*x_axis));
                    *y_axis = dir(f, &V3::from(*y_axis));
                }
            }
        }
        let [ixx, iyy, izz, ixy, ixz, iyz] = b.inertia;
        let i = hydraulink::model::M3::new(ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz);
        let a = kin.frame_rot(f);
        let w = a * i * a.transpose();
        b.inertia = [
            w[(0, 0)],
            w[(1, 1)],
            w[(2, 2)],
            w[(0, 1)],
            w[(0, 2)],
            w[(1, 2)],
        ];
    }
    for j in &mut s.joints {
        let mj = m.joints.iter().find(|x| x.name == j.name).expect("joint");
        let first = &m.axes[mj.first_axis];
        j.location = point(first.parent, &first.point_ref.into());
        // the first axis is the given one (a spherical or free joint's is unused, and mapped
        // with the parent all the same)
        j.axis = dir(first.parent, &V3::from(j.axis).normalize());
        if let Some(a2) = j.axis2.as_mut() {
            let second = &m.axes[mj.first_axis + 1];
            *a2 = dir(second.parent, &second.dir_ref);
        }
    }
    for c in &mut s.cut_joints {
        let f = frame_of(&c.body2);
        c.axis = dir(f, &V3::from(c.axis));
        c.normal = dir(f, &V3::from(c.normal));
    }
    for nh in &mut s.nonholonomic {
        let f = frame_of(&nh.body);
        nh.direction = dir(f, &V3::from(nh.direction));
        nh.axis = dir(f, &V3::from(nh.axis));
    }
    for e in &mut s.elements {
        match e {
            ComponentSpec::PointForce(p) if p.axes == LoadAxes::Body => {
                p.force_n = dir(frame_of(&p.body), &V3::from(p.force_n));
            }
            ComponentSpec::Torque(t) if t.axes == LoadAxes::Body => {
                t.torque_n_m = dir(frame_of(&t.body), &V3::from(t.torque_n_m));
            }
            _ => {}
        }
    }
    s
}

/// Every number of two specs agrees to [`MODEL_TOL`] (their TOML texts, number by number).
fn assert_same_numbers(a: &ModelSpec, b: &ModelSpec, what: &str) {
    fn walk(a: &toml::Value, b: &toml::Value, path: &str) {
        match (a, b) {
            (toml::Value::Float(x), toml::Value::Float(y)) => {
                assert!(
                    (x - y).abs() <= MODEL_TOL * x.abs().max(1.0),
                    "{path}: {x} vs {y}"
                );
            }
            (toml::Value::Array(x), toml::Value::Array(y)) => {
                assert_eq!(x.len(), y.len(), "{path}");
                for (i, (u, v)) in x.iter().zip(y).enumerate() {
                    walk(u, v, &format!("{path}[{i}]"));
                }
            }
            (toml::Value::Table(x), toml::Value::Table(y)) => {
                assert_eq!(
                    x.keys().collect::<Vec<_>>(),
                    y.keys().collect::<Vec<_>>(),
                    "{path}"
                );
                for (k, u) in x {
                    walk(u, &y[k], &format!("{path}.{k}"));
                }
            }
            _ => assert_eq!(a, b, "{path}"),
        }
    }
    walk(
        &toml::Value::try_from(a).expect("serializes"),
        &toml::Value::try_from(b).expect("serializes"),
        what,
    );
}

/// Every shipped model, rewritten in the assembled pose at its q0, maps back to its own spec
/// (every number to 1e-12) and compiles to the same model; except the models whose q0 only
/// approximates a closed loop (allowed in the reference configuration, where the assembly at
/// t = 0 closes it), which the assembled pose rejects by the cut joint's name.
#[test]
fn every_shipped_model_maps_back_from_its_assembled_pose() {
    let dir = format!("{}/../../models", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("models/")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".toml").map(str::to_string))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    let (mut compiled, mut rejected) = (Vec::new(), Vec::new());
    for name in &names {
        // a model shipped in the assembled pose (boom_assembled) is first mapped to its
        // reference form (`to_reference` returns any other spec unchanged)
        let reference = hydraulink::pipeline::pose::to_reference(&spec_of(name));
        let assembled = assembled_from(&reference);
        assert_same_numbers(
            &hydraulink::pipeline::pose::to_reference(&assembled),
            &reference,
            name,
        );
        match hydraulink::compile(&assembled) {
            Ok(m) => {
                assert_same_model(&hydraulink::compile(&reference).expect("compiles"), &m);
                compiled.push(name.as_str());
            }
            Err(e) => {
                assert!(
                    e.path.starts_with("cut_joints[") && e.message.contains("loop residual"),
                    "{name}: {e}"
                );
                rejected.push(name.as_str());
            }
        }
    }
    eprintln!("same model: {compiled:?}; loop open at q0: {rejected:?}");
    for name in [
        "fourbar",
        "excavator",
        "boom",
        "rolling_disc",
        "sled_knife_edge",
    ] {
        assert!(compiled.contains(&name), "{name}");
    }
}

/// A spatial chain with a universal, a spherical, a cylindrical and a free joint, all at
/// non-zero q0, off-axis bodies with full inertia tensors, and loads in body axes: the
/// assembled form maps back (1e-12) and runs the same 0.3 s (1e-9).
#[test]
fn a_spatial_chain_with_every_joint_kind_maps_back() {
    let reference = spec_from(
        r#"
name = "spatial"
gravity = [0.0, -9.81, 0.0]
[[bodies]]
name = "b1"
mass_kg = 4.0
com = [0.3, 0.1, -0.2]
inertia = [0.5, 0.4, 0.3, 0.01, -0.02, 0.015]
markers = { m = [0.6, 0.0, 0.1] }
[[bodies]]
name = "b2"
mass_kg = 3.0
com = [0.9, 0.2, 0.0]
inertia = [0.2, 0.3, 0.25, -0.01, 0.0, 0.02]
[[bodies]]
name = "b3"
mass_kg = 2.0
com = [1.4, 0.5, 0.1]
inertia = [0.1, 0.12, 0.08, 0.0, 0.01, 0.0]
[[bodies]]
name = "b4"
mass_kg = 1.0
com = [1.8, 0.4, -0.3]
inertia = [0.05, 0.04, 0.06, 0.002, 0.0, -0.001]
markers = { tip = [2.0, 0.4, -0.3] }
[[joints]]
name = "u"
type = "universal"
parent = "ground"
child = "b1"
location = [0.0, 0.1, 0.0]
axis = [0.0, 0.0, 1.0]
axis2 = [0.0, 1.0, 0.0]
q0 = [0.3, -0.2]
qd0 = [0.5, 0.1]
[[joints]]
name = "s"
type = "spherical"
parent = "b1"
child = "b2"
location = [0.6, 0.0, 0.1]
q0 = [0.1, 0.2, -0.3]
[[joints]]
name = "c"
type = "cylindrical"
parent = "b2"
child = "b3"
location = [1.2, 0.3, 0.0]
axis = [0.7071067811865476, 0.7071067811865476, 0.0]
q0 = [0.4, 0.05]
[[joints]]
name = "f"
type = "free"
parent = "b3"
child = "b4"
location = [1.6, 0.4, -0.2]
q0 = [0.01, -0.02, 0.03, 0.2, -0.1, 0.3]
[[elements]]
type = "point_force"
name = "push"
body = "b4"
marker = "tip"
force_n = [1.0, 2.0, -0.5]
axes = "body"
[[elements]]
type = "torque"
name = "twist"
body = "b2"
torque_n_m = [0.1, -0.2, 0.3]
axes = "body"
[solver]
step_s = 1.0e-3
duration_s = 0.3
"#,
    );
    let assembled = assembled_from(&reference);
    assert_same_numbers(
        &hydraulink::pipeline::pose::to_reference(&assembled),
        &reference,
        "spatial",
    );
    assert_same_model(
        &hydraulink::compile(&reference).expect("compiles"),
        &hydraulink::compile(&assembled).expect("compiles"),
    );
    let worst = assert_same_trajectory(&reference, &assembled, "spatial");
    eprintln!("spatial chain: largest relative deviation {worst:e}");
}

fn close(a: &V3, b: &V3, what: &str) {
    assert!((a - b).amax() <= MODEL_TOL, "{what}: {a:?} vs {b:?}");
}

fn point_close(a: &FramePoint, b: &FramePoint, what: &str) {
    assert_eq!(a.frame, b.frame, "{what}");
    close(&a.point_ref, &b.point_ref, what);
}

fn dir_close(a: &FrameDir, b: &FrameDir, what: &str) {
    assert_eq!(a.frame, b.frame, "{what}");
    close(&a.dir_ref, &b.dir_ref, what);
}

/// The compiled models agree: axes, bodies, loop-closure equations, cylinder pins.
fn assert_same_model(a: &Model, b: &Model) {
    assert_eq!(a.axes.len(), b.axes.len());
    for (x, y) in a.axes.iter().zip(&b.axes) {
        assert_eq!((&x.name, x.kind, x.parent), (&y.name, y.kind, y.parent));
        close(&x.point_ref, &y.point_ref, &x.name);
        close(&x.dir_ref, &y.dir_ref, &x.name);
        assert_eq!((x.q0, x.qd0), (y.q0, y.qd0), "{}", x.name);
    }
    for (x, y) in a.bodies.iter().zip(&b.bodies) {
        assert_eq!((&x.name, x.frame), (&y.name, y.frame));
        close(&x.com_ref, &y.com_ref, &x.name);
        assert!(
            (x.inertia_ref - y.inertia_ref).amax() <= MODEL_TOL * x.inertia_ref.amax(),
            "{} inertia {} vs {}",
            x.name,
            x.inertia_ref,
            y.inertia_ref
        );
    }
    assert_eq!(a.constraints.len(), b.constraints.len());
    for (x, y) in a.constraints.iter().zip(&b.constraints) {
        assert_eq!(x.name, y.name);
        match (&x.eq, &y.eq) {
            (
                ConstraintEq::PointDot { e, p1, p2 },
                ConstraintEq::PointDot {
                    e: f,
                    p1: q1,
                    p2: q2,
                },
            ) => {
                dir_close(e, f, &x.name);
                point_close(p1, q1, &x.name);
                point_close(p2, q2, &x.name);
            }
            (ConstraintEq::DirDot { e1, e2 }, ConstraintEq::DirDot { e1: f1, e2: f2 }) => {
                dir_close(e1, f1, &x.name);
                dir_close(e2, f2, &x.name);
            }
            _ => panic!("{}: different equation kinds", x.name),
        }
    }
    for (x, y) in a.cylinders().zip(b.cylinders()) {
        point_close(&x.base, &y.base, &x.name);
        point_close(&x.rod, &y.rod, &x.name);
    }
}

/// The other output columns (forces, flows, energies, works) to 1e-7: the penalty formulation
/// reports a cylinder's force at its last evaluation, and at rest a seal-friction law as steep
/// as 1.3e6 N s/m turns rate noise of 1e-11 m/s into 0.1 N of 11 kN (the four-bar's first
/// steps).
const DERIVED_TOL: f64 = 1e-7;

/// The trajectory: joint coordinates and rates, pressures, valve positions, cylinder lengths
/// and rates.
fn is_trajectory(label: &str) -> bool {
    [".q", ".qd", ".p", ".spool", ".length", ".velocity"]
        .iter()
        .any(|end| label.ends_with(end))
}

/// Columns that are not the trajectory: the energy drift (a difference of energies of 1e3 J
/// that is itself 1e-3 J), the loop residual and the iteration count (both set by the Newton
/// tolerance, not by the model).
const NOT_TRAJECTORY: [&str; 3] = ["energy.drift", "constraint.violation", "newton.iterations"];

/// Runs both for 1 s and compares every output column but [`NOT_TRAJECTORY`]; returns the
/// largest deviation of the trajectory relative to its column's largest magnitude. The Newton tolerances are
/// tightened (1e-9 m or rad, 1e-4 Pa) in both runs, so that what is measured is the model,
/// not the iteration error: at the shipped 1e-7 two runs that differ by rounding in the
/// positions already differ by up to 1.5e-9 of the joint angle (the double step).
fn assert_same_trajectory(a: &ModelSpec, b: &ModelSpec, what: &str) -> f64 {
    let (mut a, mut b) = (a.clone(), b.clone());
    for s in [&mut a, &mut b] {
        s.solver.duration_s = 1.0;
        s.solver.tolerance_position = s.solver.tolerance_position.min(1e-9);
        s.solver.tolerance_pressure_pa = s.solver.tolerance_pressure_pa.min(1e-4);
    }
    let ra = run(hydraulink::compile(&a).expect("reference compiles"));
    let rb = run(hydraulink::compile(&b).expect("assembled compiles"));
    assert_eq!(ra.labels, rb.labels);
    let mut worst: f64 = 0.0;
    for (c, label) in ra.labels.iter().enumerate() {
        if NOT_TRAJECTORY.contains(&label.as_str()) {
            continue;
        }
        let scale = ra.rows.iter().fold(NOISE_FLOOR, |m, r| m.max(r[c].abs()));
        for (k, (x, y)) in ra.rows.iter().zip(&rb.rows).enumerate() {
            let dev = (x[c] - y[c]).abs();
            let rel = dev / scale;
            let tol = if is_trajectory(label) {
                TRAJECTORY_TOL
            } else {
                DERIVED_TOL
            };
            assert!(
                rel <= tol,
                "{what}: {label} at row {k}: {} vs {} (relative {rel:e})",
                x[c],
                y[c]
            );
            if is_trajectory(label) {
                worst = worst.max(rel);
            }
        }
    }
    worst
}

/// The four-bar (a closed loop, q0 = 0, −135°, −45°) in the assembled pose: the same compiled
/// model, and the same first second (the valve opened at 0.2 s) under the penalty and the
/// global ALI3-P formulations.
#[test]
fn the_four_bar_in_the_assembled_pose_is_the_four_bar() {
    let mut reference = spec_of("fourbar");
    drive(&mut reference, &[("U", 10.0)]);
    let assembled = assembled_from(&reference);
    // the assembled positions are the initial pose of models/fourbar.toml (its header: C, D, E, F)
    let body3 = &assembled.bodies[2];
    close(&V3::from(body3.markers["E"]), &V3::new(0.0, -1.0, 0.0), "E");
    close(&V3::from(body3.markers["F"]), &V3::new(1.0, -1.0, 0.0), "F");
    assert_same_model(
        &hydraulink::compile(&reference).expect("compiles"),
        &hydraulink::compile(&assembled).expect("compiles"),
    );
    for formulation in [Formulation::Penalty, Formulation::GlobalAli3p] {
        let (mut a, mut b) = (reference.clone(), assembled.clone());
        a.solver.formulation = formulation;
        b.solver.formulation = formulation;
        let worst = assert_same_trajectory(&a, &b, &format!("fourbar {formulation:?}"));
        eprintln!("fourbar {formulation:?}: largest relative deviation {worst:e}");
    }
    // Not the double step: it starts its trapezoidal history from the initialization's z̈₀,
    // which for a loop at rest is the penalty force on a loop residual at rounding level:
    // (0.0004, 0.022, −0.032) rad/s² for the shipped four-bar, 1e-9 rad/s² for the assembled
    // one. Its first step then moves the shipped four-bar by 1e-5 rad/s, which no rounding of
    // the model explains; the compiled models above are the same, so this is the double step's
    // sensitivity, not the mapping's (reported; the double step is not changed here).
}

/// The excavator turned 40° on its swing with the boom and arm moved off their typed pose, so
/// that the assembled positions leave the plane z = 0 and the cut joint's normal is no longer
/// the global z: the same compiled model and the same first second.
#[test]
fn the_excavator_in_the_assembled_pose_is_the_excavator() {
    let mut reference = spec_of("excavator");
    for (joint, q0) in [("swing", 0.7), ("z_boom", 0.05), ("z_arm", -0.05)] {
        let j = reference
            .joints
            .iter_mut()
            .find(|j| j.name == joint)
            .expect("joint");
        j.q0 = hydraulink::model::spec::Values::One(q0);
    }
    drive(
        &mut reference,
        &[
            ("U_boom", 5.0),
            ("U_arm", -5.0),
            ("U_bucket", 5.0),
            ("U_swing", 10.0),
        ],
    );
    let assembled = assembled_from(&reference);
    assert!(
        assembled.bodies.iter().any(|b| b.com[2].abs() > 0.5),
        "the swing moves the bodies out of the plane z = 0"
    );
    assert_same_model(
        &hydraulink::compile(&reference).expect("compiles"),
        &hydraulink::compile(&assembled).expect("compiles"),
    );
    let worst = assert_same_trajectory(&reference, &assembled, "excavator");
    eprintln!("excavator: largest relative deviation {worst:e}");
}

/// The tutorial's boom (step 3) raised 30°, both ways: `models/boom_assembled.toml`, typed by
/// hand in the assembled pose (centre of mass, rod pin and inertia tensor in global coordinates
/// at 30°, 16 digits, and `q0_deg = 30`), and the tutorial's own file in the reference
/// configuration turned by `q0_deg = 30`, its base pin moved as in the shipped file. They
/// compile to the same model and run the same trajectory.
#[test]
fn the_shipped_assembled_boom_runs_as_its_reference_form() {
    let step3 = std::fs::read_to_string(format!(
        "{}/../../docs/tutorial/step3_valve.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("tutorial step 3");
    // the base pin moved so that the cylinder sits mid-stroke at 30° (1.563 m of 1.2–1.8 m)
    let reference = step3
        .replace("G = [0.5, -1.0, 0.0]", "G = [1.5, -0.8, 0.0]")
        .replace("q0_deg = 0.0", "q0_deg = 30.0");
    for typed in ["G = [1.5, -0.8, 0.0]", "q0_deg = 30.0"] {
        assert!(reference.contains(typed), "the replacement {typed} hit");
    }
    let (reference, assembled) = (spec_from(&reference), spec_of("boom_assembled"));
    assert_eq!(assembled.pose, Pose::Assembled);
    assert_same_model(
        &hydraulink::compile(&reference).expect("compiles"),
        &hydraulink::compile(&assembled).expect("compiles"),
    );
    let worst = assert_same_trajectory(&reference, &assembled, "boom at 30°");
    eprintln!("boom at 30°: largest relative deviation {worst:e}");
}

/// The worked example of models/README.md ("Giving positions as your CAD program exports
/// them"), read from the Markdown: its boom and joint are those of `models/boom_assembled.toml`
/// value for value, and the numbers the text states hold: centre of mass 2 m and rod pin 1.5 m
/// from the pin along the boom at 30° (to 1e-15 m), the inertia tensor R diag(1, 666.7, 666.7) Rᵀ
/// in global axes (to 1e-12 kg m²), the joint angle 30° at t = 0, and the cylinder 1.563 m pin
/// to pin (the file's comment, 3 decimals).
#[test]
fn the_readme_assembled_example_is_the_shipped_boom() {
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(format!("{root}/models/README.md")).expect("README");
    // the ```toml block that holds the example's bodies
    let snippet = readme
        .split("```toml")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("pose = \"assembled\"") && b.contains("[[bodies]]"))
        .expect("models/README.md has the assembled-pose example");
    let example: toml::Table = toml::from_str(snippet).expect("the example is TOML");
    let file = std::fs::read_to_string(format!("{root}/models/boom_assembled.toml"))
        .expect("models/boom_assembled.toml");
    let shipped: toml::Table = toml::from_str(&file).expect("the shipped file is TOML");
    assert_eq!(example["pose"], shipped["pose"]);
    for table in ["bodies", "joints"] {
        assert_eq!(
            example[table], shipped[table],
            "the README's [[{table}]] differ from models/boom_assembled.toml"
        );
    }

    let spec = spec_of("boom_assembled");
    let boom = &spec.bodies[0];
    let (c, s) = (30f64.to_radians().cos(), 30f64.to_radians().sin());
    let along = |d: f64| [d * c, d * s, 0.0];
    for (typed, expected, what) in [
        (boom.com, along(2.0), "centre of mass 2 m along the boom"),
        (
            boom.markers["B"],
            along(1.5),
            "rod pin B 1.5 m along the boom",
        ),
    ] {
        for k in 0..3 {
            assert!(
                (typed[k] - expected[k]).abs() <= 1e-15,
                "{what}: {typed:?} vs {expected:?}"
            );
        }
    }
    // R diag(1, 666.7, 666.7) Rᵀ, entries [xx, yy, zz, xy, xz, yz]
    let expected = [
        c * c * 1.0 + s * s * 666.7,
        s * s * 1.0 + c * c * 666.7,
        666.7,
        c * s * (1.0 - 666.7),
        0.0,
        0.0,
    ];
    for (k, (typed, expected)) in boom.inertia.iter().zip(expected).enumerate() {
        assert!(
            (typed - expected).abs() <= 1e-12,
            "inertia entry {k}: {typed} vs {expected}"
        );
    }

    let sim = hydraulink::Simulation::new(hydraulink::compile(&spec).expect("compiles"))
        .expect("initializes");
    let labels = sim.output_labels();
    let mut row = vec![0.0; labels.len()];
    sim.output_row(&mut row);
    let column = |name: &str| row[labels.iter().position(|l| l == name).expect(name)];
    let angle = column("z1.q").to_degrees();
    assert!((angle - 30.0).abs() <= 1e-9, "z1 at t = 0: {angle}°");
    let length = column("cylinder.length");
    assert!(
        (length - 1.563).abs() <= 5e-4,
        "cylinder pin to pin: {length} m"
    );
    eprintln!("assembled boom at t = 0: z1 = {angle}°, cylinder {length} m");
}

/// Coordinates measured from the assembled pose (q0 = 0 there): the four-bar typed at its
/// initial pose with every `q0` zero starts where the shipped one does, and moves the same.
#[test]
fn assembled_coordinates_default_to_zero_in_the_assembled_pose() {
    let mut reference = spec_of("fourbar");
    drive(&mut reference, &[("U", 10.0)]);
    let mut assembled = assembled_from(&reference);
    for j in &mut assembled.joints {
        j.q0 = Default::default();
    }
    let (ra, rb) = (
        run(hydraulink::compile(&{
            let mut s = reference.clone();
            s.solver.duration_s = 1.0;
            s
        })
        .expect("compiles")),
        run(hydraulink::compile(&{
            let mut s = assembled.clone();
            s.solver.duration_s = 1.0;
            s
        })
        .expect("compiles")),
    );
    // the joint angles differ by the constant q0, the cylinder and the pressures not at all
    for j in &reference.joints {
        let (label, offset) = (format!("{}.q", j.name), j.q0_si()[0]);
        for (x, y) in ra.col(&label).iter().zip(rb.col(&label)) {
            assert!(
                (x - (y + offset)).abs() <= 1e-9,
                "{label}: {x} vs {y}+{offset}"
            );
        }
    }
    for label in ["cylinder.length", "V2.p"] {
        let (a, b) = (ra.col(label), rb.col(label));
        let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (x, y) in a.iter().zip(&b) {
            assert!(
                (x - y).abs() <= TRAJECTORY_TOL * scale,
                "{label}: {x} vs {y}"
            );
        }
    }
}

/// A cut joint whose two markers do not meet in the assembled pose is an error naming the cut
/// joint and the residual; a residual at CAD precision (1 µm) is closed by the assembly.
#[test]
fn a_loop_that_does_not_close_in_the_assembled_pose_is_named() {
    let mut assembled = assembled_from(&spec_of("fourbar"));
    let e = assembled.bodies[2].markers.get_mut("E").expect("marker E");
    e[0] += 1e-6;
    let m = hydraulink::compile(&assembled).expect("a 1 µm residual is CAD precision");
    hydraulink::Simulation::new(m).expect("the assembly closes it");
    let e = assembled.bodies[2].markers.get_mut("E").expect("marker E");
    e[0] += 1e-3;
    let error = hydraulink::compile(&assembled)
        .expect_err("a 1 mm residual")
        .to_string();
    assert!(
        error.contains("cut_joints[0].marker1")
            && error.contains("cut joint 'E'")
            && error.contains("1.001e-3 m"),
        "{error}"
    );
}

/// The default pose is the reference configuration, and a reference spec maps to itself.
#[test]
fn the_default_pose_is_the_reference_configuration() {
    for name in ["fourbar", "excavator", "boom"] {
        let s = spec_of(name);
        assert_eq!(s.pose, Pose::Reference, "{name}");
        assert_eq!(hydraulink::pipeline::pose::to_reference(&s), s, "{name}");
    }
}

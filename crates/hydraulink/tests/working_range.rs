//! The working range, dead centres and overload protection (`mechanics::working_range`, issue
//! 24): a crank and cylinder whose dead centre is known in closed form, the excavator as it was
//! before issue 24 (its arm and bucket cylinders top and bottom out inside their strokes), and
//! the virtual-work forces against finite differences of solved poses.

#[path = "common.rs"]
#[allow(dead_code)]
mod common;

use hydraulink::mechanics::working_range::{
    dead_centres, front, overload_protection, working_range, DeadCentreKind, PoseSolver,
    RangeOptions,
};
use hydraulink::model::{CylinderId, FramePoint};
use hydraulink::{Model, ModelSpec};

/// The excavator as it was before issue 24 (kept for the CLI's tests).
fn excavator_before() -> ModelSpec {
    let path = format!(
        "{}/../hydraulink-cli/tests/data/excavator_before_issue24.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    common::spec_from(&std::fs::read_to_string(path).expect("the kept excavator"))
}

/// `spec` compiled with `point` ("body.marker") as an output marker, and that marker's point.
fn with_point(mut spec: ModelSpec, point: &str) -> (Model, FramePoint) {
    if !spec.outputs.markers.iter().any(|m| m == point) {
        spec.outputs.markers.push(point.into());
    }
    let model = hydraulink::compile(&spec).expect("compiles");
    let p = model
        .output_markers
        .iter()
        .find(|m| m.0 == point)
        .expect("the marker")
        .1;
    (model, p)
}

fn cylinder(model: &Model, name: &str) -> usize {
    model
        .cylinders()
        .position(|c| c.name == name)
        .expect("cylinder")
}

/// A crank of radius r = 0.5 m about the z axis at the origin, its pin B at (0, r) when θ = 0,
/// pushed by a cylinder from the ground pin G = (d, 0), d = 2 m: B = (−r sin θ, r cos θ),
/// s² = d² + r² + 2 d r sin θ, so s tops out at d + r = 2.5 m at θ = 90° (G, O and B in a line:
/// the lever arm is zero), inside the stroke 1.8–2.8 m. Only VA has a relief.
const CRANK: &str = r#"
name = "crank"
gravity = [0.0, -9.81, 0.0]
[ground.markers]
G = [2.0, 0.0, 0.0]
[[bodies]]
name = "crank"
mass_kg = 10.0
com = [0.0, 0.0, 0.0]
inertia = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
markers = { B = [0.0, 0.5, 0.0] }
[[joints]]
name = "z1"
type = "revolute"
parent = "ground"
child = "crank"
location = [0.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
q0 = 0.0
[hydraulics.fluid]
density_kg_m3 = 870.0
bulk_modulus_pa = 1.5e9
[[hydraulics.volumes]]
name = "VA"
hose_volume_m3 = 1.0e-4
p0_pa = 1.0e6
[[hydraulics.volumes]]
name = "VB"
hose_volume_m3 = 1.0e-4
p0_pa = 1.0e6
[[hydraulics.tanks]]
name = "T"
pressure_pa = 1.0e5
[[hydraulics.cylinders]]
name = "cyl"
base = { body = "ground", marker = "G" }
rod = { body = "crank", marker = "B" }
piston_diameter_m = 0.080
rod_diameter_m = 0.045
stroke_m = 1.0
retracted_length_m = 1.8
piston_side = "VA"
rod_side = "VB"
[[elements]]
type = "relief_valve"
name = "relief_A"
inlet = "VA"
outlet = "T"
cracking_pressure_pa = 2.0e7
pressure_override_pa = 1.0e6
rated_flow_m3_s = 1.0e-3
"#;

#[test]
fn a_crank_cylinder_tops_out_where_its_line_passes_the_pivot() {
    let model = hydraulink::compile(&common::spec_from(CRANK)).unwrap();
    let found = dead_centres(&model).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &found[0];
    assert_eq!(d.kind, DeadCentreKind::LeverArmZero { tops_out: true });
    assert_eq!(d.cylinder, CylinderId(0));
    // s = d + r = 2.5 m at θ = π/2 (closed form); the tolerance is the error of the linear
    // interpolation between continuation steps of 0.005 rad, |s''| δ²/8 < 1e-5 m
    assert!((d.length_m - 2.5).abs() < 1e-5, "{}", d.length_m);
    let theta = d.joint_value.unwrap();
    assert!(
        (theta - std::f64::consts::FRAC_PI_2).abs() < 1e-3,
        "{theta}"
    );
}

#[test]
fn the_crank_force_by_virtual_work_is_the_closed_form_one() {
    let (model, p) = with_point(common::spec_from(CRANK), "crank.B");
    let pressure = 1.0e7;
    let wr = working_range(
        &model,
        &p,
        &RangeOptions {
            grid: 21,
            pressure_pa: Some(pressure),
            ..Default::default()
        },
    )
    .unwrap();
    // at θ = 0: ds/dθ = d r cos θ / s = 1/√4.25, |dr/dθ| = r: F_B = F (ds/dθ)/r
    let f_cyl = pressure * model.cylinder(0).area_a_m2;
    let expected = f_cyl * (1.0 / 4.25_f64.sqrt()) / 0.5;
    let f = &wr.forces[0];
    assert!(
        (f.initial_n - expected).abs() < 1e-9 * expected,
        "{f:?} vs {expected}"
    );
    // the largest along the stroke (initial branch) is not below the initial one, inside the
    // stroke
    assert!(
        f.max_n >= f.initial_n && (1.8..=2.8).contains(&f.max_at_length_m),
        "{f:?}"
    );
}

#[test]
fn overload_protection_names_the_chamber_without_a_relief() {
    let model = hydraulink::compile(&common::spec_from(CRANK)).unwrap();
    let (unprotected, highest) = overload_protection(&model);
    assert_eq!(highest, Some(2.0e7));
    assert_eq!(unprotected.len(), 1, "{unprotected:?}");
    assert_eq!(model.hydraulics.volumes[unprotected[0].volume.0].name, "VB");
    assert_eq!(unprotected[0].holds, "cyl rod side");
}

/// The issue's numbers for the excavator before issue 24, from an independent sweep over every
/// stroke limit: reach at ground 7.89 m, digging depth 4.34 m; the arm cylinder tops out at
/// 3.112 m, the bucket cylinder at 2.228 m (|DC| + |CE| and |HI| − |IK| of its pins).
#[test]
fn excavator_before_issue24_matches_the_issue() {
    let (model, p) = with_point(excavator_before(), "bucket.P");
    let wr = working_range(&model, &p, &RangeOptions::default()).unwrap();
    let f = wr.figures;
    // the issue gives 3 digits: ±0.005 m
    assert!((f.reach_at_ground_m.unwrap() - 7.89).abs() < 0.005, "{f:?}");
    assert!((f.digging_depth_m - 4.34).abs() < 0.005, "{f:?}");
    assert!(
        f.cutting_height_m > f.dump_height_m && f.dump_teeth_below_pin,
        "{f:?}"
    );
    assert!(f.max_reach_m >= f.reach_at_ground_m.unwrap(), "{f:?}");
    let found = dead_centres(&model).unwrap();
    let at = |name: &str| {
        let c = cylinder(&model, name);
        found
            .iter()
            .filter(|d| d.cylinder.0 == c)
            .map(|d| (d.length_m, d.kind))
            .collect::<Vec<_>>()
    };
    let arm = at("arm_cyl");
    assert_eq!(arm.len(), 1, "{found:?}");
    assert!((arm[0].0 - 3.112).abs() < 5e-4, "{arm:?}");
    assert_eq!(arm[0].1, DeadCentreKind::LeverArmZero { tops_out: true });
    let bucket = at("bucket_cyl");
    assert_eq!(bucket.len(), 1, "{found:?}");
    assert!((bucket[0].0 - 2.228).abs() < 5e-4, "{bucket:?}");
    assert_eq!(
        bucket[0].1,
        DeadCentreKind::LeverArmZero { tops_out: false }
    );
    assert!(at("boom_cyl").is_empty(), "{found:?}");
}

/// Bucket digging and arm crowd force by virtual work (dr/ds from the stacked Jacobian) against
/// finite differences of solved poses: F_c · 2h / |r(s + h) − r(s − h)|.
#[test]
fn virtual_work_forces_match_finite_differences_of_solved_poses() {
    let (model, p) = with_point(excavator_before(), "bucket.P");
    let pressure = 35.3e6;
    let wr = working_range(
        &model,
        &p,
        &RangeOptions {
            grid: 5,
            pressure_pa: Some(pressure),
            ..Default::default()
        },
    )
    .unwrap();
    let fr = front(&model, &p).unwrap();
    let mut solver = PoseSolver::new(&model, &fr.z0);
    for name in ["bucket_cyl", "arm_cyl", "boom_cyl"] {
        let c = cylinder(&model, name);
        let h = 1e-4;
        let mut at = |ds: f64| {
            let targets: Vec<Option<f64>> = fr
                .s0
                .iter()
                .enumerate()
                .map(|(o, &s)| Some(if o == c { s + ds } else { s }))
                .collect();
            let mut z = fr.z0.clone();
            solver.solve(&mut z, &targets).expect("assembles");
            solver.point(&z, &p)
        };
        let rate = (at(h) - at(-h)).norm() / (2.0 * h);
        let f_fd = pressure * model.cylinder(c).area_a_m2 / rate;
        let f_vw = wr.forces[c].initial_n;
        // central differences: O(h²) ≈ 1e-8 relative; the poses close to 1e-12 m over 2h
        assert!(
            (f_vw - f_fd).abs() < 1e-6 * f_fd,
            "{name}: {f_vw} vs {f_fd}"
        );
    }
    // the issue's breakout (154 kN at the 37.45 MPa relief, virtual work) and crowd (86 kN)
    let kn = |name: &str| wr.forces[cylinder(&model, name)].max_n * 37.45e6 / pressure / 1e3;
    eprintln!(
        "bucket {:.1} kN, arm {:.1} kN at 37.45 MPa",
        kn("bucket_cyl"),
        kn("arm_cyl")
    );
}

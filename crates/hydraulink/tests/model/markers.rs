//! `[outputs] markers`: result columns with a marker's global position, under a relative and
//! a natural-coordinate formulation, and the errors for a bad marker name.

use crate::common::{run, spec_of};

/// The boom's rod pin B sits 1.5 m from the pin O along the boom: its global position is
/// (1.5 cos z1, 1.5 sin z1, 0) at every row, whatever the formulation.
#[test]
fn a_marker_column_follows_the_body() {
    use hydraulink::model::spec::Formulation;
    for formulation in [Formulation::Penalty, Formulation::GlobalAli3p] {
        let mut spec = spec_of("boom");
        spec.outputs.markers = vec!["boom.B".into()];
        spec.solver.duration_s = 2.0;
        spec.solver.formulation = formulation;
        let r = run(hydraulink::compile(&spec).expect("compiles"));
        let (z, x, y, zz) = (
            r.col("z1.q"),
            r.col("boom.B.x"),
            r.col("boom.B.y"),
            r.col("boom.B.z"),
        );
        assert!(z.iter().any(|q| q.abs() > 0.05), "the boom moves");
        for k in 0..z.len() {
            assert!(
                (x[k] - 1.5 * z[k].cos()).abs() < 1e-12,
                "{formulation:?} x at row {k}"
            );
            assert!(
                (y[k] - 1.5 * z[k].sin()).abs() < 1e-12,
                "{formulation:?} y at row {k}"
            );
            assert_eq!(zz[k], 0.0);
        }
    }
}

#[test]
fn a_bad_marker_name_is_an_error_naming_the_field() {
    for (name, want) in [
        ("boomB", "must be written \"body.marker\""),
        ("boom.Q", "body 'boom' has no marker 'Q'"),
        ("arm.B", "arm"),
    ] {
        let mut spec = spec_of("boom");
        spec.outputs.markers = vec![name.into()];
        let e = hydraulink::compile(&spec)
            .expect_err("a bad marker")
            .to_string();
        assert!(
            e.contains("outputs.markers[0]") && e.contains(want),
            "{name}: {e}"
        );
    }
    let mut spec = spec_of("boom");
    spec.outputs.markers = vec!["boom.B".into(), "boom.B".into()];
    let e = hydraulink::compile(&spec).expect_err("twice").to_string();
    assert!(
        e.contains("outputs.markers[1]") && e.contains("twice"),
        "{e}"
    );
}

/// `Simulation::body_poses`: every marker of every body, mapped by its body's pose
/// (x + A r̄), lands on its marker columns (the same kinematics) at every step, under the
/// relative and natural-coordinate formulations; 1e-12 m is round-off on metre-sized links.
#[test]
fn body_poses_carry_every_marker_onto_its_column() {
    use hydraulink::model::spec::Formulation;
    use hydraulink::pipeline::simulation::BodyPose;
    for (name, formulations) in [
        (
            "boom",
            &[
                Formulation::Penalty,
                Formulation::DoubleStep,
                Formulation::GlobalAli3p,
                Formulation::GlobalI1al,
            ][..],
        ),
        (
            "fourbar",
            &[Formulation::Penalty, Formulation::DoubleStep][..],
        ),
        ("excavator", &[Formulation::Penalty][..]),
    ] {
        for &formulation in formulations {
            let mut spec = spec_of(name);
            spec.outputs.markers = spec
                .bodies
                .iter()
                .flat_map(|b| b.markers.keys().map(move |m| format!("{}.{m}", b.name)))
                .collect();
            spec.solver.formulation = formulation;
            spec.solver.duration_s = 0.3;
            let model = hydraulink::compile(&spec).expect("compiles");
            let mut sim = hydraulink::Simulation::new(model).expect("initializes");
            let labels = sim.output_labels();
            let mut row = vec![0.0; labels.len()];
            let mut poses = vec![BodyPose::default(); sim.model().bodies.len()];
            let n = (sim.model().duration_s() / sim.model().step_s()).round() as u64;
            let mut checked = 0;
            for step in 0..=n {
                if step > 0 {
                    sim.step().expect("steps");
                }
                sim.output_row(&mut row);
                sim.body_poses(&mut poses);
                for (marker, point) in &sim.model().output_markers {
                    let body = sim
                        .model()
                        .bodies
                        .iter()
                        .position(|b| b.frame == point.frame)
                        .expect("a marker's frame is a body's");
                    let r = point.point_ref;
                    let at = poses[body].point_m([r.x, r.y, r.z]);
                    for (axis, c) in ["x", "y", "z"].iter().enumerate() {
                        let col = labels
                            .iter()
                            .position(|l| *l == format!("{marker}.{c}"))
                            .expect("marker column");
                        assert!(
                            (at[axis] - row[col]).abs() < 1e-12,
                            "{name} {formulation:?} {marker}.{c} at step {step}: {} vs {}",
                            at[axis],
                            row[col]
                        );
                    }
                    checked += 1;
                }
            }
            assert!(checked > n, "{name}: markers checked");
        }
    }
}

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
    let model = hydraulink::model::compile(&spec).expect("compiles");
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
        .hydraulics
        .cylinders
        .iter()
        .position(|c| c.name == name)
        .expect("cylinder")
}

#[test]
fn excavator_before_issue24_figures() {
    let (model, p) = with_point(excavator_before(), "bucket.P");
    let wr = working_range(
        &model,
        &p,
        &RangeOptions {
            pressure_pa: Some(35.3e6),
            ..Default::default()
        },
    )
    .unwrap();
    eprintln!(
        "{:?}\nunreachable {} of {}",
        wr.figures,
        wr.unreachable,
        wr.points.len() + wr.unreachable
    );
    eprintln!("free {:?} plane {:?}", wr.front.free, wr.front.plane);
    eprintln!("{:?}", wr.forces);
    let dc = dead_centres(&model).unwrap();
    eprintln!("{dc:?}");
}

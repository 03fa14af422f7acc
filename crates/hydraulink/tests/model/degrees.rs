//! Angles in degrees (`q0_deg`, `qd0_deg_s`): the same model as in radians, and the errors for
//! joints with lengths and for both forms at once.

use crate::common::{spec_from, spec_of};

/// The four-bar with its joint angles written in degrees compiles to the same initial
/// coordinates (to the rounding of the degree-to-radian conversion) and assembles the same.
#[test]
fn the_four_bar_in_degrees_is_the_four_bar() {
    let text = std::fs::read_to_string(format!(
        "{}/../../models/fourbar.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("shipped model");
    let deg = text
        .replace("q0 = -2.356194490192345", "q0_deg = -135.0")
        .replace("q0 = -0.7853981633974483", "q0_deg = -45.0")
        .replace("q0 = 0.0", "q0_deg = 0.0\nqd0_deg_s = 0.0");
    assert_ne!(deg, text, "the replacements hit");
    let (a, b) = (
        hydraulink::compile(&spec_of("fourbar")).expect("compiles"),
        hydraulink::compile(&spec_from(&deg)).expect("compiles in degrees"),
    );
    assert_eq!(a.axes.len(), b.axes.len());
    for (x, y) in a.axes.iter().zip(b.axes.iter()) {
        assert!((x.q0 - y.q0).abs() <= 1e-15, "{} vs {}", x.q0, y.q0);
        assert_eq!(x.qd0, y.qd0);
    }
    let (sa, sb) = (
        hydraulink::Simulation::new(a).expect("starts"),
        hydraulink::Simulation::new(b).expect("starts in degrees"),
    );
    for (x, y) in sa.state().z.iter().zip(sb.state().z.iter()) {
        assert!((x - y).abs() <= 1e-12, "assembled {x} vs {y}");
    }
}

fn compile_error(text: &str) -> String {
    hydraulink::compile(&spec_from(text))
        .expect_err("a bad model")
        .to_string()
}

const SLIDER: &str = r#"
name = "slider"
[[bodies]]
name = "b"
mass_kg = 1.0
com = [0.0, 0.0, 0.0]
inertia = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
[[joints]]
name = "x"
type = "prismatic"
parent = "ground"
child = "b"
axis = [1.0, 0.0, 0.0]
"#;

#[test]
fn degrees_on_a_joint_with_lengths_are_rejected_by_name() {
    let e = compile_error(&format!("{SLIDER}q0_deg = 10.0\n"));
    assert!(e.contains("joints[0].q0_deg"), "{e}");
    assert!(e.contains("prismatic") && e.contains("give q0"), "{e}");
    let e = compile_error(&format!("{SLIDER}qd0_deg_s = 10.0\n"));
    assert!(
        e.contains("joints[0].qd0_deg_s") && e.contains("give qd0"),
        "{e}"
    );
}

#[test]
fn radians_and_degrees_together_are_rejected() {
    let text = SLIDER.replace("prismatic", "revolute");
    let e = compile_error(&format!("{text}q0 = 0.1\nq0_deg = 10.0\n"));
    assert!(
        e.contains("joints[0].q0_deg") && e.contains("`q0` are both given"),
        "{e}"
    );
    let e = compile_error(&format!("{text}q0_deg = [1.0, 2.0]\n"));
    assert!(
        e.contains("joints[0].q0_deg") && e.contains("has 2 values"),
        "{e}"
    );
}

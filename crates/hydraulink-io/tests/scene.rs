//! Worksite (scene) files: the excavator's worksite loads and compiles with the machine; an
//! error in a scene element is reported at the scene file's line with the path counted in the
//! scene file; a model without a scene adds nothing.

use std::path::{Path, PathBuf};

use hydraulink_io::{add_scene, load_model, load_scene, parse_scene, scene_path, SceneChoice};

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models")
}

#[test]
fn the_excavator_names_its_worksite_and_compiles_with_it() {
    let model = models().join("excavator.toml");
    let mut spec = load_model(&model).expect("the excavator loads");
    let n = spec.elements.len();
    // no scene unless asked for
    assert_eq!(scene_path(&SceneChoice::None, Some(&model), &spec), None);
    let path = scene_path(&SceneChoice::Model, Some(&model), &spec).expect("it names one");
    assert_eq!(path, models().join("scenes/worksite.toml"));
    let mut scene = load_scene(&path).expect("the worksite loads");
    add_scene(&mut spec, &mut scene);
    assert_eq!(scene.first_element, n);
    assert_eq!(spec.elements.len(), n + 4);
    let model = hydraulink::model::compile(&spec).expect("the machine with its worksite compiles");
    let sim = hydraulink::Simulation::new(model).expect("it initializes");
    let labels = sim.output_labels();
    for c in [
        "arm_obstacles.hits",
        "bucket_obstacles.hit_force",
        "boom_obstacles.peak_force",
        "bucket_ground.force",
    ] {
        assert!(labels.iter().any(|l| l == c), "no column {c}");
    }
}

#[test]
fn an_error_in_a_scene_element_names_the_scene_file_line_and_path() {
    let model = models().join("excavator.toml");
    let mut spec = load_model(&model).expect("the excavator loads");
    let text = "description = \"one bad pole\"\n\n[[elements]]\ntype = \"obb_contact\"\nname = \"pole_hit\"\nbody = \"arm\"\nmarker = \"F\"\nhalf_extents_m = [0.2, 1.7, 0.2]\nstiffness_n_m = 1.0e7\ndamping_n_s_m = 1.0e4\nobstacle = { kind = \"pole\", base_m = [5.0, 0.0, 0.0], axis = [0.0, 1.0, 0.0], radius_m = -0.2, height_m = 3.0 }\n";
    let mut scene = parse_scene(text, "site.toml").expect("parses");
    add_scene(&mut spec, &mut scene);
    let error = hydraulink::model::compile(&spec).expect_err("a negative radius");
    let located = scene.locate(&error).expect("in the scene");
    let shown = located.to_string();
    assert!(
        shown.starts_with("site.toml:11:") && shown.contains("elements[0].obstacle.radius_m"),
        "{shown}"
    );
    assert!(shown.contains("contact 'pole_hit'"), "{shown}");
    // an unknown key in a scene file is a schema error at its element's table (serde reports a
    // tagged element's fields there, as for model files), naming the field
    let bad = "[[elements]]\ntype = \"obb_contact\"\nname = \"x\"\nbody = \"arm\"\nmarker = \"F\"\nhalf_extents_m = [0.2, 1.7, 0.2]\nstiffness_n_m = 1.0e7\ndamping_n_s_m = 1.0e4\nobstacle = { kind = \"plane\", point_m = [0.0, 0.0, 0.0], normal = [0.0, 1.0, 0.0] }\ncolour = \"red\"\n";
    let e = parse_scene(bad, "site.toml").expect_err("unknown key");
    assert_eq!(e.line, Some(1), "{e}");
    assert!(e.to_string().contains("unknown field `colour`"), "{e}");
    // a model error outside the scene's elements is not the scene's
    let mut outside = error.clone();
    outside.path = "bodies[0].mass_kg".into();
    assert!(scene.locate(&outside).is_none());
}

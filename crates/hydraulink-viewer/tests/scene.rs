//! The scene and the frames, without a browser: every shipped model draws every body, the
//! excavator's default controls and gauges, and the frame size against the 1 MB/s budget.

use std::path::Path;

use hydraulink_rt::BindingSource;
use hydraulink_viewer::protocol::{cylinder_ends, write_frame, ClientMessage, FrameInfo};
use hydraulink_viewer::Scene;

fn load(name: &str) -> (hydraulink::model::spec::ModelSpec, hydraulink::Simulation) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../models/{name}.toml"));
    let spec = hydraulink_io::load_model(&path).expect("shipped model loads");
    let sim = hydraulink::Simulation::new(hydraulink::model::compile(&spec).expect("compiles"))
        .expect("initializes");
    (spec, sim)
}

#[test]
fn every_shipped_model_draws_every_body() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let spec = hydraulink_io::load_model(&path).expect("shipped model loads");
        let mut scene = Scene::new(&spec, 1e-3, &[]);
        // the `mesh` shapes' files resolve beside the model
        scene
            .load_meshes(path.parent().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for b in &scene.bodies {
            assert!(
                !b.shapes.is_empty(),
                "{}: body {} draws nothing",
                path.display(),
                b.name
            );
            for s in &b.shapes {
                if s.kind == "mesh" {
                    assert!(s.indices.len() >= 3 && s.indices.len() % 3 == 0, "{s:?}");
                    let n = s.vertices.len() / 3;
                    assert!(s.indices.iter().all(|&i| (i as usize) < n), "{s:?}");
                } else {
                    assert!(s.radius > 0.0 || (s.width > 0.0 && s.height > 0.0), "{s:?}");
                }
            }
        }
        n += 1;
    }
    assert!(n >= 10, "{n} models");
}

#[test]
fn excavator_scene_has_its_visuals_controls_and_gauges() {
    let (spec, sim) = load("excavator");
    let scene = Scene::new(&spec, sim.model().step_s(), &sim.output_labels());
    assert!(scene.bodies.iter().all(|b| !b.default_shapes));
    let keys: Vec<(&str, &str, &str)> = scene
        .inputs
        .iter()
        .map(|i| (i.name.as_str(), i.keys.0.as_str(), i.keys.1.as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            ("U_boom", "w", "s"),
            ("U_arm", "i", "k"),
            ("U_bucket", "l", "j"),
            ("U_swing", "a", "d")
        ]
    );
    let axes: Vec<Option<&str>> = scene.inputs.iter().map(|i| i.axis.as_deref()).collect();
    assert_eq!(
        axes,
        [
            Some("right_y"),
            Some("left_y"),
            Some("right_x"),
            Some("left_x")
        ]
    );
    // [[hud.gauges]]: 6 chamber pressures (red above 90 % of the relief), 3 forces, the
    // bucket tip's height and tilt, pump power, fuel
    assert_eq!(scene.gauges.len(), 13);
    assert_eq!(scene.gauges[0].label, "V1.p");
    assert!(scene.gauges[0].limit.is_some_and(|l| l > 30.0 && l < 40.0));
    assert_eq!(scene.keys, ["w", "s", "i", "k", "l", "j", "a", "d"]);
    let b = scene.default_bindings();
    assert_eq!(b.len(), 8, "a key pair and an axis per input");
    assert!(matches!(&b[0].source, BindingSource::Keys { positive, .. } if positive == "w"));
    assert!(b[4..].iter().all(|b| b.deadband == 0.1));
}

#[test]
fn excavator_frame_is_about_a_kilobyte_and_carries_the_pins() {
    let (spec, sim) = load("excavator");
    let scene = Scene::new(&spec, sim.model().step_s(), &sim.output_labels());
    let hud = hydraulink_viewer::hud::Hud::new(&spec, &sim.output_labels()).expect("HUD");
    let options = hydraulink_rt::EngineOptions {
        outputs: Some(hud.columns.clone()),
        display_hz: 1000.0,
        ..Default::default()
    };
    let clock = hydraulink_rt::ManualClock::new(std::time::Duration::from_micros(100));
    let (mut core, channels) = hydraulink_rt::Core::new(sim, options, clock).expect("options");
    core.run_steps(3);
    let mut snap = channels.snapshots.try_recv().expect("a snapshot per step");
    // worst-case widths of the numbers
    snap.step = 123_456_789;
    snap.time_s = 12345.678;
    snap.inputs.iter_mut().for_each(|u| *u = -10.0);
    snap.outputs.iter_mut().for_each(|y| *y = -3.5e7);
    let mut state = hud.state();
    hud.update(&mut state, snap.time_s, &snap.poses, &snap.outputs);
    state.gauges.iter_mut().for_each(|g| *g = -35.0);
    let mut out = String::new();
    let info = FrameInfo {
        paused: false,
        mode: "replay-end",
        hud: &state,
    };
    write_frame(&mut out, &scene, &[1, 2, 3, 4], &snap, &info);
    let v: serde_json::Value = serde_json::from_str(&out).expect("a frame is JSON");
    assert_eq!(v["poses"].as_array().unwrap().len(), 6);
    // the boom cylinder's pins at the start: G on the upper structure and B on the boom
    let (g, b) = cylinder_ends(&snap.poses, &scene.cylinders[0]);
    let pins = v["cylinders"][0].as_array().unwrap();
    for (k, x) in g.iter().chain(&b).enumerate() {
        assert!((pins[k].as_f64().unwrap() - x).abs() < 1e-4);
    }
    // budget: < 1 MB/s at 60 Hz, with worst-case widths of every number
    let bytes = out.len();
    assert!(bytes * 60 < 1_000_000, "{bytes} B per frame");
    assert!(bytes < 1500, "{bytes} B per frame");
}

#[test]
fn page_messages_become_engine_commands() {
    let m: ClientMessage =
        serde_json::from_str(r#"{"type":"key","key":"w","pressed":true}"#).unwrap();
    assert_eq!(
        m.command(),
        Some(hydraulink_rt::Command::Key {
            key: "w".into(),
            pressed: true
        })
    );
    let m: ClientMessage = serde_json::from_str(r#"{"type":"reset"}"#).unwrap();
    assert_eq!(m.command(), Some(hydraulink_rt::Command::Reset));
    // the server's own controls are no engine commands
    for text in [
        r#"{"type":"record"}"#,
        r#"{"type":"record_stop"}"#,
        r#"{"type":"replay"}"#,
        r#"{"type":"live"}"#,
        r#"{"type":"seek","t":1.5}"#,
        r#"{"type":"speed","factor":2.0}"#,
    ] {
        let m: ClientMessage = serde_json::from_str(text).unwrap();
        assert_eq!(m.command(), None, "{text}");
    }
    assert!(serde_json::from_str::<ClientMessage>(r#"{"type":"launch"}"#).is_err());
}

#[test]
fn the_excavator_cab_mesh_sits_where_the_model_puts_it_and_a_missing_file_is_named() {
    let (spec, sim) = load("excavator");
    let mut scene = Scene::new(&spec, sim.model().step_s(), &sim.output_labels());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    scene.load_meshes(&dir).expect("the shipped meshes load");
    let upper = scene.bodies.iter().find(|b| b.name == "upper").unwrap();
    let cab = upper
        .shapes
        .iter()
        .find(|s| s.kind == "mesh")
        .expect("a mesh on the upper structure");
    // the cab's file spans x, z in [-0.475, 0.475] and y in [0, 1.05] m, placed at origin
    // [0.55, 2.55, 0.95] with the model's axes and scale 1
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for v in cab.vertices.chunks_exact(3) {
        for k in 0..3 {
            lo[k] = lo[k].min(v[k]);
            hi[k] = hi[k].max(v[k]);
        }
    }
    let want_lo = [0.075, 2.55, 0.475];
    let want_hi = [1.025, 3.6, 1.425];
    for k in 0..3 {
        assert!((lo[k] - want_lo[k]).abs() < 1e-5, "{lo:?}");
        assert!((hi[k] - want_hi[k]).abs() < 1e-5, "{hi:?}");
    }
    // the page receives the triangles, not the file name
    let json = hydraulink_viewer::protocol::scene_message(&scene);
    assert!(json.contains("\"vertices\":[") && !json.contains("excavator_cab.obj"));
    // a file that is not there: the body, the field and the path in the error
    let mut scene = Scene::new(&spec, sim.model().step_s(), &sim.output_labels());
    let e = scene
        .load_meshes(&std::env::temp_dir().join("no-such-folder"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("body 'upper'")
            && e.contains("visual[2].file")
            && e.contains("meshes/excavator_cab.obj"),
        "{e}"
    );
}

#[test]
fn the_excavator_worksite_draws_its_obstacles_once_each() {
    // the machine with the worksite its `scene` key names, as `hydraulink serve` loads it
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/excavator.toml");
    let (spec, _) = hydraulink_io::with_scene(
        hydraulink_io::load_model(&path).expect("shipped model loads"),
        &hydraulink_io::SceneChoice::Model,
        Some(&path),
    )
    .expect("the machine with its worksite loads");
    let model = hydraulink::model::compile(&spec).expect("compiles");
    let obstacles = hydraulink_viewer::scene::obstacles(&model);
    // the ground plane, three poles and the hopper's floor and four walls, though the poles
    // and the hopper are listed against three bodies
    let boxes = obstacles.iter().filter(|o| o.kind == "box").count();
    let planes = obstacles.iter().filter(|o| o.kind == "plane").count();
    assert_eq!((boxes, planes), (8, 1), "{obstacles:?}");
    assert!(obstacles
        .iter()
        .all(|o| o.half.iter().all(|h| h.is_finite())));
    // the scene message carries them
    let mut sc = Scene::new(&spec, 1e-3, &[]);
    sc.obstacles = obstacles;
    let msg = hydraulink_viewer::protocol::scene_message(&sc);
    assert!(
        msg.contains("\"obstacles\":[{\"kind\":\"plane\""),
        "{}",
        &msg[..200.min(msg.len())]
    );
}

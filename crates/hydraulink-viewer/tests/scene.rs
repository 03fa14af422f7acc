//! The scene and the frames, without a browser: every shipped model draws every body, the
//! excavator's default controls and gauges, and the frame size against the 1 MB/s budget.

use std::path::Path;

use hydraulink_rt::BindingSource;
use hydraulink_viewer::protocol::{cylinder_ends, write_frame, ClientMessage, FrameInfo};
use hydraulink_viewer::Scene;

fn load(name: &str) -> (hydraulink::model::spec::ModelSpec, hydraulink::Simulation) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../models/{name}.toml"));
    let spec = hydraulink_io::load_model(&path).expect("shipped model loads");
    let sim = hydraulink::Simulation::new(hydraulink::compile(&spec).expect("compiles"))
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
    assert_eq!(scene.gauges[0].label, "boom cyl. piston side");
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

/// The shipped excavator with the worksite its `scene` key names, as `hydraulink serve` loads it.
fn excavator_with_worksite() -> hydraulink::ModelSpec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/excavator.toml");
    hydraulink_io::with_scene(
        hydraulink_io::load_model(&path).expect("shipped model loads"),
        &hydraulink_io::SceneChoice::Model,
        Some(&path),
    )
    .expect("the machine with its worksite loads")
    .0
}

#[test]
fn the_excavator_worksite_draws_its_obstacles_once_each() {
    // the machine with the worksite its `scene` key names, as `hydraulink serve` loads it
    let spec = excavator_with_worksite();
    let model = hydraulink::compile(&spec).expect("compiles");
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

/// Every `.toml` in models/, as a path.
fn shipped_models() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    out.sort();
    out
}

/// Issue 23: the drawn barrel and rod overlap at every stroke of every shipped cylinder (the
/// four-bar at 3 s showed a gap) by at least the cap, and some rod shows when it is fully
/// retracted; a cylinder whose closed length holds its stroke draws a rod of one length.
#[test]
fn rod_and_barrel_overlap_at_every_stroke_of_every_shipped_cylinder() {
    let mut n = 0;
    for path in shipped_models() {
        let spec = hydraulink_io::load_model(&path).expect("shipped model loads");
        for c in &Scene::new(&spec, 1e-3, &[]).cylinders {
            let (l0, s) = (c.retracted_length, c.stroke);
            // the sizes come from the cylinder's closed length and stroke
            assert_eq!(
                (c.barrel_length, c.cap_length),
                hydraulink_viewer::scene::sleeve_lengths(l0, s)
            );
            // from full retraction to full extension, and a little beyond both
            for k in -5..=105 {
                let l = l0 + s * f64::from(k) / 100.0;
                let (barrel, rod) = c.drawn(l);
                let overlap = barrel + rod - l;
                assert!(
                    overlap >= c.cap_length - 1e-12 && barrel <= l && rod <= l,
                    "{}: cylinder {} at {l:.4} m of [{l0}, {}]: barrel {barrel:.4}, rod \
                     {rod:.4}, overlap {overlap:.4} m",
                    path.display(),
                    c.name,
                    l0 + s
                );
            }
            // some rod shows when fully retracted
            let (barrel, _) = c.drawn(l0);
            assert!(barrel <= 0.9 * l0 + 1e-12, "{}: {}", path.display(), c.name);
            // a cylinder whose closed length holds its stroke keeps one rod length
            if s + 2.0 * c.cap_length <= 0.9 * l0 {
                let r0 = c.drawn(l0).1;
                let r1 = c.drawn(l0 + s).1;
                assert!(
                    (r1 - r0).abs() < 1e-9,
                    "{}: {} rod {r0} → {r1}",
                    path.display(),
                    c.name
                );
            }
            n += 1;
        }
    }
    assert!(n >= 10, "{n} cylinders");
}

/// Issue 23: the key pairs go W/S, I/K, L/J, A/D in the model's order whatever the valve
/// count: a two-valve arm gets W/S and I/K (it got W/S and L/J, and I did nothing).
#[test]
fn keys_follow_the_documented_order_whatever_the_valve_count() {
    let pairs = |spec: &hydraulink::model::spec::ModelSpec| -> Vec<(String, String, String)> {
        Scene::new(spec, 1e-3, &[])
            .inputs
            .iter()
            .map(|i| (i.name.clone(), i.keys.0.clone(), i.keys.1.clone()))
            .collect()
    };
    let t = |n: &str, p: &str, m: &str| (n.to_string(), p.to_string(), m.to_string());
    // the loader's two valves: lift and tilt
    let (loader, _) = load("loader");
    assert_eq!(
        pairs(&loader),
        [t("U_lift", "w", "s"), t("U_tilt", "i", "k")]
    );
    // an arm with the excavator's boom and bucket valves only
    let (mut arm, _) = load("excavator");
    arm.hydraulics
        .valves
        .retain(|v| v.input == "U_boom" || v.input == "U_bucket");
    assert_eq!(
        pairs(&arm),
        [t("U_boom", "w", "s"), t("U_bucket", "i", "k")]
    );
    // the gamepad keeps the cab's sticks by name: the bucket on the right stick sideways
    let sc = Scene::new(&arm, 1e-3, &[]);
    assert_eq!(sc.inputs[1].axis.as_deref(), Some("right_x"));
    assert_eq!(sc.keys, ["w", "s", "i", "k"]);
}

/// Issue 23: every gauge of every shipped model, given or default, is labelled by what it
/// measures, never by a bare column name like `V1.p`; the excavator's by its volumes'
/// labels, and the defaults from the cylinder chamber a volume feeds.
#[test]
fn gauges_are_labelled_by_what_they_measure() {
    for path in shipped_models() {
        let spec = hydraulink_io::load_model(&path).expect("shipped model loads");
        let sim = hydraulink::Simulation::new(hydraulink::compile(&spec).expect("compiles"))
            .expect("initializes");
        for g in Scene::new(&spec, 1e-3, &sim.output_labels()).gauges {
            assert!(
                !g.label.contains('.') || g.label.contains("cyl."),
                "{}: gauge on {} is labelled {:?}",
                path.display(),
                g.sensor,
                g.label
            );
            assert!(!g.label.contains('_'), "{}: {:?}", path.display(), g.label);
        }
    }
    let (spec, sim) = load("excavator");
    let labels: Vec<String> = Scene::new(&spec, 1e-3, &sim.output_labels())
        .gauges
        .into_iter()
        .map(|g| g.label)
        .collect();
    assert_eq!(
        labels[..9],
        [
            "boom cyl. piston side",
            "boom cyl. rod side",
            "arm cyl. piston side",
            "arm cyl. rod side",
            "bucket cyl. piston side",
            "bucket cyl. rod side",
            "boom cyl. force",
            "arm cyl. force",
            "bucket cyl. force"
        ]
    );
    // without the volumes' labels and the model's gauges: the defaults say the same, derived
    // from the cylinders the volumes feed
    let mut bare = spec.clone();
    bare.hud.gauges.clear();
    for v in &mut bare.hydraulics.volumes {
        v.label = None;
    }
    let defaults: Vec<(String, String)> = Scene::new(&bare, 1e-3, &sim.output_labels())
        .gauges
        .into_iter()
        .map(|g| (g.sensor, g.label))
        .collect();
    let find = |s: &str| {
        defaults
            .iter()
            .find(|(x, _)| x == s)
            .map(|(_, l)| l.as_str())
    };
    assert_eq!(find("V1.p"), Some("boom cyl. piston side"));
    assert_eq!(find("V6.p"), Some("bucket cyl. rod side"));
    assert_eq!(find("arm_cyl.force"), Some("arm cyl. force"));
    assert_eq!(
        hydraulink_viewer::hud::default_gauge_label(&bare, "VP.p"),
        "VP pressure"
    );
    // a label on the gauge wins
    assert_eq!(
        Scene::new(&spec, 1e-3, &sim.output_labels()).gauges[9].label,
        "bucket tip height"
    );
}

/// Issue 23: `view` shows the run's own figures, read from its summary.json.
#[test]
fn a_finished_runs_figures_come_from_its_summary() {
    let text = r#"{"model":"m","status":"completed","step_count":3000,"real_time_factor":41.5,
        "peak_abs_energy_drift_j":0.0125,"output_rows":3001}"#;
    let r = hydraulink_viewer::scene::RunFigures::from_summary_json(text).expect("a summary");
    assert_eq!(r.status, "completed");
    assert_eq!(r.steps, 3000);
    assert_eq!(r.real_time_factor, Some(41.5));
    assert_eq!(r.drift_j, Some(0.0125));
    let none = r#"{"status":"running","step_count":0,"real_time_factor":null}"#;
    let r = hydraulink_viewer::scene::RunFigures::from_summary_json(none).expect("a summary");
    assert_eq!((r.real_time_factor, r.drift_j), (None, None));
    assert!(hydraulink_viewer::scene::RunFigures::from_summary_json("[]").is_none());
}

/// Issue 23: the worksite of a run (`run --scene`) is written beside its poses and read back
/// by `view` as `serve` has it: world.json's obstacles and terrain, then per row the changed
/// columns, which rebuild every row's heights to the millimetre.
#[test]
fn the_worksite_rows_round_trip() {
    use hydraulink_viewer::world_rows::{create, RecordedWorld};
    let spec = excavator_with_worksite();
    let sim = hydraulink::Simulation::new(hydraulink::compile(&spec).expect("compiles"))
        .expect("initializes");
    let dir = std::env::temp_dir().join(format!("hydraulink-world-rows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut w = create(&dir, &sim).expect("written").expect("a terrain");
    let h0: Vec<f64> = sim.state().world.as_ref().unwrap().field.h.clone();
    // rows: the start, two columns dug, one piled back, nothing
    let mut rows = vec![h0.clone()];
    let mut h = h0.clone();
    h[3] -= 0.2;
    h[7] -= 0.0514;
    rows.push(h.clone());
    h[3] += 0.1;
    rows.push(h.clone());
    rows.push(h.clone());
    for (k, r) in rows.iter().enumerate() {
        w.write(k as f64 * 0.1, r).unwrap();
    }
    w.finish().unwrap();
    let rec = RecordedWorld::read(&dir).unwrap().expect("a worksite");
    assert_eq!(rec.world.obstacles.len(), 9);
    assert_eq!(rec.rows.len(), rows.len());
    assert_eq!(rec.rows[1].len(), 2, "only the changed columns");
    assert!(rec.rows[3].is_empty());
    let mut mm = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        // forwards row by row, and from the start (a seek backwards)
        rec.advance(&mut mm, i, i);
        let expect: Vec<i32> = r
            .iter()
            .map(|x| hydraulink_viewer::protocol::millimetres(*x))
            .collect();
        assert_eq!(mm, expect, "row {i}");
        let mut again = Vec::new();
        rec.advance(&mut again, 0, i);
        assert_eq!(again, expect, "row {i} from the start");
    }
    // a run without a worksite in the same folder removes the files
    let (plain, plain_sim) = load("fourbar");
    drop(plain);
    assert!(create(&dir, &plain_sim).unwrap().is_none());
    assert!(RecordedWorld::read(&dir).unwrap().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

//! The HUD without a browser: the virtual sensors against closed forms, the fuel integral, the
//! loader's scenario ticking its tasks off (and starting again after a reset), the gauges of
//! the frame, unknown names, and the part of an input log that a replay plays.

use std::path::Path;

use hydraulink::pipeline::simulation::BodyPose;
use hydraulink_rt::{Action, Event, Recording};
use hydraulink_viewer::hud::{axis_angle, point_height, Hud, HudError};
use hydraulink_viewer::protocol::{write_frame, FrameInfo};
use hydraulink_viewer::Scene;

fn load(name: &str) -> (hydraulink::model::spec::ModelSpec, hydraulink::Simulation) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../models/{name}.toml"));
    let spec = hydraulink_io::load_model(&path).expect("shipped model loads");
    let sim = hydraulink::Simulation::new(hydraulink::compile(&spec).expect("compiles"))
        .expect("initializes");
    (spec, sim)
}

/// A pose turned by `angle` [rad] about +z, at `x`.
fn turned(angle: f64, x: [f64; 3]) -> BodyPose {
    let (s, c) = angle.sin_cos();
    BodyPose {
        position_m: x,
        rotation: [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
    }
}

#[test]
fn the_sensors_match_closed_forms() {
    let up = [0.0, 1.0, 0.0];
    let a = 30f64.to_radians();
    let p = turned(a, [1.0, 2.0, 0.0]);
    // a point 2 m along the body's x axis: 2 + 2 sin 30° = 3 m up
    assert!((point_height(&p, [2.0, 0.0, 0.0], up) - 3.0).abs() < 1e-12);
    // the x axis at 30° to the horizontal, the y axis at 60°, −x at −30°
    assert!((axis_angle(&p, [1.0, 0.0, 0.0], up) - a).abs() < 1e-12);
    assert!((axis_angle(&p, [0.0, 5.0, 0.0], up) - 60f64.to_radians()).abs() < 1e-12);
    assert!((axis_angle(&p, [-1.0, 0.0, 0.0], up) + a).abs() < 1e-12);
    // along z: horizontal whatever the turn
    assert!(axis_angle(&p, [0.0, 0.0, 1.0], up).abs() < 1e-12);
}

/// The loader's HUD at its initial state: the bucket pin 1.232 m above the ground (statics of
/// models/loader.toml: boom at −0.3 rad, pin 2.6 sin 0.3 below the pivot, pivot 2 m up), the
/// bucket level.
#[test]
fn the_loader_hud_reads_its_initial_state() {
    let (spec, mut sim) = load("loader");
    let labels = sim.output_labels();
    let hud = Hud::new(&spec, &labels).expect("the loader's HUD names known values");
    let mut poses = vec![BodyPose::default(); 2];
    sim.body_poses(&mut poses);
    let mut row = vec![0.0; labels.len()];
    sim.output_row(&mut row);
    let outputs: Vec<f64> = hud
        .columns
        .iter()
        .map(|c| row[labels.iter().position(|l| l == c).unwrap()])
        .collect();
    let mut st = hud.state();
    hud.update(&mut st, 0.0, &poses, &outputs);
    let pin = 2.0 - 2.6 * 0.3f64.sin();
    assert!((st.gauges[0] - pin).abs() < 1e-9, "{} m", st.gauges[0]);
    assert!(st.gauges[1].abs() < 1e-9, "level: {} deg", st.gauges[1]);
    // the lift pressure gauge shows V1.p in MPa
    let v1 = row[labels.iter().position(|l| l == "V1.p").unwrap()];
    assert!((st.gauges[2] - v1 * 1e-6).abs() < 1e-12);
    // the frame carries what the HUD computed
    let scene = Scene::new(&spec, sim.model().step_s(), &labels);
    let snap = hydraulink_rt::Snapshot {
        step: 0,
        time_s: 0.0,
        inputs: vec![0.0; sim.input_names().len()],
        outputs,
        poses,
        terrain_m: Vec::new(),
        statistics: hydraulink_rt::Statistics::default(),
    };
    let mut text = String::new();
    let info = FrameInfo {
        paused: false,
        mode: "live",
        hud: &st,
    };
    write_frame(&mut text, &scene, &[1, 2], &snap, &info);
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    for (k, g) in st.gauges.iter().enumerate() {
        assert!(
            (v["gauges"][k].as_f64().unwrap() - g).abs() <= 5e-4,
            "gauge {k}"
        );
    }
    assert_eq!(v["task"], 0);
    assert_eq!(v["mode"], "live");
}

/// Constant shaft power P over T: fuel m = P T / (η H) (the trapezoidal rule is exact).
#[test]
fn the_fuel_is_the_shaft_energy_over_efficiency_and_heating_value() {
    let (spec, sim) = load("loader");
    let labels = sim.output_labels();
    let hud = Hud::new(&spec, &labels).unwrap();
    let k = hud
        .columns
        .iter()
        .position(|c| c == "pump.shaft_power")
        .unwrap();
    let fuel = spec
        .hud
        .gauges
        .iter()
        .position(|g| g.sensor == "fuel_kg")
        .unwrap();
    let mut outputs = vec![0.0; hud.columns.len()];
    outputs[k] = 20e3;
    let poses = vec![BodyPose::default(); 2];
    let mut st = hud.state();
    for i in 0..=60 {
        hud.update(&mut st, f64::from(i) * 0.05, &poses, &outputs);
    }
    // 20 kW for 3 s = 60 kJ; / (0.35 × 42.8 MJ/kg) = 4.005 g
    let grams = 60e3 / (0.35 * 42.8e6) * 1e3;
    assert!(
        (st.gauges[fuel] - grams).abs() < 1e-9,
        "{} g",
        st.gauges[fuel]
    );
    // negative power (a motoring pump) costs nothing
    outputs[k] = -5e3;
    hud.update(&mut st, 3.05, &poses, &outputs);
    hud.update(&mut st, 3.10, &poses, &outputs);
    assert!(st.gauges[fuel] <= grams + 20e3 * 0.025 / (0.35 * 42.8e6) * 1e3 + 1e-12);
}

/// The loader's three tasks: raise above 2 m for 1 s, level within ±5° for 2 s, lower below
/// 1.4 m level. A break in a condition restarts the hold; time going back (a reset) restarts
/// the scenario.
#[test]
fn the_loader_scenario_ticks_its_tasks_off() {
    let (spec, sim) = load("loader");
    let labels = sim.output_labels();
    let hud = Hud::new(&spec, &labels).unwrap();
    assert_eq!(hud.n_tasks(), 3);
    let outputs = vec![0.0; hud.columns.len()];
    // the bucket body frame: the pin C at (2.6, 0) in reference coordinates, ground at −2 m;
    // a pose putting the pin at height h (above the ground) with the bucket tilted by `tilt`
    let at = |h: f64, tilt_deg: f64| {
        let a = tilt_deg.to_radians();
        // x + A (2.6, 0, 0) has the height h − 2
        vec![
            BodyPose::default(),
            turned(a, [0.0, h - 2.0 - 2.6 * a.sin(), 0.0]),
        ]
    };
    let mut st = hud.state();
    let mut t = 0.0;
    let mut run = |st: &mut hydraulink_viewer::hud::HudState, h: f64, tilt: f64, secs: f64| {
        let n = (secs / 0.1).round() as usize;
        for _ in 0..n {
            t += 0.1;
            hud.update(st, t, &at(h, tilt), &outputs);
        }
    };
    run(&mut st, 1.2, 0.0, 0.5);
    assert_eq!((st.task, st.gauges[0] < 1.3), (0, true), "still down");
    run(&mut st, 2.2, 12.0, 0.6);
    assert_eq!(st.task, 0, "0.5 s above 2 m is not yet 1 s");
    run(&mut st, 1.9, 12.0, 0.1);
    assert_eq!(st.held_s, 0.0, "a dip below 2 m restarts the hold");
    run(&mut st, 2.2, 12.0, 1.2);
    assert_eq!(st.task, 1, "held 1 s above 2 m");
    run(&mut st, 2.2, 12.0, 3.0);
    assert_eq!(st.task, 1, "tilted 12°: not level");
    run(&mut st, 2.2, -4.0, 2.2);
    assert_eq!(st.task, 2, "level within 5° for 2 s");
    run(&mut st, 1.3, 8.0, 0.5);
    assert_eq!(st.task, 2, "down but tilted");
    run(&mut st, 1.3, 2.0, 0.2);
    assert_eq!(st.task, 3, "every task done");
    // a reset: the model's time starts again, and so does the scenario
    hud.update(&mut st, 0.0, &at(1.2, 0.0), &outputs);
    assert_eq!((st.task, st.held_s), (0, 0.0));
}

#[test]
fn a_gauge_on_an_unknown_value_names_its_field() {
    let (mut spec, sim) = load("loader");
    spec.hud.gauges[3].sensor = "V9.p".into();
    let e = Hud::new(&spec, &sim.output_labels()).expect_err("V9.p is no column");
    let HudError::UnknownValue { field, name, .. } = &e;
    assert_eq!(
        (field.as_str(), name.as_str()),
        ("hud.gauges[3].sensor", "V9.p")
    );
    assert!(e.to_string().contains("bucket_height"), "{e}");
    // an output column that a later branch adds (payload_kg) works once the run has it
    spec.hud.gauges[3].sensor = "payload_kg".into();
    let mut labels = sim.output_labels();
    labels.push("payload_kg".into());
    assert!(Hud::new(&spec, &labels).is_ok());
}

#[test]
fn a_replay_plays_the_log_from_the_last_reset_to_the_end_mark() {
    let set = |step, value| Event {
        step,
        action: Action::Set {
            input: "U".into(),
            value,
        },
    };
    let reset = |step| Event {
        step,
        action: Action::Reset,
    };
    let rec = Recording {
        model: "boom".into(),
        step_s: 1e-3,
        events: vec![
            set(5, 1.0),
            reset(100),
            set(100, 0.0),
            set(150, 2.0),
            set(400, 3.0),
            reset(900),
        ],
    };
    let (seg, n) = hydraulink_viewer::server::segment(&rec, 400).expect("a reset before 400");
    assert_eq!(n, 300);
    assert_eq!(seg.events, vec![set(0, 0.0), set(50, 2.0)]);
    assert!(hydraulink_viewer::server::segment(&rec, 50).is_none());
}

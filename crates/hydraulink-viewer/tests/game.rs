//! The excavator game through the server (WebSocket, no browser) and the fuel gauge against the
//! per-step integral of the pump's shaft power; and a whole 2 t game on the machine with its
//! worksite, played by a script at full speed.
//!
//! The shipped `models/excavator.toml` alone (without its worksite) has no digging, so the
//! server test names a stand-in
//! hopper column, the boom input's value `U_boom.value` [V], with a goal of 9.5 "kg": holding `W`
//! raises it to 10 V in 0.5 s and so "fills the hopper". Everything else is the real game:
//! the start message, the reset, the key through the engine's bindings, the attempt's end,
//! the attempt log and the leaderboard files.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hydraulink::model::spec::GameSpec;
use hydraulink::pipeline::simulation::BodyPose;
use hydraulink::Simulation;
use hydraulink_viewer::game::{Columns, Game, Phase, Rules};
use hydraulink_viewer::game_host::GameOptions;
use hydraulink_viewer::leaderboard::{Leaderboard, LOG_HEADER};
use hydraulink_viewer::{ServeOptions, Server};
use serde_json::{json, Value};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

// the aiming operator of the worksite tests (hydraulink-io), shared by its path
#[path = "../../hydraulink-io/tests/worksite_operator/mod.rs"]
mod worksite_operator;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

type Ws = WebSocket<MaybeTlsStream<TcpStream>>;

/// Reads frames until `pred` holds for one's `game` object; returns it.
fn wait_game(ws: &mut Ws, what: &str, secs: u64, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut last = Value::Null;
    while Instant::now() < deadline {
        let Ok(Message::Text(t)) = ws.read() else {
            continue;
        };
        let v: Value = serde_json::from_str(t.as_str()).expect("frame JSON");
        if v["type"] != "frame" {
            continue;
        }
        last = v["game"].clone();
        if pred(&last) {
            return last;
        }
    }
    panic!("{what}: not within {secs} s; last game state {last}");
}

fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).expect("sent");
}

#[test]
fn an_attempt_through_the_server_writes_the_log_and_the_leaderboard() {
    let mut spec =
        hydraulink_io::load_model(&repo().join("models/excavator.toml")).expect("model loads");
    let game = GameSpec {
        hopper_column: Some("U_boom.value".into()),
        goal_kg: 9.5,
        attempts: 2,
        ..GameSpec::default()
    };
    spec.game = Some(game.clone());
    let game_rules = game.clone();
    let dir = std::env::temp_dir().join(format!("hydraulink-game-server-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let options = GameOptions {
        spec: game,
        leaderboard: dir.join("leaderboard.json"),
        log: dir.join("game-log.csv"),
        variants: hydraulink_io::variant_choices(&spec),
    };
    let model = hydraulink::compile(&spec).expect("compiles");
    let sim = Simulation::new(model).expect("initializes");
    let server = Server::start(
        &spec,
        sim,
        ServeOptions {
            game: Some(options),
            // the cab's mesh files are beside the model
            model_dir: Some(repo().join("models")),
            ..ServeOptions::default()
        },
    )
    .expect("server starts");
    let (mut ws, _) = tungstenite::connect(format!("ws://{}/ws", server.addr())).expect("ws");
    let g = wait_game(&mut ws, "a waiting game", 20, |g| g["phase"] == "waiting");
    assert_eq!(g["variants"], "arm_cylinder=medium, bucket=medium");
    // a new player needs a name
    send(
        &mut ws,
        json!({"type": "game", "action": "start", "name": "  "}),
    );
    wait_game(&mut ws, "the name notice", 10, |g| {
        g["notice"].as_str().is_some_and(|n| n.starts_with("name"))
    });
    send(
        &mut ws,
        json!({"type": "game", "action": "start", "name": "Tester"}),
    );
    // the engine runs up in 0.5 s: the key after 2 s
    wait_game(&mut ws, "attempt 1 running", 10, |g| {
        g["phase"] == "running" && g["time_s"].as_f64().unwrap_or(0.0) > 2.0
    });
    send(&mut ws, json!({"type": "key", "key": "w", "pressed": true}));
    let g = wait_game(&mut ws, "attempt 1 over", 10, |g| {
        g["phase"] == "attempt_over"
    });
    send(
        &mut ws,
        json!({"type": "key", "key": "w", "pressed": false}),
    );
    let a = &g["results"][0];
    assert_eq!(a["outcome"], "goal_reached", "{g}");
    let t1 = a["time_s"].as_f64().unwrap();
    let fuel1 = a["fuel_l"].as_f64().unwrap();
    // The attempt is about 2 s of idle and the boom raised for half a second. The load-sensing
    // pump idles at 136 W at the shaft and never takes more than its 110 kW limit (models/README,
    // the excavator's pump), so with the game's litres per joule (a 35 % efficient engine,
    // 35.7 MJ/L) the mean fuel rate lies between 11 µL/s and 8.8 mL/s (measured 0.4 mL/s).
    let litres_per_joule = Rules::new(&game_rules).litres_per_joule;
    let rate = fuel1 / t1;
    assert!(
        rate > 136.0 * litres_per_joule && rate < 110e3 * litres_per_joule,
        "fuel {fuel1} L in {t1} s"
    );
    // the next attempt: the machine is reset, nothing is done, then reset from the page
    send(&mut ws, json!({"type": "game", "action": "start"}));
    wait_game(&mut ws, "attempt 2 running", 10, |g| {
        g["phase"] == "running" && g["time_s"].as_f64().unwrap_or(0.0) > 0.5
    });
    // the tool point is the first of [outputs] markers, bucket.P, 5.8729 m from the swing axis
    // at rest (x of P in the initial pose, the swing at 0: the HUD's bucket_height point)
    let reach = wait_game(&mut ws, "reach", 5, |g| g["reach_m"].is_number())["reach_m"]
        .as_f64()
        .unwrap();
    assert!((reach - 5.8729).abs() < 2e-3, "reach {reach} m");
    send(&mut ws, json!({"type": "reset"}));
    let g = wait_game(&mut ws, "game over", 10, |g| g["phase"] == "game_over");
    assert_eq!(g["results"][1]["outcome"], "abandoned");
    assert_eq!(g["rank"], 1);
    let score = g["score"].as_f64().unwrap();
    let points1 = g["results"][0]["points"].as_f64().unwrap();
    assert!(
        (score - points1 / 2.0).abs() < 0.06,
        "score {score}, points {points1}"
    );
    let board = Leaderboard::load(&dir.join("leaderboard.json")).expect("leaderboard written");
    assert_eq!(board.entries.len(), 1);
    assert_eq!(board.entries[0].player, "Tester");
    assert_eq!(board.entries[0].attempts.len(), 2);
    let log = std::fs::read_to_string(dir.join("game-log.csv")).expect("log written");
    let rows: Vec<&str> = log.lines().collect();
    assert_eq!(rows[0], LOG_HEADER);
    assert_eq!(rows.len(), 3, "{log}");
    assert!(rows[1]
        .starts_with("Tester,excavator,\"arm_cylinder=medium, bucket=medium\",1,goal_reached,"));
    assert!(rows[2].contains(",2,abandoned,"));
    drop(ws);
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fuel gauge integrates the shaft power over the snapshots (every 17 steps of 1 ms, the
/// 60 Hz display rate) by the trapezoidal rule. Over the excavator's 18 s dig–swing–dump cycle it
/// agrees with the trapezoidal integral over every step window by window, and over the cycle to
/// 2e-4 of the fuel.
///
/// Why not closer: the load-sensing pump idles at 136 W and goes to its 110 kW limit within a
/// few steps at each stick move (1.0, 2.0, 5.2, 8.4, 11.2 s), so a 17 ms window that holds such a
/// step is integrated by its end values only. Measured on this cycle: single windows differ by
/// up to 58 J (at 11.29 s, the swing back and boom down), the windows' differences add to
/// 743 J in magnitude (1.2e-3 of the 636 kJ) but to −50 J net (7.8e-5), as they alternate in
/// sign with where the steps fall between snapshots. That net depends on the phase of the
/// snapshots against the stick moves (1.08e-4 was seen on an earlier state of the rebuilt machine),
/// so the tolerance is 2e-4, not 1e-4; the bound that holds for any phase is checked per window.
#[test]
fn fuel_from_snapshots_matches_the_per_step_integral() {
    let spec =
        hydraulink_io::load_model(&repo().join("models/excavator.toml")).expect("model loads");
    let model = hydraulink::compile(&spec).expect("compiles");
    let mut sim = Simulation::new(model).expect("initializes");
    let labels = sim.output_labels();
    let bodies: Vec<String> = sim.model().bodies.iter().map(|b| b.name.clone()).collect();
    let game = GameSpec {
        hopper_column: Some("U_boom.value".into()),
        goal_kg: 1e9,
        time_limit_s: 1e9,
        fuel_capacity_l: 1e9,
        ..GameSpec::default()
    };
    let columns = Columns::resolve(&game, &spec, &labels, &bodies).expect("columns");
    assert_eq!(columns.labels[1], "pump.shaft_power");
    let index: Vec<usize> = columns
        .labels
        .iter()
        .map(|l| labels.iter().position(|x| x == l).unwrap())
        .collect();
    let rules = Rules::new(&game);
    let mut g = Game::new(rules.clone(), sim.model().step_s());
    g.start("fuel").unwrap();
    let mut row = vec![0.0; sim.n_outputs()];
    let mut poses = vec![BodyPose::default(); bodies.len()];
    let power = labels.iter().position(|l| l == "pump.shaft_power").unwrap();
    sim.output_row(&mut row);
    let (mut e_step, mut p_last) = (0.0, row[power].max(0.0));
    // the per-step integral up to the last snapshot
    let mut e_snap = 0.0;
    let n = (sim.model().duration_s() / sim.model().step_s()).round() as u64;
    // the gauge minus the per-step integral at the last snapshot [J], the power's range over
    // the window since it [W], and the windows' differences added in magnitude [J]
    let (mut d_last, mut p_min, mut p_max, mut d_abs) = (0.0, p_last, p_last, 0.0f64);
    for k in 1..=n {
        sim.step().expect("step");
        sim.output_row(&mut row);
        let p = row[power].max(0.0);
        e_step += 0.5 * (p_last + p) * 1e-3;
        p_last = p;
        (p_min, p_max) = (p_min.min(p), p_max.max(p));
        if k % 17 == 0 {
            e_snap = e_step;
            sim.body_poses(&mut poses);
            let values: Vec<f64> = index.iter().map(|&c| row[c]).collect();
            let r = columns.reading(k, sim.time_s(), &values, &poses);
            assert_eq!(g.observe(&r), None);
            // over one window of h = 17 ms both integrals lie between h·min p and h·max p
            let d = g.fuel_l() / rules.litres_per_joule - e_snap;
            let bound = 17e-3 * (p_max - p_min);
            assert!(
                (d - d_last).abs() <= bound * (1.0 + 1e-9) + 1e-9,
                "window to {:.3} s: {} J apart, power {p_min}..{p_max} W",
                sim.time_s(),
                d - d_last
            );
            d_abs += (d - d_last).abs();
            (d_last, p_min, p_max) = (d, p, p);
        }
    }
    assert_eq!(g.phase(), Phase::Running);
    let fuel_step = e_snap * rules.litres_per_joule;
    let rel = (g.fuel_l() - fuel_step).abs() / fuel_step;
    eprintln!(
        "fuel over the 18 s cycle: {:.5} L from 60 Hz snapshots, {fuel_step:.5} L per step \
         ({:.1} kJ at the shaft); relative difference {rel:.2e}, {d_last:.1} J net of windows \
         {d_abs:.1} J apart in magnitude",
        g.fuel_l(),
        e_snap / 1e3
    );
    assert!(rel < 2e-4);
}

/// The whole game of Publication VI on what `hydraulink serve models/excavator.toml` plays (the
/// machine on its worksite, the worksite's `[game]` with its 2 t goal), at full speed and
/// without a server: a scripted operator repeats the machine's own 18 s dig–swing–dump cycle
/// (the joystick signals of the model), aiming each pass after the first beside the trench
/// already cut (`worksite_operator`: replayed unchanged, the cycle cuts its own trench again and
/// brings up a fraction of the first load), and the game, fed a reading every 17 steps as the
/// server's 60 Hz snapshots feed it, ends the attempt as reached within three cycles, with
/// fewer hits than allowed.
#[test]
fn a_scripted_operator_loads_2_t_into_the_hopper_in_one_attempt() {
    use hydraulink_viewer::game::Outcome;
    let path = repo().join("models/excavator.toml");
    let (spec, _) = hydraulink_io::with_scene(
        hydraulink_io::load_model(&path).expect("model loads"),
        &hydraulink_io::SceneChoice::Model,
        Some(&path),
    )
    .expect("the machine with its worksite loads");
    let game = spec.game.clone().expect("the worksite has a [game]");
    assert_eq!(game.goal_kg, 2000.0, "the goal of Publication VI");
    let model = hydraulink::compile(&spec).expect("compiles");
    let mut sim = Simulation::new(model).expect("initializes");
    let mut operator = worksite_operator::AimingOperator::new(&sim, &worksite_operator::AIMS_RAD);
    let labels = sim.output_labels();
    let bodies: Vec<String> = sim.model().bodies.iter().map(|b| b.name.clone()).collect();
    let columns = Columns::resolve(&game, &spec, &labels, &bodies).expect("columns");
    let index: Vec<usize> = columns
        .labels
        .iter()
        .map(|l| labels.iter().position(|x| x == l).unwrap())
        .collect();
    let mut g = Game::new(Rules::new(&game), sim.model().step_s());
    g.start("scripted").expect("starts");
    let mut row = vec![0.0; sim.n_outputs()];
    let mut poses = vec![BodyPose::default(); bodies.len()];
    let mut result = None;
    let n = (3.0 * operator.period_s() / sim.model().step_s()).round() as u64;
    for k in 1..=n {
        operator.set_inputs(&mut sim);
        sim.step().expect("step");
        if k % 17 == 0 {
            sim.output_row(&mut row);
            sim.body_poses(&mut poses);
            let values: Vec<f64> = index.iter().map(|&c| row[c]).collect();
            result = g.observe(&columns.reading(k, sim.time_s(), &values, &poses));
            if result.is_some() {
                break;
            }
        }
    }
    let a = result.expect("the attempt ends within three cycles");
    eprintln!(
        "2 t attempt: {:?} after {:.2} s with {:.0} kg in the hopper, {} hits, {:.3} L of fuel, \
         reach max {:?} m, {:.0} points",
        a.outcome, a.time_s, a.hopper_kg, a.hits, a.fuel_l, a.reach_max_m, a.points
    );
    assert_eq!(a.outcome, Outcome::GoalReached, "{a:?}");
    assert!(a.hopper_kg >= 2000.0 && a.hits <= game.max_hits, "{a:?}");
    assert!(a.time_s <= game.time_limit_s, "{a:?}");
}

//! `hydraulink serve MODEL [--port N] [--bindings FILE] [--start-paused]`: runs a model on the
//! real-time engine and serves the browser viewer (`hydraulink-viewer`) on 127.0.0.1 until
//! Ctrl-C (the simulated clock starts when the first page connects, or paused); prints the URL, and at the
//! end the run's statistics and the frames' size. With `--game` (or a `[game]` table in the
//! model) the page plays the excavator game; `--leaderboard` and `--game-log` place its files.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use clap::Args;
use hydraulink::Simulation;
use hydraulink_viewer::game_host::{GameHostError, GameOptions};
use hydraulink_viewer::{ServeError, ServeOptions, Server};

use crate::{init_failure, read_model, watch_for_interrupt, Failure, INTERRUPTED};

/// The options of `hydraulink serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[arg(
        value_name = "MODEL",
        help = "Model file (TOML); default: the built-in four-bar"
    )]
    model: Option<PathBuf>,

    #[arg(
        long,
        default_value_t = 0,
        help = "TCP port on 127.0.0.1; 0: any free port"
    )]
    port: u16,

    #[arg(
        long,
        help = "Let the model's own input signals drive the machine until a key or stick moves \
                an input (default: the operator inputs start held at 0)"
    )]
    play_signals: bool,

    #[arg(
        long,
        value_name = "FILE",
        help = "Binding file (TOML): [[bindings]] tables with input, source = { axis = \"right_y\" } \
                or { keys = { positive = \"w\", negative = \"s\" } }, range, deadband, \
                rate_limit_per_s; replaces the model's [[hud.bindings]] and the default keys"
    )]
    bindings: Option<PathBuf>,

    #[arg(
        long = "set",
        value_name = "PATH=VALUE",
        help = "Override a model parameter (repeatable), e.g. V3.p0_pa=3e6; a variant of the \
                model: variants.NAME.choice=OPTION"
    )]
    set: Vec<String>,

    #[arg(
        long,
        help = "Play the excavator game (on by default when the model has a [game] table)"
    )]
    game: bool,

    #[arg(
        long,
        value_name = "PATH",
        help = "The game's leaderboard (JSON); default: $XDG_DATA_HOME/hydraulink/leaderboard.json \
                (~/.local/share/…), else ./hydraulink-leaderboard.json"
    )]
    leaderboard: Option<PathBuf>,

    #[arg(
        long,
        value_name = "PATH",
        help = "The game's attempt log (CSV: reach, time, fuel, hits per attempt); default: \
                game-log.csv beside the leaderboard"
    )]
    game_log: Option<PathBuf>,

    #[arg(
        long,
        help = "Start with the simulated clock paused: it runs from the page's Resume button \
                (default: the clock starts when the first page connects, not when the server \
                starts)"
    )]
    start_paused: bool,

    #[arg(
        long,
        help = "Leave out the worksite the model names (its `scene` key: obstacles and their \
                contacts), which the viewer includes by default"
    )]
    no_scene: bool,
}

/// `hydraulink serve`: exit code 2 for a bad model or port, 1 when a step fails, 0 after Ctrl-C.
pub(crate) fn serve_command(args: &ServeArgs) -> Result<(), Failure> {
    let (text, file) = read_model(args.model.as_ref())?;
    let spec = hydraulink_io::parse_model(&text, &file)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let scene = if args.no_scene {
        hydraulink_io::SceneChoice::None
    } else {
        hydraulink_io::SceneChoice::Model
    };
    let (spec, scene) = crate::add_scene(spec, &scene, args.model.as_ref())?;
    let (spec, applied) = hydraulink_io::apply_overrides_traced(&spec, &args.set)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let model = hydraulink::compile(&spec).map_err(|e| {
        Failure::invalid_input(crate::locate(&text, &file, &e, &applied, scene.as_ref()))
    })?;
    let sim = Simulation::new(model).map_err(|e| init_failure(&e, &text, &file))?;
    let game = (args.game || spec.game.is_some()).then(|| {
        let leaderboard = args
            .leaderboard
            .clone()
            .unwrap_or_else(hydraulink_viewer::leaderboard::default_leaderboard_path);
        GameOptions {
            spec: spec.game.clone().unwrap_or_default(),
            log: args
                .game_log
                .clone()
                .unwrap_or_else(|| hydraulink_viewer::leaderboard::default_log_path(&leaderboard)),
            leaderboard,
            variants: hydraulink_io::variant_choices(&spec),
        }
    });
    let game_files = game
        .as_ref()
        .map(|g| (g.leaderboard.clone(), g.log.clone(), g.variants.clone()));
    let mut options = ServeOptions {
        port: args.port,
        play_signals: args.play_signals,
        game,
        start_paused: args.start_paused,
        // `mesh` shapes name their files relative to the model file
        model_dir: args
            .model
            .as_ref()
            .and_then(|m| m.parent())
            .map(std::path::Path::to_path_buf),
        ..ServeOptions::default()
    };
    if let Some(path) = &args.bindings {
        options.engine.bindings = read_bindings(path)?;
    }
    let server = Server::start(&spec, sim, options).map_err(|e| match e {
        ServeError::Game(GameHostError::Model(m)) => {
            Failure::invalid_input(crate::locate(&text, &file, &m, &applied, scene.as_ref()))
        }
        e => Failure::invalid_input(e.to_string()),
    })?;
    watch_for_interrupt();
    println!("hydraulink viewer of {file}: open {}", server.url());
    if let Some((board, log, variants)) = game_files {
        println!(
            "game: leaderboard {}, attempt log {}{}",
            board.display(),
            log.display(),
            if variants.is_empty() {
                String::new()
            } else {
                format!("; variants {variants}")
            }
        );
    }
    println!(
        "(the simulated clock starts {}; Ctrl-C stops the server)",
        if args.start_paused {
            "at the page's Resume"
        } else {
            "when the first page connects"
        }
    );
    while !INTERRUPTED.load(Ordering::Relaxed) && !server.engine_finished() {
        std::thread::sleep(Duration::from_millis(100));
    }
    let (frames, bytes) = server.frame_bytes();
    let report = server.stop();
    if frames > 0 {
        println!(
            "frames: {frames}, {:.0} bytes each on average",
            bytes as f64 / frames as f64
        );
    }
    if let Some(r) = report {
        let s = &r.statistics;
        println!(
            "{} steps, {:.3} s simulated in {:.3} s wall (real-time factor {:.3}); overruns {}; \
             compute per step mean {:.1} µs, max {:.1} µs; engine thread priority {}",
            s.steps,
            s.simulated_s,
            s.wall_s,
            s.real_time_factor,
            s.overruns,
            s.compute_mean_s * 1e6,
            s.compute_max_s * 1e6,
            s.priority()
        );
        if let hydraulink_rt::Outcome::Failed(e) = r.outcome {
            return Err(Failure::run_failed(e.to_string()));
        }
    }
    Ok(())
}

/// A binding file: `[[bindings]]` tables (`hydraulink_rt::InputBinding`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BindingFile {
    bindings: Vec<hydraulink_rt::InputBinding>,
}

/// Reads a binding file; errors name the file (and the TOML error its line).
pub(crate) fn read_bindings(
    path: &std::path::Path,
) -> Result<Vec<hydraulink_rt::InputBinding>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::invalid_input(format!(
            "{}: cannot read the binding file: {e}",
            path.display()
        ))
    })?;
    let file: BindingFile = toml::from_str(&text)
        .map_err(|e| Failure::invalid_input(format!("{}: {e}", path.display())))?;
    for (i, b) in file.bindings.iter().enumerate() {
        b.check(i)
            .map_err(|e| Failure::invalid_input(format!("{}: {e}", path.display())))?;
    }
    Ok(file.bindings)
}

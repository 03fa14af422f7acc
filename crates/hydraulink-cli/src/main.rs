//! `hydraulink`: simulate a hydraulically actuated machine from a TOML model file.
//!
//! ```text
//! hydraulink run [MODEL] [--out DIR] [--step S] [--duration T] [--output-interval S]
//!                [--formulation NAME] [--allow-long-run]
//!   read MODEL (or the built-in four-bar)  → parse → apply overrides → compile → check the
//!   step count → initialize → step N = round(T / S) times, streaming the rows (hydraulink_io::output)
//!   → DIR/summary.json (running, then how the run stopped), DIR/results.csv,
//!     DIR/results.columns.json, DIR/plots/*.svg
//! ```
//! Exit codes: 0 success; 1 the run failed (a step diverged, or results could not be written);
//! 2 invalid input (model file, initialization, command line); 130 interrupted (Ctrl-C).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

mod check;
mod compare;
mod friction_curve;
mod linearize;
mod modes;
mod panic_boundary;
mod realtime;
mod serve;
mod view;
mod workspace;

use clap::{Args, Parser, Subcommand};
use hydraulink::{InitError, ModelSpec, Simulation, StepError};
use hydraulink_io::output::{
    describe_columns, duration_note, snap_output_interval, step_time_s, AdaptiveSteps, OutputError,
    RunInfo, RunRecorder, RunStop, Summary, MAX_STEPS, MAX_STEPS_WITHOUT_PERMISSION,
};
use hydraulink_io::{Scene, SceneChoice};
use indicatif::{ProgressBar, ProgressStyle};

/// Exit code of a run that failed.
const EXIT_RUN_FAILED: u8 = 1;
/// Exit code of invalid input (same as clap's usage errors).
const EXIT_INVALID_INPUT: u8 = 2;
/// Exit code of a run interrupted by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
const EXIT_INTERRUPTED: u8 = 130;

/// Set by the Ctrl-C / SIGTERM handler; the step loop stops at the next step.
pub(crate) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Simulator of hydraulically actuated multibody machines.
#[derive(Debug, Parser)]
#[command(
    name = "hydraulink",
    version,
    long_about = "Simulator of hydraulically actuated multibody machines: a semi-recursive multibody \
                  mechanism and a lumped-fluid hydraulic circuit, solved monolithically.\n\n\
                  Models are TOML files in SI units (see models/). Exit codes: 0 success, 1 the run \
                  failed (a step diverged or results could not be written), 2 invalid input (model \
                  file, initialization or command line), 130 interrupted (Ctrl-C).",
    after_help = "Run `hydraulink run --help` for the options of a run."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate a model and write results.csv, summary.json and plots/*.svg.
    #[command(long_about = "Simulate a model and write its results.\n\n\
        Writes into DIR:\n  \
        summary.json          status: \"running\" from the start, then \"completed\", \
        \"failed\", \"interrupted\", \"output_error\" or \"panicked\" (a bug in hydraulink, exit \
        code 101); settings, peak energy drift, actuator \
        work and constraint violation over every step, Newton iterations, wall-clock time, \
        real-time factor, cavitation warnings\n  \
        results.csv           one row per output step (--output-interval, default every step), \
        the initial and final rows included, streamed as the run goes; SI units; whole rows only; \
        the time of step k is k·Δt, in the shortest form that reads back exactly\n  \
        results.columns.json  name, unit and description of every column of results.csv\n  \
        plots/*.svg           joint angles [deg] and positions [m], pressures, flows, energy and \
        its drift, constraint violation, Newton iterations, cylinders; drawn from the minimum and \
        maximum per pixel column of every step, so they stay small for any run length\n\n\
        A step that fails ends the run with exit code 1; the rows computed before it, the summary \
        (status failed) and the plots are still written. Ctrl-C stops the run after the current \
        step, writes the same files (status interrupted) and exits with code 130. An invalid model \
        exits with code 2 and names the file and line. A run of more than 10 000 000 steps needs \
        --allow-long-run. A duration that is not a whole number of steps is rounded up to the \
        next step, with a note on stderr.")]
    Run(RunArgs),
    /// Run one model under several formulations and time steps and compare them.
    #[command(
        long_about = "Run one model under several formulations and time steps and compare \
        them: Newton iterations, wall time, real-time factor, peak constraint violation and energy \
        drift, and the largest deviation of joint coordinates and pressures from the first \
        formulation at the same step. Without --formulations it runs the model's own formulation \
        (the reference) and every other one that accepts the model, and names those it skips \
        with the reason. Writes DIR/compare.csv, DIR/compare.md and overlay plots \
        DIR/plots/overlay_<step>_{joints,pressures}.svg. A cavitation warning on stderr names \
        the formulation and time step of its run.\n\n\
        Which formulation when (from Jaiswal et al. 2021, Rahikainen's dissertation and Naya et al. 2011; README references 1, 3, 5):\n  \
        penalty             semi-recursive ALI3-P: robust near singular configurations and with \
        redundant constraints; the default\n  \
        double-step         semi-recursive with coordinate partitioning: constraints to machine \
        precision, but needs a good partition\n  \
        global-ali3p        natural coordinates: simple to model, larger problem\n  \
        global-i1al         index-1 augmented Lagrangian in natural coordinates\n  \
        kinematic-guidance  prescribed actuator motion: fastest, no hydraulic dynamics\n  \
        multirate           hydraulics sub-stepped inside each mechanical step: smooth pressures"
    )]
    Compare(CompareArgs),
    /// Write the friction–velocity characteristic of one cylinder's seal (CSV and SVG).
    #[command(
        long_about = "Write the friction–velocity characteristic of one cylinder's seal \
        (as in Fig. 9 of Jaiswal, Sopanen, Mikkola, Nonlinear Dynamics 104 (2021)) into DIR: <element>_friction_steady.csv (the steady-state curve), \
        <element>_friction_sweep.csv (a slow sinusoidal velocity sweep over the same range, the \
        internal states integrated by the trapezoidal rule: pre-sliding, frictional lag and \
        hysteresis of LuGre and modified LuGre) and <element>_friction.svg with both."
    )]
    FrictionCurve(FrictionCurveArgs),
    /// Linearize a model about its equilibrium or a state of a run: eigenvalues, A, B, C, D.
    #[command(
        long_about = "Linearize a model (the method of Agúndez et al., Nonlinear Dynamics (2023)) about its static equilibrium \
        (--at equilibrium, the default) or about the state of a simulation at time T \
        (--at-time T), by the exact method in independent coordinates (--method exact) or by \
        central differences in all coordinates (--method finite-difference).\n\n\
        Prints the eigenvalue table (value, natural frequency, damping ratio, time constant, kind: \
        zero, spurious zero, real, complex; dominant mode-shape entries). A damping ratio or time \
        constant that is not defined (ζ of a zero eigenvalue, τ of a complex or zero one) reads \
        — in the table and null in linear_model.json. Writes into DIR: \
        linear_model.json (A, B, C, D with state, input and output names, eigenvalues, mode \
        shapes over every coordinate and pressure, operating point; numpy: \
        np.array(json.load(f)[\"A\"]), MATLAB: jsondecode), A.csv … D.csv with names, and \
        poles.svg (all poles, and a zoom on the slow ones: those below the widest gap in |λ|, \
        its limit in the caption).\n\n\
        Pumps driven at a shaft speed, open-centre bridge valves and algebraic volumes are not \
        linearized: the error says what to use in their place."
    )]
    Linearize(linearize::LinearizeArgs),
    /// Validate a model, assemble it and solve its statics; print the initial state.
    #[command(
        long_about = "Validate a model, assemble it (close its loops from q0), solve its \
        statics and print the initial state without running: the joint coordinates, every \
        pressure with the rule that fixed it (given p0_pa, a cylinder's static force, zero net \
        flow), each cylinder's length, how much of its stroke is out and its force, and the \
        elements. Exit code 0 when the model can start, 2 (with the file, line, element and \
        field) when it cannot."
    )]
    Check(check::CheckArgs),
    /// Sweep the cylinder strokes and draw the working range of a point, as a spec sheet does.
    #[command(
        long_about = "Sweep every cylinder over its stroke (a grid of --grid points each), solve         the positions with the loops closed and draw the envelope of the point --point         BODY.MARKER in the vertical plane of the front, as a spec sheet draws it: DIR/working_range.svg         (envelope, ground line, swing axis, the machine in its initial pose, the dimensions),         DIR/working_range.csv and DIR/working_range.json (reach at ground, maximum reach, digging         depth, cutting height, dump height; with --pressure-pa P the force each cylinder at P         produces at the point by virtual work, at the initial pose and its largest along the         stroke), and the table on stdout. Poses beyond a dead centre cannot be assembled and are         left out."
    )]
    Workspace(workspace::WorkspaceArgs),
    /// Print the JSON Schema of a model file, or the model reference in Markdown.
    #[command(
        long_about = "Print the JSON Schema of a model file (for TOML editors: put \
        `#:schema ./hydraulink.schema.json` in a model's first line), with --reference the model \
        reference in Markdown, or with --scene the JSON Schema of a worksite (scene) file. All are \
        generated from the model types. With --write DIR, write \
        DIR/models/hydraulink.schema.json, DIR/models/scenes/hydraulink.scene.schema.json and \
        DIR/docs/model-reference.md instead (the shipped copies; run `hydraulink schema --write .` \
        in the repository after changing a model type)."
    )]
    Schema(SchemaArgs),
    /// Run a model paced to the wall clock on the real-time engine; print its statistics.
    #[command(
        long_about = "Run a model paced to the wall clock on the real-time engine, headless: one \
        physics step every step_s of wall time on a thread of its own. Prints the statistics at \
        the end: steps, real-time factor, compute time per step (mean, percentiles, worst), \
        overruns (steps that ended after their deadline), lag and slip. --policy catch-up keeps \
        the schedule (late steps run back to back); slow-down shifts it (simulated time falls \
        behind). No step is ever skipped. --record FILE saves every input change with its step; \
        --replay FILE applies a recording's changes at their steps and reproduces the run bit \
        for bit. --out DIR writes the statistics to DIR/realtime.json."
    )]
    Realtime(realtime::RealtimeArgs),

    #[command(
        about = "Run a model in real time and show it in the browser, driven by keyboard or gamepad",
        long_about = "Run a model paced to the wall clock and serve a 3-D view of it on \
        http://127.0.0.1:PORT/ (the URL is printed; --port 0, the default, takes any free port). \
        The page draws the bodies from the model's `visual` shapes (a default without them), the \
        cylinders as barrel and rod, and a panel with time, real-time factor, overruns and gauges. \
        Keys drive the valve inputs in the model's order: W/S, I/K, L/J, A/D, then T/G, O/U, … \
        (the excavator: boom, arm, bucket, swing), as do a gamepad's two sticks. The simulated \
        clock starts when the first page connects (--start-paused: at the page's Resume). \
        Ctrl-C stops the server."
    )]
    Serve(serve::ServeArgs),

    #[command(
        about = "Play a finished run in the browser viewer, with a time slider and playback speed",
        long_about = "Serve the 3-D view of a finished `hydraulink run` on http://127.0.0.1:PORT/ \
        (the URL is printed): the bodies follow the poses that `run` writes beside results.csv \
        (poses.bin; its model file and overrides are named in poses.json, or give --model), the \
        HUD shows the gauges of the model from the results' columns. The page has a time slider, \
        a playback speed (0.25× to 4×), pause and reset (back to the start). Ctrl-C stops the \
        server."
    )]
    View(view::ViewArgs),
}

/// The options of `hydraulink schema`.
#[derive(Debug, Args)]
struct SchemaArgs {
    /// Print the model reference (Markdown) instead of the JSON Schema.
    #[arg(long, conflicts_with = "scene")]
    reference: bool,
    /// Print the JSON Schema of a worksite (scene) file instead.
    #[arg(long)]
    scene: bool,
    /// Write the three files under this directory (models/hydraulink.schema.json,
    /// models/scenes/hydraulink.scene.schema.json and docs/model-reference.md) instead of
    /// printing.
    #[arg(long, value_name = "DIR")]
    write: Option<PathBuf>,
}

fn schema_command(args: &SchemaArgs) -> Result<(), Failure> {
    use hydraulink_io::schema;
    let Some(dir) = &args.write else {
        if args.reference {
            print!("{}", schema::model_reference_markdown());
        } else if args.scene {
            print!("{}", schema::scene_schema_json());
        } else {
            print!("{}", schema::model_schema_json());
        }
        return Ok(());
    };
    for (path, text) in [
        (
            dir.join("models/hydraulink.schema.json"),
            schema::model_schema_json(),
        ),
        (
            dir.join("models/scenes/hydraulink.scene.schema.json"),
            schema::scene_schema_json(),
        ),
        (
            dir.join("docs/model-reference.md"),
            schema::model_reference_markdown(),
        ),
    ] {
        std::fs::write(&path, text)
            .map_err(|e| Failure::run_failed(format!("cannot write {}: {e}", path.display())))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The options of `hydraulink friction-curve`.
#[derive(Debug, Args)]
struct FrictionCurveArgs {
    #[arg(value_name = "MODEL", help = "Model file (TOML)")]
    model: PathBuf,

    #[arg(
        long,
        value_name = "NAME",
        help = "Name of the cylinder (its seal), or of a joint with friction"
    )]
    element: String,

    #[arg(
        long,
        value_name = "A,B",
        value_delimiter = ',',
        num_args = 1,
        allow_hyphen_values = true,
        default_values_t = [-0.05, 0.05],
        help = "Velocity range [m/s] of the curve and of the sweep"
    )]
    v_range: Vec<f64>,

    #[arg(long, value_name = "T", value_parser = positive_seconds, default_value_t = 4.0,
          help = "Period of the sinusoidal sweep [s]")]
    period: f64,

    #[arg(
        long = "set",
        value_name = "PATH=VALUE",
        help = "Override a model parameter (repeatable), e.g. cylinder.friction.type=lugre"
    )]
    set: Vec<String>,

    #[arg(
        long,
        short,
        value_name = "DIR",
        help = "Output directory [default: out/<model name>/]"
    )]
    out: Option<PathBuf>,
}

/// The options of `hydraulink compare`.
#[derive(Debug, Args)]
struct CompareArgs {
    #[arg(
        value_name = "MODEL",
        help = "Model file (TOML); without it the built-in four-bar mechanism of Jaiswal et al., Multibody System Dynamics 52 (2021)"
    )]
    model: Option<PathBuf>,

    #[arg(
        long,
        value_name = "A,B,...",
        value_delimiter = ',',
        help = "Formulations, comma-separated; the first is the reference for the deviations \
                [default: the model's own formulation (solver.formulation), then every other \
                one that accepts the model; those that do not are named on stderr with the \
                reason]"
    )]
    formulations: Vec<String>,

    #[arg(
        long,
        value_name = "S1,S2,...",
        value_delimiter = ',',
        value_parser = positive_seconds,
        allow_negative_numbers = true,
        help = "Time steps [s], comma-separated [default: the model's solver.step_s]"
    )]
    steps: Vec<f64>,

    #[arg(long, value_name = "T", value_parser = positive_seconds, allow_negative_numbers = true,
          help = "Simulated duration [s], overrides the model's solver.duration_s")]
    duration: Option<f64>,

    #[arg(
        long,
        short,
        value_name = "DIR",
        help = "Output directory [default: out/<model name>/compare/]"
    )]
    out: Option<PathBuf>,

    #[arg(
        long = "set",
        value_name = "PATH=VALUE",
        help = "Override a model parameter (repeatable), as for `hydraulink run --set`"
    )]
    set: Vec<String>,
}

/// The options of `hydraulink run`. Their help is in `help` attributes, as it names units in
/// brackets.
#[derive(Debug, Args)]
struct RunArgs {
    #[arg(
        value_name = "MODEL",
        help = "Model file (TOML). Without it, the built-in four-bar mechanism of Jaiswal et al., Multibody System Dynamics 52 (2021), §5.1, is run"
    )]
    model: Option<PathBuf>,

    #[arg(
        long,
        short,
        value_name = "DIR",
        help = "Output directory, created if missing [default: out/<model name>/]"
    )]
    out: Option<PathBuf>,

    #[arg(
        long,
        value_name = "S",
        value_parser = positive_seconds,
        allow_negative_numbers = true,
        help = "Time step Δt [s], > 0. Overrides the model's solver.step_s (default there: 0.001)"
    )]
    step: Option<f64>,

    #[arg(
        long,
        value_name = "T",
        value_parser = positive_seconds,
        allow_negative_numbers = true,
        help = "Simulated duration [s], > 0. Overrides the model's solver.duration_s (default there: 10)"
    )]
    duration: Option<f64>,

    #[arg(
        long,
        value_name = "S",
        value_parser = positive_seconds,
        allow_negative_numbers = true,
        help = "Output interval of results.csv [s], > 0: snapped to a whole number of steps \
                (reported on stderr when snapped). Overrides the model's solver.output_interval_s \
                (default there: every step)"
    )]
    output_interval: Option<f64>,

    #[arg(
        long,
        help = "Allow a run of more than 10 000 000 steps (10 000 s at 1 ms). Without it such a \
                run is refused (exit code 2) before it starts"
    )]
    allow_long_run: bool,

    #[arg(
        long,
        value_name = "NAME",
        help = "Formulation: penalty (semi-recursive, index-3 augmented Lagrangian with projections), double-step, global-ali3p, \
                global-i1al, kinematic-guidance, multirate (see `hydraulink compare --help` for when \
                to choose which). Overrides the model's solver.formulation (default there: penalty); \
                an unknown name lists the valid ones"
    )]
    formulation: Option<String>,

    #[arg(
        long = "set",
        value_name = "PATH=VALUE",
        help = "Override any model parameter (repeatable). PATH is dotted, starting at a top-level \
                key or at an element's name: cylinder.friction.type=lugre, \
                cylinder.friction.static_n=900, solver.tolerance_pressure_pa=0.1, \
                hydraulics.volumes[2].p0_pa=3.5e6. Setting a `type` starts that variant with its \
                defaults. An unknown path lists the valid names"
    )]
    set: Vec<String>,

    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        help = "Add a worksite (obstacles and their contacts): the model's own scene file \
                (its `scene` key) without FILE, or FILE. Without this option a run leaves the \
                worksite out"
    )]
    scene: Option<Option<PathBuf>>,
}

/// Parses a time in seconds that must be finite and positive.
fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err("must be a finite number of seconds > 0".into()),
        Err(e) => Err(format!("not a number: {e}")),
    }
}

/// Why `hydraulink` stops with an error: the message and the exit code.
#[derive(Debug)]
pub(crate) struct Failure {
    message: String,
    code: u8,
}

impl Failure {
    fn invalid_input(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: EXIT_INVALID_INPUT,
        }
    }

    fn run_failed(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: EXIT_RUN_FAILED,
        }
    }
}

impl From<OutputError> for Failure {
    fn from(e: OutputError) -> Self {
        Failure::run_failed(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    panic_boundary::install_hook();
    let result = panic_boundary::catch(|| match &cli.command {
        Command::Run(args) => run(args),
        Command::Compare(args) => compare_command(args),
        Command::FrictionCurve(args) => friction_curve_command(args),
        Command::Linearize(args) => linearize::linearize_command(args),
        Command::Check(args) => check::check_command(args),
        Command::Schema(args) => schema_command(args),
        Command::Realtime(args) => realtime::realtime_command(args),
        Command::Serve(args) => serve::serve_command(args),
        Command::View(args) => view::view_command(args),
        Command::Workspace(args) => workspace::workspace_command(args),
    })
    .unwrap_or_else(|message| {
        Err(Failure {
            message,
            code: panic_boundary::EXIT_PANICKED,
        })
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

/// Reads, parses, overrides (`--set`) and compiles a model (the built-in four-bar without a
/// path); returns it with the file's text and name. Every failure is bad input (exit code 2),
/// located at the file's line or the option that set the field.
pub(crate) fn load_compiled(
    path: Option<&PathBuf>,
    sets: &[String],
    scene: &SceneChoice,
) -> Result<(hydraulink::Model, String, String), Failure> {
    let (text, file) = read_model(path)?;
    let spec = hydraulink_io::parse_model(&text, &file)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let (spec, scene) = add_scene(spec, scene, path)?;
    let (spec, applied) = hydraulink_io::apply_overrides_traced(&spec, sets)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let model = hydraulink::compile(&spec)
        .map_err(|e| Failure::invalid_input(locate(&text, &file, &e, &applied, scene.as_ref())))?;
    Ok((model, text, file))
}

/// The spec with the worksite of `choice` added (`hydraulink_io::with_scene`), and that scene.
pub(crate) fn add_scene(
    spec: ModelSpec,
    choice: &SceneChoice,
    path: Option<&PathBuf>,
) -> Result<(ModelSpec, Option<Scene>), Failure> {
    hydraulink_io::with_scene(spec, choice, path.map(PathBuf::as_path))
        .map_err(|e| Failure::invalid_input(e.to_string()))
}

/// A model error located in the scene file when it is in one of the scene's elements, else at
/// the model file's line or the option that set the field.
pub(crate) fn locate(
    text: &str,
    file: &str,
    error: &hydraulink::error::ModelError,
    applied: &[hydraulink_io::Applied],
    scene: Option<&Scene>,
) -> String {
    scene
        .and_then(|s| s.locate(error))
        .unwrap_or_else(|| {
            hydraulink_io::locate_model_error_with_overrides(text, file, error, applied)
        })
        .to_string()
}

/// `hydraulink friction-curve`: loads the model with its overrides and hands over to
/// [`friction_curve::friction_curve`].
fn friction_curve_command(args: &FrictionCurveArgs) -> Result<(), Failure> {
    let (model, _, _) = load_compiled(Some(&args.model), &args.set, &SceneChoice::None)?;
    let (a, b) = match args.v_range[..] {
        [a, b] if a.is_finite() && b.is_finite() && a < b => (a, b),
        _ => {
            return Err(Failure::invalid_input(
                "--v-range: expected two finite velocities A,B with A < B [m/s]",
            ))
        }
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out_dir(model.name()));
    friction_curve::friction_curve(&friction_curve::FrictionCurveOptions {
        model,
        element: args.element.clone(),
        v_range: (a, b),
        period_s: args.period,
        out,
    })
}

/// `hydraulink compare`: parses the options and hands over to [`compare::compare`].
fn compare_command(args: &CompareArgs) -> Result<(), Failure> {
    let (text, file) = read_model(args.model.as_ref())?;
    let mut formulations = Vec::new();
    for name in &args.formulations {
        let f: hydraulink::model::spec::Formulation =
            serde_json::from_value(serde_json::Value::String(name.clone()))
                .map_err(|e| Failure::invalid_input(format!("--formulations '{name}': {e}")))?;
        formulations.push(f);
    }
    let steps = if args.steps.is_empty() {
        let spec = hydraulink_io::parse_model(&text, &file)
            .map_err(|e| Failure::invalid_input(e.to_string()))?;
        let spec = hydraulink_io::apply_overrides(&spec, &args.set)
            .map_err(|e| Failure::invalid_input(e.to_string()))?;
        vec![spec.solver.step_s]
    } else {
        args.steps.clone()
    };
    compare::compare(&compare::CompareOptions {
        text,
        file,
        formulations,
        steps,
        duration: args.duration,
        out: args.out.clone(),
        sets: args.set.clone(),
    })
}

/// The model text and its file name (the built-in four-bar without a path).
pub(crate) fn read_model(path: Option<&PathBuf>) -> Result<(String, String), Failure> {
    Ok(match path {
        Some(path) => (
            hydraulink_io::read_model_file(path)
                .map_err(|e| Failure::invalid_input(e.to_string()))?,
            path.display().to_string(),
        ),
        None => (
            hydraulink_io::DEFAULT_MODEL.to_string(),
            hydraulink_io::DEFAULT_MODEL_NAME.to_string(),
        ),
    })
}

/// `hydraulink run`.
fn run(args: &RunArgs) -> Result<(), Failure> {
    let (text, file) = read_model(args.model.as_ref())?;
    let (spec, applied, scene) = load_spec(&text, &file, args)?;
    let formulation = formulation_name(&spec);
    let model = compile(&spec, &text, &file, args, &applied, scene.as_ref())?;
    // adaptive steps: the recorder counts output intervals (each row is interpolated at k times
    // the interval, `Simulation::advance_to`)
    let adaptive = model.solver.adaptive.is_some();
    let row_step_s = if adaptive {
        model.output_interval_s()
    } else {
        model.step_s()
    };
    check_step_count(row_step_s, model.duration_s(), args.allow_long_run)?;
    if let Some(note) = duration_note(row_step_s, model.duration_s()) {
        eprintln!("{note}");
    }
    let (output_interval_s, snapped) = snap_output_interval(row_step_s, model.output_interval_s());
    if snapped {
        eprintln!(
            "note: output interval {} s snapped to {output_interval_s} s, a whole number of steps \
             of {} s",
            model.output_interval_s(),
            model.step_s()
        );
    }
    let mut sim = Simulation::new(model).map_err(|e| init_failure(&e, &text, &file))?;

    let model = sim.model();
    let info = RunInfo {
        model: model.name().to_string(),
        formulation,
        step_s: row_step_s,
        duration_s: model.duration_s(),
        output_interval_s,
        volume_names: model.volume_names().to_vec(),
    };
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| default_out_dir(&info.model));
    let labels = sim.output_labels();
    let columns = describe_columns(model, &labels);
    let mut row = vec![0.0; labels.len()];
    sim.output_row(&mut row);
    sim.check_outputs(&row).map_err(|e| {
        Failure::invalid_input(format!(
            "{file}: the initial state has a {e}: a value of the model is beyond what its \
             outputs can hold"
        ))
    })?;
    // before the summary says "running": a Ctrl-C from then on is saved
    watch_for_interrupt();
    let mut recorder = RunRecorder::create(&dir, info, columns, &row)?;

    let progress = progress_bar(recorder.n_steps());
    let started = Instant::now();
    // From here on summary.json says "running": whatever stops the run, even a bug (a panic),
    // ends in `recorder.finish`, which writes its status.
    let stopped = panic_boundary::catch(|| {
        let mut poses = match view::PoseRows::create(&dir, &mut sim, args.model.as_ref(), &args.set)
        {
            Ok(poses) => poses,
            Err(e) => return Stopped::Output(e),
        };
        let stopped = step_all(&mut sim, &mut recorder, &mut poses, &mut row, &progress);
        match (stopped, poses.finish()) {
            (Stopped::Completed, Err(e)) => Stopped::Output(e),
            (stopped, _) => stopped,
        }
    })
    .unwrap_or_else(Stopped::Panicked);
    // values set from code (none in `run`; counted by the simulation all the same)
    recorder.add_clipped_inputs(sim.clipped_inputs());
    let wall_clock_s = started.elapsed().as_secs_f64();
    progress.finish_and_clear();

    let stop = match &stopped {
        Stopped::Completed => RunStop::Completed,
        Stopped::Step(e) => RunStop::StepFailed(e.to_string()),
        Stopped::Interrupted => RunStop::Interrupted,
        Stopped::Output(e) => RunStop::OutputFailed(e.to_string()),
        Stopped::Panicked(message) => RunStop::Panicked(message.clone()),
    };
    let finished = recorder.finish(stop, wall_clock_s);
    let kept = |summary: &Summary, status: &str| {
        format!(
            "the {} rows so far, the summary (status: {status}) and the plots are in {}",
            summary.output_rows,
            dir.display()
        )
    };
    match (stopped, finished) {
        (Stopped::Completed, Ok(summary)) => {
            print_summary(&summary, &dir);
            Ok(())
        }
        (Stopped::Completed, Err(output)) => Err(output.into()),
        (Stopped::Step(step), Ok(summary)) => Err(Failure::run_failed(format!(
            "{step}\n{}{}",
            step_advice(&step, sim.model()),
            kept(&summary, "failed")
        ))),
        (Stopped::Step(step), Err(output)) => Err(Failure::run_failed(format!("{step}\n{output}"))),
        (Stopped::Interrupted, finished) => Err(Failure {
            message: match finished {
                Ok(summary) => format!(
                    "interrupted at t = {} s\n{}",
                    summary.simulated_time_s,
                    kept(&summary, "interrupted")
                ),
                Err(output) => format!("interrupted\n{output}"),
            },
            code: EXIT_INTERRUPTED,
        }),
        (Stopped::Output(output), _) => Err(Failure::run_failed(format!(
            "{output}\nthe run stopped; summary.json says output_error"
        ))),
        (Stopped::Panicked(message), finished) => Err(Failure {
            message: match finished {
                Ok(summary) => format!("{message}\n{}", kept(&summary, "panicked")),
                Err(output) => format!("{message}\n{output}"),
            },
            code: panic_boundary::EXIT_PANICKED,
        }),
    }
}

/// What to try after a failed step; empty for errors other than a Newton failure. Ends with a
/// newline when not empty. A Newton that diverged (increments growing) before its cap is not
/// helped by more iterations: the step is too large for an element that switches sharply within
/// it, named when the worst equation is an element's, or listed by the volume it sits on. A
/// Newton that reached its cap may be helped by a smaller step or more iterations.
fn step_advice(error: &StepError, model: &hydraulink::Model) -> String {
    use hydraulink::model::Node;
    let step_s = model.step_s();
    match error {
        StepError::NewtonFailed {
            reason, equation, ..
        } if reason.starts_with("diverging") => {
            let owner = equation
                .rsplit_once('.')
                .map_or(equation.as_str(), |(owner, _)| owner);
            let culprit = if model.elements().iter().any(|e| e.name() == owner) {
                format!("the element '{owner}' (its equation `{equation}` is the worst)")
            } else if let Some(v) = model.volume_names.iter().position(|n| n == owner) {
                let on: Vec<String> = model
                    .elements()
                    .iter()
                    .filter(|e| {
                        e.ports()
                            .nodes
                            .iter()
                            .any(|n| matches!(n, Some(Node::Volume(id)) if id.0 == v))
                    })
                    .map(|e| format!("'{}'", e.name()))
                    .collect();
                if on.is_empty() {
                    format!("the oil column of volume '{owner}' (its equation is the worst)")
                } else {
                    format!(
                        "an element on volume '{owner}' (its equation is the worst): {}",
                        on.join(", ")
                    )
                }
            } else {
                format!("the equation `{equation}`")
            };
            format!(
                "hint: Newton diverged (its increments grew), so raising solver.max_iterations \
                 will not help; the step {step_s} s is too large for something that switches \
                 sharply within it, most likely {culprit}; a check or relief valve with a \
                 narrow opening_range_pa is the usual cause (widen it), or try --step {:e} (a \
                 tenth)\n",
                step_s / 10.0
            )
        }
        StepError::NewtonFailed { .. } => format!(
            "hint: the time step {step_s} s may be too large for this machine's stiffest oil \
             column; try --step {:e} (a tenth), or raise solver.max_iterations\n",
            step_s / 10.0
        ),
        _ => String::new(),
    }
}

/// Refuses a run of more steps than [`MAX_STEPS`], or than [`MAX_STEPS_WITHOUT_PERMISSION`]
/// without `--allow-long-run` (exit code 2).
fn check_step_count(step_s: f64, duration_s: f64, allowed: bool) -> Result<(), Failure> {
    let steps = (duration_s / step_s).ceil();
    if !(steps.is_finite() && steps <= MAX_STEPS as f64) {
        return Err(Failure::invalid_input(format!(
            "the run would take {steps:e} steps (duration {} s / step {} s), more than any run \
             can (2^53 = {MAX_STEPS}); shorten --duration",
            seconds(duration_s),
            seconds(step_s)
        )));
    }
    if steps > MAX_STEPS_WITHOUT_PERMISSION as f64 && !allowed {
        return Err(Failure::invalid_input(format!(
            "the run would take {steps} steps (duration {} s / step {} s), more than the limit \
             of {MAX_STEPS_WITHOUT_PERMISSION} steps for a run without --allow-long-run; pass \
             --allow-long-run to run it, or shorten --duration",
            seconds(duration_s),
            seconds(step_s)
        )));
    }
    Ok(())
}

/// A time for a message: plain when short, in exponent notation when very large or small.
fn seconds(v: f64) -> String {
    if (1e-4..1e7).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// Installs the Ctrl-C / SIGTERM handler that sets [`INTERRUPTED`]. The run stops at the next
/// step boundary; a second Ctrl-C or SIGTERM ends the process at once (exit 130), for a step
/// that does not return. Without the handler (it could not be installed) Ctrl-C ends the
/// process at once, as before; the summary then still says `running`.
pub(crate) fn watch_for_interrupt() {
    let handler = || {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            eprintln!("interrupted again: stopping now, without saving");
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
    };
    if let Err(e) = ctrlc::set_handler(handler) {
        eprintln!("warning: Ctrl-C will not save the results: {e}");
    }
}

/// How the step loop ended.
enum Stopped {
    /// Every step was taken.
    Completed,
    /// A step failed.
    Step(StepError),
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// A row could not be written.
    Output(OutputError),
    /// A bug: the program panicked; the panic's message and place.
    Panicked(String),
}

/// Runs the steps of the run, recording each one, until the end, the first failed step, an
/// interruption or a write error.
fn step_all(
    sim: &mut Simulation,
    recorder: &mut RunRecorder,
    poses: &mut view::PoseRows,
    row: &mut [f64],
    progress: &ProgressBar,
) -> Stopped {
    let clipping = ClippingValves::of(sim.model());
    // a hidden bar (not a terminal, or CI) is not counted: its `inc` costs as much per step as
    // recording the row
    let shown = !progress.is_hidden();
    let interval_s = sim.model().output_interval_s();
    for k in 1..=recorder.n_steps() {
        if INTERRUPTED.load(Ordering::Relaxed) {
            return Stopped::Interrupted;
        }
        // adaptive steps: to the next output time, with the row interpolated there
        let report = match sim.is_adaptive() {
            false => sim.step(),
            true => sim.advance_to(step_time_s(k, interval_s), row),
        };
        let report = match report {
            Ok(report) => report,
            Err(e) => return Stopped::Step(e),
        };
        if let Some(s) = sim.step_statistics() {
            recorder.set_adaptive_steps(AdaptiveSteps {
                accepted: s.accepted,
                rejected: s.rejected,
                min_step_s: s.min_step_s,
                max_step_s: s.max_step_s,
            });
        } else {
            sim.output_row(row);
        }
        if let Err(e) = sim.check_outputs(row) {
            return Stopped::Step(e);
        }
        if report.cavitation_onsets != 0 {
            for warning in recorder.cavitation_warnings(sim.time_s(), report.cavitation_onsets) {
                progress.suspend(|| eprintln!("warning: {warning}"));
            }
        }
        let written = recorder.output_rows();
        if let Err(e) = recorder.record_step(row, report.iterations, report.cavitation_onsets) {
            return Stopped::Output(e);
        }
        if recorder.output_rows() > written {
            if let Err(e) = poses.write(sim) {
                return Stopped::Output(e);
            }
        }
        recorder.add_clipped_inputs(clipping.count(sim.model(), &sim.state().inputs.u_used));
        if shown {
            progress.inc(1);
        }
    }
    Stopped::Completed
}

/// The elements of a model that have an input range (4/3 and bridge valves), with their input
/// index, for counting the input values they clip (a signal with `saturate = true`).
struct ClippingValves(Vec<(usize, usize)>);

impl ClippingValves {
    fn of(model: &hydraulink::Model) -> Self {
        ClippingValves(
            (0..model.elements().len())
                .filter_map(|e| {
                    let input = model.element_input[e]?;
                    use hydraulink::elements::component::Component as C;
                    matches!(model.elements()[e], C::Valve43(_) | C::BridgeValve(_))
                        .then_some((e, input))
                })
                .collect(),
        )
    }

    /// How many valves clip the input values `u_used` [unit of each input] of the step just
    /// taken: its value at the step's end, once per step and valve
    /// ([`hydraulink::elements::component::Component::clips_input`], as `Simulation::set_input` counts).
    fn count(&self, model: &hydraulink::Model, u_used: &[f64]) -> u64 {
        self.0
            .iter()
            .filter(|&&(e, i)| {
                u_used
                    .get(i)
                    .is_some_and(|&u| model.elements()[e].clips_input(i, u))
            })
            .count() as u64
    }
}

/// Parses the model text and applies the command-line overrides to its solver settings.
fn load_spec(
    text: &str,
    file: &str,
    args: &RunArgs,
) -> Result<(ModelSpec, Vec<hydraulink_io::Applied>, Option<Scene>), Failure> {
    let spec = hydraulink_io::parse_model(text, file)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    // the worksite only when asked for (`--scene`): a batch run is the machine alone
    let choice = match &args.scene {
        None => SceneChoice::None,
        Some(None) => SceneChoice::Model,
        Some(Some(path)) => SceneChoice::File(path.clone()),
    };
    let (spec, scene) = add_scene(spec, &choice, args.model.as_ref())?;
    let (mut spec, applied) = hydraulink_io::apply_overrides_traced(&spec, &args.set)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    if let Some(step_s) = args.step {
        spec.solver.step_s = step_s;
    }
    if let Some(duration_s) = args.duration {
        spec.solver.duration_s = duration_s;
    }
    if let Some(interval_s) = args.output_interval {
        spec.solver.output_interval_s = Some(interval_s);
    }
    if let Some(name) = &args.formulation {
        // Through serde, so that the valid names are those of the model files and the error
        // lists them.
        spec.solver.formulation =
            serde_json::from_value(serde_json::Value::String(name.clone()))
                .map_err(|e| Failure::invalid_input(format!("--formulation '{name}': {e}")))?;
    }
    Ok((spec, applied, scene))
}

/// The formulation's name as written in model files.
fn formulation_name(spec: &ModelSpec) -> String {
    match serde_json::to_value(spec.solver.formulation) {
        Ok(serde_json::Value::String(name)) => name,
        _ => format!("{:?}", spec.solver.formulation),
    }
}

/// Compiles the spec. An error in a field that an option overrode names the option; any other
/// is located in the model file.
fn compile(
    spec: &ModelSpec,
    text: &str,
    file: &str,
    args: &RunArgs,
    applied: &[hydraulink_io::Applied],
    scene: Option<&Scene>,
) -> Result<hydraulink::Model, Failure> {
    hydraulink::compile(spec).map_err(|error| {
        let overrides = [
            ("solver.step_s", "--step", args.step.is_some()),
            ("solver.duration_s", "--duration", args.duration.is_some()),
            (
                "solver.output_interval_s",
                "--output-interval",
                args.output_interval.is_some(),
            ),
            (
                "solver.formulation",
                "--formulation",
                args.formulation.is_some(),
            ),
        ];
        match overrides
            .iter()
            .find(|(path, _, given)| *given && error.path == *path)
        {
            Some((_, option, _)) => Failure::invalid_input(format!("{option}: {}", error.message)),
            None => Failure::invalid_input(locate(text, file, &error, applied, scene)),
        }
    })
}

/// The message of a failed initialization, with the model line it concerns when known.
fn init_failure(error: &InitError, text: &str, file: &str) -> Failure {
    let at = match hydraulink_io::locate_init_error(text, error) {
        Some(line) => format!("{file}:{line}"),
        None => file.to_string(),
    };
    Failure::invalid_input(format!("{at}: initialization failed: {error}"))
}

/// `out/<model name>/`, with the characters that could leave `out/` or are awkward in file
/// names replaced by `_`.
pub(crate) fn default_out_dir(model_name: &str) -> PathBuf {
    let safe: String = model_name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = if safe.is_empty() || safe.chars().all(|c| c == '.') {
        "model".into()
    } else {
        safe
    };
    Path::new("out").join(safe)
}

/// A progress bar over `n_steps` steps on stderr; hidden unless stdout and stderr are terminals
/// and `CI` is unset.
fn progress_bar(n_steps: u64) -> ProgressBar {
    let interactive = std::io::stdout().is_terminal()
        && std::io::stderr().is_terminal()
        && std::env::var_os("CI").is_none();
    if !interactive {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{wide_bar}] {human_pos}/{human_len} steps, eta {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(n_steps).with_style(style)
}

/// The closing lines of a complete run.
fn print_summary(summary: &Summary, dir: &Path) {
    let rtf = summary
        .real_time_factor
        .map_or("-".to_string(), |r| format!("{r:.2}"));
    println!(
        "{}: {} steps of {} s with {}, t = {:.3} s in {:.3} s wall clock (real-time factor {rtf})",
        summary.model,
        summary.step_count,
        summary.step_s,
        summary.formulation,
        summary.simulated_time_s,
        summary.wall_clock_s,
    );
    if let Some(a) = &summary.adaptive_steps {
        println!(
            "adaptive steps: {} accepted, {} rejected, step {:e} s to {:e} s (the rows above are \
             output intervals)",
            a.accepted, a.rejected, a.min_step_s, a.max_step_s
        );
    }
    if let Some(mean) = summary.newton_iterations_mean {
        println!(
            "Newton iterations per step: mean {mean:.2}, max {}",
            summary.newton_iterations_max.unwrap_or(0)
        );
    }
    if summary.cavitation_warnings > 0 {
        println!("cavitation warnings: {}", summary.cavitation_warnings);
    }
    if summary.clipped_inputs > 0 {
        println!(
            "clipped input values: {} (step values a valve held at its input_range_v)",
            summary.clipped_inputs
        );
    }
    println!("results in {}", dir.display());
}

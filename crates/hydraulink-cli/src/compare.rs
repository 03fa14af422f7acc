//! `hydraulink compare`: the same model under several formulations and time steps.
//!
//! For each time step: compile the model under every formulation with the overrides, initialize,
//! and run the formulations side by side, step for step. Deviations are taken against the first
//! formulation at the same step (same time grid) as the runs go; each run keeps only its table
//! row and a plot copy of its joint coordinates and pressures of a fixed size (min/max per time
//! bucket), so memory does not grow with the duration. (A kinematic-guidance replay of the
//! reference is the exception: the reference's cylinder motion at every step is its input table.) Writes DIR/compare.csv, DIR/compare.md and
//! DIR/plots/overlay_<step>_{joints,pressures}.svg (lines named like the columns of
//! results.csv, `penalty z1.q`; angles in degrees), and prints the table with each error once.
//! Exits with code 1 when any run failed.

use std::path::PathBuf;
use std::time::Instant;

use hydraulink::formulations::z_only::kinematic_guidance::{replay_spec, Recorded};
use hydraulink::model::spec::Formulation;
use hydraulink::{ModelSpec, Simulation};
use hydraulink_io::output::{
    compare_failures, compare_markdown, write_compare_tables, write_overlay, CompareRow, Decimated,
    OverlayLine, OverlayPanel, PLOT_BUCKETS,
};

use crate::Failure;

/// Parsed options of `hydraulink compare`.
pub struct CompareOptions {
    /// Model text and file name.
    pub text: String,
    /// File name for messages.
    pub file: String,
    /// Formulations, the first is the reference; empty: the model's own formulation, then
    /// every other that accepts the model ([`supported_formulations`]).
    pub formulations: Vec<Formulation>,
    /// Time steps [s].
    pub steps: Vec<f64>,
    /// Duration override [s].
    pub duration: Option<f64>,
    /// Output directory.
    pub out: Option<PathBuf>,
    /// `--set PATH=VALUE` overrides, applied to the model before anything else.
    pub sets: Vec<String>,
}

/// One run of the comparison: its simulation while it goes on, its table row, and a plot copy
/// of its joint coordinates and pressures of a fixed size (min/max per time bucket, like
/// `hydraulink run`'s figures). Nothing grows with the number of steps.
struct Run {
    /// The simulation; `None` when it could not start, failed, or finished.
    sim: Option<Simulation>,
    /// Its row of the table, filled in as the run goes.
    row: CompareRow,
    /// Newton iterations summed over the steps.
    it_sum: u64,
    /// Column of `constraint.violation` in the simulation's output rows.
    viol_col: Option<usize>,
    /// Output row buffer.
    out: Vec<f64>,
    /// Column name (`z1.q`) and unit (`rad` or `m`) of each coordinate.
    z_columns: Vec<(String, &'static str)>,
    /// Column name of each pressure (`V1.p`).
    p_columns: Vec<String>,
    /// Name of each volume, for the cavitation warnings; empty: no warnings (the recording
    /// run of a kinematic-guidance replay repeats the reference run, which warns itself).
    volume_names: Vec<String>,
    /// Plot copy of the rows [t, z…, p…].
    plot: Decimated,
    /// Row buffer of the plot copy.
    plot_row: Vec<f64>,
}

impl Run {
    /// A run that could not start, with its error.
    fn failed(formulation: Formulation, step: f64, error: String) -> Run {
        Run {
            sim: None,
            row: CompareRow {
                formulation: formulation.name().into(),
                step_s: step,
                error: Some(error),
                steps: 0,
                iterations_mean: 0.0,
                iterations_max: 0,
                wall_s: 0.0,
                real_time_factor: 0.0,
                peak_constraint_violation: 0.0,
                peak_energy_drift_j: 0.0,
                max_joint_deviation: None,
                max_pressure_deviation_pa: None,
            },
            it_sum: 0,
            viol_col: None,
            out: Vec::new(),
            z_columns: Vec::new(),
            p_columns: Vec::new(),
            volume_names: Vec::new(),
            plot: Decimated::new(1, 1.0, 1),
            plot_row: Vec::new(),
        }
    }

    /// Bytes this run holds for its series (the plot copy and the row buffers): fixed when it
    /// starts, whatever the number of steps.
    #[cfg(test)]
    fn retained_bytes(&self) -> usize {
        self.plot.retained_bytes()
            + (self.out.capacity() + self.plot_row.capacity()) * std::mem::size_of::<f64>()
    }

    /// Takes the current state into the statistics and the plot copy.
    fn record(&mut self) {
        let Some(sim) = &self.sim else { return };
        self.plot_row.clear();
        if sim.is_adaptive() && self.row.steps > 0 {
            // the row `advance_to` interpolated at the grid time k Δt: its time, z (the `.q`
            // columns after `time`, each with its `.qd`) and p (after them)
            let (n, nv) = (sim.state().z.len(), sim.state().p.len());
            self.plot_row.push(self.out[0]);
            self.plot_row.extend((0..n).map(|i| self.out[1 + 2 * i]));
            self.plot_row
                .extend_from_slice(&self.out[1 + 2 * n..1 + 2 * n + nv]);
        } else {
            sim.output_row(&mut self.out);
            let (z, p) = (&sim.state().z, &sim.state().p);
            self.plot_row.push(sim.time_s());
            self.plot_row.extend_from_slice(z);
            self.plot_row.extend_from_slice(p);
        }
        self.plot.push(&self.plot_row);
        if let Some(c) = self.viol_col {
            self.row.peak_constraint_violation =
                self.row.peak_constraint_violation.max(self.out[c]);
        }
        self.row.peak_energy_drift_j = self.row.peak_energy_drift_j.max(sim.energy_drift_j().abs());
    }

    /// One step, recorded; a failed step ends the run with its error. A volume whose pressure
    /// falls below zero gets a warning on stderr that names the formulation and the step size
    /// of this run (the runs go side by side).
    fn step(&mut self) {
        let Some(sim) = &mut self.sim else { return };
        let started = Instant::now();
        // adaptive steps: to the next time of the grid k Δt, the row interpolated there
        let stepped = if sim.is_adaptive() {
            let t = hydraulink_io::output::step_time_s(self.row.steps + 1, self.row.step_s);
            sim.advance_to(t, &mut self.out)
        } else {
            sim.step()
        };
        match stepped {
            Ok(r) => {
                for v in (0..self.volume_names.len().min(u64::BITS as usize))
                    .filter(|v| (r.cavitation_onsets >> v) & 1 == 1)
                {
                    eprintln!(
                        "warning: {} at Δt = {} s: volume '{}' pressure below 0 Pa (absolute) \
                         at t = {:.3} s",
                        self.row.formulation,
                        self.row.step_s,
                        self.volume_names[v],
                        sim.time_s()
                    );
                }
                self.it_sum += u64::from(r.iterations);
                self.row.iterations_max = self.row.iterations_max.max(r.iterations);
                self.row.steps += 1;
                self.record();
                // a non-finite output fails the run, as in `run`
                let failed = self
                    .sim
                    .as_ref()
                    .and_then(|s| s.check_outputs(&self.out).err());
                if let Some(e) = failed {
                    self.row.error = Some(e.to_string());
                    self.sim = None;
                }
            }
            Err(e) => {
                self.row.error = Some(e.to_string());
                self.sim = None;
            }
        }
        self.row.wall_s += started.elapsed().as_secs_f64();
    }

    /// Closes the row: mean iterations and real-time factor.
    fn finish(&mut self) {
        self.sim = None;
        if self.row.steps > 0 {
            self.row.iterations_mean = self.it_sum as f64 / self.row.steps as f64;
            self.row.real_time_factor =
                self.row.steps as f64 * self.row.step_s / self.row.wall_s.max(1e-12);
        }
    }
}

/// The model of one run: the spec with the formulation, step and duration, compiled; for
/// kinematic guidance without a prescribed motion, the replay of `recorded` (the reference's
/// cylinder motion).
fn start(
    spec: &ModelSpec,
    formulation: Formulation,
    step: f64,
    opts: &CompareOptions,
    applied: &[hydraulink_io::Applied],
    recorded: Option<&Recording>,
) -> Run {
    let spec = run_spec(spec, formulation, step, opts, recorded);
    let model = match hydraulink::compile(&spec) {
        Ok(m) => m,
        Err(e) => {
            let error = hydraulink_io::locate_model_error_with_overrides(
                &opts.text, &opts.file, &e, applied,
            );
            return Run::failed(formulation, step, error.to_string());
        }
    };
    start_model(model, formulation, step)
}

/// The spec of one run: `spec` with the formulation, step and duration; for kinematic guidance
/// without a prescribed motion, the replay of `recorded` (the reference's cylinder motion).
fn run_spec(
    spec: &ModelSpec,
    formulation: Formulation,
    step: f64,
    opts: &CompareOptions,
    recorded: Option<&Recording>,
) -> ModelSpec {
    let mut spec = spec.clone();
    // Kinematic guidance without a prescribed motion in the model replays the reference run
    // (004 §4: the guided motion is recorded from the unified run).
    if formulation == Formulation::KinematicGuidance && spec.solver.guidance.is_empty() {
        if let Some(r) = recorded.filter(|r| !r.t.is_empty()) {
            let recorded: Vec<Recorded> = spec
                .hydraulics
                .cylinders
                .iter()
                .enumerate()
                .map(|(c, cyl)| Recorded {
                    cylinder: &cyl.name,
                    length_m: &r.s[c],
                    velocity_m_s: Some(&r.sd[c]),
                })
                .collect();
            spec = replay_spec(&spec, &r.t, &recorded);
        }
    }
    spec.solver.formulation = formulation;
    spec.solver.step_s = step;
    spec.solver.output_interval_s = None;
    if let Some(d) = opts.duration {
        spec.solver.duration_s = d;
    }
    spec
}

/// A run of the compiled `model`: initialized, its first state recorded.
fn start_model(model: hydraulink::Model, formulation: Formulation, step: f64) -> Run {
    let sim = match Simulation::new(model) {
        Ok(s) => s,
        Err(e) => return Run::failed(formulation, step, format!("initialization failed: {e}")),
    };
    let mut run = Run::failed(formulation, step, String::new());
    run.row.error = None;
    let layout = &sim.model().layout;
    run.z_columns = layout.names[layout.z.clone()]
        .iter()
        .zip(&layout.units[layout.z.clone()])
        .map(|(name, unit)| (format!("{name}.q"), *unit))
        .collect();
    run.p_columns = layout.names[layout.p.clone()].to_vec();
    run.volume_names = sim.model().volume_names.clone();
    let labels = sim.output_labels();
    run.viol_col = labels.iter().position(|l| l == "constraint.violation");
    run.out = vec![0.0; labels.len()];
    let width = 1 + sim.model().n_coords() + sim.model().n_volumes();
    run.plot = Decimated::new(width, sim.model().duration_s(), PLOT_BUCKETS);
    run.plot_row = Vec::with_capacity(width);
    run.sim = Some(sim);
    run.record();
    run
}

/// The reference run's cylinder motion at every step, for a kinematic-guidance replay: the
/// table of the replay's inputs (it becomes part of the replayed model, so it is held whole;
/// only a comparison with kinematic guidance and no prescribed motion records it).
struct Recording {
    /// Time of every step [s].
    t: Vec<f64>,
    /// Length s per cylinder [m].
    s: Vec<Vec<f64>>,
    /// Rate ṡ per cylinder [m/s].
    sd: Vec<Vec<f64>>,
}

/// Runs the reference `run` to its end, recording its cylinders' motion.
fn record_motion(mut run: Run, n_steps: u64) -> Recording {
    let mut rec = Recording {
        t: Vec::new(),
        s: Vec::new(),
        sd: Vec::new(),
    };
    // the reference run warns when it runs for the table; not twice
    run.volume_names.clear();
    let Some(sim) = &run.sim else { return rec };
    let n_cyl = sim.workspace().ev.motion.len();
    rec.s = vec![Vec::new(); n_cyl];
    rec.sd = vec![Vec::new(); n_cyl];
    for k in 0..=n_steps {
        if k > 0 {
            run.step();
        }
        let Some(sim) = &run.sim else { break };
        rec.t.push(sim.time_s());
        for (c, m) in sim.workspace().ev.motion.iter().enumerate() {
            rec.s[c].push(m.s);
            rec.sd[c].push(m.sd);
        }
    }
    rec
}

/// Largest |a_i − b_i| [unit of the values], `None` when the lengths differ.
fn max_dev(a: &[f64], b: &[f64]) -> Option<f64> {
    (a.len() == b.len()).then(|| {
        a.iter()
            .zip(b)
            .fold(0.0f64, |m, (u, v)| m.max((u - v).abs()))
    })
}

/// Raises `dev` to `d`; a `None` (different numbers of coordinates) stays `None` for good.
fn raise_dev(dev: &mut Option<f64>, d: Option<f64>, first: bool) {
    *dev = match (first, *dev, d) {
        (true, _, d) => d,
        (false, Some(m), Some(d)) => Some(m.max(d)),
        _ => None,
    };
}

/// The formulations of a comparison without `--formulations`, asked of the library: the
/// model's own formulation (`solver.formulation`, the reference), then every other one under
/// which the model compiles at the first time step. The others are returned with the error
/// their compilation gave (a relief valve's poppet lag or LuGre friction outside `penalty`, a
/// hydraulic motor outside `penalty`, a circuit without mechanism under the formulations that
/// need one, …). When the model does not compile under its own formulation either, nothing is
/// skipped: the reference run fails with that error, as with `--formulations`. Kinematic
/// guidance without a prescribed motion is tried as the replay it will be (of a placeholder
/// recording: compilation checks the names, not the values).
fn supported_formulations(
    spec: &ModelSpec,
    opts: &CompareOptions,
    applied: &[hydraulink_io::Applied],
) -> (Vec<Formulation>, Vec<(Formulation, String)>) {
    let own = spec.solver.formulation;
    let step = opts.steps.first().copied().unwrap_or(spec.solver.step_s);
    let placeholder = Recording {
        t: vec![0.0, 1.0],
        s: vec![vec![1.0, 1.0]; spec.hydraulics.cylinders.len()],
        sd: vec![vec![0.0, 0.0]; spec.hydraulics.cylinders.len()],
    };
    let compiles = |f: Formulation| {
        hydraulink::compile(&run_spec(spec, f, step, opts, Some(&placeholder))).map_err(|e| {
            hydraulink_io::locate_model_error_with_overrides(&opts.text, &opts.file, &e, applied)
                .to_string()
        })
    };
    let mut chosen = vec![own];
    let mut skipped = Vec::new();
    if compiles(own).is_err() {
        return (chosen, skipped);
    }
    for f in Formulation::ALL.into_iter().filter(|&f| f != own) {
        match compiles(f) {
            Ok(_) => chosen.push(f),
            Err(e) => skipped.push((f, e)),
        }
    }
    (chosen, skipped)
}

/// Runs every formulation at time step `step` side by side, step for step: deviations from the
/// first (the reference) are taken as the runs go, over the steps both have taken, so that no
/// series is kept whole. Returns the runs, finished, in the order of `opts.formulations`.
fn run_step_size(
    spec: &ModelSpec,
    step: f64,
    opts: &CompareOptions,
    applied: &[hydraulink_io::Applied],
) -> Vec<Run> {
    let formulations = &opts.formulations;
    let reference = |recorded| start(spec, formulations[0], step, opts, applied, recorded);
    // a replay needs the reference's motion before it starts: record it in a run of its own
    let replays = formulations[1..]
        .iter()
        .any(|&f| f == Formulation::KinematicGuidance && spec.solver.guidance.is_empty());
    // on the grid of the compare step (an adaptive run's own steps vary)
    let n_steps = |run: &Run| {
        run.sim.as_ref().map_or(0, |sim| {
            hydraulink::model::steps_covering(sim.model().duration_s(), run.row.step_s)
        })
    };
    let recording = replays.then(|| {
        let run = reference(None);
        let n = n_steps(&run);
        record_motion(run, n)
    });
    let mut runs = vec![reference(None)];
    for &f in &formulations[1..] {
        runs.push(start(spec, f, step, opts, applied, recording.as_ref()));
    }
    let n_max = runs.iter().map(n_steps).max().unwrap_or(0);
    for k in 0..=n_max {
        if k > 0 {
            for run in &mut runs {
                if run.row.steps + 1 == k && n_steps(run) >= k {
                    run.step();
                }
            }
        }
        // deviations where the reference and the run both stand at step k
        let (reference, others) = runs.split_first_mut().expect("one formulation at least");
        let Some(r) = reference.sim.as_ref().filter(|_| reference.row.steps == k) else {
            continue;
        };
        for run in others {
            let Some(sim) = run.sim.as_ref().filter(|_| run.row.steps == k) else {
                continue;
            };
            let (z, p) = (&sim.state().z, &sim.state().p);
            let (zr, pr) = (&r.state().z, &r.state().p);
            raise_dev(&mut run.row.max_joint_deviation, max_dev(z, zr), k == 0);
            raise_dev(
                &mut run.row.max_pressure_deviation_pa,
                max_dev(p, pr),
                k == 0,
            );
        }
    }
    for run in &mut runs {
        run.finish();
    }
    runs
}

/// `hydraulink compare`.
pub fn compare(opts: &CompareOptions) -> Result<(), Failure> {
    let spec = hydraulink_io::parse_model(&opts.text, &opts.file)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let (spec, applied) = hydraulink_io::apply_overrides_traced(&spec, &opts.sets)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let dir = opts
        .out
        .clone()
        .unwrap_or_else(|| crate::default_out_dir(&spec.name).join("compare"));
    let chosen;
    let opts = if opts.formulations.is_empty() {
        let (formulations, skipped) = supported_formulations(&spec, opts, &applied);
        eprintln!(
            "formulations: {} (the model's own, '{}', is the reference)",
            formulations
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", "),
            formulations[0].name()
        );
        for (f, why) in &skipped {
            eprintln!(
                "note: skipped '{}', which does not accept the model: {why}",
                f.name()
            );
        }
        chosen = CompareOptions {
            formulations,
            text: opts.text.clone(),
            file: opts.file.clone(),
            steps: opts.steps.clone(),
            duration: opts.duration,
            out: opts.out.clone(),
            sets: opts.sets.clone(),
        };
        &chosen
    } else {
        opts
    };
    let plots = dir.join("plots");
    std::fs::create_dir_all(&plots)
        .map_err(|e| Failure::run_failed(format!("cannot create '{}': {e}", plots.display())))?;
    let mut rows = Vec::new();
    for &step in &opts.steps {
        let runs = run_step_size(&spec, step, opts, &applied);
        for run in &runs {
            // the error itself is printed once, below the table
            eprintln!(
                "{} at Δt = {} s: {}",
                run.row.formulation,
                step,
                if run.row.error.is_some() {
                    "failed"
                } else {
                    "done"
                }
            );
        }
        // overlays: every joint coordinate and pressure of every formulation, named like the
        // columns of results.csv; angles in degrees, positions in m, pressures in MPa
        let tag = format!("{step:e}").replace('.', "p");
        let lines = |unit: Option<&str>, pressures: bool, scale: f64| {
            let mut out = Vec::new();
            for s in &runs {
                // columns of the plot copy: t, then the coordinates, then the pressures
                let named: Vec<(usize, &str)> = if pressures {
                    let first = 1 + s.z_columns.len();
                    (first..)
                        .zip(&s.p_columns)
                        .map(|(c, n)| (c, n.as_str()))
                        .collect()
                } else {
                    (1..)
                        .zip(&s.z_columns)
                        .filter(|(_, (_, u))| Some(*u) == unit)
                        .map(|(c, (n, _))| (c, n.as_str()))
                        .collect()
                };
                for (c, name) in named {
                    out.push(OverlayLine {
                        name: format!("{} {name}", s.row.formulation),
                        points: s
                            .plot
                            .series(c, 2 * PLOT_BUCKETS)
                            .into_iter()
                            .map(|(t, v)| (t, v * scale))
                            .collect(),
                    });
                }
            }
            out
        };
        write_overlay(
            &plots.join(format!("overlay_{tag}_joints.svg")),
            &format!("joint coordinates, Δt = {step} s"),
            &[
                OverlayPanel {
                    y_label: "angle [deg]".into(),
                    lines: lines(Some("rad"), false, 180.0 / std::f64::consts::PI),
                },
                OverlayPanel {
                    y_label: "position [m]".into(),
                    lines: lines(Some("m"), false, 1.0),
                },
            ],
        )?;
        write_overlay(
            &plots.join(format!("overlay_{tag}_pressures.svg")),
            &format!("pressures, Δt = {step} s"),
            &[OverlayPanel {
                y_label: "pressure [MPa]".into(),
                lines: lines(None, true, 1e-6),
            }],
        )?;
        rows.extend(runs.into_iter().map(|s| s.row));
    }
    write_compare_tables(&dir, &rows)?;
    println!("{}", compare_markdown(&rows));
    println!("tables and overlays in {}", dir.display());
    let failures = compare_failures(&rows);
    if failures.is_empty() {
        return Ok(());
    }
    let n_failed: usize = failures.iter().map(|(_, runs)| runs.len()).sum();
    Err(Failure::run_failed(format!(
        "{n_failed} of {} runs failed (their errors are listed below the table)",
        rows.len()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(duration: f64, formulations: Vec<Formulation>) -> CompareOptions {
        CompareOptions {
            text: hydraulink_io::DEFAULT_MODEL.to_string(),
            file: hydraulink_io::DEFAULT_MODEL_NAME.to_string(),
            formulations,
            steps: vec![1e-3],
            duration: Some(duration),
            out: None,
            sets: Vec::new(),
        }
    }

    /// Issue 11 item 4: what a comparison holds per run does not grow with the duration. The
    /// four-bar under penalty and global ALI3-P, 0.2 s against 2 s at 1 ms (10× the steps): each
    /// run holds the same number of bytes (its plot copy and row buffers; no per-step series),
    /// and the overlay series stay within 2 points per plot bucket.
    #[test]
    fn runs_hold_a_fixed_size_whatever_the_duration() {
        let spec = hydraulink_io::parse_model(
            hydraulink_io::DEFAULT_MODEL,
            hydraulink_io::DEFAULT_MODEL_NAME,
        )
        .unwrap();
        let formulations = vec![Formulation::Penalty, Formulation::GlobalAli3p];
        let held = |duration: f64| {
            let runs = run_step_size(&spec, 1e-3, &options(duration, formulations.clone()), &[]);
            for run in &runs {
                assert_eq!(run.row.error, None, "{}", run.row.formulation);
                assert_eq!(run.row.steps, (duration / 1e-3).round() as u64);
                assert!(run.sim.is_none(), "the simulation is dropped at the end");
                let points = run.plot.series(1, usize::MAX);
                assert!(points.len() <= 2 * PLOT_BUCKETS, "{}", points.len());
            }
            // the deviation from the reference was taken over every step
            let dev = runs[1].row.max_joint_deviation.unwrap();
            assert!(dev > 0.0 && dev < 1e-2, "{dev}");
            runs.iter().map(Run::retained_bytes).collect::<Vec<_>>()
        };
        let short = held(0.2);
        let long = held(2.0);
        assert_eq!(short, long);
        assert!(long.iter().all(|&b| b < 1 << 20), "{long:?}");
    }

    /// The deviation of a run from the reference is the largest difference over the steps both
    /// took, and `None` when their coordinates do not match in number.
    #[test]
    fn deviations_keep_the_largest_and_refuse_different_sizes() {
        let mut dev = None;
        raise_dev(&mut dev, max_dev(&[1.0, 2.0], &[1.5, 2.0]), true);
        raise_dev(&mut dev, max_dev(&[1.0, 2.0], &[1.0, 2.25]), false);
        assert_eq!(dev, Some(0.5));
        raise_dev(&mut dev, max_dev(&[1.0], &[1.0, 2.0]), false);
        assert_eq!(dev, None);
        raise_dev(&mut dev, max_dev(&[1.0], &[1.0]), false);
        assert_eq!(dev, None);
    }
}

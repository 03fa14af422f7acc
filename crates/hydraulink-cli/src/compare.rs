//! `hydraulink compare`: the same model under several formulations and time steps.
//!
//! For each step and formulation: compile with the overrides, initialize, run every step and keep
//! the joint coordinates and pressures of every step. Deviations are taken against the first
//! formulation at the same step (same time grid). Writes DIR/compare.csv, DIR/compare.md and
//! DIR/plots/overlay_<step>_{joints,pressures}.svg (lines named like the columns of
//! results.csv, `penalty z1.q`; angles in degrees), and prints the table with each error once.
//! Exits with code 1 when any run failed.

use std::path::PathBuf;
use std::time::Instant;

use hydraulink::mechanics::kinematic_guidance::{replay_spec, Recorded};
use hydraulink::model::spec::Formulation;
use hydraulink::{ModelSpec, Simulation};
use hydraulink_io::output::{
    compare_failures, compare_markdown, write_compare_tables, write_overlay, CompareRow,
    OverlayLine, OverlayPanel,
};

use crate::Failure;

/// Parsed options of `hydraulink compare`.
pub struct CompareOptions {
    /// Model text and file name.
    pub text: String,
    /// File name for messages.
    pub file: String,
    /// Formulations, the first is the reference.
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

/// One finished (or failed) run with its series.
struct Series {
    row: CompareRow,
    /// Time of every step.
    t: Vec<f64>,
    /// Joint coordinates, one Vec per coordinate.
    z: Vec<Vec<f64>>,
    /// Column name (`z1.q`) and unit (`rad` or `m`) of each coordinate.
    z_columns: Vec<(String, &'static str)>,
    /// Pressures, one Vec per volume.
    p: Vec<Vec<f64>>,
    /// Column name of each pressure (`V1.p`).
    p_columns: Vec<String>,
    /// Cylinder lengths s and rates ṡ, one Vec per cylinder (for kinematic-guidance replays).
    s: Vec<Vec<f64>>,
    /// ṡ per cylinder.
    sd: Vec<Vec<f64>>,
}

fn run_one(
    spec: &ModelSpec,
    formulation: Formulation,
    step: f64,
    opts: &CompareOptions,
    applied: &[hydraulink_io::Applied],
    reference: Option<&Series>,
) -> Result<Series, Failure> {
    let mut spec = spec.clone();
    // Kinematic guidance without a prescribed motion in the model replays the reference run
    // (004 §4: the guided motion is recorded from the unified run).
    if formulation == Formulation::KinematicGuidance && spec.solver.guidance.is_empty() {
        if let Some(r) = reference.filter(|r| !r.t.is_empty()) {
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
    let failed = |error: String| Series {
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
        t: Vec::new(),
        z: Vec::new(),
        z_columns: Vec::new(),
        p: Vec::new(),
        p_columns: Vec::new(),
        s: Vec::new(),
        sd: Vec::new(),
    };
    let model = match hydraulink::model::compile(&spec) {
        Ok(m) => m,
        Err(e) => {
            return Ok(failed(
                hydraulink_io::locate_model_error_with_overrides(
                    &opts.text, &opts.file, &e, applied,
                )
                .to_string(),
            ))
        }
    };
    let mut sim = match Simulation::new(model) {
        Ok(s) => s,
        Err(e) => return Ok(failed(format!("initialization failed: {e}"))),
    };
    let n = sim.model().n_coords();
    let nv = sim.model().n_volumes();
    let n_steps = (sim.model().duration_s() / sim.model().step_s()).round() as u64;
    let labels = sim.output_labels();
    let viol_col = labels.iter().position(|l| l == "constraint.violation");
    let mut row = vec![0.0; labels.len()];
    let mut s = failed(String::new());
    s.row.error = None;
    let layout = &sim.model().layout;
    s.z_columns = layout.names[layout.z.clone()]
        .iter()
        .zip(&layout.units[layout.z.clone()])
        .map(|(name, unit)| (format!("{name}.q"), *unit))
        .collect();
    s.p_columns = layout.names[layout.p.clone()].to_vec();
    let record = |sim: &Simulation, s: &mut Series, row: &mut [f64]| {
        sim.output_row(row);
        s.t.push(sim.time_s());
        for i in 0..n {
            s.z[i].push(sim.state().z[i]);
        }
        for v in 0..nv {
            s.p[v].push(sim.state().p[v]);
        }
        for (c, m) in sim.workspace().ev.motion.iter().enumerate() {
            s.s[c].push(m.s);
            s.sd[c].push(m.sd);
        }
        if let Some(c) = viol_col {
            s.row.peak_constraint_violation = s.row.peak_constraint_violation.max(row[c]);
        }
        s.row.peak_energy_drift_j = s.row.peak_energy_drift_j.max(sim.energy_drift_j().abs());
    };
    // reserve for the run, but not more than a million rows up front (a huge duration must not
    // abort on allocation before the first step)
    let cap = usize::try_from(n_steps).map_or(1 << 20, |n| n.saturating_add(1).min(1 << 20));
    s.z = vec![Vec::with_capacity(cap); n];
    s.p = vec![Vec::with_capacity(cap); nv];
    let ncyl = sim.model().hydraulics.cylinders.len();
    s.s = vec![Vec::with_capacity(cap); ncyl];
    s.sd = vec![Vec::with_capacity(cap); ncyl];
    record(&sim, &mut s, &mut row);
    let started = Instant::now();
    let mut it_sum = 0u64;
    for _ in 0..n_steps {
        match sim.step() {
            Ok(r) => {
                it_sum += u64::from(r.iterations);
                s.row.iterations_max = s.row.iterations_max.max(r.iterations);
                s.row.steps += 1;
                record(&sim, &mut s, &mut row);
            }
            Err(e) => {
                s.row.error = Some(e.to_string());
                break;
            }
        }
    }
    s.row.wall_s = started.elapsed().as_secs_f64();
    if s.row.steps > 0 {
        s.row.iterations_mean = it_sum as f64 / s.row.steps as f64;
        s.row.real_time_factor = s.row.steps as f64 * step / s.row.wall_s.max(1e-12);
    }
    Ok(s)
}

fn max_dev(a: &[Vec<f64>], b: &[Vec<f64>]) -> Option<f64> {
    if a.len() != b.len() {
        return None;
    }
    let mut m: f64 = 0.0;
    for (x, y) in a.iter().zip(b) {
        for (u, v) in x.iter().zip(y) {
            m = m.max((u - v).abs());
        }
    }
    Some(m)
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
    let plots = dir.join("plots");
    std::fs::create_dir_all(&plots)
        .map_err(|e| Failure::run_failed(format!("cannot create '{}': {e}", plots.display())))?;
    let mut rows = Vec::new();
    for &step in &opts.steps {
        let mut runs: Vec<Series> = Vec::new();
        for &f in &opts.formulations {
            let mut s = run_one(&spec, f, step, opts, &applied, runs.first())?;
            if let Some(reference) = runs.first() {
                if !s.t.is_empty() && !reference.t.is_empty() {
                    let k = s.t.len().min(reference.t.len());
                    let cut = |v: &[Vec<f64>]| {
                        v.iter()
                            .map(|c| c[..k.min(c.len())].to_vec())
                            .collect::<Vec<_>>()
                    };
                    s.row.max_joint_deviation = max_dev(&cut(&s.z), &cut(&reference.z));
                    s.row.max_pressure_deviation_pa = max_dev(&cut(&s.p), &cut(&reference.p));
                }
            }
            // the error itself is printed once, below the table
            eprintln!(
                "{} at Δt = {} s: {}",
                f.name(),
                step,
                if s.row.error.is_some() {
                    "failed"
                } else {
                    "done"
                }
            );
            runs.push(s);
        }
        // overlays: every joint coordinate and pressure of every formulation, named like the
        // columns of results.csv; angles in degrees, positions in m, pressures in MPa
        let tag = format!("{step:e}").replace('.', "p");
        let lines = |unit: Option<&str>, pressures: bool, scale: f64| {
            let mut out = Vec::new();
            for s in &runs {
                let named: Vec<(&Vec<f64>, &str)> = if pressures {
                    s.p.iter()
                        .zip(&s.p_columns)
                        .map(|(c, n)| (c, n.as_str()))
                        .collect()
                } else {
                    s.z.iter()
                        .zip(&s.z_columns)
                        .filter(|(_, (_, u))| Some(*u) == unit)
                        .map(|(c, (n, _))| (c, n.as_str()))
                        .collect()
                };
                for (c, name) in named {
                    out.push(OverlayLine {
                        name: format!("{} {name}", s.row.formulation),
                        points: s.t.iter().zip(c).map(|(t, v)| (*t, v * scale)).collect(),
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

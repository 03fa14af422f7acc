//! `hydraulink linearize`: the linear model of a machine about its static equilibrium or about a
//! state of a run, by the exact method of paper 001 §3 or by its finite-difference counterpart
//! (001 §4.5); the eigenvalue table on stdout, A, B, C, D with names (JSON and CSV) and the pole
//! map in DIR (`hydraulink_io::output::linear`).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use hydraulink::linearize::derivatives::SpoolSide;
use hydraulink::linearize::eigen::{modes, table, EigenOptions, ModeKind, UNDEFINED};
use hydraulink::linearize::equilibrium::{equilibrium, EquilibriumOptions};
use hydraulink::linearize::exact::{linearize, ExactOptions};
use hydraulink::linearize::finite_difference::{self, StepKind};
use hydraulink::linearize::index1::rhs;
use hydraulink::linearize::{
    all_inputs, all_outputs, full_names, parse_input, parse_output, OperatingPoint,
};
use hydraulink::Simulation;
use serde_json::json;

use crate::{default_out_dir, read_model, Failure};

/// Linearization method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Method {
    /// Independent coordinates, constraints eliminated exactly (dual numbers; Agúndez et al., Nonlinear Dynamics (2023), §3).
    Exact,
    /// Central differences in all coordinates (shows spurious zeros; Agúndez et al., Nonlinear Dynamics (2023), §4.5).
    FiniteDifference,
}

/// Side of the valve-flow derivative at a closed spool (reference note 001 E.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Side {
    /// Mean of both one-sided slopes.
    Average,
    /// Opening towards U > 0.
    Positive,
    /// Opening towards U < 0.
    Negative,
}

/// Scaling of the finite-difference step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FdStep {
    /// The same h for every variable (Agúndez et al., Nonlinear Dynamics (2023), eq. 100).
    Absolute,
    /// h · max(1, |x|).
    Relative,
}

/// The options of `hydraulink linearize`.
#[derive(Debug, Args)]
pub(crate) struct LinearizeArgs {
    #[arg(value_name = "MODEL", help = "Model file (TOML)")]
    model: PathBuf,

    #[arg(long, value_name = "equilibrium", default_value = "equilibrium",
          value_parser = ["equilibrium"], conflicts_with = "at_time",
          help = "Linearize about the static equilibrium (the default)")]
    at: String,

    #[arg(
        long,
        value_name = "T",
        allow_negative_numbers = true,
        help = "Linearize about the state of a simulation at time T [s] instead; also compare \
                  the linear model about the equilibrium with the nonlinear run from T to the end \
                  of the model's run (Agúndez et al., Nonlinear Dynamics (2023), eqs. 92-94: the linear run starts from the nonlinear \
                  deviation at T) and write linear_vs_nonlinear.csv and overlay plots, of the \
                  outputs of --outputs (default: every coordinate and pressure)"
    )]
    at_time: Option<f64>,

    #[arg(
        long,
        value_name = "A,B,...",
        value_delimiter = ',',
        help = "Inputs: valve references (`DCV.u_ref` or the signal name), generalized forces \
                  (`phi2.force`) and signals driving external loads (`M2`) [default: all]"
    )]
    inputs: Vec<String>,

    #[arg(
        long,
        value_name = "A,B,...",
        value_delimiter = ',',
        help = "Outputs: coordinates (`phi2`), rates (`phi2.rate`), pressures (`V1.p`), spools \
                  (`DCV.spool`), cylinder lengths and forces (`cylinder.length`, \
                  `cylinder.force`), friction states (`cylinder.bristle_m`), internal states \
                  of elements (`relief.poppet`) [default: all]"
    )]
    outputs: Vec<String>,

    #[arg(
        long,
        value_enum,
        default_value = "exact",
        help = "Linearization method"
    )]
    method: Method,

    #[arg(
        long,
        value_name = "H",
        default_value_t = 1e-5,
        help = "Finite-difference step (method finite-difference)"
    )]
    step: f64,

    #[arg(
        long,
        value_enum,
        default_value = "absolute",
        help = "Finite-difference step scaling (method finite-difference)"
    )]
    step_kind: FdStep,

    #[arg(
        long,
        value_name = "A,B,...",
        value_delimiter = ',',
        help = "Coordinates held at q0 by the equilibrium and kept independent [default: the \
                  first coordinates of the tree that are independent]"
    )]
    hold: Vec<String>,

    #[arg(
        long,
        value_enum,
        default_value = "average",
        help = "Valve-flow derivative at a closed spool, where the flow law has a kink: which side to take"
    )]
    spool_side: Side,

    #[arg(
        long,
        value_name = "DELTA[,T_ON,T_OFF,T_END]",
        value_delimiter = ',',
        allow_negative_numbers = true,
        help = "Also simulate a pulse of DELTA on the first valve reference over [T_ON, T_OFF) \
                  (default 0.05 s, 0.15 s; run to T_END, default 0.4 s) with the nonlinear and the \
                  linear model, and write linear_vs_nonlinear.csv and overlay plots of the \
                  outputs of --outputs (default: every coordinate and pressure) (Agúndez et al., \
                  Nonlinear Dynamics (2023), §4.4; exact method about the equilibrium only)"
    )]
    pulse: Vec<f64>,

    #[arg(
        long,
        short,
        value_name = "DIR",
        help = "Output directory [default: out/<model name>/linearize/]"
    )]
    out: Option<PathBuf>,
}

/// Runs `hydraulink linearize`.
pub(crate) fn linearize_command(args: &LinearizeArgs) -> Result<(), Failure> {
    let (text, file) = read_model(Some(&args.model))?;
    let model = hydraulink_io::compile_model(&text, &file)
        .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let bad =
        |e: hydraulink::linearize::LinearizeError| Failure::invalid_input(format!("{file}: {e}"));
    let mut held = Vec::new();
    for name in &args.hold {
        let k = model
            .axes
            .iter()
            .position(|a| &a.name == name)
            .ok_or_else(|| {
                Failure::invalid_input(format!("--hold: unknown coordinate '{name}'"))
            })?;
        held.push(k);
    }
    let inputs = if args.inputs.is_empty() {
        all_inputs(&model)
    } else {
        args.inputs
            .iter()
            .map(|s| parse_input(&model, s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Failure::invalid_input(format!("--inputs: {e}")))?
    };
    let outputs = if args.outputs.is_empty() {
        all_outputs(&model)
    } else {
        args.outputs
            .iter()
            .map(|s| parse_output(&model, s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Failure::invalid_input(format!("--outputs: {e}")))?
    };
    // `--outputs` as given, for the linear-against-nonlinear tables too (their default:
    // coordinates and pressures)
    let chosen_outputs = (!args.outputs.is_empty()).then(|| outputs.clone());
    // the operating point: its name in linear_model.json ("equilibrium", "t = 3 s") and in
    // the header ("static equilibrium", "state of the run at t = 3 s")
    let (point, independent, (at, about)) = match args.at_time {
        None => {
            let eq = equilibrium(
                &model,
                &EquilibriumOptions {
                    held: if held.is_empty() {
                        None
                    } else {
                        Some(held.clone())
                    },
                    time_s: 0.0,
                },
            )
            .map_err(bad)?;
            (
                eq.point,
                eq.held,
                ("equilibrium".to_string(), "static equilibrium".to_string()),
            )
        }
        Some(t) => {
            if !(t.is_finite() && t >= 0.0) {
                return Err(Failure::invalid_input(
                    "--at-time must be a finite time >= 0",
                ));
            }
            let mut sim = Simulation::new(model.clone()).map_err(|e| {
                Failure::invalid_input(format!("{file}: initialization failed: {e}"))
            })?;
            while sim.time_s() < t - 1e-9 * model.step_s() {
                sim.step()
                    .map_err(|e| Failure::run_failed(format!("simulating to t = {t} s: {e}")))?;
            }
            let at = format!("t = {} s", sim.time_s());
            (
                OperatingPoint::from_state(sim.state()),
                held.clone(),
                (at.clone(), format!("state of the run at {at}")),
            )
        }
    };
    // state scales for the right-hand-side check: 1e-3 rad (m) and rad/s, 1e3 Pa, 1e-3 spool,
    // 1e-8 m bristle deflection (a σ0 of 1e6–1e10 N/m), 1e-3 film
    let scale_of = |name: &str| -> f64 {
        if name.ends_with(".p") {
            1e3
        } else if name.ends_with(".bristle_m") {
            1e-8
        } else {
            1e-3
        }
    };
    let independent_for_pulse = independent.clone();
    let (ss, method, check) = match args.method {
        Method::Exact => {
            let lin = linearize(
                &model,
                &point,
                &ExactOptions {
                    independent,
                    inputs,
                    outputs,
                    spool_side: spool_side(args.spool_side),
                },
            )
            .map_err(bad)?;
            let mut dirs = Vec::new();
            let mut derivs = Vec::new();
            for (j, name) in lin.ss.states.iter().enumerate() {
                let mut x = vec![0.0; lin.ss.states.len()];
                x[j] = scale_of(name);
                let d = hydraulink::linearize::exact::rhs_directional_derivative(
                    &model, &point, &lin, &x, 1e-3,
                )
                .map_err(bad)?;
                dirs.push(x);
                derivs.push(d);
            }
            let check = json!({"eps": 1e-3, "directions": dirs, "rhs_derivative": derivs,
                "note": "central differences of the nonlinear index-1 right-hand side along each \
                         direction x, with the dependent coordinates and rates made consistent; \
                         must equal A x"});
            (lin.ss, "exact (Agúndez et al. 2023, §3)".to_string(), check)
        }
        Method::FiniteDifference => {
            if !(args.step.is_finite() && args.step > 0.0) {
                return Err(Failure::invalid_input("--step must be a finite number > 0"));
            }
            let kind = match args.step_kind {
                FdStep::Absolute => StepKind::Absolute,
                FdStep::Relative => StepKind::Relative,
            };
            let ss =
                finite_difference::linearize(&model, &point, args.step, kind, &inputs, &outputs)
                    .map_err(bad)?;
            // the valves' references, then the pumps' held shaft speeds
            let u_ref = hydraulink::linearize::rhs_inputs(&model, &point);
            let mut x0 = point.z.clone();
            x0.extend_from_slice(&point.zd);
            x0.extend_from_slice(&point.p);
            x0.extend_from_slice(&point.spool[..model.valves_4_3().count()]);
            x0.extend_from_slice(&point.friction);
            x0.extend_from_slice(&point.internal);
            let mut ev = hydraulink::mechanics::assembly::Evaluator::<f64>::new(&model);
            hydraulink::linearize::set_element_time(&model, &mut ev, point.t_s);
            let zero = vec![0.0; model.n_coords()];
            let (mut dirs, mut derivs) = (Vec::new(), Vec::new());
            let eps = 1e-3;
            for (j, name) in ss.states.iter().enumerate() {
                let mut x = vec![0.0; ss.states.len()];
                x[j] = scale_of(name);
                let shift = |sgn: f64| -> Vec<f64> {
                    x0.iter()
                        .zip(x.iter())
                        .map(|(a, b)| a + sgn * eps * b)
                        .collect()
                };
                let fp = rhs(&model, &mut ev, &shift(1.0), &u_ref, &zero);
                let fm = rhs(&model, &mut ev, &shift(-1.0), &u_ref, &zero);
                derivs.push(
                    fp.iter()
                        .zip(fm.iter())
                        .map(|(a, b)| (a - b) / (2.0 * eps))
                        .collect::<Vec<f64>>(),
                );
                dirs.push(x);
            }
            let check = json!({"eps": eps, "directions": dirs, "rhs_derivative": derivs,
                "note": "central differences of the nonlinear index-1 right-hand side along each \
                         direction x (all coordinates); equals A x up to the step error of A"});
            (
                ss,
                format!(
                    "finite-difference (Agúndez et al. 2023, §4.5), h = {:e} ({:?})",
                    args.step, kind
                ),
                check,
            )
        }
    };
    let m = modes(&ss, &EigenOptions::default()).map_err(|e| Failure::run_failed(e.to_string()))?;
    let names = full_names(&model);
    println!(
        "{}: linear model about the {about}, method {method}",
        model.name()
    );
    println!(
        "{} states, {} inputs, {} outputs",
        ss.states.len(),
        ss.inputs.len(),
        ss.outputs.len()
    );
    print!("{}", table(&m, &names));
    if args.method == Method::FiniteDifference {
        // the finite-difference eigenvalues carry the step error of A: hold them against the
        // exact method's at the same point, and say which to trust
        match linearize(
            &model,
            &point,
            &ExactOptions {
                independent: independent_for_pulse.clone(),
                spool_side: spool_side(args.spool_side),
                ..ExactOptions::default()
            },
        )
        .map_err(|e| e.to_string())
        .and_then(|lin| modes(&lin.ss, &EigenOptions::default()).map_err(|e| e.to_string()))
        {
            Ok(exact) => {
                for line in eigenvalue_disagreements(&m, &exact) {
                    eprintln!("warning: {line}");
                }
            }
            Err(e) => eprintln!("note: no cross-check against the exact method ({e})"),
        }
    }
    let nz = m.iter().filter(|x| x.kind == ModeKind::Zero).count();
    let ns = m
        .iter()
        .filter(|x| x.kind == ModeKind::SpuriousZero)
        .count();
    println!(
        "zero eigenvalues: {nz} physical, {ns} spurious (formulation adds {})",
        ss.n_spurious_zero
    );
    // what the model's fixed step does to the lightly damped modes (issue 25)
    let light = crate::modes::light_modes(&model, &m);
    print!("{}", crate::modes::table(&model, &light));
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| default_out_dir(model.name()).join("linearize"));
    let op = json!({
        "at": at,
        "t_s": point.t_s,
        "coordinates": model.axes.iter().map(|a| a.name.clone()).collect::<Vec<_>>(),
        "z": point.z, "zd": point.zd, "zdd": point.zdd,
        "volumes": model.volume_names, "p_pa": point.p,
        "spool": point.spool, "lambda": point.lambda,
        "friction_states": hydraulink::linearize::friction_state_names(&model),
        "friction": point.friction,
        "internal_states": hydraulink::linearize::internal_state_names(&model),
        "internal": point.internal,
    });
    hydraulink_io::output::linear::write_linear_model(
        &dir,
        &ss,
        &m,
        &names,
        json!({"model": model.name(), "method": method, "operating_point": op,
               "rhs_check": check,
               "lightly_damped_modes": crate::modes::json(&model, &light)}),
        &format!("{}: poles ({method})", model.name()),
    )?;
    println!(
        "wrote {}/linear_model.json, A.csv, B.csv, C.csv, D.csv, poles.svg",
        dir.display()
    );
    if !args.pulse.is_empty() {
        pulse_comparison(
            args,
            &model,
            &point,
            &independent_for_pulse,
            chosen_outputs.as_deref(),
            &dir,
        )?;
    }
    if let Some(t) = args.at_time {
        after_time_comparison(args, &model, t, &held, chosen_outputs.as_deref(), &dir)?;
    }
    Ok(())
}

/// `--at-time T`: linear against nonlinear response after T (001 eqs. 92–94). The linear model
/// is the one about the static equilibrium, as in 001 §4.4 (eq. 93 uses the J of eq. 88 at x⁰,
/// the model whose eigenvalues Table 3 lists; eq. 94 starts it from x(t2) − x⁰): it is the model
/// whose validity the comparison tests. The nonlinear run starts at the equilibrium and follows
/// the model's inputs. A model without a static equilibrium gets no comparison (a note). The
/// outputs are `outputs` (`--outputs`), or every coordinate and pressure.
fn after_time_comparison(
    args: &LinearizeArgs,
    model: &hydraulink::Model,
    t: f64,
    held: &[usize],
    outputs: Option<&[hydraulink::linearize::OutputSel]>,
    dir: &std::path::Path,
) -> Result<(), Failure> {
    use hydraulink::linearize::{element_signals, InputSel};
    let t_end = model.duration_s();
    if t_end <= t + 0.5 * model.step_s() {
        eprintln!("note: no linear vs nonlinear comparison: T = {t} s is at the end of the run");
        return Ok(());
    }
    let eq = match equilibrium(
        model,
        &EquilibriumOptions {
            held: if held.is_empty() {
                None
            } else {
                Some(held.to_vec())
            },
            time_s: 0.0,
        },
    ) {
        Ok(eq) => eq,
        Err(e) => {
            eprintln!("note: no linear vs nonlinear comparison after T: {e}");
            return Ok(());
        }
    };
    let mut inputs: Vec<InputSel> = (0..model.valves_4_3().count())
        .map(InputSel::ValveReference)
        .collect();
    inputs.extend(
        element_signals(model)
            .into_iter()
            .map(InputSel::ElementSignal),
    );
    // the pumps' shaft speeds: held inputs that follow their signals after T
    inputs.extend((0..hydraulink::linearize::pumps(model).len()).map(InputSel::PumpSpeed));
    let outputs = outputs.map_or_else(|| coordinates_and_pressures(model), <[_]>::to_vec);
    let lin = linearize(
        model,
        &eq.point,
        &ExactOptions {
            independent: eq.held.clone(),
            inputs: inputs.clone(),
            outputs: outputs.clone(),
            spool_side: spool_side(args.spool_side),
        },
    )
    .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let c = hydraulink::linearize::response::after_time(
        model, &eq.point, &lin.ss, &inputs, &outputs, t, t_end,
    )
    .map_err(|e| Failure::run_failed(e.to_string()))?;
    write_comparison(
        &c,
        &axes(model, &outputs),
        dir,
        &format!(
            "linear (about the equilibrium) vs nonlinear after t = {} s:",
            c.times[c.start]
        ),
        &format!("after t = {} s", c.times[c.start]),
    )
}

fn spool_side(s: Side) -> SpoolSide {
    match s {
        Side::Average => SpoolSide::Average,
        Side::Positive => SpoolSide::Positive,
        Side::Negative => SpoolSide::Negative,
    }
}

/// Every coordinate, then every pressure: the outputs of the linear-against-nonlinear tables
/// without `--outputs`.
fn coordinates_and_pressures(model: &hydraulink::Model) -> Vec<hydraulink::linearize::OutputSel> {
    use hydraulink::linearize::OutputSel;
    let mut outputs: Vec<OutputSel> = (0..model.n_coords()).map(OutputSel::Coordinate).collect();
    outputs.extend((0..model.n_volumes()).map(OutputSel::Pressure));
    outputs
}

/// The y axis of each output's overlay plot: its label and the factor from SI to the unit in
/// the label (pressures in kPa, forces in kN).
fn axes(
    model: &hydraulink::Model,
    outputs: &[hydraulink::linearize::OutputSel],
) -> Vec<(String, f64)> {
    use hydraulink::linearize::OutputSel;
    let l = &model.layout;
    outputs
        .iter()
        .map(|o| {
            let (unit, scale) = match *o {
                OutputSel::Coordinate(k) => (l.units[l.z.start + k].to_string(), 1.0),
                OutputSel::Rate(k) => (format!("{}/s", l.units[l.z.start + k]), 1.0),
                OutputSel::Pressure(_) => ("kPa".to_string(), 1e-3),
                OutputSel::Spool(_) => ("unit of the valve input".to_string(), 1.0),
                OutputSel::CylinderLength(_) => ("m".to_string(), 1.0),
                OutputSel::CylinderForce(_) => ("kN".to_string(), 1e-3),
                OutputSel::FrictionState(k) => (l.units[l.w.start + k].to_string(), 1.0),
                OutputSel::InternalState(k) => (l.units[l.internal.start + k].to_string(), 1.0),
            };
            (format!("deviation [{unit}]"), scale)
        })
        .collect()
}

/// `--pulse`: linear against nonlinear response to a valve pulse (001 §4.4), of `outputs`
/// (`--outputs`) or of every coordinate and pressure.
fn pulse_comparison(
    args: &LinearizeArgs,
    model: &hydraulink::Model,
    point: &OperatingPoint,
    independent: &[usize],
    outputs: Option<&[hydraulink::linearize::OutputSel]>,
    dir: &std::path::Path,
) -> Result<(), Failure> {
    use hydraulink::linearize::InputSel;
    if args.method != Method::Exact || args.at_time.is_some() {
        return Err(Failure::invalid_input(
            "--pulse needs --method exact about the equilibrium",
        ));
    }
    if model.valves_4_3().next().is_none() {
        return Err(Failure::invalid_input(
            "--pulse: the model has no 4/3 valve",
        ));
    }
    let p = &args.pulse;
    let (delta, t_on, t_off, t_end) = (
        p[0],
        p.get(1).copied().unwrap_or(0.05),
        p.get(2).copied().unwrap_or(0.15),
        p.get(3).copied().unwrap_or(0.4),
    );
    if !(t_on >= 0.0 && t_off > t_on && t_end > t_off) {
        return Err(Failure::invalid_input(
            "--pulse: need 0 <= T_ON < T_OFF < T_END",
        ));
    }
    let outputs = outputs.map_or_else(|| coordinates_and_pressures(model), <[_]>::to_vec);
    let lin = linearize(
        model,
        point,
        &ExactOptions {
            independent: independent.to_vec(),
            inputs: vec![InputSel::ValveReference(0)],
            outputs: outputs.clone(),
            spool_side: if delta >= 0.0 {
                SpoolSide::Positive
            } else {
                SpoolSide::Negative
            },
        },
    )
    .map_err(|e| Failure::invalid_input(e.to_string()))?;
    let c = hydraulink::linearize::response::valve_pulse(
        model, point, &lin.ss, &outputs, 0, delta, t_on, t_off, t_end,
    )
    .map_err(|e| Failure::run_failed(e.to_string()))?;
    write_comparison(
        &c,
        &axes(model, &outputs),
        dir,
        &format!("linear vs nonlinear, valve pulse {delta} on [{t_on}, {t_off}) s:"),
        &format!("valve pulse {delta}"),
    )
}

/// The comparison table on stdout, `linear_vs_nonlinear.csv` (every sample; the linear columns
/// are NaN before the linear run starts) and one overlay plot per output from the linear run's
/// start (`--pulse`, `--at-time`), its y axis from `axes` (label, factor from SI).
fn write_comparison(
    c: &hydraulink::linearize::response::Comparison,
    axes: &[(String, f64)],
    dir: &std::path::Path,
    heading: &str,
    what: &str,
) -> Result<(), Failure> {
    use hydraulink_io::output::{write_overlay, OverlayLine, OverlayPanel};
    println!("{heading}");
    println!(
        "{:>14}  {:>14}  {:>14}  {:>10}",
        "output", "max |y_NL-y0|", "max |y_L-y_NL|", "relative"
    );
    for (j, o) in c.outputs.iter().enumerate() {
        // an output that does not move has no relative error
        let relative = if c.max_deviation[j] > 0.0 {
            format!("{:.3e}", c.max_error[j] / c.max_deviation[j])
        } else {
            UNDEFINED.to_string()
        };
        println!(
            "{:>14}  {:>14.6e}  {:>14.6e}  {:>10}",
            o, c.max_deviation[j], c.max_error[j], relative
        );
    }
    let mut csv = String::from("time");
    for o in &c.outputs {
        csv.push_str(&format!(",{o}.nonlinear,{o}.linear"));
    }
    csv.push('\n');
    for (k, t) in c.times.iter().enumerate() {
        csv.push_str(&format!("{t:?}"));
        for j in 0..c.outputs.len() {
            csv.push_str(&format!(",{:?},{:?}", c.nonlinear[k][j], c.linear[k][j]));
        }
        csv.push('\n');
    }
    let path = dir.join("linear_vs_nonlinear.csv");
    std::fs::write(&path, csv)
        .map_err(|e| Failure::run_failed(format!("cannot write '{}': {e}", path.display())))?;
    for (j, (o, (y_label, scale))) in c.outputs.iter().zip(axes).enumerate() {
        let line = |name: &str, v: &Vec<Vec<f64>>| OverlayLine {
            name: name.to_string(),
            points: c
                .times
                .iter()
                .zip(v.iter())
                .skip(c.start)
                .map(|(t, y)| (*t, y[j] * *scale))
                .collect(),
        };
        write_overlay(
            &dir.join(format!("linear_vs_nonlinear_{o}.svg")),
            &format!("{o}: linear (L) vs nonlinear (NL), {what}"),
            &[OverlayPanel {
                y_label: y_label.clone(),
                lines: vec![line("NL", &c.nonlinear), line("L", &c.linear)],
            }],
        )?;
    }
    println!(
        "wrote {}/linear_vs_nonlinear.csv and linear_vs_nonlinear_*.svg",
        dir.display()
    );
    Ok(())
}

/// Relative tolerance of the cross-check of finite-difference against exact eigenvalues: the
/// central-difference step error of A (h = 1e-5 on unknowns of order 1 … 1e7) leaves the
/// physical eigenvalues within about 1e-4 relative on the shipped models; 1e-3 keeps clear of it.
const EIGENVALUE_RTOL: f64 = 1e-3;

/// The finite-difference eigenvalues with no exact eigenvalue within
/// [`EIGENVALUE_RTOL`]·max(|λ|, the exact zero tolerance) (spurious zeros of the finite-difference
/// method excepted: they come from its redundant coordinates), one line each, saying which
/// method to trust.
pub(crate) fn eigenvalue_disagreements(
    fd: &[hydraulink::linearize::eigen::Mode],
    exact: &[hydraulink::linearize::eigen::Mode],
) -> Vec<String> {
    let max_abs = exact.iter().map(|x| x.value.norm()).fold(0.0, f64::max);
    // the exact method's zero tolerance (EigenOptions::default, |λ| ≤ 1e-7 max |λ|) as the floor
    let floor = 1e-7 * max_abs;
    let mut out = Vec::new();
    for x in fd {
        if x.kind == ModeKind::SpuriousZero {
            continue;
        }
        let (nearest, d) = exact
            .iter()
            .map(|e| (e.value, (e.value - x.value).norm()))
            .fold(
                (x.value, f64::INFINITY),
                |a, b| if b.1 < a.1 { b } else { a },
            );
        let tol = EIGENVALUE_RTOL * x.value.norm().max(floor);
        if d > tol.max(floor) {
            let unstable = if x.value.re > 0.0 && nearest.re <= 0.0 {
                " (an unstable mode the exact method does not have)"
            } else {
                ""
            };
            out.push(format!(
                "finite-difference eigenvalue {:.6e}{:+.6e}i differs from the nearest exact one \
                 {:.6e}{:+.6e}i by {d:.3e} (tolerance {:.1e} relative){unstable}; the exact method \
                 is the one to trust, the difference is the step error of the finite differences",
                x.value.re, x.value.im, nearest.re, nearest.im, EIGENVALUE_RTOL
            ));
        }
    }
    out
}

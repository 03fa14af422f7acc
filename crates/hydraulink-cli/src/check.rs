//! `hydraulink check MODEL`: validates the model, assembles it, solves the statics and prints
//! the initial state, without running. What an engineer reads before a first run: the pose,
//! every pressure and where it comes from, the cylinder forces and how far out each piston is;
//! and the lightly damped modes with the phase error of the fixed step (`crate::modes`).

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use hydraulink::model::AxisKind;
use hydraulink::Simulation;

use crate::{init_failure, load_compiled, Failure};

/// The options of `hydraulink check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    #[arg(
        value_name = "MODEL",
        help = "Model file (TOML); default: the built-in four-bar"
    )]
    model: Option<PathBuf>,

    #[arg(
        long = "set",
        value_name = "PATH=VALUE",
        help = "Override a model parameter (repeatable), e.g. V3.p0_pa=3e6"
    )]
    set: Vec<String>,
}

/// `hydraulink check`: prints the report of [`report`]; exit code 2 for a model that is invalid
/// or cannot start (with the file, line, element and field), 0 otherwise.
pub(crate) fn check_command(args: &CheckArgs) -> Result<(), Failure> {
    let (model, text, file) = load_compiled(
        args.model.as_ref(),
        &args.set,
        &hydraulink_io::SceneChoice::None,
    )?;
    let sim = Simulation::new(model).map_err(|e| init_failure(&e, &text, &file))?;
    print!("{}", report(&sim, &file));
    // the lightly damped modes about the static equilibrium and the phase error of the fixed
    // step (issue 25); one line when the model cannot be linearized
    let (modes, mode_warnings) = crate::modes::check_section(sim.model());
    print!("\n{modes}");
    for w in warnings(sim.model()).into_iter().chain(mode_warnings) {
        eprintln!("warning: {w}");
    }
    Ok(())
}

/// The design warnings of `check` (issue 24): every cylinder that passes a dead centre inside
/// its stroke (`working_range::dead_centres`), and every cylinder chamber or motor port without
/// a relief (`working_range::overload_protection`).
pub(crate) fn warnings(model: &hydraulink::Model) -> Vec<String> {
    use hydraulink::mechanics::working_range::{dead_centres, overload_protection, DeadCentreKind};
    let mut out = Vec::new();
    match dead_centres(model) {
        Ok(found) => {
            for d in found {
                let cyl = model.cylinder(d.cylinder.0);
                let (lo, hi) = (
                    cyl.retracted_length_m,
                    cyl.retracted_length_m + cyl.stroke_m,
                );
                let joint = match (d.joint_axis, d.joint_value) {
                    (Some(k), Some(v)) => {
                        let axis = &model.axes[k];
                        let name = &model.joints[axis.joint].name;
                        match axis.kind {
                            AxisKind::Revolute => {
                                format!("; joint '{name}' at {:.1}°", v.to_degrees())
                            }
                            AxisKind::Prismatic => format!("; joint '{name}' at {v:.4} m"),
                        }
                    }
                    _ => String::new(),
                };
                let what = match d.kind {
                    DeadCentreKind::LeverArmZero { tops_out } => format!(
                        "passes a dead centre at {:.3} m of its {lo:.3}–{hi:.3} m stroke (lever \
                         arm zero: it {} there, and past it the linkage folds over{joint})",
                        d.length_m,
                        if tops_out { "tops out" } else { "bottoms out" }
                    ),
                    DeadCentreKind::OutputReverses => format!(
                        "passes a dead centre at {:.3} m of its {lo:.3}–{hi:.3} m stroke (the \
                         driven joint reverses while the cylinder runs on{joint})",
                        d.length_m
                    ),
                    DeadCentreKind::Locks => format!(
                        "cannot move past {:.3} m of its {lo:.3}–{hi:.3} m stroke: the loop \
                         cannot close (the linkage locks){joint}",
                        d.length_m
                    ),
                };
                out.push(format!("cylinder '{}' {what}", cyl.name));
            }
        }
        Err(e) => out.push(format!("the dead-centre check could not run: {e}")),
    }
    let (unprotected, highest) = overload_protection(model);
    for u in unprotected {
        let name = &model.hydraulics.volumes[u.volume.0].name;
        out.push(match highest {
            Some(p) => format!(
                "chamber '{name}' ({}) has no relief: an external load can raise it above the \
                 highest relief setting ({:.1} MPa)",
                u.holds,
                p / 1e6
            ),
            None => format!(
                "chamber '{name}' ({}) has no relief, and the model has none: an external load \
                 can raise it without limit",
                u.holds
            ),
        });
    }
    out
}

/// Where the pressure of volume `v` comes from when hydraulic motors hold their joints with it:
/// every motor with a node port on `v`, in model order. Several motors on one volume share its
/// pressure: the statics solve their holding torques and the volumes' zero net flow together,
/// so the line names them all. `None` when no motor is connected to `v`.
fn holding_motors(model: &hydraulink::Model, v: usize) -> Option<String> {
    let here = hydraulink::model::Node::Volume(hydraulink::model::VolumeId(v));
    let names: Vec<String> = model
        .elements()
        .iter()
        .filter_map(|e| {
            // an element that turns its joint with the pressures of its nodes: a motor
            let ports = e.ports();
            let holds = matches!(
                ports.mech,
                hydraulink::elements::element::MechPort::Joint(_)
            ) && ports.nodes.contains(&Some(here));
            holds.then(|| format!("'{}'", e.name()))
        })
        .collect();
    match names.as_slice() {
        [] => None,
        [one] => Some(format!(
            "solved: the holding torque of motor {one} (Δp = 2π τ/(i D) at rest) and zero net flow"
        )),
        _ => Some(format!(
            "solved: the holding torques of motors {} together (Δp = 2π τ/(i D) of each at \
             rest) and zero net flow",
            names.join(", ")
        )),
    }
}

/// The initial-state report of a simulation that has just been initialized.
pub(crate) fn report(sim: &Simulation, file: &str) -> String {
    let model = sim.model();
    let st = sim.state();
    let labels = sim.output_labels();
    let mut row = vec![0.0; labels.len()];
    sim.output_row(&mut row);
    let column = |name: &str| labels.iter().position(|l| l == name).map(|i| row[i]);
    let mut out = String::new();
    let n = model.n_coords();
    let m = model.n_constraints();
    let _ = writeln!(
        out,
        "model '{}' ({file}): valid, assembled, {}",
        model.name(),
        // the pressures are solved for the statics; the mechanism is at rest only when nothing
        // accelerates it (a pendulum released off its hanging pose is not)
        if sim.state().zdd.iter().all(|x| x.abs() <= 1e-9) {
            "in static equilibrium"
        } else {
            "initial state solved (not at rest: see the initial acceleration below)"
        }
    );
    let _ = writeln!(
        out,
        "mechanism: {}, {}, {}",
        counted(model.bodies.len(), "body", "bodies"),
        counted(n, "joint coordinate", "joint coordinates"),
        counted(m, "loop-closure equation", "loop-closure equations")
    );

    let _ = writeln!(out, "\ninitial pose (loops closed from q0):");
    for (i, axis) in model.axes.iter().enumerate() {
        let moved = st.z[i] - axis.q0;
        let moved = if moved.abs() > 1e-12 {
            format!("  (moved {moved:+.3e} from q0 to close the loops)")
        } else {
            String::new()
        };
        match axis.kind {
            AxisKind::Revolute => {
                let _ = writeln!(
                    out,
                    "  {:<12} {:>14.6} rad  = {:>10.4} deg{moved}",
                    axis.name,
                    st.z[i],
                    st.z[i].to_degrees()
                );
            }
            AxisKind::Prismatic => {
                let _ = writeln!(out, "  {:<12} {:>14.6} m{moved}", axis.name, st.z[i]);
            }
        }
    }
    let zdd = st.zdd.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    let _ = writeln!(
        out,
        "  largest initial acceleration |z̈| = {zdd:.3e} (0 in static equilibrium; not 0 when \
         the valves are open or a load acts at t = 0)"
    );

    let h = &model.hydraulics;
    if !h.volumes.is_empty() || !h.sources.is_empty() {
        let _ = writeln!(out, "\npressures at t = 0 (absolute):");
        for (v, vol) in h.volumes.iter().enumerate() {
            let why = if vol.algebraic {
                "solved: its flow balance (algebraic volume)".to_string()
            } else if let Some(_p0) = vol.p0_pa {
                "given: p0_pa".to_string()
            } else if let Some((c, _)) = vol.chambers.first() {
                format!(
                    "solved: the static force of cylinder '{}' and zero net flow",
                    model.cylinder(c.0).name
                )
            } else if let Some(motors) = holding_motors(model, v) {
                motors
            } else {
                "solved: zero net flow into it at rest".to_string()
            };
            let _ = writeln!(out, "  {:<12} {:>10.4} MPa  {why}", vol.name, st.p[v] / 1e6);
        }
        for s in &h.sources {
            let _ = writeln!(
                out,
                "  {:<12} {:>10.4} MPa  constant (pump or tank)",
                s.name,
                s.pressure_pa / 1e6
            );
        }
    }

    if model.n_cylinders() > 0 {
        let _ = writeln!(out, "\ncylinders at t = 0:");
        for cyl in model.cylinders() {
            let s = column(&format!("{}.length", cyl.name)).unwrap_or(f64::NAN);
            let f = column(&format!("{}.force", cyl.name)).unwrap_or(f64::NAN);
            let out_m = s - cyl.retracted_length_m;
            let _ = writeln!(
                out,
                "  {:<12} length {:.6} m, {:.4} m of {:.4} m stroke out ({:.1} %), force {:.6e} N \
                 ({})",
                cyl.name,
                s,
                out_m,
                cyl.stroke_m,
                100.0 * out_m / cyl.stroke_m,
                f,
                if f >= 0.0 { "pushing" } else { "pulling" }
            );
        }
    }
    if !model.elements().is_empty() {
        let _ = writeln!(out, "\nelements:");
        for e in model.elements() {
            let _ = writeln!(out, "  {}", hydraulink::elements::element::Element::name(e));
        }
    }
    let _ = writeln!(
        out,
        "\nsolver: {:?}, step {} s, duration {} s",
        model.solver.formulation,
        model.step_s(),
        model.duration_s()
    );
    out
}

/// `n` with the singular or plural noun ("1 body", "2 bodies").
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

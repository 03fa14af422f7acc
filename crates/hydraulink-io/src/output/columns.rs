//! `results.columns.json`: the name, SI unit and meaning of every column of `results.csv`,
//! machine-readable beside it.
//!
//! The library names the columns (`Simulation::output_labels`); the units come from the model
//! where it has them (the layout's units of the coordinates and friction states, each element's
//! `describe`), and from the meaning of the fixed columns (`energy.*` in J) otherwise.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use hydraulink::elements::element::{Element as _, Variable};
use hydraulink::Model;
use serde::{Deserialize, Serialize};

use super::OutputError;

/// File name of the column table inside the output directory.
pub const COLUMNS_FILE: &str = "results.columns.json";

/// The unit of a quantity measured in the unit of an input signal (a 4/3 valve's spool U).
pub const INPUT_UNIT: &str = "unit of input";

/// One column of `results.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    /// Column label, as in the CSV header (`V1.p`).
    pub name: String,
    /// SI unit (`Pa`, `rad`, `m^3/s`, `-` for a pure number, empty when unknown).
    pub unit: String,
    /// What the column holds.
    pub description: String,
}

impl ColumnInfo {
    /// A column with its unit and description.
    pub fn new(name: impl Into<String>, unit: &str, description: impl Into<String>) -> Self {
        ColumnInfo {
            name: name.into(),
            unit: unit.to_string(),
            description: description.into(),
        }
    }

    /// A column of which only the name is known (unit and description empty).
    pub fn unnamed(name: impl Into<String>) -> Self {
        ColumnInfo::new(name, "", "")
    }
}

/// The unit and meaning of every label in `labels` (the output labels of a simulation of
/// `model`, `time` first). A label the model does not explain gets an empty unit and
/// description.
pub fn describe_columns(model: &Model, labels: &[String]) -> Vec<ColumnInfo> {
    let known = known_columns(model);
    labels
        .iter()
        .map(|label| match known.get(label.as_str()) {
            Some((unit, description)) => ColumnInfo::new(label.clone(), unit, description.clone()),
            None => ColumnInfo::unnamed(label.clone()),
        })
        .collect()
}

/// Writes the columns as a pretty-printed JSON array to `path`.
pub fn write_columns(path: &Path, columns: &[ColumnInfo]) -> Result<(), OutputError> {
    let io = |e| OutputError::io(path, e);
    let mut out = BufWriter::new(File::create(path).map_err(io)?);
    serde_json::to_writer_pretty(&mut out, columns).map_err(|e| io(e.into()))?;
    out.write_all(b"\n").map_err(io)?;
    out.flush().map_err(io)
}

/// Every column the model can produce: label → (unit, description).
fn known_columns(model: &Model) -> HashMap<String, (String, String)> {
    let l = &model.layout;
    let mut known: HashMap<String, (String, String)> = HashMap::new();
    let mut put = |label: String, unit: &str, description: String| {
        known.insert(label, (unit.to_string(), description));
    };
    put("time".into(), "s", "simulated time t".into());
    for (z, unit) in l.names[l.z.clone()].iter().zip(&l.units[l.z.clone()]) {
        let kind = if *unit == "rad" { "angle" } else { "position" };
        put(
            format!("{z}.q"),
            unit,
            format!("joint coordinate z of '{z}' ({kind})"),
        );
        put(
            format!("{z}.qd"),
            &format!("{unit}/s"),
            format!("joint rate ż of '{z}'"),
        );
    }
    for (p, unit) in l.names[l.p.clone()].iter().zip(&l.units[l.p.clone()]) {
        let volume = p.strip_suffix(".p").unwrap_or(p);
        put(
            p.clone(),
            unit,
            format!("absolute pressure of volume '{volume}'"),
        );
    }
    for name in &model.input_names {
        put(
            format!("{name}.value"),
            INPUT_UNIT,
            format!(
                "value of input '{name}' that the step ending at this row used (its signal, or \
                 a value set from outside)"
            ),
        );
    }
    for name in &l.spools {
        match name.strip_suffix(".spool") {
            // U is in the unit of the valve's input signal (V in the shipped models)
            Some(valve) => put(
                name.clone(),
                INPUT_UNIT,
                format!(
                    "spool position U of valve '{valve}', in the unit of its input signal \
                     (V in the shipped models)"
                ),
            ),
            None => {
                let valve = name.strip_suffix(".opening").unwrap_or(name);
                put(
                    name.clone(),
                    "-",
                    format!("opening κ of bridge valve '{valve}'"),
                );
            }
        }
    }
    for cyl in model.cylinders() {
        let n = &cyl.name;
        put(
            format!("{n}.length"),
            "m",
            format!("length s of cylinder '{n}'"),
        );
        put(
            format!("{n}.velocity"),
            "m/s",
            format!("extension rate ṡ of cylinder '{n}'"),
        );
        put(
            format!("{n}.force"),
            "N",
            format!("hydraulic force of cylinder '{n}' (extending positive)"),
        );
        put(
            format!("{n}.work"),
            "J",
            format!("hydraulic work done by cylinder '{n}' since t = 0"),
        );
        put(
            format!("{n}.power_w"),
            "W",
            power_description(
                n,
                "the power the oil does on the piston, (p_A A_A − p_B A_B) ṡ",
            ),
        );
    }
    for (label, unit, description) in [
        ("energy.kinetic", "J", "kinetic energy of the mechanism"),
        (
            "energy.potential",
            "J",
            "potential energy relative to t = 0",
        ),
        (
            "energy.actuator_work",
            "J",
            "work done by the cylinders since t = 0, W_act = Σ ∫ F ṡ dt (a hydraulic \
             motor's and the other mechanical elements' work is in their own \
             .energy_supplied and .energy_dissipated columns)",
        ),
        (
            "energy.drift",
            "J",
            "energy balance error KE + PE − W_act + D_μ + Σ over the mechanical elements \
             (ΔE_stored − E_supplied + E_dissipated) − (KE + PE)(0)",
        ),
        (
            "constraint.violation",
            "m or -",
            "norm of the loop-closure constraint residual ‖Φ‖",
        ),
        ("newton.iterations", "-", "Newton iterations of the step"),
        (
            "energy.friction_dissipated",
            "J",
            "work dissipated by friction since t = 0",
        ),
        (
            "partition.independent",
            "-",
            "index of the first independent coordinate (double-step partition)",
        ),
    ] {
        put(label.into(), unit, description.into());
    }
    let joint_units: HashMap<&str, &str> = l.names[l.z.clone()]
        .iter()
        .map(String::as_str)
        .zip(l.units[l.z.clone()].iter().copied())
        .collect();
    for block in &l.friction {
        let n = &block.name;
        let unit = match joint_units.get(n.as_str()) {
            Some(&"rad") => "N m",
            _ => "N",
        };
        put(
            format!("{n}.friction"),
            unit,
            format!("friction force of '{n}'"),
        );
        for o in block.states.clone() {
            let name = &l.names[l.w.start + o];
            put(
                name.clone(),
                l.units[l.w.start + o],
                format!("friction state of '{n}'"),
            );
        }
    }
    let mut vars: Vec<Variable> = Vec::new();
    for e in model.elements() {
        vars.clear();
        e.describe(&mut vars);
        for v in vars.drain(..) {
            let quantity = v.name.rsplit('.').next().unwrap_or_default().to_string();
            let description = if quantity == "power_w" {
                power_description(e.name(), e.power_meaning())
            } else {
                format!("{} of element '{}'", quantity.replace('_', " "), e.name())
            };
            put(v.name.clone(), v.unit, description);
        }
        let name = e.name();
        if e.hit_gap_s().is_some() {
            for (q, unit, meaning) in [
                ("hits", "-", "hits counted by contact"),
                (
                    "hit_force",
                    "N",
                    "largest normal force of the last hit of contact",
                ),
                (
                    "peak_force",
                    "N",
                    "largest normal force since t = 0 of contact",
                ),
            ] {
                put(format!("{name}.{q}"), unit, format!("{meaning} '{name}'"));
            }
        }
        for (account, meaning) in [
            ("energy_stored", "energy stored in"),
            ("energy_dissipated", "energy dissipated by"),
            ("energy_supplied", "energy supplied by"),
        ] {
            put(
                format!("{name}.{account}"),
                "J",
                format!("{meaning} element '{name}' since t = 0"),
            );
        }
    }
    for (name, _) in &model.output_markers {
        for c in ["x", "y", "z"] {
            put(
                format!("{name}.{c}"),
                "m",
                format!("global {c} position of marker '{name}' ([outputs] markers)"),
            );
        }
    }
    known
}

/// The description of the column `<name>.power_w`: the sign convention, then what it is for
/// this kind of element.
fn power_description(name: &str, meaning: &str) -> String {
    format!(
        "hydraulic power taken from the circuit by '{name}', −Σ p_i Q_i over its ports (Q_i the \
         flow it sends into port i): {meaning}"
    )
}

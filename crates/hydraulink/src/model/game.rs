//! The optional `[game]` table (the excavator game of 003 Publication VI, played in
//! `hydraulink serve`) and the `[variants]` table (named sets of parameter overrides, such as
//! the bucket and dipper-arm cylinder sizes of 003 Pub. VI Tables I and II).
//!
//! Both are plain data for front-ends: nothing in the library reads them, so a model's results
//! do not depend on them. The rules of the game live in `hydraulink-viewer` (`game.rs`); the
//! overrides of a variant are applied by `hydraulink-io` (`apply_variants`). Checked here: the
//! numbers and the references that need only the spec (marker names, a variant's choice among
//! its options). The output columns a game reads exist only once the model is compiled, so
//! the viewer checks those, naming the same `game.<field>` paths.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::elements::field_check::At;
use crate::error::ModelError;

/// The rules of the excavator game (`[game]`). Every field has a default: an empty `[game]`
/// table plays the game of 003 Pub. VI (2 t into the hopper, at most 3 hits, 3 attempts).
///
/// The score of an attempt that reaches the goal is
/// `max(0, base_points − points_per_s · t − points_per_l · fuel − points_per_hit · hits)`, of a
/// failed attempt 0; a player's score is the mean over the attempts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GameSpec {
    /// Mass to load into the hopper [kg] (003 Pub. VI: 2 t).
    #[serde(default = "default_goal_kg")]
    pub goal_kg: f64,
    /// The output column with the mass in the hopper [kg]; default: the first column whose
    /// name ends in `.hopper_kg`.
    #[serde(default)]
    pub hopper_column: Option<String>,
    /// The output columns counting obstacle hits [-] (summed); default (empty): every column
    /// whose name ends in `.hits`.
    #[serde(default)]
    pub hit_columns: Vec<String>,
    /// Hits allowed per attempt [-]; one more ends the attempt as failed (003 Pub. VI: 3).
    #[serde(default = "default_max_hits")]
    pub max_hits: u32,
    /// Attempts per player [-] (003 Pub. VI: 3).
    #[serde(default = "default_attempts")]
    pub attempts: u32,
    /// Time allowed for an attempt [s] (simulated time, which is wall time while the engine
    /// keeps up); reaching it ends the attempt as failed.
    #[serde(default = "default_time_limit_s")]
    pub time_limit_s: f64,
    /// The output column with the pump's shaft power [W], integrated for the fuel gauge;
    /// default: the first column whose name ends in `.shaft_power`.
    #[serde(default)]
    pub pump_power_column: Option<String>,
    /// Diesel engine efficiency from fuel to pump shaft [-] (default 0.35).
    #[serde(default = "default_engine_efficiency")]
    pub engine_efficiency: f64,
    /// Fuel energy per litre [J/L] (default 35.7 MJ/L: diesel, lower heating value 42.8 MJ/kg
    /// at 0.835 kg/L).
    #[serde(default = "default_fuel_energy_j_per_l")]
    pub fuel_energy_j_per_l: f64,
    /// Fuel in the tank at the start of an attempt [L]; running out ends the attempt as failed.
    #[serde(default = "default_fuel_capacity_l")]
    pub fuel_capacity_l: f64,
    /// The tool point whose horizontal distance from the swing axis is the arm reach, as
    /// `"body.marker"`; default: the first of `[outputs] markers`, else no reach is logged.
    #[serde(default)]
    pub reach_marker: Option<String>,
    /// A point on the swing axis [m] (global); the axis is vertical (along gravity).
    #[serde(default)]
    pub swing_axis_point: [f64; 3],
    /// Points of an attempt that reaches the goal, before the deductions [-].
    #[serde(default = "default_base_points")]
    pub base_points: f64,
    /// Points deducted per second of the attempt [1/s].
    #[serde(default = "default_points_per_s")]
    pub points_per_s: f64,
    /// Points deducted per litre of fuel [1/L].
    #[serde(default = "default_points_per_l")]
    pub points_per_l: f64,
    /// Points deducted per obstacle hit [-].
    #[serde(default = "default_points_per_hit")]
    pub points_per_hit: f64,
}

fn default_goal_kg() -> f64 {
    2000.0
}
fn default_max_hits() -> u32 {
    3
}
fn default_attempts() -> u32 {
    3
}
fn default_time_limit_s() -> f64 {
    300.0
}
fn default_engine_efficiency() -> f64 {
    0.35
}
fn default_fuel_energy_j_per_l() -> f64 {
    35.7e6
}
fn default_fuel_capacity_l() -> f64 {
    3.0
}
fn default_base_points() -> f64 {
    1000.0
}
fn default_points_per_s() -> f64 {
    2.0
}
fn default_points_per_l() -> f64 {
    100.0
}
fn default_points_per_hit() -> f64 {
    50.0
}

impl Default for GameSpec {
    fn default() -> Self {
        GameSpec {
            goal_kg: default_goal_kg(),
            hopper_column: None,
            hit_columns: Vec::new(),
            max_hits: default_max_hits(),
            attempts: default_attempts(),
            time_limit_s: default_time_limit_s(),
            pump_power_column: None,
            engine_efficiency: default_engine_efficiency(),
            fuel_energy_j_per_l: default_fuel_energy_j_per_l(),
            fuel_capacity_l: default_fuel_capacity_l(),
            reach_marker: None,
            swing_axis_point: [0.0; 3],
            base_points: default_base_points(),
            points_per_s: default_points_per_s(),
            points_per_l: default_points_per_l(),
            points_per_hit: default_points_per_hit(),
        }
    }
}

/// A named choice among sets of parameter overrides (`[variants.<name>]`): `choice` names the
/// option in force, each option is a list of `PATH=VALUE` overrides as given to `--set`.
/// Selected on the command line with `--set variants.<name>.choice=<option>`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    /// What the variant is (shown to users).
    #[serde(default)]
    pub description: String,
    /// The option in force: one of the keys of `options`.
    pub choice: String,
    /// The options: name → overrides `PATH=VALUE` (an empty list: the file as written).
    pub options: BTreeMap<String, Vec<String>>,
}

/// Checks the `[game]` table: positive finite numbers, and the reach marker on a body of the
/// model (`markers` of the bodies by name).
pub(crate) fn check_game(
    game: &GameSpec,
    body_markers: &dyn Fn(&str, &str) -> Option<bool>,
) -> Result<(), ModelError> {
    let at = At::new("game", "game");
    for (field, x) in [
        ("goal_kg", game.goal_kg),
        ("time_limit_s", game.time_limit_s),
        ("fuel_energy_j_per_l", game.fuel_energy_j_per_l),
        ("fuel_capacity_l", game.fuel_capacity_l),
    ] {
        if !(x.is_finite() && x > 0.0) {
            return Err(at.error(field, format!("must be a finite number > 0, got {x:?}")));
        }
    }
    let e = game.engine_efficiency;
    if !(e.is_finite() && e > 0.0 && e <= 1.0) {
        return Err(at.error("engine_efficiency", format!("must be in (0, 1], got {e:?}")));
    }
    for (field, x) in [
        ("base_points", game.base_points),
        ("points_per_s", game.points_per_s),
        ("points_per_l", game.points_per_l),
        ("points_per_hit", game.points_per_hit),
    ] {
        if !(x.is_finite() && x >= 0.0) {
            return Err(at.error(field, format!("must be a finite number ≥ 0, got {x:?}")));
        }
    }
    if game.attempts == 0 {
        return Err(at.error("attempts", "a game has at least 1 attempt"));
    }
    at.finite_all("swing_axis_point", &game.swing_axis_point)?;
    for (field, c) in [
        ("hopper_column", &game.hopper_column),
        ("pump_power_column", &game.pump_power_column),
    ] {
        if c.as_deref() == Some("") {
            return Err(at.error(field, "is empty; give an output column's name"));
        }
    }
    if let Some(k) = game.hit_columns.iter().position(String::is_empty) {
        return Err(at.error(
            &format!("hit_columns[{k}]"),
            "is empty; give an output column's name",
        ));
    }
    if let Some(m) = &game.reach_marker {
        let Some((body, marker)) = m.split_once('.') else {
            return Err(at.error("reach_marker", format!("'{m}' is not \"body.marker\"")));
        };
        match body_markers(body, marker) {
            None => {
                return Err(at.error(
                    "reach_marker",
                    format!("'{m}': the model has no body '{body}'"),
                ))
            }
            Some(false) => {
                return Err(at.error(
                    "reach_marker",
                    format!("'{m}': body '{body}' has no marker '{marker}'"),
                ))
            }
            Some(true) => {}
        }
    }
    Ok(())
}

/// Checks the `[variants]` table: each choice is one of its options.
pub(crate) fn check_variants(variants: &BTreeMap<String, VariantSpec>) -> Result<(), ModelError> {
    for (name, v) in variants {
        let at = At::new(&format!("variants.{name}"), &format!("variant '{name}'"));
        if v.options.is_empty() {
            return Err(at.error("options", "has no options"));
        }
        if !v.options.contains_key(&v.choice) {
            let names: Vec<&str> = v.options.keys().map(String::as_str).collect();
            return Err(at.error(
                "choice",
                format!(
                    "'{}' is not an option; one of {}",
                    v.choice,
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

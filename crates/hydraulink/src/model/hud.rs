//! The operator's heads-up display and scenario of a model file (after 003 Pub. IV, §4: gauges
//! bound to virtual sensors, scenario tasks with instructions and conditions), and the viewer's
//! input bindings: plain data for the front-ends (`hydraulink serve`), checked here, never read
//! by the step. No graphics: a gauge is a label, a value's name, a unit and limits.
//!
//! ```toml
//! [[hud.sensors]]                  # a virtual sensor on a body
//! name = "bucket_height"
//! type = "point_height"            # height of a body point along −gravity [m]
//! body = "bucket"
//! point = [3.4, -0.45, 0.0]        # reference coordinates [m]
//! ground_level_m = -2.0            # the height is measured from here (default 0)
//!
//! [[hud.sensors]]
//! name = "bucket_tilt"
//! type = "axis_angle"              # angle of a body axis to the horizontal [rad], + up
//! body = "bucket"
//! axis = [1.0, 0.0, 0.0]
//!
//! [hud.fuel]                       # fuel_kg = ∫ P_shaft dt / (η_engine H_fuel)
//! power = ["pump.shaft_power"]
//!
//! [[hud.gauges]]
//! label = "lift pressure"
//! sensor = "V1.p"                  # a sensor, an output column, or fuel_kg / fuel_power
//! unit = "MPa"                     # shown unit; the factor from SI follows from it
//! range = [0.0, 20.0]              # [shown unit]
//! critical = 17.0                  # red above this magnitude [shown unit]
//!
//! [[hud.bindings]]                # the lift on the right stick and on W/S
//! input = "U_lift"
//! source = { axis = "right_y" }
//! deadband = 0.1
//! rate_limit_per_s = 40.0
//!
//! [[scenario.tasks]]
//! instruction = "Lift the bucket above 2.5 m and hold it level for 2 s"
//! hold_s = 2.0
//! conditions = [ { sensor = "bucket_height", min = 2.5 },
//!                { sensor = "bucket_tilt", min = -5.0, max = 5.0, unit = "deg" } ]
//! ```

use serde::{Deserialize, Serialize};

/// `[hud]`: gauges, virtual sensors and the fuel estimate.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HudSpec {
    /// The gauges, in display order; none: each cylinder's chamber pressures and force.
    #[serde(default)]
    pub gauges: Vec<GaugeSpec>,
    /// Virtual sensors on bodies.
    #[serde(default)]
    pub sensors: Vec<SensorSpec>,
    /// The fuel estimate; none: every pump's shaft power with the defaults.
    #[serde(default)]
    pub fuel: Option<FuelSpec>,
    /// Keys and gamepad axes driving named inputs; none: the viewer's defaults (a binding file,
    /// `hydraulink serve --bindings FILE`, replaces both).
    #[serde(default)]
    pub bindings: Vec<BindingSpec>,
}

/// `[[hud.bindings]]`: a gamepad axis or a key pair driving a model input (the real-time
/// engine's `InputBinding`, with the range optional).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BindingSpec {
    /// The model input (`[[inputs]]` name).
    pub input: String,
    /// `{ axis = "right_y" }` or `{ keys = { positive = "w", negative = "s" } }`.
    pub source: BindingSourceSpec,
    /// Full deflection maps to [lo, hi] [unit of the input]; default: the valve's input range.
    #[serde(default)]
    pub range: Option<[f64; 2]>,
    /// Deadband of an axis [-], in [0, 1) (default 0).
    #[serde(default)]
    pub deadband: f64,
    /// Largest rate of change [unit of the input per s]; none: no limit.
    #[serde(default)]
    pub rate_limit_per_s: Option<f64>,
}

/// What drives a binding.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum BindingSourceSpec {
    /// A gamepad axis: `left_x`, `left_y`, `right_x`, `right_y` (up and right are +1).
    Axis(String),
    /// Two keys (`KeyboardEvent.key`, lower case): `positive` held gives +1, `negative` −1.
    Keys {
        /// Key towards the top of the range.
        positive: String,
        /// Key towards the bottom of the range.
        negative: String,
    },
}

/// `[[hud.gauges]]`: one value shown on the HUD.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GaugeSpec {
    /// Text shown (`boom cyl. piston side`); default: derived from what it shows: a volume's
    /// `label`, else the cylinder chamber the volume feeds (`<cylinder> piston side` /
    /// `rod side`), `<cylinder> force`, or the sensor's name.
    #[serde(default)]
    pub label: String,
    /// What it shows: a `[[hud.sensors]]` name, an output column of the run (`V1.p`,
    /// `lift.force`, `payload_kg`), `fuel_kg` or `fuel_power`.
    pub sensor: String,
    /// Shown unit (`MPa`, `bar`, `kN`, `kW`, `deg`, `L/min`, …; see [`unit_scale`]); default: SI.
    #[serde(default)]
    pub unit: Option<String>,
    /// The gauge's scale [lo, hi] [shown unit].
    #[serde(default)]
    pub range: Option<[f64; 2]>,
    /// Shown in red when the magnitude exceeds it [shown unit].
    #[serde(default)]
    pub critical: Option<f64>,
}

/// `[[hud.sensors]]`: a virtual sensor computed from a body's pose.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SensorSpec {
    /// Height [m] of a body point above the global origin, along −gravity (along +y without
    /// gravity).
    PointHeight {
        /// Sensor name.
        name: String,
        /// The body.
        body: String,
        /// The point, in the body's reference coordinates [m] (the model's `pose`).
        point: [f64; 3],
        /// The height of the ground along −gravity [m] (default 0): the sensor reads the
        /// height above it.
        #[serde(default)]
        ground_level_m: f64,
    },
    /// Angle [rad] of a body axis to the horizontal plane (normal −gravity): + when it points up.
    AxisAngle {
        /// Sensor name.
        name: String,
        /// The body.
        body: String,
        /// The axis, in the body's reference coordinates [-].
        axis: [f64; 3],
    },
}

impl SensorSpec {
    /// The sensor's name.
    pub fn name(&self) -> &str {
        match self {
            SensorSpec::PointHeight { name, .. } | SensorSpec::AxisAngle { name, .. } => name,
        }
    }

    /// The body it is on.
    pub fn body(&self) -> &str {
        match self {
            SensorSpec::PointHeight { body, .. } | SensorSpec::AxisAngle { body, .. } => body,
        }
    }
}

/// `[hud.fuel]`: fuel mass m_f = ∫ P dt / (η_e H), P the sum of the named power columns.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FuelSpec {
    /// Output columns of shaft power [W] (`pump.shaft_power`); negative values count as 0.
    pub power: Vec<String>,
    /// Engine efficiency η_e [-], in (0, 1] (default 0.35, a diesel engine at part load).
    #[serde(default = "default_engine_efficiency")]
    pub engine_efficiency: f64,
    /// Lower heating value H of the fuel [J/kg] (default 42.8e6, diesel).
    #[serde(default = "default_energy_density")]
    pub energy_density_j_kg: f64,
}

/// The default engine efficiency η_e [-].
pub fn default_engine_efficiency() -> f64 {
    0.35
}

/// The default lower heating value of diesel [J/kg].
pub fn default_energy_density() -> f64 {
    42.8e6
}

/// `[scenario]`: tasks done one after the other.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// The tasks, in order.
    #[serde(default)]
    pub tasks: Vec<TaskSpec>,
}

/// `[[scenario.tasks]]`: an instruction, done once all its conditions hold for `hold_s`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// The text shown to the operator.
    pub instruction: String,
    /// Conditions that must all hold.
    pub conditions: Vec<ConditionSpec>,
    /// How long they must hold without a break [s] (default 0: at once).
    #[serde(default)]
    pub hold_s: f64,
}

/// A condition on a value: `min` ≤ value ≤ `max`, in `unit`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ConditionSpec {
    /// A sensor or output column, as a gauge's `sensor`.
    pub sensor: String,
    /// Lower bound [unit]; none: no lower bound.
    #[serde(default)]
    pub min: Option<f64>,
    /// Upper bound [unit]; none: no upper bound.
    #[serde(default)]
    pub max: Option<f64>,
    /// The bounds' unit, as a gauge's (default SI).
    #[serde(default)]
    pub unit: Option<String>,
}

/// The factor from the SI value to a shown unit, and whether the unit is known: `Pa`, `kPa`,
/// `MPa`, `bar`, `N`, `kN`, `W`, `kW`, `J`, `kJ`, `m`, `mm`, `cm`, `m/s`, `mm/s`, `rad`, `deg`,
/// `rad/s`, `deg/s`, `rpm`, `kg`, `g`, `t`, `m3`, `L`, `m3/s`, `L/min`, `s`, `V`, `-`, `%`.
pub fn unit_scale(unit: &str) -> Option<f64> {
    let deg = 180.0 / std::f64::consts::PI;
    Some(match unit {
        "Pa" | "N" | "W" | "J" | "m" | "m/s" | "rad" | "rad/s" | "kg" | "m3" | "m3/s" | "s"
        | "V" | "-" => 1.0,
        "kPa" | "kN" | "kW" | "kJ" | "t" => 1e-3,
        "MPa" => 1e-6,
        "bar" => 1e-5,
        "mm" | "mm/s" | "g" | "L" => 1e3,
        "cm" => 1e2,
        "deg" | "deg/s" => deg,
        "rpm" => 60.0 / (2.0 * std::f64::consts::PI),
        "L/min" => 6e4,
        "%" => 1e2,
        _ => return None,
    })
}

/// The names a model's HUD gives besides its output columns.
pub const FUEL_SENSORS: [&str; 2] = ["fuel_kg", "fuel_power"];

//! Error types. `ModelError` names the element and the field (as a path that the file reader maps
//! to a line); `StepError` names the time, the step and the equation that failed.

use thiserror::Error;

/// An invalid model. `path` is the location of the offending field in the model spec, in the
/// form `bodies[2].mass_kg` or `hydraulics.cylinders[0].base.marker`; `element` names the element
/// (`body 'body1'`); the file reader adds the line.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("{element}: field `{path}`: {message}")]
pub struct ModelError {
    /// Field path in the model spec, e.g. `bodies[2].mass_kg`.
    pub path: String,
    /// The element, e.g. `body 'body1'`.
    pub element: String,
    /// What is wrong.
    pub message: String,
}

impl ModelError {
    /// Builds an error.
    pub fn new(
        path: impl Into<String>,
        element: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ModelError {
            path: path.into(),
            element: element.into(),
            message: message.into(),
        }
    }
}

/// Failure of a time step. The state is left at the last converged step.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum StepError {
    /// Newton–Raphson did not converge.
    #[error("Newton failed at t = {time_s:.6} s (step {step}) after {iterations} iterations: largest weighted residual in equation `{equation}` ({value:.3e}); {reason}")]
    NewtonFailed {
        /// Time at the start of the failed step [s].
        time_s: f64,
        /// Index of the failed step (0-based).
        step: u64,
        /// Iterations done.
        iterations: u32,
        /// Label of the equation with the largest weighted residual, e.g. `V2.p` or `z3`.
        equation: String,
        /// Its weighted value.
        value: f64,
        /// Why Newton stopped (cap reached, diverging, singular tangent).
        reason: String,
    },
    /// A cylinder left its stroke: the model has no end stops.
    #[error("cylinder '{cylinder}' left its stroke at t = {time_s:.6} s (step {step}): piston-side chamber length {chamber_m:.4} m outside [0, {stroke_m} m]")]
    OutOfStroke {
        /// Time at the start of the failed step [s].
        time_s: f64,
        /// Step index.
        step: u64,
        /// Cylinder name.
        cylinder: String,
        /// Piston-side chamber length l_A [m].
        chamber_m: f64,
        /// Stroke [m].
        stroke_m: f64,
    },
    /// A cylinder went through its end stop further than the stop admits.
    #[error("end stop '{element}' of cylinder '{cylinder}' penetrated {penetration_m:.4e} m at t = {time_s:.6} s (step {step}), more than its max_penetration_m = {max_m:.4e} m: the stop cannot hold the load (raise its stiffness_n_m or max_penetration_m, or reduce the load or the step)")]
    EndStopOverrun {
        /// Time at the start of the failed step [s].
        time_s: f64,
        /// Step index.
        step: u64,
        /// End-stop element name.
        element: String,
        /// Cylinder name.
        cylinder: String,
        /// Penetration beyond the stroke end [m].
        penetration_m: f64,
        /// Largest admissible penetration [m].
        max_m: f64,
    },
    /// The selected formulation is not available in this build.
    #[error("formulation '{formulation}' is not available")]
    Unavailable {
        /// Formulation name.
        formulation: String,
    },
    /// A NaN or infinite value appeared.
    #[error("non-finite value at t = {time_s:.6} s (step {step}) in `{equation}`")]
    NonFinite {
        /// Time [s].
        time_s: f64,
        /// Step index.
        step: u64,
        /// Label of the unknown or equation.
        equation: String,
    },
    /// Adaptive steps (`solver.step_control = "adaptive"`): the local error estimate stays
    /// above the tolerances at the smallest step `solver.min_step_s`.
    #[error("step-size control failed at t = {time_s:.6} s (step {step}): the local error estimate is {value:.3e} times the tolerance at the smallest step {step_s:e} s (solver.min_step_s), largest in `{equation}`; loosen solver.rtol/atol or lower min_step_s")]
    StepTooSmall {
        /// Time at the start of the failed step [s].
        time_s: f64,
        /// Index of the failed step (0-based).
        step: u64,
        /// The step tried [s].
        step_s: f64,
        /// Label of the unknown with the largest weighted error estimate.
        equation: String,
        /// The weighted error norm [-] (≤ 1 accepts).
        value: f64,
    },
}

/// Failure of the consistent initialization.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum InitError {
    /// The loops cannot be closed at the initial configuration.
    #[error("cut joint '{cut_joint}': the loop cannot close at the initial configuration (‖Φ‖ = {violation:.3e} m after {iterations} iterations)")]
    LoopCannotClose {
        /// The cut joint with the largest violation.
        cut_joint: String,
        /// Final constraint norm.
        violation: f64,
        /// Iterations done.
        iterations: u32,
    },
    /// No static equilibrium could be found.
    #[error("static equilibrium: {0}")]
    Statics(String),
    /// A cylinder's piston is outside its stroke in the assembled initial pose.
    #[error("cylinder '{cylinder}': outside its stroke at t = 0: the pin-to-pin length in the initial pose is {length_m:.6} m, but the cylinder spans {retracted_m:.6} m (field retracted_length_m) to {:.6} m (retracted_length_m + stroke_m); check those fields and the joints' q0 (in radians; write q0_deg for degrees)", retracted_m + stroke_m)]
    OutOfStroke {
        /// The cylinder.
        cylinder: String,
        /// Pin-to-pin length s in the initial pose [m].
        length_m: f64,
        /// Its `retracted_length_m` [m].
        retracted_m: f64,
        /// Its `stroke_m` [m].
        stroke_m: f64,
    },
    /// The statics fix only combinations of some initial pressures (two chambers of a cylinder
    /// behind a closed valve: the force fixes p_A A_A − p_B A_B, not each pressure).
    #[error("static equilibrium: the initial pressures of {} are not determined: the cylinder forces and zero net flows fix only a combination of them (e.g. p_A A_A - p_B A_B behind a closed valve); give p0_pa for {} of them", volume_list(volumes), missing)]
    UndeterminedPressures {
        /// The volumes whose pressures are free, in model order.
        volumes: Vec<String>,
        /// How many of them need a `p0_pa` (the dimension of the free set).
        missing: usize,
    },
    /// The statics put a volume's initial pressure below 0 Pa absolute: for a cylinder, the
    /// `p0_pa` was given to the chamber that carries the load, with too little pressure to hold
    /// it (a cylinder that pulls at rest given its rod side).
    #[error("static equilibrium: volume '{volume}' would start at {:.4} MPa absolute, below zero; {advice}", pressure_pa / 1e6)]
    NegativePressure {
        /// The volume.
        volume: String,
        /// Its pressure from the statics [Pa] (absolute, negative).
        pressure_pa: f64,
        /// The cylinder or hydraulic motor it is a chamber of, e.g. `cylinder 'arm'`; empty if
        /// none.
        element: String,
        /// What to give instead, in words.
        advice: String,
    },
    /// A NaN or infinite value appeared in a stage of the initialization, or its least-squares
    /// solve failed.
    #[error("{element}: {stage}: {reason}")]
    Numerical {
        /// The stage, e.g. `velocities` or `accelerations and multipliers`.
        stage: String,
        /// The element behind the offending row or column, e.g. `joint 'z2'`.
        element: String,
        /// What went wrong, e.g. `non-finite matrix entry at row 3, column 0`.
        reason: String,
    },
}

/// A value set or read by name from outside the model (`Simulation::set_input`, `input`,
/// `release_input`) that cannot be used.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum InputError {
    /// No input has this name.
    #[error("no input named '{name}': {}", valid_input_names(.valid))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The model's input names, in model order.
        valid: Vec<String>,
    },
    /// The value is NaN or infinite.
    #[error("input '{name}': the value {value} is not finite")]
    NonFinite {
        /// The input.
        name: String,
        /// The value given.
        value: f64,
    },
}

fn valid_input_names(valid: &[String]) -> String {
    if valid.is_empty() {
        "the model has no inputs".to_string()
    } else {
        let quoted: Vec<String> = valid.iter().map(|n| format!("'{n}'")).collect();
        format!("the model's inputs are {}", quoted.join(", "))
    }
}

/// `'V1', 'V2' and 'V3'`.
fn volume_list(v: &[String]) -> String {
    let q: Vec<String> = v.iter().map(|n| format!("volume '{n}'")).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        n => format!("{} and {}", q[..n - 1].join(", "), q[n - 1]),
    }
}

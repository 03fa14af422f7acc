//! `State`: everything that changes from step to step. Small and `Clone`, so a run can be
//! rolled back or restarted (co-simulation, EKF, linearization at time T).

use crate::inputs::InputValues;

impl State {
    /// Total actuator work Σ_c W_c [J].
    pub fn total_actuator_work_j(&self) -> f64 {
        self.actuator_work_j.iter().sum()
    }
    /// Total friction dissipation Σ_c D_c [J].
    pub fn total_friction_dissipated_j(&self) -> f64 {
        self.friction_dissipated_j.iter().sum()
    }
}

/// The mutable state of a simulation at time `t_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Time [s].
    pub t_s: f64,
    /// Steps taken.
    pub step: u64,
    /// Relative coordinates z [rad or m].
    pub z: Vec<f64>,
    /// ż [rad/s or m/s].
    pub zd: Vec<f64>,
    /// z̈ [rad/s² or m/s²].
    pub zdd: Vec<f64>,
    /// Volume pressures p [Pa].
    pub p: Vec<f64>,
    /// ṗ [Pa/s].
    pub pd: Vec<f64>,
    /// p̈ estimate (ṗ_k − ṗ_k−1)/Δt [Pa/s²], for the second-order pressure predictor.
    pub pdd: Vec<f64>,
    /// Valve positions: the 4/3 valves' spools U [unit of the input], then the bridge valves'
    /// openings κ [-].
    pub spool: Vec<f64>,
    /// The named inputs (valve references U, guidance references): per input, the value set from
    /// outside (`Simulation::set_input`), if any, and the pair (u(t_k), u(t_k+1)) sampled for
    /// the step from `t_s` (stage `sample inputs`).
    pub inputs: InputValues,
    /// Trim κ₀ of each bridge valve (fixed, or solved by the static initialization) [-].
    pub trim: Vec<f64>,
    /// Loop-closure multipliers λ (000 eq. 19) [N or N m].
    pub lambda: Vec<f64>,
    /// Work done by each cylinder, W_c = ∫ F_c ṡ_c dt [J] (trapezoidal rule).
    pub actuator_work_j: Vec<f64>,
    /// Power of each cylinder F_c ṡ_c at `t_s` [W].
    pub actuator_power_w: Vec<f64>,
    /// KE + PE at t = 0 [J].
    pub energy0_j: f64,
    /// PE at t = 0 [J]: the reference of the reported potential energy.
    pub potential0_j: f64,
    /// Formulation-specific state (e.g. the natural coordinates of the global formulations or
    /// the partition of the double-step one); its layout is documented by the formulation's
    /// module. Empty for the penalty formulation.
    pub extra: Vec<f64>,
    /// Friction states w (LuGre bristle q [m], film h [-]), cylinder by cylinder (003 Pub II).
    pub friction: Vec<f64>,
    /// Their rates ẇ (trapezoidal).
    pub friction_rate: Vec<f64>,
    /// Velocities of the friction elements at `t_s` (cylinders ṡ [m/s], then joints ż
    /// [rad/s or m/s]), for the friction-state predictor.
    pub friction_velocity_m_s: Vec<f64>,
    /// Friction power F_μ v of each friction element (cylinders, then joints) at `t_s` [W].
    pub friction_power_w: Vec<f64>,
    /// Work absorbed by each friction element (cylinders, then joints), D = ∫ F_μ v dt [J]
    /// (trapezoidal rule).
    pub friction_dissipated_j: Vec<f64>,
    /// Energy accounts of the elements (`crate::element`): stored, dissipated, supplied.
    pub elements: crate::component::ElementEnergy,
    /// The reusable Newton tangent of the active formulation (before factorization) and its
    /// side data: it changes the iterates of the next steps, so it travels with the state and a
    /// clone restarts bit-identically (`integrator::newton::TangentCache`).
    pub tangent: crate::integrator::newton::TangentCache,
}

//! `State`: everything that changes from step to step. Small and `Clone`, so a run can be
//! rolled back or restarted (co-simulation, EKF, linearization at time T).

use crate::contact::hits::HitCounter;
use crate::elements::inputs::InputValues;

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
    /// Valve positions of the elements that have one (`Element::n_position`), element by element
    /// (slots `Layout::element_position`, names `Layout::spools`): a 4/3 valve's spool U [unit of
    /// the input], a bridge valve's opening κ [-]. Advanced before Newton (stage `advance
    /// valves`, `circuit::advance_positions`).
    pub spool: Vec<f64>,
    /// The named inputs (valve references U, guidance references): per input, the value set from
    /// outside (`Simulation::set_input`), if any, and the pair (u(t_k), u(t_k+1)) sampled for
    /// the step from `t_s` (stage `sample inputs`).
    pub inputs: InputValues,
    /// Trim of each valve position, by slot as `spool`: a bridge valve's κ₀ (fixed, or solved by
    /// the static initialization) [-]; 0 for the others.
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
    /// The active formulation's own state beyond the relative one (natural coordinates,
    /// guidance multipliers, the double-step partition); [`FormulationState::Relative`] until
    /// the formulation's stage `initialize` fills it at the first step.
    pub formulation: FormulationState,
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
    /// Internal states e of the elements (`Layout::internal` order, names
    /// `Layout::names[Layout::internal]`: the relief valve's `<name>.poppet` [-]), Newton
    /// unknowns of the penalty formulation; at t = 0 their steady state at the initial pressures.
    pub internal: Vec<f64>,
    /// Their rates ė (trapezoidal) [unit of the state / s].
    pub internal_rate: Vec<f64>,
    /// Energy accounts of the elements (`crate::elements::element`): stored, dissipated, supplied.
    pub elements: ElementEnergy,
    /// The reusable Newton tangent of the active formulation (before factorization) and its
    /// side data: it changes the iterates of the next steps, so it travels with the state and a
    /// clone restarts bit-identically.
    pub tangent: TangentCache,
    /// What the output row reports of the evaluation that produced this state and cannot be
    /// recomputed from the state alone (the formulation evaluates at its last Newton iterate).
    /// Written by `Simulation` after each step, so that a clone given to
    /// `Simulation::set_state` shows its own values.
    pub reported: Reported,
    /// The mutable world of `[terrain]` (heights, payloads, the hopper, the records the
    /// buckets read frozen over the next step), updated at step boundaries by the stage `world`
    /// (`crate::pipeline::world::advance`); `None` without a terrain.
    pub world: Option<crate::terrain::data::WorldState>,
}

/// The values of the last evaluation of the step that produced a [`State`] (of the initial
/// evaluation at t = 0) that its output row reports: the step's diagnostics and the
/// cylinders' and friction joints' port values. Plain data, sized by `Simulation::new`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reported {
    /// Newton iterations of the step (0 at t = 0).
    pub iterations: u32,
    /// Kinetic energy KE [J].
    pub kinetic_j: f64,
    /// Potential energy PE [J] (not relative to t = 0).
    pub potential_j: f64,
    /// Constraint violation ‖Φ‖ [m or -].
    pub constraint_violation: f64,
    /// Per cylinder: length s [m], rate ṡ [m/s] and force F [N] of the last evaluation.
    pub cylinder: Vec<[f64; 3]>,
    /// Per cylinder: seal friction F_μ [N].
    pub cylinder_friction_n: Vec<f64>,
    /// Per friction joint: friction F_μ [N or N m].
    pub joint_friction: Vec<f64>,
}

/// The state a formulation keeps beyond the relative coordinates (issue 10, item 5): plain data,
/// one variant per kind, written by the formulation's commit and cloned with the [`State`].
#[derive(Debug, Clone, Default, PartialEq)]
pub enum FormulationState {
    /// Nothing beyond the relative state: the penalty and multi-rate formulations, and every
    /// formulation before its first step.
    #[default]
    Relative,
    /// The global formulations (ALI3-P, I1AL) in natural coordinates.
    Natural(NaturalState),
    /// Kinematic guidance.
    Guidance(GuidanceState),
    /// The double-step formulation's coordinate partition.
    DoubleStep(Partition),
}

/// Natural-coordinate state of the global formulations (004 §2; 002).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NaturalState {
    /// Natural coordinates q (`NaturalModel::nq` entries) [m or -].
    pub q: Vec<f64>,
    /// q̇ [m/s or 1/s].
    pub qd: Vec<f64>,
    /// q̈ [m/s² or 1/s²].
    pub qdd: Vec<f64>,
    /// Multipliers λ of the natural constraints (`NaturalModel::n_eqs` entries; I1AL: λ*)
    /// [N or N m].
    pub lambda: Vec<f64>,
}

/// State of kinematic guidance (004 §4), one entry per `Model::solver.guidance` entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuidanceState {
    /// Multipliers λ_g of the guidance constraints [N].
    pub lambda: Vec<f64>,
    /// s̈_ref(t_k), for the trapezoidal derivative of a recorded velocity [m/s²].
    pub sdd_ref: Vec<f64>,
}

/// The coordinate partition z = [z_d ; z_i] of the double-step formulation and the constraint
/// rows it solves (000 §2.2).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Partition {
    /// r: number of dependent coordinates.
    pub n_dep: usize,
    /// Coordinate indices: dependent (r), then independent (n − r), each ascending.
    pub order: Vec<usize>,
    /// Constraint rows used (first r entries, ascending).
    pub rows: Vec<usize>,
    /// Smallest pivot of Φ_z^d at the last selection [m or -].
    pub pivot_ref: f64,
    /// Selections made since t = 0.
    pub selections: u64,
}

impl Partition {
    /// Dependent coordinate indices.
    pub fn dependent(&self) -> &[usize] {
        &self.order[..self.n_dep]
    }
    /// Independent coordinate indices.
    pub fn independent(&self) -> &[usize] {
        &self.order[self.n_dep..]
    }
    /// Constraint rows solved.
    pub fn used_rows(&self) -> &[usize] {
        &self.rows[..self.n_dep]
    }
}

/// The reusable tangent of the active formulation as plain numbers, kept in the `State`
/// (`State::tangent`), so that a clone of the state carries everything that changes the iterates
/// and a simulation restored from it continues bit-identically (issue 10, item 5).
///
/// Holds the tangent **before** factorization (factoring is deterministic, so a restore factors
/// it again) and the formulation's side data of the same evaluation (penalty: the friction
/// elements' velocity signs; multi-rate: ∂p_k+1/∂z). Written at the commit of a step that
/// refreshed its tangent ([`TangentCache::commit`]), read at the start of a step whose workspace
/// does not hold it ([`TangentCache::needs_restore`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TangentCache {
    /// Identity of the cached tangent: 0 for none; each step that refreshes it counts one up.
    pub id: u64,
    /// The tangent's entries, in the formulation's own layout.
    pub matrix: Vec<f64>,
    /// Side data of the same evaluation.
    pub side: Vec<f64>,
}

impl TangentCache {
    /// Whether a workspace holding tangent `ws_id` must restore this one (or drop its own).
    #[inline]
    pub fn needs_restore(&self, ws_id: u64) -> bool {
        ws_id != self.id
    }

    /// After a successful step: takes the workspace's `pending` tangent of identity `ws_id` if
    /// the step refreshed it. Allocates only when the sizes grow.
    #[inline]
    pub fn commit(&mut self, ws_id: u64, pending: &TangentCache) {
        if ws_id != self.id {
            self.matrix.clone_from(&pending.matrix);
            self.side.clone_from(&pending.side);
            self.id = ws_id;
        }
    }

    /// Records a freshly assembled (not yet factored) tangent `matrix` and its `side` data as
    /// the pending tangent of a step from a state whose cache has identity `state_id`; returns
    /// the workspace's new tangent identity.
    #[inline]
    pub fn record(&mut self, state_id: u64, matrix: &[f64], side: &[f64]) -> u64 {
        self.matrix.clear();
        self.matrix.extend_from_slice(matrix);
        self.side.clear();
        self.side.extend_from_slice(side);
        self.id = state_id.wrapping_add(1).max(1);
        self.id
    }
}

impl FormulationState {
    /// The natural-coordinate state, if this is one.
    pub fn natural(&self) -> Option<&NaturalState> {
        match self {
            FormulationState::Natural(n) => Some(n),
            _ => None,
        }
    }
    /// The natural-coordinate state, mutable, if this is one.
    pub fn natural_mut(&mut self) -> Option<&mut NaturalState> {
        match self {
            FormulationState::Natural(n) => Some(n),
            _ => None,
        }
    }
    /// The guidance state, if this is one.
    pub fn guidance(&self) -> Option<&GuidanceState> {
        match self {
            FormulationState::Guidance(g) => Some(g),
            _ => None,
        }
    }
    /// The guidance state, mutable, if this is one.
    pub fn guidance_mut(&mut self) -> Option<&mut GuidanceState> {
        match self {
            FormulationState::Guidance(g) => Some(g),
            _ => None,
        }
    }
    /// The double-step partition, if this is one.
    pub fn partition(&self) -> Option<&Partition> {
        match self {
            FormulationState::DoubleStep(p) => Some(p),
            _ => None,
        }
    }
}

/// Energy accounts of the elements, part of the [`crate::State`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ElementEnergy {
    /// Stored energy of each element at the state's time [J].
    pub stored_j: Vec<f64>,
    /// Stored energy of each element at t = 0 [J].
    pub stored0_j: Vec<f64>,
    /// Energy dissipated by each element since t = 0, ∫ P_d dt (trapezoidal) [J].
    pub dissipated_j: Vec<f64>,
    /// Energy supplied by each element to the mechanism since t = 0, ∫ P_s dt [J].
    pub supplied_j: Vec<f64>,
    /// Dissipated power at the state's time [W].
    pub dissipated_w: Vec<f64>,
    /// Supplied power at the state's time [W].
    pub supplied_w: Vec<f64>,
    /// Hit counter of each element (advanced for the contact elements only,
    /// [`crate::contact::hits`]).
    pub hits: Vec<HitCounter>,
}

impl ElementEnergy {
    /// Zero accounts for `n` elements.
    pub fn new(n: usize) -> Self {
        ElementEnergy {
            stored_j: vec![0.0; n],
            stored0_j: vec![0.0; n],
            dissipated_j: vec![0.0; n],
            supplied_j: vec![0.0; n],
            dissipated_w: vec![0.0; n],
            supplied_w: vec![0.0; n],
            hits: vec![HitCounter::default(); n],
        }
    }
}

/// What one step did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepReport {
    /// Newton iterations (linear solves).
    pub iterations: u32,
    /// Bit i set: volume i dropped below 0 Pa (absolute) during this step.
    pub cavitation_onsets: u64,
    /// Kinetic energy at the end of the step [J].
    pub kinetic_j: f64,
    /// Potential energy at the end of the step [J].
    pub potential_j: f64,
    /// ‖Φ‖ at the end of the step.
    pub constraint_violation: f64,
}

//! `Simulation`: a compiled model with its state and workspace, and the run-level bookkeeping
//! the CLI needs (output labels, output rows, cavitation onsets).
//!
//! API used by the CLI and the tests (stable):
//! - `Simulation::new(model) -> Result<Simulation, InitError>` runs the consistent initialization.
//! - `sim.step() -> Result<StepReport, StepError>` advances one Δt.
//! - `sim.time_s()`, `sim.model()`, `sim.state()`.
//! - `sim.output_labels() -> Vec<String>`: CSV columns, `time` first.
//! - `sim.output_row(&mut [f64])`: one row in the order of `output_labels`.
//! - `sim.volume_name(i)` to name the volumes flagged in `StepReport::cavitation_onsets`.
//! - `sim.set_input("U", v)`, `sim.release_input("U")`, `sim.input("U")`, `sim.input_names()`:
//!   drive the model's named inputs from code (see below).
//!
//! ## Driving the inputs from code
//!
//! A model's inputs (the valve references `U`, the guidance references) follow their signals
//! from the model file until a value is set by name between two steps:
//!
//! ```no_run
//! # fn demo(mut sim: hydraulink::Simulation) -> Result<(), Box<dyn std::error::Error>> {
//! for _ in 0..500 {
//!     sim.step()?;
//! }
//! sim.set_input("U", 5.0)?; // from the next step on, U = 5 on every step
//! for _ in 0..500 {
//!     sim.step()?;
//! }
//! assert_eq!(sim.input("U")?, 5.0);
//! sim.release_input("U")?; // the signal drives U again from the next step on
//! # Ok(())
//! # }
//! ```
//!
//! The value set is part of the [`State`], so a cloned state carries it and replays exactly.
//! An unknown name is an [`InputError::Unknown`] that lists the model's input names.

use crate::model::Model;
use crate::state::State;
use crate::workspace::Workspace;
use crate::{initialization, step, InitError, InputError, StepError, StepReport};

/// A running simulation.
#[derive(Debug)]
pub struct Simulation {
    model: Model,
    state: State,
    ws: Workspace,
    last: StepReport,
}

impl Simulation {
    /// Initializes `model` consistently (loop closure, statics, pressures) and allocates the
    /// workspace.
    pub fn new(model: Model) -> Result<Self, InitError> {
        let mut state = initialization::initialize(&model)?;
        let mut ws = Workspace::new(&model);
        // the elements' outputs at t = 0 into the workspace (without integrating, `commit`
        // rewrites the same initial energy accounts that `initialize` wrote)
        crate::element::commit(
            &model,
            &mut state,
            &mut ws.buffers.element_kin,
            &mut ws.buffers.element_values,
            false,
        );
        // diagnostics of the initial state
        let spool = state.spool.clone();
        ws.ev.fstate.copy_from_slice(&state.friction);
        ws.ev
            .evaluate(&model, &state.z, &state.zd, &state.p, &spool, false);
        let mut last = StepReport::default();
        crate::advance::energies_and_violation(&model, &ws.ev, &state.zd, &mut last);
        Ok(Simulation {
            model,
            state,
            ws,
            last,
        })
    }

    /// Advances one step Δt.
    pub fn step(&mut self) -> Result<StepReport, StepError> {
        let r = step::step(&self.model, &mut self.state, &mut self.ws)?;
        self.last = r;
        Ok(r)
    }

    /// Replaces the state (rollback, restart). The workspace's tangent is dropped and the next
    /// step restores the one the state carries (`State::tangent`), so a simulation given a
    /// clone of another's state continues bit-identically with it, whatever either did before.
    pub fn set_state(&mut self, state: State) {
        self.state = state;
        self.ws.tangent_valid = false;
        self.ws.tangent_id = u64::MAX;
    }

    /// Sets input `name` to `value` [unit of the input] from the next step on, in place of its
    /// signal, held on every step until [`Simulation::release_input`]. The value is part of the
    /// state. Errors: [`InputError::Unknown`] (listing the valid names), and
    /// [`InputError::NonFinite`].
    pub fn set_input(&mut self, name: &str, value: f64) -> Result<(), InputError> {
        let i = self.input_index(name)?;
        if !value.is_finite() {
            return Err(InputError::NonFinite {
                name: name.to_string(),
                value,
            });
        }
        self.state.inputs.overrides[i] = Some(value);
        step::sample_inputs(&self.model, &mut self.state);
        Ok(())
    }

    /// Returns input `name` to its signal from the next step on (nothing to do if no value is
    /// set). Error: [`InputError::Unknown`].
    pub fn release_input(&mut self, name: &str) -> Result<(), InputError> {
        let i = self.input_index(name)?;
        self.state.inputs.overrides[i] = None;
        step::sample_inputs(&self.model, &mut self.state);
        Ok(())
    }

    /// The current value of input `name` [unit of the input]: the value set by
    /// [`Simulation::set_input`], or else its signal's value at the current time. Error:
    /// [`InputError::Unknown`].
    pub fn input(&self, name: &str) -> Result<f64, InputError> {
        let i = self.input_index(name)?;
        Ok(self
            .state
            .inputs
            .value_at(&self.model.inputs, i, self.state.t_s))
    }

    /// The model's input names, in model order.
    pub fn input_names(&self) -> &[String] {
        &self.model.input_names
    }

    fn input_index(&self, name: &str) -> Result<usize, InputError> {
        self.model
            .input_names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| InputError::Unknown {
                name: name.to_string(),
                valid: self.model.input_names.clone(),
            })
    }

    /// Time [s].
    pub fn time_s(&self) -> f64 {
        self.state.t_s
    }
    /// Steps taken.
    pub fn step_index(&self) -> u64 {
        self.state.step
    }
    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }
    /// The state.
    pub fn state(&self) -> &State {
        &self.state
    }
    /// The workspace (counters, labels).
    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }
    /// The last step's report (or the initial diagnostics).
    pub fn last_report(&self) -> &StepReport {
        &self.last
    }
    /// Energy drift KE + PE − W_act + D_μ − (KE + PE)(0) [J], with W_act the hydraulic work
    /// ∫ (p_A A_A − p_B A_B) ṡ dt and D_μ the friction work ∫ F_μ ṡ dt (003 Pub II §4).
    pub fn energy_drift_j(&self) -> f64 {
        self.last.kinetic_j + self.last.potential_j - self.state.total_actuator_work_j()
            + self.state.total_friction_dissipated_j()
            + self.state.elements.mechanical_drift_j(&self.model)
            - self.state.energy0_j
    }
    /// Name of volume `i`.
    pub fn volume_name(&self, i: usize) -> &str {
        &self.model.volume_names[i]
    }

    /// Output column labels, `time` first.
    pub fn output_labels(&self) -> Vec<String> {
        let m = &self.model;
        let mut l = vec!["time".to_string()];
        for a in &m.axes {
            l.push(format!("{}.q", a.name));
            l.push(format!("{}.qd", a.name));
        }
        for v in &m.hydraulics.volumes {
            l.push(format!("{}.p", v.name));
        }
        for v in &m.hydraulics.valves {
            l.push(format!("{}.spool", v.name));
        }
        for v in &m.hydraulics.bridge_valves {
            l.push(format!("{}.opening", v.name));
        }
        for c in &m.hydraulics.cylinders {
            l.push(format!("{}.length", c.name));
            l.push(format!("{}.velocity", c.name));
            l.push(format!("{}.force", c.name));
            l.push(format!("{}.work", c.name));
        }
        for s in [
            "energy.kinetic",
            "energy.potential",
            "energy.actuator_work",
            "energy.drift",
            "constraint.violation",
            "newton.iterations",
        ] {
            l.push(s.to_string());
        }
        l.push("energy.friction_dissipated".to_string());
        for c in &m.hydraulics.cylinders {
            if c.friction != crate::model::Friction::None {
                l.push(format!("{}.friction", c.name));
            }
            for s in crate::friction::state_names(&c.friction) {
                l.push(format!("{}.{s}", c.name));
            }
        }
        for j in &m.joint_friction {
            l.push(format!("{}.friction", j.joint));
            for s in crate::friction::state_names(&j.friction) {
                l.push(format!("{}.{s}", j.joint));
            }
        }
        // elements (`crate::element`): their outputs, then energy accounts
        let mut vars = Vec::new();
        for e in &m.elements {
            e.describe(&mut vars);
        }
        l.extend(vars.into_iter().map(|v| v.name));
        for e in &m.elements {
            for q in ["stored", "dissipated", "supplied"] {
                l.push(format!("{}.energy_{q}", e.name()));
            }
        }
        if m.solver.formulation == crate::model::spec::Formulation::DoubleStep {
            l.push("partition.independent".to_string());
        }
        l
    }

    /// Number of output columns.
    pub fn n_outputs(&self) -> usize {
        let m = &self.model;
        1 + 2 * m.n_coords()
            + m.n_volumes()
            + m.n_valve_positions()
            + 4 * m.hydraulics.cylinders.len()
            + 6
            + usize::from(m.solver.formulation == crate::model::spec::Formulation::DoubleStep)
            + 1
            + m.hydraulics
                .cylinders
                .iter()
                .filter(|c| c.friction != crate::model::Friction::None)
                .count()
            + m.joint_friction.len()
            + m.n_friction_states()
            + m.elements.iter().map(|e| e.n_outputs() + 3).sum::<usize>()
    }

    /// One output row in the order of [`Simulation::output_labels`].
    pub fn output_row(&self, row: &mut [f64]) {
        let m = &self.model;
        let st = &self.state;
        let mut k = 0;
        let mut put = |v: f64| {
            row[k] = v;
            k += 1;
        };
        put(st.t_s);
        for i in 0..m.n_coords() {
            put(st.z[i]);
            put(st.zd[i]);
        }
        for v in 0..m.n_volumes() {
            put(st.p[v]);
        }
        for i in 0..m.n_valve_positions() {
            put(st.spool[i]);
        }
        for c in 0..m.hydraulics.cylinders.len() {
            put(self.ws.ev.motion[c].s);
            put(self.ws.ev.motion[c].sd);
            put(self.ws.ev.cylinder_force[c]);
            put(st.actuator_work_j[c]);
        }
        put(self.last.kinetic_j);
        put(self.last.potential_j - self.initial_potential());
        put(st.total_actuator_work_j());
        put(self.energy_drift_j());
        put(self.last.constraint_violation);
        put(self.last.iterations as f64);
        put(st.total_friction_dissipated_j());
        let mut o = 0;
        for (c, cyl) in m.hydraulics.cylinders.iter().enumerate() {
            if cyl.friction != crate::model::Friction::None {
                put(self.ws.ev.friction_force[c]);
            }
            for _ in crate::friction::state_names(&cyl.friction) {
                put(st.friction[o]);
                o += 1;
            }
        }
        for (j, jf) in m.joint_friction.iter().enumerate() {
            put(self.ws.ev.joint_friction_force[j]);
            for _ in crate::friction::state_names(&jf.friction) {
                put(st.friction[o]);
                o += 1;
            }
        }
        let (vals, acc) = (&self.ws.element_values, &st.elements);
        let mut buf = [0.0; crate::element::MAX_OUTPUTS];
        for (i, e) in m.elements.iter().enumerate() {
            let n_out = e.outputs(&vals.at[i], &vals.effort[i], &mut buf);
            buf[..n_out].iter().for_each(|v| put(*v));
        }
        for i in 0..m.elements.len() {
            put(acc.stored_j[i]);
            put(acc.dissipated_j[i]);
            put(acc.supplied_j[i]);
        }
        if m.solver.formulation == crate::model::spec::Formulation::DoubleStep {
            use crate::mechanics::semirecursive::double_step;
            put(double_step::first_independent(m, st));
        }
    }

    fn initial_potential(&self) -> f64 {
        self.state.potential0_j
    }
}

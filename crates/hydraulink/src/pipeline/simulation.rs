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

use crate::elements::element::{PortEffort, PortState};
use crate::model::Model;
use crate::pipeline::step_control;
use crate::pipeline::workspace::Workspace;
use crate::pipeline::{initialization, step};
use crate::state::State;
use crate::{InitError, InputError, StepError, StepReport};

/// A running simulation.
#[derive(Debug)]
pub struct Simulation {
    model: Model,
    state: State,
    ws: Workspace,
    last: StepReport,
    /// The output columns, built once from the model and its layout ([`columns`]).
    columns: Vec<Column>,
    /// Values set by [`Simulation::set_input`] that a 4/3 valve clips to its input range.
    clipped_inputs: u64,
    /// Adaptive steps (`solver.step_control = "adaptive"`): the controller and the dense
    /// output's own state and workspace; `None` at fixed steps.
    adaptive: Option<Box<Adaptive>>,
}

/// The adaptive-step part of a [`Simulation`].
#[derive(Debug)]
struct Adaptive {
    control: step_control::Controller,
    /// The interpolated state of the last dense-output row.
    out_state: State,
    /// The workspace the dense-output rows are evaluated in (the stepping one is not touched).
    out_ws: Workspace,
}

/// The global pose of a body ([`Simulation::body_poses`]): a point with reference-configuration
/// coordinates r̄ [m] is at `position_m + rotation · r̄`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BodyPose {
    /// Translation x of the body's link frame [m], global.
    pub position_m: [f64; 3],
    /// Rotation A of the body's link frame from the reference configuration, row-major [-].
    pub rotation: [[f64; 3]; 3],
}

impl BodyPose {
    /// The global position [m] of the point with reference-configuration coordinates `r_ref`
    /// [m] on this body: x + A r̄.
    pub fn point_m(&self, r_ref: [f64; 3]) -> [f64; 3] {
        let (a, x) = (&self.rotation, &self.position_m);
        std::array::from_fn(|i| x[i] + a[i][0] * r_ref[0] + a[i][1] * r_ref[1] + a[i][2] * r_ref[2])
    }
}

/// Where the value of an output column comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    /// t [s].
    Time,
    /// z_i [rad or m].
    Coordinate(usize),
    /// ż_i [rad/s or m/s].
    Rate(usize),
    /// p_v [Pa].
    Pressure(usize),
    /// Spool U or opening κ of valve position i.
    ValvePosition(usize),
    /// The value of input `i` the last step used at its end (`InputValues::u_used`).
    Input(usize),
    /// Output `k` of cylinder `cylinder` ([`crate::elements::element::Element::outputs`] of the
    /// [`crate::model::Cylinder`]: s, ṡ, F).
    CylinderOutput {
        /// Index into `Model::cylinders`.
        cylinder: usize,
        /// Index into its outputs.
        k: usize,
    },
    /// W_c [J].
    CylinderWork(usize),
    /// KE [J].
    KineticEnergy,
    /// PE − PE(0) [J].
    PotentialEnergy,
    /// Σ W_c [J].
    ActuatorWork,
    /// [`Simulation::energy_drift_j`] [J].
    Drift,
    /// Constraint violation [m or -].
    ConstraintViolation,
    /// Newton iterations of the last step.
    Iterations,
    /// Σ D [J].
    FrictionDissipated,
    /// F_μ of cylinder c [N].
    CylinderFriction(usize),
    /// F_μ of friction joint j [N or N m].
    JointFriction(usize),
    /// Friction state o of w [m or -].
    FrictionState(usize),
    /// Output `k` of element `element` ([`crate::elements::element::Element::outputs`]).
    ElementOutput {
        /// Index into `Model::elements`.
        element: usize,
        /// Index into its outputs.
        k: usize,
    },
    /// Energy stored in element i [J].
    ElementStored(usize),
    /// Energy dissipated by element i [J].
    ElementDissipated(usize),
    /// Energy supplied by element i [J].
    ElementSupplied(usize),
    /// Hits counted by contact element i [-] (`contact::hits`).
    ElementHits(usize),
    /// Largest force of the last hit of contact element i [N].
    ElementHitForce(usize),
    /// Largest force of contact element i since t = 0 [N].
    ElementPeakForce(usize),
    /// Global coordinate `axis` (0 = x, 1 = y, 2 = z) of output marker i [m]
    /// (`Model::output_markers`, positions from the stage `elements`).
    Marker(usize, usize),
    /// The double-step formulation's first independent coordinate.
    Partition,
}

/// One output column: its label (the CSV header) and its source.
#[derive(Debug, Clone, PartialEq)]
struct Column {
    label: String,
    source: Source,
}

/// The output columns of `model`, `time` first: the one list the labels, the row and the count
/// derive from. Unknowns carry their layout names (`model::layout`): `<z>.q`, `<z>.qd`, `V1.p`,
/// `cyl1.bristle_m`.
fn columns(model: &Model) -> Vec<Column> {
    let (m, l) = (model, &model.layout);
    let mut cols = Vec::new();
    let mut put = |label: String, source: Source| cols.push(Column { label, source });
    put("time".to_string(), Source::Time);
    for (i, z) in l.names[l.z.clone()].iter().enumerate() {
        put(format!("{z}.q"), Source::Coordinate(i));
        put(format!("{z}.qd"), Source::Rate(i));
    }
    for (v, p) in l.names[l.p.clone()].iter().enumerate() {
        put(p.clone(), Source::Pressure(v));
    }
    for (i, name) in l.spools.iter().enumerate() {
        put(name.clone(), Source::ValvePosition(i));
    }
    // the inputs' values (a signal's, or a value set from outside)
    for (i, name) in m.input_names.iter().enumerate() {
        put(format!("{name}.value"), Source::Input(i));
    }
    for (c, cyl) in m.cylinders().enumerate() {
        // its outputs (`Element::describe`: length, velocity, force), then its work account
        let mut vars = Vec::new();
        crate::elements::element::Element::describe(cyl, &mut vars);
        for (k, v) in vars.into_iter().enumerate() {
            put(v.name, Source::CylinderOutput { cylinder: c, k });
        }
        put(format!("{}.work", cyl.name), Source::CylinderWork(c));
    }
    for (label, source) in [
        ("energy.kinetic", Source::KineticEnergy),
        ("energy.potential", Source::PotentialEnergy),
        ("energy.actuator_work", Source::ActuatorWork),
        ("energy.drift", Source::Drift),
        ("constraint.violation", Source::ConstraintViolation),
        ("newton.iterations", Source::Iterations),
        ("energy.friction_dissipated", Source::FrictionDissipated),
    ] {
        put(label.to_string(), source);
    }
    // each friction element: its force (a cylinder's only with a law), then its states
    let nc = m.n_cylinders();
    for (e, b) in l.friction.iter().enumerate() {
        if e < nc {
            if m.cylinder(e).friction != crate::model::Friction::None {
                put(format!("{}.friction", b.name), Source::CylinderFriction(e));
            }
        } else {
            put(
                format!("{}.friction", b.name),
                Source::JointFriction(e - nc),
            );
        }
        for o in b.states.clone() {
            put(l.names[l.w.start + o].clone(), Source::FrictionState(o));
        }
    }
    // elements (`crate::elements::element`): their outputs, then energy accounts
    let mut vars = Vec::new();
    for (element, e) in m.elements().iter().enumerate() {
        vars.clear();
        e.describe(&mut vars);
        for (k, v) in vars.drain(..).enumerate() {
            put(v.name, Source::ElementOutput { element, k });
        }
        // a contact's hit counter, from the state (`contact::hits`)
        if e.hit_gap_s().is_some() {
            put(format!("{}.hits", e.name()), Source::ElementHits(element));
            put(
                format!("{}.hit_force", e.name()),
                Source::ElementHitForce(element),
            );
            put(
                format!("{}.peak_force", e.name()),
                Source::ElementPeakForce(element),
            );
        }
    }
    for (i, e) in m.elements().iter().enumerate() {
        // accounts only for the elements evaluated at every step
        if !m.element_every_step[i] {
            continue;
        }
        put(
            format!("{}.energy_stored", e.name()),
            Source::ElementStored(i),
        );
        put(
            format!("{}.energy_dissipated", e.name()),
            Source::ElementDissipated(i),
        );
        put(
            format!("{}.energy_supplied", e.name()),
            Source::ElementSupplied(i),
        );
    }
    for (i, (name, _)) in m.output_markers.iter().enumerate() {
        for (axis, c) in ["x", "y", "z"].iter().enumerate() {
            put(format!("{name}.{c}"), Source::Marker(i, axis));
        }
    }
    if m.solver.formulation == crate::model::spec::Formulation::DoubleStep {
        put("partition.independent".to_string(), Source::Partition);
    }
    cols
}

impl Simulation {
    /// Initializes `model` consistently (loop closure, statics, pressures) and allocates the
    /// workspace.
    pub fn new(model: Model) -> Result<Self, InitError> {
        let mut state = initialization::initialize(&model)?;
        let mut ws = Workspace::new(&model);
        // the elements' outputs at t = 0 into the workspace (without integrating, `commit`
        // rewrites the same initial energy accounts that `initialize` wrote)
        let b = &mut ws.buffers;
        crate::pipeline::element_energy::commit(
            &model,
            &mut state,
            &mut b.element_kin,
            &mut b.element_values,
            &b.ev.mechanical_elements,
            false,
        );
        let last = evaluate_reported(&model, &mut state, &mut ws);
        let adaptive = model.solver.adaptive.map(|opts| {
            Box::new(Adaptive {
                control: step_control::Controller::new(&model, opts, &state),
                out_state: state.clone(),
                out_ws: Workspace::new(&model),
            })
        });
        Ok(Simulation {
            columns: columns(&model),
            model,
            state,
            ws,
            last,
            clipped_inputs: 0,
            adaptive,
        })
    }

    /// Advances one step Δt; with adaptive steps, one accepted step of the controlled size
    /// (`model().solver.step_s` is then the step of the last attempt).
    pub fn step(&mut self) -> Result<StepReport, StepError> {
        let r = match &mut self.adaptive {
            None => step::step(&self.model, &mut self.state, &mut self.ws)?,
            Some(a) => a
                .control
                .step(&mut self.model, &mut self.state, &mut self.ws)?,
        };
        self.last = r;
        report_into_state(&self.ws, &r, &mut self.state);
        Ok(r)
    }

    /// Replaces the state (rollback, restart). The workspace's tangent is dropped and the next
    /// step restores the one the state carries (`State::tangent`), so a simulation given a
    /// clone of another's state continues bit-identically with it, whatever either did before.
    /// The output row follows the new state at once: the element outputs and marker positions
    /// are evaluated at it again (`element_energy::refresh`), and the values of the evaluation
    /// that produced it come with it (`State::reported`), so [`Simulation::output_row`] is the
    /// row the state had when it was current, bit for bit.
    pub fn set_state(&mut self, state: State) {
        self.state = state;
        if let Some(a) = &mut self.adaptive {
            a.control.restart(&self.state);
        }
        self.ws.tangent_valid = false;
        self.ws.tangent_id = u64::MAX;
        // a state that no simulation has reported on (built by `initialization::initialize`):
        // its values from an evaluation at it, as `Simulation::new` does
        let (r, nc) = (&self.state.reported, self.model.n_cylinders());
        if r.cylinder.len() != nc
            || r.cylinder_friction_n.len() != nc
            || r.joint_friction.len() != self.model.joint_friction.len()
        {
            evaluate_reported(&self.model, &mut self.state, &mut self.ws);
        }
        let b = &mut self.ws.buffers;
        crate::pipeline::element_energy::refresh(
            &self.model,
            &self.state,
            &mut b.element_kin,
            &mut b.element_values,
            &b.ev.mechanical_elements,
        );
        let r = &self.state.reported;
        self.last = StepReport {
            iterations: r.iterations,
            cavitation_onsets: 0,
            kinetic_j: r.kinetic_j,
            potential_j: r.potential_j,
            constraint_violation: r.constraint_violation,
        };
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
        // a 4/3 or bridge valve driven by it clips the value to its input range
        // (`Valve43::clip`, `BridgeValve::clip`): count it
        let clipped = self
            .model
            .elements()
            .iter()
            .any(|e| e.clips_input(i, value));
        if clipped {
            self.clipped_inputs += 1;
        }
        self.state.inputs.overrides[i] = Some(value);
        step::sample_inputs(&self.model, &mut self.state);
        Ok(())
    }

    /// How many values [`Simulation::set_input`] was given that a 4/3 valve (or bridge valve)
    /// driven by that input clips to its `input_range_v` (`input_range`) (the valve uses the nearest bound; a value is never passed
    /// through outside the range). Zero when no value was clipped.
    pub fn clipped_inputs(&self) -> u64 {
        self.clipped_inputs
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
    /// The workspace (buffers and counters).
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
        drift_j(&self.model, &self.state, &self.last)
    }
    /// Name of volume `i`.
    pub fn volume_name(&self, i: usize) -> &str {
        &self.model.volume_names[i]
    }

    /// Output column labels, `time` first.
    pub fn output_labels(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.label.clone()).collect()
    }

    /// Number of output columns.
    pub fn n_outputs(&self) -> usize {
        self.columns.len()
    }

    /// `Err` naming the first output of `row` (filled by [`Simulation::output_row`] at the
    /// current state) that is not finite, with the time and step: an output of a step that
    /// converged can still overflow (a shaft power of a speed typed 1e201 rad/s), and a front-end
    /// that writes results treats it as a failed step rather than write NaN or inf silently.
    pub fn check_outputs(&self, row: &[f64]) -> Result<(), StepError> {
        match row.iter().position(|x| !x.is_finite()) {
            None => Ok(()),
            Some(k) => Err(StepError::NonFinite {
                time_s: self.time_s(),
                step: self.step_index(),
                equation: format!(
                    "output {} = {}",
                    self.columns.get(k).map_or("?", |c| c.label.as_str()),
                    row[k]
                ),
            }),
        }
    }

    /// Whether the steps are adaptive (`solver.step_control = "adaptive"`).
    pub fn is_adaptive(&self) -> bool {
        self.adaptive.is_some()
    }

    /// The counts of the adaptive steps (accepted, rejected, smallest and largest step);
    /// `None` at fixed steps.
    pub fn step_statistics(&self) -> Option<step_control::StepStatistics> {
        self.adaptive.as_ref().map(|a| a.control.statistics())
    }

    /// Advances to time `t_s` [s] and writes the output row at `t_s` into `row` (in the order
    /// of [`Simulation::output_labels`]). With adaptive steps, it steps until the state's time
    /// reaches `t_s` and interpolates the row by the dense output
    /// (`pipeline::step_control`), so the rows do not depend on the steps taken; `t_s` must
    /// not be before the start of the last accepted step. At fixed steps, it steps while the
    /// time is more than half a step before `t_s` and writes the row of the state reached.
    /// Returns the report of the last step taken, with the cavitation onsets of every step
    /// taken (the initial diagnostics when no step was needed).
    pub fn advance_to(&mut self, t_s: f64, row: &mut [f64]) -> Result<StepReport, StepError> {
        let mut report = self.last;
        report.cavitation_onsets = 0;
        let mut onsets = 0;
        let reached = |sim: &Simulation| match &sim.adaptive {
            Some(_) => sim.state.t_s >= t_s,
            None => sim.state.t_s >= t_s - 0.5 * sim.model.solver.step_s,
        };
        while !reached(self) {
            report = self.step()?;
            onsets |= report.cavitation_onsets;
        }
        report.cavitation_onsets = onsets;
        match &mut self.adaptive {
            None => self.output_row(row),
            Some(a) => {
                let Adaptive {
                    control,
                    out_state,
                    out_ws,
                } = &mut **a;
                let m = &self.model;
                control.interpolate(m, &self.state, t_s, out_state);
                // the output's own evaluation at the interpolated state, as `set_state` does
                step::sample_element_inputs(m, out_state, out_ws);
                let mut last = evaluate_reported(m, out_state, out_ws);
                last.iterations = self.last.iterations;
                out_state.reported.iterations = self.last.iterations;
                let b = &mut out_ws.buffers;
                crate::pipeline::element_energy::refresh(
                    m,
                    out_state,
                    &mut b.element_kin,
                    &mut b.element_values,
                    &b.ev.mechanical_elements,
                );
                row_at(m, &self.columns, out_state, out_ws, &last, row);
            }
        }
        Ok(report)
    }

    /// One output row in the order of [`Simulation::output_labels`].
    pub fn output_row(&self, row: &mut [f64]) {
        row_at(
            &self.model,
            &self.columns,
            &self.state,
            &self.ws,
            &self.last,
            row,
        );
    }

    /// The global pose of every body at the current state, in model order (`Model::bodies`),
    /// into `out` (its length is the number of bodies; extra entries are left alone). A point
    /// with reference-configuration coordinates r̄ on body i is at x + A r̄ (000 eq. 1), the
    /// pose of the link frame the body moves with; the marker columns use the same kinematics
    /// (`Kinematics::positions` of the relative coordinates z, which every formulation keeps
    /// current). Allocates nothing; it rewrites the link poses of the element stage's
    /// kinematics buffer at the same z, so results are unchanged.
    pub fn body_poses(&mut self, out: &mut [BodyPose]) {
        let kin = &mut self.ws.buffers.element_kin;
        kin.positions(&self.model, &self.state.z);
        for (pose, body) in out.iter_mut().zip(&self.model.bodies) {
            let (a, x) = (kin.frame_rot(body.frame), kin.frame_pos(body.frame));
            *pose = BodyPose {
                position_m: [x.x, x.y, x.z],
                rotation: [
                    [a[(0, 0)], a[(0, 1)], a[(0, 2)]],
                    [a[(1, 0)], a[(1, 1)], a[(1, 2)]],
                    [a[(2, 0)], a[(2, 1)], a[(2, 2)]],
                ],
            };
        }
    }
}

/// The diagnostics of the state `st` at rest of a step (the initial state): the model evaluated
/// at (z, ż, p) into `ws`, KE, PE and ‖Φ‖ from it, and `st.reported` sized for the model and
/// filled ([`report_into_state`]). Allocates: called by [`Simulation::new`] and for a state
/// without reported values, never in the step loop.
fn evaluate_reported(model: &Model, st: &mut State, ws: &mut Workspace) -> StepReport {
    let spool = st.spool.clone();
    ws.ev.fstate.copy_from_slice(&st.friction);
    ws.ev.internal.copy_from_slice(&st.internal);
    ws.ev.evaluate(model, &st.z, &st.zd, &st.p, &spool, false);
    let mut last = StepReport::default();
    crate::mechanics::advance::energies_and_violation(model, &ws.ev, &st.zd, &mut last);
    // sized here; `report_into_state` overwrites them in place after every step
    let r = &mut st.reported;
    r.cylinder = vec![[0.0; 3]; model.n_cylinders()];
    r.cylinder_friction_n = vec![0.0; model.n_cylinders()];
    r.joint_friction = vec![0.0; model.joint_friction.len()];
    report_into_state(ws, &last, st);
    last
}

/// The values of the formulation's last evaluation in `ws` and of the step's `report` that the
/// output row reads, into `st.reported` (sized by [`Simulation::new`]; allocates nothing).
fn report_into_state(ws: &Workspace, report: &StepReport, st: &mut State) {
    let r = &mut st.reported;
    r.iterations = report.iterations;
    r.kinetic_j = report.kinetic_j;
    r.potential_j = report.potential_j;
    r.constraint_violation = report.constraint_violation;
    for (c, out) in r.cylinder.iter_mut().enumerate() {
        let m = ws.ev.motion[c];
        *out = [m.s, m.sd, ws.ev.cylinder_force[c]];
    }
    r.cylinder_friction_n.copy_from_slice(&ws.ev.friction_force);
    r.joint_friction
        .copy_from_slice(&ws.ev.joint_friction_force);
}

/// The output row of state `st` (with the workspace `ws` that evaluated it and its diagnostics
/// `last`) in the order of `columns`: [`Simulation::output_row`], and the dense-output rows of
/// [`Simulation::advance_to`].
fn row_at(
    model: &Model,
    columns: &[Column],
    st: &State,
    ws: &Workspace,
    last: &StepReport,
    row: &mut [f64],
) {
    let m = model;
    let (vals, acc) = (&ws.element_values, &st.elements);
    // the outputs of one element at a time, computed at its first column
    let mut buf = [0.0; crate::elements::element::MAX_OUTPUTS];
    let mut buffered = None;
    let (mut cylinder_buf, mut cylinder_buffered) =
        ([0.0; crate::elements::element::MAX_OUTPUTS], None);
    for (out, c) in row.iter_mut().zip(columns) {
        *out = match c.source {
            Source::Time => st.t_s,
            Source::Coordinate(i) => st.z[i],
            Source::Rate(i) => st.zd[i],
            Source::Pressure(v) => st.p[v],
            Source::ValvePosition(i) => st.spool[i],
            Source::Input(i) => st.inputs.u_used[i],
            Source::CylinderOutput { cylinder, k } => {
                if cylinder_buffered != Some(cylinder) {
                    // the port state and force of the formulation's last evaluation
                    let [s, sd, force] = st.reported.cylinder[cylinder];
                    let mut e = PortEffort::zero();
                    e.force = force;
                    let cyl = m.cylinder(cylinder);
                    // the chamber pressures, for its `power_w`
                    let nodes = crate::elements::element::Element::ports(cyl).nodes;
                    let at = PortState {
                        s,
                        sd,
                        ..crate::circuit::node_port_state(m, &st.p, &nodes)
                    };
                    crate::elements::element::Element::outputs(cyl, &at, &e, &mut cylinder_buf);
                    cylinder_buffered = Some(cylinder);
                }
                cylinder_buf[k]
            }
            Source::CylinderWork(c) => st.actuator_work_j[c],
            Source::KineticEnergy => last.kinetic_j,
            Source::PotentialEnergy => last.potential_j - st.potential0_j,
            Source::ActuatorWork => st.total_actuator_work_j(),
            Source::Drift => drift_j(m, st, last),
            Source::ConstraintViolation => last.constraint_violation,
            Source::Iterations => last.iterations as f64,
            Source::FrictionDissipated => st.total_friction_dissipated_j(),
            Source::CylinderFriction(c) => st.reported.cylinder_friction_n[c],
            Source::JointFriction(j) => st.reported.joint_friction[j],
            Source::FrictionState(o) => st.friction[o],
            Source::ElementOutput { element, k } => {
                if buffered != Some(element) {
                    let e = &m.elements()[element];
                    if m.element_every_step[element] {
                        e.outputs(&vals.at[element], &vals.effort[element], &mut buf);
                    } else {
                        // a hydraulic element: evaluated here, at the state
                        let at =
                            crate::pipeline::element_energy::hydraulic_port_state(m, st, element);
                        e.outputs(&at, &e.evaluate(&at), &mut buf);
                    }
                    buffered = Some(element);
                }
                buf[k]
            }
            Source::ElementStored(i) => acc.stored_j[i],
            Source::ElementDissipated(i) => acc.dissipated_j[i],
            Source::ElementSupplied(i) => acc.supplied_j[i],
            Source::ElementHits(i) => f64::from(acc.hits[i].hits),
            Source::ElementHitForce(i) => acc.hits[i].last_hit_force_n,
            Source::ElementPeakForce(i) => acc.hits[i].peak_force_n,
            Source::Partition => crate::formulations::double_step::first_independent(m, st),
            Source::Marker(i, axis) => ws.buffers.element_kin.point(&m.output_markers[i].1)[axis],
        };
    }
}

/// [`Simulation::energy_drift_j`] of state `st` with diagnostics `last` [J].
fn drift_j(model: &Model, st: &State, last: &StepReport) -> f64 {
    // only mechanical elements have a share (read every step: skip the walk without one)
    let elements_j = if model.has_mechanical_elements {
        super::element_energy::mechanical_drift_j(&st.elements, model.elements())
    } else {
        0.0
    };
    last.kinetic_j + last.potential_j - st.total_actuator_work_j()
        + st.total_friction_dissipated_j()
        + elements_j
        - st.energy0_j
}

//! Linearization and eigen-analysis of the coupled constrained system (paper 001, Agúndez et al.
//! 2023; reference note 001 A.3–A.5).
//!
//! ```text
//!   equilibrium ──▶ OperatingPoint ──▶ exact (001 §3, steps 1–7) ──▶ StateSpace (A, B, C, D)
//!   (or a State of a run)          └──▶ finite_difference (001 §4.5) ──▶ StateSpace
//!                                                             eigen ──▶ modes, ω_n, ζ, shapes
//!   shared by both methods:  derivatives (exact first derivatives, output rows C)
//!                            index1 (the index-1 right-hand side F(X) of 001 eq. 98)
//! ```
//! * [`equilibrium`]: static equilibrium of mechanism and hydraulics together (positions,
//!   multipliers, pressures, spools) with chosen coordinates held and prescribed pressures.
//! * [`exact`]: the paper's method in independent coordinates: holonomic constraints eliminated
//!   exactly with the multiplier-contracted Hessian ∂(Φ_zᵀλ⁰)/∂z, hydraulic states appended.
//!   Derivatives are exact (dual numbers through the same `Evaluator` the simulator uses).
//! * [`finite_difference`]: the conventional counterpart: central differences of the index-1
//!   right-hand side in all coordinates, with its spurious zero eigenvalues.
//! * [`derivatives`]: exact first derivatives of every term at the reference (dual numbers),
//!   the spool-law partials and the output rows; used by both methods.
//! * [`index1`]: the index-1 right-hand side F(X), the model's own nonlinear equations that the
//!   finite-difference method differentiates and that A is checked against.
//! * [`eigen`]: eigenvalues, natural frequencies, damping ratios, mode shapes mapped back to every
//!   coordinate, rate, pressure and spool; zero eigenvalues counted and the spurious ones labelled.
//! * [`dispersion`]: what a fixed trapezoidal step does to the lightly damped modes (frequency
//!   warping, phase error per period and over a run) and a step that bounds it.
//!
//! Every state, input and output has a name: `phi2`, `phi2.rate`, `V1.p`, `DCV.spool`,
//! `cylinder.bristle_m`, `cylinder.film`, `relief.poppet`, `DCV.u_ref`, `phi2.force`,
//! `cylinder.length`, `cylinder.force`.
//!
//! Friction states w (LuGre bristle q, modified-LuGre film h; 003 Pub II eqs. 25–34) of cylinder
//! seals and of joints are states of the index-1 system, ẇ = u(v, w): both methods linearize
//! them, after the spools, in the layout of `State::friction` (cylinders, then joints).
//!
//! The elements' internal states e (`Element::n_internal`, block e of `Model::layout`; the relief
//! valve's poppet opening `relief.poppet`) are states too, ė = g(e, p, …) from the element's own
//! law (`PortEffort::internal_rate`): both methods linearize them last, after w, in the layout of
//! `State::internal`.

pub mod derivatives;
pub mod dispersion;
pub mod eigen;
pub mod equilibrium;
pub mod exact;
pub mod finite_difference;
pub mod index1;
pub mod response;

use nalgebra::DMatrix;
use thiserror::Error;

use crate::model::{Friction, Model};
use crate::state::State;

/// Errors of the linearization module.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum LinearizeError {
    /// The model uses a feature the linearization does not cover yet.
    #[error("linearization does not support {0}")]
    Unsupported(String),
    /// A name given for an input or an output is unknown.
    #[error("unknown {kind} '{name}'; expected one of: {expected}")]
    UnknownName {
        /// "input" or "output".
        kind: &'static str,
        /// The name given.
        name: String,
        /// The accepted names.
        expected: String,
    },
    /// The loop-closure equations could not be solved with the held coordinates.
    #[error("the loop does not close with {held} held: |Φ| = {violation:.3e} after {iterations} iterations")]
    LoopCannotClose {
        /// Names of the held coordinates.
        held: String,
        /// ‖Φ‖.
        violation: f64,
        /// Iterations done.
        iterations: usize,
    },
    /// No equilibrium satisfies the prescribed values.
    #[error("no static equilibrium: {0}")]
    NoEquilibrium(String),
    /// The coordinate partition is singular at the operating point.
    #[error("singular coordinate partition: {0}")]
    SingularPartition(String),
    /// The eigen-solver failed.
    #[error("eigen-decomposition failed: {0}")]
    Eigen(String),
}

/// The reference solution (x⁰, ẋ⁰, ẍ⁰, Λ⁰, p⁰, U⁰) of 001 eq. 21, in the simulator's relative
/// coordinates z.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatingPoint {
    /// Time of the point [s] (input signals are read here).
    pub t_s: f64,
    /// z⁰ [rad or m].
    pub z: Vec<f64>,
    /// ż⁰.
    pub zd: Vec<f64>,
    /// z̈⁰.
    pub zdd: Vec<f64>,
    /// p⁰ [Pa].
    pub p: Vec<f64>,
    /// Valve positions in the layout of `State::spool`: the 4/3 spools U⁰ (states), then the
    /// pumps' shaft speeds ω⁰ [rad/s] (held inputs, [`pumps`]).
    pub spool: Vec<f64>,
    /// Multipliers Λ⁰: the m loop-closure equations, then the l nonholonomic rows [N or N m].
    pub lambda: Vec<f64>,
    /// Friction states w⁰ in the layout of `State::friction`: cylinders, then friction joints;
    /// LuGre bristle q [m], modified-LuGre bristle q [m] and film h [-] (003 Pub II).
    pub friction: Vec<f64>,
    /// Internal states e⁰ of the elements in the layout of `State::internal`
    /// (`Layout::internal`) [unit of `Element::describe_internal`, e.g. the relief valve's poppet
    /// opening [-]]; at a static equilibrium their steady values (`Element::steady_internal`).
    pub internal: Vec<f64>,
}

impl OperatingPoint {
    /// The point of a simulation state (`--at-time T`).
    pub fn from_state(state: &State) -> Self {
        OperatingPoint {
            t_s: state.t_s,
            z: state.z.clone(),
            zd: state.zd.clone(),
            zdd: state.zdd.clone(),
            p: state.p.clone(),
            spool: state.spool.clone(),
            lambda: state.lambda.clone(),
            friction: state.friction.clone(),
            internal: state.internal.clone(),
        }
    }
}

/// An input of the linear model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSel {
    /// The reference signal U_ref of 4/3 valve `i` (enters U̇ = (U_ref − U)/τ, 001 eq. 4).
    ValveReference(usize),
    /// A generalized force on relative coordinate `k` [N m or N] (e.g. the torque M2 on φ2).
    CoordinateForce(usize),
    /// Model input signal `i` (index into `Model::inputs`) that scales external-load elements
    /// (`joint_force`, `torque`, `point_force`, effort = u(t)·value): its column of B is
    /// M0⁻¹ T0ᵀ ∂Q′/∂u (001 eq. 61 with the load in Q), e.g. the torque M2 of 001 eq. 92.
    ElementSignal(usize),
    /// The shaft speed ω of pump `k` (`pumps(model)[k]`, held over each step, not a state)
    /// [rad/s]: its column of B is ∂ṗ/∂ω (and ∂ė/∂ω of a swash-plate lag), the pump's flow law
    /// differentiated in its speed.
    PumpSpeed(usize),
}

/// An output of the linear model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputSel {
    /// Joint coordinate z_k.
    Coordinate(usize),
    /// Joint rate ż_k.
    Rate(usize),
    /// Volume pressure p_v.
    Pressure(usize),
    /// Spool position of 4/3 valve `i`.
    Spool(usize),
    /// Pin-to-pin length of cylinder `c`.
    CylinderLength(usize),
    /// Net force of cylinder `c`.
    CylinderForce(usize),
    /// Friction state `k` of w (layout of `State::friction`): a bristle deflection [m] or a
    /// film [-].
    FrictionState(usize),
    /// Internal state `k` of the elements (layout of `State::internal`, e.g. `relief.poppet`)
    /// [unit of `Element::describe_internal`].
    InternalState(usize),
}

/// Names of the full (dependent) variable set (z, ż, p, U, w, e): the space mode shapes map back
/// to.
pub fn full_names(model: &Model) -> Vec<String> {
    let l = &model.layout;
    let mut v: Vec<String> = l.names[l.z.clone()].to_vec();
    v.extend(l.names[l.z.clone()].iter().map(|z| format!("{z}.rate")));
    v.extend_from_slice(&l.names[l.p.clone()]);
    v.extend(valves(model).iter().map(|v| format!("{}.spool", v.name)));
    v.extend(friction_state_names(model));
    v.extend(internal_state_names(model));
    v
}

/// Where a friction element acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrictionPort {
    /// The seal of cylinder `c` (velocity ṡ_c).
    Cylinder(usize),
    /// Joint friction element `j` on coordinate `axis` (velocity ż_axis).
    Joint {
        /// Index into `Model::joint_friction`.
        j: usize,
        /// The coordinate.
        axis: usize,
    },
}

/// A friction element and its states in w.
#[derive(Debug, Clone)]
pub(crate) struct FrictionElement<'a> {
    /// Cylinder or joint name (the prefix of its state names).
    pub name: &'a str,
    /// The law.
    pub law: &'a Friction,
    /// Where it acts.
    pub port: FrictionPort,
    /// Its states in w.
    pub states: std::ops::Range<usize>,
}

/// Every friction element with its state offset, in the layout of `State::friction`
/// (`Model::layout`): the cylinder seals, then the friction joints.
pub(crate) fn friction_elements(model: &Model) -> Vec<FrictionElement<'_>> {
    use crate::model::layout::FrictionOwner;
    model
        .layout
        .friction
        .iter()
        .map(|b| FrictionElement {
            name: &b.name,
            law: b.owner.law(model),
            port: match b.owner {
                FrictionOwner::Cylinder(c) => FrictionPort::Cylinder(c.0),
                FrictionOwner::Joint { index, axis } => FrictionPort::Joint {
                    j: index,
                    axis: axis.0,
                },
            },
            states: b.states.clone(),
        })
        .collect()
}

/// Names of the friction states w, `<cylinder or joint>.<state>` with the state names of
/// [`crate::elements::friction::state_names`] (`cylinder.bristle_m`, `cylinder.film`): the layout's.
pub fn friction_state_names(model: &Model) -> Vec<String> {
    model.layout.friction_state_names().to_vec()
}

/// Names of the elements' internal states e (`relief.poppet`): the layout's, from
/// `Element::describe_internal`.
pub fn internal_state_names(model: &Model) -> Vec<String> {
    model.layout.names[model.layout.internal.clone()].to_vec()
}

/// Name of an input.
pub fn input_name(model: &Model, i: InputSel) -> String {
    match i {
        InputSel::ValveReference(v) => format!("{}.u_ref", valves(model)[v].name),
        InputSel::CoordinateForce(k) => format!("{}.force", model.axes[k].name),
        InputSel::ElementSignal(i) => model.input_names[i].clone(),
        InputSel::PumpSpeed(k) => held_position_name(pumps(model)[k]),
    }
}

/// Name of an output.
pub fn output_name(model: &Model, o: OutputSel) -> String {
    match o {
        OutputSel::Coordinate(k) => model.axes[k].name.clone(),
        OutputSel::Rate(k) => format!("{}.rate", model.axes[k].name),
        OutputSel::Pressure(v) => format!("{}.p", model.volume_names[v]),
        OutputSel::Spool(i) => format!("{}.spool", valves(model)[i].name),
        OutputSel::CylinderLength(c) => format!("{}.length", model.cylinder(c).name),
        OutputSel::CylinderForce(c) => format!("{}.force", model.cylinder(c).name),
        OutputSel::FrictionState(k) => friction_state_names(model)[k].clone(),
        OutputSel::InternalState(k) => internal_state_names(model)[k].clone(),
    }
}

/// Every input: each valve reference, then a generalized force on each coordinate, then each
/// input signal that drives external-load elements (and no valve), then each pump's shaft speed.
pub fn all_inputs(model: &Model) -> Vec<InputSel> {
    (0..valves(model).len())
        .map(InputSel::ValveReference)
        .chain((0..model.n_coords()).map(InputSel::CoordinateForce))
        .chain(
            element_signals(model)
                .into_iter()
                .map(InputSel::ElementSignal),
        )
        .chain((0..pumps(model).len()).map(InputSel::PumpSpeed))
        .collect()
}

/// Whether element `e` is an external load (`joint_force`, `torque`, `point_force`): a
/// mechanical effort u·value with no port state, linear in its input u.
fn is_external_load(e: &crate::elements::component::Component) -> bool {
    matches!(e, crate::elements::component::Component::ExternalLoad(_))
}

/// Input signals (indices into `Model::inputs`) that drive at least one element and no 4/3
/// valve, ascending; a pump's speed signal is not one (its input is [`InputSel::PumpSpeed`]).
pub fn element_signals(model: &Model) -> Vec<usize> {
    let valves: Vec<usize> = valves(model).iter().map(|v| v.input).collect();
    let mut out: Vec<usize> = model
        .elements()
        .iter()
        .filter(|e| !is_held_position(e))
        .filter_map(|e| e.ports().input)
        .filter(|i| !valves.contains(i))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Sets the elements' input values of `ev` to the model's signals at time `t` [s]
/// (`element::signal_value`): every evaluator the linearization builds reads the loads at the
/// operating time, not at t = 0.
pub fn set_element_time<S: crate::solver::real::Real>(
    model: &Model,
    ev: &mut crate::mechanics::assembly::Evaluator<S>,
    t: f64,
) {
    for (u, e) in ev.element_u.iter_mut().zip(model.elements().iter()) {
        *u = crate::elements::component::signal_value(&model.inputs, e, t);
    }
}

/// A new evaluator with the elements' input values at time `t` [s] ([`set_element_time`]).
pub(crate) fn evaluator_at<S: crate::solver::real::Real>(
    model: &Model,
    t: f64,
) -> crate::mechanics::assembly::Evaluator<S> {
    let mut ev = crate::mechanics::assembly::Evaluator::<S>::new(model);
    set_element_time(model, &mut ev, t);
    ev
}

/// ∂Q′/∂u of input signal `input` at `pt`: the generalized forces (relative coordinates) per
/// unit of the signal, summed over the elements it drives [N m or N per unit]. Only external
/// loads (effort = u·value, exactly linear in u) may be driven by a linearization input; any
/// other element on the signal is rejected by name.
pub(crate) fn element_signal_force(
    model: &Model,
    pt: &OperatingPoint,
    input: usize,
) -> Result<Vec<f64>, LinearizeError> {
    let driven: Vec<usize> = (0..model.elements().len())
        .filter(|&i| model.elements()[i].ports().input == Some(input))
        .collect();
    if let Some(&i) = driven
        .iter()
        .find(|&&i| !is_external_load(&model.elements()[i]))
    {
        return Err(LinearizeError::Unsupported(format!(
            "the input '{}' of element '{}' (only external loads, linear in their input, can be \
             linearization inputs)",
            model.input_names[input],
            model.elements()[i].name()
        )));
    }
    let mut ev = evaluator_at::<f64>(model, pt.t_s);
    let q = |ev: &mut crate::mechanics::assembly::Evaluator<f64>, du: f64| -> Vec<f64> {
        for &i in &driven {
            ev.element_u[i] = crate::elements::component::signal_value(
                &model.inputs,
                &model.elements()[i],
                pt.t_s,
            ) + du;
        }
        ev.fstate.copy_from_slice(&pt.friction);
        ev.internal.copy_from_slice(&pt.internal);
        ev.evaluate(model, &pt.z, &pt.zd, &pt.p, &pt.spool, false);
        ev.dynamics.force.clone()
    };
    let qp = q(&mut ev, 1.0);
    let qm = q(&mut ev, -1.0);
    Ok(qp
        .iter()
        .zip(qm.iter())
        .map(|(a, b)| 0.5 * (a - b))
        .collect())
}

/// Every output: coordinates, rates, pressures, spools, cylinder lengths and forces, friction
/// states, internal states of the elements.
pub fn all_outputs(model: &Model) -> Vec<OutputSel> {
    let mut v: Vec<OutputSel> = (0..model.n_coords()).map(OutputSel::Coordinate).collect();
    v.extend((0..model.n_coords()).map(OutputSel::Rate));
    v.extend((0..model.n_volumes()).map(OutputSel::Pressure));
    v.extend((0..valves(model).len()).map(OutputSel::Spool));
    v.extend((0..model.n_cylinders()).map(OutputSel::CylinderLength));
    v.extend((0..model.n_cylinders()).map(OutputSel::CylinderForce));
    v.extend((0..model.n_friction_states()).map(OutputSel::FrictionState));
    v.extend((0..model.layout.internal.len()).map(OutputSel::InternalState));
    v
}

/// Parses an input name (`DCV.u_ref`, the valve's signal name such as `U`, `phi2.force`, or the
/// name of a signal driving external loads such as `M2`).
pub fn parse_input(model: &Model, s: &str) -> Result<InputSel, LinearizeError> {
    for (i, v) in valves(model).iter().enumerate() {
        if s == format!("{}.u_ref", v.name) || s == model.input_names[v.input] {
            return Ok(InputSel::ValveReference(i));
        }
    }
    for (k, a) in model.axes.iter().enumerate() {
        if s == format!("{}.force", a.name) {
            return Ok(InputSel::CoordinateForce(k));
        }
    }
    if let Some(i) = element_signals(model)
        .into_iter()
        .find(|&i| model.input_names[i] == s)
    {
        return Ok(InputSel::ElementSignal(i));
    }
    if let Some(k) = pumps(model).iter().position(|e| {
        s == held_position_name(e)
            || e.ports().input.map(|i| &model.input_names[i]) == Some(&s.to_string())
    }) {
        return Ok(InputSel::PumpSpeed(k));
    }
    Err(LinearizeError::UnknownName {
        kind: "input",
        name: s.to_string(),
        expected: all_inputs(model)
            .into_iter()
            .map(|i| input_name(model, i))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Parses an output name (`phi2`, `phi2.rate`, `V1.p` or `V1`, `DCV.spool`, `cylinder.length`,
/// `cylinder.force`, `cylinder.bristle_m`, `relief.poppet`).
pub fn parse_output(model: &Model, s: &str) -> Result<OutputSel, LinearizeError> {
    for o in all_outputs(model) {
        if output_name(model, o) == s {
            return Ok(o);
        }
    }
    if let Some(v) = model.volume_names.iter().position(|n| n == s) {
        return Ok(OutputSel::Pressure(v));
    }
    Err(LinearizeError::UnknownName {
        kind: "output",
        name: s.to_string(),
        expected: all_outputs(model)
            .into_iter()
            .map(|o| output_name(model, o))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// A linear time-invariant model ẋ = A x + B u, y = C x + D u with named states, inputs and
/// outputs. x, u, y are variations about the operating point.
#[derive(Debug, Clone, PartialEq)]
pub struct StateSpace {
    /// State matrix A (the paper's J, 001 eq. 61).
    pub a: DMatrix<f64>,
    /// Input matrix B.
    pub b: DMatrix<f64>,
    /// Output matrix C.
    pub c: DMatrix<f64>,
    /// Feed-through D.
    pub d: DMatrix<f64>,
    /// State names.
    pub states: Vec<String>,
    /// Input names.
    pub inputs: Vec<String>,
    /// Output names.
    pub outputs: Vec<String>,
    /// Map from the state to the full variable set (z̃, ż̃, p̃, Ũ, w̃, ẽ) named by [`full_names`]
    /// (n_full × n_states): mode shapes are mapped back with it.
    pub to_full: DMatrix<f64>,
    /// Number of joint coordinates at the head of the full variable set (mode shapes are
    /// normalized by their largest coordinate entry).
    pub n_full_coords: usize,
    /// Number of zero eigenvalues that the formulation adds and that are not physical
    /// (l for the exact method with l nonholonomic constraints, 2·rank Φ_z for the
    /// finite-difference counterpart, 001 §4.5).
    pub n_spurious_zero: usize,
}

/// Coordinate partition (001 eqs. 29–31): independent coordinates z_i, dependent z_d, and the
/// independent rows of Φ_z (redundant loop-closure rows, e.g. a 3-D revolute cut joint closing a
/// planar loop, are dropped).
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    /// Independent coordinates, ascending.
    pub independent: Vec<usize>,
    /// Dependent coordinates.
    pub dependent: Vec<usize>,
    /// Independent rows of Φ_z, as many as `dependent`.
    pub rows: Vec<usize>,
    /// Dependent admissible coordinates x_ad of the nonholonomic rows (001 eq. 29): their rates
    /// follow from B ż = 0, their values are states (empty without nonholonomic constraints).
    pub nonholonomic_dependent: Vec<usize>,
}

fn rank_of(a: &DMatrix<f64>, scale: f64) -> usize {
    if a.nrows() == 0 || a.ncols() == 0 {
        return 0;
    }
    let sv = crate::solver::linalg::singular_values(a);
    sv.iter().filter(|&&s| s > 1e-9 * scale).count()
}

/// Chooses the partition at Φ_z = `jac` (m × n): the dependent coordinates are picked from the
/// last coordinate backwards (coordinates in `keep` last of all), each one taken when it raises
/// the rank; so the first joints of the tree, usually the driven ones, stay independent.
pub fn partition(jac: &DMatrix<f64>, keep: &[usize]) -> Partition {
    let (m, n) = jac.shape();
    let scale = jac.amax().max(1e-300);
    let r = rank_of(jac, scale);
    let mut order: Vec<usize> = (0..n).rev().filter(|k| !keep.contains(k)).collect();
    order.extend(keep.iter().rev().copied());
    let mut dep: Vec<usize> = Vec::new();
    for &k in &order {
        if dep.len() == r {
            break;
        }
        let mut trial = dep.clone();
        trial.push(k);
        if rank_of(&jac.select_columns(trial.iter()), scale) > dep.len() {
            dep = trial;
        }
    }
    dep.sort_unstable();
    let cols = jac.select_columns(dep.iter());
    let mut rows: Vec<usize> = Vec::new();
    for i in 0..m {
        if rows.len() == r {
            break;
        }
        let mut trial = rows.clone();
        trial.push(i);
        if rank_of(&cols.select_rows(trial.iter()), scale) > rows.len() {
            rows = trial;
        }
    }
    let independent = (0..n).filter(|k| !dep.contains(k)).collect();
    Partition {
        independent,
        dependent: dep,
        rows,
        nonholonomic_dependent: Vec::new(),
    }
}

/// The valves whose position is a state of the linearization: the elements whose position has
/// a rate law (`Element::position_has_rate`, the 4/3 valves' spools U), in element order. Their
/// positions are `State::spool[..nu]`: the other valve positions (bridge valves) are rejected by
/// [`check_supported`]. Allocates; not in a step.
pub(crate) fn valves(model: &Model) -> Vec<&crate::model::Valve43> {
    model.valves_4_3().collect()
}

/// The reference signals u of the 4/3 valves at time `t_s` (allocates; not in a step).
pub(crate) fn valve_references(model: &Model, t_s: f64) -> Vec<f64> {
    valves(model)
        .iter()
        .map(|v| model.inputs[v.input].value(t_s))
        .collect()
}

/// Whether element `e` has a valve position without a rate law: a pump's shaft speed, set from
/// its input and held over each step (`Element::advance_position`).
fn is_held_position(e: &crate::elements::component::Component) -> bool {
    use crate::elements::element::Element;
    e.n_position() > 0 && !e.position_has_rate()
}

/// The name of a held position as the element describes it (`pump.speed`, `fcv.opening`).
fn held_position_name(e: &crate::elements::component::Component) -> String {
    use crate::elements::element::Element;
    let mut v = Vec::new();
    e.describe_position(&mut v);
    v.pop()
        .map(|v| v.name)
        .unwrap_or_else(|| e.name().to_string())
}

/// The pumps (fixed and pressure-compensated) and the other elements whose valve position is a held
/// input (their shaft speed ω), in element order. Their positions are `State::spool[nu..]`
/// after the 4/3 spools (`check_supported` rejects another order). Allocates; not in a step.
pub fn pumps(model: &Model) -> Vec<&crate::elements::component::Component> {
    model
        .elements()
        .iter()
        .filter(|e| is_held_position(e))
        .collect()
}

/// The pumps' shaft speeds ω at time `t_s` [rad/s]: their inputs' values, as the step holds them
/// (`Element::advance_position` of a pump). Allocates; not in a step.
pub(crate) fn pump_speeds(model: &Model, t_s: f64) -> Vec<f64> {
    pumps(model)
        .iter()
        .map(|e| {
            // the position the step holds for the input's value (a pump: the value itself; a
            // flow control valve: clamped to [0, 1])
            e.ports().input.map_or(0.0, |i| {
                crate::elements::element::Element::initial_position(
                    *e,
                    0.0,
                    model.inputs[i].value(t_s),
                )
            })
        })
        .collect()
}

/// The inputs of the index-1 right-hand side [`index1::rhs`] at `pt`: the 4/3 valves' references
/// at `pt.t_s`, then the pumps' held speeds `pt.spool[nu..]` (allocates; not in a step).
pub fn rhs_inputs(model: &Model, pt: &OperatingPoint) -> Vec<f64> {
    let nu = valves(model).len();
    let mut u = valve_references(model, pt.t_s);
    u.extend_from_slice(&pt.spool[nu..]);
    u
}

/// Rejects what the linearization does not cover, naming it and saying what to use instead:
/// open-centre bridge valves, algebraic volumes. (Pumps are covered: their shaft speed is a held
/// input, [`InputSel::PumpSpeed`]; friction states of every law and the elements' internal
/// states are linearized.)
pub(crate) fn check_supported(model: &Model) -> Result<(), LinearizeError> {
    if let Some(v) = model.bridge_valves().next() {
        return Err(LinearizeError::Unsupported(format!(
            "the open-centre bridge valve '{}' (its opening is not a state); a closed-centre 4/3 \
             valve (`[[hydraulics.valves]]`) in its place is linearized, its spool a state",
            v.name
        )));
    }
    // a position without a rate law (a pump's shaft speed, a flow control valve's opening) is
    // an input held over the step (`InputSel::PumpSpeed`)
    use crate::elements::element::Element;
    // the spools first: the states are `State::spool[..nu]`, the held speeds the rest
    let mut held_seen = None;
    for (_, e) in model.position_elements() {
        if !e.position_has_rate() {
            held_seen.get_or_insert(e.name());
        } else if let Some(pump) = held_seen {
            return Err(LinearizeError::Unsupported(format!(
                "the valve '{}' listed after the pump '{pump}' in [[elements]] (the spools must \
                 come first); list the valve_4_3 elements before the pumps, or give the valve \
                 as a [[hydraulics.valves]] entry",
                e.name()
            )));
        }
    }
    if let Some(v) = model.hydraulics.volumes.iter().find(|v| v.algebraic) {
        return Err(LinearizeError::Unsupported(format!(
            "the algebraic (reduced) volume '{}' (its pressure is not a state); remove its \
             `algebraic = true` to linearize it as a volume with a pressure state",
            v.name
        )));
    }
    Ok(())
}

/// Independent rows of `d` (r × n), chosen in order: a row is taken when it raises the rank.
/// Redundant rows (a 3-D cut joint closing a planar loop) carry no information on z̈.
pub(crate) fn independent_rows(d: &DMatrix<f64>) -> Vec<usize> {
    let (m, _) = d.shape();
    let scale = d.amax().max(1e-300);
    let r = rank_of(d, scale);
    let mut rows: Vec<usize> = Vec::new();
    for i in 0..m {
        if rows.len() == r {
            break;
        }
        let mut trial = rows.clone();
        trial.push(i);
        if rank_of(&d.select_rows(trial.iter()), scale) > rows.len() {
            rows = trial;
        }
    }
    rows
}

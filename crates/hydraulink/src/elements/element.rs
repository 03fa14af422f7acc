//! The element model (STYLE "The element trait"): every component added since the redesign
//! speaks to the solver through ports and one small trait, and the formulations map the ports to
//! their own coordinates. An element never sees z, q or the Newton unknowns.
//!
//! ```text
//!            hydraulic node port            mechanical ports
//!   p [Pa] ──────▶ ┌─────────┐ ◀────── s, ṡ      (line between two body points)
//!                  │ element │ ◀────── r, ṙ      (a body point)
//!   Q [m³/s] ◀──── │  law    │ ◀────── q, q̇      (a joint coordinate)
//!   C [m³/Pa] ◀─── └─────────┘ ──────▶ F [N], F⃗ [N], T⃗ [N m], Q_j [N or N m]
//! ```
//!
//! * A **node port** is a hydraulic node: the pressure comes in, the flow into the node goes out
//!   (positive into the node), and an optional extra compliance ∂V/∂p [m³/Pa] that joins the
//!   node's capacitance (an accumulator).
//! * A **line port** joins two body points: the length s = |r₂ − r₁| and its rate
//!   ṡ = n·(ṙ₂ − ṙ₁) come in, a force F along n goes out (positive pushes the points apart:
//!   F n on point 2, −F n on point 1), the cylinder's convention (000 eq. 45).
//! * A **point port** is a body point: a force vector goes out, in global or body axes.
//! * A **torque port** is a body: a torque vector goes out, in global or body axes.
//! * A **joint port** is a single-axis joint: its coordinate and rate come in, a generalized
//!   force goes out.
//!
//! Every law is one scalar-generic function ([`Element::evaluate`], `f64` in the residual,
//! `Dual64` in the exact tangent), so its Jacobian comes from the same code and is checked
//! against central differences in `tests/elements/`. The closed [`crate::elements::component::Component`]
//! enum dispatches without `Box<dyn>` in the step.
//!
//! Mapping of the ports: relative coordinates in [`crate::mechanics::assembly::Evaluator`] (`elements`),
//! natural coordinates in `mechanics::global` (`element_ports`), the hydraulic nodes in
//! [`crate::circuit::component_flows`] and [`crate::circuit::pressure_rates`] for every
//! formulation. The energy stage ([`energy`]) evaluates every element at the committed state.

use nalgebra::{Matrix3, Vector3};

use crate::elements::ids::{AxisId, Frame, FramePoint, Node};
use crate::error::ModelError;
use crate::solver::real::Real;

/// Largest number of hydraulic node ports of one element (4: the P, T, A, B ports of a 4/3 or
/// bridge valve).
pub const MAX_NODES: usize = 4;

/// Largest number of outputs of one element ([`Element::outputs`]): a pump's flow, leakage or
/// displacement, shaft torque, shaft power and hydraulic power.
pub const MAX_OUTPUTS: usize = 5;

/// Largest number of internal states of one element ([`Element::n_internal`]): the slots of
/// [`PortState::internal`] and [`PortEffort::internal_rate`].
pub const MAX_INTERNAL: usize = 2;

/// Number of world values a body-port element reads frozen over a step ([`Frozen`]).
pub const MAX_FROZEN: usize = 40;

/// World state a body-port element reads, frozen over a step: written at the step boundary by
/// the stage `world` (`crate::pipeline::world`) into `State::world` and copied into the
/// evaluators with the inputs (`step::sample_element_inputs`), constant inside Newton. Its
/// meaning is the element's (a `bucket_dig`: `crate::elements::bucket_dig::slot`); all zero for the
/// elements that read none.
pub type Frozen = [f64; MAX_FROZEN];

/// The mechanical port of an element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MechPort {
    /// No mechanical port (a purely hydraulic element).
    None,
    /// A line between two body points: s and ṡ in, force along the line out.
    Line {
        /// Point 1 (a cylinder's base).
        base: FramePoint,
        /// Point 2 (a cylinder's rod).
        rod: FramePoint,
    },
    /// A body point: a force vector out.
    Point {
        /// The point.
        at: FramePoint,
        /// The force is given in the axes of the point's frame (true) or in global axes.
        body_axes: bool,
    },
    /// A body: a torque vector out.
    Torque {
        /// The body's frame.
        frame: Frame,
        /// The torque is given in body axes (true) or in global axes.
        body_axes: bool,
    },
    /// A single-axis joint: coordinate and rate in, generalized force out.
    Joint(AxisId),
    /// A body: the pose and velocity of its frame in ([`BodyPose`]), a force at a point out
    /// ([`BodyEffort`], through [`Element::evaluate_body`]); a contact.
    Body(Frame),
}

/// What a body port hands its element: the pose and velocity of the body's frame, in scalar
/// type `S` (dual in the exact tangent).
#[derive(Debug, Clone, Copy)]
pub struct BodyPose<S: Real> {
    /// Origin of the frame, global [m].
    pub origin: Vector3<S>,
    /// Rotation of the frame: body axes to global [-].
    pub rot: Matrix3<S>,
    /// Velocity of the body point at the global origin, ṡ (000 eq. 3) [m/s].
    pub v0: Vector3<S>,
    /// Angular velocity ω, global [rad/s].
    pub omega: Vector3<S>,
}

impl<S: Real> BodyPose<S> {
    /// Velocity of the body's material point at global position `r`: ṙ = ṡ + ω × r [m/s].
    #[inline]
    pub fn velocity(&self, r: &Vector3<S>) -> Vector3<S> {
        self.v0 + self.omega.cross(r)
    }
    /// Global position of the body-frame point `r_body` [m].
    #[inline]
    pub fn point(&self, r_body: &Vector3<f64>) -> Vector3<S> {
        self.origin + self.rot * crate::solver::real::v3::<S>(r_body)
    }
}

/// What a body-port element returns ([`Element::evaluate_body`]): a force `effort.vector`
/// (global [N]) at the global point `point` [m] plus a couple `torque` (global [N m]); its
/// scalar port state and efforts for the outputs (a contact: `at.s` the deepest penetration d
/// [m], `at.sd` its rate ḋ [m/s], `effort.force` the total normal force [N]); and its energy
/// account `power` at the real parts, which the energy stage takes instead of
/// [`Element::power`] (a contact at several points has more than one scalar state).
#[derive(Debug, Clone, Copy)]
pub struct BodyEffort<S: Real> {
    /// The scalar port state.
    pub at: PortState<S>,
    /// The efforts; `vector` is the force on the body, global [N].
    pub effort: PortEffort<S>,
    /// Where the force acts, global [m].
    pub point: Vector3<S>,
    /// A couple on the body, global [N m].
    pub torque: Vector3<S>,
    /// The energy account at this evaluation (real parts).
    pub power: Power,
}

impl<S: Real> BodyEffort<S> {
    /// No force (at the origin).
    pub fn zero() -> Self {
        BodyEffort {
            at: PortState::zero(),
            effort: PortEffort::zero(),
            point: Vector3::zeros(),
            torque: Vector3::zeros(),
            power: Power::default(),
        }
    }
}

/// The ports of an element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ports {
    /// Hydraulic node ports, in the order of [`PortState::p`] (unused slots `None`).
    pub nodes: [Option<Node>; MAX_NODES],
    /// The mechanical port.
    pub mech: MechPort,
    /// Index of the model input that drives the element (`Model::inputs`), if any.
    pub input: Option<usize>,
}

/// What flows into an element at one evaluation, in scalar type `S`.
#[derive(Debug, Clone, Copy)]
pub struct PortState<S> {
    /// Pressures of the node ports [Pa] (0 for unused slots).
    pub p: [S; MAX_NODES],
    /// Line length s [m], or joint coordinate [rad or m].
    pub s: S,
    /// Rate ṡ [m/s], or joint rate [rad/s or m/s].
    pub sd: S,
    /// Value of the driving input at the evaluation time [unit of the input] (1 without input).
    pub u: f64,
    /// Position of a valve, the element's internal state that is advanced before Newton (a 4/3
    /// valve's spool U [unit of its input], a bridge valve's opening κ [-]); 0 for the others.
    pub position: f64,
    /// The element's own internal states e, Newton unknowns of the step ([`Element::n_internal`]
    /// of them; unused slots 0) [unit of [`Element::describe_internal`]].
    pub internal: [S; MAX_INTERNAL],
}

impl<S: Real> PortState<S> {
    /// Everything zero, input 1.
    pub fn zero() -> Self {
        PortState {
            p: [S::zero(); MAX_NODES],
            s: S::zero(),
            sd: S::zero(),
            u: 1.0,
            position: 0.0,
            internal: [S::zero(); MAX_INTERNAL],
        }
    }
}

/// What flows out of an element at one evaluation, in scalar type `S`.
#[derive(Debug, Clone, Copy)]
pub struct PortEffort<S> {
    /// Flow into each node port [m³/s].
    pub flow: [S; MAX_NODES],
    /// Extra compliance ∂V/∂p added to each node port's capacitance [m³/Pa].
    pub compliance: [S; MAX_NODES],
    /// Line force (positive pushes the points apart) [N], or joint generalized force [N or N m].
    pub force: S,
    /// Point force [N] or torque [N m], in the axes the port names.
    pub vector: Vector3<S>,
    /// Rates ė = g(e, ports) of the internal states [unit of the state / s] (unused slots 0).
    pub internal_rate: [S; MAX_INTERNAL],
}

impl<S: Real> PortEffort<S> {
    /// No effort.
    pub fn zero() -> Self {
        PortEffort {
            flow: [S::zero(); MAX_NODES],
            compliance: [S::zero(); MAX_NODES],
            force: S::zero(),
            vector: Vector3::zeros(),
            internal_rate: [S::zero(); MAX_INTERNAL],
        }
    }
}

/// The energy account of an element at one point.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Power {
    /// Energy stored in the element (spring, contact, gas) [J].
    pub stored_j: f64,
    /// Power dissipated by the element (damping, throttling) [W], ≥ 0.
    pub dissipated_w: f64,
    /// Power supplied to the mechanism by an external source (loads) [W].
    pub supplied_w: f64,
}

/// Which balance an element's energy belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnergyDomain {
    /// The mechanical balance KE + PE − W (the drift of `Simulation::energy_drift_j`).
    Mechanical,
    /// The hydraulic side: reported per element, outside the mechanical drift.
    Hydraulic,
}

/// One named variable of an element (`relief1.flow`), for CSV columns, linearization names,
/// error text and front-ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// Full name, `<element>.<quantity>`.
    pub name: String,
    /// SI unit.
    pub unit: &'static str,
}

/// The contract of an element. Pure: [`Element::evaluate`] takes the same branch for the same
/// real parts, whatever the scalar.
pub trait Element {
    /// The element's name (unique among components).
    fn name(&self) -> &str;
    /// Its ports.
    fn ports(&self) -> Ports;
    /// Number of internal states e that are Newton unknowns of its own (at most
    /// [`MAX_INTERNAL`]): they come in as [`PortState::internal`], their rates ė = g(e, ports)
    /// go out as [`PortEffort::internal_rate`], and the formulation integrates them with the
    /// trapezoidal rule in the block e of x (`model::layout`). A relief valve with a poppet lag
    /// has one; a valve's position is advanced before Newton instead and comes in as
    /// [`PortState::position`].
    fn n_internal(&self) -> usize {
        0
    }
    /// Names and units of its internal states (`relief1.poppet`), [`Element::n_internal`] of
    /// them: the names of their unknowns in x, in errors and in the NaN check.
    fn describe_internal(&self, _out: &mut Vec<Variable>) {}
    /// Steady-state internal states (ė = 0) at the port state `at` (its `internal` ignored) into
    /// `out`: the initial state, and the value used where the states are not unknowns (the
    /// consistent initial pressures, the algebraic-volume elimination).
    fn steady_internal<S: Real>(&self, _at: &PortState<S>, _out: &mut [S; MAX_INTERNAL]) {}
    /// Number of valve positions (0 or 1): an element state advanced before Newton (not a
    /// Newton unknown) by [`Element::advance_position`], that comes in as
    /// [`PortState::position`] (a 4/3 valve's spool U, a bridge valve's opening κ). The
    /// positions of all elements, in element order, are `State::spool`
    /// (`Layout::element_position` gives each element's slot).
    fn n_position(&self) -> usize {
        0
    }
    /// Name and unit of its position (`DCV.spool`), [`Element::n_position`] of them: a column of
    /// the results, a name of the linearization and of the NaN check.
    fn describe_position(&self, _out: &mut Vec<Variable>) {}
    /// True when the position follows the rate law [`Element::position_rate`] (a state of the
    /// ODE, advanced substep by substep by the multi-rate formulation and linearized as a state);
    /// false when the step sets it from the input and it is held over the step.
    fn position_has_rate(&self) -> bool {
        false
    }
    /// Position at t = 0 [unit of the position] from the element's trim (`State::trim`: a bridge
    /// valve's κ₀, fixed or solved by the static initialization; 0 for the others) and the input
    /// value u(0) [unit of the input].
    fn initial_position(&self, _trim: f64, _u0: f64) -> f64 {
        0.0
    }
    /// Stage `advance valves`: the position at t_k+1 from `position` at t_k, the element's
    /// `trim`, the input values u(t_k) = `u0` and u(t_k+1) = `u1` (`Signal::step_values`) over
    /// `dt` [s]. The exact law the step uses (a 4/3 valve: the closed-form trapezoidal step of
    /// [`Element::position_rate`]).
    fn advance_position(&self, position: f64, _trim: f64, _u0: f64, _u1: f64, _dt: f64) -> f64 {
        position
    }
    /// The element (index in `Model::elements`) whose valve position this element reads as
    /// [`PortState::position`] without having one of its own: a load-sensing shuttle reads its
    /// 4/3 valve's spool (`hydraulics::ls_shuttle`). `None` (the default): the element reads its
    /// own position, if it has one (`Layout::element_reads`).
    fn reads_position_of(&self) -> Option<usize> {
        None
    }
    /// True for an element driven through a shaft whose speed ω [rad/s] is its valve position (a
    /// pump): where the hydraulics is stepped alone, that speed can come from a drive port (an
    /// engine, `circuit::Drive`) instead of the element's input, and
    /// [`Element::drive_torque`] goes back.
    fn is_driven(&self) -> bool {
        false
    }
    /// The torque its drive supplies to the shaft at `at` (ω = `at.position`) [N m], positive
    /// along ω while it pumps; 0 for an element that is not driven ([`Element::is_driven`]).
    fn drive_torque(&self, _at: &PortState<f64>) -> f64 {
        0.0
    }
    /// The position law ẋ = f(x, u) [unit of the position / s], for any scalar (`f64` in the
    /// step, `Dual64` in the linearization); written once. Zero for a position without a rate
    /// ([`Element::position_has_rate`] false).
    fn position_rate<S: Real>(&self, _position: S, _u: S) -> S {
        S::zero()
    }
    /// Names and units of its outputs, in the order [`Element::outputs`] writes them.
    fn describe(&self, out: &mut Vec<Variable>);
    /// The law: efforts at the port state `at`.
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S>;
    /// A body-port element ([`MechPort::Body`]): the force on its body at the body's `pose`,
    /// with input value `u`; it calls [`Element::evaluate`] for its scalar law. No force for
    /// the other elements.
    fn evaluate_body<S: Real>(&self, _pose: &BodyPose<S>, _u: f64) -> BodyEffort<S> {
        BodyEffort::zero()
    }
    /// [`Element::evaluate_body`] with the world values `frozen` of the step ([`Frozen`]): what
    /// the formulations and the stage `elements` call. An element that reads the world (a
    /// bucket digging a terrain) implements this one; the others, `evaluate_body`.
    fn evaluate_body_in<S: Real>(
        &self,
        pose: &BodyPose<S>,
        u: f64,
        _frozen: &Frozen,
    ) -> BodyEffort<S> {
        self.evaluate_body(pose, u)
    }
    /// Energy account at `at` with efforts `e` (from [`Element::evaluate`]).
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power;
    /// Which balance its energy belongs to.
    fn domain(&self) -> EnergyDomain;
    /// What its `<name>.power_w` column ([`describe_power`], −Σ p_i Q_i) means for this kind of
    /// element, in the words of the output columns' descriptions (`hydraulink-io`'s
    /// `columns.json`): by default the power it dissipates.
    fn power_meaning(&self) -> &'static str {
        "the power it dissipates (Δp Q), ≥ 0"
    }
    /// Output values at `at`, `e`, in the order of [`Element::describe`], into `out`; returns
    /// how many (at most [`MAX_OUTPUTS`]).
    fn outputs(
        &self,
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize;
}

/// Hydraulic power absorbed by an element from its node ports, −Σ p_i Q_i [W] (Q_i into node i):
/// what a valve or throttle dissipates.
pub fn absorbed_power(at: &PortState<f64>, e: &PortEffort<f64>) -> f64 {
    -at.p
        .iter()
        .zip(e.flow.iter())
        .map(|(p, q)| p * q)
        .sum::<f64>()
}

/// The output column `<name>.power_w` [W] of an element with node ports: the hydraulic power it
/// takes from the circuit, [`absorbed_power`] = −Σ p_i Q_i (Q_i into node i). Positive for what
/// a restriction (valve, throttle, hose, relief, check or counterbalance valve) dissipates and for
/// what a cylinder or motor takes to drive its load; negative for a pump delivering flow (minus
/// the hydraulic power it delivers). Computed for the output rows only, from the element's own
/// flows.
pub fn describe_power(name: &str, out: &mut Vec<Variable>) {
    out.push(Variable {
        name: format!("{name}.power_w"),
        unit: "W",
    });
}

/// Helpers of a two-port flow element (relief and check valves, throttles): flow Q from port 0
/// to port 1.
pub mod flow_element {
    use super::*;

    /// The ports: nodes `from` and `to`, no mechanical port, no input.
    pub fn ports(from: Node, to: Node) -> Ports {
        Ports {
            nodes: [Some(from), Some(to), None, None],
            mech: MechPort::None,
            input: None,
        }
    }
    /// `<name>.flow` [m³/s].
    pub fn describe(name: &str, out: &mut Vec<Variable>) {
        out.push(Variable {
            name: format!("{name}.flow"),
            unit: "m^3/s",
        });
    }
    /// Q out of port 0 and into port 1.
    #[inline]
    pub fn effort<S: Real>(q: S) -> PortEffort<S> {
        let mut e = PortEffort::zero();
        e.flow[0] = -q;
        e.flow[1] = q;
        e
    }
    /// Throttling loss Δp Q [W].
    pub fn power(at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        Power {
            dissipated_w: (at.p[0] - at.p[1]) * e.flow[1],
            ..Default::default()
        }
    }
    /// Output `flow`.
    pub fn outputs(e: &PortEffort<f64>, out: &mut [f64; MAX_OUTPUTS]) -> usize {
        out[0] = e.flow[1];
        1
    }
}

/// The parts of the [`Element`] impl that the four-port valves (4/3 valve, bridge valve) share:
/// ports P, T, A, B with a driving input, the valve position ([`Element::describe_position`]),
/// the flows into A and B as outputs, and the throttling loss.
pub mod valve_element {
    use super::*;

    /// Nodes P, T, A, B (in that order), no mechanical port, driven by input `input`.
    pub fn ports(p: Node, t: Node, a: Node, b: Node, input: usize) -> Ports {
        Ports {
            nodes: [Some(p), Some(t), Some(a), Some(b)],
            mech: MechPort::None,
            input: Some(input),
        }
    }
    /// The position `<name>.<position>` [-, or the unit of the input].
    pub fn describe_position(name: &str, position: &str, out: &mut Vec<Variable>) {
        out.push(Variable {
            name: format!("{name}.{position}"),
            unit: "1",
        });
    }
    /// `<name>.flow_a`, `<name>.flow_b` [m³/s].
    pub fn describe(name: &str, out: &mut Vec<Variable>) {
        for q in ["flow_a", "flow_b"] {
            out.push(Variable {
                name: format!("{name}.{q}"),
                unit: "m^3/s",
            });
        }
    }
    /// Throttling loss −Σ p_i Q_i [W] ([`absorbed_power`]).
    pub fn power(at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        Power {
            dissipated_w: absorbed_power(at, e),
            ..Default::default()
        }
    }
    /// Outputs: the flows into A and B.
    pub fn outputs(e: &PortEffort<f64>, out: &mut [f64; MAX_OUTPUTS]) -> usize {
        out[0] = e.flow[2];
        out[1] = e.flow[3];
        2
    }
}

/// The model-file side of one element kind (an `[[elements]]` entry), implemented in the
/// element's own file next to its law. The registry (`elements::component`) reaches every
/// kind through it, so adding an element adds one line to the registry and nothing else
/// outside its file.
pub trait ElementSpec {
    /// The compiled element (its law and resolved ports).
    type Law;
    /// The noun of error messages (`relief valve 'R1'`).
    const NOUN: &'static str;
    /// The element's name.
    fn name(&self) -> &str;
    /// The nodes whose pressures its flow sets (a valve's or throttle's ports, a pump's inlet
    /// and outlet, …), for the volume checks of `pipeline::validate`; empty by default.
    fn flow_nodes(&self) -> Vec<&str> {
        Vec::new()
    }
    /// The field that gives the element internal states (Newton unknowns of its own) when it
    /// does; formulations other than the penalty one reject the element by it. `None` by
    /// default.
    fn internal_state_field(&self) -> Option<&'static str> {
        None
    }
    /// Checks the fields against the model's names and compiles the element.
    fn compile(&self, cx: &Context) -> Result<Self::Law, ModelError>;
}

/// What an element's compile step may look up in the model being compiled; every lookup names
/// the element and the field `elements[i].<field>` in its error.
pub struct Context<'a> {
    /// `elements[i]`.
    pub prefix: String,
    /// `relief valve 'R1'`.
    pub element: String,
    /// Resolves a hydraulic node name.
    pub node: &'a dyn Fn(&str) -> Option<Node>,
    /// Resolves a `(body, marker)` pair to a frame point.
    pub marker: &'a dyn Fn(&str, &str) -> Option<FramePoint>,
    /// Resolves a body name to its frame.
    pub body: &'a dyn Fn(&str) -> Option<Frame>,
    /// Resolves an input name to its index.
    pub input: &'a dyn Fn(&str) -> Option<usize>,
    /// Resolves a single-axis joint name to its axis.
    pub joint_axis: &'a dyn Fn(&str) -> Option<AxisId>,
    /// Resolves a tree joint's name to its `type` as written in a model file (`"revolute"`,
    /// `"prismatic"`, …), so an element that needs one kind can name the kind it got.
    pub joint_type: &'a dyn Fn(&str) -> Option<&'static str>,
    /// Resolves a cylinder name to (index, base, rod, retracted length [m], stroke [m], piston
    /// area [m²]).
    pub cylinder: &'a dyn Fn(&str) -> Option<CylinderPort>,
    /// Effective oil bulk modulus [Pa].
    pub oil_bulk_pa: f64,
    /// Oil density ρ [kg/m³].
    pub density_kg_m3: f64,
    /// Time step Δt of the solver [s] (an element with internal states bounds its time constants
    /// by it).
    pub step_s: f64,
}

/// What an end stop needs of its cylinder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CylinderPort {
    /// Index into `Model::cylinders`.
    pub index: usize,
    /// Base pin.
    pub base: FramePoint,
    /// Rod pin.
    pub rod: FramePoint,
    /// Pin-to-pin length when fully retracted [m].
    pub retracted_length_m: f64,
    /// Stroke [m].
    pub stroke_m: f64,
    /// Piston area A_A [m²].
    pub piston_area_m2: f64,
}

impl Context<'_> {
    /// The error `elements[i].field` of this element.
    pub fn error(&self, field: &str, message: impl Into<String>) -> ModelError {
        ModelError::new(
            format!("{}.{field}", self.prefix),
            self.element.clone(),
            message,
        )
    }
    /// A finite value, within the bound of its unit (pressures: `elements::field_check::unit_bound`).
    pub fn finite(&self, field: &str, x: f64) -> Result<f64, ModelError> {
        if !x.is_finite() {
            return Err(self.error(field, format!("must be finite, got {x}")));
        }
        match crate::elements::field_check::unit_bound(field, x) {
            Some(message) => Err(self.error(field, message)),
            None => Ok(x),
        }
    }
    /// A finite value > 0.
    pub fn positive(&self, field: &str, x: f64) -> Result<f64, ModelError> {
        if self.finite(field, x)? > 0.0 {
            Ok(x)
        } else {
            Err(self.error(field, format!("must be > 0, got {x}")))
        }
    }
    /// A finite value ≥ 0.
    pub fn non_negative(&self, field: &str, x: f64) -> Result<f64, ModelError> {
        if self.finite(field, x)? >= 0.0 {
            Ok(x)
        } else {
            Err(self.error(field, format!("must be ≥ 0, got {x}")))
        }
    }
    /// A hydraulic node.
    pub fn node(&self, field: &str, name: &str) -> Result<Node, ModelError> {
        (self.node)(name)
            .ok_or_else(|| self.error(field, format!("unknown hydraulic node '{name}'")))
    }
    /// A volume (not a pump or tank).
    pub fn volume(&self, field: &str, name: &str) -> Result<Node, ModelError> {
        match self.node(field, name)? {
            Node::Volume(v) => Ok(Node::Volume(v)),
            Node::Source(_) => Err(self.error(
                field,
                format!("'{name}' must be a volume, not a pump or tank"),
            )),
        }
    }
    /// A marker.
    pub fn marker(&self, field: &str, body: &str, marker: &str) -> Result<FramePoint, ModelError> {
        (self.marker)(body, marker).ok_or_else(|| {
            self.error(
                field,
                format!("no marker '{marker}' on body '{body}' (or no such body)"),
            )
        })
    }
    /// A named input (required).
    pub fn required_input(&self, field: &str, name: &str) -> Result<usize, ModelError> {
        if name.is_empty() {
            return Err(self.error(field, "must not be empty"));
        }
        (self.input)(name).ok_or_else(|| self.error(field, format!("unknown input '{name}'")))
    }
    /// The work ports A and B of a four-port valve: two different volumes.
    pub fn work_ports(&self, a: &str, b: &str) -> Result<(Node, Node), ModelError> {
        let na = self.volume("port_a", a)?;
        let nb = self.volume("port_b", b)?;
        if na == nb {
            return Err(self.error(
                "port_b",
                format!("is the same volume as port_a ('{a}'); work ports A and B must differ"),
            ));
        }
        Ok((na, nb))
    }
    /// An input, if named.
    pub fn input(&self, field: &str, name: &Option<String>) -> Result<Option<usize>, ModelError> {
        match name {
            None => Ok(None),
            Some(n) => (self.input)(n)
                .map(Some)
                .ok_or_else(|| self.error(field, format!("unknown input '{n}'"))),
        }
    }
}

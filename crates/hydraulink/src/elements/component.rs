//! The closed set of elements: [`Component`] (one arm per element kind, dispatched without
//! `Box<dyn>` in the step) and its model-file side [`ComponentSpec`] (`[[elements]]` with a
//! `type`). The contract every arm implements is [`crate::elements::element::Element`].

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    BodyEffort, BodyPose, Context, Element, ElementSpec, EnergyDomain, Frozen, MechPort,
    PortEffort, PortState, Ports, Power, Variable, MAX_INTERNAL, MAX_OUTPUTS,
};
use crate::elements::end_stop::{EndStop, EndStopSpec};
use crate::elements::external_load::{ExternalLoad, JointForceSpec, PointForceSpec, TorqueSpec};
use crate::elements::hydraulics::accumulator::{Accumulator, AccumulatorSpec};
use crate::elements::hydraulics::bridge_valve::{BridgeValve, BridgeValveSpec};
use crate::elements::hydraulics::check_valve::{CheckValve, CheckValveSpec};
use crate::elements::hydraulics::counterbalance_valve::{
    CounterbalanceValve, CounterbalanceValveSpec,
};
use crate::elements::hydraulics::cylinder::Cylinder;
use crate::elements::hydraulics::fixed_pump::{FixedPump, FixedPumpSpec};
use crate::elements::hydraulics::flow_control_valve::{FlowControlValve, FlowControlValveSpec};
use crate::elements::hydraulics::hose::{Hose, HoseSpec};
use crate::elements::hydraulics::hydraulic_motor::{HydraulicMotor, HydraulicMotorSpec};
use crate::elements::hydraulics::ls_shuttle::{LsShuttle, LsShuttleSpec};
use crate::elements::hydraulics::pc_pump::{PcPump, PcPumpSpec};
use crate::elements::hydraulics::port_relief::{PortRelief, PortReliefSpec};
use crate::elements::hydraulics::relief_valve::{ReliefValve, ReliefValveSpec};
use crate::elements::hydraulics::throttle::{Throttle, ThrottleSpec};
use crate::elements::hydraulics::valve_4_3::{Valve43, Valve43Spec};
use crate::elements::inputs::Signal;
use crate::elements::obb_contact::{ObbContact, ObbContactSpec};
use crate::elements::spring_damper::{SpringDamper, SpringDamperSpec};
use crate::error::ModelError;
use crate::solver::real::Real;

/// The registry: every element kind once, as its law (an arm of [`Component`]) and as its
/// model-file entry (an arm of [`ComponentSpec`]: its `type` tag and the law it compiles to).
/// It writes both enums, the [`dispatch!`] over the laws and the forwarding of
/// [`ComponentSpec`] to each entry's [`ElementSpec`], so a new element is one line in each list.
/// (`$d` is a `$` passed in, so that this macro can write the macro `dispatch!`.)
macro_rules! registry {
    (
        ($d:tt)
        laws { $( $(#[$law_doc:meta])* $law:ident($law_ty:ty), )* }
        specs { $( $(#[$spec_doc:meta])* $spec:ident($spec_ty:ty) = $tag:literal => $to:ident, )* }
    ) => {
        /// Every element kind: one arm each (the model-file side is [`ComponentSpec`]).
        #[derive(Debug, Clone, PartialEq)]
        pub enum Component {
            $( $(#[$law_doc])* $law($law_ty), )*
        }

        /// Calls `$body` with `$e` bound to the element inside `$c`.
        macro_rules! dispatch {
            ($d c:expr, $d e:ident => $d body:expr) => {
                match $d c {
                    $( $crate::elements::component::Component::$law($d e) => $d body, )*
                }
            };
        }

        /// An element in a model file: `[[elements]]` with a `type`.
        #[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(tag = "type", deny_unknown_fields)]
        pub enum ComponentSpec {
            $( $(#[$spec_doc])* #[serde(rename = $tag)] $spec($spec_ty), )*
        }

        impl ComponentSpec {
            /// The element's name.
            pub fn name(&self) -> &str {
                match self {
                    $( ComponentSpec::$spec(s) => ElementSpec::name(s), )*
                }
            }
            /// The nodes whose pressures the element's flow sets (a valve's, throttle's, pump's,
            /// hose's, hydraulic motor's or counterbalance valve's flow ports: what connects a
            /// volume for the checks of `pipeline::validate`); empty for the other elements.
            pub fn valve_or_throttle_nodes(&self) -> Vec<&str> {
                match self {
                    $( ComponentSpec::$spec(s) => ElementSpec::flow_nodes(s), )*
                }
            }
            /// The noun used in error messages (`relief valve 'R1'`).
            pub fn noun(&self) -> &'static str {
                match self {
                    $( ComponentSpec::$spec(_) => <$spec_ty as ElementSpec>::NOUN, )*
                }
            }
            /// The noun of an `[[elements]]` entry of `type = "<tag>"` (as
            /// [`ComponentSpec::noun`] names the parsed entry), for the errors located on a model
            /// file that does not parse; `None` for an unknown tag.
            pub fn noun_of_type(tag: &str) -> Option<&'static str> {
                match tag {
                    $( $tag => Some(<$spec_ty as ElementSpec>::NOUN), )*
                    _ => None,
                }
            }
            /// The field that gives the element internal states (Newton unknowns of its own), when
            /// it does (`poppet_time_constant_s` of a relief valve with a poppet lag). Formulations
            /// other than the penalty one reject the element by this field (`pipeline::validate`).
            pub fn internal_state_field(&self) -> Option<&'static str> {
                match self {
                    $( ComponentSpec::$spec(s) => ElementSpec::internal_state_field(s), )*
                }
            }
            /// Checks and compiles the element against the names of the model.
            pub fn compile(&self, cx: &Context) -> Result<Component, ModelError> {
                match self {
                    $( ComponentSpec::$spec(s) => ElementSpec::compile(s, cx).map(Component::$to), )*
                }
            }
            /// Every `type` tag, in the registry's order.
            pub const TYPES: &'static [&'static str] = &[$( $tag, )*];
        }
    };
}

registry! {
    ($)
    laws {
    /// 4/3 closed-centre directional control valve (a spool position).
        Valve43(Valve43),
    /// Open-centre bridge valve (an opening position).
        BridgeValve(BridgeValve),
    /// Direct-acting pressure-relief valve.
        ReliefValve(ReliefValve),
    /// Check valve.
        CheckValve(CheckValve),
    /// Port (overload) relief with its make-up check.
        PortRelief(PortRelief),
    /// Throttle (fixed orifice).
        Throttle(Throttle),
    /// Gas-charged hydraulic accumulator.
        Accumulator(Accumulator),
    /// Fixed-displacement pump driven at a shaft speed (an input).
        FixedPump(FixedPump),
    /// Pressure-compensated variable-displacement pump.
        PcPump(PcPump),
    /// Load-sensing shuttle of a 4/3 valve.
        LsShuttle(LsShuttle),
    /// Hose or pipe with a laminar/turbulent pressure loss.
        Hose(Hose),
    /// Linear spring–damper between two markers.
        SpringDamper(SpringDamper),
    /// Cylinder end stops.
        EndStop(EndStop),
    /// External load: point force, body torque or joint force.
        ExternalLoad(ExternalLoad),
    /// Hydraulic motor driving a revolute joint through a gear.
        HydraulicMotor(HydraulicMotor),
    /// Counterbalance (load-holding) valve.
        CounterbalanceValve(CounterbalanceValve),
    /// Penalty contact of a body's box against a static obstacle.
        ObbContact(ObbContact),
    /// A bucket's force points and payload against the terrain.
        BucketDig(crate::elements::bucket_dig::BucketDig),
        /// Two-way pressure-compensated flow control valve.
        FlowControlValve(FlowControlValve),
    /// Double-acting cylinder (`[[hydraulics.cylinders]]`; `Model::cylinders`).
        Cylinder(Cylinder),
    }
    specs {
        /// `valve_4_3` (the fields of a `[[hydraulics.valves]]` entry).
        Valve43(Valve43Spec) = "valve_4_3" => Valve43,
        /// `bridge_valve` (the fields of a `[[hydraulics.bridge_valves]]` entry).
        BridgeValve(BridgeValveSpec) = "bridge_valve" => BridgeValve,
        /// `relief_valve`.
        ReliefValve(ReliefValveSpec) = "relief_valve" => ReliefValve,
        /// `check_valve`.
        CheckValve(CheckValveSpec) = "check_valve" => CheckValve,
        /// `port_relief`: the overload relief valve of a work port (from the chamber's volume
        /// `port` to `tank`) with its make-up (anti-cavitation) check (from `tank` to `port`).
        /// Outputs: `<name>.relief_flow` [m³/s] (port to tank), `<name>.makeup_flow` [m³/s] (tank
        /// to port), `<name>.power_w`.
        PortRelief(PortReliefSpec) = "port_relief" => PortRelief,
        /// `throttle` (the fields of a `[[hydraulics.throttles]]` entry).
        Throttle(ThrottleSpec) = "throttle" => Throttle,
        /// `accumulator`.
        Accumulator(AccumulatorSpec) = "accumulator" => Accumulator,
        /// `fixed_pump`.
        FixedPump(FixedPumpSpec) = "fixed_pump" => FixedPump,
        /// `pc_pump`.
        PcPump(PcPumpSpec) = "pc_pump" => PcPump,
        /// `ls_shuttle`: a 4/3 valve's one-way load-sensing path from its active work port (A for
        /// U > 0, B for U < 0) to an LS node, opened by the valve's spool. Outputs: `<name>.flow`
        /// [m³/s] (into LS), `<name>.power_w`.
        LsShuttle(LsShuttleSpec) = "ls_shuttle" => LsShuttle,
        /// `hose`.
        Hose(HoseSpec) = "hose" => Hose,
        /// `spring_damper`.
        SpringDamper(SpringDamperSpec) = "spring_damper" => SpringDamper,
        /// `end_stop`.
        EndStop(EndStopSpec) = "end_stop" => EndStop,
        /// `point_force` (`point_force`, `torque` and `joint_force` compile to one
        /// `external_load::ExternalLoad`).
        PointForce(PointForceSpec) = "point_force" => ExternalLoad,
        /// A torque on a body.
        Torque(TorqueSpec) = "torque" => ExternalLoad,
        /// A generalized force on a single-axis joint.
        JointForce(JointForceSpec) = "joint_force" => ExternalLoad,
        /// `hydraulic_motor`: a hydraulic motor between nodes A and B driving a revolute joint
        /// through a gear. A higher pressure at A than at B turns the joint in its positive
        /// direction (right-hand rule about the joint axis), oil entering at A. Outputs:
        /// `<name>.flow` [m³/s] (out of A, into B), `<name>.torque` [N m] (on the joint, positive in
        /// its positive direction), `<name>.speed` [rad/s] (motor shaft: gear ratio × joint rate),
        /// `<name>.power` [W] ((p_A − p_B) × flow), `<name>.power_w` and the energy accounts
        /// `<name>.energy_stored`, `.energy_supplied`, `.energy_dissipated` [J]. Penalty only.
        HydraulicMotor(HydraulicMotorSpec) = "hydraulic_motor" => HydraulicMotor,
        /// `counterbalance_valve`: a load-holding valve (load, valve-side and pilot ports). Outputs:
        /// `<name>.flow` [m³/s] (load to valve side; negative through the check), `<name>.opening`
        /// [-] (main stage), `<name>.power_w`.
        CounterbalanceValve(CounterbalanceValveSpec) = "counterbalance_valve" => CounterbalanceValve,
        /// `obb_contact`: a box fixed in a body against a static obstacle (plane, box or pole).
        ObbContact(ObbContactSpec) = "obb_contact" => ObbContact,
        /// `bucket_dig`: a bucket's cutting-edge force points against the model's `[terrain]`
        /// (ground penalty and McKyes' cutting resistance) and the payload it digs, carries and
        /// dumps. Outputs: `<name>.payload_kg` [kg], `.hopper_kg` [kg], `.dug_m3` [m³],
        /// `.dig_force` [N], `.depth` [m] and the energy accounts. Penalty formulation only.
        BucketDig(crate::elements::bucket_dig::BucketDigSpec) = "bucket_dig" => BucketDig,
        /// `flow_control_valve`: a two-way pressure-compensated flow control valve from `inlet` to
        /// `outlet` that holds the set flow (times its optional input) whatever the pressure
        /// difference above the compensator setting. Outputs: `<name>.flow` [m³/s] (inlet to
        /// outlet), `<name>.power_w`.
        FlowControlValve(FlowControlValveSpec) = "flow_control_valve" => FlowControlValve,
    }
}

/// [`dispatch!`] for the other modules: a loop body written once as a generic function over
/// `E: Element` is monomorphized per arm, so the law inlines into it (the flow sum's fast path).
pub(crate) use dispatch;

/// The enum is itself an element: every method forwards to the arm (so generic code such as
/// `circuit::add_flows` takes a component or a single element type alike).
impl Element for Component {
    fn name(&self) -> &str {
        dispatch!(self, e => e.name())
    }
    #[inline]
    fn ports(&self) -> Ports {
        dispatch!(self, e => e.ports())
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        dispatch!(self, e => e.describe(out))
    }
    #[inline]
    fn n_position(&self) -> usize {
        dispatch!(self, e => e.n_position())
    }
    fn describe_position(&self, out: &mut Vec<Variable>) {
        dispatch!(self, e => e.describe_position(out))
    }
    #[inline]
    fn position_has_rate(&self) -> bool {
        dispatch!(self, e => e.position_has_rate())
    }
    fn initial_position(&self, trim: f64, u0: f64) -> f64 {
        dispatch!(self, e => e.initial_position(trim, u0))
    }
    fn is_driven(&self) -> bool {
        dispatch!(self, e => e.is_driven())
    }
    fn drive_torque(&self, at: &PortState<f64>) -> f64 {
        dispatch!(self, e => e.drive_torque(at))
    }
    #[inline]
    fn advance_position(&self, position: f64, trim: f64, u0: f64, u1: f64, dt: f64) -> f64 {
        dispatch!(self, e => e.advance_position(position, trim, u0, u1, dt))
    }
    #[inline]
    fn position_rate<S: Real>(&self, position: S, u: S) -> S {
        dispatch!(self, e => e.position_rate(position, u))
    }
    fn reads_position_of(&self) -> Option<usize> {
        dispatch!(self, e => e.reads_position_of())
    }
    fn n_internal(&self) -> usize {
        dispatch!(self, e => e.n_internal())
    }
    fn describe_internal(&self, out: &mut Vec<Variable>) {
        dispatch!(self, e => e.describe_internal(out))
    }
    #[inline]
    fn steady_internal<S: Real>(&self, at: &PortState<S>, out: &mut [S; MAX_INTERNAL]) {
        dispatch!(self, e => e.steady_internal(at, out))
    }
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        dispatch!(self, e => e.evaluate(at))
    }
    #[inline]
    fn evaluate_body<S: Real>(&self, pose: &BodyPose<S>, u: f64) -> BodyEffort<S> {
        dispatch!(self, e => e.evaluate_body(pose, u))
    }
    #[inline]
    fn evaluate_body_in<S: Real>(
        &self,
        pose: &BodyPose<S>,
        u: f64,
        frozen: &Frozen,
    ) -> BodyEffort<S> {
        dispatch!(self, e => e.evaluate_body_in(pose, u, frozen))
    }
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        dispatch!(self, x => x.power(at, e))
    }
    fn domain(&self) -> EnergyDomain {
        dispatch!(self, e => e.domain())
    }
    fn power_meaning(&self) -> &'static str {
        dispatch!(self, e => e.power_meaning())
    }
    fn outputs(
        &self,
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        dispatch!(self, x => x.outputs(at, e, out))
    }
}

impl Component {
    /// True when this element is a valve driven by input `input` whose input range clips the
    /// value `u` (`Valve43::clips`, `BridgeValve::clips`): the valve uses the nearest bound.
    pub fn clips_input(&self, input: usize, u: f64) -> bool {
        match self {
            Component::Valve43(v) => v.input == input && v.clips(u),
            Component::BridgeValve(v) => v.input == input && v.clips(u),
            _ => false,
        }
    }

    /// [`Element::name`].
    pub fn name(&self) -> &str {
        dispatch!(self, e => e.name())
    }
    /// [`Element::ports`].
    #[inline]
    pub fn ports(&self) -> Ports {
        dispatch!(self, e => e.ports())
    }
    /// [`Element::describe`].
    pub fn describe(&self, out: &mut Vec<Variable>) {
        dispatch!(self, e => e.describe(out))
    }
    /// Number of outputs of [`Element::describe`].
    pub fn n_outputs(&self) -> usize {
        let mut v = Vec::new();
        self.describe(&mut v);
        v.len()
    }
    /// [`Element::evaluate`].
    #[inline]
    pub fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        dispatch!(self, e => e.evaluate(at))
    }
    /// [`Element::power`].
    pub fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        dispatch!(self, x => x.power(at, e))
    }
    /// [`Element::domain`].
    pub fn domain(&self) -> EnergyDomain {
        dispatch!(self, e => e.domain())
    }
    /// [`Element::outputs`].
    pub fn outputs(
        &self,
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        dispatch!(self, x => x.outputs(at, e, out))
    }
    /// The separation before a new contact onset counts as a hit [s], for an element that
    /// counts hits (a contact, [`crate::contact::hits`]); `None` for the others.
    pub fn hit_gap_s(&self) -> Option<f64> {
        match self {
            Component::ObbContact(c) => Some(c.hit_gap_s),
            _ => None,
        }
    }
    /// The static obstacles the element tests contact against, for the scene of the viewer
    /// (a contact, [`crate::elements::obb_contact`]); empty for the others.
    pub fn obstacles(&self) -> &[crate::elements::obb_contact::Obstacle] {
        match self {
            Component::ObbContact(c) => &c.obstacles,
            _ => &[],
        }
    }
    /// True when the element acts on the mechanism.
    pub fn is_mechanical(&self) -> bool {
        !matches!(self.ports().mech, MechPort::None)
    }
    /// True when the natural-coordinate formulations can map its mechanical port: none, a
    /// line, or a point force in global axes (torques, joint forces and body-axis forces need
    /// frame rotations or joint coordinates those formulations do not carry).
    pub fn natural_coordinate_port(&self) -> bool {
        matches!(
            self.ports().mech,
            MechPort::None
                | MechPort::Line { .. }
                | MechPort::Point {
                    body_axes: false,
                    ..
                }
        )
    }
}

/// The state of every element's ports at the committed state, for outputs and energy.
#[derive(Debug, Clone, Default)]
pub struct ElementValues {
    /// Port state of each element.
    pub at: Vec<PortState<f64>>,
    /// Efforts of each element.
    pub effort: Vec<PortEffort<f64>>,
}

impl ElementValues {
    /// Buffers for `n` elements.
    pub fn new(n: usize) -> Self {
        ElementValues {
            at: vec![PortState::zero(); n],
            effort: vec![PortEffort::zero(); n],
        }
    }
}

/// Value of element `e`'s input signal at time `t` [s] (the model's signal, no value set from
/// outside: initialization and linearization); 1 without input.
pub fn signal_value(signals: &[Signal], e: &Component, t: f64) -> f64 {
    match e.ports().input {
        Some(i) => signals[i].value(t),
        None => 1.0,
    }
}

//! 4/3 closed-centre directional control valve (000 eqs. 26–27).
//!
//! ```text
//!            A     B
//!            │     │          U ≥ 0:  P → A,  B → T
//!        ┌───┴─────┴───┐      U < 0:  P → B,  A → T
//!        │  ⇅   │  ⇅   │      each open path: Q = C_vd |U| sgn(Δp) √|Δp|  (laminar below Δp_tr)
//!        └───┬─────┬───┘      U = 0: all ports closed
//!            P     T
//! ```
//! Spool dynamics U̇ = (U_ref − U)/τ (000 eq. 27), written once in [`spool_rate`]. The ODE is
//! linear and decoupled, so its trapezoidal step has the closed form [`spool_step`], which
//! evaluates the same law.
//!
//! An element with four node ports in the order P, T, A, B and the valve position
//! `<name>.spool` (U, advanced before Newton by [`Element::advance_position`], read as
//! [`crate::element::PortState::position`]); outputs `<name>.flow_a`, `<name>.flow_b`. In a
//! model file `[[hydraulics.valves]]`, or `[[elements]]` with `type = "valve_4_3"`.

use serde::{Deserialize, Serialize};

use crate::element::{
    valve_element, Context, Element, EnergyDomain, PortEffort, PortState, Ports, Power, Variable,
    MAX_OUTPUTS,
};
use crate::error::ModelError;
use crate::hydraulics::orifice;
use crate::model::field_check::{input_ref, valve_ports, At, Nodes};
use crate::model::ids::Node;
use crate::real::Real;
use num_dual::Dual64;

/// 4/3 closed-centre directional control valve, `[[hydraulics.valves]]` or `[[elements]]` with
/// `type = "valve_4_3"`.
///
/// Port mapping (000 eq. 26, reference note B.3): U ≥ 0 opens P→A and B→T; U < 0 opens P→B and
/// A→T. Flow through each open path is Q = C_vd |U| sgn(Δp) √|Δp|, laminar below `laminar_dp_pa`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Valve43Spec {
    /// Unique name.
    pub name: String,
    /// Supply node (a pump or volume).
    pub port_p: String,
    /// Return node (a tank or volume).
    pub port_t: String,
    /// Work port A (a volume).
    pub port_a: String,
    /// Work port B (a volume).
    pub port_b: String,
    /// Semi-empirical flow constant C_vd [m³/(s·√Pa) per unit of U].
    pub flow_constant: f64,
    /// Spool time constant τ [s] (000 eq. 27).
    pub time_constant_s: f64,
    /// Laminar-transition pressure difference [Pa] (000: 2 bar).
    #[serde(default = "default_laminar")]
    pub laminar_dp_pa: f64,
    /// Name of the input signal U_ref.
    pub input: String,
    /// Initial spool position U(0) [unit of U].
    #[serde(default)]
    pub spool0: f64,
}

fn default_laminar() -> f64 {
    orifice::DEFAULT_LAMINAR_DP_PA
}

impl Valve43Spec {
    /// Its nodes P, T, A, B by name.
    pub fn node_names(&self) -> [&str; 4] {
        [&self.port_p, &self.port_t, &self.port_a, &self.port_b]
    }

    /// Validation against the spec (`model::validate`, before compile): the nodes and the input
    /// exist (the work ports are two different volumes), the numbers are finite and the
    /// constants positive. `at` is `hydraulics.valves[i]` or `elements[i]`.
    pub(crate) fn validate(
        &self,
        at: &At,
        nodes: &Nodes,
        inputs: &[&str],
        _density_kg_m3: f64,
    ) -> Result<(), ModelError> {
        valve_ports(at, nodes, self.node_names())?;
        at.positive("flow_constant", self.flow_constant)?;
        at.positive("time_constant_s", self.time_constant_s)?;
        at.positive("laminar_dp_pa", self.laminar_dp_pa)?;
        input_ref(at, "input", &self.input, inputs)?;
        at.finite("spool0", self.spool0)?;
        Ok(())
    }

    /// Checks the fields and resolves the nodes and the input; every error names the element
    /// and the field.
    pub fn compile(&self, cx: &Context) -> Result<Valve43, ModelError> {
        let p = cx.node("port_p", &self.port_p)?;
        let t = cx.node("port_t", &self.port_t)?;
        let (a, b) = cx.work_ports(&self.port_a, &self.port_b)?;
        Ok(Valve43 {
            name: self.name.clone(),
            p,
            t,
            a,
            b,
            flow_constant: cx.positive("flow_constant", self.flow_constant)?,
            time_constant_s: cx.positive("time_constant_s", self.time_constant_s)?,
            laminar_dp_pa: cx.positive("laminar_dp_pa", self.laminar_dp_pa)?,
            input: cx.required_input("input", &self.input)?,
            spool0: cx.finite("spool0", self.spool0)?,
        })
    }
}

/// Compiled 4/3 valve.
#[derive(Debug, Clone, PartialEq)]
pub struct Valve43 {
    /// Name.
    pub name: String,
    /// Supply, return and work ports.
    pub p: Node,
    /// Return.
    pub t: Node,
    /// Work port A.
    pub a: Node,
    /// Work port B.
    pub b: Node,
    /// C_vd [m³/(s √Pa) per unit U].
    pub flow_constant: f64,
    /// τ [s].
    pub time_constant_s: f64,
    /// Laminar transition Δp [Pa].
    pub laminar_dp_pa: f64,
    /// Input signal index.
    pub input: usize,
    /// U(0).
    pub spool0: f64,
}

/// Flows of a 4/3 valve [m³/s], signed as named.
#[derive(Debug, Clone, Copy)]
pub struct ValveFlows<S> {
    /// Into work port A.
    pub into_a: S,
    /// Into work port B.
    pub into_b: S,
    /// Out of the supply P.
    pub out_of_p: S,
    /// Into the return T.
    pub into_t: S,
}

/// Port flows for spool position `u` and port pressures [Pa].
#[inline]
pub fn flows<S: Real>(v: &Valve43, u: f64, pp: S, pt: S, pa: S, pb: S) -> ValveFlows<S> {
    let c = v.flow_constant * u.abs();
    if u >= 0.0 {
        let q_pa = orifice::flow(c, pp - pa, v.laminar_dp_pa);
        let q_bt = orifice::flow(c, pb - pt, v.laminar_dp_pa);
        ValveFlows {
            into_a: q_pa,
            into_b: -q_bt,
            out_of_p: q_pa,
            into_t: q_bt,
        }
    } else {
        let q_pb = orifice::flow(c, pp - pb, v.laminar_dp_pa);
        let q_at = orifice::flow(c, pa - pt, v.laminar_dp_pa);
        ValveFlows {
            into_a: -q_at,
            into_b: q_pb,
            out_of_p: q_pb,
            into_t: q_at,
        }
    }
}

/// The spool law U̇ = (U_ref − U)/τ [unit of U per s] (000 eq. 27; 001 eq. 4), for any scalar:
/// `f64` in the step ([`spool_step`]) and the finite-difference right-hand side, `Dual64` for the
/// spool rows of the exact linearization (`linearize::derivatives`). The one place the law is
/// written.
#[inline]
pub fn spool_rate<S: Real>(u: S, u_ref: S, tau: f64) -> S {
    (u_ref - u) / tau
}

/// Trapezoidal step of [`spool_rate`] from U_ref,k = `u_ref0` to U_ref,k+1 = `u_ref1` over `dt`
/// [s] (see `Signal::step_values` for the interval form of piecewise-constant inputs, reference
/// note 000-A.4): U₊ − U = (Δt/2) [f(U, U_ref,k) + f(U₊, U_ref,k+1)]. The law is affine in U, so
/// the step has the closed form
/// U₊ = U + (Δt/2) [f(U, U_ref,k) + f(U, U_ref,k+1)] / (1 − (Δt/2) ∂f/∂U),
/// with f and its slope ∂f/∂U (= −1/τ) from the law itself (one dual-number evaluation).
#[inline]
pub fn spool_step(u: f64, u_ref0: f64, u_ref1: f64, tau: f64, dt: f64) -> f64 {
    let f1 = spool_rate(Dual64::new(u, 1.0), Dual64::from(u_ref1), tau);
    let f0 = spool_rate(u, u_ref0, tau);
    let h = 0.5 * dt;
    u + h * (f0 + f1.re) / (1.0 - h * f1.eps)
}

impl Element for Valve43 {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        valve_element::ports(self.p, self.t, self.a, self.b, self.input)
    }
    fn n_position(&self) -> usize {
        1
    }
    fn describe_position(&self, out: &mut Vec<Variable>) {
        valve_element::describe_position(&self.name, "spool", out)
    }
    fn position_has_rate(&self) -> bool {
        true
    }
    /// U(0) = `spool0`.
    fn initial_position(&self, _trim: f64, _u0: f64) -> f64 {
        self.spool0
    }
    /// The closed-form trapezoidal step [`spool_step`] of the spool law (000 eq. 27).
    fn advance_position(&self, position: f64, _trim: f64, u0: f64, u1: f64, dt: f64) -> f64 {
        spool_step(position, u0, u1, self.time_constant_s, dt)
    }
    /// U̇ = (U_ref − U)/τ ([`spool_rate`], 000 eq. 27).
    fn position_rate<S: Real>(&self, position: S, u: S) -> S {
        spool_rate(position, u, self.time_constant_s)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        valve_element::describe(&self.name, out)
    }
    /// 000 eq. 26 at the spool U = `at.position`: flows into P, T, A, B.
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let f = flows(self, at.position, at.p[0], at.p[1], at.p[2], at.p[3]);
        let mut e = PortEffort::zero();
        e.flow = [-f.out_of_p, f.into_t, f.into_a, f.into_b];
        e
    }
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        valve_element::power(at, e)
    }
    fn domain(&self) -> EnergyDomain {
        EnergyDomain::Hydraulic
    }
    fn outputs(
        &self,
        _at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        valve_element::outputs(e, out)
    }
}

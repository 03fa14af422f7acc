//! Load-sensing shuttle of a 4/3 valve: reports the valve's active work-port pressure to a
//! load-sensing (LS) node through a one-way orifice that the spool opens, so that a
//! load-sensing pump ([`super::pc_pump`] with `load_sense`) holds its margin above the load.
//!
//! ```text
//!          A     B                    U > 0: W = A,  U < 0: W = B,  U = 0: closed
//!          │     │                    Δp = p_W − p_LS
//!        ┌─┴─────┴─┐                  a(Δp) = 0 (Δp ≤ 0),  3ξ² − 2ξ³ (ξ = Δp/Δp_open < 1),  1
//!        │ spool U │── ▷|── LS        Q = C_s |U| a(Δp) Q_orifice(Δp)     (from W into LS)
//!        └─────────┘                  Q_orifice: 000 eqs. 24–26 with the valve's Δp_tr, C = 1
//! ```
//! The orifice opens with the spool (|U|, as the valve's own metering edges, 000 eq. 26) and
//! passes flow only from the work port into LS, smoothly: the smoothstep a(Δp) and its slope
//! vanish at Δp = 0, so Q and ∂Q/∂p are continuous there (a C¹ one-way law, Newton sees no
//! kink). Centred (U = 0) there is no connection. The LS node is a small volume that the model
//! drains to tank through a throttle (the LS bleed): with several valves feeding one LS node,
//! the one-way paths act as the shuttle network, and LS settles near the highest active load
//! pressure (below it by the bleed flow's drop over the open shuttle).
//!
//! The shuttle is a separate element rather than a fifth port of the 4/3 valve, because every
//! element carries at most four node ports (`element::MAX_NODES`, the P, T, A, B of the valve):
//! a fifth would widen the port state of every element. It has no spool of its own: it reads
//! its valve's (`Element::reads_position_of`, the valve's slot of `State::spool`), so the
//! spool is one state in every formulation and in the linearization, where a change of the
//! valve's spool moves the valve's flows and the shuttle's together.
//! Branches are decided on the real part of Δp.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    Context, Element, ElementSpec, EnergyDomain, MechPort, PortEffort, PortState, Ports, Power,
    Variable, MAX_OUTPUTS,
};
use crate::elements::hydraulics::orifice;
use crate::elements::hydraulics::valve_4_3::Valve43;
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

/// Default opening range Δp_open of the one-way law [Pa].
pub const DEFAULT_OPENING_RANGE_PA: f64 = 1.0e5;

/// `[[elements]] type = "ls_shuttle"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LsShuttleSpec {
    /// Name.
    pub name: String,
    /// The 4/3 valve whose spool opens the shuttle (a `[[hydraulics.valves]]` entry, or a
    /// `valve_4_3` element listed before this one).
    pub valve: String,
    /// The load-sensing node LS (usually a small volume drained to tank by a throttle).
    pub ls: String,
    /// Flow constant C_s [m³/(s √Pa) per unit of U]: the open shuttle passes
    /// C_s |U| √Δp above the laminar transition.
    pub flow_constant: f64,
    /// Pressure difference Δp_open over which the one-way path opens fully [Pa]; default 1e5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening_range_pa: Option<f64>,
}

/// A compiled load-sensing shuttle.
#[derive(Debug, Clone, PartialEq)]
pub struct LsShuttle {
    /// Name.
    pub name: String,
    /// The valve's work port A.
    pub a: Node,
    /// The valve's work port B.
    pub b: Node,
    /// The LS node.
    pub ls: Node,
    /// C_s [m³/(s √Pa) per unit of U].
    pub flow_constant: f64,
    /// Δp_open [Pa].
    pub opening_range_pa: f64,
    /// The valve whose spool opens the shuttle (its Δp_tr too).
    pub valve: Valve43,
    /// The valve's index in `Model::elements`: the element whose spool the shuttle reads.
    pub valve_element: usize,
}

impl ElementSpec for LsShuttleSpec {
    type Law = LsShuttle;
    const NOUN: &'static str = "load-sensing shuttle";
    fn name(&self) -> &str {
        &self.name
    }
    fn flow_nodes(&self) -> Vec<&str> {
        vec![&self.ls]
    }
    /// Alone, no valve is known: `pipeline::compile` calls [`LsShuttleSpec::compile`] with the
    /// 4/3 valves compiled before it, among which the valve is resolved.
    fn compile(&self, cx: &Context) -> Result<LsShuttle, ModelError> {
        LsShuttleSpec::compile(self, cx, std::iter::empty())
    }
}

impl LsShuttleSpec {
    /// Checks the fields and resolves the LS node and the valve among the 4/3 valves compiled so
    /// far (`valves`: each with its index in `Model::elements`, its element index).
    pub fn compile<'v>(
        &self,
        cx: &Context,
        mut valves: impl Iterator<Item = (usize, &'v Valve43)>,
    ) -> Result<LsShuttle, ModelError> {
        let (valve_element, valve) = valves
            .find(|(_, v)| v.name == self.valve)
            .map(|(i, v)| (i, v.clone()))
            .ok_or_else(|| {
                cx.error(
                    "valve",
                    format!(
                        "no 4/3 valve '{}' (a [[hydraulics.valves]] entry, or a valve_4_3 \
                         element listed before this shuttle)",
                        self.valve
                    ),
                )
            })?;
        let ls = cx.node("ls", &self.ls)?;
        if ls == valve.a || ls == valve.b {
            return Err(cx.error(
                "ls",
                format!(
                    "'{}' is a work port of valve '{}': the LS node must be a node of its own",
                    self.ls, valve.name
                ),
            ));
        }
        let flow_constant = cx.positive("flow_constant", self.flow_constant)?;
        let opening_range_pa = match self.opening_range_pa {
            None => DEFAULT_OPENING_RANGE_PA,
            Some(x) => cx.positive("opening_range_pa", x)?,
        };
        Ok(LsShuttle {
            name: self.name.clone(),
            a: valve.a,
            b: valve.b,
            ls,
            flow_constant,
            opening_range_pa,
            valve,
            valve_element,
        })
    }
}

/// Flow Q [m³/s] from the active work port into LS at spool `u` [unit of U] and
/// Δp = p_W − p_LS [Pa] (module doc).
#[inline]
pub fn shuttle_flow<S: Real>(s: &LsShuttle, u: f64, dp: S) -> S {
    if u == 0.0 || dp.re() <= 0.0 {
        return S::zero();
    }
    let c = s.flow_constant * u.abs();
    let x = dp * (1.0 / s.opening_range_pa);
    let q = orifice::flow(c, dp, s.valve.laminar_dp_pa);
    if x.re() >= 1.0 {
        q
    } else {
        // a(Δp) = 3ξ² − 2ξ³
        x * x * (S::from(3.0) - x * 2.0) * q
    }
}

impl Element for LsShuttle {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        Ports {
            nodes: [Some(self.a), Some(self.b), Some(self.ls), None],
            mech: MechPort::None,
            input: None,
        }
    }
    /// Its valve's spool: the shuttle has no position of its own.
    fn reads_position_of(&self) -> Option<usize> {
        Some(self.valve_element)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        out.push(Variable {
            name: format!("{}.flow", self.name),
            unit: "m^3/s",
        });
        crate::elements::element::describe_power(&self.name, out);
    }
    /// Q from the active work port (A for U > 0, B for U < 0) into LS (module doc).
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let u = at.position;
        let mut e = PortEffort::zero();
        let w = if u >= 0.0 { 0 } else { 1 };
        let q = shuttle_flow(self, u, at.p[w] - at.p[2]);
        e.flow[w] = -q;
        e.flow[2] = q;
        e
    }
    /// Throttling loss (p_W − p_LS) Q ≥ 0.
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        Power {
            dissipated_w: crate::elements::element::absorbed_power(at, e),
            ..Default::default()
        }
    }
    fn domain(&self) -> EnergyDomain {
        EnergyDomain::Hydraulic
    }
    fn outputs(
        &self,
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        out[0] = e.flow[2];
        out[1] = crate::elements::element::absorbed_power(at, e);
        2
    }
}

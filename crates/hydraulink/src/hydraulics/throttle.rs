//! Throttle valve (000 eqs. 24–25):
//!
//! ```text
//!   from ──▷|◁── to        Q = C_vt sgn(p_from − p_to) √|p_from − p_to|,   C_vt = C_d A_t √(2/ρ)
//! ```
//! positive from `from` to `to`; laminar below Δp_tr like every orifice ([`super::orifice`]).
//! An element with two node ports (`from`, `to`) and output `<name>.flow` [m³/s].

use crate::element::{
    flow_element, Element, EnergyDomain, PortEffort, PortState, Ports, Power, Variable, MAX_OUTPUTS,
};
use crate::hydraulics::orifice;
use crate::model::ids::Node;
use crate::real::Real;

/// Compiled throttle.
#[derive(Debug, Clone)]
pub struct Throttle {
    /// Name.
    pub name: String,
    /// Upstream node.
    pub from: Node,
    /// Downstream node.
    pub to: Node,
    /// C_vt = C_d A_t √(2/ρ) [m³/(s √Pa)] (000 eq. 25).
    pub flow_constant: f64,
    /// Laminar transition Δp [Pa].
    pub laminar_dp_pa: f64,
}

/// Flow from `from` to `to` [m³/s].
#[inline]
pub fn flow<S: Real>(t: &Throttle, p_from: S, p_to: S) -> S {
    orifice::flow(t.flow_constant, p_from - p_to, t.laminar_dp_pa)
}

impl Element for Throttle {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        flow_element::ports(self.from, self.to)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        flow_element::describe(&self.name, out)
    }
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        flow_element::effort(flow(self, at.p[0], at.p[1]))
    }
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        flow_element::power(at, e)
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
        flow_element::outputs(e, out)
    }
}

//! Throttle valve (000 eqs. 24–25):
//!
//! ```text
//!   from ──▷|◁── to        Q = C_vt sgn(p_from − p_to) √|p_from − p_to|,   C_vt = C_d A_t √(2/ρ)
//! ```
//! positive from `from` to `to`; laminar below Δp_tr like every orifice ([`super::orifice`]).

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

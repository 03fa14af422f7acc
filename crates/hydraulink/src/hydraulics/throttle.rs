//! Throttle valve (000 eqs. 24–25):
//!
//! ```text
//!   from ──▷|◁── to        Q = C_vt sgn(p_from − p_to) √|p_from − p_to|,   C_vt = C_d A_t √(2/ρ)
//! ```
//! positive from `from` to `to`; laminar below Δp_tr like every orifice ([`super::orifice`]).

use crate::hydraulics::orifice;
use crate::model::Throttle;
use crate::real::Real;

/// Flow from `from` to `to` [m³/s].
#[inline]
pub fn flow<S: Real>(t: &Throttle, p_from: S, p_to: S) -> S {
    orifice::flow(t.flow_constant, p_from - p_to, t.laminar_dp_pa)
}

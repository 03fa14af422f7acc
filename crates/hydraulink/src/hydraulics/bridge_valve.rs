//! Open-centre proportional valve: a bridge of four orifices whose areas follow the opening κ
//! (004 eqs. 29, 31):
//!
//! ```text
//!          P                         P→A: A_max κ        A→T: A_max (1 − κ)
//!        ┌─┴─┐                       P→B: A_max (1 − κ)  B→T: A_max κ
//!   A ───┤ κ ├─── B                  Q = C_d A √(2 Δp / ρ) δ(Δp ≥ 0)   (no reverse flow, δ gating)
//!        └─┬─┘                       linear below Δp_tr, so the slope stays finite at Δp → 0
//!          T                         (004 has none; note 000_004 004-D "guard against 1/√0")
//! ```
//! At κ = κ₀ both work ports see a pressure-divider equilibrium; κ − κ₀ steers the cylinder.
//!
//! An element with four node ports in the order P, T, A, B and internal state
//! `<name>.opening` (κ, set before Newton, [`crate::element::PortState::position`]); outputs
//! `<name>.opening`, `<name>.flow_a`, `<name>.flow_b`.

use crate::element::{
    valve_element, Element, EnergyDomain, PortEffort, PortState, Ports, Power, Variable,
    MAX_OUTPUTS,
};
use crate::hydraulics::orifice;
use crate::model::ids::Node;
use crate::real::Real;

/// Compiled open-centre bridge valve (see `spec::BridgeValveSpec`).
#[derive(Debug, Clone)]
pub struct BridgeValve {
    /// Name.
    pub name: String,
    /// Supply.
    pub p: Node,
    /// Return.
    pub t: Node,
    /// Work port A.
    pub a: Node,
    /// Work port B.
    pub b: Node,
    /// C_d A_max √(2/ρ) [m³/(s √Pa)]: the flow constant at full opening.
    pub flow_constant: f64,
    /// Laminar transition Δp [Pa].
    pub laminar_dp_pa: f64,
    /// Input signal index.
    pub input: usize,
    /// Fixed trim, or `None` when the static initialization solves it.
    pub trim: Option<f64>,
}

/// One gated orifice: flow from the high side only [m³/s].
#[inline]
fn gated<S: Real>(c: f64, dp: S, dp_tr: f64) -> S {
    if dp.re() <= 0.0 {
        S::zero()
    } else {
        orifice::flow(c, dp, dp_tr)
    }
}

/// Flows into work ports A and B and out of P, into T [m³/s] at opening `kappa` ∈ [0, 1].
#[inline]
pub fn flows<S: Real>(v: &BridgeValve, kappa: f64, pp: S, pt: S, pa: S, pb: S) -> [S; 4] {
    let k = kappa.clamp(0.0, 1.0);
    let (open, close) = (v.flow_constant * k, v.flow_constant * (1.0 - k));
    let q_pa = gated(open, pp - pa, v.laminar_dp_pa);
    let q_at = gated(close, pa - pt, v.laminar_dp_pa);
    let q_pb = gated(close, pp - pb, v.laminar_dp_pa);
    let q_bt = gated(open, pb - pt, v.laminar_dp_pa);
    [q_pa - q_at, q_pb - q_bt, q_pa + q_pb, q_at + q_bt]
}

impl Element for BridgeValve {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        valve_element::ports(self.p, self.t, self.a, self.b, self.input)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        valve_element::describe(&self.name, "opening", out)
    }
    /// 004 eqs. 29, 31 at the opening κ = `at.position`: flows into P, T, A, B.
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let [qa, qb, qp, qt] = flows(self, at.position, at.p[0], at.p[1], at.p[2], at.p[3]);
        let mut e = PortEffort::zero();
        e.flow = [-qp, qt, qa, qb];
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
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        valve_element::outputs(at, e, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ids::VolumeId;

    fn valve() -> BridgeValve {
        BridgeValve {
            name: "v".into(),
            p: Node::Source(0),
            t: Node::Source(1),
            a: Node::Volume(VolumeId(0)),
            b: Node::Volume(VolumeId(1)),
            flow_constant: 0.67 * 0.0005 * (2.0f64 / 850.0).sqrt(),
            laminar_dp_pa: 1e4,
            input: 0,
            trim: None,
        }
    }

    #[test]
    fn conserves_mass_and_blocks_reverse_flow() {
        let v = valve();
        let [qa, qb, qp, qt] = flows::<f64>(&v, 0.4, 7.6e6, 1e5, 3e6, 5e6);
        assert!((qp - (qa + qb + qt)).abs() < 1e-15);
        // a work port above the supply pressure takes no flow from P and sends none back
        let [qa, _, qp, _] = flows::<f64>(&v, 0.4, 7.6e6, 1e5, 8e6, 5e6);
        assert!(qa < 0.0 && qp > 0.0);
    }

    #[test]
    fn naya_equilibrium_has_zero_net_flow() {
        // 004 eq. 32 in closed form (reference note 004-B): κ0 = 0.4646082, p1 = 3.321769 MPa,
        // p2 = 4.378231 MPa; port A = upper chamber (p1), port B = lower chamber (p2).
        let v = valve();
        let [qa, qb, _, _] = flows::<f64>(&v, 0.4646082, 7.6e6, 1e5, 3.321769e6, 4.378231e6);
        assert!(qa.abs() < 1e-8 && qb.abs() < 1e-8, "{qa} {qb}");
    }
}

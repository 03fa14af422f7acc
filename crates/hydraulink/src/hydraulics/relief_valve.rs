//! Direct-acting pressure-relief valve: a cracking pressure and a linear pressure–flow gradient
//! (the pressure override of the catalogue's p–Q curve), with a smooth onset.
//!
//! ```text
//!   inlet ──┬──▷ outlet         Δp = p_in − p_out
//!           │  ╱╲╱╲ spring      Q  = G ψ(Δp − p_cr),   G = Q_rated / Δp_override
//!           └──┘                ψ(x) = 0               x ≤ 0
//!                                      x² / (2 w)      0 < x < w     (C¹ onset, w: smoothing)
//!                                      x − w/2         x ≥ w
//! ```
//! Positive Q flows from `inlet` to `outlet`; no reverse flow (a poppet seats). At the rated flow
//! the pressure is p_cr + Δp_override + w/2. The poppet is quasi-static (no internal state);
//! the dynamics of the spring-loaded poppet are left out, see `docs/theory/04_hydraulics.md`.
//! Branches are decided on the real part of Δp, so residual and tangent agree.

use serde::{Deserialize, Serialize};

use crate::element::{
    flow_element, Context, Element, EnergyDomain, PortEffort, PortState, Ports, Power, Variable,
    MAX_NODES, MAX_OUTPUTS,
};
use crate::error::ModelError;
use crate::model::ids::Node;
use crate::real::Real;

/// `[[elements]] type = "relief_valve"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReliefValveSpec {
    /// Name.
    pub name: String,
    /// Protected node (a volume or the pump).
    pub inlet: String,
    /// Node it relieves to (usually the tank).
    pub outlet: String,
    /// Cracking pressure difference p_cr [Pa].
    pub cracking_pressure_pa: f64,
    /// Pressure rise over p_cr at the rated flow (pressure override) Δp_override [Pa].
    pub pressure_override_pa: f64,
    /// Rated flow Q_rated [m³/s].
    pub rated_flow_m3_s: f64,
    /// Width w of the smooth onset [Pa]; default 1 % of p_cr.
    #[serde(default)]
    pub smoothing_pa: Option<f64>,
}

/// A compiled relief valve.
#[derive(Debug, Clone, PartialEq)]
pub struct ReliefValve {
    /// Name.
    pub name: String,
    /// Inlet node.
    pub inlet: Node,
    /// Outlet node.
    pub outlet: Node,
    /// p_cr [Pa].
    pub cracking_pressure_pa: f64,
    /// G = Q_rated / Δp_override [m³/(s Pa)].
    pub gradient_m3_s_pa: f64,
    /// w [Pa].
    pub smoothing_pa: f64,
}

impl ReliefValveSpec {
    /// Checks the fields and resolves the nodes.
    pub fn compile(&self, cx: &Context) -> Result<ReliefValve, ModelError> {
        let inlet = cx.node("inlet", &self.inlet)?;
        let outlet = cx.node("outlet", &self.outlet)?;
        if inlet == outlet {
            return Err(cx.error("outlet", "is the same node as `inlet`"));
        }
        let p_cr = cx.positive("cracking_pressure_pa", self.cracking_pressure_pa)?;
        let over = cx.positive("pressure_override_pa", self.pressure_override_pa)?;
        let q = cx.positive("rated_flow_m3_s", self.rated_flow_m3_s)?;
        let w = match self.smoothing_pa {
            Some(w) => cx.positive("smoothing_pa", w)?,
            None => 0.01 * p_cr,
        };
        Ok(ReliefValve {
            name: self.name.clone(),
            inlet,
            outlet,
            cracking_pressure_pa: p_cr,
            gradient_m3_s_pa: q / over,
            smoothing_pa: w,
        })
    }
}

/// ψ(x): 0, x²/(2w), x − w/2 (C¹ ramp of width w) [same unit as x].
#[inline]
pub fn smooth_ramp<S: Real>(x: S, w: f64) -> S {
    let r = x.re();
    if r <= 0.0 {
        S::zero()
    } else if r < w {
        x * x * (0.5 / w)
    } else {
        x - S::from(0.5 * w)
    }
}

/// Flow from inlet to outlet [m³/s] at Δp = p_in − p_out [Pa].
#[inline]
pub fn flow<S: Real>(v: &ReliefValve, dp: S) -> S {
    smooth_ramp(dp - S::from(v.cracking_pressure_pa), v.smoothing_pa) * v.gradient_m3_s_pa
}

impl Element for ReliefValve {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        flow_element::ports(self.inlet, self.outlet)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        flow_element::describe(&self.name, out)
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        flow_element::effort(flow(self, at.p[0] - at.p[1]))
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

const _: () = assert!(MAX_NODES >= 2);

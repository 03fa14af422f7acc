//! Check valve: an orifice whose area opens smoothly once the pressure difference exceeds the
//! cracking pressure; closed against reverse flow.
//!
//! ```text
//!   inlet ──▷|── outlet       Δp = p_in − p_out
//!                             a(Δp) = 0                        Δp ≤ p_cr
//!                                     3ξ² − 2ξ³, ξ = (Δp − p_cr)/Δp_open   (smoothstep)
//!                                     1                        Δp ≥ p_cr + Δp_open
//!                             Q = a(Δp) Q_orifice(Δp)  (orifice law with its laminar region,
//!                                                       000 eqs. 24–26; C = C_d A √(2/ρ))
//! ```
//! Positive Q flows from `inlet` to `outlet`. Branches are decided on the real part of Δp.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    flow_element, Context, Element, ElementSpec, EnergyDomain, PortEffort, PortState, Ports, Power,
    Variable, MAX_OUTPUTS,
};
use crate::elements::hydraulics::orifice;
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

/// `[[elements]] type = "check_valve"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CheckValveSpec {
    /// Name.
    pub name: String,
    /// Node the flow comes from.
    pub inlet: String,
    /// Node the flow goes to.
    pub outlet: String,
    /// Cracking pressure difference p_cr [Pa].
    pub cracking_pressure_pa: f64,
    /// Further pressure difference over which it opens fully Δp_open [Pa].
    pub opening_range_pa: f64,
    /// Discharge coefficient C_d [-].
    pub discharge_coefficient: f64,
    /// Fully open area A [m²].
    pub area_m2: f64,
    /// Laminar-to-turbulent transition Δp_tr [Pa]; default 2e5 Pa.
    #[serde(default)]
    pub laminar_dp_pa: Option<f64>,
    /// Oil density ρ [kg/m³]; default 870.
    #[serde(default)]
    pub density_kg_m3: Option<f64>,
}

/// A compiled check valve.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckValve {
    /// Name.
    pub name: String,
    /// Inlet node.
    pub inlet: Node,
    /// Outlet node.
    pub outlet: Node,
    /// p_cr [Pa].
    pub cracking_pressure_pa: f64,
    /// Δp_open [Pa].
    pub opening_range_pa: f64,
    /// C = C_d A √(2/ρ) [m³/(s √Pa)].
    pub flow_constant: f64,
    /// Δp_tr [Pa].
    pub laminar_dp_pa: f64,
}

impl ElementSpec for CheckValveSpec {
    type Law = CheckValve;
    const NOUN: &'static str = "check valve";
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, cx: &Context) -> Result<CheckValve, ModelError> {
        CheckValveSpec::compile(self, cx)
    }
}

impl CheckValveSpec {
    /// Checks the fields and resolves the nodes.
    pub fn compile(&self, cx: &Context) -> Result<CheckValve, ModelError> {
        let inlet = cx.node("inlet", &self.inlet)?;
        let outlet = cx.node("outlet", &self.outlet)?;
        if inlet == outlet {
            return Err(cx.error("outlet", "is the same node as `inlet`"));
        }
        let p_cr = cx.non_negative("cracking_pressure_pa", self.cracking_pressure_pa)?;
        let open = cx.positive("opening_range_pa", self.opening_range_pa)?;
        let cd = cx.positive("discharge_coefficient", self.discharge_coefficient)?;
        let a = cx.positive("area_m2", self.area_m2)?;
        let tr = match self.laminar_dp_pa {
            Some(x) => cx.positive("laminar_dp_pa", x)?,
            None => 2e5,
        };
        let rho = match self.density_kg_m3 {
            Some(x) => cx.positive("density_kg_m3", x)?,
            None => 870.0,
        };
        Ok(CheckValve {
            name: self.name.clone(),
            inlet,
            outlet,
            cracking_pressure_pa: p_cr,
            opening_range_pa: open,
            flow_constant: cd * a * (2.0 / rho).sqrt(), // 000 eq. 25
            laminar_dp_pa: tr,
        })
    }
}

/// Opening a(Δp) ∈ [0, 1] [-].
#[inline]
pub fn opening<S: Real>(v: &CheckValve, dp: S) -> S {
    let xi = (dp - S::from(v.cracking_pressure_pa)) * (1.0 / v.opening_range_pa);
    let r = xi.re();
    if r <= 0.0 {
        S::zero()
    } else if r >= 1.0 {
        S::one()
    } else {
        xi * xi * (S::from(3.0) - xi * 2.0)
    }
}

/// Flow from inlet to outlet [m³/s] at Δp = p_in − p_out [Pa].
#[inline]
pub fn flow<S: Real>(v: &CheckValve, dp: S) -> S {
    let a = opening(v, dp);
    if a.re() == 0.0 {
        return S::zero();
    }
    a * orifice::flow(v.flow_constant, dp, v.laminar_dp_pa)
}

impl Element for CheckValve {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        flow_element::ports(self.inlet, self.outlet)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        flow_element::describe(&self.name, out);
        crate::elements::element::describe_power(&self.name, out);
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
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        let n = flow_element::outputs(e, out);
        out[n] = crate::elements::element::absorbed_power(at, e);
        n + 1
    }
}

//! Throttle valve (000 eqs. 24–25):
//!
//! ```text
//!   from ──▷|◁── to        Q = C_vt sgn(p_from − p_to) √|p_from − p_to|,   C_vt = C_d A_t √(2/ρ)
//! ```
//! positive from `from` to `to`; laminar below Δp_tr like every orifice ([`super::orifice`]).
//! An element with two node ports (`from`, `to`) and output `<name>.flow` [m³/s].

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    flow_element, Context, Element, ElementSpec, EnergyDomain, PortEffort, PortState, Ports, Power,
    Variable, MAX_OUTPUTS,
};
use crate::elements::field_check::{flow_constant_finite, node_ref, At, Nodes};
use crate::elements::hydraulics::orifice;
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

/// A throttle valve between two nodes: Q = C_d A √(2/ρ) sgn(Δp) √|Δp| (000 eqs. 24–25), in
/// `[[hydraulics.throttles]]` or as an `[[elements]]` entry of type `throttle`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ThrottleSpec {
    /// Unique name.
    pub name: String,
    /// Upstream node (positive flow from here).
    pub from: String,
    /// Downstream node.
    pub to: String,
    /// Discharge coefficient C_d [-].
    pub discharge_coefficient: f64,
    /// Orifice area A_t [m²].
    pub area_m2: f64,
    /// Laminar-transition pressure difference [Pa].
    #[serde(default = "default_laminar")]
    pub laminar_dp_pa: f64,
}

fn default_laminar() -> f64 {
    orifice::DEFAULT_LAMINAR_DP_PA
}

/// C_vt = C_d A_t √(2/ρ) [m³/(s √Pa)] from C_d [-], A_t [m²] and ρ [kg/m³] (000 eq. 25).
pub fn flow_constant(discharge_coefficient: f64, area_m2: f64, density_kg_m3: f64) -> f64 {
    discharge_coefficient * area_m2 * (2.0 / density_kg_m3).sqrt()
}

impl ElementSpec for ThrottleSpec {
    type Law = Throttle;
    const NOUN: &'static str = "throttle";
    fn name(&self) -> &str {
        &self.name
    }
    fn flow_nodes(&self) -> Vec<&str> {
        self.node_names().to_vec()
    }
    fn compile(&self, cx: &Context) -> Result<Throttle, ModelError> {
        ThrottleSpec::compile(self, cx)
    }
}

impl ThrottleSpec {
    /// Its nodes `from`, `to` by name.
    pub fn node_names(&self) -> [&str; 2] {
        [&self.from, &self.to]
    }

    /// Validation against the spec (`pipeline::validate`, before compile): the nodes exist and
    /// differ, the numbers are finite, the constants > 0 and the flow constant representable.
    /// `at` is `hydraulics.throttles[i]` or `elements[i]`.
    pub(crate) fn validate(
        &self,
        at: &At,
        nodes: &Nodes,
        _inputs: &[&str],
        density_kg_m3: f64,
    ) -> Result<(), ModelError> {
        node_ref(at, "from", &self.from, nodes)?;
        node_ref(at, "to", &self.to, nodes)?;
        if self.to == self.from {
            return Err(at.error(
                "to",
                format!(
                    "is the same node as `from` ('{}'); a throttle connects two nodes",
                    self.from
                ),
            ));
        }
        at.positive("discharge_coefficient", self.discharge_coefficient)?;
        at.positive("area_m2", self.area_m2)?;
        flow_constant_finite(
            at,
            "area_m2",
            self.discharge_coefficient * self.area_m2,
            density_kg_m3,
        )?;
        at.positive("laminar_dp_pa", self.laminar_dp_pa)?;
        Ok(())
    }

    /// Checks the fields and resolves the nodes (after `ThrottleSpec::validate`).
    pub fn compile(&self, cx: &Context) -> Result<Throttle, ModelError> {
        let from = cx.node("from", &self.from)?;
        let to = cx.node("to", &self.to)?;
        if from == to {
            return Err(cx.error("to", "is the same node as `from`"));
        }
        let cd = cx.positive("discharge_coefficient", self.discharge_coefficient)?;
        let area = cx.positive("area_m2", self.area_m2)?;
        let c = flow_constant(cd, area, cx.density_kg_m3);
        if !c.is_finite() {
            return Err(cx.error(
                "area_m2",
                format!("is out of range: the flow constant C_d A √(2/ρ) is {c:?}"),
            ));
        }
        Ok(Throttle {
            name: self.name.clone(),
            from,
            to,
            flow_constant: c,
            laminar_dp_pa: cx.positive("laminar_dp_pa", self.laminar_dp_pa)?,
        })
    }
}

/// Compiled throttle.
#[derive(Debug, Clone, PartialEq)]
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
        flow_element::describe(&self.name, out);
        crate::elements::element::describe_power(&self.name, out);
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
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        let n = flow_element::outputs(e, out);
        out[n] = crate::elements::element::absorbed_power(at, e);
        n + 1
    }
}

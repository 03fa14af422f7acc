//! Gas-charged hydraulic accumulator (bladder or piston type) on a volume.
//!
//! ```text
//!        ┌─────────┐  gas: p V_g^n = p₀ V₀^n   (polytropic, exponent n)
//!        │   gas   │  V_g = V₀ (p₀ / p)^(1/n)   for p > p₀;  V_g = V₀ for p ≤ p₀ (empty of oil)
//!        ├─────────┤  oil: V_f = V₀ − V_g
//!        │   oil   │  C = ∂V_f/∂p = V_g / (n p)   (p > p₀), 0 otherwise
//!        └────┬────┘
//!             │ node (a volume)       ṗ = (Σ Q_in − V̇) / (V/B_e + C)    (000 eq. 22 with C)
//! ```
//! The gas volume follows the node pressure through the polytropic law, so it is not an
//! independent unknown: the pressure is the state, V_g an output. Its oil volume joins the
//! node's capacitance as the compliance C. Stored gas energy (work of the oil on the gas)
//! E = (p V_g − p₀ V₀)/(n − 1) (n ≠ 1), p₀ V₀ ln(p/p₀) (n = 1). The pressures are absolute.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    Context, Element, ElementSpec, EnergyDomain, MechPort, PortEffort, PortState, Ports, Power,
    Variable, MAX_OUTPUTS,
};
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

/// `[[elements]] type = "accumulator"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AccumulatorSpec {
    /// Name.
    pub name: String,
    /// The volume it is connected to.
    pub node: String,
    /// Gas pre-charge pressure p₀ (absolute) [Pa].
    pub precharge_pressure_pa: f64,
    /// Gas volume at the pre-charge pressure V₀ (the accumulator's size) [m³].
    pub gas_volume_m3: f64,
    /// Polytropic exponent n [-]; default 1.4 (adiabatic nitrogen).
    #[serde(default)]
    pub polytropic_exponent: Option<f64>,
}

/// A compiled accumulator.
#[derive(Debug, Clone, PartialEq)]
pub struct Accumulator {
    /// Name.
    pub name: String,
    /// The volume.
    pub node: Node,
    /// p₀ [Pa].
    pub precharge_pressure_pa: f64,
    /// V₀ [m³].
    pub gas_volume_m3: f64,
    /// n [-].
    pub exponent: f64,
}

impl ElementSpec for AccumulatorSpec {
    type Law = Accumulator;
    const NOUN: &'static str = "accumulator";
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, cx: &Context) -> Result<Accumulator, ModelError> {
        AccumulatorSpec::compile(self, cx)
    }
}

impl AccumulatorSpec {
    /// Checks the fields and resolves the node.
    pub fn compile(&self, cx: &Context) -> Result<Accumulator, ModelError> {
        let node = cx.volume("node", &self.node)?;
        let p0 = cx.positive("precharge_pressure_pa", self.precharge_pressure_pa)?;
        let v0 = cx.positive("gas_volume_m3", self.gas_volume_m3)?;
        let n = match self.polytropic_exponent {
            Some(n) => {
                let n = cx.finite("polytropic_exponent", n)?;
                if !(1.0..=2.0).contains(&n) {
                    return Err(cx.error(
                        "polytropic_exponent",
                        format!("must lie in [1, 2] (1 isothermal, 1.4 adiabatic), got {n}"),
                    ));
                }
                n
            }
            None => 1.4,
        };
        Ok(Accumulator {
            name: self.name.clone(),
            node,
            precharge_pressure_pa: p0,
            gas_volume_m3: v0,
            exponent: n,
        })
    }
}

/// Gas volume V_g(p) [m³].
#[inline]
pub fn gas_volume<S: Real>(a: &Accumulator, p: S) -> S {
    if p.re() <= a.precharge_pressure_pa {
        S::from(a.gas_volume_m3)
    } else {
        (S::from(a.precharge_pressure_pa) / p).powf(1.0 / a.exponent) * a.gas_volume_m3
    }
}

/// Compliance C = ∂V_f/∂p [m³/Pa].
#[inline]
pub fn compliance<S: Real>(a: &Accumulator, p: S) -> S {
    if p.re() <= a.precharge_pressure_pa {
        S::zero()
    } else {
        gas_volume(a, p) / (p * a.exponent)
    }
}

/// Energy stored in the gas [J].
pub fn stored_energy(a: &Accumulator, p: f64) -> f64 {
    let (p0, v0, n) = (a.precharge_pressure_pa, a.gas_volume_m3, a.exponent);
    if p <= p0 {
        0.0
    } else if (n - 1.0).abs() < 1e-12 {
        p0 * v0 * (p / p0).ln()
    } else {
        (p * gas_volume(a, p) - p0 * v0) / (n - 1.0)
    }
}

impl Element for Accumulator {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        Ports {
            nodes: [Some(self.node), None, None, None],
            mech: MechPort::None,
            input: None,
        }
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        out.push(Variable {
            name: format!("{}.gas_volume", self.name),
            unit: "m^3",
        });
        out.push(Variable {
            name: format!("{}.energy", self.name),
            unit: "J",
        });
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let mut e = PortEffort::zero();
        e.compliance[0] = compliance(self, at.p[0]);
        e
    }
    fn power(&self, at: &PortState<f64>, _e: &PortEffort<f64>) -> Power {
        Power {
            stored_j: stored_energy(self, at.p[0]),
            ..Default::default()
        }
    }
    fn domain(&self) -> EnergyDomain {
        EnergyDomain::Hydraulic
    }
    fn outputs(
        &self,
        at: &PortState<f64>,
        _e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        out[0] = gas_volume(self, at.p[0]);
        out[1] = stored_energy(self, at.p[0]);
        2
    }
}

//! Counterbalance (load-holding) valve: a pilot-assisted relief stage from the load to the
//! valve side, with an integrated check valve for free flow the other way.
//!
//! ```text
//!                 pilot (p_x)
//!                   ┆
//!   load ──────┬──[main stage]──┬────── valve side
//!   (p_L)      │                │       (p_V)
//!              └────◁|──────────┘       (check: free flow valve side → load)
//!
//!   main stage, load → valve side:
//!     ξ  = (p_L + ψ p_x − p_s) / Δp_band                     opening command [-]
//!     a  = 0              ξ ≤ 0      (closed, leak-tight)
//!          ξ              0 < ξ < 1  (opens in proportion over the band)
//!          1              ξ ≥ 1
//!     Q_main = a Q_orifice(C_m, p_L − p_V)                   (000 eqs. 24–26)
//!   check, valve side → load:
//!     Q_check = the check-valve law at Δp = p_V − p_L        (`check_valve::flow`)
//!   net flow out of the load node and into the valve-side node:
//!     Q = Q_main − Q_check
//! ```
//!
//! Pressures are absolute [Pa]; ψ is the pilot ratio (pilot area over the load-side seat area,
//! typically 3–8). The pilot port takes no flow. Branches are decided on the real parts of ξ and
//! of the check's Δp, so residual and tangent take the same branch. With the valve closed
//! (ξ ≤ 0) and no reverse pressure above the check's cracking pressure, the flow is exactly 0:
//! the valve is leak-tight. Throttling loss: (p_L − p_V) Q ≥ 0.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    Context, Element, ElementSpec, EnergyDomain, MechPort, PortEffort, PortState, Ports, Power,
    Variable, MAX_OUTPUTS,
};
use crate::elements::hydraulics::check_valve::{self, CheckValve};
use crate::elements::hydraulics::orifice;
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

/// `[[elements]] type = "counterbalance_valve"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CounterbalanceValveSpec {
    /// Name.
    pub name: String,
    /// Load node (the actuator chamber that holds the load).
    pub load: String,
    /// Valve-side node (towards the directional valve).
    pub valve: String,
    /// Pilot node (usually the opposite actuator line).
    pub pilot: String,
    /// Setting p_s: the main stage starts to open when p_L + ψ p_x reaches it [Pa].
    pub setting_pa: f64,
    /// Pilot ratio ψ [-].
    pub pilot_ratio: f64,
    /// Pressure band Δp_band over which the main stage opens fully [Pa].
    pub opening_range_pa: f64,
    /// Discharge coefficient C_d of both stages [-].
    pub discharge_coefficient: f64,
    /// Fully open area of the main stage [m²].
    pub area_m2: f64,
    /// Fully open area of the check [m²]; default: the main stage's.
    #[serde(default)]
    pub check_area_m2: Option<f64>,
    /// Cracking pressure difference of the check [Pa]; default 1e5.
    #[serde(default)]
    pub check_cracking_pressure_pa: Option<f64>,
    /// Further pressure difference over which the check opens fully [Pa]; default 2e5.
    #[serde(default)]
    pub check_opening_range_pa: Option<f64>,
    /// Laminar-to-turbulent transition Δp_tr of both stages [Pa]; default 2e5.
    #[serde(default)]
    pub laminar_dp_pa: Option<f64>,
}

/// A compiled counterbalance valve.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterbalanceValve {
    /// Name.
    pub name: String,
    /// Load node.
    pub load: Node,
    /// Valve-side node.
    pub valve: Node,
    /// Pilot node.
    pub pilot: Node,
    /// p_s [Pa].
    pub setting_pa: f64,
    /// ψ [-].
    pub pilot_ratio: f64,
    /// Δp_band [Pa].
    pub opening_range_pa: f64,
    /// C_m = C_d A √(2/ρ) of the main stage [m³/(s √Pa)].
    pub flow_constant: f64,
    /// Δp_tr [Pa].
    pub laminar_dp_pa: f64,
    /// The integrated check (inlet: valve side, outlet: load).
    pub check: CheckValve,
}

impl ElementSpec for CounterbalanceValveSpec {
    type Law = CounterbalanceValve;
    const NOUN: &'static str = "counterbalance valve";
    fn name(&self) -> &str {
        &self.name
    }
    fn flow_nodes(&self) -> Vec<&str> {
        vec![self.load.as_str(), self.valve.as_str()]
    }
    fn compile(&self, cx: &Context) -> Result<CounterbalanceValve, ModelError> {
        CounterbalanceValveSpec::compile(self, cx)
    }
}

impl CounterbalanceValveSpec {
    /// Checks the fields and resolves the nodes.
    pub fn compile(&self, cx: &Context) -> Result<CounterbalanceValve, ModelError> {
        let load = cx.node("load", &self.load)?;
        let valve = cx.node("valve", &self.valve)?;
        let pilot = cx.node("pilot", &self.pilot)?;
        if load == valve {
            return Err(cx.error(
                "valve",
                format!("is the same node as load ('{}')", self.load),
            ));
        }
        let setting = cx.positive("setting_pa", self.setting_pa)?;
        let ratio = cx.non_negative("pilot_ratio", self.pilot_ratio)?;
        let band = cx.positive("opening_range_pa", self.opening_range_pa)?;
        let cd = cx.positive("discharge_coefficient", self.discharge_coefficient)?;
        let area = cx.positive("area_m2", self.area_m2)?;
        let check_area = match self.check_area_m2 {
            Some(x) => cx.positive("check_area_m2", x)?,
            None => area,
        };
        let cracking = match self.check_cracking_pressure_pa {
            Some(x) => cx.non_negative("check_cracking_pressure_pa", x)?,
            None => 1e5,
        };
        let check_range = match self.check_opening_range_pa {
            Some(x) => cx.positive("check_opening_range_pa", x)?,
            None => 2e5,
        };
        let tr = match self.laminar_dp_pa {
            Some(x) => cx.positive("laminar_dp_pa", x)?,
            None => orifice::DEFAULT_LAMINAR_DP_PA,
        };
        let k = (2.0 / cx.density_kg_m3).sqrt(); // 000 eq. 25
        Ok(CounterbalanceValve {
            name: self.name.clone(),
            load,
            valve,
            pilot,
            setting_pa: setting,
            pilot_ratio: ratio,
            opening_range_pa: band,
            flow_constant: cd * area * k,
            laminar_dp_pa: tr,
            check: CheckValve {
                name: format!("{}.check", self.name),
                inlet: valve,
                outlet: load,
                cracking_pressure_pa: cracking,
                opening_range_pa: check_range,
                flow_constant: cd * check_area * k,
                laminar_dp_pa: tr,
            },
        })
    }
}

/// Opening a ∈ [0, 1] of the main stage at load pressure `pl` and pilot pressure `px` [Pa].
#[inline]
pub fn opening<S: Real>(v: &CounterbalanceValve, pl: S, px: S) -> S {
    let xi = (pl + px * v.pilot_ratio - S::from(v.setting_pa)) * (1.0 / v.opening_range_pa);
    let r = xi.re();
    if r <= 0.0 {
        S::zero()
    } else if r >= 1.0 {
        S::one()
    } else {
        xi
    }
}

/// Net flow out of the load node and into the valve-side node [m³/s] at load, valve-side and
/// pilot pressures `pl`, `pv`, `px` [Pa].
#[inline]
pub fn flow<S: Real>(v: &CounterbalanceValve, pl: S, pv: S, px: S) -> S {
    let a = opening(v, pl, px);
    let main = if a.re() == 0.0 {
        S::zero()
    } else {
        a * orifice::flow(v.flow_constant, pl - pv, v.laminar_dp_pa)
    };
    main - check_valve::flow(&v.check, pv - pl)
}

impl Element for CounterbalanceValve {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        Ports {
            nodes: [Some(self.load), Some(self.valve), Some(self.pilot), None],
            mech: MechPort::None,
            input: None,
        }
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        for (q, unit) in [("flow", "m^3/s"), ("opening", "1")] {
            out.push(Variable {
                name: format!("{}.{q}", self.name),
                unit,
            });
        }
        crate::elements::element::describe_power(&self.name, out);
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let q = flow(self, at.p[0], at.p[1], at.p[2]);
        let mut e = PortEffort::zero();
        e.flow[0] = -q;
        e.flow[1] = q;
        e
    }
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        Power {
            dissipated_w: (at.p[0] - at.p[1]) * e.flow[1],
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
        out[0] = e.flow[1];
        out[1] = opening(self, at.p[0], at.p[2]);
        out[2] = crate::elements::element::absorbed_power(at, e);
        3
    }
}

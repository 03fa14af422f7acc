//! Port relief: the overload (port) relief valve with its make-up (anti-cavitation) check that
//! a mobile control valve carries on each work port, between the port's chamber and the tank.
//!
//! ```text
//!              ┌── relief ──▷──┐     Q_r = relief law at Δp = p_port − p_tank
//!   port ──────┤               ├────── tank      (`relief_valve::flow`: cracking pressure,
//!   (chamber)  └──◁─ make-up ──┘                  override, C¹ onset)
//!                                    Q_m = check law at Δp = p_tank − p_port
//!                                                (`check_valve::flow`: cracking pressure,
//!                                                 smoothstep opening, orifice law)
//!   flow into the port  = Q_m − Q_r,   flow into the tank = Q_r − Q_m
//! ```
//! The relief caps the chamber at about p_tank + p_cr + Δp_override when a load drives the
//! piston against a closed valve spool; the make-up lets tank oil into the chamber when a load
//! pulls the piston faster than the pump fills it, so the chamber stays near the tank pressure
//! instead of falling below zero absolute. Both laws are the relief and check valves' own
//! functions, called here, not written again; both only dissipate:
//! P = (p_port − p_tank) Q_r + (p_tank − p_port) Q_m ≥ 0.
//!
//! Defaults of the make-up check: cracking 20 kPa (0.2 bar), fully open 30 kPa above it, C_d
//! 0.7, and an area that passes the relief's rated flow fully open at 1 bar,
//! A = Q_rated / (C_d √(2 · 1e5 / ρ)): the port's largest designed flow refills the chamber
//! within about a bar below the tank. Its laminar region ends at 10 kPa, below the cracking
//! pressure, so the open check follows the turbulent orifice law.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    flow_element, Context, Element, ElementSpec, EnergyDomain, PortEffort, PortState, Ports, Power,
    Variable, MAX_OUTPUTS,
};
use crate::elements::hydraulics::check_valve::{self, CheckValve};
use crate::elements::hydraulics::relief_valve::{self, ReliefValve};
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

/// Default cracking pressure of the make-up check [Pa] (0.2 bar).
pub const DEFAULT_MAKEUP_CRACKING_PA: f64 = 2e4;
/// Default opening range of the make-up check [Pa].
pub const DEFAULT_MAKEUP_OPENING_PA: f64 = 3e4;
/// Pressure drop at which the default make-up area passes the relief's rated flow [Pa] (1 bar).
pub const MAKEUP_SIZING_DP_PA: f64 = 1e5;
/// Default discharge coefficient of the make-up check [-].
pub const DEFAULT_MAKEUP_DISCHARGE: f64 = 0.7;
/// Default laminar-to-turbulent transition of the make-up check [Pa].
pub const DEFAULT_MAKEUP_LAMINAR_PA: f64 = 1e4;

/// `[[elements]] type = "port_relief"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PortReliefSpec {
    /// Name.
    pub name: String,
    /// The protected work port: the chamber's volume.
    pub port: String,
    /// The tank (or return line) it relieves to and refills from.
    pub tank: String,
    /// Cracking pressure difference of the relief p_cr [Pa].
    pub cracking_pressure_pa: f64,
    /// Pressure rise over p_cr at the rated flow (pressure override) Δp_override [Pa].
    pub pressure_override_pa: f64,
    /// Rated flow of the relief Q_rated [m³/s].
    pub rated_flow_m3_s: f64,
    /// Width w of the relief's smooth onset [Pa]; default 1 % of p_cr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smoothing_pa: Option<f64>,
    /// Cracking pressure difference of the make-up check (tank over port) [Pa]; default 2e4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub makeup_cracking_pressure_pa: Option<f64>,
    /// Further pressure difference over which the make-up check opens fully [Pa]; default 3e4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub makeup_opening_range_pa: Option<f64>,
    /// Fully open area of the make-up check [m²]; default: the relief's rated flow at 1 bar,
    /// Q_rated / (C_d √(2 · 1e5 / ρ)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub makeup_area_m2: Option<f64>,
    /// Discharge coefficient of the make-up check [-]; default 0.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub makeup_discharge_coefficient: Option<f64>,
    /// Laminar-to-turbulent transition of the make-up check Δp_tr [Pa]; default 1e4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub makeup_laminar_dp_pa: Option<f64>,
}

/// A compiled port relief: a relief valve from the port to the tank and a check valve from the
/// tank to the port.
#[derive(Debug, Clone, PartialEq)]
pub struct PortRelief {
    /// Name.
    pub name: String,
    /// The relief, inlet the port, outlet the tank.
    pub relief: ReliefValve,
    /// The make-up check, inlet the tank, outlet the port.
    pub makeup: CheckValve,
}

impl ElementSpec for PortReliefSpec {
    type Law = PortRelief;
    const NOUN: &'static str = "port relief";
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, cx: &Context) -> Result<PortRelief, ModelError> {
        PortReliefSpec::compile(self, cx)
    }
}

impl PortReliefSpec {
    /// Checks the fields, resolves the nodes and derives the defaults.
    pub fn compile(&self, cx: &Context) -> Result<PortRelief, ModelError> {
        let port = cx.volume("port", &self.port)?;
        let tank = cx.node("tank", &self.tank)?;
        if port == tank {
            return Err(cx.error("tank", "is the same node as `port`"));
        }
        // the relief is the relief valve's own law and checks (same field names), without a
        // poppet lag
        let relief = crate::elements::hydraulics::relief_valve::ReliefValveSpec {
            name: self.name.clone(),
            inlet: self.port.clone(),
            outlet: self.tank.clone(),
            cracking_pressure_pa: self.cracking_pressure_pa,
            pressure_override_pa: self.pressure_override_pa,
            rated_flow_m3_s: self.rated_flow_m3_s,
            smoothing_pa: self.smoothing_pa,
            poppet_time_constant_s: None,
        }
        .compile(cx)?;
        let q = self.rated_flow_m3_s;
        let m_cr = match self.makeup_cracking_pressure_pa {
            Some(x) => cx.non_negative("makeup_cracking_pressure_pa", x)?,
            None => DEFAULT_MAKEUP_CRACKING_PA,
        };
        let m_open = match self.makeup_opening_range_pa {
            Some(x) => cx.positive("makeup_opening_range_pa", x)?,
            None => DEFAULT_MAKEUP_OPENING_PA,
        };
        let cd = match self.makeup_discharge_coefficient {
            Some(x) => cx.positive("makeup_discharge_coefficient", x)?,
            None => DEFAULT_MAKEUP_DISCHARGE,
        };
        if cd > 1.0 {
            return Err(cx.error(
                "makeup_discharge_coefficient",
                format!("must be ≤ 1, got {cd}"),
            ));
        }
        let rho = cx.density_kg_m3;
        if !(rho > 0.0 && rho.is_finite()) {
            return Err(cx.error(
                "makeup_area_m2",
                "the oil density must be finite and > 0 for the make-up check",
            ));
        }
        let area = match self.makeup_area_m2 {
            Some(x) => cx.positive("makeup_area_m2", x)?,
            None => q / (cd * (2.0 * MAKEUP_SIZING_DP_PA / rho).sqrt()),
        };
        let laminar = match self.makeup_laminar_dp_pa {
            Some(x) => cx.positive("makeup_laminar_dp_pa", x)?,
            None => DEFAULT_MAKEUP_LAMINAR_PA,
        };
        Ok(PortRelief {
            name: self.name.clone(),
            relief,
            makeup: CheckValve {
                name: self.name.clone(),
                inlet: tank,
                outlet: port,
                cracking_pressure_pa: m_cr,
                opening_range_pa: m_open,
                flow_constant: cd * area * (2.0 / rho).sqrt(), // 000 eq. 25
                laminar_dp_pa: laminar,
            },
        })
    }
}

/// Relief flow Q_r from the port to the tank and make-up flow Q_m from the tank to the port
/// [m³/s] at the port pressure `p_port` and tank pressure `p_tank` [Pa].
#[inline]
pub fn flows<S: Real>(v: &PortRelief, p_port: S, p_tank: S) -> (S, S) {
    (
        relief_valve::flow(&v.relief, p_port - p_tank),
        check_valve::flow(&v.makeup, p_tank - p_port),
    )
}

impl Element for PortRelief {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        flow_element::ports(self.relief.inlet, self.relief.outlet)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        for q in ["relief_flow", "makeup_flow"] {
            out.push(Variable {
                name: format!("{}.{q}", self.name),
                unit: "m^3/s",
            });
        }
        crate::elements::element::describe_power(&self.name, out);
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let (relief, makeup) = flows(self, at.p[0], at.p[1]);
        // the net flow from the port to the tank
        flow_element::effort(relief - makeup)
    }
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        // (p_port − p_tank)(Q_r − Q_m): each valve passes flow only down its pressure drop
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
        let (relief, makeup) = flows(self, at.p[0], at.p[1]);
        out[0] = relief;
        out[1] = makeup;
        out[2] = crate::elements::element::absorbed_power(at, e);
        3
    }
}

impl PortRelief {
    /// The protected port (a volume).
    pub fn port(&self) -> Node {
        self.relief.inlet
    }
}

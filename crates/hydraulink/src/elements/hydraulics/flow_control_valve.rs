//! Two-way pressure-compensated flow control valve: a metering orifice in series with a
//! compensator spool that throttles whatever pressure difference exceeds its spring setting, so
//! the forward flow stays at the set flow whatever the load pressure (Merritt, *Hydraulic
//! Control Systems*, Wiley 1967, §3.7; Manring and Fales, *Hydraulic Control Systems*, 2nd ed.,
//! Wiley 2019, ch. 5).
//!
//! ```text
//!   inlet ──[metering orifice]──[compensator]── outlet      Δp = p_in − p_out
//!
//!   Δp_m = smin(Δp, Δp_c)       pressure difference over the metering orifice: the compensator
//!                               is wide open below its setting Δp_c and takes the rest above it
//!   smin(x, c) = x                          x ≤ c − δ
//!                x − (x − c + δ)²/(4δ)      |x − c| < δ     (C¹ blend over the band 2δ)
//!                c                          x ≥ c + δ
//!   Q = u · orifice(C_m, Δp_m)  with C_m = Q_set/√Δp_c, the orifice law with its laminar region
//!                               (000 eqs. 24–26), u ∈ [0, 1] the optional input (1 without one)
//! ```
//! So Q = u·Q_set for Δp ≥ Δp_c + δ, a plain orifice below Δp_c − δ, and reverse flow (Δp < 0)
//! goes back through the metering orifice unregulated (a compensator does not act on reverse
//! flow; put a `check_valve` in parallel for a free reverse path). The loss is Δp·Q.
//! Branches are decided on the real part of Δp.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    absorbed_power, describe_power, flow_element, Context, Element, ElementSpec, EnergyDomain,
    PortEffort, PortState, Ports, Power, Variable, MAX_OUTPUTS,
};
use crate::elements::hydraulics::orifice;
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

/// `[[elements]] type = "flow_control_valve"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FlowControlValveSpec {
    /// Name.
    pub name: String,
    /// Node the regulated flow comes from.
    pub inlet: String,
    /// Node the regulated flow goes to.
    pub outlet: String,
    /// Set flow Q_set at full opening, held for Δp above the compensator setting [m³/s].
    pub set_flow_m3_s: f64,
    /// Compensator setting Δp_c: the pressure difference over the metering orifice that the
    /// compensator holds [Pa] (typically 4–10 bar).
    pub compensator_pressure_pa: f64,
    /// Half-width δ of the band over which the compensator takes over [Pa]; default
    /// 0.1 Δp_c; less than Δp_c.
    #[serde(default)]
    pub regulation_band_pa: Option<f64>,
    /// Laminar-to-turbulent transition Δp_tr of the metering orifice [Pa]; default 0.2 Δp_c.
    #[serde(default)]
    pub laminar_dp_pa: Option<f64>,
    /// Name of the `[[inputs]]` entry that sets the opening u (the set flow is u·Q_set, u
    /// clamped to [0, 1], taken at the end of each step and held over it); none: fully open.
    #[serde(default)]
    pub input: Option<String>,
}

/// A compiled flow control valve.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowControlValve {
    /// Name.
    pub name: String,
    /// Inlet node.
    pub inlet: Node,
    /// Outlet node.
    pub outlet: Node,
    /// Δp_c [Pa].
    pub compensator_pressure_pa: f64,
    /// δ [Pa].
    pub regulation_band_pa: f64,
    /// C_m = Q_set/√Δp_c [m³/(s √Pa)].
    pub flow_constant: f64,
    /// Δp_tr [Pa].
    pub laminar_dp_pa: f64,
    /// Index of the opening input (`Model::inputs`), if any.
    pub input: Option<usize>,
}

impl FlowControlValveSpec {
    /// Checks the fields and resolves the nodes and the input.
    pub fn compile(&self, cx: &Context) -> Result<FlowControlValve, ModelError> {
        let inlet = cx.node("inlet", &self.inlet)?;
        let outlet = cx.node("outlet", &self.outlet)?;
        if inlet == outlet {
            return Err(cx.error("outlet", "is the same node as `inlet`"));
        }
        let q_set = cx.positive("set_flow_m3_s", self.set_flow_m3_s)?;
        let dp_c = cx.positive("compensator_pressure_pa", self.compensator_pressure_pa)?;
        let band = match self.regulation_band_pa {
            Some(x) => cx.positive("regulation_band_pa", x)?,
            None => 0.1 * dp_c,
        };
        if band >= dp_c {
            return Err(cx.error(
                "regulation_band_pa",
                format!(
                    "is {band} Pa, not less than `compensator_pressure_pa` ({dp_c} Pa): the \
                     compensator would act at zero pressure difference"
                ),
            ));
        }
        let tr = match self.laminar_dp_pa {
            Some(x) => cx.positive("laminar_dp_pa", x)?,
            None => 0.2 * dp_c,
        };
        if tr > dp_c {
            return Err(cx.error(
                "laminar_dp_pa",
                format!(
                    "is {tr} Pa, more than `compensator_pressure_pa` ({dp_c} Pa): the metering \
                     orifice would still be laminar at the setting and never pass the set flow"
                ),
            ));
        }
        Ok(FlowControlValve {
            name: self.name.clone(),
            inlet,
            outlet,
            compensator_pressure_pa: dp_c,
            regulation_band_pa: band,
            // the metering orifice passes Q_set at Δp_m = Δp_c (000 eq. 25)
            flow_constant: q_set / dp_c.sqrt(),
            laminar_dp_pa: tr,
            input: cx.input("input", &self.input)?,
        })
    }
}

impl ElementSpec for FlowControlValveSpec {
    type Law = FlowControlValve;
    const NOUN: &'static str = "flow control valve";
    fn name(&self) -> &str {
        &self.name
    }
    fn flow_nodes(&self) -> Vec<&str> {
        vec![&self.inlet, &self.outlet]
    }
    fn compile(&self, cx: &Context) -> Result<FlowControlValve, ModelError> {
        FlowControlValveSpec::compile(self, cx)
    }
}

/// Pressure difference over the metering orifice Δp_m = smin(Δp, Δp_c) [Pa].
#[inline]
pub fn metering_dp<S: Real>(v: &FlowControlValve, dp: S) -> S {
    let (c, d) = (v.compensator_pressure_pa, v.regulation_band_pa);
    let x = dp.re();
    if x <= c - d {
        dp
    } else if x >= c + d {
        S::from(c)
    } else {
        let y = dp - S::from(c - d);
        dp - y * y * (0.25 / d)
    }
}

/// Flow from inlet to outlet [m³/s] at Δp = p_in − p_out [Pa] and opening `u` (clamped to
/// [0, 1]).
#[inline]
pub fn flow<S: Real>(v: &FlowControlValve, dp: S, u: f64) -> S {
    let u = u.clamp(0.0, 1.0);
    orifice::flow(v.flow_constant, metering_dp(v, dp), v.laminar_dp_pa) * u
}

impl Element for FlowControlValve {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        let mut p = flow_element::ports(self.inlet, self.outlet);
        p.input = self.input;
        p
    }
    /// With an input, the opening u is the element's valve position (column `<name>.opening`).
    fn n_position(&self) -> usize {
        usize::from(self.input.is_some())
    }
    fn describe_position(&self, out: &mut Vec<Variable>) {
        if self.input.is_some() {
            out.push(Variable {
                name: format!("{}.opening", self.name),
                unit: "1",
            });
        }
    }
    /// u(0), clamped to [0, 1].
    fn initial_position(&self, _trim: f64, u0: f64) -> f64 {
        u0.clamp(0.0, 1.0)
    }
    /// u = u(t_k+1), clamped to [0, 1] and held over the step.
    fn advance_position(&self, _position: f64, _trim: f64, _u0: f64, u1: f64, _dt: f64) -> f64 {
        u1.clamp(0.0, 1.0)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        flow_element::describe(&self.name, out);
        describe_power(&self.name, out);
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let u = if self.input.is_some() {
            at.position
        } else {
            1.0
        };
        flow_element::effort(flow(self, at.p[0] - at.p[1], u))
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
        out[n] = absorbed_power(at, e);
        n + 1
    }
}

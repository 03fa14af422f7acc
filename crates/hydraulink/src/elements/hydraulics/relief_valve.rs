//! Direct-acting pressure-relief valve: a cracking pressure and a linear pressure–flow gradient
//! (the pressure override of the catalogue's p–Q curve), with a smooth onset, and an optional
//! first-order poppet lag: the proof of an element with an internal state (issue 10, item 8).
//!
//! ```text
//!   inlet ──┬──▷ outlet         Δp = p_in − p_out
//!           │  ╱╲╱╲ spring      Q_s = G ψ(Δp − p_cr),   G = Q_rated / Δp_override
//!           └──┘                ψ(x) = 0               x ≤ 0
//!                                      x² / (2 w)      0 < x < w     (C¹ onset, w: smoothing)
//!                                      x − w/2         x ≥ w
//! ```
//! Positive Q flows from `inlet` to `outlet`; no reverse flow (a poppet seats). At the rated flow
//! the pressure is p_cr + Δp_override + w/2. Branches are decided on the real part of Δp, so
//! residual and tangent agree.
//!
//! **Static valve** (no `poppet_time_constant_s`): Q = Q_s(Δp), the poppet is quasi-static.
//!
//! **Poppet lag** (`poppet_time_constant_s` = τ): the poppet opening x [-] is an internal state
//! (`<name>.poppet`, a Newton unknown of the penalty formulation) that lags its static value,
//! and the flow passes the opening it has:
//! ```text
//!   a_r   = Q_rated / Δp_r,   Δp_r = p_cr + Δp_override + w/2   (conductance at the rated point)
//!   x_s(Δp) = Q_s(Δp) / (a_r Δp)    Δp > p_cr,   0 otherwise    (x_s = 1 at the rated point)
//!   ẋ = (x_s(Δp) − x) / τ                                        (first-order lag)
//!   Q = a_r x Δp
//! ```
//! At steady state x = x_s and Q = Q_s: the static valve. The valve only dissipates,
//! Q Δp = a_r x Δp² ≥ 0 while x ≥ 0, and the trapezoidal rule keeps x ≥ 0 for Δt ≤ 2τ (its
//! amplification (1 − Δt/2τ)/(1 + Δt/2τ) ≥ 0), so a τ below Δt/2 is rejected
//! when it compiles. An opening that lags a falling Δp lets a short reverse flow pass
//! (Δp < 0 with x > 0), still dissipative, until the poppet has seated.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    flow_element, Context, Element, ElementSpec, EnergyDomain, PortEffort, PortState, Ports, Power,
    Variable, MAX_INTERNAL, MAX_NODES, MAX_OUTPUTS,
};
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

/// `[[elements]] type = "relief_valve"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// Time constant τ of the first-order poppet lag [s]; without it the valve is static.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poppet_time_constant_s: Option<f64>,
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
    /// The poppet lag, if any (then the opening is an internal state).
    pub poppet: Option<PoppetLag>,
}

/// The first-order poppet lag of a relief valve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoppetLag {
    /// τ [s].
    pub time_constant_s: f64,
    /// a_r = Q_rated / (p_cr + Δp_override + w/2), the conductance at the rated point
    /// [m³/(s Pa)].
    pub rated_conductance_m3_s_pa: f64,
}

impl ElementSpec for ReliefValveSpec {
    type Law = ReliefValve;
    const NOUN: &'static str = "relief valve";
    fn name(&self) -> &str {
        &self.name
    }
    fn internal_state_field(&self) -> Option<&'static str> {
        self.poppet_time_constant_s
            .map(|_| "poppet_time_constant_s")
    }
    fn compile(&self, cx: &Context) -> Result<ReliefValve, ModelError> {
        ReliefValveSpec::compile(self, cx)
    }
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
        let poppet = match self.poppet_time_constant_s {
            None => None,
            Some(tau) => {
                let tau = cx.positive("poppet_time_constant_s", tau)?;
                // trapezoidal amplification (1 − Δt/2τ)/(1 + Δt/2τ) ≥ 0 keeps x ≥ 0 (module doc)
                if tau < 0.5 * cx.step_s {
                    return Err(cx.error(
                        "poppet_time_constant_s",
                        format!(
                            "must be ≥ Δt/2 = {} s (solver.step_s / 2), got {tau} s: the \
                             trapezoidal rule would drive the poppet opening below 0",
                            0.5 * cx.step_s
                        ),
                    ));
                }
                Some(PoppetLag {
                    time_constant_s: tau,
                    rated_conductance_m3_s_pa: q / (p_cr + over + 0.5 * w),
                })
            }
        };
        Ok(ReliefValve {
            name: self.name.clone(),
            inlet,
            outlet,
            cracking_pressure_pa: p_cr,
            gradient_m3_s_pa: q / over,
            smoothing_pa: w,
            poppet,
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

/// Static opening x_s(Δp) = Q_s(Δp) / (a_r Δp) of a valve with poppet lag `lag` [-]: 0 up to
/// the cracking pressure, 1 at the rated point.
#[inline]
pub fn static_opening<S: Real>(v: &ReliefValve, lag: &PoppetLag, dp: S) -> S {
    // Q_s > 0 only for Δp > p_cr > 0, so the division is safe on this branch
    if dp.re() <= v.cracking_pressure_pa {
        S::zero()
    } else {
        flow(v, dp) / (dp * lag.rated_conductance_m3_s_pa)
    }
}

/// Name of the poppet opening, `<name>.poppet` [-].
fn poppet_variable(name: &str) -> Variable {
    Variable {
        name: format!("{name}.poppet"),
        unit: "-",
    }
}

impl Element for ReliefValve {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        flow_element::ports(self.inlet, self.outlet)
    }
    fn n_internal(&self) -> usize {
        usize::from(self.poppet.is_some())
    }
    fn describe_internal(&self, out: &mut Vec<Variable>) {
        if self.poppet.is_some() {
            out.push(poppet_variable(&self.name));
        }
    }
    fn steady_internal<S: Real>(&self, at: &PortState<S>, out: &mut [S; MAX_INTERNAL]) {
        if let Some(lag) = &self.poppet {
            out[0] = static_opening(self, lag, at.p[0] - at.p[1]);
        }
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        flow_element::describe(&self.name, out);
        if self.poppet.is_some() {
            out.push(poppet_variable(&self.name));
        }
        crate::elements::element::describe_power(&self.name, out);
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let dp = at.p[0] - at.p[1];
        match &self.poppet {
            None => flow_element::effort(flow(self, dp)),
            Some(lag) => {
                let x = at.internal[0];
                // Q = a_r x Δp, ẋ = (x_s(Δp) − x)/τ (module doc)
                let mut e = flow_element::effort(x * dp * lag.rated_conductance_m3_s_pa);
                e.internal_rate[0] =
                    (static_opening(self, lag, dp) - x) * (1.0 / lag.time_constant_s);
                e
            }
        }
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
        let mut n = flow_element::outputs(e, out);
        if self.poppet.is_some() {
            out[n] = at.internal[0];
            n += 1;
        }
        out[n] = crate::elements::element::absorbed_power(at, e);
        n + 1
    }
}

const _: () = assert!(MAX_NODES >= 2);

//! Pressure-compensated variable-displacement pump: the fixed pump of [`super::fixed_pump`]
//! (same shaft-speed input, leakage from η_v, torque from η_hm) whose displacement fraction
//! ε ∈ [0, 1] falls from 1 to 0 as the outlet pressure rises over the compensator setting, with
//! an optional first-order swash-plate lag.
//!
//! ```text
//!              ω [rad/s] (input `speed_input`)
//!                 │
//!   inlet ──▶──( ⊃ )──▶──┬── outlet     Δp = p_out − p_in
//!                 ↗ ε    │              Q = ε D ω/(2π) − C_L Δp
//!                 └──────┘ compensator  ε_s(Δp) = 1 − σ((Δp − p_c)/Δp_reg)
//!                                       σ(x) = 0 (x ≤ 0),  3x² − 2x³ (0 < x < 1),  1 (x ≥ 1)
//! ```
//! The compensator senses the outlet pressure over the inlet (the case drains to tank): full
//! stroke up to p_c, zero stroke at p_c + Δp_reg. σ is the C¹ smoothstep: ε_s and its slope are
//! continuous at both ends of the regulation range, so Newton sees no kink; it is monotone, so
//! ε_s falls from 1 to 0. At deadhead (no consumer) the pump holds the pressure where its
//! delivery ε D ω/(2π) equals its own leakage C_L Δp, just above p_c. Branches are decided on
//! the real part of Δp.
//!
//! **Static compensator** (no `swash_plate_time_constant_s`): ε = ε_s(Δp).
//!
//! **Swash-plate lag** (`swash_plate_time_constant_s` = τ): ε is an internal state
//! (`<name>.displacement`, a Newton unknown of the penalty formulation), ε̇ = (ε_s(Δp) − ε)/τ.
//! The trapezoidal step is ε_k+1 = [(1 − r) ε_k + r ε_s,k + r ε_s,k+1]/(1 + r) with r = Δt/(2τ):
//! for τ ≥ Δt/2 (r ≤ 1) it is a convex combination, so ε stays in [0, 1]. A smaller τ is rejected
//! when the model compiles (the relief valve's poppet lag has the same bound).

use serde::{Deserialize, Serialize};

use crate::element::{
    flow_element, Context, Element, EnergyDomain, PortEffort, PortState, Ports, Power, Variable,
    MAX_INTERNAL, MAX_OUTPUTS,
};
use crate::error::ModelError;
use crate::hydraulics::fixed_pump::{self, PumpShaft, PumpShaftFields};
use crate::model::ids::Node;
use crate::real::Real;

/// `[[elements]] type = "pc_pump"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PcPumpSpec {
    /// Name.
    pub name: String,
    /// Suction node (usually a tank).
    pub inlet: String,
    /// Delivery node (usually the pump volume V_P).
    pub outlet: String,
    /// Name of the `[[inputs]]` entry whose value is the shaft speed ω [rad/s].
    pub speed_input: String,
    /// Largest displacement D (ε = 1) [m³/rev].
    pub displacement_m3_per_rev: f64,
    /// Compensator setting p_c: the pressure difference p_out − p_in where the displacement
    /// starts to fall [Pa].
    pub compensator_pressure_pa: f64,
    /// Regulation range Δp_reg: the displacement is 0 at p_c + Δp_reg [Pa].
    pub regulation_range_pa: f64,
    /// Volumetric efficiency η_v at the rated point and full displacement [-], in (0, 1];
    /// default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volumetric_efficiency: Option<f64>,
    /// Pressure difference at which η_v is given, Δp_r [Pa]; needed when η_v < 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rated_pressure_pa: Option<f64>,
    /// Shaft speed at which η_v is given, ω_r [rad/s]; needed when η_v < 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rated_speed_rad_s: Option<f64>,
    /// Hydromechanical efficiency η_hm [-], in (0, 1]; default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanical_efficiency: Option<f64>,
    /// Time constant τ of the first-order swash-plate lag [s]; without it the compensator is
    /// static.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swash_plate_time_constant_s: Option<f64>,
}

/// A compiled pressure-compensated pump.
#[derive(Debug, Clone, PartialEq)]
pub struct PcPump {
    /// Name.
    pub name: String,
    /// Suction node.
    pub inlet: Node,
    /// Delivery node.
    pub outlet: Node,
    /// Index of the speed input (`Model::inputs`).
    pub input: usize,
    /// Largest displacement, leakage, η_hm.
    pub shaft: PumpShaft,
    /// p_c [Pa].
    pub compensator_pressure_pa: f64,
    /// Δp_reg [Pa].
    pub regulation_range_pa: f64,
    /// τ of the swash-plate lag [s], if any (then ε is an internal state).
    pub time_constant_s: Option<f64>,
}

impl PcPumpSpec {
    /// Checks the fields and resolves the nodes and the speed input.
    pub fn compile(&self, cx: &Context) -> Result<PcPump, ModelError> {
        let (inlet, outlet, input) =
            fixed_pump::compile_ports(cx, &self.inlet, &self.outlet, &self.speed_input)?;
        let shaft = PumpShaft::compile(
            cx,
            &PumpShaftFields {
                displacement_m3_per_rev: self.displacement_m3_per_rev,
                volumetric_efficiency: self.volumetric_efficiency,
                rated_pressure_pa: self.rated_pressure_pa,
                rated_speed_rad_s: self.rated_speed_rad_s,
                mechanical_efficiency: self.mechanical_efficiency,
            },
        )?;
        let p_c = cx.positive("compensator_pressure_pa", self.compensator_pressure_pa)?;
        let range = cx.positive("regulation_range_pa", self.regulation_range_pa)?;
        let time_constant_s = match self.swash_plate_time_constant_s {
            None => None,
            Some(tau) => {
                let tau = cx.positive("swash_plate_time_constant_s", tau)?;
                // r = Δt/(2τ) ≤ 1 keeps ε in [0, 1] (module doc)
                if tau < 0.5 * cx.step_s {
                    return Err(cx.error(
                        "swash_plate_time_constant_s",
                        format!(
                            "must be ≥ Δt/2 = {} s (solver.step_s / 2), got {tau} s: the \
                             trapezoidal rule would drive the displacement outside [0, 1]",
                            0.5 * cx.step_s
                        ),
                    ));
                }
                Some(tau)
            }
        };
        Ok(PcPump {
            name: self.name.clone(),
            inlet,
            outlet,
            input,
            shaft,
            compensator_pressure_pa: p_c,
            regulation_range_pa: range,
            time_constant_s,
        })
    }
}

/// Static displacement fraction ε_s(Δp) = 1 − σ((Δp − p_c)/Δp_reg) [-] at Δp = p_out − p_in
/// [Pa] (module doc).
#[inline]
pub fn static_displacement<S: Real>(p: &PcPump, dp: S) -> S {
    let x = (dp - S::from(p.compensator_pressure_pa)) * (1.0 / p.regulation_range_pa);
    let r = x.re();
    if r <= 0.0 {
        S::one()
    } else if r >= 1.0 {
        S::zero()
    } else {
        // 1 − (3x² − 2x³)
        S::one() - x * x * (S::from(3.0) - x * 2.0)
    }
}

impl PcPump {
    /// The displacement fraction at `at`: the internal state with a lag, else ε_s.
    #[inline]
    fn displacement<S: Real>(&self, at: &PortState<S>) -> S {
        match self.time_constant_s {
            Some(_) => at.internal[0],
            None => static_displacement(self, at.p[1] - at.p[0]),
        }
    }
}

impl Element for PcPump {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        fixed_pump::ports(self.inlet, self.outlet, self.input)
    }
    fn n_position(&self) -> usize {
        1
    }
    fn describe_position(&self, out: &mut Vec<Variable>) {
        fixed_pump::describe_speed(&self.name, out)
    }
    /// ω(0) = u(0).
    fn initial_position(&self, _trim: f64, u0: f64) -> f64 {
        u0
    }
    /// ω = u(t_k+1), held over the step.
    fn advance_position(&self, _position: f64, _trim: f64, _u0: f64, u1: f64, _dt: f64) -> f64 {
        u1
    }
    fn n_internal(&self) -> usize {
        usize::from(self.time_constant_s.is_some())
    }
    fn describe_internal(&self, out: &mut Vec<Variable>) {
        if self.time_constant_s.is_some() {
            out.push(fixed_pump::variable(&self.name, "displacement", "-"));
        }
    }
    fn steady_internal<S: Real>(&self, at: &PortState<S>, out: &mut [S; MAX_INTERNAL]) {
        if self.time_constant_s.is_some() {
            out[0] = static_displacement(self, at.p[1] - at.p[0]);
        }
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        flow_element::describe(&self.name, out);
        out.push(fixed_pump::variable(
            &self.name,
            "displacement_fraction",
            "-",
        ));
        out.push(fixed_pump::variable(&self.name, "shaft_torque", "N m"));
        out.push(fixed_pump::variable(&self.name, "shaft_power", "W"));
        crate::element::describe_power(&self.name, out);
    }
    /// Q = ε D ω/(2π) − C_L Δp from inlet to outlet; with the lag ε̇ = (ε_s − ε)/τ (module doc).
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let dp = at.p[1] - at.p[0];
        let eps = self.displacement(at);
        let mut e = flow_element::effort(self.shaft.flow(eps, at.position, dp));
        if let Some(tau) = self.time_constant_s {
            e.internal_rate[0] = (static_displacement(self, dp) - eps) * (1.0 / tau);
        }
        e
    }
    fn power(&self, at: &PortState<f64>, _e: &PortEffort<f64>) -> Power {
        self.shaft
            .power(self.displacement(at), at.position, at.p[1] - at.p[0])
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
        let (w, dp, eps) = (at.position, at.p[1] - at.p[0], self.displacement(at));
        out[0] = e.flow[1];
        out[1] = eps;
        out[2] = self.shaft.torque(eps, w, dp);
        out[3] = out[2] * w;
        out[4] = crate::element::absorbed_power(at, e);
        5
    }
}

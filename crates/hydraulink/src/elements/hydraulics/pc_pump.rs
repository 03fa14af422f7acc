//! Pressure-compensated variable-displacement pump: the fixed pump of [`super::fixed_pump`]
//! (same shaft-speed input, leakage from η_v, torque from η_hm) whose displacement fraction
//! ε ∈ [0, 1] falls from 1 to 0 as the outlet pressure rises over the compensator setting, with
//! an optional first-order swash-plate lag, and three opt-in regulators: load sensing, a pressure
//! cut-off and an absorbed-power (torque) limiter.
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
//! **Load sensing** (`load_sense` = node LS): the compensator senses p_out − p_LS instead of Δp,
//! and p_c (`compensator_pressure_pa`) becomes the margin (typically 1.5–3 MPa): the pump holds
//! its outlet p_c above the highest load pressure that the valves report to LS (`ls_shuttle`).
//! With the valves centred LS drains to tank and the pump holds only the margin, delivering its
//! leakage: it absorbs almost no power. The LS port takes no flow (a pilot line).
//!
//! **Pressure cut-off** (`pressure_cutoff_pa` = p_max): a second compensator on Δp,
//! ε_x(Δp) = 1 − σ((Δp − p_max)/Δp_reg), that destrokes the pump at its maximum pressure whatever
//! LS reads. The two compensators act in series, ε_comp = ε_s ε_x: both are 1 outside their own
//! regulation range, so the product is the lower of the two wherever at most one regulates; it
//! is C¹, monotone and in [0, 1].
//!
//! **Power limiter** (`max_power_w` = P_max; the "horsepower" or torque control of an excavator
//! pump). With the torque law of [`super::fixed_pump`], T = ε D Δp/(2π η_hm) while the pump pumps
//! (ω Δp > 0), the shaft power ω T stays at or below P_max exactly when
//! ```text
//!   ε ≤ ε_P(Δp, ω) = 2π η_hm P_max / (D ω Δp)        (ω Δp > 0; no limit otherwise)
//!
//!   Q  ▲ ε = 1 ─────────╮                   the regulator curve at speed ω: full flow,
//!      │                 ╲ Q Δp ≈ η_hm P_max   then the constant-power hyperbola
//!      │                  ╲                    Q = η_hm P_max/Δp, then the compensator
//!      │                   ╲___                (or the cut-off) destrokes to 0
//!      │                       ‾‾‾╲_
//!      └────────────────────────────┴──▶ Δp
//!                                  p_c (p_max)
//! ```
//! (Bosch Rexroth, "Axial piston variable pump A10V(S)O series 31", data sheet RE 92701,
//! 2016: DFLR pressure, flow and power control, whose power controller keeps the product of
//! operating pressure and displacement constant, a hyperbola in the Δp–Q plane, and DFR
//! pressure and flow (load-sensing) control with its pressure cut-off.)
//! The limiter and the compensators are combined by a smooth minimum of relative width k = 0.1
//! (`POWER_BLEND`): with y = ε_P/ε_comp,
//! ```text
//!   ε = ε_comp m(y),   m(y) = min(1, y) − h² k/4,   h = max(0, k − |1 − y|)/k
//! ```
//! m is the C¹ polynomial smooth minimum of 1 and y: m = y for y ≤ 1 − k, m = 1 for y ≥ 1 + k, a
//! parabola between with matching values and slopes. Hence ε ≤ min(ε_comp, ε_P) everywhere (the
//! power limit holds exactly in the model's own torque; in the blend the pump gives up at most
//! k ε_comp/4, 2.5 % of the compensators' stroke), ε ∈ [0, 1], ε is C¹ in (Δp, p_LS, ω) and it does not rise
//! with Δp (∂ε/∂ε_comp = m − y m′ ≥ 0 and ∂ε/∂ε_P = m′ ≥ 0 on k < 2). As Δp → 0⁺ or ε_comp → 0,
//! y grows past 1 + k and ε = ε_comp exactly, so the branches join without a kink.
//!
//! **Static compensator** (no `swash_plate_time_constant_s`): ε = ε_s(Δp), the combined target
//! of all the regulators present (`target_displacement`).
//!
//! **Swash-plate lag** (`swash_plate_time_constant_s` = τ): ε is an internal state
//! (`<name>.displacement`, a Newton unknown of the penalty formulation), ε̇ = (ε_s − ε)/τ with
//! ε_s the combined target, so a fast load step can draw more than P_max for about τ.
//! The trapezoidal step is ε_k+1 = [(1 − r) ε_k + r ε_s,k + r ε_s,k+1]/(1 + r) with r = Δt/(2τ):
//! for τ ≥ Δt/2 (r ≤ 1) it is a convex combination, so ε stays in [0, 1]. A smaller τ is rejected
//! when the model compiles (the relief valve's poppet lag has the same bound).
//!
//! Outputs: `<name>.flow` (Q), `<name>.displacement_fraction` (ε), `<name>.shaft_torque`,
//! `<name>.shaft_power` (ω T) and `<name>.power_w`.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    flow_element, Context, Element, ElementSpec, EnergyDomain, PortEffort, PortState, Ports, Power,
    Variable, MAX_INTERNAL, MAX_OUTPUTS,
};
use crate::elements::hydraulics::fixed_pump::{self, PumpShaft, PumpShaftFields};
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

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
    /// Largest shaft power P_max the pump absorbs [W] (the power or torque limiter): the
    /// displacement is limited so that ω T ≤ P_max; without it, no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_power_w: Option<f64>,
    /// Load-sensing node LS: the compensator senses p_out − p_LS, and
    /// `compensator_pressure_pa` is the margin held above it; without it, p_out − p_in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_sense: Option<String>,
    /// Pressure cut-off p_max: a second compensator on p_out − p_in that destrokes the pump
    /// from p_max to p_max + Δp_reg [Pa]; without it, none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure_cutoff_pa: Option<f64>,
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
    /// The regulators beyond the compensator on Δp (module doc); all `None` by default.
    pub regulators: Regulators,
}

/// The opt-in regulators of a pressure-compensated pump (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Regulators {
    /// Load-sensing node LS (node port 2), if any.
    pub load_sense: Option<Node>,
    /// Pressure cut-off p_max [Pa], if any.
    pub pressure_cutoff_pa: Option<f64>,
    /// 2π η_hm P_max / D [Pa rad/s], the constant of ε_P = c/(ω Δp), if a power limit is set.
    pub power_constant: Option<f64>,
}

/// Relative width k of the smooth minimum that joins the power limiter to the compensators
/// (module doc): the blend spans y = ε_P/ε_comp ∈ [1 − k, 1 + k].
pub const POWER_BLEND: f64 = 0.1;

impl ElementSpec for PcPumpSpec {
    type Law = PcPump;
    const NOUN: &'static str = "pressure-compensated pump";
    fn name(&self) -> &str {
        &self.name
    }
    fn flow_nodes(&self) -> Vec<&str> {
        vec![&self.inlet, &self.outlet]
    }
    fn internal_state_field(&self) -> Option<&'static str> {
        self.swash_plate_time_constant_s
            .map(|_| "swash_plate_time_constant_s")
    }
    fn compile(&self, cx: &Context) -> Result<PcPump, ModelError> {
        PcPumpSpec::compile(self, cx)
    }
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
        let load_sense = match &self.load_sense {
            None => None,
            Some(n) => {
                let ls = cx.node("load_sense", n)?;
                if ls == outlet {
                    return Err(cx.error(
                        "load_sense",
                        "is the pump's own outlet: the compensator would sense p_out − p_out = 0 \
                         and never destroke; name the node the valves report the load to",
                    ));
                }
                Some(ls)
            }
        };
        let pressure_cutoff_pa = match self.pressure_cutoff_pa {
            None => None,
            Some(x) => Some(cx.positive("pressure_cutoff_pa", x)?),
        };
        let power_constant = match self.max_power_w {
            None => None,
            // ε_P = 2π η_hm P_max/(D ω Δp) (module doc)
            Some(w) => Some(
                std::f64::consts::TAU
                    * shaft.mechanical_efficiency
                    * cx.positive("max_power_w", w)?
                    / shaft.displacement_m3_per_rev,
            ),
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
            regulators: Regulators {
                load_sense,
                pressure_cutoff_pa,
                power_constant,
            },
        })
    }
}

/// The compensator law 1 − σ((x − x_0)/Δp_reg) [-] (module doc).
#[inline]
fn compensator<S: Real>(x: S, x0: f64, range: f64) -> S {
    let x = (x - S::from(x0)) * (1.0 / range);
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

/// Static displacement fraction ε_s(Δp) = 1 − σ((Δp − p_c)/Δp_reg) [-] at Δp = p_out − p_in
/// [Pa] of the compensator alone (module doc); with load sensing, a cut-off or a power limit
/// use [`target_displacement`].
#[inline]
pub fn static_displacement<S: Real>(p: &PcPump, dp: S) -> S {
    compensator(dp, p.compensator_pressure_pa, p.regulation_range_pa)
}

/// The C¹ smooth minimum m(y) of 1 and y, of relative width k = [`POWER_BLEND`] (module doc).
#[inline]
pub fn smooth_min_one<S: Real>(y: S) -> S {
    let k = POWER_BLEND;
    let r = y.re();
    if r <= 1.0 - k {
        y
    } else if r >= 1.0 + k {
        S::one()
    } else if r <= 1.0 {
        // min = y, h k = k − (1 − y)
        let hk = y + (k - 1.0);
        y - hk * hk * (0.25 / k)
    } else {
        // min = 1, h k = k − (y − 1)
        let hk = S::from(k + 1.0) - y;
        S::one() - hk * hk * (0.25 / k)
    }
}

/// The target displacement fraction of all the regulators present [-] (module doc): the
/// compensator on Δp = p_out − p_in (on p_out − p_LS with load sensing), the cut-off on Δp and the
/// power limiter at speed ω [rad/s], from the node pressures `p` (ports inlet, outlet, LS).
#[inline]
pub fn target_displacement<S: Real>(pump: &PcPump, p: &[S], omega: f64) -> S {
    let dp = p[1] - p[0];
    let reg = &pump.regulators;
    let sensed = match reg.load_sense {
        Some(_) => p[1] - p[2],
        None => dp,
    };
    let mut eps = compensator(
        sensed,
        pump.compensator_pressure_pa,
        pump.regulation_range_pa,
    );
    if let Some(p_max) = reg.pressure_cutoff_pa {
        eps *= compensator(dp, p_max, pump.regulation_range_pa);
    }
    if let Some(c) = reg.power_constant {
        // ε_P = c/(ω Δp) where the pump pumps (ω Δp > 0); ε = ε_comp m(ε_P/ε_comp)
        let load = dp * omega;
        if load.re() > 0.0 && eps.re() > 0.0 {
            let y = S::from(c) / (load * eps);
            if y.re() < 1.0 + POWER_BLEND {
                eps *= smooth_min_one(y);
            }
        }
    }
    eps
}

impl PcPump {
    /// The displacement fraction at `at`: the internal state with a lag, else ε_s.
    #[inline]
    fn displacement<S: Real>(&self, at: &PortState<S>) -> S {
        match self.time_constant_s {
            Some(_) => at.internal[0],
            None => target_displacement(self, &at.p, at.position),
        }
    }
}

impl Element for PcPump {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        let mut p = fixed_pump::ports(self.inlet, self.outlet, self.input);
        // the LS pilot line: its pressure in, no flow out
        p.nodes[2] = self.regulators.load_sense;
        p
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
    /// Its shaft: ω is the position.
    fn is_driven(&self) -> bool {
        true
    }
    /// T = T_i + sgn(ω) |T_i| (1/η_hm − 1) at the displacement fraction ε (module doc).
    fn drive_torque(&self, at: &PortState<f64>) -> f64 {
        self.shaft
            .torque(self.displacement(at), at.position, at.p[1] - at.p[0])
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
            out[0] = target_displacement(self, &at.p, at.position);
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
        crate::elements::element::describe_power(&self.name, out);
    }
    /// Q = ε D ω/(2π) − C_L Δp from inlet to outlet; with the lag ε̇ = (ε_s − ε)/τ (module doc).
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let dp = at.p[1] - at.p[0];
        let eps = self.displacement(at);
        let mut e = flow_element::effort(self.shaft.flow(eps, at.position, dp));
        if let Some(tau) = self.time_constant_s {
            e.internal_rate[0] =
                (target_displacement(self, &at.p, at.position) - eps) * (1.0 / tau);
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
    /// Minus the hydraulic power it delivers.
    fn power_meaning(&self) -> &'static str {
        "negative while it pumps, minus the hydraulic power it delivers, (p_out − p_in) Q"
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
        out[4] = crate::elements::element::absorbed_power(at, e);
        5
    }
}

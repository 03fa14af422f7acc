//! Hydraulic motor driving a revolute joint through a gear (an excavator's swing drive): the
//! first element with both hydraulic node ports and a mechanical port.
//!
//! ```text
//!            Q_A                                  gear i
//!   A ──────▶──┐    ┌─────────┐  ω_m = i q̇  ┌────┐  q̇, τ
//!              ├───▶│  motor  │─────────────│ i:1│──────▶ joint
//!   B ◀─────◀──┘    │ D, η_hm │             └────┘
//!            Q_A    └────┬────┘
//!                        └── internal leakage C_L (p_A − p_B), A → B
//!
//!   Δp    = p_A − p_B                                         [Pa]
//!   ω_m   = i q̇                                              [rad/s] motor shaft speed
//!   Q_A   = D ω_m / (2π) + C_L Δp                             [m³/s] out of A, into B
//!   P_id  = Δp D ω_m / (2π)                                   [W] ideal hydraulic power
//!   η     = η_hm ^ tanh(P_id / P_s)                           [-] (smooth blend, see below)
//!   τ     = i η D Δp / (2π)                                   [N m] on the joint
//! ```
//!
//! **Sign convention.** Positive Δp drives the joint in its positive direction: flow enters at A
//! and leaves at B, the flow out of node A and into node B is Q_A. A gear ratio i > 0 is motor
//! turns per joint turn.
//!
//! **Efficiencies.** The volumetric efficiency η_v is given at a rated pressure difference Δp_r
//! and rated motor speed n_r [rev/s] (the field gives ω_r = 2π n_r [rad/s]): with the laminar cross-port leakage C_L Δp,
//! η_v = D n_r / (D n_r + C_L Δp_r), so C_L = D n_r (1/η_v − 1) / Δp_r [m³/(s Pa)]. The
//! hydromechanical efficiency η_hm reduces the torque when the motor is motoring (P_id > 0,
//! η = η_hm) and raises the torque the shaft must supply when the load drives it as a pump
//! (P_id < 0, η = 1/η_hm), so the friction loss (1 − η) P_id is never negative. The switch
//! between the two is blended smoothly over the power P_s (`efficiency_blend_power_w`):
//! η = exp(ln η_hm · tanh(P_id / P_s)), which is η_hm for P_id ≫ P_s, 1/η_hm for P_id ≪ −P_s and 1
//! at rest. There is no branch, so the residual and the tangent are smooth everywhere; a static
//! motor holds its load at the ideal pressure Δp = 2π τ / (i D).
//!
//! **Power balance.** Hydraulic power in Δp Q_A = mechanical power out τ q̇ + friction loss
//! (1 − η) P_id + leakage loss C_L Δp², each loss ≥ 0 ([`power_split`]).
//!
//! **Coupling.** The torque depends on the node pressures and the flow on the joint rate, so the
//! relative-coordinate pipeline passes the pressures into the joint port
//! (`mechanics::ports::joint_forces`) and the joint's (q, q̇) into the flow sum
//! (`circuit::component_flows_with`); both enter the exact tangent through the same law.
//! The penalty and the multi-rate formulations carry it; multi-rate, and the two subsystems
//! stepped apart (`pipeline::subsystem`), through its shaft port (`circuit::Shaft`): the joint's
//! angle over the step in, the torque out. `pipeline::compile` rejects the others by name.

use crate::elements::hydraulics::fixed_pump::{efficiency, rated_point};
use serde::{Deserialize, Serialize};

use crate::elements::element::{
    Context, Element, ElementSpec, EnergyDomain, MechPort, PortEffort, PortState, Ports, Power,
    Variable, MAX_OUTPUTS,
};
use crate::elements::ids::{AxisId, Node};
use crate::error::ModelError;
use crate::solver::real::Real;

/// Default blend power P_s of the efficiency switch [W].
pub const DEFAULT_BLEND_POWER_W: f64 = 10.0;

/// `[[elements]] type = "hydraulic_motor"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HydraulicMotorSpec {
    /// Name.
    pub name: String,
    /// Inlet node A (flow enters here when the joint turns positive).
    pub port_a: String,
    /// Outlet node B.
    pub port_b: String,
    /// The revolute joint the motor drives.
    pub joint: String,
    /// Displacement D [m³/rev].
    pub displacement_m3_per_rev: f64,
    /// Gear ratio i: motor turns per joint turn [-]; default 1.
    #[serde(default)]
    pub gear_ratio: Option<f64>,
    /// Volumetric efficiency η_v ∈ (0, 1] at the rated point [-]; default 1 (no leakage).
    #[serde(default)]
    pub volumetric_efficiency: Option<f64>,
    /// Rated pressure difference Δp_r at which η_v is given [Pa]; needed when η_v < 1.
    #[serde(default)]
    pub rated_pressure_pa: Option<f64>,
    /// Rated motor shaft speed ω_r = 2π n_r at which η_v is given [rad/s]; needed when η_v < 1.
    #[serde(default)]
    pub rated_speed_rad_s: Option<f64>,
    /// Hydromechanical efficiency η_hm ∈ (0, 1] [-]; default 1.
    #[serde(default)]
    pub hydromechanical_efficiency: Option<f64>,
    /// Ideal hydraulic power P_s over which the efficiency blends between motoring and pumping
    /// [W]; default 10 W.
    #[serde(default)]
    pub efficiency_blend_power_w: Option<f64>,
}

/// A compiled hydraulic motor.
#[derive(Debug, Clone, PartialEq)]
pub struct HydraulicMotor {
    /// Name.
    pub name: String,
    /// Node A.
    pub a: Node,
    /// Node B.
    pub b: Node,
    /// The driven joint axis.
    pub axis: AxisId,
    /// D [m³/rev].
    pub displacement_m3_per_rev: f64,
    /// i [-].
    pub gear_ratio: f64,
    /// Leakage coefficient C_L [m³/(s Pa)].
    pub leakage_m3_s_pa: f64,
    /// η_hm [-].
    pub hydromechanical_efficiency: f64,
    /// P_s [W].
    pub blend_power_w: f64,
}

impl ElementSpec for HydraulicMotorSpec {
    type Law = HydraulicMotor;
    const NOUN: &'static str = "hydraulic motor";
    fn name(&self) -> &str {
        &self.name
    }
    fn flow_nodes(&self) -> Vec<&str> {
        vec![self.port_a.as_str(), self.port_b.as_str()]
    }
    fn compile(&self, cx: &Context) -> Result<HydraulicMotor, ModelError> {
        HydraulicMotorSpec::compile(self, cx)
    }
}

impl HydraulicMotorSpec {
    /// Checks the fields and resolves the nodes and the joint.
    pub fn compile(&self, cx: &Context) -> Result<HydraulicMotor, ModelError> {
        let a = cx.node("port_a", &self.port_a)?;
        let b = cx.node("port_b", &self.port_b)?;
        if a == b {
            return Err(cx.error(
                "port_b",
                format!("is the same node as port_a ('{}')", self.port_a),
            ));
        }
        // a motor turns: its joint must be revolute (a prismatic or multi-axis joint would take
        // the torque as a force or on the wrong coordinate)
        let axis = match ((cx.joint_type)(&self.joint), (cx.joint_axis)(&self.joint)) {
            (Some("revolute"), Some(axis)) => axis,
            (Some(kind), _) => {
                return Err(cx.error(
                    "joint",
                    format!(
                        "'{}' is a {kind} joint; a hydraulic motor drives a revolute joint \
                         (for a translation use a cylinder)",
                        self.joint
                    ),
                ))
            }
            (None, _) => {
                return Err(cx.error(
                    "joint",
                    format!("'{}' is not a revolute joint of the model", self.joint),
                ))
            }
        };
        let d = cx.positive("displacement_m3_per_rev", self.displacement_m3_per_rev)?;
        let i = match self.gear_ratio {
            Some(x) => cx.positive("gear_ratio", x)?,
            None => 1.0,
        };
        let eta_v = efficiency(cx, "volumetric_efficiency", self.volumetric_efficiency)?;
        let eta_hm = efficiency(
            cx,
            "hydromechanical_efficiency",
            self.hydromechanical_efficiency,
        )?;
        let leakage = match rated_point(cx, eta_v, self.rated_pressure_pa, self.rated_speed_rad_s)?
        {
            // η_v = D n_r / (D n_r + C_L Δp_r), n_r = ω_r / 2π
            Some((dp_r, w_r)) => {
                let n_r = w_r / (2.0 * std::f64::consts::PI);
                d * n_r * (1.0 / eta_v - 1.0) / dp_r
            }
            None => 0.0,
        };
        let blend = match self.efficiency_blend_power_w {
            Some(x) => cx.positive("efficiency_blend_power_w", x)?,
            None => DEFAULT_BLEND_POWER_W,
        };
        Ok(HydraulicMotor {
            name: self.name.clone(),
            a,
            b,
            axis,
            displacement_m3_per_rev: d,
            gear_ratio: i,
            leakage_m3_s_pa: leakage,
            hydromechanical_efficiency: eta_hm,
            blend_power_w: blend,
        })
    }
}

/// What the motor law gives at one point, in scalar type `S`.
#[derive(Debug, Clone, Copy)]
pub struct MotorEffort<S> {
    /// Flow Q_A out of A and into B [m³/s].
    pub flow: S,
    /// Torque τ on the joint [N m].
    pub torque: S,
    /// Motor shaft speed ω_m = i q̇ [rad/s].
    pub speed: S,
    /// Effective efficiency η of the torque [-].
    pub efficiency: S,
}

/// tanh x, held at ±1 for |x| > 20 (decided on the real part). num-dual evaluates tanh as
/// sinh/cosh, whose derivative overflows to NaN near |x| ≈ 355; past 20 the exact tanh is ±1
/// to 1e-17 and its derivative sech² x < 2e-17, so the held value changes neither.
#[inline]
fn saturating_tanh<S: Real>(x: S) -> S {
    let r = x.re();
    if r > 20.0 {
        S::from(1.0)
    } else if r < -20.0 {
        S::from(-1.0)
    } else {
        x.tanh()
    }
}

/// The law at pressures `pa`, `pb` [Pa] and joint rate `qd` [rad/s] (module docs).
#[inline]
pub fn law<S: Real>(m: &HydraulicMotor, pa: S, pb: S, qd: S) -> MotorEffort<S> {
    let two_pi = 2.0 * std::f64::consts::PI;
    let dp = pa - pb;
    let w = qd * m.gear_ratio;
    let d = m.displacement_m3_per_rev / two_pi; // [m³/rad]
    let flow = w * d + dp * m.leakage_m3_s_pa;
    let ideal = dp * w * d; // P_id [W]
    let eta = (saturating_tanh(ideal * (1.0 / m.blend_power_w))
        * m.hydromechanical_efficiency.ln())
    .exp();
    MotorEffort {
        flow,
        torque: eta * dp * (d * m.gear_ratio),
        speed: w,
        efficiency: eta,
    }
}

/// The power balance at pressures `pa`, `pb` [Pa] and joint rate `qd` [rad/s]:
/// (hydraulic power in Δp Q_A, mechanical power out τ q̇, friction loss (1 − η) P_id, leakage
/// loss C_L Δp²) [W]; the first is the sum of the others.
pub fn power_split(m: &HydraulicMotor, pa: f64, pb: f64, qd: f64) -> [f64; 4] {
    let e = law(m, pa, pb, qd);
    let dp = pa - pb;
    let ideal = dp * e.speed * m.displacement_m3_per_rev / (2.0 * std::f64::consts::PI);
    [
        dp * e.flow,
        e.torque * qd,
        (1.0 - e.efficiency) * ideal,
        m.leakage_m3_s_pa * dp * dp,
    ]
}

impl Element for HydraulicMotor {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        Ports {
            nodes: [Some(self.a), Some(self.b), None, None],
            mech: MechPort::Joint(self.axis),
            input: None,
        }
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        for (q, unit) in [
            ("flow", "m^3/s"),
            ("torque", "N m"),
            ("speed", "rad/s"),
            ("power", "W"),
        ] {
            out.push(Variable {
                name: format!("{}.{q}", self.name),
                unit,
            });
        }
        crate::elements::element::describe_power(&self.name, out);
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let m = law(self, at.p[0], at.p[1], at.sd);
        let mut e = PortEffort::zero();
        e.flow[0] = -m.flow;
        e.flow[1] = m.flow;
        e.force = m.torque;
        e
    }
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        // supplied to the mechanism: the hydraulic power in; dissipated in the motor: the
        // friction and leakage losses, so that supplied − dissipated = τ q̇ enters the
        // mechanical balance
        let hydraulic = (at.p[0] - at.p[1]) * e.flow[1];
        Power {
            supplied_w: hydraulic,
            dissipated_w: hydraulic - e.force * at.sd,
            ..Default::default()
        }
    }
    fn domain(&self) -> EnergyDomain {
        EnergyDomain::Mechanical
    }
    /// The hydraulic power that drives it.
    fn power_meaning(&self) -> &'static str {
        "the hydraulic power that drives it, ≥ 0 while it motors"
    }
    fn outputs(
        &self,
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        out[0] = e.flow[1];
        out[1] = e.force;
        out[2] = at.sd * self.gear_ratio;
        out[3] = (at.p[0] - at.p[1]) * e.flow[1];
        out[4] = crate::elements::element::absorbed_power(at, e);
        5
    }
}

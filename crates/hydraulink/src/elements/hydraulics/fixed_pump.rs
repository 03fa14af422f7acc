//! Fixed-displacement pump driven at a shaft speed ω given by a model input, with a laminar
//! internal leakage (volumetric efficiency) and a hydromechanical efficiency for the shaft torque.
//! A flow source between two nodes: usually from a tank (a boundary node) into a pump volume V_P
//! that a relief valve protects. (The `[[hydraulics.pumps]]` of a model file are
//! constant-pressure boundary nodes, a different thing.)
//!
//! ```text
//!              ω [rad/s] (input `speed_input`)
//!                 │
//!   inlet ──▶──( ⊃ )──▶── outlet        Δp = p_out − p_in
//!                 │                      Q = ε D ω / (2π) − C_L Δp      (delivered flow)
//!                 └─ leakage C_L Δp      T = T_i + sgn(ω) |T_i| (1/η_hm − 1),  T_i = ε D Δp / (2π)
//! ```
//! D is the displacement per revolution [m³/rev] and ε = 1 (the pressure-compensated pump,
//! [`super::pc_pump`], sets ε ∈ [0, 1]). Positive Q flows from `inlet` to `outlet`.
//!
//! **Leakage from the volumetric efficiency.** The catalogue gives η_v at a rated pressure
//! difference Δp_r and rated speed ω_r: there the delivered flow is η_v times the ideal one,
//! D ω_r/(2π) − C_L Δp_r = η_v D ω_r/(2π), so
//! ```text
//!   C_L = (1 − η_v) D ω_r / (2π Δp_r)      [m³/(s Pa)]
//! ```
//! a laminar (linear in Δp) gap leakage that does not depend on the speed. At other speeds the
//! efficiency follows 1 − C_L Δp / (D ω/2π).
//!
//! **Shaft torque and the energy balance.** The ideal torque is T_i = ε D Δp / (2π). The
//! hydromechanical loss (friction in the drive) opposes the rotation and grows with the load:
//! T − T_i = sgn(ω) |T_i| (1/η_hm − 1), so that T = T_i/η_hm when the pump pumps (T_i ω ≥ 0).
//! The powers balance exactly:
//! ```text
//!   P_shaft = T ω = Q Δp  +  C_L Δp²  +  (T − T_i) ω
//!                   hydraulic  leakage   hydromechanical loss (≥ 0)
//! ```
//! since T_i ω = ε D ω Δp/(2π) = (Q + C_L Δp) Δp. `power` reports P_shaft as supplied and the
//! two losses as dissipated, so supplied − dissipated = Σ p_i Q_i, the hydraulic power into the
//! nodes.
//!
//! **The speed.** ω is the element's valve position (`Element::n_position`, column
//! `<name>.speed` [rad/s]): the stage `advance valves` sets it to the input's value at t_k+1
//! and holds it over the step (as the bridge valve's opening), so the flow sum, the outputs
//! and the energy accounts see the same ω. It enters the law as data, not as an unknown.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    flow_element, Context, Element, ElementSpec, EnergyDomain, PortEffort, PortState, Ports, Power,
    Variable, MAX_OUTPUTS,
};
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

/// `[[elements]] type = "fixed_pump"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FixedPumpSpec {
    /// Name.
    pub name: String,
    /// Suction node (usually a tank).
    pub inlet: String,
    /// Delivery node (usually the pump volume V_P).
    pub outlet: String,
    /// Name of the `[[inputs]]` entry whose value is the shaft speed ω [rad/s].
    pub speed_input: String,
    /// Displacement D [m³/rev] (1 cm³/rev = 1e-6 m³/rev).
    pub displacement_m3_per_rev: f64,
    /// Volumetric efficiency η_v at the rated point [-], in (0, 1]; default 1 (no leakage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volumetric_efficiency: Option<f64>,
    /// Pressure difference p_out − p_in at which η_v is given, Δp_r [Pa]; needed when η_v < 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rated_pressure_pa: Option<f64>,
    /// Shaft speed at which η_v is given, ω_r [rad/s]; needed when η_v < 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rated_speed_rad_s: Option<f64>,
    /// Hydromechanical efficiency η_hm [-], in (0, 1]; default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanical_efficiency: Option<f64>,
}

/// The displacement, leakage and torque data shared by the fixed and the pressure-compensated
/// pump.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PumpShaft {
    /// Displacement D [m³/rev].
    pub displacement_m3_per_rev: f64,
    /// Leakage coefficient C_L = (1 − η_v) D ω_r / (2π Δp_r) [m³/(s Pa)].
    pub leakage_m3_s_pa: f64,
    /// η_hm [-].
    pub mechanical_efficiency: f64,
}

/// The fields of a pump's shaft as written in its spec, checked by [`PumpShaft::compile`].
pub struct PumpShaftFields {
    /// D [m³/rev].
    pub displacement_m3_per_rev: f64,
    /// η_v [-].
    pub volumetric_efficiency: Option<f64>,
    /// Δp_r [Pa].
    pub rated_pressure_pa: Option<f64>,
    /// ω_r [rad/s].
    pub rated_speed_rad_s: Option<f64>,
    /// η_hm [-].
    pub mechanical_efficiency: Option<f64>,
}

/// An efficiency in (0, 1] (default 1). Shared by the pumps and the hydraulic motor.
pub(crate) fn efficiency(cx: &Context, field: &str, x: Option<f64>) -> Result<f64, ModelError> {
    let Some(x) = x else { return Ok(1.0) };
    let x = cx.finite(field, x)?;
    if x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err(cx.error(field, format!("must lie in (0, 1], got {x}")))
    }
}

/// The rated point (Δp_r [Pa], ω_r [rad/s]) at which a volumetric efficiency `eta_v` below 1
/// is given: both fields are then required; with η_v = 1 there is no leakage and the point is
/// only checked where given (`None`). Shared by the pumps and the hydraulic motor, each of
/// which derives its own C_L from it (a pump loses flow to leakage, a motor needs extra).
pub(crate) fn rated_point(
    cx: &Context,
    eta_v: f64,
    rated_pressure_pa: Option<f64>,
    rated_speed_rad_s: Option<f64>,
) -> Result<Option<(f64, f64)>, ModelError> {
    let fields = [
        ("rated_pressure_pa", rated_pressure_pa),
        ("rated_speed_rad_s", rated_speed_rad_s),
    ];
    if eta_v < 1.0 {
        let mut v = [0.0; 2];
        for (slot, (field, x)) in v.iter_mut().zip(fields) {
            *slot = match x {
                Some(x) => cx.positive(field, x)?,
                None => {
                    return Err(cx.error(
                        field,
                        "must be given when volumetric_efficiency < 1: the leakage follows \
                         from the efficiency at this rated point",
                    ))
                }
            };
        }
        return Ok(Some((v[0], v[1])));
    }
    for (field, x) in fields {
        if let Some(x) = x {
            cx.positive(field, x)?;
        }
    }
    Ok(None)
}

impl PumpShaft {
    /// Checks the shaft fields and derives C_L (module doc).
    pub fn compile(cx: &Context, f: &PumpShaftFields) -> Result<PumpShaft, ModelError> {
        let d = cx.positive("displacement_m3_per_rev", f.displacement_m3_per_rev)?;
        let eta_v = efficiency(cx, "volumetric_efficiency", f.volumetric_efficiency)?;
        let eta_hm = efficiency(cx, "mechanical_efficiency", f.mechanical_efficiency)?;
        let leakage = match rated_point(cx, eta_v, f.rated_pressure_pa, f.rated_speed_rad_s)? {
            // C_L = (1 − η_v) D ω_r / (2π Δp_r) (module doc)
            Some((dp_r, w_r)) => (1.0 - eta_v) * d * w_r / (std::f64::consts::TAU * dp_r),
            None => 0.0,
        };
        Ok(PumpShaft {
            displacement_m3_per_rev: d,
            leakage_m3_s_pa: leakage,
            mechanical_efficiency: eta_hm,
        })
    }

    /// Delivered flow Q = ε D ω/(2π) − C_L Δp [m³/s] at displacement fraction ε [-], speed ω
    /// [rad/s] and Δp = p_out − p_in [Pa].
    #[inline]
    pub fn flow<S: Real>(&self, eps: S, omega: f64, dp: S) -> S {
        eps * (self.displacement_m3_per_rev * omega / std::f64::consts::TAU)
            - dp * self.leakage_m3_s_pa
    }

    /// Leakage flow C_L Δp [m³/s].
    pub fn leakage(&self, dp: f64) -> f64 {
        self.leakage_m3_s_pa * dp
    }

    /// Ideal torque T_i = ε D Δp/(2π) [N m].
    pub fn ideal_torque(&self, eps: f64, dp: f64) -> f64 {
        eps * self.displacement_m3_per_rev * dp / std::f64::consts::TAU
    }

    /// Shaft torque T = T_i + sgn(ω) |T_i| (1/η_hm − 1) [N m] (module doc).
    pub fn torque(&self, eps: f64, omega: f64, dp: f64) -> f64 {
        let ti = self.ideal_torque(eps, dp);
        let sign = if omega > 0.0 {
            1.0
        } else if omega < 0.0 {
            -1.0
        } else {
            0.0
        };
        ti + sign * ti.abs() * (1.0 / self.mechanical_efficiency - 1.0)
    }

    /// Energy account: shaft power T ω supplied, leakage C_L Δp² and hydromechanical loss
    /// (T − T_i) ω dissipated [W].
    pub fn power(&self, eps: f64, omega: f64, dp: f64) -> Power {
        let ti = self.ideal_torque(eps, dp);
        let t = self.torque(eps, omega, dp);
        Power {
            stored_j: 0.0,
            dissipated_w: self.leakage_m3_s_pa * dp * dp + (t - ti) * omega,
            supplied_w: t * omega,
        }
    }
}

/// A compiled fixed-displacement pump.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedPump {
    /// Name.
    pub name: String,
    /// Suction node.
    pub inlet: Node,
    /// Delivery node.
    pub outlet: Node,
    /// Index of the speed input (`Model::inputs`).
    pub input: usize,
    /// Displacement, leakage, η_hm.
    pub shaft: PumpShaft,
}

/// The pump's ports: nodes inlet and outlet, driven by input `input`.
pub fn ports(inlet: Node, outlet: Node, input: usize) -> Ports {
    let mut p = flow_element::ports(inlet, outlet);
    p.input = Some(input);
    p
}

/// Checks the nodes (distinct) and the speed input of a pump.
pub fn compile_ports(
    cx: &Context,
    inlet: &str,
    outlet: &str,
    speed_input: &str,
) -> Result<(Node, Node, usize), ModelError> {
    let i = cx.node("inlet", inlet)?;
    let o = cx.node("outlet", outlet)?;
    if i == o {
        return Err(cx.error("outlet", "is the same node as `inlet`"));
    }
    let input = cx.required_input("speed_input", speed_input)?;
    Ok((i, o, input))
}

/// The speed column `<name>.speed` [rad/s].
pub fn describe_speed(name: &str, out: &mut Vec<Variable>) {
    out.push(Variable {
        name: format!("{name}.speed"),
        unit: "rad/s",
    });
}

/// `<name>.<quantity>` with unit.
pub fn variable(name: &str, quantity: &str, unit: &'static str) -> Variable {
    Variable {
        name: format!("{name}.{quantity}"),
        unit,
    }
}

impl ElementSpec for FixedPumpSpec {
    type Law = FixedPump;
    const NOUN: &'static str = "fixed pump";
    fn name(&self) -> &str {
        &self.name
    }
    fn flow_nodes(&self) -> Vec<&str> {
        vec![&self.inlet, &self.outlet]
    }
    fn compile(&self, cx: &Context) -> Result<FixedPump, ModelError> {
        FixedPumpSpec::compile(self, cx)
    }
}

impl FixedPumpSpec {
    /// Checks the fields and resolves the nodes and the speed input.
    pub fn compile(&self, cx: &Context) -> Result<FixedPump, ModelError> {
        let (inlet, outlet, input) =
            compile_ports(cx, &self.inlet, &self.outlet, &self.speed_input)?;
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
        Ok(FixedPump {
            name: self.name.clone(),
            inlet,
            outlet,
            input,
            shaft,
        })
    }
}

impl Element for FixedPump {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        ports(self.inlet, self.outlet, self.input)
    }
    fn n_position(&self) -> usize {
        1
    }
    fn describe_position(&self, out: &mut Vec<Variable>) {
        describe_speed(&self.name, out)
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
    /// T = T_i + sgn(ω) |T_i| (1/η_hm − 1) (module doc).
    fn drive_torque(&self, at: &PortState<f64>) -> f64 {
        self.shaft.torque(1.0, at.position, at.p[1] - at.p[0])
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        flow_element::describe(&self.name, out);
        out.push(variable(&self.name, "leakage", "m^3/s"));
        out.push(variable(&self.name, "shaft_torque", "N m"));
        out.push(variable(&self.name, "shaft_power", "W"));
        crate::elements::element::describe_power(&self.name, out);
    }
    /// Q = D ω/(2π) − C_L Δp from inlet to outlet (module doc).
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        flow_element::effort(self.shaft.flow(S::one(), at.position, at.p[1] - at.p[0]))
    }
    fn power(&self, at: &PortState<f64>, _e: &PortEffort<f64>) -> Power {
        self.shaft.power(1.0, at.position, at.p[1] - at.p[0])
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
        let (w, dp) = (at.position, at.p[1] - at.p[0]);
        out[0] = e.flow[1];
        out[1] = self.shaft.leakage(dp);
        out[2] = self.shaft.torque(1.0, w, dp);
        out[3] = out[2] * w;
        out[4] = crate::elements::element::absorbed_power(at, e);
        5
    }
}

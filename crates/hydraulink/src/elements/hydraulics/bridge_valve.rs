//! Open-centre proportional valve: a bridge of four orifices whose areas follow the opening κ
//! (004 eqs. 29, 31):
//!
//! ```text
//!          P                         P→A: A_max κ        A→T: A_max (1 − κ)
//!        ┌─┴─┐                       P→B: A_max (1 − κ)  B→T: A_max κ
//!   A ───┤ κ ├─── B                  Q = C_d A √(2 Δp / ρ) δ(Δp ≥ 0)   (no reverse flow, δ gating)
//!        └─┬─┘                       linear below Δp_tr, so the slope stays finite at Δp → 0
//!          T                         (004 has none; note 000_004 004-D "guard against 1/√0")
//! ```
//! At κ = κ₀ both work ports see a pressure-divider equilibrium; κ − κ₀ steers the cylinder.
//!
//! **Opening and input.** κ = κ₀ + u: the trim κ₀ (`trim`, a number or solved with the static
//! pressures) plus the input u(t), a dimensionless offset of the opening. The laws clamp κ to
//! [0, 1] (fully P → B and A → T at 0, fully P → A and B → T at 1). The input is limited to
//! `input_range` = [u_min, u_max] (default [−1, 1], the widest offset that moves κ over all of
//! [0, 1] from any trim), as the 4/3 valve's command is (the same check, shared with
//! [`crate::elements::hydraulics::valve_4_3`]): a model signal that leaves the range anywhere in [0, duration] is rejected at load
//! time, naming the valve's `input` field, unless `saturate = true`; u is clipped to the range
//! before the trim is added ([`BridgeValve::clip`]), so a value set from code at run time is
//! clipped too (and counted by `Simulation::clipped_inputs`). Inside the range u passes
//! unchanged, bit for bit.
//!
//! An element with four node ports in the order P, T, A, B and the valve position
//! `<name>.opening` (κ = κ₀ + u(t_k+1), set before Newton by [`Element::advance_position`] and
//! held over the step, read as [`crate::elements::element::PortState::position`]); outputs
//! `<name>.flow_a`, `<name>.flow_b`. In a model file `[[hydraulics.bridge_valves]]`, or
//! `[[elements]]` with `type = "bridge_valve"`.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    valve_element, Context, Element, ElementSpec, EnergyDomain, PortEffort, PortState, Ports,
    Power, Variable, MAX_OUTPUTS,
};
use crate::elements::field_check::{flow_constant_finite, input_ref, valve_ports, At, Nodes};
use crate::elements::hydraulics::orifice;
use crate::elements::hydraulics::valve_4_3::{clip_input, InputRange};
use crate::elements::ids::Node;
use crate::elements::inputs::Signal;
use crate::error::ModelError;
use crate::solver::real::Real;

/// How the offset of a bridge valve's opening is set.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum TrimSpec {
    /// A fixed value.
    Value(f64),
    /// `"solve"`: solved by the static initialization together with the pressures (004 eq. 32).
    Keyword(String),
}

/// Open-centre proportional valve, `[[hydraulics.bridge_valves]]` or `[[elements]]` with
/// `type = "bridge_valve"`: four orifices whose areas follow the opening κ (004 eq. 31):
///
/// ```text
///   P→A: A_max κ     A→T: A_max (1 − κ)     P→B: A_max (1 − κ)     B→T: A_max κ
///   Q = C_d A √(2|Δp|/ρ) along the path direction only (004 eq. 29, δ gating: no reverse flow),
///   linear below `laminar_dp_pa`.
/// ```
/// κ = trim + input(t), the input clipped to `input_range`, κ clamped to [0, 1].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BridgeValveSpec {
    /// Unique name.
    pub name: String,
    /// Supply node.
    pub port_p: String,
    /// Return node.
    pub port_t: String,
    /// Work port A (a volume).
    pub port_a: String,
    /// Work port B (a volume).
    pub port_b: String,
    /// Discharge coefficient C_d [-].
    pub discharge_coefficient: f64,
    /// Area of each orifice at full opening A_max [m²].
    pub max_area_m2: f64,
    /// Laminar-transition pressure difference [Pa] (004 has none; it keeps the slope finite).
    #[serde(default = "default_bridge_laminar")]
    pub laminar_dp_pa: f64,
    /// Name of the input signal u added to the trim: the opening is κ = trim + u [-].
    pub input: String,
    /// Offset of the opening: a number, or `"solve"` for the static initialization.
    #[serde(default = "default_trim")]
    pub trim: TrimSpec,
    /// Range [u_min, u_max] of the input u [-]; default [−1, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_range: Option<[f64; 2]>,
    /// Clip a model signal that leaves `input_range` instead of rejecting the model; default
    /// false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub saturate: bool,
}

/// Default input range of a bridge valve [-]: an offset of the opening κ = κ₀ + u that reaches
/// all of [0, 1] from any trim κ₀ ∈ [0, 1].
pub const DEFAULT_BRIDGE_INPUT_RANGE: [f64; 2] = [-1.0, 1.0];

fn default_bridge_laminar() -> f64 {
    1.0e4
}

fn default_trim() -> TrimSpec {
    TrimSpec::Value(0.0)
}

impl ElementSpec for BridgeValveSpec {
    type Law = BridgeValve;
    const NOUN: &'static str = "valve";
    fn name(&self) -> &str {
        &self.name
    }
    fn flow_nodes(&self) -> Vec<&str> {
        self.node_names().to_vec()
    }
    fn compile(&self, cx: &Context) -> Result<BridgeValve, ModelError> {
        BridgeValveSpec::compile(self, cx)
    }
}

impl BridgeValveSpec {
    /// Its nodes P, T, A, B by name.
    pub fn node_names(&self) -> [&str; 4] {
        [&self.port_p, &self.port_t, &self.port_a, &self.port_b]
    }

    /// Validation against the spec (`pipeline::validate`, before compile): the nodes and the input
    /// exist (the work ports are two different volumes), the numbers are finite, the constants
    /// positive and the flow constant representable. `at` is `hydraulics.bridge_valves[i]` or
    /// `elements[i]`.
    pub(crate) fn validate(
        &self,
        at: &At,
        nodes: &Nodes,
        inputs: &[&str],
        density_kg_m3: f64,
    ) -> Result<(), ModelError> {
        valve_ports(at, nodes, self.node_names())?;
        at.positive("discharge_coefficient", self.discharge_coefficient)?;
        at.positive("max_area_m2", self.max_area_m2)?;
        flow_constant_finite(
            at,
            "max_area_m2",
            self.discharge_coefficient * self.max_area_m2,
            density_kg_m3,
        )?;
        at.positive("laminar_dp_pa", self.laminar_dp_pa)?;
        input_ref(at, "input", &self.input, inputs)?;
        if let TrimSpec::Value(v) = self.trim {
            at.finite("trim", v)?;
        }
        self.range().validate(at)
    }

    /// [u_min, u_max]: `input_range` or [`DEFAULT_BRIDGE_INPUT_RANGE`].
    pub fn input_range(&self) -> [f64; 2] {
        self.input_range.unwrap_or(DEFAULT_BRIDGE_INPUT_RANGE)
    }

    /// Its input range as the 4/3 valve's shared check.
    fn range(&self) -> InputRange {
        InputRange {
            field: "input_range",
            range: self.input_range(),
            saturate: self.saturate,
        }
    }

    /// The model signal of its input must stay in the input range over [0, `duration_s`] unless
    /// `saturate` (`pipeline::validate`, after [`BridgeValveSpec::validate`]): else the error names
    /// the valve's `input` field, the value, its time and the range.
    pub(crate) fn check_signal_range(
        &self,
        at: &At,
        signal: &Signal,
        duration_s: f64,
    ) -> Result<(), ModelError> {
        self.range()
            .check_signal(at, &self.input, signal, duration_s)
    }

    /// Checks the fields and resolves the nodes and the input; every error names the element
    /// and the field.
    pub fn compile(&self, cx: &Context) -> Result<BridgeValve, ModelError> {
        let p = cx.node("port_p", &self.port_p)?;
        let t = cx.node("port_t", &self.port_t)?;
        let (a, b) = cx.work_ports(&self.port_a, &self.port_b)?;
        let cd = cx.positive("discharge_coefficient", self.discharge_coefficient)?;
        let area = cx.positive("max_area_m2", self.max_area_m2)?;
        // Q = C_d A √(2 Δp/ρ) = (C_d A_max √(2/ρ)) κ √Δp  (004 eq. 29)
        let flow_constant = cd * area * (2.0 / cx.density_kg_m3).sqrt();
        if !flow_constant.is_finite() {
            return Err(cx.error(
                "max_area_m2",
                format!("is out of range: the flow constant C_d A √(2/ρ) is {flow_constant:?}"),
            ));
        }
        Ok(BridgeValve {
            name: self.name.clone(),
            p,
            t,
            a,
            b,
            flow_constant,
            laminar_dp_pa: cx.positive("laminar_dp_pa", self.laminar_dp_pa)?,
            input: cx.required_input("input", &self.input)?,
            input_range: self.input_range(),
            trim: match &self.trim {
                TrimSpec::Value(v) => Some(cx.finite("trim", *v)?),
                TrimSpec::Keyword(k) if k == "solve" => None,
                TrimSpec::Keyword(k) => {
                    return Err(cx.error(
                        "trim",
                        format!("must be a number or \"solve\", got \"{k}\""),
                    ))
                }
            },
        })
    }
}

/// Compiled open-centre bridge valve.
#[derive(Debug, Clone, PartialEq)]
pub struct BridgeValve {
    /// Name.
    pub name: String,
    /// Supply.
    pub p: Node,
    /// Return.
    pub t: Node,
    /// Work port A.
    pub a: Node,
    /// Work port B.
    pub b: Node,
    /// C_d A_max √(2/ρ) [m³/(s √Pa)]: the flow constant at full opening.
    pub flow_constant: f64,
    /// Laminar transition Δp [Pa].
    pub laminar_dp_pa: f64,
    /// Input signal index.
    pub input: usize,
    /// [u_min, u_max] of the input [-].
    pub input_range: [f64; 2],
    /// Fixed trim, or `None` when the static initialization solves it.
    pub trim: Option<f64>,
}

impl BridgeValve {
    /// The input u clipped to the input range [-]; unchanged inside it.
    #[inline]
    pub fn clip(&self, u: f64) -> f64 {
        clip_input(self.input_range, u)
    }
    /// True when `u` lies outside the input range (the opening law clips it).
    pub fn clips(&self, u: f64) -> bool {
        self.clip(u) != u
    }
}

/// One gated orifice: flow from the high side only [m³/s].
#[inline]
fn gated<S: Real>(c: f64, dp: S, dp_tr: f64) -> S {
    if dp.re() <= 0.0 {
        S::zero()
    } else {
        orifice::flow(c, dp, dp_tr)
    }
}

/// Flows into work ports A and B and out of P, into T [m³/s] at opening `kappa` ∈ [0, 1].
#[inline]
pub fn flows<S: Real>(v: &BridgeValve, kappa: f64, pp: S, pt: S, pa: S, pb: S) -> [S; 4] {
    let k = kappa.clamp(0.0, 1.0);
    let (open, close) = (v.flow_constant * k, v.flow_constant * (1.0 - k));
    let q_pa = gated(open, pp - pa, v.laminar_dp_pa);
    let q_at = gated(close, pa - pt, v.laminar_dp_pa);
    let q_pb = gated(close, pp - pb, v.laminar_dp_pa);
    let q_bt = gated(open, pb - pt, v.laminar_dp_pa);
    [q_pa - q_at, q_pb - q_bt, q_pa + q_pb, q_at + q_bt]
}

impl Element for BridgeValve {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        valve_element::ports(self.p, self.t, self.a, self.b, self.input)
    }
    fn n_position(&self) -> usize {
        1
    }
    fn describe_position(&self, out: &mut Vec<Variable>) {
        valve_element::describe_position(&self.name, "opening", out)
    }
    /// κ(0) = κ₀ + u(0), u clipped to the input range.
    fn initial_position(&self, trim: f64, u0: f64) -> f64 {
        trim + self.clip(u0)
    }
    /// κ = κ₀ + u(t_k+1), the value valid on the step (`Signal::step_values`), u clipped to the
    /// input range.
    fn advance_position(&self, _position: f64, trim: f64, _u0: f64, u1: f64, _dt: f64) -> f64 {
        trim + self.clip(u1)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        valve_element::describe(&self.name, out);
        crate::elements::element::describe_power(&self.name, out);
    }
    /// 004 eqs. 29, 31 at the opening κ = `at.position`: flows into P, T, A, B.
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let [qa, qb, qp, qt] = flows(self, at.position, at.p[0], at.p[1], at.p[2], at.p[3]);
        let mut e = PortEffort::zero();
        e.flow = [-qp, qt, qa, qb];
        e
    }
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        valve_element::power(at, e)
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
        let n = valve_element::outputs(e, out);
        out[n] = crate::elements::element::absorbed_power(at, e);
        n + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::ids::VolumeId;

    fn valve() -> BridgeValve {
        BridgeValve {
            name: "v".into(),
            p: Node::Source(0),
            t: Node::Source(1),
            a: Node::Volume(VolumeId(0)),
            b: Node::Volume(VolumeId(1)),
            flow_constant: 0.67 * 0.0005 * (2.0f64 / 850.0).sqrt(),
            laminar_dp_pa: 1e4,
            input: 0,
            input_range: DEFAULT_BRIDGE_INPUT_RANGE,
            trim: None,
        }
    }

    #[test]
    fn conserves_mass_and_blocks_reverse_flow() {
        let v = valve();
        let [qa, qb, qp, qt] = flows::<f64>(&v, 0.4, 7.6e6, 1e5, 3e6, 5e6);
        assert!((qp - (qa + qb + qt)).abs() < 1e-15);
        // a work port above the supply pressure takes no flow from P and sends none back
        let [qa, _, qp, _] = flows::<f64>(&v, 0.4, 7.6e6, 1e5, 8e6, 5e6);
        assert!(qa < 0.0 && qp > 0.0);
    }

    #[test]
    fn naya_equilibrium_has_zero_net_flow() {
        // 004 eq. 32 in closed form (reference note 004-B): κ0 = 0.4646082, p1 = 3.321769 MPa,
        // p2 = 4.378231 MPa; port A = upper chamber (p1), port B = lower chamber (p2).
        let v = valve();
        let [qa, qb, _, _] = flows::<f64>(&v, 0.4646082, 7.6e6, 1e5, 3.321769e6, 4.378231e6);
        assert!(qa.abs() < 1e-8 && qb.abs() < 1e-8, "{qa} {qb}");
    }
}

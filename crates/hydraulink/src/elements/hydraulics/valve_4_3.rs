//! 4/3 directional control valve (000 eqs. 26–27), closed or open centre.
//!
//! ```text
//!            A     B
//!            │     │          U ≥ 0:  P → A,  B → T
//!        ┌───┴─────┴───┐      U < 0:  P → B,  A → T
//!        │  ⇅   │  ⇅   │      each open path: Q = C_vd |U| sgn(Δp) √|Δp|  (laminar below Δp_tr)
//!        └───┬─────┬───┘      U = 0: all ports closed (closed centre)
//!            P     T
//!
//!   open centre (`centre = "open"`): P → T is open around the centre as well,
//!            Q_PT = C_oc max(0, 1 − |U|/U_c) sgn(p_P − p_T) √|p_P − p_T|   (laminar below Δp_tr)
//!   with its own flow constant C_oc [m³/(s √Pa)] and the spool position U_c where it has closed
//!   (the work paths above are unchanged), so a centred valve circulates the pump flow to tank.
//! ```
//! **Input range.** The spool command U_ref is limited to `input_range_v` = [U_min, U_max]
//! (default ±10 V, what the shipped models use). A model signal that leaves the range anywhere
//! in [0, duration] is rejected at load time, naming the valve's `input` field, unless
//! `saturate = true`; the spool law clips U_ref to the range ([`Valve43::clip`]), so a value set
//! from code at run time (`Simulation::set_input`) is clipped too, and the clipping is counted
//! (`Simulation::clipped_inputs`). A value inside the range passes unchanged, bit for bit.
//! Spool dynamics U̇ = (U_ref − U)/τ (000 eq. 27), written once in [`spool_rate`]. The ODE is
//! linear and decoupled, so its trapezoidal step has the closed form [`spool_step`], which
//! evaluates the same law.
//!
//! An element with four node ports in the order P, T, A, B and the valve position
//! `<name>.spool` (U, advanced before Newton by [`Element::advance_position`], read as
//! [`crate::elements::element::PortState::position`]); outputs `<name>.flow_a`, `<name>.flow_b`. In a
//! model file `[[hydraulics.valves]]`, or `[[elements]]` with `type = "valve_4_3"`.

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    valve_element, Context, Element, ElementSpec, EnergyDomain, PortEffort, PortState, Ports,
    Power, Variable, MAX_OUTPUTS,
};
use crate::elements::field_check::{input_ref, valve_ports, At, Nodes};
use crate::elements::hydraulics::orifice;
use crate::elements::ids::Node;
use crate::elements::inputs::Signal;
use crate::error::ModelError;
use crate::solver::real::Real;
use num_dual::Dual64;

/// 4/3 closed-centre directional control valve, `[[hydraulics.valves]]` or `[[elements]]` with
/// `type = "valve_4_3"`.
///
/// Port mapping (000 eq. 26, reference note B.3): U ≥ 0 opens P→A and B→T; U < 0 opens P→B and
/// A→T. Flow through each open path is Q = C_vd |U| sgn(Δp) √|Δp|, laminar below `laminar_dp_pa`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Valve43Spec {
    /// Unique name.
    pub name: String,
    /// Supply node (a pump or volume).
    pub port_p: String,
    /// Return node (a tank or volume).
    pub port_t: String,
    /// Work port A (a volume).
    pub port_a: String,
    /// Work port B (a volume).
    pub port_b: String,
    /// Semi-empirical flow constant C_vd [m³/(s·√Pa) per unit of U].
    pub flow_constant: f64,
    /// Spool time constant τ [s] (000 eq. 27).
    pub time_constant_s: f64,
    /// Laminar-transition pressure difference [Pa] (000: 2 bar).
    #[serde(default = "default_laminar")]
    pub laminar_dp_pa: f64,
    /// Name of the input signal U_ref.
    pub input: String,
    /// Initial spool position U(0) [unit of U].
    #[serde(default)]
    pub spool0: f64,
    /// Range [U_min, U_max] of the command U_ref [V, or the unit of U]; default [−10, 10].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_range_v: Option<[f64; 2]>,
    /// Clip a model signal that leaves `input_range_v` instead of rejecting the model; default
    /// false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub saturate: bool,
    /// Centre position: `closed` (default) or `open` (P → T open around the centre).
    #[serde(default, skip_serializing_if = "Centre::is_closed")]
    pub centre: Centre,
    /// Open centre: flow constant C_oc of the P → T path at U = 0 [m³/(s √Pa)]; required with
    /// `centre = "open"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_centre_flow_constant: Option<f64>,
    /// Open centre: spool position |U| = U_c at which the P → T path has closed [unit of U];
    /// default 10 % of the larger bound of `input_range_v`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_centre_closing_v: Option<f64>,
}

/// The centre position of a 4/3 valve.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Centre {
    /// All ports closed at U = 0.
    #[default]
    Closed,
    /// P → T open around U = 0.
    Open,
}

impl Centre {
    /// True for the closed centre (the default, not written out).
    pub fn is_closed(&self) -> bool {
        *self == Centre::Closed
    }
}

/// Default input range of a 4/3 valve [V].
pub const DEFAULT_INPUT_RANGE_V: [f64; 2] = [-10.0, 10.0];

fn default_laminar() -> f64 {
    orifice::DEFAULT_LAMINAR_DP_PA
}

impl ElementSpec for Valve43Spec {
    type Law = Valve43;
    const NOUN: &'static str = "valve";
    fn name(&self) -> &str {
        &self.name
    }
    fn flow_nodes(&self) -> Vec<&str> {
        self.node_names().to_vec()
    }
    fn compile(&self, cx: &Context) -> Result<Valve43, ModelError> {
        Valve43Spec::compile(self, cx)
    }
}

impl Valve43Spec {
    /// Its nodes P, T, A, B by name.
    pub fn node_names(&self) -> [&str; 4] {
        [&self.port_p, &self.port_t, &self.port_a, &self.port_b]
    }

    /// Validation against the spec (`pipeline::validate`, before compile): the nodes and the input
    /// exist (the work ports are two different volumes), the numbers are finite and the
    /// constants positive. `at` is `hydraulics.valves[i]` or `elements[i]`.
    pub(crate) fn validate(
        &self,
        at: &At,
        nodes: &Nodes,
        inputs: &[&str],
        _density_kg_m3: f64,
    ) -> Result<(), ModelError> {
        valve_ports(at, nodes, self.node_names())?;
        at.positive("flow_constant", self.flow_constant)?;
        at.positive("time_constant_s", self.time_constant_s)?;
        at.positive("laminar_dp_pa", self.laminar_dp_pa)?;
        input_ref(at, "input", &self.input, inputs)?;
        at.finite("spool0", self.spool0)?;
        self.range().validate(at)?;
        match self.centre {
            Centre::Open => {
                let Some(c) = self.open_centre_flow_constant else {
                    return Err(at.error(
                        "centre",
                        "\"open\" needs open_centre_flow_constant (the P → T flow constant at \
                         U = 0)",
                    ));
                };
                at.positive("open_centre_flow_constant", c)?;
                if let Some(u) = self.open_centre_closing_v {
                    at.positive("open_centre_closing_v", u)?;
                }
            }
            Centre::Closed => {
                for (field, x) in [
                    ("open_centre_flow_constant", self.open_centre_flow_constant),
                    ("open_centre_closing_v", self.open_centre_closing_v),
                ] {
                    if x.is_some() {
                        return Err(at.error(field, "applies only with centre = \"open\""));
                    }
                }
            }
        }
        Ok(())
    }

    /// [U_min, U_max]: `input_range_v` or [`DEFAULT_INPUT_RANGE_V`].
    pub fn input_range(&self) -> [f64; 2] {
        self.input_range_v.unwrap_or(DEFAULT_INPUT_RANGE_V)
    }

    /// The model signal of its input must stay in the input range over [0, `duration_s`] unless
    /// `saturate` (`pipeline::validate`, after [`Valve43Spec::validate`]): else the error names the
    /// valve's `input` field, the value, its time and the range.
    pub(crate) fn check_signal_range(
        &self,
        at: &At,
        signal: &Signal,
        duration_s: f64,
    ) -> Result<(), ModelError> {
        self.range()
            .check_signal(at, &self.input, signal, duration_s)
    }

    /// Its command range as the shared [`InputRange`].
    fn range(&self) -> InputRange {
        InputRange {
            field: "input_range_v",
            range: self.input_range(),
            saturate: self.saturate,
        }
    }

    /// Checks the fields and resolves the nodes and the input; every error names the element
    /// and the field.
    pub fn compile(&self, cx: &Context) -> Result<Valve43, ModelError> {
        let p = cx.node("port_p", &self.port_p)?;
        let t = cx.node("port_t", &self.port_t)?;
        let (a, b) = cx.work_ports(&self.port_a, &self.port_b)?;
        Ok(Valve43 {
            name: self.name.clone(),
            p,
            t,
            a,
            b,
            flow_constant: cx.positive("flow_constant", self.flow_constant)?,
            time_constant_s: cx.positive("time_constant_s", self.time_constant_s)?,
            laminar_dp_pa: cx.positive("laminar_dp_pa", self.laminar_dp_pa)?,
            input: cx.required_input("input", &self.input)?,
            spool0: cx.finite("spool0", self.spool0)?,
            input_range: self.input_range(),
            open_centre: match self.centre {
                Centre::Closed => None,
                Centre::Open => {
                    let [lo, hi] = self.input_range();
                    Some(OpenCentre {
                        flow_constant: cx.positive(
                            "open_centre_flow_constant",
                            self.open_centre_flow_constant.unwrap_or(f64::NAN),
                        )?,
                        closing: match self.open_centre_closing_v {
                            Some(u) => cx.positive("open_centre_closing_v", u)?,
                            None => 0.1 * lo.abs().max(hi.abs()),
                        },
                    })
                }
            },
        })
    }
}

/// The range of a valve's command and what to do with a model signal outside it, shared by the
/// 4/3 valve (`input_range_v`, the spool command U_ref) and the bridge valve (`input_range`,
/// the opening offset u of κ = κ₀ + u): both check the range when the model is loaded, reject a
/// signal that leaves it unless `saturate`, and clip a value set at run time ([`clip_input`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct InputRange {
    /// The field of the range in the model file (`input_range_v`, `input_range`).
    pub field: &'static str,
    /// [min, max] [unit of the input].
    pub range: [f64; 2],
    /// Clip a model signal outside the range instead of rejecting the model.
    pub saturate: bool,
}

impl InputRange {
    /// The range is finite and not empty; errors name `field`.
    pub fn validate(&self, at: &At) -> Result<(), ModelError> {
        let [lo, hi] = self.range;
        at.finite_all(self.field, &[lo, hi])?;
        if lo >= hi {
            return Err(at.error(
                self.field,
                format!("[{lo}, {hi}] is empty: the minimum must be below the maximum"),
            ));
        }
        Ok(())
    }

    /// The model signal `input` must stay in the range over [0, `duration_s`] unless `saturate`:
    /// else the error names the valve's `input` field, the value, its time and the range.
    pub fn check_signal(
        &self,
        at: &At,
        input: &str,
        signal: &Signal,
        duration_s: f64,
    ) -> Result<(), ModelError> {
        if self.saturate {
            return Ok(());
        }
        let [lo, hi] = self.range;
        let field = self.field;
        for (t, v) in signal_extremes(signal, duration_s) {
            if !(lo..=hi).contains(&v) {
                return Err(at.error(
                    "input",
                    format!(
                        "input '{input}' reaches {v} at t = {t} s, outside the valve's {field} \
                         [{lo}, {hi}]; keep the signal in the range, widen {field}, or set \
                         saturate = true to clip it"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A valve command `u` clipped to `range` = [min, max] [unit of the input]; unchanged, bit for
/// bit, inside it.
#[inline]
pub fn clip_input(range: [f64; 2], u: f64) -> f64 {
    u.clamp(range[0], range[1])
}

/// The times and values at which a signal can reach its extremes over [0, `t_end`] [s]: its
/// switch and sample points, the ends, and a sine's first maximum and minimum.
fn signal_extremes(signal: &Signal, t_end: f64) -> Vec<(f64, f64)> {
    let mut out = vec![(0.0, signal.value(0.0))];
    let inside = |t: f64| (0.0..=t_end).contains(&t);
    match signal {
        Signal::Constant(_) => {}
        Signal::PiecewiseConstant { times, values } | Signal::Table { times, values } => {
            out.extend(
                times
                    .iter()
                    .zip(values.iter())
                    .filter(|(t, _)| inside(**t))
                    .map(|(t, v)| (*t, *v)),
            );
            out.push((t_end, signal.value(t_end)));
        }
        Signal::Step { time_s, after, .. } => {
            if inside(*time_s) {
                out.push((*time_s, *after));
            }
        }
        Signal::Sine {
            frequency_hz,
            phase_rad,
            ..
        } => {
            out.push((t_end, signal.value(t_end)));
            // 2π f t + φ = π/2 + kπ: the first two extremes at t ≥ 0 (a maximum and a minimum)
            let w = 2.0 * std::f64::consts::PI * frequency_hz;
            if w > 0.0 {
                let half = std::f64::consts::FRAC_PI_2;
                let k0 = ((phase_rad - half) / std::f64::consts::PI).ceil();
                for k in [k0, k0 + 1.0] {
                    let t = (half + k * std::f64::consts::PI - phase_rad) / w;
                    if inside(t) {
                        out.push((t, signal.value(t)));
                    }
                }
            }
        }
    }
    out
}

/// Compiled 4/3 valve.
#[derive(Debug, Clone, PartialEq)]
pub struct Valve43 {
    /// Name.
    pub name: String,
    /// Supply, return and work ports.
    pub p: Node,
    /// Return.
    pub t: Node,
    /// Work port A.
    pub a: Node,
    /// Work port B.
    pub b: Node,
    /// C_vd [m³/(s √Pa) per unit U].
    pub flow_constant: f64,
    /// τ [s].
    pub time_constant_s: f64,
    /// Laminar transition Δp [Pa].
    pub laminar_dp_pa: f64,
    /// Input signal index.
    pub input: usize,
    /// U(0).
    pub spool0: f64,
    /// [U_min, U_max] of the command [unit of U].
    pub input_range: [f64; 2],
    /// The P → T path of an open-centre valve; `None`: closed centre.
    pub open_centre: Option<OpenCentre>,
}

/// The P → T path of an open-centre 4/3 valve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenCentre {
    /// C_oc [m³/(s √Pa)] at U = 0.
    pub flow_constant: f64,
    /// U_c: |U| at which the path has closed [unit of U].
    pub closing: f64,
}

impl Valve43 {
    /// The command U_ref clipped to the input range [unit of U]; unchanged inside it.
    #[inline]
    pub fn clip(&self, u: f64) -> f64 {
        clip_input(self.input_range, u)
    }
    /// True when `u` lies outside the input range (the spool law clips it).
    pub fn clips(&self, u: f64) -> bool {
        self.clip(u) != u
    }
}

/// Flows of a 4/3 valve [m³/s], signed as named.
#[derive(Debug, Clone, Copy)]
pub struct ValveFlows<S> {
    /// Into work port A.
    pub into_a: S,
    /// Into work port B.
    pub into_b: S,
    /// Out of the supply P.
    pub out_of_p: S,
    /// Into the return T.
    pub into_t: S,
}

/// Port flows for spool position `u` and port pressures [Pa].
#[inline]
pub fn flows<S: Real>(v: &Valve43, u: f64, pp: S, pt: S, pa: S, pb: S) -> ValveFlows<S> {
    let mut f = work_flows(v, u, pp, pt, pa, pb);
    if let Some(oc) = &v.open_centre {
        let q = open_centre_flow(v, oc, u, pp - pt);
        f.out_of_p += q;
        f.into_t += q;
    }
    f
}

/// Open-centre P → T flow [m³/s] at spool `u` and Δp = p_P − p_T [Pa] (module docs): branches
/// at |U| = U_c and at the laminar transition, decided on real parts.
#[inline]
pub fn open_centre_flow<S: Real>(v: &Valve43, oc: &OpenCentre, u: f64, dp: S) -> S {
    let g = 1.0 - u.abs() / oc.closing;
    if g <= 0.0 {
        return S::zero();
    }
    orifice::flow(oc.flow_constant * g, dp, v.laminar_dp_pa)
}

/// The work paths P → A, B → T (U ≥ 0) or P → B, A → T (U < 0) (000 eq. 26).
#[inline]
fn work_flows<S: Real>(v: &Valve43, u: f64, pp: S, pt: S, pa: S, pb: S) -> ValveFlows<S> {
    let c = v.flow_constant * u.abs();
    if u >= 0.0 {
        let q_pa = orifice::flow(c, pp - pa, v.laminar_dp_pa);
        let q_bt = orifice::flow(c, pb - pt, v.laminar_dp_pa);
        ValveFlows {
            into_a: q_pa,
            into_b: -q_bt,
            out_of_p: q_pa,
            into_t: q_bt,
        }
    } else {
        let q_pb = orifice::flow(c, pp - pb, v.laminar_dp_pa);
        let q_at = orifice::flow(c, pa - pt, v.laminar_dp_pa);
        ValveFlows {
            into_a: -q_at,
            into_b: q_pb,
            out_of_p: q_pb,
            into_t: q_at,
        }
    }
}

/// The spool law U̇ = (U_ref − U)/τ [unit of U per s] (000 eq. 27; 001 eq. 4), for any scalar:
/// `f64` in the step ([`spool_step`]) and the finite-difference right-hand side, `Dual64` for the
/// spool rows of the exact linearization (`linearize::derivatives`). The one place the law is
/// written.
#[inline]
pub fn spool_rate<S: Real>(u: S, u_ref: S, tau: f64) -> S {
    (u_ref - u) / tau
}

/// Trapezoidal step of [`spool_rate`] from U_ref,k = `u_ref0` to U_ref,k+1 = `u_ref1` over `dt`
/// [s] (see `Signal::step_values` for the interval form of piecewise-constant inputs, reference
/// note 000-A.4): U₊ − U = (Δt/2) [f(U, U_ref,k) + f(U₊, U_ref,k+1)]. The law is affine in U, so
/// the step has the closed form
/// U₊ = U + (Δt/2) [f(U, U_ref,k) + f(U, U_ref,k+1)] / (1 − (Δt/2) ∂f/∂U),
/// with f and its slope ∂f/∂U (= −1/τ) from the law itself (one dual-number evaluation).
#[inline]
pub fn spool_step(u: f64, u_ref0: f64, u_ref1: f64, tau: f64, dt: f64) -> f64 {
    let f1 = spool_rate(Dual64::new(u, 1.0), Dual64::from(u_ref1), tau);
    let f0 = spool_rate(u, u_ref0, tau);
    let h = 0.5 * dt;
    u + h * (f0 + f1.re) / (1.0 - h * f1.eps)
}

impl Element for Valve43 {
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
        valve_element::describe_position(&self.name, "spool", out)
    }
    fn position_has_rate(&self) -> bool {
        true
    }
    /// U(0) = `spool0`.
    fn initial_position(&self, _trim: f64, _u0: f64) -> f64 {
        self.spool0
    }
    /// The closed-form trapezoidal step [`spool_step`] of the spool law (000 eq. 27), the
    /// commands clipped to the input range.
    fn advance_position(&self, position: f64, _trim: f64, u0: f64, u1: f64, dt: f64) -> f64 {
        spool_step(
            position,
            self.clip(u0),
            self.clip(u1),
            self.time_constant_s,
            dt,
        )
    }
    /// U̇ = (U_ref − U)/τ ([`spool_rate`], 000 eq. 27), U_ref clipped to the input range (its
    /// slope 0 outside).
    fn position_rate<S: Real>(&self, position: S, u: S) -> S {
        let [lo, hi] = self.input_range;
        let u = if u.re() < lo {
            S::from(lo)
        } else if u.re() > hi {
            S::from(hi)
        } else {
            u
        };
        spool_rate(position, u, self.time_constant_s)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        valve_element::describe(&self.name, out);
        crate::elements::element::describe_power(&self.name, out);
    }
    /// 000 eq. 26 at the spool U = `at.position`: flows into P, T, A, B.
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let f = flows(self, at.position, at.p[0], at.p[1], at.p[2], at.p[3]);
        let mut e = PortEffort::zero();
        e.flow = [-f.out_of_p, f.into_t, f.into_a, f.into_b];
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

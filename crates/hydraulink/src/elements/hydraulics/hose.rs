//! Hose or pipe: the pressure loss of a fully developed flow through a straight line of inner
//! diameter d and length L, laminar (Hagen–Poiseuille) and turbulent (Blasius), blended C¹ over
//! the transition. The flow is the unknown given the pressure difference: the loss law is
//! inverted, so the hose is a two-port flow element like a throttle.
//!
//! ```text
//!   from ══════════════════ to        Δp = p_from − p_to,  Q positive from `from` to `to`
//!          d, L, μ, ρ                 Re = ρ v d / μ = 4 ρ |Q| / (π d μ)
//!                                     Δp(Q) = sgn(Q) K φ(Re),   K = μ² L / (2 ρ d³)
//! ```
//! with φ = f Re² and the Darcy friction factor f (Darcy–Weisbach Δp = f (L/d) ρ v²/2):
//! ```text
//!   φ(Re) = 64 Re                                  Re ≤ 2000    (laminar: f = 64/Re,
//!                                                                Δp = 128 μ L Q / (π d⁴))
//!         = (1 − s) 64 Re + s 0.316 Re^(7/4)       2000 < Re < 4000,  s = 3x² − 2x³,
//!                                                                x = (Re − 2000)/2000
//!         = 0.316 Re^(7/4)                         Re ≥ 4000    (Blasius: f = 0.316 Re^(−1/4))
//! ```
//! The blend weights the two friction factors with the smoothstep s, whose slope vanishes at
//! both ends, so φ and φ′ are continuous (C¹). φ is increasing: on [2000, 4000] the turbulent
//! term exceeds the laminar one (0.316 Re^(3/4) > 64 there) and s′ ≥ 0, so every term of φ′ is
//! positive. Δp(Q) is therefore odd, C¹ and strictly increasing, and has a unique inverse.
//!
//! **The flow from Δp.** y = |Δp|/K; Re solves φ(Re) = y: y/64 below φ(2000), (y/0.316)^(4/7)
//! above φ(4000), and a safeguarded Newton iteration (bisection on a bracket) between, to
//! 1e-13 relative. Then Q = sgn(Δp) Re π d μ/(4ρ). The iteration runs on the real part; the
//! derivative comes from the implicit function theorem, dQ/dΔp = 1/Δp′(Q) =
//! (π d μ/(4ρ)) / (K φ′(Re)), carried as Q = Q(re Δp) + (Δp − re Δp) dQ/dΔp, which is exact
//! to first order (the dual numbers of the tangent) and leaves the f64 value untouched.
//!
//! **Why no flow state.** The fluid inertance ρ L / A of the line is left out, as the
//! lumped-fluid model leaves it out everywhere (its volumes and orifices are quasi-steady): an
//! algebraic loss keeps the hose usable by every formulation and on algebraic volumes (an
//! internal state is integrated only by the penalty formulation), and adds no oscillating
//! mode. This holds while the frequencies of interest stay well below those of the line's
//! own water-hammer modes, c/(2L) with c ≈ 1000 m/s (250 Hz for a 2 m hose).
//!
//! **The hose's oil volume** π d² L/4 is not added by the element: give it to the end volumes
//! (half each) in their `hose_volume_m3` with the hose's `hose_bulk_modulus_pa`, which is where
//! the lumped model keeps line compliance (000 eq. 23).

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    flow_element, Context, Element, ElementSpec, EnergyDomain, PortEffort, PortState, Ports, Power,
    Variable, MAX_OUTPUTS,
};
use crate::elements::ids::Node;
use crate::error::ModelError;
use crate::solver::real::Real;

/// Reynolds number where the laminar law ends [-].
pub const RE_LAMINAR: f64 = 2000.0;
/// Reynolds number where the turbulent (Blasius) law begins [-].
pub const RE_TURBULENT: f64 = 4000.0;
/// Blasius coefficient of f = 0.316 Re^(−1/4) [-].
const BLASIUS: f64 = 0.316;

/// `[[elements]] type = "hose"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HoseSpec {
    /// Name.
    pub name: String,
    /// One end (positive flow from here).
    pub from: String,
    /// The other end.
    pub to: String,
    /// Inner diameter d [m].
    pub inner_diameter_m: f64,
    /// Length L [m].
    pub length_m: f64,
    /// Dynamic viscosity μ of the oil [Pa s] (0.032 Pa s for ISO VG 46 at 40 °C: 37 cSt at
    /// 870 kg/m³).
    pub viscosity_pa_s: f64,
}

/// A compiled hose.
#[derive(Debug, Clone, PartialEq)]
pub struct Hose {
    /// Name.
    pub name: String,
    /// Upstream end.
    pub from: Node,
    /// Downstream end.
    pub to: Node,
    /// K = μ² L/(2 ρ d³) [Pa]: Δp = K φ(Re).
    pub loss_scale_pa: f64,
    /// π d μ/(4ρ) [m³/s]: Q = Re times this.
    pub flow_per_reynolds_m3_s: f64,
}

impl ElementSpec for HoseSpec {
    type Law = Hose;
    const NOUN: &'static str = "hose";
    fn name(&self) -> &str {
        &self.name
    }
    fn flow_nodes(&self) -> Vec<&str> {
        vec![&self.from, &self.to]
    }
    fn compile(&self, cx: &Context) -> Result<Hose, ModelError> {
        HoseSpec::compile(self, cx)
    }
}

impl HoseSpec {
    /// Checks the fields (positive d, L, μ; distinct ends) and resolves the nodes.
    pub fn compile(&self, cx: &Context) -> Result<Hose, ModelError> {
        let from = cx.node("from", &self.from)?;
        let to = cx.node("to", &self.to)?;
        if from == to {
            return Err(cx.error("to", "is the same node as `from`"));
        }
        let d = cx.positive("inner_diameter_m", self.inner_diameter_m)?;
        let l = cx.positive("length_m", self.length_m)?;
        let mu = cx.positive("viscosity_pa_s", self.viscosity_pa_s)?;
        let rho = cx.density_kg_m3;
        let k = mu * mu * l / (2.0 * rho * d * d * d);
        let per_re = std::f64::consts::PI * d * mu / (4.0 * rho);
        if !(k.is_finite() && k > 0.0 && per_re.is_finite() && per_re > 0.0) {
            return Err(cx.error(
                "inner_diameter_m",
                format!(
                    "is out of range with length_m and viscosity_pa_s: the loss scale \
                     μ² L/(2 ρ d³) is {k:?} Pa"
                ),
            ));
        }
        Ok(Hose {
            name: self.name.clone(),
            from,
            to,
            loss_scale_pa: k,
            flow_per_reynolds_m3_s: per_re,
        })
    }
}

/// φ(Re) = f Re² and φ′(Re) [-] at Re ≥ 0 (module doc).
#[inline]
fn phi<S: Real>(re: S) -> S {
    let r = re.re();
    if r <= RE_LAMINAR {
        re * 64.0
    } else if r >= RE_TURBULENT {
        re.powf(1.75) * BLASIUS
    } else {
        let x = (re - S::from(RE_LAMINAR)) * (1.0 / (RE_TURBULENT - RE_LAMINAR));
        let s = x * x * (S::from(3.0) - x * 2.0);
        (S::one() - s) * re * 64.0 + s * re.powf(1.75) * BLASIUS
    }
}

/// φ′(Re) [-], from φ in dual numbers (the same branch as φ).
#[inline]
fn phi_slope(re: f64) -> f64 {
    phi(num_dual::Dual64::new(re, 1.0)).eps
}

/// The loss law Δp(Q) = sgn(Q) K φ(4ρ|Q|/(π d μ)) [Pa] at flow Q [m³/s] from `from` to `to`.
#[inline]
pub fn pressure_loss<S: Real>(h: &Hose, q: S) -> S {
    let re = q * (1.0 / h.flow_per_reynolds_m3_s);
    if re.re() >= 0.0 {
        phi(re) * h.loss_scale_pa
    } else {
        -(phi(-re) * h.loss_scale_pa)
    }
}

/// Re ≥ 0 with φ(Re) = y ≥ 0 (module doc).
fn reynolds(y: f64) -> f64 {
    let (y_lo, y_hi) = (phi(RE_LAMINAR), phi(RE_TURBULENT));
    if y <= y_lo {
        return y / 64.0;
    }
    if y >= y_hi {
        return (y / BLASIUS).powf(1.0 / 1.75);
    }
    // safeguarded Newton on the bracket [lo, hi], φ increasing
    let (mut lo, mut hi) = (RE_LAMINAR, RE_TURBULENT);
    let mut re = lo + (hi - lo) * (y - y_lo) / (y_hi - y_lo);
    for _ in 0..60 {
        let r = phi(re) - y;
        if r > 0.0 {
            hi = re;
        } else {
            lo = re;
        }
        let mut next = re - r / phi_slope(re);
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        let done = (next - re).abs() <= 1e-13 * re;
        re = next;
        if done {
            break;
        }
    }
    re
}

/// Flow Q from `from` to `to` [m³/s] at Δp = p_from − p_to [Pa]: the inverse of
/// [`pressure_loss`], with the implicit-function derivative (module doc).
#[inline]
pub fn flow<S: Real>(h: &Hose, dp: S) -> S {
    let d = dp.re();
    let re = reynolds(d.abs() / h.loss_scale_pa);
    let q = d.signum() * re * h.flow_per_reynolds_m3_s;
    // dQ/dΔp = (π d μ/(4ρ)) / (K φ′(Re)), even in Q
    let slope = h.flow_per_reynolds_m3_s / (h.loss_scale_pa * phi_slope(re));
    S::from(q) + (dp - S::from(d)) * slope
}

/// Reynolds number 4ρ|Q|/(π d μ) at flow Q [m³/s] [-].
pub fn reynolds_number(h: &Hose, q: f64) -> f64 {
    q.abs() / h.flow_per_reynolds_m3_s
}

impl Element for Hose {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        flow_element::ports(self.from, self.to)
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        flow_element::describe(&self.name, out);
        out.push(Variable {
            name: format!("{}.reynolds", self.name),
            unit: "1",
        });
        crate::elements::element::describe_power(&self.name, out);
    }
    #[inline]
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        flow_element::effort(flow(self, at.p[0] - at.p[1]))
    }
    /// Δp Q ≥ 0 dissipated.
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
        out[n] = reynolds_number(self, e.flow[1]);
        out[n + 1] = crate::elements::element::absorbed_power(at, e);
        n + 2
    }
}

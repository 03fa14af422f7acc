//! Cylinder end stops: a stiff spring–damper contact at each end of the stroke, on the
//! cylinder's line port, with a smooth onset.
//!
//! ```text
//!   base ●══[▌piston          ]══════● rod      l = s − s_ret  (piston travel), 0 ≤ l ≤ L
//!          ▲ stop 1: d₁ = l_e − l       ▲ stop 2: d₂ = l − (L − l_e)   (> 0 in contact)
//!
//!   F_i = max(0, k ψ(d_i) + c ḋ_i φ(d_i))     ψ(d) = d²/(2w) (0 < d < w), d − w/2 (d ≥ w)
//!                                               φ(d) = min(d/w, 1) (d > 0), 0 otherwise
//!   F   = F₁ − F₂                              (line force, positive pushes the pins apart)
//! ```
//! l_e is the engagement length (`engage_m`, default 0): a stop that acts as an end damper
//! (cushion) begins l_e before its stroke end. With l_e = l_d this is the end damper of 002
//! Publication III eq. 31, F_d = k_d (l_d − l1) − c_d ṡ for l1 ≤ l_d (and its mirror at the rod
//! end), up to the onset ramp and the no-adhesion `max` below: past the first w of contact the
//! spring force is k (d − w/2), w/2 shorter than the paper's.
//!
//! The onset width w makes force and stiffness continuous at first contact; the damping ramps
//! in with the penetration, and the `max` lets the stop push but never pull (no adhesion).
//! Stored energy k Σ Ψ(d_i), Ψ = ∫ψ; dissipated power Σ (F_i − k ψ(d_i)) ḋ_i ≥ 0.
//!
//! Defaults from the cylinder's size: k = 10 A_A B_oil / L (ten times the oil-column stiffness
//! of a full-stroke chamber, so the stop is stiffer than the oil it replaces), c = k · 1 ms,
//! w = L / 500, and a largest admissible penetration of 5 w: deeper means the stop cannot hold
//! the load, and the run stops with that diagnosis (`StepError::EndStopOverrun`).

use serde::{Deserialize, Serialize};

use crate::element::{
    Context, CylinderPort, Element, EnergyDomain, MechPort, PortEffort, PortState, Ports, Power,
    Variable, MAX_NODES, MAX_OUTPUTS,
};
use crate::error::ModelError;
use crate::hydraulics::relief_valve::smooth_ramp;
use crate::real::Real;

/// `[[elements]] type = "end_stop"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EndStopSpec {
    /// Name.
    pub name: String,
    /// The cylinder whose stroke ends it guards.
    pub cylinder: String,
    /// Contact stiffness k [N/m]; default 10 A_A B_oil / L.
    #[serde(default)]
    pub stiffness_n_m: Option<f64>,
    /// Contact damping c [N s/m]; default k · 1 ms.
    #[serde(default)]
    pub damping_n_s_m: Option<f64>,
    /// Onset width w [m]; default L / 500.
    #[serde(default)]
    pub onset_m: Option<f64>,
    /// Largest admissible penetration past the stroke end [m]; default 5 w.
    #[serde(default)]
    pub max_penetration_m: Option<f64>,
    /// Engagement length l_e [m]: contact begins this far inside each stroke end (an end
    /// damper or cushion); default 0, contact at the stroke ends.
    #[serde(default)]
    pub engage_m: Option<f64>,
}

/// A compiled end stop.
#[derive(Debug, Clone, PartialEq)]
pub struct EndStop {
    /// Name.
    pub name: String,
    /// The cylinder's line port.
    pub cylinder: CylinderPort,
    /// k [N/m].
    pub stiffness_n_m: f64,
    /// c [N s/m].
    pub damping_n_s_m: f64,
    /// w [m].
    pub onset_m: f64,
    /// Largest admissible penetration past the stroke end [m].
    pub max_penetration_m: f64,
    /// Engagement length l_e [m]: contact begins this far inside each stroke end.
    pub engage_m: f64,
}

/// Contact time constant of the default damping, c = k τ [s].
const DEFAULT_CONTACT_TIME_S: f64 = 1e-3;

impl EndStopSpec {
    /// Checks the fields, resolves the cylinder and derives the defaults.
    pub fn compile(&self, cx: &Context) -> Result<EndStop, ModelError> {
        let cyl = (cx.cylinder)(&self.cylinder)
            .ok_or_else(|| cx.error("cylinder", format!("unknown cylinder '{}'", self.cylinder)))?;
        let k = match self.stiffness_n_m {
            Some(k) => cx.positive("stiffness_n_m", k)?,
            None => 10.0 * cyl.piston_area_m2 * cx.oil_bulk_pa / cyl.stroke_m,
        };
        let c = match self.damping_n_s_m {
            Some(c) => cx.non_negative("damping_n_s_m", c)?,
            None => k * DEFAULT_CONTACT_TIME_S,
        };
        let w = match self.onset_m {
            Some(w) => cx.positive("onset_m", w)?,
            None => cyl.stroke_m / 500.0,
        };
        let max = match self.max_penetration_m {
            Some(m) => cx.positive("max_penetration_m", m)?,
            None => 5.0 * w,
        };
        if max >= 0.5 * cyl.stroke_m {
            return Err(cx.error(
                "max_penetration_m",
                format!(
                    "must be less than half the stroke ({} m), got {max} m",
                    0.5 * cyl.stroke_m
                ),
            ));
        }
        let engage = match self.engage_m {
            Some(e) => cx.non_negative("engage_m", e)?,
            None => 0.0,
        };
        if engage >= 0.5 * cyl.stroke_m {
            return Err(cx.error(
                "engage_m",
                format!(
                    "must be less than half the stroke ({} m), got {engage} m",
                    0.5 * cyl.stroke_m
                ),
            ));
        }
        if !k.is_finite() || !c.is_finite() {
            return Err(cx.error(
                "stiffness_n_m",
                "the default from the cylinder's size is not finite; give it explicitly",
            ));
        }
        Ok(EndStop {
            name: self.name.clone(),
            cylinder: cyl,
            stiffness_n_m: k,
            damping_n_s_m: c,
            onset_m: w,
            max_penetration_m: max,
            engage_m: engage,
        })
    }
}

/// Ψ(d) = ∫₀^d ψ [m²].
fn ramp_integral(d: f64, w: f64) -> f64 {
    if d <= 0.0 {
        0.0
    } else if d < w {
        d * d * d / (6.0 * w)
    } else {
        w * w / 6.0 + 0.5 * (d * d - w * w) - 0.5 * w * (d - w)
    }
}

impl EndStop {
    /// Penetrations (d₁, d₂) [m] and their rates at pin distance s, rate ṡ: d₁ = l_e − l,
    /// d₂ = l − (L − l_e) (002 Pub. III eq. 31: l_d − l1 and l_d − l2).
    #[inline]
    pub fn penetrations<S: Real>(&self, s: S, sd: S) -> [(S, S); 2] {
        let l = s - S::from(self.cylinder.retracted_length_m);
        if self.engage_m == 0.0 {
            // the stops at the stroke ends, exactly as before the engagement length existed
            return [(-l, -sd), (l - S::from(self.cylinder.stroke_m), sd)];
        }
        let e = S::from(self.engage_m);
        [
            (e - l, -sd),
            (l - S::from(self.cylinder.stroke_m - self.engage_m), sd),
        ]
    }

    /// Contact force of one stop at penetration d, rate ḋ [N] (≥ 0).
    #[inline]
    pub fn contact<S: Real>(&self, d: S, dd: S) -> S {
        let w = self.onset_m;
        let r = d.re();
        if r <= 0.0 {
            return S::zero();
        }
        let phi = if r < w { d * (1.0 / w) } else { S::one() };
        let f = smooth_ramp(d, w) * self.stiffness_n_m + dd * phi * self.damping_n_s_m;
        if f.re() > 0.0 {
            f
        } else {
            S::zero()
        }
    }
}

impl Element for EndStop {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        Ports {
            nodes: [None; MAX_NODES],
            mech: MechPort::Line {
                base: self.cylinder.base,
                rod: self.cylinder.rod,
            },
            input: None,
        }
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        for (q, unit) in [("force", "N"), ("penetration", "m")] {
            out.push(Variable {
                name: format!("{}.{q}", self.name),
                unit,
            });
        }
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let [(d1, dd1), (d2, dd2)] = self.penetrations(at.s, at.sd);
        let mut e = PortEffort::zero();
        e.force = self.contact(d1, dd1) - self.contact(d2, dd2);
        e
    }
    fn power(&self, at: &PortState<f64>, _e: &PortEffort<f64>) -> Power {
        let mut p = Power::default();
        for (d, dd) in self.penetrations(at.s, at.sd) {
            p.stored_j += self.stiffness_n_m * ramp_integral(d, self.onset_m);
            let elastic = self.stiffness_n_m * smooth_ramp(d, self.onset_m);
            p.dissipated_w += (self.contact(d, dd) - elastic) * dd;
        }
        p
    }
    fn domain(&self) -> EnergyDomain {
        EnergyDomain::Mechanical
    }
    fn outputs(
        &self,
        at: &PortState<f64>,
        e: &PortEffort<f64>,
        out: &mut [f64; MAX_OUTPUTS],
    ) -> usize {
        let [(d1, _), (d2, _)] = self.penetrations(at.s, at.sd);
        out[0] = e.force;
        out[1] = d1.max(d2).max(0.0);
        2
    }
}

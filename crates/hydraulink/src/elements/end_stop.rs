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
//!
//! # End cushion (opt-in: `cushion_length_m`)
//!
//! A throttled cushion volume at each stroke end, as cylinder makers build them: over the last
//! L_c of the travel toward a stop, a spear on the piston (cap end) or a sleeve on the rod (rod
//! end) enters a bush in the end cap, traps the oil between piston and cap in an annulus of
//! area A_c = A_A − π d_c²/4, and that oil must leave through the gap left around a tapered
//! spear, of area a(x), which closes from a₀ at the entry to the needle valve's a_n at the end.
//! Leaving the end, a check valve in the cap lets the oil back in freely: the cushion brakes
//! only motion into the end.
//!
//! ```text
//!               end cap                  barrel
//!   port ◀──┬──────────────┐ ┌───────────────────────────────────────
//!           │   bush  ┌────┘ │   trapped annulus A_c    ┌──────────┐
//!           │  a(x) ▸ │◀══════ spear Ø d_c, tapered ════│  piston  │═══ rod
//!           │         └────┐ │   at p_port + Δp_c       └──────────┘
//!           ├─ needle a_n ─┤ └──────────────────────  ◀── moving into the end
//!           └─ check ◁ ────┘      (refill on leaving)    x: 0 … L_c, then the metal stop
//!
//!   x   = d + L_c                 (d: the stop's penetration above; the cushion begins L_c
//!                                  before the metal stop)
//!   Q   = A_c ḋ                   (the oil the piston drives out of the annulus, ḋ > 0)
//!   Δp_c = (ρ/2) (Q / (C_d a(x)))²                              (turbulent orifice law)
//!   a(x)² = a_n² + (a₀² − a_n²) Ψ_w(1 − x/L_c)                  (tapered spear)
//!   F_c = σ(x / w_c) A_c Δp_c     for ḋ > 0,   0 otherwise      (one-way: refill check)
//! ```
//! Ψ_w(u) is the ramp ψ above shifted to be exactly u for u ≥ w/2 and 0 for u ≤ −w/2, with w
//! the stop's onset width over L_c: the taper is exact over the cushion and meets the needle
//! area with a continuous slope at the metal stop. σ(ξ) = 3ξ² − 2ξ³ (clamped to [0, 1]) is the
//! spear's entry chamfer over w_c = L_c/10. F_c is C¹ in s and ṡ (it goes as ḋ², whose slope
//! vanishes at ḋ = 0); the branches are decided on the real parts. Its power F_c ḋ ≥ 0 is all
//! dissipated, and it stores nothing. The cushion's oil is treated as incompressible and its
//! pressure acts on A_c above the chamber pressure the cylinder sees: the cushion volume is a
//! small share of the chamber, and its Δp_c is the braking force over A_c.
//!
//! The area law a(x)² linear in x is the constant-deceleration profile: a mass m entering at
//! v₀, pushed toward the end by a constant F_d, is brought to rest at the end of the cushion
//! at constant force F_c = A_c p_c when (energy over the cushion length)
//! ```text
//!   p_c = (½ m v₀² + F_d L_c) / (A_c L_c),     a₀ = A_c v₀ / (C_d √(2 p_c / ρ))
//! ```
//! (v² falls linearly with x, and so must a², for Δp_c to stay at p_c): an energy balance over
//! the cushion length, the kinetic energy plus the drive's work taken at the cushion pressure
//! on the annulus. The progressive (tapered) cushion that brakes at a steady deceleration:
//! Hydraulics & Pneumatics, "Progressive Cushioning for Hydraulic Cylinders", 2 Oct 2019; the
//! entry area sets the highest speed the cushion takes, the end area the lowest it still
//! brakes: M. Guelker (Festo), "Properly Adjusted Air Cushion Solution …, Part Three", NFPA
//! blog. The element's outputs add `<name>.cushion_pa` [Pa] (σ Δp_c of the end being entered)
//! and `<name>.contact_force` [N] (the metal stops' share of `<name>.force`, which is the total
//! with the cushion). Without `cushion_throttle_area_m2`, a₀ follows that rule for v₀ = 0.3 m/s at
//! p_c = 30 MPa (a fast mobile cylinder braked at about its rated pressure); without
//! `cushion_needle_area_m2`, a_n = a₀ / 10 (at the end, p_c holds a tenth of v₀); without
//! `cushion_diameter_m`, d_c = 0.7 D (about the rod diameter of a mobile cylinder, so the same
//! annulus serves both ends).

use serde::{Deserialize, Serialize};

use crate::elements::element::{
    Context, CylinderPort, Element, ElementSpec, EnergyDomain, MechPort, PortEffort, PortState,
    Ports, Power, Variable, MAX_NODES, MAX_OUTPUTS,
};
use crate::elements::hydraulics::relief_valve::smooth_ramp;
use crate::error::ModelError;
use crate::solver::real::Real;

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
    /// Cushion length L_c [m]: an end cushion (a throttled cushion volume) brakes the last L_c of
    /// the travel into each stop; without it, no cushion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cushion_length_m: Option<f64>,
    /// Diameter d_c of the cushion spear or sleeve [m]: the trapped annulus is
    /// A_c = A_A − π d_c²/4; default 0.7 D.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cushion_diameter_m: Option<f64>,
    /// Flow area a₀ of the cushion's throttle where the spear enters [m²]; default: the
    /// constant-deceleration area for 0.3 m/s at 30 MPa, A_c · 0.3 / (C_d √(2 · 30e6 / ρ)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cushion_throttle_area_m2: Option<f64>,
    /// Flow area a_n left at the end of the cushion (the needle valve) [m²]; default a₀ / 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cushion_needle_area_m2: Option<f64>,
    /// Discharge coefficient C_d of the cushion's throttle [-]; default 0.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cushion_discharge_coefficient: Option<f64>,
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
    /// The end cushion at each stroke end, if any.
    pub cushion: Option<Cushion>,
}

/// A compiled end cushion (module doc, "End cushion").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cushion {
    /// Cushion length L_c [m].
    pub length_m: f64,
    /// Trapped annulus area A_c [m²].
    pub area_m2: f64,
    /// Throttle area at the entry a₀ [m²].
    pub entry_area_m2: f64,
    /// Needle area at the end a_n [m²].
    pub needle_area_m2: f64,
    /// Discharge coefficient C_d [-].
    pub discharge_coefficient: f64,
    /// Oil density ρ [kg/m³].
    pub density_kg_m3: f64,
    /// Width of the taper's blend into the needle area, in units of L_c (w / L_c) [-].
    pub blend: f64,
}

/// Design entry speed of the default cushion throttle, v₀ [m/s] (module doc).
pub const DEFAULT_CUSHION_SPEED_M_S: f64 = 0.3;
/// Design cushion pressure of the default cushion throttle, p_c [Pa] (module doc).
pub const DEFAULT_CUSHION_PRESSURE_PA: f64 = 30e6;
/// Default ratio of the spear diameter to the bore, d_c / D [-] (module doc).
pub const DEFAULT_CUSHION_DIAMETER_RATIO: f64 = 0.7;
/// Default ratio of the needle area to the entry area, a_n / a₀ [-] (module doc).
pub const DEFAULT_NEEDLE_RATIO: f64 = 0.1;
/// Default discharge coefficient of the cushion's throttle [-].
pub const DEFAULT_CUSHION_DISCHARGE: f64 = 0.7;

/// The constant-deceleration entry area a₀ = A_c v₀ / (C_d √(2 p_c / ρ)) [m²] of a cushion of
/// annulus `area_m2` that holds `pressure_pa` at entry speed `speed_m_s` (module doc).
pub fn cushion_entry_area(
    area_m2: f64,
    speed_m_s: f64,
    pressure_pa: f64,
    discharge_coefficient: f64,
    density_kg_m3: f64,
) -> f64 {
    area_m2 * speed_m_s / (discharge_coefficient * (2.0 * pressure_pa / density_kg_m3).sqrt())
}

/// The constant-deceleration cushion pressure p_c = (½ m v₀² + F_d L_c) / (A_c L_c) [Pa] that
/// brings a mass `mass_kg` entering at `speed_m_s` under a drive `drive_n` to rest over
/// `length_m` (module doc).
pub fn cushion_design_pressure(
    mass_kg: f64,
    speed_m_s: f64,
    drive_n: f64,
    area_m2: f64,
    length_m: f64,
) -> f64 {
    (0.5 * mass_kg * speed_m_s * speed_m_s + drive_n * length_m) / (area_m2 * length_m)
}

/// Contact time constant of the default damping, c = k τ [s].
const DEFAULT_CONTACT_TIME_S: f64 = 1e-3;

impl ElementSpec for EndStopSpec {
    type Law = EndStop;
    const NOUN: &'static str = "end stop";
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, cx: &Context) -> Result<EndStop, ModelError> {
        EndStopSpec::compile(self, cx)
    }
}

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
        let cushion = self.compile_cushion(cx, &cyl, engage, w)?;
        Ok(EndStop {
            name: self.name.clone(),
            cylinder: cyl,
            stiffness_n_m: k,
            damping_n_s_m: c,
            onset_m: w,
            max_penetration_m: max,
            engage_m: engage,
            cushion,
        })
    }

    /// The cushion fields: none without `cushion_length_m` (and then no other `cushion_*`
    /// field may be given).
    fn compile_cushion(
        &self,
        cx: &Context,
        cyl: &CylinderPort,
        engage: f64,
        onset_m: f64,
    ) -> Result<Option<Cushion>, ModelError> {
        let Some(length) = self.cushion_length_m else {
            for (field, given) in [
                ("cushion_diameter_m", self.cushion_diameter_m.is_some()),
                (
                    "cushion_throttle_area_m2",
                    self.cushion_throttle_area_m2.is_some(),
                ),
                (
                    "cushion_needle_area_m2",
                    self.cushion_needle_area_m2.is_some(),
                ),
                (
                    "cushion_discharge_coefficient",
                    self.cushion_discharge_coefficient.is_some(),
                ),
            ] {
                if given {
                    return Err(cx.error(
                        field,
                        "describes an end cushion, which needs `cushion_length_m`",
                    ));
                }
            }
            return Ok(None);
        };
        let length = cx.positive("cushion_length_m", length)?;
        // the two cushions (and their stops) must not overlap
        if engage + length >= 0.5 * cyl.stroke_m {
            return Err(cx.error(
                "cushion_length_m",
                format!(
                    "with engage_m ({engage} m) must be less than half the stroke ({} m), got \
                     {length} m",
                    0.5 * cyl.stroke_m
                ),
            ));
        }
        let bore = (4.0 * cyl.piston_area_m2 / std::f64::consts::PI).sqrt();
        let diameter = match self.cushion_diameter_m {
            Some(d) => cx.positive("cushion_diameter_m", d)?,
            None => DEFAULT_CUSHION_DIAMETER_RATIO * bore,
        };
        if diameter >= bore {
            return Err(cx.error(
                "cushion_diameter_m",
                format!("must be less than the bore ({bore} m), got {diameter} m"),
            ));
        }
        let area = cyl.piston_area_m2 - 0.25 * std::f64::consts::PI * diameter * diameter;
        let cd = match self.cushion_discharge_coefficient {
            Some(c) => cx.positive("cushion_discharge_coefficient", c)?,
            None => DEFAULT_CUSHION_DISCHARGE,
        };
        if cd > 1.0 {
            return Err(cx.error(
                "cushion_discharge_coefficient",
                format!("must be ≤ 1, got {cd}"),
            ));
        }
        let entry = match self.cushion_throttle_area_m2 {
            Some(a) => cx.positive("cushion_throttle_area_m2", a)?,
            None => cushion_entry_area(
                area,
                DEFAULT_CUSHION_SPEED_M_S,
                DEFAULT_CUSHION_PRESSURE_PA,
                cd,
                cx.density_kg_m3,
            ),
        };
        if entry >= area {
            return Err(cx.error(
                "cushion_throttle_area_m2",
                format!(
                    "must be less than the cushion's annulus A_A − π d_c²/4 ({area} m²), got \
                     {entry} m²"
                ),
            ));
        }
        let needle = match self.cushion_needle_area_m2 {
            Some(a) => cx.positive("cushion_needle_area_m2", a)?,
            None => DEFAULT_NEEDLE_RATIO * entry,
        };
        if needle > entry {
            return Err(cx.error(
                "cushion_needle_area_m2",
                format!(
                    "must be at most the throttle area at the entry ({entry} m²), got {needle} m²"
                ),
            ));
        }
        if !(cx.density_kg_m3 > 0.0 && cx.density_kg_m3.is_finite()) {
            return Err(cx.error(
                "cushion_length_m",
                "the oil density must be finite and > 0 for an end cushion",
            ));
        }
        Ok(Some(Cushion {
            length_m: length,
            area_m2: area,
            entry_area_m2: entry,
            needle_area_m2: needle,
            discharge_coefficient: cd,
            density_kg_m3: cx.density_kg_m3,
            blend: onset_m / length,
        }))
    }
}

/// Entry chamfer of the spear, in units of L_c (w_c / L_c) [-] (module doc).
const CUSHION_ENTRY: f64 = 0.1;

impl Cushion {
    /// Cushion pressure σ Δp_c [Pa] of one end at penetration d, rate ḋ of its stop (module
    /// doc, "End cushion"): zero outside the cushion and when leaving the end.
    #[inline]
    pub fn pressure<S: Real>(&self, d: S, dd: S) -> S {
        let x = (d + S::from(self.length_m)) * (1.0 / self.length_m); // x / L_c
        if x.re() <= 0.0 || dd.re() <= 0.0 {
            return S::zero();
        }
        // the spear's entry chamfer σ(x / w_c), a smoothstep
        let xi = x * (1.0 / CUSHION_ENTRY);
        let sigma = if xi.re() >= 1.0 {
            S::one()
        } else {
            xi * xi * (S::from(3.0) - xi * 2.0)
        };
        // the taper a(x)² = a_n² + (a₀² − a_n²) Ψ_w(1 − x/L_c)
        let (a0, an) = (self.entry_area_m2, self.needle_area_m2);
        let u = S::one() - x;
        let taper = smooth_ramp(u + S::from(0.5 * self.blend), self.blend);
        let a2 = taper * (a0 * a0 - an * an) + S::from(an * an);
        // Δp_c = (ρ/2) (A_c ḋ / (C_d a))²
        let q = dd * (self.area_m2 / self.discharge_coefficient);
        sigma * q * q * (0.5 * self.density_kg_m3) / a2
    }

    /// Cushion force F_c = A_c σ Δp_c [N] (≥ 0) of one end.
    #[inline]
    pub fn force<S: Real>(&self, d: S, dd: S) -> S {
        self.pressure(d, dd) * self.area_m2
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
        if self.cushion.is_some() {
            for (q, unit) in [("cushion_pa", "Pa"), ("contact_force", "N")] {
                out.push(Variable {
                    name: format!("{}.{q}", self.name),
                    unit,
                });
            }
        }
    }
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let [(d1, dd1), (d2, dd2)] = self.penetrations(at.s, at.sd);
        let mut e = PortEffort::zero();
        e.force = self.contact(d1, dd1) - self.contact(d2, dd2);
        if let Some(c) = &self.cushion {
            e.force += c.force(d1, dd1) - c.force(d2, dd2);
        }
        e
    }
    fn power(&self, at: &PortState<f64>, _e: &PortEffort<f64>) -> Power {
        let mut p = Power::default();
        for (d, dd) in self.penetrations(at.s, at.sd) {
            p.stored_j += self.stiffness_n_m * ramp_integral(d, self.onset_m);
            let elastic = self.stiffness_n_m * smooth_ramp(d, self.onset_m);
            p.dissipated_w += (self.contact(d, dd) - elastic) * dd;
            if let Some(c) = &self.cushion {
                // the throttled cushion only dissipates: F_c ḋ ≥ 0
                p.dissipated_w += c.force(d, dd) * dd;
            }
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
        let [(d1, dd1), (d2, dd2)] = self.penetrations(at.s, at.sd);
        out[0] = e.force;
        out[1] = d1.max(d2).max(0.0);
        match &self.cushion {
            None => 2,
            Some(c) => {
                // the cushion pressure of the end being entered (the two never overlap), and
                // the metal stops' share of the force
                out[2] = c.pressure(d1, dd1).max(c.pressure(d2, dd2));
                out[3] = self.contact(d1, dd1) - self.contact(d2, dd2);
                4
            }
        }
    }
}

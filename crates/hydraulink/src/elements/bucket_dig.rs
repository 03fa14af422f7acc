//! Element `bucket_dig`: a bucket's force points against the heightfield terrain, and the
//! payload it carries (003 Pub. V §II-E "bucket digging"; docs/theory/13_terrain.md §13.4–13.6).
//!
//! ```text
//!        bucket body (MechPort::Body)            y_s(x, z): terrain surface, frozen over the
//!            ●  c: payload point, m_p             step as a plane at each force point
//!           ╱ ╲        ▲ F_n e_y                 δ = y_s(x, z) − y: depth of a point below
//!   ───────●───●───────┼──────── y_s             it [m] (> 0 in the soil)
//!     r_k  ▼ δ_k       │ ◀── F_c (against ṙ_k)   δ̇ = ∂y_s/∂x ẋ + ∂y_s/∂z ż − ẏ [m/s]
//!          soil
//!   per force point k:  F_n = max(0, K δ + C δ̇)    (penalty, as `obb_contact`; 003 Pub. IV eq. 17)
//!                       F_c = N_γ ρ g w δ²          (McKyes' cutting resistance of a
//!                                                     cohesionless soil, surcharge-free)
//!                       force on the bucket F_n (−g_x, 1, −g_z) − F_c ṙ_k / √(|ṙ_k|² + v_ε²)
//!   payload at c:       m_p (g − a_c),  a_c = 2 (v_c − v_c,n)/Δt − a_c,n   (trapezoidal rule)
//! ```
//! Sign convention: δ > 0 below the surface, δ̇ > 0 deepening; F_n pushes the bucket out of the
//! soil along −∇δ = (−g_x, 1, −g_z) (up on level ground; the gradient of the penalty potential
//! ½ K δ², so its power is −F_n δ̇ exactly) and never pulls; F_c opposes the point's velocity, smoothed below v_ε so
//! the law is C¹ at rest (a viscous resistance F_c/v_ε there). The digging resistance is the N_γ
//! term of McKyes' universal earthmoving equation (E. McKyes, *Soil Cutting and Tillage*,
//! Elsevier 1985, eq. 4.1: F = (γ d² N_γ + c d N_c + q d N_q) w with cohesion c = 0 and
//! surcharge q = 0 for dry sand), d the depth δ and w the width each point cuts.
//!
//! **The fundamental earth-moving equation** (`cutting = { ... }`, [`earth_moving`]): instead of
//! the fixed N_γ, each point's strip resists with the full equation of Reece (1965) and McKyes
//! (1985, eq. 4.1), F = (γ d² N_γ + c d N_c + c_a d N_ca + q d N_q) w, its factors computed
//! from φ, δ, the rake angle α of the bucket's lip ([`BucketDig::rake`], C¹-clamped to
//! [`RAKE_RANGE_DEG`]) and the least-force failure angle β in closed form. Its draft H acts
//! against ṙ and its lift V along e × ṙ (perpendicular to ṙ, no work), so the cutting power is
//! −H |ṙ|²/√(|ṙ|² + v_ε²) ≤ 0. The ground penalty then acts below the floor of the cut
//! (`slot::FLOOR`), and the stage `world` lets in no more than the cut allows
//! (docs/theory/13_terrain.md §13.5).
//!
//! **What is frozen.** The terrain is world state updated at step boundaries (stage `world`,
//! [`crate::pipeline::world`]): inside a step's Newton iterations the element reads an
//! [`crate::elements::element::Frozen`] record written at the boundary: per force point the surface as a
//! plane y_s = a + g_x x + g_z z through the bilinear height and slope at the point's position
//! there; the payload mass m_p and the payload point's velocity v_c,n and acceleration a_c,n at
//! the step start; gravity; K, C, ρ of the terrain. So the law is a smooth function of the body
//! pose and velocity only, and the exact tangent (dual numbers) stays exact.
//!
//! **Payload.** The payload is a point mass m_p at the body point c. Its force on the bucket is
//! m_p (g − a_c) with a_c the trapezoidal-rule acceleration of c at the end of the step, from
//! its velocity there (dual in the tangent) and the step-start values: the same relation the
//! integrator imposes on every other velocity (000 eq. 34), so its weight and its inertia enter
//! the dynamics through the body port. Its energy ½ m_p |v_c|² − m_p g·r_c is this element's
//! stored energy.
//!
//! **Outputs.** `<name>.payload_kg`, `.hopper_kg`, `.dug_m3` (the world state at the step
//! start), `.dig_force` (Σ F_c [N]) and `.depth` (deepest δ [m]). A body-port element has no node
//! ports, so its port state's pressure slots carry the three world values to [`Element::outputs`]
//! (documented in [`BucketDig::evaluate_body`]).

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

use crate::elements::element::{
    BodyEffort, BodyPose, Context, Element, ElementSpec, EnergyDomain, Frozen, MechPort,
    PortEffort, PortState, Ports, Power, Variable, MAX_NODES, MAX_OUTPUTS,
};
use crate::elements::ids::Frame;
use crate::elements::obb_contact::normal_force;
use crate::error::ModelError;
use crate::solver::real::{c, re, v3, Real};

/// Largest number of force points of one bucket.
pub const MAX_DIG_POINTS: usize = 5;

/// Slots of the [`Frozen`] record of a `bucket_dig` element.
pub mod slot {
    /// 1 when a terrain is present (0: the element exerts nothing).
    pub const ACTIVE: usize = 0;
    /// Payload mass m_p [kg].
    pub const MASS: usize = 1;
    /// Payload point velocity at the step start v_c,n, global (3 slots) [m/s].
    pub const VEL: usize = 2;
    /// Payload point acceleration at the step start a_c,n, global (3 slots) [m/s²].
    pub const ACC: usize = 5;
    /// Gravity g, global (3 slots) [m/s²].
    pub const GRAVITY: usize = 8;
    /// Ground contact stiffness K [N/m].
    pub const STIFFNESS: usize = 11;
    /// Ground contact damping C [N s/m].
    pub const DAMPING: usize = 12;
    /// Terrain density ρ [kg/m³].
    pub const DENSITY: usize = 13;
    /// Material in the hopper so far [kg] (an output).
    pub const HOPPER: usize = 14;
    /// Volume dug so far [m³] (an output).
    pub const DUG: usize = 15;
    /// Surface plane of force point k: a, g_x, g_z at `SURFACE + 3 k` (y_s = a + g_x x + g_z z)
    /// [m, -, -].
    pub const SURFACE: usize = 16;
    /// With the earth-moving equation: the depth below the surface plane at which the ground
    /// penalty of force point k starts, at `FLOOR + k` [m] (the floor of the cut the point is
    /// making; 0 without `cutting`).
    pub const FLOOR: usize = SURFACE + 3 * super::MAX_DIG_POINTS;
}

/// `[[elements]] type = "bucket_dig"`: force points and payload of a bucket against the
/// model's `[terrain]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BucketDigSpec {
    /// Name.
    pub name: String,
    /// The bucket body.
    pub body: String,
    /// Markers of the bucket along its cutting edge (1 to 5): the force points, and the edge
    /// that cuts the terrain (the polyline through them).
    pub edge: Vec<String>,
    /// Marker of the payload's centre c (where the payload mass sits).
    pub payload_marker: String,
    /// The direction out of the bucket's opening, in the reference configuration's axes (need not
    /// be unit) [-]: the bucket dumps when it points more than `dump_angle_deg` away from up.
    pub opening: [f64; 3],
    /// Width of soil each force point cuts, w [m], > 0 (the bucket width over the point count).
    pub width_m: f64,
    /// McKyes' N_γ, a fixed cutting resistance factor of a cohesionless soil [-], ≥ 0: the
    /// resistance N_γ ρ g w δ². Give either this or `cutting`.
    #[serde(default)]
    pub cutting_factor: Option<f64>,
    /// The fundamental earth-moving equation with its factors computed from the soil and the
    /// bucket's rake angle ([`CuttingSpec`]); the bucket then also fills no faster than its cut
    /// allows. Give either this or `cutting_factor`.
    #[serde(default)]
    pub cutting: Option<CuttingSpec>,
    /// v_ε: below this speed the cutting resistance fades in linearly [m/s], > 0 (default 0.05).
    #[serde(default = "default_smoothing")]
    pub smoothing_speed_m_s: f64,
    /// Depth over which the contact damping grows in [m], ≥ 0 (default 1e-3).
    #[serde(default = "default_ramp")]
    pub damping_ramp_m: f64,
    /// Heaped bucket capacity [m³], > 0: no more is cut once the payload fills it.
    pub capacity_m3: f64,
    /// The bucket dumps when its opening points more than this from up [deg], in (0, 180).
    pub dump_angle_deg: f64,
    /// Rate at which a tilted bucket empties [m³/s], > 0.
    pub dump_rate_m3_s: f64,
}

/// `cutting = { ... }` of a `bucket_dig`: the soil and the tool of the fundamental earth-moving
/// equation (Reece 1965; McKyes 1985 eq. 4.1), F = (γ d² N_γ + c d N_c + c_a d N_ca + q d N_q) w.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CuttingSpec {
    /// The tool face: the direction from the cutting edge along the bucket's lip plate into the
    /// bucket, in the reference configuration's axes (need not be unit) [-]; not parallel to
    /// `opening`. Its angle to the horizontal behind the cut is the rake angle α.
    pub face: [f64; 3],
    /// The soil's internal friction angle φ [deg], in [1, 45).
    pub soil_friction_deg: f64,
    /// The soil–tool (soil–steel) friction angle δ [deg], in [0, φ].
    pub tool_friction_deg: f64,
    /// The soil's cohesion c [Pa], ≥ 0 (default 0: a cohesionless soil).
    #[serde(default)]
    pub cohesion_pa: f64,
    /// The soil–tool adhesion c_a [Pa], ≥ 0 (default 0).
    #[serde(default)]
    pub adhesion_pa: f64,
    /// A surcharge q on the soil surface ahead of the edge [Pa], ≥ 0 (default 0).
    #[serde(default)]
    pub surcharge_pa: f64,
}

/// The compiled soil and tool of [`CuttingSpec`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cutting {
    /// Unit tool face in the body frame (reference configuration) [-].
    pub face: Vector3<f64>,
    /// Unit edge axis e = opening × face in the body frame [-]: for a velocity v of the edge,
    /// e × v is the "up" of the travel frame (the side of the tool face).
    pub axis: Vector3<f64>,
    /// φ [rad].
    pub soil_friction_rad: f64,
    /// δ [rad].
    pub tool_friction_rad: f64,
    /// c [Pa].
    pub cohesion_pa: f64,
    /// c_a [Pa].
    pub adhesion_pa: f64,
    /// q [Pa].
    pub surcharge_pa: f64,
}

/// Range of the rake angle α the earth-moving equation is evaluated at [deg]: the bucket's
/// geometric rake is clamped into it (C¹, [`clamp_c1`]); below it the wedge grows without
/// bound (cot α → ∞), above it the lip leans forward over the cut.
pub const RAKE_RANGE_DEG: (f64, f64) = (10.0, 90.0);
/// Half-width of the C¹ blend at each end of [`RAKE_RANGE_DEG`] [deg].
pub const RAKE_BLEND_DEG: f64 = 5.0;

fn default_smoothing() -> f64 {
    0.05
}
fn default_ramp() -> f64 {
    1e-3
}

/// A compiled `bucket_dig` element.
#[derive(Debug, Clone, PartialEq)]
pub struct BucketDig {
    /// Name.
    pub name: String,
    /// The bucket's frame.
    pub frame: Frame,
    /// Force points in the body frame (reference configuration) [m].
    pub points: Vec<Vector3<f64>>,
    /// Payload point c in the body frame [m].
    pub payload: Vector3<f64>,
    /// Unit opening direction in the body frame [-].
    pub opening: Vector3<f64>,
    /// w [m].
    pub width_m: f64,
    /// N_γ [-] of the fixed law (0 with `cutting`).
    pub cutting_factor: f64,
    /// The earth-moving equation's soil and tool, when given (else the fixed N_γ law).
    pub cutting: Option<Cutting>,
    /// v_ε [m/s].
    pub smoothing_speed_m_s: f64,
    /// Damping ramp [m].
    pub damping_ramp_m: f64,
    /// Capacity [m³].
    pub capacity_m3: f64,
    /// Dump angle [rad].
    pub dump_angle_rad: f64,
    /// Dump rate [m³/s].
    pub dump_rate_m3_s: f64,
    /// Δt of the solver [s] (the payload's trapezoidal acceleration).
    pub step_s: f64,
}

impl ElementSpec for BucketDigSpec {
    type Law = BucketDig;
    const NOUN: &'static str = "bucket";
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, cx: &Context) -> Result<BucketDig, ModelError> {
        BucketDigSpec::compile(self, cx)
    }
}

impl BucketDigSpec {
    /// Checks the fields and resolves the body and markers.
    pub fn compile(&self, cx: &Context) -> Result<BucketDig, ModelError> {
        if self.edge.is_empty() || self.edge.len() > MAX_DIG_POINTS {
            return Err(cx.error(
                "edge",
                format!(
                    "needs 1 to {MAX_DIG_POINTS} markers, got {}",
                    self.edge.len()
                ),
            ));
        }
        let mut frame = None;
        let mut points = Vec::with_capacity(self.edge.len());
        for (k, m) in self.edge.iter().enumerate() {
            let at = cx.marker(&format!("edge[{k}]"), &self.body, m)?;
            frame = Some(at.frame);
            points.push(at.point_ref);
        }
        let c0 = cx.marker("payload_marker", &self.body, &self.payload_marker)?;
        let frame = frame.unwrap_or(c0.frame);
        if frame == Frame::Ground {
            return Err(cx.error("body", "must be a moving body (the bucket)"));
        }
        let o = Vector3::new(self.opening[0], self.opening[1], self.opening[2]);
        for (i, x) in self.opening.iter().enumerate() {
            cx.finite(&format!("opening[{i}]"), *x)?;
        }
        if o.norm() == 0.0 {
            return Err(cx.error("opening", "must be a non-zero direction"));
        }
        let dump = cx.positive("dump_angle_deg", self.dump_angle_deg)?;
        if dump >= 180.0 {
            return Err(cx.error("dump_angle_deg", format!("must be in (0, 180), got {dump}")));
        }
        let opening = o / o.norm();
        let (cutting_factor, cutting) = match (self.cutting_factor, &self.cutting) {
            (Some(n), None) => (cx.non_negative("cutting_factor", n)?, None),
            (None, Some(cs)) => (0.0, Some(cs.compile(cx, &opening)?)),
            (Some(_), Some(_)) => {
                return Err(cx.error(
                    "cutting",
                    "give either cutting_factor (a fixed N_γ) or cutting (the earth-moving \
                     equation), not both",
                ))
            }
            (None, None) => {
                return Err(cx.error(
                    "cutting_factor",
                    "missing: give cutting_factor (a fixed N_γ) or a cutting table (the \
                     earth-moving equation)",
                ))
            }
        };
        Ok(BucketDig {
            name: self.name.clone(),
            frame,
            points,
            payload: c0.point_ref,
            opening,
            width_m: cx.positive("width_m", self.width_m)?,
            cutting_factor,
            cutting,
            smoothing_speed_m_s: cx.positive("smoothing_speed_m_s", self.smoothing_speed_m_s)?,
            damping_ramp_m: cx.non_negative("damping_ramp_m", self.damping_ramp_m)?,
            capacity_m3: cx.positive("capacity_m3", self.capacity_m3)?,
            dump_angle_rad: dump.to_radians(),
            dump_rate_m3_s: cx.positive("dump_rate_m3_s", self.dump_rate_m3_s)?,
            step_s: cx.step_s,
        })
    }
}

impl CuttingSpec {
    /// Checks the fields (errors name `cutting.<field>`); `opening` is the unit opening.
    fn compile(&self, cx: &Context, opening: &Vector3<f64>) -> Result<Cutting, ModelError> {
        for (i, x) in self.face.iter().enumerate() {
            cx.finite(&format!("cutting.face[{i}]"), *x)?;
        }
        let face = Vector3::new(self.face[0], self.face[1], self.face[2]);
        if face.norm() == 0.0 {
            return Err(cx.error("cutting.face", "must be a non-zero direction"));
        }
        let face = face / face.norm();
        let axis = opening.cross(&face);
        // |o × t| = sin of their angle: below ~0.6° the edge axis is not defined
        if axis.norm() < 1e-2 {
            return Err(cx.error(
                "cutting.face",
                "must not be parallel to opening (the edge axis is opening × face)",
            ));
        }
        let phi = cx.finite("cutting.soil_friction_deg", self.soil_friction_deg)?;
        if !(1.0..45.0).contains(&phi) {
            return Err(cx.error(
                "cutting.soil_friction_deg",
                format!("must be in [1, 45), got {phi}"),
            ));
        }
        let delta = cx.finite("cutting.tool_friction_deg", self.tool_friction_deg)?;
        if !(0.0..=phi).contains(&delta) {
            return Err(cx.error(
                "cutting.tool_friction_deg",
                format!("must be in [0, soil_friction_deg = {phi}], got {delta}"),
            ));
        }
        Ok(Cutting {
            face,
            axis: axis / axis.norm(),
            soil_friction_rad: phi.to_radians(),
            tool_friction_rad: delta.to_radians(),
            cohesion_pa: cx.non_negative("cutting.cohesion_pa", self.cohesion_pa)?,
            adhesion_pa: cx.non_negative("cutting.adhesion_pa", self.adhesion_pa)?,
            surcharge_pa: cx.non_negative("cutting.surcharge_pa", self.surcharge_pa)?,
        })
    }
}

/// A C¹ clamp of `x` into [lo, hi]: x between lo + r and hi − r, the bound beyond lo − r and
/// hi + r, and a quadratic blend in between (value and slope continuous; needs hi − lo ≥ 2r).
/// The branch is decided on the real part.
#[inline]
pub fn clamp_c1<S: Real>(x: S, lo: f64, hi: f64, r: f64) -> S {
    let xr = re(x);
    if xr <= lo - r {
        c::<S>(lo)
    } else if xr < lo + r {
        let u = x - c::<S>(lo - r);
        c::<S>(lo) + u * u * c::<S>(0.25 / r)
    } else if xr <= hi - r {
        x
    } else if xr < hi + r {
        let u = c::<S>(hi + r) - x;
        c::<S>(hi) - u * u * c::<S>(0.25 / r)
    } else {
        c::<S>(hi)
    }
}

/// The fundamental earth-moving equation for one blade: the forces the tool exerts on the soil,
/// (H, V) = (draft along the travel, lift upwards) [N], for rake angle `rake` α [rad], depth
/// `depth` d [m] (0 for d ≤ 0, decided on the real part), width `width_m` w [m] and unit soil
/// weight `gamma` γ [N/m³].
///
/// Reece (1965) and McKyes (1985, §4.2, eqs. 4.1–4.9): the soil wedge between the blade, the
/// free surface and a plane failure surface at angle β to the horizontal; with the blade's
/// force P at δ to its normal, the adhesion C_a = c_a w d / sin α along the blade and the
/// cohesion C = c w d / sin β on the failure surface, the wedge's equilibrium gives
///
///   P = w (γ d² N_γ + c d N_c + c_a d N_ca + q d N_q),   D = cos(α+δ) + sin(α+δ) cot(β+φ),
///   N_γ = (cot α + cot β)/(2D),  N_c = (1 + cot β cot(β+φ))/D,
///   N_ca = (1 − cot α cot(β+φ))/D,  N_q = (cot α + cot β)/D,
///   H = P sin(α+δ) + c_a w d cot α,  V = P cos(α+δ) − c_a w d.
///
/// The failure angle β is the one that minimises P (McKyes' rule). In u = cot β, with
/// k = cot φ and cot(β+φ) = (u k − 1)/(u + k), P is a quadratic over a linear function,
/// P = (n₂u² + n₁u + n₀)/(m₁u + m₀), so dP/du = 0 is the quadratic A u² + 2B u + C = 0 with
/// A = n₂m₁, B = n₂m₀, C = n₁m₀ − n₀m₁, and the minimum is its larger root (A > 0 for
/// α + δ + φ < 180°). That closed form is smooth in α and d, so the dual tangent differentiates
/// through the minimisation exactly; it is evaluated in the form without cancellation.
pub fn earth_moving<S: Real>(cut: &Cutting, gamma: f64, width_m: f64, rake: S, depth: S) -> (S, S) {
    if re(depth) <= 0.0 {
        return (S::zero(), S::zero());
    }
    let (phi, delta) = (cut.soil_friction_rad, cut.tool_friction_rad);
    let k = 1.0 / phi.tan();
    let cot_a = rake.cos() / rake.sin();
    let (s, t) = ((rake + c::<S>(delta)).cos(), (rake + c::<S>(delta)).sin());
    let wd = depth * c::<S>(width_m);
    // the four loads [N]: ½ γ w d², q w d, c w d, c_a w d, scaled by their sum L (the minimum
    // does not depend on the scale; a tiny depth cannot underflow the quadratic)
    let (g, q, cc, ca) = (
        wd * depth * c::<S>(0.5 * gamma),
        wd * c::<S>(cut.surcharge_pa),
        wd * c::<S>(cut.cohesion_pa),
        wd * c::<S>(cut.adhesion_pa),
    );
    let load = g + q + cc + ca;
    if re(load) <= 0.0 {
        return (S::zero(), S::zero());
    }
    let (g, q, cc, ca) = (g / load, q / load, cc / load, ca / load);
    // numerator (W + Q) + C (1 + u v) + C_a (1 − cot α v) = a₀ + a₁u + b u v − e v
    let a1 = g + q;
    let a0 = a1 * cot_a + cc + ca;
    let (b, e) = (cc, ca * cot_a);
    // times (u + k): n₂u² + n₁u + n₀ over m₁u + m₀
    let n2 = a1 + b * c::<S>(k);
    let n1 = a0 + a1 * c::<S>(k) - b - e * c::<S>(k);
    let n0 = a0 * c::<S>(k) + e;
    let m1 = s + t * c::<S>(k);
    let m0 = s * c::<S>(k) - t;
    let (qa, qb, qc) = (n2 * m1, n2 * m0, n1 * m0 - n0 * m1);
    let root = (qb * qb - qa * qc).sqrt();
    let u = if re(qb) <= 0.0 {
        (root - qb) / qa
    } else {
        -qc / (qb + root)
    };
    let p = (n2 * u * u + n1 * u + n0) / (m1 * u + m0);
    ((p * t + e) * load, (p * s - ca) * load)
}

/// McKyes' cutting resistance of one point, F_c = N_γ ρ g w δ² for δ > 0, else 0 [N] (module
/// doc). The branch is decided on the real part.
#[inline]
pub fn cutting_resistance<S: Real>(n_gamma: f64, rho: f64, g: f64, width_m: f64, depth: S) -> S {
    if re(depth) <= 0.0 {
        return S::zero();
    }
    depth * depth * c::<S>(n_gamma * rho * g * width_m)
}

/// The unit-like direction of the resistance, −ṙ / √(|ṙ|² + v_ε²) [-] (C¹ through rest).
#[inline]
pub fn resistance_direction<S: Real>(v: &Vector3<S>, v_eps: f64) -> Vector3<S> {
    let n = (v.dot(v) + c::<S>(v_eps * v_eps)).sqrt();
    -v / n
}

impl BucketDig {
    /// The payload point's trapezoidal acceleration at the end of the step, from its velocity
    /// `vc` there and the step-start values in `f` [m/s²] (000 eq. 34 for one point).
    #[inline]
    pub fn payload_acceleration<S: Real>(&self, vc: &Vector3<S>, f: &Frozen) -> Vector3<S> {
        let vn = Vector3::new(f[slot::VEL], f[slot::VEL + 1], f[slot::VEL + 2]);
        let an = Vector3::new(f[slot::ACC], f[slot::ACC + 1], f[slot::ACC + 2]);
        (vc - v3::<S>(&vn)) * c::<S>(2.0 / self.step_s) - v3::<S>(&an)
    }

    /// The rake angle α of the tool face at rotation `rot` (body → global) [rad], before the
    /// clamp: with up = −g/|g|, the edge axis e = R a and the horizontal m = unit(up × e) on the
    /// opening's side, α = atan2(t·up, −t·m) for the face t = R t₀ (t ⊥ e, so t lies in the
    /// plane of up and m while the edge is not vertical). Also returns e.
    pub fn rake<S: Real>(
        cut: &Cutting,
        rot: &nalgebra::Matrix3<S>,
        up: &Vector3<f64>,
    ) -> (S, Vector3<S>) {
        let e = rot * v3::<S>(&cut.axis);
        let t = rot * v3::<S>(&cut.face);
        let up = v3::<S>(up);
        let m = up.cross(&e);
        let m = m / m.dot(&m).sqrt();
        (t.dot(&up).atan2(-t.dot(&m)), e)
    }

    /// Whether the bucket at rotation `rot` (body → global) points its opening more than the
    /// dump angle from up (−g).
    pub fn is_dumping(&self, rot: &nalgebra::Matrix3<f64>, gravity: &Vector3<f64>) -> bool {
        let g = gravity.norm();
        if g == 0.0 {
            return false;
        }
        let up = -gravity / g;
        (rot * self.opening).dot(&up) < self.dump_angle_rad.cos()
    }
}

impl Element for BucketDig {
    fn name(&self) -> &str {
        &self.name
    }
    fn ports(&self) -> Ports {
        Ports {
            nodes: [None; MAX_NODES],
            mech: MechPort::Body(self.frame),
            input: None,
        }
    }
    fn describe(&self, out: &mut Vec<Variable>) {
        for (q, unit) in [
            ("payload_kg", "kg"),
            ("hopper_kg", "kg"),
            ("dug_m3", "m^3"),
            ("dig_force", "N"),
            ("depth", "m"),
        ] {
            out.push(Variable {
                name: format!("{}.{q}", self.name),
                unit,
            });
        }
    }
    /// The scalar law on (s = δ, ṡ = δ̇): `force` = F_n with the terrain's K and C (the ones of
    /// the last frozen record are not known here, so this is the law at K = 1, C = 0: use
    /// [`normal_force`] with the terrain's values; kept for the trait).
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let mut e = PortEffort::zero();
        e.force = normal_force(1.0, 0.0, self.damping_ramp_m, at.s, at.sd);
        e
    }
    fn evaluate_body_in<S: Real>(&self, pose: &BodyPose<S>, u: f64, f: &Frozen) -> BodyEffort<S> {
        let mut out = BodyEffort::zero();
        out.at.u = u;
        if f[slot::ACTIVE] == 0.0 {
            return out;
        }
        // world values for the outputs: a body port has no node ports, so the pressure slots
        // carry them (`Element::outputs` reads them back)
        out.at.p[0] = c::<S>(f[slot::MASS]);
        out.at.p[1] = c::<S>(f[slot::HOPPER]);
        out.at.p[2] = c::<S>(f[slot::DUG]);
        let (k, cd, rho) = (f[slot::STIFFNESS], f[slot::DAMPING], f[slot::DENSITY]);
        let gravity = Vector3::new(f[slot::GRAVITY], f[slot::GRAVITY + 1], f[slot::GRAVITY + 2]);
        let g = gravity.norm();
        let pc = pose.point(&self.payload);
        let mut total = Vector3::<S>::zeros();
        let mut torque = Vector3::<S>::zeros();
        let mut dig = S::zero();
        let mut power = Power::default();
        // the earth-moving equation's rake angle α (C¹-clamped) and edge axis e, once per body
        let (gamma, up) = (rho * g, -gravity / g.max(f64::MIN_POSITIVE));
        let cut = self.cutting.as_ref().map(|cut| {
            let (a, e) = Self::rake(cut, &pose.rot, &up);
            let (lo, hi) = RAKE_RANGE_DEG;
            let a = clamp_c1(
                a,
                lo.to_radians(),
                hi.to_radians(),
                RAKE_BLEND_DEG.to_radians(),
            );
            (cut, a, e)
        });
        for (n, p) in self.points.iter().enumerate() {
            let s0 = slot::SURFACE + 3 * n;
            let (a, gx, gz) = (f[s0], f[s0 + 1], f[s0 + 2]);
            let r = pose.point(p);
            // δ = y_s(x, z) − y below the frozen surface plane
            let depth = c::<S>(a) + r.x * c::<S>(gx) + r.z * c::<S>(gz) - r.y;
            if re(depth) <= 0.0 {
                continue;
            }
            let v = pose.velocity(&r);
            let rate = v.x * c::<S>(gx) + v.z * c::<S>(gz) - v.y;
            // the penalty's depth: below the floor of the cut with the earth-moving equation
            // (the soil above it is being cut: its resistance is the equation's), else below
            // the surface
            let floor = f[slot::FLOOR + n];
            let pen = depth - c::<S>(floor);
            // 003 Pub. IV eq. 17 (signed rate), vertical: the heights' axis
            let fn_ = if re(pen) > 0.0 {
                normal_force(k, cd, self.damping_ramp_m, pen, rate)
            } else {
                S::zero()
            };
            let dir = resistance_direction(&v, self.smoothing_speed_m_s);
            // (magnitude, force on the bucket, the cutting work −F·ṙ ≥ 0)
            let (fc, f_cut, cut_w) = match &cut {
                None => {
                    let fc = cutting_resistance(self.cutting_factor, rho, g, self.width_m, depth);
                    (fc, dir * fc, -re(dir.dot(&v)) * re(fc))
                }
                Some((cut, rake, e)) => {
                    // Reece/McKyes (H, V) in the travel frame: the draft against ṙ, the lift
                    // along e × ṙ (perpendicular to ṙ: it does no work), both regularized by
                    // √(|ṙ|² + v_ε²) as the fixed law
                    let (h, lift) = earth_moving(cut, gamma, self.width_m, *rake, depth);
                    let f = dir * h + e.cross(&dir) * lift;
                    ((h * h + lift * lift).sqrt(), f, -re(f.dot(&v)))
                }
            };
            // F_n along −∇δ = (−g_x, 1, −g_z), so its power on the bucket is −F_n δ̇ and the
            // spring K δ is conservative on a sloping surface too
            let mut fk = f_cut;
            fk.x -= fn_ * c::<S>(gx);
            fk.y += fn_;
            fk.z -= fn_ * c::<S>(gz);
            total += fk;
            torque += (r - pc).cross(&fk);
            dig += fc;
            let (dr, ddr) = (re(pen).max(0.0), re(rate));
            power.stored_j += 0.5 * k * dr * dr;
            // the damper's share of F_n δ̇, and the cutting work −F_c·ṙ ≥ 0
            power.dissipated_w += (re(fn_) - k * dr) * ddr + cut_w;
            if re(depth) > re(out.at.s) {
                out.at.s = depth;
                out.at.sd = rate;
            }
        }
        // the payload at c: m_p (g − a_c), a_c by the trapezoidal rule
        let m = f[slot::MASS];
        if m > 0.0 {
            let vc = pose.velocity(&pc);
            let ac = self.payload_acceleration(&vc, f);
            total += (v3::<S>(&gravity) - ac) * c::<S>(m);
            let (vr, pr) = (vc.map(re), pc.map(re));
            power.stored_j += 0.5 * m * vr.dot(&vr) - m * gravity.dot(&pr);
        }
        out.point = pc;
        out.torque = torque;
        out.effort.force = dig;
        out.effort.vector = total;
        out.power = power;
        out
    }
    fn power(&self, _at: &PortState<f64>, _e: &PortEffort<f64>) -> Power {
        // the account comes with the body effort (`BodyEffort::power`)
        Power::default()
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
        out[0] = at.p[0];
        out[1] = at.p[1];
        out[2] = at.p[2];
        out[3] = e.force;
        out[4] = at.s;
        5
    }
}

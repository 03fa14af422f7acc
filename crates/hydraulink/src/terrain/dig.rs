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
//! **What is frozen.** The terrain is world state updated at step boundaries (stage `world`,
//! [`crate::terrain::world`]): inside a step's Newton iterations the element reads an
//! [`crate::element::Frozen`] record written at the boundary: per force point the surface as a
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

use crate::contact::obb_contact::normal_force;
use crate::element::{
    BodyEffort, BodyPose, Context, Element, EnergyDomain, Frozen, MechPort, PortEffort, PortState,
    Ports, Power, Variable, MAX_NODES, MAX_OUTPUTS,
};
use crate::error::ModelError;
use crate::model::ids::Frame;
use crate::real::{c, re, v3, Real};

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
    /// McKyes' N_γ, the cutting resistance factor of a cohesionless soil [-], ≥ 0.
    pub cutting_factor: f64,
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
    /// N_γ [-].
    pub cutting_factor: f64,
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
        Ok(BucketDig {
            name: self.name.clone(),
            frame,
            points,
            payload: c0.point_ref,
            opening: o / o.norm(),
            width_m: cx.positive("width_m", self.width_m)?,
            cutting_factor: cx.non_negative("cutting_factor", self.cutting_factor)?,
            smoothing_speed_m_s: cx.positive("smoothing_speed_m_s", self.smoothing_speed_m_s)?,
            damping_ramp_m: cx.non_negative("damping_ramp_m", self.damping_ramp_m)?,
            capacity_m3: cx.positive("capacity_m3", self.capacity_m3)?,
            dump_angle_rad: dump.to_radians(),
            dump_rate_m3_s: cx.positive("dump_rate_m3_s", self.dump_rate_m3_s)?,
            step_s: cx.step_s,
        })
    }
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
            // 003 Pub. IV eq. 17 (signed rate), vertical: the heights' axis
            let fn_ = normal_force(k, cd, self.damping_ramp_m, depth, rate);
            let fc = cutting_resistance(self.cutting_factor, rho, g, self.width_m, depth);
            let dir = resistance_direction(&v, self.smoothing_speed_m_s);
            // F_n along −∇δ = (−g_x, 1, −g_z), so its power on the bucket is −F_n δ̇ and the
            // spring K δ is conservative on a sloping surface too
            let mut fk = dir * fc;
            fk.x -= fn_ * c::<S>(gx);
            fk.y += fn_;
            fk.z -= fn_ * c::<S>(gz);
            total += fk;
            torque += (r - pc).cross(&fk);
            dig += fc;
            let (dr, ddr) = (re(depth), re(rate));
            power.stored_j += 0.5 * k * dr * dr;
            // the damper's share of F_n δ̇, and the cutting work −F_c·ṙ ≥ 0
            power.dissipated_w += (re(fn_) - k * dr) * ddr - re(dir.dot(&v)) * re(fc);
            if dr > re(out.at.s) {
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

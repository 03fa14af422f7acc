//! Penalty contact of a body's box against a static obstacle (003 Pub. IV §II-C, eqs. 14–19):
//! the box is an OBB fixed in the body, the obstacle a plane (the ground), a box (a hopper edge)
//! or a pole, collided by the separating-axis test of [`crate::contact::obb`] at every
//! evaluation, and pushed apart by a penalty force at a single contact point.
//!
//! ```text
//!           body box B           n: unit normal, from the obstacle to the body
//!          ┌───────┐             d: penetration depth [m] (> 0 in contact)
//!          │   ●───┼──▶ ṙ        ḋ = −n·ṙ(P): signed penetration rate [m/s] (> 0 closing)
//!   ───────┼───P───┼───────      F_n = max(0, K d + C ḋ)                       [N]
//!   obstacle A   ↑ F_n n         force on the body F_n n at P (003 Pub. IV eq. 17)
//! ```
//! Sign convention: d > 0 and ḋ > 0 mean deeper and deepening; the force on the body is along
//! +n. 003 Pub. IV eq. 17 prints F_n = −(K|d| + C|ḋ|) n, whose damping always repels; we use the
//! signed rate, so C brakes the approach and the rebound alike, and clamp the force at 0 so the
//! damper never pulls the body back in (a sticky contact). Energy: the spring's ½ K d² is
//! stored; the rest of the work F_n ḋ the body does on the contact is dissipated,
//! D = F_n ḋ − K d ḋ: C ḋ² while the force is positive, and −K d ḋ ≥ 0 while it is clamped (the
//! spring energy released on a fast rebound is lost, not returned). D ≥ 0 always.
//!
//! Against the ground plane every corner of the box below the plane is a contact point of its
//! own, with its own d_i, ḋ_i and F_n,i, summed into one force at the box centre and a couple: a
//! box lying or rocking on a face or an edge is then carried by the corners that touch, and its
//! force changes continuously as a corner lifts off, instead of jumping between tied corners
//! (which made the Newton iteration cycle; the separating-axis point would put the whole load on
//! one corner). Against a box or a pole the points are those of [`manifold`]: the incident face
//! clipped by the reference face of the separating axis, each point with its own depth along
//! the common normal, rate and ramped damping (an edge–edge contact keeps its single point). The
//! energy account sums the points: stored Σ ½ K d_i², dissipated Σ (F_n,i − K d_i) ḋ_i.
//!
//! The obstacles are static (global frame). One element is one box against a list of obstacles
//! (`obstacle` or `obstacles`; a `hopper` is five boxes), their forces added; it counts hits
//! ([`crate::contact::hits`]). `docs/theory/12_contact.md` §12.4–12.8.

use nalgebra::{Matrix3, Rotation3, Vector3};
use serde::{Deserialize, Serialize};

use crate::contact::obb::{box_box, manifold, Obb};
use crate::elements::element::{
    BodyEffort, BodyPose, Context, Element, ElementSpec, EnergyDomain, MechPort, PortEffort,
    PortState, Ports, Power, Variable, MAX_NODES, MAX_OUTPUTS,
};
use crate::elements::ids::Frame;
use crate::error::ModelError;
use crate::solver::real::{c, m3, re, v3, Real};

/// A static obstacle, in global coordinates.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ObstacleSpec {
    /// The ground: the half-space below the plane through `point_m` with outward `normal`.
    Plane {
        /// A point of the plane [m].
        point_m: [f64; 3],
        /// Outward normal (need not be unit; not zero) [-].
        normal: [f64; 3],
    },
    /// A box (a hopper wall or edge).
    Box {
        /// Centre [m].
        center_m: [f64; 3],
        /// Half extents along its axes [m], each > 0.
        half_extents_m: [f64; 3],
        /// Rotation of its axes from the global axes: angles about x, then y, then z (fixed
        /// axes) [deg].
        #[serde(default)]
        rotation_deg: [f64; 3],
    },
    /// A hopper: an open box of four walls on a floor, its base centred on `center_m`, its
    /// walls rising along its local y axis (the global y axis unless rotated); five boxes.
    Hopper {
        /// Centre of its base (the underside of the floor) [m].
        center_m: [f64; 3],
        /// Inside length along its local x and width along its local z [m], each > 0.
        inner_m: [f64; 2],
        /// Height of the walls above the base [m], > 0.
        height_m: f64,
        /// Thickness of the walls and the floor [m], > 0 and below `height_m`.
        wall_m: f64,
        /// Rotation of its axes from the global axes: angles about x, then y, then z (fixed
        /// axes) [deg].
        #[serde(default)]
        rotation_deg: [f64; 3],
    },
    /// A pole: a box of square section 2r × 2r along `axis` from `base_m` (the box that
    /// circumscribes a cylinder of radius r).
    Pole {
        /// Centre of its foot [m].
        base_m: [f64; 3],
        /// Direction from the foot up (need not be unit; not zero) [-].
        axis: [f64; 3],
        /// Radius r (half the side of the section) [m], > 0.
        radius_m: f64,
        /// Height [m], > 0.
        height_m: f64,
    },
}

/// `[[elements]] type = "obb_contact"`: a box fixed in a body against a static obstacle.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ObbContactSpec {
    /// Name.
    pub name: String,
    /// The body that carries the box.
    pub body: String,
    /// A marker of that body: the centre of the box is this marker moved by `offset_m`.
    pub marker: String,
    /// The centre of the box from the marker, in the reference configuration, global axes (as
    /// the markers are given) [m] (default 0: the box is centred on the marker).
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub offset_m: [f64; 3],
    /// Half extents of the box along its axes [m], each > 0.
    pub half_extents_m: [f64; 3],
    /// Rotation of the box axes from the global axes in the reference configuration (every
    /// joint coordinate zero, where the body's markers are given; also for a file in the
    /// assembled pose): angles about x, then y, then z (fixed axes) [deg].
    #[serde(default)]
    pub rotation_deg: [f64; 3],
    /// Contact stiffness K [N/m], > 0.
    pub stiffness_n_m: f64,
    /// Contact damping C [N s/m], ≥ 0.
    pub damping_n_s_m: f64,
    /// Depth δ over which the damping grows in linearly from 0 to C, so the force does not
    /// jump at touch-down [m], ≥ 0 (default 1e-4 m; 0: the damping acts at once).
    #[serde(default = "default_ramp")]
    pub damping_ramp_m: f64,
    /// The obstacle (give this or `obstacles`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obstacle: Option<ObstacleSpec>,
    /// Several obstacles against the same box (give this or `obstacle`): the poles and the
    /// hopper of a worksite against the bucket. The forces add; the hits count the onsets of
    /// the total force.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub obstacles: Vec<ObstacleSpec>,
    /// Separation that must pass before a new contact onset counts as another hit [s], ≥ 0
    /// (default 0.1 s; output `<name>.hits`).
    #[serde(default = "default_hit_gap")]
    pub hit_gap_s: f64,
}

fn is_zero3(v: &[f64; 3]) -> bool {
    *v == [0.0; 3]
}

fn default_ramp() -> f64 {
    1e-4
}

fn default_hit_gap() -> f64 {
    0.1
}

/// A compiled obstacle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Obstacle {
    /// Half-space below the plane through `point` [m] with unit outward `normal`.
    Plane {
        /// A point of the plane [m].
        point: Vector3<f64>,
        /// Unit outward normal [-].
        normal: Vector3<f64>,
    },
    /// A box (a pole compiles to one).
    Box(Obb<f64>),
}

/// A compiled box–obstacle contact.
#[derive(Debug, Clone, PartialEq)]
pub struct ObbContact {
    /// Name.
    pub name: String,
    /// The body's frame.
    pub frame: Frame,
    /// Centre of the box in the body frame (reference configuration) [m].
    pub center: Vector3<f64>,
    /// Box axes in the body frame (reference configuration; columns) [-].
    pub axes: Matrix3<f64>,
    /// Half extents [m].
    pub half: Vector3<f64>,
    /// Stiffness K [N/m].
    pub stiffness: f64,
    /// Damping C [N s/m].
    pub damping: f64,
    /// Depth δ over which the damping grows in linearly from 0 to C [m] (0: at once).
    pub damping_ramp_m: f64,
    /// The obstacles (one or more; the forces add).
    pub obstacles: Vec<Obstacle>,
    /// Separation before a new onset counts as a hit [s] ([`crate::contact::hits`]).
    pub hit_gap_s: f64,
}

fn vector(cx: &Context, field: &str, v: [f64; 3]) -> Result<Vector3<f64>, ModelError> {
    for (i, x) in v.iter().enumerate() {
        cx.finite(&format!("{field}[{i}]"), *x)?;
    }
    Ok(Vector3::new(v[0], v[1], v[2]))
}

fn half_extents(cx: &Context, field: &str, v: [f64; 3]) -> Result<Vector3<f64>, ModelError> {
    for (i, x) in v.iter().enumerate() {
        cx.positive(&format!("{field}[{i}]"), *x)?;
    }
    Ok(Vector3::new(v[0], v[1], v[2]))
}

fn unit(cx: &Context, field: &str, v: [f64; 3]) -> Result<Vector3<f64>, ModelError> {
    let n = vector(cx, field, v)?;
    let len = n.norm();
    if len == 0.0 || !len.is_finite() {
        return Err(cx.error(field, "must be a non-zero direction"));
    }
    Ok(n / len)
}

/// Rotation by angles about x, then y, then z (fixed axes) [deg].
fn rotation(cx: &Context, field: &str, deg: [f64; 3]) -> Result<Matrix3<f64>, ModelError> {
    let a = vector(cx, field, deg)?.map(f64::to_radians);
    Ok(*Rotation3::from_euler_angles(a.x, a.y, a.z).matrix())
}

impl ObstacleSpec {
    /// Checks the fields (named `<at>.<field>`, `at` the obstacle's path in the element) and
    /// appends the compiled obstacle (a hopper: five boxes) to `out`.
    fn compile(&self, cx: &Context, at: &str, out: &mut Vec<Obstacle>) -> Result<(), ModelError> {
        let f = |field: &str| format!("{at}.{field}");
        out.push(match self {
            ObstacleSpec::Plane { point_m, normal } => Obstacle::Plane {
                point: vector(cx, &f("point_m"), *point_m)?,
                normal: unit(cx, &f("normal"), *normal)?,
            },
            ObstacleSpec::Box {
                center_m,
                half_extents_m,
                rotation_deg,
            } => Obstacle::Box(Obb {
                center: vector(cx, &f("center_m"), *center_m)?,
                axes: rotation(cx, &f("rotation_deg"), *rotation_deg)?,
                half: half_extents(cx, &f("half_extents_m"), *half_extents_m)?,
            }),
            ObstacleSpec::Hopper {
                center_m,
                inner_m,
                height_m,
                wall_m,
                rotation_deg,
            } => {
                let base = vector(cx, &f("center_m"), *center_m)?;
                let rot = rotation(cx, &f("rotation_deg"), *rotation_deg)?;
                let lx = cx.positive(&f("inner_m[0]"), inner_m[0])? / 2.0;
                let lz = cx.positive(&f("inner_m[1]"), inner_m[1])? / 2.0;
                let h = cx.positive(&f("height_m"), *height_m)?;
                let w = cx.positive(&f("wall_m"), *wall_m)?;
                if w >= h {
                    return Err(cx.error(&f("wall_m"), "must be less than height_m"));
                }
                // in its own frame (y up from the base): the floor, the walls at ±x (full
                // depth, covering the corners) and at ±z
                let (hw, hh) = (w / 2.0, h / 2.0);
                for (c, half) in [
                    ([0.0, hw, 0.0], [lx + w, hw, lz + w]),
                    ([lx + hw, hh, 0.0], [hw, hh, lz + w]),
                    ([-lx - hw, hh, 0.0], [hw, hh, lz + w]),
                    ([0.0, hh, lz + hw], [lx, hh, hw]),
                    ([0.0, hh, -lz - hw], [lx, hh, hw]),
                ] {
                    out.push(Obstacle::Box(Obb {
                        center: base + rot * Vector3::from(c),
                        axes: rot,
                        half: Vector3::from(half),
                    }));
                }
                return Ok(());
            }
            ObstacleSpec::Pole {
                base_m,
                axis,
                radius_m,
                height_m,
            } => {
                let base = vector(cx, &f("base_m"), *base_m)?;
                let w = unit(cx, &f("axis"), *axis)?;
                let r = cx.positive(&f("radius_m"), *radius_m)?;
                let h = cx.positive(&f("height_m"), *height_m)?;
                // two unit directions across the pole
                let seed = if w.x.abs() < 0.9 {
                    Vector3::x()
                } else {
                    Vector3::y()
                };
                let u = w.cross(&seed).normalize();
                let v = w.cross(&u);
                Obstacle::Box(Obb {
                    center: base + w * (0.5 * h),
                    axes: Matrix3::from_columns(&[u, v, w]),
                    half: Vector3::new(r, r, 0.5 * h),
                })
            }
        });
        Ok(())
    }
}

impl ElementSpec for ObbContactSpec {
    type Law = ObbContact;
    const NOUN: &'static str = "contact";
    fn name(&self) -> &str {
        &self.name
    }
    fn compile(&self, cx: &Context) -> Result<ObbContact, ModelError> {
        ObbContactSpec::compile(self, cx)
    }
}

impl ObbContactSpec {
    /// Checks the fields and resolves the body.
    pub fn compile(&self, cx: &Context) -> Result<ObbContact, ModelError> {
        let at = cx.marker("marker", &self.body, &self.marker)?;
        let frame = at.frame;
        if frame == Frame::Ground {
            return Err(cx.error(
                "body",
                "must be a moving body (the obstacles are fixed to the ground)",
            ));
        }
        let mut obstacles = Vec::new();
        match (&self.obstacle, self.obstacles.is_empty()) {
            (Some(o), true) => o.compile(cx, "obstacle", &mut obstacles)?,
            (None, false) => {
                for (i, o) in self.obstacles.iter().enumerate() {
                    o.compile(cx, &format!("obstacles[{i}]"), &mut obstacles)?;
                }
            }
            (Some(_), false) => {
                return Err(cx.error("obstacles", "give either obstacle or obstacles, not both"))
            }
            (None, true) => {
                return Err(cx.error(
                    "obstacle",
                    "is missing: give the obstacle (or a list in obstacles)",
                ))
            }
        }
        Ok(ObbContact {
            name: self.name.clone(),
            frame,
            center: at.point_ref + vector(cx, "offset_m", self.offset_m)?,
            axes: rotation(cx, "rotation_deg", self.rotation_deg)?,
            half: half_extents(cx, "half_extents_m", self.half_extents_m)?,
            stiffness: cx.positive("stiffness_n_m", self.stiffness_n_m)?,
            damping: cx.non_negative("damping_n_s_m", self.damping_n_s_m)?,
            damping_ramp_m: cx.non_negative("damping_ramp_m", self.damping_ramp_m)?,
            obstacles,
            hit_gap_s: cx.non_negative("hit_gap_s", self.hit_gap_s)?,
        })
    }
}

/// The penalty law: F_n = max(0, K d + C ḋ) for d > 0, else 0 [N] (003 Pub. IV eq. 17 with a
/// signed rate; module doc). The branches are decided on the real parts.
#[inline]
pub fn normal_force<S: Real>(stiffness: f64, damping: f64, ramp_m: f64, d: S, dd: S) -> S {
    if re(d) <= 0.0 {
        return S::zero();
    }
    // the damping grows in over the first δ of depth, so the force is continuous at touch-down
    let c_d = if re(d) < ramp_m {
        d * c::<S>(damping / ramp_m)
    } else {
        c::<S>(damping)
    };
    let f = d * c::<S>(stiffness) + dd * c_d;
    if re(f) <= 0.0 {
        S::zero()
    } else {
        f
    }
}

impl ObbContact {
    /// One contact point x of the box `b` at depth d > 0 along the normal n (from the obstacle
    /// to the body): its rate ḋ = −n·ṙ(x) (003 Pub. IV eq. 19, signed, the obstacle at rest),
    /// the normal force F_n of [`normal_force`], whose couple about the box centre and energy
    /// account it adds to `out` (the deepest point sets `out.at`); returns F_n [N].
    fn point_force<S: Real>(
        &self,
        pose: &BodyPose<S>,
        b: &Obb<S>,
        n: &Vector3<S>,
        x: &Vector3<S>,
        d: S,
        out: &mut BodyEffort<S>,
    ) -> S {
        let dd = -n.dot(&pose.velocity(x));
        let f = normal_force(self.stiffness, self.damping, self.damping_ramp_m, d, dd);
        out.torque += (x - b.center).cross(&(n * f));
        let (dr, ddr, fr) = (re(d), re(dd), re(f));
        out.power.stored_j += 0.5 * self.stiffness * dr * dr;
        // the work rate on the contact F_n ḋ less the spring's K d ḋ (module doc)
        out.power.dissipated_w += (fr - self.stiffness * dr) * ddr;
        if dr > re(out.at.s) {
            out.at.s = d;
            out.at.sd = dd;
        }
        f
    }

    /// The body's box at the body pose `pose`.
    pub fn body_box<S: Real>(&self, pose: &BodyPose<S>) -> Obb<S> {
        Obb {
            center: pose.point(&self.center),
            axes: pose.rot * m3::<S>(&self.axes),
            half: self.half,
        }
    }
}

impl Element for ObbContact {
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
        for (q, unit) in [("depth", "m"), ("rate", "m/s"), ("force", "N")] {
            out.push(Variable {
                name: format!("{}.{q}", self.name),
                unit,
            });
        }
    }
    /// The scalar law on (s = d, ṡ = ḋ): `force` = F_n.
    fn evaluate<S: Real>(&self, at: &PortState<S>) -> PortEffort<S> {
        let mut e = PortEffort::zero();
        e.force = normal_force(
            self.stiffness,
            self.damping,
            self.damping_ramp_m,
            at.s,
            at.sd,
        );
        e
    }
    fn evaluate_body<S: Real>(&self, pose: &BodyPose<S>, u: f64) -> BodyEffort<S> {
        let b = self.body_box(pose);
        let mut out = BodyEffort::zero();
        out.at.u = u;
        out.point = b.center;
        let mut total = S::zero();
        for o in &self.obstacles {
            // the normal force summed over this obstacle's points (they share the normal)
            let mut sum = S::zero();
            let n = match o {
                Obstacle::Plane { point, normal } => {
                    // every corner below the plane is a contact point of its own (module doc)
                    let n = v3::<S>(normal);
                    let p0 = v3::<S>(point);
                    for k in 0..8 {
                        let v = b.vertex(k);
                        let d = n.dot(&(p0 - v));
                        if re(d) > 0.0 {
                            sum += self.point_force(pose, &b, &n, &v, d, &mut out);
                        }
                    }
                    n
                }
                Obstacle::Box(a) => {
                    let a = Obb {
                        center: v3::<S>(&a.center),
                        axes: m3::<S>(&a.axes),
                        half: a.half,
                    };
                    let Some(k) = box_box(&a, &b) else {
                        continue;
                    };
                    // several points: the incident face clipped by the reference face, each
                    // with its own depth (module doc); the single point of the separating-axis
                    // test where the clip leaves none
                    let m = manifold(&a, &b, &k);
                    if m.n == 0 {
                        sum += self.point_force(pose, &b, &k.normal, &k.point, k.depth, &mut out);
                    }
                    for j in 0..m.n {
                        sum += self.point_force(
                            pose,
                            &b,
                            &k.normal,
                            &m.points[j],
                            m.depths[j],
                            &mut out,
                        );
                    }
                    k.normal
                }
            };
            out.effort.vector += n * sum;
            total += sum;
        }
        out.effort.force = total;
        out
    }
    fn power(&self, at: &PortState<f64>, e: &PortEffort<f64>) -> Power {
        let (d, dd) = (at.s.max(0.0), at.sd);
        let spring = self.stiffness * d;
        Power {
            stored_j: 0.5 * spring * d,
            // the work rate on the contact F_n ḋ less the spring's K d ḋ (module doc)
            dissipated_w: (e.force - spring) * dd,
            supplied_w: 0.0,
        }
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
        out[0] = at.s;
        out[1] = at.sd;
        out[2] = e.force;
        3
    }
}

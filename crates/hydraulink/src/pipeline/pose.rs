//! Positions given in the assembled pose (`pose = "assembled"`): the spec is mapped back to the
//! reference configuration before it is compiled, so every formulation sees the same compiled
//! model as if the file had been written in the reference configuration.
//!
//! # The mapping (docs/theory/01_semirecursive.md, "Geometry given in the assembled pose")
//! Each body b has a placement at the initial coordinates z⁰, x_world = A_b x_ref + x_b. In the
//! reference configuration (every z = 0) every placement is the identity. The tree is walked from
//! the ground; for a joint with parent placement (A_P, x_P), given in the assembled pose by its
//! point c and unit axes u (global):
//!
//! ```text
//!   c_ref = A_Pᵀ (c − x_P)          u_ref = A_Pᵀ u          (fixed in the parent)
//!   revolute axis k:  A_k = A_{k−1} R(u_ref, z⁰_k),  x_k = x_{k−1} + A_{k−1} c_ref − A_k c_ref
//!   prismatic axis k: A_k = A_{k−1},                 x_k = x_{k−1} + A_{k−1} u_ref z⁰_k
//! ```
//!
//! (the pose composition of `mechanics::kinematics`, 000 §2.1), starting from (A_P, x_P); the
//! child's placement is that of the joint's last axis. A universal joint's second axis stands in
//! the assembled pose turned by the first angle, so u2_ref = R(u_ref, z⁰_1)ᵀ A_Pᵀ u2. Then, with
//! the placement (A_b, x_b) of the body that carries each quantity:
//!
//! ```text
//!   points (com, markers):                    r_ref = A_bᵀ (r − x_b)
//!   body-fixed directions (cut-joint axis and normal of body 2, nonholonomic axes,
//!   body-axes load vectors):                   d_ref = A_bᵀ d
//!   inertia about the centre of mass:          I_ref = A_bᵀ I A_b
//! ```
//!
//! Ground markers, gravity and the ground normal of a rolling disc are global in both poses.
//!
//! # Closed loops
//! Each side of a cut joint is mapped with its own body's placement, so the loop residual at z⁰
//! after the mapping is the one of the positions as typed. [`check_loops`] (called by the
//! validation) rejects a residual above [`LOOP_TOLERANCE_M`], naming the cut joint; below it,
//! the assembly at t = 0 closes the loop as it does for any q0.

use std::collections::BTreeMap;

use crate::elements::component::ComponentSpec;
use crate::elements::external_load::LoadAxes;
use crate::mechanics::kinematics::rotation;
use crate::model::hud::SensorSpec;
use crate::model::spec::{CutJointKind, JointKind, ModelSpec, Pose, VisualSpec};
use crate::model::{AxisKind, M3, V3};
use crate::ModelError;

/// Largest loop-closure residual [m] of a cut joint in the assembled pose: 10 µm, well above the
/// rounding of a CAD export (a micrometre, or 8 significant digits of a 10 m machine) and well
/// below a mistyped point.
pub const LOOP_TOLERANCE_M: f64 = 1e-5;

/// A body's placement at the initial coordinates: x_world = `rot` x_ref + `pos`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// A_b, reference axes → global axes.
    pub rot: M3,
    /// x_b [m]: where the reference origin is in the assembled pose.
    pub pos: V3,
}

impl Placement {
    /// The reference configuration (and the ground).
    pub fn identity() -> Self {
        Placement {
            rot: M3::identity(),
            pos: V3::zeros(),
        }
    }

    /// A global point of the assembled pose → the reference configuration [m].
    pub fn point_to_reference(&self, r: &[f64; 3]) -> [f64; 3] {
        (self.rot.transpose() * (V3::from(*r) - self.pos)).into()
    }

    /// A global direction of the assembled pose → the reference axes.
    pub fn dir_to_reference(&self, d: &[f64; 3]) -> [f64; 3] {
        (self.rot.transpose() * V3::from(*d)).into()
    }

    /// An inertia tensor `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]` in global axes → reference axes
    /// [kg m²]: I_ref = A_bᵀ I A_b.
    pub fn inertia_to_reference(&self, i: &[f64; 6]) -> [f64; 6] {
        let [ixx, iyy, izz, ixy, ixz, iyz] = *i;
        let world = M3::new(ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz);
        let r = self.rot.transpose() * world * self.rot;
        // symmetric by construction up to rounding: take the mean of the two products
        [
            r[(0, 0)],
            r[(1, 1)],
            r[(2, 2)],
            0.5 * (r[(0, 1)] + r[(1, 0)]),
            0.5 * (r[(0, 2)] + r[(2, 0)]),
            0.5 * (r[(1, 2)] + r[(2, 1)]),
        ]
    }

    /// This placement followed by one elementary axis (point and direction in the reference
    /// configuration) at coordinate `z`: the composition of `mechanics::kinematics::positions`.
    fn then(&self, kind: AxisKind, point: &V3, dir: &V3, z: f64) -> Placement {
        match kind {
            AxisKind::Revolute => {
                // c = x_p + A_p c̄ (global axis point), A_k = A_p R, x_k = c − A_k c̄
                let rot = self.rot * rotation(dir, z);
                let c = self.pos + self.rot * point;
                Placement {
                    rot,
                    pos: c - rot * point,
                }
            }
            AxisKind::Prismatic => Placement {
                rot: self.rot,
                pos: self.pos + self.rot * dir * z,
            },
        }
    }
}

/// The elementary axes of a tree joint, (kind, direction in the reference configuration) per
/// coordinate, all through the joint's location: `u` its axis, `u2` the second axis of a
/// universal joint (unused otherwise).
pub fn elementary_axes(kind: JointKind, u: V3, u2: V3) -> Vec<(AxisKind, V3)> {
    match kind {
        JointKind::Revolute => vec![(AxisKind::Revolute, u)],
        JointKind::Prismatic => vec![(AxisKind::Prismatic, u)],
        JointKind::Cylindrical => vec![(AxisKind::Revolute, u), (AxisKind::Prismatic, u)],
        JointKind::Universal => vec![(AxisKind::Revolute, u), (AxisKind::Revolute, u2)],
        JointKind::Spherical => vec![
            (AxisKind::Revolute, V3::x()),
            (AxisKind::Revolute, V3::y()),
            (AxisKind::Revolute, V3::z()),
        ],
        JointKind::Fixed => vec![],
        JointKind::Free => vec![
            (AxisKind::Prismatic, V3::x()),
            (AxisKind::Prismatic, V3::y()),
            (AxisKind::Prismatic, V3::z()),
            (AxisKind::Revolute, V3::x()),
            (AxisKind::Revolute, V3::y()),
            (AxisKind::Revolute, V3::z()),
        ],
    }
}

/// A finite non-zero vector scaled to unit length, or `None` (the compile reports it by name).
fn unit(a: &[f64; 3]) -> Option<V3> {
    let x = V3::from(*a);
    let s = x.amax();
    if !(s.is_finite() && s > 0.0) {
        return None;
    }
    let y = x / s;
    Some(y / y.norm())
}

/// The placements of every body at z⁰ (in `spec.bodies` order), from a spec in the assembled
/// pose, and the joints' location, axis and second axis in the reference configuration (in
/// `spec.joints` order). A body the tree does not reach keeps the identity, and a joint whose
/// axis is not a finite non-zero vector keeps its fields: the compile reports both by name.
pub fn placements(spec: &ModelSpec) -> (Vec<Placement>, Vec<JointReference>) {
    let index: BTreeMap<&str, usize> = spec
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| (b.name.as_str(), i))
        .collect();
    let mut placed: Vec<Option<Placement>> = vec![None; spec.bodies.len()];
    let mut joints: Vec<JointReference> = spec
        .joints
        .iter()
        .map(|j| JointReference {
            location: j.location,
            axis: j.axis,
            axis2: j.axis2,
        })
        .collect();
    let mut done = vec![false; spec.joints.len()];
    loop {
        let mut progressed = false;
        for (ji, j) in spec.joints.iter().enumerate() {
            if done[ji] {
                continue;
            }
            let parent = if j.parent == "ground" {
                Placement::identity()
            } else {
                match index.get(j.parent.as_str()).and_then(|&p| placed[p]) {
                    Some(p) => p,
                    None => continue, // parent not placed yet, or unknown
                }
            };
            done[ji] = true;
            progressed = true;
            let Some(&child) = index.get(j.child.as_str()) else {
                continue;
            };
            let Some(u) = unit(&j.axis) else {
                continue;
            };
            let location = V3::from(parent.point_to_reference(&j.location));
            let u_ref = parent.rot.transpose() * u;
            let q0 = j.q0_si();
            let z = |a: usize| q0.get(a).copied().unwrap_or(0.0);
            // the second axis stands turned by the first angle in the assembled pose
            let u2_ref = j
                .axis2
                .as_ref()
                .and_then(unit)
                .map(|u2| rotation(&u_ref, z(0)).transpose() * (parent.rot.transpose() * u2));
            let mut placement = parent;
            for (a, (kind, dir)) in elementary_axes(j.kind, u_ref, u2_ref.unwrap_or(V3::zeros()))
                .into_iter()
                .enumerate()
            {
                placement = placement.then(kind, &location, &dir, z(a));
            }
            placed[child] = Some(placement);
            joints[ji] = JointReference {
                location: location.into(),
                axis: u_ref.into(),
                axis2: match (j.axis2, u2_ref) {
                    (Some(_), Some(u2)) => Some(u2.into()),
                    (given, _) => given,
                },
            };
        }
        if !progressed {
            break;
        }
    }
    (
        placed
            .into_iter()
            .map(|p| p.unwrap_or_else(Placement::identity))
            .collect(),
        joints,
    )
}

/// A joint's geometry in the reference configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointReference {
    /// Joint point [m].
    pub location: [f64; 3],
    /// First axis (unit).
    pub axis: [f64; 3],
    /// Second axis (unit), universal joints.
    pub axis2: Option<[f64; 3]>,
}

/// A spec in the assembled pose mapped to the reference configuration (`pose = "reference"`);
/// a spec already in the reference configuration is returned unchanged. Needs a validated spec
/// for meaningful results, but never panics.
pub fn to_reference(spec: &ModelSpec) -> ModelSpec {
    let mut out = spec.clone();
    if spec.pose == Pose::Reference {
        return out;
    }
    out.pose = Pose::Reference;
    let (placement, joints) = placements(spec);
    let index: BTreeMap<&str, usize> = spec
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| (b.name.as_str(), i))
        .collect();
    // the ground (and an unknown name, which the compile reports) keeps the identity
    let of = |body: &str| {
        index
            .get(body)
            .map_or_else(Placement::identity, |&i| placement[i])
    };
    for (b, p) in out.bodies.iter_mut().zip(placement.iter()) {
        b.com = p.point_to_reference(&b.com);
        b.inertia = p.inertia_to_reference(&b.inertia);
        for m in b.markers.values_mut() {
            *m = p.point_to_reference(m);
        }
        for v in &mut b.visual {
            match v {
                VisualSpec::Box { from, to, side, .. } => {
                    *from = p.point_to_reference(from);
                    *to = p.point_to_reference(to);
                    *side = p.dir_to_reference(side);
                }
                VisualSpec::Cylinder { from, to, .. } | VisualSpec::Capsule { from, to, .. } => {
                    *from = p.point_to_reference(from);
                    *to = p.point_to_reference(to);
                }
                VisualSpec::Mesh {
                    origin,
                    x_axis,
                    y_axis,
                    ..
                } => {
                    *origin = p.point_to_reference(origin);
                    *x_axis = p.dir_to_reference(x_axis);
                    *y_axis = p.dir_to_reference(y_axis);
                }
            }
        }
    }
    // the HUD's virtual sensors are points and axes on bodies too
    for s in &mut out.hud.sensors {
        match s {
            SensorSpec::PointHeight { body, point, .. } => {
                *point = of(body).point_to_reference(point);
            }
            SensorSpec::AxisAngle { body, axis, .. } => *axis = of(body).dir_to_reference(axis),
        }
    }
    for (j, r) in out.joints.iter_mut().zip(joints) {
        j.location = r.location;
        j.axis = r.axis;
        j.axis2 = r.axis2;
    }
    for c in &mut out.cut_joints {
        // the axis and the normal are fixed in body 2
        let p = of(&c.body2);
        c.axis = p.dir_to_reference(&c.axis);
        c.normal = p.dir_to_reference(&c.normal);
    }
    for nh in &mut out.nonholonomic {
        let p = of(&nh.body);
        nh.direction = p.dir_to_reference(&nh.direction);
        nh.axis = p.dir_to_reference(&nh.axis);
    }
    for e in &mut out.elements {
        match e {
            ComponentSpec::PointForce(f) if f.axes == LoadAxes::Body => {
                f.force_n = of(&f.body).dir_to_reference(&f.force_n);
            }
            ComponentSpec::Torque(t) if t.axes == LoadAxes::Body => {
                t.torque_n_m = of(&t.body).dir_to_reference(&t.torque_n_m);
            }
            _ => {}
        }
    }
    out
}

/// In the assembled pose, each cut joint's two markers must satisfy its position equations as
/// typed, to within [`LOOP_TOLERANCE_M`]: the distance of the points (spherical, revolute), its
/// part off the sliding line (prismatic), in the plane (planar revolute) or across the sliding
/// line in the plane (planar prismatic). Called by the validation after the cut joints' names
/// and markers are checked; a spec in the reference configuration passes.
pub fn check_loops(spec: &ModelSpec) -> Result<(), ModelError> {
    if spec.pose == Pose::Reference {
        return Ok(());
    }
    let point = |body: &str, marker: &str| -> Option<V3> {
        let p = if body == "ground" {
            spec.ground.markers.get(marker)
        } else {
            spec.bodies
                .iter()
                .find(|b| b.name == body)
                .and_then(|b| b.markers.get(marker))
        };
        p.map(|p| V3::from(*p))
    };
    for (c, cut) in spec.cut_joints.iter().enumerate() {
        let (Some(p1), Some(p2)) = (
            point(&cut.body1, &cut.marker1),
            point(&cut.body2, &cut.marker2),
        ) else {
            continue; // reported by the marker checks
        };
        let r = p1 - p2;
        let (axis, normal) = (unit(&cut.axis), unit(&cut.normal));
        let residual = match (cut.kind, axis, normal) {
            (CutJointKind::Spherical | CutJointKind::Revolute, _, _) => r.norm(),
            (CutJointKind::Prismatic, Some(a), _) => (r - a * a.dot(&r)).norm(),
            (CutJointKind::PlanarRevolute, _, Some(n)) => (r - n * n.dot(&r)).norm(),
            (CutJointKind::PlanarPrismatic, Some(a), Some(n)) => match unit(&n.cross(&a).into()) {
                Some(m) => m.dot(&r).abs(),
                None => continue, // reported by the perpendicularity check
            },
            _ => continue, // a zero axis or normal, reported by its own check
        };
        // NaN positions are reported by the finite checks; a NaN residual is an error here too
        if residual.is_nan() || residual > LOOP_TOLERANCE_M {
            return Err(ModelError::new(
                format!("cut_joints[{c}].marker1"),
                format!("cut joint '{}'", cut.name),
                format!(
                    "in the assembled pose, marker1 ('{}' on '{}', at {:?}) and marker2 ('{}' on \
                     '{}', at {:?}) miss the joint by {residual:.3e} m (the loop residual), more \
                     than {LOOP_TOLERANCE_M:e} m: type both points from the same assembly, or give \
                     the model in the reference configuration (pose = \"reference\")",
                    cut.marker1,
                    cut.body1,
                    <[f64; 3]>::from(p1),
                    cut.marker2,
                    cut.body2,
                    <[f64; 3]>::from(p2),
                ),
            ));
        }
    }
    Ok(())
}

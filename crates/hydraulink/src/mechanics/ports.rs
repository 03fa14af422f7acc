//! Mechanical ports of the elements (`crate::elements::element`) in relative coordinates: from the tree
//! kinematics to the port state (s, ṡ of a line; the rate along a load), and from the efforts
//! back to the Z-form forces [F ; r × F] of the semi-recursive accumulation (000 eqs. 11–12).
//!
//! ```text
//!   line:   s = |r₂ − r₁|, n = (r₂ − r₁)/s, ṡ = n·(ṙ₂ − ṙ₁)    F n on r₂, −F n on r₁  (000 eq. 45)
//!   point:  F⃗ (rotated by R of its frame in body axes) on r
//!   torque: T⃗ (rotated likewise) on the body: [0 ; T⃗]
//!   joint:  Q′_k += Q_j after the accumulation
//!   body:   the frame's pose and (ṡ, ω) in; F⃗ (global) at the element's point r and a couple T⃗ out
//! ```
//! The natural-coordinate counterpart is `mechanics::global::element_ports`.

use nalgebra::Vector3;

use crate::elements::component::Component;
use crate::elements::element::{BodyPose, Element, MechPort, PortEffort, PortState};
use crate::mechanics::kinematics::Kinematics;
use crate::mechanics::semirecursive::Dynamics;
use crate::model::ids::FramePoint;
use crate::model::Model;
use crate::solver::real::Real;

/// A line port in relative coordinates: the two points, the unit direction, the length and its
/// rate (000 eq. 45). The one place that maps relative coordinates to (s, ṡ): cylinders,
/// kinematic guidance and the elements' line ports all use it.
#[derive(Debug, Clone, Copy)]
pub struct Line<S: Real> {
    /// Base point r₁ [m].
    pub rb: Vector3<S>,
    /// Rod point r₂ [m].
    pub rr: Vector3<S>,
    /// n = (r₂ − r₁)/s.
    pub n: Vector3<S>,
    /// s = ‖r₂ − r₁‖ [m].
    pub s: S,
}

impl<S: Real> Line<S> {
    /// The line between `base` and `rod` at the positions of `kin`.
    #[inline]
    pub fn at(kin: &Kinematics<S>, base: &FramePoint, rod: &FramePoint) -> Self {
        let (rb, rr) = (kin.point(base), kin.point(rod));
        let d = rr - rb;
        let s = d.dot(&d).sqrt();
        Line {
            rb,
            rr,
            n: d / s,
            s,
        }
    }

    /// ṡ = n·(ṙ₂ − ṙ₁) at the velocities of `kin` [m/s].
    #[inline]
    pub fn rate(&self, kin: &Kinematics<S>, base: &FramePoint, rod: &FramePoint) -> S {
        let vb = kin.point_velocity(base.frame, &self.rb);
        let vr = kin.point_velocity(rod.frame, &self.rr);
        self.n.dot(&(vr - vb))
    }

    /// Adds the line force F (positive pushes apart): F n on the rod point, −F n on the base.
    #[inline(always)]
    pub fn apply(&self, dy: &mut Dynamics<S>, base: &FramePoint, rod: &FramePoint, f: S) {
        let fv = self.n * f;
        dy.add_point_force(rod.frame, &self.rr, &fv);
        dy.add_point_force(base.frame, &self.rb, &(-fv));
    }
}

/// The pose and velocity of frame `frame` at the kinematics `kin` (a body port).
#[inline]
pub fn body_pose<S: Real>(kin: &Kinematics<S>, frame: crate::model::ids::Frame) -> BodyPose<S> {
    let (v0, omega) = kin.frame_vel(frame);
    BodyPose {
        origin: kin.frame_pos(frame),
        rot: kin.frame_rot(frame),
        v0,
        omega,
    }
}

/// Evaluates every mechanical element with a body port (line, point, torque) and adds its
/// forces to the body terms of `dy`; `at` and `effort` receive each element's port state and
/// efforts (joint-port elements are left to [`joint_forces`]). `u[i]` is element i's input;
/// `which`: the indices of the elements to visit (those with a mechanical port, in model order;
/// [`mechanical_elements`]), `ports` their ports in the same order. `frozen[i]`: the world
/// values element i reads
/// ([`crate::elements::element::Frozen`]).
#[allow(clippy::too_many_arguments)]
pub fn body_forces<S: Real>(
    elements: &[Component],
    which: &[usize],
    ports: &[crate::elements::element::Ports],
    u: &[f64],
    frozen: &[crate::elements::element::Frozen],
    kin: &Kinematics<S>,
    dy: &mut Dynamics<S>,
    at: &mut [PortState<S>],
    effort: &mut [PortEffort<S>],
) {
    for (&i, ports) in which.iter().zip(ports.iter()) {
        let e = &elements[i];
        match ports.mech {
            MechPort::None | MechPort::Joint(_) => continue,
            MechPort::Line { base, rod } => {
                let line = Line::at(kin, &base, &rod);
                let mut st = PortState::zero();
                st.u = u[i];
                st.s = line.s;
                st.sd = line.rate(kin, &base, &rod);
                let ef = e.evaluate(&st);
                line.apply(dy, &base, &rod, ef.force);
                at[i] = st;
                effort[i] = ef;
            }
            MechPort::Point { at: p, body_axes } => {
                let mut st = PortState::zero();
                st.u = u[i];
                let ef = e.evaluate(&st);
                let f = if body_axes {
                    kin.frame_rot(p.frame) * ef.vector
                } else {
                    ef.vector
                };
                let r = kin.point(&p);
                dy.add_point_force(p.frame, &r, &f);
                at[i] = st;
                effort[i] = ef;
            }
            MechPort::Torque { frame, body_axes } => {
                let mut st = PortState::zero();
                st.u = u[i];
                let ef = e.evaluate(&st);
                let t = if body_axes {
                    kin.frame_rot(frame) * ef.vector
                } else {
                    ef.vector
                };
                dy.add_torque(frame, &t);
                at[i] = st;
                effort[i] = ef;
            }
            MechPort::Body(frame) => {
                let b = e.evaluate_body_in(&body_pose(kin, frame), u[i], &frozen[i]);
                dy.add_point_force(frame, &b.point, &b.effort.vector);
                dy.add_torque(frame, &b.torque);
                at[i] = b.at;
                effort[i] = b.effort;
            }
        }
    }
}

/// Adds the generalized forces of the joint-port elements of `model` to Q′ (after the
/// accumulation). An element that has node ports too (a hydraulic motor) sees the pressures `p`
/// of its nodes [Pa], so its torque is dual in the pressure columns of the tangent; for the
/// others `p` is not read (the kinematic guidance passes none). `which`, `ports`: as for
/// [`body_forces`].
#[allow(clippy::too_many_arguments)]
pub fn joint_forces<S: Real>(
    model: &Model,
    which: &[usize],
    ports: &[crate::elements::element::Ports],
    u: &[f64],
    zd: &[S],
    z: &[S],
    p: &[S],
    force: &mut [S],
    at: &mut [PortState<S>],
    effort: &mut [PortEffort<S>],
) {
    for (&i, ports) in which.iter().zip(ports.iter()) {
        let e = &model.elements[i];
        if let MechPort::Joint(a) = ports.mech {
            let mut st = crate::elements::hydraulics::node_port_state(model, p, &ports.nodes);
            st.u = u[i];
            st.s = z[a.0];
            st.sd = zd[a.0];
            let ef = e.evaluate(&st);
            force[a.0] += ef.force;
            at[i] = st;
            effort[i] = ef;
        }
    }
}

/// Indices in `elements` of the elements with a mechanical port (line, point, torque or joint),
/// in order: the list [`body_forces`] and [`joint_forces`] visit, so that the many elements
/// without one (valves, pumps) cost nothing in the mechanical stages.
pub fn mechanical_elements(elements: &[Component]) -> Vec<usize> {
    (0..elements.len())
        .filter(|i| !matches!(elements[*i].ports().mech, MechPort::None))
        .collect()
}

/// The rate conjugate to a point or torque load at the kinematics `kin` (velocities set): the
/// velocity of the point (angular velocity of the body) along the unit global load direction
/// [m/s or rad/s], so that the supplied power is |load| times it. Zero for a zero load.
pub fn load_rate(kin: &Kinematics<f64>, e: &Component, effort: &PortEffort<f64>) -> f64 {
    match e.ports().mech {
        MechPort::Point { at, body_axes } => {
            let f = if body_axes {
                kin.frame_rot(at.frame) * effort.vector
            } else {
                effort.vector
            };
            let n = f.norm();
            if n == 0.0 {
                return 0.0;
            }
            let r = kin.point(&at);
            kin.point_velocity(at.frame, &r).dot(&f) / n
        }
        MechPort::Torque { frame, body_axes } => {
            let t = if body_axes {
                kin.frame_rot(frame) * effort.vector
            } else {
                effort.vector
            };
            let n = t.norm();
            if n == 0.0 {
                return 0.0;
            }
            kin.frame_vel(frame).1.dot(&t) / n
        }
        _ => 0.0,
    }
}

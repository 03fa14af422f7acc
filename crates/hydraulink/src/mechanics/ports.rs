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
use crate::elements::ids::FramePoint;
use crate::mechanics::kinematics::Kinematics;
use crate::mechanics::semirecursive::Dynamics;
use crate::model::Model;
use crate::solver::real::Real;

/// A line port between two points, the one mapping of point positions and velocities to the
/// port state (000 eq. 45):
///
/// ```text
///   s = ‖r₂ − r₁‖,  n = (r₂ − r₁)/s,  ṡ = n·(ṙ₂ − ṙ₁),  ∂s/∂r₂ = nᵀ = −∂s/∂r₁
///   s̈ = n·(r̈₂ − r̈₁) + (‖ṙ₂ − ṙ₁‖² − ṡ²)/s
///   force F (positive pushes apart): F n on r₂, −F n on r₁
/// ```
///
/// Written once for every coordinate set: [`Line::between`] and [`Line::rate_of`] take the two
/// points' positions and velocities, whoever computes them. Relative coordinates get them from
/// the tree kinematics ([`Line::at`], [`Line::rate`], [`Line::jacobian_row`]), natural
/// coordinates from r = C q + c (`mechanics::global::line`). Its users: the cylinders (the
/// `Evaluator`'s fast path, natural coordinates, kinematic guidance, multi-rate's s_k), and every
/// element with a line port (`body_forces`, `element_energy`, `global::element_forces`).
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
    /// The line from the base point `rb` to the rod point `rr`: s = ‖r₂ − r₁‖, n = (r₂ − r₁)/s.
    #[inline]
    pub fn between(rb: Vector3<S>, rr: Vector3<S>) -> Self {
        let d = rr - rb;
        let s = d.dot(&d).sqrt();
        Line {
            rb,
            rr,
            n: d / s,
            s,
        }
    }

    /// ṡ = n·(ṙ₂ − ṙ₁) from the base point's velocity `vb` and the rod point's `vr` [m/s].
    #[inline]
    pub fn rate_of(&self, vb: &Vector3<S>, vr: &Vector3<S>) -> S {
        self.n.dot(&(vr - vb))
    }

    /// s̈ without the accelerations' z̈ part: n·(a₂ − a₁) + (‖ṙ₂ − ṙ₁‖² − ṡ²)/s from the
    /// velocities `vb`, `vr`, the velocity-only accelerations `ab`, `ar` and the rate `sd`
    /// (the derivative of ṡ = n·(ṙ₂ − ṙ₁) with ṅ = ((ṙ₂ − ṙ₁) − n ṡ)/s).
    #[inline]
    pub fn acceleration_bias(
        &self,
        vb: &Vector3<S>,
        vr: &Vector3<S>,
        ab: &Vector3<S>,
        ar: &Vector3<S>,
        sd: S,
    ) -> S {
        let dd = vr - vb;
        self.n.dot(&(ar - ab)) + (dd.dot(&dd) - sd * sd) / self.s
    }

    /// The force F n the line applies to the rod point (−F n to the base point).
    #[inline(always)]
    pub fn force(&self, f: S) -> Vector3<S> {
        self.n * f
    }

    /// The line between `base` and `rod` at the positions of `kin`.
    #[inline]
    pub fn at(kin: &Kinematics<S>, base: &FramePoint, rod: &FramePoint) -> Self {
        Line::between(kin.point(base), kin.point(rod))
    }

    /// The velocities ṙ₁, ṙ₂ of the two points at the velocities of `kin` [m/s].
    #[inline]
    pub fn velocities(
        &self,
        kin: &Kinematics<S>,
        base: &FramePoint,
        rod: &FramePoint,
    ) -> (Vector3<S>, Vector3<S>) {
        (
            kin.point_velocity(base.frame, &self.rb),
            kin.point_velocity(rod.frame, &self.rr),
        )
    }

    /// ṡ = n·(ṙ₂ − ṙ₁) at the velocities of `kin` [m/s].
    #[inline]
    pub fn rate(&self, kin: &Kinematics<S>, base: &FramePoint, rod: &FramePoint) -> S {
        let (vb, vr) = self.velocities(kin, base, rod);
        self.rate_of(&vb, &vr)
    }

    /// Adds the line force F (positive pushes apart): F n on the rod point, −F n on the base.
    #[inline(always)]
    pub fn apply(&self, dy: &mut Dynamics<S>, base: &FramePoint, rod: &FramePoint, f: S) {
        let fv = self.force(f);
        dy.add_point_force(rod.frame, &self.rr, &fv);
        dy.add_point_force(base.frame, &self.rb, &(-fv));
    }
}

impl Line<f64> {
    /// The row ∂s/∂z = n·∂r₂/∂z − n·∂r₁/∂z at the positions of `kin` into `row` (zeroed first;
    /// the columns on the paths of the two frames).
    pub fn jacobian_row(
        &self,
        model: &Model,
        kin: &Kinematics<f64>,
        base: &FramePoint,
        rod: &FramePoint,
        row: &mut [f64],
    ) {
        row.fill(0.0);
        crate::mechanics::kinematics::for_each_on_path(model, rod.frame, |i| {
            row[i] += self.n.dot(&kin.point_jacobian_col(i, &self.rr))
        });
        crate::mechanics::kinematics::for_each_on_path(model, base.frame, |i| {
            row[i] -= self.n.dot(&kin.point_jacobian_col(i, &self.rb))
        });
    }
}

/// The pose and velocity of frame `frame` at the kinematics `kin` (a body port).
#[inline]
pub fn body_pose<S: Real>(kin: &Kinematics<S>, frame: crate::elements::ids::Frame) -> BodyPose<S> {
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
/// others `p` is not read. With `p` empty (the z-only step: no pressures) an element with node
/// ports is skipped: its torque comes from outside (a shaft port, `circuit::Shaft`). `which`,
/// `ports`: as for [`body_forces`].
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
        let e = &model.elements()[i];
        if let MechPort::Joint(a) = ports.mech {
            if p.is_empty() && ports.nodes[0].is_some() {
                continue;
            }
            let mut st = crate::circuit::node_port_state(model, p, &ports.nodes);
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

//! Loop-closure (cut-joint) constraints Φ(z) = 0 in the Z form (reference note 000-A.1, "Cut-joint
//! quantities in the Z form").
//!
//! Every cut joint is a set of two scalar primitives:
//!
//! ```text
//! PointDot:  Φ = e · (r₁ − r₂)        DirDot:  Φ = e₁ · e₂
//! ∂r/∂z_i = b_i^v + b_i^ω × r   (i on the path of r's frame)      ∂e/∂z_i = b_i^ω × e
//! Φ̇_z ż  = Φ̈ with z̈ = 0:
//!   PointDot: ë⁰·d + 2 ė·ḋ + e·d̈⁰,   d = r₁ − r₂
//!   DirDot:   ë₁⁰·e₂ + 2 ė₁·ė₂ + e₁·ë₂⁰
//! ṙ = ṡ + ω × r,  r̈⁰ = s̈⁰ + ω̇⁰ × r + ω × ṙ,  ė = ω × e,  ë⁰ = ω̇⁰ × e + ω × ė
//! ```

use nalgebra::Vector3;

use crate::mechanics::kinematics::{for_each_on_path, Kinematics};
use crate::model::{ConstraintEq, Frame, Model};
use crate::solver::real::Real;

/// Constraint values Φ (m entries) and the row-major Jacobian Φ_z (m × n).
#[derive(Debug, Clone)]
pub struct ConstraintEval<S: Real> {
    /// Φ [m or -].
    pub phi: Vec<S>,
    /// Φ_z, row-major m × n.
    pub jac: Vec<S>,
    /// Φ̇_z ż (velocity-product term of Φ̈) [m/s² or 1/s²].
    pub acc0: Vec<S>,
}

impl<S: Real> ConstraintEval<S> {
    /// Buffers for `m` equations and `n` coordinates.
    pub fn new(m: usize, n: usize) -> Self {
        ConstraintEval {
            phi: vec![S::zero(); m],
            jac: vec![S::zero(); m * n],
            acc0: vec![S::zero(); m],
        }
    }
}

fn dir_vel<S: Real>(kin: &Kinematics<S>, f: Frame, e: &Vector3<S>) -> (Vector3<S>, Vector3<S>) {
    let (_, w) = kin.frame_vel(f);
    let (_, al) = kin.frame_acc0(f);
    let ed = w.cross(e);
    (ed, al.cross(e) + w.cross(&ed))
}

/// Φ and Φ_z at the current positions (needs `Kinematics::positions`).
pub fn evaluate<S: Real>(model: &Model, kin: &Kinematics<S>, out: &mut ConstraintEval<S>) {
    let n = model.n_coords();
    for x in out.jac.iter_mut() {
        *x = S::zero();
    }
    for (r, c) in model.constraints.iter().enumerate() {
        let row = &mut out.jac[r * n..(r + 1) * n];
        match &c.eq {
            ConstraintEq::PointDot { e, p1, p2 } => {
                let ev = kin.dir(e);
                let r1 = kin.point(p1);
                let r2 = kin.point(p2);
                let d = r1 - r2;
                out.phi[r] = ev.dot(&d);
                for_each_on_path(model, e.frame, |i| row[i] += kin.bw[i].cross(&ev).dot(&d));
                for_each_on_path(model, p1.frame, |i| {
                    row[i] += ev.dot(&kin.point_jacobian_col(i, &r1))
                });
                for_each_on_path(model, p2.frame, |i| {
                    row[i] -= ev.dot(&kin.point_jacobian_col(i, &r2))
                });
            }
            ConstraintEq::DirDot { e1, e2 } => {
                let a = kin.dir(e1);
                let b = kin.dir(e2);
                out.phi[r] = a.dot(&b);
                for_each_on_path(model, e1.frame, |i| row[i] += kin.bw[i].cross(&a).dot(&b));
                for_each_on_path(model, e2.frame, |i| row[i] += a.dot(&kin.bw[i].cross(&b)));
            }
        }
    }
}

/// Φ̇_z ż (needs `Kinematics::velocities`).
pub fn evaluate_acc0<S: Real>(model: &Model, kin: &Kinematics<S>, out: &mut ConstraintEval<S>) {
    for (r, c) in model.constraints.iter().enumerate() {
        out.acc0[r] = match &c.eq {
            ConstraintEq::PointDot { e, p1, p2 } => {
                let ev = kin.dir(e);
                let (ed, edd) = dir_vel(kin, e.frame, &ev);
                let r1 = kin.point(p1);
                let r2 = kin.point(p2);
                let r1d = kin.point_velocity(p1.frame, &r1);
                let r2d = kin.point_velocity(p2.frame, &r2);
                let r1dd = kin.point_acc0(p1.frame, &r1, &r1d);
                let r2dd = kin.point_acc0(p2.frame, &r2, &r2d);
                edd.dot(&(r1 - r2)) + ed.dot(&(r1d - r2d)) * S::from(2.0) + ev.dot(&(r1dd - r2dd))
            }
            ConstraintEq::DirDot { e1, e2 } => {
                let a = kin.dir(e1);
                let b = kin.dir(e2);
                let (ad, add) = dir_vel(kin, e1.frame, &a);
                let (bd, bdd) = dir_vel(kin, e2.frame, &b);
                add.dot(&b) + ad.dot(&bd) * S::from(2.0) + a.dot(&bdd)
            }
        };
    }
}

//! Nonholonomic constraints B(z) ż = 0 (001 eq. 11): knife edges and rolling discs.
//!
//! Every row is Ψ = e · v_Q, the velocity of the body's material point at Q along e:
//!
//! ```text
//!   knife edge:    Q = r_P (body point),   e body-fixed (normal of the blade)      ė = ω × e
//!   rolling disc:  Q = r_C − R ĝ,  ĝ = w/|w|,  w = n − (n·a) a   (a: disc axis, n: ground normal)
//!                  e ground-fixed (a tangent of the ground plane)                  ė = 0
//!   B_ri = e · (b_i^v + b_i^ω × r_Q)        (i on the path of the body's frame)
//!   Ψ    = e · (ṡ + ω × r_Q)
//!   Ḃż   = Ψ̇|_{z̈=0} = ė · v_Q + e · (s̈⁰ + ω̇⁰ × r_Q + ω × ṙ_Q),  ṙ_Q = v_C + ḋ,  d = −R ĝ
//!   ĝ̇    = (ẇ − ĝ (ĝ·ẇ))/|w|,   ẇ = −(n·ȧ) a − (n·a) ȧ,   ȧ = ω × a
//! ```
//! The rows enter the penalty formulation like the loop-closure rows (chapter 3 of
//! `docs/theory/`, section 9.8): a velocity penalty and multipliers in the residual, and the same
//! mass-orthogonal projections of ż and z̈.

use nalgebra::Vector3;

use crate::mechanics::kinematics::{for_each_on_path, Kinematics};
use crate::model::Model;
use crate::solver::real::{v3, Real};

/// B (l × n, row-major), Ψ = B ż and Ḃ ż (l each).
#[derive(Debug, Clone)]
pub struct NonholonomicEval<S: Real> {
    /// B, row-major l × n.
    pub b: Vec<S>,
    /// Ψ = B ż [m/s].
    pub psi: Vec<S>,
    /// Ḃ ż [m/s²].
    pub acc0: Vec<S>,
}

impl<S: Real> NonholonomicEval<S> {
    /// Buffers for `l` rows and `n` coordinates.
    pub fn new(l: usize, n: usize) -> Self {
        NonholonomicEval {
            b: vec![S::zero(); l * n],
            psi: vec![S::zero(); l],
            acc0: vec![S::zero(); l],
        }
    }
}

/// B, Ψ and Ḃż at the current positions and velocities of `kin`.
pub fn evaluate<S: Real>(model: &Model, kin: &Kinematics<S>, out: &mut NonholonomicEval<S>) {
    let n = model.n_coords();
    for x in out.b.iter_mut() {
        *x = S::zero();
    }
    for (r, row) in model.nonholonomic.iter().enumerate() {
        let f = row.point.frame;
        let (_, w) = kin.frame_vel(f);
        let rc = kin.point(&row.point);
        let vc = kin.point_velocity(f, &rc);
        let e = kin.dir(&row.e);
        // contact offset d and its rate ḋ
        let (d, dd) = match &row.disc {
            None => (Vector3::zeros(), Vector3::zeros()),
            Some(disc) => {
                let a = kin.dir(&disc.axis);
                let nn = v3::<S>(&disc.normal);
                let wv = nn - a * nn.dot(&a);
                let wn = wv.dot(&wv).sqrt();
                let g = wv / wn;
                let ad = w.cross(&a);
                let wd = -(a * nn.dot(&ad)) - ad * nn.dot(&a);
                let gd = (wd - g * g.dot(&wd)) / wn;
                let r = S::from(-disc.radius_m);
                (g * r, gd * r)
            }
        };
        let rq = rc + d;
        let vq = kin.point_velocity(f, &rq);
        let ed = if row.disc.is_none() {
            w.cross(&e)
        } else {
            Vector3::zeros()
        };
        let bq = &mut out.b[r * n..(r + 1) * n];
        for_each_on_path(model, f, |i| bq[i] = e.dot(&kin.point_jacobian_col(i, &rq)));
        out.psi[r] = e.dot(&vq);
        let rqd = vc + dd;
        out.acc0[r] = ed.dot(&vq) + e.dot(&kin.point_acc0(f, &rq, &rqd));
    }
}

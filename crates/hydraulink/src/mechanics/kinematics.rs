//! Recursive kinematics of the spanning tree in relative coordinates (000 §2.1, eqs. 1–5).
//!
//! Every axis k carries one coordinate z_k and a link frame with pose (A_k, x_k): a point with
//! reference-configuration coordinates r̄ is at r = x_k + A_k r̄. Velocities use the body
//! Cartesian velocity of the point at the global origin, Z_k = [ṡ_k; ω_k] (000 eq. 1):
//!
//! ```text
//! Z_k  = Z_p + b_k ż_k                        (000 eq. 2)
//! Ż_k  = Ż_p + b_k z̈_k + d_k                  (000 eq. 3)
//! b_k  = [c_k × u_k ; u_k]   revolute,  [u_k ; 0] prismatic   (c_k point, u_k unit axis, global)
//! d_k  = (Z_p ×̂ b_k) ż_k,  [v;ω] ×̂ [a;b] = [ω×a + v×b ; ω×b]   (reference note 000-A.1)
//! ```
//!
//! `acc0` stores Ż⁰_k, the Ż_k of the recursion with z̈ = 0 (the sum of the d's along the path).

use nalgebra::{Matrix3, Vector3};

use crate::model::{AxisKind, Frame, FrameDir, FramePoint, Model};
use crate::solver::real::{v3, Real};

/// Rotation by `angle` about the unit vector `u` (Rodrigues): R = I + sinθ ũ + (1 − cosθ) ũ².
pub fn rotation<S: Real>(u: &Vector3<f64>, angle: S) -> Matrix3<S> {
    let (s, c) = (angle.sin(), angle.cos());
    let k = S::one() - c;
    let (x, y, z) = (S::from(u.x), S::from(u.y), S::from(u.z));
    Matrix3::new(
        c + x * x * k,
        x * y * k - z * s,
        x * z * k + y * s,
        y * x * k + z * s,
        c + y * y * k,
        y * z * k - x * s,
        z * x * k - y * s,
        z * y * k + x * s,
        c + z * z * k,
    )
}

/// Per-axis kinematic quantities, all in global coordinates.
#[derive(Debug, Clone)]
pub struct Kinematics<S: Real> {
    /// Link rotation A_k.
    pub rot: Vec<Matrix3<S>>,
    /// Link translation x_k [m].
    pub pos: Vec<Vector3<S>>,
    /// b_k, translational part.
    pub bv: Vec<Vector3<S>>,
    /// b_k, rotational part.
    pub bw: Vec<Vector3<S>>,
    /// Z_k: ṡ_k [m/s].
    pub vel_v: Vec<Vector3<S>>,
    /// Z_k: ω_k [rad/s].
    pub vel_w: Vec<Vector3<S>>,
    /// Ż⁰_k: s̈⁰_k [m/s²].
    pub acc0_v: Vec<Vector3<S>>,
    /// Ż⁰_k: ω̇⁰_k [rad/s²].
    pub acc0_w: Vec<Vector3<S>>,
}

impl<S: Real> Kinematics<S> {
    /// Buffers for `n` axes.
    pub fn new(n: usize) -> Self {
        let z = Vector3::zeros();
        Kinematics {
            rot: vec![Matrix3::identity(); n],
            pos: vec![z; n],
            bv: vec![z; n],
            bw: vec![z; n],
            vel_v: vec![z; n],
            vel_w: vec![z; n],
            acc0_v: vec![z; n],
            acc0_w: vec![z; n],
        }
    }

    /// Copies an f64 evaluation at the same point (derivative parts zero).
    pub fn lift_from(&mut self, base: &Kinematics<f64>) {
        fn lift_v<S: Real>(d: &mut [Vector3<S>], s: &[Vector3<f64>]) {
            for (a, b) in d.iter_mut().zip(s.iter()) {
                *a = v3(b);
            }
        }
        for (a, b) in self.rot.iter_mut().zip(base.rot.iter()) {
            *a = crate::solver::real::m3(b);
        }
        lift_v(&mut self.pos, &base.pos);
        lift_v(&mut self.bv, &base.bv);
        lift_v(&mut self.bw, &base.bw);
        lift_v(&mut self.vel_v, &base.vel_v);
        lift_v(&mut self.vel_w, &base.vel_w);
        lift_v(&mut self.acc0_v, &base.acc0_v);
        lift_v(&mut self.acc0_w, &base.acc0_w);
    }

    /// Rotation of a frame.
    #[inline]
    pub fn frame_rot(&self, f: Frame) -> Matrix3<S> {
        match f {
            Frame::Ground => Matrix3::identity(),
            Frame::Link(k) => self.rot[k.0],
        }
    }

    /// Translation of a frame.
    #[inline]
    pub fn frame_pos(&self, f: Frame) -> Vector3<S> {
        match f {
            Frame::Ground => Vector3::zeros(),
            Frame::Link(k) => self.pos[k.0],
        }
    }

    /// Z of a frame: (ṡ, ω).
    #[inline]
    pub fn frame_vel(&self, f: Frame) -> (Vector3<S>, Vector3<S>) {
        match f {
            Frame::Ground => (Vector3::zeros(), Vector3::zeros()),
            Frame::Link(k) => (self.vel_v[k.0], self.vel_w[k.0]),
        }
    }

    /// Ż⁰ of a frame: (s̈⁰, ω̇⁰).
    #[inline]
    pub fn frame_acc0(&self, f: Frame) -> (Vector3<S>, Vector3<S>) {
        match f {
            Frame::Ground => (Vector3::zeros(), Vector3::zeros()),
            Frame::Link(k) => (self.acc0_v[k.0], self.acc0_w[k.0]),
        }
    }

    /// Global position of a frame point [m].
    #[inline]
    pub fn point(&self, p: &FramePoint) -> Vector3<S> {
        match p.frame {
            Frame::Ground => v3(&p.point_ref),
            Frame::Link(k) => self.pos[k.0] + self.rot[k.0] * v3::<S>(&p.point_ref),
        }
    }

    /// Global direction of a frame direction.
    #[inline]
    pub fn dir(&self, d: &FrameDir) -> Vector3<S> {
        match d.frame {
            Frame::Ground => v3(&d.dir_ref),
            Frame::Link(k) => self.rot[k.0] * v3::<S>(&d.dir_ref),
        }
    }

    /// Velocity of the material point at global position `r` of frame `f`: ṙ = ṡ + ω × r.
    #[inline]
    pub fn point_velocity(&self, f: Frame, r: &Vector3<S>) -> Vector3<S> {
        let (v, w) = self.frame_vel(f);
        v + w.cross(r)
    }

    /// Acceleration of that point with z̈ = 0: r̈⁰ = s̈⁰ + ω̇⁰ × r + ω × ṙ.
    #[inline]
    pub fn point_acc0(&self, f: Frame, r: &Vector3<S>, rd: &Vector3<S>) -> Vector3<S> {
        let (a, al) = self.frame_acc0(f);
        let (_, w) = self.frame_vel(f);
        a + al.cross(r) + w.cross(rd)
    }

    /// Positions: link poses and joint vectors b_k, root to leaves.
    pub fn positions(&mut self, model: &Model, z: &[S]) {
        for (k, ax) in model.axes.iter().enumerate() {
            let u_ref = v3::<S>(&ax.dir_ref);
            match ax.kind {
                AxisKind::Revolute => {
                    let cref = v3::<S>(&ax.point_ref);
                    let r = rotation(&ax.dir_ref, z[k]);
                    // c = x_p + A_p c̄ (global axis point), A_k = A_p R, x_k = c − A_k c̄
                    let (rot, c, u) = match ax.parent {
                        Frame::Ground => (r, cref, u_ref),
                        Frame::Link(p) => {
                            let ap = self.rot[p.0];
                            (ap * r, self.pos[p.0] + ap * cref, ap * u_ref)
                        }
                    };
                    self.pos[k] = c - rot * cref;
                    self.rot[k] = rot;
                    self.bv[k] = c.cross(&u);
                    self.bw[k] = u;
                }
                AxisKind::Prismatic => {
                    let (ap, xp) = (self.frame_rot(ax.parent), self.frame_pos(ax.parent));
                    let u = ap * u_ref;
                    self.rot[k] = ap;
                    self.pos[k] = xp + u * z[k];
                    self.bv[k] = u;
                    self.bw[k] = Vector3::zeros();
                }
            }
        }
    }

    /// Velocities Z_k and the velocity-product accelerations Ż⁰_k (needs `positions`).
    pub fn velocities(&mut self, model: &Model, zd: &[S]) {
        for (k, ax) in model.axes.iter().enumerate() {
            let (pv, pw) = self.frame_vel(ax.parent);
            let (av, aw) = self.frame_acc0(ax.parent);
            let (bv, bw) = (self.bv[k], self.bw[k]);
            self.vel_v[k] = pv + bv * zd[k];
            self.vel_w[k] = pw + bw * zd[k];
            // d_k = (Z_p ×̂ b_k) ż_k
            self.acc0_v[k] = av + (pw.cross(&bv) + pv.cross(&bw)) * zd[k];
            self.acc0_w[k] = aw + pw.cross(&bw) * zd[k];
        }
    }

    /// Column of ∂r/∂z for axis `i` at global point `r`: b_i^v + b_i^ω × r.
    #[inline]
    pub fn point_jacobian_col(&self, i: usize, r: &Vector3<S>) -> Vector3<S> {
        self.bv[i] + self.bw[i].cross(r)
    }
}

/// Calls `f(i)` for every axis on the path from frame `f` to the root.
#[inline]
pub fn for_each_on_path(model: &Model, f: Frame, mut each: impl FnMut(usize)) {
    let mut cur = f;
    while let Frame::Link(k) = cur {
        each(k.0);
        cur = model.axes[k.0].parent;
    }
}

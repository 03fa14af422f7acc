//! Double-acting cylinder (000 eqs. 28–29, 42–45).
//!
//! ```text
//!  base ●══════[ A: p_A │▌ B: p_B ]══════════● rod        s = |r_rod − r_base|
//!              ◀─ l_A ─▶   ◀─ l_B ─▶                      l_A = s − s_min,  l_B = stroke − l_A
//!                                                          V̇_A = A_A ṡ,  V̇_B = −A_B ṡ
//!  F = p_A A_A − p_B A_B − F_μ   (pushes the pins apart when positive)
//! ```
//! (000 eq. 43 with its sign corrected, reference note 000-E.1.)

use crate::hydraulics::CylinderMotion;
use crate::model::{Cylinder, Friction, VolumeId};
use crate::real::Real;

/// Piston side (A) or rod side (B).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Piston side.
    A,
    /// Rod side.
    B,
}

/// The volume holding a chamber.
#[inline]
pub fn volume_of(c: &Cylinder, side: Side) -> VolumeId {
    match side {
        Side::A => c.vol_a,
        Side::B => c.vol_b,
    }
}

/// Chamber volume [m³] and its rate [m³/s].
#[inline]
pub fn chamber_volume<S: Real>(c: &Cylinder, side: Side, m: CylinderMotion<S>) -> (S, S) {
    let la = m.s - c.retracted_length_m;
    match side {
        Side::A => (la * c.area_a_m2, m.sd * c.area_a_m2),
        Side::B => (
            (S::from(c.stroke_m) - la) * c.area_b_m2,
            -(m.sd * c.area_b_m2),
        ),
    }
}

/// Hydraulic force p_A A_A − p_B A_B [N].
#[inline]
pub fn hydraulic_force<S: Real>(c: &Cylinder, pa: S, pb: S) -> S {
    pa * c.area_a_m2 - pb * c.area_b_m2
}

/// Friction force F_μ [N], opposing ṡ.
#[inline]
pub fn friction_force<S: Real>(c: &Cylinder, f_hyd: S, sd: S) -> S {
    match c.friction {
        Friction::None => S::zero(),
        Friction::Viscous { c } => sd * c,
        Friction::Efficiency { eta, vs } => f_hyd.abs() * (1.0 - eta) * (sd / vs).tanh(),
        Friction::BrownMcPhee { fc, fs, vs, sigma2 } => {
            super::brown_mcphee::force(fc, fs, vs, sigma2, sd)
        }
    }
}

/// Net force F = p_A A_A − p_B A_B − F_μ [N].
#[inline]
pub fn force<S: Real>(c: &Cylinder, pa: S, pb: S, sd: S) -> S {
    let fh = hydraulic_force(c, pa, pb);
    fh - friction_force(c, fh, sd)
}

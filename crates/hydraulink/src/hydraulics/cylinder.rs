//! Double-acting cylinder (000 eqs. 28–29, 42–45).
//!
//! ```text
//!  base ●══════[ A: p_A │▌ B: p_B ]══════════● rod        s = |r_rod − r_base|
//!              ◀─ l_A ─▶   ◀─ l_B ─▶                      l_A = s − s_min,  l_B = stroke − l_A
//!                                                          V̇_A = A_A ṡ,  V̇_B = −A_B ṡ
//!  F = p_A A_A − p_B A_B − F_μ   (pushes the pins apart when positive)
//! ```
//! (000 eq. 43 with its sign corrected, reference note 000-E.1.)

use crate::friction::Friction;
use crate::model::ids::{FramePoint, VolumeId};
use crate::real::Real;

/// Compiled double-acting cylinder.
#[derive(Debug, Clone)]
pub struct Cylinder {
    /// Name.
    pub name: String,
    /// Barrel pin.
    pub base: FramePoint,
    /// Rod pin.
    pub rod: FramePoint,
    /// Piston area A_A [m²].
    pub area_a_m2: f64,
    /// Annulus area A_B [m²].
    pub area_b_m2: f64,
    /// Stroke [m].
    pub stroke_m: f64,
    /// Pin-to-pin length at full retraction [m].
    pub retracted_length_m: f64,
    /// Volume holding the piston-side chamber.
    pub vol_a: VolumeId,
    /// Volume holding the rod-side chamber.
    pub vol_b: VolumeId,
    /// Wall bulk modulus B_c [Pa].
    pub wall_bulk_pa: Option<f64>,
    /// Friction law.
    pub friction: Friction,
}

/// Kinematic state of a cylinder: pin-to-pin length s [m] and rate ṡ [m/s].
#[derive(Debug, Clone, Copy)]
pub struct CylinderMotion<S> {
    /// s [m].
    pub s: S,
    /// ṡ [m/s].
    pub sd: S,
}

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

/// Friction force F_μ [N], opposing ṡ, of a law without internal states (`crate::friction`).
/// Laws with states (LuGre) go through [`force_and_friction`].
#[inline]
pub fn friction_force<S: Real>(c: &Cylinder, f_hyd: S, sd: S) -> S {
    debug_assert_eq!(crate::friction::n_states(&c.friction), 0);
    crate::friction::force(&c.friction, f_hyd, sd, &[])
}

/// Net force F = p_A A_A − p_B A_B − F_μ [N] (laws without internal states).
#[inline]
pub fn force<S: Real>(c: &Cylinder, pa: S, pb: S, sd: S) -> S {
    let fh = hydraulic_force(c, pa, pb);
    fh - friction_force(c, fh, sd)
}

/// (F, F_μ) [N] with the friction states `w` of this cylinder (003 Pub II eq. 11: F_cyl =
/// p1 A1 − p2 A2 − F_μ).
#[inline]
pub fn force_and_friction<S: Real>(c: &Cylinder, pa: S, pb: S, sd: S, w: &[S]) -> (S, S) {
    let fh = hydraulic_force(c, pa, pb);
    let fm = crate::friction::force(&c.friction, fh, sd, w);
    (fh - fm, fm)
}

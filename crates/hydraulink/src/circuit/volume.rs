//! A lumped control volume (000 eqs. 22, 42, 44):
//!
//! ```text
//!     Q_in ──▶ ┌──────────┐      V   = V_h + Σ_chambers A l
//!              │  p, V    │      ṗ   = (B_e / V) (Σ Q_in − V̇)
//!     Q_out ◀──└──────────┘      B_e : 000 eq. 23 over the hose and the chambers
//! ```

use crate::elements::hydraulics::cylinder::{self, CylinderMotion};
use crate::elements::hydraulics::fluid;
use crate::model::{Model, Volume, VolumeId};
use crate::solver::real::Real;

/// Total volume V [m³], its rate V̇ [m³/s] and wall compliance Σ V_s/B_s [m³/Pa]. The chambers
/// enter through `cylinder::chamber_volume`, the law whose rates are the cylinder element's
/// displacement flows (the fast path of `hydraulics::cylinder`).
#[inline]
pub fn geometry<S: Real>(
    model: &Model,
    vol: &Volume,
    id: VolumeId,
    motion: &[CylinderMotion<S>],
) -> (S, S, S) {
    let mut v = S::from(vol.hose_m3);
    let mut vd = S::zero();
    let mut wall = match vol.hose_bulk_pa {
        Some(b) => S::from(vol.hose_m3 / b),
        None => S::zero(),
    };
    debug_assert!(vol
        .chambers
        .iter()
        .all(|(c, side)| { cylinder::volume_of(model.cylinder(c.0), *side) == id }));
    for &(c, side) in &vol.chambers {
        let cyl = model.cylinder(c.0);
        let (cv, cvd) = cylinder::chamber_volume(cyl, side, motion[c.0]);
        v += cv;
        vd += cvd;
        if let Some(b) = cyl.wall_bulk_pa {
            wall += cv / b;
        }
    }
    (v, vd, wall)
}

/// ṗ [Pa/s] given the net component inflow `q_in` [m³/s] and the extra compliance `extra` of
/// the elements on the volume (accumulators) [m³/Pa], `None` without such elements:
/// ṗ = (Q_in − V̇) / (V/B_e + C) (000 eq. 22 with the compliance C added to V/B_e).
#[inline]
pub fn pressure_rate<S: Real>(
    model: &Model,
    vol: &Volume,
    id: VolumeId,
    motion: &[CylinderMotion<S>],
    q_in: S,
    extra: Option<S>,
) -> S {
    let (v, vd, wall) = geometry(model, vol, id, motion);
    let be = fluid::effective_bulk_modulus(model.hydraulics.oil_bulk_pa, v, wall);
    match extra {
        None => be / v * (q_in - vd),
        Some(c) => (q_in - vd) / (v / be + c),
    }
}

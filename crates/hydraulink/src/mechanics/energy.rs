//! Mechanical energies (reference note 000-A.7):
//! KE = Σ_j ½ (m_j |ġ_j|² + ω_jᵀ J_j ω_j),   PE = −Σ_j m_j gravity · g_j.

use crate::mechanics::kinematics::Kinematics;
use crate::mechanics::semirecursive::Dynamics;
use crate::model::{Frame, Model};

/// (kinetic, potential) energy [J] (needs velocities, and `Dynamics::bodies*` at the same
/// positions for the body COMs and inertias).
pub fn energies(model: &Model, kin: &Kinematics<f64>, dynamics: &Dynamics<f64>) -> (f64, f64) {
    let mut ke = 0.0;
    let mut pe = 0.0;
    for (j, b) in model.bodies.iter().enumerate() {
        let (g, jj) = (dynamics.com[j], dynamics.inertia[j]);
        pe -= b.mass_kg * model.gravity.dot(&g);
        if let Frame::Link(k) = b.frame {
            let w = kin.vel_w[k.0];
            let gd = kin.vel_v[k.0] + w.cross(&g);
            ke += 0.5 * (b.mass_kg * gd.norm_squared() + w.dot(&(jj * w)));
        }
    }
    (ke, pe)
}

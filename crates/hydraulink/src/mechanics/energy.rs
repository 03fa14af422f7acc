//! Mechanical energies (reference note 000-A.7):
//!
//! ```text
//! KE = Σ_j ½ (m_j |ġ_j|² + ω_jᵀ J_j ω_j) = ½ żᵀ M′ ż      (M′ = Rᵀ M̄ R, 000 eq. 11)
//! PE = −Σ_j m_j gravity · g_j
//! ```

use crate::mechanics::semirecursive::Dynamics;
use crate::model::Model;

/// (kinetic, potential) energy [J] from M′ and the body COMs of `dynamics` (both at the current
/// positions) and the rates `zd`.
pub fn energies(model: &Model, dynamics: &Dynamics<f64>, zd: &[f64]) -> (f64, f64) {
    let n = model.n_coords();
    let mut ke = 0.0;
    for i in 0..n {
        let row: f64 = (0..n).map(|j| dynamics.mass[i * n + j] * zd[j]).sum();
        ke += 0.5 * zd[i] * row;
    }
    (ke, potential(model, dynamics))
}

/// PE = −Σ_j m_j gravity · g_j [J] from the body COMs of `dynamics`.
pub fn potential(model: &Model, dynamics: &Dynamics<f64>) -> f64 {
    model
        .bodies
        .iter()
        .zip(dynamics.com.iter())
        .map(|(b, g)| -b.mass_kg * model.gravity.dot(g))
        .sum()
}

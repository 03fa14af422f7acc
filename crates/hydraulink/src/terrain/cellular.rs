//! The cellular automaton of 003 Pub. V §II-E (eqs. 15–16): displacement of material by a
//! vertical force and avalanching at the friction angle.
//!
//! A vertical force f(i, j) [N] on a cell (a wheel, a bucket pressing down) counts as the
//! height of a square column of material that weighs η f:
//!
//!   h_f = F(f) = η f / (d² ρ g)                                            (Pub. V eq. 16)
//!
//! and h′ = h + h_f is the effective surface. With the forward differences
//! h′_x = h′(i, j) − h′(i+1, j), h′_y = h′(i, j) − h′(i, j+1) (drops towards +x and +z) and the
//! slope angle arctan(|∇h′|), |∇h′| = √(h′_x² + h′_y²)/d, every cell steeper than the friction
//! angle α sheds material to its +x and +z neighbours:
//!
//!   h(i, j)   ← h(i, j)   − z⁺ (h′_x + h′_y)
//!   h(i+1, j) ← h(i+1, j) + z⁺ h′_x                                        (Pub. V eq. 15)
//!   h(i, j+1) ← h(i, j+1) + z⁺ h′_y
//!
//! (a negative difference moves material the other way). Each term is a transfer between two
//! columns, so the volume is conserved to round-off. We take all transfers of one sweep from the
//! state at its start (a Jacobi sweep, so the result does not depend on the cell order and is
//! deterministic), keep the grid closed at its border (no difference across it), and bound the
//! flow rate z⁺ ∈ (0, 1/4]: a cell exchanges with at most four neighbours, so a sweep cannot
//! move more than the differences it levels (no overshoot, no growing oscillation). η = 4 and
//! α = 35° are the paper's values (Pub. V: "the value of η is assumed to be 4", "the internal
//! friction angle is considered 35°"); η = 0 makes forces move nothing.

use super::heightfield::Heightfield;
use super::{positive, TerrainError};

/// The automaton's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Automaton {
    /// Friction (piling) angle α [rad] (Pub. V: 35°).
    pub friction_angle_rad: f64,
    /// η of eq. 16: how easily a force displaces material [-] (Pub. V: 4), ≥ 0.
    pub eta: f64,
    /// Flow rate z⁺ of eq. 15 per sweep [-], in (0, 1/4].
    pub flow_rate: f64,
    /// Material density ρ [kg/m³], > 0.
    pub density_kg_m3: f64,
    /// Gravity g [m/s²], > 0.
    pub gravity_m_s2: f64,
}

impl Automaton {
    /// The paper's values (α = 35°, η = 4) for sand of density `density_kg_m3` [kg/m³], with
    /// z⁺ = 1/4.
    pub fn paper(density_kg_m3: f64) -> Self {
        Automaton {
            friction_angle_rad: 35f64.to_radians(),
            eta: 4.0,
            flow_rate: 0.25,
            density_kg_m3,
            gravity_m_s2: 9.81,
        }
    }

    /// Checks the ranges, naming the field.
    pub fn check(&self) -> Result<(), TerrainError> {
        let a = self.friction_angle_rad;
        if !(a.is_finite() && a > 0.0 && a < std::f64::consts::FRAC_PI_2) {
            return Err(TerrainError::Parameter {
                field: "friction_angle_rad",
                message: format!("must be in (0, π/2), got {a}"),
            });
        }
        if !(self.eta.is_finite() && self.eta >= 0.0) {
            return Err(TerrainError::Parameter {
                field: "eta",
                message: format!("must be a finite value ≥ 0, got {}", self.eta),
            });
        }
        let z = self.flow_rate;
        if !(z.is_finite() && z > 0.0 && z <= 0.25) {
            return Err(TerrainError::Parameter {
                field: "flow_rate",
                message: format!("must be in (0, 1/4], got {z}"),
            });
        }
        positive("density_kg_m3", self.density_kg_m3)?;
        positive("gravity_m_s2", self.gravity_m_s2)?;
        Ok(())
    }

    /// h_f = η f / (d² ρ g) of a vertical force `f_n` [N] on a cell of side `cell_m` [m]
    /// (Pub. V eq. 16) [m].
    #[inline]
    pub fn force_height(&self, f_n: f64, cell_m: f64) -> f64 {
        self.eta * f_n / (cell_m * cell_m * self.density_kg_m3 * self.gravity_m_s2)
    }
}

/// Scratch of the automaton, sized once for a field (no allocation in [`sweep`]).
#[derive(Debug, Clone)]
pub struct Scratch {
    /// h′ of the sweep [m].
    effective: Vec<f64>,
    /// The height change of each cell in the sweep [m].
    change: Vec<f64>,
    /// What each cell would give in the sweep [m] ([`sweep_nonnegative`]).
    outflow: Vec<f64>,
}

impl Scratch {
    /// Buffers for `field`.
    pub fn new(field: &Heightfield) -> Self {
        Scratch {
            effective: vec![0.0; field.h.len()],
            change: vec![0.0; field.h.len()],
            outflow: vec![0.0; field.h.len()],
        }
    }
}

/// One sweep of eq. 15 over `field` with the vertical forces `force_n` [N] per cell (index
/// i + nx j; empty: none) and the parameters `a` (checked by [`Automaton::check`]); returns the
/// number of cells steeper than α at the start of the sweep (0: at rest).
pub fn sweep(field: &mut Heightfield, force_n: &[f64], a: &Automaton, s: &mut Scratch) -> usize {
    let (nx, nz, d) = (field.nx, field.nz, field.cell_m);
    for (k, e) in s.effective.iter_mut().enumerate() {
        let f = force_n.get(k).copied().unwrap_or(0.0);
        *e = field.h[k] + a.force_height(f, d); // Pub. V eq. 16
    }
    s.change.iter_mut().for_each(|c| *c = 0.0);
    let limit = a.friction_angle_rad.tan() * d;
    let mut active = 0;
    for j in 0..nz {
        for i in 0..nx {
            let k = i + nx * j;
            // forward differences; none across the closed border
            let hx = if i + 1 < nx {
                s.effective[k] - s.effective[k + 1]
            } else {
                0.0
            };
            let hy = if j + 1 < nz {
                s.effective[k] - s.effective[k + nx]
            } else {
                0.0
            };
            // arctan(|∇h′|) > α  ⇔  |∇h′| d > d tan α
            if (hx * hx + hy * hy).sqrt() <= limit {
                continue;
            }
            active += 1;
            // Pub. V eq. 15, one transfer per neighbour
            let (qx, qy) = (a.flow_rate * hx, a.flow_rate * hy);
            s.change[k] -= qx + qy;
            if i + 1 < nx {
                s.change[k + 1] += qx;
            }
            if j + 1 < nz {
                s.change[k + nx] += qy;
            }
        }
    }
    for (h, c) in field.h.iter_mut().zip(&s.change) {
        *h += c;
    }
    active
}

/// The transfers of eq. 15 out of cell (i, j) to (i+1, j) and (i, j+1) at the effective
/// heights `e` (positive: from (i, j); negative: towards it) [m]; zero below the friction angle.
#[inline]
fn transfers(
    e: &[f64],
    nx: usize,
    nz: usize,
    i: usize,
    j: usize,
    limit: f64,
    z: f64,
) -> (f64, f64) {
    let k = i + nx * j;
    let hx = if i + 1 < nx { e[k] - e[k + 1] } else { 0.0 };
    let hy = if j + 1 < nz { e[k] - e[k + nx] } else { 0.0 };
    if (hx * hx + hy * hy).sqrt() <= limit {
        return (0.0, 0.0);
    }
    (z * hx, z * hy)
}

/// [`sweep`] that never takes more from a column than it holds: where the transfers out of a
/// cell would exceed its height h (possible with forces, whose h_f raises the effective surface
/// above the material there), they are scaled down by h / Σ out. Each transfer stays a transfer
/// between two columns, so the volume is conserved to round-off, and every h stays ≥ 0. Without
/// forces and with z⁺ ≤ 1/4 no scaling happens (a cell gives at most z⁺ h to each of four
/// neighbours; only a cell that would give all it holds, to the round-off margin, is scaled),
/// and the result equals [`sweep`]'s bit for bit. Returns the number of active cells.
pub fn sweep_nonnegative(
    field: &mut Heightfield,
    force_n: &[f64],
    a: &Automaton,
    s: &mut Scratch,
) -> usize {
    let (nx, nz, d) = (field.nx, field.nz, field.cell_m);
    for (k, e) in s.effective.iter_mut().enumerate() {
        let f = force_n.get(k).copied().unwrap_or(0.0);
        *e = field.h[k] + a.force_height(f, d); // Pub. V eq. 16
    }
    let limit = a.friction_angle_rad.tan() * d;
    // pass 1: what every cell would give
    s.outflow.iter_mut().for_each(|c| *c = 0.0);
    let mut active = 0;
    for j in 0..nz {
        for i in 0..nx {
            let k = i + nx * j;
            let (qx, qy) = transfers(&s.effective, nx, nz, i, j, limit, a.flow_rate);
            if qx != 0.0 || qy != 0.0 {
                active += 1;
            }
            if qx > 0.0 {
                s.outflow[k] += qx
            } else if qx < 0.0 {
                s.outflow[k + 1] -= qx
            }
            if qy > 0.0 {
                s.outflow[k] += qy
            } else if qy < 0.0 {
                s.outflow[k + nx] -= qy
            }
        }
    }
    // the scale of each donor: 1, or h / Σ out (less a round-off margin, so that h − Σ out
    // cannot come out below 0) where it would give more than it holds
    const MARGIN: f64 = 1.0 - 1e-12;
    for (o, h) in s.outflow.iter_mut().zip(&field.h) {
        *o = if *o > *h * MARGIN {
            h.max(0.0) * MARGIN / *o
        } else {
            1.0
        };
    }
    // pass 2: the scaled transfers (Pub. V eq. 15), summed in the order of `sweep`
    s.change.iter_mut().for_each(|c| *c = 0.0);
    for j in 0..nz {
        for i in 0..nx {
            let k = i + nx * j;
            let (qx, qy) = transfers(&s.effective, nx, nz, i, j, limit, a.flow_rate);
            if qx == 0.0 && qy == 0.0 {
                continue;
            }
            let qx = qx
                * if qx > 0.0 {
                    s.outflow[k]
                } else if qx < 0.0 {
                    s.outflow[k + 1]
                } else {
                    1.0
                };
            let qy = qy
                * if qy > 0.0 {
                    s.outflow[k]
                } else if qy < 0.0 {
                    s.outflow[k + nx]
                } else {
                    1.0
                };
            s.change[k] -= qx + qy;
            if i + 1 < nx {
                s.change[k + 1] += qx;
            }
            if j + 1 < nz {
                s.change[k + nx] += qy;
            }
        }
    }
    for (h, c) in field.h.iter_mut().zip(&s.change) {
        // a drained column ends at h (1 − margin) ≥ 0 up to the round-off of its sums (≤ 1e-16
        // m): that much is dropped rather than leaving a negative height
        *h = (*h + c).max(0.0);
    }
    active
}

/// Sweeps until no cell is steeper than α or `max_sweeps` are done; returns the sweeps taken.
pub fn relax(
    field: &mut Heightfield,
    force_n: &[f64],
    a: &Automaton,
    s: &mut Scratch,
    max_sweeps: usize,
) -> usize {
    for n in 0..max_sweeps {
        if sweep(field, force_n, a, s) == 0 {
            return n;
        }
    }
    max_sweeps
}

//! Pressure propagation through the heightfield's columns (003 Pub. V §II-E, eqs. 12–14): each
//! column is a stack of blocks of height b; the weight of a block spreads to the three × three
//! blocks below it by the kernel φ, so the load at the base of cell (i, j) is
//!
//!   p⁰_ij = Σ_{n=0..N} Σ_{s=−n..n} Σ_{t=−n..n} a_stn mⁿ_{i+s, j+t}                (Pub. V eq. 12)
//!   a_stn = Σ_{k₁+…+kₙ=s} Σ_{l₁+…+lₙ=t} φ_{k₁l₁} ⋯ φ_{kₙlₙ},   a_000 = 1          (Pub. V eq. 13)
//!
//! with mⁿ the mass of the block n layers above the base block. φ is symmetric, φ(k) = 0 for
//! |k| > 1 and φ(−1) + φ(0) + φ(1) = 1; we take the two-dimensional kernel as the product
//! φ_kl = φ(k) φ(l) (the paper prints a_stn as a two-dimensional convolution power; the product
//! form is our reading), so a_·n is the n-fold convolution power of φ in each direction. An
//! external vertical force f on a cell counts as an equivalent weight f/g added to its top
//! block (Pub. V: "an external force is added as an equivalent weight to the block it acts on").
//!
//! ```text
//!    layer N (top)   ▢ ▢ █ ▢ ▢        a block's weight goes down one layer at a time,
//!                     ╲ │ ╱            φ(−1) : φ(0) : φ(1) to the three blocks below
//!    layer N−1       ▢ ▣ ▣ ▣ ▢        (in x and in z: 3 × 3 blocks)
//!                   ╲ ╲ │ ╱ ╱
//!    base (n = 0)    ▣ ▣ ▣ ▣ ▣        p⁰_ij: the force on the base of cell (i, j) [N]
//! ```
//! Computed top-down by the recursion L_N = m^N g, L_{n} = φ ∗ L_{n+1} + mⁿ g, p⁰ = L_0 (the
//! sum of eq. 12 written as a Horner scheme: N kernel passes, not N² terms). At the border of the
//! grid the share φ(±1) that would leave the grid stays in the block (a closed border, as the
//! automaton's), so every pass keeps the total: Σ_ij p⁰_ij = g Σ m + Σ f, the weight above the
//! base, to round-off. The force the external loads add to the base, p⁰(f) − p⁰(0), is the
//! displacing force of the automaton's eq. 16 ([`base_excess`]).

use super::heightfield::Heightfield;
use super::TerrainError;

/// The kernel φ: φ(0) = 1 − 2 φ₁, φ(±1) = φ₁.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kernel {
    /// φ(±1) [-], in [0, 1/2] (0: no spreading; 1/3: even spreading over three blocks).
    pub side: f64,
}

impl Kernel {
    /// φ(k) for k ∈ {−1, 0, 1}, 0 otherwise.
    pub fn phi(&self, k: i32) -> f64 {
        match k {
            0 => 1.0 - 2.0 * self.side,
            -1 | 1 => self.side,
            _ => 0.0,
        }
    }
    /// Checks φ(±1) ∈ [0, 1/2], so that every weight is ≥ 0.
    pub fn check(&self) -> Result<(), TerrainError> {
        if self.side.is_finite() && (0.0..=0.5).contains(&self.side) {
            Ok(())
        } else {
            Err(TerrainError::Parameter {
                field: "kernel_side",
                message: format!("must be in [0, 1/2], got {}", self.side),
            })
        }
    }
}

/// Scratch of the propagation, sized once for a field (no allocation in [`propagate`]).
#[derive(Debug, Clone)]
pub struct Scratch {
    /// The load carried down, per cell [N].
    load: Vec<f64>,
    /// One directional pass [N].
    pass: Vec<f64>,
}

impl Scratch {
    /// Buffers for `field`.
    pub fn new(field: &Heightfield) -> Self {
        Scratch {
            load: vec![0.0; field.h.len()],
            pass: vec![0.0; field.h.len()],
        }
    }
}

/// The mass of block n (0: the base block) of a column of height `h` [m] with blocks of height
/// `b` [m] and density `rho` [kg/m³] on a cell of side `d` [m] [kg]: full blocks, the top one
/// partial.
#[inline]
fn block_mass(h: f64, n: usize, b: f64, rho: f64, d: f64) -> f64 {
    let below = n as f64 * b;
    (h - below).clamp(0.0, b) * d * d * rho
}

/// One pass of the kernel along x (`dx` = 1) or z (`dx` = nx) with the closed border.
fn spread(src: &[f64], dst: &mut [f64], nx: usize, nz: usize, along_x: bool, k: &Kernel) {
    let (c, s) = (k.phi(0), k.phi(1));
    for j in 0..nz {
        for i in 0..nx {
            let idx = i + nx * j;
            let (has_lo, has_hi, step) = if along_x {
                (i > 0, i + 1 < nx, 1)
            } else {
                (j > 0, j + 1 < nz, nx)
            };
            // what this block keeps: its centre share, plus the side shares that would leave
            // the grid (closed border)
            let mut keep = c;
            if !has_lo {
                keep += s;
            }
            if !has_hi {
                keep += s;
            }
            let mut v = keep * src[idx];
            if has_lo {
                v += s * src[idx - step];
            }
            if has_hi {
                v += s * src[idx + step];
            }
            dst[idx] = v;
        }
    }
}

/// Most layers of blocks a column is split into by [`propagate`].
pub const MAX_LAYERS: usize = 256;

/// Pub. V eqs. 12–14: the vertical force on the base of every column of `field` [N] into
/// `out` (index i + nx j), for blocks of height `block_m` [m] (> 0) of material of density
/// `density_kg_m3` [kg/m³] under gravity `g` [m/s²], with the external vertical forces `force_n`
/// [N] per cell (empty: none) added as equivalent weights to each column's top block. Allocates
/// nothing. The total Σ out = g Σ m + Σ f to round-off (module doc).
#[allow(clippy::too_many_arguments)]
pub fn propagate(
    field: &Heightfield,
    block_m: f64,
    density_kg_m3: f64,
    g: f64,
    force_n: &[f64],
    kernel: &Kernel,
    s: &mut Scratch,
    out: &mut [f64],
) {
    let (nx, nz, d) = (field.nx, field.nz, field.cell_m);
    let top = field.h.iter().fold(0.0f64, |m, h| m.max(*h));
    // Blocks are at least top / MAX_LAYERS high, which bounds the work of a step: the given
    // block height holds for piles up to MAX_LAYERS blocks (25.6 m at the default 0.1 m).
    // (the factor keeps the top of the highest column inside the last layer after rounding)
    let block_m = block_m.max(top / MAX_LAYERS as f64 * (1.0 + 1e-12));
    // the number of layers above the base block; every column has its top in one of them
    let n_layers = ((top / block_m).ceil() as usize).clamp(1, MAX_LAYERS);
    s.load.iter_mut().for_each(|l| *l = 0.0);
    for n in (0..n_layers).rev() {
        if n + 1 < n_layers {
            // carry the load one layer down: L_n = φ ∗ L_{n+1} + ... (Pub. V eq. 13, one factor)
            spread(&s.load, &mut s.pass, nx, nz, true, kernel);
            spread(&s.pass, &mut s.load, nx, nz, false, kernel);
        }
        for (k, l) in s.load.iter_mut().enumerate() {
            let h = field.h[k];
            *l += g * block_mass(h, n, block_m, density_kg_m3, d);
            // the external force on the column's top block (the block holding the surface)
            let is_top =
                h > n as f64 * block_m && h <= (n + 1) as f64 * block_m || (n == 0 && h <= 0.0);
            if is_top {
                *l += force_n.get(k).copied().unwrap_or(0.0);
            }
        }
    }
    out.copy_from_slice(&s.load);
}

/// The force the external loads `force_n` add to each column's base [N] (into `out`):
/// p⁰(f) − p⁰(0), what the automaton's eq. 16 displaces (Pub. V: "h_f = F(f)"); linear in f, so
/// computed by propagating the forces alone through the layers. `out` sums to Σ f.
#[allow(clippy::too_many_arguments)]
pub fn base_excess(
    field: &Heightfield,
    block_m: f64,
    force_n: &[f64],
    kernel: &Kernel,
    s: &mut Scratch,
    out: &mut [f64],
) {
    propagate(field, block_m, 0.0, 0.0, force_n, kernel, s, out);
}

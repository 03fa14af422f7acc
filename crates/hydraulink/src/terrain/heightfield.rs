//! The heightfield: an nx × nz grid of square cells of side d, each a column of material of
//! height h(i, j) [m] above y = 0 at its centre (003 Pub. V §II-E: "h(i, j) is the height of the
//! system at the center of the cell (i, j)"). Volume V = d² Σ h. The digging API removes the
//! material above a tool's edge and deposits a volume at a point; both return or take exact
//! volumes, so a bucket's payload is what left the ground.
//!
//! ```text
//!   z ▲   ┌───┬───┬───┐      cell (i, j): x ∈ x₀ + [i d, (i+1) d), z ∈ z₀ + [j d, (j+1) d)
//!     │   │   │   │   │      index i + nx j
//!     │   ├───┼───┼───┤
//!     │   │   │   │   │
//!  z₀ ┼   └───┴───┴───┘
//!     └───┼───────────▶ x
//!         x₀
//! ```

use super::{positive, TerrainError};

/// A grid of material columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Heightfield {
    /// Cells along x.
    pub nx: usize,
    /// Cells along z.
    pub nz: usize,
    /// Cell side d [m].
    pub cell_m: f64,
    /// Corner (x₀, z₀) of cell (0, 0) [m].
    pub origin_m: [f64; 2],
    /// Column heights h, index i + nx j [m].
    pub h: Vec<f64>,
}

impl Heightfield {
    /// A flat field of `nx` × `nz` cells of side `cell_m` [m] from `origin_m` [m] at height
    /// `height_m` [m] (≥ 0).
    pub fn flat(
        nx: usize,
        nz: usize,
        cell_m: f64,
        origin_m: [f64; 2],
        height_m: f64,
    ) -> Result<Self, TerrainError> {
        if nx < 2 || nz < 2 {
            return Err(TerrainError::Parameter {
                field: "cells",
                message: format!("needs at least 2 × 2 cells, got {nx} × {nz}"),
            });
        }
        positive("cell_m", cell_m)?;
        if !(height_m.is_finite() && height_m >= 0.0) {
            return Err(TerrainError::Parameter {
                field: "height_m",
                message: format!("must be a finite value ≥ 0, got {height_m}"),
            });
        }
        if !origin_m.iter().all(|x| x.is_finite()) {
            return Err(TerrainError::Parameter {
                field: "origin_m",
                message: "must be finite".into(),
            });
        }
        Ok(Heightfield {
            nx,
            nz,
            cell_m,
            origin_m,
            h: vec![height_m; nx * nz],
        })
    }

    /// Index of the cell (i, j).
    #[inline]
    pub fn index(&self, i: usize, j: usize) -> usize {
        i + self.nx * j
    }

    /// The cell (i, j) that holds the point (x, z) [m], if inside the grid.
    pub fn cell_at(&self, x: f64, z: f64) -> Option<(usize, usize)> {
        let fi = (x - self.origin_m[0]) / self.cell_m;
        let fj = (z - self.origin_m[1]) / self.cell_m;
        if !(fi >= 0.0 && fj >= 0.0) {
            return None;
        }
        let (i, j) = (fi as usize, fj as usize);
        (i < self.nx && j < self.nz).then_some((i, j))
    }

    /// The surface at (x, z) [m] interpolated bilinearly between the cell centres (flat beyond
    /// the outer centres): its height [m] and slopes ∂h/∂x, ∂h/∂z [-]; `None` off the grid.
    pub fn surface(&self, x: f64, z: f64) -> Option<(f64, f64, f64)> {
        self.cell_at(x, z)?;
        let d = self.cell_m;
        let axis = |u: f64, o: f64, n: usize| {
            let f = (u - o) / d - 0.5;
            let i0 = (f.floor().max(0.0) as usize).min(n - 2);
            let t = (f - i0 as f64).clamp(0.0, 1.0);
            // the slope is 0 where the point lies beyond the outer centres (clamped)
            let inside = f >= 0.0 && f <= (n - 1) as f64;
            (i0, t, inside)
        };
        let (i0, tx, in_x) = axis(x, self.origin_m[0], self.nx);
        let (j0, tz, in_z) = axis(z, self.origin_m[1], self.nz);
        let h = |i: usize, j: usize| self.h[self.index(i, j)];
        let (h00, h10, h01, h11) = (h(i0, j0), h(i0 + 1, j0), h(i0, j0 + 1), h(i0 + 1, j0 + 1));
        let y = h00 * (1.0 - tx) * (1.0 - tz)
            + h10 * tx * (1.0 - tz)
            + h01 * (1.0 - tx) * tz
            + h11 * tx * tz;
        let gx = if in_x {
            ((h10 - h00) * (1.0 - tz) + (h11 - h01) * tz) / d
        } else {
            0.0
        };
        let gz = if in_z {
            ((h01 - h00) * (1.0 - tx) + (h11 - h10) * tx) / d
        } else {
            0.0
        };
        Some((y, gx, gz))
    }

    /// The part of the segment from `a` to `b` (global (x, y, z) [m]) whose (x, z) lies over
    /// the grid, as the parameter range [t₀, t₁] ⊂ [0, 1] of a + t (b − a) (Liang–Barsky
    /// clipping against the grid's rectangle); `None` if it misses the grid or is not finite.
    pub fn clip_xz(&self, a: &[f64; 3], b: &[f64; 3]) -> Option<(f64, f64)> {
        let lo = [self.origin_m[0], self.origin_m[1]];
        let hi = [
            lo[0] + self.nx as f64 * self.cell_m,
            lo[1] + self.nz as f64 * self.cell_m,
        ];
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (axis, (l, h)) in [0usize, 2].into_iter().zip(lo.into_iter().zip(hi)) {
            let (p, dp) = (a[axis], b[axis] - a[axis]);
            if !(p.is_finite() && dp.is_finite()) {
                return None;
            }
            if dp == 0.0 {
                if p < l || p > h {
                    return None;
                }
                continue;
            }
            let (ta, tb) = ((l - p) / dp, (h - p) / dp);
            let (enter, leave) = if ta < tb { (ta, tb) } else { (tb, ta) };
            t0 = t0.max(enter);
            t1 = t1.min(leave);
        }
        (t0 <= t1).then_some((t0, t1))
    }

    /// Volume of material d² Σ h [m³].
    pub fn volume_m3(&self) -> f64 {
        self.h.iter().sum::<f64>() * self.cell_m * self.cell_m
    }

    /// Cuts the field with a tool edge given as global points (x, y, z) [m]: each point lowers
    /// the column under it to its height y if the column is higher; returns the volume removed
    /// [m³] (≥ 0). Points outside the grid or below y = 0 remove nothing below 0. A cell hit by
    /// several points is cut to the lowest.
    pub fn cut(&mut self, points: &[[f64; 3]]) -> f64 {
        let area = self.cell_m * self.cell_m;
        let mut removed = 0.0;
        for p in points {
            if let Some((i, j)) = self.cell_at(p[0], p[2]) {
                let k = self.index(i, j);
                let floor = p[1].max(0.0);
                if self.h[k] > floor {
                    removed += (self.h[k] - floor) * area;
                    self.h[k] = floor;
                }
            }
        }
        removed
    }

    /// Deposits `volume_m3` [m³] (≥ 0) on the column at (x, z) [m] (a dumped payload; the
    /// avalanching spreads it).
    pub fn deposit(&mut self, x: f64, z: f64, volume_m3: f64) -> Result<(), TerrainError> {
        if !(volume_m3.is_finite() && volume_m3 >= 0.0) {
            return Err(TerrainError::Parameter {
                field: "volume_m3",
                message: format!("must be a finite value ≥ 0, got {volume_m3}"),
            });
        }
        let (i, j) = self.cell_at(x, z).ok_or(TerrainError::Outside { x, z })?;
        let k = self.index(i, j);
        self.h[k] += volume_m3 / (self.cell_m * self.cell_m);
        Ok(())
    }
}

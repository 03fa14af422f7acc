//! Deformable terrain (003 Publication V §II-E): a heightfield of material columns
//! ([`heightfield`]) relaxed by the cellular-automata model of the paper ([`cellular`]): a
//! vertical force on a cell raises its effective height by η f/(d² ρ g) (eq. 16), and where the
//! slope of the effective surface exceeds the friction angle α (35°) material flows to the
//! neighbours (eq. 15). Every operation moves material between columns or in and out through
//! the digging API ([`heightfield::Heightfield::cut`], [`heightfield::Heightfield::deposit`]),
//! so the volume is conserved to round-off. Heights are along the global y axis (the shipped
//! machines' gravity is −y), the grid spans x and z. Derivation: `docs/theory/13_terrain.md`.
//!
//! The pressure propagation of eqs. 12–14 (the weight over a cell's base spread by the kernel φ)
//! is [`pressure`]; the terrain's data (`[terrain]`, the compiled `Terrain`, the world state and
//! the stage's scratch) is [`data`]. Elsewhere: the stage `world` at step boundaries
//! (`crate::pipeline::world`) and the digging bucket element (`crate::elements::bucket_dig`),
//! both above this module. Not here: the particles of the paper (docs/theory/13_terrain.md
//! §13.7).

pub mod cellular;
pub mod data;
pub mod heightfield;
pub mod pressure;

use thiserror::Error;

/// A bad terrain parameter or a point outside the grid, naming the field.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TerrainError {
    /// A parameter out of its range.
    #[error("terrain.{field}: {message}")]
    Parameter {
        /// The field (`cell_m`, `relaxation`, …).
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A point outside the grid.
    #[error("terrain: point ({x}, {z}) m is outside the grid")]
    Outside {
        /// x [m].
        x: f64,
        /// z [m].
        z: f64,
    },
}

pub(crate) fn positive(field: &'static str, x: f64) -> Result<f64, TerrainError> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(TerrainError::Parameter {
            field,
            message: format!("must be a finite value > 0, got {x}"),
        })
    }
}

//! Global formulations in natural (fully Cartesian) coordinates: ALI3-P with unified hydraulics
//! (004 §2–3) and the index-1 augmented Lagrangian (002). Work in progress (issue 3).

pub mod ali3p;
pub mod i1al;
pub mod natural_coordinates;

use crate::model::Model;

/// Buffers of the global formulations (allocated only when one is selected).
#[derive(Debug, Clone, Default)]
pub struct GlobalWorkspace {}

impl GlobalWorkspace {
    /// Buffers for `model`.
    pub fn new(model: &Model) -> Self {
        let _ = model;
        GlobalWorkspace {}
    }
}

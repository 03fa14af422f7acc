//! `Workspace`: every buffer the step needs, allocated once in [`Workspace::new`]: the buffers
//! every formulation shares ([`Buffers`]) and those of the selected formulation only
//! ([`FormulationWorkspace`]). The step loop allocates nothing (checked by `tests/no_alloc.rs`).

use crate::formulations::ali3p::Ali3p;
use crate::formulations::double_step::{DoubleStep, DoubleStepWorkspace};
use crate::formulations::i1al::I1al;
use crate::formulations::penalty::{Penalty, PenaltyWorkspace};
use crate::formulations::z_only::kinematic_guidance::{GuidanceWorkspace, KinematicGuidance};
use crate::formulations::z_only::multirate::{Multirate, MultirateWorkspace};
use crate::formulations::Stepper;
use crate::mechanics::buffers::Buffers;
use crate::mechanics::global::GlobalWorkspace;
use crate::model::spec::Formulation;
use crate::model::Model;

/// The buffers of the selected formulation, one variant per [`Stepper`] implementation.
// One per simulation, built once and never moved in the step: the size difference of the
// variants costs nothing, and boxing would only add an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum FormulationWorkspace {
    /// `penalty::Penalty`.
    Penalty(PenaltyWorkspace),
    /// `double_step::DoubleStep`.
    DoubleStep(DoubleStepWorkspace),
    /// `global::ali3p::Ali3p`.
    GlobalAli3p(GlobalWorkspace),
    /// `global::i1al::I1al`.
    GlobalI1al(GlobalWorkspace),
    /// `kinematic_guidance::KinematicGuidance`.
    KinematicGuidance(GuidanceWorkspace),
    /// `multirate::Multirate`.
    Multirate(MultirateWorkspace),
}

/// Scratch memory of the step: the shared buffers and the selected formulation's own.
///
/// The shared buffers are also reached through the workspace itself (`ws.ev`, `ws.counters`:
/// `Deref` to [`Buffers`]); code that borrows two of them mutably at once names
/// `ws.buffers`.
#[derive(Debug)]
pub struct Workspace {
    /// Buffers shared by every formulation.
    pub buffers: Buffers,
    /// Buffers of the selected formulation (`model.solver.formulation`) only.
    pub formulation: FormulationWorkspace,
}

impl Workspace {
    /// Allocates everything for `model`: the shared buffers and those of
    /// `model.solver.formulation`.
    pub fn new(model: &Model) -> Self {
        let formulation = match model.solver.formulation {
            Formulation::Penalty => FormulationWorkspace::Penalty(Penalty::workspace(model)),
            Formulation::DoubleStep => {
                FormulationWorkspace::DoubleStep(DoubleStep::workspace(model))
            }
            Formulation::GlobalAli3p => FormulationWorkspace::GlobalAli3p(Ali3p::workspace(model)),
            Formulation::GlobalI1al => FormulationWorkspace::GlobalI1al(I1al::workspace(model)),
            Formulation::KinematicGuidance => {
                FormulationWorkspace::KinematicGuidance(KinematicGuidance::workspace(model))
            }
            Formulation::Multirate => FormulationWorkspace::Multirate(Multirate::workspace(model)),
        };
        Workspace {
            buffers: Buffers::new(model),
            formulation,
        }
    }

    /// The double-step buffers, if that formulation is selected.
    pub fn double_step(&self) -> Option<&DoubleStepWorkspace> {
        match &self.formulation {
            FormulationWorkspace::DoubleStep(d) => Some(d),
            _ => None,
        }
    }

    /// The double-step buffers, mutable, if that formulation is selected.
    pub fn double_step_mut(&mut self) -> Option<&mut DoubleStepWorkspace> {
        match &mut self.formulation {
            FormulationWorkspace::DoubleStep(d) => Some(d),
            _ => None,
        }
    }

    /// The penalty buffers, if that formulation is selected.
    pub fn penalty(&self) -> Option<&PenaltyWorkspace> {
        match &self.formulation {
            FormulationWorkspace::Penalty(p) => Some(p),
            _ => None,
        }
    }

    /// The penalty buffers, mutable, if that formulation is selected.
    pub fn penalty_mut(&mut self) -> Option<&mut PenaltyWorkspace> {
        match &mut self.formulation {
            FormulationWorkspace::Penalty(p) => Some(p),
            _ => None,
        }
    }

    /// The global formulations' buffers, if one of them is selected.
    pub fn global_mut(&mut self) -> Option<&mut GlobalWorkspace> {
        match &mut self.formulation {
            FormulationWorkspace::GlobalAli3p(g) | FormulationWorkspace::GlobalI1al(g) => Some(g),
            _ => None,
        }
    }
}

impl std::ops::Deref for Workspace {
    type Target = Buffers;
    fn deref(&self) -> &Buffers {
        &self.buffers
    }
}

impl std::ops::DerefMut for Workspace {
    fn deref_mut(&mut self) -> &mut Buffers {
        &mut self.buffers
    }
}

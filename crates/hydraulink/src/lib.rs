//! # hydraulink
//!
//! Monolithic simulation of hydraulically actuated multibody systems: a semi-recursive
//! multibody formulation in relative joint coordinates (Jaiswal et al. 2021, "000") coupled with
//! a lumped-fluid hydraulic circuit, integrated together by one implicit trapezoidal rule with
//! Newton–Raphson on an exact tangent.
//!
//! ## Pipeline
//! 1. [`pipeline::compile`]: `ModelSpec` → validated, immutable [`Model`].
//! 2. [`initialization::initialize`]: loop closure, statics, consistent pressures → [`State`].
//! 3. [`Workspace::new`]: every buffer, once.
//! 4. [`step::step`]: one Δt: check state → sample inputs → the one formulation step
//!    (`step::formulation_step`: restore, valves, predict, the one Newton solver on the
//!    formulation's equations ([`formulations::Stepper`]), project, end stops, commit) → element
//!    outputs and energy accounts (see `step.rs` for the stages).
//!
//! Elements (valves, accumulators, end stops, springs, loads) plug in through one trait and
//! ports ([`element`]); every formulation maps the ports to its own coordinates.
//! [`Simulation`] bundles the three for drivers such as the CLI and sets inputs from outside
//! (`Simulation::set_input`).
//!
//! ## Symbols
//! | paper | code | unit |
//! |---|---|---|
//! | z, ż, z̈ | `State::z`, `zd`, `zdd` | rad or m |
//! | p, ṗ | `State::p`, `pd` | Pa, Pa/s |
//! | U | `State::spool` | input unit (V) |
//! | λ | `State::lambda` | N or N m |
//! | M′, Q′ | `Dynamics::mass`, `force` | |
//! | Φ, Φ_z | `ConstraintEval::phi`, `jac` | m, - |
//! | α | `SolverOptions::penalty` | |
//! | b_k, Z_k, Ż⁰_k | `Kinematics::bv/bw`, `vel_v/vel_w`, `acc0_v/acc0_w` | |
#![warn(missing_docs)]
// Units are written in brackets, `[N]`, `[m³/s]` (STYLE convention 2); rustdoc would read them
// as intra-doc links, so unresolved links are not warnings in this crate.
#![allow(rustdoc::broken_intra_doc_links)]
// Index loops over matrix rows and columns read like the equations they implement.
#![allow(clippy::needless_range_loop)]

pub mod circuit;
pub mod contact;
pub mod elements;
pub mod error;
pub mod formulations;
pub mod linearize;
pub mod mechanics;
pub mod model;
pub mod pipeline;
pub mod solver;
pub mod state;
pub mod terrain;

pub use error::{InitError, InputError, ModelError, StepError};
pub use model::spec::ModelSpec;
pub use model::Model;
pub use pipeline::compile;
pub use pipeline::simulation::Simulation;
pub use pipeline::workspace::Workspace;
pub use state::State;
pub use state::StepReport;

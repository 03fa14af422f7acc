//! Integration tests, mirroring the library: paper validation, invariants, determinism.

mod common;
mod contact;
mod determinism;
mod elements;
mod inputs;
mod invariants;
mod machines;
mod model;
mod regressions;
mod terrain;
mod validation;

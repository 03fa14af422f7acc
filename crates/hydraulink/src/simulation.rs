//! `Simulation`: a compiled model with its state and workspace, and the run-level bookkeeping
//! the CLI needs (output labels, output rows, cavitation onsets).
//!
//! API used by the CLI and the tests (stable):
//! - `Simulation::new(model) -> Result<Simulation, InitError>` runs the consistent initialization.
//! - `sim.step() -> Result<StepReport, StepError>` advances one Δt.
//! - `sim.time_s()`, `sim.model()`, `sim.state()`.
//! - `sim.output_labels() -> Vec<String>`: CSV columns, `time` first.
//! - `sim.output_row(&mut [f64])`: one row in the order of `output_labels`.
//! - `sim.volume_name(i)` to name the volumes flagged in `StepReport::cavitation_onsets`.

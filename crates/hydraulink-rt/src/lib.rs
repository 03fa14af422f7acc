//! The real-time engine of hydraulink: a model stepped at its fixed Δt on a thread of its own,
//! paced to the wall clock, driven by operator commands and watched through snapshots, with
//! overrun statistics and bit-exact record and replay.
//!
//! It uses the library only through [`hydraulink::Simulation`]: `step`, `set_input`,
//! `release_input`, state clone and restore (`state`, `set_state`), the names of the inputs and
//! output columns, the output row and the body poses.
//!
//! # The pacing loop
//!
//! Engine step k (counted from 0 over the whole run; a reset rewinds the model time, not k) is
//! *released* at wall time `origin + k Δt` and *due* one Δt later. Each pass of the loop:
//!
//! ```text
//! 1. commands   drain the bounded command channel without waiting (try_recv) and apply them:
//!               set/release input, axis and key events (through the bindings), pause, resume,
//!               reset, stop
//! 2. pause      while paused, wait for commands (the physics has nothing else to do); on
//!               resume the schedule moves by the paused time
//! 3. inputs     replayed changes of step k, then each active binding's next value
//!               (deadband, scale, rate limit); every change applied is logged with k
//! 4. release    sleep until origin + k Δt (at once if that has passed)
//! 5. step       Simulation::step, timed by two readings of the clock
//! 6. account    lag = end − (origin + (k+1) Δt); lag > 0 is an overrun, counted and kept
//!               going: CatchUp keeps the schedule, so late steps run back to back until the
//!               lag is gone; SlowDown moves the origin by the lag (slip), so simulated time
//!               falls behind wall time
//! 7. snapshot   every round(1/(f_display Δt)) steps: time, inputs, selected outputs, body
//!               poses, statistics, sent with try_send; a full channel drops the snapshot (and
//!               counts it), never a step
//! ```
//!
//! No physics step is ever skipped: a slow step delays the ones after it, and the statistics
//! say by how much. The loop allocates nothing per step, except to grow the log of input
//! changes (amortized, only on a change) and a snapshot buffer when the consumer returns none
//! through [`Channels::recycle`].
//!
//! The clock is a trait ([`Clock`]): [`SystemClock`] in use, [`ManualClock`] in tests, where a
//! step "takes" a chosen compute time, so pacing and overrun accounting are tested without
//! timing anything.
//!
//! # Modules
//!
//! * [`clock`]: the clock trait, the wall clock and the manual clock.
//! * [`engine`]: [`Engine`] (the thread), [`Core`] (the loop, driven step by step), commands,
//!   snapshots, options, the overrun [`Policy`].
//! * [`stats`]: [`Statistics`] and the fixed-size compute-time histogram.
//! * [`recording`]: the input changes of a run as a CSV text file, for replay.
//! * [`binding`]: axis and key bindings to named inputs: deadband, scale, rate limit.

#![warn(missing_docs)]
// Units are written in brackets, `[s]`, `[Hz]` (STYLE convention 2); rustdoc would read them as
// intra-doc links, so unresolved links are not warnings in this crate (as in the library).
#![allow(rustdoc::broken_intra_doc_links)]

pub mod binding;
pub mod clock;
pub mod engine;
pub mod priority;
pub mod recording;
pub mod stats;

pub use binding::{BindingSource, InputBinding};
pub use clock::{Clock, ManualClock, SystemClock};
pub use engine::{
    Channels, Command, Core, Engine, EngineError, EngineOptions, Names, Outcome, Policy, Report,
    Snapshot,
};
pub use priority::Scheduling;
pub use recording::{Action, Event, Recording, RecordingError};
pub use stats::{Histogram, Priority, Statistics};

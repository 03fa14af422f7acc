//! The engine's behaviour: pacing and overruns, commands and snapshots, bindings, record and
//! replay.

mod bindings;
mod pacing;
mod replay;

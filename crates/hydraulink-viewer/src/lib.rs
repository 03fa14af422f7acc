//! The browser viewer of hydraulink (`hydraulink serve MODEL`): a local HTTP and WebSocket
//! server on 127.0.0.1 that runs a model on the real-time engine (`hydraulink-rt`) and streams
//! it to a three.js page, which draws the machine, shows a HUD and sends operator input back.
//! No graphics code lives in the library: the model file only names shapes (`visual`).
//!
//! # Modules
//!
//! * [`scene`]: what the page draws (bodies' shapes, cylinders, operator inputs, gauges) and
//!   the default key and gamepad bindings.
//! * [`protocol`]: the JSON messages, the hand-written state frame.
//! * [`server`]: [`Server`]: the engine, the broadcaster, HTTP and WebSocket connections.
//! * [`hud`]: virtual sensors, gauges, the fuel estimate and the scenario's tasks (003 Pub. IV).
//! * [`playback`]: `hydraulink view OUTDIR`, a finished run's poses and columns played back.
//! * [`world_rows`]: a run's worksite (obstacles, terrain per row) for `view`.
//! * [`assets`]: the embedded page and the vendored three.js.
//! * [`mesh`]: OBJ files of the `mesh` shapes, placed on their bodies.
//! * [`game`]: the rules of the excavator game (003 Pub. VI), pure; [`leaderboard`]: its
//!   files; [`game_host`]: the game in the server.

#![warn(missing_docs)]
// Units are written in brackets, `[m]` (STYLE convention 2), as in the library.
#![allow(rustdoc::broken_intra_doc_links)]

pub mod assets;
pub mod game;
pub mod game_host;
pub mod hud;
pub mod leaderboard;
pub mod mesh;
pub mod playback;
pub mod protocol;
pub mod scene;
pub mod server;
pub mod world_rows;

pub use playback::{PlaybackError, Viewer};
pub use scene::Scene;
pub use server::{ServeError, ServeOptions, Server};

//! The server: HTTP for the page's files and two JSON endpoints, and a WebSocket (`/ws`) per
//! page, on 127.0.0.1. One real-time engine runs the model; a broadcaster thread turns each
//! snapshot into a frame (with the HUD's values, [`crate::hud`]) and hands it to every connected
//! page through a bounded queue of its own (a slow page loses frames, never the engine a step).
//!
//! ```text
//!  engine thread ──snapshots──▶ broadcaster ──frame──▶ page queue ──▶ connection thread ──ws──▶ page
//!        ▲                           └──▶ latest frame (GET /state)
//!        └────────── commands (bounded, try_send) ◀── controller ◀── connection thread ◀──ws── page
//! ```
//!
//! HTTP paths: the embedded files ([`crate::assets`]), `/scene` (the scene message),
//! `/state` (the latest frame), `/recorded` (the frame at the end of the last recording),
//! `/leaderboard` (the game's best 20, [`crate::game_host`]), `/ws` (the WebSocket upgrade). Every HTTP response closes its connection.
//!
//! # Record and replay
//!
//! `record` resets the machine to its initial state and marks the start; `record_stop` marks the
//! end at the step of the latest frame (the run goes on). `replay` stops the engine, takes its
//! input log (`hydraulink_rt::Recording`) from the reset to the end mark, and starts a new engine
//! on a fresh simulation of the same model that replays it for exactly as many steps: its last
//! frame shows the state of the recording's last frame, bit for bit (compared by the browser
//! test through `/recorded`). `live` (or `reset` during a replay) starts a live engine again.
//!
//! The HTTP and WebSocket part (`Hub`, `listen`) is shared with `hydraulink view`
//! ([`crate::playback`]), which sends frames of a finished run instead.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use hydraulink::model::spec::ModelSpec;
use hydraulink::{Model, Simulation};
use hydraulink_rt::{
    Action, Command, Engine, EngineError, EngineOptions, Event, Recording, Report, Snapshot,
    SystemClock,
};
use thiserror::Error;
use tungstenite::Message;

use crate::game_host::{GameHost, GameHostError, GameMessage, GameOptions};
use crate::hud::{Hud, HudError};
use crate::protocol::{scene_message, write_frame, ClientMessage, FrameInfo};
use crate::scene::Scene;

/// How a server runs.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// TCP port on 127.0.0.1; 0: any free port.
    pub port: u16,
    /// The engine's options; its `outputs` are replaced by the HUD's columns and, when its
    /// `bindings` are empty (no binding file), the model's `[[hud.bindings]]` or the scene's
    /// default bindings are used.
    pub engine: EngineOptions,
    /// Let the model's own input signals drive the operator inputs until a key or axis moves
    /// them; false (default): hold them at 0 from the start and after each reset.
    pub play_signals: bool,
    /// The folder `mesh` shapes' files are relative to (the model file's); none: the current
    /// directory.
    pub model_dir: Option<std::path::PathBuf>,
    /// Play the game ([`crate::game_host`]): its state in every frame, started from the page.
    pub game: Option<GameOptions>,
    /// Start the simulated clock paused, when the first page connects: it runs from the
    /// page's Resume. False (default): it starts running when the first page connects.
    pub start_paused: bool,
}

/// A server that cannot start.
#[derive(Debug, Error)]
pub enum ServeError {
    /// The port cannot be bound.
    #[error("port: cannot listen on 127.0.0.1:{port}: {source}")]
    Bind {
        /// The port asked for.
        port: u16,
        /// Why.
        source: std::io::Error,
    },
    /// The engine rejects its options (a binding names an unknown input, …).
    #[error("engine: {0}")]
    Engine(#[from] EngineError),
    /// A gauge or task names a value the run does not have.
    #[error("hud: {0}")]
    Hud(#[from] HudError),
    /// A thread cannot be started.
    #[error("thread: {0}")]
    Thread(std::io::Error),
    /// A `mesh` shape's file cannot be drawn.
    #[error("{0}")]
    Mesh(#[from] crate::mesh::MeshError),
    /// The game cannot be set up (a `[game]` column the model lacks, an unreadable leaderboard).
    #[error("game: {0}")]
    Game(#[from] GameHostError),
}

/// What the page's controls do, behind the HTTP and WebSocket part.
pub(crate) trait Controller: Send + Sync {
    /// One message from a page.
    fn handle(&self, msg: ClientMessage);
    /// An extra GET path (`/recorded`): its JSON body, if the controller has it.
    fn get(&self, _path: &str) -> Option<String> {
        None
    }
    /// A page message that is not a [`ClientMessage`] (the game's): whether it was taken.
    fn handle_text(&self, _text: &str) -> bool {
        false
    }
    /// A page connected (before its first message).
    fn page_connected(&self) {}
}

/// What the connection threads share: the scene, the latest frame, the pages' queues.
pub(crate) struct Hub {
    scene_json: String,
    latest: Mutex<Arc<str>>,
    pages: Mutex<Vec<SyncSender<Arc<str>>>>,
    pub(crate) stop: AtomicBool,
    frames: AtomicU64,
    frame_bytes: AtomicU64,
    controller: OnceLock<Box<dyn Controller>>,
}

impl Hub {
    pub(crate) fn new(scene_json: String) -> Hub {
        Hub {
            scene_json,
            latest: Mutex::new(Arc::from("{}")),
            pages: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            frames: AtomicU64::new(0),
            frame_bytes: AtomicU64::new(0),
            controller: OnceLock::new(),
        }
    }

    pub(crate) fn set_controller(&self, c: Box<dyn Controller>) {
        let _ = self.controller.set(c);
    }

    /// Sends a frame to every page (a full queue loses it) and keeps it as the latest.
    pub(crate) fn publish(&self, text: &str) {
        let frame: Arc<str> = Arc::from(text);
        self.frames.fetch_add(1, Ordering::Relaxed);
        self.frame_bytes
            .fetch_add(frame.len() as u64, Ordering::Relaxed);
        if let Ok(mut latest) = self.latest.lock() {
            *latest = Arc::clone(&frame);
        }
        if let Ok(mut pages) = self.pages.lock() {
            // a full queue loses this frame; a closed one is a page gone
            pages.retain(|p| {
                !matches!(
                    p.try_send(Arc::clone(&frame)),
                    Err(TrySendError::Disconnected(_))
                )
            });
        }
    }

    pub(crate) fn latest(&self) -> Arc<str> {
        self.latest
            .lock()
            .map(|l| Arc::clone(&l))
            .unwrap_or_else(|_| Arc::from("{}"))
    }

    /// Pages connected now.
    pub(crate) fn n_pages(&self) -> usize {
        self.pages.lock().map_or(0, |p| p.len())
    }

    /// Frames sent so far and their total size [bytes].
    pub(crate) fn frame_bytes(&self) -> (u64, u64) {
        (
            self.frames.load(Ordering::Relaxed),
            self.frame_bytes.load(Ordering::Relaxed),
        )
    }
}

/// Binds 127.0.0.1:`port` and starts the accept thread; returns the address.
pub(crate) fn listen(
    hub: &Arc<Hub>,
    port: u16,
) -> Result<(SocketAddr, JoinHandle<()>), ServeError> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|source| ServeError::Bind { port, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { port, source })?;
    listener.set_nonblocking(true).map_err(ServeError::Thread)?;
    let hub = Arc::clone(hub);
    let t = spawn("hydraulink-viewer-accept", move || accept(&hub, &listener))?;
    Ok((addr, t))
}

/// The modes of a live server, as the frames name them.
const MODES: [&str; 4] = ["live", "recording", "replay", "replay-end"];
const LIVE: u8 = 0;
const RECORDING: u8 = 1;
const REPLAY: u8 = 2;

/// What a broadcaster needs to write frames.
struct Framing {
    scene: Scene,
    hud: Hud,
    /// Indices of the operator inputs in the engine's input list.
    operator: Vec<usize>,
    paused: AtomicBool,
    mode: AtomicU8,
    /// The step of the latest frame.
    last_step: AtomicU64,
    /// The game, observing every frame ([`crate::game_host`]).
    game: Option<Mutex<GameHost>>,
}

/// Where a recording ends.
struct Recorded {
    /// Engine step of its last frame.
    to_step: u64,
    /// That frame.
    end_frame: Arc<str>,
}

/// The live controller's engine and recording marks.
struct Running {
    engine: Option<Engine>,
    commands: Option<SyncSender<Command>>,
    broadcasters: Vec<JoinHandle<()>>,
    recorded: Option<Recorded>,
    /// The last engine's report, once it was stopped.
    report: Option<Report>,
    /// The first engine, until the first page connects (the simulated clock waits for it).
    waiting: Option<(Simulation, EngineOptions, bool)>,
}

/// The controller of `hydraulink serve`.
struct Live {
    hub: Weak<Hub>,
    framing: Arc<Framing>,
    model: Model,
    options: EngineOptions,
    /// Commands sent after each reset (the operator inputs held at 0), and at the start.
    hold: Vec<Command>,
    /// `ServeOptions::start_paused`.
    start_paused: bool,
    running: Mutex<Running>,
}

/// A running server; [`Server::stop`] ends it.
pub struct Server {
    url: String,
    addr: SocketAddr,
    hub: Arc<Hub>,
    live: Arc<Live>,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// Frames per page queue: about 0.1 s at 60 Hz.
const PAGE_QUEUE: usize = 6;

impl Server {
    /// Starts the engine on `sim` (built from `spec`, at its initial state: a replay starts a
    /// fresh simulation of the same model) and the server around it.
    pub fn start(
        spec: &ModelSpec,
        sim: Simulation,
        options: ServeOptions,
    ) -> Result<Server, ServeError> {
        let labels = sim.output_labels();
        let mut scene = Scene::new(spec, sim.model().step_s(), &labels);
        let here = std::path::PathBuf::from(".");
        scene.load_meshes(options.model_dir.as_deref().unwrap_or(&here))?;
        scene.obstacles = crate::scene::obstacles(sim.model());
        scene.terrain = crate::scene::terrain(&sim);
        let hud = Hud::new(spec, &labels)?;
        let mut engine_options = options.engine;
        // the HUD's columns, then the game's (`GameHost::new` is told where they start)
        let mut outputs = hud.columns.clone();
        let game = match options.game {
            None => None,
            Some(g) => {
                let bodies: Vec<String> =
                    sim.model().bodies.iter().map(|b| b.name.clone()).collect();
                let host = GameHost::new(
                    g,
                    spec,
                    &labels,
                    &bodies,
                    sim.model().step_s(),
                    outputs.len(),
                )?;
                outputs.extend(host.labels().iter().cloned());
                Some(Mutex::new(host))
            }
        };
        engine_options.outputs = Some(outputs);
        if engine_options.bindings.is_empty() {
            engine_options.bindings = scene.bindings(spec);
        }
        scene.set_keys(&engine_options.bindings);
        let operator: Vec<usize> = scene
            .inputs
            .iter()
            .filter_map(|i| sim.input_names().iter().position(|n| *n == i.name))
            .collect();
        let hold: Vec<Command> = if options.play_signals || engine_options.replay.is_some() {
            Vec::new()
        } else {
            scene
                .inputs
                .iter()
                .map(|i| Command::SetInput {
                    input: i.name.clone(),
                    value: 0.0_f64.clamp(i.range[0], i.range[1]),
                })
                .collect()
        };
        let hub = Arc::new(Hub::new(scene_message(&scene)));
        let replaying = engine_options.replay.is_some();
        let live = Arc::new(Live {
            hub: Arc::downgrade(&hub),
            framing: Arc::new(Framing {
                scene,
                hud,
                operator,
                paused: AtomicBool::new(options.start_paused),
                mode: AtomicU8::new(if replaying { REPLAY } else { LIVE }),
                last_step: AtomicU64::new(0),
                game,
            }),
            model: sim.model().clone(),
            options: engine_options.clone(),
            hold,
            start_paused: options.start_paused,
            running: Mutex::new(Running {
                engine: None,
                commands: None,
                broadcasters: Vec::new(),
                recorded: None,
                report: None,
                // the engine starts when the first page connects (`page_connected`)
                waiting: Some((sim, engine_options, !replaying)),
            }),
        });
        hub.set_controller(Box::new(Arc::clone(&live)));
        let (addr, accept) = listen(&hub, options.port)?;
        Ok(Server {
            url: format!("http://{addr}/"),
            addr,
            hub,
            live,
            accept: Some(accept),
        })
    }

    /// The page's URL, `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Frames sent so far (to the broadcaster's output) and their total size [bytes].
    pub fn frame_bytes(&self) -> (u64, u64) {
        self.hub.frame_bytes()
    }

    /// Whether the live engine has ended (a failed step, or the duration reached); a replay
    /// that reached its end is not an end of the server, nor is an engine still waiting for
    /// the first page.
    pub fn engine_finished(&self) -> bool {
        if self.live.framing.mode.load(Ordering::SeqCst) >= REPLAY {
            return false;
        }
        self.live
            .running
            .lock()
            .map(|r| r.waiting.is_none() && r.engine.as_ref().is_none_or(Engine::is_finished))
            .unwrap_or(true)
    }

    /// Whether the engine has started (the first page connected): the simulated clock runs
    /// from then (unless started paused).
    pub fn engine_started(&self) -> bool {
        self.live.running.lock().is_ok_and(|r| r.waiting.is_none())
    }

    /// Stops the engine and the threads; returns the report of the engine that ran last.
    pub fn stop(mut self) -> Option<Report> {
        self.hub.stop.store(true, Ordering::SeqCst);
        let report = self
            .live
            .running
            .lock()
            .ok()
            .and_then(|mut r| Live::stop_engine(&mut r));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        report
    }
}

impl Controller for Arc<Live> {
    fn handle(&self, msg: ClientMessage) {
        self.as_ref().handle(msg);
    }

    fn handle_text(&self, text: &str) -> bool {
        let Some(game) = &self.framing.game else {
            return false;
        };
        let Ok(msg) = serde_json::from_str::<GameMessage>(text) else {
            return false;
        };
        let start = game.lock().map(|mut g| g.handle(&msg)).unwrap_or(false);
        if start {
            // an attempt starts from the initial state
            if let Ok(running) = self.running.lock() {
                self.send_reset(&running);
            }
        }
        true
    }

    fn page_connected(&self) {
        let Ok(mut running) = self.running.lock() else {
            return;
        };
        let Some((sim, options, hold)) = running.waiting.take() else {
            return;
        };
        if let Err(e) = self.start_engine(&mut running, sim, options, hold) {
            eprintln!("viewer: cannot start the engine: {e}");
            return;
        }
        if self.start_paused {
            // at most the first step runs before the engine reads this (it takes its commands
            // before each step)
            self.send(&running, Command::Pause);
        }
    }

    fn get(&self, path: &str) -> Option<String> {
        if path == "/leaderboard" {
            return self
                .framing
                .game
                .as_ref()
                .and_then(|g| g.lock().ok().map(|g| g.leaderboard_json(20)));
        }
        (path == "/recorded").then(|| {
            self.running
                .lock()
                .ok()
                .and_then(|r| r.recorded.as_ref().map(|r| r.end_frame.to_string()))
                .unwrap_or_else(|| "{}".into())
        })
    }
}

impl Live {
    fn mode(&self) -> u8 {
        self.framing.mode.load(Ordering::SeqCst)
    }

    fn set_mode(&self, m: u8) {
        self.framing.mode.store(m, Ordering::SeqCst);
    }

    /// Spawns an engine on `sim` and its broadcaster; `hold`: send the hold commands.
    fn start_engine(
        &self,
        running: &mut Running,
        sim: Simulation,
        options: EngineOptions,
        hold: bool,
    ) -> Result<(), ServeError> {
        let end_step = options
            .duration_s
            .filter(|_| options.replay.is_some())
            .map(|d| hydraulink::model::steps_covering(d, sim.model().step_s()));
        let mut engine = Engine::spawn(sim, options, SystemClock::new())?;
        if hold {
            for c in &self.hold {
                let _ = engine.channels.commands.try_send(c.clone());
            }
        }
        // the broadcaster owns the snapshot receiver: the engine keeps a closed stand-in
        let snapshots = std::mem::replace(&mut engine.channels.snapshots, sync_channel(1).1);
        let recycle = engine.channels.recycle.clone();
        let framing = Arc::clone(&self.framing);
        let hub = self.hub.clone();
        let t = spawn("hydraulink-viewer-frames", move || {
            if let Some(hub) = hub.upgrade() {
                broadcast(&hub, &framing, &snapshots, &recycle, end_step);
            }
        })?;
        framing_reset(&self.framing);
        running.commands = Some(engine.channels.commands.clone());
        running.engine = Some(engine);
        running.broadcasters.push(t);
        Ok(())
    }

    /// Stops the engine and joins its broadcaster; the report.
    fn stop_engine(running: &mut Running) -> Option<Report> {
        running.commands = None;
        let report = running.engine.take().map(Engine::stop);
        for t in running.broadcasters.drain(..) {
            let _ = t.join();
        }
        report
    }

    fn send(&self, running: &Running, c: Command) {
        if let Some(tx) = &running.commands {
            // a full channel drops the command: the engine never waits on a page
            let _ = tx.try_send(c);
        }
    }

    fn send_reset(&self, running: &Running) {
        self.send(running, Command::Reset);
        for c in &self.hold {
            self.send(running, c.clone());
        }
    }

    /// A fresh live engine at the initial state.
    fn go_live(&self, running: &mut Running) {
        running.report = Live::stop_engine(running);
        match Simulation::new(self.model.clone()) {
            Ok(sim) => {
                let mut options = self.options.clone();
                options.replay = None;
                options.duration_s = None;
                self.set_mode(LIVE);
                self.framing.paused.store(false, Ordering::SeqCst);
                if let Err(e) = self.start_engine(running, sim, options, true) {
                    eprintln!("viewer: cannot start the engine again: {e}");
                }
            }
            Err(e) => eprintln!("viewer: cannot start the model again: {e}"),
        }
    }

    fn record_stop(&self, running: &mut Running) {
        if self.mode() == RECORDING {
            let to_step = self.framing.last_step.load(Ordering::SeqCst);
            let end_frame = self
                .hub
                .upgrade()
                .map_or_else(|| Arc::from("{}"), |h| h.latest());
            running.recorded = Some(Recorded { to_step, end_frame });
            self.set_mode(LIVE);
        }
    }

    fn replay(&self, running: &mut Running) {
        self.record_stop(running);
        let Some(to_step) = running.recorded.as_ref().map(|r| r.to_step) else {
            return;
        };
        if self.mode() != LIVE {
            return;
        }
        let Some(report) = Live::stop_engine(running) else {
            return;
        };
        let segment = segment(&report.recording, to_step);
        running.report = Some(report);
        let Some((recording, n_steps)) = segment else {
            self.go_live(running);
            return;
        };
        match Simulation::new(self.model.clone()) {
            Ok(sim) => {
                let mut options = self.options.clone();
                options.duration_s = Some(n_steps as f64 * sim.model().step_s());
                options.replay = Some(recording);
                self.set_mode(REPLAY);
                self.framing.paused.store(false, Ordering::SeqCst);
                if let Err(e) = self.start_engine(running, sim, options, false) {
                    eprintln!("viewer: cannot start the replay: {e}");
                }
            }
            Err(e) => eprintln!("viewer: cannot start the model again: {e}"),
        }
    }

    fn handle(&self, msg: ClientMessage) {
        let Ok(mut running) = self.running.lock() else {
            return;
        };
        let replaying = self.mode() >= REPLAY;
        match msg {
            ClientMessage::Pause => self.framing.paused.store(true, Ordering::SeqCst),
            ClientMessage::Resume => self.framing.paused.store(false, Ordering::SeqCst),
            _ => {}
        }
        match msg {
            ClientMessage::Reset | ClientMessage::Live if replaying => self.go_live(&mut running),
            ClientMessage::Live => {}
            ClientMessage::Reset => self.send_reset(&running),
            ClientMessage::Record => {
                if replaying {
                    self.go_live(&mut running);
                }
                self.send_reset(&running);
                self.set_mode(RECORDING);
            }
            ClientMessage::RecordStop => self.record_stop(&mut running),
            ClientMessage::Replay => self.replay(&mut running),
            other => {
                if let Some(c) = other.command() {
                    self.send(&running, c);
                }
            }
        }
    }
}

/// The part of `rec` from its last reset at or before `to_step` up to (not including)
/// `to_step`, with steps counted from that reset, and the number of steps it spans; none
/// without such a reset.
pub fn segment(rec: &Recording, to_step: u64) -> Option<(Recording, u64)> {
    let start = rec
        .events
        .iter()
        .rposition(|e| e.action == Action::Reset && e.step <= to_step)?;
    let k0 = rec.events[start].step;
    let events = rec.events[start + 1..]
        .iter()
        .filter(|e| e.step < to_step)
        .map(|e| Event {
            step: e.step - k0,
            action: e.action.clone(),
        })
        .collect();
    Some((
        Recording {
            model: rec.model.clone(),
            step_s: rec.step_s,
            events,
        },
        to_step - k0,
    ))
}

fn framing_reset(f: &Framing) {
    f.last_step.store(0, Ordering::SeqCst);
}

pub(crate) fn spawn(
    name: &str,
    f: impl FnOnce() + Send + 'static,
) -> Result<JoinHandle<()>, ServeError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(ServeError::Thread)
}

fn broadcast(
    hub: &Hub,
    framing: &Framing,
    snapshots: &Receiver<Snapshot>,
    recycle: &SyncSender<Snapshot>,
    end_step: Option<u64>,
) {
    let mut buf = String::with_capacity(4096);
    let mut hud = framing.hud.state();
    // what the pages have of the terrain (the scene's start), and the frames sent
    let mut terrain_mm: Vec<i32> = framing
        .scene
        .terrain
        .as_ref()
        .map(|t| t.heights_mm.clone())
        .unwrap_or_default();
    let mut sent: u64 = 0;
    while !hub.stop.load(Ordering::SeqCst) {
        match snapshots.recv_timeout(Duration::from_millis(50)) {
            Ok(snap) => {
                framing
                    .hud
                    .update(&mut hud, snap.time_s, &snap.poses, &snap.outputs);
                let mut mode = framing.mode.load(Ordering::SeqCst);
                if mode == REPLAY && end_step.is_some_and(|n| snap.step >= n) {
                    mode = REPLAY + 1;
                }
                let info = FrameInfo {
                    paused: framing.paused.load(Ordering::SeqCst),
                    mode: MODES[usize::from(mode).min(MODES.len() - 1)],
                    hud: &hud,
                };
                write_frame(&mut buf, &framing.scene, &framing.operator, &snap, &info);
                if let Some(Ok(mut game)) = framing.game.as_ref().map(Mutex::lock) {
                    game.observe(&snap);
                    buf.pop(); // the frame's closing brace
                    buf.push_str(",\"game\":");
                    game.write_json(&mut buf);
                    buf.push('}');
                }
                sent += 1;
                crate::protocol::write_terrain(
                    &mut buf,
                    &snap.terrain_m,
                    &mut terrain_mm,
                    sent.is_multiple_of(crate::protocol::TERRAIN_FULL_EVERY),
                );
                framing.last_step.store(snap.step, Ordering::SeqCst);
                let _ = recycle.try_send(snap);
                hub.publish(&buf);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
}

fn accept(hub: &Arc<Hub>, listener: &TcpListener) {
    while !hub.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let hub = Arc::clone(hub);
                let _ = std::thread::Builder::new()
                    .name("hydraulink-viewer-conn".into())
                    .spawn(move || connection(&hub, stream));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// The request line's path, peeked (not consumed, so a WebSocket handshake can read it again).
fn peek_path(stream: &TcpStream) -> Option<String> {
    let mut buf = [0u8; 2048];
    for _ in 0..200 {
        let n = stream.peek(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&buf[..n]);
        if let Some(line) = text.split("\r\n").next().filter(|_| text.contains("\r\n")) {
            let mut parts = line.split(' ');
            return match (parts.next(), parts.next()) {
                (Some("GET"), Some(path)) => Some(path.to_string()),
                _ => None,
            };
        }
        if n == buf.len() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

fn connection(hub: &Arc<Hub>, stream: TcpStream) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let Some(path) = peek_path(&stream) else {
        let _ = respond(stream, "400 Bad Request", "text/plain", b"bad request\n");
        return;
    };
    if path.split('?').next() == Some("/ws") {
        websocket(hub, stream);
        return;
    }
    let extra = hub.controller.get().and_then(|c| c.get(&path));
    let (status, content_type, body): (&str, &str, Vec<u8>) = match (path.as_str(), extra) {
        (_, Some(body)) => ("200 OK", "application/json", body.into_bytes()),
        ("/scene", _) => (
            "200 OK",
            "application/json",
            hub.scene_json.clone().into_bytes(),
        ),
        ("/state", _) => (
            "200 OK",
            "application/json",
            hub.latest().as_bytes().to_vec(),
        ),
        (p, _) => match crate::assets::find(p) {
            Some(a) => ("200 OK", a.content_type, a.bytes.to_vec()),
            None => ("404 Not Found", "text/plain", b"not found\n".to_vec()),
        },
    };
    let _ = respond(stream, status, content_type, &body);
}

/// Reads the rest of the request head, then writes a response and closes.
fn respond(
    mut stream: TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
        if stream.read(&mut byte)? == 0 {
            break;
        }
        head.push(byte[0]);
    }
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    stream.flush()
}

fn websocket(hub: &Arc<Hub>, stream: TcpStream) {
    let Ok(mut ws) = tungstenite::accept(stream) else {
        return;
    };
    let (tx, rx) = sync_channel::<Arc<str>>(PAGE_QUEUE);
    if let Ok(mut pages) = hub.pages.lock() {
        pages.push(tx);
    }
    let _ = ws
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(2)));
    if ws.send(Message::text(hub.scene_json.clone())).is_err() {
        return;
    }
    if let Some(c) = hub.controller.get() {
        c.page_connected();
    }
    while !hub.stop.load(Ordering::SeqCst) {
        match ws.read() {
            Ok(Message::Text(t)) => {
                if let Some(c) = hub.controller.get() {
                    if !c.handle_text(t.as_str()) {
                        if let Ok(msg) = serde_json::from_str::<ClientMessage>(t.as_str()) {
                            c.handle(msg);
                        }
                    }
                }
            }
            Ok(Message::Close(_)) => break,
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
        match rx.recv_timeout(Duration::from_millis(8)) {
            Ok(frame) => {
                if ws.send(Message::text(frame.to_string())).is_err() {
                    break;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let _ = ws.close(None);
}

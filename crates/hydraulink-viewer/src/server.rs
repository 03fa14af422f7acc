//! The server: HTTP for the page's files and two JSON endpoints, and a WebSocket (`/ws`) per
//! page, on 127.0.0.1. One real-time engine runs the model; a broadcaster thread turns each
//! snapshot into a frame and hands it to every connected page through a bounded queue of its
//! own (a slow page loses frames, never the engine a step).
//!
//! ```text
//!  engine thread ──snapshots──▶ broadcaster ──frame──▶ page queue ──▶ connection thread ──ws──▶ page
//!        ▲                           └──▶ latest frame (GET /state)
//!        └────────── commands (bounded, try_send) ◀── connection thread ◀──ws── page input
//! ```
//!
//! HTTP paths: the embedded files ([`crate::assets`]), `/scene` (the scene message),
//! `/state` (the latest frame), `/leaderboard` (the game's best 20, [`crate::game_host`]), `/ws`
//! (the WebSocket upgrade). Every HTTP response closes its connection.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use hydraulink::model::spec::ModelSpec;
use hydraulink::Simulation;
use hydraulink_rt::{Command, Engine, EngineError, EngineOptions, Report, Snapshot, SystemClock};
use thiserror::Error;
use tungstenite::Message;

use crate::game_host::{GameHost, GameHostError, GameMessage, GameOptions};
use crate::protocol::{scene_message, write_frame, ClientMessage};
use crate::scene::Scene;

/// How a server runs.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// TCP port on 127.0.0.1; 0: any free port.
    pub port: u16,
    /// The engine's options; its `outputs` are replaced by the gauges' columns and, when its
    /// `bindings` are empty, the scene's default bindings are used.
    pub engine: EngineOptions,
    /// Let the model's own input signals drive the operator inputs until a key or axis moves
    /// them; false (default): hold them at 0 from the start and after each reset.
    pub play_signals: bool,
    /// Play the game ([`crate::game_host`]): its state in every frame, started from the page.
    pub game: Option<GameOptions>,
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
    /// A thread cannot be started.
    #[error("thread: {0}")]
    Thread(std::io::Error),
    /// The game cannot be set up (a `[game]` column the model lacks, an unreadable leaderboard).
    #[error("game: {0}")]
    Game(#[from] GameHostError),
}

/// What the connection threads share.
struct Shared {
    scene_json: String,
    latest: Mutex<Arc<str>>,
    pages: Mutex<Vec<SyncSender<Arc<str>>>>,
    commands: SyncSender<Command>,
    /// Commands sent after each reset (the operator inputs held at 0), and at the start.
    hold: Vec<Command>,
    paused: AtomicBool,
    stop: AtomicBool,
    frames: AtomicU64,
    frame_bytes: AtomicU64,
    game: Option<Mutex<GameHost>>,
}

/// A running server; [`Server::stop`] ends it.
pub struct Server {
    url: String,
    addr: SocketAddr,
    shared: Arc<Shared>,
    engine: Option<Engine>,
    threads: Vec<JoinHandle<()>>,
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
    /// Starts the engine on `sim` (built from `spec`) and the server around it.
    pub fn start(
        spec: &ModelSpec,
        sim: Simulation,
        options: ServeOptions,
    ) -> Result<Server, ServeError> {
        let listener =
            TcpListener::bind(("127.0.0.1", options.port)).map_err(|source| ServeError::Bind {
                port: options.port,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Bind {
            port: options.port,
            source,
        })?;
        let labels = sim.output_labels();
        let mut scene = Scene::new(spec, sim.model().step_s(), &labels);
        scene.obstacles = crate::scene::obstacles(sim.model());
        let mut engine_options = options.engine;
        let mut outputs: Vec<String> = scene.gauges.iter().map(|g| g.label.clone()).collect();
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
            engine_options.bindings = scene.default_bindings();
        }
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
        let engine = Engine::spawn(sim, engine_options, SystemClock::new())?;
        for c in &hold {
            let _ = engine.channels.commands.try_send(c.clone());
        }
        let shared = Arc::new(Shared {
            scene_json: scene_message(&scene),
            latest: Mutex::new(Arc::from("{}")),
            pages: Mutex::new(Vec::new()),
            commands: engine.channels.commands.clone(),
            hold,
            paused: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            frames: AtomicU64::new(0),
            frame_bytes: AtomicU64::new(0),
            game,
        });
        let mut threads = Vec::new();
        // the broadcaster owns the snapshot receiver: the engine keeps a closed stand-in
        let mut engine = engine;
        let snapshots = std::mem::replace(&mut engine.channels.snapshots, sync_channel(1).1);
        let recycle = engine.channels.recycle.clone();
        {
            let shared = Arc::clone(&shared);
            threads.push(spawn("hydraulink-viewer-frames", move || {
                broadcast(&shared, &scene, &operator, &snapshots, &recycle)
            })?);
        }
        {
            let shared = Arc::clone(&shared);
            listener.set_nonblocking(true).map_err(ServeError::Thread)?;
            threads.push(spawn("hydraulink-viewer-accept", move || {
                accept(&shared, &listener)
            })?);
        }
        Ok(Server {
            url: format!("http://{addr}/"),
            addr,
            shared,
            engine: Some(engine),
            threads,
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
        (
            self.shared.frames.load(Ordering::Relaxed),
            self.shared.frame_bytes.load(Ordering::Relaxed),
        )
    }

    /// Whether the engine has ended (a failed step, or the duration reached).
    pub fn engine_finished(&self) -> bool {
        self.engine.as_ref().is_none_or(Engine::is_finished)
    }

    /// Stops the engine and the threads; returns the engine's report.
    pub fn stop(mut self) -> Option<Report> {
        self.shared.stop.store(true, Ordering::SeqCst);
        let report = self.engine.take().map(Engine::stop);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        report
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, ServeError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(ServeError::Thread)
}

fn broadcast(
    shared: &Shared,
    scene: &Scene,
    operator: &[usize],
    snapshots: &Receiver<Snapshot>,
    recycle: &SyncSender<Snapshot>,
) {
    let mut buf = String::with_capacity(4096);
    while !shared.stop.load(Ordering::SeqCst) {
        match snapshots.recv_timeout(Duration::from_millis(50)) {
            Ok(snap) => {
                let paused = shared.paused.load(Ordering::SeqCst);
                write_frame(&mut buf, scene, operator, &snap, paused);
                if let Some(Ok(mut game)) = shared.game.as_ref().map(Mutex::lock) {
                    game.observe(&snap);
                    buf.pop(); // the frame's closing brace
                    buf.push_str(",\"game\":");
                    game.write_json(&mut buf);
                    buf.push('}');
                }
                let _ = recycle.try_send(snap);
                let frame: Arc<str> = Arc::from(buf.as_str());
                shared.frames.fetch_add(1, Ordering::Relaxed);
                shared
                    .frame_bytes
                    .fetch_add(frame.len() as u64, Ordering::Relaxed);
                if let Ok(mut latest) = shared.latest.lock() {
                    *latest = Arc::clone(&frame);
                }
                if let Ok(mut pages) = shared.pages.lock() {
                    // a full queue loses this frame; a closed one is a page gone
                    pages.retain(|p| {
                        !matches!(
                            p.try_send(Arc::clone(&frame)),
                            Err(TrySendError::Disconnected(_))
                        )
                    });
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
}

fn accept(shared: &Arc<Shared>, listener: &TcpListener) {
    while !shared.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let shared = Arc::clone(shared);
                let _ = std::thread::Builder::new()
                    .name("hydraulink-viewer-conn".into())
                    .spawn(move || connection(&shared, stream));
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

fn connection(shared: &Arc<Shared>, stream: TcpStream) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let Some(path) = peek_path(&stream) else {
        let _ = respond(stream, "400 Bad Request", "text/plain", b"bad request\n");
        return;
    };
    if path.split('?').next() == Some("/ws") {
        websocket(shared, stream);
        return;
    }
    let (status, content_type, body): (&str, &str, Vec<u8>) = match path.as_str() {
        "/scene" => (
            "200 OK",
            "application/json",
            shared.scene_json.clone().into_bytes(),
        ),
        "/state" => {
            let latest = shared
                .latest
                .lock()
                .map(|l| l.to_string())
                .unwrap_or_default();
            ("200 OK", "application/json", latest.into_bytes())
        }
        "/leaderboard" => match shared.game.as_ref().map(Mutex::lock) {
            Some(Ok(game)) => (
                "200 OK",
                "application/json",
                game.leaderboard_json(20).into_bytes(),
            ),
            _ => ("404 Not Found", "text/plain", b"no game\n".to_vec()),
        },
        p => match crate::assets::find(p) {
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

fn websocket(shared: &Arc<Shared>, stream: TcpStream) {
    let Ok(mut ws) = tungstenite::accept(stream) else {
        return;
    };
    let (tx, rx) = sync_channel::<Arc<str>>(PAGE_QUEUE);
    if let Ok(mut pages) = shared.pages.lock() {
        pages.push(tx);
    }
    let _ = ws
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(2)));
    if ws.send(Message::text(shared.scene_json.clone())).is_err() {
        return;
    }
    while !shared.stop.load(Ordering::SeqCst) {
        match ws.read() {
            Ok(Message::Text(t)) => handle(shared, t.as_str()),
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

/// One message from a page: forwarded to the engine without waiting (a full command channel
/// drops it); a reset is followed by the hold commands.
fn handle(shared: &Shared, text: &str) {
    if let Ok(msg) = serde_json::from_str::<GameMessage>(text) {
        let start = match shared.game.as_ref().map(Mutex::lock) {
            Some(Ok(mut game)) => game.handle(&msg),
            _ => false,
        };
        if start {
            // an attempt starts from the initial state
            let _ = shared.commands.try_send(hydraulink_rt::Command::Reset);
            for c in &shared.hold {
                let _ = shared.commands.try_send(c.clone());
            }
        }
        return;
    }
    let Ok(msg) = serde_json::from_str::<ClientMessage>(text) else {
        return;
    };
    match msg {
        ClientMessage::Pause => shared.paused.store(true, Ordering::SeqCst),
        ClientMessage::Resume => shared.paused.store(false, Ordering::SeqCst),
        _ => {}
    }
    let reset = msg == ClientMessage::Reset;
    let _ = shared.commands.try_send(msg.command());
    if reset {
        for c in &shared.hold {
            let _ = shared.commands.try_send(c.clone());
        }
    }
}

//! Issue 23: the simulated clock of `serve` starts when the first page connects (the first
//! view showed 18.4 s gone), or with `start_paused` at the page's Resume.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use hydraulink_viewer::{ServeOptions, Server};
use serde_json::Value;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

type Ws = WebSocket<MaybeTlsStream<TcpStream>>;

fn fourbar_server(start_paused: bool) -> Server {
    let spec = hydraulink_io::parse_model(hydraulink_io::DEFAULT_MODEL, "fourbar").unwrap();
    let sim = hydraulink::Simulation::new(hydraulink::compile(&spec).unwrap()).unwrap();
    let options = ServeOptions {
        start_paused,
        ..ServeOptions::default()
    };
    Server::start(&spec, sim, options).expect("server starts")
}

fn get_state(server: &Server) -> String {
    let mut s = TcpStream::connect(server.addr()).expect("connects");
    write!(
        s,
        "GET /state HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_string()
}

/// The next frame the page gets.
fn next_frame(ws: &mut Ws) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "no frame in 10 s");
        if let Ok(Message::Text(t)) = ws.read() {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["type"] == "frame" {
                return v;
            }
        }
    }
}

/// The latest frame after draining what is queued for `wait`.
fn frame_after(ws: &mut Ws, wait: Duration) -> Value {
    let end = Instant::now() + wait;
    let mut last = next_frame(ws);
    while Instant::now() < end {
        last = next_frame(ws);
    }
    last
}

#[test]
fn the_clock_starts_when_the_first_page_connects() {
    let server = fourbar_server(false);
    std::thread::sleep(Duration::from_millis(600));
    // no page yet: no engine, no frame, no simulated time gone
    assert!(!server.engine_started());
    assert!(!server.engine_finished(), "waiting is not finished");
    assert_eq!(get_state(&server), "{}");
    let connected = Instant::now();
    let (mut ws, _) = tungstenite::connect(format!("ws://{}/ws", server.addr())).expect("ws");
    let f = frame_after(&mut ws, Duration::from_millis(500));
    let wall = connected.elapsed().as_secs_f64();
    let t = f["t"].as_f64().unwrap();
    assert!(server.engine_started());
    // the clock runs from the connection, not from the server's start 0.6 s before it
    assert!(
        t > 0.1 && t <= wall + 0.02,
        "t = {t} s after {wall:.3} s connected"
    );
    assert_eq!(f["paused"], false);
    drop(ws);
    server.stop();
}

#[test]
fn start_paused_waits_for_the_pages_resume() {
    let server = fourbar_server(true);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!server.engine_started());
    let (mut ws, _) = tungstenite::connect(format!("ws://{}/ws", server.addr())).expect("ws");
    let f = frame_after(&mut ws, Duration::from_millis(600));
    assert_eq!(f["paused"], true, "{f}");
    // the engine reads the pause before each step: at most its first step ran
    assert!(f["t"].as_f64().unwrap() <= 1e-3 + 1e-12, "{}", f["t"]);
    ws.send(Message::text(r#"{"type":"resume"}"#)).unwrap();
    let f = frame_after(&mut ws, Duration::from_millis(600));
    assert_eq!(f["paused"], false, "{f}");
    assert!(f["t"].as_f64().unwrap() > 0.1, "{}", f["t"]);
    drop(ws);
    server.stop();
}

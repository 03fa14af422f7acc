//! The viewer in real headless Chromium (Debian's `chromium`), driven over the DevTools
//! protocol: the excavator page loads without console errors, its canvas is not blank, a held
//! `W` raises the boom (seen in the server's state: the boom cylinder extends) and the canvas
//! changes with it. Chromium missing: `scripts/install_chromium.sh` is run, and if it is still
//! missing the test fails (it never skips).
//!
//! The screenshot is written to the temporary directory, or to `docs/viewer-excavator.png` with
//! `HYDRAULINK_WRITE_SCREENSHOT=1`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hydraulink_viewer::{ServeOptions, Server};
use serde_json::{json, Value};
use tungstenite::Message;

const CHROMIUM: &str = "/usr/bin/chromium";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The browser tests run one at a time: four software-rendered pages on a 2-core machine
/// starve one another, and the game attempt's script (sampled on the page's round trips) then
/// plays a different attempt than the machine's cycle.
static ONE_BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner())
}

fn ensure_chromium() {
    if Path::new(CHROMIUM).exists() {
        return;
    }
    let script = repo().join("scripts/install_chromium.sh");
    let status = Command::new("bash").arg(&script).status();
    assert!(
        Path::new(CHROMIUM).exists(),
        "the browser tests need Debian's chromium at {CHROMIUM}; {} did not install it ({status:?}): \
         run it as root (`apt-get install -y chromium`)",
        script.display()
    );
}

/// Chromium, killed on drop; its profile in a fresh temporary directory.
struct Browser {
    child: Child,
    profile: PathBuf,
    ws_url: String,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn launch(name: &str) -> Browser {
    let profile =
        std::env::temp_dir().join(format!("hydraulink-chromium-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1024,700",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(i) = line.find("ws://") {
                let _ = tx.send(line[i..].trim().to_string());
            }
        }
    });
    let ws_url = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("chromium prints \"DevTools listening on ws://…\" within 30 s");
    Browser {
        child,
        profile,
        ws_url,
    }
}

/// A plain HTTP GET on 127.0.0.1; the body.
fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connects");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // read the head, then Content-Length bytes (DevTools keeps the connection open)
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).expect("HTTP response");
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(usize::MAX);
            if body.len() >= length || n == 0 {
                return body.to_string();
            }
        }
        assert!(n > 0, "HTTP response ended early: {text}");
    }
}

/// A DevTools session on the first page target.
struct Cdp {
    ws: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next: u64,
    /// Console errors and uncaught exceptions seen so far.
    errors: Vec<String>,
}

impl Cdp {
    fn connect(browser: &Browser) -> Cdp {
        // ws://127.0.0.1:PORT/devtools/browser/… → the page list on the same port
        let host = browser.ws_url["ws://".len()..]
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let list: Value =
            serde_json::from_str(&http_get(&host, "/json/list")).expect("target list");
        let page = list
            .as_array()
            .and_then(|l| l.iter().find(|t| t["type"] == "page"))
            .expect("a page target");
        let url = page["webSocketDebuggerUrl"].as_str().unwrap();
        let (ws, _) = tungstenite::connect(url).expect("DevTools WebSocket");
        Cdp {
            ws,
            next: 0,
            errors: Vec::new(),
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let msg = json!({"id": id, "method": method, "params": params});
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let m = self.ws.read().expect("DevTools message");
            let Message::Text(t) = m else { continue };
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {}", v["error"]);
                return v["result"].clone();
            }
            match v["method"].as_str() {
                Some("Runtime.exceptionThrown") => self
                    .errors
                    .push(v["params"]["exceptionDetails"].to_string()),
                Some("Runtime.consoleAPICalled") if v["params"]["type"] == "error" => {
                    self.errors.push(v["params"]["args"].to_string())
                }
                _ => {}
            }
        }
    }

    fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expression}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    fn key(&mut self, key: &str, code: &str, vk: u32, down: bool) {
        self.call(
            "Input.dispatchKeyEvent",
            json!({"type": if down { "keyDown" } else { "keyUp" }, "key": key, "code": code,
                   "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}),
        );
    }
}

/// The page's canvas, shrunk to 64 × 44 grey levels.
const PIXELS: &str = "(() => { const c = document.querySelector('#view canvas'); \
    const o = document.createElement('canvas'); o.width = 64; o.height = 44; \
    const g = o.getContext('2d'); g.drawImage(c, 0, 0, 64, 44); \
    const d = g.getImageData(0, 0, 64, 44).data; const out = []; \
    for (let i = 0; i < d.length; i += 4) out.push(Math.round((d[i] + d[i+1] + d[i+2]) / 3)); \
    return out; })()";

fn pixels(cdp: &mut Cdp) -> Vec<i64> {
    cdp.eval(PIXELS)
        .as_array()
        .expect("pixel array")
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

/// The boom cylinder's pin-to-pin length [m] in the server's latest frame.
fn boom_length(addr: &str) -> f64 {
    let frame: Value = serde_json::from_str(&http_get(addr, "/state")).expect("frame JSON");
    let e: Vec<f64> = frame["cylinders"][0]
        .as_array()
        .expect("cylinders")
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    ((e[3] - e[0]).powi(2) + (e[4] - e[1]).powi(2) + (e[5] - e[2]).powi(2)).sqrt()
}

fn decode_base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=' && c != b'\n').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let v: Vec<u32> = chunk.iter().map(|&c| u32::from(val(c))).collect();
        let n = v
            .iter()
            .enumerate()
            .fold(0u32, |a, (i, x)| a | x << (18 - 6 * i));
        for k in 0..chunk.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * k)) as u8);
        }
    }
    out
}

#[test]
fn excavator_page_renders_and_a_key_raises_the_boom() {
    let _one = one_at_a_time();
    ensure_chromium();
    let started = Instant::now();
    let path = repo().join("models/excavator.toml");
    // on its worksite, as `hydraulink serve models/excavator.toml` shows it
    let (spec, _) = hydraulink_io::with_scene(
        hydraulink_io::load_model(&path).expect("shipped model loads"),
        &hydraulink_io::SceneChoice::Model,
        Some(&path),
    )
    .expect("the machine with its worksite loads");
    let model = hydraulink::compile(&spec).expect("compiles");
    let sim = hydraulink::Simulation::new(model).expect("initializes");
    let options = ServeOptions {
        model_dir: path.parent().map(Path::to_path_buf),
        ..ServeOptions::default()
    };
    let server = Server::start(&spec, sim, options).expect("server starts");
    let addr = server.addr().to_string();
    let browser = launch("excavator");
    let mut cdp = Cdp::connect(&browser);
    cdp.call("Runtime.enable", json!({}));
    cdp.call("Page.enable", json!({}));
    cdp.call("Page.navigate", json!({"url": server.url()}));
    // the scene arrives and frames follow
    let deadline = Instant::now() + Duration::from_secs(30);
    while cdp
        .eval("(window.hydraulink && window.hydraulink.ready) ? window.hydraulink.frames : 0")
        .as_i64()
        .unwrap_or(0)
        < 10
    {
        assert!(
            Instant::now() < deadline,
            "no frames in the page after 30 s: {:?}",
            cdp.errors
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let before = pixels(&mut cdp);
    let mean = before.iter().sum::<i64>() as f64 / before.len() as f64;
    let varied = before
        .iter()
        .filter(|&&p| (p as f64 - mean).abs() > 12.0)
        .count();
    assert!(
        varied > before.len() / 50,
        "the canvas looks blank: {varied} of {} pixels differ from the mean grey {mean:.0}",
        before.len()
    );
    // the HUD shows the server's gauges, labelled by what they measure (issue 23: they read
    // V1.p … V6.p)
    let hud = cdp.eval("document.getElementById('gauge0').textContent");
    assert!(
        hud.as_str().is_some_and(|s| s.ends_with("MPa")),
        "HUD gauge: {hud}"
    );
    let shown: Vec<String> = cdp
        .eval("[...document.querySelectorAll('#gauges .gauge .row span:first-child')].map(e => e.textContent)")
        .as_array()
        .expect("gauge labels")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(shown[0], "boom cyl. piston side", "{shown:?}");
    assert_eq!(shown[5], "bucket cyl. rod side", "{shown:?}");
    assert!(
        shown.iter().all(|l| !l.ends_with(".p") && !l.contains('_')),
        "{shown:?}"
    );
    // the page lists the keys in the documented order
    let keys = cdp.eval("document.getElementById('keys').textContent");
    assert!(
        keys.as_str()
            .is_some_and(|k| k
                .contains("U_boom W/S, U_arm I/K, U_bucket L/J, U_swing A/D, F reframe the view")),
        "{keys}"
    );
    // issue 23: the grid lies under the worksite's ground and sand, so no line shows through
    let ground = cdp.eval(
        "(() => { const s = window.hydraulink.scene; \
         return [window.hydraulink.gridY, Math.min(...s.terrain.heights_mm) * 1e-3, \
         Math.min(...s.obstacles.filter(o => o.kind === 'plane').map(o => o.center[1]))]; })()",
    );
    let (grid_y, sand, plane) = (
        ground[0].as_f64().unwrap(),
        ground[1].as_f64().unwrap(),
        ground[2].as_f64().unwrap(),
    );
    assert!(
        grid_y < sand - 0.02 && grid_y < plane - 0.02,
        "grid at {grid_y} m, sand from {sand} m, ground plane at {plane} m"
    );
    // the camera frames the machine at load
    assert_eq!(cdp.eval("window.hydraulink.framed()"), 1.0);

    let l0 = boom_length(&addr);
    cdp.key("w", "KeyW", 87, true);
    std::thread::sleep(Duration::from_millis(1500));
    cdp.key("w", "KeyW", 87, false);
    std::thread::sleep(Duration::from_millis(300));
    let l1 = boom_length(&addr);
    assert!(
        l1 > l0 + 0.02,
        "holding W 1.5 s extends the boom cylinder (boom up): {l0:.4} m -> {l1:.4} m"
    );
    let after = pixels(&mut cdp);
    let changed = before
        .iter()
        .zip(&after)
        .filter(|(a, b)| (**a - **b).abs() > 8)
        .count();
    assert!(
        changed > 10,
        "the canvas changes when the boom moves: {changed} pixels changed"
    );

    let shot = cdp.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = decode_base64(shot["data"].as_str().expect("screenshot data"));
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    let out = if std::env::var("HYDRAULINK_WRITE_SCREENSHOT").is_ok_and(|v| v == "1") {
        repo().join("docs/viewer-excavator.png")
    } else {
        std::env::temp_dir().join("hydraulink-viewer-excavator.png")
    };
    std::fs::write(&out, &png).expect("screenshot written");
    // a last round trip collects late console messages
    cdp.eval("1");
    assert!(cdp.errors.is_empty(), "console errors: {:?}", cdp.errors);
    let (frames, bytes) = server.frame_bytes();
    let per_frame = bytes as f64 / frames.max(1) as f64;
    eprintln!(
        "boom cylinder {l0:.4} -> {l1:.4} m; {changed} of {} pixels changed; {frames} frames, \
         {per_frame:.0} B each = {:.1} kB/s at 60 Hz; browser test {:.1} s; screenshot {}",
        after.len(),
        per_frame * 60.0 / 1e3,
        started.elapsed().as_secs_f64(),
        out.display()
    );
    assert!(per_frame * 60.0 < 1e6, "stream under 1 MB/s at 60 Hz");
    drop(browser);
    server.stop();
}

/// GET /state (or another JSON path) as JSON.
fn get_json(addr: &str, path: &str) -> Value {
    serde_json::from_str(&http_get(addr, path)).expect("JSON")
}

/// Opens `url` and waits until the page has drawn `n` frames.
fn open_page(cdp: &mut Cdp, url: &str, n: i64) {
    cdp.call("Runtime.enable", json!({}));
    cdp.call("Page.enable", json!({}));
    cdp.call("Page.navigate", json!({"url": url}));
    let deadline = Instant::now() + Duration::from_secs(30);
    while cdp
        .eval("(window.hydraulink && window.hydraulink.ready) ? window.hydraulink.frames : 0")
        .as_i64()
        .unwrap_or(0)
        < n
    {
        assert!(
            Instant::now() < deadline,
            "no frames in the page after 30 s: {:?}",
            cdp.errors
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Polls `f` every 100 ms until it holds or `secs` pass; whether it held.
fn wait_for(secs: f64, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    f()
}

fn click(cdp: &mut Cdp, id: &str) {
    cdp.eval(&format!("document.getElementById('{id}').click()"));
}

/// The loader with its HUD: pause holds the machine while frames keep coming; the gauges show
/// the values of the server's frame; holding W lifts the bucket above 2 m and the first
/// scenario task ticks off; a recording replayed from the initial state ends on the recorded
/// frame's poses, bit for bit. Screenshot: docs/loader-hud.png with
/// `HYDRAULINK_WRITE_SCREENSHOT=1`.
#[test]
fn loader_hud_shows_the_server_values_ticks_a_task_and_replays_a_recording() {
    let _one = one_at_a_time();
    ensure_chromium();
    let started = Instant::now();
    let path = repo().join("models/loader.toml");
    let spec = hydraulink_io::load_model(&path).expect("shipped model loads");
    let model = hydraulink::compile(&spec).expect("compiles");
    let sim = hydraulink::Simulation::new(model).expect("initializes");
    let server = Server::start(&spec, sim, ServeOptions::default()).expect("server starts");
    let addr = server.addr().to_string();
    let browser = launch("loader");
    let mut cdp = Cdp::connect(&browser);
    open_page(&mut cdp, server.url(), 5);

    // pause: the step count stands still, frames keep coming
    click(&mut cdp, "pause");
    assert!(wait_for(3.0, || get_json(&addr, "/state")["paused"] == true));
    std::thread::sleep(Duration::from_millis(200));
    let s0 = get_json(&addr, "/state");
    let f0 = cdp.eval("window.hydraulink.frames").as_i64().unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let s1 = get_json(&addr, "/state");
    let f1 = cdp.eval("window.hydraulink.frames").as_i64().unwrap();
    assert_eq!(s0["step"], s1["step"], "paused: no steps");
    assert!(f1 > f0 + 5, "frames keep coming while paused: {f0} -> {f1}");
    // the HUD shows the server's values: each gauge's text is the frame's value and unit
    let shown = cdp.eval(
        "state_gauges = window.hydraulink.scene.gauges.map((g, i) => \
         document.getElementById('gauge' + i).textContent)",
    );
    let scene = get_json(&addr, "/scene");
    let gauges = scene["scene"]["gauges"].as_array().unwrap().clone();
    let page_decimals = |g: &Value| -> usize {
        match g["range"].as_array() {
            Some(r) => {
                let span = (r[1].as_f64().unwrap() - r[0].as_f64().unwrap())
                    .abs()
                    .max(1e-9);
                (2 - span.log10().floor() as i64).max(0) as usize
            }
            None => 2,
        }
    };
    for (k, g) in gauges.iter().enumerate() {
        let v = s1["gauges"][k].as_f64().expect("a finite gauge");
        let text = format!("{v:.*} {}", page_decimals(g), g["unit"].as_str().unwrap());
        assert_eq!(
            shown[k].as_str().unwrap(),
            text,
            "gauge {k} ({})",
            g["label"]
        );
    }
    click(&mut cdp, "pause"); // resume
    assert!(wait_for(3.0, || get_json(&addr, "/state")["paused"] == false));

    // hold W: the lift raises the bucket pin above 2 m; held 1 s, the first task is done
    assert_eq!(get_json(&addr, "/state")["task"], 0);
    cdp.key("w", "KeyW", 87, true);
    let lifted = wait_for(8.0, || {
        get_json(&addr, "/state")["task"].as_u64() >= Some(1)
    });
    cdp.key("w", "KeyW", 87, false);
    let state = get_json(&addr, "/state");
    assert!(lifted, "task 1 not done after 8 s of W: {state}");
    assert!(
        state["gauges"][0].as_f64().unwrap() > 2.0,
        "bucket height: {state}"
    );
    assert!(wait_for(2.0, || cdp
        .eval("document.getElementById('task0').classList.contains('done')")
        .as_bool()
        .unwrap_or(false)));
    let shot = cdp.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = decode_base64(shot["data"].as_str().expect("screenshot data"));
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    let out = if std::env::var("HYDRAULINK_WRITE_SCREENSHOT").is_ok_and(|v| v == "1") {
        repo().join("docs/loader-hud.png")
    } else {
        std::env::temp_dir().join("hydraulink-loader-hud.png")
    };
    std::fs::write(&out, &png).expect("screenshot written");

    // record: back to the initial state, W held 0.8 s, stop; replay ends on the same poses
    click(&mut cdp, "record");
    assert!(wait_for(3.0, || get_json(&addr, "/state")["mode"] == "recording"));
    std::thread::sleep(Duration::from_millis(200));
    cdp.key("w", "KeyW", 87, true);
    std::thread::sleep(Duration::from_millis(800));
    cdp.key("w", "KeyW", 87, false);
    std::thread::sleep(Duration::from_millis(400));
    click(&mut cdp, "record");
    assert!(wait_for(3.0, || get_json(&addr, "/state")["mode"] == "live"));
    let recorded = get_json(&addr, "/recorded");
    assert!(
        recorded["step"].as_u64().is_some(),
        "a recording: {recorded}"
    );
    click(&mut cdp, "replay");
    assert!(
        wait_for(10.0, || get_json(&addr, "/state")["mode"] == "replay-end"),
        "the replay ends: {}",
        get_json(&addr, "/state")
    );
    let replayed = get_json(&addr, "/state");
    assert_eq!(replayed["t"], recorded["t"]);
    assert_eq!(
        replayed["poses"], recorded["poses"],
        "the replay ends on the recorded poses"
    );
    assert_eq!(replayed["cylinders"], recorded["cylinders"]);
    assert!(
        recorded["cylinders"][0] != s1["cylinders"][0],
        "the recording moved the lift"
    );
    // live again
    click(&mut cdp, "live");
    assert!(wait_for(3.0, || get_json(&addr, "/state")["mode"] == "live"));
    cdp.eval("1");
    assert!(cdp.errors.is_empty(), "console errors: {:?}", cdp.errors);
    eprintln!(
        "loader HUD: pause, gauges, task, record → replay ok; screenshot {}; browser test {:.1} s",
        out.display(),
        started.elapsed().as_secs_f64()
    );
    drop(browser);
    server.stop();
}

/// Writes a finished run of `spec` into `dir` as `hydraulink run` writes it for `view`
/// (results.csv and poses.bin): `duration_s` long, a row every `every_s` (at least every step).
/// Returns Δt and the number of steps.
fn write_finished_run(
    spec: &hydraulink::ModelSpec,
    dir: &std::path::Path,
    duration_s: f64,
    every_s: f64,
) -> (f64, u64) {
    use hydraulink_io::output::poses::{PoseWriter, PosesInfo};
    let model = hydraulink::compile(spec).unwrap();
    let step_s = model.step_s();
    let mut sim = hydraulink::Simulation::new(model).unwrap();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let labels = sim.output_labels();
    let mut csv =
        hydraulink_io::output::CsvWriter::create(&dir.join("results.csv"), &labels).expect("csv");
    let bodies: Vec<String> = sim.model().bodies.iter().map(|b| b.name.clone()).collect();
    let info = PosesInfo {
        model_file: None,
        overrides: vec![],
        bodies: bodies.clone(),
        format: String::new(),
    };
    let mut poses = PoseWriter::create(dir, &info).unwrap();
    let mut row = vec![0.0; labels.len()];
    let mut p = vec![hydraulink::pipeline::simulation::BodyPose::default(); bodies.len()];
    let n = (duration_s / step_s).round() as u64;
    let every = (every_s / step_s).round().max(1.0) as u64;
    for k in 0..=n {
        if k > 0 {
            sim.step().expect("a step");
        }
        if k % every == 0 {
            sim.output_row(&mut row);
            csv.write_row(&row).unwrap();
            sim.body_poses(&mut p);
            poses.write(sim.time_s(), &p).unwrap();
        }
    }
    csv.flush().unwrap();
    poses.finish().unwrap();
    (step_s, n)
}

/// `view`: a finished 2 s run of the four-bar (poses.bin and results.csv written as `run`
/// writes them) plays in the page: the time slider moves, the poses change, a seek jumps.
#[test]
fn view_plays_a_finished_fourbar_run() {
    let _one = one_at_a_time();
    ensure_chromium();
    let spec = hydraulink_io::parse_model(hydraulink_io::DEFAULT_MODEL, "fourbar").unwrap();
    let dir = std::env::temp_dir().join(format!("hydraulink-view-{}", std::process::id()));
    write_finished_run(&spec, &dir, 2.0, 0.0);
    let viewer = hydraulink_viewer::Viewer::start(&spec, 1e-3, &dir, None, 0).expect("view starts");
    let addr = viewer.url()["http://".len()..]
        .trim_end_matches('/')
        .to_string();
    let browser = launch("view");
    let mut cdp = Cdp::connect(&browser);
    open_page(&mut cdp, viewer.url(), 5);
    assert_eq!(
        cdp.eval("document.getElementById('playback').hidden"),
        false,
        "the playback bar shows"
    );
    let a = get_json(&addr, "/state");
    std::thread::sleep(Duration::from_millis(500));
    let b = get_json(&addr, "/state");
    assert_eq!(a["mode"], "view");
    assert!(
        b["t"].as_f64() > a["t"].as_f64(),
        "plays: {} -> {}",
        a["t"],
        b["t"]
    );
    let slider = cdp.eval("parseFloat(document.getElementById('slider').value)");
    assert!(slider.as_f64().unwrap() > 0.0, "the slider moves: {slider}");
    // pause, then seek to 1.5 s
    click(&mut cdp, "pause");
    cdp.eval(
        "(() => { const s = document.getElementById('slider'); s.value = 1.5; \
         s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); })()",
    );
    // 10 s, not 3: on a loaded machine (load average 8, four builds) the seek took longer than
    // 3 s once; the position it must reach is unchanged
    assert!(wait_for(10.0, || (get_json(&addr, "/state")["t"]
        .as_f64()
        .unwrap()
        - 1.5)
        .abs()
        < 2e-3));
    // the four-bar starts at rest; by 1.5 s the valve has moved it
    let c = get_json(&addr, "/state");
    assert_ne!(a["poses"], c["poses"], "the poses change");
    assert_eq!(c["paused"], true);
    cdp.eval("1");
    assert!(cdp.errors.is_empty(), "console errors: {:?}", cdp.errors);
    drop(browser);
    viewer.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A game attempt on `models/excavator.toml` with its worksite (the sand, the hopper and the
/// game come with it), as `hydraulink serve models/excavator.toml` plays it, in the page: the name typed into the
/// game panel, Enter starts the attempt (the machine and the sand are reset to the start), and
/// the scripted input sequence, the model's own dig–swing–dump signals, played by the engine
/// on its own clock (`--play-signals`: the signals restart with the reset), digs the pile and
/// dumps 1103 kg into the hopper at about 11 s. (Sent from the test through the page, the
/// same sequence arrives with the page's round trips as its clock, and on a loaded machine
/// plays another attempt; keys and `set` messages through the page are the excavator page
/// test's.) The goal is set to 900 kg (one bucket load; the default 2 t takes three aimed passes,
/// which `tests/game.rs` plays without the browser), so the attempt ends as reached; the
/// panel, the server's state, the log, the leaderboard and the page's drawn sand agree.
#[test]
fn excavator_game_attempt_loads_the_hopper() {
    use hydraulink::model::spec::GameSpec;
    use hydraulink_viewer::game_host::GameOptions;

    let _one = one_at_a_time();
    ensure_chromium();
    let started = Instant::now();
    let path = repo().join("models/excavator.toml");
    let (mut spec, _) = hydraulink_io::with_scene(
        hydraulink_io::load_model(&path).expect("shipped model loads"),
        &hydraulink_io::SceneChoice::Model,
        Some(&path),
    )
    .expect("the machine with its worksite loads");
    let game = GameSpec {
        goal_kg: 900.0,
        ..spec.game.clone().expect("the worksite has a [game] table")
    };
    spec.game = Some(game.clone());
    let dir = std::env::temp_dir().join(format!("hydraulink-game-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let options = ServeOptions {
        game: Some(GameOptions {
            spec: game,
            leaderboard: dir.join("leaderboard.json"),
            log: dir.join("game-log.csv"),
            variants: hydraulink_io::variant_choices(&spec),
        }),
        model_dir: path.parent().map(Path::to_path_buf),
        play_signals: true,
        ..ServeOptions::default()
    };
    let model = hydraulink::compile(&spec).expect("compiles");
    let sim = hydraulink::Simulation::new(model).expect("initializes");
    let server = Server::start(&spec, sim, options).expect("server starts");
    let browser = launch("game");
    let mut cdp = Cdp::connect(&browser);
    cdp.call("Runtime.enable", json!({}));
    cdp.call("Page.enable", json!({}));
    cdp.call("Page.navigate", json!({"url": server.url()}));
    let phase = |cdp: &mut Cdp| {
        cdp.eval("window.hydraulinkGame && window.hydraulinkGame.state ? window.hydraulinkGame.state.phase : ''")
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while phase(&mut cdp) != "waiting" {
        assert!(Instant::now() < deadline, "no game panel: {:?}", cdp.errors);
        std::thread::sleep(Duration::from_millis(100));
    }
    // the name, typed; Enter starts the first attempt
    cdp.eval("document.getElementById('game-name').focus()");
    cdp.call("Input.insertText", json!({"text": "Scripted"}));
    cdp.key("Enter", "Enter", 13, true);
    cdp.key("Enter", "Enter", 13, false);
    let deadline = Instant::now() + Duration::from_secs(10);
    while phase(&mut cdp) != "running" {
        assert!(
            Instant::now() < deadline,
            "the attempt does not start: {:?}",
            cdp.errors
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // the engine plays the cycle from the reset; the attempt ends when the hopper holds 900 kg
    let wall = Instant::now();
    loop {
        let state: Value = serde_json::from_str(
            cdp.eval("JSON.stringify(window.hydraulinkGame.state)")
                .as_str()
                .unwrap_or("{}"),
        )
        .unwrap_or(Value::Null);
        if state["phase"] != "running" {
            break;
        }
        let t = state["time_s"].as_f64().unwrap_or(0.0);
        assert!(
            t < 25.0 && wall.elapsed() < Duration::from_secs(150),
            "the hopper is not loaded after {t} s ({:.0} s of wall time): {state}; engine {}",
            wall.elapsed().as_secs_f64(),
            get_json(&server.addr().to_string(), "/state")["stats"]
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let state: Value =
        serde_json::from_str(&http_get(&server.addr().to_string(), "/state")).expect("frame");
    let g = &state["game"];
    assert_eq!(g["phase"], "attempt_over", "{g}");
    let a = &g["results"][0];
    assert_eq!(a["outcome"], "goal_reached", "{g}");
    let hopper = g["hopper_kg"].as_f64().unwrap();
    assert!(hopper >= 900.0, "{g}");
    let (time_s, fuel_l) = (a["time_s"].as_f64().unwrap(), a["fuel_l"].as_f64().unwrap());
    // the panel shows what the server sent
    let shown = cdp.eval("document.getElementById('game-results').textContent");
    assert!(
        shown
            .as_str()
            .is_some_and(|s| s.starts_with("attempt 1: goal reached")),
        "panel: {shown}"
    );
    let button = cdp.eval("document.getElementById('game-start').textContent");
    assert_eq!(button, "Next attempt (2/3)");
    // the page drew the sand and followed the digging: the sand its surface holds went down by
    // what the attempt put into the hopper (and what the bucket still holds), to the mm rounding
    let volumes = cdp.eval(
        "(() => { const t = window.hydraulink.scene.terrain, p = window.hydraulink.terrainSurface(); \
         const a = t.cell * t.cell * 1e-3; \
         return [t.heights_mm.reduce((s, h) => s + h, 0) * a, p.reduce((s, h) => s + h, 0) * a]; })()",
    );
    let (v0, v1) = (volumes[0].as_f64().unwrap(), volumes[1].as_f64().unwrap());
    let hopper_m3 = hopper / 1600.0;
    assert!(
        v0 - v1 >= hopper_m3 - 0.05,
        "the page's sand went from {v0:.3} to {v1:.3} m³ with {hopper_m3:.3} m³ in the hopper"
    );
    let log = std::fs::read_to_string(dir.join("game-log.csv")).expect("attempt log");
    assert!(
        log.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("Scripted,excavator,")),
        "{log}"
    );
    cdp.eval("1");
    assert!(cdp.errors.is_empty(), "console errors: {:?}", cdp.errors);
    eprintln!(
        "game attempt: goal reached with {hopper:.0} kg in the hopper after {time_s:.2} s, \
         {fuel_l:.4} L of fuel, reach max {} m; browser test {:.1} s",
        log.lines()
            .nth(1)
            .and_then(|l| l.rsplit(',').nth(3))
            .unwrap_or("?"),
        started.elapsed().as_secs_f64()
    );
    drop(browser);
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 23, `view` of the shipped four-bar: at 3 s (well extended) the cylinder's rod and
/// barrel overlap as drawn; the camera frames the machine at load and `F` frames it again
/// after the view was moved; the grid lies at the machine's lowest point; the panel shows the
/// run's own figures from summary.json (steps, real-time factor, drift) and not the player's
/// engine's. Screenshot: docs/viewer-fourbar-view.png with `HYDRAULINK_WRITE_SCREENSHOT=1`.
#[test]
fn view_of_the_fourbar_at_3_s_draws_rod_in_barrel_and_the_runs_figures() {
    let _one = one_at_a_time();
    ensure_chromium();
    let path = repo().join("models/fourbar.toml");
    let spec = hydraulink_io::load_model(&path).expect("shipped model loads");
    let dir = std::env::temp_dir().join(format!("hydraulink-view-gap-{}", std::process::id()));
    let (step_s, n) = write_finished_run(&spec, &dir, 3.5, 0.01);
    // the run's summary as `run` writes it (the figures the page must show, not compute)
    std::fs::write(
        dir.join("summary.json"),
        format!(
            r#"{{"model":"fourbar","status":"completed","step_count":{n},"real_time_factor":37.25,"peak_abs_energy_drift_j":0.00123}}"#
        ),
    )
    .unwrap();
    let viewer =
        hydraulink_viewer::Viewer::start(&spec, step_s, &dir, None, 0).expect("view starts");
    let addr = viewer.url()["http://".len()..]
        .trim_end_matches('/')
        .to_string();
    let browser = launch("view-gap");
    let mut cdp = Cdp::connect(&browser);
    open_page(&mut cdp, viewer.url(), 3);
    // framed at load, every corner of the machine's box in view
    assert_eq!(cdp.eval("window.hydraulink.framed()"), 1.0);
    // near and far planes around the machine: zooming in close or out far cuts nothing
    let planes = cdp.eval(
        "(() => { const h = window.hydraulink; return [h.camera.near, h.camera.far, \
         h.camera.position.distanceTo(h.controls.target)]; })()",
    );
    let (near, far, dist) = (
        planes[0].as_f64().unwrap(),
        planes[1].as_f64().unwrap(),
        planes[2].as_f64().unwrap(),
    );
    assert!(
        near < 0.01 * dist && far > 20.0 * dist,
        "near {near}, far {far}, at {dist} m"
    );
    // the grid at the machine's lowest point at load (the four-bar has parts below y = 0);
    // the run plays on for a few frames before this reads the box, which moves by a fraction
    // of a millimetre meanwhile (0.14 mm seen), hence 5 mm and not exactly
    let grid = cdp.eval("[window.hydraulink.gridY, window.hydraulink.machineBox()[0][1]]");
    assert!(
        grid[1].as_f64().unwrap() < -1.0
            && (grid[0].as_f64().unwrap() - grid[1].as_f64().unwrap()).abs() < 5e-3,
        "grid {grid}"
    );
    // the run's own figures; the live engine's are hidden
    assert_eq!(
        cdp.eval("document.getElementById('live-stats').hidden"),
        true
    );
    assert_eq!(
        cdp.eval("document.getElementById('run-stats').hidden"),
        false
    );
    assert_eq!(
        cdp.eval("document.getElementById('run-steps').textContent"),
        n.to_string()
    );
    assert_eq!(
        cdp.eval("document.getElementById('run-rtf').textContent"),
        "37.25"
    );
    assert_eq!(
        cdp.eval("document.getElementById('run-drift').textContent"),
        "0.00123 J"
    );
    // pause and seek to 3 s
    click(&mut cdp, "pause");
    cdp.eval(
        "(() => { const s = document.getElementById('slider'); s.value = 3.0; \
         s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); })()",
    );
    assert!(wait_for(5.0, || (get_json(&addr, "/state")["t"]
        .as_f64()
        .unwrap()
        - 3.0)
        .abs()
        < 1e-3));
    let frame = get_json(&addr, "/state");
    assert!(wait_for(5.0, || cdp
        .eval("window.hydraulink.frame ? window.hydraulink.frame.t : -1")
        .as_f64()
        .is_some_and(|t| (t - 3.0).abs() < 1e-3)));
    std::thread::sleep(Duration::from_millis(300));
    // the cylinder is extended at 3 s, and its rod is still inside the barrel as drawn
    let c = &spec.hydraulics.cylinders[0];
    let e: Vec<f64> = frame["cylinders"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let len = ((e[3] - e[0]).powi(2) + (e[4] - e[1]).powi(2) + (e[5] - e[2]).powi(2)).sqrt();
    let extension = (len - c.retracted_length_m) / c.stroke_m;
    let overlaps = cdp.eval("window.hydraulink.cylinderOverlaps()");
    let overlap = overlaps[0].as_f64().expect("drawn");
    eprintln!(
        "four-bar at 3 s: pin distance {len:.4} m ({:.0} % of the stroke), rod in barrel {overlap:.4} m",
        100.0 * extension
    );
    // extended beyond 1.2 L0, where the old drawing (barrel and rod each 60 % of L0) showed
    // the gap of the issue
    assert!(
        len > 1.2 * c.retracted_length_m,
        "extended at 3 s: {len:.4} m, {extension:.3} of the stroke"
    );
    assert!(overlap > 0.01, "the rod overlaps the barrel: {overlap} m");
    let shot = cdp.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = decode_base64(shot["data"].as_str().expect("screenshot data"));
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    let out = if std::env::var("HYDRAULINK_WRITE_SCREENSHOT").is_ok_and(|v| v == "1") {
        repo().join("docs/viewer-fourbar-view.png")
    } else {
        std::env::temp_dir().join("hydraulink-viewer-fourbar-view.png")
    };
    std::fs::write(&out, &png).expect("screenshot written");
    // the view moved (zoomed in to the centre: the machine's corners out of view); F frames it
    cdp.eval(
        "(() => { const h = window.hydraulink, t = h.controls.target; \
         h.camera.position.set(t.x + 0.02, t.y + 0.01, t.z + 0.02); h.controls.update(); \
         h.camera.updateMatrixWorld(); })()",
    );
    assert!(cdp.eval("window.hydraulink.framed()").as_f64().unwrap() < 1.0);
    cdp.key("f", "KeyF", 70, true);
    cdp.key("f", "KeyF", 70, false);
    // polled: the key reaches the page's handler on its next event turn, and a frame of the
    // orbit controls may still be applying the zoom above (one run read 0.625 right after F)
    assert!(
        wait_for(3.0, || cdp.eval("window.hydraulink.framed()") == 1.0),
        "F frames the machine: {} of its box's corners in view",
        cdp.eval("window.hydraulink.framed()")
    );
    cdp.eval("1");
    assert!(cdp.errors.is_empty(), "console errors: {:?}", cdp.errors);
    eprintln!("screenshot {}", out.display());
    drop(browser);
    viewer.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

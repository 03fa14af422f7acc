//! The messages between server and page, as JSON text over the WebSocket.
//!
//! ```text
//! server → page   {"type":"scene","scene":{…}}            once, on connect (scene.rs)
//!                 {"type":"frame","step":…,"t":…,"paused":…,
//!                  "poses":[[x,y,z, a00,a01,a02, a10,…,a22], …],   per body: x [m], A row-major
//!                  "cylinders":[[bx,by,bz, rx,ry,rz], …],         base and rod pins [m], global
//!                  "gauges":[…], "task":k, "held":s,              shown units; current scenario
//!                                                                 task and its held time [s]
//!                  "mode":"live"|"recording"|"replay"|"view", "inputs":[…],  operator inputs
//!                  "stats":{"rtf":…,"steps":…,"overruns":…,"mean_us":…,"max_us":…,
//!                           "lag_max_us":…,"wake_max_us":…,"dropped":…,  at the display rate
//!                           "priority":"normal"|"nice -10"|"real-time (SCHED_FIFO 10)"},
//!                  "terrain":{"h":[mm,…]} | {"dh":[k,mm,…]}}   a terrain's heights: all of
//!                                                                 them every 60th frame, else
//!                                                                 the changed columns k [mm]
//! page → server   {"type":"key","key":"w","pressed":true}
//!                 {"type":"axis","axis":"right_y","value":0.4}
//!                 {"type":"set","input":"U_boom","value":5.0}   {"type":"release","input":…}
//!                 {"type":"pause"}  {"type":"resume"}  {"type":"reset"}
//!                 {"type":"record"}  {"type":"record_stop"}  {"type":"replay"}  {"type":"live"}
//!                 {"type":"seek","t":2.5}  {"type":"speed","factor":0.5}     (`view` only)
//! ```
//!
//! Frames are written by hand with fixed decimals (0.1 mm, 1e-5 in a rotation, 1e-3 of a gauge
//! unit), which keeps a frame of the excavator near 1 kB; a value that is not finite is `null`.

use std::fmt::Write;

use hydraulink::pipeline::simulation::BodyPose;
use hydraulink_rt::{Command, Snapshot};
use serde::Deserialize;

use crate::hud::HudState;
use crate::scene::{Scene, SceneCylinder};

/// A message from the page.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// A key went down or up (`KeyboardEvent.key`, lower case).
    Key {
        /// Key name.
        key: String,
        /// Down (true) or up.
        pressed: bool,
    },
    /// A gamepad axis moved.
    Axis {
        /// Axis name (`left_x`, `left_y`, `right_x`, `right_y`).
        axis: String,
        /// Deflection [-], in [−1, 1].
        value: f64,
    },
    /// Hold an input at a value.
    Set {
        /// Input name.
        input: String,
        /// Value [unit of the input].
        value: f64,
    },
    /// Return an input to its signal.
    Release {
        /// Input name.
        input: String,
    },
    /// Stop the clock.
    Pause,
    /// Start it again.
    Resume,
    /// Back to the initial state.
    Reset,
    /// Start recording: back to the initial state, then every input change is kept.
    Record,
    /// Stop recording (the run goes on, live).
    RecordStop,
    /// Play the last recording from the initial state (inputs from the page are refused).
    Replay,
    /// Back to live operation from a replay (the initial state).
    Live,
    /// `view`: jump to time `t` [s] of the finished run.
    Seek {
        /// Time [s].
        t: f64,
    },
    /// `view`: playback speed [-] (1: real time).
    Speed {
        /// Factor of real time [-].
        factor: f64,
    },
}

impl ClientMessage {
    /// The engine command it asks for; none for the server's own controls (record, replay,
    /// live, seek, speed).
    pub fn command(self) -> Option<Command> {
        Some(match self {
            ClientMessage::Key { key, pressed } => Command::Key { key, pressed },
            ClientMessage::Axis { axis, value } => Command::Axis { axis, value },
            ClientMessage::Set { input, value } => Command::SetInput { input, value },
            ClientMessage::Release { input } => Command::ReleaseInput { input },
            ClientMessage::Pause => Command::Pause,
            ClientMessage::Resume => Command::Resume,
            ClientMessage::Reset => Command::Reset,
            ClientMessage::Record
            | ClientMessage::RecordStop
            | ClientMessage::Replay
            | ClientMessage::Live
            | ClientMessage::Seek { .. }
            | ClientMessage::Speed { .. } => return None,
        })
    }
}

/// The scene message.
pub fn scene_message(scene: &Scene) -> String {
    // the scene holds only strings and finite numbers from a validated model
    let body = serde_json::to_string(scene).unwrap_or_else(|_| "null".into());
    format!("{{\"type\":\"scene\",\"scene\":{body}}}")
}

fn num(out: &mut String, x: f64, decimals: usize) {
    if x.is_finite() {
        // a rounded −0 prints as "-0.0000": harmless JSON
        let _ = write!(out, "{x:.decimals$}");
    } else {
        out.push_str("null");
    }
}

fn list(out: &mut String, xs: impl IntoIterator<Item = f64>, decimals: usize) {
    out.push('[');
    for (i, x) in xs.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        num(out, x, decimals);
    }
    out.push(']');
}

/// The global position [m] of a cylinder end: on its body's pose, or fixed on the ground.
fn end_point(poses: &[BodyPose], end: &(Option<usize>, [f64; 3])) -> [f64; 3] {
    match end.0.and_then(|i| poses.get(i)) {
        Some(p) => p.point_m(end.1),
        None => end.1,
    }
}

/// The cylinder's pin-to-pin end points [m] in a frame.
pub fn cylinder_ends(poses: &[BodyPose], c: &SceneCylinder) -> ([f64; 3], [f64; 3]) {
    (end_point(poses, &c.base), end_point(poses, &c.rod))
}

/// A height [m] in whole millimetres, as the page receives terrain heights (a height that is
/// not finite, or beyond ±2000 km, is clamped: the page only draws it).
pub fn millimetres(h_m: f64) -> i32 {
    let mm = (h_m * 1e3).round();
    if mm.is_nan() {
        0
    } else {
        mm.clamp(-2e9, 2e9) as i32
    }
}

/// Every how many frames the whole terrain is sent (a page that connects late, or missed a
/// frame, has it within a second at 60 Hz); between them only the changed columns.
pub const TERRAIN_FULL_EVERY: u64 = 60;

/// Appends the terrain of `heights_m` [m] to the frame in `out` (before its closing brace):
/// `"terrain":{"h":[mm,…]}` with every column when `full`, else `"terrain":{"dh":[k,mm,…]}`
/// with the columns k whose height in millimetres changed since the last frame (nothing when
/// none did). `sent_mm` holds what the page has (updated here; resized to the grid).
pub fn write_terrain(out: &mut String, heights_m: &[f64], sent_mm: &mut Vec<i32>, full: bool) {
    if heights_m.is_empty() {
        return;
    }
    // the terrain goes before the frame's closing brace
    let closed = out.ends_with('}');
    if closed {
        out.pop();
    }
    let frame_end = out.len();
    if full || sent_mm.len() != heights_m.len() {
        sent_mm.clear();
        sent_mm.extend(heights_m.iter().map(|h| millimetres(*h)));
        out.push_str(",\"terrain\":{\"h\":[");
        for (k, mm) in sent_mm.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            let _ = write!(out, "{mm}");
        }
    } else {
        out.push_str(",\"terrain\":{\"dh\":[");
        let start = out.len();
        for (k, (h, s)) in heights_m.iter().zip(sent_mm.iter_mut()).enumerate() {
            let mm = millimetres(*h);
            if mm != *s {
                *s = mm;
                if out.len() > start {
                    out.push(',');
                }
                let _ = write!(out, "{k},{mm}");
            }
        }
        if out.len() == start {
            // nothing changed by a millimetre: the frame as it was
            out.truncate(frame_end);
            if closed {
                out.push('}');
            }
            return;
        }
    }
    out.push_str("]}}");
}

/// What a frame carries besides the snapshot.
#[derive(Debug, Clone, Copy)]
pub struct FrameInfo<'a> {
    /// Whether the engine is paused.
    pub paused: bool,
    /// `live`, `recording`, `replay` (a recording playing) or `view` (a finished run).
    pub mode: &'a str,
    /// The HUD's values after this snapshot (`crate::hud::Hud::update`).
    pub hud: &'a HudState,
}

/// A state frame of `snap`, written into `out` (cleared first). `inputs` are the indices of the
/// operator inputs in the snapshot's input list; the gauges' values and the scenario come from
/// `info.hud`.
pub fn write_frame(
    out: &mut String,
    scene: &Scene,
    inputs: &[usize],
    snap: &Snapshot,
    info: &FrameInfo,
) {
    out.clear();
    let _ = write!(out, "{{\"type\":\"frame\",\"step\":{},\"t\":", snap.step);
    num(out, snap.time_s, 4);
    let _ = write!(
        out,
        ",\"paused\":{},\"mode\":\"{}\",\"poses\":[",
        info.paused, info.mode
    );
    for (i, p) in snap.poses.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        for (k, x) in p.position_m.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            num(out, *x, 4);
        }
        for row in &p.rotation {
            for x in row {
                out.push(',');
                num(out, *x, 5);
            }
        }
        out.push(']');
    }
    out.push_str("],\"cylinders\":[");
    for (i, c) in scene.cylinders.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let (b, r) = cylinder_ends(&snap.poses, c);
        list(out, b.into_iter().chain(r), 4);
    }
    out.push_str("],\"gauges\":");
    list(out, info.hud.gauges.iter().copied(), 3);
    let _ = write!(out, ",\"task\":{},\"held\":", info.hud.task);
    num(out, info.hud.held_s, 2);
    out.push_str(",\"inputs\":");
    list(
        out,
        inputs
            .iter()
            .map(|&i| snap.inputs.get(i).copied().unwrap_or(f64::NAN)),
        3,
    );
    let s = &snap.statistics;
    out.push_str(",\"stats\":{\"rtf\":");
    num(out, s.real_time_factor, 3);
    let _ = write!(
        out,
        ",\"steps\":{},\"overruns\":{},\"dropped\":{},\"mean_us\":",
        s.steps, s.overruns, s.snapshots_dropped
    );
    num(out, s.compute_mean_s * 1e6, 1);
    out.push_str(",\"max_us\":");
    num(out, s.compute_max_s * 1e6, 1);
    out.push_str(",\"lag_max_us\":");
    num(out, s.max_lag_s * 1e6, 1);
    out.push_str(",\"wake_max_us\":");
    num(out, s.max_wake_delay_s * 1e6, 1);
    let _ = write!(out, ",\"priority\":\"{}\"}}}}", s.priority());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terrain_of(frame: &str) -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_str(frame).expect("a frame is JSON");
        v["terrain"].clone()
    }

    #[test]
    fn the_terrain_goes_whole_then_as_changes_and_the_page_rebuilds_it() {
        let mut h = vec![0.2, 0.25, 1.0, 0.0];
        let mut sent = Vec::new();
        // the first frame: every column (the page had nothing), and the frame stays JSON
        let mut out = String::from("{\"type\":\"frame\",\"game\":{\"a\":1}}");
        write_terrain(&mut out, &h, &mut sent, false);
        assert_eq!(
            terrain_of(&out)["h"],
            serde_json::json!([200, 250, 1000, 0])
        );
        let mut page: Vec<i64> = vec![200, 250, 1000, 0];
        // below a millimetre: nothing to send, the frame is untouched
        h[1] += 4e-4;
        let mut out = String::from("{\"type\":\"frame\"}");
        write_terrain(&mut out, &h, &mut sent, false);
        assert_eq!(out, "{\"type\":\"frame\"}");
        // two columns dug and piled: only they go, as (k, mm) pairs
        h[2] = 0.7;
        h[3] = 0.0125;
        let mut out = String::from("{\"type\":\"frame\"}");
        write_terrain(&mut out, &h, &mut sent, false);
        let dh = terrain_of(&out)["dh"].clone();
        assert_eq!(dh, serde_json::json!([2, 700, 3, 13]));
        let pairs = dh.as_array().unwrap();
        for p in pairs.chunks(2) {
            page[p[0].as_u64().unwrap() as usize] = p[1].as_i64().unwrap();
        }
        // what the page rebuilt is what a whole frame says
        let mut out = String::from("{\"type\":\"frame\"}");
        write_terrain(&mut out, &h, &mut sent, true);
        let whole: Vec<i64> = terrain_of(&out)["h"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
        assert_eq!(whole, page);
        // no terrain: nothing
        let mut out = String::from("{\"type\":\"frame\"}");
        write_terrain(&mut out, &[], &mut sent, true);
        assert_eq!(out, "{\"type\":\"frame\"}");
    }

    #[test]
    fn heights_in_millimetres_never_overflow() {
        assert_eq!(millimetres(0.0125), 13);
        assert_eq!(millimetres(-0.0004), 0);
        assert_eq!(millimetres(f64::NAN), 0);
        assert_eq!(millimetres(1e300), 2_000_000_000);
        assert_eq!(millimetres(f64::NEG_INFINITY), -2_000_000_000);
    }
}

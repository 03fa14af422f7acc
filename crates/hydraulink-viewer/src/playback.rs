//! `hydraulink view OUTDIR`: a finished run played back in the same page, with a time slider and
//! a playback speed. The poses come from the run's `poses.bin`, the HUD's columns and the
//! operator inputs from its `results.csv` (the same rows, in the same order); no physics runs.
//!
//! ```text
//!  player thread, every 1/60 s of wall time:
//!    t ← t + speed · Δt_wall  (unless paused or no page is connected; it stops at the last row)
//!    row i = last row with time ≤ t
//!    HUD fed with every row since the last one fed (all of them after a seek backwards), so
//!    fuel and tasks integrate over every output row, not only the shown ones
//!    frame of row i (mode "view") ──▶ hub ──▶ pages
//!  page: {"type":"seek","t":…}  {"type":"speed","factor":…}  pause, resume, reset (= seek 0)
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hydraulink::model::spec::ModelSpec;
use hydraulink::pipeline::simulation::BodyPose;
use hydraulink_io::output::poses::read_poses;
use hydraulink_rt::{Snapshot, Statistics};
use thiserror::Error;

use crate::hud::{Hud, HudError};
use crate::protocol::{
    scene_message, write_frame, write_terrain, ClientMessage, FrameInfo, TERRAIN_FULL_EVERY,
};
use crate::scene::Scene;
use crate::server::{listen, spawn, Controller, Hub, ServeError};
use crate::world_rows::RecordedWorld;

/// A finished run that cannot be played.
#[derive(Debug, Error)]
pub enum PlaybackError {
    /// A file is missing or malformed.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A gauge or task names a value the run does not have.
    #[error("hud: {0}")]
    Hud(#[from] HudError),
    /// The server cannot start.
    #[error("{0}")]
    Serve(#[from] ServeError),
    /// A `mesh` shape's file cannot be drawn.
    #[error("{0}")]
    Mesh(#[from] crate::mesh::MeshError),
}

/// A finished run in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Row times [s].
    pub times: Vec<f64>,
    /// Poses, `n_bodies` per row.
    pub poses: Vec<BodyPose>,
    /// Bodies per row.
    pub n_bodies: usize,
    /// The columns of results.csv.
    pub labels: Vec<String>,
    /// The kept columns' values, row after row (`kept.len()` per row).
    values: Vec<f64>,
    /// Indices into `labels` of the kept columns.
    kept: Vec<usize>,
}

fn file_error(path: &Path, message: impl Into<String>) -> PlaybackError {
    PlaybackError::File {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

impl Run {
    /// Reads `dir/poses.bin` and the columns `wanted` of `dir/results.csv` (their header names;
    /// unknown ones are left out), checking that both have the same rows.
    pub fn read(dir: &Path, wanted: &[String]) -> Result<Run, PlaybackError> {
        let pose_path = dir.join(hydraulink_io::output::poses::POSES_FILE);
        let p = read_poses(&pose_path).map_err(|m| file_error(&pose_path, m))?;
        let csv_path = dir.join("results.csv");
        let text =
            std::fs::read_to_string(&csv_path).map_err(|e| file_error(&csv_path, e.to_string()))?;
        let mut lines = text.lines();
        let labels: Vec<String> = lines
            .next()
            .ok_or_else(|| file_error(&csv_path, "empty (no header)"))?
            .split(',')
            .map(str::to_string)
            .collect();
        let kept: Vec<usize> = wanted
            .iter()
            .filter_map(|w| labels.iter().position(|l| l == w))
            .collect();
        let mut values = Vec::with_capacity(p.times.len() * kept.len());
        let mut n_rows = 0;
        for (k, line) in lines.enumerate() {
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').collect();
            if fields.len() != labels.len() {
                // a row cut off by an interrupted run
                break;
            }
            for &c in &kept {
                values.push(fields[c].parse::<f64>().map_err(|e| {
                    file_error(
                        &csv_path,
                        format!("row {}, column {}: {e}", k + 2, labels[c]),
                    )
                })?);
            }
            n_rows += 1;
        }
        let n = n_rows.min(p.times.len());
        if n == 0 {
            return Err(file_error(&pose_path, "no rows"));
        }
        let mut run = Run {
            times: p.times,
            poses: p.poses,
            n_bodies: p.n_bodies,
            labels,
            values,
            kept,
        };
        run.times.truncate(n);
        run.poses.truncate(n * run.n_bodies);
        let w = run.kept.len();
        run.values.truncate(n * w);
        Ok(run)
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.times.len()
    }

    /// The row shown at time `t` [s]: the last with time ≤ t (the first before it).
    pub fn row_at(&self, t: f64) -> usize {
        self.times.partition_point(|&x| x <= t).saturating_sub(1)
    }

    /// The values of the columns `names` in row `i` (NaN for a column not kept).
    fn columns(&self, i: usize, names: &[String], out: &mut Vec<f64>) {
        out.clear();
        let w = self.kept.len();
        for n in names {
            let v = self
                .kept
                .iter()
                .position(|&c| self.labels[c] == *n)
                .and_then(|k| self.values.get(i * w + k))
                .copied()
                .unwrap_or(f64::NAN);
            out.push(v);
        }
    }

    fn poses(&self, i: usize) -> &[BodyPose] {
        &self.poses[i * self.n_bodies..(i + 1) * self.n_bodies]
    }
}

/// The player's clock and the page's settings.
#[derive(Debug)]
struct Clock {
    t: f64,
    speed: f64,
    paused: bool,
}

struct Player {
    clock: Mutex<Clock>,
    t0: f64,
}

impl Controller for Arc<Player> {
    fn handle(&self, msg: ClientMessage) {
        let Ok(mut c) = self.clock.lock() else {
            return;
        };
        match msg {
            ClientMessage::Pause => c.paused = true,
            ClientMessage::Resume => c.paused = false,
            ClientMessage::Reset => c.t = self.t0,
            ClientMessage::Seek { t } if t.is_finite() => c.t = t,
            ClientMessage::Speed { factor } if factor.is_finite() && factor > 0.0 => {
                c.speed = factor.min(100.0)
            }
            _ => {}
        }
    }
}

/// A running `view` server; [`Viewer::stop`] ends it.
pub struct Viewer {
    url: String,
    hub: Arc<Hub>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Viewer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Viewer")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Viewer {
    /// Serves the run in `dir` of the validated model `spec` (Δt `step_s` [s]) on
    /// 127.0.0.1:`port` (0: any free port); `mesh` shapes' files relative to `model_dir` (the
    /// model file's folder; none: no meshes drawn).
    pub fn start(
        spec: &ModelSpec,
        step_s: f64,
        dir: &Path,
        model_dir: Option<&Path>,
        port: u16,
    ) -> Result<Viewer, PlaybackError> {
        let csv_path = dir.join("results.csv");
        let header =
            std::fs::read_to_string(&csv_path).map_err(|e| file_error(&csv_path, e.to_string()))?;
        let labels: Vec<String> = header
            .lines()
            .next()
            .unwrap_or_default()
            .split(',')
            .map(str::to_string)
            .collect();
        drop(header);
        let mut scene = Scene::new(spec, step_s, &labels);
        // `mesh` shapes name their files relative to the model file (`poses.json` names it)
        if let Some(dir) = model_dir {
            scene.load_meshes(dir)?;
        }
        let hud = Hud::new(spec, &labels)?;
        let inputs: Vec<String> = scene
            .inputs
            .iter()
            .map(|u| format!("{}.value", u.name))
            .collect();
        let wanted: Vec<String> = hud.columns.iter().chain(&inputs).cloned().collect();
        let run = Run::read(dir, &wanted)?;
        if run.n_bodies != scene.bodies.len() {
            return Err(file_error(
                &dir.join(hydraulink_io::output::poses::POSES_FILE),
                format!(
                    "{} bodies per row, but the model has {}: the run is of another model",
                    run.n_bodies,
                    scene.bodies.len()
                ),
            ));
        }
        // the worksite of a `run --scene` (world.json, terrain.bin), drawn as `serve` draws it
        let world = crate::world_rows::RecordedWorld::read(dir)
            .map_err(|(path, m)| file_error(&path, m))?;
        if let Some(w) = &world {
            scene.obstacles = w.world.obstacles.clone();
            scene.terrain = w.world.terrain.clone();
        }
        // the run's own figures in place of the live engine's
        scene.run = std::fs::read_to_string(dir.join("summary.json"))
            .ok()
            .and_then(|t| crate::scene::RunFigures::from_summary_json(&t));
        let t0 = run.times[0];
        let t1 = run.times[run.n_rows() - 1];
        scene.playback = Some([t0, t1]);
        let hub = Arc::new(Hub::new(scene_message(&scene)));
        let player = Arc::new(Player {
            clock: Mutex::new(Clock {
                t: t0,
                speed: 1.0,
                paused: false,
            }),
            t0,
        });
        hub.set_controller(Box::new(Arc::clone(&player)));
        let (addr, accept) = listen(&hub, port)?;
        let play = {
            let hub = Arc::clone(&hub);
            spawn("hydraulink-view-player", move || {
                play(&hub, &player, &scene, &hud, &run, world.as_ref(), &inputs)
            })?
        };
        Ok(Viewer {
            url: format!("http://{addr}/"),
            hub,
            threads: vec![accept, play],
        })
    }

    /// The page's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops the threads.
    pub fn stop(mut self) {
        self.hub.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn play(
    hub: &Hub,
    player: &Player,
    scene: &Scene,
    hud: &Hud,
    run: &Run,
    world: Option<&RecordedWorld>,
    inputs: &[String],
) {
    let period = Duration::from_secs_f64(1.0 / 60.0);
    let t_end = run.times[run.n_rows() - 1];
    let mut state = hud.state();
    let mut fed: Option<usize> = None;
    let mut cols = Vec::new();
    let operator: Vec<usize> = (0..inputs.len()).collect();
    let mut snap = Snapshot {
        step: 0,
        time_s: 0.0,
        inputs: Vec::new(),
        outputs: Vec::new(),
        poses: Vec::new(),
        terrain_m: Vec::new(),
        statistics: Statistics::default(),
    };
    let mut buf = String::with_capacity(4096);
    // the terrain after the row fed, what the pages have of it, and the frames sent
    let mut heights_mm: Vec<i32> = Vec::new();
    let mut sent_mm: Vec<i32> = scene
        .terrain
        .as_ref()
        .map(|t| t.heights_mm.clone())
        .unwrap_or_default();
    let mut sent: u64 = 0;
    let mut last = Instant::now();
    while !hub.stop.load(Ordering::SeqCst) {
        std::thread::sleep(period.saturating_sub(last.elapsed()));
        let wall = last.elapsed().as_secs_f64();
        last = Instant::now();
        let (t, paused) = {
            let Ok(mut c) = player.clock.lock() else {
                return;
            };
            // the run plays from its start when the first page is there to see it
            if !c.paused && hub.n_pages() > 0 {
                c.t += c.speed * wall;
            }
            if c.t >= t_end {
                c.t = t_end;
            }
            (c.t, c.paused)
        };
        let i = run.row_at(t);
        // the HUD sees every row up to i, in order
        let from = match fed {
            Some(k) if k <= i => k + 1,
            _ => {
                state = hud.state();
                0
            }
        };
        for k in from..=i {
            run.columns(k, &hud.columns, &mut cols);
            hud.update(&mut state, run.times[k], run.poses(k), &cols);
        }
        if let Some(w) = world {
            w.advance(&mut heights_mm, from, i);
        }
        fed = Some(i);
        snap.step = i as u64;
        snap.time_s = run.times[i];
        snap.poses.clear();
        snap.poses.extend_from_slice(run.poses(i));
        run.columns(i, inputs, &mut snap.inputs);
        let info = FrameInfo {
            paused: paused || t >= t_end,
            mode: "view",
            hud: &state,
        };
        write_frame(&mut buf, scene, &operator, &snap, &info);
        snap.terrain_m.clear();
        snap.terrain_m
            .extend(heights_mm.iter().map(|&mm| f64::from(mm) * 1e-3));
        sent += 1;
        write_terrain(
            &mut buf,
            &snap.terrain_m,
            &mut sent_mm,
            sent.is_multiple_of(TERRAIN_FULL_EVERY),
        );
        hub.publish(&buf);
    }
}

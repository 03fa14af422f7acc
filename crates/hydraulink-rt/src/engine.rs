//! The engine: a [`Simulation`] stepped at its fixed Δt, paced to a [`Clock`], driven by
//! commands and watched through snapshots, on a thread of its own ([`Engine`]) or driven step by
//! step from the caller's thread ([`Core`], for tests and for tools that want no thread).

use std::sync::mpsc::{
    sync_channel, Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError,
};
use std::thread::JoinHandle;
use std::time::Duration;

use hydraulink::pipeline::simulation::BodyPose;
use hydraulink::{Simulation, State, StepError};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::binding::{BindingSource, BindingState, InputBinding};
use crate::clock::Clock;
use crate::recording::{Action, Event, Recording};
use crate::stats::{Statistics, Tracker};

/// What the engine does when a step ends after its deadline. Either way the step counts as an
/// overrun and no physics step is ever skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// Keep the schedule: the late steps run back to back until the engine is on schedule again
    /// (the lag shrinks to zero; simulated time keeps up with wall time on average).
    #[default]
    CatchUp,
    /// Shift the schedule by the overrun: the next step is released at once, the lag returns to
    /// zero, and simulated time falls behind wall time by the accumulated slip.
    SlowDown,
}

impl Policy {
    /// The name used on the command line (`catch-up`, `slow-down`).
    pub fn name(self) -> &'static str {
        match self {
            Policy::CatchUp => "catch-up",
            Policy::SlowDown => "slow-down",
        }
    }
}

/// How an engine runs.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// The overrun policy.
    pub policy: Policy,
    /// Snapshot rate [Hz] of simulated time (default 60); at least one snapshot per step.
    pub display_hz: f64,
    /// Stop after this much simulated time [s] (engine steps × Δt); none: run until stopped.
    pub duration_s: Option<f64>,
    /// The output columns the snapshots carry, by label; none: every column.
    pub outputs: Option<Vec<String>>,
    /// Axis and key bindings to named inputs.
    pub bindings: Vec<InputBinding>,
    /// A recording to replay: its input changes are applied at their steps, and operator input
    /// commands are refused.
    pub replay: Option<Recording>,
    /// Capacity of the command channel (default 256); a full channel makes `try_send` fail on
    /// the sender's side, the engine never waits on it.
    pub command_capacity: usize,
    /// Capacity of the snapshot channel (default 4); when it is full a snapshot is dropped and
    /// counted.
    pub snapshot_capacity: usize,
    /// Raise the engine thread's scheduling priority under the wall clock (default true;
    /// `crate::priority`): the statistics say what was obtained.
    pub raise_priority: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            policy: Policy::CatchUp,
            display_hz: 60.0,
            duration_s: None,
            outputs: None,
            bindings: Vec::new(),
            replay: None,
            command_capacity: 256,
            snapshot_capacity: 4,
            raise_priority: true,
        }
    }
}

/// A command to the engine, applied at the next step boundary.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Hold input `input` at `value` [unit of the input] (`Simulation::set_input`).
    SetInput {
        /// Input name.
        input: String,
        /// Value [unit of the input].
        value: f64,
    },
    /// Return input `input` to its signal.
    ReleaseInput {
        /// Input name.
        input: String,
    },
    /// Axis `axis` is at `value` ∈ [−1, 1] (clamped), through the bindings.
    Axis {
        /// Axis name.
        axis: String,
        /// Deflection [-].
        value: f64,
    },
    /// Key `key` was pressed or released, through the bindings.
    Key {
        /// Key name.
        key: String,
        /// Pressed (true) or released.
        pressed: bool,
    },
    /// Stop stepping until [`Command::Resume`]; paused wall time is not lag.
    Pause,
    /// Continue after [`Command::Pause`].
    Resume,
    /// Restore the initial state (and the bindings' rest).
    Reset,
    /// End the run.
    Stop,
}

/// The engine's state as sent to a viewer at the display rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Engine steps run so far.
    pub step: u64,
    /// Simulation time t [s] (rewound by a reset).
    pub time_s: f64,
    /// Every input's current value, in the order of [`Names::inputs`] [unit of the input].
    pub inputs: Vec<f64>,
    /// The selected output columns, in the order of [`Names::outputs`].
    pub outputs: Vec<f64>,
    /// Every body's pose, in the order of [`Names::bodies`].
    pub poses: Vec<BodyPose>,
    /// The terrain's column heights [m] (index i + nx j of its grid, `Model::terrain`); empty
    /// without a terrain.
    pub terrain_m: Vec<f64>,
    /// The statistics so far.
    pub statistics: Statistics,
}

/// What the columns of a [`Snapshot`] are.
#[derive(Debug, Clone, PartialEq)]
pub struct Names {
    /// Input names (`Snapshot::inputs`).
    pub inputs: Vec<String>,
    /// Output column labels (`Snapshot::outputs`).
    pub outputs: Vec<String>,
    /// Body names (`Snapshot::poses`).
    pub bodies: Vec<String>,
}

/// The caller's ends of the channels.
#[derive(Debug)]
pub struct Channels {
    /// Commands in (bounded; use `try_send` from an event loop that must not wait).
    pub commands: SyncSender<Command>,
    /// Snapshots out.
    pub snapshots: Receiver<Snapshot>,
    /// Return read snapshots here so the engine reuses their buffers (optional: without it the
    /// engine allocates one per snapshot).
    pub recycle: SyncSender<Snapshot>,
    /// The snapshots' column names.
    pub names: Names,
}

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    /// The requested duration was reached.
    Finished,
    /// A [`Command::Stop`], or every command sender was dropped.
    Stopped,
    /// A physics step failed (the statistics cover the steps before it).
    Failed(StepError),
}

/// The end of a run.
#[derive(Debug)]
pub struct Report {
    /// Final statistics.
    pub statistics: Statistics,
    /// Every input change applied, with its step.
    pub recording: Recording,
    /// How the run ended.
    pub outcome: Outcome,
    /// Why the last refused command was refused.
    pub last_rejection: Option<String>,
}

/// An engine that cannot be set up; fields are named as in the options (`bindings[2].input`).
#[derive(Debug, Error, PartialEq)]
pub enum EngineError {
    /// A bad binding.
    #[error("{field}: {message}")]
    Binding {
        /// Field path.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A name the model does not have.
    #[error("{field}: the model has no {what} {name:?}; valid: {valid:?}")]
    UnknownName {
        /// Field path.
        field: String,
        /// "input" or "output column".
        what: &'static str,
        /// The name given.
        name: String,
        /// The valid names.
        valid: Vec<String>,
    },
    /// A bad option.
    #[error("{field}: {message}")]
    Option {
        /// Field path.
        field: String,
        /// What is wrong.
        message: String,
    },
}

/// A change as the engine logs it: inputs by index, so logging allocates no name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Change {
    Set(usize, f64),
    Release(usize),
    Reset,
}

/// Why a loop iteration ended the run.
type Flow = Option<Outcome>;

/// The engine's loop state, driven step by step: [`Core::run`], [`Core::run_steps`].
pub struct Core<C: Clock> {
    sim: Simulation,
    initial: State,
    clock: C,
    policy: Policy,
    dt: Duration,
    dt_s: f64,
    duration_steps: Option<u64>,
    display_every: u64,
    commands: Receiver<Command>,
    snapshots: SyncSender<Snapshot>,
    free: Receiver<Snapshot>,
    spare: Option<Snapshot>,
    viewer_gone: bool,
    final_snapshot_sent: bool,
    input_names: Vec<String>,
    output_cols: Vec<usize>,
    row: Vec<f64>,
    bindings: Vec<BindingState>,
    log: Vec<(u64, Change)>,
    replay: Option<Vec<(u64, Change)>>,
    replay_next: usize,
    tracker: Tracker,
    /// Steps in a row released late (no sleep before them): a real-time priority is given up
    /// after [`crate::priority::DEMOTE_AFTER_STEPS`] of them.
    late_streak: u64,
    /// Clock time of engine step 0's release, shifted by pauses and (slow-down) overruns.
    origin: Duration,
    started: bool,
    wall_start: Duration,
    last_end: Duration,
    paused_total: Duration,
    pause_start: Option<Duration>,
    step: u64,
    outcome: Option<Outcome>,
    last_rejection: Option<String>,
}

impl<C: Clock> std::fmt::Debug for Core<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("step", &self.step)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

fn input_index(names: &[String], name: &str) -> Option<usize> {
    names.iter().position(|n| n == name)
}

impl<C: Clock> Core<C> {
    /// Sets up an engine on `sim` (its current state is the one [`Command::Reset`] restores),
    /// paced to `clock`. Checks the options against the model.
    pub fn new(
        sim: Simulation,
        options: EngineOptions,
        clock: C,
    ) -> Result<(Core<C>, Channels), EngineError> {
        let dt_s = sim.model().step_s();
        let opt = |field: &str, message: String| EngineError::Option {
            field: field.to_string(),
            message,
        };
        if !(options.display_hz.is_finite() && options.display_hz > 0.0) {
            return Err(opt(
                "display_hz",
                format!("must be a finite rate > 0 Hz, got {}", options.display_hz),
            ));
        }
        let duration_steps = match options.duration_s {
            None => None,
            // rounded up to a whole step, as a `run` is
            Some(d) if d.is_finite() && d >= 0.0 => {
                Some(hydraulink::model::steps_covering(d, dt_s))
            }
            Some(d) => {
                return Err(opt(
                    "duration_s",
                    format!("must be a finite time ≥ 0 s, got {d}"),
                ))
            }
        };
        for (field, capacity) in [
            ("command_capacity", options.command_capacity),
            ("snapshot_capacity", options.snapshot_capacity),
        ] {
            if capacity == 0 {
                return Err(opt(field, "a channel holds at least 1 message".into()));
            }
        }
        let input_names = sim.input_names().to_vec();
        let unknown_input = |field: String, name: &str| EngineError::UnknownName {
            field,
            what: "input",
            name: name.to_string(),
            valid: input_names.clone(),
        };
        let labels = sim.output_labels();
        let (output_cols, output_names) = match &options.outputs {
            None => ((0..labels.len()).collect(), labels.clone()),
            Some(sel) => {
                let mut cols = Vec::with_capacity(sel.len());
                for (i, name) in sel.iter().enumerate() {
                    let c = labels.iter().position(|l| l == name).ok_or_else(|| {
                        EngineError::UnknownName {
                            field: format!("outputs[{i}]"),
                            what: "output column",
                            name: name.clone(),
                            valid: labels.clone(),
                        }
                    })?;
                    cols.push(c);
                }
                (cols, sel.clone())
            }
        };
        let mut bindings = Vec::with_capacity(options.bindings.len());
        for (i, b) in options.bindings.iter().enumerate() {
            b.check(i)?;
            let k = input_index(&input_names, &b.input)
                .ok_or_else(|| unknown_input(format!("bindings[{i}].input"), &b.input))?;
            bindings.push(BindingState::new(b.clone(), k));
        }
        let replay = match &options.replay {
            None => None,
            Some(rec) => {
                if rec.step_s != dt_s {
                    return Err(opt(
                        "replay.step_s",
                        format!(
                            "the recording's step {} s is not the model's {dt_s} s",
                            rec.step_s
                        ),
                    ));
                }
                if !rec.model.is_empty() && rec.model != sim.model().name {
                    return Err(opt(
                        "replay.model",
                        format!(
                            "the recording is of model {:?}, not {:?}",
                            rec.model,
                            sim.model().name
                        ),
                    ));
                }
                let mut events = Vec::with_capacity(rec.events.len());
                for (i, e) in rec.events.iter().enumerate() {
                    let field = || format!("replay.events[{i}].input");
                    let change = match &e.action {
                        Action::Set { input, value } => Change::Set(
                            input_index(&input_names, input)
                                .ok_or_else(|| unknown_input(field(), input))?,
                            *value,
                        ),
                        Action::Release { input } => Change::Release(
                            input_index(&input_names, input)
                                .ok_or_else(|| unknown_input(field(), input))?,
                        ),
                        Action::Reset => Change::Reset,
                    };
                    events.push((e.step, change));
                }
                Some(events)
            }
        };
        let (command_tx, commands) = sync_channel(options.command_capacity);
        let (snapshots, snapshot_rx) = sync_channel(options.snapshot_capacity);
        let (recycle, free) = sync_channel(options.snapshot_capacity + 2);
        let names = Names {
            inputs: input_names.clone(),
            outputs: output_names,
            bodies: sim.model().bodies.iter().map(|b| b.name.clone()).collect(),
        };
        let display_every = ((1.0 / (options.display_hz * dt_s)).round() as u64).max(1);
        let core = Core {
            initial: sim.state().clone(),
            row: vec![0.0; sim.n_outputs()],
            sim,
            clock,
            policy: options.policy,
            dt: Duration::from_nanos((dt_s * 1e9).round() as u64),
            dt_s,
            duration_steps,
            display_every,
            commands,
            snapshots,
            free,
            spare: None,
            viewer_gone: false,
            final_snapshot_sent: false,
            input_names,
            output_cols,
            bindings,
            log: Vec::with_capacity(4096),
            replay,
            replay_next: 0,
            tracker: Tracker::new(options.policy, dt_s),
            origin: Duration::ZERO,
            started: false,
            late_streak: 0,
            wall_start: Duration::ZERO,
            last_end: Duration::ZERO,
            paused_total: Duration::ZERO,
            pause_start: None,
            step: 0,
            outcome: None,
            last_rejection: None,
        };
        Ok((
            core,
            Channels {
                commands: command_tx,
                snapshots: snapshot_rx,
                recycle,
                names,
            },
        ))
    }

    /// The simulation (its state after the last step).
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Engine steps run so far.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// The statistics so far.
    pub fn statistics(&mut self) -> Statistics {
        let wall = self
            .last_end
            .saturating_sub(self.wall_start)
            .saturating_sub(self.paused_total);
        let mut s = self.tracker.summary(wall);
        s.paused_s = self.paused_total.as_secs_f64();
        s
    }

    /// Runs until the duration is reached, a [`Command::Stop`], every command sender is
    /// dropped, or a step fails.
    pub fn run(&mut self) {
        while self.outcome.is_none() {
            self.outcome = self.tick();
        }
    }

    /// Runs `n` more physics steps (fewer if the run ends first); returns whether the run has
    /// ended. Commands waiting in the channel are applied at each boundary, as in [`Core::run`].
    pub fn run_steps(&mut self, n: u64) -> bool {
        let target = self.step + n;
        while self.outcome.is_none() && self.step < target {
            self.outcome = self.tick();
        }
        // commands sent after the last step are applied at the next boundary
        self.outcome.is_some()
    }

    /// Ends the run: the statistics, the recording and the outcome.
    pub fn finish(mut self) -> Report {
        let statistics = self.statistics();
        let name = |i: usize| self.input_names[i].clone();
        let events = self
            .log
            .iter()
            .map(|&(step, c)| Event {
                step,
                action: match c {
                    Change::Set(i, value) => Action::Set {
                        input: name(i),
                        value,
                    },
                    Change::Release(i) => Action::Release { input: name(i) },
                    Change::Reset => Action::Reset,
                },
            })
            .collect();
        Report {
            statistics,
            recording: Recording {
                model: self.sim.model().name.clone(),
                step_s: self.dt_s,
                events,
            },
            outcome: self.outcome.unwrap_or(Outcome::Stopped),
            last_rejection: self.last_rejection,
        }
    }

    /// One pass of the pacing loop: commands, then (unless paused) replayed changes, bindings,
    /// sleep until the step's release, the step, its accounting, maybe a snapshot.
    fn tick(&mut self) -> Flow {
        // 1. commands, without waiting
        loop {
            match self.commands.try_recv() {
                Ok(c) => {
                    if let Some(end) = self.apply(c) {
                        return Some(end);
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return Some(Outcome::Stopped),
            }
        }
        // 2. paused: the physics thread has nothing else to do, so it waits for commands; a
        //    viewer still gets a snapshot of the held state at the display period of wall time
        //    (after a reset or a set input while paused, the next one shows it)
        let mut last_paused_snapshot = std::time::Instant::now();
        while self.pause_start.is_some() {
            let period = self.dt.saturating_mul(self.display_every as u32);
            let wait = period.saturating_sub(last_paused_snapshot.elapsed());
            match self.commands.recv_timeout(wait) {
                Ok(c) => {
                    if let Some(end) = self.apply(c) {
                        return Some(end);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Some(Outcome::Stopped),
            }
            if self.pause_start.is_some() && last_paused_snapshot.elapsed() >= period {
                self.send_snapshot();
                last_paused_snapshot = std::time::Instant::now();
            }
        }
        if self.duration_steps.is_some_and(|n| self.step >= n) {
            // the last state is always shown, also between display steps
            if !self.step.is_multiple_of(self.display_every) && !self.final_snapshot_sent {
                self.final_snapshot_sent = true;
                self.send_snapshot();
            }
            return Some(Outcome::Finished);
        }
        let k = self.step;
        // 3. replayed changes of this step, then the bindings
        self.apply_replay(k);
        self.apply_bindings();
        // 4. release: step k is due to start at origin + k Δt and to end by the next release
        if !self.started {
            self.started = true;
            self.origin = self.clock.now();
            self.wall_start = self.origin;
        }
        let release = self.origin + self.dt_times(k);
        let slept = self.clock.now() < release;
        if slept {
            self.clock.sleep_until(release);
            self.late_streak = 0;
        } else {
            self.late_streak += 1;
            // a real-time thread that cannot keep up never sleeps: it would hold a core
            if self.late_streak > crate::priority::DEMOTE_AFTER_STEPS
                && self.tracker.stats.scheduling == crate::priority::Scheduling::RealTime
            {
                self.tracker.stats.scheduling = crate::priority::demote();
                self.tracker.stats.demoted_at_step = Some(self.step);
            }
        }
        // 5. the step, timed
        let start = self.clock.now();
        if slept {
            // how late the operating system woke the thread
            let wake = start.saturating_sub(release).as_secs_f64();
            let s = &mut self.tracker.stats;
            s.max_wake_delay_s = s.max_wake_delay_s.max(wake);
        }
        let result = self.sim.step();
        self.clock.charge_step(k);
        let end = self.clock.now();
        if let Err(e) = result {
            return Some(Outcome::Failed(e));
        }
        // 6. accounting: lag = end − deadline; an overrun shifts the schedule under slow-down
        let deadline = release + self.dt;
        let overran = end > deadline;
        let lag_s = if overran {
            (end - deadline).as_secs_f64()
        } else {
            -(deadline - end).as_secs_f64()
        };
        if overran && self.policy == Policy::SlowDown {
            self.origin += end - deadline;
            self.tracker.stats.slip_s += (end - deadline).as_secs_f64();
        }
        self.tracker.step(k, end - start, lag_s, overran);
        self.step += 1;
        self.last_end = end;
        // 7. a snapshot at the display rate
        if self.step.is_multiple_of(self.display_every) {
            self.send_snapshot();
        }
        None
    }

    fn dt_times(&self, k: u64) -> Duration {
        Duration::from_nanos(self.dt.as_nanos() as u64 * k)
    }

    fn reject(&mut self, why: String) {
        self.tracker.stats.commands_rejected += 1;
        self.last_rejection = Some(why);
    }

    /// Applies one command; returns the outcome if it ends the run.
    fn apply(&mut self, c: Command) -> Flow {
        let replaying = self.replay.is_some();
        let operator = matches!(
            c,
            Command::SetInput { .. }
                | Command::ReleaseInput { .. }
                | Command::Axis { .. }
                | Command::Key { .. }
                | Command::Reset
        );
        if replaying && operator {
            self.reject(format!("{c:?}: input commands are refused during a replay"));
            return None;
        }
        match c {
            Command::SetInput { input, value } => {
                let Some(i) = input_index(&self.input_names, &input) else {
                    self.reject(format!("set: no input {input:?}"));
                    return None;
                };
                if let Err(e) = self.sim.set_input(&input, value) {
                    self.reject(e.to_string());
                    return None;
                }
                self.log_change(Change::Set(i, value));
            }
            Command::ReleaseInput { input } => {
                let Some(i) = input_index(&self.input_names, &input) else {
                    self.reject(format!("release: no input {input:?}"));
                    return None;
                };
                // a binding on it lets go too
                for b in self.bindings.iter_mut().filter(|b| b.input == i) {
                    b.active = false;
                }
                self.release(i);
            }
            Command::Axis { axis, value } => {
                if !value.is_finite() {
                    self.reject(format!("axis {axis:?}: value {value} is not finite"));
                    return None;
                }
                let mut hit = false;
                for b in &mut self.bindings {
                    if matches!(&b.binding.source, BindingSource::Axis(a) if *a == axis) {
                        b.axis = value.clamp(-1.0, 1.0);
                        hit = true;
                        activate(b, &self.sim, &self.input_names);
                    }
                }
                if !hit {
                    self.reject(format!("no binding for axis {axis:?}"));
                    return None;
                }
            }
            Command::Key { key, pressed } => {
                let mut hit = false;
                for b in &mut self.bindings {
                    if let BindingSource::Keys { positive, negative } = &b.binding.source {
                        if *positive == key {
                            b.positive_held = pressed;
                        } else if *negative == key {
                            b.negative_held = pressed;
                        } else {
                            continue;
                        }
                        hit = true;
                        activate(b, &self.sim, &self.input_names);
                    }
                }
                if !hit {
                    self.reject(format!("no binding for key {key:?}"));
                    return None;
                }
            }
            Command::Pause => {
                if self.pause_start.is_none() {
                    self.pause_start = Some(self.clock.now());
                }
            }
            Command::Resume => {
                if let Some(t0) = self.pause_start.take() {
                    let paused = self.clock.now().saturating_sub(t0);
                    // the schedule moves by the pause: paused time is neither lag nor slip
                    self.origin += paused;
                    if self.started {
                        self.paused_total += paused;
                    }
                }
            }
            Command::Reset => self.reset(),
            Command::Stop => {
                self.tracker.stats.commands_applied += 1;
                return Some(Outcome::Stopped);
            }
        }
        self.tracker.stats.commands_applied += 1;
        None
    }

    fn release(&mut self, i: usize) {
        // the index is the model's, so the name is known
        if self.sim.release_input(&self.input_names[i]).is_ok() {
            self.log_change(Change::Release(i));
        }
    }

    fn reset(&mut self) {
        self.sim.set_state(self.initial.clone());
        for b in &mut self.bindings {
            b.active = false;
            b.axis = 0.0;
            b.positive_held = false;
            b.negative_held = false;
        }
        self.log_change(Change::Reset);
    }

    fn log_change(&mut self, c: Change) {
        self.log.push((self.step, c));
        self.tracker.stats.input_events += 1;
    }

    fn apply_replay(&mut self, k: u64) {
        while let Some(&(step, c)) = self.replay.as_ref().and_then(|e| e.get(self.replay_next)) {
            if step > k {
                break;
            }
            self.replay_next += 1;
            match c {
                Change::Set(i, v) => {
                    // the recorded value was accepted once, so it is again
                    if self.sim.set_input(&self.input_names[i], v).is_ok() {
                        self.log_change(c);
                    }
                }
                Change::Release(i) => self.release(i),
                Change::Reset => self.reset(),
            }
        }
    }

    /// Each active binding's next value. When several active bindings drive one input (a key
    /// pair and a stick), the deflected one wins: the last deflected one in binding order, or,
    /// when none is deflected, the last one (bringing the input back to rest). The others follow
    /// the applied value, so a switch between them keeps the rate limit.
    fn apply_bindings(&mut self) {
        for j in 0..self.bindings.len() {
            let b = &self.bindings[j];
            if !b.active {
                continue;
            }
            let input = b.input;
            let rivals = || {
                self.bindings
                    .iter()
                    .enumerate()
                    .filter(move |(_, o)| o.active && o.input == input)
            };
            let winner = rivals()
                .filter(|(_, o)| o.deflected())
                .map(|(k, _)| k)
                .next_back()
                .or_else(|| rivals().map(|(k, _)| k).next_back());
            if winner != Some(j) {
                continue;
            }
            let v = b.next_value(self.dt_s);
            if b.applied && v == b.value {
                continue;
            }
            let i = b.input;
            if self.sim.set_input(&self.input_names[i], v).is_ok() {
                for o in self
                    .bindings
                    .iter_mut()
                    .filter(|o| o.active && o.input == i)
                {
                    o.value = v;
                    o.applied = true;
                }
                self.log_change(Change::Set(i, v));
            }
        }
    }

    fn send_snapshot(&mut self) {
        if self.viewer_gone {
            return;
        }
        let mut s = match self.spare.take().or_else(|| self.free.try_recv().ok()) {
            Some(s) => s,
            None => Snapshot {
                step: 0,
                time_s: 0.0,
                inputs: vec![0.0; self.input_names.len()],
                outputs: vec![0.0; self.output_cols.len()],
                poses: vec![BodyPose::default(); self.sim.model().bodies.len()],
                terrain_m: match &self.sim.state().world {
                    Some(w) => vec![0.0; w.field.h.len()],
                    None => Vec::new(),
                },
                statistics: self.tracker.stats,
            },
        };
        s.step = self.step;
        s.time_s = self.sim.time_s();
        for (v, name) in s.inputs.iter_mut().zip(&self.input_names) {
            *v = self.sim.input(name).unwrap_or(f64::NAN);
        }
        self.sim.output_row(&mut self.row);
        for (o, &c) in s.outputs.iter_mut().zip(&self.output_cols) {
            *o = self.row[c];
        }
        self.sim.body_poses(&mut s.poses);
        if let Some(w) = &self.sim.state().world {
            s.terrain_m.copy_from_slice(&w.field.h);
        }
        s.statistics = self.statistics();
        match self.snapshots.try_send(s) {
            Ok(()) => self.tracker.stats.snapshots_sent += 1,
            Err(TrySendError::Full(s)) => {
                self.tracker.stats.snapshots_dropped += 1;
                self.spare = Some(s);
            }
            Err(TrySendError::Disconnected(_)) => self.viewer_gone = true,
        }
    }
}

/// A binding that receives its first event since the start (or a reset) takes over its input
/// from the input's current value.
fn activate(b: &mut BindingState, sim: &Simulation, names: &[String]) {
    if !b.active {
        b.active = true;
        b.applied = false;
        b.value = sim.input(&names[b.input]).unwrap_or(0.0);
    }
}

/// An engine running on a thread of its own.
#[derive(Debug)]
pub struct Engine {
    /// The caller's ends of the channels.
    pub channels: Channels,
    thread: JoinHandle<Report>,
}

impl Engine {
    /// Starts the engine thread on `sim` with `options`, paced to `clock`.
    pub fn spawn<C: Clock + 'static>(
        sim: Simulation,
        options: EngineOptions,
        clock: C,
    ) -> Result<Engine, EngineError> {
        let raise = options.raise_priority && clock.is_wall_clock();
        let (mut core, channels) = Core::new(sim, options, clock)?;
        let thread = std::thread::Builder::new()
            .name("hydraulink-rt".into())
            .spawn(move || {
                if raise {
                    core.tracker.stats.scheduling = crate::priority::raise();
                }
                core.run();
                core.finish()
            })
            .map_err(|e| EngineError::Option {
                field: "thread".into(),
                message: e.to_string(),
            })?;
        Ok(Engine { channels, thread })
    }

    /// Whether the engine thread has ended.
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for the engine thread to end and returns its report. Sends nothing: a run without
    /// a duration needs a [`Command::Stop`] first (or use [`Engine::stop`]).
    pub fn join(self) -> Report {
        let Engine { channels, thread } = self;
        // keep the channels open until the end: dropping the command sender would stop the run
        let report = thread.join();
        drop(channels);
        match report {
            Ok(r) => r,
            // the engine thread panicked: an internal error, re-raised here
            Err(p) => std::panic::resume_unwind(p),
        }
    }

    /// Sends [`Command::Stop`] and waits for the report.
    pub fn stop(self) -> Report {
        let Engine { channels, thread } = self;
        // if the channel is full or the engine has ended, dropping the sender stops it as well
        let _ = channels.commands.try_send(Command::Stop);
        drop(channels);
        match thread.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::priority::{Scheduling, DEMOTE_AFTER_STEPS};

    /// A real-time engine whose every step takes 2 ms of a 1 ms step never sleeps: after
    /// DEMOTE_AFTER_STEPS late releases in a row it gives the priority up, and says when. (The
    /// manual clock never raises the priority, so the test sets it as the wall clock would.)
    #[test]
    fn a_real_time_engine_that_cannot_keep_up_gives_its_priority_up() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/boom.toml");
        let spec = hydraulink_io::load_model(std::path::Path::new(path)).expect("loads");
        let model = hydraulink::compile(&spec).expect("compiles");
        let sim = Simulation::new(model).expect("initializes");
        let options = EngineOptions::default();
        let (mut core, _ch) = Core::new(sim, options, ManualClock::new(Duration::from_millis(2)))
            .expect("valid options");
        core.tracker.stats.scheduling = Scheduling::RealTime;
        core.run_steps(DEMOTE_AFTER_STEPS);
        assert_eq!(core.statistics().scheduling, Scheduling::RealTime);
        core.run_steps(10);
        let s = core.statistics();
        assert_eq!(s.scheduling, Scheduling::Normal);
        // every step is released without a sleep (the first at its release time exactly), so
        // the streak passes the bound at engine step DEMOTE_AFTER_STEPS (counted from 0)
        assert_eq!(s.demoted_at_step, Some(DEMOTE_AFTER_STEPS));
        let shown = s.priority().to_string();
        assert!(shown.contains("given up at step"), "{shown}");
    }
}

//! The excavator game of 003 Publication VI: load a goal mass into the hopper within a hit
//! budget, a fuel tank and a time limit, in a number of attempts; a weighted score.
//!
//! The rules are pure: a [`Game`] is fed [`Reading`]s (one per snapshot) and says when an
//! attempt ends. It knows the machine only through named output columns ([`Columns`]): the
//! hopper's mass, the obstacles' hit counters, the pump's shaft power, and one body point for
//! the arm reach. So it works with any model that has such columns (`[game]` in the model file,
//! `hydraulink::model::spec::GameSpec`), and the tests drive it with made-up readings.
//!
//! ```text
//!  Waiting ──start(name)──▶ Starting ──first reading after the reset──▶ Running
//!     ▲                        ▲                                          │ goal reached,
//!     │                        └──────start (next attempt)── AttemptOver ◀┤ hit max+1, fuel
//!     └─────start(new name)── GameOver ◀── last attempt ended ────────────┘ out, time up, reset
//! ```
//!
//! * **Attempt start.** The host resets the engine when [`Game::start`] accepts; the attempt
//!   begins with the first reading taken after that reset. A reading's *epoch*, the engine step
//!   at which the simulation clock last restarted (`step − round(t/Δt)`), tells readings from
//!   before and after the reset apart, whatever the clock showed before.
//! * **Timer:** the simulated time since the reset [s] (wall time while the engine keeps up).
//! * **Hopper and hits:** column values minus their values at the attempt's first reading.
//! * **Fuel [L]:** E / (η_e e_f), with E the pump's shaft energy [J], the trapezoidal integral
//!   of the shaft power (negative values count as 0) over the readings (60 Hz by default; the
//!   first interval from t = 0 at the first reading's power), η_e the engine efficiency and
//!   e_f the fuel's energy per litre.
//! * **Reach [m]:** the horizontal distance of the tool point from the vertical swing axis;
//!   its maximum and mean over the attempt's readings.
//! * **Score.** An attempt that reaches the goal earns
//!   `max(0, base − a_t t − a_f fuel − a_h hits)` points, a failed one 0; the player's score is
//!   the mean over all attempts (defaults: base 1000, a_t = 2 per s, a_f = 100 per L,
//!   a_h = 50 per hit).

use std::fmt::Write as _;

use hydraulink::model::spec::{GameSpec, ModelSpec};
use hydraulink::pipeline::simulation::BodyPose;
use hydraulink::ModelError;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The rules of a game, from a [`GameSpec`].
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    /// Mass to load into the hopper [kg].
    pub goal_kg: f64,
    /// Hits allowed per attempt [-]; one more fails it.
    pub max_hits: u32,
    /// Attempts per player [-].
    pub attempts: u32,
    /// Time allowed per attempt [s].
    pub time_limit_s: f64,
    /// Fuel per joule of pump shaft energy, 1/(η_e e_f) [L/J].
    pub litres_per_joule: f64,
    /// Fuel in the tank per attempt [L].
    pub fuel_capacity_l: f64,
    /// Points of an attempt that reaches the goal, before deductions [-].
    pub base_points: f64,
    /// Points deducted per second [1/s].
    pub points_per_s: f64,
    /// Points deducted per litre [1/L].
    pub points_per_l: f64,
    /// Points deducted per hit [-].
    pub points_per_hit: f64,
}

impl Rules {
    /// The rules of a (validated) `[game]` table.
    pub fn new(spec: &GameSpec) -> Rules {
        Rules {
            goal_kg: spec.goal_kg,
            max_hits: spec.max_hits,
            attempts: spec.attempts,
            time_limit_s: spec.time_limit_s,
            litres_per_joule: 1.0 / (spec.engine_efficiency * spec.fuel_energy_j_per_l),
            fuel_capacity_l: spec.fuel_capacity_l,
            base_points: spec.base_points,
            points_per_s: spec.points_per_s,
            points_per_l: spec.points_per_l,
            points_per_hit: spec.points_per_hit,
        }
    }

    /// The points of an attempt [-]: `max(0, base − a_t t − a_f fuel − a_h hits)` if it reached
    /// the goal, else 0.
    pub fn attempt_points(&self, a: &AttemptResult) -> f64 {
        if a.outcome != Outcome::GoalReached {
            return 0.0;
        }
        (self.base_points
            - self.points_per_s * a.time_s
            - self.points_per_l * a.fuel_l
            - self.points_per_hit * f64::from(a.hits))
        .max(0.0)
    }

    /// A player's score [-]: the mean of the attempts' points over all `attempts` (an attempt
    /// not played counts 0).
    pub fn score(&self, results: &[AttemptResult]) -> f64 {
        results.iter().map(|a| a.points).sum::<f64>() / f64::from(self.attempts.max(1))
    }
}

/// What the game reads from the machine at one snapshot (a fake source in tests).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// Engine steps run so far [-].
    pub step: u64,
    /// Simulation time t [s] (restarts at 0 on a reset).
    pub time_s: f64,
    /// Mass in the hopper [kg].
    pub hopper_kg: f64,
    /// Sum of the obstacles' hit counters [-].
    pub hits: f64,
    /// Pump shaft power [W].
    pub pump_power_w: f64,
    /// Horizontal distance of the tool point from the swing axis [m], if the game has one.
    pub reach_m: Option<f64>,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The hopper holds the goal mass.
    GoalReached,
    /// One hit more than allowed.
    TooManyHits,
    /// The fuel ran out.
    OutOfFuel,
    /// The time limit was reached.
    TimeUp,
    /// The machine was reset during the attempt.
    Abandoned,
}

impl Outcome {
    /// The name in files and frames (`goal_reached`, …).
    pub fn name(self) -> &'static str {
        match self {
            Outcome::GoalReached => "goal_reached",
            Outcome::TooManyHits => "too_many_hits",
            Outcome::OutOfFuel => "out_of_fuel",
            Outcome::TimeUp => "time_up",
            Outcome::Abandoned => "abandoned",
        }
    }
}

/// One finished attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptResult {
    /// Attempt number, from 1 [-].
    pub attempt: u32,
    /// How it ended.
    pub outcome: Outcome,
    /// Duration [s].
    pub time_s: f64,
    /// Fuel used [L].
    pub fuel_l: f64,
    /// Obstacle hits [-].
    pub hits: u32,
    /// Mass put into the hopper [kg].
    pub hopper_kg: f64,
    /// Largest arm reach [m] (none: the game has no reach point).
    pub reach_max_m: Option<f64>,
    /// Mean arm reach over the readings [m].
    pub reach_mean_m: Option<f64>,
    /// Points ([`Rules::attempt_points`]) [-].
    pub points: f64,
}

/// Where a game is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No player yet.
    Waiting,
    /// An attempt was started; waiting for the first reading after the reset.
    Starting,
    /// An attempt runs.
    Running,
    /// An attempt ended; the next one waits for a start.
    AttemptOver,
    /// Every attempt was played.
    GameOver,
}

impl Phase {
    /// The name in frames (`waiting`, …).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Waiting => "waiting",
            Phase::Starting => "starting",
            Phase::Running => "running",
            Phase::AttemptOver => "attempt_over",
            Phase::GameOver => "game_over",
        }
    }
}

/// A start that the game refuses.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GameError {
    /// A new player needs a name.
    #[error("name: a player needs a name (1 to {MAX_NAME} characters, no control characters)")]
    Name,
    /// An attempt is running.
    #[error("an attempt is running")]
    Running,
}

/// Longest player name [characters].
pub const MAX_NAME: usize = 40;

/// The running attempt's accumulators.
#[derive(Debug, Clone, Default, PartialEq)]
struct Live {
    epoch: u64,
    hits0: f64,
    hopper0: f64,
    time_s: f64,
    energy_j: f64,
    last: Option<(f64, f64)>,
    hits: u32,
    hopper_kg: f64,
    reach_m: Option<f64>,
    reach_max_m: Option<f64>,
    reach_sum_m: f64,
    reach_n: u32,
}

/// A game: the rules, the player, the attempts played and the one running.
#[derive(Debug, Clone, PartialEq)]
pub struct Game {
    rules: Rules,
    dt_s: f64,
    phase: Phase,
    player: String,
    results: Vec<AttemptResult>,
    live: Live,
    /// Epoch of the last reading seen.
    last_epoch: Option<u64>,
    /// Epoch of the last reading before the start (readings of that epoch predate the reset).
    before_start: Option<u64>,
}

/// The epoch of a reading: the engine step at which the simulation clock last restarted.
fn epoch(r: &Reading, dt_s: f64) -> u64 {
    r.step
        .saturating_sub((r.time_s / dt_s).round().max(0.0) as u64)
}

impl Game {
    /// A game with `rules` on a model of fixed step `dt_s` [s].
    pub fn new(rules: Rules, dt_s: f64) -> Game {
        Game {
            rules,
            dt_s,
            phase: Phase::Waiting,
            player: String::new(),
            results: Vec::new(),
            live: Live::default(),
            last_epoch: None,
            before_start: None,
        }
    }

    /// The rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Where the game is.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The player's name.
    pub fn player(&self) -> &str {
        &self.player
    }

    /// The attempts played so far.
    pub fn results(&self) -> &[AttemptResult] {
        &self.results
    }

    /// The player's score so far ([`Rules::score`]).
    pub fn score(&self) -> f64 {
        self.rules.score(&self.results)
    }

    /// Starts an attempt: the next one of the player, or the first of a new player `name`
    /// (when no player is in a game, or the game is over). The caller resets the machine when
    /// this returns `Ok`.
    pub fn start(&mut self, name: &str) -> Result<(), GameError> {
        match self.phase {
            Phase::Starting | Phase::Running => return Err(GameError::Running),
            Phase::AttemptOver => {}
            Phase::Waiting | Phase::GameOver => {
                let name = name.trim();
                if name.is_empty()
                    || name.chars().count() > MAX_NAME
                    || name.chars().any(char::is_control)
                {
                    return Err(GameError::Name);
                }
                self.player = name.to_string();
                self.results.clear();
            }
        }
        self.phase = Phase::Starting;
        self.before_start = self.last_epoch;
        Ok(())
    }

    /// The attempt number shown: the running or next one, from 1 [-].
    pub fn attempt(&self) -> u32 {
        match self.phase {
            Phase::Starting | Phase::Running => self.results.len() as u32 + 1,
            Phase::AttemptOver | Phase::GameOver => self.results.len() as u32,
            Phase::Waiting => 0,
        }
    }

    /// Takes one reading; returns the attempt that ended with it, if one did.
    pub fn observe(&mut self, r: &Reading) -> Option<AttemptResult> {
        let e = epoch(r, self.dt_s);
        self.last_epoch = Some(e);
        match self.phase {
            Phase::Starting => {
                if self.before_start == Some(e) {
                    return None; // taken before the reset
                }
                self.live = Live {
                    epoch: e,
                    hits0: r.hits,
                    hopper0: r.hopper_kg,
                    ..Live::default()
                };
                self.phase = Phase::Running;
                self.advance(r)
            }
            Phase::Running if e != self.live.epoch => Some(self.end(Outcome::Abandoned)),
            Phase::Running => self.advance(r),
            _ => None,
        }
    }

    fn advance(&mut self, r: &Reading) -> Option<AttemptResult> {
        let l = &mut self.live;
        let p = if r.pump_power_w.is_finite() {
            r.pump_power_w.max(0.0)
        } else {
            0.0
        };
        let (t0, p0) = l.last.unwrap_or((0.0, p));
        if r.time_s > t0 {
            l.energy_j += 0.5 * (p0 + p) * (r.time_s - t0); // trapezoidal rule
        }
        l.last = Some((r.time_s, p));
        l.time_s = r.time_s;
        l.hits = (r.hits - l.hits0).round().max(0.0) as u32;
        l.hopper_kg = r.hopper_kg - l.hopper0;
        l.reach_m = r.reach_m.filter(|x| x.is_finite());
        if let Some(x) = l.reach_m {
            l.reach_max_m = Some(l.reach_max_m.map_or(x, |m| m.max(x)));
            l.reach_sum_m += x;
            l.reach_n += 1;
        }
        let rules = &self.rules;
        let fuel_l = l.energy_j * rules.litres_per_joule;
        let outcome = if l.hits > rules.max_hits {
            Some(Outcome::TooManyHits)
        } else if l.hopper_kg >= rules.goal_kg {
            Some(Outcome::GoalReached)
        } else if fuel_l >= rules.fuel_capacity_l {
            Some(Outcome::OutOfFuel)
        } else if l.time_s >= rules.time_limit_s {
            Some(Outcome::TimeUp)
        } else {
            None
        };
        outcome.map(|o| self.end(o))
    }

    /// Fuel used in the running (or last) attempt [L].
    pub fn fuel_l(&self) -> f64 {
        self.live.energy_j * self.rules.litres_per_joule
    }

    fn end(&mut self, outcome: Outcome) -> AttemptResult {
        let l = &self.live;
        let mut a = AttemptResult {
            attempt: self.results.len() as u32 + 1,
            outcome,
            time_s: l.time_s,
            fuel_l: self.fuel_l(),
            hits: l.hits,
            hopper_kg: l.hopper_kg,
            reach_max_m: l.reach_max_m,
            reach_mean_m: (l.reach_n > 0).then(|| l.reach_sum_m / f64::from(l.reach_n)),
            points: 0.0,
        };
        a.points = self.rules.attempt_points(&a);
        self.results.push(a.clone());
        self.phase = if self.results.len() as u32 >= self.rules.attempts {
            Phase::GameOver
        } else {
            Phase::AttemptOver
        };
        a
    }

    /// The game's state as a JSON object, for the page (written into `out`, appended).
    pub fn write_json(&self, out: &mut String) {
        let l = &self.live;
        let r = &self.rules;
        let num = |out: &mut String, x: f64, d: usize| {
            if x.is_finite() {
                let _ = write!(out, "{x:.d$}");
            } else {
                out.push_str("null");
            }
        };
        let _ = write!(
            out,
            "{{\"phase\":\"{}\",\"player\":{},\"attempt\":{},\"attempts\":{},\"time_s\":",
            self.phase.name(),
            serde_json::to_string(&self.player).unwrap_or_else(|_| "\"\"".into()),
            self.attempt(),
            r.attempts
        );
        num(out, l.time_s, 2);
        out.push_str(",\"time_limit_s\":");
        num(out, r.time_limit_s, 1);
        out.push_str(",\"hopper_kg\":");
        num(out, l.hopper_kg, 1);
        out.push_str(",\"goal_kg\":");
        num(out, r.goal_kg, 1);
        let _ = write!(
            out,
            ",\"hits\":{},\"max_hits\":{},\"fuel_l\":",
            l.hits, r.max_hits
        );
        num(out, self.fuel_l(), 4);
        out.push_str(",\"fuel_capacity_l\":");
        num(out, r.fuel_capacity_l, 3);
        out.push_str(",\"reach_m\":");
        num(out, l.reach_m.unwrap_or(f64::NAN), 3);
        out.push_str(",\"results\":[");
        for (i, a) in self.results.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{{\"outcome\":\"{}\",\"time_s\":", a.outcome.name());
            num(out, a.time_s, 2);
            out.push_str(",\"fuel_l\":");
            num(out, a.fuel_l, 4);
            let _ = write!(out, ",\"hits\":{},\"points\":", a.hits);
            num(out, a.points, 1);
            out.push('}');
        }
        out.push_str("],\"score\":");
        num(out, self.score(), 1);
        out.push('}');
    }
}

/// Where the game's values are: its output columns (the order of [`Columns::labels`], which
/// the engine appends to a snapshot's outputs) and the tool point for the reach.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns {
    /// The columns read, in order: hopper, pump power, then the hit counters.
    pub labels: Vec<String>,
    /// The tool point: body index (in the model's body order, as the snapshot's poses) and the
    /// point in the body's reference coordinates [m].
    pub reach_point: Option<(usize, [f64; 3])>,
    /// A point on the swing axis [m].
    pub axis_point: [f64; 3],
    /// The axis direction, up (against gravity) [-], unit.
    pub axis: [f64; 3],
}

/// The first label ending in `suffix`.
fn by_suffix<'a>(labels: &'a [String], suffix: &str) -> Option<&'a String> {
    labels.iter().find(|l| l.ends_with(suffix))
}

impl Columns {
    /// Resolves a `[game]` table against a model: its output column `labels` and its body
    /// names `bodies` (the order of the snapshots' poses); `spec` is the model (for the reach
    /// marker and gravity). Errors name `game.<field>`.
    pub fn resolve(
        game: &GameSpec,
        spec: &ModelSpec,
        labels: &[String],
        bodies: &[String],
    ) -> Result<Columns, ModelError> {
        let err = |field: &str, msg: String| ModelError::new(format!("game.{field}"), "game", msg);
        let column = |field: &str, given: &Option<String>, suffix: &str, what: &str| match given {
            Some(c) if labels.contains(c) => Ok(c.clone()),
            Some(c) => Err(err(
                field,
                format!(
                    "the model has no output column '{c}' ({what}); columns ending in \
                         '{suffix}': {}",
                    suffixed(labels, suffix)
                ),
            )),
            None => by_suffix(labels, suffix).cloned().ok_or_else(|| {
                err(
                    field,
                    format!(
                        "the model has no output column ending in '{suffix}' ({what}); \
                             name one"
                    ),
                )
            }),
        };
        let hopper = column(
            "hopper_column",
            &game.hopper_column,
            ".hopper_kg",
            "the mass in the hopper, from a digging element",
        )?;
        let pump = column(
            "pump_power_column",
            &game.pump_power_column,
            ".shaft_power",
            "a pump's shaft power",
        )?;
        let mut out = vec![hopper, pump];
        if game.hit_columns.is_empty() {
            out.extend(labels.iter().filter(|l| l.ends_with(".hits")).cloned());
        } else {
            for (k, c) in game.hit_columns.iter().enumerate() {
                if !labels.contains(c) {
                    return Err(err(
                        &format!("hit_columns[{k}]"),
                        format!(
                            "the model has no output column '{c}'; columns ending in '.hits': {}",
                            suffixed(labels, ".hits")
                        ),
                    ));
                }
                out.push(c.clone());
            }
        }
        let spec = hydraulink::pipeline::pose::to_reference(spec);
        let marker = game
            .reach_marker
            .clone()
            .or_else(|| spec.outputs.markers.first().cloned());
        let reach_point = match marker {
            None => None,
            Some(m) => {
                let found = m.split_once('.').and_then(|(b, k)| {
                    let i = bodies.iter().position(|n| n == b)?;
                    let body = spec.bodies.iter().find(|s| s.name == b)?;
                    Some((i, *body.markers.get(k)?))
                });
                match found {
                    Some(p) => Some(p),
                    None => {
                        return Err(err(
                            "reach_marker",
                            format!("'{m}' is not a marker of a body, as \"body.marker\""),
                        ))
                    }
                }
            }
        };
        let g = spec.gravity;
        let n = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
        let axis = if n > 0.0 {
            [-g[0] / n, -g[1] / n, -g[2] / n]
        } else {
            [0.0, 1.0, 0.0]
        };
        Ok(Columns {
            labels: out,
            reach_point,
            axis_point: game.swing_axis_point,
            axis,
        })
    }

    /// The reading of a snapshot: `values` are the snapshot's values of [`Columns::labels`],
    /// in order; `poses` its body poses.
    pub fn reading(&self, step: u64, time_s: f64, values: &[f64], poses: &[BodyPose]) -> Reading {
        let v = |i: usize| values.get(i).copied().unwrap_or(f64::NAN);
        let hits = (2..self.labels.len())
            .map(v)
            .filter(|x| x.is_finite())
            .sum();
        let reach_m = self
            .reach_point
            .and_then(|(b, r)| poses.get(b).map(|p| p.point_m(r)))
            .map(|x| horizontal_distance(x, self.axis_point, self.axis));
        Reading {
            step,
            time_s,
            hopper_kg: v(0),
            hits,
            pump_power_w: v(1),
            reach_m,
        }
    }
}

fn suffixed(labels: &[String], suffix: &str) -> String {
    let l: Vec<&str> = labels
        .iter()
        .filter(|l| l.ends_with(suffix))
        .map(String::as_str)
        .collect();
    if l.is_empty() {
        "none".into()
    } else {
        l.join(", ")
    }
}

/// The distance [m] of `x` from the line through `a` along the unit vector `u`.
pub fn horizontal_distance(x: [f64; 3], a: [f64; 3], u: [f64; 3]) -> f64 {
    let d = [x[0] - a[0], x[1] - a[1], x[2] - a[2]];
    let along = d[0] * u[0] + d[1] * u[1] + d[2] * u[2];
    let p = [
        d[0] - along * u[0],
        d[1] - along * u[1],
        d[2] - along * u[2],
    ];
    (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DT: f64 = 1e-3;

    fn rules() -> Rules {
        Rules::new(&GameSpec::default())
    }

    /// A fake source: readings every 16 ms of an engine that was reset at step `epoch`.
    struct Fake {
        epoch: u64,
        k: u64,
        hopper_kg: f64,
        hits: f64,
        power_w: f64,
    }

    impl Fake {
        fn new(epoch: u64) -> Fake {
            Fake {
                epoch,
                k: 0,
                hopper_kg: 0.0,
                hits: 0.0,
                power_w: 100e3,
            }
        }
        fn next(&mut self) -> Reading {
            self.k += 16;
            Reading {
                step: self.epoch + self.k,
                time_s: self.k as f64 * DT,
                hopper_kg: self.hopper_kg,
                hits: self.hits,
                pump_power_w: self.power_w,
                reach_m: Some(5.0 + (self.k % 100) as f64 * 0.01),
            }
        }
    }

    /// Runs readings until an attempt ends (at most `n`).
    fn run(
        g: &mut Game,
        f: &mut Fake,
        n: usize,
        each: impl Fn(&mut Fake),
    ) -> Option<AttemptResult> {
        for _ in 0..n {
            each(f);
            if let Some(a) = g.observe(&f.next()) {
                return Some(a);
            }
        }
        None
    }

    #[test]
    fn goal_reached_ends_the_attempt_with_points() {
        let mut g = Game::new(rules(), DT);
        let mut before = Fake::new(0);
        before.hopper_kg = 500.0; // left from earlier play: the baseline removes it
        for _ in 0..10 {
            assert_eq!(g.observe(&before.next()), None);
        }
        g.start("Ann").unwrap();
        // a reading from before the reset is ignored
        assert_eq!(g.observe(&before.next()), None);
        assert_eq!(g.phase(), Phase::Starting);
        let mut f = Fake::new(before.epoch + before.k + 3);
        f.hopper_kg = 500.0;
        let a = run(&mut g, &mut f, 100_000, |f| f.hopper_kg += 1.0).expect("ends");
        assert_eq!(a.outcome, Outcome::GoalReached);
        assert!(
            a.hopper_kg >= 2000.0 && a.hopper_kg < 2001.0,
            "{}",
            a.hopper_kg
        );
        assert_eq!(a.hits, 0);
        // the trapezoidal integral of a constant power from t = 0: E = P t
        let e = 100e3 * a.time_s;
        assert!((a.fuel_l - e / (0.35 * 35.7e6)).abs() < 1e-12);
        let points = 1000.0 - 2.0 * a.time_s - 100.0 * a.fuel_l;
        assert!((a.points - points).abs() < 1e-9);
        assert_eq!(g.phase(), Phase::AttemptOver);
        assert_eq!(a.reach_max_m, Some(5.96)); // k % 100 for k = 16 n peaks at 96
                                               // starting again needs no name; a running attempt refuses a start
        g.start("").unwrap();
        assert_eq!(g.start("Bob"), Err(GameError::Running));
    }

    #[test]
    fn the_fourth_hit_fails_the_attempt() {
        let mut g = Game::new(rules(), DT);
        g.start("Ann").unwrap();
        let mut f = Fake::new(0);
        f.hits = 7.0; // counters not reset by the engine: counted from the first reading
        for k in 0..3 {
            f.hits += 1.0;
            assert_eq!(g.observe(&f.next()), None, "hit {}", k + 1);
        }
        assert_eq!(g.phase(), Phase::Running);
        let a = run(&mut g, &mut f, 10, |f| f.hits += 1.0).expect("4th hit ends it");
        assert_eq!(a.outcome, Outcome::TooManyHits);
        assert_eq!(a.hits, 4);
        assert_eq!(a.points, 0.0);
    }

    #[test]
    fn out_of_fuel_and_time_up() {
        let spec = GameSpec {
            fuel_capacity_l: 0.1,
            ..GameSpec::default()
        };
        let mut g = Game::new(Rules::new(&spec), DT);
        g.start("Ann").unwrap();
        let mut f = Fake::new(0);
        let a = run(&mut g, &mut f, 100_000, |_| {}).expect("fuel runs out");
        assert_eq!(a.outcome, Outcome::OutOfFuel);
        // 0.1 L at 100 kW: 0.1 η e_f / P = 12.53 s, to one reading
        let t = 0.1 * 0.35 * 35.7e6 / 100e3;
        assert!(a.time_s >= t && a.time_s < t + 0.016 + 1e-9, "{}", a.time_s);
        let spec = GameSpec {
            time_limit_s: 5.0,
            ..GameSpec::default()
        };
        let mut g = Game::new(Rules::new(&spec), DT);
        g.start("Ann").unwrap();
        let mut f = Fake::new(0);
        f.power_w = -5.0e3; // a pump driven backwards burns no negative fuel
        let a = run(&mut g, &mut f, 100_000, |_| {}).expect("time runs out");
        assert_eq!(a.outcome, Outcome::TimeUp);
        assert!(a.time_s >= 5.0 && a.time_s < 5.016 + 1e-9);
        assert_eq!(a.fuel_l, 0.0);
    }

    #[test]
    fn three_attempts_then_game_over_and_the_score() {
        let mut g = Game::new(rules(), DT);
        let mut step = 0;
        let mut points = Vec::new();
        for k in 0..3 {
            assert_eq!(g.attempt(), k);
            g.start(if k == 0 { "  Ann  " } else { "" }).unwrap();
            assert_eq!(g.attempt(), k + 1);
            let mut f = Fake::new(step);
            let a = if k == 1 {
                run(&mut g, &mut f, 100_000, |f| f.hits += 1.0).unwrap()
            } else {
                run(&mut g, &mut f, 100_000, |f| f.hopper_kg += 10.0).unwrap()
            };
            assert_eq!(a.attempt, k + 1);
            points.push(a.points);
            step = f.epoch + f.k + 1;
        }
        assert_eq!(g.player(), "Ann");
        assert_eq!(g.phase(), Phase::GameOver);
        assert_eq!(points[1], 0.0);
        assert!(points[0] > 0.0 && points[2] > 0.0);
        assert!((g.score() - (points[0] + points[2]) / 3.0).abs() < 1e-12);
        // after the game a new player needs a name
        assert_eq!(g.start(" "), Err(GameError::Name));
        assert_eq!(g.start(&"x".repeat(MAX_NAME + 1)), Err(GameError::Name));
        g.start("Bob").unwrap();
        assert!(g.results().is_empty());
    }

    #[test]
    fn a_reset_during_an_attempt_abandons_it() {
        let mut g = Game::new(rules(), DT);
        g.start("Ann").unwrap();
        let mut f = Fake::new(0);
        assert_eq!(g.observe(&f.next()), None);
        let mut f2 = Fake::new(f.k + 1);
        let a = g.observe(&f2.next()).expect("the reset ends it");
        assert_eq!(a.outcome, Outcome::Abandoned);
    }

    #[test]
    fn score_formula() {
        let r = rules();
        let a = |outcome, time_s, fuel_l, hits| AttemptResult {
            attempt: 1,
            outcome,
            time_s,
            fuel_l,
            hits,
            hopper_kg: 2000.0,
            reach_max_m: None,
            reach_mean_m: None,
            points: 0.0,
        };
        // 1000 − 2·120 − 100·1.5 − 50·2 = 510
        assert_eq!(
            r.attempt_points(&a(Outcome::GoalReached, 120.0, 1.5, 2)),
            510.0
        );
        assert_eq!(
            r.attempt_points(&a(Outcome::GoalReached, 600.0, 1.5, 2)),
            0.0
        );
        assert_eq!(r.attempt_points(&a(Outcome::TimeUp, 10.0, 0.1, 0)), 0.0);
        let mut xs = vec![a(Outcome::GoalReached, 120.0, 1.5, 2)];
        xs[0].points = 510.0;
        assert_eq!(r.score(&xs), 170.0);
    }

    #[test]
    fn reach_is_the_horizontal_distance_from_the_axis() {
        let d = horizontal_distance([3.0, 7.0, 4.0], [0.0, 1.2, 0.0], [0.0, 1.0, 0.0]);
        assert!((d - 5.0).abs() < 1e-15);
    }

    #[test]
    fn game_json_is_valid() {
        let mut g = Game::new(rules(), DT);
        g.start("A \"quoted\" name").unwrap();
        let mut f = Fake::new(0);
        g.observe(&f.next());
        let mut s = String::new();
        g.write_json(&mut s);
        let v: serde_json::Value = serde_json::from_str(&s).expect(&s);
        assert_eq!(v["phase"], "running");
        assert_eq!(v["player"], "A \"quoted\" name");
        assert_eq!(v["attempt"], 1);
        assert_eq!(v["goal_kg"], 2000.0);
    }
}

//! The clock the engine is paced to: a small trait with the wall clock ([`SystemClock`]) and a
//! simulated one for tests ([`ManualClock`]), so that pacing and overrun accounting are tested
//! without timing anything.

use std::time::{Duration, Instant};

/// A monotonic clock. Times are [`Duration`]s since the clock's own epoch.
pub trait Clock: Send {
    /// The current time [s since the epoch].
    fn now(&self) -> Duration;
    /// Returns at `t` [s since the epoch] or later; at once if `t` has passed.
    fn sleep_until(&mut self, t: Duration);
    /// Called right after physics step `step` (the engine's step count, from 0), between the two
    /// readings of [`Clock::now`] that time it. The wall clock does nothing here; a simulated
    /// clock advances by the step's compute time.
    fn charge_step(&mut self, step: u64) {
        let _ = step;
    }
    /// Whether this clock is the wall clock, whose sleeps are the operating system's: only then
    /// does the engine raise its thread's priority (`priority`).
    fn is_wall_clock(&self) -> bool {
        false
    }
}

/// The wall clock: [`Instant`] from its creation, [`std::thread::sleep`] to wait.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    epoch: Instant,
}

impl SystemClock {
    /// A clock whose epoch is now.
    pub fn new() -> Self {
        SystemClock {
            epoch: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }
    fn sleep_until(&mut self, t: Duration) {
        let now = self.now();
        if t > now {
            std::thread::sleep(t - now);
        }
    }
    fn is_wall_clock(&self) -> bool {
        true
    }
}

/// A simulated clock for tests: time stands still except in [`Clock::sleep_until`] (which jumps
/// to the wake-up time) and in [`Clock::charge_step`] (which adds the compute time that
/// `cost(step)` [s] chooses for that step; a slow step is a large cost).
pub struct ManualClock {
    now: Duration,
    slept: Duration,
    cost: Box<dyn FnMut(u64) -> Duration + Send>,
}

impl ManualClock {
    /// Every step costs `cost` [s].
    pub fn new(cost: Duration) -> Self {
        Self::with_costs(move |_| cost)
    }

    /// Step k costs `cost(k)` [s].
    pub fn with_costs(cost: impl FnMut(u64) -> Duration + Send + 'static) -> Self {
        ManualClock {
            now: Duration::ZERO,
            slept: Duration::ZERO,
            cost: Box::new(cost),
        }
    }

    /// Moves the time forward by `dt` [s] (time spent outside the engine).
    pub fn advance(&mut self, dt: Duration) {
        self.now += dt;
    }

    /// Total time spent in [`Clock::sleep_until`] [s].
    pub fn slept(&self) -> Duration {
        self.slept
    }
}

impl std::fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManualClock")
            .field("now", &self.now)
            .field("slept", &self.slept)
            .finish_non_exhaustive()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        self.now
    }
    fn sleep_until(&mut self, t: Duration) {
        if t > self.now {
            self.slept += t - self.now;
            self.now = t;
        }
    }
    fn charge_step(&mut self, step: u64) {
        self.now += (self.cost)(step);
    }
}

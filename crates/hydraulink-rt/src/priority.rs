//! The engine thread's scheduling priority.
//!
//! A paced step is late whenever the operating system runs something else at its release time:
//! on a 2-core machine with a browser rendering the page in software, the engine's thread waits
//! for a core often enough to overrun several percent of its 1 ms steps, however fast a step
//! computes (`Statistics::max_wake_delay_s` shows the wait). Real-time simulators run their
//! physics thread at a real-time priority for this reason. [`raise`] asks for, in turn:
//!
//! 1. `SCHED_FIFO` at priority [`FIFO_PRIORITY`] (Linux; needs `CAP_SYS_NICE` or an `rtprio`
//!    limit): the thread runs as soon as it wakes. It sleeps between steps, and the kernel's
//!    real-time throttling (by default 95 % of each second at most) keeps a runaway engine
//!    from locking a core;
//! 2. a nice value of [`NICE`] for the thread (needs the same rights or an `RLIMIT_NICE`);
//! 3. nothing: the normal priority.
//!
//! and reports which it got ([`Scheduling`], in the statistics). Only the engine's own thread
//! changes; only under the wall clock (a simulated clock never sleeps, and a busy real-time
//! thread would starve the tests around it).
//!
//! A real-time thread that cannot keep up never sleeps (under the catch-up policy late steps run
//! back to back) and would hold its core against every normal thread, the page's renderer
//! included. So after [`DEMOTE_AFTER_STEPS`] steps in a row released late the engine gives the
//! priority up ([`demote`]: the normal policy again) and says so
//! (`Statistics::demoted_at_step`).

use serde::Serialize;

/// The engine thread's scheduling, as obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduling {
    /// The normal priority: raising was not asked for, not allowed, or not supported here.
    #[default]
    Normal,
    /// A nice value of [`NICE`] for the engine thread.
    Nice,
    /// `SCHED_FIFO` at [`FIFO_PRIORITY`].
    RealTime,
}

impl Scheduling {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Scheduling::Normal => "normal",
            Scheduling::Nice => "nice -10",
            Scheduling::RealTime => "real-time (SCHED_FIFO 10)",
        }
    }
}

/// The `SCHED_FIFO` priority asked for (1–99; low among real-time threads, above every normal
/// one).
pub const FIFO_PRIORITY: i32 = 10;

/// The nice value asked for when `SCHED_FIFO` is refused.
pub const NICE: i32 = -10;

/// Steps in a row released late after which a real-time engine gives its priority up (0.2 s at
/// Δt = 1 ms).
pub const DEMOTE_AFTER_STEPS: u64 = 200;

/// Puts the calling thread back to the normal policy (module doc); returns what it has then.
pub fn demote() -> Scheduling {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: pthread_self() is the calling thread, and `param` outlives the call.
        let normal =
            unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_OTHER, &param) };
        if normal != 0 {
            return Scheduling::RealTime;
        }
    }
    Scheduling::Normal
}

/// Raises the calling thread's priority as far as allowed (module doc).
pub fn raise() -> Scheduling {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param {
            sched_priority: FIFO_PRIORITY,
        };
        // SAFETY: pthread_self() is the calling thread, and `param` outlives the call.
        let fifo =
            unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
        if fifo == 0 {
            return Scheduling::RealTime;
        }
        // SAFETY: gettid takes no arguments and cannot fail.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) };
        let Ok(tid) = libc::id_t::try_from(tid) else {
            return Scheduling::Normal;
        };
        // SAFETY: setpriority on this thread's id (Linux applies PRIO_PROCESS to a thread id).
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, NICE) } == 0 {
            return Scheduling::Nice;
        }
    }
    Scheduling::Normal
}

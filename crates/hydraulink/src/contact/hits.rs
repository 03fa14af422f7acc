//! Hit counting of a contact element (003 Pub. VI: the excavator game allows at most three
//! collisions with the obstacles). A hit is a contact onset, counted at a step boundary, that
//! follows at least `gap_s` of separation: while a body rests on, slides along or rattles
//! against an obstacle the force may drop to zero for a step or two, and that is one hit, not
//! many.
//!
//! ```text
//!   F_n  │    ┌──┐          ┌─┐┌──┐                 ┌───
//!        │    │  │          │ ││  │                 │
//!        └────┘  └──────────┘ └┘  └─────────────────┘
//!   hits 0    1             2      (gap < gap_s: no)  3
//! ```
//! The counter is part of the [`crate::State`] (a cloned state counts on bit-identically) and
//! is advanced by the stage `elements` after each committed step (`element_energy::commit`)
//! from the element's total normal force at the committed state. A contact already closed at
//! t = 0 (a body resting on the ground) is not a hit.

/// The hit counter of one contact element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HitCounter {
    /// Hits counted since t = 0 [-].
    pub hits: u32,
    /// The largest contact force since t = 0 [N].
    pub peak_force_n: f64,
    /// The largest contact force of the current or last hit [N].
    pub last_hit_force_n: f64,
    /// Whether the contact was closed (force > 0) at the last committed step.
    pub touching: bool,
    /// Time of the last release (force back to 0) [s]; −∞ before the first.
    pub released_s: f64,
}

impl Default for HitCounter {
    fn default() -> Self {
        HitCounter {
            hits: 0,
            peak_force_n: 0.0,
            last_hit_force_n: 0.0,
            touching: false,
            released_s: f64::NEG_INFINITY,
        }
    }
}

impl HitCounter {
    /// The counter at t = 0 with the initial contact force `force_n` [N]: a contact already
    /// closed is not a hit.
    pub fn start(force_n: f64) -> Self {
        HitCounter {
            touching: force_n > 0.0,
            peak_force_n: force_n.max(0.0),
            ..HitCounter::default()
        }
    }

    /// Advances the counter to the committed step ending at `t_s` [s] with the contact force
    /// `force_n` [N]: an onset after at least `gap_s` [s] of separation is a hit.
    pub fn advance(&mut self, t_s: f64, force_n: f64, gap_s: f64) {
        let closed = force_n > 0.0;
        if closed && !self.touching {
            if t_s - self.released_s >= gap_s {
                self.hits += 1;
                self.last_hit_force_n = 0.0;
            }
            self.touching = true;
        } else if !closed && self.touching {
            self.touching = false;
            self.released_s = t_s;
        }
        if closed {
            self.peak_force_n = self.peak_force_n.max(force_n);
            self.last_hit_force_n = self.last_hit_force_n.max(force_n);
        }
    }
}

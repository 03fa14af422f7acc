//! A scripted operator for the excavator on its worksite, shared by the worksite tests
//! (`hydraulink-io/tests/scene.rs`) and the game test (`hydraulink-viewer/tests/game.rs`, which
//! includes this file by its path).
//!
//! It plays the machine's own dig–swing–dump cycle (the model's `[[inputs]]` U_boom, U_arm,
//! U_bucket and U_swing, one cycle per `[solver] duration_s`) again and again, but aims each
//! pass as an operator does. Replayed unchanged, the cycle cuts its own trench again: the cut
//! fills the bucket no faster than the soil it meets allows, so the second pass carries a
//! fraction of the first and the third almost nothing; and the machine ends each cycle a few
//! degrees of swing and boom away from its start pose, which adds up. So from the settled end of
//! one cycle (the model's house settles by 14 s) to the first stick move of the next (1 s), the
//! operator closes the loop on the joint angles instead: a proportional command on each joint's
//! error, clipped to the joystick's ±10 V, that brings the boom, the arm and the bucket back to
//! the start pose and the swing to the next pass's aim angle, beside the trenches already cut.
//! The first cycle is the model's own, unchanged. The swing to the hopper is the model's stick
//! move, held until the house reaches the angle where the first cycle let go of it (it then
//! coasts to the same dump angle, whatever the pass's aim): the cycle's swing is timed for a pass
//! aimed straight ahead, and a pass aimed 0.2 rad aside, released by the clock, dumps beside the
//! 2.1 m × 2.2 m hopper (measured: the second pass's 830 kg missed it). The dump is held (the
//! cycle's clock stopped with the bucket stick open, at most 2 s) until the bucket is empty: a
//! lighter load leaves the bucket curled further in at the dump, and the cycle's timed 1.4 s of
//! bucket-open then left it short of its dump angle with 798 kg in it, which the boom lowered
//! onto the hopper's wall (a hit). Every stick moves at most 50 V/s, as an operator's hand.

use hydraulink::elements::inputs::Signal;
use hydraulink::Simulation;

/// The swing aims of the passes after the first [rad]: 0.2 rad to the right (towards +z, away
/// from the hopper), then 0.15 rad to the left. The bucket's 1.1 m edge spans 0.18–0.27 rad
/// over the cut's 6 to 4 m of radius, so each pass meets mostly fresh sand of the 2 m cone at
/// x = 3.8 m (measured: 798 and 688 kg, against 323 kg for the same path again); the pass aimed
/// right clears pole_a (ψ ≈ −0.5 rad, 5.5 m out) by about 1 m. The hopper side takes the
/// smaller aim: from there the house runs a shorter way to the release angle, coasts less and
/// stops short of the hopper's middle (0.2 rad there dumped 702 of 828 kg beside the hopper;
/// 0.25 rad all of it).
pub const AIMS_RAD: [f64; 2] = [-0.2, 0.15];

/// The joysticks and the joints they move, in the same order.
const JOYSTICKS: [&str; 4] = ["U_swing", "U_boom", "U_arm", "U_bucket"];
const JOINTS: [&str; 4] = ["swing", "z_boom", "z_arm", "z_bucket"];
/// Proportional gains [V/rad]. Their signs are those of each joint's rate per volt in the
/// model's cycle (a positive U_swing swings towards the hopper, ψ up; a positive U_boom raises
/// the boom; a positive U_arm or U_bucket curls the arm or the bucket in, their angles down).
/// Magnitudes: about a third of a second to close an error at the valves' full-stick rates
/// (the swing's 10 V turn it at 11.3 rpm, 1.2 rad/s).
const GAINS_V_RAD: [f64; 4] = [12.0, 40.0, -40.0, -40.0];
/// Rate feedback on the swing [V s/rad]: the house on its oil rings at about 1 Hz, and a
/// proportional command alone overshot a 0.2 rad aim by 0.07 rad and kept swinging ±0.06 rad.
const SWING_DAMPING_V_S_RAD: f64 = 4.0;
/// The swing-out of the model's cycle: the stick is pushed from 5.4 s, held from 5.6 s and let
/// go at 7.25 s, back at 0 by 7.45 s (models/excavator.toml, U_swing) [s].
const SWING_OUT_S: f64 = 5.4;
const SWING_RELEASE_S: f64 = 7.25;
/// The end of the dump, where the swing back starts (11.2 s) [s].
const SWING_BACK_S: f64 = 11.2;
/// The end of the dump's bucket-open hold (10.0 s, the stick back by 10.2 s) [s].
const DUMP_HELD_S: f64 = 10.0;
/// The longest the operator waits there for the bucket to empty [s].
const DUMP_WAIT_MAX_S: f64 = 2.0;
/// A bucket is empty below this load [kg].
const EMPTY_KG: f64 = 1.0;
/// The fastest the operator moves a stick [V/s]: the cycle's own ramps are at most 37 V/s
/// (the swing's 7.4 V in 0.2 s). A stick slammed from 0 to the aim's command in one step at
/// the start of the aim phase made the Newton iteration diverge on the bucket valve's supply
/// `VP_bucket.p` (t = 32.02 s with aims of ±0.15 and ±0.25 rad).
const SLEW_V_S: f64 = 50.0;
/// The joystick's range [V].
const U_MAX_V: f64 = 10.0;
/// The cycle's time from which the operator aims the next pass (the house has settled) [s].
const AIM_FROM_S: f64 = 14.0;
/// The cycle's time of its first stick move, where the aiming of this pass ends [s].
const AIM_UNTIL_S: f64 = 1.0;

/// The aiming operator: the model's cycle, with a closed-loop aim before every pass after the
/// first.
pub struct AimingOperator {
    period_s: f64,
    script: Vec<(&'static str, Signal)>,
    /// `State::z` slots of the swing, boom, arm and bucket joints.
    axes: [usize; 4],
    /// The swing angle aimed at before each pass after the first [rad] (the first pass's is
    /// the start pose's, 0).
    aims_rad: Vec<f64>,
    /// The swing angle at which the first cycle let go of the swing stick [rad].
    release_rad: Option<f64>,
    /// When this cycle let go of it [s of the cycle].
    released_at_s: Option<f64>,
    /// The column of the bucket's load, `dig.payload_kg`, and a row to read it into.
    payload: usize,
    row: Vec<f64>,
    /// How long this cycle's dump has been held past the cycle's [s].
    dump_wait_s: f64,
    /// Whether this cycle's dump is over.
    dump_done: bool,
    /// The sticks as last set [V].
    u_last: [f64; 4],
}

impl AimingOperator {
    /// The operator of `sim` (the excavator, with or without its worksite), aiming the passes
    /// after the first at the swing angles `aims_rad` in turn (the last one repeated).
    pub fn new(sim: &Simulation, aims_rad: &[f64]) -> Self {
        let model = sim.model();
        let script = JOYSTICKS
            .iter()
            .map(|&n| (n, model.input_signal(n).expect("a cycle input").clone()))
            .collect();
        let axes = JOINTS.map(|j| {
            model
                .axes
                .iter()
                .position(|a| a.name == j)
                .unwrap_or_else(|| panic!("no joint {j}"))
        });
        assert!(!aims_rad.is_empty(), "an aim per pass after the first");
        Self {
            period_s: model.duration_s(),
            script,
            axes,
            aims_rad: aims_rad.to_vec(),
            release_rad: None,
            released_at_s: None,
            payload: sim
                .output_labels()
                .iter()
                .position(|l| l == "dig.payload_kg")
                .expect("a digging bucket"),
            row: vec![0.0; sim.n_outputs()],
            dump_wait_s: 0.0,
            dump_done: false,
            u_last: [0.0; 4],
        }
    }

    /// The length of one cycle [s] (the model's `duration_s`).
    pub fn period_s(&self) -> f64 {
        self.period_s
    }

    /// The cycle (0 for the first) that time `t_s` belongs to.
    pub fn cycle(&self, t_s: f64) -> usize {
        (t_s / self.period_s).floor() as usize
    }

    /// The pass being aimed at time `t_s`, if the operator is aiming (1 for the second).
    fn aiming(&self, t_s: f64) -> Option<usize> {
        let k = self.cycle(t_s);
        let tau = t_s - k as f64 * self.period_s;
        if tau - self.dump_wait_s >= AIM_FROM_S {
            Some(k + 1)
        } else if tau < AIM_UNTIL_S && k >= 1 {
            Some(k)
        } else {
            None
        }
    }

    /// Sets the four joysticks for the step from `sim`'s time: the cycle's signals, or while
    /// aiming the commands read from the joint angles and rates of `sim.state()`.
    pub fn set_inputs(&mut self, sim: &mut Simulation) {
        let t = sim.time_s();
        let k = self.cycle(t);
        let tau_clock = t - k as f64 * self.period_s;
        if k >= 1 && tau_clock < AIM_UNTIL_S {
            (self.dump_wait_s, self.dump_done) = (0.0, false);
        }
        // the cycle's time, stopped at the dump's bucket-open hold until the bucket is empty
        if k >= 1 && !self.dump_done && tau_clock - self.dump_wait_s >= DUMP_HELD_S {
            sim.output_row(&mut self.row);
            let wait = tau_clock - DUMP_HELD_S;
            if self.row[self.payload] > EMPTY_KG && wait < DUMP_WAIT_MAX_S {
                self.dump_wait_s = wait;
            } else {
                self.dump_done = true;
            }
        }
        let tau = tau_clock - self.dump_wait_s;
        let (z, zd) = (&sim.state().z, &sim.state().zd);
        let swing = z[self.axes[0]];
        let mut u: [f64; 4] = std::array::from_fn(|j| self.script[j].1.value(tau));
        if let Some(pass) = self.aiming(t) {
            let aim = self.aims_rad[(pass - 1).min(self.aims_rad.len() - 1)];
            let target = [aim, 0.0, 0.0, 0.0];
            u = std::array::from_fn(|j| GAINS_V_RAD[j] * (target[j] - z[self.axes[j]]));
            u[0] -= SWING_DAMPING_V_S_RAD * zd[self.axes[0]];
            u = u.map(|x| x.clamp(-U_MAX_V, U_MAX_V));
            self.released_at_s = None;
        } else if k == 0 {
            // the first cycle is the model's: where it lets go of the swing
            if self.release_rad.is_none() && tau >= SWING_RELEASE_S {
                self.release_rad = Some(swing);
            }
        } else if (SWING_OUT_S..SWING_BACK_S).contains(&tau) {
            // the stick held until the house reaches the first cycle's release angle, then
            // the model's release ramp
            let release = self.release_rad.expect("the first cycle let go");
            if self.released_at_s.is_none() && swing >= release {
                self.released_at_s = Some(tau);
            }
            let script_tau = match self.released_at_s {
                None => tau.min(SWING_RELEASE_S),
                Some(r) => SWING_RELEASE_S + (tau - r),
            };
            u[0] = self.script[0].1.value(script_tau.min(SWING_BACK_S - 1e-9));
        }
        let du = SLEW_V_S * sim.model().step_s();
        for (j, &(name, _)) in self.script.iter().enumerate() {
            let v = u[j].clamp(self.u_last[j] - du, self.u_last[j] + du);
            sim.set_input(name, v).expect("a cycle input");
            self.u_last[j] = v;
        }
    }
}

//! Friction–velocity characteristics of one friction element, without the machine (003 Pub II
//! Fig. 9): the steady-state curve, and a slow sinusoidal velocity sweep in which the internal
//! states follow their own equations, showing pre-sliding (F_μ ≠ 0 near v = 0), frictional lag
//! and hysteresis. The states are integrated with the trapezoidal rule, like the machine's.

use num_dual::Dual64;

use crate::elements::friction::{force, n_states, rates, steady_states, Friction};
use crate::solver::newton::{self, Counters, NewtonProblem, TangentPolicy};
use crate::solver::tolerances::Tolerances;

/// (v [m/s], F_μ [N]) at `n` ≥ 2 evenly spaced velocities on [v_min, v_max]; `f_hyd` is the
/// hydraulic force of the efficiency law.
pub fn steady_curve(f: &Friction, f_hyd: f64, v_min: f64, v_max: f64, n: usize) -> Vec<[f64; 2]> {
    (0..n)
        .map(|i| {
            let v = v_min + (v_max - v_min) * i as f64 / (n - 1).max(1) as f64;
            [v, super::steady_force(f, f_hyd, v)]
        })
        .collect()
}

/// A sample of the sweep: time [s], v [m/s], F_μ [N], internal states.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepSample {
    /// t [s].
    pub t: f64,
    /// v [m/s].
    pub v: f64,
    /// F_μ [N].
    pub force: f64,
    /// Internal states (unused entries 0).
    pub states: [f64; 2],
}

/// v(t) = v_0 + A sin(2π t / T) for `periods` periods, starting at rest in the steady state of
/// v_0, states integrated by the trapezoidal rule with step `dt` (Newton with the dual-number
/// Jacobian of the state rates).
pub fn sweep(
    f: &Friction,
    f_hyd: f64,
    offset: f64,
    amplitude: f64,
    period_s: f64,
    periods: f64,
    dt: f64,
) -> Vec<SweepSample> {
    let k = n_states(f);
    let v_at = |t: f64| offset + amplitude * (2.0 * std::f64::consts::PI * t / period_s).sin();
    let n = (periods * period_s / dt).round() as usize;
    let mut w = [0.0; 2];
    steady_states(f, v_at(0.0), &mut w);
    let mut u = [0.0; 2];
    rates(f, v_at(0.0), &w[..k], &mut u[..k]);
    let mut out = Vec::with_capacity(n + 1);
    let sample = |t: f64, w: &[f64; 2]| SweepSample {
        t,
        v: v_at(t),
        force: force(f, f_hyd, v_at(t), &w[..k]),
        states: *w,
    };
    out.push(sample(0.0, &w));
    for i in 1..=n {
        let t = i as f64 * dt;
        let v = v_at(t);
        // w⁺ − w − Δt/2 (u + u(v, w⁺)) = 0 (static laws: nothing to integrate), by the one
        // Newton; after 50 iterations the last iterate is taken as it is
        let mut step = StateStep {
            f,
            k,
            v,
            dt,
            w,
            u,
            x: w,
            r: [0.0; 2],
            jac: [[0.0; 2]; 2],
            dx: [0.0; 2],
            small: false,
            counters: Counters::default(),
        };
        if k > 0 {
            let _capped = newton::solve(&mut step, TangentPolicy::FULL, 50);
        }
        let x = step.x;
        w = x;
        rates(f, v, &w[..k], &mut u[..k]);
        out.push(sample(t, &w));
    }
    out
}

/// One trapezoidal step of the k ≤ 2 internal states at the velocity v: the residual
/// r(x) = x − w − Δt/2 (u + u(v, x)) and its 2 × 2 tangent by dual numbers, solved by
/// [`newton::solve`]. It converges on its own test, an increment below 1e-14 in the first
/// state and 1e-12 in the second.
struct StateStep<'a> {
    f: &'a Friction,
    k: usize,
    v: f64,
    dt: f64,
    /// The states w and their rates u at the step's start.
    w: [f64; 2],
    u: [f64; 2],
    /// The iterate x, its residual r, tangent and increment.
    x: [f64; 2],
    r: [f64; 2],
    jac: [[f64; 2]; 2],
    dx: [f64; 2],
    /// Whether the last increment met the test.
    small: bool,
    counters: Counters,
}

impl NewtonProblem for StateStep<'_> {
    type Error = ();
    fn evaluate(&mut self) -> Result<(), ()> {
        let (k, x, w, u, dt) = (self.k, self.x, self.w, self.u, self.dt);
        for j in 0..k {
            let xd: [Dual64; 2] =
                std::array::from_fn(|m| Dual64::new(x[m], if m == j { 1.0 } else { 0.0 }));
            let mut ud = [Dual64::from(0.0); 2];
            rates(self.f, Dual64::from(self.v), &xd[..k], &mut ud[..k]);
            for m in 0..k {
                self.r[m] = x[m] - w[m] - 0.5 * dt * (u[m] + ud[m].re);
                self.jac[m][j] = if m == j { 1.0 } else { 0.0 } - 0.5 * dt * ud[m].eps;
            }
        }
        Ok(())
    }
    fn form_residual(&mut self) -> Result<(), ()> {
        Ok(())
    }
    fn tangent_reusable(&self) -> bool {
        false
    }
    /// The tangent was formed with the residual; there is nothing to factor.
    fn refresh_tangent(&mut self) -> Result<bool, ()> {
        Ok(true)
    }
    fn solve_increment(&mut self) {
        let (r, jac) = (self.r, self.jac);
        self.dx = if self.k == 1 {
            [-r[0] / jac[0][0], 0.0]
        } else {
            let det = jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0];
            [
                -(jac[1][1] * r[0] - jac[0][1] * r[1]) / det,
                -(jac[0][0] * r[1] - jac[1][0] * r[0]) / det,
            ]
        };
        self.small = self.dx[0].abs() < 1e-14 && self.dx[1].abs() < 1e-12;
    }
    fn iterate(&mut self) -> (&mut [f64], &[f64]) {
        (&mut self.x, &self.dx)
    }
    fn converges_on_residual(&self) -> bool {
        true
    }
    /// The test on the last increment (the iterate it led to has just been evaluated).
    fn residual_converged(&self) -> bool {
        self.small
    }
    fn tolerances(&self) -> Tolerances {
        // (unused: the solve converges on its own test, `residual_converged`)
        Tolerances::new(&[(2, 0.0)], 0.0)
    }
    fn counters(&mut self) -> &mut Counters {
        &mut self.counters
    }
    fn failure(&mut self, _iterations: u32, _reason: &str) {}
}

//! Static equilibrium of the mechanism and the hydraulics together (001 §4.3, reference note
//! 001 A.4), the reference solution of a linearization.
//!
//! ```text
//! 1. loop closure:  Φ(z) = 0 for the dependent coordinates, the held (independent) ones at q0
//!                   (Gauss–Newton, minimum-norm steps on the free columns of Φ_z)
//! 2. spools:        U⁰ = U_ref(t) (steady state of U̇ = (U_ref − U)/τ, 001 eq. 4)
//! 3. statics:       Q′(z⁰, 0, p) − Φ_zᵀ λ = 0            (n equations, 001 eq. 9 with ẍ = 0)
//!                   Σ Q_in,v(p, U⁰) = 0  for every volume (H = 0 at rest, 001 eq. 1)
//!                   unknowns: λ and the pressures without `p0_pa`; the prescribed pressures and
//!                   the valve inputs are data. Gauss–Newton with the exact (dual-number) Jacobian
//!                   in p, least squares (redundant constraints give minimum-norm λ).
//! 4. friction:      the seals and friction joints at rest carry no load: the statics of step 3
//!                   are solved with F_μ = 0, so their pre-sliding states are those of
//!                   `friction::rest_states` at zero load (bristle q = 0, film h = 0; 003 Pub II).
//!                   Any |σ0 q| ≤ F_s would also be at rest; the unloaded seal is the choice.
//! 5. internal:      the elements' internal states at their steady state ė = 0 at the pressures
//!                   (`Element::steady_internal`, e.g. the poppet's static opening x_s(Δp)), also
//!                   inside step 3, so the flows there are the static ones.
//! ```
//! For the four-bar of 001: φ2 held at 60°, p3 = 3.5 MPa prescribed, U = 0 → p1 = p2 =
//! 2.820479 MPa, φ32 = 322.0956°, φ43 = 266.4167° (note B.6).

use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;

use crate::linearize::{partition, LinearizeError, OperatingPoint};
use crate::mechanics::assembly::Evaluator;
use crate::model::Model;
use crate::solver::linalg::pinv_solve;
use crate::solver::newton::{self, Counters, NewtonProblem, TangentPolicy, Tolerances};

/// What the equilibrium holds fixed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EquilibriumOptions {
    /// Coordinates held at their `q0` (the independent coordinates). `None`: chosen by
    /// [`partition`] at q0 (the first coordinates of the tree).
    pub held: Option<Vec<usize>>,
    /// Time at which the valve input signals are read [s].
    pub time_s: f64,
}

/// A static equilibrium.
#[derive(Debug, Clone, PartialEq)]
pub struct Equilibrium {
    /// The reference solution (ż⁰ = z̈⁰ = 0).
    pub point: OperatingPoint,
    /// The held coordinates.
    pub held: Vec<usize>,
    /// Net force of each cylinder [N].
    pub cylinder_force_n: Vec<f64>,
    /// Largest generalized-force residual |Q′ − Φ_zᵀλ| [N or N m].
    pub force_residual: f64,
    /// Largest net inflow into a volume [m³/s].
    pub flow_residual_m3_s: f64,
}

/// Solves the static equilibrium of `model` (see the module doc).
pub fn equilibrium(
    model: &Model,
    opts: &EquilibriumOptions,
) -> Result<Equilibrium, LinearizeError> {
    super::check_supported(model)?;
    let (n, m, nv) = (model.n_coords(), model.n_constraints(), model.n_volumes());
    let mut ev = super::evaluator_at::<f64>(model, opts.time_s);
    let mut z: Vec<f64> = model.axes.iter().map(|a| a.q0).collect();
    let held = match &opts.held {
        Some(h) => h.clone(),
        None => {
            ev.positions(model, &z);
            let jac = DMatrix::from_row_slice(m, n, &ev.constraints.jac);
            partition(&jac, &[]).independent
        }
    };
    let held_names = || {
        held.iter()
            .map(|&k| model.axes[k].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    // 1. loop closure with the held coordinates fixed
    let free: Vec<usize> = (0..n).filter(|k| !held.contains(k)).collect();
    if m > 0 {
        // tolerance 1e-13: tighter than the initialization's, for the 1e-9° equilibrium angles
        if let Err((violation, iterations)) =
            crate::mechanics::loop_closure::close_loops(model, &mut ev, &mut z, &free, 1e-13)
        {
            return Err(LinearizeError::LoopCannotClose {
                held: held_names(),
                violation,
                iterations: iterations as usize,
            });
        }
    }
    // 2. spools at their steady state, then the pumps' shaft speeds held at their inputs' values;
    // bridge openings are rejected by check_supported
    let mut spool: Vec<f64> = super::valve_references(model, opts.time_s);
    spool.extend(super::pump_speeds(model, opts.time_s));
    // 3. statics: unknowns y = (λ, free pressures)
    let unknown: Vec<usize> = (0..nv)
        .filter(|&v| model.hydraulics.volumes[v].p0_pa.is_none())
        .collect();
    let guess = crate::pipeline::initialization::pressure_guess(model);
    let mut p: Vec<f64> = model
        .hydraulics
        .volumes
        .iter()
        .map(|v| v.p0_pa.unwrap_or(guess))
        .collect();
    // multipliers: m loop-closure rows, then l nonholonomic rows (a knife edge can carry a
    // lateral force at rest)
    let l = model.n_nonholonomic();
    let ml = m + l;
    let mut lambda = vec![0.0; ml];
    let zd0 = vec![Dual64::from(0.0); n];
    let zdual: Vec<Dual64> = z.iter().map(|&x| Dual64::from(x)).collect();
    let mut evd = super::evaluator_at::<Dual64>(model, opts.time_s);
    let mut internal = vec![0.0; model.layout.internal.len()];
    let nu = ml + unknown.len();
    let neq = n + nv;
    // the one Newton, full (a tangent at every iteration), at most 50 increments, judged by the
    // residual below whether or not its increment test was met
    let mut x = lambda.clone();
    x.extend(unknown.iter().map(|&v| p[v]));
    let mut statics = Statics {
        model,
        spool: &spool,
        unknown: &unknown,
        zdual: &zdual,
        zd0: &zd0,
        evd: &mut evd,
        p: &mut p,
        ml,
        x,
        dx: vec![0.0; nu],
        jm: DMatrix::<f64>::zeros(neq, nu),
        r: DVector::<f64>::zeros(neq),
        a: DMatrix::<f64>::zeros(neq, nu),
        rv: DVector::<f64>::zeros(neq),
        cs: vec![1.0; nu],
        counters: Default::default(),
    };
    let converged = newton::solve(&mut statics, TangentPolicy::FULL, 50).is_ok();
    let x = std::mem::take(&mut statics.x);
    lambda.copy_from_slice(&x[..ml]);
    for (i, &v) in unknown.iter().enumerate() {
        p[v] = x[ml + i];
    }
    // final residual at the converged point
    let zd = vec![0.0; n];
    crate::circuit::steady_internal_states(model, &p, &spool, &mut internal);
    ev.internal.copy_from_slice(&internal);
    ev.evaluate(model, &z, &zd, &p, &spool, false);
    let mut force_res: f64 = 0.0;
    let mut worst_coordinate = None;
    let mut scale: f64 = 1.0;
    for i in 0..n {
        let mut f = ev.dynamics.force[i];
        scale = scale.max(f.abs());
        for (k, lk) in lambda.iter().enumerate() {
            let row = if k < m {
                ev.constraints.jac[k * n + i]
            } else {
                ev.nonholonomic.b[(k - m) * n + i]
            };
            f -= row * lk;
        }
        if f.abs() > force_res {
            force_res = f.abs();
            worst_coordinate = Some(i);
        }
    }
    let flow_res = ev.inflow.iter().fold(0.0_f64, |a, q| a.max(q.abs()));
    if !converged || force_res > 1e-8 * scale || flow_res > 1e-15 {
        // name only what the model has: the coordinate with the largest unbalanced force, and
        // the volume with the largest net inflow when there are volumes
        let force = match worst_coordinate {
            Some(k) => format!(
                "a generalized force of {force_res:.3e} (largest on '{}')",
                model.axes[k].name
            ),
            None => format!("a generalized force of {force_res:.3e}"),
        };
        let worst_volume = (0..nv)
            .max_by(|&a, &b| ev.inflow[a].abs().total_cmp(&ev.inflow[b].abs()))
            .map(|v| &model.volume_names[v]);
        return Err(LinearizeError::NoEquilibrium(match worst_volume {
            Some(volume) => format!(
                "with {} held, the prescribed pressures and valve inputs leave {force} and a net \
                 inflow of {flow_res:.3e} m³/s (volume '{volume}'); hold other coordinates or \
                 prescribe other pressures",
                held_names()
            ),
            None => format!(
                "with {} held, the loads leave {force}, and the model has no volumes whose \
                 pressures could balance it; give the held coordinates a q0 where the loads \
                 balance (a pendulum hanging straight down), or hold other coordinates",
                held_names()
            ),
        }));
    }
    // 4. friction states: pre-sliding at zero load (the statics above carried no friction)
    let mut friction = vec![0.0; model.n_friction_states()];
    for e in super::friction_elements(model) {
        crate::elements::friction::rest_states(e.law, 0.0, &mut friction[e.states.clone()])
            .map_err(|msg| LinearizeError::NoEquilibrium(format!("'{}': {msg}", e.name)))?;
    }
    Ok(Equilibrium {
        point: OperatingPoint {
            t_s: opts.time_s,
            z,
            zd: vec![0.0; n],
            zdd: vec![0.0; n],
            p,
            spool,
            lambda,
            friction,
            internal,
        },
        held,
        cylinder_force_n: ev.cylinder_force.clone(),
        force_residual: force_res,
        flow_residual_m3_s: flow_res,
    })
}

/// A simulation [`State`](crate::State) at the equilibrium, for
/// [`Simulation::set_state`](crate::Simulation::set_state): the simulator's initialization
/// (consistent accelerations, pressure rates, energies) with the positions, pressures, spools,
/// multipliers, friction states and internal states of `eq`. This is how a run starts exactly at rest at the linearization point.
pub fn initial_state(model: &Model, eq: &Equilibrium) -> Result<crate::State, crate::InitError> {
    let mut st = crate::pipeline::initialization::initialize(model)?;
    let (n, nv) = (model.n_coords(), model.n_volumes());
    let pt = &eq.point;
    st.t_s = pt.t_s;
    st.z.copy_from_slice(&pt.z);
    st.zd = vec![0.0; n];
    st.zdd = vec![0.0; n];
    st.p.copy_from_slice(&pt.p);
    st.pd = vec![0.0; nv];
    st.pdd = vec![0.0; nv];
    st.spool.copy_from_slice(&pt.spool);
    st.lambda = pt.lambda.clone();
    st.friction.copy_from_slice(&pt.friction);
    st.friction_rate.iter_mut().for_each(|x| *x = 0.0);
    st.friction_velocity_m_s.iter_mut().for_each(|x| *x = 0.0);
    st.friction_power_w.iter_mut().for_each(|x| *x = 0.0);
    st.internal.copy_from_slice(&pt.internal);
    st.internal_rate.iter_mut().for_each(|x| *x = 0.0);
    let mut ev = super::evaluator_at::<f64>(model, pt.t_s);
    ev.fstate.copy_from_slice(&st.friction);
    ev.internal.copy_from_slice(&st.internal);
    ev.evaluate(model, &st.z, &st.zd, &st.p, &st.spool, false);
    let (ke, pe) = crate::mechanics::energy::energies(model, &ev.dynamics, &st.zd);
    st.energy0_j = ke + pe;
    st.potential0_j = pe;
    st.actuator_power_w = vec![0.0; st.actuator_power_w.len()];
    Ok(st)
}

/// The statics of [`equilibrium`] as a problem of the one Newton (`solver::newton::solve`):
/// unknowns y = (λ, free pressures), equations Q′ − Φ_zᵀλ − Bᵀσ = 0 (one per coordinate) and zero
/// net inflow (one per volume), the pressure columns exact by dual numbers; increments by the
/// pseudo-inverse of the row- and column-equilibrated tangent (N, Pa and m³/s live in one system).
struct Statics<'a> {
    model: &'a Model,
    spool: &'a [f64],
    unknown: &'a [usize],
    zdual: &'a [Dual64],
    zd0: &'a [Dual64],
    evd: &'a mut Evaluator<Dual64>,
    /// Every volume's pressure: the unknown ones follow x.
    p: &'a mut [f64],
    /// Multipliers: m loop-closure rows, then the nonholonomic ones.
    ml: usize,
    /// y = (λ, the unknown pressures) and its increment.
    x: Vec<f64>,
    dx: Vec<f64>,
    /// The tangent and residual at the iterate, and their equilibrated copies with the column
    /// scales.
    jm: DMatrix<f64>,
    r: DVector<f64>,
    a: DMatrix<f64>,
    rv: DVector<f64>,
    cs: Vec<f64>,
    counters: Counters,
}

impl NewtonProblem for Statics<'_> {
    type Error = ();
    fn evaluate(&mut self) -> Result<(), ()> {
        let (model, ml) = (self.model, self.ml);
        let (n, m, nv) = (model.n_coords(), model.n_constraints(), model.n_volumes());
        for (i, &v) in self.unknown.iter().enumerate() {
            self.p[v] = self.x[ml + i];
        }
        let lambda = &self.x[..ml];
        let evd = &mut *self.evd;
        // residual and pressure columns: one dual pass per unknown pressure (or one f64 pass)
        let passes = self.unknown.len().max(1);
        for pass in 0..passes {
            let seed = self.unknown.get(pass).copied();
            let pd: Vec<Dual64> = (0..nv)
                .map(|v| Dual64::new(self.p[v], if Some(v) == seed { 1.0 } else { 0.0 }))
                .collect();
            // 5. e = e_s(p), dual in p: the flows are the static valve's
            crate::circuit::steady_internal_states(model, &pd, self.spool, &mut evd.internal);
            evd.evaluate(model, self.zdual, self.zd0, &pd, self.spool, false);
            for i in 0..n {
                let mut f = evd.dynamics.force[i];
                for (k, lk) in lambda.iter().enumerate() {
                    let row = if k < m {
                        evd.constraints.jac[k * n + i]
                    } else {
                        evd.nonholonomic.b[(k - m) * n + i]
                    };
                    f -= row * *lk;
                }
                self.r[i] = f.re;
                if seed.is_some() {
                    self.jm[(i, ml + pass)] = f.eps;
                }
            }
            for v in 0..nv {
                self.r[n + v] = evd.inflow[v].re;
                if seed.is_some() {
                    self.jm[(n + v, ml + pass)] = evd.inflow[v].eps;
                }
            }
        }
        for k in 0..ml {
            for i in 0..n {
                self.jm[(i, k)] = if k < m {
                    -evd.constraints.jac[k * n + i].re
                } else {
                    -evd.nonholonomic.b[(k - m) * n + i].re
                };
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
    fn refresh_tangent(&mut self) -> Result<bool, ()> {
        // equilibrate rows and columns (N, Pa and m³/s live in one system)
        self.a.copy_from(&self.jm);
        self.rv.copy_from(&self.r);
        for i in 0..self.a.nrows() {
            let s = self.a.row(i).amax();
            if s > 0.0 {
                self.a.row_mut(i).scale_mut(1.0 / s);
                self.rv[i] /= s;
            }
        }
        for (j, c) in self.cs.iter_mut().enumerate() {
            *c = 1.0;
            let s = self.a.column(j).amax();
            if s > 0.0 {
                *c = 1.0 / s;
                self.a.column_mut(j).scale_mut(*c);
            }
        }
        Ok(true)
    }
    fn solve_increment(&mut self) {
        let d = pinv_solve(&self.a, &(-&self.rv));
        for (k, dk) in self.dx.iter_mut().enumerate() {
            *dk = d[k] * self.cs[k];
        }
    }
    fn iterate(&mut self) -> (&mut [f64], &[f64]) {
        (&mut self.x, &self.dx)
    }
    fn tolerances(&self) -> Tolerances {
        // |Δλ| ≤ 1e-12 (|λ| + 1) and |Δp| ≤ 1e-12 (|p| + 1e5 Pa)
        Tolerances::new(&[(self.ml, 1e-12), (self.x.len() - self.ml, 1e-7)], 1e-12)
    }
    fn fails_on_growth(&self) -> bool {
        false
    }
    fn counters(&mut self) -> &mut Counters {
        &mut self.counters
    }
    fn failure(&mut self, _iterations: u32, _reason: &str) {}
}

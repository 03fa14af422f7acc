//! Consistent initialization (STYLE: initialization has its own contract):
//!
//! 1. **Loop closure.** Minimum-norm Gauss–Newton on Φ(z) = 0 from q0:
//!    z ← z − Φ_zᵀ (Φ_z Φ_zᵀ)⁺ Φ. The printed angles of a paper close only approximately
//!    (quick-return: ~0.3 mm, reference note 000-E.10).
//! 2. **Velocities** projected onto Φ_z ż = 0 the same way.
//! 3. **Statics.** The cylinder forces F that hold the mechanism still: Q′₀ + B F − Φ_zᵀ μ = 0,
//!    with B_:c = ∂s_c/∂z, solved in least squares (SVD); a residual means the cylinders cannot
//!    hold the mechanism.
//! 4. **Pressures.** Volumes without `p0_pa` are solved from F_c = p_A A_A − p_B A_B and zero
//!    net flow into every unknown volume (Gauss–Newton, exact Jacobian by dual numbers). 000 does
//!    this by hand: p1 = p2 = (F_s0 + p3 A3)/A2. A hydraulic motor with a volume without
//!    `p0_pa` holds its joint like a cylinder: its torque τ joins the statics of stage 3 as one
//!    more column (a unit generalized force on its joint), and at rest (q̇ = 0, η = 1 in the
//!    motor's efficiency blend) τ = i D (p_A − p_B)/(2π) gives the holding pressure
//!    Δp = 2π τ/(i D) as one more equation.
//! 5. **Accelerations and multipliers.** The augmented system of note 000-A.6,
//!    [[M′, Φ_zᵀ], [Φ_z, 0]] [z̈₀; λ₀] = [Q′; −Φ̇_z ż], solved in least squares (minimum norm), so
//!    that redundant constraints are allowed; and ṗ₀ = h(p₀, z₀, ż₀).
//!
//! Every least-squares solve refuses non-finite input and the initial state is checked for
//! NaN/Inf: either is [`InitError::Numerical`], naming the stage and the element (joint, cut
//! joint, cylinder, volume) behind the offending row or column, never a panic or a hang.

use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;

use std::f64::consts::PI;

use crate::circuit;
use crate::elements::component::Component;
use crate::elements::element::Element;
use crate::elements::hydraulics::cylinder;
use crate::elements::hydraulics::hydraulic_motor::{self, HydraulicMotor};
use crate::elements::inputs::InputValues;
use crate::mechanics::assembly::Evaluator;
use crate::mechanics::energy;
use crate::mechanics::kinematics::for_each_on_path;
use crate::mechanics::loop_closure::close_loops;
use crate::model::{CylinderId, Model, Node};
use crate::solver::linalg::{try_pinv_solve, KernelError};
use crate::solver::newton::{self, Counters, NewtonProblem, TangentPolicy, Tolerances};
use crate::state::State;
use crate::InitError;

fn jac_matrix(ev: &Evaluator<f64>, m: usize, n: usize) -> DMatrix<f64> {
    DMatrix::from_row_slice(m, n, &ev.constraints.jac)
}

/// The element behind coordinate `i` (its joint).
fn coord_element(model: &Model, i: usize) -> String {
    match model.axes.get(i) {
        Some(axis) => format!("joint '{}'", model.joints[axis.joint].name),
        None => "model".into(),
    }
}

/// The element behind row `r` of D = [Φ_z; B]: a cut joint, or a nonholonomic constraint.
fn constraint_element(model: &Model, r: usize) -> String {
    let m = model.n_constraints();
    if r < m {
        format!(
            "cut joint '{}'",
            model.cut_joints[model.constraints[r].cut_joint]
        )
    } else if let Some(row) = model.nonholonomic.get(r - m) {
        format!("nonholonomic constraint '{}'", row.name)
    } else {
        "model".into()
    }
}

/// [`try_pinv_solve`] for `stage`, a failure named after the element behind the offending
/// entry: `entry(row, column)` for the matrix, `rhs(row)` for the right-hand side.
fn solve_stage(
    stage: &str,
    a: &DMatrix<f64>,
    b: &DVector<f64>,
    entry: impl Fn(usize, usize) -> String,
    rhs: impl Fn(usize) -> String,
) -> Result<DVector<f64>, InitError> {
    try_pinv_solve(a, b).map_err(|e| InitError::Numerical {
        stage: stage.into(),
        element: match e {
            KernelError::NonFiniteMatrix { row, column } => entry(row, column),
            KernelError::NonFiniteRhs { row } => rhs(row),
            KernelError::NoConvergence | KernelError::Overflow => "model".into(),
        },
        reason: e.to_string(),
    })
}

/// Builds the initial state of `model`: the stages of the module documentation, in order.
pub fn initialize(model: &Model) -> Result<State, InitError> {
    let mut ev = Evaluator::<f64>::new(model);
    let mut z: Vec<f64> = model.axes.iter().map(|a| a.q0).collect();
    let mut zd: Vec<f64> = model.axes.iter().map(|a| a.qd0).collect();
    // 1–2. loop closure and velocities
    close_kinematics(model, &mut ev, &mut z, &mut zd)?;
    // 3. statics: the forces that hold the mechanism still
    let mut held = holding_forces(model, &mut ev, &z)?;
    // 4. pressures, and the trims of bridge valves marked "solve"
    // the model's signals, sampled for the first step (no value set from outside yet)
    let inputs = InputValues::new(&model.inputs, 0.0, model.solver.step_s);
    let valves = Valves::new(model, &inputs, std::mem::take(&mut held.spool0));
    let trim = static_pressures(model, &mut held, &valves)?;
    let spool0 = valves.positions(&trim);
    // the trims by position slot (`State::trim`; 0 for positions without one)
    let mut trims = vec![0.0; spool0.len()];
    for (i, (slot, _)) in valves.bridges.iter().enumerate() {
        trims[*slot] = trim[i];
    }
    // 4b. friction states
    let friction = friction_states(model, &mut ev, &z, &zd, &held, &spool0)?;
    // 5. accelerations, multipliers, pressure rates, and the state
    let start = Start {
        z,
        zd,
        p: held.p,
        spool: spool0,
        trim: trims,
        friction,
    };
    initial_state(model, &mut ev, start, inputs)
}

/// Stages 1 and 2: closes the loops from q0 (minimum-norm Gauss–Newton, [`close_loops`]) and
/// projects the velocities onto Φ_z ż = 0, then onto [Φ_z; B] ż = 0 with the nonholonomic rows
/// (minimum-norm corrections).
fn close_kinematics(
    model: &Model,
    ev: &mut Evaluator<f64>,
    z: &mut [f64],
    zd: &mut [f64],
) -> Result<(), InitError> {
    let n = model.n_coords();
    let m = model.n_constraints();
    // 1. loop closure
    if m > 0 {
        let all: Vec<usize> = (0..n).collect();
        if let Err((norm, it)) = close_loops(model, ev, z, &all, 1e-12) {
            let worst = (0..m)
                .max_by(|&a, &b| {
                    ev.constraints.phi[a]
                        .abs()
                        .total_cmp(&ev.constraints.phi[b].abs())
                })
                .unwrap_or(0);
            return Err(InitError::LoopCannotClose {
                cut_joint: model.cut_joints[model.constraints[worst].cut_joint].clone(),
                violation: norm,
                iterations: it,
            });
        }
        // 2. velocities
        let j = jac_matrix(ev, m, n);
        project_velocities(model, &j, zd)?;
    }
    // 2b. velocities onto the nonholonomic rows too: [Φ_z; B] ż = 0 (minimum-norm correction)
    let l = model.n_nonholonomic();
    if l > 0 {
        ev.kin.positions(model, z);
        ev.kin.velocities(model, zd);
        crate::mechanics::nonholonomic::evaluate(model, &ev.kin, &mut ev.nonholonomic);
        ev.positions(model, z);
        let mut j = DMatrix::<f64>::zeros(m + l, n);
        j.view_mut((0, 0), (m, n)).copy_from(&jac_matrix(ev, m, n));
        j.view_mut((m, 0), (l, n))
            .copy_from(&DMatrix::from_row_slice(l, n, &ev.nonholonomic.b));
        project_velocities(model, &j, zd)?;
    }
    Ok(())
}

/// ż ← ż − Jᵀ (J Jᵀ)⁺ J ż: the minimum-norm correction onto J ż = 0 (stage "velocities").
fn project_velocities(model: &Model, j: &DMatrix<f64>, zd: &mut [f64]) -> Result<(), InitError> {
    let v = DVector::from_column_slice(zd);
    let y = solve_stage(
        "velocities",
        &(j * j.transpose()),
        &(j * &v),
        |r, _| constraint_element(model, r),
        |r| constraint_element(model, r),
    )?;
    let corr = j.transpose() * y;
    for (i, zdi) in zd.iter_mut().enumerate() {
        *zdi -= corr[i];
    }
    Ok(())
}

/// What the statics (stage 3) leave for the pressures (stage 4) and the friction states (4b).
struct Holding<'m> {
    /// The valve positions with a rate law at their initial value, the others (set from the
    /// trim and the input) at 0 until the trims are known.
    spool0: Vec<f64>,
    /// The pressures: `p0_pa`, NaN for the volumes to solve until stage 4 solves them [Pa].
    p: Vec<f64>,
    /// The volumes whose pressure the statics solve (no `p0_pa`, or algebraic).
    unknown: Vec<usize>,
    /// The hydraulic motors with a pressure to solve: they hold their joints in the statics (a
    /// motor whose pressures are all given keeps its torque in Q′ and takes no column).
    motors: Vec<&'m HydraulicMotor>,
    /// The static cylinder forces F_c [N].
    f_req: Vec<f64>,
    /// The torque each motor adds to the static Q′₀ [N m].
    tau_req: Vec<f64>,
    /// Whether `f_req` holds the static cylinder forces (friction states need them even when
    /// every pressure is given: the seal's pre-sliding carries the difference).
    statics_ok: bool,
    /// The static generalized force each friction joint must carry (003 Pub II pre-sliding).
    joint_load: Vec<f64>,
}

/// Stage 3, statics: every piston inside its stroke in the assembled pose, the volumes to
/// solve, and the cylinder forces and motor torques that hold the mechanism still
/// ([`static_forces`]); forces with zero pressures contribute nothing but friction, which is
/// zero at rest.
fn holding_forces<'m>(
    model: &'m Model,
    ev: &mut Evaluator<f64>,
    z: &[f64],
) -> Result<Holding<'m>, InitError> {
    let n = model.n_coords();
    let nv = model.n_volumes();
    let zeros_p = vec![0.0; nv];
    let spool0: Vec<f64> = model
        .position_elements()
        .map(|(_, e)| {
            if e.position_has_rate() {
                e.initial_position(0.0, 0.0)
            } else {
                0.0
            }
        })
        .collect();
    let zd0 = vec![0.0; n];
    ev.evaluate(model, z, &zd0, &zeros_p, &spool0, false);
    // every piston inside its stroke in the assembled pose: a run would otherwise stop at its
    // first step with a divergence, though the cause is the model's numbers
    for (c, cyl) in model.cylinders().enumerate() {
        let (s, la) = (ev.motion[c].s, ev.motion[c].s - cyl.retracted_length_m);
        // (a non-finite length is left to the numerical checks, which name the joint behind it)
        if s.is_finite() && !(0.0..=cyl.stroke_m).contains(&la) {
            return Err(InitError::OutOfStroke {
                cylinder: cyl.name.clone(),
                length_m: s,
                retracted_m: cyl.retracted_length_m,
                stroke_m: cyl.stroke_m,
            });
        }
    }
    let p: Vec<f64> = model
        .hydraulics
        .volumes
        .iter()
        .map(|v| v.p0_pa.unwrap_or(f64::NAN))
        .collect();
    // algebraic volumes (002 Pub II) always take p0 from their flow balance
    let unknown: Vec<usize> = (0..nv)
        .filter(|&v| p[v].is_nan() || model.hydraulics.volumes[v].algebraic)
        .collect();
    let motors: Vec<&HydraulicMotor> = model
        .elements()
        .iter()
        .filter_map(|e| match e {
            Component::HydraulicMotor(m) => Some(m),
            _ => None,
        })
        .filter(|m| {
            [m.a, m.b]
                .iter()
                .any(|n| matches!(n, Node::Volume(v) if unknown.contains(&v.0)))
        })
        .collect();
    let mut held = Holding {
        spool0,
        p,
        f_req: vec![0.0; model.n_cylinders()],
        tau_req: vec![0.0; motors.len()],
        unknown,
        motors,
        statics_ok: false,
        joint_load: vec![0.0; model.joint_friction.len()],
    };
    let (ncyl, nmot, njf) = (
        model.n_cylinders(),
        held.motors.len(),
        model.joint_friction.len(),
    );
    let nw = model.n_friction_states();
    if (ncyl > 0 && (!held.unknown.is_empty() || nw > 0)) || (njf > 0 && nw > 0) || nmot > 0 {
        static_forces(model, ev, &mut held)?;
    }
    Ok(held)
}

/// Stage 3, the holding forces: Q′₀ + B F − Φ_zᵀ μ = 0 in least squares, with B_:c = ∂s_c/∂z
/// for the cylinders and a unit generalized force on its joint for each motor of
/// `held.motors`; a residual means the cylinders (and motors) cannot hold the mechanism. What
/// they and the cut joints leave is carried, at rest, by the friction joints when every
/// pressure is given.
fn static_forces(model: &Model, ev: &Evaluator<f64>, held: &mut Holding) -> Result<(), InitError> {
    let (n, m) = (model.n_coords(), model.n_constraints());
    let (ncyl, nmot, njf) = (
        model.n_cylinders(),
        held.motors.len(),
        model.joint_friction.len(),
    );
    // columns: B (ncyl), the motors' unit joint torques (nmot), then −Φ_zᵀ (m)
    let nc = ncyl + nmot;
    let mut a = DMatrix::<f64>::zeros(n, nc + m);
    for (c, cyl) in model.cylinders().enumerate() {
        let rb = ev.kin.point(&cyl.base);
        let rr = ev.kin.point(&cyl.rod);
        let nvec = (rr - rb).normalize();
        for_each_on_path(model, cyl.rod.frame, |i| {
            a[(i, c)] += nvec.dot(&ev.kin.point_jacobian_col(i, &rr))
        });
        for_each_on_path(model, cyl.base.frame, |i| {
            a[(i, c)] -= nvec.dot(&ev.kin.point_jacobian_col(i, &rb))
        });
    }
    // a motor's torque enters Q′ on its joint's coordinate (`mechanics::ports::joint_forces`)
    for (k, mo) in held.motors.iter().enumerate() {
        a[(mo.axis.0, ncyl + k)] = 1.0;
    }
    for r in 0..m {
        for i in 0..n {
            a[(i, nc + r)] = -ev.constraints.jac[r * n + i];
        }
    }
    let q0 = DVector::from_column_slice(&ev.dynamics.force);
    // (no cylinder and no cut joint: nothing but joint friction can hold the mechanism)
    let motors = &held.motors;
    let column = |c: usize| {
        if c < ncyl {
            format!("cylinder '{}'", model.cylinder(c).name)
        } else if c < nc {
            format!("hydraulic motor '{}'", motors[c - ncyl].name)
        } else if c < nc + m {
            constraint_element(model, c - nc)
        } else {
            coord_element(model, model.joint_friction[c - nc - m].axis.0)
        }
    };
    let sol = solve_stage(
        "statics",
        &a,
        &(-&q0),
        |_, c| column(c),
        |i| coord_element(model, i),
    )?;
    let res = &a * &sol + &q0;
    if res.norm() > 1e-6 * (q0.norm() + 1.0) && !held.unknown.is_empty() {
        return Err(InitError::Statics(format!(
            "the {} cannot hold the mechanism still at the initial configuration (unbalanced generalized force {:.3e})",
            if nmot > 0 { "cylinders and motors" } else { "cylinders" },
            res.norm()
        )));
    }
    held.statics_ok = res.norm() <= 1e-6 * (q0.norm() + 1.0);
    for c in 0..ncyl {
        held.f_req[c] = sol[c];
    }
    for k in 0..nmot {
        held.tau_req[k] = sol[ncyl + k];
    }
    if !held.statics_ok && njf > 0 && held.unknown.is_empty() {
        // what the cylinders and cut joints leave is carried by the friction joints at rest:
        // columns −e_k (the joint friction force is subtracted from Q_k), minimum norm
        let mut a2 = a.clone().resize_horizontally(nc + m + njf, 0.0);
        for (k, jf) in model.joint_friction.iter().enumerate() {
            a2[(jf.axis.0, nc + m + k)] = -1.0;
        }
        let sol2 = solve_stage(
            "statics",
            &a2,
            &(-&q0),
            |_, c| column(c),
            |i| coord_element(model, i),
        )?;
        let res2 = &a2 * &sol2 + &q0;
        if res2.norm() <= 1e-6 * (q0.norm() + 1.0) {
            held.statics_ok = true;
            for c in 0..ncyl {
                held.f_req[c] = sol2[c];
            }
            for k in 0..njf {
                held.joint_load[k] = sol2[nc + m + k];
            }
        }
    }
    Ok(())
}

/// The valve positions of stage 4: the bridge valves (004 eq. 32: κ₀ and the pressures
/// together) with their slots in `State::spool`, and the positions at given trims.
struct Valves<'m> {
    model: &'m Model,
    inputs: &'m InputValues,
    /// The positions with a rate law at their initial value (`Holding::spool0`).
    spool0: Vec<f64>,
    /// The bridge valves and their slots in `State::spool`.
    bridges: Vec<(usize, &'m crate::model::BridgeValve)>,
}

impl<'m> Valves<'m> {
    fn new(model: &'m Model, inputs: &'m InputValues, spool0: Vec<f64>) -> Self {
        let bridges = model
            .position_elements()
            .filter_map(|(slot, e)| match e {
                Component::BridgeValve(v) => Some((slot, v)),
                _ => None,
            })
            .collect();
        Valves {
            model,
            inputs,
            spool0,
            bridges,
        }
    }

    /// The valve positions at the bridge valves' trims `trim`.
    fn positions(&self, trim: &[f64]) -> Vec<f64> {
        let (model, inputs) = (self.model, self.inputs);
        let mut s = self.spool0.clone();
        // positions held from their input without a trim (a pump's shaft speed): u(0)
        for (slot, e) in model.position_elements() {
            if let (false, Some(k)) = (e.position_has_rate(), e.ports().input) {
                s[slot] = e.initial_position(0.0, inputs.value_at(&model.inputs, k, 0.0));
            }
        }
        for (i, (slot, v)) in self.bridges.iter().enumerate() {
            s[*slot] = v.initial_position(trim[i], inputs.value_at(&model.inputs, v.input, 0.0));
        }
        s
    }
}

/// Stage 4: the pressures of the volumes `held.unknown` (into `held.p`) and the trims of the
/// bridge valves marked "solve", from F_c = p_A A_A − p_B A_B, the motors' holding torques and
/// zero net flow into every unknown volume. Returns the trims of every bridge valve.
fn static_pressures(
    model: &Model,
    held: &mut Holding,
    valves: &Valves,
) -> Result<Vec<f64>, InitError> {
    let mut trim: Vec<f64> = valves
        .bridges
        .iter()
        .map(|(_, v)| v.trim.unwrap_or(0.0))
        .collect();
    let unknown_trims: Vec<usize> = (0..trim.len())
        .filter(|&i| valves.bridges[i].1.trim.is_none())
        .collect();
    if held.unknown.is_empty() && unknown_trims.is_empty() {
        return Ok(trim);
    }
    // initial guess: mean of the known pressures (volumes and sources); trims at 1/2
    let guess = pressure_guess(model);
    for &u in &held.unknown {
        held.p[u] = guess;
    }
    for &i in &unknown_trims {
        trim[i] = 0.5;
    }
    // a cylinder with one chamber given: its force row fixes the other chamber's pressure
    // outright, p_A = (F + p_B A_B)/A_A or p_B = (p_A A_A − F)/A_B; below zero absolute, the
    // given chamber is the one that carries the load, and no iteration can help
    let (p, unknown) = (&held.p, &held.unknown);
    for (c, cyl) in model.cylinders().enumerate() {
        let (a, b) = (cyl.vol_a.0, cyl.vol_b.0);
        let f = held.f_req[c];
        let solved = match (unknown.contains(&a), unknown.contains(&b)) {
            (true, false) => Some((a, (f + p[b] * cyl.area_b_m2) / cyl.area_a_m2)),
            (false, true) => Some((b, (p[a] * cyl.area_a_m2 - f) / cyl.area_b_m2)),
            _ => None,
        };
        if let Some((v, pv)) = solved.filter(|&(_, pv)| pv < 0.0) {
            return Err(negative_pressure(
                model,
                v,
                pv,
                &held.f_req,
                &held.motors,
                unknown,
            ));
        }
    }
    let system = PressureSystem::new(model, held, valves, unknown_trims);
    let (nu, neq) = (system.nu(), system.neq());
    if neq < nu {
        return Err(InitError::Statics(format!(
            "{nu} unknowns (pressures without p0_pa and trims to solve) but only {neq} equations"
        )));
    }
    // Newton as it has always run first (every shipped model converges so, and keeps its
    // bits); if it does not converge, again from the same start with a backtracking line
    // search on the row-scaled residual: a √Δp orifice law makes the full step jump to the
    // mirror point 2 p_s − p across a supply, and back, forever (a supply through a throttle
    // into a closed line)
    let mut newton = PressureNewton::new(&system, &held.p, &trim);
    let start = newton.x.clone();
    let mut converged = false;
    for damped in [false, true] {
        newton.damped = damped;
        newton.x.copy_from_slice(&start);
        newton.small = false;
        match newton::solve(&mut newton, TangentPolicy::FULL, 100) {
            Ok(_) => {
                converged = true;
                break;
            }
            Err(PressureFailure::Fatal(e)) => return Err(e),
            Err(PressureFailure::NotConverged) => {}
        }
    }
    if !converged {
        return Err(system.not_converged(newton.worst_row));
    }
    let (p_sol, trim_sol) = (newton.p, newton.trim);
    system.check_rest(&newton.r, &newton.jm)?;
    held.p = p_sol;
    // a volume solved below zero absolute (the chambers of a cylinder fed by the circuit, a
    // motor's lines): the same advice as for a cylinder with one chamber given
    if let Some(&v) = held.unknown.iter().find(|&&u| held.p[u] < 0.0) {
        return Err(negative_pressure(
            model,
            v,
            held.p[v],
            &held.f_req,
            &held.motors,
            &held.unknown,
        ));
    }
    Ok(trim_sol)
}

/// The equations of the static pressures (stage 4): the unknowns are the pressures of the
/// volumes `held.unknown`, then the trims `unknown_trims`; the rows, the cylinder forces
/// (scaled to Pa on the piston area), the motor torques (scaled to Pa by i D/2π) and zero net
/// flow into every unknown volume.
struct PressureSystem<'a, 'm> {
    model: &'m Model,
    held: &'a Holding<'m>,
    valves: &'a Valves<'m>,
    /// The bridge valves (indices into `valves.bridges`) whose trim is solved.
    unknown_trims: Vec<usize>,
    /// The motors' torque at the pressures of stage 3 (volumes at 0, sources at theirs), which
    /// Q′₀ holds already: the motor must add `tau_req` to it [N m].
    tau0: Vec<f64>,
}

impl<'a, 'm> PressureSystem<'a, 'm> {
    fn new(
        model: &'m Model,
        held: &'a Holding<'m>,
        valves: &'a Valves<'m>,
        unknown_trims: Vec<usize>,
    ) -> Self {
        let zero_p = vec![Dual64::from(0.0); model.n_volumes()];
        let mut system = PressureSystem {
            model,
            held,
            valves,
            unknown_trims,
            tau0: Vec::new(),
        };
        system.tau0 = held
            .motors
            .iter()
            .map(|mo| system.motor_torque(mo, &zero_p).re)
            .collect();
        system
    }

    /// Unknowns: pressures, then trims.
    fn nu(&self) -> usize {
        self.held.unknown.len() + self.unknown_trims.len()
    }

    /// Equations: cylinders, motors, then unknown volumes.
    fn neq(&self) -> usize {
        self.ncyl() + self.held.motors.len() + self.held.unknown.len()
    }

    fn ncyl(&self) -> usize {
        self.model.n_cylinders()
    }

    fn motor_torque(&self, mo: &HydraulicMotor, p: &[Dual64]) -> Dual64 {
        let pa = circuit::node_pressure(self.model, p, mo.a);
        let pb = circuit::node_pressure(self.model, p, mo.b);
        hydraulic_motor::law(mo, pa, pb, Dual64::from(0.0)).torque
    }

    /// The residual at pressures `p` and trims `trim`, dual in the pressure `seed`.
    fn residual(&self, p: &[f64], trim: &[f64], seed: Option<usize>) -> Vec<Dual64> {
        let (model, held) = (self.model, self.held);
        let nv = model.n_volumes();
        let pd: Vec<Dual64> = (0..nv)
            .map(|v| Dual64::new(p[v], if Some(v) == seed { 1.0 } else { 0.0 }))
            .collect();
        let mut q = vec![Dual64::from(0.0); nv];
        circuit::component_flows(model, &pd, &self.valves.positions(trim), &mut q);
        let mut r = Vec::with_capacity(self.neq());
        for (c, cyl) in model.cylinders().enumerate() {
            r.push(
                (cylinder::hydraulic_force(cyl, pd[cyl.vol_a.0], pd[cyl.vol_b.0]) - held.f_req[c])
                    / cyl.area_a_m2,
            );
        }
        // a joint held by a motor: τ(p) = τ₀ + τ_req, τ = i D Δp/(2π) at rest (η = 1)
        for (k, mo) in held.motors.iter().enumerate() {
            let per_pa = mo.gear_ratio * mo.displacement_m3_per_rev / (2.0 * PI);
            r.push((self.motor_torque(mo, &pd) - self.tau0[k] - held.tau_req[k]) * (1.0 / per_pa));
        }
        for &u in &held.unknown {
            r.push(q[u]);
        }
        r
    }

    /// The element behind row `i`.
    fn row_element(&self, i: usize) -> String {
        let (ncyl, nmot) = (self.ncyl(), self.held.motors.len());
        if i < ncyl {
            format!("cylinder '{}'", self.model.cylinder(i).name)
        } else if i < ncyl + nmot {
            format!("hydraulic motor '{}'", self.held.motors[i - ncyl].name)
        } else {
            format!(
                "volume '{}'",
                self.model.hydraulics.volumes[self.held.unknown[i - ncyl - nmot]].name
            )
        }
    }

    /// The tangent at (`p`, `trim`): the pressure columns exact (dual), the trim columns by
    /// central differences (the opening enters the valve laws as data, not as a dual variable;
    /// they only steer the iteration, the converged trim is defined by the residual itself).
    fn tangent(&self, p: &[f64], trim: &[f64]) -> DMatrix<f64> {
        let (nu, neq, unknown) = (self.nu(), self.neq(), &self.held.unknown);
        let mut jm = DMatrix::<f64>::zeros(neq, nu);
        for (k, &u) in unknown.iter().enumerate() {
            let col = self.residual(p, trim, Some(u));
            for i in 0..neq {
                jm[(i, k)] = col[i].eps;
            }
        }
        for (k, &i) in self.unknown_trims.iter().enumerate() {
            let h = 1e-7;
            let (mut tp, mut tm) = (trim.to_vec(), trim.to_vec());
            tp[i] += h;
            tm[i] -= h;
            let (rp, rm) = (self.residual(p, &tp, None), self.residual(p, &tm, None));
            for r in 0..neq {
                jm[(r, unknown.len() + k)] = (rp[r].re - rm[r].re) / (2.0 * h);
            }
        }
        jm
    }

    /// The checks at a converged iterate with residual `r` (real parts) and the last tangent
    /// `jm` (rows equilibrated): every row satisfied (a motor that leaks cannot hold its volume
    /// at rest), and every pressure determined ([`determined`]).
    fn check_rest(&self, r: &[f64], jm: &DMatrix<f64>) -> Result<(), InitError> {
        let (model, held) = (self.model, self.held);
        let k = self.ncyl() + held.motors.len();
        let bad = r[..k].iter().any(|x| x.abs() > 1e-3) || r[k..].iter().any(|x| x.abs() > 1e-15);
        // a leaking motor passes C_L Δp from A to B at its holding pressure, so the volume it
        // holds the load with cannot be at rest: the load creeps
        if let Some(mo) = held
            .motors
            .iter()
            .find(|mo| bad && mo.leakage_m3_s_pa > 0.0)
        {
            let held_volume = [mo.a, mo.b]
                .iter()
                .find_map(|n| match n {
                    Node::Volume(v) if held.unknown.contains(&v.0) => {
                        Some(model.hydraulics.volumes[v.0].name.clone())
                    }
                    _ => None,
                })
                .unwrap_or_default();
            return Err(InitError::Statics(format!(
                "hydraulic motor '{}' leaks C_L Δp from A to B at its holding pressure \
                 (volumetric_efficiency < 1), so volume '{held_volume}' cannot be at rest and \
                 the load creeps; give p0_pa of '{held_volume}' (the run starts from it) or \
                 feed the volume so that the leakage is made up",
                mo.name
            )));
        }
        if bad {
            let algebraic = algebraic_advice(model, &held.unknown, self.valves.inputs);
            return Err(InitError::Statics(format!(
                "no pressures satisfy the cylinder forces and zero flow at once \
                 (check p0_pa and the valve positions){}",
                if algebraic.is_empty() {
                    String::new()
                } else {
                    format!("; {algebraic}")
                }
            )));
        }
        determined(model, &held.unknown, jm)
    }

    /// The error of an iteration that converged neither with nor without the line search,
    /// `worst_row` the row of the largest scaled residual at its last iterate: names that row's
    /// element and the volumes that matter, those of the element (a cylinder's or motor's
    /// chambers, or the volume) and, for a volume, the chambers of the cylinder or motor it
    /// belongs to; every volume without p0_pa only if none of these is one.
    fn not_converged(&self, worst_row: usize) -> InitError {
        let (model, held) = (self.model, self.held);
        let (ncyl, nmot, unknown) = (self.ncyl(), held.motors.len(), &held.unknown);
        let row = self.row_element(worst_row);
        let worst_volume = worst_row.checked_sub(ncyl + nmot).map(|k| unknown[k]);
        let mut relevant: Vec<usize> = Vec::new();
        for (c, cyl) in model.cylinders().enumerate() {
            let chambers = [cyl.vol_a.0, cyl.vol_b.0];
            if worst_row == c || worst_volume.is_some_and(|v| chambers.contains(&v)) {
                relevant.extend(chambers);
            }
        }
        for (k, mo) in held.motors.iter().enumerate() {
            let lines: Vec<usize> = [mo.a, mo.b]
                .iter()
                .filter_map(|n| match n {
                    Node::Volume(v) => Some(v.0),
                    _ => None,
                })
                .collect();
            if worst_row == ncyl + k || worst_volume.is_some_and(|v| lines.contains(&v)) {
                relevant.extend(lines);
            }
        }
        relevant.extend(worst_volume);
        let mut named: Vec<usize> = unknown
            .iter()
            .copied()
            .filter(|u| relevant.contains(u))
            .collect();
        if named.is_empty() {
            named = unknown.clone();
        }
        InitError::Statics(format!(
            "the static pressure iteration did not converge (with and without a line \
             search; the largest residual is that of {row}); {}",
            p0_advice(model, &named, self.valves.inputs)
        ))
    }
}

/// Why a static pressure solve stopped.
enum PressureFailure {
    /// An error of the model: reported as it is.
    Fatal(InitError),
    /// The cap, or (without the line search) a step the least-squares solve refused: the next
    /// attempt, or the error [`PressureSystem::not_converged`].
    NotConverged,
}

/// The static pressure iteration as a problem of the one Newton (`solver::newton::solve`):
/// full Newton on the row-equilibrated system (each row scaled to unit max entry) by least
/// squares, trims clamped to [0, 1] ([`NewtonProblem::project_iterate`]), converged when the
/// full step is small (|Δp| < 1e-6 Pa, |Δtrim| < 1e-13); with `damped`, each step is the
/// largest α = 2⁻ʲ of the Armijo backtracking line search ([`NewtonProblem::step_fraction`]).
struct PressureNewton<'s, 'a, 'm> {
    system: &'s PressureSystem<'a, 'm>,
    /// Whether the steps are damped by the line search.
    damped: bool,
    /// The unknowns: the pressures `held.unknown`, then the trims `unknown_trims`.
    x: Vec<f64>,
    /// The full Newton step d of the last iteration.
    d: Vec<f64>,
    /// Every pressure and every trim at the iterate x.
    p: Vec<f64>,
    trim: Vec<f64>,
    /// The residual at x (real parts).
    r: Vec<f64>,
    /// The tangent at the last iterate that took a step, rows equilibrated, and its row scales.
    jm: DMatrix<f64>,
    row_scale: Vec<f64>,
    /// The scaled residual of that iterate, and the row of its largest entry.
    rv: DVector<f64>,
    worst_row: usize,
    /// Whether the last full step was small (converged).
    small: bool,
    counters: Counters,
}

impl<'s, 'a, 'm> PressureNewton<'s, 'a, 'm> {
    fn new(system: &'s PressureSystem<'a, 'm>, p: &[f64], trim: &[f64]) -> Self {
        let unknown = &system.held.unknown;
        let x = unknown
            .iter()
            .map(|&u| p[u])
            .chain(system.unknown_trims.iter().map(|&i| trim[i]))
            .collect();
        PressureNewton {
            system,
            damped: false,
            x,
            d: vec![0.0; system.nu()],
            p: p.to_vec(),
            trim: trim.to_vec(),
            r: Vec::new(),
            jm: DMatrix::zeros(0, 0),
            row_scale: Vec::new(),
            rv: DVector::zeros(0),
            worst_row: 0,
            small: false,
            counters: Counters::default(),
        }
    }

    /// The pressures and trims at x + α d (trims clamped to [0, 1]).
    fn step_to(&self, alpha: f64) -> (Vec<f64>, Vec<f64>) {
        let (unknown, trims) = (&self.system.held.unknown, &self.system.unknown_trims);
        let (mut pn, mut tn) = (self.p.clone(), self.trim.clone());
        for (k, &u) in unknown.iter().enumerate() {
            pn[u] += alpha * self.d[k];
        }
        for (k, &i) in trims.iter().enumerate() {
            tn[i] = (tn[i] + alpha * self.d[unknown.len() + k]).clamp(0.0, 1.0);
        }
        (pn, tn)
    }
}

impl NewtonProblem for PressureNewton<'_, '_, '_> {
    type Error = PressureFailure;
    fn evaluate(&mut self) -> Result<(), PressureFailure> {
        let (unknown, trims) = (&self.system.held.unknown, &self.system.unknown_trims);
        for (k, &u) in unknown.iter().enumerate() {
            self.p[u] = self.x[k];
        }
        for (k, &i) in trims.iter().enumerate() {
            self.trim[i] = self.x[unknown.len() + k];
        }
        self.r.clear();
        let r = self.system.residual(&self.p, &self.trim, None);
        self.r.extend(r.iter().map(|x| x.re));
        Ok(())
    }
    fn form_residual(&mut self) -> Result<(), PressureFailure> {
        Ok(())
    }
    fn residual_converged(&self) -> bool {
        self.small
    }
    fn converges_on_residual(&self) -> bool {
        true
    }
    fn tangent_reusable(&self) -> bool {
        false
    }
    /// The tangent, its row equilibration, and the least-squares step d (SVD: factored and
    /// solved at once).
    fn refresh_tangent(&mut self) -> Result<bool, PressureFailure> {
        let system = self.system;
        let (nu, neq) = (system.nu(), system.neq());
        let mut jm = system.tangent(&self.p, &self.trim);
        // row equilibration: each row scaled to unit max entry
        let mut rv = DVector::<f64>::zeros(neq);
        let mut row_scale = vec![1.0; neq];
        for i in 0..neq {
            let s = (0..nu).map(|k| jm[(i, k)].abs()).fold(0.0, f64::max);
            let s = if s > 0.0 { 1.0 / s } else { 1.0 };
            for k in 0..nu {
                jm[(i, k)] *= s;
            }
            rv[i] = self.r[i] * s;
            row_scale[i] = s;
        }
        self.worst_row = rv.iamax();
        for (k, &u) in system.held.unknown.iter().enumerate() {
            if (0..neq).all(|i| jm[(i, k)] == 0.0) {
                return Err(PressureFailure::Fatal(InitError::Statics(format!(
                    "the pressure of volume '{}' is not determined by statics (no open path, cylinder or motor sets it); give p0_pa",
                    system.model.hydraulics.volumes[u].name
                ))));
            }
        }
        // an undamped iterate that left the laws' finite range is retried damped (from the
        // same start, so a failure at the start is reported the same way)
        let row = |i: usize| system.row_element(i);
        let d = match solve_stage("static pressures", &jm, &(-&rv), |i, _| row(i), row) {
            Ok(d) => d,
            Err(_) if !self.damped => return Err(PressureFailure::NotConverged),
            Err(e) => return Err(PressureFailure::Fatal(e)),
        };
        self.d.copy_from_slice(d.as_slice());
        (self.jm, self.rv, self.row_scale) = (jm, rv, row_scale);
        Ok(true)
    }
    fn solve_increment(&mut self) {
        // converged when the full Newton step is small
        let np = self.system.held.unknown.len();
        self.small = self.d[..np].iter().all(|d| d.abs() < 1e-6)
            && self.d[np..].iter().all(|d| d.abs() < 1e-13);
        self.counters.iterations += 1;
    }
    /// Damped: the largest α = 2⁻ʲ that lowers ‖S r‖² (S the row scales of this iterate) by
    /// the Armijo fraction 1e-4 α; the smallest tried if none does.
    fn step_fraction(&mut self) -> f64 {
        if !self.damped {
            return 1.0;
        }
        let merit = |pn: &[f64], tn: &[f64]| -> f64 {
            let r = self.system.residual(pn, tn, None);
            (0..r.len())
                .map(|i| (r[i].re * self.row_scale[i]).powi(2))
                .sum()
        };
        let m0 = self.rv.norm_squared();
        let mut alpha = 1.0;
        for _ in 0..40 {
            let (pn, tn) = self.step_to(alpha);
            if merit(&pn, &tn) <= (1.0 - 1e-4 * alpha) * m0 {
                break;
            }
            alpha *= 0.5;
        }
        alpha
    }
    fn project_iterate(&mut self) {
        let np = self.system.held.unknown.len();
        for t in &mut self.x[np..] {
            *t = t.clamp(0.0, 1.0);
        }
    }
    fn iterate(&mut self) -> (&mut [f64], &[f64]) {
        (&mut self.x, &self.d)
    }
    fn tolerances(&self) -> Tolerances {
        // (unused: the iteration converges on its own test, `residual_converged`)
        Tolerances::new(&[(self.x.len(), 0.0)], 0.0)
    }
    fn counters(&mut self) -> &mut Counters {
        &mut self.counters
    }
    fn failure(&mut self, _iterations: u32, _reason: &str) -> PressureFailure {
        PressureFailure::NotConverged
    }
}

/// Stage 4b, the friction states (003 Pub II): steady sliding at the initial ṡ; at rest,
/// pre-sliding carries the static load F_h − F_required (σ0 q = load, film h = 0). Leaves them
/// in `ev.fstate`.
fn friction_states(
    model: &Model,
    ev: &mut Evaluator<f64>,
    z: &[f64],
    zd: &[f64],
    held: &Holding,
    spool0: &[f64],
) -> Result<Vec<f64>, InitError> {
    let nw = model.n_friction_states();
    let mut friction = vec![0.0; nw];
    if nw == 0 {
        return Ok(friction);
    }
    let (p, f_req) = (&held.p, &held.f_req);
    ev.evaluate(model, z, zd, p, spool0, false);
    for (c, cyl) in model.cylinders().enumerate() {
        let w = &mut friction[model.layout.cylinder_friction(CylinderId(c))];
        let v = ev.motion[c].sd;
        if v != 0.0 {
            crate::elements::friction::steady_states(&cyl.friction, v, w);
        } else if held.statics_ok {
            let load = cylinder::hydraulic_force(cyl, p[cyl.vol_a.0], p[cyl.vol_b.0]) - f_req[c];
            crate::elements::friction::rest_states(&cyl.friction, load, w)
                .map_err(|e| InitError::Statics(format!("cylinder '{}': {e}", cyl.name)))?;
        }
    }
    // joints: steady sliding at the initial rate; at rest, pre-sliding carries the static load
    // when the law can hold it (|load| ≤ F_s), else the joint starts unloaded (released)
    for (j, jf) in model.joint_friction.iter().enumerate() {
        let w = &mut friction[model.layout.joint_friction(j)];
        let v = zd[jf.axis.0];
        if v != 0.0 {
            crate::elements::friction::steady_states(&jf.friction, v, w);
        } else if held.statics_ok
            && crate::elements::friction::rest_states(&jf.friction, held.joint_load[j], w).is_err()
        {
            w.iter_mut().for_each(|x| *x = 0.0);
        }
    }
    ev.fstate.copy_from_slice(&friction);
    Ok(friction)
}

/// The initial values found by stages 1–4b.
struct Start {
    z: Vec<f64>,
    zd: Vec<f64>,
    p: Vec<f64>,
    spool: Vec<f64>,
    /// The trims by position slot.
    trim: Vec<f64>,
    friction: Vec<f64>,
}

/// Stage 5, accelerations and multipliers: the augmented system of note 000-A.6 with the
/// nonholonomic rows, D = [Φ_z; B], [[M′, Dᵀ], [D, 0]] [z̈₀; λ₀] = [Q′; −Ḋ ż], solved in least
/// squares (minimum norm), at the evaluation held by `ev`. Returns (z̈₀, λ₀) (the nonholonomic
/// multipliers σ₀ stored after λ).
fn accelerations(model: &Model, ev: &Evaluator<f64>) -> Result<(Vec<f64>, Vec<f64>), InitError> {
    let (n, m) = (model.n_coords(), model.n_constraints());
    let mm = DMatrix::from_row_slice(n, n, &ev.dynamics.mass);
    // D = [Φ_z; B]: the nonholonomic rows (B z̈ = −Ḃ ż) join the loop closures, so that z̈₀ is
    // consistent with them and their multipliers σ₀ follow (stored after λ)
    let l = model.n_nonholonomic();
    let ml = m + l;
    let mut jz = DMatrix::<f64>::zeros(ml, n);
    jz.view_mut((0, 0), (m, n)).copy_from(&jac_matrix(ev, m, n));
    jz.view_mut((m, 0), (l, n))
        .copy_from(&DMatrix::from_row_slice(l, n, &ev.nonholonomic.b));
    let mut aug = DMatrix::<f64>::zeros(n + ml, n + ml);
    aug.view_mut((0, 0), (n, n)).copy_from(&mm);
    aug.view_mut((0, n), (n, ml)).copy_from(&jz.transpose());
    aug.view_mut((n, 0), (ml, n)).copy_from(&jz);
    let mut rhs = DVector::<f64>::zeros(n + ml);
    rhs.rows_mut(0, n).copy_from_slice(&ev.dynamics.force);
    for r in 0..m {
        rhs[n + r] = -ev.constraints.acc0[r];
    }
    for r in 0..l {
        rhs[n + m + r] = -ev.nonholonomic.acc0[r];
    }
    let either = |i: usize| {
        if i < n {
            coord_element(model, i)
        } else {
            constraint_element(model, i - n)
        }
    };
    let sol = solve_stage(
        "accelerations and multipliers",
        &aug,
        &rhs,
        |i, j| either(if i < n && j >= n { j } else { i }),
        either,
    )?;
    let zdd: Vec<f64> = sol.rows(0, n).iter().copied().collect();
    let lambda: Vec<f64> = sol.rows(n, ml).iter().copied().collect();
    Ok((zdd, lambda))
}

/// Every initial value finite, or [`InitError::Numerical`] naming the element behind the first
/// one that is not.
fn check_initial_values(
    model: &Model,
    start: &Start,
    zdd: &[f64],
    lambda: &[f64],
    pd: &[f64],
) -> Result<(), InitError> {
    let non_finite = |values: &[f64]| values.iter().position(|x| !x.is_finite());
    let volume_element = |v: usize| format!("volume '{}'", model.hydraulics.volumes[v].name);
    for (what, index, element) in [
        (
            "positions",
            non_finite(&start.z),
            &coord_element as &dyn Fn(&Model, usize) -> String,
        ),
        ("velocities", non_finite(&start.zd), &coord_element),
        ("accelerations", non_finite(zdd), &coord_element),
        ("multipliers", non_finite(lambda), &constraint_element),
    ] {
        if let Some(i) = index {
            return Err(InitError::Numerical {
                stage: "initial state".into(),
                element: element(model, i),
                reason: format!("non-finite initial {what}"),
            });
        }
    }
    for (what, values) in [("pressure", &start.p[..]), ("pressure rate", pd)] {
        if let Some(v) = non_finite(values) {
            return Err(InitError::Numerical {
                stage: "initial state".into(),
                element: volume_element(v),
                reason: format!("non-finite initial {what}"),
            });
        }
    }
    Ok(())
}

/// Stage 5 and the state: the elements' internal states at their steady state at p (e.g. the
/// poppet's static opening), every element evaluated at the start, z̈₀ and λ₀
/// ([`accelerations`]), ṗ₀ = h(p₀, z₀, ż₀), every value checked finite, and the energies,
/// powers and the terrain's records at t = 0.
fn initial_state(
    model: &Model,
    ev: &mut Evaluator<f64>,
    start: Start,
    inputs: InputValues,
) -> Result<State, InitError> {
    let (n, nv) = (model.n_coords(), model.n_volumes());
    let ncyl = model.n_cylinders();
    let mut internal = vec![0.0; model.layout.internal.len()];
    circuit::steady_internal_states(model, &start.p, &start.spool, &mut internal);
    ev.internal.copy_from_slice(&internal);
    ev.evaluate(model, &start.z, &start.zd, &start.p, &start.spool, true);
    let (zdd, lambda) = accelerations(model, ev)?;
    check_initial_values(model, &start, &zdd, &lambda, &ev.h)?;
    let (ke, pe) = energy::energies(model, &ev.dynamics, &start.zd);
    let power: Vec<f64> = ev
        .cylinder_force
        .iter()
        .zip(ev.motion.iter())
        .map(|(f, mo)| f * mo.sd)
        .collect();
    let Start {
        z,
        zd,
        p,
        spool,
        trim,
        friction,
    } = start;
    let mut st = State {
        t_s: 0.0,
        step: 0,
        z,
        zd,
        zdd,
        pd: ev.h.clone(),
        pdd: vec![0.0; nv],
        p,
        spool,
        inputs,
        trim,
        lambda,
        actuator_work_j: vec![0.0; power.len()],
        actuator_power_w: power,
        energy0_j: ke + pe,
        potential0_j: pe,
        formulation: Default::default(),
        friction_rate: ev.fstate_rate.clone(),
        internal_rate: ev.internal_rate.clone(),
        internal,
        friction_velocity_m_s: ev
            .motion
            .iter()
            .map(|m| m.sd)
            .chain(ev.joint_velocity.iter().copied())
            .collect(),
        friction,
        friction_power_w: ev
            .friction_force
            .iter()
            .zip(ev.motion.iter())
            .map(|(f, mo)| f * mo.sd)
            .chain(
                ev.joint_friction_force
                    .iter()
                    .zip(ev.joint_velocity.iter())
                    .map(|(f, v)| f * v),
            )
            .collect(),
        friction_dissipated_j: vec![0.0; ncyl + model.joint_friction.len()],
        elements: crate::state::ElementEnergy::new(model.elements().len()),
        tangent: Default::default(),
        // filled by `Simulation::new` from its initial evaluation
        reported: Default::default(),
        world: crate::pipeline::world::initial_state(model),
    };
    // the elements' stored energies and powers at t = 0 (`element::commit`)
    let mut kin = crate::mechanics::kinematics::Kinematics::new(n);
    // the buckets' frozen records at t = 0 (stage `world`)
    crate::pipeline::world::start(model, &mut st, &mut kin);
    let mut values = crate::elements::component::ElementValues::new(model.elements().len());
    let mechanical = crate::mechanics::ports::mechanical_elements(model.elements());
    crate::pipeline::element_energy::commit(
        model,
        &mut st,
        &mut kin,
        &mut values,
        &mechanical,
        false,
    );
    Ok(st)
}

/// The error for volume `v` solved at `p_v` < 0 Pa absolute: names the cylinder or motor it is
/// a chamber of, and the chamber to give `p0_pa` instead: the one that does not carry the load
/// (the rod side of a cylinder that pushes at rest, the piston side of one that pulls; F_c from
/// `f_req` [N], positive pushing), whose pressure then fixes the loaded one at a positive value.
fn negative_pressure(
    model: &Model,
    v: usize,
    p_v: f64,
    f_req: &[f64],
    motors: &[&HydraulicMotor],
    unknown: &[usize],
) -> InitError {
    let name = |u: usize| model.hydraulics.volumes[u].name.clone();
    let given = |u: usize| !unknown.contains(&u);
    let cylinder = model
        .cylinders()
        .enumerate()
        .find(|(_, cyl)| cyl.vol_a.0 == v || cyl.vol_b.0 == v);
    let motor = motors.iter().find(|mo| {
        [mo.a, mo.b]
            .iter()
            .any(|n| matches!(n, Node::Volume(w) if w.0 == v))
    });
    let (element, advice) = if let Some((c, cyl)) = cylinder {
        let pushes = f_req[c] >= 0.0;
        let (free, free_side, loaded, loaded_side) = if pushes {
            (cyl.vol_b.0, "rod side", cyl.vol_a.0, "piston side")
        } else {
            (cyl.vol_a.0, "piston side", cyl.vol_b.0, "rod side")
        };
        let load = format!(
            "cylinder '{}' {} at rest ({:.4} kN), so its {loaded_side} '{}' carries the load",
            cyl.name,
            if pushes { "pushes" } else { "pulls" },
            f_req[c] / 1e3,
            name(loaded)
        );
        let advice = if free == v && given(loaded) {
            format!(
                "{load}: give p0_pa of its {free_side} '{}' (e.g. 1 MPa) instead of its \
                 {loaded_side}, and let the statics solve '{}'",
                name(free),
                name(loaded)
            )
        } else {
            format!(
                "{load}: give p0_pa of its {free_side} '{}' (e.g. 1 MPa), and check the valve \
                 positions and the supply pressures at t = 0",
                name(free)
            )
        };
        (format!("cylinder '{}'", cyl.name), advice)
    } else if let Some(mo) = motor {
        let other = [mo.a, mo.b].iter().find_map(|n| match n {
            Node::Volume(w) if w.0 != v => Some(w.0),
            _ => None,
        });
        let advice = match other {
            Some(o) if given(o) => format!(
                "hydraulic motor '{}' holds its joint at rest with the pressure of its line \
                 '{}': give p0_pa of '{}' (e.g. 1 MPa) instead, and let the statics solve '{}'",
                mo.name,
                name(o),
                name(v),
                name(o)
            ),
            _ => format!(
                "hydraulic motor '{}' holds its joint at rest: give p0_pa of '{}' (e.g. 1 MPa)",
                mo.name,
                name(v)
            ),
        };
        (format!("hydraulic motor '{}'", mo.name), advice)
    } else {
        (
            String::new(),
            "it is no chamber of a cylinder or motor: check the p0_pa of the volumes around it \
             and the valve positions at t = 0"
                .to_string(),
        )
    };
    InitError::NegativePressure {
        volume: name(v),
        pressure_pa: p_v,
        element,
        advice,
    }
}

/// Which chamber of a cylinder gets `p0_pa` (docs/theory 5.4).
const CHAMBER_RULE: &str = "of a cylinder, the chamber that does not carry the load: the rod \
                            side of one that pushes at rest, the piston side of one that pulls";

/// What to give when the static pressures of the volumes `unknown` cannot be solved: `p0_pa`
/// for those with a pressure state, and [`algebraic_advice`] for the algebraic ones, whose
/// `p0_pa` is only the guess of their flow balance (`VolumeSpec::algebraic`), so naming it would
/// not help.
fn p0_advice(model: &Model, unknown: &[usize], inputs: &InputValues) -> String {
    let vols = &model.hydraulics.volumes;
    let with_state: Vec<String> = unknown
        .iter()
        .filter(|&&u| !vols[u].algebraic)
        .map(|&u| format!("'{}'", vols[u].name))
        .collect();
    let algebraic = algebraic_advice(model, unknown, inputs);
    match (with_state.is_empty(), algebraic.is_empty()) {
        (false, true) => format!(
            "give p0_pa of {} ({CHAMBER_RULE}), or check the valve positions and the relief and \
             check valves around it at t = 0",
            with_state.join(", ")
        ),
        (true, _) => algebraic,
        (false, false) => format!(
            "give p0_pa of {} ({CHAMBER_RULE}); {algebraic}",
            with_state.join(", ")
        ),
    }
}

/// The advice for the algebraic volumes among `unknown` (empty when there are none): their
/// pressure always follows from their flow balance and `p0_pa` is only its guess, so the field
/// that helps is `algebraic = false` (a pressure state) with `p0_pa`, from which the run then
/// starts, the mechanism accelerating. Names the pumps that deliver into such a volume at t = 0
/// (shaft speed u(0) ≠ 0): their flow has nowhere to go while the mechanism is at rest.
fn algebraic_advice(model: &Model, unknown: &[usize], inputs: &InputValues) -> String {
    let vols = &model.hydraulics.volumes;
    let mut out = Vec::new();
    for &u in unknown.iter().filter(|&&u| vols[u].algebraic) {
        let here = Node::Volume(crate::model::VolumeId(u));
        let turning: Vec<String> = model
            .elements()
            .iter()
            .filter_map(|e| match e {
                Component::FixedPump(pu) if pu.outlet == here => Some((&pu.name, pu.input)),
                Component::PcPump(pu) if pu.outlet == here => Some((&pu.name, pu.input)),
                _ => None,
            })
            .filter(|&(_, k)| inputs.value_at(&model.inputs, k, 0.0) != 0.0)
            .map(|(name, _)| format!("'{name}'"))
            .collect();
        let why = if turning.is_empty() {
            String::new()
        } else {
            format!(
                " (pump {} already turns at t = 0 and delivers into it while the mechanism is \
                 at rest)",
                turning.join(", ")
            )
        };
        out.push(format!(
            "volume '{}' is algebraic{why}: its pressure always follows from its flow balance \
             and p0_pa is only a guess, so give it a pressure state instead, algebraic = false \
             with p0_pa (the run starts from that pressure)",
            vols[u].name
        ));
    }
    out.join("; ")
}

/// Initial guess for unknown static pressures [Pa]: the mean of the known ones (volumes with
/// `p0_pa`, and the sources), 1 bar if there are none.
pub(crate) fn pressure_guess(model: &Model) -> f64 {
    let known: Vec<f64> = model
        .hydraulics
        .volumes
        .iter()
        .filter_map(|v| v.p0_pa)
        .chain(model.hydraulics.sources.iter().map(|s| s.pressure_pa))
        .collect();
    if known.is_empty() {
        1e5
    } else {
        known.iter().sum::<f64>() / known.len() as f64
    }
}

/// Refuses a static pressure solve whose Jacobian `jm` (rows equilibrated to unit maximum,
/// columns: the `unknown` volumes, then the trims) is rank deficient in the pressure columns:
/// the statics then fix only a combination of those pressures, and the minimum-norm step would
/// pick one silently. The volumes named are those with a share of the null space of J
/// (|v_k| > 1e-6 in a unit null vector), and the error asks for p0_pa of as many as the null
/// space has dimensions.
fn determined(model: &Model, unknown: &[usize], jm: &DMatrix<f64>) -> Result<(), InitError> {
    let nu = jm.ncols();
    if nu == 0 || jm.nrows() == 0 {
        return Ok(());
    }
    // J is row-equilibrated (each row's largest entry 1), so a singular value below
    // 1e-10 · σ_max · nu is rank loss, not scaling.
    let svd = jm.clone().svd(false, true);
    let v_t = match svd.v_t {
        Some(v) => v,
        None => return Ok(()),
    };
    let s_max = svd.singular_values.iter().cloned().fold(0.0, f64::max);
    let tol = 1e-10 * s_max * nu as f64;
    // nalgebra's thin SVD has min(rows, cols) singular values; rows ≥ cols here (checked
    // before the solve), so every column direction has one
    let mut free = vec![false; unknown.len()];
    let mut missing = 0;
    for (k, &sigma) in svd.singular_values.iter().enumerate() {
        if sigma > tol {
            continue;
        }
        let row = v_t.row(k);
        // only the pressure columns: a free trim is the bridge valve's own affair
        let mut any = false;
        for (i, f) in free.iter_mut().enumerate() {
            if row[i].abs() > 1e-6 {
                *f = true;
                any = true;
            }
        }
        missing += usize::from(any);
    }
    if missing == 0 {
        return Ok(());
    }
    Err(InitError::UndeterminedPressures {
        volumes: unknown
            .iter()
            .zip(free.iter())
            .filter(|(_, f)| **f)
            .map(|(&u, _)| model.hydraulics.volumes[u].name.clone())
            .collect(),
        missing,
    })
}

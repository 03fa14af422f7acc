//! Linear against nonlinear response (001 §4.4): the full nonlinear model (the simulator's own
//! formulation, from the equilibrium) against the linear model ẋ = A x + B u, y = C x
//! (trapezoidal rule on the same time grid), in two scenarios:
//!
//! * [`valve_pulse`]: a small pulse on a valve reference signal (interval-held input like the
//!   simulator's spool step); every other input held at its value at the operating point.
//! * [`after_time`]: the scenario of 001 §4.4 eqs. 92–94. The nonlinear run follows the model's
//!   own inputs from the equilibrium (the torque M2 of eq. 92 ramps up, is held and released at
//!   t2); the linear model about the equilibrium (001 eq. 93, the J of Table 3) is integrated
//!   from t2 only, from the nonlinear deviation at t2 (eq. 94: x̃(t2) = x(t2) − x⁰), with the
//!   inputs' deviations u(t) − u⁰ from then on (zero after the release).
//!
//! ```text
//!   U_ref(t) = U⁰ + δ  on [t_on, t_off),  U⁰ otherwise                     (valve pulse)
//!   x(T) = x_NL(T) − x⁰,  ẋ = A x + B (u(t) − u⁰)  for t ≥ T              (after T, eq. 94)
//!   x_{k+1} = (I − Δt/2 A)⁻¹ [(I + Δt/2 A) x_k + Δt/2 B (ũ_k + ũ_{k+1})]
//!   error_j = max_k |y_L,j(t_k) − (y_NL,j(t_k) − y⁰_j)|,   deviation_j = max_k |y_NL,j − y⁰_j|
//! ```

use nalgebra::{DMatrix, DVector};

use crate::elements::inputs::Signal;
use crate::linearize::{
    element_signals, full_names, InputSel, LinearizeError, OperatingPoint, OutputSel, StateSpace,
};
use crate::model::Model;
use crate::pipeline::simulation::Simulation;

/// The two responses and their difference.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Output names.
    pub outputs: Vec<String>,
    /// Times [s].
    pub times: Vec<f64>,
    /// Linear response y_L (deviation from the operating point), per time, per output.
    pub linear: Vec<Vec<f64>>,
    /// Nonlinear response y_NL − y⁰, per time, per output.
    pub nonlinear: Vec<Vec<f64>>,
    /// Largest |y_L − (y_NL − y⁰)| per output.
    pub max_error: Vec<f64>,
    /// Largest |y_NL − y⁰| per output.
    pub max_deviation: Vec<f64>,
    /// Index into `times` where the linear run starts (and the maxima are taken from): 0 for
    /// the valve pulse, the step at T for [`after_time`]. Before it `linear` holds NaN.
    pub start: usize,
}

/// A simulation of `model` started at the operating point `pt` (rest, consistent multipliers).
fn simulation_at(model: Model, pt: &OperatingPoint) -> Result<Simulation, LinearizeError> {
    let (ncon, nv) = (model.n_constraints() + model.n_nonholonomic(), pt.p.len());
    let mut sim = Simulation::new(model)
        .map_err(|e| LinearizeError::NoEquilibrium(format!("initialization: {e}")))?;
    let mut st = sim.state().clone();
    st.t_s = pt.t_s;
    st.z = pt.z.clone();
    st.zd = pt.zd.clone();
    st.zdd = pt.zdd.clone();
    st.p = pt.p.clone();
    st.pd = vec![0.0; nv];
    st.pdd = vec![0.0; nv];
    st.spool = pt.spool.clone();
    st.friction = pt.friction.clone();
    st.friction_rate.iter_mut().for_each(|x| *x = 0.0);
    st.internal = pt.internal.clone();
    st.internal_rate.iter_mut().for_each(|x| *x = 0.0);
    st.lambda = pt.lambda.clone();
    st.lambda.resize(ncon, 0.0);
    sim.set_state(st);
    Ok(sim)
}

/// y_NL − y⁰ of `outputs` at the simulation state `s`: the state-type outputs (coordinates,
/// rates, pressures, spools, friction and internal states) read from the state; cylinder lengths
/// and forces evaluated at the state and at `pt` by `y0`, the evaluator of the linearization.
struct Deviation<'a> {
    model: &'a Model,
    outputs: &'a [OutputSel],
    pt: &'a OperatingPoint,
    /// Evaluator and each cylinder output's value at `pt`, when a cylinder output is asked for.
    cylinders: Option<(crate::mechanics::assembly::Evaluator<f64>, Vec<f64>)>,
}

impl<'a> Deviation<'a> {
    fn new(model: &'a Model, outputs: &'a [OutputSel], pt: &'a OperatingPoint) -> Self {
        let needed = outputs.iter().any(|o| {
            matches!(
                o,
                OutputSel::CylinderLength(_) | OutputSel::CylinderForce(_)
            )
        });
        let mut d = Deviation {
            model,
            outputs,
            pt,
            cylinders: None,
        };
        if needed {
            let mut ev = super::evaluator_at::<f64>(model, pt.t_s);
            let y0 = d.cylinder_values(
                &mut ev,
                pt.t_s,
                [&pt.z, &pt.zd, &pt.p, &pt.spool, &pt.friction, &pt.internal],
            );
            d.cylinders = Some((ev, y0));
        }
        d
    }

    /// The cylinder outputs' values (NaN in the other slots) at time `t` and the variables
    /// `[z, ż, p, U, w, e]`, from the same evaluator as the linearization's output rows.
    fn cylinder_values(
        &self,
        ev: &mut crate::mechanics::assembly::Evaluator<f64>,
        t: f64,
        [z, zd, p, spool, w, e]: [&[f64]; 6],
    ) -> Vec<f64> {
        super::set_element_time(self.model, ev, t);
        ev.fstate.copy_from_slice(w);
        ev.internal.copy_from_slice(e);
        ev.evaluate(self.model, z, zd, p, spool, false);
        self.outputs
            .iter()
            .map(|o| match *o {
                OutputSel::CylinderLength(c) => ev.motion[c].s,
                OutputSel::CylinderForce(c) => ev.cylinder_force[c],
                _ => f64::NAN,
            })
            .collect()
    }

    /// y_NL − y⁰ at `s`.
    fn at(&mut self, s: &crate::state::State) -> Vec<f64> {
        let pt = self.pt;
        let cylinders = self.cylinders.take().map(|(mut ev, y0)| {
            let y = self.cylinder_values(
                &mut ev,
                s.t_s,
                [&s.z, &s.zd, &s.p, &s.spool, &s.friction, &s.internal],
            );
            let dy: Vec<f64> = y.iter().zip(&y0).map(|(a, b)| a - b).collect();
            self.cylinders = Some((ev, y0));
            dy
        });
        self.outputs
            .iter()
            .enumerate()
            .map(|(j, o)| match *o {
                OutputSel::Coordinate(k) => s.z[k] - pt.z[k],
                OutputSel::Rate(k) => s.zd[k] - pt.zd[k],
                OutputSel::Pressure(v) => s.p[v] - pt.p[v],
                OutputSel::Spool(i) => s.spool[i] - pt.spool[i],
                OutputSel::FrictionState(k) => s.friction[k] - pt.friction[k],
                OutputSel::InternalState(k) => s.internal[k] - pt.internal[k],
                OutputSel::CylinderLength(_) | OutputSel::CylinderForce(_) => {
                    cylinders.as_ref().map_or(f64::NAN, |dy| dy[j])
                }
            })
            .collect()
    }
}

/// (I − Δt/2 A)⁻¹ and I + Δt/2 A of the trapezoidal rule.
fn trapezoidal(ss: &StateSpace, dt: f64) -> Result<(DMatrix<f64>, DMatrix<f64>), LinearizeError> {
    let ns = ss.a.nrows();
    let i = DMatrix::<f64>::identity(ns, ns);
    let lhs = (&i - &ss.a * (0.5 * dt))
        .lu()
        .try_inverse()
        .ok_or_else(|| LinearizeError::Eigen("I − Δt/2 A is singular".into()))?;
    Ok((lhs, &i + &ss.a * (0.5 * dt)))
}

/// A valve pulse of amplitude `delta` on `[t_on, t_off)`, simulated to `t_end` (see the module
/// doc). `ss` must have been linearized about `pt` (a static equilibrium) with the valve's
/// reference among its inputs and state-type outputs (coordinates, rates, pressures, spools,
/// friction and internal states)
/// `outputs`, in the same order as `ss.outputs`.
#[allow(clippy::too_many_arguments)]
pub fn valve_pulse(
    model: &Model,
    pt: &OperatingPoint,
    ss: &StateSpace,
    outputs: &[OutputSel],
    valve: usize,
    delta: f64,
    t_on: f64,
    t_off: f64,
    t_end: f64,
) -> Result<Comparison, LinearizeError> {
    let name = format!("{}.u_ref", super::valves(model)[valve].name);
    let col =
        ss.inputs
            .iter()
            .position(|i| *i == name)
            .ok_or_else(|| LinearizeError::UnknownName {
                kind: "input",
                name: name.clone(),
                expected: ss.inputs.join(", "),
            })?;
    let u0 = pt.spool[valve];
    let mut m2 = model.clone();
    m2.inputs[super::valves(model)[valve].input] = Signal::PiecewiseConstant {
        times: vec![0.0, t_on, t_off],
        values: vec![u0, u0 + delta, u0],
    };
    // every other input held at its value at the operating point: only the pulse moves it
    for i in element_signals(model) {
        m2.inputs[i] = Signal::Constant(model.inputs[i].value(pt.t_s));
    }
    // and the pumps' speeds at theirs
    for (e, w) in super::pumps(model)
        .iter()
        .zip(&pt.spool[super::valves(model).len()..])
    {
        if let Some(i) = e.ports().input {
            m2.inputs[i] = Signal::Constant(*w);
        }
    }
    let dt = model.step_s();
    let mut sim = simulation_at(m2, pt)?;
    let mut deviation = Deviation::new(model, outputs, pt);
    let mut y_nl = |s: &crate::state::State| deviation.at(s);
    let ns = ss.a.nrows();
    let (lhs, rhs_m) = trapezoidal(ss, dt)?;
    let mut x = DVector::<f64>::zeros(ns);
    let bcol = ss.b.column(col).into_owned();
    let mut out = Comparison {
        outputs: ss.outputs.clone(),
        times: vec![0.0],
        linear: vec![(&ss.c * &x).iter().copied().collect()],
        nonlinear: vec![y_nl(sim.state())],
        max_error: vec![0.0; outputs.len()],
        max_deviation: vec![0.0; outputs.len()],
        start: 0,
    };
    let steps = (t_end / dt).round() as usize;
    for k in 0..steps {
        let t = k as f64 * dt;
        let u = if t >= t_on - 1e-12 && t < t_off - 1e-12 {
            delta
        } else {
            0.0
        };
        x = &lhs * (&rhs_m * &x + &bcol * (u * dt));
        sim.step()
            .map_err(|e| LinearizeError::NoEquilibrium(format!("nonlinear run: {e}")))?;
        let yl: Vec<f64> = (&ss.c * &x).iter().copied().collect();
        let yn = y_nl(sim.state());
        for j in 0..outputs.len() {
            out.max_error[j] = out.max_error[j].max((yl[j] - yn[j]).abs());
            out.max_deviation[j] = out.max_deviation[j].max(yn[j].abs());
        }
        out.times.push(sim.time_s());
        out.linear.push(yl);
        out.nonlinear.push(yn);
    }
    Ok(out)
}

/// The linear state x of `ss` at the simulation state `s`: each state's deviation from `pt`,
/// found by name in the full variable set (z, ż, p, U, w, e) of [`full_names`].
fn state_deviation(
    model: &Model,
    ss: &StateSpace,
    pt: &OperatingPoint,
    s: &crate::state::State,
) -> Result<DVector<f64>, LinearizeError> {
    let names = full_names(model);
    let full = |z: &[f64], zd: &[f64], p: &[f64], u: &[f64], w: &[f64], e: &[f64]| -> Vec<f64> {
        let nu = super::valves(model).len();
        let mut v = z.to_vec();
        v.extend_from_slice(zd);
        v.extend_from_slice(p);
        v.extend_from_slice(&u[..nu]);
        v.extend_from_slice(w);
        v.extend_from_slice(e);
        v
    };
    let now = full(&s.z, &s.zd, &s.p, &s.spool, &s.friction, &s.internal);
    let at0 = full(&pt.z, &pt.zd, &pt.p, &pt.spool, &pt.friction, &pt.internal);
    let mut x = DVector::<f64>::zeros(ss.states.len());
    for (j, name) in ss.states.iter().enumerate() {
        let k = names.iter().position(|n| n == name).ok_or_else(|| {
            LinearizeError::Unsupported(format!("the state '{name}' (not a model variable)"))
        })?;
        x[j] = now[k] - at0[k];
    }
    Ok(x)
}

/// Value of input `i` of the linear model at time `t` from the model's signals [its unit].
fn input_value(model: &Model, i: InputSel, t: f64) -> f64 {
    match i {
        InputSel::ValveReference(v) => model.inputs[super::valves(model)[v].input].value(t),
        InputSel::ElementSignal(k) => model.inputs[k].value(t),
        InputSel::CoordinateForce(_) => 0.0,
        InputSel::PumpSpeed(k) => {
            // the held position for the input's value (`Element::initial_position`)
            let e = super::pumps(model)[k];
            e.ports().input.map_or(0.0, |i| {
                crate::elements::element::Element::initial_position(
                    e,
                    0.0,
                    model.inputs[i].value(t),
                )
            })
        }
    }
}

/// 001 §4.4, eqs. 92–94 (see the module doc): the nonlinear model runs from the equilibrium
/// `pt` (time `pt.t_s`) with the model's own inputs to `t_end`; the linear model `ss`, linearized
/// about `pt` with inputs `inputs` (same order as `ss.inputs`) and outputs `outputs`, starts at
/// `t_start` from the nonlinear deviation there (x̃(T) = x(T) − x⁰) and is driven by the inputs'
/// deviations u(t) − u(pt.t_s) (a generalized force on a coordinate has no signal: 0). The
/// maxima are taken over [t_start, t_end]; the nonlinear deviation is recorded over the whole
/// run.
#[allow(clippy::too_many_arguments)]
pub fn after_time(
    model: &Model,
    pt: &OperatingPoint,
    ss: &StateSpace,
    inputs: &[InputSel],
    outputs: &[OutputSel],
    t_start: f64,
    t_end: f64,
) -> Result<Comparison, LinearizeError> {
    let dt = model.step_s();
    if !(t_start >= pt.t_s && t_end > t_start) {
        return Err(LinearizeError::Unsupported(format!(
            "a comparison from {t_start} s to {t_end} s after the operating point at {} s",
            pt.t_s
        )));
    }
    let mut sim = simulation_at(model.clone(), pt)?;
    let mut deviation = Deviation::new(model, outputs, pt);
    let ns = ss.a.nrows();
    let (lhs, rhs_m) = trapezoidal(ss, dt)?;
    let u0: Vec<f64> = inputs
        .iter()
        .map(|&i| input_value(model, i, pt.t_s))
        .collect();
    let du = |t: f64| -> DVector<f64> {
        DVector::from_iterator(
            inputs.len(),
            inputs
                .iter()
                .zip(u0.iter())
                .map(|(&i, u)| input_value(model, i, t) - u),
        )
    };
    let nan = vec![f64::NAN; outputs.len()];
    let mut out = Comparison {
        outputs: ss.outputs.clone(),
        times: vec![sim.time_s()],
        linear: vec![nan.clone()],
        nonlinear: vec![deviation.at(sim.state())],
        max_error: vec![0.0; outputs.len()],
        max_deviation: vec![0.0; outputs.len()],
        start: 0,
    };
    let run = |e: crate::StepError| LinearizeError::NoEquilibrium(format!("nonlinear run: {e}"));
    while sim.time_s() < t_start - 1e-9 * dt {
        sim.step().map_err(run)?;
        out.times.push(sim.time_s());
        out.linear.push(nan.clone());
        out.nonlinear.push(deviation.at(sim.state()));
    }
    out.start = out.times.len() - 1;
    let mut x = state_deviation(model, ss, pt, sim.state())?;
    *out.linear.last_mut().expect("one sample") = (&ss.c * &x).iter().copied().collect();
    let record = |out: &mut Comparison, k: usize| {
        for j in 0..outputs.len() {
            let (yl, yn) = (out.linear[k][j], out.nonlinear[k][j]);
            out.max_error[j] = out.max_error[j].max((yl - yn).abs());
            out.max_deviation[j] = out.max_deviation[j].max(yn.abs());
        }
    };
    let k0 = out.start;
    record(&mut out, k0);
    while sim.time_s() < t_end - 1e-9 * dt {
        let t0 = sim.time_s();
        sim.step().map_err(run)?;
        let t1 = sim.time_s();
        let forcing = &ss.b * ((du(t0) + du(t1)) * (0.5 * (t1 - t0)));
        x = &lhs * (&rhs_m * &x + forcing);
        debug_assert_eq!(x.len(), ns);
        out.times.push(t1);
        out.linear.push((&ss.c * &x).iter().copied().collect());
        out.nonlinear.push(deviation.at(sim.state()));
        let k = out.times.len() - 1;
        record(&mut out, k);
    }
    Ok(out)
}

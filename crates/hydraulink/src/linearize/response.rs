//! Linear against nonlinear response (001 §4.4): a small pulse on a valve reference signal,
//! simulated with the full nonlinear model (the simulator's own formulation, from the
//! equilibrium) and with the linear model ẋ = A x + B u, y = C x (trapezoidal rule on the same
//! time grid, interval-held input like the simulator's spool step).
//!
//! ```text
//!   U_ref(t) = U⁰ + δ  on [t_on, t_off),  U⁰ otherwise
//!   x_{k+1} = (I − Δt/2 A)⁻¹ [(I + Δt/2 A) x_k + Δt B u_k]
//!   error_j = max_k |y_L,j(t_k) − (y_NL,j(t_k) − y⁰_j)|,   deviation_j = max_k |y_NL,j − y⁰_j|
//! ```

use nalgebra::{DMatrix, DVector};

use crate::inputs::Signal;
use crate::linearize::{LinearizeError, OperatingPoint, OutputSel, StateSpace};
use crate::model::Model;
use crate::simulation::Simulation;

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
}

/// A valve pulse of amplitude `delta` on `[t_on, t_off)`, simulated to `t_end` (see the module
/// doc). `ss` must have been linearized about `pt` (a static equilibrium) with the valve's
/// reference among its inputs and state-type outputs (coordinates, rates, pressures, spools,
/// friction states)
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
    let name = format!("{}.u_ref", model.hydraulics.valves[valve].name);
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
    m2.inputs[model.hydraulics.valves[valve].input] = Signal::PiecewiseConstant {
        times: vec![0.0, t_on, t_off],
        values: vec![u0, u0 + delta, u0],
    };
    let dt = model.step_s();
    let mut sim = Simulation::new(m2.clone())
        .map_err(|e| LinearizeError::NoEquilibrium(format!("initialization: {e}")))?;
    let mut st = sim.state().clone();
    st.t_s = 0.0;
    st.z = pt.z.clone();
    st.zd = pt.zd.clone();
    st.zdd = pt.zdd.clone();
    st.p = pt.p.clone();
    st.pd = vec![0.0; pt.p.len()];
    st.pdd = vec![0.0; pt.p.len()];
    st.spool = pt.spool.clone();
    st.friction = pt.friction.clone();
    st.friction_rate.iter_mut().for_each(|x| *x = 0.0);
    st.lambda = pt.lambda.clone();
    st.lambda
        .resize(model.n_constraints() + model.n_nonholonomic(), 0.0);
    sim.set_state(st);
    let y_nl = |s: &crate::state::State| -> Vec<f64> {
        outputs
            .iter()
            .map(|o| match *o {
                OutputSel::Coordinate(k) => s.z[k] - pt.z[k],
                OutputSel::Rate(k) => s.zd[k] - pt.zd[k],
                OutputSel::Pressure(v) => s.p[v] - pt.p[v],
                OutputSel::Spool(i) => s.spool[i] - pt.spool[i],
                OutputSel::FrictionState(k) => s.friction[k] - pt.friction[k],
                OutputSel::CylinderLength(_) | OutputSel::CylinderForce(_) => f64::NAN,
            })
            .collect()
    };
    // linear: trapezoidal rule
    let ns = ss.a.nrows();
    let i = DMatrix::<f64>::identity(ns, ns);
    let lhs = (&i - &ss.a * (0.5 * dt))
        .lu()
        .try_inverse()
        .ok_or_else(|| LinearizeError::Eigen("I − Δt/2 A is singular".into()))?;
    let rhs_m = &i + &ss.a * (0.5 * dt);
    let mut x = DVector::<f64>::zeros(ns);
    let bcol = ss.b.column(col).into_owned();
    let mut out = Comparison {
        outputs: ss.outputs.clone(),
        times: vec![0.0],
        linear: vec![(&ss.c * &x).iter().copied().collect()],
        nonlinear: vec![y_nl(sim.state())],
        max_error: vec![0.0; outputs.len()],
        max_deviation: vec![0.0; outputs.len()],
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

//! The conventional counterpart (001 §4.5, eqs. 95–100; reference note 001 A.5): central finite
//! differences of the index-1 right-hand side F(X) ([`super::index1::rhs`]) in the full variable
//! set X = (z, ż, p, U, w, e) (w: friction states; e: internal states of the elements, such as
//! the relief valve's poppet opening).
//!
//! ```text
//!   J_:j ≈ [F(X⁰ + h_j e_j) − F(X⁰ − h_j e_j)] / (2 h_j)                          (eq. 100)
//!   B_:j ≈ [F(X⁰; u⁰ + h_j e_j) − F(X⁰; u⁰ − h_j e_j)] / (2 h_j)   (valve references, forces)
//!   h_j = h (StepKind::Absolute, the paper's choice)  or  h · max(1, |X⁰_j|) (StepKind::Relative)
//! ```
//! J has
//! the true spectrum plus 2·rank Φ_z spurious zero eigenvalues (the constraint manifold and its
//! tangent are not removed), and its accuracy depends on h (001 Fig. 14).

use nalgebra::DMatrix;

use crate::linearize::derivatives::{derivatives, output_matrix, SpoolSide};
use crate::linearize::index1::rhs;
use crate::linearize::{
    full_names, input_name, output_name, InputSel, LinearizeError, OperatingPoint, OutputSel,
    StateSpace,
};
use crate::model::Model;

/// How the difference step scales with the variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StepKind {
    /// h_j = h for every variable, as in 001 eq. 100 (pressures in Pa get the same h as angles).
    #[default]
    Absolute,
    /// h_j = h · max(1, |X⁰_j|).
    Relative,
}

/// Central-difference linearization about `pt` with step `h` (see the module doc). The valve
/// reference signals are read from the model's inputs at `pt.t_s`.
pub fn linearize(
    model: &Model,
    pt: &OperatingPoint,
    h: f64,
    kind: StepKind,
    inputs: &[InputSel],
    outputs: &[OutputSel],
) -> Result<StateSpace, LinearizeError> {
    super::check_supported(model)?;
    let (n, nv, nu) = (
        model.n_coords(),
        model.n_volumes(),
        super::valves(model).len(),
    );
    let nx = 2 * n + nv + nu + model.n_friction_states() + model.layout.internal.len();
    let mut x0 = Vec::with_capacity(nx);
    x0.extend_from_slice(&pt.z);
    x0.extend_from_slice(&pt.zd);
    x0.extend_from_slice(&pt.p);
    x0.extend_from_slice(&pt.spool[..nu]);
    x0.extend_from_slice(&pt.friction);
    x0.extend_from_slice(&pt.internal);
    let u_ref: Vec<f64> = super::rhs_inputs(model, pt);
    let zero_f = vec![0.0; n];
    let mut ev = super::evaluator_at::<f64>(model, pt.t_s);
    let mut a = DMatrix::<f64>::zeros(nx, nx);
    for j in 0..nx {
        let hj = match kind {
            StepKind::Absolute => h,
            StepKind::Relative => h * x0[j].abs().max(1.0),
        };
        let mut xp = x0.clone();
        let mut xm = x0.clone();
        xp[j] += hj;
        xm[j] -= hj;
        let fp = rhs(model, &mut ev, &xp, &u_ref, &zero_f);
        let fm = rhs(model, &mut ev, &xm, &u_ref, &zero_f);
        for i in 0..nx {
            a[(i, j)] = (fp[i] - fm[i]) / (2.0 * hj);
        }
    }
    let mut b = DMatrix::<f64>::zeros(nx, inputs.len());
    for (j, inp) in inputs.iter().enumerate() {
        let (mut gp, mut gm) = (zero_f.clone(), zero_f.clone());
        let (mut up, mut um) = (u_ref.clone(), u_ref.clone());
        let hj = match *inp {
            InputSel::ValveReference(i) => {
                let hj = match kind {
                    StepKind::Absolute => h,
                    StepKind::Relative => h * u_ref[i].abs().max(1.0),
                };
                up[i] += hj;
                um[i] -= hj;
                hj
            }
            InputSel::PumpSpeed(k) => {
                let w = u_ref[nu + k];
                let hj = match kind {
                    StepKind::Absolute => h,
                    StepKind::Relative => h * w.abs().max(1.0),
                };
                up[nu + k] += hj;
                um[nu + k] -= hj;
                hj
            }
            InputSel::CoordinateForce(k) => {
                gp[k] = h;
                gm[k] = -h;
                h
            }
            InputSel::ElementSignal(i) => {
                // external loads are linear in u: ±h of the signal is ±h ∂Q′/∂u
                let dq = super::element_signal_force(model, pt, i)?;
                for k in 0..n {
                    gp[k] = h * dq[k];
                    gm[k] = -h * dq[k];
                }
                h
            }
        };
        let fp = rhs(model, &mut ev, &x0, &up, &gp);
        let fm = rhs(model, &mut ev, &x0, &um, &gm);
        for i in 0..nx {
            b[(i, j)] = (fp[i] - fm[i]) / (2.0 * hj);
        }
    }
    let to_full = DMatrix::<f64>::identity(nx, nx);
    // output rows are exact (they are not what the comparison is about)
    let mut evd = super::evaluator_at(model, pt.t_s);
    let d = derivatives(model, pt, SpoolSide::Average, &mut evd);
    let rank = if d.jac.nrows() == 0 {
        0
    } else {
        let sv = crate::solver::linalg::singular_values(&d.jac);
        let smax = sv.iter().fold(0.0_f64, |m, s| m.max(*s));
        sv.iter().filter(|&&s| s > 1e-9 * smax).count()
    };
    let c = output_matrix(model, outputs, &d, &to_full);
    Ok(StateSpace {
        a,
        b,
        d: DMatrix::zeros(outputs.len(), inputs.len()),
        c,
        states: full_names(model),
        inputs: inputs.iter().map(|&i| input_name(model, i)).collect(),
        outputs: outputs.iter().map(|&o| output_name(model, o)).collect(),
        to_full,
        n_full_coords: n,
        n_spurious_zero: 2 * (rank + model.n_nonholonomic()),
    })
}

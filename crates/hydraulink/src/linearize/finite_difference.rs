//! The conventional counterpart (001 §4.5, eqs. 95–100; reference note 001 A.5): central finite
//! differences of the index-1 right-hand side in the full coordinate set X = (z, ż, p, U).
//!
//! ```text
//!   | M   Φ_zᵀ | | z̈ |   | Q(z, ż, p)  |
//!   | Φ_z  0   | | λ | = | −Φ̇_z ż      |          (eq. 96; least squares for redundant rows)
//!   F(X) = (ż, z̈, H(z, ż, p, U), (U_ref − U)/τ)   (eq. 98)
//!   J_:j ≈ [F(X⁰ + h_j e_j) − F(X⁰ − h_j e_j)] / (2 h_j)                          (eq. 100)
//!   h_j = h (StepKind::Absolute, the paper's choice)  or  h · max(1, |X⁰_j|) (StepKind::Relative)
//! ```
//! J has
//! the true spectrum plus 2·rank Φ_z spurious zero eigenvalues (the constraint manifold and its
//! tangent are not removed), and its accuracy depends on h (001 Fig. 14).

use nalgebra::{DMatrix, DVector};

use crate::assembly::Evaluator;
use crate::linalg::pinv_solve;
use crate::linearize::exact::{derivatives, output_matrix, SpoolSide};
use crate::linearize::{
    full_names, input_name, output_name, InputSel, LinearizeError, OperatingPoint, OutputSel,
    StateSpace,
};
use crate::model::Model;

/// The right-hand side F(X) of eq. 98 (`u_ref`: the valves' reference signals; `gen_force`: extra
/// generalized forces on the coordinates).
pub fn rhs(
    model: &Model,
    ev: &mut Evaluator<f64>,
    x: &[f64],
    u_ref: &[f64],
    gen_force: &[f64],
) -> Vec<f64> {
    let (n, nv) = (model.n_coords(), model.n_volumes());
    let (m0, l) = (model.n_constraints(), model.n_nonholonomic());
    let m = m0 + l;
    let (z, rest) = x.split_at(n);
    let (zd, rest) = rest.split_at(n);
    let (p, u) = rest.split_at(nv);
    ev.evaluate(model, z, zd, p, u, true);
    let mut aug = DMatrix::<f64>::zeros(n + m, n + m);
    let mut b = DVector::<f64>::zeros(n + m);
    for i in 0..n {
        for k in 0..n {
            aug[(i, k)] = ev.dynamics.mass[i * n + k];
        }
        b[i] = ev.dynamics.force[i] + gen_force[i];
    }
    // D = [Φ_z; B], D z̈ = −Ḋ ż (eq. 95)
    for r in 0..m {
        let (row, acc0) = if r < m0 {
            (
                &ev.constraints.jac[r * n..(r + 1) * n],
                ev.constraints.acc0[r],
            )
        } else {
            let q = r - m0;
            (
                &ev.nonholonomic.b[q * n..(q + 1) * n],
                ev.nonholonomic.acc0[q],
            )
        };
        for k in 0..n {
            aug[(n + r, k)] = row[k];
            aug[(k, n + r)] = row[k];
        }
        b[n + r] = -acc0;
    }
    let sol = pinv_solve(&aug, &b);
    let mut f = Vec::with_capacity(x.len());
    f.extend_from_slice(zd);
    f.extend(sol.iter().take(n));
    f.extend_from_slice(&ev.h);
    for (i, v) in model.hydraulics.valves.iter().enumerate() {
        f.push((u_ref[i] - u[i]) / v.time_constant_s);
    }
    f
}

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
        model.hydraulics.valves.len(),
    );
    let nx = 2 * n + nv + nu;
    let mut x0 = Vec::with_capacity(nx);
    x0.extend_from_slice(&pt.z);
    x0.extend_from_slice(&pt.zd);
    x0.extend_from_slice(&pt.p);
    x0.extend_from_slice(&pt.spool[..nu]);
    let u_ref: Vec<f64> = super::valve_references(model, pt.t_s);
    let zero_f = vec![0.0; n];
    let mut ev = Evaluator::<f64>::new(model);
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
        match *inp {
            InputSel::ValveReference(i) => {
                b[(2 * n + nv + i, j)] = 1.0 / model.hydraulics.valves[i].time_constant_s;
            }
            InputSel::CoordinateForce(k) => {
                let mut gp = zero_f.clone();
                let mut gm = zero_f.clone();
                gp[k] = h;
                gm[k] = -h;
                let fp = rhs(model, &mut ev, &x0, &u_ref, &gp);
                let fm = rhs(model, &mut ev, &x0, &u_ref, &gm);
                for i in 0..nx {
                    b[(i, j)] = (fp[i] - fm[i]) / (2.0 * h);
                }
            }
        }
    }
    let to_full = DMatrix::<f64>::identity(nx, nx);
    // output rows are exact (they are not what the comparison is about)
    let mut evd = Evaluator::new(model);
    let d = derivatives(model, pt, SpoolSide::Average, &mut evd);
    let rank = if d.jac.nrows() == 0 {
        0
    } else {
        let sv = crate::linalg::singular_values(&d.jac);
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

//! The index-1 right-hand side F(X) of 001 eq. 98 in the full variable set
//! X = (z, ż, p, U, w, e): the model's own nonlinear equations, which the finite-difference method
//! differentiates (001 §4.5) and which the exact A is checked against
//! (`exact::rhs_directional_derivative`).
//!
//! ```text
//!   | M    D_Rᵀ | | z̈ |   | Q(z, ż, p, w) + g |
//!   | D_R   0   | | Λ | = | −Ḋ_R ż             |     D = [Φ_z; B], D_R its independent rows (eq. 96)
//!   F(X) = (ż, z̈, H(z, ż, p, U, w, e), f_U(U, U_ref), u(z, ż, w), ė(e, p))       (eq. 98)
//! ```
//! f_U is the spool law of the step (`Element::position_rate`, the 4/3 valve's `spool_rate`), u the friction-state
//! rates (003 Pub II eqs. 25, 28, 30), ė the rates of the elements' internal states from their
//! own laws (`PortEffort::internal_rate`, e.g. the relief valve's poppet lag). Redundant rows of
//! D (a 3-D cut joint closing a planar loop) are dropped: they carry no information on z̈, and
//! the remaining saddle-point system is solved by LU with full pivoting. (An SVD pseudo-inverse
//! of the whole system, the former solve, has a backward error near 1e-9 here, which the
//! system's condition number, 6e5 for the four-bar of 000, turned into 2e-4 errors in z̈.)

use nalgebra::{DMatrix, DVector};

use crate::elements::element::Element;
use crate::mechanics::assembly::Evaluator;
use crate::model::Model;
use crate::solver::linalg::pinv_solve;

/// F(X) of eq. 98 (see the module doc). `x` = (z, ż, p, U, w, e) with n, n, n_v, n_u (4/3
/// valves), n_w (friction states) and n_e (internal states of the elements, `Layout::internal`)
/// entries; `u_ref`: the valves' reference signals (n_u), then the pumps' shaft speeds ω [rad/s],
/// held inputs (`linearize::rhs_inputs`); `gen_force`: extra generalized forces g on the
/// coordinates [N m or N]. The result has the layout of `x`.
///
/// Panics if `x` does not have 2n + n_v + n_u + n_w + n_e entries (a caller's bug).
pub fn rhs(
    model: &Model,
    ev: &mut Evaluator<f64>,
    x: &[f64],
    u_ref: &[f64],
    gen_force: &[f64],
) -> Vec<f64> {
    let (n, nv, nu) = (
        model.n_coords(),
        model.n_volumes(),
        super::valves(model).len(),
    );
    let (m0, l) = (model.n_constraints(), model.n_nonholonomic());
    let m = m0 + l;
    let (z, rest) = x.split_at(n);
    let (zd, rest) = rest.split_at(n);
    let (p, rest) = rest.split_at(nv);
    let (u, rest) = rest.split_at(nu);
    let (w, e) = rest.split_at(model.n_friction_states());
    assert_eq!(
        e.len(),
        model.layout.internal.len(),
        "index1::rhs: x must hold the internal states e after w"
    );
    ev.fstate.copy_from_slice(w);
    ev.internal.copy_from_slice(e);
    // the valve positions: the spools (states), then the pumps' held speeds (inputs)
    let positions: Vec<f64> = u.iter().chain(u_ref[nu..].iter()).copied().collect();
    ev.evaluate(model, z, zd, p, &positions, true);
    // D = [Φ_z; B], D z̈ = −Ḋ ż (eq. 95)
    let mut dm = DMatrix::<f64>::zeros(m, n);
    let mut acc0 = DVector::<f64>::zeros(m);
    for r in 0..m {
        let (row, a0) = if r < m0 {
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
            dm[(r, k)] = row[k];
        }
        acc0[r] = a0;
    }
    let rows = super::independent_rows(&dm);
    let r = rows.len();
    let mut aug = DMatrix::<f64>::zeros(n + r, n + r);
    let mut b = DVector::<f64>::zeros(n + r);
    for i in 0..n {
        for k in 0..n {
            aug[(i, k)] = ev.dynamics.mass[i * n + k];
        }
        b[i] = ev.dynamics.force[i] + gen_force[i];
    }
    for (ri, &row) in rows.iter().enumerate() {
        for k in 0..n {
            aug[(n + ri, k)] = dm[(row, k)];
            aug[(k, n + ri)] = dm[(row, k)];
        }
        b[n + ri] = -acc0[row];
    }
    // a singular M on the constraint tangent (no unique z̈): least squares as before
    let sol = aug
        .clone()
        .full_piv_lu()
        .solve(&b)
        .unwrap_or_else(|| pinv_solve(&aug, &b));
    let mut f = Vec::with_capacity(x.len());
    f.extend_from_slice(zd);
    f.extend(sol.iter().take(n));
    f.extend_from_slice(&ev.h);
    for (i, e) in model.position_elements().take(nu) {
        f.push(e.position_rate(u[i], u_ref[i]));
    }
    f.extend_from_slice(&ev.fstate_rate);
    f.extend_from_slice(&ev.internal_rate);
    f
}

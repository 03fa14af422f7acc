//! The exact linearization of 001 §3 (steps 1–7, eqs. 21–64; reference note 001 A.3), in the
//! simulator's relative coordinates z.
//!
//! Index-3 DAE (001 eqs. 9–13) with M = M′, Q = Q′ (semi-recursive, 000 eqs. 11–12):
//! ```text
//!   M(z) z̈ + Φ_zᵀ λ = Q(z, ż, p, w),   Φ(z) = 0,   ṗ = H(z, ż, p, U),   U̇ = (U_ref − U)/τ,
//!   ẇ = u(z, ż, w)    (friction states, 003 Pub II eqs. 25, 28, 30)
//!   ė = g(z, ż, p, U, e)   (internal states of the elements, `Element::evaluate`)
//! ```
//! About a reference solution (z⁰, ż⁰, z̈⁰, λ⁰, p⁰, U⁰) with the partition z = (z_i, z_d)
//! (independent, dependent; independent rows of Φ_z only):
//! ```text
//!   T0   = [I ; −Φ_d⁻¹ Φ_i]                                        (eq. 31)
//!   V̄̄    = [0 ; −Φ_d⁻¹ ∂(Φ_z ż⁰)/∂z]                                (eqs. 34–35)
//!   Uₐ   = [0 ; −Φ_d⁻¹ ∂d/∂ż],   Vₐ = [0 ; −Φ_d⁻¹ (∂(Φ_z z̈⁰)/∂z + ∂d/∂z)],  d = Φ̇_z ż   (eqs. 38–40)
//!   m0 = T0ᵀ M T0,  R0 = T0ᵀ(Q_ż − M Uₐ),
//!   S0 = T0ᵀ(Q_z − M Vₐ − ∂(M z̈⁰)/∂z − ∂(Φ_zᵀ λ⁰)/∂z),  H0 = H_z + H_ż V̄̄   (eqs. 57–60)
//!   J = | 0                      I          0               0    |
//!       | m0⁻¹(R0 V̄̄ + S0) T0    m0⁻¹R0T0   m0⁻¹T0ᵀQ_p       0    |   (eq. 64, l = 0)
//!       | H0 T0                  H_ż T0     H_p             H_U  |
//!       | 0                      0          0              −1/τ  |
//! ```
//! The friction states w follow U: the z̈_i rows get m0⁻¹T0ᵀQ_w, the p rows H_w, and the w rows
//! are [u_z, u_ż, u_p, 0, u_w] mapped to the states like the p rows (u_z + u_ż V̄̄ on z̃, u_ż T0 on
//! ż̃_i). The internal states e of the elements (the relief valve's poppet opening) follow w the
//! same way: the z̈_i rows get m0⁻¹T0ᵀQ_e, the p rows H_e (the flows pass the opening), the w rows
//! u_e, and the e rows are [g_z, g_ż, g_p, g_U, g_w, g_e] mapped to the states. The spool rows
//! (−1/τ, and 1/τ in B) are the dual-number partials of the step's own law
//! `hydraulics::valve_4_3::spool_rate`. All derivatives come from [`super::derivatives`].
//! With l nonholonomic rows B ż = 0 (`mechanics::nonholonomic`), D = [Φ_z; B] replaces Φ_z in
//! T0, V̄̄, Uₐ, Vₐ and the contraction; x_ad (l coordinates whose rates follow from B) become
//! states with ẋ_ad = U0^nh ẋ_ai + V0^{nh,ai} x̃_ai + V0^{nh,ad} x̃_ad, and A is the eq. 61 matrix
//! on (x_ai, ẋ_ai, x_ad, p, U, w, e) with l spurious zero eigenvalues (docs/theory 9.8).
//! (Uₐ, Vₐ are the paper's U, V of eqs. 38–40, renamed: note E.16.) Every derivative is exact:
//! one dual-number pass of the simulator's `Evaluator` per column of z, ż, p, w and e. The
//! multiplier-contracted Hessian ∂(Φ_zᵀλ⁰)/∂z = Σ λ⁰_k ∂²Φ_k/∂z² comes from the dual part of the
//! analytic Φ_z, so no second-order duals are needed. H_U: the 4/3 valve flow is linear in U on
//! each side of U = 0 but kinked at 0 (note E.6); it is taken by a one-sided difference on the
//! side chosen by [`SpoolSide`], exact up to rounding because H is linear in U on that side.
//!
//! λ⁰ is recomputed from the reference itself, Φ_zᵀλ⁰ = Q − M z̈⁰ in least squares (equal to the
//! reference's λ⁰ when it satisfies eq. 9; minimum-norm for redundant constraints, which leaves
//! T0ᵀ ∂(Φ_zᵀλ⁰)/∂z T0 unchanged).

use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;

use crate::linearize::derivatives::{derivatives, output_matrix, Derivatives, SpoolSide};
use crate::linearize::index1::rhs;
use crate::linearize::{
    friction_state_names, input_name, internal_state_names, output_name, partition, InputSel,
    LinearizeError, OperatingPoint, OutputSel, Partition, StateSpace,
};
use crate::mechanics::assembly::Evaluator;
use crate::model::Model;
use crate::solver::linalg::pinv_solve;

/// Options of the exact linearization.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExactOptions {
    /// Coordinates to keep independent (e.g. the held coordinates of the equilibrium).
    pub independent: Vec<usize>,
    /// Inputs (u).
    pub inputs: Vec<InputSel>,
    /// Outputs (y).
    pub outputs: Vec<OutputSel>,
    /// Side of the valve-flow derivative at U = 0.
    pub spool_side: SpoolSide,
}

/// The result of the exact linearization.
#[derive(Debug, Clone)]
pub struct Linearization {
    /// A, B, C, D with names.
    pub ss: StateSpace,
    /// The coordinate partition used.
    pub partition: Partition,
    /// T0 (n × f): ż = T0 ż_i at the reference.
    pub t0: DMatrix<f64>,
    /// m0 = T0ᵀ M T0.
    pub m0: DMatrix<f64>,
    /// The derivatives.
    pub derivatives: Derivatives,
}

fn lu_solve(
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    what: &str,
) -> Result<DMatrix<f64>, LinearizeError> {
    a.clone()
        .lu()
        .solve(b)
        .ok_or_else(|| LinearizeError::SingularPartition(format!("{what} is singular")))
}

/// Linearizes `model` about `pt` by the method of 001 §3 (see the module doc).
pub fn linearize(
    model: &Model,
    pt: &OperatingPoint,
    opts: &ExactOptions,
) -> Result<Linearization, LinearizeError> {
    let mut ev = Evaluator::<Dual64>::new(model);
    linearize_with(model, pt, opts, &mut ev)
}

/// [`linearize`] with caller-owned dual-number buffers (for repeated calls).
pub fn linearize_with(
    model: &Model,
    pt: &OperatingPoint,
    opts: &ExactOptions,
    ev: &mut Evaluator<Dual64>,
) -> Result<Linearization, LinearizeError> {
    super::check_supported(model)?;
    super::set_element_time(model, ev, pt.t_s);
    let (n, m, nv, nu, l) = (
        model.n_coords(),
        model.n_constraints(),
        model.n_volumes(),
        super::valves(model).len(),
        model.n_nonholonomic(),
    );
    let d = derivatives(model, pt, opts.spool_side, ev);
    // ---- partition (eqs. 29–31): x_d from Φ_z, then x_ad from B̄ = B T0^h
    let mut part = partition(&d.jac, &opts.independent);
    let r = part.dependent.len();
    let xa: Vec<usize> = part.independent.clone();
    let jr = d.jac.select_rows(part.rows.iter());
    let phi_d = jr.select_columns(part.dependent.iter());
    // T0^h (n × (n − r)), columns in the order of x_a (eq. 47)
    let mut t0h = DMatrix::<f64>::zeros(n, xa.len());
    for (c, &k) in xa.iter().enumerate() {
        t0h[(k, c)] = 1.0;
    }
    if r > 0 {
        let td = lu_solve(&phi_d, &jr.select_columns(xa.iter()), "Φ_d")?;
        for (i, &k) in part.dependent.iter().enumerate() {
            t0h.row_mut(k).copy_from(&(-td.row(i)));
        }
    }
    // V0^h = [0; −Φ_d⁻¹ ∂(Φ_z ż⁰)/∂z] (eq. 48)
    let mut v0h = DMatrix::<f64>::zeros(n, n);
    if r > 0 {
        let y = lu_solve(&phi_d, &d.jzd_z.select_rows(part.rows.iter()), "Φ_d")?;
        for (i, &k) in part.dependent.iter().enumerate() {
            v0h.row_mut(k).copy_from(&(-y.row(i)));
        }
    }
    let bbar = &d.b * &t0h; // B̄ = B T0^h (eq. 50)
                            // x_ad: the last columns of x_a (not kept independent) that raise the rank of B̄
    let mut ad_cols: Vec<usize> = Vec::new();
    if l > 0 {
        let mut order: Vec<usize> = (0..xa.len())
            .rev()
            .filter(|&c| !opts.independent.contains(&xa[c]))
            .collect();
        order.extend(
            (0..xa.len())
                .rev()
                .filter(|&c| opts.independent.contains(&xa[c])),
        );
        let scale = bbar.amax().max(1e-300);
        for c in order {
            if ad_cols.len() == l {
                break;
            }
            let mut trial = ad_cols.clone();
            trial.push(c);
            let sv = crate::solver::linalg::singular_values(&bbar.select_columns(trial.iter()));
            if sv.iter().filter(|&&x| x > 1e-9 * scale).count() > ad_cols.len() {
                ad_cols = trial;
            }
        }
        if ad_cols.len() < l {
            return Err(LinearizeError::SingularPartition(format!(
                "the {l} nonholonomic rows are dependent (rank of B̄ = B T0^h is {})",
                ad_cols.len()
            )));
        }
        ad_cols.sort_unstable();
    }
    let ai_cols: Vec<usize> = (0..xa.len()).filter(|c| !ad_cols.contains(c)).collect();
    let ai: Vec<usize> = ai_cols.iter().map(|&c| xa[c]).collect();
    let ad: Vec<usize> = ad_cols.iter().map(|&c| xa[c]).collect();
    let f = ai.len();
    // D = [Φ_R; B], dd = x_d ∪ x_ad (eqs. 29–31)
    let drows: Vec<usize> = part.rows.iter().copied().chain(m..m + l).collect();
    let dmat = {
        let mut dm = DMatrix::<f64>::zeros(m + l, n);
        dm.view_mut((0, 0), (m, n)).copy_from(&d.jac);
        dm.view_mut((m, 0), (l, n)).copy_from(&d.b);
        dm.select_rows(drows.iter())
    };
    let dd: Vec<usize> = part.dependent.iter().chain(ad.iter()).copied().collect();
    let d_dd = dmat.select_columns(dd.iter());
    let mut t0 = DMatrix::<f64>::zeros(n, f);
    for (c, &k) in ai.iter().enumerate() {
        t0[(k, c)] = 1.0;
    }
    // scatter −D_dd⁻¹ X into the dd rows of an n-row matrix
    let dep_rows = |x: &DMatrix<f64>| -> Result<DMatrix<f64>, LinearizeError> {
        let y = lu_solve(&d_dd, &x.select_rows(drows.iter()), "D_dd")?;
        let mut out = DMatrix::<f64>::zeros(n, x.ncols());
        for (i, &k) in dd.iter().enumerate() {
            out.row_mut(k).copy_from(&(-y.row(i)));
        }
        Ok(out)
    };
    if !dd.is_empty() {
        let td = lu_solve(&d_dd, &dmat.select_columns(ai.iter()), "D_dd")?;
        for (i, &k) in dd.iter().enumerate() {
            t0.row_mut(k).copy_from(&(-td.row(i)));
        }
    }
    let (vbb, ua, va) = if !dd.is_empty() {
        (
            dep_rows(&d.jzd_z)?,              // V̄̄ (eqs. 34–35)
            dep_rows(&d.d_zd)?,               // Uₐ (eq. 39)
            dep_rows(&(&d.jzdd_z + &d.d_z))?, // Vₐ (eq. 40)
        )
    } else {
        (
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, n),
        )
    };
    // position relation (eqs. 41–44): z̃ = V0^{h,ai} z̃_ai + V0^{h,ad} z̃_ad
    let v0h_ai = t0h.select_columns(ai_cols.iter());
    let v0h_ad = t0h.select_columns(ad_cols.iter());
    // nonholonomic velocity relation (eqs. 49–52)
    let (u0nh, v0nh_ai, v0nh_ad) = if l > 0 {
        let bad = bbar.select_columns(ad_cols.iter());
        let bai = bbar.select_columns(ai_cols.iter());
        let k = &d.b * &v0h + d.jzd_z.rows(m, l);
        (
            -lu_solve(&bad, &bai, "B̄_ad")?,
            -lu_solve(&bad, &(&k * &v0h_ai), "B̄_ad")?,
            -lu_solve(&bad, &(&k * &v0h_ad), "B̄_ad")?,
        )
    } else {
        (
            DMatrix::zeros(0, f),
            DMatrix::zeros(0, f),
            DMatrix::zeros(0, 0),
        )
    };
    let t0t = t0.transpose();
    let m0 = &t0t * &d.mass * &t0; // eq. 57
    let r0 = &t0t * (&d.q_zd - &d.mass * &ua); // eq. 58
    let s0 = &t0t * (&d.q_z - &d.mass * &va - &d.mzdd_z - &d.jtl_z); // eq. 59
    let h0 = &d.h_z + &d.h_zd * &vbb; // eq. 60
    let m0inv = m0
        .clone()
        .try_inverse()
        .ok_or_else(|| LinearizeError::SingularPartition("m0 = T0ᵀ M T0 is singular".into()))?;
    let rs = &r0 * &vbb + &s0;
    // state (z_ai, ż_ai, z_ad, p, U, w, e): offsets
    let (nw, ne) = (model.n_friction_states(), model.layout.internal.len());
    let (o_v, o_ad, o_p, o_u) = (f, 2 * f, 2 * f + l, 2 * f + l + nv);
    let o_w = o_u + nu;
    let o_e = o_w + nw;
    let ns = o_e + ne;
    // map to the full variable set (z, ż, p, U, w, e): z̃ = V0^{h,ai} z̃_ai + V0^{h,ad} z̃_ad,
    // ż̃ = T0 ż̃_ai + V̄̄ z̃ (eq. 35)
    let nfull = 2 * n + nv + nu + nw + ne;
    let mut to_full = DMatrix::<f64>::zeros(nfull, ns);
    to_full.view_mut((0, 0), (n, f)).copy_from(&v0h_ai);
    to_full.view_mut((0, o_ad), (n, l)).copy_from(&v0h_ad);
    to_full
        .view_mut((n, 0), (n, f))
        .copy_from(&(&vbb * &v0h_ai));
    to_full
        .view_mut((n, o_ad), (n, l))
        .copy_from(&(&vbb * &v0h_ad));
    to_full.view_mut((n, o_v), (n, f)).copy_from(&t0);
    to_full
        .view_mut((2 * n, o_p), (nv + nu + nw + ne, nv + nu + nw + ne))
        .fill_with_identity();
    let mut a = DMatrix::<f64>::zeros(ns, ns);
    // eq. 61
    a.view_mut((0, o_v), (f, f)).fill_with_identity();
    a.view_mut((o_v, 0), (f, f))
        .copy_from(&(&m0inv * &rs * &v0h_ai));
    a.view_mut((o_v, o_v), (f, f))
        .copy_from(&(&m0inv * &r0 * &t0));
    a.view_mut((o_v, o_ad), (f, l))
        .copy_from(&(&m0inv * &rs * &v0h_ad));
    a.view_mut((o_v, o_p), (f, nv))
        .copy_from(&(&m0inv * &t0t * &d.q_p));
    // friction states enter the forces like the pressures: m0⁻¹ T0ᵀ Q_w
    a.view_mut((o_v, o_w), (f, nw))
        .copy_from(&(&m0inv * &t0t * &d.q_w));
    // and so do the elements' internal states: m0⁻¹ T0ᵀ Q_e
    a.view_mut((o_v, o_e), (f, ne))
        .copy_from(&(&m0inv * &t0t * &d.q_e));
    a.view_mut((o_ad, 0), (l, f)).copy_from(&v0nh_ai);
    a.view_mut((o_ad, o_v), (l, f)).copy_from(&u0nh);
    a.view_mut((o_ad, o_ad), (l, l)).copy_from(&v0nh_ad);
    a.view_mut((o_p, 0), (nv, f)).copy_from(&(&h0 * &v0h_ai));
    a.view_mut((o_p, o_v), (nv, f)).copy_from(&(&d.h_zd * &t0));
    a.view_mut((o_p, o_ad), (nv, l)).copy_from(&(&h0 * &v0h_ad));
    a.view_mut((o_p, o_p), (nv, nv)).copy_from(&d.h_p);
    a.view_mut((o_p, o_u), (nv, nu)).copy_from(&d.h_u);
    a.view_mut((o_p, o_w), (nv, nw)).copy_from(&d.h_w);
    a.view_mut((o_p, o_e), (nv, ne)).copy_from(&d.h_e); // the flows pass the internal states
    for i in 0..nu {
        a[(o_u + i, o_u + i)] = d.spool_u[i]; // eq. 56: ∂U̇/∂U of the spool law
    }
    // friction states (003 Pub II eqs. 25, 28, 30): ẇ = u(z, ż, p, w) over the full variables,
    // mapped to the states like the pressure rows (H0 = H_z + H_ż V̄̄, eq. 60)
    if nw > 0 {
        let mut g = DMatrix::<f64>::zeros(nw, nfull);
        g.view_mut((0, 0), (nw, n)).copy_from(&d.u_z);
        g.view_mut((0, n), (nw, n)).copy_from(&d.u_zd);
        g.view_mut((0, 2 * n), (nw, nv)).copy_from(&d.u_p);
        g.view_mut((0, 2 * n + nv + nu), (nw, nw)).copy_from(&d.u_w);
        g.view_mut((0, 2 * n + nv + nu + nw), (nw, ne))
            .copy_from(&d.u_e);
        a.view_mut((o_w, 0), (nw, ns)).copy_from(&(g * &to_full));
    }
    // internal states of the elements: ė = g(z, ż, p, U, w, e) from the element's own law over
    // the full variables, mapped to the states like the pressure and friction rows
    if ne > 0 {
        let mut g = DMatrix::<f64>::zeros(ne, nfull);
        g.view_mut((0, 0), (ne, n)).copy_from(&d.g_z);
        g.view_mut((0, n), (ne, n)).copy_from(&d.g_zd);
        g.view_mut((0, 2 * n), (ne, nv)).copy_from(&d.g_p);
        g.view_mut((0, 2 * n + nv), (ne, nu)).copy_from(&d.g_u);
        g.view_mut((0, 2 * n + nv + nu), (ne, nw)).copy_from(&d.g_w);
        g.view_mut((0, 2 * n + nv + nu + nw), (ne, ne))
            .copy_from(&d.g_e);
        a.view_mut((o_e, 0), (ne, ns)).copy_from(&(g * &to_full));
    }
    // inputs
    let mut b = DMatrix::<f64>::zeros(ns, opts.inputs.len());
    for (j, inp) in opts.inputs.iter().enumerate() {
        match *inp {
            InputSel::ValveReference(i) => {
                b[(o_u + i, j)] = d.spool_uref[i]; // ∂U̇/∂U_ref of the spool law
            }
            InputSel::PumpSpeed(k) => {
                // the speed enters the flows (pressure rows) and the internal-state laws only
                b.view_mut((o_p, j), (nv, 1))
                    .copy_from(&d.h_speed.column(k));
                b.view_mut((o_e, j), (ne, 1))
                    .copy_from(&d.g_speed.column(k));
            }
            InputSel::CoordinateForce(k) => {
                let col = &m0inv * t0t.column(k);
                b.view_mut((o_v, j), (f, 1)).copy_from(&col);
            }
            InputSel::ElementSignal(i) => {
                // external loads: Q′ gains u·∂Q′/∂u, so the column is M0⁻¹ T0ᵀ ∂Q′/∂u
                let dq = DVector::from_vec(super::element_signal_force(model, pt, i)?);
                let col = &m0inv * (&t0t * dq);
                b.view_mut((o_v, j), (f, 1)).copy_from(&col);
            }
        }
    }
    let c = output_matrix(model, &opts.outputs, &d, &to_full);
    let mut states = state_names(model, &ai);
    let tail = states.split_off(2 * f);
    states.extend(ad.iter().map(|&k| model.axes[k].name.clone()));
    states.extend(tail);
    part.independent = ai;
    part.nonholonomic_dependent = ad;
    Ok(Linearization {
        ss: StateSpace {
            a,
            b,
            d: DMatrix::zeros(opts.outputs.len(), opts.inputs.len()),
            c,
            states,
            inputs: opts.inputs.iter().map(|&i| input_name(model, i)).collect(),
            outputs: opts
                .outputs
                .iter()
                .map(|&o| output_name(model, o))
                .collect(),
            to_full,
            n_full_coords: n,
            n_spurious_zero: l,
        },
        partition: part,
        t0,
        m0,
        derivatives: d,
    })
}

/// State names: independent coordinates, their rates, pressures, spools, friction states,
/// internal states of the elements.
pub fn state_names(model: &Model, independent: &[usize]) -> Vec<String> {
    let mut s: Vec<String> = independent
        .iter()
        .map(|&k| model.axes[k].name.clone())
        .collect();
    s.extend(
        independent
            .iter()
            .map(|&k| format!("{}.rate", model.axes[k].name)),
    );
    s.extend_from_slice(&model.layout.names[model.layout.p.clone()]);
    s.extend(
        super::valves(model)
            .iter()
            .map(|v| format!("{}.spool", v.name)),
    );
    s.extend(friction_state_names(model));
    s.extend(internal_state_names(model));
    s
}

/// The directional derivative of the model's own nonlinear right-hand side along the state
/// direction `x` (independent coordinates, their rates, pressures, spools, friction and internal
/// states), by central
/// differences of step `eps`: the check of A (ẋ = A x) against the nonlinear model.
///
/// At X⁰ ± εx the dependent coordinates are solved from Φ(z) = 0 with the independent ones held,
/// and the dependent rates from Φ_z ż = 0; the right-hand side is the index-1 one of
/// [`super::index1::rhs`] (valve references and input forces at `pt`). The result is
/// d/dε (ż_i, z̈_i, ż_ad, ṗ, U̇, ẇ, ė) = A x + O(ε²).
pub fn rhs_directional_derivative(
    model: &Model,
    pt: &OperatingPoint,
    lin: &Linearization,
    x: &[f64],
    eps: f64,
) -> Result<Vec<f64>, LinearizeError> {
    let (n, m, nv, nu) = (
        model.n_coords(),
        model.n_constraints(),
        model.n_volumes(),
        super::valves(model).len(),
    );
    let (nw, ne) = (model.n_friction_states(), model.layout.internal.len());
    let part = &lin.partition;
    let (ai, ad) = (&part.independent, &part.nonholonomic_dependent);
    let (f, l) = (ai.len(), ad.len());
    let u_ref: Vec<f64> = super::rhs_inputs(model, pt);
    let mut ev = super::evaluator_at::<f64>(model, pt.t_s);
    let mut eval = |sign: f64| -> Result<Vec<f64>, LinearizeError> {
        let mut z = pt.z.clone();
        for (c, &k) in ai.iter().enumerate() {
            z[k] += sign * eps * x[c];
        }
        for (c, &k) in ad.iter().enumerate() {
            z[k] += sign * eps * x[2 * f + c];
        }
        for it in 0..=50 {
            ev.positions(model, &z);
            let phi = DVector::from_column_slice(&ev.constraints.phi);
            if phi.norm() < 1e-14 {
                break;
            }
            if it == 50 {
                return Err(LinearizeError::LoopCannotClose {
                    held: "the independent coordinates".into(),
                    violation: phi.norm(),
                    iterations: it,
                });
            }
            let jac = DMatrix::from_row_slice(m, n, &ev.constraints.jac)
                .select_columns(part.dependent.iter());
            let dz = pinv_solve(&jac, &phi);
            for (i, &k) in part.dependent.iter().enumerate() {
                z[k] -= dz[i];
            }
        }
        let mut zd = pt.zd.clone();
        for (c, &k) in ai.iter().enumerate() {
            zd[k] += sign * eps * x[f + c];
        }
        // dependent rates (x_d and x_ad) from D ż = 0, D = [Φ_R; B] at the moved positions
        let dd: Vec<usize> = part.dependent.iter().chain(ad.iter()).copied().collect();
        if !dd.is_empty() {
            ev.kin.velocities(model, &zd);
            crate::mechanics::nonholonomic::evaluate(model, &ev.kin, &mut ev.nonholonomic);
            let l_all = model.n_nonholonomic();
            let mut dm = DMatrix::<f64>::zeros(m + l_all, n);
            dm.view_mut((0, 0), (m, n))
                .copy_from(&DMatrix::from_row_slice(m, n, &ev.constraints.jac));
            dm.view_mut((m, 0), (l_all, n))
                .copy_from(&DMatrix::from_row_slice(l_all, n, &ev.nonholonomic.b));
            let rows: Vec<usize> = part.rows.iter().copied().chain(m..m + l_all).collect();
            let dr = dm.select_rows(rows.iter());
            let zi = DVector::from_iterator(f, ai.iter().map(|&k| zd[k]));
            let rhs = -(dr.select_columns(ai.iter()) * zi);
            let zdep = lu_solve(
                &dr.select_columns(dd.iter()),
                &DMatrix::from_column_slice(rhs.len(), 1, rhs.as_slice()),
                "D_dd",
            )?;
            for (i, &k) in dd.iter().enumerate() {
                zd[k] = zdep[(i, 0)];
            }
        }
        let mut xx = Vec::with_capacity(2 * n + nv + nu + nw + ne);
        xx.extend_from_slice(&z);
        xx.extend_from_slice(&zd);
        for v in 0..nv {
            xx.push(pt.p[v] + sign * eps * x[2 * f + l + v]);
        }
        for i in 0..nu {
            xx.push(pt.spool[i] + sign * eps * x[2 * f + l + nv + i]);
        }
        for k in 0..nw {
            xx.push(pt.friction[k] + sign * eps * x[2 * f + l + nv + nu + k]);
        }
        for k in 0..ne {
            xx.push(pt.internal[k] + sign * eps * x[2 * f + l + nv + nu + nw + k]);
        }
        let full = rhs(model, &mut ev, &xx, &u_ref, &vec![0.0; n]);
        let mut out = Vec::with_capacity(2 * f + l + nv + nu + nw + ne);
        out.extend(ai.iter().map(|&k| full[k]));
        out.extend(ai.iter().map(|&k| full[n + k]));
        out.extend(ad.iter().map(|&k| full[k]));
        out.extend_from_slice(&full[2 * n..]);
        Ok(out)
    };
    let fp = eval(1.0)?;
    let fm = eval(-1.0)?;
    Ok(fp
        .iter()
        .zip(fm.iter())
        .map(|(a, b)| (a - b) / (2.0 * eps))
        .collect())
}

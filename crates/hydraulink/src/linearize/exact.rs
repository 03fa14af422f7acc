//! The exact linearization of 001 §3 (steps 1–7, eqs. 21–64; reference note 001 A.3), in the
//! simulator's relative coordinates z.
//!
//! Index-3 DAE (001 eqs. 9–13) with M = M′, Q = Q′ (semi-recursive, 000 eqs. 11–12):
//! ```text
//!   M(z) z̈ + Φ_zᵀ λ = Q(z, ż, p),   Φ(z) = 0,   ṗ = H(z, ż, p, U),   U̇ = (U_ref − U)/τ
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
//! With l nonholonomic rows B ż = 0 (`mechanics::nonholonomic`), D = [Φ_z; B] replaces Φ_z in
//! T0, V̄̄, Uₐ, Vₐ and the contraction; x_ad (l coordinates whose rates follow from B) become
//! states with ẋ_ad = U0^nh ẋ_ai + V0^{nh,ai} x̃_ai + V0^{nh,ad} x̃_ad, and A is the eq. 61 matrix
//! on (x_ai, ẋ_ai, x_ad, p, U) with l spurious zero eigenvalues (docs/theory 9.8).
//! (Uₐ, Vₐ are the paper's U, V of eqs. 38–40, renamed: note E.16.) Every derivative is exact:
//! one dual-number pass of the simulator's `Evaluator` per column of z, ż and p. The
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

use crate::assembly::Evaluator;
use crate::linalg::pinv_solve;
use crate::linearize::{
    input_name, output_name, partition, InputSel, LinearizeError, OperatingPoint, OutputSel,
    Partition, StateSpace,
};
use crate::model::Model;

/// Which one-sided derivative of the valve flow in U is used at U = 0 (note E.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpoolSide {
    /// The mean of both one-sided slopes.
    #[default]
    Average,
    /// U > 0 (P→A, B→T open).
    Positive,
    /// U < 0 (P→B, A→T open).
    Negative,
}

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

/// Exact first derivatives of every term of the equations at the reference (all n_full columns).
#[derive(Debug, Clone)]
pub struct Derivatives {
    /// M′ at z⁰ (n × n).
    pub mass: DMatrix<f64>,
    /// Q′ at the reference (n).
    pub force: DVector<f64>,
    /// Φ_z (m × n).
    pub jac: DMatrix<f64>,
    /// B (l × n) of the nonholonomic rows. The row-stacked matrices below (∂(Dż⁰)/∂z, …) have
    /// the m loop-closure rows first, then these l rows (D = [Φ_z; B], 001 eq. 14).
    pub b: DMatrix<f64>,
    /// Q_z, Q_ż (n × n), Q_p (n × n_v).
    pub q_z: DMatrix<f64>,
    /// Q_ż.
    pub q_zd: DMatrix<f64>,
    /// Q_p.
    pub q_p: DMatrix<f64>,
    /// ∂(M z̈⁰)/∂z (n × n).
    pub mzdd_z: DMatrix<f64>,
    /// ∂(Dᵀ Λ⁰)/∂z (n × n): the multiplier-contracted constraint Hessian (with B rows).
    pub jtl_z: DMatrix<f64>,
    /// ∂(D ż⁰)/∂z ((m + l) × n).
    pub jzd_z: DMatrix<f64>,
    /// ∂(D z̈⁰)/∂z ((m + l) × n).
    pub jzdd_z: DMatrix<f64>,
    /// ∂d/∂z, ∂d/∂ż with d = Ḋ ż ((m + l) × n).
    pub d_z: DMatrix<f64>,
    /// ∂d/∂ż.
    pub d_zd: DMatrix<f64>,
    /// H_z, H_ż (n_v × n), H_p (n_v × n_v), H_U (n_v × n_u).
    pub h_z: DMatrix<f64>,
    /// H_ż.
    pub h_zd: DMatrix<f64>,
    /// H_p.
    pub h_p: DMatrix<f64>,
    /// H_U.
    pub h_u: DMatrix<f64>,
    /// Cylinder length and force rows: ∂s/∂z (n_c × n), ∂F/∂z, ∂F/∂ż, ∂F/∂p.
    pub s_z: DMatrix<f64>,
    /// ∂F/∂z.
    pub f_z: DMatrix<f64>,
    /// ∂F/∂ż.
    pub f_zd: DMatrix<f64>,
    /// ∂F/∂p.
    pub f_p: DMatrix<f64>,
    /// Λ⁰ used in the contraction (m loop-closure multipliers, then l nonholonomic ones).
    pub lambda: DVector<f64>,
}

/// Which variable a dual pass seeds.
#[derive(Clone, Copy)]
enum Seed {
    Z(usize),
    Zd(usize),
    P(usize),
}

/// Exact derivatives at `pt` (one dual pass per column of z, ż and p).
pub fn derivatives(
    model: &Model,
    pt: &OperatingPoint,
    side: SpoolSide,
    ev: &mut Evaluator<Dual64>,
) -> Derivatives {
    let (n, m, nv, nc, nu) = (
        model.n_coords(),
        model.n_constraints(),
        model.n_volumes(),
        model.hydraulics.cylinders.len(),
        model.hydraulics.valves.len(),
    );
    let mut ef = Evaluator::<f64>::new(model);
    ef.evaluate(model, &pt.z, &pt.zd, &pt.p, &pt.spool, true);
    let mass = DMatrix::from_row_slice(n, n, &ef.dynamics.mass);
    let force = DVector::from_column_slice(&ef.dynamics.force);
    let jac = DMatrix::from_row_slice(m, n, &ef.constraints.jac);
    let l = model.n_nonholonomic();
    let b = DMatrix::from_row_slice(l, n, &ef.nonholonomic.b);
    let zdd0 = DVector::from_column_slice(&pt.zdd);
    // Λ⁰: Dᵀ Λ = Q − M z̈⁰ with D = [Φ_z; B] (least squares)
    let lambda = if m + l > 0 {
        let mut d = DMatrix::<f64>::zeros(m + l, n);
        d.view_mut((0, 0), (m, n)).copy_from(&jac);
        d.view_mut((m, 0), (l, n)).copy_from(&b);
        pinv_solve(&d.transpose(), &(&force - &mass * &zdd0))
    } else {
        DVector::zeros(0)
    };
    let mut d = Derivatives {
        mass,
        force,
        jac,
        b,
        q_z: DMatrix::zeros(n, n),
        q_zd: DMatrix::zeros(n, n),
        q_p: DMatrix::zeros(n, nv),
        mzdd_z: DMatrix::zeros(n, n),
        jtl_z: DMatrix::zeros(n, n),
        jzd_z: DMatrix::zeros(m + l, n),
        jzdd_z: DMatrix::zeros(m + l, n),
        d_z: DMatrix::zeros(m + l, n),
        d_zd: DMatrix::zeros(m + l, n),
        h_z: DMatrix::zeros(nv, n),
        h_zd: DMatrix::zeros(nv, n),
        h_p: DMatrix::zeros(nv, nv),
        h_u: DMatrix::zeros(nv, nu),
        s_z: DMatrix::zeros(nc, n),
        f_z: DMatrix::zeros(nc, n),
        f_zd: DMatrix::zeros(nc, n),
        f_p: DMatrix::zeros(nc, nv),
        lambda,
    };
    let mut z: Vec<Dual64> = pt.z.iter().map(|&x| Dual64::from(x)).collect();
    let mut zd: Vec<Dual64> = pt.zd.iter().map(|&x| Dual64::from(x)).collect();
    let mut p: Vec<Dual64> = pt.p.iter().map(|&x| Dual64::from(x)).collect();
    let seeds = (0..n)
        .map(Seed::Z)
        .chain((0..n).map(Seed::Zd))
        .chain((0..nv).map(Seed::P));
    for seed in seeds {
        let slot = match seed {
            Seed::Z(j) => &mut z[j],
            Seed::Zd(j) => &mut zd[j],
            Seed::P(j) => &mut p[j],
        };
        slot.eps = 1.0;
        ev.evaluate(model, &z, &zd, &p, &pt.spool, true);
        match seed {
            Seed::Z(j) => z[j].eps = 0.0,
            Seed::Zd(j) => zd[j].eps = 0.0,
            Seed::P(j) => p[j].eps = 0.0,
        }
        let c = &ev.constraints;
        match seed {
            Seed::Z(j) => {
                for i in 0..n {
                    d.q_z[(i, j)] = ev.dynamics.force[i].eps;
                    let mut mz = 0.0;
                    for k in 0..n {
                        mz += ev.dynamics.mass[i * n + k].eps * pt.zdd[k];
                    }
                    d.mzdd_z[(i, j)] = mz;
                    let mut jl = 0.0;
                    for r in 0..m {
                        jl += c.jac[r * n + i].eps * d.lambda[r];
                    }
                    for r in 0..l {
                        jl += ev.nonholonomic.b[r * n + i].eps * d.lambda[m + r];
                    }
                    d.jtl_z[(i, j)] = jl;
                }
                for r in 0..m {
                    let (mut a, mut b) = (0.0, 0.0);
                    for k in 0..n {
                        a += c.jac[r * n + k].eps * pt.zd[k];
                        b += c.jac[r * n + k].eps * pt.zdd[k];
                    }
                    d.jzd_z[(r, j)] = a;
                    d.jzdd_z[(r, j)] = b;
                    d.d_z[(r, j)] = c.acc0[r].eps;
                }
                let nh = &ev.nonholonomic;
                for r in 0..l {
                    let (mut a, mut bb) = (0.0, 0.0);
                    for k in 0..n {
                        a += nh.b[r * n + k].eps * pt.zd[k];
                        bb += nh.b[r * n + k].eps * pt.zdd[k];
                    }
                    d.jzd_z[(m + r, j)] = a;
                    d.jzdd_z[(m + r, j)] = bb;
                    d.d_z[(m + r, j)] = nh.acc0[r].eps;
                }
                for v in 0..nv {
                    d.h_z[(v, j)] = ev.h[v].eps;
                }
                for cy in 0..nc {
                    d.s_z[(cy, j)] = ev.motion[cy].s.eps;
                    d.f_z[(cy, j)] = ev.cylinder_force[cy].eps;
                }
            }
            Seed::Zd(j) => {
                for i in 0..n {
                    d.q_zd[(i, j)] = ev.dynamics.force[i].eps;
                }
                for r in 0..m {
                    d.d_zd[(r, j)] = c.acc0[r].eps;
                }
                for r in 0..l {
                    d.d_zd[(m + r, j)] = ev.nonholonomic.acc0[r].eps;
                }
                for v in 0..nv {
                    d.h_zd[(v, j)] = ev.h[v].eps;
                }
                for cy in 0..nc {
                    d.f_zd[(cy, j)] = ev.cylinder_force[cy].eps;
                }
            }
            Seed::P(j) => {
                for i in 0..n {
                    d.q_p[(i, j)] = ev.dynamics.force[i].eps;
                }
                for v in 0..nv {
                    d.h_p[(v, j)] = ev.h[v].eps;
                }
                for cy in 0..nc {
                    d.f_p[(cy, j)] = ev.cylinder_force[cy].eps;
                }
            }
        }
    }
    // H_U: one-sided differences (H is linear in U on each side of 0, note E.6)
    let h0 = ef.h.clone();
    let mut spool = pt.spool.clone();
    for i in 0..nu {
        let u0 = pt.spool[i];
        let du = 1e-3 * u0.abs().max(1.0);
        let slope = |delta: f64, ef: &mut Evaluator<f64>, spool: &mut Vec<f64>| {
            spool[i] = u0 + delta;
            ef.evaluate(model, &pt.z, &pt.zd, &pt.p, spool, false);
            spool[i] = u0;
            ef.h.iter()
                .zip(h0.iter())
                .map(|(a, b)| (a - b) / delta)
                .collect::<Vec<f64>>()
        };
        let col = match side {
            SpoolSide::Positive => slope(du, &mut ef, &mut spool),
            SpoolSide::Negative => slope(-du, &mut ef, &mut spool),
            SpoolSide::Average => {
                let a = slope(du, &mut ef, &mut spool);
                let b = slope(-du, &mut ef, &mut spool);
                a.iter().zip(b.iter()).map(|(x, y)| 0.5 * (x + y)).collect()
            }
        };
        for v in 0..nv {
            d.h_u[(v, i)] = col[v];
        }
    }
    d
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
    let (n, m, nv, nu, l) = (
        model.n_coords(),
        model.n_constraints(),
        model.n_volumes(),
        model.hydraulics.valves.len(),
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
            let sv = crate::linalg::singular_values(&bbar.select_columns(trial.iter()));
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
    // state (z_ai, ż_ai, z_ad, p, U): offsets
    let (o_v, o_ad, o_p, o_u) = (f, 2 * f, 2 * f + l, 2 * f + l + nv);
    let ns = o_u + nu;
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
    a.view_mut((o_ad, 0), (l, f)).copy_from(&v0nh_ai);
    a.view_mut((o_ad, o_v), (l, f)).copy_from(&u0nh);
    a.view_mut((o_ad, o_ad), (l, l)).copy_from(&v0nh_ad);
    a.view_mut((o_p, 0), (nv, f)).copy_from(&(&h0 * &v0h_ai));
    a.view_mut((o_p, o_v), (nv, f)).copy_from(&(&d.h_zd * &t0));
    a.view_mut((o_p, o_ad), (nv, l)).copy_from(&(&h0 * &v0h_ad));
    a.view_mut((o_p, o_p), (nv, nv)).copy_from(&d.h_p);
    a.view_mut((o_p, o_u), (nv, nu)).copy_from(&d.h_u);
    for (i, v) in model.hydraulics.valves.iter().enumerate() {
        a[(o_u + i, o_u + i)] = -1.0 / v.time_constant_s; // eq. 56
    }
    // inputs
    let mut b = DMatrix::<f64>::zeros(ns, opts.inputs.len());
    for (j, inp) in opts.inputs.iter().enumerate() {
        match *inp {
            InputSel::ValveReference(i) => {
                b[(o_u + i, j)] = 1.0 / model.hydraulics.valves[i].time_constant_s;
            }
            InputSel::CoordinateForce(k) => {
                let col = &m0inv * t0t.column(k);
                b.view_mut((o_v, j), (f, 1)).copy_from(&col);
            }
        }
    }
    // map to the full variable set: z̃ = V0^{h,ai} z̃_ai + V0^{h,ad} z̃_ad,
    // ż̃ = T0 ż̃_ai + V̄̄ z̃ (eq. 35)
    let nfull = 2 * n + nv + nu;
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
        .view_mut((2 * n, o_p), (nv + nu, nv + nu))
        .fill_with_identity();
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

/// State names: independent coordinates, their rates, pressures, spools.
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
    s.extend(model.volume_names.iter().map(|v| format!("{v}.p")));
    s.extend(
        model
            .hydraulics
            .valves
            .iter()
            .map(|v| format!("{}.spool", v.name)),
    );
    s
}

/// C = (output rows over the full variables (z̃, ż̃, p̃, Ũ)) · `to_full`.
pub fn output_matrix(
    model: &Model,
    outputs: &[OutputSel],
    d: &Derivatives,
    to_full: &DMatrix<f64>,
) -> DMatrix<f64> {
    let (n, nv) = (model.n_coords(), model.n_volumes());
    let nfull = to_full.nrows();
    let mut g = DMatrix::<f64>::zeros(outputs.len(), nfull);
    for (i, o) in outputs.iter().enumerate() {
        match *o {
            OutputSel::Coordinate(k) => g[(i, k)] = 1.0,
            OutputSel::Rate(k) => g[(i, n + k)] = 1.0,
            OutputSel::Pressure(v) => g[(i, 2 * n + v)] = 1.0,
            OutputSel::Spool(s) => g[(i, 2 * n + nv + s)] = 1.0,
            OutputSel::CylinderLength(c) => {
                g.view_mut((i, 0), (1, n)).copy_from(&d.s_z.row(c));
            }
            OutputSel::CylinderForce(c) => {
                g.view_mut((i, 0), (1, n)).copy_from(&d.f_z.row(c));
                g.view_mut((i, n), (1, n)).copy_from(&d.f_zd.row(c));
                g.view_mut((i, 2 * n), (1, nv)).copy_from(&d.f_p.row(c));
            }
        }
    }
    g * to_full
}

/// The directional derivative of the model's own nonlinear right-hand side along the state
/// direction `x` (independent coordinates, their rates, pressures, spools), by central
/// differences of step `eps`: the check of A (ẋ = A x) against the nonlinear model.
///
/// At X⁰ ± εx the dependent coordinates are solved from Φ(z) = 0 with the independent ones held,
/// and the dependent rates from Φ_z ż = 0; the right-hand side is the index-1 one of
/// [`super::finite_difference::rhs`] (valve references and input forces at `pt`). The result is
/// d/dε (ż_i, z̈_i, ṗ, U̇) = A x + O(ε²).
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
        model.hydraulics.valves.len(),
    );
    let part = &lin.partition;
    let (ai, ad) = (&part.independent, &part.nonholonomic_dependent);
    let (f, l) = (ai.len(), ad.len());
    let u_ref: Vec<f64> = super::valve_references(model, pt.t_s);
    let mut ev = Evaluator::<f64>::new(model);
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
        let mut xx = Vec::with_capacity(2 * n + nv + nu);
        xx.extend_from_slice(&z);
        xx.extend_from_slice(&zd);
        for v in 0..nv {
            xx.push(pt.p[v] + sign * eps * x[2 * f + l + v]);
        }
        for i in 0..nu {
            xx.push(pt.spool[i] + sign * eps * x[2 * f + l + nv + i]);
        }
        let full = super::finite_difference::rhs(model, &mut ev, &xx, &u_ref, &vec![0.0; n]);
        let mut out = Vec::with_capacity(2 * f + l + nv + nu);
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

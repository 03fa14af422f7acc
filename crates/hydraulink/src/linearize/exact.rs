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
    /// Q_z, Q_ż (n × n), Q_p (n × n_v).
    pub q_z: DMatrix<f64>,
    /// Q_ż.
    pub q_zd: DMatrix<f64>,
    /// Q_p.
    pub q_p: DMatrix<f64>,
    /// ∂(M z̈⁰)/∂z (n × n).
    pub mzdd_z: DMatrix<f64>,
    /// ∂(Φ_zᵀ λ⁰)/∂z (n × n): the multiplier-contracted constraint Hessian.
    pub jtl_z: DMatrix<f64>,
    /// ∂(Φ_z ż⁰)/∂z (m × n).
    pub jzd_z: DMatrix<f64>,
    /// ∂(Φ_z z̈⁰)/∂z (m × n).
    pub jzdd_z: DMatrix<f64>,
    /// ∂d/∂z, ∂d/∂ż with d = Φ̇_z ż (m × n).
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
    /// λ⁰ used in the contraction.
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
    let zdd0 = DVector::from_column_slice(&pt.zdd);
    // λ⁰: Φ_zᵀ λ = Q − M z̈⁰ (least squares)
    let lambda = if m > 0 {
        pinv_solve(&jac.transpose(), &(&force - &mass * &zdd0))
    } else {
        DVector::zeros(0)
    };
    let mut d = Derivatives {
        mass,
        force,
        jac,
        q_z: DMatrix::zeros(n, n),
        q_zd: DMatrix::zeros(n, n),
        q_p: DMatrix::zeros(n, nv),
        mzdd_z: DMatrix::zeros(n, n),
        jtl_z: DMatrix::zeros(n, n),
        jzd_z: DMatrix::zeros(m, n),
        jzdd_z: DMatrix::zeros(m, n),
        d_z: DMatrix::zeros(m, n),
        d_zd: DMatrix::zeros(m, n),
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
    let (n, nv, nu) = (
        model.n_coords(),
        model.n_volumes(),
        model.hydraulics.valves.len(),
    );
    let d = derivatives(model, pt, opts.spool_side, ev);
    let part = partition(&d.jac, &opts.independent);
    let f = part.independent.len();
    let r = part.dependent.len();
    // T0 = [I; −Φ_d⁻¹ Φ_i] in the original coordinate order (eq. 31)
    let jr = d.jac.select_rows(part.rows.iter());
    let phi_d = jr.select_columns(part.dependent.iter());
    let phi_i = jr.select_columns(part.independent.iter());
    let mut t0 = DMatrix::<f64>::zeros(n, f);
    for (c, &k) in part.independent.iter().enumerate() {
        t0[(k, c)] = 1.0;
    }
    // scatter the dependent rows −Φ_d⁻¹ X into an n-row matrix with zero independent rows
    let dep_rows = |x: &DMatrix<f64>, what: &str| -> Result<DMatrix<f64>, LinearizeError> {
        let y = lu_solve(&phi_d, &x.select_rows(part.rows.iter()), what)?;
        let mut out = DMatrix::<f64>::zeros(n, x.ncols());
        for (i, &k) in part.dependent.iter().enumerate() {
            out.row_mut(k).copy_from(&(-y.row(i)));
        }
        Ok(out)
    };
    if r > 0 {
        let td = lu_solve(&phi_d, &phi_i, "Φ_d")?;
        for (i, &k) in part.dependent.iter().enumerate() {
            t0.row_mut(k).copy_from(&(-td.row(i)));
        }
    }
    let (vbb, ua, va) = if r > 0 {
        (
            dep_rows(&d.jzd_z, "Φ_d")?,              // V̄̄ (eqs. 34–35)
            dep_rows(&d.d_zd, "Φ_d")?,               // Uₐ (eq. 39)
            dep_rows(&(&d.jzdd_z + &d.d_z), "Φ_d")?, // Vₐ (eq. 40)
        )
    } else {
        (
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, n),
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
    let ns = 2 * f + nv + nu;
    let mut a = DMatrix::<f64>::zeros(ns, ns);
    // eq. 64
    a.view_mut((0, f), (f, f)).fill_with_identity();
    a.view_mut((f, 0), (f, f))
        .copy_from(&(&m0inv * (&r0 * &vbb + &s0) * &t0));
    a.view_mut((f, f), (f, f)).copy_from(&(&m0inv * &r0 * &t0));
    a.view_mut((f, 2 * f), (f, nv))
        .copy_from(&(&m0inv * &t0t * &d.q_p));
    a.view_mut((2 * f, 0), (nv, f)).copy_from(&(&h0 * &t0));
    a.view_mut((2 * f, f), (nv, f)).copy_from(&(&d.h_zd * &t0));
    a.view_mut((2 * f, 2 * f), (nv, nv)).copy_from(&d.h_p);
    a.view_mut((2 * f, 2 * f + nv), (nv, nu)).copy_from(&d.h_u);
    for (i, v) in model.hydraulics.valves.iter().enumerate() {
        a[(2 * f + nv + i, 2 * f + nv + i)] = -1.0 / v.time_constant_s; // eq. 56
    }
    // inputs
    let mut b = DMatrix::<f64>::zeros(ns, opts.inputs.len());
    for (j, inp) in opts.inputs.iter().enumerate() {
        match *inp {
            InputSel::ValveReference(i) => {
                b[(2 * f + nv + i, j)] = 1.0 / model.hydraulics.valves[i].time_constant_s;
            }
            InputSel::CoordinateForce(k) => {
                let col = &m0inv * t0t.column(k);
                b.view_mut((f, j), (f, 1)).copy_from(&col);
            }
        }
    }
    // map to the full variable set: z̃ = T0 z̃_i, ż̃ = T0 ż̃_i + V̄̄ T0 z̃_i (eq. 35)
    let nfull = 2 * n + nv + nu;
    let mut to_full = DMatrix::<f64>::zeros(nfull, ns);
    to_full.view_mut((0, 0), (n, f)).copy_from(&t0);
    to_full.view_mut((n, 0), (n, f)).copy_from(&(&vbb * &t0));
    to_full.view_mut((n, f), (n, f)).copy_from(&t0);
    to_full
        .view_mut((2 * n, 2 * f), (nv + nu, nv + nu))
        .fill_with_identity();
    let c = output_matrix(model, &opts.outputs, &d, &to_full);
    let states = state_names(model, &part.independent);
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
            n_spurious_zero: 0,
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
    let f = part.independent.len();
    let u_ref: Vec<f64> = model
        .hydraulics
        .valves
        .iter()
        .map(|v| model.inputs[v.input].value(pt.t_s))
        .collect();
    let mut ev = Evaluator::<f64>::new(model);
    let mut eval = |sign: f64| -> Result<Vec<f64>, LinearizeError> {
        let mut z = pt.z.clone();
        for (c, &k) in part.independent.iter().enumerate() {
            z[k] += sign * eps * x[c];
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
        let jac = DMatrix::from_row_slice(m, n, &ev.constraints.jac);
        let mut zd = pt.zd.clone();
        for (c, &k) in part.independent.iter().enumerate() {
            zd[k] += sign * eps * x[f + c];
        }
        if !part.dependent.is_empty() {
            let jr = jac.select_rows(part.rows.iter());
            let zi = DVector::from_iterator(f, part.independent.iter().map(|&k| zd[k]));
            let rhs = -(jr.select_columns(part.independent.iter()) * zi);
            let zdep = lu_solve(
                &jr.select_columns(part.dependent.iter()),
                &DMatrix::from_column_slice(rhs.len(), 1, rhs.as_slice()),
                "Φ_d",
            )?;
            for (i, &k) in part.dependent.iter().enumerate() {
                zd[k] = zdep[(i, 0)];
            }
        }
        let mut xx = Vec::with_capacity(2 * n + nv + nu);
        xx.extend_from_slice(&z);
        xx.extend_from_slice(&zd);
        for v in 0..nv {
            xx.push(pt.p[v] + sign * eps * x[2 * f + v]);
        }
        for i in 0..nu {
            xx.push(pt.spool[i] + sign * eps * x[2 * f + nv + i]);
        }
        let full = super::finite_difference::rhs(model, &mut ev, &xx, &u_ref, &vec![0.0; n]);
        let mut out = Vec::with_capacity(2 * f + nv + nu);
        out.extend(part.independent.iter().map(|&k| full[k]));
        out.extend(part.independent.iter().map(|&k| full[n + k]));
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

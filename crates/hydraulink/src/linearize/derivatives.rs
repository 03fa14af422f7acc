//! Exact first derivatives of every term of the equations at a reference point, shared by the
//! exact method (`exact.rs`) and the output rows of the finite-difference one
//! (`finite_difference.rs`); it imports neither.
//!
//! ```text
//!   M z̈ + Dᵀ Λ = Q(z, ż, p, w, e),   ṗ = H(z, ż, p, U, w, e),   U̇ = f_U(U, U_ref),
//!   ẇ = u(z, ż, w),   ė = g(z, ż, p, U, e)
//!   columns of z, ż, p, w, e: one dual-number pass of the simulator's `Evaluator` each
//!   H_U, g_U: one-sided differences on the side chosen by [`SpoolSide`] (note 001 E.6)
//!   H_ω, g_ω: central differences in each pump's held shaft speed ω (the B column of
//!          `InputSel::PumpSpeed`); the flow law is affine in ω (exact up to rounding) but
//!          for a power limiter, whose ε_P ∝ 1/ω is smooth (O(h²) error)
//!   f_U:   `Element::position_rate` (the 4/3 valve's `valve_4_3::spool_rate`), the step's
//!          spool law, in dual numbers
//! ```
//! e are the elements' internal states (`Layout::internal`; the relief valve's poppet opening),
//! g their rates from the element's own law (`PortEffort::internal_rate`) in dual numbers: the
//! e column carries ∂/∂e into the flows (H_e) and into g (g_e), the p columns ∂/∂p into g.
//! w are the friction states (LuGre bristle q, modified-LuGre q and film h; 003 Pub II
//! eqs. 25–34). Their laws contain |v|, kinked at v = 0: a friction element at rest has no
//! derivative in its velocity v, only two one-sided ones (num-dual takes the side from the sign
//! bit of the zero). As for the closed spool (`SpoolSide::Average`), the linearization takes
//! their mean there: the |v| terms drop out, and the seal at rest is the pre-sliding spring–damper
//! q̇ = v, F_μ = σ0 q + (σ1 + σ2) v (003 Pub II eqs. 25, 27 without |v|). The mean is what central
//! differences of the nonlinear right-hand side see, so A agrees with them (tests/linearize.rs).

use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;

use crate::elements::element::Element;
use crate::elements::hydraulics::cylinder;
use crate::linearize::{friction_elements, FrictionPort, OperatingPoint, OutputSel};
use crate::mechanics::assembly::Evaluator;
use crate::model::Model;
use crate::solver::linalg::pinv_solve;

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
    /// Q_w (n × n_w): generalized forces against the friction states.
    pub q_w: DMatrix<f64>,
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
    /// H_z, H_ż (n_v × n), H_p (n_v × n_v), H_U (n_v × n_u), H_w (n_v × n_w).
    pub h_z: DMatrix<f64>,
    /// H_ż.
    pub h_zd: DMatrix<f64>,
    /// H_p.
    pub h_p: DMatrix<f64>,
    /// H_U.
    pub h_u: DMatrix<f64>,
    /// H_w.
    pub h_w: DMatrix<f64>,
    /// H_ω (n_v × n_pumps): pressure rates against the pumps' shaft speeds [Pa/rad].
    pub h_speed: DMatrix<f64>,
    /// g_ω (n_e × n_pumps): internal-state rates against the pumps' shaft speeds.
    pub g_speed: DMatrix<f64>,
    /// Spool law partials ∂U̇_i/∂U_i [1/s] (diagonal; `valve_4_3::spool_rate`).
    pub spool_u: DVector<f64>,
    /// Spool law partials ∂U̇_i/∂U_ref,i [1/s].
    pub spool_uref: DVector<f64>,
    /// Friction-state rates ẇ = u: u_z, u_ż (n_w × n), u_p (n_w × n_v), u_w (n_w × n_w).
    pub u_z: DMatrix<f64>,
    /// u_ż.
    pub u_zd: DMatrix<f64>,
    /// u_p (the efficiency law is the only one that reads p; it has no states, so this is 0).
    pub u_p: DMatrix<f64>,
    /// u_w.
    pub u_w: DMatrix<f64>,
    /// Q_e (n × n_e): generalized forces against the elements' internal states.
    pub q_e: DMatrix<f64>,
    /// H_e (n_v × n_e): pressure rates against the internal states (the flows pass them).
    pub h_e: DMatrix<f64>,
    /// u_e (n_w × n_e): friction-state rates against the internal states.
    pub u_e: DMatrix<f64>,
    /// Internal-state rates ė = g: g_z, g_ż (n_e × n), g_p (n_e × n_v), g_U (n_e × n_u, one-sided
    /// like H_U), g_w (n_e × n_w), g_e (n_e × n_e) [unit of the state / s per unit].
    pub g_z: DMatrix<f64>,
    /// g_ż.
    pub g_zd: DMatrix<f64>,
    /// g_p.
    pub g_p: DMatrix<f64>,
    /// g_U.
    pub g_u: DMatrix<f64>,
    /// g_w.
    pub g_w: DMatrix<f64>,
    /// g_e.
    pub g_e: DMatrix<f64>,
    /// Cylinder length and force rows: ∂s/∂z (n_c × n), ∂F/∂z, ∂F/∂ż, ∂F/∂p, ∂F/∂w.
    pub s_z: DMatrix<f64>,
    /// ∂F/∂z.
    pub f_z: DMatrix<f64>,
    /// ∂F/∂ż.
    pub f_zd: DMatrix<f64>,
    /// ∂F/∂p.
    pub f_p: DMatrix<f64>,
    /// ∂F/∂w.
    pub f_w: DMatrix<f64>,
    /// ∂F/∂e.
    pub f_e: DMatrix<f64>,
    /// Λ⁰ used in the contraction (m loop-closure multipliers, then l nonholonomic ones).
    pub lambda: DVector<f64>,
}

/// Which variable a dual pass seeds.
#[derive(Clone, Copy)]
enum Seed {
    Z(usize),
    Zd(usize),
    P(usize),
    W(usize),
    E(usize),
}

/// ∂/∂v of (F_μ, u_1, u_2) of one friction law at velocity `v` (its sign bit picks the side at
/// v = 0), with the states `w` and the hydraulic force `f_hyd` held.
fn friction_velocity_slopes(
    law: &crate::model::Friction,
    f_hyd: f64,
    v: f64,
    w: &[f64],
) -> [f64; 3] {
    let k = w.len();
    let vd = Dual64::new(v, 1.0);
    let wd: Vec<Dual64> = w.iter().map(|&x| Dual64::from(x)).collect();
    let mut rates = [Dual64::from(0.0); 2];
    let f = crate::elements::friction::force(law, Dual64::from(f_hyd), vd, &wd);
    crate::elements::friction::rates(law, vd, &wd, &mut rates[..k]);
    [f.eps, rates[0].eps, rates[1].eps]
}

/// Exact derivatives at `pt` (one dual pass per column of z, ż, p, w and e; see the module doc).
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
        model.n_cylinders(),
        super::valves(model).len(),
    );
    let nw = model.n_friction_states();
    let n_int = model.layout.internal.len();
    super::set_element_time(model, ev, pt.t_s);
    let mut ef = super::evaluator_at::<f64>(model, pt.t_s);
    ef.fstate.copy_from_slice(&pt.friction);
    ef.internal.copy_from_slice(&pt.internal);
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
        q_w: DMatrix::zeros(n, nw),
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
        h_w: DMatrix::zeros(nv, nw),
        h_speed: DMatrix::zeros(nv, pt.spool.len() - nu),
        g_speed: DMatrix::zeros(n_int, pt.spool.len() - nu),
        spool_u: DVector::zeros(nu),
        spool_uref: DVector::zeros(nu),
        u_z: DMatrix::zeros(nw, n),
        u_zd: DMatrix::zeros(nw, n),
        u_p: DMatrix::zeros(nw, nv),
        u_w: DMatrix::zeros(nw, nw),
        q_e: DMatrix::zeros(n, n_int),
        h_e: DMatrix::zeros(nv, n_int),
        u_e: DMatrix::zeros(nw, n_int),
        g_z: DMatrix::zeros(n_int, n),
        g_zd: DMatrix::zeros(n_int, n),
        g_p: DMatrix::zeros(n_int, nv),
        g_u: DMatrix::zeros(n_int, nu),
        g_w: DMatrix::zeros(n_int, nw),
        g_e: DMatrix::zeros(n_int, n_int),
        s_z: DMatrix::zeros(nc, n),
        f_z: DMatrix::zeros(nc, n),
        f_zd: DMatrix::zeros(nc, n),
        f_p: DMatrix::zeros(nc, nv),
        f_w: DMatrix::zeros(nc, nw),
        f_e: DMatrix::zeros(nc, n_int),
        lambda,
    };
    let elements = friction_elements(model);
    let ne = elements.len();
    // ∂v_e/∂z_j and ∂v_e/∂ż_j of every friction element's velocity (for the mean at v = 0)
    let mut v_z = DMatrix::<f64>::zeros(ne, n);
    let mut v_zd = DMatrix::<f64>::zeros(ne, n);
    let mut v_re = vec![0.0; ne];
    let mut z: Vec<Dual64> = pt.z.iter().map(|&x| Dual64::from(x)).collect();
    let mut zd: Vec<Dual64> = pt.zd.iter().map(|&x| Dual64::from(x)).collect();
    let mut p: Vec<Dual64> = pt.p.iter().map(|&x| Dual64::from(x)).collect();
    let w0: Vec<Dual64> = pt.friction.iter().map(|&x| Dual64::from(x)).collect();
    let e0: Vec<Dual64> = pt.internal.iter().map(|&x| Dual64::from(x)).collect();
    let seeds = (0..n)
        .map(Seed::Z)
        .chain((0..n).map(Seed::Zd))
        .chain((0..nv).map(Seed::P))
        .chain((0..nw).map(Seed::W))
        .chain((0..n_int).map(Seed::E));
    for seed in seeds {
        ev.fstate.copy_from_slice(&w0);
        ev.internal.copy_from_slice(&e0);
        match seed {
            Seed::Z(j) => z[j].eps = 1.0,
            Seed::Zd(j) => zd[j].eps = 1.0,
            Seed::P(j) => p[j].eps = 1.0,
            Seed::W(j) => ev.fstate[j].eps = 1.0,
            Seed::E(j) => ev.internal[j].eps = 1.0,
        }
        ev.evaluate(model, &z, &zd, &p, &pt.spool, true);
        match seed {
            Seed::Z(j) => z[j].eps = 0.0,
            Seed::Zd(j) => zd[j].eps = 0.0,
            Seed::P(j) => p[j].eps = 0.0,
            Seed::W(_) | Seed::E(_) => {}
        }
        let velocity = |ev: &Evaluator<Dual64>, port: FrictionPort| match port {
            FrictionPort::Cylinder(c) => ev.motion[c].sd,
            FrictionPort::Joint { j, .. } => ev.joint_velocity[j],
        };
        for (e, el) in elements.iter().enumerate() {
            v_re[e] = velocity(ev, el.port).re;
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
                for k in 0..nw {
                    d.u_z[(k, j)] = ev.fstate_rate[k].eps;
                }
                for k in 0..n_int {
                    d.g_z[(k, j)] = ev.internal_rate[k].eps;
                }
                for (e, el) in elements.iter().enumerate() {
                    v_z[(e, j)] = velocity(ev, el.port).eps;
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
                for k in 0..nw {
                    d.u_zd[(k, j)] = ev.fstate_rate[k].eps;
                }
                for k in 0..n_int {
                    d.g_zd[(k, j)] = ev.internal_rate[k].eps;
                }
                for (e, el) in elements.iter().enumerate() {
                    v_zd[(e, j)] = velocity(ev, el.port).eps;
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
                for k in 0..nw {
                    d.u_p[(k, j)] = ev.fstate_rate[k].eps;
                }
                for k in 0..n_int {
                    d.g_p[(k, j)] = ev.internal_rate[k].eps;
                }
            }
            Seed::W(j) => {
                for i in 0..n {
                    d.q_w[(i, j)] = ev.dynamics.force[i].eps;
                }
                for v in 0..nv {
                    d.h_w[(v, j)] = ev.h[v].eps;
                }
                for cy in 0..nc {
                    d.f_w[(cy, j)] = ev.cylinder_force[cy].eps;
                }
                for k in 0..nw {
                    d.u_w[(k, j)] = ev.fstate_rate[k].eps;
                }
                for k in 0..n_int {
                    d.g_w[(k, j)] = ev.internal_rate[k].eps;
                }
            }
            Seed::E(j) => {
                for i in 0..n {
                    d.q_e[(i, j)] = ev.dynamics.force[i].eps;
                }
                for v in 0..nv {
                    d.h_e[(v, j)] = ev.h[v].eps;
                }
                for cy in 0..nc {
                    d.f_e[(cy, j)] = ev.cylinder_force[cy].eps;
                }
                for k in 0..nw {
                    d.u_e[(k, j)] = ev.fstate_rate[k].eps;
                }
                for k in 0..n_int {
                    d.g_e[(k, j)] = ev.internal_rate[k].eps;
                }
            }
        }
    }
    // friction elements at rest: the mean of the one-sided slopes in v (module doc). The dual
    // passes took the side of the sign bit of v⁰ = ±0; replace that slope by the mean, through
    // the chain rule ∂/∂x = (∂/∂v)(∂v/∂x) on every column that moves v.
    for (e, el) in elements.iter().enumerate() {
        if v_re[e] != 0.0 {
            continue;
        }
        let w = &pt.friction[el.states.clone()];
        let f_hyd = match el.port {
            FrictionPort::Cylinder(c) => {
                let cyl = model.cylinder(c);
                cylinder::hydraulic_force(cyl, pt.p[cyl.vol_a.0], pt.p[cyl.vol_b.0])
            }
            FrictionPort::Joint { .. } => 0.0,
        };
        let used = friction_velocity_slopes(el.law, f_hyd, v_re[e], w);
        let plus = friction_velocity_slopes(el.law, f_hyd, 0.0, w);
        let minus = friction_velocity_slopes(el.law, f_hyd, -0.0, w);
        let delta: Vec<f64> = (0..3)
            .map(|r| 0.5 * (plus[r] + minus[r]) - used[r])
            .collect();
        if delta.iter().all(|&x| x == 0.0) {
            continue;
        }
        for (vx, qx, ux, fx) in [
            (&v_z, &mut d.q_z, &mut d.u_z, &mut d.f_z),
            (&v_zd, &mut d.q_zd, &mut d.u_zd, &mut d.f_zd),
        ] {
            for j in 0..n {
                let dv = vx[(e, j)];
                if dv == 0.0 {
                    continue;
                }
                // F_μ enters the net force F = F_h − F_μ, which acts along the line: Q′ += F s_z
                let dfm = delta[0] * dv;
                match el.port {
                    FrictionPort::Cylinder(c) => {
                        fx[(c, j)] -= dfm;
                        for i in 0..n {
                            qx[(i, j)] -= dfm * d.s_z[(c, i)];
                        }
                    }
                    FrictionPort::Joint { axis, .. } => qx[(axis, j)] -= dfm,
                }
                for r in 0..el.states.len() {
                    ux[(el.states.start + r, j)] += delta[1 + r] * dv;
                }
            }
        }
    }
    // H_U and g_U: one-sided differences (H is linear in U on each side of 0, note E.6); the
    // column holds H (n_v rows), then g (n_e rows)
    let h0: Vec<f64> =
        ef.h.iter()
            .chain(ef.internal_rate.iter())
            .copied()
            .collect();
    let mut spool = pt.spool.clone();
    for i in 0..nu {
        let u0 = pt.spool[i];
        let du = 1e-3 * u0.abs().max(1.0);
        let slope = |delta: f64, ef: &mut Evaluator<f64>, spool: &mut Vec<f64>| {
            spool[i] = u0 + delta;
            ef.evaluate(model, &pt.z, &pt.zd, &pt.p, spool, false);
            spool[i] = u0;
            ef.h.iter()
                .chain(ef.internal_rate.iter())
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
        for k in 0..n_int {
            d.g_u[(k, i)] = col[nv + k];
        }
    }
    // H_ω and g_ω: central differences in each pump's held speed (module doc)
    for k in 0..pt.spool.len() - nu {
        let w0 = pt.spool[nu + k];
        let dw = 1e-4 * w0.abs().max(1.0);
        let at = |w: f64, ef: &mut Evaluator<f64>, spool: &mut Vec<f64>| {
            spool[nu + k] = w;
            ef.evaluate(model, &pt.z, &pt.zd, &pt.p, spool, false);
            spool[nu + k] = w0;
            ef.h.iter()
                .chain(ef.internal_rate.iter())
                .copied()
                .collect::<Vec<f64>>()
        };
        let plus = at(w0 + dw, &mut ef, &mut spool);
        let minus = at(w0 - dw, &mut ef, &mut spool);
        for v in 0..nv {
            d.h_speed[(v, k)] = (plus[v] - minus[v]) / (2.0 * dw);
        }
        for r in 0..n_int {
            d.g_speed[(r, k)] = (plus[nv + r] - minus[nv + r]) / (2.0 * dw);
        }
    }
    // spool law (000 eq. 27, 001 eq. 4): the step's own `spool_rate`, in dual numbers
    let u_ref = super::valve_references(model, pt.t_s);
    for (i, e) in model.position_elements().take(nu) {
        let (u, r) = (pt.spool[i], u_ref[i]);
        d.spool_u[i] = e.position_rate(Dual64::new(u, 1.0), Dual64::from(r)).eps;
        d.spool_uref[i] = e.position_rate(Dual64::from(u), Dual64::new(r, 1.0)).eps;
    }
    d
}

/// C = (output rows over the full variables (z̃, ż̃, p̃, Ũ, w̃, ẽ)) · `to_full`.
pub fn output_matrix(
    model: &Model,
    outputs: &[OutputSel],
    d: &Derivatives,
    to_full: &DMatrix<f64>,
) -> DMatrix<f64> {
    let (n, nv, nu) = (
        model.n_coords(),
        model.n_volumes(),
        super::valves(model).len(),
    );
    let (nw, ne) = (model.n_friction_states(), model.layout.internal.len());
    let nfull = to_full.nrows();
    let o_w = 2 * n + nv + nu;
    let o_e = o_w + nw;
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
                g.view_mut((i, o_w), (1, nw)).copy_from(&d.f_w.row(c));
                g.view_mut((i, o_e), (1, ne)).copy_from(&d.f_e.row(c));
            }
            OutputSel::FrictionState(k) => g[(i, o_w + k)] = 1.0,
            OutputSel::InternalState(k) => g[(i, o_e + k)] = 1.0,
        }
    }
    g * to_full
}

//! Eigen-analysis of a linear model ẋ = A x (001 §4.2, Table 3): eigenvalues by faer's
//! non-symmetric solver after diagonal balancing, natural frequencies, damping ratios, time
//! constants, and mode shapes mapped back to every coordinate, rate, pressure, spool, friction
//! state and internal state of an element.
//!
//! ```text
//!   balancing:  A_b = D⁻¹ A D, D = diag(2^k) (Parlett–Reinsch: row and column norms equalized;
//!               the hydraulic rows of the four-bar are 10¹³ larger than the mechanical ones)
//!   λ = σ ± iω_d,   ω_n = |λ|,   f_n = ω_n/2π [Hz],   ζ = −σ/|λ|,   τ = −1/σ (real λ)
//!   mode shape:  x = D v_b  → full variables  to_full · x
//! ```
//! Zero eigenvalues (|λ| ≤ `zero_tol`) are counted. As many of them as the formulation adds
//! (`StateSpace::n_spurious_zero`: l for l nonholonomic constraints in the exact method,
//! 2·rank Φ_z for the finite-difference counterpart) are labelled spurious, the rest physical.

use nalgebra::{Complex, DMatrix};

use crate::linearize::{LinearizeError, StateSpace};
use crate::solver::linalg::eigen_real;

/// Kind of an eigenvalue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeKind {
    /// |λ| ≤ zero tolerance and physical (e.g. a conserved oil mass behind a closed valve).
    Zero,
    /// |λ| ≤ zero tolerance and introduced by the formulation (not a property of the machine).
    SpuriousZero,
    /// Real, non-zero.
    Real,
    /// Complex (one of a conjugate pair).
    Complex,
}

impl ModeKind {
    /// Label for tables.
    pub fn label(self) -> &'static str {
        match self {
            ModeKind::Zero => "zero",
            ModeKind::SpuriousZero => "spurious zero",
            ModeKind::Real => "real",
            ModeKind::Complex => "complex",
        }
    }
}

/// One eigenvalue with its mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Mode {
    /// λ [1/s].
    pub value: Complex<f64>,
    /// Kind.
    pub kind: ModeKind,
    /// Undamped natural frequency |λ|/2π [Hz].
    pub natural_frequency_hz: f64,
    /// Damping ratio ζ = −Re λ/|λ|; `None` for a zero eigenvalue (|λ| within the zero
    /// tolerance), where it is not defined.
    pub damping_ratio: Option<f64>,
    /// Time constant −1/Re λ for a real, non-zero λ [s]; `None` otherwise.
    pub time_constant_s: Option<f64>,
    /// Mode shape over the state (unit largest entry of the coordinate part if any).
    pub state_shape: Vec<Complex<f64>>,
    /// Mode shape over the full variables (z, ż, p, U, w, e), same normalization.
    pub full_shape: Vec<Complex<f64>>,
}

/// Options of the eigen-analysis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EigenOptions {
    /// |λ| ≤ `zero_rel` · max |λ| counts as zero. Default 1e-7: the zeros of the
    /// finite-difference counterpart come out at ~1e-3 in Jordan blocks (note 001 C.4).
    pub zero_rel: f64,
}

impl Default for EigenOptions {
    fn default() -> Self {
        EigenOptions { zero_rel: 1e-7 }
    }
}

/// Balances `a` in place by powers of two; returns the scaling D (A_b = D⁻¹ A D).
pub fn balance(a: &mut DMatrix<f64>) -> Vec<f64> {
    let n = a.nrows();
    let mut d = vec![1.0; n];
    let mut done = false;
    let mut sweeps = 0;
    while !done && sweeps < 100 {
        done = true;
        sweeps += 1;
        for i in 0..n {
            let mut c = 0.0;
            let mut r = 0.0;
            for j in 0..n {
                if j != i {
                    c += a[(j, i)].abs();
                    r += a[(i, j)].abs();
                }
            }
            if c == 0.0 || r == 0.0 {
                continue;
            }
            let s = c + r;
            let mut f = 1.0;
            let (mut cc, mut rr) = (c, r);
            while cc < rr / 2.0 {
                cc *= 2.0;
                rr /= 2.0;
                f *= 2.0;
            }
            while cc >= rr * 2.0 {
                cc /= 2.0;
                rr *= 2.0;
                f /= 2.0;
            }
            if (cc + rr) < 0.95 * s {
                done = false;
                d[i] *= f;
                for j in 0..n {
                    a[(i, j)] /= f;
                    a[(j, i)] *= f;
                }
            }
        }
    }
    d
}

/// Eigen-analysis of `ss.a`.
pub fn modes(ss: &StateSpace, opts: &EigenOptions) -> Result<Vec<Mode>, LinearizeError> {
    let n = ss.a.nrows();
    // a non-finite entry would never let the balancing sweeps settle
    if let Some((i, j)) = crate::solver::linalg::first_non_finite(&ss.a) {
        let name = |k: usize| ss.states.get(k).map_or("?", String::as_str);
        return Err(LinearizeError::Eigen(format!(
            "A[{i}, {j}] (∂ {}' / ∂ {}) is not finite",
            name(i),
            name(j)
        )));
    }
    let mut ab = ss.a.clone();
    let d = balance(&mut ab);
    let (vals, vecs) = eigen_real(&ab)
        .ok_or_else(|| LinearizeError::Eigen("QR iteration did not converge".into()))?;
    let rho = vals.iter().fold(0.0_f64, |m, v| m.max(v.norm()));
    let tol = opts.zero_rel * rho;
    let mut order: Vec<usize> = (0..n).collect();
    // ascending |λ|, then by imaginary part (stable table order)
    order.sort_by(|&a, &b| {
        vals[a]
            .norm()
            .total_cmp(&vals[b].norm())
            .then(vals[b].im.total_cmp(&vals[a].im))
    });
    let n_zero = order.iter().filter(|&&i| vals[i].norm() <= tol).count();
    let n_spur = ss.n_spurious_zero.min(n_zero);
    let n_coord = ss.to_full.nrows();
    let mut out = Vec::with_capacity(n);
    let mut zero_seen = 0;
    for &i in &order {
        let lam = vals[i];
        let mut x: Vec<Complex<f64>> = (0..n).map(|k| vecs[(k, i)] * d[k]).collect();
        let full: Vec<Complex<f64>> = (0..n_coord)
            .map(|r| {
                (0..n).fold(Complex::new(0.0, 0.0), |acc, k| {
                    acc + x[k] * ss.to_full[(r, k)]
                })
            })
            .collect();
        // normalize by the largest coordinate entry; fall back to the largest entry overall
        let largest = |v: &[Complex<f64>]| {
            v.iter()
                .max_by(|a, b| a.norm().total_cmp(&b.norm()))
                .copied()
                .unwrap_or(Complex::new(1.0, 0.0))
        };
        let mut pivot = largest(&full[..ss.n_full_coords.min(full.len())]);
        if pivot.norm() <= 1e-12 * largest(&full).norm() {
            pivot = largest(&full);
        }
        let pivot = if pivot.norm() > 0.0 {
            pivot
        } else {
            Complex::new(1.0, 0.0)
        };
        for c in x.iter_mut() {
            *c /= pivot;
        }
        let full: Vec<Complex<f64>> = full.iter().map(|c| c / pivot).collect();
        let is_zero = lam.norm() <= tol;
        let kind = if is_zero {
            zero_seen += 1;
            if zero_seen <= n_zero - n_spur {
                ModeKind::Zero
            } else {
                ModeKind::SpuriousZero
            }
        } else if lam.im.abs() > 1e-12 * lam.norm() {
            ModeKind::Complex
        } else {
            ModeKind::Real
        };
        let wn = lam.norm();
        out.push(Mode {
            value: lam,
            kind,
            natural_frequency_hz: wn / (2.0 * std::f64::consts::PI),
            damping_ratio: (!is_zero).then(|| -lam.re / wn),
            time_constant_s: (kind == ModeKind::Real).then(|| -1.0 / lam.re),
            state_shape: x,
            full_shape: full,
        });
    }
    Ok(out)
}

/// What the table prints for a damping ratio or time constant that is not defined.
pub const UNDEFINED: &str = "—";

/// The eigenvalue table as text: index, Re, Im, f_n [Hz], ζ, τ [s], kind, and the dominant
/// entries of the mode shape. A ζ or τ that is not defined (ζ of a zero eigenvalue, τ of a
/// complex or zero one) reads "—".
pub fn table(modes: &[Mode], full_names: &[String]) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "{:>3}  {:>24}  {:>24}  {:>14}  {:>12}  {:>12}  {:<14}  {}\n",
        "#",
        "Re λ [1/s]",
        "Im λ [1/s]",
        "f_n [Hz]",
        "ζ [-]",
        "τ [s]",
        "kind",
        "dominant (mode shape)"
    ));
    for (i, m) in modes.iter().enumerate() {
        let mut idx: Vec<usize> = (0..m.full_shape.len()).collect();
        idx.sort_by(|&a, &b| m.full_shape[b].norm().total_cmp(&m.full_shape[a].norm()));
        let dom: Vec<String> = idx
            .iter()
            .filter(|&&k| !full_names[k].ends_with(".rate") && !full_names[k].ends_with(".p"))
            .take(2)
            .chain(
                idx.iter()
                    .filter(|&&k| full_names[k].ends_with(".p"))
                    .take(1),
            )
            .map(|&k| format!("{}={:.3e}", full_names[k], m.full_shape[k].norm()))
            .collect();
        let zeta = m
            .damping_ratio
            .map_or_else(|| UNDEFINED.to_string(), |z| format!("{z:.6}"));
        let tau = m
            .time_constant_s
            .map_or_else(|| UNDEFINED.to_string(), |t| format!("{t:.6e}"));
        s.push_str(&format!(
            "{:>3}  {:>24.15e}  {:>24.15e}  {:>14.6}  {:>12}  {:>12}  {:<14}  {}\n",
            i + 1,
            m.value.re,
            m.value.im,
            m.natural_frequency_hz,
            zeta,
            tau,
            m.kind.label(),
            dom.join(" ")
        ));
    }
    s
}

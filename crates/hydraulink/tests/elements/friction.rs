//! Seal-friction laws of 003 Pub II: steady-state curves against the table of note 003b §1 C
//! (values derived from Table 2), and their dual-number derivatives against central differences.

use hydraulink::elements::friction::{
    bengisu_akay, brown_mcphee, lugre, modified_lugre, BengisuAkay, BrownMcPhee, LuGre,
    ModifiedLuGre,
};
use num_dual::Dual64;
use proptest::prelude::*;

// Table 2 with the literal σ0/σ1 reading (note 003b E.1).
const BA: BengisuAkay = BengisuAkay {
    coulomb_n: 210.0,
    static_n: 830.0,
    stribeck_velocity_m_s: 1.25e-2,
    shape_s_m: 50.0,
    viscous_n_s_m: 330.0,
};
const BM: BrownMcPhee = BrownMcPhee {
    coulomb_n: 210.0,
    static_n: 830.0,
    stribeck_velocity_m_s: 1.25e-2,
    viscous_n_s_m: 330.0,
};
fn lg() -> LuGre {
    LuGre {
        coulomb_n: 210.0,
        static_n: 830.0,
        stribeck_velocity_m_s: 1.25e-2,
        stribeck_exponent: 0.5,
        stiffness_n_m: 54f64.sqrt() * 1e6,
        damping_n_s_m: 10f64.sqrt() * 1e4,
        viscous_n_s_m: 330.0,
    }
}
fn ml() -> ModifiedLuGre {
    ModifiedLuGre {
        coulomb_n: 210.0,
        static_n: 830.0,
        stribeck_velocity_m_s: 1.25e-2,
        stribeck_exponent: 0.5,
        stiffness_n_m: 54f64.sqrt() * 1e6,
        damping_n_s_m: 10f64.sqrt() * 1e4,
        viscous_n_s_m: 330.0,
        threshold_velocity_m_s: 0.70,
        tau_accel_s: 0.25,
        tau_decel_s: 1.50,
        tau_dwell_s: 40.0,
        dwell_velocity_m_s: 1e-9,
    }
}

const V: [f64; 9] = [1e-4, 1e-3, 5e-3, 0.0125, 0.02, 0.05, 0.1, 0.2, 0.5];

fn check(name: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{name}: {got:.6} vs {want:.6} (tolerance {tol})"
    );
}

#[test]
fn friction_steady_state_curves_match_note_003b_table() {
    // note 003b §1 C; values printed to 1e-3 N, so agreement within 1e-3 N (rounding ≤ 5e-4)
    let bm = [
        15.568, 153.129, 592.572, 833.981, 730.025, 336.406, 260.657, 278.322, 375.044,
    ];
    // Bengisu–Akay at 0.0125 m/s = v_s is the sliding branch (|v| ≥ v_s)
    let ba = [
        13.227, 127.488, 531.200, 834.125, 642.719, 321.580, 250.805, 276.053, 375.000,
    ];
    let lugre_ss = [
        776.986, 677.586, 541.047, 442.210, 391.604, 310.408, 279.646, 287.356, 376.111,
    ];
    let (ml_v, ml_f, ml_h) = (
        [1e-4, 1e-3, 5e-3, 0.0125, 0.05, 0.1],
        [775.437, 671.659, 528.830, 426.628, 295.963, 269.631],
        [0.0020, 0.0095, 0.0277, 0.0510, 0.1286, 0.2041],
    );
    for (i, v) in V.iter().enumerate() {
        check(
            &format!("Brown–McPhee({v})"),
            brown_mcphee::force(&BM, *v),
            bm[i],
            1e-3,
        );
        check(
            &format!("Bengisu–Akay({v})"),
            bengisu_akay::force(&BA, *v),
            ba[i],
            1e-3,
        );
        check(
            &format!("LuGre ss({v})"),
            lugre::steady_force(&lg(), *v),
            lugre_ss[i],
            1e-3,
        );
        // odd symmetry
        assert_eq!(brown_mcphee::force(&BM, -v), -brown_mcphee::force(&BM, *v));
        assert_eq!(
            lugre::steady_force(&lg(), -v),
            -lugre::steady_force(&lg(), *v)
        );
    }
    for i in 0..ml_v.len() {
        let v = ml_v[i];
        check(
            &format!("mod. LuGre ss({v})"),
            modified_lugre::steady_force(&ml(), v),
            ml_f[i],
            1e-3,
        );
        let h = modified_lugre::film_steady(&ml(), v);
        check(&format!("h_ss({v})"), h, ml_h[i], 1e-4);
    }
}

#[test]
fn friction_named_points_of_note_003b() {
    // Bengisu–Akay: 830 N just left of v_s, 834.125 N at and right of it (σ2 v_s jump, E.2)
    let vs: f64 = 1.25e-2;
    check(
        "BA(v_s−)",
        bengisu_akay::force(&BA, vs * (1.0 - 1e-12)),
        830.0,
        1e-3,
    );
    check("BA(v_s)", bengisu_akay::force(&BA, vs), 834.125, 1e-3);
    // Brown–McPhee maximum 833.996 N at 0.012571 m/s: the zero of the exact slope, by bisection
    let f = |v: f64| brown_mcphee::force(&BM, v);
    let slope = |v: f64| d1(|x| brown_mcphee::force(&BM, x), v);
    let (mut a, mut b) = (0.010, 0.015);
    for _ in 0..100 {
        let c = 0.5 * (a + b);
        if slope(c) > 0.0 {
            a = c;
        } else {
            b = c;
        }
    }
    let vmax = 0.5 * (a + b);
    check("BM max", f(vmax), 833.996, 1e-3);
    // the exact zero of the slope is 0.0125703 m/s; the note prints 0.012571 (its last digit is
    // one unit high), so the location is checked to 1e-6 m/s and the value to 1e-3 N
    check("BM argmax", vmax, 0.012571, 1e-6);
    // LuGre steady state at v_s
    check(
        "LuGre ss(v_s)",
        lugre::steady_force(&lg(), vs),
        442.210,
        1e-3,
    );
    // modified LuGre at 0.3, 0.7 and 1.0 m/s; the film saturates at 1 − F_c/F_s above v_b
    for (v, want) in [(0.3, 310.995), (0.7, 441.000), (1.0, 540.000)] {
        check(
            &format!("mod. LuGre ss({v})"),
            modified_lugre::steady_force(&ml(), v),
            want,
            1e-3,
        );
    }
    check(
        "h_ss max",
        modified_lugre::film_steady(&ml(), 1.0),
        0.746988,
        1e-6,
    );
    check("K_f", ml().film_gain(), 0.947505, 1e-6);
}

fn d1<F: Fn(Dual64) -> Dual64>(f: F, x: f64) -> f64 {
    f(Dual64::new(x, 1.0)).eps
}

fn central<F: Fn(f64) -> f64>(f: F, x: f64, h: f64) -> f64 {
    (f(x + h) - f(x - h)) / (2.0 * h)
}

fn agree(name: &str, exact: f64, fdiff: f64) -> Result<(), TestCaseError> {
    prop_assert!(
        (exact - fdiff).abs() <= 1e-5 * exact.abs().max(fdiff.abs()).max(1.0),
        "{}: dual {} vs central difference {}",
        name,
        exact,
        fdiff
    );
    Ok(())
}

proptest! {
    #[test]
    fn friction_jacobians_match_central_differences(
        v in -1.0f64..1.0,
        qs in -1.2f64..1.2,
        h in 1e-3f64..0.74,
    ) {
        let vs = 1.25e-2;
        // away from the switches (v = 0, h = 0, |v| = v_s, |v| = v_b, h = h_ss) where one-sided
        // slopes differ by design
        prop_assume!(v.abs() > 1e-6 && (v.abs() - vs).abs() > 1e-5 && (v.abs() - 0.7).abs() > 1e-5);
        let dv = 1e-3 * v.abs().min((v.abs() - vs).abs()).min(1e-3);
        let (p, m) = (lg(), ml());
        let q = qs * 830.0 / p.stiffness_n_m; // bristle deflections up to 1.2 F_s/σ0
        let dq = 1e-9;
        prop_assume!((h - modified_lugre::film_steady(&m, v)).abs() > 1e-4);
        let dh = 1e-5;
        // static laws: ∂F/∂v
        agree("BA dF/dv", d1(|x| bengisu_akay::force(&BA, x), v), central(|x| bengisu_akay::force(&BA, x), v, dv))?;
        agree("BM dF/dv", d1(|x| brown_mcphee::force(&BM, x), v), central(|x| brown_mcphee::force(&BM, x), v, dv))?;
        // LuGre: ∂F/∂v, ∂F/∂q, ∂u1/∂v, ∂u1/∂q
        let c = Dual64::from;
        agree("LuGre dF/dv", d1(|x| lugre::force(&p, x, c(q)), v), central(|x| lugre::force(&p, x, q), v, dv))?;
        agree("LuGre dF/dq", d1(|x| lugre::force(&p, c(v), x), q), central(|x| lugre::force(&p, v, x), q, dq))?;
        agree("LuGre du/dv", d1(|x| lugre::bristle_rate(&p, x, c(q)), v), central(|x| lugre::bristle_rate(&p, x, q), v, dv))?;
        agree("LuGre du/dq", d1(|x| lugre::bristle_rate(&p, c(v), x), q), central(|x| lugre::bristle_rate(&p, v, x), q, dq))?;
        // modified LuGre: F, u2, u3 against v, q, h
        agree("mLuGre dF/dv", d1(|x| modified_lugre::force(&m, x, c(q), c(h)), v), central(|x| modified_lugre::force(&m, x, q, h), v, dv))?;
        agree("mLuGre dF/dq", d1(|x| modified_lugre::force(&m, c(v), x, c(h)), q), central(|x| modified_lugre::force(&m, v, x, h), q, dq))?;
        agree("mLuGre dF/dh", d1(|x| modified_lugre::force(&m, c(v), c(q), x), h), central(|x| modified_lugre::force(&m, v, q, x), h, dh))?;
        agree("mLuGre du2/dv", d1(|x| modified_lugre::bristle_rate(&m, x, c(q), c(h)), v), central(|x| modified_lugre::bristle_rate(&m, x, q, h), v, dv))?;
        agree("mLuGre du2/dh", d1(|x| modified_lugre::bristle_rate(&m, c(v), c(q), x), h), central(|x| modified_lugre::bristle_rate(&m, v, q, x), h, dh))?;
        agree("mLuGre du3/dv", d1(|x| modified_lugre::film_rate(&m, x, c(h)), v), central(|x| modified_lugre::film_rate(&m, x, h), v, dv))?;
        agree("mLuGre du3/dh", d1(|x| modified_lugre::film_rate(&m, c(v), x), h), central(|x| modified_lugre::film_rate(&m, v, x), h, dh))?;
    }
}

#[test]
fn friction_tanh_derivative_is_finite_at_high_speed() {
    // num-dual's tanh is sinh/cosh, NaN once cosh overflows; the laws use `friction::tanh`
    for v in [3.0, 50.0, -400.0] {
        let exact = d1(|x| brown_mcphee::force(&BM, x), v);
        let fdiff = central(|x| brown_mcphee::force(&BM, x), v, 1e-4);
        assert!(
            exact.is_finite() && (exact - fdiff).abs() < 1e-6 * fdiff.abs(),
            "{v}: {exact} vs {fdiff}"
        );
    }
}

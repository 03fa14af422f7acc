//! The exact (dual-number) Newton tangent agrees with central finite differences of the same
//! residual, mid-motion, on both shipped models (issue 2 acceptance).

use crate::common::*;
use hydraulink::formulations::penalty;
use hydraulink::pipeline::initialization::initialize;
use hydraulink::pipeline::step;
use hydraulink::Workspace;

fn check(name: &str, t_check: f64) {
    check_model(name, model_of(name), t_check, 1e-6);
}

/// `hz`: central-difference step of the coordinates [rad or m].
fn check_model(name: &str, model: hydraulink::Model, t_check: f64, hz: f64) {
    let nzp = model.n_coords() + model.n_volumes();
    let mut st = initialize(&model).unwrap();
    let mut ws = Workspace::new(&model);
    let n_steps = (t_check / model.step_s()).round() as u64;
    for _ in 0..n_steps {
        step::step(&model, &mut st, &mut ws).unwrap();
    }
    penalty::prepare(&model, &st, &mut ws);
    // perturb the predictor a little so that Φ ≠ 0 and the tangent terms in Φ are exercised
    for (i, x) in ws.x.iter_mut().enumerate() {
        *x += if i < model.n_coords() {
            1e-4
        } else if i < nzp {
            2e3
        } else {
            1e-6 // friction states: bristle [m], film [-]
        };
    }
    penalty::tangent(&model, &mut ws);
    let nx = ws.x.len();
    let x0 = ws.x.clone();
    let mut worst: f64 = 0.0;
    for j in 0..nx {
        let h = if j < model.n_coords() {
            hz
        } else if j < nzp {
            1.0
        } else {
            1e-9
        };
        let mut fp = vec![0.0; nx];
        let mut fm = vec![0.0; nx];
        for (sign, out) in [(1.0, &mut fp), (-1.0, &mut fm)] {
            ws.ev.x.copy_from_slice(&x0);
            ws.ev.x[j] += sign * h;
            let b = &mut ws.buffers;
            penalty::residual(&model, &mut b.ev, &b.hist, &b.lambda, &b.spool_new);
            out.copy_from_slice(&ws.ev.f);
        }
        for i in 0..nx {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            let exact = ws.tangent.matrix()[(i, j)];
            // scale: the largest entry of the row, so tiny couplings are judged relative to it
            let row_scale = (0..nx)
                .map(|k| ws.tangent.matrix()[(i, k)].abs())
                .fold(0.0, f64::max);
            let err = (fd - exact).abs() / (row_scale + 1e-300);
            worst = worst.max(err);
            // central differences: O(h²) truncation plus round-off ~ ε|f|/h; 1e-6 of the row
            // scale separates a wrong derivative (O(1) error) from both.
            assert!(
                err < 1e-6,
                "{name}: d f[{i}] / d x[{j}]: exact {exact:e}, fd {fd:e}"
            );
        }
    }
    eprintln!("{name}: worst relative tangent error {worst:.2e}");
}

#[test]
fn tangent_matches_central_differences_fourbar_lifting() {
    check("fourbar", 1.5);
}

#[test]
fn tangent_matches_central_differences_quickreturn_pulling() {
    check("quickreturn", 2.0);
}

#[test]
fn tangent_matches_central_differences_fourbar_friction_sliding() {
    // 003 Pub II Appendix A: x = [z; p; q; h]; mid-lift (t = 1.5 s), the seal sliding
    for law in ["bengisu_akay", "brown_mcphee", "lugre", "modified_lugre"] {
        let mut spec = spec_of("fourbar_friction");
        spec.hydraulics.cylinders[0].friction =
            toml::from_str(&format!("type = \"{law}\"")).unwrap();
        // coordinate step 2e-9 rad: ż = (2/Δt) z + …, so 1e-6 rad would change ṡ by 1 mm/s,
        // too coarse for the √|v| Stribeck and |v|^(2/3) film curvatures at ~1 cm/s
        check_model(law, hydraulink::compile(&spec).unwrap(), 1.5, 2e-9);
    }
}

#[test]
fn tangent_matches_central_differences_boom_with_poppet_lag() {
    // x = [z; p; w; e]: the relief valve's poppet opening e = x (an internal state, its row
    // (Δt²/4)(ė − g)); mid-lift with the relief closed (1.0 s), and held in the end stop with the
    // relief open (3.0 s)
    let mut spec = spec_of("boom");
    for e in spec.elements.iter_mut() {
        if let hydraulink::elements::component::ComponentSpec::ReliefValve(r) = e {
            r.poppet_time_constant_s = Some(5e-3);
        }
    }
    let model = hydraulink::compile(&spec).unwrap();
    assert_eq!(model.layout.internal.len(), 1);
    for t in [1.0, 3.0] {
        check_model(&format!("boom poppet t={t}"), model.clone(), t, 1e-6);
    }
}

#[test]
fn tangent_matches_central_differences_joint_friction() {
    // joint friction on the pendulum's axis (generalized force and bristle/film rows), swinging
    for law in ["brown_mcphee", "lugre", "modified_lugre"] {
        let spec = super::paper_003_friction::pendulum_with_joint_friction(law);
        check_model(
            &format!("pendulum {law}"),
            hydraulink::compile(&spec).unwrap(),
            0.3,
            2e-9,
        );
    }
}

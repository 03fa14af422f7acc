//! Seal-friction specs: checks (errors name the field), compilation to [`Friction`], and the
//! formulations that integrate friction states.

use crate::elements::friction::{BengisuAkay, BrownMcPhee, Friction, LuGre, ModifiedLuGre};
use crate::model::spec::{Formulation, FrictionSpec, JointKind, ModelSpec};
use crate::ModelError;

/// Checks the fields of a seal-friction law; `path` is the field path of the `friction` table,
/// `element` names the cylinder. The core laws (none, viscous, efficiency) are checked in
/// `model::validate`.
pub fn validate(path: &str, element: &str, spec: &FrictionSpec) -> Result<(), ModelError> {
    let err = |field: &str, msg: String| ModelError::new(format!("{path}.{field}"), element, msg);
    let positive = |field: &str, x: f64| {
        if x.is_finite() && x > 0.0 {
            Ok(())
        } else {
            Err(err(
                field,
                format!("must be a positive finite number, got {x:?}"),
            ))
        }
    };
    let non_negative = |field: &str, x: f64| {
        if x.is_finite() && x >= 0.0 {
            Ok(())
        } else {
            Err(err(
                field,
                format!("must be a non-negative finite number, got {x:?}"),
            ))
        }
    };
    let forces = |fc: f64, fs: f64| -> Result<(), ModelError> {
        non_negative("coulomb_n", fc)?;
        positive("static_n", fs)?;
        if fs < fc {
            return Err(err(
                "static_n",
                format!("{fs:?} N is below the Coulomb force {fc:?} N; F_s ≥ F_c"),
            ));
        }
        Ok(())
    };
    let bristles = |k: Option<f64>, c: Option<f64>| -> Result<(), ModelError> {
        if let Some(k) = k {
            positive("stiffness_n_m", k)?;
        }
        if let Some(c) = c {
            non_negative("damping_n_s_m", c)?;
        }
        Ok(())
    };
    // the fields LuGre and modified LuGre share (g(v) ≥ F_c > 0 divides the bristle rate)
    let lugre = |fc: f64,
                 fs: f64,
                 vs: f64,
                 n: f64,
                 visc: f64,
                 k: Option<f64>,
                 c: Option<f64>|
     -> Result<(), ModelError> {
        forces(fc, fs)?;
        positive("coulomb_n", fc)?;
        positive("stribeck_velocity_m_s", vs)?;
        positive("stribeck_exponent", n)?;
        non_negative("viscous_n_s_m", visc)?;
        bristles(k, c)
    };
    match *spec {
        FrictionSpec::BengisuAkay {
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            shape_s_m,
            viscous_n_s_m,
        } => {
            forces(coulomb_n, static_n)?;
            positive("stribeck_velocity_m_s", stribeck_velocity_m_s)?;
            positive("shape_s_m", shape_s_m)?;
            non_negative("viscous_n_s_m", viscous_n_s_m)
        }
        FrictionSpec::BrownMcPhee {
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            viscous_n_s_m,
        } => {
            forces(coulomb_n, static_n)?;
            positive("stribeck_velocity_m_s", stribeck_velocity_m_s)?;
            non_negative("viscous_n_s_m", viscous_n_s_m)
        }
        FrictionSpec::Lugre {
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            stribeck_exponent,
            viscous_n_s_m,
            stiffness_n_m,
            damping_n_s_m,
            ..
        } => lugre(
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            stribeck_exponent,
            viscous_n_s_m,
            stiffness_n_m,
            damping_n_s_m,
        ),
        FrictionSpec::ModifiedLugre {
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            stribeck_exponent,
            viscous_n_s_m,
            stiffness_n_m,
            damping_n_s_m,
            threshold_velocity_m_s,
            tau_accel_s,
            tau_decel_s,
            tau_dwell_s,
            dwell_velocity_m_s,
            ..
        } => {
            // g(v, h) ≥ F_c > 0 for every film h ≤ h_ss,max = 1 − F_c/F_s
            lugre(
                coulomb_n,
                static_n,
                stribeck_velocity_m_s,
                stribeck_exponent,
                viscous_n_s_m,
                stiffness_n_m,
                damping_n_s_m,
            )?;
            positive("threshold_velocity_m_s", threshold_velocity_m_s)?;
            positive("tau_accel_s", tau_accel_s)?;
            positive("tau_decel_s", tau_decel_s)?;
            positive("tau_dwell_s", tau_dwell_s)?;
            positive("dwell_velocity_m_s", dwell_velocity_m_s)?;
            if dwell_velocity_m_s >= threshold_velocity_m_s {
                return Err(err(
                    "dwell_velocity_m_s",
                    format!(
                        "{dwell_velocity_m_s:?} m/s is not below the threshold velocity \
                         {threshold_velocity_m_s:?} m/s"
                    ),
                ));
            }
            Ok(())
        }
        FrictionSpec::None | FrictionSpec::Viscous { .. } | FrictionSpec::Efficiency { .. } => {
            Ok(())
        }
    }
}

/// Compiles a validated seal-friction spec (the core laws are compiled in `model::compile`).
pub fn seal_friction(spec: &FrictionSpec) -> Friction {
    match *spec {
        FrictionSpec::BengisuAkay {
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            shape_s_m,
            viscous_n_s_m,
        } => Friction::BengisuAkay(BengisuAkay {
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            shape_s_m,
            viscous_n_s_m,
        }),
        FrictionSpec::BrownMcPhee {
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            viscous_n_s_m,
        } => Friction::BrownMcPhee(BrownMcPhee {
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            viscous_n_s_m,
        }),
        FrictionSpec::Lugre {
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            stribeck_exponent,
            viscous_n_s_m,
            table2_reading,
            stiffness_n_m,
            damping_n_s_m,
        } => {
            let (s0, s1) = table2_reading.sigmas();
            Friction::LuGre(LuGre {
                coulomb_n,
                static_n,
                stribeck_velocity_m_s,
                stribeck_exponent,
                stiffness_n_m: stiffness_n_m.unwrap_or(s0),
                damping_n_s_m: damping_n_s_m.unwrap_or(s1),
                viscous_n_s_m,
            })
        }
        FrictionSpec::ModifiedLugre {
            coulomb_n,
            static_n,
            stribeck_velocity_m_s,
            stribeck_exponent,
            viscous_n_s_m,
            table2_reading,
            stiffness_n_m,
            damping_n_s_m,
            threshold_velocity_m_s,
            tau_accel_s,
            tau_decel_s,
            tau_dwell_s,
            dwell_velocity_m_s,
        } => {
            let (s0, s1) = table2_reading.sigmas();
            Friction::ModifiedLuGre(ModifiedLuGre {
                coulomb_n,
                static_n,
                stribeck_velocity_m_s,
                stribeck_exponent,
                stiffness_n_m: stiffness_n_m.unwrap_or(s0),
                damping_n_s_m: damping_n_s_m.unwrap_or(s1),
                viscous_n_s_m,
                threshold_velocity_m_s,
                tau_accel_s,
                tau_decel_s,
                tau_dwell_s,
                dwell_velocity_m_s,
            })
        }
        FrictionSpec::None => Friction::None,
        FrictionSpec::Viscous { coefficient_n_s_m } => Friction::Viscous {
            c: coefficient_n_s_m,
        },
        FrictionSpec::Efficiency {
            efficiency,
            velocity_scale_m_s,
        } => Friction::Efficiency {
            eta: efficiency,
            vs: velocity_scale_m_s,
        },
    }
}

/// Joint friction: revolute and prismatic joints only, no efficiency law (it needs a hydraulic
/// force), and the law's fields as for cylinders.
pub fn check_joints(spec: &ModelSpec) -> Result<(), ModelError> {
    for (i, j) in spec.joints.iter().enumerate() {
        if j.friction == FrictionSpec::None {
            continue;
        }
        let path = format!("joints[{i}].friction");
        let element = format!("joint '{}'", j.name);
        if !matches!(j.kind, JointKind::Revolute | JointKind::Prismatic) {
            return Err(ModelError::new(
                path,
                element,
                "friction is supported on revolute and prismatic joints only (one coordinate)",
            ));
        }
        match j.friction {
            FrictionSpec::Efficiency { .. } => {
                return Err(ModelError::new(
                    format!("{path}.type"),
                    element,
                    "the efficiency law scales a hydraulic force; a joint has none (use \
                     viscous, bengisu_akay, brown_mcphee, lugre or modified_lugre)",
                ))
            }
            FrictionSpec::Viscous { coefficient_n_s_m } => {
                if !(coefficient_n_s_m.is_finite() && coefficient_n_s_m >= 0.0) {
                    return Err(ModelError::new(
                        format!("{path}.coefficient_n_s_m"),
                        element,
                        format!("must be a non-negative finite number, got {coefficient_n_s_m:?}"),
                    ));
                }
            }
            ref seal => validate(&path, &element, seal)?,
        }
    }
    Ok(())
}

/// Friction states (LuGre bristles, films) are Newton unknowns of the penalty formulation only;
/// any other formulation would leave them frozen, so it is rejected here with the cylinder named.
/// Joint friction is evaluated by the semi-recursive evaluator only (penalty and double-step).
pub fn check_formulation(spec: &ModelSpec) -> Result<(), ModelError> {
    if spec.solver.formulation == Formulation::Penalty {
        return Ok(());
    }
    for (i, j) in spec.joints.iter().enumerate() {
        let states = matches!(
            j.friction,
            FrictionSpec::Lugre { .. } | FrictionSpec::ModifiedLugre { .. }
        );
        let semirecursive = spec.solver.formulation == Formulation::DoubleStep;
        if j.friction != FrictionSpec::None && (states || !semirecursive) {
            return Err(ModelError::new(
                format!("joints[{i}].friction.type"),
                format!("joint '{}'", j.name),
                format!(
                    "formulation '{}' does not support this joint friction (static joint \
                     friction: penalty and double-step; LuGre states: penalty only)",
                    spec.solver.formulation.name()
                ),
            ));
        }
    }
    for (i, c) in spec.hydraulics.cylinders.iter().enumerate() {
        let law = match c.friction {
            FrictionSpec::Lugre { .. } => "lugre",
            FrictionSpec::ModifiedLugre { .. } => "modified_lugre",
            _ => continue,
        };
        return Err(ModelError::new(
            format!("hydraulics.cylinders[{i}].friction.type"),
            format!("cylinder '{}'", c.name),
            format!(
                "friction law '{law}' has internal states, which only the 'penalty' formulation \
                 integrates (003 Pub II Appendix A); formulation '{}' does not support them \
                 (use a static law: bengisu_akay, brown_mcphee, viscous, efficiency)",
                spec.solver.formulation.name()
            ),
        ));
    }
    Ok(())
}

//! Seal-friction specs: checks (errors name the field), compilation to [`Friction`], and the
//! formulations that integrate friction states.

use crate::elements::friction::{BengisuAkay, BrownMcPhee, Friction, LuGre, ModifiedLuGre};
use crate::ModelError;
use serde::{Deserialize, Serialize};

/// Cylinder friction law.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FrictionSpec {
    /// No friction.
    #[default]
    None,
    /// F_μ = c ṡ.
    Viscous {
        /// c [N·s/m].
        coefficient_n_s_m: f64,
    },
    /// F_μ = (1 − η) |p_A A_A − p_B A_B| tanh(ṡ / v_s): a fraction 1 − η of the hydraulic force
    /// opposes the motion (reference note 000-E item 5).
    Efficiency {
        /// η [-], in (0, 1].
        efficiency: f64,
        /// v_s [m/s], > 0: the speed over which friction builds up.
        #[serde(default = "default_vs")]
        velocity_scale_m_s: f64,
    },
    /// Corrected Bengisu–Akay seal friction (003 Pub II eq. 22), static. Defaults: Table 2.
    BengisuAkay {
        /// F_c [N].
        #[serde(default = "table2::coulomb")]
        coulomb_n: f64,
        /// F_s [N], ≥ F_c.
        #[serde(default = "table2::static_force")]
        static_n: f64,
        /// v_s [m/s], > 0.
        #[serde(default = "table2::stribeck_velocity")]
        stribeck_velocity_m_s: f64,
        /// ξ [s/m], > 0.
        #[serde(default = "table2::shape")]
        shape_s_m: f64,
        /// σ2 [N s/m], ≥ 0.
        #[serde(default = "table2::viscous")]
        viscous_n_s_m: f64,
    },
    /// Brown–McPhee seal friction (003 Pub II eq. 24), static. Defaults: Table 2.
    #[serde(rename = "brown_mcphee")]
    BrownMcPhee {
        /// F_c [N].
        #[serde(default = "table2::coulomb")]
        coulomb_n: f64,
        /// F_s [N], ≥ F_c.
        #[serde(default = "table2::static_force")]
        static_n: f64,
        /// v_s [m/s], > 0.
        #[serde(default = "table2::stribeck_velocity")]
        stribeck_velocity_m_s: f64,
        /// σ2 [N s/m], ≥ 0.
        #[serde(default = "table2::viscous")]
        viscous_n_s_m: f64,
    },
    /// LuGre seal friction with a bristle state (003 Pub II eqs. 25–27). Defaults: Table 2.
    Lugre {
        /// F_c [N].
        #[serde(default = "table2::coulomb")]
        coulomb_n: f64,
        /// F_s [N], ≥ F_c.
        #[serde(default = "table2::static_force")]
        static_n: f64,
        /// v_s [m/s], > 0.
        #[serde(default = "table2::stribeck_velocity")]
        stribeck_velocity_m_s: f64,
        /// Stribeck exponent n [-], > 0.
        #[serde(default = "table2::exponent")]
        stribeck_exponent: f64,
        /// σ2 [N s/m], ≥ 0.
        #[serde(default = "table2::viscous")]
        viscous_n_s_m: f64,
        /// How σ0 and σ1 of Table 2 are read when not given explicitly.
        #[serde(default)]
        table2_reading: BristleReading,
        /// σ0 [N/m], > 0; overrides `table2_reading`.
        #[serde(default)]
        stiffness_n_m: Option<f64>,
        /// σ1 [N s/m], ≥ 0; overrides `table2_reading`.
        #[serde(default)]
        damping_n_s_m: Option<f64>,
    },
    /// Modified LuGre (Yanada–Sekikawa) seal friction with bristle and lubricant-film states
    /// (003 Pub II eqs. 28–34). Defaults: Table 2.
    ModifiedLugre {
        /// F_c [N].
        #[serde(default = "table2::coulomb")]
        coulomb_n: f64,
        /// F_s [N], > F_c.
        #[serde(default = "table2::static_force")]
        static_n: f64,
        /// v_s [m/s], > 0.
        #[serde(default = "table2::stribeck_velocity")]
        stribeck_velocity_m_s: f64,
        /// Stribeck exponent n [-], > 0.
        #[serde(default = "table2::exponent")]
        stribeck_exponent: f64,
        /// σ2 [N s/m], ≥ 0.
        #[serde(default = "table2::viscous")]
        viscous_n_s_m: f64,
        /// How σ0 and σ1 of Table 2 are read when not given explicitly.
        #[serde(default)]
        table2_reading: BristleReading,
        /// σ0 [N/m], > 0; overrides `table2_reading`.
        #[serde(default)]
        stiffness_n_m: Option<f64>,
        /// σ1 [N s/m], ≥ 0; overrides `table2_reading`.
        #[serde(default)]
        damping_n_s_m: Option<f64>,
        /// v_b [m/s], > 0: threshold velocity of the film.
        #[serde(default = "table2::threshold")]
        threshold_velocity_m_s: f64,
        /// τ_hp [s], > 0: film time constant in acceleration.
        #[serde(default = "table2::tau_accel")]
        tau_accel_s: f64,
        /// τ_hn [s], > 0: film time constant in deceleration.
        #[serde(default = "table2::tau_decel")]
        tau_decel_s: f64,
        /// τ_h0 [s], > 0: film time constant at rest (dwell).
        #[serde(default = "table2::tau_dwell")]
        tau_dwell_s: f64,
        /// v_0 [m/s], > 0: |v| ≤ v_0 counts as rest for the film (note 003b E.4).
        #[serde(default = "table2::dwell_velocity")]
        dwell_velocity_m_s: f64,
    },
}

/// The reading of σ0 and σ1 in 003 Pub II Table 2, printed "√54 × 106 N/m" and
/// "√10 × 104 Ns/m" (note 003b E.1).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BristleReading {
    /// σ0 = √54·10⁶ = 7.3485e6 N/m, σ1 = √10·10⁴ = 3.1623e4 N s/m. The default: the breakaway
    /// deflection F_s/σ0 = 0.11 mm is that of a seal, and the stiff bristle explains why the
    /// paper's LuGre runs cost twice the static ones (Table 3).
    #[default]
    Literal,
    /// σ0 = √(54·10⁶) = 7348 N/m, σ1 = √(10⁵) = 316.2 N s/m: a breakaway deflection of 0.11 m,
    /// implausible for a seal.
    SqrtOfProduct,
    /// σ0 = 54·10⁶ N/m, σ1 = 10·10⁴ N s/m: the √ taken as stray.
    StraySqrt,
}

impl BristleReading {
    /// (σ0 [N/m], σ1 [N s/m]) of this reading.
    pub fn sigmas(self) -> (f64, f64) {
        match self {
            BristleReading::Literal => (54f64.sqrt() * 1e6, 10f64.sqrt() * 1e4),
            BristleReading::SqrtOfProduct => (54e6f64.sqrt(), 1e5f64.sqrt()),
            BristleReading::StraySqrt => (54e6, 10e4),
        }
    }
}

/// Defaults of the seal-friction laws: 003 Pub II Table 2.
mod table2 {
    pub fn coulomb() -> f64 {
        210.0
    }
    pub fn static_force() -> f64 {
        830.0
    }
    pub fn stribeck_velocity() -> f64 {
        1.25e-2
    }
    pub fn shape() -> f64 {
        50.0
    }
    pub fn viscous() -> f64 {
        330.0
    }
    pub fn exponent() -> f64 {
        0.5
    }
    pub fn threshold() -> f64 {
        0.70
    }
    pub fn tau_accel() -> f64 {
        0.25
    }
    pub fn tau_decel() -> f64 {
        1.50
    }
    pub fn tau_dwell() -> f64 {
        40.0
    }
    pub fn dwell_velocity() -> f64 {
        1e-9
    }
}

fn default_vs() -> f64 {
    1.0e-3
}

/// Checks the fields of a seal-friction law; `path` is the field path of the `friction` table,
/// `element` names the cylinder. The core laws (none, viscous, efficiency) are checked in
/// `pipeline::validate`.
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

/// Compiles a validated seal-friction spec (the core laws are compiled in `pipeline::compile`).
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

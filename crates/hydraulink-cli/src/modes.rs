//! The lightly damped modes of `check` and `linearize`: each mode's frequency, damping ratio and
//! what the model's fixed trapezoidal step does to it (the frequency it reproduces, its phase
//! error per period and over the run), from `hydraulink::linearize::dispersion`; and the
//! warning of `check` when the phase error over the run exceeds
//! [`PHASE_ERROR_LIMIT_RAD`].

use std::fmt::Write as _;

use hydraulink::linearize::dispersion::{
    lightly_damped, suggested_step, Dispersion, LIGHT_DAMPING_RATIO, MIN_FREQUENCY_HZ,
    PHASE_ERROR_LIMIT_RAD,
};
use hydraulink::linearize::eigen::{modes, EigenOptions, Mode};
use hydraulink::linearize::equilibrium::{equilibrium, EquilibriumOptions};
use hydraulink::linearize::exact::{linearize, ExactOptions};
use hydraulink::linearize::{full_names, LinearizeError};
use hydraulink::Model;
use serde_json::{json, Value};

/// A lightly damped mode with its dominant coordinate and pressure (the largest entries of its
/// shape; `None` when the model has no coordinate or no volume).
pub(crate) struct LightMode {
    /// What the step does to it.
    pub dispersion: Dispersion,
    /// Name of the coordinate with the largest entry of the mode shape.
    pub coordinate: Option<String>,
    /// Name of the pressure with the largest entry of the mode shape.
    pub pressure: Option<String>,
}

/// The lightly damped modes of `all` (ascending |λ|) at the model's fixed step.
pub(crate) fn light_modes(model: &Model, all: &[Mode]) -> Vec<LightMode> {
    let names = full_names(model);
    let (n, nv) = (model.n_coords(), model.n_volumes());
    let largest = |m: &Mode, pick: &dyn Fn(usize, &str) -> bool| -> Option<String> {
        (0..m.full_shape.len().min(names.len()))
            .filter(|&k| pick(k, &names[k]))
            .max_by(|&a, &b| m.full_shape[a].norm().total_cmp(&m.full_shape[b].norm()))
            .map(|k| names[k].clone())
    };
    let dispersions = lightly_damped(all, model.step_s());
    all.iter()
        .filter(|m| hydraulink::linearize::dispersion::is_lightly_damped(m))
        .zip(dispersions)
        .map(|(m, dispersion)| LightMode {
            dispersion,
            coordinate: largest(m, &|k, _| k < n),
            pressure: largest(m, &|k, _| (2 * n..2 * n + nv).contains(&k)),
        })
        .collect()
}

/// The table of the lightly damped modes at the model's step over its duration, with a heading
/// line; one line saying there are none when `light` is empty.
pub(crate) fn table(model: &Model, light: &[LightMode]) -> String {
    let (h, t) = (model.step_s(), model.duration_s());
    let mut s = String::new();
    if light.is_empty() {
        let _ = writeln!(
            s,
            "lightly damped modes (ζ < {LIGHT_DAMPING_RATIO}, above {MIN_FREQUENCY_HZ} Hz): none"
        );
        return s;
    }
    let _ = writeln!(
        s,
        "lightly damped modes (ζ < {LIGHT_DAMPING_RATIO}, above {MIN_FREQUENCY_HZ} Hz) at the \
         fixed step {h} s (trapezoid: it reproduces f_h = (2/h)·atan(ωh/2)/2π), over the run's \
         {t} s:"
    );
    let over = format!("over {t} s [rad]");
    let _ = writeln!(
        s,
        "  {:>12}  {:>10}  {:>12}  {:>16}  {:>16}  {:>10}  dominant",
        "f [Hz]", "ζ [-]", "f_h [Hz]", "per period [rad]", over, "Δζ [-]"
    );
    for m in light {
        let d = &m.dispersion;
        let dominant = [m.coordinate.as_deref(), m.pressure.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            s,
            "  {:>12.4}  {:>10.6}  {:>12.4}  {:>16.4e}  {:>16.4e}  {:>10.1e}  {dominant}",
            d.frequency_hz,
            d.damping_ratio,
            d.frequency_h_hz,
            d.phase_error_per_period_rad,
            d.phase_error_over(t),
            d.damping_error
        );
    }
    s
}

/// The warnings of `check`: one per mode whose phase error over the run exceeds
/// [`PHASE_ERROR_LIMIT_RAD`], with the step that keeps it below and the adaptive step control.
pub(crate) fn warnings(model: &Model, light: &[LightMode]) -> Vec<String> {
    let (h, t) = (model.step_s(), model.duration_s());
    light
        .iter()
        .filter(|m| m.dispersion.phase_error_over(t) > PHASE_ERROR_LIMIT_RAD)
        .map(|m| {
            let d = &m.dispersion;
            let step = suggested_step(d.lambda, t, PHASE_ERROR_LIMIT_RAD)
                .map_or_else(String::new, |s| {
                    format!("`solver.step_s = {s:e}` (or `--step {s:e}`) keeps it below; ")
                });
            format!(
                "the {:.2} Hz mode (ζ = {:.4}) drifts {:.2} rad out of phase over the run's {t} s \
                 at the fixed step {h} s (the trapezoid reproduces {:.2} Hz; {:.2e} rad per \
                 period), more than {PHASE_ERROR_LIMIT_RAD} rad: {step}or set \
                 `solver.step_control = \"adaptive\"`",
                d.frequency_hz,
                d.damping_ratio,
                d.phase_error_over(t),
                d.frequency_h_hz,
                d.phase_error_per_period_rad,
            )
        })
        .collect()
}

/// The lightly damped modes as JSON, for `linear_model.json`.
pub(crate) fn json(model: &Model, light: &[LightMode]) -> Value {
    let t = model.duration_s();
    json!({
        "step_s": model.step_s(),
        "duration_s": t,
        "damping_ratio_below": LIGHT_DAMPING_RATIO,
        "frequency_above_hz": MIN_FREQUENCY_HZ,
        "phase_error_limit_rad": PHASE_ERROR_LIMIT_RAD,
        "note": "trapezoid at the fixed step h: z = (1+λh/2)/(1−λh/2), λ_h = ln(z)/h; \
                 f = Im λ/2π, f_h = Im λ_h/2π, phase error per period 2π|Im λ − Im λ_h|/Im λ, \
                 over the run |Im λ − Im λ_h|·T, damping_error ζ_h − ζ",
        "modes": light.iter().map(|m| {
            let d = &m.dispersion;
            json!({
                "eigenvalue": [d.lambda.re, d.lambda.im],
                "frequency_hz": d.frequency_hz,
                "damping_ratio": d.damping_ratio,
                "frequency_h_hz": d.frequency_h_hz,
                "phase_error_per_period_rad": d.phase_error_per_period_rad,
                "phase_error_over_run_rad": d.phase_error_over(t),
                "damping_error": d.damping_error,
                "suggested_step_s": suggested_step(d.lambda, t, PHASE_ERROR_LIMIT_RAD),
                "dominant_coordinate": m.coordinate,
                "dominant_pressure": m.pressure,
            })
        }).collect::<Vec<_>>(),
    })
}

/// The modes of `check`: the static equilibrium that `linearize` uses by default (the first
/// tree coordinates held at q0, valve inputs at t = 0), its exact linearization (001 §3) and the
/// eigen-analysis. An error when the model cannot be linearized there.
pub(crate) fn equilibrium_modes(model: &Model) -> Result<Vec<Mode>, LinearizeError> {
    let eq = equilibrium(
        model,
        &EquilibriumOptions {
            held: None,
            time_s: 0.0,
        },
    )?;
    let lin = linearize(
        model,
        &eq.point,
        &ExactOptions {
            independent: eq.held,
            ..ExactOptions::default()
        },
    )?;
    modes(&lin.ss, &EigenOptions::default())
}

/// The section of `check`: the table of the lightly damped modes about the static equilibrium
/// and the warnings; one line (and no warning) when the model cannot be linearized.
pub(crate) fn check_section(model: &Model) -> (String, Vec<String>) {
    match equilibrium_modes(model) {
        Ok(all) => {
            let light = light_modes(model, &all);
            (table(model, &light), warnings(model, &light))
        }
        Err(e) => (
            format!("lightly damped modes: not analysed, no linear model about the static equilibrium ({e})\n"),
            Vec::new(),
        ),
    }
}

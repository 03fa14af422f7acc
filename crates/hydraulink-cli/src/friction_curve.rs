//! `hydraulink friction-curve MODEL --element NAME [--v-range A,B]`: the friction–velocity
//! characteristic of one cylinder's seal (003 Pub II Fig. 9), as CSV and SVG.

use std::path::PathBuf;

use hydraulink::friction;
use hydraulink::Simulation;

use crate::Failure;

/// What to draw.
pub(crate) struct FrictionCurveOptions {
    pub model: hydraulink::Model,
    pub element: String,
    pub v_range: (f64, f64),
    pub period_s: f64,
    pub out: PathBuf,
}

/// Writes `<element>_friction_{steady,sweep}.csv` and `<element>_friction.svg`.
pub(crate) fn friction_curve(o: &FrictionCurveOptions) -> Result<(), Failure> {
    let model = &o.model;
    let cylinders = &model.hydraulics.cylinders;
    let Some(c) = cylinders.iter().position(|c| c.name == o.element) else {
        let names: Vec<&str> = cylinders.iter().map(|c| c.name.as_str()).collect();
        return Err(Failure::invalid_input(format!(
            "--element '{}': no cylinder of that name; cylinders: {}",
            o.element,
            if names.is_empty() {
                "(none)".to_string()
            } else {
                names.join(", ")
            }
        )));
    };
    let law = &cylinders[c].friction;
    // the hydraulic force at t = 0, for the efficiency law (F_μ ∝ |F_h|)
    let f_hyd = match law {
        hydraulink::model::Friction::Efficiency { .. } => {
            let sim = Simulation::new(model.clone())
                .map_err(|e| Failure::invalid_input(format!("initialization failed: {e}")))?;
            sim.workspace().ev.cylinder_force[c] + sim.workspace().ev.friction_force[c]
        }
        _ => 0.0,
    };
    let (a, b) = o.v_range;
    let steady = friction::curve::steady_curve(law, f_hyd, a, b, 801);
    // slow sweep over the same range: 2 periods, 2000 samples per period
    let sweep = friction::curve::sweep(
        law,
        f_hyd,
        0.5 * (a + b),
        0.5 * (b - a),
        o.period_s,
        2.0,
        o.period_s / 2000.0,
    );
    let files = hydraulink_io::output::write_friction_curve(
        &o.out,
        &o.element,
        friction::law_name(law),
        friction::state_names(law),
        &steady,
        &sweep,
    )
    .map_err(|e| Failure::run_failed(e.to_string()))?;
    for f in files {
        println!("wrote {}", f.display());
    }
    Ok(())
}

//! `hydraulink friction-curve MODEL --element NAME [--v-range A,B]`: the friction–velocity
//! characteristic of one cylinder's seal or joint's friction (003 Pub II Fig. 9), as CSV and SVG.

use std::path::PathBuf;

use hydraulink::elements::friction;
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
    // a cylinder's seal, or the friction of a joint
    let (law, f_hyd) = if let Some(c) = model.cylinders().position(|c| c.name == o.element) {
        let law = &model.cylinder(c).friction;
        // the hydraulic force at t = 0, for the efficiency law (F_μ ∝ |F_h|)
        let f_hyd = match law {
            hydraulink::model::Friction::Efficiency { .. } => {
                let sim = Simulation::new(model.clone())
                    .map_err(|e| Failure::invalid_input(format!("initialization failed: {e}")))?;
                sim.workspace().ev.cylinder_force[c] + sim.workspace().ev.friction_force[c]
            }
            _ => 0.0,
        };
        (law, f_hyd)
    } else if let Some(j) = model.joint_friction.iter().find(|j| j.joint == o.element) {
        (&j.friction, 0.0)
    } else {
        let names: Vec<&str> = model
            .cylinders()
            .map(|c| c.name.as_str())
            .chain(model.joint_friction.iter().map(|j| j.joint.as_str()))
            .collect();
        return Err(Failure::invalid_input(format!(
            "--element '{}': no cylinder or joint with friction of that name; cylinders and joints with friction: {}",
            o.element,
            if names.is_empty() {
                "(none)".to_string()
            } else {
                names.join(", ")
            }
        )));
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

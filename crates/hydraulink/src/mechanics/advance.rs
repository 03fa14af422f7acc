//! Stage `advance`, shared by every formulation: the end-stop check, the committed pressures
//! with their rates and cavitation onsets, the actuator work, and the clock.

use crate::circuit::reduced;
use crate::elements::hydraulics::{cylinder, CylinderMotion};
use crate::model::Model;
use crate::state::State;
use crate::{StepError, StepReport};

/// End stops: a cylinder without an end-stop element that leaves its stroke is an error; one
/// with an end stop may go past its stroke ends by up to the stop's largest penetration.
pub fn check_stroke(
    model: &Model,
    st: &State,
    motion: &[CylinderMotion<f64>],
) -> Result<(), StepError> {
    for (c, cyl) in model.cylinders().enumerate() {
        let la = motion[c].s - cyl.retracted_length_m;
        // an end stop (`mechanics::end_stop`) holds the piston up to its largest penetration
        // its end-stop element, found once at compile (`Model::cylinder_end_stop`)
        let stop = match model.cylinder_end_stop.get(c).copied().flatten() {
            Some(i) => match &model.elements()[i] {
                crate::elements::component::Component::EndStop(s) => Some(s),
                _ => None,
            },
            None => None,
        };
        if let Some(stop) = stop {
            let penetration = (-la).max(la - cyl.stroke_m);
            if penetration > stop.max_penetration_m {
                return Err(StepError::EndStopOverrun {
                    time_s: st.t_s,
                    step: st.step,
                    element: stop.name.clone(),
                    cylinder: cyl.name.clone(),
                    penetration_m: penetration,
                    max_m: stop.max_penetration_m,
                });
            }
            continue;
        }
        if !(0.0..=cyl.stroke_m).contains(&la) {
            return Err(StepError::OutOfStroke {
                time_s: st.t_s,
                step: st.step,
                cylinder: cyl.name.clone(),
                chamber_m: la,
                stroke_m: cyl.stroke_m,
            });
        }
    }
    Ok(())
}

/// Commits p_{k+1} of every volume; `new(v)` gives (p_{k+1}, trapezoidal ṗ_{k+1}). Algebraic
/// volumes take their rates from `reduced::committed_rates`. Returns the cavitation-onset bits
/// (volume v dropped below 0 Pa in this step, v < 64).
pub fn commit_pressures(
    model: &Model,
    st: &mut State,
    dt: f64,
    new: impl Fn(usize) -> (f64, f64),
) -> u64 {
    let mut onsets = 0u64;
    for (v, volume) in model.hydraulics.volumes.iter().enumerate() {
        let (p_new, pd_trapezoidal) = new(v);
        if p_new < 0.0 && st.p[v] >= 0.0 && v < 64 {
            onsets |= 1 << v;
        }
        let (pd_new, pdd_new) =
            reduced::committed_rates(volume, st.p[v], p_new, st.pd[v], pd_trapezoidal, dt);
        st.p[v] = p_new;
        st.pd[v] = pd_new;
        st.pdd[v] = pdd_new;
    }
    onsets
}

/// Actuator work by the trapezoidal rule, W_c += Δt/2 (P_c,k + P_c,k+1), P = F ṡ the
/// cylinder's mechanical power (`cylinder::line_power`, `Cylinder::mechanical_power`) with the
/// force the formulation applied; then the clock: t = (k + 1) Δt from the step count, so no
/// round-off accumulates.
pub fn work_and_clock(st: &mut State, force: &[f64], motion: &[CylinderMotion<f64>], dt: f64) {
    for (c, (f, m)) in force.iter().zip(motion.iter()).enumerate() {
        let power = cylinder::line_power(*f, m.sd);
        st.actuator_work_j[c] += 0.5 * dt * (st.actuator_power_w[c] + power);
        st.actuator_power_w[c] = power;
    }
    st.step += 1;
    st.t_s = st.step as f64 * dt;
}

/// Joint-friction work D_j += Δt/2 (P_k + P_k+1), P = F_μ ż, into the entries after the
/// cylinders' (not into any actuator work).
/// Call after the committed ż is in `st.zd`.
pub fn joint_friction_work(st: &mut State, model: &crate::model::Model, friction: &[f64], dt: f64) {
    let nc = model.n_cylinders();
    for (j, (jf, f)) in model.joint_friction.iter().zip(friction.iter()).enumerate() {
        let zd = &st.zd;
        let power = f * zd[jf.axis.0];
        st.friction_dissipated_j[nc + j] += 0.5 * dt * (st.friction_power_w[nc + j] + power);
        st.friction_power_w[nc + j] = power;
        st.friction_velocity_m_s[nc + j] = zd[jf.axis.0];
    }
}

/// Friction work by the trapezoidal rule, D_c += Δt/2 (P_μ,k + P_μ,k+1), P_μ = F_μ ṡ. The same
/// increment is added to the actuator work, which thereby becomes the hydraulic work
/// ∫ (p_A A_A − p_B A_B) ṡ dt, so that KE + PE − W + D stays constant (003 Pub II §4; the drift
/// of `Simulation::energy_drift_j`). Call before [`work_and_clock`]. A formulation that does not
/// call it reports the net work ∫ F ṡ dt and D = 0: the drift is the same.
pub fn friction_work(st: &mut State, friction: &[f64], motion: &[CylinderMotion<f64>], dt: f64) {
    for (c, (f, m)) in friction.iter().zip(motion.iter()).enumerate() {
        // the cylinder's friction power F_μ ṡ (its `Element::power`, `dissipated_w`)
        let power = cylinder::line_power(*f, m.sd);
        let d = 0.5 * dt * (st.friction_power_w[c] + power);
        st.friction_dissipated_j[c] += d;
        st.actuator_work_j[c] += d;
        st.friction_power_w[c] = power;
    }
}

/// Stage `commit`, end: KE = ½ żᵀM′ż, PE and ‖Φ‖ of the accepted step into
/// `report`, from the evaluator's last evaluation and the committed rates `zd`.
pub fn energies_and_violation(
    model: &Model,
    ev: &crate::mechanics::assembly::Evaluator<f64>,
    zd: &[f64],
    report: &mut crate::StepReport,
) {
    let (ke, pe) = if ev.dynamics.form_mass {
        crate::mechanics::energy::energies(model, &ev.dynamics, zd)
    } else {
        // no dense M′ (a tree under the penalty formulation): KE body by body, with the frame
        // velocities of the evaluator's last `velocities` call, which are at `zd`
        (
            crate::mechanics::semirecursive::recursive_mass::kinetic_energy(
                model,
                &ev.kin,
                &ev.dynamics,
            ),
            crate::mechanics::energy::potential(model, &ev.dynamics),
        )
    };
    report.kinetic_j = ke;
    report.potential_j = pe;
    report.constraint_violation = ev.constraints.phi.iter().map(|p| p * p).sum::<f64>().sqrt();
}

/// Commit of the natural-coordinate formulations: p and ṗ (`pd` of volume v), the natural state
/// [q | q̇ | q̈ | λ] and the relative one recovered from it.
#[allow(clippy::too_many_arguments)]
pub fn commit_natural(
    model: &Model,
    st: &mut State,
    report: &mut StepReport,
    (q, qd, qdd): (&[f64], &[f64], &[f64]),
    lambda: &[f64],
    pd: impl Fn(usize) -> (f64, f64),
) {
    let dt = model.solver.step_s;
    report.cavitation_onsets = commit_pressures(model, st, dt, pd);
    let ns = st
        .formulation
        .natural_mut()
        .expect("the natural state is filled by ensure_natural_state before the step");
    ns.q.copy_from_slice(q);
    ns.qd.copy_from_slice(qd);
    ns.qdd.copy_from_slice(qdd);
    ns.lambda.copy_from_slice(lambda);
    crate::mechanics::global::natural(model).to_relative(
        model,
        q,
        qd,
        qdd,
        &mut st.z,
        &mut st.zd,
        &mut st.zdd,
    );
}

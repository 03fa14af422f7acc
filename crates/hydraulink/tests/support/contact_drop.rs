//! A brick (10 kg, 0.4 × 0.2 × 0.3 m) on a free joint over the ground plane y = 0, with an
//! `obb_contact` element. Include it with `#[path = "support/contact_drop.rs"] mod contact_drop;`.

/// The model: the brick's centre starts at height `y0` [m] with the Cardan angles `angles`
/// [rad], the initial rates `qd0` (x, y, z [m/s], then the angle rates [rad/s]); contact
/// stiffness 1e6 N/m, damping `damping` [N s/m] growing in over the depth `ramp` [m]; step `step_s`, duration `duration_s`.
pub fn drop_toml(
    y0: f64,
    angles: [f64; 3],
    qd0: [f64; 6],
    damping: f64,
    step_s: f64,
    duration_s: f64,
    ramp: f64,
) -> String {
    format!(
        r#"
name = "drop"
description = "a brick dropped on the ground"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "brick"
mass_kg = 10.0
com = [0.0, 0.0, 0.0]
inertia = [0.108333333333, 0.208333333333, 0.166666666667, 0.0, 0.0, 0.0]
markers = {{ centre = [0.0, 0.0, 0.0] }}

[[joints]]
name = "free"
type = "free"
parent = "ground"
child = "brick"
location = [0.0, 0.0, 0.0]
q0 = [0.0, {y0}, 0.0, {a0}, {a1}, {a2}]
qd0 = {qd0:?}

[[elements]]
type = "obb_contact"
name = "floor"
body = "brick"
marker = "centre"
half_extents_m = [0.2, 0.1, 0.15]
stiffness_n_m = 1.0e6
damping_n_s_m = {damping:?}
damping_ramp_m = {ramp:?}
obstacle = {{ kind = "plane", point_m = [0.0, 0.0, 0.0], normal = [0.0, 1.0, 0.0] }}

[solver]
step_s = {step_s:?}
duration_s = {duration_s:?}
tolerance_position = 1e-10
"#,
        a0 = angles[0],
        a1 = angles[1],
        a2 = angles[2],
    )
}

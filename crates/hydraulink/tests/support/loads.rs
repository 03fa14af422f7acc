//! A small model carrying every mechanical load element: a planar pendulum (one revolute joint)
//! with a spring–damper to the ground, a point force in global and one in body axes, a torque
//! and a joint force driven by the input `F`. Include it with
//! `#[path = "support/loads.rs"] mod loads;`.

/// The pendulum's TOML text. `natural`: only the elements the natural-coordinate formulations
/// carry (the spring–damper and the point force in global axes).
pub fn loads_toml(natural: bool) -> String {
    let mut s = String::from(
        r#"
name = "loads"
description = "pendulum with a spring-damper, point forces, a torque and an input-driven joint force"
gravity = [0.0, -9.81, 0.0]

[ground.markers]
A = [0.5, 0.5, 0.0]

[[bodies]]
name = "arm"
mass_kg = 2.0
com = [0.5, 0.0, 0.0]
inertia = [0.001, 0.17, 0.17, 0.0, 0.0, 0.0]
markers = { tip = [1.0, 0.0, 0.0], mid = [0.5, 0.0, 0.0] }

[[joints]]
name = "z1"
type = "revolute"
parent = "ground"
child = "arm"
location = [0.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
q0 = 0.3

[[elements]]
type = "spring_damper"
name = "spring"
end1 = { body = "ground", marker = "A" }
end2 = { body = "arm", marker = "mid" }
stiffness_n_m = 200.0
damping_n_s_m = 2.0
free_length_m = 0.5

[[elements]]
type = "point_force"
name = "push"
body = "arm"
marker = "tip"
force_n = [1.0, 2.0, 0.0]
"#,
    );
    if !natural {
        s.push_str(
            r#"
[[elements]]
type = "point_force"
name = "follower"
body = "arm"
marker = "tip"
force_n = [0.0, -3.0, 0.0]
axes = "body"

[[elements]]
type = "torque"
name = "twist"
body = "arm"
torque_n_m = [0.0, 0.0, 0.5]
axes = "global"

[[elements]]
type = "joint_force"
name = "drive"
joint = "z1"
value = 1.0
input = "F"
"#,
        );
    }
    s.push_str(
        r#"
[[inputs]]
name = "F"
signal = { type = "sine", amplitude = 4.0, frequency_hz = 1.0, phase_rad = 0.0 }

[solver]
formulation = "penalty"
step_s = 1.0e-3
duration_s = 3.0
penalty = 1.0e9
tolerance_position = 1.0e-9
max_iterations = 25
"#,
    );
    s
}

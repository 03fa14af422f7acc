//! The hydraulic element laws (lumped fluid theory, 000 §3): valves, orifices, pumps, the
//! cylinder, the fluid. The circuit that connects them over the compiled model (node pressures,
//! flows, the volumes' pressure rates) is `crate::circuit`, above the model.

pub mod accumulator;
pub mod bridge_valve;
pub mod check_valve;
pub mod counterbalance_valve;
pub mod cylinder;
pub mod fixed_pump;
pub mod flow_control_valve;
pub mod fluid;
pub mod hose;
pub mod hydraulic_motor;
pub mod ls_shuttle;
pub mod orifice;
pub mod pc_pump;
pub mod port_relief;
pub mod relief_valve;
pub mod throttle;
pub mod valve_4_3;

pub use cylinder::CylinderMotion;

//! Basic mechanics invariants: free body, 3-D pendulum, four-bar kinematics in closed form.
mod basic_mechanics;
mod spatial;

//! Basic mechanics invariants: free body, 3-D pendulum, four-bar kinematics in closed form, the
//! n-link chain's energy balance.
mod basic_mechanics;
mod boom;
mod chain;
mod power_balance;
mod spatial;

//! Runs model files to the end of their duration and prints the final state bit for bit: every
//! entry of z, ż, p, the valve positions, the friction and internal states and the multipliers as
//! the hexadecimal bits of its f64, one block per model. Two builds compared with `cmp` show
//! whether a change kept the results bit-identical (issue 25's acceptance):
//!
//! ```text
//! cargo run --release --example final_state -- models/*.toml > after.txt
//! (cd ../old-tree && cargo run --release --example final_state -- models/*.toml) > before.txt
//! cmp before.txt after.txt
//! ```
//! A file that does not parse, compile, initialize or finish its run prints the error in its block
//! instead (so a failure that moves is a difference too).
use hydraulink::{ModelSpec, Simulation};

fn bits(name: &str, values: &[f64]) -> String {
    let hex: Vec<String> = values
        .iter()
        .map(|v| format!("{:016x}", v.to_bits()))
        .collect();
    format!("  {name} [{}]: {}\n", values.len(), hex.join(" "))
}

fn final_state(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let spec: ModelSpec = toml::from_str(&text).map_err(|e| format!("parse: {e}"))?;
    let model = hydraulink::compile(&spec).map_err(|e| format!("compile: {e}"))?;
    let mut sim = Simulation::new(model).map_err(|e| format!("initialize: {e}"))?;
    let n = (sim.model().duration_s() / sim.model().step_s()).round() as u64;
    for k in 0..n {
        sim.step().map_err(|e| format!("step {k}: {e}"))?;
    }
    let st = sim.state();
    let mut out = format!("  t {:016x} step {}\n", st.t_s.to_bits(), st.step);
    for (name, values) in [
        ("z", &st.z),
        ("zd", &st.zd),
        ("zdd", &st.zdd),
        ("p", &st.p),
        ("pd", &st.pd),
        ("spool", &st.spool),
        ("friction", &st.friction),
        ("internal", &st.internal),
        ("lambda", &st.lambda),
        ("actuator_work_j", &st.actuator_work_j),
    ] {
        out.push_str(&bits(name, values));
    }
    Ok(out)
}

fn main() {
    for path in std::env::args().skip(1) {
        println!("{path}");
        match final_state(&path) {
            Ok(block) => print!("{block}"),
            Err(e) => println!("  error: {e}"),
        }
    }
}

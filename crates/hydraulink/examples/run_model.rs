//! Loads a model file, runs it, prints a few diagnostics. `cargo run --example run_model -- models/fourbar.toml`
use hydraulink::{ModelSpec, Simulation};

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or("models/fourbar.toml".into());
    let text = std::fs::read_to_string(&path).expect("read model");
    let spec: ModelSpec = toml::from_str(&text).expect("parse");
    let model = hydraulink::compile(&spec).expect("compile");
    let mut sim = Simulation::new(model).expect("init");
    println!(
        "z0 = {:?}\np0 = {:?}\nlambda0 = {:?}",
        sim.state().z,
        sim.state().p,
        sim.state().lambda
    );
    let labels = sim.output_labels();
    let mut row = vec![0.0; labels.len()];
    let n = (sim.model().duration_s() / sim.model().step_s()).round() as u64;
    let (mut it_sum, mut it_max, mut drift_max, mut work_max, mut viol_max) =
        (0u64, 0u32, 0.0f64, 0.0f64, 0.0f64);
    let t0 = std::time::Instant::now();
    for k in 0..n {
        let r = match sim.step() {
            Ok(r) => r,
            Err(e) => {
                println!("error: {e}");
                break;
            }
        };
        it_sum += r.iterations as u64;
        it_max = it_max.max(r.iterations);
        drift_max = drift_max.max(sim.energy_drift_j().abs());
        work_max = work_max.max(sim.state().total_actuator_work_j());
        viol_max = viol_max.max(r.constraint_violation);
        if k % 500 == 499 {
            sim.output_row(&mut row);
            let s: Vec<String> = labels
                .iter()
                .zip(&row)
                .map(|(l, v)| format!("{l}={v:.5e}"))
                .collect();
            println!("{}", s.join(" "));
        }
    }
    println!("{:?}", sim.workspace().counters);
    // the final state to the last bit (shortest round-trip form), to compare two builds
    let st = sim.state();
    println!(
        "final t = {:?}\nz = {:?}\nzd = {:?}\nzdd = {:?}\np = {:?}\nlambda = {:?}",
        st.t_s, st.z, st.zd, st.zdd, st.p, st.lambda
    );
    println!(
        "wall {:.3}s avg it {:.3} max it {} peak drift {:.4} J peak work {:.3} J peak viol {:.3e}",
        t0.elapsed().as_secs_f64(),
        it_sum as f64 / n as f64,
        it_max,
        drift_max,
        work_max,
        viol_max
    );
}

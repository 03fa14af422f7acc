//! The global ALI3-P step loop allocates nothing (STYLE convention 4). Own test binary: it
//! installs a counting global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use hydraulink::model::spec::Formulation;

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn check(name: &str) {
    let path = format!("{}/../../models/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let spec: hydraulink::ModelSpec =
        toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut model = hydraulink::model::compile(&spec).unwrap();
    model.solver.formulation = Formulation::GlobalAli3p;
    let mut sim = hydraulink::Simulation::new(model).unwrap();
    let mut row = vec![0.0; sim.n_outputs()];
    // the first step converts the initial relative state into natural coordinates (allocates once)
    sim.step().unwrap();
    let before = ALLOCS.load(Ordering::SeqCst);
    // 0.001 … 3 s: rest, valve opening (tangent refreshes), motion, valve closing
    for _ in 0..3000 {
        sim.step().unwrap();
        sim.output_row(&mut row);
    }
    let after = ALLOCS.load(Ordering::SeqCst);
    assert_eq!(
        after - before,
        0,
        "{name}: {} allocations in 3000 steps",
        after - before
    );
}

#[test]
fn global_ali3p_step_loop_allocates_nothing() {
    // One test function: the counter is global, so the two models run one after the other.
    check("fourbar");
    check("quickreturn");
}

use hydraulink::linalg::{DenseCholesky, DenseLu};
fn main() {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let reps = 200_000;
    let mut x = 12345u64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x as f64 / u64::MAX as f64) * 2.0 - 1.0
    };
    let b: Vec<f64> = (0..n * n).map(|_| rnd()).collect();
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let mut v = if i == j { n as f64 } else { 0.0 };
            for k in 0..n {
                v += b[k * n + i] * b[k * n + j];
            }
            a[j * n + i] = v;
        }
    }
    let mut lu = DenseLu::new(n);
    let t = std::time::Instant::now();
    for _ in 0..reps {
        lu.values_mut().copy_from_slice(&a);
        lu.factor().unwrap();
    }
    let tl = t.elapsed().as_secs_f64() / reps as f64 * 1e9;
    let mut ch = DenseCholesky::new(n);
    let t = std::time::Instant::now();
    for _ in 0..reps {
        ch.values_mut().copy_from_slice(&a);
        ch.factor().unwrap();
    }
    let tc = t.elapsed().as_secs_f64() / reps as f64 * 1e9;
    // faer LLT
    let m = faer::Mat::<f64>::from_fn(n, n, |i, j| a[j * n + i]);
    let t = std::time::Instant::now();
    let mut s = 0.0;
    for _ in 0..reps {
        let l = m.as_ref().llt(faer::Side::Lower).unwrap();
        s += l.L()[(0, 0)];
    }
    let tf = t.elapsed().as_secs_f64() / reps as f64 * 1e9;
    println!("n={n}: LU {tl:.0} ns, Cholesky {tc:.0} ns, faer llt (allocating) {tf:.0} ns {s:.1}");
}

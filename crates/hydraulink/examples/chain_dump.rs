#[path = "../tests/support/chain.rs"]
mod chain;
fn main() {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    print!("{}", chain::chain_toml(n, 1.0));
}

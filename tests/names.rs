// names in Rust: legacy and v0 manglings perf demangles (test_names.py
// builds it with rustc where one is found). Prints "ready", runs ARGV[1]
// seconds.
mod work {
    #[inline(never)]
    pub fn spin(n: u64) -> u64 {
        let mut x = n;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(2862933555777941757).wrapping_add(i);
        }
        x
    }
    pub struct Acc<T> { pub v: T }
    impl<T: Copy + Into<u64>> Acc<T> {
        #[inline(never)]
        pub fn add(&self, n: u64) -> u64 { spin(n ^ self.v.into()) }
    }
}
fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let t = std::time::Instant::now();
    let a = work::Acc { v: 7u32 };
    let mut s = 0u64;
    println!("ready");
    while t.elapsed().as_secs_f64() < secs {
        s = s.wrapping_add(work::spin(s));
        s = s.wrapping_add(a.add(s));
    }
    println!("{}", s);
}

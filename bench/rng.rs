//! The benchmarks' deterministic random numbers (fixed seeds, so every run
//! samples the same queries).

/// splitmix64: a tiny deterministic generator for sampling.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// `n` items of `v` chosen at random (all of them for `n == 0`).
    pub fn sample<T>(&mut self, mut v: Vec<T>, n: usize) -> Vec<T> {
        if n == 0 || v.len() <= n {
            return v;
        }
        for i in 0..n {
            let j = i + self.below(v.len() - i);
            v.swap(i, j);
        }
        v.truncate(n);
        v
    }
}

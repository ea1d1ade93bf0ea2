use std::time::{Duration, Instant};
use svc_script::{Host, Scripts};
struct H;
impl Host for H {
    fn call(&mut self, _: &[&[u8]]) -> &[u8] { b":1\r\n" }
    fn log(&mut self, _: u8, _: &[u8]) {}
}
fn main() {
    let s = Scripts::new(1 << 30).unwrap();
    let body = "local n = 0 for i = 1, 1000000 do n = n + i end return n";
    let id = s.load(&"a".repeat(40), body.as_bytes()).unwrap();
    for _ in 0..5 {
        s.words_for_next_run().extend_from_slice(&0u32.to_le_bytes());
        let t = Instant::now();
        s.start(id, 0, Duration::from_secs(5), &mut H);
        println!("{:.1} ns/iter", t.elapsed().as_nanos() as f64 / 1e6);
    }
}

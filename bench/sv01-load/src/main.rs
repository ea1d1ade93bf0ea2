//! sv01-load: drives the broker's SV01 binary protocol so that a benchmark measures the broker,
//! not a JavaScript client. It sends one prebuilt request payload (produce or consume, made and,
//! with gzip or lz4, compressed by the benchmark) over `connections` connections, `depth` requests in
//! flight on each, for `seconds`, and prints one JSON line: requests per second and the p50 and
//! p99 latency in milliseconds. Any error frame or closed connection fails the run (exit 1), so a
//! table never shows the rate of errors.
//!
//! usage: sv01-load <host:port> <payload-file> <opcode> <features> <token-or-"-"> <connections> <depth> <seconds>

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const MAGIC: &[u8; 4] = b"SV01";
const ERROR_OPCODE: u8 = 0xff;

fn fail(message: &str) -> ! {
    eprintln!("sv01-load: {message}");
    std::process::exit(1);
}

/// Connects and completes the handshake; fails the run if it is refused.
fn connect(address: &str, features: u32, token: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap_or_else(|e| fail(&format!("connect {address}: {e}")));
    stream.set_nodelay(true).ok();
    let mut hello = Vec::with_capacity(12 + token.len());
    hello.extend_from_slice(MAGIC);
    hello.extend_from_slice(&features.to_be_bytes());
    hello.extend_from_slice(&(token.len() as u32).to_be_bytes());
    hello.extend_from_slice(token);
    stream.write_all(&hello).unwrap_or_else(|e| fail(&format!("handshake: {e}")));
    let mut head = [0u8; 13];
    stream.read_exact(&mut head).unwrap_or_else(|e| fail(&format!("handshake answer: {e}")));
    let message_len = u32::from_be_bytes([head[9], head[10], head[11], head[12]]) as usize;
    let mut message = vec![0u8; message_len];
    stream.read_exact(&mut message).ok();
    if &head[0..4] != MAGIC || head[4] != 0 {
        fail(&format!("handshake refused (status {}): {}", head[4], String::from_utf8_lossy(&message)));
    }
    stream
}

fn frame(request_id: u32, opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + payload.len());
    out.extend_from_slice(&((5 + payload.len()) as u32).to_be_bytes());
    out.extend_from_slice(&request_id.to_be_bytes());
    out.push(opcode);
    out.extend_from_slice(payload);
    out
}

/// One connection's loop: keeps `depth` requests in flight until `until`; answers latencies in µs.
fn drive(mut stream: TcpStream, payload: Arc<Vec<u8>>, opcode: u8, depth: usize, until: Instant) -> Vec<u32> {
    let mut latencies = Vec::new();
    let mut sent_at = std::collections::HashMap::new();
    let mut next_id: u32 = 1;
    let mut reader = stream.try_clone().expect("clone");
    let send = |stream: &mut TcpStream, sent_at: &mut std::collections::HashMap<u32, Instant>, next_id: &mut u32| {
        let bytes = frame(*next_id, opcode, &payload);
        sent_at.insert(*next_id, Instant::now());
        *next_id += 1;
        stream.write_all(&bytes).unwrap_or_else(|e| fail(&format!("write: {e}")));
    };
    for _ in 0..depth {
        send(&mut stream, &mut sent_at, &mut next_id);
    }
    let mut head = [0u8; 9];
    let mut body = Vec::new();
    while !sent_at.is_empty() {
        reader.read_exact(&mut head).unwrap_or_else(|e| fail(&format!("read: {e}")));
        let length = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let request_id = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
        body.resize(length - 5, 0);
        reader.read_exact(&mut body).unwrap_or_else(|e| fail(&format!("read: {e}")));
        if head[8] == ERROR_OPCODE {
            fail(&format!("error frame for request {request_id} ({} bytes, maybe gzip)", body.len()));
        }
        let started = sent_at.remove(&request_id).unwrap_or_else(|| fail(&format!("an answer to request {request_id}, never sent")));
        latencies.push(started.elapsed().as_micros() as u32);
        if Instant::now() < until {
            send(&mut stream, &mut sent_at, &mut next_id);
        }
    }
    latencies
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 9 {
        fail("usage: sv01-load <host:port> <payload-file> <opcode> <features> <token-or-\"-\"> <connections> <depth> <seconds>");
    }
    let payload = Arc::new(std::fs::read(&args[2]).unwrap_or_else(|e| fail(&format!("{}: {e}", args[2]))));
    let opcode: u8 = args[3].parse().unwrap_or_else(|_| fail("opcode"));
    let features: u32 = args[4].parse().unwrap_or_else(|_| fail("features"));
    let token = if args[5] == "-" { Vec::new() } else { args[5].clone().into_bytes() };
    let connections: usize = args[6].parse().unwrap_or_else(|_| fail("connections"));
    let depth: usize = args[7].parse().unwrap_or_else(|_| fail("depth"));
    let seconds: f64 = args[8].parse().unwrap_or_else(|_| fail("seconds"));
    let streams: Vec<TcpStream> = (0..connections).map(|_| connect(&args[1], features, &token)).collect();
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(seconds);
    let all = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<_> = streams
        .into_iter()
        .map(|stream| {
            let payload = Arc::clone(&payload);
            let all = Arc::clone(&all);
            thread::spawn(move || {
                let latencies = drive(stream, payload, opcode, depth, until);
                all.lock().unwrap().extend(latencies);
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap_or_else(|_| fail("a connection's thread failed"));
    }
    let elapsed = start.elapsed().as_secs_f64();
    let mut latencies = all.lock().unwrap().clone();
    latencies.sort_unstable();
    let at = |q: f64| latencies.get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1))).copied().unwrap_or(0) as f64 / 1000.0;
    println!(
        "{{\"requests_per_sec\":{:.1},\"p50_ms\":{:.3},\"p99_ms\":{:.3},\"requests\":{}}}",
        latencies.len() as f64 / elapsed,
        at(0.5),
        at(0.99),
        latencies.len()
    );
}

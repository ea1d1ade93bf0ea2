//! A RESP server that does no work: it answers `+OK` to every whole command and keeps nothing.
//!
//! `svc bench kv` runs redis-benchmark against it beside redis-server and svc, to show the rate
//! the client drives when a request costs the server nothing. At -P 16 that is far above both
//! real servers. At -P 1 on two cores it is no higher than theirs, so the ratio of the two there
//! measures the client and the scheduler more than either server.
//!
//! It is shaped like Redis's event loop, so that it differs from Redis only in doing nothing:
//! one epoll wait, one read per readable connection, then one write per connection that got a
//! command, after every read of the turn (Redis writes its replies before it sleeps again).
//!
//! Usage: `null-server PORT` (0 picks a free one); it prints `listening on 127.0.0.1:<port>`.

mod epoll;
mod resp;

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};

/// Bytes read from a connection at a time; redis-benchmark's pipelines of 16 fit many times.
const READ_BYTES: usize = 64 * 1024;
/// Readiness events taken per wait.
const EVENTS_MAX: usize = 256;
const OK: &[u8] = b"+OK\r\n";

struct Connection {
    stream: TcpStream,
    /// The start of a command whose end has not arrived yet.
    partial: Vec<u8>,
    /// Commands read this turn and not answered yet.
    unanswered: usize,
}

fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))?;
    listener.set_nonblocking(true)?;
    println!("listening on {}", listener.local_addr()?);

    let mut poll = epoll::Epoll::new()?;
    let listener_fd = listener.as_raw_fd();
    poll.watch(listener_fd)?;
    let mut connections: HashMap<RawFd, Connection> = HashMap::new();
    let mut ready = vec![0 as RawFd; EVENTS_MAX];
    let mut to_answer: Vec<RawFd> = Vec::with_capacity(EVENTS_MAX);
    let mut buffer = vec![0u8; READ_BYTES];
    let mut replies: Vec<u8> = Vec::new();

    loop {
        let count = poll.wait(&mut ready)?;
        to_answer.clear();
        for &fd in &ready[..count] {
            if fd == listener_fd {
                accept_all(&listener, &poll, &mut connections)?;
                continue;
            }
            let Some(connection) = connections.get_mut(&fd) else { continue };
            match connection.stream.read(&mut buffer) {
                Ok(0) => drop(connections.remove(&fd)),
                Ok(n) => {
                    connection.partial.extend_from_slice(&buffer[..n]);
                    match resp::whole_commands(&connection.partial) {
                        Some((commands, used)) => {
                            connection.partial.drain(..used);
                            if commands > 0 && connection.unanswered == 0 {
                                to_answer.push(fd);
                            }
                            connection.unanswered += commands;
                        }
                        // Not RESP: a benchmark client never sends that, so just hang up.
                        None => drop(connections.remove(&fd)),
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => drop(connections.remove(&fd)),
            }
        }
        for fd in &to_answer {
            let Some(connection) = connections.get_mut(fd) else { continue };
            replies.clear();
            for _ in 0..connection.unanswered {
                replies.extend_from_slice(OK);
            }
            connection.unanswered = 0;
            // A client that waits for its replies never fills a socket buffer with them.
            if connection.stream.write_all(&replies).is_err() {
                connections.remove(fd);
            }
        }
    }
}

fn accept_all(listener: &TcpListener, poll: &epoll::Epoll, connections: &mut HashMap<RawFd, Connection>) -> std::io::Result<()> {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(true)?;
                stream.set_nodelay(true)?;
                let fd = stream.as_raw_fd();
                poll.watch(fd)?;
                connections.insert(fd, Connection { stream, partial: Vec::new(), unanswered: 0 });
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

//! Linux's epoll, declared by hand: the server needs three calls, not a crate.

use std::io;
use std::os::fd::RawFd;

const EPOLL_CTL_ADD: i32 = 1;
const EPOLLIN: u32 = 0x001;
const EPOLL_CLOEXEC: i32 = 0o2_000_000;

/// The kernel's `struct epoll_event`, which is packed on x86-64 only.
#[cfg_attr(target_arch = "x86_64", repr(C, packed))]
#[cfg_attr(not(target_arch = "x86_64"), repr(C))]
#[derive(Clone, Copy)]
struct Event {
    events: u32,
    data: u64,
}

extern "C" {
    fn epoll_create1(flags: i32) -> i32;
    fn epoll_ctl(epfd: i32, op: i32, fd: i32, event: *mut Event) -> i32;
    fn epoll_wait(epfd: i32, events: *mut Event, maxevents: i32, timeout: i32) -> i32;
    fn close(fd: i32) -> i32;
}

fn check(result: i32) -> io::Result<i32> {
    if result < 0 { Err(io::Error::last_os_error()) } else { Ok(result) }
}

pub struct Epoll {
    fd: RawFd,
    events: Vec<Event>,
}

impl Epoll {
    pub fn new() -> io::Result<Self> {
        // SAFETY: no pointers; the result is checked.
        let fd = check(unsafe { epoll_create1(EPOLL_CLOEXEC) })?;
        Ok(Epoll { fd, events: Vec::new() })
    }

    /// Level-triggered readability of `fd`, reported as `fd` itself. A closed descriptor leaves
    /// the set by itself.
    pub fn watch(&self, fd: RawFd) -> io::Result<()> {
        let mut event = Event { events: EPOLLIN, data: fd as u64 };
        // SAFETY: `event` outlives the call, which copies it.
        check(unsafe { epoll_ctl(self.fd, EPOLL_CTL_ADD, fd, &mut event) }).map(|_| ())
    }

    /// Blocks until something is readable; fills `ready` with those descriptors and says how many.
    pub fn wait(&mut self, ready: &mut [RawFd]) -> io::Result<usize> {
        let events = &mut self.events;
        events.resize(ready.len(), Event { events: 0, data: 0 });
        // SAFETY: the buffer holds `ready.len()` events, the most the kernel is told to write.
        let count = loop {
            match check(unsafe { epoll_wait(self.fd, events.as_mut_ptr(), ready.len() as i32, -1) }) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other? as usize,
            }
        };
        for (slot, event) in ready.iter_mut().zip(&events[..count]) {
            *slot = event.data as RawFd;
        }
        Ok(count)
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours and closed once.
        unsafe { close(self.fd) };
    }
}

//! The kv server's RESP request scanner. One call covers a whole read buffer: it finds every
//! complete multibulk command (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`) and reports each argument as a
//! pair of offsets into the buffer, so the JavaScript side makes its strings straight from the
//! buffer and crosses into native code once per read, not once per argument.
//!
//! The reference is svc's TypeScript parser, `RespParser` in src/kv/resp/parser.ts: for any input,
//! split anywhere, the scanner must find the same commands, raise the same protocol errors at the
//! same bytes and leave the same bytes unconsumed. Inline commands (`GET k\r\n`) are rare and left
//! to that parser's line splitter; the scanner stops where one starts.

mod header;
mod scan;

pub use scan::{scan, Limits, Progress, ProtocolError, Scan, Stop, OUT_WORDS_MIN};

#[cfg(test)]
mod tests;

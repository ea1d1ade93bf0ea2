//! Primitives of the broker's partition log that run natively: the CRC32C record checksum and the
//! batched, durable append of a segment file. Both are batch-shaped — one call covers a whole
//! record batch or a whole flush — because each crossing from JavaScript costs more than the work
//! on a small record.

pub mod append;
pub mod checksum;
pub mod frames;

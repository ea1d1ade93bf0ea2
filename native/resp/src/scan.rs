//! The scanner: one pass over a read buffer that finds where every argument of every multibulk
//! command lies, without copying any of them.

use crate::header::{self, Header};

/// Bounds a client cannot pass; each breach is a protocol error.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Bytes that may wait, from a header's prefix on, without the LF that ends the header.
    pub line_bytes_max: usize,
    /// Arguments in one command.
    pub args_max: u32,
    /// Length of one argument. A double because the TypeScript parser compares declared lengths
    /// as JavaScript numbers, and this must decide the same way for every length.
    pub bulk_bytes_max: f64,
}

/// Where the scan stands: the first byte not yet consumed, and the command in progress there.
/// A command cut off by the end of the input keeps the arguments it has (the caller keeps them),
/// so the next scan resumes at its next argument instead of re-reading it from its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub pos: usize,
    /// Arguments the command in progress still expects; 0 between commands.
    pub args_left: u32,
    /// Declared length of the argument whose bytes are awaited, once its `$` line is read.
    pub bulk_len: Option<u64>,
}

/// Why a scan stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Everything up to the end of the input is consumed, or the rest is an unfinished command.
    NeedMore,
    /// `out` is full; scan again from the returned progress with an emptied `out`.
    OutFull,
    /// An inline command starts at `pos`; the caller parses that line itself.
    Inline,
    /// A protocol error at `pos`; the connection answers it and closes.
    Error(ProtocolError),
}

/// The protocol errors a multibulk command can raise, named after Redis's messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// "too big mbulk count string": no LF in more than the line limit after a `*`.
    TooBigMbulkCount,
    /// "invalid multibulk length": the count is not a number, or above the limit.
    InvalidMultibulkLength,
    /// "expected '$', got '<the byte at pos>'".
    ExpectedDollar,
    /// "too big bulk count string": no LF in more than the line limit after a `$`.
    TooBigBulkCount,
    /// "invalid bulk length": the length is not a number, negative, or above the limit.
    InvalidBulkLength,
}

/// The result of one scan: why it stopped and how many words of `out` it wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scan {
    pub stop: Stop,
    pub words: usize,
}

/// The fewest words of `out` a scan needs to make progress: a record's count and one argument.
pub const OUT_WORDS_MIN: usize = 3;

/// Scans `buf` from `progress.pos`, consuming whole multibulk commands, and writes one record per
/// command into `out`: its argument count, then the start and end offset in `buf` of each argument.
/// `*0` and negative counts consume their line and write nothing.
///
/// When `progress.args_left` is non-zero on entry, the first record continues the command in
/// progress (it holds only the arguments found now). When it is non-zero on return, the last
/// record is that command's arguments so far; the record is written even when it holds none.
///
/// Stops at the end of complete input, a full `out`, an inline command or a protocol error, and
/// leaves `progress` exactly where svc's TypeScript parser would leave its own state there.
pub fn scan(buf: &[u8], limits: &Limits, progress: &mut Progress, out: &mut [u32]) -> Scan {
    assert!(out.len() >= OUT_WORDS_MIN, "out holds {} words, fewer than {OUT_WORDS_MIN}", out.len());
    assert!(u32::try_from(buf.len()).is_ok(), "offsets into {} bytes do not fit in u32", buf.len());
    // Short lengths are below 10^15, exact as doubles, so comparing them with the limit's floor
    // in integers decides as the double comparison does; a NaN or negative limit admits none.
    let quick_len_max = (limits.bulk_bytes_max >= 0.0).then(|| limits.bulk_bytes_max.min(1e15) as u64);
    let mut scanner = Scanner { buf, limits, progress: *progress, out, words: 0, record: 0, quick_len_max };
    if scanner.progress.args_left > 0 {
        scanner.open_record();
    }
    let stop = scanner.run();
    *progress = scanner.progress;
    Scan { stop, words: scanner.words }
}

struct Scanner<'a> {
    buf: &'a [u8],
    limits: &'a Limits,
    progress: Progress,
    out: &'a mut [u32],
    words: usize,
    /// Index in `out` of the count of the record being written.
    record: usize,
    /// Lengths up to this are within the bulk limit; see `quick_argument`.
    quick_len_max: Option<u64>,
}

impl Scanner<'_> {
    fn run(&mut self) -> Stop {
        loop {
            if self.progress.args_left == 0 {
                if let Err(stop) = self.start_command() {
                    return stop;
                }
                if self.progress.args_left == 0 {
                    continue; // an empty command
                }
            }
            if let Err(stop) = self.read_arguments() {
                return stop;
            }
        }
    }

    /// Reads a `*<count>` line and opens the command's record.
    fn start_command(&mut self) -> Result<(), Stop> {
        let pos = self.progress.pos;
        match self.buf.get(pos) {
            None => return Err(Stop::NeedMore),
            Some(b'*') => {}
            Some(_) => return Err(Stop::Inline),
        }
        if self.out.len() - self.words < OUT_WORDS_MIN {
            return Err(Stop::OutFull);
        }
        let count = match header::read(self.buf, pos, self.limits.line_bytes_max) {
            Header::Incomplete => return Err(Stop::NeedMore),
            Header::TooLong => return Err(Stop::Error(ProtocolError::TooBigMbulkCount)),
            Header::Invalid { next } => {
                self.progress.pos = next;
                return Err(Stop::Error(ProtocolError::InvalidMultibulkLength));
            }
            Header::Number { value, next } => {
                self.progress.pos = next;
                value
            }
        };
        if count > f64::from(self.limits.args_max) {
            return Err(Stop::Error(ProtocolError::InvalidMultibulkLength));
        }
        if count <= 0.0 {
            return Ok(());
        }
        self.progress.args_left = count as u32;
        self.open_record();
        Ok(())
    }

    /// Reads arguments until the command is complete; Err when the scan must stop first.
    fn read_arguments(&mut self) -> Result<(), Stop> {
        while self.progress.args_left > 0 {
            if self.progress.bulk_len.is_none() {
                if let Some((start, len)) = self.quick_argument() {
                    self.push_argument(start, len);
                    continue;
                }
            }
            let len = match self.progress.bulk_len {
                Some(len) => len,
                None => self.read_bulk_header()?,
            };
            let start = self.progress.pos;
            // The argument and the two bytes that end it must all be here; those two bytes are
            // skipped unread, as Redis does.
            if ((self.buf.len() - start) as u64) < len.saturating_add(2) {
                return Err(Stop::NeedMore);
            }
            self.push_argument(start, len as usize);
        }
        Ok(())
    }

    /// The common argument — a short `$` line, then all its bytes, with room in `out` — checked
    /// in integers. None leaves the argument, and any error in it, to the general path.
    #[inline(always)]
    fn quick_argument(&self) -> Option<(usize, usize)> {
        let pos = self.progress.pos;
        if self.out.len() - self.words < 2 || self.buf.get(pos) != Some(&b'$') {
            return None;
        }
        let (len, start) = header::read_short(self.buf, pos)?;
        let within_limit = self.quick_len_max.is_some_and(|max| len <= max);
        if !within_limit || ((self.buf.len() - start) as u64) < len + 2 {
            return None;
        }
        Some((start, len as usize))
    }

    /// Records the argument at `buf[start, start + len)` and consumes it and the two bytes after.
    #[inline(always)]
    fn push_argument(&mut self, start: usize, len: usize) {
        let end = start + len;
        self.out[self.words] = start as u32;
        self.out[self.words + 1] = end as u32;
        self.words += 2;
        self.out[self.record] += 1;
        self.progress = Progress { pos: end + 2, args_left: self.progress.args_left - 1, bulk_len: None };
    }

    /// Reads a `$<length>` line, leaving the length in `progress.bulk_len`.
    fn read_bulk_header(&mut self) -> Result<u64, Stop> {
        if self.out.len() - self.words < 2 {
            return Err(Stop::OutFull);
        }
        let pos = self.progress.pos;
        match self.buf.get(pos) {
            None => return Err(Stop::NeedMore),
            Some(b'$') => {}
            Some(_) => return Err(Stop::Error(ProtocolError::ExpectedDollar)),
        }
        let len = match header::read(self.buf, pos, self.limits.line_bytes_max) {
            Header::Incomplete => return Err(Stop::NeedMore),
            Header::TooLong => return Err(Stop::Error(ProtocolError::TooBigBulkCount)),
            Header::Invalid { next } => {
                self.progress.pos = next;
                return Err(Stop::Error(ProtocolError::InvalidBulkLength));
            }
            Header::Number { value, next } => {
                self.progress.pos = next;
                value
            }
        };
        // Compared as doubles, as the TypeScript parser compares them; a NaN limit admits nothing.
        let within_limit = len >= 0.0 && len <= self.limits.bulk_bytes_max;
        if !within_limit {
            return Err(Stop::Error(ProtocolError::InvalidBulkLength));
        }
        // A whole number below 2^63, so the conversion is exact.
        let len = len as u64;
        self.progress.bulk_len = Some(len);
        Ok(len)
    }

    fn open_record(&mut self) {
        self.record = self.words;
        self.out[self.record] = 0;
        self.words += 1;
    }
}

//! The scanner driven the way the JavaScript side drives it: fed in pieces, resumed after a full
//! `out`, the arguments of an unfinished command kept between feeds.

use crate::*;

const LIMITS: Limits = Limits { line_bytes_max: 64, args_max: 8, bulk_bytes_max: 16.0 };

type Command = Vec<Vec<u8>>;

struct Driver {
    buf: Vec<u8>,
    progress: Progress,
    args: Command,
    out: Vec<u32>,
    limits: Limits,
}

impl Driver {
    fn new(out_words: usize) -> Self {
        Self::with_limits(out_words, LIMITS)
    }

    fn with_limits(out_words: usize, limits: Limits) -> Self {
        let progress = Progress { pos: 0, args_left: 0, bulk_len: None };
        Driver { buf: Vec::new(), progress, args: Vec::new(), out: vec![0; out_words], limits }
    }

    /// Appends `chunk` and scans until the scanner needs more input, meets an inline command or
    /// a protocol error; returns the commands completed and that final stop.
    fn feed(&mut self, chunk: &[u8]) -> (Vec<Command>, Stop) {
        self.buf.extend_from_slice(chunk);
        let mut commands = Vec::new();
        loop {
            let resumed = self.progress.args_left > 0;
            let before = self.progress;
            let result = scan(&self.buf, &self.limits, &mut self.progress, &mut self.out);
            let mut w = 0;
            while w < result.words {
                let n = self.out[w] as usize;
                let pairs = &self.out[w + 1..w + 1 + 2 * n];
                self.args.extend(pairs.chunks(2).map(|p| self.buf[p[0] as usize..p[1] as usize].to_vec()));
                w += 1 + 2 * n;
                if w < result.words || self.progress.args_left == 0 {
                    commands.push(std::mem::take(&mut self.args));
                }
            }
            assert!(resumed || result.words == 0 || self.out[0] > 0 || self.progress.args_left > 0);
            if result.stop != Stop::OutFull {
                return (commands, result.stop);
            }
            assert_ne!(self.progress, before, "a scan with an empty out must make progress");
        }
    }

    fn pending(&self) -> usize {
        self.buf.len() - self.progress.pos
    }
}

fn cmd(args: &[&str]) -> Command {
    args.iter().map(|a| a.as_bytes().to_vec()).collect()
}

fn encode(commands: &[Command]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for argv in commands {
        bytes.extend_from_slice(format!("*{}\r\n", argv.len()).as_bytes());
        for arg in argv {
            bytes.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            bytes.extend_from_slice(arg);
            bytes.extend_from_slice(b"\r\n");
        }
    }
    bytes
}

fn scan_whole(bytes: &[u8]) -> (Vec<Command>, Stop, usize, Progress) {
    let mut driver = Driver::new(1024);
    let (commands, stop) = driver.feed(bytes);
    (commands, stop, driver.pending(), driver.progress)
}

#[test]
fn a_pipeline_scans_into_its_commands() {
    let commands = vec![cmd(&["SET", "k", "v"]), cmd(&["GET", "k"]), cmd(&[""]), cmd(&["PING"])];
    let (found, stop, pending, _) = scan_whole(&encode(&commands));
    assert_eq!((found, stop, pending), (commands, Stop::NeedMore, 0));
}

#[test]
fn arguments_are_binary_safe() {
    let argv = vec![vec![b'\r', b'\n', 0, 255, b'*', b'$'], b"\r\n".to_vec()];
    let (found, _, _, _) = scan_whole(&encode(std::slice::from_ref(&argv)));
    assert_eq!(found, vec![argv]);
}

#[test]
fn any_split_and_any_out_size_scan_like_the_whole() {
    let bytes = [
        encode(&[cmd(&["MSET", "a", "1", "bb", "22"]), cmd(&["GET", "a"])]),
        b"*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\n".to_vec(),
        b"*1\r\n$1\r\nx\r\n*1\n$4\r\nPING\r\n".to_vec(),
        b"*1\r\n$3\r\nGET\r\nPING\r\n*1\r\n$0\r\n\r\n".to_vec(),
        b"*2\r\n$1\r\nx\r\nfooz\r\n".to_vec(),
    ];
    for bytes in &bytes {
        let whole = scan_whole(bytes);
        for out_words in [3, 4, 5, 7, 1024] {
            for cut in 0..=bytes.len() {
                let mut driver = Driver::new(out_words);
                let (mut found, first) = driver.feed(&bytes[..cut]);
                let stop = match first {
                    Stop::NeedMore => {
                        let (rest, stop) = driver.feed(&bytes[cut..]);
                        found.extend(rest);
                        stop
                    }
                    // A stop before the cut (inline or error) is also where the whole input stops.
                    stop => {
                        driver.buf.extend_from_slice(&bytes[cut..]);
                        stop
                    }
                };
                assert_eq!(
                    (found, stop, driver.pending(), driver.progress),
                    whole.clone(),
                    "cut {cut}, out {out_words}"
                );
            }
        }
    }
}

#[test]
fn byte_by_byte_feeding_scans_like_the_whole() {
    let bytes = encode(&[cmd(&["SET", "key", "value"]), cmd(&["DEL", "key"])]);
    let mut driver = Driver::new(3);
    let mut found = Vec::new();
    for byte in &bytes {
        let (commands, stop) = driver.feed(std::slice::from_ref(byte));
        assert_eq!(stop, Stop::NeedMore);
        found.extend(commands);
    }
    assert_eq!(found, vec![cmd(&["SET", "key", "value"]), cmd(&["DEL", "key"])]);
}

#[test]
fn an_unfinished_command_keeps_the_arguments_it_has() {
    let (found, stop, pending, progress) = scan_whole(b"*3\r\n$3\r\nGET\r\n$1\r\nk\r\n$5\r\nab");
    assert_eq!((found, stop), (vec![], Stop::NeedMore));
    // The third argument's header is consumed; its bytes wait.
    assert_eq!(progress, Progress { pos: 24, args_left: 1, bulk_len: Some(5) });
    assert_eq!(pending, 2);
    let mut driver = Driver::new(16);
    driver.feed(b"*3\r\n$3\r\nGET\r\n$1\r\nk\r\n$5\r\nab");
    assert_eq!(driver.args, cmd(&["GET", "k"]));
    assert_eq!(driver.feed(b"cde\r\n").0, vec![cmd(&["GET", "k", "abcde"])]);
}

#[test]
fn empty_and_negative_counts_are_skipped() {
    let (found, stop, pending, _) = scan_whole(b"*0\r\n*-1\r\n*-9223372036854775799\r\n*1\r\n$1\r\nx\r\n");
    assert_eq!((found, stop, pending), (vec![cmd(&["x"])], Stop::NeedMore, 0));
}

#[test]
fn an_inline_command_stops_the_scan_where_it_starts() {
    let (found, stop, _, progress) = scan_whole(b"*1\r\n$4\r\nPING\r\nPING\r\n");
    assert_eq!((found, stop, progress.pos), (vec![cmd(&["PING"])], Stop::Inline, 14));
    assert_eq!(scan_whole(b"\r\n").1, Stop::Inline);
}

#[test]
fn the_count_limit_is_inclusive() {
    let mut at_limit = b"*8\r\n".to_vec();
    at_limit.extend(b"$1\r\na\r\n".repeat(8));
    assert_eq!(scan_whole(&at_limit).0, vec![vec![b"a".to_vec(); 8]]);
    let (_, stop, pending, _) = scan_whole(b"*9\r\n$1\r\na\r\n");
    // The bad count's line is consumed, as the TypeScript parser consumes it.
    assert_eq!((stop, pending), (Stop::Error(ProtocolError::InvalidMultibulkLength), 7));
}

#[test]
fn the_bulk_limit_is_inclusive() {
    let sixteen = format!("*1\r\n$16\r\n{}\r\n", "x".repeat(16));
    assert_eq!(scan_whole(sixteen.as_bytes()).0, vec![vec![b"x".repeat(16)]]);
    let (_, stop, pending, progress) = scan_whole(b"*2\r\n$1\r\na\r\n$17\r\n");
    assert_eq!((stop, pending), (Stop::Error(ProtocolError::InvalidBulkLength), 0));
    assert_eq!(progress.args_left, 1);
}

#[test]
fn numbers_string2ll_rejects_are_protocol_errors() {
    for count in ["-0", "00", "01", "+1", "1\n"] {
        let bytes = format!("*{count}\r\n");
        assert_eq!(
            scan_whole(bytes.as_bytes()).1,
            Stop::Error(ProtocolError::InvalidMultibulkLength),
            "{count:?}"
        );
    }
    for len in ["-0", "-1", "01", "+1"] {
        let bytes = format!("*1\r\n${len}\r\n\r\n");
        assert_eq!(scan_whole(bytes.as_bytes()).1, Stop::Error(ProtocolError::InvalidBulkLength), "{len:?}");
    }
}

#[test]
fn the_bulk_limit_compares_as_a_javascript_number_does() {
    // 2^53 + 1 rounds to 2^53 in a double, so it passes a limit of 2^53 in JavaScript.
    let limits = Limits { bulk_bytes_max: 9_007_199_254_740_992.0, ..LIMITS };
    let mut driver = Driver::with_limits(16, limits);
    assert_eq!(driver.feed(b"*1\r\n$9007199254740993\r\n").1, Stop::NeedMore);
    // 2^53 + 1 accumulates to 2^53, which is what the TypeScript parser then waits for.
    assert_eq!(driver.progress.bulk_len, Some(9_007_199_254_740_992));
    let mut driver = Driver::with_limits(16, limits);
    let stop = driver.feed(b"*1\r\n$9007199254740994\r\n").1;
    assert_eq!(stop, Stop::Error(ProtocolError::InvalidBulkLength));
}

#[test]
fn a_byte_other_than_dollar_is_an_error_as_soon_as_it_arrives() {
    let (found, stop, pending, progress) = scan_whole(b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz");
    assert_eq!((found, stop, pending), (vec![], Stop::Error(ProtocolError::ExpectedDollar), 4));
    assert_eq!(progress.args_left, 1);
}

#[test]
fn header_lines_without_a_cr_are_bounded() {
    let limits = Limits { line_bytes_max: 8, ..LIMITS };
    let scan_with = |bytes: &[u8]| Driver::with_limits(16, limits).feed(bytes).1;
    assert_eq!(scan_with(b"*1234567"), Stop::NeedMore);
    assert_eq!(scan_with(b"*12345678"), Stop::Error(ProtocolError::TooBigMbulkCount));
    assert_eq!(scan_with(b"*1\r\n$1234567"), Stop::NeedMore);
    assert_eq!(scan_with(b"*1\r\n$12345678"), Stop::Error(ProtocolError::TooBigBulkCount));
    // A long bulk body is not a header line: only the bytes from the header's prefix on count.
    assert_eq!(scan_with(b"*2\r\n$1\r\nx\r\n$1"), Stop::NeedMore);
}

#[test]
fn bad_numbers_consume_their_line() {
    let (_, stop, pending, _) = scan_whole(b"*x\r\nrest");
    assert_eq!((stop, pending), (Stop::Error(ProtocolError::InvalidMultibulkLength), 4));
    let (_, stop, pending, _) = scan_whole(b"*1\r\n$1x\r\nrest");
    assert_eq!((stop, pending), (Stop::Error(ProtocolError::InvalidBulkLength), 4));
}

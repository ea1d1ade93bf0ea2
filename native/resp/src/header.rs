//! The `*<count>` and `$<length>` header lines of a multibulk command.
//!
//! They are read as svc's TypeScript parser (`RespParser` in src/kv/resp/parser.ts) reads them,
//! which is how Redis reads them: the line ends at the first CR, but a NUL before that CR hides it
//! (Redis searches with C's strchr); the byte after the CR is skipped unread; and the text between
//! the prefix and the CR must be an integer as Redis's string2ll accepts it.

/// What the bytes at a header's position hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Header {
    /// The CR, or the byte after it, has not arrived, and no more than the line limit of bytes
    /// wait: wait for more input.
    Incomplete,
    /// As Incomplete, but more than the line limit of bytes wait.
    TooLong,
    /// A whole line whose text string2ll rejects; `next` is the position after the CR's successor.
    Invalid { next: usize },
    /// A whole line holding `value`, an integer within int64 (rounded past 2^53, as the
    /// TypeScript parser's is); `next` is the position after the CR's successor.
    Number { value: f64, next: usize },
}

/// The longest text string2ll reads: an optional minus and 19 digits (Redis's LONG_STR_SIZE - 1).
const TEXT_BYTES_MAX: usize = 20;

/// Reads the header line whose `*` or `$` prefix is at `pos`. `line_bytes_max` bounds how many
/// bytes, from `pos` on, may wait for the line to complete.
#[inline(always)]
pub fn read(buf: &[u8], pos: usize, line_bytes_max: usize) -> Header {
    debug_assert!(pos < buf.len());
    match read_short(buf, pos) {
        Some((value, next)) => Header::Number { value: value as f64, next },
        None => read_any(buf, pos, line_bytes_max),
    }
}

/// Digits a short header may have: few enough that the value is exact however it is summed.
const SHORT_DIGITS_MAX: usize = 15;

/// Nearly every header is a short number, without sign, directly followed by its CR (`$3\r\n`):
/// read here in integers, without a search. Returns the value, below 10^15 and so exact as a
/// double, and the position after the CR's successor; None means read_any must decide.
#[inline(always)]
pub fn read_short(buf: &[u8], pos: usize) -> Option<(u64, usize)> {
    let text = &buf[pos + 1..];
    let mut value: u64 = 0;
    let mut digits = 0;
    while digits <= SHORT_DIGITS_MAX && digits < text.len() {
        let d = text[digits].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        value = value * 10 + u64::from(d);
        digits += 1;
    }
    // string2ll allows a leading zero only in "0" itself.
    let shape_ok = digits > 0 && digits <= SHORT_DIGITS_MAX && (text[0] != b'0' || digits == 1);
    // Digits are neither CR nor NUL, so a CR here is the line's first; its successor must be here.
    if shape_ok && digits + 1 < text.len() && text[digits] == b'\r' {
        Some((value, pos + 1 + digits + 2))
    } else {
        None
    }
}

#[inline(never)]
fn read_any(buf: &[u8], pos: usize, line_bytes_max: usize) -> Header {
    let from = pos + 1;
    match memchr::memchr2(b'\r', 0, &buf[from..]).map(|offset| from + offset) {
        Some(cr) if buf[cr] == b'\r' && cr + 1 < buf.len() => match parse_long_long(&buf[from..cr]) {
            Some(value) => Header::Number { value, next: cr + 2 },
            None => Header::Invalid { next: cr + 2 },
        },
        _ if buf.len() - pos > line_bytes_max => Header::TooLong,
        _ => Header::Incomplete,
    }
}

/// The integer in `text` as string2ll reads it: "0", or an optional minus, a digit 1-9 and more
/// digits, within int64. The value is accumulated in a double exactly as the TypeScript parser
/// does (multiply, then add, each rounded), so both agree on every bit, even past 2^53.
fn parse_long_long(text: &[u8]) -> Option<f64> {
    if text.is_empty() || text.len() > TEXT_BYTES_MAX {
        return None;
    }
    if text == b"0" {
        return Some(0.0);
    }
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut value = 0.0f64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value * 10.0 + f64::from(d - b'0');
    }
    // int64's range in doubles: 2^63 is exact, and anything that rounds to it is past the top.
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if value >= TWO_POW_63 && !(negative && value == TWO_POW_63) {
        return None;
    }
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(value: f64, next: usize) -> Header {
        Header::Number { value, next }
    }

    #[test]
    fn reads_a_number_up_to_the_cr_and_skips_the_byte_after_it() {
        assert_eq!(read(b"*3\r\n", 0, 64), number(3.0, 4));
        assert_eq!(read(b"$-1\r\nrest", 0, 64), number(-1.0, 5));
        assert_eq!(read(b"xx$0\r\n", 2, 64), number(0.0, 6));
        // The byte after the CR is not checked.
        assert_eq!(read(b"*12\rX$3", 0, 64), number(12.0, 5));
    }

    #[test]
    fn accepts_only_what_string2ll_accepts() {
        for text in ["", "-", "+1", "01", "00", "-0", "-01", " 1", "1 ", "1\n", "--1", "1-", "0x10", "1e3"] {
            let line = format!("*{text}\r\n");
            assert_eq!(read(line.as_bytes(), 0, 64), Header::Invalid { next: line.len() }, "{text:?}");
        }
    }

    #[test]
    fn the_range_is_int64_as_accumulated_in_doubles() {
        assert_eq!(read(b"$-1000000000000000000\r\n", 0, 64), number(-1e18, 23));
        assert_eq!(read(b"$99999999999999999999\r\n", 0, 64), Header::Invalid { next: 23 });
        assert_eq!(read(b"$-9223372036854775809\r\n", 0, 64), Header::Invalid { next: 23 });
        // Near 2^63 the rounded sum decides, not the exact value; these agree with the TypeScript
        // parser (Redis would accept 9223372036854775807 and -9223372036854775808).
        assert_eq!(read(b"$9223372036854774899\r\n", 0, 64), number(9_223_372_036_854_773_760.0, 22));
        assert_eq!(read(b"$9223372036854774900\r\n", 0, 64), Header::Invalid { next: 22 });
        assert_eq!(read(b"$9223372036854775807\r\n", 0, 64), Header::Invalid { next: 22 });
        assert_eq!(read(b"$-9223372036854775799\r\n", 0, 64), number(-9_223_372_036_854_775_808.0, 23));
        assert_eq!(read(b"$-9223372036854775800\r\n", 0, 64), Header::Invalid { next: 23 });
    }

    #[test]
    fn a_bare_lf_does_not_end_the_line() {
        assert_eq!(read(b"*1\n$3\r\n", 0, 64), Header::Invalid { next: 7 });
        assert_eq!(read(b"*1\n", 0, 64), Header::Incomplete);
    }

    #[test]
    fn waits_for_the_cr_and_the_byte_after_it() {
        assert_eq!(read(b"*1", 0, 64), Header::Incomplete);
        assert_eq!(read(b"*1\r", 0, 64), Header::Incomplete);
        assert_eq!(read(b"*", 0, 64), Header::Incomplete);
    }

    #[test]
    fn a_nul_before_the_cr_hides_it() {
        assert_eq!(read(b"*1\0\r\n", 0, 64), Header::Incomplete);
        assert_eq!(read(b"*\0", 0, 64), Header::Incomplete);
        assert_eq!(read(b"*1\r\0", 0, 64), number(1.0, 4));
    }

    #[test]
    fn the_line_limit_counts_every_waiting_byte_from_the_prefix_on() {
        // 4 bytes may wait, 5 may not; a CR as the last byte still waits.
        assert_eq!(read(b"*123", 0, 4), Header::Incomplete);
        assert_eq!(read(b"*1234", 0, 4), Header::TooLong);
        assert_eq!(read(b"ab*123", 2, 4), Header::Incomplete);
        assert_eq!(read(b"ab*1234", 2, 4), Header::TooLong);
        assert_eq!(read(b"*123\r", 0, 4), Header::TooLong);
        assert_eq!(read(b"*1\0\r\n", 0, 4), Header::TooLong);
    }
}

//! Counting whole RESP commands without keeping any of them.

/// How many whole commands `bytes` starts with and how many bytes they take, or None if the
/// bytes are not RESP. A multibulk command is `*<n>\r\n` then n × `$<len>\r\n<len bytes>\r\n`;
/// anything else is an inline command, one line.
pub fn whole_commands(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut at = 0;
    let mut count = 0;
    while at < bytes.len() {
        match command_length(&bytes[at..])? {
            Some(length) => {
                at += length;
                count += 1;
            }
            None => break,
        }
    }
    Some((count, at))
}

/// The length of the command `bytes` starts with: Some(None) if it has not all arrived.
fn command_length(bytes: &[u8]) -> Option<Option<usize>> {
    if bytes[0] != b'*' {
        return Some(bytes.iter().position(|&b| b == b'\n').map(|i| i + 1));
    }
    let Some((arguments, mut at)) = number_line(bytes, 1)? else { return Some(None) };
    for _ in 0..arguments {
        match bytes.get(at) {
            None => return Some(None),
            Some(b'$') => {}
            Some(_) => return None,
        }
        let Some((length, start)) = number_line(bytes, at + 1)? else { return Some(None) };
        at = start + length + 2;
        if at > bytes.len() {
            return Some(None);
        }
    }
    Some(Some(at))
}

/// The decimal number at `from` and where the byte after its `\r\n` is: Some(None) if the line
/// has not all arrived, None if it is not a number.
fn number_line(bytes: &[u8], from: usize) -> Option<Option<(usize, usize)>> {
    let Some(end) = bytes[from.min(bytes.len())..].iter().position(|&b| b == b'\r') else { return Some(None) };
    let digits = &bytes[from..from + end];
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = digits.iter().fold(0, |n, d| n * 10 + usize::from(d - b'0'));
    // The \n after the \r counts too: without it the line is not over.
    if from + end + 1 >= bytes.len() {
        return Some(None);
    }
    Some(Some((value, from + end + 2)))
}

#[cfg(test)]
mod tests {
    use super::whole_commands;

    #[test]
    fn counts_whole_commands_and_leaves_a_partial_one() {
        let two = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$3\r\nxxx\r\n*1\r\n$4\r\nPING\r\n";
        assert_eq!(whole_commands(two), Some((2, two.len())));
        for cut in 0..two.len() {
            let (count, used) = whole_commands(&two[..cut]).unwrap();
            assert!(count <= 2 && used <= cut);
            assert_eq!(count, usize::from(cut >= 31) + usize::from(cut == two.len()));
        }
        assert_eq!(whole_commands(b"PING\r\n"), Some((1, 6)));
        assert_eq!(whole_commands(b"*1\r\n+x\r\n"), None);
    }
}

//! Appending a batch of chunks to a segment file with one vectored write and, when asked, one
//! `fdatasync`. The caller runs this off the JavaScript thread; the broker's flush hands over every
//! record batch that accumulated while the previous flush was on disk, so one sync covers them all.

use std::fs::File;
use std::io::{self, IoSlice, Write};
use std::os::unix::fs::FileExt;

/// Writes every chunk, in order, at the end of `file` (opened for appending), syncs its data to
/// the device if `sync`, and returns the file's length afterwards.
pub fn append_chunks(file: &File, chunks: &[&[u8]], sync: bool) -> io::Result<u64> {
    // Empty chunks are dropped first: writev over nothing but empty slices returns 0, which
    // would be indistinguishable from a device that accepts no more bytes.
    let mut slices: Vec<IoSlice<'_>> =
        chunks.iter().filter(|c| !c.is_empty()).map(|c| IoSlice::new(c)).collect();
    let mut remaining: &mut [IoSlice<'_>] = &mut slices;
    let mut writer = file;
    // writev may write less than asked (signals, pipes, full disks): advance past what it took.
    while !remaining.is_empty() {
        match writer.write_vectored(remaining) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "segment write returned 0")),
            Ok(n) => IoSlice::advance_slices(&mut remaining, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if sync {
        file.sync_data()?;
    }
    Ok(file.metadata()?.len())
}

/// Writes every chunk, in order, from byte `position` of `file` (not at its end: the file may go
/// on past `position`, with a fill written ahead by `append_chunks` on a descriptor opened for
/// appending), then syncs its data to the device if `sync`.
pub fn write_chunks_at(file: &File, chunks: &[&[u8]], position: u64, sync: bool) -> io::Result<()> {
    let mut at = position;
    // write_all_at loops over short writes and EINTR; one pwrite per chunk (callers pass one or two).
    for chunk in chunks {
        file.write_all_at(chunk, at)?;
        at += chunk.len() as u64;
    }
    if sync {
        file.sync_data()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;
    use std::io::Read;

    fn open_append(path: &std::path::Path) -> File {
        OpenOptions::new().create(true).append(true).read(true).open(path).unwrap()
    }

    #[test]
    fn appends_chunks_in_order_and_returns_the_new_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.log");
        let file = open_append(&path);
        assert_eq!(append_chunks(&file, &[b"abc", b"", b"defg"], true).unwrap(), 7);
        assert_eq!(append_chunks(&file, &[b"h"], false).unwrap(), 8);
        let mut contents = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut contents).unwrap();
        assert_eq!(contents, b"abcdefgh");
    }

    #[test]
    fn more_chunks_than_one_writev_takes_are_all_written() {
        // IOV_MAX is 1024 on Linux; 5000 chunks force several writev calls.
        let dir = tempfile::tempdir().unwrap();
        let file = open_append(&dir.path().join("big.log"));
        let chunks: Vec<Vec<u8>> = (0..5000u32).map(|i| i.to_le_bytes().to_vec()).collect();
        let refs: Vec<&[u8]> = chunks.iter().map(|c| c.as_slice()).collect();
        assert_eq!(append_chunks(&file, &refs, true).unwrap(), 20_000);
    }

    #[test]
    fn a_batch_of_only_empty_chunks_writes_nothing_and_succeeds() {
        let dir = tempfile::tempdir().unwrap();
        let file = open_append(&dir.path().join("empties.log"));
        assert_eq!(append_chunks(&file, &[b"", b""], true).unwrap(), 0);
    }

    #[test]
    fn an_empty_batch_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let file = open_append(&dir.path().join("empty.log"));
        assert_eq!(append_chunks(&file, &[], true).unwrap(), 0);
    }

    #[test]
    fn a_read_only_file_reports_the_os_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ro.log");
        std::fs::write(&path, b"x").unwrap();
        let file = File::open(&path).unwrap();
        assert!(append_chunks(&file, &[b"y"], false).is_err());
    }

    #[test]
    fn chunks_written_at_a_position_overwrite_zeros_appended_ahead_and_leave_the_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prealloc.aof");
        let file = OpenOptions::new().create(true).write(true).read(true).open(&path).unwrap();
        write_chunks_at(&file, &[b"abc"], 0, false).unwrap();
        let zeros = vec![0u8; 4096];
        assert_eq!(append_chunks(&open_append(&path), &[&zeros], true).unwrap(), 3 + 4096);
        write_chunks_at(&file, &[b"de", b"", b"f"], 3, true).unwrap();
        let contents = std::fs::read(&path).unwrap();
        assert_eq!(contents.len(), 3 + 4096);
        assert_eq!(&contents[..6], b"abcdef");
        assert!(contents[6..].iter().all(|&b| b == 0));
    }
}

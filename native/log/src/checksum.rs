//! CRC32C (Castagnoli), the checksum Kafka-style record batches carry. The `crc32c` crate uses the
//! SSE4.2 `crc32` instruction with three interleaved streams where the CPU has it.

/// CRC32C of `data`, continuing from `crc` (0 to start a new checksum).
pub fn crc32c_extend(crc: u32, data: &[u8]) -> u32 {
    crc32c::crc32c_append(crc, data)
}

/// CRC32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Check values from RFC 3720 (iSCSI), appendix B.4, and the catalogue's "123456789" check.
    #[test]
    fn matches_published_check_values() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xFFu8; 32]), 0x62A8_AB43);
        let ascending: Vec<u8> = (0u8..32).collect();
        assert_eq!(crc32c(&ascending), 0x46DD_794E);
        assert_eq!(crc32c(b""), 0);
    }

    #[test]
    fn extending_equals_checksumming_the_concatenation() {
        let data = b"the quick brown fox jumps over the lazy dog";
        for split in 0..=data.len() {
            let (a, b) = data.split_at(split);
            assert_eq!(crc32c_extend(crc32c(a), b), crc32c(data));
        }
    }
}

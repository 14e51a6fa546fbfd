//! CRC-32 as zlib computes it (reflected, polynomial 0xEDB88320): the
//! checksum of Gage containers and training checkpoints.

/// The CRC-32 of `bytes`.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    Crc32::new().update(bytes).finish()
}

/// A CRC-32 computed piece by piece (for data written as a stream).
#[derive(Clone, Copy)]
pub(crate) struct Crc32(u32);

impl Crc32 {
    pub(crate) fn new() -> Self {
        Self(!0)
    }

    pub(crate) fn update(self, bytes: &[u8]) -> Self {
        Self(bytes.iter().fold(self.0, |crc, &b| {
            CRC_TABLE[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8)
        }))
    }

    pub(crate) fn finish(self) -> u32 {
        !self.0
    }
}

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                0xEDB8_8320 ^ (crc >> 1)
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_zlib_whole_and_in_pieces() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let pieces = Crc32::new().update(b"1234").update(b"56789").finish();
        assert_eq!(pieces, 0xCBF4_3926);
    }
}

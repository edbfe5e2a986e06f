//! Captures written by hand for the CLI tests: any snap length, any record lengths.

/// A little-endian microsecond pcap with snap length `snap`: records (orig_len, bytes).
pub fn pcap(snap: u32, records: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&4u16.to_le_bytes());
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&snap.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    for (i, (orig, data)) in records.iter().enumerate() {
        b.extend_from_slice(&(i as u32 + 1).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(data.len() as u32).to_le_bytes());
        b.extend_from_slice(&orig.to_le_bytes());
        b.extend_from_slice(data);
    }
    b
}

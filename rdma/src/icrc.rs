//! RoCEv2 invariant CRC (ICRC): CRC-32 (IEEE, as zlib) over 8 bytes of 0xFF, the IP
//! header, the UDP header, the BTH and everything after it up to the ICRC, with the
//! fields that routers may change masked to ones (IPv4 TOS/TTL/checksum, IPv6 traffic
//! class/flow label/hop limit, UDP checksum, BTH byte 4). The 32-bit result goes on the
//! wire least-significant byte first.

use crate::wire::WireError;

const IPV4_MIN: usize = 20;
const IPV6_LEN: usize = 40;
const UDP_LEN: usize = 8;
const BTH_LEN: usize = 12;

fn truncated(need: usize, have: usize) -> WireError {
    WireError::Truncated {
        header: "ICRC input",
        need,
        have,
    }
}

/// Computes the ICRC of `l3`: the bytes from the first byte of the IP header to the
/// last byte before the ICRC (UDP payload minus the trailing 4 bytes). The IP version
/// is taken from the first nibble.
pub fn compute(l3: &[u8]) -> Result<u32, WireError> {
    let first = *l3.first().ok_or(truncated(IPV4_MIN, 0))?;
    let mut h = crc32fast::Hasher::new();
    h.update(&[0xFF; 8]);
    let ip_len = match first >> 4 {
        4 => {
            let ihl = usize::from(first & 0x0F) * 4;
            if ihl < IPV4_MIN {
                return Err(WireError::Framing(format!("IPv4 IHL {ihl} below 20")));
            }
            if l3.len() < ihl + UDP_LEN + BTH_LEN {
                return Err(truncated(ihl + UDP_LEN + BTH_LEN, l3.len()));
            }
            let mut ip = [0u8; 60];
            ip[..ihl].copy_from_slice(&l3[..ihl]);
            ip[1] = 0xFF; // DSCP + ECN
            ip[8] = 0xFF; // TTL
            ip[10] = 0xFF; // header checksum
            ip[11] = 0xFF;
            h.update(&ip[..ihl]);
            ihl
        }
        6 => {
            if l3.len() < IPV6_LEN + UDP_LEN + BTH_LEN {
                return Err(truncated(IPV6_LEN + UDP_LEN + BTH_LEN, l3.len()));
            }
            let mut ip = [0u8; IPV6_LEN];
            ip.copy_from_slice(&l3[..IPV6_LEN]);
            ip[0] |= 0x0F; // traffic class, high nibble
            ip[1] = 0xFF; // traffic class low nibble + flow label
            ip[2] = 0xFF;
            ip[3] = 0xFF;
            ip[7] = 0xFF; // hop limit
            h.update(&ip);
            IPV6_LEN
        }
        _ => return Err(WireError::NotIp),
    };
    let mut udp = [0u8; UDP_LEN];
    udp.copy_from_slice(&l3[ip_len..ip_len + UDP_LEN]);
    udp[6] = 0xFF; // UDP checksum
    udp[7] = 0xFF;
    h.update(&udp);
    let mut bth = [0u8; BTH_LEN];
    bth.copy_from_slice(&l3[ip_len + UDP_LEN..ip_len + UDP_LEN + BTH_LEN]);
    bth[4] = 0xFF; // FECN, BECN, resv6
    h.update(&bth);
    h.update(&l3[ip_len + UDP_LEN + BTH_LEN..]);
    Ok(h.finalize())
}

/// The four ICRC bytes as they appear on the wire.
pub fn to_wire(icrc: u32) -> [u8; 4] {
    icrc.to_le_bytes()
}

/// Reads an ICRC from its four wire bytes.
pub fn from_wire(b: [u8; 4]) -> u32 {
    u32::from_le_bytes(b)
}

/// Verifies `l3_with_icrc` (IP header through the ICRC): true when the trailing four
/// bytes match the computed ICRC.
pub fn verify(l3_with_icrc: &[u8]) -> Result<bool, WireError> {
    let n = l3_with_icrc.len();
    if n < 4 {
        return Err(truncated(4, n));
    }
    let body = &l3_with_icrc[..n - 4];
    let mut got = [0u8; 4];
    got.copy_from_slice(&l3_with_icrc[n - 4..]);
    Ok(compute(body)? == from_wire(got))
}

/// Recomputes and rewrites the ICRC of a whole RoCEv2 Ethernet frame in place, for
/// example after a switch rewrote a covered field. Returns the new ICRC.
pub fn update_frame(frame: &mut [u8]) -> Result<u32, WireError> {
    let loc = crate::wire::locate(frame)?;
    let icrc = compute(&frame[loc.l3..loc.icrc])?;
    frame[loc.icrc..loc.icrc + 4].copy_from_slice(&to_wire(icrc));
    Ok(icrc)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// The vectors of rocev2.md's appendix: (name, Ethernet frame, wire ICRC).
    pub(crate) const VECTORS: [(&str, &str, &str); 5] = [
        // The notes print this frame with 18 reserved bytes after the BTH; its IP (60) and UDP
        // (40) lengths say 16, and the ICRC matches over 16, so two zero bytes are dropped here.
        ("cx4-cnp", "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a", "82fd002a"),
        ("uc-send-only", "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3", "78f353f3"),
        ("rc-write-only", "02000000000202000000000108004502004c12344000401114690a0000010a000002c12312b7003800000a00ffff000000128000010000007f0000001000abcdef0100000010000102030405060708090a0b0c0d0e0f227c6ea7", "227c6ea7"),
        ("rc-ack", "020000000001020000000002080045020030432140004011e3970a0000020a000001c45612b7001c00001100ffff00000034000001001f000001cf50d345", "cf50d345"),
        ("rc-nak-seq", "020000000001020000000002080045020030432240004011e3960a0000020a000001c45612b7001c00001100ffff000000340000010060000001fefc14a5", "fefc14a5"),
    ];

    #[test]
    fn all_ipv4_vectors_match() {
        for (name, hex, icrc) in VECTORS {
            let f = unhex(hex);
            let l3 = &f[14..];
            let total = usize::from(u16::from_be_bytes([l3[2], l3[3]]));
            let want = unhex(icrc);
            let got = compute(&l3[..total - 4]).unwrap();
            assert_eq!(to_wire(got).to_vec(), want, "{name}");
            assert!(verify(&l3[..total]).unwrap(), "{name}");
        }
    }

    #[test]
    fn masked_fields_do_not_change_the_icrc_but_covered_ones_do() {
        let f = unhex(VECTORS[2].1);
        let mut l3 = f[14..f.len() - 4].to_vec();
        let base = compute(&l3).unwrap();
        l3[1] ^= 0x03; // ECN -> CE
        l3[8] = 1; // TTL
        l3[10] ^= 0xFF; // checksum
        l3[20 + 6] ^= 0x55; // UDP checksum
        l3[28 + 4] = 0xC0; // FECN/BECN
        assert_eq!(compute(&l3).unwrap(), base);
        l3[28 + 11] ^= 1; // PSN
        assert_ne!(compute(&l3).unwrap(), base);
        l3[28 + 11] ^= 1;
        l3[4] ^= 1; // IPv4 identification is covered
        assert_ne!(compute(&l3).unwrap(), base);
    }

    #[test]
    fn ipv6_masks_class_flow_and_hop_limit() {
        let mut l3 = vec![0u8; 40 + 8 + 12 + 4];
        l3[0] = 0x60;
        l3[6] = 17;
        l3[7] = 64;
        let base = compute(&l3).unwrap();
        l3[0] = 0x6F;
        l3[1..4].fill(0xAB);
        l3[7] = 3;
        assert_eq!(compute(&l3).unwrap(), base);
        l3[8] ^= 1; // source address is covered
        assert_ne!(compute(&l3).unwrap(), base);
    }

    #[test]
    fn short_or_non_ip_input_is_an_error() {
        assert!(compute(&[]).is_err());
        assert!(compute(&[0x45; 30]).is_err());
        assert!(compute(&[0x44; 60]).is_err());
        assert_eq!(compute(&[0x15; 60]), Err(WireError::NotIp));
        assert!(verify(&[1, 2]).is_err());
    }

    #[test]
    fn update_frame_repairs_a_rewritten_psn() {
        let mut f = unhex(VECTORS[2].1);
        f[14 + 28 + 11] = 0x42;
        let l3_end = f.len();
        assert!(!verify(&f[14..l3_end]).unwrap());
        update_frame(&mut f).unwrap();
        assert!(verify(&f[14..l3_end]).unwrap());
    }
}

//! Packet I/O between the controller and the switch's CPU port: a packet-out's metadata
//! becomes the program's `@controller_header("packet_out")` header in front of the payload (the
//! program's parser reads it on the CPU port); a frame the switch sends to the CPU port starts
//! with the `@controller_header("packet_in")` header, which becomes the packet-in's metadata.
//! Without such a header the frame passes unchanged and carries no metadata.

use pipeline::ir::Value;

use super::codec::{from_value, to_value, P4Error};
use super::proto::p4::v1::PacketMetadata;
use super::schema::HeaderInfo;

/// Reads `width` bits at bit offset `at` of `bytes` (big-endian).
fn get_bits(bytes: &[u8], at: usize, width: u16) -> Value {
    let mut v: Value = 0;
    for i in 0..usize::from(width) {
        let bit = at + i;
        let b = bytes[bit / 8] >> (7 - bit % 8) & 1;
        v = v << 1 | Value::from(b);
    }
    v
}

fn set_bits(bytes: &mut [u8], at: usize, width: u16, v: Value) {
    for i in 0..usize::from(width) {
        let bit = at + i;
        let shift = u32::try_from(usize::from(width) - 1 - i).unwrap_or(u32::MAX);
        let b = v.checked_shr(shift).unwrap_or(0) & 1;
        if b != 0 {
            bytes[bit / 8] |= 1 << (7 - bit % 8);
        }
    }
}

fn header_bits(h: &HeaderInfo) -> usize {
    h.fields.iter().map(|f| usize::from(f.2)).sum()
}

/// The frame for a packet-out: the packet_out header (when the program has one) built from
/// `metadata`, then `payload`.
pub fn packet_out_frame(
    h: Option<&HeaderInfo>,
    payload: &[u8],
    metadata: &[PacketMetadata],
) -> Result<Vec<u8>, P4Error> {
    let Some(h) = h else {
        if !metadata.is_empty() {
            return Err(P4Error::invalid(
                "the program has no @controller_header(\"packet_out\") header: packet-outs take no metadata",
            ));
        }
        return Ok(payload.to_vec());
    };
    let bits = header_bits(h);
    if !bits.is_multiple_of(8) {
        return Err(P4Error::invalid(format!(
            "the packet_out header is {bits} bits, not whole bytes"
        )));
    }
    let mut out = vec![0u8; bits / 8];
    let mut at = 0;
    for (id, name, width) in &h.fields {
        let given: Vec<&PacketMetadata> =
            metadata.iter().filter(|m| m.metadata_id == *id).collect();
        let v = match given.as_slice() {
            [] => 0,
            [m] => to_value(&m.value, *width, &format!("packet_out metadata `{name}`"))?,
            _ => {
                return Err(P4Error::invalid(format!(
                    "packet_out metadata `{name}` is given twice"
                )))
            }
        };
        set_bits(&mut out, at, *width, v);
        at += usize::from(*width);
    }
    if let Some(m) = metadata
        .iter()
        .find(|m| !h.fields.iter().any(|f| f.0 == m.metadata_id))
    {
        return Err(P4Error::invalid(format!(
            "packet_out has no metadata with id {}",
            m.metadata_id
        )));
    }
    out.extend_from_slice(payload);
    Ok(out)
}

/// A frame from the CPU port as a packet-in's payload and metadata; `None` when the frame is
/// shorter than the packet_in header.
pub fn packet_in(h: Option<&HeaderInfo>, frame: &[u8]) -> Option<(Vec<u8>, Vec<PacketMetadata>)> {
    let Some(h) = h else {
        return Some((frame.to_vec(), Vec::new()));
    };
    let bits = header_bits(h);
    let len = bits.div_ceil(8);
    if frame.len() < len {
        return None;
    }
    let mut at = 0;
    let mut md = Vec::new();
    for (id, _, width) in &h.fields {
        let v = get_bits(frame, at, *width);
        md.push(PacketMetadata {
            metadata_id: *id,
            // The shortest bytestring, as the spec's Bytestrings section asks of replies.
            value: from_value(v),
        });
        at += usize::from(*width);
    }
    Some((frame[len..].to_vec(), md))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr() -> HeaderInfo {
        HeaderInfo {
            id: 1,
            fields: vec![(1, "port".into(), 9), (2, "pad".into(), 7)],
        }
    }

    #[test]
    fn packet_out_header_is_built_from_metadata() {
        let md = [PacketMetadata {
            metadata_id: 1,
            value: vec![1, 0x2c],
        }];
        let f = packet_out_frame(Some(&hdr()), &[0xaa], &md).unwrap();
        // Port 300 = 0b1_0010_1100 in the top 9 bits.
        assert_eq!(f, vec![0x96, 0x00, 0xaa]);
        let (payload, back) = packet_in(Some(&hdr()), &f).unwrap();
        assert_eq!(payload, vec![0xaa]);
        assert_eq!(back[0].value, vec![1, 0x2c]);
        assert_eq!(back[1].value, vec![0]);
        let f = packet_out_frame(
            Some(&hdr()),
            &[],
            &[PacketMetadata {
                metadata_id: 1,
                value: vec![64],
            }],
        )
        .unwrap();
        assert_eq!(
            packet_in(Some(&hdr()), &f).unwrap().1[0].value,
            vec![64],
            "canonical"
        );
        let bad = [PacketMetadata {
            metadata_id: 9,
            value: vec![1],
        }];
        assert!(packet_out_frame(Some(&hdr()), &[], &bad).is_err());
        let wide = [PacketMetadata {
            metadata_id: 1,
            value: vec![4, 0],
        }];
        assert!(packet_out_frame(Some(&hdr()), &[], &wide).is_err());
        assert!(packet_in(Some(&hdr()), &[1]).is_none());
        assert_eq!(packet_out_frame(None, &[1, 2], &[]).unwrap(), vec![1, 2]);
        // A field wider than pisa's 128-bit values neither panics nor loses the low bits.
        let wide = HeaderInfo {
            id: 1,
            fields: vec![(1, "w".into(), 136)],
        };
        let md = [PacketMetadata {
            metadata_id: 1,
            value: vec![7],
        }];
        let f = packet_out_frame(Some(&wide), &[], &md).unwrap();
        assert_eq!(f.len(), 17);
        assert_eq!(f[16], 7);
    }
}

//! Fuzz target: arbitrary bytes as hash inputs of arbitrary widths, CRC specs, output widths
//! and meter traffic for `pipeline::externs`; nothing may panic and outputs must fit their
//! widths.

use pipeline::externs::checksum::{update, ChecksumAccumulator};
use pipeline::externs::hash::{BitWriter, Hasher};
use pipeline::externs::meter::{MeterColor, MeterConfig, MeterState};
use pipeline::externs::random::Random;
use pipeline::ir::{CrcSpec, HashAlgorithm};

fn one(data: &[u8]) -> Option<()> {
    let (head, body) = data.split_at_checked(20)?;
    let word = |i: usize| u64::from_be_bytes(head[i..i + 8].try_into().unwrap_or([0; 8]));
    let spec = CrcSpec {
        width: u16::from(head[0] % 72),
        poly: word(1) | 1,
        reversed: head[9] & 1 == 1,
        msb: head[9] & 2 == 2,
        extended: head[9] & 4 == 4,
        init: word(10) >> (head[18] % 64),
        xor: word(2) >> (head[19] % 64),
    };
    let out_width = u16::from(head[18]) % 140;
    let mut w = BitWriter::new();
    let mut acc = ChecksumAccumulator::new();
    for c in body.chunks(17) {
        let (wb, rest) = c.split_first()?;
        let mut v = 0u128;
        for b in rest {
            v = (v << 8) | u128::from(*b);
        }
        w.push(v, u16::from(*wb) % 140);
        if wb & 1 == 0 {
            acc.add_bytes(rest);
        } else {
            acc.subtract_bytes(rest);
        }
    }
    let _ = (acc.get(), acc.verify(), update(&w));
    let mut rng = Random::new(word(3));
    for alg in [
        HashAlgorithm::Identity,
        HashAlgorithm::Random,
        HashAlgorithm::Xor8,
        HashAlgorithm::Xor16,
        HashAlgorithm::Xor32,
        HashAlgorithm::Crc(spec),
    ] {
        if let Ok(h) = Hasher::new(alg, out_width) {
            let v = h.get(&w, &mut rng);
            assert!(out_width >= 128 || v >> out_width == 0);
        }
    }
    let cfg = MeterConfig {
        cir: word(4),
        pir: word(5),
        cbs: word(6),
        pbs: word(7),
    };
    if let Ok(mut m) = MeterState::new(cfg, word(8)) {
        for (i, b) in body.iter().enumerate() {
            let pre = (b & 0x80 != 0).then(|| MeterColor::from_value(*b));
            let _ = m.execute(
                word(9).wrapping_add(i as u64 * u64::from(*b)),
                u64::from(*b) << (b % 40),
                pre,
            );
        }
    }
    Some(())
}

/// One input.
pub fn run(data: &[u8]) {
    let _ = one(data);
}

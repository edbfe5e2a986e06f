//! Device-port numbering, defined once for the whole of pisa: a TNA device port is 9 bits,
//! pipe in bits 8:7 and the port within the pipe in bits 6:0; quad 16 of each pipe holds the
//! CPU Ethernet port (pipe 0, 64–67) or recirculation, quad 17 packet generation or
//! recirculation (68–71, 196–199, …). Ports 72–127 of a pipe do not exist ([`is_port`]), on
//! Tofino 1 and Tofino 2 alike.

/// Device ports there are (9 bits).
pub const NUM_DEVPORTS: usize = 512;

/// Most hardware pipes on a chip.
pub const MAX_PIPES: u16 = 4;

/// Ports per pipe (7 bits).
pub const PORTS_PER_PIPE: u16 = 128;

/// Ports that exist in each pipe: 0..=71 (18 quads; quad 16 and 17 hold the CPU Ethernet,
/// recirculation and packet-generator ports). tofino-model `Queueing::enqueue`: "Valid port
/// numbers per pipe are 0-71, anything outside of this range should be dropped".
pub const PORTS_IN_PIPE: u16 = 72;

/// The Tofino 1 CPU Ethernet port (pipe 0, quad 16).
pub const CPU_ETH_PORT: u16 = 64;

/// The pipe a device port belongs to.
#[inline]
pub fn pipe_of(devport: u16) -> u16 {
    (devport >> 7) & 0x3
}

/// Whether `devport` names a port that exists in its pipe (port 0–71 of the pipe; whether the
/// pipe itself exists depends on the switch's pipe count). The ingress deparser clears a
/// unicast port that is not one (tofino-model `DeparserIngress::SetMetadata`: `(port & 0x7F)
/// >= 72`), and the TM drops any copy sent to one (`Queueing::enqueue`), on both targets.
#[inline]
pub fn is_port(devport: u16) -> bool {
    (devport as usize) < NUM_DEVPORTS && devport & 0x7f < PORTS_IN_PIPE
}

/// The device port of port `port` (0..=127) of pipe `pipe` (0..=3).
#[inline]
pub fn devport(pipe: u16, port: u16) -> u16 {
    (pipe & 0x3) << 7 | (port & 0x7f)
}

/// The first recirculation port of a pipe (quad 17: 68 + 128 × pipe).
#[inline]
pub fn recirc_port(pipe: u16) -> u16 {
    devport(pipe, 68)
}

/// Whether `devport` loops back unless the user made it a front-panel port (or the CPU port):
/// the ports that recirculate on each target, with no port added there.
/// - Tofino 1: the recirculation quad of each pipe (ports 68–71 + 128 × pipe) has no MAC
///   behind it, and a packet sent there re-enters ingress (programs send to 68 to recirculate
///   without any port setup). bf-drivers' port manager exposes quad 17 only, quad 16 holding
///   the CPU port (`pm_recirc_port_range_get`, `pm_recirc_port_to_dev_port_map`: port
///   `max front port + 1 + 4 + i`).
/// - Tofino 2: the first 8 ports of each pipe (0–7 + 128 × pipe) "support recirculation"
///   (the same port-manager functions: recirculation port `i` is device port `i mod 8` of pipe
///   `i / 8`), and the packet generator's recirculation state calls each of them
///   recirculating (`pipe_mgr_tof2_pgr_recir_get`: true for every port but the PCIe CPU port
///   0 and the Ethernet CPU ports 2–5 of pipe 0, and for those too until they are set up as
///   CPU ports, the driver's state starting all zero). pisa keeps the switch's CPU port out
///   ([`crate::switch::SwitchConfig::is_loopback`]).
#[inline]
pub fn recirculates_by_default(target: crate::ir::Target, devport: u16) -> bool {
    let port = devport & 0x7f;
    match target {
        crate::ir::Target::Tofino1 => (recirc_port(0)..recirc_port(0) + 4).contains(&port),
        crate::ir::Target::Tofino2 => port < TF2_RECIRC_PORTS,
    }
}

/// Ports of each Tofino 2 pipe that recirculate (0–7; [`recirculates_by_default`]).
pub const TF2_RECIRC_PORTS: u16 = 8;

/// Reads a device port as a user writes it: a number (`132`) or `PIPE/PORT` (`1/4`).
pub fn parse(s: &str) -> Result<u16, String> {
    let v = match s.split_once('/') {
        Some((pipe, port)) => {
            let pipe: u16 = pipe
                .trim()
                .parse()
                .map_err(|_| format!("bad pipe {pipe:?}"))?;
            let port: u16 = port
                .trim()
                .parse()
                .map_err(|_| format!("bad port {port:?}"))?;
            if pipe >= MAX_PIPES || port >= PORTS_PER_PIPE {
                return Err(format!(
                    "pipe/port {pipe}/{port} out of range (pipe 0..=3, port 0..=127)"
                ));
            }
            devport(pipe, port)
        }
        None => s
            .trim()
            .parse()
            .map_err(|_| format!("bad device port {s:?}: expected a number or PIPE/PORT"))?,
    };
    if v as usize >= NUM_DEVPORTS {
        return Err(format!("device port {v} out of range (0..=511)"));
    }
    Ok(v)
}

/// The distinct pipes of some device ports, in order.
pub fn pipes_of(devports: &[u16]) -> Vec<u16> {
    let mut v: Vec<u16> = devports.iter().map(|&d| pipe_of(d)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering() {
        assert_eq!(devport(1, 4), 132);
        assert_eq!(pipe_of(132), 1);
        assert_eq!(recirc_port(1), 196);
        use crate::ir::Target;
        assert!(recirculates_by_default(Target::Tofino1, 68));
        assert!(recirculates_by_default(Target::Tofino1, 199));
        assert!(!recirculates_by_default(Target::Tofino1, 72));
        assert!(!recirculates_by_default(Target::Tofino1, 64));
        assert!(!recirculates_by_default(Target::Tofino2, 68));
        // Tofino 2: ports 0–7 of every pipe.
        for p in [0, 6, 7, 128, 134, 256 + 3, 384 + 7] {
            assert!(recirculates_by_default(Target::Tofino2, p), "{p}");
        }
        for p in [8, 64, 128 + 8, 384 + 68] {
            assert!(!recirculates_by_default(Target::Tofino2, p), "{p}");
        }
        assert_eq!(parse("1/4"), Ok(132));
        assert_eq!(parse(" 7 "), Ok(7));
        assert!(parse("4/0").unwrap_err().contains("out of range"));
        assert!(parse("512").unwrap_err().contains("out of range"));
        assert!(parse("x").unwrap_err().contains("bad device port"));
        assert_eq!(pipes_of(&[130, 1, 3, 129]), vec![0, 1]);
        // Ports 0–71 of each pipe exist (CPU 64, recirculation / pktgen 68–71 included).
        for p in [0, 64, 68, 71, 128, 192 + 4, 199, 384 + 71] {
            assert!(is_port(p), "{p}");
        }
        for p in [72, 80, 127, 128 + 72, 511, 512] {
            assert!(!is_port(p), "{p}");
        }
    }
}

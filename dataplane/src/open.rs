//! [`open_port`]: turns a [`PortSpec`] into a running port of the matching backend.

use crate::afpacket::AfPacketPort;
use crate::mem::MemHub;
use crate::pcap::PcapPort;
use crate::port::{Port, PortError};
use crate::spec::PortSpec;

/// Opens the port `spec` describes. `mem:NAME` takes the switch end of link `NAME` from
/// `hub` (whose host end the caller hands to a simulated host). AF_XDP needs the `afxdp`
/// cargo feature and DPDK the `dpdk` feature; both report [`PortError::Unsupported`] when
/// missing.
pub fn open_port(spec: &PortSpec, hub: &mut MemHub) -> Result<Box<dyn Port>, PortError> {
    Ok(match spec {
        PortSpec::Mem { name } => Box::new(hub.switch_end(name)?),
        PortSpec::Pcap {
            input,
            output,
            paced,
        } => Box::new(PcapPort::open(
            &spec.to_string(),
            input.as_deref(),
            output.as_deref(),
            *paced,
        )?),
        PortSpec::AfPacket { ifname } => Box::new(AfPacketPort::open(ifname)?),
        #[cfg(feature = "afxdp")]
        PortSpec::AfXdp {
            ifname,
            zerocopy,
            queue,
        } => Box::new(crate::afxdp::AfXdpPort::open(ifname, *queue, *zerocopy)?),
        #[cfg(not(feature = "afxdp"))]
        PortSpec::AfXdp { .. } => {
            return Err(PortError::Unsupported {
                backend: "afxdp",
                reason: "this pisa was built without AF_XDP; build one with it: `cargo install \
                         --locked --path . --features afxdp` in the pisa clone (needs clang), \
                         or use afpacket:IFNAME"
                    .into(),
            })
        }
        #[cfg(feature = "dpdk")]
        PortSpec::Dpdk { device } => Box::new(crate::dpdk::DpdkPort::open(device)?),
        #[cfg(not(feature = "dpdk"))]
        PortSpec::Dpdk { .. } => {
            return Err(PortError::Unsupported {
                backend: "dpdk",
                reason: "this pisa was built without DPDK; build one with it: `cargo install \
                         --locked --path . --features dpdk` in the pisa clone (needs \
                         libdpdk-dev, pkg-config and libclang), or use afpacket:IFNAME"
                    .into(),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::port::FrameBatch;
    use crate::time::Nanos;

    #[test]
    fn opens_mem_and_pcap_and_refuses_missing_backends() {
        let mut hub = MemHub::default();
        let mut p = open_port(&"mem:p0".parse().unwrap(), &mut hub).unwrap();
        let mut host = hub.host_end("p0").unwrap();
        let mut b = FrameBatch::new(2);
        b.push(&[0u8; 60], Nanos(0));
        host.send_batch(&mut b, Nanos(0)).unwrap();
        assert_eq!(p.recv_batch(&mut b, Nanos(0)).unwrap(), 1);

        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.pcap");
        let spec: PortSpec = format!("pcap:out={}", out.display()).parse().unwrap();
        let mut p = open_port(&spec, &mut hub).unwrap();
        assert_eq!(p.send_batch(&mut b, Nanos(0)).unwrap(), 1);

        // Without the feature DPDK is refused (with it, opening would start the EAL: the
        // root_dpdk test covers that).
        #[cfg(not(feature = "dpdk"))]
        {
            let e = open_port(&"dpdk:net_null0".parse().unwrap(), &mut hub)
                .err()
                .unwrap();
            assert!(matches!(
                e,
                PortError::Unsupported {
                    backend: "dpdk",
                    ..
                }
            ));
        }
        // Without the feature AF_XDP is refused; with it, a missing interface is an error
        // (never point this test at a real interface).
        let e = open_port(&"afxdp:pisa-nonexist0".parse().unwrap(), &mut hub)
            .err()
            .unwrap();
        #[cfg(not(feature = "afxdp"))]
        assert!(matches!(
            e,
            PortError::Unsupported {
                backend: "afxdp",
                ..
            }
        ));
        #[cfg(feature = "afxdp")]
        assert!(
            matches!(e, PortError::NoSuchInterface(_) | PortError::Os { .. }),
            "{e}"
        );
        let e = open_port(&"afpacket:pisa-nonexist0".parse().unwrap(), &mut hub)
            .err()
            .unwrap();
        assert!(
            matches!(e, PortError::NoSuchInterface(_) | PortError::Os { .. }),
            "{e}"
        );
    }
}

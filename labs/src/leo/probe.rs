//! Link profiling at init by timed probe frames (§IV's hardware models: bandwidth, message
//! rate and latency measured, not typed in). Each wire link of the application's hardware model
//! belongs to one lab host; a probe is a burst of frames from that host that leo_kvs.p4
//! reflects straight back (a switch-path lookup of a hot key), timed in the lab's virtual
//! clock: a lone small frame's half round trip is the latency; a burst's one-way time is its
//! round trip less the return of its last frame. A message larger than
//! a frame goes as MTU-sized frames. The server's PCIe link is not in the lab (it stands for
//! the host's internal link) and keeps a PCIe Gen3-like model.

use super::wire::{Msg, FRAME_LEN, LEO_PORT, OP_GET};
use crate::mem::MemLab;
use crate::topology::Topology;
use hosts::leo::hw::{Link, LinkProbe, ModelledLink};
use hosts::leo::jct::Header;
use std::collections::HashMap;

/// Largest probe frame's payload beyond the lookup message.
const MTU_PAD: u64 = 1400;

/// Times probe bursts in a lab of its own.
pub struct FrameProbe {
    mem: MemLab,
    topo: Topology,
    host_of: HashMap<String, usize>,
    pcie: ModelledLink,
    half_rtt: HashMap<String, f64>,
    /// Probe frames sent.
    pub frames: u64,
}

impl FrameProbe {
    /// A probe over `mem` (leo_kvs.p4 with hot key 1 installed); `host_of` names the host
    /// whose link each hardware link is.
    pub fn new(mem: MemLab, topo: Topology, host_of: HashMap<String, usize>) -> FrameProbe {
        FrameProbe {
            mem,
            topo,
            host_of,
            pcie: ModelledLink {
                latency_ns: 500.0,
                bytes_per_ns: 12.0,
                per_msg_ns: 50.0,
            },
            half_rtt: HashMap::new(),
            frames: 0,
        }
    }

    fn frame(&self, h: usize, pad: u64) -> Vec<u8> {
        let me = &self.topo.hosts[h];
        let peer = &self.topo.hosts[(h + 1) % self.topo.hosts.len()];
        let mut f = Msg {
            mac: (me.mac, peer.mac),
            ip: (me.ip.octets(), peer.ip.octets()),
            port: (40000, LEO_PORT),
            seq: 0,
            hdr: Header {
                request: OP_GET,
                path: 1,
                responder_ns: 0,
            },
            key: 1,
            value: 0,
        }
        .encode();
        f.resize(f.len() + pad as usize, 0);
        f
    }
}

impl LinkProbe for FrameProbe {
    fn transfer(&mut self, link: &Link, bytes: u64, count: u32) -> f64 {
        let Some(&h) = self.host_of.get(&link.name) else {
            return self.pcie.latency_ns
                + f64::from(count)
                    * (bytes as f64 / self.pcie.bytes_per_ns).max(self.pcie.per_msg_ns);
        };
        // Whole frames: the message beyond the lookup header rides as padding.
        let extra = bytes.saturating_sub(FRAME_LEN as u64);
        let per_msg = extra.div_ceil(MTU_PAD).max(1);
        let start = self.mem.now();
        for _ in 0..count {
            for i in 0..per_msg {
                let pad = (extra - (i * MTU_PAD).min(extra)).min(MTU_PAD);
                let f = self.frame(h, pad);
                self.mem.send(h, f);
                self.frames += 1;
            }
        }
        self.mem.run_until_idle();
        let back = self.mem.take_received(h);
        let last = back.iter().map(|(t, _)| t.0).max().unwrap_or(start.0);
        let total = (last - start.0) as f64;
        // The way back overlaps the rest of the burst: take off the return of one frame
        // (half a lone frame's round trip, measured first), not half of everything.
        if count == 1 && per_msg == 1 && bytes <= FRAME_LEN as u64 {
            self.half_rtt.insert(link.name.clone(), total / 2.0);
            return total / 2.0;
        }
        total
            - self
                .half_rtt
                .get(&link.name)
                .copied()
                .unwrap_or(total / 2.0)
    }
}

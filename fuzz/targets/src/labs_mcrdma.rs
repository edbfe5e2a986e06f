//! Fuzzes what `pisa mcrdma bench` reads besides the topology: a `--loss-link A-B` spec
//! resolved on the MC-RDMA testbed, and Algorithm 1 (control::mcrdma::bifurcation) over the
//! testbed with an arbitrary destination vector, MC_ID and links down; errors, never panics.

const TESTBED: &str = include_str!("../../../deploy/labs/mcrdma-testbed.yaml");

/// One input.
pub fn run(data: &[u8]) {
    let Ok(topo) = labs::Topology::from_yaml(TESTBED, std::path::Path::new("/fuzz/t.yaml")) else {
        return;
    };
    let _ = labs::mcrdma::bench::link_by_nodes(&topo, &String::from_utf8_lossy(data));
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let hosts = topo.hosts.len();
    let mut fabric = labs::mcrdma::LabFabric::new(&topo, vec![true, true, false]);
    for l in 0..topo.links.len() {
        if head as usize & (1 << (l % 8)) != 0 && l % 3 == 0 {
            fabric.set_link_up(l, false);
        }
    }
    let dsts: Vec<std::net::Ipv4Addr> = rest
        .iter()
        .take(8)
        .map(|b| topo.hosts[*b as usize % hosts].ip)
        .collect();
    let src = topo.hosts[head as usize % hosts].ip;
    let address = dsts.first().copied().unwrap_or(src);
    let _ = control::mcrdma::bifurcation(&fabric, src, address, u32::from(head) << 4, &dsts);
}

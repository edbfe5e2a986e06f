//! Fuzz target: arbitrary bytes as an Ethernet frame into the RoCEv2 decoder, the frame
//! parser and the ICRC updater; none may panic.

/// One input.
pub fn run(data: &[u8]) {
    if let Ok(d) = rdma::decode::decode_frame(data) {
        let _ = d.to_string();
    }
    if let Ok(f) = rdma::wire::RocePacketRepr::parse(data) {
        // Whatever parses must re-emit.
        let _ = f.packet.to_vec();
    }
    let mut copy = data.to_vec();
    let _ = rdma::icrc::update_frame(&mut copy);
    let _ = rdma::wire::CmMad::parse(data);
}

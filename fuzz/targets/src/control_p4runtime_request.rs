//! Fuzzes P4Runtime request decoding and validation: arbitrary bytes as a Write, Read or
//! StreamChannel message are checked against l2l3.p4's P4Info, applied to and read from a
//! switch running it, and packet-outs/packet-ins go through the controller-header codec; a
//! bad request gets a P4Runtime error, never a panic.

/// One input.
pub fn run(data: &[u8]) {
    let _ = control::fuzz::p4runtime_request(data);
}

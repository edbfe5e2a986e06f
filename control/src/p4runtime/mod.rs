//! P4Runtime for pisa: the protocol's messages (generated from control/proto, which was written
//! from the P4Runtime specification), P4Info generation from a compiled program ([`p4info`]).

pub mod proto;

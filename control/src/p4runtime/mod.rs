//! P4Runtime for pisa: the protocol's messages ([`proto`], generated from control/proto, which
//! was written from the P4Runtime specification), P4Info ids ([`ids`]) and P4Info generation
//! from a compiled program ([`p4info`]), P4Info in the protobuf text and JSON formats
//! ([`format`]).

pub mod arbitration;
pub mod codec;
pub mod device;
pub mod format;
pub mod ids;
pub mod p4info;
pub mod packet_io;
pub mod proto;
pub mod request;
pub mod schema;
pub mod server;

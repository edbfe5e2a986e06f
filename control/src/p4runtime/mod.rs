//! P4Runtime for pisa: the protocol's messages ([`proto`], generated from control/proto, which
//! was written from the P4Runtime specification), P4Info ids ([`ids`]) and P4Info generation
//! from a compiled program ([`p4info`]), P4Info in the protobuf text and JSON formats
//! ([`format`]), and the gRPC server ([`server`]) with what it is made of: the id → name view
//! of a P4Info ([`schema`]), value and match conversion with the spec's checks ([`codec`]),
//! requests turned into switch operations and queries ([`request`]), those run on the switch
//! through the runtime API ([`device`]), controller arbitration ([`arbitration`]) and the
//! controller-header codec of packet I/O ([`packet_io`]).

pub mod aliases;
pub mod arbitration;
pub mod cells;
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
pub mod type_names;

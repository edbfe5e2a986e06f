//! The P4Runtime protocol's messages and service, generated at build time from control/proto
//! (hand-written from the P4Runtime specification; see docs/p4runtime.md).

#![allow(clippy::all, missing_docs)]

/// `google.rpc`: the gRPC error model (Status, Code).
pub mod google {
    pub mod rpc {
        include!(concat!(env!("OUT_DIR"), "/google.rpc.rs"));
    }
}

/// `p4.v1` and `p4.config.v1`.
pub mod p4 {
    pub mod v1 {
        include!(concat!(env!("OUT_DIR"), "/p4.v1.rs"));
    }
    pub mod config {
        pub mod v1 {
            include!(concat!(env!("OUT_DIR"), "/p4.config.v1.rs"));
        }
    }
}

/// The descriptor set of these messages (for checks against other implementations).
pub const DESCRIPTORS: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/p4runtime_descriptors.bin"));

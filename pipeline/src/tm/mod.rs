//! The traffic manager between ingress and egress: the packet replication engine ([`pre`]),
//! mirror sessions ([`mirror`]) and per-port egress queues with a virtual-time model
//! ([`queue`]) and a qid → queue map ([`qid_map`]). Configuration verbs follow BfRt's fixed tables (`$pre.*`, `$mirror.cfg`).

pub mod mirror;
pub mod pre;
pub mod qid_map;
pub mod queue;

//! The Tofino model: a lowered P4 TNA program ([`ir`]) run on packets in a pipeline shaped like
//! the hardware's (parser, MAU stages, deparser per gress; traffic manager between them).
//! Pure and deterministic: no I/O, no threads, no clocks of its own.

pub mod api;
pub mod devport;
pub mod exec;
pub mod externs;
pub mod ir;
pub mod ir_text;
pub mod ir_verify;
pub mod names;
pub mod phv;
pub mod pktgen;
pub mod state;
pub mod switch;
pub mod table;
pub mod tm;
pub mod trace;

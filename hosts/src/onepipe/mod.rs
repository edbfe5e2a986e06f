//! lib1pipe (1Pipe, SIGCOMM 2021, §4 and §6.1): total-order, causally ordered scattering of
//! messages, with the switches of `p4/programs/onepipe.p4` aggregating the barriers. Sans
//! I/O: a [`process::Process`] is handed packets and the time and hands back packets.
//!
//! - [`wire`]: the 1Pipe header the switch reads;
//! - [`ts`]: 48-bit timestamps with wrap-around, 32-bit barriers extended against the clock;
//! - [`clock`]: host clocks with skew and drift, PTP-like offset correction, monotonic;
//! - [`process`]: the API of the paper's Table 1.
//! - [`baselines`]: the sequencer, token and Lamport baselines of Fig. 8.
//! - [`kv`]: the transactional key-value store of §7.3.1, and its lock-based baseline.

pub mod baselines;
pub mod clock;
pub mod kv;
pub mod process;
pub mod ts;
pub mod wire;

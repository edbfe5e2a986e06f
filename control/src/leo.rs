//! The control plane of `p4/programs/leo_kvs.p4` (LEO's KVS with the switch as the on-path
//! index accelerator): it re-installs hot keys whose value moved. A PUT to a hot key marks the
//! key's slot stale in the data plane (GETs of it then go to the server); the server's reply to
//! the PUT — the PUT has settled, the value lives at its new location — makes the switch send a
//! `refresh` digest {key, slot, location}. [`HotKeyAgent::poll`] drains those digests through
//! the runtime API, rewrites the key's `hot` entry with the new location and clears `stale`,
//! so the key is answered in the switch again.
//!
//! A requester holds a key's GETs while its PUT is in flight (LEO's ADDR dependency). A refresh
//! from an older PUT that the agent takes while a newer PUT is in flight clears `stale` too
//! early, so the newer PUT's reply marks the slot stale again as it passes (with its digest):
//! the key stays with the server until [`HotKeyAgent::poll`] drains that digest, and a poll
//! drains every digest queued, oldest first, between two packets, so it ends at the newest.

use pipeline::api::PipeSel;
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::Switch;
use thiserror::Error;

/// The hot-key table.
pub const HOT: &str = "KvsIngress.hot";
/// The stale flags.
pub const STALE: &str = "KvsIngress.stale";

/// What the agent could not do.
#[derive(Debug, Error)]
pub enum LeoAgentError {
    /// The runtime API refused an operation.
    #[error("leo_kvs agent: {0}")]
    Api(#[from] pipeline::api::ApiError),
    /// A digest that is not {key, slot, location}.
    #[error("leo_kvs agent: digest `{name}` has {n} fields, expected 3")]
    Digest {
        /// Its name.
        name: String,
        /// Fields it had.
        n: usize,
    },
}

/// Re-installs hot keys from the switch's refresh digests.
#[derive(Debug, Default, Clone)]
pub struct HotKeyAgent {
    /// Hot keys re-installed so far.
    pub refreshed: u64,
}

impl HotKeyAgent {
    /// Drains `sw`'s digests and re-installs every refreshed key; returns how many.
    pub fn poll(&mut self, sw: &mut Switch) -> Result<usize, LeoAgentError> {
        let mut n = 0;
        for d in sw.digest_drain() {
            if !d.name.ends_with("refresh") {
                continue;
            }
            let [key, slot, location] = d.values[..] else {
                return Err(LeoAgentError::Digest {
                    name: d.name,
                    n: d.values.len(),
                });
            };
            reinstall(sw, key, slot, location)?;
            n += 1;
        }
        self.refreshed += n as u64;
        Ok(n)
    }
}

/// Points hot key `key` (slot `slot`) at `location` and marks it fresh.
pub fn reinstall(
    sw: &mut Switch,
    key: Value,
    slot: Value,
    location: Value,
) -> Result<(), LeoAgentError> {
    let k = [("hdr.kv.key", KeyMatch::Exact(key))];
    let params = [("slot", slot), ("value", location)];
    sw.table_modify(PipeSel::All, HOT, &k, None, "hot_key", &params)?;
    sw.register_write(PipeSel::All, STALE, slot as u32, 0, None)?;
    Ok(())
}

//! Digests over P4Runtime: the controller's DigestEntry configurations (kept by the server)
//! and the thread that drains the switch's digest queue into DigestLists for the primary.
//! Data sent in a list is not sent again until the controller acks that list or the digest's
//! `ack_timeout_ns` passes (the DigestListAck rule of p4runtime.proto); an `ack_timeout_ns`
//! of 0 suppresses nothing.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use prost::Message;

use tonic::{Code, Status};

use super::super::codec::P4Error;
use super::super::proto::p4::v1 as p4v1;
use super::super::schema::Schema;
use super::stream::primary_tx;
use super::{Service, Shared, CALL_TIMEOUT};

/// How often the switch's digest queue is drained.
const DIGEST_POLL: Duration = Duration::from_millis(10);

/// Digest data sent and not yet acked: (digest id, encoded data) → (list id, sent at).
#[derive(Debug, Default)]
pub(super) struct Unacked(HashMap<(u32, Vec<u8>), (u64, Instant)>);

impl Unacked {
    /// Whether `data` of digest `id` may go out now (not sent within `timeout`, unacked).
    fn admits(&self, id: u32, data: &[u8], timeout: Duration, now: Instant) -> bool {
        timeout.is_zero()
            || self
                .0
                .get(&(id, data.to_vec()))
                .is_none_or(|(_, at)| now.duration_since(*at) >= timeout)
    }

    /// The controller acked list `list` of digest `id`: its data may be sent again.
    pub(super) fn ack(&mut self, id: u32, list: u64) {
        self.0.retain(|k, v| !(k.0 == id && v.0 == list));
    }

    /// Forgets data older than its digest's ack timeout (or of unconfigured digests).
    fn expire(
        &mut self,
        cfg: &std::collections::BTreeMap<u32, p4v1::digest_entry::Config>,
        now: Instant,
    ) {
        self.0.retain(|k, v| {
            cfg.get(&k.0).is_some_and(|c| {
                now.duration_since(v.1) < Duration::from_nanos(c.ack_timeout_ns.max(0) as u64)
            })
        });
    }
}

/// Moves the switch's digests to the primary controller as digest lists, for the digests the
/// controller configured (others are drained and dropped, as the switch's queue is bounded).
pub(super) fn digest_pump(s: &Shared) {
    use p4v1::p4_data::Data;
    while !s.stop.load(Ordering::Acquire) {
        std::thread::sleep(DIGEST_POLL);
        let configured = match s.digests.lock() {
            Ok(d) => d.clone(),
            Err(_) => return,
        };
        // Unconfigured digests stay in the switch's bounded queue (counted when it is full),
        // as without a P4Runtime server.
        if configured.is_empty() {
            continue;
        }
        let Ok(msgs) = s.handle.each(CALL_TIMEOUT, |sw, _| sw.digest_drain()) else {
            continue;
        };
        let Ok(pipeline) = s.pipeline.read().map(|p| p.clone()) else {
            return;
        };
        let mut by_id: std::collections::BTreeMap<u32, Vec<p4v1::P4Data>> = Default::default();
        for m in msgs.into_iter().flatten() {
            let Some(id) = pipeline.schema.digest_id(&m.name) else {
                continue;
            };
            if !configured.contains_key(&id) {
                continue;
            }
            let members = m
                .values
                .iter()
                .map(|v| p4v1::P4Data {
                    data: Some(Data::Bitstring(super::super::codec::from_value(*v))),
                })
                .collect();
            by_id.entry(id).or_default().push(p4v1::P4Data {
                data: Some(Data::Struct(p4v1::P4StructLike { members })),
            });
        }
        let Some(tx) = primary_tx(s) else { continue };
        let Ok(mut unacked) = s.unacked.lock() else {
            return;
        };
        let now = Instant::now();
        unacked.expire(&configured, now);
        for (id, data) in by_id {
            let cfg = &configured[&id];
            let timeout = Duration::from_nanos(cfg.ack_timeout_ns.max(0) as u64);
            let mut fresh: Vec<(Vec<u8>, p4v1::P4Data)> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for d in data {
                let key = d.encode_to_vec();
                let again = !timeout.is_zero() && !seen.insert(key.clone());
                if !again && unacked.admits(id, &key, timeout, now) {
                    fresh.push((key, d));
                }
            }
            let max = cfg.max_list_size.max(1) as usize;
            for chunk in fresh.chunks(max) {
                let list_id = s.next_list.fetch_add(1, Ordering::Relaxed);
                if !timeout.is_zero() {
                    for (key, _) in chunk {
                        unacked.0.insert((id, key.clone()), (list_id, now));
                    }
                }
                let list = p4v1::DigestList {
                    digest_id: id,
                    list_id,
                    data: chunk.iter().map(|c| c.1.clone()).collect(),
                    timestamp: std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos() as i64),
                };
                let _ = tx.try_send(Ok(p4v1::StreamMessageResponse {
                    update: Some(p4v1::stream_message_response::Update::Digest(list)),
                }));
            }
        }
    }
}

impl Service {
    /// A DigestEntry write: the digest's list configuration, kept by the server.
    pub(super) fn digest_write(
        &self,
        staged: bool,
        schema: &Schema,
        kind: i32,
        d: &p4v1::DigestEntry,
    ) -> Result<(), P4Error> {
        use p4v1::update::Type as U;
        if !schema.digests.contains_key(&d.digest_id) {
            return Err(P4Error::not_found(format!(
                "no digest with id {:#x}",
                d.digest_id
            )));
        }
        let mut cfg = self
            .digests_of(staged)
            .lock()
            .map_err(|_| P4Error::new(Code::Internal, "digest state poisoned"))?;
        let exists = cfg.contains_key(&d.digest_id);
        match U::try_from(kind).unwrap_or(U::Unspecified) {
            U::Insert if exists => Err(P4Error::new(
                Code::AlreadyExists,
                format!("digest {:#x} is already configured", d.digest_id),
            )),
            U::Modify if !exists => Err(P4Error::not_found(format!(
                "digest {:#x} is not configured",
                d.digest_id
            ))),
            U::Insert | U::Modify => {
                let c = d
                    .config
                    .ok_or_else(|| P4Error::invalid("digest entry without a config"))?;
                if c.max_list_size < 0 || c.max_timeout_ns < 0 || c.ack_timeout_ns < 0 {
                    return Err(P4Error::invalid(
                        "digest config values must not be negative",
                    ));
                }
                cfg.insert(d.digest_id, c);
                Ok(())
            }
            U::Delete if !exists => Err(P4Error::not_found(format!(
                "digest {:#x} is not configured",
                d.digest_id
            ))),
            U::Delete => {
                cfg.remove(&d.digest_id);
                Ok(())
            }
            U::Unspecified => Err(P4Error::invalid("update type is UNSPECIFIED")),
        }
    }

    /// Digest configurations (digest id 0: all).
    pub(super) fn digest_read(
        &self,
        staged: bool,
        schema: &Schema,
        d: &p4v1::DigestEntry,
    ) -> Result<Vec<p4v1::Entity>, Status> {
        if d.digest_id != 0 && !schema.digests.contains_key(&d.digest_id) {
            return Err(Status::not_found(format!(
                "no digest with id {:#x}",
                d.digest_id
            )));
        }
        let cfg = self
            .digests_of(staged)
            .lock()
            .map_err(|_| Status::internal("digest state poisoned"))?;
        Ok(cfg
            .iter()
            .filter(|(id, _)| d.digest_id == 0 || **id == d.digest_id)
            .map(|(id, c)| p4v1::Entity {
                entity: Some(p4v1::entity::Entity::DigestEntry(p4v1::DigestEntry {
                    digest_id: *id,
                    config: Some(*c),
                })),
            })
            .collect())
    }
}

//! The StreamChannel side of the server: arbitration updates (who is primary, told to every
//! controller when it changes or goes away), digest acks, packet-outs from the primary onto the CPU port, and the thread
//! that turns the CPU port's frames into packet-ins for the primary.

use std::sync::atomic::Ordering;
use std::time::Duration;

use dataplane::{FrameBatch, Nanos};
use tonic::{Code, Status};

use super::super::arbitration::Arbitration;
use super::super::codec::P4Error;
use super::super::packet_io;
use super::super::proto::google::rpc;
use super::super::proto::p4::v1 as p4v1;
use super::{status, u128_of, uint128, Service, Shared, StreamTx};

/// Moves frames from the CPU port to the primary controller as packet-ins.
pub(super) fn packet_in_pump(s: &Shared) {
    let Some(cpu) = &s.cpu else { return };
    let mut batch = FrameBatch::new(32);
    while !s.stop.load(Ordering::Acquire) {
        let frames: Vec<Vec<u8>> = {
            let Ok(mut port) = cpu.lock() else { return };
            match port.wait_readable(Duration::from_millis(5)) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(_) => {
                    drop(port);
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
            }
            batch.clear();
            if port.recv_batch(&mut batch, Nanos(0)).is_err() {
                continue;
            }
            batch.iter().map(|f| f.data.clone()).collect()
        };
        if frames.is_empty() {
            continue;
        }
        let pipeline = s.pipeline.read().map(|p| p.clone());
        let Ok(pipeline) = pipeline else { return };
        let target = {
            let Ok(arb) = s.arb.lock() else { return };
            arb.0.primary_stream().and_then(|id| {
                arb.1
                    .iter()
                    .find(|(sid, _)| *sid == id)
                    .map(|x| x.1.clone())
            })
        };
        let Some(tx) = target else { continue };
        for f in frames {
            let Some((payload, metadata)) =
                packet_io::packet_in(pipeline.schema.packet_in.as_ref(), &f)
            else {
                tracing::debug!(len = f.len(), "CPU frame shorter than the packet_in header");
                continue;
            };
            let msg = p4v1::StreamMessageResponse {
                update: Some(p4v1::stream_message_response::Update::Packet(
                    p4v1::PacketIn { payload, metadata },
                )),
            };
            // A slow controller loses packet-ins rather than stalling the CPU port.
            let _ = tx.try_send(Ok(msg));
        }
    }
}

/// The primary's stream, if a controller is primary.
pub(super) fn primary_tx(s: &Shared) -> Option<StreamTx> {
    let arb = s.arb.lock().ok()?;
    let id = arb.0.primary_stream()?;
    arb.1
        .iter()
        .find(|(sid, _)| *sid == id)
        .map(|x| x.1.clone())
}

impl Service {
    /// The arbitration answer for a controller with `election`.
    fn arbitration_msg(
        &self,
        arb: &Arbitration,
        election: Option<u128>,
    ) -> p4v1::StreamMessageResponse {
        let (code, message) = match arb.primary() {
            Some(p) if Some(p) == election => (Code::Ok, "you are the primary"),
            Some(_) => (
                Code::AlreadyExists,
                "a controller with a higher election id is primary",
            ),
            None => (Code::NotFound, "no controller is primary"),
        };
        p4v1::StreamMessageResponse {
            update: Some(p4v1::stream_message_response::Update::Arbitration(
                p4v1::MasterArbitrationUpdate {
                    device_id: self.shared.device_id,
                    role: None,
                    election_id: arb.highest().or(election).map(uint128),
                    status: Some(rpc::Status {
                        code: code as i32,
                        message: message.into(),
                        details: Vec::new(),
                    }),
                },
            )),
        }
    }

    /// A stream that has arbitrated names this device in every later update, or it ends with
    /// FAILED_PRECONDITION (the spec's arbitration rule 2.1).
    fn check_rearbitration_device(&self, sid: u64, device_id: u64) -> Result<(), Status> {
        let g = self
            .shared
            .arb
            .lock()
            .map_err(|_| Status::internal("arbitration state poisoned"))?;
        if g.0.election_of(sid).is_some() && device_id != self.shared.device_id {
            return Err(Status::failed_precondition(format!(
                "this stream arbitrated for device {}; it cannot switch to device {device_id}",
                self.shared.device_id
            )));
        }
        Ok(())
    }

    /// Handles one message of stream `sid`.
    pub(super) fn on_stream_message(
        &self,
        sid: u64,
        tx: &StreamTx,
        msg: p4v1::StreamMessageRequest,
    ) -> Result<(), Status> {
        use p4v1::stream_message_request::Update;
        match msg.update {
            Some(Update::Arbitration(a)) => {
                self.check_rearbitration_device(sid, a.device_id)?;
                self.check_device(a.device_id)?;
                if let Some(r) = &a.role {
                    Self::check_role(&r.name)?;
                }
                let election = u128_of(&a.election_id);
                let mut g = self
                    .shared
                    .arb
                    .lock()
                    .map_err(|_| Status::internal("arbitration state poisoned"))?;
                let change = g.0.update(sid, election).map_err(status)?;
                if !g.1.iter().any(|(s, _)| *s == sid) {
                    g.1.push((sid, tx.clone()));
                }
                let (arb, streams) = &*g;
                for (s, t) in streams {
                    if *s == sid || change.changed() {
                        let e = arb.election_of(*s).flatten();
                        let _ = t.try_send(Ok(self.arbitration_msg(arb, e)));
                    }
                }
                Ok(())
            }
            Some(Update::Packet(p)) => {
                let arb_ok = {
                    let g = self
                        .shared
                        .arb
                        .lock()
                        .map_err(|_| Status::internal("arbitration state poisoned"))?;
                    match g.0.election_of(sid) {
                        None => return Err(Status::failed_precondition(
                            "the first message on a StreamChannel must be an arbitration update",
                        )),
                        Some(e) => g.0.is_primary(e),
                    }
                };
                let r = if !arb_ok {
                    Err(P4Error::new(
                        Code::PermissionDenied,
                        "only the primary may send packet-outs",
                    ))
                } else {
                    self.packet_out(&p)
                };
                if let Err(e) = r {
                    let err = p4v1::StreamError {
                        canonical_code: e.code as i32,
                        message: e.message,
                        details: Some(p4v1::stream_error::Details::PacketOut(
                            p4v1::PacketOutError {
                                packet_out: Some(p),
                            },
                        )),
                        ..Default::default()
                    };
                    let _ = tx.try_send(Ok(p4v1::StreamMessageResponse {
                        update: Some(p4v1::stream_message_response::Update::Error(err)),
                    }));
                }
                Ok(())
            }
            // An acked list's data may be sent again.
            Some(Update::DigestAck(a)) => {
                if let Ok(mut u) = self.shared.unacked.lock() {
                    u.ack(a.digest_id, a.list_id);
                }
                Ok(())
            }
            Some(Update::Other(_)) => {
                let err = p4v1::StreamError {
                    canonical_code: Code::Unimplemented as i32,
                    message: "architecture-specific stream messages are not served".into(),
                    ..Default::default()
                };
                let _ = tx.try_send(Ok(p4v1::StreamMessageResponse {
                    update: Some(p4v1::stream_message_response::Update::Error(err)),
                }));
                Ok(())
            }
            None => Err(Status::invalid_argument("empty stream message")),
        }
    }

    fn packet_out(&self, p: &p4v1::PacketOut) -> Result<(), P4Error> {
        let pipeline = self
            .pipeline()
            .map_err(|e| P4Error::new(e.code(), e.message()))?;
        let frame = packet_io::packet_out_frame(
            pipeline.schema.packet_out.as_ref(),
            &p.payload,
            &p.metadata,
        )?;
        if frame.len() > dataplane::port::MAX_FRAME_LEN {
            // The CPU port would drop it unsaid: the client hears why.
            return Err(P4Error::new(
                Code::InvalidArgument,
                format!(
                    "a packet-out of {} bytes is longer than the largest frame ({} bytes)",
                    frame.len(),
                    dataplane::port::MAX_FRAME_LEN
                ),
            ));
        }
        let Some(cpu) = &self.shared.cpu else {
            return Err(P4Error::new(
                Code::FailedPrecondition,
                "this switch has no CPU port for packet I/O",
            ));
        };
        let mut port = cpu
            .lock()
            .map_err(|_| P4Error::new(Code::Internal, "CPU port poisoned"))?;
        let mut batch = FrameBatch::new(1);
        batch.push(&frame, Nanos(0));
        match port.send_batch(&mut batch, Nanos(0)) {
            Ok(1) => Ok(()),
            Ok(_) => Err(P4Error::new(
                Code::ResourceExhausted,
                "the CPU port dropped the packet-out",
            )),
            Err(e) => Err(P4Error::new(Code::Unavailable, format!("CPU port: {e}"))),
        }
    }

    /// Stream `sid` closed: when it was the primary, every other controller hears that there
    /// is none (NOT_FOUND) until one arbitrates again.
    pub(super) fn leave(&self, sid: u64) {
        let Ok(mut g) = self.shared.arb.lock() else {
            return;
        };
        let change = g.0.leave(sid);
        g.1.retain(|(s, _)| *s != sid);
        if change.changed() {
            let (arb, streams) = &*g;
            for (s, t) in streams {
                let e = arb.election_of(*s).flatten();
                let _ = t.try_send(Ok(self.arbitration_msg(arb, e)));
            }
        }
    }
}

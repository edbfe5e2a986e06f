//! The packet's way through the switch: ingress pass, the traffic manager's post-ingress
//! decisions (digest, then resubmit, or else mirror + unicast / multicast / copy-to-CPU, with
//! `drop_ctl`: bit 0 drops the packet, bit 1 its copy to the CPU, bit 2 its mirror; a copy to
//! a port that does not exist is dropped, [`crate::devport::is_port`]), per-port queues,
//! egress pass, egress mirroring, and output or recirculation.

use super::{
    port_pipe, DigestMessage, DropReason, EgressCopy, OutFrame, Pending, Shared, Switch,
    MIRROR_HDR_MAX,
};
use crate::exec::gress::{PassDrop, FRAME_CAPACITY};
use crate::exec::tm_reads::{read, TmReads};
use crate::exec::{run_gress, PassInput, PassIntrinsics};
use crate::ir::{Gress, Intrinsic, Target, Value};
use crate::phv::Phv;
use crate::tm::mirror::MirrorDest;
use crate::tm::pre::ReplicationRequest;
use crate::trace::{TraceEvent, TraceReplica, Tracer};

/// The Ethernet FCS: counted in `eg_intr_md.pkt_length`, in counter byte counts and in byte
/// meters as the hardware counts it, though pisa's frames (from pcaps and sockets) come
/// without it.
pub(crate) const FCS_LEN: usize = 4;

fn pass_drop_reason(d: &PassDrop) -> (DropReason, Option<String>) {
    match d {
        PassDrop::ParserError(f) => (DropReason::from_parser(*f), None),
        PassDrop::Program(e) => (DropReason::ProgramError, Some(e.to_string())),
    }
}

/// Whether a mirror of `gress` copies the packet as deparsed (else as it entered the gress):
/// Tofino 2's `mirror_io_select` ("mirror incoming or outgoing packet", 1: outgoing). Tofino 1
/// has no such field: its ingress mirrors the packet as received, its egress as deparsed.
fn mirror_outgoing(target: Target, gress: Gress, io_select: Value) -> bool {
    match target {
        Target::Tofino1 => gress == Gress::Egress,
        Target::Tofino2 => io_select & 1 != 0,
    }
}

/// What the multicast engine is asked for after an ingress pass that wrote destination bits
/// `written` (bit 1: `mcast_grp_a`, bit 2: `mcast_grp_b`).
fn replication_request(phv: &Phv, tm: &TmReads, written: u8) -> ReplicationRequest {
    ReplicationRequest {
        mcast_grp_a: (written & 2 != 0).then(|| read(phv, tm.grp_a) as u16),
        mcast_grp_b: (written & 4 != 0).then(|| read(phv, tm.grp_b) as u16),
        level1_exclusion_id: read(phv, tm.level1_exclusion_id) as u16,
        level2_exclusion_id: read(phv, tm.level2_exclusion_id) as u16,
        rid: read(phv, tm.rid) as u16,
        level1_mcast_hash: read(phv, tm.level1_mcast_hash) as u16,
        level2_mcast_hash: read(phv, tm.level2_mcast_hash) as u16,
    }
}

/// The bytes of a copy on its way to egress: borrowed (more copies of the same packet
/// follow), or the last use of a buffer that may leave as the frame itself (the copy then
/// puts a pool buffer with room for a frame in its place, instead of copying the bytes).
pub(crate) enum CopyBytes<'a> {
    Borrowed(&'a [u8]),
    Last(&'a mut Vec<u8>),
}

impl CopyBytes<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            CopyBytes::Borrowed(b) => b,
            CopyBytes::Last(v) => v,
        }
    }
}

impl Switch {
    /// The bytes of `pkt` in a buffer of their own: a pool buffer they are copied into, or
    /// the last use's buffer itself (a pool buffer with room for a frame left in its place).
    fn owned(&mut self, pkt: CopyBytes<'_>) -> Vec<u8> {
        let mut fresh = self.take_buf();
        match pkt {
            CopyBytes::Borrowed(b) => {
                fresh.extend_from_slice(b);
                fresh
            }
            CopyBytes::Last(v) => {
                fresh.reserve(FRAME_CAPACITY);
                std::mem::replace(v, fresh)
            }
        }
    }

    /// One ingress pass of `pkt` arriving on `port` (or re-entering it), then the TM.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ingress<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        port: u16,
        pkt: &[u8],
        resubmit: Option<&[u8]>,
        passes: u8,
        now: u64,
        kind: &'static str,
        out: &mut impl FnMut(OutFrame),
        tr: &mut T,
    ) {
        let pipe = port_pipe(port);
        if pipe as usize >= self.pipes.len() || port as usize >= super::NUM_DEVPORTS {
            self.record_drop(
                tr,
                now,
                port,
                Gress::Ingress,
                DropReason::BadIngressPort,
                None,
            );
            return;
        }
        if !self.ghost.dirty.is_empty() {
            self.ghost_drain(sh, pipe, now, tr);
        }
        let (prog, engines) = (sh.prog, sh.engines);
        let pli = self.pipes[pipe as usize].pipeline;
        let pl = &prog.pipelines[pli];
        tr.record(|| TraceEvent::GressStart {
            gress: Gress::Ingress,
            pipe,
            port,
            len: pkt.len(),
            kind,
        });
        // In the order of `pass_intrinsics(Gress::Ingress)`.
        let intrinsics = [
            resubmit.is_some() as u64,
            port as u64,
            now & 0xffff_ffff_ffff,
            self.ghost.ping_pong[pipe as usize] as u64,
        ];
        let md = self.port_md[port as usize];
        let inp = PassInput {
            intrinsics: PassIntrinsics::Planned(&intrinsics),
            extra: resubmit.unwrap_or(&md[..self.port_md_len]),
            packet: pkt,
            now,
        };
        let res = run_gress(
            pl,
            &engines[pli],
            Gress::Ingress,
            &mut self.pipes[pipe as usize],
            &mut self.work_ig[pli],
            &inp,
            tr,
        );
        if let Some(d) = &res.drop {
            let (reason, detail) = pass_drop_reason(d);
            self.record_drop(tr, now, port, Gress::Ingress, reason, detail);
            return;
        }
        let w = &self.work_ig[pli];
        let tm = &engines[pli].ingress.tm;
        let drop_ctl = read(&w.phv, tm.drop_ctl);
        // Digests first: they go out whatever happens to the packet.
        if !w.effects.digests.is_empty() {
            for i in 0..self.work_ig[pli].effects.digests.len() {
                let (d, vals) = std::mem::take(&mut self.work_ig[pli].effects.digests[i]);
                self.push_digest(sh, pipe, d, vals, now);
            }
        }
        // Tofino 2's deparser trigger shares the bus with resubmit, and resubmit has priority:
        // a pass that resubmits sends no trigger (tofino-model JBay
        // `DeparserIngress::HandleResubmit`: the trigger only `if (pgen_valid && nullptr ==
        // *resubmit_pkt)`; tofino2_base.p4: `pktgen` "is ONLY valid if resubmit_type is not
        // valid").
        if read(&self.work_ig[pli].phv, tm.pktgen) != 0 && !self.work_ig[pli].effects.resubmit {
            self.push_pktgen_trigger(pipe, pli, now);
        }
        let w = &self.work_ig[pli];
        let ucast = read(&w.phv, tm.ucast) as u16;
        let copy_to_cpu = read(&w.phv, tm.copy_to_cpu) != 0;
        let bypass = read(&w.phv, tm.bypass) != 0;
        let qid = read(&w.phv, tm.qid) as u8;
        let resubmit_req = w.effects.resubmit;
        let rx_len = pkt.len();
        let mirror_req = w.effects.mirror;
        let written = res.written;

        // Resubmit replaces everything else (except digests); drop_ctl bit 0 kills it.
        if resubmit_req && drop_ctl & 1 == 0 {
            if resubmit.is_some() {
                self.record_drop(
                    tr,
                    now,
                    port,
                    Gress::Ingress,
                    DropReason::ResubmitLimit,
                    None,
                );
                return;
            }
            self.stats.resubmits += 1;
            tr.record(|| TraceEvent::Resubmit);
            let mut data = [0u8; 8];
            let rd = &self.work_ig[pli].effects.resubmit_data;
            let k = rd.len().min(8);
            data[..k].copy_from_slice(&rd[..k]);
            self.ingress(sh, port, pkt, Some(&data), passes, now, "resubmit", out, tr);
            return;
        }

        // The packet itself: take the deparsed bytes out of the work area while egress runs.
        let mut pkt_out = std::mem::take(&mut self.work_ig[pli].out);

        // Ingress-to-egress mirror: the packet as received (or as deparsed, Tofino 2).
        if let Some(session) = mirror_req {
            let at = (port, passes, now);
            self.pass_mirror(sh, Gress::Ingress, pli, session, (pkt, &pkt_out), at, tr);
        }
        let mut sent = false;
        // The unicast copy is the packet's last use (no replica, no copy to the CPU after it).
        let to_cpu = copy_to_cpu && drop_ctl & 2 == 0;
        let last = written & 6 == 0 && !to_cpu;
        // The ingress deparser clears a unicast port that is not a port (72–127 of a pipe):
        // the packet goes on to its multicast groups only, or is gone.
        let no_port = drop_ctl & 1 == 0 && written & 1 != 0 && !crate::devport::is_port(ucast);
        if no_port {
            let detail = Some(format!("unicast port {ucast}: a pipe has ports 0-71 only"));
            self.record_drop(
                tr,
                now,
                port,
                Gress::Ingress,
                DropReason::NoSuchPort,
                detail,
            );
        }
        if drop_ctl & 1 == 0 {
            if written & 1 != 0 && !no_port {
                sent = true;
                tr.record(|| TraceEvent::Unicast { port: ucast });
                let copy = EgressCopy {
                    qid,
                    ..EgressCopy::new(ucast, 0, false, bypass, "packet", rx_len)
                };
                let bytes = if last {
                    CopyBytes::Last(&mut pkt_out)
                } else {
                    CopyBytes::Borrowed(&pkt_out)
                };
                self.enqueue(sh, &copy, bytes, passes, now, out, tr);
            }
            if written & 6 != 0 {
                sent = true;
                let req = replication_request(&self.work_ig[pli].phv, tm, written);
                let each = EgressCopy {
                    qid,
                    ..EgressCopy::new(0, 0, false, bypass, "replica", rx_len)
                };
                self.multicast(sh, &req, &each, &pkt_out, port, passes, now, out, tr);
            }
        }
        if to_cpu {
            sent = true;
            match self.cfg.cpu_port {
                Some(cpu) => {
                    tr.record(|| TraceEvent::CopyToCpu { port: cpu });
                    let copy = EgressCopy::new(cpu, 0, true, bypass, "copy_to_cpu", rx_len);
                    let bytes = CopyBytes::Last(&mut pkt_out);
                    self.enqueue(sh, &copy, bytes, passes, now, out, tr);
                }
                None => {
                    self.record_drop(tr, now, port, Gress::Ingress, DropReason::NoCpuPort, None)
                }
            }
        }
        if !sent && !no_port {
            let reason = if drop_ctl & 1 != 0 {
                DropReason::IngressDropCtl
            } else {
                DropReason::NoDestination
            };
            self.record_drop(tr, now, port, Gress::Ingress, reason, None);
        } else if drop_ctl & 1 != 0 && (written & 7) != 0 {
            self.record_drop(
                tr,
                now,
                port,
                Gress::Ingress,
                DropReason::IngressDropCtl,
                None,
            );
        }
        self.work_ig[pli].out = pkt_out;
    }

    /// Tofino 2: the ingress deparser of `pipe` (running pipeline `pli`) set
    /// `ig_intr_md_for_dprsr.pktgen`: a deparser trigger for the pipe's packet generator.
    fn push_pktgen_trigger(&mut self, pipe: u16, pli: usize, ts: u64) {
        self.stats.pktgen_triggers += 1;
        if self.pktgen_triggers.len() >= self.cfg.digest_capacity {
            self.stats.pktgen_trigger_overflow += 1;
            return;
        }
        let (w, g) = (&self.work_ig[pli], &self.engines[pli].ingress);
        let mut data = [0u8; crate::exec::deparser::PKTGEN_TRIGGER_BYTES];
        let d = &w.effects.pktgen_data;
        data[..d.len()].copy_from_slice(d);
        self.pktgen_triggers
            .push_back(crate::pktgen::DeparserTrigger {
                pipe,
                data,
                address: w.intrinsic(g, Intrinsic::IgDprsrPktgenAddress) as u16,
                length: w.intrinsic(g, Intrinsic::IgDprsrPktgenLength) as u16,
                ts,
            });
    }

    fn push_digest(
        &mut self,
        sh: &Shared<'_>,
        pipe: u16,
        digest: u32,
        values: Vec<Value>,
        ts: u64,
    ) {
        self.stats.digests += 1;
        if self.digests.len() >= self.cfg.digest_capacity {
            self.stats.digest_overflow += 1;
            return;
        }
        let pli = self.pipes[pipe as usize].pipeline;
        let name = sh.prog.pipelines[pli]
            .digests
            .get(digest as usize)
            .map(|d| d.name.clone())
            .unwrap_or_default();
        self.digests.push_back(DigestMessage {
            pipe,
            digest,
            name,
            values,
            ts,
        });
    }

    /// Replicate through the PRE and send every replica to egress (each a copy of `each`
    /// with its replica's port, rid and rid_first).
    #[allow(clippy::too_many_arguments)]
    fn multicast<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        req: &ReplicationRequest,
        each: &EgressCopy,
        pkt: &[u8],
        in_port: u16,
        passes: u8,
        now: u64,
        out: &mut impl FnMut(OutFrame),
        tr: &mut T,
    ) {
        let mut reps = std::mem::take(&mut self.replicas);
        reps.clear();
        self.pre.replicate(req, &mut reps);
        if T::ENABLED {
            for grp in [req.mcast_grp_a, req.mcast_grp_b].into_iter().flatten() {
                let replicas = reps
                    .iter()
                    .filter(|r| r.mgid == grp)
                    .map(|r| TraceReplica {
                        port: r.port,
                        rid: r.rid,
                        rid_first: r.rid_first,
                    })
                    .collect();
                tr.record(|| TraceEvent::Multicast {
                    group: grp,
                    replicas,
                });
            }
        }
        if reps.is_empty() {
            self.record_drop(
                tr,
                now,
                in_port,
                Gress::Ingress,
                DropReason::EmptyMulticast,
                Some(format!(
                    "groups {:?} / {:?}",
                    req.mcast_grp_a, req.mcast_grp_b
                )),
            );
        }
        for r in &reps {
            let copy = EgressCopy {
                port: r.port,
                rid: r.rid,
                rid_first: r.rid_first,
                ..*each
            };
            self.enqueue(sh, &copy, CopyBytes::Borrowed(pkt), passes, now, out, tr);
        }
        self.replicas = reps;
    }

    /// The mirror a pass of `gress` (on pipeline `pli`) asked for, to `session`: none when
    /// its `drop_ctl` bit 2 is set (counted as [`DropReason::MirrorDropCtl`]), else a copy of
    /// `packets.0` (the packet as it entered the pass) or `packets.1` (as deparsed), as
    /// [`mirror_outgoing`] picks, with the pass's mirror header. `at`: the port, the passes so
    /// far and the time (a multicast copy takes the session's PRE hashes, not the packet's).
    #[allow(clippy::too_many_arguments)]
    fn pass_mirror<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        gress: Gress,
        pli: usize,
        session: u16,
        packets: (&[u8], &[u8]),
        at: (u16, u8, u64),
        tr: &mut T,
    ) {
        let (port, passes, now) = at;
        let (w, tm) = match gress {
            Gress::Ingress => (&self.work_ig[pli], &sh.engines[pli].ingress.tm),
            Gress::Egress => (&self.work_eg[pli], &sh.engines[pli].egress.tm),
        };
        if read(&w.phv, tm.drop_ctl) & 4 != 0 {
            let detail = Some(format!("session {session}"));
            self.record_drop(tr, now, port, gress, DropReason::MirrorDropCtl, detail);
            return;
        }
        let outgoing = mirror_outgoing(sh.prog.target, gress, read(&w.phv, tm.mirror_io_select));
        let mut hdr = [0u8; MIRROR_HDR_MAX];
        let mh = &w.effects.mirror_header;
        let hl = mh.len().min(MIRROR_HDR_MAX);
        hdr[..hl].copy_from_slice(&mh[..hl]);
        let pkt = if outgoing { packets.1 } else { packets.0 };
        self.mirror_copy(gress, session, pkt, &hdr[..hl], port, passes, now, tr);
    }

    /// Send a mirror copy (`pkt` already the right bytes) to its session's destination.
    #[allow(clippy::too_many_arguments)]
    fn mirror_copy<T: Tracer>(
        &mut self,
        gress: Gress,
        session: u16,
        pkt: &[u8],
        hdr: &[u8],
        port: u16,
        passes: u8,
        now: u64,
        tr: &mut T,
    ) {
        let Some(cfg) = self.mirror.active(session, gress).copied() else {
            self.record_drop(
                tr,
                now,
                port,
                gress,
                DropReason::MirrorSessionMissing,
                Some(format!(
                    "session {session} not configured or not enabled for {gress}"
                )),
            );
            return;
        };
        if passes + 1 >= self.cfg.max_passes {
            self.record_drop(tr, now, port, gress, DropReason::PassLimit, None);
            return;
        }
        self.stats.mirrors += 1;
        let (hl, len) = cfg.copy_len(hdr.len(), pkt.len());
        let hdr = &hdr[..hl];
        tr.record(|| TraceEvent::Mirror {
            gress,
            session,
            len,
        });
        let mut mirror_hdr = [0u8; MIRROR_HDR_MAX];
        mirror_hdr[..hdr.len()].copy_from_slice(hdr);
        let mut targets: smallvec::SmallVec<[(u16, u16, bool); 8]> = smallvec::SmallVec::new();
        match cfg.dest.replication() {
            None => {
                if let MirrorDest::Port(p) = cfg.dest {
                    targets.push((p, 0, false));
                }
            }
            Some(req) => {
                let mut reps = std::mem::take(&mut self.replicas);
                reps.clear();
                self.pre.replicate(&req, &mut reps);
                targets.extend(reps.iter().map(|r| (r.port, r.rid, r.rid_first)));
                self.replicas = reps;
            }
        }
        for (p, rid, first) in targets {
            let mut buf = self.take_buf();
            buf.extend_from_slice(&pkt[..len]);
            // The hardware's pkt_length of a mirror copy counts its mirror header.
            let length = len + hdr.len();
            let mut copy = EgressCopy::new(p, rid, first, false, "mirror", length);
            copy.mirror_len = hdr.len() as u8;
            copy.mirror_hdr = mirror_hdr;
            self.pending.push_back(Pending::Egress {
                copy,
                buf,
                passes: passes + 1,
                now,
            });
        }
    }

    /// Queue admission, then egress (or straight out with `bypass_egress`); in split mode the
    /// copy is handed out for the thread of its port's pipe instead.
    #[allow(clippy::too_many_arguments)]
    fn enqueue<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        copy: &EgressCopy,
        pkt: CopyBytes<'_>,
        passes: u8,
        now: u64,
        out: &mut impl FnMut(OutFrame),
        tr: &mut T,
    ) {
        if self.split {
            // Split mode: the copy goes to the thread of its port's pipe ([`super::split`]).
            let buf = self.owned(pkt);
            self.tm_out.push(super::TmCopy {
                copy: *copy,
                buf,
                passes,
                now,
            });
            return;
        }
        self.egress(sh, copy, pkt, passes, now, out, tr)
    }

    /// One copy on its egress port: queue, egress pass, mirror, output or recirculation.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn egress<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        copy: &EgressCopy,
        bytes: CopyBytes<'_>,
        passes: u8,
        now: u64,
        out: &mut impl FnMut(OutFrame),
        tr: &mut T,
    ) {
        let port = copy.port;
        let pipe = port_pipe(port);
        if pipe as usize >= self.pipes.len() || port as usize >= super::NUM_DEVPORTS {
            self.record_drop(
                tr,
                now,
                port,
                Gress::Egress,
                DropReason::BadEgressPort,
                None,
            );
            return;
        }
        if !crate::devport::is_port(port) {
            let detail = Some(format!(
                "{} to port {port}: a pipe has ports 0-71 only",
                copy.kind
            ));
            self.record_drop(tr, now, port, Gress::Egress, DropReason::NoSuchPort, detail);
            return;
        }
        let adm = self.queues[port as usize].enqueue(now, bytes.bytes().len() as u32);
        if !adm.accepted {
            self.record_drop(tr, now, port, Gress::Egress, DropReason::QueueFull, None);
            return;
        }
        if sh.engines[self.pipes[pipe as usize].pipeline]
            .ghost
            .is_some()
        {
            self.ghost_queue(sh, port, now, tr);
        }
        let departure = adm.departure_ns.max(now);
        let dequeue = now + u64::from(adm.deq_timedelta);
        tr.record(|| TraceEvent::Queue {
            port,
            qdepth: adm.enq_qdepth,
            delay_ns: u64::from(adm.deq_timedelta),
            ecn: adm.ecn_mark,
        });
        if copy.bypass {
            tr.record(|| TraceEvent::BypassEgress);
            let buf = self.owned(bytes);
            self.emit(port, buf, departure, passes, out, tr);
            return;
        }
        let pkt = bytes.bytes();
        let (prog, engines) = (sh.prog, sh.engines);
        let pli = self.pipes[pipe as usize].pipeline;
        let pl = &prog.pipelines[pli];
        tr.record(|| TraceEvent::GressStart {
            gress: Gress::Egress,
            pipe,
            port,
            len: pkt.len(),
            kind: copy.kind,
        });
        let congest = adm.ecn_mark as u64;
        // In the order of `pass_intrinsics(Gress::Egress)`.
        let intrinsics = [
            port as u64,
            adm.enq_qdepth as u64,
            congest,
            now & 0xffff_ffff,
            adm.deq_qdepth as u64,
            congest,
            adm.deq_timedelta as u64,
            copy.rid as u64,
            copy.rid_first as u64,
            u64::from(copy.pkt_length),
            u64::from(self.port_queues[port as usize].queue(copy.qid)),
        ];
        let inp = PassInput {
            intrinsics: PassIntrinsics::Planned(&intrinsics),
            extra: &copy.mirror_hdr[..copy.mirror_len as usize],
            packet: pkt,
            now: dequeue,
        };
        let res = run_gress(
            pl,
            &engines[pli],
            Gress::Egress,
            &mut self.pipes[pipe as usize],
            &mut self.work_eg[pli],
            &inp,
            tr,
        );
        if let Some(d) = &res.drop {
            let (reason, detail) = pass_drop_reason(d);
            self.record_drop(tr, departure, port, Gress::Egress, reason, detail);
            return;
        }
        let g = &engines[pli].egress;
        let w = &self.work_eg[pli];
        let drop_ctl = read(&w.phv, g.tm.drop_ctl);
        let mirror_req = w.effects.mirror;
        let deparsed = std::mem::take(&mut self.work_eg[pli].out);
        // Egress-to-egress mirror: the packet as deparsed (or as it entered egress, Tofino 2).
        if let Some(session) = mirror_req {
            let at = (port, passes, departure);
            self.pass_mirror(sh, Gress::Egress, pli, session, (pkt, &deparsed), at, tr);
        }
        if drop_ctl & 1 != 0 {
            self.record_drop(
                tr,
                departure,
                port,
                Gress::Egress,
                DropReason::EgressDropCtl,
                None,
            );
            self.work_eg[pli].out = deparsed;
        } else {
            // The deparsed bytes leave as the frame (no copy); the work area takes a buffer
            // from the pool, with room for a frame.
            let mut fresh = self.take_buf();
            fresh.reserve(FRAME_CAPACITY);
            self.work_eg[pli].out = fresh;
            self.emit(port, deparsed, departure, passes, out, tr);
        }
    }

    /// A frame (`buf`) leaves on `port`, or re-enters ingress if `port` loops back.
    fn emit<T: Tracer>(
        &mut self,
        port: u16,
        mut buf: Vec<u8>,
        ts: u64,
        passes: u8,
        out: &mut impl FnMut(OutFrame),
        tr: &mut T,
    ) {
        // The MAC pads a frame egress made shorter than the minimum (recirculation too: it
        // goes through the port's MAC).
        if buf.len() < self.cfg.min_frame {
            buf.resize(self.cfg.min_frame, 0);
        }
        if self.loopback.get(port) {
            if passes + 1 >= self.cfg.max_passes {
                self.record_drop(tr, ts, port, Gress::Egress, DropReason::PassLimit, None);
                self.give(buf);
                return;
            }
            self.stats.recirculations += 1;
            tr.record(|| TraceEvent::Recirculate { port });
            self.pending.push_back(Pending::Ingress {
                port,
                buf,
                passes: passes + 1,
                now: ts,
            });
            return;
        }
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += buf.len() as u64;
        let len = buf.len();
        tr.record(|| TraceEvent::Output { port, len });
        out(OutFrame {
            port,
            bytes: buf,
            ts,
        });
    }
}

impl EgressCopy {
    pub(crate) fn new(
        port: u16,
        rid: u16,
        rid_first: bool,
        bypass: bool,
        kind: &'static str,
        frame_len: usize,
    ) -> EgressCopy {
        EgressCopy {
            port,
            rid,
            rid_first,
            pkt_length: (frame_len + FCS_LEN).min(u16::MAX as usize) as u16,
            qid: 0,
            mirror_len: 0,
            mirror_hdr: [0; MIRROR_HDR_MAX],
            bypass,
            kind,
        }
    }
}

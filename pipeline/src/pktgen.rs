//! Tofino's packet generator: applications (apps) that, on a trigger, inject batches of
//! packets built from a buffer template into a pipe through its packet-generation port.
//!
//! Modelled: timer triggers, one-shot and periodic (the kind 1Pipe's beacons need), batches of
//! `packets_per_batch` packets `batch_count` times per trigger with inter-packet and
//! inter-batch gaps, and the 6-byte pktgen timer header, which overwrites the first six bytes
//! of the template (where the Ethernet destination would be) as on the chip:
//!
//! ```text
//! Tofino 1: pad(3) pipe_id(2) app_id(3) | pad(8) | batch_id(16) | packet_id(16)
//! Tofino 2: pad(2) pipe_id(2) app_id(4) | pad(8) | batch_id(16) | packet_id(16)
//! ```
//!
//! Generated packets enter ingress on the pipe's packet-generation port: port 68 of the pipe
//! (quad 17, [`devport::recirc_port`]) on Tofino 1; on Tofino 2 the app names one of ports
//! 0..=7 of its pipe.
//!
//! Tofino 2's deparser trigger ([`Trigger::Deparser`]): an ingress deparser that sets
//! `ig_intr_md_for_dprsr.pktgen` sends the generator of its pipe the header it gave
//! `Pktgen.emit` (its first 128 bits) with `pktgen_address` and `pktgen_length`; each enabled
//! deparser-trigger app of the pipe whose 128-bit value/mask pattern matches those bits fires
//! (the driver documents the trigger as "metadata from the deparser matches the
//! configuration", a ternary match on 128 bits). The switch queues these triggers
//! ([`DeparserTrigger`]); the runtime hands them to [`Pktgen::deparser_trigger`]. Not modelled:
//! apps that take their buffer offset and length from the trigger (the driver's
//! `offset_len_from_recir_pkt`): pisa's apps hold their own template, so `pktgen_address` and
//! `pktgen_length` are carried but not used. Port-down, recirculation and PFC triggers are not
//! modelled.
//!
//! Like the rest of the model this has no clock: the caller passes `now` (nanoseconds) to
//! [`Pktgen::poll`] and asks [`Pktgen::next_due`] when to call again.

use thiserror::Error;

use crate::devport;
use crate::ir::Target;

/// Bytes of the pktgen header at the start of a generated packet.
pub const PKTGEN_HEADER_LEN: usize = 6;

/// Apps per pipe: 8 on Tofino 1, 16 on Tofino 2.
pub fn apps_per_pipe(target: Target) -> u8 {
    match target {
        Target::Tofino1 => 8,
        Target::Tofino2 => 16,
    }
}

/// What starts an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Once, `period_ns` after the app is enabled.
    OneShot,
    /// Every `period_ns` from when the app is enabled.
    Periodic,
    /// Tofino 2: a deparser trigger of the app's pipe whose first 128 bits match `value` where
    /// `mask` has ones (`period_ns` is not used).
    Deparser { value: [u8; 16], mask: [u8; 16] },
}

/// A Tofino 2 ingress deparser's trigger (`ig_intr_md_for_dprsr.pktgen` = 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeparserTrigger {
    pub pipe: u16,
    /// What the deparser gave `Pktgen.emit`, first 16 bytes (zeros past its end, and all zeros
    /// when it was not called).
    pub data: [u8; 16],
    /// `pktgen_address` and `pktgen_length` (carried, not used: see the module doc).
    pub address: u16,
    pub length: u16,
    /// When the packet left the deparser (ns).
    pub ts: u64,
}

/// The configuration of one app, as the control plane writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppConfig {
    pub pipe: u16,
    pub app_id: u8,
    pub trigger: Trigger,
    /// The timer: nanoseconds between triggers (or before the one shot).
    pub period_ns: u64,
    /// Batches per trigger (≥ 1).
    pub batch_count: u16,
    /// Packets per batch (≥ 1).
    pub packets_per_batch: u16,
    /// Nanoseconds between the packets of a batch.
    pub ipg_ns: u64,
    /// Nanoseconds between batches.
    pub ibg_ns: u64,
    /// The packet in the pktgen buffer; its first six bytes become the pktgen header.
    pub template: Vec<u8>,
    /// Tofino 2: the pipe-local generation port (0..=7). Ignored on Tofino 1 (port 68).
    pub port: u16,
}

/// A bad app configuration.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PktgenError {
    #[error("pktgen app {app_id}: this chip has apps 0..{max}")]
    AppId { app_id: u8, max: u8 },
    #[error("pktgen app {app_id}: pipe {pipe} does not exist (0..{pipes})")]
    Pipe { app_id: u8, pipe: u16, pipes: u16 },
    #[error("pktgen app {app_id}: the timer period must be at least 1 ns")]
    Period { app_id: u8 },
    #[error("pktgen app {app_id}: batch_count and packets_per_batch must be at least 1")]
    Batch { app_id: u8 },
    #[error("pktgen app {app_id}: the template is {len} bytes, shorter than the {PKTGEN_HEADER_LEN}-byte pktgen header")]
    Template { app_id: u8, len: usize },
    #[error("pktgen app {app_id}: Tofino 2 generates on ports 0..=7 of a pipe, not {port}")]
    Port { app_id: u8, port: u16 },
    #[error("pktgen app {app_id} of pipe {pipe} is not configured")]
    NoSuchApp { app_id: u8, pipe: u16 },
    #[error("pktgen app {app_id}: the deparser trigger is Tofino 2's")]
    DeparserTrigger { app_id: u8 },
}

/// A generated packet: it enters ingress on `port` at `ts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenFrame {
    pub port: u16,
    pub ts: u64,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone)]
struct App {
    cfg: AppConfig,
    /// When the next trigger fires; `None` while disabled or after a one shot.
    next_trigger: Option<u64>,
    /// A deparser-trigger app is enabled.
    armed: bool,
    /// Packets generated so far.
    generated: u64,
}

/// The packet generator of one chip.
#[derive(Debug, Clone)]
pub struct Pktgen {
    target: Target,
    pipes: u16,
    apps: Vec<App>,
}

impl Pktgen {
    /// A generator for a chip of `target` with `pipes` pipes, no apps configured.
    pub fn new(target: Target, pipes: u16) -> Self {
        Pktgen {
            target,
            pipes: pipes.clamp(1, devport::MAX_PIPES),
            apps: Vec::new(),
        }
    }

    /// Configures (or reconfigures, disabled) an app.
    pub fn configure(&mut self, cfg: AppConfig) -> Result<(), PktgenError> {
        let app_id = cfg.app_id;
        let max = apps_per_pipe(self.target);
        if app_id >= max {
            return Err(PktgenError::AppId { app_id, max });
        }
        if cfg.pipe >= self.pipes {
            return Err(PktgenError::Pipe {
                app_id,
                pipe: cfg.pipe,
                pipes: self.pipes,
            });
        }
        let deparser = matches!(cfg.trigger, Trigger::Deparser { .. });
        if deparser && self.target != Target::Tofino2 {
            return Err(PktgenError::DeparserTrigger { app_id });
        }
        if cfg.period_ns == 0 && !deparser {
            return Err(PktgenError::Period { app_id });
        }
        if cfg.batch_count == 0 || cfg.packets_per_batch == 0 {
            return Err(PktgenError::Batch { app_id });
        }
        if cfg.template.len() < PKTGEN_HEADER_LEN {
            return Err(PktgenError::Template {
                app_id,
                len: cfg.template.len(),
            });
        }
        if self.target == Target::Tofino2 && cfg.port > 7 {
            return Err(PktgenError::Port {
                app_id,
                port: cfg.port,
            });
        }
        let app = App {
            cfg,
            next_trigger: None,
            armed: false,
            generated: 0,
        };
        match self.find(app.cfg.pipe, app_id) {
            Some(i) => self.apps[i] = app,
            None => self.apps.push(app),
        }
        Ok(())
    }

    fn find(&self, pipe: u16, app_id: u8) -> Option<usize> {
        self.apps
            .iter()
            .position(|a| a.cfg.pipe == pipe && a.cfg.app_id == app_id)
    }

    /// Enables an app at `now`: its first trigger fires one period later.
    pub fn enable(&mut self, pipe: u16, app_id: u8, now: u64) -> Result<(), PktgenError> {
        let i = self
            .find(pipe, app_id)
            .ok_or(PktgenError::NoSuchApp { app_id, pipe })?;
        let app = &mut self.apps[i];
        match app.cfg.trigger {
            Trigger::Deparser { .. } => app.armed = true,
            Trigger::OneShot | Trigger::Periodic => {
                app.next_trigger = Some(now.saturating_add(app.cfg.period_ns))
            }
        }
        Ok(())
    }

    /// Disables an app; packets it would still generate are not.
    pub fn disable(&mut self, pipe: u16, app_id: u8) -> Result<(), PktgenError> {
        let i = self
            .find(pipe, app_id)
            .ok_or(PktgenError::NoSuchApp { app_id, pipe })?;
        self.apps[i].next_trigger = None;
        self.apps[i].armed = false;
        Ok(())
    }

    /// A deparser trigger ([`DeparserTrigger`]): every enabled deparser-trigger app of its
    /// pipe whose pattern matches fires at the trigger's time, appending its packets to `out`.
    pub fn deparser_trigger(&mut self, t: &DeparserTrigger, out: &mut Vec<GenFrame>) {
        for i in 0..self.apps.len() {
            let app = &self.apps[i];
            let Trigger::Deparser { value, mask } = app.cfg.trigger else {
                continue;
            };
            let hit = (0..16).all(|k| (t.data[k] ^ value[k]) & mask[k] == 0);
            if !app.armed || app.cfg.pipe != t.pipe || !hit {
                continue;
            }
            let port = self.port_of(&app.cfg);
            self.apps[i].fire(t.ts, port, self.target, out);
        }
    }

    /// Packets an app has generated.
    pub fn generated(&self, pipe: u16, app_id: u8) -> u64 {
        self.find(pipe, app_id)
            .map_or(0, |i| self.apps[i].generated)
    }

    /// The earliest trigger still to fire.
    pub fn next_due(&self) -> Option<u64> {
        self.apps.iter().filter_map(|a| a.next_trigger).min()
    }

    /// The ingress port of an app's packets.
    fn port_of(&self, cfg: &AppConfig) -> u16 {
        match self.target {
            Target::Tofino1 => devport::recirc_port(cfg.pipe),
            Target::Tofino2 => devport::devport(cfg.pipe, cfg.port),
        }
    }

    /// Fires every trigger due at or before `now`, appending the packets (each with the time
    /// it enters ingress, which for later packets of a trigger's batches may be after `now`)
    /// to `out` in time order per app.
    pub fn poll(&mut self, now: u64, out: &mut Vec<GenFrame>) {
        for i in 0..self.apps.len() {
            while let Some(t) = self.apps[i].next_trigger.filter(|&t| t <= now) {
                let port = self.port_of(&self.apps[i].cfg);
                let app = &mut self.apps[i];
                app.fire(t, port, self.target, out);
                app.next_trigger = match app.cfg.trigger {
                    Trigger::Periodic => Some(t + app.cfg.period_ns),
                    Trigger::OneShot | Trigger::Deparser { .. } => None,
                };
            }
        }
    }
}

impl App {
    fn fire(&mut self, t: u64, port: u16, target: Target, out: &mut Vec<GenFrame>) {
        let cfg = &self.cfg;
        // Batch timing as tofino-model times it (`pktgen-app-reg.cpp`, the app's timer): the
        // inter-batch timer starts with a batch's first packet, and the next batch starts
        // when both it and the batch's packets (one per ipg) are done, so batches start
        // max(ibg, n·ipg) apart. The chip's own timing of "ibg" is not public; this is the
        // model's rule.
        let n = u64::from(cfg.packets_per_batch);
        let batch_gap = cfg.ibg_ns.max(n * cfg.ipg_ns);
        for b in 0..cfg.batch_count {
            // The batch id starts at 0 on every trigger (tofino-model `app_timer::start()`
            // clears `b_count`; tofino2_base.p4: batch_id "Start at 0 and increment to a
            // programmed number").
            let batch_id = b;
            for p in 0..cfg.packets_per_batch {
                let ts = t + u64::from(b) * batch_gap + u64::from(p) * cfg.ipg_ns;
                let mut bytes = cfg.template.clone();
                bytes[..PKTGEN_HEADER_LEN].copy_from_slice(&header(target, cfg, batch_id, p));
                out.push(GenFrame { port, ts, bytes });
                self.generated += 1;
            }
        }
    }
}

/// The pktgen timer header of one packet.
fn header(target: Target, cfg: &AppConfig, batch_id: u16, packet_id: u16) -> [u8; 6] {
    let pipe = (cfg.pipe & 0x3) as u8;
    let first = match target {
        Target::Tofino1 => pipe << 3 | (cfg.app_id & 0x7),
        Target::Tofino2 => pipe << 4 | (cfg.app_id & 0xf),
    };
    let [b0, b1] = batch_id.to_be_bytes();
    let [p0, p1] = packet_id.to_be_bytes();
    [first, 0, b0, b1, p0, p1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(trigger: Trigger) -> AppConfig {
        AppConfig {
            pipe: 1,
            app_id: 5,
            trigger,
            period_ns: 3_000,
            batch_count: 2,
            packets_per_batch: 3,
            ipg_ns: 10,
            ibg_ns: 100,
            template: (0u8..64).collect(),
            port: 0,
        }
    }

    #[test]
    fn a_periodic_timer_fires_batches_with_the_header_on_the_pktgen_port() {
        let mut g = Pktgen::new(Target::Tofino1, 4);
        g.configure(app(Trigger::Periodic)).unwrap();
        assert_eq!(g.next_due(), None, "disabled until enabled");
        g.enable(1, 5, 1_000).unwrap();
        assert_eq!(g.next_due(), Some(4_000));
        let mut out = Vec::new();
        g.poll(3_999, &mut out);
        assert!(out.is_empty());
        g.poll(7_000, &mut out);
        assert_eq!(out.len(), 12, "two triggers of 2 batches of 3");
        assert!(out.iter().all(|f| f.port == 128 + 68));
        let ts: Vec<u64> = out[..6].iter().map(|f| f.ts).collect();
        // Batches start max(ibg, n·ipg) = max(100, 30) ns apart (tofino-model's timer).
        assert_eq!(ts, [4_000, 4_010, 4_020, 4_100, 4_110, 4_120]);
        assert_eq!(out[6].ts, 7_000);
        // pipe 1, app 5 on Tofino 1: 0b000_01_101; batch ids restart at 0 on each trigger.
        assert_eq!(out[4].bytes[..6], [0x0d, 0, 0, 1, 0, 1]);
        assert_eq!(out[6].bytes[..6], [0x0d, 0, 0, 0, 0, 0]);
        assert_eq!(out[11].bytes[..6], [0x0d, 0, 0, 1, 0, 2]);
        assert_eq!(out[0].bytes[6..], (6u8..64).collect::<Vec<_>>()[..]);
        assert_eq!(g.next_due(), Some(10_000));
        assert_eq!(g.generated(1, 5), 12);
        g.disable(1, 5).unwrap();
        g.poll(100_000, &mut out);
        assert_eq!(out.len(), 12);
    }

    /// The batch id of every trigger's first batch is 0 (tofino-model `pktgen-app-reg.cpp`
    /// `app_timer::start()` clears `b_count`), and with ibg below n·ipg the next batch waits
    /// for the last packet's gap: batch 2 of ipg 10, n 3, ibg 0 starts at +30 ns, not on the
    /// nanosecond of batch 1's last packet.
    #[test]
    fn batch_ids_restart_per_trigger_and_batches_wait_for_their_packets() {
        let mut g = Pktgen::new(Target::Tofino1, 4);
        g.configure(AppConfig {
            ibg_ns: 0,
            ..app(Trigger::Periodic)
        })
        .unwrap();
        g.enable(1, 5, 0).unwrap();
        let mut out = Vec::new();
        g.poll(6_000, &mut out);
        assert_eq!(out.len(), 12, "two triggers of 2 batches of 3");
        let ts: Vec<u64> = out[..6].iter().map(|f| f.ts).collect();
        assert_eq!(ts, [3_000, 3_010, 3_020, 3_030, 3_040, 3_050]);
        let batch = |f: &GenFrame| u16::from_be_bytes([f.bytes[2], f.bytes[3]]);
        let ids: Vec<u16> = out.iter().map(batch).collect();
        assert_eq!(ids, [0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn a_one_shot_fires_once_and_tofino2_names_its_port() {
        let mut g = Pktgen::new(Target::Tofino2, 2);
        g.configure(AppConfig {
            port: 6,
            app_id: 12,
            ..app(Trigger::OneShot)
        })
        .unwrap();
        g.enable(1, 12, 0).unwrap();
        let mut out = Vec::new();
        g.poll(1_000_000, &mut out);
        assert_eq!(out.len(), 6);
        assert!(out.iter().all(|f| f.port == 128 + 6));
        assert_eq!(out[0].bytes[0], 0x1c, "pipe 1, app 12 on Tofino 2");
        assert_eq!(g.next_due(), None);
    }

    #[test]
    fn a_deparser_trigger_fires_the_apps_whose_pattern_matches() {
        let mut g = Pktgen::new(Target::Tofino2, 2);
        let mut value = [0u8; 16];
        let mut mask = [0u8; 16];
        (value[0], mask[0]) = (0xab, 0xff);
        (value[3], mask[3]) = (0x10, 0xf0);
        let trigger = Trigger::Deparser { value, mask };
        g.configure(AppConfig {
            trigger,
            batch_count: 1,
            packets_per_batch: 2,
            ..app(trigger)
        })
        .unwrap();
        let mut t = DeparserTrigger {
            pipe: 1,
            data: [0; 16],
            address: 0,
            length: 0,
            ts: 500,
        };
        (t.data[0], t.data[3]) = (0xab, 0x1f);
        let mut out = Vec::new();
        g.deparser_trigger(&t, &mut out);
        assert!(out.is_empty(), "not enabled yet");
        g.enable(1, 5, 0).unwrap();
        assert_eq!(g.next_due(), None, "no timer");
        g.deparser_trigger(&t, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out.iter().map(|f| f.ts).collect::<Vec<_>>(), [500, 510]);
        assert_eq!(out[0].bytes[0], 0x15, "pipe 1, app 5 on Tofino 2");
        // A mismatch under the mask, another pipe: nothing.
        for bad in [
            DeparserTrigger { data: [0; 16], ..t },
            DeparserTrigger { pipe: 0, ..t },
        ] {
            g.deparser_trigger(&bad, &mut out);
        }
        assert_eq!(out.len(), 2);
        g.disable(1, 5).unwrap();
        g.deparser_trigger(&t, &mut out);
        assert_eq!(out.len(), 2);
        // Tofino 1 has no deparser trigger.
        let mut g1 = Pktgen::new(Target::Tofino1, 2);
        assert_eq!(
            g1.configure(app(trigger)),
            Err(PktgenError::DeparserTrigger { app_id: 5 })
        );
    }

    #[test]
    fn bad_configurations_are_refused() {
        let mut g = Pktgen::new(Target::Tofino1, 2);
        let e = |c: AppConfig, g: &mut Pktgen| g.configure(c).unwrap_err();
        assert_eq!(
            e(
                AppConfig {
                    app_id: 8,
                    ..app(Trigger::Periodic)
                },
                &mut g
            ),
            PktgenError::AppId { app_id: 8, max: 8 }
        );
        assert!(matches!(
            e(
                AppConfig {
                    pipe: 2,
                    ..app(Trigger::Periodic)
                },
                &mut g
            ),
            PktgenError::Pipe { .. }
        ));
        assert!(matches!(
            e(
                AppConfig {
                    period_ns: 0,
                    ..app(Trigger::Periodic)
                },
                &mut g
            ),
            PktgenError::Period { .. }
        ));
        assert!(matches!(
            e(
                AppConfig {
                    batch_count: 0,
                    ..app(Trigger::Periodic)
                },
                &mut g
            ),
            PktgenError::Batch { .. }
        ));
        assert!(matches!(
            e(
                AppConfig {
                    template: vec![0; 5],
                    ..app(Trigger::Periodic)
                },
                &mut g
            ),
            PktgenError::Template { .. }
        ));
        assert!(matches!(
            g.enable(0, 1, 0),
            Err(PktgenError::NoSuchApp { .. })
        ));
        let mut g2 = Pktgen::new(Target::Tofino2, 1);
        assert!(matches!(
            e(
                AppConfig {
                    pipe: 0,
                    port: 8,
                    ..app(Trigger::Periodic)
                },
                &mut g2
            ),
            PktgenError::Port { .. }
        ));
    }
}

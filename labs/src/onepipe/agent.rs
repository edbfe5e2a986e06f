//! The per-switch agent of the 1Pipe lab: the chip's packet generator (a periodic timer app
//! whose packets are beacons, entering on the pktgen port this agent is cabled to) and the
//! control plane's link agent, polled every link-poll interval.

use std::any::Any;

use control::onepipe::{LinkAgent, LinkEvent};
use dataplane::Nanos;
use pipeline::pktgen::{AppConfig, GenFrame, Pktgen, Trigger};
use pipeline::switch::Switch;

use crate::host::SwitchApp;

/// Pktgen and link agent of one switch.
pub struct SwitchAgent {
    pktgen: Pktgen,
    links: LinkAgent,
    poll_every: u64,
    next_poll: u64,
    started: bool,
    gen: Vec<GenFrame>,
    template_len: u64,
    /// Link changes the agent made, with when.
    pub events: Vec<(u64, LinkEvent)>,
    /// Polls of the link registers that failed (the runtime API refused), with the error.
    pub errors: Vec<String>,
}

impl SwitchAgent {
    /// `app` is the beacon app (its period the beacon interval); links are polled every
    /// `poll_every` ns.
    pub fn new(pktgen: Pktgen, app: AppConfig, links: LinkAgent, poll_every: u64) -> Self {
        let template_len = app.template.len() as u64;
        let mut pktgen = pktgen;
        pktgen
            .configure(AppConfig {
                trigger: Trigger::Periodic,
                ..app
            })
            .expect("the lab's beacon app is valid");
        SwitchAgent {
            pktgen,
            links,
            poll_every,
            next_poll: poll_every,
            started: false,
            gen: Vec::new(),
            template_len,
            events: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Beacons generated so far.
    pub fn beacons(&self) -> u64 {
        self.pktgen.generated(0, 0)
    }

    /// Bytes of beacons the switch sent: each generated one leaves on every link.
    pub fn beacon_bytes(&self) -> u64 {
        self.beacons() * self.links.entries().len() as u64 * self.template_len
    }
}

impl SwitchApp for SwitchAgent {
    fn receive(&mut self, _now: Nanos, _frame: &[u8], _sw: &mut Switch) {}

    fn poll(&mut self, now: Nanos, sw: &mut Switch, out: &mut dyn FnMut(Vec<u8>)) {
        if !self.started {
            self.started = true;
            self.pktgen.enable(0, 0, now.0).expect("configured");
        }
        self.pktgen.poll(now.0, &mut self.gen);
        for f in self.gen.drain(..) {
            out(f.bytes);
        }
        if now.0 >= self.next_poll {
            self.next_poll = now.0 + self.poll_every;
            match self.links.poll(sw, now.0) {
                Ok(ev) => self.events.extend(ev.into_iter().map(|e| (now.0, e))),
                Err(e) => self.errors.push(e.to_string()),
            }
        }
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        let next = self
            .pktgen
            .next_due()
            .map_or(self.next_poll, |t| t.min(self.next_poll));
        Some(Nanos(next))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

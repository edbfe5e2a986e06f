//! The per-switch agent of the 1Pipe lab: the chip's packet generator (periodic timer apps
//! whose packets are beacons, entering on the pktgen port this agent is cabled to) and the
//! control plane's link agent, polled every link-poll interval.
//!
//! Beacons fire at synchronized times (§4.2): the control plane starts each app so that it
//! fires at the multiples of the beacon interval plus the app's phase, on the switch's clock
//! (the lab's; a PTP-synchronized switch clock). [`super::lab`] picks the phases.

use std::any::Any;

use control::onepipe::{LinkAgent, LinkEvent};
use dataplane::Nanos;
use pipeline::pktgen::{AppConfig, GenFrame, Pktgen, Trigger};
use pipeline::switch::Switch;

use crate::host::SwitchApp;

/// Pktgen and link agent of one switch.
pub struct SwitchAgent {
    pktgen: Pktgen,
    /// The beacon apps (app id, phase in ns within the period, period); not started yet:
    /// when each starts (`None` until the first poll).
    apps: Vec<(u8, u64, u64)>,
    starts: Vec<Option<u64>>,
    links: LinkAgent,
    poll_every: u64,
    next_poll: u64,
    started: Vec<bool>,
    gen: Vec<GenFrame>,
    template_len: u64,
    /// Link changes the agent made, with when.
    pub events: Vec<(u64, LinkEvent)>,
    /// Links the controller asked to remove (§5.2's Resume), done at the next poll.
    removals: Vec<u8>,
    /// Polls of the link registers that failed (the runtime API refused), with the error.
    pub errors: Vec<String>,
}

impl SwitchAgent {
    /// `apps` are the beacon apps (their period the beacon interval), each with its phase: it
    /// fires at `k * period + phase`; links are polled every `poll_every` ns.
    pub fn new(
        pktgen: Pktgen,
        apps: Vec<(AppConfig, u64)>,
        links: LinkAgent,
        poll_every: u64,
    ) -> Self {
        let template_len = apps.first().map_or(0, |(a, _)| a.template.len() as u64);
        let mut pktgen = pktgen;
        let mut ids = Vec::new();
        for (app, phase) in apps {
            let period = app.period_ns.max(1);
            ids.push((app.app_id, phase % period, period));
            pktgen
                .configure(AppConfig {
                    trigger: Trigger::Periodic,
                    ..app
                })
                .expect("the lab's beacon apps are valid");
        }
        let n = ids.len();
        SwitchAgent {
            pktgen,
            starts: vec![None; n],
            apps: ids,
            links,
            poll_every,
            next_poll: poll_every,
            started: vec![false; n],
            gen: Vec::new(),
            template_len,
            events: Vec::new(),
            removals: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// The controller's Resume (§5.2): removes input link `link` from the switch's minimum at
    /// the agent's next poll (in memory: at once; in namespaces: on the agent's thread).
    pub fn remove_link(&mut self, link: u8) {
        self.removals.push(link);
    }

    /// Beacons generated so far (by every app).
    pub fn beacons(&self) -> u64 {
        self.apps
            .iter()
            .map(|&(id, _, _)| self.pktgen.generated(0, id))
            .sum()
    }

    /// Starts the apps whose start time has come; at the first poll, picks each app's start:
    /// one period before its first tick at or after `now + period` (a periodic app fires one
    /// period after it is enabled).
    fn start_apps(&mut self, now: u64) {
        for (i, &(id, phase, period)) in self.apps.iter().enumerate() {
            let start = *self.starts[i].get_or_insert_with(|| {
                let from = now + period;
                let first = from + (phase + period - from % period) % period;
                first - period
            });
            if start <= now && !self.started[i] {
                self.started[i] = true;
                // At the scheduled instant (a wall-clock poll may come a little late).
                self.pktgen.enable(0, id, start).expect("configured");
            }
        }
    }

    /// Bytes of beacons the switch sent: each generated one leaves on every link.
    pub fn beacon_bytes(&self) -> u64 {
        self.beacons() * self.links.entries().len() as u64 * self.template_len
    }
}

impl SwitchApp for SwitchAgent {
    fn receive(&mut self, _now: Nanos, _frame: &[u8], _sw: &mut Switch) {}

    fn poll(&mut self, now: Nanos, sw: &mut Switch, out: &mut dyn FnMut(Vec<u8>)) {
        self.start_apps(now.0);
        self.pktgen.poll(now.0, &mut self.gen);
        for f in self.gen.drain(..) {
            out(f.bytes);
        }
        for link in std::mem::take(&mut self.removals) {
            match self.links.remove(sw, link) {
                Ok(ev) => self.events.extend(ev.map(|e| (now.0, e))),
                Err(e) => self.errors.push(e.to_string()),
            }
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
        if self.starts.iter().any(Option::is_none) || !self.removals.is_empty() {
            return Some(Nanos(0)); // the first poll picks the start times
        }
        let waiting = self
            .starts
            .iter()
            .zip(&self.started)
            .filter_map(|(s, &on)| if on { None } else { *s });
        let next = self
            .pktgen
            .next_due()
            .into_iter()
            .chain(waiting)
            .fold(self.next_poll, u64::min);
        Some(Nanos(next))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

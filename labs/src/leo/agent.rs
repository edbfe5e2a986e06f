//! The lab's control-plane agent for leo_kvs.p4: [`control::leo::HotKeyAgent`] cabled to the
//! switch's CPU port, polled every `period` ns of virtual time (the runtime API's digest
//! drain, table modify and register write), so hot keys a PUT made stale are answered in the
//! switch again once the PUT has settled.

use std::any::Any;

use control::leo::HotKeyAgent;
use dataplane::Nanos;
use pipeline::switch::Switch;

use crate::host::SwitchApp;

/// The agent.
pub struct RefreshAgent {
    agent: HotKeyAgent,
    period: u64,
    next: u64,
    /// Polls the runtime API refused, with the error.
    pub errors: Vec<String>,
}

impl RefreshAgent {
    /// An agent polling every `period` ns.
    pub fn new(period: u64) -> RefreshAgent {
        RefreshAgent {
            agent: HotKeyAgent::default(),
            period: period.max(1),
            next: 0,
            errors: Vec::new(),
        }
    }

    /// Hot keys re-installed so far.
    pub fn refreshed(&self) -> u64 {
        self.agent.refreshed
    }
}

impl SwitchApp for RefreshAgent {
    fn receive(&mut self, _now: Nanos, _frame: &[u8], _sw: &mut Switch) {}

    fn poll(&mut self, now: Nanos, sw: &mut Switch, _out: &mut dyn FnMut(Vec<u8>)) {
        if now.0 < self.next {
            return;
        }
        self.next = now.0 + self.period;
        if let Err(e) = self.agent.poll(sw) {
            self.errors.push(e.to_string());
        }
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        Some(Nanos(self.next))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

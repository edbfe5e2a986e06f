//! [`VirtualNet`]: several hosts stepped in virtual time. Each step polls every host at
//! the current virtual time until none makes progress, then jumps the clock to the earliest
//! timer of any host or port. Runs are deterministic for the same inputs.

use dataplane::{Clock, Nanos, VirtualClock};

use super::{Host, HostError};

/// Hosts driven in virtual time (their ports are normally in-memory links).
pub struct VirtualNet {
    clock: VirtualClock,
    hosts: Vec<Host>,
}

/// Rounds of polling at one instant before time is forced forward (guards against two
/// endpoints that keep answering each other without time passing).
const MAX_ROUNDS_PER_INSTANT: usize = 100_000;

impl VirtualNet {
    /// An empty network at virtual time zero.
    pub fn new() -> VirtualNet {
        VirtualNet::with_clock(VirtualClock::new())
    }

    /// An empty network reading `clock` (which it advances).
    pub fn with_clock(clock: VirtualClock) -> VirtualNet {
        VirtualNet {
            clock,
            hosts: Vec::new(),
        }
    }

    /// Adds a host and returns its index.
    pub fn add(&mut self, host: Host) -> usize {
        self.hosts.push(host);
        self.hosts.len() - 1
    }

    /// The current virtual time.
    pub fn now(&self) -> Nanos {
        self.clock.now()
    }

    /// The clock (clones share the time).
    pub fn clock(&self) -> &VirtualClock {
        &self.clock
    }

    /// Host `i`.
    pub fn host(&self, i: usize) -> Option<&Host> {
        self.hosts.get(i)
    }

    /// Host `i`, mutable.
    pub fn host_mut(&mut self, i: usize) -> Option<&mut Host> {
        self.hosts.get_mut(i)
    }

    /// All hosts.
    pub fn hosts_mut(&mut self) -> &mut [Host] {
        &mut self.hosts
    }

    /// Takes the hosts out.
    pub fn into_hosts(self) -> Vec<Host> {
        self.hosts
    }

    /// Polls all hosts at the current time until quiet. Returns whether anything happened.
    pub fn settle(&mut self) -> Result<bool, HostError> {
        let now = self.clock.now();
        let mut any = false;
        for _ in 0..MAX_ROUNDS_PER_INSTANT {
            let mut round = false;
            for h in self.hosts.iter_mut() {
                round |= !h.poll(now)?.is_idle();
            }
            if !round {
                break;
            }
            any = true;
        }
        Ok(any)
    }

    /// The earliest pending timer of any host, if any.
    pub fn next_wakeup(&self) -> Option<Nanos> {
        self.hosts.iter().filter_map(Host::next_wakeup).min()
    }

    /// Settles, then advances the clock to the next timer (at least 1 ns). Returns `false`
    /// when nothing happened and no timer is armed (the network is idle for good).
    pub fn step(&mut self) -> Result<bool, HostError> {
        let busy = self.settle()?;
        let now = self.clock.now();
        match self.next_wakeup() {
            Some(t) => {
                self.clock.advance_to(t.max(now + Nanos(1)));
                Ok(true)
            }
            None => Ok(busy),
        }
    }

    /// Steps until `done(hosts)` holds. Fails with [`HostError::Deadline`] when virtual time
    /// passes `deadline`, or [`HostError::Stalled`] when nothing can happen any more.
    pub fn run_until(
        &mut self,
        deadline: Nanos,
        mut done: impl FnMut(&mut [Host]) -> bool,
    ) -> Result<(), HostError> {
        let start = self.clock.now();
        loop {
            let busy = self.settle()?;
            if done(&mut self.hosts) {
                return Ok(());
            }
            let now = self.clock.now();
            if now >= deadline {
                return Err(HostError::Deadline {
                    waited_ns: now.saturating_sub(start).as_nanos(),
                });
            }
            match self.next_wakeup() {
                Some(t) => {
                    self.clock.advance_to(t.max(now + Nanos(1)).min(deadline));
                }
                None if busy => {}
                None => {
                    return Err(HostError::Stalled {
                        at_ns: now.as_nanos(),
                    })
                }
            }
        }
    }
}

impl Default for VirtualNet {
    fn default() -> Self {
        VirtualNet::new()
    }
}

//! A P4CE node on its own thread, the leader or a replica, as the namespace lab runs them
//! (`labs::p4ce::netns`): the I/O-free node of [`super::machine`] (the same one the in-memory
//! lab runs in virtual time) on AF_PACKET in its namespace, in wall-clock time. The thread
//! opens AF_PACKET on its namespace's interface (behind the link model of the host's end,
//! [`dataplane::LinkPort`]), builds its [`Node`] and loops: receive what arrived and hand it
//! to the node, let the node run a turn, send what it produced, and, when the turn did
//! nothing, wait on the port until a frame arrives or the node's next timer is due.
//!
//! Anyone can run a closure on a node's thread between two turns of its loop
//! ([`NodeHandle::exec`]): the bench reads its figures that way, tests post rogue WRITEs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use dataplane::{AfPacketPort, Clock, FrameBatch, LinkConfig, LinkPort, Nanos, Port, WallClock};

use super::cpu::ThreadCpu;
use super::machine::{Node, NodeConfig, NodeStatus};
use super::NodeError;

/// Longest idle wait of a node loop.
const MAX_IDLE: Nanos = Nanos::from_millis(2);

/// Shortest idle wait: the port's wait (poll(2)) counts whole milliseconds, so a shorter one
/// returns at once and an idle node would spin, taking the CPU the switch's threads need. A
/// frame arriving ends the wait early; only the node's own timers (ms-scale) may fire up to
/// a millisecond late.
const MIN_IDLE: Nanos = Nanos::from_millis(1);

/// Longest nap while an endpoint timer is less than [`MIN_IDLE`] away (how late a frame
/// arriving meanwhile may be seen).
const SHORT_NAP: Duration = Duration::from_micros(50);

/// A wait on the port shorter than this found nothing: the port woke up for no frame.
const SPURIOUS: Nanos = Nanos::from_micros(20);

/// Frames per receive and per send batch.
const BATCH: usize = 64;

/// Receive batches one turn takes at most, so a flood cannot starve timers and sending.
const MAX_RX_BATCHES: usize = 4;

/// The most frames one turn sends, so receiving (ACKs, credits) is never starved.
const MAX_TX: usize = 4 * BATCH;

/// The longest one wait on the port.
const MAX_WAIT: Duration = Duration::from_millis(1);

/// A closure run on a node's thread.
pub type Job = Box<dyn FnOnce(&mut Node) + Send>;

/// What a node is and where it runs.
pub struct NodeSetup {
    /// What it is and does.
    pub node: NodeConfig,
    /// Its network namespace.
    pub netns: String,
    /// The interface in it.
    pub ifname: String,
    /// The model of its link (rate, delay), applied at the host's end as the in-memory lab
    /// does, so that the node's own loop waits for held frames.
    pub link: LinkConfig,
}

/// A running node thread.
pub struct NodeHandle {
    /// Its id.
    pub id: u16,
    stop: Arc<AtomicBool>,
    jobs: Sender<Job>,
    status: Arc<Mutex<NodeStatus>>,
    join: Option<JoinHandle<Option<Node>>>,
    /// Its CPU time.
    pub cpu: Arc<Mutex<Option<ThreadCpu>>>,
}

impl NodeHandle {
    /// Starts a node thread inside its namespace.
    pub fn start(setup: NodeSetup, clock: WallClock) -> Result<NodeHandle, NodeError> {
        let stop = Arc::new(AtomicBool::new(false));
        let status = Arc::new(Mutex::new(NodeStatus::default()));
        let cpu = Arc::new(Mutex::new(None));
        let (jobs, rx) = channel::<Job>();
        let id = setup.node.spec.id;
        let (s, st, c) = (stop.clone(), status.clone(), cpu.clone());
        let join = std::thread::Builder::new()
            .name(format!("p4ce-node{id}"))
            .spawn(move || {
                let ns = setup.netns.clone();
                let st2 = st.clone();
                let r = dataplane::netns::in_netns(&ns, move || {
                    if let Ok(mut g) = c.lock() {
                        *g = ThreadCpu::current();
                    }
                    node_main(setup, &clock, &s, &rx, &st2)
                });
                let r = r.map_err(NodeError::from).and_then(|r| r);
                match r {
                    Ok(node) => Some(node),
                    Err(e) => {
                        if let Ok(mut g) = st.lock() {
                            g.error = Some(e.to_string());
                        }
                        None
                    }
                }
            })
            .map_err(|e| NodeError::Setup(format!("node thread: {e}")))?;
        Ok(NodeHandle {
            id,
            stop,
            jobs,
            status,
            join: Some(join),
            cpu,
        })
    }

    /// A snapshot of its status.
    pub fn status(&self) -> NodeStatus {
        self.status.lock().map(|g| g.clone()).unwrap_or_default()
    }

    /// Whether its thread still runs.
    pub fn running(&self) -> bool {
        self.join.as_ref().is_some_and(|j| !j.is_finished())
    }

    /// Runs `f` on the node's thread and returns its result (waiting at most `timeout`).
    pub fn exec<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl FnOnce(&mut Node) -> R + Send + 'static,
    ) -> Result<R, NodeError> {
        let (tx, rx) = channel();
        let job: Job = Box::new(move |node| {
            let _ = tx.send(f(node));
        });
        self.jobs
            .send(job)
            .map_err(|_| NodeError::Node(self.id, "not running".into()))?;
        rx.recv_timeout(timeout)
            .map_err(|_| NodeError::Node(self.id, format!("no answer within {timeout:?}")))
    }

    /// Stops the thread (a crash, as far as the others can tell: it stops sending and
    /// receiving at once) and returns the node's final state.
    pub fn stop(&mut self) -> Option<Node> {
        self.stop.store(true, Ordering::Release);
        self.join.take().and_then(|j| j.join().ok()).flatten()
    }
}

impl Drop for NodeHandle {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The node's port: AF_PACKET behind the host end's link model, and the batches that move
/// frames between it and the node.
struct Wire {
    port: LinkPort<AfPacketPort>,
    rx: FrameBatch,
    tx: FrameBatch,
}

impl Wire {
    /// Hands what arrived (a few batches at most) to the node; returns the frame count.
    fn receive(&mut self, node: &mut Node, now: Nanos) -> Result<usize, NodeError> {
        if self.port.poll_timeout().is_some_and(|d| d <= now) {
            self.port.flush(now)?;
        }
        let mut got = 0;
        for _ in 0..MAX_RX_BATCHES {
            self.rx.clear();
            let n = self.port.recv_batch(&mut self.rx, now)?;
            for f in self.rx.iter() {
                node.handle_frame(now, &f.data);
            }
            got += n;
            if n < BATCH {
                break;
            }
        }
        self.rx.clear();
        Ok(got)
    }

    /// Sends what the node produced (at most [`MAX_TX`] frames); returns the frames handed
    /// to the port.
    fn transmit(&mut self, node: &mut Node, now: Nanos) -> Result<usize, NodeError> {
        let mut produced = 0;
        while produced < MAX_TX {
            let Some(frame) = node.poll_transmit(now) else {
                break;
            };
            produced += 1;
            if let Err(frame) = self.tx.push_owned(frame, now) {
                self.flush_tx(now)?;
                // The batch is empty now: this cannot fail.
                let _ = self.tx.push_owned(frame, now);
            }
            if self.tx.is_full() {
                self.flush_tx(now)?;
            }
        }
        self.flush_tx(now)?;
        Ok(produced)
    }

    fn flush_tx(&mut self, now: Nanos) -> Result<(), NodeError> {
        if !self.tx.is_empty() {
            self.port.send_batch(&mut self.tx, now)?;
            self.tx.clear();
        }
        Ok(())
    }

    /// The earliest time at which only time can make progress on the wire: an endpoint
    /// timer or a frame the link model holds back.
    fn next_wakeup(&self, node: &Node) -> Option<Nanos> {
        let ep = node.endpoint().poll_timeout().map(|t| Nanos(t.as_nanos()));
        match (ep, self.port.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Waits on the port until a frame may have arrived, the wire's next timer is due,
    /// `until` passes, or [`MAX_WAIT`] has gone by, whichever is first.
    fn wait(&mut self, node: &Node, clock: &WallClock, until: Nanos) -> Result<(), NodeError> {
        let until = self.next_wakeup(node).unwrap_or(until).min(until);
        let wait = until
            .saturating_sub(clock.now())
            .to_duration()
            .min(MAX_WAIT);
        if !wait.is_zero() {
            self.port.wait_readable(wait)?;
        }
        Ok(())
    }
}

fn publish(status: &Mutex<NodeStatus>, node: &NodeStatus) {
    if let Ok(mut g) = status.lock() {
        *g = node.clone();
    }
}

fn node_main(
    setup: NodeSetup,
    clock: &WallClock,
    stop: &AtomicBool,
    jobs: &Receiver<Job>,
    status: &Mutex<NodeStatus>,
) -> Result<Node, NodeError> {
    let port = AfPacketPort::open(&setup.ifname)?;
    let port = LinkPort::new(port, setup.link.clone())
        .map_err(|e| NodeError::Setup(format!("link model: {e}")))?;
    let mut wire = Wire {
        port,
        rx: FrameBatch::new(BATCH),
        tx: FrameBatch::new(BATCH),
    };
    let mut node = Node::new(setup.node, clock.now())?;
    publish(status, &node.status);
    let mut quick = 0u32;
    while !stop.load(Ordering::Acquire) {
        while let Ok(job) = jobs.try_recv() {
            node.now = clock.now();
            job(&mut node);
        }
        let now = clock.now();
        let got = wire.receive(&mut node, now)?;
        let turn = node.poll(now)?;
        let sent = wire.transmit(&mut node, now)?;
        let work = got > 0 || sent > 0 || turn.work;
        if work {
            quick = 0;
        }
        let s = &mut node.status;
        s.turns += 1;
        s.timer_turns += u64::from(turn.timers_ran);
        if !work {
            let until = node
                .next_wakeup()
                .unwrap_or(now + MAX_IDLE)
                .min(now + MAX_IDLE)
                .max(now + MIN_IDLE);
            match wire.next_wakeup(&node) {
                // A timer (the endpoint's or the port's) less than a millisecond away, or one
                // the port keeps due: the port's wait cannot block that briefly, so nap in
                // short steps instead of spinning.
                Some(d) if d < now + MIN_IDLE => {
                    let left = d.saturating_sub(now).to_duration();
                    std::thread::sleep(if left.is_zero() {
                        SHORT_NAP
                    } else {
                        left.min(SHORT_NAP)
                    });
                }
                _ => {
                    let t0 = clock.now();
                    wire.wait(&node, clock, until)?;
                    // A port that keeps saying "readable" with nothing to receive (an error
                    // pending on the socket, say) would make this loop spin: after a few
                    // such wake-ups in a row, nap instead.
                    if clock.now().saturating_sub(t0) < SPURIOUS {
                        quick += 1;
                        if quick > 4 {
                            std::thread::sleep(SHORT_NAP);
                        }
                    } else {
                        quick = 0;
                    }
                }
            }
            node.status.idle_turns += 1;
        }
        if work || node.status.turns & 0xff == 0 {
            publish(status, &node.status);
        }
    }
    Ok(node)
}

//! [`CapturePort`]: wraps a port and writes every frame it receives or sends into a pcap
//! file, so a benchmark's own traffic can be checked afterwards (`pisa rdma decode
//! --check`). Frames are copied only when capturing. A capture can be bounded to its first N
//! frames ([`CapturePort::with_limit`]): a bandwidth test moves hundreds of megabytes.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dataplane::{FrameBatch, Nanos, PcapPort, Port, PortError, StatsHandle};

/// A port whose traffic, both directions, is also written to a pcap file.
pub struct CapturePort {
    inner: Box<dyn Port>,
    pcap: PcapPort,
    scratch: FrameBatch,
    limit: Option<u64>,
    counts: Arc<CaptureCounts>,
}

/// What a [`CapturePort`] saw and wrote, readable while and after it runs.
#[derive(Debug, Default)]
pub struct CaptureCounts {
    seen: AtomicU64,
    written: AtomicU64,
}

impl CaptureCounts {
    /// Frames that passed the port, both directions.
    pub fn seen(&self) -> u64 {
        self.seen.load(Ordering::Relaxed)
    }

    /// Frames written to the pcap file (the first ones, up to the limit).
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
}

impl CapturePort {
    /// Wraps `inner`, creating (truncating) `path`; writes every frame.
    pub fn new(inner: Box<dyn Port>, path: &Path) -> Result<CapturePort, PortError> {
        CapturePort::with_limit(inner, path, None)
    }

    /// Wraps `inner`, creating (truncating) `path`; writes the first `limit` frames (all when
    /// `None`) and counts the rest.
    pub fn with_limit(
        inner: Box<dyn Port>,
        path: &Path,
        limit: Option<u64>,
    ) -> Result<CapturePort, PortError> {
        let pcap = PcapPort::open(
            &format!("{}-capture", inner.name()),
            None,
            Some(path),
            false,
        )?;
        Ok(CapturePort {
            inner,
            pcap,
            scratch: FrameBatch::new(crate::host::HOST_BATCH),
            limit,
            counts: Arc::default(),
        })
    }

    /// The counters of frames seen and written.
    pub fn counts(&self) -> Arc<CaptureCounts> {
        self.counts.clone()
    }

    fn record(&mut self, frames: &[dataplane::Frame], now: Nanos) -> Result<(), PortError> {
        let seen = self
            .counts
            .seen
            .fetch_add(frames.len() as u64, Ordering::Relaxed);
        let room = match self.limit {
            Some(l) => l.saturating_sub(seen).min(frames.len() as u64) as usize,
            None => frames.len(),
        };
        self.counts
            .written
            .fetch_add(room as u64, Ordering::Relaxed);
        for f in &frames[..room] {
            if !self.scratch.push(&f.data, now) {
                self.pcap.send_batch(&mut self.scratch, now)?;
                self.scratch.push(&f.data, now);
            }
        }
        self.pcap.send_batch(&mut self.scratch, now)?;
        Ok(())
    }
}

impl Port for CapturePort {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        let before = batch.len();
        let n = self.inner.recv_batch(batch, now)?;
        self.record(&batch.frames()[before..], now)?;
        Ok(n)
    }

    fn send_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        self.record(batch.frames(), now)?;
        self.inner.send_batch(batch, now)
    }

    fn flush(&mut self, now: Nanos) -> Result<usize, PortError> {
        self.pcap.flush(now)?;
        self.inner.flush(now)
    }

    fn poll_timeout(&self) -> Option<Nanos> {
        self.inner.poll_timeout()
    }

    fn stats_handle(&self) -> StatsHandle {
        self.inner.stats_handle()
    }

    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        self.inner.raw_fd()
    }

    fn wait_readable(&mut self, timeout: std::time::Duration) -> Result<bool, PortError> {
        self.inner.wait_readable(timeout)
    }

    fn max_frame_len(&self) -> usize {
        self.inner.max_frame_len()
    }
}

impl Drop for CapturePort {
    fn drop(&mut self) {
        // Best effort: writes out the records still buffered.
        let _ = self.pcap.flush(Nanos::ZERO);
    }
}

//! [`CapturePort`]: wraps a port and writes every frame it receives or sends into a pcap
//! file, so a benchmark's own traffic can be checked afterwards (`pisa rdma decode
//! --check`). Frames are copied only when capturing.

use std::path::Path;

use dataplane::{FrameBatch, Nanos, PcapPort, Port, PortError, StatsHandle};

/// A port whose traffic, both directions, is also written to a pcap file.
pub struct CapturePort {
    inner: Box<dyn Port>,
    pcap: PcapPort,
    scratch: FrameBatch,
}

impl CapturePort {
    /// Wraps `inner`, creating (truncating) `path`.
    pub fn new(inner: Box<dyn Port>, path: &Path) -> Result<CapturePort, PortError> {
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
        })
    }

    fn record(&mut self, frames: &[dataplane::Frame], now: Nanos) -> Result<(), PortError> {
        for f in frames {
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

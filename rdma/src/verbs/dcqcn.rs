//! DCQCN (Zhu et al., SIGCOMM'15) for one sending QP: the reaction point's rate limiter
//! (rate cut and alpha update on CNP, alpha decay, fast recovery / additive / hyper
//! increase driven by a timer and a byte counter) and the packet pacer it implies.
//! The notification point side (CNP generation) lives with the responder.

use std::time::Duration;

use super::Instant;

/// DCQCN parameters (defaults follow the notes: htsim / the paper).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcqcnConfig {
    /// Whether the reaction point limits the rate at all.
    pub enabled: bool,
    /// Line rate in bits per second (the rate is never above it).
    pub line_rate_bps: f64,
    /// Lowest rate the limiter goes to.
    pub min_rate_bps: f64,
    /// Alpha gain g.
    pub g: f64,
    /// Alpha decay period K.
    pub alpha_period: Duration,
    /// Rate-increase timer T.
    pub increase_period: Duration,
    /// Byte counter B.
    pub byte_counter: u64,
    /// Fast-recovery threshold F.
    pub fast_recovery_steps: u32,
    /// Additive increase step R_AI.
    pub rai_bps: f64,
    /// Hyper increase step R_HAI.
    pub rhai_bps: f64,
    /// Minimum gap between CNPs for one flow at the notification point.
    pub cnp_interval: Duration,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        let line = 100e9;
        DcqcnConfig {
            enabled: true,
            line_rate_bps: line,
            min_rate_bps: 10e6,
            g: 1.0 / 256.0,
            alpha_period: Duration::from_micros(55),
            increase_period: Duration::from_micros(55),
            byte_counter: 10_000_000,
            fast_recovery_steps: 5,
            rai_bps: line / 20.0,
            rhai_bps: line / 10.0,
            cnp_interval: Duration::from_micros(50),
        }
    }
}

/// Reaction-point state of one QP.
#[derive(Debug, Clone)]
pub struct Dcqcn {
    cfg: DcqcnConfig,
    /// Current rate RC.
    rate: f64,
    /// Target rate RT.
    target: f64,
    alpha: f64,
    limiting: bool,
    next_alpha: Instant,
    next_increase: Instant,
    timer_steps: u32,
    byte_steps: u32,
    bytes: u64,
    next_send: Instant,
    cnps: u64,
}

impl Dcqcn {
    /// A limiter at line rate, not limiting until the first CNP.
    pub fn new(cfg: DcqcnConfig) -> Dcqcn {
        Dcqcn {
            cfg,
            rate: cfg.line_rate_bps,
            target: cfg.line_rate_bps,
            alpha: 1.0,
            limiting: false,
            next_alpha: Instant::ZERO,
            next_increase: Instant::ZERO,
            timer_steps: 0,
            byte_steps: 0,
            bytes: 0,
            next_send: Instant::ZERO,
            cnps: 0,
        }
    }

    /// Current rate in bits per second.
    pub fn rate_bps(&self) -> f64 {
        self.rate
    }

    /// Current alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Whether the limiter is below line rate.
    pub fn is_limiting(&self) -> bool {
        self.limiting
    }

    /// CNPs seen.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }

    /// A CNP arrived: cut the rate and raise alpha.
    pub fn on_cnp(&mut self, now: Instant) {
        if !self.cfg.enabled {
            return;
        }
        self.advance(now);
        self.cnps += 1;
        self.target = self.rate;
        self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.cfg.min_rate_bps);
        self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g;
        self.limiting = true;
        self.timer_steps = 0;
        self.byte_steps = 0;
        self.bytes = 0;
        self.next_alpha = now + self.cfg.alpha_period;
        self.next_increase = now + self.cfg.increase_period;
    }

    fn increase(&mut self) {
        let f = self.cfg.fast_recovery_steps;
        let (t, b) = (self.timer_steps, self.byte_steps);
        if t.max(b) < f {
            // Fast recovery: move halfway back to the target.
        } else if t.min(b) > f {
            let i = f64::from(t.min(b) - f);
            self.target += i * self.cfg.rhai_bps;
        } else {
            self.target += self.cfg.rai_bps;
        }
        self.target = self.target.min(self.cfg.line_rate_bps);
        self.rate = ((self.rate + self.target) / 2.0).min(self.cfg.line_rate_bps);
        if self.cfg.line_rate_bps - self.rate < 1.0 {
            self.rate = self.cfg.line_rate_bps;
            self.limiting = false;
        }
    }

    /// Runs the alpha-decay and rate-increase timers up to `now`.
    pub fn advance(&mut self, now: Instant) {
        if !self.limiting {
            return;
        }
        while now >= self.next_alpha {
            self.alpha *= 1.0 - self.cfg.g;
            self.next_alpha = self.next_alpha + self.cfg.alpha_period;
        }
        while self.limiting && now >= self.next_increase {
            self.timer_steps += 1;
            self.increase();
            self.next_increase = self.next_increase + self.cfg.increase_period;
        }
    }

    /// Earliest time the next packet may leave.
    pub fn next_send_time(&self) -> Option<Instant> {
        if self.limiting {
            Some(self.next_send)
        } else {
            None
        }
    }

    /// Next timer event while limiting.
    pub fn next_timer(&self) -> Option<Instant> {
        if self.limiting {
            Some(self.next_alpha.min(self.next_increase))
        } else {
            None
        }
    }

    /// Whether a packet may be sent now.
    pub fn can_send(&mut self, now: Instant) -> bool {
        self.advance(now);
        !self.limiting || now >= self.next_send
    }

    /// Accounts a sent packet of `bytes` (pacing and the byte counter).
    pub fn on_send(&mut self, now: Instant, bytes: usize) {
        if !self.limiting {
            return;
        }
        let ns = (bytes as f64 * 8.0 * 1e9 / self.rate).ceil() as u64;
        let start = self.next_send.max(now);
        self.next_send = Instant::from_nanos(start.as_nanos().saturating_add(ns));
        self.bytes += bytes as u64;
        while self.limiting && self.bytes >= self.cfg.byte_counter {
            self.bytes -= self.cfg.byte_counter;
            self.byte_steps += 1;
            self.increase();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cnp_cuts_rate_and_timers_recover_it() {
        let cfg = DcqcnConfig::default();
        let mut d = Dcqcn::new(cfg);
        let t0 = Instant::from_nanos(1_000_000);
        assert!(d.can_send(t0));
        d.on_cnp(t0);
        // alpha was 1: the rate halves; alpha stays 1 (g*1 + (1-g)*1).
        assert!((d.rate_bps() - 50e9).abs() < 1.0);
        assert!((d.alpha() - 1.0).abs() < 1e-12);
        d.on_cnp(t0);
        assert!((d.rate_bps() - 25e9).abs() < 1.0);
        // Pacing: a 1000-byte packet at 25 Gb/s takes 320 ns.
        d.on_send(t0, 1000);
        assert!(!d.can_send(t0 + Duration::from_nanos(100)));
        assert!(d.can_send(t0 + Duration::from_nanos(320)));
        // Alpha decays without CNPs.
        d.advance(t0 + Duration::from_micros(56));
        assert!(d.alpha() < 1.0);
        // Long quiet periods bring the rate back to line rate.
        d.advance(t0 + Duration::from_millis(50));
        assert!(!d.is_limiting());
        assert_eq!(d.rate_bps(), cfg.line_rate_bps);
    }

    #[test]
    fn disabled_limiter_ignores_cnps() {
        let mut d = Dcqcn::new(DcqcnConfig {
            enabled: false,
            ..Default::default()
        });
        d.on_cnp(Instant::ZERO);
        assert!(!d.is_limiting());
        assert!(d.can_send(Instant::ZERO));
    }

    #[test]
    fn floor_is_the_minimum_rate() {
        let mut d = Dcqcn::new(DcqcnConfig::default());
        for _ in 0..100 {
            d.on_cnp(Instant::ZERO);
        }
        assert!((d.rate_bps() - 10e6).abs() < 1.0);
    }
}

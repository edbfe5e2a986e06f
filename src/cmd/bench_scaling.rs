//! `pisa bench pipeline --threads N`: l2l3.p4 on N threads at once, one switch per thread
//! pinned to a core of its own (as `pisa run` runs one pipe per core), beside one thread alone,
//! in interleaved rounds of the same run; medians of wall-clock packet rates (the threads run
//! side by side, so wall time is what they share).

use std::time::Duration;

use pisa::workload::{self, Measurement};

use super::bench::{median, PipelineBenchArgs};

/// Medians over the rounds.
pub struct Scaling {
    pub threads: usize,
    pub cores: usize,
    pub engine: String,
    /// One thread alone (Mpps).
    pub single: f64,
    /// Each thread's rate when all run at once (Mpps), and their sum.
    pub per_thread: Vec<f64>,
    pub total: f64,
}

impl Scaling {
    /// Total over (threads × single): 1.0 is perfect scaling.
    pub fn efficiency(&self) -> f64 {
        self.total / (self.threads as f64 * self.single).max(1e-12)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "threads": self.threads,
            "cores": self.cores,
            "engine": self.engine,
            "program": "l2l3.p4",
            "single_thread_mpps": self.single,
            "per_thread_mpps": self.per_thread,
            "total_mpps": self.total,
            "scaling": self.total / self.single.max(1e-12),
            "efficiency": self.efficiency(),
        })
    }

    pub fn print(&self) {
        println!(
            "l2l3.p4 on {} threads ({} engine, one switch per thread, pinned; {} cores here), wall-clock Mpps:",
            self.threads, self.engine, self.cores
        );
        let per: Vec<String> = self.per_thread.iter().map(|m| format!("{m:.2}")).collect();
        println!(
            "  1 thread {:.2}; {} threads {:.2} in all ({}): {:.2}x, {:.0}% of {}x",
            self.single,
            self.threads,
            self.total,
            per.join(", "),
            self.total / self.single.max(1e-12),
            self.efficiency() * 100.0,
            self.threads
        );
        if self.threads > self.cores {
            println!(
                "  note: {} threads on {} cores share cores, so they cannot scale",
                self.threads, self.cores
            );
        }
    }
}

/// Runs the rounds: one thread, then all threads, `a.runs` times.
pub fn run(a: &PipelineBenchArgs) -> anyhow::Result<Scaling> {
    let n_frames = 8192;
    let make = || workload::l2l3(a.macs, a.routes, n_frames, a.engine);
    let d = Duration::from_secs_f64(a.seconds.max(0.05));
    let rounds = a.runs.max(1);
    let mut progress = pisa::progress::Progress::new(2 * rounds as u64, "bench threads");
    let (mut single, mut all): (Vec<f64>, Vec<Vec<Measurement>>) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        progress.start(&format!("round {}: 1 thread", r + 1));
        let one = workload::measure_parallel(make, 1, a.batch, d, true)?;
        single.push(one[0].wall_mpps());
        progress.step();
        progress.start(&format!("round {}: {} threads", r + 1, a.threads));
        all.push(workload::measure_parallel(
            make, a.threads, a.batch, d, true,
        )?);
        progress.step();
    }
    progress.finish();
    let per_thread: Vec<f64> = (0..a.threads)
        .map(|t| median(all.iter().map(|round| round[t].wall_mpps()).collect()))
        .collect();
    let total = median(
        all.iter()
            .map(|round| round.iter().map(Measurement::wall_mpps).sum())
            .collect(),
    );
    Ok(Scaling {
        threads: a.threads,
        cores: core_affinity::get_core_ids().map_or(1, |c| c.len()),
        engine: a.engine.to_string(),
        single: median(single),
        per_thread,
        total,
    })
}

//! Progress of a long run: a bar on a terminal (indicatif), one plain line per step on stderr
//! when stderr is a file or a pipe (CI logs, `2> log`), so a run that takes minutes is never
//! silent and never fills a log with redraws.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// Steps of a long run, shown as they finish.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    what: String,
}

impl Progress {
    /// `total` steps of `what` (`"runs"`, `"rounds"`).
    pub fn new(total: u64, what: &str) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total);
            if let Ok(style) =
                ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
            {
                b.set_style(style.progress_chars("=> "));
            }
            b.set_prefix(what.to_string());
            b
        });
        Progress {
            bar,
            total,
            done: 0,
            what: what.to_string(),
        }
    }

    /// Says what the next step is.
    pub fn start(&mut self, step: &str) {
        match &self.bar {
            Some(b) => b.set_message(step.to_string()),
            None => eprintln!("{} {}/{}: {step}", self.what, self.done + 1, self.total),
        }
    }

    /// One step finished.
    pub fn step(&mut self) {
        self.done += 1;
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    /// Removes the bar (the report follows on stdout).
    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

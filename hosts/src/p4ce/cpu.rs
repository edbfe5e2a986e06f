//! CPU time of individual threads, read from procfs, so the namespace bench can say which
//! thread was busy (and so what limited it): a thread records where its procfs entry is when
//! it starts ([`ThreadCpu::current`]); anyone can read its CPU time later.

use std::path::PathBuf;

/// A thread's procfs entry (`/proc/<pid>/task/<tid>`).
#[derive(Debug, Clone)]
pub struct ThreadCpu {
    dir: PathBuf,
}

impl ThreadCpu {
    /// The calling thread (None where procfs is not mounted).
    pub fn current() -> Option<ThreadCpu> {
        let link = std::fs::read_link("/proc/thread-self").ok()?;
        Some(ThreadCpu {
            dir: PathBuf::from("/proc").join(link),
        })
    }

    /// CPU time the thread has used so far, ns (None once it has exited).
    pub fn cpu_ns(&self) -> Option<u64> {
        // schedstat: on-CPU time in ns (0 when the kernel does not keep it).
        if let Ok(s) = std::fs::read_to_string(self.dir.join("schedstat")) {
            if let Some(ns) = s.split_whitespace().next().and_then(|x| x.parse().ok()) {
                if ns > 0 {
                    return Some(ns);
                }
            }
        }
        // stat: utime and stime in clock ticks (USER_HZ, 100 on Linux), after the
        // parenthesised command name.
        let s = std::fs::read_to_string(self.dir.join("stat")).ok()?;
        let rest = &s[s.rfind(')')? + 1..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        Some(ticks * 10_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_thread_uses_cpu_time() {
        let t = ThreadCpu::current().expect("this test needs procfs (/proc/thread-self)");
        let a = t.cpu_ns().unwrap_or(0);
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(50) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        std::hint::black_box(x);
        let b = t.cpu_ns().unwrap_or(0);
        assert!(b > a, "cpu time {a} -> {b}");
    }
}

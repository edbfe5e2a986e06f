//! Servers as child processes: a scratch directory (in `/dev/shm` when there is one), each
//! server's output to a log file there, stopped (killed by its own process id, then
//! reaped) and the directory removed when the cluster is dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::BaselineError;

/// Started servers and their scratch directory.
pub struct Cluster {
    /// The scratch directory.
    pub dir: PathBuf,
    children: Vec<Child>,
}

impl Cluster {
    /// An empty cluster with a fresh scratch directory named after `system`.
    pub fn new(system: &str) -> Result<Cluster, BaselineError> {
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("pisa-{system}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| BaselineError::Io(dir.display().to_string(), e))?;
        Ok(Cluster {
            dir,
            children: Vec::new(),
        })
    }

    /// Starts `cmd` with its output in `<dir>/<name>.log`.
    pub fn spawn(&mut self, name: &str, mut cmd: Command) -> Result<(), BaselineError> {
        let log = self.dir.join(format!("{name}.log"));
        let f = std::fs::File::create(&log)
            .map_err(|e| BaselineError::Io(log.display().to_string(), e))?;
        let f2 = f
            .try_clone()
            .map_err(|e| BaselineError::Io(log.display().to_string(), e))?;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(f)
            .stderr(f2)
            .spawn()
            .map_err(|e| BaselineError::Io(format!("starting {name}"), e))?;
        self.children.push(child);
        Ok(())
    }

    /// Retries `ready` every 200 ms until it succeeds or `limit` passes; a server that
    /// exited meanwhile ends the wait with its log's tail.
    pub fn wait<T>(
        &mut self,
        limit: Duration,
        mut ready: impl FnMut() -> Result<T, BaselineError>,
    ) -> Result<T, BaselineError> {
        let t0 = Instant::now();
        loop {
            let last = match ready() {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            for c in &mut self.children {
                if let Ok(Some(st)) = c.try_wait() {
                    return Err(BaselineError::Start(format!(
                        "a server exited ({st}); logs in {}",
                        self.dir.display()
                    )));
                }
            }
            if t0.elapsed() > limit {
                return Err(BaselineError::Start(format!(
                    "not ready after {limit:?}: {last}; logs in {}",
                    self.dir.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `name` on the PATH or at one of `paths`, else [`BaselineError::Missing`].
pub fn find(name: &str, paths: &[&str], package: &'static str) -> Result<PathBuf, BaselineError> {
    for p in paths {
        if Path::new(p).exists() {
            return Ok(PathBuf::from(p));
        }
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.exists())
        })
        .ok_or_else(|| BaselineError::Missing(name.into(), package))
}

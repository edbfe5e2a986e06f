//! The README, executed: every ```` ```sh ```` block of `README.md` runs as written, in order,
//! as one `bash -euo pipefail` script from the repository root, and must exit 0.
//!
//! - Blocks whose first line is `# as root` need root (network namespaces, veth pairs,
//!   AF_PACKET): [`readme_set_up_and_root_blocks_run_as_written`] runs them, `#[ignore]`d with
//!   that reason as the repository's other root tests are (CI runs it as root with
//!   `--include-ignored`). It first runs the set-up block (`cargo install --locked --path .`,
//!   a release build into `~/.cargo/bin`), and then runs the root blocks with the `pisa` that
//!   put on the PATH, as a user would.
//! - The other blocks run in [`readme_blocks_without_root_run_as_written`]. As root (CI) they
//!   too run as a user runs them: after the set-up block (run once for both tests), with the
//!   release `pisa` it installed. Without root they run with this build's `pisa` first on the
//!   PATH, so that a developer's `cargo test` builds no release binary; the README's experiments
//!   (`pisa bench lab`, the demos) then take several times longer in that debug build.
//! - `bash scripts/test.sh` is the one block not run here: it is the command that runs this
//!   test (`.ci/run` runs exactly it, which [`readme_files_named_exist_and_ci_runs_the_test_command`]
//!   checks).
//! - Every repository file a block names (`p4/programs/...`, `deploy/labs/...`) must exist.
//!
//! A block that fails prints its README line, its script and the tail of its output. Outputs
//! go where the README says (`out/`, ignored by git). Network namespaces a root block creates
//! and leaves behind (it failed half-way) are deleted after it, so a rerun on the same machine
//! does not fail with "File exists".

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

const PISA: &str = env!("CARGO_BIN_EXE_pisa");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The two block-running tests share namespaces, `out/` and the CPU (benchmarks): one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// The longest one block may run.
const BLOCK_LIMIT: Duration = Duration::from_secs(15 * 60);

/// One ```` ```sh ```` block of the README.
#[derive(Debug)]
struct Block {
    /// The README line of its opening fence.
    line: usize,
    text: String,
}

impl Block {
    fn is_root(&self) -> bool {
        self.text
            .lines()
            .next()
            .is_some_and(|l| l.starts_with("# as root"))
    }

    fn is_set_up(&self) -> bool {
        self.text.trim_start().starts_with("cargo install")
    }

    fn is_test_command(&self) -> bool {
        self.text.trim() == "bash scripts/test.sh"
    }
}

fn readme() -> String {
    std::fs::read_to_string(Path::new(ROOT).join("README.md")).expect("read README.md")
}

fn blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in readme.lines().enumerate() {
        match &mut open {
            None if line.trim_end() == "```sh" => open = Some((i + 1, String::new())),
            None => {}
            Some(_) if line.trim_end() == "```" => {
                let (line, text) = open.take().unwrap();
                out.push(Block { line, text });
            }
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    assert!(open.is_none(), "README.md: a ```sh block is not closed");
    out
}

/// Runs one block with `path` as PATH; panics with the block and its output when it fails.
fn run_block(b: &Block, path: &str) {
    let dir = std::env::temp_dir().join(format!("pisa-readme-{}-{}", std::process::id(), b.line));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("output.log");
    let file = std::fs::File::create(&log).unwrap();
    let started = Instant::now();
    eprintln!("README.md:{}: running\n{}", b.line, b.text);
    let mut child = {
        use std::os::unix::process::CommandExt;
        Command::new("bash")
            .args(["-euo", "pipefail", "-c", &b.text])
            .current_dir(ROOT)
            .env("PATH", path)
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .process_group(0)
            .spawn()
            .expect("run bash")
    };
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if started.elapsed() > BLOCK_LIMIT {
            // The whole process group: the block's background jobs too.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    let tail: String = {
        let lines: Vec<&str> = output.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    };
    match status {
        Some(s) if s.success() => {
            let secs = started.elapsed().as_secs_f64();
            eprintln!("README.md:{}: ok in {secs:.1} s; its output (last 60 lines):\n{tail}", b.line);
            // Past the test harness's capture (it takes only `print!`/`eprint!`), so that
            // CI's log shows where the README's time goes.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "README.md:{}: ok in {secs:.1} s", b.line);
        }
        Some(s) => panic!(
            "README.md:{}: the block failed ({s}) after {:.1} s:\n{}\n--- its output (last 60 lines):\n{tail}",
            b.line,
            started.elapsed().as_secs_f64(),
            b.text
        ),
        None => panic!(
            "README.md:{}: the block ran past {} s:\n{}\n--- its output (last 60 lines):\n{tail}",
            b.line,
            BLOCK_LIMIT.as_secs(),
            b.text
        ),
    }
}

/// The network namespaces `ip netns list` shows (each line's first word).
fn netns_names() -> BTreeSet<String> {
    let out = Command::new("ip").args(["netns", "list"]).output();
    let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    text.unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// Deletes, when dropped (also while a failed block's panic unwinds), the namespaces that
/// appeared since it was made.
struct NetnsGuard(BTreeSet<String>);

impl NetnsGuard {
    fn new() -> Self {
        NetnsGuard(netns_names())
    }
}

impl Drop for NetnsGuard {
    fn drop(&mut self) {
        for left in netns_names().difference(&self.0) {
            eprintln!("README: deleting network namespace {left} that a block left behind");
            let _ = Command::new("ip").args(["netns", "del", left]).status();
        }
    }
}

fn path_with(first: &Path) -> String {
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", first.display())
}

/// Repository paths a block names: words that look like a path into the repository (a known
/// top-level folder, a file name with an extension), outputs under `out/` excepted.
fn named_files(text: &str) -> Vec<String> {
    const TOP: &[&str] = &[
        "p4/",
        "deploy/",
        "examples/",
        "docs/",
        "scripts/",
        "control/",
        "labs/",
        "hosts/",
    ];
    text.split(|c: char| c.is_whitespace() || c == '=' || c == ',')
        .map(|w| w.trim_end_matches(|c: char| ".,;:)'\"`".contains(c)))
        .filter(|w| TOP.iter().any(|t| w.starts_with(t)))
        .filter(|w| Path::new(w).extension().is_some())
        .map(str::to_string)
        .collect()
}

#[test]
fn readme_files_named_exist_and_ci_runs_the_test_command() {
    let text = readme();
    let all = blocks(&text);
    assert!(
        all.len() >= 8,
        "README.md: only {} sh blocks found",
        all.len()
    );
    let mut missing = Vec::new();
    for b in &all {
        for f in named_files(&b.text) {
            if !Path::new(ROOT).join(&f).exists() {
                missing.push(format!("README.md:{}: {f}", b.line));
            }
        }
    }
    // Links in the prose, e.g. [docs/design.md](docs/design.md).
    for (i, line) in text.lines().enumerate() {
        for part in line.split("](").skip(1) {
            let target = part.split(')').next().unwrap_or("");
            let local = !target.contains("://") && !target.starts_with('#');
            if local && !Path::new(ROOT).join(target).exists() {
                missing.push(format!("README.md:{}: link {target}", i + 1));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files the README names do not exist:\n{}",
        missing.join("\n")
    );
    assert!(
        all.iter().filter(|b| b.is_test_command()).count() == 1,
        "README.md: the test command block `bash scripts/test.sh` is expected once"
    );
    let ci = std::fs::read_to_string(Path::new(ROOT).join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == "exec bash scripts/test.sh"),
        ".ci/run does not run the README's test command:\n{ci}"
    );
    assert_eq!(
        all.iter().filter(|b| b.is_set_up()).count(),
        1,
        "README.md: one set-up block (`cargo install ...`) is expected"
    );
}

#[test]
fn readme_named_files_are_found() {
    let words = named_files("pisa stf p4/programs/tests/x.stf --in 0=examples/a.pcap out/y.pcap");
    assert_eq!(words, vec!["p4/programs/tests/x.stf", "examples/a.pcap"]);
}

#[test]
fn readme_blocks_without_root_run_as_written() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let path = if dataplane::netns::is_root() {
        set_up_once()
    } else {
        path_with(PathBuf::from(PISA).parent().unwrap())
    };
    let text = readme();
    for b in blocks(&text) {
        if b.is_root() || b.is_set_up() || b.is_test_command() {
            continue;
        }
        run_block(&b, &path);
    }
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_PACKET; runs `cargo install --locked --path .` (a release build into ~/.cargo/bin) first"]
fn readme_set_up_and_root_blocks_run_as_written() {
    assert!(
        dataplane::netns::is_root(),
        "this test needs root (network namespaces, veth pairs, AF_PACKET) and installs pisa \
         into ~/.cargo/bin; run it as root or leave it ignored"
    );
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let path = set_up_once();
    for b in blocks(&readme()).iter().filter(|b| b.is_root()) {
        let _netns = NetnsGuard::new();
        run_block(b, &path);
    }
}

/// Runs the README's set-up block once for both block-running tests (as a user does first) and
/// checks that `pisa` on the PATH is then the one it installed; returns that PATH. A failed
/// set-up panics in the test that ran it and runs again in the next.
fn set_up_once() -> String {
    static DONE: OnceLock<String> = OnceLock::new();
    DONE.get_or_init(set_up).clone()
}

fn set_up() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    let all = blocks(&readme());
    let set_up = all
        .iter()
        .find(|b| b.is_set_up())
        .expect("the set-up block");
    run_block(set_up, &path);
    let found = Command::new("bash")
        .args(["-c", "command -v pisa"])
        .env("PATH", &path)
        .output()
        .expect("bash");
    let found = PathBuf::from(String::from_utf8_lossy(&found.stdout).trim());
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    assert_eq!(
        found,
        cargo_home.join("bin/pisa"),
        "after the set-up block, `pisa` on the PATH is not the one `cargo install` wrote"
    );
    path
}

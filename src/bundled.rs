//! The files shipped in the repository that commands use by default — the P4 programs and
//! their table files, the example captures, the lab files — embedded in the binary, so that an
//! installed `pisa` (`cargo install --path .`, then moved or run from anywhere) finds them
//! without the clone it was built in.
//!
//! [`path`] resolves a repository-relative name (`p4/programs/l2l3.p4`): the file in the
//! current directory when it exists there (a clone: edits to it are used), else the embedded
//! copy, written once under the user's cache directory (`$XDG_CACHE_HOME/pisa/VERSION/`, or
//! `~/.cache/pisa/VERSION/`, or the temporary directory). The copies keep the repository's
//! layout, so the relative references between them (a lab file's `../../p4/programs/...`)
//! hold there too. The P4 includes (`core.p4`, `tna.p4`, `t2na.p4`) are the frontend's own.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Every embedded file: its path in the repository and its bytes.
pub const FILES: &[(&str, &[u8])] = &[
    (
        "p4/programs/l2l3.p4",
        include_bytes!("../p4/programs/l2l3.p4"),
    ),
    (
        "p4/programs/l2l3.tables.yaml",
        include_bytes!("../p4/programs/l2l3.tables.yaml"),
    ),
    (
        "p4/programs/wire.p4",
        include_bytes!("../p4/programs/wire.p4"),
    ),
    (
        "p4/programs/fabric.p4",
        include_bytes!("../p4/programs/fabric.p4"),
    ),
    (
        "p4/programs/fabric.tables.yaml",
        include_bytes!("../p4/programs/fabric.tables.yaml"),
    ),
    (
        "p4/programs/p4ce.p4",
        include_bytes!("../p4/programs/p4ce.p4"),
    ),
    (
        "p4/programs/p4ce.tables.yaml",
        include_bytes!("../p4/programs/p4ce.tables.yaml"),
    ),
    (
        "examples/l2l3/in0.pcap",
        include_bytes!("../examples/l2l3/in0.pcap"),
    ),
    (
        "examples/l2l3/in1.pcap",
        include_bytes!("../examples/l2l3/in1.pcap"),
    ),
    (
        "examples/l2l3/more-state.yaml",
        include_bytes!("../examples/l2l3/more-state.yaml"),
    ),
    (
        "deploy/labs/l2l3-4hosts.yaml",
        include_bytes!("../deploy/labs/l2l3-4hosts.yaml"),
    ),
    (
        "deploy/labs/fat-tree-k4.yaml",
        include_bytes!("../deploy/labs/fat-tree-k4.yaml"),
    ),
    (
        "deploy/labs/leaf-spine.yaml",
        include_bytes!("../deploy/labs/leaf-spine.yaml"),
    ),
    (
        "deploy/labs/mcrdma-testbed.yaml",
        include_bytes!("../deploy/labs/mcrdma-testbed.yaml"),
    ),
    (
        "deploy/labs/p4ce-switch.yaml",
        include_bytes!("../deploy/labs/p4ce-switch.yaml"),
    ),
    (
        "deploy/labs/p4ce-leaf-spine.yaml",
        include_bytes!("../deploy/labs/p4ce-leaf-spine.yaml"),
    ),
    (
        "deploy/labs/p4ce.yaml",
        include_bytes!("../deploy/labs/p4ce.yaml"),
    ),
    (
        "deploy/leo/kvs.yaml",
        include_bytes!("../deploy/leo/kvs.yaml"),
    ),
    (
        "deploy/leo/ebs.yaml",
        include_bytes!("../deploy/leo/ebs.yaml"),
    ),
];

/// The embedded bytes of a repository file, if it is one of [`FILES`].
pub fn contents(rel: &str) -> Option<&'static [u8]> {
    FILES.iter().find(|(p, _)| *p == rel).map(|(_, b)| *b)
}

/// Where the embedded copies are written.
fn cache_root() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("pisa").join(env!("CARGO_PKG_VERSION"))
}

/// Writes every embedded file under `root` (those whose bytes differ), keeping the layout.
fn materialize(root: &Path) -> anyhow::Result<()> {
    for (rel, bytes) in FILES {
        let p = root.join(rel);
        if std::fs::read(&p).is_ok_and(|b| b == *bytes) {
            continue;
        }
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create `{}`", dir.display()))?;
        }
        // Write then rename, so that a concurrent pisa never reads half a file.
        let tmp = p.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes).with_context(|| format!("cannot write `{}`", tmp.display()))?;
        std::fs::rename(&tmp, &p).with_context(|| format!("cannot write `{}`", p.display()))?;
    }
    Ok(())
}

/// A bundled file by its repository path: `./REL` when it exists (a clone), else the embedded
/// copy under the cache directory.
pub fn path(rel: &str) -> anyhow::Result<PathBuf> {
    let here = Path::new(rel);
    if here.is_file() {
        return Ok(here.to_path_buf());
    }
    anyhow::ensure!(
        contents(rel).is_some(),
        "`{rel}` is not in the current directory, and it is not one of the files bundled in pisa"
    );
    let root = cache_root();
    materialize(&root).with_context(|| {
        format!(
            "`{rel}` is not in the current directory, and the bundled copy cannot be written \
             under `{}` (set XDG_CACHE_HOME, or run pisa in its clone)",
            root.display()
        )
    })?;
    Ok(root.join(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_file_is_the_repository_file() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (rel, bytes) in FILES {
            assert_eq!(std::fs::read(repo.join(rel)).unwrap(), *bytes, "{rel}");
        }
    }

    #[test]
    fn bundled_copies_keep_the_layout_and_relative_references() {
        let dir = std::env::temp_dir().join(format!("pisa-bundled-{}", std::process::id()));
        materialize(&dir).unwrap();
        // A lab file names its program relative to itself.
        let lab = std::fs::read_to_string(dir.join("deploy/labs/leaf-spine.yaml")).unwrap();
        assert!(lab.contains("../../p4/programs/fabric.p4"), "{lab}");
        assert!(dir
            .join("deploy/labs/../../p4/programs/fabric.p4")
            .is_file());
        // A second run leaves equal files alone.
        materialize(&dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(contents("p4/programs/l2l3.p4").is_some());
        assert!(contents("nope.p4").is_none());
    }
}

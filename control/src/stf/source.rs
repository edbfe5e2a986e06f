//! `source FILE` (the Tofino model's STF harness's): the statements of another script in place
//! of the line, as if written there, with the `setenv` variables shared both ways. The file is
//! named relative to the folder of the script that sources it (an absolute name as is, double
//! quotes around it optional). Sources nest at most [`MAX_SOURCE_DEPTH`] files deep, and a file
//! that sources itself, directly or through others, is refused with the chain of files.
//!
//! A sourced statement carries the line of the outermost `source` that brought it in (a
//! report's line names a line of the script that was run); an error inside a sourced file is
//! reported at that `source` line, its message saying in which file, line and column it is.

use std::path::{Path, PathBuf};

use super::cursor::StfParseError;
use super::lines::Statement;

/// How many scripts deep `source` may nest, the script that was run counting as the first.
pub const MAX_SOURCE_DEPTH: usize = 8;

/// How many `source` statements one run may follow in all: depth alone does not bound it
/// (eight files of ten `source` lines each are ten million reads).
pub const MAX_SOURCES: usize = 10_000;

/// The largest script file read (the script that was run or a sourced one), and the most bytes
/// of sourced scripts one run reads in all.
pub const MAX_SCRIPT_BYTES: u64 = 16 << 20;
pub const MAX_SOURCED_BYTES: u64 = 64 << 20;

/// The scripts being read, outermost first: where a `source` line's file is looked up, and
/// what a cycle would repeat.
pub(super) struct Sources {
    chain: Vec<PathBuf>,
    /// `source` statements followed and bytes they read, against [`MAX_SOURCES`] and
    /// [`MAX_SOURCED_BYTES`].
    sourced: usize,
    sourced_bytes: u64,
}

/// The bytes of script file `path`: a regular file of at most [`MAX_SCRIPT_BYTES`] (a device,
/// FIFO or directory is refused before it is read, so `/dev/zero` never fills memory).
pub fn read_script(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.is_dir() {
        return Err("it is a directory".into());
    }
    if !meta.is_file() {
        return Err("it is not a regular file (a device, FIFO or socket)".into());
    }
    if meta.len() > MAX_SCRIPT_BYTES {
        return Err(format!(
            "it is too large ({} bytes; the limit is {MAX_SCRIPT_BYTES})",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SCRIPT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(format!(
            "it is too large (more than {MAX_SCRIPT_BYTES} bytes)"
        ));
    }
    Ok(bytes)
}

impl Sources {
    /// The chain of a script read from `file`.
    pub(super) fn new(file: &Path) -> Sources {
        Sources {
            chain: vec![std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf())],
            sourced: 0,
            sourced_bytes: 0,
        }
    }

    fn chain_text(&self, last: &Path) -> String {
        self.chain
            .iter()
            .map(|p| p.display().to_string())
            .chain(std::iter::once(last.display().to_string()))
            .collect::<Vec<_>>()
            .join(" -> ")
    }

    /// The file a `source` statement names, checked against the depth limit and the chain,
    /// and its text; on success the file is pushed on the chain (pop it with
    /// [`Sources::leave`] once read).
    pub(super) fn enter(
        &mut self,
        line: usize,
        s: &Statement<'_>,
        name: &str,
    ) -> Result<(PathBuf, String), StfParseError> {
        let err = |message: String| StfParseError {
            line,
            column: s.column0 + 1,
            message,
        };
        let name = name.trim().trim_matches('"');
        if name.is_empty() {
            return Err(err("`source` needs a file name".into()));
        }
        let base = self
            .chain
            .last()
            .and_then(|p| p.parent())
            .unwrap_or_else(|| Path::new("."));
        let path = base.join(name);
        let canon = std::fs::canonicalize(&path).map_err(|e| {
            err(format!(
                "`source {name}`: cannot read `{}`: {e}",
                path.display()
            ))
        })?;
        if self.chain.contains(&canon) {
            return Err(err(format!(
                "`source {name}` makes a cycle: {}",
                self.chain_text(&canon)
            )));
        }
        if self.chain.len() >= MAX_SOURCE_DEPTH {
            return Err(err(format!(
                "`source {name}` nests scripts more than {MAX_SOURCE_DEPTH} deep: {}",
                self.chain_text(&canon)
            )));
        }
        self.sourced += 1;
        if self.sourced > MAX_SOURCES {
            return Err(err(format!(
                "`source {name}`: more than {MAX_SOURCES} `source` statements in all (scripts \
                 that each source several others multiply)"
            )));
        }
        let bytes = read_script(&canon).map_err(|e| {
            err(format!(
                "`source {name}`: cannot read `{}`: {e}",
                canon.display()
            ))
        })?;
        self.sourced_bytes += bytes.len() as u64;
        if self.sourced_bytes > MAX_SOURCED_BYTES {
            return Err(err(format!(
                "`source {name}`: the sourced scripts exceed {MAX_SOURCED_BYTES} bytes in all"
            )));
        }
        let text = super::lines::decode(&bytes).into_owned();
        self.chain.push(canon.clone());
        Ok((canon, text))
    }

    pub(super) fn leave(&mut self) {
        self.chain.pop();
    }
}

/// The file name of a `source` statement (`None`: the statement is something else).
pub(super) fn source_arg<'a>(s: &Statement<'a>) -> Option<&'a str> {
    let t = s.text.trim_start();
    let word = t.get(..6)?;
    let rest = &t[6..];
    (word.eq_ignore_ascii_case("source") && rest.starts_with(|c: char| c.is_whitespace()))
        .then_some(rest)
}

/// An error of a sourced file, reported at the `source` line (`line`, `column`) that read it.
pub(super) fn nested_error(
    line: usize,
    s: &Statement<'_>,
    file: &Path,
    e: StfParseError,
) -> StfParseError {
    StfParseError {
        line,
        column: s.column0 + 1,
        message: format!(
            "in `{}` (sourced here) line {}, column {}: {}",
            file.display(),
            e.line,
            e.column,
            e.message
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse, parse_file_with_env, Stmt};
    use std::path::PathBuf;

    /// A fresh folder for one test's scripts.
    fn folder(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pisa-stf-source-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        d
    }

    fn write(d: &std::path::Path, name: &str, text: &str) -> PathBuf {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn read(main: &std::path::Path) -> Result<Vec<super::super::StfStmt>, super::StfParseError> {
        let text = std::fs::read_to_string(main).unwrap();
        parse_file_with_env(&text, main, Vec::new())
    }

    /// Relative to the sourcing script's folder, nested, in place, variables shared both ways;
    /// the sourced statements carry the outermost `source` line.
    #[test]
    fn sourced_statements_come_in_place() {
        let d = folder("in_place");
        write(&d, "leaf.stf", "packet 1 ${P}\n");
        write(
            &d,
            "sub/mid.stf",
            "setenv Q 22\nSOURCE \"../leaf.stf\"\nwait\n",
        );
        let main = write(
            &d,
            "main.stf",
            "setenv P 11\nno_packet\nsource sub/mid.stf\npacket 2 $Q\n",
        );
        let got = read(&main).unwrap();
        let kinds: Vec<(usize, &Stmt)> = got.iter().map(|s| (s.line, &s.stmt)).collect();
        assert_eq!(kinds.len(), 4, "{kinds:?}");
        assert_eq!(kinds[0], (2, &Stmt::NoPacket));
        assert_eq!(
            kinds[1],
            (
                3,
                &Stmt::Packet {
                    port: 1,
                    data: vec![0x11]
                }
            )
        );
        assert_eq!(kinds[2], (3, &Stmt::Wait));
        assert_eq!(
            kinds[3],
            (
                4,
                &Stmt::Packet {
                    port: 2,
                    data: vec![0x22]
                }
            )
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_cycle_is_refused_with_the_chain() {
        let d = folder("cycle");
        write(&d, "b.stf", "wait\nsource a.stf\n");
        let main = write(&d, "a.stf", "wait\nsource b.stf\n");
        let e = read(&main).unwrap_err();
        assert_eq!((e.line, e.column), (2, 1), "{e:?}");
        assert!(
            e.message.contains("b.stf` (sourced here) line 2, column 1"),
            "{}",
            e.message
        );
        assert!(e.message.contains("makes a cycle"), "{}", e.message);
        assert!(
            e.message.contains("a.stf -> ")
                && e.message.contains("b.stf -> ")
                && e.message.ends_with("a.stf"),
            "{}",
            e.message
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn nesting_is_depth_limited() {
        let d = folder("depth");
        for i in 0..super::MAX_SOURCE_DEPTH {
            write(
                &d,
                &format!("s{i}.stf"),
                &format!("source s{}.stf\n", i + 1),
            );
        }
        write(&d, &format!("s{}.stf", super::MAX_SOURCE_DEPTH), "wait\n");
        let e = read(&d.join("s0.stf")).unwrap_err();
        assert!(e.message.contains("more than 8 deep"), "{}", e.message);
        // One file fewer fits.
        write(&d, "s1.stf", "wait\n");
        assert_eq!(read(&d.join("s0.stf")).unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn errors_name_the_sourced_file_and_missing_files_are_errors() {
        let d = folder("errors");
        write(&d, "sub/bad.stf", "wait\n  packet x 00\n");
        let main = write(
            &d,
            "main.stf",
            "wait; source sub/bad.stf\nsource nope.stf\n",
        );
        let e = read(&main).unwrap_err();
        assert_eq!((e.line, e.column), (1, 6), "{e:?}");
        assert!(
            e.message
                .contains("bad.stf` (sourced here) line 2, column 10"),
            "{}",
            e.message
        );
        write(&d, "sub/bad.stf", "wait\n");
        let e = read(&main).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("cannot read"), "{}", e.message);
        // Without the script's file there is nothing to be relative to.
        let e = parse("source x.stf\n").unwrap_err();
        assert!(
            e.message.contains("relative to the script's own"),
            "{}",
            e.message
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Ten `source` lines per file, five files deep, would be 11,110 reads (eight deep, ten
    /// million): past `MAX_SOURCES` in all the run stops with an error, whatever the depth.
    #[test]
    fn sources_are_bounded_in_all_not_only_in_depth() {
        let d = folder("fan_out");
        write(&d, "l5.stf", "wait\n");
        for i in (0..5).rev() {
            write(
                &d,
                &format!("l{i}.stf"),
                &format!("source l{}.stf\n", i + 1).repeat(10),
            );
        }
        let e = read(&d.join("l0.stf")).unwrap_err();
        assert!(
            e.message
                .contains("more than 10000 `source` statements in all"),
            "{e:?}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A device, a directory or a file over the size limit is refused before it is read.
    #[test]
    fn special_and_huge_files_are_refused_unread() {
        let e = super::read_script(std::path::Path::new("/dev/zero")).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let d = folder("special");
        assert!(super::read_script(&d).unwrap_err().contains("directory"));
        let main = write(&d, "main.stf", "source /dev/zero\n");
        let e = read(&main).unwrap_err();
        assert!(e.message.contains("not a regular file"), "{e:?}");
        let big = d.join("big.stf");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(super::MAX_SCRIPT_BYTES + 1).unwrap();
        assert!(super::read_script(&big).unwrap_err().contains("too large"));
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A UTF-8 byte order mark at the start of a script is not a statement.
    #[test]
    fn a_byte_order_mark_is_skipped() {
        let text = super::super::decode(b"\xEF\xBB\xBFwait\n").into_owned();
        assert_eq!(parse(&text).unwrap().len(), 1);
    }
}

//! Source files and byte spans.
//!
//! Every diagnostic and every AST node points back into the text the user wrote, so the
//! frontend keeps all loaded files (the root program, its `#include`s and our built-in
//! architecture headers) in one [`SourceMap`] and refers to positions with a compact [`Span`].

use std::fmt;
use std::io::Read as _;
use std::path::Path;

/// Largest source file (root or included) the frontend reads: 16 MiB. Real P4 programs are a
/// few hundred KiB; the cap keeps a mistaken `#include "/dev/zero"` or a huge log file from
/// eating memory.
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// Reads a P4 source file, refusing what is not one: directories, FIFOs, devices, sockets,
/// files under `/proc`-like file systems (size 0 but with content), files larger than
/// [`MAX_SOURCE_BYTES`], files with NUL bytes (binary) and files that are not UTF-8. Never
/// blocks on a FIFO and never reads more than the cap. The error says what the path is.
pub fn read_source(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(format!("`{shown}` is a directory, not a P4 source file"));
    }
    if !ft.is_file() {
        return Err(format!(
            "`{shown}` is {}, not a regular file",
            special_kind(&ft)
        ));
    }
    if meta.len() > MAX_SOURCE_BYTES {
        return Err(format!(
            "`{shown}` is too large ({} bytes; the limit is {MAX_SOURCE_BYTES})",
            meta.len()
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(format!(
            "`{shown}` is too large (more than {MAX_SOURCE_BYTES} bytes)"
        ));
    }
    if meta.len() == 0 && !bytes.is_empty() {
        // procfs/sysfs files claim size 0 and produce text on read: not source code, and
        // their contents (the environment, ...) must not end up in a diagnostic.
        return Err(format!(
            "`{shown}` is a special file (it reports size 0 but has contents), not a P4 source file"
        ));
    }
    if bytes.contains(&0) {
        return Err(format!(
            "`{shown}` contains NUL bytes: a binary file, not P4 source"
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("`{shown}` is not valid UTF-8"))
}

#[cfg(unix)]
fn special_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_ft: &std::fs::FileType) -> &'static str {
    "a special file"
}

/// Name prefix of the built-in headers in the source map.
pub const BUILTIN_PREFIX: &str = "<builtin>/";

/// Index of a file inside a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A byte range `lo..hi` in the ORIGINAL text of one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    /// A span covering `lo..hi` in `file`.
    pub fn new(file: FileId, lo: u32, hi: u32) -> Span {
        Span { file, lo, hi }
    }

    /// The smallest span covering both `self` and `other`. When the two lie in different
    /// files (a construct that starts in one file and ends in a macro from another), the
    /// result is `self`.
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }

    /// An empty span just after the end of `self` (where a missing token would go).
    pub fn end(self) -> Span {
        Span {
            file: self.file,
            lo: self.hi,
            hi: self.hi,
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> u32 {
        self.hi.saturating_sub(self.lo)
    }

    /// True when the span covers no bytes.
    pub fn is_empty(&self) -> bool {
        self.hi <= self.lo
    }
}

/// One loaded file: its display name and full text.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// Byte offset of the start of each line (first entry is 0).
    line_starts: Vec<u32>,
}

impl SourceFile {
    fn new(name: String, text: String) -> SourceFile {
        let text = normalize_lone_cr(text);
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        SourceFile {
            name,
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of byte offset `pos`.
    pub fn line_col(&self, pos: u32) -> (usize, usize) {
        let pos = pos.min(self.text.len() as u32);
        let line_idx = match self.line_starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line_idx] as usize;
        let mut end = pos as usize;
        while end > start && !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.text[start..end].chars().count() + 1;
        (line_idx + 1, col)
    }

    /// 1-based line of byte offset `pos` (cheap: no column counting).
    pub fn line_of(&self, pos: u32) -> usize {
        match self.line_starts.binary_search(&pos) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// The text of 1-based line `line`, without its line terminator.
    pub fn line_text(&self, line: usize) -> &str {
        if line == 0 || line > self.line_starts.len() {
            return "";
        }
        let start = self.line_starts[line - 1] as usize;
        let end = self
            .line_starts
            .get(line)
            .map(|&e| e as usize)
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// Number of lines in the file.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset where 1-based line `line` starts.
    pub fn line_start(&self, line: usize) -> u32 {
        self.line_starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len() as u32)
    }
}

/// Turns each lone CR (old Mac line endings) into LF, so every pass sees the line breaks the
/// author saw; CRLF stays as it is. Byte offsets do not change.
pub fn normalize_lone_cr(text: String) -> String {
    let b = text.as_bytes();
    if !b
        .iter()
        .enumerate()
        .any(|(i, &c)| c == b'\r' && b.get(i + 1) != Some(&b'\n'))
    {
        return text;
    }
    let mut bytes = text.into_bytes();
    for i in 0..bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n') {
            bytes[i] = b'\n';
        }
    }
    // Only an ASCII byte changed into another ASCII byte: still UTF-8.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// All files the frontend has read, addressed by [`FileId`].
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile::new(name.into(), text.into()));
        id
    }

    /// The file with id `id`, if it exists.
    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// Display name of a file ("<unknown>" for a bad id).
    pub fn name(&self, id: FileId) -> &str {
        self.get(id).map(|f| f.name.as_str()).unwrap_or("<unknown>")
    }

    /// Full text of a file ("" for a bad id).
    pub fn text(&self, id: FileId) -> &str {
        self.get(id).map(|f| f.text.as_str()).unwrap_or("")
    }

    /// The source text a span covers ("" when out of range).
    pub fn snippet(&self, span: Span) -> &str {
        self.text(span.file)
            .get(span.lo as usize..span.hi as usize)
            .unwrap_or("")
    }

    /// 1-based (line, column) of the start of `span`.
    pub fn line_col(&self, span: Span) -> (usize, usize) {
        self.get(span.file)
            .map(|f| f.line_col(span.lo))
            .unwrap_or((1, 1))
    }

    /// True for our built-in architecture headers (`<builtin>/tna.p4`, ...), so passes can
    /// tell the user's declarations from the architecture's.
    pub fn is_builtin(&self, id: FileId) -> bool {
        self.name(id).starts_with(BUILTIN_PREFIX)
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True when no file has been added.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// All files with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i as u32), f))
    }
}

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "file#{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_is_one_based_and_counts_chars() {
        let mut sm = SourceMap::new();
        let f = sm.add("a.p4", "ab\ncdé f\n\nx");
        assert_eq!(sm.line_col(Span::new(f, 0, 1)), (1, 1));
        assert_eq!(sm.line_col(Span::new(f, 3, 4)), (2, 1));
        // 'é' is two bytes: "f" is at byte 8 but column 5.
        assert_eq!(sm.line_col(Span::new(f, 8, 9)), (2, 5));
        assert_eq!(sm.line_col(Span::new(f, 10, 10)), (3, 1));
        assert_eq!(sm.line_col(Span::new(f, 11, 12)), (4, 1));
        assert_eq!(sm.get(f).unwrap().line_text(2), "cdé f");
        assert_eq!(sm.snippet(Span::new(f, 3, 5)), "cd");
    }

    #[test]
    fn span_to_merges_same_file_only() {
        let a = Span::new(FileId(0), 5, 7);
        let b = Span::new(FileId(0), 10, 12);
        assert_eq!(a.to(b), Span::new(FileId(0), 5, 12));
        let c = Span::new(FileId(1), 0, 1);
        assert_eq!(a.to(c), a);
    }
}

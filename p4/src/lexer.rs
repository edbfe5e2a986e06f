//! The P4_16 lexer (built on logos).
//!
//! It runs on preprocessed text and yields tokens with byte ranges in that text; the
//! preprocessor's map turns those ranges back into spans in the original files. `>>` is never
//! produced: the lexer emits two `>` tokens and the parser joins adjacent ones into a shift,
//! which is how `bit<8>>` (a type argument closing a generic) stays unambiguous.

use logos::Logos;

use crate::ast::IntLit;

/// Why a piece of text is not a token.
#[derive(Clone, Debug, Default, PartialEq, Eq, thiserror::Error)]
pub enum LexError {
    #[default]
    #[error("unexpected character")]
    UnexpectedChar,
    /// A malformed integer literal, with the reason.
    #[error("invalid integer literal: {0}")]
    BadNumber(String),
    #[error("unterminated string literal")]
    UnterminatedString,
    #[error("unterminated block comment")]
    UnterminatedComment,
}

impl LexError {
    /// A human-readable description for diagnostics.
    pub fn message(&self, text: &str) -> String {
        match self {
            LexError::UnexpectedChar => {
                let n = text.chars().count();
                if n <= 1 {
                    let c = text.chars().next().unwrap_or(' ');
                    return format!("unexpected character `{}`", c.escape_default());
                }
                let shown: String = text
                    .chars()
                    .take(16)
                    .flat_map(char::escape_default)
                    .collect();
                let more = if n > 16 { "..." } else { "" };
                format!("{n} unexpected characters `{shown}{more}`")
            }
            LexError::BadNumber(why) => format!("invalid integer literal `{text}`: {why}"),
            LexError::UnterminatedString => "unterminated string literal".to_string(),
            LexError::UnterminatedComment => "unterminated block comment".to_string(),
        }
    }
}

fn block_comment(lex: &mut logos::Lexer<'_, TokenKind>) -> Result<logos::Skip, LexError> {
    let rest = lex.remainder();
    match rest.find("*/") {
        Some(i) => {
            lex.bump(i + 2);
            Ok(logos::Skip)
        }
        None => {
            lex.bump(rest.len());
            Err(LexError::UnterminatedComment)
        }
    }
}

fn string_lit(lex: &mut logos::Lexer<'_, TokenKind>) -> Result<String, LexError> {
    let rest = lex.remainder();
    let mut out = String::new();
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                lex.bump(i + 1);
                return Ok(out);
            }
            '\n' => break,
            '\\' => match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, 'r')) => out.push('\r'),
                Some((_, '0')) => out.push('\0'),
                Some((_, '\n')) => {}
                Some((_, other)) => out.push(other),
                None => break,
            },
            other => out.push(other),
        }
    }
    let stop = rest.find('\n').unwrap_or(rest.len());
    lex.bump(stop);
    Err(LexError::UnterminatedString)
}

fn int_lit(lex: &mut logos::Lexer<'_, TokenKind>) -> Result<IntLit, LexError> {
    parse_int(lex.slice()).map_err(LexError::BadNumber)
}

/// Parses a P4 integer literal: `[width(w|s)][0x|0o|0b|0d]digits`, `_` allowed between digits.
pub fn parse_int(text: &str) -> Result<IntLit, String> {
    let bytes = text.as_bytes();
    let lead = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let (width, signed, body) = match bytes.get(lead) {
        Some(b'w' | b'W' | b's' | b'S') => {
            let w: u32 = text[..lead]
                .parse()
                .map_err(|_| "width is too large".to_string())?;
            if w == 0 && matches!(bytes[lead], b's' | b'S') {
                return Err("a signed literal needs a width of at least 1".to_string());
            }
            (
                Some(w),
                matches!(bytes[lead], b's' | b'S'),
                &text[lead + 1..],
            )
        }
        _ => (None, false, text),
    };
    let (radix, digits) = match body.get(..2) {
        Some("0x" | "0X") => (16, &body[2..]),
        Some("0o" | "0O") => (8, &body[2..]),
        Some("0b" | "0B") => (2, &body[2..]),
        Some("0d" | "0D") => (10, &body[2..]),
        _ => (10, body),
    };
    let mut value: u128 = 0;
    let mut any = false;
    for c in digits.chars() {
        if c == '_' {
            continue;
        }
        let d = c
            .to_digit(radix)
            .ok_or_else(|| format!("`{c}` is not a base-{radix} digit"))?;
        value = value
            .checked_mul(radix as u128)
            .and_then(|v| v.checked_add(d as u128))
            .ok_or_else(|| "value does not fit in 128 bits".to_string())?;
        any = true;
    }
    if !any {
        return Err("no digits".to_string());
    }
    Ok(IntLit {
        value,
        width,
        signed,
    })
}

/// Every token of P4_16.
#[derive(Logos, Clone, Debug, PartialEq, Eq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\f]+")]
pub enum TokenKind {
    #[regex(r"//[^\n]*", logos::skip, allow_greedy = true)]
    #[token("/*", block_comment)]
    Comment,

    // Keywords.
    #[token("abstract")]
    Abstract,
    #[token("action")]
    Action,
    #[token("apply")]
    Apply,
    #[token("bit")]
    Bit,
    #[token("bool")]
    Bool,
    #[token("const")]
    Const,
    #[token("control")]
    Control,
    #[token("default")]
    Default,
    #[token("else")]
    Else,
    #[token("enum")]
    Enum,
    #[token("error")]
    Error,
    #[token("exit")]
    Exit,
    #[token("extern")]
    Extern,
    #[token("false")]
    False,
    #[token("header")]
    Header,
    #[token("header_union")]
    HeaderUnion,
    #[token("if")]
    If,
    #[token("in")]
    In,
    #[token("inout")]
    InOut,
    #[token("int")]
    Int,
    #[token("match_kind")]
    MatchKind,
    #[token("out")]
    Out,
    #[token("package")]
    Package,
    #[token("parser")]
    Parser,
    #[token("return")]
    Return,
    #[token("select")]
    Select,
    #[token("state")]
    State,
    #[token("string")]
    String,
    #[token("struct")]
    Struct,
    #[token("switch")]
    Switch,
    #[token("table")]
    Table,
    #[token("this")]
    This,
    #[token("transition")]
    Transition,
    #[token("true")]
    True,
    #[token("tuple")]
    Tuple,
    #[token("type")]
    Type,
    #[token("typedef")]
    Typedef,
    #[token("value_set")]
    ValueSet,
    #[token("varbit")]
    Varbit,
    #[token("void")]
    Void,

    /// `_`
    #[token("_", priority = 10)]
    DontCare,
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().to_string())]
    Ident(String),
    #[regex(r"[0-9][0-9A-Za-z_]*", int_lit)]
    IntLit(IntLit),
    #[token("\"", string_lit)]
    StringLit(String),

    // Punctuation and operators.
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("?")]
    Question,
    #[token("@")]
    At,
    #[token("=")]
    Assign,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("!")]
    Bang,
    #[token("~")]
    Tilde,
    #[token("&")]
    Amp,
    #[token("&&")]
    AmpAmp,
    #[token("&&&")]
    AmpAmpAmp,
    #[token("|")]
    Pipe,
    #[token("||")]
    PipePipe,
    #[token("|+|")]
    PipePlusPipe,
    #[token("|-|")]
    PipeMinusPipe,
    #[token("^")]
    Caret,
    #[token("+")]
    Plus,
    #[token("++")]
    PlusPlus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token("<<")]
    Shl,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("+=")]
    PlusAssign,
    #[token("-=")]
    MinusAssign,
    #[token("*=")]
    StarAssign,
    #[token("/=")]
    SlashAssign,
    #[token("%=")]
    PercentAssign,
    #[token("<<=")]
    ShlAssign,
    #[token("&=")]
    AmpAssign,
    #[token("|=")]
    PipeAssign,
    #[token("^=")]
    CaretAssign,
    #[token("|+|=")]
    PipePlusPipeAssign,
    #[token("|-|=")]
    PipeMinusPipeAssign,
    /// A `#` that survived preprocessing (a directive in the wrong place).
    #[token("#")]
    Hash,

    /// End of input (added by [`lex`], never produced by logos).
    Eof,
    /// Text that failed to lex (already reported); stands in for the bad token so the
    /// parser does not report it a second time.
    Bad,
}

impl TokenKind {
    /// How the token is shown in "expected X, found Y" messages.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Ident(name) => format!("identifier `{name}`"),
            TokenKind::IntLit(_) => "integer literal".to_string(),
            TokenKind::StringLit(_) => "string literal".to_string(),
            TokenKind::Eof => "end of file".to_string(),
            TokenKind::Bad => "invalid token".to_string(),
            TokenKind::Comment => "comment".to_string(),
            other => match other.keyword_text() {
                Some(k) => format!("keyword `{k}`"),
                None => format!("`{}`", other.punct_text()),
            },
        }
    }

    /// The spelling of a keyword token, `None` for other tokens.
    pub fn keyword_text(&self) -> Option<&'static str> {
        use TokenKind::*;
        Some(match self {
            Abstract => "abstract",
            Action => "action",
            Apply => "apply",
            Bit => "bit",
            Bool => "bool",
            Const => "const",
            Control => "control",
            Default => "default",
            Else => "else",
            Enum => "enum",
            Error => "error",
            Exit => "exit",
            Extern => "extern",
            False => "false",
            Header => "header",
            HeaderUnion => "header_union",
            If => "if",
            In => "in",
            InOut => "inout",
            Int => "int",
            MatchKind => "match_kind",
            Out => "out",
            Package => "package",
            Parser => "parser",
            Return => "return",
            Select => "select",
            State => "state",
            String => "string",
            Struct => "struct",
            Switch => "switch",
            Table => "table",
            This => "this",
            Transition => "transition",
            True => "true",
            Tuple => "tuple",
            Type => "type",
            Typedef => "typedef",
            ValueSet => "value_set",
            Varbit => "varbit",
            Void => "void",
            _ => return None,
        })
    }

    /// The spelling of a punctuation token ("" for tokens with a payload).
    pub fn punct_text(&self) -> &'static str {
        use TokenKind::*;
        match self {
            LBrace => "{",
            RBrace => "}",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            Semi => ";",
            Colon => ":",
            Comma => ",",
            Dot => ".",
            DotDot => "..",
            Question => "?",
            At => "@",
            Assign => "=",
            EqEq => "==",
            NotEq => "!=",
            Bang => "!",
            Tilde => "~",
            Amp => "&",
            AmpAmp => "&&",
            AmpAmpAmp => "&&&",
            Pipe => "|",
            PipePipe => "||",
            PipePlusPipe => "|+|",
            PipeMinusPipe => "|-|",
            Caret => "^",
            Plus => "+",
            PlusPlus => "++",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Lt => "<",
            Le => "<=",
            Shl => "<<",
            Gt => ">",
            Ge => ">=",
            PlusAssign => "+=",
            MinusAssign => "-=",
            StarAssign => "*=",
            SlashAssign => "/=",
            PercentAssign => "%=",
            ShlAssign => "<<=",
            AmpAssign => "&=",
            PipeAssign => "|=",
            CaretAssign => "^=",
            PipePlusPipeAssign => "|+|=",
            PipeMinusPipeAssign => "|-|=",
            Hash => "#",
            DontCare => "_",
            _ => "",
        }
    }
}

/// A token with its byte range in the lexed text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawToken {
    pub kind: TokenKind,
    pub lo: u32,
    pub hi: u32,
    /// A line break separates this token from the previous one (or it is the first token).
    pub newline_before: bool,
    /// No text at all (not even a space) separates it from the previous token.
    pub joined: bool,
}

/// A lexing error with its byte range in the lexed text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawLexError {
    pub error: LexError,
    pub lo: u32,
    pub hi: u32,
}

/// Lexes `text` completely. The token list always ends with an [`TokenKind::Eof`] token;
/// bad input produces errors and is skipped, never a panic.
pub fn lex(text: &str) -> (Vec<RawToken>, Vec<RawLexError>) {
    // Roughly one token per five bytes of P4; reserving avoids repeated regrowth.
    let mut tokens = Vec::with_capacity(text.len() / 5 + 1);
    let mut errors: Vec<RawLexError> = Vec::new();
    let mut lexer = TokenKind::lexer(text);
    let mut last_end = 0usize;
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        let gap = text.get(last_end..range.start).unwrap_or("");
        let newline_before = tokens.is_empty() || gap.contains('\n');
        let joined = !tokens.is_empty() && gap.is_empty();
        last_end = range.end;
        match result {
            Ok(kind) => tokens.push(RawToken {
                kind,
                lo: range.start as u32,
                hi: range.end as u32,
                newline_before,
                joined,
            }),
            Err(error) => {
                // A run of characters that are not P4 (binary data, `$$$$`) is one error.
                if let Some(prev) = errors.last_mut() {
                    if error == LexError::UnexpectedChar
                        && prev.error == LexError::UnexpectedChar
                        && prev.hi as usize == range.start
                        && !text[range.clone()].contains('\n')
                    {
                        prev.hi = range.end as u32;
                        continue;
                    }
                }
                errors.push(RawLexError {
                    error,
                    lo: range.start as u32,
                    hi: range.end as u32,
                })
            }
        }
    }
    let end = text.len() as u32;
    tokens.push(RawToken {
        kind: TokenKind::Eof,
        lo: end,
        hi: end,
        newline_before: true,
        joined: false,
    });
    (tokens, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        let (toks, errs) = lex(text);
        assert!(errs.is_empty(), "{errs:?}");
        toks.into_iter().map(|t| t.kind).collect()
    }

    fn int(value: u128, width: Option<u32>, signed: bool) -> TokenKind {
        TokenKind::IntLit(IntLit {
            value,
            width,
            signed,
        })
    }

    #[test]
    fn integer_literals() {
        assert_eq!(
            kinds("8w0x1F 16s5 0b1010 0o17 0xff 1_000 32w1_000 4W0B11 10"),
            vec![
                int(31, Some(8), false),
                int(5, Some(16), true),
                int(10, None, false),
                int(15, None, false),
                int(255, None, false),
                int(1000, None, false),
                int(1000, Some(32), false),
                int(3, Some(4), false),
                int(10, None, false),
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn bad_integer_literals_are_errors() {
        for bad in [
            "0xg",
            "8w",
            "12abc",
            "0b102",
            "999999999999999999999999999999999999999999",
        ] {
            let (_, errs) = lex(bad);
            assert_eq!(errs.len(), 1, "{bad}");
            assert!(matches!(errs[0].error, LexError::BadNumber(_)), "{bad}");
        }
    }

    #[test]
    fn operators_longest_match() {
        use TokenKind::*;
        assert_eq!(
            kinds("|+| |-| ++ &&& && & .. . << <= < >= > > |+|= -= _ @"),
            vec![
                PipePlusPipe,
                PipeMinusPipe,
                PlusPlus,
                AmpAmpAmp,
                AmpAmp,
                Amp,
                DotDot,
                Dot,
                Shl,
                Le,
                Lt,
                Ge,
                Gt,
                Gt,
                PipePlusPipeAssign,
                MinusAssign,
                DontCare,
                At,
                Eof
            ]
        );
    }

    #[test]
    fn keywords_identifiers_strings_comments() {
        use TokenKind::*;
        assert_eq!(
            kinds("header hdr_t /* c */ { bit<8> _x; } // tail\n\"a\\\"b\" key"),
            vec![
                Header,
                Ident("hdr_t".into()),
                LBrace,
                Bit,
                Lt,
                IntLit(crate::ast::IntLit {
                    value: 8,
                    width: None,
                    signed: false
                }),
                Gt,
                Ident("_x".into()),
                Semi,
                RBrace,
                StringLit("a\"b".into()),
                Ident("key".into()),
                Eof
            ]
        );
    }

    #[test]
    fn newline_flags_and_errors() {
        let (toks, errs) = lex("a b\nc $ \"open");
        assert!(toks[0].newline_before);
        assert!(!toks[1].newline_before);
        assert!(toks[2].newline_before);
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].error, LexError::UnexpectedChar);
        assert_eq!((errs[0].lo, errs[0].hi), (6, 7));
        assert_eq!(errs[1].error, LexError::UnterminatedString);
        let (_, errs) = lex("/* never closed");
        assert_eq!(errs[0].error, LexError::UnterminatedComment);
    }
}

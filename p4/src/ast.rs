//! The abstract syntax tree of the P4_16 subset that TNA programs use.
//!
//! The parser produces it, the checker resolves and types it, the lowering turns it into the
//! pipeline IR. Every node carries a [`Span`] into the original source; choices are enums, not
//! strings, so later passes match on them exhaustively. Constructs we parse but do not support
//! become [`DeclKind::Unsupported`] / [`StmtKind::Unsupported`] so nothing is silently dropped.

use crate::source::Span;

/// An identifier with its position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

impl Ident {
    pub fn new(name: impl Into<String>, span: Span) -> Ident {
        Ident {
            name: name.into(),
            span,
        }
    }
}

/// A whole program after preprocessing: the user's declarations AND those of the included
/// architecture headers (core.p4, tna.p4, ...), in source order.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub decls: Vec<Decl>,
}

// ---------------------------------------------------------------------------------------------
// Annotations
// ---------------------------------------------------------------------------------------------

/// `@name`, `@name(...)`, `@name[...]` or `@pragma ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub name: Ident,
    pub body: AnnotationBody,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AnnotationBody {
    /// `@hidden`, `@defaultonly`.
    Empty,
    /// `@name("x")`, `@pa_container_size("ingress", "hdr.x", 8)`: the body parsed as a
    /// comma-separated expression list.
    Exprs(Vec<Expr>),
    /// `@name[k = v, ...]` (structured key-value form).
    KeyValues(Vec<NamedExpr>),
    /// Anything else (`@pragma ...`, bodies that are not expressions): the tokens' text in
    /// order, kept verbatim.
    Tokens(Vec<AnnotationToken>),
}

/// One token of an unstructured annotation body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnnotationToken {
    pub text: String,
    pub span: Span,
}

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// `bool`
    Bool,
    /// `error`
    Error,
    /// `match_kind`
    MatchKind,
    /// `string`
    String,
    /// `void`
    Void,
    /// `int` (arbitrary precision)
    InfInt,
    /// `bit<W>` (`bit` alone means `bit<1>`; the parser fills in a literal 1).
    Bit(Box<Expr>),
    /// `int<W>`
    Int(Box<Expr>),
    /// `varbit<W>`
    Varbit(Box<Expr>),
    /// A named type: typedef, header, struct, enum, extern, type parameter, ...
    Named(Ident),
    /// `Name<T1, T2>`: a generic type applied to arguments.
    Specialized { base: Ident, args: Vec<Type> },
    /// `tuple<T1, T2>`
    Tuple(Vec<Type>),
    /// `T[size]`: a header stack (or array of header unions).
    Stack { elem: Box<Type>, size: Box<Expr> },
    /// `_` as a type argument ("don't care").
    DontCare,
}

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// A declaration: top-level, a parser/control local, or inside an instantiation initializer.
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub annotations: Vec<Annotation>,
    pub kind: DeclKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DeclKind {
    Const(ConstDecl),
    /// `typedef T name;` and `type T name;` (`is_new_type`).
    Typedef(TypedefDecl),
    Header(StructDecl),
    HeaderUnion(StructDecl),
    Struct(StructDecl),
    Enum(EnumDecl),
    /// `error { A, B }`
    Error(Vec<Ident>),
    /// `match_kind { exact, ternary }`
    MatchKind(Vec<Ident>),
    Extern(ExternDecl),
    /// `extern T max<T>(in T a, in T b);`
    ExternFunction(FunctionProto),
    /// A function with a body (top level, or inside an instantiation initializer).
    Function(FunctionDecl),
    Action(ActionDecl),
    Parser(ParserDecl),
    /// `parser P<H>(packet_in pkt, out H hdr);` (a parser type, no body).
    ParserType(BlockType),
    Control(ControlDecl),
    /// `control C<H>(inout H hdr);` (a control type, no body).
    ControlType(BlockType),
    Package(PackageDecl),
    Instantiation(Instantiation),
    Table(TableDecl),
    Variable(VariableDecl),
    ValueSet(ValueSetDecl),
    /// A P4_16 construct we parse but do not support; `what` names it for diagnostics.
    Unsupported {
        what: String,
    },
}

impl Decl {
    /// The declared name, if the declaration has one.
    pub fn name(&self) -> Option<&Ident> {
        match &self.kind {
            DeclKind::Const(d) => Some(&d.name),
            DeclKind::Typedef(d) => Some(&d.name),
            DeclKind::Header(d) | DeclKind::HeaderUnion(d) | DeclKind::Struct(d) => Some(&d.name),
            DeclKind::Enum(d) => Some(&d.name),
            DeclKind::Error(_) | DeclKind::MatchKind(_) | DeclKind::Unsupported { .. } => None,
            DeclKind::Extern(d) => Some(&d.name),
            DeclKind::ExternFunction(d) => Some(&d.name),
            DeclKind::Function(d) => Some(&d.proto.name),
            DeclKind::Action(d) => Some(&d.name),
            DeclKind::Parser(d) => Some(&d.name),
            DeclKind::Control(d) => Some(&d.name),
            DeclKind::ParserType(d) | DeclKind::ControlType(d) => Some(&d.name),
            DeclKind::Package(d) => Some(&d.name),
            DeclKind::Instantiation(d) => Some(&d.name),
            DeclKind::Table(d) => Some(&d.name),
            DeclKind::Variable(d) => Some(&d.name),
            DeclKind::ValueSet(d) => Some(&d.name),
        }
    }
}

/// `const T name = value;`
#[derive(Clone, Debug, PartialEq)]
pub struct ConstDecl {
    pub ty: Type,
    pub name: Ident,
    pub value: Expr,
}

/// `typedef T name;` / `type T name;`
#[derive(Clone, Debug, PartialEq)]
pub struct TypedefDecl {
    pub ty: Type,
    pub name: Ident,
    /// `type` (a new, distinct type) rather than `typedef` (an alias).
    pub is_new_type: bool,
}

/// Header, header union or struct.
#[derive(Clone, Debug, PartialEq)]
pub struct StructDecl {
    pub name: Ident,
    /// Type parameters of a generic struct/header (`struct S<T> { T f; }`); usually empty.
    pub type_params: Vec<Ident>,
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub annotations: Vec<Annotation>,
    pub ty: Type,
    pub name: Ident,
    pub span: Span,
}

/// `enum E { A, B }` or serializable `enum bit<8> E { A = 1, B = 2 }`.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDecl {
    pub name: Ident,
    /// The underlying type of a serializable enum.
    pub repr: Option<Type>,
    pub members: Vec<EnumMember>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EnumMember {
    pub annotations: Vec<Annotation>,
    pub name: Ident,
    pub value: Option<Expr>,
    pub span: Span,
}

/// Direction of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// No direction (action data parameters, constructor parameters, extern arguments).
    None,
    In,
    Out,
    InOut,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub annotations: Vec<Annotation>,
    pub direction: Direction,
    pub ty: Type,
    pub name: Ident,
    /// `= value` default (used by the architecture headers, e.g. `in bool dflt = false`).
    pub default: Option<Expr>,
    pub span: Span,
}

/// `extern Name<T> { ... }`
#[derive(Clone, Debug, PartialEq)]
pub struct ExternDecl {
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub members: Vec<ExternMember>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ExternMember {
    pub annotations: Vec<Annotation>,
    pub kind: ExternMemberKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExternMemberKind {
    /// `Name(params);`
    Constructor { name: Ident, params: Vec<Param> },
    /// `R method<T>(params);`
    Method(FunctionProto),
    /// `abstract R method(params);`: implemented by the user in an instantiation initializer.
    AbstractMethod(FunctionProto),
}

/// A function signature: `R name<T>(params)`.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionProto {
    pub return_type: Type,
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub params: Vec<Param>,
    pub span: Span,
}

/// A function with a body.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDecl {
    pub proto: FunctionProto,
    pub body: Block,
}

/// `action name(params) { body }`
#[derive(Clone, Debug, PartialEq)]
pub struct ActionDecl {
    pub name: Ident,
    pub params: Vec<Param>,
    pub body: Block,
}

/// The signature part shared by parser and control declarations and their type declarations.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockType {
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub params: Vec<Param>,
}

/// `parser Name(params)(ctor params) { locals states }`
#[derive(Clone, Debug, PartialEq)]
pub struct ParserDecl {
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub params: Vec<Param>,
    pub ctor_params: Vec<Param>,
    /// Constants, variables, instantiations and value sets.
    pub locals: Vec<Decl>,
    pub states: Vec<ParserState>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParserState {
    pub annotations: Vec<Annotation>,
    pub name: Ident,
    pub body: Vec<Stmt>,
    /// `None` when the state has no transition statement (which P4 treats as `reject`).
    pub transition: Option<Transition>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub kind: TransitionKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TransitionKind {
    /// `transition next;` (including `accept` and `reject`).
    Direct(Ident),
    /// `transition select(e1, e2) { cases }`
    Select {
        exprs: Vec<Expr>,
        cases: Vec<SelectCase>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct SelectCase {
    pub keyset: Keyset,
    pub next: Ident,
    pub span: Span,
}

/// A keyset in a select case or a table entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyset {
    pub kind: KeysetKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum KeysetKind {
    /// `default`
    Default,
    /// `_`
    DontCare,
    /// A value (compared for equality, or a value set name).
    Expr(Expr),
    /// `value &&& mask`
    Mask { value: Expr, mask: Expr },
    /// `lo .. hi`
    Range { lo: Expr, hi: Expr },
    /// `(k1, k2, ...)`, one keyset per select expression / table key.
    Tuple(Vec<Keyset>),
}

/// `control Name(params)(ctor params) { locals apply { ... } }`
#[derive(Clone, Debug, PartialEq)]
pub struct ControlDecl {
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub params: Vec<Param>,
    pub ctor_params: Vec<Param>,
    /// Constants, variables, actions, tables, instantiations.
    pub locals: Vec<Decl>,
    pub apply: Block,
}

/// `package Name<T>(params);`
#[derive(Clone, Debug, PartialEq)]
pub struct PackageDecl {
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub params: Vec<Param>,
}

/// `Type(args) name;` or `Type(args) name = { initializer };`
#[derive(Clone, Debug, PartialEq)]
pub struct Instantiation {
    /// The instantiated type, `Named` or `Specialized` (`Register<bit<32>, bit<16>>`).
    pub ty: Type,
    pub args: Vec<Argument>,
    pub name: Ident,
    /// Declarations in `= { ... }`: abstract method implementations (functions) and nested
    /// instantiations.
    pub initializer: Option<Vec<Decl>>,
}

/// `T name;` / `T name = init;`
#[derive(Clone, Debug, PartialEq)]
pub struct VariableDecl {
    pub ty: Type,
    pub name: Ident,
    pub init: Option<Expr>,
}

/// `value_set<T>(size) name;`
#[derive(Clone, Debug, PartialEq)]
pub struct ValueSetDecl {
    pub elem_ty: Type,
    pub size: Expr,
    pub name: Ident,
}

/// `table name { properties }`
#[derive(Clone, Debug, PartialEq)]
pub struct TableDecl {
    pub name: Ident,
    pub properties: Vec<TableProperty>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TableProperty {
    pub annotations: Vec<Annotation>,
    /// Written with `const` (`const default_action = ...`, `const entries = ...`).
    pub is_const: bool,
    pub kind: TablePropertyKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TablePropertyKind {
    /// `key = { e : exact; ... }`
    Key(Vec<KeyElement>),
    /// `actions = { a; @defaultonly b; }`
    Actions(Vec<ActionRef>),
    /// `default_action = a(1);`
    DefaultAction(ActionRef),
    /// `entries = { (k1, k2) : a(x); }`
    Entries(Vec<TableEntry>),
    /// `size = 1024;`
    Size(Expr),
    /// Any other `name = expr;` property (implementation, counters, meters, registers,
    /// idle_timeout, ...).
    Other { name: Ident, value: Expr },
}

#[derive(Clone, Debug, PartialEq)]
pub struct KeyElement {
    pub annotations: Vec<Annotation>,
    pub expr: Expr,
    pub match_kind: Ident,
    pub span: Span,
}

/// An action named in an action list, a default action or an entry: `a` or `a(args)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionRef {
    pub annotations: Vec<Annotation>,
    pub name: Ident,
    /// `None` when written without parentheses.
    pub args: Option<Vec<Argument>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TableEntry {
    pub annotations: Vec<Annotation>,
    /// `priority = N :` before the keyset (P4_16 1.2.2 entries).
    pub priority: Option<Expr>,
    pub keys: Keyset,
    pub action: ActionRef,
    pub span: Span,
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub annotations: Vec<Annotation>,
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub annotations: Vec<Annotation>,
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `lhs = rhs;`, or a compound assignment `lhs op= rhs;` when `op` is set.
    Assign {
        lhs: Expr,
        op: Option<BinOp>,
        rhs: Expr,
    },
    /// A method or function call used as a statement; the expression is an [`ExprKind::Call`].
    Call(Expr),
    If {
        cond: Expr,
        then_branch: Box<Stmt>,
        else_branch: Option<Box<Stmt>>,
    },
    /// `switch (subject) { cases }`, usually `switch (t.apply().action_run)`.
    Switch {
        subject: Expr,
        cases: Vec<SwitchCase>,
    },
    Block(Block),
    Variable(VariableDecl),
    Const(ConstDecl),
    Return(Option<Expr>),
    Exit,
    /// `;`
    Empty,
    /// A construct we parse but do not support.
    Unsupported {
        what: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct SwitchCase {
    pub label: SwitchLabel,
    /// `None` for a fall-through label (`a: b: { ... }`: `a` has no body).
    pub body: Option<Block>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SwitchLabel {
    /// An action name (table switch) or any other expression (value switch).
    Expr(Expr),
    Default,
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// An integer literal as written: `8w0x1F` is `{ value: 31, width: Some(8), signed: false }`,
/// `16s5` is signed, `42` has no width (type `int`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntLit {
    pub value: u128,
    pub width: Option<u32>,
    pub signed: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(IntLit),
    Bool(bool),
    String(String),
    /// A name: variable, parameter, constant, action, table, instance, or a type used as a
    /// value (the base of `HashAlgorithm_t.CRC16`).
    Name(Ident),
    /// `error.Name`
    ErrorMember(Ident),
    /// `this` (inside RegisterAction bodies).
    This,
    /// `_` as an argument ("don't care").
    DontCare,
    /// `base.member` (fields, methods, enum members, `.next`, `.last`, `.apply`, ...).
    Member {
        base: Box<Expr>,
        member: Ident,
    },
    /// `base[index]`
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `base[hi:lo]`
    Slice {
        base: Box<Expr>,
        hi: Box<Expr>,
        lo: Box<Expr>,
    },
    Unary {
        op: UnOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `cond ? a : b`
    Ternary {
        cond: Box<Expr>,
        then_expr: Box<Expr>,
        else_expr: Box<Expr>,
    },
    /// `(T) e`
    Cast {
        ty: Type,
        expr: Box<Expr>,
    },
    /// `callee<type_args>(args)`; the callee is a `Name` or a `Member` (method call).
    Call {
        callee: Box<Expr>,
        type_args: Vec<Type>,
        args: Vec<Argument>,
    },
    /// `{a, b}`: a list / tuple expression.
    List(Vec<Expr>),
    /// `{f = 1, g = 2}`: a struct or header initializer.
    StructInit(Vec<NamedExpr>),
    /// `{#}`: the invalid header or header union (P4_16 1.2.2 "Invalid header expression").
    InvalidHeader,
    /// A type in expression position: a type argument of a call parsed as an argument
    /// (`sizeInBits(bit<32>)`-style uses).
    Type(Type),
}

/// The direct sub-expressions of an expression, in source order (a call's callee, then its
/// arguments), for the passes that walk the AST: one definition of what an expression holds.
macro_rules! expr_children {
    ($e:expr, $f:ident, $iter:ident, $($m:tt)*) => {
        match $e {
            ExprKind::Member { base, .. } | ExprKind::Unary { operand: base, .. } => $f(base),
            ExprKind::Cast { expr, .. } => $f(expr),
            ExprKind::Index { base, index } => {
                $f(base);
                $f(index);
            }
            ExprKind::Slice { base, hi, lo } => {
                $f(base);
                $f(hi);
                $f(lo);
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                $f(lhs);
                $f(rhs);
            }
            ExprKind::Ternary {
                cond,
                then_expr,
                else_expr,
            } => {
                $f(cond);
                $f(then_expr);
                $f(else_expr);
            }
            ExprKind::Call { callee, args, .. } => {
                $f(callee);
                args.$iter().for_each(|a| $f(& $($m)* a.value));
            }
            ExprKind::List(items) => items.$iter().for_each(|x| $f(x)),
            ExprKind::StructInit(fs) => fs.$iter().for_each(|x| $f(& $($m)* x.value)),
            _ => {}
        }
    };
}

impl Expr {
    /// Calls `f` on each direct sub-expression (see `expr_children`).
    pub fn for_each_child(&self, mut f: impl FnMut(&Expr)) {
        expr_children!(&self.kind, f, iter,)
    }

    /// Calls `f` on each direct sub-expression, mutably.
    pub fn for_each_child_mut(&mut self, mut f: impl FnMut(&mut Expr)) {
        expr_children!(&mut self.kind, f, iter_mut, mut)
    }
}

/// The name of the [`NamedExpr`] that stands for `...` in a struct initializer
/// (`{ a = 1, ... }`: every field not named takes its default value).
pub const DEFAULT_REST: &str = "...";

/// `name = value` in a struct initializer or a structured annotation.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedExpr {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

/// A call argument, positional or named (`f(a = 1)`).
#[derive(Clone, Debug, PartialEq)]
pub struct Argument {
    pub name: Option<Ident>,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `!`
    Not,
    /// `~`
    BitNot,
    /// `-`
    Neg,
    /// `+` (no-op)
    Plus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Mul,
    Div,
    Mod,
    Add,
    Sub,
    /// `|+|`
    AddSat,
    /// `|-|`
    SubSat,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `++` (bit-string concatenation)
    Concat,
}

impl BinOp {
    /// The operator as written in P4.
    pub fn as_str(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::AddSat => "|+|",
            BinOp::SubSat => "|-|",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::BitOr => "|",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Concat => "++",
        }
    }
}

impl UnOp {
    /// The operator as written in P4.
    pub fn as_str(self) -> &'static str {
        match self {
            UnOp::Not => "!",
            UnOp::BitNot => "~",
            UnOp::Neg => "-",
            UnOp::Plus => "+",
        }
    }
}

impl std::fmt::Display for Type {
    /// The type in P4 syntax (`bit<8>`, `Register<bit<32>, bit<16>>`), for messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::parser::dump::ty(self))
    }
}

impl std::fmt::Display for Expr {
    /// The expression in P4 syntax with every operator application parenthesized.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::parser::dump::expr(self))
    }
}

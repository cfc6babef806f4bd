//! Query text → typed [`Query`] (see [`ast`]). The vocabulary lives in
//! [`syntax`], the grammar in [`parser`]:
//!
//! ```text
//! query   := (filter | directive | expr)*
//! expr    := and ('OR' and)*
//! and     := unary (['AND'] unary)*
//! unary   := ('NOT' | '-') unary | '(' expr ')' | word | word* | "phrase" | 'phrase'
//! filter  := ['-'] field ':' (value[,value...] | "value" | null | not_null)
//! ```

pub mod ast;
pub(crate) mod facet;
pub mod parser;
pub(crate) mod searchbox;
pub mod syntax;

pub(crate) use ast::*;
pub use parser::parse;

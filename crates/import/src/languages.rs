//! Source languages of files: a file name in, a language name (the names
//! `lang:` filters use, see `canonical_language`) and the language's comment
//! and definition syntax out. Used by the git importer and its overviews.

/// How a language writes comments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentStyle {
    /// `//` and `/* */`
    CFamily,
    /// `#`
    Hash,
    /// `--`
    Dash,
    /// `<!-- -->`
    Markup,
    /// `;`
    Semicolon,
    /// Prose: Markdown, reStructuredText, plain text.
    Prose,
    /// No comments worth reading (JSON, CSV).
    None,
}

/// What the overview heuristics know about a language.
#[derive(Debug, Clone, Copy)]
pub struct Language {
    /// Canonical name (`rust`, `python`, `javascript`, ...).
    pub name: &'static str,
    /// Human name for overview sentences.
    pub label: &'static str,
    pub comments: CommentStyle,
    /// Keywords that introduce a named definition, with the kind reported
    /// (`("fn", "function")`); matched after modifiers such as `pub`,
    /// `export`, `async`, `static` are stripped.
    pub definitions: &'static [(&'static str, &'static str)],
}

const RUST_DEFS: &[(&str, &str)] = &[
    ("fn", "function"),
    ("struct", "struct"),
    ("enum", "enum"),
    ("trait", "trait"),
    ("mod", "module"),
    ("type", "type"),
    ("const", "constant"),
    ("static", "static"),
    ("union", "union"),
    ("macro_rules!", "macro"),
];
const PYTHON_DEFS: &[(&str, &str)] = &[("def", "function"), ("class", "class")];
const JS_DEFS: &[(&str, &str)] = &[
    ("function", "function"),
    ("function*", "function"),
    ("class", "class"),
    ("interface", "interface"),
    ("type", "type"),
    ("enum", "enum"),
    ("namespace", "namespace"),
    ("const", "function"),
    ("let", "function"),
    ("var", "function"),
];
const GO_DEFS: &[(&str, &str)] = &[("func", "function"), ("type", "type")];
const JVM_DEFS: &[(&str, &str)] = &[
    ("class", "class"),
    ("interface", "interface"),
    ("enum", "enum"),
    ("record", "record"),
    ("object", "object"),
    ("trait", "trait"),
    ("struct", "struct"),
    ("protocol", "protocol"),
    ("extension", "extension"),
    ("fun", "function"),
    ("func", "function"),
    ("def", "function"),
];
const C_DEFS: &[(&str, &str)] = &[
    ("struct", "struct"),
    ("class", "class"),
    ("enum", "enum"),
    ("union", "union"),
    ("namespace", "namespace"),
    ("#define", "macro"),
];
const RUBY_DEFS: &[(&str, &str)] = &[("def", "method"), ("class", "class"), ("module", "module")];
const PHP_DEFS: &[(&str, &str)] = &[
    ("function", "function"),
    ("class", "class"),
    ("interface", "interface"),
    ("trait", "trait"),
    ("enum", "enum"),
];
const SHELL_DEFS: &[(&str, &str)] = &[("function", "function")];
const LUA_DEFS: &[(&str, &str)] = &[("function", "function")];
const PERL_DEFS: &[(&str, &str)] = &[("sub", "function"), ("package", "package")];
const ELIXIR_DEFS: &[(&str, &str)] = &[
    ("def", "function"),
    ("defp", "function"),
    ("defmacro", "macro"),
    ("defmodule", "module"),
];
const NONE: &[(&str, &str)] = &[];

macro_rules! lang {
    ($name:expr, $label:expr, $c:ident, $defs:expr) => {
        Language {
            name: $name,
            label: $label,
            comments: CommentStyle::$c,
            definitions: $defs,
        }
    };
}

/// Languages by file extension (lower-case, without the dot).
const BY_EXTENSION: &[(&str, Language)] = &[
    ("rs", lang!("rust", "Rust", CFamily, RUST_DEFS)),
    ("py", lang!("python", "Python", Hash, PYTHON_DEFS)),
    ("pyi", lang!("python", "Python", Hash, PYTHON_DEFS)),
    ("js", lang!("javascript", "JavaScript", CFamily, JS_DEFS)),
    ("mjs", lang!("javascript", "JavaScript", CFamily, JS_DEFS)),
    ("cjs", lang!("javascript", "JavaScript", CFamily, JS_DEFS)),
    ("jsx", lang!("javascript", "JavaScript", CFamily, JS_DEFS)),
    ("ts", lang!("typescript", "TypeScript", CFamily, JS_DEFS)),
    ("mts", lang!("typescript", "TypeScript", CFamily, JS_DEFS)),
    ("tsx", lang!("typescript", "TypeScript", CFamily, JS_DEFS)),
    ("go", lang!("go", "Go", CFamily, GO_DEFS)),
    ("java", lang!("java", "Java", CFamily, JVM_DEFS)),
    ("kt", lang!("kotlin", "Kotlin", CFamily, JVM_DEFS)),
    ("kts", lang!("kotlin", "Kotlin", CFamily, JVM_DEFS)),
    ("scala", lang!("scala", "Scala", CFamily, JVM_DEFS)),
    ("groovy", lang!("groovy", "Groovy", CFamily, JVM_DEFS)),
    ("gradle", lang!("groovy", "Groovy", CFamily, JVM_DEFS)),
    ("swift", lang!("swift", "Swift", CFamily, JVM_DEFS)),
    ("dart", lang!("dart", "Dart", CFamily, JVM_DEFS)),
    ("cs", lang!("csharp", "C#", CFamily, JVM_DEFS)),
    ("c", lang!("c", "C", CFamily, C_DEFS)),
    ("h", lang!("c", "C", CFamily, C_DEFS)),
    ("cpp", lang!("cpp", "C++", CFamily, C_DEFS)),
    ("cc", lang!("cpp", "C++", CFamily, C_DEFS)),
    ("cxx", lang!("cpp", "C++", CFamily, C_DEFS)),
    ("hpp", lang!("cpp", "C++", CFamily, C_DEFS)),
    ("hh", lang!("cpp", "C++", CFamily, C_DEFS)),
    ("m", lang!("objective-c", "Objective-C", CFamily, C_DEFS)),
    ("zig", lang!("zig", "Zig", CFamily, RUST_DEFS)),
    (
        "proto",
        lang!("protobuf", "Protocol Buffers", CFamily, JVM_DEFS),
    ),
    ("rb", lang!("ruby", "Ruby", Hash, RUBY_DEFS)),
    ("rake", lang!("ruby", "Ruby", Hash, RUBY_DEFS)),
    ("php", lang!("php", "PHP", CFamily, PHP_DEFS)),
    ("sh", lang!("bash", "shell", Hash, SHELL_DEFS)),
    ("bash", lang!("bash", "shell", Hash, SHELL_DEFS)),
    ("zsh", lang!("bash", "shell", Hash, SHELL_DEFS)),
    ("fish", lang!("fish", "fish", Hash, SHELL_DEFS)),
    ("ps1", lang!("powershell", "PowerShell", Hash, SHELL_DEFS)),
    ("bat", lang!("batch", "batch", None, NONE)),
    ("lua", lang!("lua", "Lua", Dash, LUA_DEFS)),
    ("pl", lang!("perl", "Perl", Hash, PERL_DEFS)),
    ("pm", lang!("perl", "Perl", Hash, PERL_DEFS)),
    ("r", lang!("r", "R", Hash, NONE)),
    ("jl", lang!("julia", "Julia", Hash, PYTHON_DEFS)),
    ("ex", lang!("elixir", "Elixir", Hash, ELIXIR_DEFS)),
    ("exs", lang!("elixir", "Elixir", Hash, ELIXIR_DEFS)),
    ("hs", lang!("haskell", "Haskell", Dash, NONE)),
    ("sql", lang!("sql", "SQL", Dash, NONE)),
    ("md", lang!("markdown", "Markdown", Prose, NONE)),
    ("markdown", lang!("markdown", "Markdown", Prose, NONE)),
    ("rst", lang!("rst", "reStructuredText", Prose, NONE)),
    ("txt", lang!("text", "text", Prose, NONE)),
    ("html", lang!("html", "HTML", Markup, NONE)),
    ("htm", lang!("html", "HTML", Markup, NONE)),
    ("xml", lang!("xml", "XML", Markup, NONE)),
    ("svg", lang!("xml", "SVG", Markup, NONE)),
    ("vue", lang!("vue", "Vue", Markup, JS_DEFS)),
    ("svelte", lang!("svelte", "Svelte", Markup, JS_DEFS)),
    ("css", lang!("css", "CSS", CFamily, NONE)),
    ("scss", lang!("scss", "SCSS", CFamily, NONE)),
    ("less", lang!("less", "Less", CFamily, NONE)),
    ("json", lang!("json", "JSON", None, NONE)),
    ("jsonl", lang!("json", "JSON", None, NONE)),
    ("yaml", lang!("yaml", "YAML", Hash, NONE)),
    ("yml", lang!("yaml", "YAML", Hash, NONE)),
    ("toml", lang!("toml", "TOML", Hash, NONE)),
    ("lock", lang!("toml", "lock", Hash, NONE)),
    ("ini", lang!("ini", "INI", Semicolon, NONE)),
    ("cfg", lang!("ini", "INI", Semicolon, NONE)),
    ("csv", lang!("csv", "CSV", None, NONE)),
    ("tf", lang!("hcl", "Terraform", Hash, NONE)),
    ("cmake", lang!("cmake", "CMake", Hash, NONE)),
    ("mk", lang!("makefile", "Makefile", Hash, NONE)),
];

/// Languages by whole file name.
const BY_NAME: &[(&str, Language)] = &[
    ("makefile", lang!("makefile", "Makefile", Hash, NONE)),
    ("gnumakefile", lang!("makefile", "Makefile", Hash, NONE)),
    ("dockerfile", lang!("dockerfile", "Dockerfile", Hash, NONE)),
    ("cmakelists.txt", lang!("cmake", "CMake", Hash, NONE)),
    ("rakefile", lang!("ruby", "Ruby", Hash, RUBY_DEFS)),
    ("gemfile", lang!("ruby", "Ruby", Hash, RUBY_DEFS)),
    ("cargo.lock", lang!("toml", "TOML", Hash, NONE)),
    (".bashrc", lang!("bash", "shell", Hash, SHELL_DEFS)),
    (".profile", lang!("bash", "shell", Hash, SHELL_DEFS)),
];

/// The extension of a file name (lower-case, without the dot), if any.
pub fn extension(file_name: &str) -> Option<String> {
    let (stem, ext) = file_name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// The language of a file, from its name or extension.
pub fn language_for(file_name: &str) -> Option<&'static Language> {
    let lower = file_name.to_ascii_lowercase();
    if let Some((_, l)) = BY_NAME.iter().find(|(n, _)| *n == lower) {
        return Some(l);
    }
    if lower.starts_with("dockerfile.") {
        return language_for("Dockerfile");
    }
    let ext = extension(&lower)?;
    BY_EXTENSION.iter().find(|(e, _)| *e == ext).map(|(_, l)| l)
}

/// The language a script's `#!` line names (`#!/usr/bin/env python3`,
/// `#!/bin/sh`), for files without a telling name.
pub fn language_from_shebang(first_line: &str) -> Option<&'static Language> {
    let rest = first_line.strip_prefix("#!")?.trim();
    let mut words = rest.split_whitespace();
    let mut prog = words.next()?.rsplit('/').next()?;
    if prog == "env" {
        prog = words.find(|w| !w.starts_with('-'))?;
    }
    let prog = prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let ext = match prog {
        "sh" | "bash" | "zsh" | "dash" | "ksh" => "sh",
        "python" => "py",
        "node" | "nodejs" | "deno" => "js",
        "ruby" => "rb",
        "perl" => "pl",
        "php" => "php",
        "lua" => "lua",
        "Rscript" => "r",
        "fish" => "fish",
        _ => return None,
    };
    language_for(&format!("script.{ext}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gitsense_engine::model::canonical_language;

    #[test]
    fn languages_come_from_extensions_and_well_known_names() {
        assert_eq!(language_for("lib.rs").unwrap().name, "rust");
        assert_eq!(language_for("App.TSX").unwrap().name, "typescript");
        assert_eq!(language_for("Makefile").unwrap().name, "makefile");
        assert_eq!(language_for("Dockerfile.dev").unwrap().name, "dockerfile");
        assert!(language_for("LICENSE").is_none());
        assert!(language_for(".gitignore").is_none());
        assert_eq!(extension("archive.tar.gz").as_deref(), Some("gz"));
        assert_eq!(extension(".env"), None);
        let sh = |l: &str| language_from_shebang(l).map(|l| l.name);
        assert_eq!(sh("#!/usr/bin/env bash"), Some("bash"));
        assert_eq!(sh("#!/usr/bin/env -S python3 -u"), Some("python"));
        assert_eq!(sh("#!/bin/sh -e"), Some("bash"));
        assert_eq!(sh("#!/usr/bin/awk -f"), None);
        assert_eq!(sh("echo hi"), None);
    }

    #[test]
    fn language_names_are_already_canonical() {
        for (_, l) in BY_EXTENSION.iter().chain(BY_NAME) {
            assert_eq!(canonical_language(l.name), l.name, "{}", l.name);
        }
    }
}

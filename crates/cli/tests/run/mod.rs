//! Running the built `gitsense-search` binary from the CLI's end-to-end
//! tests: in a pipe (the usual case) or with its output on a real
//! pseudo-terminal (`script` from util-linux), where it draws progress,
//! prints terse results and colours code.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The binary, with the environment variables that change its output
/// (`NO_COLOR`, `GITSENSE_SEARCH_PKG`) removed: a test sets what it tests.
pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gitsense-search"));
    cmd.env_remove("NO_COLOR").env_remove("GITSENSE_SEARCH_PKG");
    cmd
}

/// Runs the binary with `args`, its output in pipes.
pub fn cli(args: &[&str]) -> Output {
    bin().args(args).output().expect("cli runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs the binary with `args` and its standard output and error on one
/// pseudo-terminal (`NO_COLOR` set when `no_color`); everything it
/// printed, the terminal's `\r\n` turned back into `\n`. Panics when it
/// exits non-zero.
pub fn on_terminal(args: &[&str], no_color: bool) -> String {
    let mut line = env!("CARGO_BIN_EXE_gitsense-search").to_string();
    for a in args {
        line.push_str(&format!(" '{}'", a.replace('\'', r"'\''")));
    }
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .env("COLUMNS", "200")
        .env_remove("GITSENSE_SEARCH_PKG");
    if no_color {
        cmd.env("NO_COLOR", "1");
    } else {
        cmd.env_remove("NO_COLOR");
    }
    let o = cmd.output().expect("script (util-linux) runs");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    stdout(&o).replace("\r\n", "\n")
}

//! Progress on stderr: one bar per long step (an import, the build's
//! finishing steps, publish), labelled with what it does and its unit, with
//! a count and an ETA, or a spinner with the time spent for a step that
//! cannot be counted. Nothing is drawn with `--quiet` or when stderr is not
//! a terminal (indicatif hides its bars then).

use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;

/// What a bar counts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Records, pages, files: shown as numbers (the label names the unit).
    Count,
    /// Bytes of an input read as a stream: shown in KiB, MiB, GiB.
    Bytes,
}

const TICK: Duration = Duration::from_millis(120);

/// A counted bar for one step whose length the step sets itself (an
/// importer): `label` says what it does and, for [`Unit::Count`], in what
/// unit.
pub fn bar(quiet: bool, label: &str, unit: Unit) -> ProgressBar {
    styled(quiet, label, Some(unit), 0)
}

/// A bar of `total` (a spinner with the time spent when `unit` is None).
fn styled(quiet: bool, label: &str, unit: Option<Unit>, total: u64) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    // Without a length yet (an importer sets it once it knows), not a
    // full bar of 0/0.
    let pb = if total == 0 {
        ProgressBar::no_length()
    } else {
        ProgressBar::new(total)
    };
    pb.set_style(style(unit));
    pb.set_message(label.to_string());
    pb.enable_steady_tick(TICK);
    pb
}

fn style(unit: Option<Unit>) -> ProgressStyle {
    let template = match unit {
        None => "{spinner} {msg} ({elapsed})",
        Some(Unit::Count) => {
            "{spinner} {msg} [{bar:30}] {human_pos}/{human_len} {percent:>3}% ETA {eta}"
        }
        Some(Unit::Bytes) => {
            "{spinner} {msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} {percent:>3}% ETA {eta}"
        }
    };
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// The bars of a run of steps: [`Steps::show`] replaces the bar when the
/// step changes, so every moment of a long command has a labelled line.
pub struct Steps {
    quiet: bool,
    current: Option<(&'static str, ProgressBar)>,
}

impl Steps {
    pub fn new(quiet: bool) -> Steps {
        Steps {
            quiet,
            current: None,
        }
    }

    /// `done` of `total` (0: not counted) in the step `label`.
    pub fn show(&mut self, label: &'static str, done: u64, total: u64) {
        match &self.current {
            Some((l, pb)) if *l == label => pb.set_position(done),
            _ => {
                self.clear();
                let unit = (total > 0).then_some(Unit::Count);
                let pb = styled(self.quiet, label, unit, total);
                pb.set_position(done);
                self.current = Some((label, pb));
            }
        }
    }

    /// Removes the last bar.
    pub fn clear(&mut self) {
        if let Some((_, pb)) = self.current.take() {
            pb.finish_and_clear();
        }
    }
}

impl Drop for Steps {
    fn drop(&mut self) {
        self.clear();
    }
}

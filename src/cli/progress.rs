//! How far a repository-wide command is (`lock`, `lock --check`, `diff --base` of every folder):
//! the library's `parallel::Progress` shown as an `indicatif` bar, one line rewritten in place,
//! only when stderr is a terminal. In a CI log or Argo CD's, where a rewritten line is noise,
//! nothing is shown and the report alone is printed, as before.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bar of one `parallel::map`, made when it starts.
#[derive(Default)]
pub struct Shown {
    bar: Mutex<Option<ProgressBar>>,
}

impl cilium_cmp_render::parallel::Progress for Shown {
    fn start(&self, what: &str, total: usize) {
        // One folder needs no counter; not a terminal, no bar (indicatif would hide it too, but
        // the rule is ours to state).
        if total < 2 || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{msg}: {pos}/{len} folders") {
            bar.set_style(style);
        }
        // The names are the program's own, escaped all the same like everything shown.
        bar.set_message(cilium_cmp_yaml::escape::message(what));
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(bar);
        }
    }

    fn advance(&self, done: usize) {
        // `parallel::map` reports one count at a time in increasing order, so the bar is only
        // ever moved forwards.
        if let Ok(slot) = self.bar.lock() {
            if let Some(bar) = slot.as_ref() {
                bar.set_position(done as u64);
            }
        }
    }

    fn finish(&self) {
        if let Ok(mut slot) = self.bar.lock() {
            // Left on screen at its final count; what the command prints next starts below it.
            if let Some(bar) = slot.take() {
                bar.finish();
            }
        }
    }
}

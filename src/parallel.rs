//! Work over many application folders on every core with std threads: each worker takes the
//! next folder, so at most one folder's renders per worker are in memory at once. Progress goes
//! to stderr only when stderr is a terminal (a CI log gets the report alone).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` applied to every item, results in the items' order. `what` names the work in progress.
pub fn map<T: Sync, R: Send>(items: &[T], what: &str, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let progress = std::io::stderr().is_terminal() && items.len() > 1;
    // The line is rewritten in place with `\r`, the program's only control character on stderr;
    // what it names goes through the text escaper like everything else shown.
    let what = crate::escape::message(what);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                // Counted and printed under the lock: two workers finishing at once would
                // otherwise print their counts in either order, and the counter go backwards.
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if progress {
                        eprint!("\r{what}: {n}/{} folders", items.len());
                    }
                }
            });
        }
    });
    if progress {
        eprintln!();
    }
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

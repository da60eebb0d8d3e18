//! Work over many application folders on every core with std threads: each worker takes the
//! next folder, so at most one folder's renders per worker are in memory at once. The library
//! prints nothing itself: how far the work is goes to a `Progress` the caller gives (the binary
//! shows a bar on a terminal, nothing in a CI log).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::engine::stack;

/// Told how far a `map` is. The calls are made one at a time, in the order the items finish,
/// so `done` only ever grows: a display never shows its counter going backwards.
pub trait Progress: Sync {
    /// The work `what` over `total` items starts.
    fn start(&self, what: &str, total: usize);
    /// `done` of the items have finished.
    fn advance(&self, done: usize);
    /// Every item has finished.
    fn finish(&self);
}

/// A `Progress` that shows nothing: for callers without anyone watching (tests, a library
/// user, a single folder).
pub struct Quiet;

impl Progress for Quiet {
    fn start(&self, _: &str, _: usize) {}
    fn advance(&self, _: usize) {}
    fn finish(&self) {}
}

/// `f` applied to every item, results in the items' order. `what` names the work for
/// `progress`.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    what: &str,
    progress: &dyn Progress,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    progress.start(what, items.len());
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(item) = items.get(i) else { break };
        let r = f(item);
        // Counted and reported under the lock: two workers finishing at once would
        // otherwise report their counts in either order, and the counter go backwards.
        if let Ok(mut all) = results.lock() {
            all[i] = Some(r);
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress.advance(n);
        }
    };
    // Workers have a render's stack, so each render runs in place, not on a thread of its own
    // (`engine::stack`). Where the system starts none, the calling thread does the work.
    std::thread::scope(|s| {
        let started = (0..workers)
            .filter(|_| stack::spawn_deep(s, work).is_ok())
            .count();
        if started == 0 {
            work();
        }
    });
    progress.finish();
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records every call, to check the order a display sees.
    #[derive(Default)]
    struct Recorded(Mutex<Vec<String>>);

    impl Progress for Recorded {
        fn start(&self, what: &str, total: usize) {
            self.0.lock().unwrap().push(format!("start {what} {total}"));
        }
        fn advance(&self, done: usize) {
            self.0.lock().unwrap().push(format!("{done}"));
        }
        fn finish(&self) {
            self.0.lock().unwrap().push("finish".into());
        }
    }

    #[test]
    fn results_keep_the_order_and_the_counter_only_grows() {
        let items: Vec<u64> = (0..64).collect();
        let seen = Recorded::default();
        // Uneven work, so that workers finish out of the items' order.
        let out = map(&items, "square", &seen, |&n| {
            std::thread::sleep(std::time::Duration::from_micros((n * 37) % 500));
            n * n
        });
        assert_eq!(out, items.iter().map(|n| n * n).collect::<Vec<_>>());
        let calls = seen.0.into_inner().unwrap();
        assert_eq!(calls.first().map(String::as_str), Some("start square 64"));
        assert_eq!(calls.last().map(String::as_str), Some("finish"));
        let counts: Vec<usize> = calls[1..calls.len() - 1]
            .iter()
            .map(|c| c.parse().unwrap())
            .collect();
        assert_eq!(counts, (1..=64).collect::<Vec<_>>());
    }
}

//! The stack a render needs, and the threads that have it. Evaluating templates recurses
//! (templates including templates, `toYaml` of nested values, `tpl`), within the bounds of
//! `exec::MAX_CALL_DEPTH`: far deeper than a thread's default stack of 2 MB, or the 8 MB of a
//! process's main thread.
//!
//! A render therefore runs on a thread started here. The binary runs its whole command on one
//! (`on_deep_stack` in `main`), and `parallel::map`'s workers are such threads, so a render runs
//! on the thread that read its values, not on one started for it: the allocator gives it the
//! pages the work before it freed, where a new thread's heap starts from fresh pages (about 170
//! of the 1,370 page faults of a whole `render` process; ARCHITECTURE.md, "Performance").

use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::thread::{Scope, ScopedJoinHandle};

/// The stack a render thread gets: `exec::MAX_CALL_DEPTH` nested calls of about 20 frames
/// each fit with room to spare (only the pages touched are ever committed).
pub const RENDER_STACK_BYTES: usize = 256 << 20;

thread_local! {
    /// Whether this thread was started here, with `RENDER_STACK_BYTES` of stack.
    static DEEP: Cell<bool> = const { Cell::new(false) };
}

/// Why `on_deep_stack` has no result.
#[derive(Debug)]
pub enum StackError {
    /// The thread could not be started (the system's thread or memory limits).
    Spawn(std::io::Error),
    /// The work panicked: a bug of this program, never an answer to input.
    Panicked,
}

impl std::fmt::Display for StackError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StackError::Spawn(e) => write!(f, "cannot start the render thread: {e}"),
            StackError::Panicked => f.write_str("the render panicked (a bug of cilium-cmp)"),
        }
    }
}

impl std::error::Error for StackError {}

/// `work`'s result, with `RENDER_STACK_BYTES` of stack under it: on the calling thread when it
/// already has that stack, else on a new thread, joined before this returns. A panic is caught
/// either way, so a caller sees the same `Panicked` wherever the work ran.
pub fn on_deep_stack<R: Send>(work: impl FnOnce() -> R + Send) -> Result<R, StackError> {
    if DEEP.with(Cell::get) {
        return std::panic::catch_unwind(AssertUnwindSafe(work)).map_err(|_| StackError::Panicked);
    }
    std::thread::scope(|s| {
        spawn_deep(s, work)
            .map_err(StackError::Spawn)?
            .join()
            .map_err(|_| StackError::Panicked)
    })
}

/// Starts `work` in `scope` on a thread with `RENDER_STACK_BYTES` of stack, where a render
/// runs in place.
pub fn spawn_deep<'scope, R: Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    work: impl FnOnce() -> R + Send + 'scope,
) -> std::io::Result<ScopedJoinHandle<'scope, R>> {
    std::thread::Builder::new()
        .name("render".into())
        .stack_size(RENDER_STACK_BYTES)
        .spawn_scoped(scope, move || {
            DEEP.with(|d| d.set(true));
            work()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_id() -> std::thread::ThreadId {
        std::thread::current().id()
    }

    #[test]
    fn a_deep_thread_runs_nested_work_in_place() {
        let (outer, inner) =
            on_deep_stack(|| (thread_id(), on_deep_stack(thread_id).unwrap())).unwrap();
        assert_eq!(outer, inner);
        assert_ne!(outer, thread_id());
    }

    #[test]
    fn a_panic_is_an_error_in_place_and_on_a_new_thread() {
        assert!(matches!(
            on_deep_stack(|| panic!("on a new thread")),
            Err(StackError::Panicked)
        ));
        let nested = on_deep_stack(|| on_deep_stack(|| panic!("in place")));
        assert!(matches!(nested, Ok(Err(StackError::Panicked))));
    }

    #[test]
    fn the_stack_holds_deep_recursion() {
        fn depth(n: u64) -> u64 {
            // A frame of about 1 KB that the optimiser cannot fold away.
            let pad = std::hint::black_box([n as u8; 1024]);
            if n == 0 {
                pad[0] as u64
            } else {
                depth(n - 1) + std::hint::black_box(1)
            }
        }
        // About 64 MB of frames: well past a default thread's stack.
        assert_eq!(on_deep_stack(|| depth(60_000)).unwrap(), 60_000);
    }
}

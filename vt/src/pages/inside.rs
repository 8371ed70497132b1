//! Whether the calling thread is inside libghostty: a thread-local mark that [`Inside`] sets around the calls
//! that map, discard or free libghostty's page memory, so the process's `mmap64` and `madvise` act for
//! libghostty only while it is the caller.

use std::cell::Cell;
use std::marker::PhantomData;

/// What the calling thread is doing, as far as page memory goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// Not inside libghostty: every page call is the plain system call.
    Outside,
    /// Inside a libghostty call that may map, discard or free pages (creating, resizing or freeing a
    /// terminal, decoding a snapshot): the mappings it makes are recorded and discarding them zeroes in place.
    Call,
    /// Inside [`crate::Terminal::write`]: as [`Mark::Call`], and the mappings it makes are populated up front.
    Parsing,
}

thread_local! {
    /// The calling thread's mark. Const-initialised and without a destructor, so reading it never allocates
    /// or fails, even while the thread exits.
    static MARK: Cell<Mark> = const { Cell::new(Mark::Outside) };
}

/// The calling thread's mark.
pub(crate) fn mark() -> Mark {
    MARK.with(Cell::get)
}

/// Marks the calling thread until dropped, then restores the mark it had. `!Send`: it must be dropped on the
/// thread it marks.
#[derive(Debug)]
pub(crate) struct Inside {
    was: Mark,
    _not_send: PhantomData<*const ()>,
}

impl Inside {
    /// Around a libghostty call that may map, discard or free page memory.
    pub(crate) fn call() -> Inside {
        Inside::with(Mark::Call)
    }

    /// Around [`crate::Terminal::write`].
    pub(crate) fn parsing() -> Inside {
        Inside::with(Mark::Parsing)
    }

    fn with(mark: Mark) -> Inside {
        Inside { was: MARK.with(|current| current.replace(mark)), _not_send: PhantomData }
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        MARK.with(|current| current.set(self.was));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_lasts_as_long_as_the_guard_and_nests() {
        assert_eq!(mark(), Mark::Outside);
        {
            let _parsing = Inside::parsing();
            assert_eq!(mark(), Mark::Parsing);
            {
                let _call = Inside::call();
                assert_eq!(mark(), Mark::Call);
            }
            assert_eq!(mark(), Mark::Parsing, "the outer mark comes back");
            let other = std::thread::spawn(mark).join().expect("thread");
            assert_eq!(other, Mark::Outside, "other threads are not marked");
        }
        assert_eq!(mark(), Mark::Outside);
    }
}

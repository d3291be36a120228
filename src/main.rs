// A replay allocates and frees many small values and frame-sized buffers for every frame
// it reads; mimalloc does that in about a fifth less time than the system allocator
// (docs/PERFORMANCE.md, issue #13).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    purge_freed_memory_soon();
    #[cfg(target_os = "linux")]
    no_transparent_huge_pages();
    hindsight::cmd::run(hindsight::cmd::Cli::parse())
}

/// Memory freed goes back to the system after 10 ms, not mimalloc 3's default 1000 ms (a
/// replay of a gigabyte is over before anything is returned) nor never: a buffer a frame
/// frees and the next frame needs again is reused well within that time, while the holes
/// long-lived allocations leave between them go back, so the peak follows what is live.
/// Against never purging: peak RSS at 2 threads 1 GB 124-137 -> 101-104 MiB, 5 GB 165-192
/// -> 121 MiB, the 1M-line stuck loop 1.74 -> 1.44 GB, wall time the same or less
/// (docs/PERFORMANCE.md).
fn purge_freed_memory_soon() {
    // SAFETY: sets one of mimalloc's options, which it reads when it purges memory; the
    // value is a delay in milliseconds.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_AFTER_MS) };
}

const PURGE_AFTER_MS: std::os::raw::c_long = 10;

/// No transparent huge pages for this process (and the guard processes it starts).
/// mimalloc asks for them on its arenas, so every fault in memory it gave back zeroes 2 MB
/// where the allocation needed a few kilobytes. Without them: the 1M-line stuck loop 6.1-6.8
/// -> 4.9-5.2 s and 0.86 -> 0.83 GB, the 1 GB corpus on 2 threads the same time or less
/// (median 0.645 -> 0.615 s) at 99-108 -> 63-74 MiB (docs/PERFORMANCE.md). mimalloc's own
/// option for this is read when it starts, before `main`; the process-wide switch is not.
#[cfg(target_os = "linux")]
fn no_transparent_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE takes no pointers; if it fails, nothing changes.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
}

/// `mi_option_purge_delay`, the 16th entry of `mi_option_e` in mimalloc 3's `mimalloc.h`;
/// the Rust bindings do not name it. The test below checks it is that option.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purge_delay_is_the_option_with_its_documented_default() {
        // 1000 ms by default in mimalloc 3's options.c ("use 0 for immediate purging or -1
        // for no purging at all"); the options around it default to other values.
        let get = |option| unsafe { libmimalloc_sys::mi_option_get(option) };
        assert_eq!(get(PURGE_DELAY), 1000);
        assert_ne!(get(PURGE_DELAY - 1), 1000);
        assert_ne!(get(PURGE_DELAY + 1), 1000);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn transparent_huge_pages_are_off_once_switched_off() {
        no_transparent_huge_pages();
        // SAFETY: PR_GET_THP_DISABLE takes no pointers and returns the flag.
        assert_eq!(
            unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) },
            1
        );
    }
}

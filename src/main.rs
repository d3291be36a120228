// A replay allocates and frees many small values and frame-sized buffers for every frame
// it reads; mimalloc does that in about a fifth less time than the system allocator
// (docs/PERFORMANCE.md, issue #13).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    keep_freed_memory();
    hindsight::cmd::run(hindsight::cmd::Cli::parse())
}

/// Memory freed stays with the allocator instead of going back to the system after a delay:
/// each frame frees buffers the next one needs again, and memory given back returns as
/// fresh pages the kernel must zero (it halved the replay's system time on a 1 GB corpus,
/// docs/PERFORMANCE.md). The peak is unchanged; only what is resident between frames is
/// kept.
fn keep_freed_memory() {
    // SAFETY: sets one of mimalloc's options, which it reads when it purges memory; -1 is
    // its documented value for "never purge".
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, -1) };
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
}

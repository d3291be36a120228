//! Shell action-identity normalizer: an arbitrary UTF-8 command, optionally followed by a
//! NUL byte and the run's cwd (`command\0cwd`), through `normalize_shell_for_family`,
//! `conjuncts`, `output_is_filtered` and the shell facts (what the command writes,
//! installs, whether it only views, whether its status may be masked).
//!
//! Must never panic, and the normalizer must be idempotent, as its documentation says:
//! `normalize(normalize(x)) == normalize(x)`.
#![no_main]

use hindsight::normalize::shell::{conjuncts, normalize_shell_for_family, output_is_filtered};
use hindsight::normalize::ShellFacts;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (command, cwd) = match text.split_once('\0') {
        Some((command, cwd)) => (command, Some(cwd)),
        None => (text, None),
    };

    let once = normalize_shell_for_family(command, cwd);
    let twice = normalize_shell_for_family(&once, cwd);
    assert_eq!(
        twice, once,
        "not idempotent: {command:?} (cwd {cwd:?}) -> {once:?} -> {twice:?}"
    );

    let _ = conjuncts(command, cwd);
    let _ = output_is_filtered(command);
    let _ = output_is_filtered(&once);
    let _ = ShellFacts::of(command, cwd);
    let _ = ShellFacts::of(&once, cwd);
});

//! Inputs the cargo-fuzz targets (`fuzz/`, see fuzz/README.md) found, run through the same
//! checks as their target so they stay fixed under the ordinary `cargo test`; and the
//! committed seed corpus (`fuzz/corpus/<target>/`), replayed the same way.
//!
//! Every crash the fuzzer found is a test here, fixed in `src/` (three shell-normalizer
//! idempotence bugs: an empty-target redirection, an unquoted `cd` target with `&`, a
//! here-document body that never closed).

use hindsight::ingest::events::read_events;
use hindsight::ingest::frames::parse_frame;
use hindsight::ingest::{IngestStats, Policy, Problems};
use hindsight::normalize::shell::{conjuncts, normalize_shell_for_family, output_is_filtered};
use hindsight::normalize::ShellFacts;
use std::path::Path;

/// The `events_line` target: no panic, lenient never fails, strict fails exactly when
/// lenient found a problem (the same first one), otherwise both read the same events.
fn check_events_line(data: &[u8]) {
    const PATH: &str = "fuzz/events.jsonl";
    let mut lenient_problems = Problems::default();
    let mut lenient_stats = IngestStats::default();
    let lenient = read_events(
        data,
        PATH,
        Policy::Lenient,
        &mut lenient_problems,
        &mut lenient_stats,
    )
    .expect("lenient mode never fails");
    assert_eq!(
        lenient_stats.bytes,
        data.len() as u64,
        "every byte is counted"
    );
    assert_eq!(lenient_stats.records, lenient.len() as u64);

    let mut strict_problems = Problems::default();
    let mut strict_stats = IngestStats::default();
    let strict = read_events(
        data,
        PATH,
        Policy::Strict,
        &mut strict_problems,
        &mut strict_stats,
    );
    assert_eq!(strict_problems.count, 0);
    match strict {
        Ok(events) => {
            assert_eq!(
                lenient_problems.count, 0,
                "strict accepted what lenient flagged"
            );
            assert_eq!(events, lenient, "strict and lenient read different events");
        }
        Err(error) => {
            assert!(
                lenient_problems.count > 0,
                "strict failed on clean input: {error}"
            );
            assert_eq!(Some(&error), lenient_problems.listed.first());
        }
    }
}

/// The `frame` target: no panic; reused buffers give the same result as fresh ones.
fn check_frame(data: &[u8]) {
    const PATH: &str = "fuzz/context/frame-0001.json";
    let mut buffers = simd_json::Buffers::default();
    let first = parse_frame(&mut data.to_vec(), PATH, &mut buffers);
    let second = parse_frame(&mut data.to_vec(), PATH, &mut buffers);
    assert_eq!(first, second, "reused buffers changed the result");
}

/// The `shell_normalizer` target: `command` or `command\0cwd`; no panic, idempotent.
fn check_shell_normalizer(data: &[u8]) {
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
}

/// Every file of `fuzz/corpus/<target>/` through `check`.
fn replay_corpus(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "{} is empty", dir.display());
    for path in entries {
        let data = std::fs::read(&path).expect("corpus file");
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{} fails its check", path.display());
    }
}

// ---------------------------------------------------------------- seed corpora

#[test]
fn events_line_corpus_passes() {
    replay_corpus("events_line", check_events_line);
}

#[test]
fn frame_corpus_passes() {
    replay_corpus("frame", check_frame);
}

#[test]
fn shell_normalizer_corpus_passes() {
    replay_corpus("shell_normalizer", check_shell_normalizer);
}

// ---------------------------------------------------------------- crashes found
//
// Both found by `shell_normalizer` (fuzz runs of 2026-11-30, about 217 s and 1.17M execs in
// all: 29 crash artifacts, each of one of these two kinds); the inputs are minimised forms.

/// Fixed (src/normalize/shell/grammar.rs, `Redirect::is_stream_noise`): a redirection whose target is empty (because the
/// next token is another redirection, `> >&1`) is written back before the following word
/// once the noise redirection between them is dropped; re-parsed, that word becomes its
/// target: `> >&1 p` -> `> p` -> `>p`, `make 2> 2>&1 build.log` -> `make 2> build.log`
/// -> `make 2>build.log`. The normalizer's documented idempotence fails, so the two
/// spellings get different family keys. Found as
/// `carGo build &> 2>&1 srrt <  buil/u\x01` (28 of the 29 artifacts).
#[test]
fn shell_redirect_with_empty_target_before_a_word_is_idempotent() {
    check_shell_normalizer(b"> >&1 p");
    check_shell_normalizer(b"make 2> 2>&1 build.log");
}

/// Fixed (src/normalize/shell/grammar.rs, `plain_word`): a quoted `cd` target is written back
/// unquoted when its path form changes, but `plain_word` does not count the shell
/// operators `&`, `|`, `;`, `<`, `>` as special, so the rewritten word splits on
/// re-parse: `cd 'a&b/'` -> `cd a&b` -> `cd a & b`; with cwd `/home/dev/proj`,
/// `cd '/home/dev/proj/a;b' && make` -> `cd a;b && make` -> `cd a; b && make`. Found as
/// `cd 'hp&o/m:/' \r\r\r\r\r\r&:& pyst -q ...` (cwd none).
#[test]
fn shell_cd_target_with_an_operator_character_is_idempotent() {
    check_shell_normalizer(b"cd 'a&b/'");
    check_shell_normalizer(b"cd \"x|y/\"");
    check_shell_normalizer(b"cd '/home/dev/proj/a;b' && make\0/home/dev/proj");
}

/// Fixed (src/normalize/shell/grammar.rs, `render`): a here-document body that no
/// terminator closes holds the rest of the input, so it must be written last; written
/// before the pipelines that followed its operator on the same line, it swallowed them on
/// re-parse, and a second open body added a newline each pass. Found by `shell_normalizer`
/// (fuzz run of 2026-12-01, after here-documents were read as bodies, issue #10).
#[test]
fn shell_open_heredoc_body_is_idempotent() {
    check_shell_normalizer(
        "\n\n\n\n\n\n\n:&<<S<<m>a&kv/ti/a1lp> 111\u{7}\u{7}/cd /.<<&python\n\n\u{b}\nxx<"
            .as_bytes(),
    );
    check_shell_normalizer(b"cat <<E; echo a; echo b\nbody");
    check_shell_normalizer(b"python3 - <<A <<B\nprint(1)\n");
    // A closed body followed by a `&` and a later unclosed quote (fuzz run of 2026-12-01).
    check_shell_normalizer(b": & <<T<<&\nhon1>\nT\n<&\ne >>x >@\">>y");
    check_shell_normalizer(b"cat <<A <<B; echo x\nabody\nA\nbbody");
}

/// Fixed (src/normalize/shell/grammar.rs, `Redirect::render`): a here-document whose
/// delimiter starts with `-` (`cat << -x`) was written `<<-x`, which re-parses as the
/// tab-stripping operator `<<-` with delimiter `x`. Found by `shell_normalizer` (fuzz run
/// of 2026-12-01) as `... <<<t<< -`.
#[test]
fn shell_heredoc_delimiter_starting_with_a_dash_is_idempotent() {
    check_shell_normalizer(b"cat << -x");
    check_shell_normalizer(b"grep a <<<t<< -");
}

//! Acceptance lines of seed 000 (`000_053cae7e53b598d3.txt`), WO-8 "Adaptive Edit Strategy
//! (HarnessBridge-lite: auto-switch edit→rewrite)", replayed by `adaptive_edit`.
//!
//! Genericity (seed 000: "WO-8 keys on file path (tool-neutral)"): the cases use TypeScript,
//! Rust, Python, Go and C files; nothing depends on a tool name or a project.

mod common;

use common::{firings, metric, replay, replay_with};
use hindsight::config::Config;
use hindsight::cost::{cost, Prices};
use hindsight::guards::Effect;
use hindsight::model::tokens_from_chars;
use hindsight::synth::Run;
use serde_json::{json, Value};

const GUARD: &str = "adaptive_edit";

/// An edit guarded by a content hash that the file no longer has.
fn hash_edit(run: &mut Run, path: &str, old: &str) -> (Value, String) {
    let args =
        json!({"path": path, "old_string": old, "new_string": "", "expected_hash": "9f2c41"});
    let id = run.call("file_edit", args.clone());
    let output = "file_edit rejected: hash mismatch (expected_hash 9f2c41, file is 03be7a)";
    run.result(
        &id,
        false,
        output,
        json!({"errorClass": "hash_mismatch", "mutation": false}),
    );
    (args, output.to_string())
}

fn args_chars(args: &Value) -> u64 {
    serde_json::to_string(args).expect("json").len() as u64
}

/// "2 hash-mismatch failures on one file → strategy returns `mode: \"rewrite\"` with the
/// current contents as the base"
#[test]
fn two_hash_mismatches_switch_the_file_to_a_rewrite_from_its_contents() {
    let mut run = Run::new("1780000000000-a", "/w/web", 100);
    run.turn(10)
        .read("src/types.ts", "export interface Config { id: number }\n");
    run.turn(10);
    hash_edit(&mut run, "src/types.ts", "id: number");
    run.turn(10);
    hash_edit(&mut run, "src/types.ts", "id: number");
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].turn, f[0].action.as_str()), (3, "rewrite"));
    assert_eq!(f[0].family.as_deref(), Some("src/types.ts"));
    assert_eq!(f[0].effect, Effect::Advisory);
    assert_eq!(
        f[0].detail.as_deref(),
        Some(
            "2 consecutive edit failures (hash_mismatch); rewrite from current contents; \
             base: read at turn 1"
        )
    );
    assert_eq!(metric(&replay, GUARD, "rewrites"), 1);
}

/// "a success resets the counter" — a failure, a successful edit, a failure: never two in a
/// row, so no rewrite.
#[test]
fn a_success_resets_the_counter() {
    let mut run = Run::new("1780000000000-b", "/w/crate", 100);
    let stale = Err(("old_string_not_found", "old_string not found in src/lib.rs"));
    for _ in 0..3 {
        run.turn(10).edit("src/lib.rs", "fn a()", "fn b()", stale);
        run.turn(10)
            .edit("src/lib.rs", "fn c()", "fn d()", Ok("applied 1 edit"));
    }
    let replay = replay(&run);
    assert!(
        firings(&replay, GUARD).is_empty(),
        "{:#?}",
        firings(&replay, GUARD)
    );
    assert_eq!(metric(&replay, GUARD, "rewrites"), 0);
}

/// "a success resets the counter" — after a rewrite, a successful write of the file resets
/// and re-arms it: two more failures fire a second `rewrite`, not an avoided failure.
#[test]
fn a_write_rearms_the_file() {
    let mut run = Run::new("1780000000000-c", "/w/svc", 100);
    let stale = Err(("old_string_not_found", "old_string not found in handler.go"));
    run.turn(10)
        .edit("handler.go", "return nil", "return err", stale);
    run.turn(10)
        .edit("handler.go", "return nil", "return err", stale);
    run.turn(10).write(
        "handler.go",
        "package svc\n\nfunc H() error { return nil }\n",
    );
    run.turn(10)
        .edit("handler.go", "return x", "return y", stale);
    run.turn(10)
        .edit("handler.go", "return x", "return y", stale);
    let replay = replay(&run);
    let f: Vec<(u32, &str)> = firings(&replay, GUARD)
        .iter()
        .map(|f| (f.turn, f.action.as_str()))
        .collect();
    assert_eq!(f, vec![(2, "rewrite"), (5, "rewrite")]);
    assert_eq!(metric(&replay, GUARD, "avoided_failures"), 0);
}

/// "unit tests cover mismatch, not-found, and reset" — not-found: an edit of a file that
/// does not exist, twice; nothing was ever read, so the base is unknown.
#[test]
fn two_not_found_failures_switch_with_an_unknown_base() {
    let mut run = Run::new("1780000000000-d", "/w/py", 100);
    let missing = Err(("not_found", "file does not exist: app/models.py"));
    run.turn(10)
        .edit("app/models.py", "class A:", "class B:", missing);
    run.turn(10)
        .edit("app/models.py", "class A:", "class B:", missing);
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].turn, 2);
    assert_eq!(
        f[0].detail.as_deref(),
        Some(
            "2 consecutive edit failures (not_found); rewrite from current contents; \
             base: unknown"
        )
    );
}

/// "unit tests cover mismatch, not-found, and reset" — the classes of one streak are listed;
/// a failure that is not an edit failure (a permission error) neither counts nor resets.
#[test]
fn mixed_edit_failures_count_and_other_failures_do_not() {
    let mut run = Run::new("1780000000000-e", "/w/fw", 100);
    run.turn(10).edit(
        "src/pal.c",
        "int kp;",
        "float kp;",
        Err(("tool_failed", "permission denied: src/pal.c")),
    );
    run.turn(10).edit(
        "src/pal.c",
        "int kp;",
        "float kp;",
        Err(("tool_failed", "permission denied: src/pal.c")),
    );
    assert!(firings(&replay(&run), GUARD).is_empty());
    run.turn(10).edit(
        "src/pal.c",
        "int kp;",
        "float kp;",
        Err(("old_string_not_found", "old_string not found")),
    );
    hash_edit(run.turn(10), "src/pal.c", "int kp;");
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].turn, 4);
    assert_eq!(
        f[0].detail.as_deref(),
        Some(
            "2 consecutive edit failures (hash_mismatch, stale_edit); rewrite from current \
             contents; base: unknown"
        )
    );
}

/// Counters are per file: one failure on each of two files is no streak.
#[test]
fn failures_on_different_files_do_not_add_up() {
    let mut run = Run::new("1780000000000-f", "/w/web", 100);
    let stale = Err(("old_string_not_found", "old_string not found"));
    run.turn(10).edit("src/a.ts", "x", "y", stale);
    run.turn(10).edit("src/b.ts", "x", "y", stale);
    run.turn(10).edit("src/a.ts", "x", "y", Ok("applied"));
    run.turn(10).edit("src/b.ts", "x", "y", Ok("applied"));
    assert!(firings(&replay(&run), GUARD).is_empty());
}

/// Seed 000, WO-8 "Root-cause tie": "`file_edit expected_hash=…` rejected and retried
/// **8× identically**". The rewrite fires at the second failure; the six after it would
/// not have happened, and their calls and results are suppressed from every later request.
#[test]
fn eight_identical_hash_mismatches_fire_once_then_suppress_six() {
    let mut run = Run::new("1780000000000-g", "/w/fw", 50_000);
    let mut last = (Value::Null, String::new());
    for _ in 0..8 {
        last = hash_edit(run.turn(10), "include/types.h", "struct Cfg { int id; };");
    }
    run.turn(10)
        .shell("make", true, "gcc -c src/pal.c\n0 errors");
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    let actions: Vec<(u32, &str)> = f.iter().map(|f| (f.turn, f.action.as_str())).collect();
    let mut want = vec![(2, "rewrite")];
    want.extend((3..=8).map(|t| (t, "avoided_edit_failure")));
    assert_eq!(actions, want);
    let (args, output) = last;
    let per_call = tokens_from_chars(output.chars().count() as u64 + args_chars(&args));
    assert_eq!(f[1].effect, Effect::Suppress { tokens: per_call });
    assert_eq!(
        f[1].detail.as_deref(),
        Some("edit failure 3 (hash_mismatch) after rewrite at turn 2")
    );
    assert_eq!(metric(&replay, GUARD, "avoided_failures"), 6);
    assert_eq!(metric(&replay, GUARD, "tokens_suppressed"), 6 * per_call);
    // A result suppressed at turn T is saved at each later turn up to the last (9): no
    // compaction ends the window and every turn costs more than the reductions.
    let saved: u64 = (3..=8u64).map(|t| (9 - t) * per_call).sum();
    assert_eq!(
        cost(&replay, &Prices::none()).by_guard["adaptive_edit"].tokens,
        saved
    );
}

/// The threshold is a setting: at 3, two failures are not enough.
#[test]
fn switch_threshold_is_a_setting() {
    let mut run = Run::new("1780000000000-h", "/w/web", 100);
    for _ in 0..3 {
        hash_edit(run.turn(10), "src/types.ts", "id: number");
    }
    let mut config = Config::default();
    config
        .set("adaptive_edit.switch_threshold=3")
        .expect("setting");
    let replay = replay_with(&run, &config);
    let turns: Vec<u32> = firings(&replay, GUARD).iter().map(|f| f.turn).collect();
    assert_eq!(turns, vec![3]);
}

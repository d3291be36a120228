//! Acceptance lines of seed 001 (`001_d7c440e7b9955800.txt`) WO-TD-01 and seed 002
//! (`002_527d73931b42d8b2.txt`) fix 3 "Hard-Block Stale Edit Loops", replayed by
//! `stale_edit_recovery`. Every case uses generic projects (XML, TypeScript, Python, Rust).

mod common;

use common::{firings, metric, replay, replay_with};
use hindsight::config::Config;
use hindsight::cost::{cost, Prices};
use hindsight::guards::{Effect, Firing};
use hindsight::model::tokens_from_chars;
use hindsight::synth::Run;
use serde_json::{json, Value};

const GUARD: &str = "stale_edit_recovery";
const STALE: &str = "old_string_not_found";

fn stale_edit(run: &mut Run, path: &str, old: &str) {
    let out = format!("old_string not found in {path}");
    run.turn(100).edit(path, old, "x", Err((STALE, &out)));
}

/// "Two `old_string not found` failures produce a `read_authoritative_target` directive."
#[test]
fn two_stale_failures_produce_the_directive() {
    let cases = [
        ("/w/pipeline", "config/stages.xml", "<stage id=\"lint\">"),
        ("/w/web", "src/api/client.ts", "const retries = 3;"),
        ("/w/etl", "etl/load.py", "def load(rows):"),
        ("/w/cli", "src/main.rs", "fn main() {"),
    ];
    for (cwd, path, old) in cases {
        let mut run = Run::new("1780000000000-a", cwd, 1000);
        stale_edit(&mut run, path, old);
        assert!(
            firings(&replay(&run), GUARD).is_empty(),
            "{path}: one failure is quiet"
        );
        stale_edit(&mut run, path, old);
        let replay = replay(&run);
        let fired = firings(&replay, GUARD);
        assert_eq!(fired.len(), 1, "{path}");
        assert_eq!(fired[0].action, "read_authoritative_target");
        assert_eq!(fired[0].turn, 2);
        assert_eq!(fired[0].effect, Effect::Advisory);
        assert_eq!(
            fired[0].family.as_deref(),
            Some(format!("file_edit:{path}:{old}").as_str())
        );
        assert!(fired[0]
            .detail
            .as_deref()
            .unwrap_or_default()
            .starts_with(&format!("2 stale edit failures; read {path} once")));
        assert_eq!(metric(&replay, GUARD, "directives"), 1);
        assert_eq!(metric(&replay, GUARD, "open_at_end"), 1);
    }
}

/// "A `file_read` of the target satisfies the directive."
#[test]
fn a_read_of_the_target_satisfies_the_directive() {
    let mut run = Run::new("1780000000000-b", "/w/pipeline", 1000);
    stale_edit(&mut run, "config/stages.xml", "<stage id=\"lint\">");
    stale_edit(&mut run, "config/stages.xml", "<stage id=\"lint\">");
    // A read of another file satisfies nothing.
    run.turn(100).read("config/other.xml", "<stages/>");
    run.turn(100)
        .read("/w/pipeline/config/stages.xml", "<stage id=\"check\">");
    // The count restarted at the read: one more stale failure is not blocked.
    stale_edit(&mut run, "config/stages.xml", "<stage id=\"lint\">");
    let replay = replay(&run);
    let actions: Vec<&str> = firings(&replay, GUARD)
        .iter()
        .map(|f| f.action.as_str())
        .collect();
    assert_eq!(actions, ["read_authoritative_target"]);
    assert_eq!(metric(&replay, GUARD, "satisfied"), 1);
    assert_eq!(metric(&replay, GUARD, "blocked_retries"), 0);
    assert_eq!(metric(&replay, GUARD, "open_at_end"), 0);
}

/// "A different edit target in the same file is not blocked just because an old edit
/// target failed."
#[test]
fn a_different_target_in_the_same_file_is_not_blocked() {
    let path = "src/api/client.ts";
    let mut run = Run::new("1780000000000-c", "/w/web", 1000);
    stale_edit(&mut run, path, "const retries = 3;");
    stale_edit(&mut run, path, "const retries = 3;");
    run.turn(100).edit(
        path,
        "const timeout = 10;",
        "const timeout = 30;",
        Ok("applied"),
    );
    stale_edit(&mut run, path, "const retries = 3;");
    let replay = replay(&run);
    let fired = firings(&replay, GUARD);
    let blocks: Vec<&&Firing> = fired
        .iter()
        .filter(|f| f.action == "block_stale_retry")
        .collect();
    assert_eq!(blocks.len(), 1, "only the stale family is blocked");
    assert_eq!(blocks[0].turn, 4);
    assert_eq!(
        blocks[0].family.as_deref(),
        Some("file_edit:src/api/client.ts:const retries = 3;")
    );
    assert_eq!(metric(&replay, GUARD, "blocked_retries"), 1);
}

/// Seed 002 fix 3: "A repeated `old_string not found` edit is blocked after repeated
/// failures."
#[test]
fn a_repeated_stale_edit_is_blocked_and_priced() {
    let (path, old) = ("etl/load.py", "def load(rows):");
    let mut run = Run::new("1780000000000-d", "/w/etl", 1000);
    for _ in 0..3 {
        stale_edit(&mut run, path, old);
    }
    run.turn(100).shell("pytest -q", true, "12 passed in 0.4s");
    run.turn(100).shell("git status", true, "clean");
    let replay = replay(&run);
    let block = firings(&replay, GUARD)
        .into_iter()
        .find(|f| f.action == "block_stale_retry")
        .expect("the third retry is blocked");
    assert_eq!(block.turn, 3);
    let args = json!({"path": path, "old_string": old, "new_string": "x"});
    let output = format!("old_string not found in {path}");
    let chars = serde_json::to_string(&args).expect("json").len() + output.chars().count();
    let tokens = tokens_from_chars(chars as u64);
    assert_eq!(tokens, 27); // 70 characters of arguments + 35 of output
    assert_eq!(block.effect, Effect::Suppress { tokens });
    // Not carried at the two later requests.
    assert_eq!(
        cost(&replay, &Prices::none()).by_guard[GUARD].tokens,
        2 * tokens
    );
}

/// Seed 002 fix 3: "The block tells the model to read the current target once, verify if
/// already satisfied, or choose a different patch."
#[test]
fn the_block_gives_the_recovery_instruction() {
    let mut run = Run::new("1780000000000-e", "/w/cli", 1000);
    for _ in 0..3 {
        stale_edit(&mut run, "src/main.rs", "fn main() {");
    }
    let replay = replay(&run);
    let block = firings(&replay, GUARD)
        .into_iter()
        .find(|f| f.action == "block_stale_retry")
        .expect("blocked");
    assert_eq!(
        block.detail.as_deref(),
        Some(
            "blocked before dispatch: read the current src/main.rs once, verify if already \
             satisfied, or choose a different patch"
        )
    );
}

/// While the directive is open, the recorded harness demanding something else (the
/// incident's `update_todos`) is counted; a retry the harness refused anyway is not priced.
#[test]
fn other_recorded_directives_and_refused_retries() {
    let (path, old) = ("config/stages.xml", "<stage id=\"lint\">");
    let mut run = Run::new("1780000000000-f", "/w/pipeline", 1000);
    stale_edit(&mut run, path, old);
    stale_edit(&mut run, path, old);
    run.directive(
        "update_todos",
        "file_edit:config/stages.xml",
        "forced_replan",
    );
    run.turn(100);
    let id = run.call(
        "file_edit",
        json!({"path": path, "old_string": old, "new_string": "x"}),
    );
    run.result(
        &id,
        false,
        "[FOCUS] blocked",
        json!({"errorClass": "focus_blocked"}),
    );
    let replay = replay(&run);
    assert_eq!(metric(&replay, GUARD, "recorded_other_directives"), 1);
    let block = firings(&replay, GUARD)
        .into_iter()
        .find(|f| f.action == "block_stale_retry")
        .expect("blocked");
    assert_eq!(block.effect, Effect::Advisory);
    assert!(block
        .detail
        .as_deref()
        .unwrap_or_default()
        .ends_with("(recorded harness refused it too: not priced)"));
}

/// The threshold is a setting: at 3 the second failure is quiet.
#[test]
fn threshold_is_configurable() {
    let mut config = Config::default();
    config
        .set("stale_edit_recovery.threshold=3")
        .expect("setting");
    let mut run = Run::new("1780000000000-g", "/w/web", 1000);
    stale_edit(&mut run, "src/a.ts", "let a = 1;");
    stale_edit(&mut run, "src/a.ts", "let a = 1;");
    let quiet = replay_with(&run, &config);
    assert!(firings(&quiet, GUARD).is_empty());
    stale_edit(&mut run, "src/a.ts", "let a = 1;");
    let fired = replay_with(&run, &config);
    assert_eq!(firings(&fired, GUARD)[0].turn, 3);
    let defaults: Value =
        serde_json::to_value(hindsight::guards::stale_edit_recovery::Settings::default())
            .expect("json");
    assert_eq!(defaults, json!({"threshold": 2}));
}

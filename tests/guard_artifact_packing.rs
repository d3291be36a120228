//! Acceptance lines of seed 003 (`003_fb784470a3878970.txt`), "Work unit 3 — finish
//! toolkit artifact integration", replayed by `artifact_packing` over tool results of every
//! kind: the "Behavior contract" items 1, 2 and 4, with the source baseline's limits
//! ("packs output with `maxLines: 400` and `maxBytes: 8 * 1024`"). Ecosystems: npm/jest,
//! cargo, pytest, go, make, generic shell.

mod common;

use common::{firings, metric, replay, replay_with};
use hindsight::config::Config;
use hindsight::cost::{cost, Prices};
use hindsight::guards::Effect;
use hindsight::model::tokens_from_chars;
use hindsight::synth::Run;
use serde_json::json;

const GUARD: &str = "artifact_packing";

/// A jest run of `lines` lines, each `PASS src/mNNN.test.js (12 ms)` (29 characters + `\n`).
fn jest_log(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("PASS src/m{i:03}.test.js (12 ms)\n"))
        .collect()
}

/// "Small output remains inline." — including output exactly at both limits.
#[test]
fn small_output_remains_inline() {
    let mut run = Run::new("1780000000000-a", "/w/py", 100);
    run.turn(10).shell("pytest -q", true, "12 passed in 0.31s");
    run.turn(10).shell("seq 1 400", true, &"x\n".repeat(400));
    run.turn(10)
        .shell("head -c 8192 big.txt", true, &"y".repeat(8192));
    let replay = replay(&run);
    assert!(
        firings(&replay, GUARD).is_empty(),
        "{:#?}",
        firings(&replay, GUARD)
    );
    assert_eq!(metric(&replay, GUARD, "packed"), 0);
}

/// "Oversized output stores exact stdout/stderr/header content in the session artifact
/// store and returns only an 8 KiB/400-line preview plus a resolvable `artifact_retrieve`
/// handle." — by lines: 500 jest lines keep 400 inline.
#[test]
fn oversized_output_by_lines_keeps_a_400_line_preview() {
    let mut run = Run::new("1780000000000-b", "/w/web", 50_000);
    let log = jest_log(500);
    assert_eq!(log.len(), 500 * 30);
    run.turn(10).shell("npx jest --verbose", true, &log);
    run.turn(10)
        .shell("git status --short", true, " M src/a.js\n");
    run.turn(10)
        .shell("git diff --stat", true, " 1 file changed\n");
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].turn, f[0].action.as_str()), (1, "pack"));
    assert_eq!(f[0].family.as_deref(), Some("shell:npx jest --verbose"));
    // 400 lines are 12,000 bytes: over 8 KiB, so the preview stops at 8192 bytes.
    let tokens = tokens_from_chars(500 * 30 - 8192 - 64);
    assert_eq!(f[0].effect, Effect::Suppress { tokens });
    assert_eq!(
        f[0].detail.as_deref(),
        Some("15000 bytes, 500 lines (limits 8192 bytes, 400 lines); preview 8192 chars + handle")
    );
    assert_eq!(metric(&replay, GUARD, "packed"), 1);
    assert_eq!(metric(&replay, GUARD, "chars_packed"), 500 * 30 - 8192);
    // Carried by turns 2 and 3.
    assert_eq!(
        cost(&replay, &Prices::none()).by_guard["artifact_packing"].tokens,
        2 * tokens
    );
}

/// The same contract by lines alone: 600 short lines fit in 8 KiB, so the preview is the
/// first 400 lines.
#[test]
fn many_short_lines_keep_the_first_400() {
    let mut run = Run::new("1780000000000-c", "/w/svc", 100);
    let listing: String = (0..600).map(|i| format!("f{i:03}.go\n")).collect();
    run.turn(10).shell("ls -1 internal", true, &listing);
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    assert_eq!(f.len(), 1);
    assert_eq!(
        f[0].effect,
        Effect::Suppress {
            tokens: tokens_from_chars(600 * 8 - 400 * 8 - 64)
        }
    );
}

/// "Failure state remains visible in the preview and structural details after packing." —
/// a failing pytest log: the preview keeps its head, where the failure header is.
#[test]
fn failure_state_remains_visible_in_the_preview() {
    let mut run = Run::new("1780000000000-d", "/w/py", 100);
    let mut log = String::from("FAILED tests/test_api.py::test_login - AssertionError\n");
    for i in 0..450 {
        log.push_str(&format!("tests/test_api.py:{i}: in test_login\n"));
    }
    log.push_str("FAILED tests/test_api.py::test_logout - KeyError\n");
    log.push_str("===== 2 failed, 40 passed in 1.20s =====\n");
    run.turn(10).shell("pytest", false, &log);
    run.turn(10).shell("pytest -x", false, "1 failed");
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    assert_eq!(f.len(), 1);
    let detail = f[0].detail.as_deref().expect("detail");
    assert!(
        detail.ends_with(
            "; failed output; preview keeps the failure header (error count 1 of 4 in the preview)"
        ),
        "{detail}"
    );
}

/// Bytes, not characters: 3000 `✓` are 9000 bytes, over 8 KiB, though only 3000
/// characters; the preview keeps the 2730 whole characters that fit in 8192 bytes.
#[test]
fn limits_are_in_utf8_bytes() {
    let mut run = Run::new("1780000000000-e", "/w/crate", 100);
    run.turn(10)
        .shell("cargo test -- --list", true, &"✓".repeat(3000));
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    assert_eq!(f.len(), 1);
    assert_eq!(
        f[0].effect,
        Effect::Suppress {
            tokens: tokens_from_chars(3000 - 2730 - 64)
        }
    );
}

/// A result recorded with `outputChars` only: characters are a lower bound on bytes, so
/// 40,000 characters are over 8 KiB; the preview is taken as 8192 characters.
#[test]
fn size_only_results_are_packed_on_their_recorded_size() {
    let mut run = Run::new("1780000000000-f", "/w/fw", 50_000);
    let id = run.turn(10).call("shell", json!({"command": "make V=1"}));
    let turn = run.turn;
    run.events
        .push(json!({"type": "tool_result", "turn": turn, "callId": id,
        "success": true, "outputChars": 40000}));
    run.turn(10).shell("make install", true, "installed");
    // A compaction at turn 3 ends the window: only turn 2 carried the packed result.
    run.turn(10);
    run.events
        .push(json!({"type": "compaction", "turn": 3, "beforeTokens": 9000, "afterTokens": 2000}));
    run.turn(10).shell("make check", true, "0 errors");
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    assert_eq!(f.len(), 1);
    let tokens = tokens_from_chars(40_000 - 8192 - 64);
    assert_eq!(f[0].effect, Effect::Suppress { tokens });
    assert_eq!(
        f[0].detail.as_deref(),
        Some(
            "40000 chars, no output text recorded (limit 8192 bytes); preview 8192 chars + handle"
        )
    );
    assert_eq!(
        cost(&replay, &Prices::none()).by_guard["artifact_packing"].tokens,
        tokens
    );
}

/// The limits are settings.
#[test]
fn limits_are_settings() {
    let mut run = Run::new("1780000000000-g", "/w/py", 100);
    run.turn(10).shell("pytest -q", true, &jest_log(100));
    assert!(firings(&replay(&run), GUARD).is_empty());
    let mut config = Config::default();
    config
        .set("artifact_packing.max_lines=50")
        .expect("setting");
    let replay = replay_with(&run, &config);
    assert_eq!(firings(&replay, GUARD).len(), 1);
    assert_eq!(metric(&replay, GUARD, "chars_packed"), 50 * 30);
}

//! Acceptance lines of seed 003 (`003_fb784470a3878970.txt`), "Work unit 4 — add an
//! observe-only expected-utility tool selector", replayed by `tool_selector`.
//!
//! The pure-math lines (posterior, normalization, positive-best, tie/entropy shortlist,
//! evidence threshold, deterministic override, `no_tool`) are unit tests beside the math in
//! `src/guards/tool_selector.rs`; these are the replay-level lines. Tools are the names the
//! run recorded; two shell tools of one run stand for two tools of the `execute` intent.

mod common;

use common::{firings, metric_value, replay, replay_with};
use hindsight::config::Config;
use hindsight::cost::{cost, Prices};
use hindsight::guards::Effect;
use hindsight::synth::Run;
use serde_json::{json, Value};

const GUARD: &str = "tool_selector";

/// One turn whose call runs `command` through the shell tool named `tool`.
fn shell_turn(run: &mut Run, tool: &str, command: &str, ok: bool, output: &str) {
    run.turn(100);
    let id = run.call(tool, json!({ "command": command }));
    let extra = if ok {
        json!({})
    } else {
        json!({"errorClass": "tool_failed"})
    };
    run.result(&id, ok, output, extra);
}

/// `exec` succeeds three times, then the model switches to `bash`, which fails twice.
fn flaky_tool_run() -> Run {
    let mut run = Run::new("1780000000000-ts", "/w/crate", 1000);
    for _ in 0..3 {
        shell_turn(&mut run, "exec", "cargo build", true, "Finished dev");
    }
    for _ in 0..2 {
        shell_turn(&mut run, "bash", "cargo build", false, "sandbox: denied");
    }
    run
}

/// "Record comparison between recommendation/shortlist/abstention and the actual first tool
/// outcome." A measured tool recommended, another used, and the used one failed: fires.
#[test]
fn recommendation_differs_and_used_tool_fails_fires() {
    let replay = replay(&flaky_tool_run());
    let fired = firings(&replay, GUARD);
    let turns: Vec<u32> = fired.iter().map(|f| f.turn).collect();
    assert_eq!(turns, [4, 5]);
    for f in &fired {
        assert_eq!(f.action, "recommend_other");
        assert_eq!(f.family.as_deref(), Some("shell:cargo build"));
    }
    // P = 4/5; latency 1200/5000; tokens (7 + 3) / 1000; risk 0.5; context 3/1000.
    assert_eq!(
        fired[0].detail.as_deref(),
        Some("recommended exec (U=0.663), used bash which failed")
    );
    for (key, want) in [
        ("first_tool_calls", json!(5)),
        ("first_tool_successes", json!(3)),
        ("recommendations", json!(4)),
        ("matches", json!(2)),
        ("mismatches", json!(2)),
        ("match_rate_permille", json!(500)),
        ("shortlists", json!(0)),
        ("abstentions", json!(1)),
        ("wrong_tool_failures", json!(2)),
    ] {
        assert_eq!(metric_value(&replay, GUARD, key), want, "{key}");
    }
}

/// "The observation is diagnostics only; no hint is injected in this slice."
#[test]
fn observation_is_advisory_and_saves_nothing() {
    let replay = replay(&flaky_tool_run());
    let costs = cost(&replay, &Prices::none());
    let mut seen = 0;
    for (f, saved) in replay.firings.iter().zip(&costs.per_firing) {
        if f.guard == "tool_selector" {
            seen += 1;
            assert_eq!(f.effect, Effect::Advisory);
            assert_eq!(*saved, 0);
        }
    }
    assert_eq!(seen, 2);
    assert_eq!(
        costs.by_guard.get("tool_selector").map_or(0, |s| s.tokens),
        0
    );
}

/// "Metrics: first-tool success, wrong-tool/failure count, recommendation match rate,
/// shortlist count, abstention count, and latency/token summaries are computable from the
/// store." The store's keys are (intent class, tool); latency and tokens are EWMAs.
#[test]
fn store_summaries_per_intent_and_tool() {
    let stats = metric_value(&replay(&flaky_tool_run()), GUARD, "stats");
    assert_eq!(
        stats["execute:exec"],
        json!({"samples": 3, "failures": 0, "alpha": 4, "beta": 1, "success_permille": 800,
            "latency_ewma_ms": 1200, "latency_deviation_ewma_ms": 0,
            "input_token_estimate_ewma": 7, "output_token_estimate_ewma": 3})
    );
    assert_eq!(stats["execute:bash"]["failures"], json!(2));
    assert_eq!(stats["execute:bash"]["beta"], json!(3));
    assert_eq!(stats.as_object().map(|m| m.len()), Some(2));
}

/// "successful/failed calls update outcomes": the used tool is the recommended one, so a
/// failure of it is quiet; a differing tool that succeeds is quiet too.
#[test]
fn following_the_recommendation_is_quiet() {
    let mut run = Run::new("1780000000000-tq", "/w/web", 1000);
    for _ in 0..2 {
        shell_turn(&mut run, "bash", "npm test", false, "spawn EACCES");
    }
    for _ in 0..4 {
        shell_turn(&mut run, "exec", "npm test", true, "Tests: 4 passed");
    }
    shell_turn(&mut run, "exec", "npm test", false, "Tests: 1 failed");
    let replay = replay(&run);
    assert!(firings(&replay, GUARD).is_empty());
    // t1 abstains (nothing measured); t2 recommends bash (its only measured tool) and
    // matches; t3 recommends bash, exec is used and succeeds; t4-t5 abstain (exec has fewer
    // than 3 samples and is not alone); t6-t7 recommend exec and match.
    for (key, want) in [
        ("first_tool_calls", json!(7)),
        ("first_tool_successes", json!(4)),
        ("recommendations", json!(4)),
        ("matches", json!(3)),
        ("mismatches", json!(1)),
        ("match_rate_permille", json!(750)),
        ("abstentions", json!(3)),
        ("wrong_tool_failures", json!(0)),
    ] {
        assert_eq!(metric_value(&replay, GUARD, key), want, "{key}");
    }
}

/// "Recommend only when ... it has at least three samples or a deterministic match": with
/// `min_evidence` raised, the lone measured tool (turn 4) is still a deterministic match,
/// but once a second tool is measured (turn 5) three samples are no longer enough.
#[test]
fn min_evidence_is_a_setting() {
    let mut config = Config::default();
    config.set("tool_selector.min_evidence=4").expect("setting");
    let replay = replay_with(&flaky_tool_run(), &config);
    let turns: Vec<u32> = firings(&replay, GUARD).iter().map(|f| f.turn).collect();
    assert_eq!(turns, [4]);
    assert_eq!(metric_value(&replay, GUARD, "abstentions"), json!(2));
}

/// "High entropy or a sub-margin tie emits a top-three shortlist." Two equally good tools of
/// one intent tie; the used one is in the shortlist.
#[test]
fn tied_tools_shortlist() {
    let mut run = Run::new("1780000000000-tt", "/w/svc", 1000);
    for tool in ["bash", "exec", "bash", "exec"] {
        shell_turn(&mut run, tool, "go test ./...", true, "ok");
    }
    let replay = replay(&run);
    // t2: bash is the lone measured tool, so it is recommended; exec is used and succeeds.
    assert!(firings(&replay, GUARD).is_empty());
    assert_eq!(metric_value(&replay, GUARD, "recommendations"), json!(1));
    assert_eq!(metric_value(&replay, GUARD, "shortlists"), json!(2));
    assert_eq!(metric_value(&replay, GUARD, "shortlist_hits"), json!(2));
    // With no recommendation there is no match rate.
    let mut single = Run::new("1780000000000-tu", "/w/svc", 1000);
    shell_turn(&mut single, "bash", "go vet ./...", true, "");
    assert_eq!(
        metric_value(
            &replay_with(&single, &Config::default()),
            GUARD,
            "match_rate_permille"
        ),
        Value::Null
    );
}

/// Only a turn's first call is judged, and only the main agent's calls; a later call of the
/// turn still updates the store.
#[test]
fn first_call_of_main_agent_only() {
    let mut run = Run::new("1780000000000-tf", "/w/lib", 1000);
    for _ in 0..3 {
        shell_turn(&mut run, "exec", "make", true, "built");
    }
    run.turn(100);
    let id = run.call("exec", json!({"command": "make check"}));
    run.result(&id, true, "ok", json!({}));
    let id = run.call("bash", json!({"command": "make"}));
    run.result(&id, false, "denied", json!({}));
    run.turn(100);
    for (i, ok) in [(90, false), (91, false)] {
        run.events.push(
            json!({"type": "tool_call", "turn": run.turn, "agent": "helper",
            "callId": format!("sub_{i}"), "tool": "bash", "args": {"command": "make"}}),
        );
        run.events.push(
            json!({"type": "tool_result", "turn": run.turn, "agent": "helper",
            "callId": format!("sub_{i}"), "success": ok, "output": "denied"}),
        );
    }
    let replay = replay(&run);
    assert!(firings(&replay, GUARD).is_empty());
    assert_eq!(metric_value(&replay, GUARD, "first_tool_calls"), json!(4));
    let stats = metric_value(&replay, GUARD, "stats");
    assert_eq!(stats["execute:exec"]["samples"], json!(4));
    assert_eq!(stats["execute:bash"]["samples"], json!(1));
}

/// Edits are the `write` intent: a patch tool that keeps failing beside an edit tool that
/// works is the same comparison, with the write risk cost.
#[test]
fn write_intent_compares_edit_tools() {
    let mut run = Run::new("1780000000000-tw", "/w/py", 1000);
    for i in 0..3 {
        run.turn(100)
            .edit("app/core.py", &format!("x = {i}"), "x = 1", Ok("applied"));
    }
    run.turn(100);
    let id = run.call(
        "str_replace",
        json!({"path": "app/core.py", "old_str": "y = 2", "new_str": "y = 3"}),
    );
    run.result(
        &id,
        false,
        "no match for old_str",
        json!({"errorClass": "old_string_not_found"}),
    );
    let replay = replay(&run);
    let fired = firings(&replay, GUARD);
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].turn, 4);
    let detail = fired[0].detail.as_deref().unwrap_or_default();
    assert!(
        detail.starts_with("recommended file_edit (U=0."),
        "{detail}"
    );
    assert!(
        detail.ends_with("used str_replace which failed"),
        "{detail}"
    );
}

/// Intent classes come from the call's kind and argument shape, never its name: a call of
/// no known kind that names a URL is `retrieve`, any other such call is `other`.
#[test]
fn intent_classes_from_kind_and_shape() {
    let mut run = Run::new("1780000000000-ti", "/w/docs", 1000);
    run.turn(100);
    let id = run.call("web_fetch", json!({"url": "https://example.com/changelog"}));
    run.result(&id, true, "v2.1: fixes", json!({}));
    let id = run.call("memory_lookup", json!({"query": "release notes"}));
    run.result(&id, true, "none", json!({}));
    run.read("README.md", "# docs");
    run.shell("ls docs", true, "index.md");
    let stats = metric_value(&replay(&run), GUARD, "stats");
    let keys: Vec<&String> = stats
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "execute:shell",
            "other:memory_lookup",
            "read:file_read",
            "retrieve:web_fetch"
        ]
    );
}

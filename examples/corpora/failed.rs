//! Failed runs beyond the seeds' incidents, one story per kind of failure, across
//! ecosystems, so every guard of the catalogue has a failed run to fire on (issue #4).

use super::project;
use hindsight::synth::Run;
use serde_json::json;
use std::path::Path;

/// A long integration log: `failed` of `total` suites failing, about `lines` lines.
fn integration_log(failed: usize, lines: usize) -> String {
    let mut out = String::from("make[1]: Entering directory '/home/dev/ingest/tests'\n");
    for i in 0..lines {
        out.push_str(&format!(
            "[{:04}] ingest::pipeline stage={} batch={} rows=4096 ok\n",
            i,
            i % 7,
            i / 7
        ));
    }
    for i in 0..failed {
        out.push_str(&format!(
            "FAIL ingest_it::scenario_{i:02} (timeout after 30s)\n"
        ));
    }
    out.push_str(&format!(
        "{failed} failed, {} passed\nmake: *** [Makefile:41: test-integration] Error 1\n",
        40 - failed
    ));
    out
}

/// pi integration sweep (work units 3 and 4): oversized logs carried in full, and a
/// disabled tool tried again and again while another tool of the same intent works.
pub fn toolkit_logs(root: &Path) {
    let mut r = Run::new("1783300000000-tk1ogs", "/home/dev/ingest", 6_000);
    r.turn(200)
        .shell("git status --short", true, " M src/pipeline.rs\n");
    r.turn(200).shell(
        "make build",
        true,
        "cargo build --release\n    Finished `release` profile\n",
    );
    r.turn(200).shell(
        "make lint",
        true,
        "cargo clippy -- -D warnings\n    Finished `dev` profile\n",
    );
    let disabled = "bash tool is disabled in this profile; use `shell`";
    for _ in 0..2 {
        r.turn(200);
        let id = r.call("bash", json!({"command": "make test-integration"}));
        r.result(&id, false, disabled, json!({"errorClass": "tool_disabled"}));
    }
    r.turn(2_600).shell(
        "make test-integration 2>&1",
        false,
        &integration_log(3, 420),
    );
    r.turn(2_600).shell(
        "make test-integration 2>&1 | tail -200",
        false,
        &integration_log(3, 200),
    );
    r.turn(2_600)
        .shell("make test-integration", false, &integration_log(3, 420));
    r.turn(2_600)
        .shell("make test-integration", false, &integration_log(3, 420));
    let expected = json!({"story": "pi sweep WU-3/WU-4: 20 KB logs carried in full; a disabled tool retried while `shell` works", "runs": {r.id.clone(): [
        {"guard": "tool_selector", "action": "recommend_other", "turn": 4},
        {"guard": "artifact_packing", "action": "pack", "turn": 6},
        {"guard": "convergence_breaker", "action": "stalled", "turn": 6, "family": "shell:make test-integration"},
        {"guard": "convergence_breaker", "action": "abandon", "turn": 8, "family": "shell:make test-integration"},
        {"guard": "dedup_gate", "action": "block_duplicate", "turn": 9}
    ]}});
    project(root, "toolkit-logs", &[r], None, expected);
}

fn eslint(problems: usize) -> String {
    let mut out = String::from("\n/home/dev/dashboard/src/charts/Line.tsx\n");
    for i in 0..problems {
        out.push_str(&format!("  {}:5  error  'series{i}' is assigned a value but never used  @typescript-eslint/no-unused-vars\n", 10 + i));
    }
    out.push_str(&format!(
        "\n✖ {problems} problems ({problems} errors, 0 warnings)\n"
    ));
    out
}

/// Seed 002 fix 2: the loop intervention tells the model to call `task_complete`, and it
/// does, over a failing check (fixes 16 and 17 hold that completion).
pub fn loop_wording(root: &Path) {
    let mut r = Run::new("1783310000000-l00pwd", "/home/dev/dashboard", 8_000);
    r.turn(300).todos(json!([{"id": "1", "status": "in_progress", "content": "Make the chart components lint-clean", "verifyCommand": "npm run lint"}]));
    for variant in [
        "npm run lint",
        "npm run lint 2>&1",
        "npm run lint | tail -30",
        "npm run lint",
    ] {
        r.turn(300).shell(variant, false, &eslint(4));
    }
    r.directive_text(
        "task_complete",
        "shell:npm run lint",
        "loop_intervention",
        "Loop detected: you repeated `npm run lint` 4 times. Call task_complete with whatever is available now.",
    );
    r.turn(300).todos(json!([{"id": "1", "status": "completed", "content": "Make the chart components lint-clean", "verifyCommand": "npm run lint"}]));
    r.complete("completed", "Charts cleaned up.");
    let expected = json!({"story": "seed 002 fix 2: a loop intervention that asks for task_complete; the completion is held", "runs": {r.id.clone(): [
        {"guard": "loop_intervention_wording", "action": "completion_wording", "turn": 5},
        {"guard": "verified_completion", "action": "hold_completion", "turn": 6},
        {"guard": "todo_truth", "action": "downgrade_to_blocked", "turn": 6},
        {"guard": "convergence_breaker", "action": "stalled", "turn": 4, "family": "shell:npm run lint"}
    ]}});
    project(root, "loop-wording", &[r], None, expected);
}

/// Seed 000 WO-1/WO-2 in TypeScript: three full-file writes define one session type three
/// ways; the type checker reports the drift turns later.
pub fn coherence_ts(root: &Path) {
    let mut r = Run::new("1783320000000-c0hts0", "/home/dev/portal", 9_000);
    r.turn(400).write("src/types/session.d.ts", "export interface SessionState {\n  userId: string;\n  expiresAt: number;\n}\nexport declare function refresh(s: SessionState): Promise<SessionState>;\n");
    r.turn(400).write("src/auth/session.ts", "export interface SessionState {\n  user: { id: string };\n  expires: Date;\n}\nexport function refresh(s: SessionState, force: boolean) { return Promise.resolve(s); }\n");
    r.turn(400).write("src/api/client.ts", "export interface SessionState {\n  token: string;\n}\nexport function attach(s: SessionState) { return s.token; }\n");
    r.turn(400).write("src/pages/Account.tsx", "import { SessionState } from '../auth/session';\nexport function Account({ s }: { s: SessionState }) { return s.userId; }\n");
    let tsc = "src/pages/Account.tsx(2,62): error TS2339: Property 'userId' does not exist on type 'SessionState'.\nsrc/api/client.ts(4,50): error TS2339: Property 'token' does not exist on type 'SessionState'.\n\nFound 2 errors in 2 files.\n";
    r.turn(400).shell("npx tsc --noEmit", false, tsc);
    r.turn(400).edit(
        "src/pages/Account.tsx",
        "s.userId",
        "s.user.id",
        Ok("applied 1 edit"),
    );
    r.turn(400).shell("npx tsc --noEmit 2>&1 | head -40", false, "src/api/client.ts(4,50): error TS2339: Property 'token' does not exist on type 'SessionState'.\n\nFound 1 error in src/api/client.ts:4\n");
    let expected = json!({"story": "seed 000 WO-1/WO-2 in TS: SessionState defined three ways; tsc reports the drift later", "runs": {r.id.clone(): [
        {"guard": "coherence_gate", "action": "regenerate", "turn": 2},
        {"guard": "boundary_verifier", "action": "boundary_block", "turn": 4},
        {"guard": "ledger_finalization", "action": "finalize_incomplete_verification", "turn": 7}
    ]}});
    project(root, "coherence-ts", &[r], None, expected);
}

/// Seed 001 WO-TD-01/02 in Python: a stale edit loop answered with `run_verification`
/// directives the model keeps ignoring.
pub fn ignored_directives(root: &Path) {
    let mut r = Run::new("1783330000000-ign0rd", "/home/dev/billing", 7_000);
    let model = "billing/models.py";
    r.turn(300).read(
        model,
        "class Invoice:\n    def total(self):\n        return sum(self.lines)\n",
    );
    r.turn(300).edit(
        model,
        "return sum(self.lines)",
        "return sum(l.amount for l in self.lines)",
        Ok("applied 1 edit"),
    );
    let stale = Err((
        "old_string_not_found",
        "old_string not found in billing/models.py",
    ));
    for _ in 0..5 {
        r.turn(300).edit(
            model,
            "return sum(self.lines)",
            "return round(sum(self.lines), 2)",
            stale,
        );
        r.directive(
            "run_verification",
            &format!("file_edit:{model}"),
            "forced_replan",
        );
    }
    let expected = json!({"story": "seed 001 WO-TD-01/02 in Python: stale retries while verification directives are ignored", "runs": {r.id.clone(): [
        {"guard": "stale_edit_recovery", "action": "read_authoritative_target", "turn": 4},
        {"guard": "directive_escalation", "action": "terminal_incomplete", "turn": 6},
        {"guard": "ledger_finalization", "action": "finalize_incomplete_verification", "turn": 7}
    ]}});
    project(root, "ignored-directives", &[r], None, expected);
}

/// Seed 000's failure signature ("duplicate-call dedup events"): the same failing test
/// command rerun unchanged, with nothing edited in between.
pub fn flaky_rerun(root: &Path) {
    let mut r = Run::new("1783340000000-r3run0", "/home/dev/gateway", 5_000);
    let out = "--- FAIL: TestRateLimit (0.02s)\n    limiter_test.go:41: got 11 requests, want 10\nFAIL\tgateway/limiter\t0.03s\nFAIL\n";
    for _ in 0..6 {
        r.turn(250).shell("go test ./limiter/...", false, out);
    }
    let expected = json!({"story": "an identical failing command rerun six times with no change in between", "runs": {r.id.clone(): [
        {"guard": "dedup_gate", "action": "block_duplicate", "turn": 2},
        {"guard": "convergence_breaker", "action": "abandon", "turn": 5, "family": "shell:go test ./limiter/..."},
        {"guard": "diagnostic_delta", "action": "abandon", "turn": 5, "family": "shell:go test ./limiter/..."}
    ]}});
    project(root, "flaky-rerun", &[r], None, expected);
}

/// A delegated sub-agent loops on one failing test while the main agent carries on; the
/// sub-agent's loop is its own trajectory (reported, not a cut of the whole run).
pub fn subagent_loop(root: &Path) {
    let mut r = Run::new("1783350000000-subag0", "/home/dev/ledger", 4_000);
    r.turn(200).edit(
        "src/posting.rs",
        "amount: i64",
        "amount: Decimal",
        Ok("applied 1 edit"),
    );
    let failure = "error[E0277]: the trait bound `Decimal: Hash` is not satisfied\n --> src/posting.rs:12:10\nerror: could not compile `ledger` (lib) due to 1 previous error\n";
    for variant in [
        "cargo test -p ledger",
        "cargo test -p ledger 2>&1",
        "cargo test -p ledger | tail -40",
        "cargo test -p ledger",
        "cargo test -p ledger 2>&1",
    ] {
        r.turn(200).agent_shell("tester", variant, false, failure);
    }
    r.turn(200).shell("cargo build -p ledger", false, failure);
    let expected = json!({"story": "a sub-agent's test loop: its abandon is reported for the sub-agent only", "runs": {r.id.clone(): [
        {"guard": "convergence_breaker", "action": "abandon", "turn": 6, "family": "shell:cargo test -p ledger"},
        {"guard": "ledger_finalization", "action": "finalize_incomplete_verification", "turn": 7}
    ]}});
    project(root, "subagent-loop", &[r], None, expected);
}

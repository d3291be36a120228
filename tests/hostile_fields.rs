//! A field of the wrong JSON type is a located problem in every format (issue #32, H;
//! docs/FORMAT.md, *Values*): never read as if it were absent. Each recording here is one
//! of the project's own fixtures with one field changed, written to a temporary directory:
//! read leniently it still loads, with exactly that problem (file, line where the format
//! has lines, field, `expected …, found …`); under `--strict` reading it fails naming the
//! field.

mod common;

use hindsight::ingest::formats::{import, InputFormat};
use hindsight::ingest::{LoadedRun, ParseError, Policy, ProblemKind};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/formats")
        .join(rel)
}

/// A copy of the document fixture `rel`, changed by `edit`, in a temporary directory.
fn document(rel: &str, edit: impl FnOnce(&mut Value)) -> (TempDir, PathBuf) {
    let mut doc: Value =
        serde_json::from_slice(&fs::read(fixture(rel)).expect("fixture")).expect("fixture is JSON");
    edit(&mut doc);
    let dir = tempfile::tempdir().expect("tempdir");
    let name = Path::new(rel).file_name().expect("file name");
    let path = dir.path().join(name);
    fs::write(&path, serde_json::to_vec_pretty(&doc).expect("json")).expect("write");
    (dir, path)
}

/// A copy of the JSONL fixture `rel` whose line `line` (1-based) is changed by `edit`.
fn session(rel: &str, line: usize, edit: impl FnOnce(&mut Value)) -> (TempDir, PathBuf) {
    let text = fs::read_to_string(fixture(rel)).expect("fixture");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut record: Value = serde_json::from_str(&lines[line - 1]).expect("line is JSON");
    edit(&mut record);
    lines[line - 1] = record.to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir
        .path()
        .join(Path::new(rel).file_name().expect("file name"));
    fs::write(&path, lines.join("\n") + "\n").expect("write");
    (dir, path)
}

/// The problem `path` must have: `field` of the wrong type, at `line` if the format has
/// lines.
fn wrong_type(
    path: &Path,
    line: Option<u64>,
    field: &str,
    expected: &'static str,
    found: &str,
) -> ParseError {
    ParseError {
        path: path.to_string_lossy().into_owned(),
        line,
        field: Some(field.to_string()),
        kind: ProblemKind::WrongType {
            expected,
            found: found.to_string(),
        },
    }
}

/// Read leniently, `path` loads with exactly `problem`, counted; read strictly, it fails
/// with it.
fn assert_one_problem(path: &Path, format: InputFormat, problem: ParseError) -> LoadedRun {
    let run = import(path, "t", format, Policy::Lenient).expect("lenient read loads");
    assert_eq!(
        run.problems.listed,
        vec![problem.clone()],
        "problems listed"
    );
    assert_eq!(run.problems.count, 1, "problems counted");
    assert!(!run.events.is_empty(), "the rest of the run is read");
    let err = import(path, "t", format, Policy::Strict).expect_err("strict read fails");
    assert_eq!(err, problem, "strict error");
    assert!(
        err.to_string().contains(&format!(
            "field `{}`",
            problem.field.as_deref().unwrap_or("")
        )),
        "the message names the field: {err}"
    );
    run
}

// ------------------------------------------------------------------------- Claude Code

const SHOP: &str = "claude_code/-path-to-shop/3f2a9c4e-7b1d-4e8a-9c3f-5d6e7a8b9c01.jsonl";

#[test]
fn claude_code_cwd_of_the_wrong_type() {
    let (_dir, path) = session(SHOP, 1, |line| line["cwd"] = json!(5));
    let problem = wrong_type(&path, Some(1), "cwd", "string", "integer");
    let run = assert_one_problem(&path, InputFormat::ClaudeCode, problem);
    // The session starts in the next line's directory, not in none.
    let start = run.events.iter().find_map(|e| match &e.kind {
        hindsight::model::EventKind::SessionStart { cwd } => Some(cwd.clone()),
        _ => None,
    });
    assert_eq!(start, Some(Some("/path/to/shop".to_string())));
}

#[test]
fn claude_code_tool_result_content_of_the_wrong_type() {
    // Line 4 is the user line answering the first call with one `tool_result` item.
    let (_dir, path) = session(SHOP, 4, |line| {
        let item = &mut line["message"]["content"][0];
        assert_eq!(item["type"], "tool_result");
        item["content"] = json!(5);
    });
    let field = "message.content[0].content";
    let problem = wrong_type(&path, Some(4), field, "string or array", "integer");
    assert_one_problem(&path, InputFormat::ClaudeCode, problem);
}

// ---------------------------------------------------------------------- mini-swe-agent

const INVENTORY: &str = "mini_swe_agent/acme__inventory-21.traj.json";

#[test]
fn mini_swe_agent_message_content_of_the_wrong_type() {
    // Message 3 is the `tool` message answering the first call.
    let (_dir, path) = document(INVENTORY, |doc| {
        assert_eq!(doc["messages"][3]["role"], "tool");
        doc["messages"][3]["content"] = json!(5);
    });
    let problem = wrong_type(
        &path,
        None,
        "messages[3].content",
        "string or array",
        "integer",
    );
    assert_one_problem(&path, InputFormat::MiniSweAgent, problem);
}

#[test]
fn mini_swe_agent_exit_status_of_the_wrong_type() {
    let (_dir, path) = document(INVENTORY, |doc| doc["info"]["exit_status"] = json!(5));
    let problem = wrong_type(&path, None, "info.exit_status", "string", "integer");
    assert_one_problem(&path, InputFormat::MiniSweAgent, problem);
}

/// The same problem through the binary: counted in the run's `input.skipped`, listed in
/// its `input.problems`, and `--strict` exits 2 naming it.
#[test]
fn a_wrong_type_is_counted_in_the_report_and_stops_strict_replay() {
    let (dir, _path) = document(INVENTORY, |doc| doc["info"]["exit_status"] = json!(5));
    let run = |extra: &[&str]| {
        let mut args = vec!["replay", ".", "--format", "json"];
        args.extend(extra);
        common::watched::run_watched(dir.path(), &args, false)
    };
    let lenient = run(&[]);
    lenient.expect_code(0, "lenient replay");
    let report = lenient.json();
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "{report}");
    let message =
        "acme__inventory-21.traj.json: field `info.exit_status`: expected string, found integer";
    assert_eq!(runs[0]["input"]["skipped"], 1, "{report}");
    assert_eq!(runs[0]["input"]["problems"], json!([message]), "{report}");
    let strict = run(&["--strict"]);
    strict.expect_code(2, "strict replay");
    assert!(strict.stderr.contains(message), "{}", strict.stderr);
}

// --------------------------------------------------------------------------- SWE-agent

#[test]
fn swe_agent_history_of_the_wrong_type() {
    let (_dir, path) = document("swe_agent/acme__semver-12.traj", |doc| {
        doc["history"] = json!("x")
    });
    let problem = wrong_type(&path, None, "history", "array", "string");
    assert_one_problem(&path, InputFormat::SweAgent, problem);
}

// --------------------------------------------------------------------------- OpenHands

const STUCK: &str = "openhands/stuck-stale-edit.json";

#[test]
fn openhands_extras_of_the_wrong_type() {
    // Event 3 is the `run` observation of the `run` action 2.
    let (_dir, path) = document(STUCK, |doc| {
        assert_eq!(doc[3]["observation"], "run");
        doc[3]["extras"] = json!("x");
    });
    let problem = wrong_type(&path, None, "[3].extras", "object", "string");
    assert_one_problem(&path, InputFormat::Openhands, problem);
}

#[test]
fn openhands_cause_of_the_wrong_type() {
    let (_dir, path) = document(STUCK, |doc| {
        assert_eq!(doc[3]["cause"], 2);
        doc[3]["cause"] = json!("x");
    });
    let problem = wrong_type(&path, None, "[3].cause", "integer", "string");
    assert_one_problem(&path, InputFormat::Openhands, problem);
}

#[test]
fn openhands_id_of_the_wrong_type() {
    let (_dir, path) = document(STUCK, |doc| {
        assert_eq!(doc[2]["action"], "run");
        doc[2]["id"] = json!("x");
    });
    let problem = wrong_type(&path, None, "[2].id", "integer", "string");
    assert_one_problem(&path, InputFormat::Openhands, problem);
}

// ------------------------------------------------------------------ next door (issue #32, H)

/// One fixture with one field of the wrong type, and the problem it must be.
struct Case {
    what: &'static str,
    format: InputFormat,
    /// The fixture changed: a document, or a JSONL file and the line changed.
    fixture: &'static str,
    line: Option<usize>,
    edit: fn(&mut Value),
    field: &'static str,
    expected: &'static str,
    found: &'static str,
}

/// Other fields the importers read, of the wrong type: each is a located problem, counted,
/// and the rest of the run is read.
#[test]
fn other_fields_of_the_wrong_type() {
    use InputFormat::{ClaudeCode, MiniSweAgent, Openhands, SweAgent};
    const SEMVER: &str = "swe_agent/acme__semver-12.traj";
    let cases = [
        Case {
            what: "a Claude Code response id",
            format: ClaudeCode,
            fixture: SHOP,
            line: Some(3),
            edit: |l| l["message"]["id"] = json!(5),
            field: "message.id",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Claude Code line's uuid",
            format: ClaudeCode,
            fixture: SHOP,
            line: Some(1),
            edit: |l| l["uuid"] = json!(5),
            field: "uuid",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Claude Code text item",
            format: ClaudeCode,
            fixture: SHOP,
            line: Some(2),
            edit: |l| l["message"]["content"][0]["text"] = json!(["x"]),
            field: "message.content[0].text",
            expected: "string",
            found: "array",
        },
        Case {
            what: "Claude Code's isCompactSummary",
            format: ClaudeCode,
            fixture: SHOP,
            line: Some(1),
            edit: |l| l["isCompactSummary"] = json!("yes"),
            field: "isCompactSummary",
            expected: "boolean",
            found: "string",
        },
        Case {
            what: "a mini-swe-agent role (was: missing)",
            format: MiniSweAgent,
            fixture: INVENTORY,
            line: None,
            edit: |d| d["messages"][2]["role"] = json!(5),
            field: "messages[2].role",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a mini-swe-agent return code",
            format: MiniSweAgent,
            fixture: INVENTORY,
            line: None,
            edit: |d| d["messages"][3]["extra"]["returncode"] = json!("0"),
            field: "messages[3].extra.returncode",
            expected: "integer",
            found: "string",
        },
        Case {
            what: "a mini-swe-agent tool_call_id",
            format: MiniSweAgent,
            fixture: INVENTORY,
            line: None,
            edit: |d| d["messages"][3]["tool_call_id"] = json!(5),
            field: "messages[3].tool_call_id",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a mini-swe-agent tool name",
            format: MiniSweAgent,
            fixture: INVENTORY,
            line: None,
            edit: |d| d["messages"][2]["tool_calls"][0]["function"]["name"] = json!(5),
            field: "messages[2].tool_calls[0].function.name",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "mini-swe-agent's working directory",
            format: MiniSweAgent,
            fixture: INVENTORY,
            line: None,
            edit: |d| d["info"]["config"]["environment"]["cwd"] = json!(5),
            field: "info.config.environment.cwd",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a mini-swe-agent exit message's status",
            format: MiniSweAgent,
            fixture: INVENTORY,
            line: None,
            edit: |d| d["messages"][13]["extra"]["exit_status"] = json!(5),
            field: "messages[13].extra.exit_status",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "SWE-agent's exit status",
            format: SweAgent,
            fixture: SEMVER,
            line: None,
            edit: |d| d["info"]["exit_status"] = json!(5),
            field: "info.exit_status",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "SWE-agent's model_stats",
            format: SweAgent,
            fixture: SEMVER,
            line: None,
            edit: |d| d["info"]["model_stats"] = json!("x"),
            field: "info.model_stats",
            expected: "object",
            found: "string",
        },
        Case {
            what: "a SWE-agent history role",
            format: SweAgent,
            fixture: SEMVER,
            line: None,
            edit: |d| d["history"][2]["role"] = json!(5),
            field: "history[2].role",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "SWE-agent's replay_config",
            format: SweAgent,
            fixture: SEMVER,
            line: None,
            edit: |d| d["replay_config"] = json!(5),
            field: "replay_config",
            expected: "string or object",
            found: "integer",
        },
        Case {
            what: "an OpenHands exit code",
            format: Openhands,
            fixture: STUCK,
            line: None,
            edit: |d| d[3]["extras"]["metadata"]["exit_code"] = json!("0"),
            field: "[3].extras.metadata.exit_code",
            expected: "integer",
            found: "string",
        },
        Case {
            what: "an OpenHands success flag",
            format: Openhands,
            fixture: STUCK,
            line: None,
            edit: |d| d[3]["success"] = json!("true"),
            field: "[3].success",
            expected: "boolean",
            found: "string",
        },
        Case {
            what: "an OpenHands tool_call_id",
            format: Openhands,
            fixture: STUCK,
            line: None,
            edit: |d| d[3]["tool_call_metadata"]["tool_call_id"] = json!(5),
            field: "[3].tool_call_metadata.tool_call_id",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an OpenHands agent state",
            format: Openhands,
            fixture: STUCK,
            line: None,
            edit: |d| d[20]["extras"]["agent_state"] = json!(5),
            field: "[20].extras.agent_state",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an OpenHands editor command",
            format: Openhands,
            fixture: STUCK,
            line: None,
            edit: |d| d[6]["args"]["command"] = json!(5),
            field: "[6].args.command",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an evaluation's error",
            format: Openhands,
            fixture: "openhands/healthy-eval-output.json",
            line: None,
            edit: |d| d["error"] = json!(5),
            field: "error",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an evaluation's token usages",
            format: Openhands,
            fixture: "openhands/healthy-eval-output.json",
            line: None,
            edit: |d| d["metrics"]["token_usages"] = json!("x"),
            field: "metrics.token_usages",
            expected: "array",
            found: "string",
        },
    ];
    each_case_is_one_problem(cases);
}

/// An OpenHands wrapper whose `history` is no array is that problem, not a missing history
/// (nor a `trajectory` looked for instead).
#[test]
fn an_openhands_history_of_the_wrong_type_is_not_missing() {
    let (_dir, path) = document("openhands/healthy-eval-output.json", |d| {
        d["history"] = json!("x")
    });
    let problem = wrong_type(&path, None, "history", "array of events", "string");
    let run = import(&path, "t", InputFormat::Openhands, Policy::Lenient).expect("lenient");
    assert_eq!(run.problems.listed, vec![problem.clone()]);
    let err = import(&path, "t", InputFormat::Openhands, Policy::Strict).expect_err("strict");
    assert_eq!(err, problem);
}

// ------------------------------------------- pi, Codex, Gemini CLI, ATIF, OpenCode

const CODEX: &str =
    "codex/2025/03/10/rollout-2025-03-10T09-00-00-0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a51.jsonl";
const GEMINI: &str = "gemini_cli/chats/session-2026-01-05T10-00-5e0c7a21.json";
const GEMINI_LINES: &str = "gemini_cli/chats/session-2026-01-06T09-00-9a8b7c6d.jsonl";
const ATIF: &str = "atif/claude-code-fix.json";
const OPENCODE_RUN: &str = "opencode/run.jsonl";
const PI: &str = "pi/2025-03-04T10-15-00-000Z_6c1e2f0a-4b7d-4e59-9a3c-2d8f1b7e5a10.jsonl";

/// The same audit for the importers that came after (issue #32, H, next door): a field of
/// the recording's structure of the wrong type is a located problem, as the importer's
/// other bad fields are (a pi line is skipped).
#[test]
fn other_importers_fields_of_the_wrong_type() {
    use InputFormat::*;
    let cases = [
        Case {
            what: "a pi entry's message",
            format: Pi,
            fixture: PI,
            line: Some(6),
            edit: |l| l["message"] = json!(5),
            field: "message",
            expected: "object",
            found: "integer",
        },
        Case {
            what: "a pi entry's timestamp",
            format: Pi,
            fixture: PI,
            line: Some(6),
            edit: |l| l["timestamp"] = json!(5),
            field: "timestamp",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a pi entry's parentId",
            format: Pi,
            fixture: PI,
            line: Some(6),
            edit: |l| l["parentId"] = json!(5),
            field: "parentId",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a pi tool result's content item",
            format: Pi,
            fixture: PI,
            line: Some(6),
            edit: |l| l["message"]["content"][0] = json!(5),
            field: "message.content[0]",
            expected: "object",
            found: "integer",
        },
        Case {
            what: "a pi content item's type",
            format: Pi,
            fixture: PI,
            line: Some(6),
            edit: |l| l["message"]["content"][0]["type"] = json!(5),
            field: "message.content[0].type",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a pi user message's text",
            format: Pi,
            fixture: PI,
            line: Some(4),
            edit: |l| l["message"]["content"][0]["text"] = json!(5),
            field: "message.content[0].text",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a pi tool result's toolName",
            format: Pi,
            fixture: PI,
            line: Some(6),
            edit: |l| l["message"]["toolName"] = json!(5),
            field: "message.toolName",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a pi assistant content item",
            format: Pi,
            fixture: PI,
            line: Some(5),
            edit: |l| l["message"]["content"][0] = json!("x"),
            field: "message.content[0]",
            expected: "object",
            found: "string",
        },
        Case {
            what: "a Codex line's timestamp",
            format: Codex,
            fixture: CODEX,
            line: Some(2),
            edit: |l| l["timestamp"] = json!(5),
            field: "timestamp",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Codex session's cwd",
            format: Codex,
            fixture: CODEX,
            line: Some(1),
            edit: |l| l["payload"]["cwd"] = json!(5),
            field: "payload.cwd",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Codex session's model",
            format: Codex,
            fixture: CODEX,
            line: Some(1),
            edit: |l| l["payload"]["model"] = json!(5),
            field: "payload.model",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Codex session's forked_from_id",
            format: Codex,
            fixture: CODEX,
            line: Some(1),
            edit: |l| l["payload"]["forked_from_id"] = json!(5),
            field: "payload.forked_from_id",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Codex sub-agent's thread_spawn",
            format: Codex,
            fixture: CODEX,
            line: Some(1),
            edit: |l| l["payload"]["source"] = json!({"subagent": {"thread_spawn": "x"}}),
            field: "payload.source.subagent.thread_spawn",
            expected: "object",
            found: "string",
        },
        Case {
            what: "a Codex turn context's model",
            format: Codex,
            fixture: CODEX,
            line: Some(5),
            edit: |l| l["payload"]["model"] = json!(5),
            field: "payload.model",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Codex message's role",
            format: Codex,
            fixture: CODEX,
            line: Some(3),
            edit: |l| l["payload"]["role"] = json!(5),
            field: "payload.role",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Codex message's content",
            format: Codex,
            fixture: CODEX,
            line: Some(3),
            edit: |l| l["payload"]["content"] = json!(5),
            field: "payload.content",
            expected: "string or array",
            found: "integer",
        },
        Case {
            what: "a Codex message's content item",
            format: Codex,
            fixture: CODEX,
            line: Some(3),
            edit: |l| l["payload"]["content"][0] = json!("x"),
            field: "payload.content[0]",
            expected: "object",
            found: "string",
        },
        Case {
            what: "a Codex content item's type",
            format: Codex,
            fixture: CODEX,
            line: Some(3),
            edit: |l| l["payload"]["content"][0]["type"] = json!(5),
            field: "payload.content[0].type",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Codex content item's text",
            format: Codex,
            fixture: CODEX,
            line: Some(3),
            edit: |l| l["payload"]["content"][0]["text"] = json!(5),
            field: "payload.content[0].text",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Codex output's exit code",
            format: Codex,
            fixture: CODEX,
            line: Some(11),
            edit: |l| {
                l["payload"]["output"] = json!({"output": "x", "metadata": {"exit_code": "1"}})
            },
            field: "payload.output.metadata.exit_code",
            expected: "integer",
            found: "string",
        },
        Case {
            what: "a Codex output's metadata",
            format: Codex,
            fixture: CODEX,
            line: Some(11),
            edit: |l| l["payload"]["output"] = json!({"output": "x", "metadata": 5}),
            field: "payload.output.metadata",
            expected: "object",
            found: "integer",
        },
        Case {
            what: "a Codex output's success",
            format: Codex,
            fixture: CODEX,
            line: Some(11),
            edit: |l| l["payload"]["output"] = json!({"output": "x", "success": "no"}),
            field: "payload.output.success",
            expected: "boolean",
            found: "string",
        },
        Case {
            what: "a Codex output's text",
            format: Codex,
            fixture: CODEX,
            line: Some(11),
            edit: |l| l["payload"]["output"] = json!({"output": 5}),
            field: "payload.output.output",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Codex output item's text",
            format: Codex,
            fixture: CODEX,
            line: Some(22),
            edit: |l| l["payload"]["output"] = json!([{"type": "input_text", "text": 5}]),
            field: "payload.output[0].text",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Codex output item",
            format: Codex,
            fixture: CODEX,
            line: Some(22),
            edit: |l| l["payload"]["output"] = json!([5]),
            field: "payload.output[0]",
            expected: "object",
            found: "integer",
        },
        Case {
            what: "a Gemini CLI message's type",
            format: GeminiCli,
            fixture: GEMINI,
            line: None,
            edit: |d| d["messages"][0]["type"] = json!(5),
            field: "messages[0].type",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Gemini CLI user content",
            format: GeminiCli,
            fixture: GEMINI,
            line: None,
            edit: |d| d["messages"][0]["content"] = json!(5),
            field: "messages[0].content",
            expected: "string, part or array",
            found: "integer",
        },
        Case {
            what: "a Gemini CLI part's text",
            format: GeminiCli,
            fixture: GEMINI,
            line: None,
            edit: |d| d["messages"][0]["content"][0]["text"] = json!(5),
            field: "messages[0].content[0].text",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Gemini CLI part's mime type",
            format: GeminiCli,
            fixture: GEMINI,
            line: None,
            edit: |d| d["messages"][0]["content"] = json!([{"inlineData": {"mimeType": 5}}]),
            field: "messages[0].content[0].inlineData.mimeType",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Gemini CLI part's inline data",
            format: GeminiCli,
            fixture: GEMINI,
            line: None,
            edit: |d| d["messages"][0]["content"] = json!([{"inlineData": "x"}]),
            field: "messages[0].content[0].inlineData",
            expected: "object",
            found: "string",
        },
        Case {
            what: "a Gemini CLI model message's model",
            format: GeminiCli,
            fixture: GEMINI,
            line: None,
            edit: |d| d["messages"][1]["model"] = json!(5),
            field: "messages[1].model",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Gemini CLI model message's part",
            format: GeminiCli,
            fixture: GEMINI,
            line: None,
            edit: |d| d["messages"][1]["content"] = json!([5]),
            field: "messages[1].content[0]",
            expected: "string, part or array",
            found: "integer",
        },
        Case {
            what: "a Gemini CLI call's status",
            format: GeminiCli,
            fixture: GEMINI,
            line: None,
            edit: |d| d["messages"][3]["toolCalls"][0]["status"] = json!(5),
            field: "messages[3].toolCalls[0].status",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Gemini CLI call's result",
            format: GeminiCli,
            fixture: GEMINI,
            line: None,
            edit: |d| d["messages"][3]["toolCalls"][0]["result"] = json!(5),
            field: "messages[3].toolCalls[0].result",
            expected: "string, part or array",
            found: "integer",
        },
        Case {
            what: "a Gemini CLI record's kind",
            format: GeminiCli,
            fixture: GEMINI,
            line: None,
            edit: |d| d["kind"] = json!(5),
            field: "kind",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "a Gemini CLI JSONL call's status",
            format: GeminiCli,
            fixture: GEMINI_LINES,
            line: Some(6),
            edit: |l| l["toolCalls"][0]["status"] = json!(5),
            field: "toolCalls[0].status",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an ATIF trajectory's agent",
            format: Atif,
            fixture: ATIF,
            line: None,
            edit: |d| d["agent"] = json!("x"),
            field: "agent",
            expected: "object",
            found: "string",
        },
        Case {
            what: "an ATIF agent's name",
            format: Atif,
            fixture: ATIF,
            line: None,
            edit: |d| d["agent"]["name"] = json!(5),
            field: "agent.name",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an ATIF agent's model_name",
            format: Atif,
            fixture: ATIF,
            line: None,
            edit: |d| d["agent"]["model_name"] = json!(5),
            field: "agent.model_name",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an ATIF session_id",
            format: Atif,
            fixture: ATIF,
            line: None,
            edit: |d| d["session_id"] = json!(5),
            field: "session_id",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an ATIF step's message",
            format: Atif,
            fixture: ATIF,
            line: None,
            edit: |d| d["steps"][0]["message"] = json!(5),
            field: "steps[0].message",
            expected: "string or array",
            found: "integer",
        },
        Case {
            what: "an ATIF step's model_name",
            format: Atif,
            fixture: ATIF,
            line: None,
            edit: |d| d["steps"][1]["model_name"] = json!(5),
            field: "steps[1].model_name",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an ATIF result's content",
            format: Atif,
            fixture: ATIF,
            line: None,
            edit: |d| d["steps"][1]["observation"]["results"][0]["content"] = json!(5),
            field: "steps[1].observation.results[0].content",
            expected: "string or array",
            found: "integer",
        },
        Case {
            what: "an ATIF result's extra",
            format: Atif,
            fixture: ATIF,
            line: None,
            edit: |d| d["steps"][1]["observation"]["results"][0]["extra"] = json!("x"),
            field: "steps[1].observation.results[0].extra",
            expected: "object",
            found: "string",
        },
        Case {
            what: "an ATIF result's is_error",
            format: Atif,
            fixture: ATIF,
            line: None,
            edit: |d| {
                d["steps"][1]["observation"]["results"][0]["extra"] = json!({"is_error": "yes"})
            },
            field: "steps[1].observation.results[0].extra.is_error",
            expected: "boolean",
            found: "string",
        },
        Case {
            what: "an OpenCode part's type",
            format: OpenCodeStream,
            fixture: OPENCODE_RUN,
            line: Some(3),
            edit: |l| l["part"]["type"] = json!(5),
            field: "part.type",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an OpenCode user line's parts",
            format: OpenCodeStream,
            fixture: OPENCODE_RUN,
            line: Some(1),
            edit: |l| l["parts"] = json!("x"),
            field: "parts",
            expected: "array",
            found: "string",
        },
        Case {
            what: "an OpenCode user part's text",
            format: OpenCodeStream,
            fixture: OPENCODE_RUN,
            line: Some(1),
            edit: |l| l["parts"][0]["text"] = json!(5),
            field: "parts[0].text",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an OpenCode user part's ignored",
            format: OpenCodeStream,
            fixture: OPENCODE_RUN,
            line: Some(1),
            edit: |l| l["parts"][0]["ignored"] = json!("yes"),
            field: "parts[0].ignored",
            expected: "boolean",
            found: "string",
        },
        Case {
            what: "an OpenCode user part's type",
            format: OpenCodeStream,
            fixture: OPENCODE_RUN,
            line: Some(1),
            edit: |l| l["parts"][0]["type"] = json!(5),
            field: "parts[0].type",
            expected: "string",
            found: "integer",
        },
    ];
    each_case_is_one_problem(cases);
}

/// OpenCode stream parts that are read when their step finishes (text and tool parts): the
/// problem is located at the part's own line; under `--strict` the stop is reported at the
/// line that finished the step (the `step_finish` line after it), with the same field.
/// All these parts are in run.jsonl's first step, which line 5 finishes.
#[test]
fn opencode_stream_parts_read_at_the_step_finish() {
    use InputFormat::*;
    let cases = [
        Case {
            what: "an OpenCode text part's text",
            format: OpenCodeStream,
            fixture: OPENCODE_RUN,
            line: Some(3),
            edit: |l| l["part"]["text"] = json!(5),
            field: "part.text",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an OpenCode tool's metadata",
            format: OpenCodeStream,
            fixture: OPENCODE_RUN,
            line: Some(4),
            edit: |l| l["part"]["state"]["metadata"] = json!("x"),
            field: "part.state.metadata",
            expected: "object",
            found: "string",
        },
        Case {
            what: "an OpenCode tool's exit code",
            format: OpenCodeStream,
            fixture: OPENCODE_RUN,
            line: Some(4),
            edit: |l| l["part"]["state"]["metadata"] = json!({"exit": "1"}),
            field: "part.state.metadata.exit",
            expected: "integer",
            found: "string",
        },
        Case {
            what: "an OpenCode task's child session",
            format: OpenCodeStream,
            fixture: OPENCODE_RUN,
            line: Some(4),
            edit: |l| l["part"]["state"]["metadata"] = json!({"sessionId": 5}),
            field: "part.state.metadata.sessionId",
            expected: "string",
            found: "integer",
        },
        Case {
            what: "an OpenCode tool's output",
            format: OpenCodeStream,
            fixture: OPENCODE_RUN,
            line: Some(4),
            edit: |l| l["part"]["state"]["output"] = json!(5),
            field: "part.state.output",
            expected: "string",
            found: "integer",
        },
    ];
    const FIRST_STEP_FINISH: u64 = 5;
    let mut failed = Vec::new();
    for case in cases {
        let line = case.line.expect("a stream line");
        let (_dir, path) = session(case.fixture, line, case.edit);
        let problem = wrong_type(
            &path,
            Some(line as u64),
            case.field,
            case.expected,
            case.found,
        );
        let check = || {
            let run = import(&path, "t", case.format, Policy::Lenient).expect("lenient");
            assert_eq!(
                run.problems.listed,
                vec![problem.clone()],
                "problems listed"
            );
            let err = import(&path, "t", case.format, Policy::Strict).expect_err("strict");
            let finished = ParseError {
                line: Some(FIRST_STEP_FINISH),
                ..problem.clone()
            };
            assert_eq!(err, finished, "strict error");
        };
        if std::panic::catch_unwind(check).is_err() {
            failed.push(case.what);
        }
    }
    assert!(failed.is_empty(), "failed (see above): {failed:#?}");
}

/// In OpenCode's storage folder, an assistant message's `modelID` or `summary` of the wrong
/// type is a problem located in the message's file, and counts as absent.
#[test]
fn opencode_message_info_of_the_wrong_type() {
    use hindsight::ingest::formats::import_session;
    use hindsight::ingest::Limits;
    let cases: [(&str, Value, &str, &str); 2] = [
        ("modelID", json!(5), "string", "integer"),
        ("summary", json!("yes"), "boolean", "string"),
    ];
    for (key, value, expected, found) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = dir.path().join("storage");
        copy_tree(&fixture("opencode/storage"), &store);
        let file = store.join("message/ses_main/msg_main_002.json");
        let mut info: Value =
            serde_json::from_slice(&fs::read(&file).expect("read")).expect("json");
        info[key] = value;
        fs::write(&file, info.to_string()).expect("write");
        let read = |policy| {
            let limits = Limits::default();
            import_session(
                &store,
                "ses_main",
                "t",
                InputFormat::OpenCode,
                policy,
                &limits,
            )
        };
        let run = read(Policy::Lenient).expect("lenient read loads");
        assert_eq!(run.problems.count, 1, "{key}: {:?}", run.problems.listed);
        let problem = run.problems.listed[0].clone();
        assert!(
            problem.path.ends_with("msg_main_002.json"),
            "{key}: {problem:?}"
        );
        assert_eq!(problem.field.as_deref(), Some(key));
        let kind = ProblemKind::WrongType {
            expected,
            found: found.to_string(),
        };
        assert_eq!(problem.kind, kind);
        assert!(!run.events.is_empty());
        assert_eq!(
            read(Policy::Strict).expect_err("strict read fails"),
            problem
        );
    }
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Each case's recording, its field changed, holds exactly that one located problem
/// (lenient) and stops on it (strict); every failing case is named before the test fails.
fn each_case_is_one_problem<const N: usize>(cases: [Case; N]) {
    let mut failed = Vec::new();
    for case in cases {
        let (_dir, path) = match case.line {
            Some(line) => session(case.fixture, line, case.edit),
            None => document(case.fixture, case.edit),
        };
        let line = case.line.map(|l| l as u64);
        let problem = wrong_type(&path, line, case.field, case.expected, case.found);
        if std::panic::catch_unwind(|| assert_one_problem(&path, case.format, problem)).is_err() {
            failed.push(case.what);
        }
    }
    assert!(failed.is_empty(), "failed (see above): {failed:#?}");
}

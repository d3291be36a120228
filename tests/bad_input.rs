//! Bad input never panics and never silently loses data (issue #2, "Input format"):
//! lenient mode skips and counts with a located message, strict mode stops on it.

use hindsight::ingest::events::{read_events, IngestStats};
use hindsight::ingest::{discover, load_run, Policy, ProblemKind, Problems};
use std::fs;

fn read(text: &[u8]) -> (usize, Problems, IngestStats) {
    let mut problems = Problems::default();
    let mut stats = IngestStats::default();
    let events = read_events(
        text,
        "events.jsonl",
        Policy::Lenient,
        &mut problems,
        &mut stats,
    )
    .expect("lenient");
    (events.len(), problems, stats)
}

fn strict_error(text: &[u8]) -> String {
    let mut problems = Problems::default();
    let mut stats = IngestStats::default();
    read_events(
        text,
        "events.jsonl",
        Policy::Strict,
        &mut problems,
        &mut stats,
    )
    .expect_err("strict fails")
    .to_string()
}

/// Each documented required field, given the wrong type, is named in the message.
#[test]
fn wrong_type_for_every_required_field_is_located() {
    let cases = [
        (
            r#"{"type":1,"turn":1}"#,
            "field `type`: expected string, found integer",
        ),
        (
            r#"{"type":"tool_call","turn":"1","callId":"a","tool":"t"}"#,
            "field `turn`: expected integer",
        ),
        (
            r#"{"type":"tool_call","turn":-1,"callId":"a","tool":"t"}"#,
            "field `turn`: expected a non-negative integer, found -1",
        ),
        (
            r#"{"type":"tool_call","turn":1,"callId":7,"tool":"t"}"#,
            "field `callId`: expected string",
        ),
        (
            r#"{"type":"tool_call","turn":1,"callId":"a","tool":null}"#,
            "field `tool`: required field is missing",
        ),
        (
            r#"{"type":"tool_call","turn":1,"callId":"a","tool":"t","args":[1]}"#,
            "field `args`: expected object, found array",
        ),
        (
            r#"{"type":"tool_result","turn":1,"callId":"a","success":"yes"}"#,
            "field `success`: expected boolean",
        ),
        (
            r#"{"type":"tool_result","turn":1,"callId":"a","success":true,"outputChars":1.5}"#,
            "field `outputChars`",
        ),
        (
            r#"{"type":"tool_result","turn":1,"callId":"a","success":true,"paths":[1]}"#,
            "field `paths[0]`: expected string",
        ),
        (
            r#"{"type":"model_usage","turn":1,"promptTokens":"9","completionTokens":1}"#,
            "field `promptTokens`",
        ),
        (
            r#"{"type":"model_usage","turn":1,"promptTokens":9}"#,
            "field `completionTokens`: required field is missing",
        ),
        (
            r#"{"type":"directive","turn":1,"source":"f"}"#,
            "field `requiredNextAction`",
        ),
        (
            r#"{"type":"compaction","turn":1,"beforeTokens":5,"afterTokens":false}"#,
            "field `afterTokens`",
        ),
        (
            r#"{"type":"todo_write","turn":1,"todos":[{"id":"1","status":3}]}"#,
            "field `todos[0].status`: expected string",
        ),
        (
            r#"{"type":"todo_write","turn":1,"todos":{}}"#,
            "field `todos`: expected array",
        ),
        (
            r#"{"type":"task_complete","turn":1}"#,
            "field `status`: required field is missing",
        ),
        (
            r#"{"type":"tool_call","turn":4294967296,"callId":"a","tool":"t"}"#,
            "field `turn`: 4294967296 is out of range",
        ),
    ];
    for (line, want) in cases {
        let message = strict_error(format!("{line}\n").as_bytes());
        assert!(message.starts_with("events.jsonl:1: "), "{message}");
        assert!(
            message.contains(want),
            "{line}\n  got: {message}\n want: {want}"
        );
        let (events, problems, _) = read(format!("{line}\n").as_bytes());
        assert_eq!((events, problems.count), (0, 1), "{line}");
    }
}

#[test]
fn structural_damage_is_classified() {
    let cases: [(&[u8], ProblemKind); 4] = [
        (b"[1,2]\n", ProblemKind::NotAnObject),
        (
            b"{\"type\":\"session_start\",\"cwd\":\"\xff\"}\n",
            ProblemKind::InvalidUtf8,
        ),
        (
            b"{\"type\":\"model_usage\",\"turn\":1,\"promptTokens\":NaN,\"completionTokens\":1}\n",
            ProblemKind::InvalidJson(String::new()),
        ),
        (
            b"{\"type\":\"model_usage\",\"turn\":1",
            ProblemKind::Truncated,
        ),
    ];
    for (bytes, want) in cases {
        let (_, problems, _) = read(bytes);
        let got = &problems.listed[0].kind;
        assert_eq!(
            std::mem::discriminant(got),
            std::mem::discriminant(&want),
            "{got:?}"
        );
    }
}

#[test]
fn overflowing_and_huge_numbers_do_not_panic() {
    for line in [
        r#"{"type":"model_usage","turn":1,"promptTokens":1e400,"completionTokens":1}"#,
        r#"{"type":"model_usage","turn":1,"promptTokens":18446744073709551616,"completionTokens":1}"#,
        r#"{"type":"model_usage","turn":1,"promptTokens":1e300,"completionTokens":1}"#,
    ] {
        let (events, problems, _) = read(format!("{line}\n").as_bytes());
        assert_eq!(events as u64 + problems.count, 1, "{line}");
    }
}

#[test]
fn deep_nesting_is_refused_not_a_crash() {
    let deep = format!(
        "{{\"type\":\"tool_call\",\"turn\":1,\"callId\":\"a\",\"tool\":\"t\",\"args\":{{\"x\":{}1{}}}}}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let (events, problems, _) = read(deep.as_bytes());
    assert_eq!((events, problems.count), (0, 1));
    let shallow = format!(
        "{{\"type\":\"tool_call\",\"turn\":1,\"callId\":\"a\",\"tool\":\"t\",\"args\":{{\"x\":{}1{}}}}}\n",
        "[".repeat(500),
        "]".repeat(500)
    );
    assert_eq!(read(shallow.as_bytes()).0, 1);
}

#[test]
fn empty_blank_and_long_lines() {
    assert_eq!(read(b"").0, 0);
    assert_eq!(read(b"\n\n   \n").1.count, 0);
    let big = "x".repeat(8 * 1024 * 1024);
    let line = format!("{{\"type\":\"tool_result\",\"turn\":1,\"callId\":\"a\",\"success\":true,\"output\":\"{big}\"}}\r\n");
    let (events, problems, stats) = read(line.as_bytes());
    assert_eq!((events, problems.count), (1, 0));
    assert_eq!(stats.bytes, line.len() as u64);
}

#[test]
fn unknown_types_and_fields_are_counted_not_fatal() {
    let text = b"{\"type\":\"heartbeat\",\"turn\":1}\n{\"type\":\"model_usage\",\"turn\":1,\"promptTokens\":1,\"completionTokens\":1,\"costUsd\":0.1}\n";
    let (events, problems, stats) = read(text);
    assert_eq!((events, problems.count), (2, 0));
    assert_eq!(stats.unknown_types.get("heartbeat"), Some(&1));
    assert_eq!(stats.unknown_fields.get("model_usage.costUsd"), Some(&1));
}

#[test]
fn problems_listing_is_capped_but_counted() {
    let text = "garbage\n".repeat(500);
    let (_, problems, _) = read(text.as_bytes());
    assert_eq!(problems.count, 500);
    assert_eq!(problems.listed.len(), Problems::LISTED);
}

#[test]
fn frames_and_ledgers_with_damage_are_located() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = dir.path().join("p/.omnius/runs/1780000000000-a");
    fs::create_dir_all(run.join("context")).expect("mkdir");
    fs::write(
        run.join("events.jsonl"),
        "{\"type\":\"model_usage\",\"turn\":1,\"promptTokens\":1,\"completionTokens\":1}\n",
    )
    .expect("w");
    fs::write(
        run.join("context/a.json"),
        "{\"turn\":1,\"messages\":[{\"role\":5}]}",
    )
    .expect("w");
    // A frame for a turn that has no events is kept.
    fs::write(
        run.join("context/b.json"),
        "{\"turn\":40,\"agent\":\"main\",\"messages\":[],\"signalToNoise\":null}",
    )
    .expect("w");
    fs::write(
        run.join("completion-ledger.json"),
        "{\"status\":\"finished\"}",
    )
    .expect("w");
    let projects = discover(&[dir.path().to_path_buf()]).expect("discover");
    let loaded = load_run(&projects[0].runs[0], Policy::Lenient).expect("lenient");
    assert_eq!(loaded.frames.len(), 1);
    assert_eq!(loaded.frames[0].turn, 40);
    let messages: Vec<String> = loaded
        .problems
        .listed
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        messages[0]
            .ends_with("context/a.json: field `messages[0].role`: expected string, found integer"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("completion-ledger.json: field `status`: unknown status \"finished\""),
        "{messages:?}"
    );
    assert!(load_run(&projects[0].runs[0], Policy::Strict).is_err());
}

#[test]
fn the_same_project_given_twice_is_replayed_once() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
    let twice = discover(&[
        root.join("healthy-go"),
        root.join("healthy-go/.omnius"),
        root.clone(),
    ])
    .expect("discover");
    let names: Vec<&str> = twice.iter().map(|p| p.name.as_str()).collect();
    let mut unique = names.clone();
    unique.dedup();
    assert_eq!(names, unique);
}

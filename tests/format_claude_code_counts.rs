//! Claude Code figures checked against counts taken in this file from the raw fixture lines
//! (issue #12): turns, calls, failures and recorded tokens per session, calls per sub-agent
//! thread, a response id that comes back after other lines, and duplicate calls judged
//! within a thread only. The counts below read the JSON directly, never through hindsight.

mod common;

use hindsight::config::Config;
use hindsight::ingest::formats::{import, InputFormat};
use hindsight::ingest::{LoadedRun, Policy};
use hindsight::model::EventKind;
use hindsight::replay::ProjectReplayer;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

const ROOT: &str = "tests/fixtures/formats/claude_code";
/// Two `Task` sub-agents run in parallel, with no `agentId`: their lines interleave, both
/// read `src/cart.rs`, and one response of the first is split around the second's lines.
const CART: &str = "-path-to-cart/5b0e7c1a-9d2f-4c3e-8a71-2f4d6b8c0e15.jsonl";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(ROOT).join(name)
}

fn load(path: &Path) -> LoadedRun {
    import(path, "s", InputFormat::ClaudeCode, Policy::Strict).expect("loads strictly")
}

/// Every session log under the fixture folder, by path relative to it.
fn sessions() -> Vec<String> {
    let mut out = Vec::new();
    for project in std::fs::read_dir(fixture(""))
        .expect("fixture folder")
        .flatten()
    {
        for file in std::fs::read_dir(project.path())
            .expect("project")
            .flatten()
        {
            let name = format!(
                "{}/{}",
                project.file_name().to_string_lossy(),
                file.file_name().to_string_lossy()
            );
            out.push(name);
        }
    }
    out.sort();
    assert!(out.len() >= 3, "{out:?}");
    out
}

/// What a session holds, counted from its raw lines.
#[derive(Debug, PartialEq, Eq)]
struct Counts {
    /// Model responses: distinct `message.id`s of assistant lines not written by the
    /// harness (`<synthetic>`).
    turns: usize,
    /// `tool_use` items of those lines.
    calls: usize,
    /// `tool_result` items with `is_error: true`, or answering a `Bash` call with an
    /// `Exit code N` first line, N not 0.
    failures: usize,
    /// Per response, the largest of each usage field over its lines; summed: every
    /// prompt token, and each kind (input, cache write, cache read, output).
    prompt: u64,
    completion: u64,
    by_kind: [u64; 4],
    /// Calls per thread, sorted: `main` first, then each chain of sidechain lines (a
    /// sidechain line whose parent is no sidechain line starts one).
    threads: Vec<usize>,
}

fn counts(path: &Path) -> Counts {
    let text = std::fs::read_to_string(path).expect("read fixture");
    let mut usage: HashMap<String, [u64; 4]> = HashMap::new();
    let (mut calls, mut failures) = (0, 0);
    let mut bash: HashSet<String> = HashSet::new();
    let mut root_of: HashMap<String, String> = HashMap::new();
    let mut per_thread: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).expect("fixture line is JSON");
        let uuid = v["uuid"].as_str().unwrap_or_default().to_string();
        let thread = if v["isSidechain"] == true {
            let parent = v["parentUuid"].as_str().unwrap_or_default();
            let root = root_of.get(parent).cloned().unwrap_or_else(|| uuid.clone());
            root_of.insert(uuid.clone(), root.clone());
            root
        } else {
            // Sorts before every uuid.
            " main".to_string()
        };
        let m = &v["message"];
        match v["type"].as_str() {
            Some("assistant") if m["model"] != "<synthetic>" => {
                let id = m["id"].as_str().unwrap_or(&uuid).to_string();
                let fields = [
                    "input_tokens",
                    "cache_creation_input_tokens",
                    "cache_read_input_tokens",
                    "output_tokens",
                ];
                let seen = usage.entry(id).or_default();
                for (i, key) in fields.iter().enumerate() {
                    seen[i] = seen[i].max(m["usage"][key].as_u64().unwrap_or(0));
                }
                for item in m["content"].as_array().into_iter().flatten() {
                    if item["type"] == "tool_use" {
                        calls += 1;
                        *per_thread.entry(thread.clone()).or_default() += 1;
                        if item["name"] == "Bash" {
                            bash.insert(item["id"].as_str().unwrap_or_default().to_string());
                        }
                    }
                }
            }
            Some("user") => {
                for item in m["content"].as_array().into_iter().flatten() {
                    if item["type"] != "tool_result" {
                        continue;
                    }
                    let output = match &item["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(parts) => parts
                            .iter()
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        _ => String::new(),
                    };
                    let exit = output
                        .trim_start()
                        .lines()
                        .next()
                        .and_then(|l| l.strip_prefix("Exit code "))
                        .and_then(|n| n.trim().parse::<i64>().ok());
                    let id = item["tool_use_id"].as_str().unwrap_or_default();
                    if item["is_error"] == true
                        || (bash.contains(id) && exit.is_some_and(|c| c != 0))
                    {
                        failures += 1;
                    }
                }
            }
            _ => {}
        }
    }
    let mut threads: Vec<usize> = per_thread.values().copied().collect();
    threads[1..].sort_unstable();
    Counts {
        turns: usage.len(),
        calls,
        failures,
        prompt: usage.values().map(|u| u[0] + u[1] + u[2]).sum(),
        completion: usage.values().map(|u| u[3]).sum(),
        by_kind: [0, 1, 2, 3].map(|i| usage.values().map(|u| u[i]).sum()),
        threads,
    }
}

/// The same figures, from what hindsight imported.
fn imported(run: &LoadedRun) -> Counts {
    let (mut turns, mut calls, mut failures, mut prompt, mut completion) = (0, 0, 0, 0, 0);
    let mut by_kind = [0u64; 4];
    let mut per_agent: BTreeMap<String, usize> = BTreeMap::new();
    for event in &run.events {
        match &event.kind {
            EventKind::ModelRequest(request) => {
                turns += 1;
                let usage = request.usage.unwrap_or_default();
                prompt += usage.prompt();
                completion += usage.output;
                let kinds = [
                    usage.input,
                    usage.cache_write,
                    usage.cache_read,
                    usage.output,
                ];
                for (sum, n) in by_kind.iter_mut().zip(kinds) {
                    *sum += n;
                }
            }
            EventKind::ToolCall(_) => {
                calls += 1;
                let agent = match event.at.agent.as_str() {
                    "main" => " main".to_string(),
                    other => other.to_string(),
                };
                *per_agent.entry(agent).or_default() += 1;
            }
            EventKind::ToolResult(r) if !r.success => failures += 1,
            _ => {}
        }
    }
    let mut threads: Vec<usize> = per_agent.values().copied().collect();
    threads[1..].sort_unstable();
    Counts {
        turns,
        calls,
        failures,
        prompt,
        completion,
        by_kind,
        threads,
    }
}

#[test]
fn every_session_matches_the_counts_of_its_raw_lines() {
    for name in sessions() {
        let path = fixture(&name);
        let expected = counts(&path);
        assert_eq!(imported(&load(&path)), expected, "{name}");
        assert!(expected.turns > 0 && expected.calls > 0, "{name}");
    }
    // The cart session: main's 3 calls, then two sub-agents of 2 and 3 calls.
    let cart = counts(&fixture(CART));
    assert_eq!((cart.turns, cart.calls, cart.failures), (10, 8, 2));
    assert_eq!(cart.threads, [3, 2, 3]);
}

#[test]
fn the_report_gives_each_session_the_turns_and_tokens_of_its_raw_lines() {
    let report = common::json_report(&["replay", ROOT, "--format", "json", "--strict"]);
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), sessions().len());
    for run in runs {
        let project = run["project"].as_str().expect("project");
        let file = Path::new(project).join(format!("{}.jsonl", run["run_id"].as_str().unwrap()));
        let expected = counts(&Path::new(env!("CARGO_MANIFEST_DIR")).join(&file));
        assert_eq!(run["turns"], expected.turns, "{}", file.display());
        assert_eq!(
            run["tokens_total"],
            expected.prompt + expected.completion,
            "{}",
            file.display()
        );
    }
}

/// The agent of each call, by call id.
fn agents(run: &LoadedRun) -> BTreeMap<String, String> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(c) => Some((c.call_id.clone(), e.at.agent.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn two_unnamed_sub_agents_are_two_threads_named_by_their_task_calls() {
    let agents = agents(&load(&fixture(CART)));
    for (call, agent) in [
        ("toolu_01CtA1", "main"),
        ("toolu_01CtB1", "main"),
        ("toolu_01CaRd1", "sidechain:toolu_01CtA1"),
        ("toolu_01CaRd2", "sidechain:toolu_01CtA1"),
        ("toolu_01CbRd1", "sidechain:toolu_01CtB1"),
        ("toolu_01CbGr1", "sidechain:toolu_01CtB1"),
        ("toolu_01CbBs1", "sidechain:toolu_01CtB1"),
        ("toolu_01CmRd1", "main"),
    ] {
        assert_eq!(agents[call], agent, "{call}");
    }
}

#[test]
fn a_read_in_one_sub_agent_is_no_duplicate_of_a_read_in_another() {
    let mut replayer =
        ProjectReplayer::new("cart", &Config::default(), Vec::new()).expect("config");
    let replay = replayer.replay(load(&fixture(CART)));
    let blocked: Vec<(&str, Option<&str>)> = replay
        .firings
        .iter()
        .filter(|f| f.guard == "dedup_gate")
        .map(|f| (f.agent.as_str(), f.subject.as_deref()))
        .collect();
    // The second sub-agent read `src/cart.rs` first; the first sub-agent's read of it is
    // its own first read, and only its second read of it repeats a call of its own thread.
    // The main agent's read after both is its own first too.
    assert_eq!(blocked, [("sidechain:toolu_01CtA1", Some("toolu_01CaRd2"))]);
}

/// (turn, agent, prompt, completion) of each usage event.
fn usage(run: &LoadedRun) -> Vec<(u32, String, u64, u64)> {
    run.events
        .iter()
        .filter_map(|e| {
            let usage = e.kind.usage()?;
            Some((e.at.turn, e.at.agent.clone(), usage.prompt(), usage.output))
        })
        .collect()
}

#[test]
fn a_response_id_that_comes_back_after_other_lines_keeps_its_largest_usage() {
    // msg_01SaA1...: its text line (output 9), the other sub-agent's call and result, then
    // its call line (output 61). One request, output 61.
    let run = load(&fixture(CART));
    let first_sub_agent: Vec<_> = usage(&run)
        .into_iter()
        .filter(|u| u.1 == "sidechain:toolu_01CtA1")
        .collect();
    assert_eq!(first_sub_agent.len(), 3);
    assert_eq!((first_sub_agent[0].2, first_sub_agent[0].3), (3 + 1910, 61));
    // Its call stays in its own thread, after the other thread's request.
    let call_turn = run
        .events
        .iter()
        .find(|e| matches!(&e.kind, EventKind::ToolCall(c) if c.call_id == "toolu_01CaRd1"))
        .map(|e| e.at.turn);
    assert!(call_turn > Some(first_sub_agent[0].0));
}

#[test]
fn a_usage_that_grows_on_a_later_line_is_revised_even_without_a_first_usage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let line = |uuid: &str, kind: &str, message: &str| {
        format!(
            r#"{{"type":"{kind}","sessionId":"s","uuid":"{uuid}","cwd":"/w","message":{message}}}"#
        )
    };
    let lines = [
        line("u1", "user", r#"{"role":"user","content":"go"}"#),
        line(
            "a1",
            "assistant",
            r#"{"id":"m1","content":[{"type":"text","text":"first"}]}"#,
        ),
        line("u2", "user", r#"{"role":"user","content":"and?"}"#),
        line(
            "a2",
            "assistant",
            r#"{"id":"m2","content":[],"usage":{"input_tokens":7,"output_tokens":2}}"#,
        ),
        line(
            "a3",
            "assistant",
            r#"{"id":"m1","content":[],"usage":{"input_tokens":5,"output_tokens":4}}"#,
        ),
        line(
            "a4",
            "assistant",
            r#"{"id":"m2","content":[],"usage":{"input_tokens":7,"output_tokens":9}}"#,
        ),
    ];
    std::fs::write(&path, lines.join("\n")).expect("write");
    let run = load(&path);
    let usage = usage(&run);
    assert_eq!(usage, [(1, "main".into(), 5, 4), (2, "main".into(), 7, 9)]);
    let seqs: Vec<u64> = run.events.iter().map(|e| e.at.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
}

#[test]
fn threads_with_no_task_to_name_them_are_numbered_in_order_of_first_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let side = |uuid: &str, parent: &str, extra: &str, message: &str| {
        format!(
            r#"{{"type":"assistant","isSidechain":true,"sessionId":"s","uuid":"{uuid}","parentUuid":{parent},{extra}"cwd":"/w","message":{message}}}"#
        )
    };
    let read = |id: &str| {
        format!(
            r#"{{"id":"m{id}","content":[{{"type":"tool_use","id":"{id}","name":"Read","input":{{"file_path":"/w/a"}}}}]}}"#
        )
    };
    let lines = [
        // A thread whose parent is not in the file, one with none, one named by its line.
        side("s1", r#""gone""#, "", &read("t1")),
        side("s2", "null", "", &read("t2")),
        side("s3", r#""s1""#, "", &read("t3")),
        side("s4", "null", r#""agentId":"a1b2c3","#, &read("t4")),
        side("s5", r#""s2""#, "", &read("t5")),
    ];
    std::fs::write(&path, lines.join("\n")).expect("write");
    let agents = agents(&load(&path));
    let expected = [
        ("t1", "sidechain-1"),
        ("t2", "sidechain-2"),
        ("t3", "sidechain-1"),
        ("t4", "sidechain:a1b2c3"),
        ("t5", "sidechain-2"),
    ];
    for (call, agent) in expected {
        assert_eq!(agents[call], agent, "{call}");
    }
}

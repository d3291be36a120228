//! pi figures checked against counts taken in this file from the raw fixture lines (issue
//! #12): turns, calls, failures and recorded tokens of every session, a branched session
//! (`branchedFrom`, `parentSession`) whose copied entries are context only, and a branch
//! tree whose left branches are set aside. The counts below read the JSON directly, never
//! through hindsight.
//!
//! Fixtures: `tests/fixtures/formats/pi/` (two sessions), `pi/branched/` (a session and a
//! branch of it that copies its first 7 entries, version 1) and `pi/tree/` (a session that
//! leaves two branches, and a fork of it that copies the path to one entry, version 3).

mod common;

use hindsight::config::Config;
use hindsight::ingest::formats::{import, InputFormat};
use hindsight::ingest::{Abandoned, Copied, LoadedRun, Policy};
use hindsight::model::EventKind;
use hindsight::replay::ProjectReplayer;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

const ROOT: &str = "tests/fixtures/formats/pi";
const PARENT: &str = "branched/2025-05-02T09-00-00-000Z_4d2c8e1f-6a3b-4c5d-9e7f-0a1b2c3d4e5f.jsonl";
const BRANCHED: &str =
    "branched/2025-05-02T09-30-00-000Z_9b7e5c3a-1f2d-4e6b-8a0c-2d4f6b8e0a1c.jsonl";
const TREE: &str = "tree/2025-06-10T08-00-00-000Z_2f8a6c4e-0b1d-4f3a-9c5e-7a9b1d3f5e70.jsonl";
const FORK: &str = "tree/2025-06-10T09-00-00-000Z_7c5a3e1b-9d0f-4b2c-8e4a-6c8e0a2b4d96.jsonl";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(ROOT).join(name)
}

fn load(path: &Path) -> LoadedRun {
    import(path, "s", InputFormat::Pi, Policy::Strict).expect("loads strictly")
}

/// Every session log under the fixture folder, by path relative to it.
fn sessions() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(&fixture(""), &fixture(""), &mut out);
    out.sort();
    assert_eq!(out.len(), 6, "{out:?}");
    out
}

/// What a session holds, counted from its raw lines.
#[derive(Debug, PartialEq, Eq)]
struct Counts {
    /// Assistant messages of the session's own entries on the replayed branch.
    turns: u64,
    /// Their `toolCall` items, except those of an `aborted` or `error` request that no
    /// result answers before the next assistant message.
    calls: u64,
    /// `toolResult` messages with `isError: true` among those entries.
    failures: u64,
    /// `input + cacheRead + cacheWrite`, and `output`, of those assistant messages.
    prompt: u64,
    completion: u64,
    copied: Option<Copied>,
    abandoned: Option<Abandoned>,
}

fn counts(path: &Path) -> Counts {
    let text = std::fs::read_to_string(path).expect("read fixture");
    let rows: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("fixture line is JSON"))
        .collect();
    let header = &rows[0];
    assert_eq!(header["type"], "session");
    let entries = &rows[1..];
    // A branched session starts with copies: entries older than its header.
    let parent = header["branchedFrom"]
        .as_str()
        .or(header["parentSession"].as_str());
    let mut copied = parent.map(|p| Copied {
        from: p
            .rsplit('/')
            .next()
            .unwrap()
            .trim_end_matches(".jsonl")
            .into(),
        ..Copied::default()
    });
    let since = header["timestamp"].as_str().unwrap();
    let copies = match parent {
        Some(_) => entries
            .iter()
            .take_while(|e| e["timestamp"].as_str().unwrap() < since)
            .count(),
        None => 0,
    };
    // A tree: the path from the last entry up to the root is replayed.
    let parent_of: HashMap<&str, Option<&str>> = entries
        .iter()
        .filter_map(|e| Some((e["id"].as_str()?, e["parentId"].as_str())))
        .collect();
    let mut path: HashSet<&str> = HashSet::new();
    let mut at = entries.last().and_then(|e| e["id"].as_str());
    while let Some(id) = at {
        path.insert(id);
        at = parent_of[id];
    }
    let tree = parent_of.len() == entries.len() && path.len() < entries.len();
    let mut abandoned = tree.then(Abandoned::default);
    let mut c = Counts {
        turns: 0,
        calls: 0,
        failures: 0,
        prompt: 0,
        completion: 0,
        copied: None,
        abandoned: None,
    };
    let mut unrun: HashSet<String> = HashSet::new();
    for (i, e) in entries.iter().enumerate() {
        let m = &e["message"];
        let assistant = e["type"] == "message" && m["role"] == "assistant";
        let u = &m["usage"];
        let n = |k: &str| u[k].as_u64().unwrap_or(0);
        let (prompt, completion) = (n("input") + n("cacheRead") + n("cacheWrite"), n("output"));
        let on_path = !tree || path.contains(e["id"].as_str().unwrap());
        if i < copies {
            let copied = copied.as_mut().unwrap();
            copied.entries += 1;
            if assistant {
                copied.turns += 1;
                copied.tokens += prompt + completion;
            }
            continue;
        }
        if !on_path {
            let left = abandoned.as_mut().unwrap();
            left.entries += 1;
            if e["parentId"].as_str().is_none_or(|p| path.contains(p)) {
                left.branches += 1;
            }
            if assistant {
                left.turns += 1;
                left.tokens += prompt + completion;
            }
            continue;
        }
        if assistant {
            unrun.clear();
            c.turns += 1;
            c.prompt += prompt;
            c.completion += completion;
            let ran = !matches!(m["stopReason"].as_str(), Some("aborted" | "error"));
            for item in m["content"].as_array().into_iter().flatten() {
                if item["type"] == "toolCall" {
                    if ran {
                        c.calls += 1;
                    } else {
                        unrun.insert(item["id"].as_str().unwrap().to_string());
                    }
                }
            }
        }
        if e["type"] == "message" && m["role"] == "toolResult" {
            if unrun.remove(m["toolCallId"].as_str().unwrap()) {
                c.calls += 1;
            }
            if m["isError"] == true {
                c.failures += 1;
            }
        }
    }
    c.copied = copied;
    c.abandoned = abandoned;
    c
}

/// The same figures, from what hindsight imported.
fn imported(run: &LoadedRun) -> Counts {
    let mut c = Counts {
        turns: 0,
        calls: 0,
        failures: 0,
        prompt: 0,
        completion: 0,
        copied: run.stats.copied.clone(),
        abandoned: run.stats.abandoned.clone(),
    };
    for event in &run.events {
        match &event.kind {
            EventKind::ModelRequest(request) => {
                c.turns += 1;
                let usage = request.usage.unwrap_or_default();
                c.prompt += usage.prompt();
                c.completion += usage.output;
            }
            EventKind::ToolCall(_) => c.calls += 1,
            EventKind::ToolResult(r) if !r.success => c.failures += 1,
            _ => {}
        }
    }
    c
}

#[test]
fn every_session_matches_the_counts_of_its_raw_lines() {
    for name in sessions() {
        let path = fixture(&name);
        assert_eq!(imported(&load(&path)), counts(&path), "{name}");
    }
}

#[test]
fn the_fixtures_hold_what_they_were_written_for() {
    let branched = counts(&fixture(BRANCHED));
    assert_eq!(
        (branched.turns, branched.calls, branched.failures),
        (4, 3, 0)
    );
    let copied = branched.copied.expect("copied");
    assert_eq!((copied.entries, copied.turns), (7, 3));
    assert_eq!(
        copied.from,
        PARENT
            .trim_start_matches("branched/")
            .trim_end_matches(".jsonl")
    );
    let tree = counts(&fixture(TREE));
    assert_eq!((tree.turns, tree.calls, tree.failures), (5, 4, 0));
    let left = tree.abandoned.expect("abandoned");
    assert_eq!((left.branches, left.entries, left.turns), (2, 8, 4));
    let fork = counts(&fixture(FORK));
    assert_eq!((fork.turns, fork.copied.expect("copied").entries), (3, 8));
    assert_eq!(fork.abandoned, None);
}

#[test]
fn the_report_gives_each_session_its_own_turns_and_tokens_and_what_was_set_aside() {
    let report = common::json_report(&["replay", ROOT, "--format", "json", "--strict"]);
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), sessions().len());
    for run in runs {
        let project = run["project"].as_str().expect("project");
        let file = Path::new(project).join(format!("{}.jsonl", run["run_id"].as_str().unwrap()));
        let expected = counts(&Path::new(env!("CARGO_MANIFEST_DIR")).join(&file));
        let shown = file.display();
        assert_eq!(run["turns"], expected.turns, "{shown}");
        assert_eq!(
            run["tokens_total"],
            expected.prompt + expected.completion,
            "{shown}"
        );
        assert_eq!(run["input"]["copied"], json(&expected.copied), "{shown}");
        assert_eq!(
            run["input"]["abandoned"],
            json(&expected.abandoned),
            "{shown}"
        );
    }
}

/// A figure as the JSON report shows it: `null` when absent.
fn json<T: serde::Serialize>(v: &Option<T>) -> Value {
    v.as_ref().map_or(Value::Null, |v| {
        serde_json::to_value(v).expect("serializes")
    })
}

/// Every message text of every frame of a run.
fn frame_texts(run: &LoadedRun) -> Vec<String> {
    run.frames
        .iter()
        .flat_map(|f| f.messages.iter().map(|m| m.content.to_string()))
        .collect()
}

fn call_ids(run: &LoadedRun) -> Vec<String> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(c) => Some(c.call_id.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn copied_entries_seed_the_context_but_are_not_replayed() {
    let run = load(&fixture(BRANCHED));
    assert_eq!(call_ids(&run), ["toolu_B1", "toolu_B2", "toolu_B3"]);
    // Its first request was sent the copied history: the parent's prompt and failed edit.
    let first = &run.frames[0];
    assert_eq!(first.turn, 1);
    let texts: Vec<&str> = first.messages.iter().map(|m| &*m.content).collect();
    assert!(texts[0].starts_with("The cart badge shows the wrong item count"));
    assert!(texts
        .iter()
        .any(|t| t.starts_with("Could not find the exact text")));
    assert_eq!(
        texts.last(),
        Some(&"Read the file again before editing: it was reformatted this morning.")
    );

    // Replayed after its parent, the branch does not fire again on the parent's failures.
    let mut replayer =
        ProjectReplayer::new("cart", &Config::default(), Vec::new()).expect("config");
    let parent = replayer.replay(load(&fixture(PARENT)));
    let branch = replayer.replay(load(&fixture(BRANCHED)));
    let stale = |r: &hindsight::replay::RunReplay| {
        r.firings
            .iter()
            .filter(|f| f.guard == "stale_edit_recovery")
            .count()
    };
    assert_eq!((stale(&parent), stale(&branch)), (1, 0));
}

#[test]
fn a_branch_tree_replays_the_path_to_its_last_entry() {
    let run = load(&fixture(TREE));
    assert_eq!(
        call_ids(&run),
        ["toolu_T1", "toolu_T5", "toolu_T7", "toolu_T8"]
    );
    // The left branches are in no frame; the summary of the first one is.
    let texts = frame_texts(&run);
    assert!(!texts
        .iter()
        .any(|t| t.starts_with("Could not find the exact text")));
    assert!(!texts
        .iter()
        .any(|t| t.starts_with("FAIL test/invoice.test.ts")));
    assert!(texts
        .iter()
        .any(|t| t.starts_with("Tried editing total() three times")));
    // The stale edits of the left branch are not replayed, so nothing fires on them.
    let mut replayer =
        ProjectReplayer::new("invoice", &Config::default(), Vec::new()).expect("config");
    let replay = replayer.replay(run.clone());
    assert!(
        !replay
            .firings
            .iter()
            .any(|f| ["stale_edit_recovery", "adaptive_edit"].contains(&f.guard)),
        "{:?}",
        replay.firings
    );
    // Its fork copied the path to the second read: context, not turns.
    let fork = load(&fixture(FORK));
    assert_eq!(call_ids(&fork), ["toolu_F1", "toolu_F2"]);
    let texts = frame_texts(&fork);
    assert!(texts
        .iter()
        .any(|t| t == "Copy the oldText from the file exactly this time."));
}

fn write(dir: &Path, lines: &[&str]) -> PathBuf {
    let path = dir.join("s.jsonl");
    std::fs::write(&path, lines.join("\n")).expect("write");
    path
}

#[test]
fn a_tree_whose_path_cannot_be_followed_is_read_in_file_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let ask = |id: &str, parent: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"assistant","content":[],"stopReason":"stop","usage":{{"input":1,"output":1}}}}}}"#
        )
    };
    // The last entry's parent is not in the file (its line was lost): no path to a root.
    let broken = [
        header.to_string(),
        ask("a", "null"),
        ask("b", r#""a""#),
        ask("c", r#""lost""#),
    ];
    let run = load(&write(
        dir.path(),
        &broken.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    assert_eq!(imported(&run).turns, 3);
    assert_eq!(run.stats.abandoned, None);
    // A path that loops is no path either.
    let looped = [
        header.to_string(),
        ask("a", r#""b""#),
        ask("b", r#""a""#),
        ask("c", r#""a""#),
    ];
    let run = load(&write(
        dir.path(),
        &looped.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    assert_eq!(imported(&run).turns, 3);
    // Two roots: the path from the last entry is replayed, the other root is a left branch.
    let roots = [
        header.to_string(),
        ask("a", "null"),
        ask("b", r#""a""#),
        ask("c", "null"),
    ];
    let run = load(&write(
        dir.path(),
        &roots.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    assert_eq!(imported(&run).turns, 1);
    let left = run.stats.abandoned.expect("abandoned");
    assert_eq!(
        (left.branches, left.entries, left.turns, left.tokens),
        (1, 2, 2, 4)
    );
}

#[test]
fn the_table_says_what_was_copied_and_what_was_left_on_other_branches() {
    let (mut copied, mut left) = (Vec::new(), Vec::new());
    for name in sessions() {
        let c = counts(&fixture(&name));
        copied.extend(c.copied);
        left.extend(c.abandoned);
    }
    let out = common::hindsight()
        .args(["replay", ROOT])
        .output()
        .expect("runs");
    let table = String::from_utf8_lossy(&out.stdout);
    let turns: u64 = copied.iter().map(|c| c.turns).sum();
    let tokens: u64 = copied.iter().map(|c| c.tokens).sum();
    let line = format!(
        "{} branched session(s) start with {turns} copied turns ({}",
        copied.len(),
        thousands(tokens)
    );
    assert!(table.contains(&line), "{line}\n{table}");
    let turns: u64 = left.iter().map(|a| a.turns).sum();
    let tokens: u64 = left.iter().map(|a| a.tokens).sum();
    let branches: u64 = left.iter().map(|a| a.branches).sum();
    let line = format!(
        "{turns} turns ({} tokens) on {branches} abandoned branch(es)",
        thousands(tokens)
    );
    assert!(table.contains(&line), "{line}\n{table}");
}

/// `1234567` as `1,234,567`, written out here rather than borrowed from the crate.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

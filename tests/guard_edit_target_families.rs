//! Acceptance lines of seed 001 (`001_d7c440e7b9955800.txt`) WO-TD-03 "Focus Action
//! Families Must Be Target-Specific For Edits", replayed by `edit_target_families` (with
//! `stale_edit_recovery`, WO-TD-01, for the blocking side). The seed's own incident
//! literal is replaced by generic XML, JSON and TypeScript targets.

mod common;

use common::{firings, metric, replay, replay_with};
use hindsight::config::Config;
use hindsight::guards::{Effect, Firing};
use hindsight::normalize::family::families;
use hindsight::normalize::ToolKind;
use hindsight::synth::Run;
use serde_json::json;

const GUARD: &str = "edit_target_families";
const STALE: &str = "old_string_not_found";

fn patch(run: &mut Run, path: &str, offset: u32, ok: bool) {
    let id = run.call(
        "file_patch",
        json!({"path": path, "offset": offset, "limit": 5, "content": "<joint/>"}),
    );
    if ok {
        run.result(&id, true, "patched", json!({"mutation": true}));
    } else {
        run.result(
            &id,
            false,
            "old text not found at offset",
            json!({"errorClass": STALE}),
        );
    }
}

/// "A repeated stale edit for [one target] blocks only that edit family."
#[test]
fn a_repeated_stale_edit_blocks_only_its_family() {
    let path = "config/stages.xml";
    let lint = "<stage id=\"lint\">";
    let mut run = Run::new("1780000000000-a", "/w/pipeline", 1000);
    for _ in 0..2 {
        run.turn(100).edit(
            path,
            lint,
            "<stage id=\"lint\" strict=\"true\">",
            Err((STALE, "old_string not found")),
        );
    }
    run.turn(100).edit(
        path,
        "<stage id=\"test\">",
        "<stage id=\"test\" retries=\"2\">",
        Ok("applied"),
    );
    run.turn(100).edit(
        path,
        lint,
        "<stage id=\"lint\" strict=\"true\">",
        Err((STALE, "old_string not found")),
    );
    let replay = replay(&run);

    let blocks: Vec<(u32, Option<&str>)> = firings(&replay, "stale_edit_recovery")
        .iter()
        .filter(|f| f.action == "block_stale_retry")
        .map(|f| (f.turn, f.family.as_deref()))
        .collect();
    let lint_family = format!("file_edit:{path}:{lint}");
    assert_eq!(blocks, [(4, Some(lint_family.as_str()))]);

    let through = firings(&replay, GUARD);
    assert_eq!(
        through.len(),
        1,
        "the old coarse key would also have blocked turn 3"
    );
    assert_eq!(through[0].turn, 3);
    assert_eq!(through[0].action, "let_through");
    assert_eq!(through[0].effect, Effect::Advisory);
    assert_eq!(
        through[0].family.as_deref(),
        Some("file_edit:config/stages.xml:<stage id=\"test\">")
    );
    assert_eq!(
        through[0].detail.as_deref(),
        Some(format!("coarse file_edit:{path} blocked after 2 failures of {lint_family}").as_str())
    );
    assert_eq!(metric(&replay, GUARD, "let_through_succeeded"), 1);
    assert_eq!(metric(&replay, GUARD, "coarse_blocks"), 1);
}

/// "A fresh `file_patch` for a different offset/target in the same XML can pass after the
/// required authoritative read."
#[test]
fn a_fresh_patch_passes_after_the_authoritative_read() {
    let path = "assets/scene.xml";
    let mut run = Run::new("1780000000000-b", "/w/sim", 1000);
    run.turn(100);
    patch(&mut run, path, 10, false);
    run.turn(100);
    patch(&mut run, path, 10, false);
    run.turn(100)
        .read(path, "<scene><joint name=\"hip\"/></scene>");
    run.turn(100);
    patch(&mut run, path, 40, true);
    let replay = replay(&run);

    let recovery: Vec<&str> = firings(&replay, "stale_edit_recovery")
        .iter()
        .map(|f| f.action.as_str())
        .collect();
    assert_eq!(recovery, ["read_authoritative_target"]);
    assert_eq!(metric(&replay, "stale_edit_recovery", "satisfied"), 1);
    assert_eq!(metric(&replay, "stale_edit_recovery", "blocked_retries"), 0);

    let through = firings(&replay, GUARD);
    assert_eq!(through.len(), 1);
    assert_eq!(through[0].turn, 4);
    assert_eq!(
        through[0].family.as_deref(),
        Some("file_patch:assets/scene.xml:offset=40,limit=5")
    );
    assert_eq!(metric(&replay, GUARD, "let_through"), 1);
    assert_eq!(metric(&replay, GUARD, "let_through_succeeded"), 1);
}

/// "The directive frame no longer grows with long sed/python command bodies."
#[test]
fn long_command_bodies_do_not_grow_family_keys() {
    let shell_key = |body: &str| {
        let args = json!({ "command": body });
        families(
            ToolKind::Shell,
            "shell",
            args.as_object().expect("object"),
            None,
            Some("/w/etl"),
        )
        .action
    };
    // Two bodies that differ only in their last characters.
    let python = |n: u32| {
        format!(
            "python -c \"import json; rows = [{}]; print(len(rows) + {n})\"",
            "{'id': 1}, ".repeat(180)
        )
    };
    let (a, b) = (python(1), python(2));
    assert!(a.len() >= 2000, "a 2 KB body: {}", a.len());
    let (ka, kb) = (shell_key(&a), shell_key(&b));
    assert!(ka.chars().count() <= 128, "{ka}");
    assert!(kb.chars().count() <= 128, "{kb}");
    assert_ne!(ka, kb, "distinct bodies keep distinct keys");
    let sed = format!("sed -i 's/{}/x/' data/rows.json", "a".repeat(2000));
    assert!(shell_key(&sed).chars().count() <= 128);

    // An edit whose replaced text is 2 KB keeps its directive and detail bounded too.
    let old = format!("\"items\": [{}]", "{\"id\": 1}, ".repeat(200));
    let mut run = Run::new("1780000000000-c", "/w/app", 1000);
    for _ in 0..2 {
        run.turn(100).edit(
            "data/catalog.json",
            &old,
            "\"items\": []",
            Err((STALE, "old_string not found")),
        );
    }
    run.turn(100).edit(
        "data/catalog.json",
        "\"version\": 1",
        "\"version\": 2",
        Ok("applied"),
    );
    let replay = replay(&run);
    let all: Vec<&Firing> = replay
        .firings
        .iter()
        .filter(|f| f.guard == GUARD || f.guard == "stale_edit_recovery")
        .collect();
    assert_eq!(all.len(), 2);
    for f in all {
        let family = f.family.as_deref().unwrap_or_default();
        assert!(family.chars().count() <= 128, "{family}");
        let detail = f.detail.as_deref().unwrap_or_default();
        assert!(detail.chars().count() <= 300, "{detail}");
    }
}

/// Retries of the failing family, other files and other tools are not the coarse key's
/// victims; the threshold is a setting.
#[test]
fn quiet_cases_and_threshold_setting() {
    let mut run = Run::new("1780000000000-d", "/w/web", 1000);
    for _ in 0..3 {
        run.turn(100).edit(
            "src/app.ts",
            "let a = 1;",
            "let a = 2;",
            Err((STALE, "old_string not found")),
        );
    }
    run.turn(100)
        .edit("src/util.ts", "let b = 1;", "let b = 2;", Ok("applied"));
    let id = run.call(
        "str_replace",
        json!({"path": "src/app.ts", "old_str": "let c = 1;", "new_str": "let c = 2;"}),
    );
    run.result(&id, true, "applied", json!({}));
    let replay = replay(&run);
    assert!(firings(&replay, GUARD).is_empty());
    assert_eq!(metric(&replay, GUARD, "coarse_blocks"), 1);

    let mut two = Run::new("1780000000000-e", "/w/web", 1000);
    for old in ["let a = 1;", "let a = 1;", "let b = 1;"] {
        two.turn(100).edit(
            "src/app.ts",
            old,
            "x",
            if old.ends_with("b = 1;") {
                Ok("applied")
            } else {
                Err((STALE, "old_string not found"))
            },
        );
    }
    assert_eq!(
        firings(&replay_with(&two, &Config::default()), GUARD).len(),
        1
    );
    let mut config = Config::default();
    config
        .set("edit_target_families.coarse_block_after=3")
        .expect("setting");
    assert!(firings(&replay_with(&two, &config), GUARD).is_empty());
}

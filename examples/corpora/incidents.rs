//! The incidents of the seeds, as recorded runs.

use super::outputs::*;
use super::project;
use hindsight::synth::Run;
use serde_json::json;
use std::path::Path;

pub fn myactuator(root: &Path) {
    let cwd = "/home/dev/myactuator";
    let pal = "firmware/esp32/src/pal.cpp";
    let types = "firmware/esp32/include/types.h";

    // Session 1: three cosmetic variants of one build (seed 000, WO-9 "Origin").
    let mut s1 = Run::new("1783155600000-k3m9qa", cwd, 1100);
    s1.turn(60).read(pal, "// pal.cpp\n#include \"types.h\"\n");
    // Three headers each define the motor config their own way (WO-2's "3x MotorConfig";
    // WO-1's header whose drift the builds below report).
    s1.turn(60).write(
        "firmware/esp32/include/types.h",
        "#pragma once\ntypedef struct { float kp; float ki; } MotorConfig;\nvoid pal_init(MotorConfig c);\n",
    );
    s1.turn(60).write(
        "firmware/esp32/include/can_bus.h",
        "#pragma once\n#include <stdint.h>\nstruct MotorConfig { uint8_t id; float kp; };\nint can_send(uint8_t id, const uint8_t *data, int len);\n",
    );
    s1.turn(60).write(
        "firmware/esp32/include/motor.h",
        "#pragma once\ntypedef struct MotorConfig { int id; } MotorConfig;\nvoid motor_apply(struct MotorConfig *m);\n",
    );
    s1.turn(60).write(
        pal,
        "#include \"types.h\"\nvoid pal_init(MotorConfig c) { c.kp0 = 1; }\n",
    );
    s1.turn(60).shell(
        "cd firmware/esp32 && pio run 2>&1 | tail -100",
        false,
        &gcc_errors(3),
    );
    let first = s1.last_call();
    s1.turn(40)
        .shell("cd firmware/esp32 && pio run 2>&1", false, &gcc_errors(3));
    s1.dedup("shell:cd firmware/esp32 && pio run 2>&1");
    s1.turn(40).shell(
        "cd /home/dev/myactuator/firmware/esp32 && pio run",
        false,
        &gcc_errors(3),
    );
    let third = s1.last_call();
    s1.directive(
        "forced_replan",
        "shell:cd firmware/esp32 && pio run",
        "forced_replan",
    );
    s1.frame(
        2400,
        &[&first, &third],
        &[focus_block(5, "pio"), focus_block(5, "pio")],
    );
    s1.turn(30).read(
        types,
        "struct MotorConfig { float kp; };\nstruct MotorConfig { int id; };\n",
    );

    // Session 2: the carry trips the breaker on the resumed session's second build, then
    // the identical hash-mismatch edit is retried 8 times (seed 000, WO-8 root-cause tie).
    let mut s2 = Run::new("1783159200000-p7x2vd", cwd, 1150);
    s2.turn(50).shell(
        "cd firmware/esp32 && pio run | tail -50",
        false,
        &gcc_errors(3),
    );
    s2.turn(50).shell(
        "cd firmware/esp32 && pio run 2>/dev/null",
        false,
        &gcc_errors(3),
    );
    for i in 0..8 {
        s2.turn(25);
        let id = s2.call(
            "file_edit",
            json!({"path": types, "old_string": "struct MotorConfig { int id; };",
            "new_string": "", "expected_hash": "9f2c41"}),
        );
        s2.result(
            &id,
            false,
            "file_edit rejected: hash mismatch (expected_hash 9f2c41, file is 03be7a)",
            json!({"errorClass": "hash_mismatch", "mutation": false}),
        );
        if i > 0 {
            s2.dedup(&format!("file_edit:{types}"));
        }
        if i == 3 {
            // A threshold compaction in the middle of the stuck edit loop (WO-5), which
            // also loses the task statement from the next frame.
            let last = s2.last_call();
            s2.frame(2600, &[&last], &[]);
            s2.compaction(1400, 600);
        }
        if i == 4 {
            let last = s2.last_call();
            s2.frame(1200, &[&last], &[]);
            if let Some(frame) = s2.frames.last_mut() {
                if let Some(messages) = frame["messages"].as_array_mut() {
                    messages.retain(|m| m["role"] != "user");
                }
            }
        }
    }
    let blocks: Vec<String> = (0..6).map(|_| focus_block(10, "file_edit")).collect();
    let last = s2.last_call();
    s2.frame(2600, &[&last], &blocks);

    // Session 3: the futile edit loop: every edit lands, every rebuild reports the same
    // four errors (seed 000, root refinement). Mutation-based decay never escalates it.
    let mut s3 = Run::new("1783162800000-c4t8ne", cwd, 1200);
    for i in 0..6 {
        s3.turn(30).edit(
            pal,
            &format!("c.kp{i} = 1;"),
            &format!("c.gain{i} = 1;"),
            Ok("applied 1 edit"),
        );
        s3.turn(30).shell(
            "cd firmware/esp32 && pio run -e esp32dev_debug",
            false,
            &gcc_errors(4),
        );
    }

    let convergence = json!({"version": 1, "families": {
        "shell:cd firmware/esp32 && pio run 2>&1 | tail -100:tool_failed": {"rounds": 1, "lastSignal": 3},
        "shell:cd firmware/esp32 && pio run 2>&1:tool_failed": {"rounds": 1, "lastSignal": 3},
        "shell:cd /home/dev/myactuator/firmware/esp32 && pio run:tool_failed": {"rounds": 1, "lastSignal": 3}
    }});
    let family = "shell:cd firmware/esp32 && pio run";
    let edit_family = "file_edit:firmware/esp32/include/types.h:struct MotorConfig { int id; };";
    let debug_family = "shell:cd firmware/esp32 && pio run -e esp32dev_debug";
    let expected = json!({
        "story": "seed 000: WO-9 variants reach stalled in session 1 and abandon on the carry in session 2; WO-8's 8x hash mismatch; the root refinement's futile edit loop",
        "runs": {
            s1.id.clone(): [
                {"guard": "coherence_gate", "action": "regenerate", "turn": 3, "family": "MotorConfig"},
                {"guard": "boundary_verifier", "action": "boundary_block", "turn": 5},
                {"guard": "family_normalization", "action": "merge", "turn": 7, "family": family},
                {"guard": "family_normalization", "action": "merge", "turn": 8, "family": family},
                {"guard": "convergence_breaker", "action": "stalled", "turn": 8, "family": family},
                {"guard": "diagnostic_delta", "action": "stalled", "turn": 8, "family": family},
                {"guard": "ledger_finalization", "action": "finalize_incomplete_verification", "turn": 9}
            ],
            s2.id.clone(): [
                {"guard": "family_normalization", "action": "merge", "turn": 2, "family": family},
                {"guard": "convergence_breaker", "action": "abandon", "turn": 2, "family": family},
                {"guard": "diagnostic_delta", "action": "abandon", "turn": 2, "family": family},
                {"guard": "convergence_breaker", "action": "stalled", "turn": 5, "family": edit_family},
                {"guard": "diagnostic_delta", "action": "stalled", "turn": 5, "family": edit_family},
                {"guard": "convergence_breaker", "action": "abandon", "turn": 7, "family": edit_family},
                {"guard": "diagnostic_delta", "action": "abandon", "turn": 7, "family": edit_family},
                {"guard": "adaptive_edit", "action": "rewrite", "turn": 4},
                {"guard": "dedup_gate", "action": "block_duplicate", "turn": 4, "family": edit_family},
                {"guard": "compaction_policy", "action": "compaction_while_stuck", "turn": 6, "family": edit_family},
                {"guard": "compaction_policy", "action": "dropped_pinned", "turn": 7}
            ],
            s3.id.clone(): [
                {"guard": "diagnostic_delta", "action": "stalled", "turn": 6, "family": debug_family},
                {"guard": "diagnostic_delta", "action": "abandon", "turn": 10, "family": debug_family},
                {"guard": "ledger_finalization", "action": "finalize_incomplete_verification", "turn": 12}
            ]
        },
        "folded_frames": {s1.id.clone(): 1, s2.id.clone(): 1, s3.id.clone(): 0}
    });
    project(
        root,
        "myactuator",
        &[s1, s2, s3],
        Some(convergence),
        expected,
    );
}

pub fn dropbear(root: &Path) {
    let cwd = "/home/dev/telegram_test";
    let xml = "dropbear_mjcf/dropbear_mjcf.xml";
    let old = "<joint name=\"RL_Revolute28\" type=\"hinge\" axis=\"0 1 0\" range=\"-1.57 1.57\"/>";
    let new = "<joint name=\"RL_Revolute28\" type=\"weld\" />";
    let mut r = Run::new("1782873796963-i5r7mv", cwd, 70_000);
    r.turn(800).shell(
        "ls -R dropbear_mjcf",
        true,
        &"dropbear_mjcf/meshes/part.stl\n".repeat(120),
    );
    let listing = r.last_call();
    r.turn(800)
        .read(xml, &format!("<mujoco>\n  {old}\n</mujoco>\n"));
    r.turn(800).edit(xml, old, new, Ok("applied 1 edit"));
    let stale = "old_string not found in dropbear_mjcf/dropbear_mjcf.xml";
    let family = format!("file_edit:{xml}:{old}");
    let mut evidence = vec![
        run_evidence(1, "shell ls -R dropbear_mjcf ok (120 lines)"),
        run_evidence(3, "file_edit dropbear_mjcf.xml mutation ok"),
    ];
    let mut failed_ids = Vec::new();
    for i in 0..6 {
        r.turn(700)
            .edit(xml, old, new, Err(("old_string_not_found", stale)));
        failed_ids.push(r.last_call());
        evidence.push(run_evidence(
            4 + i,
            "file_edit dropbear_mjcf.xml failed: old_string not found",
        ));
        if i >= 1 {
            r.directive("update_todos", &format!("file_edit:{xml}"), "forced_replan");
            evidence.push(focus_block(4 + i, &format!("file_edit:{xml}")));
        }
    }
    // Rewrites through the shell, blocked by the update_todos directive.
    for cmd in [
        "sed -i 's/type=\"hinge\" axis=\"0 1 0\"/type=\"weld\"/' dropbear_mjcf/dropbear_mjcf.xml",
        "python3 -c \"import re,sys; p='dropbear_mjcf/dropbear_mjcf.xml'; s=open(p).read(); open(p,'w').write(s.replace('hinge','weld'))\"",
    ] {
        r.turn(900);
        let id = r.call("shell", json!({"command": cmd}));
        r.result(&id, false, "blocked by focus supervisor: required_next_action=update_todos", json!({"errorClass": "blocked"}));
        r.directive("update_todos", &format!("file_edit:{xml}"), "forced_replan");
        evidence.push(focus_block(r.turn, &format!("file_edit:{xml}")));
    }
    // Distinct targets in the same file, refused because the harness keyed edits by the
    // coarse `tool:path` family (WO-TD-03: the stale target contaminated them).
    let refused =
        "blocked by focus supervisor: family file_edit:dropbear_mjcf/dropbear_mjcf.xml is blocked";
    for (tool, args) in [
        (
            "file_patch",
            json!({"path": xml, "offset": 42, "limit": 3,
            "content": "<joint name=\"RL_Revolute30\" type=\"weld\" />"}),
        ),
        (
            "file_edit",
            json!({"path": xml, "old_string": "<joint name=\"RL_Revolute31\" type=\"hinge\"",
            "new_string": "<joint name=\"RL_Revolute31\" type=\"weld\""}),
        ),
    ] {
        r.turn(900);
        let id = r.call(tool, args);
        r.result(&id, false, refused, json!({"errorClass": "blocked"}));
        r.directive("update_todos", &format!("file_edit:{xml}"), "forced_replan");
        evidence.push(focus_block(r.turn, &format!("file_edit:{xml}")));
    }
    r.turn(600)
        .complete("partial", "Welded RL_Revolute28; training not run yet.");
    for _ in 0..3 {
        r.turn(900);
        let id = r.call("file_read", json!({"path": "gear_sonic/train.py"}));
        r.result(
            &id,
            false,
            "blocked by focus supervisor: required_next_action=update_todos",
            json!({"errorClass": "blocked"}),
        );
        r.directive("update_todos", &format!("file_edit:{xml}"), "forced_replan");
        evidence.push(focus_block(r.turn, &format!("file_edit:{xml}")));
    }
    let ids: Vec<&str> = std::iter::once(listing.as_str())
        .chain(failed_ids.iter().map(String::as_str))
        .collect();
    r.frame(142_000, &ids, &evidence);
    let expected = json!({
        "story": "seed 001: one mutation, then stale old_string retries; focus forces update_todos; ledger left open",
        "runs": {
            r.id.clone(): [
                {"guard": "convergence_breaker", "action": "stalled", "turn": 6, "family": family},
                {"guard": "diagnostic_delta", "action": "stalled", "turn": 6, "family": family},
                {"guard": "convergence_breaker", "action": "abandon", "turn": 8, "family": family},
                {"guard": "diagnostic_delta", "action": "abandon", "turn": 8, "family": family},
                {"guard": "convergence_breaker", "action": "stalled", "turn": 17, "family": "file_read:gear_sonic/train.py"},
                {"guard": "diagnostic_delta", "action": "stalled", "turn": 17, "family": "file_read:gear_sonic/train.py"},
                {"guard": "ledger_finalization", "action": "finalize_incomplete_verification", "turn": 17},
                {"guard": "stale_edit_recovery", "action": "read_authoritative_target", "turn": 5, "family": family},
                {"guard": "stale_edit_recovery", "action": "block_stale_retry", "turn": 6, "family": family},
                {"guard": "directive_escalation", "action": "terminal_incomplete", "turn": 8},
                {"guard": "edit_target_families", "action": "let_through", "turn": 13},
                {"guard": "workboard_seed", "action": "seed_decomposition", "turn": 10},
                {"guard": "evidence_folding", "action": "fold", "turn": 17}
            ]
        },
        "folded_frames": {r.id.clone(): 1}
    });
    project(root, "telegram-dropbear", &[r], None, expected);
}

/// Seed 002 (fixes 3, 4, 9, 16, 17): a sidebar cleanup with stale edits after the file
/// changed, todos closed over a failing build, and a completion claimed through a verifier
/// wrapper that masks failure.
pub fn noclip_sidebar(root: &Path) {
    let mut r = Run::new("1782700000000-n0clip", "/home/dev/noclip", 24_000);
    let sidebar = "src/components/Sidebar.tsx";
    r.turn(400).todos(json!([
        {"id": "1", "status": "in_progress", "content": "Remove the legacy earth panel from the sidebar", "verifyCommand": "npm run build && npm test"},
        {"id": "2", "parentId": "1", "status": "pending", "content": "Delete EarthPanel from Sidebar.tsx"},
        {"id": "3", "parentId": "1", "status": "pending", "content": "Drop the earth panel styles"}
    ]));
    r.turn(400).read(
        sidebar,
        "export function Sidebar() {\n  return (<nav><EarthPanel /><Layers /></nav>);\n}\n",
    );
    // The suite passes before the cleanup starts: a subtask closed by a real check.
    r.shell("npm test", true, "Tests: 12 passed, 12 total");
    r.turn(400)
        .edit(sidebar, "<EarthPanel />", "", Ok("applied 1 edit"));
    let stale = "old_string not found in src/components/Sidebar.tsx";
    for _ in 0..3 {
        r.turn(500).edit(
            sidebar,
            "<EarthPanel />",
            "",
            Err(("old_string_not_found", stale)),
        );
    }
    r.turn(400).edit(
        "src/styles/sidebar.css",
        ".earth-panel { display: block; }",
        "",
        Ok("applied 1 edit"),
    );
    r.turn(600).shell(
        "npm run build",
        false,
        "> noclip@0.4.0 build\n> tsc -b && vite build\n\nsrc/components/Sidebar.tsx(1,8): error TS6133: 'EarthPanel' is declared but its value is never read.\nsrc/App.tsx(14,5): error TS2304: Cannot find name 'EarthPanel'.\n",
    );
    r.turn(400).todos(json!([
        {"id": "1", "status": "completed", "content": "Remove the legacy earth panel from the sidebar", "verifyCommand": "npm run build && npm test"},
        {"id": "2", "parentId": "1", "status": "completed", "content": "Delete EarthPanel from Sidebar.tsx"},
        {"id": "3", "parentId": "1", "status": "completed", "content": "Drop the earth panel styles"}
    ]));
    r.turn(500).shell(
        "npm run build && npm test && echo ok || echo failed",
        true,
        "src/App.tsx(14,5): error TS2304: Cannot find name 'EarthPanel'.\nfailed\n",
    );
    r.turn(300)
        .complete("completed", "Sidebar cleaned up; build and tests pass.");
    r.ledger = Some("completed".into());
    let sidebar_family = "file_edit:src/components/Sidebar.tsx:<EarthPanel />";
    let expected = json!({"story": "seed 002: stale edits after the file changed; todos closed over a failing build; completion through a masking verifier", "runs": {r.id.clone(): [
        {"guard": "stale_edit_recovery", "action": "read_authoritative_target", "turn": 5, "family": sidebar_family},
        {"guard": "convergence_breaker", "action": "stalled", "turn": 6, "family": sidebar_family},
        {"guard": "todo_truth", "action": "downgrade_to_blocked", "turn": 9, "family": "shell:npm run build"},
        {"guard": "verified_completion", "action": "hold_completion", "turn": 11}
    ]}, "folded_frames": {r.id.clone(): 0}});
    project(root, "noclip-sidebar", &[r], None, expected);
}

/// Seed 002 fix 9: a todo marked completed although every call it covered failed.
pub fn visual_memory_teach(root: &Path) {
    let mut r = Run::new("1782800000000-vmteach", "/home/dev/vision_lab", 9_000);
    r.turn(300).todos(json!([
        {"id": "t1", "status": "in_progress", "content": "Teach each object to visual_memory"},
        {"id": "t2", "status": "pending", "content": "Verify recognition on the test images", "verifyCommand": "python scripts/recognize.py --all"}
    ]));
    let crash = "Traceback (most recent call last):\n  File \"visual_memory/teach.py\", line 88, in embed\n    feats = feats / feats.norm(dim=-1, keepdim=True)\nAttributeError: 'BaseModelOutputWithPooling' object has no attribute 'norm'\n";
    for object in ["mug", "lamp", "plant", "book"] {
        r.turn(250).shell(
            &format!("python -m visual_memory teach --object {object} --image imgs/{object}.jpg"),
            false,
            crash,
        );
    }
    r.turn(200).todos(json!([
        {"id": "t1", "status": "completed", "content": "Teach each object to visual_memory"},
        {"id": "t2", "status": "in_progress", "content": "Verify recognition on the test images", "verifyCommand": "python scripts/recognize.py --all"}
    ]));
    r.turn(250).shell(
        "python scripts/recognize.py --all",
        false,
        "error: no embeddings stored for 4 objects\n0/4 recognized\n",
    );
    r.turn(200).complete(
        "completed",
        "Taught all four objects; recognition verified.",
    );
    let expected = json!({"story": "seed 002 fix 9: a todo completed while every teach call failed; a completion over a failed verifier", "runs": {r.id.clone(): [
        {"guard": "ledger_finalization", "action": "finalize_incomplete_verification", "turn": 8},
        {"guard": "todo_truth", "action": "downgrade_to_blocked", "turn": 6},
        {"guard": "verified_completion", "action": "hold_completion", "turn": 8}
    ]}, "folded_frames": {r.id.clone(): 0}});
    project(root, "visual-memory-teach", &[r], None, expected);
}

//! Writes the shipped `corpora/`: small, readable `.omnius/` dumps that reproduce the
//! incidents of the seeds, and healthy controls. The output is committed; rerun with
//! `cargo run --example corpora -- corpora` after changing a story here.
//!
//! Each project's `expected.json` states the firings the story was written to produce
//! (derived from the seeds' thresholds by hand, not copied from hindsight's output);
//! `tests/corpora.rs` checks them.

use hindsight::synth::{pretty, Run};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};

fn project(root: &Path, name: &str, runs: &[Run], convergence: Option<Value>, expected: Value) {
    let dir = root.join(name);
    let omnius = dir.join(".omnius");
    for run in runs {
        run.write_to(&omnius);
    }
    if let Some(ledger) = convergence {
        fs::write(omnius.join("convergence-ledger.json"), pretty(&ledger))
            .expect("write convergence ledger");
    }
    fs::write(dir.join("expected.json"), pretty(&expected)).expect("write expected");
}

fn gcc_errors(n: usize) -> String {
    let mut out = String::from("Compiling .pio/build/esp32dev/src/pal.cpp.o\n");
    for i in 0..n {
        out.push_str(&format!(
            "src/pal.cpp:{}:9: error: 'struct MotorConfig' has no member named 'kp{i}'\n",
            40 + i * 7
        ));
    }
    out.push_str("*** [.pio/build/esp32dev/src/pal.cpp.o] Error 1\n========== [FAILED] Took 4.21 seconds ==========\n");
    out
}

fn focus_block(turn: u32, family: &str) -> String {
    format!("[FOCUS SUPERVISOR] turn {turn}: family `{family}` failed again; required_next_action=forced_replan. Blocked families: {family}")
}

fn myactuator(root: &Path) {
    let cwd = "/home/dev/myactuator";
    let pal = "firmware/esp32/src/pal.cpp";
    let types = "firmware/esp32/include/types.h";

    // Session 1: three cosmetic variants of one build (seed 000, WO-9 "Origin").
    let mut s1 = Run::new("1783155600000-k3m9qa", cwd, 1100);
    s1.turn(60).read(pal, "// pal.cpp\n#include \"types.h\"\n");
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
                {"guard": "family_normalization", "action": "merge", "turn": 4, "family": family},
                {"guard": "family_normalization", "action": "merge", "turn": 5, "family": family},
                {"guard": "convergence_breaker", "action": "stalled", "turn": 5, "family": family},
                {"guard": "diagnostic_delta", "action": "stalled", "turn": 5, "family": family},
                {"guard": "ledger_finalization", "action": "finalize_incomplete_verification", "turn": 6}
            ],
            s2.id.clone(): [
                {"guard": "family_normalization", "action": "merge", "turn": 2, "family": family},
                {"guard": "convergence_breaker", "action": "abandon", "turn": 2, "family": family},
                {"guard": "diagnostic_delta", "action": "abandon", "turn": 2, "family": family},
                {"guard": "convergence_breaker", "action": "stalled", "turn": 5, "family": edit_family},
                {"guard": "diagnostic_delta", "action": "stalled", "turn": 5, "family": edit_family},
                {"guard": "convergence_breaker", "action": "abandon", "turn": 7, "family": edit_family},
                {"guard": "diagnostic_delta", "action": "abandon", "turn": 7, "family": edit_family}
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

fn run_evidence(turn: u32, what: &str) -> String {
    format!("[RUN EVIDENCE] turn {turn}: {what}")
}

fn dropbear(root: &Path) {
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
                {"guard": "convergence_breaker", "action": "stalled", "turn": 15, "family": "file_read:gear_sonic/train.py"},
                {"guard": "diagnostic_delta", "action": "stalled", "turn": 15, "family": "file_read:gear_sonic/train.py"},
                {"guard": "ledger_finalization", "action": "finalize_incomplete_verification", "turn": 15}
            ]
        },
        "folded_frames": {r.id.clone(): 1}
    });
    project(root, "telegram-dropbear", &[r], None, expected);
}

fn cargo_errors(n: usize) -> String {
    let mut out = String::from("   Compiling parser v0.3.0 (/home/dev/parser)\n");
    for i in 0..n {
        out.push_str(&format!(
            "error[E0308]: mismatched types\n  --> src/lexer.rs:{}:17\n",
            10 + i
        ));
    }
    out.push_str(&format!(
        "error: could not compile `parser` (lib) due to {n} previous errors\n"
    ));
    out
}

fn healthy_cargo(root: &Path) {
    let mut r = Run::new("1783200000000-h1cargo", "/home/dev/parser", 3000);
    r.turn(100).todos(json!([{"id": "1", "status": "in_progress", "content": "fix lexer types", "verifyCommand": "cargo test"}]));
    r.turn(100)
        .shell("cargo build 2>&1 | head -60", false, &cargo_errors(5));
    r.turn(100).edit(
        "src/lexer.rs",
        "let n: u32 = tok.len();",
        "let n = tok.len();",
        Ok("applied"),
    );
    r.turn(100).shell("cargo build", false, &cargo_errors(3));
    r.turn(100).edit(
        "src/lexer.rs",
        "fn span(a: u32)",
        "fn span(a: usize)",
        Ok("applied"),
    );
    r.turn(100)
        .shell("cargo build 2>&1", false, &cargo_errors(1));
    r.turn(100)
        .edit("src/lexer.rs", "Some(a as u32)", "Some(a)", Ok("applied"));
    r.turn(100).shell(
        "cargo build 2>&1 | tail -5",
        true,
        "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 2.31s\n",
    );
    r.turn(100).shell(
        "cargo test",
        true,
        "running 14 tests\ntest result: ok. 14 passed; 0 failed\n",
    );
    r.todos(json!([{"id": "1", "status": "completed", "content": "fix lexer types", "verifyCommand": "cargo test"}]));
    r.complete("completed", "Lexer compiles; 14 tests pass.");
    r.ledger = Some("completed".into());
    let expected = json!({"story": "healthy: cargo build errors fall 5 -> 3 -> 1 -> 0 across edits; cosmetic variants of one build", "runs": {r.id.clone(): [
        {"guard": "family_normalization", "action": "merge", "turn": 4, "family": "shell:cargo build"},
        {"guard": "family_normalization", "action": "merge", "turn": 6, "family": "shell:cargo build"}
    ]}, "folded_frames": {r.id.clone(): 0}});
    project(root, "healthy-cargo", &[r], None, expected);
}

fn jest(failed: usize, passed: usize) -> String {
    format!(
        "FAIL src/auth.test.js\nTests:       {failed} failed, {passed} passed, {} total\n",
        failed + passed
    )
}

fn healthy_npm(root: &Path) {
    let mut r = Run::new("1783203600000-h2npm0", "/home/dev/webapp", 5000);
    r.turn(200)
        .shell("npm test 2>&1 | tail -40", false, &jest(4, 20));
    r.turn(200).edit(
        "src/auth.js",
        "return token;",
        "return token.trim();",
        Ok("applied"),
    );
    r.turn(200).shell("npm test", false, &jest(2, 22));
    // A stale edit that recovers the way WO-TD-01 asks: read, then edit the current text.
    r.turn(200).edit(
        "src/auth.js",
        "return token;",
        "return token.trim();",
        Err((
            "old_string_not_found",
            "old_string not found in src/auth.js",
        )),
    );
    r.turn(200).read(
        "src/auth.js",
        "export function t(token) { return token.trim(); }\nexport const ttl = 30;\n",
    );
    r.turn(200).edit(
        "src/auth.js",
        "export const ttl = 30;",
        "export const ttl = 3600;",
        Ok("applied"),
    );
    r.turn(200).shell(
        "npm test 2>&1",
        true,
        "PASS src/auth.test.js\nTests:       24 passed, 24 total\n",
    );
    // A different command: must not merge with `npm test`.
    r.turn(200).shell(
        "npm run test:e2e",
        false,
        "FAIL e2e/login.spec.js\nTests: 1 failed, 5 passed\n",
    );
    r.turn(200).edit(
        "e2e/login.spec.js",
        "await page.click('#go')",
        "await page.click('#login')",
        Ok("applied"),
    );
    r.turn(200).shell(
        "npm run test:e2e",
        true,
        "PASS e2e/login.spec.js\nTests: 6 passed\n",
    );
    r.complete("completed", "auth fixed; unit and e2e suites pass");
    r.ledger = Some("completed".into());
    let expected = json!({"story": "healthy: jest failures fall 4 -> 2 -> 0; a stale edit recovered by a read; npm test and npm run test:e2e stay apart", "runs": {r.id.clone(): [
        {"guard": "family_normalization", "action": "merge", "turn": 3, "family": "shell:npm test"}
    ]}, "folded_frames": {r.id.clone(): 0}});
    project(root, "healthy-npm", &[r], None, expected);
}

fn healthy_pytest_make(root: &Path) {
    let mut r = Run::new("1783207200000-h3py00", "/home/dev/pipeline", 4000);
    r.turn(150).shell("make", false, "cc -c src/io.c\nsrc/io.c:12:3: error: unknown type name 'buf_t'\nsrc/io.c:30:5: error: implicit declaration of function 'flush'\nmake: *** [Makefile:8: io.o] Error 1\n");
    r.turn(150).edit(
        "src/io.c",
        "#include \"io.h\"",
        "#include \"io.h\"\n#include \"buf.h\"",
        Ok("applied"),
    );
    r.turn(150).shell(
        "cd /home/dev/pipeline && make 2>/dev/null",
        false,
        "src/io.c:30:5: error: implicit declaration of function 'flush'\nmake: *** Error 1\n",
    );
    r.turn(150).shell("make clean", true, "rm -f *.o\n");
    r.turn(150)
        .edit("src/io.c", "flush(b);", "buf_flush(b);", Ok("applied"));
    r.turn(150)
        .shell("make", true, "cc -o pipeline src/io.o src/main.o\n");
    r.turn(150).shell(
        "pytest -q 2>&1 | tail -20",
        false,
        "FAILED tests/test_io.py::test_roundtrip\n1 failed, 11 passed in 0.40s\n",
    );
    r.turn(150).edit(
        "tests/test_io.py",
        "assert out == b'x'",
        "assert out == b'x\\n'",
        Ok("applied"),
    );
    r.turn(150).shell("pytest -q", true, "12 passed in 0.38s\n");
    r.complete("completed", "pipeline builds; tests pass");
    r.ledger = Some("completed".into());
    let expected = json!({"story": "healthy: make errors fall 2 -> 1 -> 0; make and make clean stay apart; pytest recovers", "runs": {r.id.clone(): [
        {"guard": "family_normalization", "action": "merge", "turn": 3, "family": "shell:make"}
    ]}, "folded_frames": {r.id.clone(): 0}});
    project(root, "healthy-pytest-make", &[r], None, expected);
}

fn healthy_go(root: &Path) {
    let mut r = Run::new("1783210800000-h4go00", "/home/dev/svc", 2500);
    r.turn(80).shell(
        "go build ./a",
        false,
        "# svc/a\na/a.go:7:2: undefined: Client\n",
    );
    r.turn(80).shell(
        "go build ./b",
        false,
        "# svc/b\nb/b.go:3:8: \"fmt\" imported and not used\n",
    );
    r.turn(80)
        .edit("a/a.go", "Client{}", "client.New()", Ok("applied"));
    r.turn(80)
        .edit("b/b.go", "import \"fmt\"\n", "", Ok("applied"));
    r.turn(80).shell("go build ./a", true, "");
    r.turn(80).shell("go build ./b", true, "");
    r.turn(80).shell(
        "go test ./... 2>&1 | tail",
        false,
        "--- FAIL: TestDial (0.00s)\nFAIL\tsvc/a\t0.01s\nok  \tsvc/b\t0.02s\n",
    );
    r.turn(80)
        .edit("a/a_test.go", "want := 2", "want := 3", Ok("applied"));
    r.turn(80).shell(
        "go test ./...",
        true,
        "ok  \tsvc/a\t0.01s\nok  \tsvc/b\t0.02s\n",
    );
    r.complete("completed", "both packages build; tests pass");
    r.ledger = Some("completed".into());
    let expected = json!({"story": "healthy: go build ./a and ./b are different families; go test recovers", "runs": {r.id.clone(): []}, "folded_frames": {r.id.clone(): 0}});
    project(root, "healthy-go", &[r], None, expected);
}

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpora".into()));
    if root.exists() {
        for name in [
            "myactuator",
            "telegram-dropbear",
            "healthy-cargo",
            "healthy-npm",
            "healthy-pytest-make",
            "healthy-go",
        ] {
            let _ = fs::remove_dir_all(root.join(name));
        }
    }
    myactuator(&root);
    dropbear(&root);
    healthy_cargo(&root);
    healthy_npm(&root);
    healthy_pytest_make(&root);
    healthy_go(&root);
}

//! Healthy controls: failures recover, cosmetic variants come with real progress, and
//! distinct commands stay distinct. No guard may cut these short.

use super::outputs::*;
use super::project;
use hindsight::synth::Run;
use serde_json::json;
use std::path::Path;

pub fn healthy_cargo(root: &Path) {
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

pub fn healthy_npm(root: &Path) {
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

pub fn healthy_pytest_make(root: &Path) {
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

pub fn healthy_go(root: &Path) {
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

/// A flaky network test fails twice in a row, then passes once the dependency is up: a
/// healthy run that an aggressive breaker (abandon at 2) would have cut short.
pub fn healthy_flaky_go(root: &Path) {
    let mut r = Run::new("1783400000000-h5flky", "/home/dev/notifier", 3_000);
    let timeout = "--- FAIL: TestDeliver (5.00s)\n    deliver_test.go:33: dial tcp 127.0.0.1:6379: connect: connection refused\nFAIL\tnotifier/deliver\t5.01s\nFAIL\n";
    r.turn(120).shell("go test ./deliver/...", false, timeout);
    r.turn(120)
        .shell("go test ./deliver/... 2>&1", false, timeout);
    r.turn(120).shell(
        "docker compose up -d redis",
        true,
        "Container notifier-redis-1  Started\n",
    );
    r.turn(120).shell(
        "go test ./deliver/...",
        true,
        "ok  \tnotifier/deliver\t0.41s\n",
    );
    r.complete("completed", "deliver tests pass once redis is up");
    r.ledger = Some("completed".into());
    let expected = json!({"story": "healthy: a flaky dependency fails twice, then the suite passes", "runs": {r.id.clone(): []}});
    project(root, "healthy-flaky-go", &[r], None, expected);
}

/// Generic shell: a configure-and-make build whose cosmetic variants come with progress,
/// and distinct targets that must stay distinct (`make` vs `make check`).
pub fn healthy_shell(root: &Path) {
    let mut r = Run::new("1783410000000-h6shel", "/home/dev/zstd-tools", 3_500);
    r.turn(150).shell(
        "./configure --prefix=/usr/local",
        true,
        "checking for gcc... gcc\nconfig.status: creating Makefile\n",
    );
    r.turn(150).shell("make -j2 2>&1 | tail -20", false, "src/lz.c:88:12: error: 'window' undeclared (first use in this function)\nsrc/lz.c:97:3: error: too few arguments to function 'emit'\nmake: *** [Makefile:30: src/lz.o] Error 1\n");
    r.turn(150).edit(
        "src/lz.c",
        "emit(out);",
        "emit(out, len);",
        Ok("applied 1 edit"),
    );
    r.turn(150).shell("make -j2", false, "src/lz.c:88:12: error: 'window' undeclared (first use in this function)\nmake: *** [Makefile:30: src/lz.o] Error 1\n");
    r.turn(150).edit(
        "src/lz.c",
        "size_t pos = 0;",
        "size_t pos = 0;\n    uint8_t window[WINDOW];",
        Ok("applied 1 edit"),
    );
    r.turn(150)
        .shell("make -j2", true, "cc -O2 -o zst src/lz.o src/main.o\n");
    r.turn(150).shell(
        "make check",
        true,
        "PASS: roundtrip\nPASS: empty\n2 passed\n",
    );
    r.turn(150)
        .shell("bash scripts/smoke.sh", true, "smoke: ok\n");
    r.complete("completed", "builds; make check and smoke pass");
    r.ledger = Some("completed".into());
    let expected = json!({"story": "healthy: gcc errors fall 2 -> 1 -> 0; make and make check stay apart", "runs": {r.id.clone(): [
        {"guard": "family_normalization", "action": "merge", "turn": 4, "family": "shell:make -j2"}
    ]}});
    project(root, "healthy-shell", &[r], None, expected);
}

fn tsc_errors(n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        out.push_str(&format!("src/store/cart.ts({},9): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.\n", 20 + i));
    }
    out.push_str(&format!("\nFound {n} errors.\n"));
    out
}

/// npm/tsc: a typed refactor with a declared verifier run exactly, todos kept true.
pub fn healthy_tsc(root: &Path) {
    let mut r = Run::new("1783420000000-h7tsc0", "/home/dev/shop", 6_000);
    r.turn(200).todos(json!([
        {"id": "1", "status": "in_progress", "content": "Type the cart store", "verifyCommand": "npx tsc --noEmit && npm test"},
        {"id": "2", "parentId": "1", "status": "in_progress", "content": "Numeric quantities"}
    ]));
    r.turn(200).shell("npx tsc --noEmit", false, &tsc_errors(3));
    r.turn(200).edit(
        "src/store/cart.ts",
        "qty: string",
        "qty: number",
        Ok("applied 1 edit"),
    );
    r.turn(200)
        .shell("npx tsc --noEmit 2>&1 | head -20", false, &tsc_errors(1));
    r.turn(200).edit(
        "src/store/cart.ts",
        "add(id, '1')",
        "add(id, 1)",
        Ok("applied 1 edit"),
    );
    r.turn(200).shell(
        "npx tsc --noEmit && npm test",
        true,
        "PASS src/store/cart.test.ts\nTests:       18 passed, 18 total\n",
    );
    r.turn(200).todos(json!([
        {"id": "1", "status": "completed", "content": "Type the cart store", "verifyCommand": "npx tsc --noEmit && npm test"},
        {"id": "2", "parentId": "1", "status": "completed", "content": "Numeric quantities"}
    ]));
    r.complete("completed", "cart store typed; tsc clean; 18 tests pass");
    r.ledger = Some("completed".into());
    let expected = json!({"story": "healthy: tsc errors fall 3 -> 1 -> 0; the declared verifier runs exactly before completion", "runs": {r.id.clone(): [
        {"guard": "family_normalization", "action": "merge", "turn": 4, "family": "shell:npx tsc --noEmit"}
    ]}});
    project(root, "healthy-tsc", &[r], None, expected);
}

/// cargo workspace: per-package commands are different work (`-p a` vs `-p b`), and each
/// recovers on its own.
pub fn healthy_cargo_workspace(root: &Path) {
    let mut r = Run::new("1783430000000-h8ws00", "/home/dev/ledger-ws", 4_500);
    r.turn(150).todos(json!([{"id": "ws", "status": "in_progress", "content": "Make both crates pass", "verifyCommand": "cargo test --workspace"}]));
    r.turn(150)
        .shell("cargo test -p core", false, &cargo_errors(2));
    r.turn(150).shell(
        "cargo test -p cli",
        false,
        "test parse_args ... FAILED\ntest result: FAILED. 6 passed; 1 failed\n",
    );
    r.turn(150).edit(
        "core/src/lexer.rs",
        "fn span(a: u32)",
        "fn span(a: usize)",
        Ok("applied 1 edit"),
    );
    r.turn(150).shell(
        "cargo test -p core",
        true,
        "test result: ok. 21 passed; 0 failed\n",
    );
    r.turn(150).edit(
        "cli/src/args.rs",
        "\"--verbose\"",
        "\"--verbose\" | \"-v\"",
        Ok("applied 1 edit"),
    );
    r.turn(150).shell(
        "cargo test -p cli 2>&1 | tail -5",
        true,
        "test result: ok. 7 passed; 0 failed\n",
    );
    r.turn(150).shell(
        "cargo test --workspace",
        true,
        "test result: ok. 21 passed; 0 failed\ntest result: ok. 7 passed; 0 failed\n",
    );
    r.turn(150).todos(json!([{"id": "ws", "status": "completed", "content": "Make both crates pass", "verifyCommand": "cargo test --workspace"}]));
    r.complete("completed", "workspace tests pass");
    r.ledger = Some("completed".into());
    let expected = json!({"story": "healthy: per-package cargo commands stay distinct and recover independently", "runs": {r.id.clone(): []}});
    project(root, "healthy-cargo-workspace", &[r], None, expected);
}

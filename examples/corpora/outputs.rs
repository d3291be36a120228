//! Tool outputs the stories share: compiler, test-runner and harness text.

pub fn gcc_errors(n: usize) -> String {
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

pub fn focus_block(turn: u32, family: &str) -> String {
    format!("[FOCUS SUPERVISOR] turn {turn}: family `{family}` failed again; required_next_action=forced_replan. Blocked families: {family}")
}

pub fn run_evidence(turn: u32, what: &str) -> String {
    format!("[RUN EVIDENCE] turn {turn}: {what}")
}

pub fn cargo_errors(n: usize) -> String {
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

pub fn jest(failed: usize, passed: usize) -> String {
    format!(
        "FAIL src/auth.test.js\nTests:       {failed} failed, {passed} passed, {} total\n",
        failed + passed
    )
}

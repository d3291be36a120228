//! What the generated tools print: compiler errors, build successes and test-runner
//! reports, shaped like each ecosystem's real output.

use super::eco::{fill, Eco, Lang, IDENTS};
use crate::rng::Rng;

impl Lang {
    pub(super) fn build_errors(self, rng: &mut Rng, eco: &Eco, cwd: &str, n: usize) -> String {
        let mut out = String::new();
        let file = |rng: &mut Rng| rng.pick(&eco.files[..eco.files.len() - 1]).to_string();
        match self {
            Lang::Rust => {
                out.push_str(&format!("   Compiling {} v0.3.0 ({cwd})\n", eco.project));
                for _ in 0..n {
                    let (f, line, col) = (file(rng), rng.range(10, 900), rng.range(5, 40));
                    let e = match rng.below(4) {
                        0 => format!("error[E0308]: mismatched types\n  --> {f}:{line}:{col}\n    |\n{line:>3} |         let {}: u32 = {}.len();\n    |                ---   ^^^^^^^^^^^ expected `u32`, found `usize`\n    |                |\n    |                expected due to this\n    |\nhelp: you can convert a `usize` to a `u32` and panic if the converted value doesn't fit\n    |\n{line:>3} |         let n: u32 = tok.len().try_into().unwrap();\n    |                               ++++++++++++++++++++\n\n", rng.pick(&IDENTS), rng.pick(&IDENTS)),
                        1 => fill(rng, &format!("error[E0425]: cannot find value `{{v}}` in this scope\n  --> {f}:{line}:{col}\n    |\n{line:>3} |         self.{{w}} += {{v}};\n    |                       ^^^^^ help: a local variable with a similar name exists: `{{w}}`\n\n")),
                        2 => fill(rng, &format!("error[E0599]: no method named `{{f}}` found for struct `{{T}}` in the current scope\n  --> {f}:{line}:{col}\n    |\n{line:>3} |         let x = {{v}}.{{f}}(&{{w}});\n    |                       ^^^^^^^^^^ method not found in `{{T}}`\n    |\n   ::: src/ast.rs:{{n}}:1\n    |\n    = note: the method was found for\n            - `{{T}}<Span>`\n\n")),
                        _ => fill(rng, &format!("error[E0382]: borrow of moved value: `{{v}}`\n  --> {f}:{line}:{col}\n    |\n{line:>3} |     let {{w}} = {{v}};\n    |                 - value moved here\n{:>3} |     {{f}}(&{{v}});\n    |          ^^ value borrowed here after move\n    |\n    = note: move occurs because `{{v}}` has type `Vec<{{T}}>`, which does not implement the `Copy` trait\n\n", line + 1)),
                    };
                    out.push_str(&e);
                }
                if rng.chance(40) {
                    out.push_str(&fill(rng, "warning: unused variable: `{v}`\n  --> src/span.rs:{n}:9\n   |\n   = note: `#[warn(unused_variables)]` on by default\n\n"));
                }
                out.push_str(&format!(
                    "error: could not compile `{}` (lib) due to {n} previous error{}\n",
                    eco.project,
                    if n == 1 { "" } else { "s" }
                ));
            }
            Lang::Cpp => {
                let pio = eco.builds[0].contains("pio");
                for _ in 0..n {
                    let (f, line, col) = (file(rng), rng.range(10, 900), rng.range(3, 30));
                    let base = f.rsplit('/').next().unwrap_or("x").to_string();
                    if pio {
                        out.push_str(&format!("Compiling .pio/build/esp32dev/src/{base}.o\n"));
                    } else {
                        out.push_str(&format!(
                            "[ {:>2}%] Building CXX object src/CMakeFiles/engine.dir/{base}.o\n",
                            rng.range(10, 95)
                        ));
                    }
                    let e = match rng.below(3) {
                        0 => fill(rng, &format!("{f}:{line}:{col}: error: 'struct {{T}}' has no member named '{{v}}'\n  {line} |     cfg.{{v}} = {{n}};\n      |         ^~~~~\n")),
                        1 => fill(rng, &format!("In file included from {f}:3:\n{f}:{line}:{col}: error: redefinition of 'struct {{T}}'\n  {line} | struct {{T}} {{ int id; }};\n      |        ^~~~~~~~~~~\n{f}:12:8: note: previous definition of 'struct {{T}}'\n   12 | struct {{T}} {{ float kp; }};\n      |        ^~~~~~~~~~~\n")),
                        _ => fill(rng, &format!("{f}: In function 'void {{f}}({{T}}&)':\n{f}:{line}:{col}: error: invalid conversion from 'const char*' to 'int' [-fpermissive]\n  {line} |     int {{v}} = \"{{w}}\";\n      |                ^~~~~~\n      |                |\n      |                const char*\n")),
                    };
                    out.push_str(&e);
                }
                if pio {
                    out.push_str(&format!("*** [.pio/build/esp32dev/src/pal.cpp.o] Error 1\n========================= [FAILED] Took {}.{:02} seconds =========================\n", rng.range(2, 40), rng.below(100)));
                } else {
                    out.push_str("make[2]: *** [src/CMakeFiles/engine.dir/build.make:76: src/CMakeFiles/engine.dir/scene.cpp.o] Error 1\nmake[1]: *** [CMakeFiles/Makefile2:97: src/CMakeFiles/engine.dir/all] Error 2\ngmake: *** [Makefile:91: all] Error 2\n");
                }
            }
            Lang::Ts => {
                for _ in 0..n {
                    let (f, line, col) = (file(rng), rng.range(3, 400), rng.range(3, 40));
                    let e = match rng.below(3) {
                        0 => format!("{f}({line},{col}): error TS2322: Type 'string | undefined' is not assignable to type 'string'.\n  Type 'undefined' is not assignable to type 'string'.\n"),
                        1 => fill(rng, &format!("{f}({line},{col}): error TS2339: Property '{{v}}' does not exist on type '{{T}}'.\n")),
                        _ => fill(rng, &format!("{f}({line},{col}): error TS2345: Argument of type '{{T}}' is not assignable to parameter of type '{{T}}Props'.\n  Types of property '{{v}}' are incompatible.\n    Type 'number' is not assignable to type 'string'.\n")),
                    };
                    out.push_str(&e);
                }
                out.push_str(&format!(
                    "\nFound {n} error{} in {} file{}.\n\nErrors  Files\n",
                    if n == 1 { "" } else { "s" },
                    n.min(4),
                    if n == 1 { "" } else { "s" }
                ));
                for f in eco.files.iter().take(n.min(4)) {
                    out.push_str(&format!("     {}  {f}\n", rng.range(1, 3)));
                }
            }
            Lang::Py => {
                for _ in 0..n {
                    let (f, line) = (file(rng), rng.range(3, 600));
                    let e = match rng.below(3) {
                        0 => format!("{f}:{line}: error: Incompatible types in assignment (expression has type \"str\", variable has type \"int\")  [assignment]\n"),
                        1 => fill(rng, &format!("{f}:{line}: error: Item \"None\" of \"{{T}} | None\" has no attribute \"{{v}}\"  [union-attr]\n")),
                        _ => fill(rng, &format!("{f}:{line}: error: Argument 1 to \"{{f}}\" of \"{{T}}\" has incompatible type \"list[str]\"; expected \"str\"  [arg-type]\n{f}:{line}: note: Revealed type is \"builtins.list[builtins.str]\"\n")),
                    };
                    out.push_str(&e);
                }
                out.push_str(&format!(
                    "Found {n} error{} in {} file{} (checked 24 source files)\n",
                    if n == 1 { "" } else { "s" },
                    n.min(3),
                    if n == 1 { "" } else { "s" }
                ));
            }
            Lang::Go => {
                out.push_str("# svc/internal/store\n");
                for _ in 0..n {
                    let (f, line, col) = (file(rng), rng.range(3, 400), rng.range(2, 30));
                    let e = match rng.below(3) {
                        0 => fill(rng, &format!("{f}:{line}:{col}: undefined: {{T}}\n")),
                        1 => fill(rng, &format!("{f}:{line}:{col}: cannot use {{v}} (variable of type int) as string value in argument to s.{{f}}\n")),
                        _ => fill(rng, &format!("{f}:{line}:{col}: \"{{w}}\" imported and not used\n")),
                    };
                    out.push_str(&e);
                }
                if n > 10 {
                    out.push_str("too many errors\n");
                }
            }
            Lang::Kotlin => {
                out.push_str("> Task :app:preBuild UP-TO-DATE\n> Task :app:preDebugBuild UP-TO-DATE\n> Task :app:generateDebugBuildConfig UP-TO-DATE\n> Task :app:compileDebugKotlin FAILED\n");
                for _ in 0..n {
                    let (f, line, col) = (file(rng), rng.range(3, 400), rng.range(5, 60));
                    let e = match rng.below(3) {
                        0 => fill(rng, &format!("e: file://{cwd}/{f}:{line}:{col} Unresolved reference: {{v}}\n")),
                        1 => fill(rng, &format!("e: file://{cwd}/{f}:{line}:{col} Type mismatch: inferred type is String? but String was expected\n")),
                        _ => fill(rng, &format!("e: file://{cwd}/{f}:{line}:{col} Suspend function '{{f}}' should be called only from a coroutine or another suspend function\n")),
                    };
                    out.push_str(&e);
                }
                out.push_str(&format!("\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for task ':app:compileDebugKotlin'.\n> A failure occurred while executing org.jetbrains.kotlin.compilerRunner.GradleCompilerRunnerWithWorkers$GradleKotlinCompilerWorkAction\n   > Compilation error. See log for more details\n\n* Try:\n> Run with --stacktrace option to get the stack trace.\n> Run with --info or --debug option to get more log output.\n\nBUILD FAILED in {}s\n23 actionable tasks: 4 executed, 19 up-to-date\n", rng.range(4, 90)));
            }
        }
        out
    }

    pub(super) fn build_ok(self, rng: &mut Rng, eco: &Eco, cwd: &str) -> String {
        match self {
            Lang::Rust => format!("   Compiling {} v0.3.0 ({cwd})\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in {}.{:02}s\n", eco.project, rng.range(1, 60), rng.below(100)),
            Lang::Cpp if eco.builds[0].contains("pio") => format!("Processing esp32dev (platform: espressif32; board: esp32dev; framework: arduino)\nBuilding in release mode\nLinking .pio/build/esp32dev/firmware.elf\nRAM:   [=         ]  {}.1% (used 21012 bytes from 327680 bytes)\nFlash: [===       ]  {}.4% (used 301245 bytes from 1310720 bytes)\n========================= [SUCCESS] Took {}.{:02} seconds =========================\n", rng.range(5, 9), rng.range(20, 30), rng.range(3, 40), rng.below(100)),
            Lang::Cpp => "[ 50%] Building CXX object src/CMakeFiles/engine.dir/scene.cpp.o\n[ 75%] Linking CXX static library libengine.a\n[100%] Built target engine\n".to_string(),
            Lang::Ts => String::new(),
            Lang::Py => format!("Success: no issues found in {} source files\n", rng.range(20, 40)),
            Lang::Go => String::new(),
            Lang::Kotlin => format!("> Task :app:compileDebugKotlin\n> Task :app:assembleDebug\n\nBUILD SUCCESSFUL in {}s\n41 actionable tasks: 6 executed, 35 up-to-date\n", rng.range(4, 90)),
        }
    }

    pub(super) fn tests_failed(
        self,
        rng: &mut Rng,
        eco: &Eco,
        failed: usize,
        passed: usize,
    ) -> String {
        let total = failed + passed;
        let mut out = String::new();
        match self {
            Lang::Rust => {
                out.push_str(&format!("running {total} tests\n"));
                let names: Vec<String> =
                    (0..failed).map(|_| fill(rng, "{w}::tests::{f}")).collect();
                for name in &names {
                    out.push_str(&format!("test {name} ... FAILED\n"));
                }
                out.push_str("\nfailures:\n\n");
                for name in &names {
                    out.push_str(&format!("---- {name} stdout ----\nthread '{name}' panicked at {}:{}:{}:\nassertion `left == right` failed\n  left: {}\n right: {}\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n", eco.files[0], rng.range(10, 900), rng.range(5, 30), rng.below(100), rng.below(100)));
                }
                out.push_str(&format!("\ntest result: FAILED. {passed} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.{:02}s\n", rng.below(100)));
            }
            Lang::Ts => {
                for _ in 0..failed {
                    out.push_str(&fill(rng, "FAIL src/{w}.test.ts\n  ● {T} › {f}\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: \"{v}\"\n    Received: undefined\n\n      {n} |   const res = await {f}(input);\n    > {n} |   expect(res.{v}).toBe('{v}');\n          |                   ^\n\n"));
                }
                out.push_str(&format!("Tests:       {failed} failed, {passed} passed, {total} total\nSnapshots:   0 total\nTime:        {}.{:03} s\n", rng.range(1, 20), rng.below(1000)));
            }
            Lang::Py => {
                out.push_str(&format!("{}\n=================================== FAILURES ===================================\n", ".".repeat(passed.min(60)) + &"F".repeat(failed)));
                for _ in 0..failed {
                    out.push_str(&fill(rng, "_________________________________ test_{f} _________________________________\n\n    def test_{f}():\n        {v} = {T}({w}={n})\n>       assert {v}.{f}() == {n}\nE       AssertionError: assert {n} == {n}\nE        +  where {n} = <bound method {T}.{f} of {T}({w}={n})>()\n\ntests/test_io.py:{n}: AssertionError\n"));
                }
                out.push_str(&format!("=========================== short test summary info ============================\nFAILED tests/test_io.py::test_roundtrip - AssertionError\n{failed} failed, {passed} passed in 0.{:02}s\n", rng.below(100)));
            }
            Lang::Go => {
                for _ in 0..failed {
                    out.push_str(&fill(rng, "--- FAIL: Test{T} (0.00s)\n    store_test.go:{n}: {f}: got {n}, want {n}\n"));
                }
                out.push_str(&format!("FAIL\nFAIL\tsvc/internal/store\t0.{:03}s\nok  \tsvc/internal/api\t0.{:03}s\nFAIL\n", rng.below(1000), rng.below(1000)));
            }
            Lang::Cpp => {
                for i in 0..total {
                    if i < failed {
                        out.push_str(&fill(rng, &format!("{:>3}/{total} Test #{:>3}: {{f}} ......................***Failed    0.0{{n}} sec\n", i + 1, i + 1)));
                    } else if i < failed + 8 {
                        out.push_str(&fill(rng, &format!("{:>3}/{total} Test #{:>3}: {{f}} ......................   Passed    0.01 sec\n", i + 1, i + 1)));
                    }
                }
                out.push_str(&format!("\n{}% tests passed, {failed} tests failed out of {total}\n\nTotal Test time (real) =   0.{:02} sec\n", passed * 100 / total.max(1), rng.below(100)));
            }
            Lang::Kotlin => {
                for _ in 0..failed {
                    out.push_str(&fill(rng, "{T}Test > {f}() FAILED\n    org.opentest4j.AssertionFailedError: expected: <{n}> but was: <{n}>\n        at app//com.example.app.{T}Test.{f}({T}Test.kt:{n})\n\n"));
                }
                out.push_str(&format!("{total} tests completed, {failed} failed\n\n> Task :app:testDebugUnitTest FAILED\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for task ':app:testDebugUnitTest'.\n> There were failing tests. See the report at: file:///build/reports/tests/testDebugUnitTest/index.html\n\nBUILD FAILED in {}s\n", rng.range(5, 60)));
            }
        }
        out
    }

    pub(super) fn tests_passed(self, rng: &mut Rng, passed: usize) -> String {
        match self {
            Lang::Rust => format!("running {passed} tests\n{}\ntest result: ok. {passed} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.{:02}s\n", ".".repeat(passed), rng.below(100)),
            Lang::Ts => format!("PASS src/auth.test.ts\nPASS src/store.test.ts\n\nTests:       {passed} passed, {passed} total\nSnapshots:   0 total\nTime:        {}.{:03} s\n", rng.range(1, 20), rng.below(1000)),
            Lang::Py => format!("{}\n{passed} passed in 0.{:02}s\n", ".".repeat(passed), rng.below(100)),
            Lang::Go => format!("ok  \tsvc/internal/store\t0.{:03}s\nok  \tsvc/internal/api\t0.{:03}s\n", rng.below(1000), rng.below(1000)),
            Lang::Cpp => format!("100% tests passed, 0 tests failed out of {passed}\n\nTotal Test time (real) =   0.{:02} sec\n", rng.below(100)),
            Lang::Kotlin => format!("> Task :app:testDebugUnitTest\n{passed} tests completed, 0 failed\n\nBUILD SUCCESSFUL in {}s\n", rng.range(5, 60)),
        }
    }
}

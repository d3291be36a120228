//! Writes a large, deterministic `.omnius/` corpus for the replay throughput benchmark
//! (`scripts/bench.sh`, docs/PERFORMANCE.md).
//!
//! ```sh
//! cargo run --release --example synth_corpus -- OUT_DIR --mb 100 --seed 7
//! ```
//!
//! Options: `--mb N` (approximate size, default 100; fractions allowed), `--seed N`
//! (default 7), `--projects N` (default 8), `--force`.
//!
//! The corpus holds several projects, one per build ecosystem (PlatformIO, cargo, npm/tsc,
//! mypy/pytest, go, cmake, gradle), each with several sessions whose run ids are
//! `<epochms>-<suffix>` with increasing epochs, so they replay in order and the breaker's
//! cross-session carry is exercised (a session often resumes the previous one's failing
//! build). Sessions mix reads, searches, edits (including stale `old_string not found` and
//! hash-mismatch retries), builds and tests with cosmetic variants (`2>&1 | tail -50`,
//! `cd <cwd> && ...`) and compiler-like outputs of a few hundred bytes to a few KB,
//! focus-supervisor directives and dedup records. Every turn records `model_usage`; every
//! few turns a context frame is written whose messages total 50-400 KB (a 24-144 KB system
//! prompt, the latest tool results, `[RUN EVIDENCE]` and focus blocks, a repository map
//! and pinned files).
//!
//! Everything goes through `hindsight::synth::Run`, so the corpus is the format ingest
//! reads. The same options always produce the same bytes: the only randomness is the
//! seeded splitmix64 generator below.
//!
//! It writes only inside OUT_DIR and refuses an OUT_DIR that exists and is not empty,
//! unless `--force` is given; then it replaces only the project directories it generates
//! (`OUT_DIR/<project>/`) and leaves anything else there alone.

use hindsight::synth::{pretty, Run};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: synth_corpus OUT_DIR [--mb N] [--seed N] [--projects N] [--force]";

/// splitmix64: small, fast, and good enough to vary a corpus deterministically.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    fn usize(&mut self, lo: usize, hi: usize) -> usize {
        self.range(lo as u64, hi as u64) as usize
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    fn suffix(&mut self) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        (0..6)
            .map(|_| ALPHABET[self.below(ALPHABET.len() as u64) as usize] as char)
            .collect()
    }

    fn hash(&mut self) -> String {
        format!("{:06x}", self.below(0x100_0000))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Lang {
    Rust,
    Cpp,
    Ts,
    Py,
    Go,
    Kotlin,
}

/// One project's ecosystem: its commands, its files and the shape of its tools' output.
struct Eco {
    project: &'static str,
    lang: Lang,
    /// Build commands (a firmware layout builds in a subdirectory: `cd SUB && ...`).
    builds: &'static [&'static str],
    tests: &'static [&'static str],
    files: &'static [&'static str],
}

const ECOS: [Eco; 8] = [
    Eco {
        project: "firmware-motor",
        lang: Lang::Cpp,
        builds: &[
            "cd firmware/esp32 && pio run",
            "cd firmware/esp32 && pio run -e esp32dev_debug",
        ],
        tests: &["cd firmware/esp32 && pio test -e native"],
        files: &[
            "firmware/esp32/src/pal.cpp",
            "firmware/esp32/include/types.h",
            "firmware/esp32/src/can_bus.cpp",
            "firmware/esp32/src/motor.cpp",
            "firmware/esp32/platformio.ini",
        ],
    },
    Eco {
        project: "parser",
        lang: Lang::Rust,
        builds: &[
            "cargo build",
            "cargo check --all-targets",
            "cargo clippy -- -D warnings",
        ],
        tests: &["cargo test", "cargo test lexer::"],
        files: &[
            "src/lexer.rs",
            "src/parser.rs",
            "src/ast.rs",
            "src/span.rs",
            "Cargo.toml",
        ],
    },
    Eco {
        project: "webapp",
        lang: Lang::Ts,
        builds: &["npx tsc --noEmit", "npm run build"],
        tests: &["npm test", "npx jest src/auth"],
        files: &[
            "src/auth.ts",
            "src/api/client.ts",
            "src/components/Login.tsx",
            "src/store.ts",
            "package.json",
        ],
    },
    Eco {
        project: "pipeline",
        lang: Lang::Py,
        builds: &["mypy src", "mypy src --strict"],
        tests: &["pytest -q", "python -m pytest tests/test_io.py"],
        files: &[
            "src/pipeline/io.py",
            "src/pipeline/stages.py",
            "src/pipeline/config.py",
            "tests/test_io.py",
            "pyproject.toml",
        ],
    },
    Eco {
        project: "svc",
        lang: Lang::Go,
        builds: &["go build ./...", "go vet ./..."],
        tests: &["go test ./...", "go test ./internal/store -run TestPut"],
        files: &[
            "internal/store/store.go",
            "internal/api/handler.go",
            "cmd/svc/main.go",
            "internal/store/store_test.go",
            "go.mod",
        ],
    },
    Eco {
        project: "engine",
        lang: Lang::Cpp,
        builds: &["cmake --build build -j2", "make -C build"],
        tests: &["ctest --test-dir build --output-on-failure"],
        files: &[
            "src/renderer.cpp",
            "src/scene.cpp",
            "include/engine/scene.hpp",
            "tests/scene_test.cpp",
            "CMakeLists.txt",
        ],
    },
    Eco {
        project: "android-app",
        lang: Lang::Kotlin,
        builds: &["./gradlew assembleDebug", "./gradlew compileDebugKotlin"],
        tests: &["./gradlew testDebugUnitTest"],
        files: &[
            "app/src/main/java/com/example/app/MainActivity.kt",
            "app/src/main/java/com/example/app/LoginViewModel.kt",
            "app/src/main/java/com/example/app/data/Repository.kt",
            "app/build.gradle.kts",
        ],
    },
    Eco {
        project: "sim",
        lang: Lang::Rust,
        builds: &["cargo build --workspace", "cargo build -p sim-core"],
        tests: &["cargo test -p sim-core", "cargo nextest run"],
        files: &[
            "crates/sim-core/src/world.rs",
            "crates/sim-core/src/step.rs",
            "crates/sim-io/src/lib.rs",
            "crates/sim-core/tests/step.rs",
        ],
    },
];

const IDENTS: [&str; 20] = [
    "token", "span", "buf", "config", "state", "frame", "motor", "client", "store", "item", "node",
    "reader", "writer", "offset", "count", "request", "session", "handle", "value", "path",
];
const TYPES: [&str; 15] = [
    "Token",
    "Span",
    "Config",
    "State",
    "Frame",
    "MotorConfig",
    "Client",
    "Store",
    "Item",
    "Node",
    "Reader",
    "Request",
    "Session",
    "Handle",
    "Value",
];

/// Fills `{v}`, `{w}`, `{f}`, `{T}`, `{n}` in a template.
fn fill(rng: &mut Rng, template: &str) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let (text, len) = if after.starts_with("{v}") || after.starts_with("{w}") {
            (rng.pick(&IDENTS).to_string(), 3)
        } else if after.starts_with("{f}") {
            (
                format!(
                    "{}_{}",
                    rng.pick(&[
                        "parse", "load", "apply", "update", "read", "emit", "resolve", "check"
                    ]),
                    rng.pick(&IDENTS)
                ),
                3,
            )
        } else if after.starts_with("{T}") {
            (rng.pick(&TYPES).to_string(), 3)
        } else if after.starts_with("{n}") {
            (rng.below(4096).to_string(), 3)
        } else {
            ("{".to_string(), 1)
        };
        out.push_str(&text);
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

impl Lang {
    fn source_templates(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &[
                "use crate::{w}::{T};",
                "#[derive(Debug, Clone, PartialEq)]",
                "pub struct {T} {",
                "    pub {v}: u32,",
                "    pub {w}: Vec<{T}>,",
                "}",
                "impl {T} {",
                "    pub fn {f}(&mut self, {v}: &str) -> Result<Option<{T}>, Error> {",
                "        let {v} = self.{f}(&{w})?;",
                "        if {v}.is_empty() { return Ok(None); }",
                "        match {v}.get({n}) {",
                "            Some(x) => self.{w} += x.len() as u32,",
                "            None => return Err(Error::Missing({n})),",
                "        }",
                "    }",
                "    // {f}: keep the {w} in step with the {v}",
            ],
            Lang::Cpp => &[
                "#include \"{w}.h\"",
                "struct {T} {",
                "    float {v};",
                "    uint32_t {w}_id = {n};",
                "};",
                "void {f}({T}& {v}) {",
                "    if ({v}.{w}_id == {n}) { return; }",
                "    {v}.{w} = static_cast<float>({n}) * 0.5f;",
                "    for (size_t i = 0; i < {n}; ++i) { {f}({v}); }",
                "}",
                "// {f}: keep {w} in range",
                "static constexpr int k{T}Max = {n};",
            ],
            Lang::Ts => &[
                "import { {T} } from './{w}';",
                "export interface {T} {",
                "  {v}: string;",
                "  {w}?: number;",
                "}",
                "export async function {f}({v}: {T}): Promise<{T} | undefined> {",
                "  const {w} = await api.get(`/{v}/${{v}.id}`);",
                "  if (!{w}.ok) return undefined;",
                "  return { ...{v}, {w}: {n} };",
                "}",
                "// {f}: retry once on 401",
            ],
            Lang::Py => &[
                "from pipeline.{w} import {T}",
                "class {T}:",
                "    {v}: int = {n}",
                "    def {f}(self, {v}: str) -> \"{T} | None\":",
                "        {w} = self.{f}({v})",
                "        if not {w}:",
                "            return None",
                "        return {T}({v}={w}[{n}])",
                "",
                "# {f}: keep {w} sorted",
            ],
            Lang::Go => &[
                "import \"svc/internal/{w}\"",
                "type {T} struct {",
                "\t{v} string",
                "\t{w} int",
                "}",
                "func (s *{T}) {f}(ctx context.Context, {v} string) (*{T}, error) {",
                "\tif err := s.{f}(ctx, {w}); err != nil {",
                "\t\treturn nil, fmt.Errorf(\"{f}: %w\", err)",
                "\t}",
                "\treturn &{T}{ {v}: {v} }, nil",
                "}",
                "// {f} keeps {w} consistent.",
            ],
            Lang::Kotlin => &[
                "import com.example.app.{w}.{T}",
                "data class {T}(val {v}: String, val {w}: Int = {n})",
                "class {T}ViewModel(private val repo: Repository) : ViewModel() {",
                "    fun {f}({v}: String) {",
                "        viewModelScope.launch { _{w}.value = repo.{f}({v}) }",
                "    }",
                "}",
                "// {f}: debounce {w}",
            ],
        }
    }

    fn source(self, rng: &mut Rng, lines: usize) -> String {
        let templates = self.source_templates();
        let mut out = String::new();
        for _ in 0..lines {
            let template = rng_pick_str(rng, templates);
            out.push_str(&fill(rng, template));
            out.push('\n');
        }
        out
    }

    fn build_errors(self, rng: &mut Rng, eco: &Eco, cwd: &str, n: usize) -> String {
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

    fn build_ok(self, rng: &mut Rng, eco: &Eco, cwd: &str) -> String {
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

    fn tests_failed(self, rng: &mut Rng, eco: &Eco, failed: usize, passed: usize) -> String {
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

    fn tests_passed(self, rng: &mut Rng, passed: usize) -> String {
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

fn rng_pick_str(rng: &mut Rng, xs: &'static [&'static str]) -> &'static str {
    xs[rng.below(xs.len() as u64) as usize]
}

/// A cosmetic variant of a command: the same action, spelled differently (seed 000 WO-9).
fn variant(rng: &mut Rng, cmd: &str, cwd: &str) -> String {
    match rng.below(10) {
        0 | 1 => cmd.to_string(),
        2 => format!("{cmd} 2>&1"),
        3 => format!("{cmd} 2>&1 | tail -50"),
        4 => format!("{cmd} 2>&1 | tail -100"),
        5 => format!("{cmd} | head -60"),
        6 => format!("{cmd} 2>/dev/null"),
        7 => match cmd.strip_prefix("cd ") {
            Some(rest) => format!("cd {cwd}/{rest}"),
            None => format!("cd {cwd} && {cmd}"),
        },
        8 => format!("{cmd} 2>&1 | grep -E 'error|FAIL' | head -40"),
        _ => format!("{cmd}  "),
    }
}

/// One session being written, with what its frames draw on.
struct Session {
    run: Run,
    rng: Rng,
    eco: &'static Eco,
    cwd: String,
    /// Every result so far: call id and output length.
    results: Vec<(String, usize)>,
    evidence: Vec<String>,
    focus: Vec<String>,
    system_chars: usize,
    next_frame: u32,
    /// Bytes written so far, approximately (for the size budget).
    approx: usize,
    last_output: usize,
    frames: usize,
}

impl Session {
    fn begin(&mut self) {
        let growth = 60 + (self.last_output / 4) as u64 + self.rng.below(160);
        self.run.turn(growth);
        self.approx += 170;
    }

    fn after(&mut self, what: &str, ok: bool, output_len: usize, args_len: usize) {
        let turn = self.run.turn;
        self.results.push((self.run.last_call(), output_len));
        let status = if ok { "ok" } else { "failed" };
        self.evidence.push(format!(
            "[RUN EVIDENCE] turn {turn}: {what} {status} ({output_len} chars)"
        ));
        self.approx += output_len + 2 * args_len + 380;
        self.last_output = output_len;
        if turn >= self.next_frame {
            self.frame();
            self.next_frame = turn + self.rng.range(3, 7) as u32;
        }
    }

    fn shell(&mut self, cmd: &str, ok: bool, output: &str) {
        self.begin();
        self.run.shell(cmd, ok, output);
        self.after(&format!("shell {cmd}"), ok, output.len(), cmd.len());
    }

    fn edit(&mut self, path: &str, old: &str, new: &str, outcome: Result<&str, (&str, &str)>) {
        self.begin();
        let ok = outcome.is_ok();
        let len = match outcome {
            Ok(o) | Err((_, o)) => o.len(),
        };
        self.run.edit(path, old, new, outcome);
        self.after(&format!("file_edit {path}"), ok, len, old.len() + new.len());
    }

    fn hash_edit(&mut self, path: &str, old: &str, expected: &str, actual: &str) {
        self.begin();
        let id = self.run.call(
            "file_edit",
            json!({"path": path, "old_string": old, "new_string": "", "expected_hash": expected}),
        );
        let output = format!(
            "file_edit rejected: hash mismatch (expected_hash {expected}, file is {actual})"
        );
        self.run.result(
            &id,
            false,
            &output,
            json!({"errorClass": "hash_mismatch", "mutation": false}),
        );
        self.after(&format!("file_edit {path}"), false, output.len(), old.len());
    }

    fn read(&mut self, path: &str, output: &str) {
        self.begin();
        self.run.read(path, output);
        self.after(&format!("file_read {path}"), true, output.len(), path.len());
    }

    fn write(&mut self, path: &str, content: &str) {
        self.begin();
        self.run.write(path, content);
        self.after(&format!("file_write {path}"), true, 10, content.len());
    }

    fn directive(&mut self, action: &str, family: &str) {
        self.run.directive(action, family, "forced_replan");
        let turn = self.run.turn;
        self.focus.push(format!(
            "[FOCUS SUPERVISOR] turn {turn}: family `{family}` failed again; required_next_action={action}. Blocked families: {family}"
        ));
        self.approx += 260;
    }

    /// A context frame of 50-400 KB: system prompt, evidence and focus blocks, the latest
    /// tool results, and a repository map and pinned files filling the rest.
    fn frame(&mut self) {
        let turn = self.run.turn as usize;
        let mut target = 50_000 + turn * 2_200 + self.rng.usize(0, 60_000);
        if self.rng.chance(5) {
            target = self.rng.usize(360_000, 400_000);
        }
        let target = target.min(400_000);
        let mut blocks: Vec<String> = Vec::new();
        let skip_e = self.evidence.len().saturating_sub(40);
        blocks.extend(self.evidence[skip_e..].iter().cloned());
        let skip_f = self.focus.len().saturating_sub(24);
        blocks.extend(self.focus[skip_f..].iter().cloned());
        let fixed = self.system_chars + 40 + blocks.iter().map(String::len).sum::<usize>();
        let mut room = target.saturating_sub(fixed);
        let mut ids: Vec<String> = Vec::new();
        for (id, len) in self.results.iter().rev().take(200) {
            if *len > room {
                break;
            }
            room -= len;
            ids.push(id.clone());
        }
        ids.reverse();
        // The rest: a repository map and the files the harness pinned into context.
        if room > 2_000 {
            let map = self.rng.usize(1_000, 8_000).min(room - 100);
            blocks.insert(0, repo_map(&mut self.rng, self.eco, map));
            room -= map + 100;
            let mut pinned = 1;
            while room > 1_500 {
                let path = self.path();
                let lines = self.rng.usize(40, 300);
                let mut text = format!("[FILE CONTEXT] {path}\n");
                text.push_str(&self.source(lines));
                if text.len() > room {
                    let mut cut = room;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                }
                room -= text.len().min(room);
                blocks.insert(pinned, text);
                pinned += 1;
            }
        }
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        self.run.frame(self.system_chars, &refs, &blocks);
        self.approx += target + target / 25 + 3_000;
        self.frames += 1;
    }

    fn path(&mut self) -> String {
        let files = self.eco.files;
        self.rng.pick(&files[..files.len() - 1]).to_string()
    }

    /// A source line worth editing (not a lone brace or a blank).
    fn line(&mut self) -> String {
        loop {
            let template = rng_pick_str(&mut self.rng, self.eco.lang.source_templates());
            let line = fill(&mut self.rng, template);
            if line.trim().len() >= 8 {
                return line;
            }
        }
    }

    fn source(&mut self, lines: usize) -> String {
        self.eco.lang.source(&mut self.rng, lines)
    }

    fn build_errors(&mut self, n: usize) -> String {
        self.eco
            .lang
            .build_errors(&mut self.rng, self.eco, &self.cwd, n)
    }

    fn build_ok(&mut self) -> String {
        self.eco.lang.build_ok(&mut self.rng, self.eco, &self.cwd)
    }

    // --- episodes: each a few turns of a recognisable pattern ---

    fn explore(&mut self) {
        for _ in 0..self.rng.range(1, 3) {
            let path = self.path();
            let lines = self.rng.usize(20, 400);
            let text = self.source(lines);
            self.read(&path, &text);
        }
    }

    fn search(&mut self) {
        let word = self.rng.pick(&IDENTS).to_string();
        match self.rng.below(3) {
            0 => {
                let mut out = String::new();
                for _ in 0..self.rng.range(3, 40) {
                    let path = self.path();
                    let n = self.rng.range(1, 900);
                    let line = self.line();
                    out.push_str(&format!("{path}:{n}:{line}\n"));
                }
                self.shell(&format!("rg -n \"{word}\" ."), true, &out);
            }
            1 => {
                let mut out = String::from(" ");
                for f in self.eco.files {
                    out.push_str(&format!(
                        "{f} | {} {}\n ",
                        self.rng.range(1, 80),
                        "+".repeat(self.rng.usize(1, 30))
                    ));
                }
                out.push_str(&format!(
                    "{} files changed, {} insertions(+), {} deletions(-)\n",
                    self.eco.files.len(),
                    self.rng.range(5, 300),
                    self.rng.range(0, 120)
                ));
                self.shell("git diff --stat", true, &out);
            }
            _ => {
                let mut out = String::new();
                for _ in 0..self.rng.range(5, 60) {
                    out.push_str(&format!(
                        "{}/{}_{}.{}\n",
                        self.rng
                            .pick(&["src", "tests", "include", "docs", "scripts"]),
                        self.rng.pick(&IDENTS),
                        self.rng.below(50),
                        self.rng
                            .pick(&["rs", "cpp", "h", "ts", "py", "go", "kt", "md"])
                    ));
                }
                self.shell("ls -R | head -200", true, &out);
            }
        }
    }

    /// Build, fix, rebuild: errors fall, or stay stuck and draw focus directives.
    /// Returns the build and its count if it was left failing.
    fn fix_loop(&mut self, resume: Option<(String, usize)>) -> Option<(String, usize)> {
        let (build, mut n) = resume.unwrap_or_else(|| {
            let b = self.rng.pick(self.eco.builds).to_string();
            (b, self.rng.usize(1, 12))
        });
        let stuck = self.rng.chance(25);
        let attempts = self.rng.range(2, 7);
        let mut previous = String::new();
        let mut fails = 0;
        for _ in 0..attempts {
            let cmd = variant(&mut self.rng, &build, &self.cwd);
            if n == 0 {
                let ok = self.build_ok();
                self.shell(&cmd, true, &ok);
                return None;
            }
            let out = self.build_errors(n);
            self.shell(&cmd, false, &out);
            fails += 1;
            if cmd == previous {
                self.run.dedup(&format!("shell:{cmd}"));
            }
            if fails >= 3 && self.rng.chance(60) {
                self.directive("forced_replan", &format!("shell:{build}"));
            }
            previous = cmd;
            let path = self.path();
            let (old, new) = (self.line(), self.line());
            match self.rng.below(100) {
                0..=79 => self.edit(&path, &old, &new, Ok("applied 1 edit")),
                80..=91 => {
                    let msg = format!("old_string not found in {path}");
                    self.edit(&path, &old, &new, Err(("old_string_not_found", &msg)));
                }
                92..=96 => {
                    let (a, b) = (self.rng.hash(), self.rng.hash());
                    self.hash_edit(&path, &old, &a, &b);
                }
                _ => {
                    let msg = format!("file does not exist: {path}.bak");
                    self.edit(&format!("{path}.bak"), &old, &new, Err(("not_found", &msg)));
                }
            }
            if !stuck {
                n = n.saturating_sub(self.rng.usize(0, 3));
            } else if self.rng.chance(20) {
                n += 1;
            }
        }
        (n > 0).then_some((build, n))
    }

    fn test_loop(&mut self) {
        let test = self.rng.pick(self.eco.tests).to_string();
        let mut failed = self.rng.usize(0, 6);
        let passed = self.rng.usize(5, 80);
        for _ in 0..self.rng.range(1, 4) {
            let cmd = variant(&mut self.rng, &test, &self.cwd);
            if failed == 0 {
                let out = self.eco.lang.tests_passed(&mut self.rng, passed);
                self.shell(&cmd, true, &out);
                return;
            }
            let out = self
                .eco
                .lang
                .tests_failed(&mut self.rng, self.eco, failed, passed);
            self.shell(&cmd, false, &out);
            let path = self.path();
            let (old, new) = (self.line(), self.line());
            self.edit(&path, &old, &new, Ok("applied 1 edit"));
            failed = failed.saturating_sub(self.rng.usize(0, 3));
        }
    }

    /// One edit lands, then the same edit is retried against text that is gone.
    fn stale_loop(&mut self) {
        let path = self.path();
        let (old, new) = (self.line(), self.line());
        self.edit(&path, &old, &new, Ok("applied 1 edit"));
        let msg = format!("old_string not found in {path}");
        for i in 0..self.rng.range(2, 6) {
            self.edit(&path, &old, &new, Err(("old_string_not_found", &msg)));
            if i >= 1 {
                self.directive("update_todos", &format!("file_edit:{path}"));
            }
        }
        if self.rng.chance(60) {
            let lines = self.rng.usize(20, 100);
            let text = self.source(lines);
            self.read(&path, &text);
            let (old, new) = (self.line(), self.line());
            self.edit(&path, &old, &new, Ok("applied 1 edit"));
        }
    }

    /// The identical edit retried against a file whose hash moved on (seed 000 WO-8).
    fn hash_loop(&mut self) {
        let path = self.path();
        let old = self.line();
        let (expected, actual) = (self.rng.hash(), self.rng.hash());
        for i in 0..self.rng.range(2, 8) {
            self.hash_edit(&path, &old, &expected, &actual);
            if i > 0 {
                self.run.dedup(&format!("file_edit:{path}"));
            }
        }
        if self.rng.chance(50) {
            let lines = self.rng.usize(20, 100);
            let text = self.source(lines);
            self.read(&path, &text);
        }
    }

    fn write_file(&mut self) {
        let path = format!("{}.new", self.path());
        let lines = self.rng.usize(8, 60);
        let text = self.source(lines);
        self.write(&path, &text);
    }
}

/// A repository map block of about `chars` characters.
fn repo_map(rng: &mut Rng, eco: &Eco, chars: usize) -> String {
    let mut out = String::with_capacity(chars + 128);
    out.push_str("[REPO MAP]\n");
    let ext = eco.files[0].rsplit('.').next().unwrap_or("txt");
    while out.len() < chars {
        let line = fill(
            rng,
            &format!("src/{{w}}/{{v}}_{{n}}.{ext}: {{T}}, {{f}}, {{f}}, {{T}}Error\n"),
        );
        out.push_str(&line);
    }
    out
}

/// Writes one session; `resume` is the failing build the previous session left behind.
#[allow(clippy::too_many_arguments)]
fn session(
    rng: &mut Rng,
    eco: &'static Eco,
    cwd: &str,
    id: &str,
    budget: usize,
    resume: Option<(String, usize)>,
    last: bool,
) -> (Run, Option<(String, usize)>) {
    let mut rng = Rng::new(rng.next());
    // System prompts of 24-144 KB (the dropbear seed's was 142,000 characters).
    let system_chars = rng.usize(1_000, 6_000) * 24;
    let max_turns = rng.range(30, 140) as u32;
    let first_frame = rng.range(3, 6) as u32;
    let mut s = Session {
        run: Run::new(id, cwd, (system_chars / 4 + 400) as u64),
        rng,
        eco,
        cwd: cwd.to_string(),
        results: Vec::new(),
        evidence: Vec::new(),
        focus: Vec::new(),
        system_chars,
        next_frame: first_frame,
        approx: 600,
        last_output: 0,
        frames: 0,
    };
    let test = eco.tests[0];
    s.run.turn(120).todos(json!([
        {"id": "1", "status": "in_progress", "content": "make the build pass", "verifyCommand": eco.builds[0]},
        {"id": "2", "status": "pending", "content": "make the tests pass", "verifyCommand": test},
        {"id": "3", "status": "pending", "content": "clean up and summarise"}
    ]));
    let mut carry = None;
    if resume.is_some() && s.rng.chance(60) {
        carry = s.fix_loop(resume);
    }
    while s.run.turn < max_turns && (s.approx < budget || s.run.turn < 8) {
        carry = match s.rng.below(100) {
            0..=24 => {
                s.explore();
                carry
            }
            25..=54 => s.fix_loop(None).or(carry),
            55..=69 => {
                s.test_loop();
                carry
            }
            70..=79 => {
                s.stale_loop();
                carry
            }
            80..=86 => {
                s.hash_loop();
                carry
            }
            87..=92 => {
                s.write_file();
                carry
            }
            _ => {
                s.search();
                carry
            }
        };
    }
    let done = carry.is_none() && s.rng.chance(70);
    let status = if done { "completed" } else { "in_progress" };
    s.run.todos(json!([
        {"id": "1", "status": status, "content": "make the build pass", "verifyCommand": eco.builds[0]},
        {"id": "2", "status": status, "content": "make the tests pass", "verifyCommand": test},
        {"id": "3", "status": "pending", "content": "clean up and summarise"}
    ]));
    if done || s.rng.chance(30) {
        s.run.complete(
            if done { "completed" } else { "partial" },
            "Build and tests checked; see the evidence list.",
        );
    }
    s.run.ledger = Some(
        match (done, last, s.rng.below(3)) {
            (true, _, 0) => "incomplete_verification",
            (true, _, _) => "completed",
            (false, false, _) => "open",
            (false, true, 0) => "incomplete_verification",
            (false, true, _) => "open",
        }
        .to_string(),
    );
    (s.run, carry)
}

/// Bytes and files under `dir`.
fn dir_size(dir: &Path) -> (u64, u64) {
    let mut total = (0, 0);
    let Ok(entries) = fs::read_dir(dir) else {
        return total;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            let (b, f) = dir_size(&entry.path());
            total.0 += b;
            total.1 += f;
        } else {
            total.0 += meta.len();
            total.1 += 1;
        }
    }
    total
}

struct Options {
    out: PathBuf,
    mb: f64,
    seed: u64,
    projects: usize,
    force: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut out = None;
    let mut options = Options {
        out: PathBuf::new(),
        mb: 100.0,
        seed: 7,
        projects: 8,
        force: false,
    };
    fn value<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
        v.parse()
            .map_err(|_| format!("{flag}: not a valid number: {v:?}"))
    }
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--mb" => options.mb = value("--mb", args.next())?,
            "--seed" => options.seed = value("--seed", args.next())?,
            "--projects" => options.projects = value("--projects", args.next())?,
            "--force" => options.force = true,
            "-h" | "--help" => return Err(String::new()),
            a if a.starts_with('-') => return Err(format!("unknown option {a}")),
            a if out.is_none() => out = Some(PathBuf::from(a)),
            a => return Err(format!("unexpected argument {a}")),
        }
    }
    options.out = out.ok_or("OUT_DIR is required")?;
    if !(options.mb > 0.0 && options.mb <= 100_000.0) {
        return Err("--mb must be in (0, 100000]".into());
    }
    if options.projects == 0 || options.projects > 1000 {
        return Err("--projects must be in 1..=1000".into());
    }
    Ok(options)
}

fn project_name(i: usize) -> String {
    let base = ECOS[i % ECOS.len()].project;
    match i / ECOS.len() {
        0 => base.to_string(),
        k => format!("{base}-{k}"),
    }
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            if e.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("synth_corpus: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if o.out.exists() {
        if !o.out.is_dir() {
            eprintln!("synth_corpus: {}: not a directory", o.out.display());
            return ExitCode::from(2);
        }
        let non_empty = fs::read_dir(&o.out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true);
        if non_empty && !o.force {
            eprintln!(
                "synth_corpus: {}: exists and is not empty; refusing to write into it (use --force to replace the generated projects there)",
                o.out.display()
            );
            return ExitCode::from(2);
        }
    }
    let target = (o.mb * 1_000_000.0) as u64;
    let mut rng = Rng::new(o.seed);
    let (mut written, mut files, mut runs, mut frames, mut turns) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for p in 0..o.projects {
        let name = project_name(p);
        let eco = &ECOS[p % ECOS.len()];
        let dir = o.out.join(&name);
        if dir.exists() {
            if let Err(e) = fs::remove_dir_all(&dir) {
                eprintln!("synth_corpus: {}: cannot replace: {e}", dir.display());
                return ExitCode::from(2);
            }
        }
        let omnius = dir.join(".omnius");
        let cwd = format!("/home/dev/{name}");
        let mut prng = Rng::new(rng.next());
        // Projects share the target evenly; each absorbs the overshoot of the ones before.
        let goal = target * (p as u64 + 1) / o.projects as u64;
        let mut epoch: u64 = 1_783_000_000_000 + prng.below(86_400_000);
        let mut resume = None;
        let mut families: Vec<(String, usize)> = Vec::new();
        let mut sessions = 0;
        while sessions == 0 || written < goal {
            epoch += prng.range(20 * 60_000, 8 * 3_600_000);
            let id = format!("{epoch}-{}", prng.suffix());
            let budget = (goal.saturating_sub(written)) as usize;
            // The last session is the one expected to exhaust the budget.
            let last = budget < 6_000_000;
            let (run, carry) = session(&mut prng, eco, &cwd, &id, budget, resume.take(), last);
            run.write_to(&omnius);
            let (b, f) = dir_size(&omnius.join("runs").join(&id));
            written += b;
            files += f;
            runs += 1;
            turns += u64::from(run.turn);
            frames += run.frames.len() as u64;
            sessions += 1;
            if let Some((build, n)) = &carry {
                families.push((build.clone(), *n));
            }
            resume = carry;
        }
        if !families.is_empty() {
            let entries: serde_json::Map<String, Value> = families
                .iter()
                .rev()
                .take(6)
                .map(|(build, n)| {
                    (
                        format!("shell:{build}:tool_failed"),
                        json!({"rounds": 1 + n % 4, "lastSignal": n}),
                    )
                })
                .collect();
            let path = omnius.join("convergence-ledger.json");
            let text = pretty(&json!({"version": 1, "families": entries}));
            if let Err(e) = fs::write(&path, &text) {
                eprintln!("synth_corpus: {}: {e}", path.display());
                return ExitCode::from(2);
            }
            written += text.len() as u64;
            files += 1;
        }
    }
    println!(
        "synth_corpus: wrote {:.1} MB ({written} bytes) in {files} files: {} projects, {runs} runs, {turns} turns, {frames} frames (seed {}, --mb {})",
        written as f64 / 1e6,
        o.projects,
        o.seed,
        o.mb
    );
    ExitCode::SUCCESS
}

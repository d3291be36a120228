#!/usr/bin/env python3
"""Independent verdicts for shell-driven agent runs (mini-swe-agent trajectories).

Recomputes, apart from hindsight's Rust code, what a careful reader would say about each
run: which calls changed the project's code, which later executions were checks and how
they came out, and whether the run finished on verified work. Compares per run with the
figures hindsight reports under `runs[].metrics.ledger_finalization`.

Usage: scripts/independent_verdicts.py TRAJECTORY_DIR [HINDSIGHT_JSON] [--calls RUN]

  TRAJECTORY_DIR  holds `<instance>/<instance>.traj.json` (read only)
  HINDSIGHT_JSON  output of `hindsight replay TRAJECTORY_DIR --format json`; without it the
                  script prints its own figures
  --calls RUN     also print, for the run whose id contains RUN, every call the rules
                  classified (code change, scratch write, check result, family)

Prints one line per run and, for every figure that differs, both values; exits 1 when a
figure differs (a figure the report lacks counts as differing). Python 3 standard library.

Turns are numbered as hindsight's mini-swe-agent reader does: the n-th assistant message is
turn n; its `extra.actions[].command` is the call (older files without `actions`: the
message's one ```bash block), the next tool message holds
`<returncode>N</returncode>` and `<output>...</output>`. The working directory is /testbed
and every call starts there (each command runs in a fresh shell).

Rules (the spec this script implements with its own small shell lexer, regular
expressions and, for Python code, the `ast` module):

1. Code change vs scratch. A call writes files when it redirects authored text to a file
   (`cat > f <<EOF`, `echo x > f`, `printf ... >> f`, `tee f` fed by such text), edits in
   place (`sed -i`, `perl -i`), copies or moves (`cp`/`mv`: the destination), removes
   (`rm`), touches, patches (`patch`, `git apply`), restores (`git checkout <path>`,
   `git restore <path>`), or runs Python that opens a file for writing (`python -c`,
   `python - <<EOF`, or a script run by name whose body an earlier call recorded with
   `cat > fix.py <<EOF`; its writes count at the call that runs it). A write is a code
   change when its path belonged to the work before the run wrote it (named in an earlier
   command or an earlier command's output) or when the command writes files it does not
   name literally (`git apply x.patch`, `patch -p1 < x`, `git stash [pop]`,
   `git checkout <branch>`). It is scratch when the run created the path (its first write
   created it and it had not been named before), when it is under /tmp/ or /var/tmp/, a
   backup (`*.bak`, `*.backup*`, `*.orig`), or outside /testbed (e.g. site-packages). An
   in-place edit (`sed -i`, `perl -i`, `patch f`, `git checkout/restore <path>`, Python that
   reads the same file it writes) implies the file existed: a code change unless scratch
   by the other rules. Output captures (`git diff > p.txt`, `python t.py > out.log`) are no
   writes. A write counts whatever the line's exit status, except when the writing command
   is in the line's last pipeline and the line failed. A line bash refused (`syntax error
   near unexpected token`, ...) writes and names nothing.
2. Checks. A call is a check when one of its pipelines executes something that is not a
   viewer (cat, head, grep, find, ls, sed -n, ...), a writer (rule 1; a fix script that
   changes code is a writer), navigation, an install, a VCS command or a narrative print
   (echo, printf, `python -c` that only prints literals). Result: `could_not_start` (No
   module named, command not found, can't open file, No such file or directory naming the
   script, collected 0 items, no tests ran) over `fail` (non-zero return code, a Traceback,
   an uncaught exception's last line, `error:`, `FAILED`, `N failed`, `FAIL:`, `ERROR:`,
   a cross mark) over `pass` (exit 0 and `N passed`, a lone `OK`, `... ok`, `PASS`, a check
   mark, or a line saying tests passed / works / fixed / success with no negation on it),
   else `inconclusive`. Piped exit statuses (`cmd | tail`) are judged the same way.
3. Verdict, from what happened after the last code change (a check later in the same
   line than the change counts as after it; over the whole run when there was no change):
   the last check with a verdict (pass or fail) decides: `fail` ->
   `incomplete_verification`, `pass` -> `completed`. With no code change and no failing
   last verdict, `completed` when the run submitted. With a code change and no verdict
   after it: checks that ran but said nothing readable (inconclusive or could_not_start)
   -> `unverifiable`, none at all -> `incomplete_verification`.

Figures per run: code_changes, last_code_change_turn, last_verified_turn (last passing
check anywhere in the run), checks_after_change ({pass, fail, could_not_start,
inconclusive}), finalized.

Where the rules left room, this script reads them so:
- `git stash` (push) rewrites the work tree like `git stash pop`: a code change.
- An output capture is no write, but a file it creates belongs to the run (a later
  `grep ... > patch.txt` after `git diff > patch.txt` is scratch).
- Python's write targets are followed through simple assignments, `with ... as`, loops,
  f-strings, os.path.join and function arguments; a path made by `tempfile` is temp, one
  that cannot be followed is "not named literally" (a code change).
- A glob (`rm test_*.py`) is a code change only if it matches a path of the work.
- An execution is a writer, not a check, when it changes code, edits a non-temp file in
  place or writes outside the tree (patching site-packages); a test that writes temp
  files is still a check. `--help`/`--version` probes are not checks.
- Pass phrases are claims, not headings or labels: lines ending in `:`, `?` or `...`,
  "Testing ..."/"Test 3: ...", "check that ...", log records and lines naming an error
  class do not count; "passed to", "working directory" and a bare "Fixed" do not either.
- An exception's line (`KeyError: 'x'`, `pkg.mod.SomeError: ...`, a script's own
  `Error: ...` label) is a failure marker wherever it stands, caught and printed or not.
- `0 selected` (everything deselected) is could_not_start; a refused line that held an
  execution is a could_not_start check; a timeout (`timed out after`) is inconclusive: the
  check never finished.
- A new file is the run's own when named after a file of the work (`x.py.fixed`); it is
  part of the work when it lies in a directory where a named file of the work lies.

The rules above were first written from issue #28's text; after the first comparison with
hindsight (18 of 23 runs differed on some figure) three were settled by reading the
trajectories and are now the same on both sides: the last verdict after the last change
decides (not each check family's last result: agents rename the scripts they re-run),
exception lines are failures wherever they stand, and a new file beside the work's own
files is part of the work.
"""

import ast
import fnmatch
import json
import os.path
import re
import sys
from pathlib import Path

ROOT = "/testbed"
SUBMIT = re.compile(r"\b(?:COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT)\b")
RESULTS = ("pass", "fail", "could_not_start", "inconclusive")

# --------------------------------------------------------------------------------------
# Reading trajectories (one turn per assistant message)


def calls(path):
    doc = json.loads(path.read_text())
    turn, out = 0, []
    for msg in doc["messages"]:
        if msg["role"] == "assistant":
            turn += 1
            actions = [a.get("command", "") for a in (msg.get("extra") or {}).get("actions") or []]
            if "actions" not in (msg.get("extra") or {}):  # older format: one ```bash block
                content = msg.get("content") if isinstance(msg.get("content"), str) else ""
                blocks = re.findall(r"```(?:bash|sh)\s*\n(.*?)\n```", content, re.S)
                actions = blocks if len(blocks) == 1 else []
            for command in actions:
                out.append({"turn": turn, "cmd": command, "rc": None, "out": ""})
        elif msg["role"] in ("tool", "user") and out and out[-1]["rc"] is None and turn:
            content = msg.get("content")
            content = content if isinstance(content, str) else json.dumps(content)
            rc = (msg.get("extra") or {}).get("returncode")
            if rc is None:
                m = re.search(r"<returncode>(-?\d+)</returncode>", content)
                rc = int(m.group(1)) if m else -1
            out[-1]["rc"], out[-1]["out"] = rc, content
    return out


def output_text(content):
    """The program's output without mini-swe-agent's wrapper tags and warnings."""
    text = re.sub(r"<returncode>-?\d+</returncode>", "", content)
    text = re.sub(r"<warning>.*?</warning>", "", text, flags=re.S)
    text = re.sub(r"<elided_chars>.*?</elided_chars>", "\n", text, flags=re.S)
    text = re.sub(r"</?(output|output_head|output_tail|exception)>", "\n", text)
    return text.strip("\n")


# --------------------------------------------------------------------------------------
# A small shell lexer: words (quotes removed), operators, redirections, here-documents.


class Cmd:
    def __init__(self):
        self.words, self.raws, self.redirs = [], [], []  # redirs: (fd, op, target)
        self.heredoc = None
        self.after = ""       # connector that follows: && || ; | & \n
        self.pipeline = 0     # index of the pipeline it belongs to
        self.kind = "cmd"     # or "for"

    def text(self):
        return " ".join(self.raws)


REDIR_OPS = ["&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>", ">", "<"]
CTRL_OPS = ["&&", "||", ";;", "|&", ";", "|", "&", "(", ")"]


def lex(s):
    """Tokens: ('w', value, raw, body) words, ('op', op), ('r', fd, op)."""
    toks, i, n = [], 0, len(s)
    val, raw, in_word = "", "", False
    pending, want_delim = [], None

    def flush():
        nonlocal val, raw, in_word, want_delim
        if in_word:
            toks.append(["w", val, raw, None])
            if want_delim is not None:
                pending.append((len(toks) - 1, val, want_delim))
                want_delim = None
        val, raw, in_word = "", "", False

    while i < n:
        c = s[i]
        if not in_word and c in " \t":
            i += 1
            continue
        if not in_word and c == "#":
            while i < n and s[i] != "\n":
                i += 1
            continue
        if c == "\\":
            if i + 1 < n and s[i + 1] == "\n":
                i += 2
                continue
            in_word = True
            val += s[i + 1] if i + 1 < n else ""
            raw += s[i:i + 2]
            i += 2
            continue
        if c == "'":
            j = s.find("'", i + 1)
            j = n if j < 0 else j
            in_word, val, raw = True, val + s[i + 1:j], raw + s[i:j + 1]
            i = j + 1
            continue
        if c == "$" and s.startswith("$'", i):
            j = i + 2
            while j < n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            body = s[i + 2:j]
            body = body.replace("\\n", "\n").replace("\\t", "\t").replace("\\'", "'").replace("\\\\", "\\")
            in_word, val, raw = True, val + body, raw + s[i:j + 1]
            i = j + 1
            continue
        if c == '"':
            j, piece = i + 1, ""
            while j < n and s[j] != '"':
                if s[j] == "\\" and j + 1 < n and s[j + 1] in '"\\$`\n':
                    piece += "" if s[j + 1] == "\n" else s[j + 1]
                    j += 2
                    continue
                if s.startswith("$(", j):
                    k = balanced(s, j + 1)
                    piece += s[j:k]
                    j = k
                    continue
                piece += s[j]
                j += 1
            in_word, val, raw = True, val + piece, raw + s[i:j + 1]
            i = j + 1
            continue
        if c == "$" and s.startswith("$(", i):
            k = balanced(s, i + 1)
            in_word, val, raw = True, val + s[i:k], raw + s[i:k]
            i = k
            continue
        if c == "`":
            j = s.find("`", i + 1)
            j = n if j < 0 else j
            in_word, val, raw = True, val + s[i:j + 1], raw + s[i:j + 1]
            i = j + 1
            continue
        if c == "\n":
            flush()
            toks.append(["op", "\n"])
            i += 1
            for idx, delim, strip_tabs in pending:
                lines = []
                while i < n:
                    j = s.find("\n", i)
                    j = n if j < 0 else j
                    line = s[i:j]
                    i = j + 1
                    if (line.lstrip("\t") if strip_tabs else line) == delim:
                        break
                    lines.append(line.lstrip("\t") if strip_tabs else line)
                toks[idx][3] = "\n".join(lines)
            pending = []
            continue
        if c in "<>" or (c == "&" and s.startswith("&>", i)):
            op = next(o for o in REDIR_OPS if s.startswith(o, i))
            fd = ""
            if in_word and re.fullmatch(r"\d+", raw):
                fd = val
                val, raw, in_word = "", "", False
            if op in ("<", ">") and s.startswith("(", i + 1):  # process substitution
                k = balanced(s, i + 1)
                in_word, val, raw = True, val + s[i:k], raw + s[i:k]
                i = k
                continue
            flush()
            toks.append(["r", fd, op])
            if op in ("<<", "<<-"):
                want_delim = op == "<<-"
            i += len(op)
            continue
        op = next((o for o in CTRL_OPS if s.startswith(o, i)), None)
        if op:
            flush()
            toks.append(["op", op])
            i += len(op)
            continue
        if c in " \t":
            flush()
            i += 1
            continue
        in_word, val, raw = True, val + c, raw + c
        i += 1
    flush()
    for idx, delim, strip_tabs in pending:  # here-document never terminated
        toks[idx][3] = ""
    return toks


def balanced(s, i):
    """Index just past the parenthesis group opening at s[i] == '('."""
    depth, j, quote = 0, i, None
    while j < len(s):
        c = s[j]
        if quote:
            if c == "\\" and quote == '"':
                j += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(s)


KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "fi", "done",
            "esac", "}", "time"}


def parse(s):
    """Simple commands, each with its words, redirections, here-document and connector."""
    cmds, cur, pipeline, pend = [], Cmd(), 0, None

    def finish(after):
        nonlocal cur, pipeline
        while cur.words and cur.words[0] in KEYWORDS:
            cur.words.pop(0)
            cur.raws.pop(0)
        if cur.words[:1] == ["for"]:
            cur.kind = "for"
        if cur.words or cur.redirs:
            cur.after, cur.pipeline = after, pipeline
            cmds.append(cur)
        if after not in ("|", "|&"):
            pipeline += 1
        cur = Cmd()

    for tok in lex(s):
        if tok[0] == "w":
            if pend is not None:
                cur.redirs.append((pend[0], pend[1], tok[1]))
                if pend[1] in ("<<", "<<-"):
                    cur.heredoc = tok[3] or ""
                cur.raws.append(pend[0] + pend[1] + tok[2])
                pend = None
            else:
                cur.words.append(tok[1])
                cur.raws.append(tok[2])
        elif tok[0] == "r":
            pend = (tok[1], tok[2])
        else:
            op = tok[1]
            if op == "(":
                continue
            finish(";" if op == ")" else op)
    finish("")
    return cmds


def unwrap(words):
    """Words of the command proper: drops VAR=x, timeout N, env, xargs, nohup, ..."""
    w = list(words)
    while w:
        if re.match(r"^[A-Za-z_]\w*=", w[0]):
            w.pop(0)
        elif w[0] in ("timeout",):
            w.pop(0)
            while w and (w[0].startswith("-") or re.match(r"^\d+[smhd]?$", w[0])):
                w.pop(0)
        elif w[0] in ("env", "nohup", "command", "exec", "sudo", "stdbuf", "nice", "time"):
            w.pop(0)
            while w and w[0].startswith("-"):
                w.pop(0)
        elif w[0] == "xargs":
            w.pop(0)
            while w and w[0].startswith("-"):
                opt = w.pop(0)
                if opt in ("-I", "-n", "-P", "-d", "-L", "-s", "-E") and w:
                    w.pop(0)
        else:
            break
    return w


def base(word):
    return word.rsplit("/", 1)[-1] if word else ""


# --------------------------------------------------------------------------------------
# Paths


class Unnamed:
    """A write whose paths the command does not name literally."""


UNNAMED = Unnamed()


def norm(p, cwd):
    if p.startswith("~"):
        p = "/root" + p[1:]
    return os.path.normpath(os.path.join(cwd, p))


def expand(word, cwd, env):
    """Absolute paths a shell word stands for; UNNAMED when it cannot be known."""
    words = [word]
    for name in re.findall(r"\$\{?(\w+)\}?", word):
        if name in env:
            words = [re.sub(r"\$\{?%s\}?" % name, v, w) for w in words for v in env[name]]
    out = []
    for w in words:
        if "$" in w or "`" in w:
            out.append(UNNAMED)
        else:
            out.append(norm(w, cwd))
    return out


def in_tree(p):
    return p == ROOT or p.startswith(ROOT + "/")


def scratch_reason(p):
    if p.startswith("/tmp/") or p.startswith("/var/tmp/"):
        return "temp"
    if not in_tree(p):
        return "outside"
    if re.search(r"\.bak\d*$|\.backup|\.orig$", base(p)):
        return "backup"
    return None


# --------------------------------------------------------------------------------------
# Python code: which files it writes and reads (ast first, regular expressions if the code
# does not parse).

TEMP = "<temp>"
UNK = "<unknown>"
TEMP_CALLS = ("mkdtemp", "mkstemp", "gettempdir", "NamedTemporaryFile", "TemporaryDirectory",
              "TemporaryFile", "mktemp", "SpooledTemporaryFile")


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return inner + "." + node.attr if inner else node.attr
    if isinstance(node, ast.Call):
        return dotted(node.func) + "()"
    return ""


class PyPaths:
    def __init__(self, tree, cwd, script):
        self.cwd, self.script, self.env, self.visiting = cwd, script, {}, set()
        funcs = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    self.bind(t, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                self.bind(node.target, node.value)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        self.bind(item.optional_vars, item.context_expr)
            elif isinstance(node, (ast.For, ast.comprehension)):
                self.bind(node.target, node.iter, iterate=True)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                funcs[node.name] = [a.arg for a in node.args.args]
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in funcs:
                params = funcs[node.func.id]
                for name, arg in zip(params, node.args):
                    self.env.setdefault(name, []).append((False, arg))
                for kw in node.keywords:
                    if kw.arg in params:
                        self.env.setdefault(kw.arg, []).append((False, kw.value))

    def bind(self, target, value, iterate=False):
        if isinstance(target, ast.Name):
            self.env.setdefault(target.id, []).append((iterate, value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            for k, elt in enumerate(target.elts):
                self.bind(elt, value.elts[k] if same and not iterate else value, iterate)

    def eval(self, node, depth=0):
        """Set of strings, TEMP or UNK."""
        if depth > 12:
            return {UNK}
        d = depth + 1
        if isinstance(node, ast.Constant):
            if node.value is None:  # x = None, assigned properly later
                return set()
            return {node.value} if isinstance(node.value, str) else {UNK}
        if isinstance(node, ast.Name):
            if node.id == "__file__" and self.script:
                return {self.script}
            if node.id not in self.env:
                return {UNK}
            if node.id in self.visiting:  # a cycle (f = open(f.name)) adds nothing
                return set()
            self.visiting.add(node.id)
            vals = set()
            for iterate, v in self.env[node.id]:
                if iterate and isinstance(v, (ast.List, ast.Tuple, ast.Set)):
                    for e in v.elts:
                        vals |= self.eval(e, d)
                else:
                    vals |= self.eval(v, d)
            self.visiting.discard(node.id)
            return vals if vals or depth else {UNK}
        if isinstance(node, ast.JoinedStr):
            parts = [{v.value} if isinstance(v, ast.Constant) else self.eval(v.value, d) for v in node.values]
            return self.combine(parts, "".join)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
            parts = [self.eval(node.left, d), self.eval(node.right, d)]
            return self.combine(parts, (lambda p: os.path.join(*p)) if isinstance(node.op, ast.Div) else "".join)
        if isinstance(node, ast.Attribute):
            if node.attr == "name":
                return self.eval(node.value, d)
            if node.attr == "parent":
                return {os.path.dirname(v) if v not in (TEMP, UNK) else v for v in self.eval(node.value, d)}
            return {UNK}
        if isinstance(node, ast.Subscript):
            return {TEMP} if TEMP in self.eval(node.value, d) else {UNK}
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            last = name.rsplit(".", 1)[-1]
            if last in TEMP_CALLS or "tempfile" in name:
                return {TEMP}
            if last in ("join", "Path", "PurePath", "PosixPath", "str", "fspath", "abspath", "realpath",
                        "normpath", "expanduser", "joinpath") and node.args:
                parts = [self.eval(a, d) for a in node.args]
                if last == "joinpath" and isinstance(node.func, ast.Attribute):
                    parts.insert(0, self.eval(node.func.value, d))
                return self.combine(parts, lambda p: os.path.join(*p))
            if last in ("resolve", "absolute") and isinstance(node.func, ast.Attribute):
                return self.eval(node.func.value, d)
            if last == "dirname" and node.args:
                return {os.path.dirname(v) if v not in (TEMP, UNK) else v for v in self.eval(node.args[0], d)}
            if last in ("getcwd", "cwd"):
                return {self.cwd}
            if last == "open" and node.args:  # a file object stands for its path
                return self.eval(node.args[0], d)
            return {UNK}
        return {UNK}

    @staticmethod
    def combine(parts, join):
        if any(TEMP in p for p in parts):
            return {TEMP}
        if any(UNK in p for p in parts):
            return {UNK}
        combos = [[]]
        for p in parts:
            combos = [c + [v] for c in combos for v in sorted(p)][:32]
        return {join(c) for c in combos}


WRITE_ATTRS = {"write_text": 0, "write_bytes": 0, "touch": 0}
DATA_SAVERS = ("save_as", "dcmwrite", "to_csv", "savefig", "to_excel")


def python_io(code, cwd, script=None):
    """(writes, reads) of Python code: writes are (value, kind) with value a path string,
    TEMP or UNK and kind 'create', 'inplace' or 'remove'; reads are path strings."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return python_io_regex(code)
    pp = PyPaths(tree, cwd, script)
    writes, reads = [], set()

    def add(node, kind, strict=True):
        for v in pp.eval(node) or {UNK}:
            if v == UNK and not strict:
                continue
            writes.append((v, kind))

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        on_obj = isinstance(node.func, ast.Attribute)
        if last == "open" and (not on_obj or dotted(node.func.value) in ("io", "codecs", "builtins")):
            if not node.args:
                continue
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            mode = mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else "r"
            if re.search(r"[wax+]", mode):
                add(node.args[0], "inplace" if "+" in mode and "r" in mode else "create")
            else:
                reads |= {v for v in pp.eval(node.args[0]) if v not in (TEMP, UNK)}
        elif last == "open" and on_obj:  # pathlib: Path(x).open('w')
            mode = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "mode"), None)
            mode = mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else "r"
            target = node.func.value
            if re.search(r"[wax+]", mode):
                add(target, "create", strict=False)
            else:
                reads |= {v for v in pp.eval(target) if v not in (TEMP, UNK)}
        elif last in WRITE_ATTRS and on_obj:
            add(node.func.value, "create")
        elif last in ("read_text", "read_bytes") and on_obj:
            reads |= {v for v in pp.eval(node.func.value) if v not in (TEMP, UNK)}
        elif name in ("shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.move", "shutil.copytree",
                      "os.rename", "os.replace", "copyfile", "copy2", "move") and len(node.args) > 1:
            add(node.args[1], "create")
        elif last in ("rename", "replace") and on_obj and dotted(node.func.value) not in ("os",) \
                and node.args and not isinstance(node.func.value, ast.Constant):
            if last == "rename" or len(node.args) == 1:  # pathlib Path.rename(target)
                add(node.args[0], "create", strict=False)
        elif name in ("os.remove", "os.unlink", "shutil.rmtree", "os.rmdir", "os.removedirs") and node.args:
            add(node.args[0], "remove")
        elif last == "unlink" and on_obj and dotted(node.func.value) != "os":
            add(node.func.value, "remove", strict=False)
        elif last in DATA_SAVERS and node.args:
            add(node.args[0], "create", strict=False)
        elif name in ("fileinput.input", "input") and any(k.arg == "inplace" for k in node.keywords) and node.args:
            add(node.args[0], "inplace")
    out = []
    for v, kind in writes:
        if kind == "create" and v in reads:
            kind = "inplace"
        out.append((v, kind))
    return out, reads


def python_io_regex(code):
    writes, reads = [], set()
    for m in re.finditer(r"open\(\s*(['\"])([^'\"]+)\1\s*,\s*(?:mode\s*=\s*)?['\"]([rwabxt+]+)['\"]", code):
        if re.search(r"[wax+]", m.group(3)):
            writes.append((m.group(2), "create"))
        else:
            reads.add(m.group(2))
    for m in re.finditer(r"open\(\s*(['\"])([^'\"]+)\1\s*\)", code):
        reads.add(m.group(2))
    if not writes and re.search(r"open\([^)]*['\"][rwab+]*[wax+][rwab+]*['\"]|\.write_(text|bytes)\(", code):
        writes.append((UNK, "create"))
    return [(v, "inplace" if v in reads else k) for v, k in writes], reads


def only_prints_literals(code):
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    if not tree.body:
        return True
    for st in tree.body:
        if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
                and isinstance(st.value.func, ast.Name) and st.value.func.id == "print"):
            return False
        for a in list(st.value.args) + [k.value for k in st.value.keywords]:
            if isinstance(a, ast.Constant):
                continue
            if isinstance(a, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in a.values):
                continue
            return False
    return True


# --------------------------------------------------------------------------------------
# Commands: writes and category

TEXT_TOOLS = {"echo", "printf", "cat", "tee", "sed", "awk", "tr", "sort", "uniq", "cut", "head",
              "tail", "paste", "true", "grep", "nl", "rev", "fold", "expand", "column"}
VIEWERS = {"cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "find", "ls",
           "wc", "diff", "cmp", "sed", "awk", "gawk", "nl", "sort", "uniq", "cut", "tr", "tree", "file",
           "stat", "du", "df", "xxd", "od", "hexdump", "which", "whereis", "type", "readlink", "realpath",
           "basename", "dirname", "column", "jq", "true", "false", "sleep", "test", "[", "mkdir",
           "chmod", "export", "set", "unset", "alias", "date", "whoami", "id", "uname", "history",
           "strings", "md5sum", "sha256sum", "paste", "rev", "fold", "locate", "lsof", "ps", "env",
           "printenv", "clear", "wait", "source", ".", "shopt", "declare", "local", "read", "exit",
           "return", "break", "continue", "trap", "ulimit", "umask", "hash"}
NAV = {"cd", "pushd", "popd", "pwd"}
VCS = {"git", "hg", "svn"}
INSTALLERS = {"pip", "pip3", "conda", "mamba", "apt", "apt-get", "yum", "dnf", "apk", "brew", "poetry",
              "pipx", "uv", "npm", "yarn", "pnpm", "gem", "cargo-install"}
PY = re.compile(r"^python[\d.]*$")


def nonopts(args):
    return [a for a in args if not a.startswith("-") or a == "-"]


class Analyzer:
    """Walks one run's calls in order, keeping what the run named, created and recorded."""

    def __init__(self):
        self.named, self.created, self.scripts = set(), set(), {}

    # ---- writes of one simple command -------------------------------------------------
    def cmd_writes(self, cmd, stages, k, cwd, env, depth=0):
        """[(path or UNNAMED, kind)] for stage k of a pipeline; kind: create, inplace,
        remove, unnamed."""
        words = unwrap(cmd.words)
        name = base(words[0]) if words else ""
        args = words[1:]
        out = []
        authored = all(base((unwrap(s.words) or [""])[0]) in TEXT_TOOLS for s in stages[:k + 1])
        for fd, op, target in cmd.redirs:
            if op in (">", ">>", ">|", "&>", "&>>") and not target.startswith("/dev/"):
                kind = "create" if authored and fd in ("", "1") else "capture"
                out += [(p, kind) for p in expand(target, cwd, env)]
        if name == "tee" and authored:
            out += [(p, "create") for a in nonopts(args) for p in expand(a, cwd, env)]
        elif name == "sed" and any(re.match(r"^-[a-zA-Z]*i", a) or a.startswith("--in-place") for a in args):
            out += [(p, "inplace") for p in sed_files(args, cwd, env)]
        elif name == "perl" and any(re.match(r"^-[a-zA-Z]*i", a) for a in args):
            out += [(p, "inplace") for p in perl_files(args, cwd, env)]
        elif name in ("cp", "mv") and "--help" not in args:
            out += [(p, "create") for p in copy_dest(args, cwd, env)]
        elif name == "rm":
            out += [(p, "remove") for a in nonopts(args) for p in expand(a, cwd, env)]
        elif name == "touch":
            out += [(p, "create") for a in nonopts(args) for p in expand(a, cwd, env)]
        elif name == "patch":
            if "--dry-run" not in args and "-C" not in args and "--check" not in args:
                out += patch_targets(args, cwd, env)
        elif name == "git":
            out += git_writes(args, cwd, env, self)
        elif PY.match(name):
            for code, script, ccwd in self.python_code(words, cmd, cwd):
                writes, _ = python_io(code, ccwd, script)
                for v, kind in writes:
                    if v == TEMP:
                        out.append(("/tmp/<python>", kind))
                    elif v == UNK:
                        out.append((UNNAMED, "unnamed"))
                    else:
                        out.append((norm(v, ccwd), kind))
        elif name in ("bash", "sh", "source", ".") or (words and words[0].startswith("./")):
            script = words[0] if words[0].startswith("./") else (nonopts(args) or [""])[0]
            body = self.scripts.get(norm(script, cwd)) if script else None
            if body and depth < 3:
                out += self.body_writes(body, cwd, env, depth + 1)
        return out

    def body_writes(self, body, cwd, env, depth):
        out = []
        cmds = parse(body)
        pipes = group(cmds)
        for pipe in pipes:
            for k, c in enumerate(pipe):
                if unwrap(c.words)[:1] == ["cd"]:
                    cwd = norm((unwrap(c.words) + [ROOT])[1], cwd)
                out += self.cmd_writes(c, pipe, k, cwd, env, depth)
        return out

    def python_code(self, words, cmd, cwd):
        """(code, script path, cwd) for each piece of Python a python command runs."""
        args = words[1:]
        i = 0
        while i < len(args):
            a = args[i]
            if a == "-c" and i + 1 < len(args):
                return [(args[i + 1], None, cwd)]
            if a == "-m":
                return []
            if a in ("-W", "-X") and i + 1 < len(args):
                i += 2
                continue
            if a == "-":
                return [(cmd.heredoc or "", None, cwd)]
            if a.startswith("-"):
                i += 1
                continue
            script = norm(a, cwd)
            body = self.scripts.get(script)
            return [(body, script, cwd)] if body is not None else []
        if cmd.heredoc is not None:
            return [(cmd.heredoc, None, cwd)]
        return []

    # ---- categories --------------------------------------------------------------------
    def category(self, cmd, cwd):
        words = unwrap(cmd.words)
        if cmd.kind == "for" or not words:
            return "other"
        name = base(words[0])
        args = words[1:]
        if name in NAV:
            return "nav"
        if name in VCS:
            return "vcs"
        if name in INSTALLERS or (name == "python" and args[:2] == ["-m", "pip"]):
            return "install"
        if PY.match(name) and args[:2] in (["-m", "pip"], ["-m", "ensurepip"]):
            return "install"
        if PY.match(name) and len(args) >= 2 and args[0] == "setup.py" and args[1] in ("install", "develop"):
            return "install"
        if name in ("echo", "printf"):
            return "narrative"
        if name in ("cp", "mv", "rm", "touch", "patch", "tee", "ln", "rmdir"):
            return "writer"
        if name == "sed" and any(re.match(r"^-[a-zA-Z]*i", a) or a.startswith("--in-place") for a in args):
            return "writer"
        if name == "perl" and any(re.match(r"^-[a-zA-Z]*i", a) for a in args):
            return "writer"
        if name in VIEWERS:
            return "viewer"
        if any(a in ("--help", "-h", "--version", "-V") for a in args[:3]) and "-c" not in args:
            return "viewer"  # asking a tool about itself checks nothing
        if PY.match(name):
            if not args or args[0] in ("--version", "-V", "--help", "-h"):
                return "viewer" if args else ("exec" if cmd.heredoc is not None else "other")
            if "-c" in args:
                code = args[args.index("-c") + 1] if args.index("-c") + 1 < len(args) else ""
                if only_prints_literals(code):
                    return "narrative"
        return "exec"

    # ---- one call ----------------------------------------------------------------------
    def call(self, c):
        """Classifies one call. Returns a dict: changes (paths), scratch (paths),
        change_pos (index of the last code-changing pipeline or None), check (None or
        {'result', 'family', 'pos'})."""
        res = {"changes": [], "scratch": [], "change_pos": None, "check": None, "refused": False}
        out = output_text(c["out"])
        if re.search(r"syntax error near unexpected token|unexpected EOF while looking for matching"
                     r"|syntax error: unexpected end of file", out):
            res["refused"] = True
            cats = [self.category(x, ROOT) for x in parse(c["cmd"])]
            if "exec" in cats:
                res["check"] = {"result": "could_not_start", "family": family(parse(c["cmd"])), "pos": 0}
            return res
        cmds = parse(c["cmd"])
        pipes = group(cmds)
        failed = c["rc"] not in (None, 0)
        cwd, env, cwds = ROOT, {}, {ROOT}
        exec_pipes, targets = [], set()
        ls_dirs = []
        for pi, pipe in enumerate(pipes):
            is_last = pi == len(pipes) - 1
            pipe_writes, pipe_cats = [], []
            for k, cmd in enumerate(pipe):
                words = unwrap(cmd.words)
                if cmd.kind == "for" and len(cmd.words) >= 3 and cmd.words[2] == "in":
                    env[cmd.words[1]] = cmd.words[3:]
                elif words and all(re.match(r"^[A-Za-z_]\w*=", w) for w in cmd.words):
                    for w in cmd.words:
                        key, _, v = w.partition("=")
                        env[key] = [v]
                if words[:1] == ["cd"]:
                    dest = words[1] if len(words) > 1 else "/root"
                    if "$" not in dest and dest != "-":
                        cwd = norm(dest, cwd)
                        cwds.add(cwd)
                if words[:1] == ["ls"]:
                    dirs = [a for a in words[1:] if not a.startswith("-")]
                    ls_dirs += [norm(d, cwd) for d in dirs] or [cwd]
                writes = self.cmd_writes(cmd, pipe, k, cwd, env)
                cat = self.category(cmd, cwd)
                pipe_writes += writes
                for p, kind in writes:
                    if p is not UNNAMED:
                        targets.add(p)
                # record script bodies written with here-documents
                if cmd.heredoc is not None:
                    for p, kind in writes:
                        if p is not UNNAMED and kind == "create":
                            appending = any(op in (">>", "&>>") for _, op, _ in cmd.redirs)
                            self.scripts[p] = (self.scripts.get(p, "") + "\n" if appending else "") + cmd.heredoc
                pipe_cats.append((cat, writes))
            wrote = not (is_last and failed)
            pipe_change = False
            for p, kind in pipe_writes:
                is_code = self.judge(p, kind) if wrote else self.would_be_code(p, kind)
                if is_code:
                    pipe_change = True
                    if wrote:
                        res["changes"].append("<unnamed>" if p is UNNAMED else p)
                elif wrote and kind != "capture":
                    res["scratch"].append(p)
            if pipe_change and wrote:
                res["change_pos"] = pi
            # a pipeline is an execution when one of its stages executes something that
            # is not a writer of code
            executes = False
            for (cat, writes) in pipe_cats:
                if cat == "exec":
                    # a fix script: it changes code, edits a file in place, or patches
                    # something outside the tree (site-packages); temp files do not count
                    code_writer = any(self.would_be_code(p, kind)
                                      or (p is not UNNAMED and kind == "inplace" and scratch_reason(p) != "temp")
                                      or (p is not UNNAMED and scratch_reason(p) == "outside")
                                      for p, kind in writes)
                    if not code_writer:
                        executes = True
            if executes:
                exec_pipes.append((pi, pipe))
        if exec_pipes:
            res["check"] = {"result": judge_result(c["rc"], out, exec_pipes),
                            "family": family([x for _, p in exec_pipes for x in p]),
                            "pos": exec_pipes[-1][0]}
        # what this call names, for later calls
        text_tokens = tokens(c["cmd"])
        out_tokens = tokens(out)
        for t in text_tokens | out_tokens:
            for d in cwds:
                p = norm(t, d)
                if p not in targets:
                    self.named.add(p)
        for d in ls_dirs:
            for t in out_tokens:
                if "/" not in t:
                    p = norm(t, d)
                    if p not in targets:
                        self.named.add(p)
        return res

    def would_be_code(self, p, kind):
        if kind == "capture":
            return False
        if p is UNNAMED:
            return True
        if scratch_reason(p):
            return False
        if any(ch in p for ch in "*?["):
            return any(fnmatch.fnmatch(q, p) and q not in self.created and not scratch_reason(q)
                       for q in self.named)
        if p in self.created:
            return False
        if kind == "create" and p not in self.named:
            # a copy named after a file of the work (`x.py.fixed`) is the run's own; a new
            # file in a directory where the work's files lie (`app/new.py` beside a named
            # `app/old.py`) is part of the work
            name_at = p.rfind("/") + 1
            for i, ch in enumerate(p[name_at:]):
                if ch in "._-~" and p[:name_at + i] in self.named:
                    return False
            parent = p[:name_at - 1] if name_at > 0 else ""
            return bool(parent) and not p.startswith("/") and any(
                q.startswith(parent + "/") and "/" not in q[len(parent) + 1:] for q in self.named)
        return p in self.named or kind == "inplace"

    def judge(self, p, kind):
        """Is the write a code change? Records paths the run creates."""
        code = self.would_be_code(p, kind)
        if not code and p is not UNNAMED and not scratch_reason(p) and kind in ("create", "capture") \
                and not any(ch in p for ch in "*?[") and p not in self.named:
            self.created.add(p)
        return code


def group(cmds):
    pipes = []
    for c in cmds:
        if pipes and pipes[-1][-1].pipeline == c.pipeline:
            pipes[-1].append(c)
        else:
            pipes.append([c])
    return pipes


def sed_files(args, cwd, env):
    files, script_given, i = [], False, 0
    while i < len(args):
        a = args[i]
        if a in ("-e", "--expression", "-f", "--file"):
            script_given, i = True, i + 2
            continue
        if a.startswith("--expression=") or a.startswith("--file="):
            script_given = True
        elif a.startswith("-") and a != "-":
            if re.match(r"^-[a-zA-Z]*[ef]$", a):
                script_given, i = True, i + 2
                continue
        elif not script_given:
            script_given = True
        else:
            files.append(a)
        i += 1
    out = [p for f in files for p in expand(f, cwd, env)]
    return out or [UNNAMED]


def perl_files(args, cwd, env):
    files, i, script_given = [], 0, False
    while i < len(args):
        a = args[i]
        if a.startswith("-") and not a.startswith("--"):
            if a.endswith("e") or a == "-e":
                script_given, i = True, i + 2
                continue
        elif not script_given:
            script_given = True
        else:
            files.append(a)
        i += 1
    out = [p for f in files for p in expand(f, cwd, env)]
    return out or [UNNAMED]


def copy_dest(args, cwd, env):
    args = list(args)
    if "-t" in args:
        i = args.index("-t")
        dest, srcs = args[i + 1] if i + 1 < len(args) else "", nonopts(args[:i] + args[i + 2:])
        return [p for s in srcs for p in expand(os.path.join(dest, base(s)), cwd, env)]
    pos = nonopts(args)
    if len(pos) < 2:
        return []
    dest, srcs = pos[-1], pos[:-1]
    if dest.endswith("/") or dest in (".", "..") or len(srcs) > 1:
        return [p for s in srcs for p in expand(os.path.join(dest, base(s)), cwd, env)]
    return expand(dest, cwd, env)


def patch_targets(args, cwd, env):
    pos, i = [], 0
    while i < len(args):
        a = args[i]
        if a in ("-p", "-i", "-o", "-d", "-D", "-F", "-r", "-B", "-V", "-z", "--input", "--output", "--directory"):
            i += 2
            continue
        if not a.startswith("-"):
            pos.append(a)
        i += 1
    if pos:
        return [(p, "inplace") for p in expand(pos[0], cwd, env)]
    return [(UNNAMED, "unnamed")]


def git_writes(args, cwd, env, an):
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-C", "-c") else 1
    if i >= len(args):
        return []
    sub, rest = args[i], args[i + 1:]
    if sub in ("apply", "am"):
        if any(a in ("--check", "--stat", "--numstat", "--summary") for a in rest):
            return []
        return [(UNNAMED, "unnamed")]
    if sub == "checkout":
        if any(a in ("-b", "-B", "--orphan") for a in rest):
            return []
        if "--" in rest:
            paths = rest[rest.index("--") + 1:]
        else:
            pos = nonopts(rest)
            paths = [a for a in pos if "/" in a or norm(a, cwd) in an.named or norm(a, cwd) in an.created]
            if len(paths) < len(pos) or not pos:
                return [(UNNAMED, "unnamed")]
        return [(p, "inplace") for a in paths for p in expand(a, cwd, env)] or [(UNNAMED, "unnamed")]
    if sub == "restore":
        if "--staged" in rest and "--worktree" not in rest and "-W" not in rest:
            return []
        pos = [a for a in nonopts(rest) if a != "--"]
        skip = {rest[k + 1] for k, a in enumerate(rest) if a in ("-s", "--source") and k + 1 < len(rest)}
        return [(p, "inplace") for a in pos if a not in skip for p in expand(a, cwd, env)]
    if sub == "stash":
        if rest[:1] and rest[0] in ("list", "show", "drop", "clear", "branch", "create", "store"):
            return []
        return [(UNNAMED, "unnamed")]
    if sub == "reset" and "--hard" in rest:
        return [(UNNAMED, "unnamed")]
    if sub in ("merge", "pull", "rebase", "cherry-pick", "revert", "switch"):
        return [(UNNAMED, "unnamed")]
    if sub == "rm":
        return [(p, "remove") for a in nonopts(rest) for p in expand(a, cwd, env)]
    if sub == "mv":
        return [(p, "create") for p in copy_dest(rest, cwd, env)]
    return []


TOKEN = re.compile(r"[A-Za-z0-9_./~+@-]*[A-Za-z_][A-Za-z0-9_./~+@-]*")


def tokens(text):
    return {t.rstrip(".") for t in TOKEN.findall(text) if not t.startswith("~") and t.rstrip(".")}


# --------------------------------------------------------------------------------------
# Check results and families

CANT_START = re.compile(r"No module named|command not found|can't open file|collected 0 items|no tests ran"
                        r"|\b0 selected\b")
FAIL_MARK = re.compile(
    r"Traceback \(most recent call last\)"
    r"|\berror:|\berror\[|\berror TS\d"                         # seed 000's diagnostics, anywhere
    r"|\bFAILED\b|\b[1-9]\d* failed\b|\bFAIL:|\bERROR:|^ERROR\b"
    r"|^=+ .*\b[1-9]\d* errors?\b.*=+\s*$"
    r"|[\u2717\u2718\u274c\u2716]", re.M)
EXC_LAST = re.compile(r"^(?:[A-Za-z_]\w*\.)+[A-Z]\w*: |^[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Iteration)(?::|$)")
# an exception's line or a script's own `Error:` label anywhere in a line's start
EXC_LINE = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]*(?:Error|Exception): ")
TIMED_OUT = re.compile(r"timed out after|TimeoutExpired")
PASS_MARK = re.compile(
    r"\b[1-9]\d* passed\b|^\s*OK(?: \(.*\))?\s*$|\.\.\. ok\s*$|\bPASS(?:ED)?\b|[\u2713\u2714\u2705\u2611]", re.M)
PASS_WORDS = re.compile(
    r"\ball (?:the )?(?:tests?|checks?)\b.*\bpass(?:ed)?\b"
    r"|\bpassed\b(?!\s+(?:to|in|into|as|through|by|with|on|from|a|an|the)\b)"
    r"|\bworks\b|\b(?:is|are|now)\s+working\b|\bworking\s+(?:correctly|properly|as expected|fine)\b"
    r"|\b(?:is|are|was|were|been|now|bug|issue|problem)\s+(?:now\s+)?fixed\b|\bfixed\s*!"
    r"|\bsuccess(?:ful(?:ly)?)?\b|\bsucceed(?:ed|s)\b", re.I)
NEGATION = re.compile(r"\b(?:not|no|never|nothing|cannot|fails?|failed|failure|unsuccessful(?:ly)?"
                      r"|unexpected(?:ly)?)\b|n't\b", re.I)
NOT_A_CLAIM = re.compile(
    r"^\W*(?:testing|checking|verifying|trying|running)\b"          # announces what comes next
    r"|^\W*(?:test|case|step)\s*\d+\s*:|\bcheck (?:that|if|whether)\b"
    r"|[:?]\s*$|(?:\.\.\.|\u2026)\s*$"                           # a heading or a question
    r"|^\s*(?:DEBUG|INFO|TRACE)\b"                                 # a log record
    r"|\b[A-Z]\w*(?:Error|Exception)\b|^\W*error\b", re.I)          # an error message


def script_names(pipes):
    names = set()
    for _, pipe in pipes:
        for cmd in pipe:
            words = unwrap(cmd.words)
            if not words:
                continue
            names.add(words[0])
            names.add(base(words[0]))
            for a in words[1:]:
                if not a.startswith("-") and re.search(r"\.(py|sh|js|rb|pl)$|/", a):
                    names.add(a)
                    names.add(base(a))
    return {n for n in names if n}


def judge_result(rc, out, exec_pipes):
    lines = out.splitlines()
    if CANT_START.search(out):
        return "could_not_start"
    names = script_names(exec_pipes)
    for line in lines:
        if "No such file or directory" in line and any(n in line for n in names):
            return "could_not_start"
    if TIMED_OUT.search(out) and not FAIL_MARK.search(out) and not any(EXC_LINE.search(l) for l in lines):
        return "inconclusive"
    # an uncaught exception's line, whatever its class is called, is a failure marker
    # wherever it stands (issue #28, item 5), caught and printed or not
    if (rc not in (0, None)) or FAIL_MARK.search(out) or any(EXC_LINE.search(l.strip()) for l in lines):
        return "fail"
    if PASS_MARK.search(out):
        return "pass"
    for line in lines:
        if PASS_WORDS.search(line) and not NEGATION.search(line) and not NOT_A_CLAIM.search(line):
            return "pass"
    return "inconclusive"


def family(cmds):
    """The normalized command of a check: its executing pipelines without `cd`, wrappers
    (timeout, env, VAR=x), redirections and trailing filters (| tail, | grep, ...); code
    fed on a here-document is part of it."""
    parts = []
    for pipe in group(cmds):
        stages = []
        for c in pipe:
            words = unwrap(c.words)
            if stages and words and base(words[0]) in ("tail", "head", "grep", "sort", "uniq", "wc", "cat", "less"):
                break
            stages.append(" ".join(words) + (" <<" + c.heredoc if c.heredoc is not None else ""))
        parts.append(" | ".join(stages))
    return re.sub(r"\s+", " ", " ; ".join(p for p in parts if p)).strip()


# --------------------------------------------------------------------------------------
# Figures


def analyse(path):
    an = Analyzer()
    rows, submitted = [], False
    for c in calls(path):
        if SUBMIT.search(c["cmd"]):
            submitted = True
            continue
        r = an.call(c)
        r["turn"] = c["turn"]
        r["cmd"] = c["cmd"]
        r["rc"] = c["rc"]
        rows.append(r)
    return rows, submitted


def figures(rows, submitted):
    changed = [r for r in rows if r["changes"]]
    last = changed[-1] if changed else None
    checks = [r for r in rows if r["check"]]
    verified = [r["turn"] for r in checks if r["check"]["result"] == "pass"]
    if last is None:
        after = checks
    else:
        idx = rows.index(last)
        after = [r for r in rows[idx + 1:] if r["check"]]
        if last["check"] and last["check"]["pos"] > last["change_pos"]:
            after = [last] + after
    counts = {k: 0 for k in RESULTS}
    last_verdict = None
    for r in after:
        counts[r["check"]["result"]] += 1
        if r["check"]["result"] in ("pass", "fail"):
            last_verdict = r["check"]["result"]
    # the last check with a verdict after the last change decides; checks that ran but
    # said nothing readable (inconclusive, could_not_start) make a change unverifiable
    if last_verdict == "fail":
        verdict = "incomplete_verification"
    elif last is None:
        verdict = "completed" if submitted else "missing"
    elif last_verdict == "pass":
        verdict = "completed"
    elif counts["inconclusive"] or counts["could_not_start"]:
        verdict = "unverifiable"
    else:
        verdict = "incomplete_verification"
    return {
        "code_changes": len(changed),
        "last_code_change_turn": last["turn"] if last else None,
        "last_verified_turn": max(verified) if verified else None,
        "checks_after_change": counts,
        "finalized": verdict,
    }


def show_calls(rows):
    for r in rows:
        bits = []
        if r["refused"]:
            bits.append("REFUSED")
        if r["changes"]:
            bits.append("CHANGE " + ",".join(sorted({p.replace(ROOT + "/", "") for p in r["changes"]})))
        if r["scratch"]:
            bits.append("scratch " + ",".join(sorted({str(p).replace(ROOT + "/", "") for p in r["scratch"]})))
        if r["check"]:
            bits.append(f"CHECK {r['check']['result']} [{r['check']['family'][:70]}]")
        if bits:
            first = r["cmd"].strip().splitlines()[0][:80] if r["cmd"].strip() else ""
            print(f"  T{r['turn']} rc={r['rc']} {' | '.join(bits)}   $ {first}")


def fmt(v):
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{v[k]}" for k in v) + "}"
    return "null" if v is None else str(v)


def main(argv):
    args = list(argv[1:])
    detail = None
    if "--calls" in args:
        i = args.index("--calls")
        detail = args[i + 1] if i + 1 < len(args) else ""
        del args[i:i + 2]
    if not args or len(args) > 2:
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        sys.exit(2)
    trajectories = Path(args[0])
    theirs_all = None
    if len(args) == 2:
        report = json.loads(Path(args[1]).read_text())
        theirs_all = {r["run_id"]: (r.get("metrics") or {}).get("ledger_finalization") or {}
                      for r in report["runs"]}
    differ = 0
    for path in sorted(trajectories.rglob("*.traj.json")):
        run = path.name[: -len(".traj.json")]
        rows, submitted = analyse(path)
        mine = figures(rows, submitted)
        line = " ".join(f"{k}={fmt(v)}" for k, v in mine.items())
        if theirs_all is not None:
            theirs = theirs_all.get(run, {})
            diffs = {k: (v, theirs.get(k, "absent")) for k, v in mine.items() if theirs.get(k, "absent") != v}
            differ += bool(diffs)
            if diffs:
                line += f"  DIFFERS (independent, hindsight): {diffs}"
        print(f"{run}: {line}")
        if detail is not None and detail in run:
            show_calls(rows)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main(sys.argv)

#!/usr/bin/env python3
"""Independent check of hindsight's shell-mutation and ledger figures (issue #10).

Reads mini-swe-agent trajectories (`<instance>/<instance>.traj.json`) directly, with its
own small rules written apart from the Rust code (regular expressions, not the shell
grammar), and compares per run with `hindsight replay --format json`:

- calls that changed files (a successful command that redirects authored text to a file,
  edits in place, writes with tee, moves, copies, removes or touches files, patches or
  applies a diff, or runs inline Python that opens a file for writing);
- the turn of the last such call;
- the turn of the last passing check (exit 0, not a viewer, no failure reported in the
  output, and output that says it passed or a command whose earlier output carried
  diagnostics).

Usage: scripts/independent_counts.py TRAJECTORY_DIR HINDSIGHT_JSON

Prints one line per run and, for every figure that differs, both values; exits 1 when a
figure differs. Python 3 standard library only.
"""

import json
import re
import sys
from pathlib import Path

HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n(.*?)\n\s*\2\s*(?:\n|$)", re.S)
TEXT_TOOLS = {"echo", "printf", "cat", "tee", "sed", "awk", "tr", "sort", "uniq", "cut",
              "head", "tail", "paste", "true", "grep", ""}
VIEWERS = {"cat", "head", "tail", "less", "grep", "find", "ls", "wc", "echo", "pwd", "cd",
           "sed", "awk", "diff", "git", "tree", "sort"}


def strip_heredocs(cmd):
    """The command with here-document bodies removed, and the bodies."""
    bodies = [m.group(3) for m in HEREDOC.finditer(cmd)]
    return HEREDOC.sub("\n", cmd), bodies


def split_unquoted(cmd, seps):
    """Splits on any of `seps` outside quotes; drops `#` comments."""
    parts, cur, quote, i = [], "", None, 0
    while i < len(cmd):
        c = cmd[i]
        if quote:
            cur += c
            if c == "\\" and quote == '"' and i + 1 < len(cmd):
                cur += cmd[i + 1]
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote, cur = c, cur + c
        elif c == "#" and (not cur or cur[-1].isspace()):
            while i < len(cmd) and cmd[i] != "\n":
                i += 1
            continue
        else:
            sep = next((s for s in seps if cmd.startswith(s, i)), None)
            if sep:
                parts.append(cur)
                cur = ""
                i += len(sep)
                continue
            cur += c
        i += 1
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def segments(cmd):
    """Top-level pipelines, split on && || ; and newlines outside quotes."""
    return split_unquoted(cmd, ["&&", "||", ";", "\n"])


def stages(seg):
    return split_unquoted(seg, ["|"])


def first_word(seg):
    words = seg.split()
    while words and re.match(r"^\w+=", words[0]):
        words = words[1:]
    return words[0].lstrip("(").rsplit("/", 1)[-1] if words else ""


def writes(cmd):
    text, bodies = strip_heredocs(cmd)
    for seg in segments(text):
        parts = stages(seg)
        authored = all(first_word(s) in TEXT_TOOLS for s in parts)
        for stage in parts:
            name = first_word(stage)
            unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "''", stage)
            for target in re.findall(r"(?<![0-9&<>])&?>{1,2}\s*([^\s&|;<>]+)", unquoted):
                if not target.startswith("/dev/") and authored:
                    return True
            if name == "tee" and authored and re.search(r"\btee\s+(-a\s+)?[^\s-]", stage):
                return True
            if name == "sed" and re.search(r"\s(-[a-zA-Z]*i|--in-place)", stage):
                return True
            if name == "perl" and re.search(r"\s-[a-zA-Z]*i", stage):
                return True
            if name in {"mv", "cp", "rm", "touch", "patch"}:
                if "--dry-run" not in stage:
                    return True
            if name == "git" and re.search(r"\bgit\s+(apply(?!\s+--(check|stat))|am|checkout\s+(\S+\s+)?--|checkout\s+[\w./-]*[/.][\w./-]*|restore|stash\s+(pop|apply)|reset\s+--hard)", stage):
                return True
            if re.match(r"python[\d.]*$", name) or name in {"node", "ruby"}:
                code = " ".join(bodies) + stage
                if re.search(r"open\((?:[^()]|\([^()]*\))*?,\s*['\"][rwab+]*[wax+][rwab+]*['\"]", code) \
                        or re.search(r"\.write_(text|bytes)\(|writeFileSync\(", code):
                    return True
    return False


def is_viewer(cmd):
    text, _ = strip_heredocs(cmd)
    names = [first_word(stage) for seg in segments(text) for stage in stages(seg)]
    if any(n == "sed" for n in names) and re.search(r"\bsed\s+-[a-zA-Z]*i", text):
        return False
    if "git" in names and not re.search(r"\bgit\s+(log|show|diff|status|grep|blame)\b", text):
        return False
    return all(n in VIEWERS for n in names)


PASS_LINE = re.compile(r"^\s*(PASS|ok\s)|\b\d+ passed\b|test result: ok|(^|\s)0 errors", re.M)
CHECKER_LINE = re.compile(r"error:|error\[|error TS\d|^\s*FAIL|^\s*--- FAIL|\b\d+ failed\b", re.M)
EXCEPTION_LINE = re.compile(r"^\s*[\w.]*(Error|Exception):(\s|$)", re.M)


def key(cmd):
    """A rough family key: whitespace collapsed, `cd /testbed &&`, `2>&1` and trailing
    `| tail`/`| head` dropped."""
    k = re.sub(r"\s+", " ", cmd).strip()
    k = re.sub(r"^cd /testbed && ", "", k)
    k = re.sub(r"\s*2>&1", "", k)
    return re.sub(r"(\s*\|\s*(tail|head)(\s+-n)?(\s+-?\d+)?)+$", "", k)


def passing_checks(cs):
    """Turns of passing checks: exit 0, not a viewer, no failure (diagnostic or uncaught
    exception) in the output, and either output that says it passed or a command whose
    earlier output carried a compiler's or test runner's diagnostics (a checker)."""
    checkers, turns = set(), []
    for c in cs:
        if is_viewer(c["cmd"]):
            continue
        if CHECKER_LINE.search(c["out"]):
            checkers.add(key(c["cmd"]))
        fails = CHECKER_LINE.search(c["out"]) or EXCEPTION_LINE.search(c["out"])
        if c["rc"] == 0 and not fails and (PASS_LINE.search(c["out"]) or key(c["cmd"]) in checkers):
            turns.append(c["turn"])
    return turns


def calls(path):
    doc = json.loads(path.read_text())
    turn, out = 0, []
    for msg in doc["messages"]:
        if msg["role"] == "assistant":
            turn += 1
            for action in (msg.get("extra") or {}).get("actions") or []:
                out.append({"turn": turn, "cmd": action.get("command", ""), "rc": None, "out": ""})
        elif msg["role"] in ("tool", "user") and out and out[-1]["rc"] is None and turn:
            content = msg.get("content")
            content = content if isinstance(content, str) else json.dumps(content)
            rc = (msg.get("extra") or {}).get("returncode")
            if rc is None:
                m = re.search(r"<returncode>(-?\d+)</returncode>", content)
                rc = int(m.group(1)) if m else -1
            out[-1]["rc"], out[-1]["out"] = rc, content
    return out


def figures(path):
    cs = [c for c in calls(path) if "COMPLETE_TASK_AND_SUBMIT" not in c["cmd"]]
    muts = [c["turn"] for c in cs if c["rc"] == 0 and writes(c["cmd"])]
    checks = passing_checks(cs)
    return {
        "mutations": len(muts),
        "last_mutation_turn": max(muts) if muts else None,
        "last_verified_turn": max(checks) if checks else None,
    }


def main():
    trajectories, report = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
    ours = {r["run_id"]: r["metrics"]["ledger_finalization"] for r in report["runs"]}
    differ = 0
    for path in sorted(trajectories.glob("*/*.traj.json")):
        run = path.name.removesuffix(".traj.json")
        mine, theirs = figures(path), ours.get(run, {})
        diffs = {k: (v, theirs.get(k)) for k, v in mine.items() if theirs.get(k) != v}
        differ += bool(diffs)
        line = " ".join(f"{k}={v}" for k, v in mine.items())
        print(f"{run}: {line}" + (f"  DIFFERS (independent, hindsight): {diffs}" if diffs else ""))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The first-run check: do what a new user does with the docs, from a fresh copy of the repository.

Every command in a fenced ```sh (or ```bash, ```shell) block of every tracked Markdown file is
run, and every `$ ` line of a ```console block; ```text blocks are syntax, not commands. Each doc
gets its own fresh copy of the repository, and its commands run there in the order of the doc,
from the copy's root (so `view out/excavator` finds what the `run` before it wrote). Each command
must exit 0, or with the code its check says, and then every check written for it must hold.

The fresh copy: the files `git ls-files --cached --others --exclude-standard` lists (tracked,
plus new files not ignored: what `git add -A && git commit` would commit), copied from the
working tree, so the check tests the edits in progress and nothing built or run before (no
`target/`, no `out/`). Without git it copies the tree less `.git`, `target`, `out` and `runs`, and
says so.

The program: `cargo run --release --`, `hydraulink` and `target/release/hydraulink` at the start
of a command are replaced by the binary given with --bin (or $HYDRAULINK_BIN), so nothing is
rebuilt. Any other `cargo` command must be marked `skip:` with its reason (the README's test
command is the one that runs this check). A command is run without a shell: shell operators
(pipes, `;`, `&&`, redirections, `$(…)`) are refused, so that a doc cannot hide a second command.

Servers: `serve` and `view` are started, the address they print (`http://…`) is fetched with an
HTTP GET, which must answer 200 with a page; a second later they must still be running; they are
then stopped with Ctrl-C (SIGINT) and must exit 0 within 15 s. Every command has a time limit (--timeout, default 180 s).
$XDG_DATA_HOME points into the copy, so the game's leaderboard stays out of the user's home.

Checks: an HTML comment right after the closing fence (invisible when the doc is rendered):

    <!-- check
    run: out/boom/results.csv z1.q last = "15.4°"
    run: count stderr /pressure below 0 Pa/ = "two cavitation warnings"
    check: stdout /VB .*?([\\d.]+) MPa/ = "2.52 MPa"
    -->

One check a line: `[COMMAND:] SUBJECT OP QUOTE [as NUMBER [UNIT]] [± TOL[%]] [# why]`.

* COMMAND picks the command of the block: its number (1, 2, …) or a word of it (`check`,
  `run`) that only one command of the block has. It may be left out when the block has one.
* SUBJECT, what the command produced:
  - `exit`: the exit code (default expectation: 0);
  - `stdout /RE/`, `stderr /RE/`, `output /RE/` (either): group 1 of the first match (the whole
    match without a group); `last …`, `2nd …` another match; `count …` the number of matching
    lines; `all …` every match must pass; `list …` the matches as an English list ("V2 and V1");
  - `FILE.csv COLUMN REDUCER`, REDUCER one of `first`, `last`, `max`, `min`, `maxabs`, `at T`
    (the row nearest t = T), `rise T1..T2` (value at T2 less value at T1), `period` (mean time
    between upward crossings of the middle of the column's range), `first-nonzero-time` (t of
    the first row where the column is not 0); `max`, `min` and `maxabs` may end in `over T1..T2`
    to look at those times only;
  - `FILE.json KEY.KEY`: a value of a JSON file;
  - `DIR/ has`: the files the quote lists ("a.csv, b.json and plots/*.svg") are in DIR;
  - `page /RE/`: for a server, in the page its address served.
  Files are relative to the copy's root.
* OP: `=`, `<`, `<=`, `>`, `>=`, or `in` (a string found is part of the quote).
* QUOTE: the words of the doc that state the result, in "…" (or `…` when they hold a "). The quote
  must stand in the text of the block's section (heading to heading; backticks and line breaks
  do not count; a ```console block's shown output is text too): the expected value is read from
  the quote, so the doc and its check cannot say different things. Its first number (or
  number word, one … twelve) is the expected value, unless `as NUMBER` gives it ("below a
  millijoule" as 1e-3). A unit after that number converts the SI values of CSV and JSON files: °
  (from rad), MPa, kPa, bar, mm, kN, kW, L/min, ms, mJ; stdout and stderr are compared as printed.
  A string (a JSON string, a capture that is not a number) is compared with the quote's last
  "…" part, or the whole quote.
* TOL: by default half a unit of the quote's last digit (the quote is the value correctly
  rounded; counts and exit codes exactly); `± 0.3` or `± 2%` widens it, and should say why after #.

Other lines of a check comment: `skip: REASON` (the block is not run; the reason is printed),
`unchecked: "QUOTE" REASON` (a number of the text near the command that is deliberately not
checked, e.g. a model input; see --unchecked), `timeout: SECONDS`. A whole doc is skipped with
`<!-- check-doc: skip: REASON -->` anywhere in it.

--unchecked lists the numbers with a unit or a decimal point that the section of a command block
quotes (outside `code`) without a check or an `unchecked:` line: a quoted result that
drifts unnoticed is findable. With --strict it exits 1 when there are any.

Exit status: 0 when every command and check passed, 1 when one failed (each failure names the
doc, the line of the quoted number, the quote and the value found), 2 for a malformed check.
"""

import argparse
import csv
import glob
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

COMMAND_LANGS = {"sh", "bash", "shell", "console"}
SERVER_SUBCOMMANDS = {"serve", "view"}
SHELL_OPERATORS = {"|", "||", "&", "&&", ";", ";;", ">", ">>", "<", "<<", "(", ")"}
NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}
# SI value × factor = the value in the quote's unit
UNIT_FACTORS = {
    "°": 180.0 / math.pi, "deg": 180.0 / math.pi, "MPa": 1e-6, "kPa": 1e-3, "bar": 1e-5,
    "mm": 1e3, "kN": 1e-3, "kW": 1e-3, "L/min": 6e4, "ms": 1e3, "mJ": 1e3,
}
NUMBER_RE = r"[−-]?\d+(?:\.\d+)?(?:[eE][−+-]?\d+)?"
# the units a quote's number may carry (a word after the number that is not one is no unit)
UNITS = sorted(
    set(UNIT_FACTORS) | {"%", "s", "rad", "m", "N", "J", "Pa", "kg", "W", "V", "Hz", "µs", "rad/s", "m/s"},
    key=len,
    reverse=True,
)
UNIT_RE = "(?:" + "|".join(re.escape(u) for u in UNITS) + r")(?![\w/])"
SERVER_STOP_S = 15.0
SERVER_ALIVE_S = 1.0


class MalformedCheck(Exception):
    """A check comment that cannot be read: exit 2."""


def to_float(text):
    return float(text.replace("−", "-"))


def decimals(text):
    """Digits after the point of a number as written (1.5e-3 counts its mantissa)."""
    mantissa = re.split(r"[eE]", text)[0]
    places = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(re.split(r"[eE]", text)[1].replace("−", "-")) if re.search(r"[eE]", text) else 0
    return places - exponent


# ---------------------------------------------------------------------------------------------
# Reading the docs


class Block:
    """A fenced command block and what its check comment says about it."""

    def __init__(self, doc, lang, start, end, lines):
        self.doc = doc
        self.lang = lang
        self.start = start  # line of the opening fence (1-based)
        self.end = end  # line of the closing fence
        self.lines = lines  # [(line number, text)] inside the fence
        self.commands = []  # [(line number, text)]
        self.skip = None
        self.checks = []
        self.unchecked = []  # [(quote, line of the comment)]
        self.timeout = None
        self.comment_line = None

    def where(self):
        return f"{self.doc.path}:{self.start}"


class Check:
    def __init__(self, block, line, text):
        self.block = block
        self.line = line  # line of the check in the comment
        self.text = text
        self.command = None  # index into block.commands
        self.subject = None  # parsed subject, a dict
        self.subject_text = None  # as written
        self.op = None
        self.quote = None
        self.quote_line = None
        self.expected = None  # float or str
        self.unit = None
        self.tolerance = None


class Doc:
    def __init__(self, path, text):
        self.path = path
        self.lines = text.split("\n")
        self.blocks = []  # command blocks
        self.skip = None
        self.headings = []  # line numbers of headings
        self.fenced = set()  # line numbers inside fences (with the fences)
        self.comment_lines = set()  # line numbers inside HTML comments
        self.console_output = set()  # line numbers of the output shown in ```console blocks


FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")


def parse_doc(path, text):
    doc = Doc(path, text)
    lines = doc.lines
    i = 0
    n = len(lines)
    pending = None  # the last command block, until prose or a comment follows it
    while i < n:
        line = lines[i]
        m = FENCE_RE.match(line)
        if m:
            fence, lang = m.group(2), m.group(3).lower()
            start = i + 1
            body = []
            i += 1
            while i < n and not (
                lines[i].strip().startswith(fence[0] * len(fence))
                and lines[i].strip().strip(fence[0]) == ""
            ):
                body.append((i + 1, lines[i]))
                i += 1
            end = i + 1
            doc.fenced.update(range(start, end + 1))
            pending = None
            if lang in COMMAND_LANGS:
                block = Block(doc, lang, start, end, body)
                block.commands = commands_of(block)
                if lang == "console":
                    doc.console_output.update(
                        number for number, text in body if not text.strip().startswith("$ ")
                    )
                doc.blocks.append(block)
                pending = block
            i += 1
            continue
        stripped = line.strip()
        if stripped.startswith("<!--"):
            first = i + 1
            comment = [stripped[4:]]
            while "-->" not in comment[-1] and i + 1 < n:
                i += 1
                comment.append(lines[i].strip())
            comment[-1] = comment[-1].split("-->")[0]
            doc.comment_lines.update(range(first, i + 2))
            head = comment[0].strip()
            if head.startswith("check-doc"):
                body = " ".join(c.strip() for c in comment)[len("check-doc") :].strip(" :")
                if not body.startswith("skip"):
                    raise MalformedCheck(f"{path}:{first}: a check-doc comment only says `skip: REASON`")
                doc.skip = body[len("skip") :].strip(" :") or "no reason given"
            elif re.match(r"check\b", head):
                if pending is None:
                    raise MalformedCheck(
                        f"{path}:{first}: a check comment must follow a ```sh or ```console block "
                        "(blank lines between are allowed, prose is not)"
                    )
                comment[0] = head[len("check") :].lstrip(" :")
                read_check_comment(pending, first, comment)
            pending = None
            i += 1
            continue
        if stripped.startswith("#"):
            doc.headings.append(i + 1)
        if stripped:
            pending = None
        i += 1
    return doc


def commands_of(block):
    """The commands of a block: logical lines (with `\\` continuations joined) without comments;
    in a console block only the `$ ` lines (and their continuations)."""
    commands = []
    current = None
    for number, text in block.lines:
        stripped = text.strip()
        if current is not None:
            current[1] += " " + stripped.lstrip(">").strip().rstrip("\\").strip()
            if not stripped.endswith("\\"):
                commands.append(tuple(current))
                current = None
            continue
        if block.lang == "console":
            if not stripped.startswith("$ "):
                continue
            stripped = stripped[2:].strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current = [number, stripped.rstrip("\\").strip()]
        else:
            commands.append((number, stripped))
    if current is not None:
        commands.append(tuple(current))
    return commands


CHECK_RE = re.compile(
    r"^(?:(?P<cmd>[\w-]+):\s+)?(?P<subject>.+?)\s*(?P<op><=|>=|=|<|>|\bin\b)\s*"
    r"(?P<quote>\"[^\"]*\"|`[^`]*`)"
    r"(?:\s+as\s+(?P<as>" + NUMBER_RE + r")(?:\s*(?P<asunit>" + UNIT_RE + r"))?)?"
    r"(?:\s*(?:±|\+-|\+/-)\s*(?P<tol>[\d.eE+-]+)\s*(?P<pct>%)?)?"
    r"\s*(?:#.*)?$"
)


def read_check_comment(block, first_line, comment):
    block.comment_line = first_line
    for offset, raw in enumerate(comment):
        line = first_line + offset
        text = raw.strip()
        if not text:
            continue
        if text.startswith("skip"):
            block.skip = text[len("skip") :].strip(" :—-") or "no reason given"
            continue
        if text.startswith("timeout:"):
            block.timeout = float(text.split(":", 1)[1])
            continue
        if text.startswith("unchecked:"):
            m = re.match(r"unchecked:\s*(\"[^\"]*\"|`[^`]*`)", text)
            if not m:
                raise MalformedCheck(f"{block.doc.path}:{line}: write `unchecked: \"QUOTE\" REASON`")
            block.unchecked.append((m.group(1)[1:-1], line))
            continue
        m = CHECK_RE.match(text)
        if not m:
            raise MalformedCheck(
                f"{block.doc.path}:{line}: cannot read the check `{text}`; write "
                "`[COMMAND:] SUBJECT OP \"QUOTE\" [as NUMBER] [± TOL]` (see scripts/first_run.py)"
            )
        check = Check(block, line, text)
        check.command = pick_command(block, m.group("cmd"), line)
        check.subject = parse_subject(m.group("subject"), block.doc.path, line)
        check.subject_text = m.group("subject").strip()
        check.op = m.group("op")
        check.quote = m.group("quote")[1:-1]
        if m.group("as"):
            check.expected = to_float(m.group("as"))
            check.unit = m.group("asunit")
            check.tolerance = 0.5 * 10.0 ** (-decimals(m.group("as")))
        elif check.subject["kind"] == "has" or check.op == "in":
            check.expected = check.quote
        else:
            read_quote(check)
        if m.group("tol"):
            tol = float(m.group("tol"))
            if m.group("pct"):
                if not isinstance(check.expected, float):
                    raise MalformedCheck(f"{block.doc.path}:{line}: a % tolerance needs a number")
                tol = abs(check.expected) * tol / 100.0
            check.tolerance = tol
        if check.subject["kind"] in ("exit", "count"):
            check.tolerance = 0.0
        if check.op == "in" and check.subject["kind"] in ("csv", "exit", "count", "has"):
            raise MalformedCheck(f"{block.doc.path}:{line}: `in` compares a string with the quote")
        block.checks.append(check)


def pick_command(block, word, line):
    if word is None:
        if len(block.commands) != 1:
            raise MalformedCheck(
                f"{block.doc.path}:{line}: the block at line {block.start} has "
                f"{len(block.commands)} commands: start the check with the one it is for (`run:`)"
            )
        return 0
    if word.isdigit():
        k = int(word)
        if not 1 <= k <= len(block.commands):
            raise MalformedCheck(f"{block.doc.path}:{line}: the block has no command {k}")
        return k - 1
    hits = [k for k, (_, c) in enumerate(block.commands) if doc_subcommand(c) == word]
    if not hits:
        hits = [k for k, (_, c) in enumerate(block.commands) if word in shlex.split(c, comments=True)]
    if len(hits) != 1:
        raise MalformedCheck(
            f"{block.doc.path}:{line}: `{word}:` names {len(hits)} commands of the block at line "
            f"{block.start}; it must name one (or use its number)"
        )
    return hits[0]


def doc_subcommand(command):
    """The hydraulink subcommand of a doc command (`run`, `serve`, …), or None."""
    try:
        tokens = shlex.split(command, comments=True)
    except ValueError:
        return None
    if tokens[:4] == ["cargo", "run", "--release", "--"]:
        tokens = tokens[4:]
    elif tokens and tokens[0].endswith("hydraulink"):
        tokens = tokens[1:]
    else:
        return None
    return next((t for t in tokens if not t.startswith("-")), None)


def parse_subject(text, path, line):
    text = text.strip()
    if text == "exit":
        return {"kind": "exit"}
    m = re.match(r"^(\S+/)\s+has$", text)
    if m:
        return {"kind": "has", "dir": m.group(1)}
    m = re.match(r"^(?:(count|all|list|last|\d+(?:st|nd|rd|th))\s+)?(stdout|stderr|output|page)\s+/(.*)/$", text)
    if m:
        try:
            regex = re.compile(m.group(3))
        except re.error as e:
            raise MalformedCheck(f"{path}:{line}: bad regular expression /{m.group(3)}/: {e}")
        return {"kind": m.group(1) or "first", "stream": m.group(2), "regex": regex}
    m = re.match(r"^(\S+\.csv)\s+(\S+)\s+(.+)$", text)
    if m:
        reducer = m.group(3).split()
        window = None
        if len(reducer) == 3 and reducer[1] == "over":
            window = parse_range(reducer[2], path, line)
            reducer = reducer[:1]
        name = reducer[0]
        arg = None
        if name == "at" and len(reducer) == 2:
            arg = to_float(reducer[1])
        elif name == "rise" and len(reducer) == 2:
            arg = parse_range(reducer[1], path, line)
        elif name in ("first", "last", "max", "min", "maxabs", "first-nonzero-time", "period") and len(
            reducer
        ) == 1:
            pass
        else:
            raise MalformedCheck(f"{path}:{line}: unknown reducer `{m.group(3)}`")
        if window and name not in ("max", "min", "maxabs"):
            raise MalformedCheck(f"{path}:{line}: `over T1..T2` goes with max, min or maxabs")
        return {"kind": "csv", "file": m.group(1), "column": m.group(2), "reducer": name,
                "arg": arg, "window": window}
    m = re.match(r"^(\S+\.json)\s+(\S+)$", text)
    if m:
        return {"kind": "json", "file": m.group(1), "key": m.group(2)}
    raise MalformedCheck(
        f"{path}:{line}: unknown subject `{text}` (exit, stdout /RE/, stderr /RE/, page /RE/, "
        "FILE.csv COLUMN REDUCER, FILE.json KEY)"
    )


def parse_range(text, path, line):
    m = re.match(r"^(" + NUMBER_RE + r")\.\.(" + NUMBER_RE + r")$", text)
    if not m:
        raise MalformedCheck(f"{path}:{line}: write a time range as T1..T2, not `{text}`")
    return (to_float(m.group(1)), to_float(m.group(2)))


def read_quote(check):
    """The expected value and unit from the quote's first number (or number word)."""
    quote = check.quote
    m = re.search(r"(?<![\w.])(" + NUMBER_RE + r")(?:\s*(" + UNIT_RE + r"))?", quote)
    if m:
        check.expected = to_float(m.group(1))
        check.unit = m.group(2)
        check.tolerance = 0.5 * 10.0 ** (-decimals(m.group(1)))
        return
    for word in re.findall(r"[A-Za-z]+", quote):
        if word.lower() in NUMBER_WORDS:
            check.expected = float(NUMBER_WORDS[word.lower()])
            check.tolerance = 0.0
            return
    strings = re.findall(r"\"([^\"]*)\"", quote)
    check.expected = strings[-1] if strings else quote


# ---------------------------------------------------------------------------------------------
# Where a quote stands in the doc


def prose_index(doc, first, last):
    """The doc's text from line `first` to `last` (inclusive) as one string with backticks
    dropped and whitespace collapsed, the line of each of its characters, and whether each was in
    a `code span`. Fenced blocks and HTML comments are left out, except the output shown in a
    ```console block (what the command prints, as the doc quotes it)."""
    chars, where, code = [], [], []
    for number in range(first, last + 1):
        shown = number in doc.console_output
        if (number in doc.fenced and not shown) or number in doc.comment_lines:
            continue
        inside = False
        for ch in doc.lines[number - 1].strip() + " ":
            if ch == "`":
                inside = not inside
                continue
            if ch.isspace():
                if chars and chars[-1] == " ":
                    continue
                ch = " "
            chars.append(ch)
            where.append(number)
            code.append(inside)
    return "".join(chars), where, code


def section(doc, block):
    """The first and last line of the section (heading to heading) that holds the block."""
    first = max([h for h in doc.headings if h < block.start], default=1)
    last = min([h - 1 for h in doc.headings if h > block.end], default=len(doc.lines))
    return first, last


def normalize(quote):
    return re.sub(r"\s+", " ", quote.replace("`", "")).strip()


def locate_quotes(doc):
    """Sets each check's quote_line; a quote the text does not hold is an error."""
    problems = []
    for block in doc.blocks:
        first, last = section(doc, block)
        text, where, _ = prose_index(doc, first, last)
        after = next((k for k, n in enumerate(where) if n > block.end), len(where))
        for quote, line, what in [(c.quote, c.line, c) for c in block.checks] + [
            (q, line, None) for q, line in block.unchecked
        ]:
            q = normalize(quote)
            k = text.find(q, after)
            if k < 0:
                k = text.find(q)
            if k < 0:
                problems.append(
                    f"{doc.path}:{line}: the check quotes \"{quote}\", but the section of the block "
                    f"at line {block.start} (lines {first}–{last}) does not say it: "
                    "update the check with the text"
                )
            elif what is not None:
                what.quote_line = where[k]
    return problems


# ---------------------------------------------------------------------------------------------
# Running


class Outcome:
    def __init__(self):
        self.code = None
        self.stdout = ""
        self.stderr = ""
        self.page = None
        self.seconds = 0.0
        self.failure = None  # why the command itself failed (timeout, no address, …)


def substitute(doc, number, command, binary):
    """The argv of a doc command, with the program replaced by the binary."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    tokens = list(lexer)
    bad = [t for t in tokens if t in SHELL_OPERATORS]
    if bad or "$(" in command:
        raise MalformedCheck(
            f"{doc.path}:{number}: `{command}` is not a simple command ({(bad or ['$('])[0]}); "
            "first_run.py runs one program per line: split it, or mark the block `skip: REASON`"
        )
    if tokens[:4] == ["cargo", "run", "--release", "--"]:
        return [binary] + tokens[4:]
    if tokens and tokens[0] in ("hydraulink", "target/release/hydraulink", "./target/release/hydraulink"):
        return [binary] + tokens[1:]
    if tokens and tokens[0] == "cargo":
        raise MalformedCheck(
            f"{doc.path}:{number}: `{command}` would build with cargo; only `cargo run --release --` "
            "is replaced by the built binary. Mark the block `skip: REASON` in a check comment"
        )
    return tokens


def subcommand(argv, binary):
    if not argv or argv[0] != binary:
        return None
    for token in argv[1:]:
        if not token.startswith("-"):
            return token
    return None


def run_plain(argv, cwd, env, timeout):
    outcome = Outcome()
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
        outcome.code = done.returncode
        outcome.stdout = done.stdout.decode("utf-8", "replace")
        outcome.stderr = done.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        outcome.stdout = (e.stdout or b"").decode("utf-8", "replace")
        outcome.stderr = (e.stderr or b"").decode("utf-8", "replace")
        outcome.failure = f"did not finish within {timeout:.0f} s (stopped)"
    except OSError as e:
        outcome.failure = f"cannot start: {e}"
    outcome.seconds = time.monotonic() - started
    return outcome


def run_server(argv, cwd, env, timeout):
    """Starts a server, fetches the address it prints, stops it with Ctrl-C."""
    outcome = Outcome()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
    except OSError as e:
        outcome.failure = f"cannot start: {e}"
        return outcome
    out, err = [], []
    address = threading.Event()
    url = []

    def read(stream, sink, look):
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            sink.append(line)
            m = look and re.search(r"https?://[^\s]+", line)
            if m and not address.is_set():
                url.append(m.group(0))
                address.set()

    readers = [
        threading.Thread(target=read, args=(proc.stdout, out, True), daemon=True),
        threading.Thread(target=read, args=(proc.stderr, err, True), daemon=True),
    ]
    for t in readers:
        t.start()
    deadline = started + timeout
    while not address.is_set() and proc.poll() is None and time.monotonic() < deadline:
        address.wait(0.1)
    if address.is_set():
        try:
            # straight to the server: a proxy from the environment must not answer for it
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(url[0], timeout=max(5.0, deadline - time.monotonic())) as r:
                body = r.read().decode("utf-8", "replace")
                if r.status != 200 or "<html" not in body.lower():
                    outcome.failure = f"{url[0]} answered {r.status} without a page"
                outcome.page = body
        except OSError as e:
            outcome.failure = f"GET {url[0]} failed: {e}"
        # a server whose engine dies after its first answer is no server: still there a moment on?
        time.sleep(SERVER_ALIVE_S)
        if not outcome.failure and proc.poll() is not None:
            outcome.failure = f"stopped by itself {SERVER_ALIVE_S:.0f} s after it served the page"
    elif proc.poll() is None:
        outcome.failure = f"printed no address (http://…) within {timeout:.0f} s"
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(SERVER_STOP_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            outcome.failure = outcome.failure or f"did not stop within {SERVER_STOP_S:.0f} s of Ctrl-C"
    elif not address.is_set():
        outcome.failure = "exited before it printed an address"
    for t in readers:
        t.join(5.0)
    outcome.code = proc.returncode
    outcome.stdout = "".join(out)
    outcome.stderr = "".join(err)
    outcome.seconds = time.monotonic() - started
    return outcome


# ---------------------------------------------------------------------------------------------
# Evaluating checks


class Measure(Exception):
    """The subject could not be measured (a file or column missing, no match)."""


def read_csv(path, cache):
    if path not in cache:
        try:
            with open(path, newline="") as f:
                rows = list(csv.reader(f))
        except OSError as e:
            raise Measure(f"cannot read {path}: {e.strerror}")
        if not rows:
            raise Measure(f"{path} is empty")
        header = rows[0]
        columns = {name: [] for name in header}
        for row in rows[1:]:
            for name, cell in zip(header, row):
                try:
                    columns[name].append(float(cell))
                except ValueError:
                    columns[name].append(float("nan"))
        cache[path] = columns
    return cache[path]


def period(times, values, s):
    """The mean time between the upward crossings of the middle of the column's range."""
    middle = 0.5 * (max(values) + min(values))
    ups = []
    for k in range(1, len(values)):
        a, b = values[k - 1] - middle, values[k] - middle
        if a < 0.0 <= b:
            ups.append(times[k - 1] + (times[k] - times[k - 1]) * (-a) / (b - a))
    if len(ups) < 2:
        raise Measure(f"`{s['column']}` crosses the middle of its range upwards {len(ups)} times")
    return (ups[-1] - ups[0]) / (len(ups) - 1)


def nearest(times, t):
    return min(range(len(times)), key=lambda k: abs(times[k] - t))


def measure(check, outcome, root, cache):
    """The values the subject takes (one, or several for `all`), in SI for files."""
    s = check.subject
    kind = s["kind"]
    if kind == "exit":
        return [float(outcome.code)], False
    if kind == "has":
        names = [n.strip() for n in re.split(r",\s*|\s+and\s+", check.quote) if n.strip()]
        missing = [n for n in names if not glob.glob(os.path.join(root, s["dir"], n))]
        if missing:
            raise Measure(f"{s['dir']} has no {', '.join(missing)}")
        return [check.expected], False
    if kind == "json":
        path = os.path.join(root, s["file"])
        try:
            with open(path) as f:
                value = json.load(f)
        except (OSError, ValueError) as e:
            raise Measure(f"cannot read {s['file']}: {e}")
        for key in s["key"].split("."):
            if not isinstance(value, dict) or key not in value:
                raise Measure(f"{s['file']} has no `{s['key']}`")
            value = value[key]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return [float(value)], True
        return [value if isinstance(value, str) else json.dumps(value)], False
    if kind == "csv":
        columns = read_csv(os.path.join(root, s["file"]), cache)
        if s["column"] not in columns:
            raise Measure(f"{s['file']} has no column `{s['column']}`")
        values = columns[s["column"]]
        times = columns.get("time")
        if not values:
            raise Measure(f"{s['file']} has no rows")
        reducer, arg = s["reducer"], s["arg"]
        if reducer in ("at", "rise", "first-nonzero-time", "period") or s["window"]:
            if times is None:
                raise Measure(f"{s['file']} has no `time` column")
        if s["window"]:
            lo, hi = s["window"]
            values = [v for t, v in zip(times, values) if lo - 1e-9 <= t <= hi + 1e-9]
            if not values:
                raise Measure(f"{s['file']} has no rows between t = {lo} and {hi} s")
        if reducer == "first":
            v = values[0]
        elif reducer == "last":
            v = values[-1]
        elif reducer == "max":
            v = max(values)
        elif reducer == "min":
            v = min(values)
        elif reducer == "maxabs":
            v = max(abs(x) for x in values)
        elif reducer == "at":
            v = values[nearest(times, arg)]
        elif reducer == "rise":
            v = values[nearest(times, arg[1])] - values[nearest(times, arg[0])]
        elif reducer == "period":
            v = period(times, values, s)
        else:  # first-nonzero-time
            hits = [t for t, x in zip(times, values) if x != 0.0]
            if not hits:
                raise Measure(f"`{s['column']}` is 0 in every row")
            return [hits[0]], False
        return [v], True
    # a stream
    if s["stream"] == "page":
        if outcome.page is None:
            raise Measure("the command served no page")
        text = outcome.page
    else:
        text = {
            "stdout": outcome.stdout,
            "stderr": outcome.stderr,
            "output": outcome.stdout + outcome.stderr,
        }[s["stream"]]
    matches = list(s["regex"].finditer(text))
    if kind == "count":
        lines = [line for line in text.splitlines() if s["regex"].search(line)]
        return [float(len(lines))], False
    if not matches:
        raise Measure(f"no match of /{s['regex'].pattern}/ in {s['stream']}")
    captures = [m.group(1) if m.groups() else m.group(0) for m in matches]
    if kind == "list":
        words = captures if len(captures) < 2 else [", ".join(captures[:-1]), captures[-1]]
        return [" and ".join(words)], False
    if kind == "first":
        captures = captures[:1]
    elif kind == "last":
        captures = captures[-1:]
    elif kind != "all":
        nth = int(kind[:-2])
        if not 1 <= nth <= len(captures):
            raise Measure(f"{len(captures)} matches of /{s['regex'].pattern}/ in {s['stream']}, no {kind}")
        captures = [captures[nth - 1]]
    values = []
    for c in captures:
        try:
            values.append(to_float(c))
        except ValueError:
            values.append(c)
    return values, False


def compare(value, check):
    expected = check.expected
    if check.op == "in":
        return str(value) in check.quote, None
    if isinstance(expected, str) or isinstance(value, str):
        return str(value) == str(expected), None
    tol = check.tolerance or 0.0
    slack = 1e-9 * max(1.0, abs(expected))
    if math.isnan(value):
        return False, None
    return {
        "=": abs(value - expected) <= tol + slack,
        "<": value < expected,
        "<=": value <= expected + slack,
        ">": value > expected,
        ">=": value >= expected - slack,
    }[check.op], tol


def show(value):
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value)


def with_unit(value, unit):
    if not unit:
        return show(value)
    return f"{show(value)}{'' if unit == '°' else ' '}{unit}"


def evaluate(check, outcome, root, cache):
    """None when the check holds, else what was found against what the text says."""
    subject = check.subject_text
    try:
        values, si = measure(check, outcome, root, cache)
    except Measure as e:
        return f"the text says \"{check.quote}\", but {e} (check: {subject})"
    factor = UNIT_FACTORS.get(check.unit, 1.0) if si else 1.0
    for raw in values:
        value = raw * factor if isinstance(raw, float) else raw
        ok, tol = compare(value, check)
        if not ok:
            if check.op == "in":
                want = f"holds {show(value)}"
            else:
                want = f"{check.op} {with_unit(check.expected, check.unit)}"
                if tol and check.op == "=":
                    want += f" ± {tol:.3g}"
            found = with_unit(value, check.unit) if isinstance(value, float) else show(value)
            return f"the text says \"{check.quote}\" ({want}), but {subject} is {found}"
    return None


# ---------------------------------------------------------------------------------------------
# Unchecked numbers

PROSE_NUMBER_RE = re.compile(
    r"(?<![\w.\[/-])(" + NUMBER_RE + r")(\s*(?:°|%|L/min|MPa|kPa|Pa|bar|rad|ms|µs|s|mm|m|kN|N|"
    r"mJ|kJ|J|kg|kW|W|Hz|V)(?![\w]))?"
)


def unchecked_numbers(doc):
    """[(line, text)] of the numbers after command blocks that no check or `unchecked:` quotes."""
    found = []
    seen_sections = set()
    for block in doc.blocks:
        if block.skip:
            continue
        first, last = section(doc, block)
        text, where, code = prose_index(doc, first, last)
        covered = [False] * len(text)
        for block2 in doc.blocks:
            quotes = [c.quote for c in block2.checks] + [q for q, _ in block2.unchecked]
            for quote in quotes:
                q = normalize(quote)
                k = text.find(q)
                while k >= 0:
                    for j in range(k, k + len(q)):
                        covered[j] = True
                    k = text.find(q, k + 1)
        for m in PROSE_NUMBER_RE.finditer(text):
            number, unit = m.group(1), m.group(2)
            if not unit and "." not in number:
                continue
            if any(covered[m.start() : m.end()]) or any(code[m.start() : m.end()]):
                continue
            key = (where[m.start()], m.group(0).strip())
            if key not in seen_sections:
                seen_sections.add(key)
                found.append(key)
    return found


# ---------------------------------------------------------------------------------------------
# The fresh copy


def fresh_copy(repo, dest):
    """Copies what a commit would hold into dest; returns a note on how."""
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=repo, capture_output=True, check=True
        ).stdout.decode("utf-8").strip()
        if os.path.realpath(top) != os.path.realpath(repo):
            raise ValueError("not the root of a git repository")
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=repo, capture_output=True, check=True,
        ).stdout.decode("utf-8").split("\0")
        how = "git ls-files (tracked and new unignored files, as in the working tree)"
    except (OSError, ValueError, subprocess.CalledProcessError):
        listed = []
        for top, dirs, files in os.walk(repo):
            dirs[:] = [d for d in dirs if not (top == repo and d in (".git", "target", "out", "runs"))]
            for f in files:
                listed.append(os.path.relpath(os.path.join(top, f), repo))
        how = "no git: the tree without .git, target, out and runs"
    for rel in listed:
        if not rel:
            continue
        src = os.path.join(repo, rel)
        if not os.path.lexists(src):
            continue  # deleted in the working tree: a commit would not have it
        dst = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)
    return how


def markdown_files(root):
    files = []
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".md"):
                files.append(os.path.relpath(os.path.join(top, name), root))
    return files


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.environ.get("HYDRAULINK_BIN"),
                    help="the built hydraulink binary (default $HYDRAULINK_BIN)")
    ap.add_argument("--repo", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                    help="the repository (default: the one holding this script)")
    ap.add_argument("--only", action="append", default=[],
                    help="check only this doc (a path from the repository's root); repeatable")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds a command may take")
    ap.add_argument("--keep", action="store_true", help="keep the fresh copies and print where")
    ap.add_argument("--unchecked", action="store_true",
                    help="list numbers quoted after commands without a check; run nothing")
    ap.add_argument("--strict", action="store_true", help="with --unchecked: exit 1 if any")
    ap.add_argument("--list", action="store_true", help="list the commands and checks; run nothing")
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    started = time.monotonic()

    # read every doc of a fresh copy (so a doc's checks are those a commit would hold)
    work = tempfile.mkdtemp(prefix="hydraulink-first-run-")
    try:
        status = check_docs(args, repo, work)
    finally:
        if args.keep:
            print(f"fresh copies kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"time: {time.monotonic() - started:.1f} s")
    return status


def check_docs(args, repo, work):
    pristine = os.path.join(work, "pristine")
    os.makedirs(pristine)
    how = fresh_copy(repo, pristine)
    docs = []
    try:
        for rel in markdown_files(pristine):
            if args.only and rel not in args.only:
                continue
            with open(os.path.join(pristine, rel), encoding="utf-8") as f:
                doc = parse_doc(rel, f.read())
            if doc.blocks or doc.skip:
                docs.append(doc)
        problems = []
        for doc in docs:
            problems += locate_quotes(doc)
        if problems:
            for p in problems:
                print(p)
            return 2
    except MalformedCheck as e:
        print(e)
        return 2
    if args.unchecked:
        return list_unchecked(docs, args.strict)
    if args.list:
        return list_checks(docs)
    if not args.bin:
        print("give the built binary with --bin PATH or $HYDRAULINK_BIN")
        return 2
    binary = os.path.abspath(args.bin)
    print(f"first run of the docs with {binary}; fresh copy from {how}")
    failures = []
    counts = {"docs": 0, "blocks": 0, "skipped": 0, "commands": 0, "checks": 0, "numbers": 0}
    for doc in docs:
        if doc.skip:
            print(f"{doc.path}: skipped ({doc.skip})")
            counts["skipped"] += len(doc.blocks)
            continue
        counts["docs"] += 1
        root = os.path.join(work, doc.path.replace(os.sep, "_"))
        shutil.copytree(pristine, root, symlinks=True)
        env = dict(os.environ)
        env["XDG_DATA_HOME"] = os.path.join(root, ".data")
        env.pop("CARGO_TARGET_DIR", None)
        for block in doc.blocks:
            if block.skip:
                counts["skipped"] += 1
                print(f"{block.where()}: skipped ({block.skip})")
                continue
            counts["blocks"] += 1
            try:
                argvs = [substitute(doc, n, c, binary) for n, c in block.commands]
            except MalformedCheck as e:
                failures.append(str(e))
                print(f"FAIL {e}")
                continue
            for k, ((number, command), argv) in enumerate(zip(block.commands, argvs)):
                counts["commands"] += 1
                timeout = block.timeout or args.timeout
                server = subcommand(argv, binary) in SERVER_SUBCOMMANDS
                outcome = (run_server if server else run_plain)(argv, root, env, timeout)
                checks = [c for c in block.checks if c.command == k]
                exit_checks = [c for c in checks if c.subject["kind"] == "exit"]
                head = f"{doc.path}:{number}: $ {command}"
                problems = []
                if outcome.failure:
                    problems.append(outcome.failure)
                elif not exit_checks and outcome.code != 0:
                    problems.append(f"exit code {outcome.code}, the doc expects 0")
                if not outcome.failure:
                    cache = {}
                    for check in checks:
                        counts["checks"] += 1
                        if isinstance(check.expected, float):
                            counts["numbers"] += 1
                        why = evaluate(check, outcome, root, cache)
                        if why:
                            problems.append(f"{doc.path}:{check.quote_line}: {why} (check at line {check.line})")
                kind = " (server: fetched, stopped with Ctrl-C)" if server else ""
                if problems:
                    print(f"FAIL {head}{kind}  [{outcome.seconds:.1f} s]")
                    for p in problems:
                        print(f"     {p}")
                    print(indent_tail("stdout", outcome.stdout))
                    print(indent_tail("stderr", outcome.stderr))
                    failures.append(f"{head}: " + "; ".join(problems))
                else:
                    print(f"ok   {head}{kind}  [{outcome.seconds:.1f} s, {len(checks)} checks]")
    print(
        f"{counts['docs']} docs, {counts['blocks']} blocks run ({counts['skipped']} skipped), "
        f"{counts['commands']} commands, {counts['checks']} checks ({counts['numbers']} numbers)"
    )
    if failures:
        print(f"\n{len(failures)} failed:")
        for f in failures:
            print(f"  {f}")
        print(
            "A doc and the program disagree: fix the program if the doc is right, else the doc's "
            "text and its check comment together (scripts/first_run.py describes the checks)."
        )
        return 1
    return 0


def indent_tail(name, text, lines=15):
    tail = text.rstrip("\n").split("\n")[-lines:] if text.strip() else ["(empty)"]
    return "\n".join([f"     --- {name} (last {lines} lines)"] + [f"     | {t}" for t in tail])


def list_unchecked(docs, strict):
    total = 0
    for doc in docs:
        if doc.skip:
            continue
        for line, text in unchecked_numbers(doc):
            print(f"{doc.path}:{line}: {text}")
            total += 1
    print(f"{total} numbers quoted near commands without a check or an `unchecked:` line")
    if total:
        print(
            "give each a check in the <!-- check --> comment after its command block, or an "
            "`unchecked: \"QUOTE\" REASON` line there when it is no result (scripts/first_run.py)"
        )
    return 1 if strict and total else 0


def list_checks(docs):
    for doc in docs:
        for block in doc.blocks:
            status = f"skip ({block.skip})" if block.skip or doc.skip else ""
            print(f"{block.where()} {block.lang} {status}")
            for k, (number, command) in enumerate(block.commands):
                print(f"  {number}: {command}")
                for c in block.checks:
                    if c.command == k:
                        print(f"     {c.text}  -> {show(c.expected)} {c.unit or ''} (line {c.quote_line})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

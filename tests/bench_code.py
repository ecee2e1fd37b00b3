#!/usr/bin/env python3
"""Benchmark of code_search.py on a copy of the CPython stdlib, and of Go, Java, Rust, TypeScript.

Not a unittest module (its name does not start with ``test_``); run it by hand:

    python tests/bench_code.py [--runs N] [--quick] [--python EXE] [--tool PATH] [--markdown]
                               [--no-polyglot | --languages go,java,rust,typescript]
                               [--polyglot-only] [--npm-package NAME]

It copies the ``.py`` files of the running interpreter's standard library
(without site-packages, dist-packages and __pycache__) into a temp folder and
drops the files the running ``ast`` cannot parse (it reports how many). Then it
times whole processes, all in the same run, and prints medians with min and max:

  (a) floor: one process that reads, SHA-256-hashes and ast.parse-es every file
  (b) a cold ``index`` (fresh --out path each run)
  (c) a no-change re-index
  (d) a re-index after one file changed (a new function appended each run),
      and after one file was deleted (restored, untimed re-index, after each run)
  (e) whole-process ``search`` from the index, for 5 questions, and their median
  (f) the tutorial-style one-shot ``code_search.py ROOT QUESTION``
  (g) peak RSS of each child process (os.wait4 rusage; with worker processes
      it is the largest single process of the tree, not their sum)
  (h) the same at 2x the corpus: two copies side by side, ROOT/a and ROOT/b

It prints the ratios (b)/(a), (c)/(b), (d)/(b), (f)/(e) and 2x/1x, and
PASS/FAIL for each target of the code-index issue. A tool without ``index`` and
``search`` subcommands (the tutorial's version) gets (a) and (f) only.

Then (i), the polyglot corpus (on by default; --no-polyglot turns it off,
--languages chooses, --polyglot-only skips (a)-(h) but keeps the Python copy as
the baseline). Each language whose source is on this machine is copied into the
temp folder, only that language's files, so that its row measures that
language; a missing source (or npm missing or failing) is one stderr line and
the row is left out:

  go          the .go files of /usr/share/go-1.19/src (Debian golang-1.19-src),
              the whole tree as shipped: cmd/, vendor/ and testdata/ included
  java        the .java files of the java.base module in the src.zip of
              /usr/lib/jvm/java-17-openjdk-*/ (Debian openjdk-17-source), read
              with zipfile
  rust        the .rs files of /usr/src/rustc-*/library (Debian rust-src)
  typescript  the .ts and .tsx files of the npm package rxjs (--npm-package),
              without the declaration files (.d.ts): `npm pack NAME --offline`,
              then --prefer-offline, in the temp folder, read with tarfile
  python      the copy of the stdlib above, the baseline row

Files larger than the tool's default --max-file-size (2 MiB) are left out of
each copy (and counted), so MB is what the tool reads. For each language, one
round per run, languages interleaved, the benchmark times a cold ``index``
(fresh --out path) with the tool's default --jobs (one worker per core) and with
``--jobs 1`` (one process; when the tool has --jobs), and the same for an empty
folder (the fixed start-up cost). It prints per language and jobs setting:
files, MB, median cold seconds (min - max), MB/s, s/MB, net s/MB (median cold
minus the empty folder's median at the same jobs setting), the ratio of the
net s/MB to Python's in the same run (and the raw ratio), the peak RSS (max
over runs; with workers the largest single process), and what the tool wrote
to stderr (skipped files, notes; listed below the table). Runs: --runs when
given, else 2 (1 with --quick). The targets: each language's net s/MB at
--jobs 1 is at most 1.5x Python's, and the peak RSS of indexing Go (both jobs
settings) stays under 300 MB. A language whose index command fails is reported
(stderr tail) and its target is FAIL; the rest goes on. Before (i) the benchmark
lowers its own peak RSS to its current RSS (Linux /proc/self/clear_refs): a
child's ru_maxrss starts at its parent's peak (vfork/fork + exec), so (i)'s RSS
cannot read below the benchmark's own RSS, which the header prints.

After (a)-(h), (j): on a fresh index of the stdlib copy, whole-process ``grep
PATTERN --index`` for 3 patterns beside a plain process that reads the same files
(listed in a file) and runs ``re.finditer`` over their bytes, and the two loops
again inside one process (best of the runs: no start-up, no index loading); and
whole-process ``trace`` of a 50-frame Python traceback into random functions of the
index's files, with another machine's paths (checked: every frame resolves to its
function). Targets: grep in process at most 2x the plain loop (whole processes are
printed beside it), trace at most 0.3 s.

Then (k), ``serve`` on the same stdlib index (when the tool has it): the median time of
``GET /api/search`` for the 5 questions (each asked once first, then --runs times; a
request from this process to the running server, no process start), 20 concurrent
clients asking searches, symbols, grep and read for 10 s (errors counted; the server's
peak RSS, read from /proc, in the first and in the second half of the load), and the same search median
with a second index, Go's standard library (GO_SOURCES; without it, a second copy of
the stdlib), alone and together with the stdlib's. Targets: an API search at most 30
ms, no error, the second half's peak RSS at most 10% above the first's, two indexes at most 1.5x the slower alone.

The tool's stdout is discarded; a failing command in (a)-(h) stops the benchmark
with its stderr tail (exit status 2). Exit status 0 when the benchmark
completed, whatever the targets say. Progress goes to stderr. Everything lives
in one temp folder, removed at the end.
"""
import argparse
import ast
import glob
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import threading
import time
import unicodedata
import warnings
import zipfile
from pathlib import Path, PurePosixPath

DEFAULT_TOOL = Path(__file__).resolve().parent.parent / 'code_search.py'
QUESTIONS = (
    'parse a url query string',
    'copy a directory tree',
    'ZipFile.extract',
    '윤년 확인',
    'http server request handler',
)
PRUNE_DIRS = {'site-packages', 'dist-packages', '__pycache__'}
CHANGED_FILE_PREFERRED = 'textwrap.py'
INDEX_NAME = 'index.json'
MB = 1000 * 1000

# Targets (code-index issue).
SEARCH_SPEEDUP_MIN = 50.0      # (f)/(e)
SEARCH_SECONDS_MAX = 0.30      # (e), whole process, about
COLD_OVER_FLOOR_MAX = 1.3      # (b)/(a)
REINDEX_OVER_COLD_MAX = 0.10   # (c)/(b); (d) may add the parse of the file
INDEX_RSS_MAX_MB = 300
SEARCH_RSS_MAX_MB = 250
SEARCH_GROWTH_2X_MAX = 2.2     # (e) at 2x / (e) at 1x
LANGUAGE_OVER_PYTHON_MAX = 1.5  # (i) net s/MB of a language / Python's, --jobs 1
GO_RSS_MAX_MB = 300             # (i) peak RSS of indexing Go, strictly under
GREP_OVER_PLAIN_MAX = 2.0       # (j) grep / a plain re loop over the same files
TRACE_SECONDS_MAX = 0.30        # (j) trace of a TRACE_FRAMES-frame traceback, whole process

SERVE_SEARCH_MS_MAX = 30.0      # (k) API search inside the running server
SERVE_GROWTH_MAX = 0.10         # (k) server RSS: peak of the load's second half over its first
TWO_INDEXES_OVER_ONE_MAX = 1.5  # (k) search over two indexes / the slower one alone

# (k) serve: the load the concurrent clients put on the server.
SERVE_CLIENTS = 20
SERVE_LOAD_SECONDS = 10.0
SERVE_LOAD = ('/api/search?q=parse+a+url+query+string', '/api/search?q=%EC%9C%A4%EB%85%84',
              '/api/symbol?name=urlsplit', '/api/grep?pattern=def+parse_&max_results=50',
              '/api/read?path=textwrap.py&start=1&end=80', '/api/health')

# (j) grep and trace on the stdlib copy's index.
GREP_PATTERNS = ('def parse_', 'TODO', r'socket\.')
TRACE_FRAMES = 50

# A plain re loop over the files listed in a file, as `python -c PLAIN_GREP_CODE
# LIST PATTERN`: the floor grep is measured against.
PLAIN_GREP_CODE = r'''
import re, sys
pattern = re.compile(sys.argv[2].encode(), re.MULTILINE)
matches = 0
for path in open(sys.argv[1], encoding='utf-8').read().splitlines():
    with open(path, 'rb') as handle:
        data = handle.read()
    for match in pattern.finditer(data):
        matches += 1
print(matches)
'''

# The same two loops in one process, without start-up and index loading:
# `python -c IN_PROCESS_GREP_CODE TOOL_DIR INDEX LIST RUNS PATTERN...`.
IN_PROCESS_GREP_CODE = r'''
import re, sys, time
sys.path.insert(0, sys.argv[1])
import code_search
files = code_search.index_files(code_search.open_index_file(sys.argv[2]))
paths = open(sys.argv[3], encoding='utf-8').read().splitlines()
for text in sys.argv[5:]:
    tool = plain = float('inf')
    for _ in range(int(sys.argv[4])):
        started = time.perf_counter()
        code_search.grep([files], code_search.GrepQuery(text))
        tool = min(tool, time.perf_counter() - started)
        started = time.perf_counter()
        pattern = re.compile(text.encode(), re.MULTILINE)
        for path in paths:
            with open(path, 'rb') as handle:
                data = handle.read()
            for match in pattern.finditer(data):
                pass
        plain = min(plain, time.perf_counter() - started)
    print(tool, plain)
'''

# (i) The polyglot corpus: where each source may be (glob patterns, first match
# wins; several matches: the highest version), and which files are copied.
POLYGLOT_LANGUAGES = ('go', 'java', 'rust', 'typescript')
LANGUAGE_ALIASES = {'ts': 'typescript', 'golang': 'go', 'rs': 'rust'}
GO_SOURCES = ('/usr/share/go-1.19/src', '/usr/share/go-*/src', '/usr/lib/go-*/src')
JAVA_SOURCES = ('/usr/lib/jvm/java-17-openjdk-*/lib/src.zip', '/usr/lib/jvm/*/lib/src.zip')
JAVA_MODULE = 'java.base'
RUST_SOURCES = ('/usr/src/rustc-*/library',)
NPM_PACKAGE = 'rxjs'
NPM_PACK_FLAGS = ('--offline', '--prefer-offline')
NPM_TIMEOUT = 180
SUFFIXES = {'python': ('.py',), 'go': ('.go',), 'java': ('.java',), 'rust': ('.rs',),
            'typescript': ('.ts', '.tsx')}
EXCLUDED_SUFFIXES = {'typescript': ('.d.ts', '.d.tsx')}
MAX_FILE_SIZE = 2 * 1024 * 1024  # the tool's default --max-file-size
POLYGLOT_RUNS = 2                # when --runs is not given; 1 with --quick
EMPTY_ROW = '(empty folder)'
STDERR_LISTED_MAX = 8            # tool stderr lines listed per language

# The floor, run by the tool's interpreter as `python -c FLOOR_CODE ROOT`.
FLOOR_CODE = r'''
import ast, hashlib, os, sys, warnings
warnings.simplefilter('ignore')
files = bad = 0
for folder, dirs, names in os.walk(sys.argv[1]):
    dirs.sort()
    for name in sorted(names):
        if not name.endswith('.py'):
            continue
        path = os.path.join(folder, name)
        with open(path, 'rb') as handle:
            data = handle.read()
        hashlib.sha256(data).hexdigest()
        try:
            ast.parse(data, path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            bad += 1
        files += 1
print(files, bad)
'''


class CommandFailed(Exception):
    """A child process exited non-zero or timed out."""


def progress(message):
    print('[bench] ' + message, file=sys.stderr, flush=True)


# --- Running and measuring child processes ---------------------------------

class Result:
    def __init__(self, seconds, rss_bytes, stdout, stderr_lines, stderr_text=''):
        self.seconds = seconds
        self.rss_bytes = rss_bytes
        self.stdout = stdout
        self.stderr_lines = stderr_lines
        self.stderr_text = stderr_text


def run(cmd, timeout, capture=False, check=True):
    """Run cmd to completion; wall time (perf_counter) and peak RSS via os.wait4."""
    out = tempfile.TemporaryFile() if capture else subprocess.DEVNULL
    err = tempfile.TemporaryFile()
    timed_out = []

    def kill():
        timed_out.append(True)
        try:
            proc.kill()
        except OSError:
            pass

    try:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timer.start()
        try:
            if hasattr(os, 'wait4'):
                _, status, usage = os.wait4(proc.pid, 0)
                seconds = time.perf_counter() - start
                proc.returncode = os.waitstatus_to_exitcode(status)
                # ru_maxrss: KiB on Linux and the BSDs, bytes on macOS.
                scale = 1 if sys.platform == 'darwin' else 1024
                rss = usage.ru_maxrss * scale
            else:
                proc.wait()
                seconds = time.perf_counter() - start
                rss = None
        finally:
            timer.cancel()
        err.seek(0)
        err_text = err.read().decode('utf-8', 'replace')
        stdout = None
        if capture:
            out.seek(0)
            stdout = out.read().decode('utf-8', 'replace')
    finally:
        err.close()
        if capture:
            out.close()
    if check and (timed_out or proc.returncode != 0):
        why = 'timed out after %ss' % timeout if timed_out else 'exit status %s' % proc.returncode
        tail = '\n'.join(err_text.rstrip('\n').splitlines()[-25:])
        raise CommandFailed('command failed (%s):\n  %s\n--- stderr tail ---\n%s'
                            % (why, ' '.join(map(str, cmd)), tail or '(empty)'))
    return Result(seconds, rss, stdout, len(err_text.splitlines()), err_text)


class Series:
    """Measurements of one row: seconds and peak RSS per run."""

    def __init__(self):
        self.seconds = []
        self.rss = []

    def add(self, result):
        self.seconds.append(result.seconds)
        if result.rss_bytes is not None:
            self.rss.append(result.rss_bytes)

    def extend(self, other):
        self.seconds.extend(other.seconds)
        self.rss.extend(other.rss)

    def median(self):
        return statistics.median(self.seconds) if self.seconds else None


# --- Corpus --------------------------------------------------------------------

def copy_stdlib(dest, utf8_only=False):
    """Copy the stdlib's .py files into dest, keeping only what `ast` parses.

    utf8_only also drops what the tutorial's version cannot read: files that are
    not strict UTF-8 or do not parse as decoded text (a BOM, a coding cookie).
    """
    source = Path(sysconfig.get_paths()['stdlib']).resolve()
    kept = dropped = size = 0
    dropped_names = []
    for folder, dirs, names in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in PRUNE_DIRS)
        for name in sorted(names):
            if not name.endswith('.py'):
                continue
            path = Path(folder, name)
            if not path.is_file():
                continue
            data = path.read_bytes()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    ast.parse(data, str(path))
                    if utf8_only:
                        ast.parse(data.decode('utf-8'), str(path))
            # ValueError includes UnicodeDecodeError.
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                dropped += 1
                dropped_names.append(path.relative_to(source).as_posix())
                continue
            target = dest / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            kept += 1
            size += len(data)
    return source, kept, dropped, dropped_names, size


def pick_changed_file(root):
    """textwrap.py if present, else the file of median size."""
    if (root / CHANGED_FILE_PREFERRED).is_file():
        return Path(CHANGED_FILE_PREFERRED)
    files = sorted(root.rglob('*.py'), key=lambda p: (p.stat().st_size, str(p)))
    return files[len(files) // 2].relative_to(root)


def parse_seconds(path, repeat=5):
    """Best in-process time to read, hash and parse one file."""
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        data = path.read_bytes()
        hashlib.sha256(data).hexdigest()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            ast.parse(data)
        spent = time.perf_counter() - start
        best = spent if best is None else min(best, spent)
    return best


def folder_size(path):
    return sum(p.stat().st_size for p in Path(path).rglob('*') if p.is_file())


# --- One scale (1x or 2x) ------------------------------------------------------

def supports(python, tool, sub, option, timeout):
    """True if `tool SUB --help` works and mentions option (tutorial's tool: no)."""
    try:
        result = run([python, str(tool), sub, '--help'], min(timeout, 60),
                     capture=True, check=False)
    except OSError:
        return False
    return result.stdout is not None and option in result.stdout


def measure_scale(label, root, change_rel, args, work, has_index, oneshot_runs):
    """All measurements for one corpus root; returns a dict of Series and facts."""
    py, tool, runs, timeout = args.python, str(args.tool), args.runs, args.timeout
    m = {'floor': Series(), 'cold': Series(), 'nochange': Series(), 'changed': Series(),
         'deleted': Series(), 'oneshot': Series(), 'search': {q: Series() for q in QUESTIONS}}
    idx_dir = work / ('index-' + label)
    base = None

    for i in range(1, runs + 1):
        res = run([py, '-c', FLOOR_CODE, str(root)], timeout, capture=True)
        m['floor'].add(res)
        counts = res.stdout.split()
        progress('%s (a) floor %d/%d: %.3f s (%s files, %s unparsable by the tool interpreter)'
                 % (label, i, runs, res.seconds, counts[0], counts[1]))
        if not has_index:
            continue
        out_dir = idx_dir / ('cold-%d' % i)
        out_dir.mkdir(parents=True)
        out = out_dir / INDEX_NAME
        res = run([py, tool, 'index', str(root), '--out', str(out)], timeout)
        m['cold'].add(res)
        progress('%s (b) cold index %d/%d: %.3f s, %.0f MB RSS, %d stderr lines'
                 % (label, i, runs, res.seconds, (res.rss_bytes or 0) / MB, res.stderr_lines))
        m['skipped_lines'] = res.stderr_lines
        if base is not None:
            shutil.rmtree(base.parent)
        base = out

    if has_index:
        m['index_mb'] = folder_size(base.parent) / MB
        index_cmd = [py, tool, 'index', str(root), '--out', str(base)]
        for i in range(1, runs + 1):
            res = run(index_cmd, timeout)
            m['nochange'].add(res)
            progress('%s (c) no-change re-index %d/%d: %.3f s' % (label, i, runs, res.seconds))

        changed = root / change_rel
        original = changed.read_bytes()
        m['parse_file'] = parse_seconds(changed)
        try:
            text = original
            for i in range(1, runs + 1):
                # Append one more function each run: size and mtime both change.
                text += ('\n\ndef _bench_added_%d(value):\n    """Added by bench_code.py."""\n'
                         '    return value + %d\n' % (i, i)).encode()
                changed.write_bytes(text)
                res = run(index_cmd, timeout)
                m['changed'].add(res)
                progress('%s (d) one file changed %d/%d: %.3f s' % (label, i, runs, res.seconds))
        finally:
            changed.write_bytes(original)
        run(index_cmd, timeout)  # back in sync, untimed

        aside = work / 'deleted-file.py'
        for i in range(1, runs + 1):
            shutil.move(str(changed), str(aside))
            try:
                res = run(index_cmd, timeout)
            finally:
                shutil.move(str(aside), str(changed))
            m['deleted'].add(res)
            progress('%s (d) one file deleted %d/%d: %.3f s' % (label, i, runs, res.seconds))
            run(index_cmd, timeout)  # restored file indexed again, untimed

        m['first_lines'] = {}
        for q in QUESTIONS:  # untimed warm-up, and a look at the answer
            res = run([py, tool, 'search', q, '--index', str(base)], timeout, capture=True)
            lines = [line for line in res.stdout.splitlines() if line.strip()]
            m['first_lines'][q] = lines[0][:90] if lines else '(no output)'
            progress('%s (e) warm-up %r -> %s' % (label, q, m['first_lines'][q]))
        for i in range(1, runs + 1):
            for q in QUESTIONS:
                res = run([py, tool, 'search', q, '--index', str(base)], timeout)
                m['search'][q].add(res)
            progress('%s (e) search round %d/%d: %s' % (label, i, runs, ', '.join(
                '%.3f' % m['search'][q].seconds[-1] for q in QUESTIONS)))

    for i in range(1, oneshot_runs + 1):
        res = run([py, tool, str(root), QUESTIONS[0]], timeout)
        m['oneshot'].add(res)
        progress('%s (f) one-shot %d/%d: %.3f s, %.0f MB RSS'
                 % (label, i, oneshot_runs, res.seconds, (res.rss_bytes or 0) / MB))

    if has_index:
        shutil.rmtree(idx_dir)
        every = Series()
        for q in QUESTIONS:
            every.extend(m['search'][q])
        m['search_all'] = every
        # The median of the questions' medians; min and max over every search run.
        m['search_median'] = statistics.median(m['search'][q].median() for q in QUESTIONS)
        reindex = Series()
        for key in ('nochange', 'changed', 'deleted'):
            reindex.extend(m[key])
        m['reindex'] = reindex
    return m


# --- Report --------------------------------------------------------------------

def fmt_s(value):
    return '-' if value is None else '%.3f s' % value


def fmt_mb(value):
    return '-' if value is None else '%.0f MB' % (value / MB)


def ratio(num, den):
    if num is None or den is None or den == 0:
        return None
    return num / den


def fmt_ratio(value, digits=2):
    return '-' if value is None else ('%.' + str(digits) + 'f') % value


def stats_cells(values, fmt, median=None):
    """(n, median, min-max) cells for a list of measurements."""
    if not values:
        return ['-', '-', '-']
    mid = statistics.median(values) if median is None else median
    return [str(len(values)), fmt(mid), '%s - %s' % (fmt(min(values)), fmt(max(values)))]


def build_rows(one, two, has_index):
    """Rows: label, 1x cells, ratio note, 2x cells, 2x/1x."""
    rows = []

    def add(label, get, fmt, note=None, median_key=None):
        cells = []
        mids = []
        for m in (one, two):
            if m is None:
                cells.append(None)
                mids.append(None)
                continue
            values = get(m)
            mid = m[median_key] if median_key else (statistics.median(values) if values else None)
            cells.append(stats_cells(values, fmt, mid))
            mids.append(mid)
        growth = fmt_ratio(ratio(mids[1], mids[0])) if two is not None else None
        rows.append((label, cells[0], note(one) if note else '', cells[1], growth))

    add('(a) floor: read + SHA-256 + ast.parse, 1 process', lambda m: m['floor'].seconds, fmt_s)
    if has_index:
        add('(b) cold index', lambda m: m['cold'].seconds, fmt_s,
            lambda m: '(b)/(a) = %s' % fmt_ratio(ratio(m['cold'].median(), m['floor'].median())))
        add('(c) no-change re-index', lambda m: m['nochange'].seconds, fmt_s,
            lambda m: '(c)/(b) = %s'
            % fmt_ratio(ratio(m['nochange'].median(), m['cold'].median()), 3))
        add('(d) re-index, 1 file changed', lambda m: m['changed'].seconds, fmt_s,
            lambda m: '(d)/(b) = %s'
            % fmt_ratio(ratio(m['changed'].median(), m['cold'].median()), 3))
        add('(d) re-index, 1 file deleted', lambda m: m['deleted'].seconds, fmt_s,
            lambda m: '(d)/(b) = %s'
            % fmt_ratio(ratio(m['deleted'].median(), m['cold'].median()), 3))
        for q in QUESTIONS:
            add('(e) search "%s"' % q, lambda m, q=q: m['search'][q].seconds, fmt_s)
        add('(e) search, median of the 5 questions', lambda m: m['search_all'].seconds, fmt_s,
            median_key='search_median')
    add('(f) one-shot ROOT "%s"' % QUESTIONS[0], lambda m: m['oneshot'].seconds, fmt_s,
        (lambda m: '(f)/(e) = %s' % fmt_ratio(ratio(m['oneshot'].median(), m['search_median']), 1))
        if has_index else None)
    add('(g) peak RSS, (a) floor', lambda m: m['floor'].rss, fmt_mb)
    if has_index:
        add('(g) peak RSS, cold index', lambda m: m['cold'].rss, fmt_mb)
        add('(g) peak RSS, re-index (c)+(d)', lambda m: m['reindex'].rss, fmt_mb)
        add('(g) peak RSS, search (all questions)', lambda m: m['search_all'].rss, fmt_mb)
    add('(g) peak RSS, one-shot', lambda m: m['oneshot'].rss, fmt_mb)
    if has_index:
        add('index size on disk', lambda m: [m['index_mb'] * MB], fmt_mb)
    return rows


def build_targets(one, two, has_index):
    """(target, measured, result) triples; result is PASS, FAIL or n/a."""
    if not has_index:
        return [('index/search targets', 'tool has no index/search subcommands', 'n/a')]
    targets = []

    def check(name, measured, ok):
        targets.append((name, measured, 'n/a' if ok is None else ('PASS' if ok else 'FAIL')))

    speedup = ratio(one['oneshot'].median(), one['search_median'])
    check('search >= %gx faster than one-shot, whole process' % SEARCH_SPEEDUP_MIN,
          '(f)/(e) = %s' % fmt_ratio(speedup, 1),
          None if speedup is None else speedup >= SEARCH_SPEEDUP_MIN)
    worst_q = max(QUESTIONS, key=lambda q: one['search'][q].median())
    check('search about %.1f s or less (median of questions)' % SEARCH_SECONDS_MAX,
          '%s (slowest question %s)'
          % (fmt_s(one['search_median']), fmt_s(one['search'][worst_q].median())),
          one['search_median'] <= SEARCH_SECONDS_MAX)
    cold = ratio(one['cold'].median(), one['floor'].median())
    check('cold index <= %gx the floor (a)' % COLD_OVER_FLOOR_MAX,
          '(b)/(a) = %s' % fmt_ratio(cold), cold <= COLD_OVER_FLOOR_MAX)
    nochange = ratio(one['nochange'].median(), one['cold'].median())
    check('no-change re-index <= %d%% of cold' % (REINDEX_OVER_COLD_MAX * 100),
          '(c)/(b) = %s' % fmt_ratio(nochange, 3), nochange <= REINDEX_OVER_COLD_MAX)
    budget = REINDEX_OVER_COLD_MAX * one['cold'].median() + one['parse_file']
    changed = one['changed'].median()
    check('1 changed file <= 10% of cold + parsing it',
          '%s vs %s (no-change %s, file parse %.1f ms)' % (
              fmt_s(changed), fmt_s(budget), fmt_s(one['nochange'].median()),
              one['parse_file'] * 1000),
          changed <= budget)
    deleted = ratio(one['deleted'].median(), one['cold'].median())
    check('1 deleted file <= 10% of cold',
          '(d)/(b) = %s' % fmt_ratio(deleted, 3), deleted <= REINDEX_OVER_COLD_MAX)
    index_rss = max(one['cold'].rss + one['reindex'].rss) if one['cold'].rss else None
    check('peak RSS of index <= %d MB (max over runs)' % INDEX_RSS_MAX_MB, fmt_mb(index_rss),
          None if index_rss is None else index_rss <= INDEX_RSS_MAX_MB * MB)
    search_rss = max(one['search_all'].rss) if one['search_all'].rss else None
    check('peak RSS of search <= %d MB (max over runs)' % SEARCH_RSS_MAX_MB, fmt_mb(search_rss),
          None if search_rss is None else search_rss <= SEARCH_RSS_MAX_MB * MB)
    if two is None:
        check('search at 2x corpus <= %gx' % SEARCH_GROWTH_2X_MAX, 'not measured (--quick)', None)
    else:
        growth = ratio(two['search_median'], one['search_median'])
        check('search at 2x corpus <= %gx' % SEARCH_GROWTH_2X_MAX, '2x/1x = %s' % fmt_ratio(growth),
              growth <= SEARCH_GROWTH_2X_MAX)
    return targets


def width(text):
    """Display width in a terminal: East Asian wide characters take two columns."""
    return sum(2 if unicodedata.east_asian_width(c) in 'WF' else 1 for c in text)


def pad(text, size, right=False):
    fill = ' ' * max(0, size - width(text))
    return fill + text if right else text + fill


def render(header, rows, targets, two_measured, markdown):
    heads = ['measure', 'n', '1x median', '1x min - max', 'ratio']
    if two_measured:
        heads += ['n 2x', '2x median', '2x min - max', '2x/1x']
    table = []
    for label, c1, note, c2, growth in rows:
        line = [label] + (c1 or ['-', '-', '-']) + [note]
        if two_measured:
            line += (c2 or ['-', '-', '-']) + [growth or '-']
        table.append(line)
    target_heads = ['target', 'measured', 'result']
    out = []
    if markdown:
        out += ['- ' + h for h in header] + ['']
        for heads_, body, right in ((heads, table, True), (target_heads, targets, False)):
            out.append('| ' + ' | '.join(heads_) + ' |')
            out.append('|' + '|'.join('---:' if right and i else '---'
                                      for i in range(len(heads_))) + '|')
            for line in body:
                out.append('| ' + ' | '.join(c.replace('|', '\\|') for c in line) + ' |')
            out.append('')
    else:
        out += header + ['']
        for heads_, body, right in ((heads, table, True), (target_heads, targets, False)):
            widths = [max(width(r[i]) for r in [heads_] + list(body)) for i in range(len(heads_))]
            for n, line in enumerate([heads_] + list(body)):
                cells = [pad(c, widths[i], right and i > 0) for i, c in enumerate(line)]
                out.append('  '.join(cells).rstrip())
                if n == 0:
                    out.append('  '.join('-' * w for w in widths))
            out.append('')
    passed = sum(1 for t in targets if t[2] == 'PASS')
    failed = sum(1 for t in targets if t[2] == 'FAIL')
    out.append('targets: %d PASS, %d FAIL' % (passed, failed))
    return '\n'.join(out)


# --- (i) Polyglot corpus ----------------------------------------------------------

class Corpus:
    """One language's copy in the temp folder: its source, files and bytes."""

    def __init__(self, name, root, source, files=0, size=0):
        self.name = name
        self.root = root
        self.source = source
        self.files = files
        self.size = size
        self.left_out = 0      # larger than MAX_FILE_SIZE, not copied
        self.error = None      # the failing index command, if any
        self.stderr = {}       # jobs setting -> the tool's stderr lines of its first run

    def add(self, target, data):
        if len(data) > MAX_FILE_SIZE:
            self.left_out += 1
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.files += 1
        self.size += len(data)


def natural_key(text):
    return [int(t) if t.isdigit() else t for t in re.split(r'(\d+)', text)]


def find_source(patterns):
    """The first pattern that matches; of several matches, the highest version."""
    for pattern in patterns:
        found = sorted((p for p in glob.glob(pattern) if os.path.exists(p)), key=natural_key)
        if found:
            return Path(found[-1])
    return None


def wanted(name, language):
    return (name.endswith(SUFFIXES[language])
            and not name.endswith(EXCLUDED_SUFFIXES.get(language, ())))


def safe_relative(name):
    """An archive member's name as a relative Path, or None if it would leave the folder."""
    parts = PurePosixPath(name).parts
    if not parts or name.startswith('/') or any(part in ('', '..') for part in parts):
        return None
    return Path(*parts)


def copy_language_tree(source, dest, language):
    """Copy the language's regular files of a folder tree (links not followed)."""
    corpus = Corpus(language, dest, str(source))
    for folder, dirs, names in os.walk(source):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder, name)
            if wanted(name, language) and not path.is_symlink() and path.is_file():
                corpus.add(dest / path.relative_to(source), path.read_bytes())
    return corpus


def copy_java(src_zip, dest):
    """Extract the .java files of JAVA_MODULE from an OpenJDK src.zip."""
    corpus = Corpus('java', dest, '%s, module %s' % (src_zip, JAVA_MODULE))
    with zipfile.ZipFile(str(src_zip)) as archive:
        for info in sorted(archive.infolist(), key=lambda i: i.filename):
            rel = safe_relative(info.filename)
            if (info.is_dir() or rel is None or rel.parts[0] != JAVA_MODULE
                    or not wanted(rel.name, 'java')):
                continue
            if info.file_size > MAX_FILE_SIZE:
                corpus.left_out += 1
                continue
            corpus.add(dest / rel, archive.read(info))
    return corpus


def npm_pack(package, folder):
    """`npm pack PACKAGE` in folder: (the .tgz, how it was got) or (None, why not)."""
    npm = shutil.which('npm')
    if npm is None:
        return None, 'npm not found on PATH'
    folder.mkdir(parents=True, exist_ok=True)
    errors = []
    for flag in NPM_PACK_FLAGS:
        cmd = [npm, 'pack', package, flag, '--ignore-scripts']
        try:
            proc = subprocess.run(cmd, cwd=str(folder), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=NPM_TIMEOUT)
        except (OSError, subprocess.SubprocessError) as error:
            errors.append('%s: %s' % (flag, error))
            continue
        packed = sorted(folder.glob('*.tgz'))
        if proc.returncode == 0 and packed:
            return packed[-1], 'npm pack %s %s' % (package, flag)
        lines = proc.stderr.decode('utf-8', 'replace').strip().splitlines()
        said = [line for line in lines if 'error' in line.lower()][:2] or lines[-1:]
        said = ': ' + ' / '.join(said) if said else ''
        errors.append('%s: exit status %s%s' % (flag, proc.returncode, said))
    return None, 'npm pack %s failed (%s)' % (package, '; '.join(errors))


def copy_npm(tgz, dest, how):
    """Extract the .ts/.tsx files (no .d.ts, nothing under node_modules) of a .tgz."""
    corpus = Corpus('typescript', dest, '%s (%s)' % (tgz.name, how))
    with tarfile.open(str(tgz)) as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            rel = safe_relative(member.name)
            if (not member.isfile() or rel is None or 'node_modules' in rel.parts
                    or not wanted(rel.name, 'typescript')):
                continue
            if member.size > MAX_FILE_SIZE:
                corpus.left_out += 1
                continue
            corpus.add(dest / rel, archive.extractfile(member).read())
    return corpus


def copy_language(language, dest, work, npm_package):
    """(Corpus, None) or (None, why the language is skipped)."""
    if language == 'typescript':
        tgz, how = npm_pack(npm_package, work / 'npm')
        if tgz is None:
            return None, how
        return copy_npm(tgz, dest, how), None
    patterns, package = {'go': (GO_SOURCES, 'golang-1.19-src'),
                         'java': (JAVA_SOURCES, 'openjdk-17-source'),
                         'rust': (RUST_SOURCES, 'rust-src')}[language]
    source = find_source(patterns)
    if source is None:
        return None, 'source not found (Debian %s): none of %s' % (package, ', '.join(patterns))
    if language == 'java':
        return copy_java(source, dest), None
    return copy_language_tree(source, dest, language), None


def build_polyglot(languages, base, work, npm_package):
    """Copy each language present; returns ([Corpus], {language: why skipped})."""
    corpora, missing = [], {}
    for language in languages:
        try:
            corpus, why = copy_language(language, base / language, work, npm_package)
        except (OSError, zipfile.BadZipFile, tarfile.TarError) as error:
            corpus, why = None, 'cannot copy: %s' % error
        if corpus is not None and corpus.files == 0:
            corpus, why = None, 'no %s files in %s' % ('/'.join(SUFFIXES[language]), corpus.source)
        if corpus is None:
            missing[language] = why
            progress('(i) %s skipped: %s' % (language, why))
            continue
        progress('(i) %s: copied %d files (%.1f MB) from %s; %d left out (> %d bytes)'
                 % (language, corpus.files, corpus.size / MB, corpus.source, corpus.left_out,
                    MAX_FILE_SIZE))
        corpora.append(corpus)
    return corpora, missing


def own_rss():
    """This process's current RSS in bytes (Linux /proc/self/status), or None."""
    try:
        with open('/proc/self/status') as handle:
            for line in handle:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def reset_peak_rss():
    """Lower this process's peak RSS to its current RSS; True if done (Linux only).

    A child started by vfork (or fork) and exec keeps the parent's peak as the
    start of its ru_maxrss, so a peak left by copying the corpora would floor
    every child's reading.
    """
    try:
        with open('/proc/self/clear_refs', 'w') as handle:
            handle.write('5')
        return True
    except OSError:
        return False


def jobs_label(jobs):
    return 'default' if jobs is None else str(jobs)


def measure_polyglot(corpora, args, work, jobs_settings):
    """(i) Cold index of every corpus at every jobs setting, interleaved, per run.

    Returns {(name, jobs): Series}. A corpus whose command fails gets .error and
    is left out of the later runs.
    """
    series = {(c.name, jobs): Series() for c in corpora for jobs in jobs_settings}
    idx_dir = work / 'index-polyglot'
    runs = args.polyglot_runs
    for i in range(1, runs + 1):
        for corpus in corpora:
            for jobs in jobs_settings:
                if corpus.error:
                    continue
                out_dir = idx_dir / ('%s-%s-%d' % (corpus.name.strip('()').replace(' ', '-'),
                                                   jobs_label(jobs), i))
                out_dir.mkdir(parents=True)
                cmd = [args.python, str(args.tool), 'index', str(corpus.root),
                       '--out', str(out_dir / INDEX_NAME)]
                if jobs is not None:
                    cmd += ['--jobs', str(jobs)]
                try:
                    res = run(cmd, args.timeout)
                except CommandFailed as error:
                    corpus.error = str(error)
                    progress('(i) %s, --jobs %s: %s' % (corpus.name, jobs_label(jobs), error))
                    continue
                finally:
                    shutil.rmtree(str(out_dir), ignore_errors=True)
                series[corpus.name, jobs].add(res)
                corpus.stderr.setdefault(jobs, res.stderr_text.splitlines())
                rate = ', %.2f MB/s' % (corpus.size / MB / res.seconds) if corpus.size else ''
                progress('(i) %s cold index, --jobs %s, %d/%d: %.3f s%s, %.0f MB RSS, '
                         '%d stderr lines' % (corpus.name, jobs_label(jobs), i, runs, res.seconds,
                                              rate, (res.rss_bytes or 0) / MB, res.stderr_lines))
    shutil.rmtree(str(idx_dir), ignore_errors=True)
    return series


def polyglot_metrics(corpora, series, jobs_settings):
    """{(name, jobs): median, raw and net s/MB, their ratios to Python's}."""
    empty = {jobs: series[EMPTY_ROW, jobs].median()
             for jobs in jobs_settings if (EMPTY_ROW, jobs) in series}
    metrics = {}
    for corpus in corpora:
        for jobs in jobs_settings:
            mid = series[corpus.name, jobs].median()
            mb = corpus.size / MB
            raw = mid / mb if mid is not None and mb else None
            start = empty.get(jobs)
            net = (mid - start) / mb if raw is not None and start is not None else None
            metrics[corpus.name, jobs] = {'median': mid, 'mb': mb, 'raw': raw, 'net': net}
    for (name, jobs), m in metrics.items():
        base = metrics.get(('python', jobs), {})
        m['ratio'] = ratio(m['net'], base.get('net'))
        m['raw_ratio'] = ratio(m['raw'], base.get('raw'))
    return metrics


def stderr_summary(lines):
    """'N skipped, M notes' from the tool's stderr (PATH:LINE: ... lines)."""
    located = [line for line in lines if re.match(r'.+:\d+: ', line)]
    skipped = sum(1 for line in located if ': skipped' in line)
    notes = len(located) - skipped
    return '%d skipped, %d notes' % (skipped, notes) if located else '-'


def fmt_num(value, digits):
    return '-' if value is None else ('%.' + str(digits) + 'f') % value


def polyglot_rows(corpora, series, metrics, jobs_settings):
    rows = []
    for corpus in corpora:
        for jobs in jobs_settings:
            s, m = series[corpus.name, jobs], metrics[corpus.name, jobs]
            cells = stats_cells(s.seconds, fmt_s)
            mb_s = ratio(m['mb'], m['median']) if m['mb'] else None
            rss = fmt_mb(max(s.rss)) if s.rss else '-'
            if corpus.error:
                tool_err = 'FAILED' + (' after %d runs' % len(s.seconds) if s.seconds else '')
            else:
                tool_err = stderr_summary(corpus.stderr.get(jobs, []))
            rows.append([corpus.name, str(corpus.files), fmt_num(m['mb'], 1), jobs_label(jobs)]
                        + cells + [fmt_num(mb_s, 2), fmt_num(m['raw'], 3), fmt_num(m['net'], 3),
                                   fmt_ratio(m['ratio']), fmt_ratio(m['raw_ratio']), rss, tool_err])
    return rows


def polyglot_targets(corpora, missing, series, metrics, jobs_settings):
    """(target, measured, result) triples of (i)."""
    jobs = 1 if 1 in jobs_settings else None
    label = '--jobs 1' if jobs == 1 else 'default --jobs: the tool has no --jobs'
    by_name = {c.name: c for c in corpora}
    python = metrics.get(('python', jobs), {})
    targets = []
    for language in POLYGLOT_LANGUAGES:
        name = "%s: net s/MB <= %gx Python's (%s)" % (language, LANGUAGE_OVER_PYTHON_MAX, label)
        corpus = by_name.get(language)
        if corpus is None:
            if language in missing:
                targets.append((name, 'not measured: %s' % missing[language], 'n/a'))
            continue
        if corpus.error:
            targets.append((name, 'the index command failed', 'FAIL'))
            continue
        m = metrics[language, jobs]
        measured = '%s / %s = %s (raw s/MB: %s / %s = %s)' % (
            fmt_num(m['net'], 3), fmt_num(python.get('net'), 3), fmt_ratio(m['ratio']),
            fmt_num(m['raw'], 3), fmt_num(python.get('raw'), 3), fmt_ratio(m['raw_ratio']))
        ok = None if m['ratio'] is None else m['ratio'] <= LANGUAGE_OVER_PYTHON_MAX
        targets.append((name, measured, 'n/a' if ok is None else ('PASS' if ok else 'FAIL')))
    name = 'peak RSS of indexing Go < %d MB (max over runs, every jobs setting)' % GO_RSS_MAX_MB
    go = by_name.get('go')
    if go is None:
        if 'go' in missing:
            targets.append((name, 'not measured: %s' % missing['go'], 'n/a'))
    elif go.error:
        targets.append((name, 'the index command failed', 'FAIL'))
    else:
        peaks = {j: max(series['go', j].rss) for j in jobs_settings if series['go', j].rss}
        measured = ', '.join('%s at --jobs %s' % (fmt_mb(peaks[j]), jobs_label(j)) for j in peaks)
        ok = max(peaks.values()) < GO_RSS_MAX_MB * MB if peaks else None
        targets.append((name, measured or '-', 'n/a' if ok is None else ('PASS' if ok else 'FAIL')))
    return targets


def render_table(heads, body, markdown, right):
    """One table as lines, aligned plain text or Markdown; right: columns after the first."""
    out = []
    if markdown:
        out.append('| ' + ' | '.join(heads) + ' |')
        out.append('|' + '|'.join('---:' if right and i else '---'
                                  for i in range(len(heads))) + '|')
        for line in body:
            out.append('| ' + ' | '.join(c.replace('|', '\\|') for c in line) + ' |')
    else:
        widths = [max(width(r[i]) for r in [heads] + list(body)) for i in range(len(heads))]
        for n, line in enumerate([heads] + list(body)):
            out.append('  '.join(pad(c, widths[i], right and i > 0)
                                 for i, c in enumerate(line)).rstrip())
            if n == 0:
                out.append('  '.join('-' * w for w in widths))
    return out + ['']


def render_polyglot(header, rows, targets, stderr_lines, markdown):
    heads = ['language', 'files', 'MB', 'jobs', 'n', 'cold median', 'cold min - max', 'MB/s',
             's/MB', 'net s/MB', 'vs Python', 'raw vs Python', 'peak RSS', 'tool stderr']
    out = ['- ' + h for h in header] if markdown else list(header)
    out.append('')
    out += render_table(heads, rows, markdown, True)
    out += render_table(['target', 'measured', 'result'], targets, markdown, False)
    passed = sum(1 for t in targets if t[2] == 'PASS')
    failed = sum(1 for t in targets if t[2] == 'FAIL')
    out.append('polyglot targets: %d PASS, %d FAIL' % (passed, failed))
    if stderr_lines:
        out += [''] + (['```'] + stderr_lines + ['```'] if markdown else stderr_lines)
    return '\n'.join(out)


def run_polyglot(args, work, python_corpus, has_jobs):
    """(i): copy, measure and print the polyglot table."""
    base = work / 'polyglot'
    corpora, missing = build_polyglot(args.languages, base, work, args.npm_package)
    empty = Corpus(EMPTY_ROW, base / 'empty', '-')
    empty.root.mkdir(parents=True)
    corpora = [python_corpus] + corpora + [empty]
    jobs_settings = (None, 1) if has_jobs else (None,)
    if not has_jobs:
        progress('(i) the tool has no --jobs: measuring its default only')
    reset = reset_peak_rss()
    floor_rss = own_rss()
    series = measure_polyglot(corpora, args, work, jobs_settings)
    metrics = polyglot_metrics(corpora, series, jobs_settings)
    first = 1 if has_jobs else None
    header = [
        '(i) polyglot: cold index per language, whole-process wall time, %d run(s) per row, '
        'languages interleaved; --jobs default = one worker per core (%d CPUs)'
        % (args.polyglot_runs, os.cpu_count() or 0),
        'only the language\'s files are copied; files > %d bytes (the tool\'s default '
        '--max-file-size) are left out of the copy, so MB is what the tool reads' % MAX_FILE_SIZE,
    ]
    for corpus in corpora[:-1]:
        left_out = '; %d left out (too large)' % corpus.left_out if corpus.left_out else ''
        header.append('%s: %d %s files, %.1f MB, from %s%s' % (
            corpus.name, corpus.files, '/'.join(SUFFIXES[corpus.name]), corpus.size / MB,
            corpus.source, left_out))
    for language, why in missing.items():
        header.append('%s: not measured: %s' % (language, why))
    header += [
        'net s/MB = (cold median - %s median at the same --jobs) / MB; vs Python = net s/MB '
        'over Python\'s at the same --jobs (raw: without subtracting); targets on %s'
        % (EMPTY_ROW, '--jobs 1' if has_jobs else 'the default --jobs'),
        'peak RSS: max over runs of ru_maxrss (os.wait4); with workers the largest single '
        'process, not their sum; it cannot read below the benchmark\'s own RSS, %s (%s)'
        % (fmt_mb(floor_rss), 'its peak reset before (i)' if reset else 'its peak not reset'),
    ]
    listed = []
    for corpus in corpora:
        if corpus.error:
            listed.append('%s: %s' % (corpus.name, corpus.error))
            continue
        lines = corpus.stderr.get(first, [])
        if not lines:
            continue
        listed.append('tool stderr of %s, first cold index at --jobs %s (%d lines%s):' % (
            corpus.name, jobs_label(first), len(lines),
            ', first %d' % STDERR_LISTED_MAX if len(lines) > STDERR_LISTED_MAX else ''))
        listed += ['  ' + line for line in lines[:STDERR_LISTED_MAX]]
    rows = polyglot_rows(corpora, series, metrics, jobs_settings)
    targets = polyglot_targets(corpora, missing, series, metrics, jobs_settings)
    print(render_polyglot(header, rows, targets, listed, args.markdown), flush=True)


# --- Command line --------------------------------------------------------------

def parse_languages(text):
    """--languages go,java: names of POLYGLOT_LANGUAGES (or an alias), in order."""
    names = []
    for part in text.split(','):
        part = part.strip().lower()
        name = LANGUAGE_ALIASES.get(part, part)
        if not part:
            continue
        if name not in POLYGLOT_LANGUAGES:
            raise argparse.ArgumentTypeError('unknown language %r (choose from %s)'
                                             % (part, ', '.join(POLYGLOT_LANGUAGES)))
        if name not in names:
            names.append(name)
    if not names:
        raise argparse.ArgumentTypeError('no language given')
    return tuple(names)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=None,
                        help='runs per measurement (default 5; 2 with --quick); '
                             '(i) polyglot: default %d, 1 with --quick' % POLYGLOT_RUNS)
    parser.add_argument('--quick', action='store_true',
                        help='runs=2, skip the 2x corpus, 1 polyglot run')
    parser.add_argument('--python', default=sys.executable,
                        help='interpreter that runs the tool and the floor')
    parser.add_argument('--tool', type=Path, default=DEFAULT_TOOL, help='code_search.py to measure')
    parser.add_argument('--markdown', action='store_true', help='print the tables as Markdown')
    parser.add_argument('--utf8-only', action='store_true',
                        help="also drop files the tutorial's version cannot read "
                             "(not UTF-8, BOM, coding cookie)")
    parser.add_argument('--timeout', type=float, default=1800,
                        help='seconds before a command is killed')
    choose = parser.add_mutually_exclusive_group()
    choose.add_argument('--no-polyglot', action='store_true',
                        help='skip (i), the Go, Java, Rust and TypeScript corpora')
    choose.add_argument('--languages', type=parse_languages, default=POLYGLOT_LANGUAGES,
                        metavar='LIST', help='(i) languages, comma-separated (default: %s)'
                        % ','.join(POLYGLOT_LANGUAGES))
    parser.add_argument('--polyglot-only', action='store_true',
                        help='skip (a)-(h); the stdlib copy is still the baseline row of (i)')
    parser.add_argument('--npm-package', default=NPM_PACKAGE,
                        help='(i) npm package of the TypeScript corpus (default %s)' % NPM_PACKAGE)
    args = parser.parse_args(argv)
    if args.no_polyglot and args.polyglot_only:
        parser.error('--no-polyglot and --polyglot-only exclude each other')
    if args.runs is None:
        args.polyglot_runs = 1 if args.quick else POLYGLOT_RUNS
        args.runs = 2 if args.quick else 5
    else:
        args.polyglot_runs = args.runs
    if args.runs < 1:
        parser.error('--runs must be at least 1')
    args.tool = args.tool.resolve()
    if not args.tool.is_file():
        parser.error('tool not found: %s' % args.tool)
    oneshot_runs = min(3, args.runs)

    work = Path(tempfile.mkdtemp(prefix='bench_code_'))
    try:
        progress('temp folder %s' % work)
        one_root = work / 'corpus1x' / 'stdlib'
        one_root.mkdir(parents=True)
        source, kept, dropped, dropped_names, size = copy_stdlib(one_root, args.utf8_only)
        progress('copied %d files (%.1f MB) from %s; dropped %d the running ast cannot parse: %s'
                 % (kept, size / MB, source, dropped, ', '.join(dropped_names[:8])
                    + (' ...' if len(dropped_names) > 8 else '')))
        change_rel = pick_changed_file(one_root)

        has_index = (supports(args.python, args.tool, 'index', '--out', args.timeout)
                     and supports(args.python, args.tool, 'search', '--index', args.timeout))
        if not has_index:
            progress('the tool has no index/search subcommands: measuring (a) and (f) only')
        tool_version = run([args.python, '-c', 'import sys; print(sys.version.split()[0])'],
                           60, capture=True).stdout.strip()
        if args.polyglot_only:
            print('tool: %s (Python %s: %s)' % (args.tool, tool_version, args.python), flush=True)
        else:
            measure_python(args, work, one_root, change_rel, has_index, oneshot_runs,
                           (tool_version, source, kept, dropped, size))
            if has_index and supports(args.python, args.tool, 'grep', '--index', args.timeout):
                print(flush=True)
                measure_tools(args, work, one_root)
            if has_index and supports(args.python, args.tool, 'serve', '--port', args.timeout):
                print(flush=True)
                measure_serve(args, work, one_root)
        if not args.no_polyglot and not has_index:
            progress('(i) polyglot skipped: the tool has no index subcommand')
        elif not args.no_polyglot:
            print(flush=True)
            python_corpus = Corpus('python', one_root, 'the stdlib copy of (a)-(h), %s' % source,
                                   kept, size)
            has_jobs = supports(args.python, args.tool, 'index', '--jobs', args.timeout)
            run_polyglot(args, work, python_corpus, has_jobs)
        return 0
    except CommandFailed as error:
        print('bench_code.py: ' + str(error), file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(str(work), ignore_errors=True)


def measure_python(args, work, one_root, change_rel, has_index, oneshot_runs, facts):
    """(a)-(h) on the stdlib copy (and the 2x corpus); prints their tables."""
    tool_version, source, kept, dropped, size = facts
    one = measure_scale('1x', one_root, change_rel, args, work, has_index, oneshot_runs)
    two = None
    if not args.quick:
        two_root = work / 'corpus2x'
        for half in ('a', 'b'):
            shutil.copytree(str(one_root), str(two_root / half))
        progress('2x corpus: %s/a and %s/b' % (two_root, two_root))
        two = measure_scale('2x', two_root, Path('a') / change_rel, args, work, has_index,
                            oneshot_runs)
        shutil.rmtree(str(two_root))

    header = [
        'tool: %s (Python %s: %s)' % (args.tool, tool_version, args.python),
        'corpus: %d .py files, %.1f MB, from %s (Python %s); '
        '%d dropped as unparsable by the running ast%s'
        % (kept, size / MB, source, sys.version.split()[0], dropped,
           ' or not strict UTF-8 (--utf8-only)' if args.utf8_only else ''),
        'runs: %d per measure, %d for one-shot; 2x corpus: %s; %d CPUs, %s'
        % (args.runs, oneshot_runs, 'ROOT/a + ROOT/b' if two else 'skipped',
           os.cpu_count() or 0, sys.platform),
        'times are whole-process wall times; RSS is ru_maxrss of the child from os.wait4',
    ]
    if has_index:
        header.append('changed/deleted file: %s (%.1f ms to read+hash+parse); '
                      'cold index wrote %d stderr lines (skipped files)'
                      % (change_rel.as_posix(), one['parse_file'] * 1000, one['skipped_lines']))
    rows = build_rows(one, two, has_index)
    targets = build_targets(one, two, has_index)
    print(render(header, rows, targets, two is not None, args.markdown), flush=True)


def measure_tools(args, work, root):
    """(j) grep against a plain re loop over the same files, and trace of a long
    traceback, on a fresh index of the stdlib copy; prints their table."""
    py, tool, runs, timeout = args.python, str(args.tool), args.runs, args.timeout
    index = work / 'tools-index.json'
    run([py, tool, 'index', str(root), '--out', str(index)], timeout)
    import json
    document = json.loads(index.read_text(encoding='utf-8'))
    listing = work / 'tools-files.txt'
    listing.write_text('\n'.join(str(root / relative) for relative in document['files']),
                       encoding='utf-8')
    rows, targets = [], []
    in_process = run([py, '-c', IN_PROCESS_GREP_CODE, str(args.tool.parent), str(index),
                      str(listing), str(runs)] + list(GREP_PATTERNS), timeout, capture=True)
    for pattern, line in zip(GREP_PATTERNS, in_process.stdout.split('\n')):
        grep, plain = Series(), Series()
        for _ in range(runs):
            grep.add(run([py, tool, 'grep', pattern, '--index', str(index)], timeout))
            plain.add(run([py, '-c', PLAIN_GREP_CODE, str(listing), pattern], timeout))
        inside, inside_plain = map(float, line.split())
        whole = grep.median() / plain.median()
        rows.append(['grep %r' % pattern, fmt_s(grep.median()), fmt_s(plain.median()),
                     fmt_ratio(whole), fmt_s(inside), fmt_s(inside_plain),
                     fmt_ratio(inside / inside_plain)])
        targets.append(('grep %r in process <= %.1fx a plain re loop' % (pattern, GREP_OVER_PLAIN_MAX),
                        '%.3f / %.3f s = %.2f (whole processes: %.2f)'
                        % (inside, inside_plain, inside / inside_plain, whole),
                        inside / inside_plain <= GREP_OVER_PLAIN_MAX))
        progress('(j) grep %r: %.3f s, plain %.3f s' % (pattern, grep.median(), plain.median()))
    trace_file, expected = write_trace(work, root, document)
    traced = Series()
    for _ in range(runs):
        traced.add(run([py, tool, 'trace', str(trace_file), '--index', str(index)], timeout))
    result = run([py, tool, 'trace', str(trace_file), '--index', str(index), '--json'],
                 timeout, capture=True)
    frames = json.loads(result.stdout)['exceptions'][0]['frames']
    resolved = sum(1 for frame, symbol in zip(frames, expected)
                   if frame['chunk'] and frame['chunk']['symbol'] == symbol)
    rows.append(['trace, %d frames' % len(expected), fmt_s(traced.median()), '', '', '', '',
                 ''])
    targets.append(('trace of %d frames from an index <= %.2f s' % (len(expected),
                                                                     TRACE_SECONDS_MAX),
                    '%.3f s (%d of %d frames resolved to their function)'
                    % (traced.median(), resolved, len(expected)),
                    traced.median() <= TRACE_SECONDS_MAX and resolved == len(expected)))
    heads = ['(j) on the stdlib index', 'tool', 'plain re', 'ratio', 'in process', 'plain',
             'ratio']
    print('\n'.join(render_table(heads, rows, args.markdown, True)), flush=True)
    print('\n'.join(render_table(['target', 'measured', 'result'],
                                 [[name, measured, 'PASS' if ok else 'FAIL']
                                  for name, measured, ok in targets], args.markdown, False)),
          flush=True)


class ServeProcess:
    """A `serve --port 0` child over some indexes; its port once it listens."""

    def __init__(self, args, indexes):
        self.log = tempfile.TemporaryFile()
        command = [args.python, str(args.tool), 'serve', '--port', '0']
        for index in indexes:
            command += ['--index', str(index)]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            self.log.seek(0)
            found = re.search(rb'serve: http://[^/]+:(\d+)/', self.log.read())
            if found:
                self.port = int(found.group(1))
                return
            time.sleep(0.05)
        self.stop()
        raise CommandFailed('serve did not start: %s' % ' '.join(command))

    def get(self, target):
        """(status, body) of one GET."""
        import http.client
        connection = http.client.HTTPConnection('127.0.0.1', self.port, timeout=60)
        try:
            connection.request('GET', target)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def rss(self):
        """The server's resident memory now, in bytes (Linux; 0 elsewhere)."""
        try:
            with open('/proc/%d/status' % self.process.pid) as status:
                for line in status:
                    if line.startswith('VmRSS:'):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.log.close()


def search_median(server, runs):
    """Median seconds of GET /api/search over QUESTIONS, each asked once untimed."""
    import urllib.parse
    targets = ['/api/search?' + urllib.parse.urlencode({'q': q}) for q in QUESTIONS]
    for target in targets:
        server.get(target)
    times = []
    for _ in range(runs):
        for target in targets:
            started = time.perf_counter()
            status, body = server.get(target)
            times.append(time.perf_counter() - started)
            if status != 200:
                raise CommandFailed('%s answered %d: %r' % (target, status, body[:200]))
    return statistics.median(times)


def load_server(server):
    """SERVE_CLIENTS threads asking SERVE_LOAD for SERVE_LOAD_SECONDS; (requests,
    errors, the server's peak RSS in the first half of the load, in the second half).
    Memory that grows shows as a second peak above the first."""
    counts, errors, lock = [0], [], threading.Lock()
    started = time.monotonic()
    deadline = started + SERVE_LOAD_SECONDS

    def client(number):
        turn = number
        while time.monotonic() < deadline:
            target = SERVE_LOAD[turn % len(SERVE_LOAD)]
            turn += 1
            try:
                status, body = server.get(target)
                failed = status != 200 and '%s: %d' % (target, status)
            except OSError as error:
                failed = '%s: %s' % (target, error)
            with lock:
                counts[0] += 1
                if failed:
                    errors.append(failed)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(SERVE_CLIENTS)]
    for thread in threads:
        thread.start()
    halves = [0, 0]
    while any(thread.is_alive() for thread in threads):
        half = int(time.monotonic() - started > SERVE_LOAD_SECONDS / 2)
        halves[half] = max(halves[half], server.rss())
        time.sleep(0.2)
    for thread in threads:
        thread.join()
    return counts[0], errors, halves[0], halves[1]


def second_corpus(work, root):
    """(name, folder) of the second index of (k): Go's standard library, or a second
    copy of the stdlib."""
    source = find_source(GO_SOURCES)
    if source is not None:
        corpus = copy_language_tree(source, work / 'serve-go' / 'go', 'go')
        return 'Go %s (%d files)' % (source, corpus.files), corpus.root
    copy = work / 'serve-copy' / 'stdlib2'
    shutil.copytree(str(root), str(copy))
    return 'a second copy of the stdlib (no Go source found)', copy


def measure_serve(args, work, root):
    """(k) serve: API search time, 20 clients for 10 s, two indexes against one."""
    index = work / 'serve-index.json'
    run([args.python, str(args.tool), 'index', str(root), '--out', str(index)], args.timeout)
    rows, targets = [], []
    server = ServeProcess(args, [index])
    try:
        alone = search_median(server, args.runs)
        progress('(k) API search median %.1f ms' % (alone * 1000))
        requests, errors, first, last = load_server(server)
        progress('(k) %d requests, %d errors' % (requests, len(errors)))
    finally:
        server.stop()
    growth = (last - first) / first if first else 0.0
    rows.append(['API search, stdlib, median of %d' % (args.runs * len(QUESTIONS)),
                 '%.1f ms' % (alone * 1000)])
    rows.append(['%d clients for %.0f s' % (SERVE_CLIENTS, SERVE_LOAD_SECONDS),
                 '%d requests, %d errors, peak RSS %s, then %s'
                 % (requests, len(errors), fmt_mb(first), fmt_mb(last))])
    targets.append(('API search <= %.0f ms' % SERVE_SEARCH_MS_MAX, '%.1f ms' % (alone * 1000),
                    alone * 1000 <= SERVE_SEARCH_MS_MAX))
    targets.append(('%d clients for %.0f s: no error' % (SERVE_CLIENTS, SERVE_LOAD_SECONDS),
                    '%d errors in %d requests%s' % (len(errors), requests,
                                                    ': ' + errors[0] if errors else ''),
                    not errors))
    targets.append(('server RSS growth under load <= %.0f%%' % (SERVE_GROWTH_MAX * 100),
                    '%+.1f%%' % (growth * 100), growth <= SERVE_GROWTH_MAX))

    name, other_root = second_corpus(work, root)
    other = work / 'serve-other.json'
    run([args.python, str(args.tool), 'index', str(other_root), '--out', str(other)],
        args.timeout)
    medians = {}
    for label, indexes in (('second', [other]), ('both', [index, other])):
        server = ServeProcess(args, indexes)
        try:
            medians[label] = search_median(server, args.runs)
        finally:
            server.stop()
    slower = max(alone, medians['second'])
    rows.append(['API search, %s' % name, '%.1f ms' % (medians['second'] * 1000)])
    rows.append(['API search, both indexes', '%.1f ms (%.2fx the slower alone)'
                 % (medians['both'] * 1000, medians['both'] / slower)])
    targets.append(('two indexes <= %.1fx the slower alone' % TWO_INDEXES_OVER_ONE_MAX,
                    '%.1f / %.1f ms = %.2f' % (medians['both'] * 1000, slower * 1000,
                                               medians['both'] / slower),
                    medians['both'] / slower <= TWO_INDEXES_OVER_ONE_MAX))
    print('\n'.join(render_table(['(k) serve', 'measured'], rows, args.markdown, False)),
          flush=True)
    print('\n'.join(render_table(['target', 'measured', 'result'],
                                 [[target, measured, 'PASS' if ok else 'FAIL']
                                  for target, measured, ok in targets], args.markdown, False)),
          flush=True)


def write_trace(work, root, document):
    """A Python traceback of TRACE_FRAMES frames into random functions of the index's
    files, with another machine's paths; (its file, the symbol of each frame)."""
    import random
    chooser = random.Random(7)
    lines, symbols = ['Traceback (most recent call last):'], []
    candidates = sorted(document['files'])
    chooser.shuffle(candidates)
    for relative in candidates:
        rows = [row.split('\t') for row in document['files'][relative]['rows'].split('\n')
                if row.count('\t') >= 3]
        functions = [row for row in rows if row[1] in ('function', 'method')
                     and int(row[3]) > int(row[2])]
        if not functions:
            continue
        symbol, _, start, end = functions[chooser.randrange(len(functions))][:4]
        inner = [row for row in rows if int(row[2]) <= int(start) + 1 <= int(row[3])
                 and row[0] != symbol and int(row[3]) - int(row[2]) < int(end) - int(start)]
        if inner:
            continue                # the frame's line must be the function's own
        lines += ['  File "/srv/other-machine/lib/%s", line %d, in %s'
                  % (relative, int(start) + 1, symbol.rpartition('.')[2]), '    pass']
        symbols.append(symbol)
        if len(symbols) == TRACE_FRAMES:
            break
    lines.append('RuntimeError: benchmark')
    path = work / 'trace.txt'
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')
    return path, symbols


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""Benchmark of code_search.py on a copy of the CPython standard library.

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
(stderr tail) and its target is FAIL; the rest goes on.

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
            except (SyntaxError, ValueError, RecursionError, MemoryError):  # incl. UnicodeDecodeError
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
            lines = [l for l in res.stdout.splitlines() if l.strip()]
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
            lambda m: '(c)/(b) = %s' % fmt_ratio(ratio(m['nochange'].median(), m['cold'].median()), 3))
        add('(d) re-index, 1 file changed', lambda m: m['changed'].seconds, fmt_s,
            lambda m: '(d)/(b) = %s' % fmt_ratio(ratio(m['changed'].median(), m['cold'].median()), 3))
        add('(d) re-index, 1 file deleted', lambda m: m['deleted'].seconds, fmt_s,
            lambda m: '(d)/(b) = %s' % fmt_ratio(ratio(m['deleted'].median(), m['cold'].median()), 3))
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
          '(f)/(e) = %s' % fmt_ratio(speedup, 1), None if speedup is None else speedup >= SEARCH_SPEEDUP_MIN)
    worst_q = max(QUESTIONS, key=lambda q: one['search'][q].median())
    check('search about %.1f s or less (median of questions)' % SEARCH_SECONDS_MAX,
          '%s (slowest question %s)' % (fmt_s(one['search_median']), fmt_s(one['search'][worst_q].median())),
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
              fmt_s(changed), fmt_s(budget), fmt_s(one['nochange'].median()), one['parse_file'] * 1000),
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
            out.append('|' + '|'.join('---:' if right and i else '---' for i in range(len(heads_))) + '|')
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


# --- Command line --------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=None, help='runs per measurement (default 5; 2 with --quick)')
    parser.add_argument('--quick', action='store_true', help='runs=2 and skip the 2x corpus')
    parser.add_argument('--python', default=sys.executable, help='interpreter that runs the tool and the floor')
    parser.add_argument('--tool', type=Path, default=DEFAULT_TOOL, help='code_search.py to measure')
    parser.add_argument('--markdown', action='store_true', help='print the tables as Markdown')
    parser.add_argument('--utf8-only', action='store_true',
                        help="also drop files the tutorial's version cannot read (not UTF-8, BOM, coding cookie)")
    parser.add_argument('--timeout', type=float, default=1800, help='seconds before a command is killed')
    args = parser.parse_args(argv)
    if args.runs is None:
        args.runs = 2 if args.quick else 5
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

        one = measure_scale('1x', one_root, change_rel, args, work, has_index, oneshot_runs)
        two = None
        if not args.quick:
            two_root = work / 'corpus2x'
            for half in ('a', 'b'):
                shutil.copytree(str(one_root), str(two_root / half))
            progress('2x corpus: %s/a and %s/b' % (two_root, two_root))
            two = measure_scale('2x', two_root, Path('a') / change_rel, args, work, has_index,
                                oneshot_runs)

        header = [
            'tool: %s (Python %s: %s)' % (args.tool, tool_version, args.python),
            'corpus: %d .py files, %.1f MB, from %s (Python %s); %d dropped as unparsable by the running ast%s'
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
        print(render(header, rows, targets, two is not None, args.markdown))
        return 0
    except CommandFailed as error:
        print('bench_code.py: ' + str(error), file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(str(work), ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())

"""Hostile inputs for code_search.py: files that cannot be read or parsed, special files,
links, unusable index files, misuse of the command line, and odd questions.

Each hostile file must cost exactly one stderr line naming it (with a reason); the rest
of the tree is indexed and searchable, and the exit status stays 0."""
import ast
import contextlib
import io
import json
import os
import random
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
import traceback
import unittest
from pathlib import Path
from unittest import mock

from tests import support
from tests.support import CODE_TOOL as TOOL, ENV, ROOT, write

import code_search  # noqa: E402

NOT_FOUND = '관련 함수를 찾지 못했습니다.'
GOOD = 'def harmless_marker_function():\n    """Harmless."""\n    return "harmless"\n'
NOBODY = 65534

# Runs code_search.main() after dropping root privileges (the interpreter itself may live
# in a folder only root can read, so it is started as root and code_search imported first).
DROP_PRIVILEGES = (
    'import os, sys\n'
    'sys.path.insert(0, sys.argv[1])\n'
    'import code_search, gettext, inspect, locale\n'
    'code_search.build_parser(); code_search.one_shot_parser()\n'
    'code_search.chunk_source(b"class C:\\n    \\"\\"\\"Doc.\\"\\"\\"\\n", "warm.py")\n'
    f'os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY})\n'
    'sys.exit(code_search.main(sys.argv[2:]))\n')


def run_cli(*args, cwd=None, timeout=120, input=None):
    return support.run_cli(TOOL, *args, cwd=cwd, timeout=timeout, input=input)


def run_main(*args, cwd=None):
    """code_search.main() in this process, shaped like subprocess.run's result.

    An exception escaping main() is printed as the interpreter would (a traceback) and
    counts as exit status 1, so the same assertions hold as for a real process.
    """
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = code_search.main([str(a) for a in args])
            except SystemExit as error:
                status = error.code if isinstance(error.code, int) else int(bool(error.code))
            except Exception:
                traceback.print_exc()
                status = 1
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def can_drop_privileges():
    if not hasattr(os, 'geteuid') or os.geteuid() != 0:
        return False
    probe = subprocess.run([sys.executable, '-c', f'import os; os.setgid({NOBODY}); '
                                                  f'os.setuid({NOBODY})'],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


PRIVILEGES = 'drop' if can_drop_privileges() else (
    'user' if hasattr(os, 'geteuid') and os.geteuid() != 0 else None)
NO_PERMISSION_TESTS = ('running as root without the right to switch to uid 65534, so '
                       'permissions cannot be denied') if PRIVILEGES is None else ''


def run_unprivileged(folder, *args, timeout=120, prepare=None):
    """The CLI as a user that file modes apply to (uid 65534 when we are root).

    The tree under folder is handed to that user first; then prepare() sets the modes.
    """
    if PRIVILEGES == 'user':
        if prepare:
            prepare()
        return run_cli(*args, timeout=timeout)
    for base, dirs, files in os.walk(folder):
        for name in dirs + files + ['']:
            os.chown(os.path.join(base, name), NOBODY, NOBODY, follow_symlinks=False)
    if prepare:
        prepare()
    return subprocess.run([sys.executable, '-c', DROP_PRIVILEGES, str(ROOT)]
                          + [str(a) for a in args], capture_output=True, text=True,
                          encoding='utf-8', env=ENV, timeout=timeout, cwd=folder)


def lines_of(stderr):
    return stderr.splitlines()


class HostileCase(unittest.TestCase):
    """A fresh tree holding good.py; the case adds one hostile entry."""

    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.base = Path(folder.name)
        self.root = self.base / 'root'
        self.out = self.base / 'idx.json'
        write(self.root / 'good.py', GOOD)

    def index(self, *extra, runner=None):
        args = ('index', self.root, '--out', self.out) + extra
        result = runner(self.base, *args, timeout=60) if runner else run_cli(*args, timeout=60)
        self.assertNotIn('Traceback', result.stderr)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result

    def assert_good_searchable(self):
        result = run_cli('search', 'harmless_marker_function', '--index', self.out, '--json')
        self.assertEqual(result.returncode, 0, result.stderr)
        hits = json.loads(result.stdout)['results']
        self.assertEqual((hits[0]['path'], hits[0]['symbol']),
                         ('good.py', 'harmless_marker_function'))

    def assert_one_skip(self, name, pattern, *extra, runner=None):
        """index: exit 0, exactly one stderr line for name matching pattern, good.py found."""
        if self.out.exists():
            self.out.unlink()
        result = self.index(*extra, runner=runner)
        lines = lines_of(result.stderr)
        self.assertEqual(len(lines), 2, lines)
        self.assertRegex(lines[0], '^' + re.escape(name) + pattern + '$')
        self.assertEqual(lines[1], 'skipped 1 file(s)')
        self.assertTrue(result.stdout.startswith('갱신 파일: 1, 제거 파일: 0, 건너뛴 파일: 1 '),
                        result.stdout)
        self.assert_good_searchable()
        index = json.loads(self.out.read_text(encoding='utf-8'))
        self.assertEqual(list(index['files']), ['good.py'])
        self.assertEqual(len(index['skipped']), 1)
        self.assertEqual(index['skipped'][0]['path'].rstrip('/'), name.rstrip('/'))
        return lines[0]


SYMLINK = r':0: (skipped: )?symbolic link \(not followed\)'
NOT_REGULAR = r':0: (skipped: )?not a regular file'


class UnreadableFileTests(HostileCase):
    def test_binary_garbage(self):
        write(self.root / 'garbage.py', random.Random(7).getrandbits(8 * 4096).to_bytes(4096,
                                                                                       'big'))
        self.assert_one_skip('garbage.py', r':\d+: \S.*')

    def test_binary_formats_by_name_left_out_quietly(self):
        """Django ships 1,263 compiled gettext catalogs: a file whose name says it is
        binary is no stderr line (--dry-run names it); an unknown one with a NUL is."""
        for name in ('locale/de/LC_MESSAGES/django.mo', 'data/cities.shp', 'data/x.lzma'):
            write(self.root / name, b'\xde\x12\x04\x95\0\0\0\0')
        write(self.root / 'data/cities.unknown', b'\0')
        self.assert_one_skip('data/cities.unknown',
                             r':1: skipped: binary file \(contains NUL bytes\)')
        dry = run_cli('index', self.root, '--out', self.out, '--dry-run')
        self.assertIn('leave locale/de/LC_MESSAGES/django.mo: not text (by its name)',
                      dry.stdout)

    def test_utf16_text_is_named_as_such(self):
        write(self.root / 'notes.txt', 'saved by PowerShell\n'.encode('utf-16'))
        self.assert_one_skip('notes.txt', r':1: skipped: UTF-16 text \(save it as UTF-8 to '
                                          r'index it\)')

    def test_invalid_utf8(self):
        write(self.root / 'latin.py', b'def f():\n    return "caf\xe9"\n')
        self.assert_one_skip('latin.py', r':2: \S.*')

    def test_nul_bytes(self):
        write(self.root / 'nul.py', b'def f():\n    return 1\nx = 1\x00\n')
        self.assert_one_skip('nul.py', r':\d+: \S.*')

    def test_unknown_coding_cookie(self):
        write(self.root / 'klingon.py', b'# -*- coding: klingon -*-\ndef f():\n    pass\n')
        self.assert_one_skip('klingon.py', r':\d+: .*klingon.*')

    def test_codecs_that_are_not_source_encodings(self):
        # Real codecs that cannot decode source text: each is one skipped file.
        for codec in ('undefined', 'punycode', 'rot13', 'hex', 'utf-16', 'uu'):
            with self.subTest(codec=codec):
                name = codec.replace('-', '_') + '.py'
                path = write(self.root / name,
                             f'# -*- coding: {codec} -*-\ndef f():\n    return "x"\n'.encode())
                try:
                    self.assert_one_skip(name, r':\d+: \S.*')
                finally:
                    path.unlink()

    def test_undecodable_with_its_cookie(self):
        write(self.root / 'ascii.py', b'# coding: ascii\ndef f():\n    return "\xc3\xa9"\n')
        self.assert_one_skip('ascii.py', r':3: .*ascii.*')

    def test_syntax_error_in_windows(self):
        """A file ast cannot parse (a typo, or syntax of a newer Python than the one
        running) is reported with its line and still found, in line windows."""
        write(self.root / 'bad.py', 'def ok():\n    pass\n\ndef broken_marker(:\n    pass\n')
        result = self.index()
        self.assertRegex(result.stderr, r'^bad\.py:0: syntax error on line 4: .+: indexed in '
                                        r'line windows\n\Z')
        self.assertIn('줄 창으로 나눈 파일 1개', result.stdout)
        hits = json.loads(run_cli('search', 'broken_marker', '--index', self.out,
                                  '--json').stdout)['results']
        self.assertEqual([(h['path'], h['kind'], h['start'], h['end']) for h in hits[:1]],
                         [('bad.py', 'window', 1, 5)])
        self.assert_good_searchable()
        symbol = run_cli('symbol', 'broken_marker', '--index', self.out)
        self.assertEqual(symbol.stdout, 'no definition named broken_marker (1 file(s) read in '
                                        'line windows have none known; grep may find it)\n')
        one_shot = run_cli(self.root, 'broken_marker')     # the tutorial's form says so too
        self.assertEqual(one_shot.returncode, 0, one_shot.stderr)
        self.assertRegex(one_shot.stderr, r'^bad\.py:0: syntax error on line 4: .+: indexed in '
                                          r'line windows\n\Z')

    def test_30_mb_file_with_default_limit(self):
        with open(self.root / 'big.py', 'wb') as handle:
            handle.truncate(30 * 1024 * 1024)        # sparse: fast to make
        self.assert_one_skip('big.py', r':0: (skipped: )?larger than --max-file-size '
                                       r'\(31457280 > \d+ bytes\)')

    def test_max_file_size_option(self):
        big = write(self.root / 'big.py', 'BIG_CONSTANT = "' + 'x' * (5 * 1024 * 1024) + '"\n')
        os.utime(big, (time.time() - 3600,) * 2)     # old: size and mtime alone say unchanged
        size = big.stat().st_size
        self.assert_one_skip('big.py', r':0: (skipped: )?larger than --max-file-size '
                                       rf'\({size} > 1000000 bytes\)', '--max-file-size', '1000000')
        result = self.index('--max-file-size', str(size))
        self.assertEqual(result.stderr, '')
        self.assertEqual(sorted(json.loads(self.out.read_text(encoding='utf-8'))['files']),
                         ['big.py', 'good.py'])
        lowered = self.index('--max-file-size', str(size - 1))     # big.py is unchanged
        self.assertIn('big.py:0: skipped: larger than --max-file-size', lowered.stderr)
        self.assertEqual(sorted(json.loads(self.out.read_text(encoding='utf-8'))['files']),
                         ['good.py'])

    def test_default_limit_is_documented_and_can_be_raised(self):
        # The default bounds the parser's memory (about 200x a file's size); README says 2 MiB.
        self.assertEqual(code_search.MAX_FILE_SIZE, 2 * 1024 * 1024)
        write(self.root / 'big.py', 'BIG_CONSTANT = "' + 'x' * (3 * 1024 * 1024) + '"\n')
        result = self.index()
        self.assertRegex(result.stderr, r'^big\.py:0: skipped: larger than --max-file-size')
        result = self.index('--max-file-size', str(4 * 1024 * 1024))
        self.assertEqual(result.stderr, '')
        self.assertEqual(sorted(json.loads(self.out.read_text(encoding='utf-8'))['files']),
                         ['big.py', 'good.py'])


class DeepNestingTests(HostileCase):
    def test_parser_nesting_limits(self):
        """Nesting past the parser's limits is one stderr line; the file is read in line
        windows, as code nested too deeply in the other languages is."""
        cases = {
            'parens.py': b'x = ' + b'(' * 100000 + b'1' + b')' * 100000 + b'\n',
            'lists.py': b'x = ' + b'[' * 5000 + b']' * 5000 + b'\n',
            'unary.py': b'x = ' + b'-' * 100000 + b'1\n',
        }
        for name, data in cases.items():
            with self.subTest(name=name):
                path = write(self.root / name, data)
                try:
                    result = self.index()
                    self.assertRegex(result.stderr, '^' + re.escape(name) +
                                     r':0: .+: indexed in line windows\n\Z')
                    windows = json.loads(self.out.read_text('utf-8'))['files'][name]
                    self.assertEqual(windows['rows'].split('\t')[1:4], ['window', '1', '1'])
                    self.assert_good_searchable()
                finally:
                    path.unlink()

    def test_deep_expressions_never_crash(self):
        # Python 3.11 and later raise RecursionError; before, the parser has no limit,
        # and 120,000 deep crashed the process until it got a thread with a deep stack.
        for name, data in (('subscr.py', b'x = a' + b'[0]' * 200000 + b'\n'),
                           ('attr.py', b'x = a' + b'.b' * 200000 + b'\n'),
                           ('plus.py', b'X = 1' + b'+1' * 200000 + b'\n'),
                           ('call.py', b'f' + b'()' * 200000 + b'\n')):
            with self.subTest(name=name):
                path = write(self.root / name, data)
                try:
                    result = self.index()
                    lines = lines_of(result.stderr)
                    if lines:
                        self.assertEqual(len(lines), 1, lines)
                        self.assertRegex(lines[0], '^' + re.escape(name) +
                                         r':0: .+: indexed in line windows$')
                    self.assertIn(name, json.loads(self.out.read_text('utf-8'))['files'])
                    self.assert_good_searchable()
                finally:
                    path.unlink()

    @unittest.skipIf(sys.version_info >= (3, 11), 'the parser has a depth limit')
    def test_a_deep_parse_thread_gets_a_stack_of_whole_pages(self):
        from unittest import mock
        import threading
        sizes, real = [], threading.stack_size

        def page_sized(size=0):
            sizes.append(size)
            if size % 4096:
                raise ValueError(f'size not valid: {size} bytes')   # as macOS says
            return real(size)
        data = b'x = 1' + b'+1' * 300001 + b'\n'          # a stack of over 32 MiB
        with mock.patch.object(threading, 'stack_size', page_sized):
            tree = code_search.parse_source(data, 'deep.py')
        self.assertIsInstance(tree, ast.Module)
        self.assertGreaterEqual(sizes[0], len(data) * code_search.DEEP_PARSE_STACK)

    def test_deep_valid_definitions_are_all_chunked(self):
        depth = 95           # CPython allows 100 indentation levels
        lines = []
        for level in range(depth):
            keyword = 'class' if level % 3 == 2 else 'def'
            lines.append(' ' * level + (f'class C{level}:' if keyword == 'class'
                                        else f'def f{level}():'))
        lines.append(' ' * depth + 'pass')
        data = ('\n'.join(lines) + '\n').encode()
        chunks = code_search.chunk_source(data, 'deep.py')
        names, expected = [], []
        for level in range(depth):
            names.append(f'C{level}' if level % 3 == 2 else f'f{level}')
            if level % 3 != 2:
                kind = 'method' if level % 3 == 0 and level > 0 else 'function'
                expected.append(('.'.join(names), kind, level + 1, depth + 1))
        if (depth - 1) % 3 == 2:
            expected.append(('.'.join(names), 'class', depth, depth + 1))
        self.assertEqual([(c['symbol'], c['kind'], c['start'], c['end']) for c in chunks],
                         expected)
        # A low recursion limit would break a recursive visitor; this walk is iterative.
        script = ('import sys; sys.path.insert(0, sys.argv[1]); import code_search\n'
                  'data = open(sys.argv[2], "rb").read()\n'
                  'import ast; tree = ast.parse(data)\n'
                  'sys.setrecursionlimit(80)\n'
                  'lines = code_search.source_lines(data.decode())\n'
                  'print(len(code_search.python_definitions(tree, len(lines))[0]))\n')
        path = write(self.root / 'deep.py', data)
        result = subprocess.run([sys.executable, '-c', script, str(ROOT), str(path)],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual((result.returncode, result.stdout.strip()),
                         (0, str(len(expected))), result.stderr)
        result = self.index()
        self.assertEqual(result.stderr, '')
        search = run_cli('search', f'f{depth - 1}', '--index', self.out, '--json', '--top-k', '1')
        hit = json.loads(search.stdout)['results'][0]
        self.assertEqual((hit['path'], hit['start']), ('deep.py', depth))
        self.assertEqual(hit['symbol'].count('.'), depth - 1)


class BacktrackingTests(HostileCase):
    """Inputs that made a pattern backtrack for minutes or hours are read in a moment
    (index's timeout here is 60 s; each took far longer before)."""

    def test_lexers_and_headings(self):
        write(self.root / 'A.kt', 'class Outer {\n    class Empty\n' +       # exponential
              ''.join(f'    @Ann{n}\n' for n in range(40)) + '    var x = 1\n}\n')
        write(self.root / 'T.java', 'class T {\n    @Test\n' + ''.join(      # quadratic
            f'    //    assertEquals(1, foo({n}));\n' for n in range(20000)) +
            '    public void f() throws IOException {}\n'
            '    @interface A { String[] names() default {}; }\n}\n')
        write(self.root / 'README.md', '# a' + ' ' * 300000 + 'b\n# Title ##\n\ntext\n')
        self.index()
        found = json.loads(run_cli('outline', '--index', self.out, '--json').stdout)['files']
        self.assertEqual({(f['path'], c['symbol'], c['kind']) for f in found
                          for c in f['chunks'] if f['path'] != 'good.py'},
                         {('A.kt', 'Outer', 'class'), ('A.kt', 'Outer.Empty', 'class'),
                          ('T.java', 'T', 'class'), ('T.java', 'T.f', 'method'),
                          ('T.java', 'T.A', 'annotation'), ('T.java', 'T.A.names', 'method'),
                          ('README.md', 'a b', 'window')})

    def test_scanner_in_linear_time(self):
        """Each of these took minutes to hours (in the square of its length) before."""
        slashes = 'x = ' + '/[' * 300000 + '\n'                   # regex guesses
        closers = 'x = ' + '(' * 300000 + ']' * 300000 + '\n'      # stray closers
        escaped = '\\"\\\n' * 300000                        # \"\ lines: no string closes
        write(self.root / 'slashes.js', slashes)
        write(self.root / 'closers.rs', closers)
        write(self.root / 'escaped.js', f'function before() {{}}\n{escaped}function after() {{}}\n')
        write(self.root / 'escaped.java', f'class A {{\n{escaped}}}\n')
        result = self.index()
        unbalanced = 'its brackets, strings or comments do not balance'
        self.assertEqual(sorted(lines_of(result.stderr)), sorted([
            f'slashes.js:0: {unbalanced}: indexed in line windows',
            f'closers.rs:0: {unbalanced}: indexed in line windows']))
        found = json.loads(run_cli('outline', '--index', self.out, '--json').stdout)['files']
        self.assertEqual({f['path']: [c['symbol'] for c in f['chunks']] for f in found
                          if f['path'].startswith('escaped')},
                         {'escaped.js': ['before', 'after'], 'escaped.java': ['A']})

    def test_finders_in_linear_time(self):
        """Runs of one construct that each finder read again from every occurrence
        (minutes to hours before); deep nesting is read in windows."""
        files = {'tags.jsx': 'x = (' + '><' * 100000 + '\n',
                 'words.ts': 'class ' * 50000 + '\ninterface ' * 30000,
                 'angles.ts': 'function a<' * 30000,
                 'funs.kt': 'class A {\n' + 'fun ' * 60000 + '\nval a = ' * 30000 + '\n}\n',
                 'objects.kt': 'class A {\n' + '*/object \n' * 10000 + '\nobject +' * 10000 + '}\n',
                 'impls.rs': 'fn f() {\n' + '\n#[a]impl a<b> ' * 20000 + '\n}\n',
                 'deep.rs': 'fn a() {\n' * 100000 + '}\n' * 100000}
        for name, text in files.items():
            write(self.root / name, text)
        result = self.index()
        self.assertIn('deep.rs:0: its brackets nest more than 200 deep: indexed in line '
                      'windows', lines_of(result.stderr))
        found = json.loads(run_cli('outline', '--index', self.out, '--json').stdout)['files']
        self.assertLessEqual(set(files), {f['path'] for f in found})

    def test_definitions_crowding_long_lines(self):
        """Many definitions on one long line would each index the whole line again: the
        file is read in line windows."""
        write(self.root / 'many.go', 'package many; ' + ' '.join(
            f'func f{n}() {{}};' for n in range(60000)) + '\n')
        write(self.root / 'many.py', ';'.join(f'A{n}={n}' for n in range(100000)) + '\n')
        write(self.root / 'few.py', ';'.join(f'A{n}={n}' for n in range(20)) + '\n')
        result = self.index()
        crowded = f'its definitions repeat its text more than {code_search.CROWDED_TEXT} ' \
                  'times (many on shared long lines): indexed in line windows'
        self.assertEqual(sorted(lines_of(result.stderr)),
                         [f'many.go:0: {crowded}', f'many.py:0: {crowded}'])
        found = json.loads(run_cli('outline', '--index', self.out, '--json').stdout)['files']
        kinds = {f['path']: {c['kind'] for c in f['chunks']} for f in found}
        self.assertEqual((kinds['many.go'], kinds['many.py'], kinds['few.py']),
                         ({'window'}, {'window'}, {'constant'}))

    def test_phrases_in_linear_time(self):
        """A pasted message reads the string literals of the leading hits: a line of
        escaped quotes or a literal of many '%(' took hours before."""
        write(self.root / 'quotes.py',
              'def quoted_lines():\n    # ' + '"\\' * 500000 + '\n'
              '    x = "' + '%(' * 300000 + '"\n'
              '    raise ValueError("cannot frobnicate the widget %s today" % x)\n')
        self.index()
        result = run_cli('search', 'quoted_lines: cannot frobnicate the widget gizmo today',
                         '--index', self.out, '--json', timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout)['results'][0]['symbol'], 'quoted_lines')

    def test_globs_of_many_stars(self):
        long_name = 'a' * 200 + '.py'
        write(self.root / long_name, 'def long_named():\n    pass\n')
        write(self.root / '.gitignore', '*a*a*a*a*a*a*a*a*b\n')        # ignores no file here
        self.index()
        result = run_cli('search', 'long_named', '--index', self.out, '--json',
                         '--path', '*a*a*a*a*a*a*a*a*.py')
        self.assertEqual([hit['path'] for hit in json.loads(result.stdout)['results']],
                         [long_name])

    def test_traces(self):
        traces = {'rust': '   0: ' + 'a::{{' * 100000 + '\n             at src/main.rs:3:5\n',
                  'python': 'Traceback (most recent call last):\n  File "good.py", line 1, '
                            'in <module>\n' + 'ValueError: x\n' * 500000,
                  'group': '  +' + '-' * 1000000 + ' 1 -\n'}
        self.index()
        for name, text in traces.items():
            with self.subTest(name=name):
                result = run_cli('trace', '-', '--index', self.out, '--json', input=text)
                self.assertEqual(result.returncode, 0, result.stderr[-300:])
                blocks = json.loads(result.stdout)['exceptions']
                if name == 'python':
                    self.assertLessEqual(len(blocks[0]['message']),
                                         code_search.TRACE_MESSAGE_LIMIT + 20)


@unittest.skipUnless(hasattr(os, 'mkfifo') and hasattr(socket, 'AF_UNIX'), 'POSIX only')
class SpecialFileTests(HostileCase):
    def test_fifo(self):
        os.mkfifo(self.root / 'fifo.py')
        self.assert_one_skip('fifo.py', NOT_REGULAR)

    def test_unix_socket(self):
        server = socket.socket(socket.AF_UNIX)
        self.addCleanup(server.close)
        path = self.root / 's.py'
        if len(str(path)) > 100:
            self.skipTest('socket path too long for AF_UNIX')
        server.bind(str(path))
        self.assert_one_skip('s.py', NOT_REGULAR)

    def test_dev_null_symlink(self):
        os.symlink('/dev/null', self.root / 'null.py')
        self.assert_one_skip('null.py', SYMLINK)

    def test_symlink_loop_file(self):
        os.symlink('loop.py', self.root / 'loop.py')
        self.assert_one_skip('loop.py', SYMLINK)

    def test_symlink_loop_dir(self):
        os.symlink('loopdir', self.root / 'loopdir')
        self.assert_one_skip('loopdir', r'/?' + SYMLINK)

    def test_symlinks_outside_root_not_read(self):
        write(self.base / 'outside' / 'secret.py',
              'def zebracorn_quokka():\n    return "zebracorn"\n')
        for name, target in (('ext.py', self.base / 'outside' / 'secret.py'),
                             ('extdir', self.base / 'outside')):
            with self.subTest(name=name):
                link = self.root / name
                os.symlink(target, link)
                try:
                    self.assert_one_skip(name, r'/?' + SYMLINK)
                    result = run_cli('search', 'zebracorn quokka', '--index',
                                     self.out, '--json')
                    self.assertEqual(json.loads(result.stdout)['results'], [])
                    result = run_cli(self.root, 'zebracorn quokka')
                    self.assertEqual((result.returncode, result.stdout), (0, NOT_FOUND + '\n'))
                finally:
                    link.unlink()

    @unittest.skipIf(sys.platform in ('darwin', 'win32'), 'names there are always Unicode')
    def test_a_name_that_is_not_utf8_is_one_skip(self):
        for name, folder in ((b'bad\xffname.py', False), (b'dir\xfe', True)):
            with self.subTest(name=name):
                path = os.path.join(os.fsencode(self.root), name)
                if folder:
                    os.mkdir(path)
                    write(os.fsdecode(os.path.join(path, b'inner.py')), GOOD)
                else:
                    write(os.fsdecode(path), GOOD)
                shown = os.fsdecode(name).encode('utf-8', 'backslashreplace').decode()
                self.assert_one_skip(shown + '/' * folder, r':0: skipped: name is not valid UTF-8')
                write(os.fsdecode(os.path.join(os.fsencode(self.root), b'.hidden\xfe')), GOOD)
                self.assert_one_skip(shown + '/' * folder, r':0: skipped: name is not valid UTF-8')
                os.unlink(os.path.join(os.fsencode(self.root), b'.hidden\xfe'))  # quiet: hidden
                (shutil.rmtree if folder else os.unlink)(path)

    @unittest.skipIf(sys.platform == 'win32', 'no such names there')
    def test_names_with_a_colon_or_a_backslash_are_files_like_any(self):
        for name in ('a:b.py', 'c\\d.py'):
            write(self.root / name, 'def odd_named_function():\n    pass\n')
        result = self.index()
        self.assertEqual(result.stderr, '')
        found = run_cli('search', 'odd_named_function', '--index', self.out, '--json')
        self.assertEqual(found.returncode, 0, found.stderr)
        self.assertEqual(sorted(hit['path'] for hit in json.loads(found.stdout)['results']),
                         ['a:b.py', 'c\\d.py'])

    def test_directory_named_like_a_python_file(self):
        write(self.root / 'pkg.py' / 'inner.py', 'def inner_of_dir():\n    pass\n')
        result = self.index()
        self.assertEqual(result.stderr, '')
        self.assertEqual(sorted(json.loads(self.out.read_text('utf-8'))['files']),
                         ['good.py', 'pkg.py/inner.py'])

    def test_skip_reasons_use_conventions_wording(self):
        # conventions.md spells these reasons out, with the 'skipped: ' prefix.
        os.mkfifo(self.root / 'fifo.py')
        os.symlink('good.py', self.root / 'link.py')
        write(self.root / 'big.py', 'X = 1\n' * 400)
        result = self.index('--max-file-size', '2000')
        self.assertEqual(lines_of(result.stderr),
                         ['big.py:0: skipped: larger than --max-file-size (2400 > 2000 bytes)',
                          'fifo.py:0: skipped: not a regular file',
                          'link.py:0: skipped: symbolic link (not followed)',
                          'skipped 3 file(s)'])
        listed = json.loads(run_cli('ls', '--all', '--index', self.out, '--json').stdout)
        self.assertEqual({entry['path']: entry['type'] for entry in listed['entries']
                          if entry.get('reason')},
                         {'big.py': 'file', 'fifo.py': 'special', 'link.py': 'link'})


@unittest.skipIf(NO_PERMISSION_TESTS, NO_PERMISSION_TESTS)
class PermissionTests(HostileCase):
    def unprivileged(self, prepare):
        def runner(folder, *args, timeout=120):
            return run_unprivileged(folder, *args, timeout=timeout, prepare=prepare)
        return runner

    def test_unreadable_file(self):
        secret = write(self.root / 'secret.py', 'def hidden_by_mode():\n    pass\n')
        self.assert_one_skip('secret.py', r':0: (skipped: )?permission denied',
                             runner=self.unprivileged(lambda: os.chmod(secret, 0)))
        self.assertEqual(run_unprivileged(self.base, 'index', self.root, '--out', self.out,
                                          '--dry-run').returncode, 0)

    def test_unreadable_directory(self):
        write(self.root / 'locked' / 'x.py', 'def behind_lock():\n    pass\n')
        self.assert_one_skip('locked/', r':0: .*[Pp]ermission denied.*',
                             runner=self.unprivileged(
                                 lambda: os.chmod(self.root / 'locked', 0)))

    def test_a_root_that_cannot_be_listed_is_refused_and_its_index_kept(self):
        self.make_index()
        before = self.out.read_bytes()
        os.chmod(self.out, 0o666)              # for the unprivileged run to be able to write
        result = run_unprivileged(self.base, 'index', self.root, '--out', self.out,
                                  prepare=lambda: os.chmod(self.root, 0))
        os.chmod(self.root, 0o755)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(lines_of(result.stderr), [
            f'code_search.py: error: cannot list root folder {self.root}: Permission denied'])
        self.assertEqual(self.out.read_bytes(), before)

    def test_a_file_behind_a_folder_that_cannot_be_searched_is_not_called_gone(self):
        self.make_index()
        os.chmod(self.out, 0o644)
        result = run_unprivileged(self.base, 'read', 'good.py', '--index', self.out,
                                  prepare=lambda: os.chmod(self.root, 0o600))
        os.chmod(self.root, 0o755)
        self.assertEqual((result.returncode, lines_of(result.stderr)), (2, [
            'code_search.py: error: cannot read good.py: permission denied']))

    def test_index_cannot_be_written_exits_1(self):
        readonly = self.base / 'readonly'
        readonly.mkdir()
        for existing in (False, True):
            with self.subTest(existing_index=existing):
                if existing:
                    os.chmod(readonly, 0o755)
                    shutil.copy(self.make_index(), readonly / 'idx.json')
                before = sorted(os.listdir(readonly))
                result = run_unprivileged(self.base, 'index', self.root, '--out',
                                          readonly / 'idx.json', timeout=60,
                                          prepare=lambda: os.chmod(readonly, 0o555))
                self.assertEqual(result.returncode, 1, result.stderr)
                self.assertEqual(len(lines_of(result.stderr)), 1, result.stderr)
                self.assertTrue(result.stderr.startswith('code_search.py: error: '),
                                result.stderr)
                self.assertNotIn('Traceback', result.stderr)
                self.assertEqual(sorted(os.listdir(readonly)), before)

    def make_index(self):
        write(self.root / 'changed.py', 'def changed_later():\n    pass\n')
        self.assertEqual(run_cli('index', self.root, '--out', self.out).returncode, 0)
        write(self.root / 'changed.py', 'def changed_now():\n    pass\n')
        return self.out


class VanishedFileTests(unittest.TestCase):
    def deleting_walk(self, victim):
        real_walk = code_search.walk_tree

        def walk(*args, **kwargs):
            for item in real_walk(*args, **kwargs):
                yield item
                if not item.reason and item.relative == victim:
                    os.unlink(item.path)
        return walk

    def check(self, old):
        with mock.patch.object(code_search, 'walk_tree', self.deleting_walk('gone.py')):
            index, stats = code_search.update_index(self.root, old, code_search.IndexOptions(jobs=1))
        self.assertEqual(list(index['files']), ['good.py'])
        self.assertEqual(len(index['skipped']), 1)
        entry = index['skipped'][0]
        self.assertEqual((entry['path'], entry['line']), ('gone.py', 0))
        self.assertRegex(entry['reason'], r'^(skipped: )?vanished while indexing$')
        self.assertEqual(len(stats['skipped']), 1)
        return index, stats

    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.root = Path(folder.name)
        write(self.root / 'good.py', GOOD)

    def test_deleted_between_listing_and_reading(self):
        write(self.root / 'gone.py', 'def soon_gone():\n    pass\n')
        self.check(None)

    def test_deleted_changed_file_between_listing_and_reading(self):
        write(self.root / 'gone.py', 'def soon_gone():\n    pass\n')
        old, _ = code_search.update_index(self.root, None, code_search.IndexOptions(jobs=1))
        write(self.root / 'gone.py', 'def soon_gone():\n    return "changed"\n')
        index, stats = self.check(old)
        self.assertEqual(stats['removed'], 1)
        self.assertNotIn('soon', code_search.unpack_postings(index['postings']))

    def test_vanished_reason_uses_conventions_wording(self):
        write(self.root / 'gone.py', 'def soon_gone():\n    pass\n')
        index, _ = self.check(None)
        self.assertEqual(index['skipped'][0]['reason'], 'skipped: vanished while indexing')


class ExitStatusTests(HostileCase):
    def setUp(self):
        super().setUp()
        self.assertEqual(run_cli('index', self.root, '--out', self.out).returncode, 0)

    def assert_misuse(self, *args, status=2, runner=run_cli):
        result = runner(*args, cwd=self.base)
        self.assertEqual(result.returncode, status, (args, result.stderr))
        self.assertNotIn('Traceback', result.stderr)
        self.assertEqual(len(lines_of(result.stderr)), 1, (args, result.stderr))
        self.assertTrue(result.stderr.startswith('code_search.py'), result.stderr)
        self.assertEqual(result.stdout, '')
        return result

    def test_zero_with_skips(self):
        write(self.root / 'bad.py', b'x = "caf\xe9"\n')
        result = run_cli('index', self.root, '--out', self.out)
        self.assertEqual(result.returncode, 0)
        result = run_cli(self.root, 'harmless')
        self.assertEqual(result.returncode, 0)
        self.assertEqual(lines_of(result.stderr)[-1], 'skipped 1 file(s)')

    def test_missing_root_and_root_is_a_file(self):
        missing = self.base / 'missing'
        for root in (missing, self.root / 'good.py'):
            with self.subTest(root=root):
                before = sorted(os.listdir(self.base))
                self.assert_misuse(root, 'harmless')
                out = self.base / 'new.json'
                self.assert_misuse('index', root, '--out', out)
                self.assert_misuse('index', root, '--out', out, '--dry-run')
                self.assertFalse(out.exists())
                self.assertEqual(sorted(os.listdir(self.base)), before)

    def test_index_on_missing_folder_writes_nothing_in_cwd(self):
        result = run_cli('index', 'no_such_folder', cwd=self.base)
        self.assertEqual(result.returncode, 2)
        self.assertFalse((self.base / 'index.json').exists())
        self.assertFalse((self.base / 'index.json.lock').exists())

    def test_bad_top_k(self):
        for value in ('0', '-1', 'abc', '1.5', '', ' 5', '1_0', '５'):
            with self.subTest(value=value):
                runner = run_cli if value == '0' else run_main
                self.assert_misuse(self.root, 'harmless', '--top-k', value, runner=runner)
                self.assert_misuse('search', 'harmless', '--index', self.out, '--top-k', value,
                                   runner=runner)

    def test_a_question_over_the_limit_is_misuse(self):
        question = 'harmless ' * (code_search.QUESTION_LIMIT // 9 + 1)
        self.assert_misuse(self.root, question)
        self.assert_misuse('search', question, '--index', self.out)
        for empty in ('', '  ', '\u2028\x0c'):     # as MCP and the HTTP API refuse it
            self.assert_misuse('search', empty, '--index', self.out)
            self.assert_misuse('symbol', empty, '--index', self.out)
            self.assert_misuse(self.root, empty)

    def test_bad_index_paths(self):
        for path in (self.base / 'missing.json', self.root, self.base / 'nope' / 'idx.json', ''):
            with self.subTest(path=path):
                result = self.assert_misuse('search', 'harmless', '--index', path)
                if path == '':
                    self.assertIn('index path is empty', result.stderr)
        for path in (self.root, self.base / 'nope' / 'idx.json'):
            with self.subTest(out=path):
                self.assert_misuse('index', self.root, '--out', path)
                self.assertFalse((self.base / 'nope').exists())

    @unittest.skipUnless(hasattr(os, 'mkfifo'), 'POSIX only')
    def test_a_fifo_or_a_device_is_never_an_index_nor_replaced_by_one(self):
        fifo = self.base / 'fifo.json'              # no writer: opening it would block
        os.mkfifo(fifo)
        self.assertIn('not a regular file', self.assert_misuse(
            'index', self.root, '--out', fifo).stderr)
        refused = self.assert_misuse('search', 'harmless', '--index', fifo)
        self.assertNotIn('rebuild it', refused.stderr)      # index refuses to write a FIFO
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
        if hasattr(os, 'geteuid') and os.geteuid() == 0:    # a device node of our own
            device = self.base / 'null'
            os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            self.assert_misuse('index', self.root, '--out', device)
            self.assertTrue(stat.S_ISCHR(os.stat(device).st_mode))

    @unittest.skipUnless(hasattr(os, 'symlink'), 'symbolic links')
    def test_an_index_reached_through_a_link_is_replaced_in_place(self):
        os.symlink('real.json', self.base / 'link.json')
        for _ in range(2):                          # written, then updated
            self.assertEqual(run_cli('index', self.root, '--out', self.base / 'link.json',
                                     cwd=self.base).returncode, 0)
            self.assertTrue((self.base / 'link.json').is_symlink())
            self.assertEqual(valid_index_dict(self.base / 'real.json')['tool'], 'code_search')
        self.assertEqual(sorted(os.listdir(self.base)),       # nothing else left beside
                         ['idx.json', 'link.json', 'real.json', 'root'])

    def test_argparse_misuse_is_one_line(self):
        self.assert_misuse()
        self.assert_misuse('search')
        self.assert_misuse('index', self.root, '--jobs', '0')
        self.assert_misuse('index', self.root, '--max-file-size', 'big')
        self.assert_misuse(self.root, 'q', '--no-such-option')


def valid_index_dict(out):
    return json.loads(Path(out).read_text(encoding='utf-8'))


class BadIndexTests(HostileCase):
    def setUp(self):
        super().setUp()
        write(self.root / 'other.py', 'def second_function():\n    """Other."""\n')
        self.assertEqual(run_cli('index', self.root, '--out', self.out).returncode, 0)
        self.valid = self.out.read_bytes()

    def variants(self):
        good = json.loads(self.valid)
        fid = good['files']['good.py']['fid']

        def changed(edit):
            index = json.loads(self.valid)
            edit(index)
            return json.dumps(index).encode()

        def set_chunk(key, value):
            """Edit good.py's only chunk: its row 'symbol kind start end' in "rows", or its
            field lengths in "lengths"."""
            position = {'symbol': 0, 'kind': 1, 'start': 2, 'end': 3}

            def edit(index):
                record = index['files']['good.py']
                if key == 'lengths':
                    record['lengths'] = ' '.join(str(v) for v in value)
                    return
                row = record['rows'].split('\n')[0].split('\t')
                row[position[key]] = str(value)
                record['rows'] = '\t'.join(row)
            return edit

        def outside_the_root(index):
            """A file key that climbs out of the root, with the checksum made to match."""
            index['files']['../good.py'] = index['files'].pop('good.py')
            index['checksum'] = code_search.content_checksum(index)

        def set_posting(term, value):
            def edit(index):
                postings = code_search.unpack_postings(index['postings'])
                postings[term] = value
                index['postings'] = code_search.pack_postings(postings)
            return edit
        return {
            'truncated': self.valid[:len(self.valid) // 2],
            'empty': b'',
            'not json': b'this is not json\n',
            'invalid utf-8': b'\xff\xfe{"tool": "code_search"}',
            'json array': b'[]',
            'json string': b'"code_search"',
            'deep json': b'[' * 100000 + b']' * 100000,
            'tool far from the start': b'{' + b' ' * 300 + b'"tool": "code_search", "files"',
            'foreign tool': json.dumps({'tool': 'notes_search', 'format_version': 1,
                                        'files': {}, 'skipped': []}).encode(),
            'no tool': changed(lambda i: i.pop('tool')),
            'wrong format version': changed(lambda i: i.__setitem__('format_version', 99)),
            'no format version': changed(lambda i: i.pop('format_version')),
            'start after end': changed(set_chunk('start', 9)),
            'start zero': changed(set_chunk('start', 0)),
            'start is text': changed(set_chunk('start', 'one')),
            'fid not int': changed(lambda i: i['files']['good.py'].__setitem__('fid', str(fid))),
            'size missing': changed(lambda i: i['files']['good.py'].pop('size')),
            'mtime not int': changed(lambda i: i['files']['good.py'].__setitem__('mtime_ns', 1.5)),
            'sha256 missing': changed(lambda i: i['files']['good.py'].pop('sha256')),
            'files not a dict': changed(lambda i: i.__setitem__('files', [])),
            'postings not strings': changed(
                lambda i: i['postings'].__setitem__(0, [fid, 0, 0])),
            'postings not buckets': changed(lambda i: i.__setitem__('postings', {})),
            'postings name a missing file': changed(set_posting('harmless', '999 0 0')),
            'postings malformed': changed(set_posting('harmless', 'garbage')),
            'chunk lengths not numbers': changed(set_chunk('lengths', ['x'] * 6)),
            'renamed by hand': changed(set_chunk('symbol', 'renamed_by_hand')),
            'root moved by hand': changed(lambda i: i.__setitem__('root', str(self.base))),
            'a path outside the root': changed(outside_the_root),
            'compound words without parts': changed(lambda i: i['compound_words'].pop('parts')),
            'compound words not counts': changed(
                lambda i: i['compound_words']['names'].__setitem__('harmless', 'many')),
            'compound words edited': changed(
                lambda i: i['compound_words']['parts'].__setitem__('harmless', 99)),
            'skipped not records': changed(lambda i: i.__setitem__('skipped', [1, 2])),
            'skipped without reason': changed(lambda i: i.__setitem__(
                'skipped', [{'path': 'x.py', 'line': 0}])),
        }

    # These also go through a real process; the others call main() in this process.
    IN_SUBPROCESS = {'truncated', 'foreign tool', 'chunk lengths not numbers',
                     'postings name a missing file'}

    def run_variant(self, variant, *args):
        return (run_cli if variant in self.IN_SUBPROCESS else run_main)(*args)

    def test_search_rejects_with_one_line(self):
        for name, data in self.variants().items():
            with self.subTest(variant=name):
                self.out.write_bytes(data)
                result = self.run_variant(name, 'search', 'harmless_marker_function', '--index',
                                  self.out)
                self.assertEqual(result.returncode, 2, (result.stdout, result.stderr))
                self.assertNotIn('Traceback', result.stderr)
                self.assertEqual(len(lines_of(result.stderr)), 1, result.stderr)
                self.assertTrue(result.stderr.startswith('code_search.py: error: '))
                if name == 'foreign tool':
                    self.assertIn('notes_search', result.stderr)
                if name == 'wrong format version':          # the command that rebuilds it
                    self.assertIn(f'index format 99 is not {code_search.FORMAT_VERSION}; '
                                  f'rebuild it with: code_search.py index ROOT --out '
                                  f'{self.out}\n', result.stderr)
                if name == 'no format version':
                    self.assertIn('the index has no format_version; rebuild', result.stderr)
                if name in ('not json', 'invalid utf-8', 'deep json',    # index refuses them
                            'tool far from the start'):
                    self.assertIn('index will not overwrite it', result.stderr)
                if name == 'truncated':                 # and rebuilds this one
                    self.assertIn('rebuild it with', result.stderr)
                if name.startswith('skipped'):      # ls --all lists them: one line too
                    listed = run_main('ls', '--all', '--index', self.out)
                    self.assertEqual((listed.returncode, len(lines_of(listed.stderr))), (2, 1))

    # Files that are not code_search indexes: `index` refuses to overwrite them.
    NOT_OURS = {'not json', 'invalid utf-8', 'json array', 'json string', 'deep json',
                'foreign tool', 'no tool', 'tool far from the start'}

    def test_index_rebuilds_instead_of_carrying_forward(self):
        for name, data in self.variants().items():
            with self.subTest(variant=name):
                self.out.write_bytes(data)
                result = self.run_variant(name, 'index', self.root, '--out', self.out)
                self.assertNotIn('Traceback', result.stderr)
                lines = lines_of(result.stderr)
                if name in self.NOT_OURS:
                    self.assertEqual(result.returncode, 2, result.stderr)
                    self.assertEqual(len(lines), 1, lines)
                    self.assertIn('refusing to overwrite it', lines[0])
                    self.assertEqual(self.out.read_bytes(), data)
                    continue
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(len(lines), 0 if name == 'empty' else 1, lines)
                if name != 'empty':
                    self.assertIn('rebuild', lines[0].lower())
                self.assertEqual(result.stdout, '갱신 파일: 2, 제거 파일: 0, 건너뛴 파일: 0 '
                                                '(파일 2개, 조각 2개)\n')
                search = self.run_variant(name, 'search', 'harmless_marker_function', '--index',
                                          self.out, '--json')
                self.assertEqual(search.returncode, 0, search.stderr)
                hits = json.loads(search.stdout)['results']
                self.assertEqual(hits[0]['symbol'], 'harmless_marker_function')
                rebuilt = valid_index_dict(self.out)
                postings = code_search.unpack_postings(rebuilt['postings'])
                self.assertNotIn('999 0 0', postings.get('harmless', ''))
                self.assertEqual(rebuilt['tool'], 'code_search')

    def test_paths_outside_root_are_never_read(self):
        write(self.base / 'outside' / 'secret.py',
              'def harmless_marker_function():\n    return "TOPSECRET_Q9"\n')
        for bad in ('../outside/secret.py', str(self.base / 'outside' / 'secret.py')):
            with self.subTest(path=bad):
                index = json.loads(self.valid)
                index['files'] = {(bad if k == 'good.py' else k): v
                                  for k, v in index['files'].items()}
                self.out.write_text(json.dumps(index), encoding='utf-8')
                for command in (['search', 'harmless_marker_function', '--json'],
                                ['symbol', 'harmless_marker_function', '--json']):
                    result = run_cli(*command, '--index', self.out)
                    self.assertNotIn('Traceback', result.stderr)
                    self.assertNotIn('TOPSECRET_Q9', result.stdout)
                    self.assertIn(result.returncode, (0, 2))
                result = run_cli('at', f'{bad}:1', '--index', self.out)
                self.assertNotIn('TOPSECRET_Q9', result.stdout)
                self.assertEqual(result.returncode, 2)


class QuestionTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.root = Path(cls.folder.name) / 'root'
        write(cls.root / 'good.py', GOOD)
        cls.out = Path(cls.folder.name) / 'idx.json'
        assert run_cli('index', cls.root, '--out', cls.out).returncode == 0

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_odd_questions(self):
        for question, hits in (('the of a', 0), ('.*[(?', 0),
                               ('harmless ' * 450, 1), ('\\d+$^|(?P<x>', 0),
                               ('한국어 질문 세금', 0)):
            with self.subTest(question=question[:20]):
                for args in (['search', question, '--index', self.out], [self.root, question]):
                    result = run_main(*args)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    self.assertNotIn('Traceback', result.stderr)
                    if hits:
                        self.assertTrue(result.stdout.startswith('[code-1] good.py:1-3 '),
                                        result.stdout[:200])
                    else:
                        self.assertEqual(result.stdout, NOT_FOUND + '\n')
                result = run_main('search', question, '--index', self.out, '--json')
                self.assertEqual(len(json.loads(result.stdout)['results']), hits)


class NeverExecutedTests(unittest.TestCase):
    def test_indexed_code_is_never_run(self):
        with tempfile.TemporaryDirectory() as folder:
            base = Path(folder)
            root = base / 'root'
            marker = base / 'MARKER'
            payload = (f'import os\nopen({str(marker)!r}, "a").write(__name__ + "\\n")\n'
                       'raise SystemExit(3)\n')
            for name in ('sitecustomize.py', 'usercustomize.py', 'ast.py', 'json.py',
                         'tokenize.py', 're.py', 'os.py', 'hashlib.py', '__main__.py',
                         '__init__.py', 'conftest.py', 'setup.py', 'code_search.py',
                         'pkg/__init__.py', 'pkg/__main__.py'):
                write(root / name, payload + 'def payload_function():\n    pass\n')
            for i in range(70):     # enough files for worker processes
                write(root / 'many' / f'm{i:02d}.py', payload + f'def many_{i}():\n    pass\n')
            out = base / 'idx.json'
            runs = [run_cli('index', root, '--out', out, '--jobs', '2', cwd=root),
                    run_cli('search', 'payload_function', '--index', out, cwd=root),
                    run_cli(root, 'payload_function', cwd=root),
                    run_cli('symbol', 'payload_function', '--index', out, cwd=root)]
            for result in runs:
                self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(len(valid_index_dict(out)['files']), 85)
            self.assertFalse(marker.exists())


if __name__ == '__main__':
    unittest.main()


class AnotherPythonTests(unittest.TestCase):
    def test_a_file_one_python_could_not_parse_is_read_again_by_another(self):
        """A Python file cut in windows records the Python that could not parse it; an
        index run by another Python reads it again, and the same Python does not."""
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write(root / 'broken.py', 'def f(:\n    pass\n')
            write(root / 'ok.py', 'def g():\n    return 1\n')
            options = code_search.IndexOptions(jobs=1)
            with mock.patch.object(code_search, 'RUNNING_PYTHON', '3.8'):
                index, _ = code_search.update_index(root, None, options)
            self.assertEqual(index['files']['broken.py']['parsed_by'], '3.8')
            self.assertNotIn('parsed_by', index['files']['ok.py'])
            index, stats = code_search.update_index(root, index, options)
            self.assertEqual((stats['updated'], index['files']['broken.py']['parsed_by']),
                             (1, code_search.RUNNING_PYTHON))
            self.assertEqual(code_search.update_index(root, index, options)[1]['updated'], 0)

"""notes_search.py on hostile trees, misuse, exit statuses and corrupt index files."""
import contextlib
import io
import json
import os
import socket
import stat
import subprocess
import sys
import time
import unicodedata
import unittest
from pathlib import Path
from unittest import mock

from tests import support
from tests.support import NOTES_TOOL as TOOL, ROOT

import notes_search as ns  # noqa: E402

IS_ROOT = hasattr(os, 'geteuid') and os.geteuid() == 0
# As root, permission bits do not stop reads: the unreadable-file cases run the tool in
# a child that imports it, then gives up root (setuid to nobody) before indexing.  The
# interpreter may live under /root, so modules imported lazily are imported first.
RUN_AS_NOBODY = '''
import concurrent.futures.process, concurrent.futures.thread, gettext, hashlib, locale, os, pwd
import shutil, socket, sys, textwrap, threading
sys.path.insert(0, sys.argv[1])
import notes_search
if os.geteuid() == 0:
    nobody = pwd.getpwnam('nobody')
    os.setgroups([])
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)
sys.exit(notes_search.main(sys.argv[2:]))
'''
MAX = ns.MAX_FILE_SIZE


def run_cli(*args, cwd=None, as_nobody=False):
    """Run notes_search.py in a subprocess (optionally without root); return the result."""
    if not as_nobody:
        return support.run_cli(TOOL, *args, cwd=cwd)
    return subprocess.run([sys.executable, '-c', RUN_AS_NOBODY, str(ROOT), *map(str, args)],
                          cwd=cwd, env=support.ENV, capture_output=True, text=True,
                          encoding='utf-8', timeout=120)


def valid_index(tmp):
    """Index a two-note folder under tmp; return the index path."""
    root = tmp / 'notes'
    root.mkdir()
    (root / 'a.md').write_text('# 캐시\n\ncache invalidation notes\n', encoding='utf-8')
    (root / 'b.md').write_text('# other\n\nunrelated text\n', encoding='utf-8')
    index = tmp / 'index.json'
    ns.build_index(root, index)
    return index


class TempDirCase(support.TempDirCase):
    def setUp(self):
        super().setUp()
        os.chmod(self.tmp, 0o755)

    def assert_one_error_line(self, run, status=2, contains=''):
        self.assertEqual(run.returncode, status, run.stderr)
        lines = run.stderr.splitlines()
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertTrue(lines[0].startswith('notes_search.py'), lines[0])
        self.assertIn(': error: ', lines[0])
        self.assertIn(contains, lines[0])
        self.assertNotIn('Traceback', run.stderr)


class HostileTreeTests(TempDirCase):
    def build_tree(self):
        notes = self.tmp / 'notes'
        outside = self.tmp / 'outside'
        for folder in (notes, outside, notes / 'dir.md', notes / 'closed', notes / 'node_modules',
                       notes / '.git', notes / 'venv', notes / '.obsidian'):
            folder.mkdir(parents=True)
        (outside / 'secret.md').write_text('outsideword\n', encoding='utf-8')
        files = {'good.md': '# Good\n\nsurvivor text\n', 'dir.md/inner.md': 'survivor inside\n',
                 'closed/hidden.md': 'survivor closed\n', 'node_modules/x.md': 'survivor nm\n',
                 '.git/x.md': 'survivor git\n', 'venv/x.md': 'survivor venv\n',
                 'venv/pyvenv.cfg': 'home = /usr\n', '.obsidian/x.md': 'survivor hidden\n',
                 '.dot.md': 'survivor dot\n', 'locked.md': 'survivor locked\n',
                 'late.md': '# T\nbody\ntags: late\n'}
        for relative, text in files.items():
            (notes / relative).write_text(text, encoding='utf-8')
        (notes / 'invalid.md').write_bytes(b'fine line\n\xff\xfe broken\n')
        (notes / 'nul.md').write_bytes(b'text\nmore\x00bytes\n')
        (notes / 'windows.md').write_bytes('# Saved by PowerShell\n'.encode('utf-16'))
        with open(notes / 'big.md', 'wb') as big:
            big.truncate(30 * 1024 * 1024)
        os.mkfifo(notes / 'fifo.md')
        server = socket.socket(socket.AF_UNIX)
        self.addCleanup(server.close)
        server.bind(str(notes / 'sock.md'))
        os.symlink('loop.md', notes / 'loop.md')
        os.symlink(outside / 'secret.md', notes / 'escape.md')
        os.symlink(outside, notes / 'outdir')
        os.symlink('.', notes / 'self')
        expected = {
            'big.md:0: skipped: larger than --max-file-size (31457280 > 10485760 bytes)',
            'closed/:0: skipped: cannot list folder: Permission denied',
            'escape.md:0: skipped: symbolic link (not followed)',
            'fifo.md:0: skipped: not a regular file',
            'invalid.md:2: skipped: not valid UTF-8 (byte 0xff)',
            'late.md:3: skipped: tags는 본문보다 먼저 한 줄에 적으세요.',
            'locked.md:0: skipped: permission denied',
            'loop.md:0: skipped: symbolic link (not followed)',
            'nul.md:2: skipped: binary file (contains NUL bytes)',
            'windows.md:1: skipped: UTF-16 text (save it as UTF-8 to index it)',
            'outdir:0: skipped: symbolic link (not followed)',
            'self:0: skipped: symbolic link (not followed)',
            'sock.md:0: skipped: not a regular file'}
        if sys.platform not in ('darwin', 'win32'):         # names there are always Unicode
            (notes / os.fsdecode(b'bad\xffname.md')).write_text('survivor\n', encoding='utf-8')
            expected.add('bad\\udcffname.md:0: skipped: name is not valid UTF-8')
        if IS_ROOT:
            os.mknod(notes / 'dev.md', 0o600 | stat.S_IFCHR, os.makedev(1, 3))
            expected.add('dev.md:0: skipped: not a regular file')
        os.chmod(notes / 'locked.md', 0)
        os.chmod(notes / 'closed', 0)
        self.addCleanup(os.chmod, notes / 'closed', 0o755)
        return expected

    def test_every_hostile_file_is_reported_once_and_the_rest_indexed(self):
        expected = self.build_tree()
        out = self.tmp / 'out'
        out.mkdir(mode=0o777)
        os.chmod(out, 0o777)
        started = time.monotonic()
        run = run_cli('index', 'notes', '--out', 'out/index.json', cwd=self.tmp, as_nobody=True)
        self.assertLess(time.monotonic() - started, 60, 'index hung')
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout, '갱신 파일: 2, 제거 파일: 0\n')
        lines = run.stderr.splitlines()
        self.assertEqual(lines[-1], f'skipped {len(expected)} file(s)')
        self.assertEqual(sorted(lines[:-1]), sorted(expected))
        found = run_cli('search', 'survivor', '--top-k', '20', '--json',
                        '--index', 'out/index.json', cwd=self.tmp)
        paths = sorted(hit['path'] for hit in json.loads(found.stdout)['results'])
        self.assertEqual(paths, ['dir.md/inner.md', 'good.md'])
        outside = run_cli('search', 'outsideword', '--index', 'out/index.json', cwd=self.tmp)
        self.assertEqual(outside.stdout, '일치하는 메모를 찾지 못했습니다.\n')
        document = json.loads((out / 'index.json').read_text(encoding='utf-8'))
        self.assertEqual(len(document['skipped']), len(expected))

    @unittest.skipUnless(IS_ROOT or os.name == 'posix', 'needs POSIX permissions')
    def test_lines_that_make_backtracking_patterns_slow_are_read_at_once(self):
        notes = self.tmp / 'notes'
        notes.mkdir()
        hostile = {'ticks.md': '#todo ' + '`' * 20000 + 'x',      # took hours (cubic)
                   'title.md': '# Title' + ' ' * 300000 + 'todo',  # minutes (quadratic)
                   'genome.md': 'see #todo ' + 'ACGT' * 400000,
                   'angles.md': 'todo ' + '#<' * 500000}          # (an autolink's <...)
        for name, line in hostile.items():
            (notes / name).write_text(line + '\n', encoding='utf-8')
        (notes / 'code.md').write_text('`#no` and `` ` `` then #yes `#no2\n', encoding='utf-8')
        run = run_cli('index', notes, '--out', self.tmp / 'i.json')     # within its timeout
        self.assertEqual((run.returncode, run.stderr), (0, ''))
        found = json.loads(run_cli('search', 'todo', '--index', self.tmp / 'i.json', '--json',
                                   '--top-k', '5').stdout)['results']
        self.assertEqual(sorted(hit['path'] for hit in found), sorted(hostile))
        self.assertEqual(sorted(tag for hit in found for tag in hit['tags']), ['todo', 'todo'])
        tags = json.loads(run_cli('tags', '--index', self.tmp / 'i.json', '--json').stdout)
        self.assertEqual(tags, {'tags': [{'tag': 'todo', 'notes': 2}, {'tag': 'yes', 'notes': 1}]})
        self.assertEqual(ns.atx_heading('## Title ##'), (2, 'Title'))
        self.assertEqual(ns.atx_heading('# C#'), (1, 'C#'))

    def test_a_root_that_cannot_be_listed_is_refused_and_its_index_kept(self):
        notes = self.tmp / 'notes'
        notes.mkdir()
        (notes / 'a.md').write_text('# kept\n\nkept words\n', encoding='utf-8')
        self.assertEqual(run_cli('index', 'notes', '--out', 'index.json', cwd=self.tmp)
                         .returncode, 0)
        before = (self.tmp / 'index.json').read_bytes()
        os.chmod(self.tmp / 'index.json', 0o666)
        os.chmod(notes, 0)
        self.addCleanup(os.chmod, notes, 0o755)
        os.chmod(self.tmp, 0o777)
        run = run_cli('index', str(notes), '--out', 'index.json', cwd=self.tmp, as_nobody=True)
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertEqual(run.stderr, f'notes_search.py: error: cannot list root folder '
                                     f'{notes}: Permission denied\n')
        self.assertEqual((self.tmp / 'index.json').read_bytes(), before)

    def test_skips_come_in_listing_order_and_a_rerun_rewrites_nothing(self):
        notes = self.tmp / 'notes'
        (notes / 'sub').mkdir(parents=True)
        bad = ['a.md', 'b.md', 'c.md', 'sub/a.md', 'sub/m.md', 'z.md']   # in path order
        for relative in bad:
            (notes / relative).write_bytes(b'\xff\n')
        (notes / 'good.md').write_text('fine words\n', encoding='utf-8')
        index, first = self.tmp / 'index.json', None
        for run_number in range(2):
            run = run_cli('index', 'notes', cwd=self.tmp)
            self.assertEqual(run.stdout, f'갱신 파일: {1 - run_number}, 제거 파일: 0\n')
            self.assertEqual([line.split(':')[0] for line in run.stderr.splitlines()],
                             bad + ['skipped 6 file(s)'])
            written = index.stat()
            if run_number:   # nothing changed: the index is not written again
                self.assertEqual((written.st_ino, written.st_mtime_ns), first)
            first = (written.st_ino, written.st_mtime_ns)

    def test_hidden_notes_with_hidden_option(self):
        self.build_tree()
        run = run_cli('index', 'notes', '--hidden', '--max-file-size', 64 * 1024 * 1024,
                      cwd=self.tmp, as_nobody=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        paths = json.loads((self.tmp / 'index.json').read_text(encoding='utf-8'))['files']
        self.assertIn('.dot.md', paths)
        self.assertIn('.obsidian/x.md', paths)
        self.assertNotIn('.git/x.md', paths)
        self.assertNotIn('big.md:0', run.stderr)
        os.utime(self.tmp / 'notes' / '.dot.md', (time.time() - 3600,) * 2)
        run_cli('index', 'notes', '--hidden', '--max-file-size', 64 * 1024 * 1024,
                cwd=self.tmp, as_nobody=False)      # old: size and mtime alone say unchanged
        lowered = run_cli('index', 'notes', '--hidden', '--max-file-size', 5,     # unchanged
                          cwd=self.tmp, as_nobody=False)
        self.assertIn('.dot.md:0: skipped: larger than --max-file-size', lowered.stderr)
        paths = json.loads((self.tmp / 'index.json').read_text(encoding='utf-8'))['files']
        self.assertNotIn('.dot.md', paths)

    def test_api_keeps_raising_like_the_tutorial(self):
        notes = self.tmp / 'notes'
        notes.mkdir()
        (notes / 'invalid.md').write_bytes(b'\xff\n')
        with self.assertRaises(UnicodeDecodeError):
            ns.build_index(notes, self.tmp / 'index.json')
        (notes / 'invalid.md').write_text('# T\nbody\ntags: x\n', encoding='utf-8')
        with self.assertRaises(ValueError):
            ns.build_index(notes, self.tmp / 'index.json')

    def test_note_vanishing_between_listing_and_reading(self):
        notes = self.tmp / 'notes'
        notes.mkdir()
        (notes / 'gone.md').write_text('bye\n', encoding='utf-8')
        (notes / 'kept.md').write_text('kept words\n', encoding='utf-8')
        real_list = ns.list_tree

        def list_then_delete(*args):
            listed = real_list(*args)
            (notes / 'gone.md').unlink()
            return listed

        stderr = io.StringIO()
        with mock.patch.object(ns, 'list_tree', list_then_delete), \
                contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = ns.main(['index', str(notes), '--out', str(self.tmp / 'index.json')])
        self.assertEqual(status, 0)
        self.assertEqual(stderr.getvalue(),
                         'gone.md:0: skipped: vanished while indexing\nskipped 1 file(s)\n')
        self.assertEqual(len(ns.search(self.tmp / 'index.json', 'kept')), 1)

    def test_reading_a_note_deleted_since_indexing_says_so(self):
        notes = self.tmp / 'notes'
        notes.mkdir()
        (notes / 'gone.md').write_text('bye\n', encoding='utf-8')
        ns.build_index(notes, self.tmp / 'index.json')
        (notes / 'gone.md').unlink()
        search_index = ns.open_index_file(str(self.tmp / 'index.json'))
        with self.assertRaisesRegex(LookupError, r'^cannot read gone\.md: no longer there '
                                                 r'\(deleted or moved\)$'):
            ns.read_lines(search_index, 'gone.md')
        for name in ('gone.md\0', '\ud800.md'):      # what the API may pass, as code's
            with self.assertRaisesRegex(LookupError, '^no file has such a name: '):
                ns.read_lines(search_index, name)

    def test_a_decomposed_hangul_name_is_read_as_typed(self):
        notes = self.tmp / 'notes'                  # as macOS writes it; /api/read's path
        notes.mkdir()                               # is typed composed
        (notes / unicodedata.normalize('NFD', '회의록.md')).write_text('# 회의\n\n예산\n',
                                                                     encoding='utf-8')
        ns.build_index(notes, self.tmp / 'index.json')
        search_index = ns.open_index_file(str(self.tmp / 'index.json'))
        read = ns.read_lines(search_index, unicodedata.normalize('NFC', '회의록.md'))
        self.assertEqual((read['path'], read['text']),
                         (unicodedata.normalize('NFD', '회의록.md'), '# 회의\n\n예산'))

    def test_index_file_inside_the_root_is_not_indexed(self):
        notes = self.tmp / 'notes'
        notes.mkdir()
        (notes / 'a.md').write_text('words\n', encoding='utf-8')
        self.assertEqual(ns.build_index(notes, notes / 'index.md'), (1, 0))
        self.assertEqual(ns.build_index(notes, notes / 'index.md'), (0, 0))
        document = json.loads((notes / 'index.md').read_text(encoding='utf-8'))
        self.assertEqual(list(document['files']), ['a.md'])

    def test_twenty_thousand_small_notes_with_progress_on_a_terminal(self):
        notes = self.tmp / 'notes'
        for number in range(20000):
            folder = notes / f'd{number % 100}'
            if number < 100:
                folder.mkdir(parents=True)
            (folder / f'n{number}.md').write_text(f'# N{number}\n\nnote {number} body\n',
                                                  encoding='utf-8')
        run, shown = support.run_on_terminal([sys.executable, str(TOOL), 'index', 'notes'],
                                             cwd=self.tmp)
        self.assertEqual(run.returncode, 0)
        self.assertEqual(run.stdout.decode('utf-8'), '갱신 파일: 20000, 제거 파일: 0\n')
        self.assertIn(b'indexing ', shown)
        self.assertIn(b'/20000 files (', shown)
        quiet = run_cli('index', 'notes', cwd=self.tmp)
        self.assertEqual((quiet.stdout, quiet.stderr), ('갱신 파일: 0, 제거 파일: 0\n', ''))
        hits = json.loads(run_cli('search', '19999', '--json', cwd=self.tmp).stdout)['results']
        self.assertEqual([hit['path'] for hit in hits], ['d99/n19999.md'])


class MisuseTests(TempDirCase):
    def setUp(self):
        super().setUp()
        self.index = valid_index(self.tmp)

    def test_bad_roots_write_nothing(self):
        (self.tmp / 'file.md').write_text('x\n', encoding='utf-8')
        before = sorted(os.listdir(self.tmp))
        for root in ('missing', 'file.md'):
            with self.subTest(root=root):
                run = run_cli('index', root, '--out', 'new.json', cwd=self.tmp)
                self.assert_one_error_line(run, contains='root folder')
        self.assertEqual(sorted(os.listdir(self.tmp)), before)

    def test_a_second_index_is_misuse_not_the_one_searched(self):
        for command in (['search', 'x'], ['tags'], ['serve']):
            with self.subTest(command=command[0]):
                run = run_cli(*command, '--index', 'index.json', '--index', 'other.json',
                              cwd=self.tmp)
                self.assert_one_error_line(run, contains='--index names one index')

    def test_bad_numbers(self):
        for value in ('0', '-1', 'abc', '1.5', '', ' 5', '1_0', '５'):
            with self.subTest(value=value):
                run = run_cli('search', 'cache', '--top-k', value, cwd=self.tmp)
                self.assert_one_error_line(run, contains='--top-k')
        run = run_cli('index', 'notes', '--max-file-size', '0', cwd=self.tmp)
        self.assert_one_error_line(run, contains='--max-file-size')

    def test_bad_index_paths(self):
        (self.tmp / 'folder').mkdir()
        cases = [(('search', 'x', '--index', 'missing.json'), 'index file not found'),
                 (('search', 'x', '--index', 'folder'), 'is a directory'),
                 (('search', 'x', '--index', 'nowhere/i.json'), 'index file not found'),
                 (('tags', '--index', 'missing.json'), 'index file not found'),
                 (('search', 'x', '--index', ''), 'index path is empty'),
                 (('index', 'notes', '--out', 'folder'), 'is a directory'),
                 (('index', 'notes', '--out', 'nowhere/i.json'), 'does not exist')]
        for args, message in cases:
            with self.subTest(args=args):
                self.assert_one_error_line(run_cli(*args, cwd=self.tmp), contains=message)
        self.assertFalse((self.tmp / 'nowhere').exists())

    @unittest.skipUnless(hasattr(os, 'mkfifo'), 'POSIX only')
    def test_a_fifo_or_a_device_is_never_an_index_nor_replaced_by_one(self):
        os.mkfifo(self.tmp / 'fifo.json')           # no writer: opening it would block
        self.assert_one_error_line(run_cli('index', 'notes', '--out', 'fifo.json',
                                           cwd=self.tmp), contains='not a regular file')
        refused = run_cli('search', 'x', '--index', 'fifo.json', cwd=self.tmp)
        self.assert_one_error_line(refused, contains='fifo.json')
        self.assertNotIn('rebuild it', refused.stderr)      # index refuses to write a FIFO
        self.assertTrue(stat.S_ISFIFO(os.stat(self.tmp / 'fifo.json').st_mode))
        if hasattr(os, 'geteuid') and os.geteuid() == 0:    # a device node of our own
            os.mknod(self.tmp / 'null', 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            self.assert_one_error_line(run_cli('index', 'notes', '--out', 'null', cwd=self.tmp),
                                       contains='not a regular file')
            self.assertTrue(stat.S_ISCHR(os.stat(self.tmp / 'null').st_mode))

    def test_odd_questions(self):
        questions = ['the of and', '.*[(?+\\', '캐시' * (ns.QUESTION_LIMIT // 2),
                     ' '.join(f'w{n}' for n in range(700)), '\x01\u2028\ufeff']
        for question in questions:
            with self.subTest(question=question[:20]):
                run = run_cli('search', question, '--json', cwd=self.tmp)
                self.assertEqual((run.returncode, run.stderr), (0, ''))
                json.loads(run.stdout)
        long = run_cli('search', 'cache ' + 'zz ' * 1300, cwd=self.tmp)
        self.assertTrue(long.stdout.startswith('[a.md:L3] 캐시'), long.stdout)
        for question, why in (('', 'empty'), ('   ', 'empty'),     # as code_search, MCP
                              ('캐시' * 2049, 'longer than 4096 characters')):  # and the API
            with self.subTest(question=question[:20]):
                self.assert_one_error_line(run_cli('search', question, cwd=self.tmp),
                                           contains=f'argument question: {why}')

    def test_output_to_a_reader_that_went_away(self):   # `notes_search.py search x | head -1`
        reader, writer = os.pipe()
        os.close(reader)
        self.addCleanup(os.close, writer)
        for command in (['search', 'cache', '--json'], ['search', 'cache'], ['tags']):
            with self.subTest(command=command):
                run = subprocess.run([sys.executable, str(TOOL), *command], cwd=self.tmp,
                                     stdout=writer, stderr=subprocess.PIPE, timeout=60)
                self.assertEqual((run.returncode, run.stderr), (0, b''))


class ExitStatusTests(TempDirCase):
    def test_unwritable_destination_exits_1(self):
        notes = self.tmp / 'notes'
        notes.mkdir()
        (notes / 'a.md').write_text('x\n', encoding='utf-8')
        locked = self.tmp / 'locked'
        locked.mkdir(mode=0o555)
        os.chmod(locked, 0o555)
        if not IS_ROOT and os.access(locked, os.W_OK):
            self.skipTest('this user can write a 0555 folder')
        run = run_cli('index', 'notes', '--out', 'locked/index.json', cwd=self.tmp,
                      as_nobody=True)
        self.assert_one_error_line(run, status=1, contains='cannot write index')
        self.assertEqual(os.listdir(locked), [])

    @unittest.skipUnless(ns.fcntl, 'fcntl lock needs POSIX')
    def test_lock_timeout_exits_1(self):
        valid_index(self.tmp)
        index = self.tmp / 'index.json'
        held = os.open(self.tmp, os.O_RDONLY)   # the lock is on the index's folder
        self.addCleanup(os.close, held)
        ns.fcntl.flock(held, ns.fcntl.LOCK_EX)
        stderr = io.StringIO()
        with mock.patch.object(ns, 'LOCK_TIMEOUT_SECONDS', 0.3), \
                contextlib.redirect_stderr(stderr):
            status = ns.main(['index', str(self.tmp / 'notes'), '--out', str(index)])
        self.assertEqual(status, 1)
        self.assertEqual(len(stderr.getvalue().splitlines()), 1)
        self.assertIn('another index run holds', stderr.getvalue())

    def test_leftover_temp_files_are_recovered(self):
        valid_index(self.tmp)
        dead = subprocess.run([sys.executable, '-c', 'import os; print(os.getpid())'],
                              capture_output=True, text=True).stdout.strip()
        for pid in (dead, os.getpid()):   # temp files are made only under the lock: all dead
            (self.tmp / f'.index.json.{pid}.0badc0de.tmp').write_text('{"partial": ')
        (self.tmp / 'notes' / 'c.md').write_text('third\n', encoding='utf-8')
        run = run_cli('index', 'notes', cwd=self.tmp)
        self.assertEqual((run.returncode, run.stdout), (0, '갱신 파일: 1, 제거 파일: 0\n'))
        self.assertEqual(sorted(os.listdir(self.tmp)), ['index.json', 'notes'])

    def test_lock_without_fcntl_removes_a_dead_holders_lock(self):
        index = valid_index(self.tmp)
        lock = Path(str(index) + '.lock')
        lock.write_text('999999999\n')
        code = ('import sys; sys.modules["fcntl"] = None; sys.path.insert(0, sys.argv[1]);'
                'import notes_search; assert notes_search.fcntl is None;'
                'sys.exit(notes_search.main(sys.argv[2:]))')
        run = subprocess.run([sys.executable, '-c', code, str(ROOT), 'index', 'notes'],
                             cwd=self.tmp, capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertFalse(lock.exists())

    def test_mode_of_a_replaced_index_is_kept(self):
        index = valid_index(self.tmp)
        self.assertEqual(stat.S_IMODE(index.stat().st_mode), 0o600)
        os.chmod(index, 0o640)
        (self.tmp / 'notes' / 'c.md').write_text('third\n', encoding='utf-8')
        ns.build_index(self.tmp / 'notes', index)
        self.assertEqual(stat.S_IMODE(index.stat().st_mode), 0o640)


class CorruptIndexTests(TempDirCase):
    def variants(self, document):
        """{name: bytes} of damaged index files of this tool: a search refuses each with
        one line, and `index` rebuilds each with one warning."""
        def changed(edit):
            copy = json.loads(json.dumps(document))
            edit(copy)
            return json.dumps(copy).encode('utf-8')

        def record(key, value):
            return changed(lambda d: d['files']['a.md'].update({key: value}))

        text = json.dumps(document).encode('utf-8')
        return {
            'truncated': text[:len(text) // 2],
            'format': changed(lambda d: d.update(format_version=99)),
            'format 4': changed(lambda d: d.update(format_version=4)),
            'files not dict': changed(lambda d: d.update(files=[])),
            'record not dict': changed(lambda d: d['files'].update({'a.md': 3})),
            'count wrong': record('count', 7),
            'words not int': record('words', '3'),
            'lengths not numbers': record('lengths', 'x y'),
            'lengths short': record('lengths', ''),
            'tags not list': record('tags', 3),
            'size missing': changed(lambda d: d['files']['a.md'].pop('size')),
            'mtime not int': record('mtime_ns', 1.5),
            'sha256 missing': changed(lambda d: d['files']['a.md'].pop('sha256')),
            'fid twice': changed(lambda d: d['files']['b.md'].update(
                fid=d['files']['a.md']['fid'])),
            'texts not list': changed(lambda d: d.update(texts='x')),
            'texts not strings': changed(lambda d: d.update(texts=[1] * ns.TEXT_BUCKETS)),
            'texts too few': changed(lambda d: d.update(texts=[''])),
            'postings not list': changed(lambda d: d.update(postings='x')),
            'postings garbage': changed(lambda d: d.update(
                postings=['|cache=x;y|'] * ns.POSTING_BUCKETS)),
            'checksum missing': changed(lambda d: d.pop('checksum')),
            'root moved by hand': changed(lambda d: d.update(root=str(self.tmp))),
            'bool as int': changed(lambda d: d.update(next_fid=True)),
            'skipped not records': changed(lambda d: d.update(skipped=[1, 2])),
            'skipped without reason': changed(lambda d: d.update(
                skipped=[{'path': 'x.md', 'line': 0}])),
        }

    def test_search_refuses_and_index_rebuilds(self):
        index = valid_index(self.tmp)
        document = json.loads(index.read_text(encoding='utf-8'))
        for name, data in self.variants(document).items():
            with self.subTest(name=name):
                index.write_bytes(data)
                searched = run_cli('search', 'cache', cwd=self.tmp)
                if searched.returncode == 0:   # damage a search does not notice
                    self.assertIn(name, ('count wrong', 'fid twice', 'tags not list'))
                else:
                    self.assert_one_error_line(searched)
                rebuilt = run_cli('index', 'notes', cwd=self.tmp)
                self.assertEqual(rebuilt.returncode, 0, rebuilt.stderr)
                self.assertEqual(rebuilt.stdout, '갱신 파일: 2, 제거 파일: 0\n')
                warning = rebuilt.stderr.splitlines()
                self.assertEqual(len(warning), 1, rebuilt.stderr)
                self.assertIn('rebuilding it', warning[0])
                found = run_cli('search', 'cache', cwd=self.tmp)
                self.assertTrue(found.stdout.startswith('[a.md:L3]'), found.stdout)

    def test_files_that_are_not_this_tools_index_are_never_overwritten(self):
        index = valid_index(self.tmp)
        for name, data in {'not json': b'hello', 'array': b'[1, 2]',
                           'no tool': b'{"version": 1, "files": {}}',
                           'code index': json.dumps({'tool': 'code_search'}).encode(),
                           'invalid utf-8': b'\xff\xfe{}'}.items():
            with self.subTest(name=name):
                index.write_bytes(data)
                searched = run_cli('search', 'cache', cwd=self.tmp)
                self.assert_one_error_line(searched)
                if name in ('not json', 'invalid utf-8'):   # no advice index would refuse
                    self.assertIn('index will not overwrite it', searched.stderr)
                self.assert_one_error_line(run_cli('tags', cwd=self.tmp))
                refused = run_cli('index', 'notes', cwd=self.tmp)
                self.assert_one_error_line(refused, contains='refusing to overwrite it')
                self.assertEqual(index.read_bytes(), data)
        index.write_bytes(b'')   # an empty file holds nothing to lose
        self.assertEqual(run_cli('index', 'notes', cwd=self.tmp).stdout,
                         '갱신 파일: 2, 제거 파일: 0\n')

    def test_postings_naming_missing_chunks_are_refused_on_search(self):
        index = valid_index(self.tmp)
        document = json.loads(index.read_text(encoding='utf-8'))
        fid = document['files']['a.md']['fid']
        for posting in (f'{fid}.9', '999.0', f'{fid}.0-9', 'x.y', f'{fid}'):
            with self.subTest(posting=posting):
                postings = ns.unpack_postings(document['postings'])
                postings['cache'] = posting
                index.write_text(json.dumps(dict(document, postings=ns.pack_postings(postings))),
                                 encoding='utf-8')
                self.assert_one_error_line(run_cli('search', 'cache', cwd=self.tmp),
                                           contains='damaged')

    def test_index_read_from_a_pipe_and_not_from_a_device(self):
        index = valid_index(self.tmp)
        with open(index, 'rb') as data:
            piped = subprocess.run([sys.executable, str(TOOL), 'search', 'cache', '--index',
                                    '/dev/stdin'], stdin=data, capture_output=True, timeout=60)
        self.assertEqual(piped.returncode, 0, piped.stderr)
        self.assertTrue(piped.stdout.startswith(b'[a.md:L3]'), piped.stdout)
        if os.path.exists('/dev/zero'):
            self.assert_one_error_line(run_cli('tags', '--index', '/dev/zero'),
                                       contains='not a regular file')

    def test_replacing_an_index_that_a_reader_holds_is_retried_on_windows(self):
        index = valid_index(self.tmp)
        replace, calls = os.replace, []

        def busy_twice(source, destination):
            calls.append(destination)
            if len(calls) <= 2:
                raise PermissionError(13, 'in use')
            return replace(source, destination)

        (self.tmp / 'notes' / 'c.md').write_text('# new\n\ncache again\n')
        with mock.patch.object(ns.os, 'name', 'nt'), \
                mock.patch.object(ns.os, 'replace', busy_twice):
            ns.build_index(self.tmp / 'notes', index)
        self.assertEqual(len(calls), 3)
        self.assertIn('c.md', ns.load_index(str(index))['files'])
        (self.tmp / 'notes' / 'c.md').write_text('# newer\n\ncache once more\n')
        with mock.patch.object(ns.os, 'replace', busy_twice):
            calls.clear()
            with self.assertRaises(ns.IndexProblem):
                ns.build_index(self.tmp / 'notes', index)
        self.assertEqual(len(calls), 1)
        self.assertEqual(sorted(os.listdir(self.tmp)), ['index.json', 'notes'])
        texts = [hit['text'] for hit in ns.search(index, 'cache', limit=5)]   # the index before
        self.assertIn('cache again', texts)
        self.assertNotIn('cache once more', texts)

    def test_one_changed_byte_is_noticed_by_index(self):
        index = valid_index(self.tmp)
        data = index.read_bytes()
        at = data.index(b'|cache=') + len(b'|cache=')   # a file id: still valid JSON
        index.write_bytes(data[:at] + (b'1' if data[at:at + 1] != b'1' else b'2') + data[at + 1:])
        rebuilt = run_cli('index', 'notes', cwd=self.tmp)
        self.assertEqual(rebuilt.returncode, 0, rebuilt.stderr)
        self.assertEqual(rebuilt.stdout, '갱신 파일: 2, 제거 파일: 0\n')
        self.assertIn('checksum', rebuilt.stderr)
        self.assertIn('rebuilding it', rebuilt.stderr)
        unchanged = run_cli('index', 'notes', cwd=self.tmp)
        self.assertEqual((unchanged.stdout, unchanged.stderr), ('갱신 파일: 0, 제거 파일: 0\n', ''))

    def test_damaged_stored_texts_are_refused_on_search_and_rebuilt(self):
        index = valid_index(self.tmp)
        document = json.loads(index.read_text(encoding='utf-8'))
        bucket = ns.text_bucket('a.md')
        whole = ns.pack_texts({'a.md': '# 캐시\n\ncache invalidation notes\n'})
        for text in ('!not base64!', '', ns.pack_texts({'other.md': 'x\n'}),
                     whole[:len(whole) // 2], 'eJwDAAAAAAE='):
            with self.subTest(text=text):
                texts = list(document['texts'])
                texts[bucket] = text
                index.write_text(json.dumps(dict(document, texts=texts)), encoding='utf-8')
                self.assert_one_error_line(run_cli('search', 'cache', cwd=self.tmp),
                                           contains='damaged')
                (self.tmp / 'notes' / 'b.md').write_text(f'# other\n\n{text}\n')
                rebuilt = run_cli('index', 'notes', cwd=self.tmp)
                self.assertEqual(rebuilt.returncode, 0, rebuilt.stderr)
                self.assertEqual(rebuilt.stdout, '갱신 파일: 2, 제거 파일: 0\n')
                self.assertIn('rebuilding it', rebuilt.stderr)
                self.assertNotIn('rebuild it with', rebuilt.stderr)     # it is rebuilding it
                found = run_cli('search', 'cache', cwd=self.tmp)
                self.assertTrue(found.stdout.startswith('[a.md:L3]'), found.stdout)


if __name__ == '__main__':
    unittest.main()

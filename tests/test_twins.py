"""What the two tools share, tried on both: index files that never collide, nothing
left beside an index, --path globs, stale hits, the command line, and real Ctrl-C and
SIGTERM at several moments of `index` with worker processes running."""
import contextlib
import functools
import hashlib
import inspect
import io
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from tests import support
from tests.support import CODE_TOOL, NOTES_TOOL, ROOT, TempDirCase, write

import code_search  # noqa: E402
import notes_search  # noqa: E402

TOOLS = {'code': (CODE_TOOL, code_search), 'notes': (NOTES_TOOL, notes_search)}


def make_trees(base, code_files=8, notes=8):
    """A code tree base/code and a notes tree base/notes, each file findable by a word."""
    for number in range(code_files):
        write(base / 'code' / f'pkg{number % 3}' / f'mod{number}.py',
              ''.join(f'def function_{number}_{n}(value):\n    """Word{number} does {n}."""\n'
                      f'    return value + {n}\n\n\n' for n in range(20)))
    for number in range(notes):
        write(base / 'notes' / f'd{number % 3}' / f'n{number}.md',
              f'# Note {number}\n\nword{number} paragraph one\n\nword{number} paragraph two\n')


def run(tool, *args, cwd=None, **kwargs):
    return support.run_cli(TOOLS[tool][0], *args, cwd=cwd, **kwargs)


class WorkerTests(unittest.TestCase):
    def test_work_no_worker_could_be_sent_is_done_here_without_a_pool(self):
        # Python 3.9's process pool can hang on work it cannot pickle, so none is made.
        from unittest import mock
        jobs = [[1, 2], [3], [4, 5]]
        for name, (_, tool) in TOOLS.items():
            with mock.patch('concurrent.futures.ProcessPoolExecutor',
                            side_effect=AssertionError('a pool was made')):
                results = list(tool.run_jobs(lambda job: sum(job), jobs, 2, None))
            self.assertEqual(results, [3, 3, 9], name)


class CollisionTests(TempDirCase):
    def test_the_readme_commands_one_after_the_other_in_one_folder(self):
        shutil.copytree(ROOT / 'demo', self.tmp / 'demo')
        shutil.copytree(ROOT / 'notes', self.tmp / 'notes')
        for _ in range(2):
            self.assertEqual(run('code', 'index', 'demo', cwd=self.tmp).returncode, 0)
            self.assertEqual(run('notes', 'index', 'notes', cwd=self.tmp).returncode, 0)
        self.assertEqual(sorted(os.listdir(self.tmp)),
                         ['code_index.json', 'demo', 'index.json', 'notes'])
        code = run('code', 'search', 'invoice total tax', cwd=self.tmp)
        self.assertTrue(code.stdout.startswith('[code-2] shop.py:10-12 Invoice.total_with_tax'))
        notes = run('notes', 'search', '캐시', '--tag', 'rag', cwd=self.tmp)
        self.assertTrue(notes.stdout.startswith('[cache.md:L5] 캐시 무효화 (L5–L6)'))

    def test_indexes_inside_the_root_are_not_indexed_as_code(self):
        shutil.copytree(ROOT / 'demo', self.tmp / 'both')
        shutil.copytree(ROOT / 'notes', self.tmp / 'both', dirs_exist_ok=True)
        for tool in ('notes', 'code', 'code'):         # the second code run sees the first's
            self.assertEqual(run(tool, 'index', '.', cwd=self.tmp / 'both').returncode, 0)
        shutil.copy(self.tmp / 'both' / 'code_index.json', self.tmp / 'both' / 'old.json')
        self.assertEqual(run('code', 'index', '.', cwd=self.tmp / 'both').returncode, 0)
        listing = run('code', 'ls', '--all', cwd=self.tmp / 'both').stdout
        for name, owner in (('index.json', 'notes_search'), ('old.json', 'code_search')):
            self.assertRegex(listing, rf'(?m)^{name} +\[a {owner} index file\]$')
        found = json.loads(run('code', 'search', 'total with tax', '--json', '--top-k', '20',
                               cwd=self.tmp / 'both').stdout)['results']
        self.assertEqual({hit['path'] for hit in found}, {'shop.py'})

    def test_an_index_of_another_tokenizer_is_refused_not_misread(self):
        make_trees(self.tmp, code_files=1, notes=1)
        for tool, (path, _) in TOOLS.items():
            index = self.tmp / f'{tool}.json'
            self.assertEqual(run(tool, 'index', self.tmp / tool, '--out', index).returncode, 0)
            document = json.loads(index.read_text(encoding='utf-8'))
            document['tokenizer_version'] -= 1                # as an older release wrote it
            index.write_text(json.dumps(document), encoding='utf-8')
            result = run(tool, 'search', 'word0', '--index', index)
            self.assertEqual((result.returncode, result.stdout), (2, ''))
            self.assertIn('was made by another version of', result.stderr)
            self.assertIn(f" index {self.tmp / tool} --out {index}", result.stderr)  # its root

    def test_neither_tool_overwrites_the_others_index(self):
        make_trees(self.tmp)
        self.assertEqual(run('code', 'index', 'code', '--out', 'c.json', cwd=self.tmp).returncode, 0)
        self.assertEqual(run('notes', 'index', 'notes', '--out', 'n.json', cwd=self.tmp).returncode, 0)
        for tool, root, target, owner in (('code', 'code', 'n.json', 'notes_search'),
                                          ('notes', 'notes', 'c.json', 'code_search')):
            with self.subTest(tool=tool):
                before = (self.tmp / target).read_bytes()
                result = run(tool, 'index', root, '--out', target, cwd=self.tmp)
                self.assertEqual(result.returncode, 2)
                self.assertEqual(result.stderr.count('\n'), 1, result.stderr)
                self.assertIn(f'holds a {owner} index; refusing to overwrite it', result.stderr)
                self.assertEqual((self.tmp / target).read_bytes(), before)
                searched = run(tool, 'search', 'word1', '--index', target, cwd=self.tmp)
                self.assertEqual(searched.returncode, 2)
                self.assertIn(f'made by {owner}.py', searched.stderr)


    def test_an_index_of_another_folder_is_replaced_with_a_warning(self):
        make_trees(self.tmp / 'a', code_files=2, notes=2)
        make_trees(self.tmp / 'b', code_files=3, notes=3)
        for tool in TOOLS:
            with self.subTest(tool=tool):
                first = run(tool, 'index', self.tmp / 'a' / tool, '--out', f'{tool}.json',
                            cwd=self.tmp)
                self.assertEqual((first.returncode, first.stderr), (0, ''))
                moved = run(tool, 'index', self.tmp / 'b' / tool, '--out', f'{tool}.json',
                            cwd=self.tmp)
                self.assertEqual(moved.returncode, 0, moved.stderr)
                self.assertTrue(moved.stdout.startswith('갱신 파일: 3, 제거 파일: 2'),
                                moved.stdout)
                self.assertEqual(moved.stderr.splitlines(), [
                    f"{TOOLS[tool][1].__name__}.py: warning: {tool}.json held the index of "
                    f"{(self.tmp / 'a' / tool).resolve()}; it now holds "
                    f"{(self.tmp / 'b' / tool).resolve()}"])


    def test_a_change_that_puts_the_mtime_back_is_still_read(self):
        files = {'code': ('m.py', 'def alphaword():\n    return 1\n', 'alphaword', 'gammaword'),
                 'notes': ('m.md', '# M\n\nalphaword here\n', 'alphaword', 'gammaword')}
        for tool, (name, text, old, new) in files.items():
            with self.subTest(tool=tool):
                path = self.tmp / tool / name
                write(path, text)
                os.utime(path, ns=(10 ** 18, 10 ** 18))          # long before any run
                index = self.tmp / f'{tool}.json'
                self.assertEqual(run(tool, 'index', path.parent, '--out', index).returncode, 0)
                write(path, text.replace(old, new))             # same size
                os.utime(path, ns=(10 ** 18, 10 ** 18))          # and the same mtime again
                result = run(tool, 'index', path.parent, '--out', index)
                self.assertTrue(result.stdout.startswith('갱신 파일: 1, '), result.stdout)
                found = json.loads(run(tool, 'search', new, '--index', index, '--json').stdout)
                self.assertEqual([hit['path'] for hit in found['results']][:1], [name])

    def test_a_file_changed_in_the_previous_runs_clock_tick_is_hashed_again(self):
        # On a file system of whole seconds, an edit in the tick of the previous run that
        # puts the mtime back (cp -p, touch -r) moves neither size, mtime nor ctime: the
        # stat alone decides only for a file changed well before that run.
        for tool, module in (('code', code_search), ('notes', notes_search)):
            with self.subTest(tool=tool):
                path = self.tmp / tool / 'm.md'
                write(path, '# M\n\nalphaword\n')
                os.utime(path, ns=(10 ** 18, 10 ** 18))
                info = os.lstat(path)
                record = dict(module.stat_fields(info),       # what the previous run read
                              sha256=hashlib.sha256(b'# M\n\ngammaword\n').hexdigest())
                self.assertIsNone(module.unchanged(str(path), record, 1 << 20,
                                                   info.st_ctime_ns))
                self.assertEqual(module.unchanged(str(path), record, 1 << 20,
                                                  info.st_ctime_ns + 1), 'same')


class LeftoverTests(TempDirCase):
    def test_nothing_but_the_index_is_left_after_a_run(self):
        make_trees(self.tmp / 'src', code_files=80, notes=1200)   # enough for worker processes
        for tool in TOOLS:
            out = self.tmp / tool
            out.mkdir()
            for step in ('cold', 'no change', 'one change'):
                if step == 'one change':
                    write(self.tmp / 'src' / tool / 'extra.md', 'x\n')
                    write(self.tmp / 'src' / tool / 'extra.py', 'def extra():\n    pass\n')
                result = run(tool, 'index', self.tmp / 'src' / tool, '--out', out / 'i.json')
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(os.listdir(out), ['i.json'], (tool, step))
                self.assertEqual(result.stderr, '', (tool, step))

    def test_only_the_tools_own_leftovers_go_and_a_long_index_name_is_written(self):
        make_trees(self.tmp / 'src', code_files=1, notes=1)
        for tool in TOOLS:
            out = self.tmp / tool
            out.mkdir()
            keep = [out / '.i.json.mybackup.tmp', out / '.i.json.tmp']   # the user's
            killed = out / '.i.json.4242.0badcafe.tmp'                       # a killed run's
            for path in keep + [killed]:
                path.write_text('mine\n')
            result = run(tool, 'index', self.tmp / 'src' / tool, '--out', out / 'i.json')
            self.assertEqual((result.returncode, result.stderr), (0, ''), tool)
            self.assertEqual(sorted(os.listdir(out)), sorted(['i.json'] + [p.name for p in keep]))
            self.assertEqual([p.read_text() for p in keep], ['mine\n'] * 2)
            long = 'i' * 240 + '.json'          # 245 bytes: a legal name, its temp's is not
            result = run(tool, 'index', self.tmp / 'src' / tool, '--out', out / long)
            self.assertEqual((result.returncode, result.stderr), (0, ''), tool)
            self.assertIn(long, os.listdir(out))
            self.assertEqual(len(os.listdir(out)), 4)

    @unittest.skipUnless(os.name == 'posix', 'flock on the folder is POSIX')
    def test_a_run_that_waits_for_the_lock_says_so_once_then_goes_on(self):
        make_trees(self.tmp / 'src', code_files=1, notes=1)
        for tool in TOOLS:
            out = self.tmp / tool
            out.mkdir()
            holder = subprocess.Popen(            # another run's lock, held for 4 seconds
                [sys.executable, '-c', 'import fcntl, os, sys, time\n'
                 'fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX)\n'
                 'print("held", flush=True); time.sleep(4)', str(out)],
                stdout=subprocess.PIPE, text=True)
            self.addCleanup(holder.wait)
            self.assertEqual(holder.stdout.readline(), 'held\n')
            result = run(tool, 'index', self.tmp / 'src' / tool, '--out', out / 'i.json')
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(result.stderr, f'{TOOLS[tool][0].name}: waiting for another index '
                                            f"run to finish with {out / 'i.json'} (at most 60 s)\n")
            holder.stdout.close()

    @unittest.skipUnless(hasattr(os, 'symlink') and os.name == 'posix', 'needs symlinks')
    def test_a_killed_runs_leftover_beside_a_linked_index_is_removed(self):
        make_trees(self.tmp / 'src', code_files=2, notes=2)
        for tool in TOOLS:
            target, links = self.tmp / tool / 'target', self.tmp / tool / 'links'
            target.mkdir(parents=True)
            links.mkdir()
            self.assertEqual(run(tool, 'index', self.tmp / 'src' / tool, '--out',
                                 target / 'i.json').returncode, 0)
            os.symlink(target / 'i.json', links / 'link.json')
            write(target / '.i.json.999999.deadbeef.tmp', '{"partial": ')
            result = run(tool, 'index', self.tmp / 'src' / tool, '--out', links / 'link.json')
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(os.listdir(target), ['i.json'], tool)
            self.assertEqual(os.listdir(links), ['link.json'], tool)

    def test_an_out_that_names_a_folder_or_nothing_is_misuse(self):
        make_trees(self.tmp / 'src', code_files=1, notes=1)
        for tool, (path, _) in TOOLS.items():
            for out, message in (('nodir/', 'index path names a folder, not a file: nodir/'),
                                 ('', 'index path is empty')):
                with self.subTest(tool=tool, out=out):
                    result = run(tool, 'index', self.tmp / 'src' / tool, '--out', out,
                                 cwd=self.tmp)
                    self.assertEqual((result.returncode, result.stderr),
                                     (2, f'{path.name}: error: {message}\n'))
                    self.assertEqual(sorted(os.listdir(self.tmp)), ['src'])

    def test_an_error_about_a_name_with_a_line_break_is_one_line(self):
        for tool, (path, _) in TOOLS.items():
            for args, message in ((['search', 'x', '--index', 'no\nindex.json'],
                                   'index file not found: no\\nindex.json'),
                                  (['search', 'x', '--index', 'no\u2028index.json'],
                                   'index file not found: no\\u2028index.json'),
                                  (['index', 'no\nroot', '--out', 'i.json'],
                                   'root folder does not exist: no\\nroot')):
                with self.subTest(tool=tool, command=args[0]):
                    result = run(tool, *args, cwd=self.tmp)
                    self.assertEqual(result.returncode, 2)
                    self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
                    self.assertIn(message, result.stderr)


class PathGlobTests(TempDirCase):
    """--path means one thing in both tools, and MCP's path_prefix agrees with it."""
    PATHS = ['src/a.py', 'src/sub/b.py', 'lib/src/c.py', 'pkg/d.py', 'pkg/sub/e.py', 'f.py',
             'srcx/g.py', 'docs/h.md']
    CASES = {'src': {'src/a.py', 'src/sub/b.py', 'lib/src/c.py'},
             'src/': {'src/a.py', 'src/sub/b.py', 'lib/src/c.py'},
             'src/**': {'src/a.py', 'src/sub/b.py', 'lib/src/c.py'},
             '/src': {'src/a.py', 'src/sub/b.py'},
             '*.py': set(PATHS) - {'docs/h.md'},
             'pkg/*.py': {'pkg/d.py'},
             'pkg/**/*.py': {'pkg/d.py', 'pkg/sub/e.py'},
             '!src': set(PATHS) - {'src/a.py', 'src/sub/b.py', 'lib/src/c.py'},
             'src,pkg': {'src/a.py', 'src/sub/b.py', 'lib/src/c.py', 'pkg/d.py',
                         'pkg/sub/e.py'},
             '*.py,!src/**': {'pkg/d.py', 'pkg/sub/e.py', 'f.py', 'srcx/g.py'},
             '/': set(PATHS), './': set(PATHS), '/**': set(PATHS), '!/': set(), '!': set(PATHS),
             '': set(PATHS), './src': {'src/a.py', 'src/sub/b.py'}, './/pkg/*.py': {'pkg/d.py'},
             '[c-f].py': {'lib/src/c.py', 'pkg/d.py', 'pkg/sub/e.py', 'f.py'},
             '[!a-e].*': {'f.py', 'srcx/g.py', 'docs/h.md'}, '[[:alpha:]]': set(), '[!]': set(),
             '[z-a].py': set(), '[!z-a].py': set(PATHS) - {'docs/h.md'},
             '*.[!p]*': {'docs/h.md'}}

    def test_both_tools_read_a_glob_alike(self):
        for glob, expected in self.CASES.items():
            for tool in TOOLS.values():
                accept = tool[1].path_filter([glob])
                self.assertEqual({path for path in self.PATHS if accept(path)}, expected,
                                 (tool[1].TOOL, glob))

    def test_search_mcp_and_the_warning_for_globs_that_match_nothing(self):
        for path in self.PATHS:
            write(self.tmp / 'root' / (path[:-3] + '.py' if path.endswith('.md') else path),
                  'def shared_marker():\n    pass\n')
            write(self.tmp / 'notes' / (path[:-3] + '.md'), '# shared\n\nshared marker\n')
        run('code', 'index', 'root', '--out', 'c.json', cwd=self.tmp)
        run('notes', 'index', 'notes', '--out', 'n.json', cwd=self.tmp)
        index = code_search.open_index_file(str(self.tmp / 'c.json'))
        for glob in ('src', 'pkg/*', '!src', 'src/**,pkg/d*'):
            with self.subTest(glob=glob):
                code = json.loads(run('code', 'search', 'shared_marker', '--index', 'c.json',
                                      '--path', glob, '--top-k', '20', '--json',
                                      cwd=self.tmp).stdout)
                notes = json.loads(run('notes', 'search', 'shared marker', '--index', 'n.json',
                                       '--path', glob, '--top-k', '20', '--json',
                                       cwd=self.tmp).stdout)
                _, mcp = code_search.mcp_call([code_search.Repo('root', index)], 'search_code', {
                    'query': 'shared_marker', 'top_k': 20, 'path_prefix': glob})
                found = [sorted(hit['path'][:-3] for hit in hits)
                         for hits in (code['results'], notes['results'], mcp['results'])]
                self.assertEqual(found[0], found[1])
                self.assertEqual(found[0], found[2])
        for tool, index_file, question in (('code', 'c.json', 'shared_marker'),
                                           ('notes', 'n.json', 'shared')):
            result = run(tool, 'search', question, '--index', index_file, '--path', 'nowhere/*',
                         '--path', 'src', cwd=self.tmp)
            self.assertEqual(result.returncode, 0)
            self.assertEqual(result.stderr.splitlines(),
                             [f"{TOOLS[tool][0].name}: warning: --path 'nowhere/*' matches no "
                              f"indexed {'file' if tool == 'code' else 'note'}"])
        text, _ = code_search.mcp_call([code_search.Repo('root', index)], 'search_code', {
            'query': 'shared_marker', 'path_prefix': 'nowhere/*,src'})
        self.assertTrue(text.endswith("\n[path_prefix 'nowhere/*' matches no indexed file]"), text)

    def test_globs_that_match_nothing_are_made_into_regexes_once(self):
        from unittest import mock
        relatives = [f'd{number}/n{number}.md' for number in range(500)]
        for tool in TOOLS.values():
            made = []
            real = tool[1].glob_regex
            with mock.patch.object(tool[1], 'glob_regex',
                                   lambda glob: made.append(glob) or real(glob)):
                unmatched = tool[1].unmatched_globs(relatives, ['nowhere/*,d1', '!x', 'n7*'])
            self.assertEqual(unmatched, ['nowhere/*'], tool[1].TOOL)
            self.assertEqual(made, ['nowhere/*', 'd1', 'n7*'], tool[1].TOOL)

    def test_a_path_filter_limits_the_hits_not_their_scores(self):
        for number in range(6):
            folder = 'src' if number < 2 else 'lib'
            words = 'parse token' if number == 0 else 'parse'
            write(self.tmp / 'root' / folder / f'm{number}.py',
                  f'def run_{number}():\n    """{words} the input {number}."""\n')
            write(self.tmp / 'notes' / folder / f'm{number}.md', f'# {number}\n\n{words} it\n')
        run('code', 'index', 'root', '--out', 'c.json', cwd=self.tmp)
        run('notes', 'index', 'notes', '--out', 'n.json', cwd=self.tmp)
        for tool, index_file in (('code', 'c.json'), ('notes', 'n.json')):
            def scores(*globs):
                found = json.loads(run(tool, 'search', 'parse token', '--index', index_file,
                                       '--json', '--top-k', '10', *globs, cwd=self.tmp).stdout)
                return {hit['path']: hit['score'] for hit in found['results']}
            everywhere, in_src = scores(), scores('--path', 'src')
            suffix = '.py' if tool == 'code' else '.md'
            self.assertEqual(sorted(in_src), ['src/m0' + suffix, 'src/m1' + suffix])
            self.assertEqual(in_src, {path: everywhere[path] for path in in_src}, tool)


class HandlerTests(unittest.TestCase):
    """The HTTP request handler both servers use, on a real socket."""

    def open(self, url):
        """A response to GET url, never through a proxy."""
        import urllib.request
        return urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=30)

    def serve(self, tool, answer):
        """A server of tool's handler for answer, on a free port; stopped after the test."""
        import http.server
        import threading
        server = http.server.ThreadingHTTPServer(
            ('127.0.0.1', 0), tool.make_handler(answer, {'127.0.0.1'}))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return f'http://127.0.0.1:{server.server_address[1]}'

    def log_file(self):
        """A file for a server's log, removed after the test."""
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        return os.path.join(folder, 'log')

    def test_a_failing_answer_is_a_500_reply_not_a_dropped_connection(self):
        import urllib.error

        def broken(method, target, body):
            raise ValueError('a bug')
        for _, tool in TOOLS.values():
            with self.subTest(tool=tool.TOOL), contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(urllib.error.HTTPError) as failed:
                    self.open(self.serve(tool, broken) + '/api/search?q=x')
                self.assertEqual(failed.exception.code, 500)
                self.assertEqual(json.loads(failed.exception.read()),
                                 {'error': "internal error: ValueError('a bug')"})

    def test_a_url_of_raw_utf8_is_read_as_its_percent_encoding(self):
        import socket
        import urllib.parse
        targets = []

        def echo(method, target, body):
            targets.append(target)
            return 200, 'application/json', b'{}'
        for _, tool in TOOLS.values():
            with self.subTest(tool=tool.TOOL), contextlib.redirect_stderr(io.StringIO()):
                port = int(self.serve(tool, echo).rpartition(':')[2])
                for question in ('캐시', '안녕'):         # 녕 holds byte 0x85, a NEL to str.split
                    with socket.create_connection(('127.0.0.1', port), timeout=30) as client:
                        client.sendall(f'GET /api/search?q={question} HTTP/1.0\r\n'
                                       'Host: 127.0.0.1\r\n\r\n'
                                       .encode('utf-8'))
                        reply = client.makefile('rb').readline()
                    self.assertEqual(reply.split()[1], b'200', reply)
                    self.assertEqual(urllib.parse.parse_qs(targets.pop().partition('?')[2]),
                                     {'q': [question]})

    def test_one_log_line_per_request_from_many_threads(self):
        import concurrent.futures

        def fine(method, target, body):
            return 200, 'application/json', b'{}'
        switching = sys.getswitchinterval()
        self.addCleanup(sys.setswitchinterval, switching)
        sys.setswitchinterval(1e-6)             # threads take turns as often as they can
        for _, tool in TOOLS.values():
            with self.subTest(tool=tool.TOOL), open(self.log_file(), 'w+') as log, \
                    contextlib.redirect_stderr(log):
                url = self.serve(tool, fine) + '/api/health?n='
                with concurrent.futures.ThreadPoolExecutor(10) as pool:
                    list(pool.map(lambda n: self.open(url + str(n)).read(), range(400)))
                log.seek(0)
                lines = log.read().split('\n')
                self.assertEqual(lines.pop(), '')
                self.assertEqual(len(lines), 400)
                for line in lines:
                    self.assertRegex(line,
                                     r'^127\.0\.0\.1 "GET /api/health\?n=\d+ HTTP/1\.1" 200 -$')


class ComposedTextTests(TempDirCase):
    def test_decomposed_hangul_is_found_by_the_composed_words_and_paths_typed(self):
        import unicodedata
        nfd = functools.partial(unicodedata.normalize, 'NFD')     # as macOS names files
        write(self.tmp / 'notes' / nfd('회의록.md'), nfd('# 회의\n\n캐시를 정리\n'))
        write(self.tmp / 'code' / nfd('캐시.py'), nfd("def clean():\n    '캐시를 정리합니다.'\n"))
        for tool, glob in (('notes', '회의록.md'), ('code', '캐시.py')):
            with self.subTest(tool=tool):
                run(tool, 'index', tool, '--out', f'{tool}.json', cwd=self.tmp)
                found = json.loads(run(tool, 'search', '캐시 정리', '--index', f'{tool}.json',
                                       '--path', glob, '--json', cwd=self.tmp).stdout)
                self.assertEqual([hit['path'] for hit in found['results']], [nfd(glob)])
        for command in (('read', '캐시.py'), ('at', '캐시.py:2'), ('outline', '캐시.py'),
                        ('ls', '캐시.py'), ('read', '캐시.py', 'code')):  # as typed: composed
            with self.subTest(command=command):
                looked = run('code', *command, *(('--index', 'code.json')
                                                  if len(command) == 2 else ()), cwd=self.tmp)
                self.assertEqual(looked.returncode, 0, looked.stderr)
        trace = ('Traceback (most recent call last):\n'
                 f'  File "{self.tmp / "code" / "캐시.py"}", line 2, in clean\nValueError: x\n')
        traced = json.loads(run('code', 'trace', '-', '--index', 'code.json', '--json',
                                input=trace, cwd=self.tmp).stdout)
        self.assertEqual(traced['exceptions'][0]['frames'][0]['chunk']['symbol'], 'clean')

    def test_a_decomposed_tag_is_the_tag_typed(self):
        import unicodedata
        nfd = functools.partial(unicodedata.normalize, 'NFD')
        write(self.tmp / 'notes' / 'a.md', nfd('tags: 업무\n# 회의\n\n분기 회의\n'))
        write(self.tmp / 'notes' / 'b.md', '# 메모\n\n회의 준비 #업무\n')
        run('notes', 'index', 'notes', cwd=self.tmp)
        self.assertEqual(json.loads(run('notes', 'tags', '--json', cwd=self.tmp).stdout),
                         {'tags': [{'tag': '업무', 'notes': 2}]})
        for typed in ('업무', nfd('업무')):
            found = run('notes', 'search', '분기 회의', '--tag', typed, '--json', cwd=self.tmp)
            self.assertEqual(found.stderr, '')
            self.assertEqual([hit['path'] for hit in json.loads(found.stdout)['results']][:1],
                             ['a.md'])


class QuestionWordTwinTests(TempDirCase):
    def test_question_words_pick_nothing_and_alone_are_looked_for(self):
        self.assertEqual(code_search.KOREAN_QUESTION_WORDS, notes_search.KOREAN_QUESTION_WORDS)
        write(self.tmp / 'notes' / 'which.md', '# which\n\n어떻게 하면 되는지 방법 보기\n')
        write(self.tmp / 'notes' / 'zip.md', '# zip\n\n파일 압축\n')
        write(self.tmp / 'code' / 'tools.py', (
            'def which(name):\n    """어떻게 하면 되는지 방법 보기."""\n\n\n'
            'def pack(path):\n    """파일 압축."""\n'))
        for tool, which, pack in (('notes', 'which.md', 'zip.md'),
                                  ('code', 'which', 'pack')):
            with self.subTest(tool=tool):
                run(tool, 'index', tool, '--out', f'{tool}.json', cwd=self.tmp)
                for question, expected in (('which', which),
                                           ('파일을 어떻게 하면 압축하는 방법', pack)):
                    found = json.loads(run(tool, 'search', question, '--index', f'{tool}.json',
                                           '--json', cwd=self.tmp).stdout)['results']
                    key = 'path' if tool == 'notes' else 'symbol'
                    self.assertEqual(found[0][key], expected, question)


class OneTextTwinTests(TempDirCase):
    def test_what_both_files_write_out_is_one_text(self):
        for name in ('standard_spelling', 'request_failed', 'binary_reason', 'write_index',
                     'signals_deferred', 'interrupt_waits', 'say_at_once', 'warn', 'one_line',
                     'stat_changed', 'unchanged', 'unmatched_globs', 'make_handler',
                     'serve_http'):
            self.assertEqual(inspect.getsource(getattr(code_search, name)),
                             inspect.getsource(getattr(notes_search, name)), name)


class SpellingTwinTests(TempDirCase):
    def test_a_loanword_spelled_either_way_finds_the_same(self):
        self.assertEqual(code_search.KOREAN_SPELLINGS, notes_search.KOREAN_SPELLINGS)
        for tool in (code_search, notes_search):            # 초기화일 때: initialising, no file
            self.assertEqual(tool.standard_spelling('초기화일'), '초기화일')
        self.assertEqual(code_search.word_terms('디렉토리인지'),   # spelled, then its particle
                         code_search.word_terms('디렉터리인지'))
        write(self.tmp / 'notes' / 'app.md', '# 배포\n\n애플리케이션 설정을 바꾼다.\n')
        write(self.tmp / 'notes' / 'zip.md', '# zip\n\n파일 압축\n')
        write(self.tmp / 'code' / 'tools.py', (
            'def load_application_config(path):\n    """Read the settings."""\n\n\n'
            'def pack(path):\n    """Compress a file."""\n'))
        for tool, expected in (('notes', 'app.md'), ('code', 'load_application_config')):
            with self.subTest(tool=tool):
                run(tool, 'index', tool, '--out', f'{tool}.json', cwd=self.tmp)
                for question in ('애플리케이션 설정', '어플리케이션 설정을'):
                    found = json.loads(run(tool, 'search', question, '--index', f'{tool}.json',
                                           '--json', cwd=self.tmp).stdout)['results']
                    key = 'path' if tool == 'notes' else 'symbol'
                    self.assertEqual(found[0][key], expected, question)


class StaleHitTests(TempDirCase):
    def test_notes_hits_whose_note_changed_or_vanished_say_so(self):
        shutil.copytree(ROOT / 'notes', self.tmp / 'notes')
        run('notes', 'index', 'notes', cwd=self.tmp)
        fresh = json.loads(run('notes', 'search', '캐시', '--json', cwd=self.tmp).stdout)
        self.assertEqual([hit['stale'] for hit in fresh['results']], [False, False])
        with open(self.tmp / 'notes' / 'reading.md', 'a', encoding='utf-8') as note:
            note.write('\n덧붙인 문단\n')
        (self.tmp / 'notes' / 'cache.md').unlink()
        text = run('notes', 'search', '캐시', cwd=self.tmp).stdout
        self.assertEqual(text.count('  [stale: file changed since indexing; run index again]'), 1)
        self.assertEqual(text.count('  [stale: file gone since indexing; run index again]'), 1)
        hits = json.loads(run('notes', 'search', '캐시', '--json', cwd=self.tmp).stdout)
        self.assertEqual([(hit['path'], hit['stale'], hit['gone']) for hit in hits['results']],
                         [('reading.md', True, False), ('cache.md', True, True)])
        self.assertEqual(hits['results'][0]['text'], fresh['results'][0]['text'])


    def test_a_note_edited_with_its_mtime_put_back_or_swapped_for_a_link_is_stale(self):
        write(self.tmp / 'notes' / 'a.md', '# A\n\nalphaword one\n')
        write(self.tmp / 'notes' / 'b.md', '# B\n\nalphaword two\n')
        write(self.tmp / 'copy.md', '# B\n\nalphaword two\n')
        write(self.tmp / 'notes' / 'c.md', '# C\n\nalphaword three\n')
        before = (self.tmp / 'notes' / 'a.md').stat()
        run('notes', 'index', 'notes', cwd=self.tmp)
        self.assertEqual([hit['stale'] for hit in json.loads(
            run('notes', 'search', 'alphaword', '--json', cwd=self.tmp).stdout)['results']],
                         [False, False, False])
        write(self.tmp / 'notes' / 'a.md', '# A\n\nalphaword ONE\n')     # same size
        os.utime(self.tmp / 'notes' / 'a.md', ns=(before.st_atime_ns, before.st_mtime_ns))
        (self.tmp / 'notes' / 'b.md').unlink()
        os.symlink(self.tmp / 'copy.md', self.tmp / 'notes' / 'b.md')     # never followed
        touched = self.tmp / 'notes' / 'c.md'       # only touched and chmod-ed
        os.utime(touched, ns=(before.st_atime_ns, before.st_mtime_ns + 7 * 10 ** 9))
        os.chmod(touched, 0o640)
        hits = json.loads(run('notes', 'search', 'alphaword', '--json', cwd=self.tmp).stdout)
        self.assertIn(('c.md', False, False), [(hit['path'], hit['stale'], hit['gone'])
                                               for hit in hits['results']])     # not changed
        hits['results'] = [hit for hit in hits['results'] if hit['path'] != 'c.md']
        self.assertEqual(sorted((hit['path'], hit['stale'], hit['gone'])     # b.md is a link
                                for hit in hits['results']), [('a.md', True, False),
                                                              ('b.md', True, True)])
        read = notes_search.read_lines(notes_search.open_index_file(self.tmp / 'index.json'),
                                       'a.md', 3, 3)
        self.assertEqual((read['text'], read['stale']), ('alphaword ONE', True))


class CommandLineTests(TempDirCase):
    def test_version_help_and_defaults(self):
        for tool, (path, module) in TOOLS.items():
            with self.subTest(tool=tool):
                version = run(tool, '--version')
                self.assertEqual((version.returncode, version.stdout),
                                 (0, f'{path.name} {module.__version__}\n'))
                index_help = run(tool, 'index', '-h').stdout
                self.assertIn(f'(default: {module.DEFAULT_INDEX})', index_help)
                self.assertIn(f'(default: {module.MAX_FILE_SIZE})', index_help)
                search_help = run(tool, 'search', '-h').stdout
                self.assertIn(f'(default: {module.DEFAULT_TOP_K})', search_help)
                bare = run(tool)                            # nothing given: what to give
                self.assertEqual((bare.returncode, bare.stdout, bare.stderr),
                                 (2, '', f'{path.name}: error: the following arguments are '
                                         f"required: COMMAND ({', '.join(module.SUBCOMMANDS)}; "
                                         f'-h for help)\n'))
        top = run('code', '-h').stdout
        self.assertTrue(top.startswith('usage: code_search.py ROOT QUESTION [--top-k N] [--json]'))
        self.assertIn('COMMAND', top)
        self.assertIn(f'--top-k default: {code_search.DEFAULT_TOP_K}', top.replace('\n', ' '))

    def test_a_question_that_starts_with_a_dash_goes_after_two_dashes(self):
        make_trees(self.tmp, code_files=1, notes=1)
        for tool in TOOLS:
            with self.subTest(tool=tool):
                index = self.tmp / f'{tool}.json'
                run(tool, 'index', self.tmp / tool, '--out', index)
                misread = run(tool, 'search', '-rf', '--index', index)
                self.assertEqual(misread.returncode, 2)
                self.assertTrue(misread.stderr.endswith(
                    "required: question (one that starts with '-' goes last, after '--')\n"),
                    misread.stderr)
                self.assertEqual(run(tool, 'search', '--index', index, '--', '-rf').returncode,
                                 0)
        for tool in TOOLS:                           # not a hint where it makes no sense
            self.assertNotIn("goes last", run(tool, 'index').stderr)
        write(self.tmp / 'code' / 'flags.py', 'FLAGS = "-rf"\n')
        found = run('code', 'grep', '-F', '--', '-rf', self.tmp / 'code')
        self.assertEqual(found.stdout, 'flags.py:1-1 FLAGS\nflags.py:1:FLAGS = "-rf"\n')

    def test_messages_use_the_name_the_program_was_started_as(self):
        for tool, (path, _) in TOOLS.items():
            name = path.stem.replace('_', '-')
            shutil.copy(path, self.tmp / name)   # a copy under another name, as a script
            script = subprocess.run([sys.executable, str(self.tmp / name), 'search', 'x',
                                     '--index', 'missing.json'], capture_output=True, text=True,
                                    cwd=self.tmp, env=support.ENV, timeout=60)
            self.assertTrue(script.stderr.startswith(f'{name}: error: index file not found'),
                            script.stderr)
            self.assertIn(f'(run: {name} index', script.stderr)
            console = subprocess.run(   # a console script imports the module and calls main
                [sys.executable, '-c', f'import sys; sys.path.insert(0, {str(ROOT)!r}); '
                 f'sys.argv[0] = "/usr/local/bin/{name}"; import {path.stem}; '
                 f'sys.exit({path.stem}.main())', 'search', 'x', '--index', 'missing.json'],
                capture_output=True, text=True, cwd=self.tmp, env=support.ENV, timeout=60)
            self.assertTrue(console.stderr.startswith(f'{name}: error: '), console.stderr)
            self.assertEqual(console.returncode, 2)

    def test_an_interrupt_while_multiprocessing_is_half_imported_still_ends_the_run(self):
        for tool, (path, _) in TOOLS.items():
            script = (f'import os, signal, sys, types; sys.path.insert(0, {str(ROOT)!r})\n'
                      f'import {path.stem} as tool\n'
                      'sys.modules["multiprocessing"] = types.ModuleType("multiprocessing")\n'
                      'with tool.interrupts_end_the_run():\n'
                      '    os.kill(os.getpid(), signal.SIGTERM)\n'
                      '    signal.pause() if hasattr(signal, "pause") else None\n')
            result = subprocess.run([sys.executable, '-c', script], capture_output=True,
                                    text=True, env=support.ENV, timeout=60)
            self.assertEqual(result.returncode, 143, (tool, result.stderr))
            self.assertTrue(result.stderr.endswith(': interrupted\n'), (tool, result.stderr))

    def test_the_progress_line_is_erased_when_the_run_ends(self):
        make_trees(self.tmp, code_files=70, notes=1100)
        for tool in TOOLS:
            result, shown = support.run_on_terminal(
                [sys.executable, str(TOOLS[tool][0]), 'index', tool, '--out', f'{tool}.json'],
                cwd=self.tmp)
            self.assertEqual(result.returncode, 0, tool)
            self.assertIn(b'\rindexing ', shown, tool)
            self.assertTrue(shown.endswith(b'\r\x1b[K'), (tool, shown[-60:]))

    def test_a_question_of_invalid_utf8_prints_valid_utf8(self):
        make_trees(self.tmp, code_files=2, notes=2)
        for tool in TOOLS:
            self.assertEqual(run(tool, 'index', tool, '--out', f'{tool}.json',
                                 cwd=self.tmp).returncode, 0)
            question = os.fsencode('word1 \udcff')          # the byte 0xff on the command line
            commands = [['search', question, '--index', f'{tool}.json', '--json']]
            if tool == 'code':
                commands += [[tool, question, '--json'],
                             ['symbol', os.fsencode('function_1_1\udcff'), '--index',
                              'code.json', '--json'],
                             ['grep', os.fsencode('value\udcff'), '--index', 'code.json', '--json']]
            for command in commands:
                result = subprocess.run([sys.executable, str(TOOLS[tool][0]), *command],
                                        cwd=self.tmp, env=support.ENV, capture_output=True,
                                        timeout=60)
                self.assertEqual(result.returncode, 0, (tool, command, result.stderr))
                answer = json.loads(result.stdout.decode('utf-8'))   # strict: valid UTF-8
                self.assertIn('\ufffd', json.dumps(answer, ensure_ascii=False), (tool, command))

    @unittest.skipUnless(os.path.exists('/dev/full') and shutil.which('sh'), 'needs /dev/full')
    def test_output_that_cannot_be_written_is_one_line_and_status_1(self):
        make_trees(self.tmp, code_files=80, notes=1200)        # enough for worker processes
        for tool, (path, _) in TOOLS.items():
            self.assertEqual(run(tool, 'index', tool, '--out', f'{tool}.json',
                                 cwd=self.tmp).returncode, 0)
            commands = [['search', 'word0', '--index', f'{tool}.json'],
                        ['search', 'word0', '--index', f'{tool}.json', '--json'],
                        ['index', tool, '--out', f'{tool}.json']]
            for command, (redirect, reason) in itertools.product(
                    commands, [('>/dev/full', 'No space left on device'), ('>&-', 'it is closed')]):
                with self.subTest(tool=tool, command=command, redirect=redirect):
                    result = subprocess.run(['sh', '-c', f'exec "$@" {redirect}', 'sh',
                                             sys.executable, str(path), *command],
                                            cwd=self.tmp, env=support.ENV, capture_output=True,
                                            text=True, timeout=60)
                    self.assertEqual(result.returncode, 1, result.stderr)
                    self.assertEqual(result.stderr.splitlines()[-1:], [
                        f'{path.name}: error: cannot write the output: {reason}'], result.stderr)
                    self.assertNotIn('Traceback', result.stderr)
                    if command[0] == 'index':            # written, whatever the tree's size
                        self.assertEqual(run(tool, 'search', 'word0', '--index', f'{tool}.json',
                                             cwd=self.tmp).returncode, 0)
            ascii_only = subprocess.run([sys.executable, str(path), 'index', tool, '--out',
                                         f'{tool}.json'], cwd=self.tmp, capture_output=True,
                                        env=dict(support.ENV, PYTHONIOENCODING='ascii'),
                                        timeout=120)
            self.assertEqual(ascii_only.returncode, 0, ascii_only.stderr)
            self.assertTrue(ascii_only.stdout.startswith(b'\\uac31\\uc2e0 \\ud30c\\uc77c: 0'),
                            ascii_only.stdout)                     # 갱신 파일, escaped

    @unittest.skipIf(os.name == 'nt', 'Windows file names cannot hold control characters')
    def test_control_characters_in_names_and_lines_never_reach_the_terminal(self):
        name = 'red\x1b[31m\x07title\x9b'             # colour, bell, a C1 escape
        write(self.tmp / 'code' / f'{name}.py', f'def kite_line():\n    return "\x1b]0;x\x07"\n')
        write(self.tmp / 'notes' / f'{name}.md', '# Kites\n\nkite line \x1b[2J here\n')
        shown_name, shown_line = 'red\\u001b[31m\\u0007title\\u009b', '"\\u001b]0;x\\u0007"'
        commands = {'code': [(['search', 'kite line'], shown_line), (['ls'], shown_name),
                             (['grep', 'return'], shown_name), (['read', f'{name}.py'], shown_line),
                             (['symbol', 'kite_line'], shown_name)],
                    'notes': [(['search', 'kite line'], shown_name)]}
        for tool, tool_commands in commands.items():
            self.assertEqual(run(tool, 'index', tool, '--out', f'{tool}.json',
                                 cwd=self.tmp).returncode, 0)
            for command, expected in tool_commands:
                with self.subTest(tool=tool, command=command):
                    shown = run(tool, *command, '--index', f'{tool}.json', cwd=self.tmp)
                    self.assertEqual(shown.returncode, 0, shown.stderr)
                    self.assertIn(expected, shown.stdout)
                    self.assertIsNone(re.search('[\x00-\x08\x0b-\x1f\x7f-\x9f]', shown.stdout),
                                      shown.stdout)
            answer = json.loads(run(tool, 'search', 'kite line', '--index', f'{tool}.json',
                                    '--json', cwd=self.tmp).stdout)
            suffix = '.py' if tool == 'code' else '.md'
            self.assertEqual(answer['results'][0]['path'], name + suffix)   # JSON: the real name
        for tool in TOOLS:                  # a line break: no output line could name it
            suffix = '.py' if tool == 'code' else '.md'
            write(self.tmp / tool / f'two\nlines{suffix}', '# Kites\n\nkite line\n')
            write(self.tmp / tool / 'back\rto' / f'start{suffix}', '# Kites\n\nkite line\n')
            indexed = run(tool, 'index', tool, '--out', f'{tool}.json', cwd=self.tmp)
            self.assertEqual(indexed.returncode, 0, indexed.stderr)
            self.assertEqual(indexed.stderr.splitlines(), [
                'back\\rto/:0: skipped: name holds a line break',
                f'two\\nlines{suffix}:0: skipped: name holds a line break', 'skipped 2 file(s)'])


@unittest.skipUnless(hasattr(os, 'killpg') and os.path.isdir('/proc'),
                     'sends signals to process groups and looks for processes in /proc')
class SignalTests(TempDirCase):
    """Ctrl-C (SIGINT to the whole foreground process group, as a terminal sends it) and
    SIGTERM (to the tool's process) at several moments of `index`, workers running."""
    FRACTIONS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.05)
    # Python starts and compiles the script before its first line can set up signals: a
    # Ctrl-C in that time gets Python's own traceback (README).  So each run waits until
    # the tool catches SIGTERM (its first lines set both handlers), then for a fraction
    # of a whole run less its start-up (the time of `TOOL --version`).
    STARTUP_RUNS = 3

    def group_alive(self, group):
        """Pids of the live (not zombie) processes of a process group."""
        alive = []
        for pid in filter(str.isdigit, os.listdir('/proc')):
            try:
                with open(f'/proc/{pid}/stat') as status:
                    fields = status.read().rsplit(')', 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != 'Z':
                alive.append(int(pid))
        return alive

    def wait_for_handlers(self, pid, timeout=30):
        """Wait until process pid catches SIGTERM (the SigCgt mask of /proc/pid/status)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with open(f'/proc/{pid}/status') as status:
                    caught = next(int(line.split()[1], 16) for line in status
                                  if line.startswith('SigCgt:'))
            except (OSError, StopIteration):
                return
            if caught & (1 << (signal.SIGTERM - 1)):
                return
            time.sleep(0.002)

    def startup_seconds(self, tool):
        """The shortest of a few runs of `TOOL --version`: start-up and compiling."""
        times = []
        for _ in range(self.STARTUP_RUNS):
            started = time.monotonic()
            subprocess.run([sys.executable, str(TOOLS[tool][0]), '--version'],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
            times.append(time.monotonic() - started)
        return min(times)

    def interrupted_runs(self, tool, root):
        command = [sys.executable, str(TOOLS[tool][0]), 'index', str(root), '--out', 'i.json']
        started = time.monotonic()
        subprocess.run(command, cwd=self.tmp, capture_output=True, check=True, timeout=300)
        full = time.monotonic() - started
        startup = self.startup_seconds(tool)
        for number, fraction in enumerate(self.FRACTIONS):
            for signal_number, status in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
                if number % 2:   # an old index to update, or none
                    write(root / f'changed{number}.md', f'x {number}\n')
                    write(root / f'changed{number}.py', f'def changed_{number}():\n    pass\n')
                else:
                    (self.tmp / 'i.json').unlink(missing_ok=True)
                before = self.tmp.joinpath('i.json').read_bytes() \
                    if (self.tmp / 'i.json').exists() else None
                process = subprocess.Popen(command, cwd=self.tmp, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, start_new_session=True)
                self.wait_for_handlers(process.pid)
                time.sleep((full - startup) * fraction)
                if signal_number == signal.SIGINT:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGINT)
                else:
                    process.send_signal(signal.SIGTERM)
                out, err = process.communicate(timeout=60)
                yield fraction, signal_number, status, process, err, before

    def check_tool(self, tool, root):
        outcomes = set()
        suffix = '' if tool == 'code' else '.md'   # code_search reads every text file
        for fraction, number, status, process, err, before in self.interrupted_runs(tool, root):
            where = (tool, fraction, signal.Signals(number).name, err.decode()[-300:])
            # killed by the signal itself once Python has reset its handlers at exit: the
            # shell shows the same status, 128 + the signal's number
            self.assertIn(process.returncode, (status, -number, 0), where)
            outcomes.add(process.returncode)
            self.assertNotIn(b'Traceback', err, where)
            name = TOOLS[tool][0].name
            written = f'{name}: index i.json was written before the interrupt'
            lines = err.decode().splitlines()
            # none when the signal came as the program ended; two when it came as the
            # index was being written, which goes on until the file is whole
            self.assertIn(lines, ([], [f'{name}: interrupted'],
                                  [written, f'{name}: interrupted']), where)
            deadline = time.monotonic() + 0.5      # no worker outlives the tool for long
                                                   # (test_workers_end_with_the_tool: killed)
            while self.group_alive(process.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(self.group_alive(process.pid), [], where)
            self.assertEqual(sorted(os.listdir(self.tmp)),
                             sorted(['i.json', 'src'] if (self.tmp / 'i.json').exists()
                                    else ['src']), where)
            if written in lines:
                self.assertNotEqual((self.tmp / 'i.json').read_bytes(), before, where)
            if (self.tmp / 'i.json').exists():
                data = (self.tmp / 'i.json').read_bytes()
                if data != before:   # a new index: whole, and of the whole tree
                    files = set(TOOLS[tool][1].load_index(str(self.tmp / 'i.json'))['files'])
                    self.assertEqual(files, {path.relative_to(root).as_posix() for path in
                                             root.rglob('*' + suffix) if path.is_file()}, where)
        self.assertIn(130, outcomes, tool)
        self.assertIn(143, outcomes, tool)

    def test_interrupt_while_writing_says_the_index_is_whole(self):
        """Ctrl-C that comes while the index is written waits for the file to be whole,
        and the tool then says it was written before saying it was interrupted."""
        for tool in TOOLS:
            script = (f'import importlib.util, os, signal, sys\n'
                      f'spec = importlib.util.spec_from_file_location("tool", '
                      f'{str(TOOLS[tool][0])!r})\n'
                      f'tool = importlib.util.module_from_spec(spec)\n'
                      f'spec.loader.exec_module(tool)\n'
                      f'with tool.interrupts_end_the_run(), tool.signals_deferred():\n'
                      f'    os.kill(os.getpid(), signal.SIGINT)\n'
                      f'    tool.write_index("i.json", {{"tool": {tool!r}}})\n'
                      f'print("carried on")\n')
            result = subprocess.run([sys.executable, '-c', script], cwd=self.tmp,
                                    capture_output=True, text=True, timeout=60)
            name = TOOLS[tool][0].name
            self.assertEqual((result.returncode, result.stdout, result.stderr.splitlines()),
                             (130, '', [f'{name}: index i.json was written before the '
                                        f'interrupt', f'{name}: interrupted']))
            self.assertEqual(json.loads((self.tmp / 'i.json').read_text()), {'tool': tool})
            self.assertEqual(os.listdir(self.tmp), ['i.json'])
            ignored = script.replace('with tool.interrupts_end_the_run(), ',
                                     'signal.signal(signal.SIGINT, signal.SIG_IGN)\nwith ')
            result = subprocess.run([sys.executable, '-c', ignored], cwd=self.tmp,
                                    capture_output=True, text=True, timeout=60)
            self.assertEqual((result.returncode, result.stdout, result.stderr),
                             (0, 'carried on\n', ''))      # an ignored Ctrl-C: no line

    def test_a_ctrl_c_ignored_when_the_tool_starts_stays_ignored(self):
        """A script's `tool serve &` starts with SIGINT ignored, and the tool keeps it so,
        as Unix programs do; SIGTERM still ends it."""
        for tool in TOOLS:
            with self.subTest(tool=tool):
                write(self.tmp / tool / 'a.md', '# a\n\ntext\n')
                run(tool, 'index', tool, '--out', f'{tool}.json', cwd=self.tmp)
                process = subprocess.Popen(
                    [sys.executable, str(TOOLS[tool][0]), 'serve', '--index', f'{tool}.json',
                     '--port', '0'], cwd=self.tmp, stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
                try:
                    self.assertIn(b'http://127.0.0.1:', process.stderr.readline())
                    with open(f'/proc/{process.pid}/status') as status:
                        ignored = next(int(line.split()[1], 16) for line in status
                                       if line.startswith('SigIgn:'))
                    self.assertTrue(ignored & (1 << (signal.SIGINT - 1)))
                    process.send_signal(signal.SIGINT)
                    time.sleep(0.3)
                    self.assertIsNone(process.poll())
                finally:
                    process.terminate()
                    process.communicate(timeout=30)
                self.assertEqual(process.returncode, 143)

    def test_code_search_index(self):
        make_trees(self.tmp / 'src', code_files=600, notes=0)
        self.check_tool('code', self.tmp / 'src' / 'code')

    def test_workers_end_with_the_tool(self):
        """SIGTERM to the tool ends its workers with it: they are killed, not left to
        notice the end of their parent, which here they would do only after an hour."""
        make_trees(self.tmp / 'src', code_files=600, notes=600)
        for tool, batch in (('code', 'FILES_PER_JOB'), ('notes', 'NOTES_PER_JOB')):
            script = (f'import importlib.util, sys\n'
                      f'spec = importlib.util.spec_from_file_location({tool!r} + "_search", '
                      f'{str(TOOLS[tool][0])!r})\n'
                      f'tool = sys.modules[spec.name] = importlib.util.module_from_spec(spec)\n'
                      f'spec.loader.exec_module(tool)\n'
                      f'tool.WORKER_WATCH_SECONDS, tool.{batch} = 3600, 1\n'
                      f'sys.exit(tool.main(["index", "src/{tool}", "--out", "{tool}.json", '
                      f'"--jobs", "2"]))\n')
            process = subprocess.Popen([sys.executable, '-c', script], cwd=self.tmp,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True)
            try:
                deadline = time.monotonic() + 60
                while len(self.group_alive(process.pid)) < 2 and process.poll() is None \
                        and time.monotonic() < deadline:
                    time.sleep(0.001)
                self.assertGreater(len(self.group_alive(process.pid)), 1, 'no worker seen')
                process.send_signal(signal.SIGTERM)
                out, err = process.communicate(timeout=60)   # EOF: the workers are gone
            except BaseException:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                raise
            self.assertEqual((process.returncode, err.decode()),
                             (143, f'{TOOLS[tool][0].name}: interrupted\n'))
            deadline = time.monotonic() + 5      # killed: exiting, if not yet gone
            while self.group_alive(process.pid) and time.monotonic() < deadline:
                time.sleep(0.01)
            self.assertEqual(self.group_alive(process.pid), [])

    def test_notes_search_index(self):
        make_trees(self.tmp / 'src', code_files=0, notes=6000)
        self.check_tool('notes', self.tmp / 'src' / 'notes')


if __name__ == '__main__':
    unittest.main()

"""code_search.py grep, read and ls, and the MCP tools grep_code, read_file and
list_files, on a small polyglot tree with a .gitignore.  Standard library only."""
import contextlib
import io
import itertools
import json
import os
import re
import shutil
import signal
import unittest
from unittest import mock

from tests.support import CODE_TOOL, TempDirCase, run_cli, write
from tests.test_code_agents import McpSession

import code_search  # noqa: E402

SECRET = 'NOT-FOR-AGENTS-4c1d'


def cli(*args, **kwargs):
    return run_cli(CODE_TOOL, *args, **kwargs)


def make_tree(root):
    """A small repository: Python, Go, TypeScript, a Markdown file, ignored and hidden
    files, a binary file and a CRLF file."""
    write(root / '.gitignore', 'build/\n*.log\n')
    write(root / 'app' / 'billing.py', (
        'import os\n'
        '\n'
        '\n'
        'class Invoice:\n'
        '    """An invoice."""\n'
        '\n'
        '    def total_with_tax(self, amount, tax_rate):\n'
        '        """Calculate invoice total including tax."""\n'
        '        return round(amount * (1 + tax_rate), 2)\n'
        '\n'
        '    def tax(self, amount, tax_rate):\n'
        '        return amount * tax_rate\n'))
    write(root / 'server' / 'main.go', (
        'package main\n'
        '\n'
        'import "fmt"\n'
        '\n'
        '// Serve answers one request.\n'
        'func Serve(path string) string {\n'
        '\tif path == "" {\n'
        '\t\treturn fmt.Sprint("total_with_tax missing")\n'
        '\t}\n'
        '\treturn path\n'
        '}\n'))
    write(root / 'web' / 'cart.ts', (
        'export class Cart {\n'
        '  totalWithTax(rate: number): number {\n'
        '    return this.sum * (1 + rate);\n'
        '  }\n'
        '}\n'))
    write(root / 'web' / 'crlf.ts', b'export function a() {\r\n  return 1;\r\n}\r\n')
    write(root / 'docs' / 'guide.md', '# Guide\n\nThe total with tax is rounded.\n')
    write(root / 'build' / 'out.py', f'KEY = "{SECRET}"\n')
    write(root / 'debug.log', f'{SECRET}\n')
    write(root / '.env', f'TOKEN={SECRET}\n')
    write(root / 'logo.png', b'\x89PNG\r\n\x1a\n\0\0' + SECRET.encode())
    write(root / 'data.bin.txt', b'total_with_tax\0\0binary')


class GrepTests(TempDirCase):
    def setUp(self):
        super().setUp()
        self.root = self.tmp / 'repo'
        make_tree(self.root)
        self.index = self.tmp / 'index.json'
        result = cli('index', self.root, '--out', self.index)
        self.assertEqual(result.returncode, 0, result.stderr)

    def grep(self, *args, **kwargs):
        result = cli('grep', *args, **kwargs)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result

    def test_human_output_names_the_definition_once_per_group(self):
        out = self.grep('tax', '--index', self.index).stdout.splitlines()
        self.assertEqual(out[:6], [
            'app/billing.py:7-9 Invoice.total_with_tax',
            'app/billing.py:7:    def total_with_tax(self, amount, tax_rate):',
            'app/billing.py:8:        """Calculate invoice total including tax."""',
            'app/billing.py:9:        return round(amount * (1 + tax_rate), 2)',
            'app/billing.py:11-12 Invoice.tax',
            'app/billing.py:11:    def tax(self, amount, tax_rate):'])
        self.assertIn('server/main.go:8:\t\treturn fmt.Sprint("total_with_tax missing")', out)
        self.assertIn('docs/guide.md:3:The total with tax is rounded.', out)

    def test_index_and_root_search_the_same_files(self):
        from_index = self.grep('total', '--index', self.index, '--json').stdout
        from_root = self.grep('total', self.root, '--json').stdout
        self.assertEqual(json.loads(from_index), json.loads(from_root))
        paths = {m['path'] for m in json.loads(from_root)['matches']}
        self.assertEqual(paths, {'app/billing.py', 'server/main.go', 'docs/guide.md',
                                 'web/cart.ts'})

    def test_ignored_hidden_and_binary_files_are_not_searched(self):
        for source in (('--index', self.index), (self.root,)):
            with self.subTest(source=source[0]):
                result = self.grep(SECRET, *source)
                self.assertEqual(result.stdout, '')
                self.assertNotIn(SECRET, result.stderr)
        self.assertNotIn('data.bin.txt', self.grep('total_with_tax', self.root).stdout)

    def test_json_shape(self):
        found = json.loads(self.grep('Serve', '--index', self.index, '--json', '-w').stdout)
        self.assertEqual(set(found), {'pattern', 'matches', 'files_searched', 'truncated'})
        self.assertEqual(found['matches'], [
            {'repo': 'repo', 'path': 'server/main.go', 'line': 5, 'column': 4,
             'text': '// Serve answers one request.', 'symbol': None, 'start': None,
             'end': None},
            {'repo': 'repo', 'path': 'server/main.go', 'line': 6, 'column': 6,
             'text': 'func Serve(path string) string {', 'symbol': 'Serve', 'start': 6,
             'end': 11}])
        self.assertEqual(found['files_searched'], 5)
        self.assertFalse(found['truncated'])

    def test_options(self):
        self.assertEqual(self.grep('-l', 'tax', '--index', self.index).stdout.splitlines(),
                         ['app/billing.py', 'docs/guide.md', 'server/main.go'])
        self.assertEqual(self.grep('-F', 'amount * (1', self.root).stdout.splitlines()[-1],
                         'app/billing.py:9:        return round(amount * (1 + tax_rate), 2)')
        self.assertEqual(self.grep('TOTALWITHTAX', '-i', '-l', self.root).stdout.strip(),
                         'web/cart.ts')
        self.assertEqual(self.grep('-w', 'total', '-l', self.root).stdout.splitlines(),
                         ['app/billing.py', 'docs/guide.md'])
        limited = json.loads(self.grep('tax', '-m', '1', '--json', self.root).stdout)
        self.assertEqual([m['path'] for m in limited['matches']],
                         ['app/billing.py', 'docs/guide.md', 'server/main.go'])
        self.assertTrue(limited['truncated'])
        self.assertEqual(self.grep('return', '--lang', 'go', '-l', self.root).stdout.strip(),
                         'server/main.go')
        self.assertEqual(self.grep('return', '--path', 'web/**', '-l', self.root)
                         .stdout.splitlines(), ['web/cart.ts', 'web/crlf.ts'])
        both = cli('grep', 'tax', '-l', '--json', self.root)    # not the matches, silently
        self.assertEqual((both.returncode, both.stdout, both.stderr.strip()),
                         (2, '', 'code_search.py: error: -l prints file names and --json the '
                                 'matches: give one of them'))

    def test_context_lines_and_separators(self):
        out = self.grep('-C', '1', 'return', '--path', 'server', self.root).stdout
        self.assertEqual(out.splitlines(), [
            'server/main.go:6-11 Serve',
            'server/main.go-7-\tif path == "" {',
            'server/main.go:8:\t\treturn fmt.Sprint("total_with_tax missing")',
            'server/main.go-9-\t}',
            'server/main.go:10:\treturn path',
            'server/main.go-11-}'])
        none = self.grep('-C', '0', 'return', '--path', 'server', self.root)
        self.assertEqual(none.stdout, self.grep('return', '--path', 'server', self.root).stdout)
        self.assertIn('server/main.go:10:\treturn path', none.stdout)
        self.assertEqual(cli('grep', '-C', '-1', 'return', self.root).returncode, 2)

    def test_crlf_lines_are_numbered_once(self):
        found = json.loads(self.grep('return 1', self.root, '--json').stdout)['matches']
        self.assertEqual([(m['path'], m['line'], m['text'], m['symbol']) for m in found],
                         [('web/crlf.ts', 2, '  return 1;', 'a')])

    def test_no_match_is_silent_success_and_a_bad_pattern_is_misuse(self):
        result = self.grep('no such text anywhere', '--index', self.index)
        self.assertEqual((result.stdout, result.stderr), ('', ''))
        bad = cli('grep', '(unclosed', '--index', self.index)
        self.assertEqual(bad.returncode, 2)
        self.assertEqual(len(bad.stderr.strip().splitlines()), 1)
        self.assertIn('bad regular expression', bad.stderr)
        both = cli('grep', 'x', self.root, '--index', self.index)
        self.assertEqual(both.returncode, 2)

    def test_a_changed_file_is_read_as_it_is_now(self):
        billing = self.root / 'app' / 'billing.py'
        billing.write_text('# moved\n' + billing.read_text())
        found = json.loads(self.grep('def tax', '--index', self.index, '--json').stdout)
        self.assertEqual([(m['line'], m['symbol']) for m in found['matches']],
                         [(12, 'Invoice.tax')])

    def test_a_root_leaves_out_what_index_leaves_out(self):
        write(self.root / 'big.py', 'def tax_in_a_big_file():\n    pass\n' + '#' * (3 << 20))
        result = self.grep('tax_in_a_big_file', self.root)
        self.assertEqual(result.stdout, '')
        self.assertIn('big.py:0: skipped: larger than --max-file-size', result.stderr)
        read = cli('read', 'big.py:1-1', self.root)
        self.assertEqual(read.returncode, 2, read.stderr)
        write(self.root / 'latin.py', b'x = 1\ny = "caf\xe9 tax"\n')
        result = self.grep('tax_in', self.root)
        self.assertIn('latin.py:2: ', result.stderr)        # the line, as index says it
        self.assertEqual(result.stderr.splitlines()[-1], 'skipped 2 file(s)')   # one count

    def test_an_unreadable_file_is_reported(self):
        (self.root / 'server' / 'main.go').unlink()
        result = self.grep('Serve', '--index', self.index)
        self.assertEqual(result.stdout, '')
        self.assertEqual(result.stderr.splitlines()[0], 'server/main.go:0: skipped: no longer '
                                                        'there (deleted or moved)')
        read = cli('read', 'server/main.go:1-2', '--index', self.index)
        self.assertEqual((read.returncode, read.stderr.strip()), (2, (
            'code_search.py: error: cannot read server/main.go: no longer there (deleted or '
            'moved)')))

    @unittest.skipUnless(hasattr(signal, 'setitimer'), 'the time limit needs SIGALRM')
    def test_a_pattern_that_backtracks_for_ever_is_stopped(self):
        write(self.root / 'docs' / 'as.txt', 'a' * 40 + '!\n')
        before, timer = signal.getsignal(signal.SIGALRM), signal.getitimer(signal.ITIMER_REAL)
        stderr = io.StringIO()
        with mock.patch.object(code_search, 'GREP_SECONDS', 0.5), \
                contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = code_search.main(['grep', '(a+)+$', str(self.root)])
        self.assertEqual(status, 2)
        self.assertRegex(stderr.getvalue(), r': error: the pattern took over 0\.5 s on '
                                            r'docs/as\.txt: it backtracks too much; simplify it')
        self.assertEqual(signal.getitimer(signal.ITIMER_REAL)[0] > 0, timer[0] > 0)  # the
        self.assertIs(signal.getsignal(signal.SIGALRM), before)             # tests' watchdog
        found = json.loads(self.grep('a+!', self.root, '--json').stdout)
        self.assertEqual([m['path'] for m in found['matches']], ['docs/as.txt'])

    @unittest.skipUnless(hasattr(signal, 'setitimer'), 'the time limit needs SIGALRM')
    def test_the_time_limit_keeps_an_outer_one_and_does_nothing_off_the_main_thread(self):
        import threading
        timer = signal.getitimer(signal.ITIMER_REAL)        # the tests' watchdog, if any
        with code_search.time_limit(30) as outer:
            outer('outer step')
            with code_search.time_limit(0.2) as inner:
                inner(None)
            self.assertGreater(signal.getitimer(signal.ITIMER_REAL)[0], 0)   # outer's again
            outer(None)
        self.assertEqual(signal.getitimer(signal.ITIMER_REAL)[0] > 0, timer[0] > 0)
        caught = []

        def elsewhere():
            try:
                with code_search.time_limit(1) as clock:
                    clock('a step')
                    raise KeyError('mine')
            except KeyError as error:
                caught.append(error)
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
        self.assertEqual(len(caught), 1)
        self.assertIsNone(caught[0].__context__)          # nothing of signal's refusal

    def test_a_folder_turned_into_a_link_out_of_the_root_is_not_read(self):
        outside = self.tmp / 'outside'
        write(outside / 'main.go', f'package main\n\n// {SECRET}\nfunc Serve() {{}}\n')
        (self.root / 'server' / 'main.go').unlink()
        (self.root / 'server').rmdir()
        os.symlink(outside, self.root / 'server')
        result = self.grep(SECRET, '--index', self.index)
        self.assertEqual(result.stdout, '')
        self.assertEqual(result.stderr.splitlines()[0],
                         'server/main.go:0: skipped: symbolic link (not followed)')
        read = cli('read', 'server/main.go', '--index', self.index)
        self.assertEqual(read.returncode, 2)
        self.assertNotIn(SECRET, read.stdout + read.stderr)
        found = json.loads(cli('search', 'Serve', '--index', self.index, '--json').stdout)
        self.assertNotIn(SECRET, json.dumps(found))


class ReadTests(TempDirCase):
    def setUp(self):
        super().setUp()
        self.root = self.tmp / 'repo'
        make_tree(self.root)
        self.index = self.tmp / 'index.json'
        cli('index', self.root, '--out', self.index)

    @unittest.skipUnless(hasattr(os, 'symlink') and os.name == 'posix', 'needs symlinks')
    def test_paths_through_a_linked_root_and_in_other_spellings(self):
        os.symlink(self.root, self.tmp / 'link')                # as /tmp is on macOS
        linked = self.tmp / 'linked.json'
        cli('index', self.tmp / 'link', '--out', linked)
        absolute = f"{self.tmp / 'link' / 'app' / 'billing.py'}"
        commands = [('at', f'{absolute}:8', '--index', linked),
                    ('read', f'{absolute}:8-8', self.tmp / 'link'),
                    ('outline', absolute, '--index', linked)]
        commands += [('at', f'{spelling}:8', '--index', self.index)
                     for spelling in ('app//billing.py', 'app/../app/billing.py',
                                      './app/billing.py', 'app/billing.py:5')]   # :COLUMN
        for command in commands:
            with self.subTest(command=command):
                result = cli(*command)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn('total_with_tax' if command[0] != 'read' else '8 |', result.stdout)
        outside = cli('at', f"{self.tmp / 'link' / '..' / 'index.json'}:1", '--index', linked)
        self.assertEqual(outside.returncode, 2)
        self.assertIn('outside the root', outside.stderr)

    def test_at_a_file_whose_name_ends_like_a_line(self):
        write(self.root / 'app' / 'notes.py:3', 'one\ntwo\nthree\nfour\n')   # a text file
        cli('index', self.root, '--out', self.index)
        found = cli('at', 'app/notes.py:3:2', '--index', self.index, '--json')   # line 2 of it
        self.assertEqual(found.returncode, 0, found.stderr)
        self.assertEqual(json.loads(found.stdout)['result']['path'], 'app/notes.py:3')
        billing = cli('at', 'app/billing.py:8:3', '--index', self.index, '--json')  # :COLUMN
        self.assertEqual(json.loads(billing.stdout)['result']['symbol'], 'Invoice.total_with_tax')
        missing = cli('at', 'app/gone.py:8:3', '--index', self.index)
        self.assertEqual((missing.returncode, missing.stderr),
                         (2, f'code_search.py: error: no such file in the root {self.root}: '
                             'app/gone.py\n'))
        ignored = cli('at', 'debug.log:1', '--index', self.index)
        self.assertEqual(ignored.stderr, 'code_search.py: error: not an indexed file: '
                                         'debug.log\n')
        for command in (['at', 'billing.py:8', '--index', self.index],   # from app/: paths
                        ['read', 'billing.py:8', self.root]):           # are the root's
            here = cli(*command, cwd=self.root / 'app')
            self.assertEqual((here.returncode, here.stderr),
                             (2, f'code_search.py: error: no such file in the root '
                                 f'{self.root}: billing.py (paths are relative to the root: '
                                 'app/billing.py)\n'))
        files = code_search.index_files(code_search.open_index_file(self.index))
        for name in ('app/billing.py\0', '\ud800.py'):      # what MCP and the API may pass
            with self.assertRaisesRegex(LookupError, '^no file has such a name: '):
                code_search.read_lines(files, name)

    def test_lines_with_numbers(self):
        result = cli('read', 'app/billing.py:7-9', '--index', self.index)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.splitlines(), [
            '7 |     def total_with_tax(self, amount, tax_rate):',
            '8 |         """Calculate invoice total including tax."""',
            '9 |         return round(amount * (1 + tax_rate), 2)'])
        tail = cli('read', 'server/main.go:10', self.root).stdout.splitlines()
        self.assertEqual(tail, ['10 | \treturn path', '11 | }'])
        self.assertEqual(cli('read', 'server/main.go:10-', self.root).stdout.splitlines(), tail)
        for misspelt in ('1,3', '1-3-5', '-3'):        # a range, not a part of the name
            result = cli('read', f'server/main.go:{misspelt}', self.root)
            self.assertEqual((result.returncode, result.stdout, result.stderr.strip()),
                             (2, '', f"code_search.py: error: expected PATH:START-END, "
                                     f"got '{misspelt}'"))
        at = cli('at', 'app/billing.py:8:', '--index', self.index)   # as grep prints it
        self.assertEqual((at.returncode, at.stdout.split('\n')[0]),
                         (0, cli('at', 'app/billing.py:8', '--index', self.index)
                          .stdout.split('\n')[0]))
        self.assertIn('Invoice.total_with_tax', at.stdout)

    def test_json_agrees_with_search_lines(self):
        found = json.loads(cli('read', 'web/crlf.ts:2-99', '--index', self.index, '--json')
                           .stdout)
        self.assertEqual(found['text'], '  return 1;\n}')
        self.assertEqual((found['start'], found['end'], found['total_lines'], found['stale']),
                         (2, 3, 3, False))
        self.assertRegex(found['revision'], r'^[0-9a-f]{12}$')
        symbol = json.loads(cli('symbol', 'Invoice.tax', '--index', self.index, '--json')
                            .stdout)['results'][0]
        read = json.loads(cli('read', f"app/billing.py:{symbol['start']}-{symbol['end']}",
                              '--index', self.index, '--json').stdout)
        self.assertEqual(read['text'], symbol['text'])
        self.assertEqual(read['revision'], symbol['revision'])

    def test_stale_after_a_change(self):
        (self.root / 'docs' / 'guide.md').write_text('# Guide\n\nchanged\n')
        found = json.loads(cli('read', 'docs/guide.md', '--index', self.index, '--json').stdout)
        self.assertTrue(found['stale'])
        self.assertEqual(found['text'], '# Guide\n\nchanged')

    def test_refusals_are_one_line_and_status_2(self):
        outside = self.tmp / 'outside.txt'
        outside.write_text(SECRET)
        cases = [('../outside.txt', '--index', self.index), (str(outside), self.root),
                 ('build/out.py', self.root), ('.env', '--index', self.index),
                 ('data.bin.txt', self.root), ('logo.png', self.root),
                 ('app/billing.py:0', self.root), ('app/billing.py:9-3', self.root),
                 ('app/billing.py:40', self.root), ('missing.py', self.root)]
        try:
            os.symlink(outside, self.root / 'link.txt')
            cases.append(('link.txt', self.root))
        except (OSError, NotImplementedError):
            pass
        for case in cases:
            with self.subTest(case=case[0]):
                result = cli('read', *case)
                self.assertEqual(result.returncode, 2, result.stdout)
                self.assertEqual(result.stdout, '')
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertNotIn(SECRET, result.stderr)
        inside = cli('read', 'web/../app/./billing.py:1-2', '--index', self.index, '--json')
        self.assertEqual(json.loads(inside.stdout)['path'], 'app/billing.py')
        self.assertIn('outside the root', cli('read', 'app/../../outside.txt', self.root).stderr)


class LsTests(TempDirCase):
    def setUp(self):
        super().setUp()
        self.root = self.tmp / 'repo'
        make_tree(self.root)
        self.index = self.tmp / 'index.json'
        cli('index', self.root, '--out', self.index)

    def test_top_level(self):
        found = json.loads(cli('ls', '--index', self.index, '--json').stdout)
        self.assertEqual(found['path'], './')
        self.assertEqual([(e['path'], e['type']) for e in found['entries']],
                         [('app/', 'folder'), ('docs/', 'folder'), ('server/', 'folder'),
                          ('web/', 'folder')])
        web = found['entries'][3]
        self.assertEqual((web['files'], web['chunks']), (2, 3))
        text = cli('ls', '--index', self.index).stdout
        self.assertRegex(text, r'(?m)^web/\s+2 files, \d+ chunks$')

    def test_a_file_is_listed_as_its_own_entry(self):
        found = json.loads(cli('ls', 'app/billing.py', '--index', self.index, '--json').stdout)
        self.assertEqual((found['path'], found['entries']),
                         ('app/billing.py', [{'path': 'app/billing.py', 'type': 'file',
                                              'language': 'python', 'chunks': 4}]))
        self.assertEqual(cli('ls', 'debug.log', '--all', '--index', self.index).stdout,
                         'debug.log  [ignored by .gitignore/.ignore]\n')
        refused = cli('ls', 'debug.log', '--index', self.index)
        self.assertEqual(refused.returncode, 2)
        self.assertIn('not a file or a folder that holds indexed files: debug.log',
                      refused.stderr)

    def test_outline_indents_members_and_not_overlapping_windows(self):
        write(self.root / 'docs' / 'long.txt', ''.join(f'line {n}\n' for n in range(1, 131)))
        cli('index', self.root, '--out', self.index)
        text = cli('outline', 'app/billing.py', 'docs/long.txt', '--index', self.index).stdout
        self.assertEqual(text, 'app/billing.py (python)\n'
                               '  4-12 class Invoice\n'
                               '    7-9 method Invoice.total_with_tax\n'
                               '    11-12 method Invoice.tax\n'
                               'docs/long.txt (text)\n'
                               '  1-60 window docs/long.txt:L1-60\n'
                               '  51-110 window docs/long.txt:L51-110\n'
                               '  101-130 window docs/long.txt:L101-130\n')

    def test_columns_line_up_with_wide_and_escaped_names(self):
        write(self.root / '한글' / '메모.py', 'def memo():\n    pass\n')
        write(self.root / 'bell\x07.py', 'def ring():\n    pass\n')
        cli('index', self.root, '--out', self.index)
        lines = cli('ls', '--index', self.index).stdout.splitlines()
        self.assertIn('bell\\u0007.py  python, 1 chunk', lines)     # escaped: 13 columns
        self.assertIn('한글/' + ' ' * 8 + '  1 file, 1 chunk', lines)   # 5 columns wide
        self.assertEqual({len(re.match(r'.*?  +', line).group()) for line in lines
                          if line.isascii()}, {15})            # the second column's start

    def test_a_folder_deeper_and_everything(self):
        found = json.loads(cli('ls', 'web', '--index', self.index, '--json').stdout)
        self.assertEqual([(e['path'], e['language']) for e in found['entries']],
                         [('web/cart.ts', 'typescript'), ('web/crlf.ts', 'typescript')])
        deep = json.loads(cli('ls', '--depth', '2', '--index', self.index, '--json').stdout)
        self.assertIn('app/billing.py', {e['path'] for e in deep['entries']})
        cli('index', self.root, '--out', self.root / 'code_index.json')    # in the tree
        write(self.root / 'new.py', 'def added():\n    pass\n')
        os.symlink(self.root / 'web', self.root / 'weblink')
        every = json.loads(cli('ls', '--all', '--index', self.index, '--json').stdout)
        reasons = {e['path']: e['reason'] for e in every['entries'] if 'reason' in e}
        self.assertEqual(set(reasons), {'build/', 'debug.log', '.env', '.gitignore',
                                        'logo.png', 'data.bin.txt', 'code_index.json',
                                        'new.py', 'weblink'})
        types = {e['path']: e['type'] for e in every['entries']}
        self.assertEqual((types['weblink'], types['build/'], types['new.py']),
                         ('link', 'folder', 'file'))
        self.assertEqual(reasons['code_index.json'], 'a code_search index file')
        self.assertIn('new since indexing', reasons['new.py'])
        self.assertIn('gitignore', reasons['build/'])
        self.assertIn('binary', reasons['data.bin.txt'])

    def test_everything_shows_new_folders_and_lists_them(self):
        write(self.root / 'newdir' / 'a.py', 'def added():\n    pass\n')
        write(self.root / 'newdir' / 'deeper' / 'b.py', 'def deeper():\n    pass\n')
        every = json.loads(cli('ls', '--all', '--index', self.index, '--json').stdout)
        self.assertIn({'path': 'newdir/', 'type': 'folder',
                       'reason': 'holds files left out (ls --all on this folder lists them)'}, every['entries'])
        inside = cli('ls', 'newdir', '--all', '--index', self.index)
        self.assertEqual(inside.returncode, 0, inside.stderr)
        self.assertRegex(inside.stdout, r'(?m)^newdir/a\.py +\[not in the index \(new since')
        self.assertRegex(inside.stdout, r'(?m)^newdir/deeper/ +\[holds files left out')
        deeper = cli('ls', '--all', '--depth', '2', '--index', self.index).stdout
        self.assertRegex(deeper, r'(?m)^newdir/ +\[holds files left out')    # and above it
        self.assertRegex(deeper, r'(?m)^newdir/deeper/ +\[holds files left out')
        self.assertEqual(cli('ls', 'newdir', '--index', self.index).returncode, 2)
        write(self.root / 'build' / 'gen' / 'out.py', 'X = 1\n')         # build/ is ignored
        os.symlink(self.tmp, self.root / 'outlink')
        self.assertEqual(cli('ls', 'outlink', '--all', '--index', self.index).stdout,
                         'outlink  [skipped: symbolic link (not followed)]\n')   # as a file
        for path in ('build/gen', 'outlink/repo', 'nothing-here'):
            with self.subTest(path=path):
                refused = cli('ls', path, '--all', '--index', self.index)
                self.assertEqual((refused.returncode, refused.stdout), (2, ''))
                self.assertIn('not a folder that holds indexed or left-out files', refused.stderr)

    def test_refusals(self):
        for path in ('../', 'nothing-here', '/etc'):
            with self.subTest(path=path):
                result = cli('ls', path, '--index', self.index)
                self.assertEqual(result.returncode, 2)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1)


class McpToolTests(TempDirCase):
    def setUp(self):
        super().setUp()
        self.root = self.tmp / 'repo'
        make_tree(self.root)
        self.index = self.tmp / 'index.json'
        cli('index', self.root, '--out', self.index)
        self.server = McpSession(self, '--index', self.index)
        self.server.initialize()

    def call(self, name, arguments):
        result = self.server.result(name, arguments)
        return result, result['content'][0]['text']

    def test_tools_are_listed_read_only(self):
        tools = {t['name']: t for t in self.server.request('tools/list')['result']['tools']}
        for name in ('grep_code', 'read_file', 'list_files'):
            self.assertTrue(tools[name]['annotations']['readOnlyHint'])
            self.assertEqual(tools[name]['inputSchema']['type'], 'object')
        self.assertEqual(sorted(tools['grep_code']['inputSchema']['properties']),
                         ['context', 'fixed', 'ignore_case', 'max_chars', 'max_results',
                          'offset', 'path_glob', 'pattern', 'repo'])
        instructions = self.server.request('initialize', {
            'protocolVersion': '2025-11-25', 'capabilities': {},
            'clientInfo': {'name': 't', 'version': '1'}})['result']['instructions']
        for name in ('grep_code', 'read_file', 'list_files', 'find_symbol', 'search_code'):
            self.assertIn(name, instructions)

    def test_grep_code_pages(self):
        result, text = self.call('grep_code', {'pattern': 'return', 'max_results': 2})
        found = result['structuredContent']
        self.assertEqual(len(found['matches']), 2)
        self.assertTrue(found['truncated'])
        self.assertEqual(found['next_offset'], 2)
        self.assertIn('offset=2', text)
        rest = self.call('grep_code', {'pattern': 'return', 'offset': 2,
                                       'max_results': 50})[0]['structuredContent']
        every = self.call('grep_code', {'pattern': 'return'})[0]['structuredContent']
        self.assertEqual(found['matches'] + rest['matches'], every['matches'])
        self.assertNotIn('next_offset', every)
        offset, seen = 0, []                # pages too small for a match and its context
        while offset is not None:           # still show each match line, none skipped
            page, text = self.call('grep_code', {'pattern': 'return', 'context': 5,
                                                 'max_chars': 200, 'offset': offset})
            for match in page['structuredContent']['matches']:
                self.assertIn(f"{match['path']}:{match['line']}:", text)
                seen.append(match)
            offset = page['structuredContent'].get('next_offset')
        self.assertEqual([(m['path'], m['line']) for m in seen],
                         [(m['path'], m['line']) for m in every['matches']])

    def test_every_answer_stays_within_max_chars(self):
        source = os.path.dirname(json.__file__)            # real code: the json package
        root = self.tmp / 'json_pkg'
        root.mkdir()
        for name in sorted(os.listdir(source)):
            if name.endswith('.py'):
                shutil.copy(os.path.join(source, name), root / name)
        index = self.tmp / 'json_pkg.json'
        cli('index', root, '--out', index)
        server = McpSession(self, '--index', index)
        server.initialize()
        trace = ('Traceback (most recent call last):\n'
                 + ''.join(f'  File "/x/decoder.py", line {n}, in f\n' for n in range(1, 300, 7))
                 + 'ValueError: boom\n')
        calls = [('search_code', {'query': 'decode a json document', 'top_k': 50}),
                 ('search_code', {'query': 'scan string', 'top_k': 10, 'explain': True}),
                 ('find_symbol', {'name': 'JSONDecoder.raw_decode'}),
                 ('locate', {'path': 'decoder.py', 'line': 340}),
                 ('explain_traceback', {'traceback': trace}),
                 ('file_outline', {'path': '.'}),
                 ('grep_code', {'pattern': 'def ', 'max_results': 500, 'context': 2}),
                 ('read_file', {'path': 'encoder.py'}),
                 ('list_files', {'path': '', 'depth': 3})]
        budgets = (200, 300, 500, 1000, 3000, 20000)
        for name, arguments in calls:
            whole = server.result(name, dict(arguments, max_chars=200000))['content'][0]['text']
            for budget in budgets:
                with self.subTest(tool=name, max_chars=budget):
                    result = server.result(name, dict(arguments, max_chars=budget))
                    self.assertFalse(result.get('isError'), result)
                    text, found = result['content'][0]['text'], result['structuredContent']
                    self.assertLessEqual(len(text), budget, text[-200:])
                    codes = [entry['text'] for entry in found.get('results', [])] + \
                        [frame['chunk']['text'] for block in found.get('exceptions', [])
                         for frame in block['frames'] if frame['chunk']]
                    self.assertLessEqual(sum(map(len, codes)), budget)
                    if len(whole) <= budget:                 # nothing is lost when it fits
                        self.assertEqual(text, whole)
                    else:
                        self.assertTrue(found['truncated'], text)
                        self.assertGreater(len(text), budget // 3, text)   # not just a note
        write(root / 'long.py', 'LONG = "' + 'x' * 3000 + '"  # needle\nOTHER = 1  # needle\n')
        cli('index', root, '--out', index)
        offset, pages = 0, []
        while offset is not None and len(pages) < 5:         # a long line cannot stall paging
            page = server.result('grep_code', {'pattern': 'needle', 'offset': offset,
                                               'max_results': 1, 'max_chars': 300})
            pages.append(page['structuredContent']['matches'])
            self.assertLessEqual(len(page['content'][0]['text']), 300)
            offset = page['structuredContent'].get('next_offset')
        self.assertEqual([[match['line'] for match in page] for page in pages], [[1], [2]])
        self.assertIs(pages[0][0]['truncated'], True)
        alone = server.result('grep_code', {'pattern': 'LONG', 'max_chars': 300})
        self.assertIs(alone['structuredContent']['truncated'], True)    # its only match cut
        self.assertTrue(alone['content'][0]['text'].endswith(
            '[match cut to fit: a larger max_chars shows all of it]'))
        self.assertLessEqual(len(alone['content'][0]['text']), 300)
        self.assertEqual(server.close(), 0)

    def test_grep_code_globs_and_budget(self):
        found = self.call('grep_code', {'pattern': 'tax', 'path_glob': 'server,docs/*.md'}
                          )[0]['structuredContent']
        self.assertEqual({m['path'] for m in found['matches']},
                         {'server/main.go', 'docs/guide.md'})
        result, text = self.call('grep_code', {'pattern': '.', 'max_chars': 300})
        self.assertLessEqual(len(text.split('\n[cut')[0]), 300)
        self.assertTrue(result['structuredContent']['truncated'])
        offset = result['structuredContent']['next_offset']
        self.assertIn(f'offset={offset}', text)
        self.assertEqual(len(result['structuredContent']['matches']), offset)
        bad = self.server.result('grep_code', {'pattern': '[', 'fixed': False})
        self.assertTrue(bad['isError'])
        escape = self.server.result('grep_code', {'pattern': 'x', 'path_glob': '../*'})
        self.assertTrue(escape['isError'])
        self.assertTrue(self.server.result('grep_code', {'pattern': 'x', 'fixed': 'yes'})
                        ['isError'])

    def test_read_file_pages(self):
        result, text = self.call('read_file', {'path': 'app/billing.py', 'start': 7, 'end': 8})
        self.assertEqual(text.splitlines(), [
            '7 |     def total_with_tax(self, amount, tax_rate):',
            '8 |         """Calculate invoice total including tax."""'])
        self.assertEqual((result['structuredContent']['total_lines'],
                          result['structuredContent']['truncated']), (12, False))
        result, text = self.call('read_file', {'path': 'app/billing.py', 'max_chars': 200})
        cut = result['structuredContent']
        self.assertTrue(cut['truncated'])
        self.assertEqual(cut['next_start'], cut['end'] + 1)
        self.assertIn(f"start={cut['next_start']}", text)
        rest = self.call('read_file', {'path': 'app/billing.py', 'start': cut['next_start']}
                         )[0]['structuredContent']
        whole = self.call('read_file', {'path': 'app/billing.py'})[0]['structuredContent']
        self.assertEqual(cut['text'] + '\n' + rest['text'], whole['text'])
        write(self.root / 'long.py', 'A = 1\nLONG = "' + 'x' * 3000 + '"\nB = 2\n')
        cli('index', self.root, '--out', self.index)
        for start, end, note in ((1, 1, '[cut at line 1 of 3: call read_file with start=2 '
                                        'for the rest]'),
                                 (2, 2, '[line 2 cut to fit: a larger max_chars shows all of '
                                        'it; start=3 reads on]'),
                                 (3, 3, None)):
            result, text = self.call('read_file', {'path': 'long.py', 'start': start,
                                                   'max_chars': 300})
            cut = result['structuredContent']
            self.assertEqual((cut['end'], cut.get('truncated', False)), (end, bool(note)))
            self.assertLessEqual(len(text), 300)
            if note:
                self.assertTrue(text.endswith(note), text)
                self.assertEqual(cut['next_start'], end + 1)
        write(self.root / 'last.py', 'A = 1\nLONG = "' + 'x' * 3000 + '"\n')
        cli('index', self.root, '--out', self.index)
        result, text = self.call('read_file', {'path': 'last.py', 'start': 2, 'max_chars': 300})
        self.assertNotIn('next_start', result['structuredContent'])   # no line follows
        self.assertTrue(text.endswith('[line 2 cut to fit: a larger max_chars shows all of it]'),
                        text)
        backwards = self.server.result('read_file', {'path': 'app/billing.py', 'start': 5,
                                                     'end': 2})
        self.assertTrue(backwards['isError'])
        self.assertIn('end must not be before start', backwards['content'][0]['text'])
        for path in ('../outside.txt', '/etc/passwd', '.env', 'build/out.py', 'logo.png'):
            with self.subTest(path=path):
                refused = self.server.result('read_file', {'path': path})
                self.assertTrue(refused['isError'])
                self.assertNotIn(SECRET, json.dumps(refused))

    def test_list_files(self):
        result, text = self.call('list_files', {})
        self.assertEqual([e['path'] for e in result['structuredContent']['entries']],
                         ['app/', 'docs/', 'server/', 'web/'])
        deep = self.call('list_files', {'path': 'web', 'depth': 3})[0]['structuredContent']
        self.assertEqual([e['path'] for e in deep['entries']], ['web/cart.ts', 'web/crlf.ts'])
        self.assertTrue(self.server.result('list_files', {'path': '..'})['isError'])
        self.assertTrue(re.search(r'web/\s+2 files', text))


if __name__ == '__main__':
    unittest.main()

"""Tests of code_search.py's agent features: symbol, at, trace and the MCP server.

Standard library only.  Every test builds real files in a temporary folder, runs the
tool as a separate process (python code_search.py ...) and checks exact values; the
MCP server is driven with raw JSON-RPC lines and every read has a timeout, so a hung
server fails the test instead of blocking the run.

    python -m unittest discover -s tests -t .
"""
import hashlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest
import unittest.mock
from pathlib import Path

from tests import support
from tests.support import CODE_TOOL as TOOL

import code_search  # noqa: E402

TIMEOUT = 60            # seconds for one CLI process
READ_TIMEOUT = 15       # seconds to wait for one MCP reply line
ENV = dict(os.environ, PYTHONIOENCODING='utf-8', PYTHONDONTWRITEBYTECODE='1',
           PYTHONUTF8='1')
ENV.pop('PYTHONSTARTUP', None)
CAUSE = 'The above exception was the direct cause of the following exception:'
CONTEXT = 'During handling of the above exception, another exception occurred:'
OUTSIDE = 'outside the root'
SECRET = 'TOP-SECRET-OUTSIDE-7f3a'
RESULT_KEYS = {'path', 'start', 'end', 'symbol', 'revision', 'stale', 'text'}


# --- helpers -----------------------------------------------------------------------

def run_tool(*args, input=None, cwd=None):
    """Run code_search.py with arguments; returns the CompletedProcess (text, utf-8)."""
    return support.run_cli(TOOL, *args, input=input, cwd=cwd, timeout=TIMEOUT, env=ENV)


def write(root, relative, text):
    """Write a dedented source file under root; return its path."""
    return support.write(Path(root, relative), textwrap.dedent(text).lstrip('\n'))


def line_of(path, needle):
    """1-based number of the only line of a file that contains needle."""
    found = [n for n, text in enumerate(Path(path).read_text().splitlines(), 1)
             if needle in text]
    assert len(found) == 1, (needle, found)
    return found[0]


def source_slice(path, start, end):
    return '\n'.join(Path(path).read_text().splitlines()[start - 1:end])


def revision(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def marked(path, start, end, line):
    """The documented marked_text format: '>' or ' ', the right-aligned number, ' | '."""
    width = len(str(end))
    rows = Path(path).read_text().splitlines()[start - 1:end]
    return ['%s %*d | %s' % ('>' if n == line else ' ', width, n, text)
            for n, text in enumerate(rows, start)]


def build_index(root, out):
    result = run_tool('index', root, '--out', out)
    assert result.returncode == 0, result.stderr
    return result


TB_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>.+)$')


def frames_of(traceback_text):
    """(file, line, name) of every frame line, in printed order (test-side parser)."""
    return [(m['file'], int(m['line']), m['name'])
            for m in map(TB_FRAME.match, traceback_text.splitlines()) if m]


def assert_in_order(test, text, fragments):
    """Each fragment occurs in text after the previous one."""
    position = 0
    for fragment in fragments:
        found = text.find(fragment, position)
        test.assertNotEqual(found, -1, f'missing (in order) {fragment!r} in:\n{text}')
        position = found + len(fragment)


def make_billing_tree(root):
    """Two classes with a total_with_tax method, a differently-cased function, nesting."""
    write(root, 'billing/invoice.py', '''
        """Invoices."""

        TAX_RATE = 0.1


        class Invoice:
            """A bill sent to a customer."""

            def __init__(self, amount):
                self.amount = amount

            def total_with_tax(self):
                return self.amount * (1 + TAX_RATE)
        ''')
    write(root, 'shop/order.py', '''
        class Order:
            def total_with_tax(self):
                return 0
        ''')
    write(root, 'util.py', '''
        def Total_With_Tax(amount):
            return amount


        def outer(values):
            def inner(value):
                return value * 2
            doubled = [inner(v) for v in values]
            return doubled
        ''')
    body = ''.join(f'    lines.append("report line {n:03d} with some padding text")\n'
                   for n in range(80))
    Path(root, 'reports.py').write_text(
        'def big_report(invoice):\n    lines = []\n' + body + '    return lines\n',
        encoding='utf-8')


def match_frame_path(index, path):
    """The indexed file a frame's path names first (frame_candidates), or None."""
    return (code_search.frame_candidates(index, path)[1] or [None])[0]


# --- symbol --------------------------------------------------------------------------

class SymbolCommandTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix='cs_symbol_')).resolve()
        cls.root = cls.tmp / 'proj'
        make_billing_tree(cls.root)
        cls.index = cls.tmp / 'index.json'
        build_index(cls.root, cls.index)
        cls.invoice = cls.root / 'billing/invoice.py'
        cls.order = cls.root / 'shop/order.py'
        cls.util = cls.root / 'util.py'

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def symbol_json(self, name):
        result = run_tool('symbol', name, '--index', self.index, '--json')
        self.assertEqual(result.returncode, 0, result.stderr)
        document = json.loads(result.stdout)
        self.assertEqual(document['name'], name)
        return document['results']

    def test_method_name_finds_both_methods_then_case_insensitive_function(self):
        results = self.symbol_json('total_with_tax')
        self.assertEqual([(r['symbol'], r['match'], r['path'], r['start'], r['end'])
                          for r in results],
                         [('Invoice.total_with_tax', 'suffix', 'billing/invoice.py', 12, 13),
                          ('Order.total_with_tax', 'suffix', 'shop/order.py', 2, 3),
                          ('Total_With_Tax', 'case-insensitive', 'util.py', 1, 2)])
        first = results[0]
        self.assertEqual(first['kind'], 'method')
        self.assertEqual(first['revision'], revision(self.invoice))
        self.assertIs(first['stale'], False)
        self.assertEqual(first['text'], source_slice(self.invoice, 12, 13))
        self.assertEqual(results[2]['kind'], 'function')
        self.assertEqual(results[2]['text'], 'def Total_With_Tax(amount):\n    return amount')
        self.assertEqual(len({r['id'] for r in results}), 3)

    def test_dotted_name_matches_exactly_one(self):
        results = self.symbol_json('Invoice.total_with_tax')
        self.assertEqual([(r['symbol'], r['match'], r['path'], r['start'], r['end'])
                          for r in results],
                         [('Invoice.total_with_tax', 'exact', 'billing/invoice.py', 12, 13)])

    def test_exact_match_ranks_before_case_insensitive_ones(self):
        results = self.symbol_json('Total_With_Tax')
        self.assertEqual([(r['symbol'], r['match']) for r in results],
                         [('Total_With_Tax', 'exact'),
                          ('Invoice.total_with_tax', 'case-insensitive suffix'),
                          ('Order.total_with_tax', 'case-insensitive suffix')])

    def test_constant_and_nested_function(self):
        results = self.symbol_json('TAX_RATE')
        self.assertEqual([(r['symbol'], r['kind'], r['start'], r['end'], r['text'])
                          for r in results],
                         [('TAX_RATE', 'constant', 3, 3, 'TAX_RATE = 0.1')])
        results = self.symbol_json('inner')
        self.assertEqual([(r['symbol'], r['match'], r['start'], r['end']) for r in results],
                         [('outer.inner', 'suffix', 6, 7)])

    def test_text_output_lists_every_match_with_path_and_lines(self):
        result = run_tool('symbol', 'total_with_tax', '--index', self.index)
        self.assertEqual(result.returncode, 0, result.stderr)
        headers = [re.sub(r'^\[[^\]]+\] ', '', line)
                   for line in result.stdout.splitlines() if line.startswith('[')]
        self.assertEqual(headers, ['billing/invoice.py:12-13 Invoice.total_with_tax',
                                   'shop/order.py:2-3 Order.total_with_tax',
                                   'util.py:1-2 Total_With_Tax'])
        self.assertIn('        return self.amount * (1 + TAX_RATE)\n', result.stdout)
        self.assertIn('        return 0\n', result.stdout)

    def test_no_match(self):
        result = run_tool('symbol', 'no_such_thing', '--index', self.index)
        self.assertEqual((result.returncode, result.stdout),
                         (0, 'no definition named no_such_thing\n'))
        self.assertEqual(self.symbol_json('no_such_thing'), [])

    def test_missing_index_is_one_line_error(self):
        result = run_tool('symbol', 'x', '--index', self.tmp / 'nope.json')
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stdout, '')
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertIn('index file not found', result.stderr)


# --- at ----------------------------------------------------------------------------

class AtCommandTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix='cs_at_')).resolve()
        cls.root = cls.tmp / 'proj'
        make_billing_tree(cls.root)
        (cls.tmp / 'outside.py').write_text(f'SECRET = "{SECRET}"\n', encoding='utf-8')
        cls.index = cls.tmp / 'index.json'
        build_index(cls.root, cls.index)
        cls.util = cls.root / 'util.py'
        cls.invoice = cls.root / 'billing/invoice.py'

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def at(self, location, *extra):
        return run_tool('at', location, '--index', self.index, *extra)

    def test_innermost_chunk_with_marked_line(self):
        line = line_of(self.util, 'return value * 2')          # inside outer.inner
        result = self.at(f'util.py:{line}')
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertRegex(lines[0], r'^\[code-\d+\] util\.py:6-7 outer\.inner$')
        self.assertEqual(lines[1:], marked(self.util, 6, 7, line))
        self.assertEqual(lines[1:], ['  6 |     def inner(value):',
                                     '> 7 |         return value * 2'])

    def test_line_of_outer_function_after_nested_def(self):
        line = line_of(self.util, 'doubled = [inner')
        result = self.at(f'util.py:{line}', '--json')
        self.assertEqual(result.returncode, 0, result.stderr)
        document = json.loads(result.stdout)
        self.assertEqual((document['path'], document['line']), ('util.py', line))
        found = document['result']
        self.assertEqual((found['symbol'], found['start'], found['end'], found['line']),
                         ('outer', 5, 9, line))
        self.assertEqual(found['text'], source_slice(self.util, 5, 9))
        self.assertEqual(found['revision'], revision(self.util))
        self.assertIs(found['stale'], False)

    def test_marker_width_across_two_digit_lines(self):
        result = self.at('billing/invoice.py:10')
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertRegex(lines[0], r'^\[code-\d+\] billing/invoice\.py:9-10 Invoice\.__init__$')
        self.assertEqual(lines[1:], ['   9 |     def __init__(self, amount):',
                                     '> 10 |         self.amount = amount'])

    def test_absolute_and_dot_slash_paths_inside_root(self):
        expected = self.at('billing/invoice.py:13').stdout
        self.assertIn('> 13 |         return self.amount * (1 + TAX_RATE)', expected)
        for location in (f'{self.invoice}:13', './billing/invoice.py:13'):
            with self.subTest(location=location):
                result = self.at(location)
                self.assertEqual((result.returncode, result.stdout), (0, expected),
                                 result.stderr)

    def test_line_outside_every_chunk(self):
        result = self.at('billing/invoice.py:2')   # a blank line between the docstring and
        self.assertEqual((result.returncode, result.stdout),   # the first definition
                         (0, 'billing/invoice.py:2: no indexed function holds this line\n'))
        result = self.at('billing/invoice.py:2', '--json')
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout),
                         {'path': 'billing/invoice.py', 'line': 2, 'result': None})

    def test_a_line_past_the_end_is_misuse_as_read_says(self):
        total = len((self.root / 'billing' / 'invoice.py').read_text().splitlines())
        result = self.at(f'billing/invoice.py:{total + 50}')
        self.assertEqual((result.returncode, result.stdout), (2, ''))
        self.assertEqual(result.stderr.strip().splitlines()[-1].split('error: ')[1],
                         f'billing/invoice.py has {total} lines; line {total + 50} is past '
                         'its end')
        trace = ('Traceback (most recent call last):\n'           # a trace is not refused:
                 f'  File "/app/billing/invoice.py", line {total + 50}, in gone\n'  # the file
                 'ValueError: from another version\n')                      # may have changed
        traced = run_tool('trace', '-', '--index', self.index, '--json', input=trace)
        self.assertEqual(traced.returncode, 0, traced.stderr)
        frame = json.loads(traced.stdout)['exceptions'][0]['frames'][0]
        self.assertEqual((frame['path'], frame['chunk']), ('billing/invoice.py', None))
        traced = run_tool('trace', '-', '--index', self.index, input=trace)
        self.assertIn(f'in gone\n    billing/invoice.py has {total} lines: the file has no '
                      f'line {total + 50} now\nValueError', traced.stdout)
        syntax = ('Traceback (most recent call last):\n'
                  '  File "/app/billing/invoice.py", line 2\n    x = (\n        ^\n'
                  "SyntaxError: '(' was never closed\n")
        traced = run_tool('trace', '-', '--index', self.index, input=syntax)
        self.assertIn('invoice.py, line 2\n', traced.stdout)     # as Python prints it

    def test_a_file_that_shrank_or_went_is_refused_and_its_frames_say_so(self):
        with tempfile.TemporaryDirectory() as folder:
            root, index = Path(folder) / 'proj', Path(folder) / 'index.json'
            shutil.copytree(self.root, root)
            build_index(root, index)
            invoice = root / 'billing' / 'invoice.py'
            trace = ('Traceback (most recent call last):\n'
                     '  File "/app/billing/invoice.py", line 13, in total_with_tax\n'
                     'TypeError: boom\n')
            lines = invoice.read_text().splitlines(keepends=True)
            for change, refusal, frame in (
                    ('shrank', 'billing/invoice.py has 11 lines; line 13 is past its end',
                     'the file has no line 13 now'),
                    ('went', 'cannot read billing/invoice.py: no longer there (deleted or '
                             'moved)', 'billing/invoice.py: the file is gone since it was '
                                       'indexed')):
                with self.subTest(change=change):
                    if change == 'shrank':
                        invoice.write_text(''.join(lines[:11]))
                    else:
                        invoice.unlink()
                    result = run_tool('at', 'billing/invoice.py:13', '--index', index)
                    self.assertEqual((result.returncode, result.stdout), (2, ''))
                    self.assertTrue(result.stderr.endswith(f'error: {refusal}\n'), result.stderr)
                    traced = run_tool('trace', '-', '--index', index, input=trace)
                    self.assertEqual(traced.returncode, 0, traced.stderr)
                    label = 'gone' if change == 'went' else 'changed'
                    self.assertIn(f'Invoice.total_with_tax  [stale: file {label} since '
                                  f'indexing; run index again]\n    {frame}\n', traced.stdout)
                    found = json.loads(run_tool('trace', '-', '--json', '--index', index,
                                                input=trace).stdout)
                    self.assertEqual(found['exceptions'][0]['frames'][0].get('gone', False),
                                     change == 'went')
                    for look_up in (('search', 'total with tax'),
                                    ('symbol', 'Invoice.total_with_tax')):
                        said = run_tool(*look_up, '--index', index).stdout
                        self.assertIn(f'  [stale: file {label} since indexing; run index '
                                      'again]\n' + ('' if change == 'went' else
                                                    '(the file has no such lines now, or '
                                                    'cannot be read: run index again)\n'), said)
                        found = next(hit for hit in json.loads(run_tool(
                            *look_up, '--index', index, '--json').stdout)['results']
                            if hit['path'] == 'billing/invoice.py')
                        self.assertEqual((found['stale'], found['gone'], found['text']),
                                         (True, change == 'went', ''))

    def test_module_level_code_is_a_module_chunk(self):
        result = self.at('billing/invoice.py:1', '--json')
        self.assertEqual(result.returncode, 0, result.stderr)
        found = json.loads(result.stdout)['result']
        self.assertEqual((found['symbol'], found['kind'], found['start'], found['end'],
                          found['text']), ('<module>', 'module', 1, 1, '"""Invoices."""'))
        result = self.at('billing/invoice.py:7')   # a class's own line: the class
        self.assertTrue(result.stdout.startswith('[code-'), result.stdout)
        self.assertIn(' billing/invoice.py:6-13 Invoice\n', result.stdout)

    def test_paths_outside_the_root_are_refused(self):
        for location in ('../outside.py:1', f'{self.tmp / "outside.py"}:1', '/etc/passwd:1',
                         'billing/../../outside.py:1'):
            with self.subTest(location=location):
                result = self.at(location)
                self.assertEqual(result.returncode, 2)
                self.assertEqual(result.stdout, '')
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertIn(OUTSIDE, result.stderr)
                self.assertNotIn(SECRET, result.stderr)

    def test_malformed_location(self):
        result = self.at('util.py')
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stdout, '')
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


# --- trace -------------------------------------------------------------------------

HELPER = '''
import json


def parse_config(text):
    return json.loads(text)


def load(text, chain):
    try:
        return parse_config(text)
    except ValueError as error:
        if chain == 'cause':
            raise RuntimeError('config is broken') from error
        raise LookupError('no fallback config')
'''
MAIN = '''
import sys

from app import helper


def main():
    helper.load('{', sys.argv[1])


main()
'''


class TraceCommandTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix='cs_trace_')).resolve()
        cls.root = cls.tmp / 'proj'
        cls.helper = write(cls.root, 'app/helper.py', HELPER)
        cls.main = write(cls.root, 'main.py', MAIN)
        cls.index = cls.tmp / 'index.json'
        build_index(cls.root, cls.index)
        cls.tracebacks = {}
        for chain in ('cause', 'context'):
            result = subprocess.run([sys.executable, str(cls.main), chain], cwd=str(cls.root),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    encoding='utf-8', env=ENV, timeout=TIMEOUT)
            assert result.returncode == 1, result
            cls.tracebacks[chain] = result.stderr
        cls.lines = {
            'try': line_of(cls.helper, 'return parse_config(text)'),
            'loads': line_of(cls.helper, 'return json.loads(text)'),
            'cause': line_of(cls.helper, "raise RuntimeError('config is broken')"),
            'context': line_of(cls.helper, "raise LookupError('no fallback config')"),
            'call': line_of(cls.main, "helper.load('{', sys.argv[1])"),
        }

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def trace_json(self, text, *source):
        if source:
            result = run_tool('trace', source[0], '--index', self.index, '--json')
        else:
            result = run_tool('trace', '-', '--index', self.index, '--json', input=text)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)['exceptions']

    def first_message(self, chain):
        """The first exception's last line, as the traceback printed it."""
        text = self.tracebacks[chain].splitlines()
        before = text[:text.index(CAUSE if chain == 'cause' else CONTEXT)]
        return [line for line in before if line.strip()][-1]

    def test_generated_tracebacks_look_as_expected(self):
        # the fixture itself: chained, with stdlib frames between project frames
        for chain, link in (('cause', CAUSE), ('context', CONTEXT)):
            text = self.tracebacks[chain]
            self.assertEqual(text.count('Traceback (most recent call last):'), 2, text)
            self.assertIn(link, text)
            self.assertTrue(any(f[0].endswith(os.path.join('json', 'decoder.py'))
                                for f in frames_of(text)), text)
        self.assertEqual(Path(self.main).read_text().splitlines()[9], 'main()')

    def expected_inside(self, path, line, name, symbol, start, end):
        absolute = self.root / path
        return {'file': str(absolute), 'line': line, 'name': name, 'inside_root': True,
                'path': path, 'stale': False,
                'chunk': {'path': path, 'symbol': symbol, 'kind': 'function', 'start': start,
                          'end': end, 'revision': revision(absolute), 'stale': False,
                          'text': source_slice(absolute, start, end)}}

    def check_json(self, exceptions, chain, files=None):
        text = self.tracebacks[chain]
        frames = frames_of(text)
        outside = [f for f in frames if not f[0].startswith(str(self.root))]
        self.assertGreaterEqual(len(outside), 2)
        self.assertEqual(len(exceptions), 2)
        first, second = exceptions
        got = [(f['name'], f['inside_root'], f['path']) for f in first['frames']]
        self.assertEqual(got[:2], [('load', True, 'app/helper.py'),
                                   ('parse_config', True, 'app/helper.py')])
        self.assertEqual(got[2:], [(name, False, None) for _, _, name in outside])
        for frame, (file, line, _) in zip(first['frames'][2:], outside):
            self.assertEqual((frame['file'], frame['line'], frame['chunk'], frame['stale']),
                             (file, line, None, False))
        load_end = line_of(self.helper, "raise LookupError")
        expected_load = self.expected_inside('app/helper.py', self.lines['try'], 'load',
                                             'load', 8, load_end)
        expected_parse = self.expected_inside('app/helper.py', self.lines['loads'],
                                              'parse_config', 'parse_config', 4, 5)
        for got_frame, want in zip(first['frames'][:2], (expected_load, expected_parse)):
            if files:
                want['file'] = files[want['path']]
            got_frame = dict(got_frame, chunk={k: got_frame['chunk'][k]
                                               for k in want['chunk']})
            self.assertEqual({k: got_frame[k] for k in want}, want)
        self.assertEqual(first['message'], self.first_message(chain))
        self.assertEqual(first['then'], CAUSE if chain == 'cause' else CONTEXT)
        # second exception: module level of main.py, main(), then the raise in load
        self.assertEqual([(f['name'], f['inside_root'], f['path'], f['line'])
                          for f in second['frames']],
                         [('<module>', True, 'main.py', 10),
                          ('main', True, 'main.py', self.lines['call']),
                          ('load', True, 'app/helper.py', self.lines[chain])])
        self.assertEqual((second['frames'][0]['chunk']['symbol'],
                          second['frames'][0]['chunk']['kind'],
                          second['frames'][0]['chunk']['text']), ('<module>', 'module', 'main()'))
        self.assertEqual((second['frames'][1]['chunk']['symbol'],
                          second['frames'][1]['chunk']['start'],
                          second['frames'][1]['chunk']['end']), ('main', 6, 7))
        self.assertEqual(second['frames'][2]['chunk']['symbol'], 'load')
        self.assertEqual([f['stale'] for f in second['frames']], [False, False, False])
        self.assertEqual(second['message'], 'RuntimeError: config is broken'
                         if chain == 'cause' else 'LookupError: no fallback config')
        self.assertEqual(second['then'], '')

    def test_json_cause_chain_from_stdin(self):
        self.check_json(self.trace_json(self.tracebacks['cause']), 'cause')

    def test_json_context_chain_from_file(self):
        saved = self.tmp / 'context.txt'
        saved.write_text(self.tracebacks['context'], encoding='utf-8')
        self.check_json(self.trace_json(None, saved), 'context')

    @unittest.skipUnless(os.path.exists('/dev/zero'), 'needs /dev/zero')
    def test_an_endless_or_missing_trace_file_is_one_error_line(self):
        for source, reason in (('/dev/zero', 'is larger than %d bytes' % code_search.TRACE_LIMIT),
                               (str(self.tmp / 'missing.txt'), 'cannot read trace')):
            result = run_tool('trace', source, '--index', self.index)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
            self.assertIn(reason, result.stderr)
        with open('/dev/zero', 'rb') as endless:
            result = subprocess.run([sys.executable, str(TOOL), 'trace', '-', '--index',
                                     str(self.index)], stdin=endless, capture_output=True,
                                    text=True, timeout=TIMEOUT, env=ENV)
        self.assertEqual((result.returncode, result.stderr.splitlines()[-1:]),
                         (2, ['code_search.py: error: the trace on standard input is larger '
                              f'than {code_search.TRACE_LIMIT} bytes']))

    def test_text_output_marks_each_frame_line_and_ends_with_message(self):
        for chain in ('cause', 'context'):
            with self.subTest(chain=chain):
                result = run_tool('trace', '-', '--index', self.index, '--full',
                                  input=self.tracebacks[chain])
                self.assertEqual(result.returncode, 0, result.stderr)
                out = result.stdout
                load_end = line_of(self.helper, 'raise LookupError')
                outside = [f for f in frames_of(self.tracebacks[chain])
                           if not f[0].startswith(str(self.root))]
                fragments = ['\n'.join('    ' + row for row in
                                       marked(self.helper, 8, load_end, self.lines['try'])),
                             '\n'.join('    ' + row for row in
                                       marked(self.helper, 4, 5, self.lines['loads']))]
                fragments += [f'line {line}, in {name}  ({OUTSIDE})'
                              for _, line, name in outside]
                fragments += [self.first_message(chain), CAUSE if chain == 'cause'
                              else CONTEXT,
                              'main.py:10-10 <module>\n    > 10 | main()',
                              '\n'.join('    ' + row for row in
                                        marked(self.main, 6, 7, self.lines['call'])),
                              '\n'.join('    ' + row for row in
                                        marked(self.helper, 8, load_end,
                                               self.lines[chain]))]
                assert_in_order(self, out, fragments)
                self.assertRegex(out, r'\[code-\d+\] app/helper\.py:4-5 parse_config\n')
                self.assertEqual(out.strip().splitlines()[-1],
                                 'RuntimeError: config is broken' if chain == 'cause'
                                 else 'LookupError: no fallback config')
                for file, line, name in outside:
                    self.assertIn(f'  File {file}, line {line}, in {name}  ({OUTSIDE})\n',
                                  out)

    def rewritten(self, text, new_root, separator):
        def fix(match):
            path = match.group(1)
            if not path.startswith(str(self.root) + os.sep):
                return match.group(0)
            rest = os.path.relpath(path, str(self.root)).replace(os.sep, separator)
            return f'File "{new_root}{separator}{rest}"'
        return re.sub(r'File "([^"]+)"', fix, text)

    def test_paths_from_another_machine_match_by_suffix(self):
        for new_root, separator in (('/home/alice/work/proj', '/'),
                                    ('C:\\Users\\bob\\proj', '\\')):
            with self.subTest(root=new_root):
                text = self.rewritten(self.tracebacks['cause'], new_root, separator)
                self.assertNotIn(str(self.root), text)
                files = {p: new_root + separator + p.replace('/', separator)
                         for p in ('app/helper.py', 'main.py')}
                exceptions = self.trace_json(text)
                self.check_json(exceptions, 'cause', files=files)
                self.assertEqual([f['file'] for f in exceptions[1]['frames']],
                                 [files['main.py'], files['main.py'],
                                  files['app/helper.py']])

    def test_stale_file_is_flagged(self):
        copy_root = self.tmp / 'stale'
        shutil.copytree(str(self.root), str(copy_root))
        index = self.tmp / 'stale.json'
        build_index(copy_root, index)
        helper = copy_root / 'app/helper.py'
        text = self.tracebacks['cause'].replace(str(self.root), str(copy_root))
        with helper.open('a', encoding='utf-8') as handle:
            handle.write('\n\n# edited after indexing\n')
        result = run_tool('trace', '-', '--index', index, '--json', input=text)
        self.assertEqual(result.returncode, 0, result.stderr)
        exceptions = json.loads(result.stdout)['exceptions']
        self.assertEqual([(f['path'], f['stale']) for b in exceptions for f in b['frames']
                          if f['inside_root']],
                         [('app/helper.py', True), ('app/helper.py', True),
                          ('main.py', False), ('main.py', False), ('app/helper.py', True)])
        self.assertEqual([f['chunk']['stale'] for f in exceptions[0]['frames'][:2]],
                         [True, True])
        result = run_tool('trace', '-', '--index', index, input=text)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r'app/helper\.py:8-\d+ load  \[stale')

    def test_stdlib_frame_is_outside_even_when_root_has_same_file_name(self):
        # Index a package folder itself: its __init__.py is at the root, like
        # .../json/__init__.py of the standard library, which must stay outside.
        base = self.tmp / 'pkgcase'
        package = write(base, 'mypkg/__init__.py', '''
            import json


            def load(text):
                return json.loads(text)
            ''').parent
        write(base, 'run.py', '''
            import mypkg

            mypkg.load('{')
            ''')
        index = self.tmp / 'pkg.json'
        build_index(package, index)
        result = subprocess.run([sys.executable, str(base / 'run.py')], cwd=str(base),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                encoding='utf-8', env=ENV, timeout=TIMEOUT)
        self.assertEqual(result.returncode, 1)
        stdlib = [f for f in frames_of(result.stderr)
                  if f[0].endswith(os.path.join('json', '__init__.py'))]
        self.assertEqual(len(stdlib), 1, result.stderr)
        traced = run_tool('trace', '-', '--index', index, '--json', input=result.stderr)
        self.assertEqual(traced.returncode, 0, traced.stderr)
        frames = json.loads(traced.stdout)['exceptions'][0]['frames']
        self.assertEqual([(f['name'], f['inside_root'], f['path']) for f in frames[:2]],
                         [('<module>', False, None), ('load', True, '__init__.py')])
        self.assertEqual(frames[1]['chunk']['symbol'], 'load')
        self.assertEqual([(f['inside_root'], f['path']) for f in frames[2:]],
                         [(False, None)] * (len(frames) - 2))


# --- in-process helpers ------------------------------------------------------------

class ClosedInputTests(unittest.TestCase):
    @unittest.skipUnless(shutil.which('sh'), 'needs sh')
    def test_trace_and_mcp_with_stdin_closed_are_one_line_and_status_2(self):
        tmp = Path(tempfile.mkdtemp(prefix='cs_closed_'))
        self.addCleanup(shutil.rmtree, tmp, True)
        write(tmp / 'proj', 'a.py', 'def f():\n    return 1\n')
        build_index(tmp / 'proj', tmp / 'index.json')
        for command, reason in ((['trace', '-'], 'cannot read trace -'),
                                (['mcp'], 'cannot read requests')):
            result = subprocess.run(['sh', '-c', 'exec "$@" <&-', 'sh', sys.executable,
                                     str(TOOL), *command, '--index', str(tmp / 'index.json')],
                                    capture_output=True, text=True, env=ENV, timeout=TIMEOUT)
            self.assertEqual((result.returncode, result.stderr.splitlines()[-1:]),
                             (2, [f'code_search.py: error: {reason}: standard input is closed']))
            self.assertNotIn('Traceback', result.stderr)


class ParseTracebackTests(unittest.TestCase):
    def test_cause_and_context_chains(self):
        text = textwrap.dedent('''\
            Traceback (most recent call last):
              File "/srv/proj/app/helper.py", line 10, in load
                return parse_config(text)
                       ^^^^^^^^^^^^^^^^^^
              File "/usr/lib/python3.12/json/__init__.py", line 346, in loads
                return _default_decoder.decode(s)
            json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)

            The above exception was the direct cause of the following exception:

            Traceback (most recent call last):
              File "/srv/proj/main.py", line 10, in <module>
                main()
              File "/srv/proj/app/helper.py", line 13, in load
                raise RuntimeError('config is broken') from error
            RuntimeError: config is broken

            During handling of the above exception, another exception occurred:

            Traceback (most recent call last):
              File "/srv/proj/main.py", line 12, in <module>
                cleanup()
            KeyError: 'session'
            ''')
        self.assertEqual(python_blocks(text), [
            {'frames': [{'file': '/srv/proj/app/helper.py', 'line': 10, 'name': 'load'},
                        {'file': '/usr/lib/python3.12/json/__init__.py', 'line': 346,
                         'name': 'loads'}],
             'message': 'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 '
                        '(char 0)',
             'then': CAUSE},
            {'frames': [{'file': '/srv/proj/main.py', 'line': 10, 'name': '<module>'},
                        {'file': '/srv/proj/app/helper.py', 'line': 13, 'name': 'load'}],
             'message': 'RuntimeError: config is broken', 'then': CONTEXT},
            {'frames': [{'file': '/srv/proj/main.py', 'line': 12, 'name': '<module>'}],
             'message': "KeyError: 'session'", 'then': ''}])

    def test_exception_group(self):
        # Python 3.11+ prints groups with '  | ' prefixes and '+-+---- n ----' rulers.
        text = textwrap.dedent('''\
              + Exception Group Traceback (most recent call last):
              |   File "/srv/proj/main.py", line 13, in <module>
              |     run()
              |     ~~~^^
              |   File "/srv/proj/main.py", line 12, in run
              |     raise ExceptionGroup('many', errors)
              | ExceptionGroup: many (2 sub-exceptions)
              +-+---------------- 1 ----------------
                | Traceback (most recent call last):
                |   File "/srv/proj/main.py", line 9, in run
                |     f(a) if a else f()
                |     ~^^^
                |   File "/srv/proj/checks.py", line 2, in check
                |     raise ValueError(v)
                | ValueError: a
                +---------------- 2 ----------------
                | Traceback (most recent call last):
                |   File "/srv/proj/main.py", line 9, in run
                |     f(a) if a else f()
                |                    ~^^
                |   File "/srv/proj/checks.py", line 4, in other
                |     raise TypeError('b')
                | TypeError: b
                +------------------------------------
            ''')
        self.assertEqual(python_blocks(text), [
            {'frames': [{'file': '/srv/proj/main.py', 'line': 13, 'name': '<module>'},
                        {'file': '/srv/proj/main.py', 'line': 12, 'name': 'run'}],
             'message': 'ExceptionGroup: many (2 sub-exceptions)', 'then': ''},
            {'frames': [{'file': '/srv/proj/main.py', 'line': 9, 'name': 'run'},
                        {'file': '/srv/proj/checks.py', 'line': 2, 'name': 'check'}],
             'message': 'ValueError: a', 'then': ''},
            {'frames': [{'file': '/srv/proj/main.py', 'line': 9, 'name': 'run'},
                        {'file': '/srv/proj/checks.py', 'line': 4, 'name': 'other'}],
             'message': 'TypeError: b', 'then': ''}])

    def test_exceptions_of_a_group_without_tracebacks(self):
        text = textwrap.dedent('''\
              + Exception Group Traceback (most recent call last):
              |   File "/srv/proj/main.py", line 3, in <module>
              |     raise ExceptionGroup("g", [ValueError("a"), ExceptionGroup("inner", [
              | ExceptionGroup: g (2 sub-exceptions)
              +-+---------------- 1 ----------------
                | ValueError: a
                +---------------- 2 ----------------
                | ExceptionGroup: inner (1 sub-exception)
                +-+---------------- 1 ----------------
                  | KeyError: 'k'
                  +------------------------------------
            After the group
            ''')    # as Python 3.13 prints a group raised with exceptions never raised
        self.assertEqual([(len(b['frames']), b['message']) for b in python_blocks(text)],
                         [(1, 'ExceptionGroup: g (2 sub-exceptions)'), (0, 'ValueError: a'),
                          (0, 'ExceptionGroup: inner (1 sub-exception)'), (0, "KeyError: 'k'")])
        shown = code_search.format_traceback(code_search.explain_traceback([], text))
        self.assertEqual(shown.splitlines()[-4:], ['ExceptionGroup: g (2 sub-exceptions)',
                                                   'ValueError: a',
                                                   'ExceptionGroup: inner (1 sub-exception)',
                                                   "KeyError: 'k'"])

    def test_exception_group_inside_a_chain(self):
        text = textwrap.dedent('''\
            Traceback (most recent call last):
              File "/srv/proj/a.py", line 3, in f
                g()
            OSError: disk full

            During handling of the above exception, another exception occurred:

              + Exception Group Traceback (most recent call last):
              |   File "/srv/proj/a.py", line 8, in h
              |     raise ExceptionGroup('cleanup', [e])
              | ExceptionGroup: cleanup (1 sub-exception)
              +-+---------------- 1 ----------------
                | Traceback (most recent call last):
                |   File "/srv/proj/b.py", line 5, in close
                |     raise OSError('busy')
                | OSError: busy
                +------------------------------------
            ''')
        parsed = python_blocks(text)
        self.assertEqual([([(f['file'], f['line'], f['name']) for f in b['frames']],
                           b['message'], b['then']) for b in parsed],
                         [([('/srv/proj/a.py', 3, 'f')], 'OSError: disk full', CONTEXT),
                          ([('/srv/proj/a.py', 8, 'h')],
                           'ExceptionGroup: cleanup (1 sub-exception)', ''),
                          ([('/srv/proj/b.py', 5, 'close')], 'OSError: busy', '')])


def python_blocks(text):
    """parse_traces' blocks without their language and block names (all Python here)."""
    blocks = code_search.parse_traces(text)
    assert {block['language'] for block in blocks} <= {'python'}, blocks
    return [{key: block[key] for key in ('frames', 'message', 'then')} for block in blocks]


class MatchFramePathTests(unittest.TestCase):
    def setUp(self):
        self.root = os.path.join(tempfile.gettempdir(), 'cs_match_root')
        self.index = {'root': self.root,
                      'files': {'a/util.py': {}, 'b/util.py': {}, 'util.py': {},
                                'pkg/core/models.py': {}}}

    def test_longest_suffix_wins(self):
        match = match_frame_path
        self.assertEqual(match(self.index, '/home/alice/work/proj/b/util.py'), 'b/util.py')
        self.assertEqual(match(self.index, '/home/alice/work/proj/a/util.py'), 'a/util.py')
        self.assertEqual(match(self.index, '/home/alice/work/proj/util.py'), 'util.py')
        self.assertEqual(match(self.index, '/opt/x/c/util.py'), 'util.py')
        self.assertEqual(match(self.index, '/deploy/src/pkg/core/models.py'),
                         'pkg/core/models.py')

    def test_windows_paths(self):
        match = match_frame_path
        self.assertEqual(match(self.index, 'C:\\Users\\bob\\proj\\b\\util.py'), 'b/util.py')
        self.assertEqual(match(self.index, 'C:\\Users\\bob\\proj\\pkg\\core\\models.py'),
                         'pkg/core/models.py')
        self.assertEqual(match(self.index, 'D:/build/proj/a/util.py'), 'a/util.py')

    def test_inside_root_and_no_match(self):
        match = match_frame_path
        self.assertEqual(match(self.index, os.path.join(self.root, 'a', 'util.py')),
                         'a/util.py')
        self.assertIsNone(match(self.index, '/home/alice/work/proj/models.py'))
        self.assertIsNone(match(self.index, '/home/alice/work/proj/core/other.py'))
        self.assertIsNone(match(self.index, '<frozen importlib._bootstrap>'))


# --- MCP server ----------------------------------------------------------------------

TOOL_NAMES = ['search_code', 'find_symbol', 'locate', 'explain_traceback', 'file_outline',
              'grep_code', 'read_file', 'list_files', 'index_status']


class McpSession:
    """One `code_search.py mcp ...` process driven with raw JSON-RPC lines."""

    def __init__(self, test, *args):
        self.test = test
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, str(TOOL), 'mcp'] + [str(a) for a in args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=ENV)
        self.lines = queue.Queue()
        self.raw = []
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        test.addCleanup(self.kill)

    def _read(self):
        for line in iter(self.proc.stdout.readline, b''):
            self.raw.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=READ_TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.reader.join(READ_TIMEOUT)
        self.stderr.close()

    def stderr_text(self):
        self.stderr.seek(0)
        return self.stderr.read().decode('utf-8', 'replace')

    def send(self, message):
        data = message if isinstance(message, bytes) else \
            json.dumps(message).encode('utf-8') + b'\n'
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv(self):
        try:
            line = self.lines.get(timeout=READ_TIMEOUT)
        except queue.Empty:
            self.test.fail(f'no reply within {READ_TIMEOUT} s; stderr:\n{self.stderr_text()}')
        if line is None:
            self.test.fail(f'server closed stdout; stderr:\n{self.stderr_text()}')
        return json.loads(line.decode('utf-8'))

    def request(self, method, params=None):
        self.next_id += 1
        message = {'jsonrpc': '2.0', 'id': self.next_id, 'method': method}
        if params is not None:
            message['params'] = params
        self.send(message)
        reply = self.recv()
        self.test.assertEqual((reply.get('jsonrpc'), reply.get('id')), ('2.0', self.next_id),
                              reply)
        return reply

    def initialize(self, version='2025-11-25'):
        reply = self.request('initialize', {'protocolVersion': version, 'capabilities': {},
                                            'clientInfo': {'name': 'test', 'version': '1'}})
        self.send({'jsonrpc': '2.0', 'method': 'notifications/initialized'})
        return reply['result']

    def call(self, name, arguments=None):
        params = {'name': name}
        if arguments is not None:
            params['arguments'] = arguments
        return self.request('tools/call', params)

    def result(self, name, arguments=None):
        reply = self.call(name, arguments)
        self.test.assertIn('result', reply, reply)
        return reply['result']

    def close(self):
        """Close stdin; the server must exit 0 and have written only JSON lines."""
        self.proc.stdin.close()
        status = self.proc.wait(timeout=READ_TIMEOUT)
        self.reader.join(READ_TIMEOUT)
        for line in self.raw:
            message = json.loads(line.decode('utf-8'))
            self.test.assertIsInstance(message, (dict, list))
        return status


class McpTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix='cs_mcp_')).resolve()
        cls.root = cls.tmp / 'proj'
        make_billing_tree(cls.root)
        (cls.tmp / 'outside.py').write_text(f'SECRET = "{SECRET}"\n\n\ndef leak():\n'
                                            f'    return "{SECRET}"\n', encoding='utf-8')
        cls.has_link = True
        try:
            os.symlink(str(cls.tmp / 'outside.py'), str(cls.root / 'link.py'))
        except (OSError, NotImplementedError):
            cls.has_link = False
        cls.index = cls.tmp / 'index.json'
        build_index(cls.root, cls.index)
        cls.invoice = cls.root / 'billing/invoice.py'
        cls.util = cls.root / 'util.py'
        cls.reports = cls.root / 'reports.py'

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def session(self, *args):
        return McpSession(self, *(args or ('--index', self.index)))

    def text_of(self, result):
        self.assertEqual(result['content'][0]['type'], 'text')
        self.assertIsInstance(result['content'][0]['text'], str)
        return result['content'][0]['text']

    # handshake -------------------------------------------------------------------

    def test_initialize_negotiates_version(self):
        for asked, answered in (('2025-11-25', '2025-11-25'), ('2025-06-18', '2025-06-18'),
                                ('2025-03-26', '2025-03-26'), ('2024-11-05', '2024-11-05'),
                                ('2024-01-01', '2025-11-25')):
            with self.subTest(asked=asked):
                server = self.session()
                result = server.initialize(asked)
                self.assertEqual(result['protocolVersion'], answered)
                self.assertIsInstance(result['serverInfo']['name'], str)
                self.assertTrue(result['serverInfo']['name'])
                self.assertIsInstance(result['serverInfo']['version'], str)
                self.assertIsInstance(result['capabilities']['tools'], dict)
                self.assertIsInstance(result['instructions'], str)
                self.assertTrue(result['instructions'].strip())
                self.assertEqual(server.close(), 0)

    def test_initialized_notification_gets_no_reply_and_ping_is_empty(self):
        server = self.session()
        server.request('initialize', {'protocolVersion': '2025-11-25', 'capabilities': {},
                                      'clientInfo': {'name': 't', 'version': '1'}})
        server.send({'jsonrpc': '2.0', 'method': 'notifications/initialized'})
        server.send({'jsonrpc': '2.0', 'id': 'ping-1', 'method': 'ping'})
        self.assertEqual(server.recv(), {'jsonrpc': '2.0', 'id': 'ping-1', 'result': {}})
        self.assertEqual(server.request('ping'), {'jsonrpc': '2.0', 'id': 2, 'result': {}})
        self.assertEqual(server.close(), 0)
        self.assertEqual(len(server.raw), 3)

    def test_tools_list(self):
        server = self.session()
        server.initialize()
        tools = server.request('tools/list')['result']['tools']
        self.assertEqual([t['name'] for t in tools], TOOL_NAMES)
        required = {t['name']: sorted(t['inputSchema'].get('required', [])) for t in tools}
        self.assertEqual(required, {'search_code': ['query'], 'find_symbol': ['name'],
                                    'locate': ['line', 'path'],
                                    'explain_traceback': ['traceback'],
                                    'file_outline': ['path'], 'grep_code': ['pattern'],
                                    'read_file': ['path'], 'list_files': [],
                                    'index_status': []})
        for tool in tools:
            self.assertEqual(tool['inputSchema']['type'], 'object')
            self.assertIsInstance(tool['description'], str)
        self.assertEqual(server.close(), 0)

    # tools -----------------------------------------------------------------------

    def check_every_tool(self, server, index_label):
        server.initialize('2025-11-25')
        # find_symbol
        result = server.result('find_symbol', {'name': 'total_with_tax'})
        self.assertFalse(result.get('isError', False), result)
        found = result['structuredContent']['results']
        self.assertEqual([(r['symbol'], r['path'], r['start'], r['end']) for r in found],
                         [('Invoice.total_with_tax', 'billing/invoice.py', 12, 13),
                          ('Order.total_with_tax', 'shop/order.py', 2, 3),
                          ('Total_With_Tax', 'util.py', 1, 2)])
        for entry in found:
            self.assertLessEqual(RESULT_KEYS, set(entry))
            self.assertIs(entry['stale'], False)
            self.assertEqual(entry['revision'], revision(self.root / entry['path']))
            self.assertEqual(entry['text'], source_slice(self.root / entry['path'],
                                                         entry['start'], entry['end']))
        self.assertIs(result['structuredContent']['truncated'], False)
        self.assertEqual(result['structuredContent']['name'], 'total_with_tax')   # as --json
        self.assertEqual([r['match'] for r in found], ['suffix', 'suffix', 'case-insensitive'])
        text = self.text_of(result)
        self.assertIn('billing/invoice.py:12-13 Invoice.total_with_tax', text)
        self.assertIn('        return self.amount * (1 + TAX_RATE)', text)
        # search_code
        result = server.result('search_code', {'query': 'total_with_tax', 'top_k': 3})
        self.assertFalse(result.get('isError', False), result)
        self.assertEqual(result['structuredContent']['query'], 'total_with_tax')
        found = result['structuredContent']['results']
        self.assertEqual(sorted(r['symbol'] for r in found),
                         ['Invoice.total_with_tax', 'Order.total_with_tax', 'Total_With_Tax'])
        for entry in found:
            self.assertLessEqual(RESULT_KEYS, set(entry))
            self.assertEqual(entry['text'], source_slice(self.root / entry['path'],
                                                         entry['start'], entry['end']))
        result = server.result('search_code', {'query': 'total_with_tax',
                                               'path_prefix': 'shop'})
        self.assertEqual([r['symbol'] for r in result['structuredContent']['results']],
                         ['Order.total_with_tax'])
        # locate
        line = line_of(self.util, 'return value * 2')
        result = server.result('locate', {'path': 'util.py', 'line': line})
        self.assertFalse(result.get('isError', False), result)
        located = result['structuredContent']          # the shape `at --json` prints
        self.assertEqual((located['path'], located['line']), ('util.py', line))
        r = located['result']
        self.assertEqual((r['symbol'], r['path'], r['start'], r['end'], r['text'],
                          r['revision'], r['stale'], r['line']),
                         ('outer.inner', 'util.py', 6, 7, source_slice(self.util, 6, 7),
                          revision(self.util), False, line))
        self.assertIn('return value * 2', self.text_of(result))
        result = server.result('locate', {'path': str(self.invoice), 'line': 10})
        self.assertEqual(result['structuredContent']['result']['symbol'], 'Invoice.__init__')
        result = server.result('locate', {'path': 'util.py', 'line': 3})    # between them
        self.assertFalse(result.get('isError', False), result)
        self.assertEqual(result['structuredContent'], {'path': 'util.py', 'line': 3,
                                                       'result': None, 'truncated': False})
        self.assertEqual(json.loads(run_tool('at', 'util.py:3', '--index', self.index,
                                             '--json').stdout)['result'], None)
        # explain_traceback (a traceback from another machine)
        traceback = ('Traceback (most recent call last):\n'
                     '  File "/home/alice/proj/billing/invoice.py", line 13, in '
                     'total_with_tax\n'
                     '    return self.amount * (1 + TAX_RATE)\n'
                     '  File "/usr/lib/python3.12/decimal.py", line 5, in x\n'
                     "TypeError: unsupported operand type(s) for *: 'str' and 'float'\n")
        result = server.result('explain_traceback', {'traceback': traceback})
        self.assertFalse(result.get('isError', False), result)
        exceptions = result['structuredContent']['exceptions']
        self.assertEqual(len(exceptions), 1)
        frames = exceptions[0]['frames']
        self.assertEqual([(f['inside_root'], f['path'], f['line']) for f in frames],
                         [(True, 'billing/invoice.py', 13), (False, None, 5)])
        chunk = frames[0]['chunk']
        self.assertEqual((chunk['symbol'], chunk['start'], chunk['end'], chunk['revision'],
                          chunk['stale'], chunk['text']),
                         ('Invoice.total_with_tax', 12, 13, revision(self.invoice), False,
                          source_slice(self.invoice, 12, 13)))
        self.assertEqual(exceptions[0]['message'],
                         "TypeError: unsupported operand type(s) for *: 'str' and 'float'")
        text = self.text_of(result)
        self.assertIn('> 13 |         return self.amount * (1 + TAX_RATE)', text)
        self.assertIn(OUTSIDE, text)
        # file_outline
        result = server.result('file_outline', {'path': 'billing/invoice.py'})
        self.assertFalse(result.get('isError', False), result)
        files = result['structuredContent']['files']
        self.assertEqual([(f['path'], f['language']) for f in files],
                         [('billing/invoice.py', 'python')])
        self.assertEqual([(c['symbol'], c['kind'], c['start'], c['end'])
                          for c in files[0]['chunks']],
                         [('TAX_RATE', 'constant', 3, 3), ('Invoice', 'class', 6, 13),
                          ('Invoice.__init__', 'method', 9, 10),
                          ('Invoice.total_with_tax', 'method', 12, 13)])
        text = self.text_of(result)
        for fragment in ('TAX_RATE', 'Invoice.__init__', 'Invoice.total_with_tax'):
            self.assertIn(fragment, text)
        # index_status
        result = server.result('index_status', {})
        self.assertFalse(result.get('isError', False), result)
        status = result['structuredContent']
        self.assertEqual((status['root'], status['files'], status['chunks']),
                         (str(self.root), 4, 11), index_label)   # 8 + 2 classes + module
        self.assertIn(str(self.root), self.text_of(result))
        self.assertEqual(server.close(), 0)

    def test_every_tool_with_index_file(self):
        self.check_every_tool(self.session('--index', self.index), 'index file')

    def test_every_tool_with_root_folder(self):
        self.check_every_tool(self.session(self.root), 'root folder')

    def test_structured_content_only_from_2025_06_18(self):
        for version, structured in (('2024-11-05', False), ('2025-03-26', False),
                                    ('2025-06-18', True)):
            with self.subTest(version=version):
                server = self.session()
                server.initialize(version)
                result = server.result('find_symbol', {'name': 'Invoice.total_with_tax'})
                self.assertIn('billing/invoice.py:12-13 Invoice.total_with_tax',
                              self.text_of(result))
                self.assertEqual('structuredContent' in result, structured, result)
                self.assertEqual(server.close(), 0)

    def test_max_chars_truncates(self):
        server = self.session()
        server.initialize()
        full = source_slice(self.reports, 1, 83)
        self.assertGreater(len(full), 3000)
        result = server.result('find_symbol', {'name': 'big_report', 'max_chars': 200})
        self.assertFalse(result.get('isError', False), result)
        structured = result['structuredContent']
        self.assertIs(structured['truncated'], True)
        entry = structured['results'][0]
        self.assertEqual((entry['symbol'], entry['start'], entry['end']), ('big_report', 1, 83))
        self.assertIs(entry.get('truncated'), True)
        self.assertTrue(entry['text'].startswith(full[:100]), entry['text'])
        self.assertTrue(entry['text'].endswith('\n... [truncated]'), entry['text'])
        text = self.text_of(result)
        self.assertTrue(text.endswith('[output truncated to max_chars]'), text)
        self.assertLessEqual(len(text), 200)         # the heading and the notes included
        line = line_of(self.reports, 'report line 040')
        result = server.result('locate', {'path': 'reports.py', 'line': line,
                                          'max_chars': 200})
        self.assertIs(result['structuredContent']['truncated'], True)
        self.assertIn('truncated', self.text_of(result))
        traceback = ('Traceback (most recent call last):\n'
                     f'  File "/x/reports.py", line {line}, in big_report\n'
                     'ValueError: boom\n')
        result = server.result('explain_traceback', {'traceback': traceback,
                                                     'max_chars': 200})
        self.assertIs(result['structuredContent']['truncated'], True)
        self.assertIn('truncated', self.text_of(result))
        self.assertLessEqual(len(self.text_of(result)), 200)
        self.assertLess(len(json.dumps(result['structuredContent'])), 1500)    # not 3000+
        many = ''.join(f'  File "/x/reports.py", line {n}, in big_report\n' for n in range(1, 84))
        result = server.result('explain_traceback', {
            'traceback': 'Traceback (most recent call last):\n' + many + 'ValueError: boom\n',
            'max_chars': 2000})
        frames = result['structuredContent']['exceptions'][0]['frames']
        self.assertTrue(0 < len(frames) < 83, len(frames))
        texts = [frame['chunk'].pop('text') for frame in frames if frame['chunk']]
        self.assertLessEqual(len(json.dumps(frames, ensure_ascii=False)), 2000)
        self.assertLessEqual(sum(map(len, texts)), 2000)
        self.assertIs(result['structuredContent']['truncated'], True)
        one = 'Traceback (most recent call last):\n' + many[:200] + 'ValueError: boom\n\n'
        result = server.result('explain_traceback', {'traceback': one * 300,  # a long log:
                                                     'max_chars': 2000})      # not 300 blocks
        self.assertLess(len(json.dumps(result['structuredContent'])), 2 * 2000 + 500)
        self.assertLess(len(result['structuredContent']['exceptions']), 10)
        result = server.result('file_outline', {'path': '.', 'max_chars': 200})
        outline = result['structuredContent']
        self.assertIs(outline['truncated'], True)
        self.assertLessEqual(len(json.dumps([c for f in outline['files'] for c in f['chunks']])),
                             300)
        self.assertLessEqual(len(self.text_of(result)), 200)
        counts = []                 # explain lines and a glob note stay in the budget too
        for budget in range(200, 1200, 50):
            result = server.result('search_code', {
                'query': 'big report line', 'explain': True, 'max_chars': budget,
                'path_prefix': 'reports.py,' + 'z' * 150})
            self.assertLessEqual(len(self.text_of(result)), budget)
            counts.append(len(result['structuredContent']['results']))
        self.assertEqual(counts, sorted(counts))    # a larger budget never gives fewer
        self.assertGreater(counts[-1], 0)
        # without a budget the whole function comes back
        result = server.result('find_symbol', {'name': 'big_report'})
        self.assertIs(result['structuredContent']['truncated'], False)
        self.assertEqual(result['structuredContent']['results'][0]['text'], full)
        self.assertEqual(server.close(), 0)

    BAD_CALLS = (('find_symbol', {}), ('find_symbol', {'name': 7}),
                 ('locate', {'path': 'util.py'}), ('locate', {'path': 'util.py', 'line': '7'}),
                 ('search_code', {'query': 'x', 'top_k': 'many'}),
                 ('search_code', {'query': 'q' * (code_search.QUESTION_LIMIT + 1)}),
                 ('search_code', {'query': ' \t'}), ('find_symbol', {'name': '  '}),
                 ('explain_traceback', {'traceback': ['not', 'text']}),
                 ('file_outline', {}))

    def test_bad_arguments_are_tool_errors_in_2025_11_25(self):
        server = self.session()
        server.initialize('2025-11-25')
        for name, arguments in self.BAD_CALLS:
            with self.subTest(name=name, arguments=arguments):
                reply = server.call(name, arguments)
                self.assertNotIn('error', reply)
                self.assertIs(reply['result']['isError'], True)
                self.assertTrue(self.text_of(reply['result']).strip())
        self.assertIn('name', self.text_of(server.result('find_symbol', {})))
        self.assertIn('at most %d characters' % code_search.QUESTION_LIMIT, self.text_of(
            server.result('search_code', {'query': 'q' * (code_search.QUESTION_LIMIT + 1)})))
        self.assertEqual(server.close(), 0)

    def test_bad_arguments_are_protocol_errors_before_2025_11_25(self):
        for version in ('2025-06-18', '2025-03-26', '2024-11-05'):
            server = self.session()
            server.initialize(version)
            for name, arguments in self.BAD_CALLS:
                with self.subTest(version=version, name=name, arguments=arguments):
                    reply = server.call(name, arguments)
                    self.assertNotIn('result', reply)
                    self.assertEqual(reply['error']['code'], -32602)
                    self.assertIsInstance(reply['error']['message'], str)
            self.assertEqual(server.close(), 0)

    def test_unknown_tool_and_unknown_methods(self):
        for version in ('2025-11-25', '2025-06-18'):
            with self.subTest(version=version):
                server = self.session()
                server.initialize(version)
                reply = server.call('run_shell', {'command': 'ls'})
                self.assertEqual(reply['error']['code'], -32602)
                self.assertNotIn('result', reply)
                reply = server.request('tools/call')
                self.assertEqual(reply['error']['code'], -32602)
                self.assertIn('needs a name', reply['error']['message'])
                for name in (['read_file'], {'a': 1}, 3):     # a list is no dict key
                    reply = server.request('tools/call', {'name': name})
                    self.assertEqual(reply['error']['code'], -32602, name)
                for method in ('resources/list', 'server/discover', 'prompts/get'):
                    reply = server.request(method, {})
                    self.assertEqual(reply['error']['code'], -32601, reply)
                    self.assertNotIn('result', reply)
                self.assertEqual(server.close(), 0)

    def test_garbage_line_is_parse_error_with_null_id(self):
        server = self.session()
        server.initialize()
        server.send(b'this is {not json\n')
        reply = server.recv()
        self.assertEqual((reply['jsonrpc'], reply['id'], reply['error']['code']),
                         ('2.0', None, -32700))
        self.assertNotIn('result', reply)
        self.assertEqual(server.request('ping')['result'], {})      # still serving
        self.assertEqual(server.close(), 0)

    def test_an_invalid_request_keeps_its_id_and_a_response_is_not_answered(self):
        server = self.session()
        server.initialize()
        server.send(b'{"jsonrpc": "2.0", "id": 911, "result": {}}\n')      # a response
        server.send(b'{"jsonrpc": "1.0", "id": 909, "method": "ping"}\n')
        reply = server.recv()
        self.assertEqual((reply['id'], reply['error']['code']), (909, -32600))
        server.send(b'{"jsonrpc": "2.0", "id": "x"}\n')
        self.assertEqual((server.recv()['id']), 'x')
        server.send(b'{}\n')                          # neither a request nor a response
        self.assertEqual(server.recv(), {'jsonrpc': '2.0', 'id': None, 'error': {
            'code': -32600, 'message': 'Invalid Request'}})
        for invalid in (b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}\n',   # JSON-RPC 7
                        b'{"jsonrpc": "1.0", "method": "ping"}\n'):
            server.send(invalid)
            self.assertEqual(server.recv(), {'jsonrpc': '2.0', 'id': None, 'error': {
                'code': -32600, 'message': 'Invalid Request'}})
        for params in ([], 0):
            self.assertEqual(server.request('tools/call', params)['error']['code'], -32602)
            reply = server.request('tools/call', {'name': 'index_status', 'arguments': params})
            self.assertEqual(reply['error']['code'], -32602, params)
        self.assertEqual(server.request('ping')['result'], {})
        self.assertEqual(server.close(), 0)

    def test_a_message_over_the_limit_is_refused_unread_and_the_session_goes_on(self):
        import io
        lines = [json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'ping',
                             'params': {'pad': 'x' * 300}}).encode() + b'\n',
                 json.dumps({'jsonrpc': '2.0', 'id': 2, 'method': 'ping'}).encode() + b'\n']
        stdout = io.BytesIO()
        with unittest.mock.patch.object(code_search, 'MCP_MESSAGE_LIMIT', 100):
            code_search.serve_mcp(lambda label=None: [], io.BytesIO(b''.join(lines)), stdout)
        replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
        self.assertEqual(replies, [
            {'jsonrpc': '2.0', 'id': None, 'error': {
                'code': -32600, 'message': 'Invalid Request: a message over 100 bytes'}},
            {'jsonrpc': '2.0', 'id': 2, 'result': {}}])

    def test_a_bug_of_ours_is_an_internal_error_and_the_session_goes_on(self):
        import contextlib
        import io
        lines = [json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list'}).encode() + b'\n',
                 json.dumps({'jsonrpc': '2.0', 'id': 2, 'method': 'ping'}).encode() + b'\n']
        stdout, stderr = io.BytesIO(), io.StringIO()
        with unittest.mock.patch.object(code_search, 'mcp_tool_list',
                                        side_effect=RuntimeError('a bug')), \
                contextlib.redirect_stderr(stderr):
            code_search.serve_mcp(lambda label=None: [], io.BytesIO(b''.join(lines)), stdout)
        replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
        self.assertEqual(replies, [
            {'jsonrpc': '2.0', 'id': 1, 'error': {
                'code': -32603, 'message': "Internal error: RuntimeError('a bug')"}},
            {'jsonrpc': '2.0', 'id': 2, 'result': {}}])
        self.assertEqual(stderr.getvalue(),
                         "code_search mcp: internal error: RuntimeError('a bug')\n")

    def test_a_message_of_just_the_limit_is_read(self):
        import io
        line = json.dumps({'jsonrpc': '2.0', 'id': 7, 'method': 'ping'}).encode()
        stdout = io.BytesIO()
        with unittest.mock.patch.object(code_search, 'MCP_MESSAGE_LIMIT', len(line)):
            code_search.serve_mcp(lambda label=None: [],
                                  io.BytesIO(line + b'\r\n' + line + b'\n'), stdout)
        self.assertEqual([json.loads(reply) for reply in stdout.getvalue().splitlines()],
                         [{'jsonrpc': '2.0', 'id': 7, 'result': {}}] * 2)

    def test_initialize_is_never_part_of_a_batch(self):
        import io
        initialize = {'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
            'protocolVersion': '2025-03-26', 'capabilities': {},
            'clientInfo': {'name': 't', 'version': '1'}}}
        batch = [dict(initialize, id=2, params=dict(initialize['params'],
                                                     protocolVersion='2025-06-18')),
                 {'jsonrpc': '2.0', 'id': 3, 'method': 'ping'}]
        stdout = io.BytesIO()
        code_search.serve_mcp(lambda label=None: [], io.BytesIO(
            (json.dumps(initialize) + '\n' + json.dumps(batch) + '\n').encode()), stdout)
        replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
        self.assertEqual(replies[0]['result']['protocolVersion'], '2025-03-26')
        self.assertEqual(replies[1], [          # 2025-03-26: initialize MUST NOT be batched
            {'jsonrpc': '2.0', 'id': 2, 'error': {
                'code': -32600, 'message': 'Invalid Request: initialize cannot be part of a '
                                           'batch'}},
            {'jsonrpc': '2.0', 'id': 3, 'result': {}}])

    def test_a_whole_number_written_as_a_float_is_an_integer(self):
        server = self.session()
        server.initialize()
        found = server.result('search_code', {'query': 'invoice total', 'top_k': 1.0})
        self.assertFalse(found['isError'], found)
        self.assertEqual(len(found['structuredContent']['results']), 1)
        self.assertTrue(server.result('search_code', {'query': 'invoice', 'top_k': 1.5})['isError'])
        self.assertEqual(server.close(), 0)

    def test_paths_outside_the_root_are_refused(self):
        escapes = ['../outside.py', str(self.tmp / 'outside.py'), '/etc/passwd',
                   'billing/../../outside.py', str(self.root / '..' / 'outside.py')]
        if self.has_link:
            escapes += ['link.py', str(self.root / 'link.py')]
        for args in (('--index', self.index), (self.root,)):
            server = self.session(*args)
            server.initialize()
            for path in escapes:
                for name, arguments in (('locate', {'path': path, 'line': 1}),
                                        ('locate', {'path': path, 'line': 5}),
                                        ('file_outline', {'path': path})):
                    with self.subTest(args=args, path=path, tool=name):
                        reply = server.call(name, arguments)
                        self.assertIs(reply['result']['isError'], True, reply)
                        dumped = json.dumps(reply)
                        self.assertNotIn(SECRET, dumped)
                        self.assertNotIn('leak', dumped)
                        self.assertNotIn('root:x:', dumped)
            reply = server.call('search_code', {'query': 'leak secret',
                                                'path_prefix': '../'})
            self.assertIs(reply['result']['isError'], True, reply)
            reply = server.call('search_code', {'query': 'leak secret outside'})
            self.assertNotIn(SECRET, json.dumps(reply))
            self.assertEqual(server.close(), 0)

    def test_stdout_is_only_json_and_exit_status_0(self):
        server = self.session()
        server.initialize()
        server.request('tools/list')
        server.send(b'\xff\xfe garbage\n')
        self.assertEqual(server.recv()['error']['code'], -32700)
        server.call('find_symbol', {'name': 'total_with_tax'})
        server.call('locate', {'path': '../outside.py', 'line': 1})
        server.send({'jsonrpc': '2.0', 'method': 'notifications/cancelled',
                     'params': {'requestId': 1}})
        self.assertEqual(server.request('ping')['result'], {})
        self.assertEqual(server.close(), 0)      # also parses every stdout line
        self.assertEqual(len(server.raw), 6)
        self.assertTrue(all(line.endswith(b'\n') for line in server.raw))

    def test_missing_index_fails_at_start(self):
        result = subprocess.run([sys.executable, str(TOOL), 'mcp', '--index',
                                 str(self.tmp / 'missing.json')], input=b'',
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                                timeout=TIMEOUT)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stdout, b'')
        self.assertIn(b'index file not found', result.stderr)

    def test_rebuilt_index_is_picked_up_without_restart(self):
        root = self.tmp / 'live'
        make_billing_tree(root)
        index = self.tmp / 'live.json'
        build_index(root, index)
        server = self.session('--index', index)
        server.initialize()
        result = server.result('find_symbol', {'name': 'fresh_function'})
        self.assertEqual(result['structuredContent']['results'], [])
        with (root / 'util.py').open('a', encoding='utf-8') as handle:
            handle.write('\n\ndef fresh_function():\n    return "new"\n')
        # edited but not re-indexed: old chunks are flagged stale
        result = server.result('find_symbol', {'name': 'outer'})
        self.assertEqual([(r['symbol'], r['stale']) for r in
                          result['structuredContent']['results']], [('outer', True)])
        build_index(root, index)
        result = server.result('find_symbol', {'name': 'fresh_function'})
        found = result['structuredContent']['results']
        self.assertEqual([(r['symbol'], r['path'], r['start'], r['end'], r['stale'], r['text'])
                          for r in found],
                         [('fresh_function', 'util.py', 12, 13, False,
                           'def fresh_function():\n    return "new"')])
        self.assertEqual(found[0]['revision'], revision(root / 'util.py'))
        status = server.result('index_status', {})['structuredContent']
        self.assertEqual(status['chunks'], 12)   # 9 definitions, 2 classes, module code
        self.assertEqual(server.close(), 0)


if __name__ == '__main__':
    unittest.main()

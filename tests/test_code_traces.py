"""code_search.py trace on real stack traces of every language.

tests/fixtures/traces/<language>/ holds a small program and the traces it printed
(trace_*.txt, captured once, absolute paths of the machine that ran them kept), with
the answer for each frame that points into the program: its file, line and the
definition that holds the line (*.expected.json; see the README there).  Standard
library only."""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import unittest
from pathlib import Path

from tests.support import CODE_TOOL, ENV, ROOT, TempDirCase, run_cli, write

import code_search

TRACES = ROOT / 'tests' / 'fixtures' / 'traces'
LANGUAGES = ('java', 'kotlin', 'go', 'node', 'rust', 'python')


def cli(*args, **kwargs):
    return run_cli(CODE_TOOL, *args, **kwargs)


def program_index(case, language):
    """Index a copy of one fixture program (its sources only); the index's path."""
    root = case.tmp / language
    shutil.copytree(TRACES / language, root,
                    ignore=shutil.ignore_patterns('*.txt', '*.json'))
    out = case.tmp / f'{language}.json'
    result = cli('index', root, '--out', out)
    case.assertEqual(result.returncode, 0, result.stderr)
    return out


def own_frames(traced):
    """The frames of trace --json output that point into the program, in order, as
    (kind, path, line, symbol); symbol None for module level.  A block the trace holds
    again (goroutines waiting in one place) is shown once: its frames count as often."""
    found = []
    blocks = [block for block in traced['exceptions'] for _ in range(1 + block['repeats'])]
    for block in blocks:
        for frame in block['frames']:
            if not frame['inside_root']:
                continue
            kind = 'created_by' if frame['name'].startswith('created by ') else \
                'header' if frame['name'] == '(panicked here)' else 'frame'
            symbol = frame['chunk']['symbol'] if frame['chunk'] else None
            found.append((kind, frame['path'], frame['line'],
                          None if symbol == '<module>' else symbol))
    return found


def shop_index(case):
    """Index a small src-layout Python project whose test fails three calls deep; the
    index's path."""
    root = case.tmp / 'shop'
    write(root / 'src' / 'shop' / 'cart.py',
          'from shop.pricing import price_of\n\n\nclass Cart:\n    def __init__(self):\n'
          '        self.items = []\n\n    def add(self, name, qty):\n'
          '        self.items.append((name, qty))\n\n    def total(self):\n'
          '        return sum(price_of(name) * qty for name, qty in self.items)\n')
    write(root / 'src' / 'shop' / 'pricing.py',
          'PRICES = {"apple": 3}\n\n\ndef price_of(name):\n    return PRICES[name]\n')
    write(root / 'tests' / 'test_cart.py',
          'from shop.cart import Cart\n\n\ndef test_total():\n    cart = Cart()\n'
          '    cart.add("pear", 1)\n    assert cart.total() == 3\n')
    out = case.tmp / 'shop.json'
    result = cli('index', root, '--out', out)
    case.assertEqual(result.returncode, 0, result.stderr)
    return out


def match_frame_path(index, path):
    """The indexed file a frame's path names first (frame_candidates), or None."""
    return (code_search.frame_candidates(index, path)[1] or [None])[0]


class RealTraceTests(TempDirCase):
    """Every frame of every captured trace resolves to the definition that holds it."""

    def test_every_language(self):
        for language in LANGUAGES:
            out = program_index(self, language)
            for trace in sorted((TRACES / language).glob('*.txt')):
                with self.subTest(trace=f'{language}/{trace.name}'):
                    result = cli('trace', trace, '--index', out, '--json')
                    self.assertEqual(result.returncode, 0, result.stderr)
                    ours = [f for f in own_frames(json.loads(result.stdout))
                            if f[0] == 'frame']
                    answers = json.loads(trace.with_suffix('.expected.json').read_text())
                    wanted = [('frame', a['file'], a['line'] or 0, a['symbol'])
                              for a in answers if a['kind'] == 'frame']
                    # a frame that names no file (a Rust release build) has no answer path
                    ours = [(k, w[1] if w[1] is None else p, line, s)
                            for (k, p, line, s), w in zip(ours, wanted)] + ours[len(wanted):]
                    self.assertEqual(ours, wanted)

    def test_go_created_by_lines_and_rust_headers_are_located(self):
        out = program_index(self, 'go')
        traced = json.loads(cli('trace', TRACES / 'go' / 'trace_index_all.txt',
                                '--index', out, '--json').stdout)
        created = [f for f in own_frames(traced) if f[0] == 'created_by']
        self.assertEqual(created[0][1:], ('cmd/shop/main.go', 33, 'indexPanic'))
        out = program_index(self, 'rust')
        traced = json.loads(cli('trace', TRACES / 'rust' / 'trace_mod_nobt.txt',
                                '--index', out, '--json').stdout)
        self.assertEqual(own_frames(traced), [('header', 'src/main.rs', 8, 'pricing.discount')])
        self.assertEqual(traced['exceptions'][0]['message'], 'discount 150% is more than the price')

    def test_blocks_and_languages(self):
        out = program_index(self, 'java')
        traced = json.loads(cli('trace', TRACES / 'java' / 'trace_chain.txt', '--index', out,
                                '--json').stdout)
        self.assertEqual([(b['language'], b['block']) for b in traced['exceptions']],
                         [('java', 'exception'), ('java', 'caused by'),
                          ('java', 'caused by 2')])
        frame = traced['exceptions'][1]['frames'][0]
        self.assertEqual((frame['language'], frame['block'], frame['name']),
                         ('java', 'caused by', 'com.example.shop.Main$1.lambda$run$0'))
        out = program_index(self, 'go')
        traced = json.loads(cli('trace', TRACES / 'go' / 'trace_index_all.txt', '--index',
                                out, '--json').stdout)
        blocks = [b['block'] for b in traced['exceptions']]
        self.assertEqual(blocks[0], 'goroutine 1 [running]')
        self.assertTrue(traced['exceptions'][0]['message'].startswith('panic: runtime error'))
        self.assertIn('goroutine 18 [chan receive]', blocks)

    def test_human_output_shows_a_window_and_the_message_last(self):
        out = program_index(self, 'node')
        result = cli('trace', TRACES / 'node' / 'trace_handled.txt', '--index', out)
        self.assertEqual(result.returncode, 0, result.stderr)
        text = result.stdout
        self.assertIn('javascript exception:\n  at Object.find (', text)
        self.assertRegex(text, r'\[code-\d+\] src/services/repo\.js:\d+-\d+ repo\.find\n')
        self.assertRegex(text, r'\n    >\s+8 \| ')
        self.assertIn('(outside the root)', text)
        self.assertTrue(text.rstrip().endswith('TypeError: bad id -2'), text[-300:])
        self.assertLess(len(text.splitlines()), 200)
        full = cli('trace', TRACES / 'node' / 'trace_handled.txt', '--index', out, '--full')
        self.assertGreater(len(full.stdout.splitlines()), len(text.splitlines()))

    def test_window_is_the_header_and_lines_around_the_frame(self):
        root = self.tmp / 'proj'
        body = '\n'.join(f'    x{n} = {n}' for n in range(1, 30))
        write(root / 'app' / 'work.py', f'def long_function():\n{body}\n    raise ValueError(x1)\n')
        out = self.tmp / 'i.json'
        cli('index', root, '--out', out)
        trace = ('Traceback (most recent call last):\n'
                 '  File "/elsewhere/app/work.py", line 20, in long_function\n'
                 '    x19 = 19\nValueError: 1\n')
        text = cli('trace', '-', '--index', out, input=trace).stdout
        rows = [row for row in text.splitlines() if '|' in row]
        self.assertEqual([row.split('|')[0].strip() for row in rows],
                         ['1', '..', '17', '18', '19', '> 20', '21', '22', '23'])
        self.assertEqual(code_search.TRACE_CONTEXT, 3)


class TraceTrapTests(unittest.TestCase):
    """parse_traces on the traps of each format, and traces inside longer logs."""

    def parse(self, text):
        return code_search.parse_traces(textwrap.dedent(text))

    def test_java_traps(self):
        blocks = self.parse('''\
            2026-12-01 10:00:01 ERROR [main] c.e.App - request failed
            java.lang.IllegalStateException: boom
            \tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
            \tat com.example.App$Inner.lambda$run$0(App.java:12) ~[app.jar:?]
            \tat com.example.UtilKt.helper(Util.kt:7)
            \tat com.example.App.<init>(Unknown Source)
            \t... 3 more
            \tSuppressed: java.io.IOException: close failed
            \t\tat com.example.App.close(App.java:40)
            2026-12-01 10:00:02 INFO  [main] c.e.App - still running
            ''')
        self.assertEqual([(b['language'], b['block'], b['message']) for b in blocks],
                         [('java', 'exception', 'java.lang.IllegalStateException: boom'),
                          ('java', 'suppressed', 'java.io.IOException: close failed')])
        self.assertEqual([(f['file'], f['line']) for f in blocks[0]['frames']],
                         [('jdk/internal/reflect/NativeMethodAccessorImpl.java', 0),
                          ('com/example/App.java', 12), ('com/example/Util.kt', 7),
                          ('com/example/App.java', 0)])

    def test_kotlin_frames_stay_in_the_exception_they_follow(self):
        blocks = self.parse('''\
            Exception in thread "main" java.lang.IndexOutOfBoundsException: Index: 1
            \tat com.example.shop.MoneyKt.toCents(Money.kt:5)
            \tat java.base/java.util.Collections$SingletonList.get(Collections.java:4960)
            ''')
        self.assertEqual(len(blocks), 1)
        self.assertEqual(blocks[0]['language'], 'kotlin')

    def test_go_traps(self):
        blocks = self.parse('''\
            panic: runtime error: invalid memory address or nil pointer dereference [recovered]
            [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x45f3b6]

            goroutine 1 [running]:
            main.(*List[...]).At(0xc000012345?, {0x4b2c20?, 0xc0000a2000?})
            \t/home/dev/shop/list.go:13 +0x3c
            example.com/shop/store.(*Server).Name(...)
            \texample.com/shop/store/server.go:18
            main.run.func1()
            \t/home/dev/shop/main.go:40 +0x25
            created by main.start in goroutine 1
            \t/home/dev/shop/main.go:30 +0x66

            goroutine 7 [chan receive, 2 minutes]:
            main.worker(0x0)
            \t/home/dev/shop/main.go:50 +0x10
            main.spaced()
            \t/Users/Jane Doe/my shop/main.go:60 +0x10
            exit status 2
            ''')
        self.assertEqual([b['block'] for b in blocks],
                         ['goroutine 1 [running]', 'goroutine 7 [chan receive, 2 minutes]'])
        self.assertTrue(blocks[0]['message'].startswith('panic: runtime error'))
        self.assertEqual([(f['name'], f['file'], f['line']) for f in blocks[0]['frames']],
                         [('main.(*List[...]).At', '/home/dev/shop/list.go', 13),
                          ('example.com/shop/store.(*Server).Name',
                           'example.com/shop/store/server.go', 18),
                          ('main.run.func1', '/home/dev/shop/main.go', 40),
                          ('created by main.start', '/home/dev/shop/main.go', 30)])
        self.assertEqual([(f['name'], f['file']) for f in blocks[1]['frames']],
                         [('main.worker', '/home/dev/shop/main.go'),
                          ('main.spaced', '/Users/Jane Doe/my shop/main.go')])    # a space
        self.assertEqual(code_search.frame_function('main.(*List[...]).At'), 'At')
        self.assertEqual(code_search.frame_function('main.run.func1'), 'run')

    def test_go_fatal_error_frames_carry_fp_sp_pc(self):
        blocks = self.parse('''\
            fatal error: concurrent map writes

            goroutine 18 [running]:
            runtime.throw(0x6b8a2e, 0x15)
            \t/usr/local/go/src/runtime/panic.go:605 +0x95 fp=0xc420045f18 sp=0xc420045ef8 pc=0x42c0c5
            main.worker(0xc42001a0b0)
            \t/home/dev/shop/main.go:11 +0xdd fp=0xc420045fd8 sp=0xc420045f90 pc=0x63f4dd
            ''')
        self.assertEqual([(f['name'], f['line']) for f in blocks[0]['frames']],
                         [('runtime.throw', 605), ('main.worker', 11)])
        self.assertEqual(blocks[0]['message'], 'fatal error: concurrent map writes')

    def test_node_traps(self):
        blocks = self.parse('''\
            /srv/app/src/ticker.js:6
                if (state.n > 0) throw new Error('ticker state corrupt');
                                 ^

            Error: wrapped [ERR_X]: failure
                at Timeout.tick [as _onTimeout] (/srv/app/src/ticker.js:6:28)
                at new Report (file:///srv/app/src/report.mjs:4:23)
                at async file:///srv/app/src/report.mjs:24:1
                at /srv/app/src/app.js:23:13
                at listOnTimeout (node:internal/timers:581:17) {
              [cause]: TypeError: bad id -2
                  at Object.find (/srv/app/src/repo.js:8:13)
            }

            Node.js v20.20.2
            ''')
        self.assertEqual([(b['block'], b['message']) for b in blocks],
                         [('exception', 'Error: wrapped [ERR_X]: failure'),
                          ('cause', 'TypeError: bad id -2')])
        self.assertEqual([(f['name'], f['file'], f['line']) for f in blocks[0]['frames']],
                         [('Timeout.tick [as _onTimeout]', '/srv/app/src/ticker.js', 6),
                          ('new Report', '/srv/app/src/report.mjs', 4),
                          ('', '/srv/app/src/report.mjs', 24),
                          ('', '/srv/app/src/app.js', 23),
                          ('listOnTimeout', 'node:internal/timers', 581)])
        self.assertEqual(code_search.frame_function('Timeout.tick [as _onTimeout]'), 'tick')
        bare = self.parse('''\
            Error: gone
                at /srv/app/src/bare.js:3:13 {
              code: 'E_GONE'
            }
            ''')                 # the last frame, anonymous, of an error with properties
        self.assertEqual([(f['name'], f['file'], f['line']) for f in bare[0]['frames']],
                         [('', '/srv/app/src/bare.js', 3)])
        self.assertEqual(code_search.frame_function('new Report'), 'Report')

    def test_rust_traps(self):
        blocks = self.parse('''\
            thread 'main' (8342) panicked at src/store.rs:14:19:
            index out of bounds: the len is 2 but the index is 5
            stack backtrace:
               0:     0x558f1119bd0a - std[e28293b1aa0f68bd]::panicking::begin_panic
                                           at /rustc/5980761/library/std/src/panicking.rs:117:9
               1:     0x558f11171464 - shop::store::Store::get::h855fa0270026b3c9
                                           at /home/dev/shop/src/store.rs:14:19
               2: <shop::store::Store as core::fmt::Display>::fmt
                         at ./src/store.rs:30:9
               3: shop::run::{{closure}}
                         at ./src/main.rs:20:5
               4: shop::main
            note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
            ''')
        self.assertEqual(len(blocks), 1)
        self.assertEqual(blocks[0]['message'], 'index out of bounds: the len is 2 but the index is 5')
        self.assertEqual([(f['name'], f['file'], f['line']) for f in blocks[0]['frames']],
                         [('(panicked here)', 'src/store.rs', 14),
                          ('std::panicking::begin_panic',
                           '/rustc/5980761/library/std/src/panicking.rs', 117),
                          ('shop::store::Store::get', '/home/dev/shop/src/store.rs', 14),
                          ('<shop::store::Store as core::fmt::Display>::fmt', './src/store.rs', 30),
                          ('shop::run::{{closure}}', './src/main.rs', 20),
                          ('shop::main', '', 0)])
        self.assertEqual(code_search.frame_function('<shop::store::Store as core::fmt::Display>::fmt'),
                         'fmt')
        self.assertEqual(code_search.frame_function('shop::run::{{closure}}'), 'run')
        old = self.parse("thread 'main' panicked at 'too big', src/main.rs:8:13\n")
        self.assertEqual((old[0]['message'], old[0]['frames'][0]['line']), ('too big', 8))

    def test_dotnet_frames(self):
        blocks = self.parse((TRACES / 'dotnet' / 'handmade.txt').read_text())
        self.assertEqual(blocks[0]['language'], 'csharp')
        self.assertEqual(blocks[0]['message'],
                         "System.Exception: Exception of type 'System.Exception' was thrown.")
        first = blocks[0]['frames'][0]
        self.assertEqual((first['file'], first['line']),
                         ('C:\\Work\\AoA\\test\\AoA.Gaia\\Standalone.Server\\Program.cs', 41))
        self.assertEqual(code_search.frame_function(first['name']), 'AsyncMethod')
        for printed in ('Unhandled exception. ', 'Unhandled Exception: '):   # .NET Core, Framework
            with self.subTest(printed=printed):
                blocks = self.parse(f'{printed}System.InvalidOperationException: nope\n'
                                    '   at Shop.Cart.Add(Item i) in /src/Shop/Cart.cs:line 42\n')
                self.assertEqual([(b['language'], b['message'], b['frames'][0]['line'])
                                  for b in blocks],
                                 [('csharp', 'System.InvalidOperationException: nope', 42)])

    def test_python_inside_a_log(self):
        blocks = self.parse('''\
            INFO starting
            Traceback (most recent call last):
              File "/srv/app/main.py", line 3, in <module>
                run()
            ValueError: bad
            INFO restarting in 5 s
            ''')
        self.assertEqual([(b['language'], len(b['frames']), b['message']) for b in blocks],
                         [('python', 1, 'ValueError: bad')])
        self.assertEqual(blocks[0]['frames'][0]['line'], 3)

    def test_a_python_message_ends_at_a_blank_line_or_another_trace(self):
        blocks = self.parse('''\
            Traceback (most recent call last):
              File "/srv/app/main.py", line 3, in <module>
            KeyError: 'k'
            with a second line
            panic: runtime error: index out of range [3] with length 0

            goroutine 1 [running]:
            main.main()
            \t/home/me/gop/main.go:5 +0x1d
            Traceback (most recent call last):
              File "/srv/app/main.py", line 4, in <module>
            ValueError: bad

            Done, exit code 1
            ''')
        self.assertEqual([(b['language'], len(b['frames']), b['message']) for b in blocks],
                         [('python', 1, "KeyError: 'k'\nwith a second line"),
                          ('go', 1, 'panic: runtime error: index out of range [3] with length 0'),
                          ('python', 1, 'ValueError: bad')])

    def test_go_and_rust_messages_of_several_lines(self):
        blocks = self.parse('''\
            panic: assignment to entry in nil map [recovered]
            \tpanic: re-panic: assignment to entry in nil map

            goroutine 1 [running]:
            main.main()
            \t/src/main.go:9 +0x1d
            thread 'main' panicked at src/main.rs:3:5:
            first line
            second line
            note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
            ''')
        self.assertEqual([(b['language'], b['message']) for b in blocks],
                         [('go', 'panic: assignment to entry in nil map [recovered]\n'
                                 'panic: re-panic: assignment to entry in nil map'),
                          ('rust', 'first line\nsecond line')])

    def test_node_shows_where_an_uncaught_error_was_thrown(self):
        # A SyntaxError's stack is node:internal only, and a thrown string has none:
        # the place Node shows above the source line and its caret is the frame.
        blocks = self.parse('''\
            /app/src/syntax.js:3
              return a +;
                        ^

            SyntaxError: Unexpected token ';'
                at internalCompileFunction (node:internal/vm:76:18)

            Node.js v20.20.0
            C:/app/src/str.js:2
              throw "oops";
              ^
            oops
            ''')
        self.assertEqual([(b['message'], [(f['file'], f['line']) for f in b['frames']])
                          for b in blocks],
                         [("SyntaxError: Unexpected token ';'",
                           [('/app/src/syntax.js', 3), ('node:internal/vm', 76)]),
                          ('oops', [('C:/app/src/str.js', 2)])])

    def test_lines_other_formats_own_stay_theirs(self):
        # .NET's '--- End of stack trace ... ---' is no pytest section; a Java trace under
        # a Python one (PySpark's py4j) keeps its frames; pytest's Windows paths and -l
        # locals; a NUL in a path is no error.
        dotnet = (TRACES / 'dotnet' / 'handmade.txt').read_text(encoding='utf-8')
        self.assertEqual([len(b['frames']) for b in self.parse(dotnet)], [3])
        blocks = self.parse('''\
            Traceback (most recent call last):
              File "/app/job.py", line 9, in <module>
                df.collect()
            py4j.protocol.Py4JJavaError: An error occurred while calling o42.collect.
            : java.lang.RuntimeException: boom
            \tat com.acme.App.run(App.java:10)
            \tat com.acme.App.main(App.java:4)
            ''')
        self.assertEqual([(b['language'], len(b['frames'])) for b in blocks],
                         [('python', 1), ('java', 2)])
        blocks = self.parse('''\
            ________________________________ test_checkout _________________________________
            name       = 'pear'
            C:\\Users\\dev\\shop\\src\\shop\\cart.py:12: in total
                return PRICES[name]
            E   KeyError: 'pear'
            ''')
        self.assertEqual([(b['block'], [f['file'] for f in b['frames']], b['message'])
                          for b in blocks],
                         [('pytest test_checkout', ['C:\\Users\\dev\\shop\\src\\shop\\cart.py'],
                           "KeyError: 'pear'")])

    def test_text_without_a_trace(self):
        self.assertEqual(code_search.parse_traces('all good\nnothing to see\n'), [])

    def test_every_real_trace_reads_the_same_through_a_log_collector(self):
        prefixes = ('web-1  | ',                                    # docker compose
                    '2024-05-01T12:00:00.123456789Z stderr F ',    # kubernetes
                    'May  1 12:00:01 host app[123]: ',              # syslog
                    '2024-05-01T12:00:01+00:00 host python3[99]: ',  # journald, ISO
                    '2024-05-01T12:00:01.123456789Z ',               # kubectl --timestamps
                    '2024-05-01T12:00:01.123456+00:00 app[web.1]: ',  # heroku
                    '2024-05-01 12:00:01,123 ERROR ',                # a logger's
                    '2024-05-01T12:00:01.123Z ERROR [main] ',
                    '[2024-05-01 12:00:01] ', 'INFO: ',
                    'web-1  | 2024-05-01 12:00:01,123 ERROR ',      # a logger's, collected
                    '2024-05-01T12:00:00.1Z stderr F [2024-05-01 12:00:01] ')
        for trace in sorted(TRACES.glob('*/*.txt')):
            text = trace.read_text(encoding='utf-8')
            plain = code_search.parse_traces(text)
            for prefix in prefixes:
                with self.subTest(trace=trace.name, prefix=prefix):
                    logged = ''.join(prefix + line for line in text.splitlines(True))
                    self.assertEqual(code_search.parse_traces(logged), plain)
        self.assertTrue(any(code_search.parse_traces(t.read_text(encoding='utf-8'))
                            for t in TRACES.glob('*/*.txt')))

    def test_every_real_trace_reads_the_same_indented_quoted_or_with_tabs_as_spaces(self):
        for trace in sorted(TRACES.glob('*/*.txt')):
            text = trace.read_text(encoding='utf-8')
            plain = code_search.parse_traces(text)
            lines = text.splitlines(True)
            quoted = ''.join('> ' + line if line.strip() else '>\n' for line in lines)
            for how, changed in (('indented', ''.join('    ' + line for line in lines)),
                                 ('quoted', quoted),
                                 ('quoted in a mail', f'Hi,\n\nI ran it and got:\n\n{quoted}'
                                                      '\nAny idea?\n'),
                                 ('tabs as spaces', text.expandtabs(8))):
                with self.subTest(trace=trace.name, how=how):
                    self.assertEqual(code_search.parse_traces(changed), plain)


class FrameMatchingTests(TempDirCase):
    """Frames map by path suffix; names break ties but never move a frame off its line."""

    def test_an_installed_copy_maps_onto_the_checkout(self):
        checkout = self.tmp / 'checkout'
        write(checkout / 'src' / 'mypkg' / '__init__.py', '')
        write(checkout / 'src' / 'mypkg' / 'core.py',
              'def helper(value):\n    return 10 // value\n\n\ndef run():\n    return helper(0)\n')
        installed = self.tmp / 'venv' / 'lib' / 'site-packages'
        shutil.copytree(checkout / 'src' / 'mypkg', installed / 'mypkg')
        out = self.tmp / 'i.json'
        cli('index', checkout, '--out', out)
        run = subprocess.run([sys.executable, '-c', 'import mypkg.core; mypkg.core.run()'],
                             capture_output=True, text=True, timeout=60,
                             env=dict(ENV, PYTHONPATH=str(installed)))
        self.assertIn(str(installed), run.stderr)
        traced = json.loads(cli('trace', '-', '--index', out, '--json',
                                input=run.stderr).stdout)
        frames = [(f['path'], f['chunk']['symbol'] if f['chunk'] else None)
                  for b in traced['exceptions'] for f in b['frames'] if f['inside_root']]
        self.assertEqual(frames, [('src/mypkg/core.py', 'run'), ('src/mypkg/core.py', 'helper')])
        # another package's file of the same name at the top of the root is not it
        write(checkout / 'core.py', 'def run():\n    pass\n')
        cli('index', checkout, '--out', out)
        other = run.stderr.replace(f'{installed}/mypkg', '/elsewhere/site-packages/otherpkg')
        traced = json.loads(cli('trace', '-', '--index', out, '--json', input=other).stdout)
        self.assertEqual([f['inside_root'] for b in traced['exceptions'] for f in b['frames']
                          if 'otherpkg' in f['file']], [False, False])

    def test_a_frame_in_a_folder_index_leaves_out_is_not_called_outside_the_root(self):
        root = self.tmp / 'app'
        write(root / 'main.py', 'import json\nimport shop\n\n\ndef start():\n'
                                '    return shop.load(json.loads("[1]"))\n\n\nstart()\n')
        write(root / '.venv' / 'lib' / 'shop.py', 'import json\n\n\ndef load(items):\n'
                                                  '    return json.loads(items)\n')
        out = self.tmp / 'i.json'
        cli('index', root, '--out', out)
        run = subprocess.run([sys.executable, 'main.py'], cwd=root, capture_output=True,
                             text=True, timeout=60,
                             env=dict(ENV, PYTHONPATH=str(root / '.venv' / 'lib')))
        self.assertIn('TypeError', run.stderr)
        lines = cli('trace', '-', '--index', out, input=run.stderr).stdout.splitlines()
        shop = next(line for line in lines if 'shop.py' in line)
        self.assertTrue(shop.endswith('(in the root, not indexed: ls --all says why)'), shop)
        library = next(line for line in lines if 'json' in line and '__init__' in line)
        self.assertTrue(library.endswith('(outside the root)'), library)
        self.assertIn('    [code-', lines[lines.index(next(line for line in lines
                                                          if 'main.py' in line)) + 1])
        traced = json.loads(cli('trace', '-', '--index', out, '--json',
                                input=run.stderr).stdout)
        self.assertEqual([(Path(f['file']).name, f['inside_root'], f['left_out'])
                          for f in traced['exceptions'][0]['frames']][:3],
                         [('main.py', True, False), ('main.py', True, False),
                          ('shop.py', False, True)])
        (root / '.venv' / 'lib' / 'shop.py').unlink()      # a file the root has not now
        lines = cli('trace', '-', '--index', out, input=run.stderr).stdout.splitlines()
        shop = next(line for line in lines if 'shop.py' in line)
        self.assertTrue(shop.endswith('(in the root, no such file)'), shop)

    def test_a_recursion_keeps_the_count_of_its_repeated_frames(self):
        write(self.tmp / 'rec' / 'deep.py', 'def down(n):\n    return down(n + 1)\n\n\ndown(0)\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'rec', '--out', out)
        run = subprocess.run([sys.executable, str(self.tmp / 'rec' / 'deep.py')],
                             capture_output=True, text=True, timeout=60, env=ENV)
        repeated = re.search(r'\[Previous line repeated (\d+) more times\]', run.stderr)
        self.assertTrue(repeated, run.stderr[-500:])
        frames = json.loads(cli('trace', '-', '--index', out, '--json', input=run.stderr)
                            .stdout)['exceptions'][0]['frames']
        self.assertEqual([f['repeated'] for f in frames if f['repeated']],
                         [int(repeated[1])])
        self.assertEqual(frames[-1]['chunk']['symbol'], 'down')
        text = cli('trace', '-', '--index', out, input=run.stderr).stdout
        self.assertIn(f'    > 2 |     return down(n + 1)\n  {repeated[0]}\nRecursionError: ',
                      text)

    def test_an_error_logged_again_and_again_is_shown_once_with_its_count(self):
        write(self.tmp / 'app' / 'job.py',
              'import logging\n\n\ndef step(x):\n    return 1 / x\n\n\n'
              'def chained():\n    try:\n        step(0)\n    except ZeroDivisionError as e:\n'
              '        raise ValueError("bad step") from e\n\n\nlogging.basicConfig()\n'
              'for i in range(50):\n    try:\n        step(0) if i % 10 else chained()\n'
              '    except Exception:\n        logging.exception("job %d failed", i)\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'app', '--out', out)
        run = subprocess.run([sys.executable, str(self.tmp / 'app' / 'job.py')],
                             capture_output=True, text=True, timeout=60, env=ENV)
        self.assertEqual(run.stderr.count('Traceback (most recent call last)'), 55)
        blocks = json.loads(cli('trace', '-', '--index', out, '--json', input=run.stderr)
                            .stdout)['exceptions']
        self.assertEqual([(b['message'], b['repeats']) for b in blocks],
                         [('ZeroDivisionError: division by zero', 4),     # chained() ...
                          ('ValueError: bad step', 4),                    # ... raising this
                          ('ZeroDivisionError: division by zero', 44)])   # step(0) alone
        self.assertTrue(blocks[0]['then'].startswith('The above exception was the direct'))
        text = cli('trace', '-', '--index', out, input=run.stderr).stdout
        self.assertEqual(text.count('Traceback (most recent call last)'), 3, text)
        self.assertIn('ValueError: bad step\n[Seen 4 more times in this text]\n', text)
        self.assertTrue(text.endswith('division by zero\n[Seen 44 more times in this text]\n'),
                        text[-300:])

    def test_only_a_whole_trace_seen_again_is_folded(self):
        write(self.tmp / 'app' / 'main.go', 'package main\n\nfunc worker() {\n\tselect {}\n}\n')
        write(self.tmp / 'app' / 'App.java', 'class App {\n    void load() { }\n'
              '    void attempt() { load(); }\n}\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'app', '--out', out)
        waiting = ''.join(f'goroutine {n} [chan receive{wait}]:\nmain.worker()\n'
                          f'\t/src/app/main.go:4 +0x1d\ncreated by main.main\n'
                          f'\t/src/app/main.go:9 +0x25\n\n'
                          for n, wait in ((18, ', 2 minutes'), (19, ', 1 minute'), (20, '')))
        shared = ''.join(f'java.lang.{kind}Exception: {what}\n\tat App.attempt(App.java:3)\n'
                         'Caused by: java.io.IOException: disk full\n\tat App.load(App.java:2)\n'
                         '\t... 1 more\n' for kind, what in (('IllegalState', 'config failed'),
                                                            ('Runtime', 'retry failed')))
        for text, wanted in ((waiting, [('goroutine 18 [chan receive, 2 minutes]', 2)]),
                             (shared, [('exception', 0), ('caused by', 0), ('exception 2', 0),
                                       ('caused by 2', 0)]),
                             (shared * 2, [('exception', 1), ('caused by', 1),
                                           ('exception 2', 1), ('caused by 2', 1)])):
            blocks = json.loads(cli('trace', '-', '--index', out, '--json', input=text).stdout)[
                'exceptions']
            self.assertEqual([(b['block'], b['repeats']) for b in blocks], wanted)
        text = cli('trace', '-', '--index', out, input=shared * 3).stdout
        self.assertEqual(text.count('[Seen 2 more times in this text]'), 2, text)
        self.assertIn('disk full\n[Seen 2 more times in this text]\njava exception 2:', text)

    def test_a_frame_without_a_line_in_a_deleted_file_says_it_is_gone(self):
        write(self.tmp / 'shop' / 'com' / 'acme' / 'Shop.java',
              'package com.acme;\n\npublic class Shop {\n    int total() {\n        return 1;\n'
              '    }\n}\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'shop', '--out', out)
        (self.tmp / 'shop' / 'com' / 'acme' / 'Shop.java').unlink()
        trace = ('Exception in thread "main" java.lang.RuntimeException: x\n'
                 '\tat com.acme.Shop.total(Shop.java)\n\tat com.acme.Shop.total(Unknown Source)\n')
        frames = json.loads(cli('trace', '-', '--index', out, '--json', input=trace).stdout)[
            'exceptions'][0]['frames']
        self.assertEqual([(f['chunk']['symbol'], f['gone']) for f in frames],
                         [('Shop.total', True)] * 2)
        text = cli('trace', '-', '--index', out, input=trace).stdout
        self.assertEqual(text.count('com/acme/Shop.java: the file is gone since it was indexed'),
                         2, text)

    def test_a_file_replaced_by_a_link_is_gone_and_one_repeat_is_one_time(self):
        write(self.tmp / 'app' / 'real.py', 'def f():\n    g()\n\n\ndef g():\n    f()\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'app', '--out', out)
        (self.tmp / 'app' / 'real.py').unlink()
        os.symlink(self.tmp / 'nowhere.py', self.tmp / 'app' / 'real.py')   # never followed
        trace = ('Traceback (most recent call last):\n'
                 f'  File "{self.tmp / "app" / "real.py"}", line 2, in f\n    g()\n'
                 '  [Previous line repeated 1 more time]\nRecursionError: deep\n')
        frames = json.loads(cli('trace', '-', '--index', out, '--json', input=trace).stdout)[
            'exceptions'][0]['frames']
        self.assertEqual([(f['path'], f.get('gone'), f['repeated']) for f in frames],
                         [('real.py', True, 1)])
        text = cli('trace', '-', '--index', out, input=trace).stdout
        self.assertIn('real.py: the file is gone since it was indexed', text)
        self.assertIn('\n  [Previous line repeated 1 more time]\nRecursionError: deep', text)

    def test_another_file_on_this_machine_is_not_the_roots(self):
        # Go's /usr/lib/go/src/net/http/server.go, a path dependency's src/error.rs: a
        # frame's file that exists here outside the root is that file, unless a copy.
        write(self.tmp / 'repo' / 'src' / 'error.rs', 'pub enum AppError {\n    Bad(String),\n'
                                                      '    Worse,\n}\n')
        write(self.tmp / 'dep' / 'src' / 'error.rs', 'pub fn check(x: i32) {\n    if x < 0 {\n'
                                                     '        panic!("negative");\n    }\n}\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'repo', '--out', out)
        for folder, inside in (('dep', False), ('elsewhere', True)):   # gone: another machine's
            trace = (f"thread 'main' panicked at {self.tmp / folder / 'src' / 'error.rs'}:3:9:\n"
                     'negative\n')
            frame = json.loads(cli('trace', '-', '--index', out, '--json', input=trace)
                               .stdout)['exceptions'][0]['frames'][0]
            self.assertEqual((frame['inside_root'], frame['path']),
                             (inside, 'src/error.rs' if inside else None), folder)

    def test_names_break_ties_between_equal_paths(self):
        for folder, method in (('a', 'start'), ('b', 'stop')):
            write(self.tmp / 'repo' / folder / 'com' / 'x' / 'Main.java',
                  f'package com.x;\n\npublic class Main {{\n    void {method}() {{\n'
                  f'        throw new RuntimeException();\n    }}\n}}\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'repo', '--out', out)
        for method, folder in (('start', 'a'), ('stop', 'b')):
            trace = (f'java.lang.RuntimeException\n\tat com.x.Main.{method}(Main.java:5)\n')
            traced = json.loads(cli('trace', '-', '--index', out, '--json', input=trace).stdout)
            frame = traced['exceptions'][0]['frames'][0]
            self.assertEqual((frame['path'], frame['chunk']['symbol']),
                             (f'{folder}/com/x/Main.java', f'Main.{method}'))
        trace = 'java.lang.RuntimeException\n\tat com.x.Main.other(Main.java:1)\n'
        traced = cli('trace', '-', '--index', out, '--json', input=trace)
        frame = json.loads(traced.stdout)['exceptions'][0]['frames'][0]
        self.assertEqual((frame['path'], frame['chunk'], frame['ambiguous']),
                         (None, None, ['a/com/x/Main.java', 'b/com/x/Main.java']))
        shown = cli('trace', '-', '--index', out, input=trace).stdout   # not a guess
        self.assertIn('2 indexed files end in this path, none with this function at '
                      'line 1: a/com/x/Main.java, b/com/x/Main.java', shown)

    def test_a_function_moved_since_the_trace_is_said_to_be_elsewhere(self):
        write(self.tmp / 'repo' / 'shop.py', 'def total(items):\n    return sum(items)\n\n\n'
                                             'def tax(amount):\n    return amount / 0\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'repo', '--out', out)
        trace = ('Traceback (most recent call last):\n'     # printed by an older shop.py,
                 '  File "/srv/app/shop.py", line 2, in tax\n'   # where tax came first
                 'ZeroDivisionError: division by zero\n')
        frame = json.loads(cli('trace', '-', '--index', out, '--json', input=trace).stdout
                           )['exceptions'][0]['frames'][0]
        self.assertEqual((frame['path'], frame['chunk']['symbol'], frame['elsewhere']),
                         ('shop.py', 'total', [5, 6]))      # never moved off its line
        shown = cli('trace', '-', '--index', out, input=trace).stdout
        self.assertIn('shop.py:1-2 total\n    tax is at lines 5-6 of this file: the trace may '
                      'come from another version of it\n', shown)
        same = trace.replace('line 2, in tax', 'line 6, in tax')
        frame = json.loads(cli('trace', '-', '--index', out, '--json', input=same).stdout
                           )['exceptions'][0]['frames'][0]
        self.assertEqual((frame['chunk']['symbol'], frame['elsewhere']), ('tax', None))

    def test_a_go_created_by_frame_reads_as_go_prints_it(self):
        write(self.tmp / 'repo' / 'main.go', 'package main\n\nfunc start() {\n'
                                             '\tgo func() {}()\n}\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'repo', '--out', out)
        trace = ('goroutine 7 [running]:\nmain.start.func1()\n\t/home/dev/shop/main.go:4 +0x1d\n'
                 'created by main.start\n\t/home/dev/shop/main.go:4 +0x25\n')
        shown = cli('trace', '-', '--index', out, input=trace).stdout
        self.assertIn('\n  created by main.start (/home/dev/shop/main.go:4)\n', shown)
        self.assertNotIn('at created by', shown)

    def test_a_relative_path_is_the_roots_own_file_first(self):
        for crate in ('', 'crates/gen/'):       # a workspace: two src/main.rs
            write(self.tmp / 'repo' / f'{crate}src' / 'main.rs',
                  f'fn {"main" if not crate else "helper"}() {{\n    let v = vec![1];\n'
                  f'    let _ = v[3];\n}}\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'repo', '--out', out)
        trace = ("thread 'main' panicked at src/main.rs:3:14:\n"
                 "index out of bounds: the len is 1 but the index is 3\n")
        frame = json.loads(cli('trace', '-', '--index', out, '--json', input=trace)
                           .stdout)['exceptions'][0]['frames'][0]
        self.assertEqual((frame['path'], frame['chunk']['symbol']), ('src/main.rs', 'main'))

    def test_the_frames_function_among_definitions_holding_its_line(self):
        write(self.tmp / 'repo' / 'app.py', textwrap.dedent('''\
            def deco(arg):
                def wrap(f):
                    raise RuntimeError('no')
                return wrap


            def top():
                class Local:
                    @deco(
                        1)
                    def m(self):
                        pass


            top()
            '''))
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'repo', '--out', out)
        run = subprocess.run([sys.executable, 'app.py'], cwd=self.tmp / 'repo', env=ENV,
                             capture_output=True, text=True, timeout=60)
        self.assertIn('line 8, in top', run.stderr)      # class Local: opens top.Local too
        decorated = 9 if sys.version_info >= (3, 11) else 11     # @deco( or def m(self):
        self.assertIn(f'line {decorated}, in Local', run.stderr)    # in top.Local.m too
        traced = json.loads(cli('trace', '-', '--index', out, '--json',
                                input=run.stderr).stdout)
        self.assertEqual([(f['line'], f['chunk']['symbol']) for b in traced['exceptions']
                          for f in b['frames']],
                         [(15, '<module>'), (8, 'top'), (decorated, 'top.Local'),
                          (3, 'deco.wrap')])

    def test_another_machines_dependencies_are_not_the_roots_files(self):
        # Traces captured on CI and with -trimpath: Go's net/http/server.go, a crate from
        # the cargo registry and a package in node_modules share a suffix with a file of
        # the root; the frames that are the root's show where the trace had it.
        write(self.tmp / 'go' / 'go.mod', 'module example.com/shop\n\ngo 1.19\n')
        write(self.tmp / 'go' / 'cmd' / 'web' / 'main.go',
              'package main\n\nimport "net/http"\n\ntype handler struct{}\n\n'
              'func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {\n'
              '\tvar m map[string]int\n\tm[r.URL.Path]++\n}\n')
        write(self.tmp / 'go' / 'internal' / 'http' / 'server.go',
              'package http\n\nfunc Serve() {\n}\n')
        write(self.tmp / 'rust' / 'src' / 'main.rs',
              'fn main() {\n    let total = helper::first(&[]);\n    println!("{}", total);\n}\n')
        write(self.tmp / 'rust' / 'src' / 'lib.rs', 'pub fn version() -> &\'static str {\n'
                                                   '    "1"\n}\n')
        write(self.tmp / 'node' / 'src' / 'router' / 'index.js',
              "'use strict';\nconst Router = require('miniexpress');\n\n"
              "const router = new Router();\nrouter.get('/user', function getUser(req) {\n"
              "  return req.user.name;\n});\n\nrouter.handle('/user');\n")
        go_frames = ('main.(*handler).ServeHTTP(0x0?, {0x8c6780?, 0x6bba06?}, 0x46380e?)\n'
                     '\tMAIN/cmd/web/main.go:9 +0x2e\n'
                     'net/http.serverHandler.ServeHTTP({0xc0000950e0?}, {0x73af08, '
                     '0xc000124000}, 0xc000116400)\n\tSTD/net/http/server.go:2947 +0x30c\n'
                     'net/http.(*conn).serve(0xc0000a2a00, {0x73b2e0, 0xc000094fc0})\n'
                     '\tSTD/net/http/server.go:1991 +0x607\n')
        go_trace = ('2026/12/07 10:55:03 http: panic serving 127.0.0.1:52436: assignment to '
                    'entry in nil map\ngoroutine 22 [running]:\n' + go_frames)
        rust_trace = (
            "thread 'main' (12359) panicked at /home/ci/.cargo/registry/src/index.crates.io-"
            "6f17d22bba15001f/helper-0.1.0/src/lib.rs:2:5:\nindex out of bounds: the len is 0 "
            "but the index is 0\nstack backtrace:\n   3: helper::first\n             at "
            "/home/ci/.cargo/registry/src/index.crates.io-6f17d22bba15001f/helper-0.1.0/src/"
            "lib.rs:2:5\n   4: shop::main\n             at ./src/main.rs:2:17\n")
        node_trace = ("TypeError: Cannot read properties of undefined (reading 'name')\n"
                      "    at getUser (/srv/app/src/router/index.js:6:19)\n"
                      "    at Router.handle (/srv/app/node_modules/miniexpress/lib/router/"
                      "index.js:8:12)\n"
                      "    at Object.<anonymous> (/srv/app/src/router/index.js:9:8)\n")
        def go(main, std):
            return go_trace.replace('MAIN/', main).replace('STD/', std)
        cases = (('go', go('/home/runner/work/shop/shop/', '/usr/local/go/src/'),
                  [('cmd/web/main.go', 'handler.ServeHTTP'), None, None], [False] * 2),
                 ('go', go('example.com/shop/', ''),
                  [('cmd/web/main.go', 'handler.ServeHTTP'), None, None], [False] * 2),
                 ('rust', rust_trace, [None, None, ('src/main.rs', 'main')], [False] * 2),
                 ('node', node_trace, [('src/router/index.js', 'getUser'), None,
                                       ('src/router/index.js', '<module>')], [False]))
        for language, trace, wanted, left_out in cases:
            out = self.tmp / f'{language}.json'
            cli('index', self.tmp / language, '--out', out)
            frames = json.loads(cli('trace', '-', '--index', out, '--json', input=trace)
                                .stdout)['exceptions'][0]['frames']
            with self.subTest(trace=trace[:60]):
                self.assertEqual([(f['path'], f['chunk']['symbol']) if f['inside_root']
                                  else None for f in frames], wanted)
                self.assertEqual([f['left_out'] for f in frames if not f['inside_root']],
                                 left_out)
        traced = json.loads(cli('trace', '-', '--index', self.tmp / 'go.json', '--json',
                                input=cases[0][1]).stdout)          # net/http's recovered panic
        self.assertEqual(traced['exceptions'][0]['message'],
                         'http: panic serving 127.0.0.1:52436: assignment to entry in nil map')
        # without a frame that shows the checkout, a suffix still finds the file
        frame = json.loads(cli('trace', '-', '--index', self.tmp / 'go.json', '--json',
                               input=go('/elsewhere/', '/elsewhere/'))
                           .stdout)['exceptions'][0]['frames'][0]
        self.assertEqual(frame['path'], 'cmd/web/main.go')

    def test_frames_that_show_the_root_keep_its_files_and_drop_lookalikes(self):
        # A monorepo indexed at one package: a sibling's src/index.js is not the root's.
        write(self.tmp / 'api' / 'src' / 'index.js', "const { money } = require('@acme/shared');"
              "\nfunction handler(req) {\n  return money(req.amount);\n}\nhandler({});\n")
        cli('index', self.tmp / 'api', '--out', self.tmp / 'api.json')
        mono = '/home/runner/work/mono/mono/packages/'
        trace = ("TypeError: Cannot read properties of undefined (reading 'toFixed')\n"
                 f'    at money ({mono}shared/src/index.js:2:12)\n'
                 f'    at handler ({mono}api/src/index.js:3:10)\n'
                 f'    at Object.<anonymous> ({mono}api/src/index.js:5:1)\n')
        frames = json.loads(cli('trace', '-', '--index', self.tmp / 'api.json', '--json',
                                input=trace).stdout)['exceptions'][0]['frames']
        self.assertEqual([f['chunk']['symbol'] if f['inside_root'] else None for f in frames],
                         [None, 'handler', '<module>'])
        # A Python project run on two machines, one of them Windows (the drive's case
        # varies), and installed as an egg: every frame is the root's.
        shop_index(self)
        def python_trace(tests, package):
            return ('Traceback (most recent call last):\n'
                    f'  File "{tests}test_cart.py", line 7, in test_total\n'
                    f'  File "{package}cart.py", line 12, in total\n'
                    f'  File "{package}cart.py", line 12, in <genexpr>\n'
                    f'  File "{package}pricing.py", line 5, in price_of\n'
                    "KeyError: 'pear'\n")
        trace = (python_trace('/home/runner/work/shop/shop/tests/',
                              '/home/runner/work/shop/shop/src/shop/')
                 + python_trace('c:\\Users\\Dev\\proj\\tests\\',
                                'C:\\Users\\Dev\\proj\\src\\shop\\')
                 + python_trace('/app/tests/',
                                '/usr/local/lib/python3.11/site-packages/shop-1.0-py3.11.egg/shop/'))
        traced = json.loads(cli('trace', '-', '--index', self.tmp / 'shop.json', '--json',
                                input=trace).stdout)
        self.assertEqual([[f['chunk']['symbol'] if f['inside_root'] else None
                           for f in block['frames']] for block in traced['exceptions']],
                         [['test_total', 'Cart.total', 'Cart.total', 'price_of']] * 3)

    def test_pytest_reports_coloured_long_and_short(self):
        out = program_index(self, 'pytest')
        for report in ('report_color.txt', 'report_short.txt'):
            with self.subTest(report=report):
                self.check_pytest_report(out, TRACES / 'pytest' / report)
        text = cli('trace', TRACES / 'pytest' / 'report_short.txt', '--index', out).stdout
        self.assertTrue(text.startswith('pytest test_checkout:\n  File src/shop/cart.py, line 10, '
                                        'in checkout\n'), text)

    def test_pytest_report_of_one_line_per_test(self):
        """--tb=line: each test's 'path:13: message' line is a block of one frame, found
        on this machine though pytest ran the project in another folder; the captured
        log's traceback before it is a block of its own."""
        out = program_index(self, 'pytest')
        traced = json.loads(cli('trace', TRACES / 'pytest' / 'report_line.txt', '--index', out,
                                '--json').stdout)
        inner = [('src/shop/cart.py', 10, 'checkout'), ('src/shop/cart.py', 10, 'checkout'),
                 ('src/shop/cart.py', 5, 'price_of')]
        self.assertEqual(
            [(b['block'], [(f['path'], f['line'], f['chunk']['symbol']) for f in b['frames']],
              b['message']) for b in traced['exceptions']],
            [('exception', inner, "KeyError: 'pear'"),
             ('pytest', [('src/shop/cart.py', 13, 'checkout')], "LookupError: no price for 'pear'"),
             ('exception 2', inner, "KeyError: 'kiwi'"),
             ('pytest 2', [('src/shop/cart.py', 13, 'checkout')],
              "LookupError: no price for 'kiwi'")])
        text = cli('trace', TRACES / 'pytest' / 'report_line.txt', '--index', out).stdout
        self.assertIn("\npytest:\n  File /tmp/s53/pyt/src/shop/cart.py, line 13\n", text)
        outside = 'src/shop/cart.py:13: LookupError: no price\n'    # no report: a log's line
        self.assertEqual(json.loads(cli('trace', '-', '--index', out, '--json',
                                        input=outside).stdout)['exceptions'], [])

    def check_pytest_report(self, out, report):
        """A chained exception, a captured log's traceback and a test id too long for
        pytest's underscores, read from one report."""
        traced = json.loads(cli('trace', report, '--index', out, '--json').stdout)
        inner = [('src/shop/cart.py', 10, 'checkout'), ('src/shop/cart.py', 10, 'checkout'),
                 ('src/shop/cart.py', 5, 'price_of')]
        long_id = 'test_a_fruit_with_a_name_long_enough_that_pytest_has_no_room_left_for_underscores'
        self.assertEqual(
            [(b['block'], [(f['path'], f['line'], f['chunk']['symbol']) for f in b['frames']],
              b['message'], b['then'][:9]) for b in traced['exceptions']],
            [('pytest test_checkout', inner, "KeyError: 'pear'", 'The above'),
             ('pytest test_checkout 2', [('tests/test_cart.py', 5, 'test_checkout'),
                                         ('src/shop/cart.py', 13, 'checkout')],
              "LookupError: no price for 'pear'", ''),
             ('exception', inner, "KeyError: 'pear'", ''),          # the captured log's
             (f'pytest {long_id}', inner, "KeyError: 'kiwi'", 'The above'),
             (f'pytest {long_id} 2', [('tests/test_cart.py', 9, long_id),
                                      ('src/shop/cart.py', 13, 'checkout')],
              "LookupError: no price for 'kiwi'", ''),
             ('exception 2', inner, "KeyError: 'kiwi'", '')])

    def test_a_trace_run_through_a_link_to_the_root(self):
        write(self.tmp / 'app' / 'main.py', 'import tool\n\n\ndef run():\n    tool.go()\n\n\n'
                                            'run()\n')
        write(self.tmp / 'app' / 'tool.py', 'def go():\n    raise SystemError("no")\n')
        os.symlink(self.tmp / 'app', self.tmp / 'link')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'app', '--out', out)
        for script in ('main.py', 'tool.py'):           # one file at the top, and two
            if script == 'tool.py':
                write(self.tmp / 'app' / 'tool.py', 'raise SystemError("at the top")\n')
            run = subprocess.run([sys.executable, str(self.tmp / 'link' / script)], env=ENV,
                                 capture_output=True, text=True, timeout=60)
            self.assertIn(str(self.tmp / 'link' / script), run.stderr)
            cli('index', self.tmp / 'app', '--out', out)
            frames = json.loads(cli('trace', '-', '--index', out, '--json',
                                    input=run.stderr).stdout)['exceptions'][0]['frames']
            self.assertEqual([(f['path'], f['chunk']['symbol']) for f in frames],
                             [('main.py', '<module>'), ('main.py', 'run'), ('tool.py', 'go')]
                             if script == 'main.py' else [('tool.py', '<module>')])

    def test_a_kotlin_style_tree_that_leaves_out_the_root_package(self):
        write(self.tmp / 'repo' / 'src' / 'App.java',
              'package com.acme.app;\n\nimport com.acme.app.util.Helper;\n\npublic class App {\n'
              '    public static void main(String[] args) {\n        new App().start();\n'
              '    }\n\n    void start() {\n        Helper.check(null);\n    }\n}\n')
        write(self.tmp / 'repo' / 'src' / 'util' / 'Helper.java',
              'package com.acme.app.util;\n\npublic class Helper {\n'
              '    public static int check(String s) {\n        return s.length();\n    }\n}\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'repo', '--out', out)
        trace = ('Exception in thread "main" java.lang.NullPointerException: Cannot invoke '
                 '"String.length()" because "<parameter1>" is null\n'
                 '\tat com.acme.app.util.Helper.check(Helper.java:5)\n'
                 '\tat com.acme.app.App.start(App.java:11)\n'
                 '\tat com.acme.app.App.main(Unknown Source)\n'
                 '\tat com.acme.app.Other.stop(App.java:11)\n')   # not App.java's function
        frames = json.loads(cli('trace', '-', '--index', out, '--json', input=trace)
                            .stdout)['exceptions'][0]['frames']
        self.assertEqual([(f['path'], f['chunk']['symbol']) if f['inside_root'] else None
                          for f in frames],
                         [('src/util/Helper.java', 'Helper.check'), ('src/App.java', 'App.start'),
                          ('src/App.java', 'App.main'), None])
        text = cli('trace', '-', '--index', out, input=trace).stdout
        self.assertIn('src/App.java:6-8 App.main\n'
                      '      6 |     public static void main(String[] args) {\n'
                      '      7 |         new App().start();\n', text)    # no line: its first

    def test_a_single_shared_file_name_is_not_enough(self):
        write(self.tmp / 'repo' / 'pkg' / 'models.py', 'def f():\n    pass\n')
        write(self.tmp / 'repo' / 'util.py', 'def g():\n    pass\n')
        out = self.tmp / 'i.json'
        cli('index', self.tmp / 'repo', '--out', out)
        index = code_search.open_index_file(out)
        match = match_frame_path
        self.assertIsNone(match(index, '/elsewhere/other/models.py'))
        self.assertEqual(match(index, '/elsewhere/pkg/models.py'), 'pkg/models.py')
        self.assertEqual(match(index, 'models.py'), 'pkg/models.py')
        self.assertEqual(match(index, '/from/another/machine/util.py'), 'util.py')
        self.assertIsNone(match(index, os.path.join(os.path.dirname(os.__file__), 'os.py')))
        self.assertIsNone(match(index, '/elsewhere/pkg/mo\0dels.py'))     # no file's name


if __name__ == '__main__':
    unittest.main()

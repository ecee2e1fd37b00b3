"""Robustness of code_search.py: an index run killed at any moment, concurrent indexers
and searchers, and randomly damaged Python sources fed to the chunker."""
import codecs
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

from tests import support
from tests.support import CODE_TOOL as TOOL, ENV, write
from tests.test_code_basic import real_lines

import code_search  # noqa: E402
SUMMARY = re.compile(r'갱신 파일: (\d+), 제거 파일: (\d+), 건너뛴 파일: (\d+) '
                     r'\(파일 (\d+)개, 조각 (\d+)개\)\n\Z')


def command(*args):
    return [sys.executable, str(TOOL)] + [str(a) for a in args]


def run_cli(*args, timeout=180):
    return support.run_cli(TOOL, *args, timeout=timeout)


def module_text(number, generation, functions):
    parts = [f'"""Generated module {number}, generation {generation}."""\n'
             f'GENERATION_{number} = {generation}\n\n']
    for j in range(functions):
        parts.append(
            f'def function_{number}_{j}(alpha, beta):\n'
            f'    """Compute value {number} {j} for gamma delta, gen{generation}."""\n'
            f'    total = alpha + beta * {j}\n'
            f'    for k in range(10):\n'
            f'        total += k * alpha - beta\n'
            f'    return total\n\n')
    parts.append(f'def marker_{number}_gen{generation}():\n    return {generation}\n')
    return ''.join(parts)


def make_tree(root, files, generation, functions):
    for number in range(files):
        write(Path(root) / f'pkg{number % 8}' / f'mod_{number:03d}.py',
              module_text(number, generation, functions))


def leftovers(out):
    folder, name = os.path.split(str(out))
    return sorted(n for n in os.listdir(folder) if n.startswith(f'.{name}.') and
                  n.endswith('.tmp'))


class KilledIndexTests(unittest.TestCase):
    FILES = 400
    FUNCTIONS = 12

    def assert_valid_index(self, out, files):
        data = Path(out).read_bytes()
        index = json.loads(data.decode('utf-8'))
        self.assertEqual(index['tool'], 'code_search')
        self.assertEqual(code_search.index_problem(index), '')
        self.assertEqual(len(index['files']), files)
        result = run_cli('search', 'gamma delta', '--index', out, '--json', '--top-k', '3')
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(json.loads(result.stdout)['results']), 3)
        return index

    def start_and_kill(self, root, out, delay):
        process = subprocess.Popen(command('index', root, '--out', out, '--jobs', '1'),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env=ENV)
        try:
            time.sleep(delay)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=60)
        return process.returncode

    @unittest.skipUnless(hasattr(signal, 'SIGKILL'), 'needs SIGKILL')
    def test_sigkill_leaves_old_or_new_index(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / 'root'
            out = Path(folder) / 'index.json'
            make_tree(root, self.FILES, 0, self.FUNCTIONS)
            # First run killed early: no index yet, or (if it finished) a valid one.
            self.start_and_kill(root, out, 0.05)
            if out.exists():
                self.assert_valid_index(out, self.FILES)
            started = time.monotonic()
            result = run_cli('index', root, '--out', out, '--jobs', '1')
            full_run = time.monotonic() - started          # only to spread the kills
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assert_valid_index(out, self.FILES)
            kills = 7
            for number in range(1, kills + 1):
                make_tree(root, self.FILES, number, self.FUNCTIONS)
                status = self.start_and_kill(root, out, full_run * number / kills)
                self.assertIn(status, (0, -signal.SIGKILL))
                self.assert_valid_index(out, self.FILES)
            result = run_cli('index', root, '--out', out, '--jobs', '1')
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertRegex(result.stdout, SUMMARY)
            self.assertEqual(leftovers(out), [])
            self.assert_valid_index(out, self.FILES)
            search = run_cli('search', f'marker_0_gen{kills}', '--index', out, '--json',
                             '--top-k', '1')
            hit = json.loads(search.stdout)['results'][0]
            self.assertEqual((hit['symbol'], hit['stale']), (f'marker_0_gen{kills}', False))
            again = run_cli('index', root, '--out', out, '--jobs', '1')
            self.assertTrue(again.stdout.startswith('갱신 파일: 0, 제거 파일: 0,'), again.stdout)

    def test_leftover_temp_files_are_removed(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / 'root'
            out = Path(folder) / 'index.json'
            make_tree(root, 3, 0, 1)
            stale = Path(folder) / '.index.json.999999.deadbeef.tmp'
            stale.write_text('{"partial": ', encoding='utf-8')
            result = run_cli('index', root, '--out', out)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(leftovers(out), [])
            self.assertEqual(len(json.loads(out.read_text(encoding='utf-8'))['files']), 3)


class ConcurrencyTests(unittest.TestCase):
    def test_concurrent_indexers_lose_no_update(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / 'root'
            out = Path(folder) / 'index.json'
            files = 120
            make_tree(root, files, 0, 6)
            self.assertEqual(run_cli('index', root, '--out', out, '--jobs', '1').returncode, 0)
            processes = []
            for k in range(4):
                # Change files while the earlier indexers run, then start one more.
                for number in range(k * 10, k * 10 + 10):
                    write(root / f'pkg{number % 8}' / f'mod_{number:03d}.py',
                          module_text(number, 100 + k, 6))
                write(root / 'extra' / f'new_{k}.py', f'def brand_new_{k}():\n    return {k}\n')
                if k == 2:
                    os.unlink(root / 'pkg7' / 'mod_119.py')
                processes.append(subprocess.Popen(
                    command('index', root, '--out', out, '--jobs', '1'),
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV))
            for process in processes:
                stdout, stderr = process.communicate(timeout=120)
                self.assertEqual(process.returncode, 0, stderr.decode('utf-8', 'replace'))
                self.assertRegex(stdout.decode('utf-8'), SUMMARY)
                self.assertNotIn(b'Traceback', stderr)
            index = json.loads(out.read_text(encoding='utf-8'))
            self.assertEqual(code_search.index_problem(index), '')
            self.assertEqual(len(index['files']), files - 1 + 4)
            final = run_cli('index', root, '--out', out, '--jobs', '1')
            self.assertEqual(final.returncode, 0, final.stderr)
            self.assertEqual(SUMMARY.match(final.stdout).groups()[:2], ('0', '0'))
            self.assertEqual(leftovers(out), [])
            for k in range(4):
                number = k * 10 + 3
                result = run_cli('search', f'marker_{number}_gen{100 + k}', '--index', out,
                                 '--json', '--top-k', '1')
                hit = json.loads(result.stdout)['results'][0]
                self.assertEqual((hit['symbol'], hit['stale']),
                                 (f'marker_{number}_gen{100 + k}', False))

    def test_searchers_while_index_is_rewritten(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / 'root'
            out = Path(folder) / 'index.json'
            make_tree(root, 80, 0, 6)
            write(root / 'stable.py', 'def stable_lighthouse_keeper():\n'
                                      '    """Never changes."""\n    return 1\n')
            self.assertEqual(run_cli('index', root, '--out', out, '--jobs', '1').returncode, 0)
            failures, done = [], threading.Event()

            def reindex():
                try:
                    for generation in range(1, 7):
                        for number in range(0, 80, 3):
                            write(root / f'pkg{number % 8}' / f'mod_{number:03d}.py',
                                  module_text(number, generation, 6))
                        result = run_cli('index', root, '--out', out, '--jobs', '1')
                        if result.returncode != 0:
                            failures.append(('index', result.returncode, result.stderr))
                finally:
                    done.set()
            indexer = threading.Thread(target=reindex)
            indexer.start()
            searches = 0
            try:
                while not done.is_set() or searches < 12:
                    batch = [subprocess.Popen(command('search', 'stable lighthouse keeper',
                                                      '--index', out, '--json'),
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                              env=ENV) for _ in range(3)]
                    for process in batch:
                        stdout, stderr = process.communicate(timeout=120)
                        searches += 1
                        self.assertEqual(process.returncode, 0, stderr.decode('utf-8', 'replace'))
                        results = json.loads(stdout.decode('utf-8'))['results']
                        self.assertEqual(results[0]['symbol'], 'stable_lighthouse_keeper')
                        self.assertEqual(results[0]['path'], 'stable.py')
            finally:
                indexer.join(timeout=300)
            self.assertEqual(failures, [])
            self.assertGreaterEqual(searches, 12)


# --- Random damage to valid sources: only SkipFile may escape, lines stay true ----------

SAMPLE = '''#!/usr/bin/env python3
"""Sample module for mutation: classes, decorators, async, strings, comments."""
import functools

LIMIT = 10
NAMES: list = ["a", "b"]


def decorate(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        """Wrapped: {args}."""
        return function(*args, **kwargs)
    return wrapper


class Invoice:
    """An invoice with tax."""
    rate = 0.1

    @decorate
    def total_with_tax(self, amount):
        """Calculate total including tax."""
        text = """multi
        line string
        """
        return round(amount * (1 + self.rate), 2)  # rounding

    class Line:
        pass

    async def fetch(self):
        async with self.lock:
            try:
                return await self.get()
            except KeyError:
                def fallback():
                    return None
                return fallback()
            finally:
                pass


if LIMIT > 5:
    def conditional():
        return "\\u2028 in an escape"
else:
    def conditional():
        return 2


def last(x=lambda: 1):
    return x()
'''



INSERTS = [b'\r', b'\r\n', b'\n', b'\x0c', b'\x0b', '\u2028'.encode(), '\u2029'.encode(),
           '\x85'.encode(), b'\x85', codecs.BOM_UTF8, b'\x00', b'\\', b'"""', b"'", b'#',
           b'(', b')', b':', b'    ', b'\t', b'def f():\n', b'class C:\n', b'@d\n',
           '세금'.encode(), b'\xff', b'\xc3', b'# coding: latin-1\n', b'# coding: cp949\n']
COOKIES = ['latin-1', 'cp949', 'euc-kr', 'utf-8', 'utf-16', 'utf-32', 'rot13', 'hex', 'idna',
           'punycode', 'utf-7', 'unicode_escape', 'raw_unicode_escape', 'cp037', 'undefined',
           'klingon', 'uu', 'base64', 'zlib', 'ascii', 'shift_jis', 'utf_16_be']


def mutate(data, rng):
    """One to three random edits of the bytes, described for the failure message."""
    steps = []
    for _ in range(rng.randint(1, 3)):
        choice = rng.randrange(9)
        at = rng.randint(0, len(data))
        if choice == 0:
            piece = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
            data = data[:at] + piece + data[at:]
            steps.append(f'insert {piece!r} at {at}')
        elif choice == 1:
            end = min(len(data), at + rng.randint(1, 40))
            data = data[:at] + data[end:]
            steps.append(f'delete {at}:{end}')
        elif choice == 2 and data:
            at = min(at, len(data) - 1)
            piece = bytes([rng.randrange(256)])
            data = data[:at] + piece + data[at + 1:]
            steps.append(f'replace {at} with {piece!r}')
        elif choice in (3, 4):
            piece = rng.choice(INSERTS)
            data = data[:at] + piece + data[at:]
            steps.append(f'insert {piece!r} at {at}')
        elif choice == 5:
            data = data[:at]
            steps.append(f'truncate at {at}')
        elif choice == 6:
            newline = rng.choice([b'\r', b'\r\n', b'\n'])
            data = re.sub(rb'\r\n|\r|\n', newline, data)
            steps.append(f'newlines {newline!r}')
        elif choice == 7:
            cookie = rng.choice(COOKIES)
            prefix = rng.choice([b'', codecs.BOM_UTF8, b'#!/usr/bin/python\n'])
            data = prefix + f'# -*- coding: {cookie} -*-\n'.encode() + data
            steps.append(f'cookie {cookie} after {prefix!r}')
        else:
            data = codecs.BOM_UTF8 + data
            steps.append('BOM')
    return data, steps


class RandomDamageTests(unittest.TestCase):
    def sources(self):
        texts = [SAMPLE.encode('utf-8'), SAMPLE.replace('\n', '\r\n').encode('utf-8'),
                 ('# -*- coding: cp949 -*-\n' + SAMPLE.replace('Sample', '세금 합계')).encode('cp949')]
        for name in ('textwrap.py', 'bisect.py', 'colorsys.py'):
            path = Path(os.__file__).parent / name
            if path.is_file():
                texts.append(path.read_bytes())
        return texts

    def check(self, data, description):
        """Chunk the bytes; returns (number of chunks, problem or '')."""
        try:
            chunks = code_search.chunk_source(data, 'x.py')
        except code_search.SkipFile as skip:
            if not (isinstance(skip.line, int) and skip.reason):
                return 0, f'SkipFile without line or reason after {description}'
            return 0, ''
        except Exception as error:       # anything else is a bug
            return 0, f'{type(error).__name__}: {error} after {description}'
        lines = real_lines(data)
        for chunk in chunks:
            if not 1 <= chunk['start'] <= chunk['end'] <= len(lines):
                return 0, (f"{chunk['symbol']} lines {chunk['start']}-{chunk['end']} of "
                           f"{len(lines)} after {description}")
            if chunk['text'] != '\n'.join(lines[chunk['start'] - 1:chunk['end']]):
                return 0, f"{chunk['symbol']}: text is not the real lines after {description}"
        return len(chunks), ''

    def assert_no_problems(self, problems):
        # One example per kind of problem, so one bug does not hide another.
        kinds = {}
        for problem in problems:
            kinds.setdefault(re.sub(r' after .*', '', problem)[:60], problem)
        self.assertEqual(list(kinds.values()), [], f'{len(problems)} failing inputs')

    def test_mutated_sources(self):
        produced, problems = 0, []
        for index, source in enumerate(self.sources()):
            count, problem = self.check(source, f'source {index} unchanged')
            self.assertEqual((count > 0, problem), (True, ''))
            for seed in range(500):
                rng = random.Random(index * 1000 + seed)
                data, steps = mutate(source, rng)
                count, problem = self.check(data, f'source {index} seed {seed}: {steps}')
                produced += count
                if problem:
                    problems.append(problem)
        self.assertGreater(produced, 100)
        self.assert_no_problems(problems)

    def test_every_cookie_codec(self):
        body = SAMPLE.encode('utf-8')
        problems = []
        for cookie in COOKIES:
            for prefix in (b'', codecs.BOM_UTF8, b'#!/usr/bin/python\n', b'\n'):
                for newline in (b'\n', b'\r', b'\r\n'):
                    data = prefix + f'# coding: {cookie}\n'.encode() + body
                    data = re.sub(rb'\r\n|\r|\n', newline, data)
                    problem = self.check(data, f'cookie {cookie} prefix {prefix!r} '
                                               f'newline {newline!r}')[1]
                    if problem:
                        problems.append(problem)
        self.assert_no_problems(problems)


if __name__ == '__main__':
    unittest.main()

"""notes_search.py under SIGKILL, concurrent processes and randomised Markdown."""
import collections
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from tests.support import NOTES_TOOL as TOOL, ROOT

import notes_search as ns  # noqa: E402

WORDS = ('cache index search note tag chunk heading fence 캐시 검색 색인 메모 태그 '
         '검색엔진을 캐시를 문서의').split()


def file_lines(text):
    """The lines a file really has: split at \\r\\n, \\r, \\n only, BOM dropped."""
    text = text[1:] if text.startswith('\ufeff') else text
    lines = re.split(r'\r\n|\r|\n', text)
    return lines[:-1] if lines[-1] == '' else lines


def write_notes(root, count, rng, prefix='n'):
    """Write `count` random notes under root in a few folders."""
    for number in range(count):
        folder = root / f'd{number % 7}'
        folder.mkdir(parents=True, exist_ok=True)
        paragraphs = [' '.join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))
                      for _ in range(rng.randint(1, 6))]
        (folder / f'{prefix}{number}.md').write_text(
            f'# {rng.choice(WORDS)} {number}\n\n' + '\n\n'.join(paragraphs) + '\n',
            encoding='utf-8')


class KillTests(unittest.TestCase):
    def test_sigkill_at_any_moment_leaves_the_old_or_the_new_index(self):
        rng = random.Random(11)
        with tempfile.TemporaryDirectory() as temp:
            tmp = Path(temp)
            root, index = tmp / 'notes', tmp / 'index.json'
            write_notes(root, 1500, rng)
            ns.build_index(root, index)
            old_bytes = index.read_bytes()
            old_files = set(json.loads(old_bytes)['files'])
            for number in range(0, 1500, 5):
                (root / f'd{number % 7}' / f'n{number}.md').write_text(f'changed {number}\n')
            for number in range(1, 300, 3):
                (root / f'd{number % 7}' / f'n{number}.md').unlink()
            write_notes(root / 'new', 200, rng, prefix='m')
            command = [sys.executable, str(TOOL), 'index', 'notes']
            started = time.monotonic()
            subprocess.run(command, cwd=tmp, capture_output=True, check=True)
            full_run = time.monotonic() - started
            new_files = set(json.loads(index.read_bytes())['files'])
            self.assertNotEqual(old_files, new_files)
            outcomes = set()
            for fraction in [0, 0.05, 0.15, 0.3, 0.45, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.1]:
                index.write_bytes(old_bytes)
                process = subprocess.Popen(command, cwd=tmp, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL)
                time.sleep(full_run * fraction)
                process.send_signal(signal.SIGKILL)
                process.wait()
                document = ns.load_index(str(index))
                files = set(document['files'])
                self.assertIn(files, (old_files, new_files), fraction)
                outcomes.add('new' if files == new_files else 'old')
                ns.search(index, '캐시 cache', limit=5)
            self.assertIn('old', outcomes)
            run = subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(set(ns.load_index(str(index))['files']), new_files)
            self.assertEqual([name for name in os.listdir(tmp) if name.endswith('.tmp')], [])


    @unittest.skipUnless(os.path.isdir('/proc/self'), 'looks for stray workers in /proc')
    def test_sigkill_of_a_parallel_cold_index_leaves_no_index_and_no_workers(self):
        with tempfile.TemporaryDirectory() as temp:
            tmp = Path(temp)
            write_notes(tmp / 'notes', 4 * ns.NOTES_PER_JOB, random.Random(13))
            command = [sys.executable, str(TOOL), 'index', 'notes', '--out', 'cold.json']
            started = time.monotonic()
            subprocess.run(command, cwd=tmp, capture_output=True, check=True)
            full_run = time.monotonic() - started
            expected = set(ns.load_index(str(tmp / 'cold.json'))['files'])
            for fraction in (0.3, 0.6, 0.9):
                (tmp / 'cold.json').unlink(missing_ok=True)
                process = subprocess.Popen(command, cwd=tmp, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL)
                time.sleep(full_run * fraction)
                process.send_signal(signal.SIGKILL)
                process.wait()
                if (tmp / 'cold.json').exists():
                    self.assertEqual(set(ns.load_index(str(tmp / 'cold.json'))['files']),
                                     expected)
                time.sleep(2 * ns.WORKER_WATCH_SECONDS + 0.5)
                self.assertEqual(processes_running(str(tmp)), [], fraction)
            run = subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)


def processes_running(cwd):
    """Pids of live processes whose working folder is cwd (Linux /proc)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            if os.readlink(f'/proc/{pid}/cwd') == os.path.realpath(cwd):
                with open(f'/proc/{pid}/stat') as status:
                    if status.read().rsplit(')', 1)[1].split()[0] != 'Z':
                        pids.append(int(pid))
        except OSError:
            continue
    return pids


class ConcurrencyTests(unittest.TestCase):
    def test_concurrent_indexers_take_turns_and_lose_nothing(self):
        code = ('import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);'
                'import notes_search as ns;'
                'Path(sys.argv[2]).write_text(sys.argv[3] + "\\n", encoding="utf-8");'
                'sys.exit(ns.main(["index", "notes"]))')
        with tempfile.TemporaryDirectory() as temp:
            tmp = Path(temp)
            write_notes(tmp / 'notes', 300, random.Random(3))
            for round_number in range(2):
                processes = [subprocess.Popen(
                    [sys.executable, '-c', code, str(ROOT), f'notes/p{number}.md',
                     f'round{round_number}word{number}'],
                    cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                    for number in range(5)]
                for process in processes:
                    _, errors = process.communicate(timeout=120)
                    self.assertEqual(process.returncode, 0, errors)
                for number in range(5):
                    hits = ns.search(tmp / 'index.json', f'round{round_number}word{number}')
                    self.assertEqual([hit['path'] for hit in hits], [f'p{number}.md'])

    def test_searchers_never_see_a_partial_index(self):
        searcher = ('import sys, time; sys.path.insert(0, sys.argv[1])\n'
                    'import notes_search as ns\n'
                    'end = time.monotonic() + float(sys.argv[2]); count = 0\n'
                    'while time.monotonic() < end:\n'
                    '    ns.search("index.json", "캐시 cache search", limit=3); count += 1\n'
                    'print(count)\n')
        with tempfile.TemporaryDirectory() as temp:
            tmp = Path(temp)
            rng = random.Random(5)
            write_notes(tmp / 'notes', 400, rng)
            ns.build_index(tmp / 'notes', tmp / 'index.json')
            searchers = [subprocess.Popen([sys.executable, '-c', searcher, str(ROOT), '4'],
                                          cwd=tmp, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True)
                         for _ in range(3)]
            end = time.monotonic() + 4
            while time.monotonic() < end:
                write_notes(tmp / 'notes', rng.randint(50, 400), rng)
                run = subprocess.run([sys.executable, str(TOOL), 'index', 'notes'], cwd=tmp,
                                     capture_output=True, text=True, timeout=120)
                self.assertEqual(run.returncode, 0, run.stderr)
            for process in searchers:
                output, errors = process.communicate(timeout=60)
                self.assertEqual(process.returncode, 0, errors)
                self.assertGreater(int(output), 0)


class MutationTests(unittest.TestCase):
    PIECES = ['\n', '\r\n', '\r', '\n\n', '```', '~~~', '````', '# ', '## ', '#', '---', '===',
              '...', 'tags:', ' tags: a, b', '- ', '> ', '\ufeff', '\x0b', '\x0c', '\x1c', '\x1d',
              '\x1e', '\x85', '\u2028', '\u2029', '\x00', '\t', '    ', '`', '#tag ',
              'http://x/#y',
              '캐시를', '검색엔진', 'é', '\U0001F600', '[', ']', ':', '"', '\\']

    def random_note(self, rng):
        lines = []
        if rng.random() < 0.3:
            lines += ['---', 'tags: [a, b]', 'title: t', '---']
        for _ in range(rng.randint(0, 25)):
            kind = rng.random()
            if kind < 0.15:
                lines.append('#' * rng.randint(1, 7) + ' ' + rng.choice(WORDS))
            elif kind < 0.25:
                lines.append(rng.choice(['```', '~~~', '```py', '````']))
            elif kind < 0.4:
                lines.append('')
            elif kind < 0.45:
                lines.append(rng.choice(['===', '---', '***', '- - -']))
            else:
                lines.append(' '.join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))))
        text = rng.choice(['\n', '\r\n', '\r']).join(lines)
        for _ in range(rng.randint(0, 8)):
            position = rng.randint(0, len(text))
            if rng.random() < 0.7:
                text = text[:position] + rng.choice(self.PIECES) + text[position:]
            else:
                text = text[:position] + text[position + rng.randint(1, 5):]
        return text

    def check_chunks(self, text, chunks):
        lines = file_lines(text)
        previous_end = 0
        for chunk in chunks:
            self.assertTrue(previous_end < chunk['start'] <= chunk['end'] <= len(lines), chunk)
            self.assertEqual(chunk['text'], '\n'.join(lines[chunk['start'] - 1:chunk['end']]))
            self.assertEqual(chunk['id'], f"{chunk['path']}:L{chunk['start']}")
            previous_end = chunk['end']

    def test_random_markdown_never_escapes_and_stays_inside_the_file(self):
        checked, deadline = 0, time.monotonic() + 3
        for seed in range(100000):
            if time.monotonic() > deadline and checked >= 300:
                break
            rng = random.Random(seed)
            text = self.random_note(rng)
            try:
                chunks = ns.parse_note(text, 'm.md')
            except ns.NoteSyntaxError as error:
                self.assertTrue(1 <= error.line <= len(file_lines(text)), (seed, error.line))
                continue
            self.check_chunks(text, chunks)
            ns.analyze(text)
            ns.query_terms(text)
            checked += 1
        self.assertGreaterEqual(checked, 300)

    def test_posted_terms_and_lengths_are_each_chunks_own_terms(self):
        words = ['에서', '학교에서', '캐시를', '검색엔진', '엔진', '하하하', '가', '를', '캐시',
                 'café', 'abc가나', 'naïve검색', '파일1', '…캐시', 'ＡＢＣ', 'the', 'a', 'Cache',
                 'x2', '으로는', '검색엔진을', '\ud800캐시', 'ß', '가나다라마', '집에서는']
        for seed in range(200):
            rng = random.Random(seed)
            notes = [ns.Parsed(f'n{number}.md', {'fid': number}, sections=[
                ((), [' '.join(rng.choice(words) for _ in range(rng.randint(0, 8)))
                      for _ in range(rng.randint(1, 4))])])
                for number in range(rng.randint(1, 5))]
            postings = ns.post_notes(notes)
            posted = collections.defaultdict(collections.Counter)
            for term, tokens in postings.items():
                for token in tokens:
                    if '-' not in token:   # a heading's run: the path's words
                        posted[token][term] += 1
            for note in notes:
                texts = note.sections[0][1]
                lengths = list(map(int, note.record['lengths'].split()))
                self.assertEqual((note.record['count'], note.record['words']),
                                 (len(texts), sum(lengths)))
                for number, text in enumerate(texts):
                    counts = ns.count_terms(text, ns.RunTerms())
                    self.assertEqual(lengths[number], sum(counts.values()), (seed, text))
                    self.assertEqual(posted[f"{note.record['fid']}.{number}"],
                                     collections.Counter({term: count for term, count in
                                                          counts.items()
                                                          if term not in ns.STOP_WORDS}),
                                     (seed, text))

    def test_stored_text_gives_back_the_same_chunks(self):
        with tempfile.TemporaryDirectory() as temp:
            tmp = Path(temp)
            root = tmp / 'notes'
            root.mkdir()
            originals = {}
            for seed in range(300):
                text = self.random_note(random.Random(seed))
                (root / f'm{seed}.md').write_bytes(text.encode('utf-8'))
                originals[f'm{seed}.md'] = text
            summary = ns.index_folder(root, str(tmp / 'index.json'), ns.IndexOptions())
            document = ns.load_index(str(tmp / 'index.json'))
            paths = list(document['files'])
            self.assertEqual(len(paths) + len(summary['skipped']), 300)
            for relative, text in ns.stored_texts(document, paths).items():
                self.assertEqual(ns.parse_note(text, relative),
                                 ns.parse_note(originals[relative], relative), relative)
            for record in summary['skipped']:
                self.assertTrue(1 <= record['line'] <= len(file_lines(originals[record['path']])),
                                record)


if __name__ == '__main__':
    unittest.main()

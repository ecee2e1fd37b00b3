#!/usr/bin/env python3
"""Benchmark notes_search.py on a temporary copy of the tldr corpus (standard library only).

Usage:  python tests/bench_notes.py [--quick] [--runs N] [--corpus DIR] [--scales 1,2,4]

For each scale (1x, 2x, 4x: copies of the corpus side by side) it measures whole
processes: the floor (walk, read and SHA-256 every note), the interpreter starting
with nothing to do (part of every other figure), a cold index, a no-change
re-index, one changed note, one deleted note, and searches for an English, a Korean
and a tag-filtered question.  Each run is one round of all of them in that order,
so that the floor and every measure share the machine's state of the moment.  It
prints medians with min and max, each also as a ratio to the floor's median (the
figure the targets are checked on) and as the range of its ratios to the floor
of the same round, the peak memory of each child (ru_maxrss from os.wait4) and
the index size, then checks the targets.  The copy gives every note a front-matter tag
naming its tldr platform (common, linux, ...) so that the tag filter has work to do.
Not a unit test: the name does not start with test_.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / 'notes_search.py'
DEFAULT_CORPUS = ROOT.parent / 'shared' / 'data' / 'tldr'
QUESTIONS = {'search en': ['extract a compressed archive'],
             'search ko': ['압축 파일을 해제'],
             'search tag': ['list running processes', '--tag', 'linux']}
FLOOR_SCRIPT = '''
import hashlib, os, sys
count = 0
for folder, dirs, files in os.walk(sys.argv[1]):
    dirs.sort()
    for name in sorted(files):
        if name.endswith('.md'):
            with open(os.path.join(folder, name), 'rb') as note:
                hashlib.sha256(note.read()).hexdigest()
            count += 1
print(count)
'''
SETTLE_SECONDS = 3   # the tool re-hashes notes changed in the last 2 s (their mtime cannot
                     # be trusted yet); a real folder's notes are older than that
TARGETS = {'search': 0.2, 'no-change': 1.5, 'cold': 8.0, 'cold_seconds': 2.0, 'size': 2.0}


def run_child(command, cwd):
    """Run command; return (seconds, peak resident MB, CPU seconds). Raises if it fails.

    Peak memory and CPU come from os.wait4 and cover the child and the worker
    processes it waited for; peak memory is the largest single process.
    """
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f'{command} exited {process.returncode}: {errors.read()[-500:]!r}')
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def copy_with_platform_tag(source, destination):
    """Copy one note, putting a front-matter tag for its tldr platform in front."""
    if not source.endswith('.md') or os.path.basename(os.path.dirname(
            os.path.dirname(source))) not in ('pages', 'pages.ko'):
        return shutil.copy2(source, destination)
    platform = os.path.basename(os.path.dirname(source))
    with open(source, 'rb') as original, open(destination, 'wb') as copy:
        copy.write(f'---\ntags: [{platform}]\n---\n'.encode('utf-8') + original.read())
    return destination


def make_corpus(source, folder, copies):
    """copies side-by-side copies of source under folder; return (folder, note bytes)."""
    for number in range(copies):
        shutil.copytree(source, folder / f'copy{number}', copy_function=copy_with_platform_tag)
    notes = sorted(folder.rglob('*.md'))
    return notes, sum(note.stat().st_size for note in notes)


def summary(samples):
    """(median, min, max) of a list."""
    return statistics.median(samples), min(samples), max(samples)


def bench_scale(scale, source, workdir, runs):
    """Measure one scale; return {measure: (seconds, peak MB, CPU seconds lists)}, sizes."""
    corpus = workdir / f'corpus{scale}x'
    notes, note_bytes = make_corpus(source, corpus, scale)
    time.sleep(SETTLE_SECONDS)
    index = workdir / f'index{scale}x.json'
    tool = [sys.executable, str(TOOL)]
    results = {}

    changed = iter(notes[::max(1, len(notes) // (runs + 1))])
    deleted = iter(notes[1::max(1, len(notes) // (runs + 1))])

    def change_one():
        note = next(changed)
        with open(note, 'a', encoding='utf-8') as handle:
            handle.write('\n- Benchmark edit: a new paragraph.\n')

    index_command = tool + ['index', str(corpus), '--out', str(index)]
    measures = [('floor', [sys.executable, '-c', FLOOR_SCRIPT, str(corpus)], None),
                ('python start', [sys.executable, '-c', 'pass'], None),   # in every figure
                ('cold index', index_command, lambda: index.unlink() if index.exists() else None),
                ('no-change', index_command, None),
                ('one changed', index_command, change_one),
                ('one deleted', index_command, lambda: next(deleted).unlink())]
    measures += [(name, tool + ['search'] + question + ['--index', str(index)], None)
                 for name, question in QUESTIONS.items()]
    for _ in range(runs):   # rounds: the floor and each measure see the same conditions
        for name, command, before in measures:
            if before:
                before()
            for samples, value in zip(results.setdefault(name, ([], [], [])),
                                      run_child(command, workdir)):
                samples.append(value)
    return results, note_bytes, index.stat().st_size


def print_table(scale, results, note_bytes, index_bytes):
    """The figures of one scale, each with its ratio to the floor."""
    floor_seconds = statistics.median(results['floor'][0])
    floor_peak = max(results['floor'][1])
    print(f'\n== {scale}x corpus: {note_bytes / 1e6:.1f} MB of notes, '
          f'index {index_bytes / 1e6:.1f} MB ({index_bytes / note_bytes:.2f}x the notes)')
    floor_cpu = statistics.median(results['floor'][2])
    print(f'{"measure":<13}{"median s":>9}{"min s":>8}{"max s":>8}{"x floor":>9}{"rounds":>15}'
          f'{"peak MB":>9}{"x floor":>9}{"cpu s":>8}{"x floor":>9}')
    for name, (seconds, peaks, cpu) in results.items():
        median, low, high = summary(seconds)
        paired = [value / floor for value, floor in zip(seconds, results['floor'][0])]
        rounds = '{:.2f}-{:.2f}'.format(min(paired), max(paired))
        print(f'{name:<13}{median:9.3f}{low:8.3f}{high:8.3f}{median / floor_seconds:9.2f}'
              f'{rounds:>15}{max(peaks):9.1f}{max(peaks) / floor_peak:9.2f}'
              f'{statistics.median(cpu):8.3f}{statistics.median(cpu) / floor_cpu:9.2f}')


def check_targets(by_scale):
    """Print each target with its measured value; return True when all are met."""
    results, note_bytes, index_bytes = by_scale[1]
    floor = statistics.median(results['floor'][0])
    searches = [statistics.median(results[name][0]) for name in QUESTIONS]
    index_peak = max(max(results[name][1]) for name in
                     ('cold index', 'no-change', 'one changed', 'one deleted'))
    checks = [
        ('search <= 0.2 s (slowest of 3)', max(searches), TARGETS['search']),
        ('no-change <= 1.5x floor', statistics.median(results['no-change'][0]) / floor,
         TARGETS['no-change']),
        ('cold <= 8x floor', statistics.median(results['cold index'][0]) / floor,
         TARGETS['cold']),
        ('cold <= 2.0 s', statistics.median(results['cold index'][0]), TARGETS['cold_seconds']),
        ('index <= 2x notes', index_bytes / note_bytes, TARGETS['size'])]
    print(f'(index peak memory: {index_peak:.0f} MB)')
    print('\n== targets (1x unless named)')
    for label, value, limit in checks:
        print(f'{label:<34}{value:9.3f}  {"met" if value <= limit else "NOT MET"}')
    return all(value <= limit for _, value, limit in checks)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--quick', action='store_true', help='2 runs per measure instead of 5')
    parser.add_argument('--runs', type=int, help='runs per measure (default: 5)')
    parser.add_argument('--corpus', type=Path, default=DEFAULT_CORPUS)
    parser.add_argument('--scales', default='1,2', help='corpus copies (default: 1,2)')
    args = parser.parse_args(argv)
    runs = max(1, args.runs or (2 if args.quick else 5))
    scales = [int(part) for part in args.scales.split(',')]
    print(f'python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {runs} run(s) per measure, '
          f'corpus {args.corpus}, load average {os.getloadavg()[0]:.1f} at start')
    by_scale = {}
    with tempfile.TemporaryDirectory(prefix='bench_notes_') as temp:
        for scale in scales:
            by_scale[scale] = bench_scale(scale, args.corpus, Path(temp), runs)
            print_table(scale, *by_scale[scale])
            sys.stdout.flush()
    return 0 if 1 not in by_scale or check_targets(by_scale) else 1


if __name__ == '__main__':
    sys.exit(main())

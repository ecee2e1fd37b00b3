#!/usr/bin/env python3
"""Pasted error messages generated from the standard library's raise statements
(standard library only).

Usage:  python tests/eval/evaluate_messages.py [--tool FILE] [--count N] [--seed N]
                                               [--worst N] [--language LANG --root DIR]

No question here is written by hand, so none can be tuned on: each is what Python
prints for one `raise SomeError("...")` of this interpreter's standard library
(tests, idlelib and lib2to3 left out), as `SomeError: message`, with the literal's
placeholders (%s, {name}, an f-string's fields) filled with 'foo', 42, 'bar' or
x.txt.  The gold answer is the function or method holding the raise; a message
raised in several places has each of them as gold.  Messages of fewer than three
words are left out.  --count questions are drawn with --seed (the same sample for
the same interpreter), the standard library is copied to a temporary folder
without site-packages and indexed in memory, and the tool (this project's
code_search.py unless --tool names another) answers each with top_k=10.

--language go|java|javascript|kotlin|rust|typescript with --root DIR (a corpus folder, e.g. one that
evaluate_polyglot.py --corpus-dir built, indexed in place) draws the messages of
that language's code instead, found by pattern, not parsed: Java's, TypeScript's and
JavaScript's `throw new SomeError("..." + x + "...")` (as `SomeError: message`),
Kotlin's `throw SomeError("...")`, Go's
errors.New and fmt.Errorf, Rust's panic! and .expect; each string literal's
placeholders (%v, {}, {name}, ${x}, $x) and each expression between literals are
filled, and the gold answer is the innermost definition code_search gives the line
(code_search's test files, TEST_PATH, and the examples of doc comments left out).

Printed: MRR@10, R@1 and R@10; with --worst N, N misses with our top 3.  Not a unit
test: the name does not start with test_.
"""
import argparse
import ast
import collections
import os
import random
import re
import sys
import tempfile
from pathlib import Path

from evaluate import copy_stdlib, load_tool, stdlib_root   # this folder's harness

LEFT_OUT = {'test', 'tests', 'idle_test', 'idlelib', 'lib2to3', 'site-packages',
            '__pycache__'}
FILLERS = ('foo', '42', "'bar'", 'x.txt')
PRINTF = re.compile(r'%(\([^)]*\))?[-#0 +]*\d*(\.\d+)?[sdrifgxXc]')


def printed(node, rng):
    """The text a raise's first argument prints, placeholders filled, or None."""
    def fill(match):
        return rng.choice(FILLERS)

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
            and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
        return PRINTF.sub(fill, node.left.value)
    if isinstance(node, ast.JoinedStr):
        return ''.join(part.value if isinstance(part, ast.Constant) else fill(None)
                       for part in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == 'format' and isinstance(node.func.value, ast.Constant) \
            and isinstance(node.func.value.value, str):
        return re.sub(r'\{[^}]*\}', fill, node.func.value.value)
    return None


def raised_messages(root, rng):
    """{'Type: message': {(path, qualified function)}} of the raises under root."""
    found = collections.defaultdict(set)
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(name for name in folders if name not in LEFT_OUT)
        for name in sorted(files):
            if not name.endswith('.py'):
                continue
            path = Path(folder, name)
            try:
                tree = ast.parse(path.read_bytes())
            except (SyntaxError, ValueError):
                continue
            pending = [(tree, ())]
            while pending:
                node, scope = pending.pop()
                for child in ast.iter_child_nodes(node):
                    inner = scope
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        inner = scope + (child.name,)
                    elif isinstance(child, ast.Raise) and scope \
                            and isinstance(child.exc, ast.Call) and child.exc.args \
                            and isinstance(child.exc.func, ast.Name):
                        message = printed(child.exc.args[0], rng)
                        if message and '\n' not in message.strip() \
                                and len(message.split()) >= 3:
                            found[f'{child.exc.func.id}: {message.strip()}'].add(
                                (path.relative_to(root).as_posix(), '.'.join(scope)))
                    pending.append((child, inner))
    return found


STRING = r'"(?:[^"\\\n]|\\.)*"'
QUOTED = STRING + r"|'(?:[^'\\\n]|\\.)*'|`[^`]*`"        # and JavaScript's other quotes
JS_THROW = r'throw\s+new\s+(\w+)\s*\(\s*(' + QUOTED + r')\s*[,)]'
THROWN = {    # language: (suffix, pattern of (type or nothing, the message's expression))
    'java': ('.java', r'throw\s+new\s+([\w.]+)\s*\(\s*(' + STRING + r'(?:\s*\+\s*(?:'
             + STRING + r'|[\w.()\[\]]+))*)\s*[,)]'),
    'typescript': ('.ts', JS_THROW),
    'javascript': ('.js', JS_THROW),
    'kotlin': ('.kt', r'throw\s+([\w.]+)\s*\(\s*(' + STRING + r')\s*[,)]'),
    'go': ('.go', r'()(?:errors\.New|fmt\.Errorf)\(\s*(' + STRING + ')'),
    'rust': ('.rs', r'()(?:panic!|\.expect)\(\s*(' + STRING + ')'),
}
FOREIGN_PLACEHOLDER = re.compile(r'%[-+# 0]*\d*(?:\.\d+)?[a-zA-Z]|\$?\{[^{}]*\}|\$\w+')
LITERAL_OR_NOT = re.compile(r'\s*(?:' + QUOTED + r'|[^+\s][^+]*)')


def printed_expression(expression, rng):
    """The text a message expression prints: its literals with placeholders filled, and
    each expression between them filled."""
    def fill(match=None):
        return rng.choice(FILLERS)

    text = ''
    for part in LITERAL_OR_NOT.findall(expression):
        part = part.strip()
        if part[:1] in '"\'`':
            text += FOREIGN_PLACEHOLDER.sub(fill, part[1:-1]).replace('\\"', '"')
        elif part:
            text += fill()
    return text


def thrown_messages(tool, root, language, chunks, rng):
    """{'Type: message' or 'message': {(path, innermost definition)}} of the errors a
    language's code under root throws, outside the files the tool takes for tests."""
    suffix, pattern = THROWN[language]
    pattern = re.compile(pattern)
    by_path = collections.defaultdict(list)
    for chunk in chunks:
        if chunk['kind'] not in ('module', 'window'):
            by_path[chunk['path']].append(chunk)
    found = collections.defaultdict(set)
    for path in sorted(by_path):
        if not path.endswith(suffix) or tool.TEST_PATH.search(path):
            continue
        text = Path(root, path).read_text(encoding='utf-8', errors='replace')
        for match in pattern.finditer(text):
            before = text[text.rfind('\n', 0, match.start()) + 1:match.start()].lstrip()
            if before.startswith(('//', '*', '/*')):            # a doc comment's example
                continue
            line = text.count('\n', 0, match.start()) + 1
            holding = [chunk for chunk in by_path[path] if chunk['start'] <= line <= chunk['end']]
            message = printed_expression(match.group(2), rng).strip()
            if holding and '\n' not in message and len(message.split()) >= 3:
                inner = min(holding, key=lambda chunk: chunk['end'] - chunk['start'])
                kind = match.group(1).rpartition('.')[2]
                found[f'{kind}: {message}' if kind else message].add((path, inner['symbol']))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--tool', help="a code_search.py to evaluate (default: the project's)")
    parser.add_argument('--count', type=int, default=300)
    parser.add_argument('--seed', type=int, default=7)
    parser.add_argument('--worst', type=int, default=0, metavar='N')
    parser.add_argument('--language', default='python', choices=('python',) + tuple(THROWN))
    parser.add_argument('--root', help='the corpus of --language (not python)')
    args = parser.parse_args()
    if args.language != 'python' and not (args.root and os.path.isdir(args.root)):
        parser.error(f'--language {args.language} needs --root DIR, a folder of its code')
    tool = load_tool(args.tool)
    with tempfile.TemporaryDirectory() as scratch:
        rng = random.Random(args.seed)
        python = args.language == 'python'
        root = Path(copy_stdlib(stdlib_root(), scratch) if python else args.root)
        chunks, _ = tool.scan_tree(root)
        found = raised_messages(root, rng) if python else \
            thrown_messages(tool, root, args.language, chunks, rng)
        questions = sorted(found)
        rng.shuffle(questions)
        questions = questions[:args.count]
        index = tool.make_search_index(chunks)
        ranks, misses = [], []
        for question in questions:
            hits = tool.search_index(index, question, top_k=10)
            rank = next((number for number, hit in enumerate(hits, 1)
                         if (hit['path'], hit['symbol']) in found[question]), None)
            ranks.append(rank)
            if rank != 1:
                misses.append((rank, question, sorted(found[question])[0],
                               [f"{hit['path']}:{hit['symbol']}" for hit in hits[:3]]))
    count = max(len(ranks), 1)
    where = 'the standard library' if args.language == 'python' else args.root
    print(f'{tool.__file__} on {len(ranks)} {args.language} messages raised in {where} '
          f'(Python {sys.version.split()[0]}, seed {args.seed})')
    print(f'MRR@10 {sum(1 / rank for rank in ranks if rank) / count:.3f}   '
          f'R@1 {sum(rank == 1 for rank in ranks) / count:.3f}   '
          f'R@10 {sum(rank is not None for rank in ranks) / count:.3f}')
    for rank, question, (path, symbol), top in misses[:args.worst]:
        print(f'{rank or "-":>4}  {question}\n      gold {path}:{symbol}\n      top  '
              + ' | '.join(top))


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Retrieval evaluation of notes_search.py on the tldr pages (standard library only).

Usage:  python tests/eval/evaluate_notes.py [--tool PATH] [--set tuning|holdout|holdout2|all]
                                            [--corpus DIR] [--per] [--save FILE] [--compare OLD]

notes_tldr.json holds 234 questions in English and Korean over ../shared/data/tldr:

  tuning    84 questions; ranking changes were kept when they improved these
  holdout   70 more, written without seeing the tool's failures, to check that a
            change kept on the tuning set carries over; since then its failures
            were read while diagnosing changes, so it is no longer clean
  holdout2  80 more (40 English, 40 Korean), written from the pages alone by
            someone who never ran the tool, each gold page checked for an example
            that does the task; the clean held-out set: do not read its failures

Each entry is {"id", "set", "lang", "query", "gold": ["platform/command", ...]}.  A
hit is a paragraph; it counts as gold when its note is pages/<gold>.md or
pages.ko/<gold>.md.  The tool (this project's notes_search.py unless --tool names
another version) indexes the corpus into a temporary folder, then answers each
question with search(..., limit=10).  Printed per set and language: MRR@10 (1 / rank
of the first gold hit) and hit@1, hit@3, hit@10 (share of questions with a gold
hit that high).  ``--save FILE`` keeps each question's rank in evaluate.py's format
(per set and over all; category: the question's language), and ``--compare OLD`` runs
evaluate.py's paired sign-flip test (with a bootstrap interval) of this run against a
saved one, so that a change is kept only when it is more than noise.  Not a unit test:
the name does not start with test_.
"""
import argparse
import hashlib
import importlib.util
import json
import math
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import evaluate as shared   # noqa: E402  evaluate.py next to this file: the paired test
PROJECT = HERE.parent.parent
DEFAULT_CORPUS = PROJECT.parent / 'shared' / 'data' / 'tldr'
CUTOFFS = (1, 3, 10)


def load_tool(path):
    """Import a notes_search.py from path under its own module name."""
    spec = importlib.util.spec_from_file_location('notes_search_under_test', path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # so that worker processes can import it
    spec.loader.exec_module(module)
    return module


def gold_rank(hits, gold):
    """1-based rank of the first hit whose note is a gold page, or None."""
    pages = {f'{folder}/{page}.md' for page in gold for folder in ('pages', 'pages.ko')}
    for rank, hit in enumerate(hits, 1):
        if hit['path'] in pages:
            return rank
    return None


def summarize(ranks):
    """MRR@10 and hit@k of a list of ranks (None: no gold hit in the top 10)."""
    found = [rank for rank in ranks if rank]
    row = {'n': len(ranks), 'mrr': sum(1 / rank for rank in found) / max(len(ranks), 1)}
    for cutoff in CUTOFFS:
        row[f'hit@{cutoff}'] = sum(rank <= cutoff for rank in found) / max(len(ranks), 1)
    return row


def per_query_row(question, rank):
    """A question's result in the shape evaluate.py saves and pairs (one relevant page)."""
    text = json.dumps([question['query'], sorted(question['gold'])], ensure_ascii=False)
    found = rank is not None
    return {'id': question['id'], 'category': question['lang'], 'lang': question['lang'],
            'query_sha': hashlib.sha256(text.encode('utf-8')).hexdigest()[:16],
            'ours_top': [], 'ours': {'rank': rank, 'mrr': 1 / rank if found else 0.0,
                                     'r1': float(rank == 1), 'r10': float(found),
                                     'ndcg': 1 / math.log2(rank + 1) if found else 0.0}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--tool', type=Path, default=PROJECT / 'notes_search.py')
    parser.add_argument('--set', choices=('tuning', 'holdout', 'holdout2', 'all'), default='all')
    parser.add_argument('--corpus', type=Path, default=DEFAULT_CORPUS)
    parser.add_argument('--per', action='store_true', help='print each question and its rank')
    parser.add_argument('--save', metavar='FILE', help="save each question's rank "
                                                       "(evaluate.py's format)")
    parser.add_argument('--compare', metavar='OLD', help='paired sign-flip test of this run '
                                                        'against a saved one')
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f'evaluate_notes: no corpus at {args.corpus}', file=sys.stderr)
        return 2
    try:
        old = shared.read_saved(args.compare) if args.compare else None
    except shared.EvalError as exc:
        print(f'evaluate_notes: {exc}', file=sys.stderr)
        return 2
    questions = json.loads((HERE / 'notes_tldr.json').read_text(encoding='utf-8'))
    questions = [q for q in questions if args.set in ('all', q['set'])]
    tool = load_tool(args.tool)
    with tempfile.TemporaryDirectory(prefix='evaluate_notes_') as temp:
        index = Path(temp) / 'index.json'
        if hasattr(tool, 'index_folder'):
            tool.index_folder(args.corpus, str(index), tool.IndexOptions())
        else:   # notes_search.py before format 5
            tool.update_index(args.corpus, index, strict=False)
        ranks = {}
        for question in questions:
            hits = tool.search(index, question['query'], limit=10)
            ranks[question['id']] = gold_rank(hits, question['gold'])
            if args.per:
                print(f"{question['id']:<10} {ranks[question['id']] or '-':>3}  {question['query']}")
    print(f'{args.tool} on {args.corpus}')
    print(f'{"set":<9}{"lang":<6}{"n":>4}{"MRR@10":>8}' + ''.join(f'{"hit@%d" % k:>8}' for k in CUTOFFS))
    groups = sorted({(q['set'], q['lang']) for q in questions}) + [('all', 'all')]
    for set_name, lang in groups:
        row = summarize([ranks[q['id']] for q in questions
                         if set_name in ('all', q['set']) and lang in ('all', q['lang'])])
        print(f'{set_name:<9}{lang:<6}{row["n"]:>4}{row["mrr"]:8.3f}'
              + ''.join(f'{row["hit@%d" % k]:8.3f}' for k in CUTOFFS))
    rows = [per_query_row(q, ranks[q['id']]) for q in questions]
    sets = {name: [row for row, q in zip(rows, questions) if name in ('all', q['set'])]
            for name in sorted({q['set'] for q in questions}) + ['all']}
    try:
        shared.save_and_compare({name: {'root': str(args.corpus), 'n_queries': len(chosen),
                                        'n_evaluated': len(chosen), 'per_query': chosen}
                                 for name, chosen in sets.items()}, tool, args.save, old)
    except shared.EvalError as exc:
        print(f'evaluate_notes: {exc}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())

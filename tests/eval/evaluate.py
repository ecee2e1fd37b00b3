#!/usr/bin/env python3
"""Retrieval evaluation harness for code_search.py (standard library only).

Golden sets live next to this file:

  demo.json    questions over <project>/demo/
  stdlib.json  questions over the running interpreter's standard library
               (the tuning set: ranking changes were kept when it improved)
  holdout.json 90 more stdlib questions written without seeing stdlib.json and
               not used for tuning, to show how far the tuning carries over

Each entry is {"id", "lang", "category", "query", "gold": [{"path", "symbol"}]}.
Gold paths are POSIX paths relative to the indexed root; a symbol is a
function/method qualified name (``TarFile.extractall``, ``outer.inner``), the
name of a class without methods, or a module-level UPPER_CASE constant.

Two rankers are compared on the same chunks:

  ours      code_search.search_index(code_search.make_search_index(chunks), q, top_k=10)
  tutorial  score = 3*|q & tokens(symbol)| + 2*|q & tokens(doc)| + |q & tokens(text)|
            with q = code_search.tokens(question); score 0 dropped; ties keep
            chunk order; top 10.

Metrics (binary relevance, cut-off 10):

  MRR@10     1 / rank of the first gold chunk (0 if none in the top 10)
  Recall@k   |gold found in top k| / min(|gold|, k)   (so Recall@1 is 1 when
             the first hit is any gold item)
  nDCG@10    DCG over the top 10 / ideal DCG over min(|gold|, 10) items

Usage:
  python tests/eval/evaluate.py [--set demo|stdlib|holdout|all] [--per-query]
                                [--root PATH] [--json] [--check-gold]

For the stdlib set the standard library is copied to a temporary directory
without ``site-packages`` and ``__pycache__`` and that copy is indexed.  With
``--root PATH`` the given directory is indexed in place instead.

``--check-gold`` does not need code_search: it parses every gold file with
``ast`` and checks that each gold symbol is really defined there.

From a unit test: ``evaluate("demo")`` returns a dict with the metrics.
"""

import argparse
import ast
import json
import math
import os
import re
import shutil
import sys
import sysconfig
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT_ROOT = os.path.dirname(os.path.dirname(HERE))
SETS = ("demo", "stdlib", "holdout")
TOP_K = 10
RANKERS = ("ours", "tutorial")
METRICS = ("mrr", "r1", "r10", "ndcg")
REQUIRED_API = ("scan_tree", "make_search_index", "search_index", "tokens")


class EvalError(Exception):
    """A problem that makes the evaluation impossible (clear message)."""


# --------------------------------------------------------------------------
# tool loading

def load_tool():
    """Import code_search from the project root and check the API."""
    if PROJECT_ROOT not in sys.path:
        sys.path.insert(0, PROJECT_ROOT)
    try:
        import code_search
    except ImportError as exc:
        raise EvalError(
            f"cannot import code_search from {PROJECT_ROOT}: {exc}") from exc
    missing = [name for name in REQUIRED_API
               if not callable(getattr(code_search, name, None))]
    if missing:
        raise EvalError(
            "code_search.py (%s) lacks the API this harness needs: %s\n"
            "expected: chunks, skipped = scan_tree(root); "
            "index = make_search_index(chunks); "
            "hits = search_index(index, question, top_k=10); "
            "tokens(text) -> set of words"
            % (getattr(code_search, "__file__", "?"), ", ".join(missing)))
    return code_search


# --------------------------------------------------------------------------
# golden sets and corpora

def set_file(set_name):
    return os.path.join(HERE, set_name + ".json")


def load_set(set_name):
    if set_name not in SETS:
        raise EvalError(f"unknown set {set_name!r}; choose from {SETS}")
    with open(set_file(set_name), encoding="utf-8") as f:
        queries = json.load(f)
    seen = set()
    for q in queries:
        for key in ("id", "lang", "category", "query", "gold"):
            if key not in q:
                raise EvalError(f"{set_name}.json: entry {q!r} lacks {key!r}")
        if q["id"] in seen:
            raise EvalError(f"{set_name}.json: duplicate id {q['id']}")
        seen.add(q["id"])
    return queries


def stdlib_root():
    return sysconfig.get_paths()["stdlib"]


def default_root(set_name):
    if set_name == "demo":
        return os.path.join(PROJECT_ROOT, "demo")
    return stdlib_root()


def copy_stdlib(src, parent):
    """Copy the stdlib without site-packages / __pycache__ into parent."""
    dst = os.path.join(parent, "stdlib")
    shutil.copytree(src, dst, symlinks=True,
                    ignore=shutil.ignore_patterns("site-packages",
                                                  "__pycache__"))
    return dst


def norm_path(path):
    path = str(path).replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


# --------------------------------------------------------------------------
# gold verification with ast

UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")


def defined_symbols(source, filename="<gold>"):
    """Map symbol -> (kind, conditional) for one Python source.

    Functions and methods get their qualified name (enclosing classes and
    functions joined with '.').  Classes are listed under kind "class" with a
    flag telling whether they define methods.  Module-level UPPER_CASE
    assignments are "constant".  ``conditional`` is True when the definition
    sits under if/try/with/for rather than directly in a module/class/def body.
    """
    tree = ast.parse(source, filename)
    found = {}

    def visit(body, prefix, conditional, module_level):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + node.name
                found.setdefault(name, ("function", conditional))
                visit(node.body, name + ".", conditional, False)
            elif isinstance(node, ast.ClassDef):
                name = prefix + node.name
                has_methods = any(
                    isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for n in node.body)
                found.setdefault(
                    name, ("class-with-methods" if has_methods else "class",
                           conditional))
                visit(node.body, name + ".", conditional, False)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                if module_level:
                    targets = (node.targets if isinstance(node, ast.Assign)
                               else [node.target])
                    for t in targets:
                        if isinstance(t, ast.Name) and UPPER.match(t.id):
                            found.setdefault(t.id, ("constant", conditional))
            else:
                for field in ("body", "orelse", "finalbody"):
                    sub = getattr(node, field, None)
                    if isinstance(sub, list):
                        visit(sub, prefix, True, module_level)
                for handler in getattr(node, "handlers", []) or []:
                    visit(handler.body, prefix, True, module_level)
                for case in getattr(node, "cases", []) or []:
                    visit(case.body, prefix, True, module_level)

    visit(tree.body, "", False, True)
    return found


def check_gold(set_name, root=None):
    """Verify every gold item; return (errors, warnings, missing_files)."""
    root = root or default_root(set_name)
    errors, warnings, missing = [], [], []
    cache = {}
    for q in load_set(set_name):
        if not q["gold"]:
            errors.append(f"{q['id']}: empty gold list")
        for g in q["gold"]:
            path = norm_path(g["path"])
            full = os.path.join(root, *path.split("/"))
            if path not in cache:
                if not os.path.isfile(full):
                    cache[path] = None
                else:
                    with open(full, "rb") as f:
                        cache[path] = defined_symbols(f.read(), full)
            syms = cache[path]
            label = f"{q['id']}: {path} {g['symbol']}"
            if syms is None:
                missing.append(label)
                continue
            info = syms.get(g["symbol"])
            if info is None:
                errors.append(label + ": not defined in file")
            elif info[0] == "class-with-methods":
                errors.append(label + ": class has methods (no class chunk); "
                              "use a method as gold")
            elif info[1]:
                warnings.append(label + ": defined under if/try/with")
    return errors, warnings, missing


# --------------------------------------------------------------------------
# rankers

class TutorialRanker:
    """The tutorial scorer, with per-chunk token sets computed once.

    Scores are accumulated through inverted lists, which gives exactly
    3*|q & sym| + 2*|q & doc| + |q & text| for every chunk.
    """

    def __init__(self, chunks, tokens):
        self.tokens = tokens
        self.postings = {}
        for i, chunk in enumerate(chunks):
            for weight, field in ((3, "symbol"), (2, "doc"), (1, "text")):
                for tok in tokens(chunk.get(field) or ""):
                    self.postings.setdefault(tok, []).append((i, weight))

    def rank(self, question, top_k=TOP_K):
        scores = {}
        for tok in self.tokens(question):
            for i, weight in self.postings.get(tok, ()):
                scores[i] = scores.get(i, 0) + weight
        ranked = sorted((i for i, s in scores.items() if s > 0),
                        key=lambda i: (-scores[i], i))
        return ranked[:top_k]


def chunk_key(chunk):
    return (norm_path(chunk.get("path", "")), chunk.get("symbol"))


# --------------------------------------------------------------------------
# metrics

def score_ranking(keys, gold):
    """keys: ranked (path, symbol) list; gold: set of (path, symbol)."""
    rels, seen = [], set()
    for key in keys[:TOP_K]:
        rel = key in gold and key not in seen
        if rel:
            seen.add(key)
        rels.append(1 if rel else 0)
    first = next((i + 1 for i, r in enumerate(rels) if r), None)
    dcg = sum(r / math.log2(i + 2) for i, r in enumerate(rels))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold), TOP_K)))
    return {
        "rank": first,
        "mrr": 1.0 / first if first else 0.0,
        "r1": sum(rels[:1]) / min(len(gold), 1),
        "r10": sum(rels[:TOP_K]) / min(len(gold), TOP_K),
        "ndcg": dcg / ideal if ideal else 0.0,
    }


def mean(values):
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def aggregate(rows):
    out = {"n": len(rows)}
    for ranker in RANKERS:
        out[ranker] = {m: mean(r[ranker][m] for r in rows) for m in METRICS}
    return out


# --------------------------------------------------------------------------
# evaluation

def evaluate(set_name, root=None, tool=None):
    """Evaluate one golden set; returns a dict (see keys below).

    root: directory to index in place; default is demo/ or a temporary copy
    of the stdlib without site-packages.
    """
    tool = tool or load_tool()
    queries = load_set(set_name)
    tmp = None
    started = time.perf_counter()
    try:
        if root is None and set_name != "demo":
            tmp = tempfile.mkdtemp(prefix="eval-stdlib-")
            root = copy_stdlib(stdlib_root(), tmp)
        elif root is None:
            root = default_root(set_name)
        root = os.path.abspath(root)
        if not os.path.isdir(root):
            raise EvalError(f"corpus root {root} is not a directory")
        t0 = time.perf_counter()
        chunks, skipped_files = tool.scan_tree(root)
        t_scan = time.perf_counter() - t0
        chunks = list(chunks)
        t0 = time.perf_counter()
        index = tool.make_search_index(chunks)
        t_index = time.perf_counter() - t0
        t0 = time.perf_counter()
        tutorial = TutorialRanker(chunks, tool.tokens)
        t_tutorial_index = time.perf_counter() - t0
        indexed = {chunk_key(c) for c in chunks}

        skipped_gold, skipped_queries, not_indexed, rows = [], [], [], []
        t_ours = t_tut = 0.0
        for q in queries:
            gold = set()
            for g in q["gold"]:
                path = norm_path(g["path"])
                if not os.path.isfile(os.path.join(root, *path.split("/"))):
                    skipped_gold.append(f"{q['id']}: {path} {g['symbol']}")
                    continue
                gold.add((path, g["symbol"]))
                if (path, g["symbol"]) not in indexed:
                    not_indexed.append(f"{q['id']}: {path} {g['symbol']}")
            if not gold:
                skipped_queries.append(q["id"])
                continue
            t0 = time.perf_counter()
            hits = tool.search_index(index, q["query"], top_k=TOP_K)
            t_ours += time.perf_counter() - t0
            ours_keys = [chunk_key(h) for h in list(hits)[:TOP_K]]
            t0 = time.perf_counter()
            tut_keys = [chunk_key(chunks[i]) for i in tutorial.rank(q["query"])]
            t_tut += time.perf_counter() - t0
            rows.append({
                "id": q["id"], "category": q["category"], "lang": q["lang"],
                "query": q["query"],
                "ours": score_ranking(ours_keys, gold),
                "tutorial": score_ranking(tut_keys, gold),
                "ours_top": ["%s:%s" % k for k in ours_keys[:3]],
                "tutorial_top": ["%s:%s" % k for k in tut_keys[:3]],
            })

        categories = sorted({r["category"] for r in rows})
        return {
            "set": set_name,
            "root": root if tmp is None else f"{stdlib_root()} (temp copy)",
            "n_queries": len(queries),
            "n_evaluated": len(rows),
            "n_chunks": len(chunks),
            "n_skipped_files": len(skipped_files),
            "skipped_gold": skipped_gold,
            "skipped_queries": skipped_queries,
            "gold_not_indexed": not_indexed,
            "overall": aggregate(rows),
            "by_category": {c: aggregate([r for r in rows
                                          if r["category"] == c])
                            for c in categories},
            "per_query": rows,
            "seconds": {
                "scan": round(t_scan, 2), "index": round(t_index, 2),
                "tutorial_index": round(t_tutorial_index, 2),
                "ours_queries": round(t_ours, 2),
                "tutorial_queries": round(t_tut, 2),
                "total": round(time.perf_counter() - started, 2),
            },
        }
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------
# reporting

def fmt_ratio(a, b):
    if b == 0:
        return "  inf" if a > 0 else "    -"
    return f"{a / b:5.2f}"


def print_report(res, per_query=False, out=sys.stdout):
    w = out.write
    w(f"\n== set {res['set']}: {res['root']}\n")
    w(f"   {res['n_chunks']} chunks, {res['n_skipped_files']} files skipped "
      f"by scan_tree, {res['n_evaluated']}/{res['n_queries']} queries "
      f"evaluated, {res['seconds']['total']} s "
      f"(scan {res['seconds']['scan']}, index {res['seconds']['index']}, "
      f"queries {res['seconds']['ours_queries']})\n")
    if res["skipped_gold"]:
        w(f"   gold items skipped (file missing in this Python): "
          f"{'; '.join(res['skipped_gold'])}\n")
    if res["skipped_queries"]:
        w(f"   queries skipped (no gold left): "
          f"{', '.join(res['skipped_queries'])}\n")
    if res["gold_not_indexed"]:
        w(f"   note: {len(res['gold_not_indexed'])} gold items are not among "
          f"the indexed chunks: {'; '.join(res['gold_not_indexed'][:8])}"
          f"{' ...' if len(res['gold_not_indexed']) > 8 else ''}\n")
    head = (f"   {'category':<11}{'n':>4} | {'MRR ours':>8} {'tut':>6} "
            f"{'ratio':>5} | {'R@1 ours':>8} {'tut':>6} | {'R@10 ours':>9} "
            f"{'tut':>6} | {'nDCG ours':>9} {'tut':>6}\n")
    w(head)
    w("   " + "-" * (len(head) - 4) + "\n")
    groups = list(res["by_category"].items()) + [("overall", res["overall"])]
    for name, g in groups:
        o, t = g["ours"], g["tutorial"]
        w(f"   {name:<11}{g['n']:>4} | {o['mrr']:8.3f} {t['mrr']:6.3f} "
          f"{fmt_ratio(o['mrr'], t['mrr'])} | {o['r1']:8.3f} {t['r1']:6.3f} "
          f"| {o['r10']:9.3f} {t['r10']:6.3f} | {o['ndcg']:9.3f} "
          f"{t['ndcg']:6.3f}\n")
    if per_query:
        w(f"\n   {'id':<12}{'ours':>5}{'tut':>5}  query\n")
        for r in res["per_query"]:
            a = r["ours"]["rank"] or "-"
            b = r["tutorial"]["rank"] or "-"
            w(f"   {r['id']:<12}{a!s:>5}{b!s:>5}  {r['query']}\n")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Evaluate code_search.py against golden query sets.")
    parser.add_argument("--set", default="all", choices=SETS + ("all",))
    parser.add_argument("--per-query", action="store_true",
                        help="print each query's first-hit rank")
    parser.add_argument("--root", help="index this directory in place "
                        "(only with a single --set)")
    parser.add_argument("--json", action="store_true",
                        help="print the metrics as JSON")
    parser.add_argument("--check-gold", action="store_true",
                        help="only verify the gold items with ast")
    args = parser.parse_args(argv)
    names = SETS if args.set == "all" else (args.set,)
    if args.root and len(names) > 1:
        parser.error("--root needs a single --set")

    try:
        if args.check_gold:
            bad = 0
            for name in names:
                errors, warnings, missing = check_gold(name, args.root)
                n = len(load_set(name))
                print(f"{name}: {n} queries, {len(errors)} errors, "
                      f"{len(warnings)} warnings, {len(missing)} gold files "
                      f"missing")
                for line in errors:
                    print("  ERROR", line)
                for line in warnings:
                    print("  warning", line)
                for line in missing:
                    print("  missing", line)
                bad += len(errors)
            return 1 if bad else 0

        tool = load_tool()
        results = {}
        for name in names:
            results[name] = evaluate(name, args.root, tool=tool)
    except EvalError as exc:
        print(f"evaluate.py: {exc}", file=sys.stderr)
        return 2

    if args.json:
        slim = {}
        for name, res in results.items():
            res = dict(res)
            if not args.per_query:
                res.pop("per_query")
            slim[name] = res
        json.dump(slim, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        for res in results.values():
            print_report(res, per_query=args.per_query)
    return 0


if __name__ == "__main__":
    sys.exit(main())

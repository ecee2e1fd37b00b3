#!/usr/bin/env python3
"""Retrieval evaluation harness for code_search.py (standard library only).

Golden sets live next to this file:

  demo.json    questions over <project>/demo/
  stdlib.json  277 questions over the running interpreter's standard library
               (the tuning set: ranking changes were kept when it improved); the
               last 80 (f6-*: 50 Korean, 30 English in plain words) were written
               from the sources by a helper who never ran the ranker
  holdout.json 465 more stdlib questions, never used for tuning: 150 English
               in plain words, 150 Korean, 165 identifier (80 exact or dotted
               names and name fragments, 85 pasted error and log lines such as
               "ValueError: unconverted data remains: 12").  The first 90
               (holdout-en-01..45, holdout-ko-01..45) were written without
               seeing stdlib.json; the rest were written and frozen before the
               ranker ever ran on them, then only their gold was checked.
               Keep it that way: do not reword a held-out question after
               seeing its rank, and do not tune on it; add new questions
               instead (new ids; old ids stay stable).  Some of its
               failures have since been read while diagnosing changes.
  holdout2.json 120 more (60 English, 60 Korean in plain words), written from
               the library's source alone by a helper who never ran the
               ranker, each gold read to do the task: the clean held-out set.
               Do not read its failures; report its numbers.

Each entry is {"id", "lang", "category", "query", "gold": [{"path", "symbol"}]}.
Gold paths are POSIX paths relative to the indexed root; a symbol is a
function/method qualified name (``TarFile.extractall``, ``outer.inner``), the
name of a class without methods, or a module-level UPPER_CASE constant.
Several gold items mean several definitions answer equally well (posixpath and
ntpath versions).  A module that moved between Python versions is given once
per place (``pathlib.py`` and ``pathlib/_local.py``, ``datetime.py`` and
``_pydatetime.py``, ``zipfile.py`` and ``zipfile/__init__.py``): an item whose
file is missing is skipped, and so is an item whose file exists without the
symbol when another item names the same symbol in a file that has it (the
module moved); both are reported, neither counts.

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
  python tests/eval/evaluate.py [--set demo|stdlib|holdout|holdout2|all] [--per-query]
                                [--root PATH] [--json] [--check-gold]
                                [--worst N] [--tool FILE]
                                [--save FILE] [--compare OLD [NEW]]
                                [--metric mrr|r1|r10|ndcg]
                                [--permutations N] [--seed N]

For the stdlib sets the standard library is copied once to a temporary
directory without ``site-packages`` and ``__pycache__``, indexed once, and the
stdlib and holdout sets are scored on that index.  With ``--root PATH`` the
given directory is indexed in place instead.  ``--tool FILE`` evaluates that
copy of code_search.py instead of the project's (e.g. ``git show
HEAD:code_search.py > /tmp/old.py``).  ``--worst N`` lists the N worst queries
of each category (first gold rank and our top 3; for a query whose gold is not
in the top 10 it searches again for the top 1,000 to say how far down the
gold is, and sorts the worst first: not found at all, then deepest).

``--check-gold`` does not need code_search: it parses every gold file with
``ast`` and checks that each gold symbol is really defined there.

Paired significance test (is a ranking change a real gain or noise?):

  python tests/eval/evaluate.py --save /tmp/before.json      # old ranker
  ... change code_search.py ...
  python tests/eval/evaluate.py --compare /tmp/before.json   # new ranker
  python tests/eval/evaluate.py --compare before.json after.json  # two saved

``--save FILE`` writes each query's metrics (reciprocal rank and the rest,
first gold rank, with --worst also the deeper rank, our top 3) as JSON, with
the tool's identity: ``git describe --always --dirty``, SHA-256 of
code_search.py, Python version.  ``--compare OLD`` runs the current tool and
pairs its queries with OLD's by id (a query whose text or gold changed since
is left out and counted); ``--compare OLD NEW`` compares two saved runs
without running anything.  ``--compare OLD`` may be combined with ``--save``.
For each set, each category and all of the set's queries it prints, on
``--metric`` (default mrr, i.e. RR@10 per query): n, the old and new means,
the mean difference new - old, a bootstrap 95% confidence interval of that
mean difference (percentile method, ``--permutations`` resamples), how many
queries got better and worse, and the p-value of a two-sided paired
randomization test.  The test flips the signs of the per-query differences
at random, ``--permutations`` times (default 10,000), and gives
p = (1 + #{|mean*| >= |mean|}) / (1 + permutations).  When the k non-zero
differences have at most that many sign patterns (2^k), all of them are
counted instead and p is exact (marked *).  The random generator is seeded
with ``--seed`` (default 20240611) and the group's name, so a comparison
always prints the same numbers.  A line says "significant at 0.05" when
p < 0.05.  Per-category p-values are not corrected for testing several
categories: decide on the set the change was meant for, named in advance
(usually the held-out category it targets, or the whole held-out set), and
treat a lone significant category among many as a hint, not proof.

From a unit test: ``evaluate("demo")`` returns a dict with the metrics;
``paired_test(old_values, new_values)`` returns the test's numbers.
"""

import argparse
import ast
import hashlib
import importlib.util
import json
import math
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT_ROOT = os.path.dirname(os.path.dirname(HERE))
SETS = ("demo", "stdlib", "holdout", "holdout2")
TOP_K = 10
RANKERS = ("ours", "tutorial")
METRICS = ("mrr", "r1", "r10", "ndcg")
REQUIRED_API = ("scan_tree", "make_search_index", "search_index", "tokens")
PERMUTATIONS = 10000
SEED = 20240611
ALPHA = 0.05
SAVE_FORMAT = "code_search-eval-per-query/1"
DEEP = 1000             # --worst: how deep to look for a missed query's gold


class EvalError(Exception):
    """A problem that makes the evaluation impossible (clear message)."""


# --------------------------------------------------------------------------
# tool loading

def load_tool(path=None):
    """Import code_search (the project's, or the file at path); check its API."""
    if path is not None:
        path = os.path.abspath(path)
        spec = importlib.util.spec_from_file_location("code_search", path)
        if spec is None or not os.path.isfile(path):
            raise EvalError(f"--tool {path}: no such Python file")
        code_search = importlib.util.module_from_spec(spec)
        sys.modules["code_search"] = code_search
        try:
            spec.loader.exec_module(code_search)
        except Exception as exc:
            del sys.modules["code_search"]
            raise EvalError(f"cannot import {path}: {exc!r}") from exc
    else:
        if PROJECT_ROOT not in sys.path:
            sys.path.insert(0, PROJECT_ROOT)
        try:
            import code_search
        except ImportError as exc:
            raise EvalError(f"cannot import code_search from "
                            f"{PROJECT_ROOT}: {exc}") from exc
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


def tool_identity(tool):
    """Who ranked: code_search.py's path and SHA-256, git describe of its
    repository (None outside git), the Python version."""
    path = os.path.abspath(getattr(tool, "__file__", "") or "")
    digest = None
    if os.path.isfile(path):
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    described = None
    if os.path.isfile(path):
        try:
            done = subprocess.run(
                ["git", "describe", "--always", "--dirty", "--tags"],
                cwd=os.path.dirname(path), capture_output=True, text=True,
                timeout=20)
            if done.returncode == 0:
                described = done.stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            pass
    return {"path": path, "sha256": digest, "git": described,
            "python": platform.python_version()}


def identity_label(identity):
    parts = []
    if identity.get("git"):
        parts.append(identity["git"])
    if identity.get("sha256"):
        parts.append("code_search.py sha256:" + identity["sha256"][:12])
    if identity.get("python"):
        parts.append("Python " + identity["python"])
    return ", ".join(parts) or "?"


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
    """Verify every gold item; return (errors, warnings, missing_files).

    A file that is missing counts as missing (a module of another Python
    version).  A file that exists but lacks the symbol is an error, unless
    another gold item of the same query names that symbol in a file that
    defines it: then the module moved, and it is a warning.
    """
    root = root or default_root(set_name)
    errors, warnings, missing = [], [], []
    cache, unparsable = {}, {}

    def symbols_of(path):
        if path not in cache:
            full = os.path.join(root, *path.split("/"))
            if not os.path.isfile(full):
                cache[path] = None
            else:
                with open(full, "rb") as f:
                    data = f.read()
                try:
                    cache[path] = defined_symbols(data, full)
                except SyntaxError as exc:
                    unparsable[path] = (f"cannot parse with Python "
                                        f"{platform.python_version()}: {exc}")
                    cache[path] = {}
        return cache[path]

    for q in load_set(set_name):
        if not q["gold"]:
            errors.append(f"{q['id']}: empty gold list")
        for g in q["gold"]:
            path = norm_path(g["path"])
            syms = symbols_of(path)
            label = f"{q['id']}: {path} {g['symbol']}"
            if syms is None:
                missing.append(label)
                continue
            info = syms.get(g["symbol"])
            if info is None:
                moved = any(
                    o["symbol"] == g["symbol"] and norm_path(o["path"]) != path
                    and g["symbol"] in (symbols_of(norm_path(o["path"])) or {})
                    for o in q["gold"])
                if moved:
                    warnings.append(label + ": not defined in file, but in "
                                    "another gold file (moved)")
                else:
                    errors.append(label + ": not defined in file")
            elif info[0] == "class-with-methods":
                errors.append(label + ": class has methods (no class chunk); "
                              "use a method as gold")
            elif info[1]:
                warnings.append(label + ": defined under if/try/with")
    errors.extend(f"{path}: {why}" for path, why in unparsable.items())
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

class Corpus:
    """One indexed tree: chunks, our index and the tutorial ranker over them.

    root None means the standard library, copied to a temporary directory
    (removed by close()).  Sets over the same tree share one Corpus.
    """

    def __init__(self, tool, root=None):
        self.tool = tool
        self.tmp = None
        if root is None:
            self.tmp = tempfile.mkdtemp(prefix="eval-stdlib-")
            root = copy_stdlib(stdlib_root(), self.tmp)
            self.label = f"{stdlib_root()} (temp copy)"
        else:
            self.label = None
        self.root = os.path.abspath(root)
        if self.label is None:
            self.label = self.root
        self.used = 0
        try:
            if not os.path.isdir(self.root):
                raise EvalError(f"corpus root {self.root} is not a directory")
            t0 = time.perf_counter()
            chunks, skipped_files = tool.scan_tree(self.root)
            self.t_scan = time.perf_counter() - t0
            self.chunks = list(chunks)
            self.n_skipped_files = len(skipped_files)
            t0 = time.perf_counter()
            self.index = tool.make_search_index(self.chunks)
            self.t_index = time.perf_counter() - t0
            t0 = time.perf_counter()
            self.tutorial = TutorialRanker(self.chunks, tool.tokens)
            self.t_tutorial_index = time.perf_counter() - t0
            self.indexed = {chunk_key(c) for c in self.chunks}
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


def gold_keys(q, corpus, skipped_gold, not_indexed):
    """The gold (path, symbol) set of one query on this corpus.

    Items whose file is missing are skipped; so are items whose file exists
    without the symbol when another item's file has that symbol indexed (a
    module that moved between Python versions).  Other items that are not
    indexed stay gold (they cannot be found) and are noted.
    """
    present = []
    for g in q["gold"]:
        path = norm_path(g["path"])
        if not os.path.isfile(os.path.join(corpus.root, *path.split("/"))):
            skipped_gold.append(f"{q['id']}: {path} {g['symbol']}")
        else:
            present.append((path, g["symbol"]))
    found = {key for key in present if key in corpus.indexed}
    gold = set(found)
    for key in present:
        if key in found:
            continue
        if any(other[1] == key[1] for other in found):
            skipped_gold.append(f"{q['id']}: {key[0]} {key[1]} (moved)")
        else:
            gold.add(key)
            not_indexed.append(f"{q['id']}: {key[0]} {key[1]}")
    return gold


def evaluate(set_name, root=None, tool=None, corpus=None, deep=0):
    """Evaluate one golden set; returns a dict (see keys below).

    root: directory to index in place; default is demo/ or a temporary copy
    of the stdlib without site-packages.  corpus: an already indexed Corpus
    to score on (then root is ignored and the corpus is left open).  deep: for
    a query whose gold is not in our top 10, search again for the top deep and
    note the first gold item's rank there as "deep_rank" (None: not there).
    """
    tool = tool or (corpus.tool if corpus else load_tool())
    queries = load_set(set_name)
    started = time.perf_counter()
    own = corpus is None
    if own:
        if root is None and set_name == "demo":
            root = default_root(set_name)
        corpus = Corpus(tool, root)
    try:
        corpus.used += 1
        chunks, tutorial = corpus.chunks, corpus.tutorial
        skipped_gold, skipped_queries, not_indexed, rows = [], [], [], []
        t_ours = t_tut = 0.0
        for q in queries:
            gold = gold_keys(q, corpus, skipped_gold, not_indexed)
            if not gold:
                skipped_queries.append(q["id"])
                continue
            t0 = time.perf_counter()
            hits = tool.search_index(corpus.index, q["query"], top_k=TOP_K)
            t_ours += time.perf_counter() - t0
            ours_keys = [chunk_key(h) for h in list(hits)[:TOP_K]]
            t0 = time.perf_counter()
            tut_keys = [chunk_key(chunks[i]) for i in tutorial.rank(q["query"])]
            t_tut += time.perf_counter() - t0
            ours = score_ranking(ours_keys, gold)
            deep_rank = ours["rank"]
            if deep > TOP_K and deep_rank is None:
                deep_keys = [chunk_key(h) for h in
                             tool.search_index(corpus.index, q["query"],
                                               top_k=deep)]
                deep_rank = next((i + 1 for i, key in enumerate(deep_keys)
                                  if key in gold), None)
            rows.append({
                "id": q["id"], "category": q["category"], "lang": q["lang"],
                "query": q["query"], "query_sha": query_digest(q),
                "ours": ours, "deep_rank": deep_rank,
                "tutorial": score_ranking(tut_keys, gold),
                "ours_top": ["%s:%s" % k for k in ours_keys[:3]],
                "tutorial_top": ["%s:%s" % k for k in tut_keys[:3]],
            })

        categories = sorted({r["category"] for r in rows})
        shared = not own and corpus.used > 1
        return {
            "set": set_name,
            "root": corpus.label,
            "n_queries": len(queries),
            "n_evaluated": len(rows),
            "n_chunks": len(chunks),
            "n_skipped_files": corpus.n_skipped_files,
            "shared_index": shared,
            "skipped_gold": skipped_gold,
            "skipped_queries": skipped_queries,
            "gold_not_indexed": not_indexed,
            "overall": aggregate(rows),
            "by_category": {c: aggregate([r for r in rows
                                          if r["category"] == c])
                            for c in categories},
            "per_query": rows,
            "seconds": {
                "scan": round(corpus.t_scan, 2),
                "index": round(corpus.t_index, 2),
                "tutorial_index": round(corpus.t_tutorial_index, 2),
                "ours_queries": round(t_ours, 2),
                "tutorial_queries": round(t_tut, 2),
                "total": round(time.perf_counter() - started, 2),
            },
        }
    finally:
        if own:
            corpus.close()


def query_digest(q):
    """A short hash of a query's text and gold: a saved run is paired with a
    new one only on queries that did not change."""
    gold = sorted((norm_path(g["path"]), g["symbol"]) for g in q["gold"])
    text = json.dumps([q["query"], gold], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# --------------------------------------------------------------------------
# saved runs and the paired significance test

def saved_run(results, identity):
    """The --save document of some evaluate() results."""
    sets = {}
    for name, res in results.items():
        sets[name] = {
            "root": res["root"], "n_queries": res["n_queries"],
            "n_evaluated": res["n_evaluated"],
            "per_query": {
                r["id"]: dict({m: r["ours"][m] for m in METRICS},
                              rank=r["ours"]["rank"],
                              deep_rank=r.get("deep_rank"),
                              category=r["category"], lang=r["lang"],
                              query_sha=r["query_sha"], top=r["ours_top"])
                for r in res["per_query"]},
        }
    return {"format": SAVE_FORMAT,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "tool": identity, "top_k": TOP_K, "sets": sets}


def write_saved(path, document):
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f, ensure_ascii=False, indent=1)
            f.write("\n")
    except OSError as exc:
        raise EvalError(f"cannot save the run to {path}: {exc.strerror}") from exc


def read_saved(path):
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError) as exc:
        raise EvalError(f"cannot read saved run {path}: {exc}") from exc
    if not isinstance(document, dict) or document.get("format") != SAVE_FORMAT:
        raise EvalError(f"{path} is not a run saved by evaluate.py --save "
                        f"(format {SAVE_FORMAT})")
    return document


def group_seed(seed, *names):
    """A seed per compared group, so numbers do not depend on group order."""
    return seed ^ zlib.crc32("/".join(names).encode("utf-8"))


def sign_flip_p(diffs, permutations=PERMUTATIONS, seed=SEED):
    """Two-sided paired randomization test of mean(diffs) = 0.

    Returns (p, exact).  Each permutation flips the sign of every non-zero
    difference with probability 1/2 (zeros never change a sum).  When 2^k,
    k the number of non-zero differences, is at most permutations every sign
    pattern is counted (exact); otherwise p = (1 + hits) / (1 + permutations).
    """
    nonzero = [d for d in diffs if d != 0]
    if not nonzero:
        return 1.0, True
    observed = abs(sum(nonzero))
    tolerance = 1e-9 * max(1.0, observed)
    # sums of blocks of 8 differences under each of their 256 sign patterns
    tables = []
    for start in range(0, len(nonzero), 8):
        block = nonzero[start:start + 8]
        tables.append([sum(-d if bits >> j & 1 else d
                           for j, d in enumerate(block))
                       for bits in range(1 << len(block))])
    k = len(nonzero)

    def extreme(bits):
        total = 0.0
        for table in tables:
            total += table[bits & 255]
            bits >>= 8
        return abs(total) >= observed - tolerance

    if (1 << k) <= permutations:
        hits = sum(1 for bits in range(1 << k) if extreme(bits))
        return hits / (1 << k), True
    rng = random.Random(seed)
    hits = sum(1 for _ in range(permutations) if extreme(rng.getrandbits(k)))
    return (hits + 1) / (permutations + 1), False


def bootstrap_ci(diffs, resamples=PERMUTATIONS, seed=SEED, level=0.95):
    """Percentile bootstrap confidence interval of mean(diffs)."""
    n = len(diffs)
    if n == 0:
        return (0.0, 0.0)
    if all(d == diffs[0] for d in diffs):
        return (diffs[0], diffs[0])
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    low = means[int(math.floor((1 - level) / 2 * resamples))]
    high = means[int(math.ceil((1 + level) / 2 * resamples)) - 1]
    return (low, high)


def paired_test(old, new, permutations=PERMUTATIONS, seed=SEED):
    """Paired comparison of two equally long lists of per-query values."""
    if len(old) != len(new):
        raise ValueError("paired_test needs two lists of the same length")
    diffs = [b - a for a, b in zip(old, new)]
    p, exact = sign_flip_p(diffs, permutations, seed)
    low, high = bootstrap_ci(diffs, permutations, seed + 1)
    return {
        "n": len(diffs), "old": mean(old), "new": mean(new),
        "diff": mean(diffs), "ci95": [low, high], "p": p, "exact": exact,
        "better": sum(1 for d in diffs if d > 0),
        "worse": sum(1 for d in diffs if d < 0),
        "significant": p < ALPHA,
    }


def compare_runs(old_doc, new_doc, metric="mrr", permutations=PERMUTATIONS,
                 seed=SEED):
    """Paired tests of every set both saved runs have: per category and all."""
    out = {"metric": metric, "permutations": permutations, "seed": seed,
           "alpha": ALPHA, "old": old_doc.get("tool", {}),
           "new": new_doc.get("tool", {}), "sets": {}}
    for name, new_set in new_doc["sets"].items():
        old_set = old_doc["sets"].get(name)
        if old_set is None:
            continue
        old_q, new_q = old_set["per_query"], new_set["per_query"]
        paired, changed = [], []
        for qid, b in new_q.items():
            a = old_q.get(qid)
            if a is None:
                continue
            if a.get("query_sha") != b.get("query_sha"):
                changed.append(qid)
            else:
                paired.append((qid, a, b))
        groups = {}
        for qid, a, b in paired:
            groups.setdefault(b["category"], []).append((qid, a, b))
        tests = {}
        for group in sorted(groups) + ["all"]:
            members = paired if group == "all" else groups[group]
            tests[group] = paired_test(
                [a[metric] for _, a, _ in members],
                [b[metric] for _, _, b in members],
                permutations, group_seed(seed, name, group))
        moved = sorted(
            ((qid, b["category"], a["rank"], b["rank"], b["top"])
             for qid, a, b in paired if a[metric] != b[metric]),
            key=lambda row: (row[1], row[0]))
        out["sets"][name] = {
            "paired": len(paired), "changed": changed,
            "only_old": sorted(set(old_q) - set(new_q)),
            "only_new": sorted(set(new_q) - set(old_q)),
            "tests": tests, "moved": moved}
    return out


def save_and_compare(results, tool, save=None, old=None, per_query=False, out=sys.stdout):
    """--save and --compare of evaluate_polyglot.py and evaluate_projects.py: their
    runs {set name: {"root", "n_queries", "n_evaluated", "per_query"}} saved in this
    script's format and tested against old, a saved run (read_saved, before the run, so
    that a bad path is said at once); the report goes to out."""
    if not (save or old):
        return
    document = saved_run(results, tool_identity(tool))
    if save:
        write_saved(save, document)
        out.write(f"\nsaved per-query metrics to {save}\n")
    if old:
        print_comparison(compare_runs(old, document), per_query, out)


# --------------------------------------------------------------------------
# reporting

def fmt_ratio(a, b):
    if b == 0:
        return "  inf" if a > 0 else "    -"
    return f"{a / b:5.2f}"


def print_report(res, per_query=False, worst=0, out=sys.stdout, deep=0):
    w = out.write
    w(f"\n== set {res['set']}: {res['root']}\n")
    if res.get("shared_index"):
        w(f"   {res['n_chunks']} chunks (index shared with the set before), "
          f"{res['n_evaluated']}/{res['n_queries']} queries evaluated, "
          f"{res['seconds']['total']} s "
          f"(queries {res['seconds']['ours_queries']})\n")
    else:
        w(f"   {res['n_chunks']} chunks, {res['n_skipped_files']} files "
          f"skipped by scan_tree, {res['n_evaluated']}/{res['n_queries']} "
          f"queries evaluated, {res['seconds']['total']} s "
          f"(scan {res['seconds']['scan']}, index {res['seconds']['index']}, "
          f"queries {res['seconds']['ours_queries']})\n")
    if res["skipped_gold"]:
        w(f"   gold items skipped (file missing in this Python, or moved): "
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
        w(f"\n   {'id':<16}{'ours':>5}{'tut':>5}  query\n")
        for r in res["per_query"]:
            a = r["ours"]["rank"] or "-"
            b = r["tutorial"]["rank"] or "-"
            w(f"   {r['id']:<16}{a!s:>5}{b!s:>5}  {r['query']}\n")
    if worst:
        print_worst(res, worst, out, deep)


def print_worst(res, n, out=sys.stdout, deep=0):
    """The n worst queries of each category: first gold rank, our top 3.

    Ranks past the top 10 are those of a deeper search (evaluate's deep),
    shown as e.g. 37; ">deep" is not found there either (the worst).
    """
    w = out.write
    far = float("inf")
    for category in sorted(res["by_category"]):
        rows = [r for r in res["per_query"] if r["category"] == category]
        rows.sort(key=lambda r: (r["ours"]["mrr"],
                                 -(r.get("deep_rank") or far), r["id"]))
        w(f"\n   worst {min(n, len(rows))} of {category} "
          f"(rank of the first gold item"
          f"{f'; past {TOP_K}: in a top {deep}' if deep else ''}):\n")
        for r in rows[:n]:
            rank = r["ours"]["rank"] or r.get("deep_rank") or (
                f">{deep}" if deep else "-")
            w(f"   {r['id']:<16}{rank!s:>5}  {r['query']}\n")
            w(f"   {'':<21}top 3: {' | '.join(r['ours_top']) or '(none)'}\n")


def print_comparison(cmp, per_query=False, out=sys.stdout):
    w = out.write
    w(f"\n== paired comparison on {cmp['metric']} "
      f"({'RR@10' if cmp['metric'] == 'mrr' else cmp['metric']} per query), "
      f"new - old\n")
    w(f"   old: {identity_label(cmp['old'])}\n")
    w(f"   new: {identity_label(cmp['new'])}\n")
    w(f"   two-sided sign-flip randomization test, {cmp['permutations']} "
      f"permutations, seed {cmp['seed']}; bootstrap 95% CI of the mean "
      f"difference\n")
    if cmp["old"].get("python") != cmp["new"].get("python"):
        w("   warning: the runs used different Pythons; their standard "
          "libraries differ\n")
    if not cmp["sets"]:
        w("   no set in common\n")
    for name, s in cmp["sets"].items():
        w(f"\n   set {name}: {s['paired']} paired queries")
        if s["changed"]:
            w(f", {len(s['changed'])} left out (text or gold changed: "
              f"{', '.join(s['changed'][:6])}"
              f"{' ...' if len(s['changed']) > 6 else ''})")
        if s["only_old"] or s["only_new"]:
            w(f", {len(s['only_old'])} only in old, "
              f"{len(s['only_new'])} only in new")
        w("\n")
        w(f"   {'category':<11}{'n':>4} {'old':>7} {'new':>7} {'diff':>7}  "
          f"{'95% CI':<17} {'better':>6} {'worse':>5} {'p':>7}\n")
        for group, t in s["tests"].items():
            verdict = ("significant at %.2f" % cmp["alpha"] if t["significant"]
                       else "not significant at %.2f" % cmp["alpha"])
            ci = f"[{t['ci95'][0]:+.3f}, {t['ci95'][1]:+.3f}]"
            p = f"{t['p']:.4f}" + ("*" if t["exact"] else " ")
            w(f"   {group:<11}{t['n']:>4} {t['old']:7.3f} {t['new']:7.3f} "
              f"{t['diff']:+7.3f}  {ci:<17} {t['better']:>6} {t['worse']:>5} "
              f"{p:>8}  {verdict}\n")
        if any(t["exact"] for t in s["tests"].values()):
            w("   (* exact: every sign pattern counted)\n")
        if per_query and s["moved"]:
            w(f"\n   {'id':<16}{'category':<11}{'old':>4}{'new':>4}  "
              f"new top 3\n")
            for qid, category, a, b, top in s["moved"]:
                w(f"   {qid:<16}{category:<11}{a or '-'!s:>4}{b or '-'!s:>4}"
                  f"  {' | '.join(top)}\n")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Evaluate code_search.py against golden query sets.")
    parser.add_argument("--set", default="all", choices=SETS + ("all",))
    parser.add_argument("--per-query", action="store_true",
                        help="print each query's first-hit rank (with "
                        "--compare: the queries whose rank changed)")
    parser.add_argument("--root", help="index this directory in place "
                        "(only with a single --set)")
    parser.add_argument("--json", action="store_true",
                        help="print the metrics as JSON")
    parser.add_argument("--check-gold", action="store_true",
                        help="only verify the gold items with ast")
    parser.add_argument("--worst", type=int, default=0, metavar="N",
                        help="list the N worst queries of each category")
    parser.add_argument("--tool", metavar="FILE",
                        help="evaluate this code_search.py instead of the "
                        "project's")
    parser.add_argument("--save", metavar="FILE",
                        help="write per-query metrics and the tool's identity "
                        "as JSON")
    parser.add_argument("--compare", nargs="+", metavar="FILE",
                        help="paired test of the current run (or of a second "
                        "saved FILE) against a run saved with --save")
    parser.add_argument("--metric", default="mrr", choices=METRICS,
                        help="per-query value the paired test compares "
                        "(default mrr: reciprocal rank)")
    parser.add_argument("--permutations", type=int, default=PERMUTATIONS,
                        metavar="N", help="sign flips and bootstrap resamples "
                        f"(default {PERMUTATIONS})")
    parser.add_argument("--seed", type=int, default=SEED,
                        help=f"random seed of the test (default {SEED})")
    args = parser.parse_args(argv)
    names = SETS if args.set == "all" else (args.set,)
    if args.root and len(names) > 1:
        parser.error("--root needs a single --set")
    if args.compare and len(args.compare) > 2:
        parser.error("--compare takes a saved run, or two")
    if args.permutations < 1:
        parser.error("--permutations must be at least 1")
    two_saved = bool(args.compare) and len(args.compare) == 2
    if two_saved and args.save:
        parser.error("--save needs a run; --compare OLD NEW runs nothing")

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

        if two_saved:
            old_doc, new_doc = map(read_saved, args.compare)
            cmp = compare_runs(old_doc, new_doc, args.metric,
                               args.permutations, args.seed)
            if args.json:
                json.dump({"comparison": cmp}, sys.stdout, ensure_ascii=False,
                          indent=1)
                sys.stdout.write("\n")
            else:
                print_comparison(cmp, args.per_query)
            return 0

        old_doc = read_saved(args.compare[0]) if args.compare else None
        tool = load_tool(args.tool)
        results, corpora = {}, {}
        try:
            for name in names:
                if args.root:
                    key = os.path.abspath(args.root)
                elif name == "demo":
                    key = default_root(name)
                else:
                    key = None          # the stdlib's temporary copy
                if key not in corpora:
                    corpora[key] = Corpus(tool, key)
                results[name] = evaluate(name, tool=tool, corpus=corpora[key],
                                         deep=DEEP if args.worst else 0)
        finally:
            for corpus in corpora.values():
                corpus.close()
        document = None
        if args.save or old_doc:
            document = saved_run(results, tool_identity(tool))
        if args.save:
            write_saved(args.save, document)
        cmp = None
        if old_doc:
            cmp = compare_runs(old_doc, document, args.metric,
                               args.permutations, args.seed)
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
        if cmp:
            slim = {"results": slim, "comparison": cmp}
        json.dump(slim, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        for res in results.values():
            print_report(res, per_query=args.per_query and not cmp,
                         worst=args.worst, deep=DEEP)
        if cmp:
            print_comparison(cmp, args.per_query)
        if args.save:
            print(f"\nsaved per-query metrics to {args.save}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

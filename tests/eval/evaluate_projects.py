#!/usr/bin/env python3
"""Retrieval evaluation of code_search.py on real third-party projects
(standard library only).

Files next to this one:

  projects_sources.json  the packages, pinned: [{"name", "version", "url",
                         "sha256", "size", "root"}], each an sdist on PyPI
  projects.json          the questions: [{"id", "set", "lang", "category",
                         "project", "query", "gold": [{"path", "symbol"}],
                         "tags"?}]

The questions and their gold were written from reading each package's code,
before any ranker was run on these packages, and then frozen.  ``set`` is
"tuning" (about 60%) or "holdout" (about 40%, not to be used for tuning).
The 72 questions over rich and django (ri-*, dj-*) came later, written the same
way by two helpers who read only the sources (rich's sdist holds no tests).
The 45 questions over jinja2 (jj-*) came later, all held out, written the
same way by a helper who read only the sources.
``category`` is one of:

  english     a plain-word question about the library's internals
  message     an error message, warning or log line as a user pastes it, with
              the code's placeholders filled in with concrete values; the gold
              is the definition that raises, warns or logs it
  identifier  an exact name (``Config.get_namespace``, ``merge_cookies``)
  korean      a question in Korean

``tags`` (optional) mark the questions the issue asks about:

  private     the gold is a _private helper that does the real work
  test-named  a test function's name repeats the question's words; the gold
              is the implementation, not the test
  wants-test  the question asks for a test; the gold is the test

Gold paths are POSIX paths relative to the extracted sdist folder (which is
indexed whole, tests included); a symbol is the dotted name code_search
gives the chunk (``Class.method``, ``outer.inner``, a class without methods,
a module-level UPPER_CASE constant).

Each package is downloaded with urllib from its pinned URL, checked against
its sha256 and kept in ~/.cache/code_search_eval/ (or ``--cache DIR``).  A
package whose download fails (offline) or whose checksum differs is skipped
with one line on stderr.  The archive is extracted into a temporary folder
with tarfile: only regular files and folders, no absolute paths, no '..',
nothing outside the archive's single top folder.

Three rankers see the same candidates: the chunks of
``chunks, skipped = code_search.scan_tree(root)`` that are searched (a class
that holds methods is not a candidate: its methods are).

  ours      code_search.search_index(code_search.make_search_index(chunks),
                                     question, top_k=10)
  grep      a plain word count: score = number of the question's distinct
            lowercase words (split on non-alphanumerics) that occur among the
            words of the chunk's text; score 0 dropped; ties keep chunk
            order; top 10.  The issue's baseline for pasted messages.
  tutorial  score = 3*|q & tokens(symbol)| + 2*|q & tokens(doc)|
            + |q & tokens(text)| with q = code_search.tokens(question), as in
            evaluate.py (there over every chunk, here over the candidates);
            score 0 dropped; ties keep chunk order; top 10.

Metrics (binary relevance, cut-off 10), as in evaluate.py:

  MRR@10     1 / rank of the first gold chunk (0 if none in the top 10)
  Recall@k   |gold found in top k| / min(|gold|, k)
  nDCG@10    DCG over the top 10 / ideal DCG over min(|gold|, 10) items

Tables are printed per category, per project, per set and per tag, and
overall.  Diagnostics for our ranker, over questions that do not ask for
tests: how often a test is first, ranks above a found gold item, or sits in
the top 10 of a missed one; for "private" questions and for messages, what
kind of chunk comes first when the gold does not: named-class (a class
without methods that the question names, such as the exception class of a
pasted message), docs (a file that is not Python), stub (.pyi), test,
same-file (another definition in a gold item's file, such as the public
wrapper) or other-code.

Usage:
  python tests/eval/evaluate_projects.py [--set tuning|holdout|all]
      [--project NAME ...] [--cache DIR] [--per-query] [--worst N] [--json]
      [--check-gold] [--save FILE] [--compare OLD]

``--check-gold`` verifies with code_search.chunk_file that every gold item is
a searched chunk of its file, then stops.  ``--save FILE`` keeps the per-query
metrics of each set (tuning, holdout, all) in evaluate.py's format, and
``--compare OLD`` runs evaluate.py's paired sign-flip test (with a bootstrap
interval) of this run against a saved one.

From a unit test: ``evaluate()`` returns a dict with the metrics (it skips
what cannot be downloaded; its "projects" lists what was evaluated).
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.request

import evaluate as shared   # evaluate.py next to this file: saved runs, the paired test
from evaluate import chunk_key, mean, norm_path, score_ranking   # the same metrics

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT_ROOT = os.path.dirname(os.path.dirname(HERE))
QUESTIONS_FILE = os.path.join(HERE, "projects.json")
SOURCES_FILE = os.path.join(HERE, "projects_sources.json")
DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "code_search_eval")
TOP_K = 10
RANKERS = ("ours", "grep", "tutorial")
METRICS = ("mrr", "r1", "r10", "ndcg")
CATEGORIES = ("english", "message", "identifier", "korean")
SETS = ("tuning", "holdout")
TAGS = ("private", "test-named", "wants-test")
REQUIRED_API = ("scan_tree", "make_search_index", "search_index", "tokens")
DOWNLOAD_TIMEOUT = 60
# A test file or folder, for the diagnostics only (the ranker has its own rule).
TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_test\.py|conftest\.py)$")
PRIVATE = re.compile(r"(^|\.)_(?!_)")
WORD = re.compile(r"[^\W_]+")


class EvalError(Exception):
    """A problem that makes the evaluation impossible (clear message)."""


# --------------------------------------------------------------------------
# tool loading (as evaluate.py)

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
            "code_search.py (%s) lacks the API this harness needs: %s"
            % (getattr(code_search, "__file__", "?"), ", ".join(missing)))
    return code_search


# --------------------------------------------------------------------------
# questions and sources

def load_questions(path=QUESTIONS_FILE):
    with open(path, encoding="utf-8") as f:
        queries = json.load(f)
    seen = set()
    for q in queries:
        for key in ("id", "set", "lang", "category", "project", "query", "gold"):
            if key not in q:
                raise EvalError(f"{path}: entry {q!r} lacks {key!r}")
        if q["id"] in seen:
            raise EvalError(f"{path}: duplicate id {q['id']}")
        if q["set"] not in SETS:
            raise EvalError(f"{path}: {q['id']} has set {q['set']!r}")
        if not q["gold"]:
            raise EvalError(f"{path}: {q['id']} has no gold")
        seen.add(q["id"])
    return queries


def load_sources(path=SOURCES_FILE):
    with open(path, encoding="utf-8") as f:
        sources = json.load(f)
    for s in sources:
        for key in ("name", "version", "url", "sha256"):
            if key not in s:
                raise EvalError(f"{path}: entry {s!r} lacks {key!r}")
    return sources


# --------------------------------------------------------------------------
# download, cache, safe extraction

def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_sdist(source, cache_dir):
    """Path of the verified archive in the cache, downloading it if needed.

    Raises OSError (network, disk) or ValueError (checksum) on failure.
    """
    name = source["url"].rsplit("/", 1)[-1]
    if not name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")):
        raise ValueError(f"not a tar sdist: {name}")
    os.makedirs(cache_dir, exist_ok=True)
    target = os.path.join(cache_dir, name)
    if os.path.isfile(target) and sha256_of(target) == source["sha256"]:
        return target
    fd, partial = tempfile.mkstemp(prefix=name + ".", suffix=".part", dir=cache_dir)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(
                source["url"], timeout=DOWNLOAD_TIMEOUT) as response:
            for block in iter(lambda: response.read(1 << 16), b""):
                digest.update(block)
                out.write(block)
        if digest.hexdigest() != source["sha256"]:
            raise ValueError(f"sha256 mismatch for {name}: got {digest.hexdigest()}")
        os.chmod(partial, 0o644)
        os.replace(partial, target)
        return target
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def safe_members(archive):
    """The archive's regular files and folders, checked: one top folder, no
    absolute path, no '..'.  Links, devices and the like are left out."""
    members, top = [], None
    for member in archive.getmembers():
        name = member.name.replace("\\", "/")
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in parts:
            raise ValueError(f"unsafe path in archive: {member.name!r}")
        if not parts:
            continue
        if top is None:
            top = parts[0]
        elif parts[0] != top:
            raise ValueError(f"archive has more than one top folder: {parts[0]!r}")
        if member.isfile() or member.isdir():
            members.append(member)
    if top is None:
        raise ValueError("empty archive")
    return members, top


def extract_sdist(archive_path, parent):
    """Extract into parent; returns the package root (the top folder)."""
    with tarfile.open(archive_path) as archive:
        members, top = safe_members(archive)
        if hasattr(tarfile, "data_filter"):
            archive.extractall(parent, members=members, filter="data")
        else:                                     # Python without PEP 706
            archive.extractall(parent, members=members)
    root = os.path.join(parent, top)
    if not os.path.isdir(root):
        raise ValueError(f"archive top {top!r} is not a folder")
    return root


# --------------------------------------------------------------------------
# rankers

def grep_words(text):
    """Distinct lowercase words of a text, split on non-alphanumerics."""
    return set(WORD.findall(text.lower()))


class GrepRanker:
    """score = number of the question's distinct words in the chunk's text."""

    def __init__(self, chunks):
        self.postings = {}
        for i, chunk in enumerate(chunks):
            for word in grep_words(chunk.get("text") or ""):
                self.postings.setdefault(word, []).append(i)

    def rank(self, question, top_k=TOP_K):
        scores = {}
        for word in grep_words(question):
            for i in self.postings.get(word, ()):
                scores[i] = scores.get(i, 0) + 1
        return sorted(scores, key=lambda i: (-scores[i], i))[:top_k]


class TutorialRanker:
    """The tutorial scorer of evaluate.py, through inverted lists."""

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


# --------------------------------------------------------------------------
# metrics (as evaluate.py)

def aggregate(rows):
    out = {"n": len(rows)}
    for ranker in RANKERS:
        out[ranker] = {m: mean(r[ranker][m] for r in rows) for m in METRICS}
    return out


def is_test_path(path):
    return bool(TEST_PATH.search(path))


def hit_kind(key, gold, kind="", question=""):
    """What a ranked chunk is, for the diagnostics: gold, named-class (a class
    without methods, such as an exception, that the question names), docs (not
    Python), stub (.pyi), test, same-file (in a gold item's file) or
    other-code."""
    path = key[0]
    if key in gold:
        return "gold"
    if kind == "class" and key[1].rpartition(".")[2] in re.findall(r"\w+", question):
        return "named-class"
    if not path.endswith((".py", ".pyi")):
        return "docs"
    if is_test_path(path):
        return "test"
    if path.endswith(".pyi"):
        return "stub"
    if path in {g[0] for g in gold}:
        return "same-file"
    return "other-code"


def diagnose(row, keys, gold, kinds=()):
    """What ranks above the first gold item in our top 10 (all of the top 10
    when no gold is there)."""
    rank = row["ours"]["rank"]
    above = [k for k in keys[:(rank - 1) if rank else TOP_K] if k not in gold]
    counts_tests = "wants-test" not in row["tags"]
    row["tests_above"] = (sum(1 for path, _ in above if is_test_path(path))
                          if counts_tests else 0)
    row["first_kind"] = (hit_kind(keys[0], gold, kinds[0] if kinds else "", row["query"])
                         if keys else "none")
    row["above"] = ["%s:%s" % k for k in above[:3]]


# --------------------------------------------------------------------------
# evaluation

def evaluate(set_name="all", projects=None, cache_dir=DEFAULT_CACHE, tool=None,
             questions_file=QUESTIONS_FILE, sources_file=SOURCES_FILE, log=sys.stderr):
    """Evaluate the questions of the given set over the available packages."""
    tool = tool or load_tool()
    queries = [q for q in load_questions(questions_file)
               if set_name == "all" or q["set"] == set_name]
    sources = load_sources(sources_file)
    if projects:
        unknown = set(projects) - {s["name"] for s in sources}
        if unknown:
            raise EvalError(f"unknown project(s): {', '.join(sorted(unknown))}")
        sources = [s for s in sources if s["name"] in projects]
    started = time.perf_counter()
    rows, per_project, skipped_projects = [], {}, []
    gold_missing, gold_not_indexed = [], []
    for source in sources:
        mine = [q for q in queries if q["project"] == source["name"]]
        if not mine:
            continue
        label = f"{source['name']}-{source['version']}"
        try:
            archive = fetch_sdist(source, cache_dir)
        except (OSError, ValueError) as exc:
            print(f"evaluate_projects.py: skipping {label}: {exc}", file=log)
            skipped_projects.append(source["name"])
            continue
        tmp = tempfile.mkdtemp(prefix="eval-projects-")
        try:
            try:
                root = extract_sdist(archive, tmp)
            except (OSError, ValueError, tarfile.TarError) as exc:
                print(f"evaluate_projects.py: skipping {label}: {exc}", file=log)
                skipped_projects.append(source["name"])
                continue
            info = run_project(tool, root, mine, rows, gold_missing, gold_not_indexed)
            info.update(version=source["version"], root=os.path.basename(root))
            per_project[source["name"]] = info
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return {
        "set": set_name,
        "n_queries": len(queries),
        "n_evaluated": len(rows),
        "projects": per_project,
        "skipped_projects": skipped_projects,
        "gold_missing": gold_missing,
        "gold_not_indexed": gold_not_indexed,
        "overall": aggregate(rows),
        "by_category": group(rows, lambda r: [r["category"]], CATEGORIES),
        "by_project": group(rows, lambda r: [r["project"]],
                            [s["name"] for s in sources]),
        "by_set": group(rows, lambda r: [r["set"]], SETS),
        "by_tag": group(rows, lambda r: r["tags"], TAGS),
        "diagnostics": diagnostics(rows),
        "per_query": rows,
        "seconds": round(time.perf_counter() - started, 2),
    }


def group(rows, keys_of, order):
    out = {}
    for name in order:
        members = [r for r in rows if name in keys_of(r)]
        if members:
            out[name] = aggregate(members)
    return out


def run_project(tool, root, queries, rows, gold_missing, gold_not_indexed):
    t0 = time.perf_counter()
    chunks, skipped_files = tool.scan_tree(root)
    chunks = list(chunks)
    t_scan = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = tool.make_search_index(chunks)
    t_index = time.perf_counter() - t0
    candidates = [c for c in chunks if c.get("searched", True)]
    grep = GrepRanker(candidates)
    tutorial = TutorialRanker(candidates, tool.tokens)
    indexed = {chunk_key(c) for c in candidates}
    t_ours = 0.0
    for q in queries:
        gold = set()
        for g in q["gold"]:
            path = norm_path(g["path"])
            if not os.path.isfile(os.path.join(root, *path.split("/"))):
                gold_missing.append(f"{q['id']}: {path} {g['symbol']}")
                continue
            gold.add((path, g["symbol"]))
            if (path, g["symbol"]) not in indexed:
                gold_not_indexed.append(f"{q['id']}: {path} {g['symbol']}")
        if not gold:
            continue
        t1 = time.perf_counter()
        hits = tool.search_index(index, q["query"], top_k=TOP_K)
        t_ours += time.perf_counter() - t1
        ours_keys = [chunk_key(h) for h in list(hits)[:TOP_K]]
        grep_keys = [chunk_key(candidates[i]) for i in grep.rank(q["query"])]
        tut_keys = [chunk_key(candidates[i]) for i in tutorial.rank(q["query"])]
        row = {
            "id": q["id"], "set": q["set"], "category": q["category"],
            "project": q["project"], "lang": q["lang"], "query": q["query"],
            "tags": list(q.get("tags", ())),
            "gold": ["%s:%s" % g for g in sorted(gold)],
            "ours": score_ranking(ours_keys, gold),
            "grep": score_ranking(grep_keys, gold),
            "tutorial": score_ranking(tut_keys, gold),
            "ours_top": ["%s:%s" % k for k in ours_keys[:3]],
            "grep_top": ["%s:%s" % k for k in grep_keys[:3]],
            "query_sha": shared.query_digest(q),
        }
        diagnose(row, ours_keys, gold, [h.get("kind", "") for h in list(hits)[:TOP_K]])
        rows.append(row)
    return {"n_chunks": len(chunks), "n_candidates": len(candidates),
            "n_skipped_files": len(skipped_files),
            "seconds": {"scan": round(t_scan, 2), "index": round(t_index, 2),
                        "ours_queries": round(t_ours, 2)}}


def diagnostics(rows):
    """Counts for our ranker: tests above the implementation, buried privates,
    and what comes first when the gold does not."""
    not_test = [r for r in rows if "wants-test" not in r["tags"]]
    private = [r for r in rows if "private" in r["tags"]]
    found = [r for r in not_test if r["ours"]["rank"]]
    missed = [r for r in not_test if not r["ours"]["rank"]]

    def first_kinds(members):
        kinds = {}
        for r in members:
            if r["ours"]["rank"] != 1:
                kinds[r["first_kind"]] = kinds.get(r["first_kind"], 0) + 1
        return dict(sorted(kinds.items(), key=lambda kv: -kv[1]))

    return {
        "questions_not_asking_for_tests": len(not_test),
        "test_first": sum(1 for r in not_test if r["first_kind"] == "test"),
        "test_above_found_gold": sum(1 for r in found if r["tests_above"]),
        "found": len(found),
        "test_in_top10_of_missed": sum(1 for r in missed if r["tests_above"]),
        "missed": len(missed),
        "test_named": sum(1 for r in not_test if "test-named" in r["tags"]),
        "test_named_test_first": sum(1 for r in not_test if "test-named" in r["tags"]
                                     and r["first_kind"] == "test"),
        "private": len(private),
        "private_first": sum(1 for r in private if r["ours"]["rank"] == 1),
        "private_missed": sum(1 for r in private if not r["ours"]["rank"]),
        "private_first_kinds": first_kinds(private),
        "message_first_kinds": first_kinds([r for r in rows
                                            if r["category"] == "message"]),
        "wants_test": sum(1 for r in rows if "wants-test" in r["tags"]),
        "wants_test_found_first": sum(1 for r in rows if "wants-test" in r["tags"]
                                      and r["ours"]["rank"] == 1),
    }


# --------------------------------------------------------------------------
# gold check

def check_gold(tool, cache_dir=DEFAULT_CACHE, questions_file=QUESTIONS_FILE,
               sources_file=SOURCES_FILE, log=sys.stderr):
    """Errors for gold items that are not searched chunks of their files."""
    queries = load_questions(questions_file)
    errors = []
    for source in load_sources(sources_file):
        mine = [q for q in queries if q["project"] == source["name"]]
        if not mine:
            continue
        try:
            archive = fetch_sdist(source, cache_dir)
        except (OSError, ValueError) as exc:
            print(f"evaluate_projects.py: skipping {source['name']}: {exc}", file=log)
            continue
        tmp = tempfile.mkdtemp(prefix="eval-projects-")
        try:
            root = extract_sdist(archive, tmp)
            symbols = {}
            for q in mine:
                for g in q["gold"]:
                    path = norm_path(g["path"])
                    if path not in symbols:
                        full = os.path.join(root, *path.split("/"))
                        if not os.path.isfile(full):
                            symbols[path] = None
                        else:
                            with open(full, "rb") as f:
                                data = f.read()
                            read = tool.chunk_file(data, path,
                                                   hashlib.sha256(data).hexdigest())
                            symbols[path] = {c["symbol"]: c.get("searched", True)
                                             for c in read.chunks}
                    found = symbols[path]
                    label = f"{q['id']}: {path} {g['symbol']}"
                    if found is None:
                        errors.append(label + ": no such file")
                    elif g["symbol"] not in found:
                        errors.append(label + ": no such chunk")
                    elif not found[g["symbol"]]:
                        errors.append(label + ": a class holding methods (not searched)")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return errors


# --------------------------------------------------------------------------
# reporting

def print_table(title, groups, out):
    w = out.write
    w(f"\n   {title:<12}{'n':>4} | {'MRR ours':>8} {'grep':>6} {'tut':>6} | "
      f"{'R@1 ours':>8} {'grep':>6} {'tut':>6} | {'R@10 ours':>9} {'grep':>6} "
      f"{'tut':>6} | {'nDCG ours':>9} {'grep':>6} {'tut':>6}\n")
    w("   " + "-" * 124 + "\n")
    for name, g in groups:
        o, p, t = g["ours"], g["grep"], g["tutorial"]
        w(f"   {name:<12}{g['n']:>4} | {o['mrr']:8.3f} {p['mrr']:6.3f} {t['mrr']:6.3f} | "
          f"{o['r1']:8.3f} {p['r1']:6.3f} {t['r1']:6.3f} | {o['r10']:9.3f} "
          f"{p['r10']:6.3f} {t['r10']:6.3f} | {o['ndcg']:9.3f} {p['ndcg']:6.3f} "
          f"{t['ndcg']:6.3f}\n")


def print_report(res, per_query=False, worst=0, out=sys.stdout):
    w = out.write
    w(f"\n== projects, set {res['set']}: {res['n_evaluated']}/{res['n_queries']} "
      f"queries evaluated, {res['seconds']} s\n")
    for name, info in res["projects"].items():
        w(f"   {info['root']}: {info['n_chunks']} chunks ({info['n_candidates']} "
          f"candidates), {info['n_skipped_files']} files skipped, scan "
          f"{info['seconds']['scan']} s, index {info['seconds']['index']} s, "
          f"queries {info['seconds']['ours_queries']} s\n")
    if res["skipped_projects"]:
        w(f"   skipped (not available): {', '.join(res['skipped_projects'])}\n")
    for key, what in (("gold_missing", "gold files missing"),
                      ("gold_not_indexed", "gold items not among the candidates")):
        if res[key]:
            w(f"   note: {len(res[key])} {what}: {'; '.join(res[key][:8])}"
              f"{' ...' if len(res[key]) > 8 else ''}\n")
    if not res["n_evaluated"]:
        return
    overall = [("overall", res["overall"])]
    print_table("category", list(res["by_category"].items()) + overall, out)
    print_table("project", list(res["by_project"].items()) + overall, out)
    print_table("set", list(res["by_set"].items()) + overall, out)
    print_table("tag", list(res["by_tag"].items()), out)
    d = res["diagnostics"]
    w(f"\n   ours, {d['questions_not_asking_for_tests']} questions not asking for "
      f"tests: a test is first in {d['test_first']} ({d['test_named_test_first']} of "
      f"{d['test_named']} test-named); a test ranks above the gold in "
      f"{d['test_above_found_gold']} of {d['found']} found; a test is in the top 10 "
      f"of {d['test_in_top10_of_missed']} of {d['missed']} missed\n")
    w(f"   ours, {d['private']} private gold: first in {d['private_first']}, missed in "
      f"{d['private_missed']}; first instead: {d['private_first_kinds']}\n")
    w(f"   ours, messages not first, first instead: {d['message_first_kinds']}\n")
    w(f"   ours, {d['wants_test']} questions asking for tests: the test first in "
      f"{d['wants_test_found_first']}\n")
    if per_query:
        w(f"\n   {'id':<12}{'set':<8}{'ours':>5}{'grep':>5}{'tut':>5}  query\n")
        for r in res["per_query"]:
            ranks = [r[k]["rank"] or "-" for k in RANKERS]
            w(f"   {r['id']:<12}{r['set']:<8}{ranks[0]!s:>5}{ranks[1]!s:>5}"
              f"{ranks[2]!s:>5}  {r['query'][:100]}\n")
    if worst:
        w(f"\n   the {worst} worst for ours (rank of first gold; our top 3)\n")
        rows = sorted(res["per_query"], key=lambda r: (r["ours"]["mrr"],
                                                        -r["grep"]["mrr"], r["id"]))
        for r in rows[:worst]:
            w(f"   {r['id']} [{r['category']}, {r['set']}"
              f"{', ' + ', '.join(r['tags']) if r['tags'] else ''}] ours "
              f"{r['ours']['rank'] or '-'}, grep {r['grep']['rank'] or '-'}: "
              f"{r['query'][:110]}\n")
            w(f"      gold: {'; '.join(r['gold'])}\n")
            for i, hit in enumerate(r["ours_top"], 1):
                w(f"      {i}. {hit}\n")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Evaluate code_search.py on pinned sdists of real projects.")
    parser.add_argument("--set", default="all", choices=SETS + ("all",))
    parser.add_argument("--project", action="append",
                        help="only this project (repeatable)")
    parser.add_argument("--cache", default=DEFAULT_CACHE,
                        help=f"where downloaded sdists are kept ({DEFAULT_CACHE})")
    parser.add_argument("--per-query", action="store_true",
                        help="print each query's first-hit rank per ranker")
    parser.add_argument("--worst", type=int, default=0, metavar="N",
                        help="print the N worst queries for ours with our top 3")
    parser.add_argument("--json", action="store_true",
                        help="print the metrics as JSON")
    parser.add_argument("--check-gold", action="store_true",
                        help="only verify the gold items with code_search.chunk_file")
    parser.add_argument("--save", metavar="FILE",
                        help="save per-query metrics (evaluate.py's format)")
    parser.add_argument("--compare", metavar="OLD",
                        help="paired sign-flip test of this run against a saved one, "
                             "per set (tuning, holdout) and over all")
    args = parser.parse_args(argv)
    try:
        old = shared.read_saved(args.compare) if args.compare else None
        tool = load_tool()
        if args.check_gold:
            errors = check_gold(tool, args.cache)
            n = len(load_questions())
            print(f"projects: {n} queries, {len(errors)} gold errors")
            for line in errors:
                print("  ERROR", line)
            return 1 if errors else 0
        res = evaluate(args.set, args.project, args.cache, tool=tool)
    except (EvalError, shared.EvalError) as exc:
        print(f"evaluate_projects.py: {exc}", file=sys.stderr)
        return 2
    if args.json:
        if not args.per_query:
            res = dict(res)
            res.pop("per_query")
        json.dump(res, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        print_report(res, per_query=args.per_query, worst=args.worst)
    if not res["n_evaluated"]:
        print("evaluate_projects.py: no package could be evaluated", file=sys.stderr)
        return 2
    try:
        saved_and_compared(res["per_query"], tool, args.save, old, args.per_query,
                           sys.stderr if args.json else sys.stdout)
    except shared.EvalError as exc:
        print(f"evaluate_projects.py: {exc}", file=sys.stderr)
        return 2
    return 0


def saved_and_compared(rows, tool, save, old, per_query, out):
    """--save and --compare: the runs of each set (tuning, holdout) and of all."""
    sets = {name: [r for r in rows if name == "all" or r["set"] == name]
            for name in SETS + ("all",)}
    shared.save_and_compare(
        {name: {"root": "", "n_queries": len(chosen), "n_evaluated": len(chosen),
                "per_query": chosen} for name, chosen in sets.items() if chosen},
        tool, save, old, per_query, out)


if __name__ == "__main__":
    sys.exit(main())

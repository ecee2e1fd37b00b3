#!/usr/bin/env python3
"""Retrieval evaluation of code_search.py over real Go, Java, Rust, TypeScript,
JavaScript and Kotlin code.

Standard library only.  The golden set is polyglot.json next to this file:
questions written the way a developer who does not know the code asks them
(category "english"), exact names (category "identifier") and Korean
questions (category "korean"): 134 written with the polyglot chunkers, 100
more (t2-*, 20 English and 5 Korean per language) written from the sources by a
helper who never ran the ranker, and 108 more over Go, Java and Rust (t3-*, per
language 13 English asking how to do something, 13 asking how the library does
something inside, and 10 Korean), written the same way, and 64 more (t4-*, per Go,
Java, Rust and TypeScript 6 English asking how to do something, 5 asking how it is
done inside and 5 Korean), written the same way, and 72 more (t5-*, 32 Java, 20 Go
and 20 Rust, about 40% English asking how to do something, 35% how it is done inside
and 25% Korean), written the same way, and 50 more over Java (t6-*, 32 English,
half of them about insides, and 18 Korean), written the same way.  Ranking changes
were tuned on these.
polyglot_holdout.json (with --gold) holds 372 more, written the same way: 80
(p2-*, 15 English and 5 Korean per language), then 100 (p3-*, 20 English and 5
Korean per language, 8 of each language's English ones asking how the library
does something inside), then 100 more (p4-*, the same mix, about half of them
about insides, by four helpers who read only the sources), then 92 Korean (p5-*,
23 per language, half about insides, by a helper who read only the
sources).  polyglot_javascript.json
(with --gold) holds 65 JavaScript questions over lodash, express and axios (45 English,
a third of them about insides, 15 Korean, 5 identifiers) and polyglot_kotlin.json 50
Kotlin questions over OkHttp (35 English, a third about insides, 10 Korean, 5
identifiers), written the same way.  The
held-out sets are never tuned on and their failures are not to be read.  Each entry is

  {"id", "lang", "category", "language", "query", "gold": [{"path", "symbol"}]}

where "lang" is the natural language of the question (en|ko), "language" the
corpus (go|java|rust|typescript|javascript|kotlin), gold paths are POSIX paths relative to that
corpus's root and symbols are the dotted names code_search gives a definition
(Go ``Server.Serve`` for a method on *Server, ``Split`` for a function; Java
``Outer.Inner.method``, constructor ``Class.Class``; Rust impl method
``Type.method``, ``[T].sort_by`` for ``impl<T> [T]``, trait default method
``Trait.method``; TypeScript ``Class.method``, ``name`` for a function).  Any
gold item is an equally good answer.

Corpora (built by this script in a temporary folder, never indexed in place;
a language whose sources are missing is skipped with one line on stderr):

  go          the .go files of /usr/share/go-1.19/src, _test.go, testdata/,
              cmd/ and vendor/ included                          (root = src)
  java        the java.base/*.java entries of the JDK's lib/src.zip,
              extracted with zipfile                              (root = java.base)
  rust        the .rs files of /usr/src/rustc-*/library          (root = library)
  typescript  the .ts files of rxjs (a folder holding src/, or an
              rxjs-*.tgz npm tarball, or ``npm pack rxjs --offline``)
                                                                  (root = package)
  javascript  the .js/.mjs/.cjs files of the pinned npm packages JS_PACKAGES
              (``npm pack``, from the npm cache when it has them), dist/ left
              out                                    (root holds lodash/, express/, axios/)
  kotlin      the .kt/.kts files of a checkout of KOTLIN_SOURCE (square/okhttp at a
              pinned commit), given with --source kotlin=PATH: no registry this
              machine reaches has Kotlin sources                 (root = the checkout)

``--source LANG=PATH`` points a language at other sources (a folder, or for
java a src.zip, for typescript a folder or .tgz).  ``--corpus-dir DIR`` builds
the corpora in DIR/<language> and reuses them on later runs (DIR/<language>.built
records what was copied).

Two rankers are compared on the same chunks, as in evaluate.py:

  ours      code_search.search_index(code_search.make_search_index(chunks), q, top_k=10)
  tutorial  score = 3*|q & tokens(symbol)| + 2*|q & tokens(doc)| + |q & tokens(text)|
            with q = code_search.tokens(question); score 0 dropped; ties keep
            chunk order; top 10.   (--no-tutorial leaves it out)

Metrics (binary relevance, cut-off 10), identical to evaluate.py:

  MRR@10     1 / rank of the first gold chunk (0 if none in the top 10)
  Recall@k   |gold found in top k| / min(|gold|, k)   (so Recall@1 is 1 when
             the first hit is any gold item)
  nDCG@10    DCG over the top 10 / ideal DCG over min(|gold|, 10) items

A result is matched to gold by (path, symbol); several chunks with the same
key (overloads) count once.  "overall" averages over all evaluated queries
(not over languages).

Usage:
  python tests/eval/evaluate_polyglot.py [--language go|java|rust|typescript|javascript|kotlin|all]
        [--per-query] [--json] [--check-gold] [--no-tutorial]
        [--source LANG=PATH]... [--corpus-dir DIR] [--gold FILE]
        [--save FILE] [--compare OLD]

``--per-query`` prints each query's first-gold rank and, for queries whose
first result is not gold, our top 3 (path:symbol).  ``--save FILE`` keeps the
per-query metrics of each language and of all of them pooled in evaluate.py's
format, and ``--compare OLD`` runs evaluate.py's paired sign-flip test (with a
bootstrap interval) of this run against a saved one, so that a change is kept
only when it is more than noise.  ``--check-gold`` builds
the corpora and checks with code_search.chunk_file that every gold symbol is a
chunk of its file (exit status 1 if not).

From a unit test: ``evaluate("go")`` returns a dict with the metrics.
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

import evaluate as shared   # evaluate.py next to this file: saved runs, the paired test
from evaluate import chunk_key, fmt_ratio, mean, norm_path, score_ranking   # the same metrics

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT_ROOT = os.path.dirname(os.path.dirname(HERE))
GOLD_FILE = os.path.join(HERE, "polyglot.json")
LANGUAGES = ("go", "java", "rust", "typescript", "javascript", "kotlin")
CATEGORIES = ("english", "identifier", "korean")
TOP_K = 10
RANKERS = ("ours", "tutorial")
METRICS = ("mrr", "r1", "r10", "ndcg")
REQUIRED_API = ("scan_tree", "make_search_index", "search_index", "tokens",
                "chunk_file")
EXTENSIONS = {"go": (".go",), "java": (".java",), "rust": (".rs",),
              "typescript": (".ts",), "javascript": (".js", ".mjs", ".cjs"),
              "kotlin": (".kt", ".kts")}
JS_PACKAGES = ("lodash@4.17.21", "express@4.21.2", "axios@1.7.7")   # pinned
KOTLIN_SOURCE = "square/okhttp at 1682d9bac8c03dffde2969b0b74d47649d0dbb52"   # no registry
                                                       # here has Kotlin sources: --source
SCRATCH_TS = "/work/scratch/corpora/ts/rxjs"


class EvalError(Exception):
    """A problem that makes the evaluation impossible (clear message)."""


class Skip(Exception):
    """A language whose sources are not on this machine."""


def note(message):
    print(f"evaluate_polyglot.py: {message}", file=sys.stderr)


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
            "code_search.py (%s) lacks the API this harness needs: %s"
            % (getattr(code_search, "__file__", "?"), ", ".join(missing)))
    return code_search


# --------------------------------------------------------------------------
# golden set

def load_set(path=GOLD_FILE):
    with open(path, encoding="utf-8") as f:
        queries = json.load(f)
    seen = set()
    for q in queries:
        for key in ("id", "lang", "category", "language", "query", "gold"):
            if key not in q:
                raise EvalError(f"{os.path.basename(path)}: entry {q!r} lacks {key!r}")
        if q["language"] not in LANGUAGES:
            raise EvalError(f"{os.path.basename(path)}: {q['id']}: unknown language "
                            f"{q['language']!r}")
        if q["id"] in seen:
            raise EvalError(f"{os.path.basename(path)}: duplicate id {q['id']}")
        if not q["gold"]:
            raise EvalError(f"{os.path.basename(path)}: {q['id']}: empty gold list")
        seen.add(q["id"])
    return queries


# --------------------------------------------------------------------------
# corpora

def newest(paths):
    """The path with the highest version numbers (rustc-1.63.0 < rustc-1.70.0)."""
    def key(path):
        return [int(n) for n in re.findall(r"\d+", path)], path
    return max(paths, key=key) if paths else None


def default_source(language):
    """Where a language's sources are on this machine, or None."""
    if language == "go":
        for path in ["/usr/share/go-1.19/src", "/usr/lib/go-1.19/src"]:
            if os.path.isdir(path):
                return path
        return newest([p for p in glob.glob("/usr/share/go-*/src") +
                       glob.glob("/usr/lib/go-*/src") if os.path.isdir(p)])
    if language == "java":
        for path in ["/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip"]:
            if os.path.isfile(path):
                return path
        return newest(glob.glob("/usr/lib/jvm/*/lib/src.zip"))
    if language == "rust":
        return newest([p for p in glob.glob("/usr/src/rustc-*/library")
                       if os.path.isdir(p)])
    if language == "javascript":
        return "npm:" + ",".join(JS_PACKAGES)
    if language == "kotlin":
        return None                 # a checkout of KOTLIN_SOURCE, given with --source
    if language == "typescript":
        if os.path.isdir(os.path.join(SCRATCH_TS, "src")):
            return SCRATCH_TS
        tarballs = sorted(glob.glob("/work/scratch/npm/rxjs-*.tgz"))
        return tarballs[-1] if tarballs else "npm:rxjs"
    raise EvalError(f"unknown language {language!r}")


def copy_tree(src, dst, extensions):
    """Copy the regular files with these extensions, keeping relative paths."""
    count = 0
    for folder, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(extensions):
                continue
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            target = os.path.join(dst, os.path.relpath(path, src))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(path, target)
            count += 1
    return count


def extract_java(zip_path, dst):
    """Extract java.base/**.java from a JDK src.zip; paths drop 'java.base/'."""
    count = 0
    with zipfile.ZipFile(zip_path) as archive:
        for info in archive.infolist():
            name = info.filename
            if info.is_dir() or not name.startswith("java.base/") \
                    or not name.endswith(".java"):
                continue
            relative = name[len("java.base/"):]
            if relative.startswith("/") or ".." in relative.split("/"):
                continue
            target = os.path.join(dst, *relative.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with archive.open(info) as f, open(target, "wb") as out:
                shutil.copyfileobj(f, out)
            count += 1
    return count


def extract_tarball(tgz, dst, extensions):
    """Copy package/src/**.ts of an npm tarball to dst/src/..."""
    count = 0
    with tarfile.open(tgz, "r:gz") as archive:
        for member in archive.getmembers():
            name = member.name
            if not member.isfile() or not name.startswith("package/src/") \
                    or not name.endswith(extensions):
                continue
            relative = name[len("package/"):]
            if ".." in relative.split("/"):
                continue
            target = os.path.join(dst, *relative.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with archive.extractfile(member) as f, open(target, "wb") as out:
                shutil.copyfileobj(f, out)
            count += 1
    return count


def npm_pack(spec, parent):
    """`npm pack spec` into parent, from the npm cache when it has it; the .tgz or
    None."""
    npm = shutil.which("npm")
    name, _, version = spec.rpartition("@")
    target = os.path.join(parent, f"{name}-{version}.tgz")
    if npm and not os.path.isfile(target):
        try:
            subprocess.run([npm, "pack", spec, "--prefer-offline", "--silent",
                            "--pack-destination", parent],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=180, check=True)
        except (OSError, subprocess.SubprocessError):
            return None
    return target if os.path.isfile(target) else None


def extract_package(tgz, dst, extensions):
    """Copy the files of an npm tarball's package/ with these extensions to dst,
    leaving out dist/ (bundles that repeat the sources) and node_modules/."""
    count = 0
    with tarfile.open(tgz, "r:gz") as archive:
        for member in archive.getmembers():
            parts = member.name.split("/")
            if not member.isfile() or parts[0] != "package" or ".." in parts \
                    or not member.name.endswith(extensions) \
                    or parts[1] in ("dist", "node_modules"):
                continue
            target = os.path.join(dst, *parts[1:])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with archive.extractfile(member) as f, open(target, "wb") as out:
                shutil.copyfileobj(f, out)
            count += 1
    return count


def npm_pack_offline(parent):
    """`npm pack rxjs --offline` from the npm cache into parent; the .tgz or None."""
    npm = shutil.which("npm")
    if not npm:
        return None
    try:
        subprocess.run([npm, "pack", "rxjs", "--offline", "--silent",
                        "--pack-destination", parent],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=180, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    found = sorted(glob.glob(os.path.join(parent, "rxjs-*.tgz")))
    return found[-1] if found else None


def build_corpus(language, source, parent):
    """Build language's corpus under parent/<language>; returns (root, description).

    Raises Skip when the sources are not there."""
    dst = os.path.join(parent, language)
    marker = dst + ".built"
    if os.path.isfile(marker) and os.path.isdir(dst):
        with open(marker, encoding="utf-8") as f:
            return dst, f.read().strip() + " (reused)"
    if os.path.exists(dst):
        shutil.rmtree(dst)
    exts = EXTENSIONS[language]
    if source is None and language == "kotlin":
        raise Skip(f"give a checkout of {KOTLIN_SOURCE} with --source kotlin=PATH")
    if source is None:
        raise Skip(f"no {language} sources found")
    if language == "java":
        if not os.path.isfile(source):
            raise Skip(f"no JDK src.zip at {source}")
        count = extract_java(source, dst)
    elif language == "javascript" and source.startswith("npm:"):
        count = 0
        for spec in source[len("npm:"):].split(","):
            tgz = npm_pack(spec, parent)
            if tgz is None:
                raise Skip(f"npm pack {spec} failed (no network and not in the cache)")
            count += extract_package(tgz, os.path.join(dst, spec.rpartition("@")[0]),
                                     exts)
    elif language == "typescript":
        if source == "npm:rxjs":
            tgz = npm_pack_offline(parent)
            if tgz is None:
                raise Skip("no rxjs sources (folder, tarball or npm cache)")
            source = tgz
        if os.path.isfile(source):
            count = extract_tarball(source, dst, exts)
        elif os.path.isdir(os.path.join(source, "src")):
            os.makedirs(dst)
            count = copy_tree(os.path.join(source, "src"),
                              os.path.join(dst, "src"), exts)
        else:
            raise Skip(f"no rxjs sources at {source}")
    else:
        if not os.path.isdir(source):
            raise Skip(f"no {language} sources at {source}")
        count = copy_tree(source, dst, exts)
    if count == 0:
        shutil.rmtree(dst, ignore_errors=True)
        raise Skip(f"no {'/'.join(exts)} files in {source}")
    description = f"{count} {'/'.join(exts)} files from {source}"
    with open(marker, "w", encoding="utf-8") as f:
        f.write(description + "\n")
    return dst, description


# --------------------------------------------------------------------------
# rankers

class TutorialRanker:
    """The tutorial scorer of evaluate.py, with token sets computed once."""

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
# metrics

def aggregate(rows, rankers):
    out = {"n": len(rows)}
    for ranker in rankers:
        out[ranker] = {m: mean(r[ranker][m] for r in rows) for m in METRICS}
    return out


def by_category(rows, rankers):
    return {c: aggregate([r for r in rows if r["category"] == c], rankers)
            for c in CATEGORIES if any(r["category"] == c for r in rows)}


# --------------------------------------------------------------------------
# gold check

def check_gold(language, root, queries, tool):
    """Errors (gold not a chunk of its file) and missing files for one language."""
    errors, missing, cache = [], [], {}
    for q in queries:
        if q["language"] != language:
            continue
        for g in q["gold"]:
            path = norm_path(g["path"])
            if path not in cache:
                full = os.path.join(root, *path.split("/"))
                if not os.path.isfile(full):
                    cache[path] = None
                else:
                    with open(full, "rb") as f:
                        data = f.read()
                    read = tool.chunk_file(data, path,
                                           hashlib.sha256(data).hexdigest())
                    cache[path] = {c["symbol"] for c in read.chunks}
            label = f"{q['id']}: {path} {g['symbol']}"
            if cache[path] is None:
                missing.append(label)
            elif g["symbol"] not in cache[path]:
                errors.append(label + ": not a chunk of the file")
    return errors, missing


# --------------------------------------------------------------------------
# evaluation

def evaluate(language, root=None, tool=None, queries=None, tutorial=True,
             description=None):
    """Evaluate one language's questions on the corpus at root (built in a
    temporary folder when root is None); returns a dict (keys below)."""
    tool = tool or load_tool()
    queries = [q for q in (queries or load_set()) if q["language"] == language]
    rankers = RANKERS if tutorial else RANKERS[:1]
    tmp = None
    started = time.perf_counter()
    try:
        if root is None:
            tmp = tempfile.mkdtemp(prefix="eval-polyglot-")
            root, description = build_corpus(language, default_source(language),
                                             tmp)
        root = os.path.abspath(root)
        t0 = time.perf_counter()
        chunks, skipped_files = tool.scan_tree(root)
        chunks = list(chunks)
        t_scan = time.perf_counter() - t0
        t0 = time.perf_counter()
        index = tool.make_search_index(chunks)
        t_index = time.perf_counter() - t0
        tut = TutorialRanker(chunks, tool.tokens) if tutorial else None
        indexed = {chunk_key(c) for c in chunks}

        skipped_gold, skipped_queries, not_indexed, rows = [], [], [], []
        t_ours = 0.0
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
            row = {
                "id": q["id"], "category": q["category"], "lang": q["lang"],
                "language": language, "query": q["query"],
                "ours": score_ranking(ours_keys, gold),
                "ours_top": ["%s:%s" % k for k in ours_keys[:3]],
                "query_sha": shared.query_digest(q),
            }
            if tut is not None:
                tut_keys = [chunk_key(chunks[i]) for i in tut.rank(q["query"])]
                row["tutorial"] = score_ranking(tut_keys, gold)
                row["tutorial_top"] = ["%s:%s" % k for k in tut_keys[:3]]
            rows.append(row)

        return {
            "language": language,
            "root": root if tmp is None else "(temporary copy)",
            "corpus": description or root,
            "rankers": list(rankers),
            "n_queries": len(queries),
            "n_evaluated": len(rows),
            "n_chunks": len(chunks),
            "n_skipped_files": len(skipped_files),
            "skipped_gold": skipped_gold,
            "skipped_queries": skipped_queries,
            "gold_not_indexed": not_indexed,
            "overall": aggregate(rows, rankers),
            "by_category": by_category(rows, rankers),
            "per_query": rows,
            "seconds": {
                "scan": round(t_scan, 2), "index": round(t_index, 2),
                "ours_queries": round(t_ours, 2),
                "total": round(time.perf_counter() - started, 2),
            },
        }
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def combine(results):
    """Totals over the evaluated languages: by language, by category, overall."""
    rows = [r for res in results.values() for r in res["per_query"]]
    rankers = [k for k in RANKERS
               if all(k in res["rankers"] for res in results.values())]
    return {
        "languages": list(results),
        "overall": aggregate(rows, rankers),
        "by_language": {name: aggregate(res["per_query"], rankers)
                        for name, res in results.items()},
        "by_category": by_category(rows, rankers),
        "rankers": rankers,
    }


# --------------------------------------------------------------------------
# reporting

def write_table(w, groups, rankers):
    tut = "tutorial" in rankers
    if tut:
        head = (f"   {'group':<11}{'n':>4} | {'MRR ours':>8} {'tut':>6} "
                f"{'ratio':>5} | {'R@1 ours':>8} {'tut':>6} | {'R@10 ours':>9} "
                f"{'tut':>6} | {'nDCG ours':>9} {'tut':>6}\n")
    else:
        head = (f"   {'group':<11}{'n':>4} | {'MRR@10':>7} | {'R@1':>6} | "
                f"{'R@10':>6} | {'nDCG@10':>7}\n")
    w(head)
    w("   " + "-" * (len(head) - 4) + "\n")
    for name, g in groups:
        o = g["ours"]
        if tut:
            t = g["tutorial"]
            w(f"   {name:<11}{g['n']:>4} | {o['mrr']:8.3f} {t['mrr']:6.3f} "
              f"{fmt_ratio(o['mrr'], t['mrr'])} | {o['r1']:8.3f} "
              f"{t['r1']:6.3f} | {o['r10']:9.3f} {t['r10']:6.3f} | "
              f"{o['ndcg']:9.3f} {t['ndcg']:6.3f}\n")
        else:
            w(f"   {name:<11}{g['n']:>4} | {o['mrr']:7.3f} | {o['r1']:6.3f} | "
              f"{o['r10']:6.3f} | {o['ndcg']:7.3f}\n")


def print_report(res, per_query=False, out=sys.stdout):
    w = out.write
    w(f"\n== {res['language']}: {res['corpus']}\n")
    w(f"   {res['n_chunks']} chunks, {res['n_skipped_files']} files skipped "
      f"by scan_tree, {res['n_evaluated']}/{res['n_queries']} queries "
      f"evaluated, {res['seconds']['total']} s "
      f"(scan {res['seconds']['scan']}, index {res['seconds']['index']}, "
      f"queries {res['seconds']['ours_queries']})\n")
    if res["skipped_gold"]:
        w(f"   gold items skipped (file missing): "
          f"{'; '.join(res['skipped_gold'])}\n")
    if res["skipped_queries"]:
        w(f"   queries skipped (no gold left): "
          f"{', '.join(res['skipped_queries'])}\n")
    if res["gold_not_indexed"]:
        w(f"   note: {len(res['gold_not_indexed'])} gold items are not among "
          f"the indexed chunks: {'; '.join(res['gold_not_indexed'][:8])}"
          f"{' ...' if len(res['gold_not_indexed']) > 8 else ''}\n")
    groups = list(res["by_category"].items()) + [("overall", res["overall"])]
    write_table(w, groups, res["rankers"])
    if per_query:
        tut = "tutorial" in res["rankers"]
        w(f"\n   {'id':<12}{'ours':>5}{'tut' if tut else '':>5}  query\n")
        for r in res["per_query"]:
            a = r["ours"]["rank"] or "-"
            b = (r["tutorial"]["rank"] or "-") if tut else ""
            w(f"   {r['id']:<12}{a!s:>5}{b!s:>5}  {r['query']}\n")
            if r["ours"]["rank"] != 1:
                for key in r["ours_top"]:
                    w(f"   {'':<22}  -> {key}\n")


def print_summary(total, out=sys.stdout):
    w = out.write
    w(f"\n== all languages ({', '.join(total['languages'])})\n")
    groups = (list(total["by_language"].items()) +
              list(total["by_category"].items()) +
              [("overall", total["overall"])])
    write_table(w, groups, total["rankers"])


def parse_sources(items):
    sources = {}
    for item in items or ():
        language, sep, path = item.partition("=")
        if not sep or language not in LANGUAGES:
            raise EvalError(f"--source wants LANG=PATH with LANG in "
                            f"{', '.join(LANGUAGES)}, got {item!r}")
        sources[language] = os.path.abspath(os.path.expanduser(path))
    return sources


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Evaluate code_search.py on Go/Java/Rust/TypeScript/JavaScript/Kotlin "
                    "questions (polyglot.json).")
    parser.add_argument("--language", default="all",
                        choices=LANGUAGES + ("all",))
    parser.add_argument("--per-query", action="store_true",
                        help="print each query's first-hit rank and our top 3 "
                             "when the first hit is not gold")
    parser.add_argument("--json", action="store_true",
                        help="print the metrics as JSON")
    parser.add_argument("--check-gold", action="store_true",
                        help="only check that every gold item is a chunk")
    parser.add_argument("--no-tutorial", action="store_true",
                        help="leave out the tutorial ranker")
    parser.add_argument("--source", action="append", metavar="LANG=PATH",
                        help="sources of one language (repeatable)")
    parser.add_argument("--corpus-dir", metavar="DIR",
                        help="build the corpora here and reuse them")
    parser.add_argument("--gold", metavar="FILE", default=GOLD_FILE,
                        help="the questions (default polyglot.json; "
                             "polyglot_holdout.json is the held-out set)")
    parser.add_argument("--save", metavar="FILE",
                        help="save per-query metrics (evaluate.py's format)")
    parser.add_argument("--compare", metavar="OLD",
                        help="paired sign-flip test of this run against a saved one, "
                             "per language and over all of them")
    args = parser.parse_args(argv)

    tmp = None
    try:
        sources = parse_sources(args.source)
        old = shared.read_saved(args.compare) if args.compare else None
        tool = load_tool()
        queries = load_set(args.gold)
        names = [name for name in LANGUAGES if args.language in (name, "all")
                 and any(q["language"] == name for q in queries)]
        if args.corpus_dir:
            parent = os.path.abspath(args.corpus_dir)
            os.makedirs(parent, exist_ok=True)
        else:
            parent = tmp = tempfile.mkdtemp(prefix="eval-polyglot-")
        results, bad = {}, 0
        for name in names:
            try:
                root, description = build_corpus(
                    name, sources.get(name) or default_source(name), parent)
            except Skip as skip:
                note(f"skipping {name}: {skip}")
                continue
            if args.check_gold:
                errors, missing = check_gold(name, root, queries, tool)
                n = sum(q["language"] == name for q in queries)
                print(f"{name}: {n} queries, {len(errors)} errors, "
                      f"{len(missing)} gold files missing ({description})")
                for line in errors:
                    print("  ERROR", line)
                for line in missing:
                    print("  missing", line)
                bad += len(errors)
                continue
            results[name] = evaluate(name, root, tool=tool, queries=queries,
                                     tutorial=not args.no_tutorial,
                                     description=description)
        if args.check_gold:
            return 1 if bad else 0
    except (EvalError, shared.EvalError) as exc:
        note(str(exc))
        return 2
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if not results:
        note("no language could be evaluated")
        return 2

    total = combine(results)
    if args.json:
        slim = {}
        for name, res in results.items():
            res = dict(res)
            if not args.per_query:
                res.pop("per_query")
            slim[name] = res
        slim["all"] = total
        json.dump(slim, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        for res in results.values():
            print_report(res, per_query=args.per_query)
        print_summary(total)
    try:
        saved_and_compared(results, tool, args.save, old, args.per_query,
                           sys.stderr if args.json else sys.stdout)
    except shared.EvalError as exc:
        note(str(exc))
        return 2
    return 0


def saved_and_compared(results, tool, save, old, per_query, out):
    """--save and --compare: the runs of each language and of all of them pooled."""
    pooled = [r for res in results.values() for r in res["per_query"]]
    shared.save_and_compare(
        dict(results, all={"root": "", "n_queries": len(pooled),
                           "n_evaluated": len(pooled), "per_query": pooled}),
        tool, save, old, per_query, out)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Find the definition that answers a question, with its file, lines and revision.

    code_search.py ROOT QUESTION [--top-k 2] [--json]      one shot: nothing written
    code_search.py index ROOT [--out code_index.json]      write or update the index
                         [--hidden] [--no-ignore] [--max-file-size BYTES] [--jobs N] [--dry-run]
    code_search.py search QUESTION [--index code_index.json] [--top-k 2] [--path GLOB]...
                          [--lang LANG]... [--explain] [--json]
    code_search.py symbol NAME | at PATH:LINE | trace [FILE|-] | outline PATH
    code_search.py grep PATTERN | read PATH[:START-END] | ls [PATH]
    code_search.py repos FILE [--update]                   several repositories at once
    code_search.py serve [--port 8765]                     a local page and JSON API
    code_search.py mcp [--index FILE | ROOT]               MCP server on stdin/stdout

Every command that reads an index takes --index [NAME=]FILE (repeatable: one search over
several) or --repos FILE, and --json; serve also --host.

code_search.py reads Python with the standard library's ast, and JavaScript,
TypeScript, Java, Kotlin, Go and Rust with small lexers of its own (it never imports or
runs what it indexes); it cuts them into one chunk per function, method, type and
module constant, other text files into line windows, and ranks the chunks with a
field-weighted BM25 scorer.  `index` re-reads only files whose size, mtime or SHA-256
changed, honours .gitignore, follows no symbolic links and reports each file it leaves
out on stderr as `path:line: reason`.  A hit whose file changed since indexing is
marked stale.  A folder literally named like a subcommand is reached as ./index (or
./search ...).

Exit status: 0 the command did its job (also: no hits, or an index written with some
files skipped); 1 the index or the output could not be written; 2 misuse or an
unusable index; 130 or 143 interrupted.
This file is notes_search.py's twin: the parts they share have the same names.
"""
import os
import signal
import sys

if __name__ == '__main__':     # Ctrl-C or SIGTERM while the module loads: no traceback
    for _number in (signal.SIGINT, signal.SIGTERM):     # (one ignored, as `cmd &` in a
        if signal.getsignal(_number) is not signal.SIG_IGN:   # script has it, stays so)
            signal.signal(_number, lambda number, _: os._exit(128 + number))
    del _number

import argparse
import ast
import base64
import bisect
import collections
import contextlib
import datetime
import difflib
import functools
import gc
import hashlib
import io
import itertools
import json
import math
import re
import secrets
import shlex
import stat
import threading
import time
import tokenize
import unicodedata
import warnings
import zlib
from pathlib import Path
from typing import NamedTuple

try:
    import fcntl
except ImportError:      # Windows: fall back to an exclusive lock file
    fcntl = None

# --- Settings: weights, limits and versions -------------------------------------------
# Change a weight here and the next search uses it; no re-index needed.  The limits and
# error classes below that notes_search also has carry the same names there.

TOOL = 'code_search'
__version__ = '1.1.0'
FORMAT_VERSION = 8          # layout of the index file (8: the counts compounds are mined from)
PARSER_VERSION = 24         # how files become chunks; a change re-parses every file
TOKENIZER_VERSION = 8       # how text becomes terms; a change re-parses every file
                            # (8: a dotted name is a term only as a question spells it)
RUNNING_PYTHON = '.'.join(map(str, sys.version_info[:2]))   # ast reads its grammar only:
                            # a Python file it cannot read is read again by another Python

DEFAULT_INDEX = 'code_index.json'   # notes_search's is index.json: the two never collide
DEFAULT_TOP_K = 2           # the tutorial's default
QUESTION_LIMIT = 4096       # characters of a question: a pasted message fits, a file does not
# Fields of a chunk, and how much a term found in each counts (BM25F).  The tutorial's
# order holds: symbol name above docstring above code.
FIELDS = ('name', 'scope', 'path', 'doc', 'code', 'context', 'summary')
FIELD_WEIGHTS = {
    'name': 3.0,      # last part of the symbol: total_with_tax
    'scope': 1.5,     # the enclosing class or function: Invoice
    'path': 1.0,      # the file's path: urllib/parse.py
    'doc': 2.5,       # the docstring
    'code': 0.4,      # the source lines themselves
    'context': 0.5,   # for methods: the class docstring
    'summary': 1.5,   # the docstring's first sentence, which says what the code does
}
FIELD_NUMBER = {field: number for number, field in enumerate(FIELDS)}
FIELD_LENGTH_NORMALISATION = {'name': 0.3, 'scope': 0.3, 'path': 0.3,
                              'doc': 0.75, 'code': 0.3, 'context': 0.75,
                              'summary': 0.3}
BM25_K1 = 1.2
TEST_FILE_WEIGHT = 0.5      # test code ranks lower unless the question mentions tests
TEST_DATA_LANGUAGES = frozenset({'json', 'yaml', 'toml', 'xml', 'ini', 'properties'})
                            # a test's data files (fixtures) rank as test files even when
                            # the question mentions tests: then the tests are wanted
PROSE_FILE_WEIGHT = 0.5     # so does prose (docs, README, .po) unless the question asks
                            # for it (PROSE_QUESTION_WORDS)
PROSE_LANGUAGES = frozenset({'markdown', 'rst', 'text'})   # text: .txt, no known suffix
PROSE_QUESTION_WORDS = frozenset('doc docs documentation documented readme changelog '
                                 'markdown'.split())
PATH_WORD_WEIGHT = 1.2      # a file whose path holds a question's word: json/decoder.py for json
PATH_LAYOUT_WORDS = frozenset('src lib mod index main init pkg cmd internal test'.split())
                            # ... but not one that names how a tree is laid out
GLOSSARY_WEIGHT = 0.8       # an English word reached through the Korean glossary
PHRASAL_VERB_WEIGHT = 0.8   # a word a phrasal verb is searched as (go through: iterate)
SYNONYM_WEIGHT = 0.5        # another word for a question's word (folder -> directory)
SYNONYM_POSTING_LIMIT = 22000   # a synonym found nearly everywhere is skipped (entries:
                                # the chunks and runs of chunks its posting lists)
COMPOUND_WEIGHT = 0.7       # a lowercase compound name reached through a part (dir: makedirs)
# (the next four limits and the prefixes shape the table `index` mines; change one and
# the next `index` mines it again)
COMPOUND_MIN_PART = 3       # ... whose parts are this long ...
COMPOUND_MAX_LENGTH = 20    # ... in names this long at most (longer terms are data)
COMPOUND_MIN_USES = 5       # ... and used alone in this many fields of files of the index
COMPOUND_LIMIT = 30         # compounds kept per part, the most used first
COMPOUND_PREFIXES = frozenset(('is', 'has', 'to', 'as'))   # stop words compounds begin with
PRIVATE_NAME_WEIGHT = 0.85  # private definitions (_name, `private`, Go's lowercase, Java's
                            # package access) rank lower, and so do those in private
                            # folders (INTERNAL_PATH), unless the question asks how code
                            # works (INSIDES_QUESTION)
EXPORTED_WEIGHT = 1.3       # definitions a module lists in __all__: its public API
MODULE_CODE_WEIGHT = 0.7    # a file's code outside definitions, whose docstring sums it up
METHOD_WEIGHT = 0.8         # a Python method: a question in words more often wants a function
TYPE_WEIGHT = 0.7           # a type (struct, class, interface) or a constructor named after
                            # it: a question in words more often wants what does the work
EXACT_NAME_WEIGHT = 2.0     # a definition named exactly as the question spells a name
NAME_ONLY_WORDS = 2         # ... a type or constructor only in a question of its name and
                            # this many more words: ArrayList에 ... 키우는 부분 asks inside it
RERANK_DEPTH = 300          # how many leading candidates the name weights look at
REPEATED_NAME_WEIGHT = 0.5  # a hit with the path and name of a better one (a Java overload,
                            # Rust's fmt of Display and of Debug): another answer goes first
MESSAGE_TYPE_WEIGHT = 0.5   # the type a pasted message names (or its constructor), if no
                            # literal of it is in the message: the raiser is wanted
PHRASE_WEIGHT = 2.0         # a hit with a string literal that holds, in a row, ...
PHRASE_MIN_WORDS = 4        # ... this many of the question's words (a pasted message,
                            # where more words weigh more: phrase_weight)
PHRASE_WHOLE_WORDS = 2      # ... or, in a pasted message, all of a shorter literal's
                            # words, if it has this many ('negative PUT argument'); so
                            # many words after 'SomeError: ' make it a message
PHRASE_DEPTH = 30           # how many leading candidates are read for their literals ...
PASTED_DEPTH = RERANK_DEPTH  # ... or all of them when the question looks pasted (PASTED)
PLACEHOLDER_WORDS = 4       # words a %s or {name} of a literal may stand for in a message
PLACEHOLDER_CHARS = 200     # ... or, in a message holding the whole literal, characters
WHOLE_LITERAL_TRIES = 10    # places a whole literal is looked for from (its start's first)
TRACE_CONTEXT = 3           # lines shown each side of a trace frame's line (--full: all)
INSTALLED_FOLDERS = frozenset(('site-packages', 'dist-packages'))   # a frame's path through
                            # one (or an .egg) is an installed copy, matched onto the root
                            # wherever it is

MAX_FILE_SIZE = 2 * 1024 * 1024   # larger files are skipped (--max-file-size): parsing
                                  # takes up to ~200x a file's size in memory
READ_BACK_LIMIT = 256 * 1024 * 1024  # reading an indexed file back for its lines
DEEP_PARSE_BYTES = 20000    # before Python 3.11, a Python file this long is parsed on a
DEEP_PARSE_STACK = 128      # thread with this many bytes of stack per byte of it: that
                            # parser has no depth limit and takes ~48 bytes a level, so
                            # 1+1+...+1 120,000 deep overflows a main thread's 8 MB (2 MB
                            # on Windows) and kills the process
FILES_PER_JOB = 16          # files a worker process parses at a time
PARALLEL_MIN_FILES = 64     # fewer files than this are parsed in one process
POSTING_BUCKETS = 1024      # postings live in this many strings (see Index records)
ONE_SHOT_HINT_SECONDS = 2.0       # slower one-shot builds suggest index + search
LOCK_TIMEOUT_SECONDS = 60.0
LOCK_NOTICE_SECONDS = 1.0   # a run that waits this long for the lock says so
WRITE_PIECE = 1 << 20       # an index is written in pieces of this many characters
READ_PIECE = 1 << 20        # a trace (or an MCP message too long) is read in pieces
RACY_MTIME_NS = 2 * 10 ** 9  # files changed this close to an index run are re-hashed
PROGRESS_INTERVAL = 0.2     # seconds between updates of the progress line
WORKER_WATCH_SECONDS = 0.5  # how often a worker process checks that its parent lives
SERVE_HOST, SERVE_PORT = '127.0.0.1', 8765   # serve: where it listens by default
SERVE_CLIENT_TIMEOUT = 10   # seconds a client may take to send its request
API_QUERY_LIMIT = 4096      # characters of a request's query string
API_FIELDS_LIMIT = 64       # parameters of one request
API_BODY_LIMIT = 1 << 20    # bytes of a POST body (a stack trace)
API_TOP_K, API_TOP_K_LIMIT = 10, 100   # /api/search's results: by default, at most
TRACE_LIMIT = 64 << 20      # bytes of a trace or log `trace` reads
TRACE_MESSAGE_LIMIT = 10000  # characters of a Python exception's message kept (a log's lines
                             # may follow it)
API_GREP_RESULTS = 200      # /api/grep's matches when max_results is not given
API_GREP_LIMIT = 5000       # ... and the most it may ask for
GREP_SECONDS = 10           # grep stops a pattern that searches one file this long
MCP_DEFAULT_MAX_CHARS = 20000   # clients cap a tool result near 25,000 tokens
MCP_TOP_K, MCP_TOP_K_LIMIT = 5, 50   # search_code's results: by default, at most
MCP_SKIPPED_SHOWN = 200         # index_status's skipped files, the first ones
MCP_GREP_RESULTS = 50           # grep_code's matches when max_results is not given
MCP_NOTE_ROOM = 100             # of max_chars, kept for the note that says how to get the rest
MCP_MESSAGE_LIMIT = TRACE_LIMIT  # bytes of one message (a line): a trace and its JSON

SKIP_DIRS = {'.git', '.hg', '.svn', '__pycache__', 'node_modules', '.tox',
             '.mypy_cache', '.pytest_cache'}
IGNORE_FILES = ('.gitignore', '.ignore')
LINK_REASON = 'skipped: symbolic link (not followed)'   # links are never followed
SPECIAL_REASON = 'skipped: not a regular file'   # a FIFO, socket or device: never opened
NOT_UTF8_REASON = 'skipped: name is not valid UTF-8'
LINE_BREAK_REASON = 'skipped: name holds a line break'
GONE_REASON = 'skipped: no longer there (deleted or moved)'
PERMISSION_REASON = 'skipped: permission denied'
NOT_FOUND_MESSAGE = '관련 함수를 찾지 못했습니다.'
LINES_GONE = '(the file has no such lines now, or cannot be read: run index again)'
STALE_NOTE = '  [stale: file changed since indexing; run index again]'
GONE_NOTE = '  [stale: file gone since indexing; run index again]'


class SkipFile(Exception):
    """A file that cannot be indexed; carries the line (0 if none) and the reason."""

    def __init__(self, reason, line=0):
        super().__init__(reason)
        self.reason, self.line = reason, line


class InWindows(SkipFile):
    """A file whose text can be read but not its definitions (a syntax error, code of a
    newer Python, definitions sharing long lines so much that chunks would repeat the file
    many times over): it is read in line windows instead."""


class IndexProblem(Exception):
    """An index file that cannot be used (exit status 2) or written (exit status 1)."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


class IndexOptions(NamedTuple):
    """What `index` reads and how: the command line's choices."""
    hidden: bool = False
    no_ignore: bool = False     # do not honour .gitignore and .ignore
    max_file_size: int = MAX_FILE_SIZE
    exclude: tuple = ()         # absolute paths never indexed (the index file itself)
    jobs: int = 0               # worker processes (0: one per core)
    as_before: bool = False     # the first three as the index was made (repos --update)


WALK_CHOICES = ('hidden', 'no_ignore', 'max_file_size')   # kept in the index: walked_with


def program_name():
    """The name this program was started as: this file's name, or a console script's."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ''
    this_file = sys.modules.get('__main__') is sys.modules.get(__name__)
    return name if this_file or TOOL.split('_')[0] + '-search' in name else f'{TOOL}.py'


# --- Reading files: walking the root, and what is skipped ------------------------------
# The same walk as notes_search's, which does not honour .gitignore.

class Listed(NamedTuple):
    """A path met while walking: a file to read (no reason), or one left out and
    whether that was a choice not worth reporting (quiet)."""
    relative: str
    path: str = ''
    reason: str = ''
    quiet: bool = False


def skip_record(relative, reason, line=0):
    """The index's and stderr's record of one file left out."""
    return {'path': relative, 'line': line, 'reason': reason}


def gitignore_regex(pattern):
    """One gitignore glob as a regex over '/'-separated relative paths."""
    return re.compile(glob_pattern(pattern) + r'\Z')


def parse_ignore_file(text, base):
    """Rules of one .gitignore: (base folder, regex, negated, directories only)."""
    rules = []
    for line in text.splitlines():
        if not line.strip() or line.startswith('#'):
            continue
        body = line.rstrip(' ')                     # trailing spaces, not tabs or '\ '
        if (len(body) - len(body.rstrip('\\'))) % 2:   # it ends in an escaping '\'
            if body == line:
                continue                            # escaping nothing: invalid
            body += ' '
        line = body
        negated = line.startswith('!')
        if negated:
            line = line[1:]
        elif line.startswith('\\'):
            line = line[1:]
        dir_only = line.endswith('/')
        line = line.rstrip('/')
        if not line:
            continue
        anchored = '/' in line
        line = line.lstrip('/')
        if not anchored:
            line = '**/' + line
        rules.append((base, gitignore_regex(line), negated, dir_only))
    return rules


def is_ignored(relative, is_dir, rules):
    """Whether the last matching rule ignores this path (gitignore semantics)."""
    ignored = False
    for base, regex, negated, dir_only in rules:
        if dir_only and not is_dir:
            continue
        if base:
            if not relative.startswith(base + '/'):
                continue
            inner = relative[len(base) + 1:]
        else:
            inner = relative
        if regex.match(inner):
            ignored = not negated
    return ignored


def inside_folder(path, folder):
    """Whether a normalised path is folder or below it (never across Windows drives)."""
    try:
        return os.path.commonpath([path, folder]) == os.path.normpath(folder)
    except ValueError:                              # another drive, or relative and absolute
        return False


def read_small_text(path, limit=1024 * 1024):
    """Read a small regular file such as .gitignore, or return '' if it is anything else."""
    try:
        data = read_file(path, limit)[0]
    except SkipFile:
        return ''
    return data.decode('utf-8', 'replace')


def walk_tree(root, options):
    """Yield a Listed record for every file to index under root and every path left
    out, folder by folder, each sorted.  Never follows symbolic links and opens nothing
    but folders, ignore files and the first bytes of .json files (an index of either tool
    is left out: its postings would answer questions)."""
    exclude = {os.path.normcase(os.path.realpath(p)) for p in options.exclude}
    git_exclude = os.path.join(root, '.git', 'info', 'exclude')    # below every .gitignore
    read_exclude = not options.no_ignore and inside_folder(os.path.realpath(git_exclude),
                                                           os.path.realpath(root))
    pending = [(str(root), '', parse_ignore_file(read_small_text(git_exclude), '')
                if read_exclude else [])]
    while pending:
        folder, prefix, rules = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as error:
            yield Listed(prefix or '.', reason=f'skipped: cannot list folder: {error.strerror}')
            continue
        if not options.no_ignore:
            rules = list(rules)
            for name in IGNORE_FILES:
                if any(e.name == name for e in entries):
                    rules += parse_ignore_file(
                        read_small_text(os.path.join(folder, name)), prefix.rstrip('/'))
        subfolders = []
        for entry in entries:
            relative = prefix + entry.name
            unfit = name_problem(entry.name)   # no answer, line or JSON could carry the name
            if unfit:
                relative = relative.encode('utf-8', 'backslashreplace').decode() \
                    .replace('\n', '\\n').replace('\r', '\\r')
            try:
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
            except OSError as error:
                yield Listed(relative, reason=f'skipped: cannot stat: {error.strerror}')
                continue
            if is_link:
                yield Listed(relative, reason=LINK_REASON)
                continue
            if entry.name.startswith('.') and not options.hidden:
                yield Listed(relative + '/' * is_dir, reason='hidden', quiet=True)
                continue
            if not options.no_ignore and is_ignored(relative, is_dir, rules):
                yield Listed(relative + '/' * is_dir, reason='ignored by .gitignore/.ignore',
                             quiet=True)
                continue
            if is_dir:
                if entry.name in SKIP_DIRS:
                    yield Listed(relative + '/', reason='tool or version-control folder',
                                 quiet=True)
                elif os.path.lexists(os.path.join(entry.path, 'pyvenv.cfg')):
                    yield Listed(relative + '/', reason='virtual environment (pyvenv.cfg)',
                                 quiet=True)
                elif unfit:
                    yield Listed(relative + '/', reason=unfit)
                else:
                    subfolders.append((entry.path, relative + '/', rules))
                continue
            if os.path.normcase(entry.path) in exclude:
                continue
            if is_binary_name(relative):
                yield Listed(relative, reason='not text (by its name)', quiet=True)
                continue
            try:
                regular = entry.is_file(follow_symlinks=False)
            except OSError:
                regular = False
            if not regular:
                yield Listed(relative, reason=SPECIAL_REASON)
                continue
            owner = entry.name.endswith('.json') and index_file_owner(entry.path)
            if owner:
                yield Listed(relative, reason=f'a {owner} index file', quiet=True)
                continue
            yield Listed(relative, reason=unfit) if unfit else Listed(relative, entry.path)
        pending.extend(reversed(subfolders))


def index_file_owner(path):
    """'code_search' or 'notes_search' for a file that begins as their indexes do, else ''."""
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError:
        return ''                       # then reading it says why
    try:
        owner = index_owner(os.read(fd, 256))
    except OSError:
        owner = ''
    finally:
        os.close(fd)
    return owner if owner in ('code_search', 'notes_search') else ''


def name_problem(name):
    """Why a file or folder name cannot be shown, or '': it is not UTF-8 (os.scandir hands
    other bytes on as lone surrogates), or it holds a line break (every answer names a
    file on one line)."""
    try:
        name.encode('utf-8')
    except UnicodeEncodeError:
        return NOT_UTF8_REASON
    return LINE_BREAK_REASON if '\n' in name or '\r' in name else ''


def list_tree(root, options):
    """({relative: path} of the files to index, [reported skips]) in sorted order."""
    found, skipped = {}, []
    for item in walk_tree(root, options):
        if not item.reason:
            found[item.relative] = item.path
        elif not item.quiet:
            skipped.append(skip_record(item.relative, item.reason))
    return dict(sorted(found.items())), skipped     # by path, as an index numbers them


def too_large(size, limit):
    """The reason a file of size bytes over the --max-file-size limit is left out."""
    return f'skipped: larger than --max-file-size ({size} > {limit} bytes)'


READ_FLAGS = os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0) | getattr(os, 'O_NOFOLLOW', 0) \
    | getattr(os, 'O_BINARY', 0) | getattr(os, 'O_CLOEXEC', 0)    # no link, FIFO, or wait


def read_file(path, limit):
    """(bytes, fstat) of a regular file, read through one descriptor so both agree,
    without following links or blocking on FIFOs and devices."""
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        raise SkipFile('skipped: vanished while indexing') from None
    except PermissionError:
        raise SkipFile(PERMISSION_REASON) from None
    except OSError as error:
        if os.path.islink(path):
            raise SkipFile(LINK_REASON) from None
        if not os.path.isfile(path):
            raise SkipFile(SPECIAL_REASON) from None
        raise SkipFile(f'skipped: cannot open: {error.strerror}') from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SkipFile(SPECIAL_REASON)
        if info.st_size > limit:
            raise SkipFile(too_large(info.st_size, limit))
        parts, size = [], 0
        while True:
            asked = max(info.st_size + 1 - size, 1 << 16)
            part = os.read(fd, asked)
            size += len(part)
            if size > limit:
                raise SkipFile(f'skipped: larger than --max-file-size '
                               f'(more than {limit} bytes)')
            parts.append(part)
            if not part or (len(part) < asked and size >= info.st_size):
                break                   # short only at its end (or past 2 GiB: read on)
        return b''.join(parts), info
    except OSError as error:
        raise SkipFile(f'skipped: cannot read: {error.strerror}') from None
    finally:
        os.close(fd)


# --- Chunking: files -> languages -> definitions -----------------------------------
# A file is read as one language: Python through ast, the C family through the scanner
# and the finders below, any other text in line windows.  Lines are numbered as the
# language's compilers and stack traces number them: Python ends a line at \r\n, \r and
# \n, the others at \n only (\r\n counts once).  A chunk's text is its file's lines
# start..end.

LANGUAGES = {
    '.py': 'python', '.pyi': 'python',
    '.js': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript', '.jsx': 'javascript',
    '.ts': 'typescript', '.mts': 'typescript', '.cts': 'typescript', '.tsx': 'typescript',
    '.java': 'java', '.kt': 'kotlin', '.kts': 'kotlin', '.go': 'go', '.rs': 'rust',
    '.md': 'markdown', '.markdown': 'markdown', '.rst': 'rst', '.txt': 'text',
    '.yaml': 'yaml', '.yml': 'yaml', '.json': 'json', '.toml': 'toml', '.ini': 'ini',
    '.cfg': 'ini', '.conf': 'conf', '.properties': 'properties', '.sql': 'sql',
    '.html': 'html', '.htm': 'html', '.css': 'css', '.scss': 'scss', '.sh': 'shell',
    '.bash': 'shell', '.xml': 'xml', '.proto': 'proto', '.gradle': 'gradle',
    '.tf': 'terraform',
    # code in languages without a reader here: line windows, but code, not prose
    '.c': 'c', '.h': 'c', '.cc': 'cpp', '.cpp': 'cpp', '.cxx': 'cpp', '.hh': 'cpp',
    '.hpp': 'cpp', '.hxx': 'cpp', '.cs': 'csharp', '.mm': 'objc',
    '.swift': 'swift', '.scala': 'scala', '.groovy': 'groovy', '.dart': 'dart',
    '.rb': 'ruby', '.php': 'php', '.pl': 'perl', '.pm': 'perl', '.lua': 'lua', '.r': 'r',
    '.jl': 'julia', '.ex': 'elixir', '.exs': 'elixir', '.erl': 'erlang', '.hs': 'haskell',
    '.ml': 'ocaml', '.fs': 'fsharp', '.clj': 'clojure', '.el': 'elisp', '.zig': 'zig',
    '.nim': 'nim', '.pyx': 'cython', '.vue': 'vue', '.svelte': 'svelte', '.zsh': 'shell',
    '.fish': 'shell', '.ps1': 'powershell', '.bat': 'batch', '.cmd': 'batch',
    '.cmake': 'cmake', '.mk': 'makefile',
}
FILE_NAMES = {'Dockerfile': 'dockerfile', 'Makefile': 'makefile', 'makefile': 'makefile',
              'GNUmakefile': 'makefile', 'Containerfile': 'dockerfile'}
C_FAMILY = frozenset({'javascript', 'typescript', 'java', 'kotlin', 'go', 'rust'})
# Files that are never text: left out quietly (`index --dry-run` names them).
BINARY_SUFFIXES = frozenset('''
.png .jpg .jpeg .gif .bmp .ico .webp .avif .heic .tif .tiff .psd .svgz .pdf .zip .gz .tgz
.bz2 .xz .lzma .lz4 .br .tar .7z .rar .zst .jar .war .apk .msi .class .so .o .a .dll .dylib
.pyd .exe .bin .dat .db .sqlite .sqlite3 .mmdb .dbf .shp .shx .pyc .pyo .mo .whl .egg .woff
.woff2 .ttf .otf .eot .mp3 .mp4 .m4a .aac .wav .ogg .webm .avi .mov .mkv .flac .iso .dmg
.deb .rpm .npy .npz .pkl .pickle .parquet .onnx .pt .h5 .wasm .lock.gz
'''.split())
FUNCTION_KINDS = frozenset({'function', 'method', 'constructor', 'getter', 'setter'})
TYPE_KINDS = frozenset({'class', 'interface', 'struct', 'enum', 'record', 'trait', 'object',
                        'type', 'annotation', 'union', 'impl', 'module', 'namespace'})
TYPE_LIKE_KINDS = TYPE_KINDS - {'module'} | {'constructor'}    # what TYPE_WEIGHT weighs: a
                                    # type, or a constructor, which is named after its type
WINDOW_LINES = 60           # lines in a window chunk of a text file ...
WINDOW_OVERLAP = 10         # ... of which this many are shared with the next window
LONG_LINE = 2000            # characters of a line that are indexed and shown; minified
MINIFIED_LINE = 5000        # JS/TS with a line this long ...
MINIFIED_MARKS = 100        # ... and this many ';', '{' and '}' on it is minified: read in
                            # windows (a long string or table on a line is data)
MINIFIED_LANGUAGES = frozenset({'javascript', 'typescript'})   # elsewhere it is data
NESTING_LIMIT = 200         # brackets nested deeper (16 at most in six real corpora)
CROWDED_TEXT = 16           # definitions whose lines add up to this many times their file
CROWDED_MIN_SIZE = 1 << 16  # (of this many characters at least) are read in line windows


class Definition(NamedTuple):
    """One definition found in a file (or one window of a text file); lines 1-based."""
    symbol: str
    kind: str
    start: int
    end: int
    doc: str = ''
    context: str = ''        # for a member: its type's doc
    exported: bool = False   # Python: the module's __all__ lists it
    receiver: str = ''       # Kotlin extension receiver, Go method receiver
    trait: str = ''          # Rust: the trait an impl block implements
    private: bool = False    # Java, Kotlin, TypeScript: declared `private`, or in a private type
    searched: bool = True    # False: found by symbol, at and outline, never by search


class FileChunks(NamedTuple):
    """What chunking gives of one file: its language, chunks, and why its definitions
    could not be read (then it is cut in windows), or ''."""
    language: str
    chunks: list
    note: str = ''


def language_of(relative):
    """The language of a file by its name: a code language, a text type, or ''."""
    name = relative.rpartition('/')[2]
    if name in FILE_NAMES:
        return FILE_NAMES[name]
    suffix = name[name.rfind('.'):].lower() if '.' in name[1:] else ''
    return LANGUAGES.get(suffix, '')


def is_binary_name(relative):
    """Whether a file's name says it is not text (an image, an archive, a library)."""
    name = relative.rpartition('/')[2].lower()
    return '.' in name[1:] and name[name.rfind('.'):] in BINARY_SUFFIXES


def binary_reason(data):
    """Why a file holding NUL bytes is skipped: UTF-16 text (its byte order mark, then
    16-bit units none of which is NUL) is named as such, since saving it as UTF-8 is all
    it needs."""
    if data.startswith((b'\xff\xfe', b'\xfe\xff')) and len(data) % 2 == 0 \
            and 0 not in memoryview(data).cast('H')[1:]:
        return 'skipped: UTF-16 text (save it as UTF-8 to index it)'
    return 'skipped: binary file (contains NUL bytes)'


def chunk_file(data, relative, sha256):
    """A file's bytes -> FileChunks; raises SkipFile when it cannot be read at all."""
    language = language_of(relative)
    revision = sha256[:12]
    if b'\0' in data:
        raise SkipFile(binary_reason(data), data.count(b'\n', 0, data.index(b'\0')) + 1)
    if language == 'python':
        try:
            return FileChunks('python', chunk_source(data, relative, sha256=sha256, outline=True))
        except InWindows as problem:
            lines, note = source_lines(decode_source(data)), problem.reason
    else:
        text = decode_text(data)
        lines = text_lines(text)
        note = ''
    if language in C_FAMILY:
        if language in MINIFIED_LANGUAGES and any(minified(line) for line in lines):
            note = f'a line longer than {MINIFIED_LINE} characters (minified)'
        else:
            try:
                definitions, note = c_family_definitions(text, language, relative)
                if not note:
                    return FileChunks(language, make_chunks(relative, revision, lines,
                                                            definitions))
            except InWindows as problem:
                note = problem.reason
            except Exception as error:      # a bug of a reader costs one file its names,
                note = f'its definitions could not be read ({error!r})'     # not the run
    return FileChunks(language or 'text', make_chunks(relative, revision, lines,
                                                      windows(relative, lines, language)),
                      f'{note}: indexed in line windows' if note else '')


def minified(line):
    """Whether a line of JavaScript or TypeScript is minified code (MINIFIED_LINE)."""
    return len(line) > MINIFIED_LINE and \
        line.count(';') + line.count('{') + line.count('}') >= MINIFIED_MARKS


def decode_text(data):
    """The text of a file that is not Python: UTF-8 (a BOM dropped); bytes that are not
    UTF-8 become replacement characters."""
    if data.startswith(b'\xef\xbb\xbf'):
        data = data[3:]
    return data.decode('utf-8', 'replace')


def text_lines(text):
    """A file's lines counted on \\n only, each without its \\n (and the \\r before it)."""
    lines = text.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    return [line[:-1] if line.endswith('\r') else line for line in lines]


def make_chunks(relative, revision, lines, definitions):
    """Chunk dicts of a file's definitions.  A type that holds other definitions is
    left out of search (its members are found instead), and so is a definition marked
    so (an overload signature), but symbol, at and outline find them; they come after
    the searched chunks.  Raises InWindows when the definitions would repeat the file's
    text too often (CROWDED_TEXT)."""
    crowding(lines, definitions)
    chunks = []
    holders = {(d.start, d.end, d.symbol) for d in types_with_members(definitions)}
    for definition in definitions:
        cut = LONG_LINE if definition.kind == 'window' else None
        chunks.append({'path': relative, 'symbol': definition.symbol, 'kind': definition.kind,
                       'start': definition.start, 'end': definition.end, 'revision': revision,
                       'doc': definition.doc, 'context': definition.context,
                       'exported': definition.exported, 'receiver': definition.receiver,
                       'trait': definition.trait, 'private': definition.private,
                       'searched': definition.searched and (
                           definition.start, definition.end, definition.symbol) not in holders,
                       'text': '\n'.join(line[:cut] for line in
                                         lines[definition.start - 1:definition.end])})
    return [c for c in chunks if c['searched']] + [c for c in chunks if not c['searched']]


def crowding(lines, definitions):
    """Raise InWindows when the definitions' lines add up to more than CROWDED_TEXT times
    the file: many definitions sharing long lines, each of which would index and hold
    the whole line again (generated or hostile code, such as 60000 functions on one)."""
    ends = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    last = len(lines)
    text = sum(ends[min(d.end, last)] - ends[min(d.start, last + 1) - 1] for d in definitions)
    if text > CROWDED_TEXT * max(ends[-1], CROWDED_MIN_SIZE):
        raise InWindows(f'its definitions repeat its text more than {CROWDED_TEXT} times '
                        f'(many on shared long lines)')


def types_with_members(definitions):
    """The type definitions that declare functions of their own: a method, constructor
    or function named after the type and inside it (not those of a nested type)."""
    types = {}
    for definition in definitions:
        if definition.kind in TYPE_KINDS:
            types.setdefault(definition.symbol, []).append(definition)
    holders = []
    for definition in definitions:
        if definition.kind in FUNCTION_KINDS:
            for parent in types.get(definition.symbol.rpartition('.')[0], ()):
                if parent.start <= definition.start and definition.end <= parent.end \
                        and parent not in holders:
                    holders.append(parent)
    return holders


def module_runs(code_lines, covered, line_count):
    """(start, end) of the runs of lines holding code (a set of line numbers) outside
    every definition (covered: a set of line numbers): a file's module-level code."""
    runs, start = [], None
    for number in range(1, line_count + 2):
        inside = number in covered or number > line_count
        if not inside and number in code_lines:
            if start is None:
                start = number
            end = number
        elif inside and start is not None:
            runs.append((start, end))
            start = None
    return runs


# --- Chunking: Python, read with ast -----------------------------------------------

LINE_BREAK_BYTES = re.compile(rb'\r\n|\r|\n')
PARSE_THREAD_LOCK = threading.Lock()    # see parse_deep
# Definitions live only in statement lists, so the walk visits just these fields, in
# the order ast lists them (the tutorial's NodeVisitor order).
STATEMENT_FIELDS = ('body', 'handlers', 'orelse', 'finalbody', 'cases')
COMPOUND_STATEMENTS = frozenset(getattr(ast, name) for name in (
    'FunctionDef', 'AsyncFunctionDef', 'ClassDef', 'If', 'For', 'AsyncFor', 'While', 'Try',
    'TryStar', 'With', 'AsyncWith', 'Match', 'ExceptHandler', 'match_case')
    if hasattr(ast, name))
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
CONSTANT_NAME = re.compile(r'_*[A-Z][A-Z0-9_]*\Z')


def first_two_lines(data):
    """The first two lines, each ending in \\n, whatever line breaks the file uses."""
    lines, start = [], 0
    for match in LINE_BREAK_BYTES.finditer(data):
        lines.append(data[start:match.start()] + b'\n')
        start = match.end()
        if len(lines) == 2:
            return lines
    return lines + [data[start:]]


def decode_source(data):
    """Decode bytes as Python does: BOM, then PEP 263 coding cookie, else UTF-8."""
    second_line_end = data.find(b'\n', data.find(b'\n') + 1)
    if not data.startswith(b'\xef\xbb\xbf') and b'coding' not in (
            data if second_line_end < 0 else data[:second_line_end]):
        try:
            return data.decode('utf-8')      # no BOM, no cookie: the tokenizer's default
        except UnicodeDecodeError:
            pass                             # the tokenizer's way says what is wrong
    lines = iter(first_two_lines(data))
    try:
        encoding, _ = tokenize.detect_encoding(lambda: next(lines, b''))
    except SyntaxError as error:
        raise SkipFile(f'cannot decode: {getattr(error, "msg", error)}',
                       getattr(error, 'lineno', 0) or 0) from None
    try:
        with warnings.catch_warnings():          # odd codecs warn about escapes
            warnings.simplefilter('ignore')
            return data.decode(encoding)
    except (ValueError, LookupError, TypeError) as error:     # UnicodeError and kin
        start = getattr(error, 'start', 0)
        line = len(LINE_BREAK_BYTES.findall(data, 0, start)) + 1
        raise SkipFile(f'cannot decode as {encoding}', line) from None


def source_lines(text):
    """Split lines only at \\r\\n, \\r and \\n, as Python's tokenizer does."""
    lines = text.replace('\r\n', '\n').replace('\r', '\n').split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    return lines


def parse_source(data, filename, strict=False):
    """ast.parse the bytes; every way the parser can fail becomes one SkipFile (InWindows
    for text it cannot read as Python: a syntax error, or syntax of a newer Python than
    the one running), unless strict (the tutorial's API), which lets SyntaxError through."""
    try:
        return parse_deep(data, filename)
    except SyntaxError as error:
        if strict:
            raise
        raise InWindows(f'syntax error on line {error.lineno or 0}: {error.msg}') from None
    except ValueError as error:
        raise SkipFile(f'cannot parse: {error}') from None
    except (RecursionError, MemoryError):
        raise InWindows('nested too deeply for the parser') from None


def parse_deep(data, filename):
    """ast.parse, quietly; before Python 3.11 a long file on a thread whose stack holds
    as deep a tree as the file can nest (DEEP_PARSE_STACK), since there the parser's
    C recursion has no limit and would crash the process instead of raising."""
    def parse():
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            return ast.parse(data, filename=filename)

    if sys.version_info >= (3, 11) or len(data) < DEEP_PARSE_BYTES:
        return parse()
    outcome = []

    def run():
        try:
            outcome.append(parse())
        except BaseException as error:     # handed to the caller's thread
            outcome.append(error)
    with PARSE_THREAD_LOCK:         # the stack size is the interpreter's, for new threads
        size = max(len(data) * DEEP_PARSE_STACK, 32 << 20)
        previous = threading.stack_size(-(-size // (1 << 20)) << 20)   # whole MiB: pages
        try:
            thread = threading.Thread(target=run, daemon=True)
            thread.start()
        except RuntimeError:        # no memory for the stack
            raise MemoryError from None
        finally:
            threading.stack_size(previous)
    thread.join()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def python_definitions(tree, line_count):
    """(the tutorial's definitions, the outline's) of a parsed file.

    The tutorial's, walked iteratively (no recursion limit): functions and methods in
    source order (outer before inner), classes with no methods and module-level
    UPPER_CASE constants, each marked exported when the module's __all__ lists it.
    The outline adds the classes that have methods, and each run of module-level code
    outside every definition (imports, top-level statements) as '<module>'.
    """
    tutorial, classes = [], []
    top_level = {id(node) for node in getattr(tree, 'body', ())}
    exports = exported_names(tree)
    # (node, enclosing names, class docstring or None, inside an exported class)
    pending = [(tree, (), None, False)]
    while pending:
        node, scope, class_doc, exported = pending.pop()
        inner_scope, inner_doc = scope, class_doc
        if isinstance(node, DEFINITIONS):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            end = node.end_lineno or node.lineno
            symbol = '.'.join(scope + (node.name,))
            doc = ast.get_docstring(node) or ''
            exported = exported or (not scope and node.name in exports)
            if isinstance(node, ast.ClassDef):
                inner_doc = doc
                methods = any(isinstance(child, DEFINITIONS[:2]) for child in node.body)
                (classes if methods else tutorial).append(
                    Definition(symbol, 'class', start, end, doc, exported=exported))
            else:
                kind = 'function' if class_doc is None else 'method'
                tutorial.append(Definition(symbol, kind, start, end, doc, class_doc or '',
                                           exported))
                inner_doc, exported = None, False
            inner_scope = scope + (node.name,)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and id(node) in top_level:
            name = constant_name(node)
            if name:
                tutorial.append(Definition(name, 'constant', node.lineno,
                                           node.end_lineno or node.lineno,
                                           exported=name in exports))
        children = [child for field in STATEMENT_FIELDS for child in getattr(node, field, ())
                    if type(child) in COMPOUND_STATEMENTS or id(child) in top_level]
        pending.extend((child, inner_scope, inner_doc, exported)
                       for child in reversed(children))
    return tutorial, classes + module_definitions(tree, line_count)


def module_definitions(tree, line_count):
    """'<module>' definitions of the runs of module-level code outside every definition;
    the first holds the module's docstring."""
    code, covered = set(), set()
    for node in getattr(tree, 'body', ()):
        first = min([node.lineno] + [d.lineno for d in getattr(node, 'decorator_list', ())])
        lines = range(first, (node.end_lineno or node.lineno) + 1)
        if isinstance(node, DEFINITIONS) or (isinstance(node, (ast.Assign, ast.AnnAssign))
                                             and constant_name(node)):
            covered.update(lines)
        else:
            code.update(lines)
    doc = ast.get_docstring(tree) or ''
    return [Definition('<module>', 'module', start, end, doc if number == 0 else '')
            for number, (start, end) in enumerate(module_runs(code, covered, line_count))]


def exported_names(tree):
    """The names a module lists in __all__ (=, += or .extend of a literal list or tuple of
    strings, .append of one string).

    A module whose __all__ is computed exports nothing we can know, so none count.
    """
    names = set()
    for node in getattr(tree, 'body', ()):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is None or not any(
                    isinstance(target, ast.Name) and target.id == '__all__'
                    for target in targets):
                continue      # not __all__, or only an annotation: __all__: list[str]
            listed = string_literals(node.value)
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Attribute)
              and isinstance(node.value.func.value, ast.Name)
              and node.value.func.value.id == '__all__'
              and node.value.func.attr in ('extend', 'append')
              and len(node.value.args) == 1):
            argument = node.value.args[0]
            listed = (string_literals(argument) if node.value.func.attr == 'extend'
                      else string_literals(ast.List(elts=[argument])))
        else:
            continue
        if listed is None:
            return set()
        names.update(listed)
    return names


def string_literals(node):
    """The strings of a literal list or tuple of strings, or of a sum of them; None for
    anything computed."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = string_literals(node.left), string_literals(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(element, ast.Constant) and isinstance(element.value, str)
            for element in node.elts):
        return [element.value for element in node.elts]
    return None


def constant_name(node):
    """The UPPER_CASE name a module-level assignment binds, or ''."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if isinstance(node, ast.AnnAssign) and node.value is None:
        return ''
    for target in targets:
        if isinstance(target, ast.Name) and CONSTANT_NAME.match(target.id):
            return target.id
    return ''


def chunk_source(data, relative, strict=False, sha256=None, outline=False):
    """Bytes of one Python file -> its chunks: the tutorial's, and with outline also the
    outline's (see python_definitions).  Raises SkipFile when it cannot be read as
    Python; sha256 is the data's hex digest when the caller has it already."""
    text = decode_source(data)
    tree = parse_source(data, relative, strict)
    revision = (sha256 or hashlib.sha256(data).hexdigest())[:12]
    lines = source_lines(text)
    try:
        tutorial, extras = python_definitions(tree, len(lines))
    except (RecursionError, MemoryError):
        raise InWindows('nested too deeply to walk') from None
    return make_chunks(relative, revision, lines, tutorial + extras if outline else tutorial)


def index_file(path, root):
    """The tutorial's API: chunks of one file; raises SyntaxError for broken code."""
    path, root = Path(path), Path(root)
    return chunk_source(path.read_bytes(), path.relative_to(root).as_posix(), strict=True)


# --- Chunking: the C family's scanner -----------------------------------------------
# One pass over a file blanks its strings, chars, template literals' text, regex
# literals, JSX text and comments (keeping line breaks), and pairs its brackets.  The
# finders then read declarations from the blanked text: a block's header is the text
# from the statement boundary before its '{' to the '{'.

class Decl(NamedTuple):
    """One declaration a finder found: offsets into the text, its dotted name, kind."""
    name: str            # the whole symbol: 'Outer.run.<anonymous>.run'
    kind: str            # function, method, constructor, getter, setter, class, ...
    start: int           # offset of its first character (annotations, modifiers)
    end: int             # offset of its last character ('}', ';' or its expression's)
    body: tuple = None   # (open, close) offsets of its braces when it has a body
    scope: bool = False  # whether definitions inside it are named after it
    receiver: str = ''   # Kotlin extension receiver, Go method receiver
    trait: str = ''      # Rust: the trait an impl block (and so its methods) implements
    has_body: bool = True


class Scan(NamedTuple):
    """A file's text with strings, chars, templates, regex literals and comments
    blanked (newlines kept), its bracket pairs, and its comments."""
    text: str
    masked: str
    pairs: dict          # offset of each ( [ { -> offset of its closer
    comments: list       # (start, end) offsets of each comment
    line_starts: list    # offset of the first character of each line
    ok: bool             # every bracket closed, no string left open
    literals: list = ()  # (start, end) of each string, template, regex and JSX element


# Per language: line comment, whether block comments nest, the characters that start
# strings, and extras: 'template' (JS backquote with ${}), 'raw' (Go backquote),
# 'rust' (raw strings, lifetimes), 'textblock' (""" strings), 'kotlin' ($ templates),
# 'regex' (JS regex literals), 'jsx', 'backtick' (Kotlin `quoted names`: their insides
# are blanked, the backquotes kept, so a `name with (` pairs no brackets).
LEXERS = {
    'java': {'nested': False, 'features': {'char', 'textblock'}},
    'kotlin': {'nested': True, 'features': {'char', 'textblock', 'kotlin', 'backtick'}},
    'go': {'nested': False, 'features': {'char', 'raw'}},
    'rust': {'nested': True, 'features': {'rust'}},
    'javascript': {'nested': False, 'features': {'template', 'regex', 'jsx', 'squote'}},
    'typescript': {'nested': False, 'features': {'template', 'regex', 'squote'}},
    'tsx': {'nested': False, 'features': {'template', 'regex', 'jsx', 'squote'}},
}
SPECIAL = {
    'java': re.compile(r'["\'/(){}\[\]]'),
    'kotlin': re.compile(r'["\'`/(){}\[\]]'),
    'go': re.compile(r'["\'`/(){}\[\]]'),
    'rust': re.compile(r'(?<![\w])b?r#*"|["\'/(){}\[\]]'),
    'javascript': re.compile(r'["\'`/(){}\[\]<]'),
    'typescript': re.compile(r'["\'`/(){}\[\]]'),
    'tsx': re.compile(r'["\'`/(){}\[\]<]'),
}
CLOSERS = {')': '(', ']': '[', '}': '{'}
SHEBANG = re.compile(r'#!(?!\s*\[).*')     # a script's first line, not Rust's #![attribute]
STRING_BODY = {'"': re.compile(r'(?:[^"\\\n]|\\.)*', re.S), "'": re.compile(r"(?:[^'\\\n]|\\.)*", re.S),
               'rust': re.compile(r'(?:[^"\\]|\\.)*', re.S)}   # Rust strings may span lines
JAVA_CHAR = re.compile(r"'(?:[^'\\\n]|\\.[^'\n]*?)'")
RUST_CHAR = re.compile(r"'(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]{1,8}\}|.))'")
TEMPLATE_PART = re.compile(r'(?:[^`\\$]|\\.|\$(?!\{))*', re.S)
KOTLIN_STRING_PART = re.compile(r'(?:[^"\\$\n]|\\.|\$(?!\{))*', re.S)
KOTLIN_RAW_PART = re.compile(r'(?:[^"$]|"(?!"")|\$(?!\{))*', re.S)
REGEX_BODY = re.compile(r'(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[A-Za-z]*')
REGEX_PARTS = re.compile(r'\\.|\[(?:[^\]\\]|\\.)*\]')
CONTROL_HEADS = frozenset('if while for with'.split())
REGEX_KEYWORDS = frozenset('return typeof case in of delete void throw new else do yield '
                           'await instanceof'.split())
WORD_BEFORE = re.compile(r'[\w$]+$')
WORD_WINDOW = 64         # longest word previous_significant looks back for
JSX_START = re.compile(r'<(?:[A-Za-z][\w.:-]*|>)')
JSX_AFTER = frozenset('(,=:?&|!{[;}>') | {''}
MAX_JSX_DEPTH = 100     # JSX elements in {expressions} of JSX deeper than this are code
GENERIC_ARROW = re.compile(r'<\s*[A-Za-z_$][\w$]*\s*(?:,|extends\b)')


def line_starts_of(text):
    return [0] + [m.end() for m in re.finditer('\n', text)]


def line_of(scan, offset):
    """1-based line number of an offset."""
    return bisect.bisect_right(scan.line_starts, offset)


def blank(text):
    """Spaces in place of every character but line breaks."""
    if '\n' not in text:
        return ' ' * len(text)
    return '\n'.join(' ' * len(part) for part in text.split('\n'))


def previous_significant(text, position):
    """The non-space character before position (after skipping spaces), and the word
    ending there if it is one."""
    i = position - 1
    while i >= 0 and text[i] in ' \t\r\n':
        i -= 1
    if i < 0:
        return '', ''
    char = text[i]
    if char.isalnum() or char in '_$':
        word = WORD_BEFORE.search(text, max(0, i - WORD_WINDOW), i + 1)
        return char, word.group() if word else char
    return char, ''


NESTED_COMMENT = re.compile(r'/\*|\*/')
TEXT_BLOCK_END = re.compile(r'(?:[^"\\]|\\.|"(?!""))*"""', re.S)
JSX_TAG = re.compile(r'<(/?)([A-Za-z][\w.:-]*)?')
JSX_ATTRS = re.compile(r'''(?:[^>{"'/]|/(?!>)|"[^"]*"|'[^']*')*''')
JSX_TEXT = re.compile(r'[^<{]*')


class Scanning(NamedTuple):
    """What a scan collects as it goes."""
    text: str
    language: str
    blanks: list         # (start, end) spans to blank
    comments: list       # (start, end) of comments
    pairs: dict          # opener offset -> closer offset
    problems: list       # offsets where the scan lost the thread
    literals: list       # (start, end) of strings, templates, regex literals, JSX
    closed_parens: dict  # offset of each ')' -> offset of its '('
    failed: dict         # 'regex' or 'jsx' -> offset before which a '/' or '<' is not
                         # taken for one again: a guess that failed read up to there
    unclosed: dict       # per kind of string, where the scan of one that did not close
                         # stopped (string_close)


def scan(text, language):
    """Scan text in one pass: blank strings, chars, templates' literal parts, regex
    literals, JSX text and comments, and pair brackets.  A wrong guess where the
    grammar is ambiguous (regex against division, < of JSX against less-than) is
    confined to its line: a regex literal or a string must close on the line it starts."""
    found = Scanning(text, language, [], [], {}, [], [], {}, {}, {})
    shebang = SHEBANG.match(text)
    if shebang:                     # blank, but no doc comment of what follows it
        found.blanks.append((0, shebang.end()))
    scan_code(found, shebang.end() if shebang else 0, False)
    return Scan(text, mask(text, found.blanks), found.pairs, found.comments,
                line_starts_of(text), not found.problems, sorted(found.literals))


def scan_code(found, position, one_brace, level=0):
    """Scan code from position to the end of the text, or, when one_brace, to just
    after the '}' that closes the '{' at position - 1.  Returns where it stopped.
    level counts the JSX elements it is inside.  The first problem ends the scan: such
    a file is read in line windows, and going on could cost time in the square of its
    length (each stray closer would search the whole stack)."""
    text, language = found.text, found.language
    features, nested = LEXERS[language]['features'], LEXERS[language]['nested']
    special, blanks, pairs = SPECIAL[language], found.blanks, found.pairs
    stack = [('{', position - 1)] if one_brace else []
    length = len(text)
    while not found.problems:
        match = special.search(text, position)
        if not match:
            break
        start = match.start()
        char = text[start]
        position = start + 1
        if char in '([{':
            stack.append((char, start))
        elif char in ')]}':
            if char == '}' and stack and stack[-1][0] in ('`', '"', '"""'):
                kind, origin = stack.pop()
                position = resume_string(found, stack, kind, start, position, origin)
                continue
            opener = CLOSERS[char]
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth][0] == opener:
                    del stack[depth + 1:]
                    opened = stack.pop()[1]
                    pairs[opened] = start
                    if char == ')':
                        found.closed_parens[start] = opened
                    break
                if stack[depth][0] in ('`', '"', '"""'):
                    found.problems.append(start)
                    break
            else:
                found.problems.append(start)
            if one_brace and not stack:
                return position
        elif char == '/':
            following = text[start + 1:start + 2]
            if following == '/':
                end = text.find('\n', start)
                position = length if end < 0 else end
                found.comments.append((start, position))
                blanks.append((start, position))
            elif following == '*':
                if nested:
                    depth, position = 1, start + 2
                    while depth:
                        nxt = NESTED_COMMENT.search(text, position)
                        if not nxt:
                            position = length
                            found.problems.append(start)
                            break
                        depth += 1 if nxt.group() == '/*' else -1
                        position = nxt.end()
                else:
                    end = text.find('*/', start + 2)
                    if end < 0:
                        found.problems.append(start)
                    position = length if end < 0 else end + 2
                found.comments.append((start, position))
                blanks.append((start, position))
            elif 'regex' in features and start >= found.failed.get('regex', 0):
                previous, word = previous_significant(text, start)
                if (not word and previous in '(,=:[!&|?{};+-*%<>~^') or word in REGEX_KEYWORDS \
                        or (previous == ')' and after_control_head(found, start)):
                    body = REGEX_BODY.match(text, start + 1)
                    if body and balanced_regex(body.group()):
                        blanks.append((start, body.end()))
                        found.literals.append((start, body.end()))
                        position = body.end()
                    else:
                        found.failed['regex'] = line_end(text, start)
        elif char == '"':
            if 'textblock' in features and text.startswith('"""', start):
                if 'kotlin' in features:
                    position = resume_string(found, stack, '"""', start, start + 3)
                    continue
                end = TEXT_BLOCK_END.match(text, start + 3)
                if not end:
                    found.problems.append(start)
                position = end.end() if end else length
                blanks.append((start, position))
                found.literals.append((start, position))
            elif 'kotlin' in features:
                position = resume_string(found, stack, '"', start, start + 1)
            else:
                end = string_close(found, 'rust' if 'rust' in features else '"', start)
                position = end or line_end(text, start)
                blanks.append((start, position))
                found.literals.append((start, position))
        elif char == "'":
            if 'squote' in features:
                end = string_close(found, "'", start)
                position = end or line_end(text, start)
                blanks.append((start, position))
                found.literals.append((start, position))
            elif 'rust' in features:
                end = RUST_CHAR.match(text, start)
                if end:      # else a lifetime or a loop label ('a): left as it is
                    position = end.end()
                    blanks.append((start, position))
            else:
                end = JAVA_CHAR.match(text, start)
                position = end.end() if end else start + 1
                blanks.append((start, position))
        elif char == '`':
            if 'backtick' in features:
                end = text.find('`', start + 1, line_end(text, start))
                if end >= 0:
                    blanks.append((start + 1, end))
                    position = end + 1
            elif 'raw' in features:
                end = text.find('`', start + 1)
                if end < 0:
                    found.problems.append(start)
                position = length if end < 0 else end + 1
                blanks.append((start, position))
                found.literals.append((start, position))
            else:
                position = resume_string(found, stack, '`', start, start + 1)
        elif char == '<':
            previous, word = previous_significant(text, start)
            if ((previous in JSX_AFTER and not word) or word == 'return') \
                    and JSX_START.match(text, start) and not GENERIC_ARROW.match(text, start) \
                    and level < MAX_JSX_DEPTH and start >= found.failed.get('jsx', 0):
                position = skip_jsx(found, start, level + 1)
        else:   # a Rust raw or byte raw string: r"...", r#"..."#, br#"..."#
            hashes = match.group().count('#')
            end = text.find('"' + '#' * hashes, match.end())
            if end < 0:
                found.problems.append(start)
            position = length if end < 0 else end + 1 + hashes
            blanks.append((start, position))
            found.literals.append((start, position))
    if stack:
        found.problems.append(length)
    return length


def balanced_regex(body):
    """Whether body (what follows a '/' up to a second '/' on its line, and flags)
    can be a regex literal's: its groups balance.  When they do not, the '/' is a
    division, and taking it for a regex would have cost more than its line."""
    depth = 0
    for char in REGEX_PARTS.sub('', body):
        if char in '()':
            depth += 1 if char == '(' else -1
            if depth < 0:
                return False
    return depth == 0


def after_control_head(found, slash):
    """Whether the ')' before the '/' at slash closes the head of an if, while, for or
    with statement (where a statement, so a regex literal, starts)."""
    close = found.text.rindex(')', 0, slash)
    opener = found.closed_parens.get(close)
    return opener is not None and previous_significant(found.text, opener)[1] in \
        CONTROL_HEADS


def string_close(found, kind, start):
    """The offset after the closing quote of the string that opens at start (kind: a
    STRING_BODY key), or None when it does not close.  In linear time: found.unclosed
    keeps, per kind, where the scan of one that did not close stopped; one that opens
    before there does not close either (its quote was escaped), so it is not scanned."""
    if start < found.unclosed.get(kind, -1):
        return None
    end = STRING_BODY[kind].match(found.text, start + 1).end()
    if found.text.startswith('"' if kind == 'rust' else kind, end):
        return end + 1
    found.unclosed[kind] = end
    return None


def line_end(text, position):
    end = text.find('\n', position)
    return len(text) if end < 0 else end


def resume_string(found, stack, kind, start, position, origin=None):
    """Go on with a template (kind '`') or a Kotlin string ('"' or triple quotes) from
    position; returns the position after it, or, at a ${, pushes it on the stack (with
    origin, where the whole string starts) and returns the position after the '${'."""
    text, length, blanks = found.text, len(found.text), found.blanks
    origin = start if origin is None else origin
    if kind == '`':
        position = TEMPLATE_PART.match(text, position).end()
    elif kind == '"':
        position = KOTLIN_STRING_PART.match(text, position).end()
    else:
        position = KOTLIN_RAW_PART.match(text, position).end()
    if text.startswith('${', position):
        blanks.append((start, position + 2))
        stack.append((kind, origin))
        return position + 2
    if kind == '"""':
        end = text.find('"""', position)
        end = length if end < 0 else end + 3
        while end < length and text[end] == '"':   # five quotes end at the last one
            end += 1
    elif kind == '"':
        end = position + 1 if text.startswith('"', position) else position
    else:
        end = min(position + 1, length)
    blanks.append((start, end))
    found.literals.append((origin, end))
    return end


def skip_jsx(found, start, level=1):
    """The position after the JSX element that starts at start (a tag or a fragment):
    its text and attributes are blanked, the code in its {braces} is scanned as code.
    When what follows is not markup after all, a less-than: start + 1 (and no '<' up
    to where that showed is taken for markup again, so none is read twice)."""
    text, length = found.text, len(found.text)
    depth, position, mark, spans = 0, start, start, []

    def expression(position):       # {code}: blank up to it, scan it, go on after it
        nonlocal mark
        spans.append((mark, position + 1))
        end = scan_code(found, position + 1, True, level)
        spans.append((end - 1, end))
        mark = end
        return end

    while position < length:
        tag = JSX_TAG.match(text, position)
        if tag:
            position = JSX_ATTRS.match(text, tag.end()).end()
            while text.startswith('{', position):    # an attribute's {expression}
                position = JSX_ATTRS.match(text, expression(position)).end()
            if text.startswith('/>', position):
                position += 2
            elif text.startswith('>', position):
                position += 1
                depth += -1 if tag.group(1) else 1
            else:
                found.failed['jsx'] = position
                return start + 1
            if depth <= 0:
                break
        elif text.startswith('{', position):
            position = expression(position)
        else:
            position = JSX_TEXT.match(text, position).end()
    spans.append((mark, position))
    found.blanks.extend(spans)
    found.literals.append((start, position))
    return position


def mask(text, blanks):
    """text with the given spans blanked (they may nest or overlap)."""
    pieces, position = [], 0
    for start, end in sorted(blanks):
        if end <= position:
            continue
        start = max(start, position)
        pieces.append(text[position:start])
        pieces.append(blank(text[start:end]))
        position = end
    pieces.append(text[position:])
    return ''.join(pieces)


class Block(NamedTuple):
    """A {...} block: offsets of its braces, and its child blocks in order."""
    open: int
    close: int
    children: list


def block_tree(scan):
    """The top-level blocks of a scan, each with its children (a file's {...} blocks)."""
    opens = sorted(o for o, c in scan.pairs.items() if scan.text[o] == '{')
    root = Block(-1, len(scan.text), [])
    stack = [root]
    for o in opens:
        close = scan.pairs[o]
        while stack[-1].close < o:
            stack.pop()
        block = Block(o, close, [])
        stack[-1].children.append(block)
        stack.append(block)
    return root


MARKS = re.compile(r'[;{}\])]')


class Structure:
    """What the finders ask of a scanned file: blocks, openers of closers, and where a
    statement that ends at a given offset starts."""

    def __init__(self, scanned):
        self.scanned, self.masked, self.pairs = scanned, scanned.masked, scanned.pairs
        self.closers = {c: o for o, c in scanned.pairs.items()}
        self.marks = [m.start() for m in MARKS.finditer(self.masked)]
        self.root = block_tree(scanned)

    def statement_start(self, start, end, boundaries=';{}'):
        """The offset of the first non-space character after the last boundary
        character before end (not counting the contents of (...) and [...]) and not
        before start: where the statement that ends at end begins."""
        marks, masked, closers = self.marks, self.masked, self.closers
        place = bisect.bisect_left(marks, end) - 1
        position = start
        while place >= 0 and marks[place] >= start:
            mark = marks[place]
            char = masked[mark]
            if char in boundaries:
                position = mark + 1
                break
            if char in ')]':
                opener = closers.get(mark)
                if opener is not None and opener >= start:
                    place = bisect.bisect_left(marks, opener) - 1
                    continue
            place -= 1
        while position < end and masked[position] in ' \t\r\n':
            position += 1
        return position


def nesting_depth(pairs):
    """How deep the brackets of a scan nest (a name is as long as its definition is
    deep: thousands of nested functions would cost time in the square of their count)."""
    steps = sorted([(opener, 1) for opener in pairs] + [(closer, -1) for closer in
                                                        pairs.values()])
    depth = deepest = 0
    for _, step in steps:
        depth += step
        deepest = max(deepest, depth)
    return deepest


def c_family_definitions(text, language, relative):
    """(definitions, '') of a C-family file, or ([], why) when the scanner lost its
    thread (a bracket, string or comment that does not close)."""
    if language not in FINDERS:
        return [], f'no reader for {language} yet'
    lexer = 'tsx' if relative.endswith('.tsx') else language
    scanned = scan(text, lexer)
    if not scanned.ok:
        return [], 'its brackets, strings or comments do not balance'
    if nesting_depth(scanned.pairs) > NESTING_LIMIT:
        return [], f'its brackets nest more than {NESTING_LIMIT} deep'
    decls = FINDERS[language](scanned)
    docs = DocComments(scanned, language)
    found, types, bodiless = [], [], set()     # bodiless: positions in found
    for decl in sorted(decls, key=lambda d: (d.start, -d.end)):
        start, end = line_of(scanned, decl.start), line_of(scanned, decl.end)
        while types and types[-1].end < start:
            types.pop()
        in_interface = bool(types) and types[-1].kind in IMPLICITLY_PUBLIC
        private = declared_private(scanned, decl, language == 'java' and not in_interface) \
            or bool(types and types[-1].private)
        found.append(Definition(decl.name, decl.kind, start, end, docs.before(decl.start),
                                types[-1].doc if types else '', receiver=decl.receiver,
                                trait=decl.trait, private=private))
        if not decl.has_body:
            bodiless.add(len(found) - 1)
        if decl.kind in TYPE_KINDS:
            types.append(found[-1])
    if language == 'typescript':
        found = overloads_folded(found, bodiless)
    covered = {line for d in found for line in range(d.start, d.end + 1)}
    code = {line_of(scanned, m.start()) for m in CODE_CHARACTER.finditer(scanned.masked)}
    found += [Definition('<module>', 'module', start, end, docs.inner if number == 0 else '')
              for number, (start, end) in enumerate(module_runs(
                  code, covered, len(scanned.line_starts)))]
    return found, ''


def overloads_folded(definitions, bodiless):
    """TypeScript definitions with the overload signatures left out of search: each
    function or method without a body (its position in bodiless) that one of the same
    name with a body follows.  Search finds that implementation instead, which takes the
    signatures' doc comments when it has none of its own."""
    implementation = {d.symbol: d for i, d in enumerate(definitions) if i not in bodiless}
    folded, docs = list(definitions), {}
    for i in sorted(bodiless):
        d = definitions[i]
        body = implementation.get(d.symbol)
        if d.kind in FUNCTION_KINDS and body and body.start > d.start:
            folded[i] = d._replace(searched=False)
            if d.doc:
                docs.setdefault(d.symbol, []).append(d.doc)
    for i, d in enumerate(folded):
        if d is implementation.get(d.symbol) and not d.doc and d.symbol in docs:
            folded[i] = d._replace(doc='\n\n'.join(docs[d.symbol]))
    return folded


def declared_private(scanned, decl, package_private=False):
    """Whether a declaration's modifiers, before its name, say `private` (Java, Kotlin,
    TypeScript; Go and Rust have no such word) or Kotlin's `internal`: `class HttpUrl
    private constructor(` declares a public class.  With package_private (Java outside
    an interface), saying neither `public` nor `protected` is private too: Java's
    default access keeps a declaration inside its package, out of the API."""
    end = decl.body[0] if decl.body else decl.end
    start = skip_annotations(scanned.masked, scanned.pairs, decl.start, end)
    stop = HEAD_STOP.search(scanned.masked, start, end)   # (not a slice to end: nested
    head = scanned.masked[start:stop.start() if stop else end]     # declarations' ends)
    name = decl.name.rpartition('.')[2]
    named = next((word.start() for word in NAME_WORD.finditer(head) if word.group() == name),
                 len(head))
    if PRIVATE_MODIFIER.search(head, 0, named):
        return True
    return package_private and not PUBLIC_MODIFIER.search(head, 0, named)


PRIVATE_MODIFIER = re.compile(r'(?<![\w$.])(?:private|internal)(?![\w$])')   # internal:
                                            # Kotlin's, seen only inside its own module
PUBLIC_MODIFIER = re.compile(r'(?<![\w$.])(?:public|protected)(?![\w$])')
IMPLICITLY_PUBLIC = frozenset({'interface', 'annotation'})   # Java types whose members
                                                             # are public when they say nothing
HEAD_STOP = re.compile(r'[(={]')
NAME_WORD = re.compile(r'[\w$]+')
CODE_CHARACTER = re.compile(r'\S+')
COMMENT_MARKS = re.compile(r'^\s*(?:/\*+|\*+/?|//+!?)?[ \t]?', re.M)
EXAMPLES = re.compile(r'^[ \t]*```.*?^[ \t]*```[^\n]*', re.M | re.S)   # in ``` fences: an
                            # example's code is not what the definition does
DOC_MARKUP = re.compile(r'''(?=[{@<&])(?:  # (the look-ahead skips plain text fast)
    \{@\w+                                     # {@code x}, {@link Map#get}: x, Map#get stay
  | (?<![\w@])@(?:author|since|version|serial)\b.*    # who and when, not what
  | (?<![\w@])@\w+                             # @param, @return, @throws: their words stay
  | </?(?:a|b|big|blockquote|br|caption|cite|code|dd|div|dl|dt|em|h[1-6]|hr|i|img|kbd|li
         |ol|p|pre|small|span|strong|sub|sup|table|tbody|td|th|thead|tr|tt|u|ul|var)
    (?:\s+[\w-]+\s*=[^<>]*)?\s*/?>             # <p>, <a href="...">, <br/>; not Vec<A: Alloc>
  | &\#?\w+;                                   # &nbsp; &lt;
)''', re.X | re.I)     # the markup of Javadoc, KDoc and JSDoc, which is not what code does


class DocComments:
    """The comments right above definitions (no blank line between), as doc text."""

    def __init__(self, scanned, language):
        self.text, self.comments = scanned.text, scanned.comments
        self.ends = [end for _, end in self.comments]
        inner = [start for start, _ in self.comments
                 if self.text.startswith(('//!', '/*!'), start)]
        self.inner = doc_text('\n'.join(self.clean(self.text[s:e]) for s, e in self.comments
                                        if s in inner))

    def before(self, offset):
        """The doc of the definition that starts at offset: the comments that end just
        above it, one after another with no blank line between (doc_text)."""
        place = bisect.bisect_right(self.ends, offset) - 1
        pieces, boundary = [], offset
        while place >= 0:
            start, end = self.comments[place]
            gap = self.text[end:boundary]
            if gap.strip() or gap.count('\n') > 1 or self.text.startswith(('//!', '/*!'), start):
                break
            pieces.append(self.clean(self.text[start:end]))
            boundary, place = start, place - 1
        return doc_text('\n'.join(reversed(pieces)))

    @staticmethod
    def clean(comment):
        """A comment's text without its markers (/** */ * /// //)."""
        if comment.endswith('*/'):
            comment = comment[:-2]
        return COMMENT_MARKS.sub('', comment).strip()


def doc_text(comments):
    """The words of doc comments, without their examples (EXAMPLES) and markup
    (DOC_MARKUP): {@code null} and <a href="..."> must not make every Javadoc about code
    and links, nor VecDeque.new's example that pushes make it about pushing."""
    return DOC_MARKUP.sub(' ', EXAMPLES.sub(' ', comments)).strip()


NON_SPACE = re.compile(r'[^ \t\r\n]')
WORD_END = re.compile(r'\w+')


def remembered(answers, read):
    """read(passed) -> an answer, after putting in passed the keys (the places it read
    from) whose answer is the same one; answers keeps it for each.  A reader that
    checks answers first then reads a run of one construct ('class class ...', 'val a =
    val a = ...') once, not once from each of its places."""
    passed = []
    answer = read(passed)
    answers.update(dict.fromkeys(passed, answer))
    return answer


class MaskedFile:
    """A scanned file's text, masked text and bracket pairs, with the backward and
    forward moves over spaces that both finders make (blanked comments are spaces)."""

    def __init__(self, scanned):
        self.text, self.masked, self.pairs = scanned.text, scanned.masked, scanned.pairs
        self.reverse = scanned.masked[::-1]     # backward searches run as regexes on it

    def last_significant(self, position, floor=0):
        """Offset of the last non-space character before position (not before floor),
        or floor - 1 when there is none: where a construct that stops at position ends."""
        size = len(self.reverse)
        found = NON_SPACE.search(self.reverse, size - position)
        offset = size - 1 - found.start() if found else -1
        return offset if offset >= floor else floor - 1

    def word_before(self, position):
        """(start offset, word) of the identifier ending just before position, skipping
        spaces; (offset after the previous character, '') when that is not a word."""
        end = self.last_significant(position) + 1
        found = WORD_END.match(self.reverse, len(self.reverse) - end)
        if not found:
            return end, ''
        return end - len(found.group()), self.masked[end - len(found.group()):end]

    def first_significant(self, position, limit):
        """Offset of the first non-space character at or after position (limit if none)."""
        found = NON_SPACE.search(self.masked, position, limit)
        return found.start() if found else limit


# --- Chunking: Java ------------------------------------------------------------------

IDENT = r'[A-Za-z_$][\w$]*'


def skip_annotations(masked, pairs, start, end):
    """The offset after the annotations (@Name, @Name(...)) that start at start."""
    annotation = re.compile(r'\s*@(?!interface\b)[\w$.]+\s*')
    while True:
        match = annotation.match(masked, start, end)
        if not match:
            return start
        start = match.end()
        if start < end and masked[start] == '(' and start in pairs:
            start = pairs[start] + 1



JAVA_TYPE = re.compile(r'(?<![\w$])(class|interface|enum|record|@interface)\s+(' + IDENT + ')')
JAVA_CONSTANTS = re.compile(r'(?:\s*(?:@[\w$.]+\s*)*' + IDENT + r'\s*,)+\s*(?:@[\w$.]+\s*)*')  # A, @X B, @Y
JAVA_KEYWORDS = frozenset('''if for while switch catch synchronized try return new throw
else do case default assert super this'''.split())
JAVA_STATEMENT_WORDS = frozenset('if for while switch catch try return new throw else do case '
                                 'assert'.split())
JAVA_MODIFIERS = frozenset('''public protected private static final abstract native
synchronized transient volatile strictfp default sealed non-sealed'''.split())
JAVA_TYPE_TOKENS = re.compile(r'[\w$\s.<>\[\],?&]*\Z')
THROWS = re.compile(r'\bthrows\s+[\w$.<>,\s]+\Z')     # (no leading \s*: from each space of
DEFAULT_VALUE = re.compile(r'\bdefault\s+[^;]*\Z', re.S)   # a long one it would rescan it)
ANNOTATION = re.compile(r'@[\w$.]+')
NEW_CLASS = re.compile(r'\bnew\s+[\w$.]+\s*(?:<[^;{}]*>)?\s*\Z')
KINDS = {'class': 'class', 'interface': 'interface', 'enum': 'enum', 'record': 'record',
         '@interface': 'annotation'}


class JavaFile:
    """The Java finder's state for one file."""

    def __init__(self, scanned):
        self.structure = Structure(scanned)
        self.masked, self.pairs = scanned.masked, scanned.pairs
        self.closers = self.structure.closers
        self.decls = []

    def method_header(self, start, end):
        """(name, name offset) when masked[start:end] is a method or constructor
        header (annotations, modifiers, type parameters, type, name, parameters,
        throws), else None."""
        header = self.masked[start:end].rstrip()
        end = start + len(header)
        throws = THROWS.search(header)
        if throws:
            end = start + len(header[:throws.start()].rstrip())
        if end <= start or self.masked[end - 1] != ')':
            return None
        opener = self.closers.get(end - 1)
        if opener is None or opener < start:
            return None
        name = re.search(IDENT + r'\s*\Z', self.masked[start:opener])
        if not name or name.group().strip() in JAVA_KEYWORDS:
            return None
        prefix_start = skip_annotations(self.masked, self.pairs, start, opener)
        prefix = ANNOTATION.sub(' ', self.masked[prefix_start:start + name.start()])
        if not JAVA_TYPE_TOKENS.match(prefix) or '=' in prefix or prefix.lstrip()[:1] == '.':
            return None                 # new Object() {}.hashCode(); is a call
        if any(word in JAVA_STATEMENT_WORDS for word in prefix.split()):
            return None
        return name.group().strip(), start + name.start()

    def returns_nothing(self, start, name_offset):
        """Whether a header has no return type before its name (a constructor)."""
        prefix_start = skip_annotations(self.masked, self.pairs, start, name_offset)
        prefix = re.sub(r'<[^<>]*(?:<[^<>]*>[^<>]*)*>', ' ', self.masked[prefix_start:name_offset])
        return all(word in JAVA_MODIFIERS for word in prefix.split())

    def walk(self, block, scope, context, type_name=''):
        """Find the definitions in a block's body; context is 'type', 'enum', 'body'."""
        masked = self.masked
        body_start = block.open + 1
        position = body_start
        for child in block.children:
            start = self.structure.statement_start(body_start, child.open)
            if context in ('type', 'enum'):
                self.bodiless(position, start, scope, type_name)
            header = masked[start:child.open]
            stripped = header.strip().lstrip(',').strip()
            if stripped != header.strip():
                start = child.open - len(header.lstrip().lstrip(',').lstrip())
            self.classify(child, start, scope, context, type_name)
            position = child.close + 1
        if context in ('type', 'enum'):
            self.bodiless(position, block.close, scope, type_name)

    def classify(self, child, start, scope, context, type_name):
        """Record what the block child, whose statement starts at start, is the body of
        (a type, enum constant, method, constructor or anonymous class), and walk it."""
        masked = self.masked
        if masked.count('(', start, child.open) > masked.count(')', start, child.open) \
                and not self.anonymous_class(start, child.open):
            self.walk(child, scope, 'body' if context != 'file' else 'file')
            return                      # record R(@Ann({1}) int b): an argument's array
        element = self.default_at(start, child.open) if context == 'type' else None
        if element is not None:                 # String[] names() default {};
            method = self.method_header(start, element)
            if method:
                semicolon = masked.find(';', child.close)
                self.decls.append(Decl(scope_name(scope, method[0]), 'method', start,
                                       semicolon if semicolon >= 0 else child.close,
                                       None, has_body=False))
                return
        bare = skip_annotations(masked, self.pairs, start, child.open)
        kind = JAVA_TYPE.search(masked, bare, child.open)
        if kind and all(word in JAVA_MODIFIERS for word in masked[bare:kind.start()].split()):
            name = kind.group(2)
            self.decls.append(Decl(scope_name(scope, name), KINDS[kind.group(1)], start,
                                   child.close, (child.open, child.close), True))
            self.walk(child, scope + [name], 'enum' if kind.group(1) == 'enum' else 'type',
                      name)
            return
        if context in ('type', 'enum'):
            constant = self.enum_constant(start, child.open, type_name) \
                if context == 'enum' else None
            if constant:
                self.walk(child, scope + [constant], 'type', type_name)
                return
            method = self.method_header(start, child.open)
            if method:
                name, offset = method
                constructor = name == type_name and self.returns_nothing(start, offset)
                self.decls.append(Decl(scope_name(scope, name),
                                       'constructor' if constructor else 'method',
                                       start, child.close, (child.open, child.close)))
                self.walk(child, scope + [name], 'body')
                return
            bare = skip_annotations(masked, self.pairs, start, child.open)
            words = masked[bare:child.open].split()
            if words and all(w in JAVA_MODIFIERS for w in words[:-1]) and words[-1] == type_name:
                self.decls.append(Decl(scope_name(scope, type_name), 'constructor', start,
                                       child.close, (child.open, child.close)))
                self.walk(child, scope + [type_name], 'body')
                return
        anonymous = self.anonymous_class(start, child.open)
        if anonymous:
            self.walk(child, scope + ['<anonymous>'], 'type', '<anonymous>')
            return
        self.walk(child, scope, 'body' if context != 'file' else 'file')

    def default_at(self, start, end):
        """Where the `default` that masked[start:end] ends with (an annotation element's
        array default: String[] names() default {...}) and the spaces before it begin, or
        None.  (A regex anchored at the end rescanned a long masked comment from each
        of its spaces.)"""
        head = self.masked[start:end].rstrip()
        if not head.endswith('default') or head[-8:-7].isalnum() or head[-8:-7] == '_':
            return None
        return start + len(head[:-7].rstrip())

    def enum_constant(self, start, open_brace, type_name):
        """The name of the enum constant whose body opens at open_brace, or None: the
        last of `A(1), B(2) {` (B), after the enum's '{', a constant's '}' or a ','; not a
        constructor or method, which follow a ';' or have a type before their name."""
        masked = self.masked
        bare = skip_annotations(masked, self.pairs, start, open_brace)
        end = len(masked[:open_brace].rstrip()) - 1
        if end >= bare and masked[end] == ')':
            opener = self.closers.get(end)
            if opener is None:
                return None
            end = len(masked[:opener].rstrip()) - 1
        name = re.search(IDENT + r'\Z', masked[bare:end + 1])
        if not name or name.group() in (type_name, 'static'):     # static {...} is code
            return None
        before = masked[bare:bare + name.start()]
        while '(' in before:                       # A(1, f(2)), B(2) -> A, B
            before, cut = re.subn(r'\([^()]*\)', '', before)
            if not cut:
                return None
        if before.strip():                      # only constants before it: A, @X B,
            return name.group() if JAVA_CONSTANTS.fullmatch(before) else None
        return name.group() if masked[:start].rstrip()[-1:] in ('{', '}', ',') else None

    def anonymous_class(self, start, open_brace):
        """Whether the block at open_brace is an anonymous class: new Name(...) {."""
        end = open_brace
        while end > start and self.masked[end - 1] in ' \t\r\n':
            end -= 1
        if end <= start or self.masked[end - 1] != ')':
            return False
        opener = self.closers.get(end - 1)
        if opener is None:
            return False
        return bool(NEW_CLASS.search(self.masked, max(0, opener - 300), opener))

    def bodiless(self, start, end, scope, type_name):
        """Bodiless methods (interface, abstract, annotation elements) between start and
        end of a type's body: statements ending in ';'."""
        masked = self.masked
        position = start
        while True:
            semicolon = masked.find(';', position, end)
            if semicolon < 0:
                return
            statement = max(self.structure.statement_start(start, semicolon), position)
            while statement < semicolon and masked[statement] in ' \t\r\n,':
                statement += 1
            header = masked[statement:semicolon]
            default = DEFAULT_VALUE.search(header)
            stop = statement + (default.start() if default else len(header))
            method = self.method_header(statement, stop)
            if method and not self.returns_nothing(statement, method[1]):   # B("b"); is an
                self.decls.append(Decl(scope_name(scope, method[0]), 'method', statement,
                                       semicolon, None, has_body=False))   # enum constant
            position = semicolon + 1


def scope_name(scope, name):
    return '.'.join(scope + [name])


def java_declarations(scanned):
    finder = JavaFile(scanned)
    finder.walk(finder.structure.root, [], 'file')
    return sorted(finder.decls, key=lambda d: (d.start, -d.end))


# --- Chunking: Go --------------------------------------------------------------------
# File-level func and type declarations (each spec of a group), methods named after
# their receiver's base type, interface method elements, and local types in bodies.

GO_IDENT = r'[^\W\d]\w*'
GO_TOP = re.compile(r'\b(func|type)\b|[(\[{]')
GO_LOCAL_TYPE = re.compile(r'\btype\b(?=\s*(?:\(|[^\W\d]))')
GO_NAME = re.compile(r'\s*(' + GO_IDENT + r')\s*')
GO_FUNC_NAME = re.compile(r'[ \t]*(' + GO_IDENT + r')[ \t]*')
GO_KEYWORDS = frozenset('''break case chan const continue default defer else fallthrough for
func go goto if import interface map package range return select struct switch type
var'''.split())
GO_HORIZONTAL = re.compile(r'[ \t]*')
GO_STOP = re.compile(r'[\n;(\[{)\]}]')
GO_TYPE_BRACES = re.compile(r'(?<![\w])(struct|interface)\s*\Z')
GO_STRUCT = re.compile(r'struct\s*\{')
GO_INTERFACE = re.compile(r'interface\s*\{')
GO_TYPE_PARAMS = re.compile(r'\s*' + GO_IDENT + r'(?:\s*,\s*' + GO_IDENT + r')*\s+(?:[~\[(]|\*\S|'
                            + GO_IDENT + ')')
GO_RECEIVER_NAME = re.compile(r'\s*' + GO_IDENT + r'(?:\s*,\s*' + GO_IDENT +
                              r')*\s+(?=[*(\w]|\[[^\]]*\]\s*[\w*\[(])')
GO_BASE_TYPE = re.compile(r'[\s*(]*(' + GO_IDENT + r'(?:\s*\.\s*' + GO_IDENT + r')?)')
GO_COMMA = re.compile(r'[,(\[{]')
GO_METHOD_ELEM = re.compile(r'(' + GO_IDENT + r')\s*\(')


class GoFile(MaskedFile):
    """The Go finder's state for one file."""

    def __init__(self, scanned):
        super().__init__(scanned)
        self.decls = []

    def walk_top(self):
        """Find the file-level func and type declarations, skipping bracketed code."""
        masked, pairs = self.masked, self.pairs
        position = 0
        while True:
            match = GO_TOP.search(masked, position)
            if not match:
                return
            keyword = match.group(1)
            if keyword is None:
                position = pairs.get(match.start(), match.start()) + 1
                self.local_types((match.start(), position - 1), [])
            elif keyword == 'func':
                position = self.func_declaration(match.start())
            else:
                position = self.type_declaration(match.start(), [])

    def stop(self, position, limit, at_brace=False):
        """Offset of the first newline, ';' or unmatched closer at bracket depth 0 from
        position (limit when there is none): where a Go spec or signature ends; with
        at_brace, a '{' stops it too."""
        masked, pairs = self.masked, self.pairs
        while True:
            match = GO_STOP.search(masked, position, limit)
            if not match:
                return limit
            char, start = match.group(), match.start()
            if at_brace and char == '{':
                return start
            if char in '([{' and start in pairs:
                position = pairs[start] + 1
            elif char in '([{':
                position = start + 1
            else:
                return start

    def func_declaration(self, offset):
        """Record the func declaration at offset (a function or a method); returns where
        to go on scanning."""
        masked, pairs = self.masked, self.pairs
        position = GO_HORIZONTAL.match(masked, offset + 4).end()
        receiver = None
        if masked.startswith('(', position) and position in pairs:
            receiver = (position, pairs[position])
            position = receiver[1] + 1
        name = GO_FUNC_NAME.match(masked, position)
        if not name or name.group(1) in GO_KEYWORDS:
            return offset + 4
        position = name.end()
        if masked.startswith('[', position) and position in pairs:     # type parameters
            position = self.first_significant(pairs[position] + 1, len(masked))
        if not masked.startswith('(', position) or position not in pairs:
            return offset + 4
        body, end = self.signature_end(pairs[position] + 1)
        scope, receiver_text = [], ''
        if receiver:
            receiver_text, base = self.receiver_type(*receiver)
            scope = [base] if base else []
        kind = 'method' if receiver else 'function'
        self.decls.append(Decl(scope_name(scope, name.group(1)), kind, offset, end, body,
                               True, receiver_text, has_body=body is not None))
        if body:
            self.local_types(body, scope + [name.group(1)])
        return end + 1

    def signature_end(self, position):
        """After a func's parameters: ((open, close) of its body, offset of its last
        character), or (None, offset of the last character of a bodiless signature)."""
        masked, pairs = self.masked, self.pairs
        length = len(masked)
        while True:
            stop = self.stop(position, length, True)
            if stop < length and masked[stop] == '{' and stop in pairs:
                if GO_TYPE_BRACES.search(masked, max(0, stop - 16), stop):
                    position = pairs[stop] + 1
                    continue
                return (stop, pairs[stop]), pairs[stop]
            if stop < length and masked[stop] == '{':
                position = stop + 1
                continue
            return None, self.last_significant(stop, position - 1)

    def receiver_type(self, open_paren, close_paren):
        """(the receiver's type as written, its base type name) of a method receiver."""
        masked = self.masked
        position = open_paren + 1
        named = GO_RECEIVER_NAME.match(masked, position, close_paren)
        if named:
            position = named.end()
        position = self.first_significant(position, close_paren)
        end = self.last_significant(self.comma(position, close_paren), position) + 1
        written = self.text[position:end]
        base = GO_BASE_TYPE.match(masked, position, end)
        if not base or masked[base.end():end].strip()[:1] not in ('', '[', ')'):
            return written, self.text[self.first_significant(position, end):end]
        return written, re.split(r'\s*\.\s*', base.group(1))[-1]

    def comma(self, position, limit):
        """Offset of the first ',' outside brackets from position (limit if none): where
        the first of several receivers ends."""
        while True:
            match = GO_COMMA.search(self.masked, position, limit)
            if not match:
                return limit
            if match.group() == ',':
                return match.start()
            position = self.pairs.get(match.start(), match.start()) + 1

    def local_types(self, body, scope):
        """Record the type declarations inside a function body (closures included)."""
        position = body[0]
        while True:
            match = GO_LOCAL_TYPE.search(self.masked, position, body[1])
            if not match:
                return
            position = self.type_declaration(match.start(), scope)

    def type_declaration(self, offset, scope):
        """Record the type declaration at offset: one spec, or each spec of a group."""
        masked, pairs = self.masked, self.pairs
        position = self.first_significant(offset + 4, len(masked))
        if masked.startswith('(', position) and position in pairs:
            close = pairs[position]
            position += 1
            while True:
                position = self.first_significant(position, close)
                while position < close and masked[position] == ';':
                    position = self.first_significant(position + 1, close)
                if position >= close:
                    return close + 1
                position = self.type_spec(position, position, scope, close) + 1
        return self.type_spec(offset, position, scope, len(masked)) + 1

    def type_spec(self, start, position, scope, limit):
        """Record the type spec whose name is at position (its range starts at start);
        returns the offset where it stops."""
        masked, pairs = self.masked, self.pairs
        name = GO_NAME.match(masked, position, limit)
        if not name:
            return self.stop(position, limit)
        after = name.end()
        if masked.startswith('[', after) and after in pairs and \
                GO_TYPE_PARAMS.match(masked, after + 1, pairs[after]):
            after = self.first_significant(pairs[after] + 1, limit)
        kind, interface = 'type', None
        if not masked.startswith('=', after):
            if GO_STRUCT.match(masked, after):
                kind = 'struct'
            elif GO_INTERFACE.match(masked, after):
                kind = 'interface'
                brace = masked.index('{', after)
                interface = (brace, pairs.get(brace, brace))
        stop = self.stop(after, limit)
        end = self.last_significant(stop, start)
        self.decls.append(Decl(scope_name(scope, name.group(1)), kind, start, end,
                               scope=interface is not None))
        if interface:
            self.method_elems(interface, scope + [name.group(1)])
        return stop

    def method_elems(self, braces, scope):
        """Record the method elements (Name(...) results) of an interface body."""
        masked = self.masked
        position = braces[0] + 1
        while position < braces[1]:
            position = self.first_significant(position, braces[1])
            stop = self.stop(position, braces[1])
            method = GO_METHOD_ELEM.match(masked, position, stop)
            if method and method.group(1) not in GO_KEYWORDS:
                end = self.last_significant(stop, position)
                self.decls.append(Decl(scope_name(scope, method.group(1)), 'method',
                                       position, end, has_body=False))
            position = stop + 1


def go_declarations(scanned):
    """The Decls of a scanned Go file, in order of their start."""
    finder = GoFile(scanned)
    finder.walk_top()
    return sorted(finder.decls, key=lambda d: (d.start, -d.end))


# --- Chunking: Rust ------------------------------------------------------------------
# Items found by keyword with a stack of enclosing scopes; nothing inside macro
# arguments, macro bodies or attributes is an item.  A start includes outer #[...]
# attributes; an impl block is named by its self type and records its trait.

RUST_IDENT = r'(?:r#)?[^\W\d]\w*'
RUST_KEYWORD = re.compile(r'(?:fn|struct|enum|union|trait|mod|type|impl|macro_rules)\b')
RUST_ITEM = re.compile(r'(?:(fn|struct|enum|union|trait|mod|type)\s+(' + RUST_IDENT +
                       r')|(impl)\b|(macro_rules)\s*!\s*(' + RUST_IDENT + r'))')
RUST_TOKEN_TREE = re.compile(r'([!#])\s*(?:(!)\s*)?([(\[{])')
RUST_MACRO_DEFINITION = re.compile(r'macro(?:_rules\s*!)?\s+' + RUST_IDENT + r'\s*([(\[{])')
RUST_NOT_MACROS = frozenset('''if while match return in else let for loop break continue
mut ref as move yield await impl dyn where unsafe'''.split())
RUST_MODIFIERS = frozenset('pub const async unsafe extern default auto crate'.split())
RUST_MACRO_PATH = re.compile(r'(?:' + RUST_IDENT + r'\s*::\s*)*' + RUST_IDENT + r'\s*\Z')
RUST_ITEM_AFTER = frozenset(';{}')
RUST_HEADER_STOP = re.compile(r'[{};(\[<>]')
RUST_SEMICOLON_STOP = re.compile(r'[;=(\[{<>]')
RUST_FOR = re.compile(r'\bfor\b(?!\s*<)')
RUST_WHERE = re.compile(r'\bwhere\b')
RUST_REFERENCE = re.compile(r"\s*(?:&\s*(?:'\w+\s*)?(?:mut\b\s*)?|\*\s*(?:const|mut)\b\s*)")
RUST_PATH = re.compile(r'\s*(?:::\s*)?(' + RUST_IDENT + r')(?:\s*::\s*(' + RUST_IDENT + r'))*')
RUST_TYPE_KEYWORDS = frozenset('dyn fn impl unsafe extern for'.split())
RUST_SCOPES = frozenset({'fn', 'impl', 'trait', 'mod'})    # items that name what is inside
RUST_KINDS = {'struct': 'struct', 'enum': 'enum', 'union': 'union', 'trait': 'trait',
              'mod': 'module', 'type': 'type', 'macro_rules': 'macro', 'impl': 'impl'}


def outermost_spans(opens, pairs):
    """The sorted, disjoint (open, close) spans of the brackets at opens that no other
    of them encloses."""
    spans, reach = [], -1
    for open_at in opens:
        if open_at > reach:
            spans.append((open_at, pairs[open_at]))
            reach = pairs[open_at]
    return spans


class RustFile(MaskedFile):
    """The Rust finder's state for one file."""

    def __init__(self, scanned):
        super().__init__(scanned)
        self.closers = {c: o for o, c in scanned.pairs.items()}
        self.decls = []
        self.scopes = []          # (close offset, name, kind) of the enclosing items
        self.tree_opens = self.token_tree_opens()
        self.trees = outermost_spans(self.tree_opens, self.pairs)
        self.header_ends = {}     # position -> header_end's answer

    def token_tree_opens(self):
        """The sorted offsets of the brackets that open macro invocation arguments, macro
        definition bodies and attributes: the grammar parses no items in them."""
        masked = self.masked
        opens = []
        for match in RUST_TOKEN_TREE.finditer(masked):
            if match.group(1) == '!':
                word = self.word_before(match.start())[1]
                if match.group(2) or not word or word in RUST_NOT_MACROS:
                    continue
            opens.append(match.start(3))
        for match in RUST_MACRO_DEFINITION.finditer(masked):
            if match.start() == 0 or not WORD_END.match(masked, match.start() - 1):
                opens.append(match.start(1))
        return sorted(open_at for open_at in opens if open_at in self.pairs)

    def in_token_tree(self, offset):
        """Whether offset lies inside one of the token-tree spans."""
        place = bisect.bisect_right(self.trees, (offset, len(self.masked))) - 1
        return place >= 0 and self.trees[place][0] < offset < self.trees[place][1]

    def in_item_macro(self, offset):
        """Whether every token tree around offset is the braces of a macro invoked where
        an item may stand, outside any function: tokio's cfg_rt! { pub fn spawn() ... }
        holds items (a function's statement macros, quote! { fn #name() }, and a
        macro_rules! body are code)."""
        if any(scope[2] == 'fn' for scope in self.scopes):
            return False
        outer = self.trees[bisect.bisect_right(self.trees, (offset, len(self.masked))) - 1][0]
        first = bisect.bisect_left(self.tree_opens, outer)
        last = bisect.bisect_left(self.tree_opens, offset)
        return all(self.pairs[opener] < offset or self.item_macro(opener)
                   for opener in self.tree_opens[first:last])

    def item_macro(self, opener):
        """Whether the '{' at opener is the body of a macro invoked where an item may
        stand (name! { ... } after a ';', a '}' or an attribute)."""
        bang = self.last_significant(opener)
        if self.masked[opener] != '{' or bang < 0 or self.masked[bang] != '!':
            return False
        path = RUST_MACRO_PATH.search(self.masked, max(0, bang - WORD_WINDOW), bang)
        return path is not None and self.item_start(path.start()) is not None

    def walk(self):
        """Find every item in the file, in order, keeping the stack of enclosing scopes."""
        masked, position = self.masked, 0
        while True:
            keyword = RUST_KEYWORD.search(masked, position)
            if not keyword:
                return
            position = keyword.end()
            if keyword.start() and WORD_END.match(masked, keyword.start() - 1):
                continue
            match = RUST_ITEM.match(masked, keyword.start())
            if not match:
                continue
            position = match.end()
            while self.scopes and self.scopes[-1][0] < match.start():
                self.scopes.pop()
            if self.in_token_tree(match.start()) and not self.in_item_macro(match.start()):
                continue
            starts = self.item_start(match.start())
            if starts is None:
                continue
            position = max(position, self.item(match, starts))

    def item_start(self, keyword):
        """(node start, decorated start) of the item whose keyword is at keyword: its
        modifiers, then its outer attributes; None when the keyword starts no item."""
        masked = self.masked
        start = keyword
        while True:
            word_start, word = self.word_before(start)
            if word in RUST_MODIFIERS:
                start = word_start
                continue
            previous = self.last_significant(start)
            if previous >= 0 and masked[previous] == ')':
                opener = self.closers.get(previous)
                if opener is not None and self.word_before(opener)[1] == 'pub':
                    start = self.word_before(opener)[0]
                    continue
            break
        if previous >= 0 and masked[previous] not in RUST_ITEM_AFTER and \
                self.attribute_start(previous) is None and not self.inner_attribute(previous):
            return None
        decorated = start
        while True:
            attribute = self.attribute_start(self.last_significant(decorated))
            if attribute is None:
                return start, decorated
            decorated = attribute

    def attribute_start(self, close):
        """Offset of the '#' of the outer attribute #[...] whose ']' is at close, or None."""
        if close < 0 or self.masked[close] != ']':
            return None
        opener = self.closers.get(close)
        if opener is None:
            return None
        hash_at = self.last_significant(opener)
        return hash_at if hash_at >= 0 and self.masked[hash_at] == '#' else None

    def inner_attribute(self, close):
        """Whether the ']' at close ends an inner attribute #![...]."""
        opener = self.closers.get(close) if close >= 0 and self.masked[close] == ']' else None
        if opener is None:
            return False
        bang = self.last_significant(opener)
        return bang > 0 and self.masked[bang] == '!' and \
            self.masked[self.last_significant(bang)] == '#'

    def header_end(self, position):
        """Offset of the '{' or ';' that ends an item header from position (brackets and
        generic angle brackets skipped), or None (at the '}' that closes what holds it:
        neg! { impl Neg for Simd<f32> } lists impls without bodies).  Each position it
        goes on from outside angle brackets keeps the answer, so a run of headers without
        bodies is read once, not once per header (remembered)."""
        return remembered(self.header_ends, lambda passed: self.header_end_from(position,
                                                                                 passed))

    def header_end_from(self, position, passed):
        """header_end's reading; passed gets the positions whose answer is this one."""
        masked, pairs = self.masked, self.pairs
        angles = 0
        while True:
            if not angles:
                if position in self.header_ends:
                    return self.header_ends[position]
                passed.append(position)
            match = RUST_HEADER_STOP.search(masked, position)
            if not match or match.group() == '}':
                return None
            char, start = match.group(), match.start()
            position = start + 1
            if char in '([' or (char == '{' and angles > 0):
                position = pairs.get(start, start) + 1
            elif char == '<':
                angles += 1
            elif char == '>':
                if masked[start - 1] not in '-=' and angles > 0:
                    angles -= 1
            else:
                return start

    def item(self, match, starts):
        """Record the item matched at its keyword; returns where to go on scanning."""
        keyword = match.group(1) or match.group(3) or match.group(4)
        if keyword == 'impl':
            return self.impl_item(match.end(), starts)
        if keyword == 'macro_rules':
            return self.macro_item(match.group(5), match.end(), starts)
        name = match.group(2)
        if keyword == 'type':
            return self.type_item(name, match.end(), starts)
        stop = self.header_end(match.end())
        if stop is None:
            return match.end()
        body = (stop, self.pairs[stop]) if self.masked[stop] == '{' and stop in self.pairs \
            else None
        end = body[1] if body else stop
        scope = [s[1] for s in self.scopes]
        inside = self.scopes[-1] if self.scopes else (0, '', '', '')
        kind = RUST_KINDS[keyword] if keyword != 'fn' else \
            'method' if inside[2] in ('impl', 'trait') else 'function'
        self.decls.append(Decl(scope_name(scope, name), kind, starts[1], end, body,
                               keyword in RUST_SCOPES, has_body=body is not None,
                               trait=inside[3] if kind == 'method' else ''))
        if body and keyword in RUST_SCOPES:
            self.scopes.append((body[1], name, keyword, ''))
        return stop + 1

    def type_item(self, name, position, starts):
        """Record a type alias `type Name = T;` (an associated type without '=' is none)."""
        masked, pairs = self.masked, self.pairs
        alias, angles = False, 0
        while True:
            match = RUST_SEMICOLON_STOP.search(masked, position)
            if not match:
                return position
            char, start = match.group(), match.start()
            position = start + 1
            if char in '([{':
                position = pairs.get(start, start) + 1
            elif char == '<':
                angles += 1
            elif char == '>':
                angles -= 1 if angles > 0 and masked[start - 1] not in '-=' else 0
            elif char == '=':
                alias = alias or (angles == 0 and masked[start + 1:start + 2] != '>')
            else:
                break
        if alias:
            scope = [s[1] for s in self.scopes]
            self.decls.append(Decl(scope_name(scope, name), 'type', starts[1], start))
        return position

    def macro_item(self, name, position, starts):
        """Record a macro_rules! definition: its braces, or its (...)/[...] and ';'."""
        masked, pairs = self.masked, self.pairs
        open_at = self.first_significant(position, len(masked))
        if open_at not in pairs:
            return position
        end = pairs[open_at]
        if masked[open_at] != '{':
            after = self.first_significant(end + 1, len(masked))
            if masked.startswith(';', after):
                end = after
        scope = [s[1] for s in self.scopes]
        self.decls.append(Decl(scope_name(scope, name), 'macro', starts[1], end))
        return end + 1

    def impl_item(self, position, starts):
        """Record an impl block, named by its self type, with its trait; open its scope."""
        masked, pairs = self.masked, self.pairs
        stop = self.header_end(position)
        if stop is None or masked[stop] != '{' or stop not in pairs:
            return position
        header_start = position
        if masked.startswith('<', self.first_significant(position, stop)):
            header_start = self.angle_end(self.first_significant(position, stop), stop)
        where = self.depth_zero(RUST_WHERE, header_start, stop)
        type_end = where if where is not None else stop
        trait_at = self.depth_zero(RUST_FOR, header_start, type_end)
        trait = ''
        type_start = header_start
        if trait_at is not None:
            trait = self.text[header_start:trait_at].strip().lstrip('!').strip()
            type_start = trait_at + 3
        name = self.type_name(type_start, type_end)
        scope = [s[1] for s in self.scopes]
        body = (stop, pairs[stop])
        self.decls.append(Decl(scope_name(scope, name), 'impl', starts[1], body[1], body,
                               True, trait=trait))
        self.scopes.append((body[1], name, 'impl', trait))   # its methods have its trait
        return stop + 1

    def angle_end(self, open_at, limit):
        """Offset after the '>' that closes the '<' at open_at (before limit)."""
        masked, depth, position = self.masked, 0, open_at
        while position < limit:
            char = masked[position]
            if char in '([' and position in self.pairs:
                position = self.pairs[position]
            elif char == '<':
                depth += 1
            elif char == '>' and masked[position - 1] not in '-=':
                depth -= 1
                if depth == 0:
                    return position + 1
            position += 1
        return limit

    def depth_zero(self, pattern, start, end):
        """Offset of the first match of pattern between start and end outside brackets
        and angle brackets, or None."""
        masked = self.masked
        for match in pattern.finditer(masked, start, end):
            segment = masked[start:match.start()]
            opened = segment.count('<') - segment.count('>') + segment.count('->') + \
                segment.count('=>')
            if opened <= 0 and not self.bracketed(start, match.start()):
                return match.start()
        return None

    def bracketed(self, start, offset):
        """Whether offset is inside a (...) or [...] that opens after start."""
        position = start
        while position < offset:
            char = self.masked[position]
            if char in '([' and position in self.pairs:
                if self.pairs[position] > offset:
                    return True
                position = self.pairs[position]
            position += 1
        return False

    def type_name(self, start, end):
        """The name the oracle gives an impl's self type: references and pointers
        stripped, then the last path segment before generic arguments, else the text."""
        masked = self.masked
        while True:
            reference = RUST_REFERENCE.match(masked, start, end)
            if not reference or reference.end() == start:
                break
            start = reference.end()
        start = self.first_significant(start, end)
        stop = self.last_significant(end, start) + 1
        path = RUST_PATH.match(masked, start, stop)
        if path and path.group(1) not in RUST_TYPE_KEYWORDS:
            tail = masked[path.end():stop].strip()
            if not tail or tail.startswith('<'):
                return self.last_segment(path.group())
        return self.text[start:stop].strip() or '<impl>'

    @staticmethod
    def last_segment(path):
        """The last segment of a path a::b::C."""
        return path.split('::')[-1].strip()


def rust_declarations(scanned):
    """The Decls of a scanned Rust file, in order of their start."""
    finder = RustFile(scanned)
    finder.walk()
    return sorted(finder.decls, key=lambda d: (d.start, -d.end))


# --- Chunking: Kotlin ----------------------------------------------------------------
# Kotlin has no semicolons, declarations without bodies (`data class P(val x: Int)`,
# `object O`) and expression bodies that span lines, so this finder does not walk brace
# blocks: it finds each declaration keyword, reads its header forward and its
# annotations and modifiers backward, and ends an expression where tree-sitter-kotlin
# puts an automatic semicolon.

# A declaration keyword (val, var, get and set for properties and their accessors, init
# for an initializer block), not part of a name (x.object, `fun`, @constructor).  Written
# as "one of its first letters, then the rest" because a leading character set lets the
# regex engine skip ahead fast; a plain alternation is three times slower.
KOTLIN_KEYWORD = re.compile(r'[fciotvgs](?<![\w`@.$][fciotvgs])(?:(?<=f)un|(?<=c)lass'
                     r'|(?<=i)n(?:terface|it)|(?<=o)bject|(?<=t)ypealias|(?<=c)onstructor'
                     r'|(?<=v)a[lr]|(?<=[gs])et)(?![\w`])')
KOTLIN_ANNOTATION = r'@[\w.]+(?:\s*\([^()]*\))?\s*'     # @A or @B("x"), before a name:
                                                        # one \s* between two, or a run of
                                                        # them could split it many ways
KOTLIN_ACCESSOR_PARAMETERS = {'get': re.compile(r'\(\s*\)'),      # get(), set(value[: T])
                              'set': re.compile(r'\(\s*(?:' + KOTLIN_ANNOTATION + ')*'
                                                r'[^\W\d]\w*\s*(?::[^()]*)?\)')}
KOTLIN_INTERFACE_AT = re.compile(r'interface(?!\w)')
KOTLIN_IDENT_AT = re.compile(r'\s*(`[^`\n]*`|[^\W\d]\w*)')
KOTLIN_SPACE_AT = re.compile(r'\s*')
KOTLIN_SIGNATURE_TOKEN = re.compile(r'\s*(?:(`[^`\n]*`|[^\W\d]\w*)|(\?\.|[.?<(]))')
KOTLIN_EXTENT_STOPS = re.compile(r'[\n;=(){}\[\]]')
KOTLIN_ANGLES = re.compile(r'->|[<>(){};=]')
KOTLIN_ANGLES_REACH = 400
KOTLIN_WORD_END = re.compile(r'\w+\Z')
KOTLIN_MODIFIER_WORD = re.compile(r'(?<![@\w.:])\w+')
KOTLIN_ANNOTATION_NAME_CHAR = re.compile(r'[\w.:`]')
KOTLIN_MODIFIERS = frozenset('''public private protected internal open final abstract sealed data
enum annotation inner value companion override lateinit const inline noinline crossinline
reified tailrec operator infix external suspend expect actual vararg'''.split())
# Line-final characters and words after which an expression or header must go on.
KOTLIN_DANGLING_CHARS = frozenset(',.:=([{<*/%&|')
KOTLIN_DANGLING_WORDS = frozenset('else in is as by where try finally do'.split())
# Heads of (...) after which a newline does not end the statement: if (c)\n body.
KOTLIN_CONDITION_WORDS = frozenset({'if', 'while', 'for'})
# A line starting with one of these continues the previous one (fwcd's scanner; catch
# and finally because a try cannot end before them).
KOTLIN_CONTINUING_CHARS = frozenset(',.:*%><={[(?|&/')
KOTLIN_CONTINUING_WORDS = re.compile(r'(?:else|catch|finally|where|as)(?!\w)|in(?![^\W\d_])')
# A primary constructor on a line of its own, after its annotations and visibility.
KOTLIN_PRIMARY_CONSTRUCTOR = re.compile(r'\s*(?:' + KOTLIN_ANNOTATION +
                                        r'|(?:public|private|protected|internal)\s+)*'
                                        r'constructor(?=\s*\()')
KOTLIN_ENTRY_ANNOTATIONS = re.compile(r'\s*(?:' + KOTLIN_ANNOTATION + ')*')
KOTLIN_KINDS = {'interface': 'interface', 'enum': 'enum', 'annotation': 'annotation'}


class KotlinScope(NamedTuple):
    """A declaration whose body names what is declared inside it."""
    end: int             # offset of the body's last character
    name: str
    is_class: bool       # class-like (its functions are methods)


class KotlinProperty(NamedTuple):
    """A property of a class or file, which getters and setters may follow."""
    name: str
    start: int           # offset of its first annotation or modifier
    name_end: int        # offset after its name (var get: Int has no getter yet)
    last: int            # offset of the last character of its header or last accessor
    accessors: int       # how many of its accessors were found so far
    receiver: str        # the type an extension property extends, or ''


class KotlinExtent(NamedTuple):
    """Where a header or expression stops: its last character, and the offset of the
    '{' of a body or of the '=' of an expression body that follows it, if any."""
    last: int
    brace: int = -1
    equals: int = -1


def last_nonspace(text, position, stop):
    """The offset of the last character of text[position:stop] that is not a space, or
    position - 1; read back from stop in short pieces (a long line is not copied for
    each declaration on it)."""
    while stop > position:
        start = max(position, stop - 64)
        kept = len(text[start:stop].rstrip())
        if kept:
            return start + kept - 1
        stop = start
    return position - 1


class KotlinFile:
    """The Kotlin finder's state for one file."""

    def __init__(self, scanned):
        self.text, self.masked, self.pairs = scanned.text, scanned.masked, scanned.pairs
        self.closers = {c: o for o, c in scanned.pairs.items()}
        self.comments = sorted(scanned.comments)
        self.comment_starts = [start for start, _ in self.comments]
        self.long_literals = [(start, end) for start, end in scanned.literals
                              if self.text.find('\n', start, end) >= 0]
        self.long_literal_starts = [start for start, _ in self.long_literals]
        self.stops = [m.start() for m in KOTLIN_EXTENT_STOPS.finditer(self.masked)]
        self.braces = [m.start() for m in re.finditer('{', self.masked)]
        self.extents = {}       # (position, header) -> extent's answer
        self.line_starts = scanned.line_starts
        self.decls = []
        self.scopes = []
        self.header_end = -1
        self.property = None
        self.entries = []       # (open, close, name) of enum entries' bodies, to come

    def find(self):
        """Every declaration, in the order of their keywords."""
        for match in KOTLIN_KEYWORD.finditer(self.masked):
            offset = match.start()
            while self.scopes and self.scopes[-1].end < offset:
                self.scopes.pop()
            while self.entries and self.entries[0][0] < offset:
                _, close, name = self.entries.pop(0)
                if close > offset:
                    self.scopes.append(KotlinScope(close, name, True))
            if offset < self.header_end:
                continue
            getattr(self, 'read_' + match.group())(offset)
        return self.decls

    # --- backward: annotations and modifiers ---------------------------------------

    def declaration_start(self, keyword, allow_fun=False):
        """The offset of the first annotation or modifier of the declaration whose
        keyword is at keyword; an earlier line counts only when it holds nothing else."""
        masked = self.masked
        start = committed = position = keyword
        own_line = True
        while True:
            line_start = self.line_starts[bisect.bisect_right(self.line_starts, position) - 1]
            i = last_nonspace(masked, line_start, position)
            if i < line_start:
                if line_start == 0:
                    return start
                committed, own_line, position = start, False, line_start - 1
                continue
            if masked[i] in '{;}':
                return start
            token = self.modifier_before(i, allow_fun)
            if token is None:
                return start if own_line else committed
            start = position = token

    def modifier_before(self, i, allow_fun):
        """The start of the annotation or modifier that ends at offset i, or None."""
        masked = self.masked
        char = masked[i]
        if char in ')]':
            opener = self.closers.get(i)
            return None if opener is None else self.annotation_start(opener, char == ']')
        word = KOTLIN_WORD_END.search(masked, max(0, i - 60), i + 1)
        if not word:
            return None
        before = masked[word.start() - 1] if word.start() else ' '
        if before in '@.:`' or before.isalnum() or before == '_':
            return self.annotation_start(i + 1, False)
        if word.group() in KOTLIN_MODIFIERS or (allow_fun and word.group() == 'fun'):
            return word.start()
        return None

    def annotation_start(self, end, bracketed):
        """The offset of the '@' of an annotation whose name ends at end (@Name,
        @a.b.Name, @get:Name, and @[...] when bracketed), or None; file annotations
        (@file:...) belong to no declaration."""
        masked = self.masked
        k = end
        while k > 0 and end - k < 200 and KOTLIN_ANNOTATION_NAME_CHAR.match(masked, k - 1):
            k -= 1
        if k == 0 or masked[k - 1] != '@' or (k == end and not bracketed):
            return None
        if k >= 2 and (masked[k - 2].isalnum() or masked[k - 2] == '_'):
            return None     # a label or this@Outer
        return None if masked.startswith('file:', k) else k - 1

    def words_between(self, start, end):
        """The modifier words between a declaration's start and its keyword."""
        return set(KOTLIN_MODIFIER_WORD.findall(self.masked, start, end)) & KOTLIN_MODIFIERS

    # --- forward: headers and expressions ------------------------------------------

    def extent(self, position, header):
        """Where the header (header=True: it stops before a '{' body or an '=') or the
        expression starting at position ends, skipping bracketed parts.  Each position
        it goes on from with nothing pending keeps the answer, so a line of
        'val a = val a = ...' is read once, not once per val (remembered)."""
        return remembered(self.extents, lambda passed: self.extent_from(position, header,
                                                                         passed))

    def extent_from(self, position, header, passed):
        """extent's reading; passed gets the (position, header) keys whose answer is
        this one."""
        masked, pairs, stops = self.masked, self.pairs, self.stops
        last = position - 1
        while True:
            place = bisect.bisect_left(stops, position)     # the next of KOTLIN_EXTENT_STOPS
            stop = stops[place] if place < len(stops) else len(masked)
            solid = self.last_solid(position, stop)
            if last == position - 1 or solid >= position:   # nothing before counts now
                if (position, header) in self.extents:
                    return self.extents[position, header]
                passed.append((position, header))
            last = max(last, solid)
            if place == len(stops):
                return KotlinExtent(last)
            char = masked[stop]
            if char == '{' and header:
                return KotlinExtent(last, brace=stop) if stop in pairs else KotlinExtent(last)
            if char in '([{':
                close = pairs.get(stop)
                if close is None:
                    return KotlinExtent(last)
                last, position = close, close + 1
            elif char == '=':
                if header and masked[stop + 1:stop + 2] != '=' and masked[stop - 1] not in '=!<>':
                    return KotlinExtent(last, equals=stop)
                last, position = stop, stop + 1
            elif char == '\n' and self.literal_end(stop):
                position = self.literal_end(stop)
                last = position - 1
            elif char == '\n' and self.continues(last, stop):
                position = stop + 1
            else:
                return KotlinExtent(last)

    def literal_end(self, offset):
        """The end of the multi-line string that offset is inside, or 0."""
        place = bisect.bisect_right(self.long_literal_starts, offset) - 1
        if place >= 0 and self.long_literals[place][1] > offset:
            return self.long_literals[place][1]
        return 0

    def last_solid(self, position, stop):
        """The offset of the last character in [position, stop) that is code or part
        of a string (strings are blank in the masked text, comments do not count), or
        -1."""
        while stop > position:
            code = last_nonspace(self.masked, position, stop)
            solid = last_nonspace(self.text, position, stop)
            if solid <= code:
                return code if code >= position else -1
            place = bisect.bisect_right(self.comment_starts, solid) - 1
            if place < 0 or self.comments[place][1] <= solid:
                return solid
            stop = max(self.comments[place][0], position)
        return -1

    def continues(self, last, newline):
        """Whether a statement whose last character so far is at last goes on after the
        newline at newline: an unfinished line, or a next line that fwcd's scanner
        joins to it (starting with an operator, '.', '(', '{', else, ...)."""
        masked = self.masked
        following = KOTLIN_SPACE_AT.match(masked, newline).end()
        if following >= len(masked) or last < 0:
            return False
        if self.dangling(last):
            return True
        char = masked[following]
        if char in KOTLIN_CONTINUING_CHARS:
            return True
        if char in '+-':
            after = masked[following + 1:following + 2]
            return after != char and not after.isdigit()
        if char == '!':
            return masked.startswith('=', following + 1)
        return bool(KOTLIN_CONTINUING_WORDS.match(masked, following))

    def dangling(self, last):
        """Whether the line ending at last cannot end a statement (a binary operator,
        a comma, '->', else, if (...), an annotation of the expression that follows)."""
        masked = self.masked
        char = masked[last]
        if char in KOTLIN_DANGLING_CHARS:
            return True
        if char in '+-!':
            return masked[last - 1:last] != char
        if char == '>':
            return masked[last - 1:last] == '-'
        if char == ')':
            opener = self.closers.get(last)
            if opener is None:
                return False
            word = KOTLIN_WORD_END.search(masked[max(0, opener - 20):opener].rstrip())
            return bool(word) and word.group() in KOTLIN_CONDITION_WORDS or \
                self.annotation_start(opener, False) is not None
        word = KOTLIN_WORD_END.search(masked, max(0, last - 20), last + 1)
        return bool(word) and (word.group() in KOTLIN_DANGLING_WORDS or
                               self.annotation_start(last + 1, False) is not None)

    def skip_angles(self, position):
        """The offset after the <...> at position, or -1 when it does not close within
        KOTLIN_ANGLES_REACH characters (which keeps a run of unclosed '<' linear)."""
        masked, depth, limit = self.masked, 0, position + KOTLIN_ANGLES_REACH
        while True:
            match = KOTLIN_ANGLES.search(masked, position, limit)
            if not match or match.group() in ('{', '}', ';', '=', ')'):
                return -1
            token, position = match.group(), match.end()
            if token == '(':
                close = self.pairs.get(match.start())
                if close is None:
                    return -1
                position = close + 1
            elif token == '<':
                depth += 1
            elif token == '>':
                depth -= 1
                if depth == 0:
                    return position

    def body_of(self, extent):
        """(end offset, body region (first, last) or None) of a declaration whose
        header stopped at extent: a '{...}' body, an '= expression' or none."""
        if extent.brace >= 0:
            close = self.pairs[extent.brace]
            return close, (extent.brace, close)
        if extent.equals >= 0:
            last = self.extent(extent.equals + 1, False).last
            return last, (extent.equals + 1, last)
        return extent.last, None

    # --- declarations --------------------------------------------------------------

    def add(self, name, kind, start, end, region, **fields):
        """Record a declaration, named after the enclosing scopes, and open its scope."""
        symbol = '.'.join([s.name for s in self.scopes if s.name] + [name])
        body = region if region and self.masked.startswith('{', region[0]) else None
        self.decls.append(Decl(symbol, kind, start, end, body, region is not None, **fields))
        self.header_end = region[0] if region else end + 1
        if region and len(self.scopes) < NESTING_LIMIT:     # (fun a() = fun b() = ...)
            self.scopes.append(KotlinScope(region[1], name, kind not in FUNCTION_KINDS))

    def in_class(self):
        """Whether the innermost scope is a class, object or interface body."""
        return bool(self.scopes) and self.scopes[-1].is_class

    def read_fun(self, keyword):
        """fun [<T>] [Receiver.]name(...) [: Type] [where ...] [{...} | = expr]."""
        masked = self.masked
        position = KOTLIN_SPACE_AT.match(masked, keyword + 3).end()
        if KOTLIN_INTERFACE_AT.match(masked, position):
            return
        if masked.startswith('<', position):
            position = self.skip_angles(position)
            if position < 0:
                return
        signature = self.signature(position)
        if not signature:
            return
        name, name_start, receiver_end, params = signature
        receiver = self.text[position:receiver_end].strip() if receiver_end > position else ''
        start = self.declaration_start(keyword)
        end, region = self.body_of(self.extent(params + 1, True))
        kind = 'method' if self.in_class() else 'function'
        self.add(name, kind, start, end, region, receiver=receiver, has_body=region is not None)

    def signature(self, position):
        """(name, name offset, end of the receiver, offset of the parameters' ')') of
        the [Receiver.]name( that starts at position, or None (an anonymous fun, or two
        names in a row: no signature, and reading on would read 'fun fun fun ...' again
        from each fun)."""
        masked, name, receiver_end = self.masked, None, position
        while True:
            token = KOTLIN_SIGNATURE_TOKEN.match(masked, position)
            if not token:
                return None
            position = token.end()
            if token.group(1):
                if name is not None:
                    return None
                name = token.start(1)
                continue
            symbol, at = token.group(2), token.start(2)
            if symbol == '(':
                close = self.pairs.get(at)
                if close is None:
                    return None
                after = KOTLIN_SPACE_AT.match(masked, close + 1).end()
                if not masked.startswith(('.', '?.'), after):
                    return None if name is None else (
                        self.text[name:at].rstrip(), name, receiver_end, close)
                position = close + 1
            elif symbol == '<':
                position = self.skip_angles(at)
                if position < 0:
                    return None
            elif symbol != '?':
                receiver_end = at + len(symbol) - 1     # String?.f keeps the '?'
            name = None

    def read_class(self, keyword):
        """[modifiers] class NAME [<T>] [ctor] [: supertypes] [{...}], not X::class."""
        if self.masked[keyword - 2:keyword] == '::':
            return
        self.read_type(keyword, keyword + 5, 'class')

    def read_interface(self, keyword):
        """[modifiers] [fun] interface NAME [<T>] [: supertypes] [{...}]."""
        self.read_type(keyword, keyword + 9, 'interface')

    def read_type(self, keyword, after, word):
        """A class or interface declaration whose keyword (word) ends at after."""
        name = KOTLIN_IDENT_AT.match(self.masked, after)
        if not name:
            return
        start = self.declaration_start(keyword, allow_fun=word == 'interface')
        modifiers = self.words_between(start, keyword)
        kind = KOTLIN_KINDS.get(word) or next((KOTLIN_KINDS[m] for m in ('enum', 'annotation')
                                        if m in modifiers), 'class')
        extent = self.extent(name.end(), True)
        primary = KOTLIN_PRIMARY_CONSTRUCTOR.match(self.masked, extent.last + 1)
        if extent.brace < 0 and primary:    # class Builder\n  @JvmOverloads\n  constructor(
            extent = self.extent(primary.end(), True)
        end, region = self.body_of(extent._replace(equals=-1))
        self.add(self.text[name.start(1):name.end()], kind, start, end, region)
        if kind == 'enum' and region:
            for entry in self.enum_entry_bodies(region[0]):
                bisect.insort(self.entries, entry)

    def enum_entry_bodies(self, brace):
        """(open, close, name) of the entries with a body of the enum class whose body
        opens at brace (CHUNKED { override fun setBody() ... }): the scope of what they
        declare, as in Java and in Kotlin's class names (TransferKind$CHUNKED)."""
        masked, found, position = self.masked, [], brace + 1
        while True:
            position = KOTLIN_ENTRY_ANNOTATIONS.match(masked, position).end()
            name = KOTLIN_IDENT_AT.match(masked, position)
            if not name:
                return found
            position = KOTLIN_SPACE_AT.match(masked, name.end()).end()
            if masked.startswith('(', position) and position in self.pairs:
                position = KOTLIN_SPACE_AT.match(masked, self.pairs[position] + 1).end()
            if masked.startswith('{', position) and position in self.pairs:
                found.append((position, self.pairs[position], self.text[name.start(1):name.end()]))
                position = KOTLIN_SPACE_AT.match(masked, self.pairs[position] + 1).end()
            if not masked.startswith(',', position):
                return found
            position += 1

    def read_object(self, keyword):
        """object NAME ..., companion object [NAME] ..., or an object literal (an
        anonymous scope, not a definition)."""
        masked = self.masked
        name = KOTLIN_IDENT_AT.match(masked, keyword + 6)
        start = self.declaration_start(keyword)
        extent = self.extent(name.end() if name else keyword + 6, True)._replace(equals=-1)
        end, region = self.body_of(extent)
        if name:
            self.add(self.text[name.start(1):name.end()], 'object', start, end, region)
        elif 'companion' in self.words_between(start, keyword):
            self.add('Companion', 'object', start, end, region)
        elif region:
            self.header_end = region[0]
            self.scopes.append(KotlinScope(region[1], '<anonymous>', True))

    def read_val(self, keyword):
        """val/var [<T>] [Receiver.]name [: Type] [= value | by delegate], in a class or a
        file (a local variable has no accessors, and leaves its accessors' property be):
        kept for the get and set after it, and the scope of what its value declares
        (object : Codec {...} is BOOLEAN's)."""
        if self.scopes and not self.scopes[-1].is_class:
            return
        self.property = None
        masked = self.masked
        position = KOTLIN_SPACE_AT.match(masked, keyword + 3).end()
        if masked.startswith('<', position):
            position = self.skip_angles(position)
        name = KOTLIN_IDENT_AT.match(masked, position) if position >= 0 else None
        while name:                                 # an extension property: List<T>?.name
            after = self.skip_angles(name.end()) if masked.startswith('<', name.end()) \
                else name.end()
            if after < 0:
                break
            after += masked.startswith('?', after)
            if not masked.startswith('.', after):
                break
            name = KOTLIN_IDENT_AT.match(masked, after + 1)
        if not name or masked.startswith('(', name.end()):          # val (a, b) = pair
            return
        last = self.extent(name.end(), False).last
        property_name = self.text[name.start(1):name.end()]
        receiver = self.text[position:name.start(1)].strip().rstrip('.')
        self.property = KotlinProperty(property_name, self.declaration_start(keyword),
                                       name.end(), last, 0, receiver)
        brace = bisect.bisect_left(self.braces, name.end())
        if brace < len(self.braces) and self.braces[brace] < last:
            self.scopes.append(KotlinScope(last, property_name, False))

    read_var = read_val

    def read_init(self, keyword):
        """An initializer block, init {...}: a scope without a name, whose variables
        are local (read_val)."""
        brace = KOTLIN_SPACE_AT.match(self.masked, keyword + 4).end()
        if self.in_class() and self.masked.startswith('{', brace) and brace in self.pairs:
            self.scopes.append(KotlinScope(self.pairs[brace], '', False))

    def read_get(self, keyword):
        """A getter: get() {...} or get() = expr, after its property (read_val) or
        its setter.  It is a chunk named after the property; the first accessor starts
        where the property does, so it has the property's doc comment."""
        self.read_accessor(keyword, 'get', 'getter')

    def read_set(self, keyword):
        """A setter: set(value) {...} or set(value) = expr (see read_get)."""
        self.read_accessor(keyword, 'set', 'setter')

    def read_accessor(self, keyword, word, kind):
        """A getter or setter of the property just read, when one follows it (when
        code does, none can)."""
        found, masked = self.property, self.masked
        start = self.declaration_start(keyword)
        if found is None or keyword < found.name_end or (found.accessors and
                                                         start <= found.last):
            return                  # var get: Int; get(key) in a getter's body
        if masked[found.last + 1:start].strip(' \t\r\n;'):
            self.property = None
            return
        paren = KOTLIN_SPACE_AT.match(masked, keyword + 3).end()
        parameters = KOTLIN_ACCESSOR_PARAMETERS[word].match(masked, paren)
        end, region = self.body_of(self.extent(parameters.end(), True)) if parameters \
            else (keyword + 2, None)
        self.property = found._replace(last=end, accessors=found.accessors + 1)
        if region:                  # find() closed the scopes that end before keyword
            if self.scopes and not self.scopes[-1].is_class and \
                    self.scopes[-1].name == found.name:
                self.scopes.pop()           # the property's own, when its value ran on
            self.add(found.name, kind, start if found.accessors else found.start, end, region,
                     receiver=found.receiver)

    def read_typealias(self, keyword):
        """typealias NAME [<T>] = type."""
        name = KOTLIN_IDENT_AT.match(self.masked, keyword + 9)
        if not name:
            return
        extent = self.extent(name.end(), True)._replace(brace=-1)
        end, _ = self.body_of(extent)
        self.add(self.text[name.start(1):name.end()], 'type', self.declaration_start(keyword),
                 end, None)

    def read_constructor(self, keyword):
        """A secondary constructor in a class body: constructor(...) [: this(...)] [{...}],
        named after its class."""
        masked = self.masked
        paren = KOTLIN_SPACE_AT.match(masked, keyword + 11).end()
        if not self.in_class() or not masked.startswith('(', paren) or paren not in self.pairs:
            return
        extent = self.extent(self.pairs[paren] + 1, True)._replace(equals=-1)
        end, region = self.body_of(extent)
        region = region or (keyword + 11, end)
        self.add(self.scopes[-1].name, 'constructor', self.declaration_start(keyword), end,
                 region)



def kotlin_declarations(scanned):
    """The Decls of a scanned Kotlin file, outer before inner."""
    decls = KotlinFile(scanned).find()
    return sorted(decls, key=lambda d: (d.start, -d.end))


# --- Chunking: JavaScript and TypeScript, tokens --------------------------------------
# Definitions named as the tree-sitter grammars name them: functions, classes and their
# members, functions bound to names (const f = () => ..., X.prototype.m = function,
# obj = {key() {}}), TS interfaces, type aliases, enums and namespaces.  The finder
# works on the scanner's masked text, its bracket pairs and its literal spans.

JS_IDENT_START = re.compile(r'[^\W\d]|\$')
JS_TOKEN = re.compile(r'\s*(?:(?P<lit>\0)|(?P<word>#?(?:[^\W\d]|\$)[\w$]*)|(?P<num>\.?\d[\w.]*)'
                   r'|(?P<punct>=>|\.\.\.|\?\.(?!\d)|[=!]==?|&&|\|\||\?\?|\+\+|--'
                   r'|[-+*/%&|^<>]=|\S))')
JS_NONSPACE = re.compile(r'\S')
JS_ASYNC_GENERIC = re.compile(r'async\s*<')
JS_CHAINED_ASSIGNMENT = re.compile(r'[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*\s*=(?![=>])\s*')
JS_CALLEE = re.compile(r'(?!(?:new|typeof|await|void|function|class)\b)[A-Za-z_$][\w$]*'
                       r'(?:\s*\.\s*[A-Za-z_$][\w$]*)*\s*(?=[(<])')
JS_FUNCTION_START = re.compile(r'async\b|function\b|[(<]|(?:[^\W\d]|\$)[\w$]*\s*=>')
JS_DECORATOR_TAIL = re.compile(r'@\s*[\w$]+(?:\s*\.\s*[\w$]+)*\s*\Z')
JS_ASSIGNED_TAIL = re.compile(r'(?<![\w$.#])((?:this|(?:[^\W\d]|\$)[\w$]*)'
                           r'(?:\s*\.\s*#?(?:[^\W\d]|\$)[\w$]*)*)\s*\Z')
JS_CASE_CLAUSE = re.compile(r'(?<![\w$.])(?:case\s[^?]*|default\s*)\Z')
JS_ANCHOR_WORDS = ('function', 'class', 'const', 'let', 'var', 'interface', 'enum',
                'namespace', 'module', 'type')
JS_LITERAL_MARK = '\0'      # stands for a literal's first character in JsFile.marked
JS_NAME_CHAR = re.compile(r'[\w$]')
JS_EXPRESSION_EVENT = re.compile(r'[,;)\]}(\[{\n\0<]')
JS_ANGLE_EVENT = re.compile(r'=>|&&|\|\||[<>()\[\]{};]')
JS_MODULE_CALLEES = frozenset(('define', 'require'))    # AMD: their callbacks are modules
JS_AFTER_TYPE_ARGUMENTS = re.compile(r'[({]|=>')
JS_TYPE_ARGUMENTS_REACH = 4000  # how far a call's type arguments f<A, B>(x) may reach ...
JS_STATEMENT_WORD = re.compile(r'(?<![\w$.])(?:function|let|var|return|if|for|while|class|'
                               r'export|throw)(?![\w$])')   # ... holding none (<const T> is one)

JS_KEYWORDS = frozenset('''if for while switch catch with return typeof instanceof in of new
delete void throw case do else function class const let var await yield import export
super this'''.split())
JS_OBJECT_AFTER_WORDS = frozenset('return default yield await typeof void delete throw in of '
                               'case new extends'.split())
JS_OBJECT_AFTER_CHARS = frozenset('=(,[?:&|!+-*%~^<>')
JS_LABEL_AFTER_WORDS = frozenset(('else', 'do'))
JS_TYPE_AFTER_WORDS = frozenset('as satisfies keyof'.split())
JS_TYPE_PREFIX_WORDS = frozenset('typeof keyof readonly unique infer asserts new abstract'.split())
JS_MEMBER_MODIFIERS = frozenset('''static public private protected readonly abstract override
declare async get set accessor'''.split())
JS_OBJECT_MODIFIERS = frozenset('get set async'.split())
JS_INTERFACE_MODIFIERS = frozenset('readonly get set'.split())
JS_NAME_FOLLOWERS = frozenset('( = ; : ? ! < } ,'.split())
JS_CONTINUE_WORDS = frozenset('instanceof in of typeof new delete void await as satisfies '
                           'extends keyof'.split())
JS_NEXT_LINE_CONTINUES = frozenset(',.:;*%><=[(?^|&/')
JS_PREFIX_WORDS = frozenset('export default declare'.split())
JS_CLASS_PREFIX_WORDS = JS_PREFIX_WORDS | {'abstract'}
JS_ENUM_PREFIX_WORDS = JS_PREFIX_WORDS | {'const'}
JS_CONDITIONAL_TYPE = 'extends'
JS_MAX_BACK = 400          # how far back a return type or type parameters may reach
JS_MAX_NESTING = 100       # blocks nested_walker deeper than this are not walked
JS_BODILESS = 'bodiless'   # the body of a signature, for JsFile.emit


class JsToken(NamedTuple):
    """One token of the masked text: kind is word, num, punct, lit (a string, template,
    regex or JSX element, blank in the masked text) or eof."""
    kind: str
    start: int
    end: int
    text: str


class JsFunction(NamedTuple):
    """A function or arrow function found at a position: where it starts (async,
    function, type parameters or parameters) and where its parameters start, its own
    name, its body block or the span of its expression body, and the offset of its
    last character."""
    start: int
    parameters: int
    name: str
    arrow: bool
    body: object        # the Block of its braces, or None
    expression: tuple   # (start, end) of an arrow's expression body, or None
    end: int


class JsDeclarator(NamedTuple):
    """One declarator of a const/let/var declaration: its name ('' for a destructuring
    pattern), offsets of the name, of its type annotation and value (spans, or None),
    and of its last character."""
    name: str
    start: int
    annotation: tuple
    value: tuple
    end: int


class JsRegion(NamedTuple):
    """Code being walked: the text of block between offsets low and high; head when
    it is a function's parameters (where a = f is a default value, not an assignment)."""
    block: object
    low: int
    high: int
    head: bool


class JsBinding(NamedTuple):
    """What a function or class value is assigned to: a dotted path (['this', 'x'],
    ['X', 'prototype', 'm']) or ['default'] for export default; start is where the
    definition then starts, statement whether it is a whole expression statement."""
    parts: list
    start: int
    statement: bool


def nested_walker(walker):
    """Run a walker one level of nesting deeper; past JS_MAX_NESTING levels it does
    nothing (definitions that deep are not worth a stack overflow)."""
    def run(self, *args):
        if self.nesting >= JS_MAX_NESTING:
            return
        self.nesting += 1
        try:
            walker(self, *args)
        finally:
            self.nesting -= 1
    run.__name__, run.__doc__ = walker.__name__, walker.__doc__
    return run


def literals_marked(masked, starts):
    """masked with JS_LITERAL_MARK at each literal's first character, so that a search
    for the next token finds literals too."""
    pieces, position = [], 0
    for start in starts:
        pieces.append(masked[position:start])
        pieces.append(JS_LITERAL_MARK)
        position = start + 1
    pieces.append(masked[position:])
    return ''.join(pieces)


def anchors_of(masked):
    """{offset: word} of the keywords the code walker stops at (JS_ANCHOR_WORDS, not
    part of a longer name nor a property) and of every '=>'.  str.find is much faster
    than a regular expression with alternatives here."""
    found = {}
    position = masked.find('=>')
    while position >= 0:
        found[position] = '=>'
        position = masked.find('=>', position + 2)
    for word in JS_ANCHOR_WORDS:
        position = masked.find(word)
        while position >= 0:
            end = position + len(word)
            if (position == 0 or not is_name_char(masked[position - 1], '.#')) and \
                    (end == len(masked) or not is_name_char(masked[end], '')):
                found[position] = word
            position = masked.find(word, end)
    return found


def is_name_char(char, others):
    """Whether char can be part of an identifier (or is one of others)."""
    return char.isalnum() or char in '_$' or char in others


def names_of(scope):
    """The names in a scope ((name, kind) pairs, outermost first)."""
    return [name for name, _ in scope]


class JsReader:
    """The JavaScript/TypeScript finder's state for one file, and how it reads
    tokens, brackets, types and expressions."""

    def __init__(self, scanned):
        self.root = block_tree(scanned)
        self.text, self.masked, self.pairs = scanned.text, scanned.masked, scanned.pairs
        self.closers = {close: opener for opener, close in self.pairs.items()}
        self.literal_end = {}
        for start, end in scanned.literals:
            self.literal_end.setdefault(start, end)
        self.marked = literals_marked(self.masked, sorted(self.literal_end))
        self.literal_ends = sorted(end for _, end in scanned.literals)
        self.anchor_words = anchors_of(self.masked)
        self.anchors = sorted(self.anchor_words)
        self.blocks = {}
        self.child_opens = {}
        self.index_blocks(self.root)
        self.decls = []
        self.declarator_values = set()      # where each declarator's value starts
        self.nesting = 0                    # how many walkers are running
        self.bodies = {}                    # (position, limit) -> find_body's answer
        self.angles = {}                    # (start, limit) -> skip_angle's answer

    def index_blocks(self, root):
        """Map each block's opening offset to the block, and to its children's openings."""
        stack = [root]
        while stack:
            block = stack.pop()
            self.blocks[block.open] = block
            self.child_opens[block.open] = [child.open for child in block.children]
            stack.extend(block.children)

    # --- tokens ------------------------------------------------------------------------

    def after(self, position):
        """The offset of the first non-space character or literal at or after position."""
        match = JS_NONSPACE.search(self.marked, position)
        return match.start() if match else len(self.masked)

    def before(self, position):
        """The offset of the last non-space character before position, or -1; a
        literal's last character counts (it is a blank in the masked text)."""
        index = bisect.bisect_right(self.literal_ends, position) - 1
        literal = self.literal_ends[index] - 1 if index >= 0 else -1
        size = 64
        while True:
            low = max(0, position - size, literal + 1)
            chunk = self.masked[low:position].rstrip()
            if chunk:
                return low + len(chunk) - 1
            if low <= literal + 1:
                return literal
            size *= 4

    def token(self, position, limit):
        """The token at or after position (a literal counts as one token)."""
        found = JS_TOKEN.match(self.marked, position, limit)
        kind = found.lastgroup if found else None
        if kind is None:
            return JsToken('eof', limit, limit, '')
        first = found.start(kind)
        if kind == 'lit':
            end = min(self.literal_end.get(first, first + 1), limit)
            return JsToken('lit', first, end, self.text[first:end])
        return JsToken(kind, first, found.end(), found.group(kind))

    def word_ending(self, last):
        """(start, word) of the identifier whose last character is at last, or None."""
        masked, start = self.masked, last
        while start >= 0 and (masked[start].isalnum() or masked[start] in '_$'):
            start -= 1
        if start == last or not JS_IDENT_START.match(masked, start + 1):
            return None
        if start >= 0 and masked[start] == '#':
            start -= 1
        return start + 1, masked[start + 1:last + 1]

    def word_before(self, position):
        """(start, word) of the identifier just before position, or None."""
        last = self.before(position)
        return self.word_ending(last) if last >= 0 else None

    def next_is(self, position, char):
        """Whether the next non-space character at or after position is char."""
        following = self.after(position)
        return following < len(self.masked) and self.masked[following] == char

    # --- brackets, types, expressions ----------------------------------------------------

    def skip_angle(self, start, limit):
        """The offset after the '>' that closes the '<' at start, or None when what
        follows is not a type argument list.  The answer for each '<' read on the way
        is kept too, so 'a<a<a<...' reads each once, not once per '<' before it."""
        if (start, limit) in self.angles:
            return self.angles[start, limit]
        masked, pairs, position, opened = self.masked, self.pairs, start, []
        while True:
            found = JS_ANGLE_EVENT.search(masked, position, limit)
            char = found.group() if found else ''
            if char == '<':
                opened.append(found.start())
            elif char == '>':
                self.angles[opened.pop(), limit] = found.end()
                if not opened:
                    return found.end()
            elif char and char in '([{':
                close = pairs.get(found.start())
                if close is not None and close < limit:
                    position = close + 1
                    continue
                char = ''
            elif char != '=>':
                char = ''
            if not char:
                self.angles.update(dict.fromkeys(((o, limit) for o in opened), None))
                return None
            position = found.end()

    def skip_angle_back(self, last):
        """The offset of the '<' that opens the '>' at last, or None."""
        masked, depth, position, low = self.masked, 0, last, max(0, last - JS_MAX_BACK)
        while position >= low:
            char = masked[position]
            if char == '>' and position > 0 and masked[position - 1] == '=':
                position -= 2
                continue
            if char == '>':
                depth += 1
            elif char == '<':
                depth -= 1
                if depth == 0:
                    return position
            elif char in ')]}':
                opener = self.closers.get(position)
                if opener is None:
                    return None
                position = opener
            elif char in '([{;':
                return None
            position -= 1
        return None

    def skip_type(self, position, limit, arrow=False):
        """The offset just after the TypeScript type that starts at position (position
        itself when there is none).  With arrow, a '=>' ends the type (an arrow
        function's return type)."""
        end, expect, conditional, member = position, True, 0, False
        while True:
            token = self.token(position, limit)
            text = token.text
            if token.kind == 'eof':
                return end
            if expect:
                if token.kind in ('lit', 'num') or (token.kind == 'word' and (
                        member or text not in JS_TYPE_PREFIX_WORDS)):   # z.infer<T>: a name
                    position = end = token.end
                    expect = member = False
                elif token.kind == 'word':
                    position = end = token.end
                elif text in '([{' and token.start in self.pairs:
                    position = end = self.pairs[token.start] + 1
                    expect = False
                elif text == '<':
                    following = self.skip_angle(token.start, limit)
                    if following is None:
                        return end
                    position = following
                elif text in ('|', '&', '-', '...'):
                    position = token.end
                else:
                    return end
                continue
            if (text in '<[' or text in ('is', JS_CONDITIONAL_TYPE)) and \
                    self.masked.find('\n', end, token.start) >= 0:
                return end              # T\n[key](): a member of its own, not T[key]
            if text == '<':
                following = self.skip_angle(token.start, limit)
                if following is None:
                    return end
                position = end = following
            elif text == '[' and token.start in self.pairs:
                position = end = self.pairs[token.start] + 1
            elif text == '=>' and arrow and not conditional:
                return end
            elif text in ('.', '|', '&', '=>') or (text == '?' and conditional):
                position, expect, member = token.end, True, text == '.'
            elif text == ':' and conditional:
                position, expect, conditional = token.end, True, conditional - 1
            elif token.kind == 'word' and text in ('is', JS_CONDITIONAL_TYPE):
                position, expect = token.end, True
                conditional += text == JS_CONDITIONAL_TYPE
            else:
                return end

    def expression_end(self, position, limit):
        """The offset of the last character of the expression that starts at position:
        it ends before a ',' ';' or closing bracket of its own level, or at a line
        break where a semicolon would be inserted.  position - 1 when it is empty."""
        marked, pairs = self.marked, self.pairs
        begin = last = position - 1
        if JS_ASYNC_GENERIC.match(marked, position):
            position = self.after(position + 5)
        if marked.startswith('<', position):     # <T>(x) => ..., <Type>value
            after_angle = self.skip_angle(position, limit)
            if after_angle is not None:
                last, position = after_angle - 1, after_angle
        while position < limit:
            found = JS_EXPRESSION_EVENT.search(marked, position, limit)
            stop = found.start() if found else limit
            segment = len(marked[position:stop].rstrip())
            if segment:
                last = position + segment - 1
            if not found:
                break
            char, at = found.group(), found.start()
            if char == JS_LITERAL_MARK:
                last = min(self.literal_end.get(at, at + 1), limit) - 1
                position = last + 1
            elif char in '([{':
                close = pairs.get(at)
                if close is None or close >= limit:
                    return last
                last, position = close, close + 1
            elif char == '\n':
                if last > begin and not self.continues(last, at + 1, limit):
                    return last
                position = at + 1
            elif char == '<':       # type arguments: f<A, B>(x), (): R<A, B> => or {,
                reach = min(limit, at + JS_TYPE_ARGUMENTS_REACH)    # => <A, B>(x) =>
                after_angle = self.skip_angle(at, reach) if JS_NAME_CHAR.match(
                    marked, at - 1) or marked.startswith('=>', self.before(at) - 1) else None
                following = after_angle is not None and self.after(after_angle)
                if following and JS_AFTER_TYPE_ARGUMENTS.match(marked, following) \
                        and not JS_STATEMENT_WORD.search(marked, at, after_angle):
                    last, position = after_angle - 1, after_angle
                else:
                    position = at + 1
            else:
                return last
        return last

    def continues(self, last, position, limit):
        """Whether the expression whose last character so far is at last goes on after
        the line break before position (no semicolon is inserted there)."""
        masked = self.masked
        char = masked[last]
        ended = char == '!' and (JS_NAME_CHAR.match(masked, last - 1) or
                                 masked[last - 1] in ')]') or \
            char == '>' and masked[last - 1] != '=' and self.skip_angle_back(last) is not None
        if char in '=+-*/%&|^!~?:<>,.(' and not ended:      # x! and as Map<K, V> can end
            return not (char in '+-' and last > 0 and masked[last - 1] == char)
        if char != ' ':
            word = self.word_ending(last)
            if word and word[1] in JS_CONTINUE_WORDS and \
                    not masked.startswith('.', self.before(word[0])):   # Effect.void
                return True
        token = self.token(position, limit)
        if token.kind == 'lit':
            return token.text.startswith('`')
        if token.kind == 'eof' or not token.text:
            return False
        if token.text[0] in '+-':
            return token.text not in ('++', '--')
        if token.text[0] in JS_NEXT_LINE_CONTINUES:
            return True
        return token.text in ('!=', '!==', 'in', 'instanceof')

    def after_parameters(self, close, limit, arrow=False):
        """For the ')' of a parameter list at close: (offset of what follows its return
        type annotation, offset of the signature's last character)."""
        following = self.after(close + 1)
        if following < limit and self.masked.startswith(':', following):
            type_end = self.skip_type(following + 1, limit, arrow)
            if type_end > following + 1:
                return self.after(type_end), type_end - 1
        return following, close


# --- Chunking: JavaScript and TypeScript, code ----------------------------------------
# Forward parsers where the shape is known (declarations, functions, classes) and
# anchors (function, =>, class, const ...) elsewhere.

class JsCode(JsReader):
    """How the finder walks code: functions, classes and the names they are bound to."""

    # --- functions and classes ------------------------------------------------------------

    def parse_function(self, position, limit):
        """The function or arrow function that starts at position, or None."""
        first = self.token(position, limit)
        current = first
        if first.kind == 'word' and first.text == 'async':
            following = self.token(first.end, limit)
            if following.text in ('function', '(', '<') or (
                    following.kind == 'word' and self.masked.startswith(
                        '=>', self.after(following.end))):
                current = following
        if current.text == 'function':
            return self.function_keyword(first.start, current, limit)
        if current.text == '<':
            after_angle = self.skip_angle(current.start, limit)
            if after_angle is None:
                return None
            current = self.token(after_angle, limit)
        parameters = current.start
        if current.text == '(' and current.start in self.pairs:
            arrow, _ = self.after_parameters(self.pairs[current.start], limit, True)
        elif current.kind == 'word' and current.text not in JS_KEYWORDS:
            arrow = self.after(current.end)
        else:
            return None
        if arrow >= limit or not self.masked.startswith('=>', arrow):
            return None
        body = self.after(arrow + 2)
        if body < limit and self.masked[body] == '{' and body in self.blocks:
            return JsFunction(first.start, parameters, '', True, self.blocks[body], None,
                            self.pairs[body])
        end = self.expression_end(body, limit)
        if end < body:
            return None
        return JsFunction(first.start, parameters, '', True, None, (body, end), end)

    def function_keyword(self, start, keyword, limit):
        """The function whose 'function' keyword is the token keyword (start: where it
        starts, at async); its body is None for a signature."""
        current = self.token(keyword.end, limit)
        if current.text == '*':
            current = self.token(current.end, limit)
        name = ''
        if current.kind == 'word' and not current.text.startswith('#'):
            name = current.text
            current = self.token(current.end, limit)
        if current.text == '<':
            after_angle = self.skip_angle(current.start, limit)
            if after_angle is None:
                return None
            current = self.token(after_angle, limit)
        if current.text != '(' or current.start not in self.pairs:
            return None
        body, signature_end = self.after_parameters(self.pairs[current.start], limit)
        if body < limit and self.masked[body] == '{' and body in self.blocks:
            return JsFunction(start, current.start, name, False, self.blocks[body], None,
                            self.pairs[body])
        return JsFunction(start, current.start, name, False, None, None, signature_end)

    def find_body(self, position, limit):
        """The block that opens a class or interface body after its name, type
        parameters and heritage clauses, which start at position; or None.  Each
        position read on the way keeps the answer, so 'class class class ...' reads
        each word once, not once per keyword before it (remembered)."""
        return remembered(self.bodies, lambda passed: self.find_body_from(position, limit,
                                                                           passed))

    def find_body_from(self, position, limit, passed):
        """find_body's reading; passed gets the (position, limit) keys whose answer is
        this one."""
        while (position, limit) not in self.bodies:
            passed.append((position, limit))
            token = self.token(position, limit)
            if token.text == '{':
                return self.blocks.get(token.start)
            if token.text == '<':
                position = self.skip_angle(token.start, limit)
                if position is None:
                    return None
            elif token.text in ('(', '[') and token.start in self.pairs:
                position = self.pairs[token.start] + 1
            elif token.kind in ('word', 'lit', 'num') or token.text in ('.', ','):
                position = token.end
            else:
                return None
        return self.bodies[position, limit]

    def parse_class(self, keyword, limit):
        """(own name, body block) of the class whose 'class' keyword is at keyword."""
        token = self.token(keyword + 5, limit)
        name = ''
        if token.kind == 'word' and token.text not in ('extends', 'implements'):
            name = token.text
            position = token.end
        else:
            position = keyword + 5
        body = self.find_body(position, limit)
        return (name, body) if body else None

    def prefix_start(self, position, words, decorators=False):
        """Where a declaration at position starts, counting the words before it (export,
        default, declare, ...) and, with decorators, @decorators."""
        masked = self.masked
        while True:
            last = self.before(position)
            if last < 0:
                return position
            word = self.word_ending(last) if masked[last] not in ')' else None
            if word and word[1] in words:
                position = word[0]
                continue
            if not decorators:
                return position
            if masked[last] == ')':
                opener = self.closers.get(last)
                if opener is None:
                    return position
                last = self.before(opener)
            found = JS_DECORATOR_TAIL.search(masked, max(0, last + 1 - 200), last + 1)
            if not found:
                return position
            position = found.start()

    def binding_before(self, start, low):
        """What the function or class that starts at start is assigned to (an
        assignment, or export default), or None."""
        masked = self.masked
        last = self.before(start)
        if last < low:
            return None
        char = masked[last]
        if char == '=' and masked[last - 1] not in '=!<>+-*/%&|^?':
            target = JS_ASSIGNED_TAIL.search(masked, max(0, last - 300), last)
            if not target:
                return None
            if target.start(1) in self.declarator_values:
                return None         # var a = b = function () {}: the oracle has neither
            previous = self.before(target.start(1))
            if previous >= 0 and masked[previous] == '.':
                return None
            parts = [part.strip() for part in target.group(1).split('.')]
            statement = previous < 0 or masked[previous] not in '=(,?:[&|!+-*/%<>'
            return JsBinding(parts, target.start(1), statement)
        word = self.word_ending(last)
        if word and word[1] == 'default':
            export = self.word_before(word[0])
            if export and export[1] == 'export':
                return JsBinding(['default'], export[0], True)
        return None

    # --- emitting -------------------------------------------------------------------------

    def emit(self, scope, name, kind, span, body=None):
        """Record a definition named after its scope; span is (start, end), body its
        Block, None (an arrow's expression body, a type alias) or JS_BODILESS."""
        braces = (body.open, body.close) if isinstance(body, Block) else None
        self.decls.append(Decl('.'.join(names_of(scope) + [name]), kind, span[0], span[1],
                               braces, True, has_body=body is not JS_BODILESS))

    def statement_end(self, end):
        """end, or the offset of a ';' that directly follows it."""
        following = self.after(end + 1)
        if following < len(self.masked) and self.masked[following] == ';':
            return following
        return end

    def emit_binding(self, binding, scope, kind, body):
        """Record a function or class assigned to a path (body: its JsFunction, or the
        class body's Block); returns the scope of its body."""
        end = body.close if isinstance(body, Block) else body.end
        if isinstance(body, JsFunction):
            body = body.body
        parts = [part for part in binding.parts if part != 'prototype']
        base = scope
        own = len(parts) > 1 and bool(scope) and scope[-1] == (parts[0], 'function')
        if own:
            parts = parts[1:]       # X.m = ... inside function X (an ES5 class's body) is X.m
        if parts and parts[0] == 'this':
            parts = parts[1:]
            classes = [i for i, (_, what) in enumerate(scope) if what == 'class']
            if classes:
                base = scope[:classes[-1] + 1]
        if not parts:
            return scope
        if kind != 'class':
            kind = 'method' if own or len(parts) > 1 or (base and base[-1][1] == 'class') \
                else 'function'
        if binding.statement:
            end = self.statement_end(end)
        self.emit(base + tuple((part, 'object') for part in parts[:-1]), parts[-1], kind,
                  (binding.start, end), body)
        return base + tuple((part, 'object') for part in parts[:-1]) + \
            ((parts[-1], 'class' if kind == 'class' else 'function'),)

    # --- walking code ---------------------------------------------------------------------

    @nested_walker
    def walk_code(self, block, low, high, scope, head=False):
        """Find the definitions in statements or an expression: the text of block
        between low and high, its child blocks included (head: a function's parameters
        and return type)."""
        children, opens = block.children, self.child_opens[block.open]
        index = bisect.bisect_left(opens, low)
        position = low
        while position < high:
            child = children[index] if index < len(children) and opens[index] < high \
                else None
            limit = child.open if child else high
            place = bisect.bisect_left(self.anchors, position)
            if place < len(self.anchors) and self.anchors[place] < limit:
                anchor = self.anchors[place]
                word = self.anchor_words[anchor]
                region = JsRegion(block, low, high, head)
                position = max(self.code_anchor(anchor, word, region, scope),
                               anchor + len(word))
                while index < len(children) and opens[index] < position:
                    index += 1
                continue
            if child is None:
                break
            if head:
                self.head_block(child, scope)
            else:
                self.code_block(child, scope)
            position = child.close + 1
            index += 1

    def code_anchor(self, anchor, word, region, scope):
        """Handle a keyword or '=>' found at anchor in the code of region; returns
        where to go on."""
        high = region.high
        if word == '=>':
            return self.arrow_anchor(anchor, region, scope)
        if word == 'function':
            return self.function_anchor(anchor, region, scope)
        if word == 'class':
            return self.class_anchor(anchor, region, scope)
        keyword = (anchor, anchor + len(word))
        if word in ('const', 'let', 'var'):
            return self.declaration(keyword, region.block, high, scope)
        if word == 'interface':
            return self.interface(keyword, high, scope)
        if word == 'enum':
            return self.enum(keyword, high, scope)
        if word == 'type':
            return self.type_alias(keyword, high, scope)
        return self.namespace(keyword, high, scope)

    def anchor_between(self, low, high):
        """Whether a keyword or '=>' the code walker stops at lies between low and high."""
        place = bisect.bisect_left(self.anchors, low)
        return place < len(self.anchors) and self.anchors[place] < high

    def walk_function(self, function, block, scope, whole=True):
        """Find the definitions in a function's body (a block or an expression) and,
        when whole (a function value, not a declaration: the oracle walks all of it),
        in the type literals of its parameters and return type."""
        if whole and (function.body is not None or function.expression):
            head_end = function.body.open if function.body is not None \
                else function.expression[0]
            self.walk_code(block, function.parameters, head_end, scope, True)
        if function.body is not None:
            body = function.body
            self.walk_code(body, body.open + 1, body.close, scope)
        elif function.expression:
            start, end = function.expression
            self.walk_code(block, start, end + 1, scope)

    def head_block(self, child, scope):
        """A block in a function's parameters or return type: a type literal after ':'
        (or in a union, an intersection, type arguments), else a destructuring pattern
        or a default value."""
        last = self.before(child.open)
        if last >= 0 and self.masked[last] in ':|&<':
            self.walk_interface(child, scope)
        else:
            self.code_block(child, scope)

    def arrow_start(self, arrow):
        """The offset where the arrow function whose '=>' is at arrow starts."""
        masked = self.masked
        last = self.before(arrow)
        if last < 0:
            return None
        char = masked[last]
        opener = None
        if char == ')':
            opener = self.closers.get(last)
        elif char not in '>]}':
            word = self.word_ending(last)
            if not word:
                return None
            previous = self.before(word[0])
            if previous < 0 or masked[previous] not in ':.<>|&' or \
                    masked.startswith('=>', previous - 1):
                return self.async_start(word[0])
        if opener is None:
            opener = self.parameters_before(last)
        if opener is None:
            return None
        previous = self.before(opener)
        if previous >= 0 and masked[previous] == '>' and masked[previous - 1] != '=':
            angle = self.skip_angle_back(previous)
            if angle is not None:
                opener = angle
        return self.async_start(opener)

    def async_start(self, position):
        """position, or where an 'async' just before it starts."""
        word = self.word_before(position)
        if word and word[1] == 'async':
            return word[0]
        return position

    def parameters_before(self, last):
        """The '(' of the parameters whose return type annotation ends at last."""
        masked, position, low = self.masked, last, max(0, last - JS_MAX_BACK)
        while position >= low:
            char = masked[position]
            if char in ')]}':
                opener = self.closers.get(position)
                if opener is None:
                    return None
                if char == ')' and self.next_is(position + 1, ':'):
                    return opener
                position = opener - 1
                continue
            if char == '>' and position > 0 and masked[position - 1] == '=':
                position -= 2
                continue
            if char in '([{;=':
                return None
            position -= 1
        return None

    def arrow_anchor(self, arrow, region, scope):
        """An arrow function: a definition when it is assigned or exported as default."""
        block, low, high, head = region
        start = self.arrow_start(arrow)
        if start is None or start < low:
            return arrow + 2
        binding = None if head else self.binding_before(start, low)
        if binding is None:
            return arrow + 2
        function = self.parse_function(start, high)
        if function is None or not function.arrow or not self.whole_value(function.end, high):
            return arrow + 2
        inner = self.emit_binding(binding, scope, 'function', function)
        self.walk_function(function, block, inner)
        return function.end + 1

    def function_anchor(self, keyword, region, scope):
        """A function declaration, expression or signature at its 'function' keyword."""
        block, low, high, head = region
        start = self.async_start(keyword)
        token = JsToken('word', keyword, keyword + 8, 'function')
        function = self.function_keyword(start, token, high)
        if function is None:
            return keyword + 8
        binding = None if head else self.binding_before(start, low)
        if binding is not None and (binding.parts == ['default'] and function.name or
                                    not self.whole_value(function.end, high)):
            binding = None          # export default function name() {}, x = function(){}()
        whole = binding is not None or self.in_expression(start)
        if binding is not None and function.body is not None:
            inner = self.emit_binding(binding, scope, 'function', function)
        elif function.name and scope and scope[-1] == (function.name, 'function'):
            inner = self.es5_constructor(scope, function, start)
        elif function.name:
            inner = scope + ((function.name, 'function'),)
            begin = self.prefix_start(start, JS_PREFIX_WORDS)
            if function.body is None:
                self.emit(scope, function.name, 'function',
                          (begin, self.statement_end(function.end)), JS_BODILESS)
                return function.end + 1
            self.emit(scope, function.name, 'function', (begin, function.end), function.body)
        else:
            inner = scope
        self.walk_function(function, block, inner, whole)
        return function.end + 1

    def es5_constructor(self, scope, function, start):
        """function X inside the function bound to X: an ES5 class as TypeScript and Babel
        emit it (var X = (function (_super) { function X() {...} X.prototype.m = ...;
        return X; }(Base))).  The inner X is X's constructor and the outer X a class."""
        outer = '.'.join(names_of(scope))
        for number in range(len(self.decls) - 1, -1, -1):
            if self.decls[number].name == outer:
                self.decls[number] = self.decls[number]._replace(kind='class')
                break
        self.emit(scope, 'constructor', 'constructor', (start, function.end), function.body)
        return scope + (('constructor', 'function'),)

    def whole_value(self, end, high):
        """Whether the function or class that ends at end is all of the value
        assigned (not called, nor an operand)."""
        token = self.token(end + 1, high)
        if token.kind == 'eof' or token.text in (';', ',', ')', ']', '}', ':'):
            return True
        if '\n' in self.masked[end + 1:token.start]:
            return not self.continues(end, token.start, high)
        return False

    def in_expression(self, start):
        """Whether what starts at start is in an expression (not a statement)."""
        last = self.before(start)
        if last < 0:
            return False
        word = self.word_ending(last)
        if word:
            return word[1] in JS_OBJECT_AFTER_WORDS and word[1] != 'default'
        return self.masked[last] in JS_OBJECT_AFTER_CHARS

    def class_anchor(self, keyword, region, scope):
        """A class declaration or expression at its 'class' keyword."""
        _, low, high, head = region
        found = self.parse_class(keyword, high)
        if not found:
            return keyword + 5
        name, body = found
        start = self.prefix_start(keyword, JS_CLASS_PREFIX_WORDS, decorators=True)
        binding = None if head else self.binding_before(start, low)
        if binding is not None and not self.whole_value(body.close, high):
            binding = None
        words = self.masked[start:keyword].split()
        if binding is not None:
            inner = self.emit_binding(binding, scope, 'class', body)
        elif name or ('default' in words and 'export' in words):
            name = name or 'default'
            self.emit(scope, name, 'class', (start, body.close), body)
            inner = scope + ((name, 'class'),)
        else:
            inner = scope + (('<anonymous>', 'class'),)
        self.walk_code(region.block, keyword + 5, body.open, inner)    # extends f({...})
        self.walk_class(body, inner)
        return body.close + 1

    def declaration(self, keyword, block, high, scope):
        """const/let/var declarations: functions, classes and objects bound to names."""
        token = self.token(keyword[1], high)
        if token.text == 'enum':
            return self.enum((token.start, token.end), high, scope)
        if not (token.kind == 'word' or token.text in ('{', '[')):
            return keyword[1]
        start = self.prefix_start(keyword[0], JS_PREFIX_WORDS)
        declarators, position = [], keyword[1]
        while True:
            declarator = self.declarator(position, high)
            if declarator is None:
                break
            declarators.append(declarator)
            position = declarator.end + 1
            following = self.token(position, high)
            if following.text != ',':
                break
            position = following.end
        if not declarators:
            return keyword[1]
        end = self.statement_end(declarators[-1].end)
        for name, name_start, annotation, value, declarator_end in declarators:
            if value is None:
                if annotation:          # let x: { m(): void };
                    self.walk_type_literals(block, annotation[0], annotation[1], scope)
            elif name and len(declarators) == 1:
                self.bound_value(block, value, (name, start, end), scope, 'declarator')
            elif name:
                self.bound_value(block, value, (name, name_start, declarator_end), scope,
                                 'declarator')
            else:
                self.walk_code(block, value[0], value[1] + 1, scope)
        return max(end + 1, keyword[1])

    def declarator(self, position, high):
        """The JsDeclarator at position, or None."""
        token = self.token(position, high)
        if token.text in ('{', '[') and token.start in self.pairs:
            name, end = '', self.pairs[token.start]
        elif token.kind == 'word' and token.text not in JS_KEYWORDS:
            name, end = token.text, token.end - 1
        else:
            return None
        following = self.token(end + 1, high)
        if following.text == '!':
            following = self.token(following.end, high)
        annotation = None
        if following.text == ':':
            type_end = self.skip_type(following.end, high)
            annotation = (following.end, type_end)
            end = type_end - 1
            following = self.token(type_end, high)
        if following.text != '=':
            return JsDeclarator(name, token.start, annotation, None, end)
        value_start = self.after(following.end)
        value_end = self.expression_end(value_start, high)
        if value_end < value_start:
            return JsDeclarator(name, token.start, annotation, None, following.start)
        self.declarator_values.add(value_start)
        return JsDeclarator(name, token.start, annotation, (value_start, value_end), value_end)

    def bound_value(self, block, value, where, scope, context):
        """A value bound to a name (where: name, start, end of the definition) by a
        declarator, an object key ('pair') or a class field ('field'): a function is a
        definition, a class (declarators) too, an object literal names its members."""
        name, start, end = where
        value_start, value_end = value
        chained = JS_CHAINED_ASSIGNMENT.match(self.masked, value_start, value_end) \
            if context == 'declarator' else None
        if chained:                           # var proto = module.exports = function ...
            value_start = chained.end()
        value_end = self.uncast(value_start, value_end)
        if self.masked.startswith('(', value_start) and self.pairs.get(value_start) == value_end:
            inner = self.after(value_start + 1)     # isArrayLike = (<T>(x) => ...)
            if JS_FUNCTION_START.match(self.masked, inner):
                found = self.parse_function(inner, value_end)
                if found is not None and self.after(found.end + 1) == value_end:
                    value_start, value_end = inner, found.end
        function = self.parse_function(value_start, value_end + 1) \
            if JS_FUNCTION_START.match(self.masked, value_start) else None
        if function is not None and function.end == value_end and (
                function.arrow or function.body is not None):
            kind = 'function' if context == 'declarator' else 'method'
            self.emit(scope, name, kind, (start, end), function.body)
            self.walk_function(function, block, scope + ((name, 'function'),))
            return
        wrapped = self.wrapped_function(value_start, value_end) if context == 'declarator' \
            and all(what != 'function' for _, what in scope) else None
        if wrapped is not None and not self.in_callback(start):
            self.emit(scope, name, 'function', (start, end), wrapped.body)
            self.walk_code(block, value_start, value_end + 1, scope + ((name, 'function'),))
            return
        if context == 'declarator' and self.masked.startswith('class', value_start):
            found = self.parse_class(value_start, value_end + 1)
            if found and found[1].close == value_end:
                self.emit(scope, name, 'class', (start, end), found[1])
                self.walk_class(found[1], scope + ((name, 'class'),))
                return
        if context != 'field' and self.masked[value_start] == '{' and \
                self.pairs.get(value_start) == value_end and value_start in self.blocks:
            self.walk_object(self.blocks[value_start], scope + ((name, 'object'),))
            return
        self.walk_code(block, value_start, value_end + 1, scope)

    def uncast(self, value_start, value_end):
        """Where a value bound with a cast ends without it: {...} as const, (x => x) as
        F, function () {...} satisfies G (the cast only says what type it has)."""
        close = self.pairs.get(value_start) if self.masked[value_start] in '({' else None
        if close is None and self.masked.startswith('function', value_start):
            found = self.parse_function(value_start, value_end + 1)
            close = found and found.end
        if close is None or close >= value_end:
            return value_end
        cast = self.token(close + 1, value_end + 1)
        if cast.text in ('as', 'satisfies') and \
                self.skip_type(cast.end, value_end + 1) == value_end + 1:
            return close
        return value_end

    def in_callback(self, position):
        """Whether position lies in the body of a function handed to a call, a callback
        (it('works', () => {...})), other than a module's wrapper: an IIFE, or AMD's
        define([...], function (dep) {...})."""
        block = self.root
        while True:
            place = bisect.bisect_right(self.child_opens[block.open], position) - 1
            if place < 0 or block.children[place].close < position:
                return False
            block = block.children[place]
            start = self.function_of_body(block.open)
            if start is not None and self.handed_to_call(start):
                return True

    def function_of_body(self, opener):
        """Where the function whose body opens at opener starts, or None when the
        block is not a function's body (a function expression's, or an arrow's)."""
        last = self.before(opener)
        if last > 0 and self.masked.startswith('=>', last - 1):
            return self.arrow_start(last - 1)
        parameters = self.closers.get(last) if last >= 0 and self.masked[last] == ')' else None
        word = parameters is not None and self.word_before(parameters)
        if word and word[1] != 'function':
            word = self.word_before(word[0])            # function name(...) {
        return self.async_start(word[0]) if word and word[1] == 'function' else None

    def handed_to_call(self, start):
        """Whether the function that starts at start is an argument of a call (not of
        define or require, whose callbacks are modules)."""
        position = self.before(start)
        while position >= 0 and self.masked[position] not in '([{;':
            opener = self.closers.get(position)         # an earlier argument's brackets
            position = self.before(opener if opener is not None else position)
        if position < 0 or self.masked[position] != '(':
            return False
        callee = self.before(position)
        if callee < 0 or self.masked[callee] in ')]>':
            return callee >= 0
        word = self.word_ending(callee)
        return bool(word) and word[1] not in JS_KEYWORDS and word[1] not in JS_MODULE_CALLEES

    def wrapped_function(self, value_start, value_end):
        """The function that a call bound to a name wraps, as in lodash's `var groupBy =
        createAggregator(function(result, value, key) {...})` or React's `const Button =
        forwardRef((props, ref) => {...})`: the first argument that is a function with a
        block body or a body of several lines, when the call is all of the value; else
        None (a one-line callback computes a value: ids = items.map(i => i.id)).  Such a
        name has no other definition, so it is one (at the top level: inside a function,
        a call handed a callback is code, not a definition; a named function expression
        is defined by its own name)."""
        if self.masked.startswith('(', value_start):
            return self.bound_iife(value_start, value_end)
        callee = JS_CALLEE.match(self.masked, value_start)
        opener = callee and callee.end()
        if callee and self.masked.startswith('<', opener):      # forwardRef<Ref, Props>(
            opener = self.skip_angle(opener, value_end)
            opener = opener and self.after(opener)
        if not opener or self.pairs.get(opener) != value_end:
            return None
        position = opener + 1
        while position < value_end:
            start = self.after(position)
            if start >= value_end:
                return None
            if JS_FUNCTION_START.match(self.masked, start):
                function = self.parse_function(start, value_end)
                if function is not None and self.spans_lines(function):
                    return None if function.name else function   # named: it is defined
            end = self.expression_end(start, value_end)
            if end < start or self.token(end + 1, value_end).text != ',':
                return None
            position = self.token(end + 1, value_end).end
        return None

    def spans_lines(self, function):
        """Whether a function is more than an expression on one line: it has a block
        body, or an expression body over several lines."""
        return function.body is not None or bool(function.expression) and \
            self.masked.find('\n', *function.expression) >= 0

    def bound_iife(self, value_start, value_end):
        """The anonymous function of an immediately invoked function that is all of a
        value, (function() {...}()) or (cache => thing => ...)(Object.create(null)),
        whose result (usually a function) is bound to a name; else None."""
        close = self.pairs.get(value_start)
        if close is None:
            return None
        function = self.parse_function(self.after(value_start + 1), close)
        if function is None or function.name or not self.spans_lines(function):
            return None                 # COMPLETE = (() => make('C'))(): a constant
        call = self.after(function.end + 1)     # what follows the function
        if close == value_end:                  # (function () {...}()): called inside
            called = self.masked.startswith('(', call) and \
                self.pairs.get(call) == self.before(close)
        else:                                   # (function () {...})(): called after
            following = self.after(close + 1)
            called = call == close and self.masked.startswith('(', following) and \
                self.pairs.get(following) == value_end
        return function if called else None

    def code_block(self, child, scope):
        """A block met in code: an object literal, a type literal or statements."""
        masked = self.masked
        if masked[child.open] != '{':         # an expression in JSX: {{ object }}, {code}
            first = self.token(child.open + 1, child.close)
            low = child.open + 1
            if first.text == '{' and first.start in self.blocks:
                self.walk_object(self.blocks[first.start], scope)
                low = self.pairs[first.start] + 1
            self.walk_code(child, low, child.close, scope)
            return
        last = self.before(child.open)
        char = masked[last] if last >= 0 else ''
        word = self.word_ending(last) if last >= 0 else None
        word = word[1] if word and word[0] + len(word[1]) == last + 1 else ''
        if word in JS_TYPE_AFTER_WORDS or (char in '<|&' and not word and
                                        masked[last - 1:last + 1] not in ('&&', '||')):
            self.walk_interface(child, scope)
        elif word in JS_OBJECT_AFTER_WORDS or (not word and char in JS_OBJECT_AFTER_CHARS and
                                            masked[last - 1:last + 1] != '=>'):
            if char == '(' and self.decorates_class(last):
                return              # @dec({...}) class X: the oracle does not walk it
            if char == ':' and self.case_or_label(last):
                self.walk_code(child, child.open + 1, child.close, scope)
            elif char == ':' and self.annotation_colon(last):
                self.walk_interface(child, scope)
            else:
                self.walk_object(child, scope)
        else:
            self.walk_code(child, child.open + 1, child.close, scope)

    def decorates_class(self, opener):
        """Whether the '(' at opener is a decorator's that applies to a class directly
        (not through export): @dec(...) [@other] [abstract] class."""
        if opener not in self.pairs or not JS_DECORATOR_TAIL.search(
                self.masked, max(0, opener - 200), opener):
            return False
        limit = len(self.masked)
        token = self.token(self.pairs[opener] + 1, limit)
        while token.text == '@':
            token = self.skip_decorator(token, limit)
        return token.text in ('class', 'abstract')

    def annotation_colon(self, colon):
        """Whether the ':' at colon starts a parameter's type annotation (not the else
        part of a conditional expression): going back, a '(' or ',' comes before a '?'."""
        masked, position, low = self.masked, colon - 1, max(0, colon - JS_MAX_BACK)
        while position >= low:
            char = masked[position]
            if char in ')]}':
                opener = self.closers.get(position)
                if opener is None:
                    return False
                position = opener - 1
                continue
            if char == '?' and masked[position + 1] not in '.?:' and \
                    masked[position - 1] != '?':
                return False
            if char in '(,':
                return True
            if char in '{[;=':
                return False
            position -= 1
        return False

    def case_or_label(self, colon):
        """Whether the ':' at colon ends a case clause or a label (a block follows)."""
        low = max(0, colon - JS_MAX_BACK)
        start = max(self.masked.rfind(char, low, colon) for char in ';{}:') + 1
        if JS_CASE_CLAUSE.search(self.masked, max(start, low), colon):
            return True
        label = self.word_before(colon)
        if not label:
            return False
        last = self.before(label[0])
        word = self.word_ending(last) if last >= 0 else None
        return last < 0 or self.masked[last] in ';{})' or \
            bool(word and word[1] in JS_LABEL_AFTER_WORDS)


# --- Chunking: TypeScript declarations and members ------------------------------------
# interface, enum, type and namespace declarations, and the members of class bodies,
# object literals and interfaces.

class JsFile(JsCode):
    """How the finder reads TypeScript declarations and the members of classes,
    object literals and interfaces."""

    # --- TypeScript declarations ------------------------------------------------------------

    def interface(self, keyword, high, scope):
        """interface NAME<...> extends ... { members }."""
        token = self.token(keyword[1], high)
        if token.kind != 'word':
            return keyword[1]
        body = self.find_body(token.end, high)
        if body is None:
            return keyword[1]
        start = self.prefix_start(keyword[0], JS_PREFIX_WORDS)
        self.emit(scope, token.text, 'interface', (start, body.close), body)
        inner = scope + ((token.text, 'interface'),)
        position = token.end
        while True:                         # extends Op<"Tag", { run(): void }>
            opener = self.masked.find('{', position, body.open)
            if opener < 0:
                break
            if opener in self.blocks:
                self.walk_interface(self.blocks[opener], inner)
            position = self.pairs.get(opener, opener) + 1
        self.walk_interface(body, inner)
        return body.close + 1

    def enum(self, keyword, high, scope):
        """[const] enum NAME { members }: a definition whose members are not."""
        token = self.token(keyword[1], high)
        following = self.token(token.end, high)
        if token.kind != 'word' or following.text != '{' or following.start not in self.pairs:
            return keyword[1]
        start = self.prefix_start(keyword[0], JS_ENUM_PREFIX_WORDS)
        self.emit(scope, token.text, 'enum', (start, self.pairs[following.start]),
                  self.blocks.get(following.start))
        return self.pairs[following.start] + 1

    def type_alias(self, keyword, high, scope):
        """type NAME<...> = TYPE: a definition, and the scope of the method signatures of
        the object types it is made of (type Chat = { send(text): void } & Base)."""
        token = self.token(keyword[1], high)
        if token.kind != 'word' or token.text in JS_KEYWORDS:
            return keyword[1]
        following = self.token(token.end, high)
        position = following.start
        if following.text == '<':
            position = self.skip_angle(following.start, high)
            if position is None:
                return keyword[1]
            following = self.token(position, high)
        if following.text != '=':
            return keyword[1]
        type_end = self.skip_type(following.end, high)
        if type_end <= following.end:
            return keyword[1]
        start = self.prefix_start(keyword[0], JS_PREFIX_WORDS)
        end = self.statement_end(type_end - 1)
        self.emit(scope, token.text, 'type', (start, end))
        position = following.end
        while position < type_end:
            part = self.token(position, type_end)
            if part.kind == 'eof':
                break
            if part.text == '{' and part.start in self.blocks:
                self.walk_interface(self.blocks[part.start], scope + ((token.text, 'type'),))
            if part.text in '([{' and part.start in self.pairs:
                position = self.pairs[part.start] + 1
            elif part.text == '<':
                position = self.skip_angle(part.start, type_end) or part.end
            else:
                position = part.end
        return end + 1

    def namespace(self, keyword, high, scope):
        """namespace A.B { ... } / module 'name' { ... }: a scope for what is inside."""
        token = self.token(keyword[1], high)
        if token.kind == 'lit':
            name, position = token.text[1:-1], token.end
        elif token.kind == 'word':
            name, position = token.text, token.end
            while True:
                dot = self.token(position, high)
                part = self.token(dot.end, high)
                if dot.text != '.' or part.kind != 'word':
                    break
                name, position = name + '.' + part.text, part.end
        else:
            return keyword[1]
        following = self.token(position, high)
        start = self.prefix_start(keyword[0], JS_PREFIX_WORDS)
        if following.text == '{' and following.start in self.blocks:
            body = self.blocks[following.start]
            self.emit(scope, name, 'namespace', (start, body.close), body)
            self.walk_code(body, body.open + 1, body.close, scope + ((name, 'namespace'),))
            return body.close + 1
        if token.kind == 'lit' and following.text == ';':
            self.emit(scope, name, 'namespace', (start, following.start), JS_BODILESS)
            return following.end
        return keyword[1]

    # --- members ----------------------------------------------------------------------------

    def property_name(self, token, limit):
        """(name, offset after it) of the property name at token, or None: identifier,
        #private, string, number or [computed] (kept as written)."""
        if token.kind == 'word':
            return token.text, token.end
        if token.kind == 'lit' and token.text[:1] in '\'"':
            return token.text[1:-1], token.end
        if token.kind == 'num':
            return token.text, token.end
        if token.text == '[' and token.start in self.pairs and self.pairs[token.start] < limit:
            close = self.pairs[token.start]
            return self.text[token.start:close + 1], close + 1
        return None

    def is_modifier(self, token, modifiers, limit):
        """Whether the word token is a modifier (static, get, async ...) and not itself
        the member's name: a name follows it."""
        if token.kind != 'word' or token.text not in modifiers:
            return False
        following = self.token(token.end, limit)
        return following.kind != 'eof' and following.text not in JS_NAME_FOLLOWERS

    def member_head(self, position, limit, modifiers):
        """Skip a member's decorators and modifiers: (first token after them, the
        modifier words)."""
        words = set()
        token = self.token(position, limit)
        while True:
            if token.text == '@':
                token = self.skip_decorator(token, limit)
            elif self.is_modifier(token, modifiers, limit):
                words.add(token.text)
                token = self.token(token.end, limit)
            else:
                return token, words

    def skip_decorator(self, at, limit):
        """The token after the decorator whose '@' is the token at."""
        token = self.token(at.end, limit)
        while token.kind == 'word':
            token = self.token(token.end, limit)
            if token.text != '.':
                break
            token = self.token(token.end, limit)
        if token.text == '(' and token.start in self.pairs:
            token = self.token(self.pairs[token.start] + 1, limit)
        return token

    def method(self, name_end, limit):
        """For a member whose name ends at name_end: (body block or None, offset of the
        signature's last character) when it is a method, else None."""
        token = self.token(name_end, limit)
        if token.text in ('?', '!'):
            token = self.token(token.end, limit)
        if token.text == '<':
            position = self.skip_angle(token.start, limit)
            if position is None:
                return None
            token = self.token(position, limit)
        if token.text != '(' or token.start not in self.pairs:
            return None
        body, signature_end = self.after_parameters(self.pairs[token.start], limit)
        if body < limit and self.masked[body] == '{' and body in self.blocks:
            return self.blocks[body], signature_end
        return None, signature_end

    @nested_walker
    def walk_class(self, block, scope):
        """A class body: methods, accessors, constructors, signatures, fields holding
        functions; the code in other fields and static blocks."""
        position, close = block.open + 1, block.close
        while position < close:
            token = self.token(position, close)
            if token.kind == 'eof':
                break
            if token.text in (';', ','):
                position = token.end
                continue
            start = token.start
            token, words = self.member_head(token.start, close, JS_MEMBER_MODIFIERS)
            if token.text == '{' and token.start in self.blocks:     # static { ... }
                inner = self.blocks[token.start]
                self.walk_code(inner, inner.open + 1, inner.close, scope)
                position = inner.close + 1
                continue
            if token.text == '*':
                token = self.token(token.end, close)
            named = self.property_name(token, close)
            if named is None:
                end = self.expression_end(token.start, close)
                position = max(end + 1, token.end)
                continue
            position = self.class_member(block, named, start, words, scope)

    def class_member(self, block, named, start, words, scope):
        """A class member named named (name, offset after it) that starts at start;
        returns where the next member may start."""
        name, name_end = named
        close = block.close
        method = self.method(name_end, close)
        if method is not None:
            body, signature_end = method
            kind = 'constructor' if name == 'constructor' else 'getter' if 'get' in words \
                else 'setter' if 'set' in words else 'method'
            if body is None:
                self.emit(scope, name, kind, (start, signature_end), JS_BODILESS)
                return signature_end + 1
            self.emit(scope, name, kind, (start, body.close), body)
            self.walk_code(body, body.open + 1, body.close, scope + ((name, 'function'),))
            return body.close + 1
        token = self.token(name_end, close)
        if token.text in ('?', '!'):
            token = self.token(token.end, close)
        position = name_end
        if token.text == ':':
            type_end = self.skip_type(token.end, close)
            self.walk_type_literals(block, token.end, type_end, scope)
            position = type_end
            token = self.token(type_end, close)
        if token.text != '=':
            return max(position, name_end)
        value_start = self.after(token.end)
        value_end = self.expression_end(value_start, close)
        if value_end >= value_start:
            self.bound_value(block, (value_start, value_end), (name, start, value_end),
                             scope, 'field')
        return max(value_end + 1, token.end)

    def walk_type_literals(self, block, low, high, scope):
        """The type literals ({...}) among block's children between low and high."""
        opens = self.child_opens[block.open]
        index = bisect.bisect_left(opens, low)
        while index < len(opens) and opens[index] < high:
            self.walk_interface(block.children[index], scope)
            index += 1

    @nested_walker
    def walk_object(self, block, scope):
        """An object literal: methods and keys holding functions are definitions, keys
        holding objects name their members."""
        position, close = block.open + 1, block.close
        if not block.children and not self.anchor_between(position, close):
            return                  # {a: 1, b: 'x'}: no function can be in it
        while position < close:
            token = self.token(position, close)
            if token.kind == 'eof':
                break
            if token.text == ',':
                position = token.end
                continue
            start = token.start
            if token.text == '...':
                end = self.expression_end(token.end, close)
                self.walk_code(block, token.end, end + 1, scope)
                position = max(end + 1, token.end)
                continue
            token, words = self.member_head(token.start, close, JS_OBJECT_MODIFIERS)
            if token.text == '*':
                token = self.token(token.end, close)
            named = self.property_name(token, close)
            if named is None:
                end = self.expression_end(token.start, close)
                self.walk_code(block, token.start, end + 1, scope)
                position = max(end + 1, token.end)
                continue
            position = self.object_member(block, named, start, words, scope)

    def object_member(self, block, named, start, words, scope):
        """An object literal member named named that starts at start; returns where the
        next member may start."""
        name, name_end = named
        close = block.close
        method = self.method(name_end, close)
        if method is not None and method[0] is not None:
            body = method[0]
            kind = 'getter' if 'get' in words else 'setter' if 'set' in words else 'method'
            self.emit(scope, name, kind, (start, body.close), body)
            self.walk_code(body, body.open + 1, body.close, scope + ((name, 'function'),))
            return body.close + 1
        token = self.token(name_end, close)
        if token.text not in (':', '='):
            return max(name_end, start + 1)
        value_start = self.after(token.end)
        value_end = self.expression_end(value_start, close)
        if value_end < value_start:
            return token.end
        if token.text == ':':
            self.bound_value(block, (value_start, value_end), (name, start, value_end),
                             scope, 'pair')
        else:
            self.walk_code(block, value_start, value_end + 1, scope)
        return value_end + 1

    @nested_walker
    def walk_interface(self, block, scope):
        """An interface body or type literal: method signatures are definitions; type
        literals in property types are walked too."""
        position, close = block.open + 1, block.close
        while position < close:
            token = self.token(position, close)
            if token.kind == 'eof':
                break
            if token.text in (';', ','):
                position = token.end
                continue
            start = token.start
            token, _ = self.member_head(token.start, close, JS_INTERFACE_MODIFIERS)
            if token.text in ('(', '<') or (token.text == 'new' and self.token(
                    token.end, close).text in ('(', '<')):
                end = self.skip_signature(token, close)
                self.walk_type_literals(block, token.start, end + 1, scope)
                position = max(end + 1, token.end)
                continue
            named = self.property_name(token, close)
            if named is None:
                position = max(self.expression_end(token.start, close) + 1, token.end)
                continue
            method = self.method(named[1], close)
            if method is not None:
                self.emit(scope, named[0], 'method', (start, method[1]), JS_BODILESS)
                position = method[1] + 1
                continue
            token = self.token(named[1], close)
            if token.text == '?':
                token = self.token(token.end, close)
            if token.text != ':':
                position = max(named[1], start + 1)
                continue
            type_end = self.skip_type(token.end, close)
            self.walk_type_literals(block, token.end, type_end, scope)
            position = max(type_end, token.end)

    def skip_signature(self, token, limit):
        """The offset of the last character of a call or construct signature."""
        if token.text == 'new':
            token = self.token(token.end, limit)
        if token.text == '<':
            position = self.skip_angle(token.start, limit)
            if position is None:
                return token.end
            token = self.token(position, limit)
        if token.text != '(' or token.start not in self.pairs:
            return token.end
        return self.after_parameters(self.pairs[token.start], limit)[1]


def js_declarations(scanned):
    """The Decls of a scanned JavaScript, TypeScript or TSX file, in file order."""
    finder = JsFile(scanned)
    root = finder.root
    finder.walk_code(root, 0, len(scanned.text), ())
    return sorted(finder.decls, key=lambda d: (d.start, -d.end))


FINDERS = {'java': java_declarations, 'kotlin': kotlin_declarations,
           'go': go_declarations, 'rust': rust_declarations,
           'javascript': js_declarations, 'typescript': js_declarations}
# --- Chunking: other text files, in line windows -----------------------------------

ATX_HEADING = re.compile(r' {0,3}(#{1,6})(?:[ \t](.*))?$')    # its title: atx_heading
MARKDOWN_FENCE = re.compile(r' {0,3}(`{3,}|~{3,})')


def windows(relative, lines, language):
    """Window definitions covering a text file: WINDOW_LINES lines each, every one
    starting WINDOW_LINES - WINDOW_OVERLAP lines after the one before.  A Markdown
    window is named after the nearest heading above its first line, any other after
    where it is (path:L41-80)."""
    headings = markdown_headings(lines) if language in ('markdown', 'rst') else {}
    heading, found = '', []
    step = WINDOW_LINES - WINDOW_OVERLAP
    for start in range(1, len(lines) + 1, step):
        end = min(start + WINDOW_LINES - 1, len(lines))
        heading = next((headings[n] for n in range(start, start - step - 1, -1)
                        if n in headings), heading)
        found.append(Definition(heading or f'{relative}:L{start}-{end}', 'window', start, end))
        if end == len(lines):
            break
    return found


def markdown_headings(lines):
    """{line number: heading text} of a Markdown file's ATX headings outside fences."""
    headings, fence = {}, ''
    for number, line in enumerate(lines, 1):
        opening = MARKDOWN_FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ''
        elif opening:
            fence = opening.group(1)
        else:
            heading = atx_heading(line)
            if heading and heading[1]:
                headings[number] = ' '.join(heading[1].split())
    return headings


def atx_heading(line):
    """(level, title) of an ATX heading line ('## Title ##'), else None; the title
    without its closing #s, which only a space or tab may precede (CommonMark)."""
    match = ATX_HEADING.match(line)
    if not match:
        return None
    title = (match.group(2) or '').strip(' \t')
    bare = title.rstrip('#')
    return len(match.group(1)), bare.rstrip(' \t') if bare[-1:] in ('', ' ', '\t') else title


# --- Tokens: identifiers split as people type them, light stemming, Korean ------------

STOP = {'a', 'an', 'the', 'of', 'to', 'for', 'with', 'how', 'is', 'def', 'return'}  # tokens()'s
STOP_WORDS = frozenset('''
a an the of to for with how is def return self cls none true false and or not in on at
by from as if else elif it its be are was were do does did can could should would will
i me my we you your this that these those there what which who whom where when why
into onto than then so such some any all each per via up over every several their same
given other way want need like just only also very really whole entire certain
particular something thing things while without about quickly have has had
'''.split())
KOREAN_QUESTION_WORDS = frozenset(   # the same in Korean: whole words, particles off
    '어떻게 어떡해 무엇 무엇인가요 무엇인지 뭐 뭐가 뭔가요 뭐야 왜 언제 어디 어디서 방법 '
    '하면 하려면 수 있나요 있을까요 되나요 하나요 할까요 싶어요 싶습니다 주세요 알려주세요'.split())
JOINED_KOREAN_HEADS = frozenset(('가장', '제일', '한'))   # 가장 큰 largest, 한 번 once
VERB_OBJECTS = frozenset(('it', 'them', 'one', 'everything'))   # look it up (phrasal_verbs)
NOT_PARTICLES = frozenset(('up to',))   # a preposition: lines up to a limit (phrasal_verbs)
WORD = re.compile(r'[A-Za-z0-9_]+|[가-힣]+')
ENGLISH_CLITIC = re.compile(r"(?<=[A-Za-z])['’](?:s|t|d|m|re|ve|ll)\b(?!['’=])", re.I)   # a
                        # question's object's, isn't, we'll: no terms s, t, ll
ADVERB_ENDINGS = (('ically', ('ic', 'ical')), ('bly', ('ble',)), ('ily', ('y',)),
                  ('ly', ('',)))        # an adverb's adjectives: atomically atomic atomical
                                        # (not simply simple: multiply would be multiple)
HYPHENATED = re.compile(r'(?<![\w-])(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+'
                        r'(?![\w-])')  # a question's read-only, utf-8, x86-64
IDENTIFIER_PART = re.compile(r'[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+')
HANGUL = re.compile(r'[가-힣]+\Z')
DOTTED_NAME = re.compile(r'(?<!\w)[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+')   # Invoice.total:
                        # from a word's start only, which keeps a search of it linear


def tokens(text):
    """The tutorial's tokenizer: a set of lowercase words, camelCase split, STOP removed."""
    text = re.sub(r'([a-z0-9])([A-Z])', r'\1 \2', text)
    return set(re.findall(r'[a-z0-9가-힣]+', text.lower())) - STOP


def stem(word):
    """Light English normalisation: plural, -ing and -ed endings, a final e."""
    if len(word) <= 3 or not word.isalpha() or not word.isascii():
        return word
    for suffix, replacement in (('ies', 'y'), ('ied', 'y'), ('sses', 'ss'), ('ing', ''),
                                ('ed', ''), ('es', ''), ('s', '')):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == 's' and word.endswith(('ss', 'us', 'is')):
                break
            word = word[:len(word) - len(suffix)] + replacement
            if suffix in ('ing', 'ed') and len(word) > 3 and word[-1] == word[-2] \
                    and word[-1] not in 'lsz':
                word = word[:-1]
            break
    if len(word) > 3 and word.endswith('e'):
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=1 << 17)
def word_terms(word):
    """Terms of one word: the whole identifier, then its parts (snake, camel, digits); a
    Korean word less its particle, spelled one way (standard_spelling); none for a
    particle alone (the 로 of asyncio로), as notes_search has none."""
    if HANGUL.match(word):
        if word in KOREAN_PARTICLES:
            return ()
        return (strip_particle(standard_spelling(word)),)
    raw = [p.lower() for piece in word.split('_') for p in IDENTIFIER_PART.findall(piece)]
    parts = [stem(p) for p in raw if p not in STOP_WORDS]
    whole = word.strip('_').lower()
    if len(raw) > 1 and whole not in STOP_WORDS:
        return (whole,) + tuple(parts)
    return tuple(parts)


def composed(text):
    """text in Unicode's composed form (NFC): Hangul typed on macOS or copied from its
    file names comes decomposed, and must find the same words and paths."""
    if text.isascii() or unicodedata.is_normalized('NFC', text):
        return text
    return unicodedata.normalize('NFC', text)


def count_terms(text):
    """Term frequencies of a text; a long text counts its words first, so each distinct
    word is split once."""
    counts = {}
    get = counts.get
    words = WORD.findall(composed(text))
    for word, n in (collections.Counter(words).items() if len(words) > 30
                    else zip(words, itertools.repeat(1))):
        for term in word_terms(word):
            counts[term] = get(term, 0) + n
    return counts


def own_field_texts(chunk):
    """The fields that belong to one chunk alone: its name, doc and code.  A window is
    named by its heading (not by where it is) and module-level code has no name."""
    kind, symbol = chunk['kind'], chunk['symbol']
    if kind == 'window':
        name = '' if symbol.startswith(chunk['path'] + ':L') else symbol
    else:
        name = '' if kind == 'module' else symbol.rpartition('.')[2]
    return {'name': name, 'doc': chunk['doc'], 'code': chunk.get('code', chunk['text']),
            'summary': doc_summary(chunk['doc'])}


def doc_summary(doc):
    """A docstring's first sentence (up to the first blank line or full stop; the stop
    of 'e.g.' or 'i.e.' ends no sentence)."""
    first = doc.strip().split('\n\n', 1)[0]
    return re.split(r'(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s', first, maxsplit=1)[0]


def path_text(path):
    """A file's path as the words of its path field: folders and name, no extension."""
    return (path.rpartition('.')[0] if '.' in path.rpartition('/')[2] else path).replace('/', ' ')


@functools.lru_cache(maxsize=1 << 14)
def path_terms(path):
    """The terms of a file's path field (path_text)."""
    return frozenset(count_terms(path_text(path)))


def shared_field_runs(chunks):
    """Fields that runs of neighbouring chunks share, as (field, text, first, last).

    The path is shared by the whole file; an enclosing class or function name by every
    chunk inside it (scope); a class docstring by its methods (context).  Storing each
    once per run instead of once per chunk keeps the index small and fast to build.
    """
    runs = [('path', path_text(chunks[0]['path']), 0, len(chunks) - 1)]
    open_runs = {}
    for number, chunk in enumerate(chunks):
        named = chunk['kind'] not in ('window', 'module')
        enclosing = chunk['symbol'].split('.')[:-1] if named else []
        keys = [('scope', '.'.join(enclosing[:depth + 1]), name)
                for depth, name in enumerate(enclosing)]
        if chunk.get('context'):
            keys.append(('context', '.'.join(enclosing), chunk['context']))
        for key in keys:
            run = open_runs.get(key)
            if run is not None and run[1] == number - 1:
                run[1] = number
            else:
                if run is not None:
                    runs.append((key[0], key[2], run[0], run[1]))
                open_runs[key] = [number, number]
    runs.extend((key[0], key[2], first, last) for key, (first, last) in open_runs.items())
    return runs


# Korean: particles stripped from the end of a word, and a glossary from Korean words to
# the English words code uses.  One entry a line: Korean, then English words.
KOREAN_PARTICLES = sorted('''
기 하게 해 으로부터 에서부터 하려면 하는지 되는지 하도록 시키는 시키기 적으로 에서는 에서도 으로는 으로도 이라는
에서 에게 에는 으로 까지 부터 처럼 보다 이나 이랑 라는 로는 들을 들의 하고 하는 하기 하면 하여 해서
되는 되면 려면 적인 인지 된 한 할 을 를 이 가 은 는 의 에 로 와 과 도 만 들
'''.split(), key=len, reverse=True)


PAST_TENSE_FINAL = 20      # ㅆ as a Hangul syllable's final consonant (했, 바꿨, 읽었)


def read_glossary(text):
    """Glossary lines 'korean english...' -> {korean: (english, ...)}, each Korean word
    spelled as standard_spelling spells it (the meanings of two spellings merged)."""
    entries = {}
    for line in text.strip().splitlines():
        korean, *english = line.split()
        korean = standard_spelling(korean)
        entries[korean] = tuple(dict.fromkeys(entries.get(korean, ()) + tuple(english)))
    return entries


def standard_spelling(word):
    """A Hangul word with each word of KOREAN_SPELLINGS spelled one way (디렉토리 as
    디렉터리, 최댓값 as 최대값), so that a text and a question that spell it differently meet."""
    for variant, standard in KOREAN_SPELLINGS:
        if variant in word:
            word = word.replace(variant, standard)
    return word


def read_synonyms(text):
    """Synonym groups, one a line -> {a word's term: (the other words of its groups)}.
    Keyed by term, so a question's 'folders' or 'deleting' finds its group too."""
    synonyms = {}
    for line in text.strip().splitlines():
        group = [word for word in line.split() if word_terms(word)]   # no stop words
        for word in group:
            others = synonyms.setdefault(word_terms(word)[0], [])
            others.extend(other for other in group if other != word and other not in others)
    return {term: tuple(others) for term, others in synonyms.items()}


def strip_particle(word):
    """Remove one trailing Korean particle or ending, keeping at least one syllable."""
    if word in KOREAN_GLOSSARY:
        return word
    for particle in KOREAN_PARTICLES:
        if word.endswith(particle) and len(word) > len(particle):
            return word[:-len(particle)]
    return word


def korean_meanings(word):
    """English words for a Korean word (either spelling of KOREAN_SPELLINGS): whole, after
    a particle, or as a compound; a verb in the past tense as in the present (바꿨을: 바꿔)."""
    word = standard_spelling(word)
    return glossary_meanings(word) or glossary_meanings(without_past_tense(word))


def without_past_tense(word):
    """word with the past tense's ㅆ taken off each syllable that ends in it, which
    leaves the verb's -어 form the glossary knows: 바꿨 바꿔, 끝났 끝나, 읽었 읽어."""
    return ''.join(chr(ord(syllable) - PAST_TENSE_FINAL) if '가' <= syllable <= '힣'
                   and (ord(syllable) - ord('가')) % 28 == PAST_TENSE_FINAL else syllable
                   for syllable in word)


def glossary_meanings(word):
    """korean_meanings of one spelling: the glossary's words for it whole, after its
    particle, or for the longest glossary words it is made of."""
    for candidate in (word, strip_particle(word)):
        if candidate in KOREAN_GLOSSARY:
            return list(KOREAN_GLOSSARY[candidate])
    stem_word = strip_particle(word)
    meanings, i = [], 0
    while i < len(stem_word):
        for j in range(len(stem_word), i, -1):
            if stem_word[i:j] in KOREAN_GLOSSARY and j - i >= 2:
                meanings.extend(KOREAN_GLOSSARY[stem_word[i:j]])
                i = j
                break
        else:
            i += 1
    return meanings


def korean_words_joined(words):
    """words with each pair the glossary knows as one word joined (가장 큰: 가장큰, largest;
    한 번: 한번, once): Korean writes a superlative or a count as two words, English and
    code as one."""
    joined, i = [], 0
    while i < len(words):
        pair = ''.join(words[i:i + 2])
        if words[i] in JOINED_KOREAN_HEADS and i + 1 < len(words) and \
                strip_particle(standard_spelling(pair)) in KOREAN_GLOSSARY:
            joined.append(pair)
            i += 2
        else:
            joined.append(words[i])
            i += 1
    return joined


def read_phrasal_verbs(text):
    """Lines 'verb particle: words...' -> {(form, particle): (words, ...)} for each form
    of the verb (verb_forms): looks up, looking up, looked up."""
    phrases = {}
    for line in text.strip().splitlines():
        phrase, _, words = line.partition(':')
        verb, particle = phrase.split()
        for form in verb_forms(verb):
            phrases[form, particle] = tuple(words.split())
    return phrases


def verb_forms(verb):
    """An English verb's forms: go goes going, set sets setting, log logged, use used
    using (a regular past only: not went or broke)."""
    doubled = len(verb) in (3, 4) and verb[-1] not in 'aeiouwy' and verb[-2] in 'aeiou' \
        and verb[-3] not in 'aeiou'             # one vowel before one consonant
    stem = verb[:-1] if verb.endswith('e') else verb + verb[-1] if doubled else verb
    third = verb + 'es' if verb.endswith(('s', 'sh', 'ch', 'x', 'o')) else verb + 's'
    return {verb, third, stem + 'ing', stem + 'ed'}


def phrasal_verbs(words):
    """words without the phrasal verbs of ENGLISH_PHRASAL_VERBS they hold (go through, look
    it up), and [(the phrase as said, the words it is searched as)]: a verb like go or
    look says little alone, and through or out, which are not stop words, nothing."""
    kept, found, i = [], [], 0
    lowered = [word.lower() for word in words]
    while i < len(words):
        for gap in (1, 2):
            particle, after = (lowered[i + gap:i + gap + 2] + ['', ''])[:2]
            meanings = ENGLISH_PHRASAL_VERBS.get((lowered[i], particle))
            if meanings and (gap == 1 or lowered[i + 1] in VERB_OBJECTS) \
                    and f'{particle} {after}' not in NOT_PARTICLES:
                found.append((' '.join(lowered[i:i + gap + 1]), meanings))
                i += gap + 1
                break
        else:
            kept.append(words[i])
            i += 1
    return kept, found


def hyphen_joined(hyphenated):
    """The terms a hyphenated word is also searched as, joined as names write it:
    Non-Blocking nonblock (stemmed as the index stems nonblocking) and non_blocking."""
    return word_terms(hyphenated.replace('-', '').lower())[:1] + \
        (hyphenated.replace('-', '_').lower(),)


def adjectives_of(adverb):
    """The adjectives an adverb may come from (ADVERB_ENDINGS), as names hold them:
    lazily lazy, atomically atomic atomical, reliably reliable."""
    for ending, replacements in ADVERB_ENDINGS:
        if adverb.endswith(ending):
            return [adverb[:-len(ending)] + replacement for replacement in replacements]
    return []


def synonyms_of(word):
    """The other words of a one-term word's synonym groups (none for a compound name)."""
    terms = word_terms(word)
    return ENGLISH_SYNONYMS.get(terms[0], ()) if len(terms) == 1 else ()


def dotted_question(question):
    """The question with Rust and C++ paths (Vec::push) and Java or Ruby method references
    (List#add) written as dotted names, as chunks name definitions."""
    return re.sub(r'(?<=[\w\]])(?:::|#)(?=[A-Za-z_])', '.', question)     # [T]::sort too


class Terms(NamedTuple):
    """A question's terms: their weights, the anchors a hit must share one of (a synonym
    alone never makes a hit), the concept of each (the question word it came from, which
    counts once however many of its terms a chunk has) and, for a compound name reached
    through a part, that part (whose IDF it is scored with)."""
    weights: dict
    anchors: set
    concepts: dict
    parts: dict


def query_terms(question):
    """Weighted terms of a question: its own terms, the words of its phrasal verbs, dotted
    names, Korean glossary words and English synonyms (Terms, with no compound names yet:
    with_compounds adds them)."""
    weights, concepts = {}, {}

    def add(word, weight, concept=None):
        terms = word_terms(word)
        if concept is not None:     # a meaning or synonym: i18n, not its parts 18 and n
            terms = terms[:1] + tuple(t for t in terms[1:] if len(t) > 1 and t.isalpha())
        for term in terms:
            weights[term] = max(weights.get(term, 0), weight)
            concepts.setdefault(term, concept or term)

    words = WORD.findall(composed(ENGLISH_CLITIC.sub('', question)))
    carried = [word for word in words if word in KOREAN_QUESTION_WORDS
               or strip_particle(word) in KOREAN_QUESTION_WORDS]
    words = [word for word in words if word not in carried] or words
    words, phrases = phrasal_verbs(words)
    for word in words:
        add(word, 1.0)
    expansions = []
    for phrase, meanings in phrases:    # a word the question says is a question's word
        said = {term for word in phrase.split() for term in word_terms(word)}
        for meaning in meanings:
            if word_terms(meaning)[0] in said:
                add(meaning, 1.0, phrase)
                expansions.extend((synonym, phrase) for synonym in synonyms_of(meaning))
            else:
                add(meaning, PHRASAL_VERB_WEIGHT, phrase)
    if not weights:             # words any question carries, and no other: the name asked
        weights.update((word.lower(), 1.0) for word in words)   # for ('which', 'Some')
        concepts.update((word.lower(), word.lower()) for word in words)
    for dotted in DOTTED_NAME.findall(dotted_question(question)):
        weights[dotted.lower()] = 1.0
        concepts.setdefault(dotted.lower(), dotted.lower())
    for hyphenated in HYPHENATED.findall(question):     # read-only: readonly, read_only
        for joined in hyphen_joined(hyphenated):
            weights[joined] = 1.0
            concepts.setdefault(joined, hyphenated.lower())
    adjectives = [(adjective, word_terms(word)[0]) for word in words if len(word) >= 6
                  and word.isascii() and word.isalpha() and word_terms(word)
                  for adjective in adjectives_of(word.lower())]  # lazily: lazy
    meanings_of = {word: korean_meanings(word) if HANGUL.match(word) else []
                   for word in korean_words_joined(words)}
    for word in sorted(meanings_of, key=lambda word: len(meanings_of[word])):
        concept = (word_terms(word) or (word,))[0]     # a term two words share goes to
        meanings = meanings_of[word]                    # the one with fewer meanings
        for meaning in meanings:
            add(meaning, GLOSSARY_WEIGHT, concept)
        expansions.extend((synonym, concept) for english in [word] + meanings
                          for synonym in synonyms_of(english))
    anchors = set(weights)
    for adjective, concept in adjectives:      # not anchors: 'comply' is no adverb
        add(adjective, 1.0, concept)
    for synonym, concept in expansions:
        add(synonym, SYNONYM_WEIGHT, concept)
    return Terms(weights, anchors, concepts, {})


def with_compounds(terms, tables):
    """terms with the compound names that the indexes' tables (mine_compounds) list for
    each English term (dir: makedir listdir), at COMPOUND_WEIGHT of that term, in its
    concept.  A Korean word's terms are not expanded, and no question word is split."""
    weights, concepts, parts = dict(terms.weights), dict(terms.concepts), {}
    for term, weight in terms.weights.items():
        if HANGUL.match(terms.concepts[term]):
            continue
        for table in tables:
            for compound in table.get(term, '').split():
                if weight * COMPOUND_WEIGHT > weights.get(compound, 0.0):
                    weights[compound] = weight * COMPOUND_WEIGHT
                    concepts[compound], parts[compound] = terms.concepts[term], term
    return Terms(weights, terms.anchors, concepts, parts)


# --- Index records: one record per file, postings per term ---------------------------
#
# The index file is one JSON object, written with json.dumps and read with json.loads:
#   {"tool", "format_version", "parser_version", "tokenizer_version", "root",
#    "indexed_at", "scan_started_ns", "next_fid", "chunk_count", "field_totals",
#    "skipped": [{"path", "line", "reason"}],
#    "walked_with": {the walk's choices: hidden, no_ignore, max_file_size},
#    "files": {path: {"fid", "sha256", "size", "mtime_ns", "ctime_ns", "language", "note",
#                     "parsed_by", "count", "totals", "rows", "lengths"}},
#    "postings": [POSTING_BUCKETS strings], "compounds": {part: "compound ..."},
#    "compound_words": {"names": {term: uses}, "parts": {term: uses}},
#    "compounds_mined_with": [the limits mine_compounds used], "checksum"}
# "language" is the file's (python, java, ..., markdown, text), "note" why its
# definitions could not be read ('' when they could), and for a Python file "parsed_by"
# the Python that could not (another reads it again: another_python_may_parse).
# "rows" holds a file's chunks as
# 'symbol kind start end exported receiver trait private', tab-separated, a line each
# (exported is 1 when a Python module's __all__ lists the chunk's top-level name,
# private when a Java, Kotlin or TypeScript declaration or its type says `private`, or
# a Java one outside an interface says neither `public` nor `protected`), and
# "lengths" the length of each field of each chunk, space-separated: strings that a
# search decodes only for the files it touches.  A term's posting is "fid field
# entries;fid field entries;...", an entry being a chunk number within the file or a
# run 'first-last', followed by ':tf' when the term occurs more than once.  Postings
# live in strings '|term=posting|...' chosen by the CRC-32 of the term, as in
# notes_search, so loading the index creates a thousand strings instead of a hundred
# thousand, a search finds its terms with str.find, and an update rewrites only the
# strings it touches (update_postings).  "compounds" is mined whenever the postings
# change (mine_compounds), from counts of the terms that can be compound names or
# their parts ("compound_words"), which an update takes again only for the buckets it
# changed (recount_words).  The source text is not stored: it is
# read back from the file and checked against the SHA-256.

ROW_SYMBOL, ROW_KIND, ROW_START, ROW_END, ROW_EXPORTED, ROW_RECEIVER, ROW_TRAIT, \
    ROW_PRIVATE = range(8)


def encode_rows(rows):
    """Chunk rows as one string: fields separated by tabs, rows by line breaks."""
    return '\n'.join('\t'.join(' '.join(str(value).split()) for value in row) for row in rows)


def decode_rows(text):
    """The string of encode_rows -> [[symbol, kind, start, end, exported, receiver,
    trait, private]]."""
    rows = []
    for line in text.split('\n') if text else ():
        symbol, kind, start, end, exported, receiver, trait, private = line.split('\t')
        rows.append([symbol, kind, int(start), int(end), exported == '1', receiver, trait,
                     private == '1'])
    return rows


def bucket_of(term):
    return zlib.crc32(term.encode('utf-8', 'surrogatepass')) % POSTING_BUCKETS


def pack_postings(postings):
    """{term: posting} -> POSTING_BUCKETS strings '|term=posting|...'."""
    buckets = [{} for _ in range(POSTING_BUCKETS)]
    for term, posting in postings.items():
        buckets[bucket_of(term)][term] = posting
    return [pack_bucket(bucket) for bucket in buckets]


def pack_bucket(postings):
    """The postings {term: posting} of one bucket as its string."""
    return '|' + '|'.join(f'{term}={posting}' for term, posting in postings.items()) + '|' \
        if postings else ''


def unpack_postings(buckets):
    """POSTING_BUCKETS strings -> {term: posting}."""
    postings = {}
    for bucket in buckets:
        for item in bucket.split('|'):
            if item:
                term, _, posting = item.partition('=')
                postings[term] = posting
    return postings


def find_posting(buckets, term):
    """One term's posting, found in its bucket without decoding anything else."""
    bucket = buckets[bucket_of(term)]
    start = bucket.find(f'|{term}=')
    if start < 0:
        return None
    start += len(term) + 2
    return bucket[start:bucket.index('|', start)]


def add_postings(postings, additions):
    """Append the postings additions {term: posting} to postings {term: posting}."""
    for term, posting in additions.items():
        postings[term] = postings[term] + ';' + posting if term in postings else posting


def segment_mentions(fids):
    """A pattern found in every posting or bucket that holds a segment of the files fids
    (and in a few more, which drop_postings reads and leaves as they are)."""
    return re.compile('(?:' + '|'.join(sorted(fids)) + ') ')


def drop_postings(postings, fids, mentions):
    """Remove the segments of the files fids (str), which mentions finds, from the postings."""
    for term in [term for term, value in postings.items() if mentions.search(value)]:
        kept = [s for s in postings[term].split(';') if s.split(' ', 1)[0] not in fids]
        if kept:
            postings[term] = ';'.join(kept)
        else:
            del postings[term]


def update_postings(buckets, records, additions):
    """The POSTING_BUCKETS strings with the segments of the given file records dropped and
    the postings additions {term: posting} appended.  Only the buckets that change are
    decoded: a one-file update touches a fraction of them."""
    fids = {str(record['fid']) for record in records}
    mentions = segment_mentions(fids) if fids else None
    grouped = [{} for _ in buckets]
    for term, posting in additions.items():
        grouped[bucket_of(term)][term] = posting
    updated = []
    for bucket, added in zip(buckets, grouped):
        if added or (mentions and mentions.search(bucket)):
            postings = unpack_postings([bucket])
            if mentions:
                drop_postings(postings, fids, mentions)
            add_postings(postings, added)
            bucket = pack_bucket(postings)
        updated.append(bucket)
    return updated


def chunk_postings(chunks, fid):
    """Chunk rows, field lengths and postings segments for one file.

    A segment is 'fid field entries'; an entry is a chunk number within the file or a
    run 'first-last', followed by ':tf' when the term occurs more than once.
    """
    by_field = [{} for _ in FIELDS]           # field number -> {term: [entry, ...]}
    lengths = [[0] * len(FIELDS) for _ in chunks]

    def add(counts, number, ids):
        entries = by_field[number]
        for term, tf in counts.items():
            entry = ids if tf == 1 else f'{ids}:{tf}'
            found = entries.get(term)
            if found is None:
                entries[term] = [entry]
            else:
                found.append(entry)

    searched = [chunk for chunk in chunks if chunk.get('searched', True)]   # they come first
    for local, chunk in enumerate(searched):
        for field, text in own_field_texts(chunk).items():
            counts = count_terms(text)
            if field == 'name' and not counts and text.lower() in STOP_WORDS:
                counts = {text.lower(): 1}      # which, Some, of: found when asked alone
            if field == 'name' and DOTTED_NAME.fullmatch(chunk['symbol']):  # as asked:
                dotted = chunk['symbol'].lower()        # not a window's path:L1-9, nor o.a=b
                counts[dotted] = counts.get(dotted, 0) + 1
            number = FIELD_NUMBER[field]
            lengths[local][number] = sum(counts.values())
            add(counts, number, str(local))
    for field, text, first, last in (shared_field_runs(searched) if searched else ()):
        counts = count_terms(text)
        number = FIELD_NUMBER[field]
        size = sum(counts.values())
        for local in range(first, last + 1):
            lengths[local][number] += size
        add(counts, number, str(first) if first == last else f'{first}-{last}')
    segments = {}
    for number, entries in enumerate(by_field):
        for term, ids in entries.items():
            segment = f'{fid} {number} ' + ','.join(ids)
            segments[term] = segments[term] + ';' + segment if term in segments else segment
    rows = [[chunk['symbol'], chunk['kind'], chunk['start'], chunk['end'],
             int(bool(chunk.get('exported'))), chunk.get('receiver', ''),
             chunk.get('trait', ''), int(bool(chunk.get('private')))] for chunk in chunks]
    return rows, lengths, segments


def count_words(words, postings):
    """Record in words {"names": {}, "parts": {}} the uses (fields of files, its posting's
    segments) of each term of postings {term: posting} that mine_compounds can use: a
    definition's name long enough to split, and a term used enough to be a part.  These
    counts are kept in the index, so that an update takes again only those of the terms
    it changed (recount_words) instead of decoding every posting."""
    names, parts = words['names'], words['parts']
    for term, posting in postings.items():
        if len(term) < COMPOUND_MIN_PART or len(term) > COMPOUND_MAX_LENGTH \
                or not (term.isalpha() and term.isascii()):
            continue
        uses = posting.count(';') + 1
        if ' 0 ' in posting and len(term) >= COMPOUND_MIN_PART + 2:     # field 0: name
            names[term] = uses
        if uses >= COMPOUND_MIN_USES:
            parts[term] = uses


def recount_words(words, old_buckets, new_buckets):
    """Bring the counts of count_words up to date after update_postings: the terms of each
    posting bucket that changed are counted again, the others keep their counts."""
    changed = {number for number, (old, new) in enumerate(zip(old_buckets, new_buckets))
               if old != new}
    for table in words.values():
        for term in [term for term in table if bucket_of(term) in changed]:
            del table[term]
    for number in sorted(changed):
        count_words(words, unpack_postings([new_buckets[number]]))


def mine_compounds(words):
    """{part: 'compound ...'}: the lowercase compound names of definitions in the indexed
    code split in two by the identifier parts the code uses on their own (makedir: make
    dir, getsiz: get siz), so that a question's 'dir' reaches makedirs.  A part must be
    used in COMPOUND_MIN_USES fields of files, and more than the compound; each part
    keeps the COMPOUND_LIMIT most used of its compounds.  words holds the uses of
    count_words."""
    names, parts = words['names'], words['parts']

    def uses(term):
        """In how many fields of files a term is."""
        return parts.get(term) or names.get(term, 0)

    def part(head):
        """The part a compound's head is: itself or its stem, '' for a prefix stop word."""
        if head in COMPOUND_PREFIXES:
            return ''
        return next((term for term in (head, stem(head)) if uses(term) >= COMPOUND_MIN_USES),
                    None)

    found, heads = {}, {}
    for term, n in names.items():
        best, best_uses = None, 0
        for cut in range(2, len(term) - COMPOUND_MIN_PART + 1):
            tail = term[cut:]
            if uses(tail) <= max(n, COMPOUND_MIN_USES - 1):    # not a part, or less used
                continue
            head = term[:cut]
            if head not in heads:
                heads[head] = part(head)
            head = heads[head]
            if head is None or (head and uses(head) <= n):
                continue
            score = min(uses(tail), uses(head)) if head else uses(tail)
            if score > best_uses:
                best, best_uses = (head, tail), score
        for piece in best or ():
            if piece:
                found.setdefault(piece, []).append(term)
    return {piece: ' '.join(sorted(compounds, key=lambda c: (-uses(c), c))[:COMPOUND_LIMIT])
            for piece, compounds in sorted(found.items())}


def compound_settings():
    """The limits mine_compounds used, kept with its table: when one is changed, the next
    `index` mines the table again even if no file changed."""
    return [COMPOUND_MIN_PART, COMPOUND_MAX_LENGTH, COMPOUND_MIN_USES, COMPOUND_LIMIT,
            sorted(COMPOUND_PREFIXES)]


def field_sums(rows):
    """Per field, the sum over rows of field values (lengths, or files' totals)."""
    return [sum(row[f] for row in rows) for f in range(len(FIELDS))]


def make_record(rows, lengths, fid, **details):
    """A file's entry in the index: chunk rows, field lengths, count and field totals."""
    return dict(details, fid=fid, count=len(rows), totals=field_sums(lengths),
                rows=encode_rows(rows),
                lengths=' '.join(str(n) for row in lengths for n in row))


# Job, run_jobs, worker_setup, update_index and unchanged have notes_search's shape.
class Job(NamedTuple):
    """One file to read and index, with the file id its postings will carry."""
    relative: str
    path: str
    fid: int
    options: IndexOptions


class Parsed(NamedTuple):
    """What reading one file gave: its record and postings segments, or a skip record."""
    relative: str
    record: dict = None
    segments: dict = None
    skip: dict = None


def index_one_file(job):
    """Read, hash, parse and tokenise one file -> Parsed."""
    try:
        data, info = read_file(job.path, job.options.max_file_size)
        sha256 = hashlib.sha256(data).hexdigest()
        read = chunk_file(data, job.relative, sha256)
    except SkipFile as skip:
        return Parsed(job.relative, skip=skip_record(job.relative, skip.reason, skip.line))
    rows, lengths, segments = chunk_postings(read.chunks, job.fid)
    unparsed = {'parsed_by': RUNNING_PYTHON} if read.note and read.language == 'python' else {}
    record = make_record(rows, lengths, job.fid, sha256=sha256, **stat_fields(info),
                         language=read.language, note=read.note, **unparsed)
    return Parsed(job.relative, record, segments)


def another_python_may_parse(record):
    """Whether a Python file cut in windows because the Python that indexed it could not
    read its definitions (newer syntax: type X = int) is read again by this one."""
    return record.get('language') == 'python' and bool(record.get('note')) and \
        record.get('parsed_by') != RUNNING_PYTHON


def index_batch(jobs):
    """Read, parse and tokenise a batch of files (in a worker process when there are
    enough) -> ([Parsed without segments], {term: posting} of the batch)."""
    parsed, postings = [index_one_file(job) for job in jobs], {}
    for file in parsed:
        add_postings(postings, file.segments or {})
    return [file._replace(segments=None) for file in parsed], postings


def run_jobs(work, jobs, workers, report):
    """work(job) for each job, yielded in order as each is done (so its result can be
    merged and dropped), in worker processes when there are several jobs and cores;
    report(done, total) counts the items of the jobs done.  Where no worker process can
    be had, or one dies, this process does the rest.  A process with other threads (a
    server, a test) forks none: a child may inherit a lock one of them held, and hang."""
    threads = sys.modules.get('threading')      # threads are started through it
    total, done, finished = sum(map(len, jobs)), 0, 0
    workers = min(workers or os.cpu_count() or 1, len(jobs))
    if workers > 1 and (threads is None or threads.active_count() == 1):
        import concurrent.futures.process    # only a big index needs it: faster searches
        import pickle
        try:
            pickle.dumps(work)   # work no worker could be sent (Python 3.9's pool can hang)
            with concurrent.futures.ProcessPoolExecutor(
                    workers, initializer=worker_setup, initargs=(os.getpid(),)) as pool:
                with signals_deferred():     # workers are forked with the signals held
                    answers = pool.map(work, jobs)
                for job, result in zip(jobs, answers):
                    finished, done = finished + 1, done + len(job)
                    if report:
                        report(done, total)
                    yield result
        except (OSError, ImportError, pickle.PicklingError, AttributeError,
                concurrent.futures.process.BrokenProcessPool):
            pass    # no worker processes here, work they cannot be sent, or one died
    for job in jobs[finished:]:
        result = work(job)
        done += len(job)
        if report:
            report(done, total)
        yield result


def worker_setup(parent):
    """In a worker process: Ctrl-C is the parent's to handle, SIGTERM ends the worker,
    and so does the end of its parent, whose pid is parent.  A worker's answers go back
    to its parent, so its stderr goes nowhere: a worker whose parent was interrupted
    must not print the broken pipe it meets."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, 'pthread_sigmask'):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    sys.stderr = open(os.devnull, 'w')

    def exit_with_parent():
        while os.getppid() == parent:
            time.sleep(WORKER_WATCH_SECONDS)
        os._exit(1)
    threading.Thread(target=exit_with_parent, daemon=True).start()


def empty_index(root):
    return {'tool': TOOL, 'format_version': FORMAT_VERSION, 'parser_version': PARSER_VERSION,
            'tokenizer_version': TOKENIZER_VERSION, 'root': str(root), 'indexed_at': '',
            'scan_started_ns': 0, 'next_fid': 0, 'chunk_count': 0,
            'field_totals': [0] * len(FIELDS), 'skipped': [], 'files': {},
            'postings': pack_postings({}), 'compounds': {},
            'compound_words': {'names': {}, 'parts': {}},
            'compounds_mined_with': compound_settings()}


def update_index(root, old, options, report=None):
    """Bring an index up to date with the tree; returns (index, stats).

    A file whose stat (fast path, see unchanged) or SHA-256 matches keeps its record; others
    are re-parsed, in worker processes when that pays.  Postings of removed records are
    dropped, those of new records added.
    """
    root = os.path.realpath(root)
    started_ns = time.time_ns()
    reusable = old is not None and old['root'] == root and all(
        old[key] == value for key, value in (('parser_version', PARSER_VERSION),
                                             ('tokenizer_version', TOKENIZER_VERSION)))
    index = old if reusable else empty_index(root)
    previous = index['files']
    trusted_before_ns = index['scan_started_ns'] - RACY_MTIME_NS
    found, skipped = list_tree(root, options)
    current, refreshed, jobs = {}, 0, []
    for relative, path in found.items():
        record = previous.get(relative)
        verdict = record and not another_python_may_parse(record) and \
            unchanged(path, record, options.max_file_size, trusted_before_ns)
        if verdict:
            current[relative] = record
            refreshed += verdict == 'touched'
        else:
            jobs.append(Job(relative, path, index['next_fid'] + len(jobs), options))
    per_job = FILES_PER_JOB if len(jobs) >= PARALLEL_MIN_FILES else max(len(jobs), 1)
    batches = [jobs[start:start + per_job] for start in range(0, len(jobs), per_job)]
    added, additions = {}, {}
    for parsed, postings in run_jobs(index_batch, batches, options.jobs, report):
        for file in parsed:
            if file.skip:
                skipped.append(file.skip)
            else:
                added[file.relative] = file
        add_postings(additions, postings)
    removed = [relative for relative in previous if relative not in current]
    remine = index['compounds_mined_with'] != compound_settings()
    if added or removed:
        buckets = update_postings(
            index['postings'], [previous[relative] for relative in removed], additions)
        recount_words(index['compound_words'], index['postings'], buckets)
        index['postings'] = buckets
    additions.clear()           # merged: the mining must not hold them too (Go: 300 -> 245 MB)
    if remine:
        index['compound_words'] = {'names': {}, 'parts': {}}
        count_words(index['compound_words'], unpack_postings(index['postings']))
    if added or removed or remine:
        index['compounds'] = mine_compounds(index['compound_words'])
        index['compounds_mined_with'] = compound_settings()
    current.update((relative, file.record) for relative, file in added.items())
    deleted = sum(1 for relative in previous if relative not in current)
    skipped.sort(key=lambda s: s['path'])
    choices = {key: getattr(options, key) for key in WALK_CHOICES}
    changed = added or removed or remine or refreshed or skipped != index['skipped'] \
        or not reusable or index.get('walked_with') != choices
    index.update(files=dict(sorted(current.items())), skipped=skipped, root=root,
                 walked_with=choices,
                 next_fid=index['next_fid'] + len(jobs), scan_started_ns=started_ns,
                 chunk_count=sum(record['count'] for record in current.values()),
                 field_totals=field_sums([record['totals'] for record in current.values()]))
    windowed = [skip_record(relative, record['note']) for relative, record in
                index['files'].items() if record.get('note')]
    stats = {'updated': len(added), 'removed': deleted, 'skipped': skipped,
             'windowed': windowed, 'files': len(current), 'chunks': index['chunk_count'],
             'changed': bool(changed)}
    return index, stats


def unchanged(path, record, limit, trusted_before_ns):
    """'same' or 'touched' (only its stat moved) when the file still has the recorded
    SHA-256 and is at most limit bytes, else None.  The stat alone (stat_changed) decides
    only for files last changed (mtime and ctime) well before the previous run started:
    a file written during that run's clock tick could have changed again without its
    stat showing it, even with its mtime put back (touch -r, cp -p)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if info.st_size > limit:                # a lower --max-file-size: skipped now
        return None
    same_stat = not stat_changed(info, record)
    if same_stat and max(record['mtime_ns'], record.get('ctime_ns', 0)) < trusted_before_ns:
        return 'same'
    try:
        data = read_file(path, limit)[0]
    except SkipFile:
        return None
    if hashlib.sha256(data).hexdigest() != record['sha256']:
        return None
    if same_stat:
        return 'same'
    record.update(stat_fields(info))
    return 'touched'


def stat_fields(info):
    """What a file's record keeps of its stat, for stat_changed."""
    return {'size': info.st_size, 'mtime_ns': info.st_mtime_ns, 'ctime_ns': info.st_ctime_ns}


def stat_changed(info, record):
    """Whether a file's stat differs from its record's: its size, its mtime, or its ctime,
    which also moves when only the mode changed or a `touch -d` put the mtime back (git
    checks it too)."""
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns) != \
        (record.get('size'), record.get('mtime_ns'), record.get('ctime_ns'))


def scan_tree(root, options=IndexOptions(), strict=False):
    """Chunks of every file under root, numbered code-1... (those of a file read in line
    windows carry the reason as 'note'); also the files skipped.  strict=True is the
    tutorial's contract: its Python files only, and the first that cannot be parsed
    raises."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise ValueError('Repository directory does not exist.')
    chunks = []
    found, skipped = list_tree(root, options)
    for relative, path in found.items():
        try:
            if strict:
                if language_of(relative) == 'python':
                    chunks.extend(index_file(path, root))
                continue
            data = read_file(path, options.max_file_size)[0]
            read = chunk_file(data, relative, hashlib.sha256(data).hexdigest())
        except SkipFile as skip:
            if strict and skip.reason.startswith('cannot decode'):
                raise SyntaxError(f'{relative}:{skip.line}: {skip.reason}') from None
            skipped.append(skip_record(relative, skip.reason, skip.line))
            continue
        except OSError as error:
            skipped.append(skip_record(relative, f'skipped: {error.strerror}'))
            continue
        noted = {'note': read.note} if read.note else {}
        chunks.extend(dict(chunk, language=read.language, **noted) for chunk in read.chunks)
    for number, chunk in enumerate(chunks, 1):
        chunk['id'] = f'code-{number}'
    return chunks, skipped


def build_index(root):
    """The tutorial's API: every chunk under root; raises SyntaxError for a broken file.
    (notes_search's build_index differs on purpose: each keeps its own tutorial's.)"""
    return scan_tree(root, strict=True)[0]


# --- Index file: atomic write, lock, load and validate ---------------------------------
# The same as notes_search's: a reader sees the old file or the new one, never a mix, and
# nothing but the index is left beside it.

def write_index(path, document):
    """Write document as JSON to a unique temp file in the index's folder, fsync, then
    replace the index with it.  A new index is readable by its owner only; a replaced
    one keeps its mode.  Ctrl-C and SIGTERM wait until the file is whole (a line then
    says so) or gone."""
    destination = os.path.realpath(path)            # through a link: replace its target
    folder, name = os.path.split(destination)
    try:
        mode = stat.S_IMODE(os.stat(destination).st_mode)
    except OSError:
        mode = 0o600
    temporary = os.path.join(folder, f'{temporary_prefix(name)}{os.getpid()}.'
                                     f'{secrets.token_hex(4)}.tmp')
    with signals_deferred():
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                for piece in json_pieces(document):
                    view = memoryview(piece.encode('ascii'))    # ASCII: it loads faster
                    while view:
                        view = view[os.write(fd, view):]
                os.fsync(fd)
                if hasattr(os, 'fchmod'):
                    os.fchmod(fd, mode)
            finally:
                os.close(fd)
            replace_file(temporary, destination)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise IndexProblem(f'cannot write index {path}: {error.strerror}', 1) from None
        with contextlib.suppress(OSError):
            dir_fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        if interrupt_waits():       # the interrupt's own line will follow this one
            say_at_once(f'index {path} was written before the interrupt')


def json_pieces(document):
    """json.dumps(document) without spaces, in pieces of about WRITE_PIECE characters,
    its top-level dicts and lists an item at a time: a big index is never one string in
    memory (nor twice, while that string grows)."""
    def parts():
        compact = functools.partial(json.dumps, separators=(',', ':'))
        yield '{'
        for number, (key, value) in enumerate(document.items()):
            yield (',' if number else '') + json.dumps(key) + ':'
            if isinstance(value, dict):
                yield '{'
                for inner, (name, item) in enumerate(value.items()):
                    yield (',' if inner else '') + json.dumps(name) + ':' + compact(item)
                yield '}'
            elif isinstance(value, list):
                yield '['
                for inner, item in enumerate(value):
                    yield (',' if inner else '') + compact(item)
                yield ']'
            else:
                yield compact(value)
        yield '}'

    pieces, size = [], 0
    for part in parts():
        pieces.append(part)
        size += len(part)
        if size >= WRITE_PIECE:
            yield ''.join(pieces)
            pieces, size = [], 0
    yield ''.join(pieces)


def replace_file(source, destination, retry_seconds=2.0):
    """os.replace; on Windows, where it fails while a search holds the old index open,
    tried again for a while."""
    deadline = time.monotonic() + retry_seconds
    while True:
        try:
            return os.replace(source, destination)
        except PermissionError:
            if os.name != 'nt' or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextlib.contextmanager
def signals_deferred():
    """Hold Ctrl-C and SIGTERM until the block ends (where the system can block them)."""
    if not hasattr(signal, 'pthread_sigmask'):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def interrupt_waits():
    """True when a Ctrl-C or SIGTERM that signals_deferred holds waits to be delivered
    (one that is ignored waits too, but nothing follows it)."""
    return hasattr(signal, 'sigpending') and any(
        signal.getsignal(number) != signal.SIG_IGN
        for number in signal.sigpending() & {signal.SIGINT, signal.SIGTERM})


def say_at_once(text):
    """Write 'program: text' to stderr now, unbuffered and unescaped, over a progress line
    on a terminal: what a signal handler, or a write that holds signals, can do."""
    with contextlib.suppress(Exception):        # a closed or full stderr, or none
        sys.stderr.flush()
    with contextlib.suppress(OSError):
        erase = '\r\033[K' if os.isatty(2) else ''
        os.write(2, f'{erase}{program_name()}: {text}\n'.encode())


def temporary_prefix(name):
    """How the temp files of the index file name begin: '.name.', or for a name too long
    to take the rest within a file name's 255 bytes, '.' and a digest of it."""
    if len(os.fsencode(name)) > 200:
        name = hashlib.sha256(os.fsencode(name)).hexdigest()[:16]
    return f'.{name}.'


def remove_leftover_temporaries(destination):
    """Delete temp files a killed run left beside the index, or beside the file it links to
    (call while holding the lock)."""
    folder, name = os.path.split(os.path.realpath(destination))
    ours = re.compile(re.escape(temporary_prefix(name)) + r'\d+\.[0-9a-f]{8}\.tmp')
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for leftover in names:
        if ours.fullmatch(leftover):                # none of the user's own .tmp files
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, leftover))


@contextlib.contextmanager
def index_lock(destination, timeout=LOCK_TIMEOUT_SECONDS):
    """Hold an exclusive lock while the index is read, updated and replaced.

    With flock (POSIX) the lock is on the index's folder, so no lock file is made and
    the OS releases the lock when its holder ends, however it ends.  Elsewhere it is a
    lock file beside the index, removed on release or, if its process died, by the
    next run.
    """
    path = os.path.realpath(destination) + '.lock'   # through a link: the file it names
    folder = os.path.dirname(path)
    started = time.monotonic()
    told = False
    while True:
        try:
            fd = os.open(folder, os.O_RDONLY) if fcntl else \
                os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            fd = None
            break_stale_lock(path)
        except OSError as error:
            raise IndexProblem(f'cannot lock index {destination}: {error.strerror}', 1) \
                from None
        if fd is not None and fcntl is None:
            os.write(fd, str(os.getpid()).encode())
            break
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                os.close(fd)
        waited = time.monotonic() - started
        if waited > timeout:
            raise IndexProblem(f'another index run holds the lock on {destination}; gave '
                               f'up after {timeout:.0f} s', 1)
        if waited > LOCK_NOTICE_SECONDS and not told:
            print(f'{program_name()}: waiting for another index run to finish with '
                  f'{destination} (at most {timeout:.0f} s)', file=sys.stderr)
            told = True
        time.sleep(0.05)
    try:
        yield
    finally:
        os.close(fd)
        if fcntl is None:
            with contextlib.suppress(OSError):
                os.unlink(path)


def break_stale_lock(path):
    """Without flock: remove a lock file whose process no longer runs."""
    try:
        with open(path) as handle:
            os.kill(int(handle.read() or '0'), 0)
    except (ValueError, ProcessLookupError, FileNotFoundError):
        with contextlib.suppress(OSError):
            os.unlink(path)
    except OSError:
        pass


def index_owner(data):
    """The tool named at the start of an index file's bytes, or '' (not an index)."""
    match = re.match(rb'\{\s*"tool"\s*:\s*"(\w+)"', data)
    return match.group(1).decode('ascii') if match else ''


def previous_index(destination):
    """(the index at destination to update, or None; a warning or '').  IndexProblem
    when the file there is not this tool's index (nor a regular file, or a link to one):
    it is never overwritten."""
    try:
        mode = os.stat(destination).st_mode
        if not stat.S_ISREG(mode):
            what = 'a directory' if stat.S_ISDIR(mode) else 'not a regular file'
            raise IndexProblem(f'index path is {what}: {destination}; refusing to overwrite '
                               'it (choose another --out)')
        with open(destination, 'rb') as handle:
            head = handle.read(256)
    except FileNotFoundError:
        return None, ''
    except OSError as error:
        raise IndexProblem(f'cannot read index {destination}: {error.strerror}') from None
    owner = index_owner(head)
    if head and owner != TOOL:
        what = f'holds a {owner} index' if owner else f'is not a {TOOL} index'
        raise IndexProblem(f'{destination} {what}; refusing to overwrite it '
                           '(choose another --out)')
    try:
        return (load_index(destination), '') if head else (None, '')
    except IndexProblem as problem:
        return None, f"{REBUILD_ADVICE.sub('', str(problem))}; rebuilding it"


REBUILD_ADVICE = re.compile(r' \(rebuild it with: [^)]*\)|; rebuild it with: .*')   # the
                            # advice an index problem gives, left out where index rebuilds


def load_index(path, deep=True):
    """Read and validate an index file; every problem becomes one IndexProblem line."""
    if not os.fspath(path):
        raise IndexProblem('index path is empty')
    try:                        # a pipe (<(...)) is read; one with no writer is empty
        with open(os.open(path, os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0)), 'rb') as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError
            if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
                raise IndexProblem(f'index path is not a regular file: {path}')
            piped = stat.S_ISFIFO(mode)         # index cannot write a pipe: no advice
            if piped:
                os.set_blocking(handle.fileno(), True)
            data = handle.read()
    except FileNotFoundError:
        raise IndexProblem(f'index file not found: {path} (run: {program_name()} index '
                           f'ROOT --out {path})') from None
    except IsADirectoryError:
        raise IndexProblem(f'index path is a directory: {path}') from None
    except OSError as error:
        raise IndexProblem(f'cannot read index {path}: {error.strerror}') from None
    try:
        index = json.loads(data)
    except (ValueError, RecursionError):
        if data and index_owner(data[:256]) != TOOL:    # index leaves it alone: say so
            raise IndexProblem(f'not a {TOOL} index, or one damaged at its start: {path} '
                               f'(index will not overwrite it: delete it or choose another '
                               f'--out)') from None
        advice = '' if piped else \
            f' (rebuild it with: {program_name()} index ROOT --out {path})'
        raise IndexProblem(f'index file is corrupt or truncated: {path}{advice}') from None
    problem = index_problem(index, deep)
    if problem:
        ours = isinstance(index, dict) and index.get('tool') == TOOL and not piped
        advice = f'; rebuild it with: {program_name()} index ROOT --out {path}' \
            if ours else ''
        raise IndexProblem(f'{path}: {problem}{advice}')
    return index


def safe_relative_path(relative):
    """A stored path must stay inside the root: relative, no '..', no empty parts, and no
    part this system reads as a drive or holding a separator (C:x, a\\b on Windows; on
    POSIX a name may hold ':' and '\\')."""
    return bool(relative) and all(
        part not in ('', '.', '..') and not os.path.splitdrive(part)[0]
        and not (os.altsep and os.sep in part) for part in relative.split('/'))


def content_checksum(index):
    """CRC-32 over the root, what a search reads of the records and the postings, so that
    a hand-edited or damaged index is rebuilt instead of being carried forward."""
    checksum = 0
    for part in itertools.chain(
            [index['root']],
            (f'{relative}\0{record["fid"]}\0{record["count"]}\0{record["totals"]}\0'
             f'{record["rows"]}\0{record["lengths"]}'
             for relative, record in index['files'].items()),
            index['postings'], (f'{part}={compounds}' for part, compounds in
                                index['compounds'].items()),
            (f'{kind}:{term}={uses}' for kind, table in index['compound_words'].items()
             for term, uses in table.items())):
        checksum = zlib.crc32(part.encode('utf-8', 'surrogatepass'), checksum)
    return checksum


def index_problem(index, deep=True):
    """Why a parsed index cannot be used, or '' when its structure is sound.

    deep=False checks only the index's outline, for a listing that opens many indexes;
    anything broken a search meets as it decodes is reported as a damaged index too.  A
    stored size, mtime or SHA-256 that is wrong only makes `index` read that file again.
    """
    if not isinstance(index, dict):
        return f'not a {TOOL} index (not a JSON object)'
    tool = index.get('tool')
    if tool != TOOL:
        if isinstance(tool, str) and tool:
            return f'made by {tool}.py, not {TOOL}.py'
        return f'not a {TOOL} index (no "tool": "{TOOL}")'
    if index.get('format_version') != FORMAT_VERSION:
        version = index.get('format_version')
        return f'index format {version!r} is not {FORMAT_VERSION}' if version is not None \
            else 'the index has no format_version'
    expected = {'root': str, 'files': dict, 'postings': list, 'compounds': dict,
                'compound_words': dict, 'compounds_mined_with': list, 'skipped': list,
                'next_fid': int, 'parser_version': int, 'tokenizer_version': int,
                'scan_started_ns': int, 'chunk_count': int, 'field_totals': list,
                'checksum': int}
    for key, kind in expected.items():
        if type(index.get(key)) is not kind:
            return f'damaged index: "{key}" is missing or not a {kind.__name__}'
    if not all(type(entry) is dict and type(entry.get('path')) is str
               and type(entry.get('line')) is int and type(entry.get('reason')) is str
               for entry in index['skipped']):
        return 'damaged index: bad list of skipped files'
    if len(index['postings']) != POSTING_BUCKETS or len(index['field_totals']) != len(FIELDS) \
            or not all(type(bucket) is str and (bucket == '' or bucket[0] == bucket[-1] == '|')
                       for bucket in index['postings']):
        return 'damaged index: bad postings'
    if not all(map(safe_relative_path, index['files'])):
        return 'damaged index: a file path outside the root'
    words = index['compound_words']
    if sorted(words) != ['names', 'parts'] or not all(
            type(table) is dict and all(type(uses) is int for uses in table.values())
            for table in words.values()):
        return 'damaged index: bad compound_words'
    if not deep:
        return ''
    records = index['files'].values()
    try:
        fids = {record['fid'] for record in records}
        if not all(type(record.get('size')) is type(record.get('mtime_ns')) is int
                   and type(record.get('ctime_ns', 0)) is int
                   and type(record.get('sha256')) is str for record in records):
            return 'damaged index: a file record without its size, times or SHA-256'
        if len(fids) != len(records) or {type(fid) for fid in fids} - {int} \
                or index['chunk_count'] != sum(record['count'] for record in records):
            return 'damaged index: chunk counts do not add up'
        if index['checksum'] != content_checksum(index):
            return 'damaged index: its content does not match its checksum'
    except (KeyError, TypeError, AttributeError):
        return 'damaged index: bad records'
    return ''


def require_folder(root):
    """The root folder, resolved; IndexProblem when it is missing, not a folder or cannot
    be listed (an index of it would drop every file)."""
    if not os.path.isdir(root):
        what = 'is a file' if os.path.exists(root) else 'does not exist'
        raise IndexProblem(f'root folder {what}: {root}')
    try:
        os.scandir(root).close()
    except OSError as error:
        raise IndexProblem(f'cannot list root folder {root}: {error.strerror}') from None
    return os.path.realpath(root)


def require_index_destination(out):
    """IndexProblem when the index cannot be written at out."""
    if not out:
        raise IndexProblem('index path is empty')
    if os.path.isdir(out):
        raise IndexProblem(f'index path is a directory: {out}')
    if os.fspath(out).endswith(('/', os.sep)):
        raise IndexProblem(f'index path names a folder, not a file: {out}')
    folder = os.path.dirname(os.path.realpath(out))        # through a link: its target's
    if not os.path.isdir(folder):
        raise IndexProblem(f'folder of the index does not exist: {folder}')


def index_folder(root, destination, options, report=None):
    """Write or update the index of a folder at destination; returns update_index's
    stats, with 'warning' when an unusable index of this tool was rebuilt or one of another
    folder replaced."""
    root = require_folder(root)
    require_index_destination(destination)
    options = options._replace(exclude=options.exclude + (os.fspath(destination),))
    with index_lock(destination, LOCK_TIMEOUT_SECONDS), collector_paused():
        remove_leftover_temporaries(destination)
        old, warning = previous_index(destination)
        if options.as_before and old is not None:
            options = walked_with(old, exclude=options.exclude, jobs=options.jobs)
        moved = old is not None and old['root'] != root      # its files all leave it
        if moved:
            warning = f"{destination} held the index of {old['root']}; it now holds {root}"
        index, stats = update_index(root, old, options, report)
        stats['removed'] += len(old['files']) if moved else 0
        if stats['changed'] or old is None:
            index['indexed_at'] = datetime.datetime.now(datetime.timezone.utc) \
                .strftime('%Y-%m-%dT%H:%M:%SZ')
            index['checksum'] = content_checksum(index)
            write_index(destination, index)
    stats['warning'] = warning
    return stats


@contextlib.contextmanager
def damaged_index_guard(path):
    """An index that passed the quick checks but breaks while being read is damaged."""
    try:
        yield
    except (KeyError, ValueError, IndexError, TypeError, AttributeError):
        raise IndexProblem(f'{path}: damaged index (its entries do not fit together); '
                           f'rebuild it with: {program_name()} index ROOT') from None


@contextlib.contextmanager
def collector_paused():
    """Pause the cyclic garbage collector while indexing: the many small objects an
    index is made of form no cycles, and its passes over them cost a tenth of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# --- Ranking: field-weighted BM25 over the postings ------------------------------------

IDENTIFIER_LIKE = re.compile(r'_|\.|[a-z][A-Z]|[A-Za-z][0-9]+[A-Za-z]')   # b64encode; not a
                        # word and its number (float64, sha256, utf8): words of a sentence
PRIVATE_NAME = re.compile(r'(^|\.)(_(?!_)|#)')      # _name; JavaScript's #name
GO_UNEXPORTED_NAME = re.compile(r'(^|\.)[a-z_]')   # Go: a lowercase name is package-private
# Folders of private code, whose definitions count as private names do: vendored copies
# of other code, Go's internal packages, Rust std's platform layer, the JDK's own classes.
INTERNAL_PATH = re.compile(r'(^|/)vendor/|(^|/)internal/.*\.go$|(^|/)sys(_common)?/.*\.rs$'
                           r'|(^|/)(sun|jdk/internal)/.*\.java$')
TEST_PATH = re.compile(r'(^|/)(tests?|testing|idle_test|__tests__|testdata|benches)/'
                       r'|(^|/)src/[a-z]\w*Test/'            # Gradle's jvmTest, androidTest
                       r'|(^|/)test_[^/]*$|(^|/)tests?\.rs$|(^|/)conftest\.py$'
                       r'|_tests?\.(py|go|rs)$|(Tests?|Spec)\.(java|kt|kts)$'
                       r'|\.test\.[cm]?[jt]sx?$|[-_.]spec\.[cm]?[jt]sx?$'
                       r'|(^|/)spec/.*\.[cm]?[jt]sx?$')     # Jasmine's spec/ (rxjs: map-spec.ts)
RUST_TEST_MODULE = re.compile(r'(^|\.)tests?\.')   # Rust: in a `mod tests` of a source file


def make_search_index(chunks, root='', skipped=()):
    """An in-memory searchable index over chunks (from build_index or scan_tree)."""
    by_path = {}
    for chunk in chunks:
        by_path.setdefault(chunk['path'], []).append(chunk)
    files, postings, ordered, words = {}, {}, [], {'names': {}, 'parts': {}}
    for fid, (path, group) in enumerate(by_path.items()):
        rows, lengths, segments = chunk_postings(group, fid)
        files[path] = make_record(rows, lengths, fid, revision=group[0]['revision'],
                                  language=group[0].get('language', 'python'))
        add_postings(postings, segments)
        ordered.extend(group)
    count_words(words, postings)
    view = open_search_index({
        'root': str(root), 'files': files, 'postings': pack_postings(postings),
        'compounds': mine_compounds(words),
        'skipped': list(skipped),
        'chunk_count': len(ordered),
        'field_totals': field_sums([record['totals'] for record in files.values()])})
    view['chunks'] = ordered
    return view


def open_search_index(index):
    """The one shape ranking and look-ups work on: chunks numbered code-1... by path."""
    starts, order, fid_base, fid_path = [], [], {}, {}
    total = 0
    for relative, record in index['files'].items():
        fid_base[record['fid']], fid_path[record['fid']] = total, relative
        record.setdefault('revision', record.get('sha256', '')[:12])
        starts.append(total)
        order.append(relative)
        total += record['count']
    count = max(total, 1)
    averages = [max(field_total / count, 1.0) for field_total in index['field_totals']]
    return {'starts': starts, 'order': order, 'fid_base': fid_base, 'fid_path': fid_path,
            'total': total, 'decoded': {}, 'lengths': {}, 'chunks': None,
            'postings': index['postings'], 'compounds': index['compounds'],
            'averages': averages, 'root': index['root'], 'files': index['files'],
            'skipped': index['skipped'], 'indexed_at': index.get('indexed_at', '')}


def open_index_file(path):
    """An index file opened for searching, its counts and checksum checked (index_problem):
    a damaged or hand-edited index is one error line, not wrong answers."""
    index = load_index(path)
    if index['tokenizer_version'] != TOKENIZER_VERSION:
        raise IndexProblem(f'{path} was made by another version of {TOOL}; rebuild it '
                           f'with: {program_name()} index {shlex.quote(index["root"])} '
                           f'--out {shlex.quote(str(path))}')
    with damaged_index_guard(path):
        return open_search_index(index)


def file_rows(index, relative):
    """The decoded chunk rows of one file, decoded once per search."""
    rows = index['decoded'].get(relative)
    if rows is None:
        rows = decode_rows(index['files'][relative]['rows'])
        index['decoded'][relative] = rows
        if len(rows) != index['files'][relative]['count'] or not all(
                1 <= row[ROW_START] <= row[ROW_END] for row in rows):
            raise ValueError(f'chunk rows of {relative} are damaged')
    return rows


def file_lengths(index, relative):
    """The field lengths of one file's chunks as one flat list, decoded once per search."""
    lengths = index['lengths'].get(relative)
    if lengths is None:
        record = index['files'][relative]
        text = record['lengths']
        lengths = index['lengths'][relative] = list(map(int, text.split())) if text else []
        if len(lengths) != record['count'] * len(FIELDS):
            raise ValueError(f'field lengths of {relative} are damaged')
    return lengths


def chunk_entry(index, number):
    """A chunk, by its number, as the tutorial's dict (with text when the index is in
    memory)."""
    if index['chunks'] is not None:
        return dict(index['chunks'][number])
    place = bisect.bisect_right(index['starts'], number) - 1
    relative = index['order'][place]
    row = file_rows(index, relative)[number - index['starts'][place]]
    record = index['files'][relative]
    return {'id': f'code-{number + 1}', 'path': relative, 'symbol': row[ROW_SYMBOL],
            'kind': row[ROW_KIND], 'language': record.get('language', 'python'),
            'start': row[ROW_START], 'end': row[ROW_END], 'exported': row[ROW_EXPORTED],
            'receiver': row[ROW_RECEIVER], 'trait': row[ROW_TRAIT], 'private': row[ROW_PRIVATE],
            'revision': record['revision']}


def named_in_question(question):
    """Lowercased names a question spells like code: snake_case, camelCase, dotted.

    A definition with exactly that name is what the asker wants, above code that merely
    mentions it.  A one-word question counts as a name too.
    """
    words = re.findall(r'[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*',
                       dotted_question(question))
    if len(words) == 1 and len(question.split()) == 1:
        return {words[0].lower()}
    return {word.lower() for word in words if IDENTIFIER_LIKE.search(word)}


class Statistics(NamedTuple):
    """What BM25F needs beyond one chunk: how many chunks hold each term, how many chunks
    there are, and the average length of each field (of one index, or of several)."""
    counts: dict
    total: int
    averages: list


def search_index(index, question, top_k=DEFAULT_TOP_K, accept_path=None, explain=False):
    """Rank chunks for a question with BM25F; only chunks sharing a term are touched.
    With explain, each hit says what gave its score (explain_chunk)."""
    question = TERMINAL_CODES.sub('', question)
    terms = with_compounds(query_terms(question), [index['compounds']])
    matches, counts = term_matches(index, terms, accept_path)
    statistics = Statistics(counts, index['total'], index['averages'])
    return score_matches(index, question, terms, matches, statistics, top_k, explain)


def term_matches(index, terms, accept_path=None, averages=None):
    """{term: {chunk number: field-weighted, length-normalised term frequency}} of the
    question's terms (query_terms) in the files accept_path takes, and {term: how many
    chunks of the whole index hold it}: a --path filter limits the hits, not the idf, so
    a hit scores as it would without one. Lengths are normalised by the index's average
    field lengths, or by the given ones."""
    fid_base, fid_path = index['fid_base'], index['fid_path']
    weights, anchors = terms.weights, terms.anchors
    field_weight = [FIELD_WEIGHTS[f] for f in FIELDS]
    field_b = [FIELD_LENGTH_NORMALISATION[f] for f in FIELDS]
    averages = averages or index['averages']
    allowed, matches, counts = {}, {}, {}
    field_count = len(FIELDS)
    for term in weights:
        value = find_posting(index['postings'], term)
        if not value or (term not in anchors and value.count(';') + value.count(',')
                         > SYNONYM_POSTING_LIMIT):     # not in characters: file ids grow
            continue
        weighted, outside = {}, set()
        for segment in value.split(';'):
            fid, field, ids = segment.split(' ')
            fid = int(fid)
            relative, base = fid_path[fid], fid_base[fid]
            if accept_path is not None:
                if fid not in allowed:
                    allowed[fid] = accept_path(relative)
                if not allowed[fid]:
                    for entry in ids.split(','):
                        first, last, _ = posting_entry(entry)
                        outside.update(range(base + first, base + last + 1))
                    continue
            lengths = file_lengths(index, relative)
            f = int(field)
            weight, b, average = field_weight[f], field_b[f], averages[f]
            for entry in ids.split(','):
                if entry.isdigit():                 # the common case: one chunk, once
                    first = last = int(entry)
                    tf = 1
                else:
                    first, last, tf = posting_entry(entry)
                for local in range(first, last + 1):
                    norm = 1 - b + b * lengths[local * field_count + f] / average
                    n = base + local
                    weighted[n] = weighted.get(n, 0.0) + weight * tf / norm
        if weighted:
            matches[term] = weighted
        counts[term] = len(weighted) + len(outside)
    return matches, counts


def posting_entry(entry):
    """(first chunk, last chunk, term frequency) of one posting entry: 'n', 'n:tf',
    'n-m' or 'n-m:tf'."""
    span, _, tf = entry.partition(':')
    first, _, last = span.partition('-')
    return int(first), int(last or first), int(tf or 1)


def private_name(entry):
    """Whether a chunk's definition is private: declared `private`, named _name (#name
    in JavaScript), or in Go named (or its type named) with a lowercase first letter."""
    if entry.get('language') == 'go' and entry['kind'] not in ('window', 'module'):
        return bool(GO_UNEXPORTED_NAME.search(entry['symbol']))
    return bool(entry.get('private') or PRIVATE_NAME.search(entry['symbol']))


def term_idf(terms, statistics, term):
    """The idf a question term is scored with: its own, or for a compound name reached
    through a part, the part's (a rare compound must not outweigh the word asked for)."""
    counts = statistics.counts
    return idf_of(counts.get(terms.parts.get(term), counts[term]), statistics.total)


def idf_of(matches, total):
    """BM25's inverse document frequency of a term found in matches of total texts."""
    return math.log(1 + (total - matches + 0.5) / (matches + 0.5))


def score_matches(index, question, terms, matches, statistics, top_k, explain=False):
    """The top_k hits of one index from its term matches.  statistics are the index's
    own, or those of several indexes searched together, so that their scores compare.
    The factors of a file (prose file, test file, path word, internal path) weigh every
    candidate; rerank_by_name weighs the leading ones by what they are."""
    weights, anchors, concepts = terms.weights, terms.anchors, terms.concepts
    by_concept, anchored = {}, set()          # concept: {chunk: its best term's score}
    for term, weighted in matches.items():
        if term in anchors:
            anchored.update(weighted)
        idf = term_idf(terms, statistics, term)
        best = by_concept.setdefault(concepts[term], {})
        for n, tf in weighted.items():
            score = weights[term] * idf * tf * (BM25_K1 + 1) / (BM25_K1 + tf)
            if score > best.get(n, 0.0):
                best[n] = score
    wants_tests = any(term.startswith('test') for term in anchors)
    wants_prose = any(word_terms(word)[0] in anchors for word in PROSE_QUESTION_WORDS)
    scores = {}
    for best in by_concept.values():
        for n, score in best.items():
            if n in anchored:
                scores[n] = scores.get(n, 0.0) + score
    path_words = {term for term in weights if term not in terms.parts} - PATH_LAYOUT_WORDS
    insides = bool(INSIDES_QUESTION.search(question))       # private code is the answer
    file_factors, file_weights = {}, {}      # path: {what: its weight}, and their product
    for n in scores:
        relative = index['order'][bisect.bisect_right(index['starts'], n) - 1]
        if relative not in file_weights:
            language = index['files'][relative].get('language')
            test = bool(TEST_PATH.search(relative)) and (
                not wants_tests or language in TEST_DATA_LANGUAGES)
            prose = not wants_prose and language in PROSE_LANGUAGES
            file_factors[relative] = {what: weight for what, weight, holds in (
                ('prose file', PROSE_FILE_WEIGHT, prose),
                ('test file', TEST_FILE_WEIGHT, test),
                ('path word', PATH_WORD_WEIGHT,
                 not test and not path_words.isdisjoint(path_terms(relative))),
                ('internal path', PRIVATE_NAME_WEIGHT,
                 not insides and bool(INTERNAL_PATH.search(relative))))
                if holds and weight != 1.0}
            file_weights[relative] = math.prod(file_factors[relative].values())
        scores[n] *= file_weights[relative]
    ranked = rerank_by_name(index, question, scores, top_k, file_factors, wants_tests)
    if explain:
        dropped = dropped_words(question, terms)
        for n, hit, factors in ranked:
            explained = explain_chunk(index, terms, statistics, n, factors)
            hit['explain'] = dict(explained, dropped=dropped,
                                  missing=missing_words(question, terms, explained['words']))
    return [hit for _, hit, _ in ranked]


def dotted_names(relative, symbol):
    """The dotted names that reach a definition: its module path and symbol, and each
    tail of that (urllib/parse.py urlsplit: urllib.parse.urlsplit, parse.urlsplit).
    Outside Python the folder alone names it too (net/http/server.go Server.Serve:
    http.Server.Serve, as Go and Java packages are folders), and in Go only the folder
    (its files are no modules: server.go's Serve is not http.server.Serve); src/ folders
    are left out and mod.rs, lib.rs and index.ts name their folder (std/src/fs.rs:
    std.fs.read)."""
    module, dot, suffix = relative.rpartition('.')
    parts = (module if dot and '/' not in suffix else relative).lower().split('/')
    language = language_of(relative)
    python = language == 'python'
    if parts[-1] in (('__init__',) if python else ('mod', 'lib', 'index')):
        parts.pop()
    if not python:
        parts = [part for part in parts if part != 'src'] or parts
    symbols = symbol.split('.')
    in_folder = parts[:-1] + symbols
    if python:
        qualified = [parts + symbols]
    elif language == 'go':
        qualified = [in_folder]
    else:
        qualified = [parts + symbols, in_folder]
    names = set()
    for full in qualified:
        names.update('.'.join(full[start:]) for start in range(len(full) - 1))
    return names


def phrase_depth(question):
    """How many leading candidates are read for their string literals (see
    rerank_by_name)."""
    asked = len(question_words(question))
    if asked >= PHRASE_MIN_WORDS:
        return PASTED_DEPTH if PASTED.search(question) else PHRASE_DEPTH
    if asked >= PHRASE_WHOLE_WORDS and MESSAGE_MARKS.search(question):
        return PHRASE_DEPTH        # a short message may hold the whole of a short literal
    return 0


def rerank_by_name(index, question, scores, top_k, file_factors, wants_tests):
    """The top_k (chunk number, hit, its factors) after the exact-name, private-name,
    test-module, exported, module-code, method, type, phrase, message-type and
    repeated-name weights have been applied to the leading candidates; a hit's factors
    are these and those of its file (file_factors, already in scores).  Unless the
    question wants_tests, a Rust `mod tests` weighs as a test file does.

    Only the best RERANK_DEPTH candidates are looked at, so a search decodes the chunk
    names of a few files, not of every file a common word touches; only the best
    PHRASE_DEPTH (PASTED_DEPTH for a pasted message of PHRASE_MIN_WORDS words) are read
    for their string literals, and none for a question of fewer words unless it is a
    message, which may hold the whole of a short literal ('ReadError: empty file').
    """
    named = named_in_question(question) - {message_type(question)}
    raised = raised_type(question)
    dotted = {name for name in named if '.' in name}
    in_words = not named and not PASTED.search(question)     # names nothing, pastes nothing
    spelled = re.sub(r'<[^<>]*>|\([^()]*\)', ' ', ENGLISH_CLITIC.sub('', question))
    about_names = len(question_words(spelled)) <= NAME_ONLY_WORDS + sum(
        len(question_words(name)) for name in named)   # new ArrayList<String>(), not a sentence
    insides = bool(INSIDES_QUESTION.search(question))         # private code is the answer
    leading = sorted(scores, key=lambda n: (-scores[n], n))[:max(top_k, RERANK_DEPTH)]
    entries, factors = {n: chunk_entry(index, n) for n in leading}, {}
    for n, entry in entries.items():
        symbol = entry['symbol'].lower()
        exact = (symbol.rpartition('.')[2] in named or bool(
            dotted and dotted_names(entry['path'], symbol) & dotted)) and (
            about_names or entry['kind'] not in TYPE_LIKE_KINDS)
        applied = factors[n] = dict(file_factors.get(entry['path'], {}))
        for what, weight, holds in (('exact name', EXACT_NAME_WEIGHT, exact),
                                    ('private name', PRIVATE_NAME_WEIGHT,
                                     private_name(entry) and not insides),
                                    ('test module', TEST_FILE_WEIGHT,
                                     not wants_tests and 'test file' not in applied
                                     and entry.get('language') == 'rust'
                                     and bool(RUST_TEST_MODULE.search(entry['symbol']))),
                                    ('exported', EXPORTED_WEIGHT, bool(entry.get('exported'))),
                                    ('module code', MODULE_CODE_WEIGHT,
                                     entry['symbol'] == '<module>'),
                                    ('method', METHOD_WEIGHT, in_words and entry['kind'] ==
                                     'method' and entry.get('language', 'python') == 'python'),
                                    ('type', TYPE_WEIGHT,
                                     in_words and entry['kind'] in TYPE_LIKE_KINDS)):
            if holds and weight != 1.0:                 # a weight set to 1 says nothing
                applied[what] = weight
                scores[n] *= weight
    ranked = sorted(leading, key=lambda n: (-scores[n], n))
    read = [dict(entries[n]) for n in ranked[:phrase_depth(question)]]
    with_text(index, [hit for hit in read if 'text' not in hit])    # in memory: they have it
    for n, hit in zip(ranked, read):
        held = phrase_words(question, hit['text'], hit.get('language', 'python'))
        if held >= PHRASE_MIN_WORDS:
            factors[n]['phrase'] = phrase_weight(question, held)
            scores[n] *= factors[n]['phrase']
            for private in ('private name', 'internal path'):   # it says what was pasted:
                if factors[n].get(private):                     # private or not, it is
                    scores[n] /= factors[n].pop(private)        # asked (unless weighed 0)
        elif raised and defines_type(hit, raised) and MESSAGE_TYPE_WEIGHT != 1.0:
            scores[n] *= MESSAGE_TYPE_WEIGHT
            factors[n]['message type'] = MESSAGE_TYPE_WEIGHT
    seen = set()
    for n in sorted(ranked, key=lambda n: (-scores[n], n)):
        name = (entries[n]['path'], entries[n]['symbol'])
        if name in seen and REPEATED_NAME_WEIGHT != 1.0:
            scores[n] *= REPEATED_NAME_WEIGHT
            factors[n]['repeated name'] = REPEATED_NAME_WEIGHT
        seen.add(name)
    ranked = sorted(ranked, key=lambda n: (-scores[n], n))[:top_k]
    return [(n, dict(entries[n], score=round(scores[n], 4)), factors[n]) for n in ranked]


def phrase_weight(question, held):
    """PHRASE_WEIGHT for a literal holding PHRASE_MIN_WORDS of the question's words in a
    row; in a question that looks pasted (PASTED), more by the square root of more (nine
    words: x3), so the literal that says most of the message goes first."""
    if not PASTED.search(question):
        return PHRASE_WEIGHT
    return round(PHRASE_WEIGHT * (held / PHRASE_MIN_WORDS) ** 0.5, 3)


def defines_type(entry, name):
    """Whether a chunk is the type of this (lowercased) name or a constructor of it."""
    parts = entry['symbol'].lower().split('.')
    return (parts[-1] == name and entry['kind'] in TYPE_LIKE_KINDS) or (
        parts[-2:-1] == [name] and (entry['kind'] == 'constructor' or parts[-1] == '__init__'))


def explain_chunk(index, terms, statistics, n, factors):
    """What gave chunk n its score, as score_matches adds it up: each question term's
    BM25F score (idf, and the part each field gave), whether it counted (one term per
    concept does), and the factors the sum was multiplied by."""
    weights, anchors, concepts = terms.weights, terms.anchors, terms.concepts
    place = bisect.bisect_right(index['starts'], n) - 1
    relative = index['order'][place]
    fid, local = index['files'][relative]['fid'], n - index['starts'][place]
    lengths, field_count = file_lengths(index, relative), len(FIELDS)
    words = []
    for term in weights:
        value = find_posting(index['postings'], term) if term in statistics.counts else ''
        fields = {}
        for segment in value.split(';') if value else ():
            segment_fid, field, ids = segment.split(' ')
            if int(segment_fid) != fid:
                continue
            f = int(field)
            b = FIELD_LENGTH_NORMALISATION[FIELDS[f]]
            for first, last, tf in map(posting_entry, ids.split(',')):
                if first <= local <= last:
                    norm = 1 - b + b * lengths[local * field_count + f] / statistics.averages[f]
                    fields[FIELDS[f]] = fields.get(FIELDS[f], 0.0) + \
                        FIELD_WEIGHTS[FIELDS[f]] * tf / norm
        if not fields:
            continue
        tf = sum(fields.values())
        idf = term_idf(terms, statistics, term)
        score = weights[term] * idf * tf * (BM25_K1 + 1) / (BM25_K1 + tf)
        words.append({'term': term, 'concept': concepts[term], 'weight': weights[term],
                      'part': terms.parts.get(term, ''), 'idf': round(idf, 4), 'score': score,
                      'fields': {field: round(score * part / tf, 4) for field, part in
                                 sorted(fields.items(), key=lambda item: -item[1])}})
    best = {}
    for word in words:
        if word['score'] > best.get(word['concept'], {'score': 0.0})['score']:
            best[word['concept']] = word
    counted = [word for word in words if best[word['concept']] is word]
    anchored = any(word['term'] in anchors for word in counted)
    total = sum(word['score'] for word in counted) if anchored else 0.0
    for word in words:
        word.update(counted=word in counted, score=round(word['score'], 4))
    score = total
    for weight in factors.values():
        score *= weight
    return {'score': round(score, 4), 'words_score': round(total, 4),
            'factors': dict(factors), 'words': words}


def missing_words(question, terms, words):
    """The question's words, as typed and each once, that a hit lacks: a concept of the
    word (its own, or a camelCase part's) has no term among the hit's explained words.
    Then the hyphenated words and dotted names it lacks, for --explain."""
    lacking = {terms.concepts[term] for term in terms.anchors} - \
        {word['concept'] for word in words}
    missing, typed = {}, set()
    for word in WORD.findall(composed(question)):
        concepts = word_terms(word) or (word.lower(),)
        typed.update(concepts)
        if any(concept in lacking for concept in concepts):
            missing.setdefault(word.lower(), word)
    return list(missing.values()) + sorted(lacking - typed)


def dropped_words(question, terms):
    """The question's words that gave it no term: English words every question carries
    (STOP_WORDS) and Korean ones (KOREAN_QUESTION_WORDS), less the parts of a hyphenated
    word searched joined (how-to: howto) and the words of a phrasal verb, for --explain."""
    joined = {part.lower() for hyphenated in HYPHENATED.findall(question)
              if any(term in terms.weights for term in hyphen_joined(hyphenated))
              for part in hyphenated.split('-')}
    joined.update(word for concept in terms.concepts.values() if ' ' in concept
                  for word in concept.split())      # go through: iterate walk
    return [word for word in WORD.findall(composed(question))
            if word.lower() not in terms.weights and word.lower() not in joined
            and not any(term in terms.weights for term in word_terms(word))]


MESSAGE_TYPE = re.compile(r'\s*([A-Za-z_][\w.]*)\s*:\s')
LOG_LINE_HEAD = re.compile(r'(?:\s*(?:\d[-\d/:.,T+Z]*|\[[^\]\n]*\]|(?:TRACE|DEBUG|INFO|NOTICE|WARN'
                           r'|WARNING|ERROR|CRITICAL|FATAL|SEVERE)\b:?))*')   # a log line's time,
                            # [fields] and level, before the message it logged
TERMINAL_CODES = re.compile(r'\x1b\[[0-9;?]*[A-Za-z]')   # the colours of a pasted terminal line
MESSAGE_MARKS = re.compile(                 # what a message has and words seldom do ...
    r'[:"=()<>\[\]{}]|\B\'|\'\B'            # (an apostrophe in a word is no quote) ...
    r'|(?:^|\s)/\w[^\s/]*/|\w/[^\s/]+/\S*\.[A-Za-z]')   # ... and an absolute path or one to
                        # a file (/srv/app/views.py changed, reloading.), not a/./b/../c
PASTED = re.compile(MESSAGE_MARKS.pattern + '|[0-9]')   # those or a number: it looks pasted
# A question about how code works inside ('how does the pool grow', 'how is the hash
# computed', 'internally', '내부에서'), not 'how do I ...': a private helper answers it.
INSIDES_QUESTION = re.compile(
    r'^\W*how (?:does|do(?! (?:i|you|we)\b)|is|are)\b|\binternal(?:ly)?\b|내부', re.I)


def message_type(question):
    """The type a pasted message starts with, lowercased ('zipfile.badzipfile' of
    'zipfile.BadZipFile: File is not a zip file'), or '' when fewer than
    PHRASE_WHOLE_WORDS words follow it.  The asker wants the code that raises or logs the
    message, not the type's own definition (or constructor): it earns no exact name."""
    match = message_type_match(question)
    return match.group(1).lower() if match else ''


def message_type_match(question):
    """The MESSAGE_TYPE match of a pasted message (see message_type): at its start, or
    after the time, fields and level a log line puts before it ('2024-01-01
    12:00:00,123 ERROR zipfile.BadZipFile: File is not a zip file'), or None."""
    match = MESSAGE_TYPE.match(question) or MESSAGE_TYPE.match(
        question, LOG_LINE_HEAD.match(question).end())
    if match and len(question_words(question[match.end():])) >= PHRASE_WHOLE_WORDS:
        return match
    return None


def raised_type(question):
    """The name of the type a pasted message starts with, lowercased, when it is spelled
    as a type, with a capital inside ('badzipfile' of 'zipfile.BadZipFile: File is not a
    zip file'); not 'error: ...', 'INFO: ...' or 'Session: how do I ...'."""
    match = message_type_match(question)
    name = match.group(1).rpartition('.')[2] if match else ''
    return name.lower() if re.search(r'[a-z][A-Z]|[A-Z][A-Z][a-z]', name) else ''


QUOTE_START = re.compile(r'''[rbfuRBFU]{0,2}(["'`])''')    # a string's prefix and quote
LITERAL_BODY = {'"': re.compile(r'(?:[^"\\\n]|\\.)*'), "'": re.compile(r"(?:[^'\\\n]|\\.)*"),
                '`': re.compile(r'(?:[^`\\\n]|\\.)*')}   # up to its closing quote, if any
MULTILINE_BODY = dict(LITERAL_BODY, **{'`': re.compile(r'(?:[^`\\]|\\.)*')})
MULTILINE_BACKQUOTES = frozenset({'javascript', 'typescript', 'go'})   # `...` spans lines
                            # in these; elsewhere a backquote (Markdown's, Kotlin's) closes
                            # on its line, and a stray one in a comment swallows nothing
LITERAL_JOIN = re.compile(r'\s*\+?\s*')     # between adjacent literals: 'a' 'b', 'a' + 'b'
PLACEHOLDER = re.compile(r'%(?:\([^()]*\))?[-#0 +]*(?:[1-9]\d*)?(?:\.\d+)?[a-zA-Z]'   # %s, %(x)d
                         r'|\$?\{[^{}]*\}|\$[A-Za-z_]\w*')                     # {x}, ${x}, $x
PHRASE_TOKEN = re.compile(r'\x00|\w+')
ESCAPE = re.compile(r'\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)', re.S)


def quoted_literals(text, language='python'):
    """The string literals of text as written, adjacent ones joined.  A string closes
    on its line (a backquoted one anywhere after, in MULTILINE_BACKQUOTES).  In linear
    time: when a string does not close, neither does a later one with its quote that
    starts before its scan stopped (each such quote was escaped), so none of those is
    tried (string_end)."""
    bodies = MULTILINE_BODY if language in MULTILINE_BACKQUOTES else LITERAL_BODY
    literals, stops, position = [], {}, 0
    while True:
        start = QUOTE_START.search(text, position)
        if not start:
            return literals
        end = string_end(text, start, stops, bodies)
        if end is None:
            position = start.start() + 1
            continue
        while True:
            following = QUOTE_START.match(text, LITERAL_JOIN.match(text, end).end())
            following_end = following and string_end(text, following, stops, bodies)
            if not following_end:
                break
            end = following_end
        literals.append(text[start.start():end])
        position = end


def string_end(text, start, stops, bodies):
    """Where the string that start (a QUOTE_START match) opens ends, or None when it
    does not close; stops keeps, per quote, where the scan of one that did not stopped;
    bodies: LITERAL_BODY or MULTILINE_BODY."""
    quote, opening = start.group(1), start.end()
    if opening <= stops.get(quote, -1):
        return None
    end = bodies[quote].match(text, opening).end()
    if text.startswith(quote, end):
        return end + 1
    stops[quote] = end
    return None


def question_words(question):
    """A question's words, lowercased, in order (for phrase matching)."""
    return [word.lower() for word in re.findall(r'\w+', question)]


def phrase_words(question, text, language='python'):
    """The most words of one string literal in text (adjacent literals joined) that the
    question holds in a row; a placeholder (%s, {name}, ${x}, $x) matches any one to
    PLACEHOLDER_WORDS words.  A question holding the whole of a literal of at least
    PHRASE_WHOLE_WORDS words, each placeholder standing for up to PLACEHOLDER_CHARS
    characters of anything ('Ran %d test%s in %.3fs'), counts its words if they are
    PHRASE_MIN_WORDS or more; fewer count as PHRASE_MIN_WORDS if the question is a message
    (MESSAGE_MARKS: a number alone is no message), or, for a literal with a placeholder,
    looks pasted (PASTED: 'code %d, message %s' in 'code 404, message File not found').
    A pasted error message or log line then finds the code that prints it."""
    asked = question_words(question)
    wanted, said = set(asked), ' '.join(question.lower().split())
    places = {}
    for place, word in enumerate(asked, 1):
        places.setdefault(word, []).append(place)
    marked, pasted = bool(MESSAGE_MARKS.search(question)), bool(PASTED.search(question))
    best = 0
    for literal in quoted_literals(text, language):
        body = literal_body(literal)
        tokens = [token.lower() for token in   # lowercased after parting: İ is one letter
                  PHRASE_TOKEN.findall(PLACEHOLDER.sub('\x00', body))]
        words = [token for token in tokens if token != '\x00']
        if len(words) >= PHRASE_WHOLE_WORDS and holds_literal(said, wanted, body, tokens):
            short = marked or (pasted and '\x00' in tokens)
            best = max(best, len(words) if len(words) >= PHRASE_MIN_WORDS else
                       PHRASE_MIN_WORDS if short else 0)
        if len(wanted.intersection(tokens)) >= PHRASE_MIN_WORDS:
            best = max(best, longest_run(tokens, places, len(asked)))
    return best


def longest_run(tokens, places, asked):
    """The most of a question's words that a literal's tokens (\x00 a placeholder, which
    stands for one to PLACEHOLDER_WORDS words) hold in a row; places: {word: its places
    in the question, from 1}, asked: how many words it has.  Only the places a run
    reaches are kept, so a long question and a long literal stay cheap."""
    best, previous = 0, {}          # {place in the question: words matched in a row to it}
    for token in tokens:
        if token == '\x00':
            current = {}
            for place, count in previous.items():
                for after in range(place + 1, min(place + PLACEHOLDER_WORDS, asked) + 1):
                    current[after] = max(current.get(after, 0), count)
        else:
            current = {place: previous.get(place - 1, 0) + 1 for place in places.get(token, ())}
        if current:
            best = max(best, max(current.values()))
        previous = current
    return best


def literal_body(literal):
    """What a string literal of quoted_literals says: its prefixes, quotes and joins
    taken off, an escaped quote or backslash as itself and any other escape (\\n, \\t,
    \\x1b) a space, as it parts words."""
    parts, position = [], 0
    while True:
        start = QUOTE_START.match(literal, position)
        if not start:
            return ESCAPE.sub(lambda escape: escape.group()[1] if escape.group()[1] in
                              '\'"`\\' else ' ', ''.join(parts))
        body = MULTILINE_BODY[start.group(1)].match(literal, start.end())
        parts.append(body.group())
        position = LITERAL_JOIN.match(literal, body.end() + 1).end()


def holds_literal(said, wanted, body, tokens):
    """Whether said (a question, lowercased, its spaces collapsed; wanted, its words)
    holds the whole of a literal's body (of these tokens, \\x00 a placeholder), each
    placeholder standing for up to PLACEHOLDER_CHARS characters of anything: 'Ran %d
    test%s in %.3fs' is in 'ran 42 tests in 0.318s'.  A word not in the question must be
    glued to a placeholder ('test'), so at most two per placeholder are looked for in
    it.  The first and last words are not parts of a longer word.  The whole is looked
    for from the first WHOLE_LITERAL_TRIES places its first piece is found."""
    glued = [token for token in tokens if token != '\x00' and token not in wanted]
    if len(glued) > 2 * tokens.count('\x00') or not all(word in said for word in glued):
        return False
    pieces = [re.sub(r'\s+', ' ', piece) for piece in PLACEHOLDER.split(body.lower())]
    pieces[0], pieces[-1] = pieces[0].lstrip(), pieces[-1].rstrip()
    pieces = [piece for piece in pieces if piece]
    start = said.find(pieces[0])
    for _ in range(WHOLE_LITERAL_TRIES):
        if start < 0:
            return False
        end = start + len(pieces[0])
        for piece in pieces[1:]:
            end = said.find(piece, end, end + PLACEHOLDER_CHARS + len(piece))
            if end < 0:
                break
            end += len(piece)
        else:
            if not (word_joined(said, start - 1, pieces[0][0]) or
                    word_joined(said, end, pieces[-1][-1])):
                return True
        start = said.find(pieces[0], start + 1)
    return False


def word_joined(said, at, edge):
    """Whether said's character at this place (none outside it) and a literal's edge
    character are both word characters: the literal's word would be part of a longer one."""
    return 0 <= at < len(said) and bool(re.fullmatch(r'\w\w', said[at] + edge))


def retrieve(question, chunks, top_k=DEFAULT_TOP_K):
    """The tutorial's API: the top_k chunks for a question, best first."""
    if top_k < 1:
        raise ValueError('top_k must be positive.')
    return search_index(make_search_index(chunks), question, top_k)



# --- Several indexes: one search over many repositories ---------------------------------
# A feature often spans repositories (front end, back end, services), so every look-up
# takes several indexes, each labelled (--index api=api.json; else its root folder's
# name).  Search scores them together with shared statistics: each term's chunk count,
# the chunk count and the field lengths are summed over the indexes, so a hit scores
# as it would in one index of all of them, and the hits merge by score.

class Repo(NamedTuple):
    """One index searched with others: its label and the searchable index."""
    label: str
    index: dict


def root_label(root):
    """The label an index gets from its root folder's name ('root' for the top folder)."""
    return os.path.basename(str(root).rstrip('/\\')) or 'root'


def parse_index_spec(spec):
    """(label or '', path) of an --index value: 'api=path/to/index.json' or a path."""
    label, equals, path = spec.partition('=')
    if equals and label and re.fullmatch(r'[\w.-]+', label) and not os.path.exists(spec):
        return label, path
    return '', spec


def open_repos(specs, load=None):
    """Repos for --index values, in their order; IndexProblem for labels that collide
    or an index given twice.  load(path) opens one index (default: open_index_file)."""
    repos, seen = [], {}
    for spec in specs:
        label, path = parse_index_spec(spec)
        real = os.path.realpath(path)
        if real in seen:
            raise IndexProblem(f'index given twice: {path}')
        index = (load or open_index_file)(path)
        label = label or root_label(index['root'])
        if label in {repo.label for repo in repos}:
            raise IndexProblem(f'two indexes are labelled {label!r}: give one a label '
                               f'(--index NAME={path})')
        seen[real] = label
        repos.append(Repo(label, index))
    return repos


def search_repos(repos, question, top_k=DEFAULT_TOP_K, accept=None, explain=False):
    """The top_k hits of several indexes for a question, each with its 'repo', scored
    with statistics shared by all of them (one index: exactly search_index).
    accept(repo) gives a path predicate for a repo, or None.  A terminal's colour codes
    in a pasted line are not words (TERMINAL_CODES)."""
    question = TERMINAL_CODES.sub('', question)
    terms = with_compounds(query_terms(question), [repo.index['compounds'] for repo in repos])
    averages = shared_averages(repos)
    found, counts = [], collections.Counter()
    for repo in repos:
        matches, repo_counts = term_matches(repo.index, terms, accept(repo) if accept else None,
                                            averages)
        found.append(matches)
        counts.update(repo_counts)
    statistics = Statistics(counts, sum(repo.index['total'] for repo in repos), averages)
    hits = [dict(hit, repo=repo.label) for repo, matches in zip(repos, found)
            for hit in score_matches(repo.index, question, terms, matches, statistics, top_k,
                                     explain)]
    return sorted(hits, key=lambda hit: -hit['score'])[:top_k]


def answer_question(repos, question, top_k, globs=(), languages=(), explain=False):
    """What search answers, on the command line, in MCP and in the API: the top_k hits of
    the repos in files that --path globs and languages accept, with their text."""
    return texts_of(repos, search_repos(
        repos, question, top_k,
        lambda repo: file_filter(repo.index['files'], globs, languages), explain))


def located(repos, path, line):
    """What at answers, everywhere: the hit around path:line (REPO:path names the repo)
    with its text, or None between definitions; LookupError as locate_now refuses."""
    repo, inside = repo_path(repos, path)
    chunk = locate_now(repo.index, inside, line)
    return chunk and dict(with_text(repo.index, [chunk])[0], repo=repo.label)


def texts_of(repos, hits):
    """Fill in the text of hits from several repos (see with_text)."""
    by_label = {repo.label: repo for repo in repos}
    for hit in hits:
        with_text(by_label[hit['repo']].index, [hit])
    return hits


def shared_averages(repos):
    """Each field's average length over the chunks of all the repos."""
    total = sum(repo.index['total'] for repo in repos) or 1
    return [sum(repo.index['averages'][f] * repo.index['total'] for repo in repos) / total
            for f in range(len(FIELDS))]


def symbol_in_repos(repos, name):
    """find_symbol over several indexes: exact matches of every repo first, and so on."""
    found = [dict(hit, repo=repo.label) for repo in repos for hit in find_symbol(repo.index, name)]
    return sorted(found, key=lambda hit: SYMBOL_MATCHES.index(hit['match']))


def repo_path(repos, path):
    """(repo, path inside it) of a path given to at, read, outline or ls: 'REPO:path'
    names the repo; a plain path is in the one repo that holds it (the first repo when
    none does, which then says so).  repos may be Repos or FileSets."""
    label, colon, rest = path.partition(':')
    for repo in repos:
        if colon and repo.label == label and not os.path.splitdrive(path)[0]:   # C:\ on Windows
            return repo, rest
    wanted = path.replace('\\', '/').strip('/')

    def holds(repo):
        files = repo.files if isinstance(repo, FileSet) else repo.index['files']
        return wanted in files or any(relative.startswith(wanted + '/') for relative in files)

    holding = [repo for repo in repos if holds(repo)]
    if len(holding) > 1:
        raise LookupError(f"{path} is in several repositories "
                          f"({', '.join(repo.label for repo in holding)}): write REPO:{path}")
    return (holding or repos)[0], path


def read_repos_file(path):
    """The repositories a list file names: [{'name', 'root', 'index'}], paths made
    absolute from the file's folder.  The file is JSON ([{...}] or {"repos": [...]}) or
    TOML-like: '[[repo]]' tables of name = "...", root = "...", index = "..."."""
    try:
        with open(path, encoding='utf-8') as handle:
            text = handle.read()
    except OSError as error:
        raise IndexProblem(f'cannot read repository list {path}: {error.strerror}') from None
    except UnicodeDecodeError:
        raise IndexProblem(f'repository list {path} is not UTF-8 text') from None
    try:
        json_text = re.match(r'\s*(\{|\[(?!\s*\[))', text)    # not a TOML [[repo]]
        found = json.loads(text) if json_text else toml_tables(text)
    except ValueError as error:
        raise IndexProblem(f'{path}: not a repository list: {error}') from None
    if isinstance(found, dict):
        found = found.get('repos', found.get('repo'))
    if not isinstance(found, list):
        raise IndexProblem(f'{path}: expected a list of {{name, root, index}}')
    if not found:
        raise IndexProblem(f'{path}: the list of repositories is empty')
    base, repos, names = os.path.dirname(os.path.abspath(path)), [], set()
    for number, entry in enumerate(found, 1):
        if not isinstance(entry, dict) or not all(
                isinstance(entry.get(key), str) and entry[key] for key in ('name', 'root')):
            raise IndexProblem(f'{path}: repository {number} needs a name and a root')
        name = entry['name']
        if not re.fullmatch(r'[\w.-]+', name) or name in names:
            raise IndexProblem(f'{path}: repository name {name!r} is '
                               + ('given twice' if name in names else 'not a plain word'))
        names.add(name)
        index = os.path.normpath(os.path.join(base, entry.get('index') or
                                              f'{name}.{DEFAULT_INDEX}'))
        shared = [repo['name'] for repo in repos if os.path.realpath(repo['index']) ==
                  os.path.realpath(index)]
        if shared:                                  # each update would replace the other's
            raise IndexProblem(f'{path}: repositories {shared[0]} and {name} have one index '
                               f'file: {index}')
        repos.append({'name': name, 'root': os.path.normpath(os.path.join(base, entry['root'])),
                      'index': index})
    return repos


TOML_LINE = re.compile(r'\s*(?:(\[\[\s*(\w+)\s*\]\])|(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"|#.*|)\s*$')


def toml_tables(text):
    """The [[table]] entries of the small TOML subset a repository list uses."""
    tables = []
    for number, line in enumerate(text.splitlines(), 1):
        match = TOML_LINE.fullmatch(line)
        if not match:
            raise ValueError(f'line {number}: expected [[repo]] or key = "value"')
        if match[1]:
            tables.append({})
        elif match[3]:
            if not tables:
                raise ValueError(f'line {number}: a key before the first [[repo]]')
            tables[-1][match[3]] = json.loads(f'"{match[4]}"')
    return tables


def walked_with(index, **more):
    """The IndexOptions an index was made with (--hidden, --no-ignore, --max-file-size),
    and more: `repos` judges and updates an index as `index` made it."""
    recorded = index.get('walked_with') if isinstance(index, dict) else None
    defaults = IndexOptions()
    kept = {key: value for key, value in recorded.items() if key in WALK_CHOICES
            and type(value) is type(getattr(defaults, key))} \
        if isinstance(recorded, dict) else {}
    return IndexOptions(**kept, **more)


def repo_status(repo):
    """A listed repository's row: name, root, index, files, chunks, indexed_at and
    state: fresh, stale (files changed, added or removed since), not indexed or no root."""
    row = dict(repo, files=0, chunks=0, indexed_at='', state='fresh')
    try:
        index = load_index(repo['index'], deep=False)
    except IndexProblem:
        index = None
    if index is not None:                       # what it holds, even when its root went
        row.update(files=len(index['files']), chunks=index['chunk_count'],
                   indexed_at=index.get('indexed_at', ''))
    if not os.path.isdir(repo['root']):
        return dict(row, state='no root')
    if index is None:
        return dict(row, state='not indexed')
    found, _ = list_tree(repo['root'], walked_with(index, exclude=(repo['index'],)))
    skipped = {entry.get('path') for entry in index['skipped'] if isinstance(entry, dict)}
    if set(found) - skipped != set(index['files']):
        return dict(row, state='stale')
    for relative, record in index['files'].items():
        try:
            info = os.stat(found[relative])
        except OSError:
            return dict(row, state='stale')
        if not isinstance(record, dict) or stat_changed(info, record):
            return dict(row, state='stale')
    return row


def format_repos(rows):
    """The repository table for people."""
    heads = ('name', 'root', 'files', 'chunks', 'indexed', 'state')
    table = [heads] + [(row['name'], row['root'], str(row['files']), str(row['chunks']),
                        row['indexed_at'] or '-', row['state']) for row in rows]
    widths = [max(text_width(line[column]) for line in table) for column in range(len(heads))]
    return '\n'.join('  '.join(padded(cell, width) for cell, width in zip(line, widths)).rstrip()
                     for line in table)


def outline_repos(repos, paths=()):
    """outline over several repos, each file with its 'repo'."""
    chosen = [(repo, '') for repo in repos] if not paths else \
        [repo_path(repos, path) for path in paths]
    return {'files': [dict(file, repo=repo.label) for repo, path in chosen
                      for file in outline(repo.index, [path] if path else [])['files']]}


def list_repos(repos, path='', depth=1, everything=False):
    """ls over several repos: with no path, each repo is an entry (REPO:) with its files
    and chunks; else the listing of the folder in the repo that holds it."""
    if len(repos) > 1 and not path:
        return {'path': '', 'entries': [
            {'path': f'{repo.label}:', 'type': 'repo', 'files': len(repo.index['files']),
             'chunks': repo.index['total']} for repo in repos]}
    repo, inside = repo_path(repos, path) if path else (repos[0], '')
    return dict(list_folder(index_files(repo.index, repo.label), inside, depth, everything),
                repo=repo.label)


# --- Paths: --path globs (as in notes_search) and the --lang filter -------------------

def glob_pattern(glob):
    """A glob over '/'-separated relative paths as a regular expression: ** spans
    folders, * and ? stay within one, [...] is a class and \\ escapes."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith('**/', i) and (i == 0 or glob[i - 1] == '/'):
            out.append('(?:.*/)?')
            i += 3
        elif glob.startswith('/**', i) and i + 3 == len(glob):
            out.append('/.*')
            i += 3
        elif glob == '**':
            out.append('.*')
            i += 2
        elif glob[i] == '*':                # and a ** next to anything but '/', as git has it
            out.append(None)                    # a star: see atomic_stars
            while glob.startswith('*', i):      # one for a run: [^/]*[^/]* backtracks
                i += 1
        elif glob[i] == '?':
            out.append('[^/]')
            i += 1
        elif glob[i] == '[' and glob.find(']', i + 2 + glob.startswith('[!', i)) > 0:
            first = i + 1 + glob.startswith('[!', i)        # a ']' here is a member
            end = glob.index(']', first + 1)
            out.append(glob_class(glob[first:end], negated=first > i + 1))
            i = end + 1
        elif glob[i] == '\\' and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return atomic_stars(out)


def atomic_stars(pieces):
    """glob_pattern's pieces joined, a star (None) being [^/]*.  Between two stars the
    fixed part is matched at its first place and never tried at another (a lookahead
    kept by a backreference, as fnmatch does): the later star takes up the rest, so
    nothing is lost, and *a*a*a*b against a long name takes linear time, not a power."""
    joined, i = [], 0
    while i < len(pieces):
        if pieces[i] is not None:
            joined.append(pieces[i])
            i += 1
            continue
        j = i + 1
        while j < len(pieces) and pieces[j] is not None and '.*' not in pieces[j]:
            j += 1                              # the fixed part, up to a star or a **
        if j < len(pieces) and pieces[j] is None and j > i + 1:
            name = f'star{i}'
            joined.append(f'(?=(?P<{name}>[^/]*?{"".join(pieces[i + 1:j])}))(?P={name})')
            i = j
        else:
            joined.append('[^/]*')
            i += 1
    return ''.join(joined)


def glob_class(members, negated):
    """The regex of a glob's [...] (negated: [!...]): its characters and a-z ranges, a
    range the wrong way round matching nothing, as fnmatch has it; never a '/'."""
    parts = re.findall(r'(.)-(.)|(.)', members, re.S)
    kept = ''.join(re.escape(low) + '-' + re.escape(high) if low else re.escape(single)
                   for low, high, single in parts if not low or low <= high)
    if not kept:
        return '[^/]' if negated else '(?!)'
    return '(?!/)[' + '^' * negated + kept + ']'


def glob_regex(glob):
    """The regex of one --path glob: a glob without a '/' matches a name at any depth,
    one with a '/' is anchored at the root (./src too), and a folder matches everything
    under it (src, src/ and src/** alike; / and . are the root)."""
    core = composed(glob.strip())
    core = core[:-3] if core.endswith('/**') else core.rstrip('/')
    while core.startswith('./'):                   # as a shell completes it: the root's
        core = '/' + core[2:].lstrip('/')
    if core.strip('/') in ('', '.'):
        return re.compile('(?s:.*)')
    anchored = '/' in core
    return re.compile(('' if anchored else '(?:.*/)?') + glob_pattern(core.lstrip('/'))
                      + r'(?:/.*)?\Z')


def split_globs(globs):
    """The globs of several --path values, each of which may hold comma-separated ones
    (an empty one, or a bare '!', says nothing)."""
    return [part.strip() for glob in globs for part in glob.split(',')
            if part.strip() not in ('', '!')]


def path_filter(globs):
    """A predicate over relative paths from --path globs; a leading '!' excludes."""
    globs = split_globs(globs)
    include = [glob_regex(g) for g in globs if not g.startswith('!')]
    exclude = [glob_regex(g[1:]) for g in globs if g.startswith('!')]

    def accepts(relative):
        relative = composed(relative)
        if include and not any(r.match(relative) for r in include):
            return False
        return not any(r.match(relative) for r in exclude)
    return accepts


def known_language(name):
    """name in lower case when files are read as that language; else LookupError."""
    known = sorted(set(LANGUAGES.values()) | set(FILE_NAMES.values()) | {'text'})
    if name.lower() not in known:
        raise LookupError(f"unknown language {name!r} (one of: {', '.join(known)})")
    return name.lower()


def file_filter(records, globs, languages):
    """A predicate over relative paths for --path globs and --lang names, given the
    files' records ({relative: {'language', ...}}); None when neither is given."""
    accept_path = path_filter(globs) if globs else None
    wanted = {language.lower() for language in languages}
    if accept_path is None and not wanted:
        return None

    def accepts(relative):
        return (accept_path is None or accept_path(relative)) and (
            not wanted or records[relative].get('language', 'python') in wanted)
    return accepts


def unmatched_globs(relatives, globs):
    """The including globs that match none of the relative paths (each glob's regex made
    once: a long one takes time to make)."""
    regexes = {glob: glob_regex(glob) for glob in split_globs(globs) if not glob.startswith('!')}
    return [glob for glob, regex in regexes.items()
            if not any(regex.match(composed(relative)) for relative in relatives)]


# --- Reading hits back: source text and staleness --------------------------------------

def real_folder_check(root):
    """folder -> whether it is in root for real (no symbolic link on its way leads out),
    each folder looked at once: grep asks for every file."""
    real_root = os.path.realpath(root)
    return functools.lru_cache(maxsize=None)(
        lambda folder: inside_folder(os.path.realpath(folder), real_root))


def read_back(root, relative, inside=None):
    """The bytes of a listed file as it is now (up to READ_BACK_LIMIT); SkipFile when they
    cannot be read, saying so plainly when the file is gone since it was listed, and when
    a folder on its path became a symbolic link that leads out of the root (the file
    itself is opened without following a link, where O_NOFOLLOW exists).  inside: a
    real_folder_check(root)."""
    path = os.path.join(root, *relative.split('/'))
    followed = path if not hasattr(os, 'O_NOFOLLOW') else os.path.dirname(path)   # Windows
    if not (inside or real_folder_check(root))(followed):
        raise SkipFile(LINK_REASON)
    try:
        return read_file(path, READ_BACK_LIMIT)[0]
    except SkipFile as skip:      # a folder on its path unreadable: permission denied
        if skip.reason != PERMISSION_REASON and not os.path.lexists(path):
            raise SkipFile(GONE_REASON) from None
        raise


def is_regular_file(path):
    """Whether path is a regular file itself, not a link to one (lstat)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def read_current_file(root, relative, revision, language='python'):
    """The file's lines now, numbered as its language numbers them, and whether it
    changed since it was indexed.  Only a regular file inside the root is read;
    anything else counts as stale."""
    try:
        data = read_back(root, relative)
        lines = source_lines(decode_source(data)) if language == 'python' else \
            text_lines(decode_text(data))
    except SkipFile:
        return [], True
    return lines, not hashlib.sha256(data).hexdigest().startswith(revision)


def with_text(index, hits):
    """Fill in each hit's text from its file, flagging files changed since indexing,
    and 'gone' those that are no longer a regular file (deleted, or now a link)."""
    cache = {}
    for hit in hits:
        if hit['path'] not in cache:
            lines, stale = read_current_file(index['root'], hit['path'], hit['revision'],
                                             hit.get('language'))
            cache[hit['path']] = lines, stale, stale and not lines and not is_regular_file(
                os.path.join(index['root'], *hit['path'].split('/')))
        lines, hit['stale'], hit['gone'] = cache[hit['path']]
        cut = LONG_LINE if hit['kind'] == 'window' else None
        hit['text'] = '\n'.join(line[:cut] for line in lines[hit['start'] - 1:hit['end']])
    return hits


def resolve_indexed_path(index, path):
    """An indexed file's relative path from a relative or absolute path inside the root
    (see parts_inside)."""
    candidate = spelled_as_indexed(index['files'], '/'.join(parts_inside(index['root'], path)))
    if candidate not in index['files']:
        raise not_in_set(index['root'], index['files'], path, candidate, 'an indexed file')
    return candidate


def not_in_set(root, files, path, relative, what):
    """The LookupError for a path (relative, below root) that names none of the files
    {relative: record}: not one of them, or no file at all; and, for a path that is one
    relative to the current folder naming one of them, the path to give instead."""
    there = os.path.lexists(os.path.join(root, *relative.split('/')))
    message = f'not {what}: {path}' if there else f'no such file in the root {root}: {path}'
    return LookupError(message + meant_from_here(root, files, path))


def meant_from_here(root, files, path):
    """' (paths are relative to the root: RELATIVE)' when path, relative to the current
    folder, names one of the files {relative: record} or a folder holding some; else ''."""
    with contextlib.suppress(LookupError, ValueError, OSError):
        if not os.path.isabs(path):
            meant = '/'.join(parts_inside(root, os.path.abspath(path)))
            if meant and (meant in files or any(relative.startswith(meant + '/')
                                                for relative in files)):
                return f' (paths are relative to the root: {meant})'
    return ''


def spelled_as_indexed(files, relative):
    """A relative path as the files {relative: record} spell it: itself, or the one name
    that is the same in Unicode's composed form (Hangul that macOS decomposed in a file
    name, typed composed)."""
    if relative in files or relative.isascii():
        return relative
    wanted = composed(relative)
    same = [name for name in files if not name.isascii() and composed(name) == wanted]
    return same[0] if len(same) == 1 else relative


# --- Traces: stack traces of every language -> frames ------------------------------------
# One pass over the lines of a text finds the traces in it, whatever printed them and
# whatever surrounds them in a log: Python tracebacks (chained, exception groups), Java
# and Kotlin (Caused by, Suppressed, ... N more), Go panics (every goroutine), Node.js
# errors ([cause] blocks, the source line and caret of an uncaught error), Rust panics
# and backtraces, and .NET.  A frame is the file, line and function as printed.

PYTHON_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<name>.+))?$')
PYTHON_REPEATED = re.compile(r'^\s*\[Previous line repeated (\d+) more times?\]$')
PYTHON_CHAIN = ('During handling of the above exception, another exception occurred:',
                'The above exception was the direct cause of the following exception:')
PYTHON_GROUP_MARGIN = re.compile(r'^\s*[|+](?:[-+]+.*)?\s?')
PYTHON_GROUP_MEMBER = re.compile(r'^[\s|]*\+[-+]+ \d+ -+\s*$')   # +---- 2 ----: one of its
                                                                # exceptions follows
JAVA_FRAME = re.compile(r'^\s*at (?:[\w.$-]+(?:@[\w.-]+)?/)*(?P<name>[\w$.<>-]+)\('
                        r'(?P<where>[^()]*)\)\s*(?:~?\[.*\])?$')
JAVA_WHERE = re.compile(r'(?P<file>[\w$.-]+\.\w+)(?::(?P<line>\d+))?$')
JAVA_HEADER = re.compile(r'^(?:Exception in thread "[^"]*" |(?P<cause>\s*Caused by: )|'
                         r'(?P<suppressed>\s*Suppressed: )|Unhandled [Ee]xception[.:] )?'  # .NET's
                         r'(?P<message>[\w$.]+(?:Exception|Error|Throwable|Failure|Exit)\b.*)$')
JAVA_MORE = re.compile(r'^\s*\.\.\. \d+ (?:more|common frames omitted)$')
NODE_FRAME = re.compile(r'^\s*at (?:(?P<name>[^()]*?) \((?P<where>.+)\)'
                        r'|(?P<bare>\S+(?: (?!\{)\S+)?))(?: \{)?\s*$')
NODE_WHERE = re.compile(r'^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+)$')
NODE_HEADER = re.compile(r'^\s*(?:\[cause\]: )?(?P<message>(?:[A-Z]\w*)?(?:Error|Exception)'
                         r'\b(?: \[[\w_]+\])?(?::.*)?)(?: \{)?$')
NODE_SHOWN = re.compile(r'^(?:file://)?(?P<file>(?:[A-Za-z]:)?[^\s:][^:\n]*?\.[cm]?[jt]sx?)'
                        r':(?P<line>\d+)$')    # where Node shows an uncaught error thrown
PYTEST_HEADER = re.compile(r'^_+ (?P<test>.*?[^_ ].*?) _+$')    # ____ test_total ____ (a long
                                                                # id has one _ each side)
PYTEST_WHERE = re.compile(r'^(?P<file>(?:[A-Za-z]:)?[^\s:<][^:]*?\.py|<[^>]+>):(?P<line>\d+): ?'
                          # path:7: in total
                          r'(?:in (?P<name>\S+)|[\w.]+)?$')               # path:5: KeyError
PYTEST_ERROR = re.compile(r'^E(?: (?P<text>.*))?$')                     # E       KeyError: 'x'
PYTEST_LINE = re.compile(r'^(?P<file>(?:[A-Za-z]:)?[^\s:<][^:]*?\.py):(?P<line>\d+): '
                         r'(?P<message>\S.*)$')   # --tb=line: path:13: LookupError: no price
PYTEST_SECTION = re.compile(r'^[=-]{3,} .* [=-]{3,}$')   # ==== short test summary info ====
PYTEST_FAILURES = re.compile(r'^=+ (?:FAILURES|ERRORS) =+$')   # where its report begins
PYTEST_SHOWN = re.compile(r'^(?:\s|>|_ _ |[\w.]+ += |$)')   # its code, '_ _ _', locals (-l)
GO_HEADER = re.compile(r'^(?P<message>(?:panic|fatal error): .*)$')
GO_HTTP_PANIC = re.compile(r'^(?:\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)? )?'   # log's time
                           r'(?P<message>http: panic serving \S+: .*)$')  # net/http recovered
GO_GOROUTINE = re.compile(r'^goroutine (?P<id>\d+) \[(?P<state>[^\]]*)\]:$')
OTHER_TRACE_START = re.compile(r'(?:panic|fatal error): |goroutine \d+ \[|thread \'.*\' '
                               r'(?:\(\d+\) )?panicked at|Exception in thread ')   # ends a
                                                                # Python message in a log
GO_CALL = re.compile(r'^(?P<created>created by )?(?P<call>[\w./*()\[\]{}:~-]+?)'
                     r'(?: in goroutine \d+)?$')
GO_WHERE = re.compile(r'^[ \t]+(?P<file>(?:[A-Za-z]:)?[^\s:][^:\n]*?\.\w+):(?P<line>\d+)'
                      r'(?: \+0x[0-9a-f]+)?(?: \w+=0x[0-9a-f]+)*$')   # a path may hold
                                        # spaces; fatal error's fp= sp= pc=; tabs as spaces
RUST_HEADER = re.compile(r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at "
                         r"(?:'(?P<old>.*)', (?P<old_file>\S+?):(?P<old_line>\d+):\d+|"
                         r"(?P<file>\S+?):(?P<line>\d+):\d+:)$")
RUST_FRAME = re.compile(r'^\s*\d+:\s+(?:0x[0-9a-f]+ - )?(?P<name>.+)$')
RUST_FRAME_AT = re.compile(r'^\s*at (?P<file>.+?):(?P<line>\d+)(?::\d+)?$')
RUST_HASH = re.compile(r'::h[0-9a-f]{16}$|\[[0-9a-f]{16}\]')
DOTNET_FRAME = re.compile(r'^\s*at (?P<name>[^(]+?) ?\((?P<args>[^)]*)\)(?: \[0x[0-9a-f]+\])?'
                          r'(?: in (?P<file>.+?):(?:line|Zeile|ligne|línea|riga|行) ?(?P<line>\d+))?\s*$')
JVM = ('java', 'kotlin')
QUOTED_FRAMES = (PYTHON_FRAME, JAVA_FRAME, NODE_FRAME, GO_WHERE, GO_GOROUTINE, RUST_HEADER,
                 RUST_FRAME, RUST_FRAME_AT, DOTNET_FRAME)   # what makes a quote a trace
LOG_PREFIX = re.compile(            # what a collector writes before every line it passes on
    r'^(?:[\w.-]+ *\| '                                          # docker compose: web-1  |
    r'|\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d) (?:stdout|stderr) [FP] '  # kubernetes
    r'|(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d))'
    r' \S+ [\w./@-]+(?:\[\d+\])?: )')                              # syslog, journald
LOG_LEVEL = r'(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|SEVERE|CRITICAL|FATAL)'
TIME_PREFIX = re.compile(           # a logger's or a platform's, taken off when every line has one
    r'^(?:\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?'  # time
    r'(?: [\w.-]+\[[\w.-]+\]:)?(?: +' + LOG_LEVEL + r'(?: \[[^\]]*\])?)?:? '  # app[web.1]: ERROR [main]
    r'|' + LOG_LEVEL + r': )')                                                  # INFO:
BLOCK_NUMBER = re.compile(r'(?<=^goroutine) \d+|, \d+ minutes?(?=\]$)| \d+$')   # alike in
                        # fold_repeats: exception 2, goroutine 18 [select, 2 minutes]
JOINED_BLOCKS = ('caused by', 'suppressed', 'cause')   # a block of the trace before it
QUOTE_MARGIN = re.compile(r'[ \t>]*')   # a trace indented as Markdown code, or quoted in mail
QUOTED_LINE = re.compile(r'^[ \t]*>(?: |$)')   # one level of a mail's quote, or Markdown's
LOG_RECORD = re.compile(r'(?:\d{4}-\d\d-\d\d|\[?\d\d:\d\d:\d\d|\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|'
                        r'CRITICAL|FATAL)\b)')


def parse_traces(text):
    """The traces in a text -> blocks in printed order, each {'language', 'block',
    'frames': [{'file', 'line', 'name'}], 'message', 'then', 'joined'}.  A block is one
    exception, cause, suppressed exception, goroutine or panic; 'block' names it
    ('exception', 'caused by 2', 'goroutine 18 [chan receive]'); 'then' is the sentence
    Python prints between it and the next; 'joined' says it belongs to the trace before
    it (a cause, a suppressed exception, a group's member); a frame's line is 0 when the
    trace gives none."""
    reader = TraceReader()
    if '\x1b' in text:                          # coloured: pytest --color=yes, a CI log
        text = TERMINAL_CODES.sub('', text)
    lines = [raw.rstrip('\r') for raw in text.splitlines()]
    written = [line for line in lines if line.strip()]
    prefix = TIME_PREFIX if all(map(TIME_PREFIX.match, written)) \
        and not all(map(LOG_PREFIX.match, written)) else LOG_PREFIX
    lines = [prefix.sub('', line, count=1) for line in lines]
    if prefix is LOG_PREFIX and all(map(TIME_PREFIX.match, filter(str.strip, lines))):
        lines = [TIME_PREFIX.sub('', line, count=1) for line in lines]   # the app's own
    lines = unquoted(lines)                                               # under a collector's
    margin = os.path.commonprefix([QUOTE_MARGIN.match(line)[0] for line in lines
                                   if line.strip(' \t>')])
    for line in lines:
        reader.line(line[len(margin):] if line.strip(' \t>') else '')
    reader.line('')
    return [{key: block[key] for key in ('language', 'block', 'frames', 'message', 'then',
                                         'joined')}
            for block in reader.blocks if block['frames'] or block['message']]


def unquoted(lines):
    """The lines with each run of quoted lines ('> ...') that holds a frame taken out of
    one level of quote, so a trace quoted inside prose (a mail, an issue) reads as the
    trace; pytest's '>' code lines hold no frame and stay."""
    out, start = list(lines), 0
    while start < len(lines):
        end = start
        while end < len(lines) and QUOTED_LINE.match(lines[end]):
            end += 1
        if end == start:
            start += 1
            continue
        inner = [QUOTED_LINE.sub('', line, count=1) for line in lines[start:end]]
        if any(frame.match(PYTHON_GROUP_MARGIN.sub('', line)) for line in inner
               for frame in QUOTED_FRAMES):
            out[start:end] = inner
        start = end
    return out


class TraceReader:
    """parse_traces' state: the blocks so far, and a frame whose second line is due."""

    def __init__(self):
        self.blocks, self.current, self.pending = [], None, None
        self.counts = collections.Counter()
        self.member = False     # after an exception group's '+---- N ----' line
        self.grouped = False    # on a line inside an exception group's margin
        self.in_pytest = False  # after a pytest report's first '____ test ____' line

    def start(self, language, label, message=''):
        """Open a new block."""
        family = 'java' if language in JVM else language
        self.counts[family, label] += 1
        number = self.counts[family, label]
        self.current = {'language': language, 'block': label if number == 1 else
                        f'{label} {number}', 'frames': [], 'message': message, 'then': '',
                        'joined': self.grouped or label in JOINED_BLOCKS}
        self.blocks.append(self.current)

    def in_block(self, *languages):
        return self.current is not None and self.current['language'] in languages

    def frame(self, language, file, line, name):
        """Add a frame to the open block, or to a new one when it is another language's.
        A block that has no frames yet takes the language of its first (a .NET or
        Kotlin exception's header reads as Java's)."""
        current = self.current
        if current is not None and not current['frames']:
            current['language'] = language
        elif current is None or (current['language'] != language and
                                 not (current['language'] in JVM and language in JVM)):
            self.start(language, 'exception')
        self.current['frames'].append({'file': file, 'line': int(line or 0),
                                       'name': name.strip()})

    def line(self, raw):
        """Read one line of the text."""
        pending, self.pending = self.pending, None
        if pending:                       # the second line of a Go or Rust frame
            where = pending[1].match(raw)
            if where:
                return self.frame(pending[0], where['file'], where['line'], pending[2])
            if pending[0] == 'rust':      # a release build's frame names no file
                self.frame('rust', '', 0, pending[2])
        if PYTHON_GROUP_MEMBER.match(raw):
            self.current, self.member = None, True
            return
        self.grouped = raw.lstrip()[:1] in '|+'
        python = PYTHON_GROUP_MARGIN.sub('', raw) if self.grouped else raw
        for reader in (self.pytest_line, self.python_line, self.java_line, self.go_line,
                       self.rust_line, self.node_line, self.dotnet_line):
            if reader(python if reader == self.python_line else raw):
                return

    def pytest_line(self, raw):
        """pytest's report of a failed test (--tb=long, short): a '____ test ____' line,
        then code, 'path:line:' where each frame is and 'E   ' lines of the error, up to
        the next such line or a '==== section ===='.  With --tb=line a test is one line,
        'path:line: message', a block of one frame.  Python's own traceback in it
        (--tb=native, an exception group, a doctest's) is left to python_line."""
        header = PYTEST_HEADER.match(raw)
        if header or (self.in_pytest or PYTEST_FAILURES.match(raw)) and \
                PYTEST_SECTION.match(raw):
            self.current, self.in_pytest = None, True   # ends any block: a captured log's too
            if header:
                self.start_test(f"pytest {header['test']}")
            return True
        current = self.current
        located = self.in_pytest and (current is None or 'test' not in current) and \
            PYTEST_LINE.match(raw)
        if located:
            self.start('python', 'pytest', located['message'])
            self.frame('python', located['file'], located['line'], '')
            self.current = None
            return True
        if current is None or 'test' not in current or PYTHON_FRAME.match(raw) \
                or 'Traceback (most recent call last)' in raw or raw.lstrip()[:1] in '+|':
            return False
        where, error = PYTEST_WHERE.match(raw), PYTEST_ERROR.match(raw)
        if where:
            self.frame('python', where['file'], where['line'], where['name'] or '')
        elif error:
            self.pytest_error(error['text'] or '')
        elif raw.strip() in PYTHON_CHAIN:           # the test's next exception
            current['then'] = raw.strip()
            self.start_test(current['test'])
        else:               # before its first frame: what it says (ImportError while ...)
            return bool(PYTEST_SHOWN.match(raw)) or not current['frames'] and \
                not OTHER_TRACE_START.match(raw)
        return True

    def start_test(self, label):
        """Open a block of a pytest report (one test's, or its chained exception's)."""
        self.start('python', label)
        self.current['test'] = label

    def pytest_error(self, text):
        """One 'E' line of a pytest report: its message, indented as pytest indents it
        (its first line's margin taken off); a SyntaxError's File line is a frame."""
        current = self.current
        frame = PYTHON_FRAME.match(text)            # a SyntaxError at collection
        if frame:
            self.frame('python', frame['file'], frame['line'], frame['name'] or '')
        margin = current.setdefault('margin', len(text) - len(text.lstrip()))
        if len(current['message']) < TRACE_MESSAGE_LIMIT:
            current['message'] += ('\n' if current['message'] else '') + \
                text[min(margin, len(text) - len(text.lstrip())):].rstrip()

    def python_line(self, line):
        stripped = line.strip()
        member, self.member = self.member, self.member and not stripped
        if stripped.startswith(('Traceback (most recent call last)',
                                'Exception Group Traceback (most recent call last)')):
            self.start('python', 'exception')
            return True
        if member and stripped and not PYTHON_FRAME.match(line):   # a member without a
            self.start('python', 'exception', stripped)           # traceback: its message
            return True
        if stripped in PYTHON_CHAIN:
            if self.in_block('python'):
                self.current['then'] = stripped
            self.current = None
            return True
        match = PYTHON_FRAME.match(line)
        if match:
            if not self.in_block('python') or self.current['message']:
                self.start('python', 'exception')
            self.frame('python', match['file'], match['line'], match['name'] or '')
            return True
        if not self.in_block('python') or not self.current['frames']:
            return False
        repeated = PYTHON_REPEATED.match(line)      # a recursion's frames, counted
        if repeated and not self.current['message']:
            self.current['frames'][-1]['repeated'] = int(repeated[1])
            return True
        if not stripped or OTHER_TRACE_START.match(line):     # the message has ended
            self.current['message_open'] = not self.current['message']
            return False
        message = self.current['message']       # once begun, it may hold indented lines,
        indented = line.startswith((' ', '\t'))  # but not another language's frames
        if self.current.get('message_open', True) and not LOG_RECORD.match(stripped) \
                and (message and not stripped.startswith('at ') or not indented):
            if len(message) < TRACE_MESSAGE_LIMIT:                    # a log after it
                self.current['message'] = (message + '\n' + line.rstrip()).strip()
            return True
        return False

    def java_line(self, raw):
        match = JAVA_FRAME.match(raw)
        where = match and JAVA_WHERE.match(match['where'])
        if match and (where or match['where'] in ('Native Method', 'Unknown Source')):
            name = match['name']
            file = where['file'] if where else ''
            language = 'kotlin' if file.endswith(('.kt', '.kts')) else \
                self.current['language'] if self.in_block(*JVM) else 'java'
            self.frame(language, java_frame_path(name, file), where and where['line'], name)
            return True
        if JAVA_MORE.match(raw):
            return self.in_block(*JVM)
        header = JAVA_HEADER.match(raw)
        if header and ('.' in header['message'].split(':')[0] or header['cause']
                       or header['suppressed'] or raw.startswith('Exception in thread')):
            language = self.current['language'] if self.in_block(*JVM) else 'java'
            label = 'caused by' if header['cause'] else 'suppressed' if header['suppressed'] \
                else 'exception'
            self.start(language, label, header['message'].strip())
            return True
        return False

    def go_line(self, raw):
        header, logged = GO_HEADER.match(raw), GO_HTTP_PANIC.match(raw)
        if header or logged:
            self.start('go', 'panic', (header or logged)['message'])
            self.current['message_open'] = bool(header)     # logged: one line
            return True
        if self.in_block('go') and self.current.get('message_open'):
            if raw.strip() and not GO_GOROUTINE.match(raw):     # a message of lines, or
                if len(self.current['message']) < TRACE_MESSAGE_LIMIT:  # a panic while
                    self.current['message'] += '\n' + raw.strip()       # recovering
                return True
            self.current['message_open'] = False
        goroutine = GO_GOROUTINE.match(raw)
        if goroutine:
            message = ''
            if self.in_block('go') and not self.current['frames']:
                message = self.current['message']      # the panic's message goes on
                self.blocks.remove(self.current)
            self.start('go', f"goroutine {goroutine['id']} [{goroutine['state']}]", message)
            return True
        if self.in_block('go') and raw and not raw.startswith(('\t', ' ')):
            call = GO_CALL.match(go_call_name(raw))
            if call:
                name = ('created by ' if call['created'] else '') + call['call']
                self.pending = ('go', GO_WHERE, name)
                return True
        return False

    def rust_line(self, raw):
        header = RUST_HEADER.match(raw)
        if header:
            self.start('rust', 'panic', header['old'] or '')
            self.frame('rust', header['file'] or header['old_file'],
                       header['line'] or header['old_line'], '(panicked here)')
            self.current['message_due'] = header['old'] is None
            return True
        if not self.in_block('rust'):
            return False
        if self.current.pop('message_due', False):
            self.current['message'], self.current['message_open'] = raw.strip(), True
            return True
        frame = RUST_FRAME.match(raw)
        if self.current.get('message_open'):        # a message of lines ends at a blank
            if raw.strip() and not frame and raw.strip() != 'stack backtrace:' \
                    and not raw.startswith('note: '):             # line, note or backtrace
                if len(self.current['message']) < TRACE_MESSAGE_LIMIT:
                    self.current['message'] += '\n' + raw.strip()
                return True
            self.current['message_open'] = False
        if frame:
            self.pending = ('rust', RUST_FRAME_AT, RUST_HASH.sub('', frame['name']))
            return True
        return raw.strip() == 'stack backtrace:' or (
            raw.startswith('note: ') and 'RUST_BACKTRACE' in raw)

    def node_line(self, raw):
        if self.node_shown_line(raw):
            return True
        match = NODE_FRAME.match(raw)
        if match:
            name, where = match['name'] or '', match['where'] or match['bare']
            if match['bare'] and ' ' in where:         # at async file:///app.mjs:24:1
                name, where = '', where.split(' ', 1)[1]
            location = NODE_WHERE.match(where)
            if location or where.startswith(('node:', '<anonymous>', 'native', 'index ')):
                file = location['file'] if location else where
                file = file[len('file://'):] if file.startswith('file://') else file
                line = int(location['line']) if location else 0
                frames = self.current['frames'] if self.in_block('javascript') else []
                if len(frames) == 1 and self.current.get('shown') and \
                        (frames[0]['file'], frames[0]['line']) == (file, line):
                    frames.pop()                # the stack's first frame says it again
                self.frame('javascript', file, line, name)
                return True
        header = NODE_HEADER.match(raw)
        if header:
            cause = raw.lstrip().startswith('[cause]:')
            if cause and self.current is not None:
                self.current['then'] = 'caused by'
            self.start('javascript', 'cause' if cause else 'exception', header['message'])
            return True
        return False

    def node_shown_line(self, raw):
        """Node's report of an uncaught error starts with the place it was thrown
        ('/app/src/a.js:3'), that line of source and a caret under it, then the error:
        the place is the block's first frame, which a SyntaxError or a thrown string has
        no other of."""
        shown = NODE_SHOWN.match(raw)
        if shown:
            self.start('javascript', 'exception')
            self.frame('javascript', shown['file'], shown['line'], '')
            self.current['shown'], self.current['stage'] = True, 'source'
            return True
        stage = self.current.get('stage') if self.in_block('javascript') else None
        if stage == 'source' or (stage == 'caret' and set(raw.strip()) == {'^'}):
            self.current['stage'] = 'caret' if stage == 'source' else 'error'
            return True
        if stage and raw.strip():
            del self.current['stage']
            header = NODE_HEADER.match(raw)
            if not NODE_FRAME.match(raw):   # the error, or a thrown value's text
                self.current['message'] = header['message'] if header else raw.strip()
                return True
        return False

    def dotnet_line(self, raw):
        match = DOTNET_FRAME.match(raw)
        if match and (match['file'] or '.' in match['name']):
            self.frame('csharp', match['file'] or '', match['line'] or 0, match['name'])
            return True
        return False


def go_call_name(raw):
    """A Go frame's first line without its arguments: main.(*List[...]).At(0x0?, ...)
    -> main.(*List[...]).At; 'created by' lines keep their words."""
    line = raw.rstrip()
    goroutine = re.search(r' in goroutine \d+$', line)
    if goroutine:
        line = line[:goroutine.start()]
    if line.endswith(')'):
        depth = 0
        for position in range(len(line) - 1, -1, -1):
            depth += {')': 1, '(': -1}.get(line[position], 0)
            if depth == 0:
                return line[:position] if position and line[position - 1] not in '.(' \
                    else line
    return line


def java_frame_path(qualified, file):
    """The path a JVM frame points at: its package as folders and its file
    (com.example.Main$1.run, Main.java -> com/example/Main.java)."""
    package = qualified.rsplit('.', 2)[0] if qualified.count('.') >= 2 else ''
    if not file:
        outer = qualified.rsplit('.', 1)[0].rsplit('.', 1)[-1].split('$')[0]
        file = outer + '.java'
    return (package.replace('.', '/') + '/' + file) if package else file


FRAME_NAME_PARTS = re.compile(r'[A-Za-z_$][\w$]*')
ANONYMOUS_FRAME = re.compile(r'^$|^<\w+>$|<anonymous>')   # <module>, <genexpr>, V8's,
                                                        # pytest's: no name


def frame_function(name):
    """The function a printed frame name names, to break ties and label output:
    lambda$run$0 -> run, (*List[...]).At -> At, <T as Trait>::m -> m, new Foo -> Foo."""
    name = re.sub(r'\{\{closure\}\}|\{closure#\d+\}|::\{\{[^{}]*\}\}', '', name)
    name = re.sub(r'\[as \w+\]|^(?:async |new |created by )', '', name).strip()
    lambda_name = re.search(r'lambda\$([\w]+)\$\d+', name)
    if lambda_name:
        return lambda_name.group(1)
    state_machine = re.search(r'<([\w]+)>d__\d+', name)
    if state_machine:
        return state_machine.group(1)
    parts = [part for part in FRAME_NAME_PARTS.findall(name)
             if not re.fullmatch(r'func\d+|\d+|init|clinit', part)]
    return parts[-1] if parts else ''


# --- Exact look-ups for agents: symbol, line, outline, traceback -----------------------

SYMBOL_MATCHES = ('exact', 'suffix', 'case-insensitive', 'case-insensitive suffix',
                  'default export', 'qualified', 're-exported')
TYPE_ARGUMENTS = re.compile(r'(?<=\w)<[^<>]*>')    # Vec<T, A>, innermost first
GO_METHOD_SPELLING = re.compile(r'\(\*?([\w.]+)(?:\[[^\]]*\])?\)\.')   # (*List[T]).At: List.At


def without_type_arguments(name):
    """A name as printed without its type arguments: alloc::vec::Vec<T,A>::push is
    alloc::vec::Vec::push, Map<K, List<V>>.get is Map.get."""
    name, before = name.strip(), None
    while name != before:
        name, before = TYPE_ARGUMENTS.sub('', name), name
    return name


def find_symbol(index, name):
    """Definitions named NAME: exact, then as a dotted suffix, then case-insensitively,
    then a JS/TS file's anonymous default export, which is named 'default' (as V8 names
    it) and imported under its file's name (parseHeaders.js: parseHeaders), then by a
    name its package or module path qualifies (java.util.ArrayList.get), then as a
    package re-exports it (re_exported: asyncio.gather).  A name may be spelled as its
    language prints it: Vec::push, List#add, Go's (*Pointer).Load, JavaScript's
    Observable.prototype.pipe."""
    wanted = GO_METHOD_SPELLING.sub(r'\1.', dotted_question(without_type_arguments(name)))
    wanted = wanted.replace('.prototype.', '.')
    lowered = wanted.lower()
    ranked = []
    for relative, base in zip(index['order'], index['starts']):
        for local, row in enumerate(file_rows(index, relative)):
            symbol = row[ROW_SYMBOL]
            if symbol == wanted:
                rank = 0
            elif symbol.endswith('.' + wanted):
                rank = 1
            elif symbol.lower() == lowered:
                rank = 2
            elif symbol.lower().endswith('.' + lowered):
                rank = 3
            elif symbol == 'default' and language_of(relative) in ('javascript', 'typescript') \
                    and relative.rpartition('/')[2].rpartition('.')[0] == wanted:
                rank = 4
            else:
                continue
            ranked.append((rank, base + local))
    qualified = lowered.replace('/', '.')             # Go prints net/http.(*Server).Serve
    if not ranked and '.' in qualified:
        last = qualified.rpartition('.')[2]
        found = [(row[ROW_SYMBOL], base + local)
                 for relative, base in zip(index['order'], index['starts'])
                 for local, row in enumerate(file_rows(index, relative))
                 if row[ROW_SYMBOL].lower().rpartition('.')[2] == last
                 and qualified in dotted_names(relative, row[ROW_SYMBOL].lower())]
        found.sort(key=lambda item: (not wanted.endswith('.' + item[0]), -len(item[0])))
        ranked = [(5, n) for _, n in found]  # http.Server.Serve: Server.Serve, then Serve
    if not ranked and '.' in qualified:
        ranked = [(6, n) for n in re_exported(index, qualified)]
    return [dict(chunk_entry(index, n), match=SYMBOL_MATCHES[rank])
            for rank, n in sorted(ranked, key=lambda item: item[0])]


def re_exported(index, qualified):
    """Chunk numbers for a lowercased dotted name as a package re-exports it: asyncio.gather
    (of asyncio/tasks.py), Rust's std::collections::HashMap::new (of
    std/src/collections/hash/map.rs).  The longest tail of the name that names
    definitions (whole, then as a dotted suffix) in files under a folder named as the
    part before it, those under folders of all the parts before it first (std::vec::Vec
    is alloc/src/vec/mod.rs's Vec)."""
    parts = qualified.split('.')
    for start in range(1, len(parts)):
        tail, leading = '.'.join(parts[start:]), set(parts[:start])
        found = sorted((not leading <= folders, row[ROW_SYMBOL].lower() != tail, base + local)
                       for relative, base in zip(index['order'], index['starts'])
                       for folders in [set(relative.lower().split('/')[:-1])]
                       if parts[start - 1] in folders
                       for local, row in enumerate(file_rows(index, relative))
                       if row[ROW_SYMBOL].lower() == tail
                       or row[ROW_SYMBOL].lower().endswith('.' + tail))
        if found:
            return [number for _, _, number in found]
    return []


def file_chunk_numbers(index, path):
    """The chunk numbers of one indexed file, from a path relative or absolute in root."""
    relative = resolve_indexed_path(index, path)
    base = index['fid_base'][index['files'][relative]['fid']]
    return range(base, base + index['files'][relative]['count'])


def locate(index, path, line, name=''):
    """The innermost indexed chunk of a file that contains a line, or None.  Given a
    trace frame's function name (lowercased), the innermost chunk so named, if one holds
    the line: a definition's header (`class Local:`, a decorator, `def m(self):`, a
    callback passed on a line) runs in the code around it, for a frame `in top`."""
    numbers = file_chunk_numbers(index, path)
    rows = file_rows(index, index['order'][bisect.bisect_right(index['starts'],
                                                               numbers.start) - 1]) \
        if numbers else []
    inside = sorted((row[ROW_END] - row[ROW_START], -row[ROW_START], local)
                    for local, row in enumerate(rows) if row[ROW_START] <= line <= row[ROW_END])
    if not inside:
        return None
    named = [place for place in inside if name and answers_to(rows[place[2]], name)]
    return dict(chunk_entry(index, numbers.start + (named or inside)[0][2]), line=line)


def answers_to(row, name):
    """Whether a trace frame's function name (lowercased) names a chunk row: its last
    part does, and a constructor's type does (V8's `new Report`)."""
    parts = row[ROW_SYMBOL].lower().split('.')
    return name == parts[-1] or (row[ROW_KIND] == 'constructor' and name in parts[-2:-1])


def locate_now(index, path, line):
    """What at answers: the chunk around path:line (None between definitions), once the
    file as it is now is known to hold that line: one that is gone, cannot be read or
    has fewer lines is refused as read refuses it (a trace's frame is not: its file may
    have changed since the trace was printed)."""
    read_lines(index_files(index), resolve_indexed_path(index, path), line, line)
    return locate(index, path, line)


def file_chunks(index, path):
    """The chunks of one indexed file, in index order."""
    return [chunk_entry(index, n) for n in file_chunk_numbers(index, path)]


def file_outline(index, path):
    """The definitions of one file in line order, or its windows when it was cut in
    windows; not its module code."""
    return sorted((c for c in file_chunks(index, path) if c['symbol'] != '<module>'),
                  key=lambda c: (c['start'], -c['end'], c['symbol'].count('.')))


def outline(index, paths=()):
    """{'files': [{'path', 'language', 'chunks': [{'symbol', 'kind', 'start', 'end'}]}]}
    of the indexed files at paths (files, or folders for the files under them; every
    file when there are none); LookupError for a path the index does not hold."""
    chosen = []
    for path in paths or ['']:
        wanted = path.replace('\\', '/').strip('/')
        if wanted in ('', '.'):
            chosen.extend(index['order'])
            continue
        try:
            chosen.append(resolve_indexed_path(index, path))
        except LookupError:
            folder = resolve_indexed_folder(index, path)
            chosen.extend(relative for relative in index['order']
                          if relative.startswith(folder + '/'))
    files = []
    for relative in dict.fromkeys(chosen):
        chunks = file_outline(index, relative)
        files.append({'path': relative,
                      'language': index['files'][relative].get('language', 'python'),
                      'chunks': [{key: chunk[key] for key in ('symbol', 'kind', 'start', 'end')}
                                 for chunk in chunks]})
    return {'files': files}


def resolve_indexed_folder(index, path):
    """An indexed folder's relative path (one holding indexed files) from a relative or
    absolute path inside the root; LookupError otherwise."""
    candidate = '/'.join(parts_inside(index['root'], path))
    if not any(relative.startswith(candidate + '/') for relative in index['order']):
        raise LookupError(f'not an indexed file or folder: {path}'
                          + meant_from_here(index['root'], index['files'], path))
    return candidate


def frame_paths(index):
    """{file name: [indexed paths with that name]}, what frame paths are matched on."""
    by_name = collections.defaultdict(list)
    for relative in index['files']:
        by_name[relative.rpartition('/')[2]].append(relative)
    return by_name


def path_parts(path):
    """A path's parts, from any system, with '.' dropped and '..' applied; a drive letter
    in lower case (C: and c: are one drive)."""
    parts = []
    for part in re.split(r'[\\/]+', path):
        if part == '..' and parts:
            parts.pop()
        elif part not in ('', '.', '..'):
            parts.append(part.lower() if not parts and re.fullmatch(r'[A-Z]:', part)
                         else part)
    return parts


def installed_below(parts):
    """How many parts of a path lie below its last installed-package folder
    (INSTALLED_FOLDERS, or an .egg), or 0 when it has none."""
    for number in range(len(parts) - 2, -1, -1):
        if parts[number] in INSTALLED_FOLDERS or parts[number].endswith('.egg'):
            return len(parts) - 1 - number
    return 0


def frame_candidates(index, path, by_name=None, places=()):
    """(how many path parts match, [the indexed files a frame's path may name], whether
    by suffix), the files in path order; (0, [], False) when none may.  A path inside
    the root, also through a link to it, names its own file, or none unless it is an
    installed copy; so does a path under a place the trace shows its machine had the
    root at (trace_places), if it names an indexed file.  Any other (another machine's,
    an installed copy's, a relative one, Java's package/File.java) is matched by its
    longest suffix of whole parts, and
    only when that is two parts or more, or the whole indexed path and the frame's file
    does not exist on this machine (a standard library's json/__init__.py is not the
    root's __init__.py), or the frame gives a bare file name one indexed file has.  A
    frame's file that exists on this machine outside the root is that file, not an
    indexed one, unless it is a copy of the same size (an installed package): Go's
    net/http/server.go is not the root's internal/http/server.go.  Of equally long
    matches, the root's own file of that relative path comes first."""
    if '\0' in path:                    # no file has such a name
        return 0, [], False
    root, parts = index['root'], path_parts(path)
    installed = installed_below(parts)
    if os.path.isabs(path):
        for absolute in (os.path.normpath(path), os.path.realpath(path)):
            if inside_folder(absolute, root):
                relative = spelled_as_indexed(
                    index['files'], os.path.relpath(absolute, root).replace(os.sep, '/'))
                if relative in index['files']:
                    return len(parts), [relative], False
                if not installed:                   # .tox/.../site-packages/: a copy
                    return 0, [], False
    if not parts:
        return 0, [], False
    found = [relative for place in places if place[0] == path_is_absolute(path)
             for relative in [place_relative(place, parts)] if relative in index['files']]
    if found and not installed:
        return len(parts), [min(found, key=len)], False
    named = (by_name if by_name is not None else frame_paths(index)).get(parts[-1], [])
    exists_elsewhere = bool(named) and os.path.isabs(path) and os.path.exists(path)
    size_elsewhere = None
    if exists_elsewhere:
        with contextlib.suppress(OSError):          # gone since, or not to be looked at
            size_elsewhere = os.stat(path).st_size if os.path.isfile(path) else None
    scored = []
    for relative in named:
        if size_elsewhere is not None and size_elsewhere != index['files'][relative]['size']:
            continue
        indexed = relative.split('/')
        size = 1
        while size < min(len(parts), len(indexed)) and parts[-size - 1] == indexed[-size - 1]:
            size += 1
        if size >= 2 or (size == len(indexed) and not exists_elsewhere) or (
                len(parts) == 1 and len(named) == 1):
            scored.append((-size, relative))
    if not scored:
        return 0, [], False
    best = min(scored)[0]
    exact = '/'.join(parts)         # cargo's src/main.rs is the root's, before a crate's
    return -best, sorted((relative for size, relative in scored if size == best),
                         key=lambda relative: (relative != exact, relative)), True


def trace_places(index, frames, by_name):
    """Where the machines that wrote a trace had the root, as {(absolute, leading
    parts)}: what a frame's path has before a whole indexed path of two parts or more
    whose definition at the frame's line is the frame's function (CI's
    /home/runner/work/shop/shop/ before cmd/web/main.go, -trimpath's example.com/shop/,
    nothing before cargo's src/main.rs).  Then a dependency's file of the same suffix
    (Go's net/http/server.go, a node_modules/ package's lib/router/index.js) is not
    taken for the root's, and a frame under no such place is kept only if its function
    is there.  Frames on this machine and installed copies do not count."""
    places = set()
    distinct = {(frame['file'], frame['line'], frame['name']): frame for frame in frames}
    for frame in distinct.values():
        path, parts = frame['file'], path_parts(frame['file'])
        if not parts or installed_below(parts) or os.path.isabs(path) and os.path.exists(path):
            continue
        size, found, _ = frame_candidates(index, path, by_name)
        if size >= 2 and any(size == relative.count('/') + 1 and
                             frame_function_at(index, relative, frame) for relative in found):
            places.add((path_is_absolute(path), tuple(parts[:-size])))
    return places


def frame_function_at(index, relative, frame):
    """Whether an indexed file's definition at a frame's line is the frame's function."""
    wanted = frame_function(frame['name']).lower()
    return bool(wanted) and frame['line'] > 0 and \
        is_named(locate(index, relative, frame['line'], wanted), wanted)


def is_named(chunk, wanted):
    """Whether a located chunk (or None) is the function a frame names (lowercased)."""
    return chunk is not None and chunk['symbol'].rpartition('.')[2].lower() == wanted


def path_is_absolute(path):
    """Whether a path from any system is absolute: /x, \\x or C:\\x."""
    return bool(re.match(r'[\\/]|[A-Za-z]:[\\/]', path))


def place_relative(place, parts):
    """A path's parts (path_parts) from a place a trace had the root at, '/'-joined, or
    None when the path is not under it."""
    leading = place[1]
    return '/'.join(parts[len(leading):]) if tuple(parts[:len(leading)]) == leading \
        else None


def explain_traceback(repos, text):
    """Each block of the traces in text, each frame with the innermost indexed
    definition that holds its line, in any of the repos.  When several indexed files
    match a frame's path equally well, the one whose definition there has the frame's
    function name wins; a name never moves a frame off its line."""
    blocks = fold_repeats(parse_traces(text))
    with_file = [frame for block in blocks for frame in block['frames'] if frame['file']]
    by_name = [frame_paths(repo.index) for repo in repos]
    places = [trace_places(repo.index, with_file, names)
              for repo, names in zip(repos, by_name)]
    explained = []
    for block in blocks:
        frames = [explain_frame(repos, dict(frame, language=block['language'],
                                            block=block['block']), by_name, places)
                  for frame in block['frames']]
        explained.append(dict(block, frames=frames))
    return explained


def fold_repeats(blocks):
    """The blocks with each trace that the text holds again, frame for frame and word for
    word, kept once: the 3,000 copies of one logged error, or 100 goroutines waiting in
    one place, read as one, each of its blocks' 'repeats' saying how many more there
    were.  A trace is a block with those joined to it: its causes, suppressed
    exceptions and group members, and what Python's 'then' leads to."""
    traces = []
    for n, block in enumerate(blocks):
        if n and (block['joined'] or blocks[n - 1]['then']):
            traces[-1].append(block)
        else:
            traces.append([block])
    kept, first = [], {}
    for trace in traces:
        key = repr([(b['language'], BLOCK_NUMBER.sub('', b['block']), b['frames'],
                     b['message'], b['then']) for b in trace])
        if key in first:
            for earlier in first[key]:
                earlier['repeats'] += 1
        else:
            first[key] = [dict(b, repeats=0) for b in trace]
            kept.extend(first[key])
    return kept


def explain_frame(repos, frame, by_name, places):
    """A frame with its repo, indexed file ('path', 'inside_root') and definition
    ('chunk'), 'left_out' when its file is under a root but not indexed (node_modules/),
    and 'gone' when that file is no longer a regular file: deleted since it was
    indexed, or replaced by a link (never followed) or a folder."""
    frame = locate_frame(repos, frame, by_name, places)
    root = next((repo.index['root'] for repo in repos if repo.label == frame['repo']), None)
    if root and frame['path'] and \
            not is_regular_file(os.path.join(root, *frame['path'].split('/'))):
        frame['gone'] = True
    return frame


def frame_files(repos, path, by_name, places):
    """(how many parts match, [(repo, indexed file)], whether by suffix while the trace
    shows places: see trace_places) of the longest match of a frame's path."""
    found = [(frame_candidates(repo.index, path, names, repo_places), repo, repo_places)
             for repo, names, repo_places in zip(repos, by_name, places)]
    best = max((size for (size, _, _), _, _ in found), default=0)
    chosen = [(repo, relative, suffix and bool(repo_places))
              for (size, files, suffix), repo, repo_places in found if size == best
              for relative in files]
    return best, [(repo, relative) for repo, relative, _ in chosen], \
        any(unplaced for _, _, unplaced in chosen)


def locate_frame(repos, frame, by_name, places):
    """explain_frame's work: the frame's file among the indexes, and its definition.  A
    match the path alone does not make sure of is kept only if the frame's function is
    there: a suffix match while the trace shows where the root was (trace_places), an
    installed copy's by part of its path below site-packages/, and a JVM frame's by its
    file name alone, tried when nothing matches, since a Kotlin tree may leave out the
    package's folders (src/main/kotlin/App.kt of com.acme.app).  Several files that
    match equally, none with the function there, are 'ambiguous': the frame is not
    guessed onto one (a workspace's crates each have a src/main.rs)."""
    size, candidates, unplaced = frame_files(repos, frame['file'], by_name, places)
    guessed = unplaced or bool(candidates) and \
        size < installed_below(path_parts(frame['file']))
    if not candidates and frame['language'] in JVM and '/' in frame['file']:
        candidates = frame_files(repos, frame['file'].rpartition('/')[2], by_name,
                                 [set()] * len(repos))[1]
        guessed = True
    frame.update(repo=candidates[0][0].label if candidates else None,
                 path=candidates[0][1] if candidates else None,
                 inside_root=bool(candidates), chunk=None)
    if not candidates and os.path.isabs(frame['file']):     # node_modules/, .venv/, ...
        frame['left_out'] = any(inside_folder(os.path.normpath(frame['file']),
                                              repo.index['root']) for repo in repos)
    if not frame['file']:
        named = [(repo, chunk) for repo in repos
                 for chunk in [definition_named_by(repo.index, frame)] if chunk]
        if len(named) == 1:
            repo, chunk = named[0]
            frame.update(repo=repo.label, path=chunk['path'], inside_root=True,
                         chunk=dict(with_text(repo.index, [chunk])[0], repo=repo.label))
        return frame
    if not candidates:
        return frame
    if frame['line'] <= 0:
        repo, relative = candidates[0]
        chunk = chunk_of_frame_name(repo.index, relative, frame['name'])
        if guessed and not chunk:
            return dict(frame, repo=None, path=None, inside_root=False)
        frame['chunk'] = dict(with_text(repo.index, [chunk])[0], repo=repo.label) \
            if chunk else None
        return frame
    wanted = frame_function(frame['name']).lower()
    located = [(repo, relative, locate(repo.index, relative, frame['line'], wanted))
               for repo, relative in candidates]
    named = [place for place in located if is_named(place[2], wanted)]
    if guessed and not (named or ANONYMOUS_FRAME.search(frame['name']) and
                        any(place[2] for place in located)):
        return dict(frame, repo=None, path=None, inside_root=False)
    if not named and len(candidates) > 1 and \
            candidates[0][1] != '/'.join(path_parts(frame['file'])):
        return dict(frame, repo=None, path=None, ambiguous=[
            f'{repo.label}:{relative}' if len(repos) > 1 else relative
            for repo, relative in candidates])
    repo, relative, chunk = (named or [place for place in located if place[2]] or located)[0]
    frame.update(repo=repo.label, path=relative)
    if chunk is not None:
        frame['chunk'] = dict(with_text(repo.index, [chunk])[0], repo=repo.label)
        if wanted and not is_named(chunk, wanted) and not re.search(r'\$\d', frame['name']):
            frame['elsewhere'] = function_elsewhere(repo.index, relative, wanted, frame['line'])
    else:
        record = repo.index['files'][relative]
        lines, frame['stale'] = read_current_file(repo.index['root'], relative,
                                                  record['revision'],
                                                  record.get('language', 'python'))
        if frame['line'] <= len(lines):
            frame['source_line'] = lines[frame['line'] - 1]
        elif lines or not frame['stale']:
            frame['lines_now'] = len(lines)         # the file is shorter than the trace says
    return frame


def function_elsewhere(index, relative, wanted, line):
    """[start, end] of the definition of a frame's function (lowercased) nearest its line
    in the file, when none holds the line: the trace comes from another version of the
    file (Option::unwrap at a line of Option::map_or_else), or None.  Java's anonymous
    classes (Main$1.run) are left out by the caller: their methods are not chunks."""
    spans = [(chunk['start'], chunk['end']) for chunk in file_chunks(index, relative)
             if chunk['symbol'].rpartition('.')[2].lower() == wanted]
    if not spans or any(start <= line <= end for start, end in spans):
        return None
    return list(min(spans, key=lambda span: min(abs(span[0] - line), abs(span[1] - line))))


def chunk_of_frame_name(index, relative, name):
    """For a frame with a file but no line (Java's Native Method, Kotlin's invoke(Money.kt)):
    the file's definition named by the frame's function, or by a name around it
    (MoneyKt$totalOf$1.invoke: invoke, then totalOf)."""
    chunks = file_chunks(index, relative)
    for part in reversed(re.findall(r'[A-Za-z_]\w*', name)):
        found = [c for c in chunks if c['symbol'].rpartition('.')[2] == part]
        if found:
            return min(found, key=lambda c: c['end'] - c['start'])
    return None


def definition_named_by(index, frame):
    """For a frame that names no file (a Rust release build's shop::store::Store::get):
    the one indexed definition of its language whose symbol is a tail of its path."""
    parts = [part for part in re.split(r'::|\.', re.sub(r'<[^<>]*>', '', frame['name']))
             if part and FRAME_NAME_PARTS.fullmatch(part)]
    for start in range(1, len(parts)):
        found = [chunk for chunk in find_symbol(index, '.'.join(parts[start:]))
                 if chunk['match'] == 'exact' and chunk['language'] == frame['language']]
        if found:
            return found[0] if len(found) == 1 else None
    return None


def index_status(index, path):
    """What an index holds: root, counts, skipped files and when it was written."""
    return {'index': str(path), 'root': index['root'], 'files': len(index['files']),
            'chunks': index['total'], 'skipped': index.get('skipped', []),
            'indexed_at': index.get('indexed_at', '')}


# --- Plain tools for agents: grep, read, ls ------------------------------------------------
# What an agent reaches for when it knows what it wants: a regular expression over the
# files, a file's lines by number, the folders and files.  They work on the files an
# index covers, or on the files under a root chosen by the index's own rules, read as
# the index reads them, so their line numbers are search's and at's.

class FileSet(NamedTuple):
    """The files grep, read and ls work on: {relative: record} with each file's
    'language' (and, from an index, its 'revision' and chunk 'count'), under root."""
    root: str
    files: dict
    index: dict = None       # the searchable index, when the files are an index's
    skipped: tuple = ()      # files under a root that its rules leave out, reported
    label: str = ''          # the repo's label


def index_files(index, label=''):
    """The files of a searchable index as a FileSet."""
    return FileSet(index['root'], index['files'], index, (), label)


def root_files(root, options=IndexOptions()):
    """The files under a root that index would read, as a FileSet."""
    found, skipped = list_tree(root, options)
    files = {}
    for relative, path in found.items():
        with contextlib.suppress(OSError):      # else reading it says why
            size = os.stat(path).st_size
            if size > options.max_file_size:
                skipped.append(skip_record(relative, too_large(size, options.max_file_size)))
                continue
        files[relative] = {'language': language_of(relative) or 'text'}
    return FileSet(str(root), files, None, tuple(skipped), root_label(root))


def file_lines(files, relative):
    """(lines, sha256 hex) of a file of the set as it is now, numbered as index numbers
    them; SkipFile when it cannot be read or is not text."""
    data = read_back(files.root, relative)
    if files.files[relative]['language'] == 'python':
        lines = source_lines(decode_source(data))
    else:
        if b'\0' in data:
            raise SkipFile(binary_reason(data))
        lines = text_lines(decode_text(data))
    return lines, hashlib.sha256(data).hexdigest()


def definitions_now(files, relative, data):
    """(start, end, symbol) of the chunks of a file whose bytes are data: the index's
    rows while the file is as indexed, else the file chunked again now."""
    record = files.files[relative]
    sha256 = hashlib.sha256(data).hexdigest()
    if files.index is not None and sha256.startswith(record.get('revision') or '-'):
        return [(row[ROW_START], row[ROW_END], row[ROW_SYMBOL])
                for row in file_rows(files.index, relative)]
    try:
        read = chunk_file(data, relative, sha256)
    except SkipFile:
        return []
    return [(chunk['start'], chunk['end'], chunk['symbol']) for chunk in read.chunks]


def innermost_by_line(definitions):
    """[None, the (start, end, symbol) that holds line 1 most tightly, line 2's, ...]."""
    holders = [None] * (max((d[1] for d in definitions), default=0) + 1)
    for definition in sorted(definitions, key=lambda d: (d[0] - d[1], d[0])):
        for line in range(definition[0], definition[1] + 1):
            holders[line] = definition
    return holders


class GrepQuery(NamedTuple):
    """What grep looks for and where."""
    pattern: str
    fixed: bool = False          # -F: the pattern is a literal string
    ignore_case: bool = False    # -i
    word: bool = False           # -w: only whole words
    globs: tuple = ()            # --path globs the files must match
    languages: tuple = ()        # --lang: the files' languages
    max_count: int = 0           # per file; 0: no limit
    max_results: int = 0         # in all; 0: no limit
    offset: int = 0              # matches to pass over first (the next page)


def grep_regex(query):
    """The compiled pattern of a query; ValueError with re's reason when it is bad."""
    pattern = re.escape(query.pattern) if query.fixed else query.pattern
    if query.word:
        pattern = r'(?<!\w)(?:' + pattern + r')(?!\w)'
    try:
        return re.compile(pattern, re.MULTILINE | (re.IGNORECASE if query.ignore_case else 0))
    except (re.error, OverflowError, RecursionError) as error:
        raise ValueError(f'bad regular expression {query.pattern!r}: {error}') from None


def grep(sets, query, report=None):
    """{'pattern', 'matches': [{'repo', 'path', 'line', 'column', 'text', 'symbol',
    'start', 'end'}], 'files_searched', 'truncated'} of a query over FileSets, in their
    order and path order; 'next_offset' when max_results cut it.  report(relative,
    reason, line) hears of each file that could not be read."""
    regex = grep_regex(query)
    matches, searched, seen, truncated = [], 0, 0, False
    accepts = [file_filter(files.files, query.globs, query.languages) for files in sets]
    checks = {files.root: real_folder_check(files.root) for files in sets}
    with time_limit(GREP_SECONDS) as clock:
        for files, accept, relative in ((files, accept, relative) for files, accept in
                                        zip(sets, accepts) for relative in files.files):
            if accept is not None and not accept(relative):
                continue
            try:
                data = read_back(files.root, relative, checks[files.root])
            except SkipFile as skip:
                if report:
                    report(relative, skip.reason, skip.line)
                continue
            python = files.files[relative]['language'] == 'python'
            if not python and b'\0' in data:
                continue
            searched += 1
            try:
                text = decode_source(data) if python else decode_text(data)
            except SkipFile as skip:
                if report:
                    report(relative, skip.reason, skip.line)
                continue
            clock(f'the pattern took over {GREP_SECONDS} s on {relative}: it backtracks too '
                  'much; simplify it')
            found = file_matches(regex, text, python, query.max_count)
            clock(None)
            if not found:
                continue
            truncated = truncated or len(found) == query.max_count > 0
            holders = innermost_by_line(definitions_now(files, relative, data))
            for line, column, line_text in found:
                seen += 1
                if seen <= query.offset:
                    continue
                if query.max_results and len(matches) == query.max_results:
                    return {'pattern': query.pattern, 'matches': matches,
                            'files_searched': searched, 'truncated': True,
                            'next_offset': seen - 1}
                holder = holders[line] if line < len(holders) else None
                matches.append({'repo': files.label, 'path': relative, 'line': line,
                                'column': column, 'text': line_text[:LONG_LINE],
                                'symbol': holder[2] if holder else None,
                                'start': holder[0] if holder else None,
                                'end': holder[1] if holder else None})
    return {'pattern': query.pattern, 'matches': matches, 'files_searched': searched,
            'truncated': truncated}


class TooSlow(ValueError):
    """A search stopped by time_limit: a bad question, not a damaged index."""


@contextlib.contextmanager
def time_limit(seconds):
    """clock(message) for the block, called as a step starts (clock(None) as it ends):
    TooSlow(message) stops a step that has run for seconds.  The one way to stop a
    regular expression that backtracks for ever ('(a+)+$'), since re heeds only
    signals: a SIGALRM every seconds/2 looks.  On the main thread where SIGALRM exists
    (POSIX); elsewhere no limit."""
    step = {'started': None, 'message': ''}

    def look(signum, frame):
        if step['started'] is not None and time.monotonic() - step['started'] >= seconds:
            raise TooSlow(step['message'])

    def clock(message):
        step.update(started=None if message is None else time.monotonic(), message=message)

    installed = False
    with contextlib.suppress(AttributeError, ValueError):   # no SIGALRM (Windows), or
        previous, installed = signal.signal(signal.SIGALRM, look), True   # not main thread
    if not installed:
        yield lambda message: None
        return
    timer = signal.setitimer(signal.ITIMER_REAL, seconds / 2, seconds / 2)
    try:
        yield clock
    finally:
        signal.setitimer(signal.ITIMER_REAL, *timer)    # an outer limit's, or none
        signal.signal(signal.SIGALRM, previous)


def file_matches(regex, text, python, max_count):
    """(line, column, the line's text) of each line the pattern matches, 1-based and
    numbered as index numbers lines (Python's \\r too).  A line counts once, at its
    first match; a match that runs past the end of its line is looked for again within
    the line."""
    found, position, number = [], 0, 1
    while not max_count or len(found) < max_count:
        match = regex.search(text, position)
        if match is None:
            break
        at = match.start()
        number += line_breaks(text, position, at, python)
        begin = max(text.rfind('\n', 0, at), text.rfind('\r', 0, at) if python else -1) + 1
        end = len(text) if at == len(text) else end_of_line(text, at, python)
        if end == len(text) and begin == end:
            break                       # the empty "line" after the last line break
        line = text[begin:end]
        line = line[:-1] if not python and line.endswith('\r') else line
        column = at - begin + 1
        if match.end() > begin + len(line) > at:
            inner = regex.search(line)
            column = inner.start() + 1 if inner else 0
        if column:
            found.append((number, column, line))
        position = end + (2 if text.startswith('\r\n', end) and python else 1)
        number += 1
        if position > len(text):
            break
    return found


def line_breaks(text, start, end, python):
    """How many lines end between start and end."""
    if not python:
        return text.count('\n', start, end)
    return text.count('\n', start, end) + text.count('\r', start, end) - \
        text.count('\r\n', start, end)


def end_of_line(text, position, python):
    """The offset of the line break that ends the line holding position (len(text) when
    none does)."""
    ends = [text.find('\n', position)] + ([text.find('\r', position)] if python else [])
    ends = [end for end in ends if end >= 0]
    return min(ends) if ends else len(text)


def read_lines(files, path, start=1, end=None):
    """{'path', 'start', 'end', 'total_lines', 'revision', 'stale', 'text'} of lines
    start..end (1-based, inclusive, end clipped to the file) of a file of the set;
    LookupError for a path outside it, a link or a binary file."""
    relative = resolve_file_set_path(files, path)
    try:
        lines, sha256 = file_lines(files, relative)
    except SkipFile as skip:
        raise LookupError(f'cannot read {relative}: {skip.reason.replace("skipped: ", "")}') \
            from None
    if end is not None and end < start:
        raise LookupError(f'end must not be before start ({end} < {start})')
    total = len(lines)
    end = total if end is None else min(end, total)
    if start > max(total, 1) or start > end and total:
        raise LookupError(f'{relative} has {total} lines; line {start} is past its end')
    revision = (files.files[relative].get('revision') or '') if files.index else ''
    return {'path': relative, 'start': start, 'end': end, 'total_lines': total,
            'revision': sha256[:12], 'stale': bool(revision) and
            not sha256.startswith(revision), 'text': '\n'.join(lines[start - 1:end])}


def resolve_file_set_path(files, path):
    """A file's relative path in the set, from a path relative to the root or absolute
    inside it; LookupError for anything else (outside the root, through a symbolic link
    out of it, ignored, not indexed)."""
    relative = spelled_as_indexed(files.files, '/'.join(parts_inside(files.root, path)))
    full = os.path.join(files.root, *relative.split('/'))
    real_root = os.path.realpath(files.root)
    if not inside_folder(os.path.realpath(full), real_root):
        raise LookupError(f'path leads outside the root through a symbolic link: {path}')
    if relative not in files.files:
        what = 'an indexed file' if files.index is not None else \
            'a file that index reads (ignored or skipped)'
        raise not_in_set(files.root, files.files, path, relative, what)
    return relative


def list_folder(files, path='', depth=1, everything=False):
    """{'path', 'entries': [{'path', 'type', 'language', 'files', 'chunks'}]} of the
    folders and files under a folder of the set, depth levels down; with everything,
    also the files and folders left out, each with its 'reason'.  A file's listing is
    its own entry, as `ls FILE` has it."""
    named = spelled_as_indexed(files.files, '/'.join(parts_inside(files.root, path)))
    if named in files.files:
        return {'path': named, 'entries': [file_entry(named, files.files[named])]}
    if everything and named:
        alone = [item for item in left_out_under(files, named.rpartition('/')[0])
                 if item['path'] == named]
        if alone:
            return {'path': named, 'entries': alone}
    folder = resolve_folder(files, path, everything)
    prefix = folder + '/' if folder else ''
    entries = {}
    for relative, record in files.files.items():
        if not relative.startswith(prefix):
            continue
        parts = relative[len(prefix):].split('/')
        for level in range(1, min(len(parts), depth) + 1):
            name = prefix + '/'.join(parts[:level])
            if level == len(parts):
                entries[name] = file_entry(name, record)
            else:
                entry = entries.setdefault(name, {'path': name + '/', 'type': 'folder',
                                                  'files': 0, 'chunks': 0})
                entry['files'] += 1
                entry['chunks'] += record.get('count', 0)
    if everything:
        for left_out in left_out_under(files, folder):
            parts = left_out['path'].rstrip('/')[len(prefix):].split('/')
            for level in range(1, min(len(parts), depth + 1)):  # the folders it is in, listed
                entries.setdefault(prefix + '/'.join(parts[:level]), {
                    'path': prefix + '/'.join(parts[:level]) + '/', 'type': 'folder',
                    'reason': 'holds files left out (ls --all on this folder lists them)'})
            if len(parts) <= depth:
                entries.setdefault(left_out['path'].rstrip('/'), left_out)
        if folder and not entries:      # behind a link, inside an ignored folder, or none
            raise LookupError(f'not a folder that holds indexed or left-out files: {path} '
                              f'(ls --all on the folder above it says why)')
    return {'path': prefix or './', 'entries': [entries[name] for name in sorted(entries)]}


def file_entry(relative, record):
    """ls's entry of one indexed file."""
    return {'path': relative, 'type': 'file', 'language': record.get('language', 'python'),
            'chunks': record.get('count', 0)}


def parts_inside(root, path):
    """The names of a path below root, from a path relative to it (where 'sub/../x' is x
    and 'a//b' is a/b) or absolute inside it, also through a link to it (/tmp is
    /private/tmp on macOS, and the root is kept resolved); LookupError outside it, or
    for a name no file has (a NUL, or text that is not UTF-8)."""
    if '\0' in path or any('\ud800' <= character <= '\udfff' for character in path):
        raise LookupError(f'no file has such a name: {path!r}')    # none is indexed
    candidate = path.replace('\\', '/')
    if os.path.isabs(path):
        absolute = os.path.normpath(path)
        if not inside_folder(absolute, root):
            absolute = os.path.realpath(path)
        if not inside_folder(absolute, root):
            raise LookupError(f'path is outside the root: {path}')
        candidate = os.path.relpath(absolute, root).replace(os.sep, '/')
    return relative_parts(candidate, path)


def relative_parts(relative, path):
    """The names of a '/'-separated path below the root, its '..' resolved ('sub/../x' is
    x); LookupError for one that climbs out or names a drive (C:x on Windows)."""
    parts = []
    for part in relative.split('/'):
        if part == '..' and not parts or os.path.splitdrive(part)[0]:
            raise LookupError(f'path is outside the root: {path}')
        if part == '..':
            parts.pop()
        elif part not in ('', '.'):
            parts.append(part)
    return parts


def resolve_folder(files, path, everything=False):
    """A folder of the set's relative path ('' for the root): one that holds indexed
    files (with everything, list_folder judges it by what the walk finds there);
    LookupError otherwise."""
    folder = '/'.join(parts_inside(files.root, path))
    if folder and not everything \
            and not any(relative.startswith(folder + '/') for relative in files.files):
        raise LookupError(f'not a file or a folder that holds indexed files: {path}'
                          + meant_from_here(files.root, files.files, path))
    return folder


def unindexed_reason(path):
    """Why a file the walk takes is not in the index: it is an index itself (index
    leaves the one it writes out), or it is new since indexing."""
    owner = index_file_owner(path)
    return f'a {owner} index file' if owner else \
        'not in the index (new since indexing: run index)'


def left_out_under(files, folder):
    """The files and folders under a folder that are not in the set, with the reason:
    the walk's reasons (from the root, so every ignore file counts), the index's skipped
    files, and files new since indexing."""
    prefix = folder + '/' if folder else ''
    skipped = {item['path']: item['reason'] for item in (files.index or {}).get('skipped', ())}
    found = []
    for item in walk_tree(files.root, IndexOptions()):
        if not item.relative.startswith(prefix) or item.relative in files.files:
            continue
        reason = skipped.get(item.relative) or item.reason or \
            unindexed_reason(os.path.join(files.root, item.relative))
        kind = 'link' if reason == LINK_REASON else 'special' if reason == SPECIAL_REASON \
            else 'folder' if item.relative.endswith('/') else 'file'
        found.append({'path': item.relative, 'type': kind, 'reason': reason})
    return found


# --- Output: the tutorial's lines for people, one JSON object for machines -------------
# emit_json, report_skipped, warn and progress_line are the same in notes_search.

def hit_header(hit, with_repo=False):
    """'[id] path:start-end symbol' ('repo:path' when several repos are searched)."""
    path = f"{hit['repo']}:{hit['path']}" if with_repo else hit['path']
    header = f"[{hit['id']}] {path}:{hit['start']}-{hit['end']} {hit['symbol']}"
    if hit.get('stale'):
        header += GONE_NOTE if hit.get('gone') else STALE_NOTE
    return header


def format_hits(hits, with_repo=False):
    """The tutorial's format: '[id] path:start-end symbol' then the source lines (with
    --explain, what gave the score between them), or why there are none now."""
    if not hits:
        return NOT_FOUND_MESSAGE
    return '\n'.join(hit_header(hit, with_repo) + '\n' + format_explain(hit.get('explain')) +
                     (hit['text'] or ('' if not hit.get('stale') or hit.get('gone')
                                      else LINES_GONE))
                     for hit in hits)


def format_explain(explained):
    """search --explain: the score as words times factors, then one line per question
    term with its score, idf and the part each field gave; '' without an explanation."""
    if not explained:
        return ''
    factors = ''.join(f' x {weight:g} ({what})' for what, weight in explained['factors'].items())
    lines = [f"  score {explained['score']:.4f} = {explained['words_score']:.4f} (words){factors}"]
    for word in explained['words']:
        origin = f"{word['concept']}: {word['part']}+" if word['part'] else word['concept']
        name = word['term'] if origin == word['term'] else f"{word['term']} ({origin})"
        parts = '  '.join(f'{field} {part:.4f}' for field, part in word['fields'].items())
        counted = '' if word['counted'] else '  [not counted: its concept has a better term]'
        lines.append(f"    {name:<20} {word['score']:.4f}  idf {word['idf']:.2f}"
                     f"  weight {word['weight']:g}  {parts}{counted}")
    for label, key in (('not in this hit', 'missing'), ('left out of the question', 'dropped')):
        if explained[key]:
            lines.append(f"    {label}: {' '.join(explained[key])}")
    return '\n'.join(lines) + '\n'


def marked_text(chunk, line):
    """Source lines with numbers, the given line marked with '>'."""
    width = len(str(chunk['end']))
    rows = []
    for number, text in enumerate(chunk['text'].split('\n'), chunk['start']):
        rows.append(f"{'>' if number == line else ' '} {number:>{width}} | {text}")
    return '\n'.join(rows)


HIT_KEYS = ('id', 'repo', 'path', 'symbol', 'kind', 'language', 'start', 'end', 'revision',
            'receiver', 'trait', 'score', 'stale', 'gone', 'text')


def hit_json(hit):
    """A hit as every JSON output shows it; a symbol look-up's hit also says how its
    name matched, and an explained one why it ranks where it does."""
    document = {key: hit.get(key) for key in HIT_KEYS}
    for extra in ('explain', 'match'):
        if extra in hit:
            document[extra] = hit[extra]
    return document


def trace_frame_json(frame):
    chunk = frame['chunk']
    return {'file': frame['file'], 'line': frame['line'], 'name': frame['name'],
            'language': frame['language'], 'block': frame['block'],
            'inside_root': frame['inside_root'], 'left_out': bool(frame.get('left_out')),
            'repo': frame['repo'], 'path': frame['path'],
            'stale': bool(chunk and chunk.get('stale')) or bool(frame.get('stale')),
            'gone': bool(frame.get('gone')), 'ambiguous': frame.get('ambiguous', []),
            'elsewhere': frame.get('elsewhere'),
            'repeated': frame.get('repeated', 0),
            'chunk': hit_json(chunk) if chunk else None}


def traceback_json(explained):
    """explain_traceback's blocks as one JSON-ready object."""
    return {'exceptions': [{'language': block['language'], 'block': block['block'],
                            'frames': [trace_frame_json(frame) for frame in block['frames']],
                            'message': block['message'], 'then': block['then'],
                            'repeats': block['repeats']}
                           for block in explained]}


def format_traceback(explained, full=False, with_repo=False):
    """Traces for people: per block its frames, each with its definition's header line
    and TRACE_CONTEXT lines around the frame's line (full: the whole definition), then
    the block's message."""
    out = []
    for n, block in enumerate(explained):
        next_joined = n + 1 < len(explained) and explained[n + 1]['joined']
        if block['language'] == 'python' and block['block'].partition(' ')[0] == 'pytest':
            out.append(f"{block['block']}:")
        elif block['language'] == 'python':
            if block['frames']:     # a group's exception without a traceback has none
                out.append('Traceback (most recent call last):')
        else:
            out.append(f"{block['language']} {block['block']}:")
        for frame in block['frames']:
            out.extend(format_frame(frame, full, with_repo))
            if frame.get('repeated'):
                count = frame['repeated']
                out.append(f"  [Previous line repeated {count} more time{'s' * (count != 1)}]")
        if block['message']:
            out.append(block['message'])
        if block['then']:
            out.extend(['', block['then'], ''])
        elif block['repeats'] and not next_joined:     # the last block of its trace
            count = block['repeats']
            out.append(f"[Seen {count} more time{'s' * (count != 1)} in this text]")
    return '\n'.join(out) if out else 'no stack trace frames found'


def format_frame(frame, full, with_repo=False):
    """The lines of one frame: where it is as printed, then the code there."""
    if frame['language'] == 'python':
        where = f"  File {frame['file']}, line {frame['line']}" + (
            f", in {frame['name']}" if frame['name'] else '')    # a SyntaxError's and pytest
                                                                  # --tb=long's have none
    else:
        line = f":{frame['line']}" if frame['line'] else ''
        at = '' if frame['name'].startswith('created by ') else 'at '    # Go's own words
        where = f"  {at}{frame['name'] or '<anonymous>'} ({frame['file']}{line})"
    if not frame['inside_root']:
        if not frame.get('left_out'):
            return [where + '  (outside the root)']
        return [where + ('  (in the root, not indexed: ls --all says why)'
                         if os.path.lexists(frame['file']) else '  (in the root, no such file)')]
    if frame.get('ambiguous'):
        files = frame['ambiguous']
        return [where, f"    {len(files)} indexed files end in this path, none with this "
                       f"function at line {frame['line']}: " + ', '.join(files[:3])
                + (', ...' if len(files) > 3 else '')]
    chunk = frame['chunk']
    path = f"{frame['repo']}:{frame['path']}" if with_repo else frame['path']
    if frame.get('gone'):
        return [where] + (['    ' + hit_header(chunk, with_repo)] if chunk else []) + \
            [f"    {path}: the file is gone since it was indexed"]
    if chunk is not None and chunk['start'] + lines_now(chunk) <= frame['line'] <= chunk['end']:
        return [where, '    ' + hit_header(chunk, with_repo),            # it shrank
                f"    the file has no line {frame['line']} now"]
    if chunk is not None:
        rows = marked_text(chunk, frame['line']) if full else \
            trace_window(chunk, frame['line'])
        elsewhere = frame.get('elsewhere')
        note = [f"    {frame_function(frame['name'])} is at lines {elsewhere[0]}-{elsewhere[1]} "
                'of this file: the trace may come from another version of it'] \
            if elsewhere else []
        return [where, '    ' + hit_header(chunk, with_repo)] + note + \
            ['    ' + row for row in rows.split('\n')]
    if not frame['line']:
        return [where, f"    {path}: the trace gives no line"]
    note = '  [stale]' if frame.get('stale') else ''
    if 'lines_now' in frame:
        return [where, f"    {path} has {frame['lines_now']} lines: the file has no line "
                       f"{frame['line']} now{note}"]
    rows = [where, f"    {path}:{frame['line']}: outside any indexed definition{note}"]
    if 'source_line' in frame:
        rows.append(f"    > {frame['line']} | {frame['source_line']}")
    return rows


def lines_now(chunk):
    """How many of a chunk's lines its file still has (its text is read when answering)."""
    return chunk['text'].count('\n') + 1 if chunk['text'] else 0


def trace_window(chunk, line):
    """The definition's header line and TRACE_CONTEXT lines each side of line, marked;
    for a frame without a line (Unknown Source), the definition's first lines."""
    lines = chunk['text'].split('\n')
    first = max(chunk['start'], line - TRACE_CONTEXT) if line > 0 else chunk['start']
    last = min(chunk['end'], line + TRACE_CONTEXT if line > 0 else first + 2 * TRACE_CONTEXT)
    name = chunk['symbol'].rpartition('.')[2]
    header = next((number for number, text in enumerate(lines, chunk['start'])
                   if name in text), chunk['start'])
    shown = ([header] if header < first else []) + list(range(first, last + 1))
    width = len(str(last))
    rows, previous = [], None
    for number in shown:
        if previous is not None and number > previous + 1:
            rows.append(f"  {'.' * width} |")
        text = lines[number - chunk['start']] if number - chunk['start'] < len(lines) else ''
        rows.append(f"{'>' if number == line else ' '} {number:>{width}} | {text}")
        previous = number
    return '\n'.join(rows)


def format_grep(result, lines_of, context=0, files_only=False, with_repo=False):
    """grep's matches for people, as ripgrep prints them: path:line:text, context lines
    path-line-text and '--' between groups; the definition holding a run of matches is
    named above it (path:start-end symbol); with_repo, paths are repo:path.
    lines_of(repo, path) gives a file's lines for the context.  Nothing at all when
    nothing matched."""
    def shown(match):
        return f"{match['repo']}:{match['path']}" if with_repo else match['path']

    if files_only:
        return '\n'.join(dict.fromkeys(shown(match) for match in result['matches']))
    by_file = collections.defaultdict(dict)
    for match in result['matches']:
        by_file[match['repo'], match['path']][match['line']] = match
    out = []
    for (repo, path), matched in by_file.items():
        lines = lines_of(repo, path) if context else []
        name = shown(next(iter(matched.values())))
        spans, holder = [], None
        for line in matched:
            first, last = max(1, line - context), min(line + context, max(len(lines), line))
            if spans and first <= spans[-1][1] + 1:
                spans[-1][1] = max(spans[-1][1], last)
            else:
                spans.append([first, last])
        for first, last in spans:
            if context and out:
                out.append('--')
            group = [matched[n] for n in range(first, last + 1) if n in matched]
            for number in range(first, last + 1):
                match = matched.get(number) or (group[0] if number == first else None)
                if match is not None and match['symbol'] is not None and \
                        (match['start'], match['symbol']) != holder and \
                        not match['symbol'].startswith(path + ':L'):     # a window's name
                    holder = (match['start'], match['symbol'])
                    out.append(f"{name}:{match['start']}-{match['end']} {match['symbol']}")
                if number in matched:
                    out.append(f"{name}:{number}:{matched[number]['text']}")
                else:
                    out.append(f"{name}-{number}-{lines[number - 1][:LONG_LINE]}")
    return '\n'.join(out)


def format_read(result):
    """Lines with their numbers, as at shows them."""
    width = len(str(result['end']))
    return '\n'.join(f'{number:>{width}} | {text}' for number, text in
                     enumerate(result['text'].split('\n'), result['start'])) \
        if result['total_lines'] else ''


def counted(number, noun):
    """'1 file', '2 files'."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def format_listing(listing):
    """ls for people: a line per folder and file, with language, files and chunks."""
    rows = []
    for entry in listing['entries']:
        if 'reason' in entry:
            rows.append((entry['path'], f"[{entry['reason']}]"))
        elif entry['type'] in ('folder', 'repo'):
            rows.append((entry['path'], f"{counted(entry['files'], 'file')}, "
                                        f"{counted(entry['chunks'], 'chunk')}"))
        else:
            rows.append((entry['path'], f"{entry['language']}, "
                                        f"{counted(entry['chunks'], 'chunk')}"))
    width = max((text_width(path) for path, _ in rows), default=0)
    return '\n'.join(f'{padded(path, width)}  {what}' for path, what in rows)


def format_outline(found, with_repo=False):
    """An outline for people: each file with its language, then its definitions with
    their lines, members indented under the definitions that hold them (line windows,
    which overlap, hold none)."""
    out = []
    for file in found['files']:
        path = f"{file['repo']}:{file['path']}" if with_repo else file['path']
        out.append(f"{path} ({file['language']})")
        open_ends = []
        for chunk in file['chunks']:
            while open_ends and open_ends[-1] < chunk['end']:
                open_ends.pop()
            out.append(f"{'  ' * (len(open_ends) + 1)}{chunk['start']}-{chunk['end']} "
                       f"{chunk['kind']} {chunk['symbol']}")
            open_ends.append(chunk['end'])
    return '\n'.join(out) if out else 'no indexed files'


def emit_json(document):
    print(json.dumps(document, ensure_ascii=False, indent=2))


def print_hits(question, hits, as_json, with_repo=False):
    """Hits as the tutorial prints them, or as one JSON object."""
    if as_json:
        emit_json({'query': question, 'results': [hit_json(hit) for hit in hits]})
    else:
        print(format_hits(hits, with_repo))


def report_skipped(skipped):
    """One stderr line per skipped file, then a count."""
    for item in skipped:
        print(f"{item['path']}:{item['line']}: {item['reason']}", file=sys.stderr)
    if skipped:
        print(f'skipped {len(skipped)} file(s)', file=sys.stderr)


def warn(message):
    print(f'{program_name()}: warning: {one_line(message)}', file=sys.stderr)


LINE_BREAK_ESCAPES = str.maketrans({'\n': '\\n', '\r': '\\r', '\u2028': '\\u2028',
                                    '\u2029': '\\u2029'})   # the rest: Printable


def one_line(message):
    """A message as one line: a line break that a path or a value in it holds is shown
    escaped, as \\n."""
    return str(message).translate(LINE_BREAK_ESCAPES)


@contextlib.contextmanager
def progress_line():
    """Yield report(done, total), which keeps one progress line up to date on a
    terminal's stderr (None elsewhere); the line is erased when the block ends."""
    if not sys.stderr.isatty():
        yield None
        return
    started, shown = time.monotonic(), [0.0]
    terminal = getattr(sys.stderr, 'terminal', sys.stderr)     # under Printable: its own \r

    def report(done, total):
        now = time.monotonic()
        if now - shown[0] >= PROGRESS_INTERVAL or done == total:
            shown[0] = now
            rate = done / max(now - started, 1e-6)
            print(f'\rindexing {done}/{total} files ({rate:.0f} files/s)', end='',
                  file=terminal, flush=True)
    try:
        yield report
    finally:
        print('\r\033[K', end='', file=terminal, flush=True)


CONTROL_CHARACTER = re.compile('[\x00-\x08\x0b-\x1f\x7f-\x9f]')     # all but tab and newline


def text_width(text):
    """The columns text takes on a terminal: two for a wide (East Asian) character, none
    for a combining mark, and for a control character the six of the escape Printable
    writes, so that ls and repos keep their columns with Korean or odd names."""
    return sum(6 if CONTROL_CHARACTER.match(character) else
               2 if unicodedata.east_asian_width(character) in 'WF' else
               0 if unicodedata.combining(character) else 1 for character in text)


def padded(text, width):
    """text and the spaces that make it width columns wide (text_width)."""
    return text + ' ' * (width - text_width(text))


class Printable:
    """A text stream that writes control characters as \\uXXXX escapes, so that no file
    name or line can move the cursor, recolour or retitle the terminal it is printed on.
    JSON stays valid and means the same: the escape is JSON's own."""

    def __init__(self, terminal):
        self.terminal = terminal

    def write(self, text):
        text = CONTROL_CHARACTER.sub(lambda match: f'\\u{ord(match.group()):04x}', text)
        with output_errors(self.terminal):
            try:
                return self.terminal.write(text)
            except UnicodeEncodeError:          # a terminal that cannot show Korean: escapes
                encoding = self.terminal.encoding or 'ascii'
                return self.terminal.write(
                    text.encode(encoding, 'backslashreplace').decode(encoding))

    def flush(self):
        if self.terminal is not None:           # nothing was written to a closed stream
            with output_errors(self.terminal):
                self.terminal.flush()

    def __getattr__(self, name):        # isatty, fileno, buffer: the stream's own
        if self.terminal is None:
            raise AttributeError(name)
        return getattr(self.terminal, name)


@contextlib.contextmanager
def output_errors(stream):
    """Turn a failed write (a full disk, a stream closed with >&-) into one error line and
    exit status 1; a reader that went away (BrokenPipeError) is main's to handle."""
    if stream is None:
        raise IndexProblem('cannot write the output: it is closed', 1)
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as error:
        raise IndexProblem(f'cannot write the output: {error.strerror or error}', 1) from None


@contextlib.contextmanager
def printable_output():
    """While the block runs, stdout and stderr write through Printable (a closed stderr
    through nothing: there is no one to tell)."""
    streams = sys.stdout, sys.stderr
    sys.stdout = Printable(sys.stdout)
    sys.stderr = Printable(sys.stderr) if sys.stderr is not None else io.StringIO()
    try:
        yield
    finally:
        sys.stdout, sys.stderr = streams


# --- MCP server: the same look-ups for coding agents, over stdio ----------------------
# JSON-RPC 2.0, one message a line on stdin and stdout; logs go to stderr.  Read-only:
# every path is resolved inside the indexed root, and nothing indexed is ever run.

MCP_VERSIONS = ('2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05')   # newest first
MCP_BATCH_VERSIONS = ('2025-03-26', '2024-11-05')   # take JSON-RPC batches; no structuredContent
CUT_MARK = '\n... [truncated]'   # ends a code text cut to the budget
TRUNCATED_NOTE = '\n\n[output truncated to max_chars]'
MCP_INSTRUCTIONS = (
    'Read a code base (Python, JavaScript, TypeScript, Java, Kotlin, Go, Rust, and other '
    'text files) without running it. Exact tools first: explain_traceback for any stack '
    'trace or log with one (every frame with its code); grep_code for an identifier, an '
    'error message or any exact text (every occurrence, with the definition around '
    'it); find_symbol when you know a name (Invoice.total_with_tax or total_with_tax); '
    'locate for the function around path:line; read_file for lines by number (the '
    'numbers every tool gives); list_files and file_outline to see what is where. Use '
    'search_code for a question in English or Korean when you do not know the words '
    'the code uses. Results give path, lines, symbol, language, revision (SHA-256 '
    'prefix) and text; stale=true means the file changed since indexing (gone=true: '
    'deleted): run code_search.py index again. Long results say how to get the rest.')


def integer_schema(description, minimum=1, maximum=None):
    schema = {'type': 'integer', 'minimum': minimum, 'description': description}
    if maximum:
        schema['maximum'] = maximum
    return schema


BUDGET = {'max_chars': integer_schema(
    f'most characters of code to return (default {MCP_DEFAULT_MAX_CHARS})', 200, 200000),
    'repo': {'type': 'string', 'description': 'only the repository with this label, when '
             'several are served (a path may also be written REPO:path)'}}
MCP_TOOLS = {
    'search_code': ('Rank definitions, module code and text windows for a question.', {
        'query': {'type': 'string', 'minLength': 1, 'maxLength': QUESTION_LIMIT,
                  'pattern': r'\S', 'description': 'question or identifier'},
        'top_k': integer_schema(f'how many results (default {MCP_TOP_K})', 1, MCP_TOP_K_LIMIT),
        'path_prefix': {'type': 'string', 'description': 'only files under this folder or '
                        'matching this glob, as --path takes it; comma-separated globs'},
        'language': {'type': 'string', 'description': 'only files in this language '
                     '(python, java, go, ...); comma-separated for several'},
        'explain': {'type': 'boolean', 'description': 'also say what each question word '
                    'and field gave each hit (default false)'},
        **BUDGET}, ['query']),
    'find_symbol': ('Definitions by name (Invoice.total, Vec::push, List#add, '
                    '(*Server).Serve): exact, dotted suffix, case-insensitive, the anonymous '
                    'default export of a JS/TS file of that name, then package-qualified '
                    '(java.util.ArrayList.get), then as a package re-exports it '
                    '(asyncio.gather).', {
        'name': {'type': 'string', 'minLength': 1, 'pattern': r'\S'}, **BUDGET}, ['name']),
    'locate': ('The innermost function or class holding a line of a file.', {
        'path': {'type': 'string', 'minLength': 1, 'description': 'relative to the root'},
        'line': integer_schema('1-based line number'), **BUDGET}, ['path', 'line']),
    'explain_traceback': ('The indexed code behind each frame of a stack trace: Python, '
                          'Java, Kotlin, Go, Node.js, Rust or .NET, also inside a longer log '
                          '(a trace it holds again is shown once, with its count).', {
        'traceback': {'type': 'string', 'minLength': 1, 'maxLength': TRACE_LIMIT},
        **BUDGET}, ['traceback']),
    'file_outline': ('The definitions of a file, or of the files under a folder, in line '
                     'order, with their kinds and lines.', {
        'path': {'type': 'string', 'minLength': 1,
                 'description': 'a file or folder relative to the root (. for all)'},
        **BUDGET}, ['path']),
    'grep_code': ('Every line that matches a regular expression (or, with fixed, a literal '
                  'string), in path order, each with the definition that holds it: the '
                  'exact tool for identifiers and error messages.', {
        'pattern': {'type': 'string', 'minLength': 1, 'description': 'a Python regular '
                    'expression, or a literal string with fixed'},
        'fixed': {'type': 'boolean', 'description': 'take pattern literally'},
        'ignore_case': {'type': 'boolean'},
        'path_glob': {'type': 'string', 'description': 'only files under this folder or '
                      'matching this glob, as --path takes it; comma-separated globs'},
        'context': integer_schema('lines to show around each match', 0, 20),
        'max_results': integer_schema(f'most matches to return (default {MCP_GREP_RESULTS})',
                                      1, 2000),
        'offset': integer_schema('matches to pass over: the next_offset of a cut result', 0),
        **BUDGET}, ['pattern']),
    'read_file': ('Lines start..end (1-based, inclusive) of an indexed file with their '
                  'numbers: the line numbers every other tool gives.', {
        'path': {'type': 'string', 'minLength': 1, 'description': 'relative to the root'},
        'start': integer_schema('first line (default 1)'),
        'end': integer_schema('last line (default: the last)'), **BUDGET}, ['path']),
    'list_files': ('The indexed folders and files under a folder, with each file\'s language '
                   'and chunks and each folder\'s files.', {
        'path': {'type': 'string', 'description': 'a folder relative to the root (default: '
                 'the root), or one file'},
        'depth': integer_schema('levels to list (default 1)', 1, 20), **BUDGET}, []),
    'index_status': ('What the index holds: root, files, chunks, skipped, when.',
                     {'repo': BUDGET['repo']}, []),
}


def mcp_tool_list():
    return [{'name': name, 'title': name.replace('_', ' ').capitalize(),
             'description': description,
             'inputSchema': {'type': 'object', 'properties': properties,
                             'required': required, 'additionalProperties': False},
             'annotations': {'readOnlyHint': True, 'openWorldHint': False}}
            for name, (description, properties, required) in MCP_TOOLS.items()]


def whole_numbers(name, arguments):
    """The arguments with whole floats (3.0) given for integers as ints, as JSON Schema's
    integer allows them."""
    properties = MCP_TOOLS[name][1]
    return {key: int(value) if properties.get(key, {}).get('type') == 'integer'
            and type(value) is float and value.is_integer() else value
            for key, value in arguments.items()}


def argument_problems(name, arguments):
    """Check tool arguments against the small schema subset MCP_TOOLS uses."""
    _, properties, required = MCP_TOOLS[name]
    problems = [f'missing argument {key!r}' for key in required if key not in arguments]
    for key, value in arguments.items():
        spec = properties.get(key)
        if spec is None:
            problems.append(f'unexpected argument {key!r}')
        elif spec['type'] == 'string' and not (isinstance(value, str)
                                               and len(value) >= spec.get('minLength', 0)):
            problems.append(f'{key!r} must be a non-empty string')
        elif spec['type'] == 'string' and len(value) > spec.get('maxLength', len(value)):
            problems.append(f"{key!r} must be at most {spec['maxLength']} characters")
        elif spec['type'] == 'string' and not re.search(spec.get('pattern', ''), value):
            problems.append(f'{key!r} must not be only spaces')
        elif spec['type'] == 'boolean' and not isinstance(value, bool):
            problems.append(f'{key!r} must be true or false')
        elif spec['type'] == 'integer' and (type(value) is not int
                                            or value < spec.get('minimum', value)
                                            or value > spec.get('maximum', value)):
            problems.append(f"{key!r} must be a whole number from {spec.get('minimum')}"
                            + (f" to {spec['maximum']}" if 'maximum' in spec else ''))
    return problems


def cut_texts(entries, max_chars):
    """Cut the entries' 'text' in place to a total of max_chars (emptied past it);
    whether anything was cut."""
    used, cut = 0, False
    for entry in entries:
        room = max(max_chars - used, 0)
        if len(entry['text'] or '') > room:
            entry['text'] = entry['text'][:room - len(CUT_MARK)] + CUT_MARK \
                if room > len(CUT_MARK) else ''
            entry['truncated'] = cut = True
        used += len(entry['text'] or '')
    return cut


def fit(text, budget):
    """text, or as much of it as fits in budget with TRUNCATED_NOTE saying it was cut."""
    if len(text) <= budget:
        return text
    return text[:max(budget - len(TRUNCATED_NOTE), 0)] + TRUNCATED_NOTE


def json_size(entry):
    """The length of an entry as MCP sends it, in JSON."""
    return len(json.dumps(entry, ensure_ascii=False))


def frame_size(frame):
    """A trace frame's JSON size without its code's text (cut_texts bounds that)."""
    chunk = frame['chunk']
    return json_size(dict(frame, chunk=chunk and dict(chunk, text='')))


def cut_entries(groups, key, max_chars, size=json_size):
    """Keep, in place, the leading groups (an outline's files, a trace's exceptions) and
    entries of their lists under key ('chunks', 'frames') whose sizes, with each group's
    own, add up to max_chars (the first group is always kept); whether any were left
    out."""
    used = 0
    for number, group in enumerate(groups):
        used += json_size(dict(group, **{key: []}))
        if used > max_chars and number:
            del groups[number:]
            return True
        kept = []
        for entry in group[key]:
            used += size(entry)
            if used > max_chars:
                group[key] = kept
                del groups[number + 1:]
                return True
            kept.append(entry)
    return False


def budgeted(hits, max_chars, with_repo=False):
    """Hits in the shapes --json prints, for a text answer (hits_as_text) of at most
    max_chars: all of them when they fit; else those that fit with TRUNCATED_NOTE, the
    last one's code cut (and the first one's --explain lines left out when its heading
    would not fit with them).  Returns (results, truncated)."""
    results = [hit_json(hit) for hit in hits]
    if len(hits_as_text(results, False, with_repo)) <= max_chars:
        return results, False
    room, kept = max_chars - len(TRUNCATED_NOTE), []
    for entry in results:
        if not kept and len(hit_heading(entry, with_repo)) + 2 + len(CUT_MARK) >= room:
            entry.pop('explain', None)      # the first hit comes, if need be without them
        room -= len(hit_heading(entry, with_repo)) + 2          # and the blank line
        if room <= len(CUT_MARK):
            break
        if len(entry['text'] or '') > room:
            entry.update(text=entry['text'][:room - len(CUT_MARK)] + CUT_MARK, truncated=True)
            kept.append(entry)
            break
        room -= len(entry['text'] or '')
        kept.append(entry)
    return kept, True


def hit_heading(result, with_repo=False):
    """A hit's lines before its code in MCP's text: where it is, then --explain's lines."""
    return (f"[{result['id']}] {result['repo'] + ':' if with_repo else ''}{result['path']}:"
            f"{result['start']}-{result['end']} {result['symbol']}"
            f"{'  [stale]' if result['stale'] else ''}\n{format_explain(result.get('explain'))}")


def hits_as_text(results, truncated, with_repo=False):
    if not results:
        return TRUNCATED_NOTE.strip() if truncated else 'no results'
    text = '\n\n'.join(hit_heading(r, with_repo) + (r['text'] or '') for r in results)
    return text + (TRUNCATED_NOTE if truncated else '')


def mcp_call(repos, name, arguments):
    """Run one tool on the searchable repos -> (text, structured); raises LookupError."""
    budget = arguments.get('max_chars', MCP_DEFAULT_MAX_CHARS)
    if arguments.get('repo'):
        repos = [repo for repo in repos if repo.label == arguments['repo']]
        if not repos:
            raise LookupError(f"no repository labelled {arguments['repo']!r}")
    with_repo = len(repos) > 1
    if name == 'search_code':
        globs = [arguments['path_prefix']] if arguments.get('path_prefix') else []
        if '..' in re.split(r'[/,]', ''.join(globs)):
            raise LookupError(f'path is outside the root: {globs[0]}')
        languages = [known_language(name) for name in split_globs([arguments.get('language', '')])]
        hits = answer_question(repos, arguments['query'], arguments.get('top_k', MCP_TOP_K),
                               globs, languages, bool(arguments.get('explain')))
    elif name == 'find_symbol':
        hits = texts_of(repos, symbol_in_repos(repos, arguments['name']))
    elif name == 'locate':              # a line between definitions: result null, as at's
        hit = located(repos, arguments['path'], arguments['line'])
        hits = [hit] if hit else []
    elif name == 'explain_traceback':
        explained = explain_traceback(repos, arguments['traceback'])
        if not any(block['frames'] for block in explained):
            raise ValueError('no stack trace frames found in the text')
        text = format_traceback(explained, False, with_repo)
        structured = traceback_json(explained)
        chunks = [frame['chunk'] for block in structured['exceptions']
                  for frame in block['frames'] if frame['chunk']]
        truncated = cut_texts(chunks, budget) | (len(text) > budget) \
            | cut_entries(structured['exceptions'], 'frames', budget, frame_size)
        return fit(text, budget), dict(structured, truncated=truncated)
    elif name in ('grep_code', 'read_file', 'list_files'):
        return {'grep_code': mcp_grep, 'read_file': mcp_read,
                'list_files': mcp_list}[name](repos, arguments, budget)
    elif name == 'file_outline':
        path = arguments['path']
        found = outline_repos(repos, [] if path.strip('/') in ('', '.') else [path])
        text = format_outline(found, with_repo)
        truncated = cut_entries(found['files'], 'chunks', budget) | (len(text) > budget)
        return fit(text, budget), dict(found, truncated=truncated)
    else:
        statuses = [dict(index_status(repo.index, repo.index.get('source', '')),
                         repo=repo.label) for repo in repos]
        for status in statuses:
            status['skipped'] = status['skipped'][:MCP_SKIPPED_SHOWN]
        status = statuses[0] if len(statuses) == 1 else {'repos': statuses}
        return json.dumps(status, ensure_ascii=False, indent=2), status
    notes = ''.join(f'\n[path_prefix {glob!r} matches no indexed file]' for glob in
                    unmatched_globs([relative for repo in repos
                                     for relative in repo.index['files']], globs)) \
        if name == 'search_code' else ''
    results, truncated = budgeted(hits, budget - len(notes), with_repo)   # --json's shapes
    text = hits_as_text(results, truncated, with_repo) + notes
    truncated |= len(text) > budget
    text = fit(text, budget)
    if name == 'locate':
        if not hits:
            text = f"{arguments['path']}:{arguments['line']}: no indexed function holds this line"
        return text, {'path': arguments['path'], 'line': arguments['line'],
                      'result': dict(results[0], line=arguments['line']) if results else None,
                      'truncated': truncated}
    if name == 'search_code':
        return text, {'query': arguments['query'], 'results': results, 'truncated': truncated}
    return text, {'name': arguments['name'], 'results': results, 'truncated': truncated}


def mcp_grep(repos, arguments, budget):
    """grep_code: matches in the text budget, and where the next page starts."""
    globs = split_globs([arguments.get('path_glob', '')])
    if '..' in re.split(r'[/,]', ''.join(globs)):
        raise LookupError(f"path is outside the root: {arguments['path_glob']}")
    sets = [index_files(repo.index, repo.label) for repo in repos]
    offset = arguments.get('offset', 0)
    query = GrepQuery(arguments['pattern'], arguments.get('fixed', False),
                      arguments.get('ignore_case', False), False, tuple(globs), (), 0,
                      arguments.get('max_results', MCP_GREP_RESULTS), offset)
    result = grep(sets, query)
    by_label = {files.label: files for files in sets}
    lines = functools.lru_cache(maxsize=64)(
        lambda label, path: file_lines(by_label[label], path)[0])
    context, with_repo = arguments.get('context', 0), len(repos) > 1
    matches = result['matches']
    text = format_grep(result, lines, context, False, with_repo)
    if len(text) > budget or 'next_offset' in result:         # a note follows: room for it
        room, kept = budget - MCP_NOTE_ROOM, len(matches)
        while kept > 1 and len(text) > room:
            kept = max(min(kept - 1, kept * room // len(text)), 1)
            text = format_grep(dict(result, matches=matches[:kept]), lines, context, False,
                               with_repo)
        shown = matches[:kept]
        if len(text) > room and context:        # one match and its context longer than the
            text = format_grep(dict(result, matches=shown), lines, 0, False, with_repo)
        if len(text) > room:                    # budget: the match alone, or its start
            text = text[:room] + ('' if len(matches) > 1 or 'next_offset' in result else
                                  '\n[match cut to fit: a larger max_chars shows all of it]')
            shown = [dict(matches[0], text=matches[0]['text'][:room], truncated=True)]
        result = dict(result, matches=shown, truncated=result['truncated'] or
                      any(match.get('truncated') for match in shown))
        if kept < len(matches):
            result.update(truncated=True, next_offset=offset + kept)
    if 'next_offset' in result:
        text += (f"\n[cut after {len(result['matches'])} matches: call grep_code again with "
                 f"offset={result['next_offset']} for the rest]")
    return text or 'no matches', result


def mcp_read(repos, arguments, budget):
    """read_file: the lines that fit the budget, and the next start when cut."""
    repo, path = repo_path(repos, arguments['path'])
    result = dict(read_lines(index_files(repo.index, repo.label), path,
                             arguments.get('start', 1), arguments.get('end')), repo=repo.label,
                  truncated=False)
    lines = result['text'].split('\n') if result['total_lines'] else []
    width = len(str(result['end'])) + 4                             # 'N | ' and the line end
    room = budget if sum(len(line) + width for line in lines) <= budget else \
        budget - MCP_NOTE_ROOM                                      # then a note follows
    kept, used = 0, 0
    for line in lines:
        used += len(line) + width
        if used > room:
            break
        kept += 1
    line_cut = not kept and bool(lines)
    if kept < len(lines):
        if line_cut:                    # a line longer than the budget: as much as fits
            lines[0], kept = lines[0][:room - width], 1
        end = result['start'] + kept - 1
        result = dict(result, end=end, text='\n'.join(lines[:kept]), truncated=True)
        if end < result['total_lines']:
            result['next_start'] = end + 1
    text = format_read(result)
    if line_cut:                        # no start reads the rest of that line
        text += (f"\n[line {result['end']} cut to fit: a larger max_chars shows all of it"
                 + (f"; start={result['next_start']} reads on]" if 'next_start' in result
                    else ']'))
    elif result.get('truncated'):
        text += (f"\n[cut at line {result['end']} of {result['total_lines']}: call read_file "
                 f"with start={result['next_start']} for the rest]")
    return text or f"{result['path']} is empty", result


def mcp_list(repos, arguments, budget):
    """list_files: the entries that fit the budget."""
    listing = list_repos(repos, arguments.get('path', ''), arguments.get('depth', 1))
    text, entries = format_listing(listing), listing['entries']
    kept = len(entries)
    room = budget if len(text) <= budget else budget - MCP_NOTE_ROOM    # then a note follows
    while kept and len(text) > room:
        kept = min(kept - 1, kept * room // len(text))
        text = format_listing(dict(listing, entries=entries[:kept]))
    listing = dict(listing, entries=entries[:kept], truncated=kept < len(entries))
    if listing['truncated']:
        text += (f'\n[cut after {kept} of {len(entries)} entries: list a subfolder (path) '
                 f'or a smaller depth]')
    return text or 'nothing indexed here', listing


def valid_id(value):
    """Whether a JSON-RPC id is one this server answers with: a string or an integer."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def mcp_response(message, state):
    """Answer one JSON-RPC message (None for notifications); state holds the session."""
    if not isinstance(message, dict) or message.get('jsonrpc') != '2.0' \
            or not isinstance(message.get('method'), str):
        if isinstance(message, dict) and 'method' not in message \
                and ('result' in message or 'error' in message):
            return None                 # a client's response (an invalid notification,
                                        # {"method": 1}, is answered, as JSON-RPC says)
        known = message.get('id') if isinstance(message, dict) else None
        return rpc_error(known if valid_id(known) else None, -32600, 'Invalid Request')
    method, params = message['method'], message.get('params', {})
    if 'id' not in message:                       # a notification is never answered
        return None
    request_id = message['id']
    if not valid_id(request_id):
        return rpc_error(None, -32600, 'Invalid Request: id must be a string or integer')
    if params is not None and not isinstance(params, dict):
        return rpc_error(request_id, -32602, 'Invalid params: params must be an object')
    params = params or {}
    if method == 'initialize':
        asked = params.get('protocolVersion')
        state['version'] = asked if asked in MCP_VERSIONS else MCP_VERSIONS[0]
        result = {'protocolVersion': state['version'],
                  'capabilities': {'tools': {'listChanged': False}},
                  'serverInfo': {'name': 'code-search', 'version': __version__},
                  'instructions': MCP_INSTRUCTIONS}
    elif method == 'ping':
        result = {}
    elif method == 'tools/list':
        result = {'tools': mcp_tool_list()}
    elif method == 'tools/call':
        name, arguments = params.get('name'), params.get('arguments', {})
        if not isinstance(name, str):
            return rpc_error(request_id, -32602, 'Invalid params: the tool to call needs a '
                                                 'name, a string')
        if name not in MCP_TOOLS:
            return rpc_error(request_id, -32602, f'Unknown tool: {name}')
        if arguments is not None and not isinstance(arguments, dict):
            return rpc_error(request_id, -32602, 'Invalid params: arguments must be an object')
        arguments = whole_numbers(name, arguments or {})
        problems = argument_problems(name, arguments)
        if problems and state.get('version') in ('2025-06-18', '2025-03-26', '2024-11-05'):
            return rpc_error(request_id, -32602, f'Invalid arguments: {"; ".join(problems)}')
        result = mcp_tool_result(state, name, arguments, problems)
    else:
        return rpc_error(request_id, -32601, f'Method not found: {method}')
    return {'jsonrpc': '2.0', 'id': request_id, 'result': result}


def mcp_tool_result(state, name, arguments, problems):
    """A tools/call result; failures are results with isError true, never a crash."""
    try:
        if problems:
            raise ValueError(f'invalid arguments: {"; ".join(problems)}')
        text, structured = mcp_call(state['load'](arguments.get('repo')), name, arguments)
    except (ValueError, LookupError, IndexProblem) as error:
        return {'content': [{'type': 'text', 'text': str(error)}], 'isError': True}
    except Exception as error:                  # keep serving whatever one call does
        print(f'code_search mcp: {name} failed: {error!r}', file=sys.stderr)
        return {'content': [{'type': 'text', 'text': f'internal error: {error!r}'}],
                'isError': True}
    result = {'content': [{'type': 'text', 'text': text}], 'isError': False}
    if state.get('version') not in MCP_BATCH_VERSIONS:
        result['structuredContent'] = structured
    return result


def rpc_error(request_id, code, message):
    return {'jsonrpc': '2.0', 'id': request_id, 'error': {'code': code, 'message': message}}


def index_loader(path):
    """Load the index file again whenever it is replaced, so a rebuild needs no restart."""
    cache = {}

    def load():
        try:
            info = os.stat(path)
        except OSError:
            info = None
        key = info and (info.st_ino, info.st_mtime_ns, info.st_size)
        if cache.get('key') != key or 'index' not in cache:
            index = open_index_file(path)
            index['source'] = str(path)
            cache.update(key=key, index=index)
        return cache['index']
    return load


def repos_loader(specs):
    """load(label=None) -> the repos of --index values, each index loaded again whenever
    it is replaced on disk; given the label of an --index NAME=FILE, only that one, so
    that a request for one repository is answered while another's index is damaged."""
    loaders = {}

    def load_one(path):
        if path not in loaders:
            loaders[path] = index_loader(path)
        return loaders[path]()

    def load(label=None):
        named = [spec for spec in specs if label and parse_index_spec(spec)[0] == label]
        return open_repos(named or specs, load_one)
    return load


def serve_mcp(load, stdin, stdout):
    """The stdio loop: read a line, answer it, until stdin closes."""
    state = {'load': load, 'version': None}
    while True:
        raw = stdin.readline(MCP_MESSAGE_LIMIT + 2)
        if not raw:
            return 0
        if len(raw.rstrip(b'\r\n')) > MCP_MESSAGE_LIMIT:      # read no more of it than this
            while raw and not raw.endswith(b'\n'):
                raw = stdin.readline(READ_PIECE)
            write_message(stdout, rpc_error(None, -32600, 'Invalid Request: a message '
                                                          f'over {MCP_MESSAGE_LIMIT} bytes'))
            continue
        try:
            message = json.loads(raw.decode('utf-8'))
        except (ValueError, UnicodeDecodeError, RecursionError):
            if raw.strip():
                write_message(stdout, rpc_error(None, -32700, 'Parse error'))
            continue
        if isinstance(message, list):
            if state['version'] in MCP_BATCH_VERSIONS and message:
                replies = [r for r in (batched_answer(m, state) for m in message) if r]
                if replies:
                    write_message(stdout, replies)
            else:
                write_message(stdout, rpc_error(None, -32600, 'Invalid Request: no batches'))
            continue
        reply = mcp_answer(message, state)
        if reply is not None:
            write_message(stdout, reply)


def batched_answer(message, state):
    """mcp_answer for one message of a batch, where initialize must not be (2025-03-26)."""
    if isinstance(message, dict) and message.get('method') == 'initialize':
        known = message.get('id')
        return rpc_error(known if valid_id(known) else None, -32600,
                         'Invalid Request: initialize cannot be part of a batch')
    return mcp_answer(message, state)


def mcp_answer(message, state):
    """mcp_response, with a bug of ours answered as JSON-RPC's internal error (-32603)
    and one stderr line: the session goes on."""
    try:
        return mcp_response(message, state)
    except Exception as error:
        print(f'code_search mcp: internal error: {error!r}', file=sys.stderr)
        known = message.get('id') if isinstance(message, dict) else None
        return rpc_error(known if valid_id(known) else None, -32603, f'Internal error: {error!r}')


def write_message(stdout, message):
    with output_errors(stdout):
        stdout.write(json.dumps(message, ensure_ascii=False).encode('utf-8', 'replace') + b'\n')
        stdout.flush()


# --- Web server: a local page and a JSON API ---------------------------------------------
# `serve` answers the same look-ups over HTTP, in the shapes --json prints, and serves
# one page (PAGE_HTML, at the end of the file) that uses them.  It binds to 127.0.0.1
# unless told otherwise, refuses Host headers of other names there (DNS rebinding), caps
# query strings and bodies, gives slow clients SERVE_CLIENT_TIMEOUT seconds, and reads
# an index again when it is replaced on disk.  The server's parts are notes_search's.

class ApiError(Exception):
    """A request the API refuses: its HTTP status and a one-line reason."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def api_params(query):
    """{name: [values]} of a URL's query string; ApiError when it is too long."""
    import urllib.parse             # only the server needs it: other commands start faster
    if len(query) > API_QUERY_LIMIT:
        raise ApiError(414, f'query string longer than {API_QUERY_LIMIT} characters')
    try:
        return urllib.parse.parse_qs(query, keep_blank_values=True, strict_parsing=False,
                                     max_num_fields=API_FIELDS_LIMIT, errors='strict')
    except ValueError as error:                     # also %ff, which is no UTF-8
        raise ApiError(400, f'bad query string: {error}') from None


FLAG_WORDS = {'1': True, 'true': True, 'yes': True, 'on': True,
              '0': False, 'false': False, 'no': False, 'off': False}


def api_value(params, name, kind='text', default=None, low=1, high=None):
    """One parameter given once: text (required when default is None), a question (text
    not only spaces), a whole number from low to high, or a flag (1, true, yes, on; 0,
    false, no, off); ApiError(400) otherwise."""
    values = params.get(name)
    if values and len(values) > 1:
        raise ApiError(400, f'parameter {name!r} is given more than once')
    if not values or values[-1] == '':
        if default is None:
            raise ApiError(400, f'missing parameter {name!r}')
        return default
    value = values[-1]
    if kind == 'question' and not value.strip():
        raise ApiError(400, f'parameter {name!r} is empty')
    if kind == 'flag':
        if value.lower() not in FLAG_WORDS:
            raise ApiError(400, f"parameter {name!r} must be one of "
                                + ', '.join(FLAG_WORDS))
        return FLAG_WORDS[value.lower()]
    if kind == 'number':
        if not re.fullmatch(r'[0-9]{1,9}', value) or int(value) < low or \
                (high is not None and int(value) > high):
            raise ApiError(400, f"parameter {name!r} must be a whole number from {low}"
                                + (f' to {high}' if high is not None else ''))
        return int(value)
    return value


def api_answer(load, method, target, body):
    """(status, content type, body bytes) of one request to the API or the page."""
    path, _, query = target.partition('?')
    try:
        if path == '/' and method in ('GET', 'HEAD'):
            return 200, 'text/html; charset=utf-8', PAGE_HTML.encode('utf-8')
        if path == '/':
            raise ApiError(405, '/ takes GET')
        route = API_ROUTES.get(path)
        if route is None:
            raise ApiError(404, f'not found: {path}')
        if method != route[0] and (method, route[0]) != ('HEAD', 'GET'):
            raise ApiError(405, f'{path} takes {route[0]}')
        params = api_params(query)
        document = route[1](load((params.get('repo') or [None])[-1]), params, body)
        status = 200
    except ApiError as error:
        status, document = error.status, {'error': str(error)}
    except (LookupError, ValueError) as error:
        status, document = 400, {'error': str(error.args[0] if error.args else error)}
    except IndexProblem as problem:
        status, document = 503, {'error': str(problem)}
    return status, 'application/json; charset=utf-8', \
        json.dumps(document, ensure_ascii=False).encode('utf-8', 'replace')


def api_repos(repos, params):
    """The repos a request chose (repo=LABEL), or all of them."""
    label = api_value(params, 'repo', default='')
    if not label:
        return repos
    chosen = [repo for repo in repos if repo.label == label]
    if not chosen:
        raise ApiError(400, f'no repository labelled {label!r}')
    return chosen


def api_search(repos, params, body):
    repos = api_repos(repos, params)
    question = api_value(params, 'q', 'question')
    globs = params.get('path', [])
    languages = [known_language(name) for name in params.get('lang', []) if name]
    top_k = api_value(params, 'top_k', 'number', API_TOP_K, 1, API_TOP_K_LIMIT)
    hits = answer_question(repos, question, top_k, globs, languages,
                           api_value(params, 'explain', 'flag', False))
    return {'query': question, 'results': [hit_json(hit) for hit in hits]}


def api_symbol(repos, params, body):
    repos = api_repos(repos, params)
    name = api_value(params, 'name', 'question')
    return {'name': name, 'results': [hit_json(hit) for hit in
                                      texts_of(repos, symbol_in_repos(repos, name))]}


def api_at(repos, params, body):
    path, line = api_value(params, 'path'), api_value(params, 'line', 'number')
    hit = located(api_repos(repos, params), path, line)
    return {'path': path, 'line': line, 'result': dict(hit_json(hit), line=line) if hit else None}


def api_outline(repos, params, body):
    paths = [path for path in params.get('path', []) if path.strip('/') not in ('', '.')]
    return outline_repos(api_repos(repos, params), paths)


def api_grep(repos, params, body):
    repos = api_repos(repos, params)
    query = GrepQuery(api_value(params, 'pattern'), api_value(params, 'fixed', 'flag', False),
                      api_value(params, 'ignore_case', 'flag', False),
                      api_value(params, 'word', 'flag', False), tuple(params.get('path', [])),
                      tuple(known_language(name) for name in params.get('lang', []) if name),
                      0, api_value(params, 'max_results', 'number', API_GREP_RESULTS, 1,
                                   API_GREP_LIMIT),
                      api_value(params, 'offset', 'number', 0, 0))
    return grep([index_files(repo.index, repo.label) for repo in repos], query)


def api_read(repos, params, body):
    repo, inside = repo_path(api_repos(repos, params), api_value(params, 'path'))
    start = api_value(params, 'start', 'number', 1)
    end = api_value(params, 'end', 'number', 0) or None
    if end is not None and end < start:
        raise ApiError(400, 'end must not be before start')
    return dict(read_lines(index_files(repo.index, repo.label), inside, start, end),
                repo=repo.label)


def api_trace(repos, params, body):
    text = body.decode('utf-8', 'replace')
    return traceback_json(explain_traceback(api_repos(repos, params), text))


def api_repos_status(repos, params, body):
    rows = []
    for repo in repos:
        source = repo.index.get('source', '')
        row = repo_status({'name': repo.label, 'root': repo.index['root'], 'index': source}) \
            if os.path.isfile(source) else dict(name=repo.label, root=repo.index['root'],
                                                index=source, state='in memory')
        rows.append(dict(row, files=len(repo.index['files']), chunks=repo.index['total'],
                         indexed_at=repo.index.get('indexed_at', '')))
    return {'repos': rows}


def api_health(repos, params, body):
    languages = {record.get('language', 'python') for repo in repos
                 for record in repo.index['files'].values()}
    return {'status': 'ok', 'tool': TOOL, 'version': __version__,
            'repos': [repo.label for repo in repos], 'languages': sorted(languages)}


API_ROUTES = {
    '/api/search': ('GET', api_search), '/api/symbol': ('GET', api_symbol),
    '/api/at': ('GET', api_at), '/api/outline': ('GET', api_outline),
    '/api/grep': ('GET', api_grep), '/api/read': ('GET', api_read),
    '/api/trace': ('POST', api_trace), '/api/repos': ('GET', api_repos_status),
    '/api/health': ('GET', api_health),
}


def make_handler(answer, allowed_hosts):
    """A request handler class that answers with answer(method, target, body) and logs
    one line per request to stderr."""
    import http.server

    class Handler(http.server.BaseHTTPRequestHandler):
        timeout = SERVE_CLIENT_TIMEOUT
        server_version = f'{TOOL}/{__version__}'
        protocol_version = 'HTTP/1.0'

        def parse_request(self):     # curl sends a URL's UTF-8 as it is: as a browser
            self.raw_requestline = re.sub(            # would, percent-encode it first
                rb'[\x80-\xff]', lambda byte: b'%%%02X' % byte.group()[0], self.raw_requestline)
            return super().parse_request()

        def do_GET(self):
            self.respond(b'')

        def do_HEAD(self):
            self.respond(b'', head=True)

        def do_PUT(self):                 # any other method: 405 (or 404) with a JSON error
            self.respond(b'')

        do_DELETE = do_PATCH = do_OPTIONS = do_PUT

        def do_POST(self):
            if self.refused():                          # before a byte of the body is read
                return None
            route = API_ROUTES.get(self.path.partition('?')[0])
            if not route or route[0] != 'POST':         # 404 or 405, whatever the body
                return self.respond(b'')
            length = self.headers.get('Content-Length', '')
            if not (length.isascii() and length.isdigit()):
                return self.send(400 if length else 411, 'application/json',
                                 b'{"error": "a Content-Length of bytes is needed"}')
            if int(length) > API_BODY_LIMIT:
                if int(length) <= 4 * API_BODY_LIMIT:      # read it, so the client hears why
                    for start in range(0, int(length), 1 << 16):
                        self.rfile.read(min(1 << 16, int(length) - start))
                return self.send(413, 'application/json',
                                 f'{{"error": "body larger than {API_BODY_LIMIT} bytes"}}'
                                 .encode())
            body = self.rfile.read(int(length))
            if len(body) < int(length):
                return self.send(400, 'application/json',
                                 b'{"error": "the body is shorter than its Content-Length"}')
            self.respond(body)

        def refused(self):
            """Answer 400 to a request with two Host headers, 403 to one for another host
            name (DNS rebinding) or that another web page makes (its script or form could
            keep the server busy); whether it was."""
            hosts = self.headers.get_all('Host') or ['']
            host, site = hosts[0].strip(), self.headers.get('Sec-Fetch-Site')
            origin = self.headers.get('Origin')       # what an older browser sends instead
            if len(hosts) > 1:
                self.send(400, 'application/json', b'{"error": "a request has one Host header"}')
            elif allowed_hosts and host_name(host) not in allowed_hosts:
                self.send(403, 'application/json',
                          b'{"error": "this server answers requests for localhost only"}')
            elif self.path.startswith('/api/') and (
                    site in ('cross-site', 'same-site') if site else
                    origin is not None and origin.partition('//')[2].lower() != host.lower()):
                self.send(403, 'application/json',
                          b'{"error": "this server answers its own page, not other web pages"}')
            else:
                return False
            return True

        def respond(self, body, head=False):
            if self.refused():
                return None
            try:
                status, kind, payload = answer(self.command, self.path, body)
            except Exception as error:          # a bug answers 500, and the server goes on
                status, kind = 500, 'application/json'
                payload = json.dumps({'error': f'internal error: {error!r}'}).encode()
            self.send(status, kind, b'' if head else payload, len(payload))

        def send(self, status, kind, payload, length=None):
            self.send_response(status)
            self.send_header('Content-Type', kind)
            self.send_header('Content-Length', str(len(payload) if length is None else length))
            self.send_header('Cache-Control', 'no-store')
            self.send_header('X-Content-Type-Options', 'nosniff')
            self.send_header('Referrer-Policy', 'no-referrer')
            self.send_header('Content-Security-Policy', PAGE_POLICY)
            if status == 405:
                route = API_ROUTES.get(self.path.partition('?')[0])
                self.send_header('Allow', 'POST' if route and route[0] == 'POST'
                                 else 'GET, HEAD')
            self.end_headers()
            self.wfile.write(payload)

        def send_error(self, code, message=None, explain=None):
            """http.server's own refusals (a request line or headers too long, a bad
            version, a method with no do_ method, which is 405) as the API's: JSON."""
            code = 405 if code == 501 else code
            self.close_connection, self.request_version = True, 'HTTP/1.0'   # with headers
            payload = json.dumps({'error': message or f'error {code}'}).encode()
            self.send(code, 'application/json', b'' if self.command == 'HEAD' else payload,
                      len(payload))

        def log_message(self, format, *args):     # one write: threads' lines never mix
            sys.stderr.write(f'{self.address_string()} {format % args}\n')
            sys.stderr.flush()

    return Handler


def host_name(header):
    """The host a Host header names, lower case, without its port or IPv6 brackets."""
    header = header.strip().lower()
    return header[1:].partition(']')[0] if header.startswith('[') else header.partition(':')[0]


def is_loopback(host):
    """Whether a host to serve on is this machine only: localhost, 127.0.0.0/8 or ::1."""
    import ipaddress
    try:
        return host.lower() == 'localhost' or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def request_failed(server, request, client_address):
    """The server's handle_error: a request that failed outside its answer (the client
    reset the connection, or stopped reading) is one line on stderr, not a traceback."""
    error = sys.exc_info()[1]
    sys.stderr.write(f'{client_address[0]} request not completed: '
                     f'{type(error).__name__}: {error}\n')
    sys.stderr.flush()


def serve_http(answer, host, port):
    """Serve answer(method, target, body) on host:port until Ctrl-C; port 0 picks a free
    one.  The address goes to stderr once the server listens.  Threads read requests and
    send replies; the answers are worked out here on the main thread, one at a time,
    where Ctrl-C is heard at once and a signal can stop a long one (code_search's grep
    time limit)."""
    import http.server
    import queue
    import socket
    import threading
    loopback = is_loopback(host)
    allowed = {'127.0.0.1', 'localhost', '::1', host.lower()} if loopback else set()
    if not loopback:
        warn(f'serving on {host}: anyone who can reach it can read the indexed files')
    requests = queue.Queue()

    def answer_on_main(method, target, body):
        """What a request thread calls: the main thread's answer, or its exception."""
        reply = queue.Queue(maxsize=1)
        requests.put(((method, target, body), reply))
        answered, error = reply.get()
        if error is not None:
            raise error
        return answered

    server_class = type('Server', (http.server.ThreadingHTTPServer,), {
        'address_family': socket.AF_INET6 if ':' in host else socket.AF_INET,
        'daemon_threads': True, 'handle_error': request_failed})
    try:
        server = server_class((host, port), make_handler(answer_on_main, allowed))
    except OSError as error:
        raise IndexProblem(f'cannot listen on {host}:{port}: {error.strerror}') from None
    shown = f'[{host}]' if ':' in host else host
    print(f'{program_name()} serve: http://{shown}:{server.server_address[1]}/',
          file=sys.stderr, flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        while True:
            try:
                request, reply = requests.get(timeout=0.5)    # Windows hears Ctrl-C only so
            except queue.Empty:
                continue
            try:
                reply.put((answer(*request), None))
            except Exception as error:      # the request's thread reports it, as it did
                reply.put((None, error))
    finally:
        server.server_close()


# --- Command line ------------------------------------------------------------------------
# The parser, argument checks, signals and main() have notes_search's shape.

SUBCOMMANDS = ('index', 'search', 'symbol', 'at', 'trace', 'outline', 'grep', 'read', 'ls',
               'repos', 'mcp', 'serve')


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports misuse as one line and exit status 2."""

    def error(self, message):
        if message.startswith('the following arguments are required') \
                and message.rpartition(' ')[2] in ('question', 'pattern'):
            message += " (one that starts with '-' goes last, after '--')"
        elif message.endswith(': COMMAND'):
            message += f" ({', '.join(SUBCOMMANDS)}; -h for help)"
        self.exit(2, f'{self.prog}: error: {one_line(message)}\n')


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Help that shows every option's default, except for flags and empty ones."""

    def _get_help_string(self, action):
        if action.default in (None, False, [], '', argparse.SUPPRESS):
            return action.help
        return super()._get_help_string(action)


def command_text(text):
    """A command-line argument as valid text: bytes that are not UTF-8 become U+FFFD,
    so that what is printed back (and --json) stays valid UTF-8."""
    try:
        data = text.encode('utf-8', 'surrogateescape')
    except UnicodeEncodeError:                  # a lone surrogate given through main()
        data = text.encode('utf-8', 'surrogatepass')
    return data.decode('utf-8', 'replace')


def question_text(text):
    """A question argument: valid text (command_text) of at most QUESTION_LIMIT
    characters, and not empty: MCP and the HTTP API refuse an empty one too."""
    text = command_text(text)
    if len(text) > QUESTION_LIMIT:
        raise argparse.ArgumentTypeError(f'longer than {QUESTION_LIMIT} characters')
    if not text.strip():
        raise argparse.ArgumentTypeError('empty')
    return text


def positive_int(text, least=1):
    """A whole number of least or more, in ASCII digits as the HTTP API takes it: not
    int()'s ' 5', '1_0' or full-width '５'."""
    if not re.fullmatch(r'-?[0-9]{1,18}', text):
        raise argparse.ArgumentTypeError(f'not a whole number: {text!r}')
    value = int(text)
    if value < least:
        raise argparse.ArgumentTypeError(f'must be {least} or more: {text!r}')
    return value


def zero_or_more(text):
    """A whole number of 0 or more: grep's -C 0, as ripgrep takes it."""
    return positive_int(text, 0)


def language_name(text):
    """A --lang value: one of the languages files are read as."""
    try:
        return known_language(text)
    except LookupError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


INDEX_HELP = (f'index file, or NAME=FILE to label it; repeat it to search several '
              f'repositories (default: {DEFAULT_INDEX})')
REPOS_HELP = 'also the indexes of a repository list (see repos), labelled with their names'


def build_parser():
    prog = program_name()
    parser = ArgumentParser(prog=prog, description=__doc__.split('\n')[0],
                            formatter_class=HelpFormatter,
                            usage=f'{prog} ROOT QUESTION [--top-k N] [--json]\n'
                                  f'       {prog} [--version] COMMAND ...',
                            epilog=f'The first form indexes ROOT in memory, answers QUESTION '
                                   f'and writes nothing (--top-k default: {DEFAULT_TOP_K}). '
                                   f'Run "{prog} COMMAND -h" for the options of a command.')
    parser.add_argument('--version', action='version', version=f'%(prog)s {__version__}')
    commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND',
                                     prog=prog)

    def command(name, text):
        return commands.add_parser(name, help=text, description=text,
                                   formatter_class=HelpFormatter)

    index = command('index', 'write or update the index of a folder')
    index.add_argument('root', help='the folder of code')
    index.add_argument('--out', default=DEFAULT_INDEX, metavar='FILE', help='index file')
    index.add_argument('--hidden', action='store_true',
                       help='also index dot-files and dot-folders')
    index.add_argument('--no-ignore', action='store_true',
                       help='do not honour .gitignore and .ignore')
    index.add_argument('--dry-run', action='store_true',
                       help='list what would be indexed and skipped; write nothing')
    index.add_argument('--jobs', type=positive_int, metavar='N',
                       help='worker processes (default: one per core)')
    index.add_argument('--max-file-size', type=positive_int, default=MAX_FILE_SIZE,
                       metavar='BYTES', help='skip larger files')
    search = command('search', 'answer a question from the index')
    search.add_argument('question', type=question_text)
    search.add_argument('--top-k', type=positive_int, default=DEFAULT_TOP_K, metavar='N',
                        help='number of results')
    search.add_argument('--path', action='append', default=[], metavar='GLOB',
                        help="only files under or matching GLOB; '!GLOB' excludes; repeatable")
    search.add_argument('--lang', action='append', default=[], metavar='LANG', type=language_name,
                        help='only files in LANG (python, java, markdown, ...); repeatable')
    search.add_argument('--explain', action='store_true',
                        help='show what each question word and field gave each hit')
    symbol = command('symbol', 'find definitions by name')
    symbol.add_argument('name', type=question_text)
    at = command('at', 'the function around PATH:LINE')
    at.add_argument('location', metavar='PATH:LINE')
    trace = command('trace', 'explain a stack trace (Python, Java, Kotlin, Go, Node.js, Rust, .NET)')
    trace.add_argument('file', nargs='?', default='-', help="the trace's file, or - for stdin")
    trace.add_argument('--full', action='store_true', help='print whole definitions')
    outline_command = command('outline', 'the definitions of files, in line order')
    outline_command.add_argument('paths', nargs='*', metavar='PATH',
                                 help='files or folders (default: every indexed file)')
    for sub in (search, symbol, at, trace, outline_command):
        sub.add_argument('--index', action='append', metavar='[NAME=]FILE', help=INDEX_HELP)
        sub.add_argument('--repos', metavar='FILE', help=REPOS_HELP)
        sub.add_argument('--json', action='store_true', help='print one JSON object')
    grep = command('grep', 'search the files for a regular expression, as ripgrep does')
    grep.add_argument('pattern', type=command_text,
                      help="a Python regular expression (-F: a literal string)")
    grep.add_argument('root', nargs='?', help='search the files under this folder, not an index')
    grep.add_argument('-F', '--fixed-strings', action='store_true', help='PATTERN is literal')
    grep.add_argument('-i', '--ignore-case', action='store_true', help='ignore case')
    grep.add_argument('-w', '--word-regexp', action='store_true', help='only whole words')
    grep.add_argument('-C', '--context', type=zero_or_more, default=0, metavar='N',
                      help='show N lines around each match (default: 0)')
    grep.add_argument('-l', '--files-with-matches', action='store_true',
                      help='print only the paths of files that match')
    grep.add_argument('-m', '--max-count', type=positive_int, metavar='N',
                      help='at most N matching lines per file')
    grep.add_argument('--path', action='append', default=[], metavar='GLOB',
                      help="only files under or matching GLOB; '!GLOB' excludes; repeatable")
    grep.add_argument('--lang', action='append', default=[], metavar='LANG', type=language_name,
                      help='only files in LANG; repeatable')
    read = command('read', "print a file's lines with their numbers")
    read.add_argument('location', metavar='PATH[:START[-END]]')
    read.add_argument('root', nargs='?', help='read from this folder, not an index')
    ls = command('ls', 'list the indexed folders and files')
    ls.add_argument('path', nargs='?', default='', help='a folder (default: the root), '
                    'or one file')
    ls.add_argument('--depth', type=positive_int, default=1, metavar='N',
                    help='levels to list')
    ls.add_argument('--all', action='store_true',
                    help='also files and folders left out, with the reason')
    for sub in (grep, read, ls):
        sub.add_argument('--index', action='append', metavar='[NAME=]FILE',
                         help=INDEX_HELP + (', when no ROOT is given' if sub is not ls else ''))
        sub.add_argument('--repos', metavar='FILE', help=REPOS_HELP)
        sub.add_argument('--json', action='store_true', help='print one JSON object')
    repos = command('repos', 'show, or --update, the repositories a list file names')
    repos.add_argument('file', help='a JSON or TOML-like list of {name, root, index}')
    repos.add_argument('--update', action='store_true', help='index each one, incrementally')
    repos.add_argument('--jobs', type=positive_int, metavar='N',
                       help='worker processes (default: one per core)')
    repos.add_argument('--json', action='store_true', help='print one JSON object')
    mcp = command('mcp', 'serve the index to MCP clients over stdio')
    mcp.add_argument('root', nargs='?', help='index this folder in memory instead')
    mcp.add_argument('--index', action='append', metavar='[NAME=]FILE', help=INDEX_HELP)
    mcp.add_argument('--repos', metavar='FILE', help=REPOS_HELP)
    serve = command('serve', 'serve a local web page and JSON API over the indexes')
    serve.add_argument('--index', action='append', metavar='[NAME=]FILE', help=INDEX_HELP)
    serve.add_argument('--repos', metavar='FILE', help=REPOS_HELP)
    serve.add_argument('--host', default=SERVE_HOST,
                       help='address to listen on; anything but localhost is warned about')
    serve.add_argument('--port', type=port_number, default=SERVE_PORT,
                       help='port (0: any free one)')
    return parser


def parse_command_line(argv):
    """The arguments of a command.  grep and read take their optional ROOT after any
    option too (grep -i PATTERN -l ROOT), as ripgrep users type it, unless a '--' ends
    the options (grep -i -- -rf ROOT), which argparse's intermixed parsing mishandles."""
    parser = build_parser()
    if argv[:1] in (['grep'], ['read']) and '--' not in argv:
        commands = next(action for action in parser._actions
                        if isinstance(action, argparse._SubParsersAction))
        args = commands.choices[argv[0]].parse_intermixed_args(argv[1:])
        args.command = argv[0]
        return args
    return parser.parse_args(argv)


def one_shot_parser():
    prog = program_name()
    parser = ArgumentParser(prog=prog, formatter_class=HelpFormatter,
                            usage=f'{prog} ROOT QUESTION [--top-k N] [--json]\n'
                                  f'       {prog} [--version] COMMAND ...')
    parser.add_argument('root')
    parser.add_argument('question', type=question_text)
    parser.add_argument('--top-k', type=positive_int, default=DEFAULT_TOP_K)
    parser.add_argument('--json', action='store_true')
    return parser


def run_index(args):
    options = IndexOptions(hidden=args.hidden, no_ignore=args.no_ignore,
                           max_file_size=args.max_file_size, jobs=args.jobs or 0)
    if args.dry_run:
        return run_dry_run(require_folder(args.root), options._replace(exclude=(args.out,)))
    with progress_line() as report:
        stats = index_folder(args.root, args.out, options, report)
    print_index_summary(stats)
    return 0


def print_index_summary(stats, name=''):
    """index's report: a warning, skipped and windowed files on stderr, then the
    tutorial's summary line (each prefixed with a repository's name: REPO:path)."""
    label = f'{name}:' if name else ''
    if stats['warning']:
        warn(label + ' ' + stats['warning'] if name else stats['warning'])
    report_skipped([dict(item, path=label + item['path']) for item in stats['skipped']])
    for item in stats['windowed']:
        print(f"{label}{item['path']}:0: {item['reason']}", file=sys.stderr)
    windowed = f", 줄 창으로 나눈 파일 {len(stats['windowed'])}개" if stats['windowed'] else ''
    print(f"{name + ': ' if name else ''}갱신 파일: {stats['updated']}, "
          f"제거 파일: {stats['removed']}, 건너뛴 파일: {len(stats['skipped'])} "
          f"(파일 {stats['files']}개, 조각 {stats['chunks']}개{windowed})")


def run_repos(args):
    repos = read_repos_file(args.file)
    status = 0
    if args.update:
        for repo in repos:
            try:
                with progress_line() as report:
                    stats = index_folder(repo['root'], repo['index'],
                                         IndexOptions(jobs=args.jobs or 0, as_before=True),
                                         report)
            except IndexProblem as problem:
                print(f"{program_name()}: error: {one_line(repo['name'])}: {one_line(problem)}",
                      file=sys.stderr)
                status = max(status, problem.status)
                continue
            print_index_summary(stats, repo['name'])
    rows = [repo_status(repo) for repo in repos]
    if args.json:
        emit_json({'repos': rows})
    else:
        print(format_repos(rows))
    return status


def run_dry_run(root, options):
    """List what index would read, each file with its language and how it would be cut,
    what it would skip (a stderr line each when indexing) and what it leaves out quietly
    (not text, tool folders), with reasons; write nothing."""
    included = windowed = skipped = left = 0
    for item in walk_tree(root, options):
        reason = item.reason
        if not reason:
            try:
                data = read_file(item.path, options.max_file_size)[0]
                read = chunk_file(data, item.relative, hashlib.sha256(data).hexdigest())
            except SkipFile as skip:
                reason = skip.reason
        if reason:
            left, skipped = left + item.quiet, skipped + (not item.quiet)
            print(f"{'leave' if item.quiet else 'skip '} {item.relative}: "
                  f"{reason.replace('skipped: ', '', 1)}")
            continue
        included += 1
        windowed += bool(read.note)
        how = f'{read.language}, {read.note}' if read.note else read.language
        print(f"index {item.relative}  ({how}; {counted(len(read.chunks), 'chunk')})")
    print(f"{included} file(s) to index ({windowed} in line windows only), {skipped} "
          f"skipped, {left} left out")
    return 0


def index_specs(args):
    """A command's indexes: its --index values, then those of its --repos list
    (labelled with their names) that have an index file; code_index.json when there are
    none.  One listed but not indexed yet is left out (warn_unindexed says so)."""
    specs = list(args.index or [])
    if getattr(args, 'repos', None):
        specs += [f"{repo['name']}={repo['index']}" for repo in read_repos_file(args.repos)
                  if os.path.lexists(repo['index'])]
        if not specs:
            raise IndexProblem(f'no repository of {args.repos} is indexed yet (run: '
                               f'{program_name()} repos {args.repos} --update)')
    return specs or [DEFAULT_INDEX]


def warn_unindexed(args):
    """One warning line for each repository of the --repos list not indexed yet."""
    for repo in read_repos_file(args.repos) if getattr(args, 'repos', None) else ():
        if not os.path.lexists(repo['index']):
            fix = (f"run: {program_name()} repos {args.repos} --update" if
                   os.path.isdir(repo['root']) else f"its root {repo['root']} is not a folder")
            warn(f"repository {repo['name']} is not indexed yet: left out ({fix})")


def open_command_repos(args):
    """The repos a command runs on (see index_specs)."""
    warn_unindexed(args)
    return open_repos(index_specs(args))


def damaged_repos_guard(args):
    return damaged_index_guard(', '.join(index_specs(args)))


def run_search(args):
    repos = open_command_repos(args)
    for glob in unmatched_globs([relative for repo in repos for relative in repo.index['files']],
                                args.path):
        warn(f'--path {glob!r} matches no indexed file')
    with damaged_repos_guard(args):
        hits = answer_question(repos, args.question, args.top_k, args.path, args.lang,
                               args.explain)
    print_hits(args.question, hits, args.json, len(repos) > 1)
    return 0


def run_outline(args):
    repos = open_command_repos(args)
    try:
        with damaged_repos_guard(args):
            found = outline_repos(repos, args.paths)
    except LookupError as error:
        raise IndexProblem(str(error.args[0])) from None
    if args.json:
        emit_json(found)
    else:
        print(format_outline(found, len(repos) > 1))
    return 0


def open_file_sets(args):
    """The files grep and read run on: those under ROOT when it is given, else the
    indexes' (--index, default code_index.json)."""
    if args.root and (args.index or args.repos):
        raise IndexProblem('give ROOT or --index, not both')
    if args.root:
        return [root_files(require_folder(args.root))]
    return [index_files(repo.index, repo.label) for repo in open_command_repos(args)]


def run_grep(args):
    if args.files_with_matches and args.json:     # as ripgrep: the two say what to print
        raise IndexProblem('-l prints file names and --json the matches: give one of them')
    sets = open_file_sets(args)
    try:
        query = GrepQuery(args.pattern, args.fixed_strings, args.ignore_case, args.word_regexp,
                          tuple(args.path), tuple(args.lang), args.max_count or 0)
        grep_regex(query)
    except ValueError as error:
        raise IndexProblem(str(error)) from None
    for glob in unmatched_globs([relative for files in sets for relative in files.files],
                                args.path):
        warn(f'--path {glob!r} matches no file')
    skipped = [item for files in sets for item in files.skipped]    # and those grep meets
    with damaged_repos_guard(args) if not args.root else contextlib.nullcontext():
        try:
            result = grep(sets, query, lambda path, reason, line: skipped.append(
                skip_record(path, reason, line)))
        except TooSlow as error:          # the pattern's fault, not the index's
            raise IndexProblem(str(error)) from None
    report_skipped(skipped)
    if args.json:
        emit_json(result)
    elif result['matches']:
        by_label = {files.label: files for files in sets}
        lines = functools.lru_cache(maxsize=64)(
            lambda label, path: file_lines(by_label[label], path)[0])
        print(format_grep(result, lines, args.context, args.files_with_matches,
                          len(sets) > 1))
    return 0


def run_read(args):
    path, start, end = args.location, 1, None
    head, _, tail = args.location.rpartition(':')
    span = re.fullmatch(r'(\d+)(?:-(\d*))?', tail)       # 355-: from 355 to the end
    if head and span:
        path, start = head, int(span[1])
        end = int(span[2]) if span[2] else None
        if start < 1 or (end is not None and end < start):
            raise IndexProblem(f'expected PATH:START-END with 1 <= START <= END, got {tail!r}')
    sets = open_file_sets(args)
    try:
        files, inside = repo_path(sets, path)
        result = dict(read_lines(files, inside, start, end), repo=files.label)
    except LookupError as error:
        if head and not span and re.fullmatch(r'[\d\s,-]*\d[\d\s,-]*', tail):   # :1,3
            raise IndexProblem(f'expected PATH:START-END, got {tail!r}') from None
        raise IndexProblem(str(error.args[0])) from None
    if args.json:
        emit_json(result)
    elif result['total_lines']:
        print(format_read(result))
    return 0


def run_ls(args):
    repos = open_command_repos(args)
    try:
        listing = list_repos(repos, args.path, args.depth, args.all)
    except LookupError as error:
        raise IndexProblem(str(error.args[0])) from None
    if args.json:
        emit_json(listing)
    elif listing['entries']:
        print(format_listing(listing))
    return 0


def run_serve(args):
    warn_unindexed(args)
    load = repos_loader(index_specs(args))
    load()                                              # fail now, not at the first request
    return serve_http(lambda method, target, body: api_answer(load, method, target, body),
                      args.host, args.port)


def port_number(text):
    if not re.fullmatch(r'[0-9]{1,5}', text) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f'not a port number (0-65535): {text!r}')
    return int(text)


def run_one_shot(args):
    meant = [] if os.path.exists(args.root) else \
        difflib.get_close_matches(args.root, SUBCOMMANDS, 1)     # serach tax
    if meant:
        raise IndexProblem(f'root folder does not exist: {args.root} (the command '
                           f'{meant[0]}?)')
    root = require_folder(args.root)
    started = time.monotonic()
    chunks, skipped = scan_tree(root)
    report_skipped(skipped)
    windowed = {chunk['path']: chunk['note'] for chunk in chunks if 'note' in chunk}
    for path, note in windowed.items():
        print(f'{path}:0: {note}', file=sys.stderr)     # as index reports them
    hits = search_index(make_search_index(chunks, str(root)), args.question, args.top_k)
    label = root_label(root)                          # as an index of root has
    for hit in hits:
        hit.update(repo=label, stale=False, gone=False)
    print_hits(args.question, hits, args.json)
    if time.monotonic() - started > ONE_SHOT_HINT_SECONDS:
        print(f'hint: index once and search fast: {program_name()} index {args.root}, '
              f'then {program_name()} search QUESTION (index file: {DEFAULT_INDEX})',
              file=sys.stderr)
    return 0


def run_symbol(args):
    repos = open_command_repos(args)
    with damaged_repos_guard(args):
        matches = texts_of(repos, symbol_in_repos(repos, args.name))
    if args.json:
        emit_json({'name': args.name, 'results': [hit_json(m) for m in matches]})
    elif not matches:
        windowed = sum(1 for repo in repos for record in repo.index['files'].values()
                       if record.get('note'))
        print(f'no definition named {args.name}' + (
            f' ({windowed} file(s) read in line windows have none known; grep may find it)'
            if windowed else ''))
    else:
        print(format_hits(matches, len(repos) > 1))
    return 0


def location_readings(location):
    """The (path, line) readings of PATH:LINE[:COLUMN][:]: a.py:3:5 is line 3 of a.py, or
    line 5 of a file named 'a.py:3'; a.py:3: is grep's line as printed."""
    readings = [(found[1], int(found[2])) for found in (
        re.fullmatch(r'(.+?):(\d+)(?::\d+)?:?', location, re.S),
        re.fullmatch(r'(.+):(\d+)', location, re.S)) if found and int(found[2]) >= 1]
    if not readings:
        raise IndexProblem(f'expected PATH:LINE, got {location!r}')
    return list(dict.fromkeys(readings))


def names_indexed_file(repos, path):
    """Whether path (or REPO:path) is an indexed file of repos."""
    try:
        repo, inside = repo_path(repos, path)
        return bool(resolve_indexed_path(repo.index, inside))
    except LookupError:
        return False


def run_at(args):
    readings = location_readings(args.location)
    repos = open_command_repos(args)
    path, line = next((reading for reading in readings
                       if names_indexed_file(repos, reading[0])), readings[0])
    try:
        with damaged_repos_guard(args):
            hit = located(repos, path, line)
    except LookupError as error:
        raise IndexProblem(str(error.args[0])) from None
    if args.json:
        emit_json({'path': path, 'line': line,
                   'result': dict(hit_json(hit), line=line) if hit else None})
    elif hit is None:
        print(f'{path}:{line}: no indexed function holds this line')
    else:
        print(hit_header(hit, len(repos) > 1))
        print(marked_text(hit, line))
    return 0


def run_trace(args):
    repos = open_command_repos(args)
    text = read_trace(args.file)
    with damaged_repos_guard(args):
        explained = explain_traceback(repos, text)
    if args.json:
        emit_json(traceback_json(explained))
    else:
        print(format_traceback(explained, args.full, len(repos) > 1))
    return 0


def read_trace(name):
    """The text of a trace file or log ('-': stdin), read a piece at a time, so that
    Ctrl-C and SIGTERM end a long read, and refused beyond TRACE_LIMIT bytes."""
    pieces, size = [], 0
    if name == '-' and sys.stdin is None:
        raise IndexProblem('cannot read trace -: standard input is closed')
    try:
        with (contextlib.nullcontext(sys.stdin.buffer) if name == '-'
              else open(name, 'rb')) as handle:
            while size <= TRACE_LIMIT:
                piece = handle.read(READ_PIECE)
                if not piece:
                    break
                pieces.append(piece)
                size += len(piece)
    except OSError as error:
        raise IndexProblem(f'cannot read trace {name}: {error.strerror}') from None
    if size > TRACE_LIMIT:
        what = 'on standard input' if name == '-' else name
        raise IndexProblem(f'the trace {what} is larger than {TRACE_LIMIT} bytes')
    return b''.join(pieces).decode('utf-8', 'replace')


@contextlib.contextmanager
def interrupts_end_the_run():
    """While the block runs, Ctrl-C and SIGTERM end the program at once with a line
    (after write_index's, if they came while it wrote) and exit status 130 or 143.
    Nothing needs undoing: an index is written and replaced with these signals held,
    the lock ends with the process, and worker processes are killed with it (left
    alone they would take a moment to notice)."""
    def end(signum, frame):
        say_at_once('interrupted')
        with contextlib.suppress(Exception):    # a handler must not raise into what it cut
            processes = sys.modules.get('multiprocessing')  # (maybe half imported, here)
            for worker in processes.active_children() if processes else ():
                worker.kill()
        os._exit(128 + signum)

    try:
        previous = [(number, signal.signal(number, end))
                    for number in (signal.SIGINT, signal.SIGTERM)
                    if signal.getsignal(number) is not signal.SIG_IGN]   # ignored stays so
    except ValueError:          # not the main thread: signals stay as they are
        previous = []
    try:
        yield
    finally:
        for number, handler in previous:
            signal.signal(number, handler)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    with interrupts_end_the_run(), printable_output():
        try:
            if not argv or argv[0] in SUBCOMMANDS or argv[0] in ('-h', '--help', '--version'):
                args = parse_command_line(argv)
                run = {'index': run_index, 'search': run_search, 'symbol': run_symbol,
                       'at': run_at, 'trace': run_trace, 'outline': run_outline,
                       'grep': run_grep, 'read': run_read, 'ls': run_ls,
                       'repos': run_repos, 'serve': run_serve, 'mcp': run_mcp}[args.command]
            else:
                args, run = one_shot_parser().parse_args(argv), run_one_shot
            status = run(args)
            sys.stdout.flush()          # a full disk is heard here, not after main returned
            return status
        except IndexProblem as problem:
            with contextlib.suppress(IndexProblem):         # a stderr that is full, too
                print(f'{program_name()}: error: {one_line(problem)}', file=sys.stderr)
            return problem.status
        except KeyboardInterrupt:
            print(f'{program_name()}: interrupted', file=sys.stderr)
            return 130
        except BrokenPipeError:   # the reader went away (`| head`): not an error
            with contextlib.suppress(OSError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0


def run_mcp(args):
    """Serve index files (each reloaded when replaced) or a folder indexed in memory."""
    if args.root and (args.index or args.repos):
        raise IndexProblem('give ROOT or --index, not both')
    if args.root:
        root = require_folder(args.root)
        chunks, skipped = scan_tree(root)
        index = make_search_index(chunks, root, skipped)
        index['source'] = f'(in memory: {root})'
        repos = [Repo(root_label(root), index)]
        load = lambda label=None: repos                # noqa: E731
    else:
        warn_unindexed(args)
        load = repos_loader(index_specs(args))
    served = ', '.join(repo.index['root'] for repo in load())   # fail now, not later
    print(f'code_search mcp: serving {served} on stdio', file=sys.stderr)
    stdout, sys.stdout = sys.stdout, sys.stderr        # stray prints must not corrupt
    if getattr(stdout, 'buffer', None) is None:
        raise IndexProblem('cannot write the output: it is closed', 1)
    if sys.stdin is None:
        raise IndexProblem('cannot read requests: standard input is closed')
    try:
        return serve_mcp(load, sys.stdin.buffer, stdout.buffer)
    finally:
        sys.stdout = stdout


# --- Data: Korean words spelled two ways ---------------------------------------------
# Each line: a spelling people write, then the one text and questions are searched as:
# the standard one for loanwords; for words with and without a 사이시옷 (최댓값, 최대값),
# the one without, whose parts the glossary knows.  Add a line when people spell a word
# two ways.

KOREAN_SPELLINGS = tuple(tuple(line.split()) for line in '''
디렉토리 디렉터리
쉘 셸
메세지 메시지
어플리케이션 애플리케이션
데이타 데이터
콘테이너 컨테이너
파라메터 파라미터
팩키지 패키지
네트웍 네트워크
프레임웍 프레임워크
캐쉬 캐시
버젼 버전
쓰레드 스레드
컨텐츠 콘텐츠
엑세스 액세스
악세스 액세스
블럭 블록
포멧 포맷
아키텍쳐 아키텍처
캡쳐 캡처
셋팅 세팅
레포지토리 리포지토리
리다이렉 리디렉
스냅숏 스냅샷
유져 유저
타깃 타겟
파이선 파이썬
브렌치 브랜치
컨솔 콘솔
쿠베르네티스 쿠버네티스
윈도우즈 윈도우
싱글톤 싱글턴
오버플로우 오버플로
최댓값 최대값
최솟값 최소값
절댓값 절대값
결괏값 결과값
기댓값 기대값
초깃값 초기값
함숫값 함수값
근삿값 근사값
대푯값 대표값
갯수 개수
'''.split('\n') if line)


# --- Data: the Korean -> English glossary of programming words -----------------------
# One entry a line: a Korean word, a tab, then the English words code uses for it, the
# most likely first.  Add a line to teach the search a new word.  A superlative, two
# words in Korean and one in English, is written joined (가장큰: 가장 큰, largest).

KOREAN_GLOSSARY_TEXT = '''
가격	price cost
가까운	close closest nearest
가득	full
가로	width horizontal
가변	mutable
가변인자	args varargs argument
가비지	garbage gc collect
가비지컬렉션	gc garbage collect
가상	virtual
가상머신	vm virtual machine
가상환경	venv virtualenv virtual environment
가운데	center middle
가운데정렬	center
가장	most
가장가까운	nearest closest
가장긴	longest
가장낮은	lowest min
가장높은	highest max
가장늦은	latest
가장많은	most common
가장빠른	earliest fastest
가장오래된	oldest
가장작은	smallest min minimum
가장적은	fewest least
가장짧은	shortest
가장최근	latest newest
가장큰	largest biggest max maximum
가져오	get fetch load import
가져오기	import get fetch load
가져온	get fetch load
가져올	get fetch load
가져와	get fetch load
가중	weighted weight
가중치	weights weight
가중평균	weighted average mean
가짜	fake mock dummy
각도	angle degrees degree
간격	interval
간단	simple
간선	edge
감사	audit
감소	decrement decrease dec
감시	watch monitor
감싸	wrap wrapper
감싼	wrapped wrap wrapper
감지	detect watch
감추	hide hidden mask
감춰	hide mask
값	value val
강제	force
강제종료	kill terminate
강조	highlight emphasis
같다	same equal
같아	same equal
같으면	equal same
같은	same equal
같은지	same equal
개발	development dev
개별	individual
개수	count len number
개요	overview summary
개인키	private key
개체	object
개행	newline linesep
객체	object obj instance
객체크기	getsizeof size
갱신	update refresh
거꾸로	reverse reversed
거듭제곱	pow power
거리	distance dist
거부	deny reject refuse
거북이	turtle
건너뛰	skip
건너뛰기	skip
건너뛰어	skip
건너뛴	skip skipped
걸	set
걸러	filter
걸리	elapsed duration takes
걸린	elapsed duration
검사	check inspect
검색	search find lookup
검은색	black
검증	validate verify check
검토	review
게스트	guest
게시	publish post
게이트웨이	gateway
게터	getter get
결과	result output
결과값	result
결제	payment pay charge
결측치	missing nan isnull
결합	join concat combine
겹치	overlap overlapping
경고	warning warn warnings
경과	elapsed
경로	path
경로명	path pathname
경쟁상태	race condition
경합	contention contended contend race
계산	calculate compute calc
계속	continue
계정	account user
계층	layer hierarchy level
고객	customer client
고급	advanced
고루틴	goroutine
고르	choose select pick
고아	orphan
고유	unique uuid
고유값	unique
고정	fix freeze bind
고쳐	fix
고치	fix repair
고친	fixed fix
골라	choose choice select
곱	product prod mul
곱셈	mul multiply product
곱하	multiply mul
곱해	multiply mul
공간	space
공개	public
공개키	public key
공급자	provider
공백	whitespace space blank
공분산	covariance cov
공유	shared share
공유메모리	shared_memory shared memory
공통	common
관리	manage manager
관리자	manager admin
관찰	observe watch
괄호	parentheses bracket paren
교집합	intersection
교착	deadlock
교착상태	deadlock
교체	replace swap
교환	exchange swap
구간	interval range
구독	subscribe
구문	syntax statement
구문분석	parse parser
구문트리	ast syntax tree
구분	delimiter separator split
구분문자	delimiter separator
구분자	delimiter separator sep
구성	config configuration
구조	structure struct
구조체	struct structure pack
구축	build
구하	get compute calculate
구하고	get compute calculate
구하기	get compute obtain
구하는	get compute calculate
구하려면	get compute calculate
구한	computed get
구할	get compute calculate
구해	get compute calculate
구현	implement implementation
구현체	implementation impl
국제	international i18n
국제화	gettext i18n locale
굵게	bold
권장	recommend
권한	permission mode chmod access
규칙	rule
균형	balance balanced
그래프	graph graphlib topological
그래픽	graphics
그려	draw
그룹	group
그룹화	groupby group
그리기	draw canvas turtle
그리드	grid
그림	image picture draw
근사	approximate approx
근삿값	approximation approximate approx
글꼴	font
글로벌	global
글씨	text font
글자	char character letter
글자색	color foreground fg
글자수	len length
금액	amount total
기간	duration timedelta period
기기	device
기능	feature function
기다려	wait
기다리	wait
기다린	wait
기대값	expected expectation mean
기록	log record write
기본	default base basic
기본값	default defaults
기본사전	defaultdict
기본인증	basic auth
기본키	primary key
기아	starvation starve
기억	remember cache memo
기울임	italic
기존	existing
기준	key
기호	symbol
긴	long
길이	len length size
깊은	deep deepcopy
깊은복사	deepcopy copy
깊이	depth deep
깊이우선	dfs depth
깨우	wake notify
깨진	broken corrupt invalid
깨짐	decode errors mojibake
꺼	disable stop
꺼내	get pop extract
꺼낸	pop extract
꼬리말	footer
꽉	full
끄	disable stop
끊	close disconnect shutdown
끝	end
끝나	finish end done
끝나는	endswith end
끝나는지	endswith end
끝난	done finished
끝날	finish end done
끝내	finish end close
나노초	nanosecond nanos nano
나누	split divide
나누기	divide split div
나눈	divided divide split
나눌	divide split
나눗셈	div divide truediv
나눠	split divide
나머지	remainder mod modulo
나열	list enumerate
나오	appear occur
나중	later
나타내	represent repr
난독화	obfuscate
난수	random rand seed
날짜	date datetime day
남겨	keep leave log
남기	log write keep
남긴	keep left
남아있	remaining left
남은	remaining rest left
내려받	download
내림	floor
내림차순	descending reverse sorted
내보내	emit send export
내보낸	export
내부	internal inner
내어쓰기	dedent
내역	history log
내용	content contents body
내일	tomorrow
내장	builtin builtins
너비	width
너비우선	bfs breadth
널	null none nil
넘겨	pass forward
넘기	pass skip next
넘버	number
넘치	overflow
넣	put insert add
넣어	put insert add
네이티브	native
네임드튜플	namedtuple
네임스페이스	namespace
네트워크	network net socket
네트워킹	networking network
넥스트	next
년	year
년도	year
노드	node
노란색	yellow
녹음	record
녹화	record
논리	logic logical
논블로킹	nonblocking setblocking
높이	height
누계	cumulative total accumulate
누락	missing
누수	leak
누적	accumulate cumulative
누적합	accumulate cumulative sum
느린	slow
늘려	increase extend grow
늘리	increase extend grow
늘린	increase extend
늘어나	grow increase
다국어	gettext locale i18n
다듬기	strip trim
다루	handle
다뤄	handle
다르	different differ
다른	other different
다른지	different diff
다시	again re reload
다운로드	download fetch urlopen retrieve
다운받	download
다음	next
다이얼로그	dialog
다이제스트	digest hexdigest
다중	multi multiple
다차원	nested multidimensional
단순화	simplify
단어	word words
단언	assert
단위	unit
단위테스트	unittest test
단일	single
단축키	shortcut hotkey keybinding
닫	close
닫아	close
닫지	close
닫힌	closed close
달력	calendar
답장	reply
대기	wait sleep
대기열	queue
대문자	upper uppercase capitalize
대상	target
대소문자	case ignorecase
대시보드	dashboard
대안	alternative
대역폭	bandwidth
대입	assign
대체	replace alternative substitute
대칭키	symmetric key secret
대화상자	dialog
대화식	interactive
대화형	interactive prompt
더미	dummy
더블	double float
더하	add
더하고	add sum
더하기	add sum plus
더하는	add sum
더하려면	add sum
더한	added add sum
더해	add
던져	raise throw
던지	raise throw
덤프	dump dumps
덧붙여	append
덧붙이	append
덧셈	add sum
덮어쓰	overwrite
덮어쓰기	overwrite
데드라인	deadline
데드락	deadlock
데몬	daemon
데스크탑	desktop
데스크톱	desktop
데이터	data
데이터베이스	database db sqlite
데이터클래스	dataclass
데이트타임	datetime
데코레이터	decorator
덱	deque
도구	tool tools util
도메인	domain
도우미	helper
도움말	help usage
도커	docker
도큐먼트	document doc
독립	independent standalone
독스트링	docstring doc
독테스트	doctest
돌려	returns
돌려주	return returns
돌려준	return returns
돌려줘	return returns
돌리	run rotate
돌아가	run running
동기	sync synchronous
동기화	sync synchronize lock
동등	equal eq
동시	concurrent parallel simultaneous
동시성	concurrent concurrency
동시에	concurrent parallel simultaneous
동영상	video
동일	equal identical
동작	behavior action operation
동적	dynamic dynamically
동적으로	dynamic dynamically
되돌려	revert undo restore
되돌리	revert undo restore
두	two
뒤	after later back end
뒤섞	shuffle
뒤져	search find
뒤지	search find
뒤집	reverse reversed flip
뒤집기	reverse reversed
뒤집어	reverse flip
뒤쪽	back tail end
드라이버	driver
드라이브	drive
드래그	drag
드롭	drop
들어오	input incoming
들어있	contains
들여쓰기	indent indentation
들여쓰기제거	dedent
등록	register
디렉터리	directory dir folder
디렉터리명	dirname directory
디렉터리인지	isdir directory
디바운스	debounce
디바이스	device dev
디버거	debugger pdb
디버그	debug debugger pdb
디버깅	debug debugger pdb
디비	db database sqlite3
디스크	disk usage
디스크립터	descriptor fd fileno
디스트리뷰션	distribution distro
디스패처	dispatcher dispatch
디스플레이	display
디지털	digital
디코더	decoder
디코드	decode
디코딩	decode
디펜던시	dependency
디폴트	default
딕셔너리	dict dictionary mapping
딕트	dict
딜레이	delay sleep
딜리트	delete
딥카피	deepcopy copy
따옴표	quote quotes
떼어내	detach strip remove
띄어쓰기	whitespace space
띄우	start serve run launch
띄워	show start launch
라디안	radians radian
라벨	label
라우터	router route
라우팅	routing route
라이브러리	library lib module
라이선스	license
라이터	writer
라이트	write
라인	line lines
락	lock
람다	lambda
래치	latch countdown
래퍼	wrapper wraps wrap
랜덤	random
런타임	runtime
레거시	legacy
레드블랙	red black
레벨	level
레이블	label
레이아웃	layout
레이어	layer
레이턴시	latency
레지스터	register
레지스트리	registry
레코드	record row
레퍼런스	reference ref
레플리카	replica
렉서	lexer lex
렌더러	renderer render
렌더링	render rendering
로거	logger logging
로그	log logging logger
로그아웃	logout
로그인	login auth
로깅	logging log logger
로드	load loads
로드밸런서	load balancer
로직	logic
로캘	locale
로컬	local localhost
로컬호스트	localhost
로케일	locale
로테이션	rotating rotate
롤백	rollback
루트	root sqrt
루프	loop
리눅스	linux posix
리더	reader
리듀스	reduce
리드	read
리디렉션	redirect
리디렉트	redirect
리로드	reload
리비전	revision rev
리셋	reset
리소스	resource resources
리스너	listener
리스트	list
리스트컴프리헨션	comprehension listcomp
리스폰스	response
리슨	listen
리절트	result
리졸버	resolver resolve
리퀘스트	request
리터럴	literal
리턴코드	returncode
리트라이	retry
리포지토리	repository repo
리포트	report
리플레이스	replace
리플렉션	reflection reflect
린터	linter lint
린트	lint
릴리스	release
링크	link symlink
마법사	wizard
마스크	mask
마우스	mouse
마운트	mount
마이그레이션	migration migrate
마이크	microphone mic
마이크로초	microseconds
마임	mime mimetype
마임타입	mimetype mime
마지막	last end final
마지막줄	last line tail
마진	margin
마치	finish done end
마커	marker
마크다운	markdown md
막기	prevent block
막아	block prevent
만드	create make new
만드는	create make new
만든	created make create
만들	create make new
만들기	create make new
만들어	create make
만료	expire expires expired
많아지	grow increase
말줄임	ellipsis truncate shorten
맞	match valid correct
맞추	align fit match
맞춰	align fit match
매개변수	parameter param arg
매개변수화	parametrize parameterized subtest
매니저	manager
매니페스트	manifest
매일	daily day
매직메서드	dunder magic special
매치	match
매칭	match
매크로	macro
매트릭스	matrix
매핑	map mapping
맥	macos darwin mac
맨뒤	back last tail
맨앞	front first head
맵	map
맵핑	mapping map
머리글	header
머신	machine vm
머지	merge
멀티스레드	threading thread
멀티스레딩	threading thread
멀티캐스트	multicast
멀티파트	multipart
멀티프로세스	multiprocessing process
멀티프로세싱	multiprocessing process pool
멈추	stop pause halt sleep
멈춘	stop
멈출	stop
멈춰	stop pause
메뉴	menu
메모리	memory
메모리매핑	mmap
메모이제이션	memoize cache lru
메서드	method
메소드	method
메시지	message msg
메인스레드	main_thread main
메일	mail email smtp message
메타데이터	metadata
메타클래스	metaclass
메트릭	metric metrics
멤버	member
며칠	days
명령	command cmd
명령어	command cmd instruction
명령줄	argv argparse command line
명령행	argv argparse command line
몇	few number
모니터	monitor
모니터링	monitor watch
모델	model
모듈	module
모드	mode
모바일	mobile
모아	collect gather
모으	collect gather
모으려면	collect gather
모의	mock patch
모자라	insufficient lack
모크	mock
모킹	mock patch
목	mock
목록	list listing
목적지	destination dst dest
목차	toc contents
몫	quotient div floordiv
무결성	integrity checksum hmac
무선	wireless wifi
무시	ignore
무작위	random shuffle
무한	inf infinite
무한대	inf infinity
묶	group pack bundle
묶어	group pack bundle
묶음	bundle archive
문법	syntax grammar
문서	document doc docs
문서테스트	doctest
문서화	docstring doc documentation
문자	char character
문자셋	charset encoding
문자수	len length
문자열	string str text
문자열표현	repr str
문자열화	stringify str tostring
문자코드	ord chr
문장	sentence text
물어	ask prompt input
뮤텍스	lock mutex
미들웨어	middleware
미디어	media
미래	future
미러	mirror
미리보기	preview
밀리초	milliseconds msec
밑줄	underline underscore
바꾸	change replace convert
바꾸기	replace sub swap
바꾼	changed replaced
바꿀	change replace convert
바꿔	convert replace change
바뀌	changed change
바뀐	changed change
바디	body
바이너리	binary bin bytes
바이트	bytes byte
바이트배열	bytearray
바이트열	bytes bytearray
바이트코드	bytecode dis code
바인드	bind
바인딩	bind binding
박스	box
반복	iterate loop repeat iter
반복가능	iterable iter
반복문	loop
반복자	iterator iter
반올림	round
반전	invert reverse
반환	return returns
반환값	return value result
반환코드	returncode exit code
받	receive recv
받는사람	recipient
받아	receive recv
발급	issue
발생	raise
발신자	sender
발행	publish
밝기	brightness
방지	prevent avoid
방출	emit
방향	direction orientation
방화벽	firewall
배경	background
배경색	background bg
배리어	barrier
배수	multiple
배압	backpressure
배열	array
배치	batch layout place
배포	distribution dist distribute
백그라운드	background daemon
백라이트	backlight
백분위	quantiles percentile
백분위수	percentile quantiles
백분율	percent percentage
백슬래시	backslash
백업	backup copy
백엔드	backend
백프레셔	backpressure
밸런스	balance
밸류	value
버그	bug
버리기	discard drop
버림	trunc floor
버전	version
버킷	bucket
버텍스	vertex
버튼	button
버퍼	buffer buf
번들	bundle
번들링	bundle
번역	translate gettext translation
번째	nth index
번호	number no lineno
범위	range bounds
범위초과	range index overflow
베이스	base64 base
베이스네임	basename
벡터	vec vector
벤치마크	benchmark timeit
벤치마킹	benchmark
변경	change modify update
변경사항	changes diff
변수	variable var
변화	change diff
변환	convert transform cast parse
별칭	alias
병렬	parallel concurrent
병목	bottleneck profile
병합	merge
보고서	report
보기	view pretty
보기좋게	pretty pprint
보내	send
보낸	sent send
보낸사람	sender
보류	pending hold
보안	security secure ssl
보여	show display print
보여주	show display print
보여준	show display
보여줘	show display print
보이	show visible display
보인	visible show
보존	preserve keep
보호	protect
복구	recover restore
복사	copy
복사본	copy
복소수	complex
복원	restore
복제	clone copy deepcopy
복호화	decrypt decode
본문	body content
볼륨	volume
부동소수	float
부동소수점	float floating
부르	call invoke
부모	parent
부모클래스	base parent superclass
부분문자열	substring
부분적용	partial functools
부분집합	subset issubset
부여	grant assign
부울	bool boolean
부족	insufficient lack shortage
부트	boot
부트로더	bootloader boot
부트스트랩	bootstrap
부팅	boot
부하	load
부호	sign copysign
북마크	bookmark
분	minute minutes
분기	branch fork
분류	classify category group
분리	split separate
분모	denominator
분산	variance
분석	analyze parse analysis
분수	fraction fractions
분자	numerator
분포	distribution
분할	split partition chunk
불러	call load
불러오	load import read
불러온	load import
불러올	load import
불러와	load import read
불리언	bool boolean
불린	bool boolean
불변	immutable frozen
붙여	append join concat
붙여넣	paste insert
붙여넣기	paste
붙이	append join concat
붙인	append join
뷰	view
뷰어	viewer
뷰포트	viewport
브라우저	browser webbrowser
브랜치	branch
브레이크포인트	breakpoint
브로드캐스트	broadcast
브루트포스	brute force
브리지	bridge
블랙리스트	blacklist denylist
블로킹	blocking block
블록	block
블루투스	bluetooth
비공개	private
비교	compare diff cmp
비교함수	cmp key comparator
비대칭	asymmetric
비동기	async asyncio await
비디오	video
비밀	secret secrets
비밀번호	password passwd getpass
비밀키	secret key hmac
비슷	similar close
비슷한지	similar
비어있	empty
비어있는	empty
비우	clear empty flush
비운	clear empty
비워	clear empty
비율	ratio rate
비정상	abnormal invalid error
비정상종료	abort crash
비트	bit bits
비트연산	bitwise
비활성	inactive disabled
비활성화	disable deactivate
빈	empty blank
빈도	frequency count counter
빈칸	blank whitespace space
빌더	builder
빌드	build
빌림	borrow
빌트인	builtin builtins
빠르	fast quick
빠른	fast quick
빠지	missing
빠진	missing
빨간	red
빨간색	red
빼	remove subtract
뺀	subtract remove
뺄셈	sub subtract
뽑	pick sample choose
뽑아내	extract
사라지	disappear vanish gone
사라진	gone removed stale
사양	spec specification
사용량	usage resource
사용률	usage utilization
사용법	usage help
사용자	user username
사용자명	username getuser
사용자정의	custom user defined
사운드	sound audio
사이즈	size
사이클	cycle
사인	sin sign
사전	dict dictionary
사진	image photo
삭제	delete remove unlink del
살아있	alive is_alive
삼각	trigonometric triangle
삼각함수	sin cos tan
삽입	insert
상관관계	correlation
상대	relative rel
상대경로	relpath relative
상세	detail verbose
상속	inherit subclass inheritance
상수	constant const
상위	parent upper super
상위클래스	superclass base
상태	state status
상태코드	status code
새	new
새로	new
새로고침	refresh reload
색	color
색깔	color
색상	color
색인	index
샌드박스	sandbox
샘플	sample
샘플링	sample sampling
생략	omit skip
생산자	producer
생성	create make new generate
생성시간	ctime getctime creation time
생성일	ctime created creation
생성자	constructor init new
샤드	shard
서로게이트	surrogate
서머타임	dst
서명	signature sign hmac
서명검증	verify signature
서버	server
서브볼륨	subvolume
서브젝트	subject
서브커맨드	subcommand subparsers
서브클래스	subclass
서브프로세스	subprocess process
서비스	service
서식	format
서치	search
섞	shuffle
섞어	shuffle
선언	declare
선입선출	fifo queue
선택	select choice choose option
선택적	optional
선형회귀	linear regression
설계	design
설명	description doc help
설정	config settings setting configure
설정파일	config configparser ini
설치	install setup
성능	performance perf
세	count counter
세그먼트	segment
세금	tax
세로	height vertical
세마포어	semaphore
세션	session
세어	count
세터	setter set
세트	set frozenset
세팅	settings setting config
섹션	section
섹터	sector
센	count
셀	count cell
셋	set frozenset
셋업	setup
셔플	shuffle
셰이더	shader
셸	shell
셸브	shelve
소멸자	destructor del drop
소문자	lower lowercase
소비자	consumer
소수	decimal prime
소수점	decimal point float
소수판별	isprime prime
소스	source src
소스코드	source code
소요시간	elapsed duration
소유	own owner
소유권	ownership owner borrow
소유자	owner chown
소인수분해	factorize factors prime
소켓	socket
소트	sort sorted
소팅	sort sorted sorting
소프트웨어	software
속도	speed performance fast
속도제한	rate limit throttle
속성	attribute attr property
손상	corrupt damage
손실	loss lossy
솔트	salt
송신	send sendall
송장	invoice
수동	manual
수락	accept
수명	lifetime
수신	receive recv
수신자	recipient
수정	modify edit update fix
수정시간	mtime modified
수정일	mtime modified
수준	level
수직	vertical
수집	collect gather
수학	math
순서	order ordered sequence
순서있는	ordered ordereddict
순열	permutation permutations
순위	rank
순차	sequential
순환	cycle circular
순회	traverse walk iterate
숨겨	hide hidden
숨기	hide hidden
숨긴	hidden
숨김	hidden
숫자	number digit numeric
쉼표	comma
슈퍼	super
슈퍼클래스	superclass
스냅샷	snapshot
스니펫	snippet
스레드	thread threading
스레드아이디	ident get_ident thread
스레드안전	threadsafe lock
스레드풀	threadpoolexecutor pool threadpool
스로틀	throttle
스왑	swap
스위치	switch
스위트	suite
스캔	scan
스케줄	schedule scheduler sched
스케줄러	scheduler sched
스케쥴	schedule sched
스코어	score
스코어링	scoring score
스코프	scope
스크래핑	scrape
스크롤	scroll
스크린샷	screenshot
스크립트	script
스크립팅	scripting script
스키마	scheme schema
스킴	scheme
스킵	skip
스타일	style
스타일시트	stylesheet css
스택	stack
스택트레이스	traceback stack trace
스텁	stub
스테이지	stage
스테이징	staging stage
스테이트먼트	statement stmt
스토리지	storage
스트리밍	streaming stream
스트리핑	strip stripping
스트림	stream
스트립	strip
스트링	string str
스페이스	space
스프라이트	sprite
스프레드시트	spreadsheet csv excel
스플릿	split
슬라이드	slide
슬라이스	slice
슬라이싱	slice slicing
슬래시	slash
슬립	sleep
승인	approve
시	hour hours
시각	time datetime clock
시간	time
시간대	timezone tz
시간차	timedelta delta difference
시간초과	timeout
시계	clock
시그널	signal
시그니처	signature
시도	attempt retry try
시드	seed
시리얼	serial
시리얼라이저	serializer serialize
시뮬레이터	simulator
시스템	system sys os
시작	start begin init
시작하는	startswith start
시작하는지	startswith start
시차	utcoffset offset timezone
시퀀스	sequence seq
시크	seek
시크릿	secret secrets
시트	sheet
시프트	shift
식별	identify id
식별자	identifier id
신뢰	trust
신호	signal
실수	float real
실시간	realtime
실제값	actual
실패	fail failure failed
실행	run execute exec
실행기	executor
실행시간	elapsed timeit perf_counter
실행중	running
실행취소	undo
실행파일	executable exe
심링크	symlink
심볼	symbol
심볼릭	symbolic symlink
심볼릭링크	symlink link
십육진수	hex hexadecimal
십진수	decimal
싱글턴	singleton
싱크	sync
쌍	pair tuple
써	write
써서	write
썸네일	thumbnail
쓰	write
쓰기	write
쓰면	write
쓰지	write
쓴	written write
쓸	write
아규먼트	argument arg
아스키	ascii
아스키코드	ord ascii
아웃풋	output
아이콘	icon
아이템	item items
아이피	ip address
아카이브	archive tar zip
아키텍처	architecture arch
아토믹	atomic
아티팩트	artifact
안드로이드	android
안전	safe secure
안정	stable
안쪽	inner inside
알고리즘	algorithm
알리	notify alert
알림	notify notification
알아내	find get detect
알아낸	find detect
알아보	check find
알파벳	alpha isalpha alphabet letters
암호	password crypt cipher
암호화	encrypt cipher crypt ssl
압축	compress zip gzip
압축파일	archive zip
압축풀기	extract decompress unzip unpack
압축해제	extract decompress unzip unpack
앞	front head
앞뒤	strip leading trailing
애니메이션	animation
애플리케이션	application app
액세스	access
앱	app application
야믈	yaml
약분	reduce normalize gcd
약수	divisor divisors
약한참조	weakref
양수	positive
양쪽	both
얕은	shallow copy
얕은복사	copy shallow
어노테이션	annotation annotations
어댑터	adapter
어림	estimate approximate
어사인먼트	assignment
어서트	assert
어설션	assert assertion
어셈블리	assembly
어싱크	async
어웨이트	await
어제	yesterday
어트리뷰트	attribute attr
억제	suppress
언더플로	underflow
언랩	unwrap
언마운트	unmount
언어	language lang
언패킹	unpack unpacking
언팩	unpack
얻	get obtain
얻어	get obtain
업그레이드	upgrade
업데이트	update
업로드	upload
없	no missing
없는지	exists missing
없애	remove delete strip
없앤	remove
없음	none missing
에러	error
에러코드	errno code
에뮬레이션	emulation emulate
에뮬레이터	emulator
에스큐엘	sql
에이전트	agent
에포크	epoch
에폭	epoch
엑셀	excel csv
엔드포인트	endpoint
엔디안	endian byteorder
엔디언	endian byteorder
엔진	engine
엔터	enter newline
엔트로피	entropy
엔트리	entry entries
엔트리포인트	entry points
엔티티	entity
엘리먼트	element
여는	open
여러	multiple many
역방향	reverse
역순	reverse reversed
역직렬화	load loads deserialize
역추적	traceback
역할	role
연결	connect connection link
연결리스트	linked list
연도	year
연산	operator operation op
연산자	operator
열	column col
열거	enumerate
열거형	enum
열고	open
열기	open
열려	open opened
열린	open opened
열면	open
열어	open
열지	open
영구	permanent persistent
영문자	ascii letters isalpha
영숫자	alnum isalnum
영역	region area
예쁘게	pretty pprint indent
예상	expected
예시	example sample
예약	schedule
예외	exception error
예외처리	except exception handle
예제	example sample
오늘	today
오디오	audio
오래된	old oldest eldest stale
오류	error
오류코드	errno code
오른쪽	right rjust rstrip
오른쪽정렬	rjust right
오름차순	ascending sort sorted
오버라이드	override
오버라이딩	override
오버레이	overlay
오버로드	overload
오버로딩	overload
오버플로	overflow
오브젝트	object
오차	tolerance error epsilon
오케스트레이션	orchestration
오퍼레이터	operator
오프라인	offline
오프셋	offset seek
오픈	open
온라인	online
올려	upload raise
올리	upload raise increase
올림	ceil
올바른	valid correct
옮겨	move
옮기	move
옮긴	moved move
옵셔널	optional
옵션	option options opt
옵저버	observer
옵저버블	observable
와일드카드	wildcard glob fnmatch
완료	done complete finished
외래키	foreign key
외부	external
외부명령	subprocess command
왼쪽	left ljust lstrip
왼쪽정렬	ljust left
요소	element item
요약	summary shorten
요일	weekday day
요청	request req
용량	size capacity
우선순위	priority heapq
우선순위큐	priority queue heapq
운영체제	os system platform
워닝	warning
워커	worker
워크스페이스	workspace
워크플로우	workflow
원격	remote
원래	original
원본	original source
원소	element item member
원시	raw
원인	cause
원자적	atomic
원주율	pi
원형	circular ring
월	month
웨이트그룹	waitgroup
웹	web http
웹사이트	website site
웹소켓	websocket
웹페이지	page html
위상정렬	topological sort graphlib
위젯	widget
위치	position offset pos location
위치인자	positional
윈도우	windows win nt win32
유니온	union
유니코드	unicode unicodedata
유닉스	unix posix epoch
유닉스시간	epoch timestamp
유닛	unit
유닛테스트	unittest test
유디피	udp
유사도	similarity ratio
유알엘	url
유일	unique
유저	user
유저에이전트	useragent user agent
유지	keep preserve
유티씨	utc
유틸	util utils
유틸리티	utility util utils
유형	type kind
유효	valid
유효기간	expiry expires
유효성	valid validate validation
유효한지	valid isvalid
유휴	idle
윤년	leap year isleap
음성	voice speech audio
음소거	mute
음수	negative
응답	response reply
응답코드	status code
의존	depend dependency
의존성	dependency dependencies requires
이넘	enum
이동	move rename
이름	name
이름공간	namespace
이름바꾸	rename
이름바꾸기	rename
이름바꿔	rename
이름변경	rename
이름있는튜플	namedtuple
이메일	email mail message
이미지	image img
이벤트	event
이벤트루프	event loop asyncio
이분	binary bisect
이분탐색	bisect binary search
이슈	issue
이스케이프	escape
이어붙여	concat join append
이어붙이	concat join append
이어쓰기	append
이전	previous prev old
이진	binary bin
이진검색	bisect binary search
이진수	bin binary
이진탐색	bisect binary search
이진트리	binary tree
이차원	matrix grid 2d
이터러블	iterable
이터레이션	iteration iterate
이터레이터	iterator iter
익명	anonymous
익명함수	lambda anonymous
익셉션	exception
인가	authorization authorize
인덱스	index idx
인라인	inline
인보이스	invoice
인서트	insert
인쇄	print
인수	argument arg args
인스턴스	instance
인스턴스인지	isinstance
인스톨	install
인식	recognize detect
인용	quote
인자	argument arg args
인접	adjacent neighbor neighbour
인증	auth authenticate login
인증서	certificate cert ssl
인코더	encoder
인코드	encode
인코딩	encode encoding
인터넷	internet network
인터랙티브	interactive
인터럽트	interrupt keyboardinterrupt
인터벌	interval
인터페이스	interface
인터프리터	interpreter executable
인트	int
인풋	input
일	day
일괄	batch bulk
일부	partial part
일수	days
일시정지	pause sleep
일으켜	raise
일으키	raise
일정	fixed constant regular
일치	match equal
읽	read
읽기	read
읽기전용	readonly read
읽어	read
읽어들이	read load
읽어오	read load
읽어온	read load
읽어와	read load
읽지	read
임계값	threshold
임시	temp tmp temporary tempfile
임시파일	tempfile temporary namedtemporaryfile
임의	random arbitrary
임포트	import
입력	input stdin
입력받	input read
있	exists has
있는지	exists contains
자격증명	credentials credential
자동	auto automatic
자료형	type types
자르	split cut truncate slice
자르기	truncate cut slice
자른	cut truncate split
자를	cut truncate split
자릿수	digits ndigits precision
자막	subtitle
자산	asset
자세히	verbose detail
자식	child children
자식클래스	subclass child
자원	resource
자정	midnight
자주	frequent common most
작	smaller less
작게	smaller less
작동	work operate
작성	write create
작성자	author
작업	task job work
작업디렉터리	cwd getcwd
작업자	worker
작은	smaller less small
작은따옴표	single quote
잘라	split cut truncate slice
잘라내	cut truncate strip
잘못	wrong invalid bad
잠가	lock acquire
잠그	lock acquire
잠금	lock
잠금해제	unlock release
잠시	sleep
잡	catch except handle
잡아	catch except handle
장치	device dev
재개	resume
재귀	recursive recurse recursion
재귀한도	recursionlimit
재발생	reraise raise
재부팅	reboot restart
재사용	reuse
재생	play playback
재시도	retry retries
재시작	restart
재연결	reconnect
저널	journal
저장	save store write dump
저장소	store storage
적용	apply
적중	hit
전달	forward pass send
전력	power
전송	send transfer
전역	global globals
전역변수	globals global
전원	power
전위	preorder prefix
전자우편	email mail
전체	all whole total entire
전환	switch toggle
절대	absolute abs
절대경로	abspath absolute resolve
절대값	abs absolute
절사	truncate trunc floor
점검	check inspect
접근	access
접근권한	permission access
접두사	prefix
접두어	prefix
접미사	suffix
접미어	suffix
접속	connect
정규분포	normal gauss
정규식	regex re pattern
정규표현식	regex re pattern
정규화	normalize norm
정렬	sort sorted order
정리	cleanup clean
정밀도	precision
정보	info information
정상	normal ok
정수	int integer
정의	define definition def
정적	static staticmethod
정적메서드	staticmethod static
정적으로	static staticmethod
정지	stop halt
정책	policy
제거	remove strip delete
제곱	square pow power
제곱근	sqrt
제공자	provider
제너레이터	generator yield
제너릭	generic typevar
제네레이터	generator yield
제네릭	generic typevar
제목	subject title
제어	control
제외	exclude ignore
제이슨	json
제일긴	longest
제일많은	most common
제일작은	smallest min minimum
제일짧은	shortest
제일큰	largest biggest max maximum
제출	submit
제한	limit max
조각	slice chunk piece
조건	condition
조건문	condition
조건변수	condition cond
조상	ancestor
조용히	quiet silent
조인	join
조합	combination combinations
조회	lookup get query select
존재	exists exist
종료	exit quit terminate close shutdown stop
종료코드	exit code returncode status
종속성	dependency dependencies depends
좋게	pretty
주기	interval period
주문	order
주석	comment annotation
주소	address addr
죽여	kill
죽이	kill terminate
줄	line lines
줄끝	eol newline
줄바꿈	newline wrap linebreak
줄수	line count lines
줄씩	line lines readline
줄어들	shrink decrease
줄여	shrink reduce shorten truncate
줄이	shrink reduce line
줄이기	shrink reduce shorten truncate
줄이는	shrink reduce shorten truncate
줄인	shrink reduce
줄임표	ellipsis
중간	middle
중단	abort break stop
중단점	breakpoint
중복	duplicate duplicates dedup
중복제거	dedup unique
중앙	center central
중앙값	median
중위	inorder infix
중지	stop halt
중첩	nested nest
즐겨찾기	favorite bookmark
증가	increment increase inc
증명서	certificate cert
증분	incremental
지금	now
지나면	elapsed expired after
지난	past last previous elapsed
지속	persist
지수	exp exponent
지역	local locals
지역변수	locals local
지연	delay sleep
지연로딩	lazy load
지오메트리	geometry
지우	delete remove
지운	deleted delete remove
지울	delete remove
지워	delete remove
지정	specified given
지집	gzip
직렬	serial
직렬화	serialize dump pickle
진단	diagnose diagnostic
진법	base radix
진수	base hex bin oct
진입점	entry point main
진행	progress
진행률	progress percent
진행바	progress bar progressbar
집계	aggregate count
집파일	zip zipfile
집합	set
짝수	even
짝지	zip pair
짧은	short
쪼개	split
쪼갠	split
차단	block deny
차례로	sequentially order
차이	diff difference delta
차이점	diff difference
차집합	difference
차트	chart
참거짓	bool boolean
참고	reference see
참조	reference ref
참조카운트	refcount getrefcount
창	window tk
창고	store repository
찾	find search
찾기	find search lookup get
찾아	find search
찾아내	find detect
찾아보	find lookup
찾지	find search
채널	channel chan
채우	fill pad
채우기	fill pad
채운	fill filled
채워	fill pad
처리	handle process
처리기	handler processor
처음	first start begin
첨부	attachment attach
첨부파일	attachment attach
첫	first
첫글자	first capitalize
첫번째	first
첫줄	first line readline
청구서	invoice bill
청소	cleanup clean purge expunge
청크	chunk chunks
체인	chain
체크섬	checksum crc
체크아웃	checkout
체크포인트	checkpoint
초	second seconds
초과	exceed
초기화	init initialize reset clear
초록색	green
초안	draft
총합	sum total
최근	recent latest last
최단경로	shortest path dijkstra
최대	max maximum
최대값	max maximum
최대공약수	gcd
최대힙	heap max heapq
최빈값	mode
최소	min minimum
최소값	min minimum
최소공배수	lcm
최소힙	heapq heap min
최신	latest newest
최적화	optimize optimization
최종	final
추가	add append insert
추상	abstract abc
추상구문트리	ast
추상클래스	abc abstract abstractmethod
추적	trace traceback track
추천	recommend suggest
추출	extract
축소	shrink reduce minimize
축약	reduce
축출	evict eviction
출력	print output write
충돌	conflict crash collision
취소	cancel
취약점	vulnerability
측정	measure timeit perf
치명적	critical fatal
치환	substitute replace sub
카라츠바	karatsuba
카메라	camera
카운터	counter count
카운트	count counter
카테고리	category
카피	copy
칸	column cell width
칼럼	column col
캐리지리턴	cr carriage return
캐릭터	char character
캐스팅	cast
캐시	cache cached lru
캐싱	cache caching
캔버스	canvas
캘린더	calendar
캡처	capture
커널	kernel
커넥션	connection conn
커넥션풀	pool connection
커맨드	command cmd
커맨드라인	command line argv
커밋	commit
커버리지	coverage trace
커서	cursor
커스텀	custom
커지	grow larger increase
커진	grown larger
컨디션	condition
컨스트럭터	constructor
컨캣	concat
컨테이너	container
컨텍스트	context
컨텍스트매니저	context manager with
컨트롤러	controller
컨트리뷰터	contributor
컨피그	config configparser
컬러	color colour
컬럼	column col
컬렉션	collection collections
컴파일	compile
컴패레이터	comparator compare
컴포넌트	component
컴퓨터	computer machine
컴퓨팅	compute computing
컴프리헨션	comprehension
켜	enable start
코드	code
코루틴	coroutine async
코사인	cos
코어	cpu count cores
콘솔	console terminal
콘텍스트	context ctx
콘텐츠	content
콘텐츠타입	content_type mimetype
콘텐트타입	content_type mimetype
콜러블	callable
콜백	callback
콜스택	stack frame
콤마	comma
쿠키	cookie cookies
쿠키저장소	cookiejar
쿼리	query
쿼리스트링	querystring query
큐	queue
크	larger greater
크게	larger greater
크기	size len
크기조절	resize
크레이트	crate
크론	cron schedule
크롤링	crawl scrape
큰	larger greater big
큰따옴표	double quote
클라우드	cloud
클라이언트	client
클래스	class cls
클래스메서드	classmethod
클러스터	cluster
클로저	closure nonlocal
클로즈	close
클론	clone
클릭	click
클립보드	clipboard
키	key
키값	key value
키링	keyring
키보드	keyboard key
키우	grow enlarge increase expand
키워드	keyword kwargs
키워드인자	kwargs keyword
키입력	keypress key input
키함수	key
킬	kill
타겟	target
타르	tar tarfile
타이머	timer
타임델타	timedelta
타임스탬프	timestamp
타임아웃	timeout
타임존	timezone tz
타입	type typing
타입검사	isinstance typecheck type
타입변환	convert cast
타입체크	isinstance typecheck
타입힌트	type hint annotation typing
탐색	search walk traverse
탐지	detect
태그	tag
태스크	task
탭	tab tabs expandtabs
터널	tunnel
터미널	terminal tty
터틀	turtle
테두리	border
테마	theme
테스트	test unittest
테스트스위트	suite testsuite
테스트케이스	testcase test
테이블	table
테이크	take
텍스처	texture
텍스트	text
텔레메트리	telemetry
템플릿	template
토글	toggle
토크나이저	tokenizer tokenize
토큰	token
토큰화	tokenize tokenizer
토픽	topic
통계	statistics stats
통과	pass passed
통신	communication
통합	integrate merge
통화	currency
투명	transparent
튜플	tuple
트래픽	traffic
트랙	track
트랜잭션	transaction
트랜지션	transition
트레이	tray
트레이스	trace traceback
트레이스백	traceback
트레이트	trait
트레잇	trait
트리	tree
트리거	trigger
트리밍	trim trimming
트림	trim strip
특수	special
특수문자	special punctuation escape
특정	specific
틀린	wrong invalid
티씨피	tcp
티어다운	teardown
티켓	ticket
파라미터	parameter param
파란	blue
파란색	blue
파서	parser
파싱	parse parser
파이썬	python
파이프	pipe
파이프라인	pipeline pipe
파일	file
파일명	filename name
파일목록	listdir files glob scandir
파일시스템	filesystem fs os
파일이름	filename name
파일인지	isfile file
파일크기	getsize size st_size
파티션	partition
파편	fragment
판단	determine decide check
판별	check detect determine
팔레트	palette
패닉	panic
패딩	pad padding zfill
패스	path
패스워드	password passwd getpass
패치	patch
패키지	package
패키징	packaging package
패킷	packet
패턴	pattern
팩토리	factory
팩토리얼	factorial
퍼블릭	public
퍼센트	percent quote
퍼센트인코딩	quote urlencode percent
퍼지	fuzzy
퍼포먼스	performance perf
펌웨어	firmware
펑션	function func
페어링	pair pairing
페이로드	payload
페이지	page
페이지네이션	pagination page
편집	edit
편집기	editor
펼치	flatten expand unpack
평가	eval evaluate
평균	mean average avg
평문	plaintext plain
평탄화	flatten
폐기	deprecated deprecation
포그라운드	foreground
포드	pod
포매터	formatter
포매팅	format formatting
포맷	format
포맷터	formatter
포맷팅	format formatting
포스트	post
포워딩	forwarding forward
포인터	pointer ptr
포인트	point
포커스	focus
포크	fork
포트	port
포함	contains include in
폭	width
폰트	font
폴더	folder directory dir
폴더명	dirname directory
폴리곤	polygon
폼	form
표	table
표본	sample
표시	display show
표준	standard std
표준에러	stderr
표준오류	stderr
표준입력	stdin input
표준입출력	stdin stdout
표준출력	stdout print
표준편차	stdev
표현	repr representation expression
표현식	expression expr
푸시	push
풀	pool
풀기	extract unzip unpack
풀다	extract unzip unpack
풀어	extract unpack
퓨처	future
프라이빗	private
프레임	frame
프로그래머	programmer program
프로그래밍	programming program
프로그램	program
프로그레스바	progressbar progress bar
프로덕션	production prod
프로미스	promise
프로브	probe
프로세서	processor cpu
프로세스	process
프로세스아이디	pid getpid
프로세스풀	pool processpoolexecutor
프로젝트	project
프로즌셋	frozenset
프로토콜	protocol
프로파일	profile profiler cprofile
프로파일러	profiler cprofile
프로파일링	profile profiler
프로퍼티	property attribute attr
프로필	profile
프록시	proxy
프론트엔드	frontend
프롬프트	prompt input
프리셋	preset
프리퀀시	frequency freq
프린터	printer
프린트	print
플래그	flag flags
플래시	flash
플랫맵	flatmap flat
플랫폼	platform
플러그인	plugin
플러시	flush
플레이북	playbook
플레이스홀더	placeholder
플레이어	player
플로트	float
피드	feed
피드백	feedback
피보나치	fibonacci fib
피어	peer
피클	pickle
피하	avoid
피하는	avoid
피하려면	avoid
픽셀	pixel
픽스처	fixture setup
필드	field
필수	required
필터	filter
핍	pip ensurepip
핑	ping
하나씩	iterate each
하드웨어	hardware
하위	sub child
하위디렉터리	subdirectory subdir walk
하위명령	subcommand subparsers
하위클래스	subclass
하위폴더	subdirectory subdir walk
하위프로세스	subprocess
하이라이트	highlight
하이브리드	hybrid
한글	hangul unicode
한번	once
한줄	line
할당	alloc allocate assign
함수	function func
합	sum
합계	sum total
합성	composite compose
합집합	union
합쳐	merge join combine
합치	merge join combine
합치기	join merge concat
합친	merged merge join
합칠	merge join combine
항목	item entry items
해결	resolve solve fix
해독	decrypt decode
해상도	resolution
해석	resolve interpret
해시	hash hashlib digest
해시값	hash digest hexdigest
해시맵	dict hash mapping hashmap map
해시테이블	hashtable hash dict
해싱	hash hashlib
해제	extract decompress release unlock
핸드셰이크	handshake
핸들	handle
핸들러	handler
핸들링	handling handle
행	row line
행렬	matrix
허수	imaginary imag complex
허용	allow permit
헤더	header headers
헤드리스	headless
헬퍼	helper util
현재	current now
현재디렉터리	getcwd cwd
현재스레드	current_thread
현재폴더	getcwd cwd
현지시간	localtime local
형변환	cast convert
형식	format type
형제	sibling
호스트	host hostname
호스트명	hostname gethostname
호스팅	hosting host
호출	call invoke
호출가능	callable
호출스택	stack frame traceback
호환	compat compatible
홀수	odd
홈	home
화면	screen display
화면지우기	clear cls
화이트리스트	whitelist allowlist
화폐	currency money
확대	zoom enlarge
확률	probability
확인	check verify
확장	extend expand extension
확장자	extension suffix ext
환경	environment env
환경변수	environ env getenv
환경설정	config configuration settings
활성	active enabled
활성화	enable activate
회전	rotate rotation
획득	acquire
횟수	count times
효율적	efficient
후	after later
후위	postorder postfix
후입선출	lifo stack
훅	hook
휴지통	trash
흰색	white
히스토그램	histogram
히스토리	history
힌트	hint hints
힙	heap heapq
'''
KOREAN_GLOSSARY = read_glossary(KOREAN_GLOSSARY_TEXT)


# English words that name the same thing in code, one group a line.  A question's word
# also looks for the others in its group, at SYNONYM_WEIGHT.
ENGLISH_SYNONYMS_TEXT = '''
folder directory dir
subfolder subdirectory subdir
delete remove unlink rm erase rmdir removedirs rmtree del
create make new mk build mkdir makedirs
copy clone duplicate dup
move rename mv
executable program binary exe
biggest largest max maximum highest nlargest
smallest min minimum lowest nsmallest
begin start beginning
finish end complete done
stop halt terminate kill
wait join block
run execute exec call invoke
current now today
random rand rng
check validate verify test chk
convert transform cast coerce strconv
parse decode read
write dump save store persist
load read restore
print display show output println printf
text string str txt
number num int integer
list sequence array arraylist
dict mapping map dictionary hashmap
error exception err failure exc
warning warn
message msg
argument arg param parameter args argv params
option flag opt opts
command cmd
environment env environ
variable var
temporary temp tmp tempfile mkstemp mkdtemp
configuration config conf settings cfg
connection conn connect
address addr
password passwd getpass
directory dir folder
file path
size length len sz getsize
count number total cnt
sum total add
average mean avg
combine join merge concatenate concat
split separate divide
replace substitute sub
search find lookup locate
match matches fnmatch
pattern regex re regexp
compress zip gzip deflate
decompress unzip extract inflate
archive tar zip
encrypt cipher
hash digest checksum hashcode md5 sha1 sha256 crc crc32
timeout deadline limit
retry again repeat
schedule enter delay
thread threading
process subprocess proc
lock mutex
queue fifo
async asyncio coroutine coro
callback handler hook cb
url uri link href
web http html
email mail message smtp
header headers hdr
date day calendar
time clock timestamp ts
year annual
month monthly
week weekly
escape quote
unescape unquote
indent indentation
wrap fill
shorten truncate abbreviate
similar close fuzzy
grow expand enlarge resize
difference diff delta
sort order sorted
reverse reversed backwards
unique distinct dedupe uniq dedup deduplicate
duplicate copy deepcopy
object instance obj
class type
function func callable fn
method meth
attribute attr property prop props
module package
import load require
traceback stack trace
debug debugger breakpoint pdb dbg
log logging logger
profile profiler
memory mem cache
cache memoize lru
generator iterator iter gen
loop iterate
user username usr
home expanduser homedir
browser webbrowser
terminal console tty
screen display
color colour
picture image img pic
buffer buf
source src
destination dest dst
target tgt
previous prev
current cur curr
original orig
reference ref
request req
response resp reply
library lib
package pkg crate
position pos offset
increment incr inc
decrement decr dec
calculate compute calc
index idx
column col colno
line lineno
character char chr ch
pointer ptr
value val
context ctx
descriptor fd fileno
specification spec
information info
metadata meta
initialize init setup
initialise initialize
constructor ctor
destructor dtor finalizer
allocate alloc malloc
garbage gc
authenticate authentication auth
authorization authorize authz
certificate cert
credential credentials cred creds
document doc
documentation docs docstring
element elem el
expression expr
statement stmt
declaration declare decl
definition defn
identifier ident id
uuid guid
implementation impl implements
millisecond milliseconds ms millis msec
microsecond microseconds usec micros
nanosecond nanoseconds ns nanos nsec
second seconds sec secs
sequence seq
boolean bool
floating float double
quantity qty amount
standard std
input stdin
stdout output
utility util utils helper
miscellaneous misc
manager mgr
control ctrl ctl
system sys
operating os
repository repo
version ver
revision rev
counter cnt tally
array arr
vector vec
template tmpl tpl
format fmt sprintf
receive recv
transmit tx send
transaction txn tx
signature sig
signal sig
description desc
descending desc
ascending asc
administrator admin
application app
database db
table tbl
cursor cur
generate gen
channel chan
socket sock
network net
interface iface trait
protocol proto
packet pkt
host hostname
ip ipaddr inet
service svc
server srv
button btn
letter alpha alphabetic
digit digits numeric
whitespace space blank ws
trim strip lstrip rstrip
upper uppercase caps
lower lowercase casefold
capitalize capitalise title
insensitive ignorecase casefold
newline linefeed eol crlf
pad padding zfill ljust rjust
center centre
dedent unindent
pretty pprint prettify
representation repr tostring
separator sep delimiter delim
parenthesis paren parens
symbolic symlink
shortcut symlink link
hardlink link
permission permissions perm perms chmod
owner chown
modified mtime modification
timestamp mtime
accessed atime
created ctime birthtime
newest latest recent
oldest earliest
big large size
parent dirname
filename basename stem
extension ext suffix splitext
absolute abspath abs
relative relpath
canonical realpath resolve
cwd getcwd
chdir cd
walk traverse
wildcard glob fnmatch
entries scandir listdir readdir
flush fsync sync
synchronize sync
seek offset
append push extend
prepend unshift appendleft
dequeue popleft poll
enqueue offer
stack lifo
priority heap heapq
node vertex
optional nullable maybe
null nil undefined
default fallback
reduce fold accumulate
flatten flat
frequency freq occurrences
percent percentage pct
fraction ratio frac
power pow exponent
logarithm log ln
remainder modulo
division div quotient
multiply mul multiplication
subtract sub minus
plus add addition
greater gt
less lt
equal eq equals
compare cmp comparison
serialize marshal pickle serialise serde
deserialize unmarshal unpickle
hexadecimal hex
binary bin
encoding charset codec enc
sanitize clean scrub
tidy normalize clean
normalize normalise normpath
tokenize tokenizer lex lexer
token tok
syntax ast
evaluate eval
constant const
public exported pub
mutable mut
immutable frozen readonly
parallel concurrent concurrency
notify notification
listener observer subscriber
emit dispatch trigger
event evt
route router endpoint
payload body
download fetch urlretrieve
login signin logon
undo revert rollback
properties props
hint annotation
inherit inheritance extends subclass
superclass base super
contains includes
prefix startswith
suffix endswith
substring substr slice
datetime dt
timezone tz tzinfo
utc gmt
duration elapsed timedelta
pause sleep
benchmark timeit perf
performance perf
assertion assert
mock fake stub
prompt ask input
shell sh bash
windows win32 nt
mac macos darwin osx
processor cpu
interrupt sigint keyboardinterrupt
exit quit
dependency dep deps
enumeration enum
markdown md
comma csv
yaml yml
language lang
filesystem fs
condition cond
predicate pred
operator op ops
expiry expiration ttl
batch chunk
pagination paginate page
depth level
level lvl
anonymous lambda
decorator wraps wrapper
result res
future promise deferred
cancel abort
exist exists
identical samefile
mimetype mime
watch monitor
pick choose choice
launch spawn popen
throw raise
catch except rescue
panic crash
nearest closest
guess detect sniff infer
structure struct
'''
ENGLISH_SYNONYMS = read_synonyms(ENGLISH_SYNONYMS_TEXT)

# English phrasal verbs, one a line: the verb and its particle, then the words code uses
# for what the two say together.  A question's phrase is searched as those words, at
# PHRASAL_VERB_WEIGHT and without their synonyms, since each is the sense meant (join of
# wait for, not of strings); the verb's own word, if listed, as any word of the question.
# Not phrases a noun can make: the logs in a folder, the sign in front of a number.
ENGLISH_PHRASAL_VERBS_TEXT = '''
go through: iterate walk traverse
walk through: walk iterate traverse
loop through: loop iterate walk traverse
loop over: loop iterate walk traverse
step through: step iterate
look up: lookup look find get resolve
look for: find search locate
look through: search scan find
find out: determine detect find
figure out: determine detect guess infer
work out: compute calculate determine
set up: setup configure config init
start up: startup start init
shut down: shutdown close stop
tear down: teardown cleanup
clean up: cleanup clean
break up: split chunk
split up: split partition
put together: join build combine
give up: timeout cancel abort
hand out: acquire allocate
throw away: discard drop remove
throw out: discard evict remove
fill in: fill populate default
line up: align pad
pull out: extract
pick out: select extract
cut off: truncate
turn on: enable
turn off: disable
back up: backup copy
write out: write flush dump
wait for: wait join await
fall back: fallback default
carry out: perform execute run
wake up: wake notify signal
call back: callback
'''
ENGLISH_PHRASAL_VERBS = read_phrasal_verbs(ENGLISH_PHRASAL_VERBS_TEXT)


# --- Data: the page `serve` shows ------------------------------------------------------
# One page, nothing fetched from elsewhere: it calls the JSON API and builds every
# element with textContent, so no indexed text is ever read as HTML.

PAGE_SCRIPT = r'''
const $ = (id) => document.getElementById(id);
const MODES = ['search', 'symbol', 'grep'];
let mode = 'search';

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function escapeRegex(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

function questionWords(text) {
  return text.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter((word) => word.length > 1);
}

function highlighter() {
  const text = $('q').value.trim();
  if (!text) return null;
  if (mode === 'grep') {
    const fixed = $('fixed').checked, folded = !fixed && text.startsWith('(?i)');
    const source = fixed ? escapeRegex(text) : folded ? text.slice(4) : text;
    try { return new RegExp(source, folded ? 'gi' : 'g'); }   // as grep matches: case
    catch (error) { return null; }                              // counts unless (?i)
  }
  const words = questionWords(text);
  return words.length ? new RegExp(words.map(escapeRegex).join('|'), 'giu') : null;
}

function marked(text, pattern) {
  const part = document.createDocumentFragment();
  if (!pattern) { part.append(text); return part; }
  let last = 0;
  pattern.lastIndex = 0;
  for (let match; (match = pattern.exec(text)); ) {
    if (match[0] === '') { pattern.lastIndex += 1; continue; }
    part.append(text.slice(last, match.index), el('mark', '', match[0]));
    last = match.index + match[0].length;
  }
  part.append(text.slice(last));
  return part;
}

function codeBlock(text, first, pattern, isHit) {
  const block = el('pre', 'code');
  text.split('\n').forEach((line, offset) => {
    const number = first + offset;
    const row = el('div', isHit && isHit(number) ? 'row hit' : 'row');
    row.dataset.line = String(number);
    const source = el('span', 'src');
    source.append(marked(line, pattern));
    row.append(el('span', 'no', String(number)), source);
    block.append(row);
  });
  return block;
}

function where(hit) {
  const repo = $('repo').options.length > 2 ? hit.repo + ':' : '';
  return `${repo}${hit.path}:${hit.start}-${hit.end}`;
}

async function api(path, params) {
  const response = await fetch(path + '?' + new URLSearchParams(params));
  let body;
  try { body = await response.json(); } catch (error) { body = {}; }
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function formParams() {
  const params = {};
  const text = $('q').value.trim();
  if (text) params[mode === 'search' ? 'q' : mode === 'symbol' ? 'name' : 'pattern'] = text;
  if ($('repo').value) params.repo = $('repo').value;
  if (mode !== 'symbol' && $('lang').value) params.lang = $('lang').value;
  if (mode !== 'symbol' && $('path').value.trim()) params.path = $('path').value.trim();
  if (mode === 'grep' && $('fixed').checked) params.fixed = '1';
  return params;
}

function setMode(next) {
  mode = MODES.includes(next) ? next : 'search';
  for (const name of MODES) $('mode-' + name).setAttribute('aria-pressed', String(name === mode));
  $('fixed-box').hidden = mode !== 'grep';
  $('q').placeholder = {search: 'a question, in English or Korean (세금 포함 합계)',
                        symbol: 'a name: total_with_tax, Invoice.total_with_tax',
                        grep: 'a regular expression, or text with "literal"'}[mode];
}

function hitCard(hit, pattern) {
  const card = el('article', 'hit-card');
  const head = el('button', 'hit-head');
  head.type = 'button';
  head.append(el('strong', 'symbol', hit.symbol), el('span', 'where', where(hit)),
              el('span', 'badge', hit.language || ''));
  if (hit.stale) head.append(el('span', 'badge stale', 'changed since indexing'));
  head.addEventListener('click', () => openFile(hit.repo, hit.path, hit.start, hit.end));
  card.append(head, codeBlock(hit.text || '', hit.start, pattern));
  return card;
}

function grepCards(result, pattern) {
  const files = new Map();
  for (const match of result.matches) {
    const key = match.repo + '\u0000' + match.path;
    if (!files.has(key)) files.set(key, []);
    files.get(key).push(match);
  }
  const cards = [];
  for (const matches of files.values()) {
    const first = matches[0];
    const card = el('article', 'hit-card');
    const head = el('button', 'hit-head');
    head.type = 'button';
    head.append(el('strong', 'symbol', first.path),
                el('span', 'where', `${matches.length} line${matches.length > 1 ? 's' : ''}`));
    head.addEventListener('click', () => openFile(first.repo, first.path, first.line, first.line));
    const block = el('pre', 'code');
    for (const match of matches) {
      const row = el('div', 'row');
      const source = el('span', 'src');
      source.append(marked(match.text, pattern));
      row.append(el('span', 'no', String(match.line)), source);
      if (match.symbol) row.title = match.symbol;
      row.addEventListener('click', () => openFile(match.repo, match.path, match.line, match.line));
      block.append(row);
    }
    card.append(head, block);
    cards.push(card);
  }
  return cards;
}

async function run() {
  const params = formParams();
  const query = new URLSearchParams(Object.assign({mode}, params));
  history.replaceState(null, '', '?' + query);
  const results = $('results');
  results.replaceChildren();
  if (!$('q').value.trim()) { $('status').textContent = ''; return; }
  $('status').textContent = 'searching…';
  try {
    const pattern = highlighter();
    let cards;
    if (mode === 'grep') {
      const result = await api('/api/grep', params);
      cards = grepCards(result, pattern);
      $('status').textContent = `${result.matches.length} matching lines in ${cards.length} files` +
        (result.truncated ? ' (more: narrow the path)' : '');
    } else {
      params.top_k = '20';
      const result = await api(mode === 'search' ? '/api/search' : '/api/symbol', params);
      cards = result.results.map((hit) => hitCard(hit, pattern));
      $('status').textContent = cards.length ?
        `${cards.length} result${cards.length > 1 ? 's' : ''}` : 'nothing found';
    }
    results.append(...cards);
  } catch (error) {
    $('status').textContent = 'error: ' + error.message;
  }
}

async function openFile(repo, path, start, end) {
  try {
    const file = await api('/api/read', {repo, path});
    $('viewer-title').textContent = `${repo}:${path} (${file.total_lines} lines)`;
    const block = codeBlock(file.text, file.start, highlighter(), (n) => n >= start && n <= end);
    $('viewer-body').replaceChildren(block);
    $('viewer').hidden = false;
    const target = block.querySelector('.hit');
    if (target) target.scrollIntoView({block: 'center'});
    $('viewer-close').focus();
  } catch (error) {
    $('status').textContent = 'error: ' + error.message;
  }
}

function closeViewer() { $('viewer').hidden = true; $('q').focus(); }

async function start() {
  try {
    const health = await api('/api/health', {});
    for (const label of health.repos) $('repo').append(new Option(label, label));
    for (const language of health.languages) $('lang').append(new Option(language, language));
  } catch (error) {
    $('status').textContent = 'error: ' + error.message;
  }
  const given = new URLSearchParams(location.search);
  setMode(given.get('mode') || 'search');
  $('q').value = given.get('q') || given.get('name') || given.get('pattern') || '';
  $('repo').value = given.get('repo') || '';
  $('lang').value = given.get('lang') || '';
  $('path').value = given.get('path') || '';
  $('fixed').checked = given.get('fixed') === '1';
  if ($('q').value) run();
  $('q').focus();
}

for (const name of MODES) {
  $('mode-' + name).addEventListener('click', () => { setMode(name); run(); });
}
$('form').addEventListener('submit', (event) => { event.preventDefault(); run(); });
$('viewer-close').addEventListener('click', closeViewer);
document.addEventListener('keydown', (event) => {
  const typing = ['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement.tagName);
  if (event.key === '/' && !typing) { event.preventDefault(); $('q').focus(); $('q').select(); }
  if (event.key === 'Escape' && !$('viewer').hidden) closeViewer();
});
start();
'''

PAGE_HTML = '''<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>code search</title>
<style>
:root { --ink: #1d232b; --soft: #5b6673; --line: #d9dee4; --mark: #ffe27a; --hit: #e3efff;
        --accent: #1f5fbf; font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans KR",
        sans-serif; color: var(--ink); }
body { margin: 0; background: #f6f7f9; }
header { background: #fff; border-bottom: 1px solid var(--line); padding: 12px 16px; }
h1 { font-size: 18px; margin: 0 0 8px; }
form { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
#q { flex: 1 1 320px; min-width: 0; font-size: 16px; padding: 8px 10px;
     border: 1px solid var(--line); border-radius: 6px; }
select, #path, button { font-size: 14px; padding: 7px 9px; border: 1px solid var(--line);
                        border-radius: 6px; background: #fff; }
#path { flex: 0 1 160px; min-width: 0; }
.modes { display: flex; gap: 4px; margin-bottom: 8px; }
.modes button[aria-pressed="true"] { background: var(--accent); color: #fff;
                                      border-color: var(--accent); }
main { max-width: 1100px; margin: 0 auto; padding: 12px 16px 40px; }
#status { color: var(--soft); font-size: 14px; margin: 4px 0 12px; }
.hit-card { background: #fff; border: 1px solid var(--line); border-radius: 8px;
            margin-bottom: 12px; overflow: hidden; }
.hit-head { display: flex; flex-wrap: wrap; gap: 10px; align-items: baseline; width: 100%;
            text-align: left; border: 0; border-bottom: 1px solid var(--line);
            border-radius: 0; background: #fafbfc; cursor: pointer; padding: 8px 12px; }
.hit-head:hover, .hit-head:focus { background: var(--hit); }
.symbol { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
          overflow-wrap: anywhere; }
.where { color: var(--soft); font-size: 13px; overflow-wrap: anywhere; }
.badge { font-size: 12px; border: 1px solid var(--line); border-radius: 10px;
         padding: 0 8px; color: var(--soft); }
.badge.stale { border-color: #c98a00; color: #8a5a00; }
.code { margin: 0; padding: 6px 0; overflow-x: auto; font-size: 13px; line-height: 1.45;
        font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.row { display: flex; white-space: pre; }
.row.hit { background: var(--hit); }
.no { flex: 0 0 auto; min-width: 3.5em; padding: 0 10px 0 8px; text-align: right;
      color: var(--soft); user-select: none; }
.src { padding-right: 12px; }
mark { background: var(--mark); color: inherit; border-radius: 2px; }
#viewer { position: fixed; inset: 4vh 4vw; background: #fff; border: 1px solid var(--line);
          border-radius: 8px; box-shadow: 0 8px 40px rgba(0,0,0,.25); display: flex;
          flex-direction: column; }
#viewer[hidden] { display: none; }
#viewer-bar { display: flex; justify-content: space-between; gap: 8px; align-items: center;
              padding: 8px 12px; border-bottom: 1px solid var(--line); }
#viewer-title { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px;
                overflow-wrap: anywhere; }
#viewer-body { overflow: auto; flex: 1; }
@media (max-width: 600px) { #viewer { inset: 0; border-radius: 0; } h1 { font-size: 16px; } }
</style>
</head>
<body>
<header>
<h1>code search</h1>
<div class="modes" role="group" aria-label="mode">
<button type="button" id="mode-search" aria-pressed="true">Search</button>
<button type="button" id="mode-symbol" aria-pressed="false">Symbol</button>
<button type="button" id="mode-grep" aria-pressed="false">Grep</button>
</div>
<form id="form" role="search">
<input id="q" name="q" type="search" autocomplete="off" aria-label="question">
<select id="repo" aria-label="repository"><option value="">all repositories</option></select>
<select id="lang" aria-label="language"><option value="">all languages</option></select>
<input id="path" type="text" placeholder="path glob" aria-label="path glob">
<label id="fixed-box" hidden><input id="fixed" type="checkbox"> literal</label>
<button type="submit">Search</button>
</form>
</header>
<main>
<div id="status" role="status"></div>
<div id="results"></div>
</main>
<section id="viewer" hidden aria-label="file">
<div id="viewer-bar"><span id="viewer-title"></span>
<button type="button" id="viewer-close">Close (Esc)</button></div>
<div id="viewer-body"></div>
</section>
<script>''' + PAGE_SCRIPT + '''</script>
</body>
</html>
'''
PAGE_POLICY = ("default-src 'none'; script-src 'sha256-"
               + base64.b64encode(hashlib.sha256(PAGE_SCRIPT.encode()).digest()).decode()
               + "'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; "
               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


if __name__ == '__main__':
    sys.exit(main())

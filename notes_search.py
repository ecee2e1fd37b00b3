#!/usr/bin/env python3
"""Search a folder of Markdown notes by paragraph; the index follows edits and deletions.

    notes_search.py index FOLDER [--out index.json] [--hidden] [--max-file-size BYTES]
                          [--jobs N]
    notes_search.py search QUESTION [--index index.json] [--tag TAG]... [--path GLOB]...
                           [--top-k 3] [--explain] [--json]
    notes_search.py tags [--index index.json] [--json]
    notes_search.py serve [--index index.json] [--port 8766]   a local page and JSON API

A note is cut into chunks at blank lines and headings (ATX `#` and setext; never inside
``` or ~~~ fences).  Each chunk keeps its heading path, which a `title:` in YAML front
matter heads.  Tags come from that front matter, a `tags:` line before the body and
inline #tags.  Ranking is BM25 over words and Hangul syllable bigrams (trailing
particles stripped), heading words counting HEADING_WEIGHT times in every chunk under
the heading (its subsections' too), plus a share of the whole note's BM25.  A paragraph
that introduces a code block or list (it ends with ':') is shown and scored with it,
and at most MAX_HITS_PER_NOTE hits come from one note.

`index` re-reads only notes whose size, mtime or SHA-256 changed and drops deleted
ones.  It follows no symbolic links, reads regular files only, skips dot-names
(unless --hidden), version-control and cache folders, virtualenvs, and notes over
--max-file-size, reporting each note it leaves out on stderr as `path:line: reason`.
A hit whose note changed or vanished since indexing is marked stale.

Exit status: 0 the command did its job (also: no hits, notes skipped); 1 the index
or the output could not be written; 2 misuse or an unusable index; 130 or 143
interrupted.
This file is code_search.py's twin: the parts they share have the same names.
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
import base64
import collections
import contextlib
import datetime
import functools
import gc
import hashlib
import heapq
import io
import itertools
import json
import math
import re
import secrets
import shlex
import stat
import time
import unicodedata
import zlib
from typing import NamedTuple

try:
    import fcntl
except ImportError:      # Windows: fall back to an exclusive lock file
    fcntl = None

# --- Settings: weights, limits and versions -------------------------------------------
# Change a weight here and the next search uses it; no re-index needed.  The limits and
# error classes below that code_search also has carry the same names there.

TOOL = 'notes_search'
__version__ = '1.1.0'
FORMAT_VERSION = 6          # layout of the index file (6: the checksum covers the root)
PARSER_VERSION = 13         # how notes become chunks; the tutorial's parser was 1
                            # (13: tags in composed form, NFC, as questions are)
TOKENIZER_VERSION = 7       # how text becomes terms; a change re-parses every note
                            # (7: 최댓값 and 최대값, 갯수 and 개수 spelled one way,
                            # KOREAN_SPELLINGS)

DEFAULT_INDEX = 'index.json'     # the tutorial's name; code_search's is code_index.json
DEFAULT_TOP_K = 3
QUESTION_LIMIT = 4096       # characters of a question: a pasted message fits, a file does not
HEADING_WEIGHT = 2          # a heading word counts as this many body words (tutorial: 2)
BM25_K1 = 1.2
BM25_B = 0.75               # how much a paragraph's length lowers its score
NOTE_BM25_B = 0.3           # the same for a whole note: a long note covers more ground
                            # (tldr: magick's page above a one-line resizer; +0.03 MRR)
NOTE_WEIGHT = 0.6           # a paragraph also scores this share of its whole note's BM25
MAX_HITS_PER_NOTE = 2       # hits shown from one note while other notes match (0: no limit)
JOIN_INTRODUCTIONS = True   # a paragraph ending in ':' and the block (code, list) it
                            # introduces are one hit, scored as the better of the two
                            # (adding a quarter of the other's lost 0.035 of MRR)

NOTE_SUFFIX = '.md'
MAX_FILE_SIZE = 10 * 1024 * 1024   # larger notes are skipped (--max-file-size)
NOTES_PER_JOB = 500         # notes a worker process reads and posts at a time
POSTING_BUCKETS = 1024      # postings live in this many strings (see Index records)
TEXT_BUCKETS = 256          # stored note texts live in this many compressed strings
TEXT_COMPRESSION = 1        # zlib level: fast, and a hit decompresses little
LOCK_TIMEOUT_SECONDS = 60.0
LOCK_NOTICE_SECONDS = 1.0   # a run that waits this long for the lock says so
WRITE_PIECE = 1 << 20       # an index is written in pieces of this many characters
RACY_MTIME_NS = 2 * 10 ** 9  # files changed this close to an index run are re-hashed
PROGRESS_INTERVAL = 0.2     # seconds between updates of the progress line
WORKER_WATCH_SECONDS = 0.5  # how often a worker process checks that its parent lives
SERVE_HOST, SERVE_PORT = '127.0.0.1', 8766   # serve: where it listens by default
SERVE_CLIENT_TIMEOUT = 10   # seconds a client may take to send its request
API_QUERY_LIMIT = 4096      # characters of a request's query string
API_FIELDS_LIMIT = 64       # parameters of one request
API_BODY_LIMIT = 1 << 20    # bytes of a POST body
API_TOP_K, API_TOP_K_LIMIT = 10, 100   # /api/search's results: by default, at most

SKIP_DIRS = {'.git', '.hg', '.svn', '__pycache__', 'node_modules', '.tox',
             '.mypy_cache', '.pytest_cache'}
LINK_REASON = 'skipped: symbolic link (not followed)'   # links are never followed
SPECIAL_REASON = 'skipped: not a regular file'   # a FIFO, socket or device: never opened
NOT_UTF8_REASON = 'skipped: name is not valid UTF-8'
LINE_BREAK_REASON = 'skipped: name holds a line break'
GONE_REASON = 'skipped: no longer there (deleted or moved)'
PERMISSION_REASON = 'skipped: permission denied'
STOP_WORDS = frozenset(          # words any question carries, which say nothing of the answer
    'a an and are as at be by for from in into is it of on or that the this to with '
    'how do does did i me my what which can could should would we you your there '
    'why when where who whom something thing things like want need way'.split())
KOREAN_QUESTION_WORDS = frozenset(   # the same in Korean: whole words, particles off
    '어떻게 어떡해 무엇 무엇인가요 무엇인지 뭐 뭐가 뭔가요 뭐야 왜 언제 어디 어디서 방법 '
    '하면 하려면 수 있나요 있을까요 되나요 하나요 할까요 싶어요 싶습니다 주세요 알려주세요'.split())
KOREAN_PARTICLES = frozenset(
    '은 는 이 가 을 를 의 에 도 만 와 과 로 랑 께 '
    '으로 에서 에게 한테 까지 부터 처럼 보다 마다 조차 이나 이랑 에는 에도 와는 과는 로는 께서 '
    '으로는 에서는 에서도 에게서 으로서 으로써 로부터'.split())
MIN_STEM_SYLLABLES = 2      # strip a particle only if this much of the word is left
NOT_FOUND_MESSAGE = '일치하는 메모를 찾지 못했습니다.'
NO_TAGS_MESSAGE = '태그가 있는 메모가 없습니다.'
TAGS_AFTER_BODY = 'tags는 본문보다 먼저 한 줄에 적으세요.'


class SkipFile(Exception):
    """A file that cannot be indexed; carries the line (0 if none) and the reason."""

    def __init__(self, reason, line=0):
        super().__init__(reason)
        self.reason, self.line = reason, line


class IndexProblem(Exception):
    """An index file that cannot be used (exit status 2) or written (exit status 1)."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


class NoteSyntaxError(ValueError):
    """A note breaks the tutorial's rules; line says where (1-based)."""

    def __init__(self, message, line):
        super().__init__(message)
        self.line = line


class IndexOptions(NamedTuple):
    """What `index` reads and how: the command line's choices."""
    hidden: bool = False
    strict: bool = False        # the tutorial's API: raise instead of skipping a note
    max_file_size: int = MAX_FILE_SIZE
    exclude: tuple = ()         # absolute paths never indexed (the index file itself)
    jobs: int = 0               # worker processes (0: one per core)


def program_name():
    """The name this program was started as: this file's name, or a console script's."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ''
    this_file = sys.modules.get('__main__') is sys.modules.get(__name__)
    return name if this_file or TOOL.split('_')[0] + '-search' in name else f'{TOOL}.py'


# --- Reading files: walking the root, and what is skipped ------------------------------
# The same walk as code_search's, except that notes do not honour .gitignore: notes kept
# out of git are often private drafts, and still the user's notes to search.

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


def walk_tree(root, options):
    """Yield a Listed record for every note under root and every path left out, folder
    by folder, each sorted.  Never follows symbolic links and opens nothing but folders
    here."""
    exclude = {os.path.normcase(os.path.realpath(p)) for p in options.exclude}
    pending = [(str(root), '')]
    while pending:
        folder, prefix = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as error:
            yield Listed(prefix or '.', reason=f'skipped: cannot list folder: {error.strerror}')
            continue
        subfolders = []
        for entry in entries:
            relative = prefix + entry.name
            unfit = name_problem(entry.name)   # no answer, line or JSON could carry the name
            if unfit:
                relative = relative.encode('utf-8', 'backslashreplace').decode() \
                    .replace('\n', '\\n').replace('\r', '\\r')
            wanted = entry.name.endswith(NOTE_SUFFIX)
            try:
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
            except OSError as error:
                yield Listed(relative, reason=f'skipped: cannot stat: {error.strerror}')
                continue
            if is_link:
                if wanted or os.path.isdir(entry.path) or not os.path.exists(entry.path):
                    yield Listed(relative, reason=LINK_REASON)
                continue
            if entry.name.startswith('.') and not options.hidden:
                if is_dir or wanted:
                    yield Listed(relative + '/' * is_dir, reason='hidden', quiet=True)
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
                    subfolders.append((entry.path, relative + '/'))
                continue
            if not wanted or os.path.normcase(entry.path) in exclude:
                continue
            try:
                regular = entry.is_file(follow_symlinks=False)
            except OSError:
                regular = False
            if not regular:
                yield Listed(relative, reason=SPECIAL_REASON)
                continue
            yield Listed(relative, reason=unfit) if unfit else Listed(relative, entry.path)
        pending.extend(reversed(subfolders))


def inside_folder(path, folder):
    """Whether a normalised path is folder or below it (never across Windows drives)."""
    try:
        return os.path.commonpath([path, folder]) == os.path.normpath(folder)
    except ValueError:                              # another drive, or relative and absolute
        return False


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


def binary_reason(data):
    """Why a file holding NUL bytes is skipped: UTF-16 text (its byte order mark, then
    16-bit units none of which is NUL) is named as such, since saving it as UTF-8 is all
    it needs."""
    if data.startswith((b'\xff\xfe', b'\xfe\xff')) and len(data) % 2 == 0 \
            and 0 not in memoryview(data).cast('H')[1:]:
        return 'skipped: UTF-16 text (save it as UTF-8 to index it)'
    return 'skipped: binary file (contains NUL bytes)'


def decode_note(data, strict=False):
    """A note's bytes as text (UTF-8, a BOM allowed); SkipFile for a binary file or
    other bytes, or with strict (the tutorial's API) UnicodeDecodeError."""
    if b'\0' in data:
        raise SkipFile(binary_reason(data), line_of_offset(data, data.index(b'\0')))
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as error:
        if strict:
            raise
        raise SkipFile(f'skipped: not valid UTF-8 (byte 0x{data[error.start]:02x})',
                       line_of_offset(data, error.start)) from None


def line_of_offset(data, offset):
    """1-based line number of a byte offset, counting \\r\\n, \\r and \\n as line ends."""
    return len(re.findall(rb'\r\n|\r|\n', data[:offset])) + 1


# --- Chunking: a note's lines -> paragraphs under their heading path -----------------

LINE_BREAK = re.compile(r'\r\n|\r|\n')
ATX_HEADING = re.compile(r' {0,3}(#{1,6})(?:[ \t](.*))?$')    # its title: atx_heading
SETEXT_UNDERLINE = re.compile(r' {0,3}(=+|-+)[ \t]*$')
THEMATIC_BREAK = re.compile(r' {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$')
FENCE = re.compile(r' {0,3}(`{3,}|~{3,})(.*)$')
LIST_OR_QUOTE = re.compile(r' {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)| {0,3}>')
LIST_MARKER = re.compile(r'(?:[-+*]|\d{1,9}[.)])(?= |$)')   # of a line without its indent
YAML_KEY = re.compile(r'([A-Za-z_][\w-]*)[ \t]*:(.*)$')
YAML_ITEM = re.compile(r'[ \t]*-(?:[ \t]+(.*))?$')
YAML_OTHER = re.compile(r'[ \t]+\S|[ \t]*#|[ \t]*$')
BACKTICKS = re.compile(r'`+')
URL = re.compile(r'<[^<>\s]*>|(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://\S*|www\.\S*')
INLINE_TAG = re.compile(r'(?<!\S)#(\w[\w/-]*)')
HEX_COLOUR = re.compile(r'(?=[a-f]*\d)(?:[0-9a-f]{6}|[0-9a-f]{8})')   # #1e90ff, not #2fa or #add
BLOCK_MARKERS = '`~t#=-*_'   # first characters of lines that may be more than text
TAB_STOP = 4                # CommonMark's: a tab indents to the next multiple of 4 columns
CODE_INDENT = 4             # columns past the margin or a list item's content: indented code


def stored_text(text):
    """The note as the index keeps it: no BOM, each line ending '\\n'.  Lines end at
    \\r\\n, \\r and \\n only, as the tutorial's parser split them."""
    if text.startswith('\ufeff'):
        text = text[1:]
    if '\r' in text:
        text = LINE_BREAK.sub('\n', text)
    return text if not text or text.endswith('\n') else text + '\n'


def tag_list(value):
    """Tags of `a, b`, `[a, b]` or `"#a"`: lower case, without quotes or '#' (nor the
    bracket of a list left open, `[a, b`)."""
    value = value.strip()
    if value.startswith('['):
        value = value[1:-1] if value.endswith(']') else value[1:]
    tags = (part.strip().strip('\'"').lstrip('#').strip() for part in value.split(','))
    return [tag.lower() for tag in tags if tag]


class FrontMatter(NamedTuple):
    """What a note's YAML front matter says: its tags and title, and its length."""
    tags: list
    title: str               # '' if it gives none
    lines: int               # 0 if the note has no front matter


def front_matter(lines):
    """The YAML front matter between `---` lines at the top of a note: its `tags` (a
    list or a line) and its `title`, which heads the note as a `# title` would."""
    none = FrontMatter([], '', 0)
    if not lines or lines[0].rstrip() != '---':
        return none
    tags, title, in_tags = [], '', False
    for end in range(1, len(lines)):
        line = lines[end]
        if line.rstrip() in ('---', '...'):
            return FrontMatter(tags, title, end + 1)
        key = YAML_KEY.match(line)
        if key:
            in_tags = key.group(1).lower() == 'tags'
            if in_tags:
                tags += tag_list(key.group(2))
            elif key.group(1).lower() == 'title':
                title = yaml_scalar(key.group(2))
            continue
        item = YAML_ITEM.match(line)
        if item:
            if in_tags:
                tags += tag_list(item.group(1) or '')
        elif not YAML_OTHER.match(line):
            return none
    return none


def yaml_scalar(value):
    """The text of a one-line YAML value (`Deploy notes`, `"Deploy: checklist"`); ''
    for a block (`|`, `>`) that goes on below."""
    value = value.strip()
    if value[:1] in ('"', "'") and value[-1:] == value[:1] and len(value) > 1:
        return value[1:-1].strip()
    return '' if value[:1] in ('|', '>') else value


def inline_tags(line):
    """#tags in a prose line, ignoring `code`, URLs, numbers like #12, colours like
    #FF0000 and a Korean particle after a # ('#으로 시작하는 줄': lines that start with #)."""
    prose = URL.sub(' ', without_code_spans(line))
    tags = (tag.rstrip('/-').lower() for tag in INLINE_TAG.findall(prose))
    return [tag for tag in tags if tag and not tag.isdigit() and not HEX_COLOUR.fullmatch(tag)
            and tag not in KOREAN_PARTICLES]


def without_code_spans(line):
    """line with each `code` span made a space: a run of backticks opens a span that
    the next run of as many closes (CommonMark), found in one pass over the runs, so
    that a line of a thousand backticks takes no longer than any other."""
    if '`' not in line:
        return line
    runs = [match.span() for match in BACKTICKS.finditer(line)]
    later = collections.defaultdict(collections.deque)    # run length: its run numbers
    for number, (start, end) in enumerate(runs):
        later[end - start].append(number)
    pieces, position, number = [], 0, 0
    while number < len(runs):
        start, end = runs[number]
        same = later[end - start]
        while same and same[0] <= number:
            same.popleft()
        if same:                                # closed: the span becomes one space
            pieces += [line[position:start], ' ']
            number = same.popleft()
            position = runs[number][1]
        number += 1
    return ''.join(pieces) + line[position:]


def atx_heading(line):
    """(level, title) of an ATX heading line ('## Title ##'), else None; the title
    without its closing #s, which only a space or tab may precede (CommonMark)."""
    match = ATX_HEADING.match(line)
    if not match:
        return None
    title = (match.group(2) or '').strip(' \t')
    bare = title.rstrip('#')
    return len(match.group(1)), bare.rstrip(' \t') if bare[-1:] in ('', ' ', '\t') else title


def closes_fence(fence, line):
    """True when line closes the fence opened with the marker `fence` (e.g. '````')."""
    match = FENCE.match(line)
    return bool(match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
                and not match.group(2).strip())


def list_item_content(text, indent):
    """The column at which the list item that text starts has its content, or 0 when text
    (a line after its indent of `indent` columns, tabs expanded) starts no list item.
    CommonMark: 1 to CODE_INDENT spaces after the marker; after more, or after an empty
    item's marker, the content is one column past the marker."""
    marker = LIST_MARKER.match(text)
    if not marker or THEMATIC_BREAK.match(text):
        return 0
    after = text[marker.end():]
    spaces = len(after) - len(after.lstrip(' '))
    return indent + marker.end() + (spaces if after.strip() and spaces <= CODE_INDENT else 1)


def indented_code(line, lists, in_paragraph):
    """True when line belongs to an indented code block: CODE_INDENT columns past the
    content of the list item it is in (or past the margin) and not continuing a paragraph,
    as CommonMark has it, so that `#include` in C code is no tag.  Updates lists, the
    content columns of the open list items: a less indented line closes items, unless it
    is a paragraph's lazy continuation (a line that starts no block)."""
    columns = line.expandtabs(TAB_STOP)
    text = columns.lstrip(' ')
    indent = len(columns) - len(text)
    content = list_item_content(text, indent)
    if lists and indent < lists[-1] and not (
            in_paragraph and not content and text[:1] != '>' and not ATX_HEADING.match(text)
            and not FENCE.match(text) and not THEMATIC_BREAK.match(text)):
        while lists and indent < lists[-1]:
            lists.pop()
    if indent >= (lists[-1] if lists else 0) + CODE_INDENT:
        return not in_paragraph
    if content:
        lists.append(content)
    return False


class OpenHeading(NamedTuple):
    """A heading whose section scan_note is still reading."""
    level: int
    title: str
    start: int               # its lines (two for a setext heading)
    end: int
    chunks_before: int       # how many chunks came before it


def titles(open_headings):
    """The heading path of the open headings: a title that repeats the one above it
    (a front matter's title and the `# title` under it) is in it once."""
    path = [heading.title for heading in open_headings]
    return tuple(title for number, title in enumerate(path)
                 if not number or title != path[number - 1])


def scan_note(lines):
    """A note's tags and chunks: (tags, [(start, end, heading path)]), lines 1-based.
    A note of headings only is one chunk, its headings (a front matter's title is one),
    and in another note a heading whose section holds no text is a chunk of its own, so
    that they can be found.

    Raises NoteSyntaxError for a `tags:` line after the body, as the tutorial does.
    """
    matter = front_matter(lines)
    tags, first_body_line = matter.tags, matter.lines
    blocks, open_headings, path, first_heading, last_heading = [], [], (), None, 0
    if matter.title:        # a heading above every other
        open_headings = [OpenHeading(0, matter.title, 1, first_body_line, 0)]
        path, last_heading = (matter.title,), first_body_line
        first_heading = (1, path)
    start, fence, start_has_fence = 0, None, False
    lists, in_paragraph = [], False   # see indented_code
    empty_sections = 0      # headings whose sections hold no text: chunks of their own

    def close(end):
        nonlocal start
        if start:
            blocks.append((start, end, path))
            start = 0

    def end_sections(level):
        """Close the open headings of this level or deeper; one whose section got no
        chunk is a chunk of its own heading lines, so that its words can be found."""
        nonlocal empty_sections
        while open_headings and open_headings[-1].level >= level:
            heading_path = titles(open_headings)
            heading = open_headings.pop()
            if len(blocks) == heading.chunks_before:
                blocks.append((heading.start, heading.end, heading_path))
                empty_sections += 1

    for number, line in enumerate(lines[first_body_line:], first_body_line + 1):
        if fence:
            if closes_fence(fence, line):
                fence = None
            continue
        stripped = line.strip()
        marker = stripped[:1]
        if not marker:
            close(number - 1)
            in_paragraph = False
            continue
        code = indented_code(line, lists, in_paragraph)
        in_paragraph = False   # unless the line turns out to be text, below
        if marker in BLOCK_MARKERS:
            opening = FENCE.match(line) if marker in '`~' else None
            if opening and not (marker == '`' and '`' in opening.group(2)):
                fence = opening.group(1)
                if not start:
                    start, start_has_fence = number, True
                continue
            if marker == 't' and stripped.startswith('tags:') and not code:
                if len(blocks) > empty_sections or start:      # headings are no body
                    raise NoteSyntaxError(TAGS_AFTER_BODY, number)
                tags += tag_list(stripped[5:])
                continue
            heading = atx_heading(line) if marker == '#' else None
            if heading or (marker in '=-' and start and not start_has_fence
                           and SETEXT_UNDERLINE.match(line)
                           and not LIST_OR_QUOTE.match(lines[start - 1])):
                if heading:
                    close(number - 1)
                    level, title = heading
                    tags += inline_tags(title) if '#' in title else []
                    heading_start = number
                else:
                    level = 1 if marker == '=' else 2
                    title = ' '.join(part.strip() for part in lines[start - 1:number - 1])
                    heading_start, start = start, 0
                end_sections(level)
                open_headings.append(OpenHeading(level, title, heading_start, number, len(blocks)))
                path = titles(open_headings)
                first_heading = first_heading or (heading_start, path)
                last_heading = number
                continue
            if marker in '-*_' and THEMATIC_BREAK.match(line):
                close(number - 1)
                continue
        if not start:
            start, start_has_fence = number, False
        in_paragraph = not code
        if '#' in line and not code:
            tags += inline_tags(line)
    close(len(lines))
    end_sections(1)
    if len(blocks) == empty_sections and first_heading:     # headings only: one chunk
        blocks = [(first_heading[0], last_heading, first_heading[1])]
    return list(dict.fromkeys(map(composed, tags))), blocks


def scan_text(text):
    """(tags, blocks, chunk texts) of a note's stored text (see scan_note)."""
    return scan_lines(text.split('\n')[:-1])


def scan_lines(lines):
    """(tags, blocks, chunk texts) of a note's lines."""
    tags, blocks = scan_note(lines)
    return tags, blocks, ['\n'.join(lines[start - 1:end]) for start, end, _ in blocks]


BLOCK_START = re.compile(r'```|~~~|`|    |\t|[-*+] |\d+[.)] ')


def introductions(lines, blocks):
    """Numbers of the chunks joined with the next one: a paragraph ending in ':'
    followed, under the same heading and after blank lines only, by code or a list
    that introduces nothing itself (in 'Steps:' and '- Download it:' before its code,
    the second is joined with the code, and the first with nothing), and each item of
    a loose list so introduced (items parted by blank lines) with the next item."""
    def next_to(number):
        """Whether block number+1 follows block number under its heading, after blank
        lines only."""
        (_, end, path), (start, _, next_path) = blocks[number], blocks[number + 1]
        return path == next_path and not ''.join(lines[end:start - 1]).strip()

    def ends_in_colon(number):
        return lines[blocks[number][1] - 1].rstrip().endswith(':')

    def list_item(number):
        return bool(LIST_MARKER.match(lines[blocks[number][0] - 1].lstrip()))

    found = []
    for number in reversed(range(len(blocks) - 1)):
        if ends_in_colon(number) and BLOCK_START.match(lines[blocks[number + 1][0] - 1]) \
                and next_to(number) and number + 1 not in found[-1:]:
            found.append(number)
    joined = set(found)
    for number in found:
        item = number + 1
        while item + 1 < len(blocks) and list_item(item) and list_item(item + 1) \
                and next_to(item) and not ends_in_colon(item) \
                and not ends_in_colon(item + 1):
            joined.add(item)
            item += 1
    return sorted(joined)


def index_sections(text):
    """(tags, [(heading path, [chunk text])], introductions) of a stored text: its chunks
    in runs under one heading path, which is what indexing needs of them."""
    lines = text.split('\n')[:-1]
    tags, blocks, texts = scan_lines(lines)
    runs = itertools.groupby(zip(blocks, texts), key=lambda block_text: block_text[0][2])
    return (tags, [(path, [text for _, text in run]) for path, run in runs],
            introductions(lines, blocks))


def chunk_dicts(relative, tags, blocks, texts):
    """The tutorial's chunk dicts for scanned blocks and their texts, plus heading_path."""
    return [{'id': f'{relative}:L{start}', 'path': relative,
             'heading': path[-1] if path else relative, 'heading_path': list(path),
             'start': start, 'end': end, 'tags': tags.copy(), 'text': text}
            for (start, end, path), text in zip(blocks, texts)]


def parse_note(text, relative_path):
    """The tutorial's API: chunk dicts (id, path, heading, heading_path, start, end,
    tags, text) of one note."""
    return chunk_dicts(relative_path, *scan_text(stored_text(text)))


# --- Tokens: lower-case words, Hangul words as particle-stripped bigrams --------------
# ASCII text is folded and split with a byte table (the hot path); a run holding other
# characters is split by WORD, and its Hangul words become syllable bigrams (as
# Lucene's CJK bigram filter does) so that compounds and their parts find each other.

ASCII_FOLD = bytes(code + 32 if 65 <= code <= 90
                   else code if 48 <= code <= 57 or 97 <= code <= 122 or code >= 128
                   else 32 for code in range(256))
WORD = re.compile(r'[가-힣]+|[^\W_가-힣]+')
HANGUL = re.compile(r'[가-힣]+')
ENGLISH_CLITIC = re.compile(r"(?<=[A-Za-z])['’](?:s|t|d|m|re|ve|ll)\b(?!['’=])", re.I)   # a
                        # question's user's, don't, we'll: no terms s, t, ll
PARTICLE_LENGTHS = sorted({len(particle) for particle in KOREAN_PARTICLES}, reverse=True)


def strip_particle(word):
    """A Hangul word less one trailing particle, if MIN_STEM_SYLLABLES are left."""
    for size in PARTICLE_LENGTHS:
        if len(word) - size >= MIN_STEM_SYLLABLES and word[-size:] in KOREAN_PARTICLES:
            return word[:-size]
    return word


def standard_spelling(word):
    """A Hangul word with each word of KOREAN_SPELLINGS spelled one way (디렉토리 as
    디렉터리, 최댓값 as 최대값), so that a text and a question that spell it differently meet."""
    for variant, standard in KOREAN_SPELLINGS:
        if variant in word:
            word = word.replace(variant, standard)
    return word


def hangul_terms(word):
    """Syllable bigrams of a Hangul word less its trailing particle, spelled one way
    (standard_spelling); a word of one or two syllables is its only term."""
    if word in KOREAN_PARTICLES:
        return ()
    word = strip_particle(standard_spelling(word))
    if len(word) <= 2:
        return (word,)
    return tuple([word[start:start + 2] for start in range(len(word) - 1)])


def unicode_terms(run):
    """Terms of a run of word characters holding non-ASCII ones."""
    if HANGUL.fullmatch(run):   # the common case: one Hangul word
        return hangul_terms(run)
    terms = []
    for word in WORD.findall(run.lower()):
        if HANGUL.match(word):
            terms.extend(hangul_terms(word))
        else:
            terms.append(word)
    return tuple(terms)


class RunTerms(dict):
    """{run of word characters: its terms}, so that each run is analysed once (a cache
    kept by its caller, freed with it)."""

    def __missing__(self, run):
        terms = self[run] = (run,) if run.isascii() else unicode_terms(run)
        return terms


def composed(text):
    """text in Unicode's composed form (NFC): Hangul typed on macOS or copied from its
    file names comes decomposed, and must find the same words and paths."""
    if text.isascii() or unicodedata.is_normalized('NFC', text):
        return text
    return unicodedata.normalize('NFC', text)


MNEMONIC = re.compile(r'\[([^\W\d_]{1,3})\](?=[^\W\d_])')   # tldr's E[x]tract, [c]reate


def word_runs(text):
    """The runs of word characters of text, lower-cased where ASCII, repeats kept; a
    letter in brackets inside a word (E[x]tract, as tldr marks an option) joins it."""
    text = composed(text)
    if '[' in text:
        text = MNEMONIC.sub(r'\1', text)
    return text.encode('utf-8', 'replace').translate(ASCII_FOLD).decode('utf-8').split()


def count_terms(text, run_terms):
    """{term: count} of text, stop words included; run_terms is a RunTerms."""
    runs = word_runs(text)
    counts = dict.fromkeys(runs, 1)
    if len(counts) < len(runs):       # most paragraphs repeat no word
        counts = dict.fromkeys(runs, 0)
        for run in runs:
            counts[run] += 1
    if not text.isascii():      # take out every such run before adding its terms
        for run, count in [(run, counts.pop(run)) for run in list(counts) if not run.isascii()]:
            for term in run_terms[run]:
                counts[term] = counts.get(term, 0) + count
    return counts


def analyze(text):
    """{term: count} of text: lower-case words, Hangul words as bigrams (see hangul_terms)."""
    return count_terms(text, RunTerms())


def query_terms(question):
    """The terms a question looks for: its words less those any question carries
    (STOP_WORDS, KOREAN_QUESTION_WORDS), or all of them when it has no other: 'which'
    looks for the note with that heading (the index keeps stop words of headings only)."""
    terms = list(analyze(ENGLISH_CLITIC.sub('', question)))
    carried = STOP_WORDS.union(*(hangul_terms(word) for word in
                                 HANGUL.findall(composed(question))
                                 if strip_particle(word) in KOREAN_QUESTION_WORDS))
    return [term for term in terms if term not in carried] or terms


def missing_words(question, terms, words):
    """The question's words, as typed and each once, none of whose terms a hit's
    explained words (of its paragraph or its note) has, for --explain."""
    found = {word['term'] for word in words}
    missing = {}
    for word in WORD.findall(composed(question)):
        if any(term in terms for term in analyze(word)) \
                and not any(term in found for term in analyze(word)):
            missing.setdefault(word.lower(), word)
    return list(missing.values())


def dropped_words(question, terms):
    """The question's words that gave it no term: English words every question carries
    (STOP_WORDS) and Korean ones (KOREAN_QUESTION_WORDS), for --explain."""
    return [word for word in WORD.findall(composed(question))
            if not any(term in terms for term in analyze(word))]


# --- Index records: one record per note, postings per term ---------------------------
#
# The index file is one JSON object, written with json.dumps and read with json.loads:
#   {"tool", "format_version", "parser_version", "tokenizer_version", "root",
#    "indexed_at", "scan_started_ns", "next_fid", "chunk_count", "word_count",
#    "skipped": [{"path", "line", "reason"}],
#    "files": {path: {"fid", "sha256", "size", "mtime_ns", "ctime_ns", "tags", "count",
#                     "words", "lengths", "intros"}},
#    "postings": [POSTING_BUCKETS strings], "texts": [TEXT_BUCKETS strings], "checksum"}
# A note's chunks are its paragraphs in order; "lengths" holds the word count of each,
# space-separated, and "words" their sum; "intros" the chunks joined with the next
# (see introductions).  A term's posting is a comma-separated list of
# tokens: 'fid.n' for each time the term occurs in the body of chunk n of the note whose
# file id is fid, and 'fid.first-last' (then ':k' if the heading has the term k > 1
# times) for a run of chunks under a heading that holds it.  Postings live in strings
# '|term=posting|...' chosen by the CRC-32 of the term, as in code_search, so loading
# the index creates a thousand strings instead of tens of thousands, and an update
# rewrites only the strings it touches (update_postings).  "texts" keeps
# each note's text in the string that crc32(path) chooses, as 'path\0text\0' records,
# zlib-compressed and in base64: a search decompresses only the strings of its hits.

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
        postings[term] = postings[term] + ',' + posting if term in postings else posting


def segment_mentions(fids):
    """A pattern found in every posting or bucket that holds a token of the files fids
    (and in a few more, which drop_postings reads and leaves as they are)."""
    return re.compile('(?:' + '|'.join(sorted(fids)) + r')\.')


def drop_postings(postings, fids, mentions):
    """Remove the tokens of the files fids (str), which mentions finds, from the postings."""
    for term in [term for term, value in postings.items() if mentions.search(value)]:
        kept = [token for token in postings[term].split(',')
                if token.partition('.')[0] not in fids]
        if kept:
            postings[term] = ','.join(kept)
        else:
            del postings[term]


def update_postings(buckets, records, additions):
    """The POSTING_BUCKETS strings with the tokens of the given file records dropped and
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


def heading_spans(sections, relative):
    """(heading, first chunk, last chunk) of each heading of a note's sections: a heading
    holds every chunk under it, its subsections' too, so that a title's words reach the
    paragraphs of its sections.  Chunks under no heading have the note's path."""
    spans, first = [], 0
    for number, (path, texts) in enumerate(sections):
        if not path:
            spans.append((relative, first, first + len(texts) - 1))
        for depth in range(len(path)):
            if number and sections[number - 1][0][:depth + 1] == path[:depth + 1]:
                continue                    # the span of this heading is already out
            last, following = first + len(texts) - 1, number + 1
            while following < len(sections) and \
                    sections[following][0][:depth + 1] == path[:depth + 1]:
                last += len(sections[following][1])
                following += 1
            spans.append((path[depth], first, last))
        first += len(texts)
    return [span for span in spans if span[1] <= span[2]]


def post_notes(parsed):
    """{term: [token]} of parsed notes (see the format above); fills in each record's
    chunk count, words and lengths."""
    runs_posted, postings = collections.defaultdict(list), collections.defaultdict(list)
    run_terms = RunTerms()
    for note in parsed:
        fid, lengths = note.record['fid'], []
        for heading, first, last in heading_spans(note.sections, note.relative):
            span = f'{fid}.{first}-{last}'
            for term, count in count_terms(heading, run_terms).items():
                postings[term].append(span if count == 1 else f'{span}:{count}')
        for path, texts in note.sections:
            for text in texts:
                token, runs = f'{fid}.{len(lengths)}', word_runs(text)
                for run in runs:
                    runs_posted[run].append(token)
                lengths.append(len(runs) if text.isascii()
                               else sum(map(len, map(run_terms.__getitem__, runs))))
        note.record.update(count=len(lengths), words=sum(lengths),
                           lengths=' '.join(map(str, lengths)))
    for run, tokens in runs_posted.items():     # each distinct run becomes its terms once
        for term in run_terms[run]:
            if term not in STOP_WORDS:          # kept in headings only: 'which' finds which.md
                postings[term] += tokens
    return postings


def text_bucket(relative):
    """Which of the text strings holds the note at relative."""
    return zlib.crc32(relative.encode('utf-8', 'surrogatepass')) % TEXT_BUCKETS


def pack_texts(texts):
    """One text string for {path: text}: 'path\\0text\\0' records, compressed, in base64."""
    if not texts:
        return ''
    records = ''.join(f'{relative}\0{texts[relative]}\0' for relative in sorted(texts))
    packed = zlib.compress(records.encode('utf-8', 'surrogatepass'), TEXT_COMPRESSION)
    return base64.b64encode(packed).decode('ascii')


def unpack_texts(bucket):
    """{path: text} of one text string; ValueError when it is damaged."""
    if not bucket:
        return {}
    try:
        fields = zlib.decompress(base64.b64decode(bucket, validate=True)).decode(
            'utf-8', 'surrogatepass').split('\0')
    except (ValueError, zlib.error):
        raise ValueError('stored texts are damaged') from None
    if len(fields) % 2 != 1 or fields[-1]:
        raise ValueError('stored texts end in the middle of a record')
    return dict(zip(fields[0:-1:2], fields[1::2]))


def updated_texts(buckets, texts, removed):
    """The text strings with the notes at removed paths taken out and texts {path: text}
    put in; only the strings they fall in are unpacked and packed again."""
    buckets, touched = list(buckets), collections.defaultdict(dict)
    for relative in removed:
        touched[text_bucket(relative)][relative] = None
    for relative, text in texts.items():
        touched[text_bucket(relative)][relative] = text
    for number, changes in touched.items():
        stored = unpack_texts(buckets[number])
        stored.update(changes)
        buckets[number] = pack_texts({relative: text for relative, text in stored.items()
                                      if text is not None})
    return buckets


def stored_texts(index, paths):
    """{path: stored text} of the notes at paths; ValueError when the index lacks one."""
    found = {}
    for number in {text_bucket(relative) for relative in paths}:
        found.update(unpack_texts(index['texts'][number]))
    missing = [relative for relative in paths if relative not in found]
    if missing:
        raise ValueError(f'no stored text of {missing[0]}')
    return found


# Job, run_jobs, worker_setup, update_index and unchanged have code_search's shape.
class Job(NamedTuple):
    """One file to read and index, with the file id its postings will carry."""
    relative: str
    path: str
    fid: int
    options: IndexOptions


class Parsed(NamedTuple):
    """What reading one note gave: its record, text and sections, or a skip record."""
    relative: str
    record: dict = None
    text: str = ''
    sections: list = None
    skip: dict = None


def index_one_file(job):
    """Read, hash and parse one note -> Parsed (post_notes tokenises it).  With
    options.strict a note that cannot be decoded or parsed raises, as the tutorial's
    build_index did."""
    try:
        data, info = read_file(job.path, job.options.max_file_size)
        text = stored_text(decode_note(data, job.options.strict))
        tags, sections, intros = index_sections(text)
    except SkipFile as skip:
        return Parsed(job.relative, skip=skip_record(job.relative, skip.reason, skip.line))
    except NoteSyntaxError as error:
        if job.options.strict:
            raise
        return Parsed(job.relative, skip=skip_record(job.relative, f'skipped: {error}',
                                                     error.line))
    record = {'fid': job.fid, 'sha256': hashlib.sha256(data).hexdigest(),
              **stat_fields(info), 'tags': tags, 'intros': ' '.join(map(str, intros))}
    return Parsed(job.relative, record, text, sections)


def index_batch(jobs):
    """Read, parse and tokenise a batch of notes (in a worker process when there are
    enough) -> ([Parsed without sections], {term: posting} of the batch)."""
    parsed = [index_one_file(job) for job in jobs]
    postings = post_notes([note for note in parsed if not note.skip])
    return ([note._replace(sections=None) for note in parsed],
            {term: ','.join(tokens) for term, tokens in postings.items()})


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
    import threading                # only workers need it
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
            'scan_started_ns': 0, 'next_fid': 0, 'chunk_count': 0, 'word_count': 0,
            'skipped': [], 'files': {}, 'postings': pack_postings({}),
            'texts': [''] * TEXT_BUCKETS}


def update_index(root, old, options, report=None):
    """Bring an index up to date with the notes under root; returns (index, stats).

    A note whose stat (fast path, see unchanged) or SHA-256 matches keeps its record; others
    are read again.  Postings and texts of removed records are dropped, those of new
    records added.
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
        verdict = record and unchanged(path, record, options.max_file_size, trusted_before_ns)
        if verdict:
            current[relative] = record
            refreshed += verdict == 'touched'
        else:
            jobs.append(Job(relative, path, index['next_fid'] + len(jobs), options))
    batches = [jobs[start:start + NOTES_PER_JOB] for start in range(0, len(jobs), NOTES_PER_JOB)]
    added, additions = {}, {}
    for parsed, postings in run_jobs(index_batch, batches, options.jobs, report):
        for note in parsed:
            if note.skip:
                skipped.append(note.skip)
            else:
                added[note.relative] = note
        add_postings(additions, postings)
    removed = [relative for relative in previous if relative not in current]
    if added or removed:
        index['postings'] = update_postings(
            index['postings'], [previous[relative] for relative in removed], additions)
        index['texts'] = updated_texts(index['texts'], {relative: parsed.text for
                                                        relative, parsed in added.items()},
                                       removed)
    current.update((relative, parsed.record) for relative, parsed in added.items())
    deleted = sum(1 for relative in previous if relative not in current)
    skipped.sort(key=lambda s: s['path'])
    changed = added or removed or refreshed or skipped != index['skipped'] or not reusable
    index.update(files=dict(sorted(current.items())), skipped=skipped, root=root,
                 next_fid=index['next_fid'] + len(jobs), scan_started_ns=started_ns,
                 chunk_count=sum(record['count'] for record in current.values()),
                 word_count=sum(record['words'] for record in current.values()))
    stats = {'updated': len(added), 'removed': deleted, 'skipped': skipped,
             'files': len(current), 'chunks': index['chunk_count'], 'changed': bool(changed)}
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


# --- Index file: atomic write, lock, load and validate ---------------------------------
# The same as code_search's: a reader sees the old file or the new one, never a mix, and
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
                           f'FOLDER --out {path})') from None
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
            f' (rebuild it with: {program_name()} index FOLDER --out {path})'
        raise IndexProblem(f'index file is corrupt or truncated: {path}{advice}') from None
    problem = index_problem(index, deep)
    if problem:
        ours = isinstance(index, dict) and index.get('tool') == TOOL and not piped
        advice = f'; rebuild it with: {program_name()} index FOLDER --out {path}' \
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
    """CRC-32 over the root and what a search reads of the records, the postings and the
    texts, so that a hand-edited or damaged index is rebuilt instead of being carried
    forward."""
    checksum = 0
    for part in itertools.chain(
            [index['root']],
            (f'{relative}\0{record["fid"]}\0{record["count"]}\0{record["words"]}\0'
             f'{record["lengths"]}\0'
             + record.get('intros', '') + '\0'
             + '\0'.join(record['tags'])
             for relative, record in index['files'].items()),
            index['postings'], index['texts']):
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
    expected = {'root': str, 'files': dict, 'postings': list, 'texts': list,
                'skipped': list, 'next_fid': int, 'parser_version': int,
                'tokenizer_version': int, 'scan_started_ns': int, 'chunk_count': int,
                'word_count': int, 'checksum': int}
    for key, kind in expected.items():
        if type(index.get(key)) is not kind:
            return f'damaged index: "{key}" is missing or not a {kind.__name__}'
    if not all(type(entry) is dict and type(entry.get('path')) is str
               and type(entry.get('line')) is int and type(entry.get('reason')) is str
               for entry in index['skipped']):
        return 'damaged index: bad list of skipped files'
    if len(index['postings']) != POSTING_BUCKETS or len(index['texts']) != TEXT_BUCKETS \
            or not all(type(bucket) is str and (bucket == '' or bucket[0] == bucket[-1] == '|')
                       for bucket in index['postings']) \
            or not all(type(bucket) is str for bucket in index['texts']):
        return 'damaged index: bad postings or texts'
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
                or index['chunk_count'] != sum(record['count'] for record in records) \
                or index['word_count'] != sum(record['words'] for record in records):
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
                           f'rebuild it with: {program_name()} index FOLDER') from None


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


def build_index(root, destination, max_file_size=MAX_FILE_SIZE):
    """The tutorial's API: index root into destination; returns (changed, removed).
    A note that cannot be decoded or parsed raises UnicodeDecodeError or ValueError.
    (code_search's build_index differs on purpose: each keeps its own tutorial's.)"""
    stats = index_folder(root, os.fspath(destination),
                         IndexOptions(max_file_size=max_file_size, strict=True))
    return stats['updated'], stats['removed']


# --- Ranking: BM25 over paragraphs, plus a share of the whole note's ------------------

class SearchIndex(NamedTuple):
    """An index opened for searching, with each file id's note."""
    index: dict
    fid_path: dict           # file id -> relative path
    lengths: dict            # file id -> decoded chunk lengths, filled as needed
    intros: dict             # file id -> its chunks that introduce the next, as needed


def open_search_index(index):
    """The shape a search works on (see SearchIndex)."""
    return SearchIndex(index, {record['fid']: relative
                               for relative, record in index['files'].items()}, {}, {})


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


def chunk_lengths(search_index, fid):
    """The word counts of one note's chunks, decoded once per search."""
    lengths = search_index.lengths.get(fid)
    if lengths is None:
        record = search_index.index['files'][search_index.fid_path[fid]]
        lengths = search_index.lengths[fid] = list(map(int, record['lengths'].split()))
        if len(lengths) != record['count']:
            raise ValueError('chunk lengths are damaged')
    return lengths


def chunk_intros(search_index, fid):
    """The chunks of one note joined with the next (see introductions)."""
    intros = search_index.intros.get(fid)
    if intros is None:
        record = search_index.index['files'][search_index.fid_path[fid]]
        intros = search_index.intros[fid] = set(map(int, record.get('intros', '').split()))
        if intros and not 0 <= min(intros) <= max(intros) < record['count'] - 1:
            raise ValueError('chunk introductions are damaged')
    return intros


def run_starts(intros):
    """{chunk: the first chunk of its run} for each chunk that an introduction leads to
    (see introductions), found in one pass: a list of thousands of items joined to its
    introduction is not walked back once per item."""
    starts = {}
    for intro in sorted(intros):
        starts[intro + 1] = starts.get(intro, intro)
    return starts


def bm25(frequency, idf, length, average, b=BM25_B):
    """One term's BM25 weight in a text of length words (average: of all such texts);
    b: how much length counts (see NOTE_BM25_B)."""
    norm = BM25_K1 * (1 - b + b * length / average)
    return idf * frequency * (BM25_K1 + 1) / (frequency + norm)


def idf_of(matches, total):
    """BM25's inverse document frequency of a term found in matches of total texts."""
    return math.log(1 + (total - matches + 0.5) / (matches + 0.5))


def term_frequencies(posting):
    """({(file id, chunk): frequency}, {file id: frequency}) of one term's posting; a
    heading word counts HEADING_WEIGHT times in each chunk under it, and in its note
    HEADING_WEIGHT times in all, not once more for each chunk."""
    chunks, notes = {}, {}
    for token, occurrences in collections.Counter(posting.split(',')).items():
        place, _, count = token.partition(':')
        fid, _, span = place.partition('.')
        first, heading, last = span.partition('-')
        fid, first = int(fid), int(first)
        if heading:
            frequency = HEADING_WEIGHT * int(count or 1) * occurrences
            if not frequency:
                continue
            for key in zip(itertools.repeat(fid), range(first, int(last) + 1)):
                chunks[key] = chunks.get(key, 0) + frequency
        else:
            frequency = occurrences
            chunks[fid, first] = chunks.get((fid, first), 0) + frequency
        notes[fid] = notes.get(fid, 0) + frequency
    return chunks, notes


def corpus_statistics(index):
    """(chunks, notes, average words of a chunk, average words of a note): what BM25
    needs beyond one text."""
    chunk_total, note_total = index['chunk_count'], len(index['files'])
    return (chunk_total, note_total, max(index['word_count'] / max(chunk_total, 1), 1e-9),
            max(index['word_count'] / max(note_total, 1), 1e-9))


def term_postings(index, terms):
    """{term: (its term_frequencies, {token: count})} of the terms an index holds: what
    explain_chunk reads, parsed once for all the hits of a search."""
    found = {}
    for term in terms:
        posting = find_posting(index['postings'], term)
        if posting:
            found[term] = term_frequencies(posting), collections.Counter(posting.split(','))
    return found


def explain_chunk(search_index, postings, fid, local):
    """What gave chunk local of note fid its score, as rank adds it up: each question
    term's BM25 in the paragraph (split between body and heading words by their share
    of its frequency) and in the whole note, which counts NOTE_WEIGHT times.  postings:
    term_postings of the question's terms."""
    index = search_index.index
    chunk_total, note_total, chunk_average, note_average = corpus_statistics(index)
    words, note_words, words_score, note_score = [], [], 0.0, 0.0
    for term, ((chunks, notes), tokens) in postings.items():
        frequency = chunks.get((fid, local))
        if frequency:
            idf = idf_of(len(chunks), chunk_total)
            body = tokens[f'{fid}.{local}']                      # the rest: its heading
            score = bm25(frequency, idf, chunk_lengths(search_index, fid)[local],
                         chunk_average)
            words_score += score
            words.append({'term': term, 'idf': round(idf, 4), 'score': round(score, 4),
                          'fields': {'body': round(score * body / frequency, 4),
                                     'heading': round(score - score * body / frequency, 4)}})
        if notes.get(fid):
            idf = idf_of(len(notes), note_total)
            words_of_note = index['files'][search_index.fid_path[fid]]['words']
            score = bm25(notes[fid], idf, words_of_note, note_average, NOTE_BM25_B)
            note_score += score
            note_words.append({'term': term, 'idf': round(idf, 4),
                               'score': round(score, 4)})
    return {'score': round(words_score + NOTE_WEIGHT * note_score, 4),
            'words_score': round(words_score, 4), 'note_weight': NOTE_WEIGHT,
            'note_score': round(note_score, 4), 'words': words, 'note_words': note_words}


def bm25_scores(search_index, terms):
    """({(file id, chunk): BM25}, {file id: BM25}) of the chunks and notes holding any
    of terms.  A note is scored as one text: its body words, and each heading's words
    HEADING_WEIGHT times, not once for each chunk under it."""
    index = search_index.index
    chunk_total, note_total, chunk_average, note_average = corpus_statistics(index)
    scores, note_scores = {}, {}
    for term in terms:
        posting = find_posting(index['postings'], term)
        if not posting:
            continue
        chunks, notes = term_frequencies(posting)
        idf = idf_of(len(chunks), chunk_total)
        for (fid, local), frequency in chunks.items():
            length = chunk_lengths(search_index, fid)[local]
            scores[fid, local] = scores.get((fid, local), 0.0) + bm25(
                frequency, idf, length, chunk_average)
        idf = idf_of(len(notes), note_total)
        for fid, frequency in notes.items():
            words = index['files'][search_index.fid_path[fid]]['words']
            note_scores[fid] = note_scores.get(fid, 0.0) + bm25(
                frequency, idf, words, note_average, NOTE_BM25_B)
    return scores, note_scores


def least_crowded(candidates, limit, unit=lambda candidate: candidate):
    """The `limit` smallest (-score, path, number) candidates, taking at most
    MAX_HITS_PER_NOTE from one note unless too few other notes match.  unit() names the
    hit a candidate belongs to; the best candidate of a hit stands for it."""
    heapq.heapify(candidates)
    best, crowded, per_note, taken = [], [], collections.Counter(), set()
    while candidates and len(best) < limit:
        candidate = unit(heapq.heappop(candidates))
        if candidate[1:3] in taken:
            continue
        taken.add(candidate[1:3])
        per_note[candidate[1]] += 1
        crowding = MAX_HITS_PER_NOTE and per_note[candidate[1]] > MAX_HITS_PER_NOTE
        (crowded if crowding else best).append(candidate)
    return sorted(best + crowded[:limit - len(best)])


def rank(search_index, question, tags=(), paths=(), limit=DEFAULT_TOP_K, explain=False):
    """The best `limit` chunks for question among notes having all tags and matching
    the path globs, as the tutorial's chunk dicts plus 'score' (and with explain,
    'explain': see explain_chunk).

    A chunk scores its own BM25 plus NOTE_WEIGHT times its note's, so that a paragraph
    of a note about the question outranks a stray short match elsewhere.
    """
    index = search_index.index
    terms = query_terms(question)
    scores, note_scores = bm25_scores(search_index, terms)
    wanted_tags = asked_tags(tags)
    accept = path_filter(paths) if paths else None
    allowed, candidates = {}, []
    for (fid, local), score in scores.items():
        relative = search_index.fid_path[fid]
        score += NOTE_WEIGHT * note_scores[fid]
        if score <= 0:
            continue
        if relative not in allowed:
            allowed[relative] = (not wanted_tags or wanted_tags.issubset(
                index['files'][relative]['tags'])) and (accept is None or accept(relative))
        if allowed[relative]:
            candidates.append((-score, relative, local))
    firsts = {}

    def introduced(candidate):       # a block is shown, and found, with its introduction
        negative_score, relative, local = candidate
        first = local
        if JOIN_INTRODUCTIONS:
            fid = index['files'][relative]['fid']
            if fid not in firsts:
                firsts[fid] = run_starts(chunk_intros(search_index, fid))
            first = firsts[fid].get(local, local)
        return negative_score, relative, first, local

    best = least_crowded(candidates, limit, introduced)
    texts = stored_texts(index, {candidate[1] for candidate in best})
    postings = term_postings(index, terms) if explain else {}
    dropped = dropped_words(question, terms) if explain else []
    hits, chunks = [], {}
    for negative_score, relative, local, scored in best:
        fid = index['files'][relative]['fid']
        if relative not in chunks:
            try:
                chunks[relative] = chunk_dicts(relative, *scan_text(texts[relative]))
            except NoteSyntaxError:
                raise ValueError(f'stored text of {relative} does not parse') from None
        if len(chunks[relative]) != index['files'][relative]['count']:
            raise ValueError(f'chunk count of {relative} does not match its text')
        hit = dict(chunks[relative][local], score=round(-negative_score, 4))
        if explain:
            explained = explain_chunk(search_index, postings, fid, scored)
            hit['explain'] = dict(explained, dropped=dropped, missing=missing_words(
                question, terms, explained['words'] + explained['note_words']))
        last = local
        while JOIN_INTRODUCTIONS and last in chunk_intros(search_index, fid):
            last += 1
        if last > local:
            end = chunks[relative][last]['end']
            lines = texts[relative].split('\n')
            hit.update(end=end, text='\n'.join(lines[hit['start'] - 1:end]))
        hits.append(hit)
    return hits


def search(index_path, question, tag=None, limit=DEFAULT_TOP_K, paths=()):
    """The tutorial's API: up to `limit` chunk dicts (plus 'score', 'stale' and 'gone') best
    matching question.  tag may be one tag or a list of tags that must all be present."""
    tags = [] if tag is None else [tag] if isinstance(tag, str) else list(tag)
    search_index = open_index_file(os.fspath(index_path))
    with damaged_index_guard(index_path):
        return mark_stale(search_index, rank(search_index, question, tags, paths, limit))


def asked_tags(tags):
    """The tags that --tag values ask for, as notes keep them: lower case, no '#' ('' or
    '#' asks for nothing)."""
    return {composed(tag).lower().lstrip('#') for tag in tags} - {''}


def unknown_tags(search_index, tags):
    """The tags asked for (asked_tags) that no indexed note carries."""
    known = {tag for tag, _ in tag_counts(search_index)}
    return [tag for tag in tags if asked_tags([tag]) - known]


def tag_counts(search_index):
    """[(tag, number of notes)] sorted by count, then tag."""
    counts = collections.Counter(tag for record in search_index.index['files'].values()
                                 for tag in set(record['tags']))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


# --- Paths: --path globs, the same in both tools ---------------------------------------

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


def unmatched_globs(relatives, globs):
    """The including globs that match none of the relative paths (each glob's regex made
    once: a long one takes time to make)."""
    regexes = {glob: glob_regex(glob) for glob in split_globs(globs) if not glob.startswith('!')}
    return [glob for glob, regex in regexes.items()
            if not any(regex.match(composed(relative)) for relative in relatives)]


def spelled_as_indexed(files, relative):
    """A relative path as the files {relative: record} spell it: itself, or the one name
    that is the same in Unicode's composed form (Hangul that macOS decomposed in a file
    name, typed composed)."""
    if relative in files or relative.isascii():
        return relative
    wanted = composed(relative)
    same = [name for name in files if not name.isascii() and composed(name) == wanted]
    return same[0] if len(same) == 1 else relative


# --- Reading hits back: is the note still the one indexed? ----------------------------

def mark_stale(search_index, hits):
    """Mark each hit stale when its note's text changed since indexing, or the note is
    gone or no longer a regular file (a link is never followed): one lstat per note, and
    a read only of a note whose size is the same but not its mtime or ctime (a `touch`
    or `chmod` alone changes nothing)."""
    index, seen = search_index.index, {}
    for hit in hits:
        relative = hit['path']
        if relative not in seen:
            record = index['files'][relative]
            if not safe_relative_path(relative):
                raise ValueError(f'path outside the root: {relative!r}')
            full = os.path.join(index['root'], *relative.split('/'))
            try:
                info = os.lstat(full)
                gone = not stat.S_ISREG(info.st_mode)
                changed = gone or stat_changed(info, record)
                if changed and not gone and info.st_size == record.get('size'):
                    data = read_file(full, info.st_size)[0]   # whatever --max-file-size was
                    changed = hashlib.sha256(data).hexdigest() != record['sha256']
                seen[relative] = changed, gone
            except SkipFile:                    # there, but not readable now
                seen[relative] = True, False
            except (OSError, ValueError):
                seen[relative] = True, True
        hit['stale'], hit['gone'] = seen[relative]
    return hits


# --- Output: the tutorial's lines for people, one JSON object for machines -------------
# emit_json, report_skipped, warn and progress_line are the same in code_search.

RESULT_FIELDS = ('id', 'path', 'heading', 'heading_path', 'start', 'end', 'tags', 'score',
                 'stale', 'gone', 'text')
STALE_NOTE = '  [stale: file changed since indexing; run index again]'
GONE_NOTE = '  [stale: file gone since indexing; run index again]'


def format_hit(hit):
    """A hit as the tutorial prints it: '[id] heading (Lstart–Lend)' then the text."""
    return (f"[{hit['id']}] {hit['heading']} (L{hit['start']}–L{hit['end']})"
            f"{(GONE_NOTE if hit.get('gone') else STALE_NOTE) if hit.get('stale') else ''}\n"
            f"{format_explain(hit.get('explain'))}{hit['text']}")


def format_explain(explained):
    """search --explain: the score as the paragraph's words plus a share of the note's,
    then one line per question term; '' without an explanation."""
    if not explained:
        return ''
    lines = [f"  score {explained['score']:.4f} = {explained['words_score']:.4f} (paragraph)"
             f" + {explained['note_weight']:g} x {explained['note_score']:.4f} (note)"]
    note = {word['term']: word['score'] for word in explained['note_words']}
    for word in explained['words']:
        parts = '  '.join(f'{field} {part:.4f}' for field, part in word['fields'].items()
                          if part)
        lines.append(f"    {word['term']:<20} {word['score']:.4f}  idf {word['idf']:.2f}  "
                     f"{parts}  note {note.pop(word['term'], 0.0):.4f}")
    lines.extend(f"    {term:<20} {0.0:.4f}  note {score:.4f}" for term, score in note.items())
    for label, key in (('not in this hit', 'missing'), ('left out of the question', 'dropped')):
        if explained[key]:
            lines.append(f"    {label}: {' '.join(explained[key])}")
    return '\n'.join(lines) + "\n"


def emit_json(document):
    print(json.dumps(document, ensure_ascii=False, indent=2))


def print_hits(question, hits, as_json):
    """Hits as the tutorial prints them, or as one JSON object."""
    if as_json:
        emit_json(hits_json(question, hits))
    else:
        print('\n'.join(map(format_hit, hits)) if hits else NOT_FOUND_MESSAGE)


def hits_json(question, hits):
    """The one JSON shape of hits: --json prints it and the HTTP API answers it."""
    return {'query': question, 'results': [hit_json(hit) for hit in hits]}


def hit_json(hit):
    """A hit as every JSON output shows it; an explained one also says why it ranks
    where it does."""
    document = {field: hit.get(field) for field in RESULT_FIELDS}
    if 'explain' in hit:
        document['explain'] = hit['explain']
    return document


def print_tags(counts, as_json):
    """Tags with their note counts, like `uniq -c`, or as JSON."""
    if as_json:
        emit_json(tags_json(counts))
    elif not counts:
        print(NO_TAGS_MESSAGE)
    else:
        for tag, count in counts:
            print(f'{count:7d} {tag}')


def tags_json(counts):
    """The one JSON shape of tag counts, for --json and the HTTP API."""
    return {'tags': [{'tag': tag, 'notes': count} for tag, count in counts]}


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


# --- Web server: a local page and a JSON API ---------------------------------------------
# `serve` answers searches over HTTP, in the shapes --json prints, and serves one page
# (PAGE_HTML, at the end of the file) that uses them.  It binds to 127.0.0.1 unless told
# otherwise, refuses Host headers of other names there (DNS rebinding), caps query
# strings and bodies, gives slow clients SERVE_CLIENT_TIMEOUT seconds, and reads the
# index again when it is replaced on disk.  The server's parts are code_search's.

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
        document = route[1](load(), api_params(query), body)
        status = 200
    except ApiError as error:
        status, document = error.status, {'error': str(error)}
    except (LookupError, ValueError) as error:
        status, document = 400, {'error': str(error.args[0] if error.args else error)}
    except IndexProblem as problem:
        status, document = 503, {'error': str(problem)}
    return status, 'application/json; charset=utf-8', \
        json.dumps(document, ensure_ascii=False).encode('utf-8', 'replace')


def api_search(search_index, params, body):
    question = api_value(params, 'q', 'question')
    top_k = api_value(params, 'top_k', 'number', API_TOP_K, 1, API_TOP_K_LIMIT)
    hits = mark_stale(search_index, rank(search_index, question,
                                         params.get('tag', []),
                                         params.get('path', []), top_k,
                                         api_value(params, 'explain', 'flag', False)))
    return hits_json(question, hits)


def api_tags(search_index, params, body):
    return tags_json(tag_counts(search_index))


def api_read(search_index, params, body):
    start = api_value(params, 'start', 'number', 1)
    end = api_value(params, 'end', 'number', 0) or None
    if end is not None and end < start:
        raise ApiError(400, 'end must not be before start')
    return read_lines(search_index, api_value(params, 'path'), start, end)


def api_health(search_index, params, body):
    return {'status': 'ok', 'tool': TOOL, 'version': __version__,
            'notes': len(search_index.index['files']), 'root': search_index.index['root']}


API_ROUTES = {'/api/search': ('GET', api_search), '/api/tags': ('GET', api_tags),
              '/api/read': ('GET', api_read), '/api/health': ('GET', api_health)}


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


def read_lines(search_index, path, start=1, end=None):
    """{'path', 'start', 'end', 'total_lines', 'revision', 'stale', 'text'} of lines
    start..end (1-based, inclusive, end clipped) of an indexed note as it is now, lines
    numbered as search numbers them; LookupError for anything but an indexed note."""
    index = search_index.index
    real_root = os.path.realpath(index['root'])
    relative = spelled_as_indexed(index['files'], '/'.join(parts_inside(real_root, path)))
    if relative not in index['files']:
        raise LookupError(f'not an indexed note: {path}')
    full = os.path.join(index['root'], *relative.split('/'))
    if not inside_folder(os.path.realpath(full), real_root):
        raise LookupError(f'path leads outside the root through a symbolic link: {path}')
    try:
        data = read_file(full, MAX_FILE_SIZE)[0]
        lines = stored_text(decode_note(data)).split('\n')[:-1]
    except SkipFile as skip:
        reason = skip.reason if skip.reason == PERMISSION_REASON or os.path.lexists(full) \
            else GONE_REASON
        raise LookupError(f'cannot read {relative}: {reason.replace("skipped: ", "")}') \
            from None
    total = len(lines)
    end = total if end is None else min(end, total)
    if start > max(total, 1) or start > end and total:
        raise LookupError(f'{relative} has {total} lines; line {start} is past its end')
    record, sha256 = index['files'][relative], hashlib.sha256(data).hexdigest()
    return {'path': relative, 'start': start, 'end': end, 'total_lines': total,
            'revision': sha256[:12], 'stale': sha256 != record['sha256'],
            'text': '\n'.join(lines[start - 1:end])}


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
# The parser, argument checks, signals and main() have code_search's shape.

SUBCOMMANDS = ('index', 'search', 'tags', 'serve')


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
    characters, and not empty: the HTTP API refuses an empty one too."""
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


class OneIndex(argparse.Action):
    """--index, which names one index: a second one is misuse, not silently the one
    searched (code_search's --index repeats and searches each)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, 'index_given', False):
            parser.error('--index names one index, given more than once')
        namespace.index_given = True
        setattr(namespace, self.dest, values)


def build_parser():
    prog = program_name()
    parser = ArgumentParser(prog=prog, description=__doc__.split('\n')[0],
                            formatter_class=HelpFormatter,
                            epilog=f'Run "{prog} COMMAND -h" for the options of a command.')
    parser.add_argument('--version', action='version', version=f'%(prog)s {__version__}')
    commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND',
                                     prog=prog)

    def command(name, text):
        return commands.add_parser(name, help=text, description=text,
                                   formatter_class=HelpFormatter)

    index = command('index', 'write or update the index of a folder of notes')
    index.add_argument('folder', help='the folder of Markdown notes')
    index.add_argument('--out', default=DEFAULT_INDEX, metavar='FILE', help='index file')
    index.add_argument('--hidden', action='store_true',
                       help='also index dot-files and dot-folders')
    index.add_argument('--jobs', type=positive_int, metavar='N',
                       help='worker processes (default: one per core)')
    index.add_argument('--max-file-size', type=positive_int, default=MAX_FILE_SIZE,
                       metavar='BYTES', help='skip larger notes')
    query = command('search', 'answer a question from the index')
    query.add_argument('question', type=question_text)
    query.add_argument('--tag', action='append', default=[],
                       help='only notes with TAG (repeatable: all must match)')
    query.add_argument('--path', action='append', default=[], metavar='GLOB',
                       help="only notes under or matching GLOB; '!GLOB' excludes; repeatable")
    query.add_argument('--top-k', type=positive_int, default=DEFAULT_TOP_K, metavar='N',
                       help='number of results')
    query.add_argument('--explain', action='store_true',
                       help='show what each question word gave each hit, heading and body')
    tags = command('tags', 'list tags with their note counts')
    for sub in (query, tags):
        sub.add_argument('--index', default=DEFAULT_INDEX, metavar='FILE', help='index file',
                         action=OneIndex)
        sub.add_argument('--json', action='store_true', help='print one JSON object')
    serve = command('serve', 'serve a local web page and JSON API over the index')
    serve.add_argument('--index', default=DEFAULT_INDEX, metavar='FILE', help='index file',
                       action=OneIndex)
    serve.add_argument('--host', default=SERVE_HOST,
                       help='address to listen on; anything but localhost is warned about')
    serve.add_argument('--port', type=port_number, default=SERVE_PORT,
                       help='port (0: any free one)')
    return parser


def run_index(args):
    options = IndexOptions(hidden=args.hidden, max_file_size=args.max_file_size,
                           jobs=args.jobs or 0)
    with progress_line() as report:
        stats = index_folder(args.folder, args.out, options, report)
    print_index_summary(stats)
    return 0


def print_index_summary(stats):
    """index's report: a warning and skipped notes on stderr, then the tutorial's line."""
    if stats['warning']:
        warn(stats['warning'])
    report_skipped(stats['skipped'])
    print(f"갱신 파일: {stats['updated']}, 제거 파일: {stats['removed']}")


def run_search(args):
    search_index = open_index_file(args.index)
    for glob in unmatched_globs(search_index.index['files'], args.path):
        warn(f'--path {glob!r} matches no indexed note')
    for tag in unknown_tags(search_index, args.tag):
        warn(f'--tag {tag!r} is on no indexed note')
    with damaged_index_guard(args.index):
        hits = mark_stale(search_index, rank(search_index, args.question, args.tag, args.path,
                                             args.top_k, args.explain))
    print_hits(args.question, hits, args.json)
    return 0


def run_tags(args):
    print_tags(tag_counts(open_index_file(args.index)), args.json)
    return 0


def run_serve(args):
    load = index_loader(args.index)
    load()                                              # fail now, not at the first request
    return serve_http(lambda method, target, body: api_answer(load, method, target, body),
                      args.host, args.port)


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
            cache.update(key=key, index=open_index_file(path))
        return cache['index']
    return load


def port_number(text):
    if not re.fullmatch(r'[0-9]{1,5}', text) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f'not a port number (0-65535): {text!r}')
    return int(text)


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
            args = build_parser().parse_args(argv)
            status = {'index': run_index, 'search': run_search, 'tags': run_tags,
                      'serve': run_serve}[args.command](args)
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


# --- Data: the page `serve` shows ------------------------------------------------------
# One page, nothing fetched from elsewhere: it calls the JSON API and builds every
# element with textContent, so no note's text is ever read as HTML.

PAGE_SCRIPT = r'''
const $ = (id) => document.getElementById(id);
const PARTICLES = {{particles}}, MIN_STEM_SYLLABLES = {{min_stem}};
const chosenTags = new Set();

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function escapeRegex(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

function stripParticle(word) {        // strip_particle's rule: 캐시를 is searched as 캐시
  if (!/^[가-힣]+$/.test(word)) return word;
  const particle = PARTICLES.find((p) => word.endsWith(p) &&
                                         word.length - p.length >= MIN_STEM_SYLLABLES);
  return particle ? word.slice(0, -particle.length) : word;
}

function highlighter() {
  const words = $('q').value.toLowerCase().split(/[^\p{L}\p{N}_]+/u)
    .map(stripParticle).filter((word) => word.length > 1);
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

function lines(text, first, pattern, isHit) {
  const block = el('pre', 'code');
  text.split('\n').forEach((line, offset) => {
    const number = first + offset;
    const row = el('div', isHit && isHit(number) ? 'row hit' : 'row');
    const source = el('span', 'src');
    source.append(marked(line, pattern));
    row.append(el('span', 'no', String(number)), source);
    block.append(row);
  });
  return block;
}

async function api(path, params) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const one of [].concat(value)) query.append(name, one);
  }
  const response = await fetch(path + '?' + query);
  let body;
  try { body = await response.json(); } catch (error) { body = {}; }
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function tagChip(tag, count) {
  const chip = el('button', 'chip', count === undefined ? '#' + tag : `#${tag} ${count}`);
  chip.type = 'button';
  chip.setAttribute('aria-pressed', String(chosenTags.has(tag)));
  chip.addEventListener('click', () => {
    if (chosenTags.has(tag)) chosenTags.delete(tag); else chosenTags.add(tag);
    for (const other of document.querySelectorAll(`[data-tag]`)) {
      other.setAttribute('aria-pressed', String(chosenTags.has(other.dataset.tag)));
    }
    run();
  });
  chip.dataset.tag = tag;
  return chip;
}

function hitCard(hit, pattern) {
  const card = el('article', 'hit-card');
  const head = el('button', 'hit-head');
  head.type = 'button';
  const heading = el('strong', 'heading');
  heading.append(marked(hit.heading || hit.path, pattern));
  head.append(heading, el('span', 'trail', (hit.heading_path || []).slice(0, -1).join(' › ')),
              el('span', 'where', `${hit.path}:L${hit.start}-L${hit.end}`));
  if (hit.stale) head.append(el('span', 'badge stale', 'changed since indexing'));
  head.addEventListener('click', () => openNote(hit.path, hit.start, hit.end));
  const tags = el('div', 'tags');
  for (const tag of hit.tags || []) tags.append(tagChip(tag));
  card.append(head, el('div', 'text'), tags);
  card.querySelector('.text').append(marked(hit.text, pattern));
  return card;
}

async function run() {
  const params = {};
  const text = $('q').value.trim();
  if (text) params.q = text;
  if (chosenTags.size) params.tag = [...chosenTags];
  if ($('path').value.trim()) params.path = $('path').value.trim();
  const shown = new URLSearchParams();
  if (text) shown.set('q', text);
  for (const tag of chosenTags) shown.append('tag', tag);
  if (params.path) shown.set('path', params.path);
  history.replaceState(null, '', '?' + shown);
  const results = $('results');
  results.replaceChildren();
  if (!text) { $('status').textContent = ''; return; }
  $('status').textContent = 'searching…';
  try {
    params.top_k = '20';
    const result = await api('/api/search', params);
    const pattern = highlighter();
    results.append(...result.results.map((hit) => hitCard(hit, pattern)));
    const count = result.results.length;
    $('status').textContent = count ? `${count} paragraph${count > 1 ? 's' : ''}` : 'nothing found';
  } catch (error) {
    $('status').textContent = 'error: ' + error.message;
  }
}

async function openNote(path, start, end) {
  try {
    const note = await api('/api/read', {path});
    $('viewer-title').textContent = `${path} (${note.total_lines} lines)`;
    const block = lines(note.text, note.start, highlighter(), (n) => n >= start && n <= end);
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
  const given = new URLSearchParams(location.search);
  for (const tag of given.getAll('tag')) chosenTags.add(tag);
  $('q').value = given.get('q') || '';
  $('path').value = given.get('path') || '';
  try {
    const found = await api('/api/tags', {});
    $('all-tags').append(...found.tags.slice(0, 40).map((item) => tagChip(item.tag, item.notes)));
  } catch (error) {
    $('status').textContent = 'error: ' + error.message;
  }
  if ($('q').value) run();
  $('q').focus();
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

PAGE_SCRIPT = PAGE_SCRIPT.replace(      # the page marks words as search reads them
    '{{particles}}', json.dumps(sorted(KOREAN_PARTICLES, key=lambda p: (-len(p), p)))
).replace('{{min_stem}}', str(MIN_STEM_SYLLABLES))

PAGE_HTML = '''<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>notes search</title>
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
#path, button { font-size: 14px; padding: 7px 9px; border: 1px solid var(--line);
                border-radius: 6px; background: #fff; }
#path { flex: 0 1 160px; min-width: 0; }
.tags { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 8px; }
.chip { font-size: 13px; padding: 2px 10px; border-radius: 12px; cursor: pointer; }
.chip[aria-pressed="true"] { background: var(--accent); color: #fff; border-color: var(--accent); }
.hit-card .tags { padding: 0 12px 10px; margin: 0; }
.text { padding: 8px 12px; white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.5; }
.trail { color: var(--soft); font-size: 13px; }
.heading { overflow-wrap: anywhere; }
main { max-width: 1100px; margin: 0 auto; padding: 12px 16px 40px; }
#status { color: var(--soft); font-size: 14px; margin: 4px 0 12px; }
.hit-card { background: #fff; border: 1px solid var(--line); border-radius: 8px;
            margin-bottom: 12px; overflow: hidden; }
.hit-head { display: flex; flex-wrap: wrap; gap: 10px; align-items: baseline; width: 100%;
            text-align: left; border: 0; border-bottom: 1px solid var(--line);
            border-radius: 0; background: #fafbfc; cursor: pointer; padding: 8px 12px; }
.hit-head:hover, .hit-head:focus { background: var(--hit); }
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
<h1>notes search</h1>
<form id="form" role="search">
<input id="q" name="q" type="search" autocomplete="off" aria-label="question"
 placeholder="a question, in English or Korean (캐시 무효화)">
<input id="path" type="text" placeholder="path glob" aria-label="path glob">
<button type="submit">Search</button>
</form>
<div id="all-tags" class="tags" aria-label="tags"></div>
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

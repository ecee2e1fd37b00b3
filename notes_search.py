#!/usr/bin/env python3
"""Search a folder of Markdown notes; the index follows edits and deletions.

Usage:
    notes_search.py index FOLDER [--out FILE] [--max-file-size BYTES] [--hidden]
    notes_search.py search QUESTION [--index FILE] [--tag TAG]... [--path GLOB]...
                           [--top-k N] [--json]
    notes_search.py tags [--index FILE] [--json]

A note is split into chunks at blank lines and headings (ATX `#` and setext; never
inside ``` or ~~~ fences).  Tags come from YAML front matter, a `tags:` line before
the body and inline #tags.  Ranking is BM25 over words and Hangul syllable bigrams
(trailing particles stripped), heading words counting HEADING_WEIGHT times; English
stop words in a question are ignored.  Only notes whose size, mtime or SHA-256
changed are parsed again.  Walking the folder follows no symbolic links, reads
regular files only, and skips dot-names (unless --hidden), VCS and cache folders,
virtualenvs and notes over --max-file-size (default 10 MiB), reporting each note it
leaves out on stderr as `path:line: reason`.

Exit statuses: 0 the command did its job (also: no hits, notes skipped);
1 the index could not be written (I/O error, permission denied, lock timeout);
2 misuse or an unusable index file (missing, a directory, corrupt, another tool's).
"""
import argparse
import binascii
import bisect
import collections
import contextlib
import errno
import fnmatch
import gc
import heapq
import io
import itertools
import json
import marshal
import math
import operator
import os
import re
import stat
import sys
import time
import zlib

try:
    import fcntl
except ImportError:  # not POSIX: fall back to an O_EXCL lock file
    fcntl = None

# --- Settings: weights, limits, versions (named constants) -------------------

TOOL = 'notes_search'
PROG = 'notes_search.py'
FORMAT_VERSION = 4          # index.json layout (1: an object per note; 2: no words, no checksum;
                            # 3: no layout)
PARSER_VERSION = 2          # chunking rules; the tutorial's parser was 1
TOKENIZER_VERSION = 1       # word, stop word, particle and bigram rules

NOTE_SUFFIX = '.md'
DEFAULT_INDEX = 'index.json'
DEFAULT_TOP_K = 3
HEADING_WEIGHT = 2          # a heading word counts as this many body words (tutorial: 2)
BM25_K1 = 1.2
BM25_B = 0.75
NOTE_WEIGHT = 0.5           # a paragraph also scores this share of its whole note's BM25
MAX_HITS_PER_NOTE = 2       # hits shown from one note while other notes match (0: no limit)

MAX_FILE_SIZE = 10 * 1024 * 1024   # bytes; larger notes are skipped and reported
SKIP_DIRS = frozenset({'.git', '.hg', '.svn', '__pycache__', 'node_modules', '.tox',
                       '.mypy_cache', '.pytest_cache'})
STOP_WORDS = frozenset('a an and are as at be by for from in into is it of on or that '
                       'the this to with'.split())
KOREAN_PARTICLES = frozenset(
    '은 는 이 가 을 를 의 에 도 만 와 과 로 랑 께 '
    '으로 에서 에게 한테 까지 부터 처럼 보다 마다 조차 이나 이랑 에는 에도 와는 과는 로는 께서 '
    '으로는 에서는 에서도 에게서 으로서 으로써 로부터'.split())
MIN_STEM_SYLLABLES = 2      # strip a particle only if this much of the word is left

POSTING_BUCKETS = 512       # postings are spread over this many strings by crc32(term)
TEXT_BUCKETS = 256          # stored note texts are spread over this many strings by crc32(path);
                            # a fresh index claims its notes in these batches (at most 256)
TEXT_COMPRESSION = 1        # zlib level of stored texts: fast, and a hit decompresses little
LENGTH_DIGITS = 4           # each chunk's word count, zero-padded, in one string
MAX_CHUNK_LENGTH = 10 ** LENGTH_DIGITS - 1
COMPACT_DEAD_SHARE = 0.5    # renumber all chunks once this share of numbers is unused
PARALLEL_MIN_NOTES = 2000   # a fresh index of this many notes is built by worker processes
MAX_WORKERS = 4
WORKER_WATCH_INTERVAL = 0.2  # seconds between a worker's checks that its parent lives

LOCK_TIMEOUT = 60.0         # seconds to wait for another `index` run
LOCK_POLL = 0.05
LOCK_STALE_AGE = 600.0      # without fcntl: a lock file older than this is abandoned
FORK_WORKERS = hasattr(os, 'fork') and sys.platform != 'darwin'   # elsewhere: spawned workers
READERS_BLOCK_REPLACE = os.name == 'nt'   # there, a file open for reading cannot be replaced
REPLACE_RETRY = 2.0         # seconds that write_index waits for searches reading the index
RACY_MTIME_NS = 2 * 10 ** 9  # an mtime this close to the run is not trusted next time
RESTAT_REWRITE_NOTES = 100  # notes touched but unchanged that are worth rewriting the index
                            # for; fewer are hashed again by the next run instead
PROGRESS_INTERVAL = 0.2     # seconds between progress lines on a terminal

REBUILD_ADVICE = "; rebuild it with 'notes_search.py index'"
REBUILDING = 'rebuilding it from scratch'
TAGS_AFTER_BODY = 'tags는 본문보다 먼저 한 줄에 적으세요.'
NO_HITS = '일치하는 메모를 찾지 못했습니다.'


class NotesError(Exception):
    """A problem the user must fix (bad argument, unusable index); exit status 2."""


class NoteSyntaxError(ValueError):
    """A note breaks the tutorial's rules; `line` is where (1-based)."""

    def __init__(self, message, line):
        super().__init__(message)
        self.line = line


class SkippedNote(Exception):
    """A file is left out on purpose (not regular, too large, binary)."""

    def __init__(self, reason, line=0):
        super().__init__(reason)
        self.line = line


# --- Reading files: walking the root, what is skipped and why -----------------

OPEN_FLAGS = (os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0) | getattr(os, 'O_NOFOLLOW', 0)
              | getattr(os, 'O_CLOEXEC', 0) | getattr(os, 'O_BINARY', 0))
LINE_BREAK_BYTES = re.compile(rb'\r\n|\r|\n')
READ_BLOCK = 1 << 16        # bytes asked of os.read once past the size fstat gave
SYMLINK_REASON = 'skipped: symbolic link (not followed)'
NOT_REGULAR_REASON = 'skipped: not a regular file'


def skip_record(relative, reason, line=0):
    """The index's and stderr's record of one file left out."""
    return {'path': relative, 'line': line, 'reason': reason}


def points_to_directory(path):
    """True when the symbolic link at path leads to a directory (loops count as no)."""
    try:
        return os.path.isdir(path)
    except (OSError, ValueError):
        return False


def list_notes(root, ignored_paths, include_hidden, with_stat):
    """Walk root without following links; return ([(relative, path, lstat)], [skip records]).

    Directories are read in name order; SKIP_DIRS, virtualenvs and (unless
    include_hidden) dot-names are passed over silently.  Without with_stat (for a
    fresh index, which compares no sizes or times) lstat is None and the directory
    entry's type tells regular files apart; reading such a note fstat-s it.
    """
    notes, skipped = [], []
    pending = ['']
    while pending:
        relative_dir = pending.pop()
        try:
            with os.scandir(os.path.join(root, relative_dir)) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as error:
            skipped.append(skip_record(relative_dir or '.', describe_failure(error)[1]))
            continue
        subdirs = []
        for entry in entries:
            relative = f'{relative_dir}/{entry.name}' if relative_dir else entry.name
            if entry.name.startswith('.') and not include_hidden:
                continue
            try:
                if entry.is_symlink():
                    if entry.name.endswith(NOTE_SUFFIX) or points_to_directory(entry.path):
                        skipped.append(skip_record(relative, SYMLINK_REASON))
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS and not os.path.exists(
                            os.path.join(entry.path, 'pyvenv.cfg')):
                        subdirs.append(relative)
                    continue
                if not entry.name.endswith(NOTE_SUFFIX) or entry.path in ignored_paths:
                    continue
                info = entry.stat(follow_symlinks=False) if with_stat else None
                regular = stat.S_ISREG(info.st_mode) if info else entry.is_file(
                    follow_symlinks=False)
            except OSError as error:
                skipped.append(skip_record(relative, describe_failure(error)[1]))
                continue
            if regular:
                notes.append((relative, entry.path, info))
            else:
                skipped.append(skip_record(relative, NOT_REGULAR_REASON))
        pending.extend(reversed(subdirs))
    return notes, skipped


def too_large(size, max_file_size):
    """The reason given for a note over the size limit."""
    return SkippedNote(f'skipped: larger than --max-file-size ({size} > {max_file_size} bytes)')


def read_regular_file(path, max_file_size):
    """Return (bytes, fstat) of a regular file, opened without following links or blocking.

    Reads with os.read (no file object: cheaper for many small notes), at most
    max_file_size + 1 bytes in case the file grew after fstat.
    """
    fd = os.open(path, OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SkippedNote(NOT_REGULAR_REASON)
        if info.st_size > max_file_size:
            raise too_large(info.st_size, max_file_size)
        parts, size, wanted = [], 0, info.st_size + 1
        while size <= max_file_size:
            asked = min(wanted, max_file_size + 1 - size)
            part = os.read(fd, asked)
            if not part:
                break
            parts.append(part)
            size, wanted = size + len(part), READ_BLOCK
            if len(part) < asked and size >= info.st_size:   # all fstat promised: the end
                break
    finally:
        os.close(fd)
    if size > max_file_size:
        raise too_large(size, max_file_size)
    return b''.join(parts), info


def line_of_offset(data, offset):
    """1-based line number of a byte offset, counting \\r\\n, \\r and \\n as line ends."""
    return len(LINE_BREAK_BYTES.findall(data, 0, offset)) + 1


def describe_failure(error):
    """(line, reason) for a note that could not be read, decoded or parsed."""
    if isinstance(error, SkippedNote):
        return error.line, str(error)
    if isinstance(error, NoteSyntaxError):
        return error.line, f'skipped: {error}'
    if isinstance(error, UnicodeDecodeError):
        line = line_of_offset(error.object, error.start)
        return line, f'skipped: not valid UTF-8 (byte 0x{error.object[error.start]:02x})'
    if isinstance(error, FileNotFoundError):
        return 0, 'skipped: vanished while indexing'
    if isinstance(error, PermissionError):
        return 0, 'skipped: permission denied'
    if getattr(error, 'errno', None) == errno.ELOOP:
        return 0, SYMLINK_REASON
    return 0, f'skipped: {getattr(error, "strerror", None) or error}'


# --- Chunking -----------------------------------------------------------------

LINE_BREAK = re.compile(r'\r\n|\r|\n')
ATX_HEADING = re.compile(r' {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$')
SETEXT_UNDERLINE = re.compile(r' {0,3}(=+|-+)[ \t]*$')
THEMATIC_BREAK = re.compile(r' {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$')
FENCE = re.compile(r' {0,3}(`{3,}|~{3,})(.*)$')
LIST_OR_QUOTE = re.compile(r' {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)| {0,3}>')
YAML_KEY = re.compile(r'([A-Za-z_][\w-]*)[ \t]*:(.*)$')
YAML_ITEM = re.compile(r'[ \t]*-(?:[ \t]+(.*))?$')
YAML_OTHER = re.compile(r'[ \t]+\S|[ \t]*#|[ \t]*$')
FRONT_MATTER_PEEK = 10      # lines looked at for front matter before splitting the whole note
SIMPLE_FRONT_MATTER = re.compile(   # front matter of `key: value` lines only (most of it)
    r'---[ \t]*\n((?:[A-Za-z_][\w-]*[ \t]*:[^\n]*\n)*?)(?:---|\.\.\.)[ \t]*\n')
SIMPLE_FRONT_MATTER_KEY = re.compile('^' + YAML_KEY.pattern, re.M)   # each of its lines
INLINE_CODE = re.compile(r'(`+).*?(?<!`)\1(?!`)')
URL = re.compile(r'<[^>\s]*>|[A-Za-z][A-Za-z0-9+.-]*://\S*|www\.\S*')
BLOCK_MARKERS = '`~t#=-*_'   # first characters of lines that may be more than text
INLINE_TAG = re.compile(r'(?<!\S)#(\w[\w/-]*)')
# A plain body (no fence, `tags:` line, setext underline or thematic break) is cut
# with these expressions over '\n' + body instead of line by line; see scan_text.
PLAIN_BODY_BREAKERS = ('```', '~~~', 'tags:')
SETEXT_OR_BREAK_LINE = r' {0,3}(?:[=*_]|-[ \t]*[-\n])'   # maybe either; then scan_note
SETEXT_OR_BREAK = re.compile(r'\n' + SETEXT_OR_BREAK_LINE)
SETEXT_OR_SPACED = re.compile(   # the first of those, or of blank lines holding spaces
    r'\n(?:' + SETEXT_OR_BREAK_LINE + r'|[^\S\n]+(?=\n|\Z))')
PLAIN_HEADING_CUT = re.compile(r'\n( {0,3}#{1,6}(?=[ \t\n])[^\n]*)')   # where ATX_HEADING matches
PLAIN_BLANK_LINE = re.compile(r'\n[^\S\n]*(?=\n|\Z)')


def tag_list(value):
    """Tags of `a, b`, `[a, b]` or `"#a"`: lower case, without quotes or '#'."""
    value = value.strip()
    if value.startswith('[') and value.endswith(']'):
        value = value[1:-1]
    tags = (part.strip().strip('\'"').lstrip('#').strip() for part in value.split(','))
    return [tag.lower() for tag in tags if tag]


def front_matter(lines):
    """Return (tags, line count) of YAML front matter between `---` lines; ([], 0) if none."""
    if not lines or lines[0].rstrip() != '---':
        return [], 0
    tags, in_tags = [], False
    for end in range(1, len(lines)):
        line = lines[end]
        if line.rstrip() in ('---', '...'):
            return tags, end + 1
        key = YAML_KEY.match(line)
        if key:
            in_tags = key.group(1).lower() == 'tags'
            if in_tags:
                tags += tag_list(key.group(2))
            continue
        item = YAML_ITEM.match(line)
        if item:
            if in_tags:
                tags += tag_list(item.group(1) or '')
        elif not YAML_OTHER.match(line):
            return [], 0
    return [], 0


def inline_tags(line):
    """#tags in a prose line, ignoring `code`, URLs and numbers like #12."""
    prose = URL.sub(' ', INLINE_CODE.sub(' ', line))
    tags = (tag.rstrip('/-').lower() for tag in INLINE_TAG.findall(prose))
    return [tag for tag in tags if tag and not tag.isdigit()]


def closes_fence(fence, line):
    """True when line closes the fence opened with the marker `fence` (e.g. '````')."""
    match = FENCE.match(line)
    return bool(match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
                and not match.group(2).strip())


def scan_note(lines):
    """Find a note's tags and chunks: (tags, [(start, end, heading path)]), lines 1-based.

    Raises NoteSyntaxError for a `tags:` line after the body, as the tutorial does.
    """
    tags, first_body_line = front_matter(lines)
    blocks, open_headings, path = [], [], ()
    start, fence, start_has_fence = 0, None, False

    def close(end):
        nonlocal start
        if start:
            blocks.append((start, end, path))
            start = 0

    for number, line in enumerate(lines[first_body_line:], first_body_line + 1):
        if fence:
            if closes_fence(fence, line):
                fence = None
            continue
        stripped = line.strip()
        marker = stripped[:1]
        if not marker:
            close(number - 1)
            continue
        if marker in BLOCK_MARKERS:
            opening = FENCE.match(line) if marker in '`~' else None
            if opening and not (marker == '`' and '`' in opening.group(2)):
                fence = opening.group(1)
                if not start:
                    start, start_has_fence = number, True
                continue
            if marker == 't' and stripped.startswith('tags:'):
                if blocks or start:
                    raise NoteSyntaxError(TAGS_AFTER_BODY, number)
                tags += tag_list(stripped[5:])
                continue
            heading = ATX_HEADING.match(line) if marker == '#' else None
            if heading or (marker in '=-' and start and not start_has_fence
                           and SETEXT_UNDERLINE.match(line)
                           and not LIST_OR_QUOTE.match(lines[start - 1])):
                if heading:
                    close(number - 1)
                    level, title = len(heading.group(1)), heading.group(2) or ''
                else:
                    level = 1 if marker == '=' else 2
                    title = ' '.join(part.strip() for part in lines[start - 1:number - 1])
                    start = 0
                while open_headings and open_headings[-1][0] >= level:
                    open_headings.pop()
                open_headings.append((level, title))
                path = tuple(title for _, title in open_headings)
                continue
            if marker in '-*_' and THEMATIC_BREAK.match(line):
                close(number - 1)
                continue
        if not start:
            start, start_has_fence = number, False
        if '#' in line:
            tags += inline_tags(line)
    close(len(lines))
    return list(dict.fromkeys(tags)), blocks


def chunk_dicts(relative_path, tags, blocks, texts):
    """The tutorial's chunk dicts for scanned blocks and their texts, plus heading_path."""
    return [{'id': f'{relative_path}:L{start}', 'path': relative_path,
             'heading': path[-1] if path else relative_path, 'heading_path': list(path),
             'start': start, 'end': end, 'tags': tags.copy(), 'text': text}
            for (start, end, path), text in zip(blocks, texts)]


def stored_text(text):
    """The note as the index keeps it: no BOM, each line ending '\\n'.

    Lines end at \\r\\n, \\r and \\n only, as the tutorial's parser split them.
    """
    if text.startswith('\ufeff'):
        text = text[1:]
    if '\r' in text:
        text = LINE_BREAK.sub('\n', text)
    return text if not text or text.endswith('\n') else text + '\n'


def plain_body(text):
    """(front matter tags, line number before the body, '\\n' + body, whether a blank
    line holds spaces) of a stored text whose body is plain (see PLAIN_BODY_BREAKERS);
    None for any other text."""
    tags, first_body_line, body = [], 0, '\n' + text
    simple = text.startswith('---') and SIMPLE_FRONT_MATTER.match(text)
    if simple:   # front_matter's result without a loop over its lines
        for key, value in SIMPLE_FRONT_MATTER_KEY.findall(simple.group(1)):
            if key.lower() == 'tags':
                tags += tag_list(value)
        first_body_line, body = simple.group().count('\n'), text[simple.end() - 1:]
    elif text.startswith('---'):
        lines = text.split('\n', FRONT_MATTER_PEEK)   # front matter is short: split no further
        tags, first_body_line = front_matter(lines[:-1])
        if not first_body_line and len(lines) > FRONT_MATTER_PEEK:
            lines = text.split('\n')
            tags, first_body_line = front_matter(lines[:-1])
        if first_body_line:   # the body, from the '\n' that ends the front matter
            body = text[sum(map(len, lines[:first_body_line])) + first_body_line - 1:]
    if any(map(body.__contains__, PLAIN_BODY_BREAKERS)):
        return None
    odd = SETEXT_OR_SPACED.search(body)   # one pass, where most bodies have neither
    if odd and SETEXT_OR_BREAK.search(body, odd.start()):
        return None
    return tags, first_body_line, body, odd is not None


def plain_sections(body):
    """[(heading path, text)] of the stretches of a plain body ('\\n' + body) that ATX
    headings delimit, in order; a text starts at the '\\n' before its first line."""
    parts = PLAIN_HEADING_CUT.split(body)   # [text, heading, text, ..., heading, text]
    sections, open_headings = [((), parts[0])], []
    for heading, text in zip(parts[1::2], parts[2::2]):
        level, title = atx_heading(heading)
        while open_headings and open_headings[-1][0] >= level:
            open_headings.pop()
        open_headings.append((level, title))
        sections.append((tuple([title for _, title in open_headings]), text))
    return sections


def plain_chunks(section, spaced):
    """The chunk texts of a plain section (see plain_sections), each may start or end
    with '\\n'.  Where no blank line holds spaces (spaced is false), str.split finds the
    same chunks as PLAIN_BLANK_LINE does, at a fraction of its cost."""
    if spaced:
        return list(filter(None, PLAIN_BLANK_LINE.split(section)))
    chunks = list(filter(None, section.split('\n\n')))
    return [chunk for chunk in chunks if chunk != '\n'] if '\n' in chunks else chunks


def atx_heading(line):
    """(level, title) of a line PLAIN_HEADING_CUT found, as ATX_HEADING reads it:
    the title is the rest without the spaces around it and a closing run of '#'
    after a space.  String methods: the expression's lazy title costs far more."""
    marks = line.lstrip(' ')
    rest = marks.lstrip('#')
    title = rest.strip(' \t')
    if title.endswith('#'):
        bare = title.rstrip('#')
        if bare[-1:] in (' ', '\t'):
            title = bare.rstrip(' \t')
    return len(marks) - len(rest), title


def with_inline_tags(tags, texts):
    """tags, then the #tags of the chunk texts, each once."""
    for text in texts if '#' in ''.join(texts) else ():
        for line in text.split('\n') if '#' in text else ():
            if '#' in line:
                tags += inline_tags(line)
    return list(dict.fromkeys(tags))


def scanned_lines(text):
    """(tags, blocks, chunk texts) of a note that is not plain: scan_note line by line."""
    lines = text.split('\n')[:-1]
    tags, blocks = scan_note(lines)
    return tags, blocks, ['\n'.join(lines[start - 1:end]) for start, end, _ in blocks]


def scan_text(text):
    """(tags, blocks, chunk texts) of a note's stored text, exactly as scan_note finds them.

    Most notes need no line-by-line scan: a plain body (see PLAIN_BODY_BREAKERS) is
    cut at blank lines with a regular expression.
    """
    plain = plain_body(text)
    if plain is None:
        return scanned_lines(text)
    tags, number, body, _ = plain
    blocks, texts = [], []
    for path, section in plain_sections(body):
        for piece in PLAIN_BLANK_LINE.split(section):   # '\n' + a chunk's lines, or ''
            if piece:
                lines = piece.count('\n')
                blocks.append((number + 1, number + lines, path))
                texts.append(piece[1:])
                number += lines
            number += 1   # the blank line after the piece, or the heading after the last
    return with_inline_tags(tags, texts), blocks, texts


def index_sections(text):
    """(tags, [(heading path, [chunk text])]) of a stored text: scan_text's chunks in
    runs under one heading path, without line numbers (all that indexing needs).

    A chunk text may start or end with '\\n' here.
    """
    plain = plain_body(text)
    if plain is None:
        tags, blocks, texts = scanned_lines(text)
        runs = itertools.groupby(zip(blocks, texts), key=lambda block_text: block_text[0][2])
        return tags, [(path, [text for _, text in run]) for path, run in runs]
    tags, _, body, spaced = plain
    sections, hashes = [], False
    for path, section in plain_sections(body):
        chunks = plain_chunks(section, spaced)
        if chunks:
            sections.append((path, chunks))
            hashes = hashes or '#' in section
    texts = [chunk for _, chunks in sections for chunk in chunks] if hashes else []
    return with_inline_tags(tags, texts), sections


def parse_note(text, relative_path):
    """Chunks of one note: dicts with id, path, heading, heading_path, start, end, tags, text."""
    return chunk_dicts(relative_path, *scan_text(stored_text(text)))


# --- Tokens -------------------------------------------------------------------
#
# Words are runs of letters and digits, lower-cased.  ASCII text is folded and
# split with a byte table (the hot path); a run holding other characters is
# decoded and split by WORD, and its Hangul words become particle-stripped
# syllable bigrams (as Lucene's CJK bigram filter does) so that compounds and
# their parts find each other.  Terms are UTF-8 bytes while indexing.

ASCII_FOLD = bytes(code + 32 if 65 <= code <= 90
                   else code if 48 <= code <= 57 or 97 <= code <= 122 or code >= 128
                   else 32 for code in range(256))
WORD = re.compile(r'[가-힣]+|[^\W_가-힣]+')
HANGUL_FIRST, HANGUL_LAST = '가', '힣'
HANGUL_BYTES = re.compile(   # a run of 가-힣 in UTF-8
    rb'(?:\xea[\xb0-\xbf][\x80-\xbf]|[\xeb\xec][\x80-\xbf][\x80-\xbf]'
    rb'|\xed[\x80-\x9d][\x80-\xbf]|\xed\x9e[\x80-\xa3])+')
SYLLABLE_BYTES = 3          # every Hangul syllable is three bytes in UTF-8
PARTICLE_BYTES = frozenset(particle.encode('utf-8') for particle in KOREAN_PARTICLES)
STOP_WORD_BYTES = frozenset(word.encode('ascii') for word in STOP_WORDS)
PARTICLE_SIZES = sorted({len(particle) for particle in PARTICLE_BYTES}, reverse=True)
MIN_STEM_BYTES = MIN_STEM_SYLLABLES * SYLLABLE_BYTES
BIGRAM_BYTES = 2 * SYLLABLE_BYTES


def hangul_terms(word):
    """Syllable bigrams of a Hangul word (UTF-8 bytes) less its trailing particle; one
    syllable stays whole.  Works on bytes, so that no term is decoded or encoded."""
    if word in PARTICLE_BYTES:
        return ()
    for size in PARTICLE_SIZES:
        if len(word) - size >= MIN_STEM_BYTES and word[-size:] in PARTICLE_BYTES:
            word = word[:-size]
            break
    if len(word) <= BIGRAM_BYTES:   # one or two syllables: the word is its only term
        return (word,)
    return tuple([word[start:start + BIGRAM_BYTES]
                  for start in range(0, len(word) - SYLLABLE_BYTES, SYLLABLE_BYTES)])


def unicode_terms(run):
    """Terms (UTF-8 bytes) of a run of word bytes holding non-ASCII characters."""
    if HANGUL_BYTES.fullmatch(run):   # the common case: one Hangul word
        return hangul_terms(run)
    terms = []
    for word in WORD.findall(run.decode('utf-8', 'replace').lower()):
        if HANGUL_FIRST <= word[0] <= HANGUL_LAST:
            terms.extend(hangul_terms(word.encode('utf-8')))
        else:
            terms.append(word.encode('utf-8'))
    return tuple(terms)


class RunTerms(dict):
    """{run of word bytes: its terms}, so that each run is analysed once (a cache kept
    by its caller, freed with it)."""

    def __missing__(self, run):
        terms = self[run] = (run,) if run.isascii() else unicode_terms(run)
        return terms


def count_terms(text, run_terms):
    """{term as UTF-8 bytes: count} of text (see analyze); run_terms is a RunTerms."""
    runs = text.encode('utf-8', 'replace').translate(ASCII_FOLD).split()
    counts = dict.fromkeys(runs, 1)
    if len(counts) < len(runs):
        counts = dict.fromkeys(runs, 0)
        for run in runs:
            counts[run] += 1
    if not text.isascii():
        unusual = [run for run in counts if not run.isascii()]
        for run, count in [(run, counts.pop(run)) for run in unusual]:
            for term in run_terms[run]:
                counts[term] = counts.get(term, 0) + count
    return counts


def analyze(text):
    """{term: count} of text: lower-case words, Hangul words as bigrams (see hangul_terms)."""
    return {term.decode('utf-8'): count for term, count in count_terms(text, RunTerms()).items()}


def query_terms(question):
    """The terms a question looks for: its words minus STOP_WORDS."""
    return [term for term in analyze(question) if term not in STOP_WORDS]


def chunk_runs(text):
    """Runs of word bytes of text, repeats kept: its terms once post_notes has replaced
    the runs that hold other than ASCII (see expand_runs)."""
    return text.encode('utf-8', 'replace').translate(ASCII_FOLD).split()


def expand_runs(chunk_lists, lengths, first_chunk, run_terms):
    """Replace each run holding other than ASCII in chunk_lists (run: [chunk]) by its
    terms (see unicode_terms), and turn lengths, counted in runs, into term counts.

    Expanding each distinct run once costs less than looking up every run of every
    chunk.  The chunk lists of a term are then in no fixed order.
    """
    expanded = collections.defaultdict(list)
    for run in [run for run in chunk_lists if not run.isascii()]:
        chunks, terms = chunk_lists.pop(run), run_terms[run]
        for term in terms:
            expanded[term] += chunks
        if len(terms) != 1:
            for chunk in chunks:
                lengths[int(chunk) - first_chunk] += len(terms) - 1
    for term, chunks in expanded.items():
        chunk_lists[term] += chunks


def post_notes(notes, next_chunk):
    """Number the chunks of notes from next_chunk and collect their postings.

    notes is [(relative path, entry, sections)], sections as index_sections gives
    them; each entry gets its first and words (its body words).  Returns (chunk
    lists, heading lists, [body lengths], words): the first maps each term (UTF-8
    bytes) but STOP_WORDS to [chunk, once per occurrence], as decimal strings for
    encode_postings; the second to [(first, span, count)], runs of chunks under a
    heading that has the term.
    """
    chunk_lists, heading_lists = collections.defaultdict(list), collections.defaultdict(list)
    lengths, run_terms, first_chunk, spans = [], RunTerms(), next_chunk, []
    for relative, entry, sections in notes:
        entry['first'], note_start = next_chunk, len(lengths)
        for path, texts in sections:
            for term, count in count_terms(path[-1] if path else relative, run_terms).items():
                heading_lists[term].append((next_chunk, len(texts), count))
            for text in texts:
                label, runs = str(next_chunk), chunk_runs(text)
                for run in runs:
                    chunk_lists[run].append(label)
                lengths.append(len(runs))
                next_chunk += 1
        spans.append((entry, note_start, len(lengths)))
    expand_runs(chunk_lists, lengths, first_chunk, run_terms)
    for entry, start, end in spans:
        entry['words'] = sum(lengths[start:end])
    for word in STOP_WORD_BYTES:
        chunk_lists.pop(word, None)
        heading_lists.pop(word, None)
    return chunk_lists, heading_lists, lengths, sum(lengths)


def term_postings(chunk_lists, heading_lists):
    """{term: ([chunk], [(first, span, count)])} of post_notes' lists."""
    return {term.decode('utf-8'): (chunk_lists.get(term, []), heading_lists.get(term, []))
            for term in dict.fromkeys(itertools.chain(chunk_lists, heading_lists))}


# --- Index storage: atomic write, lock, load and validate ---------------------
#
# index.json (ASCII JSON) holds, besides the tool and version fields and the
# skipped notes, only a few big values, since JSON parses per value:
#   notes:    columns {path, first, count, words, tags, size, mtime_ns, sha256},
#             one row per note in chunk order; a note's chunks are numbers first ..
#             first+count-1, and words counts their body words
#   texts:    TEXT_BUCKETS strings; the notes whose crc32(path) falls in a bucket
#             are stored there as 'path\0text\0' records, zlib-compressed and in
#             base64, in one or more space-separated parts.  A search decompresses
#             only the buckets of its hits.
#   slots:    chunk numbers handed out; numbers of changed notes stay unused until
#             COMPACT_DEAD_SHARE of them are, then all are renumbered
#   lengths:  body word count of chunk n at [n*LENGTH_DIGITS : (n+1)*LENGTH_DIGITS]
#   stats:    {chunks, words} of the live chunks, for BM25's average length
#   postings: POSTING_BUCKETS strings '|term body[;heading]|term ...' where body
#             is 'chunk,...', a chunk's number once per occurrence of the term in
#             its text, and heading 'first+span[:count],...': runs of chunks whose
#             heading holds the term, so heading words are not repeated per chunk.
#             Numbers are not delta-coded, so indexing converts none.  A bucket
#             written by several workers has '#base' before the records of each
#             later worker; their numbers count from base, and a term may then
#             have one record per worker.
#   layout:   {head: [offset of ',"size":[', offset of ',"skipped":', offset of the
#             first posting string], postings: [byte size of each posting string],
#             texts: [byte size of each text string]}, so that a search reads
#             only the notes columns it needs and the few strings that hold its
#             terms and hits (see laid_out_index), and finds its terms with str.find.
#   checksum: the last key: crc32 of the file's bytes before ',"checksum":', so that
#             `index` notices any damage without parsing the postings or texts.

CHECKSUM_KEY = b',"checksum":'
NOTE_COLUMNS = {'path': str, 'first': int, 'count': int, 'words': int, 'tags': list,
                'size': int, 'mtime_ns': int, 'sha256': str}
ENTRY_FIELDS = tuple(NOTE_COLUMNS)[1:]   # a note's entry while indexing: all but its path
SEARCH_COLUMNS = tuple(NOTE_COLUMNS)[:tuple(NOTE_COLUMNS).index('size')]   # read by a search
# The bytes around the places where a search cuts the file (see laid_out_index);
# none of them can occur inside a JSON string, whose quotes are escaped.
FILE_COLUMNS_KEY = b',"size":['
AFTER_NOTES_KEY = b',"skipped":'
POSTINGS_KEY = b',"postings":["'
TEXTS_KEY = b'"],"texts":["'
LAYOUT_KEY = b'"],"layout":'
LAYOUT_TAIL = 1 << 16       # bytes at the end of the file read for the layout


def bucket_of(term, buckets):
    """Which of the posting strings holds term."""
    return zlib.crc32(term.encode('utf-8')) % buckets


def decode_postings(segments):
    """([chunk, once per occurrence], [(first, span, count)]) of one term.

    segments is [(base, posting string)] in base order.
    """
    numbers, heading = [], []
    for base, text in segments:
        body_text, _, heading_text = text.partition(';')
        if body_text:
            numbers += map(base.__add__, map(int, body_text.split(',')))
        for entry in heading_text.split(',') if heading_text else ():
            run, _, count = entry.partition(':')
            first, _, span = run.partition('+')
            heading.append((base + int(first), int(span), int(count or 1)))
    return numbers, heading


def encode_postings(numbers, heading):
    """One posting string (base 0) for post_notes' lists.

    The chunk numbers in numbers are decimal strings (see post_notes).
    """
    return ','.join(numbers) + heading_postings(heading) if heading else ','.join(numbers)


def heading_postings(heading):
    """The heading part of a posting string: ';first+span[:count],...'."""
    return ';' + ','.join(f'{first}+{span}' + (f':{count}' if count != 1 else '')
                          for first, span, count in heading)


def find_postings(buckets, term):
    """[(base, posting string)] of term; empty when no chunk has it."""
    bucket, key, segments = buckets[bucket_of(term, len(buckets))], f'|{term} ', []
    start = bucket.find(key)
    while start >= 0:
        marker = bucket.rfind('#', 0, start)
        base = int(bucket[marker + 1:bucket.index('|', marker)]) if marker >= 0 else 0
        start += len(key)
        ends = [end for end in (bucket.find('|', start), bucket.find('#', start)) if end >= 0]
        end = min(ends, default=len(bucket))
        segments.append((base, bucket[start:end]))
        start = bucket.find(key, end)
    return segments


def unpack_postings(buckets):
    """{term: [(base, posting string)]} of all buckets, for updating."""
    postings = {}
    for bucket in buckets:
        for number, block in enumerate(bucket.split('#')):
            base, _, records = block.partition('|') if number else ('0', '', block[1:])
            for record in records.split('|') if records else ():
                term, _, entries = record.partition(' ')
                postings.setdefault(term, []).append((int(base), entries))
    return postings


def pack_postings(postings):
    """POSTING_BUCKETS strings for {term: [(base, posting string)]}."""
    groups = [{} for _ in range(POSTING_BUCKETS)]
    for term, segments in sorted(postings.items()):
        group = groups[bucket_of(term, POSTING_BUCKETS)]
        for base, text in segments:
            if text:
                group.setdefault(base, []).append(f'|{term} {text}')
    return [''.join((f'#{base}' if base else '') + ''.join(records)
                    for base, records in sorted(group.items())) for group in groups]


def format_lengths(lengths):
    """The index's lengths string for a list of word counts (capped at MAX_CHUNK_LENGTH)."""
    if max(lengths, default=0) > MAX_CHUNK_LENGTH:
        lengths = list(map(min, lengths, itertools.repeat(MAX_CHUNK_LENGTH)))
    digits = [f'%0{LENGTH_DIGITS}d' % length for length in range(max(lengths, default=0) + 1)]
    return ''.join(map(digits.__getitem__, lengths))   # looked up: no formatting per chunk


def chunk_length(lengths, chunk):
    """Body word count of chunk number `chunk`."""
    return int(lengths[chunk * LENGTH_DIGITS:(chunk + 1) * LENGTH_DIGITS])


def text_bucket(relative, buckets):
    """Which of the text strings holds the note at relative."""
    return zlib.crc32(relative.encode('utf-8', 'surrogateescape')) % buckets


def pack_texts(texts):
    """One stored part for [(path, text)]: 'path\\0text\\0' records, compressed, in base64."""
    records = ''.join(f'{relative}\0{text}\0' for relative, text in texts)
    packed = zlib.compress(records.encode('utf-8', 'surrogateescape'), TEXT_COMPRESSION)
    return binascii.b2a_base64(packed, newline=False).decode('ascii')


def unpack_texts(bucket):
    """{path: text} of one text bucket; ValueError or zlib.error when it is damaged."""
    texts = {}
    for part in bucket.split():
        fields = zlib.decompress(binascii.a2b_base64(part)).decode(
            'utf-8', 'surrogateescape').split('\0')
        if len(fields) % 2 != 1 or fields[-1]:
            raise ValueError('stored texts end in the middle of a record')
        texts.update(zip(fields[0:-1:2], fields[1::2]))
    return texts


def note_batches(notes):
    """[(text bucket, [its notes])] for every text bucket, of notes as list_notes gives
    them: a fresh index reads them batch by batch, and packs each batch's texts at once."""
    groups = [[] for _ in range(TEXT_BUCKETS)]
    for note in notes:
        groups[text_bucket(note[0], TEXT_BUCKETS)].append(note)
    return list(enumerate(groups))


def bucket_texts(buckets, bucket, paths):
    """{path: text} of one text bucket; NotesError when it is damaged or lacks a path."""
    try:
        texts = unpack_texts(buckets[bucket])
    except (ValueError, zlib.error):
        raise corrupt_index('stored texts') from None
    missing = [relative for relative in paths if relative not in texts]
    if missing:
        raise corrupt_index(f'no stored text of {missing[0]}')
    return texts


def stored_texts(index, paths):
    """{path: stored text} of the notes at paths; NotesError when the index lacks one."""
    buckets, wanted, found = index['texts'], collections.defaultdict(list), {}
    for relative in paths:
        wanted[text_bucket(relative, len(buckets))].append(relative)
    for bucket, relatives in wanted.items():
        texts = bucket_texts(buckets, bucket, relatives)
        found.update((relative, texts[relative]) for relative in relatives)
    return found


def refreshed_texts(old, files, parsed):
    """The old index's text strings with changed, new and removed notes brought up to date.

    parsed maps paths to new (text, sections); untouched buckets are kept as
    they are, touched ones are rewritten as one part.  NotesError when a touched
    bucket is damaged.
    """
    buckets, members = list(old['texts']), collections.defaultdict(list)
    for relative in files.keys() | old['notes']['path']:
        members[text_bucket(relative, len(buckets))].append(relative)
    touched = {text_bucket(relative, len(buckets)) for relative in parsed}
    touched.update(text_bucket(relative, len(buckets)) for relative in old['notes']['path']
                   if relative not in files)
    for bucket in touched:
        kept = [relative for relative in members[bucket]
                if relative in files and relative not in parsed]
        texts = bucket_texts(buckets, bucket, kept)
        texts = {relative: parsed[relative][0] if relative in parsed else texts[relative]
                 for relative in members[bucket] if relative in files}
        buckets[bucket] = pack_texts(sorted(texts.items())) if texts else ''
    return buckets


def scanned_note(relative, entry, text):
    """(relative, entry, sections) of a note's stored text, for post_notes."""
    return relative, entry, index_sections(text)[1]


def fresh_postings(notes, escaped=False):
    """Buckets, lengths string and words of notes numbered from 0 (see post_notes).

    escaped gives the buckets JSON-escaped (see json_escaped), escaping only the
    terms: the rest of a bucket is ASCII that JSON keeps as it is.
    """
    chunk_lists, heading_lists, lengths, words = post_notes(notes, 0)
    # Each step below maps over all terms at once: a Python call per term costs more.
    terms = list(dict.fromkeys(itertools.chain(heading_lists, chunk_lists)))   # headings first
    names = b'\n'.join(terms).decode('utf-8')   # terms are words: no line break, quote or '\\'
    names = json.dumps(names)[1:-1].split('\\n') if escaped else names.split('\n')
    bodies = list(map(','.join, map(chunk_lists.get, terms, itertools.repeat(()))))
    headed = len(heading_lists)
    bodies[:headed] = map(str.__add__, bodies[:headed],
                          map(heading_postings, heading_lists.values()))
    buckets = map(operator.mod, map(zlib.crc32, terms),   # bucket_of, on the bytes
                  itertools.repeat(POSTING_BUCKETS))
    groups = [[] for _ in range(POSTING_BUCKETS)]
    for bucket, record in zip(buckets, map('|{} {}'.format, names, bodies)):
        groups[bucket].append(record)
    return [''.join(group) for group in groups], format_lengths(lengths), words


def updated_postings(old, files, parsed, dead):
    """Carry the old postings forward: drop the dead notes' chunks, append the parsed ones.

    dead is [(relative path, old entry)]; parsed maps paths to new (text, sections).
    Only the buckets holding a term of a dead or parsed note are unpacked and packed
    again; the others are kept as they are.  Returns (buckets, lengths, slots,
    stats) for the new index.
    """
    dead_texts = stored_texts(old, [relative for relative, _ in dead])
    dead_chunks, dead_terms, words = set(), set(), old['stats']['words']
    for relative, entry in dead:
        dead_chunks.update(range(entry['first'], entry['first'] + entry['count']))
        chunk_lists, heading_lists, _, dead_words = post_notes(
            [scanned_note(relative, dict(entry), dead_texts[relative])], 0)
        dead_terms.update(term_postings(chunk_lists, heading_lists))
        words -= dead_words
    *lists, lengths, added_words = post_notes(
        [(relative, files[relative], sections) for relative, (_, sections) in parsed.items()],
        old['slots'])
    added = term_postings(*lists)
    if len(old['postings']) == POSTING_BUCKETS:
        touched = {bucket_of(term, POSTING_BUCKETS) for term in dead_terms | added.keys()}
        buckets = list(old['postings'])
        postings = unpack_postings(buckets[bucket] for bucket in touched)
    else:   # made with another number of buckets: all are unpacked and packed again
        touched, buckets = range(POSTING_BUCKETS), [''] * POSTING_BUCKETS
        postings = unpack_postings(old['postings'])
    for term in dead_terms.intersection(postings):
        numbers, heading = decode_postings(postings[term])
        postings[term] = [(0, encode_postings(
            [str(chunk) for chunk in numbers if chunk not in dead_chunks],
            [run for run in heading if run[0] not in dead_chunks]))]
    for term, (new_numbers, new_heading) in added.items():
        numbers, heading = decode_postings(postings.get(term, ()))
        postings[term] = [(0, encode_postings(list(map(str, numbers)) + new_numbers,
                                              heading + new_heading))]
    packed = pack_postings(postings)
    for bucket in touched:
        buckets[bucket] = packed[bucket]
    live = sum(entry['count'] for entry in files.values())
    return (buckets, old['lengths'] + format_lengths(lengths),
            old['slots'] + len(lengths), {'chunks': live, 'words': words + added_words})


def refreshed_postings(old, previous, files, parsed):
    """(buckets, lengths, slots, stats, texts) once notes were refreshed against the old index.

    previous holds the old index's entries.  Unchanged postings are kept; otherwise
    they are updated in place, or all chunks are renumbered once COMPACT_DEAD_SHARE
    of the chunk numbers would be unused.  NotesError when stored texts are damaged.
    """
    dead = [(relative, entry) for relative, entry in previous.items()
            if relative not in files or relative in parsed]
    if not dead and not parsed:
        return old['postings'], old['lengths'], old['slots'], old['stats'], old['texts']
    texts = refreshed_texts(old, files, parsed)
    slots_after = old['slots'] + sum(files[relative]['count'] for relative in parsed)
    unused_after = slots_after - sum(entry['count'] for entry in files.values())
    if unused_after < COMPACT_DEAD_SHARE * slots_after:
        return updated_postings(old, files, parsed, dead) + (texts,)
    kept = stored_texts(old, [relative for relative in files if relative not in parsed])
    every_note = [(relative, entry, parsed[relative][1]) if relative in parsed
                  else scanned_note(relative, entry, kept[relative])
                  for relative, entry in files.items()]
    buckets, lengths, words = fresh_postings(every_note)
    chunks = len(lengths) // LENGTH_DIGITS
    return buckets, lengths, chunks, {'chunks': chunks, 'words': words}, texts


def note_columns(files):
    """The index's notes columns for {path: entry}, rows in chunk order."""
    rows = sorted(files.items(), key=lambda item: (item[1]['first'], item[1]['count'], item[0]))
    columns = {'path': [relative for relative, _ in rows]}
    for field in ENTRY_FIELDS:
        columns[field] = [entry[field] for _, entry in rows]
    return columns


def note_entries(columns):
    """{path: entry} of the index's notes columns, for updating."""
    return {relative: dict(zip(ENTRY_FIELDS, values))
            for relative, *values in zip(*(columns[name] for name in NOTE_COLUMNS))}


def check_notes(notes, slots, bad, names=tuple(NOTE_COLUMNS)):
    """Raise bad(detail) unless notes holds the columns names (of NOTE_COLUMNS), all of
    one length, and chunk ranges in order."""
    columns = [notes.get(name) for name in names]
    if any(type(column) is not list for column in columns) or len(set(map(len, columns))) > 1:
        raise bad('"notes" needs columns of equal length: ' + ', '.join(names))
    for name, column in zip(names, columns):
        kind = NOTE_COLUMNS[name]
        if not set(map(type, column)) <= {kind}:
            raise bad(f'"notes" column "{name}" holds something not {kind.__name__}')
    if not set(map(type, itertools.chain.from_iterable(notes['tags']))) <= {str}:
        raise bad('"notes" column "tags" holds something not a list of strings')
    firsts, counts = notes['first'], notes['count']
    ends = map(operator.add, firsts, counts)
    if firsts and (firsts[0] < 0 or min(counts) < 0
                   or not all(map(operator.le, ends, firsts[1:] + [slots]))):
        raise bad('chunk ranges of "notes" overlap or pass "slots"')
    if len(set(notes['path'])) < len(firsts):
        raise bad('a path appears twice in "notes"')


def check_index(document, path, advice=REBUILD_ADVICE, columns=tuple(NOTE_COLUMNS)):
    """Raise NotesError unless document is a well-formed index of this tool's format
    whose notes have these columns (a search reads SEARCH_COLUMNS only)."""
    def bad(detail):
        return NotesError(f'index file is malformed: {path} ({detail}){advice}')

    if not isinstance(document, dict):
        raise bad('not a JSON object')
    if document.get('tool') != TOOL:
        made_by = document.get('tool')
        if isinstance(made_by, str) and made_by:
            raise NotesError(f'{path} was made by {made_by}.py, not {PROG}')
        raise NotesError(f'{path} is not a {TOOL} index')
    if document.get('format_version') != FORMAT_VERSION:
        raise NotesError(f'{path} has index format {document.get("format_version")!r}, '
                         f'this {PROG} reads {FORMAT_VERSION}{advice}')
    for key, kind in (('parser_version', int), ('tokenizer_version', int), ('root', str),
                      ('notes', dict), ('skipped', list), ('postings', list), ('texts', list),
                      ('lengths', str), ('slots', int), ('stats', dict)):
        lazy = key in ('postings', 'texts') and type(document.get(key)) is LazyStrings
        if type(document.get(key)) is not kind and not lazy:
            raise bad(f'"{key}" missing or not {kind.__name__}')
    slots = document['slots']
    if len(document['lengths']) != slots * LENGTH_DIGITS:
        raise bad('"lengths" does not match "slots"')
    for key in ('postings', 'texts'):   # LazyStrings are strings (or errors) when read
        strings = document[key]
        if not len(strings) or (type(strings) is list and not set(map(type, strings)) <= {str}):
            raise bad(f'"{key}" is not a list of strings')
    stats = document['stats']
    if type(stats.get('chunks')) is not int or type(stats.get('words')) is not int:
        raise bad('"stats" needs integer "chunks" and "words"')
    check_notes(document['notes'], slots, bad, columns)


class LazyStrings:
    """The posting or text strings of an open index file, each read and decoded when
    it is used (see laid_out_index)."""

    def __init__(self, file, spans):
        """spans: the (start, end) byte offsets of each string, without its quotes."""
        self.file, self.spans = file, spans

    def __len__(self):
        return len(self.spans)

    def __getitem__(self, number):
        """String `number`; ValueError when its bytes are not one JSON string."""
        data = self.read(self.spans[number][0] - 1, self.spans[number][1] + 1)
        if not (data.startswith(b'"') and data.endswith(b'"')):
            raise ValueError('a string of the layout is not a JSON string')
        return json.loads(data)

    def json(self):
        """The whole list as the file has it, in JSON (for write_index: nothing decoded)."""
        return self.read(self.spans[0][0] - 2, self.spans[-1][1] + 2)

    def read(self, start, end):
        """Bytes start to end of the file."""
        try:
            self.file.seek(start)
            return self.file.read(end - start)
        except OSError as error:
            name = getattr(self.file, 'name', 'index file')
            raise NotesError(f'cannot read index file {name}: {error.strerror or error}') from None


def string_spans(start, sizes):
    """[(start, end)] of strings of these byte sizes in a JSON list from start on."""
    spans = []
    for size in sizes:
        spans.append((start, start + size))
        start += size + len(b'","')
    return spans


def laid_out_index(file, columns=SEARCH_COLUMNS):
    """The index in an open file, read by its layout: the notes columns (all, or
    those a search reads: SEARCH_COLUMNS, without reading the others), and
    postings and texts as LazyStrings.  None when the file has no layout that
    agrees with its bytes: every number in it must be a count of bytes, the
    strings must end where the layout starts, and each cut must fall between the
    keys write_index put around it."""
    try:
        tail_start = max(0, file.seek(0, io.SEEK_END) - LAYOUT_TAIL)
        file.seek(tail_start)
        tail = file.read()
        at, end = tail.rfind(LAYOUT_KEY), tail.rfind(CHECKSUM_KEY)
        layout = json.loads(tail[at + len(LAYOUT_KEY):end]) if 0 <= at < end else {}
        numbers = [layout.get('head'), layout.get('postings'), layout.get('texts')]
        if not all(type(part) is list and part and all(type(number) is int and number >= 0
                                                       for number in part) for part in numbers):
            return None
        notes_cut, head_rest, first = layout['head']
        postings = string_spans(first, layout['postings'])
        texts = string_spans(postings[-1][1] + len(TEXTS_KEY), layout['texts'])
        if texts[-1][1] != tail_start + at or not 0 <= notes_cut < head_rest < first:
            return None
        file.seek(postings[-1][1])
        if file.read(len(TEXTS_KEY)) != TEXTS_KEY:
            return None
        file.seek(0)
        if columns == SEARCH_COLUMNS:   # the notes, cut before the file columns
            notes = file.read(notes_cut + len(FILE_COLUMNS_KEY))
            if not notes.endswith(FILE_COLUMNS_KEY):
                return None
            notes = notes[:notes_cut] + b'}'
            file.seek(head_rest)
        else:
            notes = file.read(head_rest)
        rest = file.read(first - head_rest)
        if not (rest.startswith(AFTER_NOTES_KEY) and rest.endswith(POSTINGS_KEY)):
            return None
        document = json.loads(notes + rest[:-len(POSTINGS_KEY)] + b'}')
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    document['postings'], document['texts'] = LazyStrings(file, postings), LazyStrings(file, texts)
    return document


def index_file(path):
    """The index file at path, open for reading; NotesError saying why it cannot be.
    A pipe is read too (a search reads it whole); a device or socket is refused."""
    try:
        file = open(path, 'rb')
    except FileNotFoundError:
        raise NotesError(f"index file not found: {path} (run 'index' first)") from None
    except IsADirectoryError:
        raise NotesError(f'index path is a directory: {path}') from None
    except OSError as error:
        raise NotesError(f'cannot read index file {path}: {error.strerror or error}') from None
    mode = os.fstat(file.fileno()).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        file.close()
        raise NotesError(f'index path is not a regular file: {path}')
    return file


def file_bytes(file, path):
    """All of an open index file; NotesError when it cannot be read."""
    try:
        if file.seekable():
            file.seek(0)
        return file.read()
    except MemoryError:
        raise NotesError(f'index file is too large to read: {path}') from None
    except OSError as error:
        raise NotesError(f'cannot read index file {path}: {error.strerror or error}') from None


def parsed_index(data, path, advice):
    """The document of an index file's bytes, parsed whole."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:
        raise NotesError(f'index file is corrupt: {path} ({error}){advice}') from None


def load_index(path, advice=REBUILD_ADVICE, verify=False):
    """Read and check an index file; raise NotesError saying why it cannot be used.

    Its postings and texts are LazyStrings over its bytes (see laid_out_index; a
    file without a layout is parsed whole).  verify also compares the file's
    checksum: `index` does, before it carries the index forward; a search reads
    less (see open_index).
    """
    with index_file(path) as file:
        data = file_bytes(file, path)
    document = (laid_out_index(io.BytesIO(data), tuple(NOTE_COLUMNS))
                or parsed_index(data, path, advice))
    check_index(document, path, advice)
    if verify:
        end = data.rfind(CHECKSUM_KEY)
        if end < 0 or zlib.crc32(memoryview(data)[:end]) != checksum_of(data[end:]):
            raise NotesError(f'index file is corrupt: {path} (checksum){advice}')
    return document


def checksum_of(tail):
    """The checksum in the tail of an index file, from CHECKSUM_KEY on; None if none."""
    digits = tail[len(CHECKSUM_KEY):].rstrip()[:-1]
    return int(digits) if digits.isdigit() else None


@contextlib.contextmanager
def open_index(path):
    """load_index for a search, reading only what it uses (see laid_out_index); the
    file stays open in the with block.  Damage in what a search does not read is
    left for `index` to notice (see load_index's verify)."""
    with index_file(path) as file:
        document = laid_out_index(file)
        if document is None:
            document = parsed_index(file_bytes(file, path), path, REBUILD_ADVICE)
            check_index(document, path)
        else:
            check_index(document, path, columns=SEARCH_COLUMNS)
        yield document


def current_versions(document):
    """True when an index's chunks were made by this parser and tokenizer."""
    return (document['parser_version'], document['tokenizer_version']) == (
        PARSER_VERSION, TOKENIZER_VERSION)


def check_versions(document, path):
    """Raise NotesError unless the index's chunks match this parser and tokenizer."""
    if not current_versions(document):
        raise NotesError(f'{path} was made by another version of {PROG}{REBUILD_ADVICE}')


def process_alive(pid):
    """True unless pid is known to be dead (unknown counts as alive)."""
    if pid <= 0 or os.name != 'posix':
        return pid > 0
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def host_name():
    """This machine's name, as lock files record it (uname's is gethostname's)."""
    if hasattr(os, 'uname'):
        return os.uname().nodename
    import socket  # imported here: only `index` takes the lock; searches start faster
    return socket.gethostname()


def lock_owner_text():
    """What a lock file says about its holder: 'pid host'."""
    return f'{os.getpid()} {host_name()}\n'


def abandoned_lock(lock_path):
    """True when an O_EXCL lock file's holder is dead or it is older than LOCK_STALE_AGE."""
    try:
        with open(lock_path, encoding='utf-8', errors='replace') as file:
            pid_text, _, host = file.read().strip().partition(' ')
        age = time.time() - os.stat(lock_path).st_mtime
    except OSError:
        return False
    dead = host == host_name() and pid_text.isdigit() and not process_alive(int(pid_text))
    return dead or age > LOCK_STALE_AGE


def lock_timeout(lock_path):
    """The error for an `index` run that waited LOCK_TIMEOUT for the lock."""
    return TimeoutError(errno.ETIMEDOUT, 'another index run holds the lock', lock_path)


@contextlib.contextmanager
def flock_held(lock_path, deadline):
    """Hold an flock on lock_path (the kernel drops it if we die); yields the fd."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, 'O_CLOEXEC', 0), 0o600)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise lock_timeout(lock_path) from None
                time.sleep(LOCK_POLL)
        os.ftruncate(fd, 0)
        os.write(fd, lock_owner_text().encode('utf-8'))
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def lock_file_held(lock_path, deadline):
    """Hold lock_path by creating it with O_EXCL, removing one a dead process left; yields None."""
    while True:
        try:
            fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            if abandoned_lock(lock_path):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(lock_path)
            elif time.monotonic() > deadline:
                raise lock_timeout(lock_path) from None
            else:
                time.sleep(LOCK_POLL)
    try:
        try:
            os.write(fd, lock_owner_text().encode('utf-8'))
        finally:
            os.close(fd)
        yield None
    finally:
        with contextlib.suppress(OSError):
            os.remove(lock_path)


def index_lock(index_path, timeout):
    """Hold `<index>.lock` so concurrent `index` runs take turns; TimeoutError after timeout.

    Uses fcntl.flock where there is one, else an O_EXCL lock file.  The context
    value is the flock's fd (worker processes close their copy) or None.
    """
    held = flock_held if fcntl else lock_file_held
    return held(index_path + '.lock', time.monotonic() + timeout)


def temporary_name(index_path):
    """A fresh temp file name beside the index: .<name>.<pid>.<random>.tmp"""
    folder, name = os.path.split(index_path)
    return os.path.join(folder, f'.{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp')


def remove_leftover_temporaries(index_path):
    """Delete temp files of earlier runs whose process is gone (call with the lock held)."""
    folder, name = os.path.split(index_path)
    pattern = re.compile(re.escape(f'.{name}.') + r'(\d+)\.[0-9a-f]+\.tmp')
    with contextlib.suppress(OSError), os.scandir(folder or '.') as scan:
        for entry in scan:
            match = pattern.fullmatch(entry.name)
            if match and not process_alive(int(match.group(1))):
                with contextlib.suppress(OSError):
                    os.remove(entry.path)


class JsonPieces(tuple):
    """A value already in JSON: ASCII bytes (or memoryviews) to be written one after the
    other (the big values of a fresh index, escaped by the processes that built them)."""


def json_bytes(value):
    """value as compact ASCII JSON (ASCII loads faster)."""
    return json.dumps(value, separators=(',', ':')).encode('ascii')


def json_escaped(value):
    """A string's JSON without its quotes, or a list's without its brackets (see
    json_bytes)."""
    return json_bytes(value)[1:-1]


def json_object(mapping):
    """JsonPieces of a dict: JsonPieces values go in as they are, others via json_bytes."""
    pieces = []
    for key, value in mapping.items():
        pieces += [b',' if pieces else b'{', json_bytes(key), b':']
        if isinstance(value, JsonPieces):
            pieces += value
        else:
            pieces.append(json_bytes(value))
    pieces.append(b'}')
    return JsonPieces(pieces)


def json_note_columns(columns):
    """JsonPieces of the notes columns, each given as a list of pieces of its items,
    JSON-escaped (see json_escaped)."""
    return json_object({name: JsonPieces((b'[', b','.join(columns[name]), b']'))
                        for name in NOTE_COLUMNS})


def json_string_list(strings):
    """JsonPieces of a non-empty list of strings, each given as a list of pieces of
    it, JSON-escaped (see json_escaped)."""
    pieces = [b'["']
    for string in strings:
        pieces += string
        pieces.append(b'","')
    pieces[-1] = b'"]'
    return JsonPieces(pieces)


def string_sizes(value):
    """Byte sizes of the strings in a JSON list of strings none of which holds a quote
    (as posting and text strings do not), given as bytes or as json_string_list's
    JsonPieces; [] for anything else."""
    if isinstance(value, JsonPieces):
        if len(value) == 1:
            return string_sizes(value[0])
        sizes, size = [], 0
        for piece in value[1:-1]:   # a string's pieces, then '","' (no string holds a quote)
            if piece == b'","':
                sizes.append(size)
                size = 0
            else:
                size += len(piece)
        return sizes + [size]
    sizes, start = [], 2
    if not value.startswith(b'["'):
        return sizes
    while True:
        quote = value.find(b'"', start)   # one byte: found at memchr's speed
        if quote < 0:
            return []
        sizes.append(quote - start)
        if value[quote:quote + 3] != b'","':
            return sizes if value[quote:] == b'"]' else []
        start = quote + 3


def index_layout(values):
    """The 'layout' of an index file whose keys and JSON values (as JsonPieces) are
    values (see laid_out_index)."""
    starts, position = {}, 1   # each value's first byte; the file starts with '{'
    for key, value in values.items():
        starts[key] = position + len(json_bytes(key)) + 1
        position = starts[key] + sum(map(len, value)) + 1
    head = [starts['notes'] + b''.join(values['notes']).find(FILE_COLUMNS_KEY),
            starts['skipped'] - len(AFTER_NOTES_KEY), starts['postings'] + 2]
    return {'head': head, 'postings': string_sizes(values['postings']),
            'texts': string_sizes(values['texts'])}


def replace_file(source, destination):
    """os.replace; on Windows, where it fails while a search holds the old index open,
    tried again for up to REPLACE_RETRY seconds."""
    deadline = time.monotonic() + REPLACE_RETRY
    while True:
        try:
            return os.replace(source, destination)
        except PermissionError:
            if not READERS_BLOCK_REPLACE or time.monotonic() > deadline:
                raise
            time.sleep(LOCK_POLL)


def write_index(index_path, document):
    """Write document to a temp file, fsync, then replace the index (keeping its mode).

    The JSON is compact and ASCII (see json_object); the layout and the checksum
    are added as the last keys.
    """
    values = {key: value if isinstance(value, JsonPieces) else JsonPieces((
                  value.json() if isinstance(value, LazyStrings) else json_bytes(value),))
              for key, value in document.items()}   # big values stay in pieces: no copy
    values['layout'] = JsonPieces((json_bytes(index_layout(values)),))
    pieces = list(json_object(values))
    del pieces[-1]   # the closing brace, which follows the checksum
    checksum = 0
    for piece in pieces:
        checksum = zlib.crc32(piece, checksum)
    pieces.append(CHECKSUM_KEY + b'%d}' % checksum)
    try:
        mode = stat.S_IMODE(os.stat(index_path).st_mode)
    except FileNotFoundError:
        mode = 0o600
    temporary = temporary_name(index_path)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_CLOEXEC', 0),
                 0o600)
    try:
        with open(fd, 'wb') as file:
            if hasattr(os, 'fchmod'):
                os.fchmod(file.fileno(), mode)
            file.writelines(pieces)
            file.flush()
            os.fsync(file.fileno())
        replace_file(temporary, index_path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
    with contextlib.suppress(OSError):
        folder_fd = os.open(os.path.dirname(index_path) or '.', os.O_RDONLY)
        try:
            os.fsync(folder_fd)
        finally:
            os.close(folder_fd)


def checked_paths(root, destination):
    """Absolute (root, index path), or NotesError when either cannot be used."""
    root_path = os.path.realpath(os.fspath(root))
    if not os.path.isdir(root_path):
        raise NotesError(f'root is not a directory: {os.fspath(root)}')
    index_path = os.path.abspath(os.fspath(destination))
    if os.path.isdir(index_path):
        raise NotesError(f'index path is a directory: {os.fspath(destination)}')
    if not os.path.isdir(os.path.dirname(index_path)):
        raise NotesError(f'folder of the index does not exist: {os.fspath(destination)}')
    return root_path, index_path


def previous_index(index_path, root_path, shown_path):
    """(old index or None, warning or None): the index to carry forward, if it can be."""
    if not os.path.lexists(index_path):
        return None, None
    try:
        old = load_index(shown_path, advice='', verify=True)
    except NotesError as error:
        return None, f'{error}; {REBUILDING}'
    if old['root'] != root_path:
        return None, None
    return old, None


def refresh_note(path, info, previous, max_file_size, trusted_before_ns):
    """Return (entry, (text, sections) or None) for one note (see index_sections).

    previous (the note's old entry) is reused when the note did not change; info is
    the note's lstat, or None for a note listed without (see list_notes).
    """
    if previous and (previous['size'], previous['mtime_ns']) == (info.st_size, info.st_mtime_ns):
        return previous, None
    if info is not None and info.st_size > max_file_size:
        raise too_large(info.st_size, max_file_size)
    import hashlib  # imported here: only `index` hashes; searches start faster without it
    try:
        data, info = read_regular_file(path, max_file_size)
    except OSError:
        if info is None:   # as with an lstat first: a note too large says so, readable or not
            size = os.stat(path, follow_symlinks=False).st_size
            if size > max_file_size:
                raise too_large(size, max_file_size) from None
        raise
    mtime_ns = info.st_mtime_ns if info.st_mtime_ns < trusted_before_ns else -1
    digest = hashlib.sha256(data).hexdigest()
    if previous and previous['sha256'] == digest:
        return dict(previous, size=info.st_size, mtime_ns=mtime_ns), None
    if b'\0' in data:
        raise SkippedNote('skipped: binary file (contains NUL bytes)',
                          line_of_offset(data, data.index(b'\0')))
    text = stored_text(data.decode('utf-8'))
    tags, sections = index_sections(text)
    entry = {'sha256': digest, 'size': info.st_size, 'mtime_ns': mtime_ns, 'tags': tags,
             'first': 0, 'count': sum(len(texts) for _, texts in sections), 'words': 0}
    return entry, (text, sections)


def show_progress(stream, done, total, started):
    """One carriage-return progress line on a terminal."""
    rate = done / max(time.monotonic() - started, 1e-6)
    stream.write(f'\rindexing {done}/{total} files ({rate:.0f} files/s)')
    stream.flush()


def read_note(relative, path, info, previous, max_file_size, trusted_before_ns, strict):
    """(entry, scanned or None, None), or (None, None, skip record) for a note left out.

    scanned is (text, sections) of a note read and parsed (see refresh_note).

    strict re-raises read, decode and parse errors, as the tutorial's build_index did.
    """
    try:
        return refresh_note(path, info, previous, max_file_size, trusted_before_ns) + (None,)
    except SkippedNote as error:
        return None, None, skip_record(relative, str(error), error.line)
    except (OSError, UnicodeDecodeError, NoteSyntaxError) as error:
        if strict:
            raise
        line, reason = describe_failure(error)
        return None, None, skip_record(relative, reason, line)


def refresh_notes(notes, previous, max_file_size, trusted_before_ns, strict, progress):
    """Reuse or re-read each note: (files, {path: scanned} of re-parsed ones, skipped)."""
    files, parsed, skipped = {}, {}, []
    started, last_shown = time.monotonic(), -PROGRESS_INTERVAL
    for done, (relative, path, info) in enumerate(notes):
        if progress and time.monotonic() - last_shown >= PROGRESS_INTERVAL:
            show_progress(progress, done, len(notes), started)
            last_shown = time.monotonic()
        entry, scanned, skip = read_note(relative, path, info, previous.get(relative),
                                         max_file_size, trusted_before_ns, strict)
        if skip:
            skipped.append(skip)
            continue
        files[relative] = entry
        if scanned is not None:
            parsed[relative] = scanned
    return files, parsed, skipped


@contextlib.contextmanager
def collector_paused():
    """Pause the cyclic garbage collector while indexing.

    Indexing makes millions of small objects that form no cycles; the collector's
    repeated passes over them would add about a quarter to the time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def index_new_notes(batches, max_file_size, trusted_before_ns, strict):
    """Read, parse and post notes from scratch, numbering their chunks from 0.

    batches is an iterable of (text bucket, [notes]) as note_batches gives them.
    Returns (notes, skipped, buckets, lengths string, words, texts), notes as
    note_part gives them, the buckets and texts JSON-escaped (see json_escaped): the
    process writing the index has little left to do.  For a big folder each process
    runs this on the batches it claims (see index_in_workers), and packs the texts
    of each batch as soon as it is read, while the other processes still work.
    """
    files, skipped, packed = {}, [], [b''] * TEXT_BUCKETS

    def scanned_notes():   # read as fresh_postings goes: a claimed note is posted at once
        for bucket, notes in batches:
            texts = []
            for relative, path, info in notes:
                entry, scanned, skip = read_note(relative, path, info, None, max_file_size,
                                                 trusted_before_ns, strict)
                if skip:
                    skipped.append(skip)
                    continue
                files[relative] = entry
                texts.append((relative, scanned[0]))
                yield relative, entry, scanned[1]
            if texts:
                packed[bucket] = pack_texts(texts).encode('ascii')   # base64: no escapes

    buckets, lengths, words = fresh_postings(scanned_notes(), escaped=True)
    escaped = [bucket.encode('ascii') for bucket in buckets]
    return note_part(files), skipped, escaped, lengths, words, packed


def note_part(files):
    """(paths, firsts, {column: its items JSON-escaped}) of the notes of one share, in
    chunk order (see note_columns); fresh_index adds the share's base to firsts."""
    columns = note_columns(files)
    firsts = columns.pop('first')
    return columns['path'], firsts, {name: json_escaped(column)
                                     for name, column in columns.items()}


def start_worker(lock_fd, parent_pid):
    """Worker set-up: let go of the inherited lock, and exit once the parent has died."""
    import threading  # imported here: only workers need it
    if lock_fd is not None:
        os.close(lock_fd)

    def exit_with_parent():
        while os.getppid() == parent_pid:
            time.sleep(WORKER_WATCH_INTERVAL)
        os._exit(1)

    threading.Thread(target=exit_with_parent, daemon=True).start()


def answer_file():
    """A nameless file to hold a worker's answer: in memory where the system has memfd."""
    if hasattr(os, 'memfd_create'):
        with contextlib.suppress(OSError):   # refused (an old kernel, a sandbox): see below
            return os.memfd_create('notes_search answer', os.MFD_CLOEXEC)
    import tempfile  # imported here: only a big fresh index without memfd needs it
    fd, path = tempfile.mkstemp(prefix='notes_search-')
    os.remove(path)
    return fd


def fork_worker(share, max_file_size, trusted_before_ns, lock_fd):
    """Fork a worker process that indexes share (batches of notes); return (its pid,
    the file it writes its answer to (see answer_pieces)).

    Forking copies this process: the worker starts at once, already holding its
    share, and nothing is pickled or imported again.  The answer goes to a file,
    not a pipe, so that the worker never waits for this process to read it.
    """
    answer, parent_pid = answer_file(), os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(answer)
        raise
    if pid:
        return pid, answer
    status = 1   # the worker: it ends here whatever happens, never in its parent's code
    try:
        start_worker(lock_fd, parent_pid)
        pieces = answer_pieces(index_new_notes(share, max_file_size, trusted_before_ns, False))
        with open(answer, 'wb') as file:
            file.writelines(pieces)
        status = 0
    finally:   # on any error the parent gets no answer, and indexes the notes itself
        os._exit(status)


def answer_pieces(result):
    """A worker's answer to send: index_new_notes's result as pieces of bytes, the
    size of a marshalled head, the head, then the buckets and texts (most of it) as
    they are, so that neither side copies them (see answer_result)."""
    notes, skipped, buckets, lengths, words, texts = result
    pieces = buckets + texts
    head = marshal.dumps((notes, skipped, lengths, words, len(buckets), list(map(len, pieces))))
    return [len(head).to_bytes(8, 'big'), head] + pieces


def answer_result(answer):
    """The index_new_notes result in a worker's answer (a memoryview of the bytes of
    answer_pieces), its buckets and texts memoryviews of answer."""
    position = 8 + int.from_bytes(answer[:8], 'big')
    notes, skipped, lengths, words, buckets, sizes = marshal.loads(answer[8:position])
    pieces = []
    for size in sizes:
        pieces.append(answer[position:position + size])
        position += size
    return notes, skipped, pieces[:buckets], lengths, words, pieces[buckets:]


def worker_answer(answer, status):
    """The result in the answer file of a forked worker that ended with status (see
    fork_worker); RuntimeError when it failed or died first.  Closes answer.

    The file is mapped, not read: the buckets and texts stay in the pages the worker
    wrote until the index is written.
    """
    import mmap  # imported here: only a big fresh index needs it
    try:
        size = os.fstat(answer).st_size
        if status or not size:
            raise RuntimeError('a worker process died')
        return answer_result(memoryview(mmap.mmap(answer, size, access=mmap.ACCESS_READ)))
    finally:
        os.close(answer)


def index_share(sender, share, max_file_size, trusted_before_ns, parent_pid):
    """A spawned worker process (where forking is not safe): send its answer (see
    answer_pieces) for its share of the batches, as fork_worker's workers do; nothing
    when it failed."""
    start_worker(None, parent_pid)
    try:
        with collector_paused():
            answer = b''.join(answer_pieces(index_new_notes(share, max_file_size,
                                                            trusted_before_ns, False)))
    except (Exception, KeyboardInterrupt):  # noqa: BLE001 the parent indexes the share
        return                               # itself, or was interrupted too and says so
    with contextlib.suppress(OSError):   # a parent that died reads no answer
        sender.send_bytes(answer)


def index_in_spawned_workers(batches, processes, max_file_size, trusted_before_ns):
    """index_in_workers where forking is not safe: multiprocessing's spawned workers,
    each given an interleaved share of the batches (nothing can be shared with them)."""
    import multiprocessing  # imported here: only a big fresh index on such a system needs it
    shares = [batches[start::processes] for start in range(processes)]
    workers, receivers = [], []
    try:
        for share in shares[1:]:
            receiver, sender = multiprocessing.Pipe(duplex=False)
            receivers.append(receiver)
            with sender:   # the worker has a copy of its own
                worker = multiprocessing.Process(target=index_share, daemon=True, args=(
                    sender, share, max_file_size, trusted_before_ns, os.getpid()))
                worker.start()
            workers.append(worker)
        yield index_new_notes(shares[0], max_file_size, trusted_before_ns, False)
        for receiver in receivers:
            try:
                yield answer_result(memoryview(receiver.recv_bytes()))
            except EOFError:
                raise RuntimeError('a worker process died') from None
    except BaseException:
        for worker in workers:
            worker.terminate()   # a worker still at work stops; one that has ended is gone
        raise
    finally:
        for worker in workers:
            worker.join()
        for receiver in receivers:
            receiver.close()


def batch_claims(batches):
    """A pipe's reading end holding one byte per batch number (< 256): each os.read of
    one byte, from whichever process, claims the next batch; b'' when none is left."""
    reader, writer = os.pipe()
    with open(writer, 'wb') as claims:   # far below the pipe's buffer: never blocks
        claims.write(bytes(range(batches)))
    return reader


def claimed_batches(batches, claims):
    """Yield each batch this process claims (see batch_claims)."""
    while True:
        number = os.read(claims, 1)
        if not number:
            return
        yield batches[number[0]]


def index_in_workers(notes, processes, max_file_size, trusted_before_ns, lock_fd):
    """Yield index_new_notes of parts of notes: the first part indexed here, the others
    by processes - 1 forked workers.  They and this process claim batches of notes as
    they go, so that the process on a faster CPU indexes more.  Where forking is not
    safe, see index_in_spawned_workers.

    RuntimeError when a worker died without an answer.
    """
    import hashlib  # noqa: F401 (see refresh_note) imported before forking: workers have it
    batches = note_batches(notes)   # alike in mix: by crc32 of the path
    if not FORK_WORKERS:
        yield from index_in_spawned_workers(batches, processes, max_file_size, trusted_before_ns)
        return
    claims, workers = batch_claims(len(batches)), []
    try:
        for _ in range(processes - 1):
            workers.append(fork_worker(claimed_batches(batches, claims), max_file_size,
                                       trusted_before_ns, lock_fd))
        yield index_new_notes(claimed_batches(batches, claims), max_file_size,
                              trusted_before_ns, False)
        while workers:
            pid, answer = workers[0]
            _, status = os.waitpid(pid, 0)   # the worker has written its answer and ended
            del workers[0]
            yield worker_answer(answer, status)
    except BaseException:
        import signal  # imported here: only a failed or interrupted run needs it
        for pid, _ in workers:
            os.kill(pid, signal.SIGTERM)   # a worker still at work stops; one that ended is gone
        raise
    finally:
        for pid, answer in workers:
            os.close(answer)
            with contextlib.suppress(ChildProcessError):   # reaped just before an interrupt
                os.waitpid(pid, 0)
        os.close(claims)


def fresh_index(notes, max_file_size, trusted_before_ns, strict, progress, lock_fd):
    """Index notes from scratch: (paths, skipped, notes, buckets, lengths string, words,
    texts), the notes columns, buckets and texts as JsonPieces.

    PARALLEL_MIN_NOTES or more notes are shared between this process and worker
    processes (see index_in_workers); the buckets of each later part are appended
    after a '#base' marker, and each text bucket comes from the part that read its
    batch.  The notes columns are the parts' one after the other (empty notes where
    two parts meet stay in part order).  Notes are read batch by batch, so the
    skipped ones are put back in listing order, as a refresh lists them.
    """
    processes = min(os.cpu_count() or 1, MAX_WORKERS, len(notes)) or 1
    if progress:
        show_progress(progress, 0, len(notes), time.monotonic())
    parts, started, done = [], time.monotonic(), 0
    if not strict and processes > 1 and len(notes) >= PARALLEL_MIN_NOTES:
        try:
            for part in index_in_workers(notes, processes, max_file_size, trusted_before_ns,
                                         lock_fd):
                parts.append(part)
                done += len(part[0][0]) + len(part[1])   # its notes and skipped notes
                if progress:
                    show_progress(progress, done, len(notes), started)
        except (ImportError, OSError, RuntimeError):
            parts = []
    if not parts:
        parts = [index_new_notes(note_batches(notes), max_file_size, trusted_before_ns, strict)]
    paths, firsts, skipped, words, base = [], [], [], 0, 0
    columns = {name: [] for name in NOTE_COLUMNS}     # the escaped pieces of each column
    buckets = [[] for _ in range(POSTING_BUCKETS)]   # the escaped pieces of each bucket
    for part_notes, part_skipped, part_buckets, part_lengths, part_words, _ in parts:
        part_paths, part_firsts, part_columns = part_notes
        paths += part_paths
        firsts += [first + base for first in part_firsts]
        for name, items in part_columns.items():
            if items:
                columns[name].append(items)
        skipped += part_skipped
        for pieces, piece in zip(buckets, part_buckets):
            if piece:
                pieces += [b'#%d' % base, piece] if base else [piece]
        words += part_words
        base += len(part_lengths) // LENGTH_DIGITS
    if len(skipped) > 1:
        listed = {note[0]: number for number, note in enumerate(notes)}
        skipped.sort(key=lambda record: listed[record['path']])
    columns['first'] = [json_escaped(firsts)] if firsts else []
    lengths = ''.join(part[3] for part in parts)
    texts = ([b' '.join(filter(None, pieces))] for pieces in zip(*(part[5] for part in parts)))
    return (paths, skipped, json_note_columns(columns), json_string_list(buckets), lengths,
            words, json_string_list(texts))


def update_index(root, destination, max_file_size=MAX_FILE_SIZE, include_hidden=False,
                 strict=True, progress=None):
    """Bring the index at destination up to date with the notes under root.

    Returns {'changed', 'removed', 'skipped': [records], 'warning'}.  strict re-raises
    read, decode and parse errors (the tutorial's behaviour); otherwise they are skipped.
    Nothing is written when nothing changed.
    """
    root_path, index_path = checked_paths(root, destination)
    trusted_before_ns = time.time_ns() - RACY_MTIME_NS
    with index_lock(index_path, LOCK_TIMEOUT) as lock_fd, collector_paused():
        # All that update_locked builds is freed when it returns, before the collector
        # resumes: the collector would otherwise walk through all of it once.
        return update_locked(root_path, index_path, os.fspath(destination), lock_fd,
                             trusted_before_ns, max_file_size, include_hidden, strict, progress)


def update_locked(root_path, index_path, shown_path, lock_fd, trusted_before_ns,
                  max_file_size, include_hidden, strict, progress):
    """update_index's work, done holding the lock; returns update_index's summary."""
    remove_leftover_temporaries(index_path)
    old, warning = previous_index(index_path, root_path, shown_path)
    previous = note_entries(old['notes']) if old else {}
    stale = old is None or not current_versions(old)
    with_stat = strict or not stale   # a fresh index compares no stat (see list_notes)
    notes, skipped = list_notes(root_path, {os.path.realpath(index_path)}, include_hidden,
                                with_stat)
    columns = None   # the notes columns, when fresh_index gives them (as JSON)
    if not stale:
        files, parsed, more_skipped = refresh_notes(
            notes, previous, max_file_size, trusted_before_ns, strict, progress)
        changed = len(parsed)
        touched = sum(files[relative] is not previous.get(relative) for relative in files)
        unchanged = (not parsed and files.keys() == previous.keys()
                     and touched < RESTAT_REWRITE_NOTES
                     and skipped + more_skipped == old['skipped'])
        try:
            buckets, lengths, slots, stats, texts = refreshed_postings(
                old, previous, files, parsed)
        except (NotesError, ValueError, IndexError):
            stale = True
            warning = f'index file is corrupt: {shown_path}; {REBUILDING}'
    if stale:
        paths, more_skipped, columns, buckets, lengths, words, texts = fresh_index(
            notes, max_file_size, trusted_before_ns, strict, progress, lock_fd)
        files = dict.fromkeys(paths)   # only the paths are needed from here on
        changed, slots, unchanged = len(files), len(lengths) // LENGTH_DIGITS, False
        stats = {'chunks': slots, 'words': words}
    if progress:
        progress.write('\r\033[K')
        progress.flush()
    skipped += more_skipped
    if not unchanged:
        write_index(index_path, {
            'tool': TOOL, 'format_version': FORMAT_VERSION,
            'parser_version': PARSER_VERSION, 'tokenizer_version': TOKENIZER_VERSION,
            'root': root_path,
            'indexed_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
            'notes': columns or note_columns(files), 'skipped': skipped, 'slots': slots,
            'stats': stats, 'lengths': lengths, 'postings': buckets, 'texts': texts})
    return {'changed': changed, 'removed': len(previous.keys() - files.keys()),
            'skipped': skipped, 'warning': warning}


def build_index(root, destination, max_file_size=MAX_FILE_SIZE):
    """The tutorial's API: index root into destination and return (changed, removed)."""
    summary = update_index(root, destination, max_file_size)
    return summary['changed'], summary['removed']


# --- Ranking (BM25) -----------------------------------------------------------

def bm25(frequency, idf, length, average):
    """One term's BM25 weight in a text of length words (average: of all such texts)."""
    norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average)
    return idf * frequency * (BM25_K1 + 1) / (frequency + norm)


def idf_of(matches, total):
    """BM25's inverse document frequency of a term found in matches of total texts."""
    return math.log(1 + (total - matches + 0.5) / (matches + 0.5))


def chunk_rows(notes, chunks):
    """An iterator over the notes row of each chunk number in chunks: -1 before the
    first note; a number left unused after a note maps to that note (no posting
    names one)."""
    rows = map(bisect.bisect_right, itertools.repeat(notes['first']), chunks)
    return map(operator.sub, rows, itertools.repeat(1))


def bm25_scores(index, terms):
    """({chunk number: BM25}, {notes row: BM25}) of the chunks and notes holding any of
    terms.  A note is scored as one text: its body words, and each heading's words
    once."""
    stats, notes, lengths = index['stats'], index['notes'], index['lengths']
    chunk_average = max(stats['words'] / max(stats['chunks'], 1), 1e-9)
    note_average = max(stats['words'] / max(len(notes['first']), 1), 1e-9)
    scores, note_scores = {}, {}
    for term in terms:
        numbers, heading = decode_postings(find_postings(index['postings'], term))
        frequencies = collections.Counter(numbers)
        note_frequencies = collections.Counter(chunk_rows(notes, numbers))
        heading = heading if HEADING_WEIGHT else ()
        heading_rows = chunk_rows(notes, (first for first, _, _ in heading))
        for (first, span, count), row in zip(heading, heading_rows):
            for chunk in range(first, first + span):
                frequencies[chunk] += HEADING_WEIGHT * count
            note_frequencies[row] += HEADING_WEIGHT * count
        idf = idf_of(len(frequencies), stats['chunks'])
        for chunk, frequency in frequencies.items():
            scores[chunk] = scores.get(chunk, 0.0) + bm25(
                frequency, idf, chunk_length(lengths, chunk), chunk_average)
        idf = idf_of(len(note_frequencies), len(notes['first']))
        for row, frequency in note_frequencies.items():
            note_scores[row] = note_scores.get(row, 0.0) + bm25(
                frequency, idf, notes['words'][row], note_average)
    return scores, note_scores


def path_allowed(relative, patterns):
    """True when relative matches an include glob (if any) and no '!' exclude glob."""
    includes = [pattern for pattern in patterns if not pattern.startswith('!')]
    excludes = [pattern[1:] for pattern in patterns if pattern.startswith('!')]
    return ((not includes or any(fnmatch.fnmatchcase(relative, p) for p in includes))
            and not any(fnmatch.fnmatchcase(relative, p) for p in excludes))


def corrupt_index(detail):
    """The error for an index whose parts disagree."""
    return NotesError(f'index file is corrupt ({detail}){REBUILD_ADVICE}')


def least_crowded(candidates, limit):
    """The `limit` smallest (-score, path, number) candidates, taking at most
    MAX_HITS_PER_NOTE from one note unless too few other notes match."""
    if not MAX_HITS_PER_NOTE:
        return heapq.nsmallest(limit, candidates)
    heapq.heapify(candidates)
    best, crowded, per_note = [], [], collections.Counter()
    while candidates and len(best) < limit:
        candidate = heapq.heappop(candidates)
        per_note[candidate[1]] += 1
        (best if per_note[candidate[1]] <= MAX_HITS_PER_NOTE else crowded).append(candidate)
    return sorted(best + crowded[:limit - len(best)])


def rank(index, question, tags=(), paths=(), limit=DEFAULT_TOP_K):
    """The best `limit` chunks for question among notes having all tags and matching paths.

    A chunk scores its own BM25 plus NOTE_WEIGHT times its note's, so that a paragraph
    of a note about the question outranks a stray short match elsewhere.
    """
    notes = index['notes']
    try:
        scores, note_scores = bm25_scores(index, query_terms(question))
    except (ValueError, IndexError):
        raise corrupt_index('bad postings') from None
    wanted_tags = {tag.lower().lstrip('#') for tag in tags}
    names, firsts, counts, note_tags = notes['path'], notes['first'], notes['count'], notes['tags']
    allowed, candidates = {}, []
    for (chunk, score), row in zip(scores.items(), chunk_rows(notes, scores)):
        if row < 0 or chunk >= firsts[row] + counts[row]:
            raise corrupt_index('postings name a missing chunk')
        score += NOTE_WEIGHT * note_scores.get(row, 0.0)
        if score <= 0:
            continue
        if (wanted_tags or paths) and row not in allowed:
            allowed[row] = wanted_tags.issubset(note_tags[row]) and path_allowed(names[row], paths)
        if allowed.get(row, True):
            candidates.append((-score, names[row], chunk - firsts[row]))
    best = least_crowded(candidates, limit)
    texts = stored_texts(index, {relative for _, relative, _ in best})
    hits, parsed = [], {}
    for negative_score, relative, number in best:
        if relative not in parsed:
            try:
                parsed[relative] = chunk_dicts(relative, *scan_text(texts[relative]))
            except NoteSyntaxError:
                raise corrupt_index(f'stored text of {relative} does not parse') from None
        if number >= len(parsed[relative]):
            raise corrupt_index(f'chunk count of {relative} does not match its text')
        hit = dict(parsed[relative][number])
        hit['score'] = round(-negative_score, 4)
        hits.append(hit)
    return hits


def search(index_path, question, tag=None, limit=DEFAULT_TOP_K, paths=()):
    """The tutorial's API: up to `limit` chunk dicts (plus 'score') best matching question.

    tag may be one tag or a list of tags that must all be present.
    """
    tags = [] if tag is None else [tag] if isinstance(tag, str) else list(tag)
    with open_index(os.fspath(index_path)) as index:
        check_versions(index, os.fspath(index_path))
        return rank(index, question, tags, paths, limit)


def tag_counts(index_path):
    """[(tag, number of notes)] sorted by count, then tag."""
    with open_index(os.fspath(index_path)) as index:
        notes_tags = index['notes']['tags']
    counts = collections.Counter(tag for tags in notes_tags for tag in set(tags))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


# --- Output -------------------------------------------------------------------

RESULT_FIELDS = ('id', 'path', 'heading', 'heading_path', 'start', 'end', 'tags', 'score', 'text')


def format_hit(hit):
    """A hit as the tutorial prints it: '[id] heading (Lstart–Lend)' then the text."""
    return f"[{hit['id']}] {hit['heading']} (L{hit['start']}–L{hit['end']})\n{hit['text']}"


def print_hits(question, hits, as_json):
    """Print hits as text (the tutorial's format) or as one JSON object."""
    if as_json:
        results = [{field: hit[field] for field in RESULT_FIELDS} for hit in hits]
        print(json.dumps({'query': question, 'results': results}, ensure_ascii=False))
        return
    for hit in hits:
        print(format_hit(hit))
    if not hits:
        print(NO_HITS)


def print_tags(counts, as_json):
    """Print tags with their note counts, like `uniq -c`, or as JSON."""
    if as_json:
        print(json.dumps({'tags': [{'tag': tag, 'notes': count} for tag, count in counts]},
                         ensure_ascii=False))
        return
    for tag, count in counts:
        print(f'{count:7d} {tag}')


def print_skipped(skipped):
    """One stderr line per skipped file, then the count."""
    for record in skipped:
        print(f"{record['path']}:{record['line']}: {record['reason']}", file=sys.stderr)
    if skipped:
        print(f'skipped {len(skipped)} file(s)', file=sys.stderr)


# --- Command line -------------------------------------------------------------

def positive_int(text, option):
    """int(text) if it is at least 1, else NotesError naming option."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise NotesError(f'{option} must be a whole number of at least 1, not {text!r}')
    return value


def build_parser():
    """The argument parser: index, search and tags commands."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split('\n')[0])
    commands = parser.add_subparsers(dest='command', required=True)
    index = commands.add_parser('index', help='index (or update the index of) a notes folder')
    index.add_argument('folder')
    index.add_argument('--out', default=DEFAULT_INDEX, help='index file (default: index.json)')
    index.add_argument('--max-file-size', default=str(MAX_FILE_SIZE), metavar='BYTES',
                       help=f'skip larger notes (default: {MAX_FILE_SIZE})')
    index.add_argument('--hidden', action='store_true', help='also index dot-files and dot-dirs')
    query = commands.add_parser('search', help='search the index')
    query.add_argument('question')
    query.add_argument('--index', default=DEFAULT_INDEX)
    query.add_argument('--tag', action='append', default=[],
                       help='only notes with TAG (repeatable: all must match)')
    query.add_argument('--path', action='append', default=[], metavar='GLOB',
                       help='only notes whose path matches GLOB; !GLOB excludes (repeatable)')
    query.add_argument('--top-k', default=str(DEFAULT_TOP_K), metavar='N',
                       help=f'number of results (default: {DEFAULT_TOP_K})')
    query.add_argument('--json', action='store_true', help='print one JSON object')
    tags = commands.add_parser('tags', help='list tags with their note counts')
    tags.add_argument('--index', default=DEFAULT_INDEX)
    tags.add_argument('--json', action='store_true')
    return parser


def run_index(args):
    """The `index` command; returns the exit status."""
    max_file_size = positive_int(args.max_file_size, '--max-file-size')
    try:
        summary = update_index(args.folder, args.out, max_file_size, args.hidden, strict=False,
                               progress=sys.stderr if sys.stderr.isatty() else None)
    except OSError as error:
        print(f'{PROG}: error: cannot write the index {args.out}: {error.strerror or error}',
              file=sys.stderr)
        return 1
    if summary['warning']:
        print(f"{PROG}: warning: {summary['warning']}", file=sys.stderr)
    print_skipped(summary['skipped'])
    print(f"갱신 파일: {summary['changed']}, 제거 파일: {summary['removed']}")
    return 0


def run_search(args):
    """The `search` command; returns the exit status."""
    limit = positive_int(args.top_k, '--top-k')
    question = args.question.encode('utf-8', 'surrogateescape').decode('utf-8', 'replace')
    print_hits(question, search(args.index, question, args.tag, limit, args.path), args.json)
    return 0


def run_tags(args):
    """The `tags` command; returns the exit status."""
    print_tags(tag_counts(args.index), args.json)
    return 0


def main(argv=None):
    """Run the command line; return the exit status."""
    args = build_parser().parse_args(argv)
    commands = {'index': run_index, 'search': run_search, 'tags': run_tags}
    try:
        return commands[args.command](args)
    except NotesError as error:
        print(f'{PROG}: error: {error}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:   # the reader of our output went away (`| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # nor is the last flush
        return 0


if __name__ == '__main__':
    exit_status = main()
    with contextlib.suppress(OSError):   # a reader that went away: see main
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(exit_status)   # without the interpreter's teardown, 10-20 ms after a big index

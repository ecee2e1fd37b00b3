"""Basic behaviour of code_search.py: the tutorial API, line provenance, chunk kinds,
walking the root, the index/search command line and incremental updates."""
import ast
import codecs
import hashlib
import json
import os
import random
import re
import sysconfig
import tempfile
import unittest
from pathlib import Path

from tests import support
from tests.support import CODE_TOOL as TOOL, ROOT, write

import code_search  # noqa: E402

DEMO = ROOT / 'demo'
NOT_FOUND = '관련 함수를 찾지 못했습니다.'
TUTORIAL_HIT = ('[code-2] shop.py:10-12 Invoice.total_with_tax\n'
                '    def total_with_tax(self, amount, tax_rate):\n'
                '        """Calculate invoice total including tax."""\n'
                '        return round(amount * (1 + tax_rate), 2)\n')
SUMMARY = re.compile(r'갱신 파일: (\d+), 제거 파일: (\d+), 건너뛴 파일: (\d+) '
                     r'\(파일 (\d+)개, 조각 (\d+)개\)\Z')


def run_cli(*args, cwd=None, timeout=120):
    return support.run_cli(TOOL, *args, cwd=cwd, timeout=timeout)


COOKIE = re.compile(r'^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)')
BLANK_OR_COMMENT = re.compile(r'^[ \t\f]*(?:#.*)?\Z')


def symbols_found(file_name, source, question, top_k):
    """The symbols `search --json` ranks for question in a folder holding one file."""
    with tempfile.TemporaryDirectory() as folder:
        write(Path(folder) / file_name, source)
        result = run_cli(folder, question, '--json', '--top-k', str(top_k))
        return [hit['symbol'] for hit in json.loads(result.stdout)['results']]


def decode_like_python(data):
    """Independent decoding: BOM, then a PEP 263 cookie on line 1 or 2, else UTF-8."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode('utf-8')
    first_lines = re.split(rb'\r\n|\r|\n', data, maxsplit=2)[:2]
    for number, raw in enumerate(first_lines):
        line = raw.decode('latin-1')
        match = COOKIE.match(line)
        if match:
            return data.decode(codecs.lookup(match.group(1)).name)
        if number == 0 and not BLANK_OR_COMMENT.match(line):
            break
    return data.decode('utf-8')


def real_lines(data):
    """The file's lines: the decoded text split at \\r\\n, \\r and \\n only."""
    lines = re.split(r'\r\n|\r|\n', decode_like_python(data))
    if lines and lines[-1] == '':
        lines.pop()
    return lines


def expected_chunks(data):
    """(symbol, kind, start, end) as ast reports them, by a recursive walk of our own."""
    tree = ast.parse(data)
    found = []

    def visit(node, scope, in_class):
        for field in ('body', 'handlers', 'orelse', 'finalbody', 'cases'):
            for child in getattr(node, field, None) or ():
                handle(child, scope, in_class, node is tree)

    def handle(node, scope, in_class, top):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            name = '.'.join(scope + [node.name])
            if isinstance(node, ast.ClassDef):
                if not any(isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef))
                           for c in node.body):
                    found.append((name, 'class', start, node.end_lineno))
                visit(node, scope + [node.name], True)
            else:
                found.append((name, 'method' if in_class else 'function', start,
                              node.end_lineno))
                visit(node, scope + [node.name], False)
        elif top and isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if isinstance(node, ast.AnnAssign) and node.value is None:
                return
            for target in targets:
                if isinstance(target, ast.Name) and re.match(r'_*[A-Z][A-Z0-9_]*\Z',
                                                             target.id):
                    found.append((target.id, 'constant', node.lineno, node.end_lineno))
                    break
        else:
            visit(node, scope, in_class)

    visit(tree, [], False)
    return found


class ProvenanceMixin:
    def assert_provenance(self, data, name='x.py'):
        """Every chunk's text is the file's real lines, numbered as ast numbers them."""
        chunks = code_search.chunk_source(data, name)
        lines = real_lines(data)
        self.assertEqual([(c['symbol'], c['kind'], c['start'], c['end']) for c in chunks],
                         expected_chunks(data))
        for chunk in chunks:
            self.assertTrue(1 <= chunk['start'] <= chunk['end'] <= len(lines), chunk)
            self.assertEqual(chunk['text'], '\n'.join(lines[chunk['start'] - 1:chunk['end']]),
                             chunk['symbol'])
        return chunks


class TutorialApiTests(unittest.TestCase):
    def test_demo_method_location_and_id(self):
        chunks = code_search.build_index(DEMO)
        self.assertEqual([(c['id'], c['symbol']) for c in chunks],
                         [('code-1', 'retry_count'), ('code-2', 'Invoice.total_with_tax'),
                          ('code-3', 'cancel_order')])
        hit = code_search.retrieve('invoice total tax', chunks, 1)[0]
        self.assertEqual((hit['id'], hit['path'], hit['symbol'], hit['start'], hit['end']),
                         ('code-2', 'shop.py', 'Invoice.total_with_tax', 10, 12))
        original = (DEMO / 'shop.py').read_text(encoding='utf-8').splitlines()
        self.assertEqual(hit['text'], '\n'.join(original[9:12]))
        data = (DEMO / 'shop.py').read_bytes()
        self.assertEqual(hit['revision'], hashlib.sha256(data).hexdigest()[:12])

    def test_index_file_decorator_async_nested(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            path = write(root / 'sample.py',
                         '@trace\n@other(1,\n  2)\nasync def outer():\n    def inner():\n'
                         '        return 1\n    return inner()\n')
            chunks = code_search.index_file(path, root)
            self.assertEqual([(c['symbol'], c['kind'], c['start'], c['end']) for c in chunks],
                             [('outer', 'function', 1, 7), ('outer.inner', 'function', 5, 6)])
            self.assertEqual(chunks[0]['text'].split('\n')[0], '@trace')
            self.assertEqual(chunks[0]['path'], 'sample.py')

    def test_decorated_method_starts_at_decorator(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write(root / 'a.py', 'class K:\n    x = 1\n\n    @property\n    @cached\n'
                                 '    def value(self):\n        return 2\n')
            chunks = code_search.build_index(root)
            self.assertEqual([(c['id'], c['symbol'], c['kind'], c['start'], c['end'])
                              for c in chunks], [('code-1', 'K.value', 'method', 4, 7)])

    def test_source_is_not_executed(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            marker = root / 'MARKER'
            write(root / 'evil.py',
                  f'open({str(marker)!r}, "w").write("ran")\nraise RuntimeError("do not run")\n'
                  'def safe():\n    return 1\n')
            write(root / '__init__.py', f'open({str(marker)!r}, "w").write("ran")\n')
            chunks = code_search.build_index(root)
            self.assertEqual([c['symbol'] for c in chunks], ['safe'])
            self.assertFalse(marker.exists())
            result = run_cli(root, 'safe')
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertFalse(marker.exists())

    def test_syntax_error_raises(self):
        with tempfile.TemporaryDirectory() as folder:
            write(Path(folder) / 'good.py', 'def fine():\n    pass\n')
            write(Path(folder) / 'bad.py', 'def broken(')
            with self.assertRaises(SyntaxError):
                code_search.build_index(folder)

    def test_tokens(self):
        self.assertEqual(code_search.tokens('totalWith_tax'), {'total', 'tax'})
        self.assertEqual(code_search.tokens('The Invoice of tax'), {'invoice', 'tax'})

    def test_retrieve_rejects_nonpositive_top_k(self):
        with self.assertRaises(ValueError):
            code_search.retrieve('tax', code_search.build_index(DEMO), 0)

    def test_no_match(self):
        self.assertEqual(code_search.retrieve('spaceship', code_search.build_index(DEMO)), [])

    def test_korean_question(self):
        hits = code_search.retrieve('세금 포함 합계', code_search.build_index(DEMO))
        self.assertEqual(hits[0]['symbol'], 'Invoice.total_with_tax')
        result = run_cli('demo', '세금 포함 합계', '--top-k', '1', cwd=ROOT)
        self.assertEqual((result.returncode, result.stdout), (0, TUTORIAL_HIT))

    def test_every_glossary_word_can_be_reached(self):
        # A question is cut into Hangul runs, so a key with a digit or a space is dead.
        unreachable = [word for word in code_search.KOREAN_GLOSSARY
                       if code_search.WORD.findall(word) != [word]
                       or not code_search.HANGUL.match(word)]
        self.assertEqual(unreachable, [])
        self.assertEqual(code_search.korean_meanings('압축을')[:1], ['compress'])
        self.assertEqual(code_search.korean_meanings('옵저버블을'), ['observable'])  # a loanword
        self.assertEqual(code_search.korean_meanings('싱글톤'), ['singleton'])   # spelled two
        self.assertEqual(code_search.standard_spelling('싱글톤패턴'), '싱글턴패턴')   # ways
        self.assertEqual(code_search.korean_meanings('최댓값을'), ['max', 'maximum'])   # 사이시옷
        for past, present in (('바꿨을', '바꿔'), ('끝났을', '끝나'), ('읽었던', '읽어'),
                              ('기다렸다가', '기다려')):    # the past tense, as the present
            self.assertEqual(code_search.korean_meanings(past),
                             code_search.korean_meanings(present), past)
            self.assertTrue(code_search.korean_meanings(past), past)
        self.assertEqual(code_search.korean_meanings('있는'), ['exists', 'has'])   # 있: no past
        meaningless = [word for word, english in code_search.KOREAN_GLOSSARY.items()
                       if not any(code_search.word_terms(meaning) for meaning in english)]
        self.assertEqual(meaningless, [])      # only stop words: the entry would do nothing

    def test_a_korean_docstring_is_found_whichever_way_it_spells_a_loanword(self):
        with tempfile.TemporaryDirectory() as folder:
            write(Path(folder) / 'home.py', 'def step1():\n    """기타 정리."""\n\n\n'
                                            'def step2():\n    """홈디렉토리 정리."""\n')
            result = run_cli(folder, '홈디렉터리 정리', '--json')
            self.assertEqual(json.loads(result.stdout)['results'][0]['symbol'], 'step2')

    def test_a_particle_after_an_english_word_is_not_searched_for(self):
        # asyncio로 is asyncio and the particle 로, which says nothing of the answer.
        self.assertNotIn('로', code_search.query_terms('asyncio로 접속하기').weights)
        source = ('def send():\n    """HTTP로 요청을 보낸다."""\n\n\n'
                  'def connect():\n    """서버에 접속한다."""\n')
        self.assertEqual(symbols_found('net.py', source, 'asyncio로 접속하기', 5), ['connect'])

    def test_a_korean_superlative_or_count_is_read_as_one_word(self):
        source = ('def most_values(values):\n    """The values seen most often."""\n\n\n'
                  'def max_value(values):\n    """The largest of the values."""\n')
        self.assertEqual(symbols_found('stats.py', source, '가장 큰 값 구하기', 1), ['max_value'])
        self.assertNotIn('most', code_search.query_terms('제일 큰 값')[0])
        self.assertIn('big', code_search.query_terms('큰 값')[0])
        self.assertIn('onc', code_search.query_terms('한 번 실행')[0])    # 한번: once
        self.assertNotIn('onc', code_search.query_terms('한 개 실행')[0])

    def test_korean_question_words_are_not_searched_for(self):
        weights = code_search.query_terms('파일을 어떻게 압축할 수 있나요')[0]
        self.assertEqual(weights, code_search.query_terms('파일을 압축할')[0])
        self.assertNotIn('authorization', code_search.query_terms('인증은 무엇인가요')[0])
        self.assertEqual(code_search.query_terms('어떻게')[0], {'어떻게': 1.0})

    def test_a_word_finds_its_synonyms_whatever_its_ending(self):
        weights = code_search.query_terms('deleting Folders')[0]
        self.assertEqual((weights['directory'], weights['remov']),
                         (code_search.SYNONYM_WEIGHT, code_search.SYNONYM_WEIGHT))
        self.assertNotIn('directory', code_search.query_terms('folder_size')[0])
        groups = [line.split() for line in code_search.ENGLISH_SYNONYMS_TEXT.split('\n')]
        self.assertEqual([word for group in groups for word in group
                          if not code_search.word_terms(word)], [])    # stop words
        self.assertEqual([group for group in groups if len(group) == 1], [])

    def test_a_table_that_grows_is_found_by_its_resize(self):
        source = ('def clear_table(slots):\n    """Empty every slot of the table."""\n\n\n'
                  'def resize(table):\n    """Double the slots of a table."""\n')
        self.assertEqual(symbols_found('table.py', source, 'grow the table', 2),
                         ['resize', 'clear_table'])

    def test_a_phrasal_verb_is_searched_as_what_it_means(self):
        # 'go' of 'go through' is a rare word in code, and said nothing of the answer.
        source = ('def go_back(page):\n    """Go back to the previous page."""\n\n\n'
                  'def walk(root):\n    """Yield every file below root."""\n')
        question = 'go through every file below a folder'
        self.assertEqual(symbols_found('site.py', source, question, 2), ['walk'])
        self.assertEqual(code_search.dropped_words(question, code_search.query_terms(question)),
                         ['every', 'a'])    # --explain: go and through were read
        weights = code_search.query_terms('how is it looked up').weights
        self.assertEqual((weights['lookup'], weights['look']),
                         (code_search.PHRASAL_VERB_WEIGHT, 1.0))   # a word it says: in full
        self.assertEqual(code_search.query_terms('look it up').weights, weights)
        self.assertIn('go', code_search.query_terms('go to the page').weights)
        for noun in ('rotate the logs in a folder', 'the minus sign in front of a number',
                     'when the buffer goes over its size', 'read lines up to a limit'):
            self.assertEqual(code_search.phrasal_verbs(noun.split())[1], [], noun)
        lines = code_search.ENGLISH_PHRASAL_VERBS_TEXT.strip().split('\n')
        self.assertEqual([line for line in lines if len(line.partition(':')[0].split()) != 2
                          or not all(code_search.word_terms(word)
                                     for word in line.partition(':')[2].split())], [])

    def test_a_common_word_is_not_given_the_synonyms_of_a_word_stemmed_alike(self):
        # Groups are keyed by stem, so 'how does it work' looked for getcwd (working),
        # 'set a bit' for config (setting), 'mode' for module (mod), 'state' for
        # statistics (stats).
        groups = [line.split() for line in code_search.ENGLISH_SYNONYMS_TEXT.split('\n')]
        for word in 'work works set sets mode modes state states'.split():
            own = {other for group in groups if word in group or word[:-1] in group
                   for other in group}
            self.assertLessEqual(set(code_search.synonyms_of(word)), own, word)


class LineProvenanceTests(ProvenanceMixin, unittest.TestCase):
    BODY = ('"""Module doc {mark}."""\n'
            'RATE = "{mark}"\n'
            '\n'
            'def first(a):\n'
            '    """Doc {mark}."""\n'
            '    return a  # {mark}\n'
            '\n'
            'class Box:\n'
            '    label = "{mark}"\n'
            '\n'
            '    @staticmethod\n'
            '    def open(x):\n'
            '        s = """multi\n'
            '{mark}\n'
            'line"""\n'
            '        return s\n'
            '\n'
            'class Empty:\n'
            '    """No methods {mark}."""\n'
            '\n'
            'async def last():\n'
            '    return "{mark}"\n')

    def test_utf8_bom(self):
        data = codecs.BOM_UTF8 + self.BODY.format(mark='세금 é').encode('utf-8')
        chunks = self.assert_provenance(data)
        self.assertEqual(len(chunks), 5)

    def test_coding_cookies(self):
        for encoding, mark in (('latin-1', 'café ñ'), ('cp949', '세금 합계'),
                               ('euc-kr', '송장 금액')):
            with self.subTest(encoding=encoding):
                text = f'# -*- coding: {encoding} -*-\n' + self.BODY.format(mark=mark)
                data = text.encode(encoding)
                self.assertNotEqual(data, text.encode('utf-8'))
                chunks = self.assert_provenance(data)
                self.assertEqual(len(chunks), 5)
                self.assertIn(mark, chunks[0]['text'])

    def test_cookie_on_second_line_after_shebang(self):
        text = '#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\n' + \
            self.BODY.format(mark='déjà')
        self.assertEqual(len(self.assert_provenance(text.encode('latin-1'))), 5)

    def test_line_endings(self):
        body = self.BODY.format(mark='x')
        for name, newline in (('CRLF', '\r\n'), ('CR', '\r'), ('LF', '\n')):
            with self.subTest(newline=name):
                chunks = self.assert_provenance(body.replace('\n', newline).encode('utf-8'))
                self.assertEqual([c['start'] for c in chunks], [2, 4, 11, 18, 21])

    def test_mixed_line_endings(self):
        lines = self.BODY.format(mark='m').split('\n')
        endings = ['\r\n', '\r', '\n']
        text = ''.join(line + endings[i % 3] for i, line in enumerate(lines[:-1]))
        self.assertEqual(len(self.assert_provenance(text.encode('utf-8'))), 5)

    def test_cookie_with_cr_only_line_endings(self):
        # CPython itself parses this file (cookie line ended by a lone \r).
        text = '# -*- coding: latin-1 -*-\n' + self.BODY.format(mark='café')
        data = text.replace('\n', '\r').encode('latin-1')
        ast.parse(data)
        self.assertEqual(len(self.assert_provenance(data)), 5)

    def test_cookie_beyond_line_two_in_cr_only_file_is_ignored(self):
        # Python reads a cookie on line 1 or 2 only; line 3's is a plain comment.
        data = b"# hello\rX = '\xc3\xa9'\r# coding: latin-1\rdef f():\r    return X\r"
        self.assertEqual(ast.parse(data).body[0].value.value, '\u00e9')
        chunks = self.assert_provenance(data)
        self.assertEqual(chunks[0]['text'], "X = '\u00e9'")

    def test_other_unicode_line_breaks_are_not_lines(self):
        odd = '\x0c \x0b \x1c \x1d \x1e \x85 \u2028 \u2029'
        text = (f'# comment {odd} end\n'
                f'MARK = "{odd}"\n'
                '\x0c\n'
                '\x0cdef after_breaks():\n'
                f'    s = """{odd}\n'
                f'    {odd}"""  # {odd}\n'
                '    return s\n'
                '\n'
                'class K:\n'
                f'    def m(self):  # {odd}\n'
                f'        return "\\x1e{odd}"\n'
                f'def tail():\n    return "{odd}"\n')
        data = text.encode('utf-8')
        chunks = self.assert_provenance(data)
        self.assertEqual([(c['symbol'], c['start'], c['end']) for c in chunks],
                         [('MARK', 2, 2), ('after_breaks', 4, 7), ('K.m', 10, 11),
                          ('tail', 12, 13)])
        # Also through the index + search path, read back from disk.
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write(root / 'odd.py', data)
            out = root / 'idx.json'
            self.assertEqual(run_cli('index', root, '--out', out).returncode, 0)
            result = run_cli('search', 'after_breaks', '--index', out, '--json', '--top-k', '1')
            hit = json.loads(result.stdout)['results'][0]
            self.assertEqual((hit['symbol'], hit['start'], hit['end']), ('after_breaks', 4, 7))
            self.assertEqual(hit['text'], '\n'.join(real_lines(data)[3:7]))

    def test_stdlib_sample(self):
        stdlib = Path(sysconfig.get_paths()['stdlib'])
        files = sorted(p for p in stdlib.rglob('*.py')
                       if 'site-packages' not in p.parts and p.is_file() and not p.is_symlink())
        self.assertGreater(len(files), 200)
        sample = [files[i * len(files) // 40] for i in range(40)]
        checked = 0
        for path in sample:
            data = path.read_bytes()
            with self.subTest(path=str(path.relative_to(stdlib))):
                try:
                    ast.parse(data)
                except (SyntaxError, ValueError):
                    with self.assertRaises(code_search.SkipFile):
                        code_search.chunk_source(data, path.name)
                    continue
                self.assert_provenance(data, path.name)
                checked += 1
        self.assertGreater(checked, 30)


class ChunkKindTests(unittest.TestCase):
    def chunks_of(self, files):
        """build_index over a temporary folder holding files {name: text}."""
        with tempfile.TemporaryDirectory() as folder:
            for name, text in files.items():
                write(Path(folder) / name, text)
            return code_search.build_index(folder)

    def test_kinds_and_ids(self):
        chunks = self.chunks_of({
            'a.py': 'MAX_SIZE = 10\n'
                    'lower_case = 1\n'
                    '_PRIVATE_LIMIT: int = 5\n'
                    'Annotated: int\n'
                    'A, B = 1, 2\n'
                    'if True:\n    NOT_TOP = 3\n'
                    'class Plain:\n    """Only data."""\n    size = 1\n'
                    'class WithMethod:\n    def run(self):\n        INNER = 2\n        return INNER\n'
                    '    class Nested:\n        pass\n'
                    'def helper():\n    pass\n',
            'b.py': 'def other():\n    def inner():\n        pass\n'})
        self.assertEqual([(c['id'], c['path'], c['symbol'], c['kind'], c['start'], c['end'])
                          for c in chunks],
                         [('code-1', 'a.py', 'MAX_SIZE', 'constant', 1, 1),
                          ('code-2', 'a.py', '_PRIVATE_LIMIT', 'constant', 3, 3),
                          ('code-3', 'a.py', 'Plain', 'class', 8, 10),
                          ('code-4', 'a.py', 'WithMethod.run', 'method', 12, 14),
                          ('code-5', 'a.py', 'WithMethod.Nested', 'class', 15, 16),
                          ('code-6', 'a.py', 'helper', 'function', 17, 18),
                          ('code-7', 'b.py', 'other', 'function', 1, 3),
                          ('code-8', 'b.py', 'other.inner', 'function', 2, 3)])

    def test_class_only_information_is_findable(self):
        chunks = self.chunks_of({'settings.py': 'RETRY_BACKOFF_SECONDS = 30\n'
                                                'class Palette:\n    """Spaceship colours."""\n'})
        hits = code_search.retrieve('spaceship', chunks, 1)
        self.assertEqual(hits[0]['symbol'], 'Palette')
        hits = code_search.retrieve('retry backoff', chunks, 1)
        self.assertEqual(hits[0]['symbol'], 'RETRY_BACKOFF_SECONDS')

    def test_exported_follows_literal_all(self):
        chunks = self.chunks_of({
            'listed.py': "__all__ = ['Reader', 'LIMIT']\n"
                         "__all__ += ('load',)\n"
                         "__all__.extend(['dump'] + ['Spare'])\n"
                         'LIMIT = 1\nOTHER = 2\n'
                         'class Reader:\n    def read(self):\n        def step():\n'
                         '            pass\n'
                         'def load():\n    def inner():\n        pass\n'
                         'def dump():\n    pass\n'
                         'def helper():\n    pass\n',
            'computed.py': "__all__ = ['load'] + [n for n in dir()]\n"
                           'def load():\n    pass\n',
            'none.py': 'def load():\n    pass\n',
            'annotated.py': "__all__: list\n__all__ = ['load']\ndef load():\n    pass\n",
            'one_string.py': "__all__ = 'load'\ndef load():\n    pass\n"})
        self.assertEqual({(c['path'], c['symbol']): c['exported'] for c in chunks},
                         {('listed.py', 'LIMIT'): True, ('listed.py', 'OTHER'): False,
                          ('listed.py', 'Reader.read'): True,
                          ('listed.py', 'Reader.read.step'): False,
                          ('listed.py', 'load'): True, ('listed.py', 'load.inner'): False,
                          ('listed.py', 'dump'): True, ('listed.py', 'helper'): False,
                          ('computed.py', 'load'): False, ('none.py', 'load'): False,
                          ('annotated.py', 'load'): True, ('one_string.py', 'load'): False})


def make_walk_tree(root):
    write(root / 'a.py', 'def alpha_walk():\n    pass\n')
    write(root / 'sub' / 'b.py', 'def beta_walk():\n    pass\n')
    write(root / 'pkg.py' / 'inner.py', 'def inner_walk():\n    pass\n')
    write(root / 'notes.txt', 'def not_python():\n')
    for skip in ('.git', '.hg', '.svn', '__pycache__', 'node_modules', '.tox', '.mypy_cache',
                 '.pytest_cache'):
        write(root / skip / 'x.py', 'def vcs_walk():\n    pass\n')
    write(root / 'env1' / 'pyvenv.cfg', 'home = /usr/bin\n')
    write(root / 'env1' / 'lib.py', 'def venv_walk():\n    pass\n')
    write(root / 'venv' / '__init__.py', 'def stdlib_venv_walk():\n    pass\n')
    write(root / '.hidden.py', 'def hidden_walk():\n    pass\n')
    write(root / '.hiddendir' / 'h.py', 'def hidden_dir_walk():\n    pass\n')
    os.symlink('a.py', root / 'link_file.py')
    os.symlink('sub', root / 'linkdir')


WALK_INDEXED = ['a.py', 'notes.txt', 'pkg.py/inner.py', 'sub/b.py', 'venv/__init__.py']


class WalkingTests(unittest.TestCase):
    def files(self, root, **options):
        return [item.relative for item in code_search.walk_tree(
            root, code_search.IndexOptions(**options)) if not item.reason]

    def test_walk_tree_rules(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            make_walk_tree(root)
            self.assertEqual(self.files(root), WALK_INDEXED)
            self.assertEqual(sorted(self.files(root, hidden=True)),
                             sorted(['.hidden.py', '.hiddendir/h.py'] + WALK_INDEXED))
            skips = {item.relative: item for item in code_search.walk_tree(
                root, code_search.IndexOptions()) if item.reason}
            self.assertFalse(skips['link_file.py'].quiet)
            self.assertFalse(skips['linkdir'].quiet)

    def test_cli_index_reports_links_and_indexes_the_rest(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / 'root'
            make_walk_tree(root)
            out = Path(folder) / 'idx.json'
            result = run_cli('index', root, '--out', out)
            self.assertEqual(result.returncode, 0, result.stderr)
            lines = result.stderr.splitlines()
            self.assertEqual(len(lines), 3, lines)
            self.assertRegex(lines[0], r'^link_file\.py:0: (skipped: )?symbolic link '
                                       r'\(not followed\)$')
            self.assertRegex(lines[1], r'^linkdir/?:0: (skipped: )?symbolic link '
                                       r'\(not followed\)$')
            self.assertEqual(lines[2], 'skipped 2 file(s)')
            self.assertRegex(result.stdout.strip(), SUMMARY)
            self.assertEqual(SUMMARY.match(result.stdout.strip()).groups()[:4],
                             ('5', '0', '2', '5'))   # notes.txt too, in windows
            index = json.loads(out.read_text(encoding='utf-8'))
            self.assertEqual(sorted(index['files']), sorted(WALK_INDEXED))
            for name, found in (('alpha_walk', 'a.py'), ('inner_walk', 'pkg.py/inner.py'),
                                ('stdlib_venv_walk', 'venv/__init__.py'),
                                ('vcs_walk', None), ('venv_walk', None), ('hidden_walk', None)):
                search = run_cli('search', name, '--index', out, '--json', '--top-k', '1')
                results = json.loads(search.stdout)['results']
                if found is None:
                    self.assertEqual([r['symbol'] for r in results if r['symbol'] == name], [])
                else:
                    self.assertEqual((results[0]['path'], results[0]['symbol']), (found, name))

    def test_hidden_flag(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / 'root'
            make_walk_tree(root)
            out = Path(folder) / 'idx.json'
            self.assertEqual(run_cli('index', root, '--out', out, '--hidden').returncode, 0)
            index = json.loads(out.read_text(encoding='utf-8'))
            self.assertEqual(sorted(index['files']),
                             sorted(WALK_INDEXED + ['.hidden.py', '.hiddendir/h.py']))

    def test_dry_run_lists_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / 'root'
            make_walk_tree(root)
            out = Path(folder) / 'idx.json'
            before = sorted(os.listdir(folder))
            result = run_cli('index', root, '--out', out, '--dry-run')
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(sorted(os.listdir(folder)), before)
            lines = result.stdout.splitlines()
            self.assertEqual([line[len('index '):].split('  (')[0] for line in lines
                              if line.startswith('index ')], WALK_INDEXED)
            self.assertIn('index notes.txt  (text; 1 chunk)', lines)
            self.assertIn('index a.py  (python; 1 chunk)', lines)
            skips = dict(re.match(r'(?:skip |leave) (.+?): (.+)$', line).groups()
                         for line in lines if line.startswith(('skip ', 'leave ')))
            for name in ('link_file.py', '.hidden.py', '.git/', '__pycache__/', 'env1/',
                         '.hiddendir/', 'node_modules/'):
                self.assertIn(name, skips)
            self.assertIn('skip  link_file.py: symbolic link (not followed)', lines)  # a line
            self.assertIn('leave __pycache__/: tool or version-control folder', lines)  # none
            self.assertEqual(lines[-1], '5 file(s) to index (0 in line windows only), 2 skipped, '
                                        '11 left out')
            self.assertRegex(skips['env1/'], r'pyvenv\.cfg')
            self.assertNotIn('venv/', skips)

    def test_gitignore_and_ignore_files(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write(root / '.gitignore', '# comment\n/anchored.py\nbuild/\n*.gen.py\n'
                                       '!keep.gen.py\ndocs/**/deep.py\ncache.py/\n')
            write(root / '.ignore', 'by_dotignore.py\n')
            files = {
                'anchored.py': False, 'sub/anchored.py': True,
                'build/b.py': False, 'sub/build/b.py': False,
                'x.gen.py': False, 'keep.gen.py': True, 'sub/y.gen.py': False,
                'docs/a/b/deep.py': False, 'docs/deep.py': False, 'docs/other.py': True,
                'by_dotignore.py': False, 'sub/by_dotignore.py': False,
                'local.py': True, 'sub/local.py': False, 'sub/deeper/local.py': False,
                'sub/only_here.py': False, 'sub/deeper/only_here.py': True,
                'cache.py/x.py': False, 'sub/cache.py': True,
            }
            write(root / 'sub' / '.gitignore', 'local.py\n/only_here.py\n')
            for name in files:
                write(root / name, 'def f():\n    pass\n')
            self.assertEqual(sorted(self.files(root)),
                             sorted(n for n, kept in files.items() if kept))
            walked = self.files(root, no_ignore=True)
            self.assertEqual(sorted(walked), sorted(files))

    def test_gitignore_corners_as_git_reads_them(self):
        # ** next to anything but '/' is a plain *; a class never matches '/'; only
        # trailing spaces are trimmed; a trailing backslash makes a pattern invalid
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write(root / '.gitignore', 'a**b.py\n[x/]y.py\ntab.py\t\nbad\\\nsp\\  \n'
                                       'q************x\n')
            files = {'a/b.py': True, 'a/x/b.py': True, 'aQb.py': False, 'x/y.py': True,
                     'xy.py': False, 'tab.py': True, 'tab.py\t': False, 'bad\\': True,
                     'sp ': False, 'sp': True, 'q' * 40 + 'y': True}     # and in no time
            for name in files:
                write(root / name, 'x = 1\n')
            self.assertEqual(sorted(self.files(root)),
                             sorted(n for n, kept in files.items() if kept))

    def test_the_roots_git_info_exclude_counts_below_its_gitignore_files(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write(root / '.git' / 'info' / 'exclude', 'secret_*.py\n')
            write(root / '.gitignore', '!secret_keep.py\n')
            for name in ('secret_a.py', 'secret_keep.py', 'b.py'):
                write(root / name, 'def f():\n    pass\n')
            self.assertEqual(sorted(self.files(root)), ['b.py', 'secret_keep.py'])
            self.assertEqual(len(self.files(root, no_ignore=True)), 3)


class CommandLineTests(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        self.base = Path(self.folder.name)
        self.root = self.base / 'root'
        self.out = self.base / 'idx.json'
        write(self.root / 'billing.py',
              'class Invoice:\n'
              '    """An invoice."""\n'
              '    def total_with_tax(self, amount, rate):\n'
              '        """Invoice total including tax."""\n'
              '        return amount * (1 + rate)\n'
              '\n'
              'def refund_payment(order):\n'
              '    """Refund a payment for an order."""\n'
              '    return order\n')
        write(self.root / 'a' / 'widgets.py', 'def make_widget():\n    """Widget maker."""\n')
        write(self.root / 'b' / 'widgets.py', 'def make_widget():\n    """Widget maker."""\n')
        write(self.root / 'c' / 'widgets.py', 'def make_widget():\n    """Widget maker."""\n')

    def index(self, *extra):
        result = run_cli('index', self.root, '--out', self.out, *extra)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result

    def search(self, question, *extra):
        result = run_cli('search', question, '--index', self.out, '--json', *extra)
        self.assertEqual(result.returncode, 0, result.stderr)
        document = json.loads(result.stdout)
        self.assertEqual(document['query'], question)
        return document['results']

    def test_index_summary_and_incremental_runs(self):
        result = self.index()
        self.assertEqual(result.stdout, '갱신 파일: 4, 제거 파일: 0, 건너뛴 파일: 0 '
                                        '(파일 4개, 조각 6개)\n')   # class Invoice too
        self.assertEqual(result.stderr, '')
        self.assertEqual(self.index().stdout, '갱신 파일: 0, 제거 파일: 0, 건너뛴 파일: 0 '
                                              '(파일 4개, 조각 6개)\n')
        write(self.root / 'billing.py', 'def refund_payment(order):\n'
                                        '    """Refund a zeppelin order."""\n')
        self.assertEqual(self.index().stdout, '갱신 파일: 1, 제거 파일: 0, 건너뛴 파일: 0 '
                                              '(파일 4개, 조각 4개)\n')
        hits = self.search('zeppelin refund')
        self.assertEqual((hits[0]['path'], hits[0]['symbol'], hits[0]['start'], hits[0]['end']),
                         ('billing.py', 'refund_payment', 1, 2))
        self.assertEqual(self.search('total_with_tax'), [])
        os.unlink(self.root / 'a' / 'widgets.py')
        self.assertEqual(self.index().stdout, '갱신 파일: 0, 제거 파일: 1, 건너뛴 파일: 0 '
                                              '(파일 3개, 조각 3개)\n')
        self.assertEqual(sorted(h['path'] for h in self.search('widget', '--top-k', '10')),
                         ['b/widgets.py', 'c/widgets.py'])

    def test_search_json_shape(self):
        self.index()
        result = run_cli('search', 'invoice total tax', '--index', self.out, '--json',
                         '--top-k', '1')
        self.assertEqual(result.returncode, 0, result.stderr)
        document = json.loads(result.stdout)
        self.assertEqual(list(document), ['query', 'results'])
        self.assertEqual(len(document['results']), 1)
        hit = document['results'][0]
        self.assertEqual(list(hit), ['id', 'repo', 'path', 'symbol', 'kind', 'language', 'start',
                                     'end', 'revision', 'receiver', 'trait', 'score', 'stale',
                                     'gone', 'text'])
        data = (self.root / 'billing.py').read_bytes()
        self.assertEqual({k: hit[k] for k in hit if k != 'score'},
                         {'id': 'code-3', 'repo': self.root.name, 'path': 'billing.py',
                          'symbol': 'Invoice.total_with_tax', 'kind': 'method',
                          'language': 'python', 'start': 3, 'end': 5,
                          'revision': hashlib.sha256(data).hexdigest()[:12], 'receiver': '',
                          'trait': '', 'stale': False, 'gone': False,
                          'text': '\n'.join(data.decode().splitlines()[2:5])})
        self.assertIsInstance(hit['score'], float)
        self.assertGreater(hit['score'], 0)

    def test_top_k(self):
        self.index()
        self.assertEqual(len(self.search('widget', '--top-k', '1')), 1)
        self.assertEqual(len(self.search('widget', '--top-k', '2')), 2)
        self.assertEqual(len(self.search('widget', '--top-k', '50')), 3)
        self.assertEqual(len(self.search('widget')), 2)      # the tutorial's default

    def test_path_globs(self):
        self.index()

        def paths(*globs):
            extra = [x for g in globs for x in ('--path', g)]
            return sorted(h['path'] for h in self.search('widget', '--top-k', '10', *extra))
        self.assertEqual(paths('a/*'), ['a/widgets.py'])
        self.assertEqual(paths('!a/*'), ['b/widgets.py', 'c/widgets.py'])
        self.assertEqual(paths('a/*', 'c/*'), ['a/widgets.py', 'c/widgets.py'])
        self.assertEqual(paths('widgets.py', '!b/**'), ['a/widgets.py', 'c/widgets.py'])
        self.assertEqual(paths('nothing/*'), [])

    def test_stale_flag(self):
        self.index()
        path = self.root / 'billing.py'
        path.write_text('\n\n' + path.read_text(encoding='utf-8'), encoding='utf-8')
        hits = self.search('refund payment', '--top-k', '1')
        self.assertEqual((hits[0]['symbol'], hits[0]['stale']), ('refund_payment', True))
        other = self.search('widget', '--top-k', '1')
        self.assertFalse(other[0]['stale'])
        human = run_cli('search', 'refund payment', '--index', self.out, '--top-k', '1')
        self.assertEqual(human.returncode, 0)
        header = human.stdout.splitlines()[0]
        self.assertTrue(header.startswith('[code-4] billing.py:7-9 refund_payment'), header)
        self.assertIn('stale', header)

    def test_human_output_format(self):
        self.index()
        result = run_cli('search', 'refund payment', '--index', self.out, '--top-k', '1')
        self.assertEqual(result.stdout,
                         '[code-4] billing.py:7-9 refund_payment\n'
                         'def refund_payment(order):\n'
                         '    """Refund a payment for an order."""\n'
                         '    return order\n')
        result = run_cli('search', 'spaceship', '--index', self.out)
        self.assertEqual((result.returncode, result.stdout), (0, NOT_FOUND + '\n'))

    def test_subcommand_first_and_dot_slash_folder(self):
        self.index()
        write(self.base / 'index' / 'folder_named_index.py',
              'def lonely_function():\n    """Found through ./index."""\n')
        write(self.base / 'search' / 'x.py', 'def make_widget():\n    pass\n')
        result = run_cli('./index', 'lonely function', '--top-k', '1', cwd=self.base)
        self.assertEqual((result.returncode, result.stdout),
                         (0, '[code-1] folder_named_index.py:1-2 lonely_function\n'
                             'def lonely_function():\n    """Found through ./index."""\n'))
        result = run_cli('search', 'widget', '--index', self.out, '--json', '--top-k', '10',
                         cwd=self.base)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(h['path'] for h in json.loads(result.stdout)['results']),
                         ['a/widgets.py', 'b/widgets.py', 'c/widgets.py'])
        result = run_cli('index', cwd=self.base)      # the subcommand, missing its ROOT
        self.assertEqual(result.returncode, 2)
        self.assertFalse((self.base / 'index.json').exists())


class TutorialCommandTests(unittest.TestCase):
    def test_one_shot_exact(self):
        result = run_cli('demo', 'invoice total tax', '--top-k', '1', cwd=ROOT)
        self.assertEqual((result.returncode, result.stdout, result.stderr),
                         (0, TUTORIAL_HIT, ''))

    def test_one_shot_numbers_chunks_as_an_index_does(self):
        """Ids number the chunks in path order, so a subfolder's file (a/b/x.py) comes
        before a later file of its parent (a/c.py) in a one-shot run as in an index."""
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / 'root'
            for name in ('a/c.py', 'a/b/x.py', 'a/a.py'):
                write(root / name, f'def widget_{name[-4]}():\n    return 1\n')
            one_shot = run_cli(root, 'widget', '--top-k', '5', '--json')
            run_cli('index', root, '--out', Path(folder) / 'i.json')
            searched = run_cli('search', 'widget', '--index', Path(folder) / 'i.json',
                               '--top-k', '5', '--json')
            hits = [sorted((hit['id'], hit['path']) for hit in json.loads(result.stdout)
                           ['results']) for result in (one_shot, searched)]
            self.assertEqual(hits[0], [('code-1', 'a/a.py'), ('code-2', 'a/b/x.py'),
                                       ('code-3', 'a/c.py')])
            self.assertEqual(hits[0], hits[1])

    def test_a_misspelt_command_is_named_in_the_one_shot_error(self):
        with tempfile.TemporaryDirectory() as folder:
            result = run_cli('serach', 'tax', cwd=folder)
            self.assertEqual((result.returncode, result.stderr),
                             (2, 'code_search.py: error: root folder does not exist: serach '
                                 '(the command search?)\n'))
            self.assertTrue(run_cli('zzq', 'tax', cwd=folder).stderr.endswith(
                'root folder does not exist: zzq\n'))

    def test_spaceship(self):
        result = run_cli('demo', 'spaceship', cwd=ROOT)
        self.assertEqual((result.returncode, result.stdout, result.stderr),
                         (0, NOT_FOUND + '\n', ''))


class IncrementalTests(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        self.root = Path(self.folder.name) / 'root'
        self.out = Path(self.folder.name) / 'idx.json'

    def summary(self, *extra, out=None):
        result = run_cli('index', self.root, '--out', out or self.out, *extra)
        self.assertEqual(result.returncode, 0, result.stderr)
        match = SUMMARY.match(result.stdout.strip())
        self.assertIsNotNone(match, result.stdout)
        return tuple(int(g) for g in match.groups())

    def test_mtime_only_change_is_not_an_update(self):
        for i in range(3):
            write(self.root / f'm{i}.py', f'def f{i}():\n    return {i}\n')
        self.assertEqual(self.summary()[:2], (3, 0))
        path = self.root / 'm1.py'
        info = path.stat()
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))
        self.assertEqual(self.summary()[:2], (0, 0))
        path.write_bytes(path.read_bytes())        # rewritten, same bytes
        self.assertEqual(self.summary()[:2], (0, 0))
        path.write_text('def f1():\n    return 11\n', encoding='utf-8')
        self.assertEqual(self.summary()[:2], (1, 0))

    def test_incremental_index_ranks_like_a_fresh_one(self):
        rng = random.Random(11)
        words = 'cache index search token chunk parse render retry payment invoice'.split()
        options = code_search.IndexOptions(jobs=1)
        for step in range(10):
            for number in rng.sample(range(24), 6):      # fids reach two digits
                path = self.root / f'd{number % 3}' / f'm{number}.py'
                if rng.random() < 0.2 and path.exists():
                    path.unlink()
                    continue
                functions = [f'def {rng.choice(words)}_{rng.choice(words)}{n}(value):\n'
                             f'    """{" ".join(rng.choices(words, k=rng.randint(1, 6)))}."""\n'
                             f'    return value\n' for n in range(rng.randint(1, 4))]
                write(path, '\n'.join(functions))
            code_search.index_folder(self.root, self.out, options)
            fresh = Path(self.folder.name) / f'fresh{step}.json'
            code_search.index_folder(self.root, fresh, options)
            kept, new = (code_search.open_index_file(path) for path in (self.out, fresh))
            self.assertEqual(*(json.loads(path.read_text(encoding='utf-8'))['compound_words']
                               for path in (self.out, fresh)), step)
            self.assertEqual(kept['compounds'], new['compounds'], step)
            for question in ('cache', 'parse the payment', 'retry token render'):
                self.assertEqual(code_search.search_index(kept, question, top_k=50),
                                 code_search.search_index(new, question, top_k=50),
                                 (step, question))
        document = json.loads(self.out.read_text(encoding='utf-8'))
        fids = {record['fid'] for record in document['files'].values()}
        postings = code_search.unpack_postings(document['postings'])
        named = {int(segment.split(' ')[0]) for posting in postings.values()
                 for segment in posting.split(';')}
        self.assertEqual(named, fids)   # no posting names a file that is gone
        self.assertGreater(max(fids), 30)

    def test_names_holding_the_postings_marks_are_no_terms(self):
        # A window of a Hive-style folder (header=1108/notes.txt:L1-1) or a JavaScript key
        # ("x|y") was a term holding '=' or '|', the marks a posting string is cut at: an
        # update cut it short, kept the file's old entries and, when the cut named a term of
        # the same string (1108 puts header there), overwrote that term's posting.
        write(self.root / 'header=1108' / 'notes.txt', 'hello\n')
        write(self.root / 'keys.js', 'const o = {};\no["x|y"] = function () { return 1; };\n')
        write(self.root / 'a.py', 'def parse_header(h):\n    \"\"\"Parse a header.\"\"\"\n'
                                  '    return h\n')
        self.summary()
        write(self.root / 'header=1108' / 'notes.txt', 'bye\n')
        self.summary()
        fresh = Path(self.folder.name) / 'fresh.json'
        self.summary(out=fresh)
        kept, new = (code_search.open_index_file(path) for path in (self.out, fresh))
        found = code_search.search_index(kept, 'parse header', top_k=5)
        self.assertEqual(found[0]['symbol'], 'parse_header')
        self.assertEqual(found, code_search.search_index(new, 'parse header', top_k=5))
        def by_path(index):         # {term: the segments, their file ids as paths}
            paths = {str(record['fid']): path for path, record in index['files'].items()}
            return {term: sorted(paths[fid] + rest for fid, _, rest in
                                 (segment.partition(' ') for segment in posting.split(';')))
                    for term, posting in code_search.unpack_postings(index['postings']).items()}
        terms = by_path(kept)
        self.assertEqual([term for term in terms if '=' in term or '|' in term], [])
        self.assertEqual(terms, by_path(new))

    def test_the_synonym_limit_counts_entries_not_the_digits_of_file_ids(self):
        from unittest import mock
        for number in range(12):
            write(self.root / 'a' / f'm{number}.py',
                  f'def remove_item{number}(x):\n    \"\"\"Remove the item.\"\"\"\n')
        write(self.root / 'files.py', 'def delete_file():\n    \"\"\"Delete a file.\"\"\"\n\n\n'
                                      'def remove_file():\n    \"\"\"Remove a file.\"\"\"\n')
        self.summary()
        (self.root / 'a').rename(self.root / 'b')     # new file ids, of more digits
        self.summary()
        fresh = Path(self.folder.name) / 'fresh.json'
        self.summary(out=fresh)
        kept, new = (code_search.open_index_file(path) for path in (self.out, fresh))
        posting = code_search.find_posting(new['postings'], 'remov')
        entries = posting.count(';') + posting.count(',')
        scores = []
        for limit in (entries, entries - 1):        # remove counts, then it is skipped
            with mock.patch.object(code_search, 'SYNONYM_POSTING_LIMIT', limit):
                hits = [code_search.search_index(index, 'delete a file', top_k=20)
                        for index in (kept, new)]
            self.assertEqual(*hits)
            scores.append(next(hit['score'] for hit in hits[0]
                               if hit['symbol'] == 'remove_file'))
        self.assertGreater(scores[0], scores[1])

    def test_versions_recorded_and_parser_version_change_reparses(self):
        for i in range(5):
            write(self.root / f'm{i}.py', f'def f{i}():\n    return {i}\n')
        self.summary()
        index = json.loads(self.out.read_text(encoding='utf-8'))
        self.assertEqual((index['tool'], index['format_version'], index['parser_version'],
                          index['tokenizer_version']),
                         ('code_search', code_search.FORMAT_VERSION, code_search.PARSER_VERSION,
                          code_search.TOKENIZER_VERSION))
        self.assertRegex(index['indexed_at'], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$')
        self.assertEqual(self.summary()[0], 0)
        for key in ('parser_version', 'tokenizer_version'):
            with self.subTest(key=key):
                index = json.loads(self.out.read_text(encoding='utf-8'))
                index[key] = index[key] + 1000
                self.out.write_text(json.dumps(index), encoding='utf-8')
                self.assertEqual(self.summary()[:4], (5, 0, 0, 5))
                index = json.loads(self.out.read_text(encoding='utf-8'))
                self.assertEqual(index[key], getattr(code_search, key.upper()))
                self.assertEqual(self.summary()[0], 0)

    def test_parallel_and_single_process_indexes_are_identical(self):
        for i in range(72):
            write(self.root / f'd{i % 4}' / f'mod_{i:03d}.py',
                  f'"""Module {i}."""\nLIMIT_{i} = {i}\n\n'
                  f'class Thing{i}:\n    def method_{i}(self, value):\n'
                  f'        """Do thing {i}."""\n        return value + {i}\n\n'
                  f'def helper_{i}(x):\n    return x * {i}\n')
        write(self.root / 'broken.py', b'x = "caf\xe9"\n')      # not UTF-8: skipped
        one = Path(self.folder.name) / 'one.json'
        two = Path(self.folder.name) / 'two.json'
        self.assertEqual(self.summary('--jobs', '1', out=one), (72, 0, 1, 72, 360))
        self.assertEqual(self.summary('--jobs', '2', out=two), (72, 0, 1, 72, 360))
        first = json.loads(one.read_text(encoding='utf-8'))
        second = json.loads(two.read_text(encoding='utf-8'))
        self.assertEqual(len(first['files']), 72)
        for index in (first, second):            # when each run happened
            index.pop('indexed_at')
            index.pop('scan_started_ns')
        self.assertEqual(json.dumps(first, sort_keys=True), json.dumps(second, sort_keys=True))
        self.assertEqual(list(first['files']), list(second['files']))


PARSE_PY = ('def parse_qs(qs, keep_blank_values=False):\n'
            '    """Parse a query string into a dict."""\n'
            '    parsed = {}\n'
            '    for name, value in parse_qsl(qs, keep_blank_values):\n'
            '        parsed.setdefault(name, []).append(value)\n'
            '    return parsed\n\n'
            'def parse_qsl(qs, keep_blank_values=False):\n'
            '    """Parse a query string into a list of pairs."""\n'
            '    return [tuple(p.split("=", 1)) for p in qs.split("&") if p]\n\n'
            'def urlparse(url):\n    return url\n')
ZIPFILE_PY = ('class ZipInfo:\n    """Information about a member."""\n'
              '    def extract_version(self):\n        return 20\n\n'
              'class ZipFile:\n    """Read and write zip files."""\n'
              '    def extract(self, member, path=None):\n'
              '        """Extract a member from the archive."""\n'
              '        return self._extract_member(member, path)\n\n'
              '    def extractall(self, path=None):\n'
              '        """Extract all members: calls extract for each."""\n'
              '        for m in self.namelist():\n            self.extract(m, path)\n')
TARFILE_PY = ('class TarFile:\n'
              '    def extract(self, member, path=""):\n'
              '        """Extract a member from the tar archive, like ZipFile.extract."""\n'
              '        return ZipFile.extract(member, path)\n')

class IdentifierQueryTests(unittest.TestCase):
    def check_first(self, files, queries):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / 'root'
            for name, text in files.items():
                write(root / name, text)
            chunks = code_search.build_index(root)
            for question, expected in queries:
                hit = code_search.retrieve(question, chunks, 1)[0]
                self.assertEqual((hit['path'], hit['symbol']), expected, question)
            out = Path(folder) / 'idx.json'
            self.assertEqual(run_cli('index', root, '--out', out).returncode, 0)
            for question, expected in queries:
                result = run_cli('search', question, '--index', out, '--json', '--top-k', '1')
                hit = json.loads(result.stdout)['results'][0]
                self.assertEqual((hit['path'], hit['symbol']), expected, question)

    def test_definitions_rank_first(self):
        self.check_first(
            {'urllib/parse.py': PARSE_PY, 'zipfile.py': ZIPFILE_PY, 'tarfile.py': TARFILE_PY,
             'web/handlers.py': 'from urllib.parse import parse_qsl\n\n'
                                'def read_form(body):\n'
                                '    """Read a form body with parse_qsl."""\n'
                                '    first = parse_qsl(body)\n'
                                '    second = parse_qsl(body.lower())\n'
                                '    return first + second\n'},
            [('parse_qsl', ('urllib/parse.py', 'parse_qsl')),
             ('ZipFile.extract', ('zipfile.py', 'ZipFile.extract'))])

    def test_a_name_that_is_a_stop_word_is_found_when_asked_alone(self):
        with tempfile.TemporaryDirectory() as folder:
            root, out = Path(folder) / 'root', Path(folder) / 'idx.json'
            write(root / 'shutil.py', (
                'def which(cmd):\n    """Return the path which the command would run."""\n'
                '    return cmd\n\n\n'
                'def copy(src, dst):\n    """Copy the data which the source file holds."""\n'
                '    return dst\n'))
            write(root / 'list.js', 'class List {\n  static of(...items) {\n'
                                    '    return new List(items);\n  }\n}\n')
            self.assertEqual(run_cli('index', root, '--out', out).returncode, 0)
            for question, expected in (('which', 'which'), ('of', 'List.of'),
                                       ('which file holds the data to copy', 'copy')):
                result = run_cli('search', question, '--index', out, '--json', '--top-k', '1')
                self.assertEqual(json.loads(result.stdout)['results'][0]['symbol'], expected,
                                 question)
            self.assertNotIn('which', code_search.query_terms('which file')[0])

    def test_heavy_caller_does_not_outrank_definition(self):
        # A function that uses parse_qsl a lot is still not where parse_qsl is defined.
        self.check_first(
            {'urllib/parse.py': PARSE_PY,
             'web/handlers.py': 'from urllib.parse import parse_qsl\n\n'
                                'def read_form(body):\n'
                                '    """Uses parse_qsl on the body; parse_qsl again; '
                                'parse_qsl."""\n'
                                '    first = parse_qsl(body)\n'
                                '    second = parse_qsl(body.lower())\n'
                                '    return parse_qsl(body) + first + second\n'},
            [('parse_qsl', ('urllib/parse.py', 'parse_qsl'))])


    def test_exported_definition_ranks_above_an_equal_helper(self):
        # Same words, same shape: the one the module's __all__ lists is its public API.
        body = 'def {}(path):\n    """Read the settings file at path."""\n    return path\n'
        self.check_first(
            {'a_helpers.py': body.format('read_settings'),
             'b_misc.py': "__all__ = ['read_settings']\n" + body.format('read_settings')},
            [('read the settings file', ('b_misc.py', 'read_settings'))])
        self.check_first(
            {'a_helpers.py': body.format('read_settings'),
             'b_misc.py': body.format('read_settings')},
            [('read the settings file', ('a_helpers.py', 'read_settings'))])


    def test_module_qualified_name_finds_the_module_function(self):
        # 'plistlib.load' as pasted from the docs: the module's load, not loads.
        self.check_first(
            {'plistlib.py': 'def loads(value):\n    """Load a plist: load from bytes."""\n'
                            '    return load(value)\n\n'
                            'def load(fp):\n    """Read a plist file."""\n    return fp\n',
             'email/utils.py': 'def make_msgid():\n    """A Message-ID header value."""\n',
             'email/message.py': 'def make_msgid():\n    """A Message-ID."""\n'},
            [('plistlib.load', ('plistlib.py', 'load')),
             ('email.utils.make_msgid', ('email/utils.py', 'make_msgid')),
             ('message.make_msgid', ('email/message.py', 'make_msgid'))])


if __name__ == '__main__':
    unittest.main()

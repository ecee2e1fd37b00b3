"""notes_search.py: parsing, Markdown, Korean, tutorial API, incremental index, CLI."""
import json
import os
import random
import re
import shutil
import unittest
from pathlib import Path
from unittest import mock

from tests.support import NOTES_TOOL, ROOT, TempDirCase, run_cli as run_tool, write

import notes_search as ns  # noqa: E402


def run_cli(*args, cwd=None):
    return run_tool(NOTES_TOOL, *args, cwd=cwd)


def file_lines(text):
    """The lines a file really has: split at \\r\\n, \\r, \\n only, BOM dropped."""
    text = text[1:] if text.startswith('\ufeff') else text
    lines = re.split(r'\r\n|\r|\n', text)
    return lines[:-1] if lines[-1] == '' else lines


def stored_records(index_path):
    """{path: record} of the notes an index file records."""
    return json.loads(Path(index_path).read_text(encoding='utf-8'))['files']


class NotesCase(TempDirCase):
    """A test with a notes folder in self.tmp / 'notes'."""

    def write(self, relative, text, root=None):
        return write((root or self.tmp / 'notes') / relative, text)

    def copy_tutorial_notes(self):
        root = self.tmp / 'notes'
        shutil.copytree(ROOT / 'notes', root)
        return root


class ParseTests(unittest.TestCase):
    def test_tutorial_cache_note(self):
        text = (ROOT / 'notes' / 'cache.md').read_text(encoding='utf-8')
        chunks = ns.parse_note(text, 'cache.md')
        self.assertEqual([(c['id'], c['heading'], c['start'], c['end']) for c in chunks],
                         [('cache.md:L5', '캐시 무효화', 5, 6), ('cache.md:L9', '재시도', 9, 9)])
        self.assertEqual(chunks[0]['heading_path'], ['검색 메모', '캐시 무효화'])
        self.assertEqual(chunks[0]['tags'], ['rag', 'backend'])
        self.assertEqual(chunks[0]['path'], 'cache.md')

    def test_heading_inside_fence_is_code_and_blank_lines_do_not_split(self):
        for fence in ('```', '~~~', '````'):
            with self.subTest(fence=fence):
                text = f'# Title\n\nbefore\n{fence}sh\n# comment\n\nmore\n{fence}\nafter\n'
                chunks = ns.parse_note(text, 'a.md')
                self.assertEqual([(c['start'], c['end'], c['heading']) for c in chunks],
                                 [(3, 9, 'Title')])

    def test_fence_closes_only_with_same_marker_at_least_as_long(self):
        text = '````\n```\n# still code\n~~~\n````\n# Real\n\nbody\n'
        chunks = ns.parse_note(text, 'a.md')
        self.assertEqual([(c['start'], c['end'], c['heading']) for c in chunks],
                         [(1, 5, 'a.md'), (8, 8, 'Real')])

    def test_unclosed_fence_runs_to_end_of_file(self):
        text = 'intro\n```\ncode\n\n\n'
        chunks = ns.parse_note(text, 'a.md')
        self.assertEqual([(c['start'], c['end']) for c in chunks], [(1, 5)])
        self.assertEqual(chunks[0]['text'], 'intro\n```\ncode\n\n')

    def test_heading_path_nests_and_pops(self):
        text = '# A\n## B\nb\n### C\nc\n## D\nd\n# E\ne\n'
        chunks = ns.parse_note(text, 'a.md')
        self.assertEqual([c['heading_path'] for c in chunks],
                         [['A', 'B'], ['A', 'B', 'C'], ['A', 'D'], ['E']])
        self.assertEqual([c['heading'] for c in chunks], ['B', 'C', 'D', 'E'])

    def test_atx_heading_rules(self):
        text = '## Closed ##\nx\n#tag line\n####### seven\n    # indented code\n# C#\ny\n'
        chunks = ns.parse_note(text, 'a.md')
        self.assertEqual([(c['heading'], c['start'], c['end']) for c in chunks],
                         [('Closed', 2, 5), ('C#', 7, 7)])

    def test_setext_headings(self):
        text = 'Title\n=====\nbody\n\nSub title\n---\nmore\n\n- item\n---\nafter\n'
        chunks = ns.parse_note(text, 'a.md')
        self.assertEqual([(c['heading_path'], c['start'], c['end']) for c in chunks],
                         [(['Title'], 3, 3), (['Title', 'Sub title'], 7, 7),
                          (['Title', 'Sub title'], 9, 9), (['Title', 'Sub title'], 11, 11)])

    def test_crlf_cr_and_bom_give_the_same_chunks(self):
        lf = '# 제목\n tags: a\n\n첫 줄\n둘째 줄\n\n```\n# x\n\n```\n'
        expected = ns.parse_note(lf, 'n.md')
        for variant in (lf.replace('\n', '\r\n'), lf.replace('\n', '\r'), '\ufeff' + lf,
                        '\ufeff' + lf.replace('\n', '\r\n'), lf.rstrip('\n')):
            with self.subTest(variant=variant[:12]):
                self.assertEqual(ns.parse_note(variant, 'n.md'), expected)

    def test_line_numbers_ignore_unicode_line_separators(self):
        text = 'a\x0bb\nc\x0cd\x1ce\x85f\u2028g\u2029h\n\nlast\x1d\n'
        chunks = ns.parse_note(text, 'a.md')
        lines = file_lines(text)
        self.assertEqual([(c['start'], c['end']) for c in chunks], [(1, 2), (4, 4)])
        for chunk in chunks:
            self.assertEqual(chunk['text'], '\n'.join(lines[chunk['start'] - 1:chunk['end']]))

    def test_front_matter_forms(self):
        forms = ['tags: [Alpha, "beta"]', 'tags:\n  - alpha\n  - beta', 'tags: alpha, beta',
                 "tags:\n- 'alpha'\n- beta", 'tags: [alpha, beta']
        for form in forms:
            with self.subTest(form=form):
                text = f'---\ntitle: Secret title\n{form}\nalias: hiddenword\n---\n# H\nbody\n'
                chunks = ns.parse_note(text, 'a.md')
                self.assertEqual(chunks[0]['tags'], ['alpha', 'beta'])
                body_line = text.split('\n').index('body') + 1
                self.assertEqual([(c['start'], c['end']) for c in chunks],
                                 [(body_line, body_line)])

    def test_front_matter_keys_are_not_body(self):
        text = '---\ntitle: zebra\ntags: [x]\n---\nbody\n'
        chunks = ns.parse_note(text, 'a.md')
        self.assertEqual([c['text'] for c in chunks], ['body'])

    def test_a_front_matter_title_heads_the_note(self):
        text = ('---\ntitle: "Deploy: checklist"\n---\nIntro.\n\n'
                '# Deploy: checklist\n\nFirst.\n\n## Rollback\n\nSecond.\n')
        self.assertEqual([(c['start'], c['heading_path']) for c in ns.parse_note(text, 'a.md')],
                         [(4, ['Deploy: checklist']), (8, ['Deploy: checklist']),
                          (12, ['Deploy: checklist', 'Rollback'])])
        alone = ns.parse_note('---\ntitle: Rollout plan\ntags: [k8s]\n---\n', 'b.md')
        self.assertEqual([(c['start'], c['end'], c['heading'], c['tags']) for c in alone],
                         [(1, 4, 'Rollout plan', ['k8s'])])
        block = ns.parse_note('---\ntitle: >\n  folded\n---\nbody\n', 'c.md')
        self.assertEqual([(c['heading'], c['heading_path']) for c in block], [('c.md', [])])

    def test_dashes_that_are_not_front_matter(self):
        unclosed = '---\ntitle: x\nbody text\n'
        self.assertEqual([(c['start'], c['text']) for c in ns.parse_note(unclosed, 'a.md')],
                         [(2, 'title: x\nbody text')])
        prose = '---\nJust a sentence, not YAML.\n---\nmore\n'
        self.assertEqual([c['start'] for c in ns.parse_note(prose, 'a.md')], [4])

    def test_tutorial_tags_line_and_late_tags(self):
        chunks = ns.parse_note('# T\n tags: rag, Backend\n\nbody\n', 'a.md')
        self.assertEqual(chunks[0]['tags'], ['rag', 'backend'])
        with self.assertRaises(ValueError) as caught:
            ns.parse_note('# 제목\n본문\ntags: late', 'bad.md')
        self.assertEqual(str(caught.exception), 'tags는 본문보다 먼저 한 줄에 적으세요.')
        self.assertEqual(caught.exception.line, 3)
        fenced = ns.parse_note('body\n```\ntags: in code\n```\n', 'a.md')
        self.assertEqual(fenced[0]['tags'], [])

    def test_inline_tags(self):
        text = ('Plan #Project and #deep/nested-tag.\n'
                'Not `#code` nor https://x.org/page#anchor nor <http://y/#z> nor #123 nor a#b\n'
                '```\n#fenced\n```\n')
        chunks = ns.parse_note(text, 'a.md')
        self.assertEqual(chunks[0]['tags'], ['project', 'deep/nested-tag'])
        colours = ns.parse_note('Red is #FF0000 or #ff000080; #facade, #bad and #2fa stay.\n'
                                '파일에서 #으로 시작하는 줄은 #주석 입니다.\n', 'c.md')
        self.assertEqual(colours[0]['tags'], ['facade', 'bad', '2fa', '주석'])
        headed = ns.parse_note('## Deploy #Ops\nsteps\n## C# tips ##\nmore\n', 'b.md')
        self.assertEqual([c['tags'] for c in headed], [['ops'], ['ops']])
        self.assertEqual(headed[0]['heading'], 'Deploy #Ops')

    def test_a_note_of_headings_only_is_one_chunk_of_them(self):
        only = ns.parse_note('# Buy milk\n## Tomorrow\n', 'todo.md')
        self.assertEqual([(c['start'], c['end'], c['heading_path'], c['text']) for c in only],
                         [(1, 2, ['Buy milk'], '# Buy milk\n## Tomorrow')])
        setext = ns.parse_note('tags: home\n\nGroceries\n=========\n', 'g.md')
        self.assertEqual([(c['start'], c['end'], c['tags']) for c in setext], [(3, 4, ['home'])])
        empty = ns.parse_note('# Home\n\nbody\n\n## Call plumber\n## Garden\n\nroses\n'
                              '\n# Later\n## Someday\n', 'b.md')   # sections without text
        self.assertEqual([(c['start'], c['end'], c['heading_path'], c['text']) for c in empty],
                         [(3, 3, ['Home'], 'body'),
                          (5, 5, ['Home', 'Call plumber'], '## Call plumber'),
                          (8, 8, ['Home', 'Garden'], 'roses'),
                          (11, 11, ['Later', 'Someday'], '## Someday')])
        tagged = ns.parse_note('# A\n# B\ntags: x\n\nbody\n', 't.md')    # headings are no body
        self.assertEqual([(c['heading_path'], c['tags']) for c in tagged],
                         [(['A'], ['x']), (['B'], ['x'])])
        self.assertEqual(ns.parse_note('', 'e.md'), [])

    def test_every_chunk_is_the_files_own_lines(self):
        for name in ('cache.md', 'reading.md', 'meeting.md'):
            text = (ROOT / 'notes' / name).read_text(encoding='utf-8')
            lines = file_lines(text)
            for chunk in ns.parse_note(text, name):
                self.assertEqual(chunk['text'], '\n'.join(lines[chunk['start'] - 1:chunk['end']]))


class TokenTests(unittest.TestCase):
    def test_particles_are_stripped(self):
        expected = ns.analyze('캐시')
        for word in ('캐시를', '캐시는', '캐시의', '캐시에서', '캐시가'):
            with self.subTest(word=word):
                self.assertEqual(ns.analyze(word), expected)

    def test_hangul_bigrams(self):
        self.assertEqual(set(ns.analyze('검색엔진')), {'검색', '색엔', '엔진'})
        self.assertEqual(set(ns.analyze('검색엔진을')), {'검색', '색엔', '엔진'})
        self.assertEqual(set(ns.analyze('책')), {'책'})
        self.assertEqual(set(ns.analyze('회의')), {'회의'})

    def test_hangul_next_to_other_letters(self):
        # Runs mixing Hangul with compatibility jamo, Hanja or Latin take the slow path;
        # the fast path must agree with it on every Hangul syllable and its neighbours.
        self.assertEqual(set(ns.analyze('ㄱ캐시를 漢字캐시 abc검색엔진의')),
                         {'ㄱ', '캐시', '漢字', 'abc', '검색', '색엔', '엔진'})
        for code in (0xABC0, 0xAC00, 0xD7A3, 0xD7B0):   # letters just outside 가-힣, and its ends
            text = chr(code) * 3
            self.assertEqual(set(ns.analyze(text)),
                             {text[:2]} if 0xAC00 <= code <= 0xD7A3 else {text}, hex(code))

    def test_particle_glued_to_latin_word_is_dropped(self):
        self.assertEqual(set(ns.analyze('`api`를 SHA-256을')), {'api', 'sha', '256'})

    def test_words_lowercase_and_split_on_punctuation(self):
        self.assertEqual(ns.analyze('SHA-256 sha snake_case Café'),
                         {'sha': 2, '256': 1, 'snake': 1, 'case': 1, 'café': 1})

    def test_stop_words_dropped_from_questions_only(self):
        self.assertEqual(ns.query_terms('the cache of THE web'), ['cache', 'web'])
        self.assertEqual(ns.query_terms('the a of'), ['the', 'a', 'of'])
        self.assertEqual(set(ns.analyze('the cache of THE web')), {'the', 'cache', 'of', 'web'})


class TutorialApiTests(NotesCase):
    def setUp(self):
        super().setUp()
        self.root = self.copy_tutorial_notes()
        self.index = self.tmp / 'index.json'

    def test_tutorial_scenario(self):
        self.assertEqual(ns.build_index(self.root, self.index), (3, 0))
        self.assertEqual(ns.build_index(self.root, self.index), (0, 0))
        hits = ns.search(self.index, '캐시', 'rag')
        self.assertEqual([(h['path'], h['start'], h['end'], h['heading']) for h in hits],
                         [('cache.md', 5, 6, '캐시 무효화')])
        self.assertEqual(ns.search(self.index, '우주선'), [])

    def test_changed_text_replaces_old_text(self):
        ns.build_index(self.root, self.index)
        note = self.root / 'cache.md'
        note.write_text(note.read_text(encoding='utf-8').replace('SHA-256', 'content-id'),
                        encoding='utf-8')
        self.assertEqual(ns.build_index(self.root, self.index), (1, 0))
        self.assertEqual(ns.search(self.index, 'SHA'), [])
        self.assertTrue(ns.search(self.index, 'content'))

    def test_deleted_and_renamed_notes(self):
        ns.build_index(self.root, self.index)
        (self.root / 'cache.md').unlink()
        self.assertEqual(ns.build_index(self.root, self.index), (0, 1))
        self.assertEqual(ns.search(self.index, '캐시', 'rag'), [])
        (self.root / 'reading.md').rename(self.root / 'books.md')
        self.assertEqual(ns.build_index(self.root, self.index), (1, 1))
        self.assertEqual([h['path'] for h in ns.search(self.index, '캐시')], ['books.md'])

    def test_indented_code_has_no_tags(self):
        self.write('code.md', '# Build\n\nSteps for #build:\n\n'
                   '    #include <stdio.h>\n\n    #define X 1\n\n'
                   '- an item\n\n    its #continued paragraph\n\n      #nested code\n\n'
                   'A paragraph\n    #lazy continuation\n')
        ns.build_index(self.root, self.index)
        self.assertEqual(stored_records(self.index)['code.md']['tags'],
                         ['build', 'continued', 'lazy'])
        for text in ('Config example:\n\n    tags: [web]\n\nkiwi\n', '\ttags: web\n\nkiwi\n'):
            chunks = ns.parse_note(text, 'config.md')        # code, not the note's tags line
            self.assertEqual([(c['text'].strip(), c['tags']) for c in chunks][-2:],
                             [('tags: [web]' if '[' in text else 'tags: web', []), ('kiwi', [])])

    def test_parser_version_change_reparses_everything(self):
        ns.build_index(self.root, self.index)
        with mock.patch.object(ns, 'PARSER_VERSION', ns.PARSER_VERSION + 1):
            self.assertEqual(ns.build_index(self.root, self.index), (3, 0))
            self.assertEqual(ns.build_index(self.root, self.index), (0, 0))
            self.assertEqual(len(ns.search(self.index, '캐시')), 2)
        with mock.patch.object(ns, 'TOKENIZER_VERSION', ns.TOKENIZER_VERSION + 1):
            with self.assertRaises(ns.IndexProblem):   # its terms would not match the index's
                ns.search(self.index, '캐시')

    def test_heading_weight_is_a_constant(self):
        ns.build_index(self.root, self.index)
        weighted = [h['id'] for h in ns.search(self.index, '캐시')]
        self.assertEqual(weighted, ['reading.md:L5', 'cache.md:L5'])
        with mock.patch.object(ns, 'HEADING_WEIGHT', 0):
            self.assertEqual([h['id'] for h in ns.search(self.index, '캐시')], ['reading.md:L5'])

    def test_compound_and_part_find_each_other(self):
        self.write('engine.md', '# 메모\n\n검색엔진을 직접 만든다.\n')
        self.write('plain.md', '# 메모\n\n검색 속도를 잰다.\n')
        ns.build_index(self.root, self.index)
        self.assertIn('engine.md', [h['path'] for h in ns.search(self.index, '검색', limit=10)])
        self.assertIn('plain.md', [h['path'] for h in ns.search(self.index, '검색엔진', limit=10)])
        self.assertEqual(ns.search(self.index, '검색엔진')[0]['path'], 'engine.md')
        self.assertEqual(ns.search(self.index, '캐시를', 'rag')[0]['id'], 'cache.md:L5')

    def test_a_paragraph_scores_with_its_note(self):
        self.write('a-misc.md', '# Misc\n\nstop the service\n\n'
                   'buy milk, eggs, bread and butter for the long weekend trip\n')
        self.write('z-ops.md', '# Ops\n\nstop the service\n\nservice restarts\n\nservice logs\n')
        ns.build_index(self.root, self.index)
        self.assertEqual(ns.search(self.index, 'stop service')[0]['path'], 'z-ops.md')
        with mock.patch.object(ns, 'NOTE_WEIGHT', 0):   # the same paragraph ties: path order
            self.assertEqual(ns.search(self.index, 'stop service')[0]['path'], 'a-misc.md')

    def test_one_note_does_not_fill_the_results(self):
        self.write('big.md', '# Deploy\n\ndeploy the app\n\ndeploy app again\n\ndeploy app rollback\n')
        self.write('small.md', '# Friday\n\nwe deploy on fridays\n')
        ns.build_index(self.root, self.index)
        paths = [hit['path'] for hit in ns.search(self.index, 'deploy app')]
        self.assertEqual(paths, ['big.md', 'big.md', 'small.md'])
        self.assertEqual([hit['path'] for hit in ns.search(self.index, 'deploy app',
                                                          paths=['big.md'])], ['big.md'] * 3)
        with mock.patch.object(ns, 'MAX_HITS_PER_NOTE', 0):
            self.assertEqual([hit['path'] for hit in ns.search(self.index, 'deploy app')],
                             ['big.md'] * 3)

    def test_api_search_filters(self):
        self.write('both.md', '---\ntags: [rag, reading]\n---\n캐시 둘 다\n')
        ns.build_index(self.root, self.index)
        self.assertEqual([h['path'] for h in ns.search(self.index, '캐시', ['rag', 'reading'])],
                         ['both.md'])
        self.assertEqual([h['path'] for h in ns.search(self.index, '캐시', paths=['r*'])],
                         ['reading.md'])
        hits = ns.search(self.index, '캐시', paths=['!reading.md', '!both.md'])
        self.assertEqual([h['path'] for h in hits], ['cache.md'])


class IncrementalTests(NotesCase):
    def index_path(self):
        return self.tmp / 'index.json'

    def numbered_notes(self, count, words):
        """count notes n0.md ... under tmp/notes, note n holding word<n> and words."""
        for number in range(count):
            self.write(f'n{number}.md', f'# note {number}\n\nword{number} {words}\n')
        return self.tmp / 'notes'

    def test_same_size_rewrite_right_after_indexing_is_noticed(self):
        note = self.write('a.md', 'alpha words\n')
        ns.build_index(self.tmp / 'notes', self.index_path())
        recorded = stored_records(self.index_path())['a.md']
        before = note.stat()
        note.write_text('gamma words\n', encoding='utf-8')
        os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
        self.assertEqual((recorded['size'], recorded['mtime_ns']),
                         (before.st_size, before.st_mtime_ns))   # the same stat: racy
        self.assertEqual(ns.build_index(self.tmp / 'notes', self.index_path()), (1, 0))
        self.assertTrue(ns.search(self.index_path(), 'gamma'))
        self.assertFalse(ns.search(self.index_path(), 'alpha'))

    def test_touched_file_is_not_reparsed(self):
        note = self.write('a.md', 'alpha\n')
        old = 1_000_000_000 * 10 ** 9
        os.utime(note, ns=(old, old))
        ns.build_index(self.tmp / 'notes', self.index_path())
        os.utime(note, ns=(old + 10 ** 9, old + 10 ** 9))
        self.assertEqual(ns.build_index(self.tmp / 'notes', self.index_path()), (0, 0))
        self.assertEqual(stored_records(self.index_path())['a.md']['mtime_ns'], old + 10 ** 9)
        written = self.index_path().stat().st_mtime_ns
        self.assertEqual(ns.build_index(self.tmp / 'notes', self.index_path()), (0, 0))
        self.assertEqual(self.index_path().stat().st_mtime_ns, written)   # nothing to write

    def test_incremental_index_ranks_like_a_fresh_one(self):
        rng = random.Random(7)
        words = 'cache index search note tag chunk heading 캐시 검색 색인 메모 태그'.split()
        root = self.tmp / 'notes'
        for step in range(12):
            for number in rng.sample(range(15), 5):
                path = root / f'd{number % 3}' / f'n{number}.md'
                if rng.random() < 0.2 and path.exists():
                    path.unlink()
                    continue
                paragraphs = ['\n'.join(' '.join(rng.choices(words, k=rng.randint(1, 8)))
                                        for _ in range(rng.randint(1, 3)))
                              for _ in range(rng.randint(1, 4))]
                self.write(path.relative_to(root), f'# {rng.choice(words)}\n\n'
                           + '\n\n'.join(paragraphs) + '\n')
            ns.build_index(root, self.index_path())
            fresh = self.tmp / f'fresh{step}.json'
            ns.build_index(root, fresh)
            for question in ('cache', '검색 메모', 'tag heading', '캐시를'):
                self.assertEqual(ns.search(self.index_path(), question, limit=50),
                                 ns.search(fresh, question, limit=50), (step, question))
        document = json.loads(self.index_path().read_text(encoding='utf-8'))
        fids = [record['fid'] for record in document['files'].values()]
        postings = ns.unpack_postings(document['postings'])
        named = {int(token.split('.')[0]) for posting in postings.values()
                 for token in posting.split(',')}
        self.assertEqual(named, set(fids))   # no posting names a note that is gone


    def test_a_long_chunk_keeps_its_length(self):
        long_text = ' '.join(['word'] * 12345) + ' needle'
        self.write('long.md', f'# long\n\n{long_text}\n\nshort needle here\n')
        ns.build_index(self.tmp / 'notes', self.index_path())
        record = stored_records(self.index_path())['long.md']
        self.assertEqual((record['lengths'], record['words'], record['count']),
                         ('12346 3', 12349, 2))
        self.assertEqual([hit['start'] for hit in ns.search(self.index_path(), 'needle')],
                         [5, 3])

    def test_worker_processes_give_the_same_index_as_one_process(self):
        rng = random.Random(9)
        words = 'cache index search note 캐시 검색 색인 메모'.split()
        root = self.tmp / 'notes'
        for number in range(40):
            self.write(f'd{number % 4}/n{number}.md', f'# {rng.choice(words)}\n\n'
                       + ' '.join(rng.choice(words) for _ in range(12)) + '\n')
        indexes = {jobs: self.tmp / f'jobs{jobs}.json' for jobs in (1, 2)}

        def index_all(step):
            for jobs, path in indexes.items():
                ns.index_folder(root, str(path), ns.IndexOptions(jobs=jobs))
            documents = [json.loads(path.read_bytes()) for path in indexes.values()]
            for document in documents:
                del document['indexed_at'], document['scan_started_ns']
            self.assertEqual(documents[0], documents[1], step)

        with mock.patch.object(ns, 'NOTES_PER_JOB', 7):   # several jobs for two workers
            index_all('fresh')
            for step in range(3):
                for number in rng.sample(range(40), 3):
                    self.write(f'd{number % 4}/n{number}.md',
                               f'# {rng.choice(words)}\n\nnew {step}\n')
                (root / f'd{step}' / f'n{step + 36}.md').unlink()
                index_all(step)
        self.assertEqual(ns.search(indexes[2], 'new', limit=40),
                         ns.search(indexes[1], 'new', limit=40))

    def test_without_worker_processes_this_process_does_the_work(self):
        root = self.numbered_notes(30, 'cache')
        serial, real_batch = self.tmp / 'serial.json', ns.index_batch
        ns.index_folder(root, str(serial), ns.IndexOptions(jobs=1))
        for failure in ('no pool', 'cannot send'):
            index = self.tmp / f'{failure}.json'
            if failure == 'no pool':   # a system that gives no worker processes
                patch = mock.patch('concurrent.futures.ProcessPoolExecutor',
                                   side_effect=OSError(38, 'Function not implemented'))
            else:   # the pool refuses the work, as for a module it cannot import
                patch = mock.patch.object(ns, 'index_batch', lambda jobs: real_batch(jobs))
            with patch, mock.patch.object(ns, 'NOTES_PER_JOB', 4):
                stats = ns.index_folder(root, str(index), ns.IndexOptions(jobs=2))
            self.assertEqual(stats['updated'], 30, failure)
            self.assertEqual(ns.search(index, 'word7'), ns.search(serial, 'word7'), failure)


class CliTests(NotesCase):
    def setUp(self):
        super().setUp()
        self.root = self.copy_tutorial_notes()

    def test_a_note_of_front_matter_alone_is_found_by_its_title(self):
        self.write('plan.md', '---\ntitle: Kubernetes rollout plan\ntags: [k8s]\n---\n')
        self.write('other.md', '# Kubernetes\n\nPods and services.\n')
        run_cli('index', 'notes', cwd=self.tmp)
        run = run_cli('search', 'rollout plan', '--json', cwd=self.tmp)
        self.assertEqual([(hit['path'], hit['heading'], hit['start'])
                          for hit in json.loads(run.stdout)['results']],
                         [('plan.md', 'Kubernetes rollout plan', 1)])

    def test_tutorial_output_byte_for_byte(self):
        self.assertEqual(run_cli('index', 'notes', cwd=self.tmp).stdout,
                         '갱신 파일: 3, 제거 파일: 0\n')
        self.assertEqual(run_cli('index', 'notes', cwd=self.tmp).stdout,
                         '갱신 파일: 0, 제거 파일: 0\n')
        run = run_cli('search', '캐시', '--tag', 'rag', cwd=self.tmp)
        self.assertEqual(run.stdout, '[cache.md:L5] 캐시 무효화 (L5–L6)\n'
                         '문서 내용이 바뀌면 SHA-256 해시를 비교해 해당 파일의 청크를 다시 만듭니다.\n'
                         '삭제한 문서의 청크도 색인에서 제거합니다.\n')
        self.assertEqual((run.returncode, run.stderr), (0, ''))
        run = run_cli('search', '우주선', cwd=self.tmp)
        self.assertEqual((run.stdout, run.returncode), ('일치하는 메모를 찾지 못했습니다.\n', 0))
        self.assertEqual(oct((self.tmp / 'index.json').stat().st_mode & 0o777), '0o600')

    def test_json_output(self):
        run_cli('index', 'notes', '--out', 'i.json', cwd=self.tmp)
        run = run_cli('search', '캐시', '--index', 'i.json', '--json', cwd=self.tmp)
        document = json.loads(run.stdout)
        self.assertEqual(document['query'], '캐시')
        self.assertEqual([hit['id'] for hit in document['results']],
                         ['reading.md:L5', 'cache.md:L5'])
        first = document['results'][0]
        self.assertEqual(list(first), ['id', 'path', 'heading', 'heading_path', 'start', 'end',
                                       'tags', 'score', 'stale', 'gone', 'text'])
        self.assertFalse(first['stale'])
        self.assertEqual(first['heading_path'], ['읽을거리 메모', '캐시'])
        self.assertGreater(first['score'], document['results'][1]['score'])
        empty = json.loads(run_cli('search', '우주선', '--index', 'i.json', '--json',
                                   cwd=self.tmp).stdout)
        self.assertEqual(empty, {'query': '우주선', 'results': []})

    def test_a_touched_note_larger_than_the_default_limit_is_not_stale(self):
        big = self.tmp / 'big' / 'big.md'
        big.parent.mkdir()
        big.write_text('# Big\n\n' + 'zebracorn filler words here.\n\n' * 400000, 'utf-8')
        self.assertGreater(big.stat().st_size, ns.MAX_FILE_SIZE)
        run = run_cli('index', 'big', '--out', 'big.json', '--max-file-size',
                      str(2 * ns.MAX_FILE_SIZE), cwd=self.tmp)
        self.assertEqual((run.returncode, run.stderr), (0, ''))
        os.utime(big, ns=(10 ** 18, 10 ** 18))              # a touch: the text is the same
        found = json.loads(run_cli('search', 'zebracorn', '--index', 'big.json', '--json',
                                   '--top-k', '1', cwd=self.tmp).stdout)['results']
        self.assertEqual([(hit['path'], hit['stale']) for hit in found], [('big.md', False)])

    def test_tags_command(self):
        run_cli('index', 'notes', cwd=self.tmp)
        run = run_cli('tags', cwd=self.tmp)
        self.assertEqual(run.stdout.split('\n')[0].split(), ['2', 'backend'])
        self.assertEqual(json.loads(run_cli('tags', '--json', cwd=self.tmp).stdout),
                         {'tags': [{'tag': 'backend', 'notes': 2}, {'tag': 'rag', 'notes': 1},
                                   {'tag': 'reading', 'notes': 1}]})
        self.write('a.md', '# 메모\n\n태그 없는 문단\n', root=self.tmp / 'plain')
        run_cli('index', 'plain', '--out', 'plain.json', cwd=self.tmp)
        run = run_cli('tags', '--index', 'plain.json', cwd=self.tmp)
        self.assertEqual((run.stdout, run.returncode), ('태그가 있는 메모가 없습니다.\n', 0))
        self.assertEqual(json.loads(run_cli('tags', '--index', 'plain.json', '--json',
                                            cwd=self.tmp).stdout), {'tags': []})

    def test_repeated_tags_all_match_and_path_globs(self):
        self.write('x/both.md', '---\ntags: [rag, backend]\n---\n실습 메모\n')
        self.write('x/one.md', '---\ntags: [rag]\n---\n실습 메모\n')
        run_cli('index', 'notes', cwd=self.tmp)

        def ids(*args):
            run = run_cli('search', '실습', '--json', '--top-k', '10', *args, cwd=self.tmp)
            return sorted(hit['path'] for hit in json.loads(run.stdout)['results'])

        self.assertEqual(ids('--tag', 'rag', '--tag', 'backend'), ['x/both.md'])
        self.assertEqual(ids('--tag', 'rag'), ['x/both.md', 'x/one.md'])
        self.assertEqual(ids('--tag', 'BACKEND'), ['meeting.md', 'x/both.md'])
        self.assertEqual(ids('--tag', ''), ids())           # as the API's empty tag=: no filter
        self.assertEqual(ids('--path', 'x/*'), ['x/both.md', 'x/one.md'])
        self.assertEqual(ids('--path', 'x/*', '--path', '!*/one.md'), ['x/both.md'])
        self.assertEqual(ids('--path', '!x/*'), ['meeting.md'])
        run = run_cli('search', '실습', '--tag', '#Backend', '--tag', 'nosuch', cwd=self.tmp)
        self.assertEqual((run.returncode, run.stderr),            # as an unmatched --path
                         (0, "notes_search.py: warning: --tag 'nosuch' is on no indexed note\n"))

    def test_top_k(self):
        for number in range(6):
            self.write(f'n{number}.md', f'# N{number}\n\nshared word\n')
        run_cli('index', 'notes', cwd=self.tmp)
        run = run_cli('search', 'shared', '--top-k', '5', '--json', cwd=self.tmp)
        self.assertEqual(len(json.loads(run.stdout)['results']), 5)
        self.assertEqual(run_cli('search', 'shared', cwd=self.tmp).stdout.count('[n'), 3)


if __name__ == '__main__':
    unittest.main()

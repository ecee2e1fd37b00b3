"""notes_search.py with questions as people type them: the words a question carries
(how, do, I, what, can) do not pick the paragraph that happens to hold them.
Standard library only."""
import json

from tests.support import NOTES_TOOL, TempDirCase, run_cli, write

import notes_search


class QuestionWordTests(TempDirCase):
    def setUp(self):
        super().setUp()
        write(self.tmp / 'notes' / 'faq.md', (
            '# Questions\n\n'
            'So you can do something like this:\n\n'
            '```\nmake all\n```\n\n'
            'What can I do when I want to do it?\n'))
        write(self.tmp / 'notes' / 'cache.md', (
            '# Cache invalidation\n\n'
            'Invalidate the cache when the source file changes: compare SHA-256 hashes.\n'))
        result = run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp)
        self.assertEqual(result.returncode, 0, result.stderr)

    def search(self, question):
        result = run_cli(NOTES_TOOL, 'search', question, '--json', cwd=self.tmp)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)['results']

    def test_question_words_do_not_hide_the_answer(self):
        hits = self.search('how do I invalidate the cache')
        self.assertEqual(hits[0]['path'], 'cache.md')
        self.assertEqual(len(hits), 1)
        self.assertEqual(notes_search.query_terms('how do I invalidate the cache'),
                         notes_search.query_terms('invalidate cache'))

    def test_an_apostrophe_s_or_t_is_no_word_to_look_for(self):
        write(self.tmp / 'notes' / 'keys.md', (
            '# Editor keys\n\nPress s to save, t to test and d to delete; m marks a line.\n'))
        write(self.tmp / 'notes' / 'passwd.md', (
            '# Accounts\n\nReset a forgotten user password with passwd as root.\n'))
        run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp)
        hits = self.search("reset another user's password when I don't remember it")
        self.assertEqual([hit['path'] for hit in hits], ['passwd.md'])
        self.assertEqual(notes_search.query_terms("a user’s password we'd reset"),
                         ['user', 'password', 'reset'])
        self.assertEqual(notes_search.query_terms("echo b'd' f's={s}'"),    # code: kept
                         ['echo', 'b', 'd', 'f', 's'])

    def test_filler_words_do_not_pick_the_paragraph(self):
        write(self.tmp / 'notes' / 'rsync.md', (
            '# Backups with rsync\n\n'
            'Use rsync to back up the home folder to the external disk every night.\n'
            'The flags -a and --delete keep an exact mirror.\n'))
        write(self.tmp / 'notes' / 'misc.md', '# Misc\n\nWhy not? When in doubt, ask.\n')
        write(self.tmp / 'notes' / 'disk.md', (
            '# Disk space\n\nCheck which folder uses the most disk space with du -sh.\n'))
        self.assertEqual(run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp).returncode, 0)
        self.assertEqual(self.search('how can I do something like an rsync mirror')[0]['path'],
                         'rsync.md')
        self.assertEqual(self.search('why is my disk full')[0]['path'], 'disk.md')
        self.assertEqual(self.search('where do I want to invalidate the cache when I need to')
                         [0]['path'], 'cache.md')

    def test_korean_question_words_do_not_pick_the_paragraph(self):
        write(self.tmp / 'notes' / 'gif.md', '# gifdiff\n\n- GIF가 어떻게 다른지 확인:\n')
        write(self.tmp / 'notes' / 'more.md', '# more\n\n- 이 명령이 무엇인지 보기\n')
        write(self.tmp / 'notes' / 'zip.md', '# zip\n\n- 파일 압축하기:\n\n`zip a.zip a`\n')
        self.assertEqual(run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp).returncode, 0)
        for question in ('파일을 어떻게 압축하나요', '파일 압축하는 방법은 무엇인가요'):
            self.assertEqual(self.search(question)[0]['path'], 'zip.md', question)
        self.assertEqual(notes_search.query_terms('파일을 어떻게 압축할 수 있나요'),
                         notes_search.query_terms('파일을 압축할'))

    def test_a_question_of_question_words_only_is_looked_for_as_it_is(self):
        write(self.tmp / 'notes' / 'which.md', '# which\n\n> Locate a program in the path.\n')
        self.assertEqual(run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp).returncode, 0)
        self.assertEqual(self.search('which')[0]['path'], 'which.md')   # by its heading
        self.assertEqual(self.search('what can I do'), [])      # no heading holds them


class IntroductionTests(TempDirCase):
    """A paragraph that ends with ':' and the code or list after it are one hit."""

    def setUp(self):
        super().setUp()
        write(self.tmp / 'notes' / 'tar.md', (
            '# tar\n\n'
            '> Archiving utility.\n\n'
            '- Extract an archive into the current folder:\n\n'
            '`tar xf {{path/to/source.tar}}`\n\n'
            '- Steps to pack:\n\n'
            '1. choose the files\n2. run tar cf with gzip\n\n'
            'A closing remark that ends with a colon:\n\n'
            'but is followed by prose, not a block.\n'))
        result = run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp)
        self.assertEqual(result.returncode, 0, result.stderr)

    def search(self, question):
        result = run_cli(NOTES_TOOL, 'search', question, '--json', '--top-k', '5', cwd=self.tmp)
        self.assertEqual(result.returncode, 0, result.stderr)
        return [(hit['start'], hit['end'], hit['text']) for hit in json.loads(result.stdout)['results']]

    def test_an_introduction_is_shown_with_its_block(self):
        record = json.loads((self.tmp / 'index.json').read_text())['files']['tar.md']
        self.assertEqual(record['intros'], '1 3')
        self.assertEqual(self.search('extract archive')[0],
                         (5, 7, '- Extract an archive into the current folder:\n\n'
                                '`tar xf {{path/to/source.tar}}`'))

    def test_the_block_words_find_the_pair_and_it_is_one_hit(self):
        hits = self.search('gzip')
        self.assertEqual(hits, [(9, 12, '- Steps to pack:\n\n1. choose the files\n'
                                        '2. run tar cf with gzip')])

    def test_a_heading_or_a_break_is_not_joined_and_a_chain_only_at_its_end(self):
        write(self.tmp / 'notes' / 'more.md', (
            '# Tool\n\n## Usage\n\nRun it like this:\n\n## Usage\n\n- zebra option\n\n'
            'The steps are:\n\n---\n\n- yak step\n\n'
            'Install steps:\n\n- fetch the package with:\n\n```\npip install widget\n```\n'))
        self.assertEqual(run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp).returncode, 0)
        record = json.loads((self.tmp / 'index.json').read_text())['files']['more.md']
        self.assertEqual(record['intros'], '5')     # only 'fetch the package with:'
        self.assertEqual(self.search('zebra')[0][:2], (9, 9))
        self.assertEqual(self.search('yak')[0][:2], (15, 15))
        self.assertEqual(self.search('widget')[0][:2], (19, 23))   # the last link of a chain
        self.assertEqual(self.search('install steps')[0][:2], (17, 17))

    def test_a_loose_list_is_joined_whole_up_to_an_item_that_introduces_code(self):
        write(self.tmp / 'notes' / 'deploy.md', (
            '# Deploy\n\nTo deploy the service, follow these steps:\n\n'
            '- build the image\n\n- push it to the registry\n\n'
            '1. restart the pods\n\n- then watch with:\n\n```\nkubectl get pods\n```\n\n'
            '- a stray item\n'))
        self.assertEqual(run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp).returncode, 0)
        record = json.loads((self.tmp / 'index.json').read_text())['files']['deploy.md']
        self.assertEqual(record['intros'], '0 1 2 4')
        whole = (3, 9, 'To deploy the service, follow these steps:\n\n- build the image\n\n'
                       '- push it to the registry\n\n1. restart the pods')
        for question in ('deploy the service', 'registry', 'restart pods'):
            self.assertEqual(self.search(question)[0], whole, question)
        self.assertEqual(self.search('watch pods')[0][:2], (11, 15))
        self.assertEqual(self.search('stray')[0][:2], (17, 17))

    def test_a_long_list_is_one_hit_and_its_runs_are_found_in_one_pass(self):
        items = ''.join(f'- widget number {i}\n\n' for i in range(3000))
        write(self.tmp / 'notes' / 'long.md', f'# Stock\n\nItems:\n\n{items}After.\n')
        self.assertEqual(run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp).returncode, 0)
        hits = self.search('widget')
        self.assertEqual([hit[:2] for hit in hits], [(3, 6003)])
        self.assertEqual(notes_search.run_starts({0, 1, 2, 5, 6, 9}),
                         {1: 0, 2: 0, 3: 0, 6: 5, 7: 5, 10: 9})

    def test_a_colon_before_prose_stays_alone(self):
        hits = self.search('prose')
        self.assertEqual(hits, [(16, 16, 'but is followed by prose, not a block.')])


class MnemonicTests(TempDirCase):
    def test_a_bracketed_letter_inside_a_word_joins_it(self):
        write(self.tmp / 'notes' / 'tar.md', '# tar\n\n- E[x]tract a g[z]ipped [f]ile:\n\n'
                                            '`tar xzf {{file}}`\n\nSet arr[i] to x.\n')
        self.assertEqual(run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp).returncode, 0)
        for question, line in (('extract gzipped file', 3), ('arr', 7)):
            result = run_cli(NOTES_TOOL, 'search', question, '--json', cwd=self.tmp)
            self.assertEqual(json.loads(result.stdout)['results'][0]['start'], line, question)
        self.assertEqual(notes_search.word_runs('E[x]tract [c]reate arr[i] - [x] done'),
                         ['extract', 'create', 'arr', 'i', 'x', 'done'])


class SpellingTests(TempDirCase):
    def test_a_loanword_spelled_another_way_finds_the_note(self):
        write(self.tmp / 'notes' / 'shell.md', '# 셸\n\n홈 디렉터리의 셸 설정 파일을 고친다.\n\n'
                                              '터미널 색을 바꾼다.\n')
        write(self.tmp / 'notes' / 'other.md', '# 기타\n\n디렉션을 정리하는 리스트.\n')
        self.assertEqual(run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp).returncode, 0)
        for question in ('홈디렉토리의 쉘 설정', '디렉토리', '쉘'):
            result = run_cli(NOTES_TOOL, 'search', question, '--json', cwd=self.tmp)
            self.assertEqual(json.loads(result.stdout)['results'][0]['path'], 'shell.md',
                             question)
        self.assertEqual(notes_search.analyze('레포지토리를'), notes_search.analyze('리포지토리'))

    def test_a_word_with_or_without_its_saisiot_finds_the_note(self):
        write(self.tmp / 'notes' / 'stats.md', '# 통계\n\n열마다 최댓값과 최솟값을 구한다.\n\n'
                                              '# 기타\n\n행 갯수를 센다.\n')
        write(self.tmp / 'notes' / 'other.md', '# 메모\n\n최대 절전 모드에서 값을 지운다.\n')
        self.assertEqual(run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp).returncode, 0)
        for question, line in (('최대값 최소값', 3), ('행 개수', 7)):
            result = run_cli(NOTES_TOOL, 'search', question, '--json', cwd=self.tmp)
            hit = json.loads(result.stdout)['results'][0]
            self.assertEqual((hit['path'], hit['start']), ('stats.md', line), question)


class LongNoteTests(TempDirCase):
    """A long note about the question's subject is not outranked by a short note that
    mentions it once (NOTE_BM25_B): a tool's page of many examples against a one-line one."""

    def test_the_note_about_the_subject_comes_first(self):
        examples = [('Resize', ' by a percentage', '-resize 50%'), ('Rotate', ' by degrees',
                    '-rotate 90'), ('Crop', ' to a region', '-crop 10x10'), ('Blur', '', '-blur 2'),
                    ('Flip', ' vertically', '-flip'), ('Convert', ' to another format', 'out.jpg'),
                    ('Sharpen', '', '-sharpen 1'), ('Trim', ' borders', '-trim')]
        write(self.tmp / 'notes' / 'imagetool.md', '\n\n'.join(
            ['# imagetool', '> Convert, resize and edit images.'] +
            [f'- {verb} an image{tail}:\n\n`imagetool {flag} {{{{input.png}}}}`'
             for verb, tail, flag in examples]) + '\n')
        write(self.tmp / 'notes' / 'pixscale.md', (
            '# pixscale\n\n> Scale a portable pixmap for a printer.\n\n'
            '- Resize the input image:\n\n`pixscale -x 10cm {{input.ppm}}`\n\n'
            '- Print help:\n\n`pixscale --help`\n'))
        for number in range(6):
            write(self.tmp / 'notes' / f'other{number}.md', (
                f'# other{number}\n\n> Show the weather for a city.\n\n'
                f"- Show today's forecast:\n\n`other{number} today`\n"))
        result = run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp)
        self.assertEqual(result.returncode, 0, result.stderr)
        result = run_cli(NOTES_TOOL, 'search', 'resize an image', '--json', cwd=self.tmp)
        self.assertEqual(result.returncode, 0, result.stderr)
        hits = json.loads(result.stdout)['results']
        self.assertEqual([hit['path'] for hit in hits[:2]], ['imagetool.md', 'pixscale.md'])
        self.assertTrue(hits[0]['text'].startswith('- Resize an image by a percentage:'))


class HeadingTests(TempDirCase):
    def test_a_title_reaches_the_paragraphs_of_its_sections(self):
        write(self.tmp / 'notes' / 'k8s.md', (
            '# Kubernetes upgrade checklist\n\n## Steps\n\nDrain the nodes first.\n\n'
            '## After\n\nCheck the pods.\n\n# Rollback\n\nRestore the snapshot.\n'))
        write(self.tmp / 'notes' / 'other.md', '# Kitchen\n\nRestore the old tiles first.\n')
        self.assertEqual(run_cli(NOTES_TOOL, 'index', 'notes', cwd=self.tmp).returncode, 0)
        found = run_cli(NOTES_TOOL, 'search', 'kubernetes', '--json', '--top-k', '5',
                        cwd=self.tmp)
        hits = json.loads(found.stdout)['results']
        self.assertEqual(sorted((hit['heading'], hit['start']) for hit in hits),
                         [('After', 9), ('Steps', 5)])  # not Rollback: another title's
        self.assertEqual(hits[0]['heading_path'][0], 'Kubernetes upgrade checklist')
        self.assertEqual(notes_search.heading_spans(
            [(('K',), []), (('K', 'S'), ['a', 'b']), (('K', 'A'), ['c']), (('R',), ['d'])],
            'k.md'), [('K', 0, 2), ('S', 0, 1), ('A', 2, 2), ('R', 3, 3)])

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

    def test_a_question_of_question_words_only_finds_nothing(self):
        result = run_cli(NOTES_TOOL, 'search', 'what can I do', cwd=self.tmp)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, '일치하는 메모를 찾지 못했습니다.\n')

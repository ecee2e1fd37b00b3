"""notes_search.py serve: the JSON API and the page on a real server, called with
urllib, and the page in headless Chromium when it is installed.  Standard library only."""
import json
import re
import shutil
import subprocess
import tempfile
import unittest
import urllib.parse
from pathlib import Path

from tests.support import CHROMIUM, NOTES_TOOL, dump_dom, run_cli, write
from tests.test_code_serve import SCRIPT, Server

import notes_search


def cli(*args, **kwargs):
    return run_cli(NOTES_TOOL, *args, **kwargs)


def make_notes(tmp):
    write(tmp / 'notes' / 'cache.md', (
        '# Search notes\n'
        'tags: rag, backend\n'
        '\n'
        '## Cache invalidation\n'
        'When a document changes, compare its SHA-256 and rebuild its chunks.\n'
        '\n'
        '## 캐시 무효화\n'
        '문서가 바뀌면 해시를 비교해 청크를 다시 만듭니다.\n'))
    write(tmp / 'notes' / 'web.md', f'# Web\ntags: frontend\n\nNever trust {SCRIPT} in pages.\n')
    result = cli('index', tmp / 'notes', '--out', tmp / 'notes.json')
    assert result.returncode == 0, result.stderr


class NotesApiTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp()).resolve()
        make_notes(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.server = Server(self, '--index', self.tmp / 'notes.json', tool=NOTES_TOOL)

    def test_endpoints_answer_in_the_cli_shapes(self):
        call = self.server.call
        status, found = call('/api/search?q=cache+invalidation&top_k=3')
        self.assertEqual(status, 200)
        cli_found = json.loads(cli('search', 'cache invalidation', '--top-k', '3', '--json',
                                   '--index', self.tmp / 'notes.json').stdout)
        self.assertEqual(found, cli_found)
        self.assertEqual(found['results'][0]['heading_path'],
                         ['Search notes', 'Cache invalidation'])
        tagged = call('/api/search?q=trust&tag=frontend')[1]['results']
        self.assertEqual([hit['path'] for hit in tagged], ['web.md'])
        self.assertEqual(call('/api/search?q=trust&tag=backend')[1]['results'], [])
        tags = call('/api/tags')[1]
        self.assertEqual(tags, json.loads(cli('tags', '--json', '--index',
                                              self.tmp / 'notes.json').stdout))
        read = call('/api/read?path=cache.md&start=4&end=5')[1]
        self.assertEqual((read['start'], read['end'], read['total_lines'], read['stale']),
                         (4, 5, 8, False))
        self.assertEqual(read['text'], '## Cache invalidation\nWhen a document changes, '
                                       'compare its SHA-256 and rebuild its chunks.')
        self.assertEqual(call('/api/health')[1]['notes'], 2)
        self.assertIn(b'<title>notes search</title>', call('/')[1])

    def test_explain_adds_up_in_the_cli_and_the_api(self):
        question = 'cache invalidation 캐시'
        found = json.loads(cli('search', question, '--explain', '--json', '--top-k', '3',
                               '--index', self.tmp / 'notes.json').stdout)['results']
        self.assertEqual(found, self.server.call(
            '/api/search?q=cache+invalidation+%EC%BA%90%EC%8B%9C&top_k=3&explain=1')[1]['results'])
        heading_counted = False
        for hit in found:
            explained = hit['explain']
            self.assertEqual(hit['score'], explained['score'])
            self.assertAlmostEqual(hit['score'], explained['words_score'] + explained[
                'note_weight'] * explained['note_score'], places=3)
            self.assertAlmostEqual(explained['words_score'],
                                   sum(word['score'] for word in explained['words']), places=3)
            for word in explained['words']:
                self.assertAlmostEqual(word['score'], sum(word['fields'].values()), places=3)
                heading_counted |= word['fields']['heading'] > 0
        self.assertTrue(heading_counted)          # 'Cache invalidation' is a heading
        self.assertNotIn('explain', self.server.call('/api/search?q=cache')[1]['results'][0])
        text = cli('search', 'cache invalidation', '--explain', '--index',
                   self.tmp / 'notes.json').stdout.splitlines()
        self.assertRegex(text[1], r'^  score [0-9.]+ = [0-9.]+ \(paragraph\) \+ '
                                  + re.escape(str(notes_search.NOTE_WEIGHT)) +
                                  r' x [0-9.]+ \(note\)$')
        self.assertRegex(text[2], r'^    cache +[0-9.]+  idf ')
        asked = json.loads(cli('search', 'how do I compare the sha-256 of a parquet Parquet',
                               '--explain', '--json', '--top-k', '1',
                               '--index', self.tmp / 'notes.json').stdout)['results'][0]
        self.assertEqual((asked['explain']['missing'], asked['explain']['dropped']),
                         (['parquet'], ['how', 'do', 'I', 'the', 'of', 'a']))
        text = cli('search', 'how do I compare the sha-256 of a parquet', '--explain',
                   '--index', self.tmp / 'notes.json').stdout.splitlines()
        self.assertIn('    not in this hit: parquet', text)
        self.assertIn('    left out of the question: how do I the of a', text)

    def test_bad_requests_and_escapes(self):
        call = self.server.call
        (self.tmp / 'secret.md').write_text('SECRET-77\n')
        for path in ('/api/search', '/api/search?q=x&top_k=1000',
                     '/api/read?path=../secret.md', '/api/read?path=%2e%2e%2fsecret.md',
                     f"/api/read?path={self.tmp / 'secret.md'}", '/api/read?path=nothere.md',
                     '/api/read?path=cache.md&start=3&end=1', '/api/search?q=cache&explain=2',
                     '/api/search?q=cache&q=tags', '/api/search?q=cache&top_k=1&top_k=2',
                     '/api/search?q=%20%20', '/api/search?q=x&top_k=%EF%BC%91'):
            with self.subTest(path=path):
                status, document = call(path)
                self.assertEqual(status, 400, document)
                self.assertNotIn('SECRET-77', json.dumps(document))
        self.assertEqual(call('/api/nope')[0], 404)
        self.assertEqual(call('/api/read?path=x/../cache.md')[1]['path'], 'cache.md')
        inside = urllib.parse.quote(str(self.tmp / 'notes' / 'cache.md'))
        self.assertEqual(call(f'/api/read?path={inside}')[1]['path'], 'cache.md')  # as code's
        self.assertEqual(call('/api/search?q=x', method='DELETE'),
                         (405, {'error': '/api/search takes GET'}))
        self.assertEqual(call('/api/search?q=cache', method='HEAD'), (200, b''))
        self.assertEqual(call('/api/search?q=cache', method='POST')[0], 405)   # no body
        self.assertEqual(call('/', method='POST')[0], 405)
        self.assertEqual(call('/api/search?q=%ff%fe')[0], 400)
        self.assertEqual(call('/api/search?q=' + 'x' * 5000)[0], 414)
        self.assertEqual(call('/api/tags', headers={'Host': 'evil.example'})[0], 403)
        for headers, status in (({'Sec-Fetch-Site': 'cross-site'}, 403),
                                ({'Origin': 'http://localhost:3000'}, 403),
                                ({'Sec-Fetch-Site': 'same-origin'}, 200)):
            with self.subTest(headers=headers):
                self.assertEqual(call('/api/tags', headers=headers)[0], status)

    def test_any_loopback_address_refuses_other_hosts_and_errors_are_json(self):
        import socket
        self.server.stop()
        server = Server(self, '--index', self.tmp / 'notes.json', '--host', '127.0.0.2',
                        tool=NOTES_TOOL)
        self.assertNotIn(b'anyone who can reach it', server.stderr())    # loopback: no warning
        for request, status in ((b'GET /api/tags HTTP/1.1\r\nHost: evil.example', 403),
                                (b'GET /api/tags HTTP/1.1\r\nHost: 127.0.0.2', 200),
                                (b'FOO /api/tags HTTP/1.1\r\nHost: localhost', 405)):
            with socket.create_connection(('127.0.0.2', server.port)) as raw:
                raw.sendall(request + b'\r\n\r\n')
                head, _, body = raw.makefile('rb').read().partition(b'\r\n\r\n')
            self.assertTrue(head.startswith(b'HTTP/1.0 %d' % status), (request, head[:40]))
            self.assertIn(b'application/json', head)
            self.assertIsInstance(json.loads(body), dict)


@unittest.skipUnless(CHROMIUM, 'chromium is not installed (apt-get install chromium)')
class NotesBrowserTests(unittest.TestCase):
    def test_search_tags_and_escaping(self):
        tmp = Path(tempfile.mkdtemp()).resolve()
        self.addCleanup(shutil.rmtree, tmp, True)
        make_notes(tmp)
        server = Server(self, '--index', tmp / 'notes.json', tool=NOTES_TOOL)

        def dom(query):
            return dump_dom(server.url('/?' + query))

        english = dom('q=cache+invalidation')
        self.assertIn('<strong class="heading"><mark>Cache</mark> <mark>invalidation</mark>'
                      '</strong>', english)
        self.assertIn('<span class="trail">Search notes</span>', english)
        self.assertIn('data-tag="backend"', english)
        korean = dom('q=%EC%BA%90%EC%8B%9C+%EB%AC%B4%ED%9A%A8%ED%99%94')
        self.assertIn('<strong class="heading"><mark>캐시</mark> <mark>무효화</mark></strong>', korean)
        particle = dom('q=' + urllib.parse.quote('캐시를 무효화'))    # marked as searched
        self.assertIn('<strong class="heading"><mark>캐시</mark> <mark>무효화</mark></strong>',
                      particle)
        tagged = dom('q=trust&tag=frontend')
        self.assertIn('&lt;script&gt;document.title', tagged)
        self.assertIn('<title>notes search</title>', tagged)
        self.assertNotIn(SCRIPT, tagged)


if __name__ == '__main__':
    unittest.main()
